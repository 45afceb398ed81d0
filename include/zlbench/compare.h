/* Comparing two sets of results (zlbench compare, report --compare,
 * history check): the statistics (Mann-Whitney U, the ratio of medians
 * and its bootstrap interval), the caliber rule, row matching, verdicts and
 * the output formats. The rules: docs/compare.md. */
#ifndef ZLBENCH_COMPARE_H
#define ZLBENCH_COMPARE_H

#include <stddef.h>

#include "zlbench/base.h"
#include "zlbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- statistics -------------------------------------------------------- */

/*
 * Mann-Whitney U test of two sample sets, two-sided. `u` is U of `a`
 * (the number of pairs with a > b, ties counting one half); `p` its
 * p-value: exact (the distribution of U counted) when there are no ties
 * and the two sets hold at most 50 samples together, else the normal approximation
 * with the tie correction and a continuity correction of 0.5. `exact` says
 * which. With an empty set p is 1. Returns 0, or ZLB_EINVAL for a NaN.
 */
typedef struct zlb_utest {
  double u;
  double z; /* the normal approximation's z (0 when exact) */
  double p;
  int exact;
} zlb_utest_t;
int zlb_utest(const double *a, size_t na, const double *b, size_t nb, zlb_utest_t *out);

/** Median of n values (n > 0; the mean of the two middle ones for even n). */
double zlb_median(const double *v, size_t n);
/** Interquartile range over the median ((q75 - q25) / median), linear quantiles. */
double zlb_rel_iqr(const double *v, size_t n);

/*
 * The ratio of medians median(b) / median(a) and its 95 % percentile
 * bootstrap interval: `resamples` resamplings of each set with
 * replacement, drawn by a xorshift64* generator from `seed` (so the
 * interval is the same on every run). Sets longer than 500 samples are
 * thinned first to 500 evenly spaced order statistics.
 */
void zlb_ratio_ci(const double *a, size_t na, const double *b, size_t nb, int resamples,
                  unsigned long long seed, double *ratio, double *lo, double *hi);

/* ---- verdicts ---------------------------------------------------------- */

typedef enum zlb_cmpv {
  ZLB_V_SAME = 0,
  ZLB_V_FASTER,
  ZLB_V_SLOWER,
  ZLB_V_NOISY,
  ZLB_V_NA /* cannot compare: failed, no samples, or only on one side */
} zlb_cmpv_t;
const char *zlb_cmp_verdict_name(zlb_cmpv_t v);

typedef struct zlb_cmp_params {
  double threshold; /* minimum effect: |ratio - 1| beyond it (0.02) */
  double alpha;     /* significance level of the U test (0.05) */
  int resamples;    /* bootstrap resamples (400) */
  unsigned long long seed;
  double min_abs_ms; /* minimum effect in time: |median B - median A| beyond it
                      * (0.0001 ms = 0.1 us: what the graph timer resolves) */
  double throttled_threshold; /* minimum effect where a side ran with throttled
                               * clocks (0.5: a power cap slowed H200 rows by up
                               * to 23 % with the code unchanged) */
} zlb_cmp_params_t;
#define ZLB_CMP_PARAMS_INIT {0.02, 0.05, 400, 24301ULL, 1e-4, 0.5}

typedef struct zlb_cmp_stat {
  zlb_cmpv_t verdict;
  double ratio, lo, hi; /* B/A time ratio (> 1: B slower), 95 % interval */
  double p;             /* U test p-value */
  double spread;        /* max relative IQR of the two sets */
  size_t na, nb;
  char why[96];         /* why noisy or n/a */
} zlb_cmp_stat_t;

/*
 * The verdict of B against A from their samples (times: larger is
 * slower): same when |ratio - 1| <= threshold or the medians differ by no
 * more than min_abs_ms; otherwise slower or faster
 * when p < alpha, the interval excludes 1 and |ratio - 1| exceeds the
 * spread of both sets; otherwise noisy. Fewer than 2 samples on a side
 * is n/a.
 */
void zlb_cmp_verdict(const double *a, size_t na, const double *b, size_t nb,
                     const zlb_cmp_params_t *p, zlb_cmp_stat_t *out);

/* ---- result sets -------------------------------------------------------- */

/* What makes two measurements comparable: runs differing in any of these
 * are of different calibers. */
enum {
  ZLB_CAL_TIMER, ZLB_CAL_AUTOTUNE, ZLB_CAL_BACKEND, ZLB_CAL_DEVICE, ZLB_CAL_L2,
  ZLB_CAL_RETURN, ZLB_CAL_TOOL_MAJOR, ZLB_CAL_SHARED, ZLB_CAL_COUNT
};
/** Field name of a caliber entry ("timer", "autotune", ...). */
const char *zlb_caliber_field(int i);

typedef struct zlb_caliber {
  char v[ZLB_CAL_COUNT][96]; /* "" when the identity does not say */
  /* The identity's measured bandwidth ceilings, GB/s (memory, and the
   * last cache); NAN when it names none. Not compared: shown only. */
  double peak_gbps, cache_gbps;
} zlb_caliber_t;

/* One row of a results file. Strings are owned and never NULL. */
/* Trials per measurement at most (zlbench run --trials). */
#define ZLB_RES_MAX_TRIALS 16

