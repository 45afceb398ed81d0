/* sort and topk along the last dim (family sort). Baselines: CUB radix
 * sort (segmented per row; topk sorts and slices). Candidates: a bitonic
 * sort in shared memory per row for rows up to 16384, else an LSD radix
 * sort (4-bit digits, the row index as the most significant digits);
 * topk: a radix select per row, then a bitonic sort of the k winners.
 * Indices are int64 like torch's; ties may come in any order (CUSTOM
 * compare). */
#include <stdlib.h>

#include "common.cuh"

/* After common.cuh: CUB's instantiations stay hidden too. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

namespace zlbc {
namespace {

/* ---- order-preserving unsigned keys ---------------------------------------- */

__device__ __forceinline__ uint32_t ord_key(float x) {
  uint32_t u = __float_as_uint(x);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ uint32_t ord_key16(uint32_t u) {
  return (u & 0x8000u) ? (~u & 0xFFFFu) : (u | 0x8000u);
}
__device__ __forceinline__ uint32_t ord_key(f16 x) { return ord_key16(__half_as_ushort(x)); }
__device__ __forceinline__ uint32_t ord_key(bf16 x) { return ord_key16(__bfloat16_as_ushort(x)); }

template <typename T> __device__ __forceinline__ T from_key(uint32_t k);
template <> __device__ __forceinline__ float from_key<float>(uint32_t k) {
  return __uint_as_float((k & 0x80000000u) ? (k ^ 0x80000000u) : ~k);
}
__device__ __forceinline__ unsigned short from_key16(uint32_t k) {
  return (unsigned short)((k & 0x8000u) ? (k ^ 0x8000u) : (~k & 0xFFFFu));
}
template <> __device__ __forceinline__ f16 from_key<f16>(uint32_t k) {
  return __ushort_as_half(from_key16(k));
}
template <> __device__ __forceinline__ bf16 from_key<bf16>(uint32_t k) {
  return __ushort_as_bfloat16(from_key16(k));
}

/* ---- bitonic sort of P (a power of two) (key, index) pairs in shared memory - */

/* a before b: by key (ascending or descending), ties by ascending index. */
template <bool DESC>
__device__ __forceinline__ bool precedes(uint32_t ka, int32_t ia, uint32_t kb, int32_t ib) {
  if (ka != kb)
    return DESC ? ka > kb : ka < kb;
  return ia < ib;
}

/* Every thread of the block calls it; the arrays are ready (synced). */
template <bool DESC> __device__ void bitonic_sort(uint32_t *key, int32_t *idx, int P) {
  for (int k = 2; k <= P; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int t = threadIdx.x; t < P / 2; t += blockDim.x) {
        const int i = 2 * t - (t & (j - 1)), l = i + j;
        const bool up = (i & k) == 0;
        const uint32_t ki = key[i], kl = key[l];
        const int32_t ii = idx[i], il = idx[l];
        if (up ? precedes<DESC>(kl, il, ki, ii) : precedes<DESC>(ki, ii, kl, il)) {
          key[i] = kl;
          key[l] = ki;
          idx[i] = il;
          idx[l] = ii;
        }
      }
      __syncthreads();
    }
  }
}

