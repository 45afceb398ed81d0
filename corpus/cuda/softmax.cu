/* softmax and log_softmax over the last dim (family softmax). Baseline:
 * cuDNN's cudnnSoftmaxForward (accurate, or log, per instance) where the
 * build found cuDNN (ZLBC_HAVE_CUDNN), else a block per row making three
 * passes (max, sum of exponentials, write). Candidate: one online pass for
 * (max, sum) then the write pass, a group of G threads per row
 * (G = 32..1024), 16-byte vectors; the group size is autotuned per shape. */
#ifndef ZLBC_HAVE_CUDNN
#define ZLBC_HAVE_CUDNN 0
#endif
/* Before common.cuh, whose hidden visibility would hide cuDNN's symbols. */
#if ZLBC_HAVE_CUDNN
#include <cudnn.h>
#define ZLBC_SOFTMAX_BASELINE "cudnn"
#else
#define ZLBC_SOFTMAX_BASELINE "ref"
#endif

#include "common.cuh"

namespace zlbc {
namespace {

/* Running (max, sum of e^(x - max)). */
struct MaxSum {
  float m, s;
};

__device__ __forceinline__ MaxSum ms_combine(MaxSum a, MaxSum b) {
  float m = fmaxf(a.m, b.m);
  if (m == neg_inf())
    return {m, 0.0f}; /* both empty */
  float s = (a.m == neg_inf() ? 0.0f : a.s * __expf(a.m - m)) +
            (b.m == neg_inf() ? 0.0f : b.s * __expf(b.m - m));
  return {m, s};
}

struct MaxSumOp {
  __device__ MaxSum operator()(MaxSum a, MaxSum b) const { return ms_combine(a, b); }
};

__device__ __forceinline__ float sm_out(float x, float m, float inv_s, float log_s, bool log) {
  return log ? x - m - log_s : expf(x - m) * inv_s;
}

#if !ZLBC_HAVE_CUDNN
/* ---- baseline without cuDNN: a block per row, three passes ------------------ */

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct AddOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

template <typename T>
__global__ void __launch_bounds__(256) softmax_ref_kernel(const T *__restrict__ x, T *__restrict__ y,
                                                          int64_t ncols, bool log) {
  __shared__ float red[32];
  const int64_t row = blockIdx.x;
  const T *xr = x + row * ncols;
  T *yr = y + row * ncols;
  float m = neg_inf();
  for (int64_t i = threadIdx.x; i < ncols; i += 256)
    m = fmaxf(m, to_f(xr[i]));
  m = group_reduce<256>(m, MaxOp{}, red);
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < ncols; i += 256)
    s += expf(to_f(xr[i]) - m);
  s = group_reduce<256>(s, AddOp{}, red);
  const float inv_s = 1.0f / s, log_s = logf(s);
  for (int64_t i = threadIdx.x; i < ncols; i += 256)
    yr[i] = from_f<T>(sm_out(to_f(xr[i]), m, inv_s, log_s, log));
}
#endif

/* ---- candidate ---------------------------------------------------------------- */

/* Configurations: G threads per row, R rows per block (G * R threads). */
struct SmCfg {
  int g, r;
};
constexpr SmCfg kSmCfgs[] = {{32, 4}, {32, 8}, {128, 1}, {256, 1}, {512, 1}, {1024, 1}};
constexpr int kSmNcfg = (int)(sizeof kSmCfgs / sizeof kSmCfgs[0]);

/*
 * One row per group of G threads. `vec`: every row starts 16-byte aligned
 * and ncols is a multiple of the vector width, so rows go in whole vectors.
 */
template <typename T, int G, int R>
__global__ void __launch_bounds__(G * R) softmax_online_kernel(const T *__restrict__ x,
                                                               T *__restrict__ y, int64_t nrows,
                                                               int64_t ncols, bool vec, bool log) {
  constexpr int E = vec16<T>();
  __shared__ MaxSum red[G > 32 ? G / 32 : 1];
  const int lane = threadIdx.x % G;
  const int64_t row = (int64_t)blockIdx.x * R + threadIdx.x / G;
  const bool valid = row < nrows;
  const T *xr = x + (valid ? row : 0) * ncols;
  T *yr = y + (valid ? row : 0) * ncols;

  MaxSum st = {neg_inf(), 0.0f};
  if (valid) {
    if (vec) {
      const int64_t nvec = ncols / E;
      for (int64_t v = lane; v < nvec; v += G) {
        Pack<T, E> p = load_pack<T, E>(xr, v);
        float f[E], pm = neg_inf();
#pragma unroll
        for (int k = 0; k < E; k++) {
          f[k] = to_f(p.v[k]);
          pm = fmaxf(pm, f[k]);
        }
        float m = fmaxf(st.m, pm);
        float s = st.m == neg_inf() ? 0.0f : st.s * __expf(st.m - m);
#pragma unroll
        for (int k = 0; k < E; k++)
          s += __expf(f[k] - m);
        st = {m, s};
      }
    } else {
      for (int64_t i = lane; i < ncols; i += G) {
        float f = to_f(xr[i]);
        if (f > st.m) {
          st.s = (st.m == neg_inf() ? 0.0f : st.s * __expf(st.m - f)) + 1.0f;
          st.m = f;
        } else {
          st.s += __expf(f - st.m);
        }
      }
    }
  }
  st = group_reduce<G>(st, MaxSumOp{}, red);
  if (!valid)
    return;
  const float m = st.m, inv_s = 1.0f / st.s, log_s = logf(st.s);
  if (vec) {
    const int64_t nvec = ncols / E;
    for (int64_t v = lane; v < nvec; v += G) {
      Pack<T, E> p = load_pack<T, E>(xr, v), o;
#pragma unroll
      for (int k = 0; k < E; k++)
        o.v[k] = from_f<T>(sm_out(to_f(p.v[k]), m, inv_s, log_s, log));
      store_pack<T, E>(yr, v, o);
    }
  } else {
    for (int64_t i = lane; i < ncols; i += G)
      yr[i] = from_f<T>(sm_out(to_f(xr[i]), m, inv_s, log_s, log));
  }
}

template <typename T, int G, int R>
inline void launch_online(const T *x, T *y, int64_t nrows, int64_t ncols, bool vec, bool log,
                          cudaStream_t s) {
  softmax_online_kernel<T, G, R><<<(unsigned)ceil_div(nrows, R), G * R, 0, s>>>(x, y, nrows, ncols,
                                                                                 vec, log);
}

template <typename T>
inline int softmax_candidate(zlb_env_t *env, int cfg, const T *x, T *y, int64_t nrows,
                             int64_t ncols, bool log, cudaStream_t s) {
  const bool vec = aligned16(x) && aligned16(y) && ncols % vec16<T>() == 0;
  switch (cfg) {
  case 0: launch_online<T, 32, 4>(x, y, nrows, ncols, vec, log, s); break;
  case 1: launch_online<T, 32, 8>(x, y, nrows, ncols, vec, log, s); break;
  case 2: launch_online<T, 128, 1>(x, y, nrows, ncols, vec, log, s); break;
  case 3: launch_online<T, 256, 1>(x, y, nrows, ncols, vec, log, s); break;
  case 4: launch_online<T, 512, 1>(x, y, nrows, ncols, vec, log, s); break;
  default: launch_online<T, 1024, 1>(x, y, nrows, ncols, vec, log, s); break;
  }
  ZLBC_LAUNCHED(env, "softmax_online_kernel");
  return 0;
}

inline int sm_default_cfg(int64_t ncols) {
  if (ncols <= 1024)
    return 0;
  if (ncols <= 4096)
    return 2;
  if (ncols <= 16384)
    return 3;
  return 4;
}

inline void sm_config_name(zlb_case_t *c, int cfg, bool tuned) {
  snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "block=%d,rows=%d%s",
           kSmCfgs[cfg].g * kSmCfgs[cfg].r, kSmCfgs[cfg].r, tuned ? ",tuned" : "");
}

