/* A fake HIP runtime for tests: built as libamdhip64.so.6 (and, without
 * hipEventElapsedTime, as a library that lacks a symbol), exporting the
 * entry points the ROCm backend loads with HIP's signatures and error
 * codes (declared once, in src/device/hip_api.h, which a compile-time test
 * checks against HIP's header), plus hipLaunchHostFunc for the test
 * operators. The device is emulated by fake_core.c; see fake_core.h for
 * the ZL_FAKE_* variables. HIP's visibility variables are honoured as HIP
 * does: ROCR_VISIBLE_DEVICES masks first, then HIP_VISIBLE_DEVICES (or,
 * when that is unset, CUDA_VISIBLE_DEVICES) indexes what is left. ZL_FAKE_HIP_VERSION sets
 * the version both version queries report (default 6.3.42134);
 * ZL_FAKE_NO_WAIT_VALUE=1 refuses hipStreamWaitValue32. zlFakeHipSetKernelHook
 * is the fake libroctracer64's way in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/hip_api.h"
#include "fake_core.h"

#define EXPORT __attribute__((visibility("default")))

static const char *const hip_visibility[] = {"ROCR_VISIBLE_DEVICES",
                                             "HIP_VISIBLE_DEVICES|CUDA_VISIBLE_DEVICES", NULL};

static const fk_vendor_t hip_vendor = {
    .name = "hip",
    .visibility_env = hip_visibility,
    .fault_message = "Memory access fault by GPU node-%d (Agent handle: 0x1) on address %p. "
                     "Reason: Page not present or supervisor privilege.",
    .ok = ZHIP_SUCCESS,
    .invalid_value = ZHIP_ERROR_INVALID_VALUE,
    .out_of_memory = ZHIP_ERROR_OUT_OF_MEMORY,
    .no_device = ZHIP_ERROR_NO_DEVICE,
    /* hipInit with no GPU returns 101 (measured on ROCm 5.2), not 100 */
    .init_no_device = ZHIP_ERROR_INVALID_DEVICE,
    .invalid_device = ZHIP_ERROR_INVALID_DEVICE,
    .invalid_handle = ZHIP_ERROR_INVALID_HANDLE,
    .not_ready = ZHIP_ERROR_NOT_READY,
    .illegal_address = ZHIP_ERROR_ILLEGAL_ADDRESS,
    .context_lost = ZHIP_ERROR_CONTEXT_IS_DESTROYED,
    .not_supported = ZHIP_ERROR_NOT_SUPPORTED,
    .capture_unsupported = ZHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
    .capture_invalidated = ZHIP_ERROR_STREAM_CAPTURE_INVALIDATED,
    .capture_unmatched = ZHIP_ERROR_STREAM_CAPTURE_UNMATCHED,
};

__attribute__((constructor)) static void fake_hip_setup(void) { fk_setup(&hip_vendor); }

#define S(x) ((fk_stream_t *)(x))
#define E(x) ((fk_event_t *)(x))
#define G(x) ((fk_graph_t *)(x))

/* Every exported function has the declaration of hip_api.h. */
#define DECLARE(field, sym, params) EXPORT int sym params;
ZHIP_REQUIRED(DECLARE)
ZHIP_OPTIONAL(DECLARE)
ZHIP_TEST_ONLY(DECLARE)
#undef DECLARE
#define DECLARE(field, sym, params) EXPORT const char *sym params;
ZHIP_STRINGS(DECLARE)
#undef DECLARE
EXPORT int hipGetDevice(int *device);
EXPORT void zlFakeHipSetKernelHook(fk_kernel_hook_t hook);
EXPORT int hipGraphInstantiateWithFlags(zhip_graph_exec_t *exec, zhip_graph_t graph,
                                        unsigned long long flags);

static int version(void) {
  const char *e = getenv("ZL_FAKE_HIP_VERSION");
  return e && *e ? atoi(e) : 60342134;
}

