/* layer_norm on the host: y = (x - mean) / sqrt(var + eps) * weight + bias
 * over the last dim. The baseline makes three passes in double; the
 * candidate gets mean and variance from one pass of shifted float sums and
 * writes y in a second. */
#include "host_int.h"

#define LN_EPS 1e-5
#define LN_ATOL 1e-5 /* absolute tolerance of the accuracy check */

static int layer_norm_case_init(zlb_env_t *env, zlb_case_t *c) {
  const zlb_shape_t *s = &c->shape;
  int64_t m, n;
  size_t es;
  int rc;
  zlb__host_case_begin(c);
  rc = zlb__host_check_case(env, c, "layer_norm", HOST_FLOAT_DTYPES, 1, ZLB_MAX_DIMS);
  if (rc)
    return rc;
  zlb__host_rows_cols(s, &m, &n);
  es = zlb_dtype_size(c->dtype);
  zlb__host_tensor(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
  zlb__host_tensor(&c->in[1], "weight", c->dtype, 1, &n, ZLB_FILL_NORMAL, 1.0, 0.25);
  zlb__host_tensor(&c->in[2], "bias", c->dtype, 1, &n, ZLB_FILL_NORMAL, 0.0, 0.25);
  c->n_in = 3;
  zlb__host_tensor(&c->out[ZLB_BASELINE][0], "out", c->dtype, s->ndim, s->dims,
                   ZLB_FILL_NONE, 0.0, 0.0);
  c->n_out = 1;
  c->bytes = (double)es * (2.0 * (double)m * (double)n + 2.0 * (double)n);
  c->flops = 8.0 * (double)m * (double)n;
  /* mean and variance sum n terms, but their errors reach y relative to
   * |y| = O(1): atol 1e-4 * reduce_n (0.1 at n = 1024) would pass a wrong
   * eps or a biased variance. atol * reduce_n = LN_ATOL instead. */
  c->reduce_n = (double)n;
  c->atol = LN_ATOL / (double)n;
  c->check = ZLB_CHECK_CLOSE;
  zlb__host_detail_dims(c, s->ndim, s->dims);
  zlb__host_detail_item(c, "eps=1e-05");
  /* candidate, fp16/bf16 only: float copies of weight, bias, a row of x and of y */
  return zlb__host_ws_init(env, c, 0,
                           c->dtype == ZLB_DT_FLOAT32 ? 0 : 4 * (size_t)n * sizeof(float));
}

static int layer_norm_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0], *w = &c->in[1], *b = &c->in[2];
  zlb_tensor_t *y = &c->out[which][0];
  int64_t m, n, i, j;
  (void)env;
  (void)stream;
  zlb__host_rows_cols(&c->shape, &m, &n);
  for (i = 0; i < m; i++) {
    double mean = 0.0, var = 0.0, rstd;
    for (j = 0; j < n; j++)
      mean += zlb_load(x->dtype, x->data, i * n + j);
    mean /= (double)n;
    for (j = 0; j < n; j++) {
      double d = zlb_load(x->dtype, x->data, i * n + j) - mean;
      var += d * d;
    }
    var /= (double)n;
    rstd = 1.0 / sqrt(var + LN_EPS);
    for (j = 0; j < n; j++) {
      double v = (zlb_load(x->dtype, x->data, i * n + j) - mean) * rstd;
      zlb_store(y->dtype, y->data, i * n + j,
                v * zlb_load(w->dtype, w->data, j) + zlb_load(b->dtype, b->data, j));
    }
  }
  return 0;
}

/*
 * One row: sums of d = x - x[0] and d*d in HOST_LANES float lanes (the
 * shift keeps the variance from cancelling when |mean| >> stddev), then
 * y = (x - mean) * rstd * w + b.
 */
static void layer_norm_row(const float *restrict x, const float *restrict w,
                           const float *restrict b, float *restrict y, int64_t n) {
  float s1[HOST_LANES] = {0}, s2[HOST_LANES] = {0};
  float shift = x[0], mean, rstd;
  double t1 = 0.0, t2 = 0.0, dm, var;
  int64_t j = 0;
  int l;
  for (; j + HOST_LANES <= n; j += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++) {
      float d = x[j + l] - shift;
      s1[l] += d;
      s2[l] += d * d;
    }
  for (; j < n; j++) {
    double d = (double)x[j] - shift;
    t1 += d;
    t2 += d * d;
  }
  for (l = 0; l < HOST_LANES; l++) {
    t1 += s1[l];
    t2 += s2[l];
  }
  dm = t1 / (double)n;
  var = t2 / (double)n - dm * dm;
  mean = (float)(shift + dm);
  rstd = (float)(1.0 / sqrt((var > 0.0 ? var : 0.0) + LN_EPS));
  for (j = 0; j + HOST_LANES <= n; j += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++)
      y[j + l] = (x[j + l] - mean) * rstd * w[j + l] + b[j + l];
  for (; j < n; j++)
    y[j] = (x[j] - mean) * rstd * w[j] + b[j];
}

static int layer_norm_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0], *w = &c->in[1], *b = &c->in[2];
  zlb_tensor_t *y = &c->out[which][0];
  float *ws, *wf, *bf, *xf, *yf;
  int64_t m, n, i;
  void *buf;
  int rc;
  (void)stream;
  zlb__host_rows_cols(&c->shape, &m, &n);
  if (y->dtype == ZLB_DT_FLOAT32) {
    for (i = 0; i < m; i++)
      layer_norm_row((const float *)x->data + i * n, w->data, b->data,
                     (float *)y->data + i * n, n);
    return 0;
  }
  if ((rc = zlb__host_ws_get(env, c, which, &buf)) != 0)
    return rc;
  ws = buf;
  wf = ws;
  bf = ws + n;
  xf = ws + 2 * n;
  yf = ws + 3 * n;
  host_to_float(w->dtype, w->data, 0, wf, n);
  host_to_float(b->dtype, b->data, 0, bf, n);
  for (i = 0; i < m; i++) {
    host_to_float(x->dtype, x->data, i * n, xf, n);
    layer_norm_row(xf, wf, bf, yf, n);
    host_from_float(y->dtype, yf, y->data, i * n, n);
  }
  return 0;
}

static const zlb_op_t norm_ops[] = {
    {ZLB_OP_ABI_VERSION, "layer_norm", "norm", HOST_BACKEND, HOST_FLOAT_DTYPES, "M, N",
     "layer norm over the last dim with weight and bias, eps 1e-5", layer_norm_case_init,
     zlb__host_ws_case_release, NULL,
     {"ref", 0, zlb__host_ws_prepare, layer_norm_ref, zlb__host_ws_release},
     {"zlb", 0, zlb__host_ws_prepare, layer_norm_fast, zlb__host_ws_release}, NULL, NULL},
};

int zlb__host_register_norm(zlb_op_registrar_t *r) {
  return zlb__host_add_ops(r, norm_ops, sizeof norm_ops / sizeof norm_ops[0]);
}