#if ZLBC_HAVE_CUDNN
/* ---- cuDNN baseline: a handle and the rows as an N x C x 1 x 1 tensor ------- */

struct CudnnSoftmax {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t desc = nullptr;
};

void drop_cudnn_softmax(void *v) {
  CudnnSoftmax *d = static_cast<CudnnSoftmax *>(v);
  if (d->desc)
    cudnnDestroyTensorDescriptor(d->desc);
  if (d->h)
    cudnnDestroy(d->h);
  delete d;
}

#define ZLBC_CUDNN(env, call) ZLBC_LIB(env, call, CUDNN_STATUS_SUCCESS, cudnnGetErrorString)

inline int cudnn_softmax_prepare(zlb_env_t *env, Priv *p, zlb_dtype_t dt) {
  const cudnnDataType_t t = dt == ZLB_DT_FLOAT16    ? CUDNN_DATA_HALF
                            : dt == ZLB_DT_BFLOAT16 ? CUDNN_DATA_BFLOAT16
                                                    : CUDNN_DATA_FLOAT;
  if (p->m * p->cols > INT32_MAX)
    return errf(env, ZLB_EINVAL, "cudnn softmax: at most 2^31-1 elements (int tensor extents)");
  CudnnSoftmax *d = new (std::nothrow) CudnnSoftmax();
  if (!d)
    return errf(env, ZLB_ENOMEM, "cudnn softmax: out of host memory");
  p->handle[ZLB_BASELINE] = d;
  p->drop_handle = drop_cudnn_softmax;
  ZLBC_CUDNN(env, cudnnCreate(&d->h));
  ZLBC_CUDNN(env, cudnnCreateTensorDescriptor(&d->desc));
  ZLBC_CUDNN(env, cudnnSetTensor4dDescriptor(d->desc, CUDNN_TENSOR_NCHW, t, (int)p->m,
                                             (int)p->cols, 1, 1));
  return 0;
}

