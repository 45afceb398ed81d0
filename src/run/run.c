/* zlb_run(): one operator in one process, from library loading to the end
 * banner. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

void zlb_run_opts_init(zlb_run_opts_t *o) {
  memset(o, 0, sizeof(*o));
  o->timer = ZLB_TIMER_AUTO;
  zlb_timing_opts_default(&o->timing);
  o->seed = 0x5eed;
  o->trials = 1;
}

/* ---- the env operators see -------------------------------------------------- */

static int env_alloc(zlb_env_t *env, size_t bytes, void **ptr) {
  zlb__run_t *r = env->harness;
  zlb_error_t e = ZLB_ERROR_INIT;
  int rc = r->b->v->mem_alloc(r->b, bytes, ptr, &e);
  if (rc)
    snprintf(env->errbuf, env->errlen, "%s", e.msg);
  return rc;
}

static void env_free(zlb_env_t *env, void *ptr) {
  zlb__run_t *r = env->harness;
  if (ptr)
    r->b->v->mem_free(r->b, ptr);
}

static int env_upload(zlb_env_t *env, void *dst, const void *src, size_t bytes) {
  zlb__run_t *r = env->harness;
  zlb_error_t e = ZLB_ERROR_INIT;
  /* Landed before the operator's next launch on the run's stream (see
   * fill_inputs in case.c: the copy is not ordered with that stream). */
  int rc = r->b->v->memcpy_htod(r->b, dst, src, bytes, &e);
  if (!rc)
    rc = r->b->v->sync(r->b, &e);
  if (rc)
    snprintf(env->errbuf, env->errlen, "%s", e.msg);
  return rc;
}

static int env_download(zlb_env_t *env, void *dst, const void *src, size_t bytes) {
  zlb__run_t *r = env->harness;
  zlb_error_t e = ZLB_ERROR_INIT;
  /* After the work queued on the run's stream, which the copy does not
   * wait for by itself. */
  int rc = r->b->v->sync(r->b, &e);
  if (!rc)
    rc = r->b->v->memcpy_dtoh(r->b, dst, src, bytes, &e);
  if (rc)
    snprintf(env->errbuf, env->errlen, "%s", e.msg);
  return rc;
}

static void env_init(zlb__run_t *r) {
  zlb_env_t *env = &r->env;
  memset(env, 0, sizeof(*env));
  env->abi_version = ZLB_OP_ABI_VERSION;
  env->backend = r->b->desc->name;
  env->device = r->b->device;
  env->autotune = r->o->autotune;
  r->rng.seed = r->o->seed;
  r->rng.offset = 0;
  env->rng = &r->rng;
  env->sm_count = r->b->info.sm_count;
  env->cc_major = r->b->info.cc_major;
  env->cc_minor = r->b->info.cc_minor;
  env->l2_bytes = r->b->info.l2_bytes;
  env->alloc = env_alloc;
  env->free = env_free;
  env->upload = env_upload;
  env->download = env_download;
  env->errbuf = r->errbuf;
  env->errlen = sizeof(r->errbuf);
  env->harness = r;
}

/* ---- setup steps -------------------------------------------------------------- */

/* The backend has a tracer, but it may not load here (roctracer missing,
 * or of a version whose records are not trusted): say so before any case
 * runs, as for a backend that is unavailable. */
static int trace_ready(zlb_backend_t *b, const char *what, zlb_error_t *err) {
  zlb_error_t why = ZLB_ERROR_INIT;
  int rc;
  if (!b->v->trace_available || !(rc = b->v->trace_available(b, &why)))
    return 0;
  return zlb_error_set(err, rc, "%s: %s", what, why.msg);
}

static int load_libraries(zlb__run_t *r, zlb_error_t *err) {
  int rc;
  if (r->o->libs)
    for (size_t i = 0; i < r->o->libs->n; i++)
      if ((rc = zlb_ops_load_library(&r->ops, r->o->libs->v[i], err)))
        return rc;
  return zlb_ops_load_env(&r->ops, err);
}

