/* zlb_batch_run(): the scheduler. Operators are sharded over devices by a
 * stable hash; each device runs one `zlbench run` child at a time, devices
 * in parallel; retries, capture-poison re-runs and two-level dtype fallback
 * are state transitions of each operator's job. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_int.h"
#include "zlbench/device.h"
#include "zlbench/json.h"
#include "zlbench/ops.h"
#include "zlbench/report.h"

/* A unit is what one child runs: every dtype (level 1) or one (level 2). */
typedef struct unit {
  char label[32];     /* "all" or a dtype name */
  char dtypes[160];   /* value for --dtypes, "" for the child's default */
  int attempts;       /* attempts that counted against the retry budget */
  int runs;           /* every child started for this unit */
  int deny;           /* re-run with capture denied after a poisoned capture */
  int accepted;       /* produced rows (exit 0 or 1) */
  char status[32];
  char signature[320];
  char timer[16];
} unit_t;

typedef struct job {
  char *op;
  int slot;           /* index into the device list */
  uint32_t dtypes;    /* registered dtypes */
  int level;          /* 1, or 2 after the all-dtypes child failed */
  unit_t l1;
  unit_t *l2;
  int nl2, cur;
  int state;          /* 0 queued, 1 running, 2 done */
  int seq;            /* attempt folders */
  zlb_child_t child;
  char attempt_dir[1024];
  double t0;
  zlb__status_row_t row;
} job_t;

typedef struct batch {
  const zlb_batch_opts_t *o;
  zlb_batch_result_t *res;
  char backend[32];
  const zlb_backend_desc_t *desc;
  zlb_strvec_t devices;       /* ordinals as strings */
  job_t *jobs;
  size_t njobs;
  zlb__status_row_t *prev;    /* ops_status.csv of an earlier run into the same folder */
  size_t nprev;
  zlb_strbuf_t status_path;
  double t0;
  char started[32];
} batch_t;

static const char *status_of_exit(const zlb_exit_t *ex) {
  if (ex->timed_out)
    return "timeout";
  if (ex->signaled)
    return "crashed";
  switch (ex->code) {
  case ZLB_EXIT_OK: return "ok";
  case ZLB_EXIT_FAILED: return "failed_rows";
  case ZLB_EXIT_USAGE: return "usage_error";
  case ZLB_EXIT_UNAVAIL: return "unavailable";
  case ZLB_EXIT_FATAL: return "fatal";
  case ZLB_EXIT_POISONED: return "poisoned";
  default: return "failed";
  }
}

/* First line of stderr that says "error" (else the first non-empty one):
 * with the exit class it is the failure's signature. */
static void first_error_line(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  char line[512];
  buf[0] = '\0';
  if (!f)
    return;
  /* Bounded: only the first 64 KiB of a child's stderr are examined. */
  for (long read = 0; read < 65536 && fgets(line, sizeof(line), f); read += (long)strlen(line)) {
    char *t = zlb_trim(line);
    if (!*t)
      continue;
    if (!buf[0])
      zlb_strlcpy(buf, t, len);
    if (strstr(t, "error") || strstr(t, "Error") || strstr(t, "ERROR") ||
        strstr(t, "BENCHMARK_CAPTURE_POISONED")) {
      zlb_strlcpy(buf, t, len);
      break;
    }
  }
  fclose(f);
}

/* ---- helper children ---------------------------------------------------------- */

static void helper_env(const batch_t *b, zlb_strvec_t *env) {
  (void)b;
  zlb_strvec_push(env, "NO_COLOR=1");
}

static void push_libs(const zlb_batch_opts_t *o, zlb_strvec_t *argv) {
  for (size_t i = 0; i < o->lib_args.n; i++) {
    zlb_strvec_push(argv, "--lib");
    zlb_strvec_push(argv, o->lib_args.v[i]);
  }
}

static int run_helper(batch_t *b, zlb_strvec_t *argv, zlb_strbuf_t *out, zlb_error_t *err) {
  zlb_strvec_t env = ZLB_STRVEC_INIT;
  zlb_strbuf_t errout = ZLB_STRBUF_INIT;
  zlb_exit_t ex;
  char what[64];
  int rc;
  helper_env(b, &env);
  rc = zlb_spawn_capture(argv->v, &env, 120.0, 1 << 20, out, &errout, &ex, err);
  zlb_strvec_release(&env);
  if (!rc && !(ex.code == ZLB_EXIT_OK && !ex.signaled && !ex.timed_out)) {
    /* The helper's own message says what is wrong (unknown backend, ...). */
    zlb_exit_describe(&ex, what, sizeof(what));
    zlb_strbuf_setlen(&errout, errout.len && errout.buf[errout.len - 1] == '\n' ? errout.len - 1
                                                                              : errout.len);
    rc = zlb_error_set(err, ex.code == ZLB_EXIT_USAGE ? ZLB_EINVAL : ZLB_EUNAVAIL, "%s",
                       errout.len ? (zlb_starts_with(errout.buf, "zlbench: error: ")
                                         ? errout.buf + strlen("zlbench: error: ")
                                         : errout.buf)
                                  : what);
  }
  zlb_strbuf_release(&errout);
  return rc;
}

/* Backend name and device count, from `zlbench devices --count` (a child:
 * the parent must not initialise a GPU runtime). */
