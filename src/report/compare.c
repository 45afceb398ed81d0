/* `zlbench compare`: load two sets of results (results.json files with the
 * run_identity.json beside each), match their rows, check the calibers,
 * give each pair a verdict and render the comparison. docs/compare.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"
#include "zlbench/compare.h"
#include "zlbench/json.h"

/* ---- calibers ------------------------------------------------------------------- */

const char *zlb_caliber_field(int i) {
  static const char *names[ZLB_CAL_COUNT] = {"timer",       "autotune", "backend",
                                             "device",      "l2_flush", "return_mode",
                                             "tool_major",  "children_per_device"};
  return i >= 0 && i < ZLB_CAL_COUNT ? names[i] : "?";
}

static void cal_set(zlb_caliber_t *cal, int f, const char *v) {
  zlb_strlcpy(cal->v[f], v ? v : "", sizeof(cal->v[f]));
}

/* An identity's backend or device: an object with its name (zlbench run),
 * or the name itself (the FlagGems plugin's identity); "" when absent. */
static const char *identity_name(const zlb_json_t *root, const char *key) {
  const zlb_json_t *o = zlb_json_get(root, key);
  if (o && o->kind == ZLB_JSON_STRING)
    return o->string;
  return o ? zlb_json_get_string(o, "name", "") : "";
}

int zlb_caliber_parse(const char *text, size_t len, const char *what, zlb_caliber_t *cal,
                      zlb_error_t *err) {
  zlb_json_t *root = NULL;
  const zlb_json_t *o, *c, *l2;
  int rc;
  memset(cal, 0, sizeof(*cal));
  if ((rc = zlb_json_parse(text, len, what, &root, err)))
    return rc;
  if (root->kind != ZLB_JSON_OBJECT) {
    zlb_json_free(root);
    return zlb_error_set(err, ZLB_EPARSE, "%s: not a JSON object", what);
  }
  if ((o = zlb_json_get(root, "tool"))) {
    const char *v = zlb_json_get_string(o, "version", "");
    char major[32];
    size_t n = strcspn(v, ".");
    snprintf(major, sizeof(major), "%.*s", (int)(n < 31 ? n : 31), v);
    cal_set(cal, ZLB_CAL_TOOL_MAJOR, major);
  }
  cal->peak_gbps = cal->cache_gbps = NAN;
  if ((o = zlb_json_get(root, "peaks")) && o->kind == ZLB_JSON_OBJECT) {
    const zlb_json_t *v = zlb_json_get(o, "bandwidth_gbps");
    if (v && v->kind == ZLB_JSON_NUMBER && isfinite(v->number) && v->number > 0)
      cal->peak_gbps = v->number;
    v = zlb_json_get(o, "cache_bandwidth_gbps");
    if (v && v->kind == ZLB_JSON_NUMBER && isfinite(v->number) && v->number > 0)
      cal->cache_gbps = v->number;
  }
  cal_set(cal, ZLB_CAL_BACKEND, identity_name(root, "backend"));
  cal_set(cal, ZLB_CAL_DEVICE, identity_name(root, "device"));
  if ((c = zlb_json_get(root, "caliber"))) {
    cal_set(cal, ZLB_CAL_TIMER, zlb_json_get_string(c, "timer", ""));
    cal_set(cal, ZLB_CAL_AUTOTUNE, zlb_json_get_string(c, "autotune", ""));
    cal_set(cal, ZLB_CAL_RETURN, zlb_json_get_string(c, "return_mode", ""));
    {
      /* Children that shared their device (batch --jobs-per-device);
       * identities from before the field ran one per device. */
      char n[32];
      double v = zlb_json_get_number(c, "children_per_device", 1);
      snprintf(n, sizeof(n), "%.0f", isfinite(v) ? v : 1);
      cal_set(cal, ZLB_CAL_SHARED, n);
    }
    if ((l2 = zlb_json_get(c, "l2"))) {
      char buf[96];
      double fb = zlb_json_get_number(l2, "flush_bytes", 0);
      /* The graph and queue timers' L2 mode (--l2): cold where either ran
       * cold, or, without those keys, where l2_mode asked for it; an
       * identity from before --l2 was warm and reads as before. */
      const zlb_json_t *gq = zlb_json_get(l2, "graph");
      int cold = gq ? !strcmp(zlb_json_get_string(l2, "graph", ""), "cold") ||
                          !strcmp(zlb_json_get_string(l2, "queue", ""), "cold")
                    : !strcmp(zlb_json_get_string(c, "l2_mode", "warm"), "cold");
      snprintf(buf, sizeof(buf), "%s:%.0f%s", zlb_json_get_string(l2, "direct", "?"),
               isfinite(fb) ? fb : 0, cold ? ",graph/queue:cold" : "");
      cal_set(cal, ZLB_CAL_L2, buf);
    }
  }
  zlb_json_free(root);
  return 0;
}

