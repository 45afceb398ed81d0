/* The accuracy check run before timing: tolerances per dtype (FlagGems'
 * RESOLUTION table), exact comparison, statistical checks for random
 * operators, or the operator's own compare(). NaN never passes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/device.h"
#include "zlbench/ops.h"

double zlb_rtol(zlb_dtype_t d) {
  switch (d) {
  case ZLB_DT_FLOAT16: return 1e-3;
  case ZLB_DT_BFLOAT16: return 1.6e-2;
  case ZLB_DT_FLOAT32: return 1.3e-6;
  case ZLB_DT_FLOAT64: return 1e-12;
  default: return 0.0;
  }
}

double zlb_atol(zlb_dtype_t d) { return zlb_dtype_is_float(d) ? 1e-4 : 0.0; }

/*
 * Large outputs are compared in fixed chunks on several threads: one
 * result per chunk, combined in chunk order, so the message (first bad
 * element, counts, sums) is the same whatever the thread count.
 */
#define CHECK_CHUNK ((int64_t)1 << 20)

struct cmp_job {
  zlb_dtype_t dt;
  const void *b, *x;
  size_t es;
  double rtol, atol;
  int exact;
  struct cmp_part {
    int64_t bad, first;
    double worst, fb, fx;
  } *part;
};

static void cmp_chunk(void *ctx, int64_t k, int64_t lo, int64_t hi) {
  struct cmp_job *j = ctx;
  struct cmp_part *p = &j->part[k];
  const unsigned char *pb = j->b, *px = j->x;
  p->bad = 0;
  p->first = -1;
  p->worst = 0.0;
  for (int64_t i = lo; i < hi; i++) {
    double vb, vx, d;
    if (j->exact) {
      if (memcmp(pb + (size_t)i * j->es, px + (size_t)i * j->es, j->es) && p->bad++ == 0)
        p->first = i;
      continue;
    }
    vb = zlb_load(j->dt, j->b, i);
    vx = zlb_load(j->dt, j->x, i);
    if (isnan(vb) || isnan(vx)) {
      if (p->bad++ == 0)
        p->first = i, p->fb = vb, p->fx = vx;
      continue;
    }
    if (isinf(vb) || isinf(vx)) {
      if (vb != vx && p->bad++ == 0)
        p->first = i, p->fb = vb, p->fx = vx;
      continue;
    }
    d = fabs(vx - vb);
    if (d > j->atol + j->rtol * fabs(vb)) {
      if (p->bad++ == 0)
        p->first = i, p->fb = vb, p->fx = vx;
      if (d > p->worst)
        p->worst = d;
    }
  }
}

/* Count the elements that differ; *first is the lowest such index. */
static int64_t compare_all(const zlb_tensor_t *t, const void *b, const void *x, int exact,
                           double rtol, double atol, int64_t *first, double *fb,
                           double *fx) {
  int64_t nchunks = (t->numel + CHECK_CHUNK - 1) / CHECK_CHUNK, bad = 0;
  struct cmp_job j = {t->dtype, b, x, zlb_dtype_size(t->dtype), rtol, atol, exact, NULL};
  *first = -1;
  if (t->numel <= 0)
    return 0;
  j.part = zlb_xcalloc((size_t)nchunks, sizeof(*j.part));
  zlb_parallel_chunks(t->numel, CHECK_CHUNK, 0, cmp_chunk, &j);
  for (int64_t k = 0; k < nchunks; k++) {
    if (j.part[k].bad && *first < 0) {
      *first = j.part[k].first;
      *fb = j.part[k].fb;
      *fx = j.part[k].fx;
    }
    bad += j.part[k].bad;
  }
  free(j.part);
  return bad;
}

/* Bit-exact for EXACT cases and outputs that are not floating point. */
static int is_exact(const zlb_case_t *c, const zlb_tensor_t *t) {
  return c->check == ZLB_CHECK_EXACT || !zlb_dtype_is_float(t->dtype);
}

/* The tolerances of a CLOSE check: the case's, else the dtype's; atol
 * scaled by the number of terms summed into one element. */