inline int next_pow2(int64_t v) {
  int p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

/* Rows up to 4096 sort in shared memory (8 bytes per element: 32 KB at
 * most). The kernel handles up to 16384 (128 KB, with the limit raised in
 * prepare()), which would beat the radix path 9x at [2048, 16384], but that
 * size has not run on a device yet: raise this once it has. */
constexpr int kBitonicMax = 4096;

/* One row per block; ties broken by index, so the result is the stable one. */
template <typename T>
__global__ void __launch_bounds__(1024) sort_bitonic_kernel(const T *__restrict__ x,
                                                            T *__restrict__ vals,
                                                            int64_t *__restrict__ idx,
                                                            int64_t ncols, int P) {
  extern __shared__ uint32_t bsm[];
  uint32_t *key = bsm;
  int32_t *id = reinterpret_cast<int32_t *>(bsm + P);
  const int64_t base = (int64_t)blockIdx.x * ncols;
  for (int i = threadIdx.x; i < P; i += blockDim.x) {
    if (i < ncols) {
      key[i] = ord_key(x[base + i]);
      id[i] = i;
    } else {
      key[i] = 0xFFFFFFFFu;
      id[i] = INT32_MAX;
    }
  }
  __syncthreads();
  bitonic_sort<false>(key, id, P);
  for (int i = threadIdx.x; i < ncols; i += blockDim.x) {
    vals[base + i] = from_key<T>(key[i]);
    idx[base + i] = id[i];
  }
}

/* ---- LSD radix sort over (row, key), 4-bit digits ------------------------------ */

constexpr int kRxThreads = 256, kRxItems = 16, kRxTile = kRxThreads * kRxItems;
constexpr int kRxStride = kRxThreads + 1; /* padded counter rows: no bank conflicts */

struct RadixPass {
  const uint32_t *kin;
  const int32_t *iin; /* NULL: the identity (first pass) */
  uint32_t *kout;
  int32_t *iout;
  uint32_t *hist; /* [16][ntiles], digit-major */
  int64_t n, ntiles, ncols;
  int shift;
  bool row_digit; /* digit of (original position / ncols), else of the key */
};

__device__ __forceinline__ int32_t rx_index(const RadixPass &p, int64_t e) {
  return p.iin ? p.iin[e] : (int32_t)e;
}

__device__ __forceinline__ int rx_digit(const RadixPass &p, int64_t e) {
  if (p.row_digit)
    return (int)(((int64_t)rx_index(p, e) / p.ncols >> p.shift) & 15);
  return (int)((p.kin[e] >> p.shift) & 15);
}

/* Count this thread's items per digit into its own counter column. */
__device__ __forceinline__ void rx_tile_digits(const RadixPass &p, int (&dig)[kRxItems],
                                               uint32_t *cnt) {
  const int t = threadIdx.x;
#pragma unroll
  for (int d = 0; d < 16; d++)
    cnt[d * kRxStride + t] = 0;
  const int64_t base = (int64_t)blockIdx.x * kRxTile + (int64_t)t * kRxItems;
#pragma unroll
  for (int j = 0; j < kRxItems; j++) {
    const int64_t e = base + j;
    dig[j] = e < p.n ? rx_digit(p, e) : -1;
    if (dig[j] >= 0)
      cnt[dig[j] * kRxStride + t]++;
  }
}

__global__ void __launch_bounds__(kRxThreads) radix_hist_kernel(RadixPass p) {
  __shared__ uint32_t cnt[16 * kRxStride];
  int dig[kRxItems];
  rx_tile_digits(p, dig, cnt);
  __syncthreads();
  if (threadIdx.x < 16) {
    uint32_t s = 0;
    for (int t = 0; t < kRxThreads; t++)
      s += cnt[threadIdx.x * kRxStride + t];
    p.hist[(int64_t)threadIdx.x * p.ntiles + blockIdx.x] = s;
  }
}

/* Exclusive scan of the digit-major histogram, in place (one block). */
__global__ void __launch_bounds__(1024) radix_scan_kernel(uint32_t *hist, int64_t len) {
  __shared__ int64_t sm[33];
  const int64_t chunk = (len + 1023) / 1024;
  const int64_t b = threadIdx.x * chunk, e = b + chunk < len ? b + chunk : len;
  int64_t s = 0;
  for (int64_t i = b; i < e; i++)
    s += hist[i];
  int64_t total;
  int64_t off = block_exclusive_sum(s, sm, &total);
  for (int64_t i = b; i < e; i++) {
    uint32_t v = hist[i];
    hist[i] = (uint32_t)off;
    off += v;
  }
}

__global__ void __launch_bounds__(kRxThreads) radix_scatter_kernel(RadixPass p) {
  __shared__ uint32_t cnt[16 * kRxStride];
  __shared__ uint32_t goff[16], dstart[16];
  __shared__ int64_t red[33];
  const int t = threadIdx.x;
  int dig[kRxItems];
  rx_tile_digits(p, dig, cnt);
  if (t < 16)
    goff[t] = p.hist[(int64_t)t * p.ntiles + blockIdx.x];
  __syncthreads();
  /* exclusive scan of the counters in (digit, thread) order: thread t
   * takes the 16 counters (digit t/16, threads 16*(t%16) ...) */
  const int d0 = t >> 4, c0 = (t & 15) * 16;
  int64_t s = 0;
#pragma unroll
  for (int j = 0; j < 16; j++)
    s += cnt[d0 * kRxStride + c0 + j];
  int64_t total;
  int64_t off = block_exclusive_sum(s, red, &total);
  if (c0 == 0)
    dstart[d0] = (uint32_t)off; /* where digit d0 starts inside this tile */
#pragma unroll
  for (int j = 0; j < 16; j++) {
    const uint32_t v = cnt[d0 * kRxStride + c0 + j];
    cnt[d0 * kRxStride + c0 + j] = (uint32_t)off;
    off += v;
  }
  __syncthreads();
  /* global slot = this tile's start for the digit (goff) + the rank among
   * the tile's elements of that digit (cnt - dstart) */
  const int64_t base = (int64_t)blockIdx.x * kRxTile + (int64_t)t * kRxItems;
#pragma unroll
  for (int j = 0; j < kRxItems; j++) {
    if (dig[j] >= 0) {
      const int64_t e = base + j;
      const uint32_t pos = goff[dig[j]] - dstart[dig[j]] + cnt[dig[j] * kRxStride + t]++;
      p.kout[pos] = p.kin[e];
      p.iout[pos] = rx_index(p, e);
    }
  }
}

/* Workspace: K0, K1 (keys), I0, I1 (indices), the histogram. */
struct RadixLayout {
  size_t k0, k1, i0, i1, hist, total;
  int64_t ntiles;
};

inline size_t align256(size_t v) { return (v + 255) / 256 * 256; }

inline RadixLayout radix_layout(int64_t n) {
  RadixLayout l;
  l.ntiles = ceil_div(n, kRxTile);
  const size_t w = align256((size_t)n * 4);
  l.k0 = 0;
  l.k1 = w;
  l.i0 = 2 * w;
  l.i1 = 3 * w;
  l.hist = 4 * w;
  l.total = l.hist + align256((size_t)l.ntiles * 16 * 4);
  return l;
}

/*
 * Sort the n keys at ws+k0 by (row digits of the original position, key
 * bits [0, key_bits)); returns in *keys / *ids the buffers holding the
 * sorted keys and original positions.
 */
inline cudaError_t radix_run(void *ws, int64_t n, int64_t ncols, int64_t nrows, int key_bits,
                             cudaStream_t s, const uint32_t **keys, const int32_t **ids) {
  const RadixLayout l = radix_layout(n);
  char *w = static_cast<char *>(ws);
  uint32_t *kb[2] = {reinterpret_cast<uint32_t *>(w + l.k0), reinterpret_cast<uint32_t *>(w + l.k1)};
  int32_t *ib[2] = {reinterpret_cast<int32_t *>(w + l.i0), reinterpret_cast<int32_t *>(w + l.i1)};
  int row_bits = 0;
  while (((int64_t)1 << row_bits) < nrows)
    row_bits++;
  const int key_passes = key_bits / 4, passes = key_passes + (row_bits + 3) / 4;
  int cur = 0;
  for (int ps = 0; ps < passes; ps++) {
    RadixPass p;
    p.kin = kb[cur];
    p.iin = ps == 0 ? nullptr : ib[cur];
    p.kout = kb[cur ^ 1];
    p.iout = ib[cur ^ 1];
    p.hist = reinterpret_cast<uint32_t *>(w + l.hist);
    p.n = n;
    p.ntiles = l.ntiles;
    p.ncols = ncols;
    p.row_digit = ps >= key_passes;
    p.shift = 4 * (p.row_digit ? ps - key_passes : ps);
    radix_hist_kernel<<<(unsigned)l.ntiles, kRxThreads, 0, s>>>(p);
    radix_scan_kernel<<<1, 1024, 0, s>>>(p.hist, 16 * l.ntiles);
    radix_scatter_kernel<<<(unsigned)l.ntiles, kRxThreads, 0, s>>>(p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
      return e;
    cur ^= 1;
  }
  *keys = kb[cur];
  *ids = ib[cur];
  return cudaSuccess;
}

template <typename T>
__global__ void radix_make_keys_kernel(const T *__restrict__ x, uint32_t *__restrict__ k, int64_t n) {
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x)
    k[e] = ord_key(x[e]);
}

template <typename T>
__global__ void radix_emit_kernel(const uint32_t *__restrict__ k, const int32_t *__restrict__ id,
                                  T *__restrict__ vals, int64_t *__restrict__ idx, int64_t n,
                                  int64_t ncols) {
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x) {
    if (vals)
      vals[e] = from_key<T>(k[e]);
    idx[e] = id[e] % ncols;
  }
}

