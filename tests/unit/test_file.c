/* File helpers (src/base/file.c) and the error object's setters
 * (src/base/error.c): bounded reads of regular files only, writes that
 * never replace a FIFO, a device node or a symbolic link the user named,
 * and long messages that keep their cause. Runs in a scratch folder. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "zlb_test.h"
#include "zlbench/base.h"

static char dir[PATH_MAX];

static int setup(void **state) {
  const char *tmp = getenv("TMPDIR");
  (void)state;
  snprintf(dir, sizeof(dir), "%s/zlb-test-file.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return -1;
  return chdir(dir);
}

static int teardown(void **state) {
  char cmd[PATH_MAX + 16];
  (void)state;
  if (chdir("/") != 0)
    return -1;
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path) {
  char *text = NULL;
  assert_int_equal(zlb_read_file(path, &text, NULL, NULL), 0);
  return text;
}

static void test_read_limit(void **state) {
  zlb_error_t err = ZLB_ERROR_INIT;
  char *text = (char *)1;
  size_t len = 99;
  (void)state;
  put("ten", "0123456789");
  assert_int_equal(zlb_read_file_max("ten", 10, "a test", &text, &len, &err), 0);
  assert_int_equal(len, 10);
  assert_string_equal(text, "0123456789");
  free(text);
  /* One byte over: refused, nothing handed out. */
  assert_int_equal(zlb_read_file_max("ten", 9, "a test", &text, &len, &err), ZLB_EINVAL);
  assert_null(text);
  assert_string_equal(err.msg, "'ten': larger than 9 bytes (the limit for a test)");
  /* A sparse file one byte over a MiB limit. */
  assert_int_equal(truncate("ten", ((off_t)1 << 20) + 1), 0);
  assert_int_equal(zlb_read_file_max("ten", (size_t)1 << 20, NULL, &text, NULL, &err), ZLB_EINVAL);
  assert_string_equal(err.msg, "'ten': larger than 1 MiB (the limit for an input file)");
}

/* A file whose size fstat does not know (0, like /proc) is still cut at
 * the limit while it is read. */
static void test_read_limit_while_reading(void **state) {
  zlb_error_t err = ZLB_ERROR_INIT;
  char *text = NULL;
  (void)state;
  if (access("/proc/self/status", R_OK) != 0)
    skip();
  assert_int_equal(zlb_read_file_max("/proc/self/status", 16, NULL, &text, NULL, &err),
                   ZLB_EINVAL);
  assert_null(text);
  assert_str_contains(err.msg, "larger than 16 bytes");
}

static void test_read_refuses_non_regular(void **state) {
  zlb_error_t err = ZLB_ERROR_INIT;
  char *text = NULL;
  (void)state;
  assert_int_equal(mkfifo("fifo", 0600), 0);
  assert_int_equal(mkdir("sub", 0700), 0);
  assert_int_equal(symlink("/dev/zero", "zero"), 0);
  /* Would block forever (FIFO) or never end (/dev/zero) if opened. */
  assert_int_equal(zlb_read_file("fifo", &text, NULL, &err), ZLB_EINVAL);
  assert_string_equal(err.msg, "'fifo': is a FIFO, not a regular file");
  assert_int_equal(zlb_read_file("zero", &text, NULL, &err), ZLB_EINVAL);
  assert_string_equal(err.msg, "'zero': is a character device, not a regular file");
  assert_int_equal(zlb_read_file("sub", &text, NULL, &err), ZLB_EINVAL);
  assert_string_equal(err.msg, "'sub': is a directory, not a regular file");
  assert_null(zlb_fopen_regular("fifo", &err));
  assert_int_equal(err.code, ZLB_EINVAL);
  assert_int_equal(zlb_read_file("missing", &text, NULL, &err), ZLB_ENOTFOUND);
  assert_null(text);
}

