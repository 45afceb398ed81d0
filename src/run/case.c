/* One case from start to finish: describe, allocate, fill, prepare, check
 * accuracy (poisoned outputs, NaN never passes, reproducibility for random
 * operators), time both implementations, release. A mismatch is a FAILED
 * row, never a latency; a device fault stops the run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

/* ---- timing callbacks --------------------------------------------------- */

struct launch_ctx {
  zlb__run_t *r;
  zlb_case_t *c;
  int which;
};

static const zlb_impl_t *impl_of(const zlb__run_t *r, int which) {
  return which == ZLB_BASELINE ? &r->op->baseline : &r->op->candidate;
}

/* Turn an implementation's return code into an error object. */
static int impl_error(zlb__run_t *r, int which, const char *what, int rc,
                      zlb_error_t *err) {
  const char *detail = r->errbuf[0] ? r->errbuf : "no message";
  if (rc > 0)
    return zlb_error_vendor(err, ZLB_EDEVICE, rc, zlb_backend_error_name(r->b, rc),
                            "%s %s '%s': %s (%d): %s", what,
                            which == ZLB_BASELINE ? "baseline" : "candidate",
                            impl_of(r, which)->name, zlb_backend_error_name(r->b, rc),
                            rc, detail);
  return zlb_error_set(err, rc < 0 ? rc : ZLB_EOP, "%s %s '%s': %s: %s", what,
                       which == ZLB_BASELINE ? "baseline" : "candidate",
                       impl_of(r, which)->name, zlb_strerror(rc), detail);
}

static int call_impl(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  struct launch_ctx *lc = ctx;
  int rc;
  lc->r->errbuf[0] = '\0';
  rc = impl_of(lc->r, lc->which)->enqueue(&lc->r->env, lc->c, lc->which, (void *)s);
  return rc ? impl_error(lc->r, lc->which, "enqueue of", rc, err) : 0;
}

/* Captures run under a scratch RNG state: a failed capture must not move
 * the real generator (the seed's "throwaway RNG state"). */
static void rng_guard(void *ctx, int scratch) {
  struct launch_ctx *lc = ctx;
  zlb__run_t *r = lc->r;
  if (scratch) {
    r->scratch_rng = r->rng;
    r->env.rng = &r->scratch_rng;
  } else {
    r->env.rng = &r->rng;
  }
}

/* ---- tensors -------------------------------------------------------------- */

static int64_t numel_of(const zlb_tensor_t *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++)
    n *= t->dims[i];
  return n;
}

static size_t bytes_of(const zlb_tensor_t *t) {
  return (size_t)t->numel * zlb_dtype_size(t->dtype);
}

static void free_tensors(zlb__run_t *r, zlb_case_t *c) {
  for (int i = 0; i < c->n_in; i++)
    if (c->in[i].data)
      r->b->v->mem_free(r->b, c->in[i].data);
  for (int w = 0; w < 2; w++)
    for (int k = 0; k < c->n_out; k++)
      if (c->out[w][k].data)
        r->b->v->mem_free(r->b, c->out[w][k].data);
}

static int alloc_tensor(zlb__run_t *r, zlb_tensor_t *t, zlb_error_t *err) {
  t->numel = numel_of(t);
  if (r->b->v->mem_alloc(r->b, bytes_of(t), &t->data, err))
    return zlb_error_prefix(err, "cannot allocate tensor '%s' (%zu bytes)",
                            t->name ? t->name : "?", bytes_of(t));
  return 0;
}

enum { SLOT_FILL = 0, SLOT_IN = 1, SLOT_OUT = 1 + ZLB_MAX_TENSORS,
       SLOT_AGAIN = 1 + 3 * ZLB_MAX_TENSORS };

