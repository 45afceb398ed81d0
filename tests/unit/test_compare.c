/* The statistics, verdicts, caliber rule, matching and output formats of
 * zlbench compare (include/zlbench/compare.h, docs/compare.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlb_test.h"
#include "zlbench/compare.h"
#include "zlbench/html.h"

/* Deterministic pseudo-normal noise (sum of 12 uniforms), mean 0, sd 1. */
static unsigned long long rng = 88172645463325252ULL;
static double unif(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}
static double gauss(void) {
  double s = 0;
  for (int i = 0; i < 12; i++)
    s += unif();
  return s - 6;
}

static void test_utest_exact(void **state) {
  (void)state;
  double a[] = {1, 2, 3, 4, 5}, b[] = {6, 7, 8, 9, 10};
  zlb_utest_t u;
  assert_int_equal(zlb_utest(a, 5, b, 5, &u), 0);
  assert_true(u.exact);
  assert_true(fabs(u.u - 0) < 1e-12);
  assert_true(fabs(u.p - 2.0 / 252) < 1e-12); /* both extremes of C(10,5) */
  assert_int_equal(zlb_utest(b, 5, a, 5, &u), 0);
  assert_true(fabs(u.u - 25) < 1e-12);
  assert_true(fabs(u.p - 2.0 / 252) < 1e-12);
  /* Interleaved: U = 2 of 4 pairs for {1,4} vs {2,3}: P(U<=2) over 6 orders. */
  {
    double x[] = {1, 4}, y[] = {2, 3};
    assert_int_equal(zlb_utest(x, 2, y, 2, &u), 0);
    assert_true(fabs(u.u - 2) < 1e-12);
    assert_true(fabs(u.p - 1.0) < 1e-12);
  }
  {
    double x[] = {1, 2}, y[] = {3, 4, 5};
    /* U=0: 1 of C(5,2)=10 orders, two-sided 0.2 */
    assert_int_equal(zlb_utest(x, 2, y, 3, &u), 0);
    assert_true(fabs(u.p - 0.2) < 1e-12);
  }
}

static void test_utest_ties_normal(void **state) {
  (void)state;
  /* Ranks by hand: R_a = 1 + 3 + 3 + 5.5 = 12.5, U = 2.5, mu = 10,
   * var = 20/12 * (10 - 36/72), z = -(7.5 - 0.5)/sd, p = 0.0785459. */
  double a[] = {1, 2, 2, 3}, b[] = {2, 3, 4, 4, 5};
  zlb_utest_t u;
  assert_int_equal(zlb_utest(a, 4, b, 5, &u), 0);
  assert_false(u.exact);
  assert_true(fabs(u.u - 2.5) < 1e-12);
  assert_true(fabs(u.z + 1.759186414825121) < 1e-9);
  assert_true(fabs(u.p - 0.0785458509511907) < 1e-9);
  {
    double n[] = {1, NAN};
    assert_int_equal(zlb_utest(n, 2, b, 5, &u), ZLB_EINVAL);
  }
}

static void test_median_iqr(void **state) {
  (void)state;
  double v[] = {4, 1, 3, 2};
  assert_true(fabs(zlb_median(v, 4) - 2.5) < 1e-12);
  assert_true(fabs(zlb_median(v, 3) - 3) < 1e-12);
  /* q25 = 1.75, q75 = 3.25 over median 2.5 */
  assert_true(fabs(zlb_rel_iqr(v, 4) - 0.6) < 1e-12);
}

#define N 400
static void fill(double *v, size_t n, double mean, double sd) {
  for (size_t i = 0; i < n; i++)
    v[i] = mean + sd * gauss();
}

