/* Per-shape timer choice: graph or queue with fallback to direct, the deny
 * list, and the row marker that records which path produced the number. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/timing.h"

/* Refused: this shape is measured by the direct timer instead, and the row
 * says so, since its caliber differs from captured rows. What the refused
 * attempt took is kept (attempt_s). */
static int fall_back(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                     const zlb_timing_opts_t *o, zlb_flush_t *flush, zlb_measurement_t *m,
                     char *marker, size_t markerlen, const zlb_graph_failure_t *fail,
                     int repeat, zlb_error_t *err) {
  double attempt_s = m->wall_s;
  int rc;
  zlb_measurement_release(m);
  snprintf(marker, markerlen, "fallback(phase=%s,reason=%s,repeat=%d)",
           zlb_phase_name(fail->phase), fail->reason, repeat);
  zlb_error_clear(err);
  rc = zlb_time_direct(b, s, l, o, flush, m, err);
  m->attempt_s = attempt_s;
  return rc;
}

int zlb_time_case(zlb_backend_t *b, zlb_stream_t s, const zlb_launch_t *l,
                  zlb_timer_kind_t timer, int deny, const zlb_timing_opts_t *o,
                  zlb_flush_t *flush, zlb_measurement_t *m, char *marker,
                  size_t markerlen, zlb_graph_failure_t *fail, zlb_error_t *err) {
  zlb_timer_kind_t t = zlb_timer_resolve(timer, b->desc->caps);
  int repeat = o->repeat < 1 ? 1 : o->repeat, rc;

  /* The marker states the repeat actually applied (see zlb_time_direct). */
  if (o->nquantiles > 0 || o->return_mode == ZLB_RET_ALL)
    repeat = 1;

  memset(fail, 0, sizeof(*fail));
  m->host_ms = NAN; /* set by the warm-up of the timer that measures */
  snprintf(marker, markerlen, "-");
  if (t == ZLB_TIMER_DIRECT)
    return zlb_time_direct(b, s, l, o, flush, m, err);
  if (t == ZLB_TIMER_TRACE)
    return zlb_time_trace(b, s, l, o, flush, m, err);
  if (t == ZLB_TIMER_QUEUE) {
    /* The deny list is about capture: holding a stream captures nothing. */
    rc = zlb_time_queue(b, s, l, o, m, fail, err);
    if (rc != ZLB_EREFUSED)
      return rc;
    return fall_back(b, s, l, o, flush, m, marker, markerlen, fail, repeat, err);
  }

  if (deny) {
    /* For operators known to poison the context the attempt itself is the
     * damage: skip it rather than rediscover it per shape. */
    fail->phase = ZLB_PHASE_DENY;
    snprintf(marker, markerlen, "fallback(phase=deny,repeat=%d)", repeat);
    return zlb_time_direct(b, s, l, o, flush, m, err);
  }

  rc = zlb_time_graph(b, s, l, o, m, fail, err);
  if (rc != ZLB_EREFUSED)
    return rc;
  return fall_back(b, s, l, o, flush, m, marker, markerlen, fail, repeat, err);
}