/* ---- results files ------------------------------------------------------------------ */

static char *dup_str(const zlb_json_t *obj, const char *key) {
  const char *s = zlb_json_get_string(obj, key, "");
  return zlb_xstrdup(s);
}

static void row_release(zlb_res_row_t *r) {
  free(r->op);
  free(r->family);
  free(r->dtype);
  free(r->shape);
  free(r->status);
  free(r->timer);
  free(r->marker);
  free(r->error);
  free(r->source);
  free(r->ceiling);
  for (int i = 0; i < 2; i++) {
    free(r->impl[i]);
    free(r->samples[i]);
  }
}

void zlb_res_release(zlb_res_set_t *s) {
  for (size_t i = 0; i < s->n; i++)
    row_release(&s->rows[i]);
  free(s->rows);
  free(s->cals);
  zlb_strvec_release(&s->warnings);
  memset(s, 0, sizeof(*s));
}

/* A member that must be of `kind` when present (null allowed for numbers). */
static int check_kind(const zlb_json_t *obj, const char *key, zlb_json_kind_t kind, int need,
                      const char *where, zlb_error_t *err) {
  const zlb_json_t *v = zlb_json_get(obj, key);
  if (!v)
    return need ? zlb_error_set(err, ZLB_EPARSE, "%s: member '%s' missing", where, key) : 0;
  if (v->kind == kind || (v->kind == ZLB_JSON_NULL && !need))
    return 0;
  return zlb_error_set(err, ZLB_EPARSE, "%s: member '%s' has the wrong type", where, key);
}

static double num(const zlb_json_t *obj, const char *key) {
  return zlb_json_get_number(obj, key, NAN);
}

/* A time as results.json holds it: finite, not negative (a calibrated
 * queue timer's sample, the launch cost subtracted, may be 0) and at most
 * ZLB_RES_MAX_MS. */
static int ms_ok(const zlb_json_t *x) {
  return x->kind == ZLB_JSON_NUMBER && isfinite(x->number) && x->number >= 0 &&
         x->number <= ZLB_RES_MAX_MS;
}

