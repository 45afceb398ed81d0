/* Limits on untrusted input that are not a parser's own (docs/limits.md):
 * each at its edge. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zlbench/base.h"
#include "zlbench/batch.h"
#include "zlbench/ops.h"
#include "zlbench/yaml.h"

#include "batch/batch_int.h"

/* A shape file whose key lists `n` distinct 1-D shapes. */
static void write_shapes(const char *path, int n) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("relu:\n  shapes:\n", f);
  for (int i = 1; i <= n; i++)
    fprintf(f, "    - [%d]\n", i);
  assert_int_equal(fclose(f), 0);
}

/* More than 10000 shapes for one key is refused before the duplicate
 * check (quadratic: a 16 MiB file of distinct shapes would take hours). */
static void test_shape_count(void **state) {
  char dir[] = "/tmp/zlb-limits-XXXXXX", path[64];
  zlb_shape_list_t l = ZLB_SHAPE_LIST_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/s.yaml", dir);
  write_shapes(path, 10001);
  assert_int_equal(zlb_shapes_resolve(path, "relu", "unary_pointwise", 0, 1, &l, &err),
                   ZLB_EPARSE);
  if (!strstr(err.msg, "more than 10000 shapes for one key"))
    fail_msg("unexpected message: %s", err.msg);
  assert_int_equal(l.n, 0);
  write_shapes(path, 3);
  assert_int_equal(zlb_shapes_resolve(path, "relu", "unary_pointwise", 0, 1, &l, &err), 0);
  assert_int_equal(l.n, 3);
  zlb_shape_list_release(&l);
  unlink(path);
  rmdir(dir);
}

/* An inventory list or a dismiss list of more than 10000 entries is
 * refused before its duplicate checks (quadratic, as the shapes'). */
static void test_selection_count(void **state) {
  char dir[] = "/tmp/zlb-limits-XXXXXX", path[64];
  zlb_strvec_t ops = ZLB_STRVEC_INIT, why = ZLB_STRVEC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  FILE *f;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/i.yaml", dir);
  assert_non_null(f = fopen(path, "w"));
  fputs("host:\n", f);
  for (int i = 0; i <= 10000; i++)
    fprintf(f, "  - op%d\n", i);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(zlb_inventory_load(path, "host", &ops, &err), ZLB_EPARSE);
  if (!strstr(err.msg, "'host' lists more than 10000 operators"))
    fail_msg("unexpected message: %s", err.msg);
  zlb_strvec_release(&ops);

  assert_non_null(f = fopen(path, "w"));
  fputs("dismissed:\n", f);
  for (int i = 0; i <= 10000; i++)
    fprintf(f, "  - {op: op%d, reason: slow}\n", i);
  assert_int_equal(fclose(f), 0);
  err = (zlb_error_t)ZLB_ERROR_INIT;
  assert_int_equal(zlb_dismiss_load(path, "host", &ops, &why, &err), ZLB_EPARSE);
  if (!strstr(err.msg, "more than 10000 dismissals"))
    fail_msg("unexpected message: %s", err.msg);
  zlb_strvec_release(&ops);
  zlb_strvec_release(&why);
  unlink(path);
  rmdir(dir);
}

/* A document of many keys parses in time linear in its size: each key's
 * check looked its position up from the start of the text, so 300000 keys
 * (4 MiB) would take hours. The alarm ends a quadratic parse; linear, it takes
 * well under a second (a few under sanitizers). */
static void test_yaml_many_keys(void **state) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  const int n = 300000;
  (void)state;
  zlb_strbuf_addstr(&sb, "ops:\n");
  for (int i = 0; i < n; i++)
    zlb_strbuf_addf(&sb, "  op%d: {shapes: [[%d]]}\n", i, i);
  alarm(100);
  if (zlb_yaml_parse(sb.buf, sb.len, "many.yaml", &doc, &err))
    fail_msg("%s", err.msg);
  alarm(0);
  assert_int_equal(zlb_yaml_map_get(doc.root, "ops")->n, n);
  zlb_yaml_doc_release(&doc);
  zlb_strbuf_release(&sb);
}

/* ops_status.csv: one row per operator, at most 100000 (each costs about
 * 1 KB in memory), read in linear time (the array grew one row at a time:
 * 100000 rows took over 10 minutes under ASan). */
static void write_status(const char *path, int n) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("operator,status,attempts,dtype_level,backend,device,timer,seconds,error_signature,"
        "failed_dtypes,note\n", f);
  for (int i = 0; i < n; i++)
    fprintf(f, "op%d,ok,1,1,host,0,direct,0.1,,,\n", i);
  assert_int_equal(fclose(f), 0);
}

static void test_status_rows(void **state) {
  char dir[] = "/tmp/zlb-limits-XXXXXX", path[64];
  zlb__status_row_t *rows = NULL;
  size_t n = 0;
  zlb_error_t err = ZLB_ERROR_INIT;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/ops_status.csv", dir);
  write_status(path, 100000);
  alarm(100);
  if (zlb__status_read(path, &rows, &n, &err))
    fail_msg("%s", err.msg);
  alarm(0);
  assert_int_equal(n, 100000);
  assert_string_equal(rows[99999].op, "op99999");
  free(rows);
  write_status(path, 100001);
  assert_int_equal(zlb__status_read(path, &rows, &n, &err), ZLB_EPARSE);
  if (!strstr(err.msg, "more than 100000 rows"))
    fail_msg("unexpected message: %s", err.msg);
  assert_null(rows);
  assert_int_equal(n, 0);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shape_count),
      cmocka_unit_test(test_selection_count),
      cmocka_unit_test(test_yaml_many_keys),
      cmocka_unit_test(test_status_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
