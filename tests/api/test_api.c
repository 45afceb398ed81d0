/* The measurement API of libzlbench.so on the host backend, through the
 * public header only (it must stand alone): sessions, a measured callback,
 * the graph request where there are no graphs, quantiles and repeat,
 * callback errors and re-entry, option checking, and result keys. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "zlbench/api.h"

enum { EINVAL_ = ZLB_API_EINVAL, ENOTFOUND_ = ZLB_API_ENOTFOUND, EUNAVAIL_ = ZLB_API_EUNAVAIL,
       EUNSUPPORTED_ = ZLB_API_EUNSUPPORTED, EOP_ = ZLB_API_EOP, EINTR_ = ZLB_API_EINTR };

#define assert_str_contains(hay, needle)                                         \
  do {                                                                           \
    if (!strstr((hay), (needle)))                                                \
      fail_msg("'%s' does not contain '%s'", (hay), (needle));                   \
  } while (0)

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

struct work {
  double spin_us;
  int calls;
  int fail_at;        /* fail on this call (1-based), 0: never */
  int fail_code;      /* the code it fails with */
  int captures;
  zlb_session_t *reenter; /* measure again from inside the call */
};

static int spin(void *user, void *stream, zlb_api_error_t *err) {
  struct work *w = user;
  double until = now_us() + w->spin_us;
  (void)stream;
  w->calls++;
  if (w->fail_at && w->calls == w->fail_at) {
    err->code = w->fail_code;
    snprintf(err->msg, sizeof(err->msg), "boom at call %d", w->calls);
    return -1;
  }
  if (w->reenter) {
    zlb_result_t *r = NULL;
    zlb_measure_opts_t o;
    zlb_measure_opts_init(&o);
    if (zlb_measure(w->reenter, &o, spin, NULL, w, &r, err))
      return -1;
    zlb_result_free(r);
  }
  while (now_us() < until)
    ;
  return 0;
}

static int never_capture(void *user, int k, void *stream, void **graph, zlb_api_error_t *err) {
  struct work *w = user;
  (void)k;
  (void)stream;
  (void)graph;
  (void)err;
  w->captures++;
  return -1;
}

static zlb_session_t *host(void) {
  zlb_session_t *s = NULL;
  zlb_api_error_t e;
  if (zlb_session_open("host", 0, &s, &e))
    fail_msg("cannot open the host backend: %s", e.msg);
  return s;
}

static zlb_measure_opts_t quick(void) {
  zlb_measure_opts_t o;
  zlb_measure_opts_init(&o);
  o.warmup_ms = 1;
  o.rep_ms = 5;
  o.flush_bytes = 1 << 16;
  return o;
}

static double num(const zlb_result_t *r, const char *key) {
  double v = NAN;
  if (zlb_result_number(r, key, &v))
    fail_msg("result number '%s' missing", key);
  return v;
}

static const char *str(const zlb_result_t *r, const char *key) {
  const char *v = NULL;
  if (zlb_result_string(r, key, &v))
    fail_msg("result string '%s' missing", key);
  return v;
}

