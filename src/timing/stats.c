/* Statistics over timing samples, with Triton 3.3+'s conventions: median of
 * an even count averages the two middle values; quantiles interpolate
 * linearly at q (n - 1), as numpy's default (docs/timing.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/timing.h"
#include "timing_int.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double *sorted_copy(const double *v, size_t n) {
  double *s = zlb_xmalloc(n * sizeof(*s));
  memcpy(s, v, n * sizeof(*s));
  qsort(s, n, sizeof(*s), cmp_double);
  return s;
}

double zlb_stats_median(const double *v, size_t n) {
  double *s, r;
  if (n == 0)
    return NAN;
  s = sorted_copy(v, n);
  r = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  free(s);
  return r;
}

double zlb_stats_mean(const double *v, size_t n) {
  double sum = 0.0;
  if (n == 0)
    return NAN;
  for (size_t i = 0; i < n; i++)
    sum += v[i];
  return sum / (double)n;
}

double zlb_stats_min(const double *v, size_t n) {
  double m;
  if (n == 0)
    return NAN;
  m = v[0];
  for (size_t i = 1; i < n; i++)
    if (v[i] < m)
      m = v[i];
  return m;
}

double zlb_stats_max(const double *v, size_t n) {
  double m;
  if (n == 0)
    return NAN;
  m = v[0];
  for (size_t i = 1; i < n; i++)
    if (v[i] > m)
      m = v[i];
  return m;
}

double zlb_stats_stdev(const double *v, size_t n) {
  double mean, acc = 0.0;
  if (n < 2)
    return 0.0;
  mean = zlb_stats_mean(v, n);
  for (size_t i = 0; i < n; i++)
    acc += (v[i] - mean) * (v[i] - mean);
  return sqrt(acc / (double)(n - 1));
}

int zlb_stats_quantile(const double *v, size_t n, double q, double *out) {
  double *s, point, t;
  size_t lo, hi;
  if (!(q >= 0.0 && q <= 1.0) || n == 0)
    return ZLB_EINVAL;
  s = sorted_copy(v, n);
  point = q * (double)(n - 1);
  lo = (size_t)floor(point);
  hi = (size_t)ceil(point);
  t = point - (double)lo;
  *out = (1.0 - t) * s[lo] + t * s[hi];
  free(s);
  return 0;
}

double zlb_stats_pick(const double *v, size_t n, zlb_return_mode_t mode) {
  switch (mode) {
  case ZLB_RET_MEAN: return zlb_stats_mean(v, n);
  case ZLB_RET_MIN: return zlb_stats_min(v, n);
  case ZLB_RET_MAX: return zlb_stats_max(v, n);
  case ZLB_RET_MEDIAN:
  case ZLB_RET_ALL:
  default: return zlb_stats_median(v, n);
  }
}

double zlb_stats_noise(const double *v, size_t n) {
  double mean;
  /* NVBench: fewer than 5 samples say nothing about noise. */
  if (n < 5)
    return NAN;
  mean = zlb_stats_mean(v, n);
  return mean > 0 ? zlb_stats_stdev(v, n) / mean : NAN;
}

const char *zlb_stop_name(zlb_stop_t s) { return s == ZLB_STOP_NOISE ? "noise" : "budget"; }

int zlb_stop_parse(const char *s, zlb_stop_t *out) {
  if (!strcmp(s, "budget"))
    *out = ZLB_STOP_BUDGET;
  else if (!strcmp(s, "noise"))
    *out = ZLB_STOP_NOISE;
  else
    return ZLB_EINVAL;
  return 0;
}

const char *zlb_timer_name(zlb_timer_kind_t t) {
  switch (t) {
  case ZLB_TIMER_AUTO: return "auto";
  case ZLB_TIMER_GRAPH: return "graph";
  case ZLB_TIMER_DIRECT: return "direct";
  case ZLB_TIMER_TRACE: return "trace";
  case ZLB_TIMER_QUEUE: return "queue";
  }
  return "unknown";
}