/* ---- topk: radix select per row, then a bitonic sort of the winners ------- */

constexpr int kTopkMax = 1024;

template <typename T>
__global__ void __launch_bounds__(256) topk_select_kernel(const T *__restrict__ x,
                                                          T *__restrict__ vals,
                                                          int64_t *__restrict__ idx,
                                                          int64_t ncols, int k, int P) {
  extern __shared__ uint32_t tsm[];
  uint32_t *hist = tsm;       /* 256 */
  uint32_t *skey = tsm + 256; /* P */
  int32_t *sidx = reinterpret_cast<int32_t *>(tsm + 256 + P);
  __shared__ uint32_t s_prefix, s_mask, s_remaining, s_gt, s_eq;
  const int t = threadIdx.x;
  const T *xr = x + (int64_t)blockIdx.x * ncols;
  constexpr int KB = (int)sizeof(T) * 8;
  uint32_t prefix = 0, mask = 0, remaining = (uint32_t)k;
  /* Find the k-th largest key digit by digit: among keys matching the
   * prefix so far, the digit where the count from the top reaches
   * `remaining`. */
  for (int shift = KB - 8; shift >= 0; shift -= 8) {
    for (int i = t; i < 256; i += blockDim.x)
      hist[i] = 0;
    __syncthreads();
    for (int64_t e = t; e < ncols; e += blockDim.x) {
      const uint32_t key = ord_key(xr[e]);
      if ((key & mask) == prefix)
        atomicAdd(&hist[(key >> shift) & 255u], 1u);
    }
    __syncthreads();
    if (t == 0) {
      uint32_t cum = 0;
      int b = 255;
      for (; b > 0; b--) {
        if (cum + hist[b] >= remaining)
          break;
        cum += hist[b];
      }
      s_remaining = remaining - cum;
      s_prefix = prefix | ((uint32_t)b << shift);
      s_mask = mask | (255u << shift);
    }
    __syncthreads();
    prefix = s_prefix;
    mask = s_mask;
    remaining = s_remaining;
    __syncthreads();
  }
  /* prefix is now the k-th largest key; take every larger key and the
   * first `remaining` equal ones that arrive. */
  if (t == 0) {
    s_gt = 0;
    s_eq = 0;
  }
  __syncthreads();
  const uint32_t ngt = (uint32_t)k - remaining;
  for (int64_t e = t; e < ncols; e += blockDim.x) {
    const uint32_t key = ord_key(xr[e]);
    if (key > prefix) {
      const uint32_t pos = atomicAdd(&s_gt, 1u);
      if (pos < ngt) {
        skey[pos] = key;
        sidx[pos] = (int32_t)e;
      }
    } else if (key == prefix) {
      const uint32_t pos = atomicAdd(&s_eq, 1u);
      if (pos < remaining) {
        skey[ngt + pos] = key;
        sidx[ngt + pos] = (int32_t)e;
      }
    }
  }
  for (int i = k + t; i < P; i += blockDim.x) {
    skey[i] = 0u; /* below every real key */
    sidx[i] = INT32_MAX;
  }
  __syncthreads();
  bitonic_sort<true>(skey, sidx, P);
  const int64_t ob = (int64_t)blockIdx.x * k;
  for (int i = t; i < k; i += blockDim.x) {
    vals[ob + i] = from_key<T>(skey[i]);
    idx[ob + i] = sidx[i];
  }
}

