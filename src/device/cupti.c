/* Kernel-only execution times from CUPTI's activity API (libcupti loaded
 * with dlopen): every kernel of the traced interval with its start and end
 * on the GPU, whatever launch gaps lay between them. The record layout is
 * declared here: CUpti_ActivityKernel4 through 10 all keep `start` at byte
 * 16 and `end` at byte 24 (checked against CUDA 13's cupti_activity.h).
 *
 * CUPTI is one per process and its activity state is global: the buffer
 * callbacks (cuptiActivityRegisterCallbacks), the enabled activity kinds
 * and the one callback subscriber (cuptiSubscribe). Another client in the
 * process (torch.profiler's kineto, Nsight) registers its own callbacks,
 * enables and disables kinds, and may detach CUPTI altogether
 * (cuptiFinalize, kineto's teardown after a profile), which forgets ours.
 * So every traced interval:
 *   - takes the subscriber slot for its length (cuptiSubscribe): taken
 *     already means another client is active, and the interval is refused,
 *     touching nothing of that client's;
 *   - registers our callbacks again and force-flushes what CUPTI still held
 *     (records from before the interval, maybe another client's buffers:
 *     dropped, and a buffer we did not hand out is never freed or read);
 *   - enables the kernel kind, checking every return code;
 *   - at its end, force-flushes and checks that every buffer we handed out
 *     came back to us and none of another's came: otherwise another client
 *     took our records (or we its), and the interval is refused rather than
 *     summed from what is left;
 *   - keeps only kernels that started after the interval began (less a
 *     slack for the clock conversion). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_int.h"
#include "device_int.h"
#include "zlbench/base.h"

enum {
  CUPTI_SUCCESS = 0,
  CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
  CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
  KIND_KERNEL = 3,
  KIND_CONCURRENT_KERNEL = 10,
  FLUSH_FORCED = 1,
  RECORD_START = 16,
  RECORD_END = 24,
  RECORD_STREAM = 48, /* streamId, after deviceId (40) and contextId (44) */
  BUFFER_BYTES = 8 << 20
};
/* A kernel that starts this long before the interval began is not ours
 * (CUPTI's device-to-host clock conversion is good to microseconds). */
#define WINDOW_SLACK_NS 1000000ull

#define FOREIGN_CLIENT                                                                   \
  "another CUPTI client (e.g. torch.profiler) is active in this process; use --timer "   \
  "graph (timer=\"graph\" in Python) or run the trace timer in a fresh process"

typedef int CUptiResult;
typedef void (*request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*complete_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                            size_t valid);
typedef void (*callback_fn)(void *userdata, int domain, uint32_t cbid, const void *data);

