/* Test-only operators whose case_init describes tensors the harness cannot
 * hold (rank above ZLB_MAX_DIMS, a negative extent, too many inputs, an
 * impossible size, a case larger than memory): each must give an
 * error=setup row naming the field, never a crash or an allocation. */
#include <stdio.h>
#include <string.h>

#include "test_int.h"

enum bad { B_NDIM, B_EXTENT, B_INPUTS, B_OUTPUTS, B_OVERFLOW, B_TOO_BIG, B_DTYPE };

/* A valid one-input copy case of n elements, then one field spoiled. */
static int init_bad(zlb_env_t *env, zlb_case_t *c, enum bad how) {
  int64_t n = c->shape.ndim ? c->shape.dims[0] : 16;
  (void)env;
  c->n_in = 1;
  c->in[0].name = "x";
  c->in[0].dtype = c->dtype;
  c->in[0].ndim = 1;
  c->in[0].dims[0] = n;
  c->in[0].fill = ZLB_FILL_NORMAL;
  c->n_out = 1;
  c->out[0][0] = c->in[0];
  c->out[0][0].name = "out";
  c->bytes = 2.0 * (double)n * (double)zlb_dtype_size(c->dtype);
  snprintf(c->detail, sizeof(c->detail), "[%lld], tag=bad", (long long)n);
  switch (how) {
  case B_NDIM:
    c->in[0].ndim = ZLB_MAX_DIMS + 1;
    break;
  case B_EXTENT:
    c->in[0].dims[0] = -20;
    break;
  case B_INPUTS:
    c->n_in = ZLB_MAX_TENSORS + 2;
    break;
  case B_OUTPUTS:
    c->n_out = 0;
    break;
  case B_OVERFLOW:
    c->out[0][0].ndim = 3;
    c->out[0][0].dims[0] = c->out[0][0].dims[1] = c->out[0][0].dims[2] = (int64_t)1 << 30;
    break;
  case B_TOO_BIG: /* valid, but 2^45 bytes: no machine has that */
    c->in[0].dims[0] = (int64_t)1 << 43;
    c->out[0][0].dims[0] = (int64_t)1 << 43;
    break;
  case B_DTYPE:
    c->out[0][0].dtype = (zlb_dtype_t)1000;
    break;
  }
  return 0;
}

/* Never reached for a rejected case: the test fails loudly if it is. */
static int enqueue_bad(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  (void)c;
  (void)which;
  (void)stream;
  snprintf(env->errbuf, env->errlen, "enqueue reached for a case the harness should reject");
  return ZLB_EOP;
}

#define BAD_OP(NAME, HOW)                                                        \
  static int init_##NAME(zlb_env_t *env, zlb_case_t *c) {                        \
    return init_bad(env, c, HOW);                                                \
  }                                                                              \
  ZLB_TEST_OP_DESC(NAME, "test", ZLB_DT_FLOATS,                                  \
                   "test operator " #NAME ": case_init describes a bad case", init_##NAME, \
                   enqueue_bad, NULL, enqueue_bad)

BAD_OP(bad_ndim, B_NDIM)
BAD_OP(bad_extent, B_EXTENT)
BAD_OP(bad_inputs, B_INPUTS)
BAD_OP(bad_outputs, B_OUTPUTS)
BAD_OP(bad_overflow, B_OVERFLOW)
BAD_OP(bad_too_big, B_TOO_BIG)
BAD_OP(bad_dtype, B_DTYPE)

int zlb_test_register_bad_cases(zlb_op_registrar_t *r) {
  const zlb_op_t *all[] = {&op_bad_ndim,     &op_bad_extent, &op_bad_inputs, &op_bad_outputs,
                           &op_bad_overflow, &op_bad_too_big, &op_bad_dtype};
  int rc = 0;
  for (size_t i = 0; !rc && i < sizeof(all) / sizeof(all[0]); i++)
    rc = r->add_op(r, all[i]);
  return rc;
}
