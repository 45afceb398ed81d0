/* One operator's job: start a `zlbench run` child per unit, then retry,
 * re-run with capture denied, fall back to one child per dtype, or finish;
 * and the reuse of finished results (--replay). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_int.h"
#include "zlbench/ops.h"
#include "zlbench/json.h"

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
  FILE *f = zlb_fopen_regular(path, NULL);
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
static void line(zlb__batch_t *b, zlb__job_t *j) {
  char text[1024];
  if (!b->o->line)
    return;
  snprintf(text, sizeof(text), "[%3d/%d] device %-3s %-20s %-16s attempts=%d level=%d %6.1fs%s%s\n",
           b->res->done, b->res->total, j->row.device, j->op, j->row.status, j->row.attempts,
           j->row.level, j->row.seconds, j->row.signature[0] ? "  " : "", j->row.signature);
  b->o->line(b->o->cb_ctx, text);
}

/* An attempt that failed and leads to another child: what ended it and
 * what comes next (the operator's own line follows when it is final). */
static void attempt_line(zlb__batch_t *b, zlb__job_t *j, const zlb__unit_t *u, const char *sig,
                         const char *next) {
  char text[1024];
  if (!b->o->line)
    return;
  snprintf(text, sizeof(text), "          device %-3s %-20s attempt %d (%s) after %.1fs: %.100s%s; %s\n",
           j->row.device, j->op, u->runs, u->dtypes[0] ? u->dtypes : "all dtypes",
           zlb_now_s() - j->child.started, sig, strlen(sig) > 100 ? "..." : "", next);
  b->o->line(b->o->cb_ctx, text);
}

int zlb__status_is_ok(const char *status) {
  return !strcmp(status, "ok") || !strcmp(status, "replayed") ||
         !strcmp(status, "ok_capture_denied");
}

void zlb__finish_job(zlb__batch_t *b, zlb__job_t *j) {
  zlb_error_t e = ZLB_ERROR_INIT;
  j->row.seconds = zlb_now_s() - j->t0;
  if (j->alone_used) {
    zlb_strbuf_t note = ZLB_STRBUF_INIT;
    zlb_strbuf_addf(&note, "ran alone on its device after running out of memory beside other "
                    "children%s%s", j->row.note[0] ? "; " : "", j->row.note);
    zlb_strlcpy(j->row.note, note.buf, sizeof(j->row.note));
    zlb_strbuf_release(&note);
  }
  /* The results are complete (and, staged, in place) before the status
   * row says so; otherwise the operator is not finished and the batch
   * stops (a staged one keeps its earlier results and row). */
  if (zlb__batch_write_complete(b, j, &e) || (j->staged && zlb__unstage(b, j, &e))) {
    zlb__batch_stop(b, &e);
    return;
  }
  j->state = ZLB__JOB_DONE;
  b->res->done++;
  if (zlb__status_is_ok(j->row.status))
    b->res->ok++;
  else
    b->res->failed++;
  if (zlb__batch_write_status(b, &e))
    zlb__batch_stop(b, &e);
  line(b, j);
}
/* ---- children ---------------------------------------------------------------------------- */

static zlb__unit_t *current_unit(zlb__job_t *j) { return j->level == 1 ? &j->l1 : &j->l2[j->cur]; }

/* Pin a process to its device through the backend's visibility keys. A
 * backend without one has a single device here (zlb_batch_run refuses
 * several), addressed by its ordinal. Under a grant (Slurm sets
 * CUDA_VISIBLE_DEVICES=2,3 for a job) ordinal d is the grant's entry d:
 * setting d itself would leave the grant for devices of other jobs. */
void zlb__push_device_env(const zlb__batch_t *b, int slot, zlb_strvec_t *env) {
  if (b->vis_env[0]) {
    const char *v = zlb__device_value(b, b->devices.v[slot]);
    zlb_strvec_pushf(env, "%s=%s", b->vis_env, v);
    for (size_t i = 0; i < b->vis_also.n; i++)
      zlb_strvec_pushf(env, "%s=%s", b->vis_also.v[i], v);
  }
}

static int running_on(const zlb__batch_t *b, int slot);