/* A host buffer of at least n bytes in a slot, reused by later cases. */
static void *host_buf(zlb__run_t *r, int slot, size_t n) {
  if (!n)
    n = 1;
  if (r->host_cap[slot] < n) {
    free(r->host[slot]); /* no realloc: the old contents are not needed */
    r->host[slot] = zlb_xmalloc(n);
    r->host_cap[slot] = n;
  }
  return r->host[slot];
}

void zlb__hostbuf_release(zlb__run_t *r) {
  for (int i = 0; i < ZLB__HOST_SLOTS; i++) {
    free(r->host[i]);
    r->host[i] = NULL;
    r->host_cap[i] = 0;
  }
}

static int setup_tensors(zlb__run_t *r, zlb_case_t *c, uint64_t seed, zlb_error_t *err) {
  int rc;
  if (c->n_in > ZLB_MAX_TENSORS || c->n_out > ZLB_MAX_TENSORS || c->n_in < 0 ||
      c->n_out < 1)
    return zlb_error_set(err, ZLB_EOP, "case_init described %d inputs and %d outputs",
                         c->n_in, c->n_out);
  for (int k = 0; k < c->n_out; k++) {
    c->out[1][k] = c->out[0][k];
    c->out[0][k].data = c->out[1][k].data = NULL;
  }
  for (int i = 0; i < c->n_in; i++) {
    zlb_tensor_t *t = &c->in[i];
    void *host;
    if ((rc = alloc_tensor(r, t, err)))
      return rc;
    if (t->fill == ZLB_FILL_NONE)
      continue;
    host = host_buf(r, SLOT_FILL, bytes_of(t));
    zlb_fill_host(t, host, seed + 0x1000u * (uint64_t)(i + 1));
    rc = r->b->v->memcpy_htod(r->b, t->data, host, bytes_of(t), err);
    if (rc)
      return rc;
  }
  for (int w = 0; w < 2; w++)
    for (int k = 0; k < c->n_out; k++)
      if ((rc = alloc_tensor(r, &c->out[w][k], err)))
        return rc;
  return 0;
}

/* Poison: baseline 0xFF, candidate 0xFE, so an element neither writes
 * differs and a float one reads as NaN. */
static int poison(zlb__run_t *r, zlb_case_t *c, int which, zlb_error_t *err) {
  for (int k = 0; k < c->n_out; k++) {
    zlb_tensor_t *t = &c->out[which][k];
    int rc = r->b->v->memset_async(r->b, t->data, which == ZLB_BASELINE ? 0xFF : 0xFE,
                                   bytes_of(t), r->stream, err);
    if (rc)
      return rc;
  }
  return r->b->v->stream_sync(r->b, r->stream, err);
}

static int run_once(zlb__run_t *r, zlb_case_t *c, int which, zlb_error_t *err) {
  struct launch_ctx lc = {r, c, which};
  int rc = call_impl(&lc, r->stream, err);
  if (!rc)
    rc = r->b->v->stream_sync(r->b, r->stream, err);
  return rc;
}

static int download(zlb__run_t *r, const zlb_tensor_t *t, int slot, const void **host,
                    zlb_error_t *err) {
  void *h = host_buf(r, slot, bytes_of(t));
  *host = h;
  return r->b->v->memcpy_dtoh(r->b, h, t->data, bytes_of(t), err);
}

/* The accuracy check: each impl once on poisoned outputs, compare; an impl
 * that draws random numbers must reproduce its output bit for bit from the
 * same RNG state. */