static void test_verdicts(void **state) {
  (void)state;
  static double a[N], b[N];
  zlb_cmp_params_t p = ZLB_CMP_PARAMS_INIT;
  zlb_cmp_stat_t s;
  /* a synthetic 5 % slowdown with 1 % noise: slower, interval around 1.05 */
  fill(a, N, 1.0, 0.01);
  fill(b, N, 1.05, 0.0105);
  zlb_cmp_verdict(a, N, b, N, &p, &s);
  assert_int_equal(s.verdict, ZLB_V_SLOWER);
  assert_true(s.lo > 1.04 && s.hi < 1.06 && s.lo <= s.ratio && s.ratio <= s.hi);
  assert_true(s.p < 1e-6);
  zlb_cmp_verdict(b, N, a, N, &p, &s);
  assert_int_equal(s.verdict, ZLB_V_FASTER);
  /* the same 5 % under a 10 % threshold: same */
  p.threshold = 0.10;
  zlb_cmp_verdict(a, N, b, N, &p, &s);
  assert_int_equal(s.verdict, ZLB_V_SAME);
  p.threshold = 0.02;
  /* the same 5 % on a 1.5 us kernel (0.075 us): under the 0.1 us floor of
   * what the timer resolves, same; with the floor off, slower */
  {
    static double sa[N], sb[N];
    for (size_t i = 0; i < N; i++) {
      sa[i] = a[i] * 0.0015;
      sb[i] = b[i] * 0.0015;
    }
    zlb_cmp_verdict(sa, N, sb, N, &p, &s);
    assert_int_equal(s.verdict, ZLB_V_SAME);
    assert_str_contains(s.why, "floor");
    p.min_abs_ms = 0;
    zlb_cmp_verdict(sa, N, sb, N, &p, &s);
    assert_int_equal(s.verdict, ZLB_V_SLOWER);
    p.min_abs_ms = 1e-4;
  }
  /* identical sets: same, ratio exactly 1 */
  zlb_cmp_verdict(a, N, a, N, &p, &s);
  assert_int_equal(s.verdict, ZLB_V_SAME);
  assert_true(fabs(s.ratio - 1) < 1e-12);
  assert_true(s.p > 0.99);
  /* bimodal B (half at 1.0, half at 1.3): its median moves, but its spread
   * is larger than the move: noisy */
  for (size_t i = 0; i < N; i++)
    b[i] = (i % 2 ? 1.3 : 1.0) + 0.01 * gauss();
  zlb_cmp_verdict(a, N, b, N, &p, &s);
  assert_int_equal(s.verdict, ZLB_V_NOISY);
  assert_str_contains(s.why, "spread");
  /* a big change on few samples: not significant, noisy */
  {
    double x[] = {1.0, 1.2, 0.9}, y[] = {1.25, 1.0, 1.4};
    zlb_cmp_verdict(x, 3, y, 3, &p, &s);
    assert_int_equal(s.verdict, ZLB_V_NOISY);
    zlb_cmp_verdict(x, 1, y, 3, &p, &s);
    assert_int_equal(s.verdict, ZLB_V_NA);
  }
  /* deterministic: the same interval twice */
  {
    zlb_cmp_stat_t s2;
    fill(b, N, 1.05, 0.0105);
    zlb_cmp_verdict(a, N, b, N, &p, &s);
    zlb_cmp_verdict(a, N, b, N, &p, &s2);
    assert_true(s.lo == s2.lo && s.hi == s2.hi);
  }
}

/* A results text with one operator, dtype float32, rows of `shapes`, the
 * candidate's samples around `ms`. */
static void results_text(zlb_strbuf_t *t, const char *op, const char *cand, const char **shapes,
                         int nshapes, double ms, const char *status) {
  zlb_strbuf_addf(t, "{\"schema\":\"zlbench.results/1\",\"operator\":\"%s\",\"family\":\"fam\","
                     "\"tables\":[{\"dtype\":\"float32\",\"rows\":[",
                  op);
  for (int i = 0; i < nshapes; i++) {
    zlb_strbuf_addf(t, "%s{\"status\":\"%s\",\"shape\":\"%s\",\"detail\":\"%s\","
                       "\"baseline\":{\"impl\":\"ref\",\"ms\":1,\"samples\":[1,1,1,1]},"
                       "\"candidate\":{\"impl\":\"%s\",\"ms\":%g,\"samples\":[",
                    i ? "," : "", status, shapes[i], shapes[i], cand, ms);
    for (int k = 0; k < 40; k++)
      zlb_strbuf_addf(t, "%s%.6f", k ? "," : "", ms * (1 + 0.001 * (k % 7)));
    zlb_strbuf_addstr(t, "]}}");
  }
  zlb_strbuf_addstr(t, "]}]}");
}

static void add(zlb_res_set_t *s, const char *op, const char *cand, const char **shapes, int n,
                double ms, const char *status, const zlb_caliber_t *cal) {
  zlb_strbuf_t t = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  results_text(&t, op, cand, shapes, n, ms, status);
  assert_int_equal(zlb_res_parse(s, t.buf, t.len, op, cal, &err), 0);
  zlb_strbuf_release(&t);
}

/* One operator, one row [64]: the candidate's samples around `ms`, its
 * marker, and its trials' values `trials` (n of them; no member when n is
 * 0). */
static void add_row(zlb_res_set_t *s, const char *op, double ms, const char *marker,
                    const double *trials, int n) {
  zlb_strbuf_t t = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_addf(&t, "{\"schema\":\"zlbench.results/1\",\"operator\":\"%s\",\"family\":\"fam\","
                      "\"tables\":[{\"dtype\":\"float32\",\"rows\":[{\"status\":\"SUCCESS\","
                      "\"shape\":\"[64]\",\"detail\":\"[64]\",\"marker\":\"%s\","
                      "\"baseline\":{\"impl\":\"ref\",\"ms\":1,\"samples\":[1,1,1,1]},"
                      "\"candidate\":{\"impl\":\"zlb\",\"ms\":%g,",
                  op, marker, ms);
  if (n) {
    zlb_strbuf_addstr(&t, "\"trials\":[");
    for (int k = 0; k < n; k++)
      zlb_strbuf_addf(&t, "%s%.6f", k ? "," : "", trials[k]);
    zlb_strbuf_addstr(&t, "],");
  }
  zlb_strbuf_addstr(&t, "\"samples\":[");
  for (int k = 0; k < 40; k++)
    zlb_strbuf_addf(&t, "%s%.6f", k ? "," : "", ms * (1 + 0.001 * (k % 7)));
  zlb_strbuf_addstr(&t, "]}}]}]}");
  assert_int_equal(zlb_res_parse(s, t.buf, t.len, op, NULL, &err), 0);
  zlb_strbuf_release(&t);
}

