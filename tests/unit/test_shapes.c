/* Shape lookup: operator, family, FlagGems class, default, Benchmark,
 * built-in; nested FlagGems entries; comprehensive lists; errors. */
#include <stdio.h>
#include <string.h>

#include "zlb_test.h"
#include "zlbench/ops.h"

#define DATA ZLB_TEST_DATA "/shapes/"

static void fmt_all(const zlb_shape_list_t *l, char *buf, size_t len) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  for (size_t i = 0; i < l->n; i++) {
    char one[96];
    zlb_shape_format(&l->v[i], one, sizeof(one));
    zlb_strbuf_addf(&sb, "%s%s", i ? " " : "", one);
  }
  zlb_strlcpy(buf, sb.buf, len);
  zlb_strbuf_release(&sb);
}

static void test_lookup_chain(void **state) {
  static const struct {
    const char *file, *op, *family;
    int level, host;
    const char *key, *shapes;
  } cases[] = {
      {"ours.yaml", "softmax", "softmax", 0, 0, "softmax", "[64, 64] [128]"},
      {"ours.yaml", "softmax", "softmax", 1, 0, "softmax", "[64, 64] [128] [[1024, 4096], 1, 1]"},
      {"ours.yaml", "sum", "reduction", 0, 0, "reduction", "[[640, 1536], 0, 0]"},
      {"ours.yaml", "add", "binary_pointwise", 0, 0, "BinaryPointwiseBenchmark", "[7, 7]"},
      {"ours.yaml", "sort", "sort", 0, 0, "default", "[3]"},
      {"flaggems_core.yaml", "mm", "blas", 0, 0, "BlasBenchmark",
       "[2, 384, 384, 384] [16, 1024, 1024, 1024]"},
      {"flaggems_core.yaml", "exp", "unary_pointwise", 0, 0, "Benchmark", "[1073741824] [64, 64]"},
      {NULL, "exp", "unary_pointwise", 0, 1, "default", "[4096] [64, 64] [256, 256]"},
      {NULL, "exp", "unary_pointwise", 0, 0, "default",
       "[1048576] [64, 64] [4096, 4096] [64, 512, 512]"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    zlb_shape_list_t l = ZLB_SHAPE_LIST_INIT;
    zlb_error_t e = ZLB_ERROR_INIT;
    char path[512], got[512];
    if (cases[i].file)
      snprintf(path, sizeof(path), DATA "%s", cases[i].file);
    if (zlb_shapes_resolve(cases[i].file ? path : NULL, cases[i].op, cases[i].family,
                           cases[i].level, cases[i].host, &l, &e))
      fail_msg("case %zu: %s", i, e.msg);
    fmt_all(&l, got, sizeof(got));
    if (strcmp(l.key, cases[i].key) || strcmp(got, cases[i].shapes))
      fail_msg("case %zu (%s): key '%s' shapes '%s', want '%s' '%s'", i, cases[i].op, l.key,
               got, cases[i].key, cases[i].shapes);
    zlb_shape_list_release(&l);
  }
}

static void test_nested_args(void **state) {
  zlb_shape_list_t l = ZLB_SHAPE_LIST_INIT;
  zlb_error_t e = ZLB_ERROR_INIT;
  (void)state;
  assert_int_equal(zlb_shapes_resolve(DATA "ours.yaml", "sum", "reduction", 0, 0, &l, &e), 0);
  assert_int_equal(l.n, 1);
  assert_int_equal(l.v[0].ndim, 2);
  assert_int_equal(l.v[0].dims[1], 1536);
  assert_int_equal(l.v[0].nargs, 2);
  assert_int_equal(l.v[0].args[0], 0);
  assert_int_equal(l.v[0].args[1], 0);
  assert_string_equal(l.desc, "(M, N), dim, keepdim");
  zlb_shape_list_release(&l);
  /* `shape_desc:` with no value is no description, not an error. */
  assert_int_equal(zlb_shapes_resolve(DATA "desc_null.yaml", "softmax", "softmax", 0, 0, &l, &e),
                   0);
  assert_int_equal(l.n, 1);
  assert_string_equal(l.desc, "");
  zlb_shape_list_release(&l);
}

static void test_errors(void **state) {
  static const struct {
    const char *file, *want;
  } cases[] = {
      {"negative.yaml",
       "negative.yaml:4: shape [0, -3] extent #2: -3 is out of range (0..281474976710656)"},
      {"notlist.yaml", "notlist.yaml:2: 'shapes' must be a list of shapes"},
      {"empty_key.yaml", "empty_key.yaml:2: key 'softmax' lists no shapes"},
      {"missing.yaml", "cannot read"},
      {"unknown_field.yaml", "unknown_field.yaml:4: key 'softmax' has an unknown field "
                             "'comprehensive_shape' (expected shapes, comprehensive_shapes "
                             "or shape_desc)"},
      {"desc_list.yaml", "desc_list.yaml:4: key 'softmax': shape_desc must be text"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    zlb_shape_list_t l = ZLB_SHAPE_LIST_INIT;
    zlb_error_t e = ZLB_ERROR_INIT;
    char path[512];
    snprintf(path, sizeof(path), DATA "%s", cases[i].file);
    assert_true(zlb_shapes_resolve(path, "softmax", "softmax", 0, 0, &l, &e) != 0);
    assert_str_contains(e.msg, cases[i].want);
    assert_int_equal(l.n, 0);
  }
}

/* Extents: plain decimal integers in 0..2^48 only, the message naming the
 * shape as written, the extent's position and its value. */
static void test_bad_extents(void **state) {
  static const struct {
    const char *key, *want;
  } cases[] = {
      {"bool", ":4: shape [true, 64] extent #1: 'true' is not a decimal integer"},
      {"bare_bool", ":6: shape false extent #1: 'false' is not a decimal integer"},
      {"quoted", ":8: shape [\"64\", 64] extent #1: '64' is quoted; write extents as plain "
                 "integers (64, not \"64\")"},
      {"octal", ":10: shape [064] extent #1: '064' has a leading zero"},
      {"hex", ":12: shape [0x40] extent #1: '0x40' is not a decimal integer"},
      {"float", ":14: shape [64, 1.5] extent #2: '1.5' is not a decimal integer"},
      {"huge", ":16: shape [99999999999999999999999] extent #1: 99999999999999999999999 is "
               "out of range (0..281474976710656)"},
      {"above_max", ":18: shape [64, 281474976710657] extent #2: 281474976710657 is out of "
                    "range (0..281474976710656)"},
      {"negative", ":20: shape [64, -3] extent #2: -3 is out of range (0..281474976710656)"},
      {"empty", ":22: shape [64, ~] extent #2 is empty, not an integer"},
      {"nested", ":24: shape [64, ...] extent #2 is a list or map, not an integer"},
      {"no_extents", ":26: shape [] has no extents"},
      {"overflow", ":28: shape [281474976710656, 281474976710656] has more than 2^63 elements "
                   "in all"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    zlb_shape_list_t l = ZLB_SHAPE_LIST_INIT;
    zlb_error_t e = ZLB_ERROR_INIT;
    char want[256];
    snprintf(want, sizeof(want), "bad_extents.yaml%s", cases[i].want);
    if (!zlb_shapes_resolve(DATA "bad_extents.yaml", cases[i].key, "none", 0, 0, &l, &e))
      fail_msg("key '%s': accepted", cases[i].key);
    if (!strstr(e.msg, want))
      fail_msg("key '%s': got '%s', want '%s'", cases[i].key, e.msg, want);
    assert_int_equal(l.n, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lookup_chain),
      cmocka_unit_test(test_nested_args),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_bad_extents),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
