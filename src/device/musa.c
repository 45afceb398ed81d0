/* The MUSA backend over Moore Threads' runtime API, loaded at run time from
 * libmusart: the binary builds and starts without the MUSA SDK. The
 * declarations are hand-written (musa_api.h) and bound by name. MUSA's
 * runtime follows the CUDA runtime's shape (musa* names, CUDA's error and
 * attribute numbering); no authoritative header was available, so what is
 * assumed is listed in musa_api.h and docs/architecture.md ("MUSA"), and
 * the tests' fake runtime shares those assumptions.
 *
 * Properties come from attribute queries; of musaDeviceProp only the name
 * and the uuid (its first two members) are read, into a buffer much larger
 * than the struct, so that a struct that grew does not overrun it.
 *
 * The current device is per thread, as in the CUDA runtime: every call
 * that allocates or creates sets the selected device on the calling thread
 * first. MUSA is not known to have a stream wait on a memory value, so
 * there is no stream hold: the queue timer falls back (capability "hold"
 * is off). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_int.h"
#include "musa_api.h"
#include "zlbench/base.h"

/* An empty tensor still gets a pointer. */
#define MIN_ALLOC_BYTES 256
/* The health probe's allocation and fill byte (any non-zero pattern). */
#define PROBE_BYTES 4096
#define PROBE_FILL 0x5a

struct musa_api {
#define X(field, sym, params) int(*field) params;
  ZMUSA_REQUIRED(X)
  ZMUSA_OPTIONAL(X)
#undef X
#define X(field, sym, params) const char *(*field) params;
  ZMUSA_STRINGS(X)
#undef X
  const char *lib; /* the library that was loaded */
  int runtime, driver;
};

static struct musa_api api;
static zlb_error_t load_error = ZLB_ERROR_INIT;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

struct musa_state {
  int device;
};

static const char *const musa_sonames[] = {"libmusart.so", "libmusart.so.1",
                                           "/usr/local/musa/lib/libmusart.so", NULL};

/* The runtime's name for a code, NULL where it has none. */
static const char *runtime_error_name(int code) {
  const char *n = api.error_name ? api.error_name(code) : NULL;
  if (!n || !*n || strncmp(n, "musa", 4) ||
      (code != ZMUSA_ERROR_UNKNOWN && !strcmp(n, "musaErrorUnknown")))
    return NULL;
  return n;
}

