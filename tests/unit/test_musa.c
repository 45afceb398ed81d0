/* The MUSA backend's vtable, entry by entry, against the fake MUSA runtime
 * (tests/fake/fake_musa.c, loaded through ZL_MUSA_LIB): properties from
 * the attribute ids and the property struct's name and uuid, data really
 * moves, events time what the stream ran, waits order streams, captured
 * work is replayed and not run at capture, there is no stream hold, and
 * error names come from the runtime. Work is put "on the device" with the
 * fake's musaLaunchHostFunc. Without the fake (ctest sets ZLB_FAKE_MUSA)
 * the test fails: it is the only way it runs. */
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
  const char *fake = getenv("ZLB_FAKE_MUSA");
  void *h;
  (void)state;
  if (!fake || !*fake) {
    fprintf(stderr, "ZLB_FAKE_MUSA is not set (ctest sets it)\n");
    return -1;
  }
  setenv("ZL_MUSA_LIB", fake, 1);
  setenv("ZL_FAKE_DEVICES", "3", 1);
  setenv("MUSA_VISIBLE_DEVICES", "2,0", 1);
  if (zlb_backend_open_name("mthreads", &B, &e)) {
    fprintf(stderr, "open: %s\n", e.msg);
    return -1;
  }
  /* The runtime was loaded RTLD_GLOBAL: its test-only entry is there. */
  h = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
  if (h)
    zlb__bind(h, "musaLaunchHostFunc", &launch, sizeof(launch));
  return launch ? 0 : -1;
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

/* The current device is per thread: work from a thread that never chose
 * one must still land on the selected device. */
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
  assert_int_equal(zlb_backend_select_device(B, 1, &e), 0);
  assert_string_equal(B->info.name, "Fake Moore Threads GPU 0");
  assert_int_equal(B->v->mem_info(B, &free0, &total, &e), 0);
  assert_int_equal(pthread_create(&th, NULL, alloc_in_thread, &t), 0);
  pthread_join(th, NULL);
  assert_int_equal(t.rc, 0);
  assert_int_equal(B->v->mem_info(B, &free1, &total, &e), 0);
  assert_int_equal(free0 - free1, 1 << 20);
  B->v->mem_free(B, t.p);
  assert_int_equal(zlb_backend_select_device(B, 0, &e), 0);
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
