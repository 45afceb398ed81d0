/* cumsum over the last dim on the host. The baseline is one running double
 * sum through zlb_load/zlb_store; the candidate splits each row into
 * SCAN_SEGS segments, finds each segment's starting carry from vectorised
 * segment sums, then scans the segments interleaved so SCAN_SEGS float
 * additions are in flight instead of one long dependency chain. */
#include "host_int.h"

#define SCAN_SEGS 4
#define SCAN_MIN_SPLIT 64 /* shorter rows are scanned in one chain */

static int cumsum_case_init(zlb_env_t *env, zlb_case_t *c) {
  const zlb_shape_t *s = &c->shape;
  int64_t m, n;
  int rc;
  if ((rc = zlb__host_row_case(env, c, "cumsum", HOST_FLOAT_DTYPES, &m, &n)))
    return rc;
  zlb__host_tensor(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
  c->n_in = 1;
  zlb__host_tensor(&c->out[ZLB_BASELINE][0], "out", c->dtype, s->ndim, s->dims,
                   ZLB_FILL_NONE, 0.0, 0.0);
  c->n_out = 1;
  c->bytes = 2.0 * (double)m * (double)n * (double)zlb_dtype_size(c->dtype);
  c->flops = (double)m * (double)n;
  c->reduce_n = (double)n; /* the last element of a row sums n terms */
  c->check = ZLB_CHECK_CLOSE;
  /* candidate, fp16/bf16 only: float rows of x and y */
  return zlb__host_ws_init(env, c, 0,
                           c->dtype == ZLB_DT_FLOAT32 ? 0 : 2 * (size_t)n * sizeof(float));
}

static int cumsum_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  zlb_tensor_t *y = &c->out[which][0];
  int64_t m, n, i, j;
  (void)env;
  (void)stream;
  zlb__host_rows_cols(&c->shape, &m, &n);
  for (i = 0; i < m; i++) {
    double acc = 0.0;
    for (j = 0; j < n; j++) {
      acc += zlb_load(x->dtype, x->data, i * n + j);
      zlb_store(y->dtype, y->data, i * n + j, acc);
    }
  }
  return 0;
}

static void cumsum_row(const float *restrict x, float *restrict y, int64_t n) {
  float acc[SCAN_SEGS];
  double carry = 0.0;
  int64_t seg, j;
  int s;
  if (n < SCAN_MIN_SPLIT) {
    float a = 0.0f;
    for (j = 0; j < n; j++) {
      a += x[j];
      y[j] = a;
    }
    return;
  }
  seg = n / SCAN_SEGS;
  for (s = 0; s < SCAN_SEGS; s++) {
    acc[s] = (float)carry;
    if (s + 1 < SCAN_SEGS)
      carry += host_lanes_sum(x + s * seg, seg);
  }
  for (j = 0; j < seg; j++)
    for (s = 0; s < SCAN_SEGS; s++) {
      acc[s] += x[s * seg + j];
      y[s * seg + j] = acc[s];
    }
  for (j = SCAN_SEGS * seg; j < n; j++) { /* leftover: continues the last segment */
    acc[SCAN_SEGS - 1] += x[j];
    y[j] = acc[SCAN_SEGS - 1];
  }
}

static int cumsum_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  zlb_tensor_t *y = &c->out[which][0];
  int64_t m, n, i;
  float *xf, *yf;
  void *buf;
  int rc;
  (void)stream;
  zlb__host_rows_cols(&c->shape, &m, &n);
  if (y->dtype == ZLB_DT_FLOAT32) {
    for (i = 0; i < m; i++)
      cumsum_row((const float *)x->data + i * n, (float *)y->data + i * n, n);
    return 0;
  }
  if ((rc = zlb__host_ws_get(env, c, which, &buf)) != 0)
    return rc;
  xf = buf;
  yf = xf + n;
  for (i = 0; i < m; i++) {
    host_to_float(x->dtype, x->data, i * n, xf, n);
    cumsum_row(xf, yf, n);
    host_from_float(y->dtype, yf, y->data, i * n, n);
  }
  return 0;
}

static const zlb_op_t scan_ops[] = {
    {ZLB_OP_ABI_VERSION, "cumsum", "scan", HOST_BACKEND, HOST_FLOAT_DTYPES, "M, N",
     "inclusive prefix sum over the last dim", cumsum_case_init, zlb__host_ws_case_release,
     NULL, {"ref", 0, zlb__host_ws_prepare, cumsum_ref, zlb__host_ws_release},
     {"zlb", 0, zlb__host_ws_prepare, cumsum_fast, zlb__host_ws_release}, NULL, NULL},
};

int zlb__host_register_scan(zlb_op_registrar_t *r) {
  return zlb__host_add_ops(r, scan_ops, sizeof scan_ops / sizeof scan_ops[0]);
}