static void add_marked(zlb_res_set_t *s, const char *op, double ms, const char *marker) {
  add_row(s, op, ms, marker, NULL, 0);
}

/* A row measured with throttled clocks on either side: a change counts
 * only beyond throttled_threshold (50 %); elsewhere the usual rule. */
static void test_throttled_rows(void **state) {
  zlb_res_set_t a = ZLB_RES_SET_INIT, b = ZLB_RES_SET_INIT;
  zlb_cmp_params_t p = ZLB_CMP_PARAMS_INIT;
  zlb_cmp_t c;
  (void)state;
  add_marked(&a, "bmm", 1.0, "throttled(sw_power_cap)");
  add_marked(&b, "bmm", 1.2, "throttled(sw_power_cap)");      /* +20 %: noisy */
  add_marked(&a, "softmax", 1.0, "-");
  add_marked(&b, "softmax", 2.0, "throttled(sw_power_cap)");  /* +100 %: slower */
  add_marked(&a, "mv", 1.0, "-");
  add_marked(&b, "mv", 1.2, "-");                             /* +20 %, not throttled: slower */
  zlb_cmp_run(&c, &a, &b, ZLB_CMP_CANDIDATE, &p);
  assert_int_equal(c.count[ZLB_V_SLOWER], 2);
  assert_int_equal(c.count[ZLB_V_NOISY], 1);
  for (size_t i = 0; i < c.n; i++) {
    const char *op = c.pairs[i].a->op;
    if (!strcmp(op, "bmm")) {
      assert_int_equal(c.pairs[i].st.verdict, ZLB_V_NOISY);
      assert_str_contains(c.pairs[i].st.why, "throttled clocks in A and B");
    } else {
      assert_int_equal(c.pairs[i].st.verdict, ZLB_V_SLOWER);
    }
  }
  zlb_cmp_release(&c);
  /* With the throttled threshold at the usual one, bmm is slower too. */
  p.throttled_threshold = p.threshold;
  zlb_cmp_run(&c, &a, &b, ZLB_CMP_CANDIDATE, &p);
  assert_int_equal(c.count[ZLB_V_SLOWER], 3);
  zlb_cmp_release(&c);
  zlb_res_release(&a);
  zlb_res_release(&b);
}

static void add_trials(zlb_res_set_t *s, const char *op, double ms, const double *trials,
                       int n) {
  add_row(s, op, ms, "-", trials, n);
}

/* Trials on fresh tensors: a change within the spread of either side's
 * trial values is "noisy" (where the data lay), beyond it the usual rule;
 * without trials, the same samples give "slower". */
static void test_trial_spread(void **state) {
  zlb_res_set_t a = ZLB_RES_SET_INIT, b = ZLB_RES_SET_INIT;
  zlb_cmp_params_t p = ZLB_CMP_PARAMS_INIT;
  zlb_cmp_t c;
  const double ta[] = {1.0, 1.04, 1.09}, tb[] = {1.05, 1.05, 1.06}, tc[] = {1.0, 1.01, 1.0},
               td[] = {1.2, 1.21, 1.2};
  (void)state;
  add_trials(&a, "bmm", 1.0, ta, 3);
  add_trials(&b, "bmm", 1.05, tb, 3); /* +5 %, A's trials spread 8.7 %: noisy */
  add_trials(&a, "softmax", 1.0, tc, 3);
  add_trials(&b, "softmax", 1.2, td, 3); /* +20 %, trials within 1 %: slower */
  add_trials(&a, "mv", 1.0, NULL, 0);
  add_trials(&b, "mv", 1.05, NULL, 0); /* +5 %, no trials: slower */
  zlb_cmp_run(&c, &a, &b, ZLB_CMP_CANDIDATE, &p);
  assert_int_equal(c.count[ZLB_V_SLOWER], 2);
  assert_int_equal(c.count[ZLB_V_NOISY], 1);
  for (size_t i = 0; i < c.n; i++) {
    if (!strcmp(c.pairs[i].a->op, "bmm")) {
      assert_int_equal(c.pairs[i].st.verdict, ZLB_V_NOISY);
      assert_str_contains(c.pairs[i].st.why, "within the trials' spread 8.7%");
    } else {
      assert_int_equal(c.pairs[i].st.verdict, ZLB_V_SLOWER);
    }
  }
  assert_int_equal(a.rows[0].ntrials[1], 3);
  assert_true(fabs(a.rows[0].trials[1][2] - 1.09) < 1e-9);
  assert_int_equal(a.rows[2].ntrials[1], 0);
  {
    /* The text output points at --trials for the one row without them. */
    zlb_strbuf_t o = ZLB_STRBUF_INIT;
    zlb_cmp_format(&c, ZLB_FMT_TEXT, "A", "B", 0, &o);
    assert_str_contains(o.buf, "note: 1 slower or faster row was measured in one trial");
    zlb_strbuf_release(&o);
  }
  zlb_cmp_release(&c);
  zlb_res_release(&a);
  zlb_res_release(&b);
}

