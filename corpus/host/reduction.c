/* Reduction host operators: sum and argmax over one dim (the last unless a
 * FlagGems-style [[M, N], dim, keepdim] entry names another). Baselines
 * loop in double through zlb_load; candidates use HOST_LANES float
 * accumulators along a contiguous dim, or a block of columns at a time
 * when the reduced dim is strided. */
#include <inttypes.h>

#include "host_int.h"

/* The tensor as [outer, R, inner] around the reduced dim. */
typedef struct red_geom {
  int dim;
  int64_t outer, r, inner;
} red_geom_t;

static void red_geometry(const zlb_case_t *c, red_geom_t *g) {
  const zlb_shape_t *s = &c->shape;
  int64_t d = s->nargs >= 1 ? s->args[0] : -1;
  if (d < 0)
    d += s->ndim;
  g->dim = (int)d;
  g->outer = zlb__host_numel(g->dim, s->dims);
  g->r = s->dims[g->dim];
  g->inner = zlb__host_numel(s->ndim - g->dim - 1, s->dims + g->dim + 1);
}

static int red_init(zlb_env_t *env, zlb_case_t *c, const char *op, zlb_dtype_t out_dtype,
                    zlb_check_t check) {
  const zlb_shape_t *s = &c->shape;
  int64_t odims[ZLB_MAX_DIMS];
  int keepdim, ondim = 0, i, rc;
  red_geom_t g;
  zlb__host_case_begin(c);
  rc = zlb__host_check_case(env, c, op, HOST_FLOAT_DTYPES, 1, ZLB_MAX_DIMS);
  if (rc)
    return rc;
  if (s->nargs >= 1 && (s->args[0] < -s->ndim || s->args[0] >= s->ndim))
    return zlb__host_fail(env, ZLB_EINVAL, "%s: dim=%" PRId64 " is out of range for rank %d",
                          op, s->args[0], s->ndim);
  keepdim = s->nargs >= 2 && s->args[1] != 0;
  red_geometry(c, &g);
  for (i = 0; i < s->ndim; i++) {
    if (i != g.dim)
      odims[ondim++] = s->dims[i];
    else if (keepdim)
      odims[ondim++] = 1;
  }
  if (ondim == 0) /* a full reduction of a 1-D tensor: one element, [1] */
    odims[ondim++] = 1;
  zlb__host_tensor(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
  c->n_in = 1;
  zlb__host_tensor(&c->out[ZLB_BASELINE][0], "out", out_dtype, ondim, odims,
                   ZLB_FILL_NONE, 0.0, 0.0);
  c->n_out = 1;
  c->bytes = (double)c->in[0].numel * (double)zlb_dtype_size(c->dtype) +
             (double)c->out[ZLB_BASELINE][0].numel * (double)zlb_dtype_size(out_dtype);
  c->flops = (double)c->in[0].numel;
  c->reduce_n = (double)g.r;
  c->check = check;
  zlb__host_detail_dims(c, s->ndim, s->dims);
  zlb__host_detail_item(c, "dim=%" PRId64, s->nargs >= 1 ? s->args[0] : (int64_t)-1);
  if (s->nargs >= 2)
    zlb__host_detail_item(c, "keepdim=%s", keepdim ? "True" : "False");
  return 0;
}

static int sum_case_init(zlb_env_t *env, zlb_case_t *c) {
  return red_init(env, c, "sum", c->dtype, ZLB_CHECK_CLOSE);
}

/* argmax picks the first maximum: both impls must give the same index. */
static int argmax_case_init(zlb_env_t *env, zlb_case_t *c) {
  return red_init(env, c, "argmax", ZLB_DT_INT64, ZLB_CHECK_EXACT);
}

/* ---- baselines ------------------------------------------------------------ */

static int sum_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  zlb_tensor_t *y = &c->out[which][0];
  int64_t o, i, r;
  red_geom_t g;
  (void)env;
  (void)stream;
  red_geometry(c, &g);
  for (o = 0; o < g.outer; o++)
    for (i = 0; i < g.inner; i++) {
      double acc = 0.0;
      for (r = 0; r < g.r; r++)
        acc += zlb_load(x->dtype, x->data, (o * g.r + r) * g.inner + i);
      zlb_store(y->dtype, y->data, o * g.inner + i, acc);
    }
  return 0;
}

