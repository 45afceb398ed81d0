/* The measurement API (include/zlbench/api.h): sessions, option checking,
 * the callback adapters and results read by key, over the timing engine's
 * zlb_time_case. Only this layer's ZLB_API functions leave libzlbench.so
 * (src/api/exports.map). */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/api.h"
#include "zlbench/ab.h"
#include "zlbench/base.h"
#include "zlbench/device.h"
#include "zlbench/timing.h"

/* The public enums are the engine's, number for number. */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(ZLB_API_TIMER_AUTO, ZLB_TIMER_AUTO) && SAME(ZLB_API_TIMER_GRAPH, ZLB_TIMER_GRAPH) &&
                   SAME(ZLB_API_TIMER_DIRECT, ZLB_TIMER_DIRECT) &&
                   SAME(ZLB_API_TIMER_TRACE, ZLB_TIMER_TRACE) &&
                   SAME(ZLB_API_TIMER_QUEUE, ZLB_TIMER_QUEUE),
               "timer kinds");
_Static_assert(SAME(ZLB_API_RET_MEDIAN, ZLB_RET_MEDIAN) && SAME(ZLB_API_RET_MEAN, ZLB_RET_MEAN) &&
                   SAME(ZLB_API_RET_MIN, ZLB_RET_MIN) && SAME(ZLB_API_RET_MAX, ZLB_RET_MAX) &&
                   SAME(ZLB_API_RET_ALL, ZLB_RET_ALL),
               "return modes");
_Static_assert(SAME(ZLB_API_STOP_BUDGET, ZLB_STOP_BUDGET) && SAME(ZLB_API_STOP_NOISE, ZLB_STOP_NOISE),
               "stop rules");
_Static_assert(SAME(ZLB_API_EINVAL, ZLB_EINVAL) && SAME(ZLB_API_ENOMEM, ZLB_ENOMEM) &&
                   SAME(ZLB_API_EIO, ZLB_EIO) && SAME(ZLB_API_ENOTFOUND, ZLB_ENOTFOUND) &&
                   SAME(ZLB_API_EUNAVAIL, ZLB_EUNAVAIL) && SAME(ZLB_API_EDEVICE, ZLB_EDEVICE) &&
                   SAME(ZLB_API_EUNSUPPORTED, ZLB_EUNSUPPORTED) && SAME(ZLB_API_EFATAL, ZLB_EFATAL) &&
                   SAME(ZLB_API_EPOISONED, ZLB_EPOISONED) && SAME(ZLB_API_EOP, ZLB_EOP) &&
                   SAME(ZLB_API_EINTR, ZLB_EINTR),
               "error codes");
_Static_assert(SAME(ZLB_API_MAX_QUANTILES, ZLB_MAX_QUANTILES), "quantile count");
_Static_assert(SAME(ZLB_API_EMISMATCH, ZLB_EMISMATCH), "integrity error code");
_Static_assert(SAME(ZLB_API_AB_SAME, ZLB_AB_SAME) && SAME(ZLB_API_AB_FASTER, ZLB_AB_FASTER) &&
                   SAME(ZLB_API_AB_SLOWER, ZLB_AB_SLOWER) &&
                   SAME(ZLB_API_AB_AMBIGUOUS, ZLB_AB_AMBIGUOUS) &&
                   SAME(ZLB_API_AB_MAX_PAIRS, ZLB_AB_MAX_BLOCKS),
               "a/b verdicts");
_Static_assert(sizeof(((zlb_api_error_t *)0)->msg) == sizeof(((zlb_error_t *)0)->msg) &&
                   sizeof(((zlb_api_error_t *)0)->vendor_name) ==
                       sizeof(((zlb_error_t *)0)->vendor_name),
               "error object");

/* The size of version 1.0's options: the least a caller may pass. */
#define OPTS_V1_SIZE (offsetof(zlb_measure_opts_t, trace_max_samples) + sizeof(int))
/* The end of the last field this version knows (1.1: counts). */
#define OPTS_KNOWN_END (offsetof(zlb_measure_opts_t, counts) + sizeof(int))

struct zlb_session {
  zlb_backend_t *b;
  zlb_stream_t stream;
  zlb_flush_t flush;
  double flush_ms;     /* one flush's time, measured once per buffer (-1: not yet) */
  pthread_mutex_t busy;
  int dead; /* a fatal fault or poisoned capture: the context is unusable */
};

struct zlb_result {
  zlb_measurement_t m;
  char marker[320];
  char verdict[16];
  char phase[16];
  char reason[64];
  char ferror[768];
  char backend[32];
  char device_name[128];
  char why[64];
  int repeat;
  int throttled;
  int have_clk[2];
  zlb_clocks_t clk[2];
  char integrity[640]; /* what the integrity gate checked ("" without it) */
  double integ_iter;   /* the checked sample, 1-based; 0 after the samples; -1 none */
};

static void to_api(const zlb_error_t *e, zlb_api_error_t *out) {
  if (!out)
    return;
  out->code = e->code;
  out->vendor_code = e->vendor_code;
  zlb_strlcpy(out->vendor_name, e->vendor_name, sizeof(out->vendor_name));
  zlb_strlcpy(out->msg, e->msg, sizeof(out->msg));
}

static int fail_api(zlb_api_error_t *out, const zlb_error_t *e) {
  to_api(e, out);
  return e->code;
}