int hipInit(unsigned flags) { return flags ? ZHIP_ERROR_INVALID_VALUE : fk_init(); }

int hipDriverGetVersion(int *v) {
  if (!v)
    return ZHIP_ERROR_INVALID_VALUE;
  *v = version();
  return ZHIP_SUCCESS;
}

int hipRuntimeGetVersion(int *v) { return hipDriverGetVersion(v); }

int hipGetDeviceCount(int *n) { return fk_device_count(n); }

int hipDeviceGetName(char *name, int len, int device) {
  int phys = fk_physical(device);
  if (!name || len <= 0)
    return ZHIP_ERROR_INVALID_VALUE;
  if (phys < 0)
    return ZHIP_ERROR_INVALID_DEVICE;
  snprintf(name, (size_t)len, "Fake AMD GPU %d", phys);
  return ZHIP_SUCCESS;
}

/* A distinct value per attribute and device, so that a wrong attribute id
 * (CUDA's numbering, say) is seen; ids not listed are invalid, as ids
 * outside the enum are for HIP. */
int hipDeviceGetAttribute(int *value, int attr, int device) {
  int phys = fk_physical(device);
  if (!value)
    return ZHIP_ERROR_INVALID_VALUE;
  if (phys < 0)
    return ZHIP_ERROR_INVALID_DEVICE;
  switch (attr) {
  case ZHIP_ATTR_CLOCK_RATE: *value = 2100000 + phys; break;
  case ZHIP_ATTR_L2_CACHE_SIZE: *value = (4 << 20) + phys * 4096; break;
  case ZHIP_ATTR_CC_MAJOR: *value = 9; break;
  case ZHIP_ATTR_CC_MINOR: *value = 4; break;
  case ZHIP_ATTR_MEMORY_BUS_WIDTH: *value = 8192; break;
  case ZHIP_ATTR_MEMORY_CLOCK_RATE: *value = 1300000 + phys; break;
  case ZHIP_ATTR_MULTIPROCESSOR_COUNT: *value = 304 - phys; break;
  default: return ZHIP_ERROR_INVALID_VALUE;
  }
  return ZHIP_SUCCESS;
}

int hipDeviceGetPCIBusId(char *bus, int len, int device) {
  int phys = fk_physical(device);
  if (!bus || len <= 0)
    return ZHIP_ERROR_INVALID_VALUE;
  if (phys < 0)
    return ZHIP_ERROR_INVALID_DEVICE;
  snprintf(bus, (size_t)len, "0000:%02x:00.0", 0x10 + phys);
  return ZHIP_SUCCESS;
}

int hipDeviceTotalMem(size_t *bytes, int device) {
  if (!bytes)
    return ZHIP_ERROR_INVALID_VALUE;
  if (fk_physical(device) < 0)
    return ZHIP_ERROR_INVALID_DEVICE;
  *bytes = fk_mem_bytes();
  return ZHIP_SUCCESS;
}

int hipDeviceGetUuid(zhip_uuid_t *uuid, int device) {
  int phys = fk_physical(device);
  if (!uuid)
    return ZHIP_ERROR_INVALID_VALUE;
  if (phys < 0)
    return ZHIP_ERROR_INVALID_DEVICE;
  for (int i = 0; i < 16; i++)
    uuid->bytes[i] = (char)(0xa0 + i);
  uuid->bytes[15] = (char)phys;
  return ZHIP_SUCCESS;
}

int hipSetDevice(int device) { return fk_set_device(device); }
int hipGetDevice(int *device) { return fk_get_device(device); }
int hipDeviceSynchronize(void) { return fk_device_sync(); }

int hipStreamCreateWithFlags(zhip_stream_t *s, unsigned flags) {
  if (flags & ~(unsigned)ZHIP_STREAM_NON_BLOCKING)
    return ZHIP_ERROR_INVALID_VALUE;
  return fk_stream_create((fk_stream_t **)s);
}

