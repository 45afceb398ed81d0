/* A fake MUSA runtime for tests: built as libmusart.so.1 (and, without
 * musaEventElapsedTime, as a library that lacks a symbol; and without the
 * optional musaGraphInstantiateWithFlags and musaStreamIsCapturing, as an
 * older runtime), exporting the entry points the MUSA backend loads with
 * the signatures and codes declared in src/device/musa_api.h, plus
 * musaLaunchHostFunc for the test operators. No authoritative MUSA header
 * was available: the fake and the backend share musa_api.h's assumptions,
 * so these tests prove the backend's logic, not the declarations. Every
 * attribute answers with its own value, so an attribute id mixed up with
 * another (or taken from HIP's numbering) fails a test.
 *
 * The device is emulated by fake_core.c (fake_core.h lists ZL_FAKE_*).
 * MUSA_VISIBLE_DEVICES picks and renumbers devices. ZL_FAKE_MUSA_VERSION
 * sets the number both version queries report (default 40100). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/musa_api.h"
#include "fake_core.h"

#define EXPORT __attribute__((visibility("default")))

/* How much of the caller's property buffer the fake writes: more than a
 * CUDA-shaped musaDeviceProp, so a buffer sized to that struct is overrun
 * (AddressSanitizer sees it). */
#define FAKE_PROP_BYTES 4096

static const char *const musa_visibility[] = {"MUSA_VISIBLE_DEVICES", NULL};

static const fk_vendor_t musa_vendor = {
    .name = "musa",
    .visibility_env = musa_visibility,
    .fault_message = "fake MUSA: device fault on GPU %d at address %p",
    .ok = ZMUSA_SUCCESS,
    .invalid_value = ZMUSA_ERROR_INVALID_VALUE,
    .out_of_memory = ZMUSA_ERROR_MEMORY_ALLOCATION,
    .no_device = ZMUSA_ERROR_NO_DEVICE,
    .init_no_device = ZMUSA_ERROR_NO_DEVICE,
    .invalid_device = ZMUSA_ERROR_INVALID_DEVICE,
    .invalid_handle = ZMUSA_ERROR_INVALID_HANDLE,
    .not_ready = ZMUSA_ERROR_NOT_READY,
    .illegal_address = ZMUSA_ERROR_ILLEGAL_ADDRESS,
    .context_lost = ZMUSA_ERROR_CONTEXT_IS_DESTROYED,
    .not_supported = ZMUSA_ERROR_NOT_SUPPORTED,
    .capture_unsupported = ZMUSA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
    .capture_invalidated = ZMUSA_ERROR_STREAM_CAPTURE_INVALIDATED,
    .capture_unmatched = ZMUSA_ERROR_STREAM_CAPTURE_UNMATCHED,
};

__attribute__((constructor)) static void fake_musa_setup(void) { fk_setup(&musa_vendor); }

#define S(x) ((fk_stream_t *)(x))
#define E(x) ((fk_event_t *)(x))
#define G(x) ((fk_graph_t *)(x))

/* Every exported function has the declaration of musa_api.h. */
#define DECLARE(field, sym, params) EXPORT int sym params;
ZMUSA_REQUIRED(DECLARE)
ZMUSA_OPTIONAL(DECLARE)
ZMUSA_TEST_ONLY(DECLARE)
#undef DECLARE
#define DECLARE(field, sym, params) EXPORT const char *sym params;
ZMUSA_STRINGS(DECLARE)
#undef DECLARE

static int version(void) {
  const char *e = getenv("ZL_FAKE_MUSA_VERSION");
  return e && *e ? atoi(e) : 40100;
}

int musaDriverGetVersion(int *v) {
  if (!v)
    return ZMUSA_ERROR_INVALID_VALUE;
  *v = version();
  return ZMUSA_SUCCESS;
}

int musaRuntimeGetVersion(int *v) { return musaDriverGetVersion(v); }

/* The runtime initialises on the first call; without a device, counting
 * says so (100). */
int musaGetDeviceCount(int *n) {
  int r = fk_init();
  if (r != ZMUSA_SUCCESS) {
    if (n)
      *n = 0;
    return r;
  }
  return fk_device_count(n);
}

int musaSetDevice(int device) { return fk_set_device(device); }
int musaGetDevice(int *device) { return fk_get_device(device); }
int musaDeviceSynchronize(void) { return fk_device_sync(); }

