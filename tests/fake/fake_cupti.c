/* A fake libcupti.so.13 for the trace timer's CUPTI layer (src/device/
 * cupti.c) without a GPU: the activity API's global state as CUPTI keeps
 * it (one pair of buffer callbacks, the enabled kinds, one callback
 * subscriber, the buffer being filled), kernels "run" on request with
 * fake_cupti_kernel, and what another client in the process does
 * (torch.profiler's kineto) on request: take the subscriber slot, register
 * its own buffer callbacks, enable and disable kinds, leave a buffer in
 * CUPTI, detach CUPTI (cuptiFinalize). Records are 64 bytes: the kind at
 * byte 0, start at 16, end at 24 and the stream id at 48 (always 7), as in
 * CUpti_ActivityKernel*. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

enum { OK = 0, ERR_INVALID_PARAMETER = 1, ERR_MAX_LIMIT = 12, ERR_MULTIPLE = 39 };
enum { KIND_CONCURRENT_KERNEL = 10, RECORD = 64 };

typedef void (*request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*complete_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                            size_t valid);

/* CUPTI's entry points (their CUDA 13 signatures, types simplified to the
 * same sizes) and the test's controls. */
API int cuptiActivityRegisterCallbacks(request_fn req, complete_fn done);
API int cuptiActivityEnable(int kind);
API int cuptiActivityDisable(int kind);
API int cuptiActivityFlushAll(uint32_t flag);
API int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record);
API int cuptiGetTimestamp(uint64_t *ts);
API int cuptiGetResultString(int r, const char **s);
API int cuptiSubscribe(void **sub, void *cb, void *userdata);
API int cuptiUnsubscribe(void *sub);
API void fake_cupti_kernel_at(uint64_t ago_ns, uint64_t ns);
API void fake_cupti_kernel(uint64_t ns);
API void fake_cupti_foreign_profile(int subscribe, int flush, int finalize, int stay);
API void fake_cupti_foreign_register(void);
API int fake_cupti_subscribed(void);
API int fake_cupti_theirs_registered(void);
API int fake_cupti_theirs_completed(void);
API void fake_cupti_reset(void);

static struct {
  request_fn req;
  complete_fn done;
  int enabled;
  int subscribed;
  uint8_t *buf; /* being filled: handed out by `req` */
  size_t size, used;
} st;

/* The other client's buffers: static storage, so that freeing one (which
 * only its owner may do) is an invalid free under ASan. */
static uint8_t theirs[4][4096];
static int theirs_next, theirs_completed;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

API int cuptiActivityRegisterCallbacks(request_fn req, complete_fn done) {
  if (!req || !done)
    return ERR_INVALID_PARAMETER;
  st.req = req;
  st.done = done;
  return OK;
}

API int cuptiActivityEnable(int kind) {
  if (kind == KIND_CONCURRENT_KERNEL)
    st.enabled = 1;
  return OK;
}

API int cuptiActivityDisable(int kind) {
  if (kind == KIND_CONCURRENT_KERNEL)
    st.enabled = 0;
  return OK;
}

/* Forced or not, the buffer being filled goes to the complete callback
 * registered now (whoever handed it out). */
API int cuptiActivityFlushAll(uint32_t flag) {
  (void)flag;
  if (st.buf && st.done) {
    uint8_t *b = st.buf;
    st.buf = NULL;
    st.done(NULL, 0, b, st.size, st.used);
  }
  return OK;
}

API int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record) {
  size_t off = *record ? (size_t)((uint8_t *)*record - buffer) + RECORD : 0;
  if (off + RECORD > valid)
    return ERR_MAX_LIMIT;
  *record = buffer + off;
  return OK;
}

API int cuptiGetTimestamp(uint64_t *ts) {
  *ts = now_ns();
  return OK;
}

API int cuptiGetResultString(int r, const char **s) {
  *s = r == ERR_MULTIPLE ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" : "fake CUPTI error";
  return OK;
}

API int cuptiSubscribe(void **sub, void *cb, void *userdata) {
  (void)cb;
  (void)userdata;
  if (st.subscribed)
    return ERR_MULTIPLE;
  st.subscribed = 1;
  *sub = &st;
  return OK;
}

API int cuptiUnsubscribe(void *sub) {
  if (sub != &st || !st.subscribed)
    return ERR_INVALID_PARAMETER;
  st.subscribed = 0;
  return OK;
}

/* ---- the test's controls -------------------------------------------------------- */

/* A kernel of `ns` that starts `ago_ns` before now: recorded while the
 * kernel kind is enabled, into the buffer being filled (one is requested
 * from the callbacks registered now; none registered: the record is lost,
 * as CUPTI drops what it has no buffer for). */
API void fake_cupti_kernel_at(uint64_t ago_ns, uint64_t ns) {
  uint8_t rec[RECORD] = {0};
  uint32_t kind = KIND_CONCURRENT_KERNEL;
  uint64_t start = now_ns() - ago_ns, end = start + ns;
  size_t max = 0;
  if (!st.enabled)
    return;
  if (!st.buf) {
    if (!st.req)
      return;
    st.req(&st.buf, &st.size, &max);
    st.used = 0;
    if (!st.buf)
      return;
  }
  if (st.used + RECORD > st.size)
    return;
  memcpy(rec, &kind, 4);
  memcpy(rec + 16, &start, 8);
  memcpy(rec + 24, &end, 8);
  {
    uint32_t stream = 7;
    memcpy(rec + 48, &stream, 4);
  }
  memcpy(st.buf + st.used, rec, RECORD);
  st.used += RECORD;
}

API void fake_cupti_kernel(uint64_t ns) { fake_cupti_kernel_at(0, ns); }

static void their_request(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = theirs[theirs_next++ % 4];
  *size = sizeof(theirs[0]);
  *max_records = 0;
}

static void their_complete(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                           size_t valid) {
  (void)ctx, (void)stream, (void)size, (void)valid;
  theirs_completed++;
  /* Not one of its own: the other client drops it (kineto logs it and
   * keeps it; freed here so that the leak check stays quiet). */
  if (buffer < theirs[0] || buffer >= theirs[0] + sizeof(theirs))
    free(buffer);
}

/* Another client's profile, as kineto runs one: it subscribes (when
 * `subscribe`), registers its callbacks, enables the kernel kind, sees a
 * kernel; then it stops: disables the kind and, when `flush`, flushes
 * (else its buffer stays in CUPTI); when `finalize`, it detaches CUPTI,
 * which forgets every callback and subscriber; else it keeps its callbacks
 * registered and, when `stay`, its subscription. */
API void fake_cupti_foreign_profile(int subscribe, int flush, int finalize, int stay) {
  if (subscribe)
    st.subscribed = 1;
  st.req = their_request;
  st.done = their_complete;
  st.enabled = 1;
  fake_cupti_kernel(5000);
  st.enabled = 0;
  if (flush)
    cuptiActivityFlushAll(1);
  if (finalize) {
    memset(&st, 0, sizeof(st)); /* a held buffer is gone with CUPTI */
    return;
  }
  if (!stay)
    st.subscribed = 0;
}

/* Another client registers its callbacks now (a profiler started by
 * another thread). */
API void fake_cupti_foreign_register(void) {
  st.req = their_request;
  st.done = their_complete;
}

API int fake_cupti_subscribed(void) { return st.subscribed; }
API int fake_cupti_theirs_registered(void) { return st.done == their_complete; }
API int fake_cupti_theirs_completed(void) { return theirs_completed; }
API void fake_cupti_reset(void) {
  memset(&st, 0, sizeof(st));
  theirs_completed = 0;
}
