/* The device's measured ceilings for the roofline: bandwidth from a large
 * device-to-device copy (bytes read plus bytes written), and FLOP/s per
 * dtype from the `mm` operator's baseline (the vendor GEMM) on a large
 * square problem. Measured once per device and cached by UUID
 * (docs/roofline.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

static void cache_path(const zlb_backend_t *b, zlb_strbuf_t *out) {
  const char *dir = getenv("ZL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
             *home = getenv("HOME");
  const char *id = b->info.uuid[0] ? b->info.uuid : b->info.name;
  char key[32];
  if (dir && *dir)
    zlb_strbuf_addstr(out, dir);
  else if (xdg && *xdg)
    zlb_strbuf_addf(out, "%s/zlbench", xdg);
  else if (home && *home)
    zlb_strbuf_addf(out, "%s/.cache/zlbench", home);
  else
    return;
  snprintf(key, sizeof(key), "%016llx", (unsigned long long)zlb_fnv1a64(id));
  zlb_strbuf_addf(out, "/peaks-%s-%s.json", b->desc->name, key);
}

static int load_cache(const char *path, const zlb_backend_t *b, zlb__peaks_t *p) {
  char *text = NULL;
  zlb_json_t *j = NULL;
  int ok = 0;
  if (zlb_read_file(path, &text, NULL, NULL) ||
      zlb_json_parse(text, strlen(text), path, &j, NULL))
    goto out;
  /* The cache belongs to one device: a different uuid means re-measure. */
  if (strcmp(zlb_json_get_string(j, "uuid", ""), b->info.uuid) ||
      strcmp(zlb_json_get_string(j, "name", ""), b->info.name))
    goto out;
  p->gbps = zlb_json_get_number(j, "bandwidth_gbps", NAN);
  {
    const zlb_json_t *t = zlb_json_get(j, "tflops");
    for (int d = 0; d < ZLB_DT_COUNT; d++)
      p->tflops[d] = zlb_json_get_number(t, zlb_dtype_name((zlb_dtype_t)d), NAN);
  }
  zlb_strlcpy(p->measured, zlb_json_get_string(j, "measured", ""), sizeof(p->measured));
  ok = 1;
out:
  zlb_json_free(j);
  free(text);
  return ok;
}

static void save_cache(const char *path, const zlb_backend_t *b, const zlb__peaks_t *p) {
  zlb_jw_t jw;
  char dir[1024];
  char *slash;
  zlb_jw_init(&jw, 1);
  zlb_jw_object_begin(&jw);
  zlb_jw_key_string(&jw, "backend", b->desc->name);
  zlb_jw_key_string(&jw, "name", b->info.name);
  zlb_jw_key_string(&jw, "uuid", b->info.uuid);
  zlb_jw_key_string(&jw, "measured", p->measured);
  zlb_jw_key_double(&jw, "bandwidth_gbps", p->gbps);
  zlb_jw_key_object(&jw, "tflops");
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if (!isnan(p->tflops[d]))
      zlb_jw_key_double(&jw, zlb_dtype_name((zlb_dtype_t)d), p->tflops[d]);
  zlb_jw_object_end(&jw);
  zlb_jw_object_end(&jw);
  zlb_strlcpy(dir, path, sizeof(dir));
  if ((slash = strrchr(dir, '/'))) {
    *slash = '\0';
    zlb_mkdirs(dir, NULL);
  }
  /* A cache that cannot be written only costs a re-measurement. */
  zlb_write_file_atomic(path, jw.out.buf, jw.out.len, NULL);
  zlb_jw_release(&jw);
}

