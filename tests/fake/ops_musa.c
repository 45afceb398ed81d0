/* Test operators for the MUSA backend on the fake MUSA runtime (the body
 * they share with the other fake vendors: ops_fake.h); their kernels are
 * host functions launched with musaLaunchHostFunc. */
#include "device/musa_api.h"

/* The library is linked against the (fake) MUSA runtime, as an mcc-built
 * operator library is against libmusart. */
#define DECLARE(field, sym, params) int sym params;
ZMUSA_TEST_ONLY(DECLARE)
DECLARE(sync, musaStreamSynchronize, (zmusa_stream_t stream))
DECLARE(memset_async, musaMemsetAsync, (void *dst, int value, size_t bytes, zmusa_stream_t stream))
#undef DECLARE

#define FAKE_BACKEND "musa"
#define FAKE_DEVICE "the fake MUSA device"

static int vendor_sync(void *stream, const char **what) {
  *what = "musaStreamSynchronize";
  return musaStreamSynchronize((zmusa_stream_t)stream);
}

static int vendor_clear(void *stream, void *dst, size_t bytes, const char **what) {
  *what = "musaMemsetAsync";
  return musaMemsetAsync(dst, 0, bytes, (zmusa_stream_t)stream);
}

static int vendor_launch(void *stream, void (*fn)(void *), void *arg, const char **what) {
  *what = "musaLaunchHostFunc";
  return musaLaunchHostFunc((zmusa_stream_t)stream, fn, arg);
}

#include "ops_fake.h"
