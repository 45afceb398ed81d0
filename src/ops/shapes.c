/* Shape lookup: operator name, family, the family's FlagGems classes,
 * default, built-in list (docs/shapes.md), from our shape files or a
 * FlagGems core_shapes.yaml. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/ops.h"
#include "zlbench/yaml.h"

/* FlagGems benchmark classes a family corresponds to, most specific first. */
static const char *const *flaggems_classes(const char *family) {
  static const char *const unary[] = {"UnaryPointwiseBenchmark", "GenericBenchmark", NULL};
  static const char *const binary[] = {"BinaryPointwiseBenchmark", "GenericBenchmark", NULL};
  static const char *const reduction[] = {"UnaryReductionBenchmark", "GenericBenchmark", NULL};
  static const char *const blas[] = {"BlasBenchmark", NULL};
  static const char *const generic[] = {"GenericBenchmark", NULL};
  if (!strcmp(family, "unary_pointwise"))
    return unary;
  if (!strcmp(family, "binary_pointwise"))
    return binary;
  if (!strcmp(family, "reduction") || !strcmp(family, "softmax") ||
      !strcmp(family, "norm"))
    return reduction;
  if (!strcmp(family, "blas"))
    return blas;
  return generic;
}

/* The largest extent: no tensor may hold more than 2^48 bytes (the case
 * layer refuses it), so no extent of a runnable shape is larger. */
#define MAX_EXTENT ((int64_t)1 << 48)

/* Shapes one key may list (its shapes and comprehensive_shapes together):
 * far more than a benchmark runs, and it bounds the duplicate check below,
 * which is quadratic (a 16 MiB file of distinct shapes would take hours). */
#define MAX_SHAPES 10000

/* The shape as written ("[99999999999999999999999, 64]"), cut short, for
 * messages. */
static void shape_text(const zlb_yaml_node_t *dims, char *buf, size_t len) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  if (dims->kind == ZLB_YAML_SCALAR) {
    zlb_strbuf_addf(&sb, "%.40s", dims->scalar);
  } else {
    zlb_strbuf_addch(&sb, '[');
    for (size_t i = 0; i < dims->n && sb.len < 48; i++) {
      const zlb_yaml_node_t *d = dims->items[i];
      const char *q = d->kind == ZLB_YAML_SCALAR && d->quoted ? "\"" : "";
      zlb_strbuf_addf(&sb, "%s%s%.32s%s", i ? ", " : "", q,
                      d->kind == ZLB_YAML_SCALAR ? d->scalar
                      : d->kind == ZLB_YAML_NULL ? "~"
                                                 : "...",
                      q);
    }
    zlb_strbuf_addstr(&sb, sb.len >= 48 ? ", ...]" : "]");
  }
  zlb_strlcpy(buf, sb.buf, len);
  zlb_strbuf_release(&sb);
}

/* Extent #`i` (1-based) of `dims`: a plain decimal integer in
 * 0..MAX_EXTENT. YAML would also read true, 0x40, 0o17, 1_000 or "64" as
 * something, and PyYAML (FlagGems) reads 064 as octal: all refused, so a
 * shape means the same to every reader. */
static int parse_extent(const zlb_yaml_node_t *dims, const zlb_yaml_node_t *d, size_t i,
                        const char *file, int64_t *out, zlb_error_t *err) {
  char shape[80], why[160];
  const char *s = d->scalar;
  const char *digits = d->kind == ZLB_YAML_SCALAR ? s + (*s == '-') : "";
  int64_t v = 0;
  if (d->kind != ZLB_YAML_SCALAR) {
    snprintf(why, sizeof(why), " is %s, not an integer",
             d->kind == ZLB_YAML_NULL ? "empty" : "a list or map");
  } else if (d->quoted) {
    snprintf(why, sizeof(why),
             ": '%.40s' is quoted; write extents as plain integers (64, not \"64\")", s);
  } else if (!*digits || strspn(digits, "0123456789") != strlen(digits)) {
    snprintf(why, sizeof(why), ": '%.40s' is not a decimal integer", s);
  } else if (digits[0] == '0' && digits[1]) {
    snprintf(why, sizeof(why),
             ": '%.40s' has a leading zero (YAML 1.1 reads it as octal); write it without", s);
  } else {
    for (const char *c = digits; *c && v <= MAX_EXTENT; c++)
      v = v * 10 + (*c - '0');
    if (*s != '-' && v <= MAX_EXTENT) {
      *out = v;
      return 0;
    }
    snprintf(why, sizeof(why), ": %.40s is out of range (0..%lld)", s, (long long)MAX_EXTENT);
  }
  /* The shape as written only for the message: not for every good extent. */
  shape_text(dims, shape, sizeof(shape));
  return zlb_error_set(err, ZLB_EPARSE, "%s:%d: shape %s extent #%zu%s", file, d->line, shape, i,
                       why);
}

