/* The verdict of `zlbench ab` from paired block times (docs/ab.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/ab.h"
#include "zlbench/base.h"
#include "zlbench/timing.h"

const char *zlb_ab_verdict_name(zlb_ab_verdict_t v) {
  switch (v) {
  case ZLB_AB_SAME:
    return "same";
  case ZLB_AB_FASTER:
    return "faster";
  case ZLB_AB_SLOWER:
    return "slower";
  default:
    return "ambiguous";
  }
}

/* The 0.975 quantile of Student's t with df degrees of freedom. */
static double t975(size_t df) {
  static const double t[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                             2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                             2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                             2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < sizeof(t) / sizeof(t[0]))
    return t[df];
  return 1.96 + 2.4 / (double)df; /* within 0.01 of the exact value above 30 */
}

static int good(double v) { return isfinite(v) && v > 0; }

void zlb_ab_stats(const double *a, const double *b, const double *fa, const double *fb,
                  size_t n, double threshold, zlb_ab_stat_t *out) {
  double *d = zlb_xcalloc(n ? n : 1, sizeof(double));
  double *ta = zlb_xcalloc(n ? n : 1, sizeof(double));
  double *tb = zlb_xcalloc(n ? n : 1, sizeof(double));
  double *f = zlb_xcalloc(2 * n + 1, sizeof(double));
  double fref = 0, mean, sd, half, up = 1.0 + threshold;
  size_t m = 0, nf = 0;

  memset(out, 0, sizeof(*out));
  out->a_ms = out->b_ms = out->ratio = out->lo = out->hi = NAN;
  out->verdict = ZLB_AB_AMBIGUOUS;
  for (size_t i = 0; fa && fb && i < n; i++) {
    if (fa[i] > 0)
      f[nf++] = fa[i];
    if (fb[i] > 0)
      f[nf++] = fb[i];
  }
  if (nf)
    fref = zlb_stats_median(f, nf);
  for (size_t i = 0; i < n; i++) {
    double x = a[i], y = b[i];
    if (!good(x) || !good(y))
      continue;
    if (fa && fb && fa[i] > 0 && fb[i] > 0 && fa[i] != fb[i]) {
      /* Time at the reference clock: cycles / f_ref. */
      x = x * fa[i] / fref;
      y = y * fb[i] / fref;
      out->normalised++;
    }
    ta[m] = x;
    tb[m] = y;
    d[m++] = log(y / x);
  }
  out->pairs = m;
  if (m) {
    out->a_ms = zlb_stats_median(ta, m);
    out->b_ms = zlb_stats_median(tb, m);
    mean = zlb_stats_mean(d, m);
    out->ratio = exp(mean);
  }
  if (m >= 3) {
    sd = zlb_stats_stdev(d, m);
    half = t975(m - 1) * sd / sqrt((double)m);
    out->lo = exp(mean - half);
    out->hi = exp(mean + half);
    if (out->lo > up)
      out->verdict = ZLB_AB_SLOWER;
    else if (out->hi < 1.0 / up)
      out->verdict = ZLB_AB_FASTER;
    else if (out->lo >= 1.0 / up && out->hi <= up)
      out->verdict = ZLB_AB_SAME;
  }
  free(d);
  free(ta);
  free(tb);
  free(f);
}