static int discover_devices(batch_t *b, int *count, zlb_error_t *err) {
  zlb_strvec_t argv = ZLB_STRVEC_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  char name[32];
  int rc;
  zlb_strvec_push(&argv, b->o->exe);
  zlb_strvec_push(&argv, "devices");
  zlb_strvec_push(&argv, "--backend");
  zlb_strvec_push(&argv, b->o->backend && *b->o->backend ? b->o->backend : "auto");
  zlb_strvec_push(&argv, "--count");
  push_libs(b->o, &argv);
  rc = run_helper(b, &argv, &out, err);
  if (!rc && sscanf(out.buf, "%31s %d", name, count) != 2)
    rc = zlb_error_set(err, ZLB_EUNAVAIL, "cannot read the device count from '%s'", out.buf);
  if (!rc) {
    zlb_strlcpy(b->backend, name, sizeof(b->backend));
    /* Backends from --lib libraries are not in this process's registry;
     * the built-in ones are, with their visibility keys. */
    zlb_error_t ignore = ZLB_ERROR_INIT;
    if (zlb_backend_lookup(name, &b->desc, &ignore))
      b->desc = NULL;
  }
  zlb_strvec_release(&argv);
  zlb_strbuf_release(&out);
  return rc;
}

typedef struct registered {
  zlb_strvec_t names;
  uint32_t *dtypes;
} registered_t;

static int discover_ops(batch_t *b, registered_t *reg, zlb_error_t *err) {
  zlb_strvec_t argv = ZLB_STRVEC_INIT, lines = ZLB_STRVEC_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  int rc;
  zlb_strvec_push(&argv, b->o->exe);
  zlb_strvec_push(&argv, "inventory");
  zlb_strvec_push(&argv, "--registered");
  zlb_strvec_push(&argv, "--backend");
  zlb_strvec_push(&argv, b->backend);
  push_libs(b->o, &argv);
  if ((rc = run_helper(b, &argv, &out, err)))
    goto out;
  zlb_strvec_split(&lines, out.buf, '\n');
  reg->dtypes = zlb_xcalloc(lines.n + 1, sizeof(uint32_t));
  for (size_t i = 0; i < lines.n; i++) {
    char name[128], family[64], dts[160];
    uint32_t mask = 0;
    if (sscanf(lines.v[i], "%127s %63s %159s", name, family, dts) != 3)
      continue;
    zlb_dtype_list_parse(dts, &mask, NULL);
    reg->dtypes[reg->names.n] = mask;
    zlb_strvec_push(&reg->names, name);
  }
out:
  zlb_strvec_release(&argv);
  zlb_strvec_release(&lines);
  zlb_strbuf_release(&out);
  return rc;
}

/* ---- selection ------------------------------------------------------------------ */

static int asset_path(const char *given, const char *name, zlb_strbuf_t *out,
                      zlb_error_t *err) {
  if (given) {
    zlb_strbuf_addstr(out, given);
    return 0;
  }
  if (zlb_assets_dir(out, err))
    return err->code;
  zlb_strbuf_addf(out, "/%s", name);
  return 0;
}

static int select_ops(batch_t *b, const registered_t *reg, zlb_strvec_t *sel,
                      zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  zlb_strvec_t dismissed = ZLB_STRVEC_INIT, reasons = ZLB_STRVEC_INIT, listed = ZLB_STRVEC_INIT;
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int rc = 0;

  if (o->ops.n) {
    for (size_t i = 0; i < o->ops.n; i++) {
      if (zlb_strvec_find(&reg->names, o->ops.v[i]) < 0) {
        zlb_strbuf_t known = ZLB_STRBUF_INIT;
        zlb_strvec_join(&reg->names, ", ", &known);
        rc = zlb_error_set(err, ZLB_ENOTFOUND,
                           "unknown operator '%s' for backend '%s'; registered: %s",
                           o->ops.v[i], b->backend, known.len ? known.buf : "none");
        zlb_strbuf_release(&known);
        goto out;
      }
      if (zlb_strvec_find(sel, o->ops.v[i]) < 0)
        zlb_strvec_push(sel, o->ops.v[i]);
    }
    goto out;
  }
  if ((rc = asset_path(o->inventory_path, "inventory.yaml", &p, err)) ||
      (rc = zlb_inventory_load(p.buf, b->backend, &listed, err)))
    goto out;
  zlb_strbuf_reset(&p);
  if ((rc = asset_path(o->dismiss_path, "dismiss.yaml", &p, err)))
    goto out;
  if (zlb_path_exists(p.buf) || o->dismiss_path)
    if ((rc = zlb_dismiss_load(p.buf, b->backend, &dismissed, &reasons, err)))
      goto out;
  for (size_t i = 0; i < listed.n; i++) {
    if (zlb_strvec_find(&dismissed, listed.v[i]) >= 0)
      continue;
    if (zlb_strvec_find(&reg->names, listed.v[i]) < 0) {
      rc = zlb_error_set(err, ZLB_ENOTFOUND,
                         "the inventory lists operator '%s' for backend '%s', but no loaded "
                         "library registers it ('zlbench inventory --check' shows the "
                         "differences)",
                         listed.v[i], b->backend);
      goto out;
    }
    zlb_strvec_push(sel, listed.v[i]);
  }
out:
  zlb_strvec_release(&dismissed);
  zlb_strvec_release(&reasons);
  zlb_strvec_release(&listed);
  zlb_strbuf_release(&p);
  return rc;
}

/* ---- paths ------------------------------------------------------------------------ */

static void op_dir(const batch_t *b, const char *op, zlb_strbuf_t *out) {
  zlb_strbuf_addf(out, "%s/ops/%s", b->o->out_dir, op);
}

