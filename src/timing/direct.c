/* The direct timer: Triton's do_bench method re-expressed over the backend
 * vtable (reference/timing-anchors.md sections 1.1 and 5), plus repeat over
 * calls (ZL_DIRECT_REPEAT) and the L2 flush buffer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/timing.h"

int zlb_flush_init(zlb_flush_t *f, zlb_backend_t *b, size_t bytes,
                   zlb_error_t *err) {
  f->buf = NULL;
  f->bytes = 0;
  if (!bytes)
    return 0;
  if (b->v->mem_alloc(b, bytes, &f->buf, err))
    return zlb_error_prefix(err, "cannot allocate the %zu-byte L2 flush buffer",
                            bytes);
  f->bytes = bytes;
  return 0;
}

void zlb_flush_release(zlb_flush_t *f, zlb_backend_t *b) {
  if (f->buf)
    b->v->mem_free(b, f->buf);
  f->buf = NULL;
  f->bytes = 0;
}

/* Writing the whole buffer evicts everything else from the caches; the
 * memset is enqueued before the start event, so it is not timed. */
static int flush_now(zlb_backend_t *b, zlb_flush_t *f, zlb_stream_t s,
                     zlb_error_t *err) {
  if (!f || !f->buf)
    return 0;
  return b->v->memset_async(b, f->buf, 0, f->bytes, s, err);
}

static void append_samples(zlb_measurement_t *m, const double *v, size_t n) {
  m->samples = zlb_xrealloc(m->samples, (m->nsamples + n) * sizeof(double));
  memcpy(m->samples + m->nsamples, v, n * sizeof(double));
  m->nsamples += n;
}

static void destroy_events(zlb_backend_t *b, zlb_event_t *ev, size_t n) {
  if (!ev)
    return;
  for (size_t i = 0; i < n; i++)
    if (ev[i])
      b->v->event_destroy(b, ev[i]);
  free(ev);
}

int zlb_time_direct_once(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                         const zlb_timing_opts_t *o, zlb_flush_t *flush,
                         zlb_measurement_t *m, double *value, zlb_error_t *err) {
  zlb_event_t *ev = NULL;
  double *samples = NULL, est_ms = 0.0, ms;
  size_t n_ev = 0;
  long n_warm, n_rep;
  int rc;

  /* First call outside everything: module loads, lazy init. */
  if ((rc = l->call(l->ctx, s, err)) || (rc = b->v->stream_sync(b, s, err)))
    goto out;

  /* Estimate from 5 flushed calls between one event pair; it includes the
   * flush, as do_bench's does, so it errs on the side of fewer samples. */
  ev = zlb_xcalloc(2, sizeof(*ev));
  n_ev = 2;
  if ((rc = b->v->event_create(b, &ev[0], err)) ||
      (rc = b->v->event_create(b, &ev[1], err)) ||
      (rc = b->v->event_record(b, ev[0], s, err)))
    goto out;
  for (int i = 0; i < 5; i++)
    if ((rc = flush_now(b, flush, s, err)) || (rc = l->call(l->ctx, s, err)))
      goto out;
  if ((rc = b->v->event_record(b, ev[1], s, err)) ||
      (rc = b->v->event_elapsed(b, ev[0], ev[1], &ms, err)))
    goto out;
  est_ms = ms / 5.0;
  destroy_events(b, ev, n_ev);
  ev = NULL;
  n_ev = 0;

  /* A zero or tiny estimate (coarse or broken timers) must not divide by
   * zero: take one warm-up call and the sample cap, as Triton 3.4+ and
   * FlagTree's XPU fix do. */
  if (est_ms > 1e-9) {
    double w = o->warmup_ms / est_ms, r = o->rep_ms / est_ms;
    n_warm = w < 1.0 ? 1 : (w > 1e6 ? 1000000 : (long)w);
    n_rep = r < 1.0 ? 1 : (r > (double)o->max_samples ? o->max_samples : (long)r);
  } else {
    n_warm = 1;
    n_rep = o->max_samples;
  }
  if (n_rep < 1)
    n_rep = 1;
  if (m->estimate_ms == 0.0)
    m->estimate_ms = est_ms;

  for (long i = 0; i < n_warm; i++)
    if ((rc = l->call(l->ctx, s, err)))
      goto out;

  n_ev = (size_t)n_rep * 2;
  ev = zlb_xcalloc(n_ev, sizeof(*ev));
  for (size_t i = 0; i < n_ev; i++)
    if ((rc = b->v->event_create(b, &ev[i], err)))
      goto out;
  /* Enqueue everything, synchronise once: no per-sample host round trip. */
  for (long i = 0; i < n_rep; i++) {
    if ((rc = flush_now(b, flush, s, err)) ||
        (rc = b->v->event_record(b, ev[2 * i], s, err)) ||
        (rc = l->call(l->ctx, s, err)) ||
        (rc = b->v->event_record(b, ev[2 * i + 1], s, err)))
      goto out;
  }
  if ((rc = b->v->stream_sync(b, s, err)))
    goto out;
  samples = zlb_xmalloc((size_t)n_rep * sizeof(*samples));
  for (long i = 0; i < n_rep; i++)
    if ((rc = b->v->event_elapsed(b, ev[2 * i], ev[2 * i + 1], &samples[i], err)))
      goto out;
  append_samples(m, samples, (size_t)n_rep);
  *value = zlb_stats_pick(samples, (size_t)n_rep, o->return_mode);
  if (o->nquantiles > 0 && m->nquantiles == 0) {
    for (int q = 0; q < o->nquantiles; q++)
      if ((rc = zlb_stats_quantile(samples, (size_t)n_rep, o->quantiles[q],
                                   &m->quantiles[q]))) {
        zlb_error_set(err, rc, "quantile %g is outside [0, 1]", o->quantiles[q]);
        goto out;
      }
    m->nquantiles = o->nquantiles;
  }
out:
  destroy_events(b, ev, n_ev);
  free(samples);
  return rc;
}

int zlb_time_direct(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                    const zlb_timing_opts_t *o, zlb_flush_t *flush,
                    zlb_measurement_t *m, zlb_error_t *err) {
  int calls = o->repeat < 1 ? 1 : o->repeat, rc = 0;
  double v;

  m->timer = ZLB_TIMER_DIRECT;
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
  for (int c = 0; c < calls; c++) {
    if ((rc = zlb_time_direct_once(b, s, l, o, flush, m, &v, err)))
      return rc;
    m->call_values[m->ncalls++] = v;
  }
  m->value_ms = calls == 1 ? m->call_values[0]
                           : zlb_stats_median(m->call_values, (size_t)m->ncalls);
  return 0;
}
