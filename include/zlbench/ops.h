/* Ops layer, harness side: loading operator libraries, the operator set,
 * dtype names, shape files, input filling and the accuracy check. The ABI
 * operator libraries implement is in op.h. */
#ifndef ZLBENCH_OPS_H
#define ZLBENCH_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "zlbench/base.h"
#include "zlbench/error.h"
#include "zlbench/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- operator set ------------------------------------------------------ */

typedef struct zlb_op_entry {
  const zlb_op_t *op;
  char *library; /* path of the library that registered it (owned) */
} zlb_op_entry_t;

typedef struct zlb_op_set {
  zlb_op_entry_t *v;
  size_t n, alloc;
  zlb_strvec_t libraries; /* every library loaded, in order */
} zlb_op_set_t;

#define ZLB_OP_SET_INIT {NULL, 0, 0, ZLB_STRVEC_INIT}

/**
 * dlopen `path` and call its zlb_ops_register(). Operators it registers are
 * added to `set`; backends it registers go to the global registry. Errors
 * name the library: missing file, missing entry point, ABI mismatch, a
 * duplicate operator, or a registration failure.
 */
int zlb_ops_load_library(zlb_op_set_t *set, const char *path, zlb_error_t *err);
/** Libraries named in ZL_OP_LIBS (':'-separated). */
int zlb_ops_load_env(zlb_op_set_t *set, zlb_error_t *err);
/**
 * The built-in library for `backend` (libzlb_ops_<backend>.so in the
 * library folder). ZLB_ENOTFOUND when this build has none for it.
 */
int zlb_ops_load_builtin(zlb_op_set_t *set, const char *backend, zlb_error_t *err);
/** Folder of the built-in libraries: $ZL_LIB_DIR or <exe>/../lib/zlbench. */
int zlb_ops_libdir(zlb_strbuf_t *out, zlb_error_t *err);
/** Folder of the assets: $ZL_ASSETS_DIR, <exe>/../share/zlbench/assets, or the source tree's. */
int zlb_assets_dir(zlb_strbuf_t *out, zlb_error_t *err);
/** The operator `name` for `backend`, or NULL. */
const zlb_op_entry_t *zlb_ops_find(const zlb_op_set_t *set, const char *name,
                                   const char *backend);
/** 1 when some operator of the set is `backend`'s (a library serves it). */
int zlb_ops_serves(const zlb_op_set_t *set, const char *backend);
/** An "unknown operator" error with close names and the valid families. */
int zlb_ops_unknown(const zlb_op_set_t *set, const char *name, const char *backend,
                    zlb_error_t *err);
void zlb_op_set_release(zlb_op_set_t *set);

/* ---- dtypes -------------------------------------------------------------- */

/** Parse "float16", "fp16", "half", "torch.float16", "bf16", ... */
int zlb_dtype_parse(const char *s, zlb_dtype_t *out);
/**
 * Parse a comma-separated list into a bit mask (ZLB_DT_BIT). Unknown names
 * are ZLB_EINVAL with a message listing the valid ones.
 */
int zlb_dtype_list_parse(const char *csv, uint32_t *mask, zlb_error_t *err);
/** "float16,bfloat16,float32" for a mask (canonical order). */
void zlb_dtype_mask_format(uint32_t mask, zlb_strbuf_t *out);

/* ---- shapes ---------------------------------------------------------------- */

typedef struct zlb_shape_list {
  zlb_shape_t *v;
  size_t n;
  char source[512]; /* file the shapes came from, or "built-in" */
  char key[128];    /* key that matched, or "default" */
  char desc[64];    /* shape_desc */
} zlb_shape_list_t;

#define ZLB_SHAPE_LIST_INIT {NULL, 0, {0}, {0}, {0}}

/**
 * Shapes for an operator from `file` (NULL: the built-in list): looked up by
 * operator name, then family, then the family's FlagGems benchmark classes,
 * then "default"/"Benchmark", then the built-in list (docs/shapes.md).
 * `level` 1 appends comprehensive_shapes. Malformed files are ZLB_EPARSE
 * naming file, line and problem.
 */
int zlb_shapes_resolve(const char *file, const char *op, const char *family,
                       int level, int host, zlb_shape_list_t *out, zlb_error_t *err);
void zlb_shape_list_release(zlb_shape_list_t *l);
/** "[64, 64]" or "[[64, 64], 0, 1]". */
void zlb_shape_format(const zlb_shape_t *s, char *buf, size_t len);

/* ---- inputs and accuracy ------------------------------------------------- */

struct zlb_backend;
struct zlb_stream_s;
/**
 * The same check as zlb_check_outputs, on the device, for CLOSE, EXACT and
 * STAT cases (the outputs stay where they are; same messages). Returns 0,
 * ZLB_EMISMATCH, ZLB_EUNSUPPORTED when the backend or the dtype has no
 * device check (check on the host instead), or a device error.
 */
int zlb_check_outputs_device(struct zlb_backend *b, struct zlb_stream_s *s,
                             const zlb_case_t *c, zlb_error_t *err);


/** Fill `t->numel` elements at `host` per t->fill, from a seeded generator. */
void zlb_fill_host(const zlb_tensor_t *t, void *host, uint64_t seed);
/** Default relative tolerance: float32 1.3e-6, float16 1e-3, bfloat16 1.6e-2. */
double zlb_rtol(zlb_dtype_t d);
/** Default absolute tolerance per reduced term (1e-4, as FlagGems). */
double zlb_atol(zlb_dtype_t d);
/**
 * Compare the candidate's outputs with the baseline's per c->check (and the
 * operator's compare() for CUSTOM). 0 when acceptable; otherwise
 * ZLB_EMISMATCH with a message naming output, element and values.
 */
int zlb_check_outputs(const zlb_op_t *op, zlb_env_t *env, const zlb_case_t *c,
                      const zlb_host_view_t *v, zlb_error_t *err);
/**
 * ZLB_CHECK_STAT for one array: its mean and variance must lie within
 * 6 standard errors of `mean`/`var` (plus a small slack for rounding).
 */
int zlb_check_stat(zlb_dtype_t d, const void *data, int64_t n, double mean,
                   double var, char *msg, size_t len);

/* ---- capture deny list ------------------------------------------------------ */

/**
 * Read a deny list: a YAML sequence of operator names, or a map of name to
 * reason (a list of {op, reason} maps works too). Appends names to `ops`.
 */
int zlb_deny_load(const char *path, zlb_strvec_t *ops, zlb_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