static int is_complete(const batch_t *b, const char *op) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int r;
  op_dir(b, op, &p);
  zlb_strbuf_addstr(&p, "/.complete");
  r = zlb_path_exists(p.buf);
  zlb_strbuf_release(&p);
  return r;
}

/* Timer of a finished child from its run_identity.json. */
static void read_timer(const char *dir, char *timer, size_t len) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  char *text = NULL;
  zlb_json_t *j = NULL;
  zlb_path_join(&p, dir, "run_identity.json");
  if (!zlb_read_file(p.buf, &text, NULL, NULL) &&
      !zlb_json_parse(text, strlen(text), p.buf, &j, NULL)) {
    const zlb_json_t *cal = zlb_json_get(j, "caliber");
    const char *t = zlb_json_get_string(cal, "timer", NULL);
    if (t)
      zlb_strlcpy(timer, t, len);
  }
  zlb_json_free(j);
  free(text);
  zlb_strbuf_release(&p);
}

/* A child's results are complete when its run_identity.json was written
 * the second time, at the end of the run ("finished" set). Exit 1 means
 * "rows failed" only then; a child that died on the way (a sanitizer's
 * report, a library calling exit(1)) did not finish its table. */
static int run_finished(const char *dir) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  char *text = NULL;
  zlb_json_t *j = NULL;
  int done = 0;
  zlb_path_join(&p, dir, "run_identity.json");
  if (!zlb_read_file(p.buf, &text, NULL, NULL) &&
      !zlb_json_parse(text, strlen(text), p.buf, &j, NULL))
    done = zlb_json_get_string(j, "finished", NULL) != NULL;
  zlb_json_free(j);
  free(text);
  zlb_strbuf_release(&p);
  return done;
}

/* ---- status rows ---------------------------------------------------------------------- */

static int cmp_row(const void *a, const void *b) {
  return strcmp(((const zlb__status_row_t *)a)->op, ((const zlb__status_row_t *)b)->op);
}

/* Every finished operator once: this run's, plus earlier runs' ones that
 * were skipped as complete. */
static int write_status(batch_t *b, zlb_error_t *err) {
  zlb__status_row_t *rows = zlb_xcalloc(b->njobs + b->nprev + 1, sizeof(*rows));
  size_t n = 0;
  int rc;
  for (size_t i = 0; i < b->njobs; i++)
    if (b->jobs[i].state == 2)
      rows[n++] = b->jobs[i].row;
  for (size_t i = 0; i < b->nprev; i++) {
    int dup = 0;
    for (size_t k = 0; k < n && !dup; k++)
      dup = !strcmp(rows[k].op, b->prev[i].op);
    if (!dup)
      rows[n++] = b->prev[i];
  }
  qsort(rows, n, sizeof(*rows), cmp_row);
  rc = zlb__status_write(b->status_path.buf, rows, n, err);
  free(rows);
  return rc;
}

static void write_complete(batch_t *b, job_t *j) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_jw_t jw;
  zlb_jw_init(&jw, 1);
  zlb_jw_object_begin(&jw);
  zlb_jw_key_string(&jw, "operator", j->op);
  zlb_jw_key_string(&jw, "status", j->row.status);
  zlb_jw_key_int(&jw, "attempts", j->row.attempts);
  zlb_jw_key_int(&jw, "dtype_level", j->row.level);
  zlb_jw_key_string(&jw, "failed_dtypes", j->row.failed_dtypes);
  zlb_jw_key_string(&jw, "signature", j->row.signature);
  zlb_jw_object_end(&jw);
  op_dir(b, j->op, &p);
  zlb_strbuf_addstr(&p, "/.complete");
  /* Atomic: a resumed batch sees a finished operator or none. */
  zlb_write_file_atomic(p.buf, jw.out.buf, jw.out.len, NULL);
  zlb_jw_release(&jw);
  zlb_strbuf_release(&p);
}

static void line(batch_t *b, job_t *j) {
  char text[1024];
  if (!b->o->line)
    return;
  snprintf(text, sizeof(text), "[%3d/%d] device %-3s %-20s %-16s attempts=%d level=%d %6.1fs%s%s\n",
           b->res->done, b->res->total, j->row.device, j->op, j->row.status, j->row.attempts,
           j->row.level, j->row.seconds, j->row.signature[0] ? "  " : "", j->row.signature);
  b->o->line(b->o->cb_ctx, text);
}

static int accepted_ok(const char *status) {
  return !strcmp(status, "ok") || !strcmp(status, "replayed");
}

static void finish_job(batch_t *b, job_t *j, zlb_error_t *err) {
  j->state = 2;
  j->row.seconds = zlb_now_s() - j->t0;
  b->res->done++;
  if (accepted_ok(j->row.status) || !strcmp(j->row.status, "ok_capture_denied"))
    b->res->ok++;
  else
    b->res->failed++;
  write_complete(b, j);
  write_status(b, err);
  line(b, j);
}

/* ---- children ---------------------------------------------------------------------------- */

static unit_t *current_unit(job_t *j) { return j->level == 1 ? &j->l1 : &j->l2[j->cur]; }

