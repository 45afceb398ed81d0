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

const char *zlb_ab_order_name(zlb_ab_order_t o) {
  return o == ZLB_AB_ORDER_ABBA ? "abba" : "random";
}

/* splitmix64: a seed in, a well-mixed 64-bit value out. */
static uint64_t mix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void zlb_ab_pair_order(zlb_ab_order_t order, uint64_t seed, int n, unsigned char *a_first) {
  uint64_t s = seed;
  if (n > ZLB_AB_MAX_BLOCKS)
    n = ZLB_AB_MAX_BLOCKS;
  for (int j = 0; j < n; j++)
    a_first[j] = (unsigned char)(j % 2 == 0);
  if (order != ZLB_AB_ORDER_RANDOM)
    return;
  /* Fisher-Yates over the balanced pattern: still half the pairs A first,
   * so a drift linear over a pair cancels in the median as in ABBA. */
  for (int j = n - 1; j > 0; j--) {
    int k = (int)(mix64(&s) % (uint64_t)(j + 1));
    unsigned char t = a_first[j];
    a_first[j] = a_first[k];
    a_first[k] = t;
  }
}

/* The order statistic k (1-based) whose interval [d_(k), d_(n+1-k)] covers
 * the median of n paired differences with probability >= 0.90 under the
 * sign test's null (any continuous distribution): the largest k with
 * 2 * P(Binomial(n, 1/2) <= k - 1) <= 0.10; 0 when none (n < 5). */
static size_t order_k(size_t n) {
  double p = pow(0.5, (double)n), cdf = 0, term = p; /* term = C(n, j) / 2^n */
  size_t k = 0;
  for (size_t j = 0; j < n; j++) {
    cdf += term;
    if (2 * cdf > 0.10)
      break;
    k = j + 1;
    term = term * (double)(n - j) / (double)(j + 1);
  }
  return k;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int good(double v) { return isfinite(v) && v > 0; }

void zlb_ab_stats(const double *a, const double *b, const double *fa, const double *fb,
                  size_t n, double threshold, zlb_ab_stat_t *out) {
  double *d = zlb_xcalloc(n ? n : 1, sizeof(double));
  double *ta = zlb_xcalloc(n ? n : 1, sizeof(double));
  double *tb = zlb_xcalloc(n ? n : 1, sizeof(double));
  double *f = zlb_xcalloc(2 * n + 1, sizeof(double));
  double fref = 0, up = 1.0 + threshold;
  size_t m = 0, nf = 0, k;

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
    out->ratio = exp(zlb_stats_median(d, m));
  }
  if ((k = order_k(m)) > 0) {
    qsort(d, m, sizeof(double), cmp_double);
    out->lo = exp(d[k - 1]);
    out->hi = exp(d[m - k]);
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
