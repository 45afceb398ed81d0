/* Matrix operators (family blas): mm, bmm, addmm (bias [N] broadcast over
 * rows) and mv. Baselines: cuBLAS GemmEx / GemmStridedBatchedEx with
 * CUBLAS_COMPUTE_32F and the default math mode (no TF32 for float32).
 * Candidates: a WMMA tensor-core kernel (float16/bfloat16; cp.async
 * multi-stage pipeline, zero-filled edge tiles) and a register-blocked SIMT
 * kernel (float32), both with autotuned tiles; mv: a warp per row. */
#include <cublas_v2.h>
#include <mma.h>

#include "common.cuh"

namespace zlbc {
namespace {

using namespace nvcuda;

/* ---- cuBLAS baseline ------------------------------------------------------ */

const char *cublas_name(cublasStatus_t st) {
  switch (st) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

#define ZLBC_CUBLAS(env, call) ZLBC_LIB(env, call, CUBLAS_STATUS_SUCCESS, cublas_name)

void drop_cublas(void *h) { cublasDestroy(static_cast<cublasHandle_t>(h)); }

constexpr size_t kCublasWs = (size_t)32 << 20; /* NVIDIA's advice for Hopper */

template <typename T> constexpr cudaDataType_t cuda_type();
template <> constexpr cudaDataType_t cuda_type<float>() { return CUDA_R_32F; }
template <> constexpr cudaDataType_t cuda_type<f16>() { return CUDA_R_16F; }
template <> constexpr cudaDataType_t cuda_type<bf16>() { return CUDA_R_16BF; }

/* ---- problem --------------------------------------------------------------- */

enum BlasKind { BK_MM, BK_BMM, BK_ADDMM, BK_MV };

/* C[b] = alpha * A[b] @ B[b] (+ beta * bias broadcast over rows); row-major. */
template <typename T> struct MmArgs {
  const T *A, *B, *bias;
  T *C;
  int M, N, K;
  int64_t sA, sB, sC; /* batch strides (elements) */
  float alpha, beta;
};

/* ---- WMMA tensor-core kernel (float16 / bfloat16) ----------------------------- */

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

template <int BM_, int BN_, int BK_, int WM_, int WN_, int ST_> struct TcCfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = ST_;
  static constexpr int THREADS = WM * WN * 32;
  static constexpr int LDA = BK + 8, LDB = BN + 8; /* +16 bytes: fewer bank conflicts */
  static constexpr int TM = BM / WM, TN = BN / WN, FM = TM / 16, FN = TN / 16;
  static constexpr size_t A_STAGE = (size_t)BM * LDA, B_STAGE = (size_t)BK * LDB;
  static constexpr size_t SMEM = ((A_STAGE + B_STAGE) * STAGES * 2 > (size_t)THREADS / 32 * 1024)
                                     ? (A_STAGE + B_STAGE) * STAGES * 2
                                     : (size_t)THREADS / 32 * 1024;
  static_assert(BM % (WM * 16) == 0 && BN % (WN * 16) == 0 && BK % 16 == 0, "tile shape");
};

/* Stage `st` <- tile k0 of A (BM x BK) and B (BK x BN). `aligned`: K and N
 * are multiples of 8 and the bases 16-byte aligned, so each 16-byte chunk
 * is wholly inside or outside the matrix and cp.async zero-fills the
 * outside; otherwise element-wise guarded loads. */
template <typename C, typename T>
__device__ __forceinline__ void tc_load_tile(const MmArgs<T> &a, const T *A, const T *B, T *As,
                                             T *Bs, int m0, int n0, int k0, bool aligned) {
  const int tid = threadIdx.x;
  if (aligned) {
    constexpr int ACH = C::BM * C::BK / 8, BCH = C::BK * C::BN / 8;
    for (int ch = tid; ch < ACH; ch += C::THREADS) {
      const int r = ch / (C::BK / 8), kc = (ch % (C::BK / 8)) * 8;
      const int gr = m0 + r, gk = k0 + kc;
      const bool ok = gr < a.M && gk < a.K;
      cp_async16(As + r * C::LDA + kc, ok ? A + (int64_t)gr * a.K + gk : A, ok ? 16 : 0);
    }
    for (int ch = tid; ch < BCH; ch += C::THREADS) {
      const int r = ch / (C::BN / 8), nc = (ch % (C::BN / 8)) * 8;
      const int gk = k0 + r, gn = n0 + nc;
      const bool ok = gk < a.K && gn < a.N;
      cp_async16(Bs + r * C::LDB + nc, ok ? B + (int64_t)gk * a.N + gn : B, ok ? 16 : 0);
    }
  } else {
    const T zero = from_f<T>(0.0f);
    for (int e = tid; e < C::BM * C::BK; e += C::THREADS) {
      const int r = e / C::BK, kk = e % C::BK, gr = m0 + r, gk = k0 + kk;
      As[r * C::LDA + kk] = (gr < a.M && gk < a.K) ? A[(int64_t)gr * a.K + gk] : zero;
    }
    for (int e = tid; e < C::BK * C::BN; e += C::THREADS) {
      const int r = e / C::BN, nn = e % C::BN, gk = k0 + r, gn = n0 + nn;
      Bs[r * C::LDB + nn] = (gk < a.K && gn < a.N) ? B[(int64_t)gk * a.N + gn] : zero;
    }
  }
}

template <typename C, typename T>
__global__ void __launch_bounds__(C::THREADS) mm_wmma_kernel(MmArgs<T> a, bool aligned) {
  extern __shared__ __align__(128) unsigned char tc_smem[];
  T *As = reinterpret_cast<T *>(tc_smem);
  T *Bs = As + C::A_STAGE * C::STAGES;
  const int64_t bz = blockIdx.z;
  const T *A = a.A + bz * a.sA;
  const T *B = a.B + bz * a.sB;
  T *Cp = a.C + bz * a.sC;
  const int m0 = blockIdx.y * C::BM, n0 = blockIdx.x * C::BN;
  const int wid = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int wm = wid / C::WN, wn = wid % C::WN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[C::FM][C::FN];
#pragma unroll
  for (int i = 0; i < C::FM; i++)
#pragma unroll
    for (int j = 0; j < C::FN; j++)
      wmma::fill_fragment(acc[i][j], 0.0f);

  const int ktiles = (a.K + C::BK - 1) / C::BK;
#pragma unroll
  for (int s = 0; s < C::STAGES - 1; s++) {
    if (s < ktiles)
      tc_load_tile<C>(a, A, B, As + s * C::A_STAGE, Bs + s * C::B_STAGE, m0, n0, s * C::BK, aligned);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; kt++) {
    cp_async_wait<C::STAGES - 2>(); /* tile kt has landed */
    __syncthreads();                /* ... for every thread; stage kt-1 is free */
    const int nk = kt + C::STAGES - 1;
    if (nk < ktiles)
      tc_load_tile<C>(a, A, B, As + (nk % C::STAGES) * C::A_STAGE, Bs + (nk % C::STAGES) * C::B_STAGE,
                      m0, n0, nk * C::BK, aligned);
    cp_async_commit();
    const T *as = As + (kt % C::STAGES) * C::A_STAGE;
    const T *bs = Bs + (kt % C::STAGES) * C::B_STAGE;
#pragma unroll
    for (int kk = 0; kk < C::BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> af[C::FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bf[C::FN];
#pragma unroll
      for (int i = 0; i < C::FM; i++)
        wmma::load_matrix_sync(af[i], as + (wm * C::TM + i * 16) * C::LDA + kk, C::LDA);
#pragma unroll
      for (int j = 0; j < C::FN; j++)
        wmma::load_matrix_sync(bf[j], bs + kk * C::LDB + wn * C::TN + j * 16, C::LDB);
#pragma unroll
      for (int i = 0; i < C::FM; i++)
#pragma unroll
        for (int j = 0; j < C::FN; j++)
          wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
    }
  }
  cp_async_wait<0>();
  __syncthreads(); /* the pipeline buffers become per-warp epilogue scratch */

  float *scratch = reinterpret_cast<float *>(tc_smem) + wid * 256;
  const bool vec_out = aligned && (a.N % 8 == 0);
#pragma unroll
  for (int i = 0; i < C::FM; i++) {
#pragma unroll
    for (int j = 0; j < C::FN; j++) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      /* lane -> row lane/2, columns 8*(lane%2) .. +7 of this 16x16 block */
      const int r = lane >> 1, c0 = (lane & 1) * 8;
      const int gr = m0 + wm * C::TM + i * 16 + r, gc = n0 + wn * C::TN + j * 16 + c0;
      if (gr < a.M) {
        float v[8];
#pragma unroll
        for (int e = 0; e < 8; e++) {
          v[e] = a.alpha * scratch[r * 16 + c0 + e];
          if (a.bias && gc + e < a.N)
            v[e] += a.beta * to_f(a.bias[gc + e]);
        }
        T *dst = Cp + (int64_t)gr * a.N + gc;
        if (vec_out && gc + 8 <= a.N) {
          Pack<T, 8> o;
#pragma unroll
          for (int e = 0; e < 8; e++)
            o.v[e] = from_f<T>(v[e]);
          store_pack<T, 8>(dst, 0, o);
        } else {
#pragma unroll
          for (int e = 0; e < 8; e++)
            if (gc + e < a.N)
              dst[e] = from_f<T>(v[e]);
        }
      }
      __syncwarp();
    }
  }
}

using TcCfg0 = TcCfg<128, 128, 32, 2, 4, 3>;
using TcCfg1 = TcCfg<128, 256, 32, 2, 4, 3>;
using TcCfg2 = TcCfg<256, 128, 32, 4, 2, 3>;
using TcCfg3 = TcCfg<64, 128, 32, 2, 2, 3>;
using TcCfg4 = TcCfg<64, 64, 32, 2, 2, 4>;
using TcCfg5 = TcCfg<128, 128, 64, 2, 4, 3>;
constexpr int kTcNcfg = 6;

template <typename C> inline const char *tc_name_of() {
  static char buf[48];
  snprintf(buf, sizeof buf, "wmma,tile=%dx%dx%d,warps=%dx%d,st=%d", C::BM, C::BN, C::BK, C::WM,
           C::WN, C::STAGES);
  return buf;
}

template <typename C, typename T> inline cudaError_t tc_attr() {
  return cudaFuncSetAttribute(mm_wmma_kernel<C, T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              (int)C::SMEM);
}

template <typename C, typename T>
inline cudaError_t tc_launch(const MmArgs<T> &a, int batch, bool aligned, cudaStream_t s) {
  dim3 grid((unsigned)ceil_div(a.N, C::BN), (unsigned)ceil_div(a.M, C::BM), (unsigned)batch);
  if (grid.y > 65535u || grid.z > 65535u)
    return cudaErrorInvalidConfiguration;
  mm_wmma_kernel<C, T><<<grid, C::THREADS, C::SMEM, s>>>(a, aligned);
  return cudaGetLastError();
}

/* ---- SIMT kernel (float32): register blocking, double-buffered smem ------------- */

template <int BM_, int BN_, int BK_, int TM_, int TN_> struct SimtCfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int THREADS = (BM / TM) * (BN / TN);
  static constexpr int LA = BM * BK / THREADS, LB = BK * BN / THREADS;
  static_assert(BM * BK % THREADS == 0 && BK * BN % THREADS == 0, "tile loads");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "float4 reads");
};

