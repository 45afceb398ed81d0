/* zlbench ab: two operator libraries (or one against itself) in one
 * process. Each case is described, allocated, filled and checked once (as
 * zlbench run does, case.c), then A's and B's candidates are timed in
 * interleaved pairs of blocks (half A first, drawn per row) on the same
 * stream, each block
 * between two readings of the device's clocks, and the row's verdict comes
 * from the paired block times (ab_stats.c, docs/ab.md). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"
#include "zlbench/ab.h"
#include "zlbench/batch.h"

typedef struct ab_block {
  int side;        /* 0 A, 1 B */
  int order;       /* position in the row's sequence */
  double ms;       /* the block's value (the timer's median per call) */
  char timer[16];
  int have_clk[2]; /* before, after */
  zlb_clocks_t clk[2];
} ab_block_t;

typedef struct ab_ctx {
  const zlb_ab_opts_t *o;
  const zlb_op_t *op_b;
  int self;
  /* the current row */
  int nblocks; /* per side */
  uint64_t row_seed;                       /* seeds the row's pair order */
  unsigned char a_first[ZLB_AB_MAX_BLOCKS]; /* pair j: A's block first */
  ab_block_t blk[2 * ZLB_AB_MAX_BLOCKS];
  int nblk;
  zlb_ab_stat_t st;
  int throttled;
  char throttle_why[64];
} ab_ctx_t;

void zlb_ab_opts_init(zlb_ab_opts_t *o) {
  memset(o, 0, sizeof(*o));
  zlb_run_opts_init(&o->run);
  o->blocks = 8;
  o->threshold = 0.02;
  o->order = ZLB_AB_ORDER_RANDOM;
}

/* ---- one block ---------------------------------------------------------------- */

struct ab_launch {
  zlb__run_t *r;
  zlb_case_t *c;
  const zlb_impl_t *im;
  const char *side;
};

static int ab_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  struct ab_launch *l = ctx;
  int rc;
  l->r->errbuf[0] = '\0';
  rc = l->im->enqueue(&l->r->env, l->c, ZLB_CANDIDATE, (void *)s);
  if (!rc)
    return 0;
  if (rc > 0)
    return zlb_error_vendor(err, ZLB_EDEVICE, rc, zlb_backend_error_name(l->r->b, rc),
                            "enqueue of %s's candidate '%s': %s (%d): %s", l->side,
                            l->im->name, zlb_backend_error_name(l->r->b, rc), rc,
                            l->r->errbuf[0] ? l->r->errbuf : "no message");
  return zlb_error_set(err, rc < 0 ? rc : ZLB_EOP, "enqueue of %s's candidate '%s': %s: %s",
                       l->side, l->im->name, zlb_strerror(rc),
                       l->r->errbuf[0] ? l->r->errbuf : "no message");
}

/* Captures run under a scratch RNG state, as in case.c. */
static void ab_rng_guard(void *ctx, int scratch) {
  struct ab_launch *l = ctx;
  if (scratch) {
    l->r->scratch_rng = l->r->rng;
    l->r->env.rng = &l->r->scratch_rng;
  } else {
    l->r->env.rng = &l->r->rng;
  }
}

