/* Random operators (family random): rand, randn, dropout (p = 0.5) and
 * randperm. Baselines: cuRAND's Philox4x32-10 host API (plus a conversion
 * pass, and a CUB radix sort for randperm). Candidates: our counter-based
 * Philox4x32-10 fused into one pass, keyed by env->rng's seed and offset at
 * each call; every impl advances the offset by the 32-bit values it draws
 * (rounded up to a multiple of 4).
 *
 * cuRAND re-initialises a generator on the first generate after any seed
 * or offset change, and that step cannot be captured into a CUDA graph
 * (seen on an H200 with CUDA 13.0: the capture is invalidated). So the
 * baselines take seed and offset from env->rng once, in prepare(), and then
 * continue their own sequence; only the candidates are reproducible from
 * (seed, offset) call by call. */
#include <curand.h>

#include "common.cuh"

/* After common.cuh: CUB's instantiations stay hidden. */
#include <cub/device/device_radix_sort.cuh>

namespace zlbc {
namespace {

const char *curand_name(curandStatus_t st) {
  switch (st) {
  case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
  case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
  case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
  case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
  case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
  case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
  case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
  case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
  case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
  case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
  case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
  case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
  case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
  default: return "CURAND_STATUS_UNKNOWN";
  }
}

#define ZLBC_CURAND(env, call) ZLBC_LIB(env, call, CURAND_STATUS_SUCCESS, curand_name)

void drop_generator(void *h) { curandDestroyGenerator(static_cast<curandGenerator_t>(h)); }

enum RandKind { RK_RAND, RK_RANDN, RK_DROPOUT, RK_RANDPERM };

constexpr float kDropP = 0.5f;

/* ---- candidate kernels: Philox counter block b gives elements 4b..4b+3 ---- */

template <typename T> __device__ __forceinline__ T from_f_rz(float x);
template <> __device__ __forceinline__ float from_f_rz<float>(float x) { return x; }
template <> __device__ __forceinline__ f16 from_f_rz<f16>(float x) { return __float2half_rz(x); }
template <> __device__ __forceinline__ bf16 from_f_rz<bf16>(float x) {
  return __float2bfloat16_rz(x);
}

struct RandGen { /* uniform [0, 1): rounding toward zero keeps 1.0 out */
  __device__ void operator()(uint4 r, float (&f)[4]) const {
    f[0] = u01(r.x);
    f[1] = u01(r.y);
    f[2] = u01(r.z);
    f[3] = u01(r.w);
  }
};

struct RandnGen { /* Box-Muller on (x, y) and (z, w) */
  __device__ void operator()(uint4 r, float (&f)[4]) const {
    float s, c;
    float rad = sqrtf(-2.0f * logf(u01_open0(r.x)));
    sincospif(2.0f * u01(r.y), &s, &c);
    f[0] = rad * c;
    f[1] = rad * s;
    rad = sqrtf(-2.0f * logf(u01_open0(r.z)));
    sincospif(2.0f * u01(r.w), &s, &c);
    f[2] = rad * c;
    f[3] = rad * s;
  }
};

/* rand / randn: 4 outputs per Philox block, one 4-wide store when aligned. */
template <typename T, typename G, bool RZ>
__global__ void __launch_bounds__(256) philox_fill_kernel(T *__restrict__ out, int64_t n,
                                                          uint64_t seed, uint64_t block0,
                                                          bool vec) {
  const int64_t nb = (n + 3) / 4;
  for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b < nb;
       b += (int64_t)gridDim.x * blockDim.x) {
    float f[4];
    G{}(philox_block(seed, block0 + (uint64_t)b), f);
    Pack<T, 4> o;
#pragma unroll
    for (int k = 0; k < 4; k++)
      o.v[k] = RZ ? from_f_rz<T>(f[k]) : from_f<T>(f[k]);
    if (vec && 4 * b + 3 < n) {
      store_pack<T, 4>(out, b, o);
    } else {
#pragma unroll
      for (int k = 0; k < 4; k++)
        if (4 * b + k < n)
          out[4 * b + k] = o.v[k];
    }
  }
}

/* dropout: keep where u >= p (probability 1 - p), scaled by 1 / (1 - p). */
template <typename T>
__global__ void __launch_bounds__(256) dropout_fused_kernel(const T *__restrict__ x,
                                                            T *__restrict__ y, int64_t n,
                                                            uint64_t seed, uint64_t block0,
                                                            float p, float scale, bool vec) {
  const int64_t nb = (n + 3) / 4;
  for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b < nb;
       b += (int64_t)gridDim.x * blockDim.x) {
    const uint4 r = philox_block(seed, block0 + (uint64_t)b);
    const uint32_t rv[4] = {r.x, r.y, r.z, r.w};
    if (vec && 4 * b + 3 < n) {
      Pack<T, 4> in = load_pack<T, 4>(x, b), o;
#pragma unroll
      for (int k = 0; k < 4; k++)
        o.v[k] = from_f<T>(u01(rv[k]) >= p ? to_f(in.v[k]) * scale : 0.0f);
      store_pack<T, 4>(y, b, o);
    } else {
#pragma unroll
      for (int k = 0; k < 4; k++) {
        const int64_t i = 4 * b + k;
        if (i < n)
          y[i] = from_f<T>(u01(rv[k]) >= p ? to_f(x[i]) * scale : 0.0f);
      }
    }
  }
}

