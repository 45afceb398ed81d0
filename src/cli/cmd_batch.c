/* `zlbench batch`: screen many operators on every device. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_opts.h"
#include "zlbench/batch.h"
#include "zlbench/ops.h"
#include "zlbench/yaml.h"

static volatile int interrupted;

static void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

/* Live display: a block of per-device lines redrawn in place; finished
 * operators scroll above it. */
struct display {
  int live;
  int lines; /* lines of the block currently on screen */
  char *block;
  int gone;  /* stdout's reader went away (EPIPE): nothing more is printed */
};

/* After a write to stdout: a reader that went away stops the printing,
 * never the batch. */
static void check_stdout(struct display *d) {
  if (fflush(stdout) == EOF && errno == EPIPE)
    d->gone = 1;
  clearerr(stdout);
}

static void clear_block(struct display *d) {
  if (d->lines) {
    printf("\033[%dA\033[J", d->lines);
    d->lines = 0;
  }
}

static void draw_block(struct display *d) {
  if (!d->block)
    return;
  fputs(d->block, stdout);
  for (const char *p = d->block; *p; p++)
    d->lines += *p == '\n';
}

static void on_line(void *ctx, const char *text) {
  struct display *d = ctx;
  if (d->gone)
    return;
  if (d->live)
    clear_block(d);
  fputs(text, stdout);
  if (d->live)
    draw_block(d);
  check_stdout(d);
}

static void on_status(void *ctx, const char *block) {
  struct display *d = ctx;
  if (d->gone)
    return;
  clear_block(d);
  free(d->block);
  d->block = zlb_xstrdup(block);
  draw_block(d);
  check_stdout(d);
}

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fprintf(f,
          "usage: zlbench batch [options] [run options]\n\n"
          "Screen the curated corpus (assets/inventory.yaml minus assets/dismiss.yaml), or the\n"
          "operators given, on every visible device: each operator runs as 'zlbench run' in\n"
          "its own child process and process group, on device fnv1a64(name) mod ndevices,\n"
          "with a time limit, retries, dtype fallback and resume. With no arguments it\n"
          "screens the default corpus of the auto-selected backend (the host corpus on a\n"
          "machine without an accelerator) into a fresh folder. With --provider flaggems\n"
          "it screens a FlagGems checkout's pytest benchmarks instead, one pytest child\n"
          "per operator timed by zlbench (-p zlbench.pytest_plugin).\n\n");
  zlb_cli_help(f, opts);
  fprintf(f, "\nexit codes: 0 every operator ok, 1 some failed, 2 usage or input error,\n"
             "3 backend unavailable, 6 cannot write results, 130 interrupted (rerun to resume)\n");
}

static int read_ops_file(const char *path, zlb_strvec_t *ops) {
  char *text = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strvec_t lines = ZLB_STRVEC_INIT;
  if (zlb_read_file_max(path, ZLB_READ_MAX_YAML, "an --ops-file", &text, NULL, &err))
    return zlb_cli_fail(&err);
  zlb_strvec_split(&lines, text, '\n');
  for (size_t i = 0; i < lines.n; i++) {
    char *hash = strchr(lines.v[i], '#');
    if (hash)
      *hash = '\0';
    zlb_trim(lines.v[i]);
    if (lines.v[i][0])
      zlb_strvec_push(ops, lines.v[i]);
  }
  zlb_strvec_release(&lines);
  free(text);
  return 0;
}

static int opt_ops_file(const zlb_cli_option_t *opt, const char *name, const char *v,
                        void *ptr) {
  (void)opt;
  (void)name;
  return read_ops_file(v, ptr) ? -1 : 0;
}

static int opt_seconds(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  double s;
  (void)opt;
  if (zlb_parse_double(v, &s) || s <= 0)
    return zlb_cli_bad_value(name, v, "a positive number of seconds");
  *(double *)ptr = s;
  return 0;
}

