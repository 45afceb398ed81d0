/* Options shared by `run`, `plan` and `batch`: one table, with the
 * environment-variable defaults. */
#ifndef ZLB_CLI_RUN_OPTS_H
#define ZLB_CLI_RUN_OPTS_H

#include "cli.h"
#include "zlbench/run.h"

#define ZLB_CLI_RUN_TABLE_MAX 40

typedef struct zlb_cli_run_extra {
  zlb_run_opts_t *o; /* what the table's options set */
  zlb_strvec_t deny, libs;
  const char *color;
  int dtypes_given, repeat_given, trials_given, timer_given, autotune_given, seed_given,
      warmup_given, rep_given, stop_given;
  /* The run options; include it in a command's table with
   * ZLB_CLI_INCLUDE(x.table). Options flagged ZLB_CLI_PASS are the ones a
   * batch hands on to its children verbatim (it handles --backend, --dtypes,
   * --lib and --color itself). */
  zlb_cli_option_t table[ZLB_CLI_RUN_TABLE_MAX];
  int l2_given; /* --l2 was given (ZL_L2 is then not read) */
} zlb_cli_run_extra_t;

/** Defaults and the option table, writing into `o` and `x`. */
void zlb_cli_run_defaults(zlb_run_opts_t *o, zlb_cli_run_extra_t *x);
/** Apply environment defaults not overridden and resolve colour; -1 on error (printed). */
int zlb_cli_run_finish(zlb_run_opts_t *o, zlb_cli_run_extra_t *x);
void zlb_cli_run_extra_release(zlb_cli_run_extra_t *x);
/** `run` and `ab`: terminal text to stdout, and SIGINT/SIGTERM stop the
 * run after its current case (a second signal takes the default action). */
void zlb_cli_run_attach(zlb_run_opts_t *o);
/** --device N: an ordinal in 0..4096 into an int. */
int zlb_cli_opt_device(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr);

#endif