inline int cudnn_softmax(zlb_env_t *env, const Priv *p, const void *x, void *y, bool log,
                         cudaStream_t s) {
  const CudnnSoftmax *d = static_cast<const CudnnSoftmax *>(p->handle[ZLB_BASELINE]);
  const float alpha = 1.0f, beta = 0.0f;
  if (!d)
    return errf(env, ZLB_EINVAL, "softmax: prepare() was not called");
  ZLBC_CUDNN(env, cudnnSetStream(d->h, s));
  ZLBC_CUDNN(env, cudnnSoftmaxForward(d->h, log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                      CUDNN_SOFTMAX_MODE_INSTANCE, &alpha, d->desc, x, &beta,
                                      d->desc, y));
  return 0;
}
#endif

/* ---- the operators ------------------------------------------------------------ */

template <bool LOG> struct Softmax {
  static constexpr const char *name() { return LOG ? "log_softmax" : "softmax"; }

  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    int64_t m = 0, ncols = 0;
    ZLBC_TRY(rows_cols(env, c, name(), true, &m, &ncols));
    if (m > INT32_MAX)
      return errf(env, ZLB_EINVAL, "%s: at most 2^31-1 rows", name());
    ZLBC_NEW_PRIV(env, c, p);
    p->m = m;
    p->cols = ncols;
    p->cfg[ZLB_CANDIDATE] = sm_default_cfg(ncols);
    const zlb_shape_t *s = &c->shape;
    c->n_in = 1;
    tensor_set(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
    c->n_out = 1;
    tensor_set(&c->out[ZLB_BASELINE][0], "out", c->dtype, s->ndim, s->dims, ZLB_FILL_NONE, 0, 0);
    const double n = (double)m * (double)ncols;
    c->bytes = 2.0 * n * dsize(c->dtype);
    c->flops = 5.0 * n; /* max, subtract, exp, add, scale */
    c->reduce_n = (double)ncols;
    /* outputs are probabilities of order 1/N: 1e-4 * N would pass anything,
     * so the absolute tolerance is 1e-6 (atol * reduce_n) */
    c->atol = 1e-6 / (double)ncols;
    c->check = ZLB_CHECK_CLOSE;
    c->detail[0] = 0;
    fmt_dims(c->detail, sizeof c->detail, s->ndim, s->dims);
    appendf(c->detail, sizeof c->detail, ", dim=-1");
    snprintf(c->config[ZLB_BASELINE], sizeof c->config[0], "%s",
             ZLBC_HAVE_CUDNN ? "cudnnSoftmaxForward" : "block=256,3-pass");
    sm_config_name(c, p->cfg[ZLB_CANDIDATE], false);
    return 0;
  }

  static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
    Priv *p = priv_of(c);
#if ZLBC_HAVE_CUDNN
    if (which == ZLB_BASELINE && !p->handle[ZLB_BASELINE])
      return cudnn_softmax_prepare(env, p, c->dtype);
#endif
    if (which != ZLB_CANDIDATE || !env->autotune)
      return 0;
    char key[160];
    tune_key(key, sizeof key, name(), c);
    int best = tune_lookup(key);
    if (best < 0) {
      ZLBC_TRY(dispatch_float(env, c->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *x = static_cast<const T *>(c->in[0].data);
        T *y = static_cast<T *>(c->out[ZLB_CANDIDATE][0].data);
        return tune_time(env, kSmNcfg, 5, [&](int cfg, cudaStream_t s) {
          return softmax_candidate<T>(env, cfg, x, y, p->m, p->cols, LOG, s);
        }, &best);
      }));
      tune_store(key, best);
    }
    p->cfg[ZLB_CANDIDATE] = best;
    sm_config_name(c, best, true);
    return 0;
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    Priv *p = priv_of(c);
    cudaStream_t s = as_stream(stream);
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T *x = static_cast<const T *>(c->in[0].data);
      T *y = static_cast<T *>(c->out[which][0].data);
      if (which == ZLB_CANDIDATE)
        return softmax_candidate<T>(env, p->cfg[ZLB_CANDIDATE], x, y, p->m, p->cols, LOG, s);