static int accuracy(zlb__run_t *r, zlb_case_t *c, zlb_error_t *err) {
  zlb_host_view_t view;
  zlb_rng_t before;
  int rc;

  memset(&view, 0, sizeof(view));
  if ((rc = poison(r, c, ZLB_BASELINE, err)) || (rc = poison(r, c, ZLB_CANDIDATE, err)) ||
      (rc = run_once(r, c, ZLB_BASELINE, err)))
    return rc;
  before = r->rng;
  if ((rc = run_once(r, c, ZLB_CANDIDATE, err)))
    return rc;
  for (int i = 0; i < c->n_in; i++)
    if ((rc = download(r, &c->in[i], SLOT_IN + i, &view.in[i], err)))
      return rc;
  for (int w = 0; w < 2; w++)
    for (int k = 0; k < c->n_out; k++)
      if ((rc = download(r, &c->out[w][k], SLOT_OUT + w * ZLB_MAX_TENSORS + k,
                         &view.out[w][k], err)))
        return rc;
  if ((rc = zlb_check_outputs(r->op, &r->env, c, &view, err)))
    return rc;
  if (r->op->candidate.flags & ZLB_IMPL_USES_RNG) {
    zlb_rng_t after = r->rng;
    const void *again;
    r->rng = before;
    if ((rc = poison(r, c, ZLB_CANDIDATE, err)) ||
        (rc = run_once(r, c, ZLB_CANDIDATE, err)))
      return rc;
    r->rng = after;
    for (int k = 0; k < c->n_out; k++) {
      if ((rc = download(r, &c->out[ZLB_CANDIDATE][k], SLOT_AGAIN + k, &again, err)))
        return rc;
      if (memcmp(again, view.out[ZLB_CANDIDATE][k], bytes_of(&c->out[ZLB_CANDIDATE][k])))
        return zlb_error_set(err, ZLB_EMISMATCH,
                             "candidate is not reproducible: output '%s' differs between "
                             "two runs from the same seed and offset",
                             c->out[1][k].name ? c->out[1][k].name : "out");
    }
  }
  return 0;
}

/* ---- verdicts outside capture ---------------------------------------------- */

/*
 * A device error outside capture: fatal when the backend's table says so
 * or the context no longer works (the process must restart), otherwise
 * this row fails and the run goes on.
 */
static int is_fatal(zlb__run_t *r, const zlb_error_t *e) {
  zlb_error_t probe = ZLB_ERROR_INIT;
  if (e->code == ZLB_EFATAL)
    return 1;
  if (e->vendor_code &&
      zlb_backend_classify(r->b->desc, e->vendor_code) == ZLB_VERDICT_FATAL)
    return 1;
  if (e->vendor_code && r->b->v->health_probe && r->b->v->health_probe(r->b, &probe))
    return 1;
  return 0;
}

static void fail_row(zlb__row_t *row, const char *kind, const zlb_error_t *e) {
  row->ok = 0;
  snprintf(row->marker, sizeof(row->marker), "error=%s", kind);
  zlb_strlcpy(row->note, e->msg, sizeof(row->note));
}

static void fatal_row(zlb__run_t *r, zlb__row_t *row, const char *phase,
                      const zlb_error_t *e, zlb_error_t *stop) {
  const char *reason = e->vendor_name[0] ? e->vendor_name : zlb_err_name(e->code);
  row->ok = 0;
  snprintf(row->marker, sizeof(row->marker), "fatal(phase=%s,reason=%s)", phase, reason);
  zlb_strlcpy(row->note, e->msg, sizeof(row->note));
  zlb_error_vendor(stop, ZLB_EFATAL, e->vendor_code, reason,
                   "device fault in operator '%s' (%s, %s): %s; no latency is reported "
                   "for a broken kernel",
                   r->op->name, phase, row->shape, e->msg);
}

/* ---- the case --------------------------------------------------------------- */

int zlb__describe_case(zlb__run_t *r, zlb_dtype_t dt, const zlb_shape_t *shape,
                       zlb__row_t *row) {
  zlb_case_t c;
  int rc;
  memset(&c, 0, sizeof(c));
  c.dtype = dt;
  c.shape = *shape;
  c.level = r->o->level;
  r->errbuf[0] = '\0';
  zlb_shape_format(shape, row->shape, sizeof(row->shape));
  rc = r->op->case_init(&r->env, &c);
  if (!rc)
    zlb_strlcpy(row->full_detail, c.detail[0] ? c.detail : row->shape,
                sizeof(row->full_detail));
  else
    zlb_strlcpy(row->full_detail, row->shape, sizeof(row->full_detail));
  if (r->op->case_release)
    r->op->case_release(&r->env, &c);
  return rc;
}

