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
 */
static int run_batch(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l, long k,
                     watchdog_t *w, zlb_event_t ev[2], double *ms, int *fired,
                     int *hold_failed, zlb_error_t *err) {
  zlb_hold_t h = NULL;
  int rc;
  *fired = 0;
  *hold_failed = 0;
  if ((rc = b->v->stream_hold(b, s, &h, err))) {
    *hold_failed = 1;
    return rc;
  }
  watchdog_arm(w, h);
  rc = b->v->event_record(b, ev[0], s, err);
  for (long i = 0; i < k && !rc; i++)
    rc = l->call(l->ctx, s, err);
  if (!rc)
    rc = b->v->event_record(b, ev[1], s, err);
  *fired = watchdog_disarm(w);
  /* On every path: a hold left in force would stall the stream for good. */
  b->v->stream_release(b, h);
  if (rc || (rc = b->v->stream_sync(b, s, err)) || *fired)
    return rc;
  return b->v->event_elapsed(b, ev[0], ev[1], ms, err);
}

int zlb_time_queue(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                   const zlb_timing_opts_t *o, zlb_measurement_t *m,
                   zlb_graph_failure_t *fail, zlb_error_t *err) {
  zlb_event_t ev[2] = {NULL, NULL};
  zlb__samples_t smp = {NULL, 0, 0};
  zlb__stopper_t st;
  watchdog_t w;
  double est_ms = 0.0, t0 = zlb_now_s();
  long k, k0, n_warm, budget;
  size_t n;
  int rc = 0, invalid = 0, dog = 0;

  memset(fail, 0, sizeof(*fail));
  m->timer = ZLB_TIMER_QUEUE;
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

  /* Warm-up and estimate as the graph timer's: no flush, since the calls
   * of a batch run back to back with L2 warm. */
  if ((rc = zlb__estimate(b, s, l, NULL, &est_ms, err)))
    goto out;
  m->estimate_ms = est_ms;
  zlb__counts(o, est_ms, QUEUE_MAX_BATCHES, &n_warm, &budget);
  for (long i = 0; i < n_warm; i++)
    if ((rc = l->call(l->ctx, s, err)))
      goto out;

  /* K calls per batch: enough that one batch lasts queue_batch_ms (the
   * event pair's resolution and the release amortised), no more than the
   * launch queue holds. */
  k = est_ms > 1e-9 ? (long)ceil(o->queue_batch_ms / est_ms) : o->queue_max_launches;
  if (k < 1)
    k = 1;
  if (k > o->queue_max_launches)
    k = o->queue_max_launches;
  k0 = k;

  if ((rc = b->v->event_create(b, &ev[0], err)) || (rc = b->v->event_create(b, &ev[1], err)))
    goto out;
  if (watchdog_start(&w, b, o->queue_timeout_ms)) {
    rc = refuse(fail, "NO_WATCHDOG", err,
                "cannot start the watchdog thread, and a hold without one could hang");
    goto out;
  }
  dog = 1;

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
      int fired, hold_failed;
      if ((rc = run_batch(b, s, l, k, &w, ev, &ms, &fired, &hold_failed, &cause))) {
        if (hold_failed)
          rc = zlb__classify(b, "queue", ZLB_PHASE_HOLD, &cause, fail, err);
        else
          *err = cause;
        goto out;
      }
      if (!fired) {
        zlb__samples_push(&smp, ms / (double)k);
        got++;
        continue;
      }
      /* The batch's enqueues outlasted the timeout: most likely a launch
       * queue shallower than K calls. Discard it and try smaller batches. */
      if (++invalid >= QUEUE_MAX_INVALID) {
        rc = refuse(fail, "HOLD_TIMEOUT", err,
                    "the watchdog released %d holds after %.0f ms each (the last of %ld "
                    "calls): the calls block while the stream is held",
                    invalid, o->queue_timeout_ms, k);
        goto out;
      }
      k = k / QUEUE_SHRINK > 1 ? k / QUEUE_SHRINK : 1;
      /* Samples from here are means of fewer calls (those before count
       * for less than they were: the stop errs on measuring more). */
      st.calls_per_sample = (double)k;
    }
  }
  if (o->stop == ZLB_STOP_NOISE)
    m->noise_met = st.met;
  m->queue_launches = (int)k;
  m->batches = (int)smp.n;
  m->invalid_batches = invalid;
  if (invalid)
    snprintf(m->note, sizeof(m->note),
             "queue: %d batch(es) released by the watchdog after %.0f ms and discarded; "
             "K reduced from %ld to %ld",
             invalid, o->queue_timeout_ms, k0, k);
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
  zlb__samples_release(&smp);
  m->wall_s = zlb_now_s() - t0;
  return rc;
}