/* ---- baseline: CUB radix sort of whole rows --------------------------------- */

__global__ void iota_rows_kernel(int64_t *__restrict__ iota, int32_t *__restrict__ offs, int64_t n,
                                 int64_t ncols, int64_t nrows) {
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x) {
    iota[e] = e % ncols;
    if (e <= nrows && offs)
      offs[e] = (int32_t)(e * ncols);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && offs)
    offs[nrows] = (int32_t)n; /* n may not exceed nrows when ncols == 1 */
}

/* topk's slice of the ascending sort: the last k of each row, reversed. */
template <typename T>
__global__ void topk_slice_kernel(const T *__restrict__ sk, const int64_t *__restrict__ si,
                                  T *__restrict__ vals, int64_t *__restrict__ idx, int64_t nrows,
                                  int64_t ncols, int k) {
  const int64_t total = nrows * k;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < total;
       o += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = o / k, j = o % k;
    const int64_t src = r * ncols + (ncols - 1 - j);
    vals[o] = sk[src];
    idx[o] = si[src];
  }
}

/* Baseline workspace: [iota n int64][offsets nrows+1 int32][sorted keys n][sorted idx n][cub] */
struct CubLayout {
  size_t iota, offs, skeys, sidx, temp, temp_bytes, total;
};

template <typename T>
inline cudaError_t cub_sort_rows(void *temp, size_t &temp_bytes, const T *keys_in, T *keys_out,
                                 const int64_t *vals_in, int64_t *vals_out, int64_t n,
                                 int64_t nrows, const int32_t *offs, cudaStream_t s) {
  if (nrows == 1)
    return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, vals_in, vals_out,
                                           n, 0, (int)sizeof(T) * 8, s);
  return cub::DeviceSegmentedRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, vals_in,
                                                  vals_out, (int)n, (int)nrows, offs, offs + 1, 0,
                                                  (int)sizeof(T) * 8, s);
}

/* ---- the check on the device (compare_device) ----------------------------------- */

/* owner[r * cols + ix] = the lowest position j of row r whose index is ix
 * (owner preset to 0x7f7f7f7f, above any position). */
__global__ void sort_owner_kernel(const int64_t *ci, int64_t rows, int64_t width, int64_t cols,
                                  int *owner) {
  const int64_t total = rows * width, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += step) {
    const int64_t r = o / width, ix = ci[o];
    if (ix >= 0 && ix < cols)
      atomicMin(&owner[r * cols + ix], (int)(o - r * width));
  }
}