static int argmax_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  int64_t *y = c->out[which][0].data;
  int64_t o, i, r;
  red_geom_t g;
  (void)env;
  (void)stream;
  red_geometry(c, &g);
  for (o = 0; o < g.outer; o++)
    for (i = 0; i < g.inner; i++) {
      double best = 0.0;
      int64_t bi = 0;
      for (r = 0; r < g.r; r++) {
        double v = zlb_load(x->dtype, x->data, (o * g.r + r) * g.inner + i);
        if (r == 0 || v > best) {
          best = v;
          bi = r;
        }
      }
      y[o * g.inner + i] = bi;
    }
  return 0;
}

/* ---- candidates ----------------------------------------------------------- */

/* acc[0..n) += v[0..n); the full-block case has a fixed trip count. */
static void add_into(float *restrict acc, const float *restrict v, int64_t n) {
  int64_t l;
  if (n == HOST_BLOCK) {
    for (l = 0; l < HOST_BLOCK; l++)
      acc[l] += v[l];
  } else {
    for (l = 0; l < n; l++)
      acc[l] += v[l];
  }
}

/* Contiguous row of x starting at `off`, n long. */
static double row_sum(zlb_dtype_t d, const void *x, int64_t off, int64_t n) {
  float buf[HOST_BLOCK];
  double s = 0.0;
  int64_t i, m;
  if (d == ZLB_DT_FLOAT32)
    return host_lanes_sum((const float *)x + off, n);
  for (i = 0; i < n; i += HOST_BLOCK) {
    m = n - i < HOST_BLOCK ? n - i : HOST_BLOCK;
    host_to_float(d, x, off + i, buf, m);
    s += host_lanes_sum(buf, m);
  }
  return s;
}

static int sum_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  zlb_tensor_t *y = &c->out[which][0];
  float acc[HOST_BLOCK], buf[HOST_BLOCK];
  int64_t o, i, r, m;
  red_geom_t g;
  (void)env;
  (void)stream;
  red_geometry(c, &g);
  if (g.inner == 1) {
    for (o = 0; o < g.outer; o++)
      host_store1(y->dtype, y->data, o, (float)row_sum(x->dtype, x->data, o * g.r, g.r));
    return 0;
  }
  /* strided dim: sum whole rows of HOST_BLOCK columns at a time */
  for (o = 0; o < g.outer; o++)
    for (i = 0; i < g.inner; i += HOST_BLOCK) {
      m = g.inner - i < HOST_BLOCK ? g.inner - i : HOST_BLOCK;
      memset(acc, 0, sizeof acc);
      for (r = 0; r < g.r; r++) {
        int64_t off = (o * g.r + r) * g.inner + i;
        if (x->dtype == ZLB_DT_FLOAT32) {
          add_into(acc, (const float *)x->data + off, m);
        } else {
          host_to_float(x->dtype, x->data, off, buf, m);
          add_into(acc, buf, m);
        }
      }
      host_from_float(y->dtype, acc, y->data, o * g.inner + i, m);
    }
  return 0;
}

/* Rows are scanned in segments short enough for int32 lane indices (int64
 * lanes would keep the compare-and-select loop from vectorising). */
#define ARGMAX_SEG ((int64_t)1 << 30)

/*
 * Argmax of v[0..n) (segment positions base..base+n) merged into per-lane
 * bests: a lane only moves on a strictly greater value, so each lane holds
 * its first maximum; the merge takes the smallest index among equal values.
 */
static void lanes_argmax(const float *restrict v, int64_t n, int32_t base,
                         float *restrict bv, int32_t *restrict bi) {
  int64_t i = 0;
  int l;
  for (; i + HOST_LANES <= n; i += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++) {
      float x = v[i + l], b = bv[l];
      int32_t gt = -(int32_t)(x > b); /* a mask keeps the loop if-convertible */
      bi[l] = (bi[l] & ~gt) | ((base + (int32_t)i + l) & gt);
      bv[l] = x > b ? x : b;
    }
  for (; i < n; i++)
    if (v[i] > bv[0]) { /* later than anything lane 0 holds */
      bv[0] = v[i];
      bi[0] = base + (int32_t)i;
    }
}

