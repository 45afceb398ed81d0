/* The timing engine over backends: the direct timer's zero-estimate guard,
 * repeat over calls (and its skip for quantiles/all), and the graph timer's
 * fallback state machine, driven through the test backend
 * (tests/ops/test_backend.c) injecting refused / fatal / poisoned failures
 * at capture, instantiate and replay. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlb_test.h"
#include "zlbench/base.h"
#include "zlbench/ops.h"
#include "zlbench/timing.h"

struct fake {
  int calls;
  int guard_enter, guard_exit;
  int guarded; /* currently under the scratch RNG state */
  int calls_while_guarded;
  double spin_us;
  double guarded_spin_us; /* > 0: calls made under capture spin this long */
};

static int fake_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  struct fake *f = ctx;
  double us = f->guarded && f->guarded_spin_us > 0 ? f->guarded_spin_us : f->spin_us;
  uint64_t until = zlb_now_ns() + (uint64_t)(us * 1000);
  (void)s;
  (void)err;
  f->calls++;
  f->calls_while_guarded += f->guarded;
  while (zlb_now_ns() < until)
    ;
  return 0;
}

static void fake_guard(void *ctx, int scratch) {
  struct fake *f = ctx;
  if (scratch)
    f->guard_enter++;
  else
    f->guard_exit++;
  f->guarded = scratch;
}

static zlb_backend_t *test_backend(void) {
  static zlb_op_set_t set = ZLB_OP_SET_INIT;
  static zlb_backend_t *b;
  zlb_error_t e = ZLB_ERROR_INIT;
  const char *lib = getenv("ZLB_TEST_OPS");
  if (b)
    return b;
  if (!lib)
    fail_msg("%s", "ZLB_TEST_OPS (path of libzlb_ops_test.so) is not set");
  if (zlb_ops_load_library(&set, lib, &e) || zlb_backend_open_name("test", &b, &e) ||
      zlb_backend_select_device(b, 0, &e))
    fail_msg("cannot open the test backend: %s", e.msg);
  return b;
}

static void reset_poison(void) {
  void *h = dlopen(getenv("ZLB_TEST_OPS"), RTLD_NOW | RTLD_NOLOAD);
  void *sym = h ? dlsym(h, "zlb_test_backend_reset") : NULL;
  void (*fn)(void);
  if (!sym)
    fail_msg("%s", "zlb_test_backend_reset not found");
  memcpy(&fn, &sym, sizeof(fn));
  fn();
}

static zlb_timing_opts_t quick_opts(void) {
  zlb_timing_opts_t o;
  zlb_timing_opts_default(&o);
  o.warmup_ms = 0.2;
  o.rep_ms = 1.0;
  o.graph_replay_ms = 0.2;
  o.graph_min_replays = 3;
  return o;
}

/* Every phase x every verdict: refused falls back with the right marker,
 * fatal and poisoned are errors with no value. */
static void test_fallback_state_machine(void **state) {
  static const char *const phases[] = {"capture", "instantiate", "replay"};
  static const struct {
    const char *verdict;
    int rc;
    zlb_verdict_t v;
  } verdicts[] = {{"refused", 0, ZLB_VERDICT_REFUSED},
                  {"fatal", ZLB_EFATAL, ZLB_VERDICT_FATAL},
                  {"poisoned", ZLB_EPOISONED, ZLB_VERDICT_POISONED}};
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  (void)state;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  for (size_t p = 0; p < 3; p++)
    for (size_t v = 0; v < 3; v++) {
      struct fake f = {0, 0, 0, 0, 0, 20, 0};
      zlb_launch_t l = {.call = fake_call, .rng_guard = fake_guard, .ctx = &f};
      zlb_timing_opts_t o = quick_opts();
      zlb_measurement_t m;
      zlb_graph_failure_t fail;
      char marker[256], fault[64], want[256];
      int rc;
      memset(&m, 0, sizeof(m));
      zlb_error_clear(&e);
      reset_poison();
      snprintf(fault, sizeof(fault), "%s:%s", phases[p], verdicts[v].verdict);
      setenv("ZL_TEST_FAULT", fault, 1);
      rc = zlb_time_case(b, s, &l, ZLB_TIMER_GRAPH, 0, &o, NULL, &m, marker, sizeof(marker),
                         &fail, &e);
      unsetenv("ZL_TEST_FAULT");
      if (rc != verdicts[v].rc)
        fail_msg("%s: rc %s, want %s (%s)", fault, zlb_err_name(rc),
                 zlb_err_name(verdicts[v].rc), e.msg);
      assert_string_equal(zlb_phase_name(fail.phase), phases[p]);
      assert_int_equal(fail.verdict, verdicts[v].v);
      /* The scratch RNG state was entered once and always left. */
      assert_int_equal(f.guard_enter, 1);
      assert_int_equal(f.guard_exit, 1);
      assert_int_equal(f.guarded, 0);
      if (verdicts[v].rc == 0) {
        snprintf(want, sizeof(want),
                 "fallback(phase=%s,reason=TEST_ERROR_CAPTURE_UNSUPPORTED,repeat=1)", phases[p]);
        assert_string_equal(marker, want);
        assert_int_equal(m.timer, ZLB_TIMER_DIRECT);
        assert_true(m.nsamples > 0);
        assert_true(m.value_ms > 0);
        /* The refused attempt's wall time is kept beside the direct
         * timer's, whose sampling is part of its own: the attempt made
         * the estimate's 7 calls of 20 us at least. */
        if (!(m.attempt_s >= 7 * 20e-6 && m.sample_s > 0 && m.sample_s <= m.wall_s))
          fail_msg("%s: attempt %.6f s, sampling %.6f s of %.6f s", fault, m.attempt_s,
                   m.sample_s, m.wall_s);
      } else {
        assert_int_equal(m.nsamples, 0);
        assert_int_equal(e.code, verdicts[v].rc);
      }
      zlb_measurement_release(&m);
    }
  reset_poison();
  b->v->stream_destroy(b, s);
}

static void test_graph_success_and_repeat_marker(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 50, 0};
  zlb_launch_t l = {.call = fake_call, .rng_guard = fake_guard, .ctx = &f};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  char marker[256];
  (void)state;
  memset(&m, 0, sizeof(m));
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_AUTO, 0, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), 0);
  assert_string_equal(marker, "-");
  assert_int_equal(m.timer, ZLB_TIMER_GRAPH);
  assert_true(m.graph_launches >= 1 && m.graph_launches <= o.graph_max_launches);
  assert_true(m.replays >= o.graph_min_replays);
  /* Captured launches ran under the scratch RNG state. */
  assert_true(f.calls_while_guarded >= m.graph_launches);
  /* ~50 us per call; the emulated replay lasts as long as the capture. */
  assert_true(m.value_ms > 0.02 && m.value_ms < 10.0); /* preempted busy-waits run long */
  zlb_measurement_release(&m);

  /* A refused capture with repeat 5 says so in the marker and repeats. */
  o.repeat = 5;
  setenv("ZL_TEST_FAULT", "capture:refused", 1);
  assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_GRAPH, 0, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), 0);
  unsetenv("ZL_TEST_FAULT");
  assert_string_equal(marker, "fallback(phase=capture,reason=TEST_ERROR_CAPTURE_UNSUPPORTED,repeat=5)");
  assert_int_equal(m.ncalls, 5);
  zlb_measurement_release(&m);
  b->v->stream_destroy(b, s);
}

static void test_deny_skips_attempt(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 10, 0};
  zlb_launch_t l = {.call = fake_call, .rng_guard = fake_guard, .ctx = &f};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  char marker[256];
  (void)state;
  memset(&m, 0, sizeof(m));
  o.repeat = 2;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  /* Were capture attempted, this fault would make it fatal. */
  setenv("ZL_TEST_FAULT", "capture:fatal", 1);
  assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_GRAPH, 1, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), 0);
  unsetenv("ZL_TEST_FAULT");
  assert_string_equal(marker, "fallback(phase=deny,repeat=2)");
  assert_int_equal(f.guard_enter, 0);
  assert_int_equal(m.timer, ZLB_TIMER_DIRECT);
  zlb_measurement_release(&m);
  b->v->stream_destroy(b, s);
}

/* A caller-supplied capture (the hook): it captures with the backend's own
 * calls, the graph timer instantiates and replays the graph and leaves it
 * to the hook's owner (freed here: ASan reports a double free if the timer
 * destroyed it too). A failing hook falls back with its own reason. */
struct hook {
  struct fake f;
  zlb_backend_t *b;
  int hooks, k;
  zlb_graph_t g;
  const char *fail_as; /* fail with this vendor name */
};

static int hook_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  return fake_call(&((struct hook *)ctx)->f, s, err);
}

static int hook_capture(void *ctx, int k, zlb_stream_t s, zlb_graph_t *g, zlb_error_t *err) {
  struct hook *h = ctx;
  int rc;
  h->hooks++;
  h->k = k;
  if (h->fail_as)
    return zlb_error_vendor(err, ZLB_EOP, 0, h->fail_as, "the hook failed on purpose");
  if ((rc = h->b->v->capture_begin(h->b, s, err)))
    return rc;
  for (int i = 0; i < k; i++)
    fake_call(&h->f, s, err);
  if ((rc = h->b->v->capture_end(h->b, s, g, err)))
    return rc;
  h->g = *g;
  return 0;
}

static void test_capture_hook(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct hook h;
  zlb_launch_t l = {.call = hook_call, .ctx = &h, .capture = hook_capture};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  char marker[256];
  (void)state;
  memset(&h, 0, sizeof(h));
  memset(&m, 0, sizeof(m));
  h.b = b;
  h.f.spin_us = 50;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_GRAPH, 0, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), 0);
  assert_string_equal(marker, "-");
  assert_int_equal(m.timer, ZLB_TIMER_GRAPH);
  assert_int_equal(h.hooks, 1);
  assert_int_equal(h.k, m.graph_launches);
  assert_non_null(h.g);
  /* The replays were of the hook's graph: ~50 us per launch. */
  assert_true(m.value_ms > 0.02 && m.value_ms < 10.0); /* preempted busy-waits run long */
  b->v->graph_destroy(b, h.g);
  zlb_measurement_release(&m);

  h.fail_as = "ValueError";
  h.g = NULL;
  assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_GRAPH, 0, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), 0);
  assert_string_equal(marker, "fallback(phase=capture,reason=ValueError,repeat=1)");
  assert_int_equal(fail.verdict, ZLB_VERDICT_REFUSED);
  assert_int_equal(m.timer, ZLB_TIMER_DIRECT);
  assert_true(m.nsamples > 0);
  zlb_measurement_release(&m);
  b->v->stream_destroy(b, s);
}

