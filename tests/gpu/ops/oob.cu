/* Test-only CUDA operator library (libzlb_ops_gputest.so; `spin`, kernels
 * of known duration, is in spin.cu): `oob_write`,
 * whose candidate writes 1 TiB past its output so the device raises an
 * illegal-address fault (the harness must report a fatal device fault
 * instead of a result), and `off_by_one`, whose candidate copies all but
 * a few elements right (the accuracy check, on the device or the host,
 * must name the count and the first bad element). Baselines copy. */
#include "common.cuh"

namespace zlbc {
namespace {

__global__ void copy_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i];
}

/* Copies correctly, then thread 0 stores far outside any allocation. */
__global__ void oob_write_kernel(const float *__restrict__ x, float *y, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i];
  if (i == 0) {
    volatile float *far = reinterpret_cast<volatile float *>(
        reinterpret_cast<uintptr_t>(y) + ((uintptr_t)1 << 40));
    *far = 1.0f;
  }
}

int oob_case_init(zlb_env_t *env, zlb_case_t *c) {
  int64_t n = 0;
  ZLBC_TRY(shape_numel(env, c, "oob_write", &n));
  if (c->dtype != ZLB_DT_FLOAT32)
    return errf(env, ZLB_EINVAL, "oob_write: float32 only");
  const zlb_shape_t *s = &c->shape;
  c->n_in = 1;
  tensor_set(&c->in[0], "x", ZLB_DT_FLOAT32, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
  c->n_out = 1;
  tensor_set(&c->out[ZLB_BASELINE][0], "out", ZLB_DT_FLOAT32, s->ndim, s->dims, ZLB_FILL_NONE, 0, 0);
  c->bytes = 8.0 * (double)n;
  c->flops = 0;
  c->check = ZLB_CHECK_EXACT;
  c->detail[0] = 0;
  fmt_dims(c->detail, sizeof c->detail, s->ndim, s->dims);
  return 0;
}

template <bool BAD> int oob_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  (void)cudaGetLastError();
  const int64_t n = numel_of(&c->out[which][0]);
  const float *x = static_cast<const float *>(c->in[0].data);
  float *y = static_cast<float *>(c->out[which][0].data);
  const unsigned blocks = (unsigned)ceil_div(n, 256);
  if (BAD) {
    oob_write_kernel<<<blocks, 256, 0, as_stream(stream)>>>(x, y, n);
    ZLBC_LAUNCHED(env, "oob_write_kernel");
  } else {
    copy_kernel<<<blocks, 256, 0, as_stream(stream)>>>(x, y, n);
    ZLBC_LAUNCHED(env, "copy_kernel");
  }
  return 0;
}

/* Copies, but adds 1 to every 1000th element from `first` on, and writes
 * a NaN at the last element. */
__global__ void off_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n,
                           int64_t first) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = i == n - 1 ? __int_as_float(0x7fc00000) : x[i] + (i >= first && (i - first) % 1000 == 0);
}

template <bool BAD> int off_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  (void)cudaGetLastError();
  const int64_t n = numel_of(&c->out[which][0]);
  const float *x = static_cast<const float *>(c->in[0].data);
  float *y = static_cast<float *>(c->out[which][0].data);
  const unsigned blocks = (unsigned)ceil_div(n, 256);
  if (BAD) {
    off_kernel<<<blocks, 256, 0, as_stream(stream)>>>(x, y, n, n / 3);
    ZLBC_LAUNCHED(env, "off_kernel");
  } else {
    copy_kernel<<<blocks, 256, 0, as_stream(stream)>>>(x, y, n);
    ZLBC_LAUNCHED(env, "copy_kernel");
  }
  return 0;
}

int off_case_init(zlb_env_t *env, zlb_case_t *c) {
  int rc = oob_case_init(env, c);
  c->check = ZLB_CHECK_CLOSE;
  return rc;
}

const zlb_op_t kOffOp = ZLBC_OP("off_by_one", "unary_pointwise", ZLB_DT_BIT(ZLB_DT_FLOAT32),
                                "tensor extents",
                                "test only: the candidate is wrong at every 1000th element "
                                "of the last two thirds and NaN at the end",
                                &off_case_init, nullptr,
                                ZLBC_IMPL("ref", 0, nullptr, &off_enqueue<false>),
                                ZLBC_IMPL("off", 0, nullptr, &off_enqueue<true>));

const zlb_op_t kOobOp = ZLBC_OP("oob_write", "unary_pointwise", ZLB_DT_BIT(ZLB_DT_FLOAT32),
                                "tensor extents",
                                "test only: the candidate writes 1 TiB out of bounds",
                                &oob_case_init, nullptr,
                                ZLBC_IMPL("ref", 0, nullptr, &oob_enqueue<false>),
                                ZLBC_IMPL("oob", 0, nullptr, &oob_enqueue<true>));

} // namespace
} // namespace zlbc

ZLBC_HIDDEN int zlbt_register_spin(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbt_register_cheats(zlb_op_registrar_t *r); /* cheat.cu */

extern "C" ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r) {
  if (!r || r->abi_version != ZLB_OP_ABI_VERSION)
    return ZLB_EINVAL;
  int rc = r->add_op(r, &zlbc::kOobOp);
  if (!rc)
    rc = r->add_op(r, &zlbc::kOffOp);
  if (!rc)
    rc = zlbt_register_spin(r);
  return rc ? rc : zlbt_register_cheats(r);
}
