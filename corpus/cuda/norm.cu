/* layer_norm and rms_norm over the last dim (family norm), eps = 1e-5,
 * with weight [N] (and bias [N] for layer_norm). Baseline: a block per row
 * making separate passes over global memory (mean, variance, write).
 * Candidate: fused; a group of G threads per row gathers the statistics in
 * one 16-byte-vector pass (Welford for layer_norm), then writes, re-reading
 * the row from cache. */
#include "common.cuh"

namespace zlbc {
namespace {

constexpr float kEps = 1e-5f;

struct AddF {
  __device__ float operator()(float a, float b) const { return a + b; }
};

/* ---- baseline -------------------------------------------------------------- */

template <typename T, bool RMS>
__global__ void __launch_bounds__(256) norm_ref_kernel(const T *__restrict__ x,
                                                       const T *__restrict__ w,
                                                       const T *__restrict__ b, T *__restrict__ y,
                                                       int64_t ncols) {
  __shared__ float red[8];
  const T *xr = x + (int64_t)blockIdx.x * ncols;
  T *yr = y + (int64_t)blockIdx.x * ncols;
  float mean = 0.0f;
  if (!RMS) {
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < ncols; i += 256)
      s += to_f(xr[i]);
    mean = group_reduce<256>(s, AddF{}, red) / (float)ncols;
  }
  float q = 0.0f;
  for (int64_t i = threadIdx.x; i < ncols; i += 256) {
    const float d = to_f(xr[i]) - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(group_reduce<256>(q, AddF{}, red) / (float)ncols + kEps);
  for (int64_t i = threadIdx.x; i < ncols; i += 256) {
    float v = (to_f(xr[i]) - mean) * rstd * to_f(w[i]);
    if (!RMS)
      v += to_f(b[i]);
    yr[i] = from_f<T>(v);
  }
}

/* ---- candidate ----------------------------------------------------------------- */

/* (count, mean, M2) for layer_norm; for rms_norm only m2 = sum of squares */
struct Stats {
  float n, mean, m2;
};

template <bool RMS> struct StatsOp {
  __device__ Stats operator()(Stats a, Stats b) const {
    if (RMS)
      return {a.n + b.n, 0.0f, a.m2 + b.m2};
    if (a.n == 0.0f)
      return b;
    if (b.n == 0.0f)
      return a;
    const float n = a.n + b.n, d = b.mean - a.mean, f = b.n / n;
    return {n, a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f};
  }
};

template <typename T, bool RMS, int G, int R>
__global__ void __launch_bounds__(G * R) norm_fused_kernel(const T *__restrict__ x,
                                                           const T *__restrict__ w,
                                                           const T *__restrict__ b,
                                                           T *__restrict__ y, int64_t nrows,
                                                           int64_t ncols, bool vec) {
  constexpr int E = vec16<T>();
  __shared__ Stats red[G > 32 ? G / 32 : 1];
  const int lane = threadIdx.x % G;
  const int64_t row = (int64_t)blockIdx.x * R + threadIdx.x / G;
  const bool valid = row < nrows;
  const T *xr = x + (valid ? row : 0) * ncols;
  T *yr = y + (valid ? row : 0) * ncols;
  Stats st = {0.0f, 0.0f, 0.0f};
  if (valid) {
    if (vec) {
      for (int64_t v = lane; v < ncols / E; v += G) {
        const Pack<T, E> p = load_pack<T, E>(xr, v);
        float f[E], mean = 0.0f, m2 = 0.0f;
#pragma unroll
        for (int k = 0; k < E; k++) {
          f[k] = to_f(p.v[k]);
          mean += f[k];
        }
        if (RMS) {
#pragma unroll
          for (int k = 0; k < E; k++)
            m2 += f[k] * f[k];
          st.m2 += m2;
        } else {
          mean *= 1.0f / (float)E;
#pragma unroll
          for (int k = 0; k < E; k++)
            m2 += (f[k] - mean) * (f[k] - mean);
          st = StatsOp<false>{}(st, {(float)E, mean, m2});
        }
      }
    } else {
      for (int64_t i = lane; i < ncols; i += G) {
        const float f = to_f(xr[i]);
        if (RMS) {
          st.m2 += f * f;
        } else {
          st.n += 1.0f;
          const float d = f - st.mean;
          st.mean += d / st.n;
          st.m2 += d * (f - st.mean);
        }
      }
    }
  }
  st = group_reduce<G>(st, StatsOp<RMS>{}, red);
  if (!valid)
    return;
  const float mean = RMS ? 0.0f : st.mean;
  const float rstd = rsqrtf(st.m2 / (float)ncols + kEps);
  if (vec) {
    for (int64_t v = lane; v < ncols / E; v += G) {
      const Pack<T, E> p = load_pack<T, E>(xr, v), pw = load_pack<T, E>(w, v);
      Pack<T, E> pb, o;
      if (!RMS)
        pb = load_pack<T, E>(b, v);
#pragma unroll
      for (int k = 0; k < E; k++) {
        float r = (to_f(p.v[k]) - mean) * rstd * to_f(pw.v[k]);
        if (!RMS)
          r += to_f(pb.v[k]);
        o.v[k] = from_f<T>(r);
      }
      store_pack<T, E>(yr, v, o);
    }
  } else {
    for (int64_t i = lane; i < ncols; i += G) {
      float r = (to_f(xr[i]) - mean) * rstd * to_f(w[i]);
      if (!RMS)
        r += to_f(b[i]);
      yr[i] = from_f<T>(r);
    }
  }
}

struct NormCfg {
  int g, r;
};
constexpr NormCfg kNormCfgs[] = {{32, 4}, {128, 1}, {256, 1}, {512, 1}};

inline int norm_cfg(int64_t ncols) {
  return ncols <= 1024 ? 0 : ncols <= 4096 ? 1 : ncols <= 16384 ? 2 : 3;
}

template <typename T, bool RMS>
inline int norm_candidate(zlb_env_t *env, const T *x, const T *w, const T *b, T *y, int64_t m,
                          int64_t ncols, cudaStream_t s) {
  const bool vec = aligned16(x) && aligned16(y) && aligned16(w) && (RMS || aligned16(b)) &&
                   ncols % vec16<T>() == 0;
  switch (norm_cfg(ncols)) {
  case 0:
    norm_fused_kernel<T, RMS, 32, 4><<<(unsigned)ceil_div(m, 4), 128, 0, s>>>(x, w, b, y, m, ncols, vec);
    break;
  case 1: norm_fused_kernel<T, RMS, 128, 1><<<(unsigned)m, 128, 0, s>>>(x, w, b, y, m, ncols, vec); break;
  case 2: norm_fused_kernel<T, RMS, 256, 1><<<(unsigned)m, 256, 0, s>>>(x, w, b, y, m, ncols, vec); break;
  default: norm_fused_kernel<T, RMS, 512, 1><<<(unsigned)m, 512, 0, s>>>(x, w, b, y, m, ncols, vec); break;
  }
  ZLBC_LAUNCHED(env, "norm_fused_kernel");
  return 0;
}

template <bool RMS> struct NormOp {
  static constexpr const char *name() { return RMS ? "rms_norm" : "layer_norm"; }

  static int case_init(zlb_env_t *env, zlb_case_t *c) {
    int64_t m = 0, ncols = 0;
    ZLBC_TRY(rows_cols(env, c, name(), true, &m, &ncols));
    if (m > INT32_MAX)
      return errf(env, ZLB_EINVAL, "%s: at most 2^31-1 rows", name());
    ZLBC_NEW_PRIV(env, c, p);
    p->m = m;
    p->cols = ncols;
    const zlb_shape_t *s = &c->shape;
    const zlb_dtype_t dt = c->dtype;
    c->n_in = RMS ? 2 : 3;
    tensor_set(&c->in[0], "x", dt, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
    tensor_set1(&c->in[1], "weight", dt, ncols, ZLB_FILL_NORMAL, 0.0, 1.0);
    if (!RMS)
      tensor_set1(&c->in[2], "bias", dt, ncols, ZLB_FILL_NORMAL, 0.0, 1.0);
    c->n_out = 1;
    tensor_set(&c->out[ZLB_BASELINE][0], "out", dt, s->ndim, s->dims, ZLB_FILL_NONE, 0, 0);
    const double n = (double)m * (double)ncols;
    c->bytes = (2.0 * n + (RMS ? 1.0 : 2.0) * (double)ncols) * dsize(dt);
    c->flops = (RMS ? 4.0 : 8.0) * n;
    c->reduce_n = (double)ncols;
    c->atol = 1e-5 / (double)ncols; /* outputs are O(1): absolute tolerance 1e-5 */
    c->check = ZLB_CHECK_CLOSE;
    c->detail[0] = 0;
    fmt_dims(c->detail, sizeof c->detail, s->ndim, s->dims);
    appendf(c->detail, sizeof c->detail, ", normalized_shape=[%lld], eps=1e-05", (long long)ncols);
    snprintf(c->config[ZLB_BASELINE], sizeof c->config[0], "block=256,%s", RMS ? "2-pass" : "3-pass");
    const NormCfg &nc = kNormCfgs[norm_cfg(ncols)];
    snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[0], "fused,block=%d,rows=%d", nc.g * nc.r,
             nc.r);
    return 0;
  }

  static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
    (void)cudaGetLastError();
    const Priv *p = priv_of(c);
    cudaStream_t s = as_stream(stream);
    return dispatch_float(env, c->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T *x = static_cast<const T *>(c->in[0].data);
      const T *w = static_cast<const T *>(c->in[1].data);
      const T *b = RMS ? nullptr : static_cast<const T *>(c->in[2].data);
      T *y = static_cast<T *>(c->out[which][0].data);
      if (which == ZLB_CANDIDATE)
        return norm_candidate<T, RMS>(env, x, w, b, y, p->m, p->cols, s);
      norm_ref_kernel<T, RMS><<<(unsigned)p->m, 256, 0, s>>>(x, w, b, y, p->cols);
      ZLBC_LAUNCHED(env, "norm_ref_kernel");
      return 0;
    });
  }
};

#define NORM_OP(RMS, DOC)                                                                    \
  ZLBC_OP(NormOp<RMS>::name(), "norm", ZLB_DT_FLOATS, "M, N (normalise over N)", DOC,       \
          &NormOp<RMS>::case_init, nullptr, ZLBC_IMPL("ref", 0, nullptr, &NormOp<RMS>::enqueue), \
          ZLBC_IMPL("zlb", 0, nullptr, &NormOp<RMS>::enqueue))

const zlb_op_t kNormOps[] = {
    NORM_OP(false, "layer_norm over the last dim with weight and bias, eps 1e-5"),
    NORM_OP(true, "rms_norm over the last dim with weight, eps 1e-5"),
};

} // namespace
} // namespace zlbc

int zlbc_register_norm(zlb_op_registrar_t *r) {
  return zlbc::add_ops(r, zlbc::kNormOps, sizeof zlbc::kNormOps / sizeof zlbc::kNormOps[0]);
}