typedef struct zlb_res_row {
  char *op, *family, *dtype, *shape, *status, *timer, *marker, *error;
  char *impl[2];       /* baseline, candidate names */
  double ms[2];        /* reported latency of each */
  double *samples[2];  /* every sample, ms */
  size_t nsamples[2];
  double trials[2][ZLB_RES_MAX_TRIALS]; /* each trial's value (--trials), ms */
  int ntrials[2];
  double speedup, pct_peak, bytes, flops, gbps, tflops, noise;
  size_t cal;          /* index of its run's caliber in the set */
  char *source;        /* the results file, relative to the set's root */
  double host_us[2];   /* host time per call of each (dispatch, launch), µs; NAN: none */
  char *ceiling;       /* what pct_peak is against: "memory", "cache", "" (not said) */
} zlb_res_row_t;

/* A host time (µs) above this is refused, as ZLB_RES_MAX_MS for latencies. */
#define ZLB_RES_MAX_HOST_US (ZLB_RES_MAX_MS * 1e3)

typedef struct zlb_res_set {
  zlb_res_row_t *rows;
  size_t n, alloc;
  zlb_caliber_t *cals; /* one per results file */
  size_t ncal;
  size_t nfiles;
  char root[1024];
  /* What the folder scan skipped and why, for the caller to show. */
  zlb_strvec_t warnings;
} zlb_res_set_t;
#define ZLB_RES_SET_INIT {NULL, 0, 0, NULL, 0, 0, {0}, ZLB_STRVEC_INIT}

/* Limits on untrusted input. */
#define ZLB_RES_MAX_FILES 100000
#define ZLB_RES_MAX_ROWS 1000000
#define ZLB_RES_MAX_SAMPLES 1000000 /* per measurement */
/* A sample, trial or latency (ms) above this is refused: 1e7 ms is about
 * 2.8 hours per call, beyond any benchmark, and keeps every value a table
 * prints within a few digits. */
#define ZLB_RES_MAX_MS 1e7

/*
 * Load `path`: a results file (schema zlbench.results/1), or a folder: every
 * `results.json` under it (recursively, in byte order of paths; folders
 * named `attempts` and symbolic links skipped). Each file's caliber comes
 * from the `run_identity.json` beside it (empty fields when absent). Every
 * member read is checked for type; a bad file is ZLB_EPARSE naming it and
 * the member. A folder with no results file is ZLB_ENOTFOUND.
 */
int zlb_res_load(zlb_res_set_t *s, const char *path, zlb_error_t *err);
/** Parse one results text (for tests); `cal` is its caliber (may be NULL). */
int zlb_res_parse(zlb_res_set_t *s, const char *text, size_t len, const char *source,
                  const zlb_caliber_t *cal, zlb_error_t *err);
/** Read a run_identity.json text into a caliber. */
int zlb_caliber_parse(const char *text, size_t len, const char *what, zlb_caliber_t *cal,
                      zlb_error_t *err);
void zlb_res_release(zlb_res_set_t *s);

/* ---- comparison --------------------------------------------------------- */

typedef enum zlb_cmp_impl { ZLB_CMP_CANDIDATE = 0, ZLB_CMP_BASELINE, ZLB_CMP_SPEEDUP } zlb_cmp_impl_t;

typedef struct zlb_cmp_pair {
  const zlb_res_row_t *a, *b; /* either may be NULL: unmatched */
  zlb_cmp_stat_t st;
  double a_ms, b_ms;
} zlb_cmp_pair_t;

typedef struct zlb_cmp_mean {
  char key[160]; /* "op", "family" or "dtype" value */
  double gmean;  /* geometric mean of the ratios */
  size_t n;
} zlb_cmp_mean_t;

typedef struct zlb_cmp {
  zlb_cmp_pair_t *pairs; /* matched first (regressions first), then only-A, only-B */
  size_t n, nmatched;
  size_t count[5];       /* per verdict, matched pairs */
  unsigned caliber_diff; /* bit per ZLB_CAL_* that differs in some pair */
  char caliber_a[ZLB_CAL_COUNT][96], caliber_b[ZLB_CAL_COUNT][96]; /* first difference */
  zlb_cmp_mean_t *means[3]; /* by operator, family, dtype */
  size_t nmeans[3];
  double gmean;             /* over every compared row */
  zlb_cmp_impl_t impl;
  zlb_cmp_params_t params;
} zlb_cmp_t;

/*
 * Match the rows of `a` and `b` by operator, the compared implementation's
 * name (candidate or baseline), dtype and shape, and give each matched pair
 * a verdict. Rows of one side without a partner are kept as unmatched
 * pairs. The caliber of each matched pair's runs is compared; the fields
 * that differ are in caliber_diff.
 */
void zlb_cmp_run(zlb_cmp_t *c, const zlb_res_set_t *a, const zlb_res_set_t *b,
                 zlb_cmp_impl_t impl, const zlb_cmp_params_t *p);
void zlb_cmp_release(zlb_cmp_t *c);

typedef enum zlb_cmp_format {
  ZLB_FMT_TEXT = 0, ZLB_FMT_MD, ZLB_FMT_CSV, ZLB_FMT_JSON
} zlb_cmp_format_t;
/*
 * Render a comparison. `label_a`/`label_b` name the sides. `color`: ANSI
 * colours in the text format. When calibers differ (caliber_diff), every
 * row's note says which fields.
 */
void zlb_cmp_format(const zlb_cmp_t *c, zlb_cmp_format_t fmt, const char *label_a,
                    const char *label_b, int color, zlb_strbuf_t *out);

#ifdef __cplusplus
}
#endif
#endif
