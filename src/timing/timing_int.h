/* Private to the timing layer: the sampling loop's stopping rule and a
 * growable sample vector. */
#ifndef ZLB_TIMING_INT_H
#define ZLB_TIMING_INT_H

#include "zlbench/timing.h"

typedef struct zlb__samples {
  double *v;
  size_t n, alloc;
} zlb__samples_t;

void zlb__samples_push(zlb__samples_t *s, double x);
void zlb__samples_release(zlb__samples_t *s);

/*
 * When to stop sampling. Budget: one chunk of the budgeted size. Noise
 * (NVBench's stdrel criterion): chunks until the relative stdev is under
 * max_noise with at least min_samples and min_time_ms measured, or until
 * the noise stops improving (the last 4 chunk noises within 5 % of each
 * other), the wall-clock timeout, or the sample cap.
 */
typedef struct zlb__stopper {
  const zlb_timing_opts_t *o;
  double t0;
  double hist[4];
  int nh;
  int met;
  double calls_per_sample; /* graph and queue: a sample is K calls' mean (1 else) */
} zlb__stopper_t;

/* min_time_ms counts measured device time: a sample that is the mean of K
 * calls (a replay of K launches, a batch of K queued calls) stands for K
 * times its value. */
void zlb__stopper_init(zlb__stopper_t *st, const zlb_timing_opts_t *o);
/** Samples to take next (0: stop). `est_ms` is the per-sample estimate. */
size_t zlb__stopper_next(zlb__stopper_t *st, const zlb__samples_t *s, double est_ms,
                         size_t budget_n, size_t cap);

/** Count of warm-up and budgeted samples from an estimate (guards 0). */
void zlb__counts(const zlb_timing_opts_t *o, double est_ms, long cap, long *n_warm,
                 long *n_rep);

/** Take `sub` out of every sample and pick the row's value (the return
 * mode) from what is left; 0 when there is no sample. The calibrated and
 * cold timers refuse a value not above zero, each with its own words. */
double zlb__subtract_pick(const zlb_timing_opts_t *o, zlb__samples_t *s, double sub);
/** Cold L2 (graph and queue timers): take the flush's own time per call,
 * `flush_ms`, measured alone, out of every sample and record it in `m`; a
 * value (per the return mode) not above zero is an error naming `timer`,
 * not a number. */
int zlb__l2_subtract(const char *timer, const zlb_timing_opts_t *o, zlb__samples_t *s,
                     double flush_ms, const zlb_flush_t *cold, zlb_measurement_t *m,
                     zlb_error_t *err);
/** Record in `m` that it ran with L2 cold: the flush's time per call and
 * the buffer's size (zlb__l2_subtract does it; a timer that subtracts the
 * flush another way calls it alone). */
void zlb__l2_record(zlb_measurement_t *m, double flush_ms, const zlb_flush_t *cold);
/** Fill value/quantiles/noise of `m` from one call's samples. */
int zlb__summarize(const zlb_timing_opts_t *o, const zlb__samples_t *s,
                   zlb_measurement_t *m, double *value, zlb_error_t *err);

/*
 * Decide the verdict for a failure of the graph or queue timer (`what`) at
 * `phase`. The backend's table settles fatal faults; anything else is
 * refused unless the context no longer does simple work, which makes it
 * poisoned: measuring on after that would time a dead process. Returns
 * ZLB_EREFUSED, ZLB_EFATAL or ZLB_EPOISONED with `fail` and `err` filled.
 */
int zlb__classify(zlb_backend_t *b, const char *what, zlb_graph_phase_t phase,
                  const zlb_error_t *cause, zlb_graph_failure_t *fail, zlb_error_t *err);

/* A zlb_launch_t call (ctx: the backend) that launches the backend's empty
 * kernel: the calibrations' stand-in for a call. */
int zlb__empty_call(void *ctx, zlb_stream_t s, zlb_error_t *err);

/* Per-call gaps of the calibrations (queue and graph, cold or warm): the
 * median of `n` batches' or replays' (untraced_ms[j] - the tracer's kernel
 * time in traced batch j) / k. untraced_ms are the same batches or replays
 * timed with the tracer off, as the calls are, so that what tracing adds
 * to a launch is not subtracted; cal->traced_ms is the same from the
 * traced timings (timed_ms) alone, for the record. Spans are attributed to
 * batch j by their start in [after[j-1], after[j]). Each must hold exactly
 * k kernels or, with `flushed` (each empty kernel after its L2 flush), 2k:
 * the flushes reported as kernels too, told apart by their order and
 * length. `what` names the calibration in errors. */
typedef struct zlb__calibration {
  double ms;        /* subtracted from every sample, per call */
  double traced_ms; /* the same from the traced timings alone (recorded) */
} zlb__calibration_t;
int zlb__calibration_from_spans(const char *what, const char *unit, long k, int n, int flushed,
                                const double *timed_ms, const double *untraced_ms,
                                const uint64_t *after, const zlb_trace_span_t *sp, size_t nsp,
                                zlb__calibration_t *cal, zlb_error_t *err);

/* A call at least this long (ms) is its own estimate (zlb__estimate). */
#define ZLB__EST_ONE_MS 1.0

/** One call (unless l->primed), then the per-call estimate in ms: one
 * flushed call when it is long, else the mean of 5. `calls` (may be NULL):
 * how many calls it made, the priming call included. */
int zlb__estimate(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                  zlb_flush_t *flush, double *est_ms, long *calls, zlb_error_t *err);

/* `k` timed calls appended to `out`: one timer's way of taking samples. */
typedef int (*zlb__chunk_fn)(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                             zlb_flush_t *flush, size_t k, zlb__samples_t *out,
                             zlb_error_t *err);

/**
 * One measurement with a sample-taking function: estimate, warm-up, then
 * chunks of samples until the stopping rule says enough (at most `cap`),
 * then the summary. The direct and trace timers differ only in `chunk`.
 */
int zlb__sample_once(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                     const zlb_timing_opts_t *o, zlb_flush_t *flush, zlb_measurement_t *m,
                     double *value, long cap, zlb__chunk_fn chunk, zlb_error_t *err);

/** The repeat-over-calls wrapper shared by the direct and trace timers. */
typedef int (*zlb__once_fn)(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                            const zlb_timing_opts_t *o, zlb_flush_t *flush,
                            zlb_measurement_t *m, double *value, zlb_error_t *err);
int zlb__repeat(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                const zlb_timing_opts_t *o, zlb_flush_t *flush, zlb_measurement_t *m,
                zlb__once_fn once, zlb_error_t *err);

/* The host dispatch time is the median over at most this many warm-up
 * calls: the first ones, before a full launch queue can block the host. */
#define ZLB__HOST_CALLS 64

/** `n` eager warm-up calls on `s`; the host time of each of the first
 * ZLB__HOST_CALLS (from just before the call to its return) is timed, and
 * their median is m->host_ms (left as it was when n is 0). */
int zlb__warm_calls(const zlb_launch_t *l, zlb_stream_t s, long n, zlb_measurement_t *m,
                    zlb_error_t *err);

/* The --integrity hook before timed sample `sample` (zlb_launch_t.integrity):
 * 1 when it is the checked one, 0 when not (or no hook), < 0 on error. */
static inline int zlb__check_due(const zlb_launch_t *l, size_t sample, zlb_stream_t s,
                                 zlb_error_t *err) {
  return l->integrity ? l->integrity(l->ctx, 0, sample, s, err) : 0;
}

#endif
