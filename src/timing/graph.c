/* The graph timer: capture K launches on a side stream, replay, divide;
 * classify any failure as refused, fatal or poisoned (docs/timing.md). The
 * per-shape fallback to direct timing that acts on the verdict is in
 * fallback.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "timing_int.h"

/* Timed replays per measurement at most: each replay already averages K
 * launches, and the events of a chunk are all created up front. */
#define GRAPH_MAX_REPLAYS 1000

zlb_timer_kind_t zlb_timer_resolve(zlb_timer_kind_t requested, unsigned caps) {
  /* Graphs first: one replay is one launch for K calls, the least host
   * work per sample. Holding a stream hides launch latency as well where
   * graphs are not reliable. */
  if (requested == ZLB_TIMER_AUTO)
    return (caps & ZLB_CAP_GRAPH)  ? ZLB_TIMER_GRAPH
           : (caps & ZLB_CAP_HOLD) ? ZLB_TIMER_QUEUE
                                   : ZLB_TIMER_DIRECT;
  if (requested == ZLB_TIMER_GRAPH && !(caps & ZLB_CAP_GRAPH))
    return ZLB_TIMER_DIRECT;
  return requested;
}

int zlb__classify(zlb_backend_t *b, const char *what, zlb_graph_phase_t phase,
                  const zlb_error_t *cause, zlb_graph_failure_t *fail, zlb_error_t *err) {
  zlb_verdict_t v = ZLB_VERDICT_NONE;
  zlb_error_t probe = ZLB_ERROR_INIT;

  fail->phase = phase;
  fail->error = *cause;
  if (cause->vendor_code) {
    v = zlb_backend_classify(b->desc, cause->vendor_code);
    zlb_strlcpy(fail->reason, cause->vendor_name[0]
                                  ? cause->vendor_name
                                  : zlb_backend_error_name(b, cause->vendor_code),
                sizeof(fail->reason));
  } else {
    /* A caller's capture hook may name its failure without a vendor code
     * (an exception's type); the marker then says that, not the ZLB code. */
    zlb_strlcpy(fail->reason, cause->vendor_name[0] ? cause->vendor_name : zlb_err_name(cause->code),
                sizeof(fail->reason));
    if (cause->code == ZLB_EFATAL)
      v = ZLB_VERDICT_FATAL;
    else if (cause->code == ZLB_EPOISONED)
      v = ZLB_VERDICT_POISONED;
  }
  if (v != ZLB_VERDICT_FATAL && v != ZLB_VERDICT_POISONED) {
    v = ZLB_VERDICT_REFUSED;
    if (b->v->health_probe && b->v->health_probe(b, &probe))
      v = ZLB_VERDICT_POISONED;
  }
  fail->verdict = v;
  switch (v) {
  case ZLB_VERDICT_FATAL:
    return zlb_error_vendor(err, ZLB_EFATAL, cause->vendor_code, fail->reason,
                            "device fault during %s %s: %s", what,
                            zlb_phase_name(phase), cause->msg);
  case ZLB_VERDICT_POISONED:
    return zlb_error_vendor(err, ZLB_EPOISONED, cause->vendor_code, fail->reason,
                            "%s %s failed (%s) and left the context unusable%s%s", what,
                            zlb_phase_name(phase), cause->msg,
                            probe.msg[0] ? ": health probe: " : "", probe.msg);
  default:
    return zlb_error_vendor(err, ZLB_EREFUSED, cause->vendor_code, fail->reason,
                            "%s %s refused: %s", what, zlb_phase_name(phase),
                            cause->msg);
  }
}

