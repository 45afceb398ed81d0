/* JSON: a streaming writer over zlb_strbuf (after git's json-writer) and a
 * small DOM reader that also accepts NaN, Infinity and -Infinity (Python's
 * json.dumps writes them; FlagGems logs carry them). */
#ifndef ZLBENCH_JSON_H
#define ZLBENCH_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "zlbench/base.h"
#include "zlbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- writer --------------------------------------------------------- */

/*
 * Writes pretty JSON (2-space indent) into `out`. Non-finite doubles are
 * written as null. Nesting depth is limited to 32.
 */
typedef struct zlb_jw {
  zlb_strbuf_t out;
  int depth;
  int first[33];   /* no member written yet at this depth */
  int pretty;
} zlb_jw_t;

void zlb_jw_init(zlb_jw_t *jw, int pretty);
void zlb_jw_release(zlb_jw_t *jw);
void zlb_jw_object_begin(zlb_jw_t *jw);  /* top level or array element */
void zlb_jw_object_end(zlb_jw_t *jw);
void zlb_jw_array_begin(zlb_jw_t *jw);
void zlb_jw_array_end(zlb_jw_t *jw);
/* Members of the current object. */
void zlb_jw_key_object(zlb_jw_t *jw, const char *key);   /* then members, object_end */
void zlb_jw_key_array(zlb_jw_t *jw, const char *key);    /* then elements, array_end */
void zlb_jw_key_string(zlb_jw_t *jw, const char *key, const char *v); /* NULL → null */
void zlb_jw_key_int(zlb_jw_t *jw, const char *key, long long v);
void zlb_jw_key_double(zlb_jw_t *jw, const char *key, double v);
void zlb_jw_key_bool(zlb_jw_t *jw, const char *key, int v);
void zlb_jw_key_null(zlb_jw_t *jw, const char *key);
/* Elements of the current array. */
void zlb_jw_string(zlb_jw_t *jw, const char *v);
void zlb_jw_int(zlb_jw_t *jw, long long v);
void zlb_jw_double(zlb_jw_t *jw, double v);

/* ---- reader --------------------------------------------------------- */

typedef enum zlb_json_kind {
  ZLB_JSON_NULL, ZLB_JSON_BOOL, ZLB_JSON_NUMBER, ZLB_JSON_STRING,
  ZLB_JSON_ARRAY, ZLB_JSON_OBJECT
} zlb_json_kind_t;

/*
 * A parsed value. Objects keep member order; duplicate keys are kept (the
 * last wins in zlb_json_get). The whole tree is owned by its root: free it
 * with zlb_json_free(root).
 */
typedef struct zlb_json zlb_json_t;
struct zlb_json {
  zlb_json_kind_t kind;
  int boolean;
  double number;        /* NaN / +-inf allowed */
  char *string;         /* STRING (NUL-terminated, unescaped) */
  size_t n;             /* ARRAY / OBJECT element count */
  zlb_json_t **items;   /* ARRAY elements or OBJECT values */
  char **keys;          /* OBJECT keys */
};

/**
 * Parse exactly one JSON value from `text` (trailing whitespace allowed).
 * `what` names the source in messages ("run.json"). On error returns
 * ZLB_EPARSE with "<what>:<line>:<col>: <problem>" (1-based; the column
 * counts bytes) and sets `*out` to NULL. Only `len` bytes are read; the
 * text needs no NUL. Nesting is limited to 128 levels and the input to
 * 16 MiB; "\u0000" in a string is refused (strings are NUL-terminated).
 */
int zlb_json_parse(const char *text, size_t len, const char *what,
                   zlb_json_t **out, zlb_error_t *err);
/** Free a tree from zlb_json_parse; NULL is allowed. */
void zlb_json_free(zlb_json_t *v);
/** Member of an object (the last of duplicates), or NULL. */
const zlb_json_t *zlb_json_get(const zlb_json_t *obj, const char *key);
/** String member or `dflt` (also when the member is not a string). */
const char *zlb_json_get_string(const zlb_json_t *obj, const char *key,
                                const char *dflt);
/** Number member or `dflt` (also when the member is not a number). */
double zlb_json_get_number(const zlb_json_t *obj, const char *key, double dflt);

#ifdef __cplusplus
}
#endif
#endif