static int read_measurement(const zlb_json_t *m, zlb_res_row_t *r, int which, const char *where,
                            zlb_error_t *err) {
  const zlb_json_t *s;
  int rc;
  if (!m || m->kind != ZLB_JSON_OBJECT)
    return zlb_error_set(err, ZLB_EPARSE, "%s: '%s' is not an object", where,
                         which ? "candidate" : "baseline");
  if ((rc = check_kind(m, "impl", ZLB_JSON_STRING, 0, where, err)) ||
      (rc = check_kind(m, "ms", ZLB_JSON_NUMBER, 0, where, err)) ||
      (rc = check_kind(m, "samples", ZLB_JSON_ARRAY, 0, where, err)))
    return rc;
  r->impl[which] = dup_str(m, "impl");
  r->ms[which] = num(m, "ms");
  /* Host time per call (absent in older files, null when not measured). */
  if ((rc = check_kind(m, "host_us", ZLB_JSON_NUMBER, 0, where, err)))
    return rc;
  r->host_us[which] = num(m, "host_us");
  if (zlb_json_get(m, "host_us") && zlb_json_get(m, "host_us")->kind == ZLB_JSON_NUMBER &&
      !(r->host_us[which] >= 0 && r->host_us[which] <= ZLB_RES_MAX_HOST_US))
    return zlb_error_set(err, ZLB_EPARSE,
                         "%s: %s.host_us is not a host time in us (a number from 0 to %.0f)",
                         where, which ? "candidate" : "baseline", ZLB_RES_MAX_HOST_US);
  if (zlb_json_get(m, "ms") && zlb_json_get(m, "ms")->kind == ZLB_JSON_NUMBER &&
      !ms_ok(zlb_json_get(m, "ms")))
    return zlb_error_set(err, ZLB_EPARSE, "%s: %s.ms is not a time in ms (a number from 0 to %.0f)",
                         where, which ? "candidate" : "baseline", ZLB_RES_MAX_MS);
  s = zlb_json_get(m, "samples");
  if (s && s->kind == ZLB_JSON_ARRAY) {
    if (s->n > ZLB_RES_MAX_SAMPLES)
      return zlb_error_set(err, ZLB_EPARSE, "%s: %zu samples (at most %d)", where, s->n,
                           ZLB_RES_MAX_SAMPLES);
    r->samples[which] = zlb_xmalloc((s->n ? s->n : 1) * sizeof(double));
    for (size_t i = 0; i < s->n; i++) {
      const zlb_json_t *x = s->items[i];
      if (x->kind == ZLB_JSON_NULL)
        continue; /* a non-finite sample: not a time */
      if (!ms_ok(x))
        return zlb_error_set(err, ZLB_EPARSE,
                             "%s: %s.samples[%zu] is not a time in ms (a number from 0 to %.0f)",
                             where, which ? "candidate" : "baseline", i, ZLB_RES_MAX_MS);
      r->samples[which][r->nsamples[which]++] = x->number;
    }
  }
  if ((rc = check_kind(m, "trials", ZLB_JSON_ARRAY, 0, where, err)))
    return rc;
  s = zlb_json_get(m, "trials");
  if (s && s->kind == ZLB_JSON_ARRAY) {
    if (s->n > ZLB_RES_MAX_TRIALS)
      return zlb_error_set(err, ZLB_EPARSE, "%s: %zu trials (at most %d)", where, s->n,
                           ZLB_RES_MAX_TRIALS);
    for (size_t i = 0; i < s->n; i++) {
      const zlb_json_t *x = s->items[i];
      if (x->kind == ZLB_JSON_NULL)
        continue; /* a trial without a value, as a non-finite sample */
      if (!ms_ok(x))
        return zlb_error_set(err, ZLB_EPARSE,
                             "%s: %s.trials[%zu] is not a time in ms (a number from 0 to %.0f)",
                             where, which ? "candidate" : "baseline", i, ZLB_RES_MAX_MS);
      r->trials[which][r->ntrials[which]++] = x->number;
    }
  }
  return 0;
}

