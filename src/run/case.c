/* One case from start to finish: describe, allocate, fill, prepare, check
 * accuracy (poisoned outputs, NaN never passes, reproducibility for random
 * operators), time both implementations, release. A mismatch is a FAILED
 * row, never a latency; a device fault stops the run. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

/* ---- timing callbacks --------------------------------------------------- */

struct launch_ctx {
  zlb__run_t *r;
  zlb_case_t *c;
  int which;
  int calls; /* enqueues per timed call: 1, or 2 under ZL_TEST_SLOW_CANDIDATE */
  struct integ *integ; /* --integrity: the checked sample's state (NULL: none) */
};

static const zlb_impl_t *impl_of(const zlb__run_t *r, int which) {
  return which == ZLB_BASELINE ? &r->op->baseline : &r->op->candidate;
}

/* Turn an operator's return code into an error object: a positive vendor
 * code with its name, else a ZLB code; `who` names the call, the
 * operator's errbuf says the rest. */
static int op_code_error(zlb__run_t *r, const char *who, int rc, zlb_error_t *err) {
  const char *detail = r->errbuf[0] ? r->errbuf : "no message";
  if (rc > 0)
    return zlb_error_vendor(err, ZLB_EDEVICE, rc, zlb_backend_error_name(r->b, rc),
                            "%s: %s (%d): %s", who, zlb_backend_error_name(r->b, rc), rc,
                            detail);
  return zlb_error_set(err, rc < 0 ? rc : ZLB_EOP, "%s: %s: %s", who, zlb_strerror(rc),
                       detail);
}

/* Turn an implementation's return code into an error object. */
static int impl_error(zlb__run_t *r, int which, const char *what, int rc,
                      zlb_error_t *err) {
  char who[160];
  snprintf(who, sizeof(who), "%s %s '%s'", what,
           which == ZLB_BASELINE ? "baseline" : "candidate", impl_of(r, which)->name);
  return op_code_error(r, who, rc, err);
}

static int call_impl(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  struct launch_ctx *lc = ctx;
  int rc = 0;
  for (int k = 0; k < (lc->calls > 1 ? lc->calls : 1) && !rc; k++) {
    lc->r->errbuf[0] = '\0';
    rc = impl_of(lc->r, lc->which)->enqueue(&lc->r->env, lc->c, lc->which, (void *)s);
  }
  return rc ? impl_error(lc->r, lc->which, "enqueue of", rc, err) : 0;
}

/* Fault injection for testing `zlbench compare`: ZL_TEST_SLOW_CANDIDATE=OP
 * (comma-separated names) makes every timed call of OP's candidate enqueue
 * it twice, so its measured time grows by one call. Never set it for real
 * measurements. */