static int time_block(zlb__run_t *r, ab_ctx_t *x, zlb_case_t *c, int side, int first,
                      ab_block_t *blk, zlb__row_t *row, zlb_error_t *stop) {
  const zlb_impl_t *im = side ? &x->op_b->candidate : &r->op->candidate;
  struct ab_launch al = {r, c, im, side ? "B" : "A"};
  zlb_launch_t l = {.call = ab_call,
                    .rng_guard = ab_rng_guard,
                    .ctx = &al,
                    .host_sync = (im->flags & ZLB_IMPL_NO_CAPTURE) != 0,
                    .primed = 1};
  zlb_timing_opts_t t = r->timing;
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  zlb_error_t e = ZLB_ERROR_INIT, ce = ZLB_ERROR_INIT;
  char mark[160];
  int rc;

  /* The row's budget spread over its blocks; the first block of each side
   * also has the whole warm-up. */
  t.rep_ms = r->timing.rep_ms / x->nblocks;
  t.warmup_ms = first ? r->timing.warmup_ms : r->timing.warmup_ms / x->nblocks;
  memset(&m, 0, sizeof(m));
  blk->side = side;
  blk->ms = NAN;
  if (r->b->v->clocks)
    blk->have_clk[0] = !r->b->v->clocks(r->b, &blk->clk[0], &ce);
  rc = zlb_time_case(r->b, r->stream, &l, r->timer, r->deny, &t, &r->flush, &m, mark,
                     sizeof(mark), &fail, &e);
  if (r->b->v->clocks && !rc)
    blk->have_clk[1] = !r->b->v->clocks(r->b, &blk->clk[1], &ce);
  if (rc) {
    zlb_error_prefix(&e, "%s", side ? "B" : "A");
    zlb__case_time_error(r, row, fail.phase ? zlb_phase_name(fail.phase) : "timing", &e, stop);
    zlb_measurement_release(&m);
    return rc;
  }
  blk->ms = m.value_ms;
  zlb_strlcpy(blk->timer, zlb__measured_timer_name(&m), sizeof(blk->timer));
  for (int k = 0; k < 2; k++)
    if (blk->have_clk[k] && blk->clk[k].throttled && !x->throttled) {
      x->throttled = 1;
      zlb_strlcpy(x->throttle_why, blk->clk[k].why, sizeof(x->throttle_why));
    }
  zlb_measurement_release(&m);
  return 0;
}

/* A block's mean SM clock (MHz), 0 when not known at both ends. */
static double block_mhz(const ab_block_t *b) {
  if (!b->have_clk[0] || !b->have_clk[1] || b->clk[0].sm_mhz <= 0 || b->clk[1].sm_mhz <= 0)
    return 0;
  return 0.5 * (b->clk[0].sm_mhz + b->clk[1].sm_mhz);
}

/* The case's timing, called by case.c once the tensors are filled and A's
 * accuracy is checked. */
static void ab_time(zlb__run_t *r, zlb_case_t *c, zlb__row_t *row, zlb_error_t *stop) {
  ab_ctx_t *x = r->ab_ctx;
  zlb_case_t cb, *cbp = c;
  int initialised = 0, prepared[2] = {0, 0}, n = x->nblocks;
  double a[ZLB_AB_MAX_BLOCKS], b[ZLB_AB_MAX_BLOCKS], fa[ZLB_AB_MAX_BLOCKS],
      fb[ZLB_AB_MAX_BLOCKS];

  x->nblk = 0;
  x->throttled = 0;
  x->throttle_why[0] = '\0';
  memset(&x->st, 0, sizeof(x->st));
  x->st.verdict = ZLB_AB_AMBIGUOUS;
  /* B is another library: its own description of the case on A's
   * tensors, prepared and checked against its own baseline. */
  if (!x->self) {
    if (zlb__case_other(r, x->op_b, c, &cb, &initialised, prepared, row, stop))
      goto out;
    cbp = &cb;
  }
  /* Half the pairs run A first, half B first, so a drift that is linear
   * over a pair's two blocks cancels in the median; which pairs is drawn
   * per row (--order random) so that nothing periodic lines up with a side. */
  zlb_ab_pair_order(x->o->order, x->row_seed, n, x->a_first);
  for (int j = 0; j < n; j++) {
    for (int k = 0; k < 2; k++) {
      int side = x->a_first[j] ? k : !k;
      ab_block_t *blk = &x->blk[x->nblk];
      memset(blk, 0, sizeof(*blk));
      blk->order = x->nblk;
      if (time_block(r, x, side ? cbp : c, side, j == 0, blk, row, stop))
        goto out;
      x->nblk++;
      if (side) {
        b[j] = blk->ms;
        fb[j] = block_mhz(blk);
      } else {
        a[j] = blk->ms;
        fa[j] = block_mhz(blk);
      }
    }
  }
  zlb_ab_stats(a, b, fa, fb, (size_t)n, x->o->threshold, &x->st);
  row->ok = 1;
  row->base_ms = x->st.a_ms;
  row->cand_ms = x->st.b_ms;
  row->samples = x->nblk;
  zlb_strlcpy(row->timer, x->blk[0].timer, sizeof(row->timer));
  for (int i = 1; i < x->nblk; i++)
    if (strcmp(x->blk[i].timer, row->timer))
      zlb_strlcpy(row->timer, "mixed", sizeof(row->timer));
out:
  if (!x->self)
    zlb__case_other_release(r, x->op_b, &cb, initialised, prepared, stop);
}