static void load_api(void) {
  void *h = zlb__dlopen_first(musa_sonames, "musa", &api.lib, &load_error);
  const char *missing = NULL;
  int r, n = 0;
  if (!h)
    return;
#define X(field, sym, params)                                                   \
  zlb__bind(h, #sym, &api.field, sizeof(api.field));                            \
  if (!api.field && !missing)                                                   \
    missing = #sym;
  ZMUSA_REQUIRED(X)
  ZMUSA_STRINGS(X)
#undef X
  if (missing) {
    zlb_error_set(&load_error, ZLB_EUNAVAIL,
                  "backend 'musa': %s lacks '%s' (not a MUSA runtime, or one older than "
                  "this backend needs)", api.lib, missing);
    return;
  }
#define X(field, sym, params) zlb__bind(h, #sym, &api.field, sizeof(api.field));
  ZMUSA_OPTIONAL(X)
#undef X
  /* The runtime initialises on its first call; counting the devices is the
   * one that tells a missing device or driver from a working runtime. */
  r = api.device_count(&n);
  if (r != ZMUSA_SUCCESS) {
    const char *name = runtime_error_name(r);
    int absent = r == ZMUSA_ERROR_NO_DEVICE || r == ZMUSA_ERROR_INSUFFICIENT_DRIVER;
    zlb_error_vendor(&load_error, absent ? ZLB_EUNAVAIL : ZLB_EDEVICE, r, name ? name : "",
                     "backend 'musa': %s loaded, but musaGetDeviceCount failed: %s (%d)%s",
                     api.lib, name ? name : "unknown error", r,
                     absent ? ": no Moore Threads GPU is visible (check MUSA_VISIBLE_DEVICES, "
                              "the MUSA driver and access to /dev/mtgpu*)"
                            : "");
    return;
  }
  if (api.runtime_version(&api.runtime) != ZMUSA_SUCCESS)
    api.runtime = 0;
  if (api.driver_version(&api.driver) != ZMUSA_SUCCESS)
    api.driver = 0;
}

/* Fill `err` for a failed MUSA call, naming the call and the error. */
static int fail(zlb_error_t *err, const char *call, int r) {
  const char *name = runtime_error_name(r);
  const char *text = api.error_string ? api.error_string(r) : NULL;
  if (!name) {
    /* The registry's table knows codes the runtime leaves unnamed. */
    for (size_t i = 0; i < zlb__backend_musa.nclassify; i++)
      if (zlb__backend_musa.classify[i].code == r)
        name = zlb__backend_musa.classify[i].name;
  }
  if (text && (!*text || (name && !strcmp(text, name))))
    text = NULL;
  return zlb_error_vendor(err, ZLB_EDEVICE, r, name ? name : "", "%s: %s (%d)%s%s", call,
                          name ? name : "musaError", r, text ? ": " : "", text ? text : "");
}

#define MUSA(call, expr)                                                        \
  do {                                                                          \
    int r_ = (expr);                                                            \
    if (r_ != ZMUSA_SUCCESS)                                                    \
      return fail(err, call, r_);                                               \
  } while (0)

/* The current device is per thread, and operator code (or a framework
 * beside us) may change it: every call that allocates or creates sets it
 * first. Those calls are not on the timed path. */
static int bind(zlb_backend_t *b, zlb_error_t *err) {
  struct musa_state *st = b->impl;
  if (st->device >= 0)
    MUSA("musaSetDevice", api.set_device(st->device));
  return 0;
}

static int musa_open(zlb_backend_t *b, zlb_error_t *err) {
  struct musa_state *st;
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

static void musa_close(zlb_backend_t *b) {
  struct musa_state *st = b->impl;
  if (st && st->device >= 0) {
    api.set_device(st->device);
    api.device_sync();
  }
  free(st);
  b->impl = NULL;
}

static int musa_device_count(zlb_backend_t *b, int *n, zlb_error_t *err) {
  int r;
  (void)b;
  *n = 0;
  r = api.device_count(n);
  if (r == ZMUSA_ERROR_NO_DEVICE) {
    *n = 0;
    return 0;
  }
  if (r != ZMUSA_SUCCESS)
    return fail(err, "musaGetDeviceCount", r);
  return 0;
}

/* The version numbers' encoding is not known for certain (CUDA's
 * major * 1000 + minor * 10, or major * 10000 + minor * 100 + patch): the
 * number is shown as the runtime gives it. */
static void version_string(char *buf, size_t len, const char *what, int v) {
  if (v > 0)
    snprintf(buf, len, "%s %d", what, v);
}

/* Total memory: musaMemGetInfo answers for the calling thread's current
 * device, so the device is made current for the query and the previous
 * one restored. */
static int total_memory(int index, size_t *total) {
  size_t free_bytes = 0;
  int prev = -1, r;
  if (api.get_device(&prev) != ZMUSA_SUCCESS)
    prev = -1;
  if ((r = api.set_device(index)) != ZMUSA_SUCCESS)
    return r;
  r = api.mem_info(&free_bytes, total);
  if (prev >= 0)
    api.set_device(prev);
  return r;
}

static int musa_device_info(zlb_backend_t *b, int index, zlb_device_info_t *info,
                            zlb_error_t *err) {
  unsigned char *prop;
  int v, r, bus = -1, dev = -1, domain = -1;
  (void)b;
  memset(info, 0, sizeof(*info));
  info->index = index;
  prop = zlb_xcalloc(1, ZMUSA_PROP_BUFFER_BYTES);
  if ((r = api.device_props(prop, index)) != ZMUSA_SUCCESS) {
    free(prop);
    return fail(err, "musaGetDeviceProperties", r);
  }
  /* The name is NUL-terminated within its 256 bytes; ours holds 127. */
  prop[ZMUSA_PROP_NAME_OFFSET + ZMUSA_PROP_NAME_BYTES - 1] = '\0';
  zlb_strlcpy(info->name, (const char *)prop + ZMUSA_PROP_NAME_OFFSET, sizeof(info->name));
  {
    const unsigned char *x = prop + ZMUSA_PROP_UUID_OFFSET;
    int any = 0;
    for (int i = 0; i < 16; i++)
      any |= x[i];
    if (any)
      snprintf(info->uuid, sizeof(info->uuid),
               "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
               x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11],
               x[12], x[13], x[14], x[15]);
  }
  free(prop);
  if (total_memory(index, &info->mem_bytes) != ZMUSA_SUCCESS)
    info->mem_bytes = 0;
#define ATTR(field, id)                                                         \
  if (api.device_attr(&v, id, index) == ZMUSA_SUCCESS)                          \
    info->field = v;
  ATTR(sm_count, ZMUSA_ATTR_MULTIPROCESSOR_COUNT)
  ATTR(cc_major, ZMUSA_ATTR_CC_MAJOR)
  ATTR(cc_minor, ZMUSA_ATTR_CC_MINOR)
  ATTR(clock_khz, ZMUSA_ATTR_CLOCK_RATE)
  ATTR(mem_clock_khz, ZMUSA_ATTR_MEMORY_CLOCK_RATE)
  ATTR(bus_width_bits, ZMUSA_ATTR_MEMORY_BUS_WIDTH)
#undef ATTR
  if (api.device_attr(&v, ZMUSA_ATTR_L2_CACHE_SIZE, index) == ZMUSA_SUCCESS && v > 0)
    info->l2_bytes = (size_t)v;
  if (api.device_attr(&v, ZMUSA_ATTR_PCI_BUS_ID, index) == ZMUSA_SUCCESS)
    bus = v;
  if (api.device_attr(&v, ZMUSA_ATTR_PCI_DEVICE_ID, index) == ZMUSA_SUCCESS)
    dev = v;
  if (api.device_attr(&v, ZMUSA_ATTR_PCI_DOMAIN_ID, index) == ZMUSA_SUCCESS)
    domain = v;
  if (bus >= 0 && dev >= 0 && domain >= 0)
    snprintf(info->pci_bus_id, sizeof(info->pci_bus_id), "%04x:%02x:%02x.0",
             (unsigned)domain, (unsigned)bus, (unsigned)dev);
  version_string(info->driver_version, sizeof(info->driver_version), "musa driver",
                 api.driver);
  version_string(info->runtime_version, sizeof(info->runtime_version), "musart", api.runtime);
  return 0;
}

static int musa_device_select(zlb_backend_t *b, int index, zlb_error_t *err) {
  struct musa_state *st = b->impl;
  /* Also called again to make the device current on another thread. */
  MUSA("musaSetDevice", api.set_device(index));
  st->device = index;
  return 0;
}

static int musa_stream_create(zlb_backend_t *b, zlb_stream_t *s, zlb_error_t *err) {
  zmusa_stream_t ms;
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  /* Non-blocking: capture needs a stream that does not synchronise with
   * the NULL stream. */
  MUSA("musaStreamCreateWithFlags", api.stream_create(&ms, ZMUSA_STREAM_NON_BLOCKING));
  *s = (zlb_stream_t)ms;
  return 0;
}

static void musa_stream_destroy(zlb_backend_t *b, zlb_stream_t s) {
  (void)b;
  api.stream_destroy((zmusa_stream_t)s);
}

static int musa_stream_sync(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  MUSA("musaStreamSynchronize", api.stream_sync((zmusa_stream_t)s));
  return 0;
}

static int musa_stream_wait(zlb_backend_t *b, zlb_stream_t waiter, zlb_stream_t waitee,
                            zlb_error_t *err) {
  zmusa_event_t e;
  int r, rc;
  if ((rc = bind(b, err)))
    return rc;
  MUSA("musaEventCreateWithFlags", api.event_create(&e, ZMUSA_EVENT_DISABLE_TIMING));
  r = api.event_record(e, (zmusa_stream_t)waitee);
  if (r == ZMUSA_SUCCESS)
    r = api.stream_wait_event((zmusa_stream_t)waiter, e, 0);
  api.event_destroy(e);
  if (r != ZMUSA_SUCCESS)
    return fail(err, "musaStreamWaitEvent", r);
  return 0;
}

static int musa_is_capturing(zlb_backend_t *b, zlb_stream_t s, int *capturing,
                             zlb_error_t *err) {
  int st = ZMUSA_CAPTURE_STATUS_NONE;
  (void)b;
  *capturing = 0;
  if (!api.stream_is_capturing)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "%s lacks musaStreamIsCapturing: whether a stream captures is "
                         "not known", api.lib);
  MUSA("musaStreamIsCapturing", api.stream_is_capturing((zmusa_stream_t)s, &st));
  *capturing = st != ZMUSA_CAPTURE_STATUS_NONE;
  return 0;
}

