/* Private to the CUDA backend's files: the driver-API handles they share. */
#ifndef ZLB_CUDA_INT_H
#define ZLB_CUDA_INT_H

#include "zlbench/device.h"

/* Kernel tracing through CUPTI's activity API (cupti.c). */
int zlb__cupti_begin(zlb_error_t *err);
int zlb__cupti_now(uint64_t *ns, zlb_error_t *err);
int zlb__cupti_end(zlb_trace_span_t **spans, size_t *n, zlb_error_t *err);

/* Clocks through NVML, matched to the CUDA device by UUID (nvml.c). */
int zlb__nvml_clocks(const char *uuid, zlb_clocks_t *out, zlb_error_t *err);
/* The driver version string NVML reports ("580.159.04"), or "". */
void zlb__nvml_driver_version(char *buf, size_t len);

/* Bind a dlsym result to a function pointer (ISO C cannot convert). */
void zlb__bind(void *h, const char *sym, void *slot, size_t size);

#endif
