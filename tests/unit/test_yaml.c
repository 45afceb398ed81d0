/* Unit tests of the YAML reader: golden documents (FlagGems core_shapes
 * style and a tour of every supported construct), one bad file per error
 * class with its exact message, lookups, scalar conversions and limits.
 * Set ZLB_UPDATE_GOLDEN=1 to rewrite the .expected files after a
 * deliberate change (then review the diff). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/yaml.h"

#ifndef ZLB_TEST_DATA
#define ZLB_TEST_DATA "tests/data"
#endif

/* ---- helpers ------------------------------------------------------------- */

static void data_path(zlb_strbuf_t *out, const char *name) {
  zlb_strbuf_addf(out, "%s/yaml/%s", ZLB_TEST_DATA, name);
}

static void parse_ok(const char *text, zlb_yaml_doc_t *doc) {
  zlb_error_t err = ZLB_ERROR_INIT;
  if (zlb_yaml_parse(text, strlen(text), "t.yaml", doc, &err) != 0)
    fail_msg("parse failed: %s\n--- input ---\n%s", err.msg, text);
}

/* The node at "key/0/key2" (map keys and sequence indexes), or NULL. */
static const zlb_yaml_node_t *at(const zlb_yaml_node_t *n, const char *path) {
  char part[128];
  while (n && *path) {
    size_t len = strcspn(path, "/");
    assert_true(len < sizeof(part));
    memcpy(part, path, len);
    part[len] = '\0';
    path += len + (path[len] == '/');
    if (n->kind == ZLB_YAML_SEQ) {
      char *end;
      long i = strtol(part, &end, 10);
      if (*end || i < 0 || (size_t)i >= n->n)
        return NULL;
      n = n->items[i];
    } else {
      n = zlb_yaml_map_get(n, part);
    }
  }
  return n;
}

/* ---- golden dump ----------------------------------------------------------
 * One line per mapping entry or block sequence item, keys with their line
 * ("key@3:"); sequences of scalars inline; plain scalars bare, quoted ones
 * in double quotes, nulls as ~, escapes as in C. */

static void dump_text(zlb_strbuf_t *out, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\n')
      zlb_strbuf_addstr(out, "\\n");
    else if (c == '\t')
      zlb_strbuf_addstr(out, "\\t");
    else if (c == '\\' || c == '"')
      zlb_strbuf_addf(out, "\\%c", c);
    else if (c < 0x20)
      zlb_strbuf_addf(out, "\\x%02x", c);
    else
      zlb_strbuf_addch(out, c);
  }
}

static int is_inline(const zlb_yaml_node_t *n) {
  size_t i;
  if (n->kind == ZLB_YAML_MAP)
    return n->n == 0;
  if (n->kind == ZLB_YAML_SEQ)
    for (i = 0; i < n->n; i++)
      if (!is_inline(n->items[i]))
        return 0;
  return 1;
}

static void dump_inline(zlb_strbuf_t *out, const zlb_yaml_node_t *n) {
  size_t i;
  switch (n->kind) {
  case ZLB_YAML_NULL:
    zlb_strbuf_addch(out, '~');
    break;
  case ZLB_YAML_SCALAR:
    if (n->quoted)
      zlb_strbuf_addch(out, '"');
    dump_text(out, n->scalar);
    if (n->quoted)
      zlb_strbuf_addch(out, '"');
    break;
  case ZLB_YAML_SEQ:
    zlb_strbuf_addch(out, '[');
    for (i = 0; i < n->n; i++) {
      if (i)
        zlb_strbuf_addstr(out, ", ");
      dump_inline(out, n->items[i]);
    }
    zlb_strbuf_addch(out, ']');
    break;
  case ZLB_YAML_MAP:
    zlb_strbuf_addstr(out, "{}");
    break;
  }
}

static void dump_block(zlb_strbuf_t *out, const zlb_yaml_node_t *n,
                       size_t indent) {
  size_t i;
  for (i = 0; i < n->n; i++) {
    const zlb_yaml_node_t *child =
        n->kind == ZLB_YAML_SEQ ? n->items[i] : n->values[i];
    zlb_strbuf_addpad(out, ' ', indent);
    if (n->kind == ZLB_YAML_SEQ) {
      zlb_strbuf_addch(out, '-');
    } else {
      dump_text(out, n->keys[i]);
      zlb_strbuf_addf(out, "@%d:", n->key_lines[i]);
    }
    if (is_inline(child)) {
      zlb_strbuf_addch(out, ' ');
      dump_inline(out, child);
      zlb_strbuf_addch(out, '\n');
    } else {
      zlb_strbuf_addch(out, '\n');
      dump_block(out, child, indent + 2);
    }
  }
}

