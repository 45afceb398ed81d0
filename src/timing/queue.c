/* The launch-queue timer (docs/timing.md, "queue"): NVBench's batch
 * measurement over the backend vtable, for backends whose graphs are not
 * reliable. The stream is held, K calls are queued behind the hold between
 * one event pair, the hold is released, and the batch's time divided by K
 * is one sample. A watchdog thread releases a hold that the timing thread
 * cannot reach (an enqueue blocked on a full launch queue waits for the
 * device, and a held device waits for the release), so the process never
 * hangs on its own hold. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing_int.h"
#include "zlbench/base.h"

/* Timed batches per measurement at most, as the graph timer's replays. */
#define QUEUE_MAX_BATCHES 1000
/* Batches the watchdog may release before the shape falls back. */
#define QUEUE_MAX_INVALID 3
/* K is divided by this after a released batch: a queue too shallow for the
 * batch needs a much smaller one, not one call less. */
#define QUEUE_SHRINK 4

/* The watchdog: armed with a hold and a deadline for as long as the timing
 * thread is between hold and release; at the deadline it releases the hold
 * itself and says so. stream_release is safe from here (device.h). */
typedef struct watchdog {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int armed, fired, quit;
  unsigned gen;              /* bumped at each arm: a wait is for one hold only */
  struct timespec deadline;
  zlb_backend_t *b;
  zlb_hold_t h;
  double timeout_ms;
} watchdog_t;

static void *watchdog_main(void *arg) {
  watchdog_t *w = arg;
  pthread_mutex_lock(&w->mu);
  while (!w->quit) {
    unsigned gen;
    if (!w->armed) {
      pthread_cond_wait(&w->cv, &w->mu);
      continue;
    }
    gen = w->gen;
    /* ETIMEDOUT comes back only once the mutex is ours again: by then the
     * timing thread may have disarmed this hold and armed the next, which
     * must not be released on this one's deadline. */
    if (pthread_cond_timedwait(&w->cv, &w->mu, &w->deadline) == ETIMEDOUT && w->armed &&
        w->gen == gen && !w->quit) {
      w->b->v->stream_release(w->b, w->h);
      w->armed = 0;
      w->fired = 1;
    }
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static int watchdog_start(watchdog_t *w, zlb_backend_t *b, double timeout_ms) {
  pthread_condattr_t ca;
  memset(w, 0, sizeof(*w));
  w->b = b;
  w->timeout_ms = timeout_ms;
  if (pthread_mutex_init(&w->mu, NULL))
    return -1;
  if (pthread_condattr_init(&ca)) {
    pthread_mutex_destroy(&w->mu);
    return -1;
  }
  /* Deadlines on the monotonic clock: a wall-clock step must not fire or
   * delay the watchdog. */
  if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) || pthread_cond_init(&w->cv, &ca)) {
    pthread_condattr_destroy(&ca);
    pthread_mutex_destroy(&w->mu);
    return -1;
  }
  pthread_condattr_destroy(&ca);
  if (pthread_create(&w->th, NULL, watchdog_main, w)) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    return -1;
  }
  return 0;
}

