/* Private declarations shared by the run layer's files. */
#ifndef ZLB_RUN_INT_H
#define ZLB_RUN_INT_H

#include <stdio.h>

#include "zlbench/json.h"
#include "zlbench/run.h"

/* Text styles (ANSI when colour is on). */
typedef enum { STY_NONE, STY_BOLD, STY_OK, STY_FAIL, STY_WARN, STY_DIM } zlb__style_t;

/* Where a case's wall time goes (--json "phases_ms", the verbose log). */
typedef enum zlb__phase {
  ZLB__PH_DESCRIBE, ZLB__PH_ALLOCATE, ZLB__PH_FILL, ZLB__PH_PREPARE, ZLB__PH_ACCURACY,
  ZLB__PH_TIMING, ZLB__PH_RELEASE, ZLB__PH_COUNT
} zlb__phase_t;

/** "describe", "allocate", ... */
const char *zlb__phase_name(zlb__phase_t p);

/* One row of a table: a case at one shape and dtype. */
#define ZLB__MAX_TRIALS ZLB_RUN_MAX_TRIALS

typedef struct zlb__row {
  int ok;                   /* SUCCESS */
  double base_ms, cand_ms, speedup, gbps, tflops, pct_peak;
  char timer[16];
  char marker[320];
  char config[64];
  int samples;
  char detail[256];         /* after folding */
  char full_detail[256];    /* before folding */
  char shape[96];
  char note[1024];          /* why it failed */
  zlb_measurement_t m[2];
  double bytes, flops;
  double noise;             /* candidate's relative spread */
  int have_clocks;
  zlb_clocks_t clk[2];      /* before and after the case */
  double phase_ms[ZLB__PH_COUNT];
  double wall_ms;           /* the whole case */
  double first_calls_ms;    /* of the accuracy phase: each impl's first call (the timers' too) */
  const char *check_where;  /* accuracy check: "device", "host", "none"; NULL before it */
  int ntrials;              /* trials measured (--trials); m[] pools their samples */
  double trial_ms[2][ZLB__MAX_TRIALS]; /* each trial's value, baseline and candidate */
  char integrity[256];      /* --integrity: what was checked ("" without it) */
  int ceiling;              /* ZLB__CEIL_*: what pct_peak is compared with */
} zlb__row_t;

/* The bandwidth ceiling a row's %Peak is compared with: device memory, or
 * the last cache (a GPU's L2, a CPU's L3) when the row's working set fits
 * in it and its timer does not flush it (docs/roofline.md). */
enum { ZLB__CEIL_NONE, ZLB__CEIL_MEMORY, ZLB__CEIL_CACHE };
const char *zlb__ceiling_name(int ceiling); /* "memory", "cache", "" */

/* Measured device ceilings (peaks.c). A ceiling that was not measured is
 * NAN, never 0 or a stand-in, and the *_why text says why. */
typedef struct zlb__peaks {
  double gbps;                   /* copy bandwidth, GB/s (reads + writes) */
  double cache_gbps;             /* the same for a copy that fits in the last cache */
  char cache_why[256];           /* why cache_gbps is missing; "" when present */
  double tflops[ZLB_DT_COUNT];   /* vendor GEMM per dtype */
  char gbps_why[256];            /* why gbps is missing; "" when present */
  char gemm_why[ZLB_DT_COUNT][256]; /* why a dtype's FLOP ceiling is missing */
  char measured[32];
  char source[512];              /* cache file, or "measured now" */
  char cache_note[1024];         /* a cache rejected or not written, and why */
} zlb__peaks_t;

/* How peaks.c measures ceilings; the run layer passes the backend's, the
 * unit tests pass their own. Each returns NAN and writes `why` when it
 * cannot measure. */
typedef struct zlb__peaks_probe {
  void *ctx;
  double (*bandwidth)(void *ctx, char *why, size_t len);
  /* Float dtypes the GEMM can be measured in; 0 with `why` when none. */
  uint32_t (*gemm_dtypes)(void *ctx, char *why, size_t len);
  double (*gemm)(void *ctx, zlb_dtype_t dt, char *why, size_t len);
  /* Copy bandwidth within the last cache; NULL: not measured here. */
  double (*cache_bandwidth)(void *ctx, char *why, size_t len);
} zlb__peaks_probe_t;

