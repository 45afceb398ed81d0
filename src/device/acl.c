/* The Ascend backend over the ACL runtime (CANN), loaded at run time from
 * libascendcl: the binary builds and starts without CANN. The declarations
 * are hand-written (acl_api.h) and bound by name.
 *
 * ACL's current device is per thread (aclrtSetDevice makes the device's
 * default context current on the calling thread): every call that
 * allocates or creates sets the selected device first, as on ROCm.
 *
 * Graphs are ACL's captured model runtime instances (aclmdlRI). There is no
 * instantiate step: the model that aclmdlRICaptureEnd returns is the one
 * aclmdlRIExecuteAsync runs. The vtable's graph and executable graph are
 * therefore one handle: graph_instantiate hands the graph back as its
 * "exec", graph_exec_destroy releases nothing, and graph_destroy calls
 * aclmdlRIDestroy, once, for whoever owns the graph. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_api.h"
#include "device_int.h"
#include "zlbench/base.h"

/* aclrtMalloc refuses 0 bytes; an empty tensor still gets a pointer. */
#define MIN_ALLOC_BYTES 256
/* The health probe's allocation and fill byte (any non-zero pattern). */
#define PROBE_BYTES 4096
#define PROBE_FILL 0x5a
/* aclInit when ACL was already initialised in this process (a framework
 * beside us, such as torch_npu): not a failure. */
#define ACL_ERROR_REPEAT_INITIALIZE 100002

struct acl_api {
#define X(field, sym, params) int(*field) params;
  ZACL_REQUIRED(X)
#undef X
#define X(field, sym, params) const char *(*field) params;
  ZACL_STRINGS(X)
  ZACL_OPTIONAL_STRINGS(X)
#undef X
  const char *lib; /* the library that was loaded */
};

static struct acl_api api;
static zlb_error_t load_error = ZLB_ERROR_INIT;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

struct acl_state {
  int device;
};

static const char *const ascend_sonames[] = {
    "libascendcl.so", "/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so", NULL};

/* Names of the codes the backend meets that decide no verdict (those that
 * do are in ascend_classify). ACL has no name function. */
static const struct {
  int code;
  const char *name;
} acl_names[] = {
    {100002, "ACL_ERROR_REPEAT_INITIALIZE"},
    {ZACL_ERROR_RT_PARAM_INVALID, "ACL_ERROR_RT_PARAM_INVALID"},
    {ZACL_ERROR_RT_INVALID_DEVICEID, "ACL_ERROR_RT_INVALID_DEVICEID"},
    {ZACL_ERROR_RT_CONTEXT_NULL, "ACL_ERROR_RT_CONTEXT_NULL"},
    {ZACL_ERROR_RT_INVALID_HANDLE, "ACL_ERROR_RT_INVALID_HANDLE"},
    {ZACL_ERROR_RT_MEMORY_ALLOCATION, "ACL_ERROR_RT_MEMORY_ALLOCATION"},
    {ZACL_ERROR_RT_NO_DEVICE, "ACL_ERROR_RT_NO_DEVICE"},
    {ZACL_ERROR_RT_EVENT_NOT_COMPLETE, "ACL_ERROR_RT_EVENT_NOT_COMPLETE"},
};

static const char *code_name(int code) {
  for (size_t i = 0; i < sizeof(acl_names) / sizeof(acl_names[0]); i++)
    if (acl_names[i].code == code)
      return acl_names[i].name;
  for (size_t i = 0; i < zlb__backend_ascend.nclassify; i++)
    if (zlb__backend_ascend.classify[i].code == code)
      return zlb__backend_ascend.classify[i].name;
  return NULL;
}

/* This thread's last error text from the runtime, or NULL. */
static const char *recent_text(void) {
  const char *t = api.recent_error ? api.recent_error() : NULL;
  return t && *t ? t : NULL;
}

/* The loader's path first (CANN's set_env.sh puts lib64 on it), then the
 * toolkit that ASCEND_TOOLKIT_HOME names, then the default install. */
static char toolkit_lib[4096];

