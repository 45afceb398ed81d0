/* Operators whose candidate games the benchmark, for `zlbench run
 * --integrity` (docs/integrity.md): each passes the accuracy check of its
 * first call and must be caught later.
 *
 *   cheat_cache   keeps its result keyed by the input's address and hands
 *                 it back whenever that address comes again (stale once the
 *                 input's values change in place);
 *   cheat_skip    computes on its first call for an output and skips every
 *                 later call;
 *   cheat_stream  computes, but its "kernel" runs on a stream of its own
 *                 (reported to the test backend's tracer as such);
 *   cheat_rate    computes honestly but declares a million times the bytes
 *                 it moves;
 *   honest_copy   computes every call, reporting its kernel on the stream
 *                 it is given (the control).
 */
#include <stdlib.h>
#include <string.h>

#include "test_int.h"

/* A tracer stream id no test stream has (those count up from 1). */
#define SIDE_STREAM_ID 0x51de5u

static size_t nbytes(const zlb_tensor_t *t) { return (size_t)t->numel * zlb_dtype_size(t->dtype); }

static int cheat_init(zlb_env_t *env, zlb_case_t *c) {
  (void)env;
  zlb_test_copy_case(c, NULL, ZLB_CHECK_EXACT);
  return 0;
}

static int rate_init(zlb_env_t *env, zlb_case_t *c) {
  (void)env;
  zlb_test_copy_case(c, NULL, ZLB_CHECK_EXACT);
  c->bytes *= 1e6;
  return 0;
}

static int copy(zlb_case_t *c, int which, void *stream) {
  zlb_test_stream_enqueue(stream);
  memcpy(c->out[which][0].data, c->in[0].data, nbytes(&c->in[0]));
  return 0;
}

static int base_copy(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  (void)env;
  return copy(c, which, stream);
}

static int honest_copy(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  (void)env;
  zlb_test_trace_kernel(((struct test_stream *)stream)->id, 1000);
  return copy(c, which, stream);
}

/* One cached result per input address (the last few). */
#define CACHE_SLOTS 8
static struct {
  const void *in;
  size_t n;
  void *result;
} cache[CACHE_SLOTS];

static int cache_copy(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const void *in = c->in[0].data;
  size_t n = nbytes(&c->in[0]);
  int i;
  (void)env;
  zlb_test_stream_enqueue(stream);
  for (i = 0; i < CACHE_SLOTS; i++)
    if (cache[i].in == in && cache[i].n == n) {
      memcpy(c->out[which][0].data, cache[i].result, n); /* the stale result */
      return 0;
    }
  for (i = 0; i < CACHE_SLOTS && cache[i].in; i++)
    ;
  if (i == CACHE_SLOTS) {
    free(cache[0].result);
    memmove(cache, cache + 1, sizeof(cache[0]) * (CACHE_SLOTS - 1));
    i = CACHE_SLOTS - 1;
  }
  memcpy(c->out[which][0].data, in, n);
  cache[i].result = malloc(n ? n : 1);
  if (!cache[i].result) {
    cache[i].in = NULL;
    return ZLB_ENOMEM;
  }
  memcpy(cache[i].result, in, n);
  cache[i].in = in;
  cache[i].n = n;
  return 0;
}

static int skip_copy(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  static const void *done;
  (void)env;
  zlb_test_stream_enqueue(stream);
  if (done == c->out[which][0].data)
    return 0; /* "already computed" */
  done = c->out[which][0].data;
  memcpy(c->out[which][0].data, c->in[0].data, nbytes(&c->in[0]));
  return 0;
}

static int stream_copy(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  (void)env;
  (void)stream;
  /* The work goes to a stream of the candidate's own: nothing is enqueued
   * on the one it was given. */
  zlb_test_trace_kernel(SIDE_STREAM_ID, 1000);
  memcpy(c->out[which][0].data, c->in[0].data, nbytes(&c->in[0]));
  return 0;
}

#define F32 ZLB_DT_BIT(ZLB_DT_FLOAT32)
ZLB_TEST_OP_DESC(cheat_cache, "test", F32, "candidate caches its result by input address",
                 cheat_init, base_copy, NULL, cache_copy)
ZLB_TEST_OP_DESC(cheat_skip, "test", F32, "candidate computes on its first call only",
                 cheat_init, base_copy, NULL, skip_copy)
ZLB_TEST_OP_DESC(cheat_stream, "test", F32, "candidate works on a stream of its own",
                 cheat_init, base_copy, NULL, stream_copy)
ZLB_TEST_OP_DESC(cheat_rate, "test", F32, "case declares a million times its bytes", rate_init,
                 base_copy, NULL, base_copy)
ZLB_TEST_OP_DESC(honest_copy, "test", F32, "candidate copies on the stream it is given",
                 cheat_init, base_copy, NULL, honest_copy)

int zlb_test_register_cheats(zlb_op_registrar_t *r) {
  const zlb_op_t *all[] = {&op_cheat_cache, &op_cheat_skip, &op_cheat_stream, &op_cheat_rate,
                           &op_honest_copy};
  int rc = 0;
  for (size_t i = 0; !rc && i < sizeof(all) / sizeof(all[0]); i++)
    rc = r->add_op(r, all[i]);
  return rc;
}