__global__ void __launch_bounds__(256) philox_u32_kernel(uint32_t *__restrict__ out, int64_t n,
                                                         uint64_t seed, uint64_t block0) {
  const int64_t nb = (n + 3) / 4;
  for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b < nb;
       b += (int64_t)gridDim.x * blockDim.x) {
    const uint4 r = philox_block(seed, block0 + (uint64_t)b);
    const uint32_t rv[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int k = 0; k < 4; k++)
      if (4 * b + k < n)
        out[4 * b + k] = rv[k];
  }
}

/* ---- baseline helper kernels (after cuRAND) ----------------------------------- */

/* cuRAND's uniform is (0, 1]: map 1 to 0 (as torch does) and convert.
 * In place for float32 (u == out), hence no __restrict__. */
template <typename T>
__global__ void uniform_fix_kernel(const float *u, T *out, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = u[i];
    out[i] = from_f_rz<T>(v >= 1.0f ? 0.0f : v);
  }
}

template <typename T> __global__ void convert_kernel(const float *u, T *out, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = from_f<T>(u[i]);
}

template <typename T>
__global__ void dropout_ref_kernel(const float *__restrict__ u, const T *__restrict__ x,
                                   T *__restrict__ y, int64_t n, float p, float scale) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = from_f<T>(u[i] > p ? to_f(x[i]) * scale : 0.0f);
}

__global__ void iota64_kernel(int64_t *__restrict__ v, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    v[i] = i;
}

/* ---- the checks on the device (compare_device) ----------------------------------- */

/* dropout: res[0] = the lowest element that is neither 0 nor x / (1 - p)
 * within rtol, res[1] = the number of zeros. The arithmetic is check_dropout's,
 * in double and without contraction, so both give the same verdicts. */
template <typename T>
__global__ void dropout_judge_kernel(const T *x, const T *out, int64_t n, double scale,
                                     double rtol, unsigned long long *res) {
  unsigned long long zeros = 0;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const double y = (double)to_f(out[i]), want = __dmul_rn((double)to_f(x[i]), scale);
    const bool zero = y == 0.0;
    const bool ok = fabs(__dsub_rn(y, want)) <= __dadd_rn(__dmul_rn(rtol, fabs(want)), 1e-6);
    zeros += zero;
    if (!(zero || ok))
      note_fail(&res[0], i);
  }
  warp_add(&res[1], zeros);
}

/* randperm, first pass: res[0] = the lowest element out of [0, n),
 * res[1] = fixed points; lowest[v] = the lowest index holding value v
 * (n < 2^32 - 1: 32 bits each). */
__global__ void perm_scan_kernel(const int64_t *perm, int64_t n, unsigned *lowest,
                                 unsigned long long *res) {
  unsigned long long fixed = 0;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t v = perm[i];
    if (v < 0 || v >= n) {
      note_fail(&res[0], i);
      continue;
    }
    atomicMin(&lowest[v], (unsigned)i);
    fixed += v == i;
  }
  warp_add(&res[1], fixed);
}

/* randperm, second pass over [0, limit) (all in range): the first element
 * whose value an earlier index holds. */
__global__ void perm_repeat_kernel(const int64_t *perm, int64_t limit, const unsigned *lowest,
                                   unsigned long long *rep) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < limit; i += step)
    if ((int64_t)lowest[perm[i]] < i)
      note_fail(rep, i);
}

/* ---- the operators --------------------------------------------------------------- */

inline size_t al256(size_t v) { return (v + 255) / 256 * 256; }