/* Trials that are not times, or too many of them, are refused. */
static void test_bad_trials(void **state) {
  static const char *const bad[] = {
      "[1,\"x\"]", "[1,-1]", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "{}",
  };
  (void)state;
  /* A trial without a value (null, as a failed row writes none) is skipped. */
  {
    zlb_res_set_t s = ZLB_RES_SET_INIT;
    zlb_error_t err = ZLB_ERROR_INIT;
    const char *t = "{\"schema\":\"zlbench.results/1\",\"operator\":\"op\",\"family\":\"f\","
                    "\"tables\":[{\"dtype\":\"float32\",\"rows\":[{\"status\":\"SUCCESS\","
                    "\"shape\":\"[64]\",\"baseline\":{\"impl\":\"ref\",\"samples\":[1]},"
                    "\"candidate\":{\"impl\":\"zlb\",\"samples\":[1],\"trials\":[1,null]}}]}]}";
    assert_int_equal(zlb_res_parse(&s, t, strlen(t), "null.json", NULL, &err), 0);
    assert_int_equal(s.rows[0].ntrials[1], 1);
    zlb_res_release(&s);
  }
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    zlb_res_set_t s = ZLB_RES_SET_INIT;
    zlb_error_t err = ZLB_ERROR_INIT;
    zlb_strbuf_t t = ZLB_STRBUF_INIT;
    zlb_strbuf_addf(&t, "{\"schema\":\"zlbench.results/1\",\"operator\":\"op\",\"family\":\"f\","
                        "\"tables\":[{\"dtype\":\"float32\",\"rows\":[{\"status\":\"SUCCESS\","
                        "\"shape\":\"[64]\",\"baseline\":{\"impl\":\"ref\",\"samples\":[1]},"
                        "\"candidate\":{\"impl\":\"zlb\",\"samples\":[1],\"trials\":%s}}]}]}",
                    bad[i]);
    assert_int_equal(zlb_res_parse(&s, t.buf, t.len, "bad.json", NULL, &err), ZLB_EPARSE);
    assert_str_contains(err.msg, "trial");
    zlb_strbuf_release(&t);
    zlb_res_release(&s);
  }
}

