/* The device's measured ceilings for the roofline: bandwidth from a large
 * device-to-device copy (bytes read plus bytes written), and FLOP/s per
 * dtype from the `mm` operator's baseline (the vendor GEMM) on a large
 * square problem. Measured once per device and cached by UUID; a cache
 * holds only what was measured and is completed by a later run that can
 * measure the rest (docs/roofline.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

/* Without a FLOP ceiling the ridge point (peak FLOP/s over peak bytes/s)
 * is unknown. A case below this many FLOP per byte is memory-bound on every
 * device measured so far (the lowest ridge: H200 float32, 33 TFLOP/s over
 * 4222 GB/s = 7.8), so the bandwidth floor is its roofline floor. Above it
 * the case may be FLOP-bound, and a bandwidth-based % would understate it
 * by orders of magnitude (mm float16 8192^3: 1.4 % instead of 20 %). */
#define MEMBOUND_INTENSITY 4.0

/* The peak GEMM's problem: 8192^3 keeps every vendor GEMM at its best
 * tile shapes and runs long enough (~1 ms on an H200) to time directly. */
#define GEMM_N 8192
/* Random input data is uploaded from a tile of this size, repeated. */
#define FILL_TILE ((size_t)16 << 20)
#define BW_COPIES 6        /* the first one warms up and is not counted */

static void cache_path(const zlb_backend_t *b, zlb_strbuf_t *out) {
  const char *id = b->info.uuid[0] ? b->info.uuid : b->info.name;
  char key[32];
  if (!zlb_cache_dir(out))
    return;
  snprintf(key, sizeof(key), "%016llx", (unsigned long long)zlb_fnv1a64(id));
  zlb_strbuf_addf(out, "/peaks-%s-%s.json", b->desc->name, key);
}

/* A ceiling read from the cache: absent or null means not measured; any
 * other value must be a positive finite number. */
static int cached_ceiling(const zlb_json_t *v, const char *key, double *out, zlb_error_t *err) {
  *out = NAN;
  if (!v || v->kind == ZLB_JSON_NULL)
    return 0;
  if (v->kind != ZLB_JSON_NUMBER || !isfinite(v->number) || !(v->number > 0))
    return zlb_error_set(err, ZLB_EPARSE, "%s is not a positive number", key);
  *out = v->number;
  return 0;
}

static int cached_string(const zlb_json_t *j, const char *key, const char *want,
                         zlb_error_t *err) {
  const zlb_json_t *v = zlb_json_get(j, key);
  if (!v || v->kind != ZLB_JSON_STRING)
    return zlb_error_set(err, ZLB_EPARSE, "\"%s\" is missing or not a string", key);
  if (want && strcmp(v->string, want))
    return zlb_error_set(err, ZLB_EPARSE, "it is for %s '%s', not '%s'", key, v->string,
                         want);
  return 0;
}

/* Read and validate the cache. ZLB_ENOTFOUND when there is none; any other
 * error means the file exists and is not to be trusted. `p` is changed only
 * on success. */
static int load_cache(const char *path, const char *backend, const zlb_device_info_t *info,
                      zlb__peaks_t *p, zlb_error_t *err) {
  char *text = NULL;
  size_t len = 0;
  zlb_json_t *j = NULL;
  zlb__peaks_t got = *p;
  const zlb_json_t *t;
  int rc;
  if ((rc = zlb_read_file_max(path, ZLB_READ_MAX_JSON, "a JSON file", &text, &len, err)))
    goto out;
  if ((rc = zlb_json_parse(text, len, path, &j, err)))
    goto out;
  if (j->kind != ZLB_JSON_OBJECT) {
    rc = zlb_error_set(err, ZLB_EPARSE, "not a json object");
    goto out;
  }
  /* The cache belongs to one device: another one's ceilings are wrong here. */
  if ((rc = cached_string(j, "backend", backend, err)) ||
      (rc = cached_string(j, "name", info->name, err)) ||
      (rc = cached_string(j, "uuid", info->uuid, err)) ||
      (rc = cached_string(j, "measured", NULL, err)) ||
      (rc = cached_ceiling(zlb_json_get(j, "bandwidth_gbps"), "bandwidth_gbps", &got.gbps,
                           err)) ||
      (rc = cached_ceiling(zlb_json_get(j, "cache_bandwidth_gbps"), "cache_bandwidth_gbps",
                           &got.cache_gbps, err)))
    goto out;
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    got.tflops[d] = NAN;
  if ((t = zlb_json_get(j, "tflops")) && t->kind != ZLB_JSON_NULL) {
    if (t->kind != ZLB_JSON_OBJECT) {
      rc = zlb_error_set(err, ZLB_EPARSE, "\"tflops\" is not an object");
      goto out;
    }
    for (size_t i = 0; i < t->n; i++) {
      zlb_dtype_t d;
      if (zlb_dtype_parse(t->keys[i], &d) || !zlb_dtype_is_float(d) ||
          strcmp(t->keys[i], zlb_dtype_name(d))) {
        rc = zlb_error_set(err, ZLB_EPARSE, "tflops has an unknown dtype '%s'", t->keys[i]);
        goto out;
      }
      if ((rc = cached_ceiling(t->items[i], t->keys[i], &got.tflops[d], err)))
        goto out;
    }
  }
  zlb_strlcpy(got.measured, zlb_json_get_string(j, "measured", ""), sizeof(got.measured));
  *p = got;
out:
  zlb_json_free(j);
  free(text);
  return rc;
}

