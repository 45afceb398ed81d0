/* Paired A/B in one process (`zlbench ab`): two operator libraries, or one
 * against itself, timed in interleaved blocks on the same inputs, stream
 * and device, with a verdict from the paired differences (docs/ab.md). */
#ifndef ZLBENCH_AB_H
#define ZLBENCH_AB_H

#include <stddef.h>
#include <stdint.h>

#include "zlbench/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks per side at most (--blocks). */
#define ZLB_AB_MAX_BLOCKS 64

typedef enum zlb_ab_verdict {
  ZLB_AB_SAME = 0,   /* the interval lies inside +-threshold */
  ZLB_AB_FASTER,     /* B faster: the interval lies below -threshold */
  ZLB_AB_SLOWER,     /* B slower: the interval lies above +threshold */
  ZLB_AB_AMBIGUOUS   /* anything else (too noisy, or too few pairs) */
} zlb_ab_verdict_t;

/** "same", "faster", "slower", "ambiguous". */
const char *zlb_ab_verdict_name(zlb_ab_verdict_t v);

/* The verdict of one row. */
typedef struct zlb_ab_stat {
  size_t pairs;          /* pairs used (both blocks positive and finite) */
  double a_ms, b_ms;     /* medians of the blocks (clock-normalised where noted) */
  double ratio;          /* exp(median d): B / A */
  double lo, hi;         /* the interval of B / A */
  int normalised;        /* pairs whose times were scaled by their clocks */
  zlb_ab_verdict_t verdict;
} zlb_ab_stat_t;

/**
 * The verdict from n pairs of block times a[i], b[i] (ms, A's block and
 * the B block next to it). fa, fb (may be NULL): each block's mean SM clock
 * in MHz, 0 or less where unknown. Where both blocks of a pair have a
 * clock and they differ, each time is scaled to the row's reference clock
 * (t * f / f_ref; f_ref: the median of the known clocks) before
 * d_i = ln(b_i / a_i). Point estimate: the median of d. Interval: the
 * distribution-free interval of that median from order statistics
 * [d_(k), d_(n+1-k)], k the largest with sign-test coverage >= 90 % (93 %
 * for 8 pairs: the 2nd smallest and 2nd largest), as exp() of its ends; one
 * disturbed pair cannot move it. With T = threshold (0.02 = 2 %): slower
 * when lo > 1 + T, faster when hi < 1 / (1 + T), same when both ends lie
 * inside [1 / (1 + T), 1 + T], else ambiguous; fewer than 5 pairs (no
 * such interval) is ambiguous.
 */
void zlb_ab_stats(const double *a, const double *b, const double *fa, const double *fb,
                  size_t n, double threshold, zlb_ab_stat_t *out);

/* The order of the two blocks of each pair (--order). */
typedef enum zlb_ab_order {
  ZLB_AB_ORDER_RANDOM = 0, /* each pair's order drawn (seeded), half the pairs A first */
  ZLB_AB_ORDER_ABBA        /* A B B A A B ...: pair j has A first when j is even */
} zlb_ab_order_t;

/** "random", "abba". */
const char *zlb_ab_order_name(zlb_ab_order_t o);

/**
 * The order of n pairs (n <= ZLB_AB_MAX_BLOCKS): a_first[j] = 1 when pair
 * j runs A's block before B's. ABBA alternates from A first. RANDOM is a
 * seeded shuffle of the same pattern ((n + 1) / 2 pairs A first): the same seed gives the same order, and no periodic disturbance
 * of the device or host can line up with one side, as with a fixed
 * pattern it can (a disturbance of period 4 blocks lands on A's blocks in
 * A B B A ... every time).
 */
void zlb_ab_pair_order(zlb_ab_order_t order, uint64_t seed, int n, unsigned char *a_first);

typedef struct zlb_ab_opts {
  zlb_run_opts_t run;        /* backend, device, dtypes, shapes, timer, budgets, seed,
                              * libs (side A), out_dir, json_path, emit, interrupted */
  const zlb_strvec_t *ops;   /* operator names; NULL or empty: every operator of A */
  const char *lib_b;         /* side B's library; NULL: B is A (self-compare) */
  int blocks;                /* blocks per side (default 8) */
  double threshold;          /* relative, default 0.02 */
  zlb_ab_order_t order;      /* default random */
} zlb_ab_opts_t;

void zlb_ab_opts_init(zlb_ab_opts_t *o);

typedef struct zlb_ab_result {
  int rows, failed;          /* failed: accuracy, set-up or launch errors */
  int same, faster, slower, ambiguous;
  int self;                  /* B is A: faster and slower are false verdicts */
  int interrupted, fatal;
  int skipped;               /* operators that could not run here (counted in failed) */
  int skip_code;             /* the first one's ZLB error code (0: none) */
  double seconds;
  char stop_reason[768];
} zlb_ab_result_t;

/**
 * Run the A/B comparison. Writes ab.log and results.json into
 * o->run.out_dir. Returns 0 when every case was attempted (see res), or a
 * ZLB error code with err set (usage, unavailable backend, unknown
 * operator, unwritable output, device fault).
 */
int zlb_ab(const zlb_ab_opts_t *o, zlb_ab_result_t *res, zlb_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