ZLB_API int zlb_api_version(void) { return ZLB_API_VERSION; }

ZLB_API const char *zlb_api_error_name(int code) {
  return code == 0 ? "ZLB_OK" : zlb_err_name(code);
}

/* ---- sessions ------------------------------------------------------------ */

ZLB_API int zlb_session_open(const char *backend, int device, zlb_session_t **out,
                             zlb_api_error_t *err) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_session_t *s;
  if (!out) {
    zlb_error_set(&e, ZLB_EINVAL, "zlb_session_open: out is NULL");
    return fail_api(err, &e);
  }
  *out = NULL;
  if (device < 0) {
    zlb_error_set(&e, ZLB_EINVAL, "zlb_session_open: device %d is negative", device);
    return fail_api(err, &e);
  }
  s = zlb_xcalloc(1, sizeof(*s));
  pthread_mutex_init(&s->busy, NULL);
  if (zlb_backend_open_name(backend, &s->b, &e) ||
      zlb_backend_select_device(s->b, device, &e) ||
      s->b->v->stream_create(s->b, &s->stream, &e)) {
    zlb_session_close(s);
    return fail_api(err, &e);
  }
  *out = s;
  return 0;
}

ZLB_API void zlb_session_close(zlb_session_t *s) {
  if (!s)
    return;
  if (s->b && !s->dead) {
    zlb_error_t e = ZLB_ERROR_INIT;
    if (s->stream) {
      s->b->v->stream_sync(s->b, s->stream, &e);
      s->b->v->stream_destroy(s->b, s->stream);
    }
    zlb_flush_release(&s->flush, s->b);
  }
  /* After a device fault closing the context may hang: leave it to the
   * process's exit, as zlbench run does. */
  if (s->b && !s->dead)
    zlb_backend_close(s->b);
  pthread_mutex_destroy(&s->busy);
  free(s);
}

ZLB_API const char *zlb_session_backend(const zlb_session_t *s) {
  return s && s->b ? s->b->desc->name : "";
}

ZLB_API int zlb_session_device(const zlb_session_t *s) { return s && s->b ? s->b->device : -1; }

ZLB_API const char *zlb_session_device_name(const zlb_session_t *s) {
  return s && s->b ? s->b->info.name : "";
}

ZLB_API int zlb_session_has_graphs(const zlb_session_t *s) {
  return s && s->b && (s->b->desc->caps & ZLB_CAP_GRAPH) && s->b->v->capture_begin ? 1 : 0;
}

ZLB_API void *zlb_session_stream(const zlb_session_t *s) { return s ? (void *)s->stream : NULL; }

ZLB_API int zlb_session_sync(zlb_session_t *s, zlb_api_error_t *err) {
  zlb_error_t e = ZLB_ERROR_INIT;
  if (!s) {
    zlb_error_set(&e, ZLB_EINVAL, "zlb_session_sync: session is NULL");
    return fail_api(err, &e);
  }
  if (s->b->v->stream_sync(s->b, s->stream, &e))
    return fail_api(err, &e);
  return 0;
}

/* ---- options ------------------------------------------------------------- */

ZLB_API void zlb_measure_opts_init(zlb_measure_opts_t *o) {
  zlb_timing_opts_t t;
  if (!o)
    return;
  zlb_timing_opts_default(&t);
  memset(o, 0, sizeof(*o));
  o->struct_size = sizeof(*o);
  o->timer = ZLB_API_TIMER_AUTO;
  o->warmup_ms = t.warmup_ms;
  o->rep_ms = t.rep_ms;
  o->return_mode = (int)t.return_mode;
  o->repeat = t.repeat;
  o->flush = 1;
  o->stop = (int)t.stop;
  o->max_noise = t.max_noise;
  o->min_samples = t.min_samples;
  o->min_time_ms = t.min_time_ms;
  o->timeout_ms = t.timeout_ms;
  o->graph_max_launches = t.graph_max_launches;
  o->graph_replay_ms = t.graph_replay_ms;
  o->graph_min_replays = t.graph_min_replays;
  o->max_samples = t.max_samples;
  o->trace_max_samples = t.trace_max_samples;
}

static int bad(zlb_error_t *e, const char *fmt, const char *name, double v) {
  return zlb_error_set(e, ZLB_EINVAL, fmt, name, v);
}

