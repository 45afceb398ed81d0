/* The readable report of one run: banners and one table per dtype in the
 * FlagGems layout (docs/formats.md). Text goes to the terminal callback
 * (with colour when on) and, without ANSI codes, to run.log. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

#define RULE "================================================================================"

const char *zlb__sty(zlb__run_t *r, zlb__style_t s) {
  if (!r->o->color)
    return "";
  switch (s) {
  case STY_BOLD: return "\033[1m";
  case STY_OK: return "\033[32m";
  case STY_FAIL: return "\033[1;31m";
  case STY_WARN: return "\033[33m";
  case STY_DIM: return "\033[2m";
  case STY_NONE:
  default: return "\033[0m";
  }
}

void zlb__emit(zlb__run_t *r, const char *fmt, ...) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT, plain = ZLB_STRBUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  zlb_strbuf_vaddf(&sb, fmt, ap);
  va_end(ap);
  if (r->o->emit)
    r->o->emit(r->o->emit_ctx, sb.buf);
  if (r->log) {
    zlb_strip_ansi(sb.buf, &plain);
    fputs(plain.buf, r->log);
    /* Line by line to disk: a crash keeps every finished row. */
    fflush(r->log);
  }
  zlb_strbuf_release(&sb);
  zlb_strbuf_release(&plain);
}

void zlb__banner_start(zlb__run_t *r) {
  const zlb_device_info_t *d = &r->b->info;
  zlb_strbuf_t dts = ZLB_STRBUF_INIT;
  char l2[128];
  zlb_dtype_mask_format(r->dtypes, &dts);
  if (r->flush.bytes)
    snprintf(l2, sizeof(l2), "flush:%zuMiB", r->flush.bytes >> 20);
  else
    snprintf(l2, sizeof(l2), "none");
  zlb__emit(r, "%s%s%s\n", zlb__sty(r, STY_BOLD), RULE, zlb__sty(r, STY_NONE));
  zlb__emit(r, "%szlbench %s  run %s  family=%s%s\n", zlb__sty(r, STY_BOLD), ZLB_VERSION,
            r->op->name, r->op->family, zlb__sty(r, STY_NONE));
  zlb__emit(r, "backend=%s  device=%d (%s)  timer=%s  repeat=%d  autotune=%s",
            r->b->desc->name, r->b->device, d->name, zlb__run_timer_name(r),
            r->timing.repeat, r->o->autotune ? "on" : "off");
  if (r->o->trials > 1)
    zlb__emit(r, "  trials=%d (each on fresh tensors; median of the trials)", r->o->trials);
  if (r->o->integrity)
    zlb__emit(r, "  integrity=on (a timed sample checked on fresh inputs, side streams, "
                 "rates above the ceilings)");
  zlb__emit(r, "\n");
  /* The graph and queue timers' mode (--l2), beside the direct flush. */
  if (r->l2flush.buf) {
    size_t n = strlen(l2);
    snprintf(l2 + n, sizeof(l2) - n, ",graph/queue:cold(flush:%zuMiB)", r->l2flush.bytes >> 20);
  } else if (r->timer == ZLB_TIMER_GRAPH || r->timer == ZLB_TIMER_QUEUE) {
    size_t n = strlen(l2);
    snprintf(l2 + n, sizeof(l2) - n, ",graph/queue:warm");
  }
  zlb__emit(r, "l2=%s  dtypes=%s  level=%s  shapes=%s[%s]\n", l2, dts.buf,
            r->o->level ? "comprehensive" : "core", r->shapes.source, r->shapes.key);
  if (r->o->dtypes & ~r->op->dtypes) {
    /* Requested, but the operator lacks them: said, not dropped silently. */
    zlb_strbuf_t no = ZLB_STRBUF_INIT;
    zlb_dtype_mask_format(r->o->dtypes & ~r->op->dtypes, &no);
    zlb__emit(r, "dtypes not run: %s (%s does not have %s)\n", no.buf, r->op->name,
              strchr(no.buf, ',') ? "them" : "it");
    zlb_strbuf_release(&no);
  }
  zlb__emit(r, "baseline=%s  candidate=%s  return=%s  stop=%s%s%s\n", r->op->baseline.name,
            r->op->candidate.name, zlb_return_mode_name(r->timing.return_mode),
            zlb_stop_name(r->timing.stop), r->deny ? "  capture=denied by " : "",
            r->deny ? r->deny_source : "");
  {
    /* The ceilings %Peak is computed against, and each missing one with
     * the reason, so a row showing N/A says why on the same page. */
    zlb_strbuf_t pk = ZLB_STRBUF_INIT;
    zlb__peaks_describe(&r->peaks, r->dtypes, &pk);
    zlb__emit(r, "peaks: %s\n", pk.buf);
    zlb_strbuf_release(&pk);
  }
  if (r->setup_error[0])
    zlb__emit(r, "%soperator set-up failed after %.1f ms: %s%s\n", zlb__sty(r, STY_FAIL),
              r->setup_ms, r->setup_error, zlb__sty(r, STY_NONE));
  else if (!isnan(r->setup_ms))
    zlb__emit(r, "operator set-up: %.1f ms (once per process, before the first case)\n",
              r->setup_ms);
  zlb__emit(r, "started %s\n", r->started);
  zlb__emit(r, "%s%s%s\n", zlb__sty(r, STY_BOLD), RULE, zlb__sty(r, STY_NONE));
  zlb_strbuf_release(&dts);
}

