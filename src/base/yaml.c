/* YAML subset reader for asset files and FlagGems' core_shapes.yaml: block
 * and flow collections, scalars, comments, anchors, aliases, merge keys. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/yaml.h"

/* Collections nested deeper than this are an error: the parser recurses
 * once per level, and no asset file comes close. */
#define MAX_DEPTH 64
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
  const char *buf; /* NUL-terminated copy of the input, CRLF folded to LF */
  const char *end; /* its terminating NUL: also where a "..." leads */
  const char *cur; /* scan position */
  const char *ls;  /* start of the current line */
  int line;
  int at_start;    /* no content yet: "---" opens the document */
  int depth;
  const char *fname;
  zlb_error_t *err;
  struct zlb_yaml_arena *arena;
  zlb_strbuf_t sb; /* text of the scalar being read (scalars never nest) */
  anchor_t *anchors;
  size_t nanchors, anchors_cap;
  /* Indentation of the block key that holds the current flow collection
   * (-1: none). A line inside the collection that is not indented past it
   * and reads "key: value" means a closing bracket or quote is missing. */
  int flow_parent;
  char flow_ch;  /* innermost open flow collection: '[' or '{' */
  int flow_line; /* and the line it opened on */
} parser_t;

typedef struct mark {
  const char *cur, *ls;
  int line;
} mark_t;

enum { CTX_ROOT, CTX_MAP, CTX_SEQ };

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

static mark_t mark(const parser_t *p) {
  mark_t m;
  m.cur = p->cur;
  m.ls = p->ls;
  m.line = p->line;
  return m;
}

static void reset(parser_t *p, mark_t m) {
  p->cur = m.cur;
  p->ls = m.ls;
  p->line = m.line;
}

/* The buffer ends in NUL and holds no other NUL, so '\0' is the end and
 * s[1] may be read whenever s[0] is not '\0'. */
static int is_blank(int c) { return c == ' ' || c == '\t'; }
static int is_eol(int c) { return c == '\n' || c == '\0'; }
static int is_space_or_eol(int c) { return is_blank(c) || is_eol(c); }
static int is_flow_ind(int c) {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}
static int is_dash(const char *s) {
  return s[0] == '-' && is_space_or_eol(s[1]);
}
static int is_explicit_key(const char *s) {
  return s[0] == '?' && is_space_or_eol(s[1]);
}

/* "---" or "..." at the start of a line, alone or before a blank. */
static int is_marker(const char *s) {
  return ((s[0] == '-' && s[1] == '-' && s[2] == '-') ||
          (s[0] == '.' && s[1] == '.' && s[2] == '.')) &&
         is_space_or_eol(s[3]);
}

static void next_line(parser_t *p) {
  p->cur++; /* the '\n' */
  p->line++;
  p->ls = p->cur;
}

static void skip_blanks(parser_t *p) {
  while (is_blank(*p->cur))
    p->cur++;
}

static void skip_comment(parser_t *p) {
  if (*p->cur == '#')
    while (!is_eol(*p->cur))
      p->cur++;
}

static int enter(parser_t *p, int line) {
  if (++p->depth > MAX_DEPTH)
    return fail(p, line, "nesting deeper than %d levels", MAX_DEPTH);
  return 0;
}

static zlb_yaml_node_t *new_node(parser_t *p, zlb_yaml_kind_t kind, int line) {
  zlb_yaml_node_t *n = arena_alloc(p->arena, sizeof(*n));
  n->kind = kind;
  n->line = line;
  return n;
}

/* A scalar node from p->sb. Unquoted ~ and null spellings are NULL nodes. */
static zlb_yaml_node_t *sb_scalar(parser_t *p, int line, int quoted) {
  const char *s = p->sb.buf;
  int null = !quoted && (!*s || !strcmp(s, "~") || !strcmp(s, "null") ||
                         !strcmp(s, "Null") || !strcmp(s, "NULL"));
  zlb_yaml_node_t *n =
      new_node(p, null ? ZLB_YAML_NULL : ZLB_YAML_SCALAR, line);
  n->scalar = arena_strndup(p->arena, s, p->sb.len);
  n->quoted = quoted;
  return n;
}

static zlb_yaml_node_t *null_node(parser_t *p, int line) {
  zlb_yaml_node_t *n = new_node(p, ZLB_YAML_NULL, line);
  n->scalar = "";
  return n;
}

static void seq_push(parser_t *p, zlb_yaml_node_t *seq, size_t *cap,
                     zlb_yaml_node_t *item) {
  if (seq->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 8;
    seq->items = arena_grow(p->arena, seq->items, seq->n * sizeof(item),
                            nc * sizeof(item));
    *cap = nc;
  }
  seq->items[seq->n++] = item;
}

/* ---- line structure ---------------------------------------------------- */

/* At the start of a line in block context: end the document at a marker,
 * skip the indentation and refuse tabs in it (YAML forbids them there,
 * and their width is anyone's guess). */
