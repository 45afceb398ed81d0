/* Scans (family scan): cumsum along the last dim and nonzero.
 * cumsum: baseline CUB DeviceScan (by key = row for several rows), float
 * accumulation; candidate a single-pass decoupled look-back scan whose
 * tiles chain within each row.
 * nonzero: input bool (true with probability 0.3) or a float dtype filled
 * with integers in [0, 2); outputs int64 indices [numel, ndim] (torch's
 * layout, only the first `count` rows written) and an int64 count. Both
 * impls copy the count to the host and synchronise, as torch must to size
 * its output, so neither can be captured (ZLB_IMPL_NO_CAPTURE). Baseline
 * CUB DeviceSelect::If over flat indices then an unravel kernel; candidate
 * count / scan / write passes. */
#include "common.cuh"

/* After common.cuh: CUB's and Thrust's instantiations stay hidden. */
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

namespace zlbc {
namespace {

/* ---- cumsum baseline: CUB ---------------------------------------------------- */

template <typename T> struct ToFloat {
  __host__ __device__ float operator()(T v) const {
#ifdef __CUDA_ARCH__
    return to_f(v);
#else
    (void)v;
    return 0.0f;
#endif
  }
};

struct RowOf {
  int64_t ncols;
  __host__ __device__ int operator()(int64_t i) const { return (int)(i / ncols); }
};

struct AddF {
  __host__ __device__ float operator()(float a, float b) const { return a + b; }
};

template <typename T>
inline cudaError_t cub_cumsum(void *temp, size_t &temp_bytes, const T *x, T *y, int64_t n,
                              int64_t ncols, cudaStream_t s) {
  auto vals = thrust::make_transform_iterator(x, ToFloat<T>{});
  if (n == ncols) /* one row */
    return cub::DeviceScan::InclusiveScan(temp, temp_bytes, vals, y, AddF{}, n, s);
  auto keys = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{ncols});
  return cub::DeviceScan::InclusiveScanByKey(temp, temp_bytes, keys, vals, y, AddF{}, n,
                                             cuda::std::equal_to<>{}, s);
}

/* ---- cumsum candidate: decoupled look-back ------------------------------------ */

constexpr unsigned long long kAggregate = 1ull << 32, kInclusive = 2ull << 32;

template <int THREADS, int ITEMS> struct ScanCfg {
  static constexpr int kThreads = THREADS, kItems = ITEMS, kTile = THREADS * ITEMS;
};
using ScanSmall = ScanCfg<128, 8>; /* rows up to 1024 */
using ScanBig = ScanCfg<256, 8>;

/*
 * Tile ids come from an atomic counter in launch order, so every tile a
 * block waits for belongs to a block already running. Tile t covers row
 * t / tiles_per_row; its prefix is the sum of the earlier tiles of that
 * row, found by walking back over published (status, value) words until
 * an inclusive one.
 */
template <typename T, typename C>
__global__ void __launch_bounds__(C::kThreads)
    cumsum_lookback_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t ncols,
                           int64_t tiles_per_row, unsigned long long *flags,
                           unsigned int *counter, bool vec) {
  constexpr int NW = C::kThreads / 32, ITEMS = C::kItems, E = vec16<T>();
  static_assert(ITEMS % E == 0, "whole vectors per thread");
  __shared__ float wsum[NW];
  __shared__ float s_prefix;
  __shared__ unsigned int s_tile;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0)
    s_tile = atomicAdd(counter, 1u);
  __syncthreads();
  const int64_t t = s_tile, row = t / tiles_per_row, j = t % tiles_per_row;
  const int64_t col0 = j * C::kTile + (int64_t)threadIdx.x * ITEMS;
  const T *xr = x + row * ncols;
  T *yr = y + row * ncols;

  float v[ITEMS];
  const bool full = col0 + ITEMS <= ncols;
  if (vec && full) {
#pragma unroll
    for (int q = 0; q < ITEMS / E; q++) {
      const Pack<T, E> p = load_pack<T, E>(xr + col0, q);
#pragma unroll
      for (int e = 0; e < E; e++)
        v[q * E + e] = to_f(p.v[e]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      v[i] = col0 + i < ncols ? to_f(xr[col0 + i]) : 0.0f;
  }
#pragma unroll
  for (int i = 1; i < ITEMS; i++)
    v[i] += v[i - 1];
  const float tsum = v[ITEMS - 1];
  float inc = tsum; /* inclusive scan of thread sums across the warp */
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const float o = __shfl_up_sync(0xffffffffu, inc, off);
    if (lane >= off)
      inc += o;
  }
  if (lane == 31)
    wsum[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    float w = lane < NW ? wsum[lane] : 0.0f;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const float o = __shfl_up_sync(0xffffffffu, w, off);
      if (lane >= off)
        w += o;
    }
    if (lane < NW)
      wsum[lane] = w; /* inclusive over warps */
  }
  __syncthreads();
  const float excl = (warp ? wsum[warp - 1] : 0.0f) + inc - tsum;
  if (threadIdx.x == 0) {
    const float agg = wsum[NW - 1];
    float prefix = 0.0f;
    if (j == 0) {
      atomicExch(&flags[t], kInclusive | __float_as_uint(agg));
    } else {
      atomicExch(&flags[t], kAggregate | __float_as_uint(agg));
      for (int64_t q = t - 1;; ) {
        const unsigned long long f = *reinterpret_cast<volatile unsigned long long *>(&flags[q]);
        const unsigned long long st = f & (3ull << 32);
        if (st == 0) {
          __nanosleep(32);
          continue;
        }
        prefix += __uint_as_float((unsigned int)f);
        if (st == kInclusive)
          break;
        q--; /* tile j = 0 of the row is inclusive, so q stays in the row */
      }
      atomicExch(&flags[t], kInclusive | __float_as_uint(prefix + agg));
    }
    s_prefix = prefix;
  }
  __syncthreads();
  const float base = s_prefix + excl;
  if (vec && full) {
#pragma unroll
    for (int q = 0; q < ITEMS / E; q++) {
      Pack<T, E> p;
#pragma unroll
      for (int e = 0; e < E; e++)
        p.v[e] = from_f<T>(base + v[q * E + e]);
      store_pack<T, E>(yr + col0, q, p);
    }
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      if (col0 + i < ncols)
        yr[col0 + i] = from_f<T>(base + v[i]);
  }
}