/* Best of several large copies: bytes read + written over the time. */
static double copy_bandwidth(zlb__run_t *r) {
  zlb_backend_t *b = r->b;
  size_t bytes = strcmp(b->desc->name, "host") ? (size_t)1 << 30 : (size_t)256 << 20;
  void *src = NULL, *dst = NULL;
  zlb_event_t e0 = NULL, e1 = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  double best = NAN, ms;
  if (!b->v->memcpy_dtod)
    return NAN;
  if (b->info.mem_bytes && bytes * 4 > b->info.mem_bytes)
    bytes = b->info.mem_bytes / 8;
  if (b->v->mem_alloc(b, bytes, &src, &err) || b->v->mem_alloc(b, bytes, &dst, &err) ||
      b->v->memset_async(b, src, 1, bytes, r->stream, &err) ||
      b->v->event_create(b, &e0, &err) || b->v->event_create(b, &e1, &err))
    goto out;
  for (int i = 0; i < 6; i++) {
    if (b->v->event_record(b, e0, r->stream, &err) ||
        b->v->memcpy_dtod(b, dst, src, bytes, r->stream, &err) ||
        b->v->event_record(b, e1, r->stream, &err) ||
        b->v->event_elapsed(b, e0, e1, &ms, &err))
      goto out;
    if (i > 0 && ms > 0 && (isnan(best) || 2.0 * (double)bytes / (ms * 1e6) > best))
      best = 2.0 * (double)bytes / (ms * 1e6); /* GB/s */
  }
out:
  if (e0)
    b->v->event_destroy(b, e0);
  if (e1)
    b->v->event_destroy(b, e1);
  if (src)
    b->v->mem_free(b, src);
  if (dst)
    b->v->mem_free(b, dst);
  return best;
}

/* Random data, 16 MiB of it repeated over the tensor: a GEMM on zeros or
 * constants runs faster than on real data (device/METHOD.md), and filling
 * 8192^2 elements element by element on the host would take seconds. */
static int fill_tiled(zlb__run_t *r, const zlb_tensor_t *t, zlb_error_t *err) {
  size_t total = (size_t)t->numel * zlb_dtype_size(t->dtype), tile = (size_t)16 << 20, off;
  zlb_tensor_t part = *t;
  void *host;
  int rc = 0;
  if (tile > total)
    tile = total;
  part.numel = (int64_t)(tile / zlb_dtype_size(t->dtype));
  part.fill = ZLB_FILL_UNIFORM;
  part.lo = -1;
  part.hi = 1;
  host = zlb_xmalloc(tile);
  zlb_fill_host(&part, host, 0x9eed);
  for (off = 0; off < total && !rc; off += tile)
    rc = r->b->v->memcpy_htod(r->b, (char *)t->data + off, host,
                              total - off < tile ? total - off : tile, err);
  free(host);
  return rc;
}

struct gemm_ctx {
  zlb__run_t *r;
  zlb_case_t *c;
};

static int gemm_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  struct gemm_ctx *g = ctx;
  int rc = g->r->ops_mm->baseline.enqueue(&g->r->env, g->c, ZLB_BASELINE, (void *)s);
  return rc ? zlb_error_set(err, ZLB_EOP, "peak gemm failed (%d)", rc) : 0;
}

