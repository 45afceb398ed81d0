/* JSON reader: RFC 8259 plus the NaN, Infinity and -Infinity tokens that
 * Python's json.dumps writes, into a malloc'ed tree owned by its root. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/json.h"

/* Deeper nesting is an error: the reader recurses once per level. */
#define MAX_DEPTH 128

typedef struct jparser {
  const char *cur, *end;
  const char *ls; /* start of the current line, for columns */
  int line;
  int depth;
  const char *what;
  zlb_error_t *err;
} jparser_t;

static int fail_at(jparser_t *p, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int fail_at(jparser_t *p, int line, int col, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return zlb_error_set(p->err, ZLB_EPARSE, "%s:%d:%d: %s", p->what, line, col,
                       msg);
}

static int col_of(const jparser_t *p, const char *at) {
  return (int)(at - p->ls) + 1;
}

/* "unexpected character 'x'" or, for bytes that do not print, its code. */
static int fail_char(jparser_t *p, const char *what_expected) {
  unsigned char c = (unsigned char)*p->cur;
  if (c >= 0x20 && c < 0x7f)
    return fail_at(p, p->line, col_of(p, p->cur), "unexpected '%c'%s%s", c,
                   what_expected ? ", expected " : "",
                   what_expected ? what_expected : "");
  return fail_at(p, p->line, col_of(p, p->cur), "unexpected byte 0x%02x%s%s",
                 c, what_expected ? ", expected " : "",
                 what_expected ? what_expected : "");
}

static void skip_ws(jparser_t *p) {
  while (p->cur < p->end) {
    char c = *p->cur;
    if (c == '\n') {
      p->line++;
      p->ls = p->cur + 1;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      return;
    }
    p->cur++;
  }
}

static int at_end(const jparser_t *p) { return p->cur >= p->end; }

static int fail_eof(jparser_t *p, const char *what_expected) {
  return fail_at(p, p->line, col_of(p, p->cur),
                 "unexpected end of input, expected %s", what_expected);
}

/* 1 (and past it) when `word` is next in the input. */
static int eat(jparser_t *p, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(p->end - p->cur) < n || memcmp(p->cur, word, n))
    return 0;
  p->cur += n;
  return 1;
}

static int hex4(const char *s, const char *end) {
  int v = 0, i;
  if (end - s < 4)
    return -1;
  for (i = 0; i < 4; i++) {
    char c = s[i];
    v *= 16;
    if (c >= '0' && c <= '9')
      v += c - '0';
    else if (c >= 'a' && c <= 'f')
      v += c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      v += c - 'A' + 10;
    else
      return -1;
  }
  return v;
}


/* "\uXXXX" (or a surrogate pair of them) at p->cur, appended as UTF-8. */
static int read_unicode(jparser_t *p, zlb_strbuf_t *sb) {
  const char *at = p->cur;
  int hi = hex4(p->cur + 2, p->end), lo;
  if (hi < 0)
    return fail_at(p, p->line, col_of(p, at),
                   "invalid escape: '\\u' needs 4 hex digits");
  p->cur += 6;
  if (hi >= 0xdc00 && hi <= 0xdfff)
    return fail_at(p, p->line, col_of(p, at),
                   "invalid escape: unpaired low surrogate \\u%04x", hi);
  if (hi >= 0xd800 && hi <= 0xdbff) {
    if (p->end - p->cur < 6 || p->cur[0] != '\\' || p->cur[1] != 'u' ||
        (lo = hex4(p->cur + 2, p->end)) < 0xdc00 || lo > 0xdfff)
      return fail_at(p, p->line, col_of(p, at),
                     "invalid escape: high surrogate \\u%04x without a low "
                     "surrogate after it",
                     hi);
    p->cur += 6;
    zlb_strbuf_add_utf8(sb, 0x10000 + (((uint32_t)hi - 0xd800) << 10) +
                     ((uint32_t)lo - 0xdc00));
    return 0;
  }
  if (hi == 0)
    return fail_at(p, p->line, col_of(p, at),
                   "'\\u0000' is not supported: strings are NUL-terminated");
  zlb_strbuf_add_utf8(sb, (uint32_t)hi);
  return 0;
}