static void tolerances(const zlb_case_t *c, const zlb_tensor_t *t, double *rtol,
                       double *atol) {
  *rtol = c->rtol > 0 ? c->rtol : zlb_rtol(t->dtype);
  *atol = (c->atol > 0 ? c->atol : zlb_atol(t->dtype)) * (c->reduce_n > 1 ? c->reduce_n : 1.0);
}

/* The mismatch message, the same whether the host or the device counted. */
static int mismatch(zlb_error_t *err, const zlb_tensor_t *t, int exact, int64_t bad,
                    int64_t first, double fb, double fx, double rtol, double atol) {
  if (exact)
    return zlb_error_set(err, ZLB_EMISMATCH,
                         "output '%s': %lld of %lld elements differ (exact check); "
                         "first at element %lld: candidate %.9g, baseline %.9g",
                         t->name ? t->name : "out", (long long)bad, (long long)t->numel,
                         (long long)first, fx, fb);
  return zlb_error_set(err, ZLB_EMISMATCH,
                       "output '%s': %lld of %lld elements differ beyond "
                       "atol %.3g + rtol %.3g; first at element %lld: candidate %.9g, "
                       "baseline %.9g%s",
                       t->name ? t->name : "out", (long long)bad, (long long)t->numel,
                       atol, rtol, (long long)first, fx, fb,
                       isnan(fb) || isnan(fx) ? " (NaN never passes: unwritten or invalid)"
                                              : "");
}

static int check_host(const zlb_case_t *c, int k, const void *b, const void *x,
                      zlb_error_t *err) {
  const zlb_tensor_t *t = &c->out[0][k];
  int exact = is_exact(c, t);
  double rtol = 0, atol = 0, fb = 0, fx = 0;
  int64_t first, bad;
  if (!exact)
    tolerances(c, t, &rtol, &atol);
  bad = compare_all(t, b, x, exact, rtol, atol, &first, &fb, &fx);
  if (!bad)
    return 0;
  if (exact) {
    fb = zlb_load(t->dtype, b, first);
    fx = zlb_load(t->dtype, x, first);
  }
  return mismatch(err, t, exact, bad, first, fb, fx, rtol, atol);
}

/* Spacing of the dtype's values relative to their magnitude (one ulp at
 * 1.0): the most that rounding to it, in either direction, moves a value. */
static double rel_ulp(zlb_dtype_t d) {
  switch (d) {
  case ZLB_DT_FLOAT16: return 0x1p-10;
  case ZLB_DT_BFLOAT16: return 0x1p-7;
  case ZLB_DT_FLOAT32: return 0x1p-23;
  case ZLB_DT_FLOAT64: return 0x1p-52;
  default: return 0.0;
  }
}

struct stat_job {
  zlb_dtype_t dt;
  const void *data;
  double mean;           /* second pass: the sample mean */
  int pass;
  struct stat_part {
    double s1, s2, s4;
    int64_t bad;         /* first NaN or infinity, or -1 */
  } *part;
};

static void stat_chunk(void *ctx, int64_t k, int64_t lo, int64_t hi) {
  struct stat_job *j = ctx;
  struct stat_part *p = &j->part[k];
  if (j->pass == 0) {
    p->s1 = 0;
    p->bad = -1;
    for (int64_t i = lo; i < hi; i++) {
      double v = zlb_load(j->dt, j->data, i);
      if (isnan(v) || isinf(v)) {
        p->bad = i;
        return;
      }
      p->s1 += v;
    }
    return;
  }
  p->s2 = p->s4 = 0;
  for (int64_t i = lo; i < hi; i++) {
    double e = zlb_load(j->dt, j->data, i) - j->mean;
    p->s2 += e * e;
    p->s4 += e * e * e * e;
  }
}

/* The verdict from the sums: sum of values, of squared and of fourth-power
 * deviations from the sample mean. */