static void test_write_user_file(void **state) {
  zlb_error_t err = ZLB_ERROR_INIT;
  struct stat st;
  char *text;
  (void)state;
  if (mknod("mynull", S_IFCHR | 0666, makedev(1, 3)) != 0)
    skip(); /* not root */
  assert_int_equal(mkfifo("fifo", 0600), 0);
  assert_int_equal(mkdir("sub", 0700), 0);
  put("victim", "precious");
  assert_int_equal(symlink("victim", "link"), 0);

  assert_int_equal(zlb_write_user_file("mynull", "x", 1, &err), 0);
  assert_int_equal(lstat("mynull", &st), 0);
  assert_true(S_ISCHR(st.st_mode));

  assert_int_equal(zlb_write_user_file("link", "new", 3, &err), 0);
  assert_int_equal(lstat("link", &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  text = slurp("victim");
  assert_string_equal(text, "new");
  free(text);

  assert_int_equal(zlb_write_user_file("fifo", "x", 1, &err), ZLB_EIO);
  assert_string_equal(err.msg, "cannot write 'fifo': a FIFO with no reader");
  assert_int_equal(lstat("fifo", &st), 0);
  assert_true(S_ISFIFO(st.st_mode));

  assert_int_equal(zlb_write_user_file("sub", "x", 1, &err), ZLB_EIO);
  assert_str_contains(err.msg, "it is a directory");

  assert_int_equal(zlb_write_user_file("fresh", "abc", 3, &err), 0);
  text = slurp("fresh");
  assert_string_equal(text, "abc");
  free(text);
}

static void test_write_atomic_own_files(void **state) {
  zlb_error_t err = ZLB_ERROR_INIT;
  struct stat st;
  char *text;
  (void)state;
  put("victim", "precious");
  assert_int_equal(symlink("victim", "link"), 0);
  assert_int_equal(mkfifo("fifo", 0600), 0);
  /* zlbench's own file: a link found there is replaced, not followed. */
  assert_int_equal(zlb_write_file_atomic("link", "new", 3, &err), 0);
  assert_int_equal(lstat("link", &st), 0);
  assert_true(S_ISREG(st.st_mode));
  text = slurp("victim");
  assert_string_equal(text, "precious");
  free(text);
  /* A FIFO is neither written nor renamed over. */
  assert_int_equal(zlb_write_file_atomic("fifo", "x", 1, &err), ZLB_EIO);
  assert_str_contains(err.msg, "it is a FIFO, not a regular file");
  assert_int_equal(lstat("fifo", &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  /* A stale temporary (a link, even) left at the temporary name is not
   * written through. */
  {
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "out.tmp.%ld", (long)getpid());
    assert_int_equal(symlink("victim", tmp), 0);
    assert_int_equal(zlb_write_file_atomic("out", "o", 1, &err), 0);
    text = slurp("victim");
    assert_string_equal(text, "precious");
    free(text);
  }
}

static void test_long_message_keeps_its_end(void **state) {
  zlb_error_t err = ZLB_ERROR_INIT;
  char path[3000];
  size_t n;
  (void)state;
  memset(path, 'p', sizeof(path) - 1);
  path[sizeof(path) - 1] = '\0';
  zlb_error_set(&err, ZLB_EIO, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
  n = strlen(err.msg);
  assert_true(n < sizeof(err.msg));
  assert_true(n > sizeof(err.msg) - 8);
  assert_true(strncmp(err.msg, "cannot write 'ppp", 17) == 0);
  assert_str_contains(err.msg, "...");
  assert_str_contains(err.msg, "ppp': File name too long");
  /* A prefix added while unwinding keeps the end too. */
  zlb_error_prefix(&err, "run");
  assert_true(strncmp(err.msg, "run: cannot write", 17) == 0);
  assert_str_contains(err.msg, "': File name too long");
  /* Short messages are untouched. */
  zlb_error_set(&err, ZLB_EIO, "short %d", 1);
  assert_string_equal(err.msg, "short 1");
}

/* The cut never splits a UTF-8 character. */
static void test_long_message_utf8(void **state) {
  zlb_error_t err = ZLB_ERROR_INIT;
  char path[2400];
  size_t i;
  (void)state;
  for (i = 0; i + 2 < sizeof(path); i += 2)
    memcpy(path + i, "\xc3\xa9", 2); /* é */
  path[i] = '\0';
  zlb_error_set(&err, ZLB_EIO, "'%s': end", path);
  for (i = 0; err.msg[i]; i++) {
    unsigned char c = (unsigned char)err.msg[i];
    if (c == 0xc3)
      assert_int_equal((unsigned char)err.msg[i + 1], 0xa9);
    if (c == 0xa9)
      assert_int_equal((unsigned char)err.msg[i - 1], 0xc3);
  }
  assert_str_contains(err.msg, "': end");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_read_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_read_limit_while_reading, setup, teardown),
      cmocka_unit_test_setup_teardown(test_read_refuses_non_regular, setup, teardown),
      cmocka_unit_test_setup_teardown(test_write_user_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_write_atomic_own_files, setup, teardown),
      cmocka_unit_test(test_long_message_keeps_its_end),
      cmocka_unit_test(test_long_message_utf8),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
