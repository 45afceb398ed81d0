/* sort and topk along the last dim on the host. sort: qsort per row against
 * an LSD radix sort of order-preserving integer keys. topk: sort every
 * (value, index) pair and keep k, against a single pass that keeps the k
 * best in a small sorted list and skips blocks below the current k-th. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "host_int.h"

#define SORT_DTYPES (ZLB_DT_BIT(ZLB_DT_FLOAT32) | ZLB_DT_BIT(ZLB_DT_INT32))
#define RADIX_BITS 8
#define RADIX_BINS (1 << RADIX_BITS)
#define RADIX_PASSES (32 / RADIX_BITS)
#define RADIX_MIN_N 64 /* shorter rows are insertion-sorted */
#define TOPK_DEFAULT_K 8

/* ---- sort -------------------------------------------------------------------- */

static int sort_case_init(zlb_env_t *env, zlb_case_t *c) {
  const zlb_shape_t *s = &c->shape;
  int64_t m, n;
  int is_int, rc;
  if ((rc = zlb__host_row_case(env, c, "sort", SORT_DTYPES, &m, &n)))
    return rc;
  is_int = c->dtype == ZLB_DT_INT32;
  zlb__host_tensor(&c->in[0], "x", c->dtype, s->ndim, s->dims,
                   is_int ? ZLB_FILL_INT : ZLB_FILL_NORMAL, is_int ? -100000.0 : 0.0,
                   is_int ? 100000.0 : 1.0);
  c->n_in = 1;
  zlb__host_tensor(&c->out[ZLB_BASELINE][0], "values", c->dtype, s->ndim, s->dims,
                   ZLB_FILL_NONE, 0.0, 0.0);
  c->n_out = 1;
  c->bytes = 2.0 * (double)m * (double)n * 4.0;
  c->flops = 0.0;
  c->check = ZLB_CHECK_EXACT;
  snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[ZLB_CANDIDATE], "radix%d",
           RADIX_BITS);
  /* candidate: two key buffers of one row */
  return zlb__host_ws_init(env, c, 0, 2 * (size_t)n * sizeof(uint32_t));
}

/* float order with -0 before +0, so both impls agree bit for bit */
static int cmp_f32(const void *pa, const void *pb) {
  float a = *(const float *)pa, b = *(const float *)pb;
  if (a < b)
    return -1;
  if (a > b)
    return 1;
  return (int)(signbit(b) != 0) - (int)(signbit(a) != 0);
}

static int cmp_i32(const void *pa, const void *pb) {
  int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
  return (a > b) - (a < b);
}

static int sort_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  int64_t m, n, i;
  (void)env;
  (void)stream;
  zlb__host_rows_cols(&c->shape, &m, &n);
  memcpy(y->data, c->in[0].data, (size_t)(m * n) * 4);
  for (i = 0; i < m; i++)
    qsort((char *)y->data + (size_t)(i * n) * 4, (size_t)n, 4,
          y->dtype == ZLB_DT_INT32 ? cmp_i32 : cmp_f32);
  return 0;
}

/* Order-preserving unsigned keys: flip the sign bit of ints; of floats flip
 * all bits of negatives and the sign bit of the rest. */
static uint32_t key_of(uint32_t bits, int is_float) {
  if (!is_float)
    return bits ^ 0x80000000u;
  return bits ^ ((uint32_t)-(int32_t)(bits >> 31) | 0x80000000u);
}

static uint32_t bits_of(uint32_t key, int is_float) {
  if (!is_float)
    return key ^ 0x80000000u;
  return key ^ (((key >> 31) - 1u) | 0x80000000u);
}

/* Sort one row of 32-bit values (as keys) with LSD radix passes; `tmp` holds
 * 2n keys. All digit histograms come from one read; a pass whose digit is
 * the same for every key is skipped. Rows shorter than RADIX_MIN_N are
 * insertion-sorted. */
