/* `zlbench report`: one self-contained HTML file (inline CSS and SVG, one
 * small inline script that only records JavaScript errors into the page)
 * with the overview, per-operator speedups, a roofline chart, the timer and
 * marker breakdown, failed operators, the identity, the verdicts against
 * another set and each operator's trend. Every text from results is
 * escaped: results folders are untrusted input. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/html.h"

void zlb_html_escape(zlb_strbuf_t *o, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '&':
      zlb_strbuf_addstr(o, "&amp;");
      break;
    case '<':
      zlb_strbuf_addstr(o, "&lt;");
      break;
    case '>':
      zlb_strbuf_addstr(o, "&gt;");
      break;
    case '"':
      zlb_strbuf_addstr(o, "&quot;");
      break;
    case '\'':
      zlb_strbuf_addstr(o, "&#39;");
      break;
    default:
      if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
        zlb_strbuf_addch(o, ' ');
      else
        zlb_strbuf_addch(o, *s);
    }
  }
}

#define E(s) zlb_html_escape(o, (s))

size_t zlb_csv_split(char *line, char **fields, size_t max, char **next) {
  size_t n = 0;
  char *p = line, *w;
  for (;;) {
    char *start = p;
    w = p;
    if (*p == '"') {
      p++;
      for (;;) {
        if (!*p)
          break;
        if (*p == '"') {
          if (p[1] == '"') {
            *w++ = '"';
            p += 2;
            continue;
          }
          p++;
          break;
        }
        *w++ = *p++;
      }
      while (*p && *p != ',' && *p != '\n')
        p++; /* junk after the closing quote */
    } else {
      while (*p && *p != ',' && *p != '\n' && *p != '\r')
        *w++ = *p++;
      while (*p == '\r')
        p++;
    }
    if (n < max)
      fields[n++] = start;
    if (*p == ',') {
      *w = '\0';
      p++;
      continue;
    }
    if (*p == '\n')
      p++;
    *w = '\0';
    break;
  }
  if (next)
    *next = p;
  return n;
}

static const char css[] =
    ":root{--fg:#1d2330;--mut:#5d6677;--bg:#f6f7f9;--card:#fff;--line:#e3e6ec;"
    "--good:#1a7f37;--bad:#c62828;--warn:#b26a00;--acc:#3459c9}"
    "*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}"
    "header{background:#20263a;color:#fff;padding:18px 28px}header h1{margin:0;font-size:20px}"
    "header p{margin:4px 0 0;color:#c9d0e0;font-size:13px}"
    "main{max-width:1180px;margin:0 auto;padding:18px 24px 40px}"
    "section{background:var(--card);border:1px solid var(--line);border-radius:8px;"
    "padding:14px 18px;margin:16px 0}h2{font-size:16px;margin:0 0 10px}"
    ".kpis{display:flex;flex-wrap:wrap;gap:12px}.kpi{flex:1 1 140px;border:1px solid var(--line);"
    "border-radius:6px;padding:10px 12px}.kpi b{display:block;font-size:22px}"
    ".kpi span{color:var(--mut);font-size:12px}"
    "table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;"
    "padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}"
    "th{color:var(--mut);font-weight:600;background:#fafbfc}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}.scroll{max-height:420px;overflow:auto}"
    ".slower{color:var(--bad);font-weight:600}.faster{color:var(--good);font-weight:600}"
    ".noisy{color:var(--warn)}.same{color:var(--mut)}.bad{color:var(--bad)}"
    "pre{background:#f3f4f7;border-radius:6px;padding:8px 10px;overflow:auto;max-height:320px;"
    "font-size:12px;white-space:pre-wrap;word-break:break-all;margin:4px 0}"
    "svg{max-width:100%;height:auto;font:11px system-ui,sans-serif}.note{color:var(--mut);font-size:12px}"
    "#js-errors:empty{display:none}#js-errors{color:var(--bad)}#dtype-table,#timer-table{width:auto;min-width:420px}";

/* ---- data gathered from the rows ------------------------------------------------- */

typedef struct {
  const char *op;
  double lsum;
  size_t n, ok, failed;
} op_agg_t;

static double gm_speedup(const zlb_res_set_t *s, const char *dtype, size_t *n) {
  double l = 0;
  *n = 0;
  for (size_t i = 0; i < s->n; i++) {
    const zlb_res_row_t *r = &s->rows[i];
    if (strcmp(r->status, "SUCCESS") || !(r->speedup > 0) || !isfinite(r->speedup))
      continue;
    if (dtype && strcmp(r->dtype, dtype))
      continue;
    l += log(r->speedup);
    (*n)++;
  }
  return *n ? exp(l / (double)*n) : NAN;
}