static int slow_candidate(const char *op) {
  const char *v = getenv("ZL_TEST_SLOW_CANDIDATE");
  size_t n = strlen(op);
  while (v && *v) {
    size_t len = strcspn(v, ",");
    if (len == n && !strncmp(v, op, n))
      return 1;
    v += len + (v[len] == ',');
  }
  return 0;
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

static size_t bytes_of(const zlb_tensor_t *t) {
  return (size_t)t->numel * zlb_dtype_size(t->dtype);
}

/* Every slot, not n_in/n_out: those come from the operator and are only
 * trusted after validation; a slot the harness did not allocate is NULL. */
static void free_tensors(zlb__run_t *r, zlb_case_t *c) {
  for (int i = 0; i < ZLB_MAX_TENSORS; i++) {
    if (c->in[i].data)
      r->b->v->mem_free(r->b, c->in[i].data);
    c->in[i].data = NULL;
    for (int w = 0; w < 2; w++) {
      if (c->out[w][i].data)
        r->b->v->mem_free(r->b, c->out[w][i].data);
      c->out[w][i].data = NULL;
    }
  }
}

void *zlb__host_buf(zlb__run_t *r, int slot, size_t n) {
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

/* ---- what case_init described ------------------------------------------------ */

static void clear_data(zlb_case_t *c) {
  for (int i = 0; i < ZLB_MAX_TENSORS; i++)
    c->in[i].data = c->out[0][i].data = c->out[1][i].data = NULL;
}

/* The largest tensor the harness accepts: 2^48 bytes, far above any device,
 * and small enough that sums of a few of them cannot overflow. */
#define MAX_TENSOR_BYTES ((uint64_t)1 << 48)

static const char *tensor_label(const zlb_tensor_t *t, int out, int i, char *buf,
                                size_t len) {
  snprintf(buf, len, "%s '%s' (%s[%d])", out ? "output" : "input",
           t->name ? t->name : "?", out ? "out" : "in", i);
  return buf;
}

static int bad_field(zlb_error_t *err, const char *what, const char *field,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int bad_field(zlb_error_t *err, const char *what, const char *field,
                     const char *fmt, ...) {
  char val[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(val, sizeof(val), fmt, ap);
  va_end(ap);
  return zlb_error_set(err, ZLB_EOP, "case_init described %s with %s %s", what, field, val);
}

/* One tensor's dtype, rank, extents and fill; sets numel. */
static int check_tensor(zlb_tensor_t *t, int out, int i, zlb_error_t *err) {
  char what[160];
  uint64_t numel = 1, es;
  tensor_label(t, out, i, what, sizeof(what));
  if ((unsigned)t->dtype >= ZLB_DT_COUNT || !zlb_dtype_size(t->dtype))
    return bad_field(err, what, "dtype", "%d (not a known dtype)", (int)t->dtype);
  if (t->ndim < 0 || t->ndim > ZLB_MAX_DIMS)
    return bad_field(err, what, "ndim", "%d (allowed: 0 to %d)", t->ndim, ZLB_MAX_DIMS);
  es = zlb_dtype_size(t->dtype);
  for (int d = 0; d < t->ndim; d++) {
    if (t->dims[d] < 0)
      return bad_field(err, what, "dims", "[%d] = %lld (negative extent)", d,
                       (long long)t->dims[d]);
    if (t->dims[d] && numel > MAX_TENSOR_BYTES / es / (uint64_t)t->dims[d])
      return bad_field(err, what, "dims", "[%d] = %lld (the tensor would exceed 2^48 bytes)",
                       d, (long long)t->dims[d]);
    numel *= (uint64_t)t->dims[d];
  }
  if (!out && (unsigned)t->fill > ZLB_FILL_NONE)
    return bad_field(err, what, "fill", "%d (not a known fill)", (int)t->fill);
  if (!out && t->fill != ZLB_FILL_NONE && (!isfinite(t->lo) || !isfinite(t->hi)))
    return bad_field(err, what, "fill range", "[%g, %g) (not finite)", t->lo, t->hi);
  t->numel = (int64_t)numel;
  return 0;
}

/*
 * case_init comes from an operator library: every field it fills is
 * checked before the harness sizes, allocates or reads anything by it.
 */
static int check_case(zlb_case_t *c, zlb_error_t *err) {
  int rc;
  if (c->n_in < 0 || c->n_in > ZLB_MAX_TENSORS)
    return bad_field(err, "the case", "n_in", "%d (allowed: 0 to %d)", c->n_in,
                     ZLB_MAX_TENSORS);
  if (c->n_out < 1 || c->n_out > ZLB_MAX_TENSORS)
    return bad_field(err, "the case", "n_out", "%d (allowed: 1 to %d)", c->n_out,
                     ZLB_MAX_TENSORS);
  for (int i = 0; i < c->n_in; i++)
    if ((rc = check_tensor(&c->in[i], 0, i, err)))
      return rc;
  for (int k = 0; k < c->n_out; k++)
    if ((rc = check_tensor(&c->out[0][k], 1, k, err)))
      return rc;
  if ((unsigned)c->check > ZLB_CHECK_NONE)
    return bad_field(err, "the case", "check", "%d (not a known check)", (int)c->check);
  if (!isfinite(c->bytes) || c->bytes < 0)
    return bad_field(err, "the case", "bytes", "%g (must be finite and >= 0)", c->bytes);
  if (!isfinite(c->flops) || c->flops < 0)
    return bad_field(err, "the case", "flops", "%g (must be finite and >= 0)", c->flops);
  if (!isfinite(c->reduce_n) || !isfinite(c->rtol) || !isfinite(c->atol) ||
      c->reduce_n < 0 || c->rtol < 0 || c->atol < 0)
    return bad_field(err, "the case", "tolerances",
                     "reduce_n %g, rtol %g, atol %g (must be finite and >= 0)", c->reduce_n,
                     c->rtol, c->atol);
  if (c->check == ZLB_CHECK_STAT && (!isfinite(c->stat_mean) || !isfinite(c->stat_var) ||
                                     c->stat_var < 0))
    return bad_field(err, "the case", "statistics", "mean %g, variance %g", c->stat_mean,
                     c->stat_var);
  /* Strings the harness prints: always terminated. */
  c->detail[sizeof(c->detail) - 1] = '\0';
  c->config[0][sizeof(c->config[0]) - 1] = c->config[1][sizeof(c->config[1]) - 1] = '\0';
  return 0;
}

/* ---- memory the case needs ----------------------------------------------------- */

static void fmt_bytes(double b, char *buf, size_t len) {
  if (b >= 1e9)
    snprintf(buf, len, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    snprintf(buf, len, "%.1f MB", b / 1e6);
  else
    snprintf(buf, len, "%.0f KB", b / 1e3);
}

/* Host bytes the accuracy check needs beyond the buffers already held. */
static uint64_t host_need(const zlb__run_t *r, const zlb_case_t *c, int in_place) {
  uint64_t need = 0, want;
  int custom = c->check == ZLB_CHECK_CUSTOM, rng = !!(r->op->candidate.flags & ZLB_IMPL_USES_RNG);
#define SLOT(slot, n)                                                                  \
  do {                                                                                 \
    want = (n);                                                                        \
    if (want > r->host_cap[slot])                                                      \
      need += want - r->host_cap[slot];                                                \
  } while (0)
  for (int i = 0; i < c->n_in; i++) {
    SLOT(ZLB__SLOT_FILL, zlb__fill_staging_bytes(r, &c->in[i]));
    if (custom && !in_place)
      SLOT(ZLB__SLOT_IN + i, bytes_of(&c->in[i]));
  }
  for (int k = 0; k < c->n_out; k++) {
    if (c->check == ZLB_CHECK_NONE)
      break;
    if (!in_place) {
      SLOT(ZLB__SLOT_OUT + k, bytes_of(&c->out[0][k]));
      SLOT(ZLB__SLOT_OUT + ZLB_MAX_TENSORS + k, bytes_of(&c->out[0][k]));
    }
    if (rng)
      SLOT(ZLB__SLOT_AGAIN + k, bytes_of(&c->out[0][k]));
  }
#undef SLOT
  return need;
}

/* Device checks: for what the backend can judge in place, where copies
 * cost something (not where device memory is host memory). */
static int on_device(const zlb__run_t *r, const zlb_case_t *c) {
  const char *host = getenv("ZL_HOST_CHECK"); /* 1: always on the host (for comparisons) */
  return r->b->v->dev_check && !(r->b->desc->caps & ZLB_CAP_HOST_MEMORY) &&
         (c->check != ZLB_CHECK_CUSTOM || r->op->compare_device) &&
         !(host && !strcmp(host, "1"));
}

/*
 * A case too big for the device or the host fails its row before anything
 * is allocated, with what it needs and what there is: allocating blindly
 * gets the process killed by the kernel's OOM killer on the host backend
 * (no row, no message). 10 % of what is free stays as headroom for
 * workspaces, the runtime and the rest of the system.
 */
static int check_footprint(zlb__run_t *r, const zlb_case_t *c, zlb_error_t *err) {
  int in_place = !!(r->b->desc->caps & ZLB_CAP_HOST_MEMORY);
  uint64_t dev = 0, host;
  size_t dfree = 0, dtotal = 0, hfree = 0, htotal = 0;
  zlb_error_t e = ZLB_ERROR_INIT;
  char a[32], b[32], h1[32], h2[32];

  for (int i = 0; i < c->n_in; i++)
    dev += bytes_of(&c->in[i]) + zlb__pool_bytes_needed(r, &c->in[i]);
  for (int k = 0; k < c->n_out; k++)
    dev += (on_device(r, c) && (r->op->candidate.flags & ZLB_IMPL_USES_RNG) ? 3 : 2) *
           (uint64_t)bytes_of(&c->out[0][k]);
  /* The host copies count even where the device checks: a backend may
   * still send a case to the host check (a dtype its kernels lack). */
  host = host_need(r, c, in_place);
  if (r->b->v->mem_info && !r->b->v->mem_info(r->b, &dfree, &dtotal, &e) && dfree) {
    uint64_t total = in_place ? dev + host : dev;
    if (total > (uint64_t)(0.9 * (double)dfree)) {
      fmt_bytes((double)total, a, sizeof(a));
      fmt_bytes((double)dfree, b, sizeof(b));
      return zlb_error_set(err, ZLB_ENOMEM,
                           "case needs %s of %s memory (tensors of both implementations%s) "
                           "but %s is free; skipped before allocating",
                           a, in_place ? "host" : "device", in_place ? " and check copies" : "",
                           b);
    }
  }
  if (!in_place && host && !zlb_host_mem_available(&hfree, &htotal, &e) &&
      host > (uint64_t)(0.9 * (double)hfree)) {
    fmt_bytes((double)host, h1, sizeof(h1));
    fmt_bytes((double)hfree, h2, sizeof(h2));
    return zlb_error_set(err, ZLB_ENOMEM,
                         "case needs %s of host memory for the accuracy check's copies but "
                         "%s is available; skipped before allocating",
                         h1, h2);
  }
  return 0;
}

static int alloc_tensors(zlb__run_t *r, zlb_case_t *c, zlb_error_t *err) {
  for (int k = 0; k < c->n_out; k++) {
    c->out[1][k] = c->out[0][k];
    c->out[0][k].data = c->out[1][k].data = NULL;
  }
  for (int i = 0; i < c->n_in; i++)
    if (r->b->v->mem_alloc(r->b, bytes_of(&c->in[i]), &c->in[i].data, err))
      return zlb_error_prefix(err, "cannot allocate input '%s' (%zu bytes)",
                              c->in[i].name ? c->in[i].name : "?", bytes_of(&c->in[i]));
  for (int w = 0; w < 2; w++)
    for (int k = 0; k < c->n_out; k++)
      if (r->b->v->mem_alloc(r->b, bytes_of(&c->out[w][k]), &c->out[w][k].data, err))
        return zlb_error_prefix(err, "cannot allocate output '%s' (%zu bytes)",
                                c->out[w][k].name ? c->out[w][k].name : "?",
                                bytes_of(&c->out[w][k]));
  return 0;
}

/*
 * A host-to-device copy from pageable memory may return before its DMA has
 * landed, and it is ordered with the legacy default stream only, not with
 * the run's non-blocking stream: without the device-wide synchronisation
 * at the end, the baseline could read an input the copy had not finished
 * (seen on an H200: embedding's small index tensor, a mismatch in 57 % of
 * the elements of one row in one run of three).
 */
static int fill_inputs(zlb__run_t *r, zlb_case_t *c, uint64_t seed, zlb_error_t *err) {
  int rc;
  for (int i = 0; i < c->n_in; i++)
    if ((rc = zlb__fill_input(r, &c->in[i], seed + 0x1000u * (uint64_t)(i + 1), err)))
      return rc;
  return r->b->v->sync(r->b, err);
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
  struct launch_ctx lc = {r, c, which, 1, NULL};
  int rc = call_impl(&lc, r->stream, err);
  if (!rc)
    rc = r->b->v->stream_sync(r->b, r->stream, err);
  return rc;
}

/* A host-readable copy of t: the tensor itself where device memory is
 * host memory, else a download into a reused buffer. */
static int host_view(zlb__run_t *r, const zlb_tensor_t *t, int slot, const void **host,
                     zlb_error_t *err) {
  void *h;
  if (r->b->desc->caps & ZLB_CAP_HOST_MEMORY) {
    *host = t->data;
    return 0;
  }
  h = zlb__host_buf(r, slot, bytes_of(t));
  *host = h;
  return r->b->v->memcpy_dtoh(r->b, h, t->data, bytes_of(t), err);
}

/* The candidate's outputs once more from the same RNG state, bit for bit. */
static int check_reproducible(zlb__run_t *r, zlb_case_t *c, zlb_rng_t before,
                              const zlb_host_view_t *view, zlb_error_t *err) {
  zlb_rng_t after = r->rng;
  const void *first[ZLB_MAX_TENSORS];
  int rc;
  /* In place, the re-run overwrites the first outputs: keep a copy. */
  for (int k = 0; k < c->n_out; k++) {
    first[k] = view->out[ZLB_CANDIDATE][k];
    if (r->b->desc->caps & ZLB_CAP_HOST_MEMORY) {
      void *copy = zlb__host_buf(r, ZLB__SLOT_AGAIN + k, bytes_of(&c->out[1][k]));
      memcpy(copy, first[k], bytes_of(&c->out[1][k]));
      first[k] = copy;
    }
  }
  r->rng = before;
  if ((rc = poison(r, c, ZLB_CANDIDATE, err)) || (rc = run_once(r, c, ZLB_CANDIDATE, err)))
    return rc;
  r->rng = after;
  for (int k = 0; k < c->n_out; k++) {
    const void *again;
    if ((rc = host_view(r, &c->out[ZLB_CANDIDATE][k], ZLB__SLOT_AGAIN + k, &again, err)))
      return rc;
    if (memcmp(again, first[k], bytes_of(&c->out[ZLB_CANDIDATE][k])))
      return zlb_error_set(err, ZLB_EMISMATCH,
                           "candidate is not reproducible: output '%s' differs between "
                           "two runs from the same seed and offset",
                           c->out[1][k].name ? c->out[1][k].name : "out");
  }
  return 0;
}

/* As check_reproducible, with the first outputs copied on the device. */
static int reproducible_on_device(zlb__run_t *r, zlb_case_t *c, zlb_rng_t before,
                                  zlb_error_t *err) {
  zlb_rng_t after = r->rng;
  void *first[ZLB_MAX_TENSORS] = {0};
  int rc = 0;
  for (int k = 0; k < c->n_out && !rc; k++) {
    const zlb_tensor_t *t = &c->out[ZLB_CANDIDATE][k];
    if (!(rc = r->b->v->mem_alloc(r->b, bytes_of(t), &first[k], err)))
      rc = r->b->v->memcpy_dtod(r->b, first[k], t->data, bytes_of(t), r->stream, err);
  }
  if (!rc) {
    r->rng = before;
    if (!(rc = poison(r, c, ZLB_CANDIDATE, err)))
      rc = run_once(r, c, ZLB_CANDIDATE, err);
    r->rng = after;
  }
  for (int k = 0; k < c->n_out && !rc; k++) {
    const zlb_tensor_t *t = &c->out[ZLB_CANDIDATE][k];
    zlb_dev_check_t q = {ZLB_DEVCHECK_EXACT, (int)t->dtype, first[k], t->data, t->numel,
                         0.0, 0.0, 0.0, 0};
    zlb_dev_check_result_t res;
    if (!(rc = r->b->v->dev_check(r->b, &q, &res, r->stream, err)) && res.bad)
      rc = zlb_error_set(err, ZLB_EMISMATCH,
                         "candidate is not reproducible: output '%s' differs between "
                         "two runs from the same seed and offset",
                         t->name ? t->name : "out");
  }
  for (int k = 0; k < c->n_out; k++)
    if (first[k])
      r->b->v->mem_free(r->b, first[k]);
  return rc;
}

/* The operator's own compare() made on the device (compare_device). */
static int compare_on_device(zlb__run_t *r, zlb_case_t *c, zlb_error_t *err) {
  char msg[512] = {0}, who[160];
  int rc;
  r->errbuf[0] = '\0';
  rc = r->op->compare_device(&r->env, c, (void *)r->stream, msg, sizeof(msg));
  if (!rc)
    return 0;
  if (rc == ZLB_EMISMATCH)
    return zlb_error_set(err, ZLB_EMISMATCH, "%s",
                         msg[0] ? msg : "compare_device() rejected the candidate's output");
  snprintf(who, sizeof(who), "device compare of '%s'", r->op->name);
  return op_code_error(r, who, rc, err);
}

/*
 * Fault injection for the tests of the checks: ZL_TEST_CORRUPT=K:I[:MASK]
 * XORs element I of the candidate's output K (its bytes read as one
 * little-endian integer) with MASK (hex, default 1) after the candidate's
 * accuracy call, so that a test can give the device and the host check the
 * same wrong output. Anything malformed or out of range fails the row.
 */
static int corrupt_for_test(zlb__run_t *r, zlb_case_t *c, zlb_error_t *err) {
  const char *spec = getenv("ZL_TEST_CORRUPT");
  unsigned long long k, i, mask = 1, bits = 0;
  unsigned char elem[8];
  const zlb_tensor_t *t;
  size_t es;
  int used = 0, more = 0, rc;
  if (!spec || !*spec)
    return 0;
  if (sscanf(spec, "%llu:%llu%n", &k, &i, &used) != 2 ||
      (spec[used] && (sscanf(spec + used, ":%llx%n", &mask, &more) != 1 || !mask ||
                      spec[used + more])))
    return zlb_error_set(err, ZLB_EINVAL, "ZL_TEST_CORRUPT='%s': expected OUTPUT:ELEMENT[:HEXMASK]",
                         spec);
  if (k >= (unsigned long long)c->n_out || i >= (unsigned long long)c->out[1][k].numel)
    return zlb_error_set(err, ZLB_EINVAL, "ZL_TEST_CORRUPT='%s': no such output element", spec);
  t = &c->out[ZLB_CANDIDATE][k];
  es = zlb_dtype_size(t->dtype);
  if (es > sizeof(elem))
    return zlb_error_set(err, ZLB_EINVAL, "ZL_TEST_CORRUPT: elements of %zu bytes", es);
  if ((rc = r->b->v->memcpy_dtoh(r->b, elem, (char *)t->data + i * es, es, err)))
    return rc;
  for (size_t b = 0; b < es; b++)
    bits |= (unsigned long long)elem[b] << (8 * b);
  bits ^= mask;
  for (size_t b = 0; b < es; b++)
    elem[b] = (unsigned char)(bits >> (8 * b));
  return r->b->v->memcpy_htod(r->b, (char *)t->data + i * es, elem, es, err);
}

/* The candidate's outputs against the baseline's: large outputs are judged
 * on the device where it can (copying them to the host cost more than the
 * timing of the row), else on the host, `view` then holding the copies.
 * *where: "device" or "host". */
static int compare_outputs(zlb__run_t *r, zlb_case_t *c, zlb_host_view_t *view,
                           const char **where, zlb_error_t *err) {
  int rc;
  *where = "device";
  if (on_device(r, c)) {
    rc = c->check == ZLB_CHECK_CUSTOM ? compare_on_device(r, c, err)
                                      : zlb_check_outputs_device(r->b, r->stream, c, err);
    if (rc != ZLB_EUNSUPPORTED)
      return rc;
    zlb_error_clear(err);
  }
  *where = "host";
  if (c->check == ZLB_CHECK_CUSTOM)
    for (int i = 0; i < c->n_in; i++)
      if ((rc = host_view(r, &c->in[i], ZLB__SLOT_IN + i, &view->in[i], err)))
        return rc;
  for (int w = 0; w < 2; w++)
    for (int k = 0; k < c->n_out; k++)
      if ((rc = host_view(r, &c->out[w][k], ZLB__SLOT_OUT + w * ZLB_MAX_TENSORS + k,
                          &view->out[w][k], err)))
        return rc;
  return zlb_check_outputs(r->op, &r->env, c, view, err);
}

/* The accuracy check: each impl once on poisoned outputs, compare; an impl
 * that draws random numbers must reproduce its output bit for bit from the
 * same RNG state. Only what the check reads is copied to the host: inputs
 * for an operator's own compare(), nothing when there is no check. */
static int accuracy(zlb__run_t *r, zlb_case_t *c, const char **where, double *calls_ms,
                    zlb_error_t *err) {
  zlb_host_view_t view;
  zlb_rng_t before;
  double t0;
  int rc;

  memset(&view, 0, sizeof(view));
  if ((rc = poison(r, c, ZLB_BASELINE, err)) || (rc = poison(r, c, ZLB_CANDIDATE, err)))
    return rc;
  /* These two calls are also the timers' first calls (zlb_launch_t.primed):
   * their time is kept apart from the check's own. */
  t0 = zlb_now_s();
  if ((rc = run_once(r, c, ZLB_BASELINE, err)))
    return rc;
  before = r->rng;
  rc = run_once(r, c, ZLB_CANDIDATE, err);
  *calls_ms = (zlb_now_s() - t0) * 1e3;
  if (rc || (rc = corrupt_for_test(r, c, err)))
    return rc;
  *where = "none";
  if (c->check == ZLB_CHECK_NONE && !(r->op->candidate.flags & ZLB_IMPL_USES_RNG))
    return 0;
  if ((rc = compare_outputs(r, c, &view, where, err)) ||
      !(r->op->candidate.flags & ZLB_IMPL_USES_RNG))
    return rc;
  return !strcmp(*where, "device") ? reproducible_on_device(r, c, before, err)
                                   : check_reproducible(r, c, before, &view, err);
}

/* ---- --integrity (docs/integrity.md) ---------------------------------------- */

/* The timed sample checked is one of samples 2..INTEG_SPAN + 1: every timer
 * takes that many in a normal measurement (graph and queue at least 10). */
#define INTEG_SPAN 9

struct integ {
  uint64_t seed;      /* the fresh inputs' seed */
  size_t at;          /* the sample checked (0-based; never the first) */
  int done;           /* the check ran (once per measurement) */
  size_t sample;      /* the sample it ran on */
  const char *where;  /* "device" or "host" */
};

/* Before timed sample `sample`: when it is the one, wait for the device
 * (the samples before it read the old inputs), poison both sides' outputs
 * and refill the inputs in place from a fresh seed: the same addresses,
 * new values. After it: the baseline on the same inputs, then compare. */
static int integ_hook(void *ctx, int after, size_t sample, zlb_stream_t s, zlb_error_t *err) {
  struct launch_ctx *lc = ctx;
  struct integ *ig = lc->integ;
  zlb__run_t *r = lc->r;
  zlb_host_view_t view;
  char msg[sizeof(err->msg)];
  int rc;
  (void)s;
  if (!after) {
    if (ig->done || sample < ig->at)
      return 0;
    if ((rc = r->b->v->sync(r->b, err)) || (rc = poison(r, lc->c, ZLB_BASELINE, err)) ||
        (rc = poison(r, lc->c, ZLB_CANDIDATE, err)) || (rc = fill_inputs(r, lc->c, ig->seed, err)))
      return rc;
    ig->done = 1;
    ig->sample = sample;
    return 1;
  }
  memset(&view, 0, sizeof(view));
  if ((rc = r->b->v->sync(r->b, err)) || (rc = run_once(r, lc->c, ZLB_BASELINE, err)))
    return rc;
  rc = compare_outputs(r, lc->c, &view, &ig->where, err);
  if (rc != ZLB_EMISMATCH)
    return rc;
  zlb_strlcpy(msg, err->msg, sizeof(msg));
  if (ig->sample == (size_t)-1)
    return zlb_error_set(err, ZLB_EMISMATCH,
                         "integrity: the outputs of a call after the timed samples do not "
                         "match the baseline on fresh inputs (a result cached across calls, "
                         "or work skipped after the first call): %s",
                         msg);
  return zlb_error_set(err, ZLB_EMISMATCH,
                       "integrity: the outputs of timed iteration %zu do not match the "
                       "baseline on fresh inputs (a result cached across calls, or work "
                       "skipped after the first call): %s",
                       sample + 1, msg);
}

/* Why the timed-sample check does not apply to this case ("" when it does). */
static const char *integ_skip(const zlb__run_t *r, const zlb_case_t *c) {
  if (r->op->candidate.flags & ZLB_IMPL_USES_RNG)
    return "timed sample: not checked (the candidate draws random numbers: its outputs "
           "differ from the baseline's by design; the accuracy check covers it)";
  if (c->check == ZLB_CHECK_NONE)
    return "timed sample: not checked (the operator has no accuracy check)";
  return "";
}

/* The timer took fewer samples than the one chosen: one more call checked
 * after them, so a candidate never goes unchecked. */
static int integ_late(struct launch_ctx *lc, zlb_error_t *err) {
  size_t at = lc->integ->at;
  int rc;
  lc->integ->at = 0;
  rc = integ_hook(lc, 0, 0, lc->r->stream, err);
  lc->integ->at = at;
  if (rc < 0 || (rc = call_impl(lc, lc->r->stream, err)))
    return rc;
  lc->integ->sample = (size_t)-1;
  return integ_hook(lc, 1, 0, lc->r->stream, err);
}

/* Append "; text" (or "text") to the row's integrity column. */
static void integ_say(zlb__row_t *row, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void integ_say(zlb__row_t *row, const char *fmt, ...) {
  size_t n = strlen(row->integrity);
  va_list ap;
  if (n && n + 2 < sizeof(row->integrity)) {
    memcpy(row->integrity + n, "; ", 3);
    n += 2;
  }
  va_start(ap, fmt);
  vsnprintf(row->integrity + n, sizeof(row->integrity) - n, fmt, ap);
  va_end(ap);
}

/* check_streams' call: the candidate once on the case. */
struct streams_call {
  zlb__run_t *r;
  zlb_case_t *c;
};

static int streams_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  struct streams_call *sc = ctx;
  (void)s; /* the case's calls run on the run's stream, which is `s` */
  return run_once(sc->r, sc->c, ZLB_CANDIDATE, err);
}

/*
 * Work on another stream: one call of the candidate traced, after an empty
 * kernel on the stream it is given (whose span names that stream to the
 * tracer). A kernel of the call on any other stream is refused: the
 * timers' events on the given stream do not wait for it, so its time would
 * not be measured. Without a tracer that names streams the row says the
 * check was not possible.
 */
static int check_streams(zlb__run_t *r, zlb_case_t *c, zlb__row_t *row, zlb_error_t *err) {
  struct streams_call sc = {r, c};
  zlb_rng_t keep = r->rng;
  char note[256];
  int rc = zlb_trace_side_streams(r->b, r->stream, streams_call, &sc, note, sizeof(note), err);
  r->rng = keep; /* the check's call does not move the run's generator */
  if (!rc && note[0])
    integ_say(row, "%s", note);
  return rc;
}

/*
 * The bandwidth ceiling a row is compared with: the last cache's (a GPU's
 * L2, a CPU's L3) when the row's bytes fit in it and its timer does
 * not empty it between calls, else memory's. Flushing timers: direct and
 * trace with a flush at least as large as that cache, graph and queue
 * under --l2 cold. A device that reports no cache size is judged by memory.
 */
static int row_ceiling(const zlb__run_t *r, const zlb__row_t *row) {
  const zlb_measurement_t *m = &row->m[ZLB_CANDIDATE];
  size_t cache = zlb__last_cache_bytes(&r->b->info);
  int flushed = ((m->timer == ZLB_TIMER_DIRECT || m->timer == ZLB_TIMER_TRACE) &&
                 r->flush.bytes && r->flush.bytes >= cache) ||
                m->l2_cold;
  return zlb__ceiling_for(row->bytes, cache, flushed);
}

/*
 * A rate above the ceiling it is compared with: no row shows such a
 * %Peak. Above the FLOP rate, or more than ZLB__MEMORY_SLACK above
 * memory's bandwidth, it cannot be (the case declares more bytes or FLOPs
 * than it moves, or the time is wrong): with --integrity the row is
 * refused, without it the %Peak is N/A and the note gives both numbers.
 * Above the cache's ceiling, or memory's within the slack, it can be,
 * honestly (zlb__over_ceiling_honest): such a row's %Peak is N/A with the
 * note, never refused.
 */
static void gate_peak(zlb__run_t *r, zlb_dtype_t dt, zlb__row_t *row) {
  const zlb__peaks_t *p = &r->peaks;
  double s = row->cand_ms * 1e-3;
  double bw = row->ceiling == ZLB__CEIL_CACHE ? p->cache_gbps : p->gbps;
  const char *cname = zlb__ceiling_name(row->ceiling);
  char rate[256] = "";
  int by_bytes = 0;
  if (!(row->pct_peak > 100.0) || !(s > 0))
    return;
  if (row->bytes > 0 && bw > 0 && row->bytes / s / 1e9 > bw) {
    by_bytes = 1;
    snprintf(rate, sizeof(rate), "%.1f GB/s against the measured %s bandwidth of %.1f GB/s",
             row->bytes / s / 1e9, cname, bw);
  } else if (row->flops > 0 && (unsigned)dt < ZLB_DT_COUNT && p->tflops[dt] > 0) {
    snprintf(rate, sizeof(rate), "%.2f TFLOP/s against the measured %.2f TFLOP/s",
             row->flops / s / 1e12, p->tflops[dt]);
  } else {
    snprintf(rate, sizeof(rate), "bytes and FLOPs together beyond the measured ceilings");
  }
  /* Within ZLB__MEMORY_SLACK of memory's ceiling: the rate of a copy,
   * which a read-only or write-only stream beats (zlb__over_ceiling_honest). */
  if (by_bytes && row->ceiling == ZLB__CEIL_MEMORY &&
      zlb__over_ceiling_honest(row->ceiling, row->bytes / s / 1e9, bw)) {
    size_t n = strlen(row->note);
    snprintf(row->note + n, sizeof(row->note) - n,
             "%s%%Peak N/A: the candidate's rate is %.0f %% of the memory ceiling (%s), the "
             "rate of a copy, which a stream that only reads or only writes, or data left in "
             "the cache by a warm timer, can beat: not refused",
             n ? "; " : "", row->pct_peak, rate);
    if (r->o->integrity)
      integ_say(row, "peak: %.0f %% of the memory ceiling (%s): within %.0f %% of it, not "
                "refused", row->pct_peak, rate, (ZLB__MEMORY_SLACK - 1) * 100);
    row->pct_peak = NAN;
    return;
  }
  if (by_bytes && row->ceiling == ZLB__CEIL_CACHE) {
    size_t n = strlen(row->note);
    snprintf(row->note + n, sizeof(row->note) - n,
             "%s%%Peak N/A: the candidate's rate is %.0f %% of the cache ceiling (%s), the "
             "rate of copies within the cache, which a kernel reading more than it writes "
             "or served by a nearer cache can beat: not refused",
             n ? "; " : "", row->pct_peak, rate);
    if (r->o->integrity)
      integ_say(row, "peak: %.0f %% of the cache ceiling (%s): not refused", row->pct_peak,
                rate);
    row->pct_peak = NAN;
    return;
  }
  if (!r->o->integrity) {
    size_t n = strlen(row->note);
    snprintf(row->note + n, sizeof(row->note) - n,
             "%s%%Peak N/A: the candidate's rate is %.0f %% of the %s ceiling (%s); the bytes "
             "or FLOPs the case declares, or the time, are wrong",
             n ? "; " : "", row->pct_peak, by_bytes ? cname : "FLOP", rate);
    row->pct_peak = NAN;
    return;
  }
  row->ok = 0;
  snprintf(row->marker, sizeof(row->marker), "error=integrity");
  snprintf(row->note, sizeof(row->note),
           "integrity: the candidate's rate is %.0f %% of the measured %s ceiling (%s): more "
           "than the device can do; the bytes or FLOPs the case declares, or the time "
           "measured, are wrong",
           row->pct_peak, by_bytes ? cname : "FLOP", rate);
  row->base_ms = row->cand_ms = row->speedup = row->gbps = row->tflops = row->pct_peak = NAN;
  row->noise = row->m[0].value_ms = row->m[1].value_ms = NAN;
}

/* After the candidate's measurement: the check if the timer took too few
 * samples to reach the chosen one, then what was checked, for the row. */
static int integ_done(struct launch_ctx *lc, zlb__row_t *row, zlb_error_t *err) {
  struct integ *ig = lc->integ;
  int rc;
  if (!ig->done && (rc = integ_late(lc, err)))
    return rc;
  if (ig->sample == (size_t)-1)
    integ_say(row, "timed sample: a call after the %zu timed samples checked on fresh inputs "
                   "(%s; the timer took fewer than the %zu chosen)",
              row->m[ZLB_CANDIDATE].nsamples, ig->where, ig->at + 1);
  else
    integ_say(row, "timed sample: iteration %zu checked on fresh inputs (%s) and left out "
                   "of the statistics",
              ig->sample + 1, ig->where);
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

/* A failed check (`phase`: "accuracy", "integrity"): a mismatch fails the
 * row as `kind`, a device fault fails the operator, anything else is a
 * failed launch. */
static void check_failed(zlb__run_t *r, zlb__row_t *row, const char *kind, const char *phase,
                         const zlb_error_t *e, zlb_error_t *stop) {
  if (e->code == ZLB_EMISMATCH)
    fail_row(row, kind, e);
  else if (is_fatal(r, e))
    fatal_row(r, row, phase, e, stop);
  else
    fail_row(row, "launch", e);
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
  c.detail[sizeof(c.detail) - 1] = '\0';
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
  row->ceiling = row_ceiling(r, row);
  row->pct_peak = zlb__peaks_pct_ceiling(&r->peaks, row->ceiling, dt, row->bytes, row->flops,
                                         row->cand_ms);
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

/* Add `mark` to the row's marker ("-": none), joined by '+', once. */
static void add_marker(zlb__row_t *row, const char *mark) {
  size_t n;
  if (!strcmp(mark, "-") || strstr(row->marker, mark))
    return;
  if (!strcmp(row->marker, "-")) {
    zlb_strlcpy(row->marker, mark, sizeof(row->marker));
    return;
  }
  n = strlen(row->marker);
  snprintf(row->marker + n, sizeof(row->marker) - n, "+%s", mark);
}

static void flag_throttle(zlb__row_t *row) {
  char mark[160];
  const char *why = row->clk[0].throttled ? row->clk[0].why : row->clk[1].why;
  if (!((row->have_clocks & 1) && row->clk[0].throttled) &&
      !((row->have_clocks & 2) && row->clk[1].throttled))
    return;
  snprintf(mark, sizeof(mark), "throttled(%s)", why);
  add_marker(row, mark);
}

static void timer_column(zlb__row_t *row, const char *mark[2]) {
  const char *tb = zlb__measured_timer_name(&row->m[0]), *tc = zlb__measured_timer_name(&row->m[1]);
  zlb_strlcpy(row->timer, !strcmp(tb, tc) ? tc : "mixed", sizeof(row->timer));
  if (!strcmp(mark[0], mark[1]))
    zlb_strlcpy(row->marker, mark[0], sizeof(row->marker));
  else {
    zlb_strbuf_t sb = ZLB_STRBUF_INIT;
    zlb_strbuf_addf(&sb, "baseline:%s|candidate:%s", mark[0], mark[1]);
    zlb_strlcpy(row->marker, sb.buf, sizeof(row->marker));
    zlb_strbuf_release(&sb);
  }
}

const char *zlb__phase_name(zlb__phase_t p) {
  static const char *const names[ZLB__PH_COUNT] = {
      "describe", "allocate", "fill", "prepare", "accuracy", "timing", "release"};
  return (unsigned)p < ZLB__PH_COUNT ? names[p] : "?";
}

/* Charge the time since *t to phase p; restart the clock; the next phase. */
static zlb__phase_t next_phase(zlb__row_t *row, zlb__phase_t p, double *t) {
  double now = zlb_now_s();
  row->phase_ms[p] += (now - *t) * 1e3;
  *t = now;
  return p + 1 < ZLB__PH_COUNT ? (zlb__phase_t)(p + 1) : p;
}

/* The row's note when a trial could not hold the last one's tensors. */
static const char NO_ROOM[] = "trial on the memory of the trial before (no room for two sets)";

/* Whether a trial's held tensors are still there (NULL: no trials). */
static int holds_tensors(const zlb_case_t *h) {
  if (!h)
    return 0;
  for (int i = 0; i < ZLB_MAX_TENSORS; i++)
    if (h->in[i].data || h->out[0][i].data || h->out[1][i].data)
      return 1;
  return 0;
}

/* Hand c's tensors to `dst` (whose own are already freed). */
static void move_tensors(zlb_case_t *dst, zlb_case_t *c) {
  for (int i = 0; i < ZLB_MAX_TENSORS; i++) {
    dst->in[i].data = c->in[i].data;
    dst->out[0][i].data = c->out[0][i].data;
    dst->out[1][i].data = c->out[1][i].data;
  }
  clear_data(c);
}

/*
 * One measurement of the case: describe, allocate, fill, prepare, check,
 * time, release. With trials, `hold` carries the tensors of the trial
 * before: they are freed only once this trial has its own, so the two sets
 * cannot share addresses and each trial runs at another place in device
 * memory (where the data lies can move a kernel's time by several per cent
 * between processes: L2 slices, DRAM channels). `keep`: leave this trial's
 * tensors in `hold` for the next one.
 */
static void run_trial(zlb__run_t *r, zlb_dtype_t dt, const zlb_shape_t *shape,
                      zlb__row_t *row, zlb_error_t *stop, zlb_case_t *hold, int keep) {
  zlb_case_t c;
  zlb_error_t e = ZLB_ERROR_INIT;
  int prepared[2] = {0, 0}, rc = 0, initialised = 0;
  struct integ ig = {0, 0, 0, 0, "host"};
  double t_case = zlb_now_s(), t = t_case;
  zlb__phase_t ph = ZLB__PH_DESCRIBE;
  char mark[2][160];
  const char *marks[2] = {mark[0], mark[1]};

  memset(&c, 0, sizeof(c));
  c.dtype = dt;
  c.shape = *shape;
  c.level = r->o->level;
  row->base_ms = row->cand_ms = row->speedup = row->gbps = row->tflops = row->pct_peak = NAN;
  snprintf(row->marker, sizeof(row->marker), "-");
  row->integrity[0] = '\0';
  zlb_strlcpy(row->timer, zlb__run_timer_name(r), sizeof(row->timer));
  zlb_shape_format(shape, row->shape, sizeof(row->shape));

  r->errbuf[0] = '\0';
  rc = r->op->case_init(&r->env, &c);
  clear_data(&c); /* the harness allocates: whatever case_init left there is not ours */
  if (rc) {
    zlb_error_set(&e, rc < 0 ? rc : ZLB_EOP, "case_init rejected shape %s: %s",
                  row->shape, r->errbuf[0] ? r->errbuf : zlb_strerror(rc));
    fail_row(row, "setup", &e);
    goto out;
  }
  initialised = 1;
  if (!(rc = check_case(&c, &e)) && (rc = check_footprint(r, &c, &e)) == ZLB_ENOMEM &&
      holds_tensors(hold)) {
    /* No room for two sets: this trial takes the last one's place. */
    free_tensors(r, hold);
    zlb_error_clear(&e);
    if (!(rc = check_footprint(r, &c, &e)))
      zlb_strlcpy(row->note, NO_ROOM, sizeof(row->note));
  }
  if (rc) {
    fail_row(row, "setup", &e);
    goto out;
  }
  row->bytes = c.bytes;
  row->flops = c.flops;
  ph = next_phase(row, ph, &t);
  rc = alloc_tensors(r, &c, &e);
  if (holds_tensors(hold)) {
    if (rc && e.vendor_code && is_fatal(r, &e)) {
      /* The context is gone: nothing more is freed (the stop below). */
    } else {
      if (rc) {
        /* The footprint check passed, the allocator disagreed: the same. */
        free_tensors(r, &c);
        free_tensors(r, hold);
        zlb_error_clear(&e);
        if (!(rc = alloc_tensors(r, &c, &e)))
          zlb_strlcpy(row->note, NO_ROOM, sizeof(row->note));
      }
      free_tensors(r, hold);
    }
  }
  ph = next_phase(row, ph, &t);
  /* Inputs depend on the seed and the case, not on the order of cases. */
  if (!rc)
    rc = fill_inputs(r, &c, r->o->seed ^ (uint64_t)dt * 0x9e37u ^ zlb_fnv1a64(row->shape),
                     &e);
  {
    /* --integrity: the fresh inputs' seed and the sample checked, from the
     * same seed (reproducible, and no candidate can know them). */
    uint64_t h = (r->o->seed ^ (uint64_t)dt * 0x9e37u ^ zlb_fnv1a64(row->shape)) *
                 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    ig.seed = h ^ 0x1e7e6a11c0ffee5full;
    ig.at = 1 + (size_t)(h % INTEG_SPAN);
  }
  if (rc) {
    if (e.vendor_code && is_fatal(r, &e))
      fatal_row(r, row, "setup", &e, stop);
    else
      fail_row(row, "setup", &e);
    goto out;
  }
  ph = next_phase(row, ph, &t);
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
  ph = next_phase(row, ph, &t);
  zlb_strlcpy(row->config, c.config[ZLB_CANDIDATE], sizeof(row->config));

  if ((rc = accuracy(r, &c, &row->check_where, &row->first_calls_ms, &e))) {
    check_failed(r, row, "mismatch", "accuracy", &e, stop);
    goto out;
  }
  if (r->o->integrity && (rc = check_streams(r, &c, row, &e))) {
    check_failed(r, row, "integrity", "integrity", &e, stop);
    goto out;
  }

  ph = next_phase(row, ph, &t);
  if (r->ab_time) { /* zlbench ab: its own interleaved timing (ab.c) */
    r->ab_time(r, &c, row, stop);
    goto out;
  }
  read_clocks(r, row, 0);
  for (int w = 0; w < 2; w++) {
    struct launch_ctx lc = {r, &c, w,
                            w == ZLB_CANDIDATE && slow_candidate(r->op->name) ? 2 : 1, NULL};
    zlb_launch_t l = {.call = call_impl,
                      .rng_guard = rng_guard,
                      .ctx = &lc,
                      .host_sync = (impl_of(r, w)->flags & ZLB_IMPL_NO_CAPTURE) != 0,
                      .primed = 1};
    zlb_graph_failure_t fail;
    if (w == ZLB_CANDIDATE && r->o->integrity) {
      if (*integ_skip(r, &c)) {
        integ_say(row, "%s", integ_skip(r, &c));
      } else {
        lc.integ = &ig;
        l.integrity = integ_hook;
      }
    }
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
    if (rc == ZLB_EMISMATCH || (!rc && lc.integ && (rc = integ_done(&lc, row, &e)))) {
      fail_row(row, e.code == ZLB_EMISMATCH ? "integrity" : "launch", &e);
      goto out;
    }
    if (rc) {
      fail_row(row, "launch", &e);
      goto out;
    }
    if (row->m[w].queue_calibrated || row->m[w].graph_calibrated) {
      double cal = row->m[w].queue_calibrated ? row->m[w].queue_calibration_ms
                                              : row->m[w].graph_calibration_ms;
      r->cal_min_ms = r->cal_n && r->cal_min_ms < cal ? r->cal_min_ms : cal;
      r->cal_max_ms = r->cal_n && r->cal_max_ms > cal ? r->cal_max_ms : cal;
      r->cal_n++;
    }
  }
  read_clocks(r, row, 1);
  row->ok = 1;
  row->base_ms = row->m[0].value_ms;
  row->cand_ms = row->m[1].value_ms;
  row->samples = (int)row->m[1].nsamples;
  timer_column(row, marks);
  /* --l2 cold: the graph or queue timer flushed before every call (the
   * banner and the JSON's "l2" say the mode of every row). */
  if (row->m[0].l2_cold || row->m[1].l2_cold)
    add_marker(row, "l2=cold");
  fill_rates(r, dt, row);
  flag_throttle(row);
  if (row->m[1].note[0])
    zlb_strlcpy(row->note, row->m[1].note, sizeof(row->note));

out:
  /* The phase in progress (a failure ends it early), then the release. */
  next_phase(row, ph, &t);
  for (int w = 0; w < 2; w++)
    if (prepared[w] && impl_of(r, w)->release && !stop->code)
      impl_of(r, w)->release(&r->env, &c, w);
  if (initialised && r->op->case_release && !stop->code)
    r->op->case_release(&r->env, &c);
  if (!stop->code) {
    if (keep && row->ok)
      move_tensors(hold, &c);
    free_tensors(r, &c);
  }
  next_phase(row, ZLB__PH_RELEASE, &t);
  row->wall_ms = (zlb_now_s() - t_case) * 1e3;
}

/* A later trial's phases and wall time count toward the row's. */
static void add_time(zlb__row_t *row, const zlb__row_t *tr) {
  for (int p = 0; p < ZLB__PH_COUNT; p++)
    row->phase_ms[p] += tr->phase_ms[p];
  row->wall_ms += tr->wall_ms;
}

/* Append a later trial's samples, value and phases to the row. */
static void merge_trial(zlb__row_t *row, zlb__row_t *tr) {
  int t = row->ntrials++;
  for (int w = 0; w < 2; w++) {
    zlb_measurement_t *m = &row->m[w], *x = &tr->m[w];
    m->samples = zlb_xrealloc(m->samples, (m->nsamples + x->nsamples + 1) * sizeof(double));
    if (x->nsamples)
      memcpy(m->samples + m->nsamples, x->samples, x->nsamples * sizeof(double));
    m->nsamples += x->nsamples;
    m->call_values = zlb_xrealloc(m->call_values,
                                  ((size_t)m->ncalls + (size_t)x->ncalls + 1) * sizeof(double));
    if (x->ncalls)
      memcpy(m->call_values + m->ncalls, x->call_values, (size_t)x->ncalls * sizeof(double));
    m->ncalls += x->ncalls;
    m->replays += x->replays;
    m->batches += x->batches;
    m->invalid_batches += x->invalid_batches;
    m->wall_s += x->wall_s;
    m->noise_met &= x->noise_met;
    /* The measurement keeps the first trial's timer, estimate and K; the
     * row's timer column says "mixed" below when the trials differ. */
    row->trial_ms[w][t] = x->value_ms;
  }
  if (strcmp(tr->timer, row->timer))
    zlb_strlcpy(row->timer, "mixed", sizeof(row->timer));
  /* A marker seen in any trial (a fallback, throttled clocks) stays. */
  add_marker(row, tr->marker);
  if (tr->note[0] && !row->note[0])
    zlb_strlcpy(row->note, tr->note, sizeof(row->note));
  add_time(row, tr);
  if (tr->have_clocks & 2) {
    row->clk[1] = tr->clk[1];
    row->have_clocks |= 2;
  }
}

/* The row's value over its trials: the median of their values; noise and
 * quantiles over every sample. */
static void finish_trials(zlb__run_t *r, zlb_dtype_t dt, zlb__row_t *row) {
  for (int w = 0; w < 2; w++) {
    zlb_measurement_t *m = &row->m[w];
    m->value_ms = zlb_stats_median(row->trial_ms[w], (size_t)row->ntrials);
    m->noise = zlb_stats_noise(m->samples, m->nsamples);
    for (int q = 0; q < m->nquantiles; q++)
      zlb_stats_quantile(m->samples, m->nsamples, r->timing.quantiles[q], &m->quantiles[q]);
  }
  row->base_ms = row->m[0].value_ms;
  row->cand_ms = row->m[1].value_ms;
  row->samples = (int)row->m[1].nsamples;
  fill_rates(r, dt, row);
}

void zlb__run_case(zlb__run_t *r, zlb_dtype_t dt, const zlb_shape_t *shape,
                   zlb__row_t *row, zlb_error_t *stop) {
  int n = r->o->trials > 1 ? r->o->trials : 1;
  zlb_case_t hold;

  if (n > ZLB__MAX_TRIALS)
    n = ZLB__MAX_TRIALS;
  memset(&hold, 0, sizeof(hold));
  run_trial(r, dt, shape, row, stop, n > 1 ? &hold : NULL, n > 1);
  row->ntrials = 1;
  row->trial_ms[0][0] = row->base_ms;
  row->trial_ms[1][0] = row->cand_ms;
  for (int t = 1; t < n && row->ok && !stop->code; t++) {
    zlb__row_t tr;
    if (r->o->interrupted && *r->o->interrupted) {
      if (!row->note[0])
        snprintf(row->note, sizeof(row->note), "interrupted after %d of %d trials", t, n);
      break;
    }
    memset(&tr, 0, sizeof(tr));
    run_trial(r, dt, shape, &tr, stop, &hold, t + 1 < n);
    if (!tr.ok) {
      /* A later trial failed: so does the row, with that trial's reason. */
      row->ok = 0;
      row->base_ms = row->cand_ms = row->speedup = row->gbps = row->tflops = row->pct_peak = NAN;
      row->noise = row->m[0].value_ms = row->m[1].value_ms = NAN;
      zlb_strlcpy(row->marker, tr.marker, sizeof(row->marker));
      {
        int k = snprintf(row->note, sizeof(row->note), "trial %d of %d: ", t + 1, n);
        zlb_strlcpy(row->note + k, tr.note, sizeof(row->note) - (size_t)k);
      }
      add_time(row, &tr);
    } else {
      merge_trial(row, &tr);
    }
    zlb_measurement_release(&tr.m[0]);
    zlb_measurement_release(&tr.m[1]);
  }
  if (!stop->code)
    free_tensors(r, &hold);
  if (row->ok && row->ntrials > 1)
    finish_trials(r, dt, row);
  if (row->ok)
    gate_peak(r, dt, row);
}

/* ---- zlbench ab: side B's case on side A's tensors (ab.c) ------------------ */

/* Whether two descriptions of a tensor agree on what the buffer holds. */
static int same_tensor(const zlb_tensor_t *a, const zlb_tensor_t *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim)
    return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->dims[d] != b->dims[d])
      return 0;
  return 1;
}

int zlb__case_other(zlb__run_t *r, const zlb_op_t *op_b, const zlb_case_t *ca, zlb_case_t *cb,
                    int *initialised, int prepared[2], zlb__row_t *row, zlb_error_t *stop) {
  const zlb_op_t *op_a = r->op;
  zlb_error_t e = ZLB_ERROR_INIT;
  int rc;

  *initialised = prepared[0] = prepared[1] = 0;
  memset(cb, 0, sizeof(*cb));
  cb->dtype = ca->dtype;
  cb->shape = ca->shape;
  cb->level = ca->level;
  r->errbuf[0] = '\0';
  rc = op_b->case_init(&r->env, cb);
  clear_data(cb);
  if (rc) {
    zlb_error_set(&e, rc < 0 ? rc : ZLB_EOP, "B: case_init rejected shape %s: %s", row->shape,
                  r->errbuf[0] ? r->errbuf : zlb_strerror(rc));
    fail_row(row, "setup", &e);
    return -1;
  }
  *initialised = 1;
  if ((rc = check_case(cb, &e))) {
    zlb_error_prefix(&e, "B");
    fail_row(row, "setup", &e);
    return -1;
  }
  rc = cb->n_in != ca->n_in || cb->n_out != ca->n_out;
  for (int i = 0; !rc && i < ca->n_in; i++)
    rc = !same_tensor(&ca->in[i], &cb->in[i]) || ca->in[i].fill != cb->in[i].fill;
  for (int k = 0; !rc && k < ca->n_out; k++)
    rc = !same_tensor(&ca->out[0][k], &cb->out[0][k]);
  if (rc) {
    zlb_error_set(&e, ZLB_EOP,
                  "A and B describe different tensors for shape %s (inputs or outputs differ "
                  "in number, dtype, extents or fill): they are not the same operator",
                  row->shape);
    fail_row(row, "setup", &e);
    return -1;
  }
  for (int i = 0; i < ca->n_in; i++)
    cb->in[i].data = ca->in[i].data;
  for (int k = 0; k < ca->n_out; k++) {
    cb->out[1][k] = cb->out[0][k];
    cb->out[0][k].data = ca->out[0][k].data;
    cb->out[1][k].data = ca->out[1][k].data;
  }
  r->op = op_b; /* impl_of(), accuracy() and the errors name B's implementations */
  for (int w = 0; w < 2 && !rc; w++) {
    const zlb_impl_t *im = impl_of(r, w);
    if (!im->prepare)
      continue;
    r->errbuf[0] = '\0';
    if ((rc = im->prepare(&r->env, cb, w))) {
      impl_error(r, w, "B: prepare of", rc, &e);
      if (e.vendor_code && is_fatal(r, &e))
        fatal_row(r, row, "prepare", &e, stop);
      else
        fail_row(row, "prepare", &e);
      break;
    }
    prepared[w] = 1;
  }
  if (!rc && (rc = accuracy(r, cb, &row->check_where, &row->first_calls_ms, &e))) {
    zlb_error_prefix(&e, "B");
    check_failed(r, row, "mismatch", "accuracy", &e, stop);
  }
  r->op = op_a;
  return rc ? -1 : 0;
}

void zlb__case_other_release(zlb__run_t *r, const zlb_op_t *op_b, zlb_case_t *cb,
                             int initialised, const int prepared[2], const zlb_error_t *stop) {
  const zlb_impl_t *im[2] = {&op_b->baseline, &op_b->candidate};
  if (stop->code)
    return;
  for (int w = 0; w < 2; w++)
    if (prepared[w] && im[w]->release)
      im[w]->release(&r->env, cb, w);
  if (initialised && op_b->case_release)
    op_b->case_release(&r->env, cb);
  clear_data(cb); /* A's buffers: A's case frees them */
}

void zlb__case_time_error(zlb__run_t *r, zlb__row_t *row, const char *phase,
                          const zlb_error_t *e, zlb_error_t *stop) {
  if (e->code == ZLB_EFATAL || is_fatal(r, e))
    fatal_row(r, row, phase, e, stop);
  else
    fail_row(row, "launch", e);
}
