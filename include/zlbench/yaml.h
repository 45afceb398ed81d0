/* A YAML reader (libyaml underneath) for zlbench's asset files and
 * FlagGems' core_shapes.yaml: block and flow collections, plain and quoted
 * scalars, comments, anchors, aliases and merge keys. Errors name the file,
 * line and problem. */
#ifndef ZLBENCH_YAML_H
#define ZLBENCH_YAML_H

#include <stddef.h>

#include "zlbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zlb_yaml_kind {
  ZLB_YAML_NULL,   /* empty value, "~" or "null" (unquoted) */
  ZLB_YAML_SCALAR, /* any other scalar; text kept verbatim after unquoting */
  ZLB_YAML_SEQ,
  ZLB_YAML_MAP
} zlb_yaml_kind_t;

/*
 * One node of the parsed document. All nodes, strings and arrays belong to
 * the document (an arena) and die with zlb_yaml_doc_release(). An alias
 * (*name) is the very node its anchor (&name) labelled, so a node can be
 * reachable from several parents. A merge key (<<: *a or <<: [*a, *b]) is
 * resolved while parsing: the merged pairs appear in `keys`/`values` as if
 * written in place, keys written explicitly in the map win, and the "<<"
 * key itself does not appear. A merged pair keeps the key line of the map
 * it came from; among several sources the earlier one wins (YAML 1.1).
 */
typedef struct zlb_yaml_node zlb_yaml_node_t;
struct zlb_yaml_node {
  zlb_yaml_kind_t kind;
  int line;             /* 1-based line where the node starts */
  const char *scalar;   /* SCALAR (and NULL: the literal text or "") */
  int quoted;           /* SCALAR written with ' or " quotes */
  size_t n;             /* SEQ: item count; MAP: pair count */
  zlb_yaml_node_t **items;  /* SEQ */
  const char **keys;        /* MAP, in document order */
  int *key_lines;           /* MAP: line of each key */
  zlb_yaml_node_t **values; /* MAP */
};

typedef struct zlb_yaml_doc {
  zlb_yaml_node_t *root; /* NULL-kind node for an empty document */
  char filename[256];    /* for messages */
  void *arena;           /* private */
} zlb_yaml_doc_t;

#define ZLB_YAML_DOC_INIT {NULL, {0}, NULL}

/**
 * Parse `len` bytes of `text`. `filename` is used in messages only
 * ("shapes.yaml:14: ..."). On error returns ZLB_EPARSE with `err->msg` of
 * the form "<file>:<line>: <problem>" and leaves `doc` empty. A stream
 * holds one document: a second ("---" after the first) is an error naming
 * its line. Tabs in indentation, unknown
 * aliases, a key defined twice in one map and unterminated quotes or flow
 * collections are errors. `doc` is overwritten: pass one that is empty
 * (ZLB_YAML_DOC_INIT or released). Collections nest at most 64 deep; a
 * document of more than 4M nodes (pairs copied by merge keys included) is
 * refused. Invalid UTF-8 is an error naming the line.
 * Not supported (each an error naming it): tags (!), directives (%),
 * explicit keys (? ), anchors or aliases on keys, single-pair mappings
 * inside flow sequences ([a: 1]).
 */
int zlb_yaml_parse(const char *text, size_t len, const char *filename,
                   zlb_yaml_doc_t *doc, zlb_error_t *err);
/**
 * Read and parse a file; a missing file is ZLB_ENOTFOUND with "cannot read
 * '<path>': ...". Messages name the file by `path` as given.
 */
int zlb_yaml_load_file(const char *path, zlb_yaml_doc_t *doc, zlb_error_t *err);
/** Free everything the document owns; `doc` becomes empty and reusable. */
void zlb_yaml_doc_release(zlb_yaml_doc_t *doc);

/** Value for `key` in a MAP node, or NULL (also when `map` is not a MAP). */
const zlb_yaml_node_t *zlb_yaml_map_get(const zlb_yaml_node_t *map,
                                        const char *key);
/** Line of `key` in a MAP node, or 0. */
int zlb_yaml_map_key_line(const zlb_yaml_node_t *map, const char *key);
/**
 * Integer value of a SCALAR ("12", "-3", "0x10", also "true"/"false" as
 * 1/0); ZLB_EINVAL when it is not an integer or out of range. Quoted
 * scalars are converted too ("'0x10'" is 16); `*out` is untouched on error.
 */
int zlb_yaml_scalar_long(const zlb_yaml_node_t *node, long long *out);
/**
 * Floating-point value of a SCALAR ("1.5", "-2e3", "7", ".inf", "-.inf",
 * ".nan"); ZLB_EINVAL when not a number or out of range.
 */
int zlb_yaml_scalar_double(const zlb_yaml_node_t *node, double *out);
/**
 * 1 for NULL nodes (also an empty unquoted scalar, and a NULL pointer, so
 * a missing map value reads as null), 0 otherwise.
 */
int zlb_yaml_is_null(const zlb_yaml_node_t *node);

#ifdef __cplusplus
}
#endif
#endif
