/* The "test" backend: the host backend's behaviour plus emulated graphs with
 * injectable failures, so the graph timer's fallback state machine and the
 * batch layer's poison handling run on any CPU.
 *
 * Graphs: capture runs the operator calls (they are CPU code) and records
 * how long they took in the capturing thread's CPU time (preemption is not
 * the graph's); a replay busy-waits that long. ZL_TEST_FAULT=
 * "<phase>:<verdict>" makes the capture, instantiate or replay phase fail
 * with a refused (900), fatal (700) or poisoning (901 + failing health
 * probe) error. ZL_TEST_DEVICES sets the device count (default 2).
 * "test2" is the same backend under its own visibility variables.
 *
 * Holds (the queue timer): a held stream counts what is enqueued on it;
 * work still runs at enqueue time (the stream is the CPU), so a batch's
 * events time its calls as a real device would time them once released.
 * ZL_TEST_QUEUE_DEPTH=N emulates a launch queue of N entries: the next
 * enqueue blocks until the hold is released, which only the queue timer's
 * watchdog can then do (N=0: the hold is never released by the normal
 * path). ZL_TEST_FAULT=hold:refused|fatal makes the hold fail. "testq" has
 * holds but no graphs: `auto` picks the queue timer there.
 *
 * The queue timer's calibration: an empty kernel (launch_empty) that costs
 * TEST_EMPTY_NS of CPU, and a tracer that sees only empty kernels, each as
 * a TEST_EMPTY_KERNEL_NS span. ZLB_CAP_TRACE stays off: operator work is
 * not traced, so `--timer trace` is still refused here.
 * ZL_TEST_FAULT=trace:drop makes the tracer lose one span per trace.
 * In a capture, an event node (event_record_node) and an empty kernel are
 * marks at their offset in the graph's time: each replay stamps the event,
 * and traces the empty kernel, there (the calibrated cold graph timer).
 * ZL_TEST_FAULT=node:refused makes an event node refused.
 * ZL_TEST_FAULT=trace:flush makes the tracer report every memset (the L2
 * flush), captured or not, as a kernel of its cost, as CUPTI reported a
 * graph's memset nodes on an H100.
 * Spans carry their stream's id; an operator can report a kernel of its
 * own to the tracer (zlb_test_trace_kernel: cheat_ops.c's side stream). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_int.h"

/* Plugins link nothing of libzlbench: fill the error object by hand. */
static int verr(zlb_error_t *e, int code, int vendor, const char *vname, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int verr(zlb_error_t *e, int code, int vendor, const char *vname, const char *fmt, ...) {
  va_list ap;
  if (!e)
    return code;
  e->code = code;
  e->vendor_code = vendor;
  snprintf(e->vendor_name, sizeof(e->vendor_name), "%s", vname ? vname : "");
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
  va_end(ap);
  return code;
}

static int poisoned;

void zlb_test_backend_poison(void) { poisoned = 1; }

/* For unit tests that run several poisoned cases in one process. */
void zlb_test_backend_reset(void);
void zlb_test_backend_reset(void) { poisoned = 0; }

static unsigned long long clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static unsigned long long now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* A capture's clock (below). */
static unsigned long long capture_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

/* In a capture, the capturing thread's CPU time: what the capture's work
 * took, without the time the thread spent preempted. A replay busy-waits
 * as long as the capture's work took; measured in wall time, one
 * preemption of the capture (a loaded machine) was baked into every
 * replay, and a graph of flushes alone replayed for milliseconds against
 * microseconds for the same flushes with calls between them. Otherwise
 * the wall clock, which events read. */
unsigned long long zlb_test_stream_now_ns(const struct test_stream *ts) {
  return ts && ts->capturing ? capture_ns() : now_ns();
}

struct test_event {
  unsigned long long ns;
};

struct test_graph {
  unsigned long long ns;
  struct test_mark marks[TEST_MAX_MARKS];
  int nmarks;
};

static int fault(const char *phase, zlb_error_t *err) {
  const char *f = getenv("ZL_TEST_FAULT");
  char want[64];
  int code;
  if (!f)
    return 0;
  snprintf(want, sizeof(want), "%s:", phase);
  if (strncmp(f, want, strlen(want)))
    return 0;
  f += strlen(want);
  if (!strcmp(f, "refused")) {
    code = strcmp(phase, "hold") ? TEST_ERR_CAPTURE_UNSUPPORTED : TEST_ERR_NOT_SUPPORTED;
  } else if (!strcmp(f, "fatal")) {
    code = TEST_ERR_ILLEGAL_ADDRESS;
  } else if (!strcmp(f, "poisoned")) {
    code = TEST_ERR_CAPTURE_INVALIDATED;
    poisoned = 1;
  } else {
    return 0;
  }
  return verr(err, ZLB_EDEVICE, code,
                          code == 900 ? "TEST_ERROR_CAPTURE_UNSUPPORTED"
                          : code == 700 ? "TEST_ERROR_ILLEGAL_ADDRESS"
                          : code == 801 ? "TEST_ERROR_NOT_SUPPORTED"
                                        : "TEST_ERROR_CAPTURE_INVALIDATED",
                          "injected %s failure in phase %s", f, phase);
}

static int t_open(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  (void)err;
  return 0;
}

static void t_close(zlb_backend_t *b) { (void)b; }

static int t_count(zlb_backend_t *b, int *n, zlb_error_t *err) {
  const char *e = getenv("ZL_TEST_DEVICES");
  (void)err;
  /* "test2" behaves like a real runtime: its visibility variable leaves
   * the devices it lists (comma-separated, as a scheduler grants them);
   * without it, ZL_TEST2_DEVICES (default 3). */
  if (b->desc == &zlb_test2_backend_desc) {
    e = getenv("ZL_TEST2_VISIBLE_DEVICES");
    if (e && *e) {
      *n = 1;
      for (const char *c = e; *c; c++)
        *n += *c == ',';
    } else {
      *n = getenv("ZL_TEST2_DEVICES") ? atoi(getenv("ZL_TEST2_DEVICES")) : 3;
    }
    return 0;
  }
  *n = e ? atoi(e) : 2;
  return 0;
}

/* The device index the last device_select chose ("test3" records it). */
int zlb_test_selected_device = -1;

static int t_info(zlb_backend_t *b, int index, zlb_device_info_t *info, zlb_error_t *err) {
  (void)b;
  (void)err;
  memset(info, 0, sizeof(*info));
  info->index = index;
  snprintf(info->name, sizeof(info->name), "test device %d", index);
  snprintf(info->uuid, sizeof(info->uuid), "TEST-%08d", index);
  snprintf(info->driver_version, sizeof(info->driver_version), "test");
  info->sm_count = 1;
  /* --integrity's rate gate: an L2 of this size (default none reported). */
  if (getenv("ZL_TEST_L2_BYTES"))
    info->l2_bytes = (size_t)strtoull(getenv("ZL_TEST_L2_BYTES"), NULL, 10);
  return 0;
}

static int t_select(zlb_backend_t *b, int index, zlb_error_t *err) {
  (void)b;
  (void)err;
  zlb_test_selected_device = index;
  return 0;
}

static int t_stream_create(zlb_backend_t *b, zlb_stream_t *s, zlb_error_t *err) {
  (void)b;
  (void)err;
  static unsigned next_id;
  *s = (zlb_stream_t)calloc(1, sizeof(struct test_stream));
  if (*s)
    ((struct test_stream *)*s)->id = ++next_id; /* the tracer's stream id */
  return *s ? 0 : ZLB_ENOMEM;
}

static void t_stream_destroy(zlb_backend_t *b, zlb_stream_t s) {
  (void)b;
  free(s);
}

static int t_noop(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  (void)s;
  (void)err;
  return 0;
}

static int t_wait(zlb_backend_t *b, zlb_stream_t w, zlb_stream_t e, zlb_error_t *err) {
  (void)b;
  (void)w;
  (void)e;
  (void)err;
  return 0;
}

static int t_is_capturing(zlb_backend_t *b, zlb_stream_t s, int *c, zlb_error_t *err) {
  (void)b;
  (void)err;
  *c = ((struct test_stream *)s)->capturing;
  return 0;
}

static int t_event_create(zlb_backend_t *b, zlb_event_t *e, zlb_error_t *err) {
  (void)b;
  (void)err;
  *e = (zlb_event_t)calloc(1, sizeof(struct test_event));
  return *e ? 0 : ZLB_ENOMEM;
}

static void t_event_destroy(zlb_backend_t *b, zlb_event_t e) {
  (void)b;
  free(e);
}

void zlb_test_stream_enqueue(struct test_stream *ts) {
  const char *d = getenv("ZL_TEST_QUEUE_DEPTH");
  long depth = d && *d ? atol(d) : -1;
  if (!ts || !__atomic_load_n(&ts->held, __ATOMIC_SEQ_CST))
    return;
  if (++ts->queued <= depth || depth < 0)
    return;
  /* A full queue: the caller waits until the device drains it, and a held
   * stream drains only once released. */
  while (__atomic_load_n(&ts->held, __ATOMIC_SEQ_CST)) {
    struct timespec ts_sleep = {0, 100000};
    nanosleep(&ts_sleep, NULL);
  }
}

static int t_record(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  (void)err;
  zlb_test_stream_enqueue((struct test_stream *)s);
  ((struct test_event *)e)->ns = now_ns();
  return 0;
}

/* Where the capture in progress on `ts` stands in its graph's time (also
 * at its end, once `capturing` is cleared). */
static unsigned long long capture_offset(const struct test_stream *ts) {
  return capture_ns() - ts->capture_start_ns + ts->capture_memset_ns;
}

static int traces_flushes(void) {
  const char *f = getenv("ZL_TEST_FAULT");
  return f && !strcmp(f, "trace:flush");
}

/* An event node (`event`), a captured empty kernel (NULL, ns 0) or a
 * captured flush traced as a kernel of `ns` (NULL) at the capture's
 * present offset. */
static int add_mark(struct test_stream *ts, void *event, unsigned long long ns,
                    zlb_error_t *err) {
  if (ts->nmarks >= TEST_MAX_MARKS)
    return verr(err, ZLB_EDEVICE, TEST_ERR_NOT_SUPPORTED, "TEST_ERROR_NOT_SUPPORTED",
                "test backend: more than %d event nodes and empty kernels in one graph",
                TEST_MAX_MARKS);
  ts->marks[ts->nmarks].event = event;
  ts->marks[ts->nmarks].off = capture_offset(ts);
  ts->marks[ts->nmarks].ns = ns;
  ts->nmarks++;
  return 0;
}

static int t_record_node(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s, zlb_error_t *err) {
  struct test_stream *ts = (struct test_stream *)s;
  if (fault("node", err))
    return err->code;
  /* Outside a capture, an external record is a plain one. */
  if (!ts->capturing)
    return t_record(b, e, s, err);
  return add_mark(ts, e, 0, err);
}

static int t_hold(zlb_backend_t *b, zlb_stream_t s, zlb_hold_t *h, zlb_error_t *err) {
  struct test_stream *ts = (struct test_stream *)s;
  (void)b;
  *h = NULL;
  if (fault("hold", err))
    return err->code;
  ts->queued = 0;
  __atomic_store_n(&ts->held, 1, __ATOMIC_SEQ_CST);
  *h = (zlb_hold_t)ts;
  return 0;
}

static void t_release(zlb_backend_t *b, zlb_hold_t h) {
  (void)b;
  if (h)
    __atomic_store_n(&((struct test_stream *)h)->held, 0, __ATOMIC_SEQ_CST);
}

static int t_elapsed(zlb_backend_t *b, zlb_event_t s, zlb_event_t e, double *ms,
                     zlb_error_t *err) {
  (void)b;
  (void)err;
  *ms = (double)(((struct test_event *)e)->ns - ((struct test_event *)s)->ns) * 1e-6;
  return 0;
}

#define TEST_EMPTY_NS 400ull
/* A captured memset's cost in its graph without ZL_TEST_MEMSET_US. */
#define TEST_MEMSET_NS 2000ull
#define TEST_EMPTY_KERNEL_NS 100ull
#define TEST_MAX_SPANS 8192

static struct {
  int on, dropped;
  size_t n;
  zlb_trace_span_t sp[TEST_MAX_SPANS];
} tracer;

/* A kernel span of `ns` from `t0` on stream id `id`, while tracing. */
static void trace_span(unsigned long long t0, unsigned long long ns, unsigned id) {
  if (tracer.on && tracer.n < TEST_MAX_SPANS) {
    tracer.sp[tracer.n].start = t0;
    tracer.sp[tracer.n].end = t0 + ns;
    tracer.sp[tracer.n].stream = id;
    tracer.n++;
  }
}

/* An empty kernel's span at `t0` on stream id `id`, unless trace:drop
 * loses it (the first of a trace). */
static void trace_empty(unsigned long long t0, unsigned id) {
  const char *f = getenv("ZL_TEST_FAULT");
  if (tracer.on && f && !strcmp(f, "trace:drop") && !tracer.dropped)
    tracer.dropped = 1;
  else
    trace_span(t0, TEST_EMPTY_KERNEL_NS, id);
}

static int t_launch_empty(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  struct test_stream *ts = (struct test_stream *)s;
  unsigned long long t0 = now_ns();
  int rc = 0;
  (void)b;
  zlb_test_stream_enqueue(ts);
  /* Captured, it runs (and is traced) when the graph replays. */
  if (ts->capturing)
    rc = add_mark(ts, NULL, 0, err);
  else
    trace_empty(t0, ts->id);
  while (now_ns() < t0 + TEST_EMPTY_NS)
    ;
  return rc;
}

void zlb_test_trace_kernel(unsigned stream, unsigned long long ns) {
  trace_span(now_ns(), ns, stream);
}

static int t_trace_begin(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  (void)err;
  tracer.on = 1;
  tracer.dropped = 0;
  tracer.n = 0;
  return 0;
}

static int t_trace_now(zlb_backend_t *b, uint64_t *ns, zlb_error_t *err) {
  (void)b;
  (void)err;
  *ns = now_ns();
  return 0;
}

static int t_trace_end(zlb_backend_t *b, zlb_trace_span_t **sp, size_t *n, zlb_error_t *err) {
  (void)b;
  tracer.on = 0;
  *n = 0;
  if (!(*sp = malloc((tracer.n ? tracer.n : 1) * sizeof(**sp))))
    return verr(err, ZLB_ENOMEM, 0, NULL, "test tracer: out of memory");
  memcpy(*sp, tracer.sp, tracer.n * sizeof(**sp));
  *n = tracer.n;
  return 0;
}

static int t_alloc(zlb_backend_t *b, size_t n, void **p, zlb_error_t *err) {
  (void)b;
  *p = malloc(n ? n : 1);
  return *p ? 0 : verr(err, ZLB_ENOMEM, 0, NULL, "test backend: out of memory");
}

static void t_free(zlb_backend_t *b, void *p) {
  (void)b;
  free(p);
}

static int t_memset(zlb_backend_t *b, void *p, int v, size_t n, zlb_stream_t s,
                    zlb_error_t *err) {
  /* ZL_TEST_MEMSET_US: each memset costs at least this long (an L2
   * flush of a known cost, for the cold graph and queue timers' tests).
   * Captured, a memset costs exactly that (TEST_MEMSET_NS without it) in
   * the graph's time, not its wall time: a graph of flushes alone would
   * otherwise replay for as long as its one capture happened to take on
   * a loaded machine, and could outlast a graph of the same flushes with
   * calls between them. */
  struct test_stream *ts = (struct test_stream *)s;
  const char *us = getenv("ZL_TEST_MEMSET_US");
  unsigned long long cost = us && *us ? strtoull(us, NULL, 10) * 1000ull : 0;
  unsigned long long t0 = zlb_test_stream_now_ns(ts); /* the wall clock unless capturing */
  (void)b;
  (void)err;
  zlb_test_stream_enqueue(ts);
  memset(p, v, n);
  if (ts && ts->capturing) {
    int rc = 0;
    ts->capture_start_ns += zlb_test_stream_now_ns(ts) - t0;
    if (traces_flushes())
      rc = add_mark(ts, NULL, cost ? cost : TEST_MEMSET_NS, err);
    ts->capture_memset_ns += cost ? cost : TEST_MEMSET_NS;
    return rc;
  }
  while (cost && now_ns() < t0 + cost)
    ;
  if (traces_flushes())
    trace_span(t0, now_ns() - t0 + 1, ts ? ts->id : 0);
  return 0;
}

static int t_memcpy(zlb_backend_t *b, void *d, const void *s, size_t n, zlb_error_t *err) {
  (void)b;
  (void)err;
  if (n)
    memcpy(d, s, n);
  return 0;
}

static int t_capture_begin(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  struct test_stream *ts = (struct test_stream *)s;
  (void)b;
  if (fault("capture", err))
    return err->code;
  ts->capturing = 1;
  ts->invalidated = 0;
  ts->capture_start_ns = capture_ns();
  ts->capture_memset_ns = 0;
  ts->nmarks = 0;
  return 0;
}

static int t_capture_end(zlb_backend_t *b, zlb_stream_t s, zlb_graph_t *g,
                         zlb_error_t *err) {
  struct test_stream *ts = (struct test_stream *)s;
  struct test_graph *tg;
  (void)b;
  *g = NULL;
  if (!ts->capturing)
    return verr(err, ZLB_EDEVICE, 903, "TEST_ERROR_CAPTURE_UNMATCHED",
                            "capture_end without capture_begin");
  ts->capturing = 0;
  if (ts->invalidated)
    return verr(err, ZLB_EDEVICE, TEST_ERR_CAPTURE_INVALIDATED,
                            "TEST_ERROR_CAPTURE_INVALIDATED", "capture was invalidated");
  tg = calloc(1, sizeof(*tg));
  if (!tg)
    return verr(err, ZLB_ENOMEM, 0, NULL, "test backend: out of memory");
  tg->ns = capture_offset(ts);
  memcpy(tg->marks, ts->marks, (size_t)ts->nmarks * sizeof(ts->marks[0]));
  tg->nmarks = ts->nmarks;
  *g = (zlb_graph_t)tg;
  return 0;
}

static int t_instantiate(zlb_backend_t *b, zlb_graph_t g, zlb_graph_exec_t *x,
                         zlb_error_t *err) {
  struct test_graph *copy;
  (void)b;
  if (fault("instantiate", err))
    return err->code;
  copy = malloc(sizeof(*copy));
  if (!copy)
    return verr(err, ZLB_ENOMEM, 0, NULL, "test backend: out of memory");
  *copy = *(struct test_graph *)g;
  *x = (zlb_graph_exec_t)copy;
  return 0;
}

static int t_launch(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t s, zlb_error_t *err) {
  const struct test_graph *tg = (const struct test_graph *)x;
  unsigned long long t0 = now_ns(), until = t0 + tg->ns;
  (void)b;
  if (fault("replay", err))
    return err->code;
  for (int i = 0; i < tg->nmarks; i++)
    if (tg->marks[i].event)
      ((struct test_event *)tg->marks[i].event)->ns = t0 + tg->marks[i].off;
    else if (tg->marks[i].ns)
      trace_span(t0 + tg->marks[i].off, tg->marks[i].ns, ((struct test_stream *)s)->id);
    else
      trace_empty(t0 + tg->marks[i].off, ((struct test_stream *)s)->id);
  while (now_ns() < until)
    ;
  return 0;
}

static void t_graph_destroy(zlb_backend_t *b, zlb_graph_t g) {
  (void)b;
  free(g);
}

static void t_exec_destroy(zlb_backend_t *b, zlb_graph_exec_t x) {
  (void)b;
  free(x);
}

static int t_sync(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  (void)err;
  return 0;
}

static int t_probe(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  if (poisoned)
    return verr(err, ZLB_EDEVICE, 709, "TEST_ERROR_CONTEXT_IS_DESTROYED",
                            "test backend: the context is poisoned");
  return 0;
}

/*
 * Device-side checks emulated on the host, so the harness's device check
 * path runs on any CPU: on only with ZL_TEST_DEVCHECK=1 (otherwise
 * "unsupported", and the harness checks on the host); each call appends a
 * line to ZL_TEST_DEVCHECK_LOG when that is set.
 */
static int t_dev_check(zlb_backend_t *b, const zlb_dev_check_t *q, zlb_dev_check_result_t *res,
                       zlb_stream_t s, zlb_error_t *err) {
  const char *on = getenv("ZL_TEST_DEVCHECK"), *logp = getenv("ZL_TEST_DEVCHECK_LOG");
  zlb_dtype_t dt = (zlb_dtype_t)q->dtype;
  size_t es = zlb_dtype_size(dt);
  (void)b;
  (void)s;
  memset(res, 0, sizeof(*res));
  res->first = -1;
  if (!on || strcmp(on, "1"))
    return verr(err, ZLB_EUNSUPPORTED, 0, NULL, "test backend: device checks are off");
  if (logp) {
    FILE *f = fopen(logp, "a");
    if (f) {
      fprintf(f, "%d %lld\n", (int)q->kind, (long long)q->n);
      fclose(f);
    }
  }
  for (int64_t i = 0; i < q->n; i++) {
    int bad = 0;
    if (q->kind == ZLB_DEVCHECK_EXACT) {
      bad = memcmp((const char *)q->base + (size_t)i * es, (const char *)q->cand + (size_t)i * es, es) != 0;
    } else if (q->kind == ZLB_DEVCHECK_CLOSE) {
      double vb = zlb_load(dt, q->base, i), vx = zlb_load(dt, q->cand, i);
      if (vb != vb || vx != vx)
        bad = 1;
      else if (vb - vb != 0 || vx - vx != 0) /* an infinity */
        bad = vb != vx;
      else
        bad = (vx > vb ? vx - vb : vb - vx) > q->atol + q->rtol * (vb < 0 ? -vb : vb);
    } else {
      double v = zlb_load(dt, q->base, i);
      if (q->pass == 0) {
        bad = v != v || v - v != 0;
        if (!bad)
          res->sum[0] += v;
      } else {
        double e = v - q->mean;
        res->sum[1] += e * e;
        res->sum[2] += e * e * e * e;
      }
    }
    if (bad && res->bad++ == 0)
      res->first = i;
  }
  return 0;
}

static const zlb_backend_vtbl_t vtbl = {
    .open = t_open,
    .close = t_close,
    .device_count = t_count,
    .device_info = t_info,
    .device_select = t_select,
    .stream_create = t_stream_create,
    .stream_destroy = t_stream_destroy,
    .stream_sync = t_noop,
    .stream_wait = t_wait,
    .stream_is_capturing = t_is_capturing,
    .event_create = t_event_create,
    .event_destroy = t_event_destroy,
    .event_record = t_record,
    .event_elapsed = t_elapsed,
    .mem_alloc = t_alloc,
    .mem_free = t_free,
    .memset_async = t_memset,
    .memcpy_htod = t_memcpy,
    .memcpy_dtoh = t_memcpy,
    .capture_begin = t_capture_begin,
    .capture_end = t_capture_end,
    .graph_instantiate = t_instantiate,
    .graph_launch = t_launch,
    .graph_destroy = t_graph_destroy,
    .graph_exec_destroy = t_exec_destroy,
    .sync = t_sync,
    .health_probe = t_probe,
    .dev_check = t_dev_check,
    .stream_hold = t_hold,
    .stream_release = t_release,
    .trace_begin = t_trace_begin,
    .trace_now = t_trace_now,
    .trace_end = t_trace_end,
    .launch_empty = t_launch_empty,
    .event_record_node = t_record_node,
};

static const zlb_classify_entry_t classify[] = {
    {900, "TEST_ERROR_CAPTURE_UNSUPPORTED", ZLB_VERDICT_REFUSED},
    {901, "TEST_ERROR_CAPTURE_INVALIDATED", ZLB_VERDICT_REFUSED},
    {903, "TEST_ERROR_CAPTURE_UNMATCHED", ZLB_VERDICT_REFUSED},
    {801, "TEST_ERROR_NOT_SUPPORTED", ZLB_VERDICT_REFUSED},
    {700, "TEST_ERROR_ILLEGAL_ADDRESS", ZLB_VERDICT_FATAL},
};

static const char *const aliases[] = {"testing", NULL};

const zlb_backend_desc_t zlb_test_backend_desc = {
    .name = "test",
    .vendor = "zlbench tests",
    .aliases = aliases,
    .sonames = NULL,
    .visibility_env = "ZL_TEST_VISIBLE_DEVICES",
    .also_env = NULL,
    .caps = ZLB_CAP_GRAPH | ZLB_CAP_RNG_STATE | ZLB_CAP_HOLD,
    .classify = classify,
    .nclassify = sizeof(classify) / sizeof(classify[0]),
    .flush_bytes = 0,
    .vtbl = &vtbl,
    .probe_in_auto = 0,
};

/* A second backend from the same library, with visibility keys of its
 * own: the batch must pin its children through what the library declares. */
static const char *const test2_also_env[] = {"ZL_TEST2_ALSO_VISIBLE", NULL};

const zlb_backend_desc_t zlb_test2_backend_desc = {
    .name = "test2",
    .vendor = "zlbench tests",
    .aliases = NULL,
    .sonames = NULL,
    .visibility_env = "ZL_TEST2_VISIBLE_DEVICES",
    .also_env = test2_also_env,
    .caps = ZLB_CAP_GRAPH | ZLB_CAP_RNG_STATE,
    .classify = classify,
    .nclassify = sizeof(classify) / sizeof(classify[0]),
    .flush_bytes = 0,
    .vtbl = &vtbl,
    .probe_in_auto = 0,
};

/* A library backend that declares no visibility variable (two devices):
 * a batch can run it on one device only. */
const zlb_backend_desc_t zlb_test3_backend_desc = {
    .name = "test3",
    .vendor = "zlbench tests",
    .aliases = NULL,
    .sonames = NULL,
    .visibility_env = NULL,
    .also_env = NULL,
    .caps = ZLB_CAP_GRAPH | ZLB_CAP_RNG_STATE,
    .classify = classify,
    .nclassify = sizeof(classify) / sizeof(classify[0]),
    .flush_bytes = 0,
    .vtbl = &vtbl,
    .probe_in_auto = 0,
};

/* Holds but no graphs (a runtime whose graphs are not reliable): `auto`
 * resolves to the queue timer here. */
static const char *const testq_aliases[] = {NULL};

const zlb_backend_desc_t zlb_testq_backend_desc = {
    .name = "testq",
    .vendor = "zlbench tests",
    .aliases = testq_aliases,
    .sonames = NULL,
    .visibility_env = "ZL_TESTQ_VISIBLE_DEVICES",
    .also_env = NULL,
    .caps = ZLB_CAP_RNG_STATE | ZLB_CAP_HOLD,
    .classify = classify,
    .nclassify = sizeof(classify) / sizeof(classify[0]),
    .flush_bytes = 0,
    .vtbl = &vtbl,
    .probe_in_auto = 0,
};
