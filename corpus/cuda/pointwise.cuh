/* The pointwise machinery behind every unary, binary and ternary operator:
 * the baseline is CUB's cub::DeviceTransform over the operator's functor
 * (what a CUDA user would call for an elementwise op), the candidate a fast
 * kernel (16-byte vector loads, grid-stride over the SMs, scalar tail), and
 * a reference kernel (a thread per element, scalar loads) is the
 * candidate's path for unaligned pointers and the baseline where CUB is
 * not there (a HIP build); operators differ only by a functor on floats. */
#ifndef ZLB_CORPUS_CUDA_POINTWISE_CUH
#define ZLB_CORPUS_CUDA_POINTWISE_CUH

#include "common.cuh"

#if !defined(__HIP_PLATFORM_AMD__)
#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>
#define ZLBC_PW_VENDOR 1
#else
#define ZLBC_PW_VENDOR 0
#endif

/* An operator's functor runs on the device and, for the functor test
 * (tests/cuda/test_functors.cu), on the host. */
#define ZLBC_HD __host__ __device__

namespace zlbc {
namespace {

/* Up to three inputs of possibly different element types; unused ones
 * repeat T0 and stay NULL. */
template <int NIN, typename TO, typename T0, typename T1, typename T2, typename F>
struct PwArgs {
  TO *out;
  const T0 *a;
  const T1 *b;
  const T2 *c;
  int64_t n;
  F f;
};

template <int NIN, typename TO, typename T0, typename T1, typename T2, typename F>
__device__ __forceinline__ TO pw_apply(const F &f, T0 a, T1 b, T2 c) {
  if constexpr (NIN == 1)
    return from_f<TO>(f(to_f(a)));
  else if constexpr (NIN == 2)
    return from_f<TO>(f(to_f(a), to_f(b)));
  else
    return from_f<TO>(f(to_f(a), to_f(b), to_f(c)));
}

template <int NIN, typename TO, typename T0, typename T1, typename T2, typename F>
__device__ __forceinline__ void pw_scalar(const PwArgs<NIN, TO, T0, T1, T2, F> &p, int64_t i) {
  T0 a = p.a[i];
  T1 b{};
  T2 c{};
  if constexpr (NIN >= 2)
    b = p.b[i];
  if constexpr (NIN >= 3)
    c = p.c[i];
  p.out[i] = pw_apply<NIN, TO, T0, T1, T2, F>(p.f, a, b, c);
}

/* Reference: one thread per element. */
template <int NIN, typename TO, typename T0, typename T1, typename T2, typename F>
__global__ void __launch_bounds__(256) pw_ref_kernel(PwArgs<NIN, TO, T0, T1, T2, F> p) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n)
    pw_scalar(p, i);
}

template <int NIN, typename TO, typename T0, typename T1, typename T2>
constexpr int pw_width() {
  size_t s = sizeof(TO) > sizeof(T0) ? sizeof(TO) : sizeof(T0);
  if (NIN >= 2 && sizeof(T1) > s)
    s = sizeof(T1);
  if (NIN >= 3 && sizeof(T2) > s)
    s = sizeof(T2);
  return (int)(16 / s);
}

template <int E, typename T0, typename T1, typename T2> struct PwIn {
  Pack<T0, E> a;
  Pack<T1, E> b;
  Pack<T2, E> c;
};

/*
 * Fast: each thread moves U vectors of E elements per step (the widest type
 * sets E so its accesses are 16 bytes), all loads issued before any use;
 * the last n % E elements go one per thread. Needs every pointer aligned to
 * its vector (checked by the caller).
 */
