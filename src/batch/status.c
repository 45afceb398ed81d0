/* ops_status.csv: one row per finished operator, rewritten atomically as
 * the batch goes, and read back when a batch resumes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int zlb__status_read(const char *path, zlb__status_row_t **rows, size_t *n,
                     zlb_error_t *err) {
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
    *rows = zlb_xrealloc(*rows, (*n + 1) * sizeof(**rows));
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