/* A string at p->cur (the opening quote); *out is malloc'ed. */
static int read_string(jparser_t *p, char **out) {
  const int line = p->line, col = col_of(p, p->cur);
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  int rc = 0;
  p->cur++;
  for (;;) {
    unsigned char c;
    if (at_end(p) || *p->cur == '\n') {
      rc = fail_at(p, line, col, "unterminated string: missing closing '\"'");
      goto out;
    }
    c = (unsigned char)*p->cur;
    if (c == '"') {
      p->cur++;
      break;
    }
    if (c < 0x20) {
      rc = fail_at(p, p->line, col_of(p, p->cur),
                   "control character 0x%02x in a string (escape it)", c);
      goto out;
    }
    if (c != '\\') {
      zlb_strbuf_addch(&sb, c);
      p->cur++;
      continue;
    }
    if (p->end - p->cur < 2) {
      rc = fail_at(p, line, col, "unterminated string: missing closing '\"'");
      goto out;
    }
    switch (p->cur[1]) {
    case '"': zlb_strbuf_addch(&sb, '"'); break;
    case '\\': zlb_strbuf_addch(&sb, '\\'); break;
    case '/': zlb_strbuf_addch(&sb, '/'); break;
    case 'b': zlb_strbuf_addch(&sb, '\b'); break;
    case 'f': zlb_strbuf_addch(&sb, '\f'); break;
    case 'n': zlb_strbuf_addch(&sb, '\n'); break;
    case 'r': zlb_strbuf_addch(&sb, '\r'); break;
    case 't': zlb_strbuf_addch(&sb, '\t'); break;
    case 'u':
      if ((rc = read_unicode(p, &sb)))
        goto out;
      continue;
    default:
      if ((unsigned char)p->cur[1] >= 0x20 && (unsigned char)p->cur[1] < 0x7f)
        rc = fail_at(p, p->line, col_of(p, p->cur),
                     "invalid escape '\\%c' in a string", p->cur[1]);
      else
        rc = fail_at(p, p->line, col_of(p, p->cur),
                     "invalid escape in a string");
      goto out;
    }
    p->cur += 2;
  }
  *out = zlb_strbuf_detach(&sb);
out:
  zlb_strbuf_release(&sb);
  return rc;
}

static int is_digit(const jparser_t *p, const char *s) {
  return s < p->end && *s >= '0' && *s <= '9';
}

/* A number per RFC 8259's grammar (no leading '+', zeros, or bare '.'). */
static int read_number(jparser_t *p, double *out) {
  const char *start = p->cur, *s = p->cur;
  char small[64], *copy = small;
  size_t n;
  if (s < p->end && *s == '-')
    s++;
  if (!is_digit(p, s)) {
    p->cur = s;
    return at_end(p) ? fail_eof(p, "a digit") : fail_char(p, "a digit");
  }
  if (*s == '0' && is_digit(p, s + 1)) {
    p->cur = s;
    return fail_at(p, p->line, col_of(p, s),
                   "invalid number: leading zeros are not allowed");
  }
  while (is_digit(p, s))
    s++;
  if (s < p->end && *s == '.') {
    s++;
    if (!is_digit(p, s)) {
      p->cur = s;
      return fail_at(p, p->line, col_of(p, s),
                     "invalid number: expected a digit after '.'");
    }
    while (is_digit(p, s))
      s++;
  }
  if (s < p->end && (*s == 'e' || *s == 'E')) {
    s++;
    if (s < p->end && (*s == '+' || *s == '-'))
      s++;
    if (!is_digit(p, s)) {
      p->cur = s;
      return fail_at(p, p->line, col_of(p, s),
                     "invalid number: expected a digit in the exponent");
    }
    while (is_digit(p, s))
      s++;
  }
  /* strtod needs a terminator the input may not have */
  n = (size_t)(s - start);
  if (n >= sizeof(small))
    copy = zlb_xmalloc(n + 1);
  memcpy(copy, start, n);
  copy[n] = '\0';
  *out = strtod(copy, NULL);
  if (copy != small)
    free(copy);
  p->cur = s;
  return 0;
}

