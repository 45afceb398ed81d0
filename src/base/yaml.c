/* YAML reader over libyaml's event parser for asset files and FlagGems'
 * core_shapes.yaml: builds the node tree, resolves anchors, aliases and
 * merge keys, and turns every error into "<file>:<line>: <problem>". */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "zlbench/base.h"
#include "zlbench/yaml.h"

/* Collections nested deeper than this are an error: no asset file comes
 * close, and consumers walk the tree recursively. */
#define MAX_DEPTH 64
/* Nodes plus pairs copied by merge keys; beyond this the input is refused
 * (aliases share nodes, so only merges can multiply the work). */
#define MAX_NODES ((size_t)1 << 22)
#define ARENA_BLOCK ((size_t)64 * 1024)

/* ---- arena ------------------------------------------------------------- */

/* Every node, string and array of a document lives in these blocks, so the
 * parser never frees piecemeal and a failed parse drops everything at once. */
struct arena_block {
  struct arena_block *next;
  size_t size, used;
};

struct zlb_yaml_arena {
  struct arena_block *head;
};

static size_t align_up(size_t n) {
  const size_t a = _Alignof(max_align_t);
  return (n + a - 1) & ~(a - 1);
}

static void *arena_alloc(struct zlb_yaml_arena *a, size_t n) {
  struct arena_block *b = a->head;
  const size_t hdr = align_up(sizeof(struct arena_block));
  char *ptr;
  if (n > SIZE_MAX / 2)
    abort(); /* only an arithmetic bug can ask for this much */
  n = align_up(n ? n : 1);
  if (!b || b->size - b->used < n) {
    size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;
    b = zlb_xmalloc(hdr + size);
    b->size = size;
    b->used = 0;
    if (n > ARENA_BLOCK && a->head) {
      /* keep the current block first: its free space is still usable */
      b->next = a->head->next;
      a->head->next = b;
    } else {
      b->next = a->head;
      a->head = b;
    }
  }
  ptr = (char *)b + hdr + b->used;
  b->used += n;
  memset(ptr, 0, n);
  return ptr;
}

/* A bigger copy of an arena array; the old storage is simply abandoned
 * (doubling keeps the waste under the final size). */
static void *arena_grow(struct zlb_yaml_arena *a, void *old, size_t used,
                        size_t size) {
  void *p = arena_alloc(a, size);
  if (used)
    memcpy(p, old, used);
  return p;
}

