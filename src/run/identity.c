/* run_identity.json: everything that makes two runs the same caliber or
 * not, written at the start (so a crash leaves it) and again at the end;
 * and the per-row records of the --json results. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"
#include "zlbench/identity.h"

/* ZL_CHILDREN_PER_DEVICE: how many processes a batch runs at a time on
 * this device (1 when unset or not a number in 1..64). */
static long zlb__children_per_device(void) {
  const char *v = getenv("ZL_CHILDREN_PER_DEVICE");
  long n;
  if (!v || zlb_parse_long(v, &n) || n < 1 || n > 64)
    return 1;
  return n;
}

static void device_json(zlb_jw_t *jw, const zlb_backend_t *b) {
  const zlb_device_info_t *d = &b->info;
  char caps[128];
  zlb_caps_format(b->desc->caps, caps, sizeof(caps));
  zlb_identity_backend_begin(jw, b->desc->name, b->desc->visibility_env);
  zlb_jw_key_string(jw, "vendor", b->desc->vendor);
  zlb_jw_key_string(jw, "capabilities", caps);
  if (b->desc->visibility_env)
    zlb_jw_key_string(jw, "visibility_value", getenv(b->desc->visibility_env));
  zlb_jw_object_end(jw);
  zlb_jw_key_object(jw, "device");
  zlb_jw_key_int(jw, "index", d->index);
  zlb_jw_key_string(jw, "name", d->name);
  zlb_jw_key_string(jw, "uuid", d->uuid);
  zlb_jw_key_string(jw, "pci_bus_id", d->pci_bus_id);
  zlb_jw_key_string(jw, "driver_version", d->driver_version);
  zlb_jw_key_string(jw, "runtime_version", d->runtime_version);
  zlb_jw_key_int(jw, "sm_count", d->sm_count);
  zlb_jw_key_int(jw, "cc_major", d->cc_major);
  zlb_jw_key_int(jw, "cc_minor", d->cc_minor);
  zlb_jw_key_int(jw, "memory_bytes", (long long)d->mem_bytes);
  zlb_jw_key_int(jw, "l2_bytes", (long long)d->l2_bytes);
  if (d->llc_bytes) /* a last cache beyond the L2 (the host's L3) */
    zlb_jw_key_int(jw, "llc_bytes", (long long)d->llc_bytes);
  zlb_jw_object_end(jw);
}

static void clocks_json(zlb_jw_t *jw, const char *key, const zlb_clocks_t *c) {
  zlb_jw_key_object(jw, key);
  zlb_jw_key_int(jw, "sm_mhz", c->sm_mhz);
  zlb_jw_key_int(jw, "mem_mhz", c->mem_mhz);
  zlb_jw_key_int(jw, "temp_c", c->temp_c);
  zlb_jw_key_int(jw, "power_mw", c->power_mw);
  zlb_jw_key_int(jw, "event_reasons", (long long)c->reasons);
  zlb_jw_key_bool(jw, "throttled", c->throttled);
  zlb_jw_key_string(jw, "why", c->why);
  zlb_jw_object_end(jw);
}

/* The operator library's build id: FNV-1a 64 of the file's bytes, so the
 * history can tell two builds of one library apart ("" when unreadable). */
static void library_build_id(const char *path, char *out, size_t len) {
  unsigned char buf[65536];
  uint64_t h = ZLB_FNV1A64_BASIS;
  size_t n;
  FILE *f = path ? fopen(path, "rb") : NULL;
  out[0] = '\0';
  if (!f)
    return;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
    h = zlb_fnv1a64_add(h, buf, n);
  if (!ferror(f))
    snprintf(out, len, "fnv1a64:%016llx", (unsigned long long)h);
  fclose(f);
}

const char *zlb__timer_label(zlb_timer_kind_t t, int calibrated) {
  return t == ZLB_TIMER_QUEUE && calibrated   ? "queue-cal"
         : t == ZLB_TIMER_GRAPH && calibrated ? "graph-cal"
                                              : zlb_timer_name(t);
}

const char *zlb__measured_timer_name(const zlb_measurement_t *m) {
  return zlb__timer_label(m->timer, m->queue_calibrated || m->graph_calibrated);
}

