/* One log's text -> summary rows: our run.log tables, FlagGems' printed
 * tables (current and legacy), and its `--record log` lines. The rules a
 * parser relies on, FlagGems' layouts included, are in docs/formats.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"
#include "zlbench/base.h"
#include "zlbench/report.h"

#define MAX_COLS 32
/* Lines allowed between a title and its header (our "Inputs common to
 * every row:" legend is one). */
#define TITLE_SLACK 4

enum role {
  COL_IGNORE, /* Config, Noise%, Samples, Torch GBPS, unknown labels */
  COL_STATUS,
  COL_SIZE, /* FlagGems before 2024-11-15: legacy shape in place of Status */
  COL_BASE,
  COL_CAND,
  COL_SPEEDUP,
  COL_GBPS,
  COL_TFLOPS,
  COL_PCT,
  COL_TIMER,
  COL_MARKER,
  COL_BHOST, /* the baseline's host time per call, µs */
  COL_CHOST, /* the candidate's */
  COL_CEILING, /* what %Peak is of: memory or cache */
  COL_DETAIL
};

/* The known header labels, ours then FlagGems' (docs/formats.md). */
static const struct {
  const char *text;
  enum role role;
} labels[] = {
    {"Status", COL_STATUS},
    {"Baseline (ms)", COL_BASE},
    {"Candidate (ms)", COL_CAND},
    {"Speedup", COL_SPEEDUP},
    {"GB/s", COL_GBPS},
    {"TFLOP/s", COL_TFLOPS},
    {"%Peak", COL_PCT},
    {"Timer", COL_TIMER},
    {"Marker", COL_MARKER},
    {"Ceiling", COL_CEILING},
    {"Base Host (us)", COL_BHOST},
    {"Host (us)", COL_CHOST},
    {"Config", COL_IGNORE},
    {"Noise%", COL_IGNORE},
    {"Samples", COL_IGNORE},
    {"Size Detail", COL_DETAIL},
    {"Size", COL_SIZE},
    {"Torch Latency (ms)", COL_BASE},
    {"Gems Latency (ms)", COL_CAND},
    {"Gems Speedup", COL_SPEEDUP},
    {"TFLOPS", COL_TFLOPS},
    {"Torch GBPS", COL_IGNORE},
    {"Gems GBPS", COL_GBPS},
};

enum state {
  S_IDLE,   /* outside any table */
  S_TITLE,  /* after a title line, waiting for its header */
  S_HEADER, /* after a header: a dash rule or the first row */
  S_ROWS    /* inside the rows of a table */
};

typedef struct span {
  const char *p;
  size_t n;
} span_t;

struct parser {
  zlb_summary_t rows; /* this log's rows, in log order */
  zlb_strbuf_t kinds; /* per row: 't' printed table, 'r' [INFO] record */
  const char *source;
  enum state state;
  int title_lines;
  char *op, *dtype; /* the current table's title */
  enum role cols[MAX_COLS];
  int ncols;
  char *banner_op, *banner_family; /* last `run OP  family=F` banner */
  size_t table_first;  /* index in `rows` of the last printed table's first row */
  int plugin_lines;    /* `# zlbench: row N:` lines may still follow that table */
};