static void test_repeat_logic(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 10, 0};
  zlb_launch_t l = {.call = fake_call, .ctx = &f};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  (void)state;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);

  memset(&m, 0, sizeof(m));
  o.repeat = 3;
  assert_int_equal(zlb_time_direct(b, s, &l, &o, NULL, &m, &e), 0);
  assert_int_equal(m.ncalls, 3);
  assert_true(m.value_ms == zlb_stats_median(m.call_values, 3));
  assert_string_equal(m.note, "");
  zlb_measurement_release(&m);

  /* Quantiles: a sequence, so the median over calls is undefined: skipped. */
  memset(&m, 0, sizeof(m));
  o.nquantiles = 2;
  o.quantiles[0] = 0.2;
  o.quantiles[1] = 0.8;
  assert_int_equal(zlb_time_direct(b, s, &l, &o, NULL, &m, &e), 0);
  assert_int_equal(m.ncalls, 1);
  assert_int_equal(m.nquantiles, 2);
  assert_true(m.quantiles[0] <= m.quantiles[1]);
  assert_str_contains(m.note, "repeat=3 skipped: quantiles requested");
  zlb_measurement_release(&m);

  memset(&m, 0, sizeof(m));
  o.nquantiles = 0;
  o.return_mode = ZLB_RET_ALL;
  assert_int_equal(zlb_time_direct(b, s, &l, &o, NULL, &m, &e), 0);
  assert_int_equal(m.ncalls, 1);
  assert_str_contains(m.note, "return mode all");
  zlb_measurement_release(&m);

  /* Default repeat is 1: one call, no note. */
  memset(&m, 0, sizeof(m));
  o.return_mode = ZLB_RET_MEDIAN;
  o.repeat = 1;
  assert_int_equal(zlb_time_direct(b, s, &l, &o, NULL, &m, &e), 0);
  assert_int_equal(m.ncalls, 1);
  zlb_measurement_release(&m);
  b->v->stream_destroy(b, s);
}

/* ---- a backend whose events read z_ms (0: FlagTree's XPU case) ---- */

static double z_ms;

static int z_ok(void) { return 0; }
static int z_event_create(zlb_backend_t *b, zlb_event_t *ev, zlb_error_t *err) {
  static char dummy;
  (void)b;
  (void)err;
  *ev = (zlb_event_t)&dummy;
  return z_ok();
}
static void z_event_destroy(zlb_backend_t *b, zlb_event_t ev) {
  (void)b;
  (void)ev;
}
static int z_record(zlb_backend_t *b, zlb_event_t ev, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  (void)ev;
  (void)s;
  (void)err;
  return 0;
}
static int z_elapsed(zlb_backend_t *b, zlb_event_t x, zlb_event_t y, double *ms,
                     zlb_error_t *err) {
  (void)b;
  (void)x;
  (void)y;
  (void)err;
  *ms = z_ms;
  return 0;
}
static int z_sync(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  (void)s;
  (void)err;
  return 0;
}

static void zero_backend(zlb_backend_vtbl_t *v, zlb_backend_desc_t *d, zlb_backend_t *b) {
  memset(v, 0, sizeof(*v));
  memset(d, 0, sizeof(*d));
  memset(b, 0, sizeof(*b));
  v->event_create = z_event_create;
  v->event_destroy = z_event_destroy;
  v->event_record = z_record;
  v->event_elapsed = z_elapsed;
  v->stream_sync = z_sync;
  d->name = "zero";
  b->desc = d;
  b->v = v;
}

static void test_zero_estimate(void **state) {
  zlb_backend_vtbl_t v;
  zlb_backend_desc_t d;
  zlb_backend_t b;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 0, 0};
  zlb_launch_t l = {.call = fake_call, .ctx = &f};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  (void)state;
  zero_backend(&v, &d, &b);
  z_ms = 0.0;
  memset(&m, 0, sizeof(m));
  o.max_samples = 64;
  assert_int_equal(zlb_time_direct(&b, NULL, &l, &o, NULL, &m, &e), 0);
  assert_int_equal(m.nsamples, 64); /* the cap, not a division by zero */
  assert_true(m.value_ms == 0.0);
  /* 1 first call + 1 probe + 5 estimate calls + 1 warm-up + 64 samples */
  assert_int_equal(f.calls, 1 + 1 + 5 + 1 + 64);
  zlb_measurement_release(&m);
}

/* A primed launch (the run's accuracy check made the first call) skips
 * the timer's own first call; a call of 1 ms or more is its own estimate,
 * without four more long calls. */
static void test_primed_and_long_estimate(void **state) {
  zlb_backend_vtbl_t v;
  zlb_backend_desc_t d;
  zlb_backend_t b;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_timing_opts_t o = quick_opts(); /* warm-up 0.2 ms, rep 1 ms */
  (void)state;
  zero_backend(&v, &d, &b);
  for (int primed = 0; primed < 2; primed++)
    for (int lng = 0; lng < 2; lng++) {
      struct fake f = {0, 0, 0, 0, 0, 0, 0};
      zlb_launch_t l = {.call = fake_call, .ctx = &f, .primed = primed};
      zlb_measurement_t m;
      long want;
      memset(&m, 0, sizeof(m));
      o.max_samples = 64;
      z_ms = lng ? 3.0 : 0.0;
      assert_int_equal(zlb_time_direct(&b, NULL, &l, &o, NULL, &m, &e), 0);
      /* long: probe, 1 warm-up, max(1, 1 / 3) = 1 sample;
       * short (zero estimate): probe, 5 estimate calls, 1 warm-up, the cap */
      want = (primed ? 0 : 1) + (lng ? 1 + 1 + 1 : 1 + 5 + 1 + 64);
      if (f.calls != want)
        fail_msg("primed %d, long %d: %d calls, want %ld", primed, lng, f.calls, want);
      assert_true(m.estimate_ms == z_ms);
      zlb_measurement_release(&m);
    }
  z_ms = 0.0;
}

/* One graph-timed measurement into a zeroed `m` (the timer must be the graph's). */
static void time_graph(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                       const zlb_timing_opts_t *o, zlb_measurement_t *m) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_graph_failure_t fail;
  char marker[64];
  memset(m, 0, sizeof(*m));
  assert_int_equal(zlb_time_case(b, s, l, ZLB_TIMER_GRAPH, 0, o, NULL, m, marker,
                                 sizeof(marker), &fail, &e), 0);
  assert_int_equal(m->timer, ZLB_TIMER_GRAPH);
}

/* The noise stop: a steady call meets a loose target quickly; an
 * impossible target ends by the noise settling or the timeout, never by
 * running forever; every measurement reports its noise and sample count. */
static void test_noise_stop(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 200, 0};
  zlb_launch_t l = {.call = fake_call, .ctx = &f};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  double t0;
  (void)state;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  o.stop = ZLB_STOP_NOISE;
  /* 500 %: a 200 us busy loop is far steadier, even where a loaded machine
   * preempts one sample in seven for tens of times its length (CI). */
  o.max_noise = 5.0;
  o.min_samples = 7;
  o.min_time_ms = 1.0;
  o.timeout_ms = 2000;
  memset(&m, 0, sizeof(m));
  assert_int_equal(zlb_time_direct(b, s, &l, &o, NULL, &m, &e), 0);
  assert_true(m.nsamples >= 7);
  if (!m.noise_met)
    fail_msg("noise %.3f over %zu samples did not meet the 5.0 target", m.noise, m.nsamples);
  assert_true(m.noise >= 0 && m.noise <= 5.0);
  assert_true(m.wall_s > 0);
  zlb_measurement_release(&m);

  /* An impossible target: stops on the timeout (or settled noise). */
  o.max_noise = 1e-9;
  o.timeout_ms = 50;
  o.min_samples = 5;
  memset(&m, 0, sizeof(m));
  t0 = zlb_now_s();
  assert_int_equal(zlb_time_direct(b, s, &l, &o, NULL, &m, &e), 0);
  assert_false(m.noise_met);
  assert_true(zlb_now_s() - t0 < 1.0);
  assert_true(m.nsamples >= 5);
  zlb_measurement_release(&m);

  /* The graph timer's replays follow the same rule. */
  o.max_noise = 5.0;
  o.timeout_ms = 2000;
  time_graph(b, s, &l, &o, &m);
  assert_true(m.noise_met);
  assert_true(m.replays >= 5);
  zlb_measurement_release(&m);

  /* min_time_ms counts every call of a replay: a 20 us call replayed K =
   * 10 at a time (0.2 ms a replay) has its 2 ms after about 10 replays.
   * Counting one call per sample would take 100 replays. */
  f.spin_us = 20;
  o.min_samples = 5;
  o.min_time_ms = 2.0;
  /* K comes from the estimate, which a loaded host's scheduler can inflate
   * (a 20 us call preempted for a millisecond): up to three tries for a K
   * that makes the point. */
  for (int i = 0; i < 3; i++) {
    time_graph(b, s, &l, &o, &m);
    if (m.graph_launches >= 5)
      break;
    zlb_measurement_release(&m);
  }
  assert_true(m.graph_launches >= 5);
  if (!m.noise_met || m.replays < 5 || m.replays > 40)
    fail_msg("K = %d: %d replays (noise met %d), want 5..40", m.graph_launches, m.replays,
             m.noise_met);
  zlb_measurement_release(&m);
  b->v->stream_destroy(b, s);
}

/* Budget rule: the graph timer's replays stop at rep_ms of replay time
 * even when they run slower than the estimate said (a GPU under its power
 * cap). The test backend's replay lasts as long as the captured calls did:
 * calls under capture spin 4x longer than the estimate's. Replays planned
 * from the estimate would last 4 x rep_ms. */
static void test_graph_budget_in_time(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 25, 100};
  zlb_launch_t l = {.call = fake_call, .rng_guard = fake_guard, .ctx = &f};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  double replay_ms;
  (void)state;
  o.rep_ms = 40;
  o.graph_replay_ms = 0.5;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  time_graph(b, s, &l, &o, &m);
  /* The replays' wall time is part of the measurement's; nothing refused. */
  assert_true(m.sample_s > 0 && m.sample_s <= m.wall_s && m.attempt_s == 0);
  /* Each sample is one replay over its K launches: ~100 us per call (more
   * on a loaded machine: a busy-wait preempted runs longer). */
  if (!(m.value_ms > 0.075 && m.value_ms < 2.0))
    fail_msg("%.4f ms per call, want the captured calls' ~0.1 ms", m.value_ms);
  replay_ms = m.value_ms * m.graph_launches * (double)m.replays;
  if (!(replay_ms < 2.0 * o.rep_ms))
    fail_msg("%d replays of %d launches took %.1f ms against a %.0f ms budget", m.replays,
             m.graph_launches, replay_ms, o.rep_ms);
  assert_true(m.replays >= o.graph_min_replays);
  zlb_measurement_release(&m);

  /* Calls as fast under capture as in the estimate: the planned count
   * (what the estimate planned; a loaded machine can inflate the estimate,
   * and then the plan, not the bound, sets the count). */
  f.guarded_spin_us = 0;
  time_graph(b, s, &l, &o, &m);
  {
    double planned = o.rep_ms / (m.estimate_ms * m.graph_launches);
    if (planned > 1000)
      planned = 1000;
    if (planned < o.graph_min_replays)
      planned = o.graph_min_replays;
    if (m.value_ms <= m.estimate_ms && m.replays < 0.8 * planned - 1)
      fail_msg("%d replays, %.0f planned, though replays ran no slower than the estimate",
               m.replays, planned);
  }
  zlb_measurement_release(&m);
  b->v->stream_destroy(b, s);
}

