/* Test operators for the Ascend backend on the fake ACL runtime (the body
 * they share with the other fake vendors: ops_fake.h); their kernels are
 * host functions launched with aclrtLaunchHostFunc. */
#include <stdint.h>

#include "device/acl_api.h"

/* The library is linked against the (fake) ACL runtime, as an Ascend C
 * operator library is against libascendcl. */
#define DECLARE(field, sym, params) int sym params;
ZACL_TEST_ONLY(DECLARE)
DECLARE(sync, aclrtSynchronizeStream, (zacl_stream_t stream))
DECLARE(memset_async, aclrtMemsetAsync,
        (void *dst, size_t max_count, int32_t value, size_t count, zacl_stream_t stream))
#undef DECLARE

#define FAKE_BACKEND "ascend"
#define FAKE_DEVICE "the fake NPU"

static int vendor_sync(void *stream, const char **what) {
  *what = "aclrtSynchronizeStream";
  return aclrtSynchronizeStream((zacl_stream_t)stream);
}

static int vendor_clear(void *stream, void *dst, size_t bytes, const char **what) {
  *what = "aclrtMemsetAsync";
  return aclrtMemsetAsync(dst, bytes, 0, bytes, (zacl_stream_t)stream);
}

static int vendor_launch(void *stream, void (*fn)(void *), void *arg, const char **what) {
  *what = "aclrtLaunchHostFunc";
  return aclrtLaunchHostFunc((zacl_stream_t)stream, fn, arg);
}

#include "ops_fake.h"
