/* Private declarations shared by the batch layer's files. */
#ifndef ZLB_BATCH_INT_H
#define ZLB_BATCH_INT_H

#include <stdint.h>

#include "zlbench/batch.h"
#include "zlbench/device.h"

/* Remove a tree; a symbolic link anywhere in it (`path` included) is
 * removed itself, never followed. */
int zlb__rmtree(const char *path);
/* 0 when `path` is a real folder holding only folders and regular files;
 * 1 with the first offender (a symbolic link, a special file, `path`
 * itself not a folder) in `bad`; -1 with errno when it cannot be read. */
int zlb__tree_check(const char *path, zlb_strbuf_t *bad);
/* The same for `name` in the folder open as `at` (AT_FDCWD: a path), never
 * through a link on the way down from `at`; `label` is its name in `bad`;
 * `depth` 0. */
int zlb__tree_check_at(int at, const char *name, const char *label, zlb_strbuf_t *bad,
                       int depth);
/* Copy a folder tree, skipping entries named `skip` (NULL: none); a
 * symbolic link or special file fails the copy (errno ELOOP). */
int zlb__copytree(const char *from, const char *to, const char *skip);
/* Hard-link every regular file of a tree into `to` (copy when `copy`, or
 * where a link fails: another file system); a symbolic link or special
 * file fails it (errno ELOOP). */
int zlb__linktree(const char *from, const char *to, int copy);
/* The same for `from` in the folder open as `at`. */
int zlb__linktree_at(int at, const char *from, const char *to, int copy);
/* Put folder `from` in the place of `to` (which may not exist) and
 * remove the old `to`: atomically where the file system can exchange
 * them, else through `aside`. -1 with errno: `to` is as it was. */
int zlb__swap_dir(const char *from, const char *to, const char *aside);
/* Move every entry of `from` into `to` (replacing same-named entries);
 * -1 with errno set when one cannot be moved. */
int zlb__move_contents(const char *from, const char *to);

/* One row of ops_status.csv. */
typedef struct zlb__status_row {
  char op[128];
  char status[32];
  int attempts;
  int level;
  char backend[32];
  char device[16];
  char timer[16];
  double seconds;
  char signature[320];
  char failed_dtypes[96];
  char note[320];
} zlb__status_row_t;

/* ---- the batch's state, shared by batch.c, discover.c, job.c, outputs.c ---- */

/* A unit is what one child runs: every dtype (level 1) or one (level 2). */
typedef struct zlb__unit {
  char label[32];     /* "all" or a dtype name */
  char dtypes[160];   /* value for --dtypes, "" for the child's default */
  int attempts;       /* attempts that counted against the retry budget */
  int runs;           /* every child started for this unit */
  int deny;           /* re-run with capture denied after a poisoned capture */
  int accepted;       /* produced rows (exit 0 or 1) */
  char status[32];
  char signature[320];
  char timer[16];
  int whole;          /* the last end concerns the operator, not a dtype */
} zlb__unit_t;

typedef enum zlb__job_state {
  ZLB__JOB_QUEUED = 0, /* waiting for its device (or for its next child) */
  ZLB__JOB_RUNNING,    /* a child runs */
  ZLB__JOB_DONE        /* its row is final */
} zlb__job_state_t;

typedef struct zlb__job {
  char *op;
  int slot;           /* index into the device list */
  uint32_t dtypes;    /* registered dtypes */
  int level;          /* 1, or 2 after the all-dtypes child failed */
  zlb__unit_t l1;
  zlb__unit_t *l2;
  int nl2, cur;
  zlb__job_state_t state;
  int seq;            /* attempt folders */
  zlb_child_t child;
  char attempt_dir[1024];
  /* The operator's results are built in ops/.stage-<op> and put in the
   * place of ops/<op> only once complete (a --force rerun, a replay):
   * until then the earlier results and their status row stay. */
  int staged;
  /* Children sharing a device (--jobs-per-device > 1) share its memory: a
   * child that ran out of it beside others runs once more alone before
   * its failure counts. shared: another child ran on the device during
   * the current one; alone: 0, 1 waiting for the device to empty, 2
   * running alone; alone_used: that rerun was spent. deferred: its next
   * child waits (queued, started by the scheduler), 1 for such a rerun to
   * end, 2 for room on a device narrowed after running out of memory. */
  int shared, alone, alone_used, deferred;
  /* The device's width epoch when its current child started (see
   * zlb__width_t): an out-of-memory end narrows the device only where the
   * child started at the width in force now. */
  unsigned epoch;
  int peak; /* the most children that ran on its device during its current child */
  double t0;
  zlb__status_row_t row;
} zlb__job_t;