int zlb__start_child(zlb__batch_t *b, zlb__job_t *j, zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  zlb__unit_t *u = current_unit(j);
  zlb_strvec_t argv = ZLB_STRVEC_INIT, env = ZLB_STRVEC_INIT;
  zlb_strbuf_t dir = ZLB_STRBUF_INIT, errpath = ZLB_STRBUF_INIT, outpath = ZLB_STRBUF_INIT;
  int rc, want_stdout = 0;

  zlb__work_dir(b, j, &dir);
  zlb_strbuf_addf(&dir, "/attempts/%d-%s", ++j->seq, u->label);
  if ((rc = zlb_mkdirs(dir.buf, err)))
    goto out;
  zlb_strlcpy(j->attempt_dir, dir.buf, sizeof(j->attempt_dir));
  zlb_path_join(&errpath, dir.buf, "stderr.log");
  zlb_path_join(&outpath, dir.buf, "stdout.log");
  if ((rc = b->prov->child(b, j, u, &argv, &env, &want_stdout, err)))
    goto out;

  zlb__push_device_env(b, j->slot, &env);
  zlb_strvec_push(&env, "NO_COLOR=1");
  /* Children sharing a device say so in their identities (a caliber). */
  zlb_strvec_pushf(&env, "ZL_CHILDREN_PER_DEVICE=%d", j->alone == 2 ? 1 : b->width[j->slot].now);
  /* When the child was started, for its own account of where its seconds
   * went (the plugin's timeline: the fork-server client's start). */
  zlb_strvec_pushf(&env, "ZL_SPAWN_AT=%.3f", zlb_epoch_s());
  rc = zlb_spawn(argv.v, &env, want_stdout ? outpath.buf : NULL, errpath.buf, o->timeout_s,
                 &j->child, err);
  if (!rc) {
    u->runs++;
    j->row.attempts++;
    j->state = ZLB__JOB_RUNNING;
    j->epoch = b->width[j->slot].epoch;
    /* Which children share the device from now on (they share its memory),
     * and the most that ran together during each. */
    j->shared = 0;
    j->peak = running_on(b, j->slot);
    for (size_t i = 0; i < b->njobs; i++) {
      zlb__job_t *k = &b->jobs[i];
      if (k != j && k->slot == j->slot && k->state == ZLB__JOB_RUNNING) {
        k->shared = j->shared = 1;
        k->peak = j->peak > k->peak ? j->peak : k->peak;
      }
    }
  }
out:
  zlb_strvec_release(&argv);
  zlb_strvec_release(&env);
  zlb_strbuf_release(&dir);
  zlb_strbuf_release(&errpath);
  zlb_strbuf_release(&outpath);
  return rc;
}

/* The dtypes of level 2: one child each. */
static uint32_t level2_dtypes(const zlb__batch_t *b, const zlb__job_t *j) {
  uint32_t want = 0;
  if (b->o->dtypes.n) {
    for (size_t i = 0; i < b->o->dtypes.n; i++) {
      zlb_dtype_t d;
      if (!zlb_dtype_parse(b->o->dtypes.v[i], &d))
        want |= ZLB_DT_BIT(d);
    }
    if (b->prov->dtypes_exact && j->dtypes)
      want &= j->dtypes;
  } else {
    want = j->dtypes & ZLB_DT_FLOATS;
    if (!want)
      want = j->dtypes;
  }
  return want;
}

/* Whether level 2 would run more than one child. */
static int splits(const zlb__batch_t *b, const zlb__job_t *j) {
  uint32_t want = level2_dtypes(b, j);
  return (want & (want - 1)) != 0;
}

static void begin_level2(zlb__batch_t *b, zlb__job_t *j) {
  uint32_t want = level2_dtypes(b, j);
  j->level = 2;
  j->cur = 0;
  j->nl2 = 0;
  j->l2 = zlb_xcalloc(ZLB_DT_COUNT, sizeof(zlb__unit_t));
  for (int d = 0; d < ZLB_DT_COUNT; d++)
    if (want & ZLB_DT_BIT(d)) {
      zlb__unit_t *u = &j->l2[j->nl2++];
      zlb_strlcpy(u->label, zlb_dtype_name((zlb_dtype_t)d), sizeof(u->label));
      zlb_strlcpy(u->dtypes, zlb_dtype_name((zlb_dtype_t)d), sizeof(u->dtypes));
    }
}

/* ops/<op>/<sub>: a level-2 dtype's results (sub = its label), or the
 * attempts. */
static void op_subdir(const zlb__batch_t *b, const zlb__job_t *j, const char *sub,
                      zlb_strbuf_t *out) {
  zlb_strbuf_reset(out);
  zlb__work_dir(b, j, out);
  zlb_strbuf_addf(out, "/%s", sub);
}

/* Move an accepted attempt to its final place: ops/<op>/ for level 1,
 * ops/<op>/<dtype>/ for level 2. */
static int accept_attempt(zlb__batch_t *b, zlb__job_t *j, zlb__unit_t *u) {
  zlb_strbuf_t dst = ZLB_STRBUF_INIT;
  zlb_error_t e = ZLB_ERROR_INIT;
  int rc = 0;
  if (j->level == 2)
    op_subdir(b, j, u->label, &dst);
  else
    zlb__work_dir(b, j, &dst);
  if (zlb__move_contents(j->attempt_dir, dst.buf)) {
    /* The attempt folder is all there is of these results: keep it. */
    zlb_error_set(&e, ZLB_EIO,
                  "cannot move the results of '%s' from '%s' to '%s': %s; the attempt folder "
                  "is kept; free space or fix permissions there and run the batch again",
                  j->op, j->attempt_dir, dst.buf, strerror(errno));
    zlb__batch_stop(b, &e);
    rc = -1;
    goto out;
  }
  zlb__read_timer(dst.buf, u->timer, sizeof(u->timer));
  zlb__rmtree(j->attempt_dir);
out:
  zlb_strbuf_release(&dst);
  return rc;
}