static int resolve_shapes(zlb__run_t *r, zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int host = !strcmp(r->b->desc->name, "host"), rc;
  if (r->o->shape_file) {
    zlb_strbuf_addstr(&p, r->o->shape_file);
  } else {
    if ((rc = zlb_assets_dir(&p, err)))
      goto out;
    zlb_strbuf_addstr(&p, host ? "/shapes_host.yaml" : "/shapes.yaml");
    if (!zlb_path_exists(p.buf))
      zlb_strbuf_reset(&p);
  }
  zlb_strlcpy(r->shape_file, p.len ? p.buf : "built-in", sizeof(r->shape_file));
  rc = zlb_shapes_resolve(p.len ? p.buf : NULL, r->op->name, r->op->family, r->o->level,
                          host, &r->shapes, err);
out:
  zlb_strbuf_release(&p);
  return rc;
}

static int open_outputs(zlb__run_t *r, zlb_error_t *err) {
  int rc;
  if (!r->o->out_dir)
    return zlb_error_set(err, ZLB_EINVAL, "no output folder given");
  if ((rc = zlb_check_writable_dir(r->o->out_dir, err)))
    return rc;
  zlb_path_join(&r->log_path, r->o->out_dir, "run.log");
  zlb_path_join(&r->identity_path, r->o->out_dir, "run_identity.json");
  r->log = fopen(r->log_path.buf, "w");
  if (!r->log)
    return zlb_error_set(err, ZLB_EIO, "cannot write '%s'", r->log_path.buf);
  zlb_strlcpy(r->res->log_path, r->log_path.buf, sizeof(r->res->log_path));
  return 0;
}

/* ---- the run ------------------------------------------------------------------- */

/* The operator's once-per-process set-up, timed; a failure is reported
 * in the banner and the cases go on (each fails or succeeds on its own). */
static void op_setup(zlb__run_t *r) {
  double t0;
  int rc;
  r->setup_ms = NAN;
  if (!r->op->setup)
    return;
  r->errbuf[0] = '\0';
  t0 = zlb_now_s();
  rc = r->op->setup(&r->env, r->dtypes);
  r->setup_ms = (zlb_now_s() - t0) * 1e3;
  if (rc)
    snprintf(r->setup_error, sizeof(r->setup_error), "%s (%s%d)",
             r->errbuf[0] ? r->errbuf : "no message", rc > 0 ? "vendor code " : "",
             rc);
}

static int measure(zlb__run_t *r, zlb_error_t *stop) {
  zlb__row_t *rows = NULL;
  size_t n = r->shapes.n;
  char legend[256];
  int rc = 0;

  rows = zlb_xcalloc(n ? n : 1, sizeof(*rows));
  for (int d = 0; d < ZLB_DT_COUNT && !stop->code; d++) {
    zlb_dtype_t dt = (zlb_dtype_t)d;
    if (!(r->dtypes & ZLB_DT_BIT(d)))
      continue;
    /* Describe every case first: inputs common to all rows fold into one
     * legend line above the table. */
    for (size_t i = 0; i < n; i++) {
      memset(&rows[i], 0, sizeof(rows[i]));
      zlb__describe_case(r, dt, &r->shapes.v[i], &rows[i]);
    }
    zlb__fold_details(rows, n, legend, sizeof(legend));
    zlb__table_begin(r, dt, legend);
    if (r->json.out.len) {
      zlb_jw_object_begin(&r->json);
      zlb_jw_key_string(&r->json, "dtype", zlb_dtype_name(dt));
      zlb_jw_key_array(&r->json, "rows");
    }
    for (size_t i = 0; i < n; i++) {
      char detail[256];
      if (r->o->interrupted && *r->o->interrupted) {
        r->res->interrupted = 1;
        zlb_strlcpy(r->res->stop_reason, "interrupted", sizeof(r->res->stop_reason));
        break;
      }
      zlb_strlcpy(detail, rows[i].detail, sizeof(detail));
      zlb__run_case(r, dt, &r->shapes.v[i], &rows[i], stop);
      zlb_strlcpy(rows[i].detail, detail, sizeof(rows[i].detail));
      r->res->rows++;
      if (rows[i].ok)
        r->res->ok++;
      else
        r->res->failed++;
      zlb__table_row(r, &rows[i]);
      if (r->o->verbose)
        zlb__table_phases(r, &rows[i]);
      if (r->json.out.len)
        zlb__json_row(r, dt, &rows[i]);
      zlb_measurement_release(&rows[i].m[0]);
      zlb_measurement_release(&rows[i].m[1]);
      if (stop->code)
        break;
    }
    if (r->json.out.len) {
      zlb_jw_array_end(&r->json);
      zlb_jw_object_end(&r->json);
    }
    if (r->res->interrupted)
      break;
  }
  free(rows);
  return rc;
}