static void test_matching_and_formats(void **state) {
  (void)state;
  zlb_res_set_t a = ZLB_RES_SET_INIT, b = ZLB_RES_SET_INIT;
  zlb_cmp_params_t p = ZLB_CMP_PARAMS_INIT;
  zlb_cmp_t c;
  zlb_strbuf_t o = ZLB_STRBUF_INIT;
  const char *s3[] = {"[64]", "[128]", "[256]"}, *s2[] = {"[64]", "[512]"};
  add(&a, "add", "zlb", s3, 3, 1.0, "SUCCESS", NULL);
  add(&b, "add", "zlb", s2, 2, 1.2, "SUCCESS", NULL);
  add(&a, "mul", "zlb", s2, 1, 1.0, "SUCCESS", NULL);
  add(&b, "mul", "other", s2, 1, 1.0, "SUCCESS", NULL); /* another implementation */
  add(&a, "sub", "zlb", s2, 1, 1.0, "FAILED", NULL);
  add(&b, "sub", "zlb", s2, 1, 1.0, "SUCCESS", NULL);
  zlb_cmp_run(&c, &a, &b, ZLB_CMP_CANDIDATE, &p);
  assert_int_equal(c.nmatched, 2); /* add [64], sub [64] */
  assert_int_equal(c.count[ZLB_V_SLOWER], 1);
  assert_int_equal(c.count[ZLB_V_NA], 1);
  assert_int_equal(c.n, 2 + 3 + 2); /* unmatched: add 128, 256, mul/zlb; add 512, mul/other */
  assert_int_equal(c.pairs[0].st.verdict, ZLB_V_SLOWER); /* regressions first */
  assert_string_equal(c.pairs[0].a->op, "add");
  assert_true(fabs(c.pairs[0].st.ratio - 1.2) < 1e-9);
  assert_int_equal(c.caliber_diff, 0);
  assert_int_equal(c.nmeans[0], 1);
  assert_true(fabs(c.means[0][0].gmean - 1.2) < 1e-9);

  zlb_cmp_format(&c, ZLB_FMT_TEXT, "A", "B", 0, &o);
  assert_str_contains(o.buf, "slower  add");
  assert_str_contains(o.buf, "+20.0%");
  assert_str_contains(o.buf, "only-A  add");
  assert_str_contains(o.buf, "only-B  mul");
  assert_str_contains(o.buf, "FAILED in A");
  assert_str_contains(o.buf, "2 compared: 1 slower, 0 faster, 0 same, 0 noisy, 1 n/a; 3 only in A, 2 only in B");
  assert_null(strstr(o.buf, "\033["));
  zlb_strbuf_reset(&o);
  zlb_cmp_format(&c, ZLB_FMT_TEXT, "A", "B", 1, &o);
  assert_str_contains(o.buf, "\033[31mslower \033[0m");
  zlb_strbuf_reset(&o);
  zlb_cmp_format(&c, ZLB_FMT_MD, "A|x", "B", 0, &o);
  assert_str_contains(o.buf, "| **slower** | add | float32 | \\[64\\] | 1.003000 | 1.203600 | +20.0% |");
  assert_str_contains(o.buf, "A: A\\|x");
  assert_str_contains(o.buf, "|---|");
  zlb_strbuf_reset(&o);
  zlb_cmp_format(&c, ZLB_FMT_CSV, "A", "B", 0, &o);
  assert_true(zlb_starts_with(o.buf, "verdict,operator,family,dtype,shape,impl,a,b,ratio,"));
  assert_str_contains(o.buf, "\nslower,add,fam,float32,[64],candidate,1.003000,1.203600,1.200000,");
  assert_str_contains(o.buf, "\nunmatched,add,fam,float32,[512],candidate,,,,,,,,0,0,b,only in B,,,\n");
  zlb_strbuf_reset(&o);
  zlb_cmp_format(&c, ZLB_FMT_JSON, "A", "B", 0, &o);
  assert_str_contains(o.buf, "\"schema\": \"zlbench.compare/1\"");
  assert_str_contains(o.buf, "\"slower\": 1");
  assert_str_contains(o.buf, "\"side\": \"a\"");
  zlb_cmp_release(&c);

  /* --impl baseline: baselines are equal, same */
  zlb_cmp_run(&c, &a, &b, ZLB_CMP_BASELINE, &p);
  assert_int_equal(c.count[ZLB_V_SLOWER], 0);
  zlb_cmp_release(&c);
  /* --impl speedup: candidate 20 % slower over an equal baseline */
  zlb_cmp_run(&c, &a, &b, ZLB_CMP_SPEEDUP, &p);
  assert_int_equal(c.count[ZLB_V_SLOWER], 1);
  zlb_cmp_release(&c);
  zlb_res_release(&a);
  zlb_res_release(&b);
  zlb_strbuf_release(&o);
}

static void test_caliber(void **state) {
  (void)state;
  const char *id_a =
      "{\"tool\":{\"version\":\"0.1.0\"},\"backend\":{\"name\":\"cuda\"},"
      "\"device\":{\"name\":\"H200\"},\"caliber\":{\"timer\":\"graph\",\"autotune\":\"off\","
      "\"return_mode\":\"median\",\"l2\":{\"direct\":\"flush\",\"flush_bytes\":8388608}}}";
  const char *id_b =
      "{\"tool\":{\"version\":\"0.2.5\"},\"backend\":{\"name\":\"cuda\"},"
      "\"device\":{\"name\":\"H200\"},\"caliber\":{\"timer\":\"graph\",\"autotune\":\"on\","
      "\"return_mode\":\"median\",\"l2\":{\"direct\":\"flush\",\"flush_bytes\":8388608}}}";
  zlb_caliber_t ca, cb;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_res_set_t a = ZLB_RES_SET_INIT, b = ZLB_RES_SET_INIT;
  zlb_cmp_params_t p = ZLB_CMP_PARAMS_INIT;
  zlb_cmp_t c;
  const char *s1[] = {"[64]"};
  assert_int_equal(zlb_caliber_parse(id_a, strlen(id_a), "a", &ca, &err), 0);
  assert_int_equal(zlb_caliber_parse(id_b, strlen(id_b), "b", &cb, &err), 0);
  assert_string_equal(ca.v[ZLB_CAL_TOOL_MAJOR], "0");
  assert_string_equal(ca.v[ZLB_CAL_L2], "flush:8388608");
  {
    /* --l2 cold is a caliber of its own; warm reads as an identity from
     * before the option (no graph/queue mode suffix). */
    const char *id_cold =
        "{\"caliber\":{\"l2\":{\"direct\":\"flush\",\"flush_bytes\":8388608,"
        "\"graph\":\"cold\",\"queue\":\"cold\"},\"l2_mode\":\"cold\"}}";
    const char *id_warm =
        "{\"caliber\":{\"l2\":{\"direct\":\"flush\",\"flush_bytes\":8388608,"
        "\"graph\":\"warm\",\"queue\":\"warm\"},\"l2_mode\":\"warm\"}}";
    zlb_caliber_t cc;
    assert_int_equal(zlb_caliber_parse(id_cold, strlen(id_cold), "c", &cc, &err), 0);
    assert_string_equal(cc.v[ZLB_CAL_L2], "flush:8388608,graph/queue:cold");
    assert_int_equal(zlb_caliber_parse(id_warm, strlen(id_warm), "w", &cc, &err), 0);
    assert_string_equal(cc.v[ZLB_CAL_L2], ca.v[ZLB_CAL_L2]);
  }
  add(&a, "add", "zlb", s1, 1, 1.0, "SUCCESS", &ca);
  add(&b, "add", "zlb", s1, 1, 1.0, "SUCCESS", &cb);
  zlb_cmp_run(&c, &a, &b, ZLB_CMP_CANDIDATE, &p);
  /* minor versions differ (same major), autotune differs */
  assert_int_equal(c.caliber_diff, 1u << ZLB_CAL_AUTOTUNE);
  assert_string_equal(c.caliber_a[ZLB_CAL_AUTOTUNE], "off");
  assert_string_equal(c.caliber_b[ZLB_CAL_AUTOTUNE], "on");
  zlb_cmp_release(&c);
  /* same identity: no difference; another device: differs */
  zlb_res_release(&b);
  strcpy(cb.v[ZLB_CAL_AUTOTUNE], "off");
  strcpy(cb.v[ZLB_CAL_DEVICE], "A100");
  add(&b, "add", "zlb", s1, 1, 1.0, "SUCCESS", &cb);
  zlb_cmp_run(&c, &a, &b, ZLB_CMP_CANDIDATE, &p);
  assert_int_equal(c.caliber_diff, 1u << ZLB_CAL_DEVICE);
  zlb_cmp_release(&c);
  zlb_res_release(&a);
  zlb_res_release(&b);
}

