/* The part of the MUSA runtime API (libmusart) the MUSA backend uses,
 * declared by hand so that zlbench builds and starts without the MUSA SDK:
 * handle types, the enum values, and every entry point as an X-macro of
 * (field, exported symbol, parameters).
 *
 * No authoritative public header was available when this was written: the
 * names, signatures and values follow the MUSA runtime's CUDA-shaped API as
 * projects built on it call it (CUDA's enum numbering, musa* names). The
 * fake runtime (tests/fake/fake_musa.c) defines its exports with these same
 * declarations, so the tests prove the backend against these assumptions,
 * not against Moore Threads' library (docs/architecture.md, "MUSA"). */
#ifndef ZLB_MUSA_API_H
#define ZLB_MUSA_API_H

#include <stddef.h>
#include <stdint.h>

typedef struct zmusa_stream_s *zmusa_stream_t;
typedef struct zmusa_event_s *zmusa_event_t;
typedef struct zmusa_graph_s *zmusa_graph_t;
typedef struct zmusa_graph_exec_s *zmusa_graph_exec_t;
typedef struct zmusa_graph_node_s *zmusa_graph_node_t;
typedef void (*zmusa_host_fn_t)(void *user_data);

/* musaError_t: CUDA's numbers. */
enum {
  ZMUSA_SUCCESS = 0,
  ZMUSA_ERROR_INVALID_VALUE = 1,
  ZMUSA_ERROR_MEMORY_ALLOCATION = 2,
  ZMUSA_ERROR_INITIALIZATION = 3,
  ZMUSA_ERROR_INSUFFICIENT_DRIVER = 35,
  ZMUSA_ERROR_NO_DEVICE = 100,
  ZMUSA_ERROR_INVALID_DEVICE = 101,
  ZMUSA_ERROR_INVALID_HANDLE = 400,
  ZMUSA_ERROR_NOT_READY = 600,
  ZMUSA_ERROR_ILLEGAL_ADDRESS = 700,
  ZMUSA_ERROR_CONTEXT_IS_DESTROYED = 709,
  ZMUSA_ERROR_LAUNCH_FAILURE = 719,
  ZMUSA_ERROR_NOT_SUPPORTED = 801,
  ZMUSA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  ZMUSA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  ZMUSA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
  ZMUSA_ERROR_UNKNOWN = 999
};

/* musaDeviceAttr: CUDA's numbering. */
enum {
  ZMUSA_ATTR_CLOCK_RATE = 13,            /* kHz */
  ZMUSA_ATTR_MULTIPROCESSOR_COUNT = 16,
  ZMUSA_ATTR_PCI_BUS_ID = 33,
  ZMUSA_ATTR_PCI_DEVICE_ID = 34,
  ZMUSA_ATTR_MEMORY_CLOCK_RATE = 36,     /* kHz */
  ZMUSA_ATTR_MEMORY_BUS_WIDTH = 37,      /* bits */
  ZMUSA_ATTR_L2_CACHE_SIZE = 38,         /* bytes */
  ZMUSA_ATTR_PCI_DOMAIN_ID = 50,
  ZMUSA_ATTR_CC_MAJOR = 75,
  ZMUSA_ATTR_CC_MINOR = 76
};

enum {
  ZMUSA_MEMCPY_HOST_TO_DEVICE = 1,
  ZMUSA_MEMCPY_DEVICE_TO_HOST = 2,
  ZMUSA_MEMCPY_DEVICE_TO_DEVICE = 3,
  ZMUSA_STREAM_NON_BLOCKING = 1,
  ZMUSA_EVENT_DEFAULT = 0,
  ZMUSA_EVENT_DISABLE_TIMING = 2,
  ZMUSA_CAPTURE_MODE_GLOBAL = 0,
  ZMUSA_CAPTURE_MODE_THREAD_LOCAL = 1,
  ZMUSA_CAPTURE_MODE_RELAXED = 2,
  ZMUSA_CAPTURE_STATUS_NONE = 0,
  ZMUSA_CAPTURE_STATUS_ACTIVE = 1,
  ZMUSA_CAPTURE_STATUS_INVALIDATED = 2
};

/* musaDeviceProp: only the name (char[256] at offset 0) and the uuid (16
 * bytes at offset 256) are read; the rest of its layout is not relied on,
 * and the buffer handed to the runtime is far larger than any CUDA-shaped
 * property struct, so a longer one still fits. */
