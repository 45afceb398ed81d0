/* The MUSA backend's vtable, entry by entry, against the fake MUSA runtime
 * (tests/fake/fake_musa.c, loaded through ZL_MUSA_LIB): properties from
 * the attribute ids and the property struct's name and uuid, data really
 * moves, events time what the stream ran, waits order streams, captured
 * work is replayed and not run at capture, there is no stream hold, and
 * error names come from the runtime. Work is put "on the device" with the
 * fake's musaLaunchHostFunc. Without the fake (ctest sets ZLB_FAKE_MUSA)
 * the test fails: it is the only way it runs. */
#include "fake_vendor_test.h"

static int setup(void **state) {
  static const struct fake_vendor v = {"ZLB_FAKE_MUSA", "ZL_MUSA_LIB", "3",
                                        "MUSA_VISIBLE_DEVICES", "2,0", "mthreads",
                                        "musaLaunchHostFunc"};
  void *h = NULL;
  (void)state;
  return fake_vendor_open(&v, &h);
}

static void test_devices(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_device_info_t info;
  int n = -1;
  (void)state;
  assert_string_equal(B->desc->name, "musa");
  assert_int_equal(B->v->device_count(B, &n, &e), 0);
  assert_int_equal(n, 2); /* MUSA_VISIBLE_DEVICES=2,0 of 3 */
  /* Ordinal 0 is physical device 2: the fake's values for it, one per
   * attribute id (CUDA's numbering). */
  assert_int_equal(B->v->device_info(B, 0, &info, &e), 0);
  assert_string_equal(info.name, "Fake Moore Threads GPU 2");
  assert_int_equal(info.sm_count, 126);
  assert_int_equal(info.clock_khz, 1750002);
  assert_int_equal(info.mem_clock_khz, 1400002);
  assert_int_equal(info.bus_width_bits, 384);
  assert_int_equal(info.cc_major, 3);
  assert_int_equal(info.cc_minor, 1);
  assert_int_equal(info.l2_bytes, (6u << 20) + 2 * 4096);
  assert_int_equal(info.mem_bytes, 1u << 30);
  assert_string_equal(info.uuid, "GPU-b0b1b2b3-b4b5-b6b7-b8b9-babbbcbdbe02");
  assert_string_equal(info.pci_bus_id, "0002:22:03.0");
  assert_string_equal(info.runtime_version, "musart 40100");
  assert_string_equal(info.driver_version, "musa driver 40100");
  assert_int_equal(B->v->device_info(B, 1, &info, &e), 0);
  assert_string_equal(info.name, "Fake Moore Threads GPU 0");
  assert_int_equal(info.sm_count, 128);
  assert_int_not_equal(B->v->device_info(B, 2, &info, &e), 0);
  assert_int_equal(e.vendor_code, 101);
  assert_string_equal(e.vendor_name, "musaErrorInvalidDevice");
  assert_str_contains(e.msg, "musaGetDeviceProperties: musaErrorInvalidDevice (101): invalid device ordinal");
  assert_int_equal(zlb_backend_select_device(B, 0, &e), 0);
  assert_string_equal(B->info.name, "Fake Moore Threads GPU 2");
}

/* Reading another device's memory size leaves this thread's current
 * device as it was. */
static void test_info_keeps_device(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_device_info_t info;
  void *p = NULL;
  size_t free0, free1, total;
  (void)state;
  assert_int_equal(zlb_backend_select_device(B, 0, &e), 0);
  assert_int_equal(B->v->mem_info(B, &free0, &total, &e), 0);
  assert_int_equal(B->v->mem_alloc(B, 1 << 20, &p, &e), 0);
  assert_int_equal(B->v->device_info(B, 1, &info, &e), 0);
  /* mem_info binds the selected device itself: check with the raw runtime
   * that the thread was left on ordinal 0 by device_info. */
  {
    void *h = dlopen(getenv("ZLB_FAKE_MUSA"), RTLD_NOW | RTLD_NOLOAD);
    int (*get_device)(int *) = NULL;
    int d = -1;
    assert_non_null(h);
    zlb__bind(h, "musaGetDevice", &get_device, sizeof(get_device));
    assert_non_null(get_device);
    assert_int_equal(get_device(&d), 0);
    assert_int_equal(d, 0);
  }
  assert_int_equal(B->v->mem_info(B, &free1, &total, &e), 0);
  assert_int_equal(free0 - free1, 1 << 20);
  B->v->mem_free(B, p);
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
  /* 0 bytes still gives a pointer. */
  assert_int_equal(B->v->mem_alloc(B, 0, &empty, &e), 0);
  assert_non_null(empty);
  assert_int_equal(B->v->mem_info(B, &free1, &total, &e), 0);
  assert_true(free0 - free1 >= 2 * sizeof(host));
  assert_int_equal(B->v->stream_create(B, &s, &e), 0);
  /* A copy kind mixed up (host for device) would be a device fault: the
   * fake checks device addresses against its allocations. */
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
  assert_string_equal(e.vendor_name, "musaErrorStreamCaptureInvalidated");
  assert_int_equal(B->v->health_probe(B, &e), 0);
  B->v->stream_destroy(B, s);
}

/* No stream hold: the capability is off and the entry is absent, which is
 * what makes the queue timer fall back (tests/cli/test_musa_fake.sh). */
static void test_no_hold(void **state) {
  (void)state;
  assert_false(B->desc->caps & ZLB_CAP_HOLD);
  assert_null(B->v->stream_hold);
  assert_null(B->v->stream_release);
  assert_true(B->desc->caps & ZLB_CAP_GRAPH);
}

static void test_thread_binding(void **state) {
  (void)state;
  check_thread_binding(1, "Fake Moore Threads GPU 0", 0);
}

static void test_errors(void **state) {
  (void)state;
  assert_string_equal(zlb_backend_error_name(B, 700), "musaErrorIllegalAddress");
  assert_string_equal(zlb_backend_error_name(B, 709), "musaErrorContextIsDestroyed");
  assert_string_equal(zlb_backend_error_name(B, 999), "musaErrorUnknown");
  /* Codes the runtime does not name: the table's name, else the number. */
  assert_string_equal(zlb_backend_error_name(B, 716), "musaErrorMisalignedAddress");
  assert_string_equal(zlb_backend_error_name(B, 4242), "ERROR_4242");
  assert_int_equal(zlb_backend_classify(B->desc, 700), ZLB_VERDICT_FATAL);
  assert_int_equal(zlb_backend_classify(B->desc, 709), ZLB_VERDICT_POISONED);
  assert_int_equal(zlb_backend_classify(B->desc, 901), ZLB_VERDICT_REFUSED);
  assert_int_equal(zlb_backend_classify(B->desc, 1), ZLB_VERDICT_NONE);
  assert_false(B->desc->caps & ZLB_CAP_TRACE);
  assert_null(B->v->trace_begin);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_devices),          cmocka_unit_test(test_info_keeps_device),
      cmocka_unit_test(test_memory),           cmocka_unit_test(test_events_and_waits),
      cmocka_unit_test(test_capture_replay),   cmocka_unit_test(test_no_hold),
      cmocka_unit_test(test_thread_binding),   cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