/* TFLOP/s of the vendor GEMM (the `mm` operator's baseline), 8192^3. */
static double gemm_tflops(zlb__run_t *r, zlb_dtype_t dt) {
  const zlb_op_t *mm = r->ops_mm;
  zlb_case_t c;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_measurement_t m;
  zlb_timing_opts_t o;
  struct gemm_ctx g = {r, &c};
  zlb_launch_t l = {gemm_call, NULL, &g};
  double t = NAN;
  int prepared = 0, inited = 0;
  memset(&c, 0, sizeof(c));
  memset(&m, 0, sizeof(m));
  c.dtype = dt;
  c.shape.ndim = 3;
  c.shape.dims[0] = c.shape.dims[1] = c.shape.dims[2] = 8192;
  if (mm->case_init(&r->env, &c))
    goto out;
  inited = 1;
  for (int i = 0; i < c.n_in; i++) {
    c.in[i].numel = 1;
    for (int k = 0; k < c.in[i].ndim; k++)
      c.in[i].numel *= c.in[i].dims[k];
    if (r->b->v->mem_alloc(r->b, (size_t)c.in[i].numel * zlb_dtype_size(c.in[i].dtype),
                           &c.in[i].data, &err) ||
        fill_tiled(r, &c.in[i], &err))
      goto out;
  }
  for (int k = 0; k < c.n_out; k++) {
    c.out[0][k].numel = 1;
    for (int d = 0; d < c.out[0][k].ndim; d++)
      c.out[0][k].numel *= c.out[0][k].dims[d];
    if (r->b->v->mem_alloc(r->b, (size_t)c.out[0][k].numel * zlb_dtype_size(c.out[0][k].dtype),
                           &c.out[0][k].data, &err))
      goto out;
  }
  if (mm->baseline.prepare && mm->baseline.prepare(&r->env, &c, ZLB_BASELINE))
    goto out;
  prepared = 1;
  zlb_timing_opts_default(&o);
  o.warmup_ms = 20;
  o.rep_ms = 60;
  o.return_mode = ZLB_RET_MIN;
  if (zlb_time_direct(r->b, r->stream, &l, &o, NULL, &m, &err) == 0 && m.value_ms > 0 &&
      c.flops > 0)
    t = c.flops / (m.value_ms * 1e-3) / 1e12;
out:
  zlb_measurement_release(&m);
  if (prepared && mm->baseline.release)
    mm->baseline.release(&r->env, &c, ZLB_BASELINE);
  if (inited && mm->case_release)
    mm->case_release(&r->env, &c);
  for (int i = 0; i < c.n_in; i++)
    if (c.in[i].data)
      r->b->v->mem_free(r->b, c.in[i].data);
  for (int k = 0; k < c.n_out; k++)
    if (c.out[0][k].data)
      r->b->v->mem_free(r->b, c.out[0][k].data);
  return t;
}

void zlb__peaks_resolve(zlb__run_t *r) {
  zlb_strbuf_t path = ZLB_STRBUF_INIT;
  zlb__peaks_t *p = &r->peaks;
  const zlb_op_entry_t *mm;
  p->gbps = NAN;
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    p->tflops[d] = NAN;
  if (getenv("ZL_NO_PEAKS"))
    return;
  cache_path(r->b, &path);
  if (path.len && load_cache(path.buf, r->b, p)) {
    zlb_strlcpy(p->source, path.buf, sizeof(p->source));
    goto out;
  }
  p->gbps = copy_bandwidth(r);
  mm = zlb_ops_find(&r->ops, "mm", r->b->desc->name);
  /* The host's "vendor GEMM" is a naive loop: no meaningful FLOP ceiling. */
  if (mm && strcmp(r->b->desc->name, "host")) {
    r->ops_mm = mm->op;
    for (int d = 0; d < ZLB_DT_COUNT; d++)
      if ((mm->op->dtypes & ZLB_DT_BIT(d)) && zlb_dtype_is_float((zlb_dtype_t)d))
        p->tflops[d] = gemm_tflops(r, (zlb_dtype_t)d);
  }
  zlb_iso8601_now(p->measured, sizeof(p->measured));
  zlb_strlcpy(p->source, "measured now", sizeof(p->source));
  if (path.len)
    save_cache(path.buf, r->b, p);
out:
  zlb_strbuf_release(&path);
}

double zlb__peaks_pct(const zlb__run_t *r, zlb_dtype_t dt, double bytes, double flops,
                      double ms) {
  const zlb__peaks_t *p = &r->peaks;
  double t_bw = NAN, t_fl = NAN, t;
  if (!(ms > 0))
    return NAN;
  if (bytes > 0 && p->gbps > 0)
    t_bw = bytes / (p->gbps * 1e9);
  if (flops > 0 && p->tflops[dt] > 0)
    t_fl = flops / (p->tflops[dt] * 1e12);
  /* Roofline: the larger of the two floors is what the case could take at
   * best; % of peak is that floor over the measured time. */
  if (isnan(t_bw) && isnan(t_fl))
    return NAN;
  t = isnan(t_bw) ? t_fl : isnan(t_fl) ? t_bw : fmax(t_bw, t_fl);
  return t / (ms * 1e-3) * 100.0;
}
