/* Data movement (family data_movement): contiguous (a transpose of the last
 * two dims made contiguous), cat (two tensors along the last dim),
 * index_select (rows), gather and scatter (along the last dim), embedding
 * and fill. Baselines are vendor code: cuBLASLt's matrix transform
 * (contiguous), the runtime's 2-D copies (cat), Thrust's gather, scatter
 * (after a cudaMemcpyAsync clone) and fill_n on the case's stream without
 * synchronising (the others). The reference kernels (a thread per element,
 * scalar accesses) are the candidates' paths for unaligned pointers.
 * Candidates: a shared-memory tiled transpose, warp-per-row and 16-byte
 * vector copies, scatter fused with its clone per row. */
#include <stdlib.h>

#include <exception>

#include <cublasLt.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/scatter.h>

#include "common.cuh"

namespace zlbc {
namespace {

enum MoveKind { MV_CONTIGUOUS, MV_CAT, MV_INDEX_SELECT, MV_GATHER, MV_SCATTER, MV_EMBEDDING, MV_FILL };

constexpr float kFillValue = 1.5f;

/* ---- contiguous: out[b][c][r] = x[b][r][c] ------------------------------------- */

constexpr int kTile = 32, kTileRows = 8;

template <typename T>
__global__ void __launch_bounds__(kTile *kTileRows) transpose_tiled_kernel(const T *__restrict__ x,
                                                                          T *__restrict__ y,
                                                                          int64_t nrows,
                                                                          int64_t ncols) {
  __shared__ T tile[kTile][kTile + 1];
  const int64_t per = nrows * ncols, b = blockIdx.z;
  const T *xb = x + b * per;
  T *yb = y + b * per;
  const int64_t c0 = (int64_t)blockIdx.x * kTile, r0 = (int64_t)blockIdx.y * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int i = ty; i < kTile; i += kTileRows) {
    const int64_t r = r0 + i, c = c0 + tx;
    if (r < nrows && c < ncols)
      tile[i][tx] = xb[r * ncols + c];
  }
  __syncthreads();
#pragma unroll
  for (int i = ty; i < kTile; i += kTileRows) {
    const int64_t c = c0 + i, r = r0 + tx; /* y[c][r] = tile[tx][i] */
    if (r < nrows && c < ncols)
      yb[c * nrows + r] = tile[tx][i];
  }
}

/* ---- cat along the last dim --------------------------------------------------- */

template <typename T>
__global__ void __launch_bounds__(256) cat_vec_kernel(const T *__restrict__ a, const T *__restrict__ b,
                                                      T *__restrict__ y, int64_t nrows,
                                                      int64_t ncols) {
  constexpr int E = vec16<T>();
  const int64_t pr = ncols / E, total = nrows * 2 * pr; /* packs per input row, output packs */
  for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < total;
       v += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = v / (2 * pr), j = v % (2 * pr);
    const Pack<T, E> p = j < pr ? load_pack<T, E>(a, r * pr + j) : load_pack<T, E>(b, r * pr + j - pr);
    store_pack<T, E>(y, v, p);
  }
}

template <typename T>
__global__ void cat_scalar_kernel(const T *__restrict__ a, const T *__restrict__ b,
                                  T *__restrict__ y, int64_t nrows, int64_t ncols) {
  const int64_t total = nrows * 2 * ncols;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < total;
       o += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = o / (2 * ncols), j = o % (2 * ncols);
    y[o] = j < ncols ? a[r * ncols + j] : b[r * ncols + j - ncols];
  }
}

/* ---- row gathers: index_select (dim 0) and embedding ------------------------------ */

/* A warp per output row. */
template <typename T>
__global__ void __launch_bounds__(256) rows_gather_warp_kernel(const T *__restrict__ src,
                                                               const int64_t *__restrict__ idx,
                                                               T *__restrict__ y, int64_t nout,
                                                               int64_t ncols, bool vec) {
  constexpr int E = vec16<T>();
  const int lane = threadIdx.x & 31;
  const int64_t row = (int64_t)blockIdx.x * 8 + (threadIdx.x >> 5);
  if (row >= nout)
    return;
  const T *s = src + idx[row] * ncols;
  T *d = y + row * ncols;
  if (vec) {
    for (int64_t v = lane; v < ncols / E; v += 32)
      store_pack<T, E>(d, v, load_pack<T, E>(s, v));
  } else {
    for (int64_t i = lane; i < ncols; i += 32)
      d[i] = s[i];
  }
}

