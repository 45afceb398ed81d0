/* A fake roctracer for tests: built as libroctracer64.so.4 beside the fake
 * libamdhip64.so.6 (where the ROCm backend looks first), exporting the
 * entry points the tracer binds with roctracer 4.1's signatures, codes and
 * record layout (declared once, in src/device/roctracer_api.h). While HIP
 * ops kernel dispatches are enabled, every host function the fake HIP runs
 * (a test operator's kernel) becomes one activity record, stamped in
 * CLOCK_MONOTONIC ns, which roctracer_get_timestamp reads too. Records go
 * to the pool's buffer callback when the buffer is full and at every flush.
 *
 * Environment:
 *   ZL_FAKE_ROCTRACER_VERSION=M.N   the version reported (default 4.1)
 *   ZL_FAKE_ROCTRACER_BAD=order|op  every record ends before it begins, or
 *                                   is a copy (HIP_OP_ID_COPY), not a kernel
 * Built with FAKE_ROCTRACER_OMIT_NEXT_RECORD: a library that lacks
 * roctracer_next_record (as roctracer 4.0's, where it was inline). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/roctracer_api.h"
#include "fake_core.h"

#define EXPORT __attribute__((visibility("default")))

/* roctracer_status_t codes the fake returns. */
enum { INVALID_DOMAIN = -2, INVALID_ARGUMENT = -3, NOT_IMPLEMENTED = -8 };
/* hipCommandKernel-like: HIP's command type, which the tracer ignores. */
#define KIND_KERNEL 0x11f0u

#define DECLARE(field, sym, ret, params) EXPORT ret sym params;
ZROC_ENTRY_POINTS(DECLARE)
#undef DECLARE

struct pool {
  zroc_properties_t props;
  char *buffer;
  size_t used; /* bytes of records in `buffer` */
};

/* One lock for the pool and the enabled op: held while records are
 * written and while a buffer is handed to the callback, so that a flush
 * returns with every record written before it delivered. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool *dispatch_pool; /* kernel dispatches enabled into it */
static uint64_t next_correlation = 1;
static const char *last_error = "";

static int fail(int code, const char *why) {
  last_error = why;
  return code;
}

static void version(uint32_t *major, uint32_t *minor) {
  const char *e = getenv("ZL_FAKE_ROCTRACER_VERSION");
  unsigned a = ZROC_VERSION_MAJOR, b = ZROC_VERSION_MINOR;
  if (e && *e && sscanf(e, "%u.%u", &a, &b) != 2) {
    a = ZROC_VERSION_MAJOR;
    b = ZROC_VERSION_MINOR;
  }
  *major = a;
  *minor = b;
}

uint32_t roctracer_version_major(void) {
  uint32_t major, minor;
  version(&major, &minor);
  return major;
}

uint32_t roctracer_version_minor(void) {
  uint32_t major, minor;
  version(&major, &minor);
  return minor;
}

const char *roctracer_error_string(void) { return last_error; }

int roctracer_get_timestamp(uint64_t *timestamp) {
  struct timespec ts;
  if (!timestamp)
    return fail(INVALID_ARGUMENT, "roctracer_get_timestamp: null timestamp");
  clock_gettime(CLOCK_MONOTONIC, &ts);
  *timestamp = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  return ZROC_STATUS_SUCCESS;
}

/* Called with `lock` held: hand the buffered records over, as roctracer's
 * consumer does, and start the buffer anew. */
static void deliver(struct pool *p) {
  if (!p->used)
    return;
  p->props.buffer_callback_fun(p->buffer, p->buffer + p->used, p->props.buffer_callback_arg);
  p->used = 0;
}

