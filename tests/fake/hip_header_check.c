/* Compile-time check of the ROCm backend's hand-written HIP declarations
 * (src/device/hip_api.h) against HIP's own header: every entry point's
 * exact type and every enum value. Built where HIP's header is installed
 * (Debian: libamdhip64-dev); there is nothing to run. */
#include <hip/hip_runtime_api.h>

#define ZHIP_HAVE_HIP_HEADER 1
#define ZHIP_ERR_T hipError_t
#define ZHIP_ATTR_T hipDeviceAttribute_t
#define ZHIP_CAPMODE_T hipStreamCaptureMode
#define ZHIP_CAPSTATUS_T hipStreamCaptureStatus
#include "device/hip_api.h"

#define SAME_TYPE(a, b) __builtin_types_compatible_p(a, b)

/* Our handle types are HIP's. */
_Static_assert(SAME_TYPE(zhip_stream_t, hipStream_t), "hipStream_t");
_Static_assert(SAME_TYPE(zhip_event_t, hipEvent_t), "hipEvent_t");
_Static_assert(SAME_TYPE(zhip_graph_t, hipGraph_t), "hipGraph_t");
_Static_assert(SAME_TYPE(zhip_graph_exec_t, hipGraphExec_t), "hipGraphExec_t");
_Static_assert(SAME_TYPE(zhip_graph_node_t, hipGraphNode_t), "hipGraphNode_t");
_Static_assert(SAME_TYPE(zhip_deviceptr_t, hipDeviceptr_t), "hipDeviceptr_t");
_Static_assert(sizeof(zhip_uuid_t) == sizeof(hipUUID), "hipUUID");
/* The backend calls through int-returning, int-taking pointers: the
 * enums must be int-sized. */
_Static_assert(sizeof(hipError_t) == sizeof(int), "hipError_t size");
_Static_assert(sizeof(hipDeviceAttribute_t) == sizeof(int), "hipDeviceAttribute_t size");
_Static_assert(sizeof(hipStreamCaptureMode) == sizeof(int), "hipStreamCaptureMode size");
_Static_assert(sizeof(hipStreamCaptureStatus) == sizeof(int), "hipStreamCaptureStatus size");

/* Every entry point, exactly as HIP declares it. */
#define CHECK(field, sym, params)                                                \
  _Static_assert(SAME_TYPE(__typeof__(&sym), hipError_t(*) params), #sym " differs from HIP's header");
ZHIP_REQUIRED(CHECK)
ZHIP_OPTIONAL(CHECK)
#if HIP_VERSION >= 50300000
ZHIP_TEST_ONLY(CHECK)
#endif
#undef CHECK
#define CHECK(field, sym, params)                                                \
  _Static_assert(SAME_TYPE(__typeof__(&sym), const char *(*) params), #sym " differs from HIP's header");
ZHIP_STRINGS(CHECK)
#undef CHECK

/* Every value. */
#define VALUE(ours, theirs) _Static_assert((long)(ours) == (long)(theirs), #ours " is not " #theirs);
VALUE(ZHIP_SUCCESS, hipSuccess)
VALUE(ZHIP_ERROR_INVALID_VALUE, hipErrorInvalidValue)
VALUE(ZHIP_ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory)
VALUE(ZHIP_ERROR_NOT_INITIALIZED, hipErrorNotInitialized)
VALUE(ZHIP_ERROR_INVALID_DEVICE_POINTER, hipErrorInvalidDevicePointer)
VALUE(ZHIP_ERROR_NO_DEVICE, hipErrorNoDevice)
VALUE(ZHIP_ERROR_INVALID_DEVICE, hipErrorInvalidDevice)
VALUE(ZHIP_ERROR_INVALID_CONTEXT, hipErrorInvalidContext)
VALUE(ZHIP_ERROR_INVALID_HANDLE, hipErrorInvalidHandle)
VALUE(ZHIP_ERROR_NOT_READY, hipErrorNotReady)
VALUE(ZHIP_ERROR_ILLEGAL_ADDRESS, hipErrorIllegalAddress)
VALUE(ZHIP_ERROR_CONTEXT_IS_DESTROYED, hipErrorContextIsDestroyed)
VALUE(ZHIP_ERROR_LAUNCH_FAILURE, hipErrorLaunchFailure)
VALUE(ZHIP_ERROR_NOT_SUPPORTED, hipErrorNotSupported)
VALUE(ZHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED, hipErrorStreamCaptureUnsupported)
VALUE(ZHIP_ERROR_STREAM_CAPTURE_INVALIDATED, hipErrorStreamCaptureInvalidated)
VALUE(ZHIP_ERROR_STREAM_CAPTURE_UNMATCHED, hipErrorStreamCaptureUnmatched)
VALUE(ZHIP_ERROR_UNKNOWN, hipErrorUnknown)
VALUE(ZHIP_ATTR_CLOCK_RATE, hipDeviceAttributeClockRate)
VALUE(ZHIP_ATTR_L2_CACHE_SIZE, hipDeviceAttributeL2CacheSize)
VALUE(ZHIP_ATTR_CC_MAJOR, hipDeviceAttributeComputeCapabilityMajor)
VALUE(ZHIP_ATTR_MEMORY_BUS_WIDTH, hipDeviceAttributeMemoryBusWidth)
VALUE(ZHIP_ATTR_MEMORY_CLOCK_RATE, hipDeviceAttributeMemoryClockRate)
VALUE(ZHIP_ATTR_CC_MINOR, hipDeviceAttributeComputeCapabilityMinor)
VALUE(ZHIP_ATTR_MULTIPROCESSOR_COUNT, hipDeviceAttributeMultiprocessorCount)
VALUE(ZHIP_STREAM_NON_BLOCKING, hipStreamNonBlocking)
VALUE(ZHIP_EVENT_DEFAULT, hipEventDefault)
VALUE(ZHIP_EVENT_DISABLE_TIMING, hipEventDisableTiming)
VALUE(ZHIP_CAPTURE_MODE_GLOBAL, hipStreamCaptureModeGlobal)
VALUE(ZHIP_CAPTURE_MODE_THREAD_LOCAL, hipStreamCaptureModeThreadLocal)
VALUE(ZHIP_CAPTURE_MODE_RELAXED, hipStreamCaptureModeRelaxed)
VALUE(ZHIP_CAPTURE_STATUS_NONE, hipStreamCaptureStatusNone)
VALUE(ZHIP_CAPTURE_STATUS_ACTIVE, hipStreamCaptureStatusActive)
VALUE(ZHIP_CAPTURE_STATUS_INVALIDATED, hipStreamCaptureStatusInvalidated)
VALUE(ZHIP_HOST_MALLOC_PORTABLE, hipHostMallocPortable)
VALUE(ZHIP_HOST_MALLOC_MAPPED, hipHostMallocMapped)
VALUE(ZHIP_HOST_MALLOC_COHERENT, hipHostMallocCoherent)
VALUE(ZHIP_STREAM_WAIT_VALUE_GTE, hipStreamWaitValueGte)
#undef VALUE

/* A translation unit must declare something. */
int zlb_hip_header_checked(void);
int zlb_hip_header_checked(void) { return HIP_VERSION; }