static int parse_entry(const zlb_yaml_node_t *n, const char *file, zlb_shape_t *s,
                       zlb_error_t *err) {
  const zlb_yaml_node_t *dims = n;
  size_t first_arg = 0;
  long long v;
  uint64_t numel = 1;
  int rc;
  memset(s, 0, sizeof(*s));
  if (n->kind == ZLB_YAML_SCALAR) {
    /* A bare number is a 1-D shape. */
    s->ndim = 1;
    return parse_extent(n, n, 1, file, &s->dims[0], err);
  }
  if (n->kind != ZLB_YAML_SEQ || n->n == 0)
    return zlb_error_set(err, ZLB_EPARSE, "%s:%d: a shape must be a non-empty list",
                         file, n->line);
  if (n->items[0]->kind == ZLB_YAML_SEQ) {
    dims = n->items[0];
    first_arg = 1;
  }
  if (dims->n == 0)
    return zlb_error_set(err, ZLB_EPARSE, "%s:%d: shape [] has no extents", file, dims->line);
  if (dims->n > ZLB_MAX_DIMS)
    return zlb_error_set(err, ZLB_EPARSE, "%s:%d: shape has %zu dimensions (at most %d)",
                         file, dims->line, dims->n, ZLB_MAX_DIMS);
  for (size_t i = 0; i < dims->n; i++) {
    int64_t e;
    if ((rc = parse_extent(dims, dims->items[i], i + 1, file, &e, err)))
      return rc;
    s->dims[s->ndim++] = e;
    /* 2^48 per extent, up to 8 of them: the product can overflow. */
    if (e && numel > (uint64_t)INT64_MAX / (uint64_t)e) {
      char shape[80];
      shape_text(dims, shape, sizeof(shape));
      return zlb_error_set(err, ZLB_EPARSE,
                           "%s:%d: shape %s has more than 2^63 elements in all", file,
                           dims->line, shape);
    }
    numel *= (uint64_t)e;
  }
  if (first_arg) {
    for (size_t i = 1; i < n->n; i++) {
      const zlb_yaml_node_t *a = n->items[i];
      if (a->kind != ZLB_YAML_SCALAR || zlb_yaml_scalar_long(a, &v))
        return zlb_error_set(err, ZLB_EPARSE,
                             "%s:%d: shape argument %zu is not an integer or boolean",
                             file, a->line, i);
      if (s->nargs == ZLB_MAX_ARGS)
        return zlb_error_set(err, ZLB_EPARSE, "%s:%d: more than %d shape arguments",
                             file, a->line, ZLB_MAX_ARGS);
      s->args[s->nargs++] = v;
    }
  }
  return 0;
}

static int add_list(const zlb_yaml_node_t *list, const char *file, const char *what,
                    zlb_shape_list_t *out, zlb_error_t *err) {
  int rc;
  if (!list || zlb_yaml_is_null(list))
    return 0;
  if (list->kind != ZLB_YAML_SEQ)
    return zlb_error_set(err, ZLB_EPARSE, "%s:%d: '%s' must be a list of shapes", file,
                         list->line, what);
  if (list->n > MAX_SHAPES - out->n)
    return zlb_error_set(err, ZLB_EPARSE, "%s:%d: more than %d shapes for one key", file,
                         list->line, MAX_SHAPES);
  out->v = zlb_xrealloc(out->v, (out->n + list->n) * sizeof(*out->v));
  for (size_t i = 0; i < list->n; i++) {
    zlb_shape_t s;
    if ((rc = parse_entry(list->items[i], file, &s, err)))
      return rc;
    /* Comprehensive lists may repeat core shapes: keep the first. */
    int dup = 0;
    for (size_t j = 0; j < out->n && !dup; j++)
      dup = !memcmp(&out->v[j], &s, sizeof(s));
    if (!dup)
      out->v[out->n++] = s;
  }
  return 0;
}

static void builtin_defaults(int host, zlb_shape_list_t *out) {
  static const zlb_shape_t dev[] = {{1, {1048576}, 0, {0}}, {2, {64, 64}, 0, {0}},
                                    {2, {4096, 4096}, 0, {0}}, {3, {64, 512, 512}, 0, {0}}};
  static const zlb_shape_t cpu[] = {{1, {4096}, 0, {0}}, {2, {64, 64}, 0, {0}},
                                    {2, {256, 256}, 0, {0}}};
  const zlb_shape_t *src = host ? cpu : dev;
  size_t n = host ? sizeof(cpu) / sizeof(cpu[0]) : sizeof(dev) / sizeof(dev[0]);
  out->v = zlb_xmalloc(n * sizeof(*out->v));
  memcpy(out->v, src, n * sizeof(*out->v));
  out->n = n;
  zlb_strlcpy(out->source, "built-in", sizeof(out->source));
  zlb_strlcpy(out->key, "default", sizeof(out->key));
}