static int musa_event_create(zlb_backend_t *b, zlb_event_t *e, zlb_error_t *err) {
  zmusa_event_t me;
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  MUSA("musaEventCreateWithFlags", api.event_create(&me, ZMUSA_EVENT_DEFAULT));
  *e = (zlb_event_t)me;
  return 0;
}

static void musa_event_destroy(zlb_backend_t *b, zlb_event_t e) {
  (void)b;
  api.event_destroy((zmusa_event_t)e);
}

static int musa_event_record(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s,
                             zlb_error_t *err) {
  (void)b;
  MUSA("musaEventRecord", api.event_record((zmusa_event_t)e, (zmusa_stream_t)s));
  return 0;
}

static int musa_event_elapsed(zlb_backend_t *b, zlb_event_t start, zlb_event_t end,
                              double *ms, zlb_error_t *err) {
  float f = 0.0f;
  (void)b;
  MUSA("musaEventSynchronize", api.event_sync((zmusa_event_t)end));
  MUSA("musaEventElapsedTime",
       api.event_elapsed(&f, (zmusa_event_t)start, (zmusa_event_t)end));
  *ms = (double)f;
  return 0;
}

static int musa_mem_alloc(zlb_backend_t *b, size_t bytes, void **ptr, zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  *ptr = NULL;
  MUSA("musaMalloc", api.mem_alloc(ptr, bytes < MIN_ALLOC_BYTES ? MIN_ALLOC_BYTES : bytes));
  return 0;
}

