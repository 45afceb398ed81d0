/* The geometric-mean speedup table `zlbench summary` prints: per operator
 * and dtype, over SUCCESS rows with a finite positive speedup. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/report.h"

/* Running sum of log(speedup); the mean is exp(sum / n). */
struct acc {
  double logsum;
  size_t n;
};

/* float16, bfloat16, float32 lead (FlagGems' order); the rest follow in
 * byte order. */
static int dtype_rank(const char *d) {
  static const char *const lead[] = {"float16", "bfloat16", "float32"};
  for (int i = 0; i < 3; i++)
    if (!strcmp(d, lead[i]))
      return i;
  return 3;
}

static int dtype_cmp(const void *a, const void *b) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  int rx = dtype_rank(x), ry = dtype_rank(y);
  return rx != ry ? (rx < ry ? -1 : 1) : strcmp(x, y);
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void add_cell(zlb_strbuf_t *out, const struct acc *a, int width) {
  double v = a->n ? exp(a->logsum / (double)a->n) : NAN;
  /* %g beyond a million: a speedup of 1e308 from a hostile log stays a
   * short cell */
  if (a->n)
    zlb_strbuf_addf(out, v < 1e6 ? "  %*.3f" : "  %*.3g", width, v);
  else
    zlb_strbuf_addf(out, "  %*s", width, "-");
}

static int max_int(int a, int b) { return a > b ? a : b; }

void zlb_summary_geomean(const zlb_summary_t *s, zlb_strbuf_t *out) {
  zlb_strvec_t ops = ZLB_STRVEC_INIT, dts = ZLB_STRVEC_INIT;
  zlb_strbuf_t tmp = ZLB_STRBUF_INIT;
  struct acc *cell;        /* (ops + 1) x (dtypes + 1); last row/col: all */
  size_t *ok, *failed;     /* per operator, last: all */
  size_t nd, w;
  const char **names;
  int opw = (int)strlen("operator"), *dw, total;
  const int okw = (int)strlen("SUCCESS"), fw = (int)strlen("FAILED");

  /* distinct operators: sort every row's name, keep the first of each run */
  names = zlb_xcalloc(s->n, sizeof(*names));
  for (size_t i = 0; i < s->n; i++)
    names[i] = s->rows[i].op;
  if (s->n > 1)
    qsort(names, s->n, sizeof(*names), str_cmp);
  for (size_t i = 0; i < s->n; i++)
    if (i == 0 || strcmp(names[i], names[i - 1]))
      zlb_strvec_push(&ops, names[i]);
  free(names);
  for (size_t i = 0; i < s->n; i++)
    if (zlb_strvec_find(&dts, s->rows[i].dtype) < 0)
      zlb_strvec_push(&dts, s->rows[i].dtype);
  if (dts.n > 1)
    qsort(dts.v, dts.n, sizeof(*dts.v), dtype_cmp);
  nd = dts.n;
  w = nd + 1;
  cell = zlb_xcalloc((ops.n + 1) * w, sizeof(*cell));
  ok = zlb_xcalloc(ops.n + 1, sizeof(*ok));
  failed = zlb_xcalloc(ops.n + 1, sizeof(*failed));
  dw = zlb_xcalloc(w, sizeof(*dw));

  for (size_t i = 0; i < s->n; i++) {
    const zlb_summary_row_t *r = &s->rows[i];
    const char *key = r->op;
    size_t o = (size_t)((const char *const *)bsearch(&key, ops.v, ops.n,
                                                     sizeof(*ops.v), str_cmp) -
                        (const char *const *)ops.v);
    size_t d = (size_t)zlb_strvec_find(&dts, r->dtype);
    if (!strcmp(r->status, "FAILED")) {
      failed[o]++;
      failed[ops.n]++;
    }
    if (strcmp(r->status, "SUCCESS"))
      continue;
    ok[o]++;
    ok[ops.n]++;
    if (!isfinite(r->speedup) || r->speedup <= 0)
      continue;
    for (size_t k = 0; k < 4; k++) {
      struct acc *a = &cell[(k & 1 ? ops.n : o) * w + (k & 2 ? nd : d)];
      a->logsum += log(r->speedup);
      a->n++;
    }
  }

  /* widths: labels, or 8 for values up to 9999.999 (wider ones still fit,
   * only misaligned) */
  /* Names come from logs: printed with their control bytes escaped. */
  for (size_t i = 0; i < ops.n; i++)
    opw = max_int(opw, (int)strlen(zlb_printable(&tmp, ops.v[i])));
  opw = max_int(opw, (int)strlen("geomean"));
  for (size_t d = 0; d < nd; d++)
    dw[d] = max_int(8, (int)strlen(dts.v[d][0] ? zlb_printable(&tmp, dts.v[d]) : "(none)"));
  dw[nd] = 8;
  total = opw + 2 * (int)(w + 2) + okw + fw;
  for (size_t d = 0; d < w; d++)
    total += dw[d];

  zlb_strbuf_addf(out, "%-*s", opw, "operator");
  for (size_t d = 0; d < nd; d++)
    zlb_strbuf_addf(out, "  %*s", dw[d], dts.v[d][0] ? zlb_printable(&tmp, dts.v[d]) : "(none)");
  zlb_strbuf_addf(out, "  %*s  %*s  %*s\n", dw[nd], "all", okw, "SUCCESS", fw,
                  "FAILED");
  zlb_strbuf_addpad(out, '-', (size_t)total);
  zlb_strbuf_addch(out, '\n');
  for (size_t o = 0; o <= ops.n; o++) {
    if (o == ops.n) {
      zlb_strbuf_addpad(out, '-', (size_t)total);
      zlb_strbuf_addch(out, '\n');
    }
    zlb_strbuf_addf(out, "%-*s", opw, o < ops.n ? zlb_printable(&tmp, ops.v[o]) : "geomean");
    for (size_t d = 0; d < w; d++)
      add_cell(out, &cell[o * w + d], dw[d]);
    zlb_strbuf_addf(out, "  %*zu  %*zu\n", okw, ok[o], fw, failed[o]);
  }

  free(cell);
  free(ok);
  free(failed);
  free(dw);
  zlb_strvec_release(&ops);
  zlb_strvec_release(&dts);
  zlb_strbuf_release(&tmp);
}

