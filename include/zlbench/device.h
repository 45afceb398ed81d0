/* Device layer: the backend registry (names, aliases, runtime libraries,
 * visibility env keys, capabilities, error classification) and the vtable
 * every backend implements. Nothing above this layer names a vendor. */
#ifndef ZLBENCH_DEVICE_H
#define ZLBENCH_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "zlbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Capability flags. */
#define ZLB_CAP_GRAPH 0x01u      /* reliable stream capture + graph replay */
#define ZLB_CAP_EVENTS 0x02u     /* device-side event timing */
#define ZLB_CAP_RNG_STATE 0x04u  /* operator RNG state worth guarding during capture */
#define ZLB_CAP_ASYNC 0x08u      /* work is queued, not run at enqueue time */
#define ZLB_CAP_L2_FLUSH 0x10u   /* a device cache worth flushing between samples */
#define ZLB_CAP_TRACE 0x20u      /* kernel activity tracing (CUPTI on CUDA, roctracer on ROCm) */
#define ZLB_CAP_HOST_MEMORY 0x40u /* device pointers are host pointers: outputs are read in place */
#define ZLB_CAP_HOLD 0x80u       /* a stream can be held while work is queued behind it (the queue timer) */

/* What a failed capture attempt means (docs/timing.md, "Fallback and verdicts"). */
typedef enum zlb_verdict {
  ZLB_VERDICT_NONE = 0,  /* not a failure / unknown code */
  ZLB_VERDICT_REFUSED,   /* not capturable: fall back to direct timing */
  ZLB_VERDICT_FATAL,     /* real device fault: the operator fails */
  ZLB_VERDICT_POISONED   /* the context is unusable after the attempt */
} zlb_verdict_t;

const char *zlb_verdict_name(zlb_verdict_t v);

/* One row of a backend's error classification table. */
typedef struct zlb_classify_entry {
  int code;
  const char *name;
  zlb_verdict_t verdict;
} zlb_classify_entry_t;

typedef struct zlb_device_info {
  int index;
  char name[128];
  char uuid[64];            /* "GPU-xxxxxxxx-xxxx-..." or "" */
  char pci_bus_id[32];
  char driver_version[32];
  char runtime_version[32];
  int sm_count, cc_major, cc_minor;
  size_t mem_bytes;
  size_t l2_bytes;
  int clock_khz, mem_clock_khz, bus_width_bits;
  /* The last cache before memory where it is not the L2 (a CPU's L3);
   * 0: the L2 is the last (GPUs) or it is unknown. */
  size_t llc_bytes;
} zlb_device_info_t;

/* Opaque handles; each backend casts its own types. */
typedef struct zlb_stream_s *zlb_stream_t;
typedef struct zlb_event_s *zlb_event_t;
typedef struct zlb_graph_s *zlb_graph_t;
typedef struct zlb_graph_exec_s *zlb_graph_exec_t;
typedef struct zlb_hold_s *zlb_hold_t; /* one hold of a stream (stream_hold) */

typedef struct zlb_backend zlb_backend_t;

/* One kernel execution as the device's activity tracer saw it (ns). */
typedef struct zlb_trace_span {
  uint64_t start, end;
  /* The tracer's id of the stream the kernel ran on (CUPTI's streamId);
   * 0 where the tracer does not say. --integrity compares it with the
   * id of the stream the candidate was given. */
  uint32_t stream;
} zlb_trace_span_t;

/* Clock and throttle state of a device (NVML on CUDA); -1 when unknown. */
typedef struct zlb_clocks {
  int sm_mhz, mem_mhz, temp_c;
  int power_mw;
  unsigned long long reasons; /* vendor's clock-event reason bits */
  int throttled;              /* power or thermal slowdown reported */
  char why[64];               /* "sw_power_cap,hw_thermal" or "" */
} zlb_clocks_t;

/*
 * An accuracy check done where the outputs are (dev_check): count the
 * elements of two outputs that differ, within tolerance (CLOSE: the rule
 * of the host check, in double; NaN never passes) or bit for bit (EXACT),
 * or sum the moments of one output for a statistical check (MOMENTS: pass
 * 0 sums the values and finds non-finite ones, pass 1 sums (v - mean)^2
 * and (v - mean)^4).
 */
