/* Options shared by `zlbench run`, `plan` and `batch` (which passes them on
 * to each child): one table, with their environment-variable defaults. */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_opts.h"

/* ---- value checks: 0, or -1 after printing which option and what it wants -- */

/* The largest budget or timeout: over two hours per measurement. */
#define MAX_MS 1e7

static int set_positive_int(const char *opt, const char *v, int *out) {
  long n;
  if (zlb_cli_long_in(opt, v, 1, 1000000, "a positive integer (1..1000000)", &n))
    return -1;
  *out = (int)n;
  return 0;
}

static int set_ms(const char *opt, const char *v, double *out) {
  return zlb_cli_double_in(opt, v, 0, 0, MAX_MS, "ms", "a non-negative number of milliseconds",
                           out);
}

static int set_onoff(const char *opt, const char *v, int *out) {
  if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true"))
    *out = 1;
  else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false"))
    *out = 0;
  else
    return zlb_cli_bad_value(opt, v, "on or off");
  return 0;
}

/* Decimal, or hex with 0x. At most INT64_MAX: results record the seed as a
 * signed 64-bit JSON integer, and strtoull would wrap "-1" and saturate
 * what it cannot hold. */
static int set_seed(const char *opt, const char *v, uint64_t *out) {
  char *end;
  unsigned long long s;
  if (!(*v >= '0' && *v <= '9'))
    return zlb_cli_bad_value(opt, v, "an integer in 0..9223372036854775807");
  errno = 0;
  s = strtoull(v, &end, 0);
  if (*end || errno == ERANGE || s > (unsigned long long)INT64_MAX)
    return zlb_cli_bad_value(opt, v, "an integer in 0..9223372036854775807");
  *out = s;
  return 0;
}

/* ---- callbacks of options without an environment default ------------------- */

static int opt_positive_int(const zlb_cli_option_t *opt, const char *name, const char *v,
                            void *ptr) {
  (void)opt;
  return set_positive_int(name, v, ptr);
}

static int opt_ms(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  (void)opt;
  return set_ms(name, v, ptr);
}

/* The L2 flush's size in MiB: 16 GiB at most, hundreds of times any
 * device's L2; a cold graph or queue run holds two such buffers (the
 * direct timer's, for a refused capture's fallback, and its own). */
static int opt_flush_mib(const zlb_cli_option_t *opt, const char *name, const char *v,
                         void *ptr) {
  long n;
  (void)opt;
  if (zlb_cli_long_in(name, v, 1, 16384, "a size in MiB, 1..16384", &n))
    return -1;
  *(size_t *)ptr = (size_t)n << 20;
  return 0;
}

/* Calls per queue batch: at most what a launch queue holds (timing.h). */
static int opt_queue_launches(const zlb_cli_option_t *opt, const char *name, const char *v,
                              void *ptr) {
  long n;
  char want[64];
  (void)opt;
  snprintf(want, sizeof(want), "an integer in 1..%d", ZLB_QUEUE_LAUNCHES_LIMIT);
  if (zlb_cli_long_in(name, v, 1, ZLB_QUEUE_LAUNCHES_LIMIT, want, &n))
    return -1;
  *(int *)ptr = (int)n;
  return 0;
}

/* A watchdog timeout of 0 would release every hold at once. */
static int opt_positive_ms(const zlb_cli_option_t *opt, const char *name, const char *v,
                           void *ptr) {
  (void)opt;
  return zlb_cli_double_in(name, v, 0, 1, MAX_MS, "ms", "a positive number of milliseconds",
                           ptr);
}

static int opt_level(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  static const char *const words[] = {"core", "comprehensive", NULL};
  (void)opt;
  return zlb_cli_word_in(name, v, words, "core or comprehensive", ptr);
}

static int opt_return_mode(const zlb_cli_option_t *opt, const char *name, const char *v,
                           void *ptr) {
  (void)opt;
  if (zlb_return_mode_parse(v, ptr))
    return zlb_cli_bad_value(name, v, "median, mean, min, max or all");
  return 0;
}

static int opt_max_noise(const zlb_cli_option_t *opt, const char *name, const char *v,
                         void *ptr) {
  double pct;
  (void)opt;
  if (zlb_cli_double_in(name, v, 0, 1, 100, "%", "a percentage in (0, 100]", &pct))
    return -1;
  *(double *)ptr = pct / 100.0;
  return 0;
}