/* The FlagGems plugin's files: an identity naming backend and device as
 * strings, a results file whose second table names its own operator. */
static void test_plugin_files(void **state) {
  (void)state;
  const char *id = "{\"tool\":\"zlbench.pytest_plugin\",\"backend\":\"cuda\","
                   "\"device\":\"NVIDIA H200\",\"caliber\":{\"timer\":\"graph\"}}";
  const char *res =
      "{\"schema\":\"zlbench.results/1\",\"operator\":\"abs\",\"family\":\"flaggems\","
      "\"tables\":[{\"dtype\":\"float16\",\"rows\":[{\"status\":\"SUCCESS\","
      "\"shape\":\"[64, 64]\",\"baseline\":{\"impl\":\"torch\",\"ms\":1},"
      "\"candidate\":{\"impl\":\"gems\",\"ms\":2}}]},"
      "{\"dtype\":\"float16\",\"operator\":\"abs_\",\"rows\":[{\"status\":\"SUCCESS\","
      "\"shape\":\"[64, 64]\",\"baseline\":{\"impl\":\"torch\",\"ms\":1},"
      "\"candidate\":{\"impl\":\"gems\",\"ms\":3}}]}]}";
  const char *bad = "{\"schema\":\"zlbench.results/1\",\"operator\":\"abs\","
                    "\"tables\":[{\"dtype\":\"f\",\"operator\":7,\"rows\":[]}]}";
  zlb_caliber_t cal;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_res_set_t s = ZLB_RES_SET_INIT;
  assert_int_equal(zlb_caliber_parse(id, strlen(id), "id", &cal, &err), 0);
  assert_string_equal(cal.v[ZLB_CAL_BACKEND], "cuda");
  assert_string_equal(cal.v[ZLB_CAL_DEVICE], "NVIDIA H200");
  assert_string_equal(cal.v[ZLB_CAL_TIMER], "graph");
  assert_string_equal(cal.v[ZLB_CAL_TOOL_MAJOR], "");
  assert_int_equal(zlb_res_parse(&s, res, strlen(res), "r.json", &cal, &err), 0);
  assert_int_equal(s.n, 2);
  assert_string_equal(s.rows[0].op, "abs");
  assert_string_equal(s.rows[1].op, "abs_");
  assert_string_equal(s.rows[1].family, "flaggems");
  assert_string_equal(s.rows[1].impl[1], "gems");
  assert_true(s.rows[1].ms[1] == 3.0);
  zlb_res_release(&s);
  assert_int_not_equal(zlb_res_parse(&s, bad, strlen(bad), "bad.json", NULL, &err), 0);
  assert_non_null(strstr(err.msg, "'operator' has the wrong type"));
  zlb_res_release(&s);
}