static int begin_line(parser_t *p) {
  const char *s = p->ls;
  if (is_marker(s)) {
    if (s[0] == '-' && p->at_start) {
      p->at_start = 0;
      p->cur = s + 3;
      return 0;
    }
    p->cur = p->end; /* later documents of a stream are not read */
    return 0;
  }
  while (*s == ' ')
    s++;
  if (*s == '\t') {
    const char *t = s;
    while (is_blank(*t))
      t++;
    if (!is_eol(*t) && *t != '#')
      return fail(p, p->line, "tab used for indentation (indent with spaces)");
  }
  p->cur = s;
  return 0;
}

/* Move to the next content, past blanks, comments and empty lines; *col is
 * its column, or -1 at the end of the document. Call it where the rest of
 * the current line holds nothing more of the current node; calling it
 * again without moving returns the same column. */
static int next_content(parser_t *p, int *col) {
  int rc;
  for (;;) {
    skip_blanks(p);
    skip_comment(p);
    if (*p->cur == '\0') {
      *col = -1;
      return 0;
    }
    if (*p->cur != '\n') {
      *col = (int)(p->cur - p->ls);
      return 0;
    }
    next_line(p);
    if ((rc = begin_line(p)))
      return rc;
  }
}

/* 1 when the line from `s` reads "key:" followed by a blank or the end of
 * the line: the start of a block mapping entry. */
static int looks_like_key(const char *s) {
  const char *t;
  if (*s == '"' || *s == '\'') {
    char q = *s++;
    for (; !is_eol(*s); s++) {
      if (q == '"' && *s == '\\' && !is_eol(s[1])) {
        s++;
        continue;
      }
      if (*s == q) {
        if (q == '\'' && s[1] == '\'') {
          s++;
          continue;
        }
        break;
      }
    }
    if (*s != q)
      return 0;
    s++;
    while (is_blank(*s))
      s++;
    return *s == ':' && is_space_or_eol(s[1]);
  }
  if (is_eol(*s) || strchr("[]{},#&*!|>%@`", *s))
    return 0;
  if ((*s == '-' || *s == '?') && is_space_or_eol(s[1]))
    return 0;
  for (t = s; !is_eol(*t); t++) {
    if (*t == ':' && is_space_or_eol(t[1]))
      return 1;
    if (*t == '#' && t > s && is_blank(t[-1]))
      return 0;
  }
  return 0;
}

/* After a value: only blanks and a comment may follow on its line. */
static int expect_eol(parser_t *p) {
  int n = 0;
  skip_blanks(p);
  if (*p->cur == '#' || is_eol(*p->cur))
    return 0;
  if (*p->cur == ':')
    return fail(p, p->line,
                "unexpected ':' (a nested mapping must start on a new line)");
  while (n < 20 && !is_eol(p->cur[n]))
    n++;
  return fail(p, p->line, "unexpected text '%.*s' after the value", n, p->cur);
}

static int bad_indent(parser_t *p, int found, const char *what, int first,
                      int col) {
  return fail(p, p->line,
              "bad indentation: indented %d, but the %s that starts on line "
              "%d is indented %d",
              found, what, first, col);
}

static int unterminated_flow(parser_t *p, char open, int line) {
  return fail(p, line, "unterminated flow %s: missing closing '%c'",
              open == '[' ? "sequence" : "mapping", open == '[' ? ']' : '}');
}

/* ---- scalars ----------------------------------------------------------- */

static int hexval(int c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}


/* `digits` hex digits at s, or -1 when one is missing; values past the
 * last code point read as 0x110000 (invalid) rather than overflowing. */
static long read_hex(const char *s, int digits) {
  unsigned long v = 0;
  int i, d;
  for (i = 0; i < digits; i++) {
    if ((d = hexval((unsigned char)s[i])) < 0)
      return -1;
    v = v * 16 + (unsigned long)d;
  }
  return v > 0x10ffff ? 0x110000L : (long)v;
}

/* One backslash escape of a double-quoted scalar, appended to p->sb. */
static int read_escape(parser_t *p) {
  char c = p->cur[1];
  int digits = 0;
  long cp;
  const char *simple = "t\tn\nr\r\"\"\\\\//  a\ab\be\033f\fv\v";
  const char *s;
  for (s = simple; *s; s += 2) {
    if (*s == c || (c == '\t' && *s == 't')) {
      zlb_strbuf_addch(&p->sb, s[1]);
      p->cur += 2;
      return 0;
    }
  }
  switch (c) {
  case 'N': cp = 0x85; break;
  case '_': cp = 0xa0; break;
  case 'L': cp = 0x2028; break;
  case 'P': cp = 0x2029; break;
  case 'x': digits = 2; cp = 0; break;
  case 'u': digits = 4; cp = 0; break;
  case 'U': digits = 8; cp = 0; break;
  case '0':
    return fail(p, p->line, "escape '\\0' (NUL) is not supported");
  default:
    if ((unsigned char)c < 0x20 || c == 0x7f)
      return fail(p, p->line, "unknown escape in a double-quoted string");
    return fail(p, p->line,
                "unknown escape '\\%c' in a double-quoted string", c);
  }
  p->cur += 2;
  if (digits) {
    if ((cp = read_hex(p->cur, digits)) < 0)
      return fail(p, p->line, "escape '\\%c' needs %d hex digits", c, digits);
    p->cur += digits;
    if (cp >= 0xd800 && cp <= 0xdbff && p->cur[0] == '\\' &&
        p->cur[1] == 'u') {
      long lo = read_hex(p->cur + 2, 4);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        p->cur += 6;
      }
    }
    if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return fail(p, p->line, "escape '\\%c' gives an invalid code point",
                  c);
  }
  zlb_strbuf_add_utf8(&p->sb, (uint32_t)cp);
  return 0;
}