static int opt_quantiles(const zlb_cli_option_t *opt, const char *name, const char *v,
                         void *ptr) {
  zlb_timing_opts_t *t = ptr;
  zlb_strvec_t q = ZLB_STRVEC_INIT;
  int rc = 0;
  (void)opt;
  if (zlb_cli_split(name, v, &q))
    rc = -1;
  else if (q.n == 0 || q.n > ZLB_MAX_QUANTILES)
    rc = zlb_cli_bad_value(name, v, "1 to 8 comma-separated numbers in [0, 1]");
  for (size_t i = 0; !rc && i < q.n; i++)
    rc = zlb_cli_double_in(name, q.v[i], 0, 0, 1, "", "a number in [0, 1]", &t->quantiles[i]);
  if (!rc)
    t->nquantiles = (int)q.n;
  zlb_strvec_release(&q);
  return rc;
}

static int opt_color(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  (void)opt;
  if (strcmp(v, "auto") && strcmp(v, "always") && strcmp(v, "never"))
    return zlb_cli_bad_value(name, v, "auto, always or never");
  *(const char **)ptr = v;
  return 0;
}

/* ---- options with an environment default: the flag wins over the variable,
 * so a bad variable is an error only where no flag overrides it ------------- */

static int opt_dtypes(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  zlb_cli_run_extra_t *x = ptr;
  zlb_error_t e = ZLB_ERROR_INIT;
  (void)opt;
  x->dtypes_given = 1;
  if (zlb_dtype_list_parse(v, &x->o->dtypes, &e)) {
    zlb_cli_errorf("%s: %s", name, e.msg);
    return -1;
  }
  return 0;
}

static int opt_timer(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  zlb_cli_run_extra_t *x = ptr;
  (void)opt;
  x->timer_given = 1;
  if (zlb_timer_parse(v, &x->o->timer))
    return zlb_cli_bad_value(name, v, "auto, graph, direct, trace or queue");
  return 0;
}

/* --l2 / ZL_L2: the graph and queue timers' L2 state (docs/timing.md,
 * "Cold L2"); an empty ZL_L2 is a bad value, not "unset". */
static int opt_l2(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  static const char *const words[] = {"warm", "cold", NULL};
  zlb_cli_run_extra_t *x = ptr;
  (void)opt;
  x->l2_given = 1;
  return zlb_cli_word_in(name, v, words, "cold or warm", &x->o->timing.l2_cold);
}

/* --trace-flush: whether the trace timer waits for each flush before
 * queueing the call (docs/timing.md, "Cold L2"). */
static int opt_trace_flush(const zlb_cli_option_t *opt, const char *name, const char *v,
                           void *ptr) {
  static const char *const words[] = {"waited", "queued", NULL};
  (void)opt;
  return zlb_cli_word_in(name, v, words, "waited or queued", ptr);
}

static int opt_repeat(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  zlb_cli_run_extra_t *x = ptr;
  (void)opt;
  x->repeat_given = 1;
  return set_positive_int(name, v, &x->o->timing.repeat);
}

static int opt_trials(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  zlb_cli_run_extra_t *x = ptr;
  long n;
  (void)opt;
  x->trials_given = 1;
  if (zlb_cli_long_in(name, v, 1, ZLB_RUN_MAX_TRIALS, "an integer from 1 to 16", &n))
    return -1;
  x->o->trials = (int)n;
  return 0;
}

static int opt_warmup(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  zlb_cli_run_extra_t *x = ptr;
  (void)opt;
  x->warmup_given = 1;
  return set_ms(name, v, &x->o->timing.warmup_ms);
}

static int opt_rep(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  zlb_cli_run_extra_t *x = ptr;
  (void)opt;
  x->rep_given = 1;
  return set_ms(name, v, &x->o->timing.rep_ms);
}

static int opt_stop(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  zlb_cli_run_extra_t *x = ptr;
  (void)opt;
  x->stop_given = 1;
  if (zlb_stop_parse(v, &x->o->timing.stop))
    return zlb_cli_bad_value(name, v, "budget or noise");
  return 0;
}

static int opt_autotune(const zlb_cli_option_t *opt, const char *name, const char *v,
                        void *ptr) {
  zlb_cli_run_extra_t *x = ptr;
  (void)opt;
  x->autotune_given = 1;
  return set_onoff(name, v, &x->o->autotune);
}

static int opt_seed(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  zlb_cli_run_extra_t *x = ptr;
  (void)opt;
  x->seed_given = 1;
  return set_seed(name, v, &x->o->seed);
}

/* Each environment default, applied by zlb_cli_run_finish() when its flag
 * was not given. */