/* How many children a device takes at a time, adapted to its memory: an
 * operator out of memory beside others halves it (down to 1), and every
 * `width` children that end without running out of memory widen it by one
 * again, up to --jobs-per-device. epoch counts the narrowings, so that
 * children started before one (several run out together when the device
 * fills) narrow it once, not once each. clean counts the ends since the
 * width last changed; least is the narrowest it was. */
typedef struct zlb__width {
  int now, least, clean;
  unsigned epoch;
} zlb__width_t;

typedef struct zlb__batch {
  const zlb_batch_opts_t *o;
  zlb_batch_result_t *res;
  char backend[32];
  /* The backend's visibility variable and its further keys, from the
   * registry for a built-in backend, else from the `zlbench devices
   * --json` helper (a library's backend is not in this process's
   * registry); "" when the backend declares none. */
  char vis_env[64];
  zlb_strvec_t vis_also;
  zlb_strvec_t devices;       /* ordinals as strings */
  /* The value of vis_env this batch was started with (a scheduler's
   * grant, e.g. Slurm's CUDA_VISIBLE_DEVICES=2,3), split at commas; empty
   * when unset. Ordinal d of the devices the batch sees is entry d. */
  zlb_strvec_t granted;
  const zlb_strvec_t *selection; /* every selected operator, before host sharding */
  zlb__job_t *jobs;
  size_t njobs;
  zlb__status_row_t *prev;    /* ops_status.csv of an earlier run into the same folder */
  size_t nprev;
  zlb_strbuf_t status_path;
  double t0;
  char started[32];
  const struct zlb__provider *prov;
  const zlb_strvec_t *reg_names; /* the provider's operators, in discovery order */
  zlb_strvec_t op_files;      /* flaggems: each operator's test file, as reg_names */
  zlb_strvec_t op_others;     /* flaggems: the other files holding its mark ("": none) */
  char python[1024];          /* flaggems: the interpreter, an absolute path */
  int per_device;             /* children at a time on one device (>= 1) */
  zlb__width_t *width;        /* per device slot, as devices */
  /* Helper processes a provider keeps for the batch's length, one per
   * device slot (flaggems: fork servers), NULL when none. */
  struct zlb__server *servers;
  /* The first failure of the environment (a write that failed, a child
   * that could not write its results): the batch stops on it. */
  zlb_error_t fatal;
} zlb__batch_t;

/* A provider's helper process for one device slot. */
typedef struct zlb__server {
  zlb_child_t child;
  int on;             /* started and not yet ended */
  char sock[108];     /* its UNIX socket ("" none) */
  /* Its log: written to `log`.part until the batch has children to run
   * (batch.c, servers_logs), so that a batch that ends before (a bad
   * option, nothing left to run) leaves an earlier run's log as it was. */
  char log[1024];
  int log_kept;
} zlb__server_t;

/* The operators a loaded library registers for the backend, with dtypes. */
typedef struct zlb__registered {
  zlb_strvec_t names;
  uint32_t *dtypes;
} zlb__registered_t;

/* An operator's final status counts as a success: measured ("ok"), reused
 * ("replayed") or measured with capture denied ("ok_capture_denied"). */
int zlb__status_is_ok(const char *status);

/* Record `e` as the reason the batch stops (the first one wins). */
void zlb__batch_stop(zlb__batch_t *b, const zlb_error_t *e);

/* ---- providers (provider.c) ---------------------------------------------------------- */

/* Not one of zlbench's exit codes: a failure with no more specific class. */
#define ZLB__EXIT_OTHER 99

/* What a child's end means, in zlbench's terms: `code` a zlb_exit_code_t
 * (ZLB__EXIT_OTHER for a plain failure), `status` a status replacing the
 * code's own ("" none), `line` the failure's first line ("": the first
 * error line of stderr), `final` no retry, `whole` the failure concerns the
 * operator whatever its dtypes (a collection error, a skip): no child per
 * dtype after it. */
typedef struct zlb__verdict {
  int code;
  char status[32];
  char line[256];
  int final;
  int whole;
} zlb__verdict_t;

