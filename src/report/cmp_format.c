/* The output formats of `zlbench compare`: a terminal table, markdown for a
 * pull-request comment, CSV and JSON (schema zlbench.compare/1). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "zlbench/compare.h"
#include "zlbench/json.h"

static const char *impl_name(zlb_cmp_impl_t i) {
  return i == ZLB_CMP_BASELINE ? "baseline" : i == ZLB_CMP_SPEEDUP ? "speedup" : "candidate";
}

static const char *side(const zlb_cmp_pair_t *p) { return p->a && p->b ? "both" : p->a ? "a" : "b"; }

static const zlb_res_row_t *row_of(const zlb_cmp_pair_t *p) { return p->a ? p->a : p->b; }

/* "timer,autotune" of the differing caliber fields. */
static void caliber_list(const zlb_cmp_t *c, zlb_strbuf_t *out) {
  int first = 1;
  for (int f = 0; f < ZLB_CAL_COUNT; f++)
    if (c->caliber_diff & (1u << f)) {
      zlb_strbuf_addf(out, "%s%s", first ? "" : ",", zlb_caliber_field(f));
      first = 0;
    }
}

/* `v` with `fmt` (a fixed-point format) while it is below 1e6, else in
 * %g form: a cell never holds hundreds of digits. */
static void bounded(zlb_strbuf_t *out, const char *fmt, const char *big, double v) {
  zlb_strbuf_addf(out, fabs(v) < 1e6 ? fmt : big, v);
}

static void pct(zlb_strbuf_t *out, double r) {
  if (isfinite(r)) {
    bounded(out, "%+.1f", "%+.3g", 100 * (r - 1));
    zlb_strbuf_addch(out, '%');
  } else {
    zlb_strbuf_addstr(out, "-");
  }
}

static void interval(zlb_strbuf_t *out, const zlb_cmp_stat_t *s) {
  if (isfinite(s->lo) && isfinite(s->hi)) {
    zlb_strbuf_addch(out, '[');
    pct(out, s->lo);
    zlb_strbuf_addstr(out, ", ");
    pct(out, s->hi);
    zlb_strbuf_addch(out, ']');
  } else {
    zlb_strbuf_addstr(out, "-");
  }
}

static void note_of(const zlb_cmp_t *c, const zlb_cmp_pair_t *p, zlb_strbuf_t *out) {
  if (!p->a || !p->b) {
    zlb_strbuf_addstr(out, p->a ? "only in A" : "only in B");
    return;
  }
  zlb_strbuf_addstr(out, p->st.why);
  if (c->caliber_diff) {
    zlb_strbuf_addf(out, "%scaliber differs: ", out->len ? "; " : "");
    caliber_list(c, out);
  }
}

static void summary_line(const zlb_cmp_t *c, zlb_strbuf_t *out) {
  size_t oa = 0, ob = 0;
  for (size_t i = 0; i < c->n; i++) {
    oa += c->pairs[i].a && !c->pairs[i].b;
    ob += !c->pairs[i].a && c->pairs[i].b;
  }
  zlb_strbuf_addf(out,
                  "%zu compared: %zu slower, %zu faster, %zu same, %zu noisy, %zu n/a; "
                  "%zu only in A, %zu only in B",
                  c->nmatched, c->count[ZLB_V_SLOWER], c->count[ZLB_V_FASTER],
                  c->count[ZLB_V_SAME], c->count[ZLB_V_NOISY], c->count[ZLB_V_NA], oa, ob);
}

/* The host time per call (µs) of the compared implementation on one side
 * (the candidate's when speedups are compared); NAN when unknown. Shown
 * beside the device times, never part of a verdict. */
static double host_us(const zlb_cmp_t *c, const zlb_res_row_t *r) {
  return r ? r->host_us[c->impl == ZLB_CMP_BASELINE ? 0 : 1] : NAN;
}

/* B's host time over A's, or NAN. */
static double host_ratio(const zlb_cmp_t *c, const zlb_cmp_pair_t *p) {
  double a = host_us(c, p->a), b = host_us(c, p->b);
  return isfinite(a) && isfinite(b) && a > 0 ? b / a : NAN;
}