/* ---- nonzero ------------------------------------------------------------------ */

struct NzDims {
  int nd;
  int64_t d[ZLB_MAX_DIMS];
  int64_t st[ZLB_MAX_DIMS]; /* row-major strides */
};

__device__ __forceinline__ void nz_write(int64_t *out, int64_t pos, int64_t flat, const NzDims &dm) {
  int64_t *o = out + pos * dm.nd;
  for (int k = dm.nd - 1; k >= 0; k--) {
    o[k] = flat % dm.d[k];
    flat /= dm.d[k];
  }
}

template <typename T> struct NzPred {
  const T *x;
  __host__ __device__ bool operator()(int64_t i) const {
#ifdef __CUDA_ARCH__
    return to_f(x[i]) != 0.0f;
#else
    (void)i;
    return false;
#endif
  }
};

__global__ void nz_unravel_kernel(const int64_t *__restrict__ flat, int64_t *__restrict__ out,
                                  int64_t count, NzDims dm) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    nz_write(out, i, flat[i], dm);
}

constexpr int kNzThreads = 256, kNzItems = 16, kNzTile = kNzThreads * kNzItems;

/* This thread's 16 flags (bit i: element base + i is nonzero). */
template <typename T>
__device__ __forceinline__ unsigned nz_flags(const T *__restrict__ x, int64_t n, int64_t base,
                                             bool vec) {
  constexpr int E = vec16<T>();
  unsigned bits = 0;
  if (vec && base + kNzItems <= n) {
#pragma unroll
    for (int q = 0; q < kNzItems / E; q++) {
      const Pack<T, E> p = load_pack<T, E>(x + base, q);
#pragma unroll
      for (int e = 0; e < E; e++)
        bits |= (to_f(p.v[e]) != 0.0f ? 1u : 0u) << (q * E + e);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kNzItems; i++)
      if (base + i < n && to_f(x[base + i]) != 0.0f)
        bits |= 1u << i;
  }
  return bits;
}

