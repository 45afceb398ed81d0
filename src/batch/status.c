/* ops_status.csv: one row per finished operator, rewritten atomically as
 * the batch goes, and read back when a batch resumes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch_int.h"
#include "zlbench/report.h"

static const char header[] = "operator,status,attempts,dtype_level,backend,device,timer,"
                             "seconds,error_signature,failed_dtypes,note\n";

int zlb__status_write(const char *path, const zlb__status_row_t *rows, size_t n,
                      zlb_error_t *err) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  int rc;
  zlb_strbuf_addstr(&sb, header);
  for (size_t i = 0; i < n; i++) {
    const zlb__status_row_t *r = &rows[i];
    zlb_strbuf_add_csv(&sb, r->op);
    zlb_strbuf_addch(&sb, ',');
    zlb_strbuf_add_csv(&sb, r->status);
    zlb_strbuf_addf(&sb, ",%d,%d,", r->attempts, r->level);
    zlb_strbuf_add_csv(&sb, r->backend);
    zlb_strbuf_addch(&sb, ',');
    zlb_strbuf_add_csv(&sb, r->device);
    zlb_strbuf_addch(&sb, ',');
    zlb_strbuf_add_csv(&sb, r->timer);
    zlb_strbuf_addf(&sb, ",%.2f,", r->seconds);
    zlb_strbuf_add_csv(&sb, r->signature);
    zlb_strbuf_addch(&sb, ',');
    zlb_strbuf_add_csv(&sb, r->failed_dtypes);
    zlb_strbuf_addch(&sb, ',');
    zlb_strbuf_add_csv(&sb, r->note);
    zlb_strbuf_addch(&sb, '\n');
  }
  rc = zlb_write_file_atomic(path, sb.buf, sb.len, err);
  zlb_strbuf_release(&sb);
  return rc;
}

/* Split one CSV record (RFC 4180 quoting) starting at *p; advances *p past
 * the line. */
static void csv_record(const char **p, zlb_strvec_t *fields) {
  zlb_strbuf_t f = ZLB_STRBUF_INIT;
  const char *s = *p;
  int quoted = 0;
  for (;;) {
    char c = *s;
    if (quoted) {
      if (!c)
        break;
      if (c == '"' && s[1] == '"') {
        zlb_strbuf_addch(&f, '"');
        s += 2;
        continue;
      }
      if (c == '"') {
        quoted = 0;
        s++;
        continue;
      }
      zlb_strbuf_addch(&f, c);
      s++;
      continue;
    }
    if (c == '"') {
      quoted = 1;
      s++;
      continue;
    }
    if (c == ',' || c == '\n' || c == '\0' || (c == '\r' && s[1] == '\n')) {
      zlb_strvec_push(fields, f.buf);
      zlb_strbuf_reset(&f);
      if (c == ',') {
        s++;
        continue;
      }
      if (c == '\r')
        s++;
      if (*s == '\n')
        s++;
      break;
    }
    zlb_strbuf_addch(&f, c);
    s++;
  }
  *p = s;
  zlb_strbuf_release(&f);
}

/* A status file lists one row per operator: FlagGems has about a thousand.
 * More rows than this is not a batch's file, and each row costs about 1 KB
 * in memory (a 64 MiB file of short rows would take gigabytes). */
#define STATUS_MAX_ROWS 100000

/* Room for one more row: the array doubles, so reading is linear. */
static int status_grow(const char *path, int line, zlb__status_row_t **rows, size_t n,
                       size_t *cap, zlb_error_t *err) {
  if (n >= STATUS_MAX_ROWS)
    return zlb_error_set(err, ZLB_EPARSE, "%s:%d: more than %d rows (one per operator)",
                         path, line, STATUS_MAX_ROWS);
  if (n < *cap)
    return 0;
  *cap = *cap ? *cap * 2 : 64;
  *rows = zlb_xrealloc(*rows, *cap * sizeof(**rows));
  return 0;
}

