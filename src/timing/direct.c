/* The direct timer: Triton's do_bench method re-expressed over the backend
 * vtable (docs/timing.md, "direct"): an estimate from
 * flushed calls, warm-up and sample counts from ms budgets, an L2 flush
 * before every timed call, one event pair per call, one synchronisation per
 * chunk of samples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing_int.h"
#include "zlbench/base.h"

int zlb_flush_init(zlb_flush_t *f, zlb_backend_t *b, size_t bytes, zlb_error_t *err) {
  f->buf = NULL;
  f->bytes = 0;
  if (!bytes)
    return 0;
  if (b->v->mem_alloc(b, bytes, &f->buf, err))
    return zlb_error_prefix(err, "cannot allocate the %zu-byte L2 flush buffer", bytes);
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
static int flush_now(zlb_backend_t *b, zlb_flush_t *f, zlb_stream_t s, zlb_error_t *err) {
  if (!f || !f->buf)
    return 0;
  return b->v->memset_async(b, f->buf, 0, f->bytes, s, err);
}

static void destroy_events(zlb_backend_t *b, zlb_event_t *ev, size_t n) {
  if (!ev)
    return;
  for (size_t i = 0; i < n; i++)
    if (ev[i])
      b->v->event_destroy(b, ev[i]);
  free(ev);
}

int zlb_flush_time(zlb_backend_t *b, zlb_stream_t s, zlb_flush_t *f, double *ms,
                   zlb_error_t *err) {
  zlb_event_t ev[2] = {NULL, NULL};
  int rc;
  *ms = 0.0;
  if (!f || !f->buf)
    return 0;
  if ((rc = b->v->event_create(b, &ev[0], err)) || (rc = b->v->event_create(b, &ev[1], err)) ||
      (rc = flush_now(b, f, s, err)) || (rc = b->v->event_record(b, ev[0], s, err)) ||
      (rc = flush_now(b, f, s, err)) || (rc = b->v->event_record(b, ev[1], s, err)) ||
      (rc = b->v->stream_sync(b, s, err)))
    goto out;
  rc = b->v->event_elapsed(b, ev[0], ev[1], ms, err);
out:
  for (int i = 0; i < 2; i++)
    if (ev[i])
      b->v->event_destroy(b, ev[i]);
  return rc;
}

/* `k` timed calls: everything enqueued, then one synchronisation. */
static int chunk(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                 zlb_flush_t *flush, size_t k, zlb__samples_t *out, zlb_error_t *err) {
  zlb_event_t *ev = zlb_xcalloc(2 * k, sizeof(*ev));
  double ms;
  int rc = 0, due = 0;
  size_t checked = k; /* the --integrity sample, not kept (k: none) */
  for (size_t i = 0; i < 2 * k && !rc; i++)
    rc = b->v->event_create(b, &ev[i], err);
  for (size_t i = 0; i < k && !rc; i++) {
    if ((due = rc = zlb__check_due(l, out->n + i, s, err)) < 0)
      break;
    if ((rc = flush_now(b, flush, s, err)) || (rc = b->v->event_record(b, ev[2 * i], s, err)) ||
        (rc = l->call(l->ctx, s, err)) || (rc = b->v->event_record(b, ev[2 * i + 1], s, err)))
      break;
    if (due && !(rc = l->integrity(l->ctx, 1, out->n + i, s, err)))
      checked = i;
  }
  if (!rc)
    rc = b->v->stream_sync(b, s, err);
  for (size_t i = 0; i < k && !rc; i++)
    if (!(rc = b->v->event_elapsed(b, ev[2 * i], ev[2 * i + 1], &ms, err)) && i != checked)
      zlb__samples_push(out, ms);
  destroy_events(b, ev, 2 * k);
  return rc;
}

/* Event pair around n flushed calls: their total in ms. */
static int time_flushed(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                        zlb_flush_t *flush, int n, double *ms, zlb_error_t *err) {
  zlb_event_t ev[2] = {NULL, NULL};
  int rc;
  if ((rc = b->v->event_create(b, &ev[0], err)) || (rc = b->v->event_create(b, &ev[1], err)) ||
      (rc = b->v->event_record(b, ev[0], s, err)))
    goto out;
  for (int i = 0; i < n; i++)
    if ((rc = flush_now(b, flush, s, err)) || (rc = l->call(l->ctx, s, err)))
      goto out;
  if ((rc = b->v->event_record(b, ev[1], s, err)) || (rc = b->v->stream_sync(b, s, err)) ||
      (rc = b->v->event_elapsed(b, ev[0], ev[1], ms, err)))
    goto out;
out:
  for (int i = 0; i < 2; i++)
    if (ev[i])
      b->v->event_destroy(b, ev[i]);
  return rc;
}

/*
 * First call (it absorbs JIT, autotuning and kernel loading; skipped when
 * the caller has just made one, l->primed), then the estimate: one timed
 * flushed call, which is the estimate when it lasts ZLB__EST_ONE_MS or
 * more (four more would spend four long calls refining a number that only
 * sets counts), else 5 flushed calls between one event pair. It includes
 * the flush, as do_bench's does, so it errs on the side of fewer samples.
 */
int zlb__estimate(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                  zlb_flush_t *flush, double *est_ms, long *calls, zlb_error_t *err) {
  double ms = 0;
  long n = 0;
  int rc = 0;
  if (!l->primed && ((rc = l->call(l->ctx, s, err)) || (rc = b->v->stream_sync(b, s, err))))
    goto out;
  n = l->primed ? 1 : 2;
  if ((rc = time_flushed(b, s, l, flush, 1, &ms, err)))
    goto out;
  if (ms >= ZLB__EST_ONE_MS) {
    *est_ms = ms;
    goto out;
  }
  n += 5;
  if ((rc = time_flushed(b, s, l, flush, 5, &ms, err)))
    goto out;
  *est_ms = ms / 5.0;
out:
  if (calls)
    *calls = n;
  return rc;
}

int zlb_time_direct_once(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                         const zlb_timing_opts_t *o, zlb_flush_t *flush,
                         zlb_measurement_t *m, double *value, zlb_error_t *err) {
  return zlb__sample_once(b, s, l, o, flush, m, value, o->max_samples, chunk, err);
}

int zlb_time_direct(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                    const zlb_timing_opts_t *o, zlb_flush_t *flush,
                    zlb_measurement_t *m, zlb_error_t *err) {
  m->timer = ZLB_TIMER_DIRECT;
  m->host_ms = NAN; /* each repeat's warm-up sets it: the last one's stays */
  return zlb__repeat(b, s, l, o, flush, m, zlb_time_direct_once, err);
}