template <typename T>
__global__ void __launch_bounds__(kNzThreads) nz_count_kernel(const T *__restrict__ x, int64_t n,
                                                              int64_t *__restrict__ counts,
                                                              bool vec) {
  __shared__ int64_t red[33];
  const int64_t base = (int64_t)blockIdx.x * kNzTile + (int64_t)threadIdx.x * kNzItems;
  const int64_t mine = __popc(nz_flags(x, n, base, vec));
  int64_t total;
  block_exclusive_sum(mine, red, &total);
  if (threadIdx.x == 0)
    counts[blockIdx.x] = total;
}

/* Exclusive scan of the tile counts in place (one block); total -> *count. */
__global__ void __launch_bounds__(1024) nz_scan_kernel(int64_t *counts, int64_t ntiles,
                                                       int64_t *count) {
  __shared__ int64_t sm[33];
  const int64_t chunk = (ntiles + 1023) / 1024;
  const int64_t b = threadIdx.x * chunk, e = b + chunk < ntiles ? b + chunk : ntiles;
  int64_t s = 0;
  for (int64_t i = b; i < e; i++)
    s += counts[i];
  int64_t total;
  int64_t off = block_exclusive_sum(s, sm, &total);
  for (int64_t i = b; i < e; i++) {
    const int64_t v = counts[i];
    counts[i] = off;
    off += v;
  }
  if (threadIdx.x == 0)
    *count = total;
}

/* The tile's flat indices are staged in shared memory in order, then the
 * block writes its rows of coordinates as one contiguous, coalesced run. */
template <typename T>
__global__ void __launch_bounds__(kNzThreads) nz_write_kernel(const T *__restrict__ x, int64_t n,
                                                              const int64_t *__restrict__ offs,
                                                              int64_t *__restrict__ out, NzDims dm,
                                                              bool vec) {
  __shared__ int64_t red[33];
  __shared__ int64_t flat[kNzTile];
  const int64_t base = (int64_t)blockIdx.x * kNzTile + (int64_t)threadIdx.x * kNzItems;
  unsigned bits = nz_flags(x, n, base, vec);
  int64_t total;
  int64_t pos = block_exclusive_sum((int64_t)__popc(bits), red, &total);
  while (bits) {
    const int i = __ffs(bits) - 1;
    bits &= bits - 1;
    flat[pos++] = base + i;
  }
  __syncthreads();
  int64_t *o = out + offs[blockIdx.x] * dm.nd;
  for (int64_t q = threadIdx.x; q < total * dm.nd; q += kNzThreads) {
    const int64_t r = q / dm.nd;
    const int k = (int)(q - r * dm.nd);
    o[q] = flat[r] / dm.st[k] % dm.d[k];
  }
}

/* ---- the operators ----------------------------------------------------------------- */

inline size_t al256(size_t v) { return (v + 255) / 256 * 256; }