#if ZLBC_HAVE_CUDNN
      return cudnn_softmax(env, p, x, y, LOG, s);
#else
      softmax_ref_kernel<T><<<(unsigned)p->m, 256, 0, s>>>(x, y, p->cols, LOG);
      ZLBC_LAUNCHED(env, "softmax_ref_kernel");
      return 0;
#endif
    });
  }
};

#define SOFTMAX_OP(LOG, DOC)                                                                  \
  ZLBC_OP(Softmax<LOG>::name(), "softmax", ZLB_DT_FLOATS, "M, N (over the last dim)", DOC,   \
          &Softmax<LOG>::case_init, nullptr,                                                  \
          ZLBC_IMPL(ZLBC_SOFTMAX_BASELINE, 0, &Softmax<LOG>::prepare, &Softmax<LOG>::enqueue), \
          ZLBC_IMPL("zlb", ZLB_IMPL_AUTOTUNES, &Softmax<LOG>::prepare, &Softmax<LOG>::enqueue))

const zlb_op_t kSoftmaxOps[] = {
    SOFTMAX_OP(false, "softmax over the last dim"),
    SOFTMAX_OP(true, "log_softmax over the last dim"),
};

} // namespace
} // namespace zlbc

int zlbc_register_softmax(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kSoftmaxOps,
                       sizeof zlbc::kSoftmaxOps / sizeof zlbc::kSoftmaxOps[0]);
}
