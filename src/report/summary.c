/* The summary: a list of result rows gathered from the logs under a folder,
 * sorted and written as summary.csv (docs/formats.md). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* lstat, DIR */
#endif
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report_int.h"
#include "zlbench/base.h"
#include "zlbench/report.h"

static const char csv_header[] =
    "operator,family,dtype,shape,baseline_ms,candidate_ms,speedup,gbps,"
    "tflops,pct_peak,timer,marker,status,source,base_host_us,cand_host_us,ceiling\n";

void zlb__summary_row_release(zlb_summary_row_t *row) {
  free(row->op);
  free(row->family);
  free(row->dtype);
  free(row->shape);
  free(row->timer);
  free(row->marker);
  free(row->status);
  free(row->source);
  free(row->ceiling);
}

void zlb_summary_release(zlb_summary_t *s) {
  for (size_t i = 0; i < s->n; i++)
    zlb__summary_row_release(&s->rows[i]);
  free(s->rows);
  s->rows = NULL;
  s->n = 0;
  s->alloc = 0;
  s->nlogs = 0;
  zlb_strvec_release(&s->warnings);
}

void zlb__summary_push(zlb_summary_t *s, const zlb_summary_row_t *row) {
  if (s->n == s->alloc) {
    s->alloc = s->alloc ? s->alloc * 2 : 64;
    s->rows = zlb_xrealloc(s->rows, s->alloc * sizeof(*s->rows));
  }
  s->rows[s->n++] = *row;
}

static char *dup_or_empty(const char *s) { return zlb_xstrdup(s ? s : ""); }

const char *zlb_summary_timer_name(const char *timer) {
  return timer && !strcmp(timer, "cupti") ? "trace" : timer;
}

void zlb_summary_add(zlb_summary_t *s, const zlb_summary_row_t *row) {
  zlb_summary_row_t r = *row;
  r.op = dup_or_empty(row->op);
  r.family = dup_or_empty(row->family);
  r.dtype = dup_or_empty(row->dtype);
  r.shape = dup_or_empty(row->shape);
  r.timer = dup_or_empty(row->timer);
  r.marker = dup_or_empty(row->marker);
  r.status = dup_or_empty(row->status);
  r.source = dup_or_empty(row->source);
  r.ceiling = dup_or_empty(row->ceiling);
  zlb__summary_push(s, &r);
}

char *zlb__summary_dtype(const char *s, size_t len) {
  char *d;
  while (len && strchr(" \t\"'", s[0])) {
    s++;
    len--;
  }
  while (len && strchr(" \t\"'", s[len - 1]))
    len--;
  if (len > 6 && strncmp(s, "torch.", 6) == 0) {
    s += 6;
    len -= 6;
  }
  d = zlb_xmalloc(len + 1);
  memcpy(d, s, len);
  d[len] = '\0';
  return d;
}

/* ---- sorting ----------------------------------------------------------- */

static int row_cmp(const zlb_summary_row_t *a, const zlb_summary_row_t *b) {
  int c = strcmp(a->op, b->op);
  return c ? c : strcmp(a->dtype, b->dtype);
}

/* Merge sort: qsort is not stable, and log order within an (operator,
 * dtype) is part of the format. */