static int start_child(batch_t *b, job_t *j, zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  unit_t *u = current_unit(j);
  zlb_strvec_t argv = ZLB_STRVEC_INIT, env = ZLB_STRVEC_INIT;
  zlb_strbuf_t dir = ZLB_STRBUF_INIT, errpath = ZLB_STRBUF_INIT;
  const char *dev = b->devices.v[j->slot];
  int rc;

  op_dir(b, j->op, &dir);
  zlb_strbuf_addf(&dir, "/attempts/%d-%s", ++j->seq, u->label);
  if ((rc = zlb_mkdirs(dir.buf, err)))
    goto out;
  zlb_strlcpy(j->attempt_dir, dir.buf, sizeof(j->attempt_dir));
  zlb_path_join(&errpath, dir.buf, "stderr.log");

  zlb_strvec_push(&argv, o->exe);
  zlb_strvec_push(&argv, "run");
  zlb_strvec_push(&argv, j->op);
  zlb_strvec_push(&argv, "--backend");
  zlb_strvec_push(&argv, b->backend);
  zlb_strvec_push(&argv, "--device");
  zlb_strvec_push(&argv, "0"); /* the only device the child can see */
  zlb_strvec_push(&argv, "--out");
  zlb_strvec_push(&argv, dir.buf);
  zlb_strvec_push(&argv, "--color");
  zlb_strvec_push(&argv, "never");
  if (u->dtypes[0]) {
    zlb_strvec_push(&argv, "--dtypes");
    zlb_strvec_push(&argv, u->dtypes);
  }
  if (u->deny) {
    zlb_strvec_push(&argv, "--deny-capture");
    zlb_strvec_push(&argv, j->op);
  }
  for (size_t i = 0; i < o->run_args.n; i++)
    zlb_strvec_push(&argv, o->run_args.v[i]);
  push_libs(o, &argv);

  /* Pin the child to its device through the backend's visibility key. */
  if (b->desc && b->desc->visibility_env) {
    zlb_strvec_pushf(&env, "%s=%s", b->desc->visibility_env, dev);
    for (const char *const *k = b->desc->also_env; k && *k; k++)
      zlb_strvec_pushf(&env, "%s=%s", *k, dev);
  } else {
    zlb_strvec_pushf(&env, "ZL_TEST_VISIBLE_DEVICES=%s", dev);
  }
  zlb_strvec_push(&env, "NO_COLOR=1");
  rc = zlb_spawn(argv.v, &env, NULL, errpath.buf, o->timeout_s, &j->child, err);
  if (!rc) {
    u->runs++;
    j->row.attempts++;
    j->state = 1;
  }
out:
  zlb_strvec_release(&argv);
  zlb_strvec_release(&env);
  zlb_strbuf_release(&dir);
  zlb_strbuf_release(&errpath);
  return rc;
}

static void begin_level2(batch_t *b, job_t *j) {
  uint32_t want = 0;
  (void)b;
  if (b->o->dtypes.n) {
    for (size_t i = 0; i < b->o->dtypes.n; i++) {
      zlb_dtype_t d;
      if (!zlb_dtype_parse(b->o->dtypes.v[i], &d))
        want |= ZLB_DT_BIT(d);
    }
    want &= j->dtypes ? j->dtypes : want;
  } else {
    want = j->dtypes & ZLB_DT_FLOATS;
    if (!want)
      want = j->dtypes;
  }
  j->level = 2;
  j->cur = 0;
  j->nl2 = 0;
  j->l2 = zlb_xcalloc(ZLB_DT_COUNT, sizeof(unit_t));
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if (want & ZLB_DT_BIT(d)) {
      unit_t *u = &j->l2[j->nl2++];
      zlb_strlcpy(u->label, zlb_dtype_name((zlb_dtype_t)d), sizeof(u->label));
      zlb_strlcpy(u->dtypes, zlb_dtype_name((zlb_dtype_t)d), sizeof(u->dtypes));
    }
}

/* Move an accepted attempt to its final place: ops/<op>/ for level 1,
 * ops/<op>/<dtype>/ for level 2. */
static void accept_attempt(batch_t *b, job_t *j, unit_t *u) {
  zlb_strbuf_t dst = ZLB_STRBUF_INIT;
  op_dir(b, j->op, &dst);
  if (j->level == 2)
    zlb_strbuf_addf(&dst, "/%s", u->label);
  zlb__move_contents(j->attempt_dir, dst.buf);
  read_timer(dst.buf, u->timer, sizeof(u->timer));
  zlb__rmtree(j->attempt_dir);
  zlb_strbuf_release(&dst);
}