/* The graph timer's eager calls: the estimate's 7 (or 2 when its first
 * timed call lasted 1 ms or more: a busy-wait preempted on a loaded
 * machine), then n_warm less those and K, at least 1. */
static void expect_eager_calls(const struct fake *f, const zlb_measurement_t *m, long n_warm) {
  long eager = f->calls - f->calls_while_guarded, want = 0;
  for (int est_calls = 7;; est_calls = 2) {
    want = n_warm - est_calls - m->graph_launches;
    if (want < 1)
      want = 1;
    if (eager == est_calls + want)
      return;
    if (est_calls == 2)
      break;
  }
  fail_msg("n_warm %ld, estimate %.4f ms, K %d: %ld eager calls, want 7 (or 2) + %ld", n_warm,
           m->estimate_ms, m->graph_launches, eager, want);
}

/* The graph timer's warm-up counts the calls that warm up anyway: the
 * estimate's seven (priming, one, five) and the K of the untimed upload
 * replay. Eager calls = those seven + max(1, n_warm - 7 - K), where n_warm
 * is the direct timer's count; without the deduction they would be
 * 7 + n_warm. */
static void test_graph_warmup_counts_setup(void **state) {
  static const double warmups[] = {3.0, 0.5};
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  (void)state;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  for (size_t i = 0; i < sizeof(warmups) / sizeof(warmups[0]); i++) {
    struct fake f = {0, 0, 0, 0, 0, 100, 0};
    zlb_launch_t l = {.call = fake_call, .rng_guard = fake_guard, .ctx = &f};
    zlb_timing_opts_t o = quick_opts();
    zlb_measurement_t m;
    long n_warm;
    o.warmup_ms = warmups[i];
    o.graph_replay_ms = 0.5;
    time_graph(b, s, &l, &o, &m);
    n_warm = (long)(o.warmup_ms / m.estimate_ms);
    if (n_warm < 1)
      n_warm = 1;
    expect_eager_calls(&f, &m, n_warm);
    assert_int_equal(f.calls_while_guarded, m.graph_launches);
    zlb_measurement_release(&m);
  }
  b->v->stream_destroy(b, s);
}

/* Triton's counts, worked out from a measurement's estimate as the timer
 * does (docs/timing.md, graph step 5): n_rep calls of est + flush, K from
 * the replay target cut to n_rep / floor where floor full replays would
 * exceed n_rep, ceil(n_rep / K) replays and at least floor =
 * min(n_rep, graph_min_replays), all of them run; the warm-up n_warm less
 * the set-up's calls. */
static void expect_triton_counts(const struct fake *f, const zlb_timing_opts_t *o,
                                 const zlb_measurement_t *m, const char *what) {
  double per = m->estimate_ms + o->count_flush_ms;
  long n_warm = (long)(o->warmup_ms / per), n_rep = (long)(o->rep_ms / per), k, floor,
       replays;
  if (n_warm < 1)
    n_warm = 1;
  if (n_rep < 1)
    n_rep = 1;
  floor = n_rep < o->graph_min_replays ? n_rep : o->graph_min_replays;
  k = (long)ceil(o->graph_replay_ms / m->estimate_ms);
  if (k > o->graph_max_launches)
    k = o->graph_max_launches;
  if (k < 1)
    k = 1;
  if (k * floor > n_rep)
    k = n_rep / floor > 1 ? n_rep / floor : 1;
  replays = (n_rep + k - 1) / k;
  if (replays < floor)
    replays = floor;
  if (m->graph_launches != k || m->replays != replays)
    fail_msg("%s: estimate %.4f ms, n_rep %ld: K %d and %d replays, want K %ld and %ld", what,
             m->estimate_ms, n_rep, m->graph_launches, m->replays, k, replays);
  expect_eager_calls(f, m, n_warm);
}

/* Triton's counts: the calls do_bench would make, from an estimate of one
 * call with its flush (count_flush_ms), where budgets of the calls' own
 * time would make 4x the replays (a), 3, the floor, for the long call (b),
 * 10 replays of 5 calls for 18 calls (c), and stop at rep_ms of replay
 * time when the replays run 4x slower than the estimate (d). */
static void test_graph_triton_counts(void **state) {
  static const struct {
    const char *what;
    double spin_us, captured_us, warmup_ms, rep_ms, flush_ms;
    int min_replays;
  } cases[] = {
      {"a: 0.1 ms calls", 100, 0, 6.0, 20.0, 0.3, 3},
      {"b: a call longer than rep / floor", 2000, 0, 0.0, 5.0, 0.5, 3},
      {"c: a floor of replays over n_rep", 100, 0, 1.0, 2.0, 0.01, 10},
      {"d: replays slower than the estimate", 25, 100, 1.0, 40.0, 0.0, 3},
  };
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  (void)state;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct fake f = {0, 0, 0, 0, 0, cases[i].spin_us, cases[i].captured_us};
    zlb_launch_t l = {.call = fake_call, .rng_guard = fake_guard, .ctx = &f};
    zlb_timing_opts_t o = quick_opts();
    zlb_measurement_t m;
    o.warmup_ms = cases[i].warmup_ms;
    o.rep_ms = cases[i].rep_ms;
    o.graph_replay_ms = 0.5;
    o.graph_min_replays = cases[i].min_replays;
    o.triton_counts = 1;
    o.count_flush_ms = cases[i].flush_ms;
    time_graph(b, s, &l, &o, &m);
    expect_triton_counts(&f, &o, &m, cases[i].what);
    zlb_measurement_release(&m);
  }
  b->v->stream_destroy(b, s);
}

/* One flush's time: 0 without a buffer, a time with one. */
static void test_flush_time(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_flush_t f = {NULL, 0};
  double ms = -1.0;
  (void)state;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  assert_int_equal(zlb_flush_time(b, s, &f, &ms, &e), 0);
  assert_true(ms == 0.0);
  assert_int_equal(zlb_flush_init(&f, b, (size_t)1 << 20, &e), 0);
  assert_int_equal(zlb_flush_time(b, s, &f, &ms, &e), 0);
  assert_true(ms > 0.0 && ms < 1000.0);
  zlb_flush_release(&f, b);
  b->v->stream_destroy(b, s);
}

/* A capture that is refused costs the estimate's calls only: the warm-up
 * comes once the graph exists, since the direct timer that takes over
 * warms up again (for a host-bound call that warm-up was many times its
 * budget). With 3 ms of warm-up over 0.1 ms calls the old order made 30
 * more calls before the capture failed. */
static void test_graph_refused_spends_no_warmup(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  static const char *faults[] = {"capture:refused", "instantiate:refused"};
  (void)state;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
    struct fake f = {0, 0, 0, 0, 0, 100, 0};
    zlb_launch_t l = {.call = fake_call, .rng_guard = fake_guard, .ctx = &f};
    zlb_timing_opts_t o = quick_opts();
    zlb_measurement_t m;
    zlb_graph_failure_t fail;
    memset(&m, 0, sizeof(m));
    o.warmup_ms = 3.0;
    setenv("ZL_TEST_FAULT", faults[i], 1);
    assert_int_equal(zlb_time_graph(b, s, &l, &o, &m, &fail, &e), ZLB_EREFUSED);
    unsetenv("ZL_TEST_FAULT");
    zlb_error_clear(&e);
    /* priming, one, five (or priming, one, when that one lasted 1 ms or
     * more on a loaded machine): the estimate's; nothing else outside the
     * capture, where the warm-up before it made 27 more. */
    if (f.calls - f.calls_while_guarded > 7)
      fail_msg("%s: %ld eager calls before the failure, want the estimate's 7 at most",
               faults[i], (long)(f.calls - f.calls_while_guarded));
    zlb_measurement_release(&m);
  }
  b->v->stream_destroy(b, s);
}

/* The trace timer needs the backend's activity tracer (the test backend's
 * sees only its empty kernel: here it has none). */
static void test_trace_needs_tracer(void **state) {
  zlb_backend_t *b = test_backend(), nb = *b;
  zlb_backend_vtbl_t v = *b->v;
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 1, 0};
  zlb_launch_t l = {.call = fake_call, .ctx = &f};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  (void)state;
  v.trace_begin = NULL;
  nb.v = &v;
  memset(&m, 0, sizeof(m));
  assert_int_equal(nb.v->stream_create(&nb, &s, &e), 0);
  assert_int_equal(zlb_time_trace(&nb, s, &l, &o, NULL, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "has no kernel activity tracer");
  assert_int_equal(f.calls, 0);
  nb.v->stream_destroy(&nb, s);
}

/* An emulated activity tracer: each call of traced_call "runs" kernels
 * whose spans the tracer reports with its clock skewed by ft_skew_ns
 * against trace_now (a real tracer converts device timestamps to host
 * time, and the conversion is not exact). */
static struct {
  zlb_trace_span_t sp[4096];
  size_t n;
  int64_t skew_ns;
  int kernels;       /* per call */
  uint64_t kern_ns;  /* each */
} ft;

static int ft_begin(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  (void)err;
  ft.n = 0;
  return 0;
}

static int ft_now(zlb_backend_t *b, uint64_t *ns, zlb_error_t *err) {
  (void)b;
  (void)err;
  *ns = zlb_now_ns();
  return 0;
}

static int ft_end(zlb_backend_t *b, zlb_trace_span_t **sp, size_t *n, zlb_error_t *err) {
  (void)b;
  (void)err;
  *sp = malloc((ft.n ? ft.n : 1) * sizeof(**sp));
  memcpy(*sp, ft.sp, ft.n * sizeof(**sp));
  *n = ft.n;
  return 0;
}

static int traced_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  uint64_t t = zlb_now_ns() + 1000; /* launch latency: 1 us */
  (void)ctx;
  (void)s;
  (void)err;
  for (int k = 0; k < ft.kernels && ft.n < 4096; k++) {
    ft.sp[ft.n].start = (uint64_t)((int64_t)t - ft.skew_ns);
    ft.sp[ft.n].end = ft.sp[ft.n].start + ft.kern_ns;
    ft.n++;
    t += ft.kern_ns + 500;
  }
  while (zlb_now_ns() < t)
    ;
  return 0;
}

/* The trace timer sums every kernel of a call, and attributes kernels to
 * calls even when the tracer's clock runs microseconds ahead of the host's
 * (a short kernel's start then reads before its launch). */
