/* File helpers: recursive mkdir, whole-file reads, atomic replace. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zlbench/base.h"

int zlb_mkdirs(const char *path, zlb_error_t *err) {
  char *p = zlb_xstrdup(path);
  int rc = 0;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      rc = zlb_error_set(err, ZLB_EIO, "cannot create folder '%s': %s", p,
                         strerror(errno));
      goto out;
    }
    *s = '/';
  }
  if (mkdir(p, 0777) != 0 && errno != EEXIST) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot create folder '%s': %s", p,
                       strerror(errno));
    goto out;
  }
  if (!zlb_is_dir(p))
    rc = zlb_error_set(err, ZLB_EIO, "'%s' exists and is not a folder", p);
out:
  free(p);
  return rc;
}

int zlb_read_file(const char *path, char **out, size_t *len, zlb_error_t *err) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  char buf[65536];
  size_t n;
  FILE *f = fopen(path, "rb");
  if (!f)
    return zlb_error_set(err, errno == ENOENT ? ZLB_ENOTFOUND : ZLB_EIO,
                         "cannot read '%s': %s", path, strerror(errno));
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
    zlb_strbuf_add(&sb, buf, n);
  if (ferror(f)) {
    fclose(f);
    zlb_strbuf_release(&sb);
    return zlb_error_set(err, ZLB_EIO, "cannot read '%s': %s", path,
                         strerror(errno));
  }
  fclose(f);
  if (len)
    *len = sb.len;
  *out = zlb_strbuf_detach(&sb);
  return 0;
}

int zlb_write_file_atomic(const char *path, const void *data, size_t len,
                          zlb_error_t *err) {
  zlb_strbuf_t tmp = ZLB_STRBUF_INIT;
  const char *p = data;
  int fd, rc = 0;
  zlb_strbuf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
  fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path,
                       strerror(errno));
    goto out;
  }
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      rc = zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path,
                         strerror(errno));
      close(fd);
      unlink(tmp.buf);
      goto out;
    }
    p += w;
    len -= (size_t)w;
  }
  if (fsync(fd) != 0 && errno != EINVAL) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot sync '%s': %s", path,
                       strerror(errno));
    close(fd);
    unlink(tmp.buf);
    goto out;
  }
  close(fd);
  if (rename(tmp.buf, path) != 0) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot replace '%s': %s", path,
                       strerror(errno));
    unlink(tmp.buf);
  }
out:
  zlb_strbuf_release(&tmp);
  return rc;
}

int zlb_path_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

int zlb_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int zlb_cache_dir(zlb_strbuf_t *out) {
  const char *dir = getenv("ZL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
             *home = getenv("HOME");
  if (dir && *dir)
    zlb_strbuf_addstr(out, dir);
  else if (xdg && *xdg)
    zlb_strbuf_addf(out, "%s/zlbench", xdg);
  else if (home && *home)
    zlb_strbuf_addf(out, "%s/.cache/zlbench", home);
  else
    return 0;
  return 1;
}

void zlb_path_join(zlb_strbuf_t *out, const char *a, const char *b) {
  zlb_strbuf_addstr(out, a);
  if (out->len && out->buf[out->len - 1] != '/')
    zlb_strbuf_addch(out, '/');
  while (*b == '/')
    b++;
  zlb_strbuf_addstr(out, b);
}

int zlb_exe_dir(zlb_strbuf_t *out, zlb_error_t *err) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  char *slash;
  if (n < 0)
    return zlb_error_set(err, ZLB_EIO, "cannot read /proc/self/exe: %s",
                         strerror(errno));
  buf[n] = '\0';
  slash = strrchr(buf, '/');
  if (slash)
    *slash = '\0';
  zlb_strbuf_addstr(out, buf);
  return 0;
}

int zlb_check_writable_dir(const char *dir, zlb_error_t *err) {
  zlb_strbuf_t probe = ZLB_STRBUF_INIT;
  int fd, rc;
  rc = zlb_mkdirs(dir, err);
  if (rc)
    return rc;
  zlb_strbuf_addf(&probe, "%s/.zlb-write-probe.%ld", dir, (long)getpid());
  fd = open(probe.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    rc = zlb_error_set(err, ZLB_EIO, "output folder '%s' is not writable: %s",
                       dir, strerror(errno));
  } else {
    close(fd);
    unlink(probe.buf);
  }
  zlb_strbuf_release(&probe);
  return rc;
}
