/* File helpers: recursive mkdir, bounded reads of regular files, atomic
 * replace, writes to a path the user named. */
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

const char *zlb_node_kind(mode_t m) {
  if (S_ISDIR(m))
    return "a directory";
  if (S_ISFIFO(m))
    return "a FIFO";
  if (S_ISCHR(m))
    return "a character device";
  if (S_ISBLK(m))
    return "a block device";
  if (S_ISSOCK(m))
    return "a socket";
  if (S_ISLNK(m))
    return "a symbolic link";
  return S_ISREG(m) ? "a regular file" : "a special file";
}

/* The code for a failed open() of an input: a missing file or a path that
 * cannot name one is the user's input (exit 2), anything else I/O. */
static int open_error_code(int e) {
  switch (e) {
  case ENOENT:
    return ZLB_ENOTFOUND;
  case EACCES:
  case EPERM:
  case EISDIR:
  case ELOOP:
  case ENAMETOOLONG:
  case ENOTDIR:
  case ENXIO:
  case ENODEV:
  case EOVERFLOW:
    return ZLB_EINVAL;
  default:
    return ZLB_EIO;
  }
}

static void add_limit(zlb_strbuf_t *sb, size_t max) {
  if (max >= ((size_t)1 << 20) && max % ((size_t)1 << 20) == 0)
    zlb_strbuf_addf(sb, "%zu MiB", max >> 20);
  else
    zlb_strbuf_addf(sb, "%zu bytes", max);
}

static int too_large(const char *path, size_t max, const char *what, zlb_error_t *err) {
  zlb_strbuf_t lim = ZLB_STRBUF_INIT;
  int rc;
  add_limit(&lim, max);
  rc = zlb_error_set(err, ZLB_EINVAL, "'%s': larger than %s (the limit for %s)", path, lim.buf,
                     what && *what ? what : "an input file");
  zlb_strbuf_release(&lim);
  return rc;
}

int zlb_open_regular(const char *path, zlb_error_t *err) {
  struct stat st;
  /* O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat below
   * then refuses it. It changes nothing for a regular file. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    return zlb_error_set(err, open_error_code(e), "cannot read '%s': %s", path, strerror(e));
  }
  /* fstat of the open descriptor: a symbolic link is judged by what it
   * points at, and nothing can be swapped in between. */
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return zlb_error_set(err, ZLB_EIO, "cannot read '%s': %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return zlb_error_set(err, ZLB_EINVAL, "'%s': is %s, not a regular file", path,
                         zlb_node_kind(st.st_mode));
  }
  return fd;
}

FILE *zlb_fopen_regular(const char *path, zlb_error_t *err) {
  FILE *f;
  int fd = zlb_open_regular(path, err);
  if (fd < 0)
    return NULL;
  if (!(f = fdopen(fd, "rb"))) {
    zlb_error_set(err, ZLB_ENOMEM, "cannot read '%s': %s", path, strerror(errno));
    close(fd);
  }
  return f;
}

int zlb_read_file_max(const char *path, size_t max, const char *what, char **out, size_t *len,
                      zlb_error_t *err) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  struct stat st;
  int fd, rc = 0;
  *out = NULL;
  if (len)
    *len = 0;
  if ((fd = zlb_open_regular(path, err)) < 0)
    return fd;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    if ((unsigned long long)st.st_size > max) {
      rc = too_large(path, max, what, err);
      goto out;
    }
    zlb_strbuf_grow(&sb, (size_t)st.st_size);
  }
  /* Read at most max + 1 bytes, whatever fstat said: the file may grow
   * while it is read (a log still being written, /proc), and the limit
   * must hold for the memory, not only for the size seen before. */
  for (;;) {
    char buf[65536];
    size_t want = max - sb.len + 1;
    ssize_t n;
    if (want > sizeof(buf))
      want = sizeof(buf);
    n = read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      rc = zlb_error_set(err, ZLB_EIO, "cannot read '%s': %s", path, strerror(errno));
      goto out;
    }
    if (n == 0)
      break;
    zlb_strbuf_add(&sb, buf, (size_t)n);
    if (sb.len > max) {
      rc = too_large(path, max, what, err);
      goto out;
    }
  }
  if (len)
    *len = sb.len;
  *out = zlb_strbuf_detach(&sb);
out:
  close(fd);
  zlb_strbuf_release(&sb);
  return rc;
}

int zlb_read_file(const char *path, char **out, size_t *len, zlb_error_t *err) {
  return zlb_read_file_max(path, ZLB_READ_MAX, NULL, out, len, err);
}