struct Cumsum {
  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    int64_t m = 0, ncols = 0;
    ZLBC_TRY(rows_cols(env, c, "cumsum", true, &m, &ncols));
    const int64_t tiles = m * ceil_div(ncols, ncols <= 1024 ? ScanSmall::kTile : ScanBig::kTile);
    if (tiles >= INT32_MAX || m >= INT32_MAX)
      return errf(env, ZLB_EINVAL, "cumsum: too many tiles (rows * ceil(N / tile) >= 2^31)");
    ZLBC_NEW_PRIV(env, c, p);
    p->m = m;
    p->cols = ncols;
    p->n = m * ncols;
    const zlb_shape_t *s = &c->shape;
    c->n_in = 1;
    tensor_set(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
    c->n_out = 1;
    tensor_set(&c->out[ZLB_BASELINE][0], "out", c->dtype, s->ndim, s->dims, ZLB_FILL_NONE, 0, 0);
    c->bytes = 2.0 * (double)p->n * dsize(c->dtype);
    c->flops = (double)p->n;
    c->reduce_n = (double)ncols;
    c->check = ZLB_CHECK_CLOSE;
    c->detail[0] = 0;
    fmt_dims(c->detail, sizeof c->detail, s->ndim, s->dims);
    appendf(c->detail, sizeof c->detail, ", dim=-1");
    snprintf(c->config[ZLB_BASELINE], sizeof c->config[0], "%s",
             m == 1 ? "cub::DeviceScan" : "cub::DeviceScan::ByKey");
    snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "lookback,tile=%dx%d",
             ncols <= 1024 ? ScanSmall::kThreads : ScanBig::kThreads, ScanBig::kItems);
    return 0;
  }

  static int64_t tiles(const Priv *p) {
    return p->m * ceil_div(p->cols, p->cols <= 1024 ? ScanSmall::kTile : ScanBig::kTile);
  }

  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    Priv *p = priv_of(c);
    if (which == ZLB_CANDIDATE)
      return ws_alloc(env, c, which, (size_t)tiles(p) * 8 + 8);
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      size_t temp = 0;
      ZLBC_CUDA(env, cub_cumsum<T>(nullptr, temp, nullptr, nullptr, p->n, p->cols, 0));
      p->extra[0] = (int64_t)temp;
      return ws_alloc(env, c, which, temp);
    });
  }

  template <typename T> static int run(zlb_env_t *env, zlb_case_t *c, int which, cudaStream_t s) {
    Priv *p = priv_of(c);
    const T *x = static_cast<const T *>(c->in[0].data);
    T *y = static_cast<T *>(c->out[which][0].data);
    void *ws = p->ws[which];
    if (!ws)
      return errf(env, ZLB_EINVAL, "cumsum: prepare() was not called");
    if (which == ZLB_BASELINE) {
      size_t temp = (size_t)p->extra[0];
      ZLBC_CUDA(env, cub_cumsum<T>(ws, temp, x, y, p->n, p->cols, s));
      return 0;
    }
    const int64_t nt = tiles(p);
    unsigned long long *flags = static_cast<unsigned long long *>(ws);
    unsigned int *counter = reinterpret_cast<unsigned int *>(flags + nt);
    ZLBC_CUDA(env, cudaMemsetAsync(ws, 0, (size_t)nt * 8 + 8, s));
    const bool vec = aligned16(x) && aligned16(y) && p->cols % vec16<T>() == 0;
    if (p->cols <= 1024) {
      cumsum_lookback_kernel<T, ScanSmall><<<(unsigned)nt, ScanSmall::kThreads, 0, s>>>(
          x, y, p->cols, nt / p->m, flags, counter, vec);
    } else {
      cumsum_lookback_kernel<T, ScanBig><<<(unsigned)nt, ScanBig::kThreads, 0, s>>>(
          x, y, p->cols, nt / p->m, flags, counter, vec);
    }
    ZLBC_LAUNCHED(env, "cumsum_lookback_kernel");
    return 0;
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    return dispatch_float(env, c->dtype, [&](auto tag) {
      return run<typename decltype(tag)::type>(env, c, which, as_stream(stream));
    });
  }
};

/* nonzero's check on the device: the lowest of n int64 where a and b differ. */
__global__ void first_diff_i64_kernel(const int64_t *a, const int64_t *b, int64_t n,
                                      unsigned long long *first) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
    if (a[i] != b[i])
      note_fail(first, i);
}