/* ---- gather along the last dim: y[r][j] = x[r][index[r][j]] --------------------- */

template <typename T>
__global__ void gather_ref_kernel(const T *__restrict__ x, const int64_t *__restrict__ idx,
                                  T *__restrict__ y, int64_t ncols, int64_t n) {
  const int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (o < n)
    y[o] = x[(o / ncols) * ncols + idx[o]];
}

template <typename T>
__global__ void __launch_bounds__(256) gather_vec_kernel(const T *__restrict__ x,
                                                         const int64_t *__restrict__ idx,
                                                         T *__restrict__ y, int64_t ncols,
                                                         int64_t n) {
  constexpr int E = vec16<T>();
  const int64_t nvec = n / E, stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t v = tid; v < nvec; v += stride) {
    Pack<int64_t, 2> ip[E / 2];
#pragma unroll
    for (int q = 0; q < E / 2; q++)
      ip[q] = load_pack<int64_t, 2>(idx, v * (E / 2) + q);
    int64_t r = (v * E) / ncols, c = v * E - r * ncols;
    Pack<T, E> o;
#pragma unroll
    for (int k = 0; k < E; k++) {
      o.v[k] = x[r * ncols + ip[k / 2].v[k % 2]];
      if (++c == ncols) {
        c = 0;
        r++;
      }
    }
    store_pack<T, E>(y, v, o);
  }
  const int64_t t = nvec * E + tid;
  if (t < n)
    y[t] = x[(t / ncols) * ncols + idx[t]];
}

/* ---- scatter along the last dim: y = x; y[r][index[r][j]] = src[r][j] ---------- */

/* A block per row: copy the row, then (after the barrier) scatter into it. */
template <typename T>
__global__ void __launch_bounds__(256) scatter_fused_kernel(const T *__restrict__ x,
                                                            const T *__restrict__ src,
                                                            const int64_t *__restrict__ idx,
                                                            T *__restrict__ y, int64_t ncols,
                                                            int64_t nidx, bool vec) {
  constexpr int E = vec16<T>();
  const int64_t r = blockIdx.x;
  const T *xr = x + r * ncols;
  T *yr = y + r * ncols;
  if (vec) {
    for (int64_t v = threadIdx.x; v < ncols / E; v += 256)
      store_pack<T, E>(yr, v, load_pack<T, E>(xr, v));
  } else {
    for (int64_t i = threadIdx.x; i < ncols; i += 256)
      yr[i] = xr[i];
  }
  __syncthreads();
  const T *sr = src + r * nidx;
  const int64_t *ir = idx + r * nidx;
  for (int64_t j = threadIdx.x; j < nidx; j += 256)
    yr[ir[j]] = sr[j];
}

/* scatter's index: row r holds k distinct positions of [0, ncols), the
 * first k terms of (a_r * j + b_r) mod ncols with a_r coprime to ncols (a
 * permutation of the row), a_r and b_r drawn from splitmix64 of r: made on
 * the device in a few microseconds, the same for every run. */