template <typename C>
__global__ void __launch_bounds__(C::THREADS) mm_simt_kernel(MmArgs<float> a) {
  __shared__ __align__(16) float As[2][C::BK][C::BM + 4]; /* A transposed: k-major */
  __shared__ __align__(16) float Bs[2][C::BK][C::BN + 4];
  const int64_t bz = blockIdx.z;
  const float *A = a.A + bz * a.sA;
  const float *B = a.B + bz * a.sB;
  float *Cp = a.C + bz * a.sC;
  const int m0 = blockIdx.y * C::BM, n0 = blockIdx.x * C::BN;
  const int tid = threadIdx.x, tx = tid % (C::BN / C::TN), ty = tid / (C::BN / C::TN);
  float acc[C::TM][C::TN];
#pragma unroll
  for (int i = 0; i < C::TM; i++)
#pragma unroll
    for (int j = 0; j < C::TN; j++)
      acc[i][j] = 0.0f;
  float ra[C::LA], rb[C::LB];

  auto load_regs = [&](int k0) {
#pragma unroll
    for (int i = 0; i < C::LA; i++) {
      const int e = tid + i * C::THREADS, r = e / C::BK, k = e % C::BK;
      const int gr = m0 + r, gk = k0 + k;
      ra[i] = (gr < a.M && gk < a.K) ? A[(int64_t)gr * a.K + gk] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < C::LB; i++) {
      const int e = tid + i * C::THREADS, k = e / C::BN, cc = e % C::BN;
      const int gk = k0 + k, gc = n0 + cc;
      rb[i] = (gk < a.K && gc < a.N) ? B[(int64_t)gk * a.N + gc] : 0.0f;
    }
  };
  auto store_smem = [&](int buf) {
#pragma unroll
    for (int i = 0; i < C::LA; i++) {
      const int e = tid + i * C::THREADS;
      As[buf][e % C::BK][e / C::BK] = ra[i];
    }
#pragma unroll
    for (int i = 0; i < C::LB; i++) {
      const int e = tid + i * C::THREADS;
      Bs[buf][e / C::BN][e % C::BN] = rb[i];
    }
  };

  const int ktiles = (a.K + C::BK - 1) / C::BK;
  load_regs(0);
  store_smem(0);
  __syncthreads();
  for (int kt = 0; kt < ktiles; kt++) {
    const int buf = kt & 1;
    if (kt + 1 < ktiles)
      load_regs((kt + 1) * C::BK); /* in flight during the math below */
#pragma unroll
    for (int k = 0; k < C::BK; k++) {
      float av[C::TM], bv[C::TN];
#pragma unroll
      for (int i = 0; i < C::TM; i += 4) {
        const float4 t = *reinterpret_cast<const float4 *>(&As[buf][k][ty * C::TM + i]);
        av[i] = t.x;
        av[i + 1] = t.y;
        av[i + 2] = t.z;
        av[i + 3] = t.w;
      }
#pragma unroll
      for (int j = 0; j < C::TN; j += 4) {
        const float4 t = *reinterpret_cast<const float4 *>(&Bs[buf][k][tx * C::TN + j]);
        bv[j] = t.x;
        bv[j + 1] = t.y;
        bv[j + 2] = t.z;
        bv[j + 3] = t.w;
      }
#pragma unroll
      for (int i = 0; i < C::TM; i++)
#pragma unroll
        for (int j = 0; j < C::TN; j++)
          acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    if (kt + 1 < ktiles)
      store_smem(buf ^ 1); /* buf ^ 1 was last read before the previous barrier */
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < C::TM; i++) {
    const int gr = m0 + ty * C::TM + i;
    if (gr >= a.M)
      continue;
#pragma unroll
    for (int j = 0; j < C::TN; j++) {
      const int gc = n0 + tx * C::TN + j;
      if (gc < a.N) {
        float v = a.alpha * acc[i][j];
        if (a.bias)
          v += a.beta * a.bias[gc];
        Cp[(int64_t)gr * a.N + gc] = v;
      }
    }
  }
}

using SimtCfg0 = SimtCfg<128, 128, 8, 8, 8>;
using SimtCfg1 = SimtCfg<128, 64, 8, 8, 4>;
using SimtCfg2 = SimtCfg<64, 64, 8, 4, 4>;
using SimtCfg3 = SimtCfg<64, 128, 8, 4, 8>;
constexpr int kSimtNcfg = 4;

template <typename C> inline const char *simt_name_of() {
  static char buf[48];
  snprintf(buf, sizeof buf, "simt,tile=%dx%dx%d,thread=%dx%d", C::BM, C::BN, C::BK, C::TM, C::TN);
  return buf;
}

template <typename C>
inline cudaError_t simt_launch(const MmArgs<float> &a, int batch, cudaStream_t s) {
  dim3 grid((unsigned)ceil_div(a.N, C::BN), (unsigned)ceil_div(a.M, C::BM), (unsigned)batch);
  if (grid.y > 65535u || grid.z > 65535u)
    return cudaErrorInvalidConfiguration;
  mm_simt_kernel<C><<<grid, C::THREADS, 0, s>>>(a);
  return cudaGetLastError();
}

/* Configuration `cfg` of the dtype's kernel family. */
template <typename T> inline int mm_ncfg() { return sizeof(T) == 4 ? kSimtNcfg : kTcNcfg; }

template <typename T> inline const char *mm_cfg_name(int cfg) {
  if constexpr (sizeof(T) == 4) {
    switch (cfg) {
    case 0: return simt_name_of<SimtCfg0>();
    case 1: return simt_name_of<SimtCfg1>();
    case 2: return simt_name_of<SimtCfg2>();
    default: return simt_name_of<SimtCfg3>();
    }
  } else {
    switch (cfg) {
    case 0: return tc_name_of<TcCfg0>();
    case 1: return tc_name_of<TcCfg1>();
    case 2: return tc_name_of<TcCfg2>();
    case 3: return tc_name_of<TcCfg3>();
    case 4: return tc_name_of<TcCfg4>();
    default: return tc_name_of<TcCfg5>();
    }
  }
}

/* Raise the dynamic shared-memory limit of every tensor-core variant (host
 * side; done in prepare(), outside any capture). */
template <typename T> inline cudaError_t mm_set_attrs() {
  if constexpr (sizeof(T) == 4) {
    return cudaSuccess;
  } else {
    cudaError_t e;
    if ((e = tc_attr<TcCfg0, T>()) != cudaSuccess) return e;
    if ((e = tc_attr<TcCfg1, T>()) != cudaSuccess) return e;
    if ((e = tc_attr<TcCfg2, T>()) != cudaSuccess) return e;
    if ((e = tc_attr<TcCfg3, T>()) != cudaSuccess) return e;
    if ((e = tc_attr<TcCfg4, T>()) != cudaSuccess) return e;
    return tc_attr<TcCfg5, T>();
  }
}

template <typename T>
inline cudaError_t mm_candidate_launch(int cfg, const MmArgs<T> &a, int batch, cudaStream_t s) {
  if constexpr (sizeof(T) == 4) {
    switch (cfg) {
    case 0: return simt_launch<SimtCfg0>(a, batch, s);
    case 1: return simt_launch<SimtCfg1>(a, batch, s);
    case 2: return simt_launch<SimtCfg2>(a, batch, s);
    default: return simt_launch<SimtCfg3>(a, batch, s);
    }
  } else {
    const bool aligned = a.K % 8 == 0 && a.N % 8 == 0 && aligned16(a.A) && aligned16(a.B) &&
                         aligned16(a.C);
    switch (cfg) {
    case 0: return tc_launch<TcCfg0>(a, batch, aligned, s);
    case 1: return tc_launch<TcCfg1>(a, batch, aligned, s);
    case 2: return tc_launch<TcCfg2>(a, batch, aligned, s);
    case 3: return tc_launch<TcCfg3>(a, batch, aligned, s);
    case 4: return tc_launch<TcCfg4>(a, batch, aligned, s);
    default: return tc_launch<TcCfg5>(a, batch, aligned, s);
    }
  }
}

/* Without autotuning: big tiles unless they leave most SMs idle. */
template <typename T> inline int mm_default_cfg(const zlb_env_t *env, int64_t m, int64_t n,
                                                int64_t batch) {
  const int64_t big = ceil_div(m, 128) * ceil_div(n, 128) * batch;
  if (sizeof(T) == 4)
    return big >= sm_count(env) ? 0 : 2;
  return big >= sm_count(env) ? 0 : 4;
}

/* ---- mv candidate: a warp per row ------------------------------------------------ */

template <typename T>
__global__ void __launch_bounds__(256) mv_warp_kernel(const T *__restrict__ A,
                                                      const T *__restrict__ x, T *__restrict__ y,
                                                      int64_t m, int64_t k, bool vec) {
  constexpr int E = vec16<T>();
  const int lane = threadIdx.x & 31;
  const int64_t row = (int64_t)blockIdx.x * 8 + (threadIdx.x >> 5);
  if (row >= m)
    return; /* whole warps leave together */
  const T *ar = A + row * k;
  float acc = 0.0f;
  if (vec) {
    const int64_t nv = k / E;
#pragma unroll 4
    for (int64_t v = lane; v < nv; v += 32) {
      const Pack<T, E> pa = load_pack<T, E>(ar, v), px = load_pack<T, E>(x, v);
#pragma unroll
      for (int e = 0; e < E; e++)
        acc = fmaf(to_f(pa.v[e]), to_f(px.v[e]), acc);
    }
  } else {
    for (int64_t i = lane; i < k; i += 32)
      acc = fmaf(to_f(ar[i]), to_f(x[i]), acc);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0)
    y[row] = from_f<T>(acc);
}

/* addmm baseline: C <- bias broadcast, then GEMM with beta = 1. */
template <typename T>
__global__ void bias_rows_kernel(const T *__restrict__ bias, T *__restrict__ c, int64_t m,
                                 int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m * n;
       i += (int64_t)gridDim.x * blockDim.x)
    c[i] = bias[i % n];
}