static void test_version_and_sessions(void **state) {
  zlb_session_t *s = NULL;
  zlb_api_error_t e;
  (void)state;
  assert_int_equal(zlb_api_version(), ZLB_API_VERSION);
  assert_string_equal(zlb_api_error_name(0), "ZLB_OK");
  assert_string_equal(zlb_api_error_name(EINVAL_), "ZLB_EINVAL");

  s = host();
  assert_string_equal(zlb_session_backend(s), "host");
  assert_int_equal(zlb_session_device(s), 0);
  assert_int_equal(zlb_session_has_graphs(s), 0);
  assert_non_null(zlb_session_stream(s));
  assert_true(strlen(zlb_session_device_name(s)) > 0);
  assert_int_equal(zlb_session_sync(s, &e), 0);
  zlb_session_close(s);
  zlb_session_close(NULL);

  /* "cpu" is the host backend's alias. */
  assert_int_equal(zlb_session_open("cpu", 0, &s, &e), 0);
  assert_string_equal(zlb_session_backend(s), "host");
  zlb_session_close(s);

  s = (zlb_session_t *)&e;
  assert_int_equal(zlb_session_open("no-such-backend", 0, &s, &e), ENOTFOUND_);
  assert_null(s);
  assert_str_contains(e.msg, "no-such-backend");
  assert_int_equal(zlb_session_open("host", 1, &s, &e), EUNAVAIL_);
  assert_str_contains(e.msg, "device 1");
  assert_int_equal(zlb_session_open("host", -1, &s, &e), EINVAL_);
  assert_int_equal(zlb_session_open("host", 0, NULL, &e), EINVAL_);
  /* The error object is optional. */
  assert_int_equal(zlb_session_open("no-such-backend", 0, &s, NULL), ENOTFOUND_);
}

static void test_measure_direct(void **state) {
  zlb_session_t *s = host();
  struct work w = {.spin_us = 100};
  zlb_measure_opts_t o = quick();
  zlb_result_t *r = NULL;
  zlb_api_error_t e;
  const double *v;
  size_t n;
  double sum = 0;
  (void)state;
  o.return_mode = ZLB_API_RET_MEAN;
  assert_int_equal(zlb_measure(s, &o, spin, never_capture, &w, &r, &e), 0);
  assert_non_null(r);
  assert_string_equal(str(r, "timer"), "direct");
  assert_string_equal(str(r, "marker"), "-");
  assert_string_equal(str(r, "verdict"), "none");
  assert_string_equal(str(r, "fallback_phase"), "");
  assert_string_equal(str(r, "backend"), "host");
  /* No graphs on the host: the hook is never asked. */
  assert_int_equal(w.captures, 0);
  /* 100 us of spinning per call, measured on the host clock. */
  assert_true(num(r, "value_ms") > 0.09 && num(r, "value_ms") < 5.0);
  assert_int_equal(zlb_result_array(r, "samples", &v, &n), 0);
  assert_true(n >= 1 && (double)n == num(r, "nsamples"));
  for (size_t i = 0; i < n; i++)
    sum += v[i];
  /* The value is the mean of the samples (return mode mean). */
  assert_true(fabs(sum / (double)n - num(r, "value_ms")) < 1e-9);
  /* Estimate, warm-up and samples: more calls than samples. */
  assert_true(w.calls > (int)n);
  assert_true(num(r, "wall_s") > 0);
  assert_int_equal(num(r, "graph_launches"), 0);
  /* The host has no clocks: unknown, not zero. */
  assert_int_equal(num(r, "clocks_before.sm_mhz"), -1);
  assert_int_equal(num(r, "throttled"), 0);
  zlb_result_free(r);
  zlb_session_close(s);
}

static void test_graph_request_without_graphs(void **state) {
  zlb_session_t *s = host();
  struct work w = {.spin_us = 20};
  zlb_measure_opts_t o = quick();
  zlb_result_t *r = NULL;
  zlb_api_error_t e;
  (void)state;
  o.timer = ZLB_API_TIMER_GRAPH;
  o.repeat = 3;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), 0);
  assert_string_equal(str(r, "timer"), "direct");
  assert_string_equal(str(r, "marker"), "fallback(phase=capture,reason=ZLB_EUNSUPPORTED,repeat=3)");
  assert_string_equal(str(r, "verdict"), "refused");
  assert_string_equal(str(r, "fallback_phase"), "capture");
  assert_string_equal(str(r, "fallback_reason"), "ZLB_EUNSUPPORTED");
  assert_str_contains(str(r, "fallback_error"), "no graphs");
  assert_int_equal(num(r, "fallback_repeat"), 3);
  {
    const double *v;
    size_t n;
    assert_int_equal(zlb_result_array(r, "call_values", &v, &n), 0);
    assert_int_equal(n, 3);
  }
  zlb_result_free(r);

  /* Auto on the host is plain direct timing, no marker. */
  o.timer = ZLB_API_TIMER_AUTO;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), 0);
  assert_string_equal(str(r, "marker"), "-");
  assert_int_equal(num(r, "fallback_repeat"), 0);
  zlb_result_free(r);

  /* The CUPTI timer needs a tracer. */
  o.timer = ZLB_API_TIMER_CUPTI;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), EUNSUPPORTED_);
  assert_null(r);
  assert_str_contains(e.msg, "tracer");
  zlb_session_close(s);
}