static int64_t row_argmax(zlb_dtype_t d, const void *x, int64_t off, int64_t n) {
  float buf[HOST_BLOCK], bv[HOST_LANES], best_v = 0.0f;
  int32_t bi[HOST_LANES];
  int64_t best_i = -1, s, i, m, len;
  int l, b;
  for (s = 0; s < n; s += ARGMAX_SEG) {
    len = n - s < ARGMAX_SEG ? n - s : ARGMAX_SEG;
    host_to_float(d, x, off + s, bv, 1);
    for (l = 0; l < HOST_LANES; l++) { /* seeded with the first element: ties keep it */
      bv[l] = bv[0];
      bi[l] = 0;
    }
    if (d == ZLB_DT_FLOAT32) {
      lanes_argmax((const float *)x + off + s, len, 0, bv, bi);
    } else {
      for (i = 0; i < len; i += HOST_BLOCK) {
        m = len - i < HOST_BLOCK ? len - i : HOST_BLOCK;
        host_to_float(d, x, off + s + i, buf, m);
        lanes_argmax(buf, m, (int32_t)i, bv, bi);
      }
    }
    b = 0;
    for (l = 1; l < HOST_LANES; l++)
      if (bv[l] > bv[b] || (bv[l] == bv[b] && bi[l] < bi[b]))
        b = l;
    if (best_i < 0 || bv[b] > best_v) { /* an earlier segment wins ties */
      best_v = bv[b];
      best_i = s + bi[b];
    }
  }
  return best_i;
}

/* one row of a strided argmax: columns move to row r where it is greater */
static void argmax_step(const float *restrict v, float *restrict bv, int64_t *restrict bi,
                        int64_t r, int64_t m) {
  int64_t l;
  if (m == HOST_BLOCK) { /* fixed trip count: vectorises */
    for (l = 0; l < HOST_BLOCK; l++) {
      float x = v[l], b = bv[l];
      int64_t gt = -(int64_t)(x > b);
      bi[l] = (bi[l] & ~gt) | (r & gt);
      bv[l] = x > b ? x : b;
    }
    return;
  }
  for (l = 0; l < m; l++)
    if (v[l] > bv[l]) {
      bv[l] = v[l];
      bi[l] = r;
    }
}

static int argmax_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  int64_t *y = c->out[which][0].data;
  float bv[HOST_BLOCK], buf[HOST_BLOCK];
  int64_t bi[HOST_BLOCK], o, i, r, m;
  red_geom_t g;
  (void)env;
  (void)stream;
  red_geometry(c, &g);
  if (g.inner == 1) {
    for (o = 0; o < g.outer; o++)
      y[o] = row_argmax(x->dtype, x->data, o * g.r, g.r);
    return 0;
  }
  for (o = 0; o < g.outer; o++)
    for (i = 0; i < g.inner; i += HOST_BLOCK) {
      m = g.inner - i < HOST_BLOCK ? g.inner - i : HOST_BLOCK;
      host_to_float(x->dtype, x->data, o * g.r * g.inner + i, bv, m);
      memset(bi, 0, sizeof bi);
      for (r = 1; r < g.r; r++) {
        host_to_float(x->dtype, x->data, (o * g.r + r) * g.inner + i, buf, m);
        argmax_step(buf, bv, bi, r, m);
      }
      memcpy(y + o * g.inner + i, bi, (size_t)m * sizeof *bi);
    }
  return 0;
}

/* ---- registration ------------------------------------------------------------ */

static const zlb_op_t reduction_ops[] = {
    {ZLB_OP_ABI_VERSION, "sum", "reduction", HOST_BACKEND, HOST_FLOAT_DTYPES, "M, N",
     "sum over one dim (last unless [[M, N], dim, keepdim] says)", sum_case_init, NULL,
     NULL, {"ref", 0, NULL, sum_ref, NULL}, {"zlb", 0, NULL, sum_fast, NULL}, NULL, NULL},
    {ZLB_OP_ABI_VERSION, "argmax", "reduction", HOST_BACKEND, HOST_FLOAT_DTYPES, "M, N",
     "index (int64) of the first maximum over one dim", argmax_case_init, NULL, NULL,
     {"ref", 0, NULL, argmax_ref, NULL}, {"zlb", 0, NULL, argmax_fast, NULL}, NULL, NULL},
};

int zlb__host_register_reduction(zlb_op_registrar_t *r) {
  return zlb__host_add_ops(r, reduction_ops, sizeof reduction_ops / sizeof reduction_ops[0]);
}