int hipStreamDestroy(zhip_stream_t s) { return fk_stream_destroy(S(s)); }
int hipStreamSynchronize(zhip_stream_t s) { return fk_stream_sync(S(s)); }

int hipStreamWaitEvent(zhip_stream_t s, zhip_event_t e, unsigned flags) {
  if (flags)
    return ZHIP_ERROR_INVALID_VALUE;
  return fk_stream_wait_event(S(s), E(e));
}

int hipStreamIsCapturing(zhip_stream_t s, int *status) { return fk_capture_status(S(s), status); }

int hipEventCreateWithFlags(zhip_event_t *e, unsigned flags) {
  return fk_event_create((fk_event_t **)e, !(flags & ZHIP_EVENT_DISABLE_TIMING));
}

int hipEventDestroy(zhip_event_t e) { return fk_event_destroy(E(e)); }
int hipEventRecord(zhip_event_t e, zhip_stream_t s) { return fk_event_record(E(e), S(s)); }
int hipEventSynchronize(zhip_event_t e) { return fk_event_sync(E(e)); }

#ifndef FAKE_HIP_OMIT_ELAPSED
int hipEventElapsedTime(float *ms, zhip_event_t a, zhip_event_t b) {
  return fk_event_elapsed(ms, E(a), E(b));
}
#endif

int hipMalloc(void **p, size_t n) { return fk_malloc(p, n); }
int hipFree(void *p) { return fk_free(p); }

int hipMemGetInfo(size_t *free_bytes, size_t *total) {
  size_t used = 0;
  int dev = 0, r;
  if (!free_bytes || !total)
    return ZHIP_ERROR_INVALID_VALUE;
  fk_get_device(&dev);
  if ((r = fk_mem_used(dev, &used)))
    return r;
  *total = fk_mem_bytes();
  *free_bytes = *total - used;
  return ZHIP_SUCCESS;
}

int hipMemsetAsync(void *dst, int value, size_t n, zhip_stream_t s) {
  return fk_memset(dst, value, n, S(s));
}

int hipMemcpyHtoD(zhip_deviceptr_t dst, void *src, size_t n) {
  return fk_memcpy_sync(dst, src, n, 1, 0);
}

int hipMemcpyDtoH(void *dst, zhip_deviceptr_t src, size_t n) {
  return fk_memcpy_sync(dst, src, n, 0, 1);
}

int hipMemcpyDtoDAsync(zhip_deviceptr_t dst, zhip_deviceptr_t src, size_t n, zhip_stream_t s) {
  return fk_memcpy(dst, src, n, 1, 1, S(s));
}

int hipHostMalloc(void **p, size_t n, unsigned flags) {
  (void)flags;
  return fk_host_alloc(p, n);
}

int hipHostFree(void *p) { return fk_host_free(p); }

int hipHostGetDevicePointer(void **dev, void *host, unsigned flags) {
  if (!dev || flags || !fk_host_mapped(host))
    return ZHIP_ERROR_INVALID_VALUE;
  *dev = host; /* one address space, as with a large BAR */
  return ZHIP_SUCCESS;
}

/* Only the "greater or equal" comparison is emulated. ZL_FAKE_NO_WAIT_VALUE=1:
 * a device without stream waits (hipDeviceAttributeCanUseStreamWaitValue 0). */
int hipStreamWaitValue32(zhip_stream_t s, void *ptr, uint32_t value, unsigned flags,
                         uint32_t mask) {
  const char *no = getenv("ZL_FAKE_NO_WAIT_VALUE");
  if (no && !strcmp(no, "1"))
    return ZHIP_ERROR_NOT_SUPPORTED;
  if (flags != ZHIP_STREAM_WAIT_VALUE_GTE)
    return ZHIP_ERROR_NOT_SUPPORTED;
  return fk_wait_value32(S(s), ptr, value, mask);
}

