/* Private declarations shared by the host operator corpus (corpus/host): case
 * and error helpers, per-impl workspaces, float block conversions and a
 * vectorisable expf shared by the optimised candidates. */
#ifndef ZLB_HOST_INT_H
#define ZLB_HOST_INT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "zlbench/dtype.h"
#include "zlbench/error.h"
#include "zlbench/op.h"

/* The library exports only zlb_ops_register(); cross-file internals are
 * hidden even where the build does not pass -fvisibility=hidden. */
#if defined(__GNUC__)
#define ZLB_HOST_HIDDEN __attribute__((visibility("hidden")))
#define ZLB_HOST_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ZLB_HOST_HIDDEN
#define ZLB_HOST_PRINTF(f, a)
#endif

#define HOST_BACKEND "host"

/*
 * Candidate loops work in blocks with a fixed trip count over restrict
 * pointers: gcc -O2 (the "very cheap" vectoriser cost model) vectorises a
 * loop only when it needs no runtime alias check and no scalar epilogue.
 * HOST_LANES independent accumulators let float reductions vectorise
 * without -ffast-math; HOST_BLOCK bounds stack buffers for fp16/bf16
 * conversion.
 */
#define HOST_LANES 16
#define HOST_BLOCK 256

#define HOST_FLOAT_DTYPES ZLB_DT_FLOATS
#define HOST_MAX_NUMEL ((int64_t)1 << 40)

/* ---- families (each file registers its own static operators) --------- */

ZLB_HOST_HIDDEN int zlb__host_register_pointwise(zlb_op_registrar_t *r);
ZLB_HOST_HIDDEN int zlb__host_register_reduction(zlb_op_registrar_t *r);
ZLB_HOST_HIDDEN int zlb__host_register_norm(zlb_op_registrar_t *r);
ZLB_HOST_HIDDEN int zlb__host_register_softmax(zlb_op_registrar_t *r);
ZLB_HOST_HIDDEN int zlb__host_register_scan(zlb_op_registrar_t *r);
ZLB_HOST_HIDDEN int zlb__host_register_sort(zlb_op_registrar_t *r);
ZLB_HOST_HIDDEN int zlb__host_register_random(zlb_op_registrar_t *r);
ZLB_HOST_HIDDEN int zlb__host_register_blas(zlb_op_registrar_t *r);
ZLB_HOST_HIDDEN int zlb__host_register_data_movement(zlb_op_registrar_t *r);

/** r->add_op() for each of ops[0..n); stops at the first failure. */
ZLB_HOST_HIDDEN int zlb__host_add_ops(zlb_op_registrar_t *r, const zlb_op_t *ops, size_t n);

/* ---- cases and errors (common.c) ---------------------------------------- */

/** Write a printf-style message into env->errbuf; returns `code`. */
ZLB_HOST_HIDDEN int zlb__host_fail(zlb_env_t *env, int code, const char *fmt, ...)
    ZLB_HOST_PRINTF(3, 4);

/** Start case_init: clear everything but dtype, shape and level. */
ZLB_HOST_HIDDEN void zlb__host_case_begin(zlb_case_t *c);

/**
 * Validate c->dtype against `dtypes` (a ZLB_DT_BIT mask) and c->shape
 * against a rank range and positive extents. Returns 0, or ZLB_EINVAL with
 * a message naming `op` in env->errbuf.
 */
ZLB_HOST_HIDDEN int zlb__host_check_case(zlb_env_t *env, const zlb_case_t *c,
                                         const char *op, uint32_t dtypes,
                                         int min_rank, int max_rank);

/**
 * Begin the case of an operator that works along the last dim of a tensor
 * of any rank: zlb__host_case_begin, the dtype and rank checks, an
 * optional args[0] that must name the last dim (-1 or ndim-1), the shape
 * as [rows, cols], and the size detail "[dims], dim=-1". Returns 0, or
 * ZLB_EINVAL with a message naming `op` in env->errbuf.
 */
ZLB_HOST_HIDDEN int zlb__host_row_case(zlb_env_t *env, zlb_case_t *c, const char *op,
                                       uint32_t dtypes, int64_t *rows, int64_t *cols);

/** Product of `n` extents. */
ZLB_HOST_HIDDEN int64_t zlb__host_numel(int n, const int64_t *dims);

/** View c->shape as [rows, cols]: cols is the last extent. */
ZLB_HOST_HIDDEN void zlb__host_rows_cols(const zlb_shape_t *s, int64_t *rows,
                                         int64_t *cols);

