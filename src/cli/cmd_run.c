/* `zlbench run OP`: benchmark one operator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_opts.h"

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fprintf(f, "usage: zlbench run OP [options]\n\n"
             "Benchmark one operator: for each dtype and shape, check the candidate's output\n"
             "against the baseline's, then time both and print one table per dtype.\n\n"
             "options:\n");
  zlb_cli_help(f, opts);
  fprintf(f, "\nexit codes: 0 all rows SUCCESS, 1 some FAILED, 2 usage or input error,\n"
             "3 backend unavailable, 4 device fault, 5 BENCHMARK_CAPTURE_POISONED,\n"
             "6 cannot write results, 130 interrupted\n");
}

int zlb_cmd_run(int argc, char **argv) {
  zlb_run_opts_t o;
  zlb_cli_run_extra_t x;
  zlb_run_result_t res;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t outdir = ZLB_STRBUF_INIT;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  const char *out = NULL, *baseline = NULL;
  int rc, code;

  zlb_cli_run_defaults(&o, &x);
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_CALLBACK("--device", "N", zlb_cli_opt_device, &o.device,
                         "device ordinal as this process sees it (default 0)"),
        ZLB_CLI_INCLUDE(x.table),
        ZLB_CLI_STRING("--out", "DIR", &out,
                       "folder for run.log and run_identity.json\n"
                       "(default zlb-out/run-OP-<timestamp>)"),
        ZLB_CLI_STRING("--json", "FILE", &o.json_path, "also write every sample as JSON"),
        ZLB_CLI_STRING("--baseline", "vendor|torch", &baseline,
                       "vendor: the operator library's own baseline (default);\n"
                       "torch: also time every SUCCESS case through torch afterwards\n"
                       "(python3 -m zlbench.torch_baseline; torch_baseline.json)"),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("run", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      code = ZLB_EXIT_OK;
      goto done;
    case ZLB_CLI_BAD:
      goto usage_error;
    default:
      break;
    }
    if (args.n > 1) {
      zlb_cli_errorf("one operator per run ('%s' and '%s'); use 'zlbench batch --ops' "
                     "for several",
                     args.v[0], args.v[1]);
      goto usage_error;
    }
    if (!args.n) {
      zlb_cli_errorf("no operator given");
      usage(stderr, opts);
      goto usage_error;
    }
  }
  o.op = args.v[0];
  if (zlb_cli_run_finish(&o, &x) || zlb_cli_check_baseline("--baseline", baseline))
    goto usage_error;
  if (out) {
    zlb_strbuf_addstr(&outdir, out);
  } else {
    char ts[32];
    zlb_timestamp_compact(ts, sizeof(ts));
    zlb_strbuf_addf(&outdir, "zlb-out/run-%s-%s", o.op, ts);
  }
  o.out_dir = outdir.buf;
  if ((code = zlb_cli_out_dir_kind("run", o.out_dir, "zlbench.results/1")))
    goto done;
  o.argc = argc;
  o.argv = argv;
  zlb_cli_run_attach(&o);

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
    /* Its rows are written: torch's time beside them. A bridge failure
     * (no torch, no device) is the exit code only when the run passed. */
    if (baseline && !strcmp(baseline, "torch")) {
      int t = zlb_cli_torch_baseline(o.out_dir, o.device);
      if (code == ZLB_EXIT_OK)
        code = t;
    }
  }
  zlb_strbuf_release(&outdir);
  zlb_strvec_release(&args);
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
  code = ZLB_EXIT_USAGE;
done:
  zlb_strbuf_release(&outdir);
  zlb_strvec_release(&args);
  zlb_cli_run_extra_release(&x);
  return code;
}