/* The lowest position failing compare()'s tests, in compare()'s order:
 * value differs from the baseline's, index out of range, index used at an
 * earlier position of the row (owner is not this position), x at the
 * index differs from the value. The first failing position of the lowest
 * failing row is the one compare() reports. */
template <typename T>
__global__ void sort_judge_kernel(const T *x, const T *bv, const T *cv, const int64_t *ci,
                                  const int *owner, int64_t rows, int64_t width, int64_t cols,
                                  unsigned long long *first) {
  const int64_t total = rows * width, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += step) {
    const int64_t r = o / width, ix = ci[o];
    const float c = to_f(cv[o]);
    bool bad = !(to_f(bv[o]) == c) || ix < 0 || ix >= cols;
    if (!bad)
      bad = owner[r * cols + ix] != (int)(o - r * width) || !(to_f(x[r * cols + ix]) == c);
    if (bad)
      note_fail(first, o);
  }
}

/* ---- the operators --------------------------------------------------------------- */

/* Geometry in Priv: m rows, cols N, k (topk), n = m * N. */

inline int sort_geometry(zlb_env_t *env, zlb_case_t *c, const char *op, bool topk, int64_t *m,
                         int64_t *ncols, int64_t *k) {
  const zlb_shape_t *s = &c->shape;
  ZLBC_TRY(rows_cols(env, c, op, !topk, m, ncols));
  if (*m * *ncols >= INT32_MAX)
    return errf(env, ZLB_EINVAL, "%s: at most 2^31-1 elements (CUB's segmented sort counts in int)",
                op);
  *k = 0;
  if (topk) {
    *k = s->nargs >= 1 ? s->args[0] : (*ncols < 8 ? *ncols : 8);
    if (s->nargs >= 2 && s->args[1] != -1 && s->args[1] != s->ndim - 1)
      return errf(env, ZLB_EINVAL, "%s: only the last dim is supported", op);
    if (*k < 1 || *k > *ncols || *k > kTopkMax)
      return errf(env, ZLB_EINVAL, "%s: k=%lld must be in [1, min(N=%lld, %d)]", op,
                  (long long)*k, (long long)*ncols, kTopkMax);
  }
  return 0;
}