static void test_trace_attribution(void **state) {
  zlb_backend_t *b = test_backend(), tb = *b;
  zlb_backend_vtbl_t v = *b->v;
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_launch_t l = {.call = traced_call};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  static const int64_t skews[] = {0, 5000, -300};
  (void)state;
  v.trace_begin = ft_begin;
  v.trace_now = ft_now;
  v.trace_end = ft_end;
  tb.v = &v;
  assert_int_equal(tb.v->stream_create(&tb, &s, &e), 0);
  for (size_t i = 0; i < sizeof(skews) / sizeof(skews[0]); i++) {
    ft.skew_ns = skews[i];
    ft.kernels = 2;
    ft.kern_ns = 20000;
    memset(&m, 0, sizeof(m));
    if (zlb_time_trace(&tb, s, &l, &o, NULL, &m, &e))
      fail_msg("skew %lld ns: %s", (long long)skews[i], e.msg);
    /* Two 20 us kernels per call: 40 us, whatever the skew. */
    assert_true(fabs(m.value_ms - 0.040) < 1e-9);
    assert_int_equal(m.timer, ZLB_TIMER_TRACE);
    zlb_measurement_release(&m);
  }
  /* A call that ran no kernel is an error, not a zero. */
  ft.skew_ns = 0;
  ft.kernels = 0;
  memset(&m, 0, sizeof(m));
  assert_int_equal(zlb_time_trace(&tb, s, &l, &o, NULL, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "recorded no kernel for call");
  zlb_measurement_release(&m);
  tb.v->stream_destroy(&tb, s);
}

/* What each traced call found in its stream: its flush still queued (no
 * synchronisation since the memset) or already waited for. */
static struct {
  zlb_backend_t *inner;
  int tracing, pending;
  long queued, waited;
} fq;

static int fq_memset(zlb_backend_t *b, void *p, int value, size_t bytes, zlb_stream_t s,
                     zlb_error_t *err) {
  (void)b;
  fq.pending = 1;
  return fq.inner->v->memset_async(fq.inner, p, value, bytes, s, err);
}

static int fq_sync(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  fq.pending = 0;
  return fq.inner->v->stream_sync(fq.inner, s, err);
}

static int fq_begin(zlb_backend_t *b, zlb_error_t *err) {
  fq.tracing = 1;
  return ft_begin(b, err);
}

static int fq_end(zlb_backend_t *b, zlb_trace_span_t **sp, size_t *n, zlb_error_t *err) {
  fq.tracing = 0;
  return ft_end(b, sp, n, err);
}

static int fq_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  if (fq.tracing)
    *(fq.pending ? &fq.queued : &fq.waited) += 1;
  return traced_call(ctx, s, err);
}

/* --trace-flush: by default the host waits for every flush before it
 * queues the traced call; queued, every traced call goes in right behind
 * its flush, and the measurement says so. Without a flush there is
 * nothing to queue behind, and the measurement does not claim it. */
static void test_trace_flush_queued(void **state) {
  zlb_backend_t *b = test_backend(), tb = *b;
  zlb_backend_vtbl_t v = *b->v;
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_launch_t l = {.call = fq_call};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  zlb_flush_t f = {NULL, 0};
  (void)state;
  v.trace_begin = fq_begin;
  v.trace_now = ft_now;
  v.trace_end = fq_end;
  v.memset_async = fq_memset;
  v.stream_sync = fq_sync;
  tb.v = &v;
  fq.inner = b;
  ft.skew_ns = 0;
  ft.kernels = 1;
  ft.kern_ns = 20000;
  assert_int_equal(tb.v->stream_create(&tb, &s, &e), 0);
  assert_int_equal(zlb_flush_init(&f, b, (size_t)1 << 20, &e), 0);
  for (int queued = 0; queued <= 1; queued++) {
    o.trace_flush_queued = queued;
    fq.queued = fq.waited = 0;
    memset(&m, 0, sizeof(m));
    if (zlb_time_trace(&tb, s, &l, &o, &f, &m, &e))
      fail_msg("queued=%d: %s", queued, e.msg);
    assert_true(fabs(m.value_ms - 0.020) < 1e-9);
    assert_int_equal(m.trace_flush_queued, queued);
    assert_true(fq.queued + fq.waited >= (long)m.nsamples);
    if (queued) {
      assert_int_equal(fq.waited, 0);
    } else {
      assert_int_equal(fq.queued, 0);
    }
    zlb_measurement_release(&m);
  }
  /* No flush buffer: nothing queued behind, not claimed. */
  o.trace_flush_queued = 1;
  memset(&m, 0, sizeof(m));
  assert_int_equal(zlb_time_trace(&tb, s, &l, &o, NULL, &m, &e), 0);
  assert_int_equal(m.trace_flush_queued, 0);
  zlb_measurement_release(&m);
  zlb_flush_release(&f, b);
  tb.v->stream_destroy(&tb, s);
}

/* ---- the queue timer ------------------------------------------------------ */

/* The test library's emulated launch queue (tests/ops/test_backend.c):
 * one entry enqueued on a stream, blocking while the stream is held and
 * the queue is full. */
static void test_enqueue(zlb_stream_t s) {
  static void (*fn)(zlb_stream_t);
  if (!fn) {
    void *h = dlopen(getenv("ZLB_TEST_OPS"), RTLD_NOW | RTLD_NOLOAD);
    void *sym = h ? dlsym(h, "zlb_test_stream_enqueue") : NULL;
    if (!sym)
      fail_msg("%s", "zlb_test_stream_enqueue not found");
    memcpy(&fn, &sym, sizeof(fn));
  }
  fn(s);
}

/* A call that is one launch on the emulated device: it waits in the
 * launch queue like a kernel launch, then spins for spin_us. */
static int queued_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  test_enqueue(s);
  return fake_call(ctx, s, err);
}

static zlb_timing_opts_t queue_opts(void) {
  zlb_timing_opts_t o = quick_opts();
  o.queue_batch_ms = 0.5;
  o.queue_min_batches = 4;
  o.queue_timeout_ms = 30;
  return o;
}

/* K fills the batch target from the estimate, never more than the cap;
 * every batch is timed and counted; the value is per call. */
static void test_queue_sizing(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_timing_opts_t o = queue_opts();
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  char marker[256];
  long want;
  (void)state;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);

  /* 50 us calls, 2 ms batches: K = ceil(2 / estimate), about 40. */
  {
    struct fake f = {0, 0, 0, 0, 0, 50, 0};
    zlb_launch_t l = {.call = queued_call, .ctx = &f};
    o.queue_batch_ms = 2.0;
    memset(&m, 0, sizeof(m));
    if (zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker, sizeof(marker),
                      &fail, &e))
      fail_msg("queue timer: %s", e.msg);
    assert_string_equal(marker, "-");
    assert_int_equal(m.timer, ZLB_TIMER_QUEUE);
    want = (long)ceil(o.queue_batch_ms / m.estimate_ms);
    assert_int_equal(m.queue_launches, want < 1 ? 1 : want);
    assert_int_equal(m.invalid_batches, 0);
    assert_true(m.batches >= o.queue_min_batches);
    assert_int_equal((size_t)m.batches, m.nsamples);
    /* Per call, not per batch: about 50 us, where a whole batch (K calls
     * of at least 50 us each, at least 2 ms) is far above 1 ms. */
    assert_true(m.value_ms > 0.045 && m.value_ms < 1.0);
    zlb_measurement_release(&m);
  }

  /* Calls far shorter than a batch: K is the depth cap, exactly. */
  {
    struct fake f = {0, 0, 0, 0, 0, 0, 0};
    zlb_launch_t l = {.call = queued_call, .ctx = &f};
    o.queue_max_launches = 37;
    o.queue_batch_ms = 100; /* 37 calls of any sane estimate are shorter */
    memset(&m, 0, sizeof(m));
    assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker,
                                   sizeof(marker), &fail, &e), 0);
    assert_int_equal(m.timer, ZLB_TIMER_QUEUE);
    assert_int_equal(m.queue_launches, 37);
    zlb_measurement_release(&m);
    /* A cap beyond what a launch queue holds is an input error. */
    o.queue_max_launches = ZLB_QUEUE_LAUNCHES_LIMIT + 1;
    memset(&m, 0, sizeof(m));
    assert_int_equal(zlb_time_queue(b, s, &l, &o, &m, &fail, &e), ZLB_EINVAL);
    zlb_measurement_release(&m);
  }
  b->v->stream_destroy(b, s);
}

/* The order of operations of a batch, recorded by a backend that logs
 * them: hold, start event, K calls with no event between them, end event,
 * release, synchronisation; nothing else on the stream while it is held. */
static struct {
  char ops[65536];
  size_t n;
  zlb_backend_t *inner;
} oplog;

static void oplog_add(char c) {
  if (oplog.n + 1 < sizeof(oplog.ops))
    oplog.ops[oplog.n++] = c;
  oplog.ops[oplog.n] = '\0';
}

static int lg_hold(zlb_backend_t *b, zlb_stream_t s, zlb_hold_t *h, zlb_error_t *err) {
  (void)b;
  oplog_add('H');
  return oplog.inner->v->stream_hold(oplog.inner, s, h, err);
}

static void lg_release(zlb_backend_t *b, zlb_hold_t h) {
  (void)b;
  oplog_add('R');
  oplog.inner->v->stream_release(oplog.inner, h);
}

static int lg_record(zlb_backend_t *b, zlb_event_t ev, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  oplog_add('E');
  return oplog.inner->v->event_record(oplog.inner, ev, s, err);
}

static int lg_sync(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  oplog_add('S');
  return oplog.inner->v->stream_sync(oplog.inner, s, err);
}

static int logged_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  oplog_add('C');
  return fake_call(ctx, s, err);
}

static void test_queue_batch_order(void **state) {
  zlb_backend_t *b = test_backend(), lb = *b;
  zlb_backend_vtbl_t v = *b->v;
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 40, 0};
  zlb_launch_t l = {.call = logged_call, .ctx = &f};
  zlb_timing_opts_t o = queue_opts();
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  zlb_strbuf_t want = ZLB_STRBUF_INIT;
  const char *first;
  (void)state;
  v.stream_hold = lg_hold;
  v.stream_release = lg_release;
  v.event_record = lg_record;
  v.stream_sync = lg_sync;
  lb.v = &v;
  oplog.inner = b;
  oplog.n = 0;
  assert_int_equal(lb.v->stream_create(&lb, &s, &e), 0);
  memset(&m, 0, sizeof(m));
  if (zlb_time_queue(&lb, s, &l, &o, &m, &fail, &e))
    fail_msg("queue timer: %s", e.msg);
  assert_true(m.queue_launches >= 1 && m.batches >= o.queue_min_batches);
  for (int i = 0; i < m.batches; i++) {
    zlb_strbuf_addstr(&want, "HE");
    for (int c = 0; c < m.queue_launches; c++)
      zlb_strbuf_addch(&want, 'C');
    zlb_strbuf_addstr(&want, "ERS");
  }
  /* First a hold released at once (does the runtime have holds?), before
   * any call; then the warm-up, then the batches. */
  assert_true(oplog.n >= 2 && oplog.ops[0] == 'H' && oplog.ops[1] == 'R');
  first = strchr(oplog.ops + 2, 'H');
  assert_non_null(first);
  assert_string_equal(first, want.buf);
  zlb_strbuf_release(&want);
  zlb_measurement_release(&m);
  lb.v->stream_destroy(&lb, s);
}

/* The calibrated queue timer against a device with a synthetic clock: a
 * call takes QC_CALL ns of kernel, every launch QC_GAP ns in front of its
 * kernel, an empty kernel QC_EMPTY ns, and every event after a hold's
 * first QC_FIXED ns. Uncalibrated, a sample is CALL + GAP + FIXED / K; the
 * calibration, from traced empty kernels, is GAP + FIXED / K; calibrated,
 * a sample is CALL exactly. A cold L2's flush costs QC_FGAP + QC_FLUSH,
 * and qc.wb more after a call (the call's output written back), which a
 * flush after an empty kernel or a flush does not pay. */