static int opt_retries(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  long n;
  (void)opt;
  if (zlb_cli_long_in(name, v, 0, 100, "0..100", &n))
    return -1;
  *(int *)ptr = (int)n;
  return 0;
}

static int opt_jobs(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  long n;
  (void)opt;
  if (zlb_cli_long_in(name, v, 1, 64, "1..64", &n))
    return -1;
  *(int *)ptr = (int)n;
  return 0;
}

static int opt_replay_from(const zlb_cli_option_t *opt, const char *name, const char *v,
                           void *ptr) {
  (void)opt;
  if (!zlb_is_dir(v)) {
    zlb_cli_errorf("%s: '%s' is not a folder", name, v);
    return -1;
  }
  *(const char **)ptr = v;
  return 0;
}

static int opt_replay(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  (void)opt;
  const char *eq = strchr(v, '=');
  if (!eq || v[0] == '=' || !eq[1])
    return zlb_cli_bad_value(name, v, "OP=DIR (an operator and a folder, neither empty)");
  if (!zlb_is_dir(eq + 1)) {
    zlb_cli_errorf("%s: '%s' is not a folder", name, eq + 1);
    return -1;
  }
  zlb_strvec_push(ptr, v);
  return 0;
}

static int opt_progress(const zlb_cli_option_t *opt, const char *name, const char *v,
                        void *ptr) {
  (void)opt;
  if (strcmp(v, "auto") && strcmp(v, "always") && strcmp(v, "never"))
    return zlb_cli_bad_value(name, v, "auto, always or never");
  *(const char **)ptr = v;
  return 0;
}

/* A value out of a fixed list (the list is the option's `arg`, '|'-separated). */
static int opt_choice(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  const char *p = opt->arg;
  size_t n = strlen(v);
  while (p && *p) {
    const char *e = strchr(p, '|');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !strncmp(p, v, n)) {
      *(const char **)ptr = v;
      return 0;
    }
    p = e ? e + 1 : NULL;
  }
  return zlb_cli_bad_value(name, v, opt->arg);
}

static int opt_flaggems(const zlb_cli_option_t *opt, const char *name, const char *v,
                        void *ptr) {
  (void)opt;
  if (!zlb_is_dir(v)) {
    zlb_cli_errorf("%s: '%s' is not a folder", name, v);
    return -1;
  }
  *(const char **)ptr = v;
  return 0;
}

/* The run options' input files, checked once here with the parsers the
 * children use, so that a malformed one is one error (exit 2, its
 * file:line) before anything runs, not a usage_error in every child. A
 * FlagGems shape file is FlagGems' to read: only its YAML is checked. */
static int check_input_files(const zlb_run_opts_t *ro, int flaggems) {
  zlb_error_t err = ZLB_ERROR_INIT;
  int rc = 0;
  if (ro->shape_file) {
    zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
    if ((rc = zlb_yaml_load_file(ro->shape_file, &doc, &err)))
      goto out_doc;
    if (doc.root && !zlb_yaml_is_null(doc.root) && doc.root->kind != ZLB_YAML_MAP) {
      rc = zlb_error_set(&err, ZLB_EPARSE,
                         "%s:%d: a shape file must be a map of operator or family names",
                         ro->shape_file, doc.root->line);
      goto out_doc;
    }
    for (size_t i = 0; !flaggems && doc.root && doc.root->kind == ZLB_YAML_MAP && i < doc.root->n;
         i++) {
      zlb_shape_list_t l;
      const char *key = doc.root->keys[i];
      if ((rc = zlb_shapes_resolve(ro->shape_file, key, key, 0, 0, &l, &err)))
        break;
      zlb_shape_list_release(&l);
    }
  out_doc:
    zlb_yaml_doc_release(&doc);
    if (rc)
      goto out;
  }
  if (ro->deny_file) {
    zlb_strvec_t denied = ZLB_STRVEC_INIT;
    rc = zlb_deny_load(ro->deny_file, &denied, &err);
    zlb_strvec_release(&denied);
  }
out:
  if (rc) {
    zlb_cli_errorf("%s", err.msg[0] ? err.msg : zlb_strerror(err.code));
    /* Whatever the class, a bad input file is the caller's to fix. */
    return -1;
  }
  return 0;
}