static void musa_mem_free(zlb_backend_t *b, void *ptr) {
  (void)b;
  if (ptr)
    api.mem_free(ptr);
}

static int musa_mem_info(zlb_backend_t *b, size_t *free_bytes, size_t *total_bytes,
                         zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  MUSA("musaMemGetInfo", api.mem_info(free_bytes, total_bytes));
  return 0;
}

static int musa_memset(zlb_backend_t *b, void *ptr, int value, size_t bytes,
                       zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  if (bytes)
    MUSA("musaMemsetAsync", api.memset_async(ptr, value, bytes, (zmusa_stream_t)s));
  return 0;
}

static int musa_htod(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  if (bytes)
    MUSA("musaMemcpy", api.memcpy(dst, src, bytes, ZMUSA_MEMCPY_HOST_TO_DEVICE));
  return 0;
}

static int musa_dtoh(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  if (bytes)
    MUSA("musaMemcpy", api.memcpy(dst, src, bytes, ZMUSA_MEMCPY_DEVICE_TO_HOST));
  return 0;
}

static int musa_dtod(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  if (bytes)
    MUSA("musaMemcpyAsync", api.memcpy_async(dst, src, bytes, ZMUSA_MEMCPY_DEVICE_TO_DEVICE,
                                             (zmusa_stream_t)s));
  return 0;
}

static int musa_capture_begin(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  /* Thread-local mode: unsafe calls from this thread fail the capture (the
   * refusal we want to see); other threads are not judged. */
  MUSA("musaStreamBeginCapture",
       api.capture_begin((zmusa_stream_t)s, ZMUSA_CAPTURE_MODE_THREAD_LOCAL));
  return 0;
}