static const char *arena_strndup(struct zlb_yaml_arena *a, const char *s,
                                 size_t n) {
  char *d = arena_alloc(a, n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static void arena_free(struct zlb_yaml_arena *a) {
  struct arena_block *b, *next;
  if (!a)
    return;
  for (b = a->head; b; b = next) {
    next = b->next;
    free(b);
  }
  free(a);
}

/* ---- parser state ------------------------------------------------------ */

typedef struct anchor {
  const char *name;
  zlb_yaml_node_t *node; /* NULL while the anchored node is being read */
} anchor_t;

typedef struct parser {
  const char *text; /* the input, for messages that quote it */
  size_t len;
  const char *fname;
  zlb_error_t *err;
  struct zlb_yaml_arena *arena;
  anchor_t *anchors;
  size_t nanchors, anchors_cap;
  size_t nodes;   /* nodes built and pairs merged, against MAX_NODES */
  int last_line;  /* line of the latest event: where an empty value sits */
  struct mark_cache *mc; /* where mark_ptr last arrived */
} parser_t;

static int fail(parser_t *p, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int fail(parser_t *p, int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return zlb_error_set(p->err, ZLB_EPARSE, "%s:%d: %s", p->fname, line, msg);
}

static int count_nodes(parser_t *p, size_t n, int line) {
  p->nodes += n;
  if (p->nodes > MAX_NODES)
    return fail(p, line, "document too large: more than %zu nodes (merge "
                "keys included)", MAX_NODES);
  return 0;
}

/* ---- mappings ---------------------------------------------------------- */

/* Positions of keys in an array, hashed; used once a mapping outgrows a
 * linear scan, so that a file with many keys in one mapping stays linear
 * instead of quadratic. */
#define LINEAR_KEYS 16

typedef struct key_index {
  size_t *slots; /* position + 1; 0 is empty */
  size_t cap;    /* a power of two, 0 until built */
} key_index_t;

static void index_put(key_index_t *ix, const char *const *keys, size_t pos) {
  size_t i = (size_t)zlb_fnv1a64(keys[pos]) & (ix->cap - 1);
  while (ix->slots[i])
    i = (i + 1) & (ix->cap - 1);
  ix->slots[i] = pos + 1;
}

/* Keep keys[from..to) indexed after keys[to - 1] was appended: add it, or
 * rebuild bigger before the table passes half full. */
static void index_fit(parser_t *p, key_index_t *ix, const char *const *keys,
                      size_t from, size_t to) {
  size_t cap = 64, i;
  if (to - from <= LINEAR_KEYS)
    return;
  if (ix->cap >= 2 * (to - from)) {
    index_put(ix, keys, to - 1);
    return;
  }
  while (cap < 4 * (to - from))
    cap *= 2;
  ix->slots = arena_alloc(p->arena, cap * sizeof(*ix->slots));
  ix->cap = cap;
  for (i = from; i < to; i++)
    index_put(ix, keys, i);
}

/* Position of `key` among keys[from..to), through the index once built. */
static long find_key(const key_index_t *ix, const char *const *keys,
                     size_t from, size_t to, const char *key) {
  size_t i;
  if (ix->cap) {
    for (i = (size_t)zlb_fnv1a64(key) & (ix->cap - 1); ix->slots[i];
         i = (i + 1) & (ix->cap - 1))
      if (!strcmp(keys[ix->slots[i] - 1], key))
        return (long)(ix->slots[i] - 1);
    return -1;
  }
  for (i = from; i < to; i++)
    if (!strcmp(keys[i], key))
      return (long)i;
  return -1;
}

/* Pairs of one mapping while it is read. A merge key ("<<") is kept aside
 * and resolved in map_finish, when every explicit key is known. */
typedef struct map_builder {
  const char **keys;
  int *lines;
  zlb_yaml_node_t **vals;
  size_t n, cap;
  key_index_t ix;
  zlb_yaml_node_t *const *src; /* merge sources, earlier ones win */
  size_t nsrc;
  size_t merge_at; /* explicit pairs before the "<<" key */
  int merge_line;  /* 0: no "<<" key */
} map_builder_t;

static int map_add(parser_t *p, map_builder_t *mb, const char *key, int line,
                   zlb_yaml_node_t *val) {
  long dup = find_key(&mb->ix, mb->keys, 0, mb->n, key);
  if (dup >= 0)
    return fail(p, line, "key '%.100s' defined twice (first on line %d)", key,
                mb->lines[dup]);
  if (mb->n == mb->cap) {
    size_t nc = mb->cap ? mb->cap * 2 : 8;
    mb->keys = arena_grow(p->arena, mb->keys, mb->n * sizeof(*mb->keys),
                          nc * sizeof(*mb->keys));
    mb->lines = arena_grow(p->arena, mb->lines, mb->n * sizeof(*mb->lines),
                           nc * sizeof(*mb->lines));
    mb->vals = arena_grow(p->arena, mb->vals, mb->n * sizeof(*mb->vals),
                          nc * sizeof(*mb->vals));
    mb->cap = nc;
  }
  mb->keys[mb->n] = key;
  mb->lines[mb->n] = line;
  mb->vals[mb->n] = val;
  mb->n++;
  index_fit(p, &mb->ix, mb->keys, 0, mb->n);
  return 0;
}

static int map_merge(parser_t *p, map_builder_t *mb, int line,
                     zlb_yaml_node_t *val) {
  size_t i;
  if (mb->merge_line)
    return fail(p, line, "key '<<' defined twice (first on line %d)",
                mb->merge_line);
  if (val->kind == ZLB_YAML_MAP) {
    zlb_yaml_node_t **one = arena_alloc(p->arena, sizeof(*one));
    one[0] = val;
    mb->src = one;
    mb->nsrc = 1;
  } else if (val->kind == ZLB_YAML_SEQ) {
    for (i = 0; i < val->n; i++)
      if (val->items[i]->kind != ZLB_YAML_MAP)
        break;
    if (i < val->n || !val->n)
      goto bad;
    mb->src = val->items;
    mb->nsrc = val->n;
  } else {
    goto bad;
  }
  mb->merge_at = mb->n;
  mb->merge_line = line;
  return 0;
bad:
  return fail(p, line, "merge key '<<' needs a mapping or a list of mappings "
                       "(such as *base or [*a, *b])");
}

/* Lay out the pairs: explicit ones before "<<", then the merged ones that
 * no explicit key and no earlier source overrides, then the rest. */
static void map_finish(parser_t *p, map_builder_t *mb, zlb_yaml_node_t *map) {
  size_t total = mb->n, i, j, k = 0, merged;
  key_index_t seen = {NULL, 0}; /* merged keys: positions in map->keys */
  if (!mb->merge_line) {
    map->n = mb->n;
    map->keys = mb->keys;
    map->key_lines = mb->lines;
    map->values = mb->vals;
    return;
  }
  for (i = 0; i < mb->nsrc; i++)
    total += mb->src[i]->n;
  map->keys = arena_alloc(p->arena, total * sizeof(*map->keys));
  map->key_lines = arena_alloc(p->arena, total * sizeof(*map->key_lines));
  map->values = arena_alloc(p->arena, total * sizeof(*map->values));
  for (i = 0; i < mb->merge_at; i++, k++) {
    map->keys[k] = mb->keys[i];
    map->key_lines[k] = mb->lines[i];
    map->values[k] = mb->vals[i];
  }
  merged = k;
  for (i = 0; i < mb->nsrc; i++) {
    const zlb_yaml_node_t *s = mb->src[i];
    for (j = 0; j < s->n; j++) {
      if (find_key(&mb->ix, mb->keys, 0, mb->n, s->keys[j]) >= 0 ||
          find_key(&seen, map->keys, merged, k, s->keys[j]) >= 0)
        continue;
      map->keys[k] = s->keys[j];
      map->key_lines[k] = s->key_lines[j];
      map->values[k] = s->values[j];
      k++;
      index_fit(p, &seen, map->keys, merged, k);
    }
  }
  for (i = mb->merge_at; i < mb->n; i++, k++) {
    map->keys[k] = mb->keys[i];
    map->key_lines[k] = mb->lines[i];
    map->values[k] = mb->vals[i];
  }
  map->n = k;
}

/* ---- building the tree from libyaml's events ---------------------------- */

static zlb_yaml_node_t *new_node(parser_t *p, zlb_yaml_kind_t kind, int line) {
  zlb_yaml_node_t *n = arena_alloc(p->arena, sizeof(*n));
  n->kind = kind;
  n->line = line;
  return n;
}

/* One open collection. */
typedef struct frame {
  zlb_yaml_node_t *node;
  long anchor;      /* slot in p->anchors, or -1 */
  size_t cap;       /* SEQ: room in node->items */
  map_builder_t mb; /* MAP: pairs so far */
  const char *key;  /* MAP: key waiting for its value; NULL: a key is next */
  int key_line;
  int merge;        /* the waiting key is the merge key "<<" */
  int col;          /* column where the collection starts */
  int relocate;     /* block collection after an anchor: line of entry 1 */
} frame_t;

typedef struct builder {
  parser_t *p;
  frame_t st[MAX_DEPTH];
  int depth;
  zlb_yaml_node_t *root;
  int root_col; /* column of the top-level value */
} builder_t;

static int line_of(yaml_mark_t m) {
  return m.line < (size_t)INT_MAX ? (int)m.line + 1 : INT_MAX;
}

static int col_of(const parser_t *p, yaml_mark_t m) {
  (void)p;
  return m.column < (size_t)INT_MAX ? (int)m.column : INT_MAX;
}

/* The position mark_ptr last arrived at. Keys are checked at their marks
 * in document order: resuming from there keeps a document's checks linear
 * (from the start each time, a file of many keys would take hours). */
struct mark_cache {
  const char *s;
  size_t line, col;
};

/* The byte a libyaml mark points at (marks count characters, not bytes),
 * or NULL past the end of the input. */
static const char *mark_ptr(const parser_t *p, yaml_mark_t m) {
  const char *s = p->text, *end = p->text + p->len;
  size_t line = 0, col = 0;
  if (p->mc && p->mc->s &&
      (m.line > p->mc->line || (m.line == p->mc->line && m.column >= p->mc->col))) {
    s = p->mc->s;
    line = p->mc->line;
    col = p->mc->col;
  }
  while (s < end && line < m.line) {
    if (*s == '\r' && s + 1 < end && s[1] == '\n')
      s++;
    if (*s == '\n' || *s == '\r') {
      line++;
      col = 0;
    }
    s++;
  }
  for (; s < end && col < m.column && *s != '\n' && *s != '\r'; col++)
    for (s++; s < end && ((unsigned char)*s & 0xC0) == 0x80; s++)
      ;
  if (p->mc) {
    p->mc->s = s;
    p->mc->line = line;
    p->mc->col = col;
  }
  return s < end ? s : NULL;
}

static int mark_char(const parser_t *p, yaml_mark_t m) {
  const char *s = mark_ptr(p, m);
  return s ? (unsigned char)*s : -1;
}

/* The last non-blank byte before the mark on its line, or 0. */
static int char_before(const parser_t *p, yaml_mark_t m) {
  const char *s = mark_ptr(p, m);
  if (!s)
    return 0;
  while (s > p->text && (s[-1] == ' ' || s[-1] == '\t'))
    s--;
  return s > p->text && s[-1] != '\n' && s[-1] != '\r'
             ? (unsigned char)s[-1] : 0;
}

/* Column of the first non-blank character on the mark's line. */
static int indent_of(const parser_t *p, yaml_mark_t m) {
  yaml_mark_t start = m;
  const char *s;
  int col = 0;
  start.column = 0;
  s = mark_ptr(p, start);
  while (s && s < p->text + p->len && (*s == ' ' || *s == '\t')) {
    s++;
    col++;
  }
  return col;
}

static int add_anchor(builder_t *b, const yaml_char_t *name, long *slot) {
  parser_t *p = b->p;
  *slot = -1;
  if (!name)
    return 0;
  if (p->nanchors == p->anchors_cap) {
    size_t nc = p->anchors_cap ? p->anchors_cap * 2 : 16;
    p->anchors = arena_grow(p->arena, p->anchors,
                            p->nanchors * sizeof(*p->anchors),
                            nc * sizeof(*p->anchors));
    p->anchors_cap = nc;
  }
  p->anchors[p->nanchors].name =
      arena_strndup(p->arena, (const char *)name, strlen((const char *)name));
  p->anchors[p->nanchors].node = NULL;
  *slot = (long)p->nanchors++;
  return 0;
}

/* "*name": the node of the latest anchor of that name, shared, not copied
 * (so "billion laughs" documents cost nothing). */
static int find_alias(parser_t *p, const char *name, int line,
                      zlb_yaml_node_t **out) {
  size_t i;
  for (i = p->nanchors; i-- > 0;) {
    if (strcmp(p->anchors[i].name, name))
      continue;
    if (!p->anchors[i].node)
      return fail(p, line, "alias '*%.100s' is used inside the node it names",
                  name);
    *out = p->anchors[i].node;
    return 0;
  }
  return fail(p, line, "unknown alias '*%.100s' (define '&%.100s' before "
              "using it)", name, name);
}

static void seq_push(parser_t *p, frame_t *f, zlb_yaml_node_t *item) {
  zlb_yaml_node_t *seq = f->node;
  if (seq->n == f->cap) {
    size_t nc = f->cap ? f->cap * 2 : 8;
    seq->items = arena_grow(p->arena, seq->items, seq->n * sizeof(item),
                            nc * sizeof(item));
    f->cap = nc;
  }
  seq->items[seq->n++] = item;
}

/* A finished node goes to its parent: the root, a sequence item or the
 * value of the waiting key. */
static int deliver(builder_t *b, zlb_yaml_node_t *node) {
  frame_t *f;
  const char *key;
  if (!b->depth) {
    b->root = node;
    return 0;
  }
  f = &b->st[b->depth - 1];
  if (f->relocate) {
    f->relocate = 0;
    f->node->line = node->line;
  }
  if (f->node->kind == ZLB_YAML_SEQ) {
    seq_push(b->p, f, node);
    return 0;
  }
  key = f->key;
  f->key = NULL;
  if (f->merge) {
    f->merge = 0;
    return map_merge(b->p, &f->mb, f->key_line, node);
  }
  return map_add(b->p, &f->mb, key, f->key_line, node);
}

static int in_key_position(const builder_t *b) {
  const frame_t *f = b->depth ? &b->st[b->depth - 1] : NULL;
  return f && f->node->kind == ZLB_YAML_MAP && !f->key;
}

/* Keys are plain or quoted scalars; everything else YAML allows there is
 * refused by name. */
static int check_key(builder_t *b, const yaml_event_t *ev, int line) {
  parser_t *p = b->p;
  const yaml_char_t *anchor = NULL;
  int before = char_before(p, ev->start_mark);
  if (before == '?')
    return fail(p, line, "explicit keys ('? ') are not supported");
  if (ev->type == YAML_ALIAS_EVENT)
    return fail(p, line, "'*' on a mapping key is not supported");
  if (ev->type != YAML_SCALAR_EVENT)
    return fail(p, line, "flow collections as keys are not supported");
  anchor = ev->data.scalar.anchor;
  if (anchor && before == '-' && b->st[b->depth - 1].mb.n == 0)
    return fail(p, line, "an anchor before a compact nested collection is not "
                "supported (start the collection on the next line)");
  if (anchor)
    return fail(p, line, "'&' on a mapping key is not supported");
  if (!ev->data.scalar.length && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
    return fail(p, line, "empty mapping key");
  return 0;
}

static int on_key(builder_t *b, const yaml_event_t *ev, int line) {
  parser_t *p = b->p;
  frame_t *f = &b->st[b->depth - 1];
  const char *s = (const char *)ev->data.scalar.value;
  int rc = check_key(b, ev, line);
  if (rc)
    return rc;
  if (strlen(s) != ev->data.scalar.length)
    return fail(p, line, "escape '\\0' (NUL) is not supported");
  if (f->relocate) {
    f->relocate = 0;
    f->node->line = line;
  }
  f->key = arena_strndup(p->arena, s, ev->data.scalar.length);
  f->key_line = line;
  f->merge = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !strcmp(s, "<<");
  return 0;
}

static int on_scalar(builder_t *b, const yaml_event_t *ev, int line) {
  parser_t *p = b->p;
  const char *s = (const char *)ev->data.scalar.value;
  size_t n = ev->data.scalar.length;
  yaml_scalar_style_t style = ev->data.scalar.style;
  int plain = style == YAML_PLAIN_SCALAR_STYLE;
  int null = plain && (!n || !strcmp(s, "~") || !strcmp(s, "null") ||
                       !strcmp(s, "Null") || !strcmp(s, "NULL"));
  zlb_yaml_node_t *node;
  long slot;
  int rc;
  if (strlen(s) != n)
    return fail(p, line, "escape '\\0' (NUL) is not supported");
  if (plain && !n)
    line = p->last_line; /* an empty value belongs to its key's line */
  node = new_node(p, null ? ZLB_YAML_NULL : ZLB_YAML_SCALAR, line);
  node->scalar = arena_strndup(p->arena, s, n);
  node->quoted = style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                 style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
  if ((rc = add_anchor(b, ev->data.scalar.anchor, &slot)))
    return rc;
  if (slot >= 0)
    p->anchors[slot].node = node;
  return deliver(b, node);
}

static int on_start(builder_t *b, const yaml_event_t *ev, int line) {
  parser_t *p = b->p;
  int is_map = ev->type == YAML_MAPPING_START_EVENT;
  const yaml_char_t *anchor =
      is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
  frame_t *parent = b->depth ? &b->st[b->depth - 1] : NULL;
  frame_t *f;
  if (b->depth == MAX_DEPTH)
    return fail(p, line, "nesting deeper than %d levels", MAX_DEPTH);
  if (is_map && parent && parent->node->kind == ZLB_YAML_SEQ &&
      ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE &&
      mark_char(p, ev->start_mark) != '{')
    return fail(p, line, "single-pair mappings inside a flow sequence are not "
                "supported (write {key: value})");
  if (!b->depth)
    b->root_col = col_of(p, ev->start_mark);
  f = &b->st[b->depth++];
  memset(f, 0, sizeof(*f));
  f->node = new_node(p, is_map ? ZLB_YAML_MAP : ZLB_YAML_SEQ, line);
  f->col = col_of(p, ev->start_mark);
  /* an anchor or tag moves the start mark before the collection: a block
   * collection then takes the line of its first entry */
  f->relocate = (is_map ? ev->data.mapping_start.style == YAML_BLOCK_MAPPING_STYLE
                        : ev->data.sequence_start.style == YAML_BLOCK_SEQUENCE_STYLE) &&
                anchor;
  return add_anchor(b, anchor, &f->anchor);
}

static int on_end(builder_t *b, int line) {
  parser_t *p = b->p;
  frame_t *f = &b->st[--b->depth];
  size_t before = f->mb.n;
  int rc;
  if (f->node->kind == ZLB_YAML_MAP) {
    map_finish(p, &f->mb, f->node);
    if (f->node->n > before && (rc = count_nodes(p, f->node->n - before, line)))
      return rc;
  }
  if (f->anchor >= 0)
    p->anchors[f->anchor].node = f->node;
  return deliver(b, f->node);
}

/* ---- libyaml's errors, said in the terms of the file -------------------- */

/* The innermost open mapping, or NULL. */
static const frame_t *open_map(const builder_t *b) {
  int i;
  for (i = b->depth; i-- > 0;)
    if (b->st[i].node->kind == ZLB_YAML_MAP)
      return &b->st[i];
  return NULL;
}

static int has(const char *s, const char *word) {
  return s && strstr(s, word) != NULL;
}

static int describe(builder_t *b, const yaml_parser_t *yp) {
  parser_t *p = b->p;
  const char *prob = yp->problem ? yp->problem : "unknown error";
  const char *ctx = yp->context;
  yaml_mark_t pm = yp->problem_mark, cm = yp->context_mark;
  int pl = line_of(pm), cl = line_of(cm);
  int pc = mark_char(p, pm), cc = mark_char(p, cm);
  int pcol = col_of(p, pm), ccol = col_of(p, cm);
  int first = indent_of(p, pm) == pcol; /* starts its line */
  const frame_t *map = open_map(b);

  if (yp->error == YAML_MEMORY_ERROR)
    return zlb_error_set(p->err, ZLB_ENOMEM, "%s: out of memory", p->fname);
  if (yp->error == YAML_READER_ERROR) {
    size_t i, line = 1;
    for (i = 0; i < yp->problem_offset && i < p->len; i++)
      line += p->text[i] == '\n';
    return fail(p, (int)(line < INT_MAX ? line : INT_MAX),
                "%s (byte 0x%02x; save the file as UTF-8 text)", prob,
                (unsigned)yp->problem_value & 0xffu);
  }
  if (has(prob, "tab") || pc == '\t')
    return fail(p, pl, "tab used for indentation (indent with spaces)");
  if (has(ctx, "scanning a quoted scalar") ||
      (has(ctx, "parsing a quoted scalar") && has(prob, "unknown escape") &&
       (!mark_ptr(p, pm) || mark_ptr(p, pm) + 1 >= p->text + p->len)))
    return fail(p, cl, "unterminated %s-quoted string: missing closing quote",
                cc == '\'' ? "single" : "double");
  if (has(ctx, "parsing a quoted scalar")) {
    const char *s = mark_ptr(p, pm), *from = mark_ptr(p, cm);
    while (s && from && s > from && *s != '\\')
      s--;
    if (has(prob, "unknown escape"))
      return fail(p, pl, "unknown escape '\\%c' in a double-quoted string",
                  s && s + 1 < p->text + p->len ? s[1] : '?');
    if (s && *s == '\\' && s + 1 < p->text + p->len) {
      if (has(prob, "hexdecimal"))
        return fail(p, pl, "escape '\\%c' needs %d hex digits", s[1],
                    s[1] == 'x' ? 2 : s[1] == 'u' ? 4 : 8);
      if (has(prob, "Unicode"))
        return fail(p, pl, "escape '\\%c' gives an invalid code point", s[1]);
    }
  }
  if (has(ctx, "scanning an alias"))
    return fail(p, cl, "alias '*' without a name");
  if (has(ctx, "scanning an anchor"))
    return fail(p, cl, "anchor '&' without a name");
  if (has(ctx, "block scalar") && has(prob, "comment or line break"))
    return fail(p, cl, "unexpected text after the block scalar indicator '%c'",
                cc > 0 ? cc : '|');
  if (has(prob, "cannot start any token")) {
    if ((pc == '|' || pc == '>') && yp->flow_level)
      return fail(p, pl, "block scalar '%c' inside a flow collection", pc);
    if (pc == '@' || pc == '`')
      return fail(p, pl, "'%c' cannot start a plain value (quote the value)", pc);
  }
  if (has(prob, "block sequence entries are not allowed"))
    return fail(p, pl, "sequence entries are not allowed here (start the list "
                "on a new line)");
  if (has(prob, "mapping values are not allowed")) {
    if (pl != p->last_line && map)
      return fail(p, pl, "bad indentation: indented %d, but the mapping that "
                  "starts on line %d is indented %d", indent_of(p, pm),
                  map->node->line, map->col);
    return fail(p, pl, "unexpected ':' (a nested mapping must start on a new "
                "line)");
  }
  if (has(ctx, "flow sequence") || has(ctx, "flow mapping")) {
    int seq = has(ctx, "flow sequence");
    char close = seq ? ']' : '}';
    if (pc == ']' || pc == '}' || (pc >= 0 && pl == cl))
      return fail(p, pl, "expected ',' or '%c' in the flow %s that starts on "
                  "line %d", close, seq ? "sequence" : "mapping", cl);
    return fail(p, cl, "unterminated flow %s: missing closing '%c'",
                seq ? "sequence" : "mapping", close);
  }
  if (has(ctx, "block mapping") && has(prob, "expected key")) {
    if (pc == ':')
      return fail(p, pl, "empty mapping key");
    if (first && pcol != ccol)
      return fail(p, pl, "bad indentation: indented %d, but the mapping that "
                  "starts on line %d is indented %d", pcol, cl, ccol);
    if (first && pc == '-')
      return fail(p, pl, "sequence item '- ' inside the mapping that starts on "
                  "line %d (indent it under a key)", cl);
    if (first)
      return fail(p, pl, "expected 'key: value' in the mapping that starts on "
                  "line %d", cl);
    if (pc == '&')
      return fail(p, pl, "a node can have only one anchor");
    {
      const char *s = mark_ptr(p, pm);
      /* Within the `len` bytes: the text need not end in a NUL. */
      size_t n = 0, max = s ? (size_t)(p->text + p->len - s) : 0;
      while (n < max && !strchr(" \t\r\n,[]{}#", s[n]))
        n++;
      return fail(p, pl, "unexpected text '%.*s' after the value",
                  (int)(n > 40 ? 40 : n), s ? s : "");
    }
  }
  if (has(ctx, "block collection") && has(prob, "'-' indicator")) {
    if (pcol == ccol)
      return fail(p, pl, "expected a sequence item '- ' like the ones from "
                  "line %d at this indentation", cl);
    return fail(p, pl, "bad indentation: indented %d, but the sequence that "
                "starts on line %d is indented %d", pcol, cl, ccol);
  }
  if (has(ctx, "simple key") && has(prob, "expected ':'") && map)
    return fail(p, cl, "expected 'key: value' in the mapping that starts on "
                "line %d", map->node->line);
  if (has(prob, "document start"))
    return fail(p, pl, "unexpected content after the document's top-level "
                "value");
  if (pc > 0x20 && pc < 0x7f && (has(prob, "node content") ||
                                 has(prob, "cannot start any token")))
    return fail(p, pl, "unexpected '%c'", pc);
  if (ctx)
    return fail(p, pl, "%s (%s that starts on line %d)", prob, ctx, cl);
  return fail(p, pl, "%s", prob);
}

/* ---- documents --------------------------------------------------------- */

static const yaml_char_t *event_tag(const yaml_event_t *ev) {
  switch (ev->type) {
  case YAML_SCALAR_EVENT:
    return ev->data.scalar.tag;
  case YAML_SEQUENCE_START_EVENT:
    return ev->data.sequence_start.tag;
  case YAML_MAPPING_START_EVENT:
    return ev->data.mapping_start.tag;
  default:
    return NULL;
  }
}

/* One event of the (only) document. *done is set at its end. */
static int on_event(builder_t *b, yaml_parser_t *yp, const yaml_event_t *ev,
                    int *done) {
  parser_t *p = b->p;
  int line = line_of(ev->start_mark), rc = 0;
  zlb_yaml_node_t *node = NULL;

  if (event_tag(ev))
    return fail(p, line, "tags ('!') are not supported");
  if ((ev->type == YAML_SCALAR_EVENT || ev->type == YAML_ALIAS_EVENT ||
       ev->type == YAML_SEQUENCE_START_EVENT ||
       ev->type == YAML_MAPPING_START_EVENT) &&
      (rc = count_nodes(p, 1, line)))
    return rc;
  if (in_key_position(b) && ev->type != YAML_MAPPING_END_EVENT) {
    if (ev->type != YAML_SCALAR_EVENT)
      return check_key(b, ev, line);
    rc = on_key(b, ev, line);
    p->last_line = line;
    return rc;
  }
  switch (ev->type) {
  case YAML_DOCUMENT_START_EVENT:
    if (ev->data.document_start.version_directive ||
        ev->data.document_start.tag_directives.start !=
            ev->data.document_start.tag_directives.end)
      return fail(p, line, "directives ('%%') are not supported");
    break;
  case YAML_ALIAS_EVENT:
    if ((rc = find_alias(p, (const char *)ev->data.alias.anchor, line, &node)))
      return rc;
    rc = deliver(b, node);
    break;
  case YAML_SCALAR_EVENT:
    rc = on_scalar(b, ev, line);
    break;
  case YAML_SEQUENCE_START_EVENT:
  case YAML_MAPPING_START_EVENT:
    rc = on_start(b, ev, line);
    break;
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT:
    rc = on_end(b, line);
    break;
  case YAML_DOCUMENT_END_EVENT:
  case YAML_STREAM_END_EVENT:
    *done = 1;
    /* Without "...", anything after the top-level value is an error, not a
     * second document (that needs "---"). A second document is refused
     * too: readers take the first, and keys in the rest would be lost
     * without a word. */
    if (ev->type == YAML_DOCUMENT_END_EVENT) {
      yaml_event_t next;
      int second;
      if (!yaml_parser_parse(yp, &next)) {
        yaml_mark_t pm = yp->problem_mark;
        int col = indent_of(p, pm);
        if (ev->data.document_end.implicit &&
            strstr(yp->problem ? yp->problem : "", "document start") &&
            b->root && b->root->kind != ZLB_YAML_SCALAR && col < b->root_col)
          return fail(p, line_of(pm), "bad indentation: indented %d, but the "
                      "document's top level is indented %d", col, b->root_col);
        return describe(b, yp);
      }
      second = next.type == YAML_DOCUMENT_START_EVENT;
      line = line_of(next.start_mark);
      yaml_event_delete(&next);
      if (second)
        return fail(p, line, "more than one YAML document (a second one starts "
                    "here); put every key in the first");
    }
    break;
  default:
    break;
  }
  p->last_line = line;
  return rc;
}

/* Inputs libyaml would read differently from the promise in yaml.h: a NUL
 * byte, and a document that opens with "..." (an empty first document). */
static int prescan(parser_t *p, int *empty) {
  const char *s = p->text, *end = p->text + p->len, *nul;
  *empty = 0;
  if ((nul = memchr(s, '\0', p->len)) != NULL) {
    int line = 1;
    for (; s < nul; s++)
      line += *s == '\n';
    return fail(p, line, "NUL byte in the input (not a text file?)");
  }
  while (s < end) { /* blank and comment lines */
    const char *t = s;
    while (t < end && (*t == ' ' || *t == '\t'))
      t++;
    if (t < end && *t != '#' && *t != '\n' && *t != '\r')
      break;
    while (t < end && *t != '\n')
      t++;
    s = t < end ? t + 1 : t;
  }
  if (end - s >= 3 && !memcmp(s, "...", 3) &&
      (end - s == 3 || strchr(" \t\r\n", s[3]))) {
    /* Anything but blanks and comments after it is a second document. */
    int line = 1;
    for (const char *c = p->text; c < s; c++)
      line += *c == '\n';
    for (s += 3; s < end; s++) {
      if (*s == '\n')
        line++;
      else if (*s == '#')
        while (s + 1 < end && s[1] != '\n')
          s++;
      else if (!strchr(" \t\r", *s))
        return fail(p, line, "more than one YAML document (a second one starts "
                    "here); put every key in the first");
    }
    *empty = 1;
  }
  return 0;
}

int zlb_yaml_parse(const char *text, size_t len, const char *filename,
                   zlb_yaml_doc_t *doc, zlb_error_t *err) {
  parser_t p;
  struct mark_cache mc = {NULL, 0, 0};
  builder_t *b = NULL;
  yaml_parser_t yp;
  yaml_event_t ev;
  int rc = 0, done = 0, empty = 0, have_yp = 0;

  memset(&p, 0, sizeof(p));
  doc->root = NULL;
  doc->arena = NULL;
  zlb_strlcpy(doc->filename, filename ? filename : "<yaml>",
              sizeof(doc->filename));
  p.text = text ? text : "";
  p.len = text ? len : 0;
  /* libyaml told the encoding keeps a byte order mark as a character of
   * line 1 (shifting its columns): drop it here */
  if (p.len >= 3 && !memcmp(p.text, "\xef\xbb\xbf", 3)) {
    p.text += 3;
    p.len -= 3;
  }
  p.fname = filename ? filename : "<yaml>";
  p.err = err;
  p.last_line = 1;
  p.mc = &mc;
  p.arena = zlb_xcalloc(1, sizeof(*p.arena));
  b = zlb_xcalloc(1, sizeof(*b));
  b->p = &p;

  if ((rc = prescan(&p, &empty)) || empty)
    goto finish;
  if (!yaml_parser_initialize(&yp)) {
    rc = zlb_error_set(err, ZLB_ENOMEM, "%s: out of memory", p.fname);
    goto finish;
  }
  have_yp = 1;
  yaml_parser_set_input_string(&yp, (const unsigned char *)p.text, p.len);
  yaml_parser_set_encoding(&yp, YAML_UTF8_ENCODING);
  while (!done) {
    if (!yaml_parser_parse(&yp, &ev)) {
      rc = describe(b, &yp);
      break;
    }
    rc = on_event(b, &yp, &ev, &done);
    yaml_event_delete(&ev);
    if (rc)
      break;
  }
finish:
  if (!rc) {
    if (!b->root) {
      b->root = new_node(&p, ZLB_YAML_NULL, 1);
      b->root->scalar = "";
    }
    doc->root = b->root;
    doc->arena = p.arena;
    p.arena = NULL;
  } else {
    doc->filename[0] = '\0';
  }
  if (have_yp)
    yaml_parser_delete(&yp);
  free(b);
  arena_free(p.arena);
  return rc;
}

int zlb_yaml_load_file(const char *path, zlb_yaml_doc_t *doc,
                       zlb_error_t *err) {
  char *text = NULL;
  size_t len = 0;
  int rc;
  doc->root = NULL;
  doc->arena = NULL;
  doc->filename[0] = '\0';
  if ((rc = zlb_read_file_max(path, ZLB_READ_MAX_YAML, "a YAML file", &text, &len, err)))
    goto out;
  rc = zlb_yaml_parse(text, len, path, doc, err);
out:
  free(text);
  return rc;
}

void zlb_yaml_doc_release(zlb_yaml_doc_t *doc) {
  if (!doc)
    return;
  arena_free(doc->arena);
  doc->arena = NULL;
  doc->root = NULL;
  doc->filename[0] = '\0';
}

/* ---- accessors --------------------------------------------------------- */

static int hexval(int c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static long map_index(const zlb_yaml_node_t *map, const char *key) {
  size_t i;
  if (!map || map->kind != ZLB_YAML_MAP || !key)
    return -1;
  for (i = 0; i < map->n; i++)
    if (!strcmp(map->keys[i], key))
      return (long)i;
  return -1;
}

const zlb_yaml_node_t *zlb_yaml_map_get(const zlb_yaml_node_t *map,
                                        const char *key) {
  long i = map_index(map, key);
  return i < 0 ? NULL : map->values[i];
}

int zlb_yaml_map_key_line(const zlb_yaml_node_t *map, const char *key) {
  long i = map_index(map, key);
  return i < 0 ? 0 : map->key_lines[i];
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

int zlb_yaml_scalar_long(const zlb_yaml_node_t *node, long long *out) {
  const char *s, *d;
  char *end;
  long long v;
  if (!node || node->kind != ZLB_YAML_SCALAR || !node->scalar)
    return ZLB_EINVAL;
  s = node->scalar;
  if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
    *out = 1;
    return 0;
  }
  if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
    *out = 0;
    return 0;
  }
  d = s + (*s == '-' || *s == '+');
  if (!is_digit(*d))
    return ZLB_EINVAL; /* also refuses blanks strtoll would skip */
  errno = 0;
  if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
    if (hexval((unsigned char)d[2]) < 0)
      return ZLB_EINVAL;
    v = strtoll(s, &end, 16);
  } else {
    v = strtoll(s, &end, 10);
  }
  if (*end || errno == ERANGE)
    return ZLB_EINVAL;
  *out = v;
  return 0;
}

int zlb_yaml_scalar_double(const zlb_yaml_node_t *node, double *out) {
  static const char *const special[] = {".inf", ".Inf", ".INF", ".nan",
                                        ".NaN", ".NAN"};
  const char *s, *d;
  char *end;
  double v;
  size_t i;
  if (!node || node->kind != ZLB_YAML_SCALAR || !node->scalar)
    return ZLB_EINVAL;
  s = node->scalar;
  d = s + (*s == '-' || *s == '+');
  for (i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
    if (!strcmp(d, special[i])) {
      v = i < 3 ? HUGE_VAL : NAN;
      *out = *s == '-' ? -v : v;
      return 0;
    }
  }
  if (!is_digit(*d) && !(*d == '.' && is_digit(d[1])))
    return ZLB_EINVAL; /* no blanks, no "inf"/"nan" spellings YAML lacks */
  errno = 0;
  v = strtod(s, &end);
  if (*end || (errno == ERANGE && isinf(v)))
    return ZLB_EINVAL;
  *out = v;
  return 0;
}

int zlb_yaml_is_null(const zlb_yaml_node_t *node) {
  if (!node || node->kind == ZLB_YAML_NULL)
    return 1;
  return node->kind == ZLB_YAML_SCALAR && !node->quoted && node->scalar &&
         !node->scalar[0];
}