typedef enum zlb_dev_check_kind {
  ZLB_DEVCHECK_CLOSE, ZLB_DEVCHECK_EXACT, ZLB_DEVCHECK_MOMENTS
} zlb_dev_check_kind_t;

typedef struct zlb_dev_check {
  zlb_dev_check_kind_t kind;
  int dtype;                 /* zlb_dtype_t; EXACT only needs its size */
  const void *base, *cand;   /* device pointers; MOMENTS reads base only */
  int64_t n;                 /* elements */
  double rtol, atol;         /* CLOSE */
  double mean;               /* MOMENTS pass 1 */
  int pass;                  /* MOMENTS: 0 or 1 */
} zlb_dev_check_t;

typedef struct zlb_dev_check_result {
  int64_t bad;     /* elements that differ (CLOSE, EXACT) or are not finite (MOMENTS pass 0) */
  int64_t first;   /* the lowest such index, -1 when none */
  double sum[3];   /* MOMENTS: pass 0 sum[0]; pass 1 sum[1] (squares), sum[2] (fourth powers) */
} zlb_dev_check_result_t;

/*
 * The backend vtable. Every call returns 0 or a negative ZLB code with
 * `err` filled (vendor code and name set when the vendor runtime failed).
 * Calls made before device_select() are limited to open/close/device_count/
 * device_info.
 */
