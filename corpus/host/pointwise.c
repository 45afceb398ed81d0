/* Pointwise host operators: exp, relu (unary), add, mul (binary) and where
 * (ternary). Baselines go element by element through zlb_load/zlb_store in
 * double; candidates run fixed-size float blocks (or raw bits where the
 * result is a selection) that the compiler vectorises. */
#include "host_int.h"

typedef void (*unary_kernel_fn)(const float *restrict x, float *restrict y, int64_t n);
typedef void (*binary_kernel_fn)(const float *restrict a, const float *restrict b,
                                 float *restrict y, int64_t n);

/* ---- case descriptions ------------------------------------------------- */

/* n_in inputs and one output, all of c->shape; cond_first makes input 0 a
 * bool condition (where). */
static int pointwise_init(zlb_env_t *env, zlb_case_t *c, const char *op, int n_in,
                          int cond_first, zlb_check_t check, double flops_per_elem) {
  static const char *const names[] = {"x", "other", "third"};
  static const char *const where_names[] = {"condition", "input", "other"};
  const zlb_shape_t *s = &c->shape;
  double n, es;
  int rc, k;
  zlb__host_case_begin(c);
  rc = zlb__host_check_case(env, c, op, HOST_FLOAT_DTYPES, 1, ZLB_MAX_DIMS);
  if (rc)
    return rc;
  for (k = 0; k < n_in; k++) {
    if (cond_first && k == 0)
      zlb__host_tensor(&c->in[k], where_names[k], ZLB_DT_BOOL, s->ndim, s->dims,
                       ZLB_FILL_BOOL, 0.5, 0.0);
    else
      zlb__host_tensor(&c->in[k], cond_first ? where_names[k] : names[k], c->dtype,
                       s->ndim, s->dims, ZLB_FILL_NORMAL, 0.0, 1.0);
    zlb__host_detail_dims(c, s->ndim, s->dims);
  }
  c->n_in = n_in;
  zlb__host_tensor(&c->out[ZLB_BASELINE][0], "out", c->dtype, s->ndim, s->dims,
                   ZLB_FILL_NONE, 0.0, 0.0);
  c->n_out = 1;
  n = (double)c->out[ZLB_BASELINE][0].numel;
  es = (double)zlb_dtype_size(c->dtype);
  c->bytes = n * es * (cond_first ? n_in : n_in + 1) + (cond_first ? n : 0.0);
  c->flops = n * flops_per_elem;
  c->check = check;
  return 0;
}

static int exp_case_init(zlb_env_t *env, zlb_case_t *c) {
  return pointwise_init(env, c, "exp", 1, 0, ZLB_CHECK_CLOSE, 1.0);
}

/* relu only selects: both impls must agree bit for bit. */
static int relu_case_init(zlb_env_t *env, zlb_case_t *c) {
  return pointwise_init(env, c, "relu", 1, 0, ZLB_CHECK_EXACT, 1.0);
}

static int add_case_init(zlb_env_t *env, zlb_case_t *c) {
  return pointwise_init(env, c, "add", 2, 0, ZLB_CHECK_CLOSE, 1.0);
}

static int mul_case_init(zlb_env_t *env, zlb_case_t *c) {
  return pointwise_init(env, c, "mul", 2, 0, ZLB_CHECK_CLOSE, 1.0);
}

static int where_case_init(zlb_env_t *env, zlb_case_t *c) {
  return pointwise_init(env, c, "where", 3, 1, ZLB_CHECK_EXACT, 0.0);
}

/* ---- baselines: one element at a time, in double ----------------------- */

static int exp_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  zlb_tensor_t *y = &c->out[which][0];
  int64_t i;
  (void)env;
  (void)stream;
  for (i = 0; i < y->numel; i++)
    zlb_store(y->dtype, y->data, i, exp(zlb_load(x->dtype, x->data, i)));
  return 0;
}

static int relu_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *x = &c->in[0];
  zlb_tensor_t *y = &c->out[which][0];
  int64_t i;
  (void)env;
  (void)stream;
  for (i = 0; i < y->numel; i++) {
    double v = zlb_load(x->dtype, x->data, i);
    zlb_store(y->dtype, y->data, i, v > 0.0 || isnan(v) ? v : 0.0);
  }
  return 0;
}

static int add_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *a = &c->in[0], *b = &c->in[1];
  zlb_tensor_t *y = &c->out[which][0];
  int64_t i;
  (void)env;
  (void)stream;
  for (i = 0; i < y->numel; i++)
    zlb_store(y->dtype, y->data, i,
              zlb_load(a->dtype, a->data, i) + zlb_load(b->dtype, b->data, i));
  return 0;
}

