/* Private declarations shared by the files of the report layer. */
#ifndef ZLB_REPORT_INT_H
#define ZLB_REPORT_INT_H

#include <stddef.h>

#include "zlbench/report.h"

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
