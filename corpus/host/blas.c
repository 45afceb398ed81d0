/* mm on the host: C[M, N] = A[M, K] @ B[K, N]. The baseline is the naive
 * i-j-k triple loop (double accumulator, B read down its columns); the
 * candidate packs B into MM_NR-wide column panels, walks K in MM_KC blocks,
 * and computes MM_MR x MM_NR tiles of C in float registers with fixed-size
 * inner loops the compiler vectorises. fp16/bf16 go through float copies. */
#include <inttypes.h>
#include <stdio.h>

#include "host_int.h"

#define MM_MR 4
#define MM_NR 8 /* 4x8 float accumulators fit the 16 SSE registers with room for B */
#define MM_KC 256

typedef struct mm_dims {
  int64_t m, n, k;
} mm_dims_t;

/* [M, N, K] or FlagGems' [B, M, N, K] (B ignored) */
static mm_dims_t mm_geometry(const zlb_shape_t *s) {
  mm_dims_t d;
  int o = s->ndim == 4 ? 1 : 0;
  d.m = s->dims[o];
  d.n = s->dims[o + 1];
  d.k = s->dims[o + 2];
  return d;
}

static int64_t mm_panels(int64_t n) { return (n + MM_NR - 1) / MM_NR; }

static int mm_case_init(zlb_env_t *env, zlb_case_t *c) {
  int64_t adims[2], bdims[2], cdims[2];
  size_t base_ws, cand_ws, es;
  mm_dims_t d;
  int rc;
  zlb__host_case_begin(c);
  rc = zlb__host_check_case(env, c, "mm", HOST_FLOAT_DTYPES, 3, 4);
  if (rc)
    return rc;
  d = mm_geometry(&c->shape);
  adims[0] = d.m;
  adims[1] = d.k;
  bdims[0] = d.k;
  bdims[1] = d.n;
  cdims[0] = d.m;
  cdims[1] = d.n;
  zlb__host_tensor(&c->in[0], "a", c->dtype, 2, adims, ZLB_FILL_NORMAL, 0.0, 1.0);
  zlb__host_tensor(&c->in[1], "b", c->dtype, 2, bdims, ZLB_FILL_NORMAL, 0.0, 1.0);
  c->n_in = 2;
  zlb__host_tensor(&c->out[ZLB_BASELINE][0], "out", c->dtype, 2, cdims, ZLB_FILL_NONE,
                   0.0, 0.0);
  c->n_out = 1;
  es = zlb_dtype_size(c->dtype);
  c->bytes = (double)es * ((double)d.m * (double)d.k + (double)d.k * (double)d.n +
                           (double)d.m * (double)d.n);
  c->flops = 2.0 * (double)d.m * (double)d.n * (double)d.k;
  c->reduce_n = (double)d.k;
  c->check = ZLB_CHECK_CLOSE;
  zlb__host_detail_dims(c, 2, adims);
  zlb__host_detail_dims(c, 2, bdims);
  snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[ZLB_CANDIDATE],
           "%dx%d,kc=%d", MM_MR, MM_NR, MM_KC);
  /* baseline, fp16/bf16: float A and B. candidate: packed B panels, plus
   * float A, B and C for fp16/bf16 */
  base_ws = c->dtype == ZLB_DT_FLOAT32 ? 0 : (size_t)(d.m * d.k + d.k * d.n) * sizeof(float);
  cand_ws = (size_t)(mm_panels(d.n) * MM_NR * d.k) * sizeof(float);
  if (c->dtype != ZLB_DT_FLOAT32)
    cand_ws += (size_t)(d.m * d.k + d.k * d.n + d.m * d.n) * sizeof(float);
  return zlb__host_ws_init(env, c, base_ws, cand_ws);
}

static int mm_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  mm_dims_t d = mm_geometry(&c->shape);
  const float *a = c->in[0].data, *b = c->in[1].data;
  int64_t i, j, k;
  void *buf;
  int rc;
  (void)stream;
  if ((rc = zlb__host_ws_get(env, c, which, &buf)) != 0)
    return rc;
  if (y->dtype != ZLB_DT_FLOAT32) {
    float *af = buf, *bf = af + d.m * d.k;
    host_to_float(c->in[0].dtype, c->in[0].data, 0, af, d.m * d.k);
    host_to_float(c->in[1].dtype, c->in[1].data, 0, bf, d.k * d.n);
    a = af;
    b = bf;
  }
  for (i = 0; i < d.m; i++)
    for (j = 0; j < d.n; j++) {
      double acc = 0.0;
      for (k = 0; k < d.k; k++)
        acc += (double)a[i * d.k + k] * b[k * d.n + j];
      host_store1(y->dtype, y->data, i * d.n + j, (float)acc);
    }
  return 0;
}