/* Host buffer slots: fill staging, inputs, both sides' outputs, and the
 * candidate's second run (reproducibility). */
enum {
  ZLB__SLOT_FILL = 0,
  ZLB__SLOT_IN = 1,
  ZLB__SLOT_OUT = 1 + ZLB_MAX_TENSORS,
  ZLB__SLOT_AGAIN = 1 + 3 * ZLB_MAX_TENSORS,
  ZLB__HOST_SLOTS = 1 + 4 * ZLB_MAX_TENSORS
};

/* A device buffer of random values of one dtype and distribution, made
 * once per process; large inputs are copied out of it (inputs.c). */
typedef struct zlb__pool {
  zlb_dtype_t dtype;
  zlb_fill_t fill;
  double lo, hi;
  void *data;
} zlb__pool_t;
#define ZLB__MAX_POOLS 16

typedef struct zlb__run {
  const zlb_run_opts_t *o;
  zlb_backend_t *b;
  zlb_op_set_t ops;
  const zlb_op_entry_t *entry;
  const zlb_op_t *op;
  zlb_env_t env;
  zlb_rng_t rng, scratch_rng;
  zlb_stream_t stream;
  zlb_flush_t flush;
  zlb_timing_opts_t timing;
  zlb_timer_kind_t timer;   /* resolved */
  int deny;                 /* capture denied for this operator */
  char deny_source[128];
  uint32_t dtypes;
  zlb_shape_list_t shapes;
  char shape_file[512];
  FILE *log;
  zlb_strbuf_t log_path, identity_path;
  zlb_jw_t json;            /* results, when o->json_path */
  char errbuf[1024];
  char started[32];
  double t0;
  zlb_run_result_t *res;
  zlb__peaks_t peaks;
  const zlb_op_t *ops_mm;   /* the GEMM used for the FLOP ceiling */
  zlb_clocks_t clocks_start;
  /* The calibrated queue or graph timer's per-call launch costs
   * subtracted (ms; a run has one of the two), over every measurement of
   * the run, for the identity. */
  int cal_n;
  double cal_min_ms, cal_max_ms;
  double setup_ms;           /* the operator's setup(), NAN without one */
  char setup_error[1100];     /* why setup() failed; "" when it did not */
  /* Host copies of a case's tensors (fill staging, downloads for the
   * accuracy check), kept from case to case: a fresh buffer of a large
   * case costs more in page faults than its fill and copies. */
  void *host[ZLB__HOST_SLOTS];
  size_t host_cap[ZLB__HOST_SLOTS];
  zlb__pool_t pools[ZLB__MAX_POOLS];
  int npools;
  size_t pool_bytes;
  /* zlbench ab (ab.c): when set, a case whose tensors are allocated,
   * filled and accuracy-checked goes to this instead of the two timed
   * measurements; ab_ctx is its own. */
  void (*ab_time)(struct zlb__run *r, zlb_case_t *c, struct zlb__row *row, zlb_error_t *stop);
  void *ab_ctx;
  zlb_flush_t l2flush;       /* --l2 cold: the graph and queue timers' flush buffer */
} zlb__run_t;

/* resolve.c: what the run decides before measuring; zlb_run_plan() calls
 * the same functions. Each returns 0 or a ZLB code with err set. */
/* The dtypes to run: the requested ones the operator has, or its float
 * dtypes when none were requested (all of them if it has no float one). */
int zlb__resolve_dtypes(const zlb_run_opts_t *o, const zlb_op_t *op, uint32_t *out,
                        zlb_error_t *err);
/* Whether capture is denied for `op` (--deny-capture, then --deny-file or
 * assets/capture_deny.yaml); `source` names where the denial came from. */
int zlb__resolve_deny(const zlb_run_opts_t *o, const char *op, int *deny, char *source,
                      size_t len, zlb_error_t *err);