/* Read a quoted scalar at p->cur into p->sb (line breaks fold as YAML
 * says). A later line not indented past `parent` that reads like
 * "key: value" means the closing quote is missing. */
static int read_quoted(parser_t *p, int parent) {
  const char q = *p->cur;
  const int open_line = p->line;
  const char *what = q == '"' ? "double-quoted" : "single-quoted";
  size_t keep = 0; /* p->sb before this may not lose trailing blanks */
  int rc;
  zlb_strbuf_reset(&p->sb);
  p->cur++;
  for (;;) {
    char c = *p->cur;
    if (c == '\0')
      return fail(p, open_line, "unterminated %s string: missing closing quote",
                  what);
    if (c == q) {
      if (q == '\'' && p->cur[1] == '\'') {
        zlb_strbuf_addch(&p->sb, '\'');
        p->cur += 2;
        continue;
      }
      p->cur++;
      return 0;
    }
    if (c == '\\' && q == '"') {
      if (p->cur[1] == '\0')
        return fail(p, open_line,
                    "unterminated %s string: missing closing quote", what);
      if (p->cur[1] == '\n') { /* escaped line break: no folding space */
        p->cur++;
        next_line(p);
        skip_blanks(p);
      } else if ((rc = read_escape(p))) {
        return rc;
      }
      keep = p->sb.len;
      continue;
    }
    if (c == '\n') {
      int nl = 0;
      const char *s;
      while (p->sb.len > keep && is_blank(p->sb.buf[p->sb.len - 1]))
        zlb_strbuf_setlen(&p->sb, p->sb.len - 1);
      next_line(p);
      for (;;) {
        skip_blanks(p);
        if (*p->cur != '\n')
          break;
        nl++;
        next_line(p);
      }
      s = p->cur;
      if (parent >= 0 && !is_eol(*s) && s - p->ls <= parent &&
          looks_like_key(s))
        return fail(p, open_line,
                    "unterminated %s string: missing closing quote", what);
      if (nl)
        zlb_strbuf_addpad(&p->sb, '\n', (size_t)nl);
      else
        zlb_strbuf_addch(&p->sb, ' ');
      keep = p->sb.len;
      continue;
    }
    zlb_strbuf_addch(&p->sb, c);
    p->cur++;
  }
}

/* At the end of a line inside a plain scalar: when the next non-empty line
 * continues it, fold the break into p->sb, move there and return 1. */
static int continue_plain(parser_t *p, int flow, int parent) {
  mark_t m = mark(p);
  int nl = 0, indent;
  const char *s;
  skip_blanks(p);
  while (*p->cur == '\n') {
    next_line(p);
    s = p->cur;
    if (!flow && is_marker(s))
      break;
    while (*s == ' ')
      s++;
    indent = (int)(s - p->ls);
    while (is_blank(*s))
      s++;
    if (*s == '\n') {
      nl++;
      p->cur = s;
      continue;
    }
    if (*s == '\0' || *s == '#')
      break;
    if (!flow) {
      /* a tab in the indentation is left for next_content to report */
      if (indent <= parent || s - p->ls != indent || looks_like_key(s))
        break;
    } else {
      if (is_flow_ind(*s) ||
          (*s == ':' && (is_space_or_eol(s[1]) || is_flow_ind(s[1]))))
        break;
      if (p->flow_parent >= 0 && indent <= p->flow_parent && looks_like_key(s))
        break;
    }
    if (nl)
      zlb_strbuf_addpad(&p->sb, '\n', (size_t)nl);
    else
      zlb_strbuf_addch(&p->sb, ' ');
    p->cur = s;
    return 1;
  }
  reset(p, m);
  return 0;
}

/* Read a plain scalar at p->cur into p->sb. It ends at ": ", at " #", at
 * a flow indicator inside a flow collection, or at the end of a line that
 * the next line does not continue. */