static void watchdog_arm(watchdog_t *w, zlb_hold_t h) {
  struct timespec now;
  long long ns;
  clock_gettime(CLOCK_MONOTONIC, &now);
  ns = (long long)now.tv_nsec + (long long)(w->timeout_ms * 1e6);
  pthread_mutex_lock(&w->mu);
  w->h = h;
  w->gen++;
  w->deadline.tv_sec = now.tv_sec + (time_t)(ns / 1000000000LL);
  w->deadline.tv_nsec = (long)(ns % 1000000000LL);
  w->armed = 1;
  w->fired = 0;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

/* 1 when the watchdog released the hold before the timing thread could. */
static int watchdog_disarm(watchdog_t *w) {
  int fired;
  pthread_mutex_lock(&w->mu);
  fired = w->fired;
  w->armed = 0;
  w->fired = 0;
  pthread_mutex_unlock(&w->mu);
  return fired;
}

static void watchdog_stop(watchdog_t *w) {
  pthread_mutex_lock(&w->mu);
  w->quit = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->th, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
}

/* This shape cannot be timed on a held stream: REFUSED at phase hold, so
 * the caller falls back to the direct timer and marks the row. */
static int refuse(zlb_graph_failure_t *fail, const char *reason, zlb_error_t *err,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(zlb_graph_failure_t *fail, const char *reason, zlb_error_t *err,
                  const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  fail->phase = ZLB_PHASE_HOLD;
  fail->verdict = ZLB_VERDICT_REFUSED;
  zlb_strlcpy(fail->reason, reason, sizeof(fail->reason));
  zlb_error_set(err, ZLB_EREFUSED, "queue hold refused: %s", msg);
  fail->error = *err;
  return ZLB_EREFUSED;
}

/*
 * One batch: hold, start event, k calls with nothing between them, end
 * event, release, synchronise; *ms = end - start. Recorded on the held
 * stream, the start event completes when the hold is released, and by then
 * every call is queued behind it: the device runs them back to back, with
 * no launch latency in between. *fired: the watchdog released the hold, so
 * the batch also timed the wait (not a sample). *hold_failed: the hold
 * itself failed (the caller classifies the error).
 *
 * With `pairs` (2k events; cold L2 calibrated, docs/timing.md "Cold L2")
 * each call has its own pair, recorded after its flush and after the call:
 * *ms is the sum of the k pairs, which holds the calls, the gap in front
 * of each and the end event's own time, and none of the flushes.
 */
static int run_batch(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l, long k,
                     const zlb_flush_t *flush, watchdog_t *w, zlb_event_t ev[2],
                     zlb_event_t *pairs, double *ms, int *fired, int *hold_failed,
                     zlb_error_t *err) {
  zlb_hold_t h = NULL;
  int rc = 0;
  *fired = 0;
  *hold_failed = 0;
  if ((rc = b->v->stream_hold(b, s, &h, err))) {
    *hold_failed = 1;
    return rc;
  }
  watchdog_arm(w, h);
  if (!pairs)
    rc = b->v->event_record(b, ev[0], s, err);
  /* Cold L2 (flush): the flush buffer is written before each call. */
  for (long i = 0; i < k && !rc; i++) {
    if (flush && (rc = b->v->memset_async(b, flush->buf, 0, flush->bytes, s, err)))
      break;
    if (pairs && (rc = b->v->event_record(b, pairs[2 * i], s, err)))
      break;
    if ((rc = l->call(l->ctx, s, err)))
      break;
    if (pairs)
      rc = b->v->event_record(b, pairs[2 * i + 1], s, err);
  }
  if (!rc && !pairs)
    rc = b->v->event_record(b, ev[1], s, err);
  *fired = watchdog_disarm(w);
  /* On every path: a hold left in force would stall the stream for good. */
  b->v->stream_release(b, h);
  if (rc || (rc = b->v->stream_sync(b, s, err)) || *fired)
    return rc;
  if (!pairs)
    return b->v->event_elapsed(b, ev[0], ev[1], ms, err);
  *ms = 0.0;
  for (long i = 0; i < k; i++) {
    double one = 0.0;
    if ((rc = b->v->event_elapsed(b, pairs[2 * i], pairs[2 * i + 1], &one, err)))
      return rc;
    *ms += one;
  }
  return 0;
}

/* ---- calibration -------------------------------------------------------------- */

static int span_by_start(const void *a, const void *b) {
  uint64_t x = ((const zlb_trace_span_t *)a)->start, y = ((const zlb_trace_span_t *)b)->start;
  return (x > y) - (x < y);
}

/* The traced time (ns) of the k empty kernels among a batch's `m` spans
 * `w` (sorted here by start): all of them when m == k; with `flushed`
 * and m == 2k, every second one, each after its flush, which a tracer may
 * report as a kernel of its own (CUPTI did for a graph's memset nodes on
 * an H100): the spans must then alternate, each flush ending before its
 * kernel starts and lasting longer than it. -1: they do not. */
static double empty_kernels_ns(zlb_trace_span_t *w, size_t m, long k, int flushed) {
  double ns = 0.0;
  if (m == (size_t)k) {
    for (size_t i = 0; i < m; i++)
      ns += (double)(w[i].end - w[i].start);
    return ns;
  }
  if (!flushed || m != 2 * (size_t)k)
    return -1.0;
  qsort(w, m, sizeof(*w), span_by_start);
  for (size_t i = 0; i < m; i += 2) {
    uint64_t fl = w[i].end - w[i].start, ek = w[i + 1].end - w[i + 1].start;
    if (w[i].end > w[i + 1].start || fl <= ek)
      return -1.0;
    ns += (double)ek;
  }
  return ns;
}

int zlb__calibration_from_spans(const char *what, const char *unit, long k, int n, int flushed,
                                const double *timed_ms, const double *untraced_ms,
                                const uint64_t *after, const zlb_trace_span_t *sp, size_t nsp,
                                zlb__calibration_t *cal, zlb_error_t *err) {
  double c[16], u[16];
  zlb_trace_span_t *w;
  if (n < 1 || n > (int)(sizeof(c) / sizeof(c[0])))
    return zlb_error_set(err, ZLB_EINVAL, "%s: %d %ses (1..16)", what, n, unit);
  w = zlb_xcalloc(nsp ? nsp : 1, sizeof(*w));
  for (int j = 0; j < n; j++) {
    uint64_t lo = j ? after[j - 1] : 0, hi = after[j], shortest = UINT64_MAX, longest = 0;
    size_t m = 0;
    double ns;
    for (size_t i = 0; i < nsp; i++)
      if (sp[i].start >= lo && sp[i].start < hi && sp[i].end >= sp[i].start) {
        uint64_t d = sp[i].end - sp[i].start;
        shortest = d < shortest ? d : shortest;
        longest = d > longest ? d : longest;
        w[m++] = sp[i];
      }
    if ((ns = empty_kernels_ns(w, m, k, flushed)) < 0.0) {
      free(w);
      return zlb_error_set(err, ZLB_EUNSUPPORTED,
                           "%s: the tracer saw %zu kernels (%.3f..%.3f us) in %s %d of %ld "
                           "empty kernels%s (%zu spans in all); the launch cost cannot be "
                           "told from the kernels' time",
                           what, m, m ? (double)shortest * 1e-3 : 0.0, (double)longest * 1e-3,
                           unit, j + 1, k, flushed ? " and their flushes" : "", nsp);
    }
    c[j] = (timed_ms[j] - ns * 1e-6) / (double)k;
    u[j] = (untraced_ms[j] - ns * 1e-6) / (double)k;
  }
  free(w);
  cal->ms = zlb_stats_median(u, (size_t)n);
  cal->traced_ms = zlb_stats_median(c, (size_t)n);
  /* The batch holds its kernels and their gaps: less than their traced
   * time means the event timer and the tracer disagree, and nothing can
   * be subtracted with confidence. */
  if (!isfinite(cal->ms) || cal->ms < 0.0)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "%s: %ses of %ld empty kernels took less than the tracer says "
                         "their kernels ran (%.3f us per call); the event timer and the "
                         "tracer disagree",
                         what, unit, k, cal->ms * 1e3);
  return 0;
}

/* Batches of empty kernels per calibration, traced and again untraced:
 * their median is used. */
#define QUEUE_CAL_BATCHES 9

int zlb__empty_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  zlb_backend_t *b = ctx;
  return b->v->launch_empty(b, s, err);
}