void zlb__banner_end(zlb__run_t *r) {
  zlb_run_result_t *res = r->res;
  char now[32];
  zlb_iso8601_now(now, sizeof(now));
  zlb__emit(r, "\n%s%s%s\n", zlb__sty(r, STY_BOLD), RULE, zlb__sty(r, STY_NONE));
  zlb__emit(r, "zlbench run %s: %d rows, %s%d SUCCESS%s, %s%d FAILED%s in %.2f s\n",
            r->op->name, res->rows, zlb__sty(r, STY_OK), res->ok, zlb__sty(r, STY_NONE),
            res->failed ? zlb__sty(r, STY_FAIL) : "", res->failed,
            res->failed ? zlb__sty(r, STY_NONE) : "", res->seconds);
  if (res->stop_reason[0])
    zlb__emit(r, "%sstopped: %s%s\n", zlb__sty(r, STY_FAIL), res->stop_reason,
              zlb__sty(r, STY_NONE));
  zlb__emit(r, "finished %s\n", now);
  zlb__emit(r, "log: %s\n", r->log_path.buf);
  zlb__emit(r, "%s%s%s\n", zlb__sty(r, STY_BOLD), RULE, zlb__sty(r, STY_NONE));
}

/* Column layout. Labels are what parsers match (docs/formats.md). */
#define HDR_FMT "%-8s %14s %15s %9s %10s %9s %7s  %-9s %-7s %8s %7s  %14s  %9s  %-14s %-12s  %s\n"

void zlb__table_begin(zlb__run_t *r, zlb_dtype_t dt, const char *legend) {
  char hdr[512];
  size_t n;
  zlb__emit(r, "\n%sOperator: %s  Performance Test (dtype=%s, mode=%s,level=%s)%s\n",
            zlb__sty(r, STY_BOLD), r->op->name, zlb_dtype_name(dt),
            zlb__run_timer_name(r), r->o->level ? "comprehensive" : "core",
            zlb__sty(r, STY_NONE));
  if (legend && *legend)
    zlb__emit(r, "Inputs common to every row: %s\n", legend);
  n = (size_t)snprintf(hdr, sizeof(hdr), HDR_FMT, "Status", "Baseline (ms)",
                       "Candidate (ms)", "Speedup", "GB/s", "TFLOP/s", "%Peak", "Timer",
                       "Ceiling", "Samples", "Noise%", "Base Host (us)", "Host (us)", "Config", "Marker",
                       "Size Detail");
  zlb__emit(r, "%s", hdr);
  if (n > 1 && n < sizeof(hdr)) {
    memset(hdr, '-', n - 1);
    hdr[n - 1] = '\0';
    zlb__emit(r, "%s\n", hdr);
  }
}

static void num(char *buf, size_t len, double v, const char *fmt) {
  if (isnan(v))
    snprintf(buf, len, "N/A");
  else
    snprintf(buf, len, fmt, v);
}

void zlb__table_phases(zlb__run_t *r, const zlb__row_t *row) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  for (int p = 0; p < ZLB__PH_COUNT; p++)
    zlb_strbuf_addf(&sb, "%s%s %.2f", p ? ", " : "", zlb__phase_name((zlb__phase_t)p),
                    row->phase_ms[p]);
  zlb__emit(r, "%s# phases (ms): %s; wall %.2f; first calls %.2f%s%s%s\n",
            zlb__sty(r, STY_DIM), sb.buf, row->wall_ms, row->first_calls_ms,
            row->check_where ? "; check on " : "", row->check_where ? row->check_where : "",
            zlb__sty(r, STY_NONE));
  zlb_strbuf_release(&sb);
}