const char *zlb__run_timer_name(const zlb__run_t *r) {
  return zlb__timer_label(r->timer, r->timing.queue_calibrate || r->timing.graph_calibrate);
}

int zlb__write_identity(zlb__run_t *r, int final, zlb_error_t *err) {
  const zlb_run_opts_t *o = r->o;
  zlb_jw_t jw;
  int rc;

  zlb_jw_init(&jw, 1);
  zlb_identity_head(&jw, "run", o->argc, o->argv);
  device_json(&jw, r->b);
  zlb_jw_key_object(&jw, "operator");
  zlb_jw_key_string(&jw, "name", r->op->name);
  zlb_jw_key_string(&jw, "family", r->op->family);
  zlb_jw_key_string(&jw, "library", r->entry->library);
  {
    char id[64];
    library_build_id(r->entry->library, id, sizeof(id));
    zlb_jw_key_string(&jw, "library_build_id", id[0] ? id : NULL);
  }
  zlb_jw_key_string(&jw, "baseline", r->op->baseline.name);
  zlb_jw_key_string(&jw, "candidate", r->op->candidate.name);
  zlb_jw_key_int(&jw, "candidate_flags", r->op->candidate.flags);
  zlb_jw_object_end(&jw);
  /* The caliber: runs that differ in any of these are not comparable. */
  zlb_jw_key_object(&jw, "caliber");
  zlb_jw_key_string(&jw, "timer_requested", zlb_timer_name(o->timer));
  zlb_jw_key_string(&jw, "timer", zlb__run_timer_name(r));
  zlb_jw_key_int(&jw, "repeat", r->timing.repeat);
  zlb_jw_key_int(&jw, "trials", r->o->trials > 1 ? r->o->trials : 1);
  zlb_jw_key_bool(&jw, "integrity", r->o->integrity != 0);
  if (r->o->integrity)
    zlb_jw_key_string(&jw, "integrity_side_streams",
                      r->b->v->trace_begin && r->b->v->launch_empty
                          ? "checked with the kernel tracer"
                          : "not possible: the backend has no kernel tracer or no empty "
                            "kernel to name the stream");
  zlb_jw_key_string(&jw, "return_mode", zlb_return_mode_name(r->timing.return_mode));
  zlb_jw_key_int(&jw, "children_per_device", zlb__children_per_device());
  zlb_jw_key_array(&jw, "quantiles");
  for (int i = 0; i < r->timing.nquantiles; i++)
    zlb_jw_double(&jw, r->timing.quantiles[i]);
  zlb_jw_array_end(&jw);
  zlb_jw_key_double(&jw, "warmup_ms", r->timing.warmup_ms);
  zlb_jw_key_double(&jw, "rep_ms", r->timing.rep_ms);
  zlb_jw_key_object(&jw, "l2");
  zlb_jw_key_string(&jw, "direct", r->timing.flush_bytes ? "flush" : "none");
  zlb_jw_key_int(&jw, "flush_bytes", (long long)r->timing.flush_bytes);
  zlb_jw_key_string(&jw, "graph", r->l2flush.buf ? "cold" : "warm");
  zlb_jw_key_string(&jw, "queue", r->l2flush.buf ? "cold" : "warm");
  /* --l2 cold: the graph and queue timers' flush buffer (0: warm). */
  zlb_jw_key_int(&jw, "cold_flush_bytes", (long long)r->l2flush.bytes);
  /* The trace timer's calls: after the host waited for their flush, or
   * queued right behind it (--trace-flush). */
  zlb_jw_key_string(&jw, "trace_flush", r->timing.trace_flush_queued ? "queued" : "waited");
  zlb_jw_object_end(&jw);
  /* The requested L2 mode of the graph and queue timers (--l2, ZL_L2). */
  zlb_jw_key_string(&jw, "l2_mode", o->timing.l2_cold ? "cold" : "warm");
  zlb_jw_key_int(&jw, "graph_max_launches", r->timing.graph_max_launches);
  zlb_jw_key_double(&jw, "graph_replay_ms", r->timing.graph_replay_ms);
  zlb_jw_key_int(&jw, "queue_max_launches", r->timing.queue_max_launches);
  zlb_jw_key_double(&jw, "queue_batch_ms", r->timing.queue_batch_ms);
  zlb_jw_key_double(&jw, "queue_timeout_ms", r->timing.queue_timeout_ms);
  zlb_jw_key_bool(&jw, "queue_calibrate", r->timing.queue_calibrate);
  zlb_jw_key_bool(&jw, "graph_calibrate", r->timing.graph_calibrate);
  if (r->cal_n) {
    /* What the calibrated queue or graph timer subtracted, per call (each
     * measurement's own value is in results.json; one of the two runs). */
    zlb_jw_key_object(&jw, r->timing.graph_calibrate ? "graph_calibration"
                                                     : "queue_calibration");
    zlb_jw_key_string(&jw, "method",
                      r->timing.graph_calibrate
                          ? "(untraced event-node pairs - traced kernel time) / K over "
                            "replays of a graph of K (flush; node; empty kernel; node), 9 "
                            "traced and 9 untraced, median, per measurement at its own K"
                          : "(untraced batch time - traced kernel time) / K over batches of "
                            "K empty kernels, 9 traced and 9 untraced, median, per "
                            "measurement at its own K");
    zlb_jw_key_int(&jw, "measurements", r->cal_n);
    zlb_jw_key_double(&jw, "min_ms", r->cal_min_ms);
    zlb_jw_key_double(&jw, "max_ms", r->cal_max_ms);
    zlb_jw_object_end(&jw);
  }
  zlb_jw_key_string(&jw, "stop", zlb_stop_name(r->timing.stop));
  if (r->timing.stop == ZLB_STOP_NOISE) {
    zlb_jw_key_double(&jw, "max_noise", r->timing.max_noise);
    zlb_jw_key_int(&jw, "min_samples", r->timing.min_samples);
    zlb_jw_key_double(&jw, "min_time_ms", r->timing.min_time_ms);
    zlb_jw_key_double(&jw, "timeout_ms", r->timing.timeout_ms);
  }
  zlb_jw_key_string(&jw, "autotune", o->autotune ? "on" : "off");
  zlb_jw_key_bool(&jw, "capture_denied", r->deny);
  zlb_jw_key_string(&jw, "capture_deny_source", r->deny ? r->deny_source : NULL);
  zlb_jw_object_end(&jw);
  /* An array of names, as in a batch's identity. */
  zlb_jw_key_array(&jw, "dtypes");
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if (r->dtypes & ZLB_DT_BIT(d))
      zlb_jw_string(&jw, zlb_dtype_name((zlb_dtype_t)d));
  zlb_jw_array_end(&jw);
  zlb_jw_key_object(&jw, "shapes");
  zlb_jw_key_string(&jw, "file", r->shape_file);
  zlb_jw_key_string(&jw, "source", r->shapes.source);
  zlb_jw_key_string(&jw, "key", r->shapes.key);
  zlb_jw_key_string(&jw, "level", o->level ? "comprehensive" : "core");
  zlb_jw_key_int(&jw, "count", (long long)r->shapes.n);
  zlb_jw_object_end(&jw);
  zlb_jw_key_int(&jw, "seed", (long long)o->seed);
  zlb_jw_key_object(&jw, "peaks");
  zlb_jw_key_double(&jw, "bandwidth_gbps", r->peaks.gbps);
  zlb_jw_key_double(&jw, "cache_bandwidth_gbps", r->peaks.cache_gbps);
  zlb_jw_key_double(&jw, "cache_bytes", (double)zlb__last_cache_bytes(&r->b->info));
  zlb_jw_key_object(&jw, "tflops");
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if (r->peaks.tflops[d] > 0)
      zlb_jw_key_double(&jw, zlb_dtype_name((zlb_dtype_t)d), r->peaks.tflops[d]);
  zlb_jw_object_end(&jw);
  zlb_jw_key_string(&jw, "measured", r->peaks.measured);
  zlb_jw_key_string(&jw, "source", r->peaks.source);
  zlb_jw_object_end(&jw);
  if (r->b->v->clocks)
    clocks_json(&jw, "clocks_start", &r->clocks_start);
  zlb_identity_times(&jw, r->started, final);
  if (final) {
    if (r->b->v->clocks && !r->res->fatal) {
      zlb_clocks_t c;
      zlb_error_t ce = ZLB_ERROR_INIT;
      if (!r->b->v->clocks(r->b, &c, &ce))
        clocks_json(&jw, "clocks_end", &c);
    }
    zlb_jw_key_object(&jw, "result");
    zlb_jw_key_int(&jw, "rows", r->res->rows);
    zlb_jw_key_int(&jw, "success", r->res->ok);
    zlb_jw_key_int(&jw, "failed", r->res->failed);
    zlb_jw_key_bool(&jw, "fatal", r->res->fatal);
    zlb_jw_key_bool(&jw, "poisoned", r->res->poisoned);
    zlb_jw_key_bool(&jw, "interrupted", r->res->interrupted);
    zlb_jw_key_string(&jw, "stop_reason", r->res->stop_reason[0] ? r->res->stop_reason : NULL);
    zlb_jw_key_double(&jw, "seconds", r->res->seconds);
    zlb_jw_object_end(&jw);
  }
  zlb_jw_object_end(&jw);
  rc = zlb_write_file_atomic(r->identity_path.buf, jw.out.buf, jw.out.len, err);
  zlb_jw_release(&jw);
  return rc;
}

