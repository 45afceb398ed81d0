/* Kernel-only execution times on ROCm from roctracer's activity API
 * (libroctracer64 loaded with dlopen, never linked): every kernel dispatch
 * of the traced interval with its begin and end, in the clock that
 * roctracer_get_timestamp reads.
 *
 * No record layout is trusted that differs between versions: the library
 * must say it is roctracer 4.1 (roctracer_api.h lists the sources that
 * layout was checked against); any other version leaves the backend without
 * a tracer, with a reason naming the version. Every record is checked
 * before it is used (domain, op, begin <= end, a plausible length, whole
 * records in the buffer); one that fails is dropped and counted, and a
 * traced interval that dropped any fails, since its kernels are incomplete. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_int.h"
#include "hip_int.h"
#include "roctracer_api.h"
#include "zlbench/base.h"

/* The offsets read, as activity_record_t has them on LP64 (roctracer 4.1). */
_Static_assert(offsetof(zroc_record_t, op) == 8, "activity_record_t.op");
_Static_assert(offsetof(zroc_record_t, begin_ns) == 24, "activity_record_t.begin_ns");
_Static_assert(offsetof(zroc_record_t, end_ns) == 32, "activity_record_t.end_ns");
_Static_assert(sizeof(zroc_record_t) == 64, "sizeof(activity_record_t)");

enum {
  /* One pool buffer: 16384 records before roctracer hands it over. */
  BUFFER_BYTES = 1 << 20,
  /* Spans kept per traced interval: the trace timer's chunks hold far
   * fewer kernels; beyond it records are dropped (and counted). */
  MAX_SPANS = 1 << 20
};
/* No benchmarked kernel runs for an hour: a longer span is a bad record. */
#define MAX_SPAN_NS (3600ull * 1000000000ull)