int zlb_res_parse(zlb_res_set_t *s, const char *text, size_t len, const char *source,
                  const zlb_caliber_t *cal, zlb_error_t *err) {
  zlb_json_t *root = NULL;
  const zlb_json_t *tables;
  const char *schema;
  char where[1200];
  int rc;

  if ((rc = zlb_json_parse(text, len, source, &root, err)))
    return rc;
  if (root->kind != ZLB_JSON_OBJECT) {
    rc = zlb_error_set(err, ZLB_EPARSE, "%s: not a JSON object", source);
    goto out;
  }
  schema = zlb_json_get_string(root, "schema", NULL);
  if (!schema || strcmp(schema, "zlbench.results/1")) {
    rc = zlb_error_set(err, ZLB_EPARSE, "%s: schema is not 'zlbench.results/1'", source);
    goto out;
  }
  if ((rc = check_kind(root, "operator", ZLB_JSON_STRING, 1, source, err)) ||
      (rc = check_kind(root, "family", ZLB_JSON_STRING, 0, source, err)) ||
      (rc = check_kind(root, "tables", ZLB_JSON_ARRAY, 1, source, err)))
    goto out;
  s->cals = zlb_xrealloc(s->cals, (s->ncal + 1) * sizeof(*s->cals));
  if (cal)
    s->cals[s->ncal] = *cal;
  else
    memset(&s->cals[s->ncal], 0, sizeof(s->cals[0]));
  s->ncal++;
  tables = zlb_json_get(root, "tables");
  for (size_t t = 0; t < tables->n; t++) {
    const zlb_json_t *tab = tables->items[t], *rows;
    snprintf(where, sizeof(where), "%s: tables[%zu]", source, t);
    if (tab->kind != ZLB_JSON_OBJECT) {
      rc = zlb_error_set(err, ZLB_EPARSE, "%s: not an object", where);
      goto out;
    }
    if ((rc = check_kind(tab, "dtype", ZLB_JSON_STRING, 1, where, err)) ||
        (rc = check_kind(tab, "operator", ZLB_JSON_STRING, 0, where, err)) ||
        (rc = check_kind(tab, "rows", ZLB_JSON_ARRAY, 1, where, err)))
      goto out;
    rows = zlb_json_get(tab, "rows");
    for (size_t i = 0; i < rows->n; i++) {
      const zlb_json_t *row = rows->items[i];
      zlb_res_row_t r;
      const char *detail;
      memset(&r, 0, sizeof(r));
      snprintf(where, sizeof(where), "%s: tables[%zu].rows[%zu]", source, t, i);
      if (s->n >= ZLB_RES_MAX_ROWS) {
        rc = zlb_error_set(err, ZLB_EPARSE, "%s: more than %d rows", where, ZLB_RES_MAX_ROWS);
        goto out;
      }
      if (row->kind != ZLB_JSON_OBJECT) {
        rc = zlb_error_set(err, ZLB_EPARSE, "%s: not an object", where);
        goto out;
      }
      if ((rc = check_kind(row, "status", ZLB_JSON_STRING, 1, where, err)) ||
          (rc = check_kind(row, "shape", ZLB_JSON_STRING, 0, where, err)) ||
          (rc = check_kind(row, "detail", ZLB_JSON_STRING, 0, where, err)) ||
          (rc = check_kind(row, "marker", ZLB_JSON_STRING, 0, where, err)) ||
          (rc = check_kind(row, "timer", ZLB_JSON_STRING, 0, where, err)) ||
          (rc = check_kind(row, "error", ZLB_JSON_STRING, 0, where, err)) ||
          (rc = check_kind(row, "ceiling", ZLB_JSON_STRING, 0, where, err)))
        goto out;
      /* A table may name an operator of its own (a FlagGems test that
       * benchmarks several); the file's otherwise. */
      r.op = dup_str(zlb_json_get_string(tab, "operator", NULL) ? tab : root, "operator");
      r.family = dup_str(root, "family");
      r.dtype = dup_str(tab, "dtype");
      detail = zlb_json_get_string(row, "detail", "");
      r.shape = zlb_xstrdup(*detail ? detail : zlb_json_get_string(row, "shape", ""));
      r.status = dup_str(row, "status");
      r.timer = dup_str(row, "timer");
      r.marker = dup_str(row, "marker");
      r.error = dup_str(row, "error");
      r.ceiling = dup_str(row, "ceiling");
      if (strcmp(r.ceiling, "") && strcmp(r.ceiling, "memory") && strcmp(r.ceiling, "cache")) {
        rc = zlb_error_set(err, ZLB_EPARSE, "%s: \"ceiling\" is '%.40s', not memory or cache",
                           where, r.ceiling);
        row_release(&r);
        goto out;
      }
      r.source = zlb_xstrdup(source);
      r.speedup = num(row, "speedup");
      r.pct_peak = num(row, "pct_peak");
      r.bytes = num(row, "bytes");
      r.flops = num(row, "flops");
      r.gbps = num(row, "gbps");
      r.tflops = num(row, "tflops");
      r.noise = num(row, "noise");
      r.cal = s->ncal - 1;
      if ((rc = read_measurement(zlb_json_get(row, "baseline"), &r, 0, where, err)) ||
          (rc = read_measurement(zlb_json_get(row, "candidate"), &r, 1, where, err))) {
        row_release(&r);
        goto out;
      }
      if (s->n == s->alloc) {
        s->alloc = s->alloc ? 2 * s->alloc : 64;
        s->rows = zlb_xrealloc(s->rows, s->alloc * sizeof(*s->rows));
      }
      s->rows[s->n++] = r;
    }
  }
  s->nfiles++;
out:
  zlb_json_free(root);
  return rc;
}

