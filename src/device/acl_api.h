/* The part of the Ascend runtime API (ACL, libascendcl) the Ascend backend
 * uses, declared by hand so that zlbench builds and starts without CANN:
 * handle types, the enum values, and every entry point as an X-macro of
 * (field, exported symbol, parameters).
 *
 * No CANN header is available where zlbench is built and tested: the
 * prototypes follow acl_rt.h and acl_mdl.h of ACL 1.17, the enum values
 * were read from a compiled probe against those headers. The backend
 * (acl.c) and the fake runtime (tests/fake/fake_acl.c) both include this
 * file, so a wrong value here would be wrong in both and pass the tests:
 * docs/architecture.md ("Ascend") lists what rests on it. aclError is an
 * int; enum parameters are ints (C enums of those values have int's size
 * and calling convention). */
#ifndef ZLB_ACL_API_H
#define ZLB_ACL_API_H

#include <stddef.h>
#include <stdint.h>

typedef void *zacl_stream_t;  /* aclrtStream */
typedef void *zacl_event_t;   /* aclrtEvent */
typedef void *zacl_mdlri_t;   /* aclmdlRI: a captured model runtime instance */
typedef void (*zacl_host_fn_t)(void *args); /* aclrtHostFunc */

/* aclError values. The runtime's codes are 6 digits: 107xxx parameters,
 * handles and capture rules, 207xxx resources, 507xxx device and driver
 * failures. The codes that decide a verdict are in the registry's table
 * (ascend_classify in acl.c); these are the others the backend names. */
enum {
  ZACL_SUCCESS = 0,
  ZACL_ERROR_RT_PARAM_INVALID = 107000,
  ZACL_ERROR_RT_INVALID_DEVICEID = 107001,
  ZACL_ERROR_RT_CONTEXT_NULL = 107002, /* no device set on this thread */
  ZACL_ERROR_RT_INVALID_HANDLE = 107017,
  ZACL_ERROR_RT_STREAM_CAPTURED = 107027,          /* not allowed while capturing */
  ZACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED = 107036,
  ZACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000,
  ZACL_ERROR_RT_MEMORY_ALLOCATION = 207001,
  ZACL_ERROR_RT_NO_DEVICE = 207004,
  ZACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006,
  ZACL_ERROR_RT_LOST_HEARTBEAT = 507010,
  ZACL_ERROR_RT_DEVICE_MEM_ERROR = 507053,
  ZACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED = 507903
};

/* aclrtDevAttr (aclrtGetDeviceInfo). */
enum {
  ZACL_DEV_ATTR_AICORE_CORE_NUM = 101,
  ZACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
  ZACL_DEV_ATTR_L2_CACHE_SIZE = 302 /* bytes */
};

enum {
  ZACL_HBM_MEM = 1,                 /* aclrtMemAttr */
  ZACL_MEM_MALLOC_HUGE_FIRST = 0,   /* aclrtMemMallocPolicy */
  ZACL_MEMCPY_HOST_TO_HOST = 0,     /* aclrtMemcpyKind */
  ZACL_MEMCPY_HOST_TO_DEVICE = 1,
  ZACL_MEMCPY_DEVICE_TO_HOST = 2,
  ZACL_MEMCPY_DEVICE_TO_DEVICE = 3,
  ZACL_EVENT_SYNC = 0x1,            /* aclrtCreateEventWithFlag */
  ZACL_EVENT_TIME_LINE = 0x8,
  ZACL_CAPTURE_MODE_GLOBAL = 0,     /* aclmdlRICaptureMode */
  ZACL_CAPTURE_MODE_THREAD_LOCAL = 1,
  ZACL_CAPTURE_MODE_RELAXED = 2,
  ZACL_CAPTURE_STATUS_NONE = 0,     /* aclmdlRICaptureStatus */
  ZACL_CAPTURE_STATUS_ACTIVE = 1,
  ZACL_CAPTURE_STATUS_INVALIDATED = 2
};

/* Required entry points: the backend does not load without any of them.
 * The capture calls (aclmdlRI*) and aclrtLaunchHostFunc are recent
 * additions to ACL; a library without them is named with the symbol. */
#define ZACL_REQUIRED(X)                                                         \
  X(init, aclInit, (const char *config_path))                                  \
  X(device_count, aclrtGetDeviceCount, (uint32_t *count))                      \
  X(set_device, aclrtSetDevice, (int32_t device))                              \
  X(get_device, aclrtGetDevice, (int32_t *device))                             \
  X(device_info, aclrtGetDeviceInfo, (uint32_t device, int attr, int64_t *value)) \
  X(mem_info, aclrtGetMemInfo, (int attr, size_t *free_bytes, size_t *total_bytes)) \
  X(device_sync, aclrtSynchronizeDevice, (void))                               \
  X(mem_alloc, aclrtMalloc, (void **ptr, size_t size, int policy))             \
  X(mem_free, aclrtFree, (void *ptr))                                          \
  X(memcpy, aclrtMemcpy,                                                       \
    (void *dst, size_t dest_max, const void *src, size_t count, int kind))       \
  X(memcpy_async, aclrtMemcpyAsync,                                            \
    (void *dst, size_t dest_max, const void *src, size_t count, int kind,       \
     zacl_stream_t stream))                                                      \
  X(memset_async, aclrtMemsetAsync,                                            \
    (void *dst, size_t max_count, int32_t value, size_t count, zacl_stream_t stream)) \
  X(stream_create, aclrtCreateStream, (zacl_stream_t *stream))                 \
  X(stream_destroy, aclrtDestroyStream, (zacl_stream_t stream))                \
  X(stream_sync, aclrtSynchronizeStream, (zacl_stream_t stream))               \
  X(stream_wait_event, aclrtStreamWaitEvent, (zacl_stream_t stream, zacl_event_t event)) \
  X(event_create, aclrtCreateEventWithFlag, (zacl_event_t *event, uint32_t flag)) \
  X(event_destroy, aclrtDestroyEvent, (zacl_event_t event))                    \
  X(event_record, aclrtRecordEvent, (zacl_event_t event, zacl_stream_t stream)) \
  X(event_sync, aclrtSynchronizeEvent, (zacl_event_t event))                   \
  X(event_elapsed, aclrtEventElapsedTime, (float *ms, zacl_event_t start, zacl_event_t end)) \
  X(capture_begin, aclmdlRICaptureBegin, (zacl_stream_t stream, int mode))     \
  X(capture_info, aclmdlRICaptureGetInfo,                                      \
    (zacl_stream_t stream, int *status, zacl_mdlri_t *model))                    \
  X(capture_end, aclmdlRICaptureEnd, (zacl_stream_t stream, zacl_mdlri_t *model)) \
  X(model_execute, aclmdlRIExecuteAsync, (zacl_mdlri_t model, zacl_stream_t stream)) \
  X(model_destroy, aclmdlRIDestroy, (zacl_mdlri_t model))

/* Strings: the SoC name (required) and the text of this thread's last
 * error (optional). ACL has no name for a code: the backend keeps a table. */
#define ZACL_STRINGS(X)                                                          \
  X(soc_name, aclrtGetSocName, (void))
#define ZACL_OPTIONAL_STRINGS(X)                                                 \
  X(recent_error, aclGetRecentErrMsg, (void))

/* Not used by the backend: host-function launches, for the fake runtime's
 * test operators. */
#define ZACL_TEST_ONLY(X)                                                        \
  X(launch_host_func, aclrtLaunchHostFunc,                                     \
    (zacl_stream_t stream, zacl_host_fn_t fn, void *args))

#endif
