/* `zlbench plan [OP]`: what a run would do, without running it. */
#include <stdio.h>

#include "cli.h"
#include "run_opts.h"

static void usage(FILE *f) {
  fprintf(f, "usage: zlbench plan [OP] [options]\n\n"
             "Print the timer and stages the backend's capabilities produce (and, with\n"
             "OP, what the operator's flags and the deny list change). Runs nothing.\n\n"
             "options: the same as 'zlbench run' (see zlbench run --help); the ones that\n"
             "matter here are --backend, --timer, --repeat, --deny-capture, --autotune.\n");
}

int zlb_cmd_plan(int argc, char **argv) {
  zlb_run_opts_t o;
  zlb_cli_run_extra_t x;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  int code = ZLB_EXIT_OK;

  zlb_cli_run_defaults(&o, &x);
  for (int i = 1; i < argc; i++) {
    int r;
    if (zlb_cli_is_help(argv[i])) {
      usage(stdout);
      goto out;
    }
    if ((r = zlb_cli_run_opt(argc, argv, &i, &o, &x)) != 0) {
      if (r < 0) {
        code = ZLB_EXIT_USAGE;
        goto out;
      }
      continue;
    }
    if (argv[i][0] == '-' || o.op) {
      zlb_cli_errorf("unexpected argument '%s' for 'zlbench plan'", argv[i]);
      code = ZLB_EXIT_USAGE;
      goto out;
    }
    o.op = argv[i];
  }
  if (zlb_cli_run_finish(&o, &x)) {
    code = ZLB_EXIT_USAGE;
    goto out;
  }
  if (zlb_run_plan(&o, &out, &err))
    code = zlb_cli_fail(&err);
  else
    fputs(out.buf, stdout);
out:
  zlb_strbuf_release(&out);
  zlb_cli_run_extra_release(&x);
  return code;
}
