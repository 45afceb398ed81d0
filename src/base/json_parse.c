/* JSON reader: a strict scan (RFC 8259 plus Python's NaN, Infinity and
 * -Infinity) that gives exact line:column errors, then cJSON builds the tree. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "zlbench/base.h"
#include "zlbench/json.h"

/* Deeper nesting is an error: the scan, cJSON and the copy into our tree
 * each recurse once per level (cJSON's own limit is 1000). */
#define MAX_DEPTH 128
/* Larger input is refused before anything is allocated for it: the tree
 * takes tens of bytes per value, and every JSON file zlbench reads (run
 * identities, peaks caches, FlagGems records) is kilobytes. */
#define MAX_INPUT ((size_t)16 << 20)

/*
 * cJSON is lax where the scan is not (leading zeros, "1.", raw control
 * characters, "\u0000", bytes below 0x20 taken for white space) and its
 * errors carry neither the problem nor where the enclosing value began, so
 * the scan checks the whole grammar first and cJSON only ever sees valid
 * input. It also reads numbers through a 64-byte buffer and knows no NaN
 * or Infinity: the scan keeps every number's value, in document order, and
 * hands cJSON a copy of the input with each number token turned into "0".
 */
typedef struct scan {
  const char *cur, *end;
  const char *ls; /* start of the current line, for columns */
  int line;
  int depth;
  const char *what;
  zlb_error_t *err;
  const char *text; /* the input after any byte order mark */
  char *copy;       /* what cJSON reads: `text` with numbers as 0 */
  double *nums;     /* every number, in document order */
  size_t nnums, cap;
  int *keypos;      /* line and column of every object key, in document order */
  size_t nkeys, kcap;
} scan_t;

