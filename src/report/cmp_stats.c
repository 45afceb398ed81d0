/* The statistics of `zlbench compare`: the Mann-Whitney U test (exact for
 * small tie-free sets, else the normal approximation with tie correction),
 * medians and spreads, the bootstrap interval of a ratio of medians, and
 * the verdict rule. docs/compare.md states the rules. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/compare.h"

static int dcmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double *sorted_copy(const double *v, size_t n) {
  double *s = zlb_xmalloc((n ? n : 1) * sizeof(*s));
  memcpy(s, v, n * sizeof(*s));
  qsort(s, n, sizeof(*s), dcmp);
  return s;
}

/* Linear-interpolation quantile (R type 7) of sorted values. */
static double quantile_sorted(const double *s, size_t n, double q) {
  double h = q * (double)(n - 1);
  size_t i = (size_t)floor(h);
  if (i + 1 >= n)
    return s[n - 1];
  return s[i] + (h - (double)i) * (s[i + 1] - s[i]);
}

double zlb_median(const double *v, size_t n) {
  double *s, m;
  if (!n)
    return NAN;
  s = sorted_copy(v, n);
  m = quantile_sorted(s, n, 0.5);
  free(s);
  return m;
}

double zlb_rel_iqr(const double *v, size_t n) {
  double *s, r;
  if (!n)
    return NAN;
  s = sorted_copy(v, n);
  r = (quantile_sorted(s, n, 0.75) - quantile_sorted(s, n, 0.25)) / quantile_sorted(s, n, 0.5);
  free(s);
  return r;
}

/* ---- Mann-Whitney U ---------------------------------------------------------- */

typedef struct {
  double v;
  int g; /* 0: a, 1: b */
} tagged_t;

static int tcmp(const void *x, const void *y) {
  return dcmp(&((const tagged_t *)x)->v, &((const tagged_t *)y)->v);
}

/* Exact two-sided p of U = u for sizes m, n without ties: the counts of U
 * are the coefficients of the Gaussian binomial [m+n choose m]_q, built as
 * prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i) (each partial product is a
 * polynomial with integer coefficients; m + n <= 50 keeps them below 2^53). */
static double exact_p(size_t m, size_t n, double u) {
  size_t deg = m * n + m + n + 1, k;
  double *c = zlb_xcalloc(deg + 1, sizeof(*c)), total = 0, lo = 0, hi = 0, p;
  c[0] = 1;
  for (size_t i = 1; i <= m; i++) {
    k = n + i;
    for (size_t j = deg; j >= k; j--) /* times (1 - q^k) */
      c[j] -= c[j - k];
    for (size_t j = i; j <= deg; j++) /* over (1 - q^i) */
      c[j] += c[j - i];
  }
  for (size_t j = 0; j <= m * n; j++) {
    total += c[j];
    if ((double)j <= u + 1e-9)
      lo += c[j];
    if ((double)j >= u - 1e-9)
      hi += c[j];
  }
  free(c);
  p = 2.0 * fmin(lo, hi) / total;
  return p > 1 ? 1 : p;
}

