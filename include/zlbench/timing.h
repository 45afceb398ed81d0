/* Timing engine: statistics, the direct timer (Triton's do_bench method),
 * repeat-over-calls, the graph timer, the trace timer, the launch-queue
 * timer, and per-shape fallback with failure classification
 * (docs/timing.md). */
#ifndef ZLBENCH_TIMING_H
#define ZLBENCH_TIMING_H

#include <stddef.h>

#include "zlbench/device.h"
#include "zlbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZLB_MAX_QUANTILES 8

typedef enum zlb_timer_kind {
  ZLB_TIMER_AUTO = 0, /* graph where the backend can, else queue where it can hold a stream, else direct */
  ZLB_TIMER_GRAPH,
  ZLB_TIMER_DIRECT,
  ZLB_TIMER_TRACE,    /* kernel-only time from the backend's activity tracer */
  ZLB_TIMER_QUEUE     /* K calls queued behind a held stream, one event pair per batch */
} zlb_timer_kind_t;

/* The most launches --queue-max-launches allows per batch: CUDA's queue of
 * pending launches holds about 1024 entries, and a launch into a full
 * queue blocks the host while the stream is held. */
#define ZLB_QUEUE_LAUNCHES_LIMIT 1024

/* When sampling stops. */
typedef enum zlb_stop {
  ZLB_STOP_BUDGET = 0, /* the rep_ms budget, as do_bench */
  ZLB_STOP_NOISE       /* relative spread under max_noise (NVBench's stdrel) */
} zlb_stop_t;

const char *zlb_stop_name(zlb_stop_t s);
int zlb_stop_parse(const char *s, zlb_stop_t *out);

typedef enum zlb_return_mode {
  ZLB_RET_MEDIAN = 0,
  ZLB_RET_MEAN,
  ZLB_RET_MIN,
  ZLB_RET_MAX,
  ZLB_RET_ALL
} zlb_return_mode_t;

/** The timer's name: "auto", "graph", "direct", "trace", "queue". */
const char *zlb_timer_name(zlb_timer_kind_t t);
/** A timer by name; "cupti", the trace timer's former name, is accepted as
 * an alias so that old command lines, ZL_TIMER values and results still
 * mean what they meant. ZLB_EINVAL for anything else. */
int zlb_timer_parse(const char *s, zlb_timer_kind_t *out);
const char *zlb_return_mode_name(zlb_return_mode_t m);
int zlb_return_mode_parse(const char *s, zlb_return_mode_t *out);

/* ---- statistics ------------------------------------------------------ */

/** Median of n values (average of the two middle ones for even n); n > 0. */
double zlb_stats_median(const double *v, size_t n);
double zlb_stats_mean(const double *v, size_t n);
double zlb_stats_min(const double *v, size_t n);
double zlb_stats_max(const double *v, size_t n);
/** Sample standard deviation (n - 1); 0 for n < 2. */
double zlb_stats_stdev(const double *v, size_t n);
/**
 * Quantile q in [0, 1] by linear interpolation on the sorted values
 * (Triton's rule: point = q (n - 1)). ZLB_EINVAL for q outside [0, 1].
 */
int zlb_stats_quantile(const double *v, size_t n, double q, double *out);
/** The value a return mode picks from samples (ALL: the median). */
double zlb_stats_pick(const double *v, size_t n, zlb_return_mode_t mode);

/* ---- options and results --------------------------------------------- */

