/* Helpers shared by the host operators: error messages, shape validation,
 * tensor descriptions, size-detail strings and per-impl workspaces. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "host_int.h"

int zlb__host_add_ops(zlb_op_registrar_t *r, const zlb_op_t *ops, size_t n) {
  size_t i;
  int rc;
  for (i = 0; i < n; i++)
    if ((rc = r->add_op(r, &ops[i])) != 0)
      return rc;
  return 0;
}

int zlb__host_fail(zlb_env_t *env, int code, const char *fmt, ...) {
  va_list ap;
  if (env && env->errbuf && env->errlen > 0) {
    va_start(ap, fmt);
    vsnprintf(env->errbuf, env->errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* "[a, b, c]" into buf (truncated to len). */
static void format_dims(char *buf, size_t len, int ndim, const int64_t *dims) {
  size_t used = 0;
  int i, n;
  if (len == 0)
    return;
  buf[0] = '\0';
  n = snprintf(buf, len, "[");
  for (i = 0; i < ndim && n >= 0; i++) {
    used += (size_t)n;
    if (used >= len)
      return;
    n = snprintf(buf + used, len - used, "%s%" PRId64, i ? ", " : "", dims[i]);
  }
  if (n >= 0 && used + (size_t)n < len)
    snprintf(buf + used + (size_t)n, len - used - (size_t)n, "]");
}

void zlb__host_case_begin(zlb_case_t *c) {
  zlb_dtype_t dtype = c->dtype;
  zlb_shape_t shape = c->shape;
  int level = c->level;
  memset(c, 0, sizeof *c);
  c->dtype = dtype;
  c->shape = shape;
  c->level = level;
}

int zlb__host_check_case(zlb_env_t *env, const zlb_case_t *c, const char *op,
                         uint32_t dtypes, int min_rank, int max_rank) {
  char shape[160];
  int64_t numel = 1;
  int i;
  if ((unsigned)c->dtype >= ZLB_DT_COUNT || !(dtypes & ZLB_DT_BIT(c->dtype)))
    return zlb__host_fail(env, ZLB_EINVAL, "%s: dtype %s is not supported on the host backend",
                          op, zlb_dtype_name(c->dtype));
  if (c->shape.ndim < 0 || c->shape.ndim > ZLB_MAX_DIMS)
    return zlb__host_fail(env, ZLB_EINVAL, "%s: shape has %d extents; at most %d are allowed",
                          op, c->shape.ndim, ZLB_MAX_DIMS);
  format_dims(shape, sizeof shape, c->shape.ndim, c->shape.dims);
  if (c->shape.ndim < min_rank || c->shape.ndim > max_rank) {
    if (min_rank == max_rank)
      return zlb__host_fail(env, ZLB_EINVAL, "%s: shape %s has rank %d; expected rank %d",
                            op, shape, c->shape.ndim, min_rank);
    return zlb__host_fail(env, ZLB_EINVAL, "%s: shape %s has rank %d; expected rank %d to %d",
                          op, shape, c->shape.ndim, min_rank, max_rank);
  }
  for (i = 0; i < c->shape.ndim; i++) {
    int64_t d = c->shape.dims[i];
    if (d <= 0)
      return zlb__host_fail(env, ZLB_EINVAL,
                            "%s: shape %s has extent %" PRId64 " at dim %d; extents must be positive",
                            op, shape, d, i);
    if (d > HOST_MAX_NUMEL / numel)
      return zlb__host_fail(env, ZLB_EINVAL, "%s: shape %s is too large for the host backend",
                            op, shape);
    numel *= d;
  }
  return 0;
}

int zlb__host_row_case(zlb_env_t *env, zlb_case_t *c, const char *op, uint32_t dtypes,
                       int64_t *rows, int64_t *cols) {
  const zlb_shape_t *s = &c->shape;
  int rc;
  zlb__host_case_begin(c);
  if ((rc = zlb__host_check_case(env, c, op, dtypes, 1, ZLB_MAX_DIMS)))
    return rc;
  if (s->nargs >= 1 && s->args[0] != -1 && s->args[0] != s->ndim - 1)
    return zlb__host_fail(env, ZLB_EINVAL,
                          "%s: dim=%" PRId64 " is not supported; the host operator works along the last dim (dim=-1)",
                          op, s->args[0]);
  zlb__host_rows_cols(s, rows, cols);
  zlb__host_detail_dims(c, s->ndim, s->dims);
  zlb__host_detail_item(c, "dim=-1");
  return 0;
}

