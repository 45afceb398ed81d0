/* What the HIP, MUSA and ACL vtable tests share (test_hip.c, test_musa.c,
 * test_acl.c): the backend opened on its fake runtime, the fake's host
 * function launch that puts work "on the device", the "kernels", and the
 * checks whose body is the same for the three runtimes. Included once, by
 * each of those files. */
#ifndef ZLB_FAKE_VENDOR_TEST_H
#define ZLB_FAKE_VENDOR_TEST_H

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

/* How a test reaches its fake runtime. */
struct fake_vendor {
  const char *fake_env; /* ctest's variable naming the fake library */
  const char *lib_env;  /* the backend's library override */
  const char *devices;  /* ZL_FAKE_DEVICES */
  const char *vis_env, *vis;
  const char *backend;  /* opened by this name (an alias) */
  const char *launch;   /* the fake's host-function launch */
};

/* Open B on the fake and bind `launch`; 0, or -1 after saying why. The
 * fake's handle (loaded RTLD_GLOBAL, so its test-only entries are there)
 * goes to *handle for further binds. */
static int fake_vendor_open(const struct fake_vendor *v, void **handle) {
  zlb_error_t e = ZLB_ERROR_INIT;
  const char *fake = getenv(v->fake_env);
  void *h;
  if (!fake || !*fake) {
    fprintf(stderr, "%s is not set (ctest sets it)\n", v->fake_env);
    return -1;
  }
  setenv(v->lib_env, fake, 1);
  setenv("ZL_FAKE_DEVICES", v->devices, 1);
  setenv(v->vis_env, v->vis, 1);
  if (zlb_backend_open_name(v->backend, &B, &e)) {
    fprintf(stderr, "open: %s\n", e.msg);
    return -1;
  }
  h = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
  if (h)
    zlb__bind(h, v->launch, &launch, sizeof(launch));
  *handle = h;
  return launch ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  zlb_backend_close(B);
  return 0;
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

/* The current device is per thread in all three runtimes: work from a
 * thread that never chose one must still land on the selected device. */
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

/* Select ordinal `dev` (named `name`), allocate from a fresh thread, check
 * that the memory came from that device, then select `back`. */
static void check_thread_binding(int dev, const char *name, int back) {
  zlb_error_t e = ZLB_ERROR_INIT;
  struct thread_alloc t = {NULL, -1};
  pthread_t th;
  size_t free0, free1, total;
  assert_int_equal(zlb_backend_select_device(B, dev, &e), 0);
  assert_string_equal(B->info.name, name);
  assert_int_equal(B->v->mem_info(B, &free0, &total, &e), 0);
  assert_int_equal(pthread_create(&th, NULL, alloc_in_thread, &t), 0);
  pthread_join(th, NULL);
  assert_int_equal(t.rc, 0);
  assert_int_equal(B->v->mem_info(B, &free1, &total, &e), 0);
  assert_int_equal(free0 - free1, 1 << 20);
  B->v->mem_free(B, t.p);
  assert_int_equal(zlb_backend_select_device(B, back, &e), 0);
}

#endif
