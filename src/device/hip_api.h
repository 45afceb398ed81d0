/* The part of the HIP runtime API (libamdhip64) the ROCm backend uses,
 * declared by hand so that zlbench builds and starts without ROCm: handle
 * types, the enum values, and every entry point as an X-macro of
 * (field, exported symbol, parameters). Only the symbols and values that
 * ROCm 5.2 through 7 export alike are used (docs/architecture.md, "ROCm").
 *
 * The handle types use the struct tags of HIP's own header, and the enum
 * parameters are ints unless ZHIP_ERR_T and friends are defined first:
 * tests/fake/hip_header_check.c includes HIP's header, defines them as
 * HIP's enum types and checks every declaration here against it at
 * compile time. The fake runtime (tests/fake/fake_hip.c) defines its
 * exports with these same declarations. */
#ifndef ZLB_HIP_API_H
#define ZLB_HIP_API_H

#include <stddef.h>
#include <stdint.h>

#ifndef ZHIP_ERR_T
#define ZHIP_ERR_T int      /* hipError_t */
#endif
#ifndef ZHIP_ATTR_T
#define ZHIP_ATTR_T int     /* hipDeviceAttribute_t */
#endif
#ifndef ZHIP_CAPMODE_T
#define ZHIP_CAPMODE_T int  /* hipStreamCaptureMode */
#endif
#ifndef ZHIP_CAPSTATUS_T
#define ZHIP_CAPSTATUS_T int /* hipStreamCaptureStatus */
#endif

typedef struct ihipStream_t *zhip_stream_t;
typedef struct ihipEvent_t *zhip_event_t;
typedef struct ihipGraph *zhip_graph_t;
typedef struct hipGraphExec *zhip_graph_exec_t;
typedef struct hipGraphNode *zhip_graph_node_t;
typedef void *zhip_deviceptr_t;
typedef void (*zhip_host_fn_t)(void *user_data);
#ifndef ZHIP_HAVE_HIP_HEADER
struct hipUUID_t {
  char bytes[16];
};
#endif
typedef struct hipUUID_t zhip_uuid_t;

/* hipError_t values (identical from ROCm 5.2 to 7; 911/912 appear in 7
 * with meanings unlike CUDA's). */
enum {
  ZHIP_SUCCESS = 0,
  ZHIP_ERROR_INVALID_VALUE = 1,
  ZHIP_ERROR_OUT_OF_MEMORY = 2,
  ZHIP_ERROR_NOT_INITIALIZED = 3,
  ZHIP_ERROR_INVALID_DEVICE_POINTER = 17,
  ZHIP_ERROR_NO_DEVICE = 100,
  ZHIP_ERROR_INVALID_DEVICE = 101,
  ZHIP_ERROR_INVALID_CONTEXT = 201,
  ZHIP_ERROR_INVALID_HANDLE = 400,
  ZHIP_ERROR_NOT_READY = 600,
  ZHIP_ERROR_ILLEGAL_ADDRESS = 700,
  ZHIP_ERROR_CONTEXT_IS_DESTROYED = 709,
  ZHIP_ERROR_LAUNCH_FAILURE = 719,
  ZHIP_ERROR_NOT_SUPPORTED = 801,
  ZHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  ZHIP_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  ZHIP_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
  ZHIP_ERROR_UNKNOWN = 999
};

/* hipDeviceAttribute_t: these ids are the same in ROCm 5 and 6+ (the
 * enum was renumbered elsewhere; none of those are used). */
enum {
  ZHIP_ATTR_CLOCK_RATE = 5,           /* kHz */
  ZHIP_ATTR_L2_CACHE_SIZE = 19,       /* bytes */
  ZHIP_ATTR_CC_MAJOR = 23,
  ZHIP_ATTR_MEMORY_BUS_WIDTH = 59,    /* bits */
  ZHIP_ATTR_MEMORY_CLOCK_RATE = 60,   /* kHz */
  ZHIP_ATTR_CC_MINOR = 61,
  ZHIP_ATTR_MULTIPROCESSOR_COUNT = 63 /* compute units */
};

enum {
  ZHIP_STREAM_NON_BLOCKING = 1,
  ZHIP_EVENT_DEFAULT = 0,
  ZHIP_EVENT_DISABLE_TIMING = 2,
  ZHIP_CAPTURE_MODE_GLOBAL = 0,
  ZHIP_CAPTURE_MODE_THREAD_LOCAL = 1,
  ZHIP_CAPTURE_MODE_RELAXED = 2,
  ZHIP_CAPTURE_STATUS_NONE = 0,
  ZHIP_CAPTURE_STATUS_ACTIVE = 1,
  ZHIP_CAPTURE_STATUS_INVALIDATED = 2,
  ZHIP_HOST_MALLOC_PORTABLE = 0x1,
  ZHIP_HOST_MALLOC_MAPPED = 0x2,
  ZHIP_HOST_MALLOC_COHERENT = 0x40000000,
  ZHIP_STREAM_WAIT_VALUE_GTE = 0x0  /* until (*ptr & mask) >= value */
};