static void merge_sort(zlb_summary_row_t *v, zlb_summary_row_t *tmp,
                       size_t n) {
  size_t mid = n / 2, i = 0, j = mid, k = 0;
  if (n < 2)
    return;
  merge_sort(v, tmp, mid);
  merge_sort(v + mid, tmp, n - mid);
  while (i < mid && j < n)
    tmp[k++] = row_cmp(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
  while (i < mid)
    tmp[k++] = v[i++];
  while (j < n)
    tmp[k++] = v[j++];
  memcpy(v, tmp, n * sizeof(*v));
}

void zlb_summary_sort(zlb_summary_t *s) {
  zlb_summary_row_t *tmp;
  if (s->n < 2)
    return;
  tmp = zlb_xmalloc(s->n * sizeof(*tmp));
  merge_sort(s->rows, tmp, s->n);
  free(tmp);
}

/* ---- summary.csv -------------------------------------------------------- */

static void add_num(zlb_strbuf_t *out, double v, int prec) {
  zlb_strbuf_addch(out, ',');
  if (isnan(v))
    return;
  if (isinf(v))
    zlb_strbuf_addstr(out, v > 0 ? "inf" : "-inf");
  else if (fabs(v) < 1e9)
    zlb_strbuf_addf(out, "%.*f", prec, v);
  else /* a 1e308 from a log: not a 300-digit cell */
    zlb_strbuf_addf(out, "%.9g", v);
}

/* Text cells come from logs: one a spreadsheet would run as a formula
 * (=, +, -, @ first) is quoted with a leading '. */
static void add_str(zlb_strbuf_t *out, const char *v) {
  zlb_strbuf_addch(out, ',');
  zlb_strbuf_add_csv_text(out, v);
}

void zlb_summary_format_csv(const zlb_summary_t *s, zlb_strbuf_t *out) {
  zlb_strbuf_addstr(out, csv_header);
  for (size_t i = 0; i < s->n; i++) {
    const zlb_summary_row_t *r = &s->rows[i];
    zlb_strbuf_add_csv_text(out, r->op);
    add_str(out, r->family);
    add_str(out, r->dtype);
    add_str(out, r->shape);
    add_num(out, r->base_ms, 6);
    add_num(out, r->cand_ms, 6);
    add_num(out, r->speedup, 4);
    add_num(out, r->gbps, 3);
    add_num(out, r->tflops, 3);
    add_num(out, r->pct_peak, 3);
    add_str(out, r->timer);
    add_str(out, r->marker);
    add_str(out, r->status);
    add_str(out, r->source);
    add_num(out, r->base_host_us, 3);
    add_num(out, r->cand_host_us, 3);
    add_str(out, r->ceiling ? r->ceiling : "");
    zlb_strbuf_addch(out, '\n');
  }
}

int zlb_summary_write_csv(const zlb_summary_t *s, const char *path,
                          zlb_error_t *err) {
  zlb_strbuf_t csv = ZLB_STRBUF_INIT;
  int rc;
  zlb_summary_format_csv(s, &csv);
  rc = zlb_write_file_atomic(path, csv.buf, csv.len, err);
  zlb_strbuf_release(&csv);
  return rc;
}

/* ---- folder scan ---------------------------------------------------------- */

static int is_log_name(const char *name) {
  size_t n = strlen(name);
  return n > 4 && strcmp(name + n - 4, ".log") == 0 &&
         strcmp(name, "stderr.log") != 0;
}

/* The walk of zlb__collect_files below root/rel. */
static int collect(const char *root, const char *rel, int (*want)(const char *name),
                   size_t max, const char *what, zlb_strvec_t *out, zlb_strvec_t *skipped,
                   zlb_error_t *err) {
  zlb_strbuf_t path = ZLB_STRBUF_INIT, child = ZLB_STRBUF_INIT,
               full = ZLB_STRBUF_INIT;
  struct dirent *de;
  struct stat st;
  DIR *d;
  int rc = 0;

  if (*rel)
    zlb_path_join(&path, root, rel);
  else
    zlb_strbuf_addstr(&path, root);
  d = opendir(path.buf);
  if (!d) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot read folder '%s': %s", path.buf,
                       strerror(errno));
    goto out;
  }
  while (!rc && (de = readdir(d)) != NULL) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    zlb_strbuf_reset(&child);
    if (*rel)
      zlb_path_join(&child, rel, de->d_name);
    else
      zlb_strbuf_addstr(&child, de->d_name);
    zlb_strbuf_reset(&full);
    zlb_path_join(&full, root, child.buf);
    if (lstat(full.buf, &st) != 0) {
      if (errno == ENOENT)
        continue; /* vanished while we read the folder */
      /* Anything else (a path longer than PATH_MAX, no permission, a
       * loop) hides what is there: say so rather than skip it. */
      rc = zlb_error_set(err, ZLB_EIO, "cannot examine '%s': %s", full.buf, strerror(errno));
      break;
    }
    if (S_ISDIR(st.st_mode)) {
      /* attempts/ holds superseded attempts of a batch */
      if (strcmp(de->d_name, "attempts") != 0)
        rc = collect(root, child.buf, want, max, what, out, skipped, err);
    } else if (S_ISREG(st.st_mode) && want(de->d_name)) {
      if (max && out->n >= max)
        rc = zlb_error_set(err, ZLB_EPARSE, "more than %zu %s under '%s'", max, what, root);
      else
        zlb_strvec_push(out, child.buf);
    } else if (!S_ISREG(st.st_mode) && want(de->d_name)) {
      /* A FIFO or device under a results name is never opened (a FIFO
       * would block), nor is a link followed (it may lead out of the
       * folder), but neither is dropped silently: the caller shows why it
       * was skipped. */
      if (skipped)
        zlb_strvec_pushf(skipped, "skipping '%s': %s, not a regular file", full.buf,
                         zlb_node_kind(st.st_mode));
    }
  }
  closedir(d);
out:
  zlb_strbuf_release(&path);
  zlb_strbuf_release(&child);
  zlb_strbuf_release(&full);
  return rc;
}

int zlb__collect_files(const char *root, int (*want)(const char *name), size_t max,
                       const char *what, zlb_strvec_t *out, zlb_strvec_t *skipped,
                       zlb_error_t *err) {
  return collect(root, "", want, max, what, out, skipped, err);
}

int zlb_summary_scan_dir(zlb_summary_t *s, const char *dir, zlb_error_t *err) {
  zlb_strvec_t logs = ZLB_STRVEC_INIT;
  zlb_strbuf_t full = ZLB_STRBUF_INIT;
  int rc;

  if (!zlb_is_dir(dir))
    return zlb_error_set(err, ZLB_ENOTFOUND, "'%s' is not a folder", dir);
  rc = zlb__collect_files(dir, is_log_name, 0, "logs", &logs, &s->warnings, err);
  if (rc)
    goto out;
  zlb_strvec_sort(&logs);
  for (size_t i = 0; i < logs.n; i++) {
    char *text = NULL;
    zlb_strbuf_reset(&full);
    zlb_path_join(&full, dir, logs.v[i]);
    rc = zlb_read_file_max(full.buf, ZLB_READ_MAX, "a log", &text, NULL, err);
    if (rc == ZLB_ENOTFOUND) {
      /* removed since we listed the folder (a batch still running) */
      zlb_error_clear(err);
      rc = 0;
      continue;
    }
    if (rc)
      goto out;
    zlb_summary_parse_log(s, text, logs.v[i], err);
    free(text);
  }
out:
  zlb_strvec_release(&logs);
  zlb_strbuf_release(&full);
  return rc;
}