static void conclude(batch_t *b, job_t *j, zlb_error_t *err) {
  if (j->level == 1) {
    unit_t *u = &j->l1;
    j->row.level = 1;
    zlb_strlcpy(j->row.timer, u->timer, sizeof(j->row.timer));
    zlb_strlcpy(j->row.signature, u->signature, sizeof(j->row.signature));
    if (u->accepted && u->deny && !strcmp(u->status, "ok")) {
      zlb_strlcpy(j->row.status, "ok_capture_denied", sizeof(j->row.status));
      zlb_strlcpy(j->row.note,
                  "capture poisoned the context (BENCHMARK_CAPTURE_POISONED); re-run with "
                  "capture denied",
                  sizeof(j->row.note));
    } else {
      zlb_strlcpy(j->row.status, u->status, sizeof(j->row.status));
    }
  } else {
    int good = 0;
    zlb_strbuf_t failed = ZLB_STRBUF_INIT;
    const unit_t *first_bad = NULL;
    j->row.level = 2;
    for (int i = 0; i < j->nl2; i++) {
      unit_t *u = &j->l2[i];
      if (u->accepted && !strcmp(u->status, "ok")) {
        good++;
        if (!j->row.timer[0])
          zlb_strlcpy(j->row.timer, u->timer, sizeof(j->row.timer));
      } else {
        zlb_strbuf_addf(&failed, "%s%s", failed.len ? ";" : "", u->label);
        if (!first_bad)
          first_bad = u;
      }
    }
    zlb_strlcpy(j->row.failed_dtypes, failed.buf, sizeof(j->row.failed_dtypes));
    if (!first_bad)
      zlb_strlcpy(j->row.status, "ok", sizeof(j->row.status));
    else if (good)
      zlb_strlcpy(j->row.status, "partial", sizeof(j->row.status));
    else
      zlb_strlcpy(j->row.status, first_bad->status, sizeof(j->row.status));
    zlb_strlcpy(j->row.signature, first_bad ? first_bad->signature : j->l1.signature,
                sizeof(j->row.signature));
    {
      zlb_strbuf_t note = ZLB_STRBUF_INIT;
      zlb_strbuf_addf(&note, "all-dtypes child failed (%s); one child per dtype", j->l1.signature);
      zlb_strlcpy(j->row.note, note.buf, sizeof(j->row.note));
      zlb_strbuf_release(&note);
    }
    zlb_strbuf_release(&failed);
  }
  finish_job(b, j, err);
}

/* Start the current unit's next child. A child that cannot even be
 * started fails its unit, and the state machine moves on. */
static void launch(batch_t *b, job_t *j, zlb_error_t *err) {
  zlb_error_t e = ZLB_ERROR_INIT;
  while (start_child(b, j, &e)) {
    unit_t *u = current_unit(j);
    zlb_strlcpy(u->status, "spawn_error", sizeof(u->status));
    zlb_strlcpy(u->signature, e.msg, sizeof(u->signature));
    if (j->level == 2 && ++j->cur < j->nl2)
      continue;
    conclude(b, j, err);
    return;
  }
}

/* A child ended: retry, advance, fall back a level, or finish. */
static void on_child_exit(batch_t *b, job_t *j, zlb_error_t *err) {
  unit_t *u = current_unit(j);
  const zlb_exit_t *ex = &j->child.exit;
  char sig[320], line1[256], what[64];
  const char *st = status_of_exit(ex);
  int accepted = !ex->timed_out && !ex->signaled &&
                 (ex->code == ZLB_EXIT_OK || ex->code == ZLB_EXIT_FAILED) &&
                 run_finished(j->attempt_dir);

  j->state = 0;
  zlb_exit_describe(ex, what, sizeof(what));
  {
    zlb_strbuf_t ep = ZLB_STRBUF_INIT;
    zlb_path_join(&ep, j->attempt_dir, "stderr.log");
    first_error_line(ep.buf, line1, sizeof(line1));
    zlb_strbuf_release(&ep);
  }
  snprintf(sig, sizeof(sig), "%s%s%s", what, line1[0] && !ex->timed_out ? ": " : "",
           ex->timed_out ? "" : line1);

  if (accepted) {
    u->accepted = 1;
    zlb_strlcpy(u->status, st, sizeof(u->status));
    u->signature[0] = '\0';
    accept_attempt(b, j, u);
  } else if (ex->code == ZLB_EXIT_POISONED && !ex->signaled && !ex->timed_out && !u->deny) {
    /* BENCHMARK_CAPTURE_POISONED: the operator is capture-incompatible, not
     * broken. Once more, in a fresh process, with capture denied. */
    u->deny = 1;
    zlb_strlcpy(u->signature, sig, sizeof(u->signature));
    launch(b, j, err);
    return;
  } else {
    int deterministic = !strcmp(u->signature, sig);
    int final = ex->code == ZLB_EXIT_USAGE || ex->code == ZLB_EXIT_UNAVAIL ||
                (ex->code == ZLB_EXIT_POISONED && u->deny);
    if (!ex->timed_out && !ex->signaled && ex->code <= ZLB_EXIT_FAILED)
      st = "failed"; /* exited without finishing its results */
    u->attempts++;
    zlb_strlcpy(u->status, st, sizeof(u->status));
    zlb_strlcpy(u->signature, sig, sizeof(u->signature));
    /* Transient failures are retried; the same signature twice means
     * deterministic, and retrying again would only cost time. */
    if (!final && !deterministic && u->attempts <= b->o->retries) {
      launch(b, j, err);
      return;
    }
  }

  if (j->level == 1) {
    /* No rows from the all-dtypes child: one child per dtype, so one bad
     * dtype loses only itself (pointless for a single dtype). */
    if (!u->accepted) {
      begin_level2(b, j);
      if (j->nl2 > 1) {
        launch(b, j, err);
        return;
      }
      j->level = 1;
    }
    conclude(b, j, err);
    return;
  }
  if (++j->cur < j->nl2) {
    launch(b, j, err);
    return;
  }
  conclude(b, j, err);
}

/* ---- replay and resume --------------------------------------------------------------- */