static int is_results_name(const char *name) { return !strcmp(name, "results.json"); }

/* Load one results file and the identity beside it. `shown` names it. */
static int load_file(zlb_res_set_t *s, const char *full, const char *shown, zlb_error_t *err) {
  char *text = NULL, *slash;
  size_t len = 0;
  zlb_caliber_t cal;
  zlb_strbuf_t id = ZLB_STRBUF_INIT;
  int rc, have_cal = 0;

  zlb_strbuf_addstr(&id, full);
  slash = strrchr(id.buf, '/');
  zlb_strbuf_setlen(&id, slash ? (size_t)(slash - id.buf + 1) : 0);
  zlb_strbuf_addstr(&id, "run_identity.json");
  if (zlb_path_exists(id.buf)) {
    if ((rc = zlb_read_file_max(id.buf, ZLB_READ_MAX_JSON, "a JSON file", &text, &len, err)))
      goto out;
    rc = zlb_caliber_parse(text, len, id.buf, &cal, err);
    free(text);
    text = NULL;
    if (rc)
      goto out;
    have_cal = 1;
  }
  if ((rc = zlb_read_file_max(full, ZLB_READ_MAX_JSON, "a JSON file", &text, &len, err)))
    goto out;
  rc = zlb_res_parse(s, text, len, shown, have_cal ? &cal : NULL, err);
out:
  free(text);
  zlb_strbuf_release(&id);
  return rc;
}

int zlb_res_load(zlb_res_set_t *s, const char *path, zlb_error_t *err) {
  zlb_strvec_t files = ZLB_STRVEC_INIT;
  zlb_strbuf_t full = ZLB_STRBUF_INIT;
  int rc = 0;

  zlb_strlcpy(s->root, path, sizeof(s->root));
  if (!zlb_is_dir(path)) {
    if (!zlb_path_exists(path))
      return zlb_error_set(err, ZLB_ENOTFOUND, "'%s' does not exist", path);
    return load_file(s, path, path, err);
  }
  if ((rc = zlb__collect_files(path, is_results_name, ZLB_RES_MAX_FILES, "results files",
                                &files, &s->warnings, err)))
    goto out;
  if (!files.n) {
    rc = zlb_error_set(err, ZLB_ENOTFOUND,
                       "no results.json under '%s' (results of zlbench run or batch)", path);
    goto out;
  }
  zlb_strvec_sort(&files);
  for (size_t i = 0; i < files.n && !rc; i++) {
    zlb_strbuf_reset(&full);
    zlb_path_join(&full, path, files.v[i]);
    rc = load_file(s, full.buf, full.buf, err);
  }
out:
  zlb_strvec_release(&files);
  zlb_strbuf_release(&full);
  return rc;
}

/* ---- matching and verdicts ---------------------------------------------------------- */

typedef struct {
  const zlb_res_row_t *r;
  const char *impl;
} keyed_t;

static int key_cmp(const zlb_res_row_t *x, const char *xi, const zlb_res_row_t *y,
                   const char *yi) {
  int c;
  if ((c = strcmp(x->op, y->op)) || (c = strcmp(xi, yi)) || (c = strcmp(x->dtype, y->dtype)))
    return c;
  return strcmp(x->shape, y->shape);
}

