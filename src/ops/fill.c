/* Random inputs: seeded, reproducible, never all zeros (zeros hide unwritten
 * outputs, and a GEMM on zeros runs faster than on random data). */
#include <math.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/ops.h"

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* 53-bit uniform in [0, 1). */
static double uniform01(uint64_t *s) {
  return (double)(splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * Normal deviates from a 4096-entry table of exact quantiles plus a small
 * uniform jitter: a few ns per element (Box-Muller costs ~10x more, and the
 * largest inputs have hundreds of millions of elements), continuous values,
 * and the right mean and variance to within 1e-3.
 */
#define NTABLE 4096
static double normal_table[NTABLE];
static int table_ready;

/* Acklam's rational approximation of the normal quantile function. */
static double probit(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  double q, r;
  if (p < 0.02425) {
    q = sqrt(-2 * log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - 0.02425) {
    q = sqrt(-2 * log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  q = p - 0.5;
  r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

static void init_table(void) {
  if (table_ready)
    return;
  for (int i = 0; i < NTABLE; i++)
    normal_table[i] = probit(((double)i + 0.5) / NTABLE);
  table_ready = 1;
}

static double normal01(uint64_t *s) {
  uint64_t r = splitmix64(s);
  unsigned i = (unsigned)(r & (NTABLE - 1));
  double lo = i ? normal_table[i - 1] : normal_table[0] - 0.1;
  double hi = i + 1 < NTABLE ? normal_table[i + 1] : normal_table[i] + 0.1;
  double t = (double)(r >> 11) * (1.0 / 9007199254740992.0);
  /* Jitter within half the gap to each neighbour keeps the order. */
  return normal_table[i] + (t - 0.5) * 0.5 * (hi - lo) * 0.5;
}

/* Elements [a, b) of the tensor. Element i takes the (i + 1)-th draw of
 * one splitmix64 sequence (its state after i draws is s0 + i * gamma), so
 * any split of the range fills the same values. */
static void fill_range(const zlb_tensor_t *t, void *host, uint64_t s0, int64_t a,
                       int64_t b) {
  uint64_t s = s0 + (uint64_t)a * 0x9e3779b97f4a7c15ull;
  double lo = t->lo, hi = t->hi;
  switch (t->fill) {
  case ZLB_FILL_NORMAL:
    if (lo == 0.0 && hi == 0.0)
      hi = 1.0;
    for (int64_t i = a; i < b; i++)
      zlb_store(t->dtype, host, i, lo + hi * normal01(&s));
    break;
  case ZLB_FILL_UNIFORM:
    for (int64_t i = a; i < b; i++)
      zlb_store(t->dtype, host, i, lo + (hi - lo) * uniform01(&s));
    break;
  case ZLB_FILL_INT: {
    double span = floor(hi) - ceil(lo);
    for (int64_t i = a; i < b; i++) {
      double v = ceil(lo) + floor(uniform01(&s) * span);
      zlb_store(t->dtype, host, i, span > 0 ? v : lo);
    }
    break;
  }
  case ZLB_FILL_BOOL:
    for (int64_t i = a; i < b; i++)
      zlb_store(t->dtype, host, i, uniform01(&s) < lo ? 1.0 : 0.0);
    break;
  case ZLB_FILL_NONE:
  default:
    break;
  }
}

struct fill_job {
  const zlb_tensor_t *t;
  void *host;
  uint64_t s0;
};

static void fill_chunk(void *ctx, int64_t k, int64_t a, int64_t b) {
  struct fill_job *j = ctx;
  (void)k;
  fill_range(j->t, j->host, j->s0, a, b);
}

/*
 * The largest inputs have hundreds of millions of elements: one thread
 * takes seconds per case (and first-touches every page of the buffer), so
 * big tensors are filled in chunks on several threads. The values do not
 * depend on the split.
 */
#define FILL_CHUNK ((int64_t)1 << 18)

void zlb_fill_host(const zlb_tensor_t *t, void *host, uint64_t seed) {
  struct fill_job j = {t, host, seed ^ 0x243f6a8885a308d3ull};
  init_table(); /* before any thread reads it */
  zlb_parallel_chunks(t->numel, FILL_CHUNK, 0, fill_chunk, &j);
}