template <int KIND> struct RandomOp {
  static constexpr const char *name() {
    return KIND == RK_RAND ? "rand" : KIND == RK_RANDN ? "randn" : KIND == RK_DROPOUT ? "dropout"
                                                                                    : "randperm";
  }

  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    int64_t n = 0;
    ZLBC_TRY(shape_numel(env, c, name(), &n));
    if (KIND == RK_RANDPERM && n >= INT32_MAX)
      return errf(env, ZLB_EINVAL, "randperm: n must be below 2^31");
    ZLBC_NEW_PRIV(env, c, p);
    p->n = n;
    const zlb_shape_t *s = &c->shape;
    const zlb_dtype_t odt = KIND == RK_RANDPERM ? ZLB_DT_INT64 : c->dtype;
    c->n_in = 0;
    if (KIND == RK_DROPOUT) {
      c->n_in = 1;
      tensor_set(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
    }
    c->n_out = 1;
    if (KIND == RK_RANDPERM)
      tensor_set1(&c->out[ZLB_BASELINE][0], "perm", odt, n, ZLB_FILL_NONE, 0, 0);
    else
      tensor_set(&c->out[ZLB_BASELINE][0], "out", odt, s->ndim, s->dims, ZLB_FILL_NONE, 0, 0);
    c->bytes = (double)n * dsize(odt) * (KIND == RK_DROPOUT ? 2.0 : 1.0);
    c->flops = KIND == RK_DROPOUT ? (double)n : 0.0;
    c->reduce_n = 1;
    if (KIND == RK_RAND || KIND == RK_RANDN) {
      c->check = ZLB_CHECK_STAT;
      c->stat_mean = KIND == RK_RAND ? 0.5 : 0.0;
      c->stat_var = KIND == RK_RAND ? 1.0 / 12.0 : 1.0;
    } else {
      c->check = ZLB_CHECK_CUSTOM;
    }
    c->detail[0] = 0;
    if (KIND == RK_RANDPERM)
      appendf(c->detail, sizeof c->detail, "n=%lld", (long long)n);
    else
      fmt_dims(c->detail, sizeof c->detail, s->ndim, s->dims);
    if (KIND == RK_DROPOUT)
      appendf(c->detail, sizeof c->detail, ", p=0.5");
    snprintf(c->config[ZLB_BASELINE], sizeof c->config[0], "curand-philox%s",
             KIND == RK_RANDPERM ? "+cub-sort" : "");
    snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "philox4x32-10%s",
             KIND == RK_RANDPERM ? "+lsd-radix4" : ",fused");
    return 0;
  }

  /* Baseline workspace: floats from cuRAND (even count for randn), or for
   * randperm: keys, sorted keys, iota, CUB temp. */
  static size_t float_ws(const Priv *p, zlb_dtype_t dt) {
    const int64_t even = (p->n + 1) / 2 * 2;
    if (KIND == RK_RANDN)
      return (dt == ZLB_DT_FLOAT32 && even == p->n) ? 0 : (size_t)even * 4;
    if (KIND == RK_RAND)
      return dt == ZLB_DT_FLOAT32 ? 0 : (size_t)p->n * 4;
    return (size_t)p->n * 4; /* dropout */
  }

  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    Priv *p = priv_of(c);
    if (which == ZLB_CANDIDATE) {
      if (KIND == RK_RANDPERM)
        return ws_alloc(env, c, which, zlbc_radix_argsort_ws_bytes(p->n));
      return 0;
    }
    if (!env->rng)
      return errf(env, ZLB_EINVAL, "%s: env->rng is NULL", name());
    curandGenerator_t g = nullptr;
    ZLBC_CURAND(env, curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    p->handle[which] = g;
    p->drop_handle = drop_generator;
    ZLBC_CURAND(env, curandSetPseudoRandomGeneratorSeed(g, env->rng->seed));
    ZLBC_CURAND(env, curandSetGeneratorOffset(g, env->rng->offset));
    size_t bytes = 0;
    if (KIND == RK_RANDPERM) {
      size_t temp = 0;
      ZLBC_CUDA(env, cub::DeviceRadixSort::SortPairs(nullptr, temp, (const uint32_t *)nullptr,
                                                     (uint32_t *)nullptr, (const int64_t *)nullptr,
                                                     (int64_t *)nullptr, p->n, 0, 32, 0));
      p->extra[0] = (int64_t)temp;
      bytes = 2 * al256((size_t)p->n * 4) + al256((size_t)p->n * 8) + temp;
    } else {
      bytes = float_ws(p, c->dtype);
    }
    if (bytes)
      ZLBC_TRY(ws_alloc(env, c, which, bytes));
    /* The first generate after seeding re-initialises the generator: do
     * it here, outside any capture. */
    char *w = static_cast<char *>(p->ws[which]);
    ZLBC_CURAND(env, curandSetStream(g, 0));
    if (KIND == RK_RANDPERM) {
      iota64_kernel<<<grid_for(env, p->n, 256, 4), 256>>>(
          reinterpret_cast<int64_t *>(w + 2 * al256((size_t)p->n * 4)), p->n);
      ZLBC_LAUNCHED(env, "iota64_kernel");
      ZLBC_CURAND(env, curandGenerate(g, reinterpret_cast<unsigned int *>(w), 4));
    } else {
      float *buf = w ? reinterpret_cast<float *>(w)
                     : static_cast<float *>(c->out[which][0].data); /* float32 output */
      if (KIND == RK_RANDN)
        ZLBC_CURAND(env, curandGenerateNormal(g, buf, 2, 0.0f, 1.0f));
      else
        ZLBC_CURAND(env, curandGenerateUniform(g, buf, 4 <= p->n ? 4 : 1));
    }
    ZLBC_CUDA(env, cudaStreamSynchronize(0));
    return 0;
  }

  template <typename T> static int baseline(zlb_env_t *env, zlb_case_t *c, cudaStream_t s) {
    Priv *p = priv_of(c);
    curandGenerator_t g = static_cast<curandGenerator_t>(p->handle[ZLB_BASELINE]);
    if (!g)
      return errf(env, ZLB_EINVAL, "%s: prepare() was not called", name());
    const int64_t n = p->n, even = (n + 1) / 2 * 2;
    /* advance env->rng for the values drawn; the generator itself goes on
     * from where its last call stopped (see the top of this file) */
    uint64_t seed = 0, block0 = 0;
    ZLBC_TRY(rng_take(env, KIND == RK_RANDN ? (uint64_t)even : (uint64_t)n, &seed, &block0));
    ZLBC_CURAND(env, curandSetStream(g, s));
    char *w = static_cast<char *>(p->ws[ZLB_BASELINE]);
    if constexpr (KIND == RK_RANDPERM) {
      uint32_t *keys = reinterpret_cast<uint32_t *>(w);
      uint32_t *keys_out = reinterpret_cast<uint32_t *>(w + al256((size_t)n * 4));
      int64_t *iota = reinterpret_cast<int64_t *>(w + 2 * al256((size_t)n * 4));
      char *temp = w + 2 * al256((size_t)n * 4) + al256((size_t)n * 8);
      size_t temp_bytes = (size_t)p->extra[0];
      int64_t *perm = static_cast<int64_t *>(c->out[ZLB_BASELINE][0].data);
      ZLBC_CURAND(env, curandGenerate(g, keys, (size_t)n));
      ZLBC_CUDA(env, cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, keys_out, iota, perm,
                                                     n, 0, 32, s));
    } else {
      T *out = static_cast<T *>(c->out[ZLB_BASELINE][0].data);
      float *buf = w ? reinterpret_cast<float *>(w) : reinterpret_cast<float *>(out);
      const unsigned blocks = (unsigned)ceil_div(n, 256);
      if constexpr (KIND == RK_RANDN) {
        ZLBC_CURAND(env, curandGenerateNormal(g, buf, (size_t)even, 0.0f, 1.0f));
        if (w) {
          convert_kernel<T><<<blocks, 256, 0, s>>>(buf, out, n);
          ZLBC_LAUNCHED(env, "convert_kernel");
        }
      } else {
        ZLBC_CURAND(env, curandGenerateUniform(g, buf, (size_t)n));
        if constexpr (KIND == RK_RAND) {
          uniform_fix_kernel<T><<<blocks, 256, 0, s>>>(buf, out, n);
          ZLBC_LAUNCHED(env, "uniform_fix_kernel");
        } else {
          dropout_ref_kernel<T><<<blocks, 256, 0, s>>>(buf, static_cast<const T *>(c->in[0].data),
                                                       out, n, kDropP, 1.0f / (1.0f - kDropP));
          ZLBC_LAUNCHED(env, "dropout_ref_kernel");
        }
      }
    }
    return 0;
  }

  template <typename T> static int candidate(zlb_env_t *env, zlb_case_t *c, cudaStream_t s) {
    Priv *p = priv_of(c);
    const int64_t n = p->n, nb = ceil_div(n, 4);
    uint64_t seed = 0, block0 = 0;
    ZLBC_TRY(rng_take(env, (uint64_t)n, &seed, &block0));
    const unsigned grid = grid_for(env, nb, 256, 8);
    if constexpr (KIND == RK_RANDPERM) {
      void *ws = p->ws[ZLB_CANDIDATE];
      if (!ws)
        return errf(env, ZLB_EINVAL, "randperm: prepare() was not called");
      philox_u32_kernel<<<grid, 256, 0, s>>>(static_cast<uint32_t *>(ws), n, seed, block0);
      ZLBC_LAUNCHED(env, "philox_u32_kernel");
      int64_t *perm = static_cast<int64_t *>(c->out[ZLB_CANDIDATE][0].data);
      ZLBC_CUDA(env, zlbc_radix_argsort_u32(ws, n, perm, sm_count(env), s));
    } else if constexpr (KIND == RK_DROPOUT) {
      T *out = static_cast<T *>(c->out[ZLB_CANDIDATE][0].data);
      const T *x = static_cast<const T *>(c->in[0].data);
      dropout_fused_kernel<T><<<grid, 256, 0, s>>>(x, out, n, seed, block0, kDropP,
                                                   1.0f / (1.0f - kDropP),
                                                   aligned16(x) && aligned16(out));
      ZLBC_LAUNCHED(env, "dropout_fused_kernel");
    } else if constexpr (KIND == RK_RAND) {
      T *out = static_cast<T *>(c->out[ZLB_CANDIDATE][0].data);
      philox_fill_kernel<T, RandGen, true><<<grid, 256, 0, s>>>(out, n, seed, block0, aligned16(out));
      ZLBC_LAUNCHED(env, "philox_fill_kernel");
    } else {
      T *out = static_cast<T *>(c->out[ZLB_CANDIDATE][0].data);
      philox_fill_kernel<T, RandnGen, false><<<grid, 256, 0, s>>>(out, n, seed, block0,
                                                                  aligned16(out));
      ZLBC_LAUNCHED(env, "philox_fill_kernel");
    }
    return 0;
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    cudaStream_t s = as_stream(stream);
    if constexpr (KIND == RK_RANDPERM)
      return which == ZLB_CANDIDATE ? candidate<float>(env, c, s) : baseline<float>(env, c, s);
    else
      return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      return which == ZLB_CANDIDATE ? candidate<T>(env, c, s) : baseline<T>(env, c, s);
    });
  }

  /* dropout: each impl on its own (their random streams differ). Every
   * output is 0 or x / (1 - p) within rtol, and the fraction of zeros is p
   * within 5 sd (at least 0.01). Elements on several threads, the dtype
   * dispatched once: the largest cases have 134M elements. The lowest
   * failing element is reported, whatever the split. */
  static int check_dropout(const zlb_case_t *c, const zlb_host_view_t *v, int which, char *msg,
                           size_t msglen) {
    const Priv *p = priv_of(c);
    const zlb_dtype_t dt = c->dtype;
    const double rtol = dt == ZLB_DT_FLOAT32 ? 1.3e-6 : dt == ZLB_DT_FLOAT16 ? 1e-3 : 1.6e-2;
    const double scale = 1.0 / (1.0 - kDropP);
    const void *x = v->in[0], *out = v->out[which][0];
    auto matches = [&](double y, double want) { return fabs(y - want) <= rtol * fabs(want) + 1e-6; };
    int64_t zeros = 0, bad = -1;
    dispatch_float(nullptr, dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      bad = parallel_first_fail(p->n, &zeros, [&](int64_t b, int64_t e, int64_t &cnt) -> int64_t {
        /* Runs of 1024 with both tests on every element and no branch:
         * zero and nonzero outputs alternate at random, so a branch per
         * element mispredicts half the time, and the branch-free loop
         * vectorises. A run with a failure is walked again for the first. */
        for (int64_t r = b; r < e; r += 1024) {
          const int64_t re = min64(r + 1024, e);
          int z = 0, nbad = 0;
          for (int64_t i = r; i < re; i++) {
            const double y = host_load<T>(out, i), want = host_load<T>(x, i) * scale;
            const int zero = y == 0.0, ok = matches(y, want);
            z += zero;
            nbad += (zero | ok) ^ 1;
          }
          cnt += z;
          if (nbad)
            for (int64_t i = r; i < re; i++) {
              const double y = host_load<T>(out, i), want = host_load<T>(x, i) * scale;
              if (!(y == 0.0 || matches(y, want)))
                return i;
            }
        }
        return -1;
      });
      return 0;
    });
    if (bad >= 0) {
      const double y = zlb_load(dt, out, bad), want = zlb_load(dt, x, bad) * scale;
      snprintf(msg, msglen, "dropout (%s): element %lld is %g, expected 0 or x/(1-p) = %g",
               which == ZLB_BASELINE ? "baseline" : "candidate", (long long)bad, y, want);
      return 1;
    }
    const double frac = (double)zeros / (double)p->n;
    const double sd = sqrt(kDropP * (1.0 - kDropP) / (double)p->n);
    const double bound = 5.0 * sd > 0.01 ? 5.0 * sd : 0.01;
    if (fabs(frac - kDropP) > bound) {
      snprintf(msg, msglen, "dropout (%s): %.4f of the outputs are zero, expected %.2f +- %.4f",
               which == ZLB_BASELINE ? "baseline" : "candidate", frac, (double)kDropP, bound);
      return 1;
    }
    return 0;
  }

  /*
   * randperm: each impl's output is a permutation of 0..n-1 (else the
   * first element out of range or repeating an earlier one is reported)
   * and not the identity (for n >= 64, at most n/2 fixed points). Linear
   * and on several threads, n being tens of millions: one pass checks the
   * range, marks each value seen and counts fixed points; when all n
   * elements are in range and every value got marked, none repeats. Only
   * a failing output pays for finding its first bad element, the same
   * whatever the split: the lowest index holding each value, then the
   * first element whose value is held at a lower index.
   */
  static int check_perm(const zlb_case_t *c, const zlb_host_view_t *v, int which, char *msg,
                        size_t msglen) {
    const Priv *p = priv_of(c);
    const int64_t n = p->n;
    const int64_t *perm = static_cast<const int64_t *>(v->out[which][0]);
    const char *who = which == ZLB_BASELINE ? "baseline" : "candidate";
    uint8_t *seen = static_cast<uint8_t *>(calloc((size_t)n, 1));
    if (!seen) {
      snprintf(msg, msglen, "randperm: out of host memory");
      return 1;
    }
    int64_t fixed = 0;
    /* lowest index out of range; [0, out) are all in range */
    const int64_t out = parallel_first_fail(n, &fixed, [&](int64_t b, int64_t e, int64_t &cnt) {
      for (int64_t i = b; i < e; i++) {
        const int64_t x = perm[i];
        if (x < 0 || x >= n)
          return i;
        __atomic_store_n(&seen[x], (uint8_t)1, __ATOMIC_RELAXED); /* others mark too */
        cnt += x == i;
      }
      return (int64_t)-1;
    });
    /* the threads have joined: plain reads see every mark */
    const int64_t missing = out >= 0 ? -1 : parallel_first_fail(n, nullptr,
                                                                [&](int64_t b, int64_t e, int64_t &) {
      const void *z = memchr(seen + b, 0, (size_t)(e - b));
      return z ? (int64_t)(static_cast<const uint8_t *>(z) - seen) : (int64_t)-1;
    });
    free(seen);
    if (out < 0 && missing < 0) {
      if (n >= 64 && fixed > n / 2) {
        snprintf(msg, msglen, "randperm (%s): %lld of %lld elements stay in place: not shuffled",
                 who, (long long)fixed, (long long)n);
        return 1;
      }
      return 0;
    }
    /* The first repeat, if there is one before `out`: lowest[x] = 1 + the
     * lowest index holding x (0: none yet, hence calloc), then the first i
     * with lowest[perm[i]] <= i. */
    const int64_t limit = out >= 0 ? out : n;
    uint32_t *lowest = static_cast<uint32_t *>(calloc((size_t)n, sizeof(uint32_t)));
    if (!lowest) {
      snprintf(msg, msglen, "randperm: out of host memory");
      return 1;
    }
    parallel_first_fail(limit, nullptr, [&](int64_t b, int64_t e, int64_t &) {
      for (int64_t i = b; i < e; i++) {
        uint32_t *slot = &lowest[perm[i]];
        const uint32_t mine = (uint32_t)i + 1u;
        uint32_t cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
        while ((cur == 0 || mine < cur) &&
               !__atomic_compare_exchange_n(slot, &cur, mine, true, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
        }
      }
      return (int64_t)-1;
    });
    const int64_t rep = parallel_first_fail(limit, nullptr, [&](int64_t b, int64_t e, int64_t &) {
      for (int64_t i = b; i < e; i++)
        if (lowest[perm[i]] < (uint32_t)i + 1u)
          return i;
      return (int64_t)-1;
    });
    free(lowest);
    /* all in range with a value missing: pigeonhole, some value repeats */
    const int64_t i = rep >= 0 ? rep : out;
    const int64_t x = perm[i];
    snprintf(msg, msglen, "randperm (%s): element %lld is %lld: %s", who, (long long)i,
             (long long)x, x < 0 || x >= n ? "out of range" : "repeated");
    return 1;
  }

  static int compare(zlb_env_t *, const zlb_case_t *c, const zlb_host_view_t *v, char *msg,
                     size_t msglen) {
    for (int which = ZLB_BASELINE; which <= ZLB_CANDIDATE; which++) {
      int rc = KIND == RK_DROPOUT ? check_dropout(c, v, which, msg, msglen)
                                  : check_perm(c, v, which, msg, msglen);
      if (rc)
        return rc;
    }
    return 0;
  }

  /* check_dropout on the device: the same tests, the same message. */
  static int dropout_device(zlb_env_t *env, const zlb_case_t *c, int which, cudaStream_t s,
                            char *msg, size_t msglen) {
    const Priv *p = priv_of(c);
    const zlb_dtype_t dt = c->dtype;
    const double rtol = dt == ZLB_DT_FLOAT32 ? 1.3e-6 : dt == ZLB_DT_FLOAT16 ? 1e-3 : 1.6e-2;
    const double scale = 1.0 / (1.0 - kDropP);
    const void *x = c->in[0].data, *out = c->out[which][0].data;
    const char *who = which == ZLB_BASELINE ? "baseline" : "candidate";
    unsigned long long res[2];
    DevBuf dres(env);
    ZLBC_TRY(dres.get(sizeof(res), 0, s));
    ZLBC_CUDA(env, cudaMemsetAsync(dres.p, 0xff, sizeof(res[0]), s));
    ZLBC_TRY(dispatch_float(env, dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      dropout_judge_kernel<T><<<grid_for(env, p->n, kCheckThreads, 8), kCheckThreads, 0, s>>>(
          static_cast<const T *>(x), static_cast<const T *>(out), p->n, scale, rtol,
          dres.as<unsigned long long>());
      ZLBC_LAUNCHED(env, "dropout_judge_kernel");
      return 0;
    }));
    ZLBC_TRY(dev_read(env, s, res, dres.p, sizeof(res)));
    if (res[0] != kNoFail) {
      double y = 0, xv = 0;
      ZLBC_TRY(dev_load(env, s, dt, out, (int64_t)res[0], &y));
      ZLBC_TRY(dev_load(env, s, dt, x, (int64_t)res[0], &xv));
      snprintf(msg, msglen, "dropout (%s): element %lld is %g, expected 0 or x/(1-p) = %g", who,
               (long long)res[0], y, xv * scale);
      return ZLB_EMISMATCH;
    }
    const double frac = (double)res[1] / (double)p->n;
    const double sd = sqrt(kDropP * (1.0 - kDropP) / (double)p->n);
    const double bound = 5.0 * sd > 0.01 ? 5.0 * sd : 0.01;
    if (fabs(frac - kDropP) > bound) {
      snprintf(msg, msglen, "dropout (%s): %.4f of the outputs are zero, expected %.2f +- %.4f",
               who, frac, (double)kDropP, bound);
      return ZLB_EMISMATCH;
    }
    return 0;
  }

  /* check_perm on the device: the lowest element out of range or holding a
   * value an earlier index holds, else the fixed-point test. */
  static int perm_device(zlb_env_t *env, const zlb_case_t *c, int which, cudaStream_t s,
                         char *msg, size_t msglen) {
    const Priv *p = priv_of(c);
    const int64_t n = p->n;
    const int64_t *perm = static_cast<const int64_t *>(c->out[which][0].data);
    const char *who = which == ZLB_BASELINE ? "baseline" : "candidate";
    unsigned long long res[3];
    DevBuf lowest(env), dres(env);
    if (n >= (int64_t)0xffffffffu)
      return errf(env, ZLB_EUNSUPPORTED, "randperm: n = %lld too large for the device check",
                  (long long)n);
    ZLBC_TRY(lowest.get((size_t)n * sizeof(unsigned), 0xff, s));
    ZLBC_TRY(dres.get(sizeof(res), 0xff, s));
    ZLBC_CUDA(env, cudaMemsetAsync(dres.as<unsigned long long>() + 1, 0, sizeof(res[1]), s));
    perm_scan_kernel<<<grid_for(env, n, kCheckThreads, 8), kCheckThreads, 0, s>>>(
        perm, n, lowest.as<unsigned>(), dres.as<unsigned long long>());
    ZLBC_LAUNCHED(env, "perm_scan_kernel");
    ZLBC_TRY(dev_read(env, s, res, dres.p, 2 * sizeof(res[0])));
    const int64_t limit = res[0] != kNoFail ? (int64_t)res[0] : n;
    if (limit > 0) {
      perm_repeat_kernel<<<grid_for(env, limit, kCheckThreads, 8), kCheckThreads, 0, s>>>(
          perm, limit, lowest.as<unsigned>(), dres.as<unsigned long long>() + 2);
      ZLBC_LAUNCHED(env, "perm_repeat_kernel");
    }
    ZLBC_TRY(dev_read(env, s, &res[2], dres.as<unsigned long long>() + 2, sizeof(res[2])));
    if (res[0] == kNoFail && res[2] == kNoFail) {
      if (n >= 64 && (int64_t)res[1] > n / 2) {
        snprintf(msg, msglen, "randperm (%s): %lld of %lld elements stay in place: not shuffled",
                 who, (long long)res[1], (long long)n);
        return ZLB_EMISMATCH;
      }
      return 0;
    }
    const int64_t i = res[2] != kNoFail ? (int64_t)res[2] : (int64_t)res[0];
    int64_t v = 0;
    ZLBC_TRY(dev_load_i64(env, s, perm, i, &v));
    snprintf(msg, msglen, "randperm (%s): element %lld is %lld: %s", who, (long long)i,
             (long long)v, v < 0 || v >= n ? "out of range" : "repeated");
    return ZLB_EMISMATCH;
  }

  static int compare_device(zlb_env_t *env, const zlb_case_t *c, void *stream, char *msg,
                            size_t msglen) {
    for (int which = ZLB_BASELINE; which <= ZLB_CANDIDATE; which++) {
      int rc = KIND == RK_DROPOUT ? dropout_device(env, c, which, as_stream(stream), msg, msglen)
                                  : perm_device(env, c, which, as_stream(stream), msg, msglen);
      if (rc)
        return rc;
    }
    return 0;
  }
};