static int mul_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *a = &c->in[0], *b = &c->in[1];
  zlb_tensor_t *y = &c->out[which][0];
  int64_t i;
  (void)env;
  (void)stream;
  for (i = 0; i < y->numel; i++)
    zlb_store(y->dtype, y->data, i,
              zlb_load(a->dtype, a->data, i) * zlb_load(b->dtype, b->data, i));
  return 0;
}

static int where_ref(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  const zlb_tensor_t *cond = &c->in[0], *a = &c->in[1], *b = &c->in[2];
  zlb_tensor_t *y = &c->out[which][0];
  int64_t i;
  (void)env;
  (void)stream;
  for (i = 0; i < y->numel; i++) {
    const zlb_tensor_t *pick = zlb_load(cond->dtype, cond->data, i) != 0.0 ? a : b;
    zlb_store(y->dtype, y->data, i, zlb_load(pick->dtype, pick->data, i));
  }
  return 0;
}

/* ---- candidates ---------------------------------------------------------- */

static void exp_kernel(const float *restrict x, float *restrict y, int64_t n) {
  int64_t i = 0;
  int l;
  for (; i + HOST_LANES <= n; i += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++)
      y[i + l] = host_expf(x[i + l]);
  for (; i < n; i++)
    y[i] = host_expf(x[i]);
}

static void add_kernel(const float *restrict a, const float *restrict b,
                       float *restrict y, int64_t n) {
  int64_t i = 0;
  int l;
  for (; i + HOST_LANES <= n; i += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++)
      y[i + l] = a[i + l] + b[i + l];
  for (; i < n; i++)
    y[i] = a[i] + b[i];
}

static void mul_kernel(const float *restrict a, const float *restrict b,
                       float *restrict y, int64_t n) {
  int64_t i = 0;
  int l;
  for (; i + HOST_LANES <= n; i += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++)
      y[i + l] = a[i + l] * b[i + l];
  for (; i < n; i++)
    y[i] = a[i] * b[i];
}

/* float32 runs the kernel in place; fp16/bf16 go through float blocks. */
static void unary_blocked(zlb_dtype_t d, const void *x, void *y, int64_t n,
                          unary_kernel_fn k) {
  float xb[HOST_BLOCK], yb[HOST_BLOCK];
  int64_t i, m;
  if (d == ZLB_DT_FLOAT32) {
    k(x, y, n);
    return;
  }
  for (i = 0; i < n; i += HOST_BLOCK) {
    m = n - i < HOST_BLOCK ? n - i : HOST_BLOCK;
    host_to_float(d, x, i, xb, m);
    k(xb, yb, m);
    host_from_float(d, yb, y, i, m);
  }
}

static void binary_blocked(zlb_dtype_t d, const void *a, const void *b, void *y,
                           int64_t n, binary_kernel_fn k) {
  float ab[HOST_BLOCK], bb[HOST_BLOCK], yb[HOST_BLOCK];
  int64_t i, m;
  if (d == ZLB_DT_FLOAT32) {
    k(a, b, y, n);
    return;
  }
  for (i = 0; i < n; i += HOST_BLOCK) {
    m = n - i < HOST_BLOCK ? n - i : HOST_BLOCK;
    host_to_float(d, a, i, ab, m);
    host_to_float(d, b, i, bb, m);
    k(ab, bb, yb, m);
    host_from_float(d, yb, y, i, m);
  }
}

static int exp_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  (void)env;
  (void)stream;
  unary_blocked(y->dtype, c->in[0].data, y->data, y->numel, exp_kernel);
  return 0;
}

static int add_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  (void)env;
  (void)stream;
  binary_blocked(y->dtype, c->in[0].data, c->in[1].data, y->data, y->numel, add_kernel);
  return 0;
}

static int mul_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  (void)env;
  (void)stream;
  binary_blocked(y->dtype, c->in[0].data, c->in[1].data, y->data, y->numel, mul_kernel);
  return 0;
}

/* relu on the bits: a negative non-NaN value (including -0) becomes +0. */
static void relu_bits32(const uint32_t *restrict x, uint32_t *restrict y, int64_t n) {
  int64_t i = 0;
  int l;
  for (; i + HOST_LANES <= n; i += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++) {
      uint32_t v = x[i + l];
      y[i + l] = (v & 0x80000000u) && (v & 0x7fffffffu) <= 0x7f800000u ? 0u : v;
    }
  for (; i < n; i++) {
    uint32_t v = x[i];
    y[i] = (v & 0x80000000u) && (v & 0x7fffffffu) <= 0x7f800000u ? 0u : v;
  }
}