/* The timer the request resolves to on backend `d`; --timer trace without
 * an activity tracer is an error. */
int zlb__resolve_timer(const zlb_run_opts_t *o, const zlb_backend_desc_t *d,
                       zlb_timer_kind_t *out, zlb_error_t *err);
/* --queue-calibrate: the timer must be the queue timer and the backend's
 * vtable must have an empty kernel and a tracer (a usage error if not);
 * --graph-calibrate: the graph timer with --l2 cold, and graph event nodes
 * as well; the plan asks it of a backend it may not be able to open. */
int zlb__resolve_calibration(const zlb_run_opts_t *o, const zlb_backend_desc_t *d,
                             zlb_timer_kind_t t, zlb_error_t *err);

/* --flush-mib (o->timing.flush_bytes), after zlb_run_check_flush (its
 * --no-flush conflict): refused where there is no flush to size (no
 * direct flush on the backend, no --l2 cold) and below the device's L2
 * where `info` knows it (NULL: not checked); usage errors. */
int zlb__resolve_flush(const zlb_run_opts_t *o, const zlb_backend_desc_t *d,
                       const zlb_device_info_t *info, zlb_error_t *err);
/* The direct and trace timers' flush before each sample: none with
 * --no-flush or on a backend without capability l2_flush, else
 * --flush-mib's size, else the backend's (256 MiB on CUDA). */
size_t zlb__direct_flush_bytes(const zlb_run_opts_t *o, const zlb_backend_desc_t *d);
/* The cold graph and queue timers' flush buffer: `given` (--flush-mib)
 * when not 0, else twice the device's L2 where it is known, else the
 * backend's direct flush size, else this. */
#define ZLB__L2_COLD_FALLBACK_BYTES ((size_t)1 << 20)
size_t zlb__l2_cold_bytes(size_t given, const zlb_backend_desc_t *d,
                          const zlb_device_info_t *info);

/* case.c: the host buffers */
/** A host buffer of at least n bytes in a slot, kept for later cases. */
void *zlb__host_buf(zlb__run_t *r, int slot, size_t n);
void zlb__hostbuf_release(zlb__run_t *r);

/* inputs.c: filling inputs */
/** Fill input t (allocated) per t->fill from `seed`; deterministic. */
int zlb__fill_input(zlb__run_t *r, zlb_tensor_t *t, uint64_t seed, zlb_error_t *err);
/** Device bytes filling t would add now (a pool not made yet), else 0. */
size_t zlb__pool_bytes_needed(const zlb__run_t *r, const zlb_tensor_t *t);
/** Host staging bytes filling t needs (0 when it comes from a made pool). */
size_t zlb__fill_staging_bytes(const zlb__run_t *r, const zlb_tensor_t *t);
void zlb__pools_release(zlb__run_t *r);

