/* Growable strings and string lists (after git's strbuf/strvec). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"

char zlb__strbuf_empty[1];

static void oom(void) {
  fputs("zlbench: out of memory\n", stderr);
  abort();
}

void *zlb_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p)
    oom();
  return p;
}

void *zlb_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p)
    oom();
  return p;
}

void *zlb_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q)
    oom();
  return q;
}

char *zlb_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = zlb_xmalloc(n);
  memcpy(d, s, n);
  return d;
}

size_t zlb_strlcpy(char *dst, const char *src, size_t size) {
  size_t n = strlen(src);
  if (size) {
    size_t c = n < size - 1 ? n : size - 1;
    memcpy(dst, src, c);
    dst[c] = '\0';
  }
  return n;
}

void zlb_strbuf_init(zlb_strbuf_t *sb) {
  sb->buf = zlb__strbuf_empty;
  sb->len = 0;
  sb->alloc = 0;
}

void zlb_strbuf_release(zlb_strbuf_t *sb) {
  if (sb->alloc)
    free(sb->buf);
  zlb_strbuf_init(sb);
}

void zlb_strbuf_reset(zlb_strbuf_t *sb) { zlb_strbuf_setlen(sb, 0); }

void zlb_strbuf_grow(zlb_strbuf_t *sb, size_t extra) {
  size_t need = sb->len + extra + 1;
  if (need <= sb->alloc)
    return;
  size_t alloc = sb->alloc ? sb->alloc : 64;
  while (alloc < need)
    alloc = alloc * 3 / 2 + 16;
  if (!sb->alloc) {
    sb->buf = zlb_xmalloc(alloc);
    sb->buf[0] = '\0';
  } else {
    sb->buf = zlb_xrealloc(sb->buf, alloc);
  }
  sb->alloc = alloc;
}

void zlb_strbuf_setlen(zlb_strbuf_t *sb, size_t len) {
  if (!sb->alloc)
    return;
  if (len > sb->len)
    len = sb->len;
  sb->len = len;
  sb->buf[len] = '\0';
}

void zlb_strbuf_add(zlb_strbuf_t *sb, const void *data, size_t len) {
  if (!len)
    return;
  zlb_strbuf_grow(sb, len);
  memcpy(sb->buf + sb->len, data, len);
  sb->len += len;
  sb->buf[sb->len] = '\0';
}

void zlb_strbuf_addstr(zlb_strbuf_t *sb, const char *s) {
  zlb_strbuf_add(sb, s, strlen(s));
}

void zlb_strbuf_addch(zlb_strbuf_t *sb, int c) {
  char ch = (char)c;
  zlb_strbuf_add(sb, &ch, 1);
}

void zlb_strbuf_addpad(zlb_strbuf_t *sb, int c, size_t n) {
  zlb_strbuf_grow(sb, n);
  memset(sb->buf + sb->len, c, n);
  sb->len += n;
  sb->buf[sb->len] = '\0';
}

void zlb_strbuf_vaddf(zlb_strbuf_t *sb, const char *fmt, va_list ap) {
  va_list cp;
  int n;
  zlb_strbuf_grow(sb, 64);
  va_copy(cp, ap);
  n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
  va_end(cp);
  if (n < 0)
    return;
  if ((size_t)n >= sb->alloc - sb->len) {
    zlb_strbuf_grow(sb, (size_t)n);
    va_copy(cp, ap);
    n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
    va_end(cp);
  }
  sb->len += (size_t)n;
}

void zlb_strbuf_addf(zlb_strbuf_t *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  zlb_strbuf_vaddf(sb, fmt, ap);
  va_end(ap);
}

char *zlb_strbuf_detach(zlb_strbuf_t *sb) {
  char *r;
  if (!sb->alloc)
    r = zlb_xstrdup("");
  else
    r = sb->buf;
  zlb_strbuf_init(sb);
  return r;
}

void zlb_strbuf_add_utf8(zlb_strbuf_t *sb, uint32_t cp) {
  if (cp < 0x80) {
    zlb_strbuf_addch(sb, (int)cp);
  } else if (cp < 0x800) {
    zlb_strbuf_addch(sb, (int)(0xc0 | (cp >> 6)));
    zlb_strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    zlb_strbuf_addch(sb, (int)(0xe0 | (cp >> 12)));
    zlb_strbuf_addch(sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
    zlb_strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
  } else {
    zlb_strbuf_addch(sb, (int)(0xf0 | (cp >> 18)));
    zlb_strbuf_addch(sb, (int)(0x80 | ((cp >> 12) & 0x3f)));
    zlb_strbuf_addch(sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
    zlb_strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
  }
}

void zlb_strbuf_add_json_escaped(zlb_strbuf_t *sb, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '"': zlb_strbuf_addstr(sb, "\\\""); break;
    case '\\': zlb_strbuf_addstr(sb, "\\\\"); break;
    case '\n': zlb_strbuf_addstr(sb, "\\n"); break;
    case '\r': zlb_strbuf_addstr(sb, "\\r"); break;
    case '\t': zlb_strbuf_addstr(sb, "\\t"); break;
    default:
      if (c < 0x20)
        zlb_strbuf_addf(sb, "\\u%04x", c);
      else
        zlb_strbuf_addch(sb, c);
    }
  }
}

/* `s` as a quoted CSV field (quotes doubled), `lead` put first inside. */
static void add_csv_quoted(zlb_strbuf_t *sb, const char *lead, const char *s) {
  zlb_strbuf_addch(sb, '"');
  zlb_strbuf_addstr(sb, lead);
  for (; *s; s++) {
    if (*s == '"')
      zlb_strbuf_addch(sb, '"');
    zlb_strbuf_addch(sb, *s);
  }
  zlb_strbuf_addch(sb, '"');
}

