/* zlb_batch_run(): the scheduler. Operators are sharded over devices by a
 * stable hash; each device runs one `zlbench run` child at a time, devices
 * in parallel. Each operator's job (job.c) handles retries, capture-poison
 * re-runs and the two-level dtype fallback. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_int.h"
#include "zlbench/json.h"
#include "zlbench/ops.h"

/* ---- progress ------------------------------------------------------------------------------ */

static void status_block(zlb__batch_t *b) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  double now = zlb_now_s();
  if (!b->o->live || !b->o->status)
    return;
  for (size_t d = 0; d < b->devices.n; d++) {
    int total = 0, done = 0, failed = 0;
    double spent = 0;
    const char *cur = "-";
    for (size_t i = 0; i < b->njobs; i++) {
      zlb__job_t *j = &b->jobs[i];
      if (j->slot != (int)d)
        continue;
      total++;
      if (j->state == ZLB__JOB_DONE) {
        done++;
        spent += j->row.seconds;
        if (!zlb__status_is_ok(j->row.status))
          failed++;
      } else if (j->state == ZLB__JOB_RUNNING) {
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

/* ---- the batch ---------------------------------------------------------------------------- */

void zlb_batch_opts_init(zlb_batch_opts_t *o) {
  memset(o, 0, sizeof(*o));
  o->timeout_s = 1800;
  o->grace_s = 5;
  o->retries = 2;
  o->jobs_per_device = 1;
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

const char *zlb__device_value(const zlb__batch_t *b, const char *dev) {
  long d;
  if (b->granted.n && !zlb_parse_long(dev, &d) && d >= 0 && (size_t)d < b->granted.n)
    return b->granted.v[d];
  return dev;
}

void zlb__batch_stop(zlb__batch_t *b, const zlb_error_t *e) {
  if (!b->fatal.code)
    b->fatal = *e;
}

/* One batch per output folder: an exclusive flock on <out>/batch.lock,
 * held until the batch's process ends (the kernel drops it on a crash, so
 * a stale file blocks nothing). The file names the holder for the message
 * a second batch gets. Close-on-exec: children must not hold it. */
static int lock_out_dir(const char *dir, int *fd_out, zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT, who = ZLB_STRBUF_INIT;
  char host[256] = "", holder[320] = "";
  int fd, rc = 0;
  ssize_t n;
  zlb_path_join(&p, dir, "batch.lock");
  fd = open(p.buf, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot open the lock file '%s': %s", p.buf,
                       strerror(errno));
    goto out;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    if (e == EWOULDBLOCK) {
      n = pread(fd, holder, sizeof(holder) - 1, 0);
      holder[n > 0 ? n : 0] = '\0';
      rc = zlb_error_set(err, ZLB_EEXIST,
                         "output folder '%s' is in use by another batch (%s); wait for it "
                         "to end or choose another --out",
                         dir, zlb_trim(holder)[0] ? zlb_trim(holder) : "holder unknown");
    } else {
      rc = zlb_error_set(err, ZLB_EIO, "cannot lock '%s': %s", p.buf, strerror(e));
    }
    goto out;
  }
  gethostname(host, sizeof(host) - 1);
  zlb_strbuf_addf(&who, "host %s pid %ld\n", host, (long)getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, who.buf, who.len, 0) != (ssize_t)who.len) {
    rc = zlb_error_set(err, ZLB_EIO, "cannot write the lock file '%s': %s", p.buf,
                       strerror(errno));
    goto out;
  }
out:
  if (rc && fd >= 0) {
    close(fd);
    fd = -1;
  }
  *fd_out = fd;
  zlb_strbuf_release(&p);
  zlb_strbuf_release(&who);
  return rc;
}

/* A batch replaces what it finds in <out>/ops/<op>/ (a fresh start removes
 * an unfinished operator's folder): only in a folder a batch made. An
 * <out>/ops that is a link (or no folder) would have it write and remove
 * through it; an <out>/ops beside no run_identity.json (a batch writes its
 * identity before any child, a merge too) is someone else's. Checked under
 * the lock, before anything is written. */
static int check_out_ops(const char *dir, zlb_error_t *err) {
  zlb_strbuf_t ops = ZLB_STRBUF_INIT, id = ZLB_STRBUF_INIT;
  struct stat st;
  int rc = 0;
  zlb_path_join(&ops, dir, "ops");
  zlb_path_join(&id, dir, "run_identity.json");
  if (lstat(ops.buf, &st) != 0) {
    if (errno != ENOENT)
      rc = zlb_error_set(err, ZLB_EIO, "cannot examine '%s': %s", ops.buf, strerror(errno));
  } else if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
    rc = zlb_error_set(err, ZLB_EINVAL,
                       "'%s' is %s: a batch writes and removes operators' results only in a "
                       "folder of its own, never through a link; choose another output "
                       "folder",
                       ops.buf, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a folder");
  } else if (lstat(id.buf, &st) != 0) {
    rc = zlb_error_set(err, ZLB_EINVAL,
                       "'%s' holds an ops/ folder but no run_identity.json: not a zlbench "
                       "batch's folder, and a batch would replace the operators' folders "
                       "in it; choose another output folder",
                       dir);
  }
  zlb_strbuf_release(&ops);
  zlb_strbuf_release(&id);
  return rc;
}

static void stop_all(zlb__batch_t *b) {
  for (size_t i = 0; i < b->njobs; i++) {
    zlb__job_t *j = &b->jobs[i];
    int running = j->state == ZLB__JOB_RUNNING, keep;
    char where[160] = "";
    zlb_error_t e = ZLB_ERROR_INIT;
    if (j->staged && j->state != ZLB__JOB_DONE) {
      /* A rerun of finished results: the new ones are dropped, the
       * earlier ones (and their row in ops_status.csv) stay. */
      zlb_strbuf_t dir = ZLB_STRBUF_INIT;
      if (running)
        zlb_child_stop(&j->child, b->o->grace_s);
      zlb__work_dir(b, j, &dir);
      zlb__rmtree(dir.buf);
      zlb_strbuf_release(&dir);
      j->staged = 0;
      if (running && b->o->line) {
        char text[512];
        snprintf(text, sizeof(text),
                 "          device %-3s %-20s stopped after %.1fs (operator %.1fs, level %d): "
                 "not finished, its earlier results are kept\n",
                 j->row.device, j->op, zlb_now_s() - j->child.started, zlb_now_s() - j->t0,
                 j->level);
        b->o->line(b->o->cb_ctx, text);
      }
      continue;
    }
    /* A job waiting between its level-2 children (the batch stopped on a
     * fatal error, its next child could not start, or it waited for a
     * rerun alone) keeps its progress too, as does one waiting for a retry
     * that its unit counted. */
    if (j->state == ZLB__JOB_DONE)
      continue;
    keep = zlb__progress_worth(j);
    if (keep)
      zlb__progress_where(j, where, sizeof(where));
    if (!running && !keep) {
      /* Started, and waiting when the batch stopped: to rerun alone, or
       * its retry for another's rerun alone. Said, so that an operator
       * missing from the results is not a mystery. */
      if (j->row.attempts && (j->alone || j->deferred) && b->o->line) {
        char text[512];
        snprintf(text, sizeof(text),
                 "          device %-3s %-20s not finished (operator %.1fs): %s; a resume starts "
                 "it again\n",
                 j->row.device, j->op, zlb_now_s() - j->t0,
                 j->alone ? "it waited to run again alone on its device (out of memory beside "
                            "other children)"
                 : j->deferred == 2 ? "its next child waited for room on its device (fewer "
                                      "children at a time after running out of memory)"
                                    : "its retry waited for another operator's rerun alone");
        b->o->line(b->o->cb_ctx, text);
      }
      continue;
    }
    if (running)
      zlb_child_stop(&j->child, b->o->grace_s);
    /* What a resume does with it: at level 2 it goes on from the dtype
     * stopped here, with what that dtype's child counted; at level 1 it
     * keeps what the all-dtypes child counted, or starts again. An
     * operator that never finishes within one call's budget shows here,
     * call after call. */
    int saved = keep && !zlb__save_progress(b, j, &e);
    if (!running) {
      if (e.code && b->o->line) {
        char text[512];
        snprintf(text, sizeof(text),
                 "          device %-3s %-20s its progress could not be saved: %.300s\n",
                 j->row.device, j->op, e.msg);
        b->o->line(b->o->cb_ctx, text);
      } else if (saved && (j->alone || j->deferred) && b->o->line) {
        char text[512];
        snprintf(text, sizeof(text),
                 "          device %-3s %-20s not finished (operator %.1fs, level %d): it waited "
                 "for %s; a resume goes on %s\n",
                 j->row.device, j->op, zlb_now_s() - j->t0, j->level,
                 j->deferred == 2 ? "room on its device" : "a rerun alone", where);
        b->o->line(b->o->cb_ctx, text);
      }
      continue;
    }
    if (b->o->line) {
      char text[768], unsaved[400] = "";
      if (e.code)
        snprintf(unsaved, sizeof(unsaved), " (its progress could not be saved: %.300s)", e.msg);
      if (saved)
        snprintf(text, sizeof(text),
                 "          device %-3s %-20s stopped after %.1fs (operator %.1fs, level %d): "
                 "a resume goes on %s\n",
                 j->row.device, j->op, zlb_now_s() - j->child.started, zlb_now_s() - j->t0,
                 j->level, where);
      else
        snprintf(text, sizeof(text),
                 "          device %-3s %-20s stopped after %.1fs (operator %.1fs, level %d): "
                 "not finished, a resume starts it again%s\n",
                 j->row.device, j->op, zlb_now_s() - j->child.started, zlb_now_s() - j->t0,
                 j->level, unsaved);
      b->o->line(b->o->cb_ctx, text);
    }
  }
}

/* --replay-from (or --replay OP=DIR) naming the output folder itself
 * (the same folder by another path or a link included): its results
 * would be removed to be replaced by themselves. */
static int check_replay_sources(const zlb_batch_opts_t *o, zlb_error_t *err) {
  struct stat so, sr;
  int rc = 0;
  if (stat(o->out_dir, &so) != 0)
    return 0; /* a new folder is no earlier batch's */
  if (o->replay_from && stat(o->replay_from, &sr) == 0 && sr.st_dev == so.st_dev &&
      sr.st_ino == so.st_ino)
    return zlb_error_set(err, ZLB_EINVAL,
                         "--replay-from '%s' is the output folder '%s' itself: replay from "
                         "another batch's folder, or rerun into this one without "
                         "--replay-from (finished operators are kept)",
                         o->replay_from, o->out_dir);
  for (size_t i = 0; i < o->replay.n && !rc; i++) {
    const char *eq = strchr(o->replay.v[i], '=');
    zlb_strbuf_t own = ZLB_STRBUF_INIT;
    if (!eq)
      continue;
    zlb_strbuf_addf(&own, "%s/ops/%.*s", o->out_dir, (int)(eq - o->replay.v[i]),
                    o->replay.v[i]);
    if (stat(eq + 1, &sr) == 0 && stat(own.buf, &so) == 0 && sr.st_dev == so.st_dev &&
        sr.st_ino == so.st_ino)
      rc = zlb_error_set(err, ZLB_EINVAL,
                         "--replay %s: '%s' is the operator's folder in the output folder "
                         "itself; replay from another batch's folder",
                         o->replay.v[i], eq + 1);
    zlb_strbuf_release(&own);
  }
  return rc;
}

/* row: the outcome recorded in ops/<op>/.complete where it differs from
 * the row's (or there is no row). */
static void complete_outcome(const zlb__batch_t *b, zlb__status_row_t *row) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  char *text = NULL;
  size_t len = 0;
  zlb_json_t *j = NULL;
  zlb__op_dir(b, row->op, &p);
  zlb_strbuf_addstr(&p, "/.complete");
  if (!zlb__read_capped(p.buf, 1 << 16, &text, &len, NULL) &&
      !zlb_json_parse(text, len, p.buf, &j, NULL)) {
    const char *st = zlb_json_get_string(j, "status", "");
    const char *sig = zlb_json_get_string(j, "signature", "");
    const char *fd = zlb_json_get_string(j, "failed_dtypes", "");
    double att = zlb_json_get_number(j, "attempts", -1);
    double lvl = zlb_json_get_number(j, "dtype_level", -1);
    if (zlb__status_known(st) && strcmp(st, row->status) && strlen(st) < sizeof(row->status) &&
        strlen(sig) < sizeof(row->signature) && strlen(fd) < sizeof(row->failed_dtypes) &&
        att >= 0 && att <= 100000 && (lvl == 1 || lvl == 2)) {
      zlb_strlcpy(row->status, st, sizeof(row->status));
      zlb_strlcpy(row->signature, sig, sizeof(row->signature));
      zlb_strlcpy(row->failed_dtypes, fd, sizeof(row->failed_dtypes));
      row->attempts = (int)att;
      row->level = (int)lvl;
    }
  }
  zlb_json_free(j);
  free(text);
  zlb_strbuf_release(&p);
}

void zlb__servers_poll(zlb__batch_t *b, int stop) {
  for (size_t d = 0; b->servers && d < b->devices.n; d++) {
    zlb__server_t *sv = &b->servers[d];
    if (!sv->on)
      continue;
    if (stop) {
      zlb_child_stop(&sv->child, b->o->grace_s);
    } else if (zlb_child_poll(&sv->child, b->o->grace_s)) {
      char how[64], text[256];
      zlb_exit_describe(&sv->child.exit, how, sizeof(how));
      snprintf(text, sizeof(text),
               "note: the fork server of device %s ended (%s): its children start on their "
               "own\n",
               b->devices.v[d], how);
      if (b->o->line)
        b->o->line(b->o->cb_ctx, text);
    } else {
      continue;
    }
    sv->on = 0;
    unlink(sv->sock); /* gone with its server */
  }
}

/* keep: the servers' .part logs take their names (the batch has children
 * to run); else those not kept are removed (it ran none: an earlier run's
 * log, if any, stays as it was). */
static void servers_logs(zlb__batch_t *b, int keep) {
  for (size_t d = 0; b->servers && d < b->devices.n; d++) {
    zlb__server_t *sv = &b->servers[d];
    char part[sizeof(sv->log) + 8];
    if (!sv->log[0] || sv->log_kept)
      continue;
    snprintf(part, sizeof(part), "%s.part", sv->log);
    if (!keep)
      unlink(part);
    else if (rename(part, sv->log) == 0 || errno == ENOENT)
      sv->log_kept = 1;
  }
}

/* res->not_ok: the finished operators that are not ok, counted by status,
 * the most frequent first (ties in order of first appearance). */
static void not_ok_breakdown(const zlb__batch_t *b, zlb_batch_result_t *res) {
  const char *st[32];
  int n[32], k = 0;
  size_t len = 0;
  res->not_ok[0] = '\0';
  for (size_t i = 0; i < b->njobs; i++) {
    const zlb__job_t *j = &b->jobs[i];
    int s;
    if (j->state != ZLB__JOB_DONE || zlb__status_is_ok(j->row.status))
      continue;
    for (s = 0; s < k && strcmp(st[s], j->row.status); s++)
      ;
    if (s == k) {
      if (k == 32)
        continue; /* more kinds than a line shows */
      st[k] = j->row.status;
      n[k++] = 0;
    }
    n[s]++;
  }
  for (int done = 0; done < k; done++) {
    int best = -1;
    for (int s = 0; s < k; s++)
      if (n[s] > 0 && (best < 0 || n[s] > n[best]))
        best = s;
    if (len < sizeof(res->not_ok))
      len += (size_t)snprintf(res->not_ok + len, sizeof(res->not_ok) - len, "%s%d %s",
                              len ? ", " : "", n[best], st[best]);
    n[best] = -n[best]; /* taken */
  }
}

/* Remove `dir` if it holds nothing but batch.lock. */
static void drop_empty_out(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *de;
  int other = 0;
  zlb_strbuf_t lock = ZLB_STRBUF_INIT;
  if (!d)
    return;
  while ((de = readdir(d)))
    other |= strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
             strcmp(de->d_name, "batch.lock");
  closedir(d);
  if (other)
    return;
  zlb_path_join(&lock, dir, "batch.lock");
  if (unlink(lock.buf) == 0)
    rmdir(dir);
  zlb_strbuf_release(&lock);
}

int zlb_batch_run(const zlb_batch_opts_t *o, zlb_batch_result_t *res, zlb_error_t *err) {
  zlb__batch_t b;
  zlb__registered_t reg;
  zlb_strvec_t sel = ZLB_STRVEC_INIT;
  zlb_error_t e = ZLB_ERROR_INIT;
  int ndev = 0, rc, lock_fd = -1, created_out = 0;
  double last_status = 0;

  memset(&b, 0, sizeof(b));
  memset(&reg, 0, sizeof(reg));
  memset(res, 0, sizeof(*res));
  b.o = o;
  b.res = res;
  b.per_device = o->jobs_per_device > 1 ? o->jobs_per_device : 1;
  b.t0 = zlb_now_s();
  zlb_iso8601_now(b.started, sizeof(b.started));
  zlb_strbuf_init(&b.status_path);

  /* Validate everything before anything runs or is written. */
  if (!(b.prov = zlb__provider_find(o->provider))) {
    rc = zlb_error_set(err, ZLB_EINVAL, "unknown provider '%s' (zlbench or flaggems)",
                       o->provider);
    goto out;
  }
  if (!strcmp(b.prov->name, "flaggems") && !o->flaggems_dir) {
    rc = zlb_error_set(err, ZLB_EINVAL,
                       "--provider flaggems needs --flaggems DIR (the root of a FlagGems "
                       "checkout)");
    goto out;
  }
  if (strcmp(b.prov->name, "flaggems") && (o->flaggems_dir || o->stage || o->fg_mode)) {
    rc = zlb_error_set(err, ZLB_EINVAL,
                       "--flaggems, --stage and --mode belong to --provider flaggems, not "
                       "to provider '%s'",
                       b.prov->name);
    goto out;
  }
  if (b.prov->check && (rc = b.prov->check(&b, err)))
    goto out;
  if (!o->list_only && (rc = check_replay_sources(o, err)))
    goto out;
  created_out = !o->list_only && !zlb_path_exists(o->out_dir);
  if (!o->list_only && ((rc = zlb_check_writable_dir(o->out_dir, err)) ||
                        (rc = lock_out_dir(o->out_dir, &lock_fd, err)) ||
                        (rc = check_out_ops(o->out_dir, err))))
    goto out;
  if ((rc = zlb__discover_devices(&b, &ndev, err)) || (rc = zlb__check_flush(&b, err)))
    goto out;
  /* A grant the batch inherits (a scheduler's, or the user's): the
   * devices it sees are the grant's entries, in order. */
  if (b.vis_env[0] && getenv(b.vis_env))
    zlb_strvec_split(&b.granted, getenv(b.vis_env), ',');
  if (b.granted.n && (size_t)ndev > b.granted.n) {
    rc = zlb_error_set(err, ZLB_EINVAL,
                       "backend '%s' shows %d devices but %s='%s' grants %zu: cannot tell "
                       "which device each ordinal is; fix %s",
                       b.backend, ndev, b.vis_env, getenv(b.vis_env), b.granted.n, b.vis_env);
    goto out;
  }
  if (o->devices.n) {
    for (size_t i = 0; i < o->devices.n; i++) {
      long d;
      if (zlb_parse_long(o->devices.v[i], &d) || d < 0 || d >= ndev) {
        rc = zlb_error_set(err, ZLB_EINVAL,
                           "device '%s' is not visible on backend '%s' (%d visible)",
                           o->devices.v[i], b.backend, ndev);
        goto out;
      }
      for (size_t k = 0; k < i; k++) {
        long e2;
        if (!zlb_parse_long(o->devices.v[k], &e2) && e2 == d) {
          rc = zlb_error_set(err, ZLB_EINVAL, "--devices: device %ld given twice", d);
          goto out;
        }
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
  /* Without a visibility variable every child would see every device:
   * children on several devices could not be kept apart. */
  if (!b.vis_env[0] && b.devices.n > 1) {
    rc = zlb_error_set(err, ZLB_EINVAL,
                       "backend '%s' declares no visibility variable, so its children "
                       "cannot be pinned to one of %zu devices; choose one device with "
                       "--devices, or declare visibility_env in the backend's description",
                       b.backend, b.devices.n);
    goto out;
  }
  /* The provider's helpers (FlagGems' fork servers: torch and flag_gems
   * imported for 6-7 s before the first child can start) start now,
   * beside the operator scan (a Python process of its own), the selection
   * and the resume checks, instead of after them. A batch with nothing
   * left to run stops them at its end, as every batch does. */
  if (b.prov->start && !o->list_only && !(o->interrupted && *o->interrupted))
    b.prov->start(&b);
  if ((rc = b.prov->discover(&b, &reg, err)) || (rc = b.prov->select(&b, &reg, &sel, err)))
    goto out;
  b.reg_names = &reg.names;
  b.selection = &sel;
  zlb_path_join(&b.status_path, o->out_dir, "ops_status.csv");
  if ((rc = zlb__status_read(b.status_path.buf, &b.prev, &b.nprev, err)))
    goto out;

  b.jobs = zlb_xcalloc(sel.n + 1, sizeof(zlb__job_t));
  b.width = zlb_xcalloc(b.devices.n + 1, sizeof(zlb__width_t));
  for (size_t d = 0; d <= b.devices.n; d++)
    b.width[d].now = b.width[d].least = b.per_device;
  for (size_t i = 0; i < sel.n; i++) {
    zlb__job_t *j;
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
  if (o->list_only) {
    /* The operators this batch would run, nothing run or written: the
     * name first, then the device slot and what the provider knows. */
    for (size_t i = 0; i < b.njobs && o->line; i++) {
      zlb__job_t *j = &b.jobs[i];
      long r = zlb_strvec_find(&reg.names, j->op);
      zlb_strbuf_t line = ZLB_STRBUF_INIT, dts = ZLB_STRBUF_INIT;
      if (j->dtypes)
        zlb_dtype_mask_format(j->dtypes, &dts);
      zlb_strbuf_addf(&line, "%s\tdevice=%s\tdtypes=%s", j->op, j->row.device,
                      dts.len ? dts.buf : "-");
      if (b.op_files.n && r >= 0)
        zlb_strbuf_addf(&line, "\tfile=%s", b.op_files.v[r]);
      if (b.op_others.n && r >= 0 && b.op_others.v[r][0])
        zlb_strbuf_addf(&line, "\tothers=%s", b.op_others.v[r]);
      zlb_strbuf_addstr(&line, "\n");
      o->line(o->cb_ctx, line.buf);
      zlb_strbuf_release(&line);
      zlb_strbuf_release(&dts);
    }
    goto out;
  }
  /* What a batch that died left of its staged operators. */
  zlb__clean_staging(&b);
  if ((rc = zlb__batch_write_identity(&b, 0, err)))
    goto out;

  /* Resume and replay first: they cost nothing. */
  for (size_t i = 0; i < b.njobs; i++) {
    zlb__job_t *j = &b.jobs[i];
    if (!o->force && zlb__is_complete(&b, j->op)) {
      const zlb__status_row_t *prev = NULL;
      for (size_t k = 0; k < b.nprev && !prev; k++)
        if (!strcmp(b.prev[k].op, j->op))
          prev = &b.prev[k];
      if (prev)
        j->row = *prev;
      else
        zlb_strlcpy(j->row.status, "ok", sizeof(j->row.status));
      /* The marker is written before the row: where they differ (the
       * batch died between the two), the marker's outcome is the one
       * whose results are there. */
      complete_outcome(&b, &j->row);
      j->state = ZLB__JOB_DONE;
      res->skipped++;
      res->done++;
      if (zlb__status_is_ok(j->row.status))
        res->ok++;
      else
        res->failed++;
      continue;
    }
    j->t0 = zlb_now_s();
    if (zlb__try_replay(&b, j)) {
      zlb__finish_job(&b, j);
      if (j->state == ZLB__JOB_DONE && !strncmp(j->row.status, "replayed", 8))
        res->replayed++;
    }
    if (b.fatal.code)
      break;
  }

  {
    /* Children will run: the servers' logs are this batch's. */
    int queued = 0;
    for (size_t i = 0; i < b.njobs; i++)
      queued |= b.jobs[i].state == ZLB__JOB_QUEUED;
    if (queued)
      servers_logs(&b, 1);
  }
  while (!(o->interrupted && *o->interrupted) && !b.fatal.code) {
    int running = 0, pending = 0;
    zlb__servers_poll(&b, 0);
    for (size_t d = 0; d < b.devices.n; d++) {
      int busy = 0;
      zlb__job_t *waiting = NULL;
      for (size_t i = 0; i < b.njobs; i++) {
        zlb__job_t *k = &b.jobs[i];
        if (k->slot != (int)d)
          continue;
        if (k->state == ZLB__JOB_RUNNING) {
          busy++;
        } else if (k->state == ZLB__JOB_QUEUED && k->alone == 1 && !waiting) {
          waiting = k;
        }
      }
      /* A child to rerun alone, once no operator is left to start on its
       * device: nothing starts there until it has the device to itself,
       * and nothing beside it while it runs. A next child that waits says
       * what for now (a stop names it): that rerun, or room on the device. */
      int kept = zlb__device_kept(&b, (int)d);
      for (size_t i = 0; i < b.njobs; i++)
        if (b.jobs[i].slot == (int)d && b.jobs[i].state == ZLB__JOB_QUEUED && b.jobs[i].deferred)
          b.jobs[i].deferred = kept ? 1 : 2;
      if (kept) {
        if (waiting && !busy)
          zlb__launch_alone(&b, waiting);
        continue;
      }
      if (busy >= b.width[d].now)
        continue;
      /* The next children that waited (for a rerun alone, for room) come
       * first. */
      {
        zlb__job_t *deferred = NULL;
        for (size_t i = 0; i < b.njobs && !deferred; i++)
          if (b.jobs[i].slot == (int)d && b.jobs[i].state == ZLB__JOB_QUEUED &&
              b.jobs[i].deferred)
            deferred = &b.jobs[i];
        if (deferred) {
          zlb__launch_deferred(&b, deferred);
          continue;
        }
      }
      for (size_t i = 0; i < b.njobs; i++) {
        zlb__job_t *j = &b.jobs[i];
        zlb_strbuf_t dir = ZLB_STRBUF_INIT;
        if (j->slot != (int)d || j->state != ZLB__JOB_QUEUED || j->row.attempts || j->deferred)
          continue;
        /* An operator stopped at level 2 goes on from its next dtype;
         * otherwise a fresh start: nothing of an unfinished earlier
         * attempt stays. */
        j->t0 = zlb_now_s();
        if (o->force && zlb__is_complete(&b, j->op)) {
          /* A rerun of finished results: built beside them, and put in
           * their place only once complete. Stopped before, the earlier
           * results and their row stay. */
          j->staged = 1;
          zlb__work_dir(&b, j, &dir);
          zlb__rmtree(dir.buf);
        } else if (zlb__resume_progress(&b, j)) {
          zlb__op_dir(&b, j->op, &dir);
          zlb__rmtree(dir.buf);
        }
        zlb_strbuf_release(&dir);
        if (zlb__start_child(&b, j, &e))
          zlb__batch_stop(&b, &e);
        break;
      }
    }
    for (size_t i = 0; i < b.njobs; i++) {
      zlb__job_t *j = &b.jobs[i];
      if (j->state == ZLB__JOB_RUNNING && zlb_child_poll(&j->child, o->grace_s))
        zlb__on_child_exit(&b, j);
      if (j->state == ZLB__JOB_RUNNING)
        running++;
      else if (j->state == ZLB__JOB_QUEUED)
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
  /* Stopped (interrupted, or the environment failed): the running children
   * are stopped and reaped; what finished stays, and is written below. */
  if ((o->interrupted && *o->interrupted) || b.fatal.code)
    stop_all(&b);
  if (o->interrupted && *o->interrupted)
    res->interrupted = 1;
  /* Write everything that can be written; the first failure is reported. */
  zlb_error_clear(&e);
  if (zlb__batch_write_status(&b, &e))
    zlb__batch_stop(&b, &e);
  zlb_error_clear(&e);
  if (zlb__batch_write_summary(&b, &e))
    zlb__batch_stop(&b, &e);
  zlb_error_clear(&e);
  if (zlb__batch_write_identity(&b, 1, &e))
    zlb__batch_stop(&b, &e);
  res->seconds = zlb_now_s() - b.t0;
  not_ok_breakdown(&b, res);
  if (b.fatal.code) {
    if (err)
      *err = b.fatal;
    rc = b.fatal.code;
  } else {
    rc = res->interrupted ? zlb_error_set(err, ZLB_EINTR,
                                          "interrupted: %d of %d operators finished",
                                          res->done, res->total)
                          : 0;
  }
out:
  zlb__servers_poll(&b, 1); /* the helpers end with the batch, on every path */
  servers_logs(&b, 0);
  free(b.servers);
  for (size_t i = 0; i < b.njobs; i++)
    free(b.jobs[i].l2);
  free(b.jobs);
  free(b.width);
  free(b.prev);
  free(reg.dtypes);
  zlb_strvec_release(&reg.names);
  zlb_strvec_release(&sel);
  zlb_strvec_release(&b.devices);
  zlb_strvec_release(&b.granted);
  zlb_strvec_release(&b.vis_also);
  zlb_strvec_release(&b.op_files);
  zlb_strvec_release(&b.op_others);
  zlb_strbuf_release(&b.status_path);
  /* Refused before anything ran (a device not visible, a bad library or
   * inventory): a folder this batch created holds only its lock, and goes. */
  if (rc && created_out && lock_fd >= 0)
    drop_empty_out(o->out_dir);
  if (lock_fd >= 0)
    close(lock_fd); /* releases the lock; the file stays, naming the last holder */
  return rc;
}