/* report.c: terminal text and run.log */
void zlb__emit(zlb__run_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *zlb__sty(zlb__run_t *r, zlb__style_t s);
void zlb__banner_start(zlb__run_t *r);
void zlb__banner_end(zlb__run_t *r);
void zlb__table_begin(zlb__run_t *r, zlb_dtype_t dt, const char *legend);
void zlb__table_row(zlb__run_t *r, const zlb__row_t *row);
/* "# phases (ms): describe ..., wall ..." after a row (verbose runs). */
void zlb__table_phases(zlb__run_t *r, const zlb__row_t *row);
/* Fold detail items identical in every row into a legend (>= 2 rows;
 * the first item, the shape, always stays). */
void zlb__fold_details(zlb__row_t *rows, size_t n, char *legend, size_t len);

/* case.c: one case, start to finish */
void zlb__run_case(zlb__run_t *r, zlb_dtype_t dt, const zlb_shape_t *shape,
                   zlb__row_t *row, zlb_error_t *stop);
/* Describe a case without allocating (for details and legends). */
int zlb__describe_case(zlb__run_t *r, zlb_dtype_t dt, const zlb_shape_t *shape,
                       zlb__row_t *row);

/* case.c, for zlbench ab (ab.c): side B's case on side A's tensors.
 * Describe it with op_b, check that it describes A's tensors (counts,
 * dtypes, extents), point it at A's buffers, prepare it and check B's
 * accuracy as run does. 0, or nonzero with the row failed (and `stop` set
 * on a device fault); *initialised and prepared[] say what to release. */
int zlb__case_other(zlb__run_t *r, const zlb_op_t *op_b, const zlb_case_t *ca, zlb_case_t *cb,
                    int *initialised, int prepared[2], zlb__row_t *row, zlb_error_t *stop);
void zlb__case_other_release(zlb__run_t *r, const zlb_op_t *op_b, zlb_case_t *cb,
                             int initialised, const int prepared[2], const zlb_error_t *stop);
/* A timing error of a case: a FAILED row, or a fatal one that stops. */
void zlb__case_time_error(zlb__run_t *r, zlb__row_t *row, const char *phase,
                          const zlb_error_t *e, zlb_error_t *stop);
/* run.c, for ab.c: the operators' env and the shapes of r->op. */
void zlb__run_env_init(zlb__run_t *r);
int zlb__run_resolve_shapes(zlb__run_t *r, zlb_error_t *err);

/* peaks.c */
void zlb__peaks_resolve(zlb__run_t *r);
/* The ceilings of one device: read the cache at `cache_path` (NULL: none),
 * measure with `probe` only what it lacks, and write the merged result back
 * atomically when something new was measured. A cache that is malformed or
 * belongs to another device is not trusted: it is re-measured and the
 * reason is kept in p->cache_note. Never fails: a ceiling that cannot be
 * had stays NAN with its reason. */
void zlb__peaks_resolve_with(zlb__peaks_t *p, const char *cache_path, const char *backend,
                             const zlb_device_info_t *info, const zlb__peaks_probe_t *probe);
/* Roofline % of peak for a case; NAN without the ceiling that applies. */
double zlb__peaks_pct_of(const zlb__peaks_t *p, zlb_dtype_t dt, double bytes, double flops,
                         double ms);
/* The last cache before memory: a CPU's L3 where the host reports one,
 * else the L2; 0 when the device reports none. */
size_t zlb__last_cache_bytes(const zlb_device_info_t *info);
/* The same against the cache's bandwidth (ZLB__CEIL_CACHE) or memory's. */
double zlb__peaks_pct_ceiling(const zlb__peaks_t *p, int ceiling, zlb_dtype_t dt, double bytes,
                              double flops, double ms);
/* The ceiling a row of BYTES is judged by: the cache's when it fits in
 * the CACHE bytes its timer does not empty (FLUSHED 0), else memory's. */
int zlb__ceiling_for(double bytes, size_t cache, int flushed);
/* How far above memory's ceiling (a copy's rate) an honest stream may run:
 * one that only reads or only writes, or a warm timer's row partly left
 * in the cache. */
#define ZLB__MEMORY_SLACK 1.25
/* A rate of GBPS above the bandwidth BW of CEILING: 1 when it may be
 * honest (%Peak N/A, never refused), 0 when no device does it (refused
 * under --integrity). */
int zlb__over_ceiling_honest(int ceiling, double gbps, double bw);
/* The banner's "peaks: ..." line, without the newline: the ceilings, each
 * missing one and why, and a cache that was rejected or not written. */
void zlb__peaks_describe(const zlb__peaks_t *p, uint32_t dtypes, zlb_strbuf_t *out);

/* identity.c */
int zlb__write_identity(zlb__run_t *r, int final, zlb_error_t *err);
/* A timer's name as reported: "queue-cal" for the calibrated queue timer
 * (a measurement's, or the run's, or the plan's), else zlb_timer_name's. */
const char *zlb__timer_label(zlb_timer_kind_t t, int calibrated);
const char *zlb__measured_timer_name(const zlb_measurement_t *m);
const char *zlb__run_timer_name(const zlb__run_t *r);
void zlb__json_row(zlb__run_t *r, zlb_dtype_t dt, const zlb__row_t *row);

#endif
