/* The accuracy check run before timing: tolerances per dtype (FlagGems'
 * RESOLUTION table), exact comparison, statistical checks for random
 * operators, or the operator's own compare(). NaN never passes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

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

static int check_close(const zlb_case_t *c, int k, const void *b, const void *x,
                       zlb_error_t *err) {
  const zlb_tensor_t *t = &c->out[0][k];
  double rtol = c->rtol > 0 ? c->rtol : zlb_rtol(t->dtype);
  double atol = (c->atol > 0 ? c->atol : zlb_atol(t->dtype)) *
                (c->reduce_n > 1 ? c->reduce_n : 1.0);
  int64_t bad = 0, first = -1;
  double worst = 0.0, fb = 0, fx = 0;
  for (int64_t i = 0; i < t->numel; i++) {
    double vb = zlb_load(t->dtype, b, i), vx = zlb_load(t->dtype, x, i), d;
    if (isnan(vb) || isnan(vx)) {
      bad++;
      if (first < 0) {
        first = i;
        fb = vb;
        fx = vx;
      }
      continue;
    }
    if (isinf(vb) || isinf(vx)) {
      if (vb != vx && bad++ == 0) {
        first = i;
        fb = vb;
        fx = vx;
      }
      continue;
    }
    d = fabs(vx - vb);
    if (d > atol + rtol * fabs(vb)) {
      if (bad++ == 0) {
        first = i;
        fb = vb;
        fx = vx;
      }
      if (d > worst)
        worst = d;
    }
  }
  if (!bad)
    return 0;
  return zlb_error_set(err, ZLB_EMISMATCH,
                       "output '%s': %lld of %lld elements differ beyond "
                       "atol %.3g + rtol %.3g; first at element %lld: candidate %.9g, "
                       "baseline %.9g%s",
                       t->name ? t->name : "out", (long long)bad, (long long)t->numel,
                       atol, rtol, (long long)first, fx, fb,
                       isnan(fb) || isnan(fx) ? " (NaN never passes: unwritten or invalid)"
                                              : "");
}

static int check_exact(const zlb_case_t *c, int k, const void *b, const void *x,
                       zlb_error_t *err) {
  const zlb_tensor_t *t = &c->out[0][k];
  size_t es = zlb_dtype_size(t->dtype);
  const unsigned char *pb = b, *px = x;
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < t->numel; i++)
    if (memcmp(pb + (size_t)i * es, px + (size_t)i * es, es) && bad++ == 0)
      first = i;
  if (!bad)
    return 0;
  return zlb_error_set(err, ZLB_EMISMATCH,
                       "output '%s': %lld of %lld elements differ (exact check); "
                       "first at element %lld: candidate %.9g, baseline %.9g",
                       t->name ? t->name : "out", (long long)bad, (long long)t->numel,
                       (long long)first, zlb_load(t->dtype, x, first),
                       zlb_load(t->dtype, b, first));
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
  double sum = 0, m, s2 = 0, m4 = 0, se_mean, se_var, tol_mean, tol_var;
  double u = rel_ulp(d), second = var + mean * mean;
  if (n < 2) {
    snprintf(msg, len, "too few elements (%lld) for a statistical check", (long long)n);
    return 1;
  }
  for (int64_t i = 0; i < n; i++) {
    double v = zlb_load(d, data, i);
    if (isnan(v) || isinf(v)) {
      snprintf(msg, len, "element %lld is %g", (long long)i, v);
      return 1;
    }
    sum += v;
  }
  m = sum / (double)n;
  for (int64_t i = 0; i < n; i++) {
    double e = zlb_load(d, data, i) - m;
    s2 += e * e;
    m4 += e * e * e * e;
  }
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
    for (int k = 0; k < c->n_out; k++) {
      const zlb_tensor_t *t = &c->out[0][k];
      if (c->check == ZLB_CHECK_EXACT || !zlb_dtype_is_float(t->dtype))
        rc = check_exact(c, k, v->out[0][k], v->out[1][k], err);
      else
        rc = check_close(c, k, v->out[0][k], v->out[1][k], err);
      if (rc)
        return rc;
    }
    return 0;
  }
}
