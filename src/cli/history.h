/* The results history (zlbench history): runs and their rows with samples in
 * an SQLite database. docs/compare.md describes the schema and the rules. */
#ifndef ZLB_HISTORY_H
#define ZLB_HISTORY_H

#include <stddef.h>

#include "zlbench/compare.h"
#include "zlbench/error.h"
#include "zlbench/html.h"

/** The database path: `db` when given, else $ZL_HISTORY_DB, else
 * $XDG_DATA_HOME/zlbench/history.sqlite (~/.local/share when unset). */
int zlb_history_path(const char *db, zlb_strbuf_t *out, zlb_error_t *err);

/** Each operator of `cur` with its trend over the runs of the same
 * caliber stored in the database (oldest first, at most 30). An absent
 * database gives no trend (0). Free with zlb_history_trends_free. */
int zlb_history_trends(const char *db, const zlb_res_set_t *cur, zlb_trend_t **out, size_t *n,
                       zlb_error_t *err);
void zlb_history_trends_free(zlb_trend_t *t, size_t n);

int zlb_cmd_history(int argc, char **argv);

#endif
