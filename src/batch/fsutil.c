/* Folder operations the batch needs: remove a tree, copy a tree, move a
 * folder's contents. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_int.h"

int zlb__rmtree(const char *path) {
  struct stat st;
  DIR *d;
  struct dirent *de;
  if (lstat(path, &st) != 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode))
    return unlink(path);
  d = opendir(path);
  if (!d)
    return -1;
  while ((de = readdir(d))) {
    zlb_strbuf_t p = ZLB_STRBUF_INIT;
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    zlb_path_join(&p, path, de->d_name);
    zlb__rmtree(p.buf);
    zlb_strbuf_release(&p);
  }
  closedir(d);
  return rmdir(path);
}

static int copy_file(const char *from, const char *to) {
  char buf[65536];
  ssize_t n;
  int in = open(from, O_RDONLY | O_CLOEXEC), out, rc = 0;
  if (in < 0)
    return -1;
  out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (out < 0) {
    close(in);
    return -1;
  }
  while ((n = read(in, buf, sizeof(buf))) > 0)
    if (write(out, buf, (size_t)n) != n) {
      rc = -1;
      break;
    }
  if (n < 0)
    rc = -1;
  close(in);
  if (close(out) != 0)
    rc = -1;
  return rc;
}

int zlb__copytree(const char *from, const char *to, const char *skip) {
  DIR *d = opendir(from);
  struct dirent *de;
  int rc = 0;
  if (!d)
    return -1;
  if (mkdir(to, 0777) != 0 && errno != EEXIST) {
    closedir(d);
    return -1;
  }
  while (!rc && (de = readdir(d))) {
    zlb_strbuf_t a = ZLB_STRBUF_INIT, b = ZLB_STRBUF_INIT;
    struct stat st;
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
        (skip && !strcmp(de->d_name, skip)))
      continue;
    zlb_path_join(&a, from, de->d_name);
    zlb_path_join(&b, to, de->d_name);
    if (lstat(a.buf, &st) == 0) {
      if (S_ISDIR(st.st_mode))
        rc = zlb__copytree(a.buf, b.buf, skip);
      else if (S_ISREG(st.st_mode))
        rc = copy_file(a.buf, b.buf);
    }
    zlb_strbuf_release(&a);
    zlb_strbuf_release(&b);
  }
  closedir(d);
  return rc;
}

int zlb__move_contents(const char *from, const char *to) {
  DIR *d = opendir(from);
  struct dirent *de;
  int rc = 0, saved = 0;
  if (!d)
    return -1;
  if (mkdir(to, 0777) != 0 && errno != EEXIST) {
    saved = errno;
    closedir(d);
    errno = saved;
    return -1;
  }
  while (!rc && (de = readdir(d))) {
    zlb_strbuf_t a = ZLB_STRBUF_INIT, b = ZLB_STRBUF_INIT;
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) {
      continue;
    }
    zlb_path_join(&a, from, de->d_name);
    zlb_path_join(&b, to, de->d_name);
    zlb__rmtree(b.buf);
    if ((rc = rename(a.buf, b.buf)) != 0)
      saved = errno;
    zlb_strbuf_release(&a);
    zlb_strbuf_release(&b);
  }
  closedir(d);
  /* The caller names the reason: errno is the failed rename's. */
  if (rc)
    errno = saved;
  return rc;
}

/* Hard-link (or, when `copy` or linking fails, copy) every regular file
 * of a tree; symbolic links and other special files are skipped. */
int zlb__linktree(const char *from, const char *to, int copy) {
  DIR *d = opendir(from);
  struct dirent *de;
  int rc = 0;
  if (!d)
    return -1;
  if (mkdir(to, 0777) != 0 && errno != EEXIST) {
    closedir(d);
    return -1;
  }
  while (!rc && (de = readdir(d))) {
    zlb_strbuf_t a = ZLB_STRBUF_INIT, b = ZLB_STRBUF_INIT;
    struct stat st;
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    zlb_path_join(&a, from, de->d_name);
    zlb_path_join(&b, to, de->d_name);
    if (lstat(a.buf, &st) == 0) {
      if (S_ISDIR(st.st_mode))
        rc = zlb__linktree(a.buf, b.buf, copy);
      else if (S_ISREG(st.st_mode) && (copy || link(a.buf, b.buf) != 0))
        rc = copy_file(a.buf, b.buf);
    }
    zlb_strbuf_release(&a);
    zlb_strbuf_release(&b);
  }
  closedir(d);
  return rc;
}