template <int NIN, typename TO, typename T0, typename T1, typename T2, typename F>
__global__ void __launch_bounds__(256) pw_vec_kernel(PwArgs<NIN, TO, T0, T1, T2, F> p) {
  constexpr int E = pw_width<NIN, TO, T0, T1, T2>();
  constexpr int U = 2;
  const int64_t nvec = p.n / E;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t base = tid; base < nvec; base += stride * U) {
    PwIn<E, T0, T1, T2> in[U] = {};
#pragma unroll
    for (int u = 0; u < U; u++) {
      int64_t v = base + u * stride;
      if (v < nvec) {
        in[u].a = load_pack<T0, E>(p.a, v);
        if constexpr (NIN >= 2)
          in[u].b = load_pack<T1, E>(p.b, v);
        if constexpr (NIN >= 3)
          in[u].c = load_pack<T2, E>(p.c, v);
      }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      int64_t v = base + u * stride;
      if (v < nvec) {
        Pack<TO, E> o;
#pragma unroll
        for (int k = 0; k < E; k++)
          o.v[k] = pw_apply<NIN, TO, T0, T1, T2, F>(p.f, in[u].a.v[k], in[u].b.v[k], in[u].c.v[k]);
        store_pack<TO, E>(p.out, v, o);
      }
    }
  }
  const int64_t t = nvec * E + tid; /* the tail: fewer than E elements */
  if (t < p.n)
    pw_scalar(p, t);
}

#if ZLBC_PW_VENDOR
/* The operator's functor as CUB calls it: the inputs' element types in,
 * the output's out, the math in float as in the other kernels. */
template <int NIN, typename TO, typename T0, typename T1, typename T2, typename F>
struct PwVendorOp {
  F f;
  __device__ __forceinline__ TO operator()(T0 a) const {
    return pw_apply<NIN, TO, T0, T1, T2, F>(f, a, T1{}, T2{});
  }
  __device__ __forceinline__ TO operator()(T0 a, T1 b) const {
    return pw_apply<NIN, TO, T0, T1, T2, F>(f, a, b, T2{});
  }
  __device__ __forceinline__ TO operator()(T0 a, T1 b, T2 c) const {
    return pw_apply<NIN, TO, T0, T1, T2, F>(f, a, b, c);
  }
};

/* The baseline: cub::DeviceTransform::Transform, which picks its own
 * algorithm and vector width for the device (no temporary storage). */
template <int NIN, typename TO, typename T0, typename T1, typename T2, typename F>
inline int pw_vendor(zlb_env_t *env, cudaStream_t s, const PwArgs<NIN, TO, T0, T1, T2, F> &p) {
  PwVendorOp<NIN, TO, T0, T1, T2, F> op{p.f};
  cudaError_t e;
  if constexpr (NIN == 1)
    e = cub::DeviceTransform::Transform(::cuda::std::make_tuple(p.a), p.out, p.n, op, s);
  else if constexpr (NIN == 2)
    e = cub::DeviceTransform::Transform(::cuda::std::make_tuple(p.a, p.b), p.out, p.n, op, s);
  else
    e = cub::DeviceTransform::Transform(::cuda::std::make_tuple(p.a, p.b, p.c), p.out, p.n, op,
                                        s);
  if (e != cudaSuccess)
    return cuda_fail(env, "cub::DeviceTransform", e);
  ZLBC_LAUNCHED(env, "cub::DeviceTransform");
  return 0;
}
#endif

/*
 * CUB's transform settles some of its launch configuration on its first
 * call and keeps it for the process (CUDA 13: the items per thread of the
 * Hopper bulk-copy path, chosen from num_items when that is 8192 or less):
 * a first call on a tiny shape would slow every later size of that
 * operator and dtype. prepare() makes the first call on 64 Ki elements of
 * scratch, once per instantiation.
 */
template <int NIN, typename TO, typename T0, typename T1, typename T2, typename F>
inline int pw_prime(zlb_env_t *env) {
#if ZLBC_PW_VENDOR
  static bool primed = false;
  constexpr int64_t n = (int64_t)1 << 16;
  constexpr size_t each = (size_t)n * 16; /* room for any element type */
  void *buf = nullptr;
  int rc;
  if (primed)
    return 0;
  if ((rc = env->alloc(env, 4 * each, &buf)) != 0)
    return errf(env, rc, "cub::DeviceTransform: cannot allocate the first call's scratch");
  char *b = static_cast<char *>(buf);
  PwArgs<NIN, TO, T0, T1, T2, F> p{reinterpret_cast<TO *>(b), reinterpret_cast<const T0 *>(b + each),
                                   reinterpret_cast<const T1 *>(b + 2 * each),
                                   reinterpret_cast<const T2 *>(b + 3 * each), n, F{}};
  cudaError_t e = cudaMemset(b, 0, 4 * each);
  rc = e != cudaSuccess ? cuda_fail(env, "cudaMemset", e) : pw_vendor(env, nullptr, p);
  if (!rc && (e = cudaDeviceSynchronize()) != cudaSuccess)
    rc = cuda_fail(env, "cub::DeviceTransform (first call)", e);
  env->free(env, buf);
  primed = rc == 0;
  return rc;
#else
  (void)env;
  return 0;
#endif
}