static void conclude(zlb__batch_t *b, zlb__job_t *j) {
  if (j->level == 1) {
    zlb__unit_t *u = &j->l1;
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
    const zlb__unit_t *first_bad = NULL;
    j->row.level = 2;
    for (int i = 0; i < j->nl2; i++) {
      zlb__unit_t *u = &j->l2[i];
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
  zlb__finish_job(b, j);
}

/* Start the current unit's next child. A child that cannot even be
 * started fails its unit, and the state machine moves on; an attempt
 * folder that cannot be created is the output folder failing, which stops
 * the batch with the job left queued (a rerun resumes it). */
static void launch(zlb__batch_t *b, zlb__job_t *j) {
  zlb_error_t e = ZLB_ERROR_INIT;
  while (zlb__start_child(b, j, &e)) {
    zlb__unit_t *u = current_unit(j);
    if (e.code == ZLB_EIO) {
      zlb__batch_stop(b, &e);
      return;
    }
    zlb_strlcpy(u->status, "spawn_error", sizeof(u->status));
    zlb_strlcpy(u->signature, e.msg, sizeof(u->signature));
    if (j->level == 2 && ++j->cur < j->nl2)
      continue;
    conclude(b, j);
    return;
  }
}

void zlb__launch_alone(zlb__batch_t *b, zlb__job_t *j) {
  j->alone = 2;
  launch(b, j);
}

void zlb__launch_deferred(zlb__batch_t *b, zlb__job_t *j) {
  j->deferred = 0;
  launch(b, j);
}

/* An operator that has not started yet (a resumed one included). */
static int fresh(const zlb__job_t *k) {
  return k->state == ZLB__JOB_QUEUED && !k->row.attempts && !k->deferred && !k->alone;
}

int zlb__device_kept(const zlb__batch_t *b, int slot) {
  int waiting = 0;
  for (size_t i = 0; i < b->njobs; i++) {
    const zlb__job_t *k = &b->jobs[i];
    if (k->slot != slot)
      continue;
    if (k->alone == 2 && k->state == ZLB__JOB_RUNNING)
      return 1;
    waiting |= k->alone == 1 && k->state == ZLB__JOB_QUEUED;
  }
  for (size_t i = 0; waiting && i < b->njobs; i++)
    if (b->jobs[i].slot == slot && fresh(&b->jobs[i]))
      return 0;
  return waiting;
}

static int running_on(const zlb__batch_t *b, int slot) {
  int n = 0;
  for (size_t i = 0; i < b->njobs; i++)
    n += b->jobs[i].slot == slot && b->jobs[i].state == ZLB__JOB_RUNNING;
  return n;
}

static int deferred_on(const zlb__batch_t *b, int slot) {
  for (size_t i = 0; i < b->njobs; i++)
    if (b->jobs[i].slot == slot && b->jobs[i].state == ZLB__JOB_QUEUED && b->jobs[i].deferred)
      return 1;
  return 0;
}

/* Child j ran out of memory beside others: its device takes half as many
 * children at a time as ran together while it did (j included), at least
 * 1, where j started at the width in force now; children started before
 * the last narrowing ran out of memory at the wider one, and narrow
 * nothing more. */
static void narrow(zlb__batch_t *b, const zlb__job_t *j) {
  zlb__width_t *w = &b->width[j->slot];
  int ran = j->peak, now;
  char text[256];
  if (j->epoch != w->epoch)
    return;
  now = (ran < w->now ? ran : w->now) / 2;
  if (now < 1)
    now = 1;
  if (now >= w->now)
    return;
  w->now = now;
  w->least = now < w->least ? now : w->least;
  w->clean = 0;
  w->epoch++;
  if (b->o->line) {
    snprintf(text, sizeof(text),
             "          device %-3s out of memory with %d children on it: at most %d at a time "
             "from now (--jobs-per-device %d)\n",
             j->row.device, ran, now, b->per_device);
    b->o->line(b->o->cb_ctx, text);
  }
}

/* Child j ended without running out of memory: after as many such ends as
 * its device's width (of children started since its last narrowing), one
 * more child at a time again, up to --jobs-per-device. */
static void widen(zlb__batch_t *b, const zlb__job_t *j) {
  zlb__width_t *w = &b->width[j->slot];
  char text[256];
  if (j->epoch != w->epoch || w->now >= b->per_device || ++w->clean < w->now)
    return;
  w->now++;
  w->clean = 0;
  if (b->o->line) {
    snprintf(text, sizeof(text),
             "          device %-3s %d %s without running out of memory: at most %d at a "
             "time from now\n",
             j->row.device, w->now - 1, w->now - 1 == 1 ? "child ended" : "children ended",
             w->now);
    b->o->line(b->o->cb_ctx, text);
  }
}

/* j's next child (a retry, the next dtype, a rerun with capture denied):
 * at once, unless the device is kept for a rerun alone or already runs as
 * many children as its width; then the scheduler starts it once that
 * rerun ended or a child did. Started at once, chains of
 * retries and dtypes could keep the device from emptying for as long as
 * they last (a FlagGems screen: twelve children, each a chain of dtypes
 * that time out). */
static void next_child(zlb__batch_t *b, zlb__job_t *j) {
  if (zlb__device_kept(b, j->slot)) {
    j->deferred = 1;
    return;
  }
  if (running_on(b, j->slot) >= b->width[j->slot].now || deferred_on(b, j->slot)) {
    j->deferred = 2; /* after those that waited before it */
    return;
  }
  launch(b, j);
}

/* Does a child's first error line say the device ran out of memory? The
 * words of CUDA, torch, Triton, HIP, MUSA and CANN runtimes, matched
 * without case ("OutOfMemoryError", "hipErrorOutOfMemory",
 * "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation", ...). */
static int out_of_memory(const char *sig) {
  static const char *const keys[] = {"out of memory", "OutOfMemory", "OUT_OF_MEMORY",
                                     "MemoryAllocation"};
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
    if (strcasestr(sig, keys[i]))
      return 1;
  return 0;
}

/* A child ended: retry, advance, fall back a level, or finish. */
void zlb__on_child_exit(zlb__batch_t *b, zlb__job_t *j) {
  zlb__unit_t *u = current_unit(j);
  zlb_exit_t exv = j->child.exit;
  const zlb_exit_t *ex = &exv;
  char sig[320], line1[256], what[64];
  zlb__verdict_t v;
  const char *st;
  int accepted;

  int oom, beside, was_alone = j->alone == 2;

  if (j->alone == 2)
    j->alone = 0; /* its rerun alone ended: what follows shares the device again */
  /* The provider says what the end means in zlbench's exit codes. */
  b->prov->classify(b, j, &j->child.exit, &v);
  if (!ex->timed_out && !ex->signaled)
    exv.code = v.code;
  st = v.status[0] ? v.status : status_of_exit(ex);
  u->whole = v.whole;
  accepted = !ex->timed_out && !ex->signaled && !v.status[0] &&
             (ex->code == ZLB_EXIT_OK || ex->code == ZLB_EXIT_FAILED) &&
             run_finished(j->attempt_dir);

  j->state = ZLB__JOB_QUEUED;
  zlb_exit_describe(&j->child.exit, what, sizeof(what));
  if (v.line[0]) {
    zlb_strlcpy(line1, v.line, sizeof(line1));
  } else {
    zlb_strbuf_t ep = ZLB_STRBUF_INIT;
    zlb_path_join(&ep, j->attempt_dir, "stderr.log");
    first_error_line(ep.buf, line1, sizeof(line1));
    zlb_strbuf_release(&ep);
  }
  {
    /* The child's words (its stderr, or pytest's line through the
     * provider) reach the terminal, ops_status.csv and .progress: control
     * characters and escape sequences as visible escapes. */
    zlb_strbuf_t shown = ZLB_STRBUF_INIT;
    zlb_strlcpy(line1, zlb_printable(&shown, line1), sizeof(line1));
    zlb_strbuf_release(&shown);
  }
  snprintf(sig, sizeof(sig), "%s%s%s", what, line1[0] && !ex->timed_out ? ": " : "",
           ex->timed_out ? "" : line1);

  if (!ex->timed_out && !ex->signaled && ex->code == ZLB_EXIT_OUTPUT) {
    /* The child could not write its results: the output folder is failing
     * (full, read-only), not the operator. Retrying or splitting by dtype
     * would only fail again and call the operator broken. */
    zlb_error_t e = ZLB_ERROR_INIT;
    zlb_error_set(&e, ZLB_EIO,
                  "operator '%s' could not write its results into '%s' (%s); free space or "
                  "fix permissions in the output folder and run the batch again to resume",
                  j->op, j->attempt_dir, line1[0] ? line1 : what);
    zlb__batch_stop(b, &e);
    return;
  }
  oom = out_of_memory(sig);
  beside = j->shared && b->per_device > 1 && !ex->timed_out && !ex->signaled &&
           (!accepted || ex->code == ZLB_EXIT_FAILED) && oom;
  /* Out of memory beside others narrows the device, a rerun alone spent
   * or not; a clean end (not of a rerun alone, which says nothing of the
   * width) counts towards widening it again. */
  if (beside)
    narrow(b, j);
  else if (!oom && !was_alone)
    widen(b, j);
  if (beside && !j->alone_used) {
    /* Out of memory while other children used the same device (a failed
     * child, or rows that failed): maybe theirs, not the operator's. Once
     * more, alone on the device (the scheduler waits for it to empty and
     * starts nothing beside it); the user's --retries are not spent. */
    j->alone = 1;
    j->alone_used = 1;
    attempt_line(b, j, u, sig, "other children shared its device: again, alone on it");
    return;
  }
  if (accepted) {
    u->accepted = 1;
    zlb_strlcpy(u->status, st, sizeof(u->status));
    /* Rows that failed keep the child's first error line as the reason
     * (FlagGems: pytest's "E   ..." line of the failed test). */
    if (ex->code == ZLB_EXIT_FAILED)
      zlb_strlcpy(u->signature, sig, sizeof(u->signature));
    else
      u->signature[0] = '\0';
    if (accept_attempt(b, j, u))
      return;
  } else if (ex->code == ZLB_EXIT_POISONED && !ex->signaled && !ex->timed_out && !u->deny) {
    /* BENCHMARK_CAPTURE_POISONED: the operator is capture-incompatible, not
     * broken. Once more, in a fresh process, with capture denied. */
    u->deny = 1;
    zlb_strlcpy(u->signature, sig, sizeof(u->signature));
    attempt_line(b, j, u, sig, "again with capture denied");
    next_child(b, j);
    return;
  } else {
    int deterministic = !strcmp(u->signature, sig);
    int final = v.final || (ex->code == ZLB_EXIT_POISONED && u->deny);
    if (!ex->timed_out && !ex->signaled && ex->code <= ZLB_EXIT_FAILED && !v.status[0])
      st = "failed"; /* exited without finishing its results */
    u->attempts++;
    zlb_strlcpy(u->status, st, sizeof(u->status));
    zlb_strlcpy(u->signature, sig, sizeof(u->signature));
    /* An all-dtypes child out of time is split by dtype at once: each
     * dtype's child gets the whole timeout, where a retry of the same
     * child would most likely spend another one (FlagGems operators that
     * autotune every dtype in every process: 3 x 41 s of tuning). */
    int to_level2 = j->level == 1 && !v.whole && splits(b, j);
    int split = to_level2 && ex->timed_out;
    /* Transient failures are retried; the same signature twice means
     * deterministic, and retrying again would only cost time. */
    if (!final && !deterministic && !split && u->attempts <= b->o->retries) {
      attempt_line(b, j, u, sig, "retrying");
      next_child(b, j);
      return;
    }
    if (to_level2)
      attempt_line(b, j, u, sig, "one child per dtype next");
  }

  if (j->level == 1) {
    /* No rows from the all-dtypes child: one child per dtype, so one bad
     * dtype loses only itself (pointless for a single dtype). */
    if (!u->accepted && !u->whole) {
      begin_level2(b, j);
      if (j->nl2 > 1) {
        next_child(b, j);
        return;
      }
      j->level = 1;
    }
    conclude(b, j);
    return;
  }
  if (++j->cur < j->nl2) {
    /* A dtype that ended without rows says so before the next starts:
     * otherwise its last child's end shows only in the operator's row. */
    if (!u->accepted) {
      char next[64];
      snprintf(next, sizeof(next), "%s next", j->l2[j->cur].label);
      attempt_line(b, j, u, u->signature[0] ? u->signature : u->status, next);
    }
    next_child(b, j);
    return;
  }
  conclude(b, j);
}

/* ---- replay and resume --------------------------------------------------------------- */

/* An empty staging folder for j's results (ops/.stage-<op>), in `dst`:
 * 0, or -1 with nothing staged. */
static int stage_fresh(zlb__batch_t *b, zlb__job_t *j, zlb_strbuf_t *dst) {
  j->staged = 1;
  zlb__work_dir(b, j, dst);
  if (zlb__rmtree(dst->buf) || zlb_mkdirs(dst->buf, NULL)) {
    j->staged = 0;
    return -1;
  }
  return 0;
}

int zlb__try_replay(zlb__batch_t *b, zlb__job_t *j) {
  const zlb_batch_opts_t *o = b->o;
  zlb_strbuf_t src = ZLB_STRBUF_INIT, mark = ZLB_STRBUF_INIT, dst = ZLB_STRBUF_INIT;
  char *text = NULL;
  zlb_json_t *done = NULL;
  int used = 0, from_ops = 0;
  size_t len = strlen(j->op);
  for (size_t i = 0; i < o->replay.n; i++)
    if (!strncmp(o->replay.v[i], j->op, len) && o->replay.v[i][len] == '=')
      zlb_strbuf_addstr(&src, o->replay.v[i] + len + 1);
  if (!src.len && o->replay_from) {
    zlb_strbuf_addf(&src, "%s/ops/%s", o->replay_from, j->op);
    from_ops = 1;
  }
  if (!src.len)
    goto out;
  {
    /* The source is another batch's folder: only a real folder of
     * regular files is reused. A link (the operator's folder, its
     * results.json) is refused and said so, and the operator is not
     * counted replayed: its rows would be missing or someone else's. */
    zlb_strbuf_t bad = ZLB_STRBUF_INIT;
    struct stat st;
    int t = lstat(src.buf, &st) == 0 ? zlb__tree_check(src.buf, &bad) : 0;
    if (from_ops) {
      /* FROM/ops itself a link: everything under it is someone else's. */
      zlb_strbuf_t ops = ZLB_STRBUF_INIT;
      zlb_strbuf_addf(&ops, "%s/ops", o->replay_from);
      if (lstat(ops.buf, &st) == 0 && !S_ISDIR(st.st_mode)) {
        zlb_strbuf_reset(&bad);
        zlb_strbuf_addstr(&bad, ops.buf);
        t = 1;
      }
      zlb_strbuf_release(&ops);
    }
    if (t) {
      char msg[1400];
      if (t < 0)
        zlb_strbuf_addf(&bad, "%s (%s)", src.buf, strerror(errno));
      zlb_strlcpy(j->row.status, "replay_refused", sizeof(j->row.status));
      snprintf(j->row.signature, sizeof(j->row.signature),
               "'%.250s' is a symbolic link or special file", bad.buf);
      snprintf(j->row.note, sizeof(j->row.note), "replay from %.250s refused", src.buf);
      j->row.level = 1;
      snprintf(msg, sizeof(msg),
               "warning: %s: a symbolic link or special file in the results to replay: "
               "'%s' is refused, not replayed\n",
               bad.buf, j->op);
      if (b->o->line)
        b->o->line(b->o->cb_ctx, msg);
      zlb_strbuf_release(&bad);
      /* Its outcome is this refusal: an empty staged folder with the
       * marker takes the place of ops/<op>. */
      if (stage_fresh(b, j, &dst) == 0)
        used = 1;
      goto out;
    }
    zlb_strbuf_release(&bad);
  }
  zlb_path_join(&mark, src.buf, ".complete");
  /* Only finished results are reused; anything else is measured again. */
  if (zlb_read_file(mark.buf, &text, NULL, NULL) ||
      zlb_json_parse(text, strlen(text), mark.buf, &done, NULL))
    goto out;
  {
    const char *orig = zlb_json_get_string(done, "status", "");
    if (!zlb__status_known(orig) || !strcmp(orig, "replay_refused"))
      goto out; /* not a status a batch writes: measured again */
  }
  /* Built beside the operator's folder, put in its place when complete:
   * its earlier results stay until then. */
  if (stage_fresh(b, j, &dst))
    goto out;
  if (zlb__copytree(src.buf, dst.buf, "attempts")) {
    zlb__rmtree(dst.buf);
    j->staged = 0;
    goto out;
  }
  {
    /* "replayed" for reused successes; a reused failure stays visible as
     * one ("replayed_timeout"). */
    const char *orig = zlb_json_get_string(done, "status", "unknown");
    if (zlb__status_is_ok(orig))
      zlb_strlcpy(j->row.status, "replayed", sizeof(j->row.status));
    else if (!strncmp(orig, "replayed_", 9)) /* a reused failure reused again */
      zlb_strlcpy(j->row.status, orig, sizeof(j->row.status));
    else
      snprintf(j->row.status, sizeof(j->row.status), "replayed_%s", orig);
    snprintf(j->row.note, sizeof(j->row.note), "from %s (status %s there)", src.buf, orig);
  }
  j->row.level = (int)zlb_json_get_number(done, "dtype_level", 1);
  zlb_strlcpy(j->row.failed_dtypes, zlb_json_get_string(done, "failed_dtypes", ""),
              sizeof(j->row.failed_dtypes));
  zlb__read_timer(dst.buf, j->row.timer, sizeof(j->row.timer));
  used = 1;
out:
  zlb_json_free(done);
  free(text);
  zlb_strbuf_release(&src);
  zlb_strbuf_release(&mark);
  zlb_strbuf_release(&dst);
  return used;
}


/* ---- an interrupted operator's progress ------------------------------------------------ */

/* An operator stopped at level 2 (its all-dtypes child failed, one child
 * per dtype runs) leaves ops/<op>/.progress: what its finished dtypes did.
 * A resume runs only the dtypes still to do. Without it, an operator whose
 * all-dtypes child times out spends that limit again on every call and
 * may never finish within one (FlagGems' addmv and conv operators,
 * autotuning every dtype in every process).
 *
 * The file also keeps what the stopped unit (the dtype being run, or the
 * all-dtypes child at level 1) had counted: its attempts against
 * --retries, the last one's status and signature, and whether capture was
 * denied. Without them a unit whose every child times out, in a call too
 * short for its retry, starts afresh in every call and never gets a
 * status (FlagGems' mm float32: 500 s of autotuning a child, one attempt a
 * call). The stopped child itself counts nothing: it was interrupted, not
 * judged. An operator at level 1 keeps a file only when its unit counted
 * something. */
#define PROGRESS_FILE ".progress"
#define PROGRESS_SCHEMA "zlbench-progress-1"
#define PROGRESS_MAX_ATTEMPTS 1000000

int zlb__progress_worth(const zlb__job_t *j) {
  if (j->level == 2)
    return j->l2 && j->cur < j->nl2;
  return j->l1.attempts > 0 || j->l1.deny;
}

void zlb__progress_where(const zlb__job_t *j, char *buf, size_t len) {
  const zlb__unit_t *u = j->level == 2 ? &j->l2[j->cur] : &j->l1;
  char n[96] = "";
  if (u->attempts || u->deny)
    snprintf(n, sizeof(n), "%d counted attempt%s kept%s", u->attempts, u->attempts == 1 ? "" : "s",
             u->deny ? ", capture denied" : "");
  if (j->level == 2)
    snprintf(buf, len, "from %s%s%s%s", u->label, n[0] ? " (" : "", n, n[0] ? ")" : "");
  else
    snprintf(buf, len, "with %s", n);
}


static void progress_path(const zlb__batch_t *b, const zlb__job_t *j, zlb_strbuf_t *out) {
  zlb__work_dir(b, j, out);
  zlb_strbuf_addstr(out, "/" PROGRESS_FILE);
}

static void unit_json(zlb_jw_t *jw, const zlb__unit_t *u) {
  zlb_jw_object_begin(jw);
  zlb_jw_key_string(jw, "label", u->label);
  zlb_jw_key_bool(jw, "accepted", u->accepted);
  zlb_jw_key_string(jw, "status", u->status);
  zlb_jw_key_string(jw, "signature", u->signature);
  zlb_jw_key_string(jw, "timer", u->timer);
  zlb_jw_object_end(jw);
}

int zlb__save_progress(const zlb__batch_t *b, const zlb__job_t *j, zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_jw_t jw;
  int rc;
  const zlb__unit_t *u;
  if (!zlb__progress_worth(j))
    return 0;
  u = j->level == 2 ? &j->l2[j->cur] : &j->l1;
  zlb_jw_init(&jw, 1);
  zlb_jw_object_begin(&jw);
  zlb_jw_key_string(&jw, "schema", PROGRESS_SCHEMA);
  zlb_jw_key_string(&jw, "operator", j->op);
  zlb_jw_key_int(&jw, "level", j->level);
  zlb_jw_key_double(&jw, "seconds", zlb_now_s() - j->t0);
  zlb_jw_key_int(&jw, "attempts", j->row.attempts);
  zlb_jw_key_int(&jw, "seq", j->seq);
  zlb_jw_key_string(&jw, "all_dtypes_status", j->l1.status);
  zlb_jw_key_string(&jw, "all_dtypes_signature", j->l1.signature);
  /* The dtypes finished before the one that was stopped. */
  zlb_jw_key_array(&jw, "done");
  for (int i = 0; j->level == 2 && i < j->cur && i < j->nl2; i++)
    unit_json(&jw, &j->l2[i]);
  zlb_jw_array_end(&jw);
  zlb_jw_key_array(&jw, "dtypes");
  for (int i = 0; j->level == 2 && i < j->nl2; i++)
    zlb_jw_string(&jw, j->l2[i].label);
  zlb_jw_array_end(&jw);
  /* The stopped unit's count (see above). */
  zlb_jw_key_object(&jw, "current");
  zlb_jw_key_string(&jw, "label", u->label);
  zlb_jw_key_int(&jw, "attempts", u->attempts);
  zlb_jw_key_string(&jw, "status", u->status);
  zlb_jw_key_string(&jw, "signature", u->signature);
  zlb_jw_key_bool(&jw, "deny", u->deny);
  zlb_jw_object_end(&jw);
  zlb_jw_object_end(&jw);
  progress_path(b, j, &p);
  rc = zlb_write_file_atomic(p.buf, jw.out.buf, jw.out.len, err);
  zlb_jw_release(&jw);
  zlb_strbuf_release(&p);
  return rc;
}

/* A bounded string member copied into dst; 0, or -1 when absent, not a
 * string, or too long for dst. */
static int copy_member(const zlb_json_t *o, const char *key, char *dst, size_t len) {
  const zlb_json_t *v = zlb_json_get(o, key);
  if (!v || v->kind != ZLB_JSON_STRING || strlen(v->string) >= len)
    return -1;
  zlb_strlcpy(dst, v->string, len);
  return 0;
}

/* The stopped unit's count from `cur` (a .progress "current") into u,
 * whose label it must name; 0, or -1 with u unchanged. */
static int apply_current(const zlb_json_t *cur, double total, zlb__unit_t *u) {
  zlb__unit_t t = *u;
  const zlb_json_t *deny = zlb_json_get(cur, "deny");
  double n = zlb_json_get_number(cur, "attempts", -1);
  char label[32];
  if (cur->kind != ZLB_JSON_OBJECT || copy_member(cur, "label", label, sizeof(label)) ||
      strcmp(label, u->label) || !(n >= 0 && n <= total && n == (long)n) || !deny ||
      deny->kind != ZLB_JSON_BOOL || copy_member(cur, "status", t.status, sizeof(t.status)) ||
      copy_member(cur, "signature", t.signature, sizeof(t.signature)))
    return -1;
  t.attempts = (int)n;
  t.runs = t.attempts; /* so that the next child's line numbers on */
  t.deny = deny->boolean;
  *u = t;
  return 0;
}

/* The saved progress checked against this batch's plan for the job; 0 and
 * the job set up to go on, or -1 with `why` (then nothing was changed that
 * a fresh start does not reset). A file without "level" or "current" (an
 * earlier version's) is a level-2 one with nothing counted. */
static int apply_progress(zlb__batch_t *b, zlb__job_t *j, const zlb_json_t *doc, char *why,
                          size_t len) {
  const zlb_json_t *done = zlb_json_get(doc, "done"), *dts = zlb_json_get(doc, "dtypes");
  const zlb_json_t *cur = zlb_json_get(doc, "current");
  double secs = zlb_json_get_number(doc, "seconds", -1);
  double att = zlb_json_get_number(doc, "attempts", -1), seq = zlb_json_get_number(doc, "seq", -1);
  double level = zlb_json_get_number(doc, "level", 2);
  zlb__unit_t l1 = j->l1;
  if (doc->kind != ZLB_JSON_OBJECT ||
      strcmp(zlb_json_get_string(doc, "schema", ""), PROGRESS_SCHEMA) ||
      strcmp(zlb_json_get_string(doc, "operator", ""), j->op))
    return snprintf(why, len, "not a progress file of this operator"), -1;
  if (!(secs >= 0 && secs < 1e7) ||
      !(att >= 0 && att <= PROGRESS_MAX_ATTEMPTS && att == (long)att) ||
      !(seq >= 0 && seq <= PROGRESS_MAX_ATTEMPTS && seq == (long)seq))
    return snprintf(why, len, "seconds, attempts or seq out of range"), -1;
  if (level != 1 && level != 2)
    return snprintf(why, len, "of a level neither 1 nor 2"), -1;
  if (copy_member(doc, "all_dtypes_status", l1.status, sizeof(l1.status)) ||
      copy_member(doc, "all_dtypes_signature", l1.signature, sizeof(l1.signature)))
    return snprintf(why, len, "no all-dtypes status or signature"), -1;
  if (level == 1) {
    /* Only the all-dtypes child's count: no dtype was run on its own. */
    if (!dts || dts->kind != ZLB_JSON_ARRAY || dts->n || !done ||
        done->kind != ZLB_JSON_ARRAY || done->n)
      return snprintf(why, len, "a level-1 file that lists dtypes"), -1;
    if (!cur || apply_current(cur, att, &l1))
      return snprintf(why, len, "a level-1 file without a valid 'current'"), -1;
    j->l1 = l1;
    goto kept;
  }
  begin_level2(b, j);
  if (!dts || dts->kind != ZLB_JSON_ARRAY || dts->n != (size_t)j->nl2 || !done ||
      done->kind != ZLB_JSON_ARRAY || done->n >= (size_t)j->nl2)
    goto other_plan;
  for (size_t i = 0; i < dts->n; i++)
    if (dts->items[i]->kind != ZLB_JSON_STRING || strcmp(dts->items[i]->string, j->l2[i].label))
      goto other_plan;
  for (size_t i = 0; i < done->n; i++) {
    zlb__unit_t *u = &j->l2[i];
    const zlb_json_t *d = done->items[i], *acc = zlb_json_get(d, "accepted");
    char label[32];
    if (d->kind != ZLB_JSON_OBJECT || copy_member(d, "label", label, sizeof(label)) ||
        strcmp(label, u->label) || !acc || acc->kind != ZLB_JSON_BOOL ||
        copy_member(d, "status", u->status, sizeof(u->status)) || !u->status[0] ||
        copy_member(d, "signature", u->signature, sizeof(u->signature)) ||
        copy_member(d, "timer", u->timer, sizeof(u->timer))) {
      snprintf(why, len, "entry %zu of 'done' is malformed", i + 1);
      goto fail;
    }
    u->accepted = acc->boolean;
    if (u->accepted) {
      /* Its results are the dtype's folder: still there? */
      zlb_strbuf_t d2 = ZLB_STRBUF_INIT;
      int gone;
      op_subdir(b, j, u->label, &d2);
      zlb_strbuf_addstr(&d2, "/run_identity.json");
      gone = access(d2.buf, F_OK) != 0;
      zlb_strbuf_release(&d2);
      if (gone) {
        snprintf(why, len, "kept, but the results of %s are gone", u->label);
        goto fail;
      }
    }
  }
  if (cur && apply_current(cur, att, &j->l2[done->n])) {
    snprintf(why, len, "a file whose 'current' is malformed or not %s's", j->l2[done->n].label);
    goto fail;
  }
  j->l1 = l1;
  j->cur = (int)done->n;
kept:
  j->seq = (int)seq;
  j->row.attempts = (int)att;
  j->t0 = zlb_now_s() - secs;
  return 0;
other_plan:
  snprintf(why, len, "its dtypes are not this batch's");
fail:
  free(j->l2);
  j->l2 = NULL;
  j->nl2 = j->cur = 0;
  j->level = 1;
  return -1;
}

/* Remove what a resume does not keep: the attempts, and every dtype
 * folder but those of the dtypes done. */
static void prune_for_resume(zlb__batch_t *b, const zlb__job_t *j) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  for (int i = j->cur; i < j->nl2; i++) {
    op_subdir(b, j, j->l2[i].label, &p);
    zlb__rmtree(p.buf);
  }
  op_subdir(b, j, "attempts", &p);
  zlb__rmtree(p.buf);
  zlb_strbuf_release(&p);
}

int zlb__resume_progress(zlb__batch_t *b, zlb__job_t *j) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  char *text = NULL, why[160] = "", msg[1024];
  size_t len = 0;
  zlb_json_t *doc = NULL;
  struct stat st;
  int rc = -1;
  progress_path(b, j, &p);
  if (lstat(p.buf, &st))
    goto out; /* nothing saved: a fresh start, said nowhere */
  if (!S_ISREG(st.st_mode) || st.st_size > (1 << 20) ||
      zlb_read_file(p.buf, &text, &len, NULL) || zlb_json_parse(text, len, p.buf, &doc, NULL))
    snprintf(why, sizeof(why), "unreadable");
  else if (!apply_progress(b, j, doc, why, sizeof(why)))
    rc = 0;
  if (!rc) {
    const zlb__unit_t *u = j->level == 2 ? &j->l2[j->cur] : &j->l1;
    char kept[320] = "";
    zlb_strbuf_t shown = ZLB_STRBUF_INIT; /* the file's words, printable */
    prune_for_resume(b, j);
    if (u->attempts || u->deny)
      snprintf(kept, sizeof(kept), ", %d counted attempt%s of %s kept (%.200s)%s", u->attempts,
               u->attempts == 1 ? "" : "s", j->level == 2 ? u->label : "the all-dtypes child",
               zlb_printable(&shown, u->signature[0] ? u->signature : u->status),
               u->deny ? ", capture denied" : "");
    zlb_strbuf_release(&shown);
    if (j->level == 2)
      snprintf(msg, sizeof(msg),
               "          device %-3s %-20s goes on at level 2 from %s (%d of %d dtypes done "
               "before)%s\n",
               b->devices.v[j->slot], j->op, u->label, j->cur, j->nl2, kept);
    else
      snprintf(msg, sizeof(msg), "          device %-3s %-20s goes on at level 1%s\n",
               b->devices.v[j->slot], j->op, kept);
  } else {
    snprintf(msg, sizeof(msg), "          device %-3s %-20s starts over: its %s is %s\n",
             b->devices.v[j->slot], j->op, PROGRESS_FILE, why);
  }
  if (b->o->line)
    b->o->line(b->o->cb_ctx, msg);
  unlink(p.buf);
out:
  zlb_json_free(doc);
  free(text);
  zlb_strbuf_release(&p);
  return rc;
}