/* ---- output -------------------------------------------------------------------- */

typedef struct ab_out {
  const zlb_ab_opts_t *o;
  FILE *log;
  zlb_jw_t json;
  int log_failed;
} ab_out_t;

static void out_text(ab_out_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_text(ab_out_t *w, const char *fmt, ...) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  zlb_strbuf_vaddf(&sb, fmt, ap);
  va_end(ap);
  if (w->o->run.emit)
    w->o->run.emit(w->o->run.emit_ctx, sb.buf);
  if (w->log && fputs(sb.buf, w->log) == EOF)
    w->log_failed = 1;
  zlb_strbuf_release(&sb);
}

static void fmt_ms(double v, char *buf, size_t len) {
  if (isfinite(v))
    snprintf(buf, len, "%.4f", v);
  else
    snprintf(buf, len, "-");
}

static void row_text(ab_out_t *w, const char *opname, const zlb__row_t *row,
                     const ab_ctx_t *x) {
  char am[32], bm[32], ratio[32], iv[48], note[1500];
  const char *verdict = row->ok ? zlb_ab_verdict_name(x->st.verdict) : "FAILED";
  note[0] = '\0';
  fmt_ms(row->ok ? x->st.a_ms : NAN, am, sizeof(am));
  fmt_ms(row->ok ? x->st.b_ms : NAN, bm, sizeof(bm));
  if (row->ok && isfinite(x->st.ratio))
    snprintf(ratio, sizeof(ratio), "%.4f", x->st.ratio);
  else
    snprintf(ratio, sizeof(ratio), "-");
  if (row->ok && isfinite(x->st.lo))
    snprintf(iv, sizeof(iv), "[%.4f, %.4f]", x->st.lo, x->st.hi);
  else
    snprintf(iv, sizeof(iv), "-");
  if (!row->ok) {
    size_t k;
    zlb_strlcpy(note, row->marker, sizeof(note) - 2);
    k = strlen(note);
    note[k++] = ':';
    note[k++] = ' ';
    zlb_strlcpy(note + k, row->note, sizeof(note) - k);
  }
  else {
    size_t k = 0;
    if (x->st.normalised)
      k += (size_t)snprintf(note + k, sizeof(note) - k, "clock-normalised %d of %zu pairs",
                            x->st.normalised, x->st.pairs);
    if (x->throttled && k < sizeof(note))
      k += (size_t)snprintf(note + k, sizeof(note) - k, "%sthrottled(%s)", k ? "; " : "",
                            x->throttle_why);
    if (!k)
      snprintf(note, sizeof(note), "-");
  }
  out_text(w, "%-16s %-22s %10s %10s %8s %-20s %-9s %s\n", opname, row->shape, am, bm, ratio,
           iv, verdict, note);
}