void zlb_strbuf_add_csv(zlb_strbuf_t *sb, const char *s) {
  if (!strpbrk(s, ",\"\n\r"))
    zlb_strbuf_addstr(sb, s);
  else
    add_csv_quoted(sb, "", s);
}

/* Length of the valid UTF-8 sequence at `s` (2 to 4 bytes), 0 when it is
 * not one: overlong forms, surrogates and code points past U+10FFFF are
 * not. */
static size_t utf8_seq(const unsigned char *s, uint32_t *cp) {
  size_t n, i;
  unsigned char lo = 0x80, hi = 0xbf;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    n = 2;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    n = 3;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    n = 4;
  else
    return 0;
  if (s[0] == 0xe0)
    lo = 0xa0;
  else if (s[0] == 0xed)
    hi = 0x9f;
  else if (s[0] == 0xf0)
    lo = 0x90;
  else if (s[0] == 0xf4)
    hi = 0x8f;
  if (s[1] < lo || s[1] > hi)
    return 0;
  *cp = s[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
  for (i = 1; i < n; i++) {
    if (i > 1 && (s[i] < 0x80 || s[i] > 0xbf))
      return 0;
    *cp = (*cp << 6) | (s[i] & 0x3f);
  }
  return n;
}

void zlb_strbuf_add_printable(zlb_strbuf_t *sb, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    uint32_t cp = 0;
    size_t n;
    if (*p >= 0x20 && *p < 0x7f) {
      zlb_strbuf_addch(sb, *p++);
      continue;
    }
    if (*p == '\n' || *p == '\r' || *p == '\t') {
      zlb_strbuf_addstr(sb, *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : "\\t");
      p++;
      continue;
    }
    n = *p >= 0x80 ? utf8_seq(p, &cp) : 0;
    /* C1 controls (CSI, OSC as one code point) and the bidirectional
     * overrides and isolates, which reorder what follows them. */
    if (n && !(cp >= 0x80 && cp <= 0x9f) && !(cp >= 0x202a && cp <= 0x202e) &&
        !(cp >= 0x2066 && cp <= 0x2069)) {
      zlb_strbuf_add(sb, p, n);
      p += n;
      continue;
    }
    for (size_t i = 0; i < (n ? n : 1); i++)
      zlb_strbuf_addf(sb, "\\x%02x", p[i]);
    p += n ? n : 1;
  }
}

const char *zlb_printable(zlb_strbuf_t *tmp, const char *s) {
  zlb_strbuf_reset(tmp);
  zlb_strbuf_add_printable(tmp, s ? s : "");
  return tmp->buf;
}

/* A text cell that a spreadsheet would take for a formula: it starts with
 * =, +, -, @, a tab or a carriage return and is not a number. */
static int csv_formula(const char *s) {
  double v;
  if (!strchr("=+-@\t\r", *s) || !*s)
    return 0;
  return zlb_parse_double(s, &v) != 0;
}