int zlb_queue_calibration_check(const zlb_backend_vtbl_t *v, const char *backend,
                                zlb_error_t *err) {
  if (!v || !v->launch_empty)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "queue calibration: backend '%s' has no empty kernel to measure a "
                         "launch with",
                         backend);
  if (!v->trace_begin || !v->trace_now || !v->trace_end)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "queue calibration: backend '%s' has no kernel activity tracer to "
                         "tell an empty kernel's own time from its launch's",
                         backend);
  return 0;
}

/* The vtable's check, then whether its tracer can be used here. */
static int calibration_ready(zlb_backend_t *b, zlb_error_t *err) {
  zlb_error_t why = ZLB_ERROR_INIT;
  int rc;
  if ((rc = zlb_queue_calibration_check(b->v, b->desc->name, err)) || !b->v->trace_available ||
      !(rc = b->v->trace_available(b, &why)))
    return rc;
  return zlb_error_set(err, rc, "queue calibration: %s", why.msg);
}

/* QUEUE_CAL_BATCHES batches of k empty kernels, held and timed as the
 * calls' are, into ms[]; with `after` (the tracer on), the tracer's clock
 * after each. Stops at an error or a batch the watchdog released (*fired). */
static int empty_batches(zlb_backend_t *b, zlb_stream_t s, long k, const zlb_flush_t *flush,
                         watchdog_t *w, zlb_event_t ev[2], zlb_event_t *pairs, double *ms,
                         uint64_t *after, int *fired, zlb_error_t *err) {
  zlb_launch_t el = {.call = zlb__empty_call, .ctx = b};
  int rc = 0;
  for (int j = 0; j < QUEUE_CAL_BATCHES && !rc; j++) {
    int hold_failed;
    if ((rc = run_batch(b, s, &el, k, flush, w, ev, pairs, &ms[j], fired, &hold_failed, err)) ||
        *fired)
      break;
    if (after)
      rc = b->v->trace_now(b, &after[j], err);
  }
  return rc;
}