int zlb_shapes_resolve(const char *file, const char *op, const char *family,
                       int level, int host, zlb_shape_list_t *out, zlb_error_t *err) {
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  const zlb_yaml_node_t *entry = NULL, *root;
  const char *key = NULL;
  const char *const *cls;
  int rc = 0;

  memset(out, 0, sizeof(*out));
  if (!file) {
    builtin_defaults(host, out);
    return 0;
  }
  if ((rc = zlb_yaml_load_file(file, &doc, err)))
    return rc;
  root = doc.root;
  if (root && !zlb_yaml_is_null(root) && root->kind != ZLB_YAML_MAP) {
    rc = zlb_error_set(err, ZLB_EPARSE,
                       "%s:%d: a shape file must be a map of operator or family names",
                       file, root->line);
    goto out;
  }
  if ((entry = zlb_yaml_map_get(root, op)))
    key = op;
  else if ((entry = zlb_yaml_map_get(root, family)))
    key = family;
  for (cls = flaggems_classes(family); !entry && *cls; cls++)
    if ((entry = zlb_yaml_map_get(root, *cls)))
      key = *cls;
  if (!entry && (entry = zlb_yaml_map_get(root, "default")))
    key = "default";
  if (!entry && (entry = zlb_yaml_map_get(root, "Benchmark")))
    key = "Benchmark";
  if (!entry) {
    builtin_defaults(host, out);
    snprintf(out->source, sizeof(out->source), "built-in (no key for '%s' in %s)", op,
             file);
    goto out;
  }
  zlb_strlcpy(out->source, file, sizeof(out->source));
  zlb_strlcpy(out->key, key, sizeof(out->key));
  if (entry->kind == ZLB_YAML_SEQ) {
    /* A bare list under the key: the shapes themselves. */
    rc = add_list(entry, file, key, out, err);
    goto check;
  }
  if (entry->kind != ZLB_YAML_MAP) {
    rc = zlb_error_set(err, ZLB_EPARSE,
                       "%s:%d: key '%s' must map to {shapes: [...]} or a list of shapes",
                       file, entry->line, key);
    goto out;
  }
  /* A misspelt field (comprehensive_shape) would drop its shapes without a
   * word: every field is one of these. */
  for (size_t i = 0; i < entry->n; i++) {
    static const char *const fields[] = {"shapes", "comprehensive_shapes", "shape_desc", "<<"};
    int known = 0;
    for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]) && !known; k++)
      known = !strcmp(entry->keys[i], fields[k]);
    if (!known) {
      rc = zlb_error_set(err, ZLB_EPARSE,
                         "%s:%d: key '%s' has an unknown field '%s' (expected shapes, "
                         "comprehensive_shapes or shape_desc)",
                         file, entry->key_lines ? entry->key_lines[i] : entry->line, key,
                         entry->keys[i]);
      goto out;
    }
  }
  {
    const zlb_yaml_node_t *desc = zlb_yaml_map_get(entry, "shape_desc");
    if (desc && zlb_yaml_is_null(desc))
      desc = NULL; /* `shape_desc:` with nothing: no description */
    if (desc && desc->kind != ZLB_YAML_SCALAR) {
      rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: key '%s': shape_desc must be text", file,
                         desc->line, key);
      goto out;
    }
    if (desc)
      zlb_strlcpy(out->desc, desc->scalar ? desc->scalar : "", sizeof(out->desc));
  }
  if ((rc = add_list(zlb_yaml_map_get(entry, "shapes"), file, "shapes", out, err)))
    goto out;
  if (level >= 1 && (rc = add_list(zlb_yaml_map_get(entry, "comprehensive_shapes"), file,
                                   "comprehensive_shapes", out, err)))
    goto out;
check:
  if (!rc && out->n == 0)
    rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: key '%s' lists no shapes", file,
                       entry->line, key);
out:
  if (rc)
    zlb_shape_list_release(out);
  zlb_yaml_doc_release(&doc);
  return rc;
}

void zlb_shape_list_release(zlb_shape_list_t *l) {
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

void zlb_shape_format(const zlb_shape_t *s, char *buf, size_t len) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  if (s->nargs)
    zlb_strbuf_addch(&sb, '[');
  zlb_strbuf_addch(&sb, '[');
  for (int i = 0; i < s->ndim; i++)
    zlb_strbuf_addf(&sb, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
  zlb_strbuf_addch(&sb, ']');
  for (int i = 0; i < s->nargs; i++)
    zlb_strbuf_addf(&sb, ", %lld", (long long)s->args[i]);
  if (s->nargs)
    zlb_strbuf_addch(&sb, ']');
  zlb_strlcpy(buf, sb.buf, len);
  zlb_strbuf_release(&sb);
}