#define QC_CALL 5000.0
#define QC_GAP 800.0
#define QC_EMPTY 1200.0
#define QC_FIXED 1500.0
#define QC_FLUSH 20000.0 /* a cold L2's flush (memset) on the device, ns */
#define QC_FGAP 300.0    /* the launch gap in front of a flush */
#define QC_EVENTS 4096   /* events the synthetic device tells apart */
static struct {
  zlb_backend_t *inner;
  double dev;             /* the synthetic device clock, ns */
  int batch;              /* 1: held, no event yet; 2: an event recorded since */
  zlb_event_t ev[QC_EVENTS];
  double at[QC_EVENTS];
  int nev;
  int tracing;
  zlb_trace_span_t sp[4096];
  size_t nsp;
  int drop;               /* > 0: the tracer loses this many spans */
  int trace_flush;        /* the tracer reports each flush as a kernel too */
  int twice;              /* the tracer reports each empty kernel twice */
  double empty_seen;      /* > 0: the tracer reports empty kernels this long (ns) */
  double trace_cost;      /* while tracing, every launch costs this much more (ns) */
  long empties;
  long calls;             /* the call's launches */
  double call_ns;         /* the call's kernel time (QC_CALL unless a case sets it) */
  zlb_flush_t *cold;      /* non-NULL: measure with --l2 cold and this flush buffer */
  long flushes;
  double wb;              /* what a flush after a call costs more, ns */
  int dirty;              /* a call ran since the last flush */
  int created, destroyed; /* events of the timer's */
  int max_launches;       /* > 0: --queue-max-launches */
} qc;

/* A span of `ns` from now on the synthetic device, while tracing. */
static void qc_span(double ns) {
  if (qc.tracing && qc.nsp < 4096) {
    qc.sp[qc.nsp].start = (uint64_t)qc.dev;
    qc.sp[qc.nsp].end = (uint64_t)(qc.dev + ns);
    qc.nsp++;
  }
}

/* A flush costs its gap and its time on the synthetic device (and qc.wb
 * more after a call); the tracer sees no kernel (a memset is not one)
 * unless qc.trace_flush. */
static void qc_flush(void) {
  double ns = QC_FLUSH + (qc.dirty ? qc.wb : 0.0);
  qc.dev += QC_FGAP;
  if (qc.trace_flush)
    qc_span(ns);
  qc.dev += ns;
  qc.dirty = 0;
  qc.flushes++;
}

static int qc_memset(zlb_backend_t *b, void *p, int value, size_t bytes, zlb_stream_t s,
                     zlb_error_t *err) {
  (void)b;
  qc_flush();
  return qc.inner->v->memset_async(qc.inner, p, value, bytes, s, err);
}

static int qc_event_create(zlb_backend_t *b, zlb_event_t *ev, zlb_error_t *err) {
  int rc = qc.inner->v->event_create(qc.inner, ev, err);
  (void)b;
  qc.created += !rc;
  return rc;
}

static void qc_event_destroy(zlb_backend_t *b, zlb_event_t ev) {
  (void)b;
  qc.destroyed++;
  qc.inner->v->event_destroy(qc.inner, ev);
}

static int qc_hold(zlb_backend_t *b, zlb_stream_t s, zlb_hold_t *h, zlb_error_t *err) {
  (void)b;
  qc.batch = 1;
  return qc.inner->v->stream_hold(qc.inner, s, h, err);
}

static int qc_record(zlb_backend_t *b, zlb_event_t ev, zlb_stream_t s, zlb_error_t *err) {
  int i;
  (void)b;
  (void)s;
  (void)err;
  if (qc.batch == 2)
    qc.dev += QC_FIXED;
  if (qc.batch == 1)
    qc.batch = 2;
  for (i = 0; i < qc.nev && qc.ev[i] != ev; i++)
    ;
  if (i == qc.nev) {
    assert_true(qc.nev < QC_EVENTS);
    qc.ev[qc.nev++] = ev;
  }
  qc.at[i] = qc.dev;
  return 0;
}

static double qc_at(zlb_event_t ev) {
  for (int i = 0; i < qc.nev; i++)
    if (qc.ev[i] == ev)
      return qc.at[i];
  fail_msg("%s", "elapsed time asked of an event never recorded");
  return 0;
}

static int qc_elapsed(zlb_backend_t *b, zlb_event_t a, zlb_event_t z, double *ms,
                      zlb_error_t *err) {
  (void)b;
  (void)err;
  *ms = (qc_at(z) - qc_at(a)) * 1e-6;
  return 0;
}

static int qc_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  (void)ctx;
  (void)s;
  (void)err;
  qc.dev += QC_GAP + (qc.tracing ? qc.trace_cost : 0.0) + qc.call_ns;
  qc.dirty = 1;
  qc.calls++;
  return 0;
}

static int qc_empty(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  (void)s;
  (void)err;
  qc.dev += QC_GAP + (qc.tracing ? qc.trace_cost : 0.0);
  qc.empties++;
  if (qc.tracing && qc.drop > 0)
    qc.drop--;
  else
    for (int i = 0; i <= qc.twice; i++)
      qc_span(qc.empty_seen > 0 ? qc.empty_seen : QC_EMPTY);
  qc.dev += QC_EMPTY;
  return 0;
}

static int qc_trace_begin(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  (void)err;
  qc.tracing = 1;
  qc.nsp = 0;
  return 0;
}

static int qc_trace_now(zlb_backend_t *b, uint64_t *ns, zlb_error_t *err) {
  (void)b;
  (void)err;
  qc.dev += 1.0;
  *ns = (uint64_t)qc.dev;
  return 0;
}

static int qc_trace_end(zlb_backend_t *b, zlb_trace_span_t **sp, size_t *n, zlb_error_t *err) {
  (void)b;
  (void)err;
  qc.tracing = 0;
  *sp = malloc((qc.nsp ? qc.nsp : 1) * sizeof(**sp));
  memcpy(*sp, qc.sp, qc.nsp * sizeof(**sp));
  *n = qc.nsp;
  return 0;
}

/* One queue measurement on the synthetic device; 0 or the timer's code. */
static int qc_measure(zlb_backend_t *qb, zlb_stream_t s, int calibrate, zlb_measurement_t *m,
                      zlb_error_t *e) {
  zlb_launch_t l = {.call = qc_call};
  zlb_timing_opts_t o = queue_opts();
  zlb_graph_failure_t fail;
  o.queue_calibrate = calibrate;
  o.l2_cold = qc.cold != NULL;
  o.l2_flush = qc.cold;
  if (qc.max_launches > 0)
    o.queue_max_launches = qc.max_launches;
  memset(m, 0, sizeof(*m));
  qc.nev = 0;
  qc.empties = 0;
  qc.calls = 0;
  qc.flushes = 0;
  return zlb_time_queue(qb, s, &l, &o, m, &fail, e);
}

/* The measurement's value and every sample are `want_ns` of the synthetic
 * device's time (what a calibrated queue timer leaves of a call). */
static void qc_assert_all(const zlb_measurement_t *m, double want_ns) {
  assert_true(fabs(m->value_ms * 1e6 - want_ns) < 1e-3);
  for (size_t i = 0; i < m->nsamples; i++)
    assert_true(fabs(m->samples[i] * 1e6 - want_ns) < 1e-3);
}

/* A calibrated measurement refused with `want` before any call is made. */
static void qc_refused(zlb_backend_t *qb, zlb_stream_t s, const char *want) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_measurement_t m;
  assert_int_equal(qc_measure(qb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, want);
  assert_int_equal(qc.calls, 0);
  zlb_measurement_release(&m);
}