/*
 * What a batch of k calls costs beyond its kernels' own time, per call: the
 * launch gap in front of each kernel and the batch's fixed cost (the start
 * event to the first kernel, the last kernel to the end event) spread over
 * k. Measured as the queue timer measures a call, on batches of k empty
 * kernels whose own time the tracer reports: (batch time - the kernels'
 * traced time) / k, the median over QUEUE_CAL_BATCHES batches. Each batch
 * must show exactly k kernels to the tracer (spans are attributed to
 * batches by their start, as the trace timer attributes them to calls).
 * With `pairs` (cold L2) each empty kernel is timed between its own pair
 * after its flush, as the calls are: the calibration is then the gap in
 * front of a kernel and the end event's time, with no flush in it.
 * The batches' times come from as many batches again with the tracer off,
 * as the calls' are: only the kernels' own time is taken from the traced
 * ones, so that what tracing adds to a launch is not subtracted from the
 * calls (the traced batches' calibration is kept for the record).
 */
static int calibrate(zlb_backend_t *b, zlb_stream_t s, long k, const zlb_flush_t *flush,
                     watchdog_t *w, zlb_event_t ev[2], zlb_event_t *pairs,
                     zlb__calibration_t *cal, int *fired, zlb_error_t *err) {
  double batch_ms[QUEUE_CAL_BATCHES], untraced_ms[QUEUE_CAL_BATCHES];
  uint64_t after[QUEUE_CAL_BATCHES];
  zlb_trace_span_t *sp = NULL;
  size_t nsp = 0;
  zlb_error_t e2 = ZLB_ERROR_INIT;
  int rc = 0, rc2;

  *fired = 0;
  /* One untraced launch first: the kernel's module loads, its code is
   * resident, before anything is timed. */
  if ((rc = zlb__empty_call(b, s, err)) || (rc = b->v->stream_sync(b, s, err)))
    return rc;
  if ((rc = b->v->trace_begin(b, err)))
    return rc;
  rc = empty_batches(b, s, k, flush, w, ev, pairs, batch_ms, after, fired, err);
  rc2 = b->v->trace_end(b, &sp, &nsp, rc ? &e2 : err);
  if (!rc)
    rc = rc2;
  /* A batch the watchdog released: K is too deep for this launch queue,
   * as for the calls' own batches (the caller shrinks K and comes back). */
  if (rc || *fired ||
      (rc = empty_batches(b, s, k, flush, w, ev, pairs, untraced_ms, NULL, fired, err)) ||
      *fired)
    goto out;
  rc = zlb__calibration_from_spans("queue calibration", "batch", k, QUEUE_CAL_BATCHES,
                                   flush != NULL, batch_ms, untraced_ms, after, sp, nsp, cal,
                                   err);
out:
  free(sp);
  return rc;
}

/* K after a batch the watchdog released: a queue too shallow for the batch
 * needs a much smaller one. */
static long shrink(long k) { return k / QUEUE_SHRINK > 1 ? k / QUEUE_SHRINK : 1; }

static int hold_timeout(zlb_graph_failure_t *fail, int invalid, double timeout_ms, long k,
                        zlb_error_t *err) {
  return refuse(fail, "HOLD_TIMEOUT", err,
                "the watchdog released %d holds after %.0f ms each (the last of %ld calls): "
                "the calls block while the stream is held",
                invalid, timeout_ms, k);
}

/* The calibration at *k; a calibration batch the watchdog released counts
 * as a released batch of the measurement's (*invalid) and shrinks *k. */