static int try_replay(batch_t *b, job_t *j) {
  const zlb_batch_opts_t *o = b->o;
  zlb_strbuf_t src = ZLB_STRBUF_INIT, mark = ZLB_STRBUF_INIT, dst = ZLB_STRBUF_INIT;
  char *text = NULL;
  zlb_json_t *done = NULL;
  int used = 0;
  size_t len = strlen(j->op);
  for (size_t i = 0; i < o->replay.n; i++)
    if (!strncmp(o->replay.v[i], j->op, len) && o->replay.v[i][len] == '=')
      zlb_strbuf_addstr(&src, o->replay.v[i] + len + 1);
  if (!src.len && o->replay_from)
    zlb_strbuf_addf(&src, "%s/ops/%s", o->replay_from, j->op);
  if (!src.len)
    goto out;
  zlb_path_join(&mark, src.buf, ".complete");
  /* Only finished results are reused; anything else is measured again. */
  if (zlb_read_file(mark.buf, &text, NULL, NULL) ||
      zlb_json_parse(text, strlen(text), mark.buf, &done, NULL))
    goto out;
  op_dir(b, j->op, &dst);
  zlb__rmtree(dst.buf);
  if (zlb_mkdirs(dst.buf, NULL) || zlb__copytree(src.buf, dst.buf, "attempts"))
    goto out;
  {
    zlb_strbuf_t p = ZLB_STRBUF_INIT;
    zlb_path_join(&p, dst.buf, ".complete");
    unlink(p.buf);
    zlb_strbuf_release(&p);
  }
  {
    /* "replayed" for reused successes; a reused failure stays visible as
     * one ("replayed_timeout"). */
    const char *orig = zlb_json_get_string(done, "status", "unknown");
    if (accepted_ok(orig) || !strcmp(orig, "ok_capture_denied"))
      zlb_strlcpy(j->row.status, "replayed", sizeof(j->row.status));
    else
      snprintf(j->row.status, sizeof(j->row.status), "replayed_%s", orig);
    snprintf(j->row.note, sizeof(j->row.note), "from %s (status %s there)", src.buf, orig);
  }
  j->row.level = (int)zlb_json_get_number(done, "dtype_level", 1);
  zlb_strlcpy(j->row.failed_dtypes, zlb_json_get_string(done, "failed_dtypes", ""),
              sizeof(j->row.failed_dtypes));
  read_timer(dst.buf, j->row.timer, sizeof(j->row.timer));
  used = 1;
out:
  zlb_json_free(done);
  free(text);
  zlb_strbuf_release(&src);
  zlb_strbuf_release(&mark);
  zlb_strbuf_release(&dst);
  return used;
}

/* ---- progress ------------------------------------------------------------------------------ */

static void status_block(batch_t *b) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  double now = zlb_now_s();
  if (!b->o->live || !b->o->status)
    return;
  for (size_t d = 0; d < b->devices.n; d++) {
    int total = 0, done = 0, failed = 0;
    double spent = 0;
    const char *cur = "-";
    for (size_t i = 0; i < b->njobs; i++) {
      job_t *j = &b->jobs[i];
      if (j->slot != (int)d)
        continue;
      total++;
      if (j->state == 2) {
        done++;
        spent += j->row.seconds;
        if (!accepted_ok(j->row.status) && strcmp(j->row.status, "ok_capture_denied"))
          failed++;
      } else if (j->state == 1) {
        cur = j->op;
      }
    }
    {
      double eta = done ? spent / done * (total - done) : NAN;
      char etas[32];
      if (isnan(eta))
        snprintf(etas, sizeof(etas), "--:--");
      else
        snprintf(etas, sizeof(etas), "%02d:%02d", (int)eta / 60, (int)eta % 60);
      zlb_strbuf_addf(&sb, "device %-3s %3d/%-3d failed %-3d elapsed %02d:%02d  eta %s  now: %s\n",
                      b->devices.v[d], done, total, failed, (int)(now - b->t0) / 60,
                      (int)(now - b->t0) % 60, etas, cur);
    }
  }
  b->o->status(b->o->cb_ctx, sb.buf);
  zlb_strbuf_release(&sb);
}

/* ---- identity and summary ------------------------------------------------------------------ */

static int write_identity(batch_t *b, int final, zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_jw_t jw;
  char now[32];
  int rc;
  zlb_jw_init(&jw, 1);
  zlb_jw_object_begin(&jw);
  zlb_jw_key_string(&jw, "schema", "zlbench.run_identity/1");
  zlb_jw_key_string(&jw, "kind", "batch");
  zlb_jw_key_object(&jw, "tool");
  zlb_jw_key_string(&jw, "name", "zlbench");
  zlb_jw_key_string(&jw, "version", ZLB_VERSION);
  zlb_jw_key_string(&jw, "git_commit", ZLB_GIT_COMMIT);
  zlb_jw_object_end(&jw);
  zlb_jw_key_array(&jw, "argv");
  for (int i = 0; i < o->argc; i++)
    zlb_jw_string(&jw, o->argv[i]);
  zlb_jw_array_end(&jw);
  {
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    zlb_jw_key_string(&jw, "host", host);
  }
  zlb_jw_key_string(&jw, "backend", b->backend);
  zlb_jw_key_string(&jw, "visibility_env", b->desc ? b->desc->visibility_env : NULL);
  zlb_jw_key_array(&jw, "devices");
  for (size_t i = 0; i < b->devices.n; i++)
    zlb_jw_string(&jw, b->devices.v[i]);
  zlb_jw_array_end(&jw);
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
  zlb_jw_key_array(&jw, "dtypes");
  for (size_t i = 0; i < o->dtypes.n; i++)
    zlb_jw_string(&jw, o->dtypes.v[i]);
  zlb_jw_array_end(&jw);
  zlb_jw_key_array(&jw, "run_args");
  for (size_t i = 0; i < o->run_args.n; i++)
    zlb_jw_string(&jw, o->run_args.v[i]);
  zlb_jw_array_end(&jw);
  zlb_jw_key_string(&jw, "replay_from", o->replay_from);
  zlb_jw_key_array(&jw, "operators");
  for (size_t i = 0; i < b->njobs; i++) {
    zlb_jw_object_begin(&jw);
    zlb_jw_key_string(&jw, "name", b->jobs[i].op);
    zlb_jw_key_string(&jw, "device", b->devices.v[b->jobs[i].slot]);
    zlb_jw_object_end(&jw);
  }
  zlb_jw_array_end(&jw);
  zlb_jw_key_string(&jw, "started", b->started);
  if (final) {
    zlb_iso8601_now(now, sizeof(now));
    zlb_jw_key_string(&jw, "finished", now);
    zlb_jw_key_int(&jw, "ok", b->res->ok);
    zlb_jw_key_int(&jw, "failed", b->res->failed);
    zlb_jw_key_int(&jw, "skipped", b->res->skipped);
    zlb_jw_key_int(&jw, "replayed", b->res->replayed);
    zlb_jw_key_bool(&jw, "interrupted", b->res->interrupted);
    zlb_jw_key_double(&jw, "seconds", zlb_now_s() - b->t0);
  } else {
    zlb_jw_key_null(&jw, "finished");
  }
  zlb_jw_object_end(&jw);
  zlb_path_join(&p, o->out_dir, "run_identity.json");
  rc = zlb_write_file_atomic(p.buf, jw.out.buf, jw.out.len, err);
  zlb_jw_release(&jw);
  zlb_strbuf_release(&p);
  return rc;
}

