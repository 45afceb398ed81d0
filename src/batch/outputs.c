/* What the batch writes besides the children's own folders: ops_status.csv,
 * each operator's .complete marker, run_identity.json and summary.csv. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_int.h"
#include "zlbench/identity.h"
#include "zlbench/json.h"
#include "zlbench/report.h"

/* ---- paths ------------------------------------------------------------------------ */

void zlb__op_dir(const zlb__batch_t *b, const char *op, zlb_strbuf_t *out) {
  zlb_strbuf_addf(out, "%s/ops/%s", b->o->out_dir, op);
}

#define STAGE_PREFIX ".stage-"
#define ASIDE_PREFIX ".old-"

void zlb__work_dir(const zlb__batch_t *b, const zlb__job_t *j, zlb_strbuf_t *out) {
  if (j->staged)
    zlb_strbuf_addf(out, "%s/ops/" STAGE_PREFIX "%s", b->o->out_dir, j->op);
  else
    zlb__op_dir(b, j->op, out);
}

int zlb__unstage(zlb__batch_t *b, zlb__job_t *j, zlb_error_t *err) {
  zlb_strbuf_t from = ZLB_STRBUF_INIT, to = ZLB_STRBUF_INIT, aside = ZLB_STRBUF_INIT;
  int rc = 0;
  zlb__work_dir(b, j, &from);
  zlb__op_dir(b, j->op, &to);
  zlb_strbuf_addf(&aside, "%s/ops/" ASIDE_PREFIX "%s", b->o->out_dir, j->op);
  if (zlb__swap_dir(from.buf, to.buf, aside.buf) != 0)
    rc = zlb_error_set(err, ZLB_EIO,
                       "cannot put the new results of '%s' ('%s') in the place of '%s': %s; "
                       "the earlier results are kept",
                       j->op, from.buf, to.buf, strerror(errno));
  else
    j->staged = 0;
  zlb_strbuf_release(&from);
  zlb_strbuf_release(&to);
  zlb_strbuf_release(&aside);
  return rc;
}

void zlb__clean_staging(const zlb__batch_t *b) {
  zlb_strbuf_t ops = ZLB_STRBUF_INIT;
  zlb_strvec_t names = ZLB_STRVEC_INIT;
  DIR *d;
  struct dirent *de;
  zlb_path_join(&ops, b->o->out_dir, "ops");
  if (!(d = opendir(ops.buf))) {
    zlb_strbuf_release(&ops);
    return;
  }
  while ((de = readdir(d)))
    if (!strncmp(de->d_name, STAGE_PREFIX, strlen(STAGE_PREFIX)) ||
        !strncmp(de->d_name, ASIDE_PREFIX, strlen(ASIDE_PREFIX)))
      zlb_strvec_push(&names, de->d_name);
  closedir(d);
  for (size_t i = 0; i < names.n; i++) {
    zlb_strbuf_t p = ZLB_STRBUF_INIT, op = ZLB_STRBUF_INIT;
    const char *name = names.v[i];
    zlb_path_join(&p, ops.buf, name);
    if (!strncmp(name, ASIDE_PREFIX, strlen(ASIDE_PREFIX)) &&
        zlb__op_name_ok(name + strlen(ASIDE_PREFIX))) {
      struct stat st;
      zlb_path_join(&op, ops.buf, name + strlen(ASIDE_PREFIX));
      /* Set aside and the new results never came: the earlier ones are
       * the operator's. */
      if (lstat(op.buf, &st) != 0 && errno == ENOENT && rename(p.buf, op.buf) == 0) {
        zlb_strbuf_release(&p);
        zlb_strbuf_release(&op);
        continue;
      }
    }
    zlb__rmtree(p.buf);
    zlb_strbuf_release(&p);
    zlb_strbuf_release(&op);
  }
  zlb_strvec_release(&names);
  zlb_strbuf_release(&ops);
}

int zlb__is_complete(const zlb__batch_t *b, const char *op) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int r;
  zlb__op_dir(b, op, &p);
  zlb_strbuf_addstr(&p, "/.complete");
  r = zlb_path_exists(p.buf);
  zlb_strbuf_release(&p);
  return r;
}