/* Launch the baseline (CUB) or the fast kernel (ZLB_CANDIDATE; the
 * reference kernel when a pointer is not 16-byte aligned). */
template <int NIN, typename TO, typename T0, typename T1, typename T2, typename F>
inline int pw_launch(zlb_env_t *env, int which, cudaStream_t s,
                     const PwArgs<NIN, TO, T0, T1, T2, F> &p) {
  if (p.n <= 0)
    return 0;
#if ZLBC_PW_VENDOR
  if (which == ZLB_BASELINE)
    return pw_vendor(env, s, p);
#endif
  bool vec = which == ZLB_CANDIDATE && aligned16(p.out) && aligned16(p.a) &&
             (NIN < 2 || aligned16(p.b)) && (NIN < 3 || aligned16(p.c));
  if (vec) {
    constexpr int E = pw_width<NIN, TO, T0, T1, T2>();
    int64_t threads_needed = ceil_div(p.n / E, 2);
    pw_vec_kernel<<<grid_for(env, threads_needed, 256, 8), 256, 0, s>>>(p);
    ZLBC_LAUNCHED(env, "pw_vec_kernel");
  } else {
    pw_ref_kernel<<<(unsigned)ceil_div(p.n, 256), 256, 0, s>>>(p);
    ZLBC_LAUNCHED(env, "pw_ref_kernel");
  }
  return 0;
}

/* The baseline's name in the operator table. */
#define ZLBC_PW_BASELINE (ZLBC_PW_VENDOR ? "cub" : "ref")

/* Describe a pointwise case: inputs shaped like c->shape, one output. */
struct PwIo {
  int nin;
  zlb_dtype_t in_dt[3];
  zlb_fill_t fill[3];
  double lo[3], hi[3];
  zlb_dtype_t out_dt;
  double flops_per_elem;
};

inline int pw_case_init(zlb_env_t *env, zlb_case_t *c, const char *op, const PwIo &io) {
  static const char *const names[3] = {"a", "b", "c"};
  int64_t n = 0;
  ZLBC_TRY(shape_numel(env, c, op, &n));
  const zlb_shape_t *s = &c->shape;
  c->n_in = io.nin;
  double bytes = 0;
  c->detail[0] = 0;
  for (int i = 0; i < io.nin; i++) {
    tensor_set(&c->in[i], io.nin == 1 ? "x" : names[i], io.in_dt[i], s->ndim, s->dims, io.fill[i],
               io.lo[i], io.hi[i]);
    bytes += (double)n * dsize(io.in_dt[i]);
    if (i)
      appendf(c->detail, sizeof c->detail, ", ");
    fmt_dims(c->detail, sizeof c->detail, s->ndim, s->dims);
  }
  c->n_out = 1;
  tensor_set(&c->out[ZLB_BASELINE][0], "out", io.out_dt, s->ndim, s->dims, ZLB_FILL_NONE, 0, 0);
  bytes += (double)n * dsize(io.out_dt);
  c->bytes = bytes;
  c->flops = (double)n * io.flops_per_elem;
  c->check = ZLB_CHECK_CLOSE;
  c->reduce_n = 1;
  snprintf(c->config[ZLB_BASELINE], sizeof c->config[0],
           ZLBC_PW_VENDOR ? "cub::DeviceTransform" : "block=256");
  snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "block=256,vec16,grid<=8/sm");
  return 0;
}

} // namespace
} // namespace zlbc

#endif