typedef struct zlb_timing_opts {
  double warmup_ms;          /* warm-up budget (ms of calls) */
  double rep_ms;             /* measurement budget (ms of calls) */
  zlb_return_mode_t return_mode;
  int nquantiles;            /* > 0: report these quantiles (takes priority) */
  double quantiles[ZLB_MAX_QUANTILES];
  int repeat;                /* direct measurements per row, median over calls */
  size_t flush_bytes;        /* direct timer: L2 flush buffer size, 0 = no flush */
  int graph_max_launches;    /* cap on launches captured per graph */
  double graph_replay_ms;    /* target duration of one replay */
  int graph_min_replays;     /* at least this many timed replays */
  int max_samples;           /* cap on direct samples per call */
  zlb_stop_t stop;
  double max_noise;          /* noise stop: target relative stdev (0.005 = 0.5 %) */
  int min_samples;           /* noise stop: at least this many samples */
  double min_time_ms;        /* noise stop: at least this much measured time */
  double timeout_ms;         /* noise stop: wall-clock limit of the sampling */
  int trace_max_samples;     /* cap on traced samples per call */
  int queue_max_launches;    /* queue timer: cap on calls per batch (the launch queue's depth) */
  double queue_batch_ms;     /* queue timer: target duration of one batch */
  int queue_min_batches;     /* queue timer: at least this many timed batches */
  double queue_timeout_ms;   /* queue timer: a hold not released by then is released by the watchdog */
  int queue_calibrate;       /* queue timer: subtract the launch cost measured with an empty kernel */
  int triton_counts;         /* graph timer: warm-up and replay counts as Triton's do_bench
                              * works out its own: calls = budget / (estimate + count_flush_ms),
                              * not budgets of the calls' own time (docs/timing.md) */
  double count_flush_ms;     /* with triton_counts: one L2 flush's time (0: none) */
  int l2_cold;               /* graph and queue timers: an L2 flush before every call, its
                              * own time measured alone and subtracted (docs/timing.md,
                              * "Cold L2"); 0: L2-warm, as before */
  struct zlb_flush *l2_flush; /* with l2_cold: the buffer flushed (the caller's) */
  int graph_calibrate;       /* graph timer, cold L2: each call between its own event nodes,
                              * less the gap an empty kernel's nodes measure (docs/timing.md) */
  int trace_flush_queued;    /* trace timer: each call queued right behind its flush, not
                              * after the host has waited for the flush to finish (the
                              * kernel then starts as the graph and queue timers' cold
                              * calls do, with the flush's write-backs still draining) */
} zlb_timing_opts_t;

/** Defaults: warmup 10 ms, rep 40 ms, median, repeat 1, graph K cap 1000,
 * replay target 1 ms, at least 10 replays, 10000 samples; budget stop;
 * for the noise stop 0.5 %, 10 samples, 2 ms, 100 ms; 500 traced samples;
 * queue timer: at most 256 calls per batch, 10 ms batches, at least 10
 * batches, holds released by the watchdog after 200 ms. */
void zlb_timing_opts_default(zlb_timing_opts_t *o);

typedef struct zlb_measurement {
  zlb_timer_kind_t timer;   /* DIRECT, GRAPH, TRACE or QUEUE: what produced the value */
  double value_ms;          /* per the return mode; median over calls when repeated */
  int nquantiles;
  double quantiles[ZLB_MAX_QUANTILES];
  double *samples;          /* every sample in ms per call (owned) */
  size_t nsamples;
  double *call_values;      /* each call's value when repeated (owned) */
  int ncalls;
  double estimate_ms;       /* the pre-measurement estimate */
  int graph_launches;       /* K: launches per graph (graph timer) */
  int replays;              /* timed replays (graph timer) */
  int queue_launches;       /* K: calls per batch (queue timer; the last batch's when it was reduced) */
  int batches;              /* timed batches (queue timer) */
  int invalid_batches;      /* batches the watchdog released, not counted (queue timer) */
  double queue_calibration_ms; /* calibrated queue timer: per-call launch cost subtracted (0: none) */
  int queue_calibrated;     /* 1 when queue_calibration_ms was subtracted from every sample */
  char note[192];           /* e.g. "repeat=5 skipped: quantiles requested" */
  double noise;             /* relative stdev of the samples (NAN under 5 samples) */
  double wall_s;            /* wall time the measurement took */
  int noise_met;            /* noise stop: the target was reached (0: stabilised or timed out) */
  double sample_s;          /* wall time of the timed calls, replays or batches alone (the
                             * estimate, warm-up and capture before them excluded) */
  double attempt_s;         /* wall time of a refused graph or queue attempt before the
                             * direct timer took over (0: none); not in wall_s */
  double host_ms;           /* median host time of one call (enqueue/dispatch), over the
                             * first warm-up calls (at most 64); NAN when not measured */
  int l2_cold;              /* graph/queue: each call ran after an L2 flush (--l2 cold) */
  double l2_flush_ms;       /* with l2_cold: one flush's time, subtracted per call (cold
                             * calibrated queue: recorded only) */
  size_t l2_flush_bytes;    /* with l2_cold: the flush buffer's size */
  int queue_call_events;    /* queue timer, cold and calibrated: each call was timed between
                             * its own event pair, its flush outside it */
  int trace_flush_queued;   /* trace timer: each call was queued behind its flush, with no
                             * wait for the flush between them (opts.trace_flush_queued) */
  double graph_calibration_ms; /* calibrated cold graph timer: per-call gap subtracted */
  int graph_calibrated;     /* 1 when every call was timed between its own event nodes in
                             * the graph and graph_calibration_ms subtracted */
  double calibration_traced_ms; /* calibrated queue or graph: the calibration from its traced
                                 * batches or replays alone (the subtracted one takes their
                                 * times untraced, as the calls'); recorded only */
} zlb_measurement_t;