typedef struct zlb_backend_vtbl {
  int (*open)(zlb_backend_t *b, zlb_error_t *err);  /* load the runtime */
  void (*close)(zlb_backend_t *b);
  int (*device_count)(zlb_backend_t *b, int *n, zlb_error_t *err);
  int (*device_info)(zlb_backend_t *b, int index, zlb_device_info_t *info,
                     zlb_error_t *err);
  int (*device_select)(zlb_backend_t *b, int index, zlb_error_t *err);
  int (*stream_create)(zlb_backend_t *b, zlb_stream_t *s, zlb_error_t *err);
  void (*stream_destroy)(zlb_backend_t *b, zlb_stream_t s);
  int (*stream_sync)(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err);
  /* Make `waiter` wait for all work enqueued so far on `waitee`. */
  int (*stream_wait)(zlb_backend_t *b, zlb_stream_t waiter, zlb_stream_t waitee,
                     zlb_error_t *err);
  int (*stream_is_capturing)(zlb_backend_t *b, zlb_stream_t s, int *capturing,
                             zlb_error_t *err);
  int (*event_create)(zlb_backend_t *b, zlb_event_t *e, zlb_error_t *err);
  void (*event_destroy)(zlb_backend_t *b, zlb_event_t e);
  int (*event_record)(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s,
                      zlb_error_t *err);
  /* Waits for `end`, then gives end - start in milliseconds. */
  int (*event_elapsed)(zlb_backend_t *b, zlb_event_t start, zlb_event_t end,
                       double *ms, zlb_error_t *err);
  int (*mem_alloc)(zlb_backend_t *b, size_t bytes, void **ptr, zlb_error_t *err);
  void (*mem_free)(zlb_backend_t *b, void *ptr);
  int (*memset_async)(zlb_backend_t *b, void *ptr, int value, size_t bytes,
                      zlb_stream_t s, zlb_error_t *err);
  int (*memcpy_htod)(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_error_t *err);
  int (*memcpy_dtoh)(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_error_t *err);
  /* Graphs: NULL where the backend has no ZLB_CAP_GRAPH. */
  int (*capture_begin)(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err);
  /* Always ends capture mode, even after an error; *g may be NULL then. */
  int (*capture_end)(zlb_backend_t *b, zlb_stream_t s, zlb_graph_t *g,
                     zlb_error_t *err);
  int (*graph_instantiate)(zlb_backend_t *b, zlb_graph_t g, zlb_graph_exec_t *x,
                           zlb_error_t *err);
  int (*graph_launch)(zlb_backend_t *b, zlb_graph_exec_t x, zlb_stream_t s,
                      zlb_error_t *err);
  void (*graph_destroy)(zlb_backend_t *b, zlb_graph_t g);
  void (*graph_exec_destroy)(zlb_backend_t *b, zlb_graph_exec_t x);
  /* Whole-device synchronisation: surfaces asynchronous faults. */
  int (*sync)(zlb_backend_t *b, zlb_error_t *err);
  /* After a failed capture: can the context still do simple work? */
  int (*health_probe)(zlb_backend_t *b, zlb_error_t *err);
  /* Name for a vendor error code ("CUDA_ERROR_ILLEGAL_ADDRESS"). */
  const char *(*error_name)(zlb_backend_t *b, int vendor_code);
  /* Device-to-device copy on a stream (for the bandwidth peak). */
  int (*memcpy_dtod)(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_stream_t s, zlb_error_t *err);
  /* Kernel activity tracing (CUPTI on CUDA, roctracer on ROCm); NULL where
   * there is none.
   * trace_begin starts collecting kernel spans, trace_now reads the
   * tracer's clock (the spans' time base), trace_end stops and hands every
   * span collected since trace_begin to the caller (free() them). */
  int (*trace_begin)(zlb_backend_t *b, zlb_error_t *err);
  int (*trace_now)(zlb_backend_t *b, uint64_t *ns, zlb_error_t *err);
  int (*trace_end)(zlb_backend_t *b, zlb_trace_span_t **spans, size_t *n,
                   zlb_error_t *err);
  /* Clocks, temperature, power and throttle reasons of the selected
   * device; NULL where the backend cannot read them. */
  int (*clocks)(zlb_backend_t *b, zlb_clocks_t *out, zlb_error_t *err);
  /* Free and total bytes of the selected device's memory, for sizing a
   * case before allocating it; NULL where the backend cannot tell. A
   * backend whose device memory is host memory reports the host's. */
  int (*mem_info)(zlb_backend_t *b, size_t *free_bytes, size_t *total_bytes,
                  zlb_error_t *err);
  /* An accuracy check on the device, after the work queued on `s`; NULL
   * where there is none. ZLB_EUNSUPPORTED (for this dtype, or its kernels
   * did not load) means: check on the host instead. */
  int (*dev_check)(zlb_backend_t *b, const zlb_dev_check_t *req,
                   zlb_dev_check_result_t *res, zlb_stream_t s, zlb_error_t *err);
  /* Holding a stream, for the queue timer; NULL where the backend cannot
   * (work runs at enqueue time, or the runtime has no way to block a
   * stream on the host), and then capability ZLB_CAP_HOLD is off.
   * stream_hold enqueues on `s` a wait that keeps everything enqueued
   * after it from starting until stream_release(h). Every hold must be
   * released. stream_release must not block, must not call into the
   * runtime in a way that can wait for it, may be called more than once
   * for one hold, and must be safe from another thread while this one is
   * blocked in an enqueue on the held stream: the queue timer's watchdog
   * releases a hold whose enqueues blocked (a full launch queue). */
  int (*stream_hold)(zlb_backend_t *b, zlb_stream_t s, zlb_hold_t *h, zlb_error_t *err);
  void (*stream_release)(zlb_backend_t *b, zlb_hold_t h);
  /* Whether the tracer behind trace_begin can be used here, and if not
   * why; NULL where trace_begin alone answers. A backend whose tracer may
   * be missing or of an untrusted version (roctracer) sets it:
   * zlb_backend_caps() then turns ZLB_CAP_TRACE off where it fails. */
  int (*trace_available)(zlb_backend_t *b, zlb_error_t *err);
  /* Enqueue one launch of a kernel that does nothing (one block of one
   * thread), for the queue timer's calibration: the device's own cost of a
   * launch with no work in it. NULL where the backend has none;
   * ZLB_EUNSUPPORTED where its kernel did not load. */
  int (*launch_empty)(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err);
  /* Record `e` on `s` while `s` captures, as a node of the graph (CUDA's
   * external event record): every replay records it again where the node
   * sits, so a replay's events time the work between them. A plain
   * event_record in a capture is only an ordering edge. NULL where the
   * backend's graphs cannot hold timed events (the calibrated graph timer
   * is then refused). */
  int (*event_record_node)(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s,
                           zlb_error_t *err);
} zlb_backend_vtbl_t;