static int is_space(int c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static const char *skip_ws(const char *p) {
  while (is_space((unsigned char)*p))
    p++;
  return p;
}

static const char *skip_token(const char *p) {
  while (*p && !is_space((unsigned char)*p))
    p++;
  return p;
}

static int span_is(span_t s, const char *word) {
  return s.n == strlen(word) && memcmp(s.p, word, s.n) == 0;
}

static char *span_dup(const char *p, size_t n) {
  char *d = zlb_xmalloc(n + 1);
  memcpy(d, p, n);
  d[n] = '\0';
  return d;
}

static int is_blank(const char *line) { return *skip_ws(line) == '\0'; }

static int is_rule(const char *line) {
  const char *p = skip_ws(line);
  size_t n = 0;
  while (*p == '-') {
    p++;
    n++;
  }
  return n >= 3 && is_blank(p);
}

static int is_note(const char *line) {
  return (is_space((unsigned char)line[0]) && zlb_starts_with(skip_ws(line), "note:")) ||
         /* A verbose run's "# phases (ms): ..." after a row: inside the table. */
         zlb_starts_with(line, "# ");
}

/* ---- title, banner, header --------------------------------------------- */

/* `Operator: OP  Performance Test (dtype=D, mode=M,level=L)`, anywhere in
 * the line (pytest may print its node id first). */
static int parse_title(struct parser *ps, const char *line) {
  const char *p = strstr(line, "Operator: "), *q, *d, *e;
  if (!p)
    return 0;
  p = skip_ws(p + strlen("Operator: "));
  q = skip_token(p);
  if (q == p)
    return 0;
  d = strstr(q, "Performance Test (");
  if (!d)
    return 0;
  d = strstr(d, "dtype=");
  if (!d)
    return 0;
  d += strlen("dtype=");
  for (e = d; *e && *e != ',' && *e != ')';)
    e++;
  free(ps->op);
  free(ps->dtype);
  ps->op = span_dup(p, (size_t)(q - p));
  ps->dtype = zlb__summary_dtype(d, (size_t)(e - d));
  return 1;
}

/* Our start banner: `zlbench 0.1.0  run OP  family=F`. */
static void parse_banner(struct parser *ps, const char *line) {
  span_t t[3] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
  const char *p = skip_ws(line);
  while (*p) {
    const char *e = skip_token(p);
    t[0] = t[1];
    t[1] = t[2];
    t[2].p = p;
    t[2].n = (size_t)(e - p);
    if (t[0].p && span_is(t[0], "run") && t[2].n >= 7 &&
        memcmp(t[2].p, "family=", 7) == 0) {
      free(ps->banner_op);
      free(ps->banner_family);
      ps->banner_op = span_dup(t[1].p, t[1].n);
      ps->banner_family = span_dup(t[2].p + 7, t[2].n - 7);
      return;
    }
    p = skip_ws(e);
  }
}

/*
 * Header labels are separated by runs of spaces and may hold single
 * spaces, so match the known labels greedily (longest first: "Size Detail"
 * before "Size"). An unknown label runs to the next two spaces; its column
 * is kept (each row still has a token for it) and ignored.
 */
static int parse_header(struct parser *ps, const char *line) {
  enum role cols[MAX_COLS];
  const char *p = skip_ws(line);
  int n = 0;
  while (*p) {
    size_t best = 0;
    enum role role = COL_IGNORE;
    for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
      size_t len = strlen(labels[i].text);
      if (len > best && strncmp(p, labels[i].text, len) == 0 &&
          (p[len] == '\0' || is_space((unsigned char)p[len]))) {
        best = len;
        role = labels[i].role;
      }
    }
    if (!best) {
      const char *q = p;
      if (n == 0)
        return 0;
      while (*q && !(is_space((unsigned char)q[0]) &&
                     (q[1] == '\0' || is_space((unsigned char)q[1]))))
        q++;
      best = (size_t)(q - p);
    }
    if (n == MAX_COLS)
      return 0;
    cols[n++] = role;
    p = skip_ws(p + best);
  }
  if (n < 2 || (cols[0] != COL_STATUS && cols[0] != COL_SIZE) ||
      cols[n - 1] != COL_DETAIL)
    return 0;
  for (int i = 1; i < n - 1; i++)
    if (cols[i] == COL_DETAIL || cols[i] == COL_STATUS || cols[i] == COL_SIZE)
      return 0;
  memcpy(ps->cols, cols, sizeof(cols[0]) * (size_t)n);
  ps->ncols = n;
  return 1;
}

/* ---- rows ------------------------------------------------------------- */

/* A numeric cell: a decimal, N/A (or None), NaN, inf, Infinity. */
static int parse_number(span_t t, int allow_pct, double *out) {
  char buf[64], *end;
  size_t n = t.n;
  double v;
  if (n == 0 || n >= sizeof(buf))
    return 0;
  memcpy(buf, t.p, n);
  buf[n] = '\0';
  if (allow_pct && n > 1 && buf[n - 1] == '%')
    buf[--n] = '\0';
  if (!strcmp(buf, "N/A") || !strcmp(buf, "None")) {
    *out = NAN;
    return 1;
  }
  if (!strchr("0123456789+-.nNiI", buf[0]))
    return 0;
  v = strtod(buf, &end);
  if (end == buf || *end)
    return 0;
  *out = isnan(v) ? NAN : v;
  return 1;
}

