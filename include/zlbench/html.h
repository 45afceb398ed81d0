/* The self-contained HTML report of `zlbench report`: one file, inline CSS
 * and SVG, no network. Every text from results is HTML-escaped. */
#ifndef ZLBENCH_HTML_H
#define ZLBENCH_HTML_H

#include <stddef.h>

#include "zlbench/base.h"
#include "zlbench/compare.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One point of an operator's trend (from the history database). */
typedef struct zlb_trend_point {
  char when[32];  /* ISO 8601 */
  char label[64]; /* tool commit or run id */
  double ms;      /* geometric mean of the candidate's latencies, ms */
} zlb_trend_point_t;

typedef struct zlb_trend {
  char op[128];
  zlb_trend_point_t *pts;
  size_t n;
} zlb_trend_t;

typedef struct zlb_html_input {
  const char *dir;              /* the results folder (stderr tails are read under it) */
  const zlb_res_set_t *res;     /* its rows */
  const char *identity;         /* run_identity.json text, or NULL */
  const char *ops_status;       /* ops_status.csv text (a batch), or NULL */
  const zlb_cmp_t *cmp;         /* verdicts against another set, or NULL */
  const char *cmp_label;        /* the other set's name */
  int show_trends;              /* add the history section (trends may be empty) */
  const zlb_trend_t *trends;    /* per-operator history */
  size_t ntrends;
} zlb_html_input_t;

/** Append the whole HTML document to `out`. */
void zlb_html_report(const zlb_html_input_t *in, zlb_strbuf_t *out);
/*
 * Check the text of an ops_status.csv (`what` names it in the error): its
 * header, and in every row 11 fields, an operator, a status name and a
 * count of attempts. ZLB_EPARSE with the line otherwise: a report of a
 * garbage file would say no operator failed.
 */
int zlb_html_status_check(const char *text, const char *what, zlb_error_t *err);
/** Append `s` with &, <, >, " and ' escaped. */
void zlb_html_escape(zlb_strbuf_t *out, const char *s);

/*
 * Split one CSV line (RFC 4180 quoting, "" inside quotes) into at most
 * `max` fields, pointing into `line`, which is modified. Returns the count.
 * `*next` is set past the record (records may span lines inside quotes).
 */
size_t zlb_csv_split(char *line, char **fields, size_t max, char **next);

#ifdef __cplusplus
}
#endif
#endif