static op_agg_t *per_op(const zlb_res_set_t *s, size_t *nops) {
  op_agg_t *v = zlb_xcalloc(s->n + 1, sizeof(*v));
  size_t n = 0;
  for (size_t i = 0; i < s->n; i++) {
    const zlb_res_row_t *r = &s->rows[i];
    size_t k;
    for (k = 0; k < n && strcmp(v[k].op, r->op); k++)
      ;
    if (k == n)
      v[n++].op = r->op;
    if (!strcmp(r->status, "SUCCESS"))
      v[k].ok++;
    else
      v[k].failed++;
    if (!strcmp(r->status, "SUCCESS") && r->speedup > 0 && isfinite(r->speedup)) {
      v[k].lsum += log(r->speedup);
      v[k].n++;
    }
  }
  *nops = n;
  return v;
}

/* `v` in `fmt`, one fixed-point conversion, while below 1e9; beyond it
 * in %g form, so that a 1e308 from a results file is not 300 digits. */
static const char *bnum(char buf[48], const char *fmt, double v) {
  if (fabs(v) < 1e9)
    snprintf(buf, 48, fmt, v);
  else
    snprintf(buf, 48, strchr(fmt, '+') ? "%+.4g" : "%.4g", v);
  return buf;
}

static void num(zlb_strbuf_t *o, double v, const char *fmt) {
  const char *pc = strchr(fmt, '%'), *end = pc ? pc + strcspn(pc, "fg") : NULL;
  char buf[48], spec[16];
  if (isfinite(v) && pc && *end && (size_t)(end - pc) < sizeof(spec) - 1) {
    memcpy(spec, pc, (size_t)(end - pc) + 1);
    spec[end - pc + 1] = '\0';
    zlb_strbuf_add(o, fmt, (size_t)(pc - fmt));
    zlb_strbuf_addstr(o, bnum(buf, spec, v));
    zlb_strbuf_addstr(o, end + 1);
  } else if (isfinite(v))
    zlb_strbuf_addf(o, fmt, v);
  else
    zlb_strbuf_addstr(o, "&ndash;");
}

/* ---- sections ------------------------------------------------------------------------ */

static void overview(zlb_strbuf_t *o, const zlb_html_input_t *in, const op_agg_t *ops,
                     size_t nops, size_t ops_failed_status) {
  const zlb_res_set_t *s = in->res;
  size_t ok = 0, failed = 0, ops_ok = 0, n;
  zlb_strvec_t dtypes = ZLB_STRVEC_INIT;
  double g;
  for (size_t i = 0; i < s->n; i++) {
    if (!strcmp(s->rows[i].status, "SUCCESS"))
      ok++;
    else
      failed++;
    if (zlb_strvec_find(&dtypes, s->rows[i].dtype) < 0)
      zlb_strvec_push(&dtypes, s->rows[i].dtype);
  }
  for (size_t i = 0; i < nops; i++)
    ops_ok += !ops[i].failed;
  zlb_strvec_sort(&dtypes);
  g = gm_speedup(s, NULL, &n);
  zlb_strbuf_addstr(o, "<section id=\"overview\"><h2>Overview</h2><div class=\"kpis\">");
  zlb_strbuf_addf(o, "<div class=\"kpi\"><b id=\"kpi-ops-ok\">%zu</b><span>operators all rows "
                     "ok</span></div>",
                  ops_ok);
  zlb_strbuf_addf(o, "<div class=\"kpi\"><b id=\"kpi-ops-failed\" class=\"%s\">%zu</b><span>"
                     "operators failed or with failed rows</span></div>",
                  nops - ops_ok + ops_failed_status ? "bad" : "", nops - ops_ok + ops_failed_status);
  zlb_strbuf_addf(o, "<div class=\"kpi\"><b id=\"kpi-rows\">%zu</b><span>rows: %zu SUCCESS, %zu "
                     "FAILED</span></div>",
                  s->n, ok, failed);
  zlb_strbuf_addstr(o, "<div class=\"kpi\"><b>");
  num(o, g, "%.3f&times;");
  zlb_strbuf_addstr(o, "</b><span>geometric-mean speedup, all rows</span></div></div>");
  zlb_strbuf_addstr(o, "<table id=\"dtype-table\" style=\"margin-top:12px\"><tr><th>dtype</th>"
                       "<th>geomean speedup</th><th>rows</th></tr>");
  for (size_t i = 0; i < dtypes.n; i++) {
    g = gm_speedup(s, dtypes.v[i], &n);
    zlb_strbuf_addstr(o, "<tr><td>");
    E(dtypes.v[i]);
    zlb_strbuf_addstr(o, "</td><td class=\"n\">");
    num(o, g, "%.3f");
    zlb_strbuf_addf(o, "</td><td class=\"n\">%zu</td></tr>", n);
  }
  zlb_strbuf_addstr(o, "</table></section>");
  zlb_strvec_release(&dtypes);
}

