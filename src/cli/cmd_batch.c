/* `zlbench batch`: screen many operators on every device. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_opts.h"
#include "zlbench/batch.h"
#include "zlbench/ops.h"

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
};

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
  if (d->live)
    clear_block(d);
  fputs(text, stdout);
  if (d->live)
    draw_block(d);
  fflush(stdout);
}

static void on_status(void *ctx, const char *block) {
  struct display *d = ctx;
  clear_block(d);
  free(d->block);
  d->block = zlb_xstrdup(block);
  draw_block(d);
  fflush(stdout);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: zlbench batch [options] [run options]\n\n"
          "Screen the curated corpus (assets/inventory.yaml minus assets/dismiss.yaml), or the\n"
          "operators given, on every visible device: each operator runs as 'zlbench run' in\n"
          "its own child process and process group, on device fnv1a64(name) mod ndevices,\n"
          "with a time limit, retries, dtype fallback and resume. With no arguments it\n"
          "screens the default corpus of the auto-selected backend (the host corpus on a\n"
          "machine without an accelerator) into a fresh folder.\n\n"
          "selection and devices:\n"
          "  --backend NAME        cuda, musa, rocm, ascend, host or auto (env ZL_BACKEND)\n"
          "  --devices LIST        device ordinals, e.g. 0,1 (alias --gpus; default all visible)\n"
          "  --ops LIST            these operators instead of the inventory\n"
          "  --ops-file FILE       operators from a file (one per line, # comments)\n"
          "  --inventory FILE      another inventory (default assets/inventory.yaml)\n"
          "  --dismiss FILE        another dismiss list (default assets/dismiss.yaml)\n"
          "  --shard I/N           only this host shard: (fnv1a64(name) >> 32) mod N == I;\n"
          "                        default from SLURM_ARRAY_TASK_*, SLURM_PROCID/SLURM_NTASKS or\n"
          "                        JOB_COMPLETION_INDEX with ZL_SHARD_COUNT\n"
          "  --dtypes LIST         dtypes for every operator (env DTYPES)\n"
          "robustness:\n"
          "  --timeout S           per child, then SIGTERM to its group, then SIGKILL (default 1800)\n"
          "  --grace S             seconds between SIGTERM and SIGKILL (default 5)\n"
          "  --retries N           retries of transient failures (default 2); a failure whose\n"
          "                        signature repeats stops retrying\n"
          "outputs:\n"
          "  --out DIR             output folder (default zlb-out/<timestamp>); re-running into\n"
          "                        the same folder skips finished operators\n"
          "  --force               re-run finished operators too\n"
          "  --replay-from DIR     reuse finished results of an earlier batch folder\n"
          "  --replay OP=DIR       reuse one operator's results from DIR (repeatable)\n"
          "  --progress WHEN       auto, always or never: the live per-device display\n"
          "  --lib PATH            another operator library (repeatable; env ZL_OP_LIBS)\n"
          "  -h, --help            this text\n\n"
          "run options passed to every child (see zlbench run --help):\n"
          "  --timer --repeat --warmup-ms --rep-ms --return-mode --quantiles --stop --max-noise\n"
          "  --min-samples --min-time-ms --timeout-ms --deny-capture --deny-file --no-flush\n"
          "  --autotune --seed --shape-file --level\n\n"
          "exit codes: 0 every operator ok, 1 some failed, 2 usage or input error,\n"
          "3 backend unavailable, 6 cannot write results, 130 interrupted (rerun to resume)\n");
}

static int read_ops_file(const char *path, zlb_strvec_t *ops) {
  char *text = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strvec_t lines = ZLB_STRVEC_INIT;
  if (zlb_read_file(path, &text, NULL, &err))
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

int zlb_cmd_batch(int argc, char **argv) {
  zlb_batch_opts_t o;
  zlb_batch_result_t res;
  zlb_run_opts_t ro;
  zlb_cli_run_extra_t rx;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT, exe = ZLB_STRBUF_INIT;
  struct display disp = {0, 0, NULL};
  const char *v, *progress = "auto", *shard = NULL;
  int code = ZLB_EXIT_OK, r, rc;

  zlb_batch_opts_init(&o);
  zlb_cli_run_defaults(&ro, &rx);
  for (int i = 1; i < argc; i++) {
    int start = i;
    if (zlb_cli_is_help(argv[i])) {
      usage(stdout);
      goto done;
    }
#define OPT(name) ((r = zlb_cli_opt(argc, argv, &i, name, &v)) != 0)
    if (OPT("--devices") || OPT("--gpus")) {
      if (r < 0)
        goto usage_error;
      zlb_strvec_split(&o.devices, v, ',');
    } else if (OPT("--ops")) {
      if (r < 0)
        goto usage_error;
      zlb_strvec_split(&o.ops, v, ',');
    } else if (OPT("--ops-file")) {
      if (r < 0 || (rc = read_ops_file(v, &o.ops)))
        goto usage_error;
    } else if (OPT("--inventory")) {
      if (r < 0)
        goto usage_error;
      o.inventory_path = v;
    } else if (OPT("--dismiss")) {
      if (r < 0)
        goto usage_error;
      o.dismiss_path = v;
    } else if (OPT("--shard")) {
      if (r < 0)
        goto usage_error;
      shard = v;
    } else if (OPT("--timeout") || OPT("--grace")) {
      double s;
      int is_timeout = zlb_starts_with(argv[start], "--timeout");
      if (r < 0)
        goto usage_error;
      if (zlb_parse_double(v, &s) || s <= 0) {
        zlb_cli_errorf("invalid value '%s' for %s: expected a positive number of seconds", v,
                       is_timeout ? "--timeout" : "--grace");
        goto usage_error;
      }
      if (is_timeout)
        o.timeout_s = s;
      else
        o.grace_s = s;
    } else if (OPT("--retries")) {
      long n;
      if (r < 0)
        goto usage_error;
      if (zlb_parse_long(v, &n) || n < 0 || n > 100) {
        zlb_cli_errorf("invalid value '%s' for --retries: expected 0..100", v);
        goto usage_error;
      }
      o.retries = (int)n;
    } else if (OPT("--out")) {
      if (r < 0)
        goto usage_error;
      zlb_strbuf_reset(&out);
      zlb_strbuf_addstr(&out, v);
    } else if (zlb_cli_flag(argv, i, "--force")) {
      o.force = 1;
    } else if (OPT("--replay-from")) {
      if (r < 0)
        goto usage_error;
      if (!zlb_is_dir(v)) {
        zlb_cli_errorf("--replay-from: '%s' is not a folder", v);
        goto usage_error;
      }
      o.replay_from = v;
    } else if (OPT("--replay")) {
      if (r < 0)
        goto usage_error;
      if (!strchr(v, '=') || v[0] == '=') {
        zlb_cli_errorf("invalid value '%s' for --replay: expected OP=DIR", v);
        goto usage_error;
      }
      zlb_strvec_push(&o.replay, v);
    } else if (OPT("--progress")) {
      if (r < 0)
        goto usage_error;
      if (strcmp(v, "auto") && strcmp(v, "always") && strcmp(v, "never")) {
        zlb_cli_errorf("invalid value '%s' for --progress: expected auto, always or never", v);
        goto usage_error;
      }
      progress = v;
    } else if ((r = zlb_cli_run_opt(argc, argv, &i, &ro, &rx)) != 0) {
      /* Validated here, passed on verbatim to every child; backend,
       * dtypes, libraries and colour are the batch's own business. */
      if (r < 0)
        goto usage_error;
      if (strcmp(argv[start], "--backend") && !zlb_starts_with(argv[start], "--backend=") &&
          strcmp(argv[start], "--dtypes") && !zlb_starts_with(argv[start], "--dtypes=") &&
          strcmp(argv[start], "--lib") && !zlb_starts_with(argv[start], "--lib=") &&
          strcmp(argv[start], "--color") && !zlb_starts_with(argv[start], "--color="))
        for (int k = start; k <= i; k++)
          zlb_strvec_push(&o.run_args, argv[k]);
    } else {
      zlb_cli_errorf("unknown argument '%s' for 'zlbench batch' (see zlbench batch --help)",
                     argv[i]);
      goto usage_error;
    }