__device__ __forceinline__ uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ uint64_t gcd64(uint64_t a, uint64_t b) {
  while (b) {
    const uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

__global__ void scatter_index_kernel(int64_t *__restrict__ idx, int64_t m, int64_t ncols,
                                     int64_t k) {
  const int64_t total = m * k, step = (int64_t)gridDim.x * blockDim.x;
  const uint64_t nc = (uint64_t)ncols;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += step) {
    const int64_t r = o / k, j = o - r * k;
    if (nc < 2) {
      idx[o] = 0;
      continue;
    }
    const uint64_t h = splitmix64((uint64_t)r);
    uint64_t a = 1 + h % (nc - 1); /* in [1, ncols) */
    while (gcd64(a, nc) != 1)
      a = a + 1 < nc ? a + 1 : 1;
    const uint64_t b = splitmix64(h) % nc;
    idx[o] = (int64_t)((a * (uint64_t)j + b) % nc);
  }
}

/* ---- fill ------------------------------------------------------------------------ */

template <typename T> __global__ void fill_ref_kernel(T *__restrict__ y, int64_t n, float v) {
  const int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (o < n)
    y[o] = from_f<T>(v);
}

template <typename T>
__global__ void __launch_bounds__(256) fill_vec_kernel(T *__restrict__ y, int64_t n, float v) {
  constexpr int E = vec16<T>();
  Pack<T, E> p;
#pragma unroll
  for (int k = 0; k < E; k++)
    p.v[k] = from_f<T>(v);
  const int64_t nvec = n / E, stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t i = tid; i < nvec; i += stride)
    store_pack<T, E>(y, i, p);
  const int64_t t = nvec * E + tid;
  if (t < n)
    y[t] = p.v[0];
}

/* ---- the vendor baselines ----------------------------------------------------- */

/* Thrust's maps from an output (or source) element to the element it reads
 * (or writes). */
struct RowsMap { /* index_select, embedding: out[j] = src[idx[j / cols] * cols + j % cols] */
  const int64_t *idx;
  int64_t cols;
  __host__ __device__ int64_t operator()(int64_t j) const {
    return idx[j / cols] * cols + j % cols;
  }
};
struct GatherMap { /* gather along the last dim: out[j] = x[(j / cols) * cols + idx[j]] */
  const int64_t *idx;
  int64_t cols;
  __host__ __device__ int64_t operator()(int64_t j) const { return (j / cols) * cols + idx[j]; }
};
struct ScatterMap { /* scatter: src[i] goes to out[(i / k) * cols + idx[i]] */
  const int64_t *idx;
  int64_t k, cols;
  __host__ __device__ int64_t operator()(int64_t i) const { return (i / k) * cols + idx[i]; }
};

template <typename F> inline auto map_iter(F f) {
  return thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), f);
}

/* Thrust reports failures by throwing: never across the C ABI. The
 * pending CUDA error, if there is one, names the cause best. */
template <typename Fn> inline int thrust_call(zlb_env_t *env, const char *what, Fn &&fn) {
  try {
    fn();
  } catch (const std::exception &e) {
    cudaError_t pending = cudaGetLastError();
    if (pending != cudaSuccess)
      return cuda_fail(env, what, pending);
    return errf(env, ZLB_EOP, "%s: %s", what, e.what());
  }
  return 0;
}

template <typename T> inline T host_value(float v);
template <> inline float host_value<float>(float v) { return v; }
template <> inline f16 host_value<f16>(float v) { return __float2half_rn(v); }
template <> inline bf16 host_value<bf16>(float v) { return __float2bfloat16_rn(v); }

/* contiguous: cuBLASLt's matrix transform with transA, per batch of
 * m x cols row-major (a cols x m column-major matrix) into cols x m
 * row-major (m x cols column-major). Made in prepare(), kept per case. */
struct LtTranspose {
  cublasLtHandle_t h = nullptr;
  cublasLtMatrixTransformDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, c = nullptr;
};

void drop_lt_transpose(void *v) {
  LtTranspose *t = static_cast<LtTranspose *>(v);
  if (t->a)
    cublasLtMatrixLayoutDestroy(t->a);
  if (t->c)
    cublasLtMatrixLayoutDestroy(t->c);
  if (t->desc)
    cublasLtMatrixTransformDescDestroy(t->desc);
  if (t->h)
    cublasLtDestroy(t->h);
  delete t;
}

#define ZLBC_LT(env, call) ZLBC_LIB(env, call, CUBLAS_STATUS_SUCCESS, cublasGetStatusName)