/* Timer of a finished child from its run_identity.json. */
void zlb__read_timer(const char *dir, char *timer, size_t len) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  char *text = NULL;
  zlb_json_t *j = NULL;
  zlb_path_join(&p, dir, "run_identity.json");
  if (!zlb_read_file(p.buf, &text, NULL, NULL) &&
      !zlb_json_parse(text, strlen(text), p.buf, &j, NULL)) {
    const zlb_json_t *cal = zlb_json_get(j, "caliber");
    const char *t = zlb_json_get_string(cal, "timer", NULL);
    if (t) /* an old run's identity may say "cupti" */
      zlb_strlcpy(timer, zlb_summary_timer_name(t), len);
  }
  zlb_json_free(j);
  free(text);
  zlb_strbuf_release(&p);
}

/* ---- status rows ---------------------------------------------------------------------- */

static int cmp_row(const void *a, const void *b) {
  return strcmp(((const zlb__status_row_t *)a)->op, ((const zlb__status_row_t *)b)->op);
}

/* Every finished operator once: this run's, plus earlier runs' ones that
 * were skipped as complete. */
int zlb__batch_write_status(zlb__batch_t *b, zlb_error_t *err) {
  zlb__status_row_t *rows = zlb_xcalloc(b->njobs + b->nprev + 1, sizeof(*rows));
  size_t n = 0;
  int rc;
  for (size_t i = 0; i < b->njobs; i++)
    if (b->jobs[i].state == ZLB__JOB_DONE)
      rows[n++] = b->jobs[i].row;
  for (size_t i = 0; i < b->nprev; i++) {
    int dup = 0, ours = 0;
    for (size_t k = 0; k < n && !dup; k++)
      dup = !strcmp(rows[k].op, b->prev[i].op);
    for (size_t k = 0; k < b->njobs && !ours; k++)
      ours = !strcmp(b->jobs[k].op, b->prev[i].op);
    /* An earlier row of an operator this batch started again stays only
     * while its results do (a staged rerun keeps them until its own are
     * complete); a row never says ok for results that are gone. */
    if (!dup && (!ours || zlb__is_complete(b, b->prev[i].op)))
      rows[n++] = b->prev[i];
  }
  qsort(rows, n, sizeof(*rows), cmp_row);
  rc = zlb__status_write(b->status_path.buf, rows, n, err);
  free(rows);
  return rc;
}

int zlb__batch_write_complete(zlb__batch_t *b, zlb__job_t *j, zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_jw_t jw;
  int rc;
  zlb_jw_init(&jw, 1);
  zlb_jw_object_begin(&jw);
  zlb_jw_key_string(&jw, "operator", j->op);
  zlb_jw_key_string(&jw, "status", j->row.status);
  zlb_jw_key_int(&jw, "attempts", j->row.attempts);
  zlb_jw_key_int(&jw, "dtype_level", j->row.level);
  zlb_jw_key_string(&jw, "failed_dtypes", j->row.failed_dtypes);
  zlb_jw_key_string(&jw, "signature", j->row.signature);
  zlb_jw_object_end(&jw);
  zlb__work_dir(b, j, &p);
  zlb_strbuf_addstr(&p, "/.complete");
  /* Atomic: a resumed batch sees a finished operator or none. */
  rc = zlb_write_file_atomic(p.buf, jw.out.buf, jw.out.len, err);
  zlb_jw_release(&jw);
  zlb_strbuf_release(&p);
  return rc;
}

/* ---- identity and summary ------------------------------------------------------------------ */