/* Legacy first column: the legacy shape (an integer) or N/A. */
static int is_legacy_size(span_t t) {
  if (span_is(t, "N/A") || span_is(t, "None"))
    return 1;
  for (size_t i = 0; i < t.n; i++)
    if (t.p[i] < '0' || t.p[i] > '9')
      return 0;
  return t.n > 0;
}

static char *token_or_empty(span_t t) {
  if (!t.p || span_is(t, "-"))
    return zlb_xstrdup("");
  return span_dup(t.p, t.n);
}

static int parse_row(struct parser *ps, const char *line, int terminated) {
  span_t tok[MAX_COLS], timer = {NULL, 0}, marker = {NULL, 0}, ceiling = {NULL, 0};
  zlb_summary_row_t row;
  const char *p = line, *status = "FAILED";
  size_t dlen;
  double v[COL_DETAIL + 1];

  for (int c = 0; c < ps->ncols - 1; c++) {
    p = skip_ws(p);
    if (!*p)
      return 0;
    tok[c].p = p;
    p = skip_token(p);
    tok[c].n = (size_t)(p - tok[c].p);
  }
  p = skip_ws(p);
  dlen = strlen(p);
  while (dlen && is_space((unsigned char)p[dlen - 1]))
    dlen--;
  /* A line without its newline is a row cut short by a killed writer: its
   * size detail or a number may be incomplete, so it is never a row. */
  if (!dlen || !terminated)
    return 0;

  if (ps->cols[0] == COL_STATUS) {
    if (span_is(tok[0], "SUCCESS"))
      status = "SUCCESS";
    else if (span_is(tok[0], "FAILED"))
      status = "FAILED";
    else
      return 0;
  } else if (!is_legacy_size(tok[0])) {
    return 0;
  }
  for (int r = 0; r <= COL_DETAIL; r++)
    v[r] = NAN;
  for (int c = 1; c < ps->ncols - 1; c++) {
    enum role role = ps->cols[c];
    switch (role) {
    case COL_BASE:
    case COL_CAND:
    case COL_SPEEDUP:
    case COL_GBPS:
    case COL_TFLOPS:
    case COL_PCT:
    case COL_BHOST:
    case COL_CHOST:
      if (!parse_number(tok[c], role == COL_PCT, &v[role]))
        return 0;
      break;
    case COL_TIMER:
      timer = tok[c];
      break;
    case COL_MARKER:
      marker = tok[c];
      break;
    case COL_CEILING:
      ceiling = tok[c];
      break;
    default:
      break;
    }
  }
  if (ps->cols[0] == COL_SIZE)
    status = isfinite(v[COL_BASE]) && isfinite(v[COL_CAND]) ? "SUCCESS"
                                                             : "FAILED";

  row.op = zlb_xstrdup(ps->op);
  row.family = zlb_xstrdup(ps->banner_op && !strcmp(ps->banner_op, ps->op)
                               ? ps->banner_family
                               : "");
  row.dtype = zlb_xstrdup(ps->dtype);
  row.shape = span_dup(p, dlen);
  /* Logs written before the trace timer was renamed say "cupti". */
  row.timer = token_or_empty(timer);
  {
    char *t = row.timer;
    row.timer = zlb_xstrdup(zlb_summary_timer_name(t));
    free(t);
  }
  row.marker = token_or_empty(marker);
  /* Only the two names a run writes; anything else is not said. */
  row.ceiling = zlb_xstrdup(span_is(ceiling, "memory") ? "memory"
                            : span_is(ceiling, "cache") ? "cache"
                                                        : "");
  row.status = zlb_xstrdup(status);
  row.source = zlb_xstrdup(ps->source);
  row.base_ms = v[COL_BASE];
  row.cand_ms = v[COL_CAND];
  row.speedup = v[COL_SPEEDUP];
  row.gbps = v[COL_GBPS];
  row.tflops = v[COL_TFLOPS];
  row.pct_peak = v[COL_PCT];
  row.base_host_us = v[COL_BHOST];
  row.cand_host_us = v[COL_CHOST];
  zlb__summary_push(&ps->rows, &row);
  zlb_strbuf_addch(&ps->kinds, 't');
  return 1;
}

/* ---- [INFO] records ---------------------------------------------------- */