struct Nonzero {
  static double density(zlb_dtype_t dt) { return dt == ZLB_DT_BOOL ? 0.3 : 0.5; }

  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    int64_t n = 0;
    ZLBC_TRY(shape_numel(env, c, "nonzero", &n));
    if (c->dtype != ZLB_DT_BOOL && !(ZLB_DT_BIT(c->dtype) & ZLB_DT_FLOATS))
      return errf(env, ZLB_EINVAL, "nonzero: bool, float16, bfloat16 or float32 input");
    ZLBC_NEW_PRIV(env, c, p);
    p->n = n;
    p->ndim = c->shape.ndim;
    for (int i = 0; i < p->ndim; i++)
      p->dims[i] = c->shape.dims[i];
    const zlb_shape_t *s = &c->shape;
    c->n_in = 1;
    if (c->dtype == ZLB_DT_BOOL)
      tensor_set(&c->in[0], "x", ZLB_DT_BOOL, s->ndim, s->dims, ZLB_FILL_BOOL, 0.3, 0.0);
    else
      tensor_set(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_INT, 0.0, 2.0);
    c->n_out = 2;
    tensor_set2(&c->out[ZLB_BASELINE][0], "indices", ZLB_DT_INT64, n, s->ndim, ZLB_FILL_NONE, 0, 0);
    tensor_set1(&c->out[ZLB_BASELINE][1], "count", ZLB_DT_INT64, 1, ZLB_FILL_NONE, 0, 0);
    /* expected output: density * n rows of ndim int64 */
    c->bytes = (double)n * dsize(c->dtype) + density(c->dtype) * (double)n * s->ndim * 8.0 + 8.0;
    c->flops = 0;
    c->reduce_n = 1;
    c->check = ZLB_CHECK_CUSTOM;
    c->detail[0] = 0;
    fmt_dims(c->detail, sizeof c->detail, s->ndim, s->dims);
    snprintf(c->config[ZLB_BASELINE], sizeof c->config[0], "cub::DeviceSelect::If+unravel");
    snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "count/scan/write,tile=%d", kNzTile);
    return 0;
  }

  static int64_t ntiles(const Priv *p) { return ceil_div(p->n, kNzTile); }

  template <typename T> static int prep(zlb_env_t *env, zlb_case_t *c, int which) {
    Priv *p = priv_of(c);
    ZLBC_TRY(host_alloc(env, c, which, 8));
    if (which == ZLB_CANDIDATE)
      return ws_alloc(env, c, which, (size_t)ntiles(p) * 8);
    size_t temp = 0;
    ZLBC_CUDA(env, cub::DeviceSelect::If(nullptr, temp, thrust::counting_iterator<int64_t>(0),
                                         (int64_t *)nullptr, (int64_t *)nullptr, p->n,
                                         NzPred<T>{nullptr}, 0));
    p->extra[0] = (int64_t)temp;
    return ws_alloc(env, c, which, al256((size_t)p->n * 8) + temp);
  }

  template <typename T> static int run(zlb_env_t *env, zlb_case_t *c, int which, cudaStream_t s) {
    Priv *p = priv_of(c);
    const T *x = static_cast<const T *>(c->in[0].data);
    int64_t *idx = static_cast<int64_t *>(c->out[which][0].data);
    int64_t *count = static_cast<int64_t *>(c->out[which][1].data);
    char *ws = static_cast<char *>(p->ws[which]);
    int64_t *host = static_cast<int64_t *>(p->host[which]);
    if (!ws || !host)
      return errf(env, ZLB_EINVAL, "nonzero: prepare() was not called");
    NzDims dm;
    dm.nd = p->ndim;
    for (int i = 0; i < ZLB_MAX_DIMS; i++)
      dm.d[i] = i < p->ndim ? p->dims[i] : 1;
    int64_t st = 1;
    for (int i = ZLB_MAX_DIMS - 1; i >= 0; i--) {
      dm.st[i] = st;
      st *= dm.d[i];
    }
    if (which == ZLB_BASELINE) {
      int64_t *flat = reinterpret_cast<int64_t *>(ws);
      size_t temp = (size_t)p->extra[0];
      ZLBC_CUDA(env, cub::DeviceSelect::If(ws + al256((size_t)p->n * 8), temp,
                                           thrust::counting_iterator<int64_t>(0), flat, count, p->n,
                                           NzPred<T>{x}, s));
      ZLBC_CUDA(env, cudaMemcpyAsync(host, count, 8, cudaMemcpyDeviceToHost, s));
      ZLBC_CUDA(env, cudaStreamSynchronize(s));
      const int64_t k = *host;
      if (k < 0 || k > p->n)
        return errf(env, ZLB_EOP, "nonzero: CUB counted %lld of %lld elements", (long long)k,
                    (long long)p->n);
      if (k > 0) {
        nz_unravel_kernel<<<grid_for(env, k, 256, 8), 256, 0, s>>>(flat, idx, k, dm);
        ZLBC_LAUNCHED(env, "nz_unravel_kernel");
      }
      return 0;
    }
    const int64_t nt = ntiles(p);
    int64_t *counts = reinterpret_cast<int64_t *>(ws);
    const bool vec = aligned16(x);
    nz_count_kernel<T><<<(unsigned)nt, kNzThreads, 0, s>>>(x, p->n, counts, vec);
    ZLBC_LAUNCHED(env, "nz_count_kernel");
    nz_scan_kernel<<<1, 1024, 0, s>>>(counts, nt, count);
    ZLBC_LAUNCHED(env, "nz_scan_kernel");
    nz_write_kernel<T><<<(unsigned)nt, kNzThreads, 0, s>>>(x, p->n, counts, idx, dm, vec);
    ZLBC_LAUNCHED(env, "nz_write_kernel");
    ZLBC_CUDA(env, cudaMemcpyAsync(host, count, 8, cudaMemcpyDeviceToHost, s));
    ZLBC_CUDA(env, cudaStreamSynchronize(s));
    return 0;
  }

  template <typename F> static int dispatch(zlb_env_t *env, zlb_dtype_t dt, F &&f) {
    if (dt == ZLB_DT_BOOL)
      return f(Tag<uint8_t>{});
    return dispatch_float(env, dt, f);
  }

  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    return dispatch(env, c->dtype, [&](auto tag) {
      return prep<typename decltype(tag)::type>(env, c, which);
    });
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    return dispatch(env, c->dtype, [&](auto tag) {
      return run<typename decltype(tag)::type>(env, c, which, as_stream(stream));
    });
  }

  /* Same count, same first `count` rows (both list indices in row-major order). */
  static int compare(zlb_env_t *, const zlb_case_t *c, const zlb_host_view_t *v, char *msg,
                     size_t msglen) {
    const Priv *p = priv_of(c);
    const int64_t kb = *static_cast<const int64_t *>(v->out[ZLB_BASELINE][1]);
    const int64_t kc = *static_cast<const int64_t *>(v->out[ZLB_CANDIDATE][1]);
    if (kb != kc || kb < 0 || kb > p->n) {
      snprintf(msg, msglen, "nonzero: candidate count %lld, baseline %lld (of %lld)", (long long)kc,
               (long long)kb, (long long)p->n);
      return 1;
    }
    const int64_t *ib = static_cast<const int64_t *>(v->out[ZLB_BASELINE][0]);
    const int64_t *ic = static_cast<const int64_t *>(v->out[ZLB_CANDIDATE][0]);
    /* count * ndim indices, hundreds of millions on large inputs: memcmp of
     * runs on several threads; the lowest differing one is reported,
     * whatever the split. */
    const int64_t i = parallel_first_fail(kb * p->ndim, nullptr, [&](int64_t b, int64_t e,
                                                                      int64_t &) {
      for (int64_t r = b; r < e; r += 512) {
        const int64_t re = min64(r + 512, e);
        if (memcmp(ib + r, ic + r, (size_t)(re - r) * sizeof(int64_t)) != 0)
          for (int64_t j = r; j < re; j++)
            if (ib[j] != ic[j])
              return j;
      }
      return (int64_t)-1;
    });
    if (i >= 0) {
      snprintf(msg, msglen, "nonzero: row %lld dim %lld: candidate %lld, baseline %lld",
               (long long)(i / p->ndim), (long long)(i % p->ndim), (long long)ic[i],
               (long long)ib[i]);
      return 1;
    }
    return 0;
  }
  /* compare() on the device: the counts and the first differing index are
   * copied back, not the index lists. */
  static int compare_device(zlb_env_t *env, const zlb_case_t *c, void *stream, char *msg,
                            size_t msglen) {
    const Priv *p = priv_of(c);
    const cudaStream_t s = as_stream(stream);
    const int64_t *ib = static_cast<const int64_t *>(c->out[ZLB_BASELINE][0].data);
    const int64_t *ic = static_cast<const int64_t *>(c->out[ZLB_CANDIDATE][0].data);
    int64_t kb = 0, kc = 0, vb = 0, vc = 0;
    unsigned long long i = kNoFail;
    ZLBC_TRY(dev_load_i64(env, s, c->out[ZLB_BASELINE][1].data, 0, &kb));
    ZLBC_TRY(dev_load_i64(env, s, c->out[ZLB_CANDIDATE][1].data, 0, &kc));
    if (kb != kc || kb < 0 || kb > p->n) {
      snprintf(msg, msglen, "nonzero: candidate count %lld, baseline %lld (of %lld)", (long long)kc,
               (long long)kb, (long long)p->n);
      return ZLB_EMISMATCH;
    }
    const int64_t total = kb * p->ndim;
    if (total == 0)
      return 0;
    DevBuf first(env);
    ZLBC_TRY(first.get(sizeof(i), 0xff, s));
    first_diff_i64_kernel<<<grid_for(env, total, kCheckThreads, 8), kCheckThreads, 0, s>>>(
        ib, ic, total, first.as<unsigned long long>());
    ZLBC_LAUNCHED(env, "first_diff_i64_kernel");
    ZLBC_TRY(dev_read(env, s, &i, first.p, sizeof(i)));
    if (i == kNoFail)
      return 0;
    ZLBC_TRY(dev_load_i64(env, s, ib, (int64_t)i, &vb));
    ZLBC_TRY(dev_load_i64(env, s, ic, (int64_t)i, &vc));
    snprintf(msg, msglen, "nonzero: row %lld dim %lld: candidate %lld, baseline %lld",
             (long long)((int64_t)i / p->ndim), (long long)((int64_t)i % p->ndim), (long long)vc,
             (long long)vb);
    return ZLB_EMISMATCH;
  }
};

