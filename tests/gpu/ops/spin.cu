/* Test-only CUDA operator `spin`: one thread that spins on the device's
 * global nanosecond timer for the number of microseconds given as the
 * shape's one extent (shape [20]: a 20 us kernel), then copies one float.
 * Kernels of known duration for checking timers: a kernel cannot end
 * before its spin does, so a timer that reports less than the spin per
 * call is wrong, and one that reports much more measures something else
 * (launch latency, host overhead). Baseline and candidate are the same
 * kernel. */
#include "common.cuh"

namespace zlbc {
namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(const float *__restrict__ x, float *__restrict__ y,
                            unsigned long long ns) {
  const unsigned long long t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
  y[0] = x[0];
}

int spin_case_init(zlb_env_t *env, zlb_case_t *c) {
  const zlb_shape_t *s = &c->shape;
  if (c->dtype != ZLB_DT_FLOAT32)
    return errf(env, ZLB_EINVAL, "spin: float32 only");
  if (s->ndim != 1 || s->dims[0] < 1 || s->dims[0] > 10000000)
    return errf(env, ZLB_EINVAL, "spin: the shape is [microseconds], 1 to 10000000");
  c->n_in = 1;
  tensor_set1(&c->in[0], "x", ZLB_DT_FLOAT32, 1, ZLB_FILL_NORMAL, 0.0, 1.0);
  c->n_out = 1;
  tensor_set1(&c->out[ZLB_BASELINE][0], "out", ZLB_DT_FLOAT32, 1, ZLB_FILL_NONE, 0, 0);
  c->bytes = 8.0;
  c->flops = 0;
  c->check = ZLB_CHECK_EXACT;
  snprintf(c->detail, sizeof c->detail, "[%lld] us", (long long)s->dims[0]);
  return 0;
}

int spin_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  (void)cudaGetLastError();
  const float *x = static_cast<const float *>(c->in[0].data);
  float *y = static_cast<float *>(c->out[which][0].data);
  spin_kernel<<<1, 1, 0, as_stream(stream)>>>(x, y, (unsigned long long)c->shape.dims[0] * 1000ull);
  ZLBC_LAUNCHED(env, "spin_kernel");
  return 0;
}

const zlb_op_t kSpinOp = ZLBC_OP("spin", "test", ZLB_DT_BIT(ZLB_DT_FLOAT32), "[microseconds]",
                                 "test only: one thread spins for the shape's microseconds",
                                 &spin_case_init, nullptr, ZLBC_IMPL("ref", 0, nullptr, &spin_enqueue),
                                 ZLBC_IMPL("spin", 0, nullptr, &spin_enqueue));

} // namespace
} // namespace zlbc

ZLBC_HIDDEN int zlbt_register_spin(zlb_op_registrar_t *r) { return r->add_op(r, &zlbc::kSpinOp); }