static int parse_value(jparser_t *p, zlb_json_t **out);

/* Children are attached to their parent before they are read, so freeing
 * the root on error frees every partial subtree. */
static int parse_array(jparser_t *p, zlb_json_t *v) {
  const int line = p->line, col = col_of(p, p->cur);
  size_t cap = 0;
  int rc;
  p->cur++;
  skip_ws(p);
  if (!at_end(p) && *p->cur == ']') {
    p->cur++;
    return 0;
  }
  for (;;) {
    if (v->n == cap) {
      cap = cap ? cap * 2 : 8;
      v->items = zlb_xrealloc(v->items, cap * sizeof(*v->items));
    }
    skip_ws(p);
    if (at_end(p))
      return fail_at(p, line, col, "unterminated array: missing closing ']'");
    v->items[v->n] = NULL;
    rc = parse_value(p, &v->items[v->n]);
    v->n++;
    if (rc)
      return rc;
    skip_ws(p);
    if (at_end(p))
      return fail_at(p, line, col, "unterminated array: missing closing ']'");
    if (*p->cur == ']') {
      p->cur++;
      return 0;
    }
    if (*p->cur != ',')
      return fail_char(p, "',' or ']'");
    p->cur++;
  }
}

static int parse_object(jparser_t *p, zlb_json_t *v) {
  const int line = p->line, col = col_of(p, p->cur);
  size_t cap = 0;
  int rc;
  p->cur++;
  skip_ws(p);
  if (!at_end(p) && *p->cur == '}') {
    p->cur++;
    return 0;
  }
  for (;;) {
    skip_ws(p);
    if (at_end(p))
      return fail_at(p, line, col, "unterminated object: missing closing '}'");
    if (*p->cur != '"')
      return fail_char(p, "a string key");
    if (v->n == cap) {
      cap = cap ? cap * 2 : 8;
      v->items = zlb_xrealloc(v->items, cap * sizeof(*v->items));
      v->keys = zlb_xrealloc(v->keys, cap * sizeof(*v->keys));
    }
    v->items[v->n] = NULL;
    v->keys[v->n] = NULL;
    v->n++;
    if ((rc = read_string(p, &v->keys[v->n - 1])))
      return rc;
    skip_ws(p);
    if (at_end(p))
      return fail_at(p, line, col, "unterminated object: missing closing '}'");
    if (*p->cur != ':')
      return fail_char(p, "':' after the key");
    p->cur++;
    skip_ws(p);
    if (at_end(p))
      return fail_at(p, line, col, "unterminated object: missing closing '}'");
    if ((rc = parse_value(p, &v->items[v->n - 1])))
      return rc;
    skip_ws(p);
    if (at_end(p))
      return fail_at(p, line, col, "unterminated object: missing closing '}'");
    if (*p->cur == '}') {
      p->cur++;
      return 0;
    }
    if (*p->cur != ',')
      return fail_char(p, "',' or '}'");
    p->cur++;
  }
}

