/* The backend registry: names, aliases, visibility keys, capabilities,
 * unavailable runtimes and the classification tables. */
#include <string.h>

#include "zlb_test.h"
#include "zlbench/device.h"

static void test_aliases(void **state) {
  static const struct {
    const char *in, *want;
  } cases[] = {{"cuda", "cuda"},     {"nvidia", "cuda"}, {"gpu", "cuda"},   {"CUDA", "cuda"},
               {"musa", "musa"},     {"mthreads", "musa"}, {"mt", "musa"},  {"moore", "musa"},
               {"rocm", "rocm"},     {"amd", "rocm"},    {"hip", "rocm"},   {"ascend", "ascend"},
               {"npu", "ascend"},    {"huawei", "ascend"}, {"cann", "ascend"}, {"host", "host"},
               {"cpu", "host"}};
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const zlb_backend_desc_t *d = NULL;
    zlb_error_t e = ZLB_ERROR_INIT;
    assert_int_equal(zlb_backend_lookup(cases[i].in, &d, &e), 0);
    assert_string_equal(d->name, cases[i].want);
  }
}

static void test_unknown_lists_valid(void **state) {
  const zlb_backend_desc_t *d = NULL;
  zlb_error_t e = ZLB_ERROR_INIT;
  (void)state;
  assert_int_equal(zlb_backend_lookup("opencl", &d, &e), ZLB_ENOTFOUND);
  assert_str_contains(e.msg, "unknown backend 'opencl'");
  assert_str_contains(e.msg, "auto, cuda (nvidia, gpu), musa (mthreads, mt, moore)");
  assert_str_contains(e.msg, "rocm (amd, hip), ascend (npu, huawei, cann), host (cpu)");
}

static void test_entries(void **state) {
  static const struct {
    const char *name, *env, *lib;
    unsigned caps_on, caps_off;
  } cases[] = {
      {"cuda", "CUDA_VISIBLE_DEVICES", "libcuda.so.1", ZLB_CAP_GRAPH | ZLB_CAP_EVENTS, 0},
      {"musa", "MUSA_VISIBLE_DEVICES", "libmusart.so", ZLB_CAP_GRAPH | ZLB_CAP_EVENTS,
       ZLB_CAP_HOLD | ZLB_CAP_TRACE | ZLB_CAP_HOST_MEMORY},
      /* ROCm declares "trace"; an opened backend without a usable
       * roctracer turns it off (zlb_backend_caps, test_rocm_trace_fake.sh). */
      {"rocm", "HIP_VISIBLE_DEVICES", "libamdhip64.so.7",
       ZLB_CAP_GRAPH | ZLB_CAP_EVENTS | ZLB_CAP_HOLD | ZLB_CAP_TRACE, ZLB_CAP_HOST_MEMORY},
      {"ascend", "ASCEND_RT_VISIBLE_DEVICES", "libascendcl.so", ZLB_CAP_GRAPH | ZLB_CAP_EVENTS,
       ZLB_CAP_HOLD | ZLB_CAP_TRACE | ZLB_CAP_HOST_MEMORY},
      {"host", NULL, NULL, 0, ZLB_CAP_GRAPH | ZLB_CAP_EVENTS},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const zlb_backend_desc_t *d;
    zlb_error_t e = ZLB_ERROR_INIT;
    assert_int_equal(zlb_backend_lookup(cases[i].name, &d, &e), 0);
    if (cases[i].env)
      assert_string_equal(d->visibility_env, cases[i].env);
    else
      assert_null(d->visibility_env);
    if (cases[i].lib)
      assert_string_equal(d->sonames[0], cases[i].lib);
    assert_int_equal(d->caps & cases[i].caps_on, cases[i].caps_on);
    assert_int_equal(d->caps & cases[i].caps_off, 0);
  }
}

/* Selecting a backend whose runtime is absent names the libraries tried.
 * (No MUSA or Ascend runtime here; a ROCm runtime, where installed, finds
 * no device, and that is unavailable too.) */