static void fill_rates(zlb__run_t *r, zlb_dtype_t dt, zlb__row_t *row) {
  row->speedup = row->cand_ms > 0 ? row->base_ms / row->cand_ms : NAN;
  row->gbps = row->bytes > 0 && row->cand_ms > 0 ? row->bytes / (row->cand_ms * 1e-3) / 1e9 : NAN;
  row->tflops = row->flops > 0 && row->cand_ms > 0
                    ? row->flops / (row->cand_ms * 1e-3) / 1e12
                    : NAN;
  row->pct_peak = zlb__peaks_pct(r, dt, row->bytes, row->flops, row->cand_ms);
  row->noise = row->m[1].noise;
}

/* Clocks before and after the case; a power or thermal slowdown reported
 * at either end flags the row. */
static void read_clocks(zlb__run_t *r, zlb__row_t *row, int which) {
  zlb_error_t e = ZLB_ERROR_INIT;
  if (!r->b->v->clocks || r->b->v->clocks(r->b, &row->clk[which], &e))
    return;
  row->have_clocks |= 1 << which;
}

static void flag_throttle(zlb__row_t *row) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  const char *why = row->clk[0].throttled ? row->clk[0].why : row->clk[1].why;
  if (!((row->have_clocks & 1) && row->clk[0].throttled) &&
      !((row->have_clocks & 2) && row->clk[1].throttled))
    return;
  if (strcmp(row->marker, "-"))
    zlb_strbuf_addf(&sb, "%s+", row->marker);
  zlb_strbuf_addf(&sb, "throttled(%s)", why);
  zlb_strlcpy(row->marker, sb.buf, sizeof(row->marker));
  zlb_strbuf_release(&sb);
}

static void timer_column(zlb__row_t *row, const char *mark[2]) {
  zlb_timer_kind_t tb = row->m[0].timer, tc = row->m[1].timer;
  zlb_strlcpy(row->timer, tb == tc ? zlb_timer_name(tc) : "mixed", sizeof(row->timer));
  if (!strcmp(mark[0], mark[1]))
    zlb_strlcpy(row->marker, mark[0], sizeof(row->marker));
  else {
    zlb_strbuf_t sb = ZLB_STRBUF_INIT;
    zlb_strbuf_addf(&sb, "baseline:%s|candidate:%s", mark[0], mark[1]);
    zlb_strlcpy(row->marker, sb.buf, sizeof(row->marker));
    zlb_strbuf_release(&sb);
  }
}

