/* The ROCm backend over the HIP runtime, loaded at run time from
 * libamdhip64 (ROCm 7, 6 or 5's library name, in that order): the binary
 * builds and starts without ROCm. The declarations are hand-written
 * (hip_api.h, checked against HIP's header where it is installed) and
 * bound by name; only entry points that ROCm 5.2 already exports are
 * required. No HIP struct is read: hipDeviceProp_t's layout differs between
 * ROCm 5 and 6, so the properties come from attribute queries, whose ids
 * the versions share. Kernel tracing is roctracer's (roctracer.c), where
 * a roctracer of a verified version loads; without one only the trace
 * timer is unavailable.
 *
 * HIP's current device is per thread, like the CUDA runtime's: every call
 * that allocates or creates sets the selected device on the calling thread
 * first. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_int.h"
#include "hip_api.h"
#include "hip_int.h"
#include "zlbench/base.h"

/* hipMalloc gives NULL for 0 bytes; an empty tensor still gets a pointer. */
#define MIN_ALLOC_BYTES 256
/* The health probe's allocation and fill byte (any non-zero pattern). */
#define PROBE_BYTES 4096
#define PROBE_FILL 0x5a

struct hip_api {
#define X(field, sym, params) int(*field) params;
  ZHIP_REQUIRED(X)
  ZHIP_OPTIONAL(X)
#undef X
#define X(field, sym, params) const char *(*field) params;
  ZHIP_STRINGS(X)
#undef X
  /* The 3-argument form where the runtime has it (ROCm 4.5+), else the
   * 5-argument hipGraphInstantiate. */
  int (*graph_instantiate_flags)(zhip_graph_exec_t *, zhip_graph_t, unsigned long long);
  const char *lib; /* the library that was loaded */
  int runtime;     /* hipRuntimeGetVersion: major * 10^7 + minor * 10^5 + patch */
  int driver;
};

static struct hip_api api;
static zlb_error_t load_error = ZLB_ERROR_INIT;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

struct hip_state {
  int device;
  /* Stream holds, as on CUDA: one word of mapped host memory that held
   * streams wait on (hipStreamWaitValue32, "greater or equal"); hold n
   * waits until the word reaches n, releasing it writes n. */
  uint32_t *hold_word;
  void *hold_dev;     /* the word's device address */
  uint32_t hold_seq;
};

static const char *const rocm_sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                           "libamdhip64.so.5", "libamdhip64.so",
                                           "/opt/rocm/lib/libamdhip64.so", NULL};

/* The runtime's name for a code, NULL where it has none: HIP names every
 * unknown code "hipErrorUnknown". */
static const char *runtime_error_name(int code) {
  const char *n = api.error_name ? api.error_name(code) : NULL;
  if (!n || !*n || (code != ZHIP_ERROR_UNKNOWN && !strcmp(n, "hipErrorUnknown")))
    return NULL;
  return n;
}