int zlb__batch_write_identity(zlb__batch_t *b, int final, zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_jw_t jw;
  int rc;
  zlb_jw_init(&jw, 1);
  zlb_identity_head(&jw, "batch", o->argc, o->argv);
  zlb_identity_backend_begin(&jw, b->backend, b->vis_env[0] ? b->vis_env : NULL);
  zlb_jw_key_string(&jw, "visibility_grant", b->vis_env[0] ? getenv(b->vis_env) : NULL);
  zlb_jw_key_array(&jw, "also_env");
  for (size_t i = 0; i < b->vis_also.n; i++)
    zlb_jw_string(&jw, b->vis_also.v[i]);
  zlb_jw_array_end(&jw);
  zlb_jw_object_end(&jw);
  zlb_jw_key_array(&jw, "devices");
  for (size_t i = 0; i < b->devices.n; i++)
    zlb_jw_string(&jw, b->devices.v[i]);
  zlb_jw_array_end(&jw);
  /* What each device ordinal is to the runtime outside the batch: the
   * inherited grant's entry (Slurm's, Kubernetes'), else the ordinal. */
  zlb_jw_key_array(&jw, "device_ids");
  for (size_t i = 0; i < b->devices.n; i++)
    zlb_jw_string(&jw, b->vis_env[0] ? zlb__device_value(b, b->devices.v[i]) : b->devices.v[i]);
  zlb_jw_array_end(&jw);
  /* The scheduler's job, when there is one (zlbench merge reports it). */
  zlb_jw_key_object(&jw, "scheduler");
  {
    static const char *const keys[] = {"SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID",
                                       "SLURM_ARRAY_TASK_ID", "SLURM_PROCID",
                                       "SLURM_JOB_NODELIST", "JOB_COMPLETION_INDEX"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
      const char *v = getenv(keys[i]);
      char k[32];
      size_t n = 0;
      for (const char *c = keys[i]; *c && n + 1 < sizeof(k); c++)
        k[n++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
      k[n] = '\0';
      zlb_jw_key_string(&jw, k, v && *v ? v : NULL);
    }
  }
  zlb_jw_object_end(&jw);
  zlb_jw_key_object(&jw, "shard");
  zlb_jw_key_int(&jw, "index", o->shard_index);
  zlb_jw_key_int(&jw, "count", o->shard_count);
  zlb_jw_key_string(&jw, "source", o->shard_source);
  zlb_jw_key_string(&jw, "device_rule", "fnv1a64(name) mod ndevices");
  zlb_jw_key_string(&jw, "host_rule", "(fnv1a64(name) >> 32) mod count");
  zlb_jw_object_end(&jw);
  zlb_jw_key_double(&jw, "timeout_s", o->timeout_s);
  zlb_jw_key_double(&jw, "grace_s", o->grace_s);
  zlb_jw_key_int(&jw, "retries", o->retries);
  zlb_jw_key_int(&jw, "jobs_per_device", b->per_device);
  {
    /* The fewest children a device took at a time: narrower than
     * jobs_per_device where children ran out of memory beside others. */
    int least = b->per_device;
    for (size_t d = 0; b->width && d < b->devices.n; d++)
      least = b->width[d].least < least ? b->width[d].least : least;
    zlb_jw_key_int(&jw, "jobs_per_device_least", least);
  }
  zlb_jw_key_array(&jw, "dtypes");
  for (size_t i = 0; i < o->dtypes.n; i++)
    zlb_jw_string(&jw, o->dtypes.v[i]);
  zlb_jw_array_end(&jw);
  zlb_jw_key_array(&jw, "run_args");
  for (size_t i = 0; i < o->run_args.n; i++)
    zlb_jw_string(&jw, o->run_args.v[i]);
  zlb_jw_array_end(&jw);
  zlb_jw_key_string(&jw, "replay_from", o->replay_from);
  /* Where the operators came from: the C corpus, or a pytest suite. */
  zlb_jw_key_object(&jw, "provider");
  zlb_jw_key_string(&jw, "name", b->prov ? b->prov->name : "zlbench");
  zlb_jw_key_string(&jw, "flaggems_dir", o->flaggems_dir);
  zlb_jw_key_string(&jw, "stage", o->stage);
  zlb_jw_key_string(&jw, "mode", o->flaggems_dir ? (o->fg_mode ? o->fg_mode : "kernel") : NULL);
  zlb_jw_key_string(&jw, "python", b->python[0] ? b->python : NULL);
  zlb_jw_object_end(&jw);
  /* Every operator of the selection, before host sharding: zlbench merge
   * checks that shards belong together and names what is missing. */
  zlb_jw_key_array(&jw, "selection");
  for (size_t i = 0; b->selection && i < b->selection->n; i++)
    zlb_jw_string(&jw, b->selection->v[i]);
  zlb_jw_array_end(&jw);
  zlb_jw_key_array(&jw, "operators");
  for (size_t i = 0; i < b->njobs; i++) {
    zlb_jw_object_begin(&jw);
    zlb_jw_key_string(&jw, "name", b->jobs[i].op);
    zlb_jw_key_string(&jw, "device", b->devices.v[b->jobs[i].slot]);
    zlb_jw_object_end(&jw);
  }
  zlb_jw_array_end(&jw);
  zlb_identity_times(&jw, b->started, final);
  if (final) {
    zlb_jw_key_int(&jw, "ok", b->res->ok);
    zlb_jw_key_int(&jw, "failed", b->res->failed);
    zlb_jw_key_int(&jw, "skipped", b->res->skipped);
    zlb_jw_key_int(&jw, "replayed", b->res->replayed);
    zlb_jw_key_bool(&jw, "interrupted", b->res->interrupted);
    zlb_jw_key_double(&jw, "seconds", zlb_now_s() - b->t0);
  }
  zlb_jw_object_end(&jw);
  zlb_path_join(&p, o->out_dir, "run_identity.json");
  rc = zlb_write_file_atomic(p.buf, jw.out.buf, jw.out.len, err);
  zlb_jw_release(&jw);
  zlb_strbuf_release(&p);
  return rc;
}

static const zlb__status_row_t *final_row(const zlb__batch_t *b, const char *op) {
  for (size_t i = 0; i < b->njobs; i++)
    if (!strcmp(b->jobs[i].op, op) && b->jobs[i].state == ZLB__JOB_DONE)
      return &b->jobs[i].row;
  for (size_t i = 0; i < b->nprev; i++)
    if (!strcmp(b->prev[i].op, op))
      return &b->prev[i];
  return NULL;
}

/* summary.csv of a batch folder (or a merged one): the tables under
 * ops/<op>/ of each finished operator, sources relative to `out_dir`, and
 * one line saying why for an operator without rows. */
int zlb__write_summary(const char *out_dir, const zlb__status_row_t *rows, size_t n,
                       zlb_error_t *err) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    const zlb__status_row_t *row = &rows[i];
    size_t before = s.n;
    zlb_strbuf_reset(&p);
    zlb_strbuf_addf(&p, "%s/ops/%s", out_dir, row->op);
    if (zlb_is_dir(p.buf))
      zlb_summary_scan_dir(&s, p.buf, NULL);
    for (size_t k = before; k < s.n; k++) {
      zlb_strbuf_t src = ZLB_STRBUF_INIT;
      zlb_strbuf_addf(&src, "ops/%s/%s", row->op, s.rows[k].source);
      free(s.rows[k].source);
      s.rows[k].source = zlb_strbuf_detach(&src);
    }
    if (s.n == before) {
      zlb_summary_row_t r;
      memset(&r, 0, sizeof(r));
      r.op = (char *)row->op;
      r.status = (char *)row->status;
      r.marker = (char *)row->signature;
      r.base_ms = r.cand_ms = r.speedup = r.gbps = r.tflops = r.pct_peak = NAN;
      r.base_host_us = r.cand_host_us = NAN;
      zlb_summary_add(&s, &r);
    }
  }
  zlb_summary_sort(&s);
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, out_dir, "summary.csv");
  rc = zlb_summary_write_csv(&s, p.buf, err);
  zlb_summary_release(&s);
  zlb_strbuf_release(&p);
  return rc;
}

int zlb__batch_write_summary(zlb__batch_t *b, zlb_error_t *err) {
  zlb__status_row_t *rows = zlb_xcalloc(b->njobs + 1, sizeof(*rows));
  size_t n = 0;
  int rc;
  for (size_t i = 0; i < b->njobs; i++) {
    const zlb__status_row_t *row = final_row(b, b->jobs[i].op);
    if (row)
      rows[n++] = *row;
  }
  rc = zlb__write_summary(b->o->out_dir, rows, n, err);
  free(rows);
  return rc;
}
