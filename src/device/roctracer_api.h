/* The part of roctracer's C API (roctracer.h, roctracer_hip.h,
 * ext/prof_protocol.h) that the ROCm backend's kernel tracer uses, written
 * here so that zlbench builds without ROCm and loads libroctracer64 with
 * dlopen. Shared with the fake libroctracer64 of the tests (tests/fake/).
 *
 * Checked against ROCm/roctracer's headers for roctracer 4.1: the tags
 * rocm-5.3.0 to rocm-6.2.x and the repository's head (d5bbc8a), which all
 * report 4.1. Over those no member the tracer reads moved (836bab3, in
 * 5.3, made `bytes` a union with kernel_name; 1c7c5cc, in 5.4, added
 * mark_message to that union), and the entry points below are exported.
 * roctracer 4.0 (ROCm 5.1 and 5.2) has the same offsets, but
 * roctracer_next_record was an inline function there, not an exported
 * one; it is not accepted (roctracer.c says why a version is). */
#ifndef ZLB_ROCTRACER_API_H
#define ZLB_ROCTRACER_API_H

#include <stddef.h>
#include <stdint.h>

/* The one roctracer version whose layout and exports are verified. */
#define ZROC_VERSION_MAJOR 4
#define ZROC_VERSION_MINOR 1

enum {
  ZROC_STATUS_SUCCESS = 0,    /* ROCTRACER_STATUS_SUCCESS */
  ZROC_STATUS_ERROR = -1,     /* ROCTRACER_STATUS_ERROR */
  ZROC_DOMAIN_HIP_OPS = 2,    /* ACTIVITY_DOMAIN_HIP_OPS */
  ZROC_HIP_OP_DISPATCH = 0,   /* HIP_OP_ID_DISPATCH: a kernel dispatch */
  ZROC_HIP_OP_COPY = 1        /* HIP_OP_ID_COPY (not traced; the fake's wrong op) */
};

/* activity_record_t (roctracer_record_t) on LP64. Only the members the
 * tracer reads are named; the unions keep their first member, the one HIP
 * ops records use. roctracer.c checks the offsets at compile time. */
typedef struct zroc_record {
  uint32_t domain; /* activity_domain_t */
  uint32_t kind;   /* HIP's command type; not part of roctracer's ABI */
  uint32_t op;     /* hip_op_id_t in the HIP ops domain */
  uint64_t correlation_id;
  uint64_t begin_ns; /* roctracer_get_timestamp's clock */
  uint64_t end_ns;
  int device_id;
  uint64_t queue_id;
  size_t bytes; /* or const char *kernel_name */
} zroc_record_t;

typedef void (*zroc_alloc_fn)(char **ptr, size_t size, void *arg);
/* [begin, end) holds whole records, stepped with roctracer_next_record. */
typedef void (*zroc_buffer_fn)(const char *begin, const char *end, void *arg);

/* roctracer_properties_t */
typedef struct zroc_properties {
  uint32_t mode;
  size_t buffer_size;
  zroc_alloc_fn alloc_fun; /* NULL: malloc */
  void *alloc_arg;
  zroc_buffer_fn buffer_callback_fun;
  void *buffer_callback_arg;
} zroc_properties_t;

typedef void zroc_pool_t; /* roctracer_pool_t */

/* X(field, symbol, return type, parameters): every entry point bound. The
 * pool stays open for the process (as library handles do): no close. */
#define ZROC_ENTRY_POINTS(X)                                                    \
  X(version_major, roctracer_version_major, uint32_t, (void))                    \
  X(version_minor, roctracer_version_minor, uint32_t, (void))                    \
  X(error_string, roctracer_error_string, const char *, (void))                  \
  X(open_pool, roctracer_open_pool_expl, int,                                    \
    (const zroc_properties_t *properties, zroc_pool_t **pool))                   \
  X(enable_op, roctracer_enable_op_activity_expl, int,                           \
    (uint32_t domain, uint32_t op, zroc_pool_t *pool))                           \
  X(disable_op, roctracer_disable_op_activity, int, (uint32_t domain, uint32_t op)) \
  X(flush, roctracer_flush_activity_expl, int, (zroc_pool_t * pool))             \
  X(next_record, roctracer_next_record, int,                                     \
    (const zroc_record_t *record, const zroc_record_t **next))                   \
  X(timestamp, roctracer_get_timestamp, int, (uint64_t * timestamp))

#endif