/* Only measured ceilings are written: a missing one is left out, so a
 * later run sees it missing and measures it. */
static int save_cache(const char *path, const char *backend, const zlb_device_info_t *info,
                      const zlb__peaks_t *p, zlb_error_t *err) {
  zlb_jw_t jw;
  char dir[1024];
  char *slash;
  int rc = 0;
  zlb_jw_init(&jw, 1);
  zlb_jw_object_begin(&jw);
  zlb_jw_key_string(&jw, "backend", backend);
  zlb_jw_key_string(&jw, "name", info->name);
  zlb_jw_key_string(&jw, "uuid", info->uuid);
  zlb_jw_key_string(&jw, "measured", p->measured);
  if (p->gbps > 0)
    zlb_jw_key_double(&jw, "bandwidth_gbps", p->gbps);
  if (p->cache_gbps > 0)
    zlb_jw_key_double(&jw, "cache_bandwidth_gbps", p->cache_gbps);
  zlb_jw_key_object(&jw, "tflops");
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if (p->tflops[d] > 0)
      zlb_jw_key_double(&jw, zlb_dtype_name((zlb_dtype_t)d), p->tflops[d]);
  zlb_jw_object_end(&jw);
  zlb_jw_object_end(&jw);
  zlb_strbuf_addch(&jw.out, '\n');
  if (zlb_strlcpy(dir, path, sizeof(dir)) >= sizeof(dir)) {
    rc = zlb_error_set(err, ZLB_EINVAL, "cache path '%s' is too long", path);
    goto out;
  }
  if ((slash = strrchr(dir, '/')) && slash != dir) {
    *slash = '\0';
    if ((rc = zlb_mkdirs(dir, err)))
      goto out;
  }
  rc = zlb_write_file_atomic(path, jw.out.buf, jw.out.len, err);
out:
  zlb_jw_release(&jw);
  return rc;
}

/* Best of several copies of `bytes`: bytes read + written over the time.
 * The first one warms up and is not counted. */
static double copy_rate(zlb__run_t *r, size_t bytes, char *why, size_t len) {
  zlb_backend_t *b = r->b;
  void *src = NULL, *dst = NULL;
  zlb_event_t e0 = NULL, e1 = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  double best = NAN, ms;
  if (!b->v->memcpy_dtod) {
    snprintf(why, len, "backend '%s' has no device-to-device copy", b->desc->name);
    return NAN;
  }
  if (b->v->mem_alloc(b, bytes, &src, &err) || b->v->mem_alloc(b, bytes, &dst, &err) ||
      b->v->memset_async(b, src, 1, bytes, r->stream, &err) ||
      b->v->event_create(b, &e0, &err) || b->v->event_create(b, &e1, &err))
    goto out;
  for (int i = 0; i < BW_COPIES; i++) {
    if (b->v->event_record(b, e0, r->stream, &err) ||
        b->v->memcpy_dtod(b, dst, src, bytes, r->stream, &err) ||
        b->v->event_record(b, e1, r->stream, &err) ||
        b->v->event_elapsed(b, e0, e1, &ms, &err))
      goto out;
    if (i > 0 && ms > 0 && (isnan(best) || 2.0 * (double)bytes / (ms * 1e6) > best))
      best = 2.0 * (double)bytes / (ms * 1e6); /* GB/s */
  }
out:
  if (err.code)
    snprintf(why, len, "the bandwidth copy failed: %s", err.msg);
  if (e0)
    b->v->event_destroy(b, e0);
  if (e1)
    b->v->event_destroy(b, e1);
  if (src)
    b->v->mem_free(b, src);
  if (dst)
    b->v->mem_free(b, dst);
  return err.code ? NAN : best;
}