int zlb__status_read(const char *path, zlb__status_row_t **rows, size_t *n,
                     zlb_error_t *err) {
  size_t cap = 0;
  char *text = NULL;
  const char *p;
  int rc, line = 1;
  *rows = NULL;
  *n = 0;
  if (!zlb_path_exists(path))
    return 0;
  if ((rc = zlb_read_file(path, &text, NULL, err)))
    return rc;
  p = strchr(text, '\n');
  p = p ? p + 1 : text + strlen(text);
  while (*p) {
    zlb_strvec_t f = ZLB_STRVEC_INIT;
    zlb__status_row_t *r;
    line++;
    csv_record(&p, &f);
    if (f.n < 11) {
      /* A torn last line cannot happen (atomic writes); anything else is a
       * hand edit: say where. */
      if (f.n > 1) {
        rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: expected 11 fields, found %zu", path,
                           line, f.n);
        zlb_strvec_release(&f);
        break;
      }
      zlb_strvec_release(&f);
      continue;
    }
    if ((rc = status_grow(path, line, rows, *n, &cap, err))) {
      zlb_strvec_release(&f);
      break;
    }
    r = &(*rows)[(*n)++];
    memset(r, 0, sizeof(*r));
    zlb_strlcpy(r->op, f.v[0], sizeof(r->op));
    zlb_strlcpy(r->status, f.v[1], sizeof(r->status));
    r->attempts = atoi(f.v[2]);
    r->level = atoi(f.v[3]);
    zlb_strlcpy(r->backend, f.v[4], sizeof(r->backend));
    zlb_strlcpy(r->device, f.v[5], sizeof(r->device));
    zlb_strlcpy(r->timer, zlb_summary_timer_name(f.v[6]), sizeof(r->timer));
    r->seconds = atof(f.v[7]);
    zlb_strlcpy(r->signature, f.v[8], sizeof(r->signature));
    zlb_strlcpy(r->failed_dtypes, f.v[9], sizeof(r->failed_dtypes));
    zlb_strlcpy(r->note, f.v[10], sizeof(r->note));
    zlb_strvec_release(&f);
  }
  free(text);
  if (rc) {
    free(*rows);
    *rows = NULL;
    *n = 0;
  }
  return rc;
}

/* ---- reading another host's file -------------------------------------------------- */

int zlb__op_name_ok(const char *s) {
  size_t n = strlen(s);
  if (!n || n >= sizeof(((zlb__status_row_t *)0)->op) || s[0] == '.')
    return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '.' || c == '+' || c == '-'))
      return 0;
  }
  return 1;
}

int zlb__status_known(const char *s) {
  static const char *const known[] = {"ok",      "ok_capture_denied", "failed_rows", "partial",
                                      "timeout", "crashed",           "failed",      "fatal",
                                      "poisoned", "usage_error",      "unavailable",
                                      "spawn_error",
                                      /* --replay-from met a link in the results */
                                      "replay_refused",
                                      /* pytest providers (FlagGems) */
                                      "dtype_unsupported", "collection_error", "no_tests",
                                      "skipped", "no_rows", NULL};
  if (!strcmp(s, "replayed"))
    return 1;
  if (!strncmp(s, "replayed_", 9))
    s += 9;
  for (const char *const *k = known; *k; k++)
    if (!strcmp(s, *k))
      return 1;
  return 0;
}