static void parse_record(struct parser *ps, const char *json) {
  size_t first = ps->rows.n;
  zlb__record_parse(&ps->rows, json, strlen(json), ps->source);
  for (size_t i = first; i < ps->rows.n; i++) {
    zlb_summary_row_t *r = &ps->rows.rows[i];
    if (ps->banner_op && !strcmp(ps->banner_op, r->op)) {
      free(r->family);
      r->family = zlb_xstrdup(ps->banner_family);
    }
    zlb_strbuf_addch(&ps->kinds, 'r');
  }
}

/*
 * Comparison key of a size detail, so that a printed Python repr and the
 * compact JSON of the same shape_detail agree: no blanks or quotes,
 * torch.Size(...) unwrapped, tuples as lists, no trailing commas,
 * True/False/None as JSON words.
 */
static char *shape_key(const char *s) {
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  char drop[64]; /* per open parenthesis: 1 when its ')' is dropped */
  size_t depth = 0;
  while (*s) {
    unsigned char c = (unsigned char)*s;
    if (is_space(c) || c == '\'' || c == '"') {
      s++;
    } else if (zlb_starts_with(s, "torch.Size(")) {
      if (depth < sizeof(drop))
        drop[depth++] = 1;
      s += strlen("torch.Size(");
    } else if (c == '(') {
      if (depth < sizeof(drop))
        drop[depth++] = 0;
      zlb_strbuf_addch(&out, '[');
      s++;
    } else if (c == ')') {
      if (!(depth && drop[--depth]))
        zlb_strbuf_addch(&out, ']');
      s++;
    } else if (c == ',' && *skip_ws(s + 1) &&
               strchr(")]}", *skip_ws(s + 1))) {
      s++; /* Python's one-element tuple "(64,)" */
    } else if (zlb_starts_with(s, "True")) {
      zlb_strbuf_addstr(&out, "true");
      s += 4;
    } else if (zlb_starts_with(s, "False")) {
      zlb_strbuf_addstr(&out, "false");
      s += 5;
    } else if (zlb_starts_with(s, "None")) {
      zlb_strbuf_addstr(&out, "null");
      s += 4;
    } else {
      zlb_strbuf_addch(&out, (int)c);
      s++;
    }
  }
  return zlb_strbuf_detach(&out);
}

/* Move this log's rows into `s`, dropping each [INFO] row that repeats a
 * printed row of the same (operator, dtype, shape). */
static void finish(struct parser *ps, zlb_summary_t *s) {
  const char *kinds = ps->kinds.buf;
  char **keys = NULL;
  if (memchr(kinds, 't', ps->rows.n) && memchr(kinds, 'r', ps->rows.n)) {
    keys = zlb_xcalloc(ps->rows.n, sizeof(*keys));
    for (size_t i = 0; i < ps->rows.n; i++)
      keys[i] = shape_key(ps->rows.rows[i].shape);
  }
  for (size_t i = 0; i < ps->rows.n; i++) {
    zlb_summary_row_t *r = &ps->rows.rows[i];
    int dup = 0;
    for (size_t j = 0; keys && kinds[i] == 'r' && j < ps->rows.n && !dup; j++)
      dup = kinds[j] == 't' && !strcmp(r->op, ps->rows.rows[j].op) &&
            !strcmp(r->dtype, ps->rows.rows[j].dtype) &&
            !strcmp(keys[i], keys[j]);
    if (dup)
      zlb__summary_row_release(r);
    else
      zlb__summary_push(s, r);
  }
  if (keys)
    for (size_t i = 0; i < ps->rows.n; i++)
      free(keys[i]);
  free(keys);
  free(ps->rows.rows); /* the strings now belong to `s` or were freed */
}

/* ---- the line loop ------------------------------------------------------ */

/* The value of `key=` in `text` up to the next blank or ';', or "". */
static span_t kv(const char *text, const char *key) {
  span_t v = {NULL, 0};
  size_t k = strlen(key);
  for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
    if (p != text && !is_space((unsigned char)p[-1]))
      continue;
    if (p[k] != '=')
      continue;
    v.p = p + k + 1;
    while (v.p[v.n] && !is_space((unsigned char)v.p[v.n]) && v.p[v.n] != ';')
      v.n++;
    break;
  }
  return v;
}

/* A `host_us=` value of a plugin line into *out, when it is a number. */
static void plugin_host(span_t v, double *out) {
  double x;
  if (v.p && v.n && parse_number(v, 0, &x) && isfinite(x) && x >= 0)
    *out = x;
}