static void load_api(void) {
  void *h = zlb__dlopen_first(rocm_sonames, "rocm", &api.lib, &load_error);
  const char *missing = NULL;
  int r;
  if (!h)
    return;
#define X(field, sym, params)                                                   \
  zlb__bind(h, #sym, &api.field, sizeof(api.field));                            \
  if (!api.field && !missing)                                                   \
    missing = #sym;
  ZHIP_REQUIRED(X)
  ZHIP_STRINGS(X)
#undef X
  if (missing) {
    zlb_error_set(&load_error, ZLB_EUNAVAIL,
                  "backend 'rocm': %s lacks '%s' (ROCm older than 5.2, or not a HIP "
                  "runtime)", api.lib, missing);
    return;
  }
#define X(field, sym, params) zlb__bind(h, #sym, &api.field, sizeof(api.field));
  ZHIP_OPTIONAL(X)
#undef X
  zlb__bind(h, "hipGraphInstantiateWithFlags", &api.graph_instantiate_flags,
            sizeof(api.graph_instantiate_flags));
  r = api.init(0);
  if (r != ZHIP_SUCCESS) {
    const char *name = runtime_error_name(r);
    /* Without a GPU, hipInit says 101 (invalid device) and hipGetDeviceCount
     * 100 (no device): the runtime is there, the device is not. */
    zlb_error_vendor(&load_error,
                     r == ZHIP_ERROR_NO_DEVICE || r == ZHIP_ERROR_INVALID_DEVICE ? ZLB_EUNAVAIL
                                                                                 : ZLB_EDEVICE,
                     r, name ? name : "",
                     "backend 'rocm': %s loaded, but hipInit failed: %s (%d)%s", api.lib,
                     name ? name : "unknown error", r,
                     r == ZHIP_ERROR_NO_DEVICE || r == ZHIP_ERROR_INVALID_DEVICE
                         ? ": no AMD GPU is visible (check HIP_VISIBLE_DEVICES, "
                           "ROCR_VISIBLE_DEVICES and access to /dev/kfd)"
                         : "");
    return;
  }
  if (api.runtime_version(&api.runtime) != ZHIP_SUCCESS)
    api.runtime = 0;
  if (api.driver_version(&api.driver) != ZHIP_SUCCESS)
    api.driver = 0;
}

/* Fill `err` for a failed HIP call, naming the call and the error. */
static int fail(zlb_error_t *err, const char *call, int r) {
  const char *name = runtime_error_name(r);
  const char *text = api.error_string ? api.error_string(r) : NULL;
  if (!name) {
    /* The registry's table knows the codes HIP leaves unnamed. */
    for (size_t i = 0; i < zlb__backend_rocm.nclassify; i++)
      if (zlb__backend_rocm.classify[i].code == r)
        name = zlb__backend_rocm.classify[i].name;
  }
  if (text && name && !strcmp(text, name))
    text = NULL; /* ROCm 5 returns the name as the "string" */
  return zlb_error_vendor(err, ZLB_EDEVICE, r, name ? name : "", "%s: %s (%d)%s%s", call,
                          name ? name : "hipError", r, text ? ": " : "", text ? text : "");
}

#define HIP(call, expr)                                                         \
  do {                                                                          \
    int r_ = (expr);                                                            \
    if (r_ != ZHIP_SUCCESS)                                                     \
      return fail(err, call, r_);                                               \
  } while (0)

/* HIP's current device is per thread, and operator code (or a framework
 * beside us) may change it: every call that allocates or creates sets it
 * first. Those calls are not on the timed path. */
static int bind(zlb_backend_t *b, zlb_error_t *err) {
  struct hip_state *st = b->impl;
  if (st->device >= 0)
    HIP("hipSetDevice", api.set_device(st->device));
  return 0;
}

static int hip_open(zlb_backend_t *b, zlb_error_t *err) {
  struct hip_state *st;
  pthread_once(&load_once, load_api);
  if (load_error.code) {
    if (err)
      *err = load_error;
    return load_error.code;
  }
  st = zlb_xcalloc(1, sizeof(*st));
  st->device = -1;
  b->impl = st;
  return 0;
}

static void hip_close(zlb_backend_t *b) {
  struct hip_state *st = b->impl;
  if (st && st->hold_word) {
    /* Release every hold there was before synchronising. */
    __atomic_store_n(st->hold_word, st->hold_seq, __ATOMIC_SEQ_CST);
    api.device_sync();
    api.host_free(st->hold_word);
  }
  if (st && st->device >= 0)
    api.device_sync();
  free(st);
  b->impl = NULL;
}

static int hip_device_count(zlb_backend_t *b, int *n, zlb_error_t *err) {
  int r;
  (void)b;
  *n = 0;
  r = api.device_count(n);
  if (r == ZHIP_ERROR_NO_DEVICE) {
    *n = 0;
    return 0;
  }
  if (r != ZHIP_SUCCESS)
    return fail(err, "hipGetDeviceCount", r);
  return 0;
}

static void version_string(char *buf, size_t len, const char *what, int v) {
  if (v > 0)
    snprintf(buf, len, "%s %d.%d.%d", what, v / 10000000, (v / 100000) % 100, v % 100000);
}

static int hip_device_info(zlb_backend_t *b, int index, zlb_device_info_t *info,
                           zlb_error_t *err) {
  zhip_uuid_t u;
  int v;
  (void)b;
  memset(info, 0, sizeof(*info));
  info->index = index;
  HIP("hipDeviceGetName", api.device_name(info->name, (int)sizeof(info->name), index));
  if (api.device_uuid && api.device_uuid(&u, index) == ZHIP_SUCCESS) {
    const unsigned char *x = (const unsigned char *)u.bytes;
    snprintf(info->uuid, sizeof(info->uuid),
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12],
             x[13], x[14], x[15]);
  }
  if (api.device_pci(info->pci_bus_id, (int)sizeof(info->pci_bus_id), index) != ZHIP_SUCCESS)
    info->pci_bus_id[0] = '\0';
  /* hipDeviceAttributeTotalGlobalMem is an int: the byte count is not. */
  if (api.device_mem(&info->mem_bytes, index) != ZHIP_SUCCESS)
    info->mem_bytes = 0;
#define ATTR(field, id)                                                         \
  if (api.device_attr(&v, id, index) == ZHIP_SUCCESS)                           \
    info->field = v;
  ATTR(sm_count, ZHIP_ATTR_MULTIPROCESSOR_COUNT)
  ATTR(cc_major, ZHIP_ATTR_CC_MAJOR)
  ATTR(cc_minor, ZHIP_ATTR_CC_MINOR)
  ATTR(clock_khz, ZHIP_ATTR_CLOCK_RATE)
  ATTR(mem_clock_khz, ZHIP_ATTR_MEMORY_CLOCK_RATE)
  ATTR(bus_width_bits, ZHIP_ATTR_MEMORY_BUS_WIDTH)
#undef ATTR
  if (api.device_attr(&v, ZHIP_ATTR_L2_CACHE_SIZE, index) == ZHIP_SUCCESS && v > 0)
    info->l2_bytes = (size_t)v;
  version_string(info->driver_version, sizeof(info->driver_version), "rocm", api.driver);
  version_string(info->runtime_version, sizeof(info->runtime_version), "hip", api.runtime);
  return 0;
}