static void test_quantiles_and_repeat_note(void **state) {
  zlb_session_t *s = host();
  struct work w = {.spin_us = 20};
  zlb_measure_opts_t o = quick();
  zlb_result_t *r = NULL;
  zlb_api_error_t e;
  const double *q, *v;
  size_t nq, n;
  (void)state;
  o.nquantiles = 3;
  o.quantiles[0] = 0.0;
  o.quantiles[1] = 0.5;
  o.quantiles[2] = 1.0;
  o.repeat = 4;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), 0);
  assert_int_equal(zlb_result_array(r, "quantiles", &q, &nq), 0);
  assert_int_equal(nq, 3);
  assert_int_equal(zlb_result_array(r, "samples", &v, &n), 0);
  /* q = 0 and q = 1 are the extremes of the samples. */
  {
    double lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
      lo = fmin(lo, v[i]);
      hi = fmax(hi, v[i]);
    }
    assert_true(q[0] == lo && q[2] == hi && q[0] <= q[1] && q[1] <= q[2]);
  }
  /* Repeat is skipped for quantiles, visibly. */
  assert_str_contains(str(r, "note"), "repeat=4 skipped");
  zlb_result_free(r);
  zlb_session_close(s);
}

static void test_callback_errors(void **state) {
  zlb_session_t *s = host();
  struct work w = {.spin_us = 5, .fail_at = 3, .fail_code = 0};
  zlb_measure_opts_t o = quick();
  zlb_result_t *r = (zlb_result_t *)&w;
  zlb_api_error_t e;
  (void)state;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), EOP_);
  assert_null(r);
  assert_str_contains(e.msg, "boom at call 3");
  /* The measurement stopped at the failing call. */
  assert_int_equal(w.calls, 3);

  /* A callback's own ZLB code comes back as is. */
  w.calls = 0;
  w.fail_code = EINTR_;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), EINTR_);
  assert_int_equal(e.code, EINTR_);

  /* An engine-internal code (-991, a refused capture inside the engine) is
   * not the callback's to give: it comes back as EOP, the measurement
   * stops, and nothing falls back and calls again. */
  w.calls = 0;
  w.fail_code = -991;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), EOP_);
  assert_int_equal(e.code, EOP_);
  assert_int_equal(w.calls, 3);
  assert_str_contains(e.msg, "boom at call 3");

  /* The session works after a failed measurement. */
  w.fail_at = 0;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), 0);
  zlb_result_free(r);

  /* Measuring from inside a measured call is refused, not deadlocked. */
  w.calls = 0;
  w.reenter = s;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), EINVAL_);
  assert_str_contains(e.msg, "already measuring");
  w.reenter = NULL;
  assert_int_equal(zlb_measure(s, NULL, spin, NULL, &w, &r, &e), 0);
  zlb_result_free(r);

  assert_int_equal(zlb_measure(NULL, &o, spin, NULL, &w, &r, &e), EINVAL_);
  assert_int_equal(zlb_measure(s, &o, NULL, NULL, &w, &r, &e), EINVAL_);
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, NULL, &e), EINVAL_);
  zlb_session_close(s);
}