static int calibrate_at(zlb_backend_t *b, zlb_stream_t s, long *k, const zlb_flush_t *flush,
                        watchdog_t *w, zlb_event_t ev[2], zlb_event_t *pairs,
                        zlb__calibration_t *cal, int *invalid, zlb_graph_failure_t *fail,
                        zlb_error_t *err) {
  for (;;) {
    int fired, rc = calibrate(b, s, *k, flush, w, ev, pairs, cal, &fired, err);
    if (rc || !fired)
      return rc;
    if (++*invalid >= QUEUE_MAX_INVALID)
      return hold_timeout(fail, *invalid, w->timeout_ms, *k, err);
    *k = shrink(*k);
  }
}

/* ---- cold L2 ------------------------------------------------------------------ */

typedef struct flush_ctx {
  zlb_backend_t *b;
  const zlb_flush_t *f;
} flush_ctx_t;

static int flush_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  flush_ctx_t *c = ctx;
  return c->b->v->memset_async(c->b, c->f->buf, 0, c->f->bytes, s, err);
}

/*
 * Cold L2 (o->l2_cold, docs/timing.md "Cold L2"): `n` batches of `k`
 * flushes alone, held and timed as the calls' batches are; *ms is the
 * median batch / k: one flush's time, with its share of the batch's fixed
 * cost, which is what a cold sample holds beyond its call. A batch the
 * watchdog releases is discarded (at most QUEUE_MAX_INVALID, counted in
 * *invalid with the calls' own).
 */
static int flush_only_ms(zlb_backend_t *b, zlb_stream_t s, const zlb_flush_t *f, long k,
                         size_t n, watchdog_t *w, zlb_event_t ev[2], double *ms, int *invalid,
                         zlb_graph_failure_t *fail, zlb_error_t *err) {
  flush_ctx_t c = {b, f};
  zlb_launch_t fl = {.call = flush_call, .ctx = &c};
  zlb__samples_t fs = {NULL, 0, 0};
  int rc = 0;
  while (fs.n < n) {
    zlb_error_t cause = ZLB_ERROR_INIT;
    double bm = 0.0;
    int fired, hold_failed;
    if ((rc = run_batch(b, s, &fl, k, NULL, w, ev, NULL, &bm, &fired, &hold_failed, &cause))) {
      if (hold_failed)
        rc = zlb__classify(b, "queue", ZLB_PHASE_HOLD, &cause, fail, err);
      else
        *err = cause;
      break;
    }
    if (!fired) {
      zlb__samples_push(&fs, bm / (double)k);
      continue;
    }
    if (++*invalid >= QUEUE_MAX_INVALID) {
      rc = refuse(fail, "HOLD_TIMEOUT", err,
                  "the watchdog released %d holds after %.0f ms each (the last a batch of "
                  "%ld L2 flushes)",
                  *invalid, w->timeout_ms, k);
      break;
    }
  }
  if (!rc)
    *ms = zlb_stats_median(fs.v, fs.n);
  zlb__samples_release(&fs);
  return rc;
}

