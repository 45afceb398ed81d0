/* Run layer: one operator in one process. Cases, accuracy, timing, the
 * FlagGems-layout report, run.log, run_identity.json and the JSON results.
 * The library produces text through a callback and never prints. */
#ifndef ZLBENCH_RUN_H
#define ZLBENCH_RUN_H

#include <stdint.h>

#include "zlbench/base.h"
#include "zlbench/device.h"
#include "zlbench/error.h"
#include "zlbench/ops.h"
#include "zlbench/timing.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Trials per row at most (zlb_run_opts_t.trials). */
#define ZLB_RUN_MAX_TRIALS 16

typedef struct zlb_run_opts {
  const char *op;
  const char *backend;       /* name, alias, "auto" or NULL (auto) */
  int device;                /* ordinal as this process sees it */
  uint32_t dtypes;           /* ZLB_DT_BIT mask; 0: the operator's float dtypes */
  const char *shape_file;    /* NULL: assets/shapes.yaml (shapes_host.yaml on host) */
  int level;                 /* 0 core, 1 comprehensive */
  zlb_timer_kind_t timer;
  zlb_timing_opts_t timing;  /* flush_bytes (--flush-mib): 0 the defaults (the backend's
                              * direct flush, twice the L2 for --l2 cold); else the size of
                              * every flush, refused below the device's L2, with no_flush,
                              * or where nothing is flushed */
  int no_flush;              /* 1: no L2 flush in the direct timer */
  const zlb_strvec_t *deny_ops; /* --deny-capture names (may be NULL) */
  const char *deny_file;     /* NULL: assets/capture_deny.yaml */
  int autotune;
  uint64_t seed;
  const char *out_dir;       /* run.log, run_identity.json (created) */
  const char *json_path;     /* optional: every sample */
  int color;                 /* ANSI styles in emitted text */
  const zlb_strvec_t *libs;  /* --lib paths (may be NULL) */
  int argc;
  char **argv;               /* recorded in the identity */
  void (*emit)(void *ctx, const char *text); /* terminal text */
  void *emit_ctx;
  volatile int *interrupted; /* nonzero: stop after the current case */
  int verbose;               /* 1: each row's phase times (ms) after it */
  int trials;                /* each row measured this many times, each on freshly
                              * allocated tensors (1..16; default 1) */
  int integrity;             /* --integrity: check the candidate on a random timed sample
                              * with fresh inputs, refuse work on other streams and rates
                              * above the measured ceilings (docs/integrity.md) */
} zlb_run_opts_t;

/** Defaults: backend auto, device 0, timer auto, timing defaults, seed 0x5eed. */
void zlb_run_opts_init(zlb_run_opts_t *o);

typedef struct zlb_run_result {
  int rows, ok, failed;
  int fatal;        /* stopped by a device fault */
  int poisoned;     /* stopped: BENCHMARK_CAPTURE_POISONED */
  int interrupted;
  char stop_reason[768];
  double seconds;
  char log_path[512];
} zlb_run_result_t;

/**
 * Benchmark one operator. Returns 0 when every case was attempted (rows may
 * have FAILED: see res), ZLB_EFATAL or ZLB_EPOISONED when the run stopped
 * early for a device fault or a poisoned capture (logs written, res
 * filled), ZLB_EINTR when interrupted, or another error before anything was
 * measured (unknown operator, backend unavailable, unwritable output,
 * malformed input file) with err naming the problem.
 */
int zlb_run(const zlb_run_opts_t *o, zlb_run_result_t *res, zlb_error_t *err);

/**
 * The flush options' conflicts that need no device: --no-flush with
 * --flush-mib or with --l2 cold (ZLB_EINVAL naming both). zlb_run and
 * zlb_run_plan check them too; a caller that hands the options to other
 * processes (zlbench batch) checks them once here.
 */
int zlb_run_check_flush(const zlb_run_opts_t *o, zlb_error_t *err);
/** --graph-calibrate's conflicts that need no device: with
 * --queue-calibrate, without --l2 cold, with a --timer other than graph
 * or auto (ZLB_EINVAL). The run checks the resolved timer and the
 * backend as well. */
int zlb_run_check_calibration(const zlb_run_opts_t *o, zlb_error_t *err);

/**
 * Describe, without running anything, the plan `zlbench plan` prints: the
 * backend's capabilities, the timer they produce, and the stages.
 */
int zlb_run_plan(const zlb_run_opts_t *o, zlb_strbuf_t *out, zlb_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