void zlb_summary_ceilings(const zlb_summary_t *s, zlb_strbuf_t *out) {
  static const char *const names[3] = {"memory", "cache", ""};
  size_t n[3] = {0, 0, 0}, over = 0;
  double max[3] = {0, 0, 0};
  for (size_t i = 0; i < s->n; i++) {
    const zlb_summary_row_t *r = &s->rows[i];
    int k;
    if (strcmp(r->status, "SUCCESS") || !isfinite(r->pct_peak))
      continue;
    k = r->ceiling && !strcmp(r->ceiling, "memory") ? 0
        : r->ceiling && !strcmp(r->ceiling, "cache") ? 1
                                                      : 2;
    if (!n[k]++ || r->pct_peak > max[k])
      max[k] = r->pct_peak;
    if (r->pct_peak > 100.0)
      over++;
  }
  if (!n[0] && !n[1] && !n[2])
    return;
  zlb_strbuf_addstr(out, "%Peak:");
  for (int k = 0; k < 3; k++) {
    if (!n[k])
      continue;
    if (k < 2)
      zlb_strbuf_addf(out, " %zu row%s against the %s ceiling (max %.1f %%),", n[k],
                      n[k] == 1 ? "" : "s", names[k], max[k]);
    else
      zlb_strbuf_addf(out, " %zu row%s with no ceiling named (max %.1f %%),", n[k],
                      n[k] == 1 ? "" : "s", max[k]);
  }
  zlb_strbuf_addf(out, " %zu above 100 %%\n", over);
}