void zlb_strbuf_add_csv_text(zlb_strbuf_t *sb, const char *s) {
  if (!csv_formula(s))
    zlb_strbuf_add_csv(sb, s);
  else
    add_csv_quoted(sb, "'", s);
}

void zlb_strvec_push(zlb_strvec_t *sv, const char *s) {
  if (sv->n + 1 >= sv->alloc) {
    sv->alloc = sv->alloc ? sv->alloc * 2 : 8;
    sv->v = zlb_xrealloc(sv->v, sv->alloc * sizeof(*sv->v));
  }
  sv->v[sv->n++] = zlb_xstrdup(s);
  sv->v[sv->n] = NULL;
}

void zlb_strvec_pushf(zlb_strvec_t *sv, const char *fmt, ...) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  zlb_strbuf_vaddf(&sb, fmt, ap);
  va_end(ap);
  zlb_strvec_push(sv, sb.buf);
  zlb_strbuf_release(&sb);
}

void zlb_strvec_release(zlb_strvec_t *sv) {
  for (size_t i = 0; i < sv->n; i++)
    free(sv->v[i]);
  free(sv->v);
  sv->v = NULL;
  sv->n = sv->alloc = 0;
}

long zlb_strvec_find(const zlb_strvec_t *sv, const char *s) {
  for (size_t i = 0; i < sv->n; i++)
    if (!strcmp(sv->v[i], s))
      return (long)i;
  return -1;
}

void zlb_strvec_split(zlb_strvec_t *sv, const char *s, int sep) {
  const char *p = s;
  while (p && *p) {
    const char *e = strchr(p, sep);
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char *item = zlb_xmalloc(n + 1);
    memcpy(item, p, n);
    item[n] = '\0';
    zlb_trim(item);
    if (*item)
      zlb_strvec_push(sv, item);
    free(item);
    p = e ? e + 1 : NULL;
  }
}

void zlb_strvec_join(const zlb_strvec_t *sv, const char *sep, zlb_strbuf_t *out) {
  for (size_t i = 0; i < sv->n; i++) {
    if (i)
      zlb_strbuf_addstr(out, sep);
    zlb_strbuf_addstr(out, sv->v[i]);
  }
}

static int cmpstr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void zlb_strvec_sort(zlb_strvec_t *sv) {
  if (sv->n > 1)
    qsort(sv->v, sv->n, sizeof(*sv->v), cmpstr);
}

int zlb_starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

char *zlb_trim(char *s) {
  size_t n = strlen(s), i = 0;
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
               s[n - 1] == '\r'))
    s[--n] = '\0';
  while (s[i] == ' ' || s[i] == '\t')
    i++;
  if (i)
    memmove(s, s + i, n - i + 1);
  return s;
}

/* Both parsers refuse what strto* would quietly accept: leading blanks, a
 * value out of range (strtol saturates, strtod gives inf, or 0 for 1e-400)
 * and, for doubles, "nan" and "inf" spelled out and hexadecimal ("0x10"
 * read as 16), which no option or field means. */
int zlb_parse_long(const char *s, long *out) {
  char *end;
  long v;
  if (!s || !*s || isspace((unsigned char)*s))
    return ZLB_EINVAL;
  errno = 0;
  v = strtol(s, &end, 10);
  if (*end || errno == ERANGE)
    return ZLB_EINVAL;
  *out = v;
  return 0;
}

int zlb_parse_double(const char *s, double *out) {
  char *end;
  double v;
  if (!s || !*s || isspace((unsigned char)*s))
    return ZLB_EINVAL;
  {
    const char *d = s + (*s == '-' || *s == '+');
    if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
      return ZLB_EINVAL;
  }
  errno = 0;
  v = strtod(s, &end);
  if (*end || !isfinite(v) || errno == ERANGE)
    return ZLB_EINVAL;
  *out = v;
  return 0;
}

void zlb_strip_ansi(const char *s, zlb_strbuf_t *out) {
  while (*s) {
    if (s[0] == '\033' && s[1] == '[') {
      s += 2;
      while (*s && !((*s >= '@' && *s <= '~')))
        s++;
      if (*s)
        s++;
      continue;
    }
    zlb_strbuf_addch(out, *s++);
  }
}
