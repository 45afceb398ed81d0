/* Kernel-only execution times from CUPTI's activity API (libcupti loaded
 * with dlopen): every kernel of the traced interval with its start and end
 * on the GPU, whatever launch gaps lay between them. The record layout is
 * declared here: CUpti_ActivityKernel4 through 10 all keep `start` at byte
 * 16 and `end` at byte 24 (checked against CUDA 13's cupti_activity.h). */
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
  KIND_KERNEL = 3,
  KIND_CONCURRENT_KERNEL = 10,
  FLUSH_FORCED = 1,
  RECORD_START = 16,
  RECORD_END = 24,
  BUFFER_BYTES = 8 << 20
};

typedef int CUptiResult;
typedef void (*request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*complete_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                            size_t valid);

static struct {
  CUptiResult (*enable)(int kind);
  CUptiResult (*disable)(int kind);
  CUptiResult (*register_callbacks)(request_fn, complete_fn);
  CUptiResult (*flush_all)(uint32_t flag);
  CUptiResult (*next_record)(uint8_t *buffer, size_t valid, void **record);
  CUptiResult (*timestamp)(uint64_t *ts);
  CUptiResult (*result_string)(CUptiResult r, const char **s);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static zlb_error_t load_error = ZLB_ERROR_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static zlb_trace_span_t *spans;
static size_t nspans, aspans;
static int registered;

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
  *buffer = p;
  *size = p ? BUFFER_BYTES : 0;
  *max_records = 0;
}

/* Runs on a CUPTI thread or inside flush_all: collect kernel spans. */
static void on_complete(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                        size_t valid) {
  void *rec = NULL;
  (void)ctx;
  (void)stream;
  (void)size;
  pthread_mutex_lock(&lock);
  while (api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
    uint32_t kind;
    zlb_trace_span_t sp;
    memcpy(&kind, rec, sizeof(kind));
    if (kind != KIND_KERNEL && kind != KIND_CONCURRENT_KERNEL)
      continue;
    memcpy(&sp.start, (const char *)rec + RECORD_START, 8);
    memcpy(&sp.end, (const char *)rec + RECORD_END, 8);
    if (nspans == aspans) {
      aspans = aspans ? aspans * 2 : 4096;
      spans = zlb_xrealloc(spans, aspans * sizeof(*spans));
    }
    spans[nspans++] = sp;
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

int zlb__cupti_begin(zlb_error_t *err) {
  CUptiResult r;
  pthread_once(&once, load);
  if (load_error.code) {
    if (err)
      *err = load_error;
    return load_error.code;
  }
  if (!registered) {
    if ((r = api.register_callbacks(on_request, on_complete)) != CUPTI_SUCCESS)
      return fail(err, "cuptiActivityRegisterCallbacks", r);
    registered = 1;
  }
  pthread_mutex_lock(&lock);
  nspans = 0;
  pthread_mutex_unlock(&lock);
  if ((r = api.enable(KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS)
    return fail(err, "cuptiActivityEnable", r);
  return 0;
}

int zlb__cupti_now(uint64_t *ns, zlb_error_t *err) {
  CUptiResult r = api.timestamp(ns);
  return r == CUPTI_SUCCESS ? 0 : fail(err, "cuptiGetTimestamp", r);
}

int zlb__cupti_end(zlb_trace_span_t **out, size_t *n, zlb_error_t *err) {
  CUptiResult r = api.flush_all(FLUSH_FORCED);
  api.disable(KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS)
    return fail(err, "cuptiActivityFlushAll", r);
  pthread_mutex_lock(&lock);
  *out = zlb_xmalloc((nspans ? nspans : 1) * sizeof(**out));
  memcpy(*out, spans, nspans * sizeof(**out));
  *n = nspans;
  nspans = 0;
  pthread_mutex_unlock(&lock);
  return 0;
}
