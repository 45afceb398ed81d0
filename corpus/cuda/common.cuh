/* Shared helpers for the CUDA operator corpus: error reporting, dtype
 * dispatch, vector access, row-group reductions, Philox4x32-10, per-case
 * state and the autotune cache. Everything here has internal linkage (an
 * anonymous namespace) so that libzlb_ops_cuda.so exports only
 * zlb_ops_register; the few cross-file entry points are hidden. */
#ifndef ZLB_CORPUS_CUDA_COMMON_CUH
#define ZLB_CORPUS_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <assert.h>
#include <dlfcn.h> /* NVTX (inside CUB) calls dlopen: declare it visible first */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mutex>
#include <type_traits>
#include <new>

#include "zlbench/error.h"
#include "zlbench/op.h"

/* Nothing below is exported (no CMake visibility flags apply to this
 * library); zlb_ops_register carries ZLB_OP_EXPORT explicitly. Headers of
 * compiled vendor libraries (cudart, cuBLAS, cuRAND) must come before this
 * line: hidden declarations of their functions would not link. Header-only
 * CCCL (CUB) comes after it, so its instantiations stay hidden. */
#pragma GCC visibility push(hidden)

#define ZLBC_HIDDEN __attribute__((visibility("hidden")))

/* Per-family registration (one per .cu file), called by register.cu. */
ZLBC_HIDDEN int zlbc_register_unary(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbc_register_binary(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbc_register_reduce(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbc_register_norm(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbc_register_softmax(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbc_register_scan(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbc_register_sort(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbc_register_random(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbc_register_blas(zlb_op_registrar_t *r);
ZLBC_HIDDEN int zlbc_register_movement(zlb_op_registrar_t *r);

/* sort.cu's LSD radix sort, shared with randperm (random.cu): sorts the n
 * uint32 keys stored at the start of `ws` (stable, ascending; clobbered)
 * and writes each sorted position's original position, as int64, to
 * idx_out. `ws` holds zlbc_radix_argsort_ws_bytes(n) bytes from prepare();
 * n < 2^31. Launches on `stream` only. */
ZLBC_HIDDEN size_t zlbc_radix_argsort_ws_bytes(int64_t n);
ZLBC_HIDDEN cudaError_t zlbc_radix_argsort_u32(void *ws, int64_t n, int64_t *idx_out,
                                               int sm_count, cudaStream_t stream);

/* Return the cudaError of `call` (with "call: name: text" in errbuf). */
#define ZLBC_CUDA(env, call)                                    \
  do {                                                          \
    cudaError_t zlbc_e_ = (call);                               \
    if (zlbc_e_ != cudaSuccess)                                 \
      return zlbc::cuda_fail((env), #call, zlbc_e_);            \
  } while (0)

/* After a launch: return the launch error, naming the kernel. */
#define ZLBC_LAUNCHED(env, name)                                \
  do {                                                          \
    cudaError_t zlbc_e_ = cudaGetLastError();                   \
    if (zlbc_e_ != cudaSuccess)                                 \
      return zlbc::cuda_fail((env), (name), zlbc_e_);           \
  } while (0)

/* Return lib_fail() when a library `call` does not give `ok`; NAME(status)
 * names what it gave. */
#define ZLBC_LIB(env, call, ok, NAME)                           \
  do {                                                          \
    auto zlbc_st_ = (call);                                     \
    if (zlbc_st_ != (ok))                                       \
      return zlbc::lib_fail((env), #call, NAME(zlbc_st_));      \
  } while (0)

/* Propagate a nonzero int status. */
#define ZLBC_TRY(expr)                                          \
  do {                                                          \
    int zlbc_r_ = (expr);                                       \
    if (zlbc_r_ != 0)                                           \
      return zlbc_r_;                                           \
  } while (0)

/* A zlb_op_t / zlb_impl_t initialiser for this backend; ZLBC_OP_DEV for
 * an operator whose own compare() has a device version. */
#define ZLBC_OP_DEV(NAME, FAMILY, DTYPES, SHAPE_DESC, DOC, INIT, COMPARE, BASE, CAND,   \
                    COMPARE_DEV)                                                        \
  {ZLB_OP_ABI_VERSION, NAME, FAMILY, "cuda", DTYPES, SHAPE_DESC, DOC, INIT,            \
   zlbc::case_release, COMPARE, BASE, CAND, COMPARE_DEV, nullptr}
#define ZLBC_OP(NAME, FAMILY, DTYPES, SHAPE_DESC, DOC, INIT, COMPARE, BASE, CAND)       \
  {ZLB_OP_ABI_VERSION, NAME, FAMILY, "cuda", DTYPES, SHAPE_DESC, DOC, INIT,            \
   zlbc::case_release, COMPARE, BASE, CAND, nullptr, nullptr}
/* An operator with a once-per-process set-up (zlb_op_t.setup). */
#define ZLBC_OP_SETUP(NAME, FAMILY, DTYPES, SHAPE_DESC, DOC, INIT, COMPARE, BASE, CAND, SETUP) \
  {ZLB_OP_ABI_VERSION, NAME, FAMILY, "cuda", DTYPES, SHAPE_DESC, DOC, INIT,                 \
   zlbc::case_release, COMPARE, BASE, CAND, nullptr, SETUP}
#define ZLBC_IMPL(NAME, FLAGS, PREPARE, ENQUEUE) {NAME, FLAGS, PREPARE, ENQUEUE, zlbc::impl_release}

namespace zlbc {
namespace {

/* ---- errors ------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) inline int errf(zlb_env_t *env, int code,
                                                      const char *fmt, ...) {
  if (env && env->errbuf && env->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(env->errbuf, env->errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

inline int cuda_fail(zlb_env_t *env, const char *what, cudaError_t e) {
  return errf(env, (int)e, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* A vendor library's failed call (cuBLAS, cuBLASLt, cuRAND, cuDNN), its
 * status named: the pending CUDA error if there is one (a device fault must
 * reach the harness as such), else ZLB_EOP. */
inline int lib_fail(zlb_env_t *env, const char *what, const char *status) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return cuda_fail(env, what, e);
  return errf(env, ZLB_EOP, "%s: %s", what, status);
}

/* Device streams travel as void*. */
inline cudaStream_t as_stream(void *s) { return static_cast<cudaStream_t>(s); }

inline int sm_count(const zlb_env_t *env) {
  return env && env->sm_count > 0 ? env->sm_count : 132;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Blocks for a grid-stride loop over `work` thread-items: enough to fill the
 * chip (`per_sm` blocks of `threads` on each SM), never more than needed. */
inline unsigned grid_for(const zlb_env_t *env, int64_t work, int threads, int per_sm) {
  int64_t need = ceil_div(work, threads);
  int64_t cap = (int64_t)sm_count(env) * per_sm;
  int64_t g = need < cap ? need : cap;
  return (unsigned)(g < 1 ? 1 : g);
}

/*
 * Host-side checks of large outputs (compare()) split their rows over
 * threads: fn(begin, end) for contiguous row ranges, one per thread, the
 * calling thread included. A thread that cannot start leaves its range to
 * the caller. Results must not depend on the split.
 */
template <typename F> inline void parallel_rows(int64_t rows, F &&fn) {
  struct Job {
    F *fn;
    int64_t b, e;
    static void *run(void *a) {
      Job *j = static_cast<Job *>(a);
      (*j->fn)(j->b, j->e);
      return nullptr;
    }
  };
  enum { kMaxThreads = 16, kMinRows = 64 };
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int nt = (int)min64(min64(ncpu > 0 ? ncpu : 1, kMaxThreads), max64(rows / kMinRows, 1));
  Job job[kMaxThreads];
  pthread_t tid[kMaxThreads];
  bool started[kMaxThreads] = {};
  for (int t = 0; t < nt; t++)
    job[t] = Job{&fn, rows * t / nt, rows * (t + 1) / nt};
  for (int t = 1; t < nt; t++)
    started[t] = pthread_create(&tid[t], nullptr, &Job::run, &job[t]) == 0;
  fn(job[0].b, job[0].e);
  for (int t = 1; t < nt; t++) {
    if (started[t])
      pthread_join(tid[t], nullptr);
    else
      fn(job[t].b, job[t].e);
  }
}

/*
 * Element-wise host checks over [0, n) on parallel_rows threads, in blocks
 * of 4096 elements (so a thread gets at least 64 blocks). scan(b, e, &cnt)
 * visits [b, e) in order, adds what it counts to cnt and returns the index
 * of the first failing element it meets (it may stop there), or -1.
 * Returns the lowest failing index overall, or -1 with *count the sum of
 * every range's count. Neither depends on the split: each thread's ranges
 * come in order, so its first failure is the lowest of its share, and
 * integer sums are exact in any order. Counts are complete only when
 * nothing failed (a range stops at its first failure).
 */
template <typename F> inline int64_t parallel_first_fail(int64_t n, int64_t *count, F &&scan) {
  enum { kBlock = 4096 };
  std::mutex lock;
  int64_t first = -1, total = 0;
  parallel_rows(ceil_div(n, kBlock), [&](int64_t b0, int64_t b1) {
    int64_t cnt = 0;
    const int64_t bad = scan(b0 * kBlock, min64(b1 * kBlock, n), cnt);
    std::lock_guard<std::mutex> g(lock);
    total += cnt;
    if (bad >= 0 && (first < 0 || bad < first))
      first = bad;
  });
  if (count)
    *count = total;
  return first;
}

inline bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* ---- element types ----------------------------------------------------- */

template <typename T> struct Tag { using type = T; };

typedef __half f16;
typedef __nv_bfloat16 bf16;

template <typename T> struct DtOf;
template <> struct DtOf<float> { static constexpr zlb_dtype_t v = ZLB_DT_FLOAT32; };
template <> struct DtOf<f16> { static constexpr zlb_dtype_t v = ZLB_DT_FLOAT16; };
template <> struct DtOf<bf16> { static constexpr zlb_dtype_t v = ZLB_DT_BFLOAT16; };

/* Run f(Tag<T>{}) for the float dtype `dt`; ZLB_EINVAL for anything else. */
template <typename F> inline int dispatch_float(zlb_env_t *env, zlb_dtype_t dt, F &&f) {
  switch (dt) {
  case ZLB_DT_FLOAT16: return f(Tag<f16>{});
  case ZLB_DT_BFLOAT16: return f(Tag<bf16>{});
  case ZLB_DT_FLOAT32: return f(Tag<float>{});
  default:
    return errf(env, ZLB_EINVAL, "dtype %s is not supported here", zlb_dtype_name(dt));
  }
}

/* Element i of a host array as a double, like zlb_load but with the dtype
 * fixed at compile time: host checks of large outputs dispatch once, not
 * per element. */
template <typename T> inline double host_load(const void *p, int64_t i);
template <> inline double host_load<float>(const void *p, int64_t i) {
  return static_cast<const float *>(p)[i];
}
/* float16 through a table of all 65536 values (256 KiB, built once):
 * converting bit by bit branches on the exponent, which mispredicts on
 * data mixing zeros and normal values, and costs several times more. */
inline const float *half_table() {
  static const float *table = [] {
    static float v[65536];
    for (uint32_t b = 0; b < 65536; b++)
      v[b] = zlb_half_to_float((uint16_t)b);
    return v;
  }();
  return table;
}
template <> inline double host_load<f16>(const void *p, int64_t i) {
  return half_table()[static_cast<const uint16_t *>(p)[i]];
}
template <> inline double host_load<bf16>(const void *p, int64_t i) {
  return zlb_bf16_to_float(static_cast<const uint16_t *>(p)[i]);
}

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(f16 x) { return __half2float(x); }
__device__ __forceinline__ float to_f(bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f(uint8_t x) { return x ? 1.0f : 0.0f; }

template <typename T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ f16 from_f<f16>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ bf16 from_f<bf16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ uint8_t from_f<uint8_t>(float x) { return x != 0.0f; }

/* -inf: the identity of max. */
__device__ __forceinline__ float neg_inf() { return -__int_as_float(0x7f800000); }

/* ---- device versions of operators' own checks (compare_device) ------- */

/* "No failure" in a lowest-failing-index word. */
constexpr unsigned long long kNoFail = ~0ull;

/* Record index i as failing: the word ends up holding the lowest failing
 * index, whatever the order threads run in. Only failing elements pay. */
__device__ __forceinline__ void note_fail(unsigned long long *first, int64_t i) {
  if ((unsigned long long)i < *reinterpret_cast<volatile unsigned long long *>(first))
    atomicMin(first, (unsigned long long)i);
}

/* Add a per-thread count to *total, one atomic per warp. Every thread of
 * every (full) warp must call it. */
__device__ __forceinline__ void warp_add(unsigned long long *total, unsigned long long v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0 && v)
    atomicAdd(total, v);
}

/* Device memory for a check, freed with the object. */
struct DevBuf {
  zlb_env_t *env;
  void *p = nullptr;
  explicit DevBuf(zlb_env_t *e) : env(e) {}
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
  ~DevBuf() {
    if (p)
      env->free(env, p);
  }
  /* `bytes` of device memory, every byte set to `byte` on stream s. Where
   * the device has no room, ZLB_EUNSUPPORTED: the harness then runs
   * compare() on host copies instead of failing the row. */
  int get(size_t bytes, int byte, cudaStream_t s) {
    int rc = env->alloc(env, bytes ? bytes : 1, &p);
    if (rc)
      return errf(env, ZLB_EUNSUPPORTED, "device check: cannot allocate %zu bytes (%d)", bytes,
                  rc);
    ZLBC_CUDA(env, cudaMemsetAsync(p, byte, bytes ? bytes : 1, s));
    return 0;
  }
  template <typename T> T *as() const { return static_cast<T *>(p); }
};

/* Copy `bytes` from the device once the work on s is done. */
inline int dev_read(zlb_env_t *env, cudaStream_t s, void *dst, const void *src, size_t bytes) {
  ZLBC_CUDA(env, cudaStreamSynchronize(s));
  return env->download(env, dst, src, bytes);
}

/* Element i of a device tensor of dtype dt, as compare() would read it. */
inline int dev_load(zlb_env_t *env, cudaStream_t s, zlb_dtype_t dt, const void *p, int64_t i,
                    double *out) {
  unsigned char b[8] = {0};
  const size_t es = zlb_dtype_size(dt);
  ZLBC_TRY(dev_read(env, s, b, static_cast<const unsigned char *>(p) + (size_t)i * es, es));
  *out = zlb_load(dt, b, 0);
  return 0;
}
inline int dev_load_i64(zlb_env_t *env, cudaStream_t s, const void *p, int64_t i, int64_t *out) {
  return dev_read(env, s, out, static_cast<const int64_t *>(p) + i, sizeof(int64_t));
}

/* Threads per block of the check kernels (a multiple of 32: warp_add). */
constexpr int kCheckThreads = 256;


/* ---- vector access ----------------------------------------------------- */

/* N elements loaded or stored as one aligned access (16 bytes or less). */
template <typename T, int N> struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <typename T, int N>
__device__ __forceinline__ Pack<T, N> load_pack(const T *p, int64_t i) {
  return reinterpret_cast<const Pack<T, N> *>(p)[i];
}
template <typename T, int N>
__device__ __forceinline__ void store_pack(T *p, int64_t i, const Pack<T, N> &v) {
  reinterpret_cast<Pack<T, N> *>(p)[i] = v;
}

/* Elements per 16-byte access. */
template <typename T> constexpr int vec16() { return (int)(16 / sizeof(T)); }

/* ---- warp and row-group reductions ------------------------------------ */

/* xor-shuffle any trivially copyable 4-byte-multiple value. */
template <typename S>
__device__ __forceinline__ S shfl_xor(const S &v, int lane_mask, int width) {
  static_assert(sizeof(S) % 4 == 0, "shuffle needs 4-byte words");
  constexpr int W = (int)(sizeof(S) / 4);
  int w[W];
  memcpy(w, &v, sizeof(S));
#pragma unroll
  for (int i = 0; i < W; i++)
    w[i] = __shfl_xor_sync(0xffffffffu, w[i], lane_mask, width);
  S r;
  memcpy(&r, w, sizeof(S));
  return r;
}

/*
 * Reduce `v` over a group of G consecutive threads (G a power of two, 1 to
 * 1024). Every thread of the block must call it (no early exits). Groups
 * wider than a warp need one group per block and `smem` room for G/32
 * values; every thread of the group gets the result.
 */
template <int G, typename S, typename F>
__device__ __forceinline__ S group_reduce(S v, F comb, S *smem) {
  constexpr int W = G < 32 ? G : 32;
#pragma unroll
  for (int off = W / 2; off > 0; off >>= 1)
    v = comb(v, shfl_xor(v, off, W));
  if constexpr (G > 32) {
    constexpr int NW = G / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads(); /* smem may still be read by an earlier call */
    if (lane == 0)
      smem[warp] = v;
    __syncthreads();
    v = smem[0];
#pragma unroll
    for (int i = 1; i < NW; i++)
      v = comb(v, smem[i]);
  }
  return v;
}

/*
 * Exclusive prefix sum of one int64 per thread over the whole block
 * (blockDim.x a multiple of 32, at most 1024). `smem` holds 33 int64.
 * Returns the thread's exclusive prefix; *total gets the block sum.
 */
__device__ __forceinline__ int64_t block_exclusive_sum(int64_t v, int64_t *smem, int64_t *total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  int64_t inc = v;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    int64_t y = __shfl_up_sync(0xffffffffu, inc, off);
    if (lane >= off)
      inc += y;
  }
  __syncthreads(); /* smem reuse across calls */
  if (lane == 31)
    smem[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    int64_t s = lane < nwarps ? smem[lane] : 0;
    int64_t si = s;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      int64_t y = __shfl_up_sync(0xffffffffu, si, off);
      if (lane >= off)
        si += y;
    }
    if (lane < nwarps)
      smem[lane] = si - s; /* exclusive prefix of warp totals */
    if (lane == 31)
      smem[32] = si;
  }
  __syncthreads();
  *total = smem[32];
  return smem[warp] + inc - v;
}

/* ---- Philox4x32-10 (Salmon et al., Random123) -------------------------- */

__device__ __forceinline__ uint32_t mulhilo32(uint32_t a, uint32_t b, uint32_t *hi) {
  uint64_t p = (uint64_t)a * (uint64_t)b;
  *hi = (uint32_t)(p >> 32);
  return (uint32_t)p;
}

__device__ __forceinline__ uint4 philox4x32_10(uint4 c, uint2 k) {
#pragma unroll
  for (int r = 0; r < 10; r++) {
    if (r) {
      k.x += 0x9E3779B9u;
      k.y += 0xBB67AE85u;
    }
    uint32_t hi0, hi1;
    uint32_t lo0 = mulhilo32(0xD2511F53u, c.x, &hi0);
    uint32_t lo1 = mulhilo32(0xCD9E8D57u, c.z, &hi1);
    c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}

/* Four 32-bit values for counter block `block` of stream `seed`. */
__device__ __forceinline__ uint4 philox_block(uint64_t seed, uint64_t block) {
  return philox4x32_10(make_uint4((uint32_t)block, (uint32_t)(block >> 32), 0u, 0u),
                       make_uint2((uint32_t)seed, (uint32_t)(seed >> 32)));
}

/* 24 random bits to [0, 1) and to (0, 1]. */
__device__ __forceinline__ float u01(uint32_t x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }
__device__ __forceinline__ float u01_open0(uint32_t x) {
  return (float)((x >> 8) + 1u) * (1.0f / 16777216.0f);
}

/*
 * Reserve `nvalues` 32-bit random values from env->rng: returns the first
 * Philox counter block (4 values each) and advances the offset by nvalues
 * rounded up to a multiple of 4.
 */
inline int rng_take(zlb_env_t *env, uint64_t nvalues, uint64_t *seed, uint64_t *first_block) {
  if (!env->rng)
    return errf(env, ZLB_EINVAL, "random operator: env->rng is NULL");
  uint64_t off = (env->rng->offset + 3u) / 4u * 4u;
  *seed = env->rng->seed;
  *first_block = off / 4u;
  env->rng->offset = off + (nvalues + 3u) / 4u * 4u;
  return 0;
}

/* ---- case state ---------------------------------------------------------- */

/*
 * What an operator keeps between calls: the geometry decoded by case_init
 * and, per implementation, a workspace, a pinned host buffer and a vendor
 * handle. release() frees one implementation's share; case_release frees
 * whatever is left and the struct.
 */
struct Priv {
  int64_t n;             /* elements of the main tensor */
  int64_t m, k, b;       /* rows, reduced/column extent, batch, ... per family */
  int64_t cols;          /* columns (N) */
  int64_t extra[4];      /* family-specific */
  int ndim;
  int64_t dims[ZLB_MAX_DIMS];
  void *ws[2];
  size_t ws_bytes[2];
  void *host[2];         /* cudaHostAlloc'ed */
  void *handle[2];       /* cublasHandle_t, curandGenerator_t, ... */
  void (*drop_handle)(void *handle);
  int cfg[2];            /* chosen launch configuration */
  int filled;            /* inputs the operator fills itself are ready */
};

inline Priv *priv_of(const zlb_case_t *c) { return static_cast<Priv *>(c->priv); }

/* Allocate c->priv; NULL when out of memory. Validate the shape first:
 * a failing case_init has nothing to release. */
inline Priv *priv_new(zlb_case_t *c) {
  Priv *p = new (std::nothrow) Priv();
  c->priv = p;
  return p;
}

#define ZLBC_NEW_PRIV(env, c, p)                                              \
  Priv *p = zlbc::priv_new(c);                                                \
  if (!p)                                                                     \
  return zlbc::errf((env), ZLB_ENOMEM, "cannot allocate the case state")

inline int ws_alloc(zlb_env_t *env, zlb_case_t *c, int which, size_t bytes) {
  Priv *p = priv_of(c);
  if (p->ws[which])
    return 0;
  if (bytes == 0)
    bytes = 16;
  int rc = env->alloc(env, bytes, &p->ws[which]);
  if (rc)
    return errf(env, rc, "workspace: cannot allocate %zu bytes", bytes);
  p->ws_bytes[which] = bytes;
  return 0;
}

inline int host_alloc(zlb_env_t *env, zlb_case_t *c, int which, size_t bytes) {
  Priv *p = priv_of(c);
  if (p->host[which])
    return 0;
  ZLBC_CUDA(env, cudaHostAlloc(&p->host[which], bytes, cudaHostAllocDefault));
  return 0;
}

/* zlb_impl_t.release for every operator. */
inline void impl_release(zlb_env_t *env, zlb_case_t *c, int which) {
  Priv *p = priv_of(c);
  if (!p)
    return;
  if (p->handle[which] && p->drop_handle)
    p->drop_handle(p->handle[which]);
  p->handle[which] = nullptr;
  if (p->ws[which])
    env->free(env, p->ws[which]);
  p->ws[which] = nullptr;
  p->ws_bytes[which] = 0;
  if (p->host[which])
    cudaFreeHost(p->host[which]);
  p->host[which] = nullptr;
}

/* zlb_op_t.case_release for every operator. */
inline void case_release(zlb_env_t *env, zlb_case_t *c) {
  if (!c->priv)
    return;
  impl_release(env, c, ZLB_BASELINE);
  impl_release(env, c, ZLB_CANDIDATE);
  delete priv_of(c);
  c->priv = nullptr;
}

/* Register `n` static operators. */
inline int add_ops(zlb_op_registrar_t *r, const zlb_op_t *ops, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int rc = r->add_op(r, &ops[i]);
    if (rc)
      return rc;
  }
  return 0;
}

/* ---- shapes -------------------------------------------------------------- */

/* "[a, b, c]" appended to buf. */
inline void fmt_dims(char *buf, size_t len, int ndim, const int64_t *dims) {
  size_t used = strlen(buf);
  if (used >= len)
    return;
  used += (size_t)snprintf(buf + used, len - used, "[");
  for (int i = 0; i < ndim && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (used < len)
    snprintf(buf + used, len - used, "]");
}

/* Append printf text to buf. */
__attribute__((format(printf, 3, 4))) inline void appendf(char *buf, size_t len,
                                                         const char *fmt, ...) {
  size_t used = strlen(buf);
  if (used >= len)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, len - used, fmt, ap);
  va_end(ap);
}

/* Validate the shape's extents (1 to 8 dims, each positive); *n = numel. */
inline int shape_numel(zlb_env_t *env, const zlb_case_t *c, const char *op, int64_t *n) {
  const zlb_shape_t *s = &c->shape;
  if (s->ndim < 1 || s->ndim > ZLB_MAX_DIMS)
    return errf(env, ZLB_EINVAL, "%s: shape needs 1 to %d extents, got %d", op, ZLB_MAX_DIMS,
                s->ndim);
  int64_t total = 1;
  for (int i = 0; i < s->ndim; i++) {
    if (s->dims[i] <= 0)
      return errf(env, ZLB_EINVAL, "%s: extent %d is %lld; extents must be positive", op, i,
                  (long long)s->dims[i]);
    if (total > ((int64_t)1 << 40) / s->dims[i])
      return errf(env, ZLB_EINVAL, "%s: shape has more than 2^40 elements", op);
    total *= s->dims[i];
  }
  *n = total;
  return 0;
}

/*
 * [.., N] as M rows of N (the last dim reduced / normalised / sorted). A
 * nested entry's first argument, when `dim_arg`, must name the last dim.
 */
inline int rows_cols(zlb_env_t *env, const zlb_case_t *c, const char *op, bool dim_arg,
                     int64_t *m, int64_t *ncols) {
  int64_t n = 0;
  ZLBC_TRY(shape_numel(env, c, op, &n));
  const zlb_shape_t *s = &c->shape;
  if (dim_arg && s->nargs >= 1 && s->args[0] != -1 && s->args[0] != s->ndim - 1)
    return errf(env, ZLB_EINVAL, "%s: only the last dim is supported (dim=%lld for %d dims)", op,
                (long long)s->args[0], s->ndim);
  *ncols = s->dims[s->ndim - 1];
  *m = n / *ncols;
  return 0;
}

inline void tensor_set(zlb_tensor_t *t, const char *name, zlb_dtype_t dt, int ndim,
                       const int64_t *dims, zlb_fill_t fill, double lo, double hi) {
  t->name = name;
  t->dtype = dt;
  t->ndim = ndim;
  for (int i = 0; i < ZLB_MAX_DIMS; i++)
    t->dims[i] = i < ndim ? dims[i] : 0;
  t->numel = 0; /* the harness computes it */
  t->fill = fill;
  t->lo = lo;
  t->hi = hi;
  t->data = nullptr;
}

inline void tensor_set1(zlb_tensor_t *t, const char *name, zlb_dtype_t dt, int64_t d0,
                        zlb_fill_t fill, double lo, double hi) {
  tensor_set(t, name, dt, 1, &d0, fill, lo, hi);
}

inline void tensor_set2(zlb_tensor_t *t, const char *name, zlb_dtype_t dt, int64_t d0,
                        int64_t d1, zlb_fill_t fill, double lo, double hi) {
  int64_t d[2] = {d0, d1};
  tensor_set(t, name, dt, 2, d, fill, lo, hi);
}

inline double dsize(zlb_dtype_t dt) { return (double)zlb_dtype_size(dt); }

/* Product of a tensor's extents (not relying on the harness's numel). */
inline int64_t numel_of(const zlb_tensor_t *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++)
    n *= t->dims[i];
  return n;
}

/* ---- autotune ------------------------------------------------------------ */

/*
 * Chosen configuration per (op, shape, dtype) key, so a second case with
 * the same key does not retune. One table per translation unit is enough:
 * each op's tuning lives in one file.
 */
struct TuneCache {
  std::mutex mu;
  int n = 0;
  char keys[256][160];
  int cfg[256];
};

inline TuneCache &tune_cache() {
  static TuneCache tc;
  return tc;
}

inline void tune_key(char *key, size_t len, const char *op, const zlb_case_t *c) {
  snprintf(key, len, "%s|%s|", op, zlb_dtype_name(c->dtype));
  fmt_dims(key, len, c->shape.ndim, c->shape.dims);
  for (int i = 0; i < c->shape.nargs; i++)
    appendf(key, len, ",%lld", (long long)c->shape.args[i]);
}

inline int tune_lookup(const char *key) {
  TuneCache &tc = tune_cache();
  std::lock_guard<std::mutex> g(tc.mu);
  for (int i = 0; i < tc.n; i++)
    if (!strcmp(tc.keys[i], key))
      return tc.cfg[i];
  return -1;
}

inline void tune_store(const char *key, int cfg) {
  TuneCache &tc = tune_cache();
  std::lock_guard<std::mutex> g(tc.mu);
  for (int i = 0; i < tc.n; i++)
    if (!strcmp(tc.keys[i], key)) {
      tc.cfg[i] = cfg;
      return;
    }
  if (tc.n < 256) {
    snprintf(tc.keys[tc.n], sizeof tc.keys[0], "%s", key);
    tc.cfg[tc.n++] = cfg;
  }
}

/*
 * Time `launch(cfg, stream)` for cfg in [0, ncfg) on a private stream (one
 * warm-up, then `reps` calls between two events) and return the fastest in
 * *best. A configuration whose launch fails (too much shared memory, say)
 * is skipped; if every one fails, the last error is returned.
 */
template <typename L>
inline int tune_time(zlb_env_t *env, int ncfg, int reps, L &&launch, int *best) {
  cudaStream_t s = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  int rc = 0, found = -1;
  float best_ms = 0.0f;
  cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e == cudaSuccess)
    e = cudaEventCreate(&e0);
  if (e == cudaSuccess)
    e = cudaEventCreate(&e1);
  if (e != cudaSuccess) {
    rc = cuda_fail(env, "autotune: stream/event create", e);
    goto out;
  }
  for (int cfg = 0; cfg < ncfg; cfg++) {
    (void)cudaGetLastError();
    if ((rc = launch(cfg, s)) != 0 || (e = cudaStreamSynchronize(s)) != cudaSuccess) {
      if (!rc)
        rc = cuda_fail(env, "autotune: warm-up", e);
      if (e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure)
        goto out; /* sticky: the context is gone */
      continue;
    }
    e = cudaEventRecord(e0, s);
    for (int r = 0; r < reps && e == cudaSuccess && !rc; r++)
      rc = launch(cfg, s);
    if (!rc && e == cudaSuccess)
      e = cudaEventRecord(e1, s);
    if (!rc && e == cudaSuccess)
      e = cudaEventSynchronize(e1);
    float ms = 0.0f;
    if (!rc && e == cudaSuccess)
      e = cudaEventElapsedTime(&ms, e0, e1);
    if (rc || e != cudaSuccess) {
      if (!rc)
        rc = cuda_fail(env, "autotune: timing", e);
      continue;
    }
    if (found < 0 || ms < best_ms) {
      found = cfg;
      best_ms = ms;
    }
  }
  if (found >= 0) {
    *best = found;
    rc = 0;
  }
out:
  if (e1)
    cudaEventDestroy(e1);
  if (e0)
    cudaEventDestroy(e0);
  if (s)
    cudaStreamDestroy(s);
  if (rc == 0 && found < 0)
    rc = errf(env, ZLB_EOP, "autotune: no configuration ran");
  return rc;
}

} // namespace
} // namespace zlbc

#endif