#define ZMUSA_PROP_NAME_OFFSET 0
#define ZMUSA_PROP_NAME_BYTES 256
#define ZMUSA_PROP_UUID_OFFSET 256
#define ZMUSA_PROP_BUFFER_BYTES 16384

/* Required entry points: the backend does not load without any of them. */
#define ZMUSA_REQUIRED(X)                                                        \
  X(driver_version, musaDriverGetVersion, (int *version))                     \
  X(runtime_version, musaRuntimeGetVersion, (int *version))                   \
  X(device_count, musaGetDeviceCount, (int *count))                           \
  X(set_device, musaSetDevice, (int device))                                  \
  X(get_device, musaGetDevice, (int *device))                                 \
  X(device_attr, musaDeviceGetAttribute, (int *value, int attr, int device))  \
  X(device_props, musaGetDeviceProperties, (void *prop, int device))          \
  X(device_sync, musaDeviceSynchronize, (void))                               \
  X(stream_create, musaStreamCreateWithFlags, (zmusa_stream_t *stream, unsigned flags)) \
  X(stream_destroy, musaStreamDestroy, (zmusa_stream_t stream))               \
  X(stream_sync, musaStreamSynchronize, (zmusa_stream_t stream))              \
  X(stream_wait_event, musaStreamWaitEvent,                                   \
    (zmusa_stream_t stream, zmusa_event_t event, unsigned flags))             \
  X(event_create, musaEventCreateWithFlags, (zmusa_event_t *event, unsigned flags)) \
  X(event_destroy, musaEventDestroy, (zmusa_event_t event))                   \
  X(event_record, musaEventRecord, (zmusa_event_t event, zmusa_stream_t stream)) \
  X(event_sync, musaEventSynchronize, (zmusa_event_t event))                  \
  X(event_elapsed, musaEventElapsedTime,                                      \
    (float *ms, zmusa_event_t start, zmusa_event_t stop))                     \
  X(mem_alloc, musaMalloc, (void **ptr, size_t size))                         \
  X(mem_free, musaFree, (void *ptr))                                          \
  X(mem_info, musaMemGetInfo, (size_t *free_bytes, size_t *total_bytes))      \
  X(memset_async, musaMemsetAsync,                                            \
    (void *dst, int value, size_t bytes, zmusa_stream_t stream))              \
  X(memcpy, musaMemcpy, (void *dst, const void *src, size_t bytes, int kind)) \
  X(memcpy_async, musaMemcpyAsync,                                            \
    (void *dst, const void *src, size_t bytes, int kind, zmusa_stream_t stream)) \
  X(capture_begin, musaStreamBeginCapture, (zmusa_stream_t stream, int mode)) \
  X(capture_end, musaStreamEndCapture, (zmusa_stream_t stream, zmusa_graph_t *graph)) \
  X(graph_instantiate, musaGraphInstantiate,                                  \
    (zmusa_graph_exec_t *exec, zmusa_graph_t graph, zmusa_graph_node_t *error_node, \
     char *log, size_t log_size))                                             \
  X(graph_launch, musaGraphLaunch, (zmusa_graph_exec_t exec, zmusa_stream_t stream)) \
  X(graph_destroy, musaGraphDestroy, (zmusa_graph_t graph))                   \
  X(graph_exec_destroy, musaGraphExecDestroy, (zmusa_graph_exec_t exec))

/* Optional entry points: bound when present. The 3-argument instantiate is
 * preferred where the runtime has it; without musaStreamIsCapturing the
 * backend cannot say whether a stream captures. (MUSA has neither
 * musaThreadExchangeStreamCaptureMode nor the first musaStreamGetCaptureInfo:
 * neither is used.) */
#define ZMUSA_OPTIONAL(X)                                                        \
  X(graph_instantiate_flags, musaGraphInstantiateWithFlags,                   \
    (zmusa_graph_exec_t *exec, zmusa_graph_t graph, unsigned long long flags)) \
  X(stream_is_capturing, musaStreamIsCapturing, (zmusa_stream_t stream, int *status))

/* Error names; they return the string itself, not an error code. */
#define ZMUSA_STRINGS(X)                                                         \
  X(error_name, musaGetErrorName, (int error))                                \
  X(error_string, musaGetErrorString, (int error))

/* Not used by the backend: host-function launches, for the fake runtime's
 * test operators. */
#define ZMUSA_TEST_ONLY(X)                                                       \
  X(launch_host_func, musaLaunchHostFunc,                                     \
    (zmusa_stream_t stream, zmusa_host_fn_t fn, void *user_data))

#endif