static void expect_bad(zlb_session_t *s, zlb_measure_opts_t *o, const char *what) {
  struct work w = {.spin_us = 1};
  zlb_result_t *r = NULL;
  zlb_api_error_t e;
  assert_int_equal(zlb_measure(s, o, spin, NULL, &w, &r, &e), EINVAL_);
  assert_str_contains(e.msg, what);
  /* Refused before any call. */
  assert_int_equal(w.calls, 0);
}

static void test_option_checks(void **state) {
  zlb_session_t *s = host();
  zlb_measure_opts_t o;
  struct {
    zlb_measure_opts_t o;
    double newer_field;
  } big;
  zlb_result_t *r = NULL;
  zlb_api_error_t e;
  struct work w = {.spin_us = 1};
  (void)state;
  o = quick();
  o.struct_size = 0;
  expect_bad(s, &o, "struct_size");
  o = quick();
  o.rep_ms = -1;
  expect_bad(s, &o, "rep_ms");
  o = quick();
  o.warmup_ms = NAN;
  expect_bad(s, &o, "warmup_ms");
  o = quick();
  o.timer = 7;
  expect_bad(s, &o, "timer");
  o = quick();
  o.return_mode = -1;
  expect_bad(s, &o, "return_mode");
  o = quick();
  o.nquantiles = 9;
  expect_bad(s, &o, "nquantiles");
  o = quick();
  o.nquantiles = 1;
  o.quantiles[0] = 1.5;
  expect_bad(s, &o, "quantile");
  o = quick();
  o.repeat = 0;
  expect_bad(s, &o, "repeat");
  o = quick();
  o.graph_max_launches = 0;
  expect_bad(s, &o, "graph_max_launches");
  o = quick();
  o.counts = 2;
  expect_bad(s, &o, "counts");
  /* Triton's counts are accepted (the host has no graphs: direct timing,
   * whose counts are Triton's anyway). */
  o = quick();
  o.counts = ZLB_API_COUNTS_TRITON;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), 0);
  assert_true(num(r, "value_ms") > 0);
  zlb_result_free(r);
  r = NULL;

  /* A version 1.0 caller's struct ends at trace_max_samples: still read,
   * with the fields after it (counts) at their defaults. */
  o = quick();
  o.struct_size = offsetof(zlb_measure_opts_t, trace_max_samples) + sizeof(int);
  o.counts = 2; /* beyond its struct_size: not read */
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), 0);
  zlb_result_free(r);
  r = NULL;

  /* A newer caller's struct: unknown fields must be zero. */
  memset(&big, 0, sizeof(big));
  big.o = quick();
  big.o.struct_size = sizeof(big);
  assert_int_equal(zlb_measure(s, &big.o, spin, NULL, &w, &r, &e), 0);
  zlb_result_free(r);
  big.newer_field = 1;
  expect_bad(s, &big.o, "does not know");
  /* A newer field may sit where this version has trailing padding (after
   * its last field, before sizeof): it is refused too, not ignored. */
  {
    size_t end = offsetof(zlb_measure_opts_t, counts) + sizeof(int);
    memset(&big, 0, sizeof(big));
    big.o = quick();
    big.o.struct_size = sizeof(big);
    assert_true(end < sizeof(big));
    ((unsigned char *)&big)[end] = 1;
    expect_bad(s, &big.o, "does not know");
  }
  zlb_session_close(s);
}