/* A distinct value per attribute (and device); ids not listed are invalid. */
int musaDeviceGetAttribute(int *value, int attr, int device) {
  int phys = fk_physical(device);
  if (!value)
    return ZMUSA_ERROR_INVALID_VALUE;
  if (phys < 0)
    return ZMUSA_ERROR_INVALID_DEVICE;
  switch (attr) {
  case ZMUSA_ATTR_CLOCK_RATE: *value = 1750000 + phys; break;
  case ZMUSA_ATTR_MULTIPROCESSOR_COUNT: *value = 128 - phys; break;
  case ZMUSA_ATTR_MEMORY_CLOCK_RATE: *value = 1400000 + phys; break;
  case ZMUSA_ATTR_MEMORY_BUS_WIDTH: *value = 384; break;
  case ZMUSA_ATTR_L2_CACHE_SIZE: *value = (6 << 20) + phys * 4096; break;
  case ZMUSA_ATTR_CC_MAJOR: *value = 3; break;
  case ZMUSA_ATTR_CC_MINOR: *value = 1; break;
  case ZMUSA_ATTR_PCI_BUS_ID: *value = 0x20 + phys; break;
  case ZMUSA_ATTR_PCI_DEVICE_ID: *value = 3; break;
  case ZMUSA_ATTR_PCI_DOMAIN_ID: *value = 2; break;
  default: return ZMUSA_ERROR_INVALID_VALUE;
  }
  return ZMUSA_SUCCESS;
}

/* The name at offset 0, the uuid at 256, the rest of a long struct filled. */
int musaGetDeviceProperties(void *prop, int device) {
  unsigned char *p = prop;
  int phys = fk_physical(device);
  if (!prop)
    return ZMUSA_ERROR_INVALID_VALUE;
  if (phys < 0)
    return ZMUSA_ERROR_INVALID_DEVICE;
  memset(p, 0x7f, FAKE_PROP_BYTES);
  memset(p + ZMUSA_PROP_NAME_OFFSET, 0, ZMUSA_PROP_NAME_BYTES);
  snprintf((char *)p + ZMUSA_PROP_NAME_OFFSET, ZMUSA_PROP_NAME_BYTES,
           "Fake Moore Threads GPU %d", phys);
  for (int i = 0; i < 16; i++)
    p[ZMUSA_PROP_UUID_OFFSET + i] = (unsigned char)(0xb0 + i);
  p[ZMUSA_PROP_UUID_OFFSET + 15] = (unsigned char)phys;
  return ZMUSA_SUCCESS;
}

int musaStreamCreateWithFlags(zmusa_stream_t *s, unsigned flags) {
  if (flags & ~(unsigned)ZMUSA_STREAM_NON_BLOCKING)
    return ZMUSA_ERROR_INVALID_VALUE;
  return fk_stream_create((fk_stream_t **)s);
}

int musaStreamDestroy(zmusa_stream_t s) { return fk_stream_destroy(S(s)); }
int musaStreamSynchronize(zmusa_stream_t s) { return fk_stream_sync(S(s)); }

int musaStreamWaitEvent(zmusa_stream_t s, zmusa_event_t e, unsigned flags) {
  if (flags)
    return ZMUSA_ERROR_INVALID_VALUE;
  return fk_stream_wait_event(S(s), E(e));
}

#ifndef FAKE_MUSA_MINIMAL
int musaStreamIsCapturing(zmusa_stream_t s, int *status) {
  return fk_capture_status(S(s), status);
}
#endif

int musaEventCreateWithFlags(zmusa_event_t *e, unsigned flags) {
  if (flags & ~(unsigned)ZMUSA_EVENT_DISABLE_TIMING)
    return ZMUSA_ERROR_INVALID_VALUE;
  return fk_event_create((fk_event_t **)e, !(flags & ZMUSA_EVENT_DISABLE_TIMING));
}

int musaEventDestroy(zmusa_event_t e) { return fk_event_destroy(E(e)); }
int musaEventRecord(zmusa_event_t e, zmusa_stream_t s) { return fk_event_record(E(e), S(s)); }
int musaEventSynchronize(zmusa_event_t e) { return fk_event_sync(E(e)); }

#ifndef FAKE_MUSA_OMIT_ELAPSED
int musaEventElapsedTime(float *ms, zmusa_event_t a, zmusa_event_t b) {
  return fk_event_elapsed(ms, E(a), E(b));
}
#endif

int musaMalloc(void **p, size_t n) { return fk_malloc(p, n); }
int musaFree(void *p) { return fk_free(p); }

int musaMemGetInfo(size_t *free_bytes, size_t *total) {
  size_t used = 0;
  int dev = 0, r;
  if (!free_bytes || !total)
    return ZMUSA_ERROR_INVALID_VALUE;
  fk_get_device(&dev);
  if ((r = fk_mem_used(dev, &used)))
    return r;
  *total = fk_mem_bytes();
  *free_bytes = *total - used;
  return ZMUSA_SUCCESS;
}