static void row_json(ab_out_t *w, const char *opname, zlb_dtype_t dt, const zlb__row_t *row,
                     const ab_ctx_t *x) {
  zlb_jw_t *j = &w->json;
  zlb_jw_object_begin(j);
  zlb_jw_key_string(j, "operator", opname);
  zlb_jw_key_string(j, "dtype", zlb_dtype_name(dt));
  zlb_jw_key_string(j, "shape", row->shape);
  zlb_jw_key_string(j, "status", row->ok ? "SUCCESS" : "FAILED");
  zlb_jw_key_string(j, "verdict", row->ok ? zlb_ab_verdict_name(x->st.verdict) : NULL);
  zlb_jw_key_double(j, "a_ms", row->ok ? x->st.a_ms : NAN);
  zlb_jw_key_double(j, "b_ms", row->ok ? x->st.b_ms : NAN);
  zlb_jw_key_double(j, "ratio", row->ok ? x->st.ratio : NAN);
  zlb_jw_key_double(j, "lo", row->ok ? x->st.lo : NAN);
  zlb_jw_key_double(j, "hi", row->ok ? x->st.hi : NAN);
  zlb_jw_key_int(j, "pairs", row->ok ? (long long)x->st.pairs : 0);
  zlb_jw_key_int(j, "clock_normalised_pairs", row->ok ? x->st.normalised : 0);
  zlb_jw_key_string(j, "timer", row->ok ? row->timer : NULL);
  zlb_jw_key_string(j, "error", row->ok ? NULL : row->note);
  zlb_jw_key_array(j, "blocks");
  for (int i = 0; row->ok && i < x->nblk; i++) {
    const ab_block_t *b = &x->blk[i];
    zlb_jw_object_begin(j);
    zlb_jw_key_string(j, "side", b->side ? "B" : "A");
    zlb_jw_key_int(j, "order", b->order);
    zlb_jw_key_double(j, "ms", b->ms);
    zlb_jw_key_string(j, "timer", b->timer);
    for (int k = 0; k < 2; k++) {
      const char *sm = k ? "sm_mhz_after" : "sm_mhz_before";
      const char *th = k ? "throttled_after" : "throttled_before";
      const char *why = k ? "throttle_why_after" : "throttle_why_before";
      if (b->have_clk[k]) {
        zlb_jw_key_int(j, sm, b->clk[k].sm_mhz);
        zlb_jw_key_bool(j, th, b->clk[k].throttled);
        zlb_jw_key_string(j, why, b->clk[k].why);
      } else {
        zlb_jw_key_null(j, sm);
        zlb_jw_key_null(j, th);
        zlb_jw_key_null(j, why);
      }
    }
    zlb_jw_object_end(j);
  }
  zlb_jw_array_end(j);
  zlb_jw_object_end(j);
}

/* ---- one operator ---------------------------------------------------------------- */

typedef struct ab_shared {
  zlb_backend_t *b;
  zlb_stream_t stream;
  zlb_flush_t flush;
  size_t flush_bytes;
  zlb_flush_t l2flush; /* --l2 cold: the graph and queue timers' flush (made once) */
} ab_shared_t;

static void count_row(zlb_ab_result_t *res, const zlb__row_t *row, const ab_ctx_t *x) {
  res->rows++;
  if (!row->ok) {
    res->failed++;
    return;
  }
  switch (x->st.verdict) {
  case ZLB_AB_SAME:
    res->same++;
    break;
  case ZLB_AB_FASTER:
    res->faster++;
    break;
  case ZLB_AB_SLOWER:
    res->slower++;
    break;
  default:
    res->ambiguous++;
    break;
  }
}

static void op_setup(zlb__run_t *r, const zlb_op_t *op, const char *side, ab_out_t *w) {
  int rc;
  if (!op->setup)
    return;
  r->errbuf[0] = '\0';
  if ((rc = op->setup(&r->env, r->dtypes)))
    out_text(w, "# %s: %s's setup failed: %s (%d)\n", op->name, side,
             r->errbuf[0] ? r->errbuf : "no message", rc);
}