/* API 1.3: `zlbench ab`'s verdict for block times the caller measured. */
static void test_ab_verdict(void **state) {
  double a[65], b[65], fa[8], fb[8];
  zlb_api_ab_t out;
  zlb_api_error_t e;
  (void)state;
  for (int i = 0; i < 65; i++)
    a[i] = b[i] = 1.0;
  memset(&out, 0, sizeof(out));
  out.struct_size = sizeof(out);
  /* B 10 % slower in every pair: slower; the swap: faster. */
  for (int i = 0; i < 8; i++)
    b[i] = 1.1;
  assert_int_equal(zlb_ab_verdict(a, b, NULL, NULL, 8, 0.02, &out, &e), 0);
  assert_int_equal(out.verdict, ZLB_API_AB_SLOWER);
  assert_string_equal(out.verdict_name, "slower");
  assert_int_equal((int)out.pairs, 8);
  assert_true(fabs(out.ratio - 1.1) < 1e-12 && fabs(out.lo - 1.1) < 1e-12);
  assert_true(fabs(out.a_ms - 1.0) < 1e-12 && fabs(out.b_ms - 1.1) < 1e-12);
  assert_int_equal(zlb_ab_verdict(b, a, NULL, NULL, 8, 0.02, &out, &e), 0);
  assert_int_equal(out.verdict, ZLB_API_AB_FASTER);
  /* One disturbed pair of 8 moves neither the estimate nor the interval. */
  for (int i = 0; i < 8; i++)
    b[i] = 1.0 + 0.001 * (i % 3);
  b[5] = 3.0;
  assert_int_equal(zlb_ab_verdict(a, b, NULL, NULL, 8, 0.02, &out, &e), 0);
  assert_int_equal(out.verdict, ZLB_API_AB_SAME);
  /* The same cycles at a 10 % higher clock on B: 10 % less time, the
   * same once normalised. */
  for (int i = 0; i < 8; i++) {
    b[i] = 1.0 / 1.1;
    fa[i] = 1000;
    fb[i] = 1100;
  }
  assert_int_equal(zlb_ab_verdict(a, b, NULL, NULL, 8, 0.02, &out, &e), 0);
  assert_int_equal(out.verdict, ZLB_API_AB_FASTER);
  assert_int_equal(zlb_ab_verdict(a, b, fa, fb, 8, 0.02, &out, &e), 0);
  assert_int_equal(out.verdict, ZLB_API_AB_SAME);
  assert_int_equal(out.normalised, 8);
  /* A pair with an unusable time is left out; under 5 pairs: ambiguous,
   * no interval. */
  b[0] = NAN;
  b[1] = 0;
  b[2] = -1;
  b[3] = INFINITY;
  assert_int_equal(zlb_ab_verdict(a, b, NULL, NULL, 8, 0.02, &out, &e), 0);
  assert_int_equal((int)out.pairs, 4);
  assert_int_equal(out.verdict, ZLB_API_AB_AMBIGUOUS);
  assert_true(isnan(out.lo) && isnan(out.hi));
  /* Refused: too many pairs, the threshold outside (0, 0.5] (the
   * command's range), one clock array, a negative clock, a NULL array, a
   * struct older than 1.3's. */
  assert_int_equal(zlb_ab_verdict(a, a, NULL, NULL, 65, 0.02, &out, &e), EINVAL_);
  assert_non_null(strstr(e.msg, "65 pairs"));
  assert_int_equal(zlb_ab_verdict(a, a, NULL, NULL, 64, 0.02, &out, &e), 0);
  assert_int_equal(zlb_ab_verdict(a, a, NULL, NULL, 8, 0, &out, &e), EINVAL_);
  assert_int_equal(zlb_ab_verdict(a, a, NULL, NULL, 8, 0.51, &out, &e), EINVAL_);
  assert_int_equal(zlb_ab_verdict(a, a, NULL, NULL, 8, NAN, &out, &e), EINVAL_);
  assert_int_equal(zlb_ab_verdict(a, a, NULL, NULL, 8, 0.5, &out, &e), 0);
  assert_int_equal(zlb_ab_verdict(a, a, fa, NULL, 8, 0.02, &out, &e), EINVAL_);
  fa[3] = -5;
  assert_int_equal(zlb_ab_verdict(a, a, fa, fb, 8, 0.02, &out, &e), EINVAL_);
  assert_int_equal(zlb_ab_verdict(NULL, a, NULL, NULL, 8, 0.02, &out, &e), EINVAL_);
  assert_int_equal(zlb_ab_verdict(a, a, NULL, NULL, 8, 0.02, NULL, &e), EINVAL_);
  out.struct_size = offsetof(zlb_api_ab_t, hi);
  assert_int_equal(zlb_ab_verdict(a, a, NULL, NULL, 8, 0.02, &out, &e), EINVAL_);
  /* A newer caller's larger struct: nothing written past this version's. */
  {
    unsigned char big[sizeof(zlb_api_ab_t) + 16];
    zlb_api_ab_t *p = (zlb_api_ab_t *)(void *)big;
    memset(big, 0xA5, sizeof(big));
    p->struct_size = sizeof(big);
    assert_int_equal(zlb_ab_verdict(a, a, NULL, NULL, 8, 0.02, p, &e), 0);
    assert_int_equal(p->verdict, ZLB_API_AB_SAME);
    for (size_t i = sizeof(zlb_api_ab_t); i < sizeof(big); i++)
      assert_int_equal(big[i], 0xA5);
  }
}