/* Horizontal bars of log(speedup) around 1. */
static void speedup_chart(zlb_strbuf_t *o, const op_agg_t *ops, size_t nops) {
  const int W = 900, L = 200, R = 70, H = 18;
  char b1[48], b2[48];
  double maxl = log(2.0);
  size_t nb = 0;
  int h, mid = L + (W - L - R) / 2, half = (W - L - R) / 2;
  for (size_t i = 0; i < nops; i++)
    if (ops[i].n) {
      double l = fabs(ops[i].lsum / (double)ops[i].n);
      if (l > maxl)
        maxl = l;
      nb++;
    }
  h = (int)nb * H + 40;
  zlb_strbuf_addstr(o, "<section id=\"speedups\"><h2>Speedup per operator</h2><p class=\"note\">"
                       "Geometric mean of the candidate's speedup over the baseline, log scale; "
                       "right of the line is faster.</p>");
  zlb_strbuf_addf(o, "<svg id=\"speedup-chart\" data-bars=\"%zu\" viewBox=\"0 0 %d %d\" "
                     "width=\"%d\" role=\"img\" aria-label=\"speedup per operator\">",
                  nb, W, h, W);
  zlb_strbuf_addf(o, "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>", mid, mid,
                  h - 20);
  zlb_strbuf_addf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#5d6677\">1&times;"
                     "</text><text x=\"%d\" y=\"%d\" text-anchor=\"start\" fill=\"#5d6677\">"
                     "%s&times;</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
                     "fill=\"#5d6677\">%s&times;</text>",
                  mid, h - 6, L, h - 6, bnum(b1, "%.2f", exp(-maxl)), W - R, h - 6,
                  bnum(b2, "%.2f", exp(maxl)));
  nb = 0;
  for (size_t i = 0; i < nops; i++) {
    double l, g;
    int y, len;
    if (!ops[i].n)
      continue;
    l = ops[i].lsum / (double)ops[i].n;
    g = exp(l);
    y = 12 + (int)nb * H;
    len = (int)(fabs(l) / maxl * half);
    if (len < 1)
      len = 1;
    zlb_strbuf_addf(o, "<g class=\"bar\"><title>");
    E(ops[i].op);
    zlb_strbuf_addf(o, ": %sx over %zu rows</title><text x=\"%d\" y=\"%d\" "
                       "text-anchor=\"end\">",
                    bnum(b1, "%.3f", g), ops[i].n, L - 6, y + 12);
    E(ops[i].op);
    zlb_strbuf_addf(o, "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" "
                       "fill=\"%s\"/><text x=\"%d\" y=\"%d\" fill=\"#1d2330\">%s</text></g>",
                    l >= 0 ? mid : mid - len, y + 2, len, H - 5, l >= 0 ? "#2e9d55" : "#d9534f",
                    l >= 0 ? mid + len + 4 : mid + 4, y + 12, bnum(b1, "%.3f", g));
    nb++;
  }
  zlb_strbuf_addstr(o, "</svg></section>");
}

/* The two bandwidth ceilings rows are compared with, as measured (the
 * first identity that gives each), and how many plotted rows use each. */
static void ceilings_legend(zlb_strbuf_t *o, const zlb_res_set_t *s) {
  double mem = NAN, cache = NAN;
  size_t nmem = 0, ncache = 0;
  for (size_t i = 0; i < s->ncal; i++) {
    if (isnan(mem) && s->cals[i].peak_gbps > 0)
      mem = s->cals[i].peak_gbps;
    if (isnan(cache) && s->cals[i].cache_gbps > 0)
      cache = s->cals[i].cache_gbps;
  }
  for (size_t i = 0; i < s->n; i++) {
    const zlb_res_row_t *r = &s->rows[i];
    if (strcmp(r->status, "SUCCESS") || !isfinite(r->pct_peak) || !(r->bytes > 0))
      continue;
    if (!strcmp(r->ceiling, "cache"))
      ncache++;
    else
      nmem++;
  }
  zlb_strbuf_addstr(o, "<p class=\"note\" id=\"ceilings\"><span style=\"color:#3459c9\">"
                       "&#9679;</span> memory bandwidth ");
  if (mem > 0)
    zlb_strbuf_addf(o, "%.0f GB/s", mem);
  else
    zlb_strbuf_addstr(o, "not measured");
  zlb_strbuf_addf(o, " (%zu rows) &#160; <span style=\"color:#d9822b\">&#9679;</span> cache "
                     "bandwidth ",
                  nmem);
  if (cache > 0)
    zlb_strbuf_addf(o, "%.0f GB/s", cache);
  else
    zlb_strbuf_addstr(o, "not measured");
  zlb_strbuf_addf(o, " (%zu rows)</p>", ncache);
}