static void fmt_us(zlb_strbuf_t *out, double v) {
  if (isfinite(v))
    bounded(out, "%.3f", "%.6g", v);
  else
    zlb_strbuf_addstr(out, "-");
}

static void fmt_ms(zlb_strbuf_t *out, double v, int speedup) {
  if (isfinite(v))
    bounded(out, speedup ? "%.3f" : "%.6f", "%.6g", v);
  else
    zlb_strbuf_addstr(out, "-");
}

/* ---- text ------------------------------------------------------------------------- */

static const char *colour(zlb_cmpv_t v) {
  switch (v) {
  case ZLB_V_SLOWER:
    return "\033[31m";
  case ZLB_V_FASTER:
    return "\033[32m";
  case ZLB_V_NOISY:
    return "\033[33m";
  default:
    return "";
  }
}

static void text(const zlb_cmp_t *c, const char *la, const char *lb, int color, zlb_strbuf_t *o) {
  int sp = c->impl == ZLB_CMP_SPEEDUP;
  zlb_strbuf_t f = ZLB_STRBUF_INIT, e[3] = {ZLB_STRBUF_INIT, ZLB_STRBUF_INIT, ZLB_STRBUF_INIT};
  /* Every string from a results file, an identity or the history is
   * untrusted: shown with its control bytes escaped (zlb_printable). */
  zlb_strbuf_addf(o, "A: %s\n", zlb_printable(&e[0], la));
  zlb_strbuf_addf(o, "B: %s\n", zlb_printable(&e[0], lb));
  zlb_strbuf_addf(o, "compared: %s; threshold %.1f%%, alpha %g (change: B over A, + is slower)\n",
                  impl_name(c->impl), 100 * c->params.threshold, c->params.alpha);
  if (c->caliber_diff) {
    zlb_strbuf_addstr(o, "CALIBER MISMATCH (compared anyway):");
    for (int k = 0; k < ZLB_CAL_COUNT; k++)
      if (c->caliber_diff & (1u << k))
        zlb_strbuf_addf(o, " %s A=%s B=%s;", zlb_caliber_field(k),
                        zlb_printable(&e[0], c->caliber_a[k]),
                        zlb_printable(&e[1], c->caliber_b[k]));
    zlb_strbuf_addch(o, '\n');
  }
  zlb_strbuf_addf(o, "%-7s %-22s %-9s %-24s %12s %12s %8s %20s %9s %9s %11s %11s %8s  %s\n",
                  "verdict", "operator", "dtype", "shape", sp ? "A speedup" : "A (ms)",
                  sp ? "B speedup" : "B (ms)", "change", "95% interval", "p", "samples",
                  "A host(us)", "B host(us)", "host chg", "note");
  zlb_strbuf_addpad(o, '-', 183);
  zlb_strbuf_addch(o, '\n');
  for (size_t i = 0; i < c->n; i++) {
    const zlb_cmp_pair_t *p = &c->pairs[i];
    const zlb_res_row_t *r = row_of(p);
    const char *v = p->a && p->b ? zlb_cmp_verdict_name(p->st.verdict) : p->a ? "only-A" : "only-B";
    zlb_strbuf_addf(o, "%s%-7s%s %-22s %-9s %-24s ", color ? colour(p->st.verdict) : "", v,
                    color && *colour(p->st.verdict) ? "\033[0m" : "", zlb_printable(&e[0], r->op),
                    zlb_printable(&e[1], r->dtype), zlb_printable(&e[2], r->shape));
    zlb_strbuf_reset(&f);
    fmt_ms(&f, p->a_ms, sp);
    zlb_strbuf_addf(o, "%12s ", f.buf);
    zlb_strbuf_reset(&f);
    fmt_ms(&f, p->b_ms, sp);
    zlb_strbuf_addf(o, "%12s ", f.buf);
    zlb_strbuf_reset(&f);
    pct(&f, p->st.ratio);
    zlb_strbuf_addf(o, "%8s ", p->a && p->b ? f.buf : "-");
    zlb_strbuf_reset(&f);
    interval(&f, &p->st);
    zlb_strbuf_addf(o, "%20s ", p->a && p->b ? f.buf : "-");
    if (p->a && p->b && isfinite(p->st.p))
      zlb_strbuf_addf(o, "%9.2g ", p->st.p);
    else
      zlb_strbuf_addf(o, "%9s ", "-");
    zlb_strbuf_reset(&f);
    if (p->a && p->b)
      zlb_strbuf_addf(&f, "%zu/%zu", p->st.na, p->st.nb);
    else
      zlb_strbuf_addstr(&f, "-");
    zlb_strbuf_addf(o, "%9s ", f.buf);
    zlb_strbuf_reset(&f);
    fmt_us(&f, host_us(c, p->a));
    zlb_strbuf_addf(o, "%11s ", f.buf);
    zlb_strbuf_reset(&f);
    fmt_us(&f, host_us(c, p->b));
    zlb_strbuf_addf(o, "%11s ", f.buf);
    zlb_strbuf_reset(&f);
    pct(&f, host_ratio(c, p));
    zlb_strbuf_addf(o, "%8s  ", f.buf);
    zlb_strbuf_reset(&f);
    note_of(c, p, &f);
    zlb_strbuf_addf(o, "%s\n", zlb_printable(&e[0], f.buf));
  }
  {
    static const char *what[3] = {"operator", "family", "dtype"};
    for (int k = 0; k < 3; k++) {
      if (!c->nmeans[k])
        continue;
      zlb_strbuf_addf(o, "geomean change by %s:", what[k]);
      for (size_t i = 0; i < c->nmeans[k]; i++) {
        zlb_strbuf_reset(&f);
        pct(&f, c->means[k][i].gmean);
        zlb_strbuf_addf(o, " %s %s;", zlb_printable(&e[0], c->means[k][i].key), f.buf);
      }
      zlb_strbuf_addch(o, '\n');
    }
  }
  {
    size_t single = 0;
    for (size_t i = 0; i < c->n; i++) {
      const zlb_cmp_pair_t *p = &c->pairs[i];
      single += p->a && p->b &&
                (p->st.verdict == ZLB_V_SLOWER || p->st.verdict == ZLB_V_FASTER) &&
                p->a->ntrials[1] < 2 && p->b->ntrials[1] < 2;
    }
    if (single)
      zlb_strbuf_addf(o,
                      "note: %zu slower or faster row%s measured in one trial on each side; "
                      "where a kernel's data lies can move it\nbetween processes: measure with "
                      "--trials 3 to tell that from a change of the code (docs/compare.md)\n",
                      single, single == 1 ? " was" : "s were");
  }
  zlb_strbuf_addstr(o, "compare: ");
  summary_line(c, o);
  zlb_strbuf_reset(&f);
  pct(&f, c->gmean);
  zlb_strbuf_addf(o, "; geomean change %s\n", f.buf);
  zlb_strbuf_release(&f);
  for (int k = 0; k < 3; k++)
    zlb_strbuf_release(&e[k]);
}