int zlb_utest(const double *a, size_t na, const double *b, size_t nb, zlb_utest_t *out) {
  size_t N = na + nb, i, j;
  tagged_t *t;
  double ra = 0, tie = 0, mu, var;
  int ties = 0;

  memset(out, 0, sizeof(*out));
  out->p = 1;
  if (!na || !nb)
    return 0;
  for (i = 0; i < na; i++)
    if (isnan(a[i]))
      return ZLB_EINVAL;
  for (i = 0; i < nb; i++)
    if (isnan(b[i]))
      return ZLB_EINVAL;
  t = zlb_xmalloc(N * sizeof(*t));
  for (i = 0; i < na; i++)
    t[i] = (tagged_t){a[i], 0};
  for (i = 0; i < nb; i++)
    t[na + i] = (tagged_t){b[i], 1};
  qsort(t, N, sizeof(*t), tcmp);
  /* Average ranks over ties (ranks from 1). */
  for (i = 0; i < N; i = j) {
    double rank, cnt;
    for (j = i + 1; j < N && t[j].v == t[i].v; j++)
      ;
    cnt = (double)(j - i);
    rank = ((double)i + 1 + (double)j) / 2.0;
    if (cnt > 1) {
      ties = 1;
      tie += cnt * cnt * cnt - cnt;
    }
    for (size_t k = i; k < j; k++)
      if (t[k].g == 0)
        ra += rank;
  }
  free(t);
  out->u = ra - (double)na * ((double)na + 1) / 2.0;
  mu = (double)na * (double)nb / 2.0;
  if (!ties && N <= 50) {
    out->exact = 1;
    out->p = exact_p(na, nb, out->u);
    return 0;
  }
  var = (double)na * (double)nb / 12.0 *
        (((double)N + 1) - tie / ((double)N * ((double)N - 1)));
  if (var <= 0) { /* every value equal */
    out->p = 1;
    return 0;
  }
  {
    double d = fabs(out->u - mu) - 0.5;
    if (d < 0)
      d = 0;
    out->z = (out->u >= mu ? d : -d) / sqrt(var);
    out->p = erfc(fabs(out->z) / sqrt(2.0));
  }
  if (out->p > 1)
    out->p = 1;
  return 0;
}

/* ---- bootstrap interval of the ratio of medians ---------------------------------- */

static unsigned long long xs_next(unsigned long long *s) {
  unsigned long long x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 2685821657736338717ULL;
}

/* An index below n (n <= THIN) from the top 32 bits: a multiply, not a
 * division. */
static size_t pick(unsigned long long *s, size_t n) {
  return (size_t)(((xs_next(s) >> 32) * (unsigned long long)n) >> 32);
}

/* Median of v[0..n) by Wirth's selection (reorders v). */
static double select_median(double *v, size_t n) {
  long k = (long)(n / 2), l = 0, m = (long)n - 1;
  double m1;
  while (l < m) {
    double x = v[k];
    long i = l, j = m;
    do {
      while (v[i] < x)
        i++;
      while (x < v[j])
        j--;
      if (i <= j) {
        double t = v[i];
        v[i] = v[j];
        v[j] = t;
        i++;
        j--;
      }
    } while (i <= j);
    if (j < k)
      l = i;
    if (k < i)
      m = j;
  }
  m1 = v[k];
  if (n % 2)
    return m1;
  {
    /* every value before position k is <= v[k]: the largest is the other middle one */
    double m0 = -INFINITY;
    for (long i = 0; i < k; i++)
      if (v[i] > m0)
        m0 = v[i];
    return (m0 + m1) / 2.0;
  }
}

#define THIN 500

/* Sorted copy thinned to at most THIN evenly spaced order statistics. */
static double *thinned(const double *v, size_t n, size_t *out_n) {
  double *s = sorted_copy(v, n);
  if (n > THIN) {
    double *t = zlb_xmalloc(THIN * sizeof(*t));
    for (size_t i = 0; i < THIN; i++)
      t[i] = s[(size_t)((double)i * (double)(n - 1) / (THIN - 1) + 0.5)];
    free(s);
    s = t;
    n = THIN;
  }
  *out_n = n;
  return s;
}