static void dump(zlb_strbuf_t *out, const zlb_yaml_node_t *root) {
  if (is_inline(root)) {
    dump_inline(out, root);
    zlb_strbuf_addch(out, '\n');
  } else {
    dump_block(out, root, 0);
  }
}

/* Parse tests/data/yaml/<name>.yaml and compare its dump with
 * <name>.expected, reporting the first line that differs. */
static void check_golden(const char *name) {
  zlb_strbuf_t in = ZLB_STRBUF_INIT, exp_path = ZLB_STRBUF_INIT,
               got = ZLB_STRBUF_INIT;
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  char *expected = NULL;
  const char *update = getenv("ZLB_UPDATE_GOLDEN");
  data_path(&in, name);
  zlb_strbuf_addstr(&in, ".yaml");
  data_path(&exp_path, name);
  zlb_strbuf_addstr(&exp_path, ".expected");
  if (zlb_yaml_load_file(in.buf, &doc, &err) != 0)
    fail_msg("%s", err.msg);
  dump(&got, doc.root);
  if (update && *update && strcmp(update, "0")) {
    assert_int_equal(zlb_write_file_atomic(exp_path.buf, got.buf, got.len, &err), 0);
  } else {
    if (zlb_read_file(exp_path.buf, &expected, NULL, &err) != 0)
      fail_msg("%s", err.msg);
    if (strcmp(got.buf, expected) != 0) {
      const char *g = got.buf, *e = expected;
      int line = 1;
      while (*g && *g == *e) {
        line += *g == '\n';
        g++;
        e++;
      }
      while (g > got.buf && g[-1] != '\n')
        g--;
      while (e > expected && e[-1] != '\n')
        e--;
      fail_msg("%s: dump differs from %s at line %d\n  got:      %.*s\n"
               "  expected: %.*s",
               in.buf, exp_path.buf, line, (int)strcspn(g, "\n"), g,
               (int)strcspn(e, "\n"), e);
    }
  }
  free(expected);
  zlb_yaml_doc_release(&doc);
  zlb_strbuf_release(&in);
  zlb_strbuf_release(&exp_path);
  zlb_strbuf_release(&got);
}

static void test_golden_core_shapes(void **state) {
  (void)state;
  check_golden("core_shapes");
}

static void test_golden_features(void **state) {
  (void)state;
  check_golden("features");
}

/* ---- lookups, lines and node shapes ---------------------------------------- */

static const char lookup_doc[] =
    "single_dim_shapes: &sd\n"              /* 1 */
    "  shapes:\n"                           /* 2 */
    "    - [1073741824]\n"                  /* 3 */
    "    - [1024]\n"                        /* 4 */
    "  shape_desc: \"N\"\n"                 /* 5 */
    "vdot:\n"                               /* 6 */
    "  <<: *sd\n"                           /* 7 */
    "BlasBenchmark:\n"                      /* 8 */
    "  shapes: [[2, 384, 384, 384],\n"      /* 9 */
    "           [2, 4096, 4096, 4096]]\n"   /* 10 */
    "  shape_desc: 'B, M, N, K'\n"          /* 11 */
    "softmax:\n"                            /* 12 */
    "  shapes:\n"                           /* 13 */
    "  - [[640, 1536], 0, false]\n"         /* 14 */
    "  empty:\n"                            /* 15 */
    "ops:\n"                                /* 16 */
    "  - name: add\n"                       /* 17 */
    "    tol: ~\n"                          /* 18 */
    "  -\n"                                 /* 19 */
    "    name: mul\n";                      /* 20 */

static const struct {
  const char *path;
  zlb_yaml_kind_t kind;
  const char *scalar; /* NULL: not checked */
  int quoted;
  int line;
  size_t n; /* SEQ/MAP size */
} lookups[] = {
    {"single_dim_shapes", ZLB_YAML_MAP, NULL, 0, 2, 2},
    {"single_dim_shapes/shapes", ZLB_YAML_SEQ, NULL, 0, 3, 2},
    {"single_dim_shapes/shapes/0", ZLB_YAML_SEQ, NULL, 0, 3, 1},
    {"single_dim_shapes/shapes/0/0", ZLB_YAML_SCALAR, "1073741824", 0, 3, 0},
    {"single_dim_shapes/shape_desc", ZLB_YAML_SCALAR, "N", 1, 5, 0},
    {"vdot", ZLB_YAML_MAP, NULL, 0, 7, 2}, /* a new map: the "<<" line */
    {"vdot/shapes/1/0", ZLB_YAML_SCALAR, "1024", 0, 4, 0},
    {"BlasBenchmark/shapes", ZLB_YAML_SEQ, NULL, 0, 9, 2},
    {"BlasBenchmark/shapes/1", ZLB_YAML_SEQ, NULL, 0, 10, 4},
    {"BlasBenchmark/shapes/1/3", ZLB_YAML_SCALAR, "4096", 0, 10, 0},
    {"BlasBenchmark/shape_desc", ZLB_YAML_SCALAR, "B, M, N, K", 1, 11, 0},
    {"softmax/shapes", ZLB_YAML_SEQ, NULL, 0, 14, 1},
    {"softmax/shapes/0/0/1", ZLB_YAML_SCALAR, "1536", 0, 14, 0},
    {"softmax/shapes/0/2", ZLB_YAML_SCALAR, "false", 0, 14, 0},
    {"softmax/empty", ZLB_YAML_NULL, "", 0, 15, 0},
    {"ops", ZLB_YAML_SEQ, NULL, 0, 17, 2},
    {"ops/0", ZLB_YAML_MAP, NULL, 0, 17, 2},
    {"ops/0/tol", ZLB_YAML_NULL, "~", 0, 18, 0},
    {"ops/1", ZLB_YAML_MAP, NULL, 0, 20, 1},
    {"ops/1/name", ZLB_YAML_SCALAR, "mul", 0, 20, 0},
};

