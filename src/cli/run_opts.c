/* Options shared by `zlbench run` and `zlbench batch` (which passes them on
 * to each child), with their environment-variable defaults. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_opts.h"

const char zlb_cli_run_options_help[] =
    "  --backend NAME        cuda, musa, rocm, ascend, host or auto (env ZL_BACKEND; default auto)\n"
    "  --dtypes LIST         comma-separated dtypes, e.g. float16,bfloat16 (env DTYPES;\n"
    "                        default: the operator's float dtypes)\n"
    "  --shape-file FILE     shape file, ours or FlagGems' core_shapes.yaml (env ZL_SHAPE_FILE;\n"
    "                        default assets/shapes.yaml, assets/shapes_host.yaml on host)\n"
    "  --level LEVEL         core or comprehensive (default core)\n"
    "  --timer TIMER         auto, graph, direct or cupti (env ZL_TIMER; default auto: graph\n"
    "                        where the backend has reliable graphs, else direct; cupti: kernel-only\n"
    "                        time from the activity tracer)\n"
    "  --repeat N            direct measurements per row, median over them (env ZL_DIRECT_REPEAT;\n"
    "                        default 1; skipped for --quantiles and --return-mode all)\n"
    "  --warmup-ms MS        warm-up budget per measurement (env ZL_WARMUP_MS; default 10)\n"
    "  --rep-ms MS           measurement budget (env ZL_REP_MS; default 40)\n"
    "  --return-mode MODE    median, mean, min, max or all (default median)\n"
    "  --stop RULE           budget (sample for --rep-ms, as do_bench) or noise (until the\n"
    "                        relative spread is under --max-noise; env ZL_STOP; default budget)\n"
    "  --max-noise PCT       noise target in percent (default 0.5)\n"
    "  --min-samples N       noise stop: at least N samples (default 10)\n"
    "  --min-time-ms MS      noise stop: at least this much measured time (default 2)\n"
    "  --timeout-ms MS       noise stop: wall-clock limit per measurement (default 100)\n"
    "  --quantiles Q,...     report these quantiles (0..1) instead of one value\n"
    "  --deny-capture OPS    comma-separated operators never to capture (env ZL_DENY_CAPTURE;\n"
    "                        assets/capture_deny.yaml is always read too)\n"
    "  --deny-file FILE      another capture deny list instead of assets/capture_deny.yaml\n"
    "  --no-flush            do not flush the L2 cache before direct samples\n"
    "  --autotune on|off     let candidates pick a launch configuration per shape\n"
    "                        (env ZL_AUTOTUNE; default off)\n"
    "  --seed N              input and RNG seed (env ZL_SEED; default 24301)\n"
    "  --lib PATH            load another operator library (repeatable; env ZL_OP_LIBS, ':'-separated)\n"
    "  --color WHEN          auto, always or never (default auto; NO_COLOR disables colour)\n";

void zlb_cli_run_defaults(zlb_run_opts_t *o, zlb_cli_run_extra_t *x) {
  const char *e;
  zlb_run_opts_init(o);
  memset(x, 0, sizeof(*x));
  x->color = "auto";
  if ((e = getenv("ZL_BACKEND")) && *e)
    o->backend = e;
  if ((e = getenv("ZL_SHAPE_FILE")) && *e)
    o->shape_file = e;
  x->env_dtypes = getenv("DTYPES");
  x->env_repeat = getenv("ZL_DIRECT_REPEAT");
  x->env_timer = getenv("ZL_TIMER");
  x->env_stop = getenv("ZL_STOP");
  x->env_autotune = getenv("ZL_AUTOTUNE");
  x->env_seed = getenv("ZL_SEED");
  x->env_warmup = getenv("ZL_WARMUP_MS");
  x->env_rep = getenv("ZL_REP_MS");
  if ((e = getenv("ZL_DENY_CAPTURE")) && *e)
    zlb_strvec_split(&x->deny, e, ',');
}

static int bad(const char *opt, const char *v, const char *want) {
  zlb_cli_errorf("invalid value '%s' for %s: expected %s", v, opt, want);
  return -1;
}

static int set_positive_int(const char *opt, const char *v, int *out) {
  long n;
  if (zlb_parse_long(v, &n) || n < 1 || n > 1000000)
    return bad(opt, v, "a positive integer");
  *out = (int)n;
  return 1;
}

static int set_ms(const char *opt, const char *v, double *out) {
  double d;
  if (zlb_parse_double(v, &d) || d < 0 || d > 1e7)
    return bad(opt, v, "a non-negative number of milliseconds");
  *out = d;
  return 1;
}

static int set_onoff(const char *opt, const char *v, int *out) {
  if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true"))
    *out = 1;
  else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false"))
    *out = 0;
  else
    return bad(opt, v, "on or off");
  return 1;
}

static int set_timer(const char *opt, const char *v, zlb_timer_kind_t *t) {
  if (zlb_timer_parse(v, t))
    return bad(opt, v, "auto, graph, direct or cupti");
  return 1;
}

static int set_seed(const char *opt, const char *v, uint64_t *out) {
  char *end;
  unsigned long long s = strtoull(v, &end, 0);
  if (!*v || *end)
    return bad(opt, v, "an integer");
  *out = s;
  return 1;
}

static int set_dtypes(const char *opt, const char *v, uint32_t *mask) {
  zlb_error_t e = ZLB_ERROR_INIT;
  if (zlb_dtype_list_parse(v, mask, &e)) {
    zlb_cli_errorf("%s: %s", opt, e.msg);
    return -1;
  }
  return 1;
}

static int set_quantiles(const char *v, zlb_timing_opts_t *t) {
  zlb_strvec_t q = ZLB_STRVEC_INIT;
  int rc = 1;
  zlb_strvec_split(&q, v, ',');
  if (q.n == 0 || q.n > ZLB_MAX_QUANTILES)
    rc = bad("--quantiles", v, "1 to 8 comma-separated numbers in [0, 1]");
  for (size_t i = 0; rc == 1 && i < q.n; i++) {
    double d;
    if (zlb_parse_double(q.v[i], &d) || d < 0 || d > 1)
      rc = bad("--quantiles", q.v[i], "a number in [0, 1]");
    else
      t->quantiles[i] = d;
  }
  if (rc == 1)
    t->nquantiles = (int)q.n;
  zlb_strvec_release(&q);
  return rc;
}

int zlb_cli_run_opt(int argc, char **argv, int *i, zlb_run_opts_t *o,
                    zlb_cli_run_extra_t *x) {
  const char *v;
  int r;
#define OPT(name) ((r = zlb_cli_opt(argc, argv, i, name, &v)) != 0)
  if (OPT("--backend"))
    return r < 0 ? r : (o->backend = v, 1);
  if (OPT("--dtypes"))
    return r < 0 ? r : (x->dtypes_given = 1, set_dtypes("--dtypes", v, &o->dtypes));
  if (OPT("--shape-file"))
    return r < 0 ? r : (o->shape_file = v, 1);
  if (OPT("--level")) {
    if (r < 0)
      return r;
    if (!strcmp(v, "core"))
      o->level = 0;
    else if (!strcmp(v, "comprehensive"))
      o->level = 1;
    else
      return bad("--level", v, "core or comprehensive");
    return 1;
  }
  if (OPT("--timer"))
    return r < 0 ? r : (x->timer_given = 1, set_timer("--timer", v, &o->timer));
  if (OPT("--repeat"))
    return r < 0 ? r : (x->repeat_given = 1, set_positive_int("--repeat", v, &o->timing.repeat));
  if (OPT("--warmup-ms"))
    return r < 0 ? r : (x->warmup_given = 1, set_ms("--warmup-ms", v, &o->timing.warmup_ms));
  if (OPT("--rep-ms"))
    return r < 0 ? r : (x->rep_given = 1, set_ms("--rep-ms", v, &o->timing.rep_ms));
  if (OPT("--return-mode")) {
    if (r < 0)
      return r;
    if (zlb_return_mode_parse(v, &o->timing.return_mode))
      return bad("--return-mode", v, "median, mean, min, max or all");
    return 1;
  }
  if (OPT("--stop")) {
    if (r < 0)
      return r;
    if (zlb_stop_parse(v, &o->timing.stop))
      return bad("--stop", v, "budget or noise");
    x->stop_given = 1;
    return 1;
  }
  if (OPT("--max-noise")) {
    double pct;
    if (r < 0)
      return r;
    if (zlb_parse_double(v, &pct) || pct <= 0 || pct > 100)
      return bad("--max-noise", v, "a percentage in (0, 100]");
    o->timing.max_noise = pct / 100.0;
    return 1;
  }
  if (OPT("--min-samples"))
    return r < 0 ? r : set_positive_int("--min-samples", v, &o->timing.min_samples);
  if (OPT("--min-time-ms"))
    return r < 0 ? r : set_ms("--min-time-ms", v, &o->timing.min_time_ms);
  if (OPT("--timeout-ms"))
    return r < 0 ? r : set_ms("--timeout-ms", v, &o->timing.timeout_ms);
  if (OPT("--quantiles"))
    return r < 0 ? r : set_quantiles(v, &o->timing);
  if (OPT("--deny-capture"))
    return r < 0 ? r : (zlb_strvec_split(&x->deny, v, ','), 1);
  if (OPT("--deny-file"))
    return r < 0 ? r : (o->deny_file = v, 1);
  if (zlb_cli_flag(argv, *i, "--no-flush"))
    return o->no_flush = 1, 1;
  if (OPT("--autotune"))
    return r < 0 ? r : (x->autotune_given = 1, set_onoff("--autotune", v, &o->autotune));
  if (OPT("--seed"))
    return r < 0 ? r : (x->seed_given = 1, set_seed("--seed", v, &o->seed));
  if (OPT("--lib"))
    return r < 0 ? r : (zlb_strvec_push(&x->libs, v), 1);
  if (OPT("--color")) {
    if (r < 0)
      return r;
    if (strcmp(v, "auto") && strcmp(v, "always") && strcmp(v, "never"))
      return bad("--color", v, "auto, always or never");
    x->color = v;
    return 1;
  }
#undef OPT
  return 0;
}

int zlb_cli_run_finish(zlb_run_opts_t *o, zlb_cli_run_extra_t *x) {
  const char *nc = getenv("NO_COLOR");
  /* Environment defaults apply where the flag was not given. */
  if (!x->dtypes_given && x->env_dtypes && *x->env_dtypes &&
      set_dtypes("DTYPES", x->env_dtypes, &o->dtypes) < 0)
    return -1;
  if (!x->repeat_given && x->env_repeat && *x->env_repeat &&
      set_positive_int("ZL_DIRECT_REPEAT", x->env_repeat, &o->timing.repeat) < 0)
    return -1;
  if (!x->stop_given && x->env_stop && *x->env_stop && zlb_stop_parse(x->env_stop, &o->timing.stop)) {
    zlb_cli_errorf("invalid value '%s' for ZL_STOP: expected budget or noise", x->env_stop);
    return -1;
  }
  if (!x->timer_given && x->env_timer && *x->env_timer &&
      set_timer("ZL_TIMER", x->env_timer, &o->timer) < 0)
    return -1;
  if (!x->autotune_given && x->env_autotune && *x->env_autotune &&
      set_onoff("ZL_AUTOTUNE", x->env_autotune, &o->autotune) < 0)
    return -1;
  if (!x->seed_given && x->env_seed && *x->env_seed &&
      set_seed("ZL_SEED", x->env_seed, &o->seed) < 0)
    return -1;
  if (!x->warmup_given && x->env_warmup && *x->env_warmup &&
      set_ms("ZL_WARMUP_MS", x->env_warmup, &o->timing.warmup_ms) < 0)
    return -1;
  if (!x->rep_given && x->env_rep && *x->env_rep &&
      set_ms("ZL_REP_MS", x->env_rep, &o->timing.rep_ms) < 0)
    return -1;
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