const zlb_op_t kScanOps[] = {
    ZLBC_OP("cumsum", "scan", ZLB_DT_FLOATS, "extents (scan along the last dim)",
            "inclusive prefix sum along the last dim, float accumulation", &Cumsum::case_init,
            nullptr, ZLBC_IMPL("cub", 0, &Cumsum::prepare, &Cumsum::enqueue),
            ZLBC_IMPL("zlb", 0, &Cumsum::prepare, &Cumsum::enqueue)),
    ZLBC_OP_DEV("nonzero", "scan", ZLB_DT_FLOATS | ZLB_DT_BIT(ZLB_DT_BOOL), "extents",
                "indices of nonzero elements [count, ndim] int64 + count; bool input true w.p. "
                "0.3, float input integers in [0, 2)",
                &Nonzero::case_init, &Nonzero::compare,
                ZLBC_IMPL("cub", ZLB_IMPL_NO_CAPTURE, &Nonzero::prepare, &Nonzero::enqueue),
                ZLBC_IMPL("zlb", ZLB_IMPL_NO_CAPTURE, &Nonzero::prepare, &Nonzero::enqueue),
                &Nonzero::compare_device),
};

} // namespace
} // namespace zlbc

int zlbc_register_scan(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kScanOps, sizeof zlbc::kScanOps / sizeof zlbc::kScanOps[0]);
}