static void test_lookup_table(void **state) {
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  size_t i;
  (void)state;
  parse_ok(lookup_doc, &doc);
  assert_string_equal(doc.filename, "t.yaml");
  for (i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
    const zlb_yaml_node_t *n = at(doc.root, lookups[i].path);
    if (!n)
      fail_msg("%s: not found", lookups[i].path);
    if (n->kind != lookups[i].kind || n->line != lookups[i].line ||
        n->quoted != lookups[i].quoted ||
        ((n->kind == ZLB_YAML_SEQ || n->kind == ZLB_YAML_MAP) &&
         n->n != lookups[i].n) ||
        (lookups[i].scalar && strcmp(n->scalar, lookups[i].scalar)))
      fail_msg("%s: got kind %d line %d quoted %d n %zu scalar '%s'",
               lookups[i].path, (int)n->kind, n->line, n->quoted, n->n,
               n->scalar ? n->scalar : "(null)");
  }
  /* merged values are the anchored nodes, not copies, with their lines */
  assert_ptr_equal(at(doc.root, "vdot/shapes"),
                   at(doc.root, "single_dim_shapes/shapes"));
  assert_int_equal(zlb_yaml_map_key_line(at(doc.root, "vdot"), "shape_desc"), 5);
  assert_null(at(doc.root, "missing"));
  assert_null(zlb_yaml_map_get(at(doc.root, "ops"), "name")); /* not a MAP */
  assert_null(zlb_yaml_map_get(NULL, "x"));
  assert_int_equal(zlb_yaml_map_key_line(doc.root, "softmax"), 12);
  assert_int_equal(zlb_yaml_map_key_line(at(doc.root, "ops/1"), "name"), 20);
  assert_int_equal(zlb_yaml_map_key_line(doc.root, "missing"), 0);
  assert_int_equal(zlb_yaml_map_key_line(at(doc.root, "ops"), "x"), 0);
  zlb_yaml_doc_release(&doc);
}

static void test_merge_order(void **state) {
  /* explicit keys win wherever they are written; the earlier source wins;
   * merged pairs take the place of "<<" and keep their own lines */
  static const char text[] = "base: &base {x: 1, y: 2}\n"
                             "over: &over\n"
                             "  y: 20\n"
                             "  z: 30\n"
                             "merged:\n"
                             "  first: 0\n"
                             "  <<: [*base, *over]\n"
                             "  x: 100\n"
                             "flow: {<<: *over, z: 3}\n";
  static const char *const keys[] = {"first", "y", "z", "x"};
  static const char *const vals[] = {"0", "2", "30", "100"};
  static const int lines[] = {6, 1, 4, 8};
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  const zlb_yaml_node_t *m;
  size_t i;
  (void)state;
  parse_ok(text, &doc);
  m = at(doc.root, "merged");
  assert_int_equal(m->n, 4);
  for (i = 0; i < 4; i++) {
    assert_string_equal(m->keys[i], keys[i]);
    assert_string_equal(m->values[i]->scalar, vals[i]);
    assert_int_equal(m->key_lines[i], lines[i]);
  }
  m = at(doc.root, "flow");
  assert_int_equal(m->n, 2);
  assert_string_equal(m->keys[0], "y");
  assert_string_equal(at(m, "z")->scalar, "3");
  assert_null(zlb_yaml_map_get(m, "<<"));
  zlb_yaml_doc_release(&doc);
}