/* Memory: one large copy, far beyond any cache. */
static double copy_bandwidth(zlb__run_t *r, char *why, size_t len) {
  zlb_backend_t *b = r->b;
  size_t bytes = strcmp(b->desc->name, "host") ? (size_t)1 << 30 : (size_t)256 << 20;
  if (b->info.mem_bytes && bytes * 4 > b->info.mem_bytes)
    bytes = b->info.mem_bytes / 8;
  return copy_rate(r, bytes, why, len);
}

/* The last cache before memory: a CPU's L3 where the host reports one,
 * else the L2; 0 when the device reports none. */
size_t zlb__last_cache_bytes(const zlb_device_info_t *info) {
  return info->llc_bytes > info->l2_bytes ? info->llc_bytes : info->l2_bytes;
}

struct copy_ctx {
  zlb_backend_t *b;
  void *dst, *src;
  size_t bytes;
};

static int copy_call(void *ctx, zlb_stream_t s, zlb_error_t *err) {
  struct copy_ctx *c = ctx;
  return c->b->v->memcpy_dtod(c->b, c->dst, c->src, c->bytes, s, err);
}

/* ms per copy of `bytes` within the buffers: the graph timer (replays of
 * back-to-back copies, no host launch in between) where the backend has
 * graphs, else the direct timer; warm cache, the minimum. */
static double copy_ms(zlb__run_t *r, void *dst, void *src, size_t bytes, zlb_error_t *err) {
  struct copy_ctx c = {r->b, dst, src, bytes};
  zlb_launch_t l = {.call = copy_call, .ctx = &c};
  zlb_timing_opts_t o;
  zlb_measurement_t m;
  zlb_graph_failure_t fail;
  double v = NAN;
  int rc;
  zlb_timing_opts_default(&o);
  o.warmup_ms = 5;
  o.rep_ms = 20;
  o.return_mode = ZLB_RET_MIN;
  memset(&m, 0, sizeof(m));
  memset(&fail, 0, sizeof(fail));
  rc = zlb_time_graph(r->b, r->stream, &l, &o, &m, &fail, err);
  if (rc == ZLB_EREFUSED || rc == ZLB_EUNSUPPORTED) {
    zlb_measurement_release(&m);
    memset(&m, 0, sizeof(m));
    zlb_error_clear(err);
    rc = zlb_time_direct(r->b, r->stream, &l, &o, NULL, &m, err);
  }
  if (!rc)
    v = m.value_ms;
  zlb_measurement_release(&m);
  return v;
}

/*
 * The last cache's bandwidth: copies between two buffers of a quarter of
 * the cache each (both stay resident), at that size and at half of it;
 * the slope between the two (bytes read and written over the extra time)
 * leaves out what every copy costs whatever its size (its launch, the gap
 * before it). Rows whose bytes fit in the cache are judged by it.
 */
static double cache_bandwidth(zlb__run_t *r, char *why, size_t len) {
  zlb_backend_t *b = r->b;
  size_t cache = zlb__last_cache_bytes(&b->info), big = (cache / 4) & ~(size_t)4095,
         small = big / 2;
  void *src = NULL, *dst = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  double t_small, t_big, gbps = NAN;
  if (!cache) {
    snprintf(why, len, "the device reports no cache size");
    return NAN;
  }
  if (small < 4096) {
    snprintf(why, len, "the device's %zu-byte cache is too small to measure", cache);
    return NAN;
  }
  if (!b->v->memcpy_dtod) {
    snprintf(why, len, "backend '%s' has no device-to-device copy", b->desc->name);
    return NAN;
  }
  if (b->v->mem_alloc(b, big, &src, &err) || b->v->mem_alloc(b, big, &dst, &err) ||
      b->v->memset_async(b, src, 1, big, r->stream, &err))
    goto out;
  t_small = copy_ms(r, dst, src, small, &err);
  if (!err.code)
    t_big = copy_ms(r, dst, src, big, &err);
  if (err.code)
    goto out;
  if (t_big > t_small && t_small > 0)
    gbps = 2.0 * (double)(big - small) / ((t_big - t_small) * 1e6);
  else if (t_big > 0) /* no slope to read: the whole copy's rate */
    gbps = 2.0 * (double)big / (t_big * 1e6);
  else
    snprintf(why, len, "the cache copies gave no time");
out:
  if (err.code)
    snprintf(why, len, "the cache bandwidth copy failed: %s", err.msg);
  if (src)
    b->v->mem_free(b, src);
  if (dst)
    b->v->mem_free(b, dst);
  return err.code ? NAN : gbps;
}

