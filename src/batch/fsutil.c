/* Folder operations the batch needs: remove a tree, copy a tree, move a
 * folder's contents, check a tree for links. None of them follows a
 * symbolic link: a tree is walked through descriptors opened with
 * O_NOFOLLOW, entries are examined with AT_SYMLINK_NOFOLLOW, and a link
 * met on the way is removed (rmtree) or refused (copy, link), never
 * entered. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_int.h"

/* Deeper than any results tree the batch writes; a deeper one is refused
 * rather than walked with one descriptor per level. */
#define MAX_DEPTH 64

static int open_dir_at(int at, const char *name) {
  return openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A DIR over the folder open as `fd`; NULL with `fd` closed and errno
 * kept when that fails. */
static DIR *dir_of(int fd) {
  DIR *d = fdopendir(fd);
  if (!d) {
    int saved = errno;
    close(fd);
    errno = saved;
  }
  return d;
}

/* Empty the folder open as `fd` (the descriptor is consumed). */
static int rm_contents(int fd, int depth) {
  DIR *d;
  struct dirent *de;
  int rc = 0, saved = 0;
  if (depth > MAX_DEPTH) {
    close(fd);
    errno = ELOOP;
    return -1;
  }
  if (!(d = dir_of(fd)))
    return -1;
  while ((de = readdir(d))) {
    struct stat st;
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT && !rc) {
        rc = -1;
        saved = errno;
      }
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      int sub = open_dir_at(dirfd(d), de->d_name);
      if (sub < 0 || rm_contents(sub, depth + 1) != 0 ||
          unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) != 0) {
        if (!rc) {
          rc = -1;
          saved = errno;
        }
      }
    } else if (unlinkat(dirfd(d), de->d_name, 0) != 0 && errno != ENOENT && !rc) {
      /* A symbolic link is removed itself, never what it points at. */
      rc = -1;
      saved = errno;
    }
  }
  closedir(d);
  if (rc)
    errno = saved;
  return rc;
}

int zlb__rmtree(const char *path) {
  struct stat st;
  int fd;
  if (lstat(path, &st) != 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode))
    return unlink(path) != 0 && errno != ENOENT ? -1 : 0;
  fd = open_dir_at(AT_FDCWD, path);
  if (fd < 0) {
    /* Replaced by a link since the lstat: remove the link only. */
    if (errno == ELOOP || errno == ENOTDIR)
      return unlink(path) != 0 && errno != ENOENT ? -1 : 0;
    return -1;
  }
  if (rm_contents(fd, 0) != 0)
    return -1;
  return rmdir(path) != 0 && errno != ENOENT ? -1 : 0;
}

/* Walk the folder open as `fd` (consumed); `label` names it in `bad`. */
static int check_fd(int fd, const char *label, zlb_strbuf_t *bad, int depth) {
  DIR *d;
  struct dirent *de;
  int rc = 0, saved = 0;
  if (!(d = dir_of(fd)))
    return -1;
  while (!rc && (de = readdir(d))) {
    zlb_strbuf_t p = ZLB_STRBUF_INIT;
    struct stat st;
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    zlb_path_join(&p, label, de->d_name);
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      rc = errno == ENOENT ? 0 : -1;
    } else if (S_ISDIR(st.st_mode)) {
      rc = zlb__tree_check_at(dirfd(d), de->d_name, p.buf, bad, depth + 1);
    } else if (!S_ISREG(st.st_mode)) {
      zlb_strbuf_reset(bad);
      zlb_strbuf_addstr(bad, p.buf);
      rc = 1;
    }
    if (rc < 0)
      saved = errno;
    zlb_strbuf_release(&p);
  }
  closedir(d);
  if (rc < 0)
    errno = saved;
  return rc;
}

int zlb__tree_check_at(int at, const char *name, const char *label, zlb_strbuf_t *bad,
                       int depth) {
  struct stat st;
  int fd;
  if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return -1;
  if (!S_ISDIR(st.st_mode) || depth > MAX_DEPTH) {
    zlb_strbuf_reset(bad);
    zlb_strbuf_addstr(bad, label);
    return 1;
  }
  /* O_NOFOLLOW: replaced by a link since the fstatat is caught too. */
  if ((fd = open_dir_at(at, name)) < 0) {
    if (errno == ELOOP || errno == ENOTDIR) {
      zlb_strbuf_reset(bad);
      zlb_strbuf_addstr(bad, label);
      return 1;
    }
    return -1;
  }
  return check_fd(fd, label, bad, depth);
}

