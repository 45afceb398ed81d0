/* The MUSA backend on a runtime without the optional entry points
 * (tests/fake/musa-min: no musaGraphInstantiateWithFlags, no
 * musaStreamIsCapturing): captured work is instantiated with the
 * 5-argument musaGraphInstantiate and replayed, and asking whether a
 * stream captures says it cannot be known. ctest sets ZLB_FAKE_MUSA_MIN. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device_int.h" /* zlb__bind */
#include "zlb_test.h"
#include "zlbench/device.h"

typedef int (*launch_fn)(zlb_stream_t, void (*)(void *), void *);

static zlb_backend_t *B;
static launch_fn launch;

static void bump(void *arg) { __atomic_add_fetch((int *)arg, 1, __ATOMIC_SEQ_CST); }

static int setup(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  const char *fake = getenv("ZLB_FAKE_MUSA_MIN");
  void *h;
  (void)state;
  if (!fake || !*fake) {
    fprintf(stderr, "ZLB_FAKE_MUSA_MIN is not set (ctest sets it)\n");
    return -1;
  }
  setenv("ZL_MUSA_LIB", fake, 1);
  if (zlb_backend_open_name("musa", &B, &e) || zlb_backend_select_device(B, 0, &e)) {
    fprintf(stderr, "open: %s\n", e.msg);
    return -1;
  }
  h = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
  if (h) {
    void *flags = dlsym(h, "musaGraphInstantiateWithFlags");
    if (flags) {
      fprintf(stderr, "%s has musaGraphInstantiateWithFlags: not the minimal fake\n", fake);
      return -1;
    }
    zlb__bind(h, "musaLaunchHostFunc", &launch, sizeof(launch));
  }
  return launch ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  zlb_backend_close(B);
  return 0;
}

static void test_instantiate_5_args(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_stream_t s;
  zlb_graph_t g = NULL;
  zlb_graph_exec_t x = NULL;
  int count = 0;
  (void)state;
  assert_int_equal(B->v->stream_create(B, &s, &e), 0);
  assert_int_equal(B->v->capture_begin(B, s, &e), 0);
  assert_int_equal(launch(s, bump, &count), 0);
  assert_int_equal(B->v->capture_end(B, s, &g, &e), 0);
  assert_int_equal(B->v->graph_instantiate(B, g, &x, &e), 0);
  assert_non_null(x);
  assert_int_equal(B->v->graph_launch(B, x, s, &e), 0);
  assert_int_equal(B->v->graph_launch(B, x, s, &e), 0);
  assert_int_equal(B->v->stream_sync(B, s, &e), 0);
  assert_int_equal(count, 2);
  B->v->graph_exec_destroy(B, x);
  B->v->graph_destroy(B, g);
  B->v->stream_destroy(B, s);
}

static void test_is_capturing_unknown(void **state) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_stream_t s;
  int capturing = -1;
  (void)state;
  assert_int_equal(B->v->stream_create(B, &s, &e), 0);
  assert_int_equal(B->v->stream_is_capturing(B, s, &capturing, &e), ZLB_EUNSUPPORTED);
  assert_int_equal(capturing, 0);
  assert_str_contains(e.msg, "lacks musaStreamIsCapturing");
  B->v->stream_destroy(B, s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_instantiate_5_args),
      cmocka_unit_test(test_is_capturing_unknown),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