int musaMemsetAsync(void *dst, int value, size_t n, zmusa_stream_t s) {
  return fk_memset(dst, value, n, S(s));
}

/* Which sides of a copy are device memory; -1 for a kind the fake does
 * not take (host to host, and "default", which needs unified addressing). */
static int sides(int kind, int *dst_device, int *src_device) {
  switch (kind) {
  case ZMUSA_MEMCPY_HOST_TO_DEVICE: *dst_device = 1, *src_device = 0; return 0;
  case ZMUSA_MEMCPY_DEVICE_TO_HOST: *dst_device = 0, *src_device = 1; return 0;
  case ZMUSA_MEMCPY_DEVICE_TO_DEVICE: *dst_device = 1, *src_device = 1; return 0;
  default: return -1;
  }
}

int musaMemcpy(void *dst, const void *src, size_t n, int kind) {
  int d, s;
  if (sides(kind, &d, &s))
    return ZMUSA_ERROR_INVALID_VALUE;
  return fk_memcpy_sync(dst, src, n, d, s);
}

int musaMemcpyAsync(void *dst, const void *src, size_t n, int kind, zmusa_stream_t st) {
  int d, s;
  if (sides(kind, &d, &s))
    return ZMUSA_ERROR_INVALID_VALUE;
  return fk_memcpy(dst, src, n, d, s, S(st));
}

int musaLaunchHostFunc(zmusa_stream_t s, zmusa_host_fn_t fn, void *arg) {
  return fk_host_func(S(s), fn, arg);
}

int musaStreamBeginCapture(zmusa_stream_t s, int mode) {
  if (mode < ZMUSA_CAPTURE_MODE_GLOBAL || mode > ZMUSA_CAPTURE_MODE_RELAXED)
    return ZMUSA_ERROR_INVALID_VALUE;
  return fk_capture_begin(S(s));
}

int musaStreamEndCapture(zmusa_stream_t s, zmusa_graph_t *g) {
  return fk_capture_end(S(s), (fk_graph_t **)g);
}

int musaGraphInstantiate(zmusa_graph_exec_t *x, zmusa_graph_t g, zmusa_graph_node_t *node,
                         char *log, size_t logsize) {
  if (node)
    *node = NULL;
  if (log && logsize)
    log[0] = '\0';
  return fk_graph_instantiate((fk_graph_t **)x, G(g));
}

#ifndef FAKE_MUSA_MINIMAL
int musaGraphInstantiateWithFlags(zmusa_graph_exec_t *x, zmusa_graph_t g,
                                  unsigned long long flags) {
  if (flags)
    return ZMUSA_ERROR_INVALID_VALUE;
  return fk_graph_instantiate((fk_graph_t **)x, G(g));
}
#endif

int musaGraphLaunch(zmusa_graph_exec_t x, zmusa_stream_t s) {
  return fk_graph_launch(G(x), S(s));
}
int musaGraphDestroy(zmusa_graph_t g) { return fk_graph_destroy(G(g)); }
int musaGraphExecDestroy(zmusa_graph_exec_t x) { return fk_graph_destroy(G(x)); }

static const struct {
  int code;
  const char *name, *text;
} names[] = {
    {0, "musaSuccess", "no error"},
    {1, "musaErrorInvalidValue", "invalid argument"},
    {2, "musaErrorMemoryAllocation", "out of memory"},
    {3, "musaErrorInitializationError", "initialization error"},
    {35, "musaErrorInsufficientDriver", "MUSA driver version is insufficient for MUSA runtime version"},
    {100, "musaErrorNoDevice", "no MUSA-capable device is detected"},
    {101, "musaErrorInvalidDevice", "invalid device ordinal"},
    {400, "musaErrorInvalidResourceHandle", "invalid resource handle"},
    {600, "musaErrorNotReady", "device not ready"},
    {700, "musaErrorIllegalAddress", "an illegal memory access was encountered"},
    {709, "musaErrorContextIsDestroyed", "context is destroyed"},
    {719, "musaErrorLaunchFailure", "unspecified launch failure"},
    {801, "musaErrorNotSupported", "operation not supported"},
    {900, "musaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"},
    {901, "musaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"},
    {903, "musaErrorStreamCaptureUnmatched", "capture was not initiated in this stream"},
    {999, "musaErrorUnknown", "unknown error"},
};

/* An unknown code has no name, as in the CUDA runtime. */
const char *musaGetErrorName(int code) {
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].code == code)
      return names[i].name;
  return "unrecognized error code";
}

const char *musaGetErrorString(int code) {
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].code == code)
      return names[i].text;
  return "unrecognized error code";
}
