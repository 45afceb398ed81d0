/* Operator ABI v3: what an operator library exports and what the harness
 * gives it. An operator library is a shared object exporting one function,
 * zlb_ops_register(); it needs no libzlbench symbols. */
#ifndef ZLBENCH_OP_H
#define ZLBENCH_OP_H

#include <stddef.h>
#include <stdint.h>

#include "zlbench/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: compare_device; 3: setup; 4: the backend vtable's launch_empty (a
 * library that registers a backend hands the harness its vtable). */
#define ZLB_OP_ABI_VERSION 4u
#define ZLB_MAX_DIMS 8
#define ZLB_MAX_ARGS 4
#define ZLB_MAX_TENSORS 8

/* Which implementation a call is about. */
enum { ZLB_BASELINE = 0, ZLB_CANDIDATE = 1 };

/*
 * One shape entry of a shape file. A flat entry [M, N] gives dims; a
 * FlagGems-style nested entry [[M, N], dim, keepdim] gives dims [M, N] and
 * args [dim, keepdim] (booleans as 0/1).
 */
typedef struct zlb_shape {
  int ndim;
  int64_t dims[ZLB_MAX_DIMS];
  int nargs;
  int64_t args[ZLB_MAX_ARGS];
} zlb_shape_t;

/* How the harness fills an input tensor before a case runs. */
typedef enum zlb_fill {
  ZLB_FILL_NORMAL = 0, /* normal(lo = mean, hi = stddev; 0,0 means 0,1) */
  ZLB_FILL_UNIFORM,    /* uniform in [lo, hi) */
  ZLB_FILL_INT,        /* integers uniform in [lo, hi) */
  ZLB_FILL_BOOL,       /* true with probability lo */
  ZLB_FILL_NONE        /* the operator fills it itself (env->upload) */
} zlb_fill_t;

/*
 * A tensor the harness allocates on the device. case_init describes it
 * (name, dtype, ndim, dims, fill); the harness computes numel, allocates
 * `data` with the backend, fills inputs, and frees everything after
 * case_release. Tensors are dense and row-major.
 */
typedef struct zlb_tensor {
  const char *name;
  zlb_dtype_t dtype;
  int ndim;
  int64_t dims[ZLB_MAX_DIMS];
  int64_t numel;
  zlb_fill_t fill;
  double lo, hi;
  void *data;
} zlb_tensor_t;

/* How candidate output is judged against the baseline's. */
typedef enum zlb_check {
  ZLB_CHECK_CLOSE = 0, /* |c - b| <= atol * reduce_n + rtol(dtype) * |b|; NaN fails */
  ZLB_CHECK_EXACT,     /* bit-identical */
  ZLB_CHECK_CUSTOM,    /* the operator's compare() decides */
  ZLB_CHECK_STAT,      /* each output's mean and variance near stat_mean/stat_var */
  ZLB_CHECK_NONE       /* nothing to compare (documented per operator) */
} zlb_check_t;

/*
 * One benchmark case: an operator at one shape and dtype. The harness sets
 * dtype, shape and level; case_init sets the rest it needs.
 *
 * Life of a case: case_init -> the harness allocates every tensor, fills
 * the inputs with random data (never all zeros; fixed seed) -> prepare()
 * of both impls -> accuracy: outputs poisoned (baseline's bytes set to
 * 0xFF, candidate's to 0xFE, so an element neither writes differs and a
 * float one is NaN), one call of each impl, compare -> timing of each impl
 * -> release() of both impls -> case_release -> tensors freed. An operator
 * whose outputs are only partly written (e.g. nonzero: a count, then that
 * many indices) must use ZLB_CHECK_CUSTOM and compare only what counts.
 */
typedef struct zlb_case {
  zlb_dtype_t dtype;
  zlb_shape_t shape;
  int level; /* 0 core, 1 comprehensive */

  int n_in;
  zlb_tensor_t in[ZLB_MAX_TENSORS];
  int n_out;
  /* out[ZLB_BASELINE][k] is described by case_init; the harness gives the
   * candidate an identical set out[ZLB_CANDIDATE][k]. */
  zlb_tensor_t out[2][ZLB_MAX_TENSORS];

  double bytes;       /* bytes moved per call (reads + writes), for GB/s */
  double flops;       /* floating-point operations per call, for TFLOP/s */
  char detail[256];   /* size detail: "[64, 64], dim=1" (top-level ", " separates items) */
  zlb_check_t check;
  double reduce_n;    /* terms summed into one output element (scales atol); 0 = 1 */
  double rtol, atol;  /* override the per-dtype tolerances when > 0 */
  double stat_mean, stat_var; /* ZLB_CHECK_STAT expectations */
  char config[2][48]; /* launch configuration chosen by each impl, reported in the row */
  void *priv;         /* the operator's own per-case state */
} zlb_case_t;

/* Host copies of a case's tensors, for compare(). */
typedef struct zlb_host_view {
  const void *in[ZLB_MAX_TENSORS];
  const void *out[2][ZLB_MAX_TENSORS];
} zlb_host_view_t;

typedef struct zlb_env zlb_env_t;

/* A philox-style counter RNG state: seed plus offset. */
typedef struct zlb_rng {
  uint64_t seed;
  uint64_t offset;
} zlb_rng_t;

/*
 * What the harness gives an operator. Function pointers return 0 or a
 * negative ZLB error code. During graph capture `rng` points at a scratch
 * state, so a failed capture cannot disturb the real one.
 */