#define RANDOM_OP(KIND, DTYPES, DESC, DOC, COMPARE, COMPARE_DEV)                              \
  ZLBC_OP_DEV(RandomOp<KIND>::name(), "random", DTYPES, DESC, DOC, &RandomOp<KIND>::case_init, \
              COMPARE,                                                                      \
              ZLBC_IMPL("curand", ZLB_IMPL_USES_RNG, &RandomOp<KIND>::prepare,              \
                        &RandomOp<KIND>::enqueue),                                          \
              ZLBC_IMPL("zlb", ZLB_IMPL_USES_RNG, &RandomOp<KIND>::prepare,                 \
                        &RandomOp<KIND>::enqueue),                                          \
              COMPARE_DEV)

const zlb_op_t kRandomOps[] = {
    RANDOM_OP(RK_RAND, ZLB_DT_FLOATS, "output extents", "uniform [0, 1)", nullptr, nullptr),
    RANDOM_OP(RK_RANDN, ZLB_DT_FLOATS, "output extents", "standard normal", nullptr, nullptr),
    RANDOM_OP(RK_DROPOUT, ZLB_DT_FLOATS, "tensor extents",
              "dropout, p = 0.5, training mode: x * mask / (1 - p)", &RandomOp<RK_DROPOUT>::compare,
              &RandomOp<RK_DROPOUT>::compare_device),
    RANDOM_OP(RK_RANDPERM, ZLB_DT_BIT(ZLB_DT_INT64), "n (extents multiply)",
              "random permutation of 0..n-1 as int64", &RandomOp<RK_RANDPERM>::compare,
              &RandomOp<RK_RANDPERM>::compare_device),
};

} // namespace
} // namespace zlbc

int zlbc_register_random(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kRandomOps, sizeof zlbc::kRandomOps / sizeof zlbc::kRandomOps[0]);
}