inline int lt_layout(zlb_env_t *env, cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows,
                     int64_t cols, int64_t batches) {
  const int32_t nb = (int32_t)batches;
  const int64_t stride = rows * cols;
  ZLBC_LT(env, cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, rows));
  ZLBC_LT(env, cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &nb,
                                                sizeof nb));
  ZLBC_LT(env, cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &stride, sizeof stride));
  return 0;
}

inline int lt_transpose_prepare(zlb_env_t *env, Priv *p, zlb_dtype_t dt) {
  const cudaDataType_t t = dt == ZLB_DT_FLOAT16    ? CUDA_R_16F
                           : dt == ZLB_DT_BFLOAT16 ? CUDA_R_16BF
                                                   : CUDA_R_32F;
  const cublasOperation_t trans = CUBLAS_OP_T;
  LtTranspose *lt = new (std::nothrow) LtTranspose();
  if (!lt)
    return errf(env, ZLB_ENOMEM, "contiguous: out of host memory");
  p->handle[ZLB_BASELINE] = lt;
  p->drop_handle = drop_lt_transpose;
  ZLBC_LT(env, cublasLtCreate(&lt->h));
  ZLBC_LT(env, cublasLtMatrixTransformDescCreate(&lt->desc, CUDA_R_32F));
  ZLBC_LT(env, cublasLtMatrixTransformDescSetAttribute(
                   lt->desc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &trans, sizeof trans));
  /* A: x as column-major cols x m; C: the result as column-major m x cols */
  ZLBC_TRY(lt_layout(env, &lt->a, t, p->cols, p->m, p->b));
  ZLBC_TRY(lt_layout(env, &lt->c, t, p->m, p->cols, p->b));
  return 0;
}

/* ---- the operators ------------------------------------------------------------------ */

/*
 * Geometry in Priv:
 *   contiguous:   b batches of m x cols -> cols x m
 *   cat:          m rows of cols, two inputs -> m x 2*cols
 *   index_select: source m x cols, k selected rows (k = m, or args[0])
 *   embedding:    weight extra[0] (V) x cols (D), k = B indices
 *   gather:       m x cols, index of the same shape
 *   scatter:      m x cols, k = index columns (cols / 2, at least 1)
 *   fill:         n elements
 */