void zlb_measurement_release(zlb_measurement_t *m);

/* What is being timed: one call of an operator implementation. */
typedef struct zlb_launch {
  /* Enqueue one call on `s`; 0 or a negative ZLB code with err set. */
  int (*call)(void *ctx, zlb_stream_t s, zlb_error_t *err);
  /* Optional: scratch=1 before capture (switch to a scratch RNG state),
   * scratch=0 after it (restore the real one). */
  void (*rng_guard)(void *ctx, int scratch);
  void *ctx;
  /* The call waits for the device from the host (ZLB_IMPL_NO_CAPTURE):
   * on a held stream it would wait for its own release. */
  int host_sync;
  /* Optional: the caller captures the graph itself, for callers whose
   * framework must know about the capture (its allocator and RNG): capture
   * k calls on `s` and set *g to the backend's raw graph, or return a
   * negative ZLB code with err set (its vendor code, when there is one,
   * classifies the failure; vendor_name, when set, is the marker's reason).
   * The capture must be over when it returns, failed or not. The caller
   * keeps the graph: the graph timer instantiates, replays and destroys
   * its own executable, never the graph. NULL: the timer captures. */
  int (*capture)(void *ctx, int k, zlb_stream_t s, zlb_graph_t *g, zlb_error_t *err);
  /* The caller has just made a call on this case (the run's accuracy
   * check): its JIT, autotuning and kernel loading are done, so the
   * timers skip their own untimed first call. */
  int primed;
  /* Optional (--integrity, docs/integrity.md): one timed sample checked.
   * Before the timed sample `sample` (0-based, among those the timer
   * keeps) the timers call integrity(ctx, 0, sample, s, err): 1 when this
   * is the sample to check (the hook has poisoned the outputs and put
   * fresh values into the inputs), 0 when not, or a negative ZLB code.
   * After a sample it returned 1 for (a call, a replay, a batch), they
   * call integrity(ctx, 1, sample, s, err), which waits for the device and
   * compares the outputs (0, or ZLB_EMISMATCH with err set). That sample
   * is left out of the statistics. NULL: no check. */
  int (*integrity)(void *ctx, int after, size_t sample, zlb_stream_t s, zlb_error_t *err);
} zlb_launch_t;

/* A device buffer written before each direct sample to evict caches. */
typedef struct zlb_flush {
  void *buf;
  size_t bytes;
} zlb_flush_t;

/** Allocate the flush buffer on the selected device (bytes 0: no-op). */
int zlb_flush_init(zlb_flush_t *f, zlb_backend_t *b, size_t bytes, zlb_error_t *err);
void zlb_flush_release(zlb_flush_t *f, zlb_backend_t *b);
/** One flush's device time in ms (the second of two, the first having
 * touched the buffer); 0 without a buffer. */
int zlb_flush_time(zlb_backend_t *b, zlb_stream_t s, zlb_flush_t *f, double *ms,
                   zlb_error_t *err);

/**
 * One direct measurement (do_bench): one call (unless l->primed), an
 * estimate from 1 flushed call when it is 1 ms or longer, else from 5,
 * warm-up and repetition counts from the ms budgets (a zero estimate
 * gives 1 warm-up and max_samples repetitions instead of dividing by
 * zero), then per sample: flush, start event, call, end event; one
 * synchronisation at the end. Appends samples to `m`.
 */
int zlb_time_direct_once(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                         const zlb_timing_opts_t *o, zlb_flush_t *flush,
                         zlb_measurement_t *m, double *value, zlb_error_t *err);

/**
 * The direct timer with repeat-over-calls: o->repeat measurements, value =
 * median of their values. Skipped (one call, with m->note saying so) when
 * quantiles or ALL are requested, since a median of sequences is undefined.
 */
int zlb_time_direct(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                    const zlb_timing_opts_t *o, zlb_flush_t *flush,
                    zlb_measurement_t *m, zlb_error_t *err);