struct zlb_env {
  uint32_t abi_version;
  const char *backend; /* "cuda", "host", ... */
  int device;          /* ordinal as this process sees it */
  int autotune;        /* 1: impls may choose among launch configurations */
  zlb_rng_t *rng;      /* impls flagged ZLB_IMPL_USES_RNG read seed/offset and advance offset */
  int sm_count, cc_major, cc_minor;
  size_t l2_bytes;
  int (*alloc)(zlb_env_t *env, size_t bytes, void **ptr); /* device memory */
  void (*free)(zlb_env_t *env, void *ptr);
  int (*upload)(zlb_env_t *env, void *dst, const void *src, size_t bytes);
  int (*download)(zlb_env_t *env, void *dst, const void *src, size_t bytes);
  char *errbuf; /* an impl that fails writes the reason here */
  size_t errlen;
  void *harness; /* private to the harness */
};

/* Implementation flags. */
#define ZLB_IMPL_NO_CAPTURE 0x1u /* synchronises with the host: capture is expected to be refused */
#define ZLB_IMPL_USES_RNG 0x2u   /* draws random numbers from env->rng */
#define ZLB_IMPL_AUTOTUNES 0x4u  /* prepare() picks a launch configuration when env->autotune */

/*
 * A baseline or candidate implementation. enqueue() launches one call on
 * `stream` (a backend stream handle, e.g. a CUstream/cudaStream_t) and must
 * not synchronise unless flagged NO_CAPTURE. It returns 0, a positive
 * vendor runtime error code (e.g. a cudaError_t), or a negative ZLB code,
 * and on failure writes a message into env->errbuf.
 */
typedef struct zlb_impl {
  const char *name; /* "cublas", "cub", "ref", "zlb", ... */
  unsigned flags;
  int (*prepare)(zlb_env_t *env, zlb_case_t *c, int which); /* optional; may launch and synchronise */
  int (*enqueue)(zlb_env_t *env, zlb_case_t *c, int which, void *stream);
  void (*release)(zlb_env_t *env, zlb_case_t *c, int which); /* optional */
} zlb_impl_t;

typedef struct zlb_op {
  uint32_t abi_version; /* ZLB_OP_ABI_VERSION */
  const char *name;     /* unique per backend: "softmax" */
  const char *family;   /* shape-lookup class: "softmax", "reduction", ... */
  const char *backend;  /* "cuda", "host", ... */
  uint32_t dtypes;      /* ZLB_DT_BIT mask */
  const char *shape_desc; /* "M, N" */
  const char *doc;        /* one line for `zlbench list` */
  /* Describe tensors, bytes/flops and detail for c->shape and c->dtype.
   * Returns 0, or ZLB_EINVAL (negative) with env->errbuf set when the shape
   * does not fit the operator. */
  int (*case_init)(zlb_env_t *env, zlb_case_t *c);
  void (*case_release)(zlb_env_t *env, zlb_case_t *c); /* optional */
  /* ZLB_CHECK_CUSTOM: 0 when the candidate's outputs are acceptable; else
   * nonzero with a message in msg. */
  int (*compare)(zlb_env_t *env, const zlb_case_t *c, const zlb_host_view_t *v,
                 char *msg, size_t msglen);
  zlb_impl_t baseline;
  zlb_impl_t candidate;
  /* Optional, ZLB_CHECK_CUSTOM: compare()'s judgement made on the device,
   * reading the case's tensors where they are (c->in[i].data,
   * c->out[w][k].data) with work enqueued on `stream`, so that large
   * outputs need not be copied to the host. Must give the same verdict and
   * the same message as compare(), and synchronise `stream` before it
   * returns. Returns 0 when the candidate's outputs are acceptable,
   * ZLB_EMISMATCH when they are not (message in msg), ZLB_EUNSUPPORTED to
   * have the harness run compare() on host copies instead, or another
   * error code (a negative ZLB code or a positive vendor code) with
   * env->errbuf set. Used where the backend checks on the device (its
   * memory is not host memory, ZL_HOST_CHECK is not 1). */
  int (*compare_device)(zlb_env_t *env, const zlb_case_t *c, void *stream, char *msg,
                        size_t msglen);
  /* Optional: called once per process before the operator's first case,
   * with the dtypes the run will use, for first-call initialisation that
   * belongs to no row (a vendor library's handle and first call: about
   * 0.1 s for cuBLAS on an H200). The run reports its time as the
   * operator's set-up. Returns 0, or an error code with env->errbuf set:
   * the failure is reported and each case then succeeds or fails on its
   * own. */
  int (*setup)(zlb_env_t *env, uint32_t dtypes);
} zlb_op_t;

struct zlb_backend_desc;

/* Passed to zlb_ops_register(). */
typedef struct zlb_op_registrar {
  uint32_t abi_version;
  void *ctx; /* private to the harness */
  /* Register an operator; `op` must outlive the process (static storage). */
  int (*add_op)(struct zlb_op_registrar *r, const zlb_op_t *op);
  /* Register an extra backend (see device.h); `desc` must be static. */
  int (*add_backend)(struct zlb_op_registrar *r, const struct zlb_backend_desc *desc);
} zlb_op_registrar_t;

#define ZLB_OP_ENTRY_SYMBOL "zlb_ops_register"
/** The one symbol an operator library exports. Returns 0 on success. */
typedef int (*zlb_ops_register_fn)(zlb_op_registrar_t *r);

#if defined(__GNUC__)
#define ZLB_OP_EXPORT __attribute__((visibility("default")))
#else
#define ZLB_OP_EXPORT
#endif

#ifdef __cplusplus
}
#endif
#endif