static int run_op(const zlb_ab_opts_t *o, ab_shared_t *sh, const zlb_op_entry_t *ea,
                  const zlb_op_t *op_b, ab_out_t *w, zlb_ab_result_t *res, zlb_error_t *stop,
                  zlb_error_t *err) {
  zlb__run_t r;
  zlb_run_opts_t ro = o->run;
  zlb_run_result_t rres;
  ab_ctx_t *x = zlb_xcalloc(1, sizeof(*x));
  int rc;

  memset(&r, 0, sizeof(r));
  memset(&rres, 0, sizeof(rres));
  ro.op = ea->op->name;
  ro.trials = 1;
  r.o = &ro;
  r.b = sh->b;
  r.entry = ea;
  r.op = ea->op;
  r.res = &rres;
  r.stream = sh->stream;
  r.flush = sh->flush;
  zlb_strbuf_init(&r.log_path);
  zlb_strbuf_init(&r.identity_path);
  x->o = o;
  x->op_b = op_b;
  x->self = op_b == ea->op;
  x->nblocks = o->blocks;
  r.ab_time = ab_time;
  r.ab_ctx = x;
  zlb__run_env_init(&r);
  if ((rc = zlb__resolve_dtypes(&ro, r.op, &r.dtypes, err)) ||
      (rc = zlb__run_resolve_shapes(&r, err)) ||
      (rc = zlb__resolve_deny(&ro, r.op->name, &r.deny, r.deny_source, sizeof(r.deny_source),
                              err)) ||
      (rc = zlb__resolve_timer(&ro, r.b->desc, &r.timer, err)) ||
      (rc = zlb__resolve_calibration(&ro, r.b->desc, r.timer, err)))
    goto out;
  r.timing = o->run.timing;
  r.timing.flush_bytes = sh->flush_bytes;
  /* --l2 cold: the graph and queue timers' own flush buffer, as in run.c. */
  if (r.timing.l2_cold && (r.timer == ZLB_TIMER_GRAPH || r.timer == ZLB_TIMER_QUEUE)) {
    if (!sh->l2flush.buf &&
        (rc = zlb_flush_init(&sh->l2flush, r.b,
                             zlb__l2_cold_bytes(o->run.timing.flush_bytes, r.b->desc, &r.b->info),
                             err)))
      goto out;
    r.timing.l2_flush = &sh->l2flush;
  }
  op_setup(&r, r.op, "A", w);
  if (!x->self)
    op_setup(&r, op_b, "B", w);
  for (int d = 0; d < ZLB_DT_COUNT && !stop->code; d++) {
    zlb_dtype_t dt = (zlb_dtype_t)d;
    if (!(r.dtypes & ZLB_DT_BIT(d)))
      continue;
    out_text(w, "\n%s %s (timer %s, %d blocks per side)\n", r.op->name, zlb_dtype_name(dt),
             zlb_timer_name(r.timer), x->nblocks);
    out_text(w, "%-16s %-22s %10s %10s %8s %-20s %-9s %s\n", "operator", "shape", "A ms",
             "B ms", "B/A", "interval", "verdict", "note");
    for (size_t i = 0; i < r.shapes.n && !stop->code; i++) {
      zlb__row_t row;
      if (o->run.interrupted && *o->run.interrupted) {
        res->interrupted = 1;
        goto out;
      }
      memset(&row, 0, sizeof(row));
      x->nblk = 0;
      /* The row's pair order: from the run's seed, the operator, dtype and
       * shape, so the same command draws the same orders. */
      x->row_seed = zlb_fnv1a64_add(zlb_fnv1a64(r.op->name), &o->run.seed, sizeof(o->run.seed));
      x->row_seed = zlb_fnv1a64_add(x->row_seed, &d, sizeof(d));
      x->row_seed = zlb_fnv1a64_add(x->row_seed, &i, sizeof(i));
      zlb__run_case(&r, dt, &r.shapes.v[i], &row, stop);
      count_row(res, &row, x);
      row_text(w, r.op->name, &row, x);
      row_json(w, r.op->name, dt, &row, x);
      zlb_measurement_release(&row.m[0]);
      zlb_measurement_release(&row.m[1]);
    }
  }
out:
  zlb_shape_list_release(&r.shapes);
  zlb__hostbuf_release(&r);
  if (!stop->code)
    zlb__pools_release(&r);
  zlb_strbuf_release(&r.log_path);
  zlb_strbuf_release(&r.identity_path);
  free(x);
  return rc;
}

/* ---- the comparison ---------------------------------------------------------------- */

static int load_a(const zlb_ab_opts_t *o, zlb_op_set_t *set, const char *backend,
                  zlb_error_t *err) {
  int rc;
  if (o->run.libs)
    for (size_t i = 0; i < o->run.libs->n; i++)
      if ((rc = zlb_ops_load_library(set, o->run.libs->v[i], err)))
        return rc;
  if ((rc = zlb_ops_load_env(set, err)))
    return rc;
  rc = zlb_ops_load_builtin(set, backend, err);
  if (rc == ZLB_ENOTFOUND) {
    zlb_error_clear(err);
    rc = 0;
  }
  return rc;
}