/* `n` timed replays of a graph of `k` launches; each sample is replay / k. */
static int replay_chunk(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t side, size_t n,
                        long k, zlb__samples_t *out, const zlb_launch_t *l, zlb_error_t *err) {
  zlb_event_t *ev = zlb_xcalloc(2 * n, sizeof(*ev));
  double ms;
  int rc = 0, due = 0;
  size_t checked = n; /* the --integrity replay, not kept (n: none) */
  for (size_t i = 0; i < 2 * n && !rc; i++)
    rc = b->v->event_create(b, &ev[i], err);
  for (size_t i = 0; i < n && !rc; i++) {
    if ((due = rc = zlb__check_due(l, out->n + i, side, err)) < 0)
      break;
    if ((rc = b->v->event_record(b, ev[2 * i], side, err)) ||
        (rc = b->v->graph_launch(b, x, side, err)) ||
        (rc = b->v->event_record(b, ev[2 * i + 1], side, err)))
      break;
    if (due && !(rc = l->integrity(l->ctx, 1, out->n + i, side, err)))
      checked = i;
  }
  if (!rc)
    rc = b->v->stream_sync(b, side, err);
  for (size_t i = 0; i < n && !rc; i++)
    if (!(rc = b->v->event_elapsed(b, ev[2 * i], ev[2 * i + 1], &ms, err)) && i != checked)
      zlb__samples_push(out, ms / (double)k);
  for (size_t i = 0; i < 2 * n; i++)
    if (ev[i])
      b->v->event_destroy(b, ev[i]);
  free(ev);
  return rc;
}

/*
 * The budget rule's replays: `planned` of them, worked out from the
 * estimate, but no more than rep_ms of replay time. An eighth first (at
 * least graph_min_replays), then as many as still fit at their median time.
 * Sustained replays can run slower than the estimate's few calls did (an
 * H200 GEMM under its power cap: +34 %); without the check the measurement
 * would run that much longer than its budget.
 */
static size_t budget_next(const zlb_timing_opts_t *o, const zlb__samples_t *s, long k,
                          size_t planned) {
  size_t first = planned / 8, left;
  double spent = 0, per;
  /* Triton's counts are counts: all of them, as do_bench runs its n_repeat. */
  if (o->triton_counts)
    return s->n ? 0 : planned;
  if (first < (size_t)o->graph_min_replays)
    first = (size_t)o->graph_min_replays;
  if (first > planned)
    first = planned;
  if (!s->n)
    return first;
  if (s->n != first)
    return 0; /* the second chunk was the last */
  for (size_t i = 0; i < s->n; i++)
    spent += s->v[i] * (double)k;
  left = planned - s->n;
  /* A replay's usual time: one slow replay does not cut the rest short. */
  per = zlb_stats_median(s->v, s->n) * (double)k;
  if (!left || !(per > 0) || spent >= o->rep_ms)
    return 0;
  if ((o->rep_ms - spent) / per < (double)left)
    left = (size_t)((o->rep_ms - spent) / per + 0.5);
  return left;
}

/*
 * Triton's counts (o->triton_counts): the calls do_bench would make, from
 * an estimate of one call with its L2 flush (est_ms + count_flush_ms), as
 * do_bench's estimate is: n_warm = warmup / that, n_rep = rep / that. The
 * replays hold the n_rep calls, in at least min(n_rep, graph_min_replays)
 * replays: K is cut to n_rep / that floor where the replay target asked for
 * more (a floor of full replays would make many times n_rep calls for a
 * small rep), and a call longer than rep / graph_min_replays gets
 * do_bench's few samples, not a floor of replays several times its budget.
 * Replays run without the flush, so the measurement takes less device time
 * than do_bench's by n_rep flushes.
 */
static long triton_floor(const zlb_timing_opts_t *o, long n_rep) {
  return n_rep < o->graph_min_replays ? n_rep : o->graph_min_replays;
}

static long triton_replays(const zlb_timing_opts_t *o, long n_rep, long k) {
  long replays = (n_rep + k - 1) / k, floor = triton_floor(o, n_rep);
  if (replays < floor)
    replays = floor;
  if (replays > GRAPH_MAX_REPLAYS)
    replays = GRAPH_MAX_REPLAYS;
  return replays < 1 ? 1 : replays;
}

/* The graph timer's eager warm-up calls: the direct timer's count `n_warm`
 * less the estimate's `est_calls` and the upload replay's `k`. */
static long graph_warm_calls(long n_warm, long est_calls, long k) {
  long left = n_warm - est_calls - k;
  /* Never none when the rule asked for a warm-up: one eager call after the
   * estimate, as the direct timer's smallest warm-up. */
  return left >= 1 ? left : (n_warm >= 1 ? 1 : 0);
}

/*
 * Cold L2 (o->l2_cold, docs/timing.md "Cold L2"): the flush alone, timed as
 * the calls were. A graph of the same `k` flushes (the backend's memset of
 * the flush buffer) is captured on `side`, uploaded and replayed `n` times;
 * *ms is the median replay / k: one flush's time, with its share of the
 * replay's own overhead, which is what a sample of the cold graph holds
 * beyond its calls. *phase says where a failure happened.
 */