/* zlbench's pytest plugin writes, after each FlagGems table, one line per
 * row: `# zlbench: row N: torch timer=T marker=M ...; gems timer=T marker=M
 * ...` (docs/formats.md). The candidate's (the last part's) timer and
 * marker fill that row's Timer and Marker. Returns 1 when consumed. */
static int plugin_line(struct parser *ps, const char *line) {
  const char *p = line + strlen("# zlbench: row ");
  const char *cand;
  char *end;
  long n;
  span_t t, m;
  zlb_summary_row_t *r;
  if (!ps->plugin_lines || !zlb_starts_with(line, "# zlbench: row "))
    return 0;
  n = strtol(p, &end, 10);
  if (end == p || *end != ':' || n < 1 || (size_t)n > ps->rows.n - ps->table_first)
    return 1; /* not a row of that table: ignored */
  r = &ps->rows.rows[ps->table_first + (size_t)n - 1];
  cand = strrchr(end, ';');
  cand = cand ? cand + 1 : end + 1;
  t = kv(cand, "timer");
  m = kv(cand, "marker");
  if (t.p && t.n) {
    free(r->timer);
    r->timer = token_or_empty(t);
    {
      char *old = r->timer;
      r->timer = zlb_xstrdup(zlb_summary_timer_name(old));
      free(old);
    }
  }
  if (m.p && m.n) {
    free(r->marker);
    r->marker = token_or_empty(m);
  }
  /* Host µs per call: the first part is the baseline's (torch), the last
   * the candidate's, as for Timer; a row of one measurement has only the
   * candidate's. */
  plugin_host(kv(cand, "host_us"), &r->cand_host_us);
  {
    const char *semi = strchr(end, ';');
    if (semi) {
      size_t n1 = (size_t)(semi - (end + 1));
      char *first = span_dup(end + 1, n1);
      plugin_host(kv(first, "host_us"), &r->base_host_us);
      free(first);
    }
  }
  return 1;
}

static void feed(struct parser *ps, const char *line, int terminated) {
  if (ps->state == S_IDLE && zlb_starts_with(line, "# zlbench: row ")) {
    plugin_line(ps, line);
    return;
  }
  if (ps->state == S_HEADER) {
    ps->state = S_ROWS;
    if (is_rule(line))
      return;
  }
  if (ps->state == S_ROWS) {
    if (is_blank(line)) {
      ps->state = S_IDLE;
      return;
    }
    if (plugin_line(ps, line) || is_note(line) || parse_row(ps, line, terminated))
      return;
    ps->state = S_IDLE; /* not a row: the table is over; look again */
  }
  if (ps->state == S_TITLE) {
    if (parse_header(ps, line)) {
      ps->state = S_HEADER;
      ps->table_first = ps->rows.n;
      ps->plugin_lines = 1;
      return;
    }
    if (++ps->title_lines > TITLE_SLACK)
      ps->state = S_IDLE;
  }
  if (parse_title(ps, line)) {
    ps->state = S_TITLE;
    ps->title_lines = 0;
  } else if (zlb_starts_with(line, "[INFO] {")) {
    parse_record(ps, line + strlen("[INFO] "));
  } else {
    parse_banner(ps, line);
  }
}

int zlb_summary_parse_log(zlb_summary_t *s, const char *text,
                          const char *source, zlb_error_t *err) {
  struct parser ps;
  zlb_strbuf_t clean = ZLB_STRBUF_INIT, line = ZLB_STRBUF_INIT;
  const char *p;

  (void)err;
  memset(&ps, 0, sizeof(ps));
  zlb_strbuf_init(&ps.kinds);
  ps.source = source ? source : "";
  ps.state = S_IDLE;
  zlb_strip_ansi(text ? text : "", &clean);
  for (p = clean.buf; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    zlb_strbuf_reset(&line);
    zlb_strbuf_add(&line, p, n);
    if (line.len && line.buf[line.len - 1] == '\r')
      zlb_strbuf_setlen(&line, line.len - 1);
    feed(&ps, line.buf, e != NULL);
    p += n + (e != NULL);
  }
  finish(&ps, s);
  s->nlogs++;
  free(ps.op);
  free(ps.dtype);
  free(ps.banner_op);
  free(ps.banner_family);
  zlb_strbuf_release(&ps.kinds);
  zlb_strbuf_release(&clean);
  zlb_strbuf_release(&line);
  return 0;
}