/* The caller's options, at their size, into `o`; every field checked. */
static int read_opts(const zlb_measure_opts_t *in, zlb_measure_opts_t *o, zlb_error_t *e) {
  size_t n;
  zlb_measure_opts_init(o);
  if (!in)
    return 0;
  n = in->struct_size;
  if (n < OPTS_V1_SIZE)
    return zlb_error_set(e, ZLB_EINVAL,
                         "options struct_size is %zu, less than version 1.0's %zu: initialise "
                         "the options with zlb_measure_opts_init",
                         n, (size_t)OPTS_V1_SIZE);
  if (n > (size_t)1 << 20)
    return zlb_error_set(e, ZLB_EINVAL, "options struct_size %zu is implausible", n);
  /* A newer caller's fields this library does not know: only zero (unset)
   * is harmless. From the end of the last field this version knows, not
   * from sizeof: a newer field may sit in what is this version's trailing
   * padding. */
  for (size_t i = OPTS_KNOWN_END; i < n; i++)
    if (((const unsigned char *)in)[i])
      return zlb_error_set(e, ZLB_EINVAL,
                           "the options set a field at byte %zu, which this library (API "
                           "%d.%d) does not know: use a newer libzlbench",
                           i, ZLB_API_VERSION_MAJOR, ZLB_API_VERSION_MINOR);
  memcpy(o, in, n < sizeof(*o) ? n : sizeof(*o));
  o->struct_size = sizeof(*o);

#define FINITE_GE(f, lo)                                                                \
  if (!(isfinite(o->f) && o->f >= (lo)))                                                \
    return bad(e, "option %s must be a finite number >= " #lo ", not %g", #f, o->f);
#define FINITE_GT(f, lo)                                                                \
  if (!(isfinite(o->f) && o->f > (lo)))                                                 \
    return bad(e, "option %s must be a finite number > " #lo ", not %g", #f, o->f);
#define INT_IN(f, lo, hi)                                                               \
  if (o->f < (lo) || o->f > (hi))                                                       \
    return bad(e, "option %s must be in [" #lo ", " #hi "], not %g", #f, (double)o->f);
  INT_IN(timer, 0, 4)
  FINITE_GE(warmup_ms, 0)
  FINITE_GT(rep_ms, 0)
  INT_IN(return_mode, 0, 4)
  INT_IN(nquantiles, 0, ZLB_API_MAX_QUANTILES)
  for (int i = 0; i < o->nquantiles; i++)
    if (!(o->quantiles[i] >= 0.0 && o->quantiles[i] <= 1.0))
      return zlb_error_set(e, ZLB_EINVAL, "quantile %d is %g: quantiles are in [0, 1]", i,
                           o->quantiles[i]);
  INT_IN(repeat, 1, 1000)
  INT_IN(flush, 0, 1)
  INT_IN(deny_capture, 0, 1)
  INT_IN(stop, 0, 1)
  FINITE_GT(max_noise, 0)
  INT_IN(min_samples, 1, 1000000)
  FINITE_GE(min_time_ms, 0)
  FINITE_GT(timeout_ms, 0)
  INT_IN(graph_max_launches, 1, 100000)
  FINITE_GT(graph_replay_ms, 0)
  INT_IN(graph_min_replays, 1, 1000)
  INT_IN(max_samples, 1, 10000000)
  INT_IN(trace_max_samples, 1, 1000000)
  INT_IN(counts, 0, 1)
  /* As the CLI's --flush-mib: a flush buffer is device memory, and one
   * beyond any cache's size by this much is a mistake, not a flush. */
  if (o->flush_bytes > ((size_t)16 << 30))
    return zlb_error_set(e, ZLB_EINVAL,
                         "option flush_bytes must be at most 17179869184 (16 GiB), not %zu",
                         o->flush_bytes);
#undef FINITE_GE
#undef FINITE_GT
#undef INT_IN
  return 0;
}

static void to_timing(const zlb_measure_opts_t *o, zlb_timing_opts_t *t) {
  zlb_timing_opts_default(t);
  t->warmup_ms = o->warmup_ms;
  t->rep_ms = o->rep_ms;
  t->return_mode = (zlb_return_mode_t)o->return_mode;
  t->nquantiles = o->nquantiles;
  for (int i = 0; i < o->nquantiles; i++)
    t->quantiles[i] = o->quantiles[i];
  t->repeat = o->repeat;
  t->graph_max_launches = o->graph_max_launches;
  t->graph_replay_ms = o->graph_replay_ms;
  t->graph_min_replays = o->graph_min_replays;
  t->max_samples = o->max_samples;
  t->stop = (zlb_stop_t)o->stop;
  t->max_noise = o->max_noise;
  t->min_samples = o->min_samples;
  t->min_time_ms = o->min_time_ms;
  t->timeout_ms = o->timeout_ms;
  t->trace_max_samples = o->trace_max_samples;
  t->triton_counts = o->counts == ZLB_API_COUNTS_TRITON;
}

/* ---- callbacks ------------------------------------------------------------- */

struct cb {
  zlb_call_fn call;
  zlb_capture_fn capture;
  void *user;
  /* zlb_measure_integrity: the caller's hooks (NULL: none) and the check's state */
  const zlb_integrity_t *ig;
  zlb_session_t *s;
  size_t at;   /* the sample checked (0-based; never the first) */
  int done;    /* the check ran (once per measurement) */
  size_t sample; /* the sample it ran on ((size_t)-1: a call after the samples) */
};

/* A callback's failure as an engine error: its own code where it is a ZLB
 * code, else ZLB_EOP; its vendor code and name kept for classification. */
static int public_code(int code) {
  switch (code) {
  case ZLB_API_EINVAL: case ZLB_API_ENOMEM: case ZLB_API_EIO: case ZLB_API_ENOTFOUND:
  case ZLB_API_EUNAVAIL: case ZLB_API_EDEVICE: case ZLB_API_EUNSUPPORTED: case ZLB_API_EFATAL:
  case ZLB_API_EPOISONED: case ZLB_API_EOP: case ZLB_API_EINTR:
    return 1;
  default:
    return 0;
  }
}

/* Only the public codes pass: an internal one (a "refused capture", say)
 * would steer the engine (a fallback) instead of reporting the failure. */
static int from_callback(const char *what, int rc, const zlb_api_error_t *ae, zlb_error_t *err) {
  int code = public_code(ae->code) ? ae->code : ZLB_EOP;
  char name[64];
  zlb_strlcpy(name, ae->vendor_name, sizeof(name));
  if (ae->msg[0])
    return zlb_error_vendor(err, code, ae->vendor_code, name, "%s", ae->msg);
  return zlb_error_vendor(err, code, ae->vendor_code, name, "the %s callback returned %d", what,
                          rc);
}

static int call_adapter(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  struct cb *c = ctx;
  zlb_api_error_t ae;
  int rc;
  memset(&ae, 0, sizeof(ae));
  rc = c->call(c->user, (void *)s, &ae);
  if (!rc)
    return 0;
  return from_callback("call", rc, &ae, err);
}

static int capture_adapter(void *ctx, int k, zlb_stream_t s, zlb_graph_t *g, zlb_error_t *err) {
  struct cb *c = ctx;
  zlb_api_error_t ae;
  void *graph = NULL;
  int rc;
  memset(&ae, 0, sizeof(ae));
  rc = c->capture(c->user, k, (void *)s, &graph, &ae);
  *g = (zlb_graph_t)graph;
  if (!rc)
    return 0;
  return from_callback("capture", rc, &ae, err);
}

/* ---- the integrity gate (zlb_measure_integrity, docs/integrity.md) ------- */

/* The checked sample is one of samples 2..INTEG_SPAN + 1, as `zlbench run
 * --integrity` chooses it: every timer takes that many normally. */
#define INTEG_SPAN 9

/* A check callback's answer: 0 a match, ZLB_EMISMATCH (its message kept)
 * for a mismatch, else the callback's error. */
static int from_check(int rc, const zlb_api_error_t *ae, size_t sample, zlb_error_t *err) {
  char msg[sizeof(ae->msg)];
  if (!rc)
    return 0;
  if (rc > 0 || rc == ZLB_API_EMISMATCH || ae->code == ZLB_API_EMISMATCH) {
    zlb_strlcpy(msg, ae->msg[0] ? ae->msg : "the check callback reported a mismatch",
                sizeof(msg));
    if (sample == (size_t)-1)
      return zlb_error_set(err, ZLB_EMISMATCH,
                           "integrity: the outputs of a call after the timed samples do not "
                           "match the reference on fresh inputs (a result cached across "
                           "calls, or work skipped after the first call): %s",
                           msg);
    return zlb_error_set(err, ZLB_EMISMATCH,
                         "integrity: the outputs of timed iteration %zu do not match the "
                         "reference on fresh inputs (a result cached across calls, or work "
                         "skipped after the first call): %s",
                         sample + 1, msg);
  }
  return from_callback("integrity check", rc, ae, err);
}

/* zlb_launch_t.integrity: before the chosen sample, wait for the device
 * (the samples before it read the old inputs), let the caller refresh its
 * inputs in place and poison its outputs, wait again (the refresh may have
 * queued work anywhere); after it, wait and let the caller compare. */
static int integ_hook(void *ctx, int after, size_t sample, zlb_stream_t st, zlb_error_t *err) {
  struct cb *c = ctx;
  zlb_backend_t *b = c->s->b;
  zlb_api_error_t ae;
  int rc;
  memset(&ae, 0, sizeof(ae));
  if (!after) {
    if (c->done || sample < c->at)
      return 0;
    if ((rc = b->v->sync(b, err)))
      return rc;
    if ((rc = c->ig->refresh(c->ig->user, sample + 1, (void *)st, &ae)))
      return from_callback("integrity refresh", rc, &ae, err);
    if ((rc = b->v->sync(b, err)))
      return rc;
    c->done = 1;
    c->sample = sample;
    return 1;
  }
  if ((rc = b->v->sync(b, err)))
    return rc;
  rc = c->ig->check(c->ig->user, c->sample == (size_t)-1 ? 0 : c->sample + 1, (void *)st, &ae);
  return from_check(rc, &ae, c->sample, err);
}

/* The timer took fewer samples than the one chosen: one more call checked
 * after them, so a callable never goes unchecked. */
static int integ_late(struct cb *c, zlb_stream_t st, zlb_error_t *err) {
  size_t at = c->at;
  int rc;
  c->at = 0;
  rc = integ_hook(c, 0, 0, st, err);
  c->at = at;
  if (rc < 0 || (rc = call_adapter(c, st, err)))
    return rc;
  c->sample = (size_t)-1;
  return integ_hook(c, 1, 0, st, err);
}

/* Append "; text" (or "text") to the result's integrity string. */
static void integ_say(zlb_result_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void integ_say(zlb_result_t *r, const char *fmt, ...) {
  size_t n = strlen(r->integrity);
  va_list ap;
  if (n && n + 2 < sizeof(r->integrity)) {
    memcpy(r->integrity + n, "; ", 3);
    n += 2;
  }
  va_start(ap, fmt);
  vsnprintf(r->integrity + n, sizeof(r->integrity) - n, fmt, ap);
  va_end(ap);
}

/*
 * Work on another stream, as `zlbench run --integrity` checks it: one call
 * traced after an empty kernel on the session's stream (whose span names
 * that stream to the tracer); a kernel of the call on any other stream is
 * refused (ZLB_EMISMATCH). Without a tracer that names streams the result
 * says the check was not possible.
 */
static int integ_streams(zlb_session_t *s, struct cb *c, zlb_result_t *r, zlb_error_t *err) {
  char note[256];
  int rc = zlb_trace_side_streams(s->b, s->stream, call_adapter, c, note, sizeof(note), err);
  if (!rc && note[0])
    integ_say(r, "%s", note);
  return rc;
}

/* The sample to check, from the caller's seed (as `run` mixes its seed). */
static size_t integ_at(unsigned long long seed) {
  uint64_t h = ((uint64_t)seed ^ 0x1e7e6a11c0ffee5full) * 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  return 1 + (size_t)(h % INTEG_SPAN);
}

/* ---- measurements -------------------------------------------------------- */

static int ensure_flush(zlb_session_t *s, const zlb_measure_opts_t *o, zlb_error_t *e) {
  size_t want = 0;
  if (o->flush && (s->b->desc->caps & ZLB_CAP_L2_FLUSH))
    want = o->flush_bytes ? o->flush_bytes : s->b->desc->flush_bytes;
  if (want == s->flush.bytes)
    return 0;
  zlb_flush_release(&s->flush, s->b);
  s->flush_ms = -1.0;
  return zlb_flush_init(&s->flush, s->b, want, e);
}

/* Triton's counts size the calls from an estimate that includes one flush:
 * its time, measured once per flush buffer. */
static int flush_ms(zlb_session_t *s, double *ms, zlb_error_t *e) {
  int rc = 0;
  if (s->flush_ms < 0 && !(rc = zlb_flush_time(s->b, s->stream, &s->flush, ms, e)))
    s->flush_ms = *ms;
  *ms = s->flush_ms < 0 ? 0.0 : s->flush_ms;
  return rc;
}

static void read_clocks(zlb_session_t *s, zlb_result_t *r, int which) {
  zlb_error_t e = ZLB_ERROR_INIT;
  r->have_clk[which] = s->b->v->clocks && !s->b->v->clocks(s->b, &r->clk[which], &e);
}

/* The repeat a direct measurement applies (as the marker of zlbench run). */
static int applied_repeat(const zlb_measure_opts_t *o) {
  return o->nquantiles > 0 || o->return_mode == ZLB_API_RET_ALL ? 1 : o->repeat;
}

static int measure_locked(zlb_session_t *s, const zlb_measure_opts_t *o, struct cb *c,
                          zlb_result_t *r, zlb_error_t *e) {
  zlb_backend_t *b = s->b;
  zlb_timing_opts_t t;
  zlb_graph_failure_t fail;
  zlb_launch_t l = {.call = call_adapter, .ctx = c, .capture = c->capture ? capture_adapter : NULL};
  int rc;

  /* The session's context current on this thread (another session, or
   * the caller, may have made another one current since). */
  if ((rc = b->v->device_select(b, b->device, e)) || (rc = ensure_flush(s, o, e)))
    return rc;
  to_timing(o, &t);
  r->repeat = applied_repeat(o);
  r->integ_iter = -1;
  if (c->ig) {
    /* One traced call before timing (the side-stream check), then one timed
     * sample checked through the timers' hook. */
    if (c->ig->side_streams && (rc = integ_streams(s, c, r, e)))
      return rc;
    if (!c->ig->side_streams)
      integ_say(r, "side streams: not checked (not asked)");
    l.integrity = integ_hook;
  }
  memset(&fail, 0, sizeof(fail));
  read_clocks(s, r, 0);
  if (t.triton_counts && (rc = flush_ms(s, &t.count_flush_ms, e))) {
    /* A device error in the flush (a fault an earlier kernel left): the
     * classification below, as for a timer's. */
  } else if (o->timer == ZLB_API_TIMER_GRAPH && !zlb_session_has_graphs(s)) {
    /* Asked for graphs where there are none: timed directly, and the
     * result says so rather than passing for a graph measurement. */
    snprintf(r->marker, sizeof(r->marker), "fallback(phase=capture,reason=ZLB_EUNSUPPORTED,repeat=%d)",
             r->repeat);
    zlb_strlcpy(r->verdict, "refused", sizeof(r->verdict));
    zlb_strlcpy(r->phase, "capture", sizeof(r->phase));
    zlb_strlcpy(r->reason, "ZLB_EUNSUPPORTED", sizeof(r->reason));
    snprintf(r->ferror, sizeof(r->ferror), "backend '%s' has no graphs", b->desc->name);
    rc = zlb_time_direct(b, s->stream, &l, &t, &s->flush, &r->m, e);
  } else {
    rc = zlb_time_case(b, s->stream, &l, (zlb_timer_kind_t)o->timer, o->deny_capture, &t,
                       &s->flush, &r->m, r->marker, sizeof(r->marker), &fail, e);
    if (fail.phase != ZLB_PHASE_NONE) {
      zlb_strlcpy(r->phase, zlb_phase_name(fail.phase), sizeof(r->phase));
      zlb_strlcpy(r->reason, fail.reason, sizeof(r->reason));
      zlb_strlcpy(r->ferror, fail.error.msg, sizeof(r->ferror));
    }
    zlb_strlcpy(r->verdict, zlb_verdict_name(fail.verdict), sizeof(r->verdict));
  }
  if (!rc && c->ig && !c->done)
    rc = integ_late(c, s->stream, e);
  /* A device error outside a capture (a kernel fault seen by a direct,
   * queue or trace measurement): fatal when the backend's table says so or
   * the context no longer works, as for zlbench run. */
  if (rc && rc != ZLB_EFATAL && rc != ZLB_EPOISONED && e->vendor_code) {
    zlb_error_t probe = ZLB_ERROR_INIT;
    if (zlb_backend_classify(b->desc, e->vendor_code) == ZLB_VERDICT_FATAL ||
        (b->v->health_probe && b->v->health_probe(b, &probe))) {
      e->code = ZLB_EFATAL;
      rc = ZLB_EFATAL;
    }
  }
  if (rc == ZLB_EFATAL || rc == ZLB_EPOISONED) {
    s->dead = 1;
    if (fail.phase != ZLB_PHASE_NONE)
      zlb_error_prefix(e, "%s (phase %s%s%s)",
                       rc == ZLB_EFATAL ? "fatal device fault" : "BENCHMARK_CAPTURE_POISONED",
                       zlb_phase_name(fail.phase), fail.reason[0] ? ", " : "", fail.reason);
    else
      zlb_error_prefix(e, "%s", rc == ZLB_EFATAL ? "fatal device fault"
                                                 : "BENCHMARK_CAPTURE_POISONED");
    if (fail.reason[0])
      zlb_strlcpy(e->vendor_name, fail.reason, sizeof(e->vendor_name));
    return rc;
  }
  if (rc)
    return rc;
  if (c->ig) {
    r->integ_iter = c->sample == (size_t)-1 ? 0.0 : (double)(c->sample + 1);
    if (c->sample == (size_t)-1)
      integ_say(r, "timed sample: a call after the %zu timed samples checked on fresh inputs "
                   "(the timer took fewer than the %zu chosen)",
                r->m.nsamples, c->at + 1);
    else
      integ_say(r, "timed sample: iteration %zu checked on fresh inputs and left out of the "
                   "statistics",
                c->sample + 1);
  }
  read_clocks(s, r, 1);
  for (int w = 0; w < 2; w++)
    if (r->have_clk[w] && r->clk[w].throttled && !r->throttled) {
      r->throttled = 1;
      zlb_strlcpy(r->why, r->clk[w].why, sizeof(r->why));
    }
  if (r->throttled) {
    char m[sizeof(r->marker)];
    if (strcmp(r->marker, "-"))
      snprintf(m, sizeof(m), "%.200s+throttled(%.64s)", r->marker, r->why);
    else
      snprintf(m, sizeof(m), "throttled(%.64s)", r->why);
    zlb_strlcpy(r->marker, m, sizeof(r->marker));
  }
  zlb_strlcpy(r->backend, b->desc->name, sizeof(r->backend));
  zlb_strlcpy(r->device_name, b->info.name, sizeof(r->device_name));
  return 0;
}

ZLB_API int zlb_measure(zlb_session_t *s, const zlb_measure_opts_t *opts, zlb_call_fn call,
                        zlb_capture_fn capture, void *user, zlb_result_t **out,
                        zlb_api_error_t *err) {
  return zlb_measure_integrity(s, opts, call, capture, user, NULL, out, err);
}

/* The least zlb_integrity_t a caller may pass: API 1.3's. */
#define INTEG_V13_SIZE (offsetof(zlb_integrity_t, side_streams) + sizeof(int))

ZLB_API int zlb_measure_integrity(zlb_session_t *s, const zlb_measure_opts_t *opts,
                                  zlb_call_fn call, zlb_capture_fn capture, void *user,
                                  const zlb_integrity_t *ig, zlb_result_t **out,
                                  zlb_api_error_t *err) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_measure_opts_t o;
  zlb_result_t *r;
  struct cb c = {call, capture, user, NULL, s, 0, 0, 0};
  int rc;

  if (out)
    *out = NULL;
  if (!s || !call || !out) {
    zlb_error_set(&e, ZLB_EINVAL, "zlb_measure: %s is NULL",
                  !s ? "the session" : !call ? "the call callback" : "out");
    return fail_api(err, &e);
  }
  if (ig && (ig->struct_size < INTEG_V13_SIZE || ig->struct_size > (size_t)1 << 20 ||
             !ig->refresh || !ig->check || (ig->side_streams != 0 && ig->side_streams != 1))) {
    zlb_error_set(&e, ZLB_EINVAL,
                  "zlb_measure_integrity: %s",
                  ig->struct_size < INTEG_V13_SIZE || ig->struct_size > (size_t)1 << 20
                      ? "the integrity struct's struct_size is not sizeof(zlb_integrity_t)"
                  : !ig->refresh || !ig->check ? "the integrity struct needs both refresh and check"
                                               : "side_streams must be 0 or 1");
    return fail_api(err, &e);
  }
  if (ig) {
    c.ig = ig;
    c.at = integ_at(ig->seed);
  }
  if ((rc = read_opts(opts, &o, &e)))
    return fail_api(err, &e);
  if (s->dead) {
    zlb_error_set(&e, ZLB_EPOISONED,
                  "this session's device context is unusable after an earlier fatal fault "
                  "or poisoned capture: measure in a fresh process");
    return fail_api(err, &e);
  }
  /* One measurement at a time per session: another thread, or a callback
   * measuring again from inside a measurement, is refused. */
  if (pthread_mutex_trylock(&s->busy)) {
    zlb_error_set(&e, ZLB_EINVAL,
                  "the session is already measuring (a callback measuring again, or "
                  "another thread): use one session per thread, and never measure from "
                  "inside a measured call");
    return fail_api(err, &e);
  }
  r = zlb_xcalloc(1, sizeof(*r));
  rc = measure_locked(s, &o, &c, r, &e);
  pthread_mutex_unlock(&s->busy);
  if (rc) {
    zlb_result_free(r);
    return fail_api(err, &e);
  }
  *out = r;
  return 0;
}

ZLB_API void zlb_result_free(zlb_result_t *r) {
  if (!r)
    return;
  zlb_measurement_release(&r->m);
  free(r);
}

/* ---- results --------------------------------------------------------------- */

static const struct {
  const char *name;
  char kind;
} keys[] = {
    {"value_ms", 'n'},          {"estimate_ms", 'n'},           {"noise", 'n'},
    {"noise_met", 'n'},         {"wall_s", 'n'},                {"graph_launches", 'n'},
    {"replays", 'n'},           {"nsamples", 'n'},              {"fallback_repeat", 'n'},
    {"throttled", 'n'},         {"clocks_before.sm_mhz", 'n'},  {"clocks_before.mem_mhz", 'n'},
    {"clocks_before.temp_c", 'n'}, {"clocks_before.power_mw", 'n'},
    {"clocks_before.reasons", 'n'}, {"clocks_before.throttled", 'n'},
    {"clocks_after.sm_mhz", 'n'},  {"clocks_after.mem_mhz", 'n'},
    {"clocks_after.temp_c", 'n'},  {"clocks_after.power_mw", 'n'},
    {"clocks_after.reasons", 'n'}, {"clocks_after.throttled", 'n'},
    {"timer", 's'},             {"marker", 's'},                {"verdict", 's'},
    {"fallback_phase", 's'},    {"fallback_reason", 's'},       {"fallback_error", 's'},
    {"note", 's'},              {"throttle_why", 's'},          {"backend", 's'},
    {"device_name", 's'},       {"samples", 'a'},               {"quantiles", 'a'},
    {"call_values", 'a'},       {"sample_s", 'n'},              {"attempt_s", 'n'},
    {"host_ms", 'n'},
    {"integrity", 's'},         {"integrity_iteration", 'n'},
};

ZLB_API const char *zlb_result_key(size_t i, char *kind) {
  if (i >= sizeof(keys) / sizeof(keys[0]))
    return NULL;
  if (kind)
    *kind = keys[i].kind;
  return keys[i].name;
}

static int clock_field(const zlb_result_t *r, int w, const char *f, double *out) {
  const zlb_clocks_t *c = &r->clk[w];
  if (!strcmp(f, "sm_mhz"))
    *out = r->have_clk[w] ? c->sm_mhz : -1;
  else if (!strcmp(f, "mem_mhz"))
    *out = r->have_clk[w] ? c->mem_mhz : -1;
  else if (!strcmp(f, "temp_c"))
    *out = r->have_clk[w] ? c->temp_c : -1;
  else if (!strcmp(f, "power_mw"))
    *out = r->have_clk[w] ? c->power_mw : -1;
  else if (!strcmp(f, "reasons"))
    *out = r->have_clk[w] ? (double)c->reasons : -1;
  else if (!strcmp(f, "throttled"))
    *out = r->have_clk[w] ? c->throttled : -1;
  else
    return ZLB_ENOTFOUND;
  return 0;
}

ZLB_API int zlb_result_number(const zlb_result_t *r, const char *key, double *out) {
  const zlb_measurement_t *m;
  if (!r || !key || !out)
    return ZLB_EINVAL;
  m = &r->m;
  if (!strcmp(key, "value_ms"))
    *out = m->value_ms;
  else if (!strcmp(key, "estimate_ms"))
    *out = m->estimate_ms;
  else if (!strcmp(key, "noise"))
    *out = m->noise;
  else if (!strcmp(key, "noise_met"))
    *out = m->noise_met;
  else if (!strcmp(key, "wall_s"))
    *out = m->wall_s;
  else if (!strcmp(key, "sample_s"))
    *out = m->sample_s;
  else if (!strcmp(key, "attempt_s"))
    *out = m->attempt_s;
  else if (!strcmp(key, "host_ms"))
    *out = m->host_ms;
  else if (!strcmp(key, "integrity_iteration"))
    *out = r->integ_iter;
  else if (!strcmp(key, "graph_launches"))
    *out = m->timer == ZLB_TIMER_GRAPH ? m->graph_launches : 0;
  else if (!strcmp(key, "replays"))
    *out = m->timer == ZLB_TIMER_GRAPH ? m->replays : 0;
  else if (!strcmp(key, "nsamples"))
    *out = (double)m->nsamples;
  else if (!strcmp(key, "fallback_repeat"))
    *out = r->phase[0] ? r->repeat : 0;
  else if (!strcmp(key, "throttled"))
    *out = r->throttled;
  else if (zlb_starts_with(key, "clocks_before."))
    return clock_field(r, 0, key + strlen("clocks_before."), out);
  else if (zlb_starts_with(key, "clocks_after."))
    return clock_field(r, 1, key + strlen("clocks_after."), out);
  else
    return ZLB_ENOTFOUND;
  return 0;
}

ZLB_API int zlb_result_string(const zlb_result_t *r, const char *key, const char **out) {
  if (!r || !key || !out)
    return ZLB_EINVAL;
  if (!strcmp(key, "timer"))
    *out = zlb_timer_name(r->m.timer);
  else if (!strcmp(key, "marker"))
    *out = r->marker;
  else if (!strcmp(key, "verdict"))
    *out = r->verdict;
  else if (!strcmp(key, "fallback_phase"))
    *out = r->phase;
  else if (!strcmp(key, "fallback_reason"))
    *out = r->reason;
  else if (!strcmp(key, "fallback_error"))
    *out = r->ferror;
  else if (!strcmp(key, "note"))
    *out = r->m.note;
  else if (!strcmp(key, "throttle_why"))
    *out = r->why;
  else if (!strcmp(key, "backend"))
    *out = r->backend;
  else if (!strcmp(key, "device_name"))
    *out = r->device_name;
  else if (!strcmp(key, "integrity"))
    *out = r->integrity;
  else
    return ZLB_ENOTFOUND;
  return 0;
}

ZLB_API int zlb_result_array(const zlb_result_t *r, const char *key, const double **values,
                             size_t *n) {
  if (!r || !key || !values || !n)
    return ZLB_EINVAL;
  if (!strcmp(key, "samples")) {
    *values = r->m.samples;
    *n = r->m.nsamples;
  } else if (!strcmp(key, "quantiles")) {
    *values = r->m.quantiles;
    *n = (size_t)r->m.nquantiles;
  } else if (!strcmp(key, "call_values")) {
    *values = r->m.call_values;
    *n = (size_t)r->m.ncalls;
  } else {
    return ZLB_ENOTFOUND;
  }
  return 0;
}

/* ---- paired A/B ------------------------------------------------------------ */

/* The size of version 1.3's struct: the least a caller may pass. */
#define AB_V13_SIZE (offsetof(zlb_api_ab_t, hi) + sizeof(double))

ZLB_API int zlb_ab_verdict(const double *a_ms, const double *b_ms, const double *a_mhz,
                           const double *b_mhz, size_t n, double threshold, zlb_api_ab_t *out,
                           zlb_api_error_t *err) {
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_ab_stat_t st;
  zlb_api_ab_t r;
  size_t size;

  if (!out || out->struct_size < AB_V13_SIZE) {
    zlb_error_set(&e, ZLB_EINVAL,
                  "zlb_ab_verdict: %s: pass a zlb_api_ab_t with struct_size = its sizeof",
                  !out ? "out is NULL" : "out->struct_size is smaller than API 1.3's struct");
    return fail_api(err, &e);
  }
  if ((n && (!a_ms || !b_ms)) || (!a_mhz != !b_mhz)) {
    zlb_error_set(&e, ZLB_EINVAL, "zlb_ab_verdict: %s",
                  !a_mhz != !b_mhz ? "give both clock arrays or neither"
                                   : "the time arrays are NULL");
    return fail_api(err, &e);
  }
  if (n > ZLB_API_AB_MAX_PAIRS) {
    zlb_error_set(&e, ZLB_EINVAL, "zlb_ab_verdict: %zu pairs: at most %d (as `zlbench ab "
                  "--blocks`)", n, ZLB_API_AB_MAX_PAIRS);
    return fail_api(err, &e);
  }
  if (!(threshold > 0 && threshold <= ZLB_API_AB_MAX_THRESHOLD)) {
    zlb_error_set(&e, ZLB_EINVAL, "zlb_ab_verdict: threshold %g: expected a fraction in "
                  "(0, %g] (as `zlbench ab --threshold` in (0, 50] %%)", threshold,
                  ZLB_API_AB_MAX_THRESHOLD);
    return fail_api(err, &e);
  }
  for (size_t i = 0; a_mhz && i < n; i++)
    if (!isfinite(a_mhz[i]) || !isfinite(b_mhz[i]) || a_mhz[i] < 0 || b_mhz[i] < 0) {
      zlb_error_set(&e, ZLB_EINVAL, "zlb_ab_verdict: pair %zu's clock (%g, %g MHz): expected "
                    "a finite number, 0 where unknown", i, a_mhz[i], b_mhz[i]);
      return fail_api(err, &e);
    }
  zlb_ab_stats(a_ms, b_ms, a_mhz, b_mhz, n, threshold, &st);
  memset(&r, 0, sizeof(r));
  r.struct_size = out->struct_size;
  r.verdict = (int)st.verdict;
  zlb_strlcpy(r.verdict_name, zlb_ab_verdict_name(st.verdict), sizeof(r.verdict_name));
  r.pairs = st.pairs;
  r.normalised = st.normalised;
  r.a_ms = st.a_ms;
  r.b_ms = st.b_ms;
  r.ratio = st.ratio;
  r.lo = st.lo;
  r.hi = st.hi;
  size = out->struct_size < sizeof(r) ? out->struct_size : sizeof(r);
  memcpy(out, &r, size);
  if (err)
    to_api(&e, err);
  return 0;
}