static int flush_only_ms(zlb_backend_t *b, zlb_stream_t side, const zlb_flush_t *f, long k,
                         size_t n, double *ms, zlb_graph_phase_t *phase, zlb_error_t *err) {
  static const zlb_launch_t none; /* no --integrity hook on flushes */
  zlb_graph_t g = NULL;
  zlb_graph_exec_t x = NULL;
  zlb__samples_t fs = {NULL, 0, 0};
  zlb_error_t ignored = ZLB_ERROR_INIT;
  int rc, rc2;
  *phase = ZLB_PHASE_CAPTURE;
  if ((rc = b->v->capture_begin(b, side, err)))
    return rc;
  for (long i = 0; i < k && !rc; i++)
    rc = b->v->memset_async(b, f->buf, 0, f->bytes, side, err);
  rc2 = b->v->capture_end(b, side, &g, rc ? &ignored : err);
  if (!rc)
    rc = rc2;
  if (rc)
    goto out;
  *phase = ZLB_PHASE_INSTANTIATE;
  if ((rc = b->v->graph_instantiate(b, g, &x, err)))
    goto out;
  *phase = ZLB_PHASE_REPLAY;
  if ((rc = b->v->graph_launch(b, x, side, err)) || (rc = b->v->stream_sync(b, side, err)) ||
      (rc = replay_chunk(b, x, side, n, k, &fs, &none, err)))
    goto out;
  *ms = fs.n ? zlb_stats_median(fs.v, fs.n) : 0.0;
out:
  zlb__samples_release(&fs);
  if (x)
    b->v->graph_exec_destroy(b, x);
  if (g)
    b->v->graph_destroy(b, g);
  return rc;
}

/* ---- cold L2, each call between its own event nodes (o->graph_calibrate) ---- */

/* Replays of the calibration graph, traced and again untraced: their
 * median is used. */
#define GRAPH_CAL_REPLAYS 9

int zlb_graph_calibration_check(const zlb_backend_vtbl_t *v, const char *backend,
                                zlb_error_t *err) {
  const char *lacks = !v || !v->capture_begin ? "has no graphs"
                      : !v->event_record_node ? "cannot record a timed event as a node of a graph"
                      : !v->launch_empty      ? "has no empty kernel to measure a launch with"
                      : !v->trace_begin || !v->trace_now || !v->trace_end
                          ? "has no kernel activity tracer to tell an empty kernel's own time "
                            "from its launch's"
                          : NULL;
  if (lacks)
    return zlb_error_set(err, ZLB_EUNSUPPORTED, "graph calibration: backend '%s' %s", backend,
                         lacks);
  return 0;
}

/* One replay of a graph whose calls sit between the event nodes `pairs`
 * (2k): the replay is synchronised (the next would record the same nodes
 * again) and *ms is the sum of its k pairs. */
static int replay_pairs(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t side,
                        const zlb_event_t *pairs, long k, double *ms, zlb_error_t *err) {
  int rc;
  *ms = 0.0;
  if ((rc = b->v->graph_launch(b, x, side, err)) || (rc = b->v->stream_sync(b, side, err)))
    return rc;
  for (long i = 0; i < k; i++) {
    double one = 0.0;
    if ((rc = b->v->event_elapsed(b, pairs[2 * i], pairs[2 * i + 1], &one, err)))
      return rc;
    *ms += one;
  }
  return 0;
}

/* `n` timed replays, each sample its replay's mean pair (replay_chunk's
 * form with the calls' own event nodes; the --integrity replay is not
 * kept). */
static int replay_pairs_chunk(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t side,
                              size_t n, long k, const zlb_event_t *pairs, zlb__samples_t *out,
                              const zlb_launch_t *l, zlb_error_t *err) {
  size_t base = out->n;
  for (size_t i = 0; i < n; i++) {
    double ms = 0.0;
    int due, rc;
    if ((due = zlb__check_due(l, base + i, side, err)) < 0)
      return due;
    if ((rc = replay_pairs(b, x, side, pairs, k, &ms, err)))
      return rc;
    /* The checked replay's sample is not kept (its outputs were read). */
    if (due && (rc = l->integrity(l->ctx, 1, base + i, side, err)))
      return rc;
    if (!due)
      zlb__samples_push(out, ms / (double)k);
  }
  return 0;
}