static struct {
#define X(field, sym, ret, params) ret(*field) params;
  ZROC_ENTRY_POINTS(X)
#undef X
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static zlb_error_t load_error = ZLB_ERROR_INIT;
static const char *hip_lib; /* the HIP runtime loaded; set before `once` runs */
static zroc_pool_t *pool;   /* opened at the first trace_begin, kept open */

/* The collection, written by roctracer's buffer callback (its own thread, or
 * inside roctracer_flush_activity_expl). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static zlb_trace_span_t *spans;
static size_t nspans, aspans;
static uint64_t since;     /* trace_begin's timestamp: older spans are stale */
static size_t ndropped;    /* records not trusted since trace_begin */
static char dropped_why[160];

static const char *const sonames[] = {"libroctracer64.so.4", "libroctracer64.so",
                                      "/opt/rocm/lib/libroctracer64.so.4",
                                      "/opt/rocm/lib/libroctracer64.so", NULL};

/* ROCm installs libroctracer64 beside libamdhip64: where HIP was loaded by
 * path, the tracer of that installation comes first. */
static const char *beside_hip(char *buf, size_t len) {
  const char *slash = hip_lib ? strrchr(hip_lib, '/') : NULL;
  int n;
  if (!slash)
    return NULL;
  n = snprintf(buf, len, "%.*slibroctracer64.so.4", (int)(slash - hip_lib + 1), hip_lib);
  return n > 0 && (size_t)n < len ? buf : NULL;
}

static void *open_library(const char **opened) {
  static char beside[4096];
  const char *names[sizeof(sonames) / sizeof(sonames[0]) + 1];
  size_t n = 0;
  zlb_error_t e = ZLB_ERROR_INIT;
  void *h;
  if (beside_hip(beside, sizeof(beside)))
    names[n++] = beside;
  for (size_t i = 0; sonames[i]; i++)
    names[n++] = sonames[i];
  names[n] = NULL;
  /* ZL_ROCTRACER_LIB names the one library instead (zlb__dlopen_first). */
  if (!(h = zlb__dlopen_first(names, "roctracer", opened, &e)))
    zlb_error_set(&load_error, ZLB_EUNAVAIL, "rocm has no kernel tracer: %s", e.msg);
  return h;
}

/* The version first: nothing else is bound from a library whose layout is
 * not the verified one. */
static int check_version(void *h, const char *lib) {
  uint32_t major, minor;
  zlb__bind(h, "roctracer_version_major", &api.version_major, sizeof(api.version_major));
  zlb__bind(h, "roctracer_version_minor", &api.version_minor, sizeof(api.version_minor));
  if (!api.version_major || !api.version_minor)
    return zlb_error_set(&load_error, ZLB_EUNAVAIL,
                         "rocm has no kernel tracer: %s lacks '%s' (missing symbol)", lib,
                         api.version_major ? "roctracer_version_minor"
                                           : "roctracer_version_major");
  major = api.version_major();
  minor = api.version_minor();
  if (major != ZROC_VERSION_MAJOR || minor != ZROC_VERSION_MINOR)
    return zlb_error_set(&load_error, ZLB_EUNAVAIL,
                         "rocm has no kernel tracer: %s is roctracer %u.%u, and only "
                         "roctracer %d.%d's activity records (ROCm 5.3 to 6.x) are trusted",
                         lib, major, minor, ZROC_VERSION_MAJOR, ZROC_VERSION_MINOR);
  return 0;
}

static void load(void) {
  const char *lib = NULL, *missing = NULL;
  void *h = open_library(&lib);
  if (!h || check_version(h, lib))
    return;
#define X(field, sym, ret, params)                                              \
  zlb__bind(h, #sym, &api.field, sizeof(api.field));                            \
  if (!api.field && !missing)                                                   \
    missing = #sym;
  ZROC_ENTRY_POINTS(X)
#undef X
  if (missing)
    zlb_error_set(&load_error, ZLB_EUNAVAIL,
                  "rocm has no kernel tracer: %s lacks '%s' (missing symbol)", lib, missing);
}

int zlb__roctracer_open(const char *hip_runtime, zlb_error_t *err) {
  pthread_mutex_lock(&lock);
  if (!hip_lib)
    hip_lib = hip_runtime;
  pthread_mutex_unlock(&lock);
  pthread_once(&once, load);
  if (load_error.code) {
    if (err)
      *err = load_error;
    return load_error.code;
  }
  return 0;
}

static int fail(zlb_error_t *err, const char *call, int r) {
  const char *s = api.error_string();
  return zlb_error_set(err, ZLB_EDEVICE, "%s: %s (%d)", call, s && *s ? s : "roctracer error",
                       r);
}

/* Called with `lock` held. */
static void drop(size_t n, const char *why) {
  if (!ndropped)
    zlb_strlcpy(dropped_why, why, sizeof(dropped_why));
  ndropped += n;
}

/* Why a record cannot be a kernel's span, or NULL. */
static const char *untrusted(const zroc_record_t *r) {
  if (r->domain != ZROC_DOMAIN_HIP_OPS)
    return "a record outside the HIP ops domain";
  if (r->op != ZROC_HIP_OP_DISPATCH)
    return "a HIP ops record that is not a kernel dispatch";
  if (!r->begin_ns || r->end_ns < r->begin_ns)
    return "a kernel that ends before it begins";
  if (r->end_ns - r->begin_ns > MAX_SPAN_NS)
    return "a kernel of more than an hour";
  return NULL;
}

/* Called with `lock` held. */
static void take(const zroc_record_t *r) {
  const char *why = untrusted(r);
  if (why) {
    drop(1, why);
    return;
  }
  if (r->begin_ns < since)
    return; /* delivered late from before trace_begin: not this interval's */
  if (nspans == MAX_SPANS) {
    drop(1, "more kernels than one traced interval keeps");
    return;
  }
  if (nspans == aspans) {
    aspans = aspans ? aspans * 2 : 4096;
    spans = zlb_xrealloc(spans, aspans * sizeof(*spans));
  }
  spans[nspans].start = r->begin_ns;
  spans[nspans].end = r->end_ns;
  spans[nspans].stream = 0; /* not read from the record: no side-stream check */
  nspans++;
}

/* roctracer's buffer callback: [begin, end) holds whole records. */
static void on_buffer(const char *begin, const char *end, void *arg) {
  const char *p = begin;
  (void)arg;
  pthread_mutex_lock(&lock);
  if (!begin || end < begin || (size_t)(end - begin) % sizeof(zroc_record_t)) {
    drop(1, "a buffer that does not hold whole activity records");
    pthread_mutex_unlock(&lock);
    return;
  }
  while (p < end) {
    const zroc_record_t *next = NULL;
    zroc_record_t r;
    /* The step must be one record of the verified size: otherwise the
     * library's layout is not ours, and no later record is read. */
    if (api.next_record((const zroc_record_t *)(const void *)p, &next) != ZROC_STATUS_SUCCESS ||
        (const char *)next != p + sizeof(r)) {
      drop((size_t)(end - p) / sizeof(r), "roctracer_next_record stepped by another size");
      break;
    }
    memcpy(&r, p, sizeof(r)); /* the buffer's alignment is roctracer's */
    take(&r);
    p = (const char *)next;
  }
  pthread_mutex_unlock(&lock);
}

static int open_pool(zlb_error_t *err) {
  zroc_properties_t props;
  int r;
  if (pool)
    return 0;
  memset(&props, 0, sizeof(props));
  props.buffer_size = BUFFER_BYTES;
  props.buffer_callback_fun = on_buffer;
  if ((r = api.open_pool(&props, &pool)) != ZROC_STATUS_SUCCESS) {
    pool = NULL;
    return fail(err, "roctracer_open_pool_expl", r);
  }
  return 0;
}

int zlb__roctracer_begin(zlb_error_t *err) {
  uint64_t t0;
  int r, rc;
  if ((rc = open_pool(err)))
    return rc;
  /* Records still buffered from an earlier interval arrive now, and are
   * then discarded with the rest. */
  if ((r = api.flush(pool)) != ZROC_STATUS_SUCCESS)
    return fail(err, "roctracer_flush_activity_expl", r);
  if ((r = api.timestamp(&t0)) != ZROC_STATUS_SUCCESS)
    return fail(err, "roctracer_get_timestamp", r);
  pthread_mutex_lock(&lock);
  nspans = 0;
  ndropped = 0;
  since = t0;
  pthread_mutex_unlock(&lock);
  if ((r = api.enable_op(ZROC_DOMAIN_HIP_OPS, ZROC_HIP_OP_DISPATCH, pool)) !=
      ZROC_STATUS_SUCCESS)
    return fail(err, "roctracer_enable_op_activity_expl", r);
  return 0;
}

int zlb__roctracer_now(uint64_t *ns, zlb_error_t *err) {
  int r = api.timestamp(ns);
  return r == ZROC_STATUS_SUCCESS ? 0 : fail(err, "roctracer_get_timestamp", r);
}

/* Flush before disabling: the interval's kernels have completed (the
 * caller synchronised), and their records must not wait for a full buffer. */
int zlb__roctracer_end(zlb_trace_span_t **out, size_t *n, zlb_error_t *err) {
  int r = api.flush(pool);
  int r2 = api.disable_op(ZROC_DOMAIN_HIP_OPS, ZROC_HIP_OP_DISPATCH);
  int rc = 0;
  *out = NULL;
  *n = 0;
  if (r != ZROC_STATUS_SUCCESS)
    return fail(err, "roctracer_flush_activity_expl", r);
  if (r2 != ZROC_STATUS_SUCCESS)
    return fail(err, "roctracer_disable_op_activity", r2);
  pthread_mutex_lock(&lock);
  if (ndropped) {
    rc = zlb_error_set(err, ZLB_EDEVICE,
                       "roctracer: %zu activity record(s) of the traced interval were dropped "
                       "as untrusted (the first: %s); its kernel times would be incomplete",
                       ndropped, dropped_why);
  } else {
    *out = zlb_xmalloc((nspans ? nspans : 1) * sizeof(**out));
    if (nspans)
      memcpy(*out, spans, nspans * sizeof(**out));
    *n = nspans;
  }
  nspans = 0;
  ndropped = 0;
  pthread_mutex_unlock(&lock);
  return rc;
}