static void test_result_keys(void **state) {
  zlb_session_t *s = host();
  struct work w = {.spin_us = 10};
  zlb_measure_opts_t o = quick();
  zlb_result_t *r = NULL;
  zlb_api_error_t e;
  char kind = 0;
  const char *name;
  size_t i, nkeys = 0;
  (void)state;
  o.stop = ZLB_API_STOP_NOISE;
  o.timeout_ms = 20;
  assert_int_equal(zlb_measure(s, &o, spin, NULL, &w, &r, &e), 0);
  for (i = 0; (name = zlb_result_key(i, &kind)); i++, nkeys++) {
    double d;
    const char *sv;
    const double *v;
    size_t n;
    switch (kind) {
    case 'n': assert_int_equal(zlb_result_number(r, name, &d), 0); break;
    case 's': assert_int_equal(zlb_result_string(r, name, &sv), 0); assert_non_null(sv); break;
    case 'a': assert_int_equal(zlb_result_array(r, name, &v, &n), 0); break;
    default: fail_msg("key '%s' has kind '%c'", name, kind);
    }
  }
  assert_true(nkeys >= 30);
  {
    double d = num(r, "noise_met");
    assert_true(d == 0 || d == 1);
    /* API 1.1: the sampling's share of the wall time; no refused attempt. */
    assert_true(num(r, "sample_s") > 0 && num(r, "sample_s") <= num(r, "wall_s"));
    assert_true(num(r, "attempt_s") == 0);
  }
  {
    double d;
    const char *sv;
    assert_int_equal(zlb_result_number(r, "no_such_key", &d), ENOTFOUND_);
    assert_int_equal(zlb_result_string(r, "value_ms", &sv), ENOTFOUND_);
    assert_int_equal(zlb_result_number(r, "clocks_before.bogus", &d), ENOTFOUND_);
    assert_int_equal(zlb_result_number(NULL, "value_ms", &d), EINVAL_);
  }
  zlb_result_free(r);
  zlb_result_free(NULL);
  zlb_session_close(s);
}

/* The integrity gate (API 1.3): "tensors" of 16 ints, out = in + 1. */
struct integ {
  int in[16], out[16];
  int calls, refreshed, checked;
  int skip_after_first; /* the cheat: compute on the first call only */
  size_t iteration;     /* what check() was told */
};

static int add_one(void *user, void *stream, zlb_api_error_t *err) {
  struct integ *g = user;
  (void)stream;
  (void)err;
  if (++g->calls == 1 || !g->skip_after_first)
    for (int i = 0; i < 16; i++)
      g->out[i] = g->in[i] + 1;
  return 0;
}

static int integ_refresh(void *user, size_t iteration, void *stream, zlb_api_error_t *err) {
  struct integ *g = user;
  (void)iteration;
  (void)stream;
  (void)err;
  g->refreshed++;
  for (int i = 0; i < 16; i++) {
    g->in[i] = 1000 * g->refreshed + i; /* same array, new values */
    g->out[i] = -1;                     /* poisoned */
  }
  return 0;
}