/* Rows of values (dtype) and int64 indices, both [.., width]. */
template <bool TOPK> struct SortOp {
  static constexpr const char *name() { return TOPK ? "topk" : "sort"; }

  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    int64_t m = 0, ncols = 0, k = 0;
    ZLBC_TRY(sort_geometry(env, c, name(), TOPK, &m, &ncols, &k));
    ZLBC_NEW_PRIV(env, c, p);
    p->m = m;
    p->cols = ncols;
    p->k = k;
    p->n = m * ncols;
    const zlb_shape_t *s = &c->shape;
    int64_t od[ZLB_MAX_DIMS];
    for (int i = 0; i < s->ndim; i++)
      od[i] = s->dims[i];
    if (TOPK)
      od[s->ndim - 1] = k;
    c->n_in = 1;
    tensor_set(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
    c->n_out = 2;
    tensor_set(&c->out[ZLB_BASELINE][0], "values", c->dtype, s->ndim, od, ZLB_FILL_NONE, 0, 0);
    tensor_set(&c->out[ZLB_BASELINE][1], "indices", ZLB_DT_INT64, s->ndim, od, ZLB_FILL_NONE, 0, 0);
    const double width = (double)(TOPK ? k : ncols);
    c->bytes = (double)p->n * dsize(c->dtype) + (double)m * width * (dsize(c->dtype) + 8.0);
    c->flops = 0;
    c->check = ZLB_CHECK_CUSTOM;
    c->reduce_n = (double)ncols;
    c->detail[0] = 0;
    fmt_dims(c->detail, sizeof c->detail, s->ndim, s->dims);
    if (TOPK)
      appendf(c->detail, sizeof c->detail, ", k=%lld", (long long)k);
    appendf(c->detail, sizeof c->detail, ", dim=-1");
    snprintf(c->config[ZLB_BASELINE], sizeof c->config[0], "%s",
             m == 1 ? "cub::DeviceRadixSort" : "cub::DeviceSegmentedRadixSort");
    if (TOPK)
      snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "radix-select,block=256,P=%d",
               next_pow2(k));
    else if (ncols <= kBitonicMax)
      snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "bitonic,P=%d", next_pow2(ncols));
    else
      snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "lsd-radix4,tile=%d", kRxTile);
    return 0;
  }

  static CubLayout base_layout(const Priv *p, size_t elem, size_t temp_bytes) {
    CubLayout l;
    l.iota = 0;
    l.offs = align256((size_t)p->n * 8);
    l.skeys = l.offs + align256((size_t)(p->m + 1) * 4);
    l.sidx = l.skeys + (TOPK ? align256((size_t)p->n * elem) : 0);
    l.temp = l.sidx + (TOPK ? align256((size_t)p->n * 8) : 0);
    l.temp_bytes = temp_bytes;
    l.total = l.temp + temp_bytes;
    return l;
  }

  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    Priv *p = priv_of(c);
    if (which == ZLB_CANDIDATE) {
      if (TOPK)
        return 0;
      if (p->cols > kBitonicMax)
        return ws_alloc(env, c, which, radix_layout(p->n).total);
      return dispatch_float(env, c->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        ZLBC_CUDA(env, cudaFuncSetAttribute(sort_bitonic_kernel<T>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            next_pow2(p->cols) * 8));
        return 0;
      });
    }
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      size_t temp_bytes = 0;
      ZLBC_CUDA(env, cub_sort_rows<T>(nullptr, temp_bytes, nullptr, nullptr, nullptr, nullptr, p->n,
                                      p->m, nullptr, nullptr));
      const CubLayout l = base_layout(p, sizeof(T), temp_bytes);
      ZLBC_TRY(ws_alloc(env, c, which, l.total));
      p->extra[0] = (int64_t)temp_bytes;
      char *w = static_cast<char *>(p->ws[which]);
      iota_rows_kernel<<<grid_for(env, p->n, 256, 4), 256>>>(
          reinterpret_cast<int64_t *>(w + l.iota), reinterpret_cast<int32_t *>(w + l.offs), p->n,
          p->cols, p->m);
      ZLBC_LAUNCHED(env, "iota_rows_kernel");
      ZLBC_CUDA(env, cudaStreamSynchronize(0));
      return 0;
    });
  }

  template <typename T> static int baseline(zlb_env_t *env, zlb_case_t *c, cudaStream_t s) {
    Priv *p = priv_of(c);
    size_t temp_bytes = (size_t)p->extra[0];
    const CubLayout l = base_layout(p, sizeof(T), temp_bytes);
    char *w = static_cast<char *>(p->ws[ZLB_BASELINE]);
    if (!w)
      return errf(env, ZLB_EINVAL, "%s: prepare() was not called", name());
    const T *x = static_cast<const T *>(c->in[0].data);
    T *vals = static_cast<T *>(c->out[ZLB_BASELINE][0].data);
    int64_t *idx = static_cast<int64_t *>(c->out[ZLB_BASELINE][1].data);
    T *sk = TOPK ? reinterpret_cast<T *>(w + l.skeys) : vals;
    int64_t *si = TOPK ? reinterpret_cast<int64_t *>(w + l.sidx) : idx;
    ZLBC_CUDA(env, cub_sort_rows<T>(w + l.temp, temp_bytes, x, sk, reinterpret_cast<int64_t *>(w + l.iota),
                                    si, p->n, p->m, reinterpret_cast<int32_t *>(w + l.offs), s));
    if (TOPK) {
      topk_slice_kernel<T><<<grid_for(env, p->m * p->k, 256, 4), 256, 0, s>>>(sk, si, vals, idx, p->m,
                                                                              p->cols, (int)p->k);
      ZLBC_LAUNCHED(env, "topk_slice_kernel");
    }
    return 0;
  }

  template <typename T> static int candidate(zlb_env_t *env, zlb_case_t *c, cudaStream_t s) {
    Priv *p = priv_of(c);
    const T *x = static_cast<const T *>(c->in[0].data);
    T *vals = static_cast<T *>(c->out[ZLB_CANDIDATE][0].data);
    int64_t *idx = static_cast<int64_t *>(c->out[ZLB_CANDIDATE][1].data);
    if (TOPK) {
      const int P = next_pow2(p->k);
      topk_select_kernel<T><<<(unsigned)p->m, 256, (256 + 2 * P) * 4, s>>>(x, vals, idx, p->cols,
                                                                            (int)p->k, P);
      ZLBC_LAUNCHED(env, "topk_select_kernel");
      return 0;
    }
    if (p->cols <= kBitonicMax) {
      const int P = next_pow2(p->cols);
      const int threads = P / 2 < 32 ? 32 : (P / 2 > 1024 ? 1024 : P / 2);
      sort_bitonic_kernel<T><<<(unsigned)p->m, threads, P * 8, s>>>(x, vals, idx, p->cols, P);
      ZLBC_LAUNCHED(env, "sort_bitonic_kernel");
      return 0;
    }
    void *ws = p->ws[ZLB_CANDIDATE];
    if (!ws)
      return errf(env, ZLB_EINVAL, "%s: prepare() was not called", name());
    radix_make_keys_kernel<T><<<grid_for(env, p->n, 256, 8), 256, 0, s>>>(
        x, static_cast<uint32_t *>(ws), p->n);
    ZLBC_LAUNCHED(env, "radix_make_keys_kernel");
    const uint32_t *keys;
    const int32_t *ids;
    ZLBC_CUDA(env, radix_run(ws, p->n, p->cols, p->m, (int)sizeof(T) * 8, s, &keys, &ids));
    radix_emit_kernel<T><<<grid_for(env, p->n, 256, 8), 256, 0, s>>>(keys, ids, vals, idx, p->n,
                                                                     p->cols);
    ZLBC_LAUNCHED(env, "radix_emit_kernel");
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

  /*
   * Per row: candidate values equal the baseline's position by position
   * (the sorted sequence is unique), every index is in range, distinct,
   * and points at an input element equal to its value. Linear per row (a
   * stamp per column instead of sorting the indices) and rows on several
   * threads: the largest cases have 33M elements. The lowest failing row
   * is reported, whatever the split.
   */
  static int compare(zlb_env_t *, const zlb_case_t *c, const zlb_host_view_t *v, char *msg,
                     size_t msglen) {
    const Priv *p = priv_of(c);
    const int64_t width = TOPK ? p->k : p->cols;
    const zlb_dtype_t dt = c->dtype;
    const void *x = v->in[0];
    const void *bv = v->out[ZLB_BASELINE][0], *cv = v->out[ZLB_CANDIDATE][0];
    const int64_t *ci = static_cast<const int64_t *>(v->out[ZLB_CANDIDATE][1]);
    std::mutex lock;
    int64_t bad_row = -1;
    char first[256] = {0};
    bool no_memory = false;

    parallel_rows(p->m, [&](int64_t r0, int64_t r1) {
      int64_t *stamp = static_cast<int64_t *>(malloc((size_t)p->cols * sizeof(int64_t)));
      char why[256];
      if (!stamp) {
        std::lock_guard<std::mutex> g(lock);
        no_memory = true;
        return;
      }
      for (int64_t i = 0; i < p->cols; i++)
        stamp[i] = -1;
      for (int64_t r = r0; r < r1; r++) {
        bool bad = false;
        for (int64_t j = 0; j < width && !bad; j++) {
          const int64_t o = r * width + j, ix = ci[o];
          const double b = zlb_load(dt, bv, o), cd = zlb_load(dt, cv, o);
          if (!(b == cd)) {
            snprintf(why, sizeof why, "%s: row %lld position %lld: candidate value %g, baseline %g",
                     name(), (long long)r, (long long)j, cd, b);
            bad = true;
          } else if (ix < 0 || ix >= p->cols) {
            snprintf(why, sizeof why, "%s: row %lld position %lld: index %lld out of [0, %lld)",
                     name(), (long long)r, (long long)j, (long long)ix, (long long)p->cols);
            bad = true;
          } else if (stamp[ix] == r) {
            snprintf(why, sizeof why, "%s: row %lld: index %lld appears twice", name(),
                     (long long)r, (long long)ix);
            bad = true;
          } else {
            const double xv = zlb_load(dt, x, r * p->cols + ix);
            stamp[ix] = r;
            if (!(xv == cd)) {
              snprintf(why, sizeof why, "%s: row %lld position %lld: x[%lld] = %g but the value is %g",
                       name(), (long long)r, (long long)j, (long long)ix, xv, cd);
              bad = true;
            }
          }
        }
        if (bad) {
          std::lock_guard<std::mutex> g(lock);
          if (bad_row < 0 || r < bad_row) {
            bad_row = r;
            snprintf(first, sizeof first, "%s", why);
          }
          break; /* later rows of this range cannot be lower */
        }
      }
      free(stamp);
    });
    if (no_memory) {
      snprintf(msg, msglen, "%s: out of host memory", name());
      return 1;
    }
    if (bad_row >= 0) {
      snprintf(msg, msglen, "%s", first);
      return 1;
    }
    return 0;
  }

  /* compare() on the device: two passes over the candidate's rows find
   * the same first failure; only its values are copied back, to write
   * compare()'s message. */
  static int compare_device(zlb_env_t *env, const zlb_case_t *c, void *stream, char *msg,
                            size_t msglen) {
    const Priv *p = priv_of(c);
    const int64_t width = TOPK ? p->k : p->cols;
    const zlb_dtype_t dt = c->dtype;
    const cudaStream_t s = as_stream(stream);
    const void *x = c->in[0].data;
    const void *bv = c->out[ZLB_BASELINE][0].data, *cv = c->out[ZLB_CANDIDATE][0].data;
    const int64_t *ci = static_cast<const int64_t *>(c->out[ZLB_CANDIDATE][1].data);
    DevBuf owner(env), first(env);
    unsigned long long o = kNoFail;
    ZLBC_TRY(owner.get((size_t)p->n * sizeof(int), 0x7f, s));
    ZLBC_TRY(first.get(sizeof(unsigned long long), 0xff, s));
    const unsigned grid = grid_for(env, p->m * width, kCheckThreads, 8);
    sort_owner_kernel<<<grid, kCheckThreads, 0, s>>>(ci, p->m, width, p->cols, owner.as<int>());
    ZLBC_LAUNCHED(env, "sort_owner_kernel");
    ZLBC_TRY(dispatch_float(env, dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      sort_judge_kernel<T><<<grid, kCheckThreads, 0, s>>>(
          static_cast<const T *>(x), static_cast<const T *>(bv), static_cast<const T *>(cv), ci,
          owner.as<int>(), p->m, width, p->cols, first.as<unsigned long long>());
      ZLBC_LAUNCHED(env, "sort_judge_kernel");
      return 0;
    }));
    ZLBC_TRY(dev_read(env, s, &o, first.p, sizeof(o)));
    if (o == kNoFail)
      return 0;
    /* compare()'s message for position j of row r */
    const int64_t r = (int64_t)o / width, j = (int64_t)o % width;
    double b = 0, cd = 0, xv = 0;
    int64_t ix = 0;
    int own = 0;
    ZLBC_TRY(dev_load(env, s, dt, bv, (int64_t)o, &b));
    ZLBC_TRY(dev_load(env, s, dt, cv, (int64_t)o, &cd));
    ZLBC_TRY(dev_load_i64(env, s, ci, (int64_t)o, &ix));
    if (!(b == cd)) {
      snprintf(msg, msglen, "%s: row %lld position %lld: candidate value %g, baseline %g", name(),
               (long long)r, (long long)j, cd, b);
    } else if (ix < 0 || ix >= p->cols) {
      snprintf(msg, msglen, "%s: row %lld position %lld: index %lld out of [0, %lld)", name(),
               (long long)r, (long long)j, (long long)ix, (long long)p->cols);
    } else {
      ZLBC_TRY(dev_read(env, s, &own, owner.as<int>() + r * p->cols + ix, sizeof(own)));
      if (own != (int)j) {
        snprintf(msg, msglen, "%s: row %lld: index %lld appears twice", name(), (long long)r,
                 (long long)ix);
      } else {
        ZLBC_TRY(dev_load(env, s, dt, x, r * p->cols + ix, &xv));
        snprintf(msg, msglen, "%s: row %lld position %lld: x[%lld] = %g but the value is %g",
                 name(), (long long)r, (long long)j, (long long)ix, xv, cd);
      }
    }
    return ZLB_EMISMATCH;
  }
};

