/* Test operators for the ROCm backend on the fake HIP runtime (the body
 * they share with the other fake vendors: ops_fake.h); their kernels are
 * host functions launched with hipLaunchHostFunc. */
#include "device/hip_api.h"

/* The library is linked against the (fake) HIP runtime, as a hipcc-built
 * operator library is against libamdhip64. */
#define DECLARE(field, sym, params) int sym params;
ZHIP_TEST_ONLY(DECLARE)
DECLARE(sync, hipStreamSynchronize, (zhip_stream_t stream))
DECLARE(memset_async, hipMemsetAsync, (void *dst, int value, size_t bytes, zhip_stream_t stream))
#undef DECLARE

#define FAKE_BACKEND "rocm"
#define FAKE_DEVICE "the fake HIP device"

static int vendor_sync(void *stream, const char **what) {
  *what = "hipStreamSynchronize";
  return hipStreamSynchronize((zhip_stream_t)stream);
}

static int vendor_clear(void *stream, void *dst, size_t bytes, const char **what) {
  *what = "hipMemsetAsync";
  return hipMemsetAsync(dst, 0, bytes, (zhip_stream_t)stream);
}

static int vendor_launch(void *stream, void (*fn)(void *), void *arg, const char **what) {
  *what = "hipLaunchHostFunc";
  return hipLaunchHostFunc((zhip_stream_t)stream, fn, arg);
}

#include "ops_fake.h"