int zlb__read_capped(const char *path, size_t max_bytes, char **out, size_t *len,
                     zlb_error_t *err) {
  struct stat st;
  size_t n = 0;
  int rc;
  *out = NULL;
  if (stat(path, &st) != 0)
    return zlb_error_set(err, errno == ENOENT ? ZLB_ENOTFOUND : ZLB_EIO, "cannot read '%s': %s",
                         path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return zlb_error_set(err, ZLB_EPARSE, "'%s' is not a regular file", path);
  if ((size_t)st.st_size > max_bytes)
    return zlb_error_set(err, ZLB_EPARSE, "'%s' is %lld bytes, more than the %zu allowed", path,
                         (long long)st.st_size, max_bytes);
  if ((rc = zlb_read_file_max(path, max_bytes, NULL, out, &n, err)))
    return rc;
  /* It may have grown since stat(). */
  if (n > max_bytes || memchr(*out, '\0', n)) {
    free(*out);
    *out = NULL;
    return zlb_error_set(err, ZLB_EPARSE, "'%s' is larger than %zu bytes or holds a NUL byte",
                         path, max_bytes);
  }
  if (len)
    *len = n;
  return 0;
}

/* Copy a field into a fixed buffer; 0 when it does not fit or holds a
 * control character. */
static int take(char *dst, size_t cap, const char *src) {
  if (strlen(src) >= cap)
    return 0;
  for (const char *c = src; *c; c++)
    if ((unsigned char)*c < 0x20 && *c != '\t')
      return 0;
  zlb_strlcpy(dst, src, cap);
  return 1;
}

int zlb__status_read_checked(const char *path, size_t max_bytes, zlb__status_row_t **rows,
                             size_t *n, zlb_error_t *err) {
  char *text = NULL;
  const char *p;
  int rc = 0, line = 1;
  size_t hl = strlen(header), cap = 0;
  *rows = NULL;
  *n = 0;
  if ((rc = zlb__read_capped(path, max_bytes, &text, NULL, err)))
    return rc;
  if (strncmp(text, header, hl)) {
    rc = zlb_error_set(err, ZLB_EPARSE, "%s:1: not the header of ops_status.csv (%.*s)", path,
                       (int)(hl - 1), header);
    goto out;
  }
  p = text + hl;
  while (*p && !rc) {
    zlb_strvec_t f = ZLB_STRVEC_INIT;
    zlb__status_row_t r;
    long attempts, level;
    double seconds;
    const char *bad = NULL;
    line++;
    csv_record(&p, &f);
    memset(&r, 0, sizeof(r));
    if (f.n != 11)
      bad = "expected 11 fields";
    else if (!zlb__op_name_ok(f.v[0]))
      bad = "invalid operator name";
    else if (!zlb__status_known(f.v[1]) || !take(r.status, sizeof(r.status), f.v[1]))
      bad = "unknown status";
    else if (zlb_parse_long(f.v[2], &attempts) || attempts < 0 || attempts > 100000)
      bad = "attempts is not a count";
    else if (zlb_parse_long(f.v[3], &level) || level < 1 || level > 2)
      bad = "dtype_level is not 1 or 2";
    else if (zlb_parse_double(f.v[7], &seconds) || !(seconds >= 0 && seconds < 1e9))
      bad = "seconds is not a duration";
    else if (!take(r.backend, sizeof(r.backend), f.v[4]) ||
             !take(r.device, sizeof(r.device), f.v[5]) ||
             !take(r.timer, sizeof(r.timer), f.v[6]) ||
             !take(r.signature, sizeof(r.signature), f.v[8]) ||
             !take(r.failed_dtypes, sizeof(r.failed_dtypes), f.v[9]) ||
             !take(r.note, sizeof(r.note), f.v[10]))
      bad = "a field is too long or holds a control character";
    if (!bad) {
      zlb_strlcpy(r.op, f.v[0], sizeof(r.op));
      r.attempts = (int)attempts;
      r.level = (int)level;
      r.seconds = seconds;
    }
    if (bad)
      rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: %s", path, line, bad);
    else if (!(rc = status_grow(path, line, rows, *n, &cap, err)))
      (*rows)[(*n)++] = r;
    zlb_strvec_release(&f);
  }
  /* Sorted by operator (callers look rows up with bsearch); a name given
   * twice is refused. */
  if (!rc && *n) {
    qsort(*rows, *n, sizeof(**rows), zlb__status_row_cmp);
    for (size_t i = 1; i < *n && !rc; i++)
      if (!strcmp((*rows)[i - 1].op, (*rows)[i].op))
        rc = zlb_error_set(err, ZLB_EPARSE, "%s: operator '%s' is listed twice", path,
                           (*rows)[i].op);
  }
out:
  free(text);
  if (rc) {
    free(*rows);
    *rows = NULL;
    *n = 0;
  }
  return rc;
}

int zlb__status_row_cmp(const void *a, const void *b) {
  return strcmp(((const zlb__status_row_t *)a)->op, ((const zlb__status_row_t *)b)->op);
}
