/* The options `zlbench compare` shares with `report --compare` and
 * `history check`: one table, one meaning. */
#ifndef ZLB_CMP_OPTS_H
#define ZLB_CMP_OPTS_H

#include "cli/cli.h"
#include "zlbench/compare.h"

typedef struct zlb_cmp_opts {
  zlb_cmp_params_t params;
  zlb_cmp_impl_t impl;
  int allow_mismatch;
  int fail_on; /* 1: exit 1 when a row is slower */
  const char *color;
} zlb_cmp_opts_t;

void zlb_cmp_opts_init(zlb_cmp_opts_t *o);
/** The shared options (include it with ZLB_CLI_INCLUDE); points into `o`. */
const zlb_cli_option_t *zlb_cmp_opts_table(zlb_cmp_opts_t *o);
/** --format's callback (text, md, csv or json into a zlb_cmp_format_t),
 * for `compare` and `history check`. */
int zlb_cmp_opt_format(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr);
/** Print the refusal and return -1 when the calibers differ and
 * --allow-caliber-mismatch was not given; a warning and 0 when it was. */
int zlb_cmp_check_caliber(const zlb_cmp_t *c, const zlb_cmp_opts_t *o, const char *cmd);

#endif