static int hip_device_select(zlb_backend_t *b, int index, zlb_error_t *err) {
  struct hip_state *st = b->impl;
  /* Also called again to make the device current on another thread. */
  HIP("hipSetDevice", api.set_device(index));
  st->device = index;
  return 0;
}

static int hip_stream_create(zlb_backend_t *b, zlb_stream_t *s, zlb_error_t *err) {
  zhip_stream_t hs;
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  /* Non-blocking: capture needs a stream that does not synchronise with
   * the NULL stream. */
  HIP("hipStreamCreateWithFlags", api.stream_create(&hs, ZHIP_STREAM_NON_BLOCKING));
  *s = (zlb_stream_t)hs;
  return 0;
}

static void hip_stream_destroy(zlb_backend_t *b, zlb_stream_t s) {
  (void)b;
  api.stream_destroy((zhip_stream_t)s);
}

static int hip_stream_sync(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  HIP("hipStreamSynchronize", api.stream_sync((zhip_stream_t)s));
  return 0;
}

static int hip_stream_wait(zlb_backend_t *b, zlb_stream_t waiter, zlb_stream_t waitee,
                           zlb_error_t *err) {
  zhip_event_t e;
  int r, rc;
  if ((rc = bind(b, err)))
    return rc;
  HIP("hipEventCreateWithFlags", api.event_create(&e, ZHIP_EVENT_DISABLE_TIMING));
  r = api.event_record(e, (zhip_stream_t)waitee);
  if (r == ZHIP_SUCCESS)
    r = api.stream_wait_event((zhip_stream_t)waiter, e, 0);
  api.event_destroy(e);
  if (r != ZHIP_SUCCESS)
    return fail(err, "hipStreamWaitEvent", r);
  return 0;
}

static int hip_is_capturing(zlb_backend_t *b, zlb_stream_t s, int *capturing,
                            zlb_error_t *err) {
  int st = ZHIP_CAPTURE_STATUS_NONE;
  (void)b;
  HIP("hipStreamIsCapturing", api.stream_is_capturing((zhip_stream_t)s, &st));
  *capturing = st != ZHIP_CAPTURE_STATUS_NONE;
  return 0;
}

static int hip_event_create(zlb_backend_t *b, zlb_event_t *e, zlb_error_t *err) {
  zhip_event_t he;
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  HIP("hipEventCreateWithFlags", api.event_create(&he, ZHIP_EVENT_DEFAULT));
  *e = (zlb_event_t)he;
  return 0;
}

static void hip_event_destroy(zlb_backend_t *b, zlb_event_t e) {
  (void)b;
  api.event_destroy((zhip_event_t)e);
}

static int hip_event_record(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s,
                            zlb_error_t *err) {
  (void)b;
  HIP("hipEventRecord", api.event_record((zhip_event_t)e, (zhip_stream_t)s));
  return 0;
}

static int hip_event_elapsed(zlb_backend_t *b, zlb_event_t start, zlb_event_t end,
                             double *ms, zlb_error_t *err) {
  float f = 0.0f;
  (void)b;
  HIP("hipEventSynchronize", api.event_sync((zhip_event_t)end));
  HIP("hipEventElapsedTime", api.event_elapsed(&f, (zhip_event_t)start, (zhip_event_t)end));
  *ms = (double)f;
  return 0;
}