static void test_bad_input(void **state) {
  (void)state;
  zlb_res_set_t s = ZLB_RES_SET_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  const char *bad[] = {
      "[]",
      "{\"schema\":\"other\"}",
      "{\"schema\":\"zlbench.results/1\",\"operator\":1,\"tables\":[]}",
      "{\"schema\":\"zlbench.results/1\",\"operator\":\"o\",\"tables\":[{\"dtype\":\"f\",\"rows\":[{\"status\":\"SUCCESS\",\"candidate\":{\"samples\":[\"x\"]},\"baseline\":{}}]}]}",
      "{\"schema\":\"zlbench.results/1\",\"operator\":\"o\",\"tables\":[{\"dtype\":\"f\",\"rows\":[{\"status\":\"SUCCESS\",\"candidate\":{\"samples\":[-1]},\"baseline\":{}}]}]}",
      "{\"schema\":\"zlbench.results/1\",\"operator\":\"o\",\"tables\":[{\"dtype\":\"f\",\"rows\":[{\"status\":\"SUCCESS\"}]}]}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    zlb_error_clear(&err);
    assert_int_not_equal(zlb_res_parse(&s, bad[i], strlen(bad[i]), "f.json", NULL, &err), 0);
    assert_str_contains(err.msg, "f.json");
  }
  zlb_res_release(&s);
}

/* Every string from results is escaped in the report; CSV fields split. */
static void test_html(void **state) {
  zlb_res_set_t a = ZLB_RES_SET_INIT;
  zlb_html_input_t in;
  zlb_strbuf_t o = ZLB_STRBUF_INIT;
  const char *evil[] = {"[1]</td><script>alert(1)</script>"};
  char line[] = "op,\"a \"\"q\"\", b\",,last\nnext";
  char *f[8], *next;
  (void)state;
  add(&a, "x<img src=y onerror=z>", "zlb", evil, 1, 1.0, "FAILED", NULL);
  memset(&in, 0, sizeof(in));
  in.dir = "d'\"<>&";
  in.res = &a;
  in.identity = "{\"a\": \"</pre><script>bad()</script>\"}";
  in.ops_status = "operator,status,attempts,dtype_level,backend,device,timer,seconds,"
                  "error_signature,failed_dtypes,note\n"
                  "bad<op>,crashed,1,1,test,0,,1,\"exit 9: <b>boom</b>, really\",,\n";
  zlb_html_report(&in, &o);
  assert_null(strstr(o.buf, "<img"));
  assert_null(strstr(o.buf, "<script>alert"));
  assert_null(strstr(o.buf, "<script>bad"));
  assert_null(strstr(o.buf, "<b>boom"));
  assert_str_contains(o.buf, "x&lt;img src=y onerror=z&gt;");
  assert_str_contains(o.buf, "d&#39;&quot;&lt;&gt;&amp;");
  assert_str_contains(o.buf, "exit 9: &lt;b&gt;boom&lt;/b&gt;, really");
  assert_str_contains(o.buf, "<tr class=\"failed-op\"><td>bad&lt;op&gt;</td>");
  /* exactly the page's two own scripts */
  {
    size_t n = 0;
    for (const char *p = o.buf; (p = strstr(p, "<script")); p++)
      n++;
    assert_int_equal(n, 2);
  }
  assert_int_equal(zlb_csv_split(line, f, 8, &next), 4);
  assert_string_equal(f[0], "op");
  assert_string_equal(f[1], "a \"q\", b");
  assert_string_equal(f[2], "");
  assert_string_equal(f[3], "last");
  assert_string_equal(next, "next");
  zlb_res_release(&a);
  zlb_strbuf_release(&o);
}

/* What untrusted strings become on a terminal and in a CSV cell. */
static void test_printable_and_csv_text(void **state) {
  static const struct {
    const char *in, *shown;
  } shown[] = {
      {"relu", "relu"},
      {"a\x1b[2Jb\x1b]0;t\x07", "a\\x1b[2Jb\\x1b]0;t\\x07"},
      {"[1]\nslower\r\tx\x7f", "[1]\\nslower\\r\\tx\\x7f"},
      {"\xc2\x9b" "2J", "\\xc2\\x9b2J"},             /* C1 CSI as UTF-8 */
      {"a\xe2\x80\xae" "b", "a\\xe2\\x80\\xaeb"},    /* right-to-left override */
      {"\xff\xc3", "\\xff\\xc3"},                    /* not UTF-8, cut short */
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},           /* overlong */
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
  };
  static const struct {
    const char *in, *cell;
  } cells[] = {
      {"plain", "plain"},
      {"-3.5", "-3.5"},
      {"+2e3", "+2e3"},
      {"=cmd|' /C calc'!A0", "\"'=cmd|' /C calc'!A0\""},
      {"=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""},
      {"@SUM(A1)", "\"'@SUM(A1)\""},
      {"+", "\"'+\""},
      {"-1+2", "\"'-1+2\""},
      {"\t=1", "\"'\t=1\""},
      {"\r=1", "\"'\r=1\""},
      {"a,b", "\"a,b\""},
      {"", ""},
  };
  zlb_strbuf_t o = ZLB_STRBUF_INIT;
  (void)state;
  for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
    assert_string_equal(zlb_printable(&o, shown[i].in), shown[i].shown);
  assert_string_equal(zlb_printable(&o, NULL), "");
  for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
    zlb_strbuf_reset(&o);
    zlb_strbuf_add_csv_text(&o, cells[i].in);
    assert_string_equal(o.buf, cells[i].cell);
  }
  zlb_strbuf_release(&o);
}

