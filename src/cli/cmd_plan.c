/* `zlbench plan [OP]`: what a run would do, without running it. */
#include <stdio.h>

#include "cli.h"
#include "run_opts.h"

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fprintf(f, "usage: zlbench plan [OP] [options]\n\n"
             "Print the timer and stages the backend's capabilities produce (and, with\n"
             "OP, what the operator's flags, dtypes and the deny list change), resolved as\n"
             "'zlbench run' resolves them. Runs nothing.\n\n"
             "options (those of 'zlbench run'; the ones that matter here are --backend,\n"
             "--timer, --repeat, --trials, --deny-capture, --deny-file, --dtypes, --autotune):\n");
  zlb_cli_help(f, opts);
}

int zlb_cmd_plan(int argc, char **argv) {
  zlb_run_opts_t o;
  zlb_cli_run_extra_t x;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  int code = ZLB_EXIT_OK;

  zlb_cli_run_defaults(&o, &x);
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_INCLUDE(x.table),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("plan", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      goto out;
    case ZLB_CLI_BAD:
      code = ZLB_EXIT_USAGE;
      goto out;
    default:
      break;
    }
  }
  if (args.n > 1) {
    zlb_cli_errorf("unexpected argument '%s' for 'zlbench plan': give one operator", args.v[1]);
    code = ZLB_EXIT_USAGE;
    goto out;
  }
  o.op = args.n ? args.v[0] : NULL;
  if (zlb_cli_run_finish(&o, &x)) {
    code = ZLB_EXIT_USAGE;
    goto out;
  }
  if (zlb_run_plan(&o, &out, &err))
    code = zlb_cli_fail(&err);
  else if (fputs(out.buf, stdout) == EOF || fflush(stdout) == EOF) {
    zlb_cli_errorf("cannot write the plan to standard output");
    code = ZLB_EXIT_OUTPUT;
  }
out:
  zlb_strbuf_release(&out);
  zlb_strvec_release(&args);
  zlb_cli_run_extra_release(&x);
  return code;
}