static void test_alias_bomb_is_shared(void **state) {
  /* "billion laughs": 10^12 leaves if aliases were copied */
  zlb_strbuf_t text = ZLB_STRBUF_INIT;
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  const zlb_yaml_node_t *top, *below;
  int i, j;
  (void)state;
  zlb_strbuf_addstr(&text, "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
  for (i = 1; i <= 12; i++) {
    zlb_strbuf_addf(&text, "l%d: &l%d [", i, i);
    for (j = 0; j < 10; j++)
      zlb_strbuf_addf(&text, "%s*l%d", j ? ", " : "", i - 1);
    zlb_strbuf_addstr(&text, "]\n");
  }
  parse_ok(text.buf, &doc);
  top = at(doc.root, "l12");
  below = at(doc.root, "l11");
  assert_int_equal(top->n, 10);
  for (j = 0; j < 10; j++)
    assert_ptr_equal(top->items[j], below);
  zlb_yaml_doc_release(&doc);
  zlb_strbuf_release(&text);
}

static void test_many_keys(void **state) {
  /* past 16 keys lookups go through a hash index: same answers */
  zlb_strbuf_t text = ZLB_STRBUF_INIT;
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  const zlb_yaml_node_t *m;
  char key[16];
  int i;
  (void)state;
  for (i = 0; i < 1000; i++)
    zlb_strbuf_addf(&text, "k%d: %d\n", i, i);
  zlb_strbuf_addstr(&text, "k500: again\n");
  assert_int_equal(zlb_yaml_parse(text.buf, text.len, "t.yaml", &doc, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg, "t.yaml:1001: key 'k500' defined twice (first on line 501)");
  zlb_strbuf_reset(&text);
  zlb_strbuf_addstr(&text, "f: {");
  for (i = 0; i < 40; i++)
    zlb_strbuf_addf(&text, "k%d: %d, ", i, i);
  zlb_strbuf_addstr(&text, "k7: x}\n");
  assert_int_equal(zlb_yaml_parse(text.buf, text.len, "t.yaml", &doc, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg, "t.yaml:1: key 'k7' defined twice (first on line 1)");
  /* merges of big mappings: explicit keys win, then the earlier source */
  zlb_strbuf_reset(&text);
  zlb_strbuf_addstr(&text, "base: &base {");
  for (i = 0; i < 40; i++)
    zlb_strbuf_addf(&text, "%sm%d: b", i ? ", " : "", i);
  zlb_strbuf_addstr(&text, "}\nover: &over {");
  for (i = 20; i < 60; i++)
    zlb_strbuf_addf(&text, "%sm%d: o", i > 20 ? ", " : "", i);
  zlb_strbuf_addstr(&text, "}\nt:\n  m10: e\n  <<: [*base, *over]\n  m30: e\n  m50: e\n");
  for (i = 0; i < 30; i++)
    zlb_strbuf_addf(&text, "  x%d: e\n", i);
  parse_ok(text.buf, &doc);
  m = at(doc.root, "t");
  assert_int_equal(m->n, 60 + 30);
  assert_string_equal(m->keys[0], "m10");
  assert_string_equal(m->keys[1], "m0");
  assert_string_equal(m->keys[m->n - 1], "x29");
  for (i = 0; i < 60; i++) {
    snprintf(key, sizeof(key), "m%d", i);
    assert_string_equal(zlb_yaml_map_get(m, key)->scalar,
                        i == 10 || i == 30 || i == 50 ? "e" : i < 40 ? "b" : "o");
  }
  zlb_yaml_doc_release(&doc);
  zlb_strbuf_release(&text);
}

/* ---- errors ----------------------------------------------------------------- */

/* One file per error class; the message after "<path>:". */
static const struct {
  const char *file;
  const char *msg;
} bad_files[] = {
    {"bad_tab.yaml", "3: tab used for indentation (indent with spaces)"},
    {"bad_unknown_alias.yaml",
     "4: unknown alias '*bsae' (define '&bsae' before using it)"},
    {"bad_duplicate_key.yaml", "7: key 'softmax' defined twice (first on line 1)"},
    {"bad_unterminated_quote.yaml",
     "3: unterminated double-quoted string: missing closing quote"},
    {"bad_quote_before_key.yaml",
     "3: unterminated double-quoted string: missing closing quote"},
    {"bad_unterminated_flow.yaml",
     "2: unterminated flow sequence: missing closing ']'"},
    {"bad_flow_eof.yaml", "1: unterminated flow mapping: missing closing '}'"},
    {"bad_indentation.yaml",
     "4: bad indentation: indented 3, but the mapping that starts on line "
     "2 is indented 2"},
    {"bad_seq_in_map.yaml",
     "4: sequence item '- ' inside the mapping that starts on line 2 (indent "
     "it under a key)"},
    {"bad_nested_same_line.yaml",
     "1: unexpected ':' (a nested mapping must start on a new line)"},
    {"bad_merge_scalar.yaml",
     "3: merge key '<<' needs a mapping or a list of mappings (such as *base "
     "or [*a, *b])"},
    {"bad_recursive_alias.yaml",
     "2: alias '*loop' is used inside the node it names"},
    {"bad_depth.yaml", "1: nesting deeper than 64 levels"},
    {"bad_second_document.yaml",
     "6: more than one YAML document (a second one starts here); put every key "
     "in the first"},
};

static void test_bad_files(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
    zlb_strbuf_t path = ZLB_STRBUF_INIT, want = ZLB_STRBUF_INIT;
    zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
    zlb_error_t err = ZLB_ERROR_INIT;
    int rc;
    data_path(&path, bad_files[i].file);
    zlb_strbuf_addf(&want, "%s:%s", path.buf, bad_files[i].msg);
    rc = zlb_yaml_load_file(path.buf, &doc, &err);
    if (rc != ZLB_EPARSE || strcmp(err.msg, want.buf))
      fail_msg("%s: rc %d\n  got:      %s\n  expected: %s", bad_files[i].file,
               rc, err.msg, want.buf);
    assert_null(doc.root); /* a failed parse leaves the document empty */
    assert_null(doc.arena);
    zlb_yaml_doc_release(&doc);
    zlb_strbuf_release(&path);
    zlb_strbuf_release(&want);
  }
}

static const struct {
  const char *text;
  const char *msg;
} bad_texts[] = {
    {"a:\n  b: 1\n\t  c: 2\n", "t.yaml:3: tab used for indentation (indent with spaces)"},
    {"a: 'it''s\n", "t.yaml:1: unterminated single-quoted string: missing closing quote"},
    {"a: \"x\\", "t.yaml:1: unterminated double-quoted string: missing closing quote"},
    {"{a: 1, a: 2}\n", "t.yaml:1: key 'a' defined twice (first on line 1)"},
    {"\"a\": 1\na: 2\n", "t.yaml:2: key 'a' defined twice (first on line 1)"},
    {"a: [1, [2,\n  3]\n", "t.yaml:1: unterminated flow sequence: missing closing ']'"},
    {"a: [1, [2\nb: 1\n", "t.yaml:1: unterminated flow sequence: missing closing ']'"},
    {"a: [1, 2}\n", "t.yaml:1: expected ',' or ']' in the flow sequence that starts on line 1"},
    {"a: {b: 1 c: 2}\n", "t.yaml:1: expected ',' or '}' in the flow mapping that starts on line 1"},
    {"a: [b: 1]\n", "t.yaml:1: single-pair mappings inside a flow sequence are not supported (write {key: value})"},
    {"a: 1\n  b: 2\n", "t.yaml:2: bad indentation: indented 2, but the mapping that starts on line 1 is indented 0"},
    {"- [a]\n - b\n", "t.yaml:2: bad indentation: indented 1, but the sequence that starts on line 1 is indented 0"},
    {"  a: 1\nb: 2\n", "t.yaml:2: bad indentation: indented 0, but the document's top level is indented 2"},
    {"a: 1\n- b\n", "t.yaml:2: sequence item '- ' inside the mapping that starts on line 1 (indent it under a key)"},
    {"- a\nb: 1\n", "t.yaml:2: expected a sequence item '- ' like the ones from line 1 at this indentation"},
    {"a: 1\nplain\n", "t.yaml:2: expected 'key: value' in the mapping that starts on line 1"},
    {"a: - b\n", "t.yaml:1: sequence entries are not allowed here (start the list on a new line)"},
    {"a: b: c\n", "t.yaml:1: unexpected ':' (a nested mapping must start on a new line)"},
    {"a: [1] x\n", "t.yaml:1: unexpected text 'x' after the value"},
    {"a: ]\n", "t.yaml:1: unexpected ']'"},
    {"[1]\nb: 2\n", "t.yaml:2: unexpected content after the document's top-level value"},
    {"b: &b {x: 1}\na:\n  <<: *b\n  <<: *b\n", "t.yaml:4: key '<<' defined twice (first on line 3)"},
    {"x: &x [1, 2]\na:\n  <<: *x\n", "t.yaml:3: merge key '<<' needs a mapping or a list of mappings (such as *base or [*a, *b])"},
    {"a:\n  <<: [*nope]\n", "t.yaml:2: unknown alias '*nope' (define '&nope' before using it)"},
    {"a: *\n", "t.yaml:1: alias '*' without a name"},
    {"a: &\n", "t.yaml:1: anchor '&' without a name"},
    {"a: &x &y 1\n", "t.yaml:1: a node can have only one anchor"},
    {"- &a k: v\n", "t.yaml:1: an anchor before a compact nested collection is not supported (start the collection on the next line)"},
    {"a: \"\\q\"\n", "t.yaml:1: unknown escape '\\q' in a double-quoted string"},
    {"a: \"\\u12\"\n", "t.yaml:1: escape '\\u' needs 4 hex digits"},
    {"a: \"\\ud800\"\n", "t.yaml:1: escape '\\u' gives an invalid code point"},
    {"a: \"\\0\"\n", "t.yaml:1: escape '\\0' (NUL) is not supported"},
    {"a: !!str 1\n", "t.yaml:1: tags ('!') are not supported"},
    {"? a\n: b\n", "t.yaml:1: explicit keys ('? ') are not supported"},
    {"%YAML 1.2\n---\na: 1\n", "t.yaml:1: directives ('%') are not supported"},
    {": 1\n", "t.yaml:1: empty mapping key"},
    {"a: |x\n  y\n", "t.yaml:1: unexpected text after the block scalar indicator '|'"},
    {"a: [|]\n", "t.yaml:1: block scalar '|' inside a flow collection"},
    {"a: @b\n", "t.yaml:1: '@' cannot start a plain value (quote the value)"},
    {"a: {[1]: 2}\n", "t.yaml:1: flow collections as keys are not supported"},
    {"a: &r [1, *r]\n", "t.yaml:1: alias '*r' is used inside the node it names"},
};

static void test_bad_texts(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad_texts) / sizeof(bad_texts[0]); i++) {
    zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
    zlb_error_t err = ZLB_ERROR_INIT;
    int rc = zlb_yaml_parse(bad_texts[i].text, strlen(bad_texts[i].text),
                            "t.yaml", &doc, &err);
    if (rc != ZLB_EPARSE || strcmp(err.msg, bad_texts[i].msg))
      fail_msg("case %zu: rc %d\n  input:    %s\n  got:      %s\n"
               "  expected: %s",
               i, rc, bad_texts[i].text, err.msg, bad_texts[i].msg);
    assert_null(doc.root);
    assert_null(doc.arena);
  }
}