/* ---- markdown ---------------------------------------------------------------------- */

static void md_cell(zlb_strbuf_t *o, const char *text) {
  /* Control bytes first (a newline would end the table row, an ESC
   * reach the terminal of whoever cats the file), then markdown. */
  zlb_strbuf_t tmp = ZLB_STRBUF_INIT;
  const char *s = zlb_printable(&tmp, text);
  for (; *s; s++) {
    switch (*s) {
    case '|':
      zlb_strbuf_addstr(o, "\\|");
      break;
    case '<':
      zlb_strbuf_addstr(o, "&lt;");
      break;
    case '>':
      zlb_strbuf_addstr(o, "&gt;");
      break;
    case '&':
      zlb_strbuf_addstr(o, "&amp;");
      break;
    case '\n':
    case '\r':
      zlb_strbuf_addch(o, ' ');
      break;
    case '`':
    case '*':
    case '_':
    case '[':
    case ']':
    case '\\':
      zlb_strbuf_addch(o, '\\');
      zlb_strbuf_addch(o, *s);
      break;
    default:
      zlb_strbuf_addch(o, *s);
    }
  }
  zlb_strbuf_release(&tmp);
}

static void md(const zlb_cmp_t *c, const char *la, const char *lb, zlb_strbuf_t *o) {
  zlb_strbuf_t f = ZLB_STRBUF_INIT;
  int sp = c->impl == ZLB_CMP_SPEEDUP;
  zlb_strbuf_addstr(o, "### zlbench compare: ");
  zlb_strbuf_addf(o, "%s%zu slower**, %zu faster, %zu same, %zu noisy\n\n",
                  c->count[ZLB_V_SLOWER] ? "**" : "**", c->count[ZLB_V_SLOWER],
                  c->count[ZLB_V_FASTER], c->count[ZLB_V_SAME], c->count[ZLB_V_NOISY]);
  zlb_strbuf_addstr(o, "A: ");
  md_cell(o, la);
  zlb_strbuf_addstr(o, "  \nB: ");
  md_cell(o, lb);
  zlb_strbuf_addf(o, "  \ncompared: %s, threshold %.1f %%, alpha %g; change is B over A "
                     "(+ is slower)\n\n",
                  impl_name(c->impl), 100 * c->params.threshold, c->params.alpha);
  if (c->caliber_diff) {
    zlb_strbuf_addstr(o, "> **Caliber mismatch** (compared anyway):");
    for (int k = 0; k < ZLB_CAL_COUNT; k++)
      if (c->caliber_diff & (1u << k)) {
        zlb_strbuf_addf(o, " %s A=", zlb_caliber_field(k));
        md_cell(o, c->caliber_a[k]);
        zlb_strbuf_addstr(o, " B=");
        md_cell(o, c->caliber_b[k]);
        zlb_strbuf_addch(o, ';');
      }
    zlb_strbuf_addstr(o, "\n\n");
  }
  zlb_strbuf_addf(o, "| verdict | operator | dtype | shape | %s | %s | change | 95 %% interval | p "
                     "| samples | A host (us) | B host (us) | host change | note |\n",
                  sp ? "A speedup" : "A (ms)", sp ? "B speedup" : "B (ms)");
  zlb_strbuf_addstr(o, "|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
  for (size_t i = 0; i < c->n; i++) {
    const zlb_cmp_pair_t *p = &c->pairs[i];
    const zlb_res_row_t *r = row_of(p);
    const char *v = p->a && p->b ? zlb_cmp_verdict_name(p->st.verdict) : p->a ? "only in A" : "only in B";
    zlb_strbuf_addstr(o, "| ");
    if (p->a && p->b && p->st.verdict == ZLB_V_SLOWER)
      zlb_strbuf_addf(o, "**%s**", v);
    else
      zlb_strbuf_addstr(o, v);
    zlb_strbuf_addstr(o, " | ");
    md_cell(o, r->op);
    zlb_strbuf_addstr(o, " | ");
    md_cell(o, r->dtype);
    zlb_strbuf_addstr(o, " | ");
    md_cell(o, r->shape);
    zlb_strbuf_addstr(o, " | ");
    fmt_ms(o, p->a_ms, sp);
    zlb_strbuf_addstr(o, " | ");
    fmt_ms(o, p->b_ms, sp);
    zlb_strbuf_addstr(o, " | ");
    pct(o, p->a && p->b ? p->st.ratio : NAN);
    zlb_strbuf_addstr(o, " | ");
    interval(o, &p->st);
    if (p->a && p->b && isfinite(p->st.p))
      zlb_strbuf_addf(o, " | %.2g | %zu/%zu | ", p->st.p, p->st.na, p->st.nb);
    else
      zlb_strbuf_addstr(o, " | - | - | ");
    fmt_us(o, host_us(c, p->a));
    zlb_strbuf_addstr(o, " | ");
    fmt_us(o, host_us(c, p->b));
    zlb_strbuf_addstr(o, " | ");
    pct(o, host_ratio(c, p));
    zlb_strbuf_addstr(o, " | ");
    zlb_strbuf_reset(&f);
    note_of(c, p, &f);
    md_cell(o, f.buf);
    zlb_strbuf_addstr(o, " |\n");
  }
  if (c->nmeans[0]) {
    zlb_strbuf_addstr(o, "\n| operator | geomean change | rows |\n|---|--:|--:|\n");
    for (size_t i = 0; i < c->nmeans[0]; i++) {
      zlb_strbuf_addstr(o, "| ");
      md_cell(o, c->means[0][i].key);
      zlb_strbuf_addstr(o, " | ");
      pct(o, c->means[0][i].gmean);
      zlb_strbuf_addf(o, " | %zu |\n", c->means[0][i].n);
    }
  }
  zlb_strbuf_addstr(o, "\n");
  summary_line(c, o);
  zlb_strbuf_addstr(o, "; geomean change ");
  pct(o, c->gmean);
  zlb_strbuf_addstr(o, "\n");
  zlb_strbuf_release(&f);
}

/* ---- CSV ----------------------------------------------------------------------------- */

static void csv_num(zlb_strbuf_t *o, double v, const char *fmt) {
  zlb_strbuf_addch(o, ',');
  if (isfinite(v))
    bounded(o, fmt, "%.9g", v);
}

/* A text cell: control bytes escaped (the CSV goes to a terminal as often
 * as to a file), and one a spreadsheet would run as a formula quoted
 * with a leading '. */
static void csv_text(zlb_strbuf_t *o, zlb_strbuf_t *tmp, const char *s) {
  zlb_strbuf_add_csv_text(o, zlb_printable(tmp, s));
}

static void csv(const zlb_cmp_t *c, zlb_strbuf_t *o) {
  zlb_strbuf_t f = ZLB_STRBUF_INIT, e = ZLB_STRBUF_INIT;
  zlb_strbuf_addstr(o, "verdict,operator,family,dtype,shape,impl,a,b,ratio,ci_low,ci_high,"
                       "p_value,spread,n_a,n_b,side,note,a_host_us,b_host_us,host_ratio\n");
  for (size_t i = 0; i < c->n; i++) {
    const zlb_cmp_pair_t *p = &c->pairs[i];
    const zlb_res_row_t *r = row_of(p);
    zlb_strbuf_addstr(o, p->a && p->b ? zlb_cmp_verdict_name(p->st.verdict) : "unmatched");
    zlb_strbuf_addch(o, ',');
    csv_text(o, &e, r->op);
    zlb_strbuf_addch(o, ',');
    csv_text(o, &e, r->family);
    zlb_strbuf_addch(o, ',');
    csv_text(o, &e, r->dtype);
    zlb_strbuf_addch(o, ',');
    csv_text(o, &e, r->shape);
    zlb_strbuf_addch(o, ',');
    zlb_strbuf_add_csv(o, impl_name(c->impl));
    csv_num(o, p->a_ms, "%.6f");
    csv_num(o, p->b_ms, "%.6f");
    csv_num(o, p->a && p->b ? p->st.ratio : NAN, "%.6f");
    csv_num(o, p->a && p->b ? p->st.lo : NAN, "%.6f");
    csv_num(o, p->a && p->b ? p->st.hi : NAN, "%.6f");
    csv_num(o, p->a && p->b ? p->st.p : NAN, "%.6g");
    csv_num(o, p->a && p->b ? p->st.spread : NAN, "%.6f");
    zlb_strbuf_addf(o, ",%zu,%zu,%s,", p->a && p->b ? p->st.na : 0, p->a && p->b ? p->st.nb : 0,
                    side(p));
    zlb_strbuf_reset(&f);
    note_of(c, p, &f);
    csv_text(o, &e, f.buf);
    csv_num(o, host_us(c, p->a), "%.3f");
    csv_num(o, host_us(c, p->b), "%.3f");
    csv_num(o, host_ratio(c, p), "%.6f");
    zlb_strbuf_addch(o, '\n');
  }
  zlb_strbuf_release(&f);
  zlb_strbuf_release(&e);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json(const zlb_cmp_t *c, const char *la, const char *lb, zlb_strbuf_t *o) {
  zlb_jw_t jw;
  zlb_strbuf_t f = ZLB_STRBUF_INIT;
  static const char *what[3] = {"operator", "family", "dtype"};
  zlb_jw_init(&jw, 1);
  zlb_jw_object_begin(&jw);
  zlb_jw_key_string(&jw, "schema", "zlbench.compare/1");
  zlb_jw_key_string(&jw, "a", la);
  zlb_jw_key_string(&jw, "b", lb);
  zlb_jw_key_string(&jw, "impl", impl_name(c->impl));
  zlb_jw_key_double(&jw, "threshold", c->params.threshold);
  zlb_jw_key_double(&jw, "alpha", c->params.alpha);
  zlb_jw_key_int(&jw, "resamples", c->params.resamples);
  zlb_jw_key_object(&jw, "caliber_mismatch");
  for (int k = 0; k < ZLB_CAL_COUNT; k++)
    if (c->caliber_diff & (1u << k)) {
      zlb_jw_key_array(&jw, zlb_caliber_field(k));
      zlb_jw_string(&jw, c->caliber_a[k]);
      zlb_jw_string(&jw, c->caliber_b[k]);
      zlb_jw_array_end(&jw);
    }
  zlb_jw_object_end(&jw);
  zlb_jw_key_object(&jw, "counts");
  for (int v = 0; v < 5; v++)
    zlb_jw_key_int(&jw, zlb_cmp_verdict_name((zlb_cmpv_t)v), (long long)c->count[v]);
  zlb_jw_object_end(&jw);
  zlb_jw_key_double(&jw, "geomean_ratio", c->gmean);
  for (int k = 0; k < 3; k++) {
    char key[32];
    snprintf(key, sizeof(key), "geomean_by_%s", what[k]);
    zlb_jw_key_object(&jw, key);
    for (size_t i = 0; i < c->nmeans[k]; i++)
      zlb_jw_key_double(&jw, c->means[k][i].key, c->means[k][i].gmean);
    zlb_jw_object_end(&jw);
  }
  zlb_jw_key_array(&jw, "rows");
  for (size_t i = 0; i < c->n; i++) {
    const zlb_cmp_pair_t *p = &c->pairs[i];
    const zlb_res_row_t *r = row_of(p);
    int both = p->a && p->b;
    zlb_jw_object_begin(&jw);
    zlb_jw_key_string(&jw, "verdict", both ? zlb_cmp_verdict_name(p->st.verdict) : NULL);
    zlb_jw_key_string(&jw, "side", side(p));
    zlb_jw_key_string(&jw, "operator", r->op);
    zlb_jw_key_string(&jw, "family", r->family);
    zlb_jw_key_string(&jw, "dtype", r->dtype);
    zlb_jw_key_string(&jw, "shape", r->shape);
    zlb_jw_key_double(&jw, "a", p->a_ms);
    zlb_jw_key_double(&jw, "b", p->b_ms);
    zlb_jw_key_double(&jw, "ratio", both ? p->st.ratio : NAN);
    zlb_jw_key_double(&jw, "ci_low", both ? p->st.lo : NAN);
    zlb_jw_key_double(&jw, "ci_high", both ? p->st.hi : NAN);
    zlb_jw_key_double(&jw, "p_value", both ? p->st.p : NAN);
    zlb_jw_key_double(&jw, "spread", both ? p->st.spread : NAN);
    zlb_jw_key_int(&jw, "n_a", both ? (long long)p->st.na : 0);
    zlb_jw_key_int(&jw, "n_b", both ? (long long)p->st.nb : 0);
    zlb_jw_key_double(&jw, "a_host_us", host_us(c, p->a));
    zlb_jw_key_double(&jw, "b_host_us", host_us(c, p->b));
    zlb_jw_key_double(&jw, "host_ratio", host_ratio(c, p));
    zlb_strbuf_reset(&f);
    note_of(c, p, &f);
    zlb_jw_key_string(&jw, "note", f.len ? f.buf : NULL);
    zlb_jw_object_end(&jw);
  }
  zlb_jw_array_end(&jw);
  zlb_jw_object_end(&jw);
  zlb_strbuf_add(o, jw.out.buf, jw.out.len);
  zlb_strbuf_addch(o, '\n');
  zlb_jw_release(&jw);
  zlb_strbuf_release(&f);
}

void zlb_cmp_format(const zlb_cmp_t *c, zlb_cmp_format_t fmt, const char *la, const char *lb,
                    int color, zlb_strbuf_t *out) {
  switch (fmt) {
  case ZLB_FMT_MD:
    md(c, la, lb, out);
    break;
  case ZLB_FMT_CSV:
    csv(c, out);
    break;
  case ZLB_FMT_JSON:
    json(c, la, lb, out);
    break;
  default:
    text(c, la, lb, color, out);
  }
}