static int hip_mem_alloc(zlb_backend_t *b, size_t bytes, void **ptr, zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  *ptr = NULL;
  HIP("hipMalloc", api.mem_alloc(ptr, bytes < MIN_ALLOC_BYTES ? MIN_ALLOC_BYTES : bytes));
  return 0;
}

static void hip_mem_free(zlb_backend_t *b, void *ptr) {
  (void)b;
  if (ptr)
    api.mem_free(ptr);
}

static int hip_mem_info(zlb_backend_t *b, size_t *free_bytes, size_t *total_bytes,
                        zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  HIP("hipMemGetInfo", api.mem_info(free_bytes, total_bytes));
  return 0;
}

static int hip_memset(zlb_backend_t *b, void *ptr, int value, size_t bytes, zlb_stream_t s,
                      zlb_error_t *err) {
  (void)b;
  if (bytes)
    HIP("hipMemsetAsync", api.memset_async(ptr, value, bytes, (zhip_stream_t)s));
  return 0;
}

static int hip_htod(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                    zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  /* HIP's prototype takes a non-const source it does not write. */
  if (bytes)
    HIP("hipMemcpyHtoD", api.memcpy_htod(dst, (void *)(uintptr_t)src, bytes));
  return 0;
}

static int hip_dtoh(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                    zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  if (bytes)
    HIP("hipMemcpyDtoH", api.memcpy_dtoh(dst, (void *)(uintptr_t)src, bytes));
  return 0;
}

static int hip_dtod(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                    zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  if (bytes)
    HIP("hipMemcpyDtoDAsync",
        api.memcpy_dtod(dst, (void *)(uintptr_t)src, bytes, (zhip_stream_t)s));
  return 0;
}

static int hip_capture_begin(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  /* Thread-local mode: unsafe calls from this thread fail the capture (the
   * refusal we want to see); other threads are not judged. */
  HIP("hipStreamBeginCapture",
      api.capture_begin((zhip_stream_t)s, ZHIP_CAPTURE_MODE_THREAD_LOCAL));
  return 0;
}

static int hip_capture_end(zlb_backend_t *b, zlb_stream_t s, zlb_graph_t *g,
                           zlb_error_t *err) {
  zhip_graph_t hg = NULL;
  int r;
  (void)b;
  r = api.capture_end((zhip_stream_t)s, &hg);
  *g = (zlb_graph_t)hg;
  if (r != ZHIP_SUCCESS)
    return fail(err, "hipStreamEndCapture", r);
  if (!hg)
    return fail(err, "hipStreamEndCapture", ZHIP_ERROR_STREAM_CAPTURE_INVALIDATED);
  return 0;
}

static int hip_graph_instantiate(zlb_backend_t *b, zlb_graph_t g, zlb_graph_exec_t *x,
                                 zlb_error_t *err) {
  zhip_graph_exec_t hx = NULL;
  (void)b;
  if (api.graph_instantiate_flags)
    HIP("hipGraphInstantiateWithFlags", api.graph_instantiate_flags(&hx, (zhip_graph_t)g, 0));
  else
    HIP("hipGraphInstantiate", api.graph_instantiate(&hx, (zhip_graph_t)g, NULL, NULL, 0));
  *x = (zlb_graph_exec_t)hx;
  return 0;
}

static int hip_graph_launch(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t s,
                            zlb_error_t *err) {
  (void)b;
  HIP("hipGraphLaunch", api.graph_launch((zhip_graph_exec_t)x, (zhip_stream_t)s));
  return 0;
}

static void hip_graph_destroy(zlb_backend_t *b, zlb_graph_t g) {
  (void)b;
  if (g)
    api.graph_destroy((zhip_graph_t)g);
}

static void hip_graph_exec_destroy(zlb_backend_t *b, zlb_graph_exec_t x) {
  (void)b;
  if (x)
    api.graph_exec_destroy((zhip_graph_exec_t)x);
}

static int hip_sync(zlb_backend_t *b, zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  HIP("hipDeviceSynchronize", api.device_sync());
  return 0;
}

/* Simple work on a fresh allocation: after a sticky fault or a capture that
 * broke the context, one of these calls fails. */
