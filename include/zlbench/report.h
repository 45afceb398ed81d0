/* Report layer: the summary of benchmark logs (our run.log tables, FlagGems'
 * printed tables and its `--record log` lines) as rows, summary.csv and a
 * geometric-mean table. Formats: docs/formats.md. */
#ifndef ZLBENCH_REPORT_H
#define ZLBENCH_REPORT_H

#include <stddef.h>

#include "zlbench/base.h"
#include "zlbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One benchmark result: one (operator, dtype, shape) of one log. Every
 * string is owned by the row (freed by zlb_summary_release) and is never
 * NULL; "" means "not available". Numbers are NAN when absent (`N/A`,
 * `NaN`, JSON null) and may be +-INFINITY when the log says so.
 */
typedef struct zlb_summary_row {
  char *op;      /* operator name as in the title line or op_name */
  char *family;  /* from our start banner (`run OP  family=F`), else "" */
  char *dtype;   /* normalised: "float16", never "torch.float16" */
  char *shape;   /* Size Detail text; compact JSON for --record log rows */
  char *timer;   /* our Timer column; "" for FlagGems rows and for `-` */
  char *marker;  /* our Marker column; "" for FlagGems rows and for `-` */
  char *status;  /* "SUCCESS" or "FAILED" */
  char *source;  /* where the row came from (path relative to the scanned dir) */
  double base_ms;   /* baseline latency, ms */
  double cand_ms;   /* candidate latency, ms */
  double speedup;   /* baseline / candidate as the log printed it */
  double gbps;      /* candidate GB/s */
  double tflops;    /* candidate TFLOP/s */
  double pct_peak;  /* % of measured peak */
  double base_host_us; /* baseline's host time per call, µs (NAN: not available) */
  double cand_host_us; /* candidate's host time per call, µs (NAN: not available) */
  char *ceiling;    /* what pct_peak is of: "memory", "cache", "" (not said); may be NULL */
} zlb_summary_row_t;

/*
 * A growable list of rows. `nlogs` counts the texts given to
 * zlb_summary_parse_log (one per log file read by zlb_summary_scan_dir),
 * whether or not they held rows.
 */
typedef struct zlb_summary {
  zlb_summary_row_t *rows;
  size_t n;
  size_t alloc;
  size_t nlogs;
  /* What the folder scan skipped and why ("skipping 'PATH': a FIFO, not a
   * regular file"), for the caller to show; freed by zlb_summary_release. */
  zlb_strvec_t warnings;
} zlb_summary_t;

#define ZLB_SUMMARY_INIT {NULL, 0, 0, 0, ZLB_STRVEC_INIT}

/**
 * A timer name as any zlbench version wrote it (Timer column, run
 * identity, ops_status.csv), in today's spelling: "cupti", the trace
 * timer's former name, is "trace"; any other text is returned unchanged.
 * Readers of old results call this, so old and new rows group together.
 */
const char *zlb_summary_timer_name(const char *timer);

/** Free every row and the row array; `s` is empty and reusable after. */
void zlb_summary_release(zlb_summary_t *s);

/**
 * Append a deep copy of `row` (NULL strings are stored as ""). For callers
 * that build rows themselves (tests, batch, merge).
 */
void zlb_summary_add(zlb_summary_t *s, const zlb_summary_row_t *row);

/**
 * Append every row found in one log's text: each table of ours or of
 * FlagGems (current and legacy layout) and each FlagGems `--record log`
 * line `[INFO] {json}`. `source` (may be NULL, meaning "") is copied into
 * each row. Text that is not a table is skipped; garbage and a file cut off
 * mid-write yield the rows that were complete (a table row counts only
 * with its newline). Parsing stops at a NUL byte. When a row of a printed table and an `[INFO]` row of the same file
 * share (operator, dtype, shape), only the table row is kept. Increments
 * s->nlogs. Returns 0; it cannot fail (allocation failure aborts), the
 * `err` argument is for symmetry and may be NULL.
 */
int zlb_summary_parse_log(zlb_summary_t *s, const char *text,
                          const char *source, zlb_error_t *err);

/**
 * Read every `*.log` file under `dir`, recursively, in byte order of their
 * paths relative to `dir`, and give each to zlb_summary_parse_log with that
 * relative path as `source`. Skips folders named `attempts`, files named
 * `stderr.log`, and symbolic links. Returns 0, ZLB_ENOTFOUND when `dir` is
 * not a folder, or ZLB_EIO when a folder or file cannot be read (the
 * message names it); rows read before an error stay in `s`.
 */
int zlb_summary_scan_dir(zlb_summary_t *s, const char *dir, zlb_error_t *err);

/**
 * Stable sort by operator, then dtype (both byte order), keeping the
 * order of appearance within one (operator, dtype).
 */
void zlb_summary_sort(zlb_summary_t *s);

/**
 * Render `s` as summary.csv text (header and rows, see docs/formats.md)
 * appended to `out`. Latencies are printed `%.6f`, speedup `%.4f`, GB/s,
 * TFLOP/s and %peak `%.3f`; NAN is an empty field, infinities `inf`/`-inf`.
 */
void zlb_summary_format_csv(const zlb_summary_t *s, zlb_strbuf_t *out);

/**
 * Write zlb_summary_format_csv's text to `path` atomically (readers see the
 * old or the new file). Returns 0 or ZLB_EIO naming the path.
 */
int zlb_summary_write_csv(const zlb_summary_t *s, const char *path,
                          zlb_error_t *err);

/**
 * Append a plain-text table to `out`: one line per operator (byte order)
 * with the geometric-mean speedup per dtype, over all its dtypes (`all`),
 * and its SUCCESS and FAILED row counts; a last `geomean` line does the
 * same over every row. Dtype columns are those occurring in `s`: float16,
 * bfloat16, float32 first, then the others in byte order. Means use
 * SUCCESS rows with a finite speedup > 0 only; `-` where there is none.
 * Values are printed `%.3f`.
 */
void zlb_summary_geomean(const zlb_summary_t *s, zlb_strbuf_t *out);

/**
 * One line on the rows' %Peak by the ceiling each was compared with
 * (docs/roofline.md): SUCCESS rows with a finite %Peak, counted per
 * ceiling (memory, cache, not named) with the largest value, and how many
 * are above 100 % (none, from zlbench run). Ends with a newline; nothing
 * when no row has a %Peak.
 */
void zlb_summary_ceilings(const zlb_summary_t *s, zlb_strbuf_t *out);

#ifdef __cplusplus
}
#endif
#endif
