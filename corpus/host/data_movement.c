/* contiguous on the host: x.transpose(-2, -1).contiguous() for x [..., M, N]
 * (y is [..., N, M]). The baseline copies element by element in output
 * order, reading x down its columns; the candidate copies TR_TILE x TR_TILE
 * tiles so both sides stay in cache. A bit copy: the check is exact. */
#include <stdio.h>

#include "host_int.h"

#define TR_TILE 8

static int contiguous_case_init(zlb_env_t *env, zlb_case_t *c) {
  const zlb_shape_t *s = &c->shape;
  int64_t odims[ZLB_MAX_DIMS];
  int rc;
  zlb__host_case_begin(c);
  rc = zlb__host_check_case(env, c, "contiguous", HOST_FLOAT_DTYPES, 2, ZLB_MAX_DIMS);
  if (rc)
    return rc;
  memcpy(odims, s->dims, sizeof odims);
  odims[s->ndim - 2] = s->dims[s->ndim - 1];
  odims[s->ndim - 1] = s->dims[s->ndim - 2];
  zlb__host_tensor(&c->in[0], "x", c->dtype, s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
  c->n_in = 1;
  zlb__host_tensor(&c->out[ZLB_BASELINE][0], "out", c->dtype, s->ndim, odims,
                   ZLB_FILL_NONE, 0.0, 0.0);
  c->n_out = 1;
  c->bytes = 2.0 * (double)c->in[0].numel * (double)zlb_dtype_size(c->dtype);
  c->flops = 0.0;
  c->check = ZLB_CHECK_EXACT;
  zlb__host_detail_dims(c, s->ndim, s->dims);
  snprintf(c->config[ZLB_CANDIDATE], sizeof c->config[ZLB_CANDIDATE], "tile=%dx%d",
           TR_TILE, TR_TILE);
  return 0;
}

/* the tensor as batch x [M, N] */
static void tr_geometry(const zlb_shape_t *s, int64_t *batch, int64_t *m, int64_t *n) {
  *batch = zlb__host_numel(s->ndim - 2, s->dims);
  *m = s->dims[s->ndim - 2];
  *n = s->dims[s->ndim - 1];
}

static int contiguous_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  int64_t batch, m, n, bt, i, j;
  (void)env;
  (void)stream;
  tr_geometry(&c->shape, &batch, &m, &n);
  for (bt = 0; bt < batch; bt++) {
    if (zlb_dtype_size(y->dtype) == 4) {
      const uint32_t *x = (const uint32_t *)c->in[0].data + bt * m * n;
      uint32_t *o = (uint32_t *)y->data + bt * m * n;
      for (j = 0; j < n; j++)
        for (i = 0; i < m; i++)
          o[j * m + i] = x[i * n + j];
    } else {
      const uint16_t *x = (const uint16_t *)c->in[0].data + bt * m * n;
      uint16_t *o = (uint16_t *)y->data + bt * m * n;
      for (j = 0; j < n; j++)
        for (i = 0; i < m; i++)
          o[j * m + i] = x[i * n + j];
    }
  }
  return 0;
}

/* Tiled transpose of one [m, n] matrix of T (a bit copy: 32- and 16-bit
 * elements cover every host dtype). */
#define DEFINE_TR(name, T)                                                           \
  static void name(const T *restrict x, T *restrict o, int64_t m, int64_t n) {       \
    int64_t ib, jb, i, j;                                                            \
    for (ib = 0; ib < m; ib += TR_TILE)                                              \
      for (jb = 0; jb < n; jb += TR_TILE) {                                          \
        int64_t ie = ib + TR_TILE < m ? ib + TR_TILE : m;                            \
        int64_t je = jb + TR_TILE < n ? jb + TR_TILE : n;                            \
        if (ie - ib == TR_TILE && je - jb == TR_TILE) {                              \
          int a, b;                                                                  \
          for (a = 0; a < TR_TILE; a++)                                              \
            for (b = 0; b < TR_TILE; b++)                                            \
              o[(jb + a) * m + ib + b] = x[(ib + b) * n + jb + a];                   \
        } else {                                                                     \
          for (j = jb; j < je; j++)                                                  \
            for (i = ib; i < ie; i++)                                                \
              o[j * m + i] = x[i * n + j];                                           \
        }                                                                            \
      }                                                                              \
  }

DEFINE_TR(tr32, uint32_t)
DEFINE_TR(tr16, uint16_t)

static int contiguous_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  int64_t batch, m, n, bt;
  (void)env;
  (void)stream;
  tr_geometry(&c->shape, &batch, &m, &n);
  for (bt = 0; bt < batch; bt++) {
    if (zlb_dtype_size(y->dtype) == 4)
      tr32((const uint32_t *)c->in[0].data + bt * m * n, (uint32_t *)y->data + bt * m * n,
           m, n);
    else
      tr16((const uint16_t *)c->in[0].data + bt * m * n, (uint16_t *)y->data + bt * m * n,
           m, n);
  }
  return 0;
}

static const zlb_op_t data_movement_ops[] = {
    {ZLB_OP_ABI_VERSION, "contiguous", "data_movement", HOST_BACKEND, HOST_FLOAT_DTYPES,
     "M, N", "x.transpose(-2, -1).contiguous(): y[..., j, i] = x[..., i, j]",
     contiguous_case_init, NULL, NULL, {"ref", 0, NULL, contiguous_ref, NULL},
     {"zlb", 0, NULL, contiguous_fast, NULL}, NULL, NULL},
};

int zlb__host_register_data_movement(zlb_op_registrar_t *r) {
  return zlb__host_add_ops(r, data_movement_ops,
                           sizeof data_movement_ops / sizeof data_movement_ops[0]);
}
