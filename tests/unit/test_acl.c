/* The Ascend backend's vtable, entry by entry, against the fake ACL
 * runtime (tests/fake/fake_acl.c, loaded through ZL_ASCEND_LIB): data
 * really moves, events time what the stream ran, waits order streams,
 * captured work is replayed and not run at capture, the captured model is
 * destroyed exactly once whichever of graph and "exec" goes first, there
 * is no hold, and codes are named from the backend's table. Work is put
 * "on the device" with the fake's aclrtLaunchHostFunc. Without the fake
 * (ctest sets ZLB_FAKE_ACL) the test fails: it is the only way it runs. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/device_int.h" /* zlb__bind */
#include "zlb_test.h"
#include "zlbench/device.h"

typedef int (*launch_fn)(zlb_stream_t, void (*)(void *), void *);

static zlb_backend_t *B;
static launch_fn launch;
static int (*models_live)(void);

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* "Kernels". */
static void bump(void *arg) { __atomic_add_fetch((int *)arg, 1, __ATOMIC_SEQ_CST); }
static void slow(void *arg) {
  (void)arg;
  sleep_ms(20);
}
/* Appends its tag to a log: the order work ran in. */
struct order {
  char log[16];
  int n;
};
struct tagged {
  struct order *o;
  char tag;
  long ms;
};
static void tag(void *arg) {
  struct tagged *t = arg;
  sleep_ms(t->ms);
  t->o->log[t->o->n++] = t->tag;
}

static int setup(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  const char *fake = getenv("ZLB_FAKE_ACL");
  void *h;
  (void)state;
  if (!fake || !*fake) {
    fprintf(stderr, "ZLB_FAKE_ACL is not set (ctest sets it)\n");
    return -1;
  }
  setenv("ZL_ASCEND_LIB", fake, 1);
  setenv("ZL_FAKE_DEVICES", "4", 1);
  /* Ascending logical ids: the list ends at 1 (not above 3). */
  setenv("ASCEND_RT_VISIBLE_DEVICES", "0,3,1", 1);
  if (zlb_backend_open_name("npu", &B, &e)) {
    fprintf(stderr, "open: %s\n", e.msg);
    return -1;
  }
  /* The runtime was loaded RTLD_GLOBAL: its test-only entry is there. */
  h = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
  if (h) {
    zlb__bind(h, "aclrtLaunchHostFunc", &launch, sizeof(launch));
    zlb__bind(h, "zfake_acl_models_live", &models_live, sizeof(models_live));
  }
  return launch && models_live ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  zlb_backend_close(B);
  return 0;
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

static void test_events_and_waits(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_stream_t s1, s2;
  zlb_event_t a, b;
  struct order o = {{0}, 0};
  struct tagged first = {&o, 'a', 30}, second = {&o, 'b', 0};
  double ms = 0.0;
  (void)state;
  assert_int_equal(B->v->stream_create(B, &s1, &e), 0);
  assert_int_equal(B->v->stream_create(B, &s2, &e), 0);
  assert_int_equal(B->v->event_create(B, &a, &e), 0);
  assert_int_equal(B->v->event_create(B, &b, &e), 0);
  /* The elapsed time is what the stream ran between the events. */
  assert_int_equal(B->v->event_record(B, a, s1, &e), 0);
  assert_int_equal(launch(s1, slow, NULL), 0);
  assert_int_equal(B->v->event_record(B, b, s1, &e), 0);
  assert_int_equal(B->v->event_elapsed(B, a, b, &ms, &e), 0);
  assert_true(ms >= 19.0 && ms < 5000.0);
  /* s2 waits for s1's work enqueued so far: 'a' (30 ms) before 'b'. */
  assert_int_equal(launch(s1, tag, &first), 0);
  assert_int_equal(B->v->stream_wait(B, s2, s1, &e), 0);
  assert_int_equal(launch(s2, tag, &second), 0);
  assert_int_equal(B->v->stream_sync(B, s2, &e), 0);
  assert_string_equal(o.log, "ab");
  B->v->event_destroy(B, a);
  B->v->event_destroy(B, b);
  B->v->stream_destroy(B, s1);
  B->v->stream_destroy(B, s2);
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

/* ACL's current device is per thread, and a thread that never set one
 * has no context (the fake answers 107002): work from such a thread must
 * still land on the selected device. */
struct thread_alloc {
  void *p;
  int rc;
};
static void *alloc_in_thread(void *arg) {
  struct thread_alloc *t = arg;
  zlb_error_t e = ZLB_ERROR_INIT;
  t->rc = B->v->mem_alloc(B, 1 << 20, &t->p, &e);
  return NULL;
}

static void test_thread_binding(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  struct thread_alloc t = {NULL, -1};
  pthread_t th;
  size_t free0, free1, total;
  (void)state;
  assert_int_equal(zlb_backend_select_device(B, 0, &e), 0);
  assert_string_equal(B->info.name, "Ascend910B-fake-N0");
  assert_int_equal(B->v->mem_info(B, &free0, &total, &e), 0);
  assert_int_equal(pthread_create(&th, NULL, alloc_in_thread, &t), 0);
  pthread_join(th, NULL);
  assert_int_equal(t.rc, 0);
  assert_int_equal(B->v->mem_info(B, &free1, &total, &e), 0);
  assert_int_equal(free0 - free1, 1 << 20);
  B->v->mem_free(B, t.p);
  assert_int_equal(zlb_backend_select_device(B, 1, &e), 0);
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