int zlb_time_queue(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                   const zlb_timing_opts_t *o, zlb_measurement_t *m,
                   zlb_graph_failure_t *fail, zlb_error_t *err) {
  zlb_event_t ev[2] = {NULL, NULL}, *pairs = NULL;
  zlb__samples_t smp = {NULL, 0, 0};
  zlb__stopper_t st;
  watchdog_t w;
  double est_ms = 0.0, t0 = zlb_now_s();
  zlb__calibration_t cal = {0.0, 0.0};
  long k, k0, kmax, n_warm, budget, npairs = 0;
  size_t n;
  int rc = 0, invalid = 0, dog = 0;
  zlb_flush_t *cold = o->l2_cold ? o->l2_flush : NULL;
  /* Cold and calibrated: each call between its own event pair. */
  int per_call = cold && o->queue_calibrate;

  memset(fail, 0, sizeof(*fail));
  m->timer = ZLB_TIMER_QUEUE;
  if (o->l2_cold && (!cold || !cold->buf || !cold->bytes))
    return zlb_error_set(err, ZLB_EINVAL,
                         "queue timer: cold L2 needs a flush buffer (timing option l2_flush), "
                         "and none was given");
  if (!b->v->stream_hold || !b->v->stream_release)
    return refuse(fail, "UNSUPPORTED", err, "backend '%s' cannot hold a stream",
                  b->desc->name);
  if (l->host_sync)
    return refuse(fail, "HOST_SYNC", err,
                  "the call waits for the device from the host: on a held stream it "
                  "would wait for its own release");
  if (o->queue_max_launches < 1 || o->queue_max_launches > ZLB_QUEUE_LAUNCHES_LIMIT ||
      !(o->queue_timeout_ms > 0))
    return zlb_error_set(err, ZLB_EINVAL,
                         "queue timer: max launches %d is outside 1..%d or timeout %g ms "
                         "is not positive",
                         o->queue_max_launches, ZLB_QUEUE_LAUNCHES_LIMIT, o->queue_timeout_ms);

  /* A runtime without the calls a hold needs (an older driver) says so
   * before any call is made: the same marker as a backend without holds. */
  {
    zlb_hold_t h = NULL;
    zlb_error_t probe = ZLB_ERROR_INIT;
    if (b->v->stream_hold(b, s, &h, &probe)) {
      if (probe.code == ZLB_EUNSUPPORTED && !probe.vendor_code)
        return refuse(fail, "UNSUPPORTED", err, "%s", probe.msg);
      rc = zlb__classify(b, "queue", ZLB_PHASE_HOLD, &probe, fail, err);
      goto out;
    }
    b->v->stream_release(b, h);
  }
  /* Calibrating needs an empty kernel and a tracer: an error (not a
   * fallback), since the caller asked for calibrated numbers. */
  if (o->queue_calibrate && (rc = calibration_ready(b, err)))
    goto out;

  /* Warm-up and estimate as the graph timer's: no flush, since the calls
   * of a batch run back to back with L2 warm; cold, the estimate is of a
   * flushed call, flush included, as a batch's (flush; call) pairs are. */
  if ((rc = zlb__estimate(b, s, l, cold, &est_ms, NULL, err)))
    goto out;
  m->estimate_ms = est_ms;
  zlb__counts(o, est_ms, QUEUE_MAX_BATCHES, &n_warm, &budget);
  if ((rc = zlb__warm_calls(l, s, n_warm, m, err)))
    goto out;

  /* K calls per batch: enough that one batch lasts queue_batch_ms (the
   * event pair's resolution and the release amortised), no more than the
   * launch queue holds. Cold and calibrated, each call also takes two
   * events besides its flush: twice the queue entries of a cold call, so
   * half the calls, lest most batches outgrow the queue and the watchdog. */
  kmax = per_call ? (o->queue_max_launches + 1) / 2 : o->queue_max_launches;
  k = est_ms > 1e-9 ? (long)ceil(o->queue_batch_ms / est_ms) : kmax;
  if (k < 1)
    k = 1;
  if (k > kmax)
    k = kmax;
  k0 = k;

  if ((rc = b->v->event_create(b, &ev[0], err)) || (rc = b->v->event_create(b, &ev[1], err)))
    goto out;
  /* An event pair for each call of a batch (K only shrinks from here), so
   * that no flush is inside a timed interval. */
  if (per_call) {
    pairs = zlb_xcalloc((size_t)(2 * k), sizeof(*pairs));
    for (; npairs < 2 * k; npairs++)
      if ((rc = b->v->event_create(b, &pairs[npairs], err)))
        goto out;
  }
  if (watchdog_start(&w, b, o->queue_timeout_ms)) {
    rc = refuse(fail, "NO_WATCHDOG", err,
                "cannot start the watchdog thread, and a hold without one could hang");
    goto out;
  }
  dog = 1;
  if (o->queue_calibrate &&
      (rc = calibrate_at(b, s, &k, cold, &w, ev, pairs, &cal, &invalid, fail, err)))
    goto out;

  budget = est_ms > 1e-9 ? (long)(o->rep_ms / (est_ms * (double)k)) : 0;
  if (budget < o->queue_min_batches)
    budget = o->queue_min_batches;
  if (budget > QUEUE_MAX_BATCHES)
    budget = QUEUE_MAX_BATCHES;
  zlb__stopper_init(&st, o);
  st.calls_per_sample = (double)k;
  while ((n = zlb__stopper_next(&st, &smp, est_ms * (double)k, (size_t)budget,
                                QUEUE_MAX_BATCHES))) {
    /* n timed batches: a discarded one does not count (at most
     * QUEUE_MAX_INVALID of them, then the shape is refused). */
    for (size_t got = 0; got < n;) {
      zlb_error_t cause = ZLB_ERROR_INIT;
      double ms = 0.0;
      int fired, hold_failed, due;
      if ((due = rc = zlb__check_due(l, smp.n, s, err)) < 0)
        goto out;
      if ((rc = run_batch(b, s, l, k, cold, &w, ev, pairs, &ms, &fired, &hold_failed, &cause))) {
        if (hold_failed)
          rc = zlb__classify(b, "queue", ZLB_PHASE_HOLD, &cause, fail, err);
        else
          *err = cause;
        goto out;
      }
      if (due && (rc = l->integrity(l->ctx, 1, smp.n, s, err)))
        goto out;
      if (!fired) {
        if (due)
          continue; /* the --integrity batch is not a sample */
        zlb__samples_push(&smp, ms / (double)k - cal.ms);
        got++;
        continue;
      }
      /* The batch's enqueues outlasted the timeout: most likely a launch
       * queue shallower than K calls. Discard it and try smaller batches. */
      if (++invalid >= QUEUE_MAX_INVALID) {
        rc = hold_timeout(fail, invalid, o->queue_timeout_ms, k, err);
        goto out;
      }
      k = shrink(k);
      /* The fixed cost of a batch weighs more per call in a smaller one. */
      if (o->queue_calibrate &&
          (rc = calibrate_at(b, s, &k, cold, &w, ev, pairs, &cal, &invalid, fail, err)))
        goto out;
      /* Samples from here are means of fewer calls (those before count
       * for less than they were: the stop errs on measuring more). */
      st.calls_per_sample = (double)k;
    }
  }
  m->sample_s = zlb_now_s() - st.t0;
  if (o->stop == ZLB_STOP_NOISE)
    m->noise_met = st.met;
  if (cold && smp.n) {
    /* The flush alone, in batches of the same K. Uncalibrated, as many
     * batches as samples, and subtracted from every sample (a value not
     * above zero is an error, not a number). Calibrated, no flush was in
     * a timed pair, the calls' or the calibration's: the flush
     * (QUEUE_CAL_BATCHES batches) is the row's record only. */
    size_t nf = o->queue_calibrate ? QUEUE_CAL_BATCHES : smp.n;
    double fms = 0.0;
    if ((rc = flush_only_ms(b, s, cold, k, nf, &w, ev, &fms, &invalid, fail, err)))
      goto out;
    if (o->queue_calibrate)
      zlb__l2_record(m, fms, cold);
    else if ((rc = zlb__l2_subtract("queue", o, &smp, fms, cold, m, err)))
      goto out;
  }
  m->queue_launches = (int)k;
  m->batches = (int)smp.n;
  m->invalid_batches = invalid;
  if (invalid)
    snprintf(m->note, sizeof(m->note),
             "queue: %d batch(es) released by the watchdog after %.0f ms and discarded; "
             "K reduced from %ld to %ld",
             invalid, o->queue_timeout_ms, k0, k);
  if (o->queue_calibrate) {
    /* Checked before anything is reported: a failed row keeps no value. */
    double v = zlb__subtract_pick(o, &smp, 0.0); /* each sample's was taken */
    if (!(v > 0.0)) {
      rc = zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "queue calibration: the call measured %.3f us per call, no more "
                         "than an empty kernel's launch cost (%.3f us): nothing is left to "
                         "report",
                         (v + cal.ms) * 1e3, cal.ms * 1e3);
      goto out;
    }
    m->queue_calibrated = 1;
    m->queue_calibration_ms = cal.ms;
    m->calibration_traced_ms = cal.traced_ms;
    m->queue_call_events = pairs != NULL;
  }
  if ((rc = zlb__summarize(o, &smp, m, &m->value_ms, err)))
    goto out;
  m->ncalls = 1;
  m->call_values = zlb_xrealloc(m->call_values, sizeof(double));
  m->call_values[0] = m->value_ms;
out:
  if (dog)
    watchdog_stop(&w);
  for (int i = 0; i < 2; i++)
    if (ev[i])
      b->v->event_destroy(b, ev[i]);
  for (long i = 0; i < npairs; i++)
    b->v->event_destroy(b, pairs[i]);
  free(pairs);
  zlb__samples_release(&smp);
  m->wall_s = zlb_now_s() - t0;
  return rc;
}