/**
 * The trace timer: like the direct timer (estimate, warm-up, repeat,
 * statistics), but each sample is the sum of the GPU execution times of
 * every kernel the call launched, from the backend's activity tracer; the
 * L2 flush before each call is outside the traced interval. Calls are
 * synchronised one by one so that each kernel belongs to one call.
 * ZLB_EUNSUPPORTED where the backend has no tracer.
 */
int zlb_time_trace(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                   const zlb_timing_opts_t *o, zlb_flush_t *flush,
                   zlb_measurement_t *m, zlb_error_t *err);

/** Relative standard deviation (stdev / mean), NAN for fewer than 5 values. */
double zlb_stats_noise(const double *v, size_t n);

/* Where a capture attempt failed. */
typedef enum zlb_graph_phase {
  ZLB_PHASE_NONE = 0,
  ZLB_PHASE_CAPTURE,
  ZLB_PHASE_INSTANTIATE,
  ZLB_PHASE_REPLAY,
  ZLB_PHASE_DENY,
  ZLB_PHASE_HOLD    /* the queue timer could not hold the stream, or its holds timed out */
} zlb_graph_phase_t;

const char *zlb_phase_name(zlb_graph_phase_t p);

typedef struct zlb_graph_failure {
  zlb_graph_phase_t phase;
  zlb_verdict_t verdict;
  char reason[64];           /* vendor error name (or ZLB name) */
  zlb_error_t error;         /* the failing call's error */
} zlb_graph_failure_t;

/**
 * The graph timer: explicit warm-up on the caller's stream (so autotuning
 * and JIT finish outside capture), an eager estimate, then capture of K
 * launches on a side stream that waits on the caller's stream (K sized from
 * the estimate to fill graph_replay_ms, capped at graph_max_launches), under
 * the scratch RNG state; instantiate; replay, timing each replay with
 * events; value = median (per return mode) of replay time / K.
 * On a capture failure returns ZLB_EREFUSED, ZLB_EFATAL or ZLB_EPOISONED
 * with `fail` saying phase, verdict and reason: the backend's table
 * classifies the vendor code; a non-fatal failure is POISONED when the
 * health probe then fails, else REFUSED.
 */
int zlb_time_graph(zlb_backend_t *b, zlb_stream_t caller, const zlb_launch_t *l,
                   const zlb_timing_opts_t *o, zlb_measurement_t *m,
                   zlb_graph_failure_t *fail, zlb_error_t *err);

/**
 * The launch-queue timer (NVBench's batch measurement), for backends
 * without reliable graphs: warm-up and an eager estimate as the graph
 * timer, K = ceil(queue_batch_ms / estimate) capped at queue_max_launches;
 * then per batch: hold the stream, start event, K calls with no event
 * between them, end event, release, synchronise; sample = elapsed / K
 * (the start event completes when the hold is released, with every call
 * already queued behind it, so launch latency is hidden). At least
 * queue_min_batches batches, more to fill rep_ms, at most 1000. A
 * watchdog thread releases a hold still in force queue_timeout_ms after
 * it began (an enqueue blocked on a full launch queue would otherwise
 * wait forever for a release this thread cannot reach); that batch is
 * discarded and K divided by 4. ZLB_EREFUSED with fail->phase HOLD and
 * reason UNSUPPORTED (no stream_hold), HOST_SYNC (l->host_sync),
 * HOLD_TIMEOUT (3 batches released by the watchdog) or the backend's
 * error name (a refused hold); ZLB_EFATAL / ZLB_EPOISONED as the graph
 * timer classifies them.
 */
int zlb_time_queue(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                   const zlb_timing_opts_t *o, zlb_measurement_t *m,
                   zlb_graph_failure_t *fail, zlb_error_t *err);

/**
 * The calibrated queue timer (o->queue_calibrate): before its batches, and
 * again whenever K changes, the timer measures what a batch of K calls
 * costs beyond the kernels' own time, per call: batches of K empty kernels
 * (launch_empty), timed as the calls are (untraced), minus their kernel
 * time as the activity tracer reports it in as many traced batches,
 * divided by K (the median of 9 batches; tracing adds to a launch, so
 * the times come from untraced batches, calibration_traced_ms keeps the
 * traced batches' own calibration). That
 * is the launch gap in front of each kernel plus the batch's fixed cost
 * spread over K; it is subtracted from every sample, and the measurement
 * says so (queue_calibrated, queue_calibration_ms). What stays in a
 * calibrated value: the call's kernels and, for a call of several kernels,
 * the gaps between them. With a cold L2 (o->l2_cold) each call, and each
 * empty kernel of the calibration, is timed between its own event pair
 * recorded after its flush (queue_call_events): a sample is the mean pair
 * of its batch, so the flush is in no number that is subtracted, and what
 * it costs after one kernel or another cannot move the result. Errors,
 * not fallbacks: no empty kernel or no tracer
 * (zlb_queue_calibration_check), a tracer that cannot be used, a
 * batch the tracer does not see whole, a calibration below zero, a
 * calibrated value not above zero.
 */