int zlb__tree_check(const char *path, zlb_strbuf_t *bad) {
  return zlb__tree_check_at(AT_FDCWD, path, path, bad, 0);
}

/* Copy the regular file `name` of folder `from_fd` to `to` (never through
 * a link at either end). */
static int copy_file_at(int from_fd, const char *name, const char *to) {
  char buf[65536];
  ssize_t n;
  int in = openat(from_fd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC), out, rc = 0;
  struct stat st;
  if (in < 0)
    return -1;
  if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(in);
    errno = EINVAL;
    return -1;
  }
  out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (out < 0) {
    close(in);
    return -1;
  }
  while ((n = read(in, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
    if (n < 0)
      continue;
    if (write(out, buf, (size_t)n) != n) {
      rc = -1;
      break;
    }
  }
  if (n < 0)
    rc = -1;
  close(in);
  if (close(out) != 0)
    rc = -1;
  return rc;
}

/* Walk `from` (a real folder) into `to`: regular files copied (or, with
 * `link_first`, hard-linked where possible), folders recreated; a link or
 * special file met on the way fails the whole copy with ELOOP. */
static int clone_tree(int at, const char *from, const char *to, const char *skip,
                      int link_first, int depth) {
  DIR *d;
  struct dirent *de;
  int fd, rc = 0, saved = 0;
  if (depth > MAX_DEPTH) {
    errno = ELOOP;
    return -1;
  }
  if ((fd = open_dir_at(at, from)) < 0)
    return -1;
  if (!(d = dir_of(fd)))
    return -1;
  if (mkdir(to, 0777) != 0 && errno != EEXIST) {
    saved = errno;
    closedir(d);
    errno = saved;
    return -1;
  }
  while (!rc && (de = readdir(d))) {
    zlb_strbuf_t b = ZLB_STRBUF_INIT;
    struct stat st;
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
        (skip && !strcmp(de->d_name, skip)))
      continue;
    zlb_path_join(&b, to, de->d_name);
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      rc = -1;
    } else if (S_ISDIR(st.st_mode)) {
      rc = clone_tree(dirfd(d), de->d_name, b.buf, skip, link_first, depth + 1);
    } else if (!S_ISREG(st.st_mode)) {
      errno = ELOOP;
      rc = -1;
    } else if (!link_first || linkat(dirfd(d), de->d_name, AT_FDCWD, b.buf, 0) != 0) {
      rc = copy_file_at(dirfd(d), de->d_name, b.buf);
    }
    if (rc)
      saved = errno;
    zlb_strbuf_release(&b);
  }
  closedir(d);
  if (rc)
    errno = saved;
  return rc;
}

int zlb__copytree(const char *from, const char *to, const char *skip) {
  return clone_tree(AT_FDCWD, from, to, skip, 0, 0);
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

int zlb__linktree(const char *from, const char *to, int copy) {
  return zlb__linktree_at(AT_FDCWD, from, to, copy);
}

int zlb__linktree_at(int at, const char *from, const char *to, int copy) {
  return clone_tree(at, from, to, NULL, !copy, 0);
}

int zlb__swap_dir(const char *from, const char *to, const char *aside) {
  struct stat st;
  if (lstat(to, &st) != 0) {
    if (errno != ENOENT)
      return -1;
    return rename(from, to);
  }
  /* Atomic where the file system can: `to` is the old folder or the new
   * one, never neither; `from` then holds the old one. */
  if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0)
    return zlb__rmtree(from);
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    return -1;
  if (zlb__rmtree(aside) != 0 || rename(to, aside) != 0)
    return -1;
  if (rename(from, to) != 0) {
    int e = errno;
    if (rename(aside, to) != 0) /* put the old one back */
      e = errno;
    errno = e;
    return -1;
  }
  return zlb__rmtree(aside);
}
