/* `zlbench ab`: paired A/B of two operator libraries (or one against
 * itself) in one process (docs/ab.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_opts.h"
#include "zlbench/ab.h"

static int opt_blocks(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  long n;
  char want[48];
  (void)opt;
  snprintf(want, sizeof(want), "an integer in 5..%d", ZLB_AB_MAX_BLOCKS);
  if (zlb_cli_long_in(name, v, 5, ZLB_AB_MAX_BLOCKS, want, &n))
    return -1;
  *(int *)ptr = (int)n;
  return 0;
}

static int opt_threshold(const zlb_cli_option_t *opt, const char *name, const char *v,
                         void *ptr) {
  double pct;
  (void)opt;
  if (zlb_cli_double_in(name, v, 0, 1, 50, "%", "a percentage in (0, 50]", &pct))
    return -1;
  *(double *)ptr = pct / 100.0;
  return 0;
}

static int opt_order(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  (void)opt;
  if (!strcmp(v, "random"))
    *(zlb_ab_order_t *)ptr = ZLB_AB_ORDER_RANDOM;
  else if (!strcmp(v, "abba"))
    *(zlb_ab_order_t *)ptr = ZLB_AB_ORDER_ABBA;
  else {
    zlb_cli_errorf("%s '%s': expected random or abba", name, v);
    return -1;
  }
  return 0;
}

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fprintf(f,
          "usage: zlbench ab [OPS...] --lib-b B.so [options]\n"
          "       zlbench ab [OPS...] --self [options]\n\n"
          "Paired A/B in one process. A is --lib (and the backend's built-in library),\n"
          "B is --lib-b, or A itself with --self. For each operator, dtype and shape,\n"
          "one set of inputs is made and each side's candidate checked against its\n"
          "baseline as 'zlbench run' does; then A's and B's candidates are timed in\n"
          "interleaved blocks on the same stream, in pairs of one block each (half the\n"
          "pairs A first, which ones drawn from --seed), with the SM clock and\n"
          "throttle state read around each block. Verdict per row from the paired\n"
          "differences ln(B/A): a distribution-free interval of their median (order\n"
          "statistics, >= 90 %% coverage; 93 %% for 8 pairs) against the threshold T:\n"
          "slower (above +T), faster (below -T), same (inside +-T), else ambiguous.\n"
          "No OPS: the core screen's operators (the inventory's for the backend less\n"
          "the dismissed, as 'zlbench batch'; all of A's where the inventory has none).\n"
          "Writes ab.log and results.json (every block's time, clock, throttle).\n\n"
          "options:\n");
  zlb_cli_help(f, opts);
  fprintf(f, "\nexit codes: 0 no row slower (with --self: no false verdict), 1 some row\n"
             "slower or FAILED (with --self: some faster or slower verdict, a false one),\n"
             "2 usage or input error, 3 backend unavailable, 4 device fault, 6 cannot\n"
             "write results, 130 interrupted\n");
}

int zlb_cmd_ab(int argc, char **argv) {
  int integrity_flag = 0;
  zlb_ab_opts_t ao;
  zlb_cli_run_extra_t x;
  zlb_ab_result_t res;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t outdir = ZLB_STRBUF_INIT;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  const char *out = NULL, *lib_b = NULL;
  int self = 0, rc, code;

  zlb_ab_opts_init(&ao);
  zlb_cli_run_defaults(&ao.run, &x);
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_STRING("--lib-b", "FILE", &lib_b,
                       "side B: an operator library with the operators compared"),
        ZLB_CLI_FLAG("--self", &self,
                     "side B is side A: the false-verdict rate of this machine\n"
                     "(any faster or slower verdict is false)"),
        ZLB_CLI_CALLBACK("--blocks", "N", opt_blocks, &ao.blocks,
                         "blocks per side, 5..64 (default 8); the row's --rep-ms is\n"
                         "spread over them"),
        ZLB_CLI_CALLBACK("--order", "ORDER", opt_order, &ao.order,
                         "pair order: random (default; each pair's first side drawn\n"
                         "from --seed, half A first) or abba (A B B A A B ...)"),
        ZLB_CLI_CALLBACK("--threshold", "PCT", opt_threshold, &ao.threshold,
                         "smallest change called faster or slower (default 2)"),
        ZLB_CLI_CALLBACK("--device", "N", zlb_cli_opt_device, &ao.run.device,
                         "device ordinal as this process sees it (default 0)"),
        ZLB_CLI_INCLUDE(x.table),
        ZLB_CLI_STRING("--out", "DIR", &out,
                       "folder for ab.log and results.json\n"
                       "(default zlb-out/ab-<timestamp>)"),
        ZLB_CLI_STRING("--json", "FILE", &ao.run.json_path, "also write results.json here"),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("ab", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      code = ZLB_EXIT_OK;
      goto done;
    case ZLB_CLI_BAD:
      goto usage_error;
    default:
      break;
    }
    if (self && lib_b) {
      zlb_cli_errorf("--self and --lib-b exclude each other: --self compares A with itself");
      goto usage_error;
    }
    if (!self && !lib_b) {
      zlb_cli_errorf("no side B: give --lib-b B.so, or --self to compare A with itself");
      usage(stderr, opts);
      goto usage_error;
    }
  }
  integrity_flag = ao.run.integrity; /* the flag itself, before the environment's */
  if (zlb_cli_run_finish(&ao.run, &x))
    goto usage_error;
  if (x.trials_given && ao.run.trials != 1) {
    zlb_cli_errorf("--trials does not apply to ab: its blocks already interleave A and B");
    goto usage_error;
  }
  if (ao.run.timing.nquantiles || ao.run.timing.return_mode == ZLB_RET_ALL) {
    zlb_cli_errorf("--quantiles and --return-mode all do not apply to ab: each block gives "
                   "one value");
    goto usage_error;
  }
  if (integrity_flag) {
    /* ab times in blocks of its own and applies none of the gate's checks
     * (a timed iteration's outputs, the rate ceilings): accepting the flag
     * would vouch for rows nothing checked. */
    zlb_cli_errorf("--integrity does not apply to ab: its blocks apply none of the gate's "
                   "checks; screen untrusted candidates with zlbench run --integrity (or "
                   "batch --integrity) first");
    goto usage_error;
  }
  if (ao.run.integrity) {
    /* ZL_INTEGRITY=1 exported for a whole session: said, and not applied
     * (nor written into the identity as if it were). */
    zlb_cli_warnf("ZL_INTEGRITY=1 is ignored by ab: its blocks apply none of the gate's "
                  "checks (zlbench run --integrity does)");
    ao.run.integrity = 0;
  }
  ao.run.trials = 1;
  ao.lib_b = lib_b;
  ao.ops = &args;
  if (out) {
    zlb_strbuf_addstr(&outdir, out);
  } else {
    char ts[32];
    zlb_timestamp_compact(ts, sizeof(ts));
    zlb_strbuf_addf(&outdir, "zlb-out/ab-%s", ts);
  }
  ao.run.out_dir = outdir.buf;
  if ((code = zlb_cli_out_dir_kind("ab", ao.run.out_dir, "zlbench.ab/1")))
    goto done;
  ao.run.argc = argc;
  ao.run.argv = argv;
  zlb_cli_run_attach(&ao.run);

  rc = zlb_ab(&ao, &res, &err);
  if (rc) {
    code = zlb_cli_fail(&err);
  } else if (!res.rows && res.skipped && !res.interrupted) {
    /* Nothing measured, every operator refused for its input (a shape
     * file, a dtype, a timer): that input's exit code, as run gives. */
    code = zlb_exit_code_of(res.skip_code);
  } else if (res.self) {
    code = res.faster + res.slower || res.failed ? ZLB_EXIT_FAILED : ZLB_EXIT_OK;
  } else {
    code = res.slower || res.failed ? ZLB_EXIT_FAILED : ZLB_EXIT_OK;
  }
  zlb_strbuf_release(&outdir);
  zlb_strvec_release(&args);
  zlb_cli_run_extra_release(&x);
  if (code == ZLB_EXIT_FATAL) {
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