static int hip_health_probe(zlb_backend_t *b, zlb_error_t *err) {
  void *p = NULL;
  int r, rc;
  if ((rc = bind(b, err)))
    return rc;
  HIP("hipDeviceSynchronize", api.device_sync());
  HIP("hipMalloc", api.mem_alloc(&p, PROBE_BYTES));
  r = api.memset_async(p, PROBE_FILL, PROBE_BYTES, NULL);
  if (r == ZHIP_SUCCESS)
    r = api.device_sync();
  api.mem_free(p);
  if (r != ZHIP_SUCCESS)
    return fail(err, "health probe", r);
  return 0;
}

/* The tracer is loaded on first use, not at open: a backend without one
 * still benchmarks with every other timer. */
static int hip_trace_available(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  return zlb__roctracer_open(api.lib, err);
}

static int hip_trace_begin(zlb_backend_t *b, zlb_error_t *err) {
  int rc;
  if ((rc = hip_trace_available(b, err)))
    return rc;
  return zlb__roctracer_begin(err);
}

static int hip_trace_now(zlb_backend_t *b, uint64_t *ns, zlb_error_t *err) {
  (void)b;
  return zlb__roctracer_now(ns, err);
}

static int hip_trace_end(zlb_backend_t *b, zlb_trace_span_t **spans, size_t *n,
                         zlb_error_t *err) {
  (void)b;
  return zlb__roctracer_end(spans, n, err);
}

static const char *hip_error_name(zlb_backend_t *b, int code) {
  (void)b;
  return runtime_error_name(code);
}

/*
 * Holding a stream: hipStreamWaitValue32 ("greater or equal") on a word of
 * mapped host memory. The host releases it with a plain store, no runtime
 * call, so the queue timer's watchdog can release a hold while this thread
 * is blocked inside the runtime. Hold numbers only grow (the comparison is
 * not cyclic on HIP), from 1; 2^32 holds in one process are out of reach.
 */
static int hip_stream_hold(zlb_backend_t *b, zlb_stream_t s, zlb_hold_t *h, zlb_error_t *err) {
  struct hip_state *st = b->impl;
  uint32_t seq;
  int rc;
  *h = NULL;
  if (!api.host_alloc || !api.host_free || !api.host_device_ptr || !api.wait_value32)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "this HIP runtime cannot hold a stream (%s lacks hipStreamWaitValue32 "
                         "or the mapped host memory calls)", api.lib);
  if ((rc = bind(b, err)))
    return rc;
  if (!st->hold_word) {
    void *p = NULL, *dev = NULL;
    int r;
    HIP("hipHostMalloc", api.host_alloc(&p, 64, ZHIP_HOST_MALLOC_PORTABLE |
                                                    ZHIP_HOST_MALLOC_MAPPED |
                                                    ZHIP_HOST_MALLOC_COHERENT));
    if ((r = api.host_device_ptr(&dev, p, 0)) != ZHIP_SUCCESS) {
      api.host_free(p);
      return fail(err, "hipHostGetDevicePointer", r);
    }
    st->hold_word = p;
    st->hold_dev = dev;
    __atomic_store_n(st->hold_word, 0u, __ATOMIC_SEQ_CST);
    st->hold_seq = 0;
  }
  if (st->hold_seq == UINT32_MAX)
    return zlb_error_set(err, ZLB_EUNSUPPORTED, "the stream hold counter is exhausted");
  seq = st->hold_seq + 1;
  HIP("hipStreamWaitValue32", api.wait_value32((zhip_stream_t)s, st->hold_dev, seq,
                                                ZHIP_STREAM_WAIT_VALUE_GTE, 0xffffffffu));
  st->hold_seq = seq;
  *h = (zlb_hold_t)(uintptr_t)seq;
  return 0;
}

/* Only forward: a late second release of an earlier hold must not move the
 * word back below a later hold already released. */
