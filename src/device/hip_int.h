/* Private declarations of the ROCm backend (hip.c) and its tracer. */
#ifndef ZLB_HIP_INT_H
#define ZLB_HIP_INT_H

#include "zlbench/device.h"

/* Kernel tracing through roctracer's activity API (roctracer.c).
 * zlb__roctracer_open loads libroctracer64 once (`hip_runtime`: the HIP
 * library loaded, whose folder is searched first) and says why there is
 * no tracer; the others need it to have succeeded. */
int zlb__roctracer_open(const char *hip_runtime, zlb_error_t *err);
int zlb__roctracer_begin(zlb_error_t *err);
int zlb__roctracer_now(uint64_t *ns, zlb_error_t *err);
int zlb__roctracer_end(zlb_trace_span_t **spans, size_t *n, zlb_error_t *err);

#endif