static void test_queue_calibrate(void **state) {
  zlb_backend_t *b = test_backend(), qb = *b;
  zlb_backend_vtbl_t v = *b->v;
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_measurement_t m;
  double k;
  (void)state;
  memset(&qc, 0, sizeof(qc));
  qc.inner = b;
  qc.call_ns = QC_CALL;
  v.stream_hold = qc_hold;
  v.event_record = qc_record;
  v.event_elapsed = qc_elapsed;
  v.launch_empty = qc_empty;
  v.trace_begin = qc_trace_begin;
  v.trace_now = qc_trace_now;
  v.trace_end = qc_trace_end;
  v.trace_available = NULL;
  v.memset_async = qc_memset;
  v.event_create = qc_event_create;
  v.event_destroy = qc_event_destroy;
  qb.v = &v;
  assert_int_equal(qb.v->stream_create(&qb, &s, &e), 0);

  /* Uncalibrated: the launch gap and the batch's fixed cost are in. */
  if (qc_measure(&qb, s, 0, &m, &e))
    fail_msg("queue timer: %s", e.msg);
  k = (double)m.queue_launches;
  assert_true(k > 1);
  assert_true(fabs(m.value_ms * 1e6 - (QC_CALL + QC_GAP + QC_FIXED / k)) < 1e-3);
  assert_int_equal(m.queue_calibrated, 0);
  assert_int_equal(qc.empties, 0);
  zlb_measurement_release(&m);

  /* Calibrated: exactly the call's kernel time, and what was subtracted
   * (warm: one event pair a batch). */
  if (qc_measure(&qb, s, 1, &m, &e))
    fail_msg("calibrated queue timer: %s", e.msg);
  k = (double)m.queue_launches;
  qc_assert_all(&m, QC_CALL);
  assert_int_equal(m.queue_calibrated, 1);
  assert_int_equal(m.queue_call_events, 0);
  assert_true(fabs(m.queue_calibration_ms * 1e6 - (QC_GAP + QC_FIXED / k)) < 1e-3);
  assert_true(fabs(m.calibration_traced_ms - m.queue_calibration_ms) < 1e-9);
  /* One untraced launch, then 9 batches of K traced and 9 untraced. */
  assert_int_equal(qc.empties, 1 + 18 * (long)k);
  zlb_measurement_release(&m);

  /* A tracer that adds to every launch: only the empty kernels' own time
   * comes from the traced batches, their batches' times from untraced
   * ones, so the call's time is still exact; the traced batches'
   * calibration (recorded) holds the tracer's cost. */
  qc.trace_cost = 300.0;
  if (qc_measure(&qb, s, 1, &m, &e))
    fail_msg("calibrated queue timer, tracing costs: %s", e.msg);
  k = (double)m.queue_launches;
  qc_assert_all(&m, QC_CALL);
  assert_true(fabs(m.queue_calibration_ms * 1e6 - (QC_GAP + QC_FIXED / k)) < 1e-3);
  assert_true(fabs(m.calibration_traced_ms * 1e6 - (QC_GAP + qc.trace_cost + QC_FIXED / k)) <
              1e-3);
  zlb_measurement_release(&m);
  qc.trace_cost = 0.0;

  /* A tracer that loses a kernel: the calibration cannot be trusted. */
  qc.drop = 1;
  assert_int_equal(qc_measure(&qb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "the tracer saw");
  zlb_measurement_release(&m);
  qc.drop = 0;

  /* Kernels the tracer says ran longer than their batch: an error, not a
   * negative calibration. */
  qc.empty_seen = QC_EMPTY + 2 * QC_GAP + QC_FIXED;
  assert_int_equal(qc_measure(&qb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "disagree");
  zlb_measurement_release(&m);
  qc.empty_seen = 0;

  /* A call that costs the device less than an empty launch (the synthetic
   * device allows it; rounding could make exactly as much read as a hair
   * above): an error, and the measurement keeps no value, no samples, no
   * calibration. */
  qc.call_ns = -200.0;
  assert_int_equal(qc_measure(&qb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "nothing is left to report");
  assert_int_equal(m.nsamples, 0);
  assert_int_equal(m.queue_calibrated, 0);
  zlb_measurement_release(&m);
  qc.call_ns = QC_CALL;

  /* Cold L2, uncalibrated: the flush alone is subtracted, the call's
   * launch gap stays (the batch's fixed cost is in both and cancels). */
  {
    char buf[64];
    zlb_flush_t fl = {buf, sizeof(buf)};
    int plain_events;
    qc.cold = &fl;
    qc.created = qc.destroyed = 0;
    if (qc_measure(&qb, s, 0, &m, &e))
      fail_msg("cold queue timer: %s", e.msg);
    plain_events = qc.created;
    assert_int_equal(m.queue_call_events, 0);
    k = (double)m.queue_launches;
    assert_true(fabs(m.value_ms * 1e6 - (QC_CALL + QC_GAP)) < 1e-3);
    assert_int_equal(m.l2_cold, 1);
    assert_true(fabs(m.l2_flush_ms * 1e6 - (QC_FGAP + QC_FLUSH + QC_FIXED / k)) < 1e-3);
    assert_int_equal(qc.empties, 0);
    zlb_measurement_release(&m);

    /* Cold and calibrated: every call and every empty kernel of the
     * calibration is flushed, then timed between its own event pair, so
     * the calibration is the gap in front of a kernel and the end event's
     * time (no flush, no share of a batch's fixed cost), and the call's
     * kernel time is what is left. The flush's own time is recorded. */
    qc.created = qc.destroyed = 0;
    if (qc_measure(&qb, s, 1, &m, &e))
      fail_msg("cold calibrated queue timer: %s", e.msg);
    k = (double)m.queue_launches;
    qc_assert_all(&m, QC_CALL);
    assert_int_equal(m.queue_calibrated, 1);
    assert_int_equal(m.queue_call_events, 1);
    assert_true(fabs(m.queue_calibration_ms * 1e6 - (QC_GAP + QC_FIXED)) < 1e-3);
    assert_int_equal(m.l2_cold, 1);
    assert_true(m.l2_flush_bytes == sizeof(buf));
    assert_true(fabs(m.l2_flush_ms * 1e6 - (QC_FGAP + QC_FLUSH + QC_FIXED / k)) < 1e-3);
    /* Every empty kernel of the 18 batches had its flush in front. */
    assert_true(qc.flushes >= 18 * (long)k + (long)m.nsamples * (long)k);
    /* A pair for each call of a batch besides the plain timer's events,
     * all destroyed. */
    assert_int_equal(qc.created, plain_events + 2 * (int)k);
    assert_int_equal(qc.destroyed, qc.created);
    zlb_measurement_release(&m);

    /* A flush after a call costs more than one after an empty kernel or
     * a flush (it writes the call's output back): what a batch of
     * flushes and calls holds beyond the calibration's batches, which
     * the plain cold timer keeps in its value; with the calls' own pairs
     * it is outside every timed interval. */
    qc.wb = 4000.0;
    if (qc_measure(&qb, s, 0, &m, &e))
      fail_msg("cold queue timer, write-back: %s", e.msg);
    assert_true(fabs(m.value_ms * 1e6 - (QC_CALL + QC_GAP + qc.wb)) < 1e-3);
    assert_int_equal(m.queue_call_events, 0);
    zlb_measurement_release(&m);
    if (qc_measure(&qb, s, 1, &m, &e))
      fail_msg("cold calibrated queue timer, write-back: %s", e.msg);
    qc_assert_all(&m, QC_CALL);
    zlb_measurement_release(&m);
    qc.wb = 0.0;

    /* A tracer that reports each flush as a kernel too: the empty kernels
     * are told from them (each after its flush, shorter), the same
     * calibration; with tracing's cost on every launch as well. */
    qc.trace_flush = 1;
    if (qc_measure(&qb, s, 1, &m, &e))
      fail_msg("cold calibrated queue timer, flushes traced: %s", e.msg);
    qc_assert_all(&m, QC_CALL);
    assert_true(fabs(m.queue_calibration_ms * 1e6 - (QC_GAP + QC_FIXED)) < 1e-3);
    zlb_measurement_release(&m);
    qc.trace_cost = 300.0;
    if (qc_measure(&qb, s, 1, &m, &e))
      fail_msg("cold calibrated queue timer, tracing costs: %s", e.msg);
    qc_assert_all(&m, QC_CALL);
    assert_true(fabs(m.queue_calibration_ms * 1e6 - (QC_GAP + QC_FIXED)) < 1e-3);
    assert_true(fabs(m.calibration_traced_ms * 1e6 - (QC_GAP + qc.trace_cost + QC_FIXED)) <
                1e-3);
    zlb_measurement_release(&m);
    qc.trace_cost = 0.0;
    qc.trace_flush = 0;

    /* With its two events a cold calibrated call takes twice the launch
     * queue's entries of a plain cold one: at most half the calls. */
    qc.max_launches = 9;
    if (qc_measure(&qb, s, 0, &m, &e))
      fail_msg("cold queue timer, 9 launches: %s", e.msg);
    assert_int_equal(m.queue_launches, 9);
    zlb_measurement_release(&m);
    if (qc_measure(&qb, s, 1, &m, &e))
      fail_msg("cold calibrated queue timer, 9 launches: %s", e.msg);
    assert_int_equal(m.queue_launches, 5);
    qc_assert_all(&m, QC_CALL);
    zlb_measurement_release(&m);
    qc.max_launches = 0;
    qc.cold = NULL;
  }

  /* No empty kernel, no tracer: errors naming what is missing, before
   * any call is made. */
  v.launch_empty = NULL;
  qc_refused(&qb, s, "no empty kernel");
  v.launch_empty = qc_empty;
  v.trace_begin = NULL;
  qc_refused(&qb, s, "no kernel activity tracer");
  qb.v->stream_destroy(&qb, s);
}

/*
 * The calibrated cold graph timer on the same synthetic device, with
 * graphs: a capture records the flushes, calls, empty kernels and event
 * nodes instead of running them, and a replay runs them on the device
 * clock after GC_LAUNCH ns of its own. A flush after a call costs qc.wb
 * more (negative: less, when the call evicted the last flush's dirty
 * lines and left fewer to write back). The plain cold graph timer
 * subtracts a flush-only graph, so it reads CALL + GAP + wb; the
 * calibrated one times each call between its own nodes and subtracts the
 * gap an empty kernel's nodes hold (GAP): CALL exactly, whatever wb is.
 */
#define GC_LAUNCH 2500.0
#define GC_OPS 8192
typedef struct gc_op {
  char kind; /* 'f' flush, 'c' call, 'e' empty kernel, 'n' event node */
  zlb_event_t ev;
} gc_op_t;
typedef struct gc_graph {
  int n;
  gc_op_t op[GC_OPS];
} gc_graph_t;
static struct {
  int capturing;
  gc_graph_t rec; /* what the capture in progress recorded */
  int graphs;     /* graphs and executables alive */
} gc;

static int gc_add(char kind, zlb_event_t ev) {
  assert_true(gc.rec.n < GC_OPS);
  gc.rec.op[gc.rec.n].kind = kind;
  gc.rec.op[gc.rec.n].ev = ev;
  gc.rec.n++;
  return 0;
}

static int gc_memset(zlb_backend_t *b, void *p, int value, size_t bytes, zlb_stream_t s,
                     zlb_error_t *err) {
  return gc.capturing ? gc_add('f', NULL) : qc_memset(b, p, value, bytes, s, err);
}

static int gc_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  return gc.capturing ? gc_add('c', NULL) : qc_call(ctx, s, err);
}

static int gc_empty(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  return gc.capturing ? gc_add('e', NULL) : qc_empty(b, s, err);
}

static int gc_node(zlb_backend_t *b, zlb_event_t ev, zlb_stream_t s, zlb_error_t *err) {
  return gc.capturing ? gc_add('n', ev) : qc_record(b, ev, s, err);
}

static int gc_begin(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  (void)s;
  (void)err;
  gc.capturing = 1;
  gc.rec.n = 0;
  return 0;
}

static int gc_end(zlb_backend_t *b, zlb_stream_t s, zlb_graph_t *g, zlb_error_t *err) {
  gc_graph_t *copy = malloc(sizeof(*copy));
  (void)b;
  (void)s;
  (void)err;
  assert_non_null(copy);
  *copy = gc.rec;
  gc.capturing = 0;
  gc.graphs++;
  *g = (zlb_graph_t)copy;
  return 0;
}

static int gc_instantiate(zlb_backend_t *b, zlb_graph_t g, zlb_graph_exec_t *x,
                          zlb_error_t *err) {
  gc_graph_t *copy = malloc(sizeof(*copy));
  (void)b;
  (void)err;
  assert_non_null(copy);
  *copy = *(gc_graph_t *)g;
  gc.graphs++;
  *x = (zlb_graph_exec_t)copy;
  return 0;
}

static int gc_launch(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t s, zlb_error_t *err) {
  const gc_graph_t *g = (const gc_graph_t *)x;
  int rc = 0;
  qc.dev += GC_LAUNCH;
  for (int i = 0; i < g->n && !rc; i++) {
    switch (g->op[i].kind) {
    case 'f':
      qc_flush();
      break;
    case 'c':
      rc = qc_call(NULL, s, err);
      break;
    case 'e':
      rc = qc_empty(b, s, err);
      break;
    default:
      rc = qc_record(b, g->op[i].ev, s, err);
    }
  }
  return rc;
}

static void gc_graph_destroy(zlb_backend_t *b, zlb_graph_t g) {
  (void)b;
  gc.graphs--;
  free(g);
}

static void gc_exec_destroy(zlb_backend_t *b, zlb_graph_exec_t x) {
  (void)b;
  gc.graphs--;
  free(x);
}

/* One cold graph measurement on the synthetic device; 0 or the timer's code. */
static int gc_measure(zlb_backend_t *gb, zlb_stream_t s, int calibrate, zlb_measurement_t *m,
                      zlb_error_t *e) {
  zlb_launch_t l = {.call = gc_call};
  zlb_timing_opts_t o = quick_opts();
  zlb_graph_failure_t fail;
  o.graph_calibrate = calibrate;
  o.l2_cold = 1;
  o.l2_flush = qc.cold;
  memset(m, 0, sizeof(*m));
  qc.nev = 0;
  qc.empties = 0;
  qc.calls = 0;
  qc.flushes = 0;
  return zlb_time_graph(gb, s, &l, &o, m, &fail, e);
}

static void test_graph_calibrate(void **state) {
  zlb_backend_t *b = test_backend(), gb = *b;
  zlb_backend_vtbl_t v = *b->v;
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_measurement_t m;
  char buf[64];
  zlb_flush_t fl = {buf, sizeof(buf)};
  static const double wbs[] = {0.0, 4000.0, -3000.0};
  (void)state;
  memset(&qc, 0, sizeof(qc));
  memset(&gc, 0, sizeof(gc));
  qc.inner = b;
  qc.call_ns = QC_CALL;
  qc.cold = &fl;
  v.event_record = qc_record;
  v.event_elapsed = qc_elapsed;
  v.event_create = qc_event_create;
  v.event_destroy = qc_event_destroy;
  v.launch_empty = gc_empty;
  v.event_record_node = gc_node;
  v.memset_async = gc_memset;
  v.capture_begin = gc_begin;
  v.capture_end = gc_end;
  v.graph_instantiate = gc_instantiate;
  v.graph_launch = gc_launch;
  v.graph_destroy = gc_graph_destroy;
  v.graph_exec_destroy = gc_exec_destroy;
  v.trace_begin = qc_trace_begin;
  v.trace_now = qc_trace_now;
  v.trace_end = qc_trace_end;
  v.trace_available = NULL;
  gb.v = &v;
  assert_int_equal(gb.v->stream_create(&gb, &s, &e), 0);

  for (size_t i = 0; i < sizeof(wbs) / sizeof(wbs[0]); i++) {
    long k;
    qc.wb = wbs[i];
    /* Plain cold: the flush-only graph is subtracted, and what a flush
     * costs after the call beyond a flush after a flush stays in. */
    if (gc_measure(&gb, s, 0, &m, &e))
      fail_msg("cold graph timer, wb %.0f: %s", qc.wb, e.msg);
    assert_true(fabs(m.value_ms * 1e6 - (QC_CALL + QC_GAP + qc.wb)) < 1e-3);
    assert_int_equal(m.graph_calibrated, 0);
    assert_int_equal(qc.empties, 0);
    zlb_measurement_release(&m);

    /* Calibrated: the call's own time, every sample, whatever wb is. */
    qc.created = qc.destroyed = 0;
    if (gc_measure(&gb, s, 1, &m, &e))
      fail_msg("calibrated cold graph timer, wb %.0f: %s", qc.wb, e.msg);
    qc_assert_all(&m, QC_CALL);
    assert_int_equal(m.graph_calibrated, 1);
    assert_true(fabs(m.graph_calibration_ms * 1e6 - QC_GAP) < 1e-3);
    assert_int_equal(m.l2_cold, 1);
    assert_true(m.l2_flush_bytes == sizeof(buf));
    /* The flush alone is recorded: its gap and time (replays of flushes
     * after flushes; the graph's own launch spread over K). */
    k = m.graph_launches;
    assert_true(k >= 1);
    assert_true(fabs(m.l2_flush_ms * 1e6 - (QC_FGAP + QC_FLUSH + GC_LAUNCH / (double)k)) <
                1e-3);
    /* One untimed empty kernel, then the calibration graph's upload, 9
     * traced replays of K and 9 untraced. */
    assert_int_equal(qc.empties, 1 + 19 * k);
    assert_int_equal(qc.destroyed, qc.created);
    assert_int_equal(gc.graphs, 0);
    zlb_measurement_release(&m);
  }
  qc.wb = 0.0;

  /* A tracer that loses a kernel: an error, no value. */
  qc.drop = 1;
  assert_int_equal(gc_measure(&gb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "graph calibration: the tracer saw");
  assert_int_equal(m.nsamples, 0);
  zlb_measurement_release(&m);
  qc.drop = 0;

  /* A tracer that reports each flush as a kernel too (CUPTI did, for a
   * graph's memset nodes, on an H100): the empty kernels are told from
   * the flushes by their order and length, the same calibration, every
   * sample the call's. */
  qc.trace_flush = 1;
  if (gc_measure(&gb, s, 1, &m, &e))
    fail_msg("calibrated cold graph timer, flushes traced: %s", e.msg);
  qc_assert_all(&m, QC_CALL);
  assert_true(fabs(m.graph_calibration_ms * 1e6 - QC_GAP) < 1e-3);
  assert_true(fabs(m.calibration_traced_ms - m.graph_calibration_ms) < 1e-9);
  zlb_measurement_release(&m);
  /* ... but not when what follows each flush lasts longer than it: then
   * nothing tells them apart. */
  qc.empty_seen = QC_FLUSH + 1000.0;
  assert_int_equal(gc_measure(&gb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "graph calibration: the tracer saw");
  assert_str_contains(e.msg, "and their flushes");
  zlb_measurement_release(&m);
  qc.empty_seen = 0;
  /* Tracing that adds to every launch (the flushes still traced): the
   * replays' pairs come from untraced replays, the call's time stays
   * exact, the traced replays' calibration (recorded) holds the cost. */
  qc.trace_cost = 300.0;
  if (gc_measure(&gb, s, 1, &m, &e))
    fail_msg("calibrated cold graph timer, tracing costs: %s", e.msg);
  qc_assert_all(&m, QC_CALL);
  assert_true(fabs(m.graph_calibration_ms * 1e6 - QC_GAP) < 1e-3);
  assert_true(fabs(m.calibration_traced_ms * 1e6 - (QC_GAP + qc.trace_cost)) < 1e-3);
  zlb_measurement_release(&m);
  qc.trace_cost = 0.0;
  qc.trace_flush = 0;
  /* Twice as many spans that are not flushes (each kernel reported
   * twice, overlapping itself): refused, not halved. */
  qc.twice = 1;
  assert_int_equal(gc_measure(&gb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "graph calibration: the tracer saw");
  zlb_measurement_release(&m);
  qc.twice = 0;

  /* Empty kernels the tracer says ran longer than their pairs. */
  qc.empty_seen = QC_EMPTY + 2 * QC_GAP;
  assert_int_equal(gc_measure(&gb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "disagree");
  zlb_measurement_release(&m);
  qc.empty_seen = 0;

  /* A call that costs the device less than an empty kernel's gap. */
  qc.call_ns = -QC_GAP;
  assert_int_equal(gc_measure(&gb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "nothing is left to report");
  assert_int_equal(m.nsamples, 0);
  assert_int_equal(m.graph_calibrated, 0);
  zlb_measurement_release(&m);
  qc.call_ns = QC_CALL;

  /* Asked warm: an error before anything runs. */
  {
    zlb_launch_t l = {.call = gc_call};
    zlb_timing_opts_t o = quick_opts();
    zlb_graph_failure_t fail;
    o.graph_calibrate = 1;
    memset(&m, 0, sizeof(m));
    qc.calls = 0;
    assert_int_equal(zlb_time_graph(&gb, s, &l, &o, &m, &fail, &e), ZLB_EINVAL);
    assert_str_contains(e.msg, "needs cold L2");
    assert_int_equal(qc.calls, 0);
    zlb_measurement_release(&m);
  }

  /* What the backend lacks is named, before any call is made. */
  v.event_record_node = NULL;
  assert_int_equal(gc_measure(&gb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "cannot record a timed event as a node of a graph");
  assert_int_equal(qc.calls, 0);
  zlb_measurement_release(&m);
  v.event_record_node = gc_node;
  v.launch_empty = NULL;
  assert_int_equal(gc_measure(&gb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "no empty kernel");
  zlb_measurement_release(&m);
  v.launch_empty = gc_empty;
  v.trace_end = NULL;
  assert_int_equal(gc_measure(&gb, s, 1, &m, &e), ZLB_EUNSUPPORTED);
  assert_str_contains(e.msg, "no kernel activity tracer");
  zlb_measurement_release(&m);
  gb.v->stream_destroy(&gb, s);
}

/* Where the stream cannot be held, each shape falls back to the direct
 * timer with a marker saying why: a backend without holds, a call that
 * waits for the device from the host, a hold the backend refuses. A fatal
 * hold failure is an error with no value. */
static void test_queue_fallback(void **state) {
  zlb_backend_t *host = NULL, *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 20, 0};
  zlb_launch_t l = {.call = fake_call, .ctx = &f};
  zlb_timing_opts_t o = queue_opts();
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  char marker[256];
  (void)state;

  assert_int_equal(zlb_backend_open_name("host", &host, &e), 0);
  assert_int_equal(zlb_backend_select_device(host, 0, &e), 0);
  assert_null(host->v->stream_hold);
  assert_int_equal(host->v->stream_create(host, &s, &e), 0);
  memset(&m, 0, sizeof(m));
  assert_int_equal(zlb_time_case(host, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), 0);
  assert_string_equal(marker, "fallback(phase=hold,reason=UNSUPPORTED,repeat=1)");
  assert_int_equal(m.timer, ZLB_TIMER_DIRECT);
  assert_true(m.nsamples > 0 && m.value_ms > 0);
  assert_int_equal(m.queue_launches, 0);
  zlb_measurement_release(&m);
  host->v->stream_destroy(host, s);
  zlb_backend_close(host);

  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  l.host_sync = 1;
  o.repeat = 2;
  memset(&m, 0, sizeof(m));
  assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), 0);
  assert_string_equal(marker, "fallback(phase=hold,reason=HOST_SYNC,repeat=2)");
  assert_int_equal(m.timer, ZLB_TIMER_DIRECT);
  assert_int_equal(m.ncalls, 2);
  zlb_measurement_release(&m);
  l.host_sync = 0;
  o.repeat = 1;

  setenv("ZL_TEST_FAULT", "hold:refused", 1);
  memset(&m, 0, sizeof(m));
  assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), 0);
  assert_string_equal(marker, "fallback(phase=hold,reason=TEST_ERROR_NOT_SUPPORTED,repeat=1)");
  assert_int_equal(m.timer, ZLB_TIMER_DIRECT);
  zlb_measurement_release(&m);

  setenv("ZL_TEST_FAULT", "hold:fatal", 1);
  memset(&m, 0, sizeof(m));
  assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), ZLB_EFATAL);
  unsetenv("ZL_TEST_FAULT");
  assert_int_equal(fail.phase, ZLB_PHASE_HOLD);
  assert_int_equal(fail.verdict, ZLB_VERDICT_FATAL);
  assert_int_equal(m.nsamples, 0);
  zlb_measurement_release(&m);
  b->v->stream_destroy(b, s);
}

/* A hold the normal path never releases must not hang the process: with
 * no room in the launch queue the first enqueue behind the hold blocks,
 * the watchdog releases the hold after the timeout, the batch is
 * discarded, and after three such batches the shape falls back. With a
 * queue of 40 entries, batches of 256 and then 64 calls block, and 16 fit:
 * the measurement completes with K = 16 and two discarded batches. */
static void test_queue_watchdog(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  struct fake f = {0, 0, 0, 0, 0, 0, 0};
  zlb_launch_t l = {.call = queued_call, .ctx = &f};
  zlb_timing_opts_t o = queue_opts();
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  char marker[256];
  double t0, measured;
  (void)state;
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  o.queue_max_launches = 256;
  o.queue_batch_ms = 100; /* K starts at the cap whatever the estimate */

  setenv("ZL_TEST_QUEUE_DEPTH", "0", 1);
  memset(&m, 0, sizeof(m));
  t0 = zlb_now_s();
  assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker,
                                 sizeof(marker), &fail, &e), 0);
  /* Three timeouts of 30 ms, then the direct timer: well under 2 s. */
  assert_true(zlb_now_s() - t0 < 2.0);
  assert_string_equal(marker, "fallback(phase=hold,reason=HOLD_TIMEOUT,repeat=1)");
  assert_int_equal(m.timer, ZLB_TIMER_DIRECT);
  assert_true(m.nsamples > 0);
  zlb_measurement_release(&m);

  setenv("ZL_TEST_QUEUE_DEPTH", "40", 1);
  memset(&m, 0, sizeof(m));
  if (zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker, sizeof(marker),
                    &fail, &e))
    fail_msg("queue timer with a 40-entry queue: %s", e.msg);
  unsetenv("ZL_TEST_QUEUE_DEPTH");
  assert_string_equal(marker, "-");
  assert_int_equal(m.timer, ZLB_TIMER_QUEUE);
  assert_int_equal(m.invalid_batches, 2);
  assert_int_equal(m.queue_launches, 16);
  assert_true(m.batches >= o.queue_min_batches);
  assert_str_contains(m.note, "K reduced from 256 to 16");
  zlb_measurement_release(&m);

  /* A budget of the minimum batches: the two discarded ones do not count
   * against it. */
  o.rep_ms = 1e-6;
  setenv("ZL_TEST_QUEUE_DEPTH", "40", 1);
  memset(&m, 0, sizeof(m));
  if (zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker, sizeof(marker),
                    &fail, &e))
    fail_msg("queue timer with a 40-entry queue: %s", e.msg);
  unsetenv("ZL_TEST_QUEUE_DEPTH");
  assert_int_equal(m.invalid_batches, 2);
  if (m.batches < o.queue_min_batches)
    fail_msg("%d timed batches, want at least %d besides the 2 discarded", m.batches,
             o.queue_min_batches);
  zlb_measurement_release(&m);

  /* The noise stop's min_time_ms after the shrink: the samples are then
   * means of 16 calls and count as 16 calls each, not as the first K's
   * 256 (which met 40 ms after 3 ms of calls). */
  f.spin_us = 20;
  o.rep_ms = 1.0;
  o.stop = ZLB_STOP_NOISE;
  o.max_noise = 1e9;
  o.min_samples = 5;
  o.min_time_ms = 40.0;
  o.timeout_ms = 20000;
  setenv("ZL_TEST_QUEUE_DEPTH", "40", 1);
  memset(&m, 0, sizeof(m));
  if (zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker, sizeof(marker),
                    &fail, &e))
    fail_msg("queue timer: %s", e.msg);
  unsetenv("ZL_TEST_QUEUE_DEPTH");
  assert_int_equal(m.queue_launches, 16);
  /* What the rule counts: every sample (a batch's mean per call) as K
   * calls. Counted as the first K's 256 calls, about 8 samples would have
   * met 40 ms: 2.6 ms by this sum. (Not the median times the batches: a
   * loaded host's preempted batches raise the sum, not the median.) */
  measured = 0;
  for (size_t i = 0; i < m.nsamples; i++)
    measured += m.samples[i];
  measured *= m.queue_launches;
  if (m.nsamples < 5 || measured < o.min_time_ms)
    fail_msg("stopped after %zu samples of K=%d at %.4f ms a call: %.2f ms of calls, "
             "min_time_ms %.0f", m.nsamples, m.queue_launches, m.value_ms, measured,
             o.min_time_ms);
  zlb_measurement_release(&m);
  b->v->stream_destroy(b, s);
}

