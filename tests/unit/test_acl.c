/* The Ascend backend's vtable, entry by entry, against the fake ACL
 * runtime (tests/fake/fake_acl.c, loaded through ZL_ASCEND_LIB): data
 * really moves, events time what the stream ran, waits order streams,
 * captured work is replayed and not run at capture, the captured model is
 * destroyed exactly once whichever of graph and "exec" goes first, there
 * is no hold, and codes are named from the backend's table. Work is put
 * "on the device" with the fake's aclrtLaunchHostFunc. Without the fake
 * (ctest sets ZLB_FAKE_ACL) the test fails: it is the only way it runs. */
#include "fake_vendor_test.h"

static int (*models_live)(void);

static int setup(void **state) {
  static const struct fake_vendor v = {"ZLB_FAKE_ACL", "ZL_ASCEND_LIB", "4",
                                        "ASCEND_RT_VISIBLE_DEVICES", "0,3,1", "npu",
                                        "aclrtLaunchHostFunc"};
  void *h = NULL;
  (void)state;
  /* ASCEND_RT_VISIBLE_DEVICES: ascending logical ids, the list ending
   * at 1 (not above 3). */
  if (fake_vendor_open(&v, &h) || !h)
    return -1;
  zlb__bind(h, "zfake_acl_models_live", &models_live, sizeof(models_live));
  return models_live ? 0 : -1;
}