static int stat_judge(zlb_dtype_t d, int64_t n, double sum, double s2, double m4,
                      double mean, double var, char *msg, size_t len) {
  double m = sum / (double)n, se_mean, se_var, tol_mean, tol_var;
  double u = rel_ulp(d), second = var + mean * mean;
  s2 /= (double)(n - 1);
  m4 /= (double)n;
  se_mean = sqrt(var / (double)n);
  se_var = sqrt(fmax(m4 - s2 * s2, 0.0) / (double)n);
  tol_mean = 6 * se_mean + u * sqrt(second) + 2e-3 * sqrt(var);
  tol_var = 6 * se_var + 2 * u * second + 2e-2 * var;
  if (fabs(m - mean) > tol_mean) {
    snprintf(msg, len, "sample mean %.6g, expected %.6g (+-%.3g)", m, mean, tol_mean);
    return 1;
  }
  if (fabs(s2 - var) > tol_var) {
    snprintf(msg, len, "sample variance %.6g, expected %.6g (+-%.3g)", s2, var, tol_var);
    return 1;
  }
  return 0;
}

/*
 * The sample mean and variance against the distribution's, within six
 * standard errors (a correct generator fails about once in 1e9 checks)
 * plus what the output dtype's rounding may shift them by: a generator
 * that rounds toward zero to stay inside [0, 1) lowers every value by up
 * to one ulp, so the mean moves by up to rel_ulp * E|X| <= rel_ulp *
 * sqrt(var + mean^2) (bfloat16's U(0, 1): -0.0013 measured, 0.0045
 * allowed) and the variance by up to 2 rel_ulp of the second moment. A
 * small floor on each (0.2 % of the deviation, 2 % of the variance) covers
 * generators whose float32 output is coarser than float32.
 */
int zlb_check_stat(zlb_dtype_t d, const void *data, int64_t n, double mean,
                   double var, char *msg, size_t len) {
  double sum = 0, m, s2 = 0, m4 = 0;
  int64_t nchunks = (n + CHECK_CHUNK - 1) / CHECK_CHUNK;
  struct stat_job j = {d, data, 0.0, 0, NULL};
  if (n < 2) {
    snprintf(msg, len, "too few elements (%lld) for a statistical check", (long long)n);
    return 1;
  }
  j.part = zlb_xcalloc((size_t)nchunks, sizeof(*j.part));
  zlb_parallel_chunks(n, CHECK_CHUNK, 0, stat_chunk, &j);
  for (int64_t k = 0; k < nchunks; k++) {
    if (j.part[k].bad >= 0) {
      double v = zlb_load(d, data, j.part[k].bad);
      snprintf(msg, len, "element %lld is %g", (long long)j.part[k].bad, v);
      free(j.part);
      return 1;
    }
    sum += j.part[k].s1;
  }
  m = sum / (double)n;
  j.mean = m;
  j.pass = 1;
  zlb_parallel_chunks(n, CHECK_CHUNK, 0, stat_chunk, &j);
  for (int64_t k = 0; k < nchunks; k++) {
    s2 += j.part[k].s2;
    m4 += j.part[k].s4;
  }
  free(j.part);
  return stat_judge(d, n, sum, s2, m4, mean, var, msg, len);
}

int zlb_check_outputs(const zlb_op_t *op, zlb_env_t *env, const zlb_case_t *c,
                      const zlb_host_view_t *v, zlb_error_t *err) {
  char msg[512] = {0};
  int rc;
  switch (c->check) {
  case ZLB_CHECK_NONE:
    return 0;
  case ZLB_CHECK_CUSTOM:
    if (!op->compare)
      return zlb_error_set(err, ZLB_EOP,
                           "operator '%s' asks for a custom check but has no compare()",
                           op->name);
    if (op->compare(env, c, v, msg, sizeof(msg)))
      return zlb_error_set(err, ZLB_EMISMATCH, "%s",
                           msg[0] ? msg : "compare() rejected the candidate's output");
    return 0;
  case ZLB_CHECK_STAT:
    for (int k = 0; k < c->n_out; k++)
      for (int w = 0; w < 2; w++) {
        const zlb_tensor_t *t = &c->out[w][k];
        if (zlb_check_stat(t->dtype, v->out[w][k], t->numel, c->stat_mean, c->stat_var,
                           msg, sizeof(msg)))
          return zlb_error_set(err, ZLB_EMISMATCH, "%s output '%s': %s",
                               w == ZLB_BASELINE ? "baseline" : "candidate",
                               t->name ? t->name : "out", msg);
      }
    return 0;
  case ZLB_CHECK_EXACT:
  case ZLB_CHECK_CLOSE:
  default:
    for (int k = 0; k < c->n_out; k++)
      if ((rc = check_host(c, k, v->out[0][k], v->out[1][k], err)))
        return rc;
    return 0;
  }
}