/* % of peak against arithmetic intensity (FLOP per byte, log scale). */
static void roofline(zlb_strbuf_t *o, const zlb_res_set_t *s) {
  const int W = 900, H = 360, L = 60, B = 40, T = 14, R = 20;
  double xmin = -3, xmax = 3, ymax = 100;
  size_t np = 0;
  for (size_t i = 0; i < s->n; i++) {
    const zlb_res_row_t *r = &s->rows[i];
    if (!strcmp(r->status, "SUCCESS") && isfinite(r->pct_peak) && r->bytes > 0) {
      if (r->pct_peak > ymax)
        ymax = r->pct_peak;
      np++;
    }
  }
  zlb_strbuf_addstr(o, "<section id=\"roofline-section\"><h2>Roofline</h2><p class=\"note\">"
                       "Each row's % of the device's peak (bandwidth or FLOP rate, whichever "
                       "bounds it) against its arithmetic intensity; rows without FLOPs sit at "
                       "the left edge. A row whose bytes fit in the last cache (a GPU's L2) "
                       "and whose timer does not flush it is compared with the cache's "
                       "measured bandwidth, any other with memory's.</p>");
  ceilings_legend(o, s);
  zlb_strbuf_addf(o, "<svg id=\"roofline\" data-points=\"%zu\" viewBox=\"0 0 %d %d\" "
                     "width=\"%d\" role=\"img\" aria-label=\"roofline\">",
                  np, W, H, W);
  zlb_strbuf_addf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafbfc\" "
                     "stroke=\"#ccd\"/>",
                  L, T, W - L - R, H - T - B);
  for (int k = 0; k <= 4; k++) {
    int y = T + (int)((H - T - B) * (1 - k / 4.0));
    zlb_strbuf_addf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#e3e6ec\"/>"
                       "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.0f%%</text>",
                    L, y, W - R, y, L - 6, y + 4, ymax * k / 4.0);
  }
  for (int e = (int)xmin; e <= (int)xmax; e++) {
    int x = L + (int)((W - L - R) * (e - xmin) / (xmax - xmin));
    zlb_strbuf_addf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">1e%d</text>", x, H - B + 16,
                    e);
  }
  zlb_strbuf_addf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#5d6677\">FLOP per "
                     "byte</text>",
                  (L + W - R) / 2, H - 6);
  for (size_t i = 0; i < s->n; i++) {
    const zlb_res_row_t *r = &s->rows[i];
    double ai, lx;
    int x, y;
    if (strcmp(r->status, "SUCCESS") || !isfinite(r->pct_peak) || !(r->bytes > 0))
      continue;
    ai = isfinite(r->flops) && r->flops > 0 ? r->flops / r->bytes : 0;
    lx = ai > 0 ? log10(ai) : xmin;
    if (lx < xmin)
      lx = xmin;
    if (lx > xmax)
      lx = xmax;
    x = L + (int)((W - L - R) * (lx - xmin) / (xmax - xmin));
    y = T + (int)((H - T - B) * (1 - fmax(0, r->pct_peak) / ymax));
    zlb_strbuf_addf(o, "<circle class=\"pt\" cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\" "
                       "fill-opacity=\"0.7\"><title>",
                    x, y, !strcmp(r->ceiling, "cache") ? "#d9822b" : "#3459c9");
    E(r->op);
    zlb_strbuf_addch(o, ' ');
    E(r->dtype);
    zlb_strbuf_addch(o, ' ');
    E(r->shape);
    zlb_strbuf_addf(o, ": %.1f%% of peak (%s ceiling), %.3g FLOP/B</title></circle>",
                    r->pct_peak, *r->ceiling ? r->ceiling : "memory", ai);
  }
  zlb_strbuf_addstr(o, "</svg>");
  if (!np)
    zlb_strbuf_addstr(o, "<p class=\"note\">No row has a % of peak (the backend gave no "
                         "device ceilings).</p>");
  zlb_strbuf_addstr(o, "</section>");
}

/* Rows by timer, and fallback / denial markers by phase and reason. */
static void timers(zlb_strbuf_t *o, const zlb_res_set_t *s) {
  zlb_strvec_t keys = ZLB_STRVEC_INIT;
  size_t *cnt = zlb_xcalloc(2 * s->n + 2, sizeof(*cnt));
  zlb_strbuf_t k = ZLB_STRBUF_INIT;
  for (size_t i = 0; i < s->n; i++) {
    const zlb_res_row_t *r = &s->rows[i];
    const char *m = r->marker;
    long at;
    for (int pass = 0; pass < 2; pass++) {
      zlb_strbuf_reset(&k);
      if (!pass) {
        zlb_strbuf_addf(&k, "timer: %s", *r->timer ? r->timer : "none");
      } else {
        const char *f = strstr(m, "fallback(phase=");
        if (!f)
          continue;
        f += strlen("fallback(phase=");
        if (!strncmp(f, "deny", 4)) {
          zlb_strbuf_addstr(&k, "capture denied (deny list), timed directly");
        } else {
          const char *re = strstr(f, "reason=");
          size_t pl = strcspn(f, ",)"), rl = re ? strcspn(re + 7, ",)") : 0;
          zlb_strbuf_addf(&k, "fell back: phase=%.*s reason=%.*s", (int)(pl < 40 ? pl : 40), f,
                          (int)(rl < 60 ? rl : 60), re ? re + 7 : "");
        }
      }
      at = zlb_strvec_find(&keys, k.buf);
      if (at < 0) {
        zlb_strvec_push(&keys, k.buf);
        at = (long)keys.n - 1;
      }
      cnt[at]++;
    }
  }
  zlb_strbuf_addstr(o, "<section id=\"timers\"><h2>Timers and markers</h2><table "
                       "id=\"timer-table\"><tr><th>rows</th><th>what</th></tr>");
  for (size_t i = 0; i < keys.n; i++) {
    zlb_strbuf_addf(o, "<tr><td class=\"n\">%zu</td><td>", cnt[i]);
    E(keys.v[i]);
    zlb_strbuf_addstr(o, "</td></tr>");
  }
  zlb_strbuf_addstr(o, "</table></section>");
  zlb_strvec_release(&keys);
  zlb_strbuf_release(&k);
  free(cnt);
}