static const zlb__status_row_t *final_row(const batch_t *b, const char *op) {
  for (size_t i = 0; i < b->njobs; i++)
    if (!strcmp(b->jobs[i].op, op) && b->jobs[i].state == 2)
      return &b->jobs[i].row;
  for (size_t i = 0; i < b->nprev; i++)
    if (!strcmp(b->prev[i].op, op))
      return &b->prev[i];
  return NULL;
}

static int write_summary(batch_t *b, zlb_error_t *err) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int rc = 0;
  for (size_t i = 0; i < b->njobs; i++) {
    const job_t *j = &b->jobs[i];
    const zlb__status_row_t *row = final_row(b, j->op);
    size_t before = s.n;
    zlb_strbuf_reset(&p);
    op_dir(b, j->op, &p);
    if (row && zlb_is_dir(p.buf))
      zlb_summary_scan_dir(&s, p.buf, NULL);
    for (size_t k = before; k < s.n; k++) {
      zlb_strbuf_t src = ZLB_STRBUF_INIT;
      zlb_strbuf_addf(&src, "ops/%s/%s", j->op, s.rows[k].source);
      free(s.rows[k].source);
      s.rows[k].source = zlb_strbuf_detach(&src);
    }
    /* An operator that produced no rows still gets one line saying why. */
    if (row && s.n == before) {
      zlb_summary_row_t r;
      memset(&r, 0, sizeof(r));
      r.op = j->op;
      r.status = (char *)row->status;
      r.marker = (char *)row->signature;
      r.base_ms = r.cand_ms = r.speedup = r.gbps = r.tflops = r.pct_peak = NAN;
      zlb_summary_add(&s, &r);
    }
  }
  zlb_summary_sort(&s);
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, b->o->out_dir, "summary.csv");
  rc = zlb_summary_write_csv(&s, p.buf, err);
  zlb_summary_release(&s);
  zlb_strbuf_release(&p);
  return rc;
}

/* ---- the batch ---------------------------------------------------------------------------- */

void zlb_batch_opts_init(zlb_batch_opts_t *o) {
  memset(o, 0, sizeof(*o));
  o->timeout_s = 1800;
  o->grace_s = 5;
  o->retries = 2;
  o->shard_count = 1;
}

void zlb_batch_opts_release(zlb_batch_opts_t *o) {
  zlb_strvec_release(&o->devices);
  zlb_strvec_release(&o->ops);
  zlb_strvec_release(&o->dtypes);
  zlb_strvec_release(&o->run_args);
  zlb_strvec_release(&o->lib_args);
  zlb_strvec_release(&o->replay);
}

static void stop_all(batch_t *b) {
  for (size_t i = 0; i < b->njobs; i++)
    if (b->jobs[i].state == 1)
      zlb_child_stop(&b->jobs[i].child, b->o->grace_s);
}