/* The k calls of a capture in progress on `side`: each after a flush of
 * `f` (cold L2; NULL: none) and, calibrated, between its own event nodes
 * `pairs` (2k; NULL: none). */
static int enqueue_calls(zlb_backend_t *b, zlb_stream_t side, const zlb_launch_t *l,
                         const zlb_flush_t *f, long k, const zlb_event_t *pairs,
                         zlb_error_t *err) {
  int rc = 0;
  for (long i = 0; i < k && !rc; i++)
    if (!(rc = f ? b->v->memset_async(b, f->buf, 0, f->bytes, side, err) : 0) &&
        !(rc = pairs ? b->v->event_record_node(b, pairs[2 * i], side, err) : 0) &&
        !(rc = l->call(l->ctx, side, err)))
      rc = pairs ? b->v->event_record_node(b, pairs[2 * i + 1], side, err) : 0;
  return rc;
}

/* Capture on `side` k times (flush; event node; call; event node) with
 * the nodes `pairs`; the capture is ended on every path. */
static int capture_pairs(zlb_backend_t *b, zlb_stream_t side, const zlb_launch_t *l,
                         const zlb_flush_t *f, long k, const zlb_event_t *pairs, zlb_graph_t *g,
                         zlb_error_t *err) {
  zlb_error_t ignored = ZLB_ERROR_INIT;
  int rc, rc2;
  if ((rc = b->v->capture_begin(b, side, err)))
    return rc;
  rc = enqueue_calls(b, side, l, f, k, pairs, err);
  rc2 = b->v->capture_end(b, side, g, rc ? &ignored : err);
  return rc ? rc : rc2;
}

/*
 * The gap a call's event nodes hold beyond its kernels: a graph of k
 * (flush; node; empty kernel; node), replayed GRAPH_CAL_REPLAYS times with
 * the tracer on for the empty kernels' own time and as many times with it
 * off for the pairs' (as the calls' replays run), (pairs - the traced
 * empty kernels) / k, the median. A failure of the graph's own steps is
 * left in `cause` with *phase for the caller to classify; the tracer's
 * and the calibration's are errors.
 */
static int graph_calibration(zlb_backend_t *b, zlb_stream_t side, const zlb_flush_t *f, long k,
                             const zlb_event_t *pairs, zlb__calibration_t *cal,
                             zlb_graph_phase_t *phase, zlb_error_t *cause, zlb_error_t *err) {
  zlb_launch_t el = {.call = zlb__empty_call, .ctx = b};
  zlb_graph_t g = NULL;
  zlb_graph_exec_t x = NULL;
  double pair_ms[GRAPH_CAL_REPLAYS], untraced_ms[GRAPH_CAL_REPLAYS];
  uint64_t after[GRAPH_CAL_REPLAYS];
  zlb_trace_span_t *sp = NULL;
  size_t nsp = 0;
  zlb_error_t e2 = ZLB_ERROR_INIT;
  int rc, traced = 0;

  *phase = ZLB_PHASE_CAPTURE;
  /* The empty kernel's module loads before the capture (a load inside it
   * would break it), and its first replay is not timed. */
  if ((rc = zlb__empty_call(b, side, cause)) || (rc = b->v->stream_sync(b, side, cause)) ||
      (rc = capture_pairs(b, side, &el, f, k, pairs, &g, cause)))
    goto out;
  *phase = ZLB_PHASE_INSTANTIATE;
  if ((rc = b->v->graph_instantiate(b, g, &x, cause)))
    goto out;
  *phase = ZLB_PHASE_REPLAY;
  if ((rc = b->v->graph_launch(b, x, side, cause)) || (rc = b->v->stream_sync(b, side, cause)))
    goto out;
  if ((rc = b->v->trace_begin(b, err))) {
    *phase = ZLB_PHASE_NONE;
    goto out;
  }
  traced = 1;
  for (int j = 0; j < GRAPH_CAL_REPLAYS; j++) {
    if ((rc = replay_pairs(b, x, side, pairs, k, &pair_ms[j], cause)))
      goto out;
    if ((rc = b->v->trace_now(b, &after[j], err))) {
      *phase = ZLB_PHASE_NONE;
      goto out;
    }
  }
  traced = 0;
  *phase = ZLB_PHASE_NONE;
  if ((rc = b->v->trace_end(b, &sp, &nsp, err)))
    goto out;
  *phase = ZLB_PHASE_REPLAY;
  for (int j = 0; j < GRAPH_CAL_REPLAYS; j++)
    if ((rc = replay_pairs(b, x, side, pairs, k, &untraced_ms[j], cause)))
      goto out;
  *phase = ZLB_PHASE_NONE;
  rc = zlb__calibration_from_spans("graph calibration", "replay", k, GRAPH_CAL_REPLAYS, 1,
                                   pair_ms, untraced_ms, after, sp, nsp, cal, err);
out:
  if (traced) {
    /* Stopped by a failure: the spans are dropped, its error stands. */
    zlb_trace_span_t *drop = NULL;
    size_t nd = 0;
    b->v->trace_end(b, &drop, &nd, &e2);
    free(drop);
  }
  free(sp);
  if (x)
    b->v->graph_exec_destroy(b, x);
  if (g)
    b->v->graph_destroy(b, g);
  return rc;
}