static void test_noise_stat(void **state) {
  double flat[6] = {1, 1, 1, 1, 1, 1}, v[4] = {1, 2, 3, 4}, w[5] = {2, 4, 4, 4, 6};
  (void)state;
  assert_true(zlb_stats_noise(flat, 6) == 0.0);
  assert_true(isnan(zlb_stats_noise(v, 4))); /* under 5 samples: unknown */
  assert_true(fabs(zlb_stats_noise(w, 5) - sqrt(2.0) / 4.0) < 1e-12);
}

/* --l2 cold: the graph and queue timers flush before every call and take
 * the flush's own time, measured alone, out of every sample. The test
 * backend's memset costs at least ZL_TEST_MEMSET_US (400 us) and a call
 * 100 us, so a sample with the flush left in is 500 us or more: a value
 * under 300 us shows the subtraction, whose flush time is at least
 * 400 us. Busy-waits only ever run long, so a preempted call can push
 * the value up (on a loaded 2-core machine a 150 us bound was missed):
 * the margin is 200 us either way, and three attempts. */
static void test_l2_cold_subtracts_flush(void **state) {
  static const zlb_timer_kind_t timers[] = {ZLB_TIMER_GRAPH, ZLB_TIMER_QUEUE};
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_flush_t fl;
  (void)state;
  reset_poison();
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  assert_int_equal(zlb_flush_init(&fl, b, 4096, &e), 0);
  setenv("ZL_TEST_MEMSET_US", "400", 1);
  for (size_t t = 0; t < 2; t++) {
    double best = INFINITY;
    for (int attempt = 0; attempt < 5 && !(best < 0.3); attempt++) {
      struct fake f = {0, 0, 0, 0, 0, 100, 0};
      zlb_launch_t l = {.call = fake_call, .ctx = &f};
      zlb_timing_opts_t o = quick_opts();
      zlb_measurement_t m;
      zlb_graph_failure_t fail;
      char marker[256];
      memset(&m, 0, sizeof(m));
      o.l2_cold = 1;
      o.l2_flush = &fl;
      /* A flush-alone measurement preempted more than the calls' can leave
       * nothing to report (an error, tested below): another attempt. */
      if (zlb_time_case(b, s, &l, timers[t], 0, &o, NULL, &m, marker, sizeof(marker), &fail,
                        &e)) {
        if (attempt < 4 && strstr(e.msg, "nothing is left to report")) {
          zlb_measurement_release(&m);
          continue;
        }
        fail_msg("%s, cold: %s", zlb_timer_name(timers[t]), e.msg);
      }
      assert_string_equal(marker, "-");
      assert_int_equal(m.timer, timers[t]);
      assert_int_equal(m.l2_cold, 1);
      assert_true(m.l2_flush_bytes == 4096);
      if (!(m.l2_flush_ms >= 0.4))
        fail_msg("%s: flush alone %.6f ms, at least 0.4 expected", zlb_timer_name(timers[t]),
                 m.l2_flush_ms);
      if (m.value_ms < best)
        best = m.value_ms;
      zlb_measurement_release(&m);
    }
    if (!(best > 0.0 && best < 0.3))
      fail_msg("%s, cold: %.6f ms per call; the 0.1 ms call alone is wanted, 0.5 with the "
               "flush left in",
               zlb_timer_name(timers[t]), best);
  }
  /* Warm (the default): no flush, nothing subtracted, not marked cold. */
  {
    struct fake f = {0, 0, 0, 0, 0, 20, 0};
    zlb_launch_t l = {.call = fake_call, .ctx = &f};
    zlb_timing_opts_t o = quick_opts();
    zlb_measurement_t m;
    zlb_graph_failure_t fail;
    char marker[256];
    memset(&m, 0, sizeof(m));
    assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_GRAPH, 0, &o, NULL, &m, marker,
                                   sizeof(marker), &fail, &e),
                     0);
    assert_int_equal(m.l2_cold, 0);
    assert_true(m.l2_flush_ms == 0.0);
    zlb_measurement_release(&m);
    /* Cold without a buffer to flush is the caller's mistake. */
    o.l2_cold = 1;
    assert_int_equal(zlb_time_case(b, s, &l, ZLB_TIMER_QUEUE, 0, &o, NULL, &m, marker,
                                   sizeof(marker), &fail, &e),
                     ZLB_EINVAL);
    assert_non_null(strstr(e.msg, "cold L2 needs a flush buffer"));
    zlb_measurement_release(&m);
  }
  unsetenv("ZL_TEST_MEMSET_US");
  zlb_flush_release(&fl, b);
  b->v->stream_destroy(b, s);
}

