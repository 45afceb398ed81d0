/* The CUDA backend over the driver API, loaded at run time from
 * libcuda.so.1 (never the toolkit stub): the binary builds and starts on a
 * machine without a driver. Types are declared here by hand and bound to
 * the exact versioned symbols whose signatures they match (the _v2/_v3
 * names cuda.h maps the plain names to). The primary context is used, so CUDA
 * runtime code in operator libraries shares it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_int.h"
#include "device_int.h"
#include "zlbench/base.h"
#include "zlbench/dtype.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef unsigned long long CUdeviceptr;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct {
  unsigned char bytes[16];
} CUuuid;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NO_DEVICE = 100,
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DEFAULT = 0,
  CU_EVENT_DISABLE_TIMING = 2,
  /* cuStreamEndCapture returns no graph when the capture was invalidated */
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_MEMHOSTALLOC_PORTABLE = 0x01,
  CU_MEMHOSTALLOC_DEVICEMAP = 0x02,
  /* cuStreamWaitValue32: wait until (int32_t)(*addr - value) >= 0 */
  CU_STREAM_WAIT_VALUE_GEQ = 0x0,
  /* cuEventRecordWithFlags: in a capture, an event record node */
  CU_EVENT_RECORD_EXTERNAL = 0x1
};

/* cuMemAlloc refuses 0 bytes; an empty tensor still gets a valid pointer. */
#define MIN_ALLOC_BYTES 256
/* The health probe's allocation and fill byte (any non-zero pattern). */
#define PROBE_BYTES 4096
#define PROBE_FILL 0x5a