#undef OPT
  }
  if (zlb_cli_run_finish(&ro, &rx))
    goto usage_error;
  o.backend = ro.backend;
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

  printf("zlbench batch: backend %s, output %s\n", o.backend ? o.backend : "auto", o.out_dir);
  if (o.shard_count > 1)
    printf("zlbench batch: host shard %d of %d (%s)\n", o.shard_index, o.shard_count,
           o.shard_source);
  fflush(stdout);
  rc = zlb_batch_run(&o, &res, &err);
  if (disp.live)
    clear_block(&disp);
  if (rc && rc != ZLB_EINTR) {
    code = zlb_cli_fail(&err);
    goto done;
  }
  printf("zlbench batch: %d operators: %d ok, %d failed, %d resumed, %d replayed in %.1f s\n",
         res.total, res.ok, res.failed, res.skipped, res.replayed, res.seconds);
  printf("results: %s (ops_status.csv, summary.csv, ops/<op>/run.log)\n", o.out_dir);
  if (rc == ZLB_EINTR) {
    printf("interrupted: run the same command again to resume\n");
    code = ZLB_EXIT_INTERRUPTED;
  } else {
    code = res.failed ? ZLB_EXIT_FAILED : ZLB_EXIT_OK;
  }
  goto done;
usage_error:
  code = ZLB_EXIT_USAGE;
done:
  free(disp.block);
  zlb_batch_opts_release(&o);
  zlb_cli_run_extra_release(&rx);
  zlb_strbuf_release(&out);
  zlb_strbuf_release(&exe);
  return code;
}
