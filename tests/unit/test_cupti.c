/* The trace timer's CUPTI layer (src/device/cupti.c) against a fake
 * libcupti (tests/fake/fake_cupti.c) with another CUPTI client in the
 * process, as torch.profiler's kineto is: its buffer callbacks left
 * registered, CUPTI detached, the subscriber slot held, a buffer of its own
 * left in CUPTI, its callbacks registered during an interval. The timer
 * must see its own kernels or refuse, naming the cause, never report a
 * number from what the other client left it. And the trace timer's own
 * window (src/timing/trace.c): a span from before the interval is not the
 * first call's. */
#include "zlb_test.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device/cuda_int.h"
#include "zlbench/base.h"
#include "zlbench/device.h"
#include "zlbench/timing.h"

static void *fake;

/* The fake's controls, bound in setup. */
static void (*fake_cupti_kernel_at)(uint64_t ago_ns, uint64_t ns);
static void (*fake_cupti_kernel)(uint64_t ns);
static void (*fake_cupti_foreign_profile)(int subscribe, int flush, int finalize, int stay);
static void (*fake_cupti_foreign_register)(void);
static int (*fake_cupti_subscribed)(void);
static int (*fake_cupti_theirs_registered)(void);
static void (*fake_cupti_reset)(void);

static void bind(const char *name, void *slot, size_t size) {
  void *sym = dlsym(fake, name);
  if (!sym)
    fail_msg("%s is not in the fake CUPTI", name);
  memcpy(slot, &sym, size);
}
#define BIND(f) bind(#f, &f, sizeof(f))

static int setup(void **state) {
  const char *lib = getenv("ZLB_FAKE_CUPTI");
  (void)state;
  if (!lib || !*lib)
    fail_msg("%s", "ZLB_FAKE_CUPTI (path of the fake libcupti) is not set");
  /* cupti.c loads ZL_CUDA__CUPTI__LIB instead of the real library. */
  setenv("ZL_CUDA__CUPTI__LIB", lib, 1);
  fake = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
  if (!fake)
    fail_msg("cannot load the fake CUPTI: %s", dlerror());
  BIND(fake_cupti_kernel_at);
  BIND(fake_cupti_kernel);
  BIND(fake_cupti_foreign_profile);
  BIND(fake_cupti_foreign_register);
  BIND(fake_cupti_subscribed);
  BIND(fake_cupti_theirs_registered);
  BIND(fake_cupti_reset);
  return 0;
}

/* One interval with `kernels` kernels of 1000, 2000, ... ns: 0 with the
 * spans' durations summed in *sum, or the error. */
static int interval(int kernels, double *sum, size_t *n, zlb_error_t *e) {
  zlb_trace_span_t *sp = NULL;
  int rc;
  *sum = 0;
  *n = 0;
  if ((rc = zlb__cupti_begin(e)))
    return rc;
  for (int i = 0; i < kernels; i++)
    fake_cupti_kernel(1000u * (unsigned)(i + 1));
  if ((rc = zlb__cupti_end(&sp, n, e)))
    return rc;
  for (size_t i = 0; i < *n; i++)
    *sum += (double)(sp[i].end - sp[i].start);
  free(sp);
  return 0;
}

static void expect_kernels(int kernels, double want_ns) {
  zlb_error_t e = ZLB_ERROR_INIT;
  double sum;
  size_t n;
  if (interval(kernels, &sum, &n, &e))
    fail_msg("interval: %s", e.msg);
  assert_int_equal(n, (size_t)kernels);
  assert_true(fabs(sum - want_ns) < 0.5);
}

#define ASSERT_FOREIGN_REFUSAL(e)                                                        \
  do {                                                                                   \
    assert_str_contains((e).msg, "another CUPTI client (e.g. torch.profiler) is active " \
                                 "in this process; use --timer graph");                  \
    assert_str_contains((e).msg, "run the trace timer in a fresh process");              \
  } while (0)

static void test_plain(void **state) {
  (void)state;
  fake_cupti_reset();
  expect_kernels(2, 3000);
  expect_kernels(1, 1000);
  assert_int_equal(fake_cupti_subscribed(), 0); /* the slot is given back */
}

/* A profile that stopped but left its buffer callbacks registered (and the
 * kernel kind disabled): ours are registered again, the kind enabled. */
static void test_after_profile(void **state) {
  (void)state;
  fake_cupti_reset();
  expect_kernels(1, 1000);
  fake_cupti_foreign_profile(1, 1, 0, 0);
  expect_kernels(2, 3000);
  expect_kernels(1, 1000);
}

/* A profile that detached CUPTI at its end (kineto's teardown): CUPTI
 * forgot our callbacks. */
static void test_after_finalize(void **state) {
  (void)state;
  fake_cupti_reset();
  expect_kernels(1, 1000);
  fake_cupti_foreign_profile(1, 1, 1, 0);
  expect_kernels(3, 6000);
}

/* Another client holds the subscriber slot: refused, naming the cause,
 * and that client's callbacks are left as they are. */