static void test_nul_byte(void **state) {
  static const char text[] = "a: 1\nb: x\0y\n";
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  (void)state;
  assert_int_equal(zlb_yaml_parse(text, sizeof(text) - 1, "t.yaml", &doc, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg, "t.yaml:2: NUL byte in the input (not a text file?)");
}

static void test_depth_limit(void **state) {
  zlb_strbuf_t text = ZLB_STRBUF_INIT;
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  int i;
  (void)state;
  /* 64 nested flow sequences are fine, 65 are not */
  zlb_strbuf_addpad(&text, '[', 64);
  zlb_strbuf_addpad(&text, ']', 64);
  parse_ok(text.buf, &doc);
  zlb_yaml_doc_release(&doc);
  zlb_strbuf_reset(&text);
  zlb_strbuf_addpad(&text, '[', 65);
  zlb_strbuf_addpad(&text, ']', 65);
  assert_int_equal(zlb_yaml_parse(text.buf, text.len, "t.yaml", &doc, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg, "t.yaml:1: nesting deeper than 64 levels");
  /* block mappings count the same way: the 65th starts on line 65 */
  zlb_strbuf_reset(&text);
  for (i = 0; i < 65; i++) {
    zlb_strbuf_addpad(&text, ' ', (size_t)i);
    zlb_strbuf_addstr(&text, "k:\n");
  }
  zlb_strbuf_addpad(&text, ' ', 65);
  zlb_strbuf_addstr(&text, "k: v\n");
  assert_int_equal(zlb_yaml_parse(text.buf, text.len, "t.yaml", &doc, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg, "t.yaml:65: nesting deeper than 64 levels");
  /* a deep unclosed bracket run ends cleanly, without running off */
  zlb_strbuf_reset(&text);
  zlb_strbuf_addpad(&text, '[', 100000);
  assert_int_equal(zlb_yaml_parse(text.buf, text.len, "t.yaml", &doc, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg, "t.yaml:1: nesting deeper than 64 levels");
  zlb_strbuf_release(&text);
}

/* ---- documents -------------------------------------------------------------- */

static void test_empty_documents(void **state) {
  static const char *const texts[] = {"", "\n\n", "# only a comment\n",
                                      "---\n", "--- # c\n...\n", "...\n# c\n\n"};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
    zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
    parse_ok(texts[i], &doc);
    assert_non_null(doc.root);
    assert_int_equal(doc.root->kind, ZLB_YAML_NULL);
    assert_true(zlb_yaml_is_null(doc.root));
    zlb_yaml_doc_release(&doc);
  }
}

/* A stream holds one document: what follows the first would be dropped
 * without a word, so it is an error naming the line where it starts. */
static void test_second_document_refused(void **state) {
  static const struct {
    const char *text;
    int line;
  } cases[] = {
      {"a: 1\n---\nb: 2\n", 2},
      {"a: 1\n---\nb: [unclosed\n", 2},
      {"--- \na: 1\n...\n---\nb: 2\n", 4},
      {"a: 1\n...\n--- 7\n", 3},
      {"a: [1]\n---\n", 2}, /* an empty second document too */
      {"...\na: 1\n", 2},
      {"# c\n... # end\n\n  a: 1\n", 4},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
    zlb_error_t err = ZLB_ERROR_INIT;
    char want[160];
    snprintf(want, sizeof(want),
             "t.yaml:%d: more than one YAML document (a second one starts here); put every "
             "key in the first",
             cases[i].line);
    if (zlb_yaml_parse(cases[i].text, strlen(cases[i].text), "t.yaml", &doc, &err) !=
            ZLB_EPARSE ||
        strcmp(err.msg, want))
      fail_msg("case %zu: got '%s', want '%s'", i, err.msg, want);
    assert_null(doc.root);
  }
}

static void test_length_bom_crlf(void **state) {
  static const char bounded[] = "a: 1\nb: 2";
  static const char crlf[] = "\xef\xbb\xbf" "a: 1\r\nb:\r\n  - \"x\"\r\n";
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  (void)state;
  /* only `len` bytes are read; the input need not end in NUL */
  assert_int_equal(zlb_yaml_parse(bounded, 4, "t.yaml", &doc, &err), 0);
  assert_string_equal(at(doc.root, "a")->scalar, "1");
  assert_null(at(doc.root, "b"));
  zlb_yaml_doc_release(&doc);
  parse_ok(crlf, &doc);
  assert_string_equal(doc.root->keys[0], "a");
  assert_string_equal(at(doc.root, "a")->scalar, "1");
  assert_string_equal(at(doc.root, "b/0")->scalar, "x");
  assert_int_equal(at(doc.root, "b/0")->line, 3);
  zlb_yaml_doc_release(&doc);
}

static void test_release_and_reuse(void **state) {
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  (void)state;
  zlb_yaml_doc_release(&doc); /* releasing an empty document is harmless */
  parse_ok("a: 1\n", &doc);
  zlb_yaml_doc_release(&doc);
  assert_null(doc.root);
  assert_null(doc.arena);
  assert_string_equal(doc.filename, "");
  zlb_yaml_doc_release(&doc);
  parse_ok("b: [2]\n", &doc);
  assert_string_equal(at(doc.root, "b/0")->scalar, "2");
  zlb_yaml_doc_release(&doc);
  /* a NULL filename reads "<yaml>" in messages */
  assert_int_equal(zlb_yaml_parse("a: *x\n", 6, NULL, &doc, &err), ZLB_EPARSE);
  assert_string_equal(err.msg, "<yaml>:1: unknown alias '*x' (define '&x' before using it)");
  zlb_yaml_doc_release(&doc);
}

static void test_load_missing_file(void **state) {
  zlb_strbuf_t path = ZLB_STRBUF_INIT, want = ZLB_STRBUF_INIT;
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  (void)state;
  data_path(&path, "no-such-file.yaml");
  zlb_strbuf_addf(&want, "cannot read '%s': %s", path.buf, strerror(ENOENT));
  assert_int_equal(zlb_yaml_load_file(path.buf, &doc, &err), ZLB_ENOTFOUND);
  assert_string_equal(err.msg, want.buf);
  assert_null(doc.root);
  zlb_yaml_doc_release(&doc);
  zlb_strbuf_release(&path);
  zlb_strbuf_release(&want);
}

/* ---- scalar conversions ------------------------------------------------------ */

static const struct {
  const char *yaml; /* the value of key "v" */
  int rc;
  long long v;
} longs[] = {
    {"12", 0, 12},
    {"-3", 0, -3},
    {"+7", 0, 7},
    {"012", 0, 12}, /* decimal, not octal */
    {"0x10", 0, 16},
    {"0XfF", 0, 255},
    {"-0x1f", 0, -31},
    {"true", 0, 1},
    {"True", 0, 1},
    {"false", 0, 0},
    {"FALSE", 0, 0},
    {"\"42\"", 0, 42}, /* quoted scalars are still numbers when asked */
    {"'0x10'", 0, 16},
    {"9223372036854775807", 0, LLONG_MAX},
    {"-9223372036854775808", 0, LLONG_MIN},
    {"9223372036854775808", ZLB_EINVAL, 0},
    {"1.5", ZLB_EINVAL, 0},
    {"1e3", ZLB_EINVAL, 0},
    {"0x", ZLB_EINVAL, 0},
    {"0xg", ZLB_EINVAL, 0},
    {"12abc", ZLB_EINVAL, 0},
    {"\" 1\"", ZLB_EINVAL, 0},
    {"yes", ZLB_EINVAL, 0},
    {"abc", ZLB_EINVAL, 0},
    {"~", ZLB_EINVAL, 0},
    {"", ZLB_EINVAL, 0},
    {"[1]", ZLB_EINVAL, 0},
};

static void test_scalar_long(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
    zlb_strbuf_t text = ZLB_STRBUF_INIT;
    zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
    long long v = -12345;
    int rc;
    zlb_strbuf_addf(&text, "v: %s\n", longs[i].yaml);
    parse_ok(text.buf, &doc);
    rc = zlb_yaml_scalar_long(at(doc.root, "v"), &v);
    if (rc != longs[i].rc || (rc == 0 && v != longs[i].v))
      fail_msg("'%s': rc %d value %lld, expected rc %d value %lld",
               longs[i].yaml, rc, v, longs[i].rc, longs[i].v);
    if (rc)
      assert_true(v == -12345); /* untouched on error */
    zlb_yaml_doc_release(&doc);
    zlb_strbuf_release(&text);
  }
  assert_int_equal(zlb_yaml_scalar_long(NULL, NULL), ZLB_EINVAL);
}

static const struct {
  const char *yaml;
  int rc;
  double v; /* NAN: expect a NaN */
} doubles[] = {
    {"1.5", 0, 1.5},       {"-2e3", 0, -2000.0},  {"7", 0, 7.0},
    {".5", 0, 0.5},        {"\"0.25\"", 0, 0.25}, {".inf", 0, HUGE_VAL},
    {"-.Inf", 0, -HUGE_VAL}, {"+.INF", 0, HUGE_VAL}, {".nan", 0, NAN},
    {"1e999", ZLB_EINVAL, 0}, {"inf", ZLB_EINVAL, 0}, {"1.5x", ZLB_EINVAL, 0},
    {"true", ZLB_EINVAL, 0}, {"~", ZLB_EINVAL, 0},   {"' 1'", ZLB_EINVAL, 0},
    {"{}", ZLB_EINVAL, 0},
};

static void test_scalar_double(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(doubles) / sizeof(doubles[0]); i++) {
    zlb_strbuf_t text = ZLB_STRBUF_INIT;
    zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
    double v = -12345.0;
    int rc, same;
    zlb_strbuf_addf(&text, "v: %s\n", doubles[i].yaml);
    parse_ok(text.buf, &doc);
    rc = zlb_yaml_scalar_double(at(doc.root, "v"), &v);
    same = isnan(doubles[i].v) ? isnan(v) : v == doubles[i].v;
    if (rc != doubles[i].rc || (rc == 0 && !same))
      fail_msg("'%s': rc %d value %g, expected rc %d value %g", doubles[i].yaml,
               rc, v, doubles[i].rc, doubles[i].v);
    zlb_yaml_doc_release(&doc);
    zlb_strbuf_release(&text);
  }
}

static const struct {
  const char *yaml;
  int null;
} nulls[] = {
    {"~", 1},      {"null", 1},  {"Null", 1},   {"NULL", 1},   {"", 1},
    {"# c", 1},    {"\"\"", 0},  {"'null'", 0}, {"nil", 0},    {"nUll", 0},
    {"0", 0},      {"[]", 0},    {"{}", 0},     {"|-\n  ", 1}, {"'~'", 0},
};

static void test_is_null(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++) {
    zlb_strbuf_t text = ZLB_STRBUF_INIT;
    zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
    zlb_strbuf_addf(&text, "v: %s\n", nulls[i].yaml);
    parse_ok(text.buf, &doc);
    if (zlb_yaml_is_null(at(doc.root, "v")) != nulls[i].null)
      fail_msg("'%s': is_null should be %d", nulls[i].yaml, nulls[i].null);
    zlb_yaml_doc_release(&doc);
    zlb_strbuf_release(&text);
  }
  assert_true(zlb_yaml_is_null(NULL)); /* a missing value reads as null */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden_core_shapes),
      cmocka_unit_test(test_golden_features),
      cmocka_unit_test(test_lookup_table),
      cmocka_unit_test(test_merge_order),
      cmocka_unit_test(test_alias_bomb_is_shared),
      cmocka_unit_test(test_many_keys),
      cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_bad_texts),
      cmocka_unit_test(test_nul_byte),
      cmocka_unit_test(test_depth_limit),
      cmocka_unit_test(test_empty_documents),
      cmocka_unit_test(test_second_document_refused),
      cmocka_unit_test(test_length_bom_crlf),
      cmocka_unit_test(test_release_and_reuse),
      cmocka_unit_test(test_load_missing_file),
      cmocka_unit_test(test_scalar_long),
      cmocka_unit_test(test_scalar_double),
      cmocka_unit_test(test_is_null),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