static void measurement_json(zlb_jw_t *jw, const char *key, const zlb__row_t *row, int w,
                             const char *impl, size_t r_flush_bytes) {
  const zlb_measurement_t *m = &row->m[w];
  zlb_jw_key_object(jw, key);
  zlb_jw_key_string(jw, "impl", impl);
  zlb_jw_key_string(jw, "timer", m->nsamples ? zlb__measured_timer_name(m) : NULL);
  zlb_jw_key_double(jw, "ms", m->nsamples ? m->value_ms : NAN);
  /* The host's time in one call (dispatch, launch), µs; null unmeasured. */
  zlb_jw_key_double(jw, "host_us",
                    m->nsamples && isfinite(m->host_ms) ? m->host_ms * 1e3 : NAN);
  zlb_jw_key_double(jw, "estimate_ms", m->estimate_ms);
  zlb_jw_key_int(jw, "graph_launches", m->graph_launches);
  zlb_jw_key_int(jw, "replays", m->replays);
  zlb_jw_key_int(jw, "queue_launches", m->queue_launches);
  zlb_jw_key_int(jw, "batches", m->batches);
  zlb_jw_key_int(jw, "invalid_batches", m->invalid_batches);
  if (m->queue_calibrated)
    zlb_jw_key_double(jw, "queue_calibration_ms", m->queue_calibration_ms);
  /* Cold and calibrated: each call between its own event pair, its flush
   * outside it (docs/timing.md "Cold L2"). */
  if (m->queue_call_events)
    zlb_jw_key_bool(jw, "queue_call_events", 1);
  /* Trace timer, --trace-flush queued: each call queued behind its flush. */
  if (m->trace_flush_queued)
    zlb_jw_key_string(jw, "trace_flush", "queued");
  /* Calibrated cold graph: each call between its own event nodes. */
  if (m->graph_calibrated) {
    zlb_jw_key_double(jw, "graph_calibration_ms", m->graph_calibration_ms);
    zlb_jw_key_bool(jw, "graph_call_events", 1);
  }
  /* Either calibration as its traced timings alone would have made it:
   * what tracing adds to a launch is their difference. */
  if (m->queue_calibrated || m->graph_calibrated)
    zlb_jw_key_double(jw, "calibration_traced_ms", m->calibration_traced_ms);
  /* The L2 state each call ran in: the graph and queue timers' --l2 mode,
   * the direct and trace timers' flush; cold graph/queue also say what
   * one flush took (subtracted per call; by the cold calibrated queue
   * timer recorded only) and the flush buffer's size. */
  if (m->nsamples) {
    int cold = m->l2_cold || ((m->timer == ZLB_TIMER_DIRECT || m->timer == ZLB_TIMER_TRACE) &&
                              r_flush_bytes > 0);
    zlb_jw_key_string(jw, "l2", cold ? "cold" : "warm");
  }
  if (m->l2_cold) {
    zlb_jw_key_double(jw, "l2_flush_ms", m->l2_flush_ms);
    zlb_jw_key_int(jw, "l2_flush_bytes", (long long)m->l2_flush_bytes);
  }
  zlb_jw_key_int(jw, "sample_count", (long long)m->nsamples);
  zlb_jw_key_double(jw, "noise", m->noise);
  zlb_jw_key_double(jw, "wall_s", m->wall_s);
  if (m->nquantiles) {
    zlb_jw_key_array(jw, "quantiles");
    for (int i = 0; i < m->nquantiles; i++)
      zlb_jw_double(jw, m->quantiles[i]);
    zlb_jw_array_end(jw);
  }
  zlb_jw_key_array(jw, "calls");
  for (int i = 0; i < m->ncalls; i++)
    zlb_jw_double(jw, m->call_values[i]);
  zlb_jw_array_end(jw);
  /* Each trial's value (--trials; one trial: the value itself); a trial
   * without a value (a failed row) has none here. */
  zlb_jw_key_array(jw, "trials");
  for (int i = 0; i < row->ntrials && m->nsamples; i++)
    if (isfinite(row->trial_ms[w][i]))
      zlb_jw_double(jw, row->trial_ms[w][i]);
  zlb_jw_array_end(jw);
  zlb_jw_key_array(jw, "samples");
  for (size_t i = 0; i < m->nsamples; i++)
    zlb_jw_double(jw, m->samples[i]);
  zlb_jw_array_end(jw);
  zlb_jw_key_string(jw, "note", m->note[0] ? m->note : NULL);
  zlb_jw_object_end(jw);
}

