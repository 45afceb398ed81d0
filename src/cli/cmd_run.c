/* `zlbench run OP`: benchmark one operator. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_opts.h"

static volatile int interrupted;

static void on_signal(int sig) {
  /* First signal: finish the current case, write everything, exit 130.
   * A second one takes the default action. */
  interrupted = 1;
  signal(sig, SIG_DFL);
}

static void emit(void *ctx, const char *text) {
  (void)ctx;
  fputs(text, stdout);
  fflush(stdout);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: zlbench run OP [options]\n\n"
          "Benchmark one operator: for each dtype and shape, check the candidate's output\n"
          "against the baseline's, then time both and print one table per dtype.\n\n"
          "options:\n"
          "  --device N            device ordinal as this process sees it (default 0)\n"
          "%s"
          "  --out DIR             folder for run.log and run_identity.json\n"
          "                        (default zlb-out/run-OP-<timestamp>)\n"
          "  --json FILE           also write every sample as JSON\n"
          "  -h, --help            this text\n\n"
          "exit codes: 0 all rows SUCCESS, 1 some FAILED, 2 usage or input error,\n"
          "3 backend unavailable, 4 device fault, 5 BENCHMARK_CAPTURE_POISONED,\n"
          "6 cannot write results, 130 interrupted\n",
          zlb_cli_run_options_help);
}

int zlb_cmd_run(int argc, char **argv) {
  zlb_run_opts_t o;
  zlb_cli_run_extra_t x;
  zlb_run_result_t res;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t outdir = ZLB_STRBUF_INIT;
  const char *v;
  int rc, code;

  zlb_cli_run_defaults(&o, &x);
  for (int i = 1; i < argc; i++) {
    int r;
    if (zlb_cli_is_help(argv[i])) {
      usage(stdout);
      zlb_cli_run_extra_release(&x);
      return ZLB_EXIT_OK;
    }
    if ((r = zlb_cli_run_opt(argc, argv, &i, &o, &x)) != 0) {
      if (r < 0)
        goto usage_error;
      continue;
    }
    if ((r = zlb_cli_opt(argc, argv, &i, "--device", &v)) != 0) {
      long d;
      if (r < 0)
        goto usage_error;
      if (zlb_parse_long(v, &d) || d < 0 || d > 4096) {
        zlb_cli_errorf("invalid value '%s' for --device: expected a device ordinal", v);
        goto usage_error;
      }
      o.device = (int)d;
      continue;
    }
    if ((r = zlb_cli_opt(argc, argv, &i, "--out", &v)) != 0) {
      if (r < 0)
        goto usage_error;
      zlb_strbuf_reset(&outdir);
      zlb_strbuf_addstr(&outdir, v);
      continue;
    }
    if ((r = zlb_cli_opt(argc, argv, &i, "--json", &v)) != 0) {
      if (r < 0)
        goto usage_error;
      o.json_path = v;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      zlb_cli_errorf("unknown option '%s' for 'zlbench run' (see zlbench run --help)",
                     argv[i]);
      goto usage_error;
    }
    if (o.op) {
      zlb_cli_errorf("one operator per run ('%s' and '%s'); use 'zlbench batch --ops' "
                     "for several",
                     o.op, argv[i]);
      goto usage_error;
    }
    o.op = argv[i];
  }
  if (!o.op) {
    zlb_cli_errorf("no operator given");
    usage(stderr);
    goto usage_error;
  }
  if (zlb_cli_run_finish(&o, &x))
    goto usage_error;
  if (!outdir.len) {
    char ts[32];
    zlb_timestamp_compact(ts, sizeof(ts));
    zlb_strbuf_addf(&outdir, "zlb-out/run-%s-%s", o.op, ts);
  }
  o.out_dir = outdir.buf;
  o.argc = argc;
  o.argv = argv;
  o.emit = emit;
  o.interrupted = &interrupted;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);

  rc = zlb_run(&o, &res, &err);
  if (rc == ZLB_EPOISONED) {
    /* The batch layer keys on this exact word on stderr and on exit 5. */
    fflush(stdout);
    fprintf(stderr, "%s\n", err.msg);
    code = ZLB_EXIT_POISONED;
  } else if (rc) {
    code = zlb_cli_fail(&err);
  } else {
    code = res.failed ? ZLB_EXIT_FAILED : ZLB_EXIT_OK;
  }
  zlb_strbuf_release(&outdir);
  zlb_cli_run_extra_release(&x);
  if (code == ZLB_EXIT_FATAL || code == ZLB_EXIT_POISONED) {
    /* The device context is dead: nothing may touch it again, not even an
     * exit-time teardown. Everything is written; leave now. */
    fflush(stdout);
    fflush(stderr);
    _exit(code);
  }
  return code;

usage_error:
  zlb_strbuf_release(&outdir);
  zlb_cli_run_extra_release(&x);
  return ZLB_EXIT_USAGE;
}
