/* zlbench ab's paired statistics (src/run/ab_stats.c): the verdict from
 * block times paired A with B, clock normalisation and its limits. */
#include <math.h>
#include <string.h>

#include "zlb_test.h"
#include "zlbench/ab.h"

#define N 8

/* Deterministic noise in [-amp, amp). */
static double noise(unsigned *s, double amp) {
  *s = *s * 1103515245u + 12345u;
  return amp * (2.0 * ((*s >> 8) & 0xffff) / 65536.0 - 1.0);
}

static void test_identical_is_same(void **state) {
  double a[N], b[N];
  unsigned s = 1;
  zlb_ab_stat_t st;
  (void)state;
  for (int i = 0; i < N; i++)
    a[i] = b[i] = 1.0 + noise(&s, 0.05); /* blocks vary, each pair is equal */
  zlb_ab_stats(a, b, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SAME);
  assert_int_equal((int)st.pairs, N);
  assert_true(fabs(st.ratio - 1.0) < 1e-12);
  assert_true(fabs(st.lo - 1.0) < 1e-12 && fabs(st.hi - 1.0) < 1e-12);
  assert_int_equal(st.normalised, 0);
  assert_string_equal(zlb_ab_verdict_name(st.verdict), "same");
}

static void test_small_noise_is_same(void **state) {
  double a[N], b[N];
  unsigned s = 7;
  zlb_ab_stat_t st;
  (void)state;
  for (int i = 0; i < N; i++) {
    a[i] = 0.5 * (1.0 + noise(&s, 0.005));
    b[i] = 0.5 * (1.0 + noise(&s, 0.005));
  }
  zlb_ab_stats(a, b, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SAME);
}

static void test_shift_is_slower_or_faster(void **state) {
  double a[N], b[N];
  unsigned s = 3;
  zlb_ab_stat_t st;
  (void)state;
  for (int i = 0; i < N; i++) {
    a[i] = 1.0 * (1.0 + noise(&s, 0.005));
    b[i] = 1.05 * (1.0 + noise(&s, 0.005));
  }
  zlb_ab_stats(a, b, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SLOWER);
  assert_true(st.lo > 1.02 && st.hi > st.lo);
  assert_true(fabs(st.ratio - 1.05) < 0.01);
  /* The other way round: B is faster. */
  zlb_ab_stats(b, a, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_FASTER);
  assert_true(st.hi < 1 / 1.02);
  /* Under a threshold above the shift, the interval straddles it. */
  zlb_ab_stats(a, b, NULL, NULL, N, 0.05, &st);
  assert_int_equal(st.verdict, ZLB_AB_AMBIGUOUS);
  /* A 1 % shift under a 2 % threshold is "same", not "slower". */
  for (int i = 0; i < N; i++)
    b[i] = a[i] * 1.01;
  zlb_ab_stats(a, b, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SAME);
}

/* The device slows down over the row (clocks, heat): both blocks of a
 * pair see the same state, so pairing cancels it. The same blocks taken
 * as two runs one after the other (A's from the first half, B's from the
 * second) say "slower". */
static void test_drift_cancels_in_pairs(void **state) {
  double a[2 * N], b[2 * N], g, a1[N], b2[N];
  unsigned s = 11;
  zlb_ab_stat_t st;
  (void)state;
  for (int i = 0; i < 2 * N; i++) {
    g = 1.0 + 0.025 * i; /* 37.5 % slower by the end */
    a[i] = g * (1.0 + noise(&s, 0.003));
    b[i] = g * (1.0 + noise(&s, 0.003));
  }
  zlb_ab_stats(a, b, NULL, NULL, 2 * N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SAME);
  for (int i = 0; i < N; i++) {
    a1[i] = a[i];
    b2[i] = b[N + i];
  }
  zlb_ab_stats(a1, b2, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SLOWER);
}

/* One disturbed pair (a preempted or throttled block) moves neither the
 * estimate nor the interval past the threshold. */
static void test_one_outlier_pair(void **state) {
  double a[N], b[N];
  unsigned s = 13;
  zlb_ab_stat_t st;
  (void)state;
  for (int i = 0; i < N; i++) {
    a[i] = 1.0 * (1.0 + noise(&s, 0.003));
    b[i] = 1.0 * (1.0 + noise(&s, 0.003));
  }
  b[3] *= 3.0;
  zlb_ab_stats(a, b, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SAME);
  a[5] *= 3.0;
  zlb_ab_stats(a, b, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SAME);
  /* A real 5 % shift is still found with one disturbed pair. */
  for (int i = 0; i < N; i++)
    b[i] = a[i] * 1.05 * (1.0 + noise(&s, 0.003));
  b[2] = a[2] * 0.5;
  zlb_ab_stats(a, b, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SLOWER);
}

/* B's blocks ran at a lower SM clock: their times are longer by the clock
 * ratio. With the clocks the times are scaled to one clock: same. */
