/* The trace timer: kernel-only execution time per call from the backend's
 * activity tracer, every kernel of the call summed, the L2 flush outside the
 * traced interval. Warm-up, estimate, repeat and statistics as the direct
 * timer. Each call is bracketed by synchronisations and tracer timestamps,
 * so each kernel belongs to exactly one call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing_int.h"
#include "zlbench/base.h"

/* A kernel that starts this long before the traced interval began is
 * another interval's (or another client's): the tracer's device-to-host
 * clock conversion is good to microseconds. */
#define TRACE_SLACK_NS 1000000ull

/* The flush before a call; waited for unless queued (the call then goes
 * into the stream right behind it, as the cold graph and queue timers'
 * calls do). The previous call has been waited for either way, so its
 * kernels stay in its own window. */
static int flush_before(zlb_backend_t *b, zlb_flush_t *f, zlb_stream_t s, int queued,
                        zlb_error_t *err) {
  int rc = 0;
  if (f && f->buf)
    rc = b->v->memset_async(b, f->buf, 0, f->bytes, s, err);
  return rc || queued ? rc : b->v->stream_sync(b, s, err);
}

static int trace_chunk_as(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                          zlb_flush_t *flush, int queued, size_t k, zlb__samples_t *out,
                          zlb_error_t *err) {
  uint64_t *t0 = zlb_xcalloc(k, sizeof(*t0)), *t1 = zlb_xcalloc(k, sizeof(*t1)), tb = 0;
  zlb_trace_span_t *sp = NULL;
  size_t nsp = 0, j = 0, checked = k; /* the --integrity call, not kept (k: none) */
  int rc, rc2, due = 0;
  zlb_error_t e2 = ZLB_ERROR_INIT;

  if ((rc = b->v->trace_begin(b, err)))
    goto out;
  /* The interval's start: a span that starts well before it (more than
   * the clock conversion's error) is not from this interval's calls. */
  rc = b->v->trace_now(b, &tb, err);
  for (size_t i = 0; !rc && i < k; i++) {
    if ((due = rc = zlb__check_due(l, out->n + i, s, err)) < 0)
      break;
    if ((rc = flush_before(b, flush, s, queued, err)) || (rc = b->v->trace_now(b, &t0[i], err)) ||
        (rc = l->call(l->ctx, s, err)) || (rc = b->v->stream_sync(b, s, err)) ||
        (rc = b->v->trace_now(b, &t1[i], err)))
      break;
    /* The --integrity check's own kernels (the baseline's call) end this
     * call's window, not the next one's; the checked call is not kept. */
    if (due && !(rc = l->integrity(l->ctx, 1, out->n + i, s, err)) &&
        !(rc = b->v->trace_now(b, &t1[i], err)))
      checked = i;
  }
  /* Always stop tracing; keep the first error. */
  rc2 = b->v->trace_end(b, &sp, &nsp, rc ? &e2 : err);
  if (!rc)
    rc = rc2;
  if (rc)
    goto out;
  /*
   * Spans arrive in no particular order: attribute each to its call by its
   * start. Call i's kernels start after the synchronisation that ended call
   * i - 1 and before the one that ends call i, so its window is
   * [t1[i - 1], t1[i]). Requiring start >= t0[i] instead would trust the
   * tracer's device-to-host clock conversion to better than the launch
   * latency (a few microseconds), which a short kernel without a flush
   * before it does not leave.
   */
  for (size_t i = 0; i < k; i++) {
    uint64_t lo = i ? t1[i - 1] : tb > TRACE_SLACK_NS ? tb - TRACE_SLACK_NS : 0, hi = t1[i];
    double ns = 0;
    int kernels = 0;
    for (j = 0; j < nsp; j++)
      if (sp[j].start >= lo && sp[j].start < hi) {
        ns += (double)(sp[j].end - sp[j].start);
        kernels++;
      }
    if (!kernels) {
      int64_t near = 0;
      for (j = 0; j < nsp; j++) {
        int64_t d = (int64_t)(sp[j].start - t0[i]);
        if (!j || llabs(d) < llabs(near))
          near = d;
      }
      rc = zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "the tracer recorded no kernel for call %zu of %zu (%zu spans in "
                         "all; the nearest starts %+lld ns from the call's launch, which "
                         "took %llu ns to synchronise); the implementation may not run "
                         "on the device, or another tracer client in this process (e.g. "
                         "torch.profiler with CUPTI) took its records: use --timer graph "
                         "(timer=\"graph\" in Python) or run the trace timer in a fresh "
                         "process",
                         i, k, nsp, (long long)near, (unsigned long long)(t1[i] - t0[i]));
      goto out;
    }
    if (i != checked)
      zlb__samples_push(out, ns * 1e-6);
  }