void zlb__json_row(zlb__run_t *r, zlb_dtype_t dt, const zlb__row_t *row) {
  zlb_jw_t *jw = &r->json;
  (void)dt;
  zlb_jw_object_begin(jw);
  zlb_jw_key_string(jw, "status", row->ok ? "SUCCESS" : "FAILED");
  zlb_jw_key_string(jw, "shape", row->shape);
  zlb_jw_key_string(jw, "detail", row->full_detail);
  zlb_jw_key_double(jw, "speedup", row->speedup);
  zlb_jw_key_double(jw, "gbps", row->gbps);
  zlb_jw_key_double(jw, "tflops", row->tflops);
  zlb_jw_key_double(jw, "bytes", row->bytes);
  zlb_jw_key_double(jw, "flops", row->flops);
  zlb_jw_key_string(jw, "timer", row->timer);
  zlb_jw_key_string(jw, "marker", row->marker);
  zlb_jw_key_string(jw, "config", row->config[0] ? row->config : NULL);
  zlb_jw_key_string(jw, "error", row->ok ? NULL : row->note);
  zlb_jw_key_double(jw, "pct_peak", row->pct_peak);
  zlb_jw_key_string(jw, "ceiling", row->ok && row->ceiling ? zlb__ceiling_name(row->ceiling)
                                                            : NULL);
  zlb_jw_key_double(jw, "noise", row->noise);
  if (row->have_clocks & 1)
    clocks_json(jw, "clocks_before", &row->clk[0]);
  if (row->have_clocks & 2)
    clocks_json(jw, "clocks_after", &row->clk[1]);
  measurement_json(jw, "baseline", row, 0, r->op->baseline.name, r->flush.bytes);
  measurement_json(jw, "candidate", row, 1, r->op->candidate.name, r->flush.bytes);
  zlb_jw_key_object(jw, "phases_ms");
  for (int p = 0; p < ZLB__PH_COUNT; p++)
    zlb_jw_key_double(jw, zlb__phase_name((zlb__phase_t)p), row->phase_ms[p]);
  zlb_jw_object_end(jw);
  zlb_jw_key_double(jw, "wall_ms", row->wall_ms);
  zlb_jw_key_double(jw, "first_calls_ms", row->first_calls_ms);
  zlb_jw_key_string(jw, "check", row->check_where);
  if (r->o->integrity) /* --integrity: what was checked, what was not and why */
    zlb_jw_key_string(jw, "integrity", row->integrity);
  zlb_jw_object_end(jw);
}