/* A results file whose operator and shape carry escapes and newlines:
 * every format shows them escaped, a CSV formula is quoted, and numbers
 * far beyond a table's width print short. */
static void test_hostile_strings(void **state) {
  static const char evil[] =
      "{\"schema\": \"zlbench.results/1\", \"operator\": \"=r\\u001b[2J|x\\u0007\","
      " \"tables\": [{\"dtype\": \"f32\", \"rows\": [{\"status\": \"SUCCESS\","
      " \"shape\": \"[1]\\nslower  y\", \"baseline\": {\"impl\": \"b\", \"samples\": [1e7, 1e7]},"
      " \"candidate\": {\"impl\": \"c\", \"samples\": [1e-300, 1e-300]}}]}]}";
  zlb_res_set_t a = ZLB_RES_SET_INIT, b = ZLB_RES_SET_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_cmp_params_t p = ZLB_CMP_PARAMS_INIT;
  zlb_cmp_t c;
  zlb_strbuf_t o = ZLB_STRBUF_INIT;
  (void)state;
  assert_int_equal(zlb_res_parse(&a, evil, strlen(evil), "a.json", NULL, &err), 0);
  assert_int_equal(zlb_res_parse(&b, evil, strlen(evil), "b.json", NULL, &err), 0);
  for (int impl = 0; impl < 3; impl += 2) {
    zlb_cmp_run(&c, &a, &b, (zlb_cmp_impl_t)impl, &p);
    for (int f = ZLB_FMT_TEXT; f <= ZLB_FMT_CSV; f++) {
      zlb_strbuf_reset(&o);
      zlb_cmp_format(&c, (zlb_cmp_format_t)f, "A\x1b[1A", "B", 0, &o);
      if (strchr(o.buf, '\x1b') || strchr(o.buf, '\x07'))
        fail_msg("format %d holds an ESC or BEL:\n%s", f, o.buf);
      if (strstr(o.buf, "\nslower  y"))
        fail_msg("format %d: a forged line:\n%s", f, o.buf);
      for (const char *q = o.buf; *q; q++)
        if (strspn(q, "0123456789") >= 30)
          fail_msg("format %d: a number of 30 digits or more:\n%s", f, o.buf);
      if (f == ZLB_FMT_MD)
        assert_non_null(strstr(o.buf, "| =r\\\\x1b\\[2J\\|x\\\\x07 |"));
      if (f == ZLB_FMT_CSV)
        assert_non_null(strstr(o.buf, ",\"'=r\\x1b[2J|x\\x07\","));
    }
    zlb_cmp_release(&c);
  }
  zlb_res_release(&a);
  zlb_res_release(&b);
  zlb_strbuf_release(&o);
}

/* Samples beyond ZLB_RES_MAX_MS (or negative) are refused, naming the row
 * and the member. */
static void test_sample_bounds(void **state) {
  static const char *const bad[] = {"1e308", "10000001", "-1"};
  zlb_strbuf_t t = ZLB_STRBUF_INIT;
  (void)state;
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    zlb_res_set_t s = ZLB_RES_SET_INIT;
    zlb_error_t err = ZLB_ERROR_INIT;
    zlb_strbuf_reset(&t);
    zlb_strbuf_addf(&t,
                    "{\"schema\": \"zlbench.results/1\", \"operator\": \"r\", \"tables\": "
                    "[{\"dtype\": \"f32\", \"rows\": [{\"status\": \"SUCCESS\", \"baseline\": "
                    "{\"samples\": [1]}, \"candidate\": {\"samples\": [1, %s]}}]}]}",
                    bad[i]);
    assert_int_equal(zlb_res_parse(&s, t.buf, t.len, "r.json", NULL, &err), ZLB_EPARSE);
    assert_string_equal(err.msg, "r.json: tables[0].rows[0]: candidate.samples[1] is not a "
                                 "time in ms (a number from 0 to 10000000)");
    zlb_res_release(&s);
  }
  zlb_strbuf_release(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utest_exact), cmocka_unit_test(test_utest_ties_normal),
      cmocka_unit_test(test_median_iqr),  cmocka_unit_test(test_verdicts),
      cmocka_unit_test(test_matching_and_formats), cmocka_unit_test(test_caliber),
      cmocka_unit_test(test_bad_input), cmocka_unit_test(test_plugin_files),
      cmocka_unit_test(test_html),
      cmocka_unit_test(test_throttled_rows), cmocka_unit_test(test_trial_spread),
      cmocka_unit_test(test_bad_trials),
      cmocka_unit_test(test_printable_and_csv_text), cmocka_unit_test(test_hostile_strings),
      cmocka_unit_test(test_sample_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