static void make_record(zroc_record_t *r, int device, uint64_t begin, uint64_t end) {
  const char *bad = getenv("ZL_FAKE_ROCTRACER_BAD");
  memset(r, 0, sizeof(*r));
  r->domain = ZROC_DOMAIN_HIP_OPS;
  r->kind = KIND_KERNEL;
  r->op = ZROC_HIP_OP_DISPATCH;
  r->correlation_id = next_correlation++;
  r->begin_ns = begin;
  r->end_ns = end;
  r->device_id = device;
  if (bad && !strcmp(bad, "order")) {
    r->begin_ns = end;
    r->end_ns = begin - 1;
  } else if (bad && !strcmp(bad, "op")) {
    r->op = ZROC_HIP_OP_COPY;
  }
}

/* fake_core's kernel hook, on a stream worker. */
static void on_kernel(int device, uint64_t begin, uint64_t end) {
  struct pool *p;
  pthread_mutex_lock(&lock);
  if ((p = dispatch_pool)) {
    zroc_record_t r;
    if (p->used + sizeof(r) > p->props.buffer_size)
      deliver(p);
    make_record(&r, device, begin, end);
    memcpy(p->buffer + p->used, &r, sizeof(r));
    p->used += sizeof(r);
  }
  pthread_mutex_unlock(&lock);
}

int roctracer_open_pool_expl(const zroc_properties_t *props, zroc_pool_t **pool) {
  struct pool *p;
  if (!props || !props->buffer_callback_fun || props->buffer_size < sizeof(zroc_record_t))
    return fail(INVALID_ARGUMENT, "roctracer_open_pool_expl: bad properties");
  if (!pool)
    return fail(NOT_IMPLEMENTED, "the fake roctracer has no default pool");
  if (props->alloc_fun)
    return fail(NOT_IMPLEMENTED, "the fake roctracer has no custom allocator");
  if (!(p = calloc(1, sizeof(*p))) || !(p->buffer = malloc(props->buffer_size))) {
    free(p);
    return fail(ZROC_STATUS_ERROR, "out of memory");
  }
  p->props = *props;
  *pool = p;
  return ZROC_STATUS_SUCCESS;
}

int roctracer_enable_op_activity_expl(uint32_t domain, uint32_t op, zroc_pool_t *pool) {
  if (domain != ZROC_DOMAIN_HIP_OPS)
    return fail(INVALID_DOMAIN, "the fake roctracer traces the HIP ops domain only");
  if (op != ZROC_HIP_OP_DISPATCH || !pool)
    return fail(INVALID_ARGUMENT, "the fake roctracer traces kernel dispatches only");
  pthread_mutex_lock(&lock);
  dispatch_pool = pool;
  pthread_mutex_unlock(&lock);
  zlFakeHipSetKernelHook(on_kernel);
  return ZROC_STATUS_SUCCESS;
}

int roctracer_disable_op_activity(uint32_t domain, uint32_t op) {
  if (domain != ZROC_DOMAIN_HIP_OPS)
    return fail(INVALID_DOMAIN, "the fake roctracer traces the HIP ops domain only");
  if (op != ZROC_HIP_OP_DISPATCH)
    return fail(INVALID_ARGUMENT, "the fake roctracer traces kernel dispatches only");
  pthread_mutex_lock(&lock);
  dispatch_pool = NULL;
  pthread_mutex_unlock(&lock);
  return ZROC_STATUS_SUCCESS;
}

int roctracer_flush_activity_expl(zroc_pool_t *pool) {
  if (!pool)
    return fail(NOT_IMPLEMENTED, "the fake roctracer has no default pool");
  pthread_mutex_lock(&lock);
  deliver(pool);
  pthread_mutex_unlock(&lock);
  return ZROC_STATUS_SUCCESS;
}

#ifndef FAKE_ROCTRACER_OMIT_NEXT_RECORD
int roctracer_next_record(const zroc_record_t *record, const zroc_record_t **next) {
  if (!record || !next)
    return fail(INVALID_ARGUMENT, "roctracer_next_record: null argument");
  *next = record + 1;
  return ZROC_STATUS_SUCCESS;
}
#endif