/* ---- on the device -------------------------------------------------------------- */

/* Element i of a device tensor, for a message. */
static double device_elem(zlb_backend_t *b, const zlb_tensor_t *t, int64_t i) {
  unsigned char buf[8] = {0};
  size_t es = zlb_dtype_size(t->dtype);
  zlb_error_t e = ZLB_ERROR_INIT;
  if (i < 0 || i >= t->numel || es > sizeof(buf) ||
      b->v->memcpy_dtoh(b, buf, (const char *)t->data + (size_t)i * es, es, &e))
    return NAN;
  return zlb_load(t->dtype, buf, 0);
}

static int device_close(zlb_backend_t *b, zlb_stream_t s, const zlb_case_t *c, int k,
                        zlb_error_t *err) {
  const zlb_tensor_t *tb = &c->out[0][k], *tx = &c->out[1][k];
  int exact = is_exact(c, tb), rc;
  double rtol = 0, atol = 0;
  zlb_dev_check_t q;
  zlb_dev_check_result_t res;
  if (!exact)
    tolerances(c, tb, &rtol, &atol);
  q = (zlb_dev_check_t){exact ? ZLB_DEVCHECK_EXACT : ZLB_DEVCHECK_CLOSE,
                        (int)tb->dtype, tb->data, tx->data, tb->numel, rtol, atol, 0.0, 0};
  if ((rc = b->v->dev_check(b, &q, &res, s, err)) || !res.bad)
    return rc;
  return mismatch(err, tb, exact, res.bad, res.first, device_elem(b, tb, res.first),
                  device_elem(b, tx, res.first), rtol, atol);
}

static int device_stat(zlb_backend_t *b, zlb_stream_t s, const zlb_case_t *c,
                       const zlb_tensor_t *t, char *msg, size_t len, zlb_error_t *err) {
  zlb_dev_check_t q = {ZLB_DEVCHECK_MOMENTS, (int)t->dtype, t->data, NULL, t->numel,
                       0.0, 0.0, 0.0, 0};
  zlb_dev_check_result_t r0, r1;
  int rc;
  if (t->numel < 2) {
    snprintf(msg, len, "too few elements (%lld) for a statistical check", (long long)t->numel);
    return 1;
  }
  if ((rc = b->v->dev_check(b, &q, &r0, s, err)))
    return rc;
  if (r0.bad) {
    snprintf(msg, len, "element %lld is %g", (long long)r0.first, device_elem(b, t, r0.first));
    return 1;
  }
  q.pass = 1;
  q.mean = r0.sum[0] / (double)t->numel;
  if ((rc = b->v->dev_check(b, &q, &r1, s, err)))
    return rc;
  return stat_judge(t->dtype, t->numel, r0.sum[0], r1.sum[1], r1.sum[2], c->stat_mean,
                    c->stat_var, msg, len);
}

int zlb_check_outputs_device(zlb_backend_t *b, zlb_stream_t s, const zlb_case_t *c,
                             zlb_error_t *err) {
  char msg[512] = {0};
  int rc;
  if (c->check == ZLB_CHECK_NONE)
    return 0;
  if (!b->v->dev_check || c->check == ZLB_CHECK_CUSTOM)
    return zlb_error_set(err, ZLB_EUNSUPPORTED, "no device check for this case");
  for (int k = 0; k < c->n_out; k++) {
    if (c->check != ZLB_CHECK_STAT) {
      if ((rc = device_close(b, s, c, k, err)))
        return rc;
      continue;
    }
    for (int w = 0; w < 2; w++) {
      const zlb_tensor_t *t = &c->out[w][k];
      rc = device_stat(b, s, c, t, msg, sizeof(msg), err);
      if (rc == 1)
        return zlb_error_set(err, ZLB_EMISMATCH, "%s output '%s': %s",
                             w == ZLB_BASELINE ? "baseline" : "candidate",
                             t->name ? t->name : "out", msg);
      if (rc)
        return rc;
    }
  }
  return 0;
}