int zlb_time_graph(zlb_backend_t *b, zlb_stream_t caller, const zlb_launch_t *l,
                   const zlb_timing_opts_t *o, zlb_measurement_t *m,
                   zlb_graph_failure_t *fail, zlb_error_t *err) {
  zlb_stream_t side = NULL;
  zlb_graph_t g = NULL;
  zlb_graph_exec_t x = NULL;
  zlb_error_t cause = ZLB_ERROR_INIT;
  double est_ms = 0.0, t0 = zlb_now_s();
  long k, n_warm, n_rep, replays, est_calls = 0;
  int rc = 0, guarded = 0, own_graph = !l->capture;
  zlb_flush_t *cold = o->l2_cold ? o->l2_flush : NULL;
  zlb_event_t *pairs = NULL; /* calibrated: each call's event nodes (2k) */
  long npairs = 0;
  zlb__calibration_t cal = {0.0, 0.0};

  memset(fail, 0, sizeof(*fail));
  m->timer = ZLB_TIMER_GRAPH;
  if (!b->v->capture_begin)
    return zlb_error_set(err, ZLB_EUNSUPPORTED, "backend '%s' has no graphs",
                         b->desc->name);
  if (o->l2_cold && (!cold || !cold->buf || !cold->bytes))
    return zlb_error_set(err, ZLB_EINVAL,
                         "graph timer: cold L2 needs a flush buffer (timing option l2_flush), "
                         "and none was given");
  if (cold && l->capture)
    return zlb_error_set(err, ZLB_EUNSUPPORTED,
                         "graph timer: cold L2 puts a flush between the captured calls, and "
                         "a caller's capture hook records the calls itself; use the warm "
                         "graph timer or the direct timer (which flushes)");
  if (o->graph_calibrate && !cold)
    return zlb_error_set(err, ZLB_EINVAL,
                         "graph calibration times each call between its own event nodes "
                         "after its L2 flush: it needs cold L2 (the warm graph timer "
                         "subtracts nothing)");
  if (o->graph_calibrate && (rc = zlb_graph_calibration_check(b->v, b->desc->name, err)))
    return rc;

  /* The estimate first: its calls (the first one above all) finish
   * autotuning and JIT before capture, or they would land inside the graph
   * (or break it). It is the direct timer's, without a flush: graph
   * replays run L2-warm. */
  /* Cold: the estimate is of a flushed call, flush included, so that K and
   * the counts are sized from what one captured (flush; call) costs. */
  if ((rc = zlb__estimate(b, caller, l, cold, &est_ms, &est_calls, err)))
    goto out;
  m->estimate_ms = est_ms;

  /* K launches per graph: enough that one replay lasts graph_replay_ms
   * (launch and event overheads amortised), capped because huge graphs
   * crash or hang some runtimes (tritonbench caps at 1000-2048). */
  k = est_ms > 1e-9 ? (long)ceil(o->graph_replay_ms / est_ms) : o->graph_max_launches;
  if (k < 1)
    k = 1;
  if (k > o->graph_max_launches)
    k = o->graph_max_launches;
  /* The warm-up's and the samples' calls (docs/timing.md, graph steps 3
   * and 5); Triton's counts hold K to what its floor of replays allows. */
  zlb__counts(o, o->triton_counts ? est_ms + o->count_flush_ms : est_ms,
              GRAPH_MAX_REPLAYS * (long)o->graph_max_launches, &n_warm, &n_rep);
  if (o->triton_counts) {
    long floor = triton_floor(o, n_rep);
    if (k * floor > n_rep)
      k = n_rep / floor > 1 ? n_rep / floor : 1;
  }
  m->graph_launches = (int)k;

  /* The side stream waits for everything already queued on the caller's
   * stream (FlagTree #1127: the upstream timer did not). */
  if ((rc = b->v->stream_create(b, &side, err)) ||
      (rc = b->v->stream_wait(b, side, caller, err)))
    goto out;

  if (o->graph_calibrate) {
    /* The calls' event nodes, and the calibration at this K (its graph
     * reuses them): before the calls' capture, so that a calibration the
     * device refuses costs no capture of the operator. */
    zlb_graph_phase_t ph = ZLB_PHASE_NONE;
    pairs = zlb_xcalloc(2 * (size_t)k, sizeof(*pairs));
    for (; npairs < 2 * k; npairs++)
      if ((rc = b->v->event_create(b, &pairs[npairs], err)))
        goto out;
    if ((rc = graph_calibration(b, side, cold, k, pairs, &cal, &ph, &cause, err))) {
      if (ph != ZLB_PHASE_NONE)
        rc = zlb__classify(b, "graph calibration", ph, &cause, fail, err);
      goto out;
    }
  }

  if (l->rng_guard) {
    l->rng_guard(l->ctx, 1);
    guarded = 1;
  }
  if (l->capture) {
    /* The caller's framework captures (it must know about the capture) and
     * keeps the graph; the hook has ended the capture when it returns. */
    int hrc = l->capture(l->ctx, (int)k, side, &g, &cause);
    if (hrc || !g) {
      if (!cause.code)
        zlb_error_set(&cause, ZLB_EOP, "the capture hook returned %d and %s graph", hrc,
                      g ? "a" : "no");
      g = NULL; /* on failure a graph it returned stays the caller's too */
      rc = zlb__classify(b, "graph", ZLB_PHASE_CAPTURE, &cause, fail, err);
      goto out;
    }
  } else if (b->v->capture_begin(b, side, &cause)) {
    rc = zlb__classify(b, "graph", ZLB_PHASE_CAPTURE, &cause, fail, err);
    goto out;
  }
  /* Every path from here ends the capture itself, before classify(): the
   * health probe must not run on a stream that is still capturing. */
  if (!l->capture)
    enqueue_calls(b, side, l, cold, k, pairs, &cause); /* a failure is in cause */
  if (cause.code) {
    zlb_error_t ignored = ZLB_ERROR_INIT;
    b->v->capture_end(b, side, &g, &ignored);
    rc = zlb__classify(b, "graph", ZLB_PHASE_CAPTURE, &cause, fail, err);
    goto out;
  }
  if (!l->capture && b->v->capture_end(b, side, &g, &cause)) {
    rc = zlb__classify(b, "graph", ZLB_PHASE_CAPTURE, &cause, fail, err);
    goto out;
  }
  if (guarded) {
    l->rng_guard(l->ctx, 0);
    guarded = 0;
  }
  if (b->v->graph_instantiate(b, g, &x, &cause)) {
    rc = zlb__classify(b, "graph", ZLB_PHASE_INSTANTIATE, &cause, fail, err);
    goto out;
  }

  /* The warm-up, once the graph exists: a function that cannot be captured
   * (a host synchronisation) falls back to the direct timer, which warms
   * up again, so a warm-up before the capture was spent for nothing (for a
   * host-bound call, warmup_ms of calls can take ten times as long). It is
   * the direct timer's count less the calls that warm up anyway: the
   * estimate's and the K of the untimed upload replay. warmup_ms is then
   * the device time the function has run before the first sample, as long
   * as Triton's warm-up, not that plus the set-up's. The side stream's
   * replays come after it. */
  n_warm = graph_warm_calls(n_warm, est_calls, k);
  if ((rc = zlb__warm_calls(l, caller, n_warm, m, err)))
    goto out;
  if ((rc = b->v->stream_wait(b, side, caller, err)))
    goto out;

  /* First replay uploads the graph; it is not timed. */
  if (b->v->graph_launch(b, x, side, &cause) || b->v->stream_sync(b, side, &cause)) {
    rc = zlb__classify(b, "graph", ZLB_PHASE_REPLAY, &cause, fail, err);
    goto out;
  }

  {
    zlb__samples_t smp = {NULL, 0, 0};
    zlb__stopper_t st;
    size_t kk;
    if (o->triton_counts) {
      replays = triton_replays(o, n_rep, k);
    } else {
      replays = est_ms > 1e-9 ? (long)(o->rep_ms / (est_ms * (double)k)) : 0;
      if (replays < o->graph_min_replays)
        replays = o->graph_min_replays;
      if (replays > GRAPH_MAX_REPLAYS)
        replays = GRAPH_MAX_REPLAYS;
    }
    zlb__stopper_init(&st, o);
    st.calls_per_sample = (double)k;
    while ((kk = o->stop == ZLB_STOP_NOISE
                     ? zlb__stopper_next(&st, &smp, est_ms * (double)k, (size_t)replays,
                                         GRAPH_MAX_REPLAYS)
                     : budget_next(o, &smp, k, (size_t)replays))) {
      if ((rc = pairs ? replay_pairs_chunk(b, x, side, kk, k, pairs, &smp, l, &cause)
                      : replay_chunk(b, x, side, kk, k, &smp, l, &cause))) {
        if (cause.code == ZLB_EDEVICE || cause.vendor_code)
          rc = zlb__classify(b, "graph", ZLB_PHASE_REPLAY, &cause, fail, err);
        else
          *err = cause;
        zlb__samples_release(&smp);
        goto out;
      }
    }
    m->sample_s = zlb_now_s() - st.t0;
    if (o->stop == ZLB_STOP_NOISE)
      m->noise_met = st.met;
    m->replays = (int)smp.n;
    if (cold && smp.n) {
      /* The flush alone, the same K and as many replays, subtracted from
       * every sample: what is left is the call with its L2 cold.
       * Calibrated, no flush was in a timed pair: the flush alone
       * (GRAPH_CAL_REPLAYS replays) is the row's record, and the
       * calibration is what is subtracted. */
      zlb_graph_phase_t ph;
      double fms = 0.0;
      if (flush_only_ms(b, side, cold, k, pairs ? GRAPH_CAL_REPLAYS : smp.n, &fms, &ph,
                        &cause)) {
        rc = zlb__classify(b, "graph", ph, &cause, fail, err);
        zlb__samples_release(&smp);
        goto out;
      }
      if (pairs) {
        double v = zlb__subtract_pick(o, &smp, cal.ms);
        zlb__l2_record(m, fms, cold);
        if (!(v > 0.0)) {
          rc = zlb_error_set(err, ZLB_EUNSUPPORTED,
                             "graph calibration: the call measured %.3f us per call, no "
                             "more than an empty kernel's gap (%.3f us): nothing is left "
                             "to report",
                             (v + cal.ms) * 1e3, cal.ms * 1e3);
          zlb__samples_release(&smp);
          goto out;
        }
        m->graph_calibrated = 1;
        m->graph_calibration_ms = cal.ms;
        m->calibration_traced_ms = cal.traced_ms;
      } else if ((rc = zlb__l2_subtract("graph", o, &smp, fms, cold, m, err))) {
        zlb__samples_release(&smp);
        goto out;
      }
    }
    rc = zlb__summarize(o, &smp, m, &m->value_ms, err);
    zlb__samples_release(&smp);
    if (rc)
      goto out;
  }
  m->ncalls = 1;
  m->call_values = zlb_xrealloc(m->call_values, sizeof(double));
  m->call_values[0] = m->value_ms;
out:
  if (guarded)
    l->rng_guard(l->ctx, 0);
  m->wall_s = zlb_now_s() - t0;
  if (x)
    b->v->graph_exec_destroy(b, x);
  if (g && own_graph)
    b->v->graph_destroy(b, g);
  if (side) {
    /* Leave the caller's stream ordered after the replays. */
    if (rc != ZLB_EFATAL && rc != ZLB_EPOISONED) {
      zlb_error_t ignored = ZLB_ERROR_INIT;
      b->v->stream_wait(b, caller, side, &ignored);
    }
    b->v->stream_destroy(b, side);
  }
  for (long i = 0; i < npairs; i++)
    b->v->event_destroy(b, pairs[i]);
  free(pairs);
  return rc;
}
