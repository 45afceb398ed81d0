/* Private declarations shared by the device layer's files. */
#ifndef ZLB_DEVICE_INT_H
#define ZLB_DEVICE_INT_H

#include "zlbench/device.h"

extern const zlb_backend_desc_t zlb__backend_cuda;
extern const zlb_backend_desc_t zlb__backend_musa;
extern const zlb_backend_desc_t zlb__backend_rocm;
extern const zlb_backend_desc_t zlb__backend_ascend;
extern const zlb_backend_desc_t zlb__backend_host;

/*
 * dlopen the first loadable of `sonames`. On failure the error names every
 * library tried with its dlerror text. Handles are never closed: vendor
 * runtimes own process-wide state.
 */
void *zlb__dlopen_first(const char *const *sonames, const char *backend,
                        const char **opened, zlb_error_t *err);

/* Bind a dlsym result to a function pointer (ISO C cannot convert); the
 * slot is NULL when the symbol is missing. */
void zlb__bind(void *h, const char *sym, void *slot, size_t size);

#endif
