/* The sampling loop's shared pieces: sample vectors, warm-up and sample
 * counts from an estimate, the noise stopping rule (after NVBench's stdrel
 * criterion, docs/timing.md "Stopping"), per-call summaries and
 * repeat over calls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing_int.h"
#include "zlbench/base.h"

void zlb__samples_push(zlb__samples_t *s, double x) {
  if (s->n == s->alloc) {
    s->alloc = s->alloc ? s->alloc * 2 : 64;
    s->v = zlb_xrealloc(s->v, s->alloc * sizeof(double));
  }
  s->v[s->n++] = x;
}

void zlb__samples_release(zlb__samples_t *s) {
  free(s->v);
  memset(s, 0, sizeof(*s));
}

void zlb__counts(const zlb_timing_opts_t *o, double est_ms, long cap, long *n_warm,
                 long *n_rep) {
  /* A zero or tiny estimate (coarse or broken timers) must not divide by
   * zero: one warm-up call and the sample cap, as Triton 3.4+ and FlagTree's
   * XPU fix do. */
  if (est_ms > 1e-9) {
    double w = o->warmup_ms / est_ms, r = o->rep_ms / est_ms;
    *n_warm = w < 1.0 ? 1 : (w > 1e6 ? 1000000 : (long)w);
    *n_rep = r < 1.0 ? 1 : (r > (double)cap ? cap : (long)r);
  } else {
    *n_warm = 1;
    *n_rep = cap;
  }
  if (*n_rep < 1)
    *n_rep = 1;
}

void zlb__stopper_init(zlb__stopper_t *st, const zlb_timing_opts_t *o) {
  memset(st, 0, sizeof(*st));
  st->o = o;
  st->t0 = zlb_now_s();
  st->calls_per_sample = 1.0;
}

size_t zlb__stopper_next(zlb__stopper_t *st, const zlb__samples_t *s, double est_ms,
                         size_t budget_n, size_t cap) {
  const zlb_timing_opts_t *o = st->o;
  double noise, measured = 0, lo, hi;
  size_t chunk;
  if (o->stop != ZLB_STOP_NOISE)
    return s->n ? 0 : budget_n;
  if (s->n >= cap)
    return 0;
  if (!s->n)
    return (size_t)(o->min_samples > 0 ? o->min_samples : 1);
  for (size_t i = 0; i < s->n; i++)
    measured += s->v[i];
  measured *= st->calls_per_sample;
  noise = zlb_stats_noise(s->v, s->n);
  if ((int)s->n >= o->min_samples && measured >= o->min_time_ms) {
    if (noise <= o->max_noise) {
      st->met = 1;
      return 0;
    }
    /* Fast kernels may never reach the target: stop once the noise itself
     * has settled (NVBench issue #61). */
    if (!isnan(noise)) {
      st->hist[st->nh % 4] = noise;
      st->nh++;
      if (st->nh >= 4) {
        lo = hi = st->hist[0];
        for (int i = 1; i < 4; i++) {
          lo = fmin(lo, st->hist[i]);
          hi = fmax(hi, st->hist[i]);
        }
        if (hi - lo <= 0.05 * hi)
          return 0;
      }
    }
  }
  if ((zlb_now_s() - st->t0) * 1e3 >= o->timeout_ms)
    return 0;
  /* Grow geometrically, but keep a chunk within an eighth of the timeout. */
  chunk = s->n / 2 < 4 ? 4 : s->n / 2;
  if (est_ms > 1e-9 && (double)chunk * est_ms > o->timeout_ms / 8)
    chunk = (size_t)fmax(1.0, o->timeout_ms / 8 / est_ms);
  if (s->n + chunk > cap)
    chunk = cap - s->n;
  return chunk;
}

int zlb__summarize(const zlb_timing_opts_t *o, const zlb__samples_t *s,
                   zlb_measurement_t *m, double *value, zlb_error_t *err) {
  m->samples = zlb_xrealloc(m->samples, (m->nsamples + s->n + 1) * sizeof(double));
  memcpy(m->samples + m->nsamples, s->v, s->n * sizeof(double));
  m->nsamples += s->n;
  *value = zlb_stats_pick(s->v, s->n, o->return_mode);
  m->noise = zlb_stats_noise(s->v, s->n);
  if (o->nquantiles > 0 && m->nquantiles == 0) {
    for (int q = 0; q < o->nquantiles; q++) {
      int rc = zlb_stats_quantile(s->v, s->n, o->quantiles[q], &m->quantiles[q]);
      if (rc)
        return zlb_error_set(err, rc, "quantile %g is outside [0, 1]", o->quantiles[q]);
    }
    m->nquantiles = o->nquantiles;
  }
  return 0;
}

int zlb__repeat(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                const zlb_timing_opts_t *o, zlb_flush_t *flush, zlb_measurement_t *m,
                zlb__once_fn once, zlb_error_t *err) {
  int calls = o->repeat < 1 ? 1 : o->repeat, rc;
  double v, t0 = zlb_now_s();

  /* With quantiles or "all" the result is a sequence: a median across
   * calls is undefined for it, so repetition is skipped, visibly. */
  if (calls > 1 && (o->nquantiles > 0 || o->return_mode == ZLB_RET_ALL)) {
    snprintf(m->note, sizeof(m->note), "repeat=%d skipped: %s requested", calls,
             o->nquantiles > 0 ? "quantiles" : "return mode all");
    calls = 1;
  }
  free(m->call_values);
  m->call_values = zlb_xcalloc((size_t)calls, sizeof(double));
  m->ncalls = 0;
  m->noise_met = 1;
  for (int c = 0; c < calls; c++) {
    if ((rc = once(b, s, l, o, flush, m, &v, err)))
      return rc;
    m->call_values[m->ncalls++] = v;
  }
  m->value_ms = calls == 1 ? m->call_values[0]
                           : zlb_stats_median(m->call_values, (size_t)m->ncalls);
  /* Noise over every sample of every call: what a reader should trust. */
  m->noise = zlb_stats_noise(m->samples, m->nsamples);
  m->wall_s = zlb_now_s() - t0;
  return 0;
}

int zlb__sample_once(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                     const zlb_timing_opts_t *o, zlb_flush_t *flush, zlb_measurement_t *m,
                     double *value, long cap, zlb__chunk_fn chunk, zlb_error_t *err) {
  zlb__samples_t smp = {NULL, 0, 0};
  zlb__stopper_t st;
  double est_ms = 0.0;
  long n_warm, n_rep;
  size_t k;
  int rc;

  if ((rc = zlb__estimate(b, s, l, flush, &est_ms, NULL, err)))
    return rc;
  zlb__counts(o, est_ms, cap, &n_warm, &n_rep);
  if (m->estimate_ms == 0.0)
    m->estimate_ms = est_ms;
  if ((rc = zlb__warm_calls(l, s, n_warm, m, err)))
    return rc;
  zlb__stopper_init(&st, o);
  while ((k = zlb__stopper_next(&st, &smp, est_ms, (size_t)n_rep, (size_t)cap)))
    if ((rc = chunk(b, s, l, flush, k, &smp, err)))
      goto out;
  m->sample_s += zlb_now_s() - st.t0; /* over every repeated call */
  if (o->stop == ZLB_STOP_NOISE)
    m->noise_met &= st.met;
  rc = zlb__summarize(o, &smp, m, value, err);
out:
  zlb__samples_release(&smp);
  return rc;
}