static void relu_bits16(const uint16_t *restrict x, uint16_t *restrict y, int64_t n,
                        uint16_t inf) {
  int64_t i = 0;
  int l;
  for (; i + HOST_LANES <= n; i += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++) {
      uint16_t v = x[i + l];
      y[i + l] = (v & 0x8000u) && (v & 0x7fffu) <= inf ? 0u : v;
    }
  for (; i < n; i++) {
    uint16_t v = x[i];
    y[i] = (v & 0x8000u) && (v & 0x7fffu) <= inf ? 0u : v;
  }
}

static int relu_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  (void)env;
  (void)stream;
  if (y->dtype == ZLB_DT_FLOAT32)
    relu_bits32(c->in[0].data, y->data, y->numel);
  else
    relu_bits16(c->in[0].data, y->data, y->numel,
                y->dtype == ZLB_DT_BFLOAT16 ? 0x7f80u : 0x7c00u);
  return 0;
}

/* where as a bit mask select: no conversion, no branch. */
static void where_bits32(const uint8_t *restrict cond, const uint32_t *restrict a,
                         const uint32_t *restrict b, uint32_t *restrict y, int64_t n) {
  int64_t i = 0;
  int l;
  for (; i + HOST_LANES <= n; i += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++) {
      uint32_t m = 0u - (uint32_t)(cond[i + l] != 0);
      y[i + l] = (a[i + l] & m) | (b[i + l] & ~m);
    }
  for (; i < n; i++) {
    uint32_t m = 0u - (uint32_t)(cond[i] != 0);
    y[i] = (a[i] & m) | (b[i] & ~m);
  }
}

static void where_bits16(const uint8_t *restrict cond, const uint16_t *restrict a,
                         const uint16_t *restrict b, uint16_t *restrict y, int64_t n) {
  int64_t i = 0;
  int l;
  for (; i + HOST_LANES <= n; i += HOST_LANES)
    for (l = 0; l < HOST_LANES; l++) {
      uint16_t m = (uint16_t)(0u - (unsigned)(cond[i + l] != 0));
      y[i + l] = (uint16_t)((a[i + l] & m) | (b[i + l] & (uint16_t)~m));
    }
  for (; i < n; i++) {
    uint16_t m = (uint16_t)(0u - (unsigned)(cond[i] != 0));
    y[i] = (uint16_t)((a[i] & m) | (b[i] & (uint16_t)~m));
  }
}

static int where_fast(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  zlb_tensor_t *y = &c->out[which][0];
  (void)env;
  (void)stream;
  if (zlb_dtype_size(y->dtype) == 4)
    where_bits32(c->in[0].data, c->in[1].data, c->in[2].data, y->data, y->numel);
  else
    where_bits16(c->in[0].data, c->in[1].data, c->in[2].data, y->data, y->numel);
  return 0;
}

/* ---- registration ---------------------------------------------------------- */

static const zlb_op_t pointwise_ops[] = {
    {ZLB_OP_ABI_VERSION, "exp", "unary_pointwise", HOST_BACKEND, HOST_FLOAT_DTYPES,
     "extents", "exp(x) elementwise", exp_case_init, NULL, NULL,
     {"ref", 0, NULL, exp_ref, NULL},
     {"zlb", 0, NULL, exp_fast, NULL}, NULL, NULL},
    {ZLB_OP_ABI_VERSION, "relu", "unary_pointwise", HOST_BACKEND, HOST_FLOAT_DTYPES,
     "extents", "max(x, 0) elementwise", relu_case_init, NULL, NULL,
     {"ref", 0, NULL, relu_ref, NULL},
     {"zlb", 0, NULL, relu_fast, NULL}, NULL, NULL},
    {ZLB_OP_ABI_VERSION, "add", "binary_pointwise", HOST_BACKEND, HOST_FLOAT_DTYPES,
     "extents", "x + other elementwise", add_case_init, NULL, NULL,
     {"ref", 0, NULL, add_ref, NULL},
     {"zlb", 0, NULL, add_fast, NULL}, NULL, NULL},
    {ZLB_OP_ABI_VERSION, "mul", "binary_pointwise", HOST_BACKEND, HOST_FLOAT_DTYPES,
     "extents", "x * other elementwise", mul_case_init, NULL, NULL,
     {"ref", 0, NULL, mul_ref, NULL},
     {"zlb", 0, NULL, mul_fast, NULL}, NULL, NULL},
    {ZLB_OP_ABI_VERSION, "where", "ternary_pointwise", HOST_BACKEND, HOST_FLOAT_DTYPES,
     "extents", "condition ? input : other elementwise", where_case_init, NULL, NULL,
     {"ref", 0, NULL, where_ref, NULL},
     {"zlb", 0, NULL, where_fast, NULL}, NULL, NULL},
};

int zlb__host_register_pointwise(zlb_op_registrar_t *r) {
  return zlb__host_add_ops(r, pointwise_ops, sizeof pointwise_ops / sizeof pointwise_ops[0]);
}