static int integ_check(void *user, size_t iteration, void *stream, zlb_api_error_t *err) {
  struct integ *g = user;
  int bad = 0;
  (void)stream;
  g->checked++;
  g->iteration = iteration;
  for (int i = 0; i < 16; i++)
    bad += g->out[i] != g->in[i] + 1;
  if (!bad)
    return 0;
  snprintf(err->msg, sizeof(err->msg), "%d of 16 elements differ", bad);
  return ZLB_API_EMISMATCH;
}

static void test_measure_integrity(void **state) {
  zlb_session_t *s = host();
  zlb_measure_opts_t o = quick();
  zlb_integrity_t ig = {sizeof(zlb_integrity_t), integ_refresh, integ_check, NULL, 5, 1};
  struct integ g;
  zlb_result_t *r = NULL;
  zlb_api_error_t e;
  char want[96];
  (void)state;
  /* At least 20 samples whatever the machine's speed. */
  o.stop = ZLB_API_STOP_NOISE;
  o.min_samples = 20;
  o.max_noise = 1.0;
  o.timeout_ms = 60000;
  o.max_samples = 100;
  memset(&g, 0, sizeof(g));
  ig.user = &g;
  assert_int_equal(zlb_measure_integrity(s, &o, add_one, NULL, &g, &ig, &r, &e), 0);
  assert_int_equal(g.refreshed, 1);
  assert_int_equal(g.checked, 1);
  assert_true(g.iteration >= 2 && g.iteration <= 10);
  assert_true(num(r, "integrity_iteration") == (double)g.iteration);
  snprintf(want, sizeof(want), "timed sample: iteration %zu checked on fresh inputs",
           g.iteration);
  assert_str_contains(str(r, "integrity"), want);
  assert_str_contains(str(r, "integrity"), "side streams: not checked (backend 'host'");
  zlb_result_free(r);
  r = NULL;
  /* The cheat: right on its first call, stale afterwards. */
  memset(&g, 0, sizeof(g));
  g.skip_after_first = 1;
  assert_int_equal(zlb_measure_integrity(s, &o, add_one, NULL, &g, &ig, &r, &e),
                   ZLB_API_EMISMATCH);
  assert_null(r);
  assert_int_equal(e.code, ZLB_API_EMISMATCH);
  snprintf(want, sizeof(want), "integrity: the outputs of timed iteration %zu do not match",
           g.iteration);
  assert_str_contains(e.msg, want);
  assert_str_contains(e.msg, "16 of 16 elements differ");
  /* Without the gate the cheat times, and the result says nothing was checked. */
  assert_int_equal(zlb_measure(s, &o, add_one, NULL, &g, &r, &e), 0);
  assert_string_equal(str(r, "integrity"), "");
  assert_true(num(r, "integrity_iteration") == -1);
  zlb_result_free(r);
  r = NULL;
  /* Refusals: an old or absent struct size, a missing callback. */
  ig.struct_size = 8;
  assert_int_equal(zlb_measure_integrity(s, &o, add_one, NULL, &g, &ig, &r, &e), EINVAL_);
  assert_str_contains(e.msg, "struct_size");
  ig.struct_size = sizeof(ig);
  ig.check = NULL;
  assert_int_equal(zlb_measure_integrity(s, &o, add_one, NULL, &g, &ig, &r, &e), EINVAL_);
  assert_str_contains(e.msg, "both refresh and check");
  zlb_session_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_measure_integrity),
      cmocka_unit_test(test_version_and_sessions),
      cmocka_unit_test(test_measure_direct),
      cmocka_unit_test(test_graph_request_without_graphs),
      cmocka_unit_test(test_quantiles_and_repeat_note),
      cmocka_unit_test(test_callback_errors),
      cmocka_unit_test(test_option_checks),
      cmocka_unit_test(test_result_keys),
      cmocka_unit_test(test_ab_verdict),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