int zlb_cmd_batch(int argc, char **argv) {
  zlb_batch_opts_t o;
  zlb_batch_result_t res;
  zlb_run_opts_t ro;
  zlb_cli_run_extra_t rx;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT, exe = ZLB_STRBUF_INIT;
  struct display disp = {0, 0, NULL, 0};
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  const char *progress = "auto", *shard = NULL, *outarg = NULL, *baseline = NULL;
  int code = ZLB_EXIT_OK, rc;
  char fgdir[PATH_MAX];

  zlb_batch_opts_init(&o);
  zlb_cli_run_defaults(&ro, &rx);
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_SECTION("selection and devices:"),
        {ZLB_CLI_KIND_SPLIT, "--devices", "--gpus", "LIST",
         "device ordinals, e.g. 0,1 (alias --gpus; default all visible)", &o.devices, NULL, 0},
        ZLB_CLI_SPLIT("--ops", "LIST", &o.ops, "these operators instead of the inventory"),
        ZLB_CLI_CALLBACK("--ops-file", "FILE", opt_ops_file, &o.ops,
                         "operators from a file (one per line, # comments)"),
        ZLB_CLI_STRING("--inventory", "FILE", &o.inventory_path,
                       "another inventory (default assets/inventory.yaml)"),
        ZLB_CLI_STRING("--dismiss", "FILE", &o.dismiss_path,
                       "another dismiss list (default assets/dismiss.yaml)"),
        ZLB_CLI_STRING("--shard", "I/N", &shard,
                       "only this host shard: (fnv1a64(name) >> 32) mod N == I;\n"
                       "default from SLURM_ARRAY_TASK_*, SLURM_PROCID/SLURM_NTASKS or\n"
                       "JOB_COMPLETION_INDEX with ZL_SHARD_COUNT"),
        ZLB_CLI_SECTION("providers (where the operators come from):"),
        ZLB_CLI_CALLBACK("--provider", "zlbench|flaggems", opt_choice, &o.provider,
                         "zlbench: the C corpus (default); flaggems: FlagGems' pytest\n"
                         "benchmarks, one pytest child per operator, timed by zlbench\n"
                         "(-p zlbench.pytest_plugin)"),
        ZLB_CLI_CALLBACK("--flaggems", "DIR", opt_flaggems, &o.flaggems_dir,
                         "root of the FlagGems checkout (benchmark/, src/, conf/)"),
        ZLB_CLI_CALLBACK("--stage", "stable|beta|alpha", opt_choice, &o.stage,
                         "flaggems: operators at this stage or a more mature one\n"
                         "(conf/operators.yaml); default every benchmarked operator"),
        ZLB_CLI_CALLBACK("--mode", "kernel|cudagraph|operator|wrapper", opt_choice, &o.fg_mode,
                         "flaggems: its --mode (default kernel; kernel and cudagraph\n"
                         "are timed by zlbench); SHAPE_MODE=upstream keeps FlagGems'\n"
                         "shapes over --shape-file, TEST_NODE replaces the node\n"
                         "('{op}' for the operator)"),
        ZLB_CLI_FLAG("--list", &o.list_only,
                     "print the operators this batch would run, one a line (name\n"
                     "first), and run nothing"),
        ZLB_CLI_SECTION("robustness:"),
        ZLB_CLI_CALLBACK("--timeout", "S", opt_seconds, &o.timeout_s,
                         "per child, then SIGTERM to its group, then SIGKILL (default 1800)"),
        ZLB_CLI_CALLBACK("--grace", "S", opt_seconds, &o.grace_s,
                         "seconds between SIGTERM and SIGKILL (default 5)"),
        ZLB_CLI_CALLBACK("--retries", "N", opt_retries, &o.retries,
                         "retries of transient failures (default 2); a failure whose\n"
                         "signature repeats stops retrying"),
        ZLB_CLI_CALLBACK("--jobs-per-device", "N", opt_jobs, &o.jobs_per_device,
                         "children at a time on each device (default 1); more screen\n"
                         "faster, for whether operators run, not for their timings,\n"
                         "which disturb each other (recorded as a caliber: compare\n"
                         "refuses to mix them with timings of one child per device);\n"
                         "a device whose children run out of memory takes fewer"),
        ZLB_CLI_SECTION("outputs:"),
        ZLB_CLI_STRING("--out", "DIR", &outarg,
                       "output folder (default zlb-out/<timestamp>); re-running into\n"
                       "the same folder skips finished operators"),
        ZLB_CLI_FLAG("--force", &o.force, "re-run finished operators too"),
        ZLB_CLI_CALLBACK("--replay-from", "DIR", opt_replay_from, &o.replay_from,
                         "reuse finished results of an earlier batch folder"),
        ZLB_CLI_CALLBACK("--replay", "OP=DIR", opt_replay, &o.replay,
                         "reuse one operator's results from DIR (repeatable)"),
        ZLB_CLI_CALLBACK("--progress", "WHEN", opt_progress, &progress,
                         "auto, always or never: the live per-device display"),
        ZLB_CLI_CALLBACK("--baseline", "vendor|torch", opt_choice, &baseline,
                         "vendor: each library's own baseline (default); torch: when\n"
                         "the batch ends, time every SUCCESS case through torch on the\n"
                         "first device (python3 -m zlbench.torch_baseline;\n"
                         "torch_baseline.json in the output folder)"),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_SECTION("\nrun options (see zlbench run --help): --backend, --dtypes (for every\n"
                        "operator), --lib and --color are the batch's own; the others are\n"
                        "checked here and passed to every child:"),
        /* Validated here, passed on verbatim (ZLB_CLI_PASS) to every child. */
        ZLB_CLI_INCLUDE(rx.table),
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("batch", opts, argc, argv, &args, &o.run_args)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      goto done;
    case ZLB_CLI_BAD:
      goto usage_error;
    default:
      break;
    }
  }
  if (args.n) {
    zlb_cli_errorf("unexpected argument '%s' for 'zlbench batch': operators go in --ops "
                   "(see zlbench batch --help)",
                   args.v[0]);
    goto usage_error;
  }
  if (outarg)
    zlb_strbuf_addstr(&out, outarg);
  if (zlb_cli_run_finish(&ro, &rx))
    goto usage_error;
  if (check_input_files(&ro, o.flaggems_dir || (o.provider && !strcmp(o.provider, "flaggems"))))
    goto usage_error;
  o.backend = ro.backend;
  o.flush_bytes = ro.timing.flush_bytes;
  if (ro.dtypes) {
    for (int d = 0; d < ZLB_DT_COUNT; d++)
      if (ro.dtypes & ZLB_DT_BIT(d))
        zlb_strvec_push(&o.dtypes, zlb_dtype_name((zlb_dtype_t)d));
  }
  for (size_t k = 0; k < rx.libs.n; k++)
    zlb_strvec_push(&o.lib_args, rx.libs.v[k]);
  if (zlb_shard_resolve(shard, &o.shard_index, &o.shard_count, o.shard_source,
                        sizeof(o.shard_source), &err)) {
    code = zlb_cli_fail(&err);
    goto done;
  }
  if (zlb_exe_dir(&exe, &err)) {
    code = zlb_cli_fail(&err);
    goto done;
  }
  zlb_strbuf_addstr(&exe, "/zlbench");
  o.exe = exe.buf;
  if (!out.len) {
    char ts[32];
    zlb_timestamp_compact(ts, sizeof(ts));
    zlb_strbuf_addf(&out, "zlb-out/%s", ts);
  }
  o.out_dir = out.buf;
  o.argc = argc;
  o.argv = argv;
  disp.live = !strcmp(progress, "always") ||
              (!strcmp(progress, "auto") && isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
  o.live = disp.live;
  o.line = on_line;
  o.status = on_status;
  o.cb_ctx = &disp;
  o.interrupted = &interrupted;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);

  if (o.flaggems_dir) {
    /* Absolute: the children's paths and PYTHONPATH are built from it. */
    if (!realpath(o.flaggems_dir, fgdir)) {
      zlb_cli_errorf("--flaggems: cannot resolve '%s'", o.flaggems_dir);
      goto usage_error;
    }
    o.flaggems_dir = fgdir;
    if (!o.provider)
      o.provider = "flaggems";
  }
  if (baseline && !strcmp(baseline, "torch") && o.provider && !strcmp(o.provider, "flaggems")) {
    zlb_cli_errorf("--baseline torch: FlagGems' benchmarks already time torch as their baseline");
    goto usage_error;
  }
  if (o.list_only) {
    o.live = 0;
    rc = zlb_batch_run(&o, &res, &err);
    code = rc ? zlb_cli_fail(&err) : ZLB_EXIT_OK;
    goto done;
  }
  printf("zlbench batch: backend %s, output %s\n", o.backend ? o.backend : "auto", o.out_dir);
  if (o.shard_count > 1)
    printf("zlbench batch: host shard %d of %d (%s)\n", o.shard_index, o.shard_count,
           o.shard_source);
  check_stdout(&disp);
  rc = zlb_batch_run(&o, &res, &err);
  if (disp.live && !disp.gone)
    clear_block(&disp);
  if (rc && rc != ZLB_EINTR) {
    code = zlb_cli_fail(&err);
    goto done;
  }
  printf("zlbench batch: %d operators: %d ok, %d failed%s%s%s, %d resumed, %d replayed in %.1f s\n",
         res.total, res.ok, res.failed, res.not_ok[0] ? " (" : "", res.not_ok,
         res.not_ok[0] ? ")" : "", res.skipped, res.replayed, res.seconds);
  printf("results: %s (ops_status.csv, summary.csv, ops/<op>/run.log)\n", o.out_dir);
  if (rc == ZLB_EINTR) {
    printf("interrupted: run the same command again to resume\n");
    code = ZLB_EXIT_INTERRUPTED;
  } else {
    code = res.failed ? ZLB_EXIT_FAILED : ZLB_EXIT_OK;
    if (baseline && !strcmp(baseline, "torch")) {
      int dev = o.devices.n ? atoi(o.devices.v[0]) : 0;
      int t = zlb_cli_torch_baseline(o.out_dir, dev);
      if (code == ZLB_EXIT_OK)
        code = t;
    }
  }
  goto done;
usage_error:
  code = ZLB_EXIT_USAGE;
done:
  free(disp.block);
  zlb_strvec_release(&args);
  zlb_batch_opts_release(&o);
  zlb_cli_run_extra_release(&rx);
  zlb_strbuf_release(&out);
  zlb_strbuf_release(&exe);
  return code;
}

/* The batch options `zlbench slurm` and `zlbench k8s` pass on, read here
 * with batch's own table (check mode: paths are the cluster's, not looked
 * at) so that a bad one fails now rather than on every node. */
int zlb_cli_batch_check(const zlb_strvec_t *args) {
  char cmd[] = "batch";
  char **argv = zlb_xcalloc(args->n + 2, sizeof(*argv));
  int rc;
  argv[0] = cmd;
  for (size_t i = 0; i < args->n; i++)
    argv[i + 1] = args->v[i];
  zlb_cli_check_begin();
  (void)zlb_cmd_batch((int)args->n + 1, argv);
  rc = zlb_cli_check_end();
  free(argv);
  return rc;
}