/**
 * The calibrated cold graph timer (o->graph_calibrate with o->l2_cold):
 * the graph holds K times (flush; event node; call; event node), the
 * event nodes recorded again by every replay (event_record_node), so a
 * sample is the replay's mean pair and no flush is inside any timed
 * interval: what a flush costs after the call (writing back the call's
 * output, or less to write back after a call that evicted the last
 * flush's lines) cannot reach the value, as it does when a flush-only
 * graph is subtracted. Before the replays, a graph of K (flush; event
 * node; empty kernel; event node) is replayed 9 times with the tracer on
 * and 9 with it off: (untraced pairs - the traced empty kernels) / K, the
 * median (calibration_traced_ms: the traced pairs'), is the gap in front
 * of a kernel and the end node's own time, subtracted from every sample
 * (graph_calibrated, graph_calibration_ms). Errors, not fallbacks: no
 * event nodes, empty kernel or tracer (zlb_graph_calibration_check), a
 * replay the tracer does not see whole, a calibration below zero, a
 * value not above zero. A failure of the capture, instantiation or replay
 * is classified as for the graph timer.
 */
int zlb_graph_calibration_check(const zlb_backend_vtbl_t *v, const char *backend,
                                zlb_error_t *err);

/** Whether a backend's vtable (NULL: none) has what the calibration takes:
 * an empty kernel and a kernel tracer; else ZLB_EUNSUPPORTED saying which
 * `backend` lacks. The run and the plan ask it before any case. */
int zlb_queue_calibration_check(const zlb_backend_vtbl_t *v, const char *backend,
                                zlb_error_t *err);

/**
 * Time one implementation with the chosen timer and per-shape fallback:
 * GRAPH/AUTO on a graph-capable backend try the graph timer and, when it is
 * refused, fall back to zlb_time_direct with `marker` set to
 * "fallback(phase=P,reason=R,repeat=N)"; `deny` skips the attempt with
 * "fallback(phase=deny,repeat=N)". QUEUE tries the queue timer and falls
 * back to zlb_time_direct the same way, marked
 * "fallback(phase=hold,reason=R,repeat=N)" (the deny list is about
 * capture and does not apply). FATAL and POISONED are returned as
 * errors (ZLB_EFATAL / ZLB_EPOISONED) with `fail` filled and no value.
 * `marker` is "-" when nothing special happened.
 */
int zlb_time_case(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                  zlb_timer_kind_t timer, int deny, const zlb_timing_opts_t *o,
                  zlb_flush_t *flush, zlb_measurement_t *m, char *marker,
                  size_t markerlen, zlb_graph_failure_t *fail, zlb_error_t *err);

/** The timer a plan resolves to for this backend: AUTO -> GRAPH with
 * ZLB_CAP_GRAPH, else QUEUE with ZLB_CAP_HOLD, else DIRECT; GRAPH without
 * ZLB_CAP_GRAPH -> DIRECT; QUEUE stays QUEUE (each shape then falls back,
 * marked, where the stream cannot be held). */
zlb_timer_kind_t zlb_timer_resolve(zlb_timer_kind_t requested, unsigned caps);

/**
 * The integrity gate's side-stream check (`run --integrity` and the
 * measurement API): one call (`call(ctx, s, err)`) traced after an empty
 * kernel on `s`, whose span names `s` to the tracer; a kernel of the call
 * on any other stream is ZLB_EMISMATCH with a message that says so.
 * Otherwise `note` says what was checked, or why the check was not
 * possible (no tracer, no empty kernel, a tracer that names no stream or
 * lost the empty kernel's span), and 0 is returned. Other errors are the
 * call's or the tracer's.
 */
int zlb_trace_side_streams(zlb_backend_t *b, zlb_stream_t s,
                           int (*call)(void *ctx, zlb_stream_t s, zlb_error_t *err), void *ctx,
                           char *note, size_t len, zlb_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