typedef struct zlb__provider {
  const char *name;
  /* The discovered dtypes are exact (the corpus registers them); else they
   * are a hint, and the per-dtype fallback tries every requested dtype so
   * that the operator's own refusal names the ones it lacks. */
  int dtypes_exact;
  /* Options that make no sense for this provider: an error before anything runs. */
  int (*check)(const zlb__batch_t *b, zlb_error_t *err);
  /* The operators the provider has, with their dtypes (mask 0: unknown). */
  int (*discover)(zlb__batch_t *b, zlb__registered_t *reg, zlb_error_t *err);
  /* --ops, else the provider's default selection. */
  int (*select)(zlb__batch_t *b, const zlb__registered_t *reg, zlb_strvec_t *sel,
                zlb_error_t *err);
  /* argv and further environment of the child for unit `u` of job `j`
   * (j->attempt_dir exists); *want_stdout: keep its stdout as stdout.log. */
  int (*child)(zlb__batch_t *b, zlb__job_t *j, const zlb__unit_t *u, zlb_strvec_t *argv,
               zlb_strvec_t *env, int *want_stdout, zlb_error_t *err);
  /* Optional, before the first child: start b->servers. A helper that
   * cannot start is no error: the children then start on their own. */
  void (*start)(zlb__batch_t *b);
  /* The child ended: classify it (and write what the attempt folder needs,
   * e.g. run.log). */
  void (*classify)(zlb__batch_t *b, zlb__job_t *j, const zlb_exit_t *ex, zlb__verdict_t *v);
} zlb__provider_t;

/* NULL: "zlbench" (the C corpus). NULL when there is no such provider. */
const zlb__provider_t *zlb__provider_find(const char *name);
/* The flaggems scan's output -> operators, dtypes, test files and the other
 * files holding each operator's mark (comma-separated, "" for none) (checked). */
int zlb__flaggems_parse_ops(const char *text, zlb__registered_t *reg, zlb_strvec_t *files,
                            zlb_strvec_t *others, zlb_error_t *err);

/* discover.c: helper children (the parent initialises no runtime). */
void zlb__push_libs(const zlb_batch_opts_t *o, zlb_strvec_t *argv);
/* Backend name and visible device count, from `zlbench devices --count`. */
int zlb__discover_devices(zlb__batch_t *b, int *count, zlb_error_t *err);
/* --flush-mib below a device's L2 (from `zlbench devices --json`): a usage
 * error before any child, where every child would refuse it and every
 * operator would end usage_error. 0 without --flush-mib. */
int zlb__check_flush(zlb__batch_t *b, zlb_error_t *err);
/* The operators registered for b->backend, from `zlbench inventory --registered`. */
int zlb__discover_ops(zlb__batch_t *b, zlb__registered_t *reg, zlb_error_t *err);
/* --ops, else the inventory less the dismissed; every name must be registered. */
int zlb__select_ops(zlb__batch_t *b, const zlb__registered_t *reg, zlb_strvec_t *sel,
                    zlb_error_t *err);

/* The value the visibility keys get for device ordinal `dev` (as the
 * batch sees it): the matching entry of the inherited grant, else `dev`. */
const char *zlb__device_value(const zlb__batch_t *b, const char *dev);
/* "KEY=VALUE" entries pinning a process to device slot `slot`. */
void zlb__push_device_env(const zlb__batch_t *b, int slot, zlb_strvec_t *env);
/* Poll the helpers (a helper that ended is noted and not used again);
 * stop them all with `stop`. */
void zlb__servers_poll(zlb__batch_t *b, int stop);

/* job.c: one operator's state machine. */
int zlb__start_child(zlb__batch_t *b, zlb__job_t *j, zlb_error_t *err);
/* Start job j's next child alone on its device (the device is idle): the
 * rerun of a child that ran out of memory beside others. */
void zlb__launch_alone(zlb__batch_t *b, zlb__job_t *j);
/* Start job j's next child, deferred while its device was kept for a
 * rerun alone or had no room. */
void zlb__launch_deferred(zlb__batch_t *b, zlb__job_t *j);
/* Is device `slot` kept for a rerun alone? A child that ran out of memory
 * beside others waits until no operator that has not started is left for
 * its device (those run first, as many at a time as the device's width allows), then the
 * device is kept: nothing starts on it, not even another operator's next
 * child, until it is empty and the rerun, alone on it, ended. */