int zlb_batch_run(const zlb_batch_opts_t *o, zlb_batch_result_t *res, zlb_error_t *err) {
  batch_t b;
  registered_t reg;
  zlb_strvec_t sel = ZLB_STRVEC_INIT;
  int ndev = 0, rc;
  double last_status = 0;

  memset(&b, 0, sizeof(b));
  memset(&reg, 0, sizeof(reg));
  memset(res, 0, sizeof(*res));
  b.o = o;
  b.res = res;
  b.t0 = zlb_now_s();
  zlb_iso8601_now(b.started, sizeof(b.started));
  zlb_strbuf_init(&b.status_path);

  /* Validate everything before anything runs or is written. */
  if ((rc = zlb_check_writable_dir(o->out_dir, err)))
    goto out;
  if ((rc = discover_devices(&b, &ndev, err)) || (rc = discover_ops(&b, &reg, err)) ||
      (rc = select_ops(&b, &reg, &sel, err)))
    goto out;
  if (o->devices.n) {
    for (size_t i = 0; i < o->devices.n; i++) {
      long d;
      if (zlb_parse_long(o->devices.v[i], &d) || d < 0 || d >= ndev) {
        rc = zlb_error_set(err, ZLB_EINVAL,
                           "device '%s' is not visible on backend '%s' (%d visible)",
                           o->devices.v[i], b.backend, ndev);
        goto out;
      }
      zlb_strvec_push(&b.devices, o->devices.v[i]);
    }
  } else {
    if (ndev < 1) {
      rc = zlb_error_set(err, ZLB_EUNAVAIL, "backend '%s' shows no device", b.backend);
      goto out;
    }
    for (int d = 0; d < ndev; d++)
      zlb_strvec_pushf(&b.devices, "%d", d);
  }
  zlb_path_join(&b.status_path, o->out_dir, "ops_status.csv");
  if ((rc = zlb__status_read(b.status_path.buf, &b.prev, &b.nprev, err)))
    goto out;

  b.jobs = zlb_xcalloc(sel.n + 1, sizeof(job_t));
  for (size_t i = 0; i < sel.n; i++) {
    job_t *j;
    long r = zlb_strvec_find(&reg.names, sel.v[i]);
    if (zlb_shard_host(sel.v[i], o->shard_count) != o->shard_index)
      continue;
    j = &b.jobs[b.njobs++];
    j->op = sel.v[i];
    j->slot = zlb_shard_device(sel.v[i], (int)b.devices.n);
    j->dtypes = r >= 0 ? reg.dtypes[r] : 0;
    j->level = 1;
    zlb_strlcpy(j->l1.label, "all", sizeof(j->l1.label));
    if (o->dtypes.n) {
      zlb_strbuf_t d = ZLB_STRBUF_INIT;
      zlb_strvec_join(&o->dtypes, ",", &d);
      zlb_strlcpy(j->l1.dtypes, d.buf, sizeof(j->l1.dtypes));
      zlb_strbuf_release(&d);
    }
    zlb_strlcpy(j->row.op, j->op, sizeof(j->row.op));
    zlb_strlcpy(j->row.backend, b.backend, sizeof(j->row.backend));
    zlb_strlcpy(j->row.device, b.devices.v[j->slot], sizeof(j->row.device));
  }
  res->total = (int)b.njobs;
  if ((rc = write_identity(&b, 0, err)))
    goto out;

  /* Resume and replay first: they cost nothing. */
  for (size_t i = 0; i < b.njobs; i++) {
    job_t *j = &b.jobs[i];
    if (!o->force && is_complete(&b, j->op)) {
      const zlb__status_row_t *prev = NULL;
      for (size_t k = 0; k < b.nprev && !prev; k++)
        if (!strcmp(b.prev[k].op, j->op))
          prev = &b.prev[k];
      if (prev)
        j->row = *prev;
      else
        zlb_strlcpy(j->row.status, "ok", sizeof(j->row.status));
      j->state = 2;
      res->skipped++;
      res->done++;
      if (accepted_ok(j->row.status) || !strcmp(j->row.status, "ok_capture_denied"))
        res->ok++;
      else
        res->failed++;
      continue;
    }
    j->t0 = zlb_now_s();
    if (try_replay(&b, j)) {
      res->replayed++;
      finish_job(&b, j, err);
    }
  }

  while (!(o->interrupted && *o->interrupted)) {
    int running = 0, pending = 0;
    for (size_t d = 0; d < b.devices.n; d++) {
      int busy = 0;
      for (size_t i = 0; i < b.njobs; i++)
        busy |= b.jobs[i].slot == (int)d && b.jobs[i].state == 1;
      if (busy)
        continue;
      for (size_t i = 0; i < b.njobs; i++) {
        job_t *j = &b.jobs[i];
        zlb_strbuf_t dir = ZLB_STRBUF_INIT;
        if (j->slot != (int)d || j->state != 0 || j->row.attempts)
          continue;
        /* A fresh start: nothing of an unfinished earlier attempt stays. */
        op_dir(&b, j->op, &dir);
        zlb__rmtree(dir.buf);
        zlb_strbuf_release(&dir);
        j->t0 = zlb_now_s();
        if ((rc = start_child(&b, j, err))) {
          stop_all(&b);
          goto out;
        }
        break;
      }
    }
    for (size_t i = 0; i < b.njobs; i++) {
      job_t *j = &b.jobs[i];
      if (j->state == 1 && zlb_child_poll(&j->child, o->grace_s))
        on_child_exit(&b, j, err);
      if (j->state == 1)
        running++;
      else if (j->state == 0)
        pending++;
    }
    if (!running && !pending)
      break;
    if (zlb_now_s() - last_status > 0.5) {
      status_block(&b);
      last_status = zlb_now_s();
    }
    zlb_sleep_ms(20);
  }
  if (o->interrupted && *o->interrupted) {
    stop_all(&b);
    res->interrupted = 1;
  }
  write_status(&b, err);
  write_summary(&b, err);
  write_identity(&b, 1, err);
  res->seconds = zlb_now_s() - b.t0;
  rc = res->interrupted ? zlb_error_set(err, ZLB_EINTR, "interrupted: %d of %d operators finished",
                                        res->done, res->total)
                        : 0;
out:
  for (size_t i = 0; i < b.njobs; i++)
    free(b.jobs[i].l2);
  free(b.jobs);
  free(b.prev);
  free(reg.dtypes);
  zlb_strvec_release(&reg.names);
  zlb_strvec_release(&sel);
  zlb_strvec_release(&b.devices);
  zlb_strbuf_release(&b.status_path);
  return rc;
}
