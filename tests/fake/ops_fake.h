/* The test operators of every fake vendor runtime, one body for all
 * (included by ops_hip.c, ops_musa.c, ops_acl.c). Their "kernels" are host
 * functions launched on the stream the harness passes, so they run on the
 * fake's stream workers, in stream order, and are captured and replayed
 * like device work. Each call takes at least KERNEL_US so the timers have
 * something to measure.
 *
 *   fake_copy   out = x (any float dtype)
 *   fake_scale  out = 2 x (float32)
 *   fake_sync   the candidate synchronises its stream first (as an
 *               operator that reads a result on the host does): capture
 *               is refused
 *   fake_fault  the candidate writes past the end of its output: an
 *               asynchronous device fault (ZL_FAKE_FAULT says which)
 *
 * The including file defines FAKE_BACKEND (the backend's name),
 * FAKE_DEVICE (for the operators' docs) and the vendor's calls, each
 * returning the runtime's code and naming the call in *what:
 *   vendor_sync(stream, &what)                 synchronise the stream
 *   vendor_clear(stream, dst, bytes, &what)    zero `bytes` at dst, async
 *   vendor_launch(stream, fn, arg, &what)      enqueue fn(arg) */
#ifndef ZLB_TESTS_FAKE_OPS_FAKE_H
#define ZLB_TESTS_FAKE_OPS_FAKE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../ops/test_int.h" /* zlb_test_copy_case */
#include "zlbench/op.h"

#define KERNEL_US 20

enum kind { K_COPY, K_SCALE, K_SYNC, K_FAULT };

struct kernel {
  enum kind kind;
  void *dst;
  const void *src;
  size_t bytes;
  int64_t n;
};

/* Per case: the arguments of each implementation's kernel, alive until
 * the case is released (a captured graph replays them). */
struct fake_case {
  struct kernel k[2];
};

static void spin_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do
    clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void kernel(void *arg) {
  struct kernel *k = arg;
  if (k->kind == K_SCALE) {
    float *y = k->dst;
    const float *x = k->src;
    for (int64_t i = 0; i < k->n; i++)
      y[i] = 2.0f * x[i];
  } else {
    memcpy(k->dst, k->src, k->bytes);
  }
  spin_us(KERNEL_US);
}

static enum kind kind_of(const char *name) {
  return !strcmp(name, "fake_scale")  ? K_SCALE
         : !strcmp(name, "fake_sync") ? K_SYNC
         : !strcmp(name, "fake_fault") ? K_FAULT
                                        : K_COPY;
}

static int init(zlb_env_t *env, zlb_case_t *c, const char *name) {
  struct fake_case *fc;
  if (!(fc = calloc(1, sizeof(*fc)))) {
    snprintf(env->errbuf, env->errlen, "out of memory");
    return -1;
  }
  fc->k[0].kind = fc->k[1].kind = kind_of(name);
  c->priv = fc;
  zlb_test_copy_case(c, NULL, ZLB_CHECK_EXACT);
  return 0;
}

static void release_case(zlb_env_t *env, zlb_case_t *c) {
  (void)env;
  free(c->priv);
  c->priv = NULL;
}

static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
  struct kernel *k = &((struct fake_case *)c->priv)->k[which];
  (void)env;
  k->dst = c->out[which][0].data;
  k->src = c->in[0].data;
  k->n = c->in[0].numel;
  k->bytes = (size_t)c->in[0].numel * zlb_dtype_size(c->dtype);
  return 0;
}

static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  struct kernel *k = &((struct fake_case *)c->priv)->k[which];
  const char *what = "";
  int r;
  if (which == ZLB_CANDIDATE && k->kind == K_SYNC && (r = vendor_sync(stream, &what))) {
    snprintf(env->errbuf, env->errlen, "%s: %d", what, r);
    return r;
  }
  /* 1 MiB past the end of the output: an asynchronous device fault */
  if (which == ZLB_CANDIDATE && k->kind == K_FAULT &&
      (r = vendor_clear(stream, k->dst, k->bytes + (1u << 20), &what))) {
    snprintf(env->errbuf, env->errlen, "%s: %d", what, r);
    return r;
  }
  if ((r = vendor_launch(stream, kernel, k, &what))) {
    snprintf(env->errbuf, env->errlen, "%s: %d", what, r);
    return r;
  }
  return 0;
}

#define FAKE_OP(NAME, DTYPES, CAND_FLAGS, DOC)                                   \
  static int init_##NAME(zlb_env_t *env, zlb_case_t *c) { return init(env, c, #NAME); } \
  static const zlb_op_t op_##NAME = {                                          \
      .abi_version = ZLB_OP_ABI_VERSION,                                       \
      .name = #NAME,                                                           \
      .family = "test",                                                        \
      .backend = FAKE_BACKEND,                                                 \
      .dtypes = DTYPES,                                                        \
      .shape_desc = "N",                                                       \
      .doc = DOC,                                                              \
      .case_init = init_##NAME,                                                \
      .case_release = release_case,                                            \
      .baseline = {"ref", 0, prepare, enqueue, NULL},                          \
      .candidate = {"fake", CAND_FLAGS, prepare, enqueue, NULL},               \
  };

#define FLOATS ZLB_DT_FLOATS
FAKE_OP(fake_copy, FLOATS, 0, "copy on " FAKE_DEVICE)
FAKE_OP(fake_scale, ZLB_DT_BIT(ZLB_DT_FLOAT32), 0, "2 x on " FAKE_DEVICE)
FAKE_OP(fake_sync, FLOATS, ZLB_IMPL_NO_CAPTURE, "a candidate that synchronises its stream")
FAKE_OP(fake_fault, FLOATS, 0, "a candidate that writes past its output")

ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r);

ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r) {
  const zlb_op_t *all[] = {&op_fake_copy, &op_fake_scale, &op_fake_sync, &op_fake_fault};
  int rc = 0;
  for (size_t i = 0; !rc && i < sizeof(all) / sizeof(all[0]); i++)
    rc = r->add_op(r, all[i]);
  return rc;
}

#endif