/* The last 4 KiB of the operator's stderr, from a line start:
 * DIR/ops/OP/stderr.log, else that of its last attempt
 * (DIR/ops/OP/attempts/<N>-<what>/stderr.log with the largest N). */
static void stderr_tail(zlb_strbuf_t *o, const char *dir, const char *op) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  FILE *f;
  char buf[4096];
  size_t n;
  if (!dir || strchr(op, '/') || !strcmp(op, "..") || !strcmp(op, ".") || !*op)
    return;
  zlb_strbuf_addf(&p, "%s/ops/%s/stderr.log", dir, op);
  if (!zlb_path_exists(p.buf)) {
    DIR *d;
    struct dirent *de;
    long best = -1;
    char name[256] = "";
    zlb_strbuf_reset(&p);
    zlb_strbuf_addf(&p, "%s/ops/%s/attempts", dir, op);
    if ((d = opendir(p.buf))) {
      while ((de = readdir(d)) != NULL) {
        char *end;
        long k = strtol(de->d_name, &end, 10);
        if (end != de->d_name && *end == '-' && k > best && strlen(de->d_name) < sizeof(name)) {
          best = k;
          zlb_strlcpy(name, de->d_name, sizeof(name));
        }
      }
      closedir(d);
    }
    if (best < 0) {
      zlb_strbuf_release(&p);
      return;
    }
    zlb_strbuf_addf(&p, "/%s/stderr.log", name);
  }
  f = zlb_fopen_regular(p.buf, NULL);
  zlb_strbuf_release(&p);
  if (!f)
    return;
  if (fseek(f, 0, SEEK_END) == 0) {
    long sz = ftell(f);
    if (sz > (long)sizeof(buf) - 1)
      fseek(f, sz - (long)sizeof(buf) + 1, SEEK_SET);
    else
      fseek(f, 0, SEEK_SET);
  }
  n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  {
    char *start = buf;
    if (n == sizeof(buf) - 1 && strchr(buf, '\n'))
      start = strchr(buf, '\n') + 1;
    if (!*start) /* empty (or cut at a NUL byte) */
      return;
    zlb_strbuf_addstr(o, "<pre class=\"stderr\">");
    E(start);
    zlb_strbuf_addstr(o, "</pre>");
  }
}

/* What a batch writes first in ops_status.csv (docs/formats.md). */
static const char status_header[] = "operator,status,attempts,dtype_level,backend,device,timer,"
                                    "seconds,error_signature,failed_dtypes,note";
#define STATUS_FIELDS 11

int zlb_html_status_check(const char *text, const char *what, zlb_error_t *err) {
  char *copy = zlb_xstrdup(text), *p = copy, *f[STATUS_FIELDS + 1], *next;
  size_t hl = strlen(status_header);
  int rc = 0, line = 1;
  if (strncmp(text, status_header, hl) || (text[hl] != '\n' && text[hl] != '\r')) {
    rc = zlb_error_set(err, ZLB_EPARSE,
                       "%s: line 1: not a zlbench status file (expected the header '%s')", what,
                       status_header);
    goto out;
  }
  zlb_csv_split(p, f, STATUS_FIELDS + 1, &next);
  p = next;
  while (*p && !rc) {
    size_t n;
    const char *bad = NULL;
    long attempts;
    n = zlb_csv_split(p, f, STATUS_FIELDS + 1, &next);
    if (next == p)
      break;
    if (n != STATUS_FIELDS)
      bad = "expected 11 fields";
    else if (!*f[0])
      bad = "the operator is empty";
    else if (!*f[1] || strspn(f[1], "abcdefghijklmnopqrstuvwxyz_") != strlen(f[1]))
      bad = "the status is not a status name";
    else if (zlb_parse_long(f[2], &attempts) || attempts < 0)
      bad = "attempts is not a count";
    if (bad) { /* the line the record starts on (quotes may span lines) */
      for (const char *c = text; c < text + (p - copy); c++)
        line += *c == '\n';
      rc = zlb_error_set(err, ZLB_EPARSE, "%s: line %d: not a zlbench status row (%s)", what,
                         line, bad);
    }
    p = next;
  }
out:
  free(copy);
  return rc;
}