static int fail_at(scan_t *p, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int fail_at(scan_t *p, int line, int col, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return zlb_error_set(p->err, ZLB_EPARSE, "%s:%d:%d: %s", p->what, line, col,
                       msg);
}

static int col_of(const scan_t *p, const char *at) {
  return (int)(at - p->ls) + 1;
}

/* "unexpected 'x'" or, for bytes that do not print, its code. */
static int fail_char(scan_t *p, const char *what_expected) {
  unsigned char c = (unsigned char)*p->cur;
  if (c >= 0x20 && c < 0x7f)
    return fail_at(p, p->line, col_of(p, p->cur), "unexpected '%c', expected %s",
                   c, what_expected);
  return fail_at(p, p->line, col_of(p, p->cur),
                 "unexpected byte 0x%02x, expected %s", c, what_expected);
}

static int at_end(const scan_t *p) { return p->cur >= p->end; }

static int fail_eof(scan_t *p, const char *what_expected) {
  return fail_at(p, p->line, col_of(p, p->cur),
                 "unexpected end of input, expected %s", what_expected);
}

static void skip_ws(scan_t *p) {
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

/* 1 (and past it) when `word` is next in the input. */
static int eat(scan_t *p, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(p->end - p->cur) < n || memcmp(p->cur, word, n))
    return 0;
  p->cur += n;
  return 1;
}

/* Keeps the value of the number token [start, p->cur) and turns the token
 * into "0" in cJSON's copy. */
static void keep_number(scan_t *p, const char *start, double v) {
  char *c = p->copy + (start - p->text);
  if (p->nnums == p->cap) {
    p->cap = p->cap ? p->cap * 2 : 16;
    p->nums = zlb_xrealloc(p->nums, p->cap * sizeof(*p->nums));
  }
  p->nums[p->nnums++] = v;
  memset(c, ' ', (size_t)(p->cur - start));
  c[0] = '0';
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

/* "\uXXXX", or a surrogate pair of them, at p->cur. */
static int scan_unicode(scan_t *p) {
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
  }
  if (hi == 0)
    return fail_at(p, p->line, col_of(p, at),
                   "'\\u0000' is not supported: strings are NUL-terminated");
  return 0;
}

/* A string at p->cur (the opening quote). */
static int scan_string(scan_t *p) {
  const int line = p->line, col = col_of(p, p->cur);
  p->cur++;
  for (;;) {
    unsigned char c;
    if (at_end(p) || *p->cur == '\n' || (*p->cur == '\\' && p->end - p->cur < 2))
      return fail_at(p, line, col, "unterminated string: missing closing '\"'");
    c = (unsigned char)*p->cur;
    if (c == '"') {
      p->cur++;
      return 0;
    }
    if (c < 0x20)
      return fail_at(p, p->line, col_of(p, p->cur),
                     "control character 0x%02x in a string (escape it)", c);
    if (c != '\\') {
      p->cur++;
      continue;
    }
    c = (unsigned char)p->cur[1];
    if (c == 'u') {
      int rc = scan_unicode(p);
      if (rc)
        return rc;
      continue;
    }
    if (!strchr("\"\\/bfnrt", c) || !c) {
      if (c >= 0x20 && c < 0x7f)
        return fail_at(p, p->line, col_of(p, p->cur),
                       "invalid escape '\\%c' in a string", c);
      return fail_at(p, p->line, col_of(p, p->cur),
                     "invalid escape in a string");
    }
    p->cur += 2;
  }
}

static int is_digit(const scan_t *p, const char *s) {
  return s < p->end && *s >= '0' && *s <= '9';
}

/* A number per RFC 8259's grammar (no leading '+', zeros, or bare '.'). */
static int scan_number(scan_t *p) {
  const char *start = p->cur, *s = p->cur;
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
  p->cur = s;
  /* The copy is NUL-terminated where the input may not be, and strtod
   * stops at the token's end: nothing that may follow a number (white
   * space, ',', ']', '}') continues one. Out of range reads as +-inf. */
  keep_number(p, start, strtod(p->copy + (start - p->text), NULL));
  return 0;
}

static int scan_value(scan_t *p);

static int scan_array(scan_t *p) {
  const int line = p->line, col = col_of(p, p->cur);
  int rc;
  p->cur++;
  skip_ws(p);
  if (!at_end(p) && *p->cur == ']') {
    p->cur++;
    return 0;
  }
  for (;;) {
    skip_ws(p);
    if (at_end(p))
      return fail_at(p, line, col, "unterminated array: missing closing ']'");
    if ((rc = scan_value(p)))
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

static int scan_object(scan_t *p) {
  const int line = p->line, col = col_of(p, p->cur);
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
    /* Where the key is, for a duplicate found once cJSON decoded it. */
    if (p->nkeys == p->kcap) {
      p->kcap = p->kcap ? p->kcap * 2 : 16;
      p->keypos = zlb_xrealloc(p->keypos, p->kcap * 2 * sizeof(*p->keypos));
    }
    p->keypos[2 * p->nkeys] = p->line;
    p->keypos[2 * p->nkeys + 1] = col_of(p, p->cur);
    p->nkeys++;
    if ((rc = scan_string(p)))
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
    if ((rc = scan_value(p)))
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

/* NaN, Infinity or -Infinity at p->cur: 0 and kept, else -1. */
static int scan_special(scan_t *p) {
  const char *start = p->cur;
  int neg = *p->cur == '-';
  if (neg)
    p->cur++;
  if (eat(p, "Infinity"))
    keep_number(p, start, neg ? -INFINITY : INFINITY);
  else if (!neg && eat(p, "NaN"))
    keep_number(p, start, NAN);
  else
    return -1;
  return 0;
}

static int scan_value(scan_t *p) {
  int rc;
  skip_ws(p);
  if (at_end(p))
    return fail_eof(p, "a value");
  switch (*p->cur) {
  case '{':
  case '[':
    if (++p->depth > MAX_DEPTH)
      return fail_at(p, p->line, col_of(p, p->cur),
                     "nesting deeper than %d levels", MAX_DEPTH);
    rc = *p->cur == '{' ? scan_object(p) : scan_array(p);
    p->depth--;
    return rc;
  case '"':
    return scan_string(p);
  case 't':
  case 'f':
  case 'n':
    if (eat(p, "true") || eat(p, "false") || eat(p, "null"))
      return 0;
    break;
  case 'N':
  case 'I':
    if (!scan_special(p))
      return 0;
    break;
  case '-':
    if (p->end - p->cur > 1 && p->cur[1] == 'I') {
      if (!scan_special(p))
        return 0;
      break;
    }
    return scan_number(p);
  default:
    if (*p->cur >= '0' && *p->cur <= '9')
      return scan_number(p);
    return fail_char(p, "a value");
  }
  return fail_at(p, p->line, col_of(p, p->cur),
                 "invalid literal (expected true, false, null, NaN or "
                 "Infinity)");
}

/* A key of an object and its place among all keys of the document. */
typedef struct {
  const char *key;
  size_t at;
} keyref_t;

static int keyref_cmp(const void *x, const void *y) {
  const keyref_t *a = x, *b = y;
  int c = strcmp(a->key, b->key);
  return c ? c : (a->at > b->at) - (a->at < b->at);
}

/* The index of the first key of object `v` that repeats an earlier key
 * (that one's index in *earlier), or (size_t)-1. */
static size_t first_duplicate(const zlb_json_t *v, size_t *earlier) {
  size_t best = (size_t)-1;
  if (v->n < 2)
    return best;
  if (v->n <= 16) {
    for (size_t i = 1; i < v->n && best == (size_t)-1; i++)
      for (size_t j = 0; j < i; j++)
        if (!strcmp(v->keys[i], v->keys[j])) {
          best = i;
          *earlier = j;
          break;
        }
  } else { /* sorted, so that a large object costs n log n */
    keyref_t *k = zlb_xmalloc(v->n * sizeof(*k));
    for (size_t i = 0; i < v->n; i++)
      k[i] = (keyref_t){v->keys[i], i};
    qsort(k, v->n, sizeof(*k), keyref_cmp);
    for (size_t i = 1; i < v->n; i++)
      if (!strcmp(k[i].key, k[i - 1].key) && (best == (size_t)-1 || k[i].at < best)) {
        best = k[i].at;
        *earlier = k[i - 1].at;
      }
    free(k);
  }
  return best;
}

/* cJSON's tree into ours, numbers from the scan in the same order; the
 * first duplicate key found goes into *dup and *dup_earlier (positions
 * among the document's keys, in the scan's order). */
static zlb_json_t *convert(const cJSON *c, const scan_t *p, size_t *next, size_t *nextkey,
                           size_t *dup, size_t *dup_earlier, zlb_strbuf_t *dup_name) {
  zlb_json_t *v = zlb_xcalloc(1, sizeof(*v));
  const cJSON *e;
  size_t i = 0;
  switch (c->type & 0xff) {
  case cJSON_True:
    v->boolean = 1;
    /* fall through */
  case cJSON_False:
    v->kind = ZLB_JSON_BOOL;
    break;
  case cJSON_Number:
    v->kind = ZLB_JSON_NUMBER;
    v->number = *next < p->nnums ? p->nums[*next] : NAN;
    ++*next;
    break;
  case cJSON_String:
    v->kind = ZLB_JSON_STRING;
    v->string = zlb_xstrdup(c->valuestring);
    break;
  case cJSON_Array:
  case cJSON_Object:
    v->kind = (c->type & 0xff) == cJSON_Array ? ZLB_JSON_ARRAY : ZLB_JSON_OBJECT;
    for (e = c->child; e; e = e->next)
      v->n++;
    if (!v->n)
      break;
    v->items = zlb_xcalloc(v->n, sizeof(*v->items));
    if (v->kind == ZLB_JSON_OBJECT)
      v->keys = zlb_xcalloc(v->n, sizeof(*v->keys));
    {
      size_t *kat = v->keys ? zlb_xmalloc(v->n * sizeof(*kat)) : NULL, earlier = 0, at;
      for (e = c->child; e; e = e->next, i++) {
        if (kat) {
          v->keys[i] = zlb_xstrdup(e->string);
          kat[i] = (*nextkey)++;
        }
        v->items[i] = convert(e, p, next, nextkey, dup, dup_earlier, dup_name);
      }
      /* The earliest duplicate in the document (inner objects come first
       * here). */
      if (kat && (at = first_duplicate(v, &earlier)) != (size_t)-1 &&
          (*dup == (size_t)-1 || kat[at] < *dup)) {
        *dup = kat[at];
        *dup_earlier = kat[earlier];
        zlb_strbuf_reset(dup_name);
        zlb_strbuf_add_printable(dup_name, v->keys[at]);
      }
      free(kat);
    }
    break;
  default:
    v->kind = ZLB_JSON_NULL;
  }
  return v;
}

int zlb_json_parse(const char *text, size_t len, const char *what,
                   zlb_json_t **out, zlb_error_t *err) {
  scan_t p;
  cJSON *cj = NULL;
  size_t next = 0, nextkey = 0, dup = (size_t)-1, dup_earlier = 0;
  zlb_strbuf_t dup_name = ZLB_STRBUF_INIT;
  int rc;
  *out = NULL;
  memset(&p, 0, sizeof(p));
  p.what = what ? what : "<json>";
  p.err = err;
  if (!text)
    len = 0;
  if (len > MAX_INPUT)
    return zlb_error_set(err, ZLB_EPARSE,
                         "%s: %zu bytes is more than the %zu MiB a json "
                         "document may have",
                         p.what, len, MAX_INPUT >> 20);
  p.text = text ? text : "";
  if (len >= 3 && !memcmp(p.text, "\xef\xbb\xbf", 3)) {
    p.text += 3; /* a UTF-8 byte order mark */
    len -= 3;
  }
  p.cur = p.ls = p.text;
  p.end = p.text + len;
  p.line = 1;
  p.copy = zlb_xmalloc(len + 1);
  memcpy(p.copy, p.text, len);
  p.copy[len] = '\0';
  if ((rc = scan_value(&p)))
    goto out;
  skip_ws(&p);
  if (!at_end(&p)) {
    rc = fail_char(&p, "the end of the input after the value");
    goto out;
  }
  if (!(cj = cJSON_ParseWithLength(p.copy, len))) {
    rc = zlb_error_set(err, ZLB_ENOMEM,
                       "%s: out of memory building the json tree", p.what);
    goto out;
  }
  *out = convert(cj, &p, &next, &nextkey, &dup, &dup_earlier, &dup_name);
  if (dup != (size_t)-1 && dup < p.nkeys && dup_earlier < p.nkeys) {
    /* Readers take one value per key: which of two would be a guess (the
     * YAML reader refuses duplicates too). */
    zlb_json_free(*out);
    *out = NULL;
    rc = fail_at(&p, p.keypos[2 * dup], p.keypos[2 * dup + 1],
                 "duplicate key '%.80s' (first on line %d)", dup_name.buf,
                 p.keypos[2 * dup_earlier]);
    goto out;
  }
  if (next != p.nnums) { /* the scan and cJSON disagree: a bug of ours */
    zlb_json_free(*out);
    *out = NULL;
    rc = zlb_error_set(err, ZLB_EPARSE,
                       "%s: %zu numbers scanned but %zu in the tree; "
                       "please report this input",
                       p.what, p.nnums, next);
  }
out:
  cJSON_Delete(cj);
  free(p.copy);
  free(p.nums);
  free(p.keypos);
  zlb_strbuf_release(&dup_name);
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
  for (i = 0; i < obj->n; i++) /* the parser refuses duplicate keys */
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