static struct {
  CUptiResult (*enable)(int kind);
  CUptiResult (*disable)(int kind);
  CUptiResult (*register_callbacks)(request_fn, complete_fn);
  CUptiResult (*flush_all)(uint32_t flag);
  CUptiResult (*next_record)(uint8_t *buffer, size_t valid, void **record);
  CUptiResult (*timestamp)(uint64_t *ts);
  CUptiResult (*result_string)(CUptiResult r, const char **s);
  /* Optional: without them the subscriber check is skipped. */
  CUptiResult (*subscribe)(void **subscriber, callback_fn cb, void *userdata);
  CUptiResult (*unsubscribe)(void *subscriber);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static zlb_error_t load_error = ZLB_ERROR_INIT;
/* Everything below is shared with CUPTI's threads: under `lock`. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static zlb_trace_span_t *spans;
static size_t nspans, aspans;
static uint8_t **ours;     /* buffers handed to CUPTI and not yet back */
static size_t nours, aours;
static size_t foreign;     /* buffers CUPTI gave us that we never handed out */
static int collecting;     /* 0 while draining before an interval: records dropped */
static uint64_t window_lo; /* kernels starting before this are not ours */
static size_t early;       /* kernels dropped for starting before window_lo */
static void *subscriber;   /* held for the interval's length */

static const char *const sonames[] = {
    "libcupti.so.13", "libcupti.so.12", "libcupti.so",
    "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
    "/usr/local/cuda/lib64/libcupti.so.12", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12",
    NULL};

static void load(void) {
  void *h = zlb__dlopen_first(sonames, "cuda (CUPTI)", NULL, &load_error);
  if (!h)
    return;
#define B(field, sym)                                                            \
  zlb__bind(h, sym, &api.field, sizeof(api.field));                              \
  if (!api.field) {                                                              \
    zlb_error_set(&load_error, ZLB_EUNAVAIL, "libcupti lacks '%s'", sym);        \
    return;                                                                      \
  }
  B(enable, "cuptiActivityEnable")
  B(disable, "cuptiActivityDisable")
  B(register_callbacks, "cuptiActivityRegisterCallbacks")
  B(flush_all, "cuptiActivityFlushAll")
  B(next_record, "cuptiActivityGetNextRecord")
  B(timestamp, "cuptiGetTimestamp")
  B(result_string, "cuptiGetResultString")
#undef B
  zlb__bind(h, "cuptiSubscribe", &api.subscribe, sizeof(api.subscribe));
  zlb__bind(h, "cuptiUnsubscribe", &api.unsubscribe, sizeof(api.unsubscribe));
  if (!api.subscribe || !api.unsubscribe)
    api.subscribe = NULL, api.unsubscribe = NULL;
}

static int fail(zlb_error_t *err, const char *call, CUptiResult r) {
  const char *s = NULL;
  if (api.result_string)
    api.result_string(r, &s);
  return zlb_error_vendor(err, ZLB_EDEVICE, r, "CUPTI_ERROR", "%s: %s (%d)", call,
                          s ? s : "CUPTI error", r);
}

static void on_request(uint8_t **buffer, size_t *size, size_t *max_records) {
  void *p = NULL;
  if (posix_memalign(&p, 8, BUFFER_BYTES) != 0)
    p = NULL;
  if (p) {
    pthread_mutex_lock(&lock);
    if (nours == aours) {
      aours = aours ? aours * 2 : 16;
      ours = zlb_xrealloc(ours, aours * sizeof(*ours));
    }
    ours[nours++] = p;
    pthread_mutex_unlock(&lock);
  }
  *buffer = p;
  *size = p ? BUFFER_BYTES : 0;
  *max_records = 0;
}

/* Runs on a CUPTI thread or inside flush_all: collect kernel spans from
 * our own buffers. A buffer we did not hand out is another client's (its
 * callbacks were replaced by ours while CUPTI held it): neither read nor
 * freed, only counted. */
static void on_complete(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                        size_t valid) {
  void *rec = NULL;
  size_t i;
  (void)ctx;
  (void)stream;
  (void)size;
  pthread_mutex_lock(&lock);
  for (i = 0; i < nours && ours[i] != buffer; i++)
    ;
  if (!buffer || i == nours) {
    if (collecting)
      foreign++;
    pthread_mutex_unlock(&lock);
    return;
  }
  ours[i] = ours[--nours];
  while (collecting && api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
    uint32_t kind;
    zlb_trace_span_t sp;
    memcpy(&kind, rec, sizeof(kind));
    if (kind != KIND_KERNEL && kind != KIND_CONCURRENT_KERNEL)
      continue;
    memcpy(&sp.start, (const char *)rec + RECORD_START, 8);
    memcpy(&sp.end, (const char *)rec + RECORD_END, 8);
    memcpy(&sp.stream, (const char *)rec + RECORD_STREAM, 4);
    if (sp.start < window_lo || sp.end < sp.start) {
      early++;
      continue;
    }
    if (nspans == aspans) {
      aspans = aspans ? aspans * 2 : 4096;
      spans = zlb_xrealloc(spans, aspans * sizeof(*spans));
    }
    spans[nspans++] = sp;
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

/* The subscriber's callback: no callback is enabled, so it is never called. */
static void on_callback(void *userdata, int domain, uint32_t cbid, const void *data) {
  (void)userdata;
  (void)domain;
  (void)cbid;
  (void)data;
}

static void release_subscriber(void) {
  if (subscriber && api.unsubscribe)
    api.unsubscribe(subscriber);
  subscriber = NULL;
}

int zlb__cupti_begin(zlb_error_t *err) {
  CUptiResult r;
  uint64_t now = 0;
  pthread_once(&once, load);
  if (load_error.code) {
    if (err)
      *err = load_error;
    return load_error.code;
  }
  /* The subscriber slot: CUPTI has one. Held by another client, nothing
   * of CUPTI's global state is touched (that client's callbacks and
   * kinds stay as they are). */
  if (api.subscribe && !subscriber) {
    r = api.subscribe(&subscriber, on_callback, NULL);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      subscriber = NULL;
      return zlb_error_set(err, ZLB_EUNAVAIL,
                           "trace timer: " FOREIGN_CLIENT
                           " (cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; "
                           "Nsight Systems, Nsight Compute and cuda-gdb hold it too)");
    }
    if (r != CUPTI_SUCCESS) {
      subscriber = NULL;
      return fail(err, "cuptiSubscribe", r);
    }
  }
  /* Our callbacks again, every time: another client may have replaced
   * them, or detached CUPTI (which forgets them). */
  if ((r = api.register_callbacks(on_request, on_complete)) != CUPTI_SUCCESS) {
    release_subscriber();
    return fail(err, "cuptiActivityRegisterCallbacks", r);
  }
  /* What CUPTI still holds is from before this interval: dropped. */
  pthread_mutex_lock(&lock);
  collecting = 0;
  pthread_mutex_unlock(&lock);
  if ((r = api.flush_all(FLUSH_FORCED)) != CUPTI_SUCCESS) {
    release_subscriber();
    return fail(err, "cuptiActivityFlushAll", r);
  }
  if ((r = api.timestamp(&now)) != CUPTI_SUCCESS) {
    release_subscriber();
    return fail(err, "cuptiGetTimestamp", r);
  }
  pthread_mutex_lock(&lock);
  /* Ours that did not come back went to another client's callbacks
   * before this interval: lost, and not ours to wait for. */
  nours = 0;
  nspans = 0;
  foreign = 0;
  early = 0;
  window_lo = now > WINDOW_SLACK_NS ? now - WINDOW_SLACK_NS : 0;
  collecting = 1;
  pthread_mutex_unlock(&lock);
  if ((r = api.enable(KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS) {
    release_subscriber();
    return fail(err, "cuptiActivityEnable", r);
  }
  return 0;
}

int zlb__cupti_now(uint64_t *ns, zlb_error_t *err) {
  CUptiResult r = api.timestamp(ns);
  return r == CUPTI_SUCCESS ? 0 : fail(err, "cuptiGetTimestamp", r);
}

int zlb__cupti_end(zlb_trace_span_t **out, size_t *n, zlb_error_t *err) {
  CUptiResult r = api.flush_all(FLUSH_FORCED);
  size_t lost, theirs;
  api.disable(KIND_CONCURRENT_KERNEL);
  release_subscriber();
  *out = NULL;
  *n = 0;
  if (r != CUPTI_SUCCESS)
    return fail(err, "cuptiActivityFlushAll", r);
  pthread_mutex_lock(&lock);
  collecting = 0;
  lost = nours;
  theirs = foreign;
  if (!lost && !theirs) {
    *out = zlb_xmalloc((nspans ? nspans : 1) * sizeof(**out));
    memcpy(*out, spans, nspans * sizeof(**out));
    *n = nspans;
  }
  nspans = 0;
  nours = 0;
  pthread_mutex_unlock(&lock);
  if (lost || theirs)
    return zlb_error_set(err, ZLB_EUNAVAIL,
                         "trace timer: " FOREIGN_CLIENT
                         " (%zu of the tracer's buffers did not come back after a forced "
                         "flush and %zu buffers it never handed out came to it: another "
                         "client's buffer callbacks replaced its own during the interval)",
                         lost, theirs);
  return 0;
}