template <int KIND> struct MoveOp {
  static constexpr const char *name() {
    return KIND == MV_CONTIGUOUS     ? "contiguous"
           : KIND == MV_CAT          ? "cat"
           : KIND == MV_INDEX_SELECT ? "index_select"
           : KIND == MV_GATHER       ? "gather"
           : KIND == MV_SCATTER      ? "scatter"
           : KIND == MV_EMBEDDING    ? "embedding"
                                     : "fill";
  }

  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    int64_t n = 0;
    const zlb_shape_t *s = &c->shape;
    if (KIND == MV_EMBEDDING) { /* [B, V, D] names two tensors, not one */
      if (s->ndim < 2 || s->ndim > 3 || s->dims[0] <= 0 || s->dims[1] <= 0 ||
          (s->ndim == 3 && s->dims[2] <= 0) || s->dims[0] > ((int64_t)1 << 31) ||
          s->dims[s->ndim - 1] > ((int64_t)1 << 31) || (s->ndim == 3 && s->dims[1] > ((int64_t)1 << 31)))
        return errf(env, ZLB_EINVAL, "embedding: shape is [B, V, D] or [B, D] (V = 32000), "
                                     "positive extents below 2^31");
      n = s->dims[0] * s->dims[s->ndim - 1];
    } else {
      ZLBC_TRY(shape_numel(env, c, name(), &n));
    }
    const zlb_dtype_t dt = c->dtype;
    const double es = dsize(dt);
    const int64_t ncols = s->dims[s->ndim - 1], m = n / ncols;
    int64_t d[ZLB_MAX_DIMS];
    for (int i = 0; i < s->ndim; i++)
      d[i] = s->dims[i];
    c->detail[0] = 0;
    c->flops = 0;
    c->reduce_n = 1;
    c->check = ZLB_CHECK_EXACT;
    int64_t k = 0, vocab = 0, rows = s->ndim >= 2 ? s->dims[s->ndim - 2] : 1;
    if (KIND == MV_CONTIGUOUS && (n / (rows * ncols) > 65535 || ceil_div(rows, kTile) > 65535))
      return errf(env, ZLB_EINVAL, "contiguous: at most 65535 batches and 2097120 rows");
    if (KIND == MV_INDEX_SELECT) {
      k = s->nargs >= 1 ? s->args[0] : m;
      if (k < 1)
        return errf(env, ZLB_EINVAL, "index_select: the index length must be positive");
    }
    if (KIND == MV_EMBEDDING) {
      k = s->dims[0];
      vocab = s->ndim == 3 ? s->dims[1] : 32000;
    }
    if (KIND == MV_SCATTER)
      k = ncols / 2 > 0 ? ncols / 2 : 1;
    if (KIND == MV_SCATTER && m > INT32_MAX)
      return errf(env, ZLB_EINVAL, "scatter: at most 2^31-1 rows");
    ZLBC_NEW_PRIV(env, c, p);
    p->n = n;
    p->m = m;
    p->cols = ncols;
    p->k = k;
    p->extra[0] = vocab;
    switch (KIND) {
    case MV_CONTIGUOUS: {
      p->b = n / (rows * ncols);
      p->m = rows;
      c->n_in = 1;
      tensor_set(&c->in[0], "x", dt, s->ndim, d, ZLB_FILL_NORMAL, 0.0, 1.0);
      int64_t od[ZLB_MAX_DIMS];
      for (int i = 0; i < s->ndim; i++)
        od[i] = d[i];
      if (s->ndim >= 2) {
        od[s->ndim - 2] = ncols;
        od[s->ndim - 1] = rows;
      }
      c->n_out = 1;
      tensor_set(&c->out[ZLB_BASELINE][0], "out", dt, s->ndim, od, ZLB_FILL_NONE, 0, 0);
      c->bytes = 2.0 * (double)n * es;
      fmt_dims(c->detail, sizeof c->detail, s->ndim, d);
      appendf(c->detail, sizeof c->detail, ", transpose(-2, -1)");
      break;
    }
    case MV_CAT: {
      c->n_in = 2;
      tensor_set(&c->in[0], "a", dt, s->ndim, d, ZLB_FILL_NORMAL, 0.0, 1.0);
      tensor_set(&c->in[1], "b", dt, s->ndim, d, ZLB_FILL_NORMAL, 0.0, 1.0);
      fmt_dims(c->detail, sizeof c->detail, s->ndim, d);
      appendf(c->detail, sizeof c->detail, ", ");
      fmt_dims(c->detail, sizeof c->detail, s->ndim, d);
      appendf(c->detail, sizeof c->detail, ", dim=-1");
      d[s->ndim - 1] = 2 * ncols;
      c->n_out = 1;
      tensor_set(&c->out[ZLB_BASELINE][0], "out", dt, s->ndim, d, ZLB_FILL_NONE, 0, 0);
      c->bytes = 4.0 * (double)n * es;
      break;
    }
    case MV_INDEX_SELECT: {
      c->n_in = 2;
      tensor_set2(&c->in[0], "x", dt, m, ncols, ZLB_FILL_NORMAL, 0.0, 1.0);
      tensor_set1(&c->in[1], "index", ZLB_DT_INT64, k, ZLB_FILL_INT, 0.0, (double)m);
      c->n_out = 1;
      tensor_set2(&c->out[ZLB_BASELINE][0], "out", dt, k, ncols, ZLB_FILL_NONE, 0, 0);
      c->bytes = 2.0 * (double)k * (double)ncols * es + 8.0 * (double)k;
      appendf(c->detail, sizeof c->detail, "[%lld, %lld], dim=0, index=[%lld]", (long long)m,
              (long long)ncols, (long long)k);
      break;
    }
    case MV_EMBEDDING: {
      c->n_in = 2;
      tensor_set2(&c->in[0], "weight", dt, vocab, ncols, ZLB_FILL_NORMAL, 0.0, 1.0);
      tensor_set1(&c->in[1], "indices", ZLB_DT_INT64, k, ZLB_FILL_INT, 0.0, (double)vocab);
      c->n_out = 1;
      tensor_set2(&c->out[ZLB_BASELINE][0], "out", dt, k, ncols, ZLB_FILL_NONE, 0, 0);
      c->bytes = 2.0 * (double)k * (double)ncols * es + 8.0 * (double)k;
      appendf(c->detail, sizeof c->detail, "[%lld], weight=[%lld, %lld]", (long long)k,
              (long long)vocab, (long long)ncols);
      break;
    }
    case MV_GATHER: {
      c->n_in = 2;
      tensor_set(&c->in[0], "x", dt, s->ndim, d, ZLB_FILL_NORMAL, 0.0, 1.0);
      tensor_set(&c->in[1], "index", ZLB_DT_INT64, s->ndim, d, ZLB_FILL_INT, 0.0, (double)ncols);
      c->n_out = 1;
      tensor_set(&c->out[ZLB_BASELINE][0], "out", dt, s->ndim, d, ZLB_FILL_NONE, 0, 0);
      c->bytes = (double)n * (2.0 * es + 8.0);
      fmt_dims(c->detail, sizeof c->detail, s->ndim, d);
      appendf(c->detail, sizeof c->detail, ", dim=-1");
      break;
    }
    case MV_SCATTER: {
      c->n_in = 3;
      tensor_set(&c->in[0], "x", dt, s->ndim, d, ZLB_FILL_NORMAL, 0.0, 1.0);
      d[s->ndim - 1] = k;
      /* distinct positions per row: filled in prepare() */
      tensor_set(&c->in[1], "index", ZLB_DT_INT64, s->ndim, d, ZLB_FILL_NONE, 0.0, 0.0);
      tensor_set(&c->in[2], "src", dt, s->ndim, d, ZLB_FILL_NORMAL, 0.0, 1.0);
      d[s->ndim - 1] = ncols;
      c->n_out = 1;
      tensor_set(&c->out[ZLB_BASELINE][0], "out", dt, s->ndim, d, ZLB_FILL_NONE, 0, 0);
      c->bytes = 2.0 * (double)n * es + (double)m * (double)k * (8.0 + es);
      fmt_dims(c->detail, sizeof c->detail, s->ndim, d);
      appendf(c->detail, sizeof c->detail, ", dim=-1, index=[.., %lld]", (long long)k);
      break;
    }
    default: { /* fill */
      c->n_in = 0;
      c->n_out = 1;
      tensor_set(&c->out[ZLB_BASELINE][0], "out", dt, s->ndim, d, ZLB_FILL_NONE, 0, 0);
      c->bytes = (double)n * es;
      fmt_dims(c->detail, sizeof c->detail, s->ndim, d);
      appendf(c->detail, sizeof c->detail, ", value=1.5");
      break;
    }
    }
    static const char *const base_cfg[] = {"cublasLtMatrixTransform", "cudaMemcpy2DAsync",
                                           "thrust::gather", "thrust::gather",
                                           "cudaMemcpyAsync+thrust::scatter", "thrust::gather",
                                           "thrust::fill_n"};
    static const char *const cand_cfg[] = {"smem-tile=32x32", "vec16,grid-stride", "warp/row,vec16",
                                           "vec16,grid-stride", "block/row,fused", "warp/row,vec16",
                                           "vec16,grid-stride"};
    snprintf(c->config[ZLB_BASELINE], sizeof c->config[0], "%s", base_cfg[KIND]);
    snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "%s", cand_cfg[KIND]);
    return 0;
  }

  /* scatter: each row's index holds k distinct positions in [0, cols)
   * (scatter_index_kernel), made on the device once per case. */
  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    Priv *p = priv_of(c);
    if (KIND == MV_CONTIGUOUS && which == ZLB_BASELINE && !p->handle[ZLB_BASELINE])
      return lt_transpose_prepare(env, p, c->dtype);
    if (KIND != MV_SCATTER || p->filled)
      return 0;
    const int64_t total = p->m * p->k;
    scatter_index_kernel<<<grid_for(env, total, 256, 8), 256>>>(
        static_cast<int64_t *>(c->in[1].data), p->m, p->cols, p->k);
    ZLBC_LAUNCHED(env, "scatter_index_kernel");
    ZLBC_CUDA(env, cudaDeviceSynchronize());
    p->filled = 1;
    return 0;
  }

  template <typename T> static int run(zlb_env_t *env, zlb_case_t *c, int which, cudaStream_t s) {
    const Priv *p = priv_of(c);
    const bool cand = which == ZLB_CANDIDATE;
    T *y = static_cast<T *>(c->out[which][0].data);
    const int64_t total = numel_of(&c->out[which][0]);
    const unsigned ref_blocks = (unsigned)ceil_div(total, 256);
    constexpr int E = vec16<T>();
    if constexpr (KIND == MV_CONTIGUOUS) {
      const T *x = static_cast<const T *>(c->in[0].data);
      if (cand) {
        dim3 grid((unsigned)ceil_div(p->cols, kTile), (unsigned)ceil_div(p->m, kTile), (unsigned)p->b);
        transpose_tiled_kernel<T><<<grid, dim3(kTile, kTileRows), 0, s>>>(x, y, p->m, p->cols);
      } else {
        const LtTranspose *lt = static_cast<const LtTranspose *>(p->handle[ZLB_BASELINE]);
        const float alpha = 1.0f, beta = 0.0f;
        if (!lt)
          return errf(env, ZLB_EINVAL, "contiguous: prepare() was not called");
        ZLBC_LT(env, cublasLtMatrixTransform(lt->h, lt->desc, &alpha, x, lt->a, &beta, nullptr,
                                             nullptr, y, lt->c, s));
        return 0;
      }
    } else if constexpr (KIND == MV_CAT) {
      const T *a = static_cast<const T *>(c->in[0].data);
      const T *b = static_cast<const T *>(c->in[1].data);
      const size_t row = (size_t)p->cols * sizeof(T);
      if (!cand) {
        ZLBC_CUDA(env, cudaMemcpy2DAsync(y, 2 * row, a, row, row, (size_t)p->m,
                                         cudaMemcpyDeviceToDevice, s));
        ZLBC_CUDA(env, cudaMemcpy2DAsync(reinterpret_cast<char *>(y) + row, 2 * row, b, row, row,
                                         (size_t)p->m, cudaMemcpyDeviceToDevice, s));
        return 0;
      }
      if (aligned16(a) && aligned16(b) && aligned16(y) && p->cols % E == 0)
        cat_vec_kernel<T><<<grid_for(env, total / E, 256, 8), 256, 0, s>>>(a, b, y, p->m, p->cols);
      else
        cat_scalar_kernel<T><<<grid_for(env, total, 256, 8), 256, 0, s>>>(a, b, y, p->m, p->cols);
    } else if constexpr (KIND == MV_INDEX_SELECT || KIND == MV_EMBEDDING) {
      const T *src = static_cast<const T *>(c->in[0].data);
      const int64_t *idx = static_cast<const int64_t *>(c->in[1].data);
      if (!cand)
        return thrust_call(env, "thrust::gather", [&] {
          auto map = map_iter(RowsMap{idx, p->cols});
          thrust::gather(thrust::cuda::par_nosync.on(s), map, map + total, src, y);
        });
      rows_gather_warp_kernel<T><<<(unsigned)ceil_div(p->k, 8), 256, 0, s>>>(
          src, idx, y, p->k, p->cols, aligned16(src) && aligned16(y) && p->cols % E == 0);
    } else if constexpr (KIND == MV_GATHER) {
      const T *x = static_cast<const T *>(c->in[0].data);
      const int64_t *idx = static_cast<const int64_t *>(c->in[1].data);
      if (!cand)
        return thrust_call(env, "thrust::gather", [&] {
          auto map = map_iter(GatherMap{idx, p->cols});
          thrust::gather(thrust::cuda::par_nosync.on(s), map, map + total, x, y);
        });
      if (aligned16(idx) && aligned16(y))
        gather_vec_kernel<T><<<grid_for(env, total / E, 256, 8), 256, 0, s>>>(x, idx, y, p->cols, total);
      else
        gather_ref_kernel<T><<<ref_blocks, 256, 0, s>>>(x, idx, y, p->cols, total);
    } else if constexpr (KIND == MV_SCATTER) {
      const T *x = static_cast<const T *>(c->in[0].data);
      const int64_t *idx = static_cast<const int64_t *>(c->in[1].data);
      const T *src = static_cast<const T *>(c->in[2].data);
      if (!p->filled)
        return errf(env, ZLB_EINVAL, "scatter: prepare() was not called");
      if (cand) {
        scatter_fused_kernel<T><<<(unsigned)p->m, 256, 0, s>>>(
            x, src, idx, y, p->cols, p->k, aligned16(x) && aligned16(y) && p->cols % E == 0);
      } else {
        ZLBC_CUDA(env, cudaMemcpyAsync(y, x, (size_t)p->n * sizeof(T), cudaMemcpyDeviceToDevice, s));
        const int64_t ns = p->m * p->k;
        return thrust_call(env, "thrust::scatter", [&] {
          thrust::scatter(thrust::cuda::par_nosync.on(s), src, src + ns,
                          map_iter(ScatterMap{idx, p->k, p->cols}), y);
        });
      }
    } else {
      if (!cand)
        return thrust_call(env, "thrust::fill_n", [&] {
          thrust::fill_n(thrust::cuda::par_nosync.on(s), y, total, host_value<T>(kFillValue));
        });
      if (aligned16(y))
        fill_vec_kernel<T><<<grid_for(env, total / E, 256, 8), 256, 0, s>>>(y, total, kFillValue);
      else
        fill_ref_kernel<T><<<ref_blocks, 256, 0, s>>>(y, total, kFillValue);
    }
    ZLBC_LAUNCHED(env, cand ? "movement candidate kernel" : "movement reference kernel");
    return 0;
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    return dispatch_float(env, c->dtype, [&](auto tag) {
      return run<typename decltype(tag)::type>(env, c, which, as_stream(stream));
    });
  }
};