static int musa_capture_end(zlb_backend_t *b, zlb_stream_t s, zlb_graph_t *g,
                            zlb_error_t *err) {
  zmusa_graph_t mg = NULL;
  int r;
  (void)b;
  r = api.capture_end((zmusa_stream_t)s, &mg);
  *g = (zlb_graph_t)mg;
  if (r != ZMUSA_SUCCESS)
    return fail(err, "musaStreamEndCapture", r);
  if (!mg)
    return fail(err, "musaStreamEndCapture", ZMUSA_ERROR_STREAM_CAPTURE_INVALIDATED);
  return 0;
}

static int musa_graph_instantiate(zlb_backend_t *b, zlb_graph_t g, zlb_graph_exec_t *x,
                                  zlb_error_t *err) {
  zmusa_graph_exec_t mx = NULL;
  (void)b;
  if (api.graph_instantiate_flags)
    MUSA("musaGraphInstantiateWithFlags",
         api.graph_instantiate_flags(&mx, (zmusa_graph_t)g, 0));
  else
    MUSA("musaGraphInstantiate",
         api.graph_instantiate(&mx, (zmusa_graph_t)g, NULL, NULL, 0));
  *x = (zlb_graph_exec_t)mx;
  return 0;
}

static int musa_graph_launch(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t s,
                             zlb_error_t *err) {
  (void)b;
  MUSA("musaGraphLaunch", api.graph_launch((zmusa_graph_exec_t)x, (zmusa_stream_t)s));
  return 0;
}

static void musa_graph_destroy(zlb_backend_t *b, zlb_graph_t g) {
  (void)b;
  if (g)
    api.graph_destroy((zmusa_graph_t)g);
}

static void musa_graph_exec_destroy(zlb_backend_t *b, zlb_graph_exec_t x) {
  (void)b;
  if (x)
    api.graph_exec_destroy((zmusa_graph_exec_t)x);
}

static int musa_sync(zlb_backend_t *b, zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  MUSA("musaDeviceSynchronize", api.device_sync());
  return 0;
}

/* Simple work on a fresh allocation: after a sticky fault or a capture that
 * broke the context, one of these calls fails. */
static int musa_health_probe(zlb_backend_t *b, zlb_error_t *err) {
  void *p = NULL;
  int r, rc;
  if ((rc = bind(b, err)))
    return rc;
  MUSA("musaDeviceSynchronize", api.device_sync());
  MUSA("musaMalloc", api.mem_alloc(&p, PROBE_BYTES));
  r = api.memset_async(p, PROBE_FILL, PROBE_BYTES, NULL);
  if (r == ZMUSA_SUCCESS)
    r = api.device_sync();
  api.mem_free(p);
  if (r != ZMUSA_SUCCESS)
    return fail(err, "health probe", r);
  return 0;
}

static const char *musa_error_name(zlb_backend_t *b, int code) {
  (void)b;
  return runtime_error_name(code);
}

static const zlb_backend_vtbl_t musa_vtbl = {
    .open = musa_open,
    .close = musa_close,
    .device_count = musa_device_count,
    .device_info = musa_device_info,
    .device_select = musa_device_select,
    .stream_create = musa_stream_create,
    .stream_destroy = musa_stream_destroy,
    .stream_sync = musa_stream_sync,
    .stream_wait = musa_stream_wait,
    .stream_is_capturing = musa_is_capturing,
    .event_create = musa_event_create,
    .event_destroy = musa_event_destroy,
    .event_record = musa_event_record,
    .event_elapsed = musa_event_elapsed,
    .mem_alloc = musa_mem_alloc,
    .mem_free = musa_mem_free,
    .memset_async = musa_memset,
    .memcpy_htod = musa_htod,
    .memcpy_dtoh = musa_dtoh,
    .capture_begin = musa_capture_begin,
    .capture_end = musa_capture_end,
    .graph_instantiate = musa_graph_instantiate,
    .graph_launch = musa_graph_launch,
    .graph_destroy = musa_graph_destroy,
    .graph_exec_destroy = musa_graph_exec_destroy,
    .sync = musa_sync,
    .health_probe = musa_health_probe,
    .error_name = musa_error_name,
    .memcpy_dtod = musa_dtod,
    .mem_info = musa_mem_info,
    /* No stream hold (no known musaStreamWaitValue32: capability "hold" is
     * off and the queue timer falls back), no tracer, no clock readings, no
     * device-side checks (the accuracy check copies outputs to the host). */
};