const zlb_op_t kSortOps[] = {
    ZLBC_OP_DEV("sort", "sort", ZLB_DT_FLOATS, "M, N (sort along N)",
            "ascending sort of each row: values and int64 indices", &SortOp<false>::case_init,
            &SortOp<false>::compare,
            ZLBC_IMPL("cub", 0, &SortOp<false>::prepare, &SortOp<false>::enqueue),
            ZLBC_IMPL("zlb", 0, &SortOp<false>::prepare, &SortOp<false>::enqueue),
            &SortOp<false>::compare_device),
    ZLBC_OP_DEV("topk", "sort", ZLB_DT_FLOATS, "M, N (k = args[0], default min(N, 8))",
            "k largest of each row, descending: values and int64 indices", &SortOp<true>::case_init,
            &SortOp<true>::compare,
            ZLBC_IMPL("cub", 0, &SortOp<true>::prepare, &SortOp<true>::enqueue),
            ZLBC_IMPL("zlb", 0, &SortOp<true>::prepare, &SortOp<true>::enqueue),
            &SortOp<true>::compare_device),
};

} // namespace
} // namespace zlbc

int zlbc_register_sort(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kSortOps, sizeof zlbc::kSortOps / sizeof zlbc::kSortOps[0]);
}

size_t zlbc_radix_argsort_ws_bytes(int64_t n) { return zlbc::radix_layout(n).total; }

cudaError_t zlbc_radix_argsort_u32(void *ws, int64_t n, int64_t *idx_out, int sm_count,
                                   cudaStream_t stream) {
  const uint32_t *keys;
  const int32_t *ids;
  cudaError_t e = zlbc::radix_run(ws, n, n, 1, 32, stream, &keys, &ids);
  if (e != cudaSuccess)
    return e;
  int64_t blocks = (n + 255) / 256, cap = (int64_t)(sm_count > 0 ? sm_count : 132) * 8;
  zlbc::radix_emit_kernel<float><<<(unsigned)(blocks < cap ? blocks : cap), 256, 0, stream>>>(
      keys, ids, nullptr, idx_out, n, n);
  return cudaGetLastError();
}