static void test_unavailable(void **state) {
  static const char *const names[] = {"musa", "rocm", "ascend"};
  static const char *const libs[] = {"libmusart.so", "libamdhip64.so", "libascendcl.so"};
  (void)state;
  for (size_t i = 0; i < 3; i++) {
    zlb_backend_t *b = NULL;
    zlb_error_t e = ZLB_ERROR_INIT;
    int rc = zlb_backend_open_name(names[i], &b, &e);
    assert_int_equal(rc, ZLB_EUNAVAIL);
    assert_null(b);
    assert_str_contains(e.msg, libs[i]);
    assert_str_contains(e.msg, names[i]);
  }
}

static void test_host_opens(void **state) {
  zlb_backend_t *b = NULL;
  zlb_error_t e = ZLB_ERROR_INIT;
  (void)state;
  assert_int_equal(zlb_backend_open_name("cpu", &b, &e), 0);
  assert_int_equal(zlb_backend_select_device(b, 0, &e), 0);
  assert_string_equal(b->desc->name, "host");
  assert_int_equal(zlb_backend_select_device(b, 3, &e), ZLB_EUNAVAIL);
  assert_str_contains(e.msg, "device 3 is not visible");
  zlb_backend_close(b);
}

static void test_classification(void **state) {
  static const struct {
    const char *backend;
    int code;
    zlb_verdict_t want;
  } cases[] = {
      {"cuda", 900, ZLB_VERDICT_REFUSED}, {"cuda", 901, ZLB_VERDICT_REFUSED},
      {"cuda", 904, ZLB_VERDICT_REFUSED}, {"cuda", 906, ZLB_VERDICT_REFUSED},
      {"cuda", 908, ZLB_VERDICT_REFUSED}, {"cuda", 700, ZLB_VERDICT_FATAL},
      {"cuda", 714, ZLB_VERDICT_FATAL},   {"cuda", 715, ZLB_VERDICT_FATAL},
      {"cuda", 716, ZLB_VERDICT_FATAL},   {"cuda", 717, ZLB_VERDICT_FATAL},
      {"cuda", 718, ZLB_VERDICT_FATAL},   {"cuda", 719, ZLB_VERDICT_FATAL},
      {"cuda", 2, ZLB_VERDICT_NONE},      {"cuda", 1, ZLB_VERDICT_NONE},
      {"musa", 905, ZLB_VERDICT_REFUSED}, {"musa", 700, ZLB_VERDICT_FATAL},
      {"musa", 719, ZLB_VERDICT_FATAL},   {"musa", 709, ZLB_VERDICT_POISONED},
      {"musa", 2, ZLB_VERDICT_NONE},
      {"rocm", 907, ZLB_VERDICT_REFUSED}, {"rocm", 719, ZLB_VERDICT_FATAL},
      {"rocm", 700, ZLB_VERDICT_FATAL},   {"rocm", 709, ZLB_VERDICT_POISONED},
      {"rocm", 38, ZLB_VERDICT_NONE},
      {"ascend", 107030, ZLB_VERDICT_REFUSED}, {"ascend", 507903, ZLB_VERDICT_REFUSED},
      {"ascend", 507015, ZLB_VERDICT_FATAL},   {"ascend", 507010, ZLB_VERDICT_POISONED},
      {"host", 700, ZLB_VERDICT_NONE},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const zlb_backend_desc_t *d;
    assert_int_equal(zlb_backend_lookup(cases[i].backend, &d, NULL), 0);
    if (zlb_backend_classify(d, cases[i].code) != cases[i].want)
      fail_msg("%s code %d: verdict %s, want %s", cases[i].backend, cases[i].code,
               zlb_verdict_name(zlb_backend_classify(d, cases[i].code)),
               zlb_verdict_name(cases[i].want));
  }
}

static void test_caps_format(void **state) {
  char buf[64];
  (void)state;
  zlb_caps_format(ZLB_CAP_GRAPH | ZLB_CAP_L2_FLUSH, buf, sizeof(buf));
  assert_string_equal(buf, "graph,l2_flush");
  zlb_caps_format(0, buf, sizeof(buf));
  assert_string_equal(buf, "-");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aliases),     cmocka_unit_test(test_unknown_lists_valid),
      cmocka_unit_test(test_entries),     cmocka_unit_test(test_unavailable),
      cmocka_unit_test(test_host_opens),  cmocka_unit_test(test_classification),
      cmocka_unit_test(test_caps_format),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
