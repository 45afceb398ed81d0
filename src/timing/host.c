/* Host dispatch time: how long the host spends in one call of the
 * implementation (its launch, or a framework's Python dispatch before it),
 * measured on the timers' eager warm-up calls (docs/timing.md, "Host
 * dispatch time"). */
#include <math.h>

#include "timing_int.h"
#include "zlbench/base.h"

int zlb__warm_calls(const zlb_launch_t *l, zlb_stream_t s, long n, zlb_measurement_t *m,
                    zlb_error_t *err) {
  double t[ZLB__HOST_CALLS];
  size_t k = 0;
  int rc;
  for (long i = 0; i < n; i++) {
    /* Only the first calls: once the launch queue is full, a call waits on
     * the host for the device to drain it, and that is not dispatch. */
    if (k < ZLB__HOST_CALLS) {
      uint64_t t0 = zlb_now_ns();
      rc = l->call(l->ctx, s, err);
      t[k++] = (double)(zlb_now_ns() - t0) * 1e-6;
    } else {
      rc = l->call(l->ctx, s, err);
    }
    if (rc)
      return rc;
  }
  if (k)
    m->host_ms = zlb_stats_median(t, k);
  return 0;
}
