/* What a run decides before it measures (dtypes, capture denial, timer),
 * shared by zlb_run() and zlb_run_plan() so the plan shows what the run does. */
#include <stdio.h>
#include <string.h>

#include "run_int.h"

int zlb__resolve_dtypes(const zlb_run_opts_t *o, const zlb_op_t *op, uint32_t *out,
                        zlb_error_t *err) {
  uint32_t want = o->dtypes, have = op->dtypes;
  zlb_strbuf_t a = ZLB_STRBUF_INIT, b = ZLB_STRBUF_INIT;
  if (!want) {
    *out = have & ZLB_DT_FLOATS;
    if (!*out)
      *out = have;
    return 0;
  }
  *out = want & have;
  if (*out)
    return 0;
  zlb_dtype_mask_format(want, &a);
  zlb_dtype_mask_format(have, &b);
  zlb_error_set(err, ZLB_EINVAL,
                "operator '%s' supports none of the requested dtypes (%s); it supports %s",
                op->name, a.buf, b.buf);
  zlb_strbuf_release(&a);
  zlb_strbuf_release(&b);
  return ZLB_EINVAL;
}

int zlb__resolve_deny(const zlb_run_opts_t *o, const char *op, int *deny, char *source,
                      size_t len, zlb_error_t *err) {
  zlb_strvec_t denied = ZLB_STRVEC_INIT;
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int rc = 0;
  *deny = 0;
  if (len)
    source[0] = '\0';
  if (o->deny_ops && zlb_strvec_find(o->deny_ops, op) >= 0) {
    *deny = 1;
    zlb_strlcpy(source, "--deny-capture", len);
    goto out;
  }
  if (o->deny_file) {
    zlb_strbuf_addstr(&p, o->deny_file);
  } else {
    /* No assets folder or no default list: nothing is denied. */
    if (zlb_assets_dir(&p, NULL))
      goto out;
    zlb_strbuf_addstr(&p, "/capture_deny.yaml");
    if (!zlb_path_exists(p.buf))
      goto out;
  }
  if ((rc = zlb_deny_load(p.buf, &denied, err)))
    goto out;
  if (zlb_strvec_find(&denied, op) >= 0) {
    const char *slash = strrchr(p.buf, '/');
    *deny = 1;
    zlb_strlcpy(source, slash ? slash + 1 : p.buf, len);
  }
out:
  zlb_strvec_release(&denied);
  zlb_strbuf_release(&p);
  return rc;
}

/* --graph-calibrate's timer: graph, asked or resolved from auto. */
static int graph_cal_timer(zlb_timer_kind_t t, zlb_error_t *err) {
  if (t == ZLB_TIMER_GRAPH)
    return 0;
  return zlb_error_set(err, ZLB_EINVAL,
                       "--graph-calibrate calibrates the graph timer, and this run's timer "
                       "is %s (give --timer graph on a backend with graphs)",
                       zlb_timer_name(t));
}

/* --trace-flush queued with timer t: only the trace timer has it. */
static int trace_flush_timer(const zlb_run_opts_t *o, zlb_timer_kind_t t, zlb_error_t *err) {
  if (!o->timing.trace_flush_queued || t == ZLB_TIMER_TRACE)
    return 0;
  return zlb_error_set(err, ZLB_EINVAL,
                       "--trace-flush queued is the trace timer's, and this run's timer is "
                       "%s (give --timer trace)",
                       zlb_timer_name(t));
}

int zlb_run_check_calibration(const zlb_run_opts_t *o, zlb_error_t *err) {
  if (o->timer != ZLB_TIMER_AUTO && trace_flush_timer(o, o->timer, err))
    return err->code;
  if (!o->timing.graph_calibrate)
    return 0;
  if (o->timing.queue_calibrate)
    return zlb_error_set(err, ZLB_EINVAL,
                         "--graph-calibrate and --queue-calibrate calibrate different "
                         "timers: give one");
  if (!o->timing.l2_cold)
    return zlb_error_set(err, ZLB_EINVAL,
                         "--graph-calibrate times each call after its own L2 flush: give "
                         "--l2 cold (the warm graph timer subtracts nothing)");
  return o->timer == ZLB_TIMER_AUTO ? 0 : graph_cal_timer(o->timer, err);
}

