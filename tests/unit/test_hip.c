/* The ROCm backend's vtable, entry by entry, against the fake HIP runtime
 * (tests/fake/fake_hip.c, loaded through ZL_ROCM_LIB): data really moves,
 * events time what the stream ran, waits order streams, captured work is
 * replayed and not run at capture, a held stream runs nothing until
 * released, error names come from the runtime, and the tracer (the fake
 * libroctracer64 beside the fake HIP) sees each kernel. Work is put "on the
 * device" with the fake's hipLaunchHostFunc. Without the fake (ctest sets
 * ZLB_FAKE_HIP) the test fails: it is the only way it runs. */
#include "fake_vendor_test.h"

static int setup(void **state) {
  static const struct fake_vendor v = {"ZLB_FAKE_HIP", "ZL_ROCM_LIB", "3",
                                        "HIP_VISIBLE_DEVICES", "2,0", "amd",
                                        "hipLaunchHostFunc"};
  void *h = NULL;
  (void)state;
  return fake_vendor_open(&v, &h);
}

static void test_devices(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_device_info_t info;
  int n = -1;
  (void)state;
  assert_string_equal(B->desc->name, "rocm");
  assert_int_equal(B->v->device_count(B, &n, &e), 0);
  assert_int_equal(n, 2); /* HIP_VISIBLE_DEVICES=2,0 of 3 */
  /* Ordinal 0 is physical device 2: the fake's values for it. */
  assert_int_equal(B->v->device_info(B, 0, &info, &e), 0);
  assert_string_equal(info.name, "Fake AMD GPU 2");
  assert_int_equal(info.sm_count, 302);
  assert_int_equal(info.clock_khz, 2100002);
  assert_int_equal(info.mem_clock_khz, 1300002);
  assert_int_equal(info.bus_width_bits, 8192);
  assert_int_equal(info.cc_major, 9);
  assert_int_equal(info.cc_minor, 4);
  assert_int_equal(info.l2_bytes, (4u << 20) + 2 * 4096);
  assert_int_equal(info.mem_bytes, 1u << 30);
  assert_string_equal(info.uuid, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadae02");
  assert_string_equal(info.pci_bus_id, "0000:12:00.0");
  assert_string_equal(info.runtime_version, "hip 6.3.42134");
  assert_int_equal(B->v->device_info(B, 1, &info, &e), 0);
  assert_string_equal(info.name, "Fake AMD GPU 0");
  assert_int_not_equal(B->v->device_info(B, 2, &info, &e), 0);
  assert_int_equal(e.vendor_code, 101);
  assert_string_equal(e.vendor_name, "hipErrorInvalidDevice");
  assert_int_equal(zlb_backend_select_device(B, 0, &e), 0);
  assert_string_equal(B->info.name, "Fake AMD GPU 2");
}

static void test_memory(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  unsigned char host[1000], back[1000];
  void *a = NULL, *b = NULL, *empty = NULL;
  zlb_stream_t s;
  size_t free0, free1, total;
  (void)state;
  for (size_t i = 0; i < sizeof(host); i++)
    host[i] = (unsigned char)(i * 7);
  assert_int_equal(B->v->mem_info(B, &free0, &total, &e), 0);
  assert_int_equal(total, 1u << 30);
  assert_int_equal(B->v->mem_alloc(B, sizeof(host), &a, &e), 0);
  assert_int_equal(B->v->mem_alloc(B, sizeof(host), &b, &e), 0);
  /* 0 bytes still gives a pointer (hipMalloc would give NULL). */
  assert_int_equal(B->v->mem_alloc(B, 0, &empty, &e), 0);
  assert_non_null(empty);
  assert_int_equal(B->v->mem_info(B, &free1, &total, &e), 0);
  assert_true(free0 - free1 >= 2 * sizeof(host));
  assert_int_equal(B->v->stream_create(B, &s, &e), 0);
  assert_int_equal(B->v->memcpy_htod(B, a, host, sizeof(host), &e), 0);
  assert_int_equal(B->v->memcpy_dtod(B, b, a, sizeof(host), s, &e), 0);
  assert_int_equal(B->v->memset_async(B, b, 0x5a, 10, s, &e), 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(B->v->memcpy_dtoh(B, back, b, sizeof(back), &e), 0);
  for (size_t i = 0; i < 10; i++)
    assert_int_equal(back[i], 0x5a);
  assert_memory_equal(back + 10, host + 10, sizeof(host) - 10);
  B->v->stream_destroy(B, s);
  B->v->mem_free(B, a);
  B->v->mem_free(B, b);
  B->v->mem_free(B, empty);
  assert_int_equal(B->v->mem_info(B, &free1, &total, &e), 0);
  assert_int_equal(free1, free0);
}

static void test_capture_replay(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_stream_t s;
  zlb_graph_t g = NULL;
  zlb_graph_exec_t x = NULL;
  int count = 0, capturing = 0;
  (void)state;
  assert_int_equal(B->v->stream_create(B, &s, &e), 0);
  assert_int_equal(B->v->capture_begin(B, s, &e), 0);
  assert_int_equal(B->v->stream_is_capturing(B, s, &capturing, &e), 0);
  assert_int_equal(capturing, 1);
  assert_int_equal(launch(s, bump, &count), 0);
  assert_int_equal(launch(s, bump, &count), 0);
  assert_int_equal(B->v->capture_end(B, s, &g, &e), 0);
  assert_non_null(g);
  assert_int_equal(B->v->stream_is_capturing(B, s, &capturing, &e), 0);
  assert_int_equal(capturing, 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(count, 0); /* recorded, not run */
  assert_int_equal(B->v->graph_instantiate(B, g, &x, &e), 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(B->v->graph_launch(B, x, s, &e), 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(count, 6);
  B->v->graph_exec_destroy(B, x);
  B->v->graph_destroy(B, g);

  /* A synchronisation inside capture is refused (900), and the capture
   * still ends, without a graph (901); the context stays healthy. */
  assert_int_equal(B->v->capture_begin(B, s, &e), 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), ZLB_EDEVICE);
  assert_int_equal(e.vendor_code, 900);
  assert_int_equal(zlb_backend_classify(B->desc, e.vendor_code), ZLB_VERDICT_REFUSED);
  g = NULL;
  assert_int_equal(B->v->capture_end(B, s, &g, &e), ZLB_EDEVICE);
  assert_null(g);
  assert_int_equal(e.vendor_code, 901);
  assert_string_equal(e.vendor_name, "hipErrorStreamCaptureInvalidated");
  assert_int_equal(B->v->health_probe(B, &e), 0);
  B->v->stream_destroy(B, s);
}

static void test_hold(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_stream_t s;
  zlb_hold_t h1 = NULL, h2 = NULL;
  int count = 0;
  (void)state;
  assert_true(B->desc->caps & ZLB_CAP_HOLD);
  assert_int_equal(B->v->stream_create(B, &s, &e), 0);
  assert_int_equal(B->v->stream_hold(B, s, &h1, &e), 0);
  assert_non_null(h1);
  assert_int_equal(launch(s, bump, &count), 0);
  sleep_ms(30);
  assert_int_equal(__atomic_load_n(&count, __ATOMIC_SEQ_CST), 0); /* held */
  B->v->stream_release(B, h1);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(count, 1);
  /* A second hold waits again; releasing the first twice does not free it. */
  assert_int_equal(B->v->stream_hold(B, s, &h2, &e), 0);
  assert_int_equal(launch(s, bump, &count), 0);
  B->v->stream_release(B, h1);
  sleep_ms(30);
  assert_int_equal(__atomic_load_n(&count, __ATOMIC_SEQ_CST), 1);
  B->v->stream_release(B, h2);
  B->v->stream_release(B, h2);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(count, 2);
  B->v->stream_destroy(B, s);
}

static void test_thread_binding(void **state) {
  (void)state;
  check_thread_binding(1, "Fake AMD GPU 0", 0);
}

static void test_errors(void **state) {
  (void)state;
  assert_string_equal(zlb_backend_error_name(B, 700), "hipErrorIllegalAddress");
  assert_string_equal(zlb_backend_error_name(B, 709), "hipErrorContextIsDestroyed");
  assert_string_equal(zlb_backend_error_name(B, 999), "hipErrorUnknown");
  /* HIP calls every unknown code "hipErrorUnknown": not a name. */
  assert_string_equal(zlb_backend_error_name(B, 4242), "ERROR_4242");
  assert_int_equal(zlb_backend_classify(B->desc, 700), ZLB_VERDICT_FATAL);
  assert_int_equal(zlb_backend_classify(B->desc, 709), ZLB_VERDICT_POISONED);
  assert_int_equal(zlb_backend_classify(B->desc, 901), ZLB_VERDICT_REFUSED);
  assert_int_equal(zlb_backend_classify(B->desc, 1), ZLB_VERDICT_NONE);
}

/* The tracer, through the fake libroctracer64 beside the fake HIP: one span
 * per kernel run while tracing, none from before trace_begin, each inside
 * the interval trace_now bracketed and as long as the kernel slept. */
static void test_trace(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT, why = ZLB_ERROR_INIT;
  zlb_trace_span_t *sp = NULL;
  zlb_stream_t s;
  uint64_t t0 = 0, t1 = 0;
  size_t n = 0;
  int count = 0;
  (void)state;
  assert_true(zlb_backend_caps(B, &why) & ZLB_CAP_TRACE);
  assert_int_equal(why.code, 0);
  assert_int_equal(B->v->stream_create(B, &s, &e), 0);
  assert_int_equal(launch(s, bump, &count), 0); /* before tracing: not a span */
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  for (int round = 0; round < 2; round++) {
    assert_int_equal(B->v->trace_begin(B, &e), 0);
    assert_int_equal(B->v->trace_now(B, &t0, &e), 0);
    for (int i = 0; i < 3; i++)
      assert_int_equal(launch(s, slow, NULL), 0);
    assert_int_equal(B->v->stream_sync(B, s, &e), 0);
    assert_int_equal(B->v->trace_now(B, &t1, &e), 0);
    assert_int_equal(B->v->trace_end(B, &sp, &n, &e), 0);
    assert_int_equal(n, 3); /* the round before is not handed out again */
    for (size_t i = 0; i < n; i++) {
      assert_true(sp[i].start >= t0 && sp[i].end <= t1);
      assert_true(sp[i].end - sp[i].start >= 20000000u); /* slow: 20 ms */
    }
    free(sp);
  }
  /* Not tracing: kernels leave no span for the next interval. */
  assert_int_equal(launch(s, bump, &count), 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(B->v->trace_begin(B, &e), 0);
  assert_int_equal(B->v->trace_end(B, &sp, &n, &e), 0);
  assert_int_equal(n, 0);
  free(sp);
  B->v->stream_destroy(B, s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_devices),       cmocka_unit_test(test_memory),
      cmocka_unit_test(test_events_and_waits), cmocka_unit_test(test_capture_replay),
      cmocka_unit_test(test_hold),          cmocka_unit_test(test_thread_binding),
      cmocka_unit_test(test_errors),        cmocka_unit_test(test_trace),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