static size_t failed_ops(zlb_strbuf_t *o, const zlb_html_input_t *in, int write) {
  size_t nf = 0;
  char *text, *p, *f[16];
  if (!in->ops_status)
    return 0;
  text = zlb_xstrdup(in->ops_status);
  p = text;
  {
    char *next;
    size_t n = zlb_csv_split(p, f, 16, &next); /* header */
    (void)n;
    p = next;
  }
  if (write)
    zlb_strbuf_addstr(o, "<section id=\"failed\"><h2>Failed operators</h2><table "
                         "id=\"failed-table\"><tr><th>operator</th><th>status</th><th>"
                         "error signature and the tail of its stderr</th></tr>");
  while (*p) {
    char *next;
    size_t n = zlb_csv_split(p, f, 16, &next);
    if (next == p)
      break;
    p = next;
    if (n < 9 || !*f[0])
      continue;
    if (!strcmp(f[1], "ok") || !strcmp(f[1], "ok_capture_denied") ||
        !strcmp(f[1], "replayed") || !strcmp(f[1], "replayed_ok"))
      continue;
    nf++;
    if (!write)
      continue;
    zlb_strbuf_addstr(o, "<tr class=\"failed-op\"><td>");
    E(f[0]);
    zlb_strbuf_addstr(o, "</td><td class=\"bad\">");
    E(f[1]);
    zlb_strbuf_addstr(o, "</td><td>");
    E(f[8]);
    stderr_tail(o, in->dir, f[0]);
    zlb_strbuf_addstr(o, "</td></tr>");
  }
  if (write) {
    zlb_strbuf_addstr(o, "</table>");
    if (!nf)
      zlb_strbuf_addstr(o, "<p class=\"note\">None.</p>");
    zlb_strbuf_addstr(o, "</section>");
  }
  free(text);
  return nf;
}

static void failed_rows(zlb_strbuf_t *o, const zlb_res_set_t *s) {
  size_t n = 0;
  zlb_strbuf_addstr(o, "<section id=\"failed-rows-section\"><h2>Failed rows</h2><div "
                       "class=\"scroll\"><table id=\"failed-rows\"><tr><th>operator</th><th>"
                       "dtype</th><th>shape</th><th>marker</th><th>error</th></tr>");
  for (size_t i = 0; i < s->n; i++) {
    const zlb_res_row_t *r = &s->rows[i];
    if (!strcmp(r->status, "SUCCESS"))
      continue;
    n++;
    zlb_strbuf_addstr(o, "<tr><td>");
    E(r->op);
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->dtype);
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->shape);
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->marker);
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->error);
    zlb_strbuf_addstr(o, "</td></tr>");
  }
  zlb_strbuf_addstr(o, "</table></div>");
  if (!n)
    zlb_strbuf_addstr(o, "<p class=\"note\">None.</p>");
  zlb_strbuf_addstr(o, "</section>");
}

static void rows_table(zlb_strbuf_t *o, const zlb_res_set_t *s) {
  zlb_strbuf_addf(o, "<section id=\"rows-section\"><h2>Rows</h2><div class=\"scroll\"><table "
                     "id=\"rows-table\" data-rows=\"%zu\"><tr><th>operator</th><th>dtype</th>"
                     "<th>shape</th><th>status</th><th>baseline ms</th><th>candidate ms</th>"
                     "<th>baseline host &micro;s</th><th>candidate host &micro;s</th>"
                     "<th>speedup</th><th>%% peak</th><th>timer</th><th>marker</th>"
                     "<th>baseline</th></tr>",
                  s->n);
  for (size_t i = 0; i < s->n; i++) {
    const zlb_res_row_t *r = &s->rows[i];
    zlb_strbuf_addstr(o, "<tr class=\"row\"><td>");
    E(r->op);
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->dtype);
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->shape);
    zlb_strbuf_addf(o, "</td><td class=\"%s\">", strcmp(r->status, "SUCCESS") ? "bad" : "");
    E(r->status);
    zlb_strbuf_addstr(o, "</td><td class=\"n\">");
    num(o, r->ms[0], "%.6f");
    zlb_strbuf_addstr(o, "</td><td class=\"n\">");
    num(o, r->ms[1], "%.6f");
    /* Host time per call beside the device time (docs/timing.md). */
    zlb_strbuf_addstr(o, "</td><td class=\"n host\">");
    num(o, r->host_us[0], "%.3f");
    zlb_strbuf_addstr(o, "</td><td class=\"n host\">");
    num(o, r->host_us[1], "%.3f");
    zlb_strbuf_addstr(o, "</td><td class=\"n\">");
    num(o, r->speedup, "%.3f");
    /* Which ceiling the % is of (docs/roofline.md), on the cell. */
    zlb_strbuf_addstr(o, "</td><td class=\"n\" data-ceiling=\"");
    E(r->ceiling);
    zlb_strbuf_addstr(o, "\">");
    num(o, r->pct_peak, "%.1f");
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->timer);
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->marker);
    /* What the speedup is against: the baseline's implementation (cub,
     * cublas, thrust, ref, ...; docs/operators-cuda.md). */
    zlb_strbuf_addstr(o, "</td><td class=\"impl\">");
    E(r->impl[0] ? r->impl[0] : "");
    zlb_strbuf_addstr(o, "</td></tr>");
  }
  zlb_strbuf_addstr(o, "</table></div></section>");
}