static void read_plain(parser_t *p, int flow, int parent) {
  zlb_strbuf_reset(&p->sb);
  for (;;) {
    const char *start = p->cur, *s = p->cur, *e = p->cur;
    while (!is_eol(*s)) {
      if (*s == ':' && (is_space_or_eol(s[1]) || (flow && is_flow_ind(s[1]))))
        break;
      if (*s == '#' && s > start && is_blank(s[-1]))
        break;
      if (flow && is_flow_ind(*s))
        break;
      s++;
      if (!is_blank(s[-1]))
        e = s;
    }
    zlb_strbuf_add(&p->sb, start, (size_t)(e - start));
    p->cur = e;
    if (!is_eol(*s) || !continue_plain(p, flow, parent))
      return;
  }
}

/* A literal (|) or folded (>) block scalar; p->cur at the indicator.
 * Content lines are those indented past `parent`. */
static int read_block_scalar(parser_t *p, int parent, zlb_yaml_node_t **out) {
  const int line = p->line, literal = *p->cur == '|';
  int chomp = 0, explicit_indent = 0, base = -1, i, blank = 0, prev = 0;
  const char *body, *stop, *s;
  mark_t endm;
  p->cur++;
  for (i = 0; i < 2; i++) {
    if ((*p->cur == '-' || *p->cur == '+') && !chomp)
      chomp = *p->cur++ == '-' ? -1 : 1;
    else if (*p->cur >= '1' && *p->cur <= '9' && !explicit_indent)
      explicit_indent = *p->cur++ - '0';
  }
  skip_blanks(p);
  skip_comment(p);
  if (!is_eol(*p->cur))
    return fail(p, line,
                "unexpected text after the block scalar indicator '%c'",
                literal ? '|' : '>');
  if (explicit_indent)
    base = (parent < 0 ? 0 : parent) + explicit_indent;

  /* pass 1: the extent (up to the first line indented too little) */
  body = p->cur;
  endm = mark(p);
  stop = p->end;
  while (*p->cur == '\n') {
    int ind;
    next_line(p);
    s = p->cur;
    while (*s == ' ')
      s++;
    ind = (int)(s - p->ls);
    while (is_blank(*s))
      s++;
    if (is_eol(*s)) { /* empty lines belong to it if a later line does */
      p->cur = s;
      continue;
    }
    if (is_marker(p->ls) || (base < 0 && ind <= parent) ||
        (base >= 0 && ind < base)) {
      stop = p->ls;
      break;
    }
    if (base < 0)
      base = ind;
    p->cur = s;
    while (!is_eol(*p->cur))
      p->cur++;
    endm = mark(p);
  }

  /* pass 2: the text */
  zlb_strbuf_reset(&p->sb);
  for (s = body; *s == '\n' && s + 1 < stop;) {
    const char *ls = s + 1, *e = ls, *t = ls, *text;
    int more;
    while (!is_eol(*e))
      e++;
    while (is_blank(*t))
      t++;
    s = e;
    if (t == e) {
      blank++;
      continue;
    }
    text = ls + base;
    more = is_blank(*text);
    if (literal || !prev) {
      if (prev)
        zlb_strbuf_addch(&p->sb, '\n');
      zlb_strbuf_addpad(&p->sb, '\n', (size_t)blank);
    } else if (prev == 1 && !more) {
      if (blank)
        zlb_strbuf_addpad(&p->sb, '\n', (size_t)blank);
      else
        zlb_strbuf_addch(&p->sb, ' ');
    } else { /* around more-indented lines, breaks are kept */
      zlb_strbuf_addpad(&p->sb, '\n', (size_t)blank + 1);
    }
    zlb_strbuf_add(&p->sb, text, (size_t)(e - text));
    prev = more ? 2 : 1;
    blank = 0;
  }
  if (chomp == 0 && prev)
    zlb_strbuf_addch(&p->sb, '\n');
  else if (chomp > 0)
    zlb_strbuf_addpad(&p->sb, '\n', (size_t)blank + (prev ? 1 : 0));
  reset(p, endm);
  *out = sb_scalar(p, line, 0);
  (*out)->kind = ZLB_YAML_SCALAR; /* "|" then nothing is "", not null */
  return 0;
}

/* ---- anchors and aliases ----------------------------------------------- */

static size_t name_len(const char *s) {
  size_t n = 0;
  while (!is_space_or_eol(s[n]) && !is_flow_ind(s[n]))
    n++;
  return n;
}

/* Read "&name" and register it as pending; *slot indexes p->anchors. */
static int read_anchor(parser_t *p, size_t *slot) {
  size_t n = name_len(p->cur + 1);
  if (!n)
    return fail(p, p->line, "anchor '&' without a name");
  if (p->nanchors == p->anchors_cap) {
    size_t nc = p->anchors_cap ? p->anchors_cap * 2 : 16;
    p->anchors = arena_grow(p->arena, p->anchors,
                            p->nanchors * sizeof(*p->anchors),
                            nc * sizeof(*p->anchors));
    p->anchors_cap = nc;
  }
  p->anchors[p->nanchors].name = arena_strndup(p->arena, p->cur + 1, n);
  p->anchors[p->nanchors].node = NULL;
  *slot = p->nanchors++;
  p->cur += n + 1;
  return 0;
}