/* ---- the operators ----------------------------------------------------------------- */

/* Priv: b (batch), m, cols (N), k. */
template <int KIND> struct BlasOp {
  static constexpr const char *name() {
    return KIND == BK_MM ? "mm" : KIND == BK_BMM ? "bmm" : KIND == BK_ADDMM ? "addmm" : "mv";
  }

  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    int64_t n = 0;
    ZLBC_TRY(shape_numel(env, c, name(), &n));
    const zlb_shape_t *s = &c->shape;
    int64_t B = 1, M, N, K;
    if (s->ndim == 4) {
      B = s->dims[0];
      M = s->dims[1];
      N = s->dims[2];
      K = s->dims[3];
    } else if (s->ndim == 3) {
      M = s->dims[0];
      N = s->dims[1];
      K = s->dims[2];
    } else if (s->ndim == 2 && KIND == BK_MV) {
      M = s->dims[0];
      N = 1;
      K = s->dims[1];
    } else {
      return errf(env, ZLB_EINVAL, "%s: shape must be [B, M, N, K] or [M, N, K]%s, got %d extents",
                  name(), KIND == BK_MV ? " or [M, K]" : "", s->ndim);
    }
    if (KIND != BK_BMM)
      B = 1;
    if (KIND == BK_MV)
      N = 1;
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || B > 65535)
      return errf(env, ZLB_EINVAL, "%s: M, N, K must be below 2^31 and B at most 65535", name());
    ZLBC_NEW_PRIV(env, c, p);
    p->b = B;
    p->m = M;
    p->cols = N;
    p->k = K;
    const zlb_dtype_t dt = c->dtype;
    c->detail[0] = 0;
    int64_t d[3];
    if (KIND == BK_MV) {
      c->n_in = 2;
      tensor_set2(&c->in[0], "A", dt, M, K, ZLB_FILL_NORMAL, 0.0, 1.0);
      tensor_set1(&c->in[1], "x", dt, K, ZLB_FILL_NORMAL, 0.0, 1.0);
      c->n_out = 1;
      tensor_set1(&c->out[ZLB_BASELINE][0], "y", dt, M, ZLB_FILL_NONE, 0, 0);
      appendf(c->detail, sizeof c->detail, "[%lld, %lld], [%lld]", (long long)M, (long long)K,
              (long long)K);
      c->bytes = (double)(M * K + K + M) * dsize(dt);
      c->flops = 2.0 * (double)M * (double)K;
    } else {
      int i0 = 0;
      c->n_in = KIND == BK_ADDMM ? 3 : 2;
      if (KIND == BK_ADDMM) {
        tensor_set1(&c->in[0], "bias", dt, N, ZLB_FILL_NORMAL, 0.0, 1.0);
        appendf(c->detail, sizeof c->detail, "[%lld], ", (long long)N);
        i0 = 1;
      }
      const int nd = KIND == BK_BMM ? 3 : 2;
      const int o = nd - 2;
      d[0] = B;
      d[o] = M;
      d[o + 1] = K;
      tensor_set(&c->in[i0], "a", dt, nd, d, ZLB_FILL_NORMAL, 0.0, 1.0);
      fmt_dims(c->detail, sizeof c->detail, nd, d);
      d[o] = K;
      d[o + 1] = N;
      tensor_set(&c->in[i0 + 1], "b", dt, nd, d, ZLB_FILL_NORMAL, 0.0, 1.0);
      appendf(c->detail, sizeof c->detail, ", ");
      fmt_dims(c->detail, sizeof c->detail, nd, d);
      d[o] = M;
      d[o + 1] = N;
      c->n_out = 1;
      tensor_set(&c->out[ZLB_BASELINE][0], "out", dt, nd, d, ZLB_FILL_NONE, 0, 0);
      c->bytes = (double)B * (double)(M * K + K * N + M * N) * dsize(dt) +
                 (KIND == BK_ADDMM ? (double)N * dsize(dt) : 0.0);
      c->flops = 2.0 * (double)B * (double)M * (double)N * (double)K +
                 (KIND == BK_ADDMM ? (double)M * (double)N : 0.0);
    }
    c->check = ZLB_CHECK_CLOSE;
    c->reduce_n = (double)K;
    snprintf(c->config[ZLB_BASELINE], sizeof c->config[0], "%s",
             KIND == BK_BMM ? "cublasGemmStridedBatchedEx" : "cublasGemmEx");
    if (KIND == BK_MV) {
      snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "warp-per-row,block=256");
    } else {
      int cfg = 0;
      dispatch_float(env, dt, [&](auto tag) {
        using T = typename decltype(tag)::type;
        cfg = mm_default_cfg<T>(env, M, N, B);
        snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "%s", mm_cfg_name<T>(cfg));
        return 0;
      });
      p->cfg[ZLB_CANDIDATE] = cfg;
    }
    return 0;
  }

  template <typename T> static MmArgs<T> args(const zlb_case_t *c, int which) {
    const Priv *p = priv_of(c);
    const int i0 = KIND == BK_ADDMM ? 1 : 0;
    MmArgs<T> a;
    a.A = static_cast<const T *>(c->in[i0].data);
    a.B = static_cast<const T *>(c->in[i0 + 1].data);
    a.bias = KIND == BK_ADDMM ? static_cast<const T *>(c->in[0].data) : nullptr;
    a.C = static_cast<T *>(c->out[which][0].data);
    a.M = (int)p->m;
    a.N = (int)p->cols;
    a.K = (int)p->k;
    a.sA = p->m * p->k;
    a.sB = p->k * p->cols;
    a.sC = p->m * p->cols;
    a.alpha = 1.0f;
    a.beta = 1.0f;
    return a;
  }

  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    Priv *p = priv_of(c);
    if (which == ZLB_BASELINE) {
      cublasHandle_t h = nullptr;
      ZLBC_CUBLAS(env, cublasCreate(&h));
      p->handle[which] = h;
      p->drop_handle = drop_cublas;
      ZLBC_CUBLAS(env, cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
      return ws_alloc(env, c, which, kCublasWs);
    }
    if constexpr (KIND == BK_MV)
      return 0;
    else
      return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      ZLBC_CUDA(env, mm_set_attrs<T>());
      if (!env->autotune)
        return 0;
      char key[160];
      tune_key(key, sizeof key, name(), c);
      int best = tune_lookup(key);
      if (best < 0) {
        const MmArgs<T> a = args<T>(c, ZLB_CANDIDATE);
        ZLBC_TRY(tune_time(env, mm_ncfg<T>(), 3, [&](int cfg, cudaStream_t s) {
          cudaError_t e = mm_candidate_launch<T>(cfg, a, (int)p->b, s);
          return e == cudaSuccess ? 0 : cuda_fail(env, "mm autotune launch", e);
        }, &best));
        tune_store(key, best);
      }
      p->cfg[ZLB_CANDIDATE] = best;
      snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "%s", mm_cfg_name<T>(best));
      return 0;
    });
  }

  template <typename T> static int baseline(zlb_env_t *env, zlb_case_t *c, cudaStream_t s) {
    Priv *p = priv_of(c);
    cublasHandle_t h = static_cast<cublasHandle_t>(p->handle[ZLB_BASELINE]);
    if (!h || !p->ws[ZLB_BASELINE])
      return errf(env, ZLB_EINVAL, "%s: prepare() was not called", name());
    ZLBC_CUBLAS(env, cublasSetStream(h, s));
    /* after SetStream, which resets the workspace to the default pool */
    ZLBC_CUBLAS(env, cublasSetWorkspace(h, p->ws[ZLB_BASELINE], p->ws_bytes[ZLB_BASELINE]));
    const cudaDataType_t ty = cuda_type<T>();
    const float one = 1.0f, zero = 0.0f;
    const int M = (int)p->m, N = (int)p->cols, K = (int)p->k;
    if constexpr (KIND == BK_MV) {
      const T *A = static_cast<const T *>(c->in[0].data);
      const T *x = static_cast<const T *>(c->in[1].data);
      T *y = static_cast<T *>(c->out[ZLB_BASELINE][0].data);
      ZLBC_CUBLAS(env, cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, 1, K, &one, A, ty, K, x, ty, K,
                                    &zero, y, ty, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if constexpr (KIND == BK_BMM) {
      /* row-major C = A B is column-major C^T = B^T A^T */
      const MmArgs<T> a = args<T>(c, ZLB_BASELINE);
      ZLBC_CUBLAS(env, cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, a.B, ty,
                                                  N, a.sB, a.A, ty, K, a.sA, &zero, a.C, ty, N, a.sC,
                                                  (int)p->b, CUBLAS_COMPUTE_32F,
                                                  CUBLAS_GEMM_DEFAULT));
    } else {
      const MmArgs<T> a = args<T>(c, ZLB_BASELINE);
      if constexpr (KIND == BK_ADDMM) {
        bias_rows_kernel<T><<<grid_for(env, p->m * p->cols, 256, 8), 256, 0, s>>>(a.bias, a.C, p->m,
                                                                                  p->cols);
        ZLBC_LAUNCHED(env, "bias_rows_kernel");
      }
      ZLBC_CUBLAS(env, cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, a.B, ty, N, a.A, ty,
                                    K, KIND == BK_ADDMM ? &one : &zero, a.C, ty, N,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
    return 0;
  }

  template <typename T> static int candidate(zlb_env_t *env, zlb_case_t *c, cudaStream_t s) {
    Priv *p = priv_of(c);
    if constexpr (KIND == BK_MV) {
      const T *A = static_cast<const T *>(c->in[0].data);
      const T *x = static_cast<const T *>(c->in[1].data);
      T *y = static_cast<T *>(c->out[ZLB_CANDIDATE][0].data);
      const bool vec = aligned16(A) && aligned16(x) && p->k % vec16<T>() == 0;
      mv_warp_kernel<T><<<(unsigned)ceil_div(p->m, 8), 256, 0, s>>>(A, x, y, p->m, p->k, vec);
      ZLBC_LAUNCHED(env, "mv_warp_kernel");
    } else {
      cudaError_t e = mm_candidate_launch<T>(p->cfg[ZLB_CANDIDATE], args<T>(c, ZLB_CANDIDATE),
                                             (int)p->b, s);
      if (e != cudaSuccess)
        return cuda_fail(env, sizeof(T) == 4 ? "mm_simt_kernel" : "mm_wmma_kernel", e);
    }
    return 0;
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      return which == ZLB_CANDIDATE ? candidate<T>(env, c, as_stream(stream))
                                    : baseline<T>(env, c, as_stream(stream));
    });
  }

  /* A 16x16x16 product (two of them for bmm) of dtype T with the call the
   * baseline makes, on h's stream; the data is discarded. */
  template <typename T> static cublasStatus_t tiny_call(cublasHandle_t h, void *buf) {
    constexpr int n = 16;
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t ty = cuda_type<T>();
    T *A = static_cast<T *>(buf), *B = A + 2 * n * n, *C = B + 2 * n * n;
    if constexpr (KIND == BK_BMM)
      return cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, ty, n,
                                        n * n, A, ty, n, n * n, &zero, C, ty, n, n * n, 2,
                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else
      return cublasGemmEx(h, KIND == BK_MV ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n,
                          KIND == BK_MV ? 1 : n, n, &one, A, ty, n, B, ty, n, &zero, C, ty, n,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }

  /* Once per process: cuBLAS's own start-up (the library, cublasLt and the
   * first product of each dtype: 0.08-0.16 s on an H200, measured in the
   * first row before) happens here instead of in the first row. */
  static int setup(zlb_env_t *env, uint32_t dtypes) {
    cublasHandle_t h = nullptr;
    void *buf = nullptr;
    int rc = 0;
    cudaError_t e = cudaMalloc(&buf, 6 * 16 * 16 * sizeof(float));
    if (e != cudaSuccess)
      return cuda_fail(env, "cudaMalloc", e);
    if ((e = cudaMemset(buf, 0, 6 * 16 * 16 * sizeof(float))) != cudaSuccess) {
      rc = cuda_fail(env, "cudaMemset", e);
    } else {
      cublasStatus_t st = cublasCreate(&h);
      for (int d = 0; d < ZLB_DT_COUNT && st == CUBLAS_STATUS_SUCCESS; d++)
        if ((dtypes & ZLB_DT_FLOATS) & ZLB_DT_BIT(d))
          dispatch_float(env, (zlb_dtype_t)d, [&](auto tag) {
            st = tiny_call<typename decltype(tag)::type>(h, buf);
            return 0;
          });
      if (st != CUBLAS_STATUS_SUCCESS)
        rc = lib_fail(env, "cuBLAS set-up", cublas_name(st));
      else if ((e = cudaDeviceSynchronize()) != cudaSuccess)
        rc = cuda_fail(env, "cudaDeviceSynchronize", e);
    }
    if (h)
      cublasDestroy(h);
    cudaFree(buf);
    return rc;
  }
};

#define BLAS_OP(KIND, DESC, DOC, CAND_FLAGS)                                                     \
  ZLBC_OP_SETUP(BlasOp<KIND>::name(), "blas", ZLB_DT_FLOATS, DESC, DOC, &BlasOp<KIND>::case_init, \
                nullptr, ZLBC_IMPL("cublas", 0, &BlasOp<KIND>::prepare, &BlasOp<KIND>::enqueue), \
                ZLBC_IMPL("zlb", CAND_FLAGS, &BlasOp<KIND>::prepare, &BlasOp<KIND>::enqueue),    \
                &BlasOp<KIND>::setup)

const zlb_op_t kBlasOps[] = {
    BLAS_OP(BK_MM, "B, M, N, K (B ignored) or M, N, K", "[M, K] @ [K, N]", ZLB_IMPL_AUTOTUNES),
    BLAS_OP(BK_BMM, "B, M, N, K or M, N, K (B = 1)", "[B, M, K] @ [B, K, N]", ZLB_IMPL_AUTOTUNES),
    BLAS_OP(BK_ADDMM, "B, M, N, K (B ignored) or M, N, K",
            "bias[N] + [M, K] @ [K, N] (alpha = beta = 1)", ZLB_IMPL_AUTOTUNES),
    BLAS_OP(BK_MV, "M, K or B, M, N, K (uses M, K)", "[M, K] @ [K]", 0u),
};

} // namespace
} // namespace zlbc

int zlbc_register_blas(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kBlasOps, sizeof zlbc::kBlasOps / sizeof zlbc::kBlasOps[0]);
}