void zlb_ratio_ci(const double *a, size_t na, const double *b, size_t nb, int resamples,
                  unsigned long long seed, double *ratio, double *lo, double *hi) {
  size_t ta, tb;
  double *sa, *sb, *scratch, *r;
  unsigned long long st = seed ? seed : 0x9e3779b97f4a7c15ULL;
  int nr = 0;

  *ratio = *lo = *hi = NAN;
  if (!na || !nb)
    return;
  *ratio = zlb_median(b, nb) / zlb_median(a, na);
  if (resamples < 10)
    resamples = 10;
  sa = thinned(a, na, &ta);
  sb = thinned(b, nb, &tb);
  scratch = zlb_xmalloc((ta > tb ? ta : tb) * sizeof(*scratch));
  r = zlb_xmalloc((size_t)resamples * sizeof(*r));
  for (int k = 0; k < resamples; k++) {
    double ma, mb;
    for (size_t i = 0; i < ta; i++)
      scratch[i] = sa[pick(&st, ta)];
    ma = select_median(scratch, ta);
    for (size_t i = 0; i < tb; i++)
      scratch[i] = sb[pick(&st, tb)];
    mb = select_median(scratch, tb);
    if (ma > 0 && isfinite(mb / ma))
      r[nr++] = mb / ma;
  }
  if (nr) {
    qsort(r, (size_t)nr, sizeof(*r), dcmp);
    *lo = quantile_sorted(r, (size_t)nr, 0.025);
    *hi = quantile_sorted(r, (size_t)nr, 0.975);
  }
  free(sa);
  free(sb);
  free(scratch);
  free(r);
}

/* ---- verdict ------------------------------------------------------------------------ */

const char *zlb_cmp_verdict_name(zlb_cmpv_t v) {
  static const char *names[] = {"same", "faster", "slower", "noisy", "n/a"};
  return (unsigned)v < 5 ? names[v] : "?";
}

void zlb_cmp_verdict(const double *a, size_t na, const double *b, size_t nb,
                     const zlb_cmp_params_t *p, zlb_cmp_stat_t *out) {
  zlb_utest_t u;
  double change, sa, sb;

  memset(out, 0, sizeof(*out));
  out->na = na;
  out->nb = nb;
  out->ratio = out->lo = out->hi = out->p = out->spread = NAN;
  out->verdict = ZLB_V_NA;
  if (na < 2 || nb < 2) {
    snprintf(out->why, sizeof(out->why), "too few samples (%zu and %zu)", na, nb);
    return;
  }
  if (zlb_utest(a, na, b, nb, &u)) {
    snprintf(out->why, sizeof(out->why), "a sample is not a number");
    return;
  }
  out->p = u.p;
  zlb_ratio_ci(a, na, b, nb, p->resamples, p->seed, &out->ratio, &out->lo, &out->hi);
  if (!isfinite(out->ratio) || out->ratio <= 0) {
    snprintf(out->why, sizeof(out->why), "median not positive");
    return;
  }
  sa = zlb_rel_iqr(a, na);
  sb = zlb_rel_iqr(b, nb);
  out->spread = fmax(isfinite(sa) ? sa : 0, isfinite(sb) ? sb : 0);
  change = out->ratio - 1;
  if (fabs(change) <= p->threshold) {
    out->verdict = ZLB_V_SAME;
    return;
  }
  /* Below what the timer resolves, a change is not one at any ratio: a
   * 1.5 us kernel moving by 0.04 us between processes is 2.7 %. */
  {
    double ma = zlb_median(a, na);
    if (isfinite(ma) && fabs(change) * ma <= p->min_abs_ms) {
      out->verdict = ZLB_V_SAME;
      snprintf(out->why, sizeof(out->why), "change %.3f us within the %.2f us floor",
               1e3 * fabs(change) * ma, 1e3 * p->min_abs_ms);
      return;
    }
  }
  out->verdict = ZLB_V_NOISY;
  if (!(u.p < p->alpha))
    snprintf(out->why, sizeof(out->why), "p=%.3g >= %.3g", u.p, p->alpha);
  else if (!(change > 0 ? out->lo > 1 : out->hi < 1))
    snprintf(out->why, sizeof(out->why), "interval [%.3f, %.3f] holds 1", out->lo, out->hi);
  else if (fabs(change) <= out->spread)
    snprintf(out->why, sizeof(out->why), "change %.1f%% within spread %.1f%%",
             100 * fabs(change), 100 * out->spread);
  else
    out->verdict = change > 0 ? ZLB_V_SLOWER : ZLB_V_FASTER;
}