int zlb__device_kept(const zlb__batch_t *b, int slot);
/* A child ended: retry, advance, fall back a level, or finish. */
void zlb__on_child_exit(zlb__batch_t *b, zlb__job_t *j);
/* Reuse finished results from --replay/--replay-from; 1 when reused. */
int zlb__try_replay(zlb__batch_t *b, zlb__job_t *j);
/* A stopped job at level 2 saves its finished dtypes, and at either level
 * what its stopped unit counted (ops/<op>/.progress); a resume that finds
 * them goes on from there: 0 then, -1 for a fresh start (nothing saved, or
 * what was saved does not fit). zlb__progress_worth: whether a stopped job
 * has anything to save; zlb__progress_where: where its resume goes on, for
 * a message ("from float32 (1 counted attempt kept)", "with 1 counted
 * attempt kept"). */
int zlb__progress_worth(const zlb__job_t *j);
void zlb__progress_where(const zlb__job_t *j, char *buf, size_t len);
int zlb__save_progress(const zlb__batch_t *b, const zlb__job_t *j, zlb_error_t *err);
int zlb__resume_progress(zlb__batch_t *b, zlb__job_t *j);
/* The job's row is final: count it, write .complete and ops_status.csv
 * (a failed write stops the batch). */
void zlb__finish_job(zlb__batch_t *b, zlb__job_t *j);

/* outputs.c: everything the batch writes outside the attempt folders. */
void zlb__op_dir(const zlb__batch_t *b, const char *op, zlb_strbuf_t *out);
/* Where job `j` builds its results: its staging folder when staged, else
 * ops/<op>. */
void zlb__work_dir(const zlb__batch_t *b, const zlb__job_t *j, zlb_strbuf_t *out);
/* A staged job's finished results take the place of ops/<op>. */
int zlb__unstage(zlb__batch_t *b, zlb__job_t *j, zlb_error_t *err);
/* Leftovers of staged jobs of a batch that died: an earlier result set
 * aside is put back where ops/<op> is gone, the rest removed. */
void zlb__clean_staging(const zlb__batch_t *b);
int zlb__is_complete(const zlb__batch_t *b, const char *op);
/* Timer of a finished child from the run_identity.json in `dir`. */
void zlb__read_timer(const char *dir, char *timer, size_t len);
int zlb__batch_write_status(zlb__batch_t *b, zlb_error_t *err);
int zlb__batch_write_complete(zlb__batch_t *b, zlb__job_t *j, zlb_error_t *err);
int zlb__batch_write_identity(zlb__batch_t *b, int final, zlb_error_t *err);
int zlb__batch_write_summary(zlb__batch_t *b, zlb_error_t *err);
/* summary.csv in `out_dir` from ops/<op>/ of each row's operator. */
int zlb__write_summary(const char *out_dir, const zlb__status_row_t *rows, size_t n,
                       zlb_error_t *err);

/* status.c */
int zlb__status_write(const char *path, const zlb__status_row_t *rows, size_t n,
                      zlb_error_t *err);
/* Read an ops_status.csv that another process or host wrote (a shard's),
 * checking every field: the header, 11 fields a row, numbers, a known
 * status, a valid operator name given once, values that fit; at most
 * `max_bytes`. An error names the file (and line). Rows come sorted by
 * operator (zlb__status_row_cmp). */
int zlb__status_read_checked(const char *path, size_t max_bytes, zlb__status_row_t **rows,
                             size_t *n, zlb_error_t *err);
/* 1 when `s` can be an operator's folder name: 1..127 characters of
 * [A-Za-z0-9_.+-], not starting with '.'. */
int zlb__op_name_ok(const char *s);
/* qsort order of status rows: by operator name. */
int zlb__status_row_cmp(const void *a, const void *b);
/* 1 when `s` is a status ops_status.csv may hold. */
int zlb__status_known(const char *s);
/* Read a whole file of at most `max_bytes` (a larger one is ZLB_EPARSE). */
int zlb__read_capped(const char *path, size_t max_bytes, char **out, size_t *len,
                     zlb_error_t *err);
/* Read an existing ops_status.csv (missing file: 0 rows). */
int zlb__status_read(const char *path, zlb__status_row_t **rows, size_t *n,
                     zlb_error_t *err);

#endif