int zlb_run(const zlb_run_opts_t *o, zlb_run_result_t *res, zlb_error_t *err) {
  zlb__run_t r;
  zlb_error_t stop = ZLB_ERROR_INIT;
  int rc;

  memset(&r, 0, sizeof(r));
  memset(res, 0, sizeof(*res));
  r.o = o;
  r.res = res;
  r.t0 = zlb_now_s();
  zlb_strbuf_init(&r.log_path);
  zlb_strbuf_init(&r.identity_path);
  zlb_iso8601_now(r.started, sizeof(r.started));

  if ((rc = load_libraries(&r, err)))
    goto out;
  if ((rc = zlb_backend_open_name(o->backend, &r.b, err)))
    goto out;
  if ((rc = zlb_backend_select_device(r.b, o->device, err)))
    goto out;
  if (!zlb_ops_find(&r.ops, o->op, r.b->desc->name)) {
    zlb_error_t e2 = ZLB_ERROR_INIT;
    int brc = zlb_ops_load_builtin(&r.ops, r.b->desc->name, &e2);
    if (brc && brc != ZLB_ENOTFOUND) {
      *err = e2;
      rc = brc;
      goto out;
    }
  }
  r.entry = zlb_ops_find(&r.ops, o->op, r.b->desc->name);
  if (!r.entry) {
    rc = zlb_ops_unknown(&r.ops, o->op, r.b->desc->name, err);
    goto out;
  }
  r.op = r.entry->op;
  env_init(&r);
  if ((rc = zlb__resolve_dtypes(o, r.op, &r.dtypes, err)) || (rc = resolve_shapes(&r, err)) ||
      (rc = zlb__resolve_deny(o, r.op->name, &r.deny, r.deny_source,
                              sizeof(r.deny_source), err)))
    goto out;
  if (o->trials < 0 || o->trials > ZLB_RUN_MAX_TRIALS) {
    rc = zlb_error_set(err, ZLB_EINVAL, "trials must be from 1 to %d, not %d",
                       ZLB_RUN_MAX_TRIALS, o->trials);
    goto out;
  }
  r.timing = o->timing;
  r.timing.flush_bytes = zlb__direct_flush_bytes(o, r.b->desc);
  if ((rc = zlb__resolve_timer(o, r.b->desc, &r.timer, err)) ||
      (r.timer == ZLB_TIMER_TRACE && (rc = trace_ready(r.b, "--timer trace", err))) ||
      /* --queue-calibrate: the queue timer runs, and the backend has what
       * calibrating takes, before any case runs. */
      (rc = zlb__resolve_calibration(o, r.b->desc, r.timer, err)) ||
      (rc = zlb_run_check_flush(o, err)) || (rc = zlb__resolve_flush(o, r.b->desc, &r.b->info, err)) ||
      (r.timing.queue_calibrate && (rc = trace_ready(r.b, "queue calibration", err))) ||
      (r.timing.graph_calibrate && (rc = trace_ready(r.b, "graph calibration", err))))
    goto out;
  if ((rc = open_outputs(&r, err)))
    goto out;
  if ((rc = r.b->v->stream_create(r.b, &r.stream, err)) ||
      (rc = zlb_flush_init(&r.flush, r.b, r.timing.flush_bytes, err)))
    goto out;
  /* --l2 cold: the graph and queue timers' own flush buffer. */
  if (r.timing.l2_cold && (r.timer == ZLB_TIMER_GRAPH || r.timer == ZLB_TIMER_QUEUE)) {
    if ((rc = zlb_flush_init(&r.l2flush, r.b,
                                 zlb__l2_cold_bytes(o->timing.flush_bytes, r.b->desc, &r.b->info),
                                 err)))
      goto out;
    r.timing.l2_flush = &r.l2flush;
  }
  zlb__peaks_resolve(&r);
  op_setup(&r);
  if (r.b->v->clocks) {
    zlb_error_t ce = ZLB_ERROR_INIT;
    r.b->v->clocks(r.b, &r.clocks_start, &ce);
  }
  if ((rc = zlb__write_identity(&r, 0, err)))
    goto out;
  /* The rows with their samples always go next to run.log (results.json),
   * so any two result folders can be compared later (zlbench compare). */
  {
    zlb_jw_init(&r.json, 1);
    zlb_jw_object_begin(&r.json);
    zlb_jw_key_string(&r.json, "schema", "zlbench.results/1");
    zlb_jw_key_string(&r.json, "operator", r.op->name);
    zlb_jw_key_string(&r.json, "family", r.op->family);
    zlb_jw_key_string(&r.json, "backend", r.b->desc->name);
    zlb_jw_key_string(&r.json, "timer", zlb__run_timer_name(&r));
    zlb_jw_key_double(&r.json, "setup_ms", r.setup_ms);
    zlb_jw_key_string(&r.json, "setup_error", r.setup_error[0] ? r.setup_error : NULL);
    zlb_jw_key_array(&r.json, "tables");
  }

  zlb__banner_start(&r);
  measure(&r, &stop);
  res->seconds = zlb_now_s() - r.t0;
  if (stop.code)
    zlb_strlcpy(res->stop_reason, stop.msg, sizeof(res->stop_reason));
  if (stop.code == ZLB_EFATAL)
    res->fatal = 1;
  if (stop.code == ZLB_EPOISONED)
    res->poisoned = 1;
  zlb__banner_end(&r);

  rc = zlb__write_identity(&r, 1, err);
  if (!rc) {
    zlb_strbuf_t rp = ZLB_STRBUF_INIT;
    zlb_jw_array_end(&r.json);
    zlb_jw_object_end(&r.json);
    zlb_path_join(&rp, o->out_dir, "results.json");
    rc = zlb_write_file_atomic(rp.buf, r.json.out.buf, r.json.out.len, err);
    zlb_strbuf_release(&rp);
    if (!rc && o->json_path)
      rc = zlb_write_user_file(o->json_path, r.json.out.buf, r.json.out.len, err);
  }
  if (!rc && stop.code) {
    *err = stop;
    rc = stop.code;
  } else if (!rc && res->interrupted) {
    rc = zlb_error_set(err, ZLB_EINTR, "interrupted after %d rows", res->rows);
  }

out:
  if (r.b && !res->fatal && !res->poisoned) {
    zlb_flush_release(&r.flush, r.b);
    zlb_flush_release(&r.l2flush, r.b);
    if (r.stream)
      r.b->v->stream_destroy(r.b, r.stream);
  }
  if (r.log)
    fclose(r.log);
  zlb_jw_release(&r.json);
  zlb_shape_list_release(&r.shapes);
  zlb__hostbuf_release(&r);
  if (r.b && !res->fatal && !res->poisoned)
    zlb__pools_release(&r);
  /* After a device fault the context is unusable: closing it may hang. */
  if (!res->fatal && !res->poisoned)
    zlb_backend_close(r.b);
  zlb_op_set_release(&r.ops);
  zlb_strbuf_release(&r.log_path);
  zlb_strbuf_release(&r.identity_path);
  return rc;
}

/* ---- for zlbench ab (ab.c) ---------------------------------------------------- */

void zlb__run_env_init(zlb__run_t *r) { env_init(r); }

int zlb__run_resolve_shapes(zlb__run_t *r, zlb_error_t *err) { return resolve_shapes(r, err); }