int64_t zlb__host_numel(int n, const int64_t *dims) {
  int64_t p = 1;
  int i;
  for (i = 0; i < n; i++)
    p *= dims[i];
  return p;
}

void zlb__host_rows_cols(const zlb_shape_t *s, int64_t *rows, int64_t *cols) {
  *cols = s->ndim > 0 ? s->dims[s->ndim - 1] : 1;
  *rows = s->ndim > 1 ? zlb__host_numel(s->ndim - 1, s->dims) : 1;
}

void zlb__host_tensor(zlb_tensor_t *t, const char *name, zlb_dtype_t dtype, int ndim,
                      const int64_t *dims, zlb_fill_t fill, double lo, double hi) {
  int i;
  memset(t, 0, sizeof *t);
  t->name = name;
  t->dtype = dtype;
  t->ndim = ndim;
  for (i = 0; i < ndim; i++)
    t->dims[i] = dims[i];
  t->numel = zlb__host_numel(ndim, dims);
  t->fill = fill;
  t->lo = lo;
  t->hi = hi;
}

void zlb__host_detail_dims(zlb_case_t *c, int ndim, const int64_t *dims) {
  char buf[160];
  format_dims(buf, sizeof buf, ndim, dims);
  zlb__host_detail_item(c, "%s", buf);
}

void zlb__host_detail_item(zlb_case_t *c, const char *fmt, ...) {
  size_t used = strlen(c->detail);
  va_list ap;
  int n = 0;
  if (used + 1 >= sizeof c->detail)
    return;
  if (used > 0)
    n = snprintf(c->detail + used, sizeof c->detail - used, ", ");
  if (n < 0 || used + (size_t)n + 1 >= sizeof c->detail)
    return;
  used += (size_t)n;
  va_start(ap, fmt);
  vsnprintf(c->detail + used, sizeof c->detail - used, fmt, ap);
  va_end(ap);
}

int zlb__host_ws_init(zlb_env_t *env, zlb_case_t *c, size_t baseline_bytes,
                      size_t candidate_bytes) {
  host_ws_t *ws = calloc(1, sizeof *ws);
  if (!ws)
    return zlb__host_fail(env, ZLB_ENOMEM, "host: out of memory for a workspace record");
  ws->bytes[ZLB_BASELINE] = baseline_bytes;
  ws->bytes[ZLB_CANDIDATE] = candidate_bytes;
  c->priv = ws;
  return 0;
}

void zlb__host_ws_case_release(zlb_env_t *env, zlb_case_t *c) {
  host_ws_t *ws = c->priv;
  (void)env;
  if (!ws)
    return;
  free(ws->buf[0]);
  free(ws->buf[1]);
  free(ws);
  c->priv = NULL;
}

int zlb__host_ws_prepare(zlb_env_t *env, zlb_case_t *c, int which) {
  host_ws_t *ws = c->priv;
  if (!ws || (which != ZLB_BASELINE && which != ZLB_CANDIDATE))
    return zlb__host_fail(env, ZLB_EINVAL, "host: prepare() called without case_init()");
  if (ws->buf[which] || ws->bytes[which] == 0)
    return 0;
  ws->buf[which] = malloc(ws->bytes[which]);
  if (!ws->buf[which])
    return zlb__host_fail(env, ZLB_ENOMEM, "host: cannot allocate a %zu-byte workspace",
                          ws->bytes[which]);
  return 0;
}

void zlb__host_ws_release(zlb_env_t *env, zlb_case_t *c, int which) {
  host_ws_t *ws = c->priv;
  (void)env;
  if (!ws || (which != ZLB_BASELINE && which != ZLB_CANDIDATE))
    return;
  free(ws->buf[which]);
  ws->buf[which] = NULL;
}

int zlb__host_ws_get(zlb_env_t *env, zlb_case_t *c, int which, void **buf) {
  host_ws_t *ws = c->priv;
  *buf = NULL;
  if (!ws || (which != ZLB_BASELINE && which != ZLB_CANDIDATE))
    return zlb__host_fail(env, ZLB_EOP, "host: enqueue() without case_init(): no workspace record");
  if (ws->bytes[which] > 0 && !ws->buf[which])
    return zlb__host_fail(env, ZLB_EOP, "host: enqueue() before prepare(): no workspace");
  *buf = ws->buf[which];
  return 0;
}