int hipLaunchHostFunc(zhip_stream_t s, zhip_host_fn_t fn, void *arg) {
  return fk_host_func(S(s), fn, arg);
}

/* For the fake libroctracer64 (fake_roctracer.c), which HIP tells of each
 * kernel dispatch as it completes: here each host function is one. */
void zlFakeHipSetKernelHook(fk_kernel_hook_t hook) { fk_set_kernel_hook(hook); }

int hipStreamBeginCapture(zhip_stream_t s, int mode) {
  if (mode < ZHIP_CAPTURE_MODE_GLOBAL || mode > ZHIP_CAPTURE_MODE_RELAXED)
    return ZHIP_ERROR_INVALID_VALUE;
  return fk_capture_begin(S(s));
}

int hipStreamEndCapture(zhip_stream_t s, zhip_graph_t *g) {
  return fk_capture_end(S(s), (fk_graph_t **)g);
}

int hipGraphInstantiate(zhip_graph_exec_t *x, zhip_graph_t g, zhip_graph_node_t *node,
                        char *log, size_t logsize) {
  (void)node;
  if (log && logsize)
    log[0] = '\0';
  return fk_graph_instantiate((fk_graph_t **)x, G(g));
}

int hipGraphInstantiateWithFlags(zhip_graph_exec_t *x, zhip_graph_t g, unsigned long long flags) {
  if (flags)
    return ZHIP_ERROR_INVALID_VALUE;
  return fk_graph_instantiate((fk_graph_t **)x, G(g));
}

int hipGraphLaunch(zhip_graph_exec_t x, zhip_stream_t s) { return fk_graph_launch(G(x), S(s)); }
int hipGraphDestroy(zhip_graph_t g) { return fk_graph_destroy(G(g)); }
int hipGraphExecDestroy(zhip_graph_exec_t x) { return fk_graph_destroy(G(x)); }

static const struct {
  int code;
  const char *name;
} names[] = {
    {0, "hipSuccess"},
    {1, "hipErrorInvalidValue"},
    {2, "hipErrorOutOfMemory"},
    {3, "hipErrorNotInitialized"},
    {17, "hipErrorInvalidDevicePointer"},
    {100, "hipErrorNoDevice"},
    {101, "hipErrorInvalidDevice"},
    {201, "hipErrorInvalidContext"},
    {214, "hipErrorECCNotCorrectable"},
    {400, "hipErrorInvalidHandle"},
    {600, "hipErrorNotReady"},
    {700, "hipErrorIllegalAddress"},
    {702, "hipErrorLaunchTimeOut"},
    {709, "hipErrorContextIsDestroyed"},
    {710, "hipErrorAssert"},
    {719, "hipErrorLaunchFailure"},
    {801, "hipErrorNotSupported"},
    {900, "hipErrorStreamCaptureUnsupported"},
    {901, "hipErrorStreamCaptureInvalidated"},
    {902, "hipErrorStreamCaptureMerge"},
    {903, "hipErrorStreamCaptureUnmatched"},
    {904, "hipErrorStreamCaptureUnjoined"},
    {905, "hipErrorStreamCaptureIsolation"},
    {906, "hipErrorStreamCaptureImplicit"},
    {907, "hipErrorCapturedEvent"},
    {908, "hipErrorStreamCaptureWrongThread"},
    {910, "hipErrorGraphExecUpdateFailure"},
    {999, "hipErrorUnknown"},
    {1052, "hipErrorRuntimeMemory"},
    {1053, "hipErrorRuntimeOther"},
};

/* As HIP does: an unknown code is "hipErrorUnknown", and the "string"
 * is the name (ROCm 5's header says so). */
const char *hipGetErrorName(int code) {
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].code == code)
      return names[i].name;
  return "hipErrorUnknown";
}

const char *hipGetErrorString(int code) { return hipGetErrorName(code); }
