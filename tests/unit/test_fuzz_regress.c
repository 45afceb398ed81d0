/* The fuzz targets' regression inputs (tests/fuzz/corpus/<target>/regress_*)
 * through the same library calls, in every build: the fuzz tests need
 * clang, these run wherever the unit tests do (and catch the over-reads
 * and undefined behaviour under the ASan/UBSan build). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/compare.h"
#include "zlbench/json.h"
#include "zlbench/report.h"
#include "zlbench/yaml.h"

#ifndef ZLB_TEST_DATA
#define ZLB_TEST_DATA "tests/data"
#endif
#define CORPUS ZLB_TEST_DATA "/../fuzz/corpus"

/* The input in a buffer of exactly its size (no NUL after it), as the fuzz
 * target gets it, so a read past `len` is caught. */
typedef void (*feed_fn)(const char *text, size_t len);

static void feed_yaml(const char *text, size_t len) {
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  if (zlb_yaml_parse(text, len, "regress.yaml", &doc, &err) != 0)
    assert_true(err.msg[0] != '\0');
  zlb_yaml_doc_release(&doc);
}

static void feed_results(const char *text, size_t len) {
  zlb_res_set_t s = ZLB_RES_SET_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_cmp_params_t p = ZLB_CMP_PARAMS_INIT;
  p.resamples = 16;
  if (zlb_res_parse(&s, text, len, "results.json", NULL, &err) == 0) {
    for (int impl = ZLB_CMP_CANDIDATE; impl <= ZLB_CMP_SPEEDUP; impl++) {
      zlb_cmp_t c;
      zlb_strbuf_t out = ZLB_STRBUF_INIT;
      memset(&c, 0, sizeof(c));
      zlb_cmp_run(&c, &s, &s, (zlb_cmp_impl_t)impl, &p);
      zlb_cmp_format(&c, ZLB_FMT_TEXT, "a", "b", 0, &out);
      zlb_strbuf_release(&out);
      zlb_cmp_release(&c);
    }
  }
  zlb_res_release(&s);
}

static void feed_json(const char *text, size_t len) {
  zlb_json_t *v = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  (void)zlb_json_parse(text, len, "regress.json", &v, &err);
  zlb_json_free(v);
}

/* Every regress_* file of one target's corpus; returns how many. */
static size_t run_dir(const char *target, feed_fn feed) {
  zlb_strbuf_t dir = ZLB_STRBUF_INIT, path = ZLB_STRBUF_INIT;
  size_t n = 0;
  DIR *d;
  struct dirent *e;
  zlb_strbuf_addf(&dir, "%s/%s", CORPUS, target);
  d = opendir(dir.buf);
  if (!d)
    fail_msg("cannot open %s", dir.buf);
  while ((e = readdir(d))) {
    char *text = NULL, *exact;
    size_t len = 0;
    zlb_error_t err = ZLB_ERROR_INIT;
    if (strncmp(e->d_name, "regress_", 8))
      continue;
    zlb_strbuf_reset(&path);
    zlb_strbuf_addf(&path, "%s/%s", dir.buf, e->d_name);
    if (zlb_read_file(path.buf, &text, &len, &err))
      fail_msg("%s", err.msg);
    exact = malloc(len ? len : 1);
    assert_non_null(exact);
    memcpy(exact, text, len);
    free(text);
    feed(exact, len);
    free(exact);
    n++;
  }
  closedir(d);
  zlb_strbuf_release(&dir);
  zlb_strbuf_release(&path);
  return n;
}

static void test_shapes(void **state) {
  (void)state;
  assert_true(run_dir("shapes", feed_yaml) >= 1);
}

static void test_results(void **state) {
  (void)state;
  assert_true(run_dir("results", feed_results) >= 1);
}

static void test_json(void **state) {
  (void)state;
  (void)run_dir("json", feed_json);
  (void)run_dir("identity", feed_json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shapes),
      cmocka_unit_test(test_results),
      cmocka_unit_test(test_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
