/* Shared between the test backend and the misbehaving operators (one
 * shared object: the operators can see the backend's stream state). */
#ifndef ZLB_TEST_INT_H
#define ZLB_TEST_INT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "zlbench/device.h"
#include "zlbench/op.h"

/* Vendor codes of the test backend (the CUDA numbering, for familiarity). */
enum {
  TEST_ERR_CAPTURE_UNSUPPORTED = 900,
  TEST_ERR_CAPTURE_INVALIDATED = 901,
  TEST_ERR_ILLEGAL_ADDRESS = 700,
  TEST_ERR_NOT_SUPPORTED = 801
};

/* What a capture recorded besides its time (the calibrated graph timer's
 * event nodes and empty kernels): a replay stamps each event, and traces
 * each empty kernel, at its offset from the replay's start. */
#define TEST_MAX_MARKS 4096
struct test_mark {
  void *event;             /* the event of an event node; NULL: a kernel */
  unsigned long long off;  /* ns from the start of the graph */
  unsigned long long ns;   /* a flush traced as a kernel this long; 0: an empty kernel */
};

struct test_stream {
  int capturing;
  int invalidated;
  unsigned long long capture_start_ns;
  int held;    /* a hold is in force (read and written atomically) */
  int queued;  /* entries enqueued since the hold began */
  unsigned id; /* the id the tracer gives its spans (from 1) */
  /* Memsets captured so far: their emulated cost, counted in the graph's
   * time instead of their wall time (t_memset). */
  unsigned long long capture_memset_ns;
  struct test_mark marks[TEST_MAX_MARKS]; /* recorded by the capture in progress */
  int nmarks;
};

/* One entry (a launch, an event) enqueued on `s`: on a held stream it
 * waits in the emulated launch queue, and with ZL_TEST_QUEUE_DEPTH=N an
 * entry beyond the N-th blocks the caller until the hold is released, as a
 * launch into a full queue does on a real device. */
void zlb_test_stream_enqueue(struct test_stream *s);

/* Now on `s`'s timeline, in ns: the wall clock, which its events read, or
 * during a capture the capturing thread's CPU time, which is what the
 * graph's time is made of (a preempted capture is not a longer graph). An
 * operator that emulates a kernel of a given length spins on it. */
unsigned long long zlb_test_stream_now_ns(const struct test_stream *s);

extern const zlb_backend_desc_t zlb_test_backend_desc;
extern const zlb_backend_desc_t zlb_test2_backend_desc;
extern const zlb_backend_desc_t zlb_test3_backend_desc;
extern const zlb_backend_desc_t zlb_testq_backend_desc;
/* The index of the last device_select call, -1 before one. */
extern int zlb_test_selected_device;
/* Make the next health probe fail: the context is "poisoned". */
void zlb_test_backend_poison(void);
/* The operators with invalid cases (bad_cases.c). */
int zlb_test_register_bad_cases(zlb_op_registrar_t *r);
/* The "test2" backend's operators (pinned_ops.c). */
int zlb_test_register_pinned(zlb_op_registrar_t *r);
/* The operator with its own host and device compares (custom_ops.c). */
int zlb_test_register_custom(zlb_op_registrar_t *r);
/* Operators with a steady time and ZL_TEST_SLOWDOWN (steady_ops.c). */
int zlb_test_register_steady(zlb_op_registrar_t *r);
/* Operators that game the benchmark, for --integrity (cheat_ops.c). */
int zlb_test_register_cheats(zlb_op_registrar_t *r);
/* A kernel of `ns` on the stream with tracer id `stream`, as the test
 * backend's tracer sees it while tracing (nothing runs). */
void zlb_test_trace_kernel(unsigned stream, unsigned long long ns);

/* A copy-shaped case every test operator uses: input "x" with the case's
 * shape and dtype (normal fill), output "out" like it, bytes read and
 * written, the detail "[N]" (", tag=TAG" when tag is not NULL) and the
 * check. Returns N, the element count. */
static inline int64_t zlb_test_copy_case(zlb_case_t *c, const char *tag, zlb_check_t check) {
  int64_t n = 1;
  for (int i = 0; i < c->shape.ndim; i++)
    n *= c->shape.dims[i];
  c->n_in = 1;
  c->in[0].name = "x";
  c->in[0].dtype = c->dtype;
  c->in[0].ndim = c->shape.ndim;
  memcpy(c->in[0].dims, c->shape.dims, sizeof(c->shape.dims));
  c->in[0].fill = ZLB_FILL_NORMAL;
  c->n_out = 1;
  c->out[0][0] = c->in[0];
  c->out[0][0].name = "out";
  c->bytes = 2.0 * (double)n * (double)zlb_dtype_size(c->dtype);
  if (tag)
    snprintf(c->detail, sizeof(c->detail), "[%lld], tag=%s", (long long)n, tag);
  else
    snprintf(c->detail, sizeof(c->detail), "[%lld]", (long long)n);
  c->check = check;
  return n;
}

/* The descriptor of one test operator (family "test", shapes "N"), shared
 * by the misbehaving, invalid and pinned operators. */
#define ZLB_TEST_OP_DESC(NAME, BACKEND, DTYPES, DOC, INIT, BASE_ENQ, CAND_PREP, CAND_ENQ) \
  static const zlb_op_t op_##NAME = {                                                    \
      .abi_version = ZLB_OP_ABI_VERSION,                                                 \
      .name = #NAME,                                                                     \
      .family = "test",                                                                  \
      .backend = BACKEND,                                                                \
      .dtypes = DTYPES,                                                                  \
      .shape_desc = "N",                                                                 \
      .doc = DOC,                                                                        \
      .case_init = INIT,                                                                 \
      .baseline = {"ref", 0, NULL, BASE_ENQ, NULL},                                      \
      .candidate = {"test", 0, CAND_PREP, CAND_ENQ, NULL},                               \
  };

#endif