out:
  free(t0);
  free(t1);
  free(sp);
  return rc;
}

static int trace_chunk(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                       zlb_flush_t *flush, size_t k, zlb__samples_t *out, zlb_error_t *err) {
  return trace_chunk_as(b, s, l, flush, 0, k, out, err);
}

static int trace_chunk_queued(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                              zlb_flush_t *flush, size_t k, zlb__samples_t *out,
                              zlb_error_t *err) {
  return trace_chunk_as(b, s, l, flush, 1, k, out, err);
}

/* The estimate and warm-up are untraced, as in the direct timer. */
static int trace_once(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                      const zlb_timing_opts_t *o, zlb_flush_t *flush, zlb_measurement_t *m,
                      double *value, zlb_error_t *err) {
  return zlb__sample_once(b, s, l, o, flush, m, value, o->trace_max_samples,
                          m->trace_flush_queued ? trace_chunk_queued : trace_chunk, err);
}

int zlb_time_trace(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                   const zlb_timing_opts_t *o, zlb_flush_t *flush, zlb_measurement_t *m,
                   zlb_error_t *err) {
  int rc;
  if (!b->v->trace_begin)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "backend '%s' has no kernel activity tracer (the trace timer "
                         "needs one)",
                         b->desc->name);
  /* Before the first call: a tracer that cannot load fails here, with no
   * untraced warm-up still running when the caller frees the case. */
  if (b->v->trace_available && (rc = b->v->trace_available(b, err)))
    return rc;
  m->timer = ZLB_TIMER_TRACE;
  m->host_ms = NAN;
  m->trace_flush_queued = o->trace_flush_queued && flush && flush->buf;
  return zlb__repeat(b, s, l, o, flush, m, trace_once, err);
}

int zlb_trace_side_streams(zlb_backend_t *b, zlb_stream_t s,
                           int (*call)(void *ctx, zlb_stream_t s, zlb_error_t *err), void *ctx,
                           char *note, size_t len, zlb_error_t *err) {
  zlb_trace_span_t *sp = NULL;
  size_t n = 0, mine = 0, other = 0, first = 0;
  uint64_t mark = 0;
  uint32_t own = 0, stray = 0;
  int rc, rc2, have_own = 0;
  zlb_error_t why = ZLB_ERROR_INIT, e2 = ZLB_ERROR_INIT;

  note[0] = '\0';
  if (!b->v->trace_begin || !b->v->trace_now || !b->v->trace_end || !b->v->launch_empty) {
    snprintf(note, len, "side streams: not checked (backend '%s' has no %s)", b->desc->name,
             b->v->trace_begin ? "empty kernel to name its stream" : "kernel tracer");
    return 0;
  }
  if ((b->v->trace_available && b->v->trace_available(b, &why)) || b->v->trace_begin(b, &why)) {
    snprintf(note, len, "side streams: not checked (%s)", why.msg);
    return 0;
  }
  if (!(rc = b->v->launch_empty(b, s, err)) && !(rc = b->v->stream_sync(b, s, err)) &&
      !(rc = b->v->trace_now(b, &mark, err)) && !(rc = call(ctx, s, err)))
    rc = b->v->sync(b, err); /* the side stream's work too */
  rc2 = b->v->trace_end(b, &sp, &n, rc ? &e2 : err);
  if (!rc)
    rc = rc2;
  if (rc)
    goto out;
  /* The empty kernel ended before the call began (a synchronisation lies
   * between): it is the earliest span, and it must start before `mark`
   * (a tracer that lost it leaves the stream unknown). A kernel of the
   * call that reads a little before `mark` (the tracer's clock conversion)
   * is still the call's. */
  for (size_t i = 1; i < n; i++)
    if (sp[i].start < sp[first].start)
      first = i;
  if (n && sp[first].start < mark) {
    own = sp[first].stream;
    have_own = 1;
  }
  for (size_t i = 0; i < n && have_own; i++)
    if (i != first) {
      mine++;
      if (sp[i].stream != own) {
        other++;
        stray = sp[i].stream;
      }
    }
  if (!have_own)
    snprintf(note, len, "side streams: not checked (the tracer lost the empty kernel that names "
                        "the given stream)");
  else if (!own)
    snprintf(note, len,
             "side streams: not checked (the tracer does not name the stream of a kernel)");
  else if (other)
    rc = zlb_error_set(err, ZLB_EMISMATCH,
                       "integrity: the candidate ran %zu of its %zu kernel%s on another "
                       "stream (tracer stream %u, not %u, the stream it was given); its "
                       "time would not be measured",
                       other, mine, mine == 1 ? "" : "s", stray, own);
  else
    snprintf(note, len, "side streams: none (%zu kernel%s traced, all on the given stream)", mine,
             mine == 1 ? "" : "s");
out:
  free(sp);
  return rc;
}
