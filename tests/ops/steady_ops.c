/* Test operators with a steady running time, for testing `zlbench compare`:
 * each call copies its input, then spins until 50 us have passed since it
 * began (wall time; in a graph capture, the thread's CPU time), so its time
 * hardly depends on the machine's load (a preempted call is an outlier,
 * not a shift). Test-only fault injection: ZL_TEST_SLOWDOWN=OP:FACTOR
 * makes OP's candidate spin FACTOR times as long (steady_b:1.10 is 10 %
 * slower). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_int.h"

#define STEADY_NS 50000.0

/* The slowdown factor ZL_TEST_SLOWDOWN gives `op` (1 when none). */
static double slowdown(const char *op) {
  const char *v = getenv("ZL_TEST_SLOWDOWN"), *colon;
  size_t n = strlen(op);
  double f;
  if (!v || !(colon = strchr(v, ':')) || (size_t)(colon - v) != n || strncmp(v, op, n))
    return 1.0;
  f = strtod(colon + 1, NULL);
  return f >= 1.0 && f <= 100.0 ? f : 1.0;
}

static int steady_init(zlb_env_t *env, zlb_case_t *c) {
  (void)env;
  zlb_test_copy_case(c, NULL, ZLB_CHECK_EXACT);
  c->flops = 0;
  return 0;
}

static int steady_run(zlb_case_t *c, int which, void *stream, double factor) {
  /* On the stream's own clock (wall, or CPU time in a capture), so that a
   * call preempted during a capture still counts its whole spin. */
  const struct test_stream *ts = stream;
  unsigned long long until = zlb_test_stream_now_ns(ts) + (unsigned long long)(STEADY_NS * factor);
  const zlb_tensor_t *x = &c->in[0], *y = &c->out[which][0];
  zlb_test_stream_enqueue(stream);
  memcpy(y->data, x->data, (size_t)x->numel * zlb_dtype_size(x->dtype));
  while (zlb_test_stream_now_ns(ts) < until)
    ;
  return 0;
}

#define STEADY_OP(NAME)                                                              \
  static int base_##NAME(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {  \
    (void)env;                                                                       \
    return steady_run(c, which, stream, 1.0);                                        \
  }                                                                                  \
  static int cand_##NAME(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {  \
    (void)env;                                                                       \
    return steady_run(c, which, stream, slowdown(#NAME));                            \
  }                                                                                  \
  ZLB_TEST_OP_DESC(NAME, "test", ZLB_DT_BIT(ZLB_DT_FLOAT32), "steady test operator " #NAME, \
                   steady_init, base_##NAME, NULL, cand_##NAME)

STEADY_OP(steady_a)
STEADY_OP(steady_b)
STEADY_OP(steady_c)

int zlb_test_register_steady(zlb_op_registrar_t *r) {
  const zlb_op_t *all[] = {&op_steady_a, &op_steady_b, &op_steady_c};
  int rc = 0;
  for (size_t i = 0; !rc && i < sizeof(all) / sizeof(all[0]); i++)
    rc = r->add_op(r, all[i]);
  return rc;
}
