/* Statistics and quantiles: Triton 3.3+'s conventions. */
#include <math.h>
#include <string.h>

#include "zlb_test.h"
#include "zlbench/base.h"
#include "zlbench/timing.h"

static void test_median(void **state) {
  static const struct {
    double v[6];
    size_t n;
    double want;
  } cases[] = {
      {{5}, 1, 5},
      {{3, 1}, 2, 2},             /* even count: average of the two middle ones */
      {{4, 1, 3}, 3, 3},
      {{4, 1, 3, 2}, 4, 2.5},
      {{1, 1, 1, 100, 1, 1}, 6, 1},
      {{-1, 5, 2, 8, 0, 3}, 6, 2.5},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    assert_true(fabs(zlb_stats_median(cases[i].v, cases[i].n) - cases[i].want) < 1e-12);
  assert_true(isnan(zlb_stats_median(NULL, 0)));
}

static void test_mean_min_max_stdev(void **state) {
  double v[] = {2, 4, 4, 4, 5, 5, 7, 9};
  (void)state;
  assert_true(fabs(zlb_stats_mean(v, 8) - 5.0) < 1e-12);
  assert_true(zlb_stats_min(v, 8) == 2.0);
  assert_true(zlb_stats_max(v, 8) == 9.0);
  assert_true(fabs(zlb_stats_stdev(v, 8) - 2.138089935) < 1e-6);
  assert_true(zlb_stats_stdev(v, 1) == 0.0);
}

static void test_quantiles(void **state) {
  double v[] = {10, 20, 30, 40, 50}, q;
  static const struct {
    double q, want;
  } cases[] = {{0.0, 10}, {1.0, 50}, {0.5, 30}, {0.2, 18}, {0.8, 42}, {0.25, 20}, {0.9, 46}};
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    assert_int_equal(zlb_stats_quantile(v, 5, cases[i].q, &q), 0);
    assert_true(fabs(q - cases[i].want) < 1e-9);
  }
  /* one element: every quantile is that element */
  assert_int_equal(zlb_stats_quantile(v, 1, 0.3, &q), 0);
  assert_true(q == 10);
  assert_int_equal(zlb_stats_quantile(v, 5, -0.1, &q), ZLB_EINVAL);
  assert_int_equal(zlb_stats_quantile(v, 5, 1.5, &q), ZLB_EINVAL);
  assert_int_equal(zlb_stats_quantile(v, 5, NAN, &q), ZLB_EINVAL);
}

static void test_pick(void **state) {
  double v[] = {3, 1, 2, 10};
  (void)state;
  assert_true(zlb_stats_pick(v, 4, ZLB_RET_MEDIAN) == 2.5);
  assert_true(zlb_stats_pick(v, 4, ZLB_RET_MEAN) == 4.0);
  assert_true(zlb_stats_pick(v, 4, ZLB_RET_MIN) == 1.0);
  assert_true(zlb_stats_pick(v, 4, ZLB_RET_MAX) == 10.0);
  assert_true(zlb_stats_pick(v, 4, ZLB_RET_ALL) == 2.5);
}

static void test_names(void **state) {
  zlb_timer_kind_t t;
  zlb_return_mode_t m;
  (void)state;
  assert_int_equal(zlb_timer_parse("graph", &t), 0);
  assert_int_equal(t, ZLB_TIMER_GRAPH);
  assert_int_equal(zlb_timer_parse("direct", &t), 0);
  assert_int_equal(t, ZLB_TIMER_DIRECT);
  assert_int_equal(zlb_timer_parse("cudagraph", &t), ZLB_EINVAL);
  /* The trace timer is named for what it measures; its old name, "cupti",
   * still selects it, and every name reads back as "trace". */
  t = ZLB_TIMER_AUTO;
  assert_int_equal(zlb_timer_parse("trace", &t), 0);
  assert_int_equal(t, ZLB_TIMER_TRACE);
  t = ZLB_TIMER_AUTO;
  assert_int_equal(zlb_timer_parse("cupti", &t), 0);
  assert_int_equal(t, ZLB_TIMER_TRACE);
  assert_string_equal(zlb_timer_name(ZLB_TIMER_TRACE), "trace");
  assert_int_equal(zlb_timer_parse("CUPTI", &t), ZLB_EINVAL);
  assert_int_equal(zlb_timer_parse("queue", &t), 0);
  assert_int_equal(t, ZLB_TIMER_QUEUE);
  assert_string_equal(zlb_timer_name(ZLB_TIMER_QUEUE), "queue");
  for (int i = ZLB_RET_MEDIAN; i <= ZLB_RET_ALL; i++) {
    assert_int_equal(zlb_return_mode_parse(zlb_return_mode_name((zlb_return_mode_t)i), &m), 0);
    assert_int_equal(m, i);
  }
  assert_int_equal(zlb_return_mode_parse("p50", &m), ZLB_EINVAL);
  assert_int_equal(zlb_timer_resolve(ZLB_TIMER_AUTO, ZLB_CAP_GRAPH), ZLB_TIMER_GRAPH);
  assert_int_equal(zlb_timer_resolve(ZLB_TIMER_AUTO, 0), ZLB_TIMER_DIRECT);
  assert_int_equal(zlb_timer_resolve(ZLB_TIMER_GRAPH, 0), ZLB_TIMER_DIRECT);
  assert_int_equal(zlb_timer_resolve(ZLB_TIMER_DIRECT, ZLB_CAP_GRAPH), ZLB_TIMER_DIRECT);
  /* auto: graph where graphs are reliable (CUDA, which can also hold),
   * else the queue timer where a stream can be held, else direct. */
  assert_int_equal(zlb_timer_resolve(ZLB_TIMER_AUTO, ZLB_CAP_GRAPH | ZLB_CAP_HOLD),
                   ZLB_TIMER_GRAPH);
  assert_int_equal(zlb_timer_resolve(ZLB_TIMER_AUTO, ZLB_CAP_HOLD), ZLB_TIMER_QUEUE);
  /* Asked for, the queue timer stays: each shape falls back, marked. */
  assert_int_equal(zlb_timer_resolve(ZLB_TIMER_QUEUE, 0), ZLB_TIMER_QUEUE);
  assert_int_equal(zlb_timer_resolve(ZLB_TIMER_QUEUE, ZLB_CAP_GRAPH), ZLB_TIMER_QUEUE);
}

/* FNV-1a 64: the published vectors, the same value fed in pieces (a file
 * read in blocks), and bytes after a NUL counted where a length is given. */
static void test_fnv1a64(void **state) {
  uint64_t h;
  (void)state;
  assert_true(zlb_fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  assert_true(zlb_fnv1a64("foobar") == 0x85944171f73967e8ull);
  assert_true(zlb_fnv1a64_add(ZLB_FNV1A64_BASIS, "foobar", 6) == zlb_fnv1a64("foobar"));
  h = zlb_fnv1a64_add(ZLB_FNV1A64_BASIS, "foo", 3);
  assert_true(zlb_fnv1a64_add(h, "bar", 3) == zlb_fnv1a64("foobar"));
  assert_true(zlb_fnv1a64_add(ZLB_FNV1A64_BASIS, "foo\0bar", 7) == 0x8a5f40d8243888aaull);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_median),   cmocka_unit_test(test_mean_min_max_stdev),
      cmocka_unit_test(test_quantiles), cmocka_unit_test(test_pick),
      cmocka_unit_test(test_names), cmocka_unit_test(test_fnv1a64),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
