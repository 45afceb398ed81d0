/* The timers' --integrity hook (zlb_launch_t.integrity): every timer
 * (direct, trace, graph, queue) asks it before each timed sample, checks
 * the one it chose exactly once, after that sample has run, keeps that
 * sample out of the statistics, and stops with the hook's error. Driven
 * through the test backend (tests/ops/test_backend.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlb_test.h"
#include "zlbench/base.h"
#include "zlbench/ops.h"
#include "zlbench/timing.h"

/* The checked call: 100 ms, 5000 times a normal one, and far above what a
 * descheduled process adds to a sample (a scheduler slice, ~12 ms, under
 * two busy cores), so a sample near it can only be the checked one. */
#define SLOW_NS 100000000ull
#define CALL_NS 20000ull

static struct {
  size_t at;           /* the sample to check */
  int due;             /* the hook said "this one" and the sample has not ended */
  int befores, dues, afters;
  size_t due_sample, after_sample;
  int calls_in_due;    /* calls made between the due answer and the check */
  int fail;            /* the check reports a mismatch */
  /* the fake tracer */
  zlb_trace_span_t sp[8192];
  size_t n;
} h;

static int hook(void *ctx, int after, size_t sample, zlb_stream_t s, zlb_error_t *err) {
  (void)ctx;
  (void)s;
  if (!after) {
    h.befores++;
    if (h.dues || sample < h.at)
      return 0;
    h.dues++;
    h.due = 1;
    h.due_sample = sample;
    return 1;
  }
  h.afters++;
  h.after_sample = sample;
  h.due = 0;
  if (h.fail)
    return zlb_error_set(err, ZLB_EMISMATCH, "integrity: test mismatch at %zu", sample);
  return 0;
}

/* One call: CALL_NS of host time and one traced kernel as long; the call
 * of the checked sample takes SLOW_NS (host and kernel), so a kept checked
 * sample would stand out. */
static int call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  uint64_t t0 = zlb_now_ns(), ns = h.due ? SLOW_NS : CALL_NS;
  (void)ctx;
  (void)s;
  (void)err;
  h.calls_in_due += h.due;
  if (h.n < sizeof(h.sp) / sizeof(h.sp[0])) {
    h.sp[h.n].start = t0 + 100;
    h.sp[h.n].end = t0 + 100 + ns;
    h.sp[h.n].stream = 1;
    h.n++;
  }
  while (zlb_now_ns() < t0 + ns)
    ;
  return 0;
}

static int ft_begin(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  (void)err;
  h.n = 0;
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
  *sp = malloc((h.n ? h.n : 1) * sizeof(**sp));
  memcpy(*sp, h.sp, h.n * sizeof(**sp));
  *n = h.n;
  return 0;
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

enum { T_DIRECT, T_TRACE, T_GRAPH, T_QUEUE, T_COUNT };
static const char *const names[T_COUNT] = {"direct", "trace", "graph", "queue"};

static int measure(int t, int mismatch, zlb_measurement_t *m, zlb_error_t *e) {
  zlb_backend_t *b = test_backend(), tb = *b;
  zlb_backend_vtbl_t v = *b->v;
  zlb_stream_t s;
  zlb_launch_t l = {.call = call, .integrity = hook};
  zlb_timing_opts_t o;
  zlb_graph_failure_t fail;
  int rc = 0;
  zlb_timing_opts_default(&o);
  o.warmup_ms = 0.2;
  o.rep_ms = 1.0;
  o.graph_replay_ms = 0.1;
  o.graph_min_replays = 12;
  o.queue_batch_ms = 0.1;
  o.queue_min_batches = 12;
  o.queue_timeout_ms = 1000;
  v.trace_begin = ft_begin;
  v.trace_now = ft_now;
  v.trace_end = ft_end;
  v.trace_available = NULL;
  tb.v = &v;
  memset(m, 0, sizeof(*m));
  memset(&h, 0, sizeof(h) - sizeof(h.sp) - sizeof(h.n));
  h.at = 3;
  h.fail = mismatch;
  assert_int_equal(tb.v->stream_create(&tb, &s, e), 0);
  switch (t) {
  case T_DIRECT: rc = zlb_time_direct(&tb, s, &l, &o, NULL, m, e); break;
  case T_TRACE: rc = zlb_time_trace(&tb, s, &l, &o, NULL, m, e); break;
  case T_GRAPH: rc = zlb_time_graph(&tb, s, &l, &o, m, &fail, e); break;
  default: rc = zlb_time_queue(&tb, s, &l, &o, m, &fail, e); break;
  }
  tb.v->stream_destroy(&tb, s);
  return rc;
}

/*
 * measure(), again when the timer took fewer than four samples without the
 * hook choosing one: the sample count is rep_ms / the estimate, and a
 * process descheduled while the estimate ran (two cores, many tests) can
 * leave too few for sample 3 to exist. Only then: a timer that took four
 * samples and never chose one is wrong, and the test says so.
 */
static int measure_to_sample3(int t, int mismatch, zlb_measurement_t *m, zlb_error_t *e) {
  for (int tries = 0;; tries++) {
    int rc = measure(t, mismatch, m, e);
    if (rc || h.dues || m->nsamples + (size_t)h.afters >= 4 || tries == 4)
      return rc;
    zlb_measurement_release(m);
  }
}

static void test_each_timer_checks_one_sample(void **state) {
  (void)state;
  for (int t = 0; t < T_COUNT; t++) {
    zlb_measurement_t m;
    zlb_error_t e = ZLB_ERROR_INIT;
    double most = 0;
    if (measure_to_sample3(t, 0, &m, &e))
      fail_msg("%s: %s", names[t], e.msg);
    if (h.dues != 1 || h.afters != 1 || h.due_sample != 3 || h.after_sample != 3)
      fail_msg("%s: the hook said due %d times (sample %zu) and checked %d times (sample %zu); "
               "once each at sample 3 wanted",
               names[t], h.dues, h.due_sample, h.afters, h.after_sample);
    /* Asked before every sample up to the checked one at least. */
    assert_true(h.befores >= 4);
    /* The checked sample ran its calls before the check (a graph replay
     * of the test backend runs no call: it waits as long as the capture). */
    if (t != T_GRAPH && h.calls_in_due < 1)
      fail_msg("%s: the check came before the sample's call", names[t]);
    /* ... and is not among the samples: none is as slow as its call. */
    for (size_t i = 0; i < m.nsamples; i++)
      most = m.samples[i] > most ? m.samples[i] : most;
    if (t != T_GRAPH && most > (double)SLOW_NS * 1e-6 * 0.9)
      fail_msg("%s: a sample of %.3f ms: the checked one was kept", names[t], most);
    zlb_measurement_release(&m);
  }
}

static void test_mismatch_stops_the_timer(void **state) {
  (void)state;
  for (int t = 0; t < T_COUNT; t++) {
    zlb_measurement_t m;
    zlb_error_t e = ZLB_ERROR_INIT;
    int rc = measure_to_sample3(t, 1, &m, &e);
    if (rc != ZLB_EMISMATCH || !strstr(e.msg, "integrity: test mismatch at 3"))
      fail_msg("%s: returned %d (%s), a mismatch wanted", names[t], rc, e.msg);
    zlb_measurement_release(&m);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_each_timer_checks_one_sample),
      cmocka_unit_test(test_mismatch_stops_the_timer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