static void load_api(void) {
  const char *names[4], *home = getenv("ASCEND_TOOLKIT_HOME");
  size_t n = 0;
  void *h;
  const char *missing = NULL;
  int r;
  names[n++] = ascend_sonames[0];
  if (home && *home &&
      (size_t)snprintf(toolkit_lib, sizeof(toolkit_lib), "%s/lib64/libascendcl.so", home) <
          sizeof(toolkit_lib))
    names[n++] = toolkit_lib;
  names[n++] = ascend_sonames[1];
  names[n] = NULL;
  h = zlb__dlopen_first(names, "ascend", &api.lib, &load_error);
  if (!h)
    return;
#define X(field, sym, params)                                                   \
  zlb__bind(h, #sym, &api.field, sizeof(api.field));                            \
  if (!api.field && !missing)                                                   \
    missing = #sym;
  ZACL_REQUIRED(X)
  ZACL_STRINGS(X)
#undef X
  if (missing) {
    zlb_error_set(&load_error, ZLB_EUNAVAIL,
                  "backend 'ascend': %s lacks '%s' (a CANN without model capture, or not "
                  "the ACL runtime)", api.lib, missing);
    return;
  }
#define X(field, sym, params) zlb__bind(h, #sym, &api.field, sizeof(api.field));
  ZACL_OPTIONAL_STRINGS(X)
#undef X
  r = api.init(NULL);
  if (r != ZACL_SUCCESS && r != ACL_ERROR_REPEAT_INITIALIZE) {
    const char *name = code_name(r), *text = recent_text();
    zlb_error_vendor(&load_error, r == ZACL_ERROR_RT_NO_DEVICE ? ZLB_EUNAVAIL : ZLB_EDEVICE, r,
                     name ? name : "", "backend 'ascend': %s loaded, but aclInit failed: %s (%d)%s%s%s",
                     api.lib, name ? name : "unknown error", r,
                     r == ZACL_ERROR_RT_NO_DEVICE
                         ? ": no Ascend NPU is visible (check ASCEND_RT_VISIBLE_DEVICES and "
                           "the driver's /dev/davinci* devices)"
                         : "",
                     text ? ": " : "", text ? text : "");
  }
}

/* Fill `err` for a failed ACL call, naming the call and the error. */
static int fail(zlb_error_t *err, const char *call, int r) {
  const char *name = code_name(r), *text = recent_text();
  return zlb_error_vendor(err, ZLB_EDEVICE, r, name ? name : "", "%s: %s (%d)%s%s", call,
                          name ? name : "aclError", r, text ? ": " : "", text ? text : "");
}

#define ACL(call, expr)                                                         \
  do {                                                                          \
    int r_ = (expr);                                                            \
    if (r_ != ZACL_SUCCESS)                                                     \
      return fail(err, call, r_);                                               \
  } while (0)

/* Every call that allocates or creates makes the selected device current
 * on the calling thread first (operator code or a framework beside us may
 * have changed it). Those calls are not on the timed path. */
static int bind(zlb_backend_t *b, zlb_error_t *err) {
  struct acl_state *st = b->impl;
  if (st->device >= 0)
    ACL("aclrtSetDevice", api.set_device(st->device));
  return 0;
}

static int acl_open(zlb_backend_t *b, zlb_error_t *err) {
  struct acl_state *st;
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

/* aclFinalize is not called: ACL cannot be initialised again in the same
 * process, and a backend may be opened more than once (auto probing). */
static void acl_close(zlb_backend_t *b) {
  struct acl_state *st = b->impl;
  if (st && st->device >= 0)
    api.device_sync();
  free(st);
  b->impl = NULL;
}

static int acl_device_count(zlb_backend_t *b, int *n, zlb_error_t *err) {
  uint32_t c = 0;
  int r;
  (void)b;
  *n = 0;
  r = api.device_count(&c);
  if (r == ZACL_ERROR_RT_NO_DEVICE)
    return 0;
  if (r != ZACL_SUCCESS)
    return fail(err, "aclrtGetDeviceCount", r);
  *n = (int)c;
  return 0;
}

/* The SoC name and the memory size are the current device's: the device is
 * made current for them, and the selected one again after. */
static int acl_device_info(zlb_backend_t *b, int index, zlb_device_info_t *info,
                           zlb_error_t *err) {
  struct acl_state *st = b->impl;
  const char *soc;
  size_t free_bytes = 0, total = 0;
  int64_t v;
  int r;
  memset(info, 0, sizeof(*info));
  info->index = index;
  ACL("aclrtSetDevice", api.set_device(index));
  soc = api.soc_name();
  zlb_strlcpy(info->name, soc && *soc ? soc : "Ascend NPU", sizeof(info->name));
  if (api.mem_info(ZACL_HBM_MEM, &free_bytes, &total) == ZACL_SUCCESS)
    info->mem_bytes = total;
  if (api.device_info((uint32_t)index, ZACL_DEV_ATTR_AICORE_CORE_NUM, &v) == ZACL_SUCCESS &&
      v > 0 && v < 1 << 20)
    info->sm_count = (int)v;
  if (api.device_info((uint32_t)index, ZACL_DEV_ATTR_L2_CACHE_SIZE, &v) == ZACL_SUCCESS && v > 0)
    info->l2_bytes = (size_t)v;
  if (st->device >= 0 && st->device != index && (r = api.set_device(st->device)) != ZACL_SUCCESS)
    return fail(err, "aclrtSetDevice", r);
  return 0;
}

static int acl_device_select(zlb_backend_t *b, int index, zlb_error_t *err) {
  struct acl_state *st = b->impl;
  /* Also called again to make the device current on another thread. */
  ACL("aclrtSetDevice", api.set_device(index));
  st->device = index;
  return 0;
}

static int acl_stream_create(zlb_backend_t *b, zlb_stream_t *s, zlb_error_t *err) {
  zacl_stream_t as = NULL;
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  ACL("aclrtCreateStream", api.stream_create(&as));
  *s = (zlb_stream_t)as;
  return 0;
}

static void acl_stream_destroy(zlb_backend_t *b, zlb_stream_t s) {
  (void)b;
  api.stream_destroy((zacl_stream_t)s);
}

static int acl_stream_sync(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  ACL("aclrtSynchronizeStream", api.stream_sync((zacl_stream_t)s));
  return 0;
}

static int acl_stream_wait(zlb_backend_t *b, zlb_stream_t waiter, zlb_stream_t waitee,
                           zlb_error_t *err) {
  zacl_event_t e = NULL;
  int r, rc;
  if ((rc = bind(b, err)))
    return rc;
  ACL("aclrtCreateEventWithFlag", api.event_create(&e, ZACL_EVENT_SYNC));
  r = api.event_record(e, (zacl_stream_t)waitee);
  if (r == ZACL_SUCCESS)
    r = api.stream_wait_event((zacl_stream_t)waiter, e);
  api.event_destroy(e);
  if (r != ZACL_SUCCESS)
    return fail(err, "aclrtStreamWaitEvent", r);
  return 0;
}

static int acl_is_capturing(zlb_backend_t *b, zlb_stream_t s, int *capturing,
                            zlb_error_t *err) {
  int st = ZACL_CAPTURE_STATUS_NONE;
  zacl_mdlri_t model = NULL;
  (void)b;
  ACL("aclmdlRICaptureGetInfo", api.capture_info((zacl_stream_t)s, &st, &model));
  *capturing = st != ZACL_CAPTURE_STATUS_NONE;
  return 0;
}

static int acl_event_create(zlb_backend_t *b, zlb_event_t *e, zlb_error_t *err) {
  zacl_event_t ae = NULL;
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  /* Timing events: a time stamp when reached, and host-waitable. */
  ACL("aclrtCreateEventWithFlag",
      api.event_create(&ae, ZACL_EVENT_TIME_LINE | ZACL_EVENT_SYNC));
  *e = (zlb_event_t)ae;
  return 0;
}

static void acl_event_destroy(zlb_backend_t *b, zlb_event_t e) {
  (void)b;
  api.event_destroy((zacl_event_t)e);
}

static int acl_event_record(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s,
                            zlb_error_t *err) {
  (void)b;
  ACL("aclrtRecordEvent", api.event_record((zacl_event_t)e, (zacl_stream_t)s));
  return 0;
}

static int acl_event_elapsed(zlb_backend_t *b, zlb_event_t start, zlb_event_t end,
                             double *ms, zlb_error_t *err) {
  float f = 0.0f;
  (void)b;
  ACL("aclrtSynchronizeEvent", api.event_sync((zacl_event_t)end));
  ACL("aclrtEventElapsedTime",
      api.event_elapsed(&f, (zacl_event_t)start, (zacl_event_t)end));
  *ms = (double)f;
  return 0;
}

static int acl_mem_alloc(zlb_backend_t *b, size_t bytes, void **ptr, zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  *ptr = NULL;
  ACL("aclrtMalloc", api.mem_alloc(ptr, bytes < MIN_ALLOC_BYTES ? MIN_ALLOC_BYTES : bytes,
                                   ZACL_MEM_MALLOC_HUGE_FIRST));
  return 0;
}

static void acl_mem_free(zlb_backend_t *b, void *ptr) {
  (void)b;
  if (ptr)
    api.mem_free(ptr);
}

static int acl_mem_info(zlb_backend_t *b, size_t *free_bytes, size_t *total_bytes,
                        zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  ACL("aclrtGetMemInfo", api.mem_info(ZACL_HBM_MEM, free_bytes, total_bytes));
  return 0;
}

/* The destination sizes (destMax, maxCount) are the byte counts: the
 * harness never writes past what it asks for. */
static int acl_memset(zlb_backend_t *b, void *ptr, int value, size_t bytes, zlb_stream_t s,
                      zlb_error_t *err) {
  (void)b;
  if (bytes)
    ACL("aclrtMemsetAsync", api.memset_async(ptr, bytes, value, bytes, (zacl_stream_t)s));
  return 0;
}

static int acl_htod(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                    zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  if (bytes)
    ACL("aclrtMemcpy", api.memcpy(dst, bytes, src, bytes, ZACL_MEMCPY_HOST_TO_DEVICE));
  return 0;
}

static int acl_dtoh(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                    zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  if (bytes)
    ACL("aclrtMemcpy", api.memcpy(dst, bytes, src, bytes, ZACL_MEMCPY_DEVICE_TO_HOST));
  return 0;
}

static int acl_dtod(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                    zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  if (bytes)
    ACL("aclrtMemcpyAsync", api.memcpy_async(dst, bytes, src, bytes,
                                             ZACL_MEMCPY_DEVICE_TO_DEVICE, (zacl_stream_t)s));
  return 0;
}

static int acl_capture_begin(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  /* Thread-local mode: unsafe calls from this thread fail the capture;
   * other threads are not judged. */
  ACL("aclmdlRICaptureBegin",
      api.capture_begin((zacl_stream_t)s, ZACL_CAPTURE_MODE_THREAD_LOCAL));
  return 0;
}

/* A model the runtime returns with a failure is still handed over: the
 * caller destroys whatever graph it holds. */
static int acl_capture_end(zlb_backend_t *b, zlb_stream_t s, zlb_graph_t *g,
                           zlb_error_t *err) {
  zacl_mdlri_t m = NULL;
  int r;
  (void)b;
  r = api.capture_end((zacl_stream_t)s, &m);
  *g = (zlb_graph_t)m;
  if (r != ZACL_SUCCESS)
    return fail(err, "aclmdlRICaptureEnd", r);
  if (!m)
    return fail(err, "aclmdlRICaptureEnd", ZACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
  return 0;
}

/* No runtime call: the captured model is the executable one. */
static int acl_graph_instantiate(zlb_backend_t *b, zlb_graph_t g, zlb_graph_exec_t *x,
                                 zlb_error_t *err) {
  (void)b;
  if (!g)
    return fail(err, "aclmdlRIExecuteAsync", ZACL_ERROR_RT_INVALID_HANDLE);
  *x = (zlb_graph_exec_t)g;
  return 0;
}

static int acl_graph_launch(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t s,
                            zlb_error_t *err) {
  (void)b;
  ACL("aclmdlRIExecuteAsync", api.model_execute((zacl_mdlri_t)x, (zacl_stream_t)s));
  return 0;
}

static void acl_graph_destroy(zlb_backend_t *b, zlb_graph_t g) {
  (void)b;
  if (g)
    api.model_destroy((zacl_mdlri_t)g);
}

/* The "exec" is the graph itself (acl_graph_instantiate): it goes with
 * graph_destroy, by the graph's owner, once. */
static void acl_graph_exec_destroy(zlb_backend_t *b, zlb_graph_exec_t x) {
  (void)b;
  (void)x;
}

static int acl_sync(zlb_backend_t *b, zlb_error_t *err) {
  int rc;
  if ((rc = bind(b, err)))
    return rc;
  ACL("aclrtSynchronizeDevice", api.device_sync());
  return 0;
}

/* Simple work on a fresh allocation and stream: after a sticky fault or a
 * capture that broke the context, one of these calls fails. */
static int acl_health_probe(zlb_backend_t *b, zlb_error_t *err) {
  void *p = NULL;
  zacl_stream_t s = NULL;
  int r, rc;
  if ((rc = bind(b, err)))
    return rc;
  ACL("aclrtSynchronizeDevice", api.device_sync());
  ACL("aclrtMalloc", api.mem_alloc(&p, PROBE_BYTES, ZACL_MEM_MALLOC_HUGE_FIRST));
  r = api.stream_create(&s);
  if (r == ZACL_SUCCESS)
    r = api.memset_async(p, PROBE_BYTES, PROBE_FILL, PROBE_BYTES, s);
  if (r == ZACL_SUCCESS)
    r = api.stream_sync(s);
  if (s)
    api.stream_destroy(s);
  api.mem_free(p);
  if (r != ZACL_SUCCESS)
    return fail(err, "health probe", r);
  return 0;
}

static const char *acl_error_name(zlb_backend_t *b, int code) {
  (void)b;
  return code_name(code);
}

static const zlb_backend_vtbl_t acl_vtbl = {
    .open = acl_open,
    .close = acl_close,
    .device_count = acl_device_count,
    .device_info = acl_device_info,
    .device_select = acl_device_select,
    .stream_create = acl_stream_create,
    .stream_destroy = acl_stream_destroy,
    .stream_sync = acl_stream_sync,
    .stream_wait = acl_stream_wait,
    .stream_is_capturing = acl_is_capturing,
    .event_create = acl_event_create,
    .event_destroy = acl_event_destroy,
    .event_record = acl_event_record,
    .event_elapsed = acl_event_elapsed,
    .mem_alloc = acl_mem_alloc,
    .mem_free = acl_mem_free,
    .memset_async = acl_memset,
    .memcpy_htod = acl_htod,
    .memcpy_dtoh = acl_dtoh,
    .capture_begin = acl_capture_begin,
    .capture_end = acl_capture_end,
    .graph_instantiate = acl_graph_instantiate,
    .graph_launch = acl_graph_launch,
    .graph_destroy = acl_graph_destroy,
    .graph_exec_destroy = acl_graph_exec_destroy,
    .sync = acl_sync,
    .health_probe = acl_health_probe,
    .error_name = acl_error_name,
    .memcpy_dtod = acl_dtod,
    .mem_info = acl_mem_info,
    /* No stream hold: ACL offers no documented stream wait on a memory
     * value that the host releases with a store (capability "hold" off;
     * the queue timer says UNSUPPORTED). No tracer (msprof is not wired),
     * no clock readings, no device-side checks. */
};

static const char *const ascend_aliases[] = {"npu", "huawei", "cann", NULL};
static const char *const ascend_also_env[] = {"NPU_VISIBLE_DEVICES", NULL};

/* Capture refusals (107024-107045, 507903; 207000 not supported) leave the
 * context usable; AI Core, AI CPU, vector core, DMA and memory faults are
 * fatal; a lost heartbeat, an internal error or an aborted device or
 * stream leave the process unusable. */
static const zlb_classify_entry_t ascend_classify[] = {
    {107024, "ACL_ERROR_RT_CAPTURE_DEPENDENCY", ZLB_VERDICT_REFUSED},
    {107025, "ACL_ERROR_RT_STREAM_UNJOINED", ZLB_VERDICT_REFUSED},
    {107026, "ACL_ERROR_RT_MODEL_CAPTURED", ZLB_VERDICT_REFUSED},
    {107027, "ACL_ERROR_RT_STREAM_CAPTURED", ZLB_VERDICT_REFUSED},
    {107028, "ACL_ERROR_RT_EVENT_CAPTURED", ZLB_VERDICT_REFUSED},
    {107029, "ACL_ERROR_RT_STREAM_NOT_CAPTURED", ZLB_VERDICT_REFUSED},
    {107030, "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT", ZLB_VERDICT_REFUSED},
    {107031, "ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT", ZLB_VERDICT_REFUSED},
    {107032, "ACL_ERROR_STREAM_CAPTURE_CONFLICT", ZLB_VERDICT_REFUSED},
    {107033, "ACL_ERROR_STREAM_TASK_GROUP_STATUS", ZLB_VERDICT_REFUSED},
    {107034, "ACL_ERROR_STREAM_TASK_GROUP_INTR", ZLB_VERDICT_REFUSED},
    {107036, "ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED", ZLB_VERDICT_REFUSED},
    {107038, "ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD", ZLB_VERDICT_REFUSED},
    {107040, "ACL_ERROR_RT_MODEL_UPDATE_FAILED", ZLB_VERDICT_REFUSED},
    {107041, "ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC", ZLB_VERDICT_REFUSED},
    {107045, "ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING", ZLB_VERDICT_REFUSED},
    {507903, "ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED", ZLB_VERDICT_REFUSED},
    {207000, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT", ZLB_VERDICT_REFUSED},
    {507011, "ACL_ERROR_RT_MODEL_EXECUTE", ZLB_VERDICT_FATAL},
    {507013, "ACL_ERROR_RT_SYS_DMA", ZLB_VERDICT_FATAL},
    {507014, "ACL_ERROR_RT_AICORE_TIMEOUT", ZLB_VERDICT_FATAL},
    {507015, "ACL_ERROR_RT_AICORE_EXCEPTION", ZLB_VERDICT_FATAL},
    {507016, "ACL_ERROR_RT_AICORE_TRAP_EXCEPTION", ZLB_VERDICT_FATAL},
    {507017, "ACL_ERROR_RT_AICPU_TIMEOUT", ZLB_VERDICT_FATAL},
    {507018, "ACL_ERROR_RT_AICPU_EXCEPTION", ZLB_VERDICT_FATAL},
    {507034, "ACL_ERROR_RT_VECTOR_CORE_TIMEOUT", ZLB_VERDICT_FATAL},
    {507035, "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION", ZLB_VERDICT_FATAL},
    {507036, "ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION", ZLB_VERDICT_FATAL},
    {507042, "ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW", ZLB_VERDICT_FATAL},
    {507043, "ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW", ZLB_VERDICT_FATAL},
    {507053, "ACL_ERROR_RT_DEVICE_MEM_ERROR", ZLB_VERDICT_FATAL},
    {507054, "ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR", ZLB_VERDICT_FATAL},
    {507010, "ACL_ERROR_RT_LOST_HEARTBEAT", ZLB_VERDICT_POISONED},
    {507000, "ACL_ERROR_RT_INTERNAL_ERROR", ZLB_VERDICT_POISONED},
    {107022, "ACL_ERROR_RT_DEVICE_TASK_ABORT", ZLB_VERDICT_POISONED},
    {107023, "ACL_ERROR_RT_STREAM_ABORT", ZLB_VERDICT_POISONED},
};

/* ASCEND_RT_VISIBLE_DEVICES: logical ids in ascending order, renumbered
 * from 0. NPU_VISIBLE_DEVICES (the container runtime's) is set beside it. */
const zlb_backend_desc_t zlb__backend_ascend = {
    .name = "ascend",
    .vendor = "Huawei",
    .aliases = ascend_aliases,
    .sonames = ascend_sonames,
    .visibility_env = "ASCEND_RT_VISIBLE_DEVICES",
    .also_env = ascend_also_env,
    .caps = ZLB_CAP_GRAPH | ZLB_CAP_EVENTS | ZLB_CAP_RNG_STATE | ZLB_CAP_ASYNC |
            ZLB_CAP_L2_FLUSH,
    .classify = ascend_classify,
    .nclassify = sizeof(ascend_classify) / sizeof(ascend_classify[0]),
    .flush_bytes = 192u << 20, /* Ascend's driver cache is 192 MiB */
    .vtbl = &acl_vtbl,
    .probe_in_auto = 1,
};