/* Random data, one tile of it repeated over the tensor: a GEMM on zeros or
 * constants runs faster than on real data (the multipliers toggle fewer
 * bits and draw less power), and filling 8192^2 elements element by
 * element on the host would take seconds. */
static int fill_tiled(zlb__run_t *r, const zlb_tensor_t *t, zlb_error_t *err) {
  size_t total = (size_t)t->numel * zlb_dtype_size(t->dtype), tile = FILL_TILE, off;
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
  return rc ? zlb_error_set(err, ZLB_EOP, "peak gemm failed (%d): %s", rc, g->r->errbuf) : 0;
}

static int alloc_tensor(zlb__run_t *r, zlb_tensor_t *t, int fill, zlb_error_t *err) {
  t->numel = 1;
  for (int k = 0; k < t->ndim; k++)
    t->numel *= t->dims[k];
  if (r->b->v->mem_alloc(r->b, (size_t)t->numel * zlb_dtype_size(t->dtype), &t->data, err))
    return err->code;
  return fill ? fill_tiled(r, t, err) : 0;
}

/* TFLOP/s of the vendor GEMM (the `mm` operator's baseline), GEMM_N^3;
 * NAN with the reason in `why` when any step fails. */
static double gemm_tflops(zlb__run_t *r, zlb_dtype_t dt, char *why, size_t len) {
  const zlb_op_t *mm = r->ops_mm;
  zlb_case_t c;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_measurement_t m;
  zlb_timing_opts_t o;
  struct gemm_ctx g = {r, &c};
  zlb_launch_t l = {.call = gemm_call, .ctx = &g};
  double t = NAN;
  int prepared = 0, inited = 0;
  memset(&c, 0, sizeof(c));
  memset(&m, 0, sizeof(m));
  c.dtype = dt;
  c.shape.ndim = 3;
  c.shape.dims[0] = c.shape.dims[1] = c.shape.dims[2] = GEMM_N;
  r->errbuf[0] = '\0';
  if (mm->case_init(&r->env, &c)) {
    snprintf(why, len, "mm case_init failed: %s", r->errbuf);
    goto out;
  }
  inited = 1;
  for (int i = 0; i < c.n_in; i++)
    if (alloc_tensor(r, &c.in[i], 1, &err)) {
      snprintf(why, len, "peak gemm input: %s", err.msg);
      goto out;
    }
  for (int k = 0; k < c.n_out; k++)
    if (alloc_tensor(r, &c.out[0][k], 0, &err)) {
      snprintf(why, len, "peak gemm output: %s", err.msg);
      goto out;
    }
  if (mm->baseline.prepare && mm->baseline.prepare(&r->env, &c, ZLB_BASELINE)) {
    snprintf(why, len, "mm baseline prepare failed: %s", r->errbuf);
    goto out;
  }
  prepared = 1;
  zlb_timing_opts_default(&o);
  o.warmup_ms = 20;
  o.rep_ms = 60;
  o.return_mode = ZLB_RET_MIN;
  if (zlb_time_direct(r->b, r->stream, &l, &o, NULL, &m, &err)) {
    snprintf(why, len, "%s", err.msg);
    goto out;
  }
  if (!(m.value_ms > 0) || !(c.flops > 0)) {
    snprintf(why, len, "the peak gemm gave no time or no flop count");
    goto out;
  }
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

void zlb__peaks_resolve_with(zlb__peaks_t *p, const char *cache_path, const char *backend,
                             const zlb_device_info_t *info, const zlb__peaks_probe_t *probe) {
  zlb_error_t err = ZLB_ERROR_INIT;
  int from_cache = 0, measured = 0;
  uint32_t gemm_mask;
  char why[256] = "";
  memset(p, 0, sizeof(*p));
  p->gbps = p->cache_gbps = NAN;
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    p->tflops[d] = NAN;
  if (cache_path && *cache_path) {
    if (load_cache(cache_path, backend, info, p, &err) == 0)
      from_cache = 1;
    else if (err.code != ZLB_ENOTFOUND)
      snprintf(p->cache_note, sizeof(p->cache_note),
               "cache %s rejected (%s): re-measured; delete it if this repeats", cache_path,
               err.msg);
  }
  if (!(p->gbps > 0)) {
    p->gbps = probe->bandwidth(probe->ctx, p->gbps_why, sizeof(p->gbps_why));
    if (p->gbps > 0)
      measured = 1;
    else if (!p->gbps_why[0])
      zlb_strlcpy(p->gbps_why, "the copy gave no time", sizeof(p->gbps_why));
  }
  if (!(p->cache_gbps > 0)) {
    if (!probe->cache_bandwidth)
      zlb_strlcpy(p->cache_why, "not measured here", sizeof(p->cache_why));
    else if ((p->cache_gbps = probe->cache_bandwidth(probe->ctx, p->cache_why,
                                                     sizeof(p->cache_why))) > 0)
      measured = 1;
    else if (!p->cache_why[0])
      zlb_strlcpy(p->cache_why, "the copy gave no time", sizeof(p->cache_why));
  }
  gemm_mask = probe->gemm_dtypes(probe->ctx, why, sizeof(why));
  for (int d = 0; d < ZLB_DT_COUNT; d++) {
    if (p->tflops[d] > 0 || !zlb_dtype_is_float((zlb_dtype_t)d))
      continue;
    if (!(gemm_mask & ZLB_DT_BIT(d))) {
      zlb_strlcpy(p->gemm_why[d], why[0] ? why : "the gemm does not support this dtype",
                  sizeof(p->gemm_why[d]));
      continue;
    }
    p->tflops[d] = probe->gemm(probe->ctx, (zlb_dtype_t)d, p->gemm_why[d],
                               sizeof(p->gemm_why[d]));
    if (p->tflops[d] > 0)
      measured = 1;
    else if (!p->gemm_why[d][0])
      zlb_strlcpy(p->gemm_why[d], "the peak gemm gave no time", sizeof(p->gemm_why[d]));
  }
  if (measured)
    zlb_iso8601_now(p->measured, sizeof(p->measured));
  if (from_cache)
    snprintf(p->source, sizeof(p->source), "%s%s", cache_path,
             measured ? " (completed now)" : "");
  else
    zlb_strlcpy(p->source, "measured now", sizeof(p->source));
  /* Write only when there is something new: a partial cache is completed
   * by the run that can measure what it lacks, and kept as it is until then. */
  if (measured && cache_path && *cache_path) {
    zlb_error_clear(&err);
    if (save_cache(cache_path, backend, info, p, &err)) {
      size_t n = strlen(p->cache_note);
      snprintf(p->cache_note + n, sizeof(p->cache_note) - n, "%scache not written (%s)",
               n ? "; " : "", err.msg);
    }
  }
}

/* The backend's probes. */

static double probe_bandwidth(void *ctx, char *why, size_t len) {
  return copy_bandwidth(ctx, why, len);
}

static uint32_t probe_gemm_dtypes(void *ctx, char *why, size_t len) {
  zlb__run_t *r = ctx;
  const zlb_op_entry_t *mm = zlb_ops_find(&r->ops, "mm", r->b->desc->name);
  uint32_t mask = 0;
  /* The host's "vendor GEMM" is a naive loop: no meaningful FLOP ceiling. */
  if (!strcmp(r->b->desc->name, "host")) {
    snprintf(why, len, "the host mm baseline is a naive loop, not a ceiling");
    return 0;
  }
  if (!mm) {
    snprintf(why, len,
             "no 'mm' operator for backend '%s' is loaded (load the corpus library "
             "that has it, not only --lib)",
             r->b->desc->name);
    return 0;
  }
  r->ops_mm = mm->op;
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if ((mm->op->dtypes & ZLB_DT_BIT(d)) && zlb_dtype_is_float((zlb_dtype_t)d))
      mask |= ZLB_DT_BIT(d);
  if (!mask)
    snprintf(why, len, "the 'mm' operator supports no float dtype");
  return mask;
}

static double probe_gemm(void *ctx, zlb_dtype_t dt, char *why, size_t len) {
  return gemm_tflops(ctx, dt, why, len);
}

static double probe_cache_bandwidth(void *ctx, char *why, size_t len) {
  return cache_bandwidth(ctx, why, len);
}

void zlb__peaks_resolve(zlb__run_t *r) {
  zlb_strbuf_t path = ZLB_STRBUF_INIT;
  zlb__peaks_probe_t probe = {r, probe_bandwidth, probe_gemm_dtypes, probe_gemm,
                              probe_cache_bandwidth};
  if (getenv("ZL_NO_PEAKS")) {
    memset(&r->peaks, 0, sizeof(r->peaks));
    r->peaks.gbps = r->peaks.cache_gbps = NAN;
    zlb_strlcpy(r->peaks.cache_why, "ZL_NO_PEAKS is set", sizeof(r->peaks.cache_why));
    for (int d = 0; d < ZLB_DT_COUNT; d++) {
      r->peaks.tflops[d] = NAN;
      zlb_strlcpy(r->peaks.gemm_why[d], "ZL_NO_PEAKS is set", sizeof(r->peaks.gemm_why[d]));
    }
    zlb_strlcpy(r->peaks.gbps_why, "ZL_NO_PEAKS is set", sizeof(r->peaks.gbps_why));
    return;
  }
  if (getenv("ZL_TEST_PEAKS") && !strncmp(r->b->desc->name, "test", 4)) {
    /* Tests only (--integrity's rate gate on a backend without ceilings):
     * "GBPS[:TFLOPS[:CACHE_GBPS]]" stand for the measured ceilings, every
     * float dtype the same FLOP rate; nothing is measured or cached. Only
     * the test backends read it: a real device's ceilings are always
     * measured. */
    double gbps = NAN, tf = NAN, cg = NAN;
    int n = sscanf(getenv("ZL_TEST_PEAKS"), "%lf:%lf:%lf", &gbps, &tf, &cg);
    memset(&r->peaks, 0, sizeof(r->peaks));
    r->peaks.gbps = n >= 1 && gbps > 0 ? gbps : NAN;
    r->peaks.cache_gbps = n >= 3 && cg > 0 ? cg : NAN;
    zlb_strlcpy(r->peaks.cache_why, "ZL_TEST_PEAKS gives none", sizeof(r->peaks.cache_why));
    for (int d = 0; d < ZLB_DT_COUNT; d++) {
      r->peaks.tflops[d] = n >= 2 && tf > 0 ? tf : NAN;
      zlb_strlcpy(r->peaks.gemm_why[d], "ZL_TEST_PEAKS gives none", sizeof(r->peaks.gemm_why[d]));
    }
    zlb_strlcpy(r->peaks.gbps_why, "ZL_TEST_PEAKS gives none", sizeof(r->peaks.gbps_why));
    zlb_strlcpy(r->peaks.source, "ZL_TEST_PEAKS", sizeof(r->peaks.source));
    return;
  }
  cache_path(r->b, &path);
  zlb__peaks_resolve_with(&r->peaks, path.len ? path.buf : NULL, r->b->desc->name,
                          &r->b->info, &probe);
  zlb_strbuf_release(&path);
}

double zlb__peaks_pct_of(const zlb__peaks_t *p, zlb_dtype_t dt, double bytes, double flops,
                         double ms) {
  return zlb__peaks_pct_ceiling(p, ZLB__CEIL_MEMORY, dt, bytes, flops, ms);
}

const char *zlb__ceiling_name(int ceiling) {
  return ceiling == ZLB__CEIL_MEMORY ? "memory" : ceiling == ZLB__CEIL_CACHE ? "cache" : "";
}

/* Fits in the cache: on the H200 (60 MiB L2) warm-L2 rows of 34 MB, more
 * than half of it, ran at 6,000 GB/s, 143 % of a memory copy's rate: served
 * by the L2. A row partly served from memory is judged by the cache's
 * ceiling too, and shows a lower %Peak, never a false one. */
int zlb__ceiling_for(double bytes, size_t cache, int flushed) {
  return !flushed && cache && bytes > 0 && bytes <= (double)cache ? ZLB__CEIL_CACHE
                                                                  : ZLB__CEIL_MEMORY;
}

/* The cache's ceiling is the rate of copies within it, which a kernel that
 * reads more than it writes, or finds its data in a nearer cache, beats.
 * Memory's is a 1 GiB copy's rate, which a read-only or write-only stream
 * beats by some percent (on the H200 reductions of 1 GB ran at 110 % of
 * it, fill at 102 %), as does a warm timer's row partly left in the
 * cache; beyond ZLB__MEMORY_SLACK no memory does it. */
int zlb__over_ceiling_honest(int ceiling, double gbps, double bw) {
  if (ceiling == ZLB__CEIL_CACHE)
    return 1;
  return ceiling == ZLB__CEIL_MEMORY && bw > 0 && gbps <= ZLB__MEMORY_SLACK * bw;
}

double zlb__peaks_pct_ceiling(const zlb__peaks_t *p, int ceiling, zlb_dtype_t dt, double bytes,
                              double flops, double ms) {
  double bw = ceiling == ZLB__CEIL_CACHE ? p->cache_gbps : p->gbps;
  int have_bw = bw > 0, have_fl = (unsigned)dt < ZLB_DT_COUNT && p->tflops[dt] > 0;
  double t;
  if (!(ms > 0) || (!(bytes > 0) && !(flops > 0)))
    return NAN;
  /* Roofline: the larger of the two floors is what the case could take at
   * best; % of peak is that floor over the measured time. With one ceiling
   * missing the floor is known only when the other one is the one that
   * applies; otherwise N/A, never a number against the wrong ceiling. */
  if (have_bw && have_fl)
    t = fmax(bytes > 0 ? bytes / (bw * 1e9) : 0, flops > 0 ? flops / (p->tflops[dt] * 1e12) : 0);
  else if (have_bw && bytes > 0 && (!(flops > 0) || flops / bytes < MEMBOUND_INTENSITY))
    t = bytes / (bw * 1e9);
  else if (have_fl && flops > 0 && !(bytes > 0))
    t = flops / (p->tflops[dt] * 1e12);
  else
    return NAN;
  return t / (ms * 1e-3) * 100.0;
}

void zlb__peaks_describe(const zlb__peaks_t *p, uint32_t dtypes, zlb_strbuf_t *out) {
  int any = 0;
  if (p->gbps > 0)
    zlb_strbuf_addf(out, "bandwidth %.0f GB/s", p->gbps);
  else
    zlb_strbuf_addf(out, "bandwidth missing (%s)", p->gbps_why);
  if (p->cache_gbps > 0)
    zlb_strbuf_addf(out, ", cache bandwidth %.0f GB/s", p->cache_gbps);
  else
    zlb_strbuf_addf(out, ", cache bandwidth missing (%s): %%Peak of rows in a warm cache is N/A",
                    p->cache_why);
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if (p->tflops[d] > 0)
      zlb_strbuf_addf(out, "%s %s=%.0f", any++ ? "" : ", TFLOP/s", zlb_dtype_name((zlb_dtype_t)d),
                      p->tflops[d]);
  /* A missing GEMM ceiling is named for each dtype of this run it
   * concerns, with its reason: its FLOP-bound rows show N/A. */
  uint32_t left = 0;
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if ((dtypes & ZLB_DT_BIT(d)) && zlb_dtype_is_float((zlb_dtype_t)d) && !(p->tflops[d] > 0))
      left |= ZLB_DT_BIT(d);
  /* Dtypes missing for the same reason share one clause. */
  for (int d = 0; d < ZLB_DT_COUNT; d++) {
    int n = 0;
    if (!(left & ZLB_DT_BIT(d)))
      continue;
    zlb_strbuf_addstr(out, "; gemm ceiling missing for ");
    for (int e = d; e < ZLB_DT_COUNT; e++)
      if ((left & ZLB_DT_BIT(e)) && !strcmp(p->gemm_why[e], p->gemm_why[d])) {
        zlb_strbuf_addf(out, "%s%s", n++ ? "," : "", zlb_dtype_name((zlb_dtype_t)e));
        left &= ~ZLB_DT_BIT(e);
      }
    zlb_strbuf_addf(out, " (%s): %%Peak of FLOP-bound rows is N/A", p->gemm_why[d]);
  }
  if (p->cache_note[0])
    zlb_strbuf_addf(out, "; %s", p->cache_note);
}