static void verdicts(zlb_strbuf_t *o, const zlb_html_input_t *in) {
  const zlb_cmp_t *c = in->cmp;
  char b1[48], b2[48];
  size_t shown = 0;
  zlb_strbuf_addstr(o, "<section id=\"compare\"><h2>Compared with ");
  E(in->cmp_label);
  zlb_strbuf_addf(o, "</h2><p>This folder is B, the other is A; change is B over A (+ is "
                     "slower). <span class=\"slower\">%zu slower</span>, <span class=\"faster\">"
                     "%zu faster</span>, %zu same, <span class=\"noisy\">%zu noisy</span>, %zu "
                     "n/a.",
                  c->count[ZLB_V_SLOWER], c->count[ZLB_V_FASTER], c->count[ZLB_V_SAME],
                  c->count[ZLB_V_NOISY], c->count[ZLB_V_NA]);
  if (c->caliber_diff) {
    zlb_strbuf_addstr(o, " <b class=\"bad\">Calibers differ:");
    for (int k = 0; k < ZLB_CAL_COUNT; k++)
      if (c->caliber_diff & (1u << k)) {
        zlb_strbuf_addf(o, " %s (", zlb_caliber_field(k));
        E(c->caliber_a[k]);
        zlb_strbuf_addstr(o, " vs ");
        E(c->caliber_b[k]);
        zlb_strbuf_addstr(o, ")");
      }
    zlb_strbuf_addstr(o, "</b>");
  }
  zlb_strbuf_addstr(o, "</p><div class=\"scroll\"><table id=\"verdict-table\"><tr><th>verdict"
                       "</th><th>operator</th><th>dtype</th><th>shape</th><th>A</th><th>B</th>"
                       "<th>change</th><th>95% interval</th><th>p</th><th>A host &micro;s</th>"
                       "<th>B host &micro;s</th><th>note</th></tr>");
  for (size_t i = 0; i < c->n; i++) {
    const zlb_cmp_pair_t *p = &c->pairs[i];
    const zlb_res_row_t *r = p->a ? p->a : p->b;
    const char *v = p->a && p->b ? zlb_cmp_verdict_name(p->st.verdict) : p->a ? "only in A"
                                                                             : "only in B";
    shown++;
    zlb_strbuf_addf(o, "<tr class=\"verdict\" data-verdict=\"%s\"><td class=\"%s\">%s</td><td>",
                    v, v, v);
    E(r->op);
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->dtype);
    zlb_strbuf_addstr(o, "</td><td>");
    E(r->shape);
    zlb_strbuf_addstr(o, "</td><td class=\"n\">");
    num(o, p->a_ms, "%.6f");
    zlb_strbuf_addstr(o, "</td><td class=\"n\">");
    num(o, p->b_ms, "%.6f");
    zlb_strbuf_addstr(o, "</td><td class=\"n\">");
    if (p->a && p->b && isfinite(p->st.ratio))
      zlb_strbuf_addf(o, "%s%%", bnum(b1, "%+.1f", 100 * (p->st.ratio - 1)));
    else
      zlb_strbuf_addstr(o, "&ndash;");
    zlb_strbuf_addstr(o, "</td><td class=\"n\">");
    if (p->a && p->b && isfinite(p->st.lo))
      zlb_strbuf_addf(o, "%s%% &hellip; %s%%", bnum(b1, "%+.1f", 100 * (p->st.lo - 1)),
                      bnum(b2, "%+.1f", 100 * (p->st.hi - 1)));
    else
      zlb_strbuf_addstr(o, "&ndash;");
    zlb_strbuf_addstr(o, "</td><td class=\"n\">");
    if (p->a && p->b)
      num(o, p->st.p, "%.2g");
    else
      zlb_strbuf_addstr(o, "&ndash;");
    /* Each side's host time per call of the compared implementation. */
    for (int k = 0; k < 2; k++) {
      const zlb_res_row_t *side = k ? p->b : p->a;
      zlb_strbuf_addstr(o, "</td><td class=\"n host\">");
      num(o, side ? side->host_us[c->impl == ZLB_CMP_BASELINE ? 0 : 1] : NAN, "%.3f");
    }
    zlb_strbuf_addstr(o, "</td><td>");
    E(p->st.why);
    zlb_strbuf_addstr(o, "</td></tr>");
  }
  zlb_strbuf_addstr(o, "</table></div></section>");
  (void)shown;
}

