/* Loading every operator library a listing command should see. */
#ifndef ZLB_CLI_OPS_LOAD_H
#define ZLB_CLI_OPS_LOAD_H

#include "zlbench/ops.h"

/**
 * Load `libs`, ZL_OP_LIBS and the built-in libraries (those of `backend`
 * only, when given). A built-in library that cannot load here adds a line to
 * `warnings` instead of failing.
 */
int zlb_cli_load_all_ops(zlb_op_set_t *set, const zlb_strvec_t *libs, const char *backend,
                         zlb_strvec_t *warnings, zlb_error_t *err);

#endif