/* Every entry point: name in the table, exported symbol, signature. */
#define CUDA_SYMBOLS(X)                                                          \
  X(init, "cuInit", (unsigned))                                      \
  X(driver_version, "cuDriverGetVersion", (int *))                   \
  X(device_count, "cuDeviceGetCount", (int *))                       \
  X(device_get, "cuDeviceGet", (CUdevice *, int))                    \
  X(device_name, "cuDeviceGetName", (char *, int, CUdevice))         \
  X(device_uuid, "cuDeviceGetUuid_v2", (CUuuid *, CUdevice))         \
  X(device_attr, "cuDeviceGetAttribute", (int *, int, CUdevice))     \
  X(device_mem, "cuDeviceTotalMem_v2", (size_t *, CUdevice))         \
  X(device_pci, "cuDeviceGetPCIBusId", (char *, int, CUdevice))      \
  X(ctx_retain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice)) \
  X(ctx_release, "cuDevicePrimaryCtxRelease_v2", (CUdevice))         \
  X(ctx_set, "cuCtxSetCurrent", (CUcontext))                         \
  X(ctx_sync, "cuCtxSynchronize", (void))                            \
  X(stream_create, "cuStreamCreate", (CUstream *, unsigned))         \
  X(stream_destroy, "cuStreamDestroy_v2", (CUstream))                \
  X(stream_sync, "cuStreamSynchronize", (CUstream))                  \
  X(stream_wait_event, "cuStreamWaitEvent", (CUstream, CUevent, unsigned)) \
  X(stream_is_capturing, "cuStreamIsCapturing", (CUstream, int *))   \
  X(event_create, "cuEventCreate", (CUevent *, unsigned))            \
  X(event_destroy, "cuEventDestroy_v2", (CUevent))                   \
  X(event_record, "cuEventRecord", (CUevent, CUstream))              \
  X(event_sync, "cuEventSynchronize", (CUevent))                     \
  X(mem_alloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))            \
  X(mem_free, "cuMemFree_v2", (CUdeviceptr))                         \
  X(mem_info, "cuMemGetInfo_v2", (size_t *, size_t *))               \
  X(memset_async, "cuMemsetD8Async", (CUdeviceptr, unsigned char, size_t, CUstream)) \
  X(memcpy_htod, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t)) \
  X(memcpy_dtoh, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))   \
  X(memcpy_dtod, "cuMemcpyDtoDAsync_v2", (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
  X(capture_begin, "cuStreamBeginCapture_v2", (CUstream, int))       \
  X(capture_end, "cuStreamEndCapture", (CUstream, CUgraph *))        \
  X(graph_instantiate, "cuGraphInstantiateWithFlags", (CUgraphExec *, CUgraph, unsigned long long)) \
  X(graph_launch, "cuGraphLaunch", (CUgraphExec, CUstream))          \
  X(graph_destroy, "cuGraphDestroy", (CUgraph))                      \
  X(graph_exec_destroy, "cuGraphExecDestroy", (CUgraphExec))         \
  X(module_load, "cuModuleLoadData", (CUmodule *, const void *))     \
  X(module_unload, "cuModuleUnload", (CUmodule))                     \
  X(module_function, "cuModuleGetFunction", (CUfunction *, CUmodule, const char *)) \
  X(launch, "cuLaunchKernel", (CUfunction, unsigned, unsigned, unsigned, unsigned, \
                               unsigned, unsigned, unsigned, CUstream, void **, void **)) \
  X(error_name, "cuGetErrorName", (CUresult, const char **))         \
  X(error_string, "cuGetErrorString", (CUresult, const char **))

struct cuda_api {
#define X(field, sym, params) CUresult(*field) params;
  CUDA_SYMBOLS(X)
#undef X
  /* cuEventElapsedTime_v2 on 12.8+ drivers, the v1 symbol before: same
   * signature (vendor-apis.md 1.2). */
  CUresult (*event_elapsed)(float *, CUevent, CUevent);
  /* Holding a stream (the queue timer): bound when present, the backend
   * loads without them (holds are then unsupported). The _v2 wait is the
   * one CUDA 12+ maps cuStreamWaitValue32 to, available by default on
   * every platform (the v1 needed a kernel module parameter on Linux). */
  CUresult (*host_alloc)(void **, size_t, unsigned);
  CUresult (*host_free)(void *);
  CUresult (*host_device_ptr)(CUdeviceptr *, void *, unsigned);
  CUresult (*wait_value32)(CUstream, CUdeviceptr, uint32_t, unsigned);
  /* Event record nodes in a capture (the calibrated graph timer): CUDA
   * 11.1+, bound when present. */
  CUresult (*event_record_flags)(CUevent, CUstream, unsigned);
  int driver;
};

static struct cuda_api api;
static zlb_error_t load_error = ZLB_ERROR_INIT;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The device-side accuracy checks (cuda_check.cu), loaded on first use. */
enum { CHECK_CLOSE0 = 0, CHECK_MOMENTS0 = 4, CHECK_EXACT0 = 8, CHECK_EMPTY = 12, CHECK_NFUNCS = 13 };

struct cuda_state {
  CUdevice dev;
  CUcontext ctx;
  int have_ctx;
  int check_state;              /* 0 not tried, 1 loaded, -1 unavailable */
  CUmodule check_mod;
  CUfunction check_fn[CHECK_NFUNCS];
  CUdeviceptr check_out;        /* 2 counters, 3 sums */
  /* Stream holds: one word of mapped pinned host memory that held streams
   * wait on. Hold n waits until the word reaches n; releasing it writes n. */
  uint32_t *hold_word;          /* host address, NULL until the first hold */
  CUdeviceptr hold_dev;         /* the word's device address */
  uint32_t hold_seq;            /* the last hold's number */
};

static const char *const cuda_sonames[] = {"libcuda.so.1", NULL};

static void load_api(void) {
  void *h = zlb__dlopen_first(cuda_sonames, "cuda", NULL, &load_error);
  CUresult r;
  if (!h)
    return;
#define X(field, sym, params)                                                   \
  zlb__bind(h, sym, &api.field, sizeof(api.field));                                  \
  if (!api.field) {                                                             \
    zlb_error_set(&load_error, ZLB_EUNAVAIL,                                    \
                  "backend 'cuda': libcuda.so.1 lacks '%s' (driver too old?)", sym); \
    return;                                                                     \
  }
  CUDA_SYMBOLS(X)
#undef X
  zlb__bind(h, "cuEventElapsedTime_v2", &api.event_elapsed, sizeof(api.event_elapsed));
  if (!api.event_elapsed)
    zlb__bind(h, "cuEventElapsedTime", &api.event_elapsed, sizeof(api.event_elapsed));
  if (!api.event_elapsed) {
    zlb_error_set(&load_error, ZLB_EUNAVAIL,
                  "backend 'cuda': libcuda.so.1 lacks 'cuEventElapsedTime'");
    return;
  }
  zlb__bind(h, "cuMemHostAlloc", &api.host_alloc, sizeof(api.host_alloc));
  zlb__bind(h, "cuMemFreeHost", &api.host_free, sizeof(api.host_free));
  zlb__bind(h, "cuMemHostGetDevicePointer_v2", &api.host_device_ptr,
            sizeof(api.host_device_ptr));
  zlb__bind(h, "cuStreamWaitValue32_v2", &api.wait_value32, sizeof(api.wait_value32));
  zlb__bind(h, "cuEventRecordWithFlags", &api.event_record_flags,
            sizeof(api.event_record_flags));
  r = api.init(0);
  if (r != CUDA_SUCCESS) {
    const char *name = NULL;
    api.error_name(r, &name);
    zlb_error_vendor(&load_error, r == CUDA_ERROR_NO_DEVICE ? ZLB_EUNAVAIL : ZLB_EDEVICE,
                     r, name ? name : "", "backend 'cuda': cuInit failed: %s (%d)",
                     name ? name : "unknown", r);
    return;
  }
  api.driver_version(&api.driver);
}

/* Fill `err` for a failed driver call, naming the call and the error. */
static int fail(zlb_error_t *err, const char *call, CUresult r) {
  const char *name = NULL, *text = NULL;
  if (api.error_name)
    api.error_name(r, &name);
  if (api.error_string)
    api.error_string(r, &text);
  return zlb_error_vendor(err, ZLB_EDEVICE, r, name ? name : "",
                          "%s: %s (%d): %s", call, name ? name : "CUDA_ERROR",
                          r, text ? text : "no description");
}

#define CU(call, expr)                                                          \
  do {                                                                          \
    CUresult r_ = (expr);                                                       \
    if (r_ != CUDA_SUCCESS)                                                     \
      return fail(err, call, r_);                                               \
  } while (0)

static int cuda_open(zlb_backend_t *b, zlb_error_t *err) {
  pthread_once(&load_once, load_api);
  if (load_error.code) {
    if (err)
      *err = load_error;
    return load_error.code;
  }
  b->impl = zlb_xcalloc(1, sizeof(struct cuda_state));
  return 0;
}

static void cuda_close(zlb_backend_t *b) {
  struct cuda_state *st = b->impl;
  if (st && st->hold_word) {
    /* Release every hold there was, so that the synchronisation below
     * cannot wait on one forever, then free the word. */
    __atomic_store_n(st->hold_word, st->hold_seq, __ATOMIC_SEQ_CST);
    api.ctx_sync();
    api.host_free(st->hold_word);
  }
  if (st && st->check_state == 1) {
    api.mem_free(st->check_out);
    api.module_unload(st->check_mod);
  }
  if (st && st->have_ctx) {
    api.ctx_sync();
    api.ctx_release(st->dev);
  }
  free(st);
  b->impl = NULL;
}

static int cuda_device_count(zlb_backend_t *b, int *n, zlb_error_t *err) {
  (void)b;
  CU("cuDeviceGetCount", api.device_count(n));
  return 0;
}

static void runtime_version(char *buf, size_t len) {
  static const char *const names[] = {"libcudart.so.13", "libcudart.so.12",
                                      "libcudart.so", NULL};
  for (const char *const *n = names; *n; n++) {
    void *h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
    int (*get)(int *);
    int v = 0;
    if (!h)
      continue;
    zlb__bind(h, "cudaRuntimeGetVersion", &get, sizeof(get));
    if (get && get(&v) == 0) {
      snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
      return;
    }
  }
}

static int cuda_device_info(zlb_backend_t *b, int index, zlb_device_info_t *info,
                            zlb_error_t *err) {
  CUdevice dev;
  CUuuid u;
  int v;
  (void)b;
  memset(info, 0, sizeof(*info));
  info->index = index;
  CU("cuDeviceGet", api.device_get(&dev, index));
  CU("cuDeviceGetName", api.device_name(info->name, (int)sizeof(info->name), dev));
  if (api.device_uuid(&u, dev) == CUDA_SUCCESS) {
    const unsigned char *x = u.bytes;
    snprintf(info->uuid, sizeof(info->uuid),
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10],
             x[11], x[12], x[13], x[14], x[15]);
  }
  api.device_pci(info->pci_bus_id, (int)sizeof(info->pci_bus_id), dev);
  api.device_mem(&info->mem_bytes, dev);
#define ATTR(field, id)                                                         \
  if (api.device_attr(&v, id, dev) == CUDA_SUCCESS)                             \
    info->field = v;
  ATTR(sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
  ATTR(cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
  ATTR(cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
  ATTR(clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
  ATTR(mem_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
  ATTR(bus_width_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
#undef ATTR
  if (api.device_attr(&v, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) == CUDA_SUCCESS)
    info->l2_bytes = (size_t)v;
  snprintf(info->driver_version, sizeof(info->driver_version), "cuda %d.%d",
           api.driver / 1000, (api.driver % 1000) / 10);
  /* NVML's string ("580.159.04") is what people quote; the driver API
   * only knows the CUDA version it supports. */
  zlb__nvml_driver_version(info->driver_version, sizeof(info->driver_version));
  runtime_version(info->runtime_version, sizeof(info->runtime_version));
  return 0;
}

static int cuda_device_select(zlb_backend_t *b, int index, zlb_error_t *err) {
  struct cuda_state *st = b->impl;
  /* Called again to make the context current on another thread, or after
   * someone else's: the primary context is retained once. */
  if (!st->have_ctx) {
    CU("cuDeviceGet", api.device_get(&st->dev, index));
    CU("cuDevicePrimaryCtxRetain", api.ctx_retain(&st->ctx, st->dev));
    st->have_ctx = 1;
  }
  CU("cuCtxSetCurrent", api.ctx_set(st->ctx));
  return 0;
}

static int cuda_stream_create(zlb_backend_t *b, zlb_stream_t *s, zlb_error_t *err) {
  CUstream cs;
  (void)b;
  /* Non-blocking: capture needs a stream that is not the legacy default
   * stream and must not synchronise with it implicitly. */
  CU("cuStreamCreate", api.stream_create(&cs, CU_STREAM_NON_BLOCKING));
  *s = (zlb_stream_t)cs;
  return 0;
}

static void cuda_stream_destroy(zlb_backend_t *b, zlb_stream_t s) {
  (void)b;
  api.stream_destroy((CUstream)s);
}

static int cuda_stream_sync(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  CU("cuStreamSynchronize", api.stream_sync((CUstream)s));
  return 0;
}

static int cuda_stream_wait(zlb_backend_t *b, zlb_stream_t waiter, zlb_stream_t waitee,
                            zlb_error_t *err) {
  CUevent e;
  CUresult r;
  (void)b;
  CU("cuEventCreate", api.event_create(&e, CU_EVENT_DISABLE_TIMING));
  r = api.event_record(e, (CUstream)waitee);
  if (r == CUDA_SUCCESS)
    r = api.stream_wait_event((CUstream)waiter, e, 0);
  api.event_destroy(e);
  if (r != CUDA_SUCCESS)
    return fail(err, "cuStreamWaitEvent", r);
  return 0;
}

static int cuda_is_capturing(zlb_backend_t *b, zlb_stream_t s, int *capturing,
                             zlb_error_t *err) {
  int st = 0;
  (void)b;
  CU("cuStreamIsCapturing", api.stream_is_capturing((CUstream)s, &st));
  *capturing = st != 0;
  return 0;
}

static int cuda_event_create(zlb_backend_t *b, zlb_event_t *e, zlb_error_t *err) {
  CUevent ce;
  (void)b;
  CU("cuEventCreate", api.event_create(&ce, CU_EVENT_DEFAULT));
  *e = (zlb_event_t)ce;
  return 0;
}

static void cuda_event_destroy(zlb_backend_t *b, zlb_event_t e) {
  (void)b;
  api.event_destroy((CUevent)e);
}

static int cuda_event_record(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s,
                             zlb_error_t *err) {
  (void)b;
  CU("cuEventRecord", api.event_record((CUevent)e, (CUstream)s));
  return 0;
}

static int cuda_event_record_node(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s,
                                  zlb_error_t *err) {
  (void)b;
  if (!api.event_record_flags)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "this driver has no cuEventRecordWithFlags (CUDA 11.1+): a graph "
                         "cannot hold timed events");
  CU("cuEventRecordWithFlags", api.event_record_flags((CUevent)e, (CUstream)s,
                                                      CU_EVENT_RECORD_EXTERNAL));
  return 0;
}

static int cuda_event_elapsed(zlb_backend_t *b, zlb_event_t start, zlb_event_t end,
                              double *ms, zlb_error_t *err) {
  float f = 0.0f;
  (void)b;
  CU("cuEventSynchronize", api.event_sync((CUevent)end));
  CU("cuEventElapsedTime", api.event_elapsed(&f, (CUevent)start, (CUevent)end));
  *ms = f;
  return 0;
}

static int cuda_mem_alloc(zlb_backend_t *b, size_t bytes, void **ptr, zlb_error_t *err) {
  CUdeviceptr p;
  (void)b;
  CU("cuMemAlloc", api.mem_alloc(&p, bytes ? bytes : MIN_ALLOC_BYTES));
  *ptr = (void *)(uintptr_t)p;
  return 0;
}

static int cuda_mem_info(zlb_backend_t *b, size_t *free_bytes, size_t *total_bytes,
                         zlb_error_t *err) {
  (void)b;
  CU("cuMemGetInfo", api.mem_info(free_bytes, total_bytes));
  return 0;
}

static void cuda_mem_free(zlb_backend_t *b, void *ptr) {
  (void)b;
  api.mem_free((CUdeviceptr)(uintptr_t)ptr);
}

static int cuda_memset(zlb_backend_t *b, void *ptr, int value, size_t bytes,
                       zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  CU("cuMemsetD8Async", api.memset_async((CUdeviceptr)(uintptr_t)ptr,
                                         (unsigned char)value, bytes, (CUstream)s));
  return 0;
}

static int cuda_htod(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_error_t *err) {
  (void)b;
  if (bytes)
    CU("cuMemcpyHtoD", api.memcpy_htod((CUdeviceptr)(uintptr_t)dst, src, bytes));
  return 0;
}

static int cuda_dtoh(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_error_t *err) {
  (void)b;
  if (bytes)
    CU("cuMemcpyDtoH", api.memcpy_dtoh(dst, (CUdeviceptr)(uintptr_t)src, bytes));
  return 0;
}

static int cuda_dtod(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  if (bytes)
    CU("cuMemcpyDtoDAsync", api.memcpy_dtod((CUdeviceptr)(uintptr_t)dst,
                                            (CUdeviceptr)(uintptr_t)src, bytes, (CUstream)s));
  return 0;
}

static int cuda_trace_begin(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  return zlb__cupti_begin(err);
}

static int cuda_trace_now(zlb_backend_t *b, uint64_t *ns, zlb_error_t *err) {
  (void)b;
  return zlb__cupti_now(ns, err);
}

static int cuda_trace_end(zlb_backend_t *b, zlb_trace_span_t **spans, size_t *n,
                          zlb_error_t *err) {
  (void)b;
  return zlb__cupti_end(spans, n, err);
}

/*
 * Holding a stream: cuStreamWaitValue32 on a word of mapped pinned host
 * memory. The stream's queue stops at the wait on the device; the host
 * releases it with a plain store, which needs no driver call, so the
 * watchdog thread can release a hold while this thread is blocked inside
 * the driver (a launch into a full queue). The alternative, a host
 * function (cuLaunchHostFunc) that spins until released, would occupy the
 * driver's callback thread for the whole hold and delay every other host
 * function of the process; the wait is done by the device.
 */
static int cuda_stream_hold(zlb_backend_t *b, zlb_stream_t s, zlb_hold_t *h,
                            zlb_error_t *err) {
  struct cuda_state *st = b->impl;
  uint32_t seq;
  *h = NULL;
  if (!api.host_alloc || !api.host_free || !api.host_device_ptr || !api.wait_value32)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "this driver cannot hold a stream (libcuda.so.1 lacks "
                         "cuStreamWaitValue32_v2 or the mapped host memory calls)");
  if (!st->hold_word) {
    void *p = NULL;
    CUresult r;
    CU("cuMemHostAlloc", api.host_alloc(&p, 64, CU_MEMHOSTALLOC_PORTABLE |
                                                    CU_MEMHOSTALLOC_DEVICEMAP));
    r = api.host_device_ptr(&st->hold_dev, p, 0);
    if (r != CUDA_SUCCESS) {
      api.host_free(p);
      return fail(err, "cuMemHostGetDevicePointer", r);
    }
    st->hold_word = p;
    __atomic_store_n(st->hold_word, 0u, __ATOMIC_SEQ_CST);
    st->hold_seq = 0;
  }
  /* Numbers grow by one per hold (0 is never a hold: it is NULL), and the
   * wait compares cyclically, so the word never needs resetting. */
  seq = st->hold_seq + 1 ? st->hold_seq + 1 : 1;
  CU("cuStreamWaitValue32", api.wait_value32((CUstream)s, st->hold_dev, seq,
                                             CU_STREAM_WAIT_VALUE_GEQ));
  st->hold_seq = seq;
  *h = (zlb_hold_t)(uintptr_t)seq;
  return 0;
}

/* Only forward: a late second release of an earlier hold must not move the
 * word back below a later hold already released. */
static void cuda_stream_release(zlb_backend_t *b, zlb_hold_t h) {
  struct cuda_state *st = b->impl;
  uint32_t seq = (uint32_t)(uintptr_t)h, cur;
  if (!st || !st->hold_word || !seq)
    return;
  cur = __atomic_load_n(st->hold_word, __ATOMIC_SEQ_CST);
  while ((int32_t)(seq - cur) > 0 &&
         !__atomic_compare_exchange_n(st->hold_word, &cur, seq, 0, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST))
    ;
}

static int cuda_clocks(zlb_backend_t *b, zlb_clocks_t *out, zlb_error_t *err) {
  return zlb__nvml_clocks(b->info.uuid, out, err);
}

static int cuda_capture_begin(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  /* Thread-local mode: unsafe calls from this thread fail the capture
   * (that is the refusal we want to see), other threads are not judged. */
  CU("cuStreamBeginCapture", api.capture_begin((CUstream)s,
                                               CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  return 0;
}

static int cuda_capture_end(zlb_backend_t *b, zlb_stream_t s, zlb_graph_t *g,
                            zlb_error_t *err) {
  CUgraph cg = NULL;
  CUresult r;
  (void)b;
  r = api.capture_end((CUstream)s, &cg);
  *g = (zlb_graph_t)cg;
  if (r != CUDA_SUCCESS)
    return fail(err, "cuStreamEndCapture", r);
  if (!cg)
    return fail(err, "cuStreamEndCapture", CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  return 0;
}

static int cuda_graph_instantiate(zlb_backend_t *b, zlb_graph_t g, zlb_graph_exec_t *x,
                                  zlb_error_t *err) {
  CUgraphExec cx;
  (void)b;
  CU("cuGraphInstantiate", api.graph_instantiate(&cx, (CUgraph)g, 0));
  *x = (zlb_graph_exec_t)cx;
  return 0;
}

static int cuda_graph_launch(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t s,
                             zlb_error_t *err) {
  (void)b;
  CU("cuGraphLaunch", api.graph_launch((CUgraphExec)x, (CUstream)s));
  return 0;
}

static void cuda_graph_destroy(zlb_backend_t *b, zlb_graph_t g) {
  (void)b;
  api.graph_destroy((CUgraph)g);
}

static void cuda_graph_exec_destroy(zlb_backend_t *b, zlb_graph_exec_t x) {
  (void)b;
  api.graph_exec_destroy((CUgraphExec)x);
}

static int cuda_sync(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  CU("cuCtxSynchronize", api.ctx_sync());
  return 0;
}

/* Simple work on a fresh allocation: after a sticky fault or a capture that
 * broke the context, one of these calls fails. */
static int cuda_health_probe(zlb_backend_t *b, zlb_error_t *err) {
  CUdeviceptr p = 0;
  CUresult r;
  (void)b;
  CU("cuCtxSynchronize", api.ctx_sync());
  CU("cuMemAlloc", api.mem_alloc(&p, PROBE_BYTES));
  r = api.memset_async(p, PROBE_FILL, PROBE_BYTES, NULL);
  if (r == CUDA_SUCCESS)
    r = api.ctx_sync();
  api.mem_free(p);
  if (r != CUDA_SUCCESS)
    return fail(err, "health probe", r);
  return 0;
}

static const char *cuda_error_name(zlb_backend_t *b, int code) {
  const char *name = NULL;
  (void)b;
  if (api.error_name && api.error_name(code, &name) == CUDA_SUCCESS)
    return name;
  return NULL;
}


/* ---- accuracy checks on the device ------------------------------------------ */

#ifdef ZLB_HAVE_CHECK_FATBIN
#include "zlb_check_fatbin.h" /* zlb_check_fatbin[]: cuda_check.cu, built by nvcc */
#endif

#define CHECK_OUT_BYTES 40 /* u64 count, u64 first, 3 doubles */
#define CHECK_THREADS 256
#define CHECK_BLOCKS_PER_SM 8 /* enough loads in flight to run at memory bandwidth */

static int check_load(struct cuda_state *st) {
#ifdef ZLB_HAVE_CHECK_FATBIN
  static const char *const names[CHECK_NFUNCS] = {
      "zlb_check_close_f16",   "zlb_check_close_bf16",   "zlb_check_close_f32",
      "zlb_check_close_f64",   "zlb_check_moments_f16",  "zlb_check_moments_bf16",
      "zlb_check_moments_f32", "zlb_check_moments_f64",  "zlb_check_exact_1",
      "zlb_check_exact_2",     "zlb_check_exact_4",      "zlb_check_exact_8",
      "zlb_empty"};
  if (st->check_state)
    return st->check_state;
  st->check_state = -1;
  /* A driver older than the toolkit that built the kernels refuses them:
   * the checks then run on the host, as on a build without nvcc. */
  if (api.module_load(&st->check_mod, zlb_check_fatbin) != CUDA_SUCCESS)
    return -1;
  for (int i = 0; i < CHECK_NFUNCS; i++)
    if (api.module_function(&st->check_fn[i], st->check_mod, names[i]) != CUDA_SUCCESS) {
      api.module_unload(st->check_mod);
      return -1;
    }
  if (api.mem_alloc(&st->check_out, CHECK_OUT_BYTES) != CUDA_SUCCESS) {
    api.module_unload(st->check_mod);
    return -1;
  }
  st->check_state = 1;
  return 1;
#else
  (void)st;
  return -1;
#endif
}

/* Kernel index within a group for a float dtype, or -1. */
static int float_slot(int dtype) {
  switch (dtype) {
  case ZLB_DT_FLOAT16: return 0;
  case ZLB_DT_BFLOAT16: return 1;
  case ZLB_DT_FLOAT32: return 2;
  case ZLB_DT_FLOAT64: return 3;
  default: return -1;
  }
}

static int cuda_dev_check(zlb_backend_t *b, const zlb_dev_check_t *q,
                          zlb_dev_check_result_t *res, zlb_stream_t s, zlb_error_t *err) {
  struct cuda_state *st = b->impl;
  CUstream cs = (CUstream)s;
  CUdeviceptr out, sums;
  CUfunction f;
  long long n = (long long)q->n;
  unsigned long long host[5];
  unsigned grid;
  int slot;
  void *args[6];

  memset(res, 0, sizeof(*res));
  res->first = -1;
  if (check_load(st) != 1)
    return zlb_error_set(err, ZLB_EUNSUPPORTED, "device checks are not available");
  out = st->check_out;
  sums = out + 16;
  switch (q->kind) {
  case ZLB_DEVCHECK_EXACT: {
    size_t es = zlb_dtype_size((zlb_dtype_t)q->dtype);
    slot = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : es == 8 ? 3 : -1;
    if (slot < 0)
      return zlb_error_set(err, ZLB_EUNSUPPORTED, "no device check for %zu-byte elements", es);
    f = st->check_fn[CHECK_EXACT0 + slot];
    args[0] = (void *)&q->base;
    args[1] = (void *)&q->cand;
    args[2] = &n;
    args[3] = &out;
    break;
  }
  case ZLB_DEVCHECK_CLOSE:
    if ((slot = float_slot(q->dtype)) < 0)
      return zlb_error_set(err, ZLB_EUNSUPPORTED, "no device check for this dtype");
    f = st->check_fn[CHECK_CLOSE0 + slot];
    args[0] = (void *)&q->base;
    args[1] = (void *)&q->cand;
    args[2] = &n;
    args[3] = (void *)&q->rtol;
    args[4] = (void *)&q->atol;
    args[5] = &out;
    break;
  case ZLB_DEVCHECK_MOMENTS:
    if ((slot = float_slot(q->dtype)) < 0)
      return zlb_error_set(err, ZLB_EUNSUPPORTED, "no device check for this dtype");
    f = st->check_fn[CHECK_MOMENTS0 + slot];
    args[0] = (void *)&q->base;
    args[1] = &n;
    args[2] = (void *)&q->mean;
    args[3] = (void *)&q->pass;
    args[4] = &sums;
    args[5] = &out;
    break;
  default:
    return zlb_error_set(err, ZLB_EINVAL, "unknown device check %d", (int)q->kind);
  }
  /* count 0, first all ones, sums 0.0 */
  CU("cuMemsetD8Async", api.memset_async(out, 0, 8, cs));
  CU("cuMemsetD8Async", api.memset_async(out + 8, 0xFF, 8, cs));
  CU("cuMemsetD8Async", api.memset_async(sums, 0, 24, cs));
  grid = (unsigned)(b->info.sm_count > 0 ? b->info.sm_count : 132) * CHECK_BLOCKS_PER_SM;
  if ((long long)grid * CHECK_THREADS > n)
    grid = (unsigned)((n + CHECK_THREADS - 1) / CHECK_THREADS);
  if (grid > 0)
    CU("cuLaunchKernel", api.launch(f, grid, 1, 1, CHECK_THREADS, 1, 1, 0, cs, args, NULL));
  /* The stream is non-blocking: cuMemcpyDtoH would not wait for it. */
  CU("cuStreamSynchronize", api.stream_sync(cs));
  CU("cuMemcpyDtoH", api.memcpy_dtoh(host, out, CHECK_OUT_BYTES));
  res->bad = (int64_t)host[0];
  res->first = host[1] == ~0ull ? -1 : (int64_t)host[1];
  memcpy(res->sum, &host[2], sizeof(res->sum));
  return 0;
}

#ifdef ZLB_HAVE_CHECK_FATBIN
/* One block of one thread that does nothing (the queue timer's calibration). */
static int cuda_launch_empty(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  struct cuda_state *st = b->impl;
  if (check_load(st) != 1)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "the empty kernel is not available (the device-side kernels were "
                         "not built, or this driver refused them)");
  CU("cuLaunchKernel",
     api.launch(st->check_fn[CHECK_EMPTY], 1, 1, 1, 1, 1, 1, 0, (CUstream)s, NULL, NULL));
  return 0;
}
#endif

static const zlb_backend_vtbl_t cuda_vtbl = {
    .open = cuda_open,
    .close = cuda_close,
    .device_count = cuda_device_count,
    .device_info = cuda_device_info,
    .device_select = cuda_device_select,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .stream_wait = cuda_stream_wait,
    .stream_is_capturing = cuda_is_capturing,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_elapsed = cuda_event_elapsed,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .memset_async = cuda_memset,
    .memcpy_htod = cuda_htod,
    .memcpy_dtoh = cuda_dtoh,
    .capture_begin = cuda_capture_begin,
    .capture_end = cuda_capture_end,
    .graph_instantiate = cuda_graph_instantiate,
    .graph_launch = cuda_graph_launch,
    .graph_destroy = cuda_graph_destroy,
    .graph_exec_destroy = cuda_graph_exec_destroy,
    .sync = cuda_sync,
    .health_probe = cuda_health_probe,
    .error_name = cuda_error_name,
    .memcpy_dtod = cuda_dtod,
    .trace_begin = cuda_trace_begin,
    .trace_now = cuda_trace_now,
    .trace_end = cuda_trace_end,
    .clocks = cuda_clocks,
    .mem_info = cuda_mem_info,
    .dev_check = cuda_dev_check,
    .stream_hold = cuda_stream_hold,
    .stream_release = cuda_stream_release,
#ifdef ZLB_HAVE_CHECK_FATBIN
    .launch_empty = cuda_launch_empty, /* none without the device-side module */
#endif
    .event_record_node = cuda_event_record_node,
};

static const char *const cuda_aliases[] = {"nvidia", "gpu", NULL};

/* Capture-refusal codes leave the context usable after EndCapture; the
 * device faults are sticky: the process must restart (cuda.h). */
static const zlb_classify_entry_t cuda_classify[] = {
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", ZLB_VERDICT_REFUSED},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     ZLB_VERDICT_REFUSED},
    {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", ZLB_VERDICT_REFUSED},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", ZLB_VERDICT_REFUSED},
    {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", ZLB_VERDICT_REFUSED},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", ZLB_VERDICT_REFUSED},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", ZLB_VERDICT_REFUSED},
    {907, "CUDA_ERROR_CAPTURED_EVENT", ZLB_VERDICT_REFUSED},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", ZLB_VERDICT_REFUSED},
    {800, "CUDA_ERROR_NOT_PERMITTED", ZLB_VERDICT_REFUSED},
    {801, "CUDA_ERROR_NOT_SUPPORTED", ZLB_VERDICT_REFUSED},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", ZLB_VERDICT_REFUSED},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", ZLB_VERDICT_FATAL},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", ZLB_VERDICT_FATAL},
    {710, "CUDA_ERROR_ASSERT", ZLB_VERDICT_FATAL},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", ZLB_VERDICT_FATAL},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", ZLB_VERDICT_FATAL},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", ZLB_VERDICT_FATAL},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", ZLB_VERDICT_FATAL},
    {718, "CUDA_ERROR_INVALID_PC", ZLB_VERDICT_FATAL},
    {719, "CUDA_ERROR_LAUNCH_FAILED", ZLB_VERDICT_FATAL},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE", ZLB_VERDICT_FATAL},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE", ZLB_VERDICT_FATAL},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", ZLB_VERDICT_FATAL},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", ZLB_VERDICT_POISONED},
    {4, "CUDA_ERROR_DEINITIALIZED", ZLB_VERDICT_POISONED},
};

const zlb_backend_desc_t zlb__backend_cuda = {
    .name = "cuda",
    .vendor = "NVIDIA",
    .aliases = cuda_aliases,
    .sonames = cuda_sonames,
    .visibility_env = "CUDA_VISIBLE_DEVICES",
    .also_env = NULL,
    .caps = ZLB_CAP_GRAPH | ZLB_CAP_EVENTS | ZLB_CAP_RNG_STATE | ZLB_CAP_ASYNC |
            ZLB_CAP_L2_FLUSH | ZLB_CAP_TRACE | ZLB_CAP_HOLD,
    .classify = cuda_classify,
    .nclassify = sizeof(cuda_classify) / sizeof(cuda_classify[0]),
    .flush_bytes = 256u << 20, /* Triton's 256 MiB: well beyond any L2 */
    .vtbl = &cuda_vtbl,
    .probe_in_auto = 1,
};