static void test_devices(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_device_info_t info;
  int n = -1;
  (void)state;
  assert_string_equal(B->desc->name, "ascend");
  assert_int_equal(B->v->device_count(B, &n, &e), 0);
  assert_int_equal(n, 2); /* ASCEND_RT_VISIBLE_DEVICES=0,3,1 of 4: 0 and 3 */
  /* Ordinal 1 is physical device 3: the fake's values for it. Each
   * attribute has its own sentinel (vector cores would be 51). */
  assert_int_equal(B->v->device_info(B, 1, &info, &e), 0);
  assert_string_equal(info.name, "Ascend910B-fake-N3");
  assert_int_equal(info.sm_count, 27);
  assert_int_equal(info.l2_bytes, (192u << 20) + 3 * 4096);
  assert_int_equal(info.mem_bytes, 1u << 30);
  assert_int_equal(B->v->device_info(B, 0, &info, &e), 0);
  assert_string_equal(info.name, "Ascend910B-fake-N0");
  assert_int_equal(info.sm_count, 24);
  assert_int_not_equal(B->v->device_info(B, 2, &info, &e), 0);
  assert_int_equal(e.vendor_code, 107001);
  assert_string_equal(e.vendor_name, "ACL_ERROR_RT_INVALID_DEVICEID");
  assert_int_equal(zlb_backend_select_device(B, 1, &e), 0);
  assert_string_equal(B->info.name, "Ascend910B-fake-N3");
  /* Another device's properties leave the selected one current. */
  assert_int_equal(B->v->device_info(B, 0, &info, &e), 0);
  assert_int_equal(B->v->device_info(B, 1, &info, &e), 0);
  assert_string_equal(info.name, "Ascend910B-fake-N3");
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
  /* 0 bytes still gives a pointer (aclrtMalloc refuses 0). */
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
  int count = 0, capturing = 0, live0;
  (void)state;
  live0 = models_live();
  assert_int_equal(B->v->stream_create(B, &s, &e), 0);
  assert_int_equal(B->v->capture_begin(B, s, &e), 0);
  assert_int_equal(B->v->stream_is_capturing(B, s, &capturing, &e), 0);
  assert_int_equal(capturing, 1);
  assert_int_equal(launch(s, bump, &count), 0);
  assert_int_equal(launch(s, bump, &count), 0);
  assert_int_equal(B->v->capture_end(B, s, &g, &e), 0);
  assert_non_null(g);
  assert_int_equal(models_live(), live0 + 1);
  assert_int_equal(B->v->stream_is_capturing(B, s, &capturing, &e), 0);
  assert_int_equal(capturing, 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(count, 0); /* recorded, not run */
  /* The captured model is the executable one: no second object. */
  assert_int_equal(B->v->graph_instantiate(B, g, &x, &e), 0);
  assert_ptr_equal((void *)x, (void *)g);
  assert_int_equal(models_live(), live0 + 1);
  for (int i = 0; i < 3; i++)
    assert_int_equal(B->v->graph_launch(B, x, s, &e), 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(count, 6);
  /* The graph timer's order: exec, then graph. The exec's release leaves
   * the model runnable; the graph's destroys it, once (a second
   * aclmdlRIDestroy would abort the fake). */
  B->v->graph_exec_destroy(B, x);
  assert_int_equal(models_live(), live0 + 1);
  assert_int_equal(B->v->graph_launch(B, x, s, &e), 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(count, 8);
  B->v->graph_destroy(B, g);
  assert_int_equal(models_live(), live0);
  /* A destroyed model is no longer run. */
  assert_int_equal(B->v->graph_launch(B, x, s, &e), ZLB_EDEVICE);
  assert_int_equal(e.vendor_code, 107017);
  assert_string_equal(e.vendor_name, "ACL_ERROR_RT_INVALID_HANDLE");

  /* A synchronisation inside capture is refused (107027), and the capture
   * still ends, without a model (507903); the context stays healthy. */
  assert_int_equal(B->v->capture_begin(B, s, &e), 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), ZLB_EDEVICE);
  assert_int_equal(e.vendor_code, 107027);
  assert_string_equal(e.vendor_name, "ACL_ERROR_RT_STREAM_CAPTURED");
  /* The runtime's recent message follows the name. */
  assert_non_null(strstr(e.msg, "aclrtSynchronizeStream: ACL_ERROR_RT_STREAM_CAPTURED (107027): "
                                "EE1001: fake runtime: not allowed on a capturing stream"));
  assert_int_equal(zlb_backend_classify(B->desc, e.vendor_code), ZLB_VERDICT_REFUSED);
  g = NULL;
  assert_int_equal(B->v->capture_end(B, s, &g, &e), ZLB_EDEVICE);
  assert_null(g);
  assert_int_equal(e.vendor_code, 507903);
  assert_string_equal(e.vendor_name, "ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED");
  assert_int_equal(zlb_backend_classify(B->desc, e.vendor_code), ZLB_VERDICT_REFUSED);
  assert_int_equal(models_live(), live0);
  assert_int_equal(B->v->health_probe(B, &e), 0);
  B->v->stream_destroy(B, s);
}

/* ACL has no stream wait on a host-released value: no hold, and the
 * capability says so (the queue timer then reports UNSUPPORTED). */
static void test_no_hold(void **state) {
  (void)state;
  assert_false(B->desc->caps & ZLB_CAP_HOLD);
  assert_null(B->v->stream_hold);
  assert_null(B->v->stream_release);
}

/* In ACL a thread that never set a device has no context at all (the
 * fake answers 107002). */
static void test_thread_binding(void **state) {
  (void)state;
  check_thread_binding(0, "Ascend910B-fake-N0", 1);
}

static void test_errors(void **state) {
  (void)state;
  /* ACL names no code: the backend's table does, the verdict codes from
   * the registry's. */
  assert_string_equal(zlb_backend_error_name(B, 507053), "ACL_ERROR_RT_DEVICE_MEM_ERROR");
  assert_string_equal(zlb_backend_error_name(B, 507010), "ACL_ERROR_RT_LOST_HEARTBEAT");
  assert_string_equal(zlb_backend_error_name(B, 107002), "ACL_ERROR_RT_CONTEXT_NULL");
  assert_string_equal(zlb_backend_error_name(B, 207001), "ACL_ERROR_RT_MEMORY_ALLOCATION");
  assert_string_equal(zlb_backend_error_name(B, 4242), "ERROR_4242");
  assert_int_equal(zlb_backend_classify(B->desc, 507053), ZLB_VERDICT_FATAL);
  assert_int_equal(zlb_backend_classify(B->desc, 507010), ZLB_VERDICT_POISONED);
  assert_int_equal(zlb_backend_classify(B->desc, 107027), ZLB_VERDICT_REFUSED);
  assert_int_equal(zlb_backend_classify(B->desc, 107002), ZLB_VERDICT_NONE);
  /* No tracer is wired for Ascend: the capability says so. */
  assert_false(B->desc->caps & ZLB_CAP_TRACE);
  assert_null(B->v->trace_begin);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_devices),       cmocka_unit_test(test_memory),
      cmocka_unit_test(test_events_and_waits), cmocka_unit_test(test_capture_replay),
      cmocka_unit_test(test_no_hold),       cmocka_unit_test(test_thread_binding),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