static const char *const musa_aliases[] = {"mthreads", "mt", "moore", NULL};

/* CUDA's numbers: capture refusals leave the context usable after
 * EndCapture; 700, 702, 710, 714-719 and 214 are device faults; a destroyed
 * context leaves the process unusable. */
static const zlb_classify_entry_t musa_classify[] = {
    {900, "musaErrorStreamCaptureUnsupported", ZLB_VERDICT_REFUSED},
    {901, "musaErrorStreamCaptureInvalidated", ZLB_VERDICT_REFUSED},
    {902, "musaErrorStreamCaptureMerge", ZLB_VERDICT_REFUSED},
    {903, "musaErrorStreamCaptureUnmatched", ZLB_VERDICT_REFUSED},
    {904, "musaErrorStreamCaptureUnjoined", ZLB_VERDICT_REFUSED},
    {905, "musaErrorStreamCaptureIsolation", ZLB_VERDICT_REFUSED},
    {906, "musaErrorStreamCaptureImplicit", ZLB_VERDICT_REFUSED},
    {907, "musaErrorCapturedEvent", ZLB_VERDICT_REFUSED},
    {908, "musaErrorStreamCaptureWrongThread", ZLB_VERDICT_REFUSED},
    {910, "musaErrorGraphExecUpdateFailure", ZLB_VERDICT_REFUSED},
    {801, "musaErrorNotSupported", ZLB_VERDICT_REFUSED},
    {214, "musaErrorECCUncorrectable", ZLB_VERDICT_FATAL},
    {700, "musaErrorIllegalAddress", ZLB_VERDICT_FATAL},
    {702, "musaErrorLaunchTimeout", ZLB_VERDICT_FATAL},
    {710, "musaErrorAssert", ZLB_VERDICT_FATAL},
    {714, "musaErrorHardwareStackError", ZLB_VERDICT_FATAL},
    {715, "musaErrorIllegalInstruction", ZLB_VERDICT_FATAL},
    {716, "musaErrorMisalignedAddress", ZLB_VERDICT_FATAL},
    {717, "musaErrorInvalidAddressSpace", ZLB_VERDICT_FATAL},
    {718, "musaErrorInvalidPc", ZLB_VERDICT_FATAL},
    {719, "musaErrorLaunchFailure", ZLB_VERDICT_FATAL},
    {709, "musaErrorContextIsDestroyed", ZLB_VERDICT_POISONED},
};

/* MUSA_VISIBLE_DEVICES is the runtime's mask. A container's
 * MTHREADS_VISIBLE_DEVICES is read by the container toolkit when the
 * container is made (which device nodes it gets), not by the runtime: a
 * child process gains nothing from it, so batch sets MUSA's key only. */
const zlb_backend_desc_t zlb__backend_musa = {
    .name = "musa",
    .vendor = "Moore Threads",
    .aliases = musa_aliases,
    .sonames = musa_sonames,
    .visibility_env = "MUSA_VISIBLE_DEVICES",
    .caps = ZLB_CAP_GRAPH | ZLB_CAP_EVENTS | ZLB_CAP_RNG_STATE | ZLB_CAP_ASYNC |
            ZLB_CAP_L2_FLUSH,
    .classify = musa_classify,
    .nclassify = sizeof(musa_classify) / sizeof(musa_classify[0]),
    .flush_bytes = 256000000u, /* 256e6 bytes (docs/timing.md) */
    .vtbl = &musa_vtbl,
    .probe_in_auto = 1,
};