void zlb__table_row(zlb__run_t *r, const zlb__row_t *row) {
  char b[32], c[32], s[32], g[32], t[32], p[32], n[16], z[16], hb[32], hc[32];
  num(b, sizeof(b), row->base_ms, "%.6f");
  num(c, sizeof(c), row->cand_ms, "%.6f");
  num(s, sizeof(s), row->speedup, "%.3f");
  num(g, sizeof(g), row->gbps, "%.3f");
  num(t, sizeof(t), row->tflops, "%.3f");
  num(p, sizeof(p), row->pct_peak, "%.1f");
  snprintf(n, sizeof(n), "%d", row->samples);
  num(z, sizeof(z), row->ok ? row->noise * 100.0 : NAN, "%.2f");
  /* Host dispatch time per call, µs (docs/timing.md, "Host dispatch time"). */
  num(hb, sizeof(hb), row->ok ? row->m[0].host_ms * 1e3 : NAN, "%.3f");
  num(hc, sizeof(hc), row->ok ? row->m[1].host_ms * 1e3 : NAN, "%.3f");
  zlb__emit(r, "%s%-8s%s %14s %15s %9s %10s %9s %7s  %-9s %-7s %8s %7s  %14s  %9s  %-14s %s%-12s%s  %s\n",
            zlb__sty(r, row->ok ? STY_OK : STY_FAIL), row->ok ? "SUCCESS" : "FAILED",
            zlb__sty(r, STY_NONE), b, c, s, g, t, p, row->timer[0] ? row->timer : "-",
            row->ok && row->ceiling ? zlb__ceiling_name(row->ceiling) : "-", n, z, hb, hc, row->config[0] ? row->config : "-",
            strcmp(row->marker, "-") ? zlb__sty(r, row->ok ? STY_WARN : STY_FAIL) : "",
            row->marker[0] ? row->marker : "-",
            strcmp(row->marker, "-") ? zlb__sty(r, STY_NONE) : "",
            row->detail[0] ? row->detail : "-");
  if (row->note[0])
    zlb__emit(r, "%s  note: %s: %s%s\n", zlb__sty(r, STY_DIM), row->shape, row->note,
              zlb__sty(r, STY_NONE));
}

/* Split a detail string at top-level ", " (not inside brackets/quotes). */
static size_t split_items(const char *s, char items[][96], size_t max) {
  size_t n = 0, len = 0;
  int depth = 0, quote = 0;
  for (const char *p = s;; p++) {
    int end = !*p;
    if (!end) {
      if (quote) {
        if (*p == quote)
          quote = 0;
      } else if (*p == '\'' || *p == '"') {
        quote = *p;
      } else if (*p == '[' || *p == '(' || *p == '{') {
        depth++;
      } else if (*p == ']' || *p == ')' || *p == '}') {
        depth--;
      }
    }
    if (end || (depth == 0 && !quote && p[0] == ',' && p[1] == ' ')) {
      if (n < max) {
        items[n][len < 95 ? len : 95] = '\0';
        n++;
      }
      len = 0;
      if (end)
        break;
      p++; /* skip the space */
      continue;
    }
    if (n < max && len < 95)
      items[n][len] = *p;
    len++;
  }
  return n;
}

void zlb__fold_details(zlb__row_t *rows, size_t n, char *legend, size_t len) {
  enum { MAXI = 16 };
  char (*first)[96] = zlb_xcalloc(MAXI, 96), (*cur)[96] = zlb_xcalloc(MAXI, 96);
  int common[MAXI];
  size_t nfirst;
  zlb_strbuf_t leg = ZLB_STRBUF_INIT;

  legend[0] = '\0';
  for (size_t i = 0; i < n; i++)
    zlb_strlcpy(rows[i].detail, rows[i].full_detail, sizeof(rows[i].detail));
  if (n < 2)
    goto out;
  nfirst = split_items(rows[0].full_detail, first, MAXI);
  for (size_t k = 0; k < MAXI; k++)
    common[k] = k > 0 && k < nfirst; /* the first item (the shape) stays */
  for (size_t i = 1; i < n; i++) {
    size_t nc = split_items(rows[i].full_detail, cur, MAXI);
    for (size_t k = 1; k < nfirst; k++)
      if (common[k] && (k >= nc || strcmp(cur[k], first[k])))
        common[k] = 0;
  }
  for (size_t k = 1; k < nfirst; k++)
    if (common[k])
      zlb_strbuf_addf(&leg, "%s%s", leg.len ? ", " : "", first[k]);
  if (!leg.len)
    goto out;
  zlb_strlcpy(legend, leg.buf, len);
  for (size_t i = 0; i < n; i++) {
    zlb_strbuf_t d = ZLB_STRBUF_INIT;
    size_t nc = split_items(rows[i].full_detail, cur, MAXI);
    for (size_t k = 0; k < nc; k++)
      if (!(k < nfirst && common[k]))
        zlb_strbuf_addf(&d, "%s%s", d.len ? ", " : "", cur[k]);
    zlb_strlcpy(rows[i].detail, d.buf, sizeof(rows[i].detail));
    zlb_strbuf_release(&d);
  }
out:
  zlb_strbuf_release(&leg);
  free(first);
  free(cur);
}
