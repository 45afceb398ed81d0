/* Shared by `zlbench slurm` and `zlbench k8s`: shell quoting, the batch
 * options they pass on, and finding programs. */
#ifndef ZLB_SCHED_UTIL_H
#define ZLB_SCHED_UTIL_H

#include "zlbench/base.h"

/* Append `s` to `out` as one POSIX shell word ('...' with ' escaped). */
void zlb_sh_quote(zlb_strbuf_t *out, const char *s);
/* The batch options given after "--": refuse the ones the scheduler
 * command sets itself (--out, --shard) and any `zlbench batch` would
 * refuse (unknown options, bad values); 0 or -1 after an error. */
int zlb_sched_check_batch_args(const char *cmd, const zlb_strvec_t *args);
/* `name` on PATH, or "" (out untouched) when it is not there. */
int zlb_find_program(const char *name, zlb_strbuf_t *out);
/* An absolute path for `path` (made from the current folder). */
void zlb_abs_path(const char *path, zlb_strbuf_t *out);

#endif