int zlb__resolve_calibration(const zlb_run_opts_t *o, const zlb_backend_desc_t *d,
                             zlb_timer_kind_t t, zlb_error_t *err) {
  if (trace_flush_timer(o, t, err))
    return err->code;
  if (o->timing.graph_calibrate) {
    if (zlb_run_check_calibration(o, err) || graph_cal_timer(t, err))
      return err->code;
    if (zlb_graph_calibration_check(d->vtbl, d->name, err))
      return err->code = ZLB_EINVAL;
    return 0;
  }
  if (!o->timing.queue_calibrate)
    return 0;
  if (t != ZLB_TIMER_QUEUE)
    return zlb_error_set(err, ZLB_EINVAL,
                         "--queue-calibrate calibrates the queue timer, and this run's timer "
                         "is %s (give --timer queue)",
                         zlb_timer_name(t));
  /* Asked of a backend that cannot: a usage error, as --timer trace is. */
  if (zlb_queue_calibration_check(d->vtbl, d->name, err))
    return err->code = ZLB_EINVAL;
  return 0;
}

int zlb__resolve_timer(const zlb_run_opts_t *o, const zlb_backend_desc_t *d,
                       zlb_timer_kind_t *out, zlb_error_t *err) {
  *out = zlb_timer_resolve(o->timer, d->caps);
  /* The vtable, not an opened backend: the plan answers for a backend this
   * machine cannot open, as the run would on a machine that can. */
  if (*out == ZLB_TIMER_TRACE && !(d->vtbl && d->vtbl->trace_begin && (d->caps & ZLB_CAP_TRACE)))
    return zlb_error_set(err, ZLB_EINVAL,
                         "--timer trace needs a kernel activity tracer, and backend '%s' has "
                         "none (`zlbench devices` lists the backends with capability 'trace')",
                         d->name);
  return 0;
}

int zlb_run_check_flush(const zlb_run_opts_t *o, zlb_error_t *err) {
  if (!o->no_flush)
    return 0;
  if (o->timing.flush_bytes)
    return zlb_error_set(err, ZLB_EINVAL,
                         "--flush-mib sizes the L2 flush, and --no-flush asks for no flush: give "
                         "one of them");
  if (o->timing.l2_cold)
    return zlb_error_set(err, ZLB_EINVAL,
                         "--l2 cold flushes the L2 before every call, and --no-flush asks for "
                         "no flush: give one of them");
  if (o->timing.trace_flush_queued)
    return zlb_error_set(err, ZLB_EINVAL,
                         "--trace-flush queued queues each call behind its L2 flush, and "
                         "--no-flush asks for no flush: give one of them");
  return 0;
}

int zlb__resolve_flush(const zlb_run_opts_t *o, const zlb_backend_desc_t *d,
                       const zlb_device_info_t *info, zlb_error_t *err) {
  size_t want = o->timing.flush_bytes;
  if (!want)
    return 0;
  if (!(d->caps & ZLB_CAP_L2_FLUSH) && !o->timing.l2_cold)
    return zlb_error_set(err, ZLB_EINVAL,
                         "backend '%s' flushes no L2 before its samples (no capability "
                         "'l2_flush') and --l2 cold is not given: --flush-mib has no flush to size",
                         d->name);
  /* A flush smaller than the L2 leaves part of the call's data in it: a
   * cold timing that is partly warm, with nothing in the row to say so. */
  if (info && info->l2_bytes && want < info->l2_bytes)
    return zlb_error_set(err, ZLB_EINVAL,
                         "--flush-mib %zu is smaller than the device's L2 (%zu bytes): such a "
                         "flush does not evict it; give at least %zu",
                         want >> 20, info->l2_bytes, (info->l2_bytes + (1u << 20) - 1) >> 20);
  return 0;
}

size_t zlb__direct_flush_bytes(const zlb_run_opts_t *o, const zlb_backend_desc_t *d) {
  if (o->no_flush || !(d->caps & ZLB_CAP_L2_FLUSH))
    return 0;
  return o->timing.flush_bytes ? o->timing.flush_bytes : d->flush_bytes;
}

size_t zlb__l2_cold_bytes(size_t given, const zlb_backend_desc_t *d,
                          const zlb_device_info_t *info) {
  if (given)
    return given;
  /* Twice the L2 evicts it whatever its replacement policy; no larger,
   * since the subtracted flush's noise grows with its time. */
  if (info && info->l2_bytes)
    return 2 * info->l2_bytes;
  if (d->flush_bytes)
    return d->flush_bytes;
  return ZLB__L2_COLD_FALLBACK_BYTES;
}