static int by_name(const void *a, const void *b) {
  const zlb_op_entry_t *const *x = a, *const *y = b;
  return strcmp((*x)->op->name, (*y)->op->name);
}

int zlb_ab(const zlb_ab_opts_t *o, zlb_ab_result_t *res, zlb_error_t *err) {
  zlb_op_set_t sa = ZLB_OP_SET_INIT, sb = ZLB_OP_SET_INIT;
  const zlb_op_set_t *setb = &sa;
  ab_shared_t sh;
  ab_out_t w;
  zlb_error_t stop = ZLB_ERROR_INIT;
  const zlb_op_entry_t **list = NULL;
  size_t nlist = 0;
  double t0 = zlb_now_s();
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_strvec_t skipped = ZLB_STRVEC_INIT; /* operator, why; in pairs */
  int rc;

  memset(res, 0, sizeof(*res));
  memset(&sh, 0, sizeof(sh));
  memset(&w, 0, sizeof(w));
  w.o = o;
  zlb_jw_init(&w.json, 1);
  res->self = !o->lib_b;
  if (o->blocks < 5 || o->blocks > ZLB_AB_MAX_BLOCKS) {
    rc = zlb_error_set(err, ZLB_EINVAL, "blocks must be from 5 to %d, not %d",
                       ZLB_AB_MAX_BLOCKS, o->blocks);
    goto out;
  }
  if (!(o->threshold > 0 && o->threshold < 1)) {
    rc = zlb_error_set(err, ZLB_EINVAL, "threshold must be in (0, 1), not %g", o->threshold);
    goto out;
  }
  if (!o->run.out_dir) {
    rc = zlb_error_set(err, ZLB_EINVAL, "no output folder given");
    goto out;
  }
  if ((rc = zlb_run_check_flush(&o->run, err)))
    goto out;
  /* The libraries first: one of them may register the backend. */
  if (o->run.libs)
    for (size_t i = 0; i < o->run.libs->n; i++)
      if ((rc = zlb_ops_load_library(&sa, o->run.libs->v[i], err)))
        goto out;
  if ((rc = zlb_backend_open_name(o->run.backend, &sh.b, err)) ||
      (rc = zlb_backend_select_device(sh.b, o->run.device, err)) ||
      (rc = zlb__resolve_flush(&o->run, sh.b->desc, &sh.b->info, err)) ||
      (rc = load_a(o, &sa, sh.b->desc->name, err)))
    goto out;
  if (o->lib_b) {
    if ((rc = zlb_ops_load_library(&sb, o->lib_b, err)))
      goto out;
    setb = &sb;
  }
  /* The operators: those named, or every one A has on this backend. */
  list = zlb_xcalloc(sa.n + (o->ops ? o->ops->n : 0) + 1, sizeof(*list));
  if (o->ops && o->ops->n) {
    for (size_t i = 0; i < o->ops->n; i++) {
      const zlb_op_entry_t *e = zlb_ops_find(&sa, o->ops->v[i], sh.b->desc->name);
      int twice = 0;
      if (!e) {
        rc = zlb_ops_unknown(&sa, o->ops->v[i], sh.b->desc->name, err);
        goto out;
      }
      /* Named twice: compared once (twice would count its rows twice). */
      for (size_t k = 0; k < nlist && !twice; k++)
        twice = list[k] == e;
      if (!twice)
        list[nlist++] = e;
    }
  } else {
    /* The core screen's operators: the inventory's for this backend less
     * the dismissed ones, as `zlbench batch` selects them; every operator
     * of A on the backend where the inventory has none. */
    zlb_strvec_t inv = ZLB_STRVEC_INIT, dis = ZLB_STRVEC_INIT, why = ZLB_STRVEC_INIT;
    zlb_strbuf_t ap = ZLB_STRBUF_INIT;
    if (!zlb_assets_dir(&ap, err)) {
      size_t n0 = ap.len;
      zlb_strbuf_addstr(&ap, "/inventory.yaml");
      if (zlb_path_exists(ap.buf) && (rc = zlb_inventory_load(ap.buf, sh.b->desc->name, &inv, err)))
        goto inv_out;
      zlb_strbuf_setlen(&ap, n0);
      zlb_strbuf_addstr(&ap, "/dismiss.yaml");
      if (zlb_path_exists(ap.buf) &&
          (rc = zlb_dismiss_load(ap.buf, sh.b->desc->name, &dis, &why, err)))
        goto inv_out;
    }
    zlb_error_clear(err);
    for (size_t i = 0; i < sa.n; i++)
      if (!strcmp(sa.v[i].op->backend, sh.b->desc->name) &&
          (!inv.n || zlb_strvec_find(&inv, sa.v[i].op->name) >= 0) &&
          zlb_strvec_find(&dis, sa.v[i].op->name) < 0)
        list[nlist++] = &sa.v[i];
    qsort(list, nlist, sizeof(*list), by_name);
  inv_out:
    zlb_strvec_release(&inv);
    zlb_strvec_release(&dis);
    zlb_strvec_release(&why);
    zlb_strbuf_release(&ap);
    if (rc)
      goto out;
  }
  if (!nlist) {
    rc = zlb_error_set(err, ZLB_ENOTFOUND, "no operators for backend '%s'; give --lib",
                       sh.b->desc->name);
    goto out;
  }
  for (size_t i = 0; i < nlist; i++)
    if (!zlb_ops_find(setb, list[i]->op->name, sh.b->desc->name)) {
      rc = zlb_error_set(err, ZLB_ENOTFOUND,
                         "operator '%s' is in A but not in B ('%s'); name the operators both "
                         "have",
                         list[i]->op->name, o->lib_b);
      goto out;
    }
  if ((rc = zlb_check_writable_dir(o->run.out_dir, err)))
    goto out;
  zlb_path_join(&p, o->run.out_dir, "ab.log");
  if (!(w.log = fopen(p.buf, "w"))) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot write '%s'", p.buf);
    goto out;
  }
  sh.flush_bytes = zlb__direct_flush_bytes(&o->run, sh.b->desc);
  if ((rc = sh.b->v->stream_create(sh.b, &sh.stream, err)) ||
      (rc = zlb_flush_init(&sh.flush, sh.b, sh.flush_bytes, err)))
    goto out;

  zlb_jw_object_begin(&w.json);
  zlb_jw_key_string(&w.json, "schema", "zlbench.ab/1");
  zlb_jw_key_string(&w.json, "backend", sh.b->desc->name);
  zlb_jw_key_int(&w.json, "device", o->run.device);
  zlb_jw_key_bool(&w.json, "self", res->self);
  zlb_jw_key_string(&w.json, "lib_b", o->lib_b);
  zlb_jw_key_int(&w.json, "blocks_per_side", o->blocks);
  zlb_jw_key_string(&w.json, "order", zlb_ab_order_name(o->order));
  zlb_jw_key_double(&w.json, "threshold", o->threshold);
  zlb_jw_key_double(&w.json, "rep_ms", o->run.timing.rep_ms);
  zlb_jw_key_double(&w.json, "warmup_ms", o->run.timing.warmup_ms);
  zlb_jw_key_int(&w.json, "seed", (long long)o->run.seed);
  zlb_jw_key_array(&w.json, "rows");
  out_text(&w, "zlbench ab: A %s, B %s; backend %s, device %d; %d blocks per side "
               "(pair order %s), threshold %.3g %%\n",
           "(--lib and the built-in library)", o->lib_b ? o->lib_b : "= A (self-compare)",
           sh.b->desc->name, o->run.device, o->blocks, zlb_ab_order_name(o->order),
           o->threshold * 100);
  for (size_t i = 0; i < nlist && !stop.code && !res->interrupted; i++) {
    const zlb_op_entry_t *eb = zlb_ops_find(setb, list[i]->op->name, sh.b->desc->name);
    zlb_error_t e = ZLB_ERROR_INIT;
    if (run_op(o, &sh, list[i], eb->op, &w, res, &stop, &e)) {
      /* An operator that cannot run here (a shape file without it, ...):
       * said, kept for results.json, and the others go on. */
      out_text(&w, "\n%s: skipped: %s\n", list[i]->op->name, e.msg);
      zlb_strvec_push(&skipped, list[i]->op->name);
      zlb_strvec_push(&skipped, e.msg);
      if (!res->skipped++)
        res->skip_code = e.code ? e.code : ZLB_EINVAL;
      res->failed++;
    }
  }
  zlb_jw_array_end(&w.json);
  /* Why each skipped operator has no row. */
  zlb_jw_key_array(&w.json, "skipped");
  for (size_t i = 0; i + 1 < skipped.n; i += 2) {
    zlb_jw_object_begin(&w.json);
    zlb_jw_key_string(&w.json, "operator", skipped.v[i]);
    zlb_jw_key_string(&w.json, "error", skipped.v[i + 1]);
    zlb_jw_object_end(&w.json);
  }
  zlb_jw_array_end(&w.json);
  res->seconds = zlb_now_s() - t0;
  zlb_jw_key_object(&w.json, "summary");
  zlb_jw_key_int(&w.json, "rows", res->rows);
  zlb_jw_key_int(&w.json, "same", res->same);
  zlb_jw_key_int(&w.json, "faster", res->faster);
  zlb_jw_key_int(&w.json, "slower", res->slower);
  zlb_jw_key_int(&w.json, "ambiguous", res->ambiguous);
  zlb_jw_key_int(&w.json, "failed", res->failed);
  if (res->self)
    zlb_jw_key_int(&w.json, "false_verdicts", res->faster + res->slower);
  else
    zlb_jw_key_null(&w.json, "false_verdicts");
  zlb_jw_key_double(&w.json, "seconds", res->seconds);
  zlb_jw_key_string(&w.json, "stopped", stop.code ? stop.msg : NULL);
  zlb_jw_object_end(&w.json);
  zlb_jw_object_end(&w.json);

  out_text(&w, "\nrows %d: same %d, faster %d, slower %d, ambiguous %d, failed %d (%.1f s)\n",
           res->rows, res->same, res->faster, res->slower, res->ambiguous, res->failed,
           res->seconds);
  if (res->self)
    out_text(&w, "false verdicts: %d of %d rows\n", res->faster + res->slower, res->rows);
  if (stop.code)
    out_text(&w, "stopped: %s\n", stop.msg);

  zlb_strbuf_reset(&p);
  zlb_path_join(&p, o->run.out_dir, "results.json");
  rc = zlb_write_file_atomic(p.buf, w.json.out.buf, w.json.out.len, err);
  if (!rc && o->run.json_path)
    rc = zlb_write_user_file(o->run.json_path, w.json.out.buf, w.json.out.len, err);
  if (!rc && w.log && (fflush(w.log) || ferror(w.log) || w.log_failed)) {
    zlb_strbuf_reset(&p);
    zlb_path_join(&p, o->run.out_dir, "ab.log");
    rc = zlb_error_set(err, ZLB_EIO, "cannot write '%s'", p.buf);
  }
  if (!rc && stop.code) {
    res->fatal = stop.code == ZLB_EFATAL;
    zlb_strlcpy(res->stop_reason, stop.msg, sizeof(res->stop_reason));
    *err = stop;
    rc = stop.code;
  } else if (!rc && res->interrupted) {
    rc = zlb_error_set(err, ZLB_EINTR, "interrupted after %d rows", res->rows);
  }

out:
  if (sh.b && !res->fatal) {
    zlb_flush_release(&sh.flush, sh.b);
    zlb_flush_release(&sh.l2flush, sh.b);
    if (sh.stream)
      sh.b->v->stream_destroy(sh.b, sh.stream);
  }
  if (w.log)
    fclose(w.log);
  free(list);
  zlb_jw_release(&w.json);
  zlb_strbuf_release(&p);
  zlb_strvec_release(&skipped);
  if (!res->fatal)
    zlb_backend_close(sh.b);
  zlb_op_set_release(&sb);
  zlb_op_set_release(&sa);
  return rc;
}
