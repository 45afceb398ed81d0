/* Private declarations shared by the files of the report layer. */
#ifndef ZLB_REPORT_INT_H
#define ZLB_REPORT_INT_H

#include <stddef.h>

#include "zlbench/base.h"
#include "zlbench/report.h"

/*
 * Append to `out` the paths, relative to `root`, of the regular files
 * below it whose name `want` accepts, in directory order. Folders named
 * "attempts" (a batch's superseded attempts) are not entered. With `max`
 * non-zero, one file more is ZLB_EPARSE ("more than MAX WHAT under
 * 'ROOT'"); an unreadable folder is ZLB_EIO, and so is an entry that
 * cannot be examined for any reason but its removal meanwhile (a path
 * longer than PATH_MAX, no permission): it is reported, never skipped.
 * A FIFO or device under a wanted name is never opened (a FIFO would
 * block) nor dropped silently: "skipping 'PATH': a FIFO, not a regular
 * file" goes to `skipped` (NULL: nowhere) for the caller to show.
 */
int zlb__collect_files(const char *root, int (*want)(const char *name), size_t max,
                       const char *what, zlb_strvec_t *out, zlb_strvec_t *skipped,
                       zlb_error_t *err);

/* Append `row` to `s`, taking ownership of its strings (all non-NULL). */
void zlb__summary_push(zlb_summary_t *s, const zlb_summary_row_t *row);

/* Free the strings of one row. */
void zlb__summary_row_release(zlb_summary_row_t *row);

/* Normalised copy of a dtype text of `len` bytes: "torch.float16" ->
 * "float16", surrounding blanks and quotes removed. Caller frees. */
char *zlb__summary_dtype(const char *s, size_t len);

/*
 * Parse the JSON text of one FlagGems `--record log` line (what follows
 * "[INFO] ") and append one row per element of its "result" array to `out`
 * with the given source and an empty family. Text that is not such a
 * record (a Python dict repr, an op-attributes list, broken JSON) adds
 * nothing. Returns the number of rows added.
 */
size_t zlb__record_parse(zlb_summary_t *out, const char *json, size_t len,
                         const char *source);

#endif