/** Describe a tensor: name, dtype, extents, fill (numel set too). */
ZLB_HOST_HIDDEN void zlb__host_tensor(zlb_tensor_t *t, const char *name,
                                      zlb_dtype_t dtype, int ndim,
                                      const int64_t *dims, zlb_fill_t fill,
                                      double lo, double hi);

/** Append "[a, b, ...]" to c->detail, after ", " when it is not empty. */
ZLB_HOST_HIDDEN void zlb__host_detail_dims(zlb_case_t *c, int ndim,
                                           const int64_t *dims);

/** Append one printf-formatted item to c->detail (", " separated). */
ZLB_HOST_HIDDEN void zlb__host_detail_item(zlb_case_t *c, const char *fmt, ...)
    ZLB_HOST_PRINTF(2, 3);

/* ---- per-impl workspaces ---------------------------------------------------- */

/*
 * A case's c->priv when the operator needs scratch memory: case_init
 * records the bytes each impl needs, prepare() allocates them, release()
 * frees them and case_release() frees the record. enqueue() never
 * allocates, so timing excludes malloc.
 */
typedef struct host_ws {
  size_t bytes[2];
  void *buf[2];
} host_ws_t;

/** Set c->priv to a workspace record; returns 0 or ZLB_ENOMEM. */
ZLB_HOST_HIDDEN int zlb__host_ws_init(zlb_env_t *env, zlb_case_t *c,
                                      size_t baseline_bytes,
                                      size_t candidate_bytes);
/** zlb_op_t.case_release for operators using zlb__host_ws_init. */
ZLB_HOST_HIDDEN void zlb__host_ws_case_release(zlb_env_t *env, zlb_case_t *c);
/** zlb_impl_t.prepare / .release for such operators. */
ZLB_HOST_HIDDEN int zlb__host_ws_prepare(zlb_env_t *env, zlb_case_t *c, int which);
ZLB_HOST_HIDDEN void zlb__host_ws_release(zlb_env_t *env, zlb_case_t *c, int which);
/**
 * The impl's workspace in *buf (NULL when it asked for none). Returns 0, or
 * ZLB_EOP with a message when prepare() has not run.
 */
ZLB_HOST_HIDDEN int zlb__host_ws_get(zlb_env_t *env, zlb_case_t *c, int which,
                                     void **buf);

/* ---- float paths for the candidates -------------------------------------- */

/* a where c is 1, b where c is 0: a mask, not a branch, so that loops stay
 * if-convertible (gcc refuses to if-convert float code that "could trap"). */
static inline uint32_t host_sel32(int c, uint32_t a, uint32_t b) {
  uint32_t m = 0u - (uint32_t)c;
  return (a & m) | (b & ~m);
}

typedef union host_bits {
  uint32_t u;
  float f;
} host_bits_t;

/*
 * Branch-free conversions that vectorise, bit-identical to dtype.h's
 * zlb_half_to_float, zlb_float_to_half and zlb_float_to_bf16 for every
 * input (checked exhaustively over all 2^16 halves and 2^32 floats).
 */
static inline float host_h2f(uint16_t h) {
  host_bits_t v;
  uint32_t em = h & 0x7fffu;
  v.u = em << 13;
  v.f *= 0x1p112f; /* rebias 15 -> 127; exact, subnormal halves included */
  v.u = host_sel32(em >= 0x7c00u, 0x7f800000u | (em << 13), v.u); /* inf, NaN */
  v.u |= (uint32_t)(h & 0x8000u) << 16;
  return v.f;
}

static inline uint16_t host_f2h(float f) {
  host_bits_t v, d;
  uint32_t sign, x, o_inf, o_sub, o_norm, o;
  v.f = f;
  sign = v.u & 0x80000000u;
  x = v.u ^ sign;
  o_inf = host_sel32(x > 0x7f800000u, 0x7e00u, 0x7c00u); /* NaN quiet, or inf */
  d.u = x;
  d.f += 0.5f; /* below 2^-14: the FPU rounds to the subnormal grid (2^-24) */
  o_sub = d.u - 0x3f000000u;
  o_norm = (x + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((x >> 13) & 1u)) >> 13;
  o = host_sel32(x < (113u << 23), o_sub, o_norm);
  o = host_sel32(x >= (143u << 23), o_inf, o); /* >= 65536: inf */
  return (uint16_t)(o | (sign >> 16));
}

static inline float host_bf2f(uint16_t b) {
  host_bits_t v;
  v.u = (uint32_t)b << 16;
  return v.f;
}