/* Required entry points: the backend does not load without any of them.
 * Every one is exported by libamdhip64.so.5 (ROCm 5.2) at version node
 * hip_5.0 or older. */
#define ZHIP_REQUIRED(X)                                                         \
  X(init, hipInit, (unsigned flags))                                           \
  X(driver_version, hipDriverGetVersion, (int *version))                       \
  X(runtime_version, hipRuntimeGetVersion, (int *version))                     \
  X(device_count, hipGetDeviceCount, (int *count))                             \
  X(device_name, hipDeviceGetName, (char *name, int len, int device))          \
  X(device_attr, hipDeviceGetAttribute, (int *value, ZHIP_ATTR_T attr, int device)) \
  X(device_pci, hipDeviceGetPCIBusId, (char *bus_id, int len, int device))     \
  X(device_mem, hipDeviceTotalMem, (size_t *bytes, int device))                \
  X(set_device, hipSetDevice, (int device))                                    \
  X(device_sync, hipDeviceSynchronize, (void))                                 \
  X(stream_create, hipStreamCreateWithFlags, (zhip_stream_t *stream, unsigned flags)) \
  X(stream_destroy, hipStreamDestroy, (zhip_stream_t stream))                  \
  X(stream_sync, hipStreamSynchronize, (zhip_stream_t stream))                 \
  X(stream_wait_event, hipStreamWaitEvent,                                     \
    (zhip_stream_t stream, zhip_event_t event, unsigned flags))                  \
  X(stream_is_capturing, hipStreamIsCapturing,                                 \
    (zhip_stream_t stream, ZHIP_CAPSTATUS_T *status))                            \
  X(event_create, hipEventCreateWithFlags, (zhip_event_t *event, unsigned flags)) \
  X(event_destroy, hipEventDestroy, (zhip_event_t event))                      \
  X(event_record, hipEventRecord, (zhip_event_t event, zhip_stream_t stream))  \
  X(event_sync, hipEventSynchronize, (zhip_event_t event))                     \
  X(event_elapsed, hipEventElapsedTime, (float *ms, zhip_event_t start, zhip_event_t stop)) \
  X(mem_alloc, hipMalloc, (void **ptr, size_t size))                           \
  X(mem_free, hipFree, (void *ptr))                                            \
  X(mem_info, hipMemGetInfo, (size_t *free_bytes, size_t *total_bytes))        \
  X(memset_async, hipMemsetAsync, (void *dst, int value, size_t bytes, zhip_stream_t stream)) \
  X(memcpy_htod, hipMemcpyHtoD, (zhip_deviceptr_t dst, void *src, size_t bytes)) \
  X(memcpy_dtoh, hipMemcpyDtoH, (void *dst, zhip_deviceptr_t src, size_t bytes)) \
  X(memcpy_dtod, hipMemcpyDtoDAsync,                                           \
    (zhip_deviceptr_t dst, zhip_deviceptr_t src, size_t bytes, zhip_stream_t stream)) \
  X(capture_begin, hipStreamBeginCapture, (zhip_stream_t stream, ZHIP_CAPMODE_T mode)) \
  X(capture_end, hipStreamEndCapture, (zhip_stream_t stream, zhip_graph_t *graph)) \
  X(graph_instantiate, hipGraphInstantiate,                                    \
    (zhip_graph_exec_t *exec, zhip_graph_t graph, zhip_graph_node_t *error_node, \
     char *log, size_t log_size))                                                \
  X(graph_launch, hipGraphLaunch, (zhip_graph_exec_t exec, zhip_stream_t stream)) \
  X(graph_destroy, hipGraphDestroy, (zhip_graph_t graph))                      \
  X(graph_exec_destroy, hipGraphExecDestroy, (zhip_graph_exec_t exec))

/* Optional entry points: bound when present. The uuid query came with
 * ROCm 5.1; the hold needs the mapped host memory calls and the stream
 * wait (ROCm 4.4+). */
#define ZHIP_OPTIONAL(X)                                                         \
  X(device_uuid, hipDeviceGetUuid, (zhip_uuid_t *uuid, int device))            \
  X(host_alloc, hipHostMalloc, (void **ptr, size_t size, unsigned flags))      \
  X(host_free, hipHostFree, (void *ptr))                                       \
  X(host_device_ptr, hipHostGetDevicePointer, (void **dev_ptr, void *host_ptr, unsigned flags)) \
  X(wait_value32, hipStreamWaitValue32,                                        \
    (zhip_stream_t stream, void *ptr, uint32_t value, unsigned flags, uint32_t mask))

/* Error names; they return the string itself, not an error code. */
#define ZHIP_STRINGS(X)                                                          \
  X(error_name, hipGetErrorName, (ZHIP_ERR_T error))                           \
  X(error_string, hipGetErrorString, (ZHIP_ERR_T error))

/* Not used by the backend: host-function launches (ROCm 5.3+), for the
 * fake runtime's test operators. */
#define ZHIP_TEST_ONLY(X)                                                        \
  X(launch_host_func, hipLaunchHostFunc,                                       \
    (zhip_stream_t stream, zhip_host_fn_t fn, void *user_data))

#endif