/* B[K, N] -> panels [N/NR][K][NR], the last panel zero-padded */
static void mm_pack_b(const float *restrict b, float *restrict bp, int64_t k, int64_t n) {
  int64_t p, kk, j, np = mm_panels(n);
  for (p = 0; p < np; p++) {
    int64_t jb = p * MM_NR, w = n - jb < MM_NR ? n - jb : MM_NR;
    float *dst = bp + p * k * MM_NR;
    for (kk = 0; kk < k; kk++) {
      const float *src = b + kk * n + jb;
      for (j = 0; j < w; j++)
        dst[kk * MM_NR + j] = src[j];
      for (; j < MM_NR; j++)
        dst[kk * MM_NR + j] = 0.0f;
    }
  }
}

/* C[MR, w] (+)= A[MR, kc] @ Bpanel[kc, NR]; lda, ldc in elements */
static void mm_tile(const float *restrict a, int64_t lda, const float *restrict bp,
                    int64_t kc, float *restrict cc, int64_t ldc, int64_t w, int accumulate) {
  float acc[MM_MR][MM_NR];
  int64_t kk;
  int r, l;
  for (r = 0; r < MM_MR; r++)
    for (l = 0; l < MM_NR; l++)
      acc[r][l] = 0.0f;
  for (kk = 0; kk < kc; kk++) {
    const float *brow = bp + kk * MM_NR;
    for (r = 0; r < MM_MR; r++) {
      float av = a[r * lda + kk];
      for (l = 0; l < MM_NR; l++)
        acc[r][l] += av * brow[l];
    }
  }
  for (r = 0; r < MM_MR; r++)
    for (l = 0; l < w; l++)
      cc[r * ldc + l] = accumulate ? cc[r * ldc + l] + acc[r][l] : acc[r][l];
}

/* one row of C: the M % MR leftover rows */
static void mm_row(const float *restrict a, const float *restrict bp, int64_t kc,
                   float *restrict cc, int64_t w, int accumulate) {
  float acc[MM_NR];
  int64_t kk;
  int l;
  for (l = 0; l < MM_NR; l++)
    acc[l] = 0.0f;
  for (kk = 0; kk < kc; kk++)
    for (l = 0; l < MM_NR; l++)
      acc[l] += a[kk] * bp[kk * MM_NR + l];
  for (l = 0; l < w; l++)
    cc[l] = accumulate ? cc[l] + acc[l] : acc[l];
}

static int mm_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  mm_dims_t d = mm_geometry(&c->shape);
  const float *a = c->in[0].data, *b = c->in[1].data;
  float *bp, *cf = y->data;
  int64_t np = mm_panels(d.n), kb, p, i;
  void *buf;
  int rc;
  (void)stream;
  if ((rc = zlb__host_ws_get(env, c, which, &buf)) != 0)
    return rc;
  bp = buf;
  if (y->dtype != ZLB_DT_FLOAT32) {
    float *af = bp + np * MM_NR * d.k, *bf = af + d.m * d.k;
    cf = bf + d.k * d.n;
    host_to_float(c->in[0].dtype, c->in[0].data, 0, af, d.m * d.k);
    host_to_float(c->in[1].dtype, c->in[1].data, 0, bf, d.k * d.n);
    a = af;
    b = bf;
  }
  mm_pack_b(b, bp, d.k, d.n);
  for (kb = 0; kb < d.k; kb += MM_KC) {
    int64_t kc = d.k - kb < MM_KC ? d.k - kb : MM_KC;
    int accumulate = kb > 0;
    for (p = 0; p < np; p++) {
      int64_t jb = p * MM_NR, w = d.n - jb < MM_NR ? d.n - jb : MM_NR;
      const float *panel = bp + p * d.k * MM_NR + kb * MM_NR;
      for (i = 0; i + MM_MR <= d.m; i += MM_MR)
        mm_tile(a + i * d.k + kb, d.k, panel, kc, cf + i * d.n + jb, d.n, w, accumulate);
      for (; i < d.m; i++)
        mm_row(a + i * d.k + kb, panel, kc, cf + i * d.n + jb, w, accumulate);
    }
  }
  if (y->dtype != ZLB_DT_FLOAT32)
    host_from_float(y->dtype, cf, y->data, 0, d.m * d.n);
  return 0;
}

static const zlb_op_t blas_ops[] = {
    {ZLB_OP_ABI_VERSION, "mm", "blas", HOST_BACKEND, HOST_FLOAT_DTYPES, "B, M, N, K",
     "matrix product [M, K] @ [K, N] (shape [M, N, K] or [B, M, N, K], B ignored)",
     mm_case_init, zlb__host_ws_case_release, NULL,
     {"ref", 0, zlb__host_ws_prepare, mm_ref, zlb__host_ws_release},
     {"zlb", 0, zlb__host_ws_prepare, mm_fast, zlb__host_ws_release}, NULL, NULL},
};

int zlb__host_register_blas(zlb_op_registrar_t *r) {
  return zlb__host_add_ops(r, blas_ops, sizeof blas_ops / sizeof blas_ops[0]);
}