static int keyed_cmp(const void *p, const void *q) {
  const keyed_t *x = p, *y = q;
  int c = key_cmp(x->r, x->impl, y->r, y->impl);
  if (c)
    return c;
  return x->r < y->r ? -1 : x->r > y->r; /* stable: file order */
}

static const char *impl_of(const zlb_res_row_t *r, zlb_cmp_impl_t impl) {
  return impl == ZLB_CMP_BASELINE ? r->impl[0] : r->impl[1];
}

/* The values compared for one side: times of the chosen implementation,
 * or for `speedup` the candidate's times over the baseline's median. */
static double *values(const zlb_res_row_t *r, zlb_cmp_impl_t impl, size_t *n, double *ms) {
  int w = impl == ZLB_CMP_BASELINE ? 0 : 1;
  double *v = zlb_xmalloc((r->nsamples[w] ? r->nsamples[w] : 1) * sizeof(*v));
  double scale = 1;
  *n = r->nsamples[w];
  if (*n) /* a row without "samples" has none: NULL, not to memcpy */
    memcpy(v, r->samples[w], *n * sizeof(*v));
  *ms = *n ? zlb_median(v, *n) : NAN;
  if (impl == ZLB_CMP_SPEEDUP) {
    double mb = r->nsamples[0] ? zlb_median(r->samples[0], r->nsamples[0]) : NAN;
    if (!(mb > 0)) {
      *n = 0;
      return v;
    }
    scale = 1 / mb;
    for (size_t i = 0; i < *n; i++)
      v[i] *= scale;
    *ms = mb / *ms; /* the speedup itself */
  }
  return v;
}

/* (max - min) / median of one side's trial values, NAN under two trials;
 * for `speedup`, of each trial's baseline over candidate. */
static double trial_spread(const zlb_res_row_t *r, zlb_cmp_impl_t impl) {
  double v[ZLB_RES_MAX_TRIALS], lo, hi, med;
  int n = 0;
  if (impl == ZLB_CMP_SPEEDUP) {
    for (int i = 0; i < r->ntrials[0] && i < r->ntrials[1]; i++)
      if (r->trials[1][i] > 0)
        v[n++] = r->trials[0][i] / r->trials[1][i];
  } else {
    int w = impl == ZLB_CMP_BASELINE ? 0 : 1;
    for (int i = 0; i < r->ntrials[w]; i++)
      v[n++] = r->trials[w][i];
  }
  if (n < 2)
    return NAN;
  lo = hi = v[0];
  for (int i = 1; i < n; i++) {
    lo = fmin(lo, v[i]);
    hi = fmax(hi, v[i]);
  }
  med = zlb_median(v, (size_t)n);
  return med > 0 ? (hi - lo) / med : NAN;
}

static int verdict_rank(zlb_cmpv_t v) {
  static const int rank[] = {3, 2, 0, 1, 4}; /* slower, noisy, faster, same, n/a */
  return rank[v];
}

static int pair_cmp(const void *p, const void *q) {
  const zlb_cmp_pair_t *x = p, *y = q;
  int kx = x->a && x->b ? 0 : x->a ? 1 : 2, ky = y->a && y->b ? 0 : y->a ? 1 : 2;
  const zlb_res_row_t *rx = x->a ? x->a : x->b, *ry = y->a ? y->a : y->b;
  int c;
  if (kx != ky)
    return kx - ky;
  if (!kx) {
    if (verdict_rank(x->st.verdict) != verdict_rank(y->st.verdict))
      return verdict_rank(x->st.verdict) - verdict_rank(y->st.verdict);
    if (x->st.verdict == ZLB_V_SLOWER && x->st.ratio != y->st.ratio)
      return x->st.ratio > y->st.ratio ? -1 : 1;
  }
  if ((c = strcmp(rx->op, ry->op)) || (c = strcmp(rx->dtype, ry->dtype)))
    return c;
  return rx < ry ? -1 : rx > ry;
}