/* A cold graph measurement whose value is not above zero once the flush is
 * subtracted fails, naming both times, instead of reporting a number: the
 * capture's flushes are made free (the scratch RNG state's guard switches
 * the test backend's memset cost off for the capture) while the
 * flush-only graph's cost 1 ms each, so the call with its flush reads
 * less than the flush alone. */
static void memset_cost_guard(void *ctx, int scratch) {
  (void)ctx;
  setenv("ZL_TEST_MEMSET_US", scratch ? "0" : "1000", 1);
}

static void test_l2_cold_nothing_left(void **state) {
  zlb_backend_t *b = test_backend();
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_flush_t fl;
  struct fake f = {0, 0, 0, 0, 0, 0, 0};
  zlb_launch_t l = {.call = fake_call, .rng_guard = memset_cost_guard, .ctx = &f};
  zlb_timing_opts_t o = quick_opts();
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  char marker[256];
  int rc;
  (void)state;
  reset_poison();
  memset(&m, 0, sizeof(m));
  assert_int_equal(b->v->stream_create(b, &s, &e), 0);
  assert_int_equal(zlb_flush_init(&fl, b, 4096, &e), 0);
  setenv("ZL_TEST_MEMSET_US", "1000", 1);
  o.l2_cold = 1;
  o.l2_flush = &fl;
  rc = zlb_time_case(b, s, &l, ZLB_TIMER_GRAPH, 0, &o, NULL, &m, marker, sizeof(marker), &fail,
                     &e);
  unsetenv("ZL_TEST_MEMSET_US");
  if (rc != ZLB_EUNSUPPORTED || !strstr(e.msg, "no more than the flush alone"))
    fail_msg("rc %s, value %.6f ms: %s", zlb_err_name(rc), m.value_ms, e.msg);
  assert_int_equal(m.nsamples, 0); /* no value reported */
  zlb_measurement_release(&m);
  zlb_flush_release(&fl, b);
  b->v->stream_destroy(b, s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_noise_stop),
      cmocka_unit_test(test_trace_needs_tracer),
      cmocka_unit_test(test_trace_attribution),
      cmocka_unit_test(test_trace_flush_queued),
      cmocka_unit_test(test_noise_stat),
      cmocka_unit_test(test_queue_sizing),
      cmocka_unit_test(test_queue_batch_order),
      cmocka_unit_test(test_queue_fallback),
      cmocka_unit_test(test_queue_watchdog),
      cmocka_unit_test(test_queue_calibrate),
      cmocka_unit_test(test_graph_calibrate),
      cmocka_unit_test(test_fallback_state_machine),
      cmocka_unit_test(test_graph_success_and_repeat_marker),
      cmocka_unit_test(test_deny_skips_attempt),
      cmocka_unit_test(test_capture_hook),
      cmocka_unit_test(test_repeat_logic),
      cmocka_unit_test(test_zero_estimate),
      cmocka_unit_test(test_primed_and_long_estimate),
      cmocka_unit_test(test_graph_budget_in_time),
      cmocka_unit_test(test_graph_warmup_counts_setup),
      cmocka_unit_test(test_graph_refused_spends_no_warmup),
      cmocka_unit_test(test_graph_triton_counts),
      cmocka_unit_test(test_flush_time),
      cmocka_unit_test(test_l2_cold_subtracts_flush),
      cmocka_unit_test(test_l2_cold_nothing_left),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