static void radix_row(const uint32_t *restrict in, uint32_t *restrict out, int64_t n,
                      uint32_t *restrict tmp, int is_float) {
  uint32_t hist[RADIX_PASSES][RADIX_BINS];
  uint32_t *src = tmp, *dst = tmp + n, *t;
  int64_t j;
  int p, b;
  if (n < RADIX_MIN_N) { /* short rows: histograms would cost more than the sort */
    for (j = 0; j < n; j++) {
      uint32_t k = key_of(in[j], is_float);
      int64_t q = j;
      for (; q > 0 && src[q - 1] > k; q--)
        src[q] = src[q - 1];
      src[q] = k;
    }
    for (j = 0; j < n; j++)
      out[j] = bits_of(src[j], is_float);
    return;
  }
  memset(hist, 0, sizeof hist);
  for (j = 0; j < n; j++) {
    uint32_t k = key_of(in[j], is_float);
    src[j] = k;
    for (p = 0; p < RADIX_PASSES; p++)
      hist[p][(k >> (p * RADIX_BITS)) & (RADIX_BINS - 1)]++;
  }
  for (p = 0; p < RADIX_PASSES; p++) {
    uint32_t sum = 0, *h = hist[p];
    int shift = p * RADIX_BITS;
    if (h[(src[0] >> shift) & (RADIX_BINS - 1)] == (uint32_t)n)
      continue;
    for (b = 0; b < RADIX_BINS; b++) { /* counts -> starting offsets */
      uint32_t cnt = h[b];
      h[b] = sum;
      sum += cnt;
    }
    for (j = 0; j < n; j++) {
      uint32_t k = src[j];
      dst[h[(k >> shift) & (RADIX_BINS - 1)]++] = k;
    }
    t = src;
    src = dst;
    dst = t;
  }
  for (j = 0; j < n; j++)
    out[j] = bits_of(src[j], is_float);
}

static int sort_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const uint32_t *x = c->in[0].data;
  zlb_tensor_t *y = &c->out[which][0];
  int64_t m, n, i;
  void *tmp;
  int rc;
  (void)stream;
  if ((rc = zlb__host_ws_get(env, c, which, &tmp)) != 0)
    return rc;
  zlb__host_rows_cols(&c->shape, &m, &n);
  for (i = 0; i < m; i++)
    radix_row(x + i * n, (uint32_t *)y->data + i * n, n, tmp,
              y->dtype == ZLB_DT_FLOAT32);
  return 0;
}

/* ---- topk ---------------------------------------------------------------------- */

typedef struct topk_pair {
  double v;
  int64_t i;
} topk_pair_t;

static int64_t topk_k(const zlb_case_t *c) {
  return c->shape.nargs >= 1 ? c->shape.args[0] : TOPK_DEFAULT_K;
}