/* A sparkline per operator: its candidate latency over the stored runs. */
static void trends(zlb_strbuf_t *o, const zlb_html_input_t *in) {
  zlb_strbuf_addf(o, "<section id=\"trends\"><h2>History</h2><p class=\"note\">Geometric mean "
                     "of each operator's candidate latency in the comparable runs of the "
                     "history database, oldest first.</p><table id=\"trend-table\" "
                     "data-trends=\"%zu\"><tr><th>operator</th><th>runs</th><th>trend</th><th>"
                     "latest ms</th></tr>",
                  in->ntrends);
  for (size_t i = 0; i < in->ntrends; i++) {
    const zlb_trend_t *t = &in->trends[i];
    double lo = INFINITY, hi = -INFINITY;
    const int W = 240, H = 36;
    for (size_t k = 0; k < t->n; k++) {
      lo = fmin(lo, t->pts[k].ms);
      hi = fmax(hi, t->pts[k].ms);
    }
    zlb_strbuf_addstr(o, "<tr><td>");
    E(t->op);
    zlb_strbuf_addf(o, "</td><td class=\"n\">%zu</td><td><svg class=\"spark\" viewBox=\"0 0 %d "
                       "%d\" width=\"%d\" height=\"%d\"><polyline fill=\"none\" "
                       "stroke=\"#3459c9\" stroke-width=\"2\" points=\"",
                    t->n, W, H, W, H);
    for (size_t k = 0; k < t->n; k++) {
      double x = t->n > 1 ? 4 + (W - 8) * (double)k / (double)(t->n - 1) : W / 2.0;
      double y = hi > lo ? 4 + (H - 8) * (1 - (t->pts[k].ms - lo) / (hi - lo)) : H / 2.0;
      zlb_strbuf_addf(o, "%.1f,%.1f ", x, y);
    }
    zlb_strbuf_addstr(o, "\"/></svg></td><td class=\"n\">");
    num(o, t->n ? t->pts[t->n - 1].ms : NAN, "%.6f");
    zlb_strbuf_addstr(o, "</td></tr>");
  }
  zlb_strbuf_addstr(o, "</table></section>");
}

void zlb_html_report(const zlb_html_input_t *in, zlb_strbuf_t *o) {
  size_t nops;
  op_agg_t *ops = per_op(in->res, &nops);
  size_t nfailed_status = failed_ops(o, in, 0);
  size_t ops_listed_failed = 0;
  char when[64];

  /* operators failed in ops_status.csv without rows in results.json */
  if (nfailed_status) {
    size_t with_rows_failed = 0;
    for (size_t i = 0; i < nops; i++)
      with_rows_failed += ops[i].failed > 0;
    ops_listed_failed = nfailed_status > with_rows_failed ? nfailed_status - with_rows_failed : 0;
  }
  zlb_iso8601_now(when, sizeof(when));
  zlb_strbuf_addstr(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                       "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
                       "<title>zlbench report: ");
  E(in->dir);
  zlb_strbuf_addf(o, "</title><style>%s</style>", css);
  /* The page's only script: JavaScript errors go into #js-errors, which a
   * browser test reads (an empty element: no error). */
  zlb_strbuf_addstr(o, "<script>window.onerror=function(m,s,l){var e=document.getElementById("
                       "'js-errors');if(e){e.textContent+=m+' @'+l+'\\n';}};</script>");
  zlb_strbuf_addstr(o, "</head><body><header><h1>zlbench report</h1><p>");
  E(in->dir);
  zlb_strbuf_addf(o, " &middot; %zu results files &middot; written %s</p></header><main>"
                     "<pre id=\"js-errors\"></pre>",
                  in->res->nfiles, when);
  overview(o, in, ops, nops, ops_listed_failed);
  if (in->cmp)
    verdicts(o, in);
  speedup_chart(o, ops, nops);
  roofline(o, in->res);
  timers(o, in->res);
  if (in->ops_status)
    failed_ops(o, in, 1);
  failed_rows(o, in->res);
  if (in->show_trends)
    trends(o, in);
  rows_table(o, in->res);
  zlb_strbuf_addstr(o, "<section id=\"identity\"><h2>Identity</h2><pre id=\"identity-json\">");
  if (in->identity)
    E(in->identity);
  else
    zlb_strbuf_addstr(o, "(no run_identity.json)");
  zlb_strbuf_addstr(o, "</pre></section></main>"
                       "<script>document.body.setAttribute('data-ready','1');</script>"
                       "</body></html>\n");
  free(ops);
}