static void test_foreign_subscriber(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  double sum;
  size_t n;
  (void)state;
  fake_cupti_reset();
  expect_kernels(1, 1000);
  fake_cupti_foreign_profile(1, 1, 0, 1);
  assert_int_equal(interval(1, &sum, &n, &e), ZLB_EUNAVAIL);
  ASSERT_FOREIGN_REFUSAL(e);
  assert_str_contains(e.msg, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  assert_true(fake_cupti_theirs_registered());
  assert_int_equal(fake_cupti_subscribed(), 1);
  /* Once it has gone (detached), the timer works again. */
  fake_cupti_foreign_profile(0, 1, 1, 0);
  expect_kernels(1, 1000);
}

/* Another client's buffer, with its own kernel, still in CUPTI when an
 * interval begins: not read (its kernel is not ours), not freed (it is
 * not ours to free: the fake's are static, an invalid free under ASan). */
static void test_stale_foreign_buffer(void **state) {
  (void)state;
  fake_cupti_reset();
  fake_cupti_foreign_profile(0, 0, 0, 0);
  expect_kernels(1, 1000);
}

/* Another client registers its callbacks during the interval: our buffer
 * goes to it, and the interval is refused rather than summed from
 * nothing. */
static void test_foreign_register_during_interval(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_trace_span_t *sp = NULL;
  size_t n = 0;
  (void)state;
  fake_cupti_reset();
  assert_int_equal(zlb__cupti_begin(&e), 0);
  fake_cupti_kernel(1000);
  fake_cupti_foreign_register();
  assert_int_equal(zlb__cupti_end(&sp, &n, &e), ZLB_EUNAVAIL);
  ASSERT_FOREIGN_REFUSAL(e);
  assert_null(sp);
  /* The next interval has its callbacks back. */
  expect_kernels(1, 1000);
}

/* A kernel record from well before the interval began is not its own. */
static void test_early_record(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_trace_span_t *sp = NULL;
  size_t n = 0;
  (void)state;
  fake_cupti_reset();
  assert_int_equal(zlb__cupti_begin(&e), 0);
  fake_cupti_kernel_at(50000000u, 7000); /* 50 ms before now */
  fake_cupti_kernel(2000);
  assert_int_equal(zlb__cupti_end(&sp, &n, &e), 0);
  assert_int_equal(n, 1);
  assert_true(sp[0].end - sp[0].start == 2000);
  /* The record's streamId (at byte 48 of CUpti_ActivityKernel4 and later:
   * the fake writes 7) is the span's stream, for --integrity. */
  assert_int_equal(sp[0].stream, 7);
  free(sp);
}

/* ---- the trace timer's window (trace.c) -------------------------------------------- */

/* A tracer that reports, besides each call's 20 us kernel, one stale
 * 1 ms kernel from 100 ms before the interval (another client's, or a
 * previous interval's). */
static struct {
  zlb_trace_span_t sp[4096];
  size_t n;
} st;

static int st_begin(zlb_backend_t *b, zlb_error_t *err) {
  (void)b, (void)err;
  st.n = 0;
  st.sp[st.n].start = zlb_now_ns() - 100000000u;
  st.sp[st.n].end = st.sp[st.n].start + 1000000u;
  st.n++;
  return 0;
}

static int st_now(zlb_backend_t *b, uint64_t *ns, zlb_error_t *err) {
  (void)b, (void)err;
  *ns = zlb_now_ns();
  return 0;
}

static int st_end(zlb_backend_t *b, zlb_trace_span_t **sp, size_t *n, zlb_error_t *err) {
  (void)b, (void)err;
  *sp = malloc(st.n * sizeof(**sp));
  memcpy(*sp, st.sp, st.n * sizeof(**sp));
  *n = st.n;
  return 0;
}

static int st_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  uint64_t t = zlb_now_ns() + 1000;
  (void)ctx, (void)s, (void)err;
  if (st.n < 4096) {
    st.sp[st.n].start = t;
    st.sp[st.n].end = t + 20000;
    st.n++;
  }
  while (zlb_now_ns() < t + 20000)
    ;
  return 0;
}

static void test_trace_window(void **state) {
  zlb_backend_t *hb = NULL, tb;
  zlb_backend_vtbl_t v;
  zlb_stream_t s;
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_launch_t l = {.call = st_call};
  zlb_timing_opts_t o;
  zlb_measurement_t m;
  (void)state;
  if (zlb_backend_open_name("host", &hb, &e) || zlb_backend_select_device(hb, 0, &e))
    fail_msg("host backend: %s", e.msg);
  tb = *hb;
  v = *hb->v;
  v.trace_begin = st_begin;
  v.trace_now = st_now;
  v.trace_end = st_end;
  v.trace_available = NULL;
  tb.v = &v;
  zlb_timing_opts_default(&o);
  o.warmup_ms = 0.2;
  o.rep_ms = 1.0;
  memset(&m, 0, sizeof(m));
  assert_int_equal(tb.v->stream_create(&tb, &s, &e), 0);
  if (zlb_time_trace(&tb, s, &l, &o, NULL, &m, &e))
    fail_msg("trace timer: %s", e.msg);
  /* Every sample is its call's 20 us, the first one's too. */
  assert_true(m.nsamples > 0);
  for (size_t i = 0; i < m.nsamples; i++)
    if (fabs(m.samples[i] - 0.020) > 1e-9)
      fail_msg("sample %zu: %.6f ms, want 0.020", i, m.samples[i]);
  zlb_measurement_release(&m);
  tb.v->stream_destroy(&tb, s);
  zlb_backend_close(hb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plain),
      cmocka_unit_test(test_after_profile),
      cmocka_unit_test(test_after_finalize),
      cmocka_unit_test(test_foreign_subscriber),
      cmocka_unit_test(test_stale_foreign_buffer),
      cmocka_unit_test(test_foreign_register_during_interval),
      cmocka_unit_test(test_early_record),
      cmocka_unit_test(test_trace_window),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