static int topk_case_init(zlb_env_t *env, zlb_case_t *c) {
  const zlb_shape_t *s = &c->shape;
  int64_t m, n, k, odims[ZLB_MAX_DIMS];
  double es;
  int rc;
  zlb__host_case_begin(c);
  rc = zlb__host_check_case(env, c, "topk", HOST_FLOAT_DTYPES, 1, ZLB_MAX_DIMS);
  if (rc)
    return rc;
  zlb__host_rows_cols(s, &m, &n);
  k = topk_k(c);
  if (k < 1 || k > n)
    return zlb__host_fail(env, ZLB_EINVAL,
                          "topk: k=%" PRId64 " must be between 1 and the last extent %" PRId64,
                          k, n);
  memcpy(odims, s->dims, sizeof odims);
  odims[s->ndim - 1] = k;
  zlb__host_tensor(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
  c->n_in = 1;
  zlb__host_tensor(&c->out[ZLB_BASELINE][0], "values", c->dtype, s->ndim, odims,
                   ZLB_FILL_NONE, 0.0, 0.0);
  zlb__host_tensor(&c->out[ZLB_BASELINE][1], "indices", ZLB_DT_INT64, s->ndim, odims,
                   ZLB_FILL_NONE, 0.0, 0.0);
  c->n_out = 2;
  es = (double)zlb_dtype_size(c->dtype);
  c->bytes = (double)m * ((double)n * es + (double)k * (es + 8.0));
  c->flops = 0.0;
  c->check = ZLB_CHECK_CUSTOM;
  zlb__host_detail_dims(c, s->ndim, s->dims);
  zlb__host_detail_item(c, "k=%" PRId64, k);
  /* baseline: (value, index) pairs of a row; candidate: k floats + k indices */
  return zlb__host_ws_init(env, c, (size_t)n * sizeof(topk_pair_t),
                           (size_t)k * (sizeof(float) + sizeof(int64_t)));
}

/* descending value, then ascending index */
static int cmp_pair_desc(const void *pa, const void *pb) {
  const topk_pair_t *a = pa, *b = pb;
  if (a->v != b->v)
    return a->v > b->v ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

static int topk_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  zlb_tensor_t *vals = &c->out[which][0];
  int64_t *idx = c->out[which][1].data;
  int64_t m, n, k = topk_k(c), i, j;
  topk_pair_t *pairs;
  void *buf;
  int rc;
  (void)stream;
  if ((rc = zlb__host_ws_get(env, c, which, &buf)) != 0)
    return rc;
  pairs = buf;
  zlb__host_rows_cols(&c->shape, &m, &n);
  for (i = 0; i < m; i++) {
    for (j = 0; j < n; j++) {
      pairs[j].v = zlb_load(x->dtype, x->data, i * n + j);
      pairs[j].i = j;
    }
    qsort(pairs, (size_t)n, sizeof *pairs, cmp_pair_desc);
    for (j = 0; j < k; j++) {
      zlb_store(vals->dtype, vals->data, i * k + j, pairs[j].v);
      idx[i * k + j] = pairs[j].i;
    }
  }
  return 0;
}

/* Offer v (at index i) to the list of the k best so far, sorted descending;
 * equal values keep their earlier indices ahead. */
static void topk_offer(float *restrict tv, int64_t *restrict ti, int64_t *cnt, int64_t k,
                       float v, int64_t i) {
  int64_t p = *cnt < k ? *cnt : k - 1;
  if (*cnt < k)
    (*cnt)++;
  else if (!(v > tv[k - 1]))
    return;
  while (p > 0 && tv[p - 1] < v) {
    tv[p] = tv[p - 1];
    ti[p] = ti[p - 1];
    p--;
  }
  tv[p] = v;
  ti[p] = i;
}

/* Offer v[0..len) at indices base.. ; once the list is full, a block of
 * HOST_LANES values none of which beats the k-th is skipped at once. */
static void topk_scan(const float *restrict v, int64_t len, int64_t base, float *tv,
                      int64_t *ti, int64_t *cnt, int64_t k) {
  int64_t j = 0;
  int l;
  for (; j < len && *cnt < k; j++)
    topk_offer(tv, ti, cnt, k, v[j], base + j);
  for (; j + HOST_LANES <= len; j += HOST_LANES) {
    float thr = tv[k - 1];
    int hit = 0;
    for (l = 0; l < HOST_LANES; l++)
      hit |= v[j + l] > thr;
    if (hit)
      for (l = 0; l < HOST_LANES; l++)
        topk_offer(tv, ti, cnt, k, v[j + l], base + j + l);
  }
  for (; j < len; j++)
    topk_offer(tv, ti, cnt, k, v[j], base + j);
}

static int topk_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  zlb_tensor_t *vals = &c->out[which][0];
  int64_t *idx = c->out[which][1].data;
  int64_t m, n, k = topk_k(c), i, j, cnt, len;
  float buf[HOST_BLOCK], *tv;
  int64_t *ti;
  size_t es = zlb_dtype_size(x->dtype);
  void *ws;
  int rc;
  (void)stream;
  if ((rc = zlb__host_ws_get(env, c, which, &ws)) != 0)
    return rc;
  ti = ws;
  tv = (float *)(ti + k);
  zlb__host_rows_cols(&c->shape, &m, &n);
  for (i = 0; i < m; i++) {
    cnt = 0;
    if (x->dtype == ZLB_DT_FLOAT32) {
      topk_scan((const float *)x->data + i * n, n, 0, tv, ti, &cnt, k);
    } else {
      for (j = 0; j < n; j += HOST_BLOCK) {
        len = n - j < HOST_BLOCK ? n - j : HOST_BLOCK;
        host_to_float(x->dtype, x->data, i * n + j, buf, len);
        topk_scan(buf, len, j, tv, ti, &cnt, k);
      }
    }
    for (j = 0; j < k; j++) { /* values copied from the input: exact in any dtype */
      memcpy((char *)vals->data + (size_t)(i * k + j) * es,
             (const char *)x->data + (size_t)(i * n + ti[j]) * es, es);
      idx[i * k + j] = ti[j];
    }
  }
  return 0;
}