int zlb__run_case(zlb__run_t *r, zlb_dtype_t dt, const zlb_shape_t *shape,
                  zlb__row_t *row, zlb_error_t *stop) {
  zlb_case_t c;
  zlb_error_t e = ZLB_ERROR_INIT;
  int prepared[2] = {0, 0}, rc = 0, initialised = 0;
  char mark[2][160];
  const char *marks[2] = {mark[0], mark[1]};

  memset(&c, 0, sizeof(c));
  c.dtype = dt;
  c.shape = *shape;
  c.level = r->o->level;
  row->base_ms = row->cand_ms = row->speedup = row->gbps = row->tflops = row->pct_peak = NAN;
  snprintf(row->marker, sizeof(row->marker), "-");
  zlb_strlcpy(row->timer, zlb_timer_name(r->timer), sizeof(row->timer));
  zlb_shape_format(shape, row->shape, sizeof(row->shape));

  r->errbuf[0] = '\0';
  if ((rc = r->op->case_init(&r->env, &c))) {
    zlb_error_set(&e, rc < 0 ? rc : ZLB_EOP, "case_init rejected shape %s: %s",
                  row->shape, r->errbuf[0] ? r->errbuf : zlb_strerror(rc));
    fail_row(row, "setup", &e);
    return 0;
  }
  initialised = 1;
  row->bytes = c.bytes;
  row->flops = c.flops;
  /* Inputs depend on the seed and the case, not on the order of cases. */
  if ((rc = setup_tensors(r, &c, r->o->seed ^ (uint64_t)dt * 0x9e37u ^
                                     zlb_fnv1a64(row->shape), &e))) {
    if (e.vendor_code && is_fatal(r, &e))
      fatal_row(r, row, "setup", &e, stop);
    else
      fail_row(row, "setup", &e);
    goto out;
  }
  for (int w = 0; w < 2; w++) {
    const zlb_impl_t *im = impl_of(r, w);
    if (!im->prepare)
      continue;
    r->errbuf[0] = '\0';
    if ((rc = im->prepare(&r->env, &c, w))) {
      impl_error(r, w, "prepare of", rc, &e);
      if (e.vendor_code && is_fatal(r, &e))
        fatal_row(r, row, "prepare", &e, stop);
      else
        fail_row(row, "prepare", &e);
      goto out;
    }
    prepared[w] = 1;
  }
  zlb_strlcpy(row->config, c.config[ZLB_CANDIDATE], sizeof(row->config));

  if ((rc = accuracy(r, &c, &e))) {
    if (e.code == ZLB_EMISMATCH)
      fail_row(row, "mismatch", &e);
    else if (is_fatal(r, &e))
      fatal_row(r, row, "accuracy", &e, stop);
    else
      fail_row(row, "launch", &e);
    goto out;
  }

  read_clocks(r, row, 0);
  for (int w = 0; w < 2; w++) {
    struct launch_ctx lc = {r, &c, w};
    zlb_launch_t l = {call_impl, rng_guard, &lc};
    zlb_graph_failure_t fail;
    rc = zlb_time_case(r->b, r->stream, &l, r->timer, r->deny, &r->timing, &r->flush,
                       &row->m[w], mark[w], sizeof(mark[w]), &fail, &e);
    if (rc == ZLB_EPOISONED) {
      row->ok = 0;
      snprintf(row->marker, sizeof(row->marker), "poisoned(phase=%s,reason=%s)",
               zlb_phase_name(fail.phase), fail.reason);
      zlb_strlcpy(row->note, e.msg, sizeof(row->note));
      zlb_error_vendor(stop, ZLB_EPOISONED, e.vendor_code, fail.reason,
                       "BENCHMARK_CAPTURE_POISONED: operator '%s' is capture-incompatible: "
                       "the capture attempt (%s, %s) left the device context unusable; "
                       "re-run it in a fresh process with --deny-capture %s",
                       r->op->name, zlb_phase_name(fail.phase), fail.reason, r->op->name);
      goto out;
    }
    if (rc == ZLB_EFATAL || (rc && is_fatal(r, &e))) {
      fatal_row(r, row, fail.phase ? zlb_phase_name(fail.phase) : "timing", &e, stop);
      goto out;
    }
    if (rc) {
      fail_row(row, "launch", &e);
      goto out;
    }
  }
  read_clocks(r, row, 1);
  row->ok = 1;
  row->base_ms = row->m[0].value_ms;
  row->cand_ms = row->m[1].value_ms;
  row->samples = (int)row->m[1].nsamples;
  timer_column(row, marks);
  fill_rates(r, dt, row);
  flag_throttle(row);
  if (row->m[1].note[0])
    zlb_strlcpy(row->note, row->m[1].note, sizeof(row->note));

out:
  for (int w = 0; w < 2; w++)
    if (prepared[w] && impl_of(r, w)->release && !stop->code)
      impl_of(r, w)->release(&r->env, &c, w);
  if (initialised && r->op->case_release && !stop->code)
    r->op->case_release(&r->env, &c);
  if (!stop->code)
    free_tensors(r, &c);
  return 0;
}