#define MOVE_OP(KIND, DESC, DOC)                                                               \
  ZLBC_OP(MoveOp<KIND>::name(), "data_movement", ZLB_DT_FLOATS, DESC, DOC,                   \
          &MoveOp<KIND>::case_init, nullptr,                                                  \
          ZLBC_IMPL(KIND == MV_CAT            ? "cudart"                                       \
                    : KIND == MV_CONTIGUOUS ? "cublaslt"                                     \
                                            : "thrust",                                      \
                    0, &MoveOp<KIND>::prepare,                                                \
                    &MoveOp<KIND>::enqueue),                                                  \
          ZLBC_IMPL("zlb", 0, &MoveOp<KIND>::prepare, &MoveOp<KIND>::enqueue))

const zlb_op_t kMoveOps[] = {
    MOVE_OP(MV_CONTIGUOUS, "[.., R, C] -> [.., C, R]", "x.transpose(-2, -1).contiguous()"),
    MOVE_OP(MV_CAT, "extents of each input (cat along the last dim)", "cat([a, b], dim=-1)"),
    MOVE_OP(MV_INDEX_SELECT, "M, N (k = args[0], default M)",
            "index_select(x, 0, index); index int64 in [0, M)"),
    MOVE_OP(MV_GATHER, "extents (x and index; along the last dim)",
            "gather(x, -1, index); index int64 in [0, N)"),
    MOVE_OP(MV_SCATTER, "extents of x (index and src have N/2 columns)",
            "x.scatter(-1, index, src); index: distinct positions per row"),
    MOVE_OP(MV_EMBEDDING, "B, V, D or B, D (V = 32000)", "embedding(indices[B], weight[V, D])"),
    MOVE_OP(MV_FILL, "output extents", "full(shape, 1.5)"),
};

} // namespace
} // namespace zlbc

int zlbc_register_movement(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kMoveOps, sizeof zlbc::kMoveOps / sizeof zlbc::kMoveOps[0]);
}
