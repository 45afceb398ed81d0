/* Options shared by `run` and `batch`. */
#ifndef ZLB_CLI_RUN_OPTS_H
#define ZLB_CLI_RUN_OPTS_H

#include "zlbench/run.h"

typedef struct zlb_cli_run_extra {
  zlb_strvec_t deny, libs;
  const char *color;
  const char *env_dtypes, *env_repeat, *env_timer, *env_autotune, *env_seed,
      *env_warmup, *env_rep, *env_stop;
  int dtypes_given, repeat_given, timer_given, autotune_given, seed_given,
      warmup_given, rep_given, stop_given;
} zlb_cli_run_extra_t;

extern const char zlb_cli_run_options_help[];

/** Defaults, including environment variables. */
void zlb_cli_run_defaults(zlb_run_opts_t *o, zlb_cli_run_extra_t *x);
/** 1: consumed argv[*i] (and its value); 0: not a run option; -1: bad value (printed). */
int zlb_cli_run_opt(int argc, char **argv, int *i, zlb_run_opts_t *o,
                    zlb_cli_run_extra_t *x);
/** Apply environment defaults not overridden and resolve colour; -1 on error. */
int zlb_cli_run_finish(zlb_run_opts_t *o, zlb_cli_run_extra_t *x);
void zlb_cli_run_extra_release(zlb_cli_run_extra_t *x);

#endif