static const struct {
  const char *env;
  zlb_cli_opt_fn fn;
  size_t given; /* offset of the flag's *_given field */
} env_defaults[] = {
    {"DTYPES", opt_dtypes, offsetof(zlb_cli_run_extra_t, dtypes_given)},
    {"ZL_DIRECT_REPEAT", opt_repeat, offsetof(zlb_cli_run_extra_t, repeat_given)},
    {"ZL_TRIALS", opt_trials, offsetof(zlb_cli_run_extra_t, trials_given)},
    {"ZL_STOP", opt_stop, offsetof(zlb_cli_run_extra_t, stop_given)},
    {"ZL_TIMER", opt_timer, offsetof(zlb_cli_run_extra_t, timer_given)},
    {"ZL_AUTOTUNE", opt_autotune, offsetof(zlb_cli_run_extra_t, autotune_given)},
    {"ZL_SEED", opt_seed, offsetof(zlb_cli_run_extra_t, seed_given)},
    {"ZL_WARMUP_MS", opt_warmup, offsetof(zlb_cli_run_extra_t, warmup_given)},
    {"ZL_REP_MS", opt_rep, offsetof(zlb_cli_run_extra_t, rep_given)},
};

/* A run option a batch passes on to its children. */
#define PASS(kind, name, arg, ptr, fn, help) \
  {ZLB_CLI_KIND_##kind, name, NULL, arg, help, ptr, fn, ZLB_CLI_PASS}

void zlb_cli_run_defaults(zlb_run_opts_t *o, zlb_cli_run_extra_t *x) {
  const char *e;
  zlb_run_opts_init(o);
  memset(x, 0, sizeof(*x));
  x->o = o;
  x->color = "auto";
  if ((e = getenv("ZL_BACKEND")) && *e)
    o->backend = e;
  if ((e = getenv("ZL_SHAPE_FILE")) && *e)
    o->shape_file = e;
  if ((e = getenv("ZL_DENY_CAPTURE")) && *e)
    zlb_strvec_split(&x->deny, e, ',');
  {
    const zlb_cli_option_t t[] = {
        ZLB_CLI_BACKEND(&o->backend, "cuda, musa, rocm, ascend, host or auto (env ZL_BACKEND; "
                                     "default auto)"),
        ZLB_CLI_CALLBACK("--dtypes", "LIST", opt_dtypes, x,
                         "comma-separated dtypes, e.g. float16,bfloat16 (env DTYPES;\n"
                         "default: the operator's float dtypes)"),
        PASS(STRING, "--shape-file", "FILE", &o->shape_file, NULL,
             "shape file, ours or FlagGems' core_shapes.yaml (env ZL_SHAPE_FILE;\n"
             "default assets/shapes.yaml, assets/shapes_host.yaml on host)"),
        PASS(CALLBACK, "--level", "LEVEL", &o->level, opt_level,
             "core or comprehensive (default core)"),
        PASS(CALLBACK, "--timer", "TIMER", x, opt_timer,
             "auto, graph, direct, trace or queue (env ZL_TIMER; default auto:\n"
             "graph where the backend has reliable graphs, else queue where it can\n"
             "hold a stream, else direct; trace: kernel-only time from the activity\n"
             "tracer, 'cupti' is an alias; queue: batches of calls queued behind a\n"
             "held stream, one event pair per batch)"),
        PASS(CALLBACK, "--queue-max-launches", "N", &o->timing.queue_max_launches,
             opt_queue_launches,
             "queue timer: at most N calls per batch, 1..1024 (default 256; the\n"
             "launch queue must hold every kernel of a batch)"),
        PASS(CALLBACK, "--queue-timeout-ms", "MS", &o->timing.queue_timeout_ms, opt_positive_ms,
             "queue timer: a watchdog releases a hold still in force after MS and\n"
             "the batch is discarded (default 200)"),
        PASS(CALLBACK, "--queue-batch-ms", "MS", &o->timing.queue_batch_ms, opt_positive_ms,
             "queue timer: queue enough calls per batch for MS (K = MS / estimate,\n"
             "at most --queue-max-launches; default 10): a longer batch spreads its\n"
             "hold, release and event pair over more calls"),
        PASS(FLAG, "--queue-calibrate", NULL, &o->timing.queue_calibrate, NULL,
             "queue timer: subtract what a launch costs the device, measured per\n"
             "row with batches of empty kernels whose own time the kernel tracer\n"
             "takes out; rows say timer queue-cal (needs --timer queue and a\n"
             "backend with an empty kernel and a tracer: cuda); with --l2 cold each\n"
             "call and empty kernel is timed between its own event pair after its\n"
             "flush, so no flush is in what is timed or subtracted"),
        PASS(FLAG, "--graph-calibrate", NULL, &o->timing.graph_calibrate, NULL,
             "graph timer with --l2 cold: time each call between its own event\n"
             "nodes in the graph, after its flush, less the gap an empty kernel's\n"
             "nodes measure (the kernel tracer takes the empty kernel's own time\n"
             "out); no flush is in what is timed or subtracted, so what a flush\n"
             "costs after the call cannot move the value; rows say timer\n"
             "graph-cal (needs a backend with graph event nodes, an empty kernel\n"
             "and a tracer: cuda)"),
        PASS(CALLBACK, "--l2", "MODE", x, opt_l2,
             "graph and queue timers: cold (an L2 flush before every call, the\n"
             "flush's own time measured alone and subtracted) or warm (env ZL_L2;\n"
             "default warm; the direct and trace timers always flush, see --no-flush)"),
        PASS(CALLBACK, "--trace-flush", "MODE", &o->timing.trace_flush_queued, opt_trace_flush,
             "trace timer: waited (the host waits for each L2 flush, then queues\n"
             "the call; default) or queued (the call goes into the stream right\n"
             "behind its flush, as the cold graph and queue timers' calls do, and\n"
             "starts while the flush's write-backs drain)"),
        PASS(CALLBACK, "--graph-replay-ms", "MS", &o->timing.graph_replay_ms, opt_positive_ms,
             "graph timer: capture enough calls per graph for MS a replay (K = MS /\n"
             "estimate, at most 1000; default 1): a longer replay spreads its launch\n"
             "over more calls"),
        PASS(CALLBACK, "--repeat", "N", x, opt_repeat,
             "direct measurements per row, median over them (env ZL_DIRECT_REPEAT;\n"
             "default 1; skipped for --quantiles and --return-mode all)"),
        PASS(CALLBACK, "--trials", "N", x, opt_trials,
             "measure each row N times, each on freshly allocated tensors, and\n"
             "report the median of the N values; where data lies in device memory\n"
             "can move a kernel by several per cent between processes, and trials\n"
             "show it inside one (env ZL_TRIALS; 1..16, default 1)"),
        PASS(CALLBACK, "--warmup-ms", "MS", x, opt_warmup,
             "warm-up budget per measurement (env ZL_WARMUP_MS; default 10)"),
        PASS(CALLBACK, "--rep-ms", "MS", x, opt_rep,
             "measurement budget (env ZL_REP_MS; default 40)"),
        PASS(CALLBACK, "--return-mode", "MODE", &o->timing.return_mode, opt_return_mode,
             "median, mean, min, max or all (default median)"),
        PASS(CALLBACK, "--stop", "RULE", x, opt_stop,
             "budget (sample for --rep-ms, as do_bench) or noise (until the\n"
             "relative spread is under --max-noise; env ZL_STOP; default budget)"),
        PASS(CALLBACK, "--max-noise", "PCT", &o->timing.max_noise, opt_max_noise,
             "noise target in percent (default 0.5)"),
        PASS(CALLBACK, "--min-samples", "N", &o->timing.min_samples, opt_positive_int,
             "noise stop: at least N samples (default 10)"),
        PASS(CALLBACK, "--min-time-ms", "MS", &o->timing.min_time_ms, opt_ms,
             "noise stop: at least this much measured time (default 2)"),
        PASS(CALLBACK, "--timeout-ms", "MS", &o->timing.timeout_ms, opt_ms,
             "noise stop: wall-clock limit per measurement (default 100)"),
        PASS(CALLBACK, "--quantiles", "Q,...", &o->timing, opt_quantiles,
             "report these quantiles (0..1) instead of one value"),
        PASS(SPLIT, "--deny-capture", "OPS", &x->deny, NULL,
             "comma-separated operators never to capture (env ZL_DENY_CAPTURE;\n"
             "assets/capture_deny.yaml is always read too)"),
        PASS(STRING, "--deny-file", "FILE", &o->deny_file, NULL,
             "another capture deny list instead of assets/capture_deny.yaml"),
        PASS(FLAG, "--no-flush", NULL, &o->no_flush, NULL,
             "do not flush the L2 cache before direct samples"),
        PASS(CALLBACK, "--flush-mib", "N", &o->timing.flush_bytes, opt_flush_mib,
             "the L2 flush's size in MiB, for every timer that flushes: the direct\n"
             "and trace timers (default the backend's, 256 MiB on CUDA) and the\n"
             "graph and queue timers with --l2 cold (default twice the L2); at\n"
             "least the device's L2"),
        PASS(CALLBACK, "--autotune", "on|off", x, opt_autotune,
             "let candidates pick a launch configuration per shape\n"
             "(env ZL_AUTOTUNE; default off)"),
        PASS(CALLBACK, "--seed", "N", x, opt_seed,
             "input and RNG seed (env ZL_SEED; default 24301)"),
        PASS(FLAG, "--integrity", NULL, &o->integrity, NULL,
             "for candidates that may game the benchmark: check the outputs of\n"
             "one timed sample chosen at random on fresh inputs, refuse work on\n"
             "another stream (needs a kernel tracer) and rates above the measured\n"
             "ceilings (env ZL_INTEGRITY=1; docs/integrity.md)"),
        PASS(FLAG, "--verbose", NULL, &o->verbose, NULL,
             "after each row, a '# phases (ms): ...' line with where its wall\n"
             "time went (env ZL_VERBOSE=1)"),
        ZLB_CLI_LIB(&x->libs),
        ZLB_CLI_CALLBACK("--color", "WHEN", opt_color, &x->color,
                         "auto, always or never (default auto; NO_COLOR disables colour)"),
        ZLB_CLI_END,
    };
    _Static_assert(sizeof(t) <= sizeof(x->table), "ZLB_CLI_RUN_TABLE_MAX is too small");
    memcpy(x->table, t, sizeof(t));
  }
}

int zlb_cli_run_finish(zlb_run_opts_t *o, zlb_cli_run_extra_t *x) {
  const char *nc = getenv("NO_COLOR"), *v0;
  for (size_t i = 0; i < sizeof(env_defaults) / sizeof(env_defaults[0]); i++) {
    const char *v = getenv(env_defaults[i].env);
    if (*(int *)((char *)x + env_defaults[i].given) || !v || !*v)
      continue;
    if (env_defaults[i].fn(NULL, env_defaults[i].env, v, x))
      return -1;
  }
  /* --l2 wins over ZL_L2; set but empty, ZL_L2 is refused as a bad value. */
  if (!x->l2_given && (v0 = getenv("ZL_L2")) && opt_l2(NULL, "ZL_L2", v0, x))
    return -1;
  if (!o->integrity && (v0 = getenv("ZL_INTEGRITY")) && *v0 &&
      set_onoff("ZL_INTEGRITY", v0, &o->integrity))
    return -1;
  /* --verbose wins over ZL_VERBOSE, which is checked only without it. */
  if (!o->verbose && (v0 = getenv("ZL_VERBOSE")) && *v0 && set_onoff("ZL_VERBOSE", v0, &o->verbose))
    return -1;
  /* Conflicts that need no device, refused here too so that `zlbench
   * batch` refuses them once instead of handing them to every child. */
  {
    zlb_error_t e = ZLB_ERROR_INIT;
    if (zlb_run_check_flush(o, &e) || zlb_run_check_calibration(o, &e)) {
      zlb_cli_errorf("%s", e.msg);
      return -1;
    }
  }
  o->deny_ops = &x->deny;
  o->libs = &x->libs;
  if (nc && *nc)
    o->color = 0;
  else if (!strcmp(x->color, "always"))
    o->color = 1;
  else if (!strcmp(x->color, "never"))
    o->color = 0;
  else
    o->color = isatty(STDOUT_FILENO);
  return 0;
}

void zlb_cli_run_extra_release(zlb_cli_run_extra_t *x) {
  zlb_strvec_release(&x->deny);
  zlb_strvec_release(&x->libs);
}

/* The first SIGINT or SIGTERM asks the run to finish its current case,
 * write everything and exit 130; a second one takes the default action. */
static volatile int run_interrupted;

static void run_on_signal(int sig) {
  run_interrupted = 1;
  signal(sig, SIG_DFL);
}

static void run_emit(void *ctx, const char *text) {
  (void)ctx;
  fputs(text, stdout);
  fflush(stdout);
}

void zlb_cli_run_attach(zlb_run_opts_t *o) {
  o->emit = run_emit;
  o->interrupted = &run_interrupted;
  signal(SIGINT, run_on_signal);
  signal(SIGTERM, run_on_signal);
}

int zlb_cli_opt_device(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  long d;
  (void)opt;
  if (zlb_cli_long_in(name, v, 0, 4096, "a device ordinal (0..4096)", &d))
    return -1;
  *(int *)ptr = (int)d;
  return 0;
}