static void add_mean(zlb_cmp_t *c, int k, const char *key, double lr) {
  for (size_t i = 0; i < c->nmeans[k]; i++)
    if (!strcmp(c->means[k][i].key, key)) {
      c->means[k][i].gmean += lr;
      c->means[k][i].n++;
      return;
    }
  c->means[k] = zlb_xrealloc(c->means[k], (c->nmeans[k] + 1) * sizeof(zlb_cmp_mean_t));
  zlb_strlcpy(c->means[k][c->nmeans[k]].key, key, sizeof(c->means[k][0].key));
  c->means[k][c->nmeans[k]].gmean = lr;
  c->means[k][c->nmeans[k]].n = 1;
  c->nmeans[k]++;
}

static int mean_cmp(const void *p, const void *q) {
  return strcmp(((const zlb_cmp_mean_t *)p)->key, ((const zlb_cmp_mean_t *)q)->key);
}

void zlb_cmp_run(zlb_cmp_t *c, const zlb_res_set_t *a, const zlb_res_set_t *b,
                 zlb_cmp_impl_t impl, const zlb_cmp_params_t *p) {
  keyed_t *kb = zlb_xmalloc((b->n ? b->n : 1) * sizeof(*kb));
  char *used = zlb_xcalloc(b->n ? b->n : 1, 1);
  double lsum = 0;
  size_t ln = 0;

  memset(c, 0, sizeof(*c));
  c->impl = impl;
  c->params = *p;
  c->pairs = zlb_xcalloc(a->n + b->n + 1, sizeof(*c->pairs));
  for (size_t i = 0; i < b->n; i++)
    kb[i] = (keyed_t){&b->rows[i], impl_of(&b->rows[i], impl)};
  qsort(kb, b->n, sizeof(*kb), keyed_cmp);
  for (size_t i = 0; i < a->n; i++) {
    const zlb_res_row_t *ra = &a->rows[i];
    const char *ia = impl_of(ra, impl);
    zlb_cmp_pair_t *pr = &c->pairs[c->n++];
    size_t lo = 0, hi = b->n;
    pr->a = ra;
    pr->a_ms = pr->b_ms = NAN;
    /* first unused B row with the same key */
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (key_cmp(kb[mid].r, kb[mid].impl, ra, ia) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (; lo < b->n && !key_cmp(kb[lo].r, kb[lo].impl, ra, ia); lo++) {
      size_t bi = (size_t)(kb[lo].r - b->rows);
      if (!used[bi]) {
        used[bi] = 1;
        pr->b = kb[lo].r;
        break;
      }
    }
    if (!pr->b) {
      memset(&pr->st, 0, sizeof(pr->st));
      pr->st.verdict = ZLB_V_NA;
      pr->st.ratio = pr->st.lo = pr->st.hi = pr->st.p = pr->st.spread = NAN;
      continue;
    }
    c->nmatched++;
    /* caliber of the two runs */
    if (ra->cal < a->ncal && pr->b->cal < b->ncal) {
      const zlb_caliber_t *ca = &a->cals[ra->cal], *cb = &b->cals[pr->b->cal];
      for (int f = 0; f < ZLB_CAL_COUNT; f++)
        if (strcmp(ca->v[f], cb->v[f]) && !(c->caliber_diff & (1u << f))) {
          c->caliber_diff |= 1u << f;
          zlb_strlcpy(c->caliber_a[f], ca->v[f], sizeof(c->caliber_a[f]));
          zlb_strlcpy(c->caliber_b[f], cb->v[f], sizeof(c->caliber_b[f]));
        }
    }
    if (strcmp(ra->status, "SUCCESS") || strcmp(pr->b->status, "SUCCESS")) {
      memset(&pr->st, 0, sizeof(pr->st));
      pr->st.verdict = ZLB_V_NA;
      pr->st.ratio = pr->st.lo = pr->st.hi = pr->st.p = pr->st.spread = NAN;
      snprintf(pr->st.why, sizeof(pr->st.why), "%s in %s",
               strcmp(ra->status, "SUCCESS") ? ra->status : pr->b->status,
               strcmp(ra->status, "SUCCESS") ? "A" : "B");
      pr->a_ms = pr->b_ms = NAN;
    } else {
      size_t na, nb;
      double *va = values(ra, impl, &na, &pr->a_ms), *vb = values(pr->b, impl, &nb, &pr->b_ms);
      zlb_cmp_verdict(va, na, vb, nb, p, &pr->st);
      free(va);
      free(vb);
      /* Trials (--trials) put each measurement at another place in device
       * memory: a change no larger than the spread of one side's trials is
       * where the data happened to lie, not the code. */
      if (pr->st.verdict == ZLB_V_SLOWER || pr->st.verdict == ZLB_V_FASTER) {
        double spread = fmax(trial_spread(ra, impl), trial_spread(pr->b, impl));
        if (isfinite(spread) && fabs(pr->st.ratio - 1) <= spread) {
          pr->st.verdict = ZLB_V_NOISY;
          snprintf(pr->st.why, sizeof(pr->st.why),
                   "change %.1f%% within the trials' spread %.1f%%",
                   100 * fabs(pr->st.ratio - 1), 100 * spread);
        }
      }
      /* A side measured while the GPU limited its clocks (the row's marker
       * says throttled(...)) times a different machine state: a change
       * counts there only beyond what throttling alone has been seen to
       * do (throttled_threshold). */
      if ((pr->st.verdict == ZLB_V_SLOWER || pr->st.verdict == ZLB_V_FASTER) &&
          (strstr(ra->marker, "throttled(") || strstr(pr->b->marker, "throttled(")) &&
          fabs(pr->st.ratio - 1) <= p->throttled_threshold) {
        pr->st.verdict = ZLB_V_NOISY;
        snprintf(pr->st.why, sizeof(pr->st.why), "throttled clocks in %s, change within %.0f%%",
                 strstr(ra->marker, "throttled(") && strstr(pr->b->marker, "throttled(")
                     ? "A and B"
                 : strstr(ra->marker, "throttled(") ? "A"
                                                    : "B",
                 100 * p->throttled_threshold);
      }
    }
    c->count[pr->st.verdict]++;
    if (pr->st.verdict != ZLB_V_NA && isfinite(pr->st.ratio) && pr->st.ratio > 0) {
      double lr = log(pr->st.ratio);
      add_mean(c, 0, ra->op, lr);
      add_mean(c, 1, *ra->family ? ra->family : "-", lr);
      add_mean(c, 2, ra->dtype, lr);
      lsum += lr;
      ln++;
    }
  }
  for (size_t i = 0; i < b->n; i++)
    if (!used[i]) {
      zlb_cmp_pair_t *pr = &c->pairs[c->n++];
      pr->b = &b->rows[i];
      pr->st.verdict = ZLB_V_NA;
      pr->st.ratio = pr->st.lo = pr->st.hi = pr->st.p = pr->st.spread = NAN;
      pr->a_ms = pr->b_ms = NAN;
    }
  for (int k = 0; k < 3; k++) {
    for (size_t i = 0; i < c->nmeans[k]; i++)
      c->means[k][i].gmean = exp(c->means[k][i].gmean / (double)c->means[k][i].n);
    if (c->nmeans[k])
      qsort(c->means[k], c->nmeans[k], sizeof(zlb_cmp_mean_t), mean_cmp);
  }
  c->gmean = ln ? exp(lsum / (double)ln) : NAN;
  qsort(c->pairs, c->n, sizeof(*c->pairs), pair_cmp);
  free(kb);
  free(used);
}

void zlb_cmp_release(zlb_cmp_t *c) {
  free(c->pairs);
  for (int k = 0; k < 3; k++)
    free(c->means[k]);
  memset(c, 0, sizeof(*c));
}