/*
 * Ties may be broken either way: the candidate's values must equal the
 * baseline's, and each index must be in range, distinct within its row and
 * point at an input element holding that value.
 */
static int topk_compare(zlb_env_t *env, const zlb_case_t *c, const zlb_host_view_t *v,
                        char *msg, size_t msglen) {
  const zlb_tensor_t *vt = &c->out[ZLB_BASELINE][0];
  const int64_t *idx = v->out[ZLB_CANDIDATE][1];
  int64_t m, n, k = topk_k(c), i, j, q;
  (void)env;
  zlb__host_rows_cols(&c->shape, &m, &n);
  for (i = 0; i < m; i++)
    for (j = 0; j < k; j++) {
      double want = zlb_load(vt->dtype, v->out[ZLB_BASELINE][0], i * k + j);
      double got = zlb_load(vt->dtype, v->out[ZLB_CANDIDATE][0], i * k + j);
      int64_t at = idx[i * k + j];
      if (!(got == want)) {
        snprintf(msg, msglen, "row %" PRId64 ", rank %" PRId64 ": value %.9g, baseline %.9g",
                 i, j, got, want);
        return 1;
      }
      if (at < 0 || at >= n) {
        snprintf(msg, msglen, "row %" PRId64 ", rank %" PRId64 ": index %" PRId64
                 " is outside [0, %" PRId64 ")", i, j, at, n);
        return 1;
      }
      if (!(zlb_load(c->in[0].dtype, v->in[0], i * n + at) == got)) {
        snprintf(msg, msglen, "row %" PRId64 ", rank %" PRId64 ": index %" PRId64
                 " holds %.9g, not the value %.9g", i, j, at,
                 zlb_load(c->in[0].dtype, v->in[0], i * n + at), got);
        return 1;
      }
      for (q = 0; q < j; q++)
        if (idx[i * k + q] == at) {
          snprintf(msg, msglen, "row %" PRId64 ": index %" PRId64 " appears twice", i, at);
          return 1;
        }
    }
  return 0;
}

/* ---- registration ---------------------------------------------------------------- */

static const zlb_op_t sort_ops[] = {
    {ZLB_OP_ABI_VERSION, "sort", "sort", HOST_BACKEND, SORT_DTYPES, "M, N",
     "ascending sort of values along the last dim", sort_case_init,
     zlb__host_ws_case_release, NULL,
     {"ref", 0, zlb__host_ws_prepare, sort_ref, zlb__host_ws_release},
     {"zlb", 0, zlb__host_ws_prepare, sort_fast, zlb__host_ws_release}, NULL, NULL},
    {ZLB_OP_ABI_VERSION, "topk", "sort", HOST_BACKEND, HOST_FLOAT_DTYPES, "M, N",
     "k largest values (descending) and int64 indices along the last dim; k = args[0] or 8",
     topk_case_init, zlb__host_ws_case_release, topk_compare,
     {"ref", 0, zlb__host_ws_prepare, topk_ref, zlb__host_ws_release},
     {"zlb", 0, zlb__host_ws_prepare, topk_fast, zlb__host_ws_release}, NULL, NULL},
};

int zlb__host_register_sort(zlb_op_registrar_t *r) {
  return zlb__host_add_ops(r, sort_ops, sizeof sort_ops / sizeof sort_ops[0]);
}