static int parse_value(jparser_t *p, zlb_json_t **out) {
  zlb_json_t *v;
  int rc = 0;
  skip_ws(p);
  if (at_end(p))
    return fail_eof(p, "a value");
  v = zlb_xcalloc(1, sizeof(*v));
  *out = v;
  switch (*p->cur) {
  case '{':
  case '[':
    if (++p->depth > MAX_DEPTH) {
      rc = fail_at(p, p->line, col_of(p, p->cur),
                   "nesting deeper than %d levels", MAX_DEPTH);
    } else if (*p->cur == '{') {
      v->kind = ZLB_JSON_OBJECT;
      rc = parse_object(p, v);
    } else {
      v->kind = ZLB_JSON_ARRAY;
      rc = parse_array(p, v);
    }
    p->depth--;
    return rc;
  case '"':
    v->kind = ZLB_JSON_STRING;
    return read_string(p, &v->string);
  case 't':
  case 'f':
    v->kind = ZLB_JSON_BOOL;
    v->boolean = *p->cur == 't';
    if (eat(p, v->boolean ? "true" : "false"))
      return 0;
    break;
  case 'n':
    v->kind = ZLB_JSON_NULL;
    if (eat(p, "null"))
      return 0;
    break;
  case 'N':
    v->kind = ZLB_JSON_NUMBER;
    v->number = NAN;
    if (eat(p, "NaN"))
      return 0;
    break;
  case 'I':
    v->kind = ZLB_JSON_NUMBER;
    v->number = INFINITY;
    if (eat(p, "Infinity"))
      return 0;
    break;
  case '-':
    v->kind = ZLB_JSON_NUMBER;
    if (p->end - p->cur > 1 && p->cur[1] == 'I') {
      v->number = -INFINITY;
      p->cur++;
      if (eat(p, "Infinity"))
        return 0;
      break;
    }
    return read_number(p, &v->number);
  default:
    if (*p->cur >= '0' && *p->cur <= '9') {
      v->kind = ZLB_JSON_NUMBER;
      return read_number(p, &v->number);
    }
    return fail_char(p, "a value");
  }
  return fail_at(p, p->line, col_of(p, p->cur),
                 "invalid literal (expected true, false, null, NaN or "
                 "Infinity)");
}

int zlb_json_parse(const char *text, size_t len, const char *what,
                   zlb_json_t **out, zlb_error_t *err) {
  jparser_t p;
  zlb_json_t *root = NULL;
  int rc;
  *out = NULL;
  memset(&p, 0, sizeof(p));
  p.cur = p.ls = text ? text : "";
  p.end = p.cur + (text ? len : 0);
  p.line = 1;
  p.what = what ? what : "<json>";
  p.err = err;
  if (p.end - p.cur >= 3 && !memcmp(p.cur, "\xef\xbb\xbf", 3))
    p.cur = p.ls = p.cur + 3; /* a UTF-8 byte order mark */
  if ((rc = parse_value(&p, &root)))
    goto out;
  skip_ws(&p);
  if (!at_end(&p)) {
    rc = fail_char(&p, "the end of the input after the value");
    goto out;
  }
  *out = root;
  root = NULL;
out:
  zlb_json_free(root);
  return rc;
}

void zlb_json_free(zlb_json_t *v) {
  size_t i;
  if (!v)
    return;
  for (i = 0; i < v->n; i++) {
    if (v->keys)
      free(v->keys[i]);
    if (v->items)
      zlb_json_free(v->items[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->string);
  free(v);
}

const zlb_json_t *zlb_json_get(const zlb_json_t *obj, const char *key) {
  size_t i;
  if (!obj || obj->kind != ZLB_JSON_OBJECT || !key)
    return NULL;
  for (i = obj->n; i-- > 0;) /* from the end: the last duplicate wins */
    if (obj->keys[i] && !strcmp(obj->keys[i], key))
      return obj->items[i];
  return NULL;
}

const char *zlb_json_get_string(const zlb_json_t *obj, const char *key,
                                const char *dflt) {
  const zlb_json_t *v = zlb_json_get(obj, key);
  return v && v->kind == ZLB_JSON_STRING ? v->string : dflt;
}

double zlb_json_get_number(const zlb_json_t *obj, const char *key,
                           double dflt) {
  const zlb_json_t *v = zlb_json_get(obj, key);
  return v && v->kind == ZLB_JSON_NUMBER ? v->number : dflt;
}