/* A registry entry: everything known about a backend, implemented or not. */
typedef struct zlb_backend_desc {
  const char *name;                  /* "cuda" */
  const char *vendor;                /* "NVIDIA" */
  const char *const *aliases;        /* NULL-terminated */
  const char *const *sonames;        /* runtime libraries tried in order */
  const char *visibility_env;        /* "CUDA_VISIBLE_DEVICES" */
  const char *const *also_env;       /* further keys set to the same value, or NULL */
  unsigned caps;
  const zlb_classify_entry_t *classify; /* vendor code -> verdict */
  size_t nclassify;
  size_t flush_bytes;                /* L2 flush buffer (0: none) */
  const zlb_backend_vtbl_t *vtbl;    /* NULL: registered but not implemented in this build */
  int probe_in_auto;                 /* tried by "auto" (in registry order) */
} zlb_backend_desc_t;

/* An opened backend. */
struct zlb_backend {
  const zlb_backend_desc_t *desc;
  const zlb_backend_vtbl_t *v;
  void *impl;           /* backend-private */
  int device;           /* selected ordinal, -1 before device_select */
  zlb_device_info_t info;
};

/** Built-in registry, in `auto` probe order: cuda, musa, rocm, ascend, host. */
const zlb_backend_desc_t *const *zlb_backend_builtin(size_t *n);
/** Add a backend (from an operator library); names must be unique. */
int zlb_backend_register(const zlb_backend_desc_t *desc, zlb_error_t *err);
/** All registered backends, built-in first. */
const zlb_backend_desc_t *zlb_backend_at(size_t i);
size_t zlb_backend_count(void);
/**
 * Resolve a name or alias ("nvidia" -> cuda). Unknown names are
 * ZLB_ENOTFOUND with a message listing the valid names and aliases.
 * "auto" is not resolved here (see zlb_backend_open_auto).
 */
int zlb_backend_lookup(const char *name, const zlb_backend_desc_t **out,
                       zlb_error_t *err);
/**
 * Open a backend: load its runtime library (dlopen) and initialise it. A
 * missing runtime is ZLB_EUNAVAIL naming every library tried; a backend
 * without an implementation in this build is ZLB_EUNAVAIL too. On success
 * `*out` is heap-allocated; free it with zlb_backend_close().
 */
int zlb_backend_open(const zlb_backend_desc_t *desc, zlb_backend_t **out,
                     zlb_error_t *err);
/**
 * "auto": try each backend with probe_in_auto in order and take the first
 * that opens and reports at least one device; fall back to host.
 * `tried` (optional) receives one line per backend tried and why it was
 * passed over.
 */
int zlb_backend_open_auto(zlb_backend_t **out, char *tried, size_t triedlen,
                          zlb_error_t *err);
/** Open by name, alias or "auto" (NULL or "" means auto). */
int zlb_backend_open_name(const char *name, zlb_backend_t **out, zlb_error_t *err);
void zlb_backend_close(zlb_backend_t *b);
/** Query count and info, select `index`, fill b->info. */
int zlb_backend_select_device(zlb_backend_t *b, int index, zlb_error_t *err);
/** Verdict for a vendor code from the backend's table (NONE if absent). */
zlb_verdict_t zlb_backend_classify(const zlb_backend_desc_t *desc, int vendor_code);
/** Vendor error name: the runtime's own, else the table's, else "ERROR_<n>". */
const char *zlb_backend_error_name(zlb_backend_t *b, int vendor_code);
/**
 * The capability flags of an opened backend: its registry entry's, less
 * ZLB_CAP_TRACE where there is no trace_begin or trace_available fails;
 * `trace_why` (optional) then says why.
 */
unsigned zlb_backend_caps(zlb_backend_t *b, zlb_error_t *trace_why);
/** "graph,events,rng_state,async,l2_flush,trace,host_memory,hold" */
void zlb_caps_format(unsigned caps, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