/* ---- writing ------------------------------------------------------------ */

static int write_all(int fd, const char *path, const char *p, size_t len, zlb_error_t *err) {
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path, strerror(errno));
    }
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

/* Write `path` through a temporary file in its folder and rename it over
 * `path`: readers see the old or the new content, never a torn file. */
static int replace_atomic(const char *path, const void *data, size_t len, zlb_error_t *err) {
  zlb_strbuf_t tmp = ZLB_STRBUF_INIT;
  int fd, rc = 0;
  zlb_strbuf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
  /* O_EXCL | O_NOFOLLOW: a link planted at the temporary name is not
   * written through; a stale temporary of a dead process is removed once. */
  fd = open(tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST && unlink(tmp.buf) == 0)
    fd = open(tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path, strerror(errno));
    goto out;
  }
  if ((rc = write_all(fd, path, data, len, err))) {
    close(fd);
    unlink(tmp.buf);
    goto out;
  }
  if (fsync(fd) != 0 && errno != EINVAL) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot sync '%s': %s", path, strerror(errno));
    close(fd);
    unlink(tmp.buf);
    goto out;
  }
  if (close(fd) != 0) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path, strerror(errno));
    unlink(tmp.buf);
    goto out;
  }
  if (rename(tmp.buf, path) != 0) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot replace '%s': %s", path, strerror(errno));
    unlink(tmp.buf);
  }
out:
  zlb_strbuf_release(&tmp);
  return rc;
}

/* Write into an existing FIFO or character device (a terminal, a pipe,
 * /dev/null): it is opened, never replaced. */
static int write_in_place(const char *path, const void *data, size_t len, zlb_error_t *err) {
  struct stat st;
  int fd, flags, rc;
  /* O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of
   * waiting for a reader forever. */
  fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENXIO)
      return zlb_error_set(err, ZLB_EIO, "cannot write '%s': a FIFO with no reader", path);
    return zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path, strerror(errno));
  }
  if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
    close(fd);
    return zlb_error_set(err, ZLB_EIO, "cannot write '%s': it changed while being opened",
                         path);
  }
  /* Once open, block like a shell redirection would: a slow reader of a
   * pipe is waited for, not an EAGAIN error. */
  if ((flags = fcntl(fd, F_GETFL)) >= 0)
    (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  rc = write_all(fd, path, data, len, err);
  if (close(fd) != 0 && !rc)
    rc = zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path, strerror(errno));
  return rc;
}

/* ZLB_EIO, not ZLB_EINVAL: the output cannot be written (exit 6). */
static int refuse_node(const char *path, mode_t m, zlb_error_t *err) {
  if (S_ISDIR(m))
    return zlb_error_set(err, ZLB_EIO, "cannot write '%s': it is a directory: give a file name",
                         path);
  return zlb_error_set(err, ZLB_EIO,
                       "cannot write '%s': it is %s, not a regular file: remove it or give "
                       "another name",
                       path, zlb_node_kind(m));
}

int zlb_write_file_atomic(const char *path, const void *data, size_t len, zlb_error_t *err) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    if (errno != ENOENT)
      return zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path, strerror(errno));
  } else if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    /* Renaming over it would destroy a device node or a FIFO. */
    return refuse_node(path, st.st_mode, err);
  }
  /* A symbolic link here is replaced, never written through. */
  return replace_atomic(path, data, len, err);
}

int zlb_write_user_file(const char *path, const void *data, size_t len, zlb_error_t *err) {
  struct stat st;
  char *real = NULL;
  int rc, link;
  if (lstat(path, &st) != 0) {
    if (errno != ENOENT)
      return zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path, strerror(errno));
    return replace_atomic(path, data, len, err);
  }
  if ((link = S_ISLNK(st.st_mode)) && stat(path, &st) != 0)
    return zlb_error_set(err, ZLB_EIO,
                         "cannot write '%s': a symbolic link whose target cannot be reached: %s",
                         path, strerror(errno));
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
    return write_in_place(path, data, len, err);
  if (!S_ISREG(st.st_mode))
    return refuse_node(path, st.st_mode, err);
  /* A regular file, or a link to one: replace the file the link names, in
   * its own folder (rename cannot cross file systems), so the link stays. */
  if (!link)
    return replace_atomic(path, data, len, err);
  if (!(real = realpath(path, NULL)))
    return zlb_error_set(err, ZLB_EIO, "cannot write '%s': %s", path, strerror(errno));
  rc = replace_atomic(real, data, len, err);
  free(real);
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