static inline uint16_t host_f2bf(float f) {
  host_bits_t v;
  uint32_t r;
  v.f = f;
  r = (v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16;
  return (uint16_t)host_sel32((v.u & 0x7fffffffu) > 0x7f800000u, (v.u >> 16) | 0x40u, r);
}

/** dst[0..n) = elements [off, off+n) of `src` (a float dtype) as float. */
static inline void host_to_float(zlb_dtype_t d, const void *src, int64_t off,
                                 float *restrict dst, int64_t n) {
  const uint16_t *restrict s = (const uint16_t *)src + off;
  int64_t i = 0;
  int l;
  if (d == ZLB_DT_FLOAT32) {
    memcpy(dst, (const float *)src + off, (size_t)n * sizeof(float));
  } else if (d == ZLB_DT_BFLOAT16) {
    for (; i + HOST_LANES <= n; i += HOST_LANES)
      for (l = 0; l < HOST_LANES; l++)
        dst[i + l] = host_bf2f(s[i + l]);
    for (; i < n; i++)
      dst[i] = host_bf2f(s[i]);
  } else {
    for (; i + HOST_LANES <= n; i += HOST_LANES)
      for (l = 0; l < HOST_LANES; l++)
        dst[i + l] = host_h2f(s[i + l]);
    for (; i < n; i++)
      dst[i] = host_h2f(s[i]);
  }
}

/** Elements [off, off+n) of `dst` (a float dtype) = src[0..n), rounded. */
static inline void host_from_float(zlb_dtype_t d, const float *restrict src,
                                   void *dst, int64_t off, int64_t n) {
  uint16_t *restrict o = (uint16_t *)dst + off;
  int64_t i = 0;
  int l;
  if (d == ZLB_DT_FLOAT32) {
    memcpy((float *)dst + off, src, (size_t)n * sizeof(float));
  } else if (d == ZLB_DT_BFLOAT16) {
    for (; i + HOST_LANES <= n; i += HOST_LANES)
      for (l = 0; l < HOST_LANES; l++)
        o[i + l] = host_f2bf(src[i + l]);
    for (; i < n; i++)
      o[i] = host_f2bf(src[i]);
  } else {
    for (; i + HOST_LANES <= n; i += HOST_LANES)
      for (l = 0; l < HOST_LANES; l++)
        o[i + l] = host_f2h(src[i + l]);
    for (; i < n; i++)
      o[i] = host_f2h(src[i]);
  }
}

/** Sum of v[0..n): HOST_LANES float lanes, combined in double. */
static inline double host_lanes_sum(const float *restrict v, int64_t n) {
  float acc[HOST_LANES] = {0};
  double s = 0.0;
  int64_t i = 0;
  int l;
  for (; i + HOST_LANES <= n; i += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++)
      acc[l] += v[i + l];
  for (; i < n; i++)
    s += v[i];
  for (l = 0; l < HOST_LANES; l++)
    s += acc[l];
  return s;
}

/** Store one float as element `i` of a float dtype array. */
static inline void host_store1(zlb_dtype_t d, void *dst, int64_t i, float v) {
  if (d == ZLB_DT_FLOAT32)
    ((float *)dst)[i] = v;
  else if (d == ZLB_DT_BFLOAT16)
    ((uint16_t *)dst)[i] = host_f2bf(v);
  else
    ((uint16_t *)dst)[i] = host_f2h(v);
}

/*
 * expf without a libm call, so loops around it vectorise: x = n ln2 + r,
 * |r| <= ln2/2, a degree-6 polynomial for e^r, then 2^n applied as two
 * exact power-of-two factors (so results near the overflow and subnormal
 * limits are right too). Within 1 ulp of the correctly rounded result for
 * normal results; +inf above 88.73, subnormal results within one subnormal
 * step, NaN kept.
 * Clamping compares the float bits as ordered integers: no float compare.
 */
static inline float host_expf(float x) {
  host_bits_t in, xc, s1, s2, out;
  int32_t key, n, h;
  float fn, r, p;
  in.f = x;
  key = (int32_t)in.u;
  key ^= (key >> 31) & 0x7fffffff; /* float order as int order */
  xc.u = host_sel32(key > 0x42b18000, 0x42b18000u, in.u); /* 88.75f */
  xc.u = host_sel32(key < (int32_t)(0xc2d00000u ^ 0x7fffffffu), 0xc2d00000u,
                    xc.u); /* -104.0f */
  /* round to nearest without floorf (a libm call at -O2 on x86-64) */
  fn = (xc.f * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  n = (int32_t)fn;
  r = xc.f - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  h = n / 2;
  s1.u = (uint32_t)(h + 127) << 23;
  s2.u = (uint32_t)(n - h + 127) << 23;
  out.f = (p * s1.f) * s2.f;
  out.u = host_sel32((in.u & 0x7fffffffu) > 0x7f800000u, in.u, out.u); /* NaN */
  return out.f;
}

#endif