/* "*name": the node of the latest anchor of that name, shared, not copied
 * (so "billion laughs" documents cost nothing). */
static int read_alias(parser_t *p, zlb_yaml_node_t **out) {
  const char *name = p->cur + 1;
  size_t n = name_len(name), i;
  if (!n)
    return fail(p, p->line, "alias '*' without a name");
  for (i = p->nanchors; i-- > 0;) {
    if (strlen(p->anchors[i].name) != n || memcmp(p->anchors[i].name, name, n))
      continue;
    if (!p->anchors[i].node)
      return fail(p, p->line, "alias '*%.*s' is used inside the node it names",
                  (int)n, name);
    *out = p->anchors[i].node;
    p->cur += n + 1;
    return 0;
  }
  return fail(p, p->line,
              "unknown alias '*%.*s' (define '&%.*s' before using it)",
              (int)n, name, (int)n, name);
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

/* ---- nodes ------------------------------------------------------------- */

static int parse_value(parser_t *p, int parent, int ctx, int owner_line,
                       zlb_yaml_node_t **out);
static int parse_flow_node(parser_t *p, zlb_yaml_node_t **out);
static int parse_flow_seq(parser_t *p, zlb_yaml_node_t **out);
static int parse_flow_map(parser_t *p, zlb_yaml_node_t **out);

/* A node that is not a block collection: flow collection, quoted, plain or
 * block scalar, alias. `parent` as for read_plain. */
static int parse_inline(parser_t *p, int flow, int parent,
                        zlb_yaml_node_t **out) {
  const int line = p->line;
  const char c = *p->cur;
  int rc;
  switch (c) {
  case '[':
  case '{':
    p->flow_parent = parent;
    rc = c == '[' ? parse_flow_seq(p, out) : parse_flow_map(p, out);
    p->flow_parent = -1;
    return rc;
  case '"':
  case '\'':
    if ((rc = read_quoted(p, flow ? p->flow_parent : parent)))
      return rc;
    *out = sb_scalar(p, line, 1);
    return 0;
  case '*':
    return read_alias(p, out);
  case '|':
  case '>':
    if (flow)
      return fail(p, line, "block scalar '%c' inside a flow collection", c);
    return read_block_scalar(p, parent, out);
  case '!':
    return fail(p, line, "tags ('!') are not supported");
  case '&':
    return fail(p, line, "a node can have only one anchor");
  case '%':
  case '@':
  case '`':
    return fail(p, line, "'%c' cannot start a plain value (quote the value)",
                c);
  case ',':
  case ']':
  case '}':
    return fail(p, line, "unexpected '%c'", c);
  default:
    break;
  }
  if (is_eol(c)) {
    *out = null_node(p, line);
    return 0;
  }
  if (is_explicit_key(p->cur))
    return fail(p, line, "explicit keys ('? ') are not supported");
  if ((c == '-' || c == ':') &&
      (is_space_or_eol(p->cur[1]) || (flow && is_flow_ind(p->cur[1]))))
    return fail(p, line, "unexpected '%c'", c);
  read_plain(p, flow, parent);
  *out = sb_scalar(p, line, 0);
  return 0;
}

/* A block sequence whose first "-" is at p->cur, column `col`. With
 * `under_key` it is the value of a key at the same indentation
 * ("key:\n- a"), and ends at the next key. */
static int parse_block_seq(parser_t *p, int col, int under_key,
                           zlb_yaml_node_t **out) {
  const int first = p->line;
  zlb_yaml_node_t *seq = new_node(p, ZLB_YAML_SEQ, first), *item;
  size_t cap = 0;
  int rc, n;
  if ((rc = enter(p, first)))
    goto out;
  for (;;) {
    const int item_line = p->line;
    p->cur++; /* the '-' */
    if ((rc = parse_value(p, col, CTX_SEQ, item_line, &item)))
      goto out;
    seq_push(p, seq, &cap, item);
    if ((rc = next_content(p, &n)))
      goto out;
    if (n < col)
      break;
    if (n > col) {
      rc = bad_indent(p, n, "sequence", first, col);
      goto out;
    }
    if (!is_dash(p->cur)) {
      if (under_key)
        break;
      rc = fail(p, p->line,
                "expected a sequence item '- ' like the ones from line %d at "
                "this indentation",
                first);
      goto out;
    }
  }
  *out = seq;
out:
  p->depth--;
  return rc;
}

/* The key of a block mapping entry at p->cur (looks_like_key said so);
 * leaves p->cur after the ':'. */
static int read_block_key(parser_t *p, const char **key, int *quoted) {
  int rc;
  *quoted = *p->cur == '"' || *p->cur == '\'';
  if (*quoted) {
    if ((rc = read_quoted(p, -1)))
      return rc;
  } else {
    const char *s = p->cur, *e = p->cur;
    while (!is_eol(*s) && !(*s == ':' && is_space_or_eol(s[1]))) {
      s++;
      if (!is_blank(s[-1]))
        e = s;
    }
    zlb_strbuf_reset(&p->sb);
    zlb_strbuf_add(&p->sb, p->cur, (size_t)(e - p->cur));
    p->cur = s;
    if (!p->sb.len)
      return fail(p, p->line, "empty mapping key");
  }
  skip_blanks(p);
  p->cur++; /* the ':' */
  *key = arena_strndup(p->arena, p->sb.buf, p->sb.len);
  return 0;
}

/* A block mapping whose first key is at p->cur, column `col`. */
static int parse_block_map(parser_t *p, int col, zlb_yaml_node_t **out) {
  const int first = p->line;
  zlb_yaml_node_t *map = new_node(p, ZLB_YAML_MAP, first), *val;
  map_builder_t mb;
  int rc, n;
  memset(&mb, 0, sizeof(mb));
  if ((rc = enter(p, first)))
    goto out;
  for (;;) {
    const int key_line = p->line;
    const char *key = NULL;
    int quoted;
    if ((rc = read_block_key(p, &key, &quoted)))
      goto out;
    if ((rc = parse_value(p, col, CTX_MAP, key_line, &val)))
      goto out;
    if (!quoted && !strcmp(key, "<<"))
      rc = map_merge(p, &mb, key_line, val);
    else
      rc = map_add(p, &mb, key, key_line, val);
    if (rc)
      goto out;
    if ((rc = next_content(p, &n)))
      goto out;
    if (n < col)
      break;
    if (n > col) {
      rc = bad_indent(p, n, "mapping", first, col);
      goto out;
    }
    if (is_dash(p->cur)) {
      rc = fail(p, p->line,
                "sequence item '- ' inside the mapping that starts on line %d "
                "(indent it under a key)",
                first);
      goto out;
    }
    if (is_explicit_key(p->cur)) {
      rc = fail(p, p->line, "explicit keys ('? ') are not supported");
      goto out;
    }
    if (!looks_like_key(p->cur)) {
      rc = fail(p, p->line,
                "expected 'key: value' in the mapping that starts on line %d",
                first);
      goto out;
    }
  }
  map_finish(p, &mb, map);
  *out = map;
out:
  p->depth--;
  return rc;
}

/* A node whose first character is at p->cur, column `col`, on a line of
 * its own (or after "- "). */
static int parse_block(parser_t *p, int parent, int col, int ctx,
                       zlb_yaml_node_t **out) {
  int rc;
  if (*p->cur == '&')
    return parse_value(p, parent, ctx, p->line, out);
  if (is_dash(p->cur))
    return parse_block_seq(p, col, 0, out);
  if (is_explicit_key(p->cur))
    return fail(p, p->line, "explicit keys ('? ') are not supported");
  if (looks_like_key(p->cur))
    return parse_block_map(p, col, out);
  if ((rc = parse_inline(p, 0, parent, out)))
    return rc;
  return expect_eol(p);
}

/* The node after "key:" (ctx CTX_MAP), after "- " (CTX_SEQ) or at the
 * document start (CTX_ROOT): on the same line, or on the next lines when
 * the rest of this one is empty. `parent` is the column of the key or the
 * dash; `owner_line` the line an empty value reports. */
static int parse_value(parser_t *p, int parent, int ctx, int owner_line,
                       zlb_yaml_node_t **out) {
  zlb_yaml_node_t *node = NULL;
  size_t slot = 0;
  int rc = 0, anchored = 0, col;
  skip_blanks(p);
  if (*p->cur == '&') {
    if ((rc = read_anchor(p, &slot)))
      goto out;
    anchored = 1;
    skip_blanks(p);
    if (*p->cur == '&') {
      rc = fail(p, p->line, "a node can have only one anchor");
      goto out;
    }
  }
  if (*p->cur == '!') {
    rc = fail(p, p->line, "tags ('!') are not supported");
    goto out;
  }
  if (is_eol(*p->cur) || *p->cur == '#') {
    if ((rc = next_content(p, &col)))
      goto out;
    if (col > parent)
      rc = parse_block(p, parent, col, ctx, &node);
    else if (col >= 0 && col == parent && ctx == CTX_MAP && is_dash(p->cur))
      rc = parse_block_seq(p, col, 1, &node);
    else
      node = null_node(p, owner_line);
  } else if (ctx != CTX_MAP && (is_dash(p->cur) || is_explicit_key(p->cur) ||
                                looks_like_key(p->cur))) {
    /* "- key: value" or "- - item": a compact collection at this column */
    if (anchored) {
      rc = fail(p, p->line,
                "an anchor before a compact nested collection is not "
                "supported (start the collection on the next line)");
      goto out;
    }
    rc = parse_block(p, parent, (int)(p->cur - p->ls), ctx, &node);
  } else if (is_dash(p->cur)) {
    rc = fail(p, p->line,
              "sequence entries are not allowed here (start the list on a "
              "new line)");
  } else if (!(rc = parse_inline(p, 0, parent, &node))) {
    rc = expect_eol(p);
  }
  if (!rc && anchored)
    p->anchors[slot].node = node;
  *out = node;
out:
  return rc;
}

/* ---- flow collections -------------------------------------------------- */

/* Skip blanks, line breaks and comments between flow tokens. */
static int flow_skip(parser_t *p) {
  for (;;) {
    const char *s;
    skip_blanks(p);
    skip_comment(p);
    if (*p->cur != '\n')
      return 0;
    next_line(p);
    for (s = p->cur; is_blank(*s); s++)
      ;
    if (p->flow_parent >= 0 && !is_eol(*s) && s - p->ls <= p->flow_parent &&
        looks_like_key(s))
      return unterminated_flow(p, p->flow_ch, p->flow_line);
  }
}

static int parse_flow_node(parser_t *p, zlb_yaml_node_t **out) {
  zlb_yaml_node_t *node = NULL;
  size_t slot = 0;
  int rc, anchored = 0;
  if (*p->cur == '&') {
    if ((rc = read_anchor(p, &slot)))
      return rc;
    anchored = 1;
    if ((rc = flow_skip(p)))
      return rc;
    if (*p->cur == '\0')
      return unterminated_flow(p, p->flow_ch, p->flow_line);
  }
  if (*p->cur == '[')
    rc = parse_flow_seq(p, &node);
  else if (*p->cur == '{')
    rc = parse_flow_map(p, &node);
  else
    rc = parse_inline(p, 1, p->flow_parent, &node);
  if (!rc && anchored)
    p->anchors[slot].node = node;
  *out = node;
  return rc;
}

static int parse_flow_seq(parser_t *p, zlb_yaml_node_t **out) {
  const int open_line = p->line, saved_line = p->flow_line;
  const char saved_ch = p->flow_ch;
  zlb_yaml_node_t *seq = new_node(p, ZLB_YAML_SEQ, open_line), *item;
  size_t cap = 0;
  int rc;
  p->flow_ch = '[';
  p->flow_line = open_line;
  if ((rc = enter(p, open_line)))
    goto out;
  p->cur++;
  for (;;) {
    if ((rc = flow_skip(p)))
      goto out;
    if (*p->cur == ']')
      break;
    if (*p->cur == '\0') {
      rc = unterminated_flow(p, '[', open_line);
      goto out;
    }
    if ((rc = parse_flow_node(p, &item)))
      goto out;
    seq_push(p, seq, &cap, item);
    if ((rc = flow_skip(p)))
      goto out;
    if (*p->cur == ',') {
      p->cur++;
      continue;
    }
    if (*p->cur == ']')
      break;
    if (*p->cur == '\0')
      rc = unterminated_flow(p, '[', open_line);
    else if (*p->cur == ':')
      rc = fail(p, p->line,
                "single-pair mappings inside a flow sequence are not "
                "supported (write {key: value})");
    else
      rc = fail(p, p->line,
                "expected ',' or ']' in the flow sequence that starts on "
                "line %d",
                open_line);
    goto out;
  }
  p->cur++; /* the ']' */
  *out = seq;
out:
  p->depth--;
  p->flow_ch = saved_ch;
  p->flow_line = saved_line;
  return rc;
}

static int read_flow_key(parser_t *p, const char **key, int *quoted) {
  const char c = *p->cur;
  int rc;
  *quoted = c == '"' || c == '\'';
  if (*quoted) {
    if ((rc = read_quoted(p, p->flow_parent)))
      return rc;
  } else if (c == '[' || c == '{') {
    return fail(p, p->line, "flow collections as keys are not supported");
  } else if (c == '*' || c == '&' || c == '!') {
    return fail(p, p->line, "'%c' on a mapping key is not supported", c);
  } else if (is_explicit_key(p->cur)) {
    return fail(p, p->line, "explicit keys ('? ') are not supported");
  } else if (c == ':' &&
             (is_space_or_eol(p->cur[1]) || is_flow_ind(p->cur[1]))) {
    return fail(p, p->line, "empty mapping key");
  } else if (is_flow_ind(c) || c == '%' || c == '@' || c == '`') {
    return fail(p, p->line, "unexpected '%c'", c);
  } else {
    read_plain(p, 1, p->flow_parent);
  }
  *key = arena_strndup(p->arena, p->sb.buf, p->sb.len);
  return 0;
}

static int parse_flow_map(parser_t *p, zlb_yaml_node_t **out) {
  const int open_line = p->line, saved_line = p->flow_line;
  const char saved_ch = p->flow_ch;
  zlb_yaml_node_t *map = new_node(p, ZLB_YAML_MAP, open_line), *val;
  map_builder_t mb;
  int rc;
  memset(&mb, 0, sizeof(mb));
  p->flow_ch = '{';
  p->flow_line = open_line;
  if ((rc = enter(p, open_line)))
    goto out;
  p->cur++;
  for (;;) {
    const char *key = NULL;
    int quoted, key_line;
    if ((rc = flow_skip(p)))
      goto out;
    if (*p->cur == '}')
      break;
    if (*p->cur == '\0') {
      rc = unterminated_flow(p, '{', open_line);
      goto out;
    }
    key_line = p->line;
    if ((rc = read_flow_key(p, &key, &quoted)) || (rc = flow_skip(p)))
      goto out;
    if (*p->cur == ':') {
      p->cur++;
      if ((rc = flow_skip(p)))
        goto out;
      if (*p->cur == ',' || *p->cur == '}')
        val = null_node(p, key_line);
      else if (*p->cur == '\0')
        rc = unterminated_flow(p, '{', open_line);
      else
        rc = parse_flow_node(p, &val);
    } else if (*p->cur == ',' || *p->cur == '}') {
      val = null_node(p, key_line); /* {a, b}: keys without values */
    } else if (*p->cur == '\0') {
      rc = unterminated_flow(p, '{', open_line);
    } else {
      rc = fail(p, p->line,
                "expected ':' after key '%.100s' in the flow mapping that "
                "starts on line %d",
                key, open_line);
    }
    if (rc)
      goto out;
    if (!quoted && !strcmp(key, "<<"))
      rc = map_merge(p, &mb, key_line, val);
    else
      rc = map_add(p, &mb, key, key_line, val);
    if (rc || (rc = flow_skip(p)))
      goto out;
    if (*p->cur == ',') {
      p->cur++;
      continue;
    }
    if (*p->cur == '}')
      break;
    if (*p->cur == '\0')
      rc = unterminated_flow(p, '{', open_line);
    else
      rc = fail(p, p->line,
                "expected ',' or '}' in the flow mapping that starts on line "
                "%d",
                open_line);
    goto out;
  }
  p->cur++; /* the '}' */
  map_finish(p, &mb, map);
  *out = map;
out:
  p->depth--;
  p->flow_ch = saved_ch;
  p->flow_line = saved_line;
  return rc;
}

/* ---- documents --------------------------------------------------------- */

/* Copy the input NUL-terminated, without a UTF-8 BOM, with CRLF as LF. */
static char *copy_input(const char *text, size_t len, size_t *out_len) {
  char *buf = zlb_xmalloc(len + 1), *d = buf;
  size_t i = 0;
  if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
    i = 3;
  for (; i < len; i++) {
    if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
      continue;
    *d++ = text[i];
  }
  *d = '\0';
  *out_len = (size_t)(d - buf);
  return buf;
}

int zlb_yaml_parse(const char *text, size_t len, const char *filename,
                   zlb_yaml_doc_t *doc, zlb_error_t *err) {
  parser_t p;
  zlb_yaml_node_t *root = NULL;
  char *buf = NULL;
  const char *nul;
  size_t n = 0;
  int rc = 0, col, root_col;

  memset(&p, 0, sizeof(p));
  zlb_strbuf_init(&p.sb);
  doc->root = NULL;
  doc->arena = NULL;
  zlb_strlcpy(doc->filename, filename ? filename : "<yaml>",
              sizeof(doc->filename));
  p.fname = filename ? filename : "<yaml>";
  p.err = err;
  p.flow_parent = -1;
  p.arena = zlb_xcalloc(1, sizeof(*p.arena));
  buf = copy_input(text ? text : "", text ? len : 0, &n);
  p.buf = p.cur = p.ls = buf;
  p.end = buf + n;
  p.line = 1;
  p.at_start = 1;

  if ((nul = memchr(buf, '\0', n)) != NULL) {
    const char *s;
    for (s = buf; s < nul; s++)
      p.line += *s == '\n';
    rc = fail(&p, p.line, "NUL byte in the input (not a text file?)");
    goto out;
  }
  if ((rc = begin_line(&p)) || (rc = next_content(&p, &col)))
    goto out;
  p.at_start = 0;
  if (col < 0) {
    root = null_node(&p, 1);
  } else {
    if (*p.cur == '%' && p.cur == p.ls) {
      rc = fail(&p, p.line, "directives ('%%') are not supported");
      goto out;
    }
    root_col = col;
    if ((rc = parse_value(&p, -1, CTX_ROOT, p.line, &root)) ||
        (rc = next_content(&p, &col)))
      goto out;
    if (col >= 0 && col < root_col) {
      rc = fail(&p, p.line,
                "bad indentation: indented %d, but the document's top level "
                "is indented %d",
                col, root_col);
      goto out;
    }
    if (col >= 0) {
      rc = fail(&p, p.line,
                "unexpected content after the document's top-level value");
      goto out;
    }
  }
  doc->root = root;
  doc->arena = p.arena;
  p.arena = NULL;
out:
  if (rc)
    doc->filename[0] = '\0';
  arena_free(p.arena);
  zlb_strbuf_release(&p.sb);
  free(buf);
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
  if ((rc = zlb_read_file(path, &text, &len, err)))
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
