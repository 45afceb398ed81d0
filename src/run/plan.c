/* The stage plan a backend's capabilities produce, for `zlbench plan`: the
 * timer, dtypes and capture denial come from the run's own resolution
 * (resolve.c), so the plan cannot tell a different story from the run. */
#include <stdio.h>
#include <string.h>

#include "run_int.h"

/* "name (vendor)", and why the backend cannot open here, on one line: a
 * vendor message may hold newlines. */
static void backend_line(zlb_strbuf_t *out, const zlb_backend_desc_t *d, const zlb_backend_t *b,
                         const zlb_error_t *probe) {
  zlb_strbuf_addf(out, "backend:      %s (%s)", d->name, d->vendor);
  if (!b) {
    char msg[sizeof(probe->msg)];
    size_t n;
    zlb_strlcpy(msg, probe->msg[0] ? probe->msg : zlb_strerror(probe->code), sizeof(msg));
    for (char *p = msg; *p; p++)
      if (*p == '\n' || *p == '\r')
        *p = ' ';
    n = strlen(msg);
    while (n && msg[n - 1] == ' ')
      msg[--n] = '\0';
    zlb_strbuf_addf(out, "  [unavailable here: %s]", msg);
  }
  zlb_strbuf_addstr(out, "\n");
}

int zlb_run_plan(const zlb_run_opts_t *o, zlb_strbuf_t *out, zlb_error_t *err) {
  const zlb_backend_desc_t *d = NULL;
  zlb_backend_t *b = NULL;
  zlb_op_set_t ops = ZLB_OP_SET_INIT;
  const zlb_op_entry_t *e = NULL;
  zlb_timer_kind_t t;
  zlb_error_t probe = ZLB_ERROR_INIT;
  zlb_strbuf_t dts = ZLB_STRBUF_INIT;
  char caps[128], deny_source[128];
  uint32_t dtypes = 0;
  int rc = 0, denied = 0;

  /* Libraries first, as the run loads them: one may add the backend. */
  if (o->libs)
    for (size_t i = 0; i < o->libs->n && !rc; i++)
      rc = zlb_ops_load_library(&ops, o->libs->v[i], err);
  if (!rc)
    rc = zlb_ops_load_env(&ops, err);
  if (rc)
    goto out;
  if (!o->backend || !*o->backend || !strcmp(o->backend, "auto")) {
    if ((rc = zlb_backend_open_auto(&b, NULL, 0, err)))
      goto out;
    d = b->desc;
  } else if ((rc = zlb_backend_lookup(o->backend, &d, err))) {
    goto out;
  } else if (zlb_backend_open(d, &b, &probe)) {
    b = NULL;
  }
  if ((rc = zlb__resolve_timer(o, d, &t, err)) || (rc = zlb__resolve_calibration(o, d, t, err)) ||
      (rc = zlb_run_check_flush(o, err)) ||
      (rc = zlb__resolve_flush(o, d, b ? &b->info : NULL, err)))
    goto out;
  zlb_caps_format(d->caps, caps, sizeof(caps));
  backend_line(out, d, b, &probe);
  zlb_strbuf_addf(out, "capabilities: %s\n", caps);
  zlb_strbuf_addf(out, "visibility:   %s\n", d->visibility_env ? d->visibility_env : "-");
  zlb_strbuf_addf(out, "timer:        %s (requested %s)\n",
                  zlb__timer_label(t, o->timing.queue_calibrate || o->timing.graph_calibrate),
                  zlb_timer_name(o->timer));
  /* --l2: the graph and queue timers' L2 state; the others always flush. */
  if (t == ZLB_TIMER_GRAPH || t == ZLB_TIMER_QUEUE)
    zlb_strbuf_addf(out, "l2:           %s\n",
                    o->timing.l2_cold
                        ? "cold (--l2 cold: an L2 flush before every call, the flush's own "
                          "time measured alone and subtracted; rows marked l2=cold)"
                        : "warm (--l2 warm, the default: calls back to back, L2 as the last "
                          "call left it)");
  else
    zlb_strbuf_addf(out, "l2:           %s\n",
                    (d->caps & ZLB_CAP_L2_FLUSH) && !o->no_flush
                        ? "cold (this timer flushes the L2 before each sample)"
                        : "warm (no flush)");
  /* The flush's size, where one is flushed: --flush-mib's, else the
   * default each timer takes (the cold timers' depends on the device's
   * L2, which the plan knows only from an opened device). */
  if (t == ZLB_TIMER_GRAPH || t == ZLB_TIMER_QUEUE) {
    if (o->timing.l2_cold && o->timing.flush_bytes)
      zlb_strbuf_addf(out, "flush:        %zu bytes (--flush-mib)\n", o->timing.flush_bytes);
    else if (o->timing.l2_cold && b && b->info.l2_bytes)
      zlb_strbuf_addf(out, "flush:        %zu bytes (twice the device's L2)\n",
                      zlb__l2_cold_bytes(0, d, &b->info));
    else if (o->timing.l2_cold)
      zlb_strbuf_addf(out, "flush:        twice the device's L2 (read when the run opens the "
                           "device; --flush-mib sets it)\n");
  } else if (zlb__direct_flush_bytes(o, d)) {
    zlb_strbuf_addf(out, "flush:        %zu bytes (%s)\n", zlb__direct_flush_bytes(o, d),
                    o->timing.flush_bytes ? "--flush-mib" : "the backend's");
  }

  if (o->op) {
    zlb_error_t be = ZLB_ERROR_INIT;
    if (!zlb_ops_find(&ops, o->op, d->name))
      zlb_ops_load_builtin(&ops, d->name, &be);
    if (!(e = zlb_ops_find(&ops, o->op, d->name))) {
      rc = zlb_ops_unknown(&ops, o->op, d->name, err);
      goto out;
    }
    if ((rc = zlb__resolve_dtypes(o, e->op, &dtypes, err)) ||
        (rc = zlb__resolve_deny(o, e->op->name, &denied, deny_source, sizeof(deny_source),
                                err)))
      goto out;
    zlb_dtype_mask_format(dtypes, &dts);
    zlb_strbuf_addf(out, "operator:     %s (family %s) from %s\n", e->op->name,
                    e->op->family, e->library);
    zlb_strbuf_addf(out, "dtypes:       %s\n", dts.buf);
    zlb_strbuf_addf(out, "baseline:     %s%s\n", e->op->baseline.name,
                    e->op->baseline.flags & ZLB_IMPL_NO_CAPTURE ? " (synchronises with the host)" : "");
    zlb_strbuf_addf(out, "candidate:    %s%s%s\n", e->op->candidate.name,
                    e->op->candidate.flags & ZLB_IMPL_NO_CAPTURE ? " (synchronises with the host)" : "",
                    e->op->candidate.flags & ZLB_IMPL_AUTOTUNES ? " (autotunes)" : "");
    if (denied)
      zlb_strbuf_addf(out, "capture:      denied (%s)\n", deny_source);
  }

  zlb_strbuf_addstr(out, "\nstages, per dtype and shape:\n");
  zlb_strbuf_addf(out, "  1. describe the case, allocate tensors, fill inputs (seed %llu)\n",
                  (unsigned long long)o->seed);
  zlb_strbuf_addf(out, "  2. prepare both implementations (autotune %s)\n",
                  o->autotune ? "on" : "off");
  zlb_strbuf_addstr(out, "  3. accuracy: poison outputs, one call of each, compare "
                         "(FAILED row on mismatch, never a latency)\n");
  if (t == ZLB_TIMER_GRAPH && denied) {
    zlb_strbuf_addf(out, "  4. time each: capture denied (%s) -> direct timer, marked "
                         "fallback(phase=deny,repeat=%d)\n",
                    deny_source, o->timing.repeat);
  } else if (t == ZLB_TIMER_GRAPH) {
    zlb_strbuf_addf(out,
                    "  4. time each with the graph timer: warm-up on the caller's stream, "
                    "capture up to %d launches\n"
                    "     on a side stream (scratch RNG state), instantiate, replay >= %d "
                    "times, median of replay/K;\n"
                    "     a refused capture falls back to the direct timer, marked "
                    "fallback(phase=...,reason=...,repeat=%d);\n"
                    "     a device fault fails the operator; a poisoned context stops with "
                    "BENCHMARK_CAPTURE_POISONED (exit 5)\n",
                    o->timing.graph_max_launches, o->timing.graph_min_replays,
                    o->timing.repeat);
    if (o->timing.graph_calibrate)
      zlb_strbuf_addstr(out, "     calibrated (--l2 cold): each call between its own event "
                             "nodes after its flush; 9 traced replays of K\n"
                             "     (flush; node; empty kernel; node) (their kernel time) "
                             "and 9 untraced (their pairs) give the gap\n"
                             "     per call (pairs - kernel time) / K, subtracted from every "
                             "sample (timer graph-cal)\n");
    if (e && ((e->op->baseline.flags | e->op->candidate.flags) & ZLB_IMPL_NO_CAPTURE))
      zlb_strbuf_addstr(out, "     (this operator synchronises with the host: expect the "
                             "capture to be refused)\n");
  } else if (t == ZLB_TIMER_QUEUE) {
    if (!(d->caps & ZLB_CAP_HOLD)) {
      zlb_strbuf_addf(out,
                      "  4. time each: backend '%s' cannot hold a stream -> direct timer, "
                      "marked fallback(phase=hold,reason=UNSUPPORTED,repeat=%d)\n",
                      d->name, o->timing.repeat);
    } else {
      zlb_strbuf_addf(out,
                      "  4. time each with the queue timer: warm-up on the stream, then "
                      "batches of up to %d calls\n"
                      "     queued behind a held stream between one event pair (L2 warm), "
                      ">= %d batches, median of batch/K;\n"
                      "     a hold still in force after %.0f ms is released by the watchdog "
                      "and its batch discarded;\n"
                      "     a refused hold falls back to the direct timer, marked "
                      "fallback(phase=hold,reason=...,repeat=%d)\n",
                      o->timing.queue_max_launches, o->timing.queue_min_batches,
                      o->timing.queue_timeout_ms, o->timing.repeat);
      if (o->timing.queue_calibrate)
        zlb_strbuf_addstr(out, "     calibrated: 9 traced batches of K empty kernels (their "
                               "kernel time) and 9 untraced (their batch\n"
                               "     time) give the launch cost per call ((batch time - "
                               "kernel time) / K), subtracted from every\n"
                               "     sample (timer queue-cal)\n");
    }
    if (e && ((e->op->baseline.flags | e->op->candidate.flags) & ZLB_IMPL_NO_CAPTURE))
      zlb_strbuf_addstr(out, "     (this operator synchronises with the host: its calls "
                             "fall back, marked reason=HOST_SYNC)\n");
  } else if (t == ZLB_TIMER_TRACE) {
    zlb_strbuf_addf(out,
                    "  4. time each with the trace timer: kernel-only time per call from the "
                    "activity tracer, every kernel\n"
                    "     of the call summed; estimate, warm-up %.0f ms, %.0f ms of samples, "
                    "%s outside the traced interval,\n"
                    "     %s; repeated %d time(s), median over repeats\n",
                    o->timing.warmup_ms, o->timing.rep_ms,
                    (d->caps & ZLB_CAP_L2_FLUSH) && !o->no_flush ? "L2 flush" : "no flush",
                    zlb_return_mode_name(o->timing.return_mode), o->timing.repeat);
    if (o->timing.trace_flush_queued)
      zlb_strbuf_addstr(out, "     each call queued right behind its flush, not after the host "
                             "waited for it (--trace-flush queued)\n");
  } else {
    zlb_strbuf_addf(out,
                    "  4. time each with the direct timer: estimate, warm-up %.0f ms, "
                    "%.0f ms of samples, %s before each sample,\n"
                    "     one event pair per sample, %s; repeated %d time(s), median over "
                    "repeats\n",
                    o->timing.warmup_ms, o->timing.rep_ms,
                    (d->caps & ZLB_CAP_L2_FLUSH) && !o->no_flush ? "L2 flush" : "no flush",
                    zlb_return_mode_name(o->timing.return_mode), o->timing.repeat);
  }
  if (o->trials > 1)
    zlb_strbuf_addf(out,
                    "     steps 1-4 run %d times per row (--trials), each on freshly allocated "
                    "tensors; the row's value is the median of the %d\n",
                    o->trials, o->trials);
  zlb_strbuf_addstr(out, "  5. row: status, latencies, speedup, GB/s, TFLOP/s, timer, "
                         "marker, size detail\n");
out:
  zlb_backend_close(b);
  zlb_op_set_release(&ops);
  zlb_strbuf_release(&dts);
  return rc;
}