int zlb_timer_parse(const char *s, zlb_timer_kind_t *out) {
  static const zlb_timer_kind_t all[] = {ZLB_TIMER_AUTO, ZLB_TIMER_GRAPH,
                                         ZLB_TIMER_DIRECT, ZLB_TIMER_TRACE,
                                         ZLB_TIMER_QUEUE};
  /* The trace timer was named after the tracer CUDA's backend uses; the
   * old name stays valid input. */
  if (!strcmp(s, "cupti")) {
    *out = ZLB_TIMER_TRACE;
    return 0;
  }
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    if (!strcmp(s, zlb_timer_name(all[i]))) {
      *out = all[i];
      return 0;
    }
  return ZLB_EINVAL;
}

const char *zlb_return_mode_name(zlb_return_mode_t m) {
  switch (m) {
  case ZLB_RET_MEDIAN: return "median";
  case ZLB_RET_MEAN: return "mean";
  case ZLB_RET_MIN: return "min";
  case ZLB_RET_MAX: return "max";
  case ZLB_RET_ALL: return "all";
  }
  return "unknown";
}

int zlb_return_mode_parse(const char *s, zlb_return_mode_t *out) {
  for (int m = ZLB_RET_MEDIAN; m <= ZLB_RET_ALL; m++)
    if (!strcmp(s, zlb_return_mode_name((zlb_return_mode_t)m))) {
      *out = (zlb_return_mode_t)m;
      return 0;
    }
  return ZLB_EINVAL;
}

const char *zlb_phase_name(zlb_graph_phase_t p) {
  switch (p) {
  case ZLB_PHASE_NONE: return "none";
  case ZLB_PHASE_CAPTURE: return "capture";
  case ZLB_PHASE_INSTANTIATE: return "instantiate";
  case ZLB_PHASE_REPLAY: return "replay";
  case ZLB_PHASE_DENY: return "deny";
  case ZLB_PHASE_HOLD: return "hold";
  }
  return "unknown";
}

void zlb_timing_opts_default(zlb_timing_opts_t *o) {
  memset(o, 0, sizeof(*o));
  o->warmup_ms = 10.0;
  o->rep_ms = 40.0;
  o->return_mode = ZLB_RET_MEDIAN;
  o->repeat = 1;
  o->flush_bytes = 0;
  o->graph_max_launches = 1000;
  o->graph_replay_ms = 1.0;
  o->graph_min_replays = 10;
  o->max_samples = 10000;
  o->stop = ZLB_STOP_BUDGET;
  o->max_noise = 0.005;
  o->min_samples = 10;
  o->min_time_ms = 2.0;
  o->timeout_ms = 100.0;
  o->trace_max_samples = 500;
  o->queue_max_launches = 256;
  o->queue_batch_ms = 10.0;
  o->queue_min_batches = 10;
  o->queue_timeout_ms = 200.0;
}

void zlb_measurement_release(zlb_measurement_t *m) {
  free(m->samples);
  free(m->call_values);
  memset(m, 0, sizeof(*m));
  m->host_ms = NAN;
}

double zlb__subtract_pick(const zlb_timing_opts_t *o, zlb__samples_t *s, double sub) {
  if (!s->n)
    return 0.0;
  for (size_t i = 0; i < s->n; i++)
    s->v[i] -= sub;
  return zlb_stats_pick(s->v, s->n, o->return_mode);
}

int zlb__l2_subtract(const char *timer, const zlb_timing_opts_t *o, zlb__samples_t *s,
                     double flush_ms, const zlb_flush_t *cold, zlb_measurement_t *m,
                     zlb_error_t *err) {
  double v = zlb__subtract_pick(o, s, flush_ms);
  if (!(v > 0.0))
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "%s timer, cold L2: the call with its flush measured %.3f us, no more "
                         "than the flush alone (%.3f us): nothing is left to report; time it "
                         "with the direct or trace timer",
                         timer, (v + flush_ms) * 1e3, flush_ms * 1e3);
  zlb__l2_record(m, flush_ms, cold);
  return 0;
}

void zlb__l2_record(zlb_measurement_t *m, double flush_ms, const zlb_flush_t *cold) {
  m->l2_cold = 1;
  m->l2_flush_ms = flush_ms;
  m->l2_flush_bytes = cold->bytes;
}