static void hip_stream_release(zlb_backend_t *b, zlb_hold_t h) {
  struct hip_state *st = b->impl;
  uint32_t seq = (uint32_t)(uintptr_t)h, cur;
  if (!st || !st->hold_word || !seq)
    return;
  cur = __atomic_load_n(st->hold_word, __ATOMIC_SEQ_CST);
  while (cur < seq && !__atomic_compare_exchange_n(st->hold_word, &cur, seq, 0,
                                                   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    ;
}

static const zlb_backend_vtbl_t hip_vtbl = {
    .open = hip_open,
    .close = hip_close,
    .device_count = hip_device_count,
    .device_info = hip_device_info,
    .device_select = hip_device_select,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .stream_sync = hip_stream_sync,
    .stream_wait = hip_stream_wait,
    .stream_is_capturing = hip_is_capturing,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_elapsed = hip_event_elapsed,
    .mem_alloc = hip_mem_alloc,
    .mem_free = hip_mem_free,
    .memset_async = hip_memset,
    .memcpy_htod = hip_htod,
    .memcpy_dtoh = hip_dtoh,
    .capture_begin = hip_capture_begin,
    .capture_end = hip_capture_end,
    .graph_instantiate = hip_graph_instantiate,
    .graph_launch = hip_graph_launch,
    .graph_destroy = hip_graph_destroy,
    .graph_exec_destroy = hip_graph_exec_destroy,
    .sync = hip_sync,
    .health_probe = hip_health_probe,
    .error_name = hip_error_name,
    .trace_begin = hip_trace_begin,
    .trace_now = hip_trace_now,
    .trace_end = hip_trace_end,
    .trace_available = hip_trace_available,
    .memcpy_dtod = hip_dtod,
    .mem_info = hip_mem_info,
    .stream_hold = hip_stream_hold,
    .stream_release = hip_stream_release,
    /* No clock readings, no device-side checks (the accuracy check copies
     * outputs to the host). */
};

static const char *const rocm_aliases[] = {"amd", "hip", NULL};

/* Capture refusals leave the context usable after EndCapture; 700, 702,
 * 710, 719 and 214 are device faults; a destroyed context or an HSA
 * runtime failure leaves the process unusable. HIP has no codes for CUDA's
 * 714-718. */
static const zlb_classify_entry_t rocm_classify[] = {
    {900, "hipErrorStreamCaptureUnsupported", ZLB_VERDICT_REFUSED},
    {901, "hipErrorStreamCaptureInvalidated", ZLB_VERDICT_REFUSED},
    {902, "hipErrorStreamCaptureMerge", ZLB_VERDICT_REFUSED},
    {903, "hipErrorStreamCaptureUnmatched", ZLB_VERDICT_REFUSED},
    {904, "hipErrorStreamCaptureUnjoined", ZLB_VERDICT_REFUSED},
    {905, "hipErrorStreamCaptureIsolation", ZLB_VERDICT_REFUSED},
    {906, "hipErrorStreamCaptureImplicit", ZLB_VERDICT_REFUSED},
    {907, "hipErrorCapturedEvent", ZLB_VERDICT_REFUSED},
    {908, "hipErrorStreamCaptureWrongThread", ZLB_VERDICT_REFUSED},
    {910, "hipErrorGraphExecUpdateFailure", ZLB_VERDICT_REFUSED},
    {801, "hipErrorNotSupported", ZLB_VERDICT_REFUSED},
    {214, "hipErrorECCNotCorrectable", ZLB_VERDICT_FATAL},
    {700, "hipErrorIllegalAddress", ZLB_VERDICT_FATAL},
    {702, "hipErrorLaunchTimeOut", ZLB_VERDICT_FATAL},
    {710, "hipErrorAssert", ZLB_VERDICT_FATAL},
    {719, "hipErrorLaunchFailure", ZLB_VERDICT_FATAL},
    {709, "hipErrorContextIsDestroyed", ZLB_VERDICT_POISONED},
    {1052, "hipErrorRuntimeMemory", ZLB_VERDICT_POISONED},
    {1053, "hipErrorRuntimeOther", ZLB_VERDICT_POISONED},
};

/* ROCR_VISIBLE_DEVICES masks at the lower (ROCr) layer and
 * HIP_VISIBLE_DEVICES then indexes what is left: setting both would mask
 * twice. Only the HIP key is set, which HIP programs honour. */
const zlb_backend_desc_t zlb__backend_rocm = {
    .name = "rocm",
    .vendor = "AMD",
    .aliases = rocm_aliases,
    .sonames = rocm_sonames,
    .visibility_env = "HIP_VISIBLE_DEVICES",
    /* "trace" where roctracer loads (hip_trace_available): an opened
     * backend's zlb_backend_caps says whether it did. */
    .caps = ZLB_CAP_GRAPH | ZLB_CAP_EVENTS | ZLB_CAP_RNG_STATE | ZLB_CAP_ASYNC |
            ZLB_CAP_L2_FLUSH | ZLB_CAP_TRACE | ZLB_CAP_HOLD,
    .classify = rocm_classify,
    .nclassify = sizeof(rocm_classify) / sizeof(rocm_classify[0]),
    .flush_bytes = 256u << 20, /* MI300X's Infinity Cache, the largest AMD last-level cache */
    .vtbl = &hip_vtbl,
    .probe_in_auto = 1,
};