static void test_clock_normalisation(void **state) {
  double a[N], b[N], fa[N], fb[N];
  unsigned s = 5;
  zlb_ab_stat_t st;
  (void)state;
  for (int i = 0; i < N; i++) {
    double t = 1.0 + noise(&s, 0.002);
    fa[i] = 1980;
    fb[i] = i % 2 ? 1500 : 1980; /* every other B block at a low clock */
    a[i] = t;
    b[i] = t * fa[i] / fb[i];
  }
  zlb_ab_stats(a, b, NULL, NULL, N, 0.02, &st);
  assert_int_not_equal(st.verdict, ZLB_AB_SAME);
  zlb_ab_stats(a, b, fa, fb, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_SAME);
  assert_int_equal(st.normalised, N / 2); /* only the pairs whose clocks differ */
  assert_true(fabs(st.ratio - 1.0) < 1e-9);
  /* Unknown clocks (0) are never used. */
  for (int i = 0; i < N; i++)
    fb[i] = 0;
  zlb_ab_stats(a, b, fa, fb, N, 0.02, &st);
  assert_int_equal(st.normalised, 0);
  assert_int_not_equal(st.verdict, ZLB_AB_SAME);
}

static void test_ambiguous(void **state) {
  double a[N], b[N];
  double nan_a[3] = {1, NAN, 1}, nan_b[3] = {1, 1, -1};
  unsigned s = 9;
  zlb_ab_stat_t st;
  (void)state;
  for (int i = 0; i < N; i++) {
    a[i] = 1.0 + noise(&s, 0.10);
    b[i] = 1.0 + noise(&s, 0.10);
  }
  zlb_ab_stats(a, b, NULL, NULL, N, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_AMBIGUOUS);
  assert_true(st.lo < 1 / 1.02 || st.hi > 1.02);
  /* Fewer than five usable pairs: no interval, ambiguous. */
  for (int i = 0; i < N; i++)
    b[i] = a[i] * 1.5;
  zlb_ab_stats(a, b, NULL, NULL, 4, 0.02, &st);
  assert_int_equal(st.verdict, ZLB_AB_AMBIGUOUS);
  assert_true(isnan(st.lo));
  zlb_ab_stats(nan_a, nan_b, NULL, NULL, 3, 0.02, &st);
  assert_int_equal((int)st.pairs, 1);
  assert_int_equal(st.verdict, ZLB_AB_AMBIGUOUS);
  zlb_ab_stats(a, b, NULL, NULL, 0, 0.02, &st);
  assert_int_equal((int)st.pairs, 0);
  assert_true(isnan(st.ratio));
}

/* The pair order: ABBA alternates; random keeps half the pairs A first,
 * depends only on the seed, and differs between seeds. */
static void test_pair_order(void **state) {
  unsigned char o[ZLB_AB_MAX_BLOCKS], o2[ZLB_AB_MAX_BLOCKS];
  int differs_from_abba = 0, differs_between_seeds = 0;
  (void)state;
  zlb_ab_pair_order(ZLB_AB_ORDER_ABBA, 1, 8, o);
  for (int j = 0; j < 8; j++)
    assert_int_equal(o[j], j % 2 == 0);
  for (uint64_t seed = 1; seed <= 20; seed++) {
    for (int n = 5; n <= ZLB_AB_MAX_BLOCKS; n += 11) {
      int a = 0;
      zlb_ab_pair_order(ZLB_AB_ORDER_RANDOM, seed, n, o);
      for (int j = 0; j < n; j++) {
        assert_true(o[j] == 0 || o[j] == 1);
        a += o[j];
        if (o[j] != (j % 2 == 0))
          differs_from_abba = 1;
      }
      assert_int_equal(a, (n + 1) / 2);
      zlb_ab_pair_order(ZLB_AB_ORDER_RANDOM, seed, n, o2);
      assert_memory_equal(o, o2, (size_t)n);
      zlb_ab_pair_order(ZLB_AB_ORDER_RANDOM, seed + 1000, n, o2);
      if (memcmp(o, o2, (size_t)n))
        differs_between_seeds = 1;
    }
  }
  assert_true(differs_from_abba);
  assert_true(differs_between_seeds);
  /* n beyond the limit is clamped, not written past the array. */
  zlb_ab_pair_order(ZLB_AB_ORDER_RANDOM, 3, ZLB_AB_MAX_BLOCKS + 10, o);
  assert_string_equal(zlb_ab_order_name(ZLB_AB_ORDER_RANDOM), "random");
  assert_string_equal(zlb_ab_order_name(ZLB_AB_ORDER_ABBA), "abba");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identical_is_same),
      cmocka_unit_test(test_small_noise_is_same),
      cmocka_unit_test(test_shift_is_slower_or_faster),
      cmocka_unit_test(test_drift_cancels_in_pairs),
      cmocka_unit_test(test_one_outlier_pair),
      cmocka_unit_test(test_clock_normalisation),
      cmocka_unit_test(test_ambiguous),
      cmocka_unit_test(test_pair_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
