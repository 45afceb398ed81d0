/* Batch layer: many operators in many child processes (docs/batch.md).
 * The parent never initialises a GPU runtime: device counts and the
 * registered operators come from `zlbench` children, and every operator
 * runs as `zlbench run` in its own process group. */
#ifndef ZLBENCH_BATCH_H
#define ZLBENCH_BATCH_H

#include <stdint.h>
#include <sys/types.h>

#include "zlbench/base.h"
#include "zlbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- child processes ------------------------------------------------------ */

/* How a child ended. */
typedef struct zlb_exit {
  int code;      /* exit status, or 128 + signal for a signal death */
  int signaled;  /* killed by a signal */
  int sig;
  int timed_out; /* we killed it for its time limit */
} zlb_exit_t;

/* Bytes of a child's stdout and stderr kept: the first and the last this
 * many each, with one line in between saying how many were cut. */
#define ZLB_CAPTURE_KEEP (64 * 1024)

struct zlb__capture;

typedef struct zlb_child {
  pid_t pid;     /* also its process group id */
  double started, deadline; /* monotonic seconds; deadline 0: none */
  double term_sent;         /* when SIGTERM went to the group, 0 if not */
  int done;
  zlb_exit_t exit;
  struct zlb__capture *cap[2]; /* stdout, stderr: drained while the child runs */
} zlb_child_t;

/**
 * Start argv[0] (a path) with `env_set` ("KEY=VALUE" entries added to or
 * replacing the environment), stdout and stderr redirected to the given
 * files (NULL: /dev/null), in a new process group, dying with its parent
 * (PR_SET_PDEATHSIG). The files get at most ZLB_CAPTURE_KEEP bytes from the
 * start and from the end of each stream (a flood fills no disk); the
 * streams are drained by zlb_child_poll, so poll a running child often. An exec failure is reported through a close-on-exec
 * pipe as ZLB_ESPAWN naming the program and errno.
 */
int zlb_spawn(char *const argv[], const zlb_strvec_t *env_set, const char *stdout_path,
              const char *stderr_path, double timeout_s, zlb_child_t *c, zlb_error_t *err);
/**
 * Poll a child without blocking: reaps it when it exited; escalates its
 * time limit (SIGTERM to the group, then SIGKILL after `grace_s`). Returns
 * 1 when the child is done (c->exit filled), 0 while it runs. After the
 * child is reaped, whatever is left of its group is killed.
 */
int zlb_child_poll(zlb_child_t *c, double grace_s);
/** Stop a child's whole group now: TERM, wait up to `grace_s`, KILL, reap. */
void zlb_child_stop(zlb_child_t *c, double grace_s);
/**
 * Run a helper child to completion, capturing at most `max` bytes of its
 * stdout into `out` and of its stderr into `errout` (may be NULL; the rest
 * is discarded), with a time limit.
 */
int zlb_spawn_capture(char *const argv[], const zlb_strvec_t *env_set, double timeout_s,
                      size_t max, zlb_strbuf_t *out, zlb_strbuf_t *errout, zlb_exit_t *ex,
                      zlb_error_t *err);
/** "exit 3", "signal SIGSEGV", "timeout" */
void zlb_exit_describe(const zlb_exit_t *ex, char *buf, size_t len);

/* ---- curated selection --------------------------------------------------------- */

/**
 * Read an inventory file (assets/inventory.yaml: a map of backend name to a
 * list of operator names) and append `backend`'s operators to `ops`.
 */
int zlb_inventory_load(const char *path, const char *backend, zlb_strvec_t *ops,
                       zlb_error_t *err);
/**
 * Read a dismiss list (assets/dismiss.yaml: `dismissed: [{op, reason,
 * backend?}]`) and append the names dismissed for `backend`. An entry
 * without a reason is ZLB_EPARSE naming file and line.
 */
int zlb_dismiss_load(const char *path, const char *backend, zlb_strvec_t *ops,
                     zlb_strvec_t *reasons, zlb_error_t *err);

/* ---- sharding -------------------------------------------------------------------- */

/** Device slot of an operator: fnv1a64(name) mod ndevices. */
int zlb_shard_device(const char *op, int ndevices);
/** Host shard of an operator: (fnv1a64(name) >> 32) mod count. */
int zlb_shard_host(const char *op, int count);
/**
 * The host shard from --shard "I/N" (when given), else the environment:
 * SLURM_ARRAY_TASK_ID/MIN/COUNT, SLURM_PROCID/SLURM_NTASKS, or
 * JOB_COMPLETION_INDEX with ZL_SHARD_COUNT. `source` names what won.
 */
int zlb_shard_resolve(const char *flag, int *index, int *count, char *source,
                      size_t len, zlb_error_t *err);

/* ---- the batch ----------------------------------------------------------------------- */

typedef struct zlb_batch_opts {
  const char *backend;          /* name/alias/auto */
  const char *provider;         /* "zlbench" (NULL: the C corpus) or "flaggems" */
  const char *flaggems_dir;     /* flaggems: root of the checkout */
  const char *stage;            /* flaggems: stable, beta or alpha (NULL: every operator) */
  const char *fg_mode;          /* flaggems: --mode of its suite (NULL: kernel) */
  int list_only;                /* print the operators a batch would run, run nothing */
  const char *exe;              /* path of the zlbench binary for children */
  zlb_strvec_t devices;         /* ordinals; empty: all visible */
  zlb_strvec_t ops;             /* explicit selection; empty: inventory - dismissed */
  const char *inventory_path;   /* NULL: assets/inventory.yaml */
  const char *dismiss_path;     /* NULL: assets/dismiss.yaml */
  const char *out_dir;
  zlb_strvec_t dtypes;          /* requested dtypes (canonical names); empty: per op */
  zlb_strvec_t run_args;        /* options passed to every `zlbench run` child */
  zlb_strvec_t lib_args;        /* --lib paths (children and helper children) */
  zlb_strvec_t replay;          /* "OP=DIR" */
  const char *replay_from;      /* DIR */
  double timeout_s;             /* per child */
  double grace_s;               /* TERM -> KILL */
  int retries;
  /* Children at a time on one device (default 1). More make a functional
   * screen faster, but their timings disturb each other: each child is
   * told (ZL_CHILDREN_PER_DEVICE) and its identity records it, a caliber
   * of its own. */
  int jobs_per_device;
  size_t flush_bytes;           /* --flush-mib handed to the children (0: none): checked
                                 * against every device's L2 before any child starts */
  int force;
  int shard_index, shard_count;
  char shard_source[64];
  int argc;
  char **argv;
  /* Progress: called with one line per finished operator (plain) and,
   * when `live`, periodically with a multi-line status block. */
  int live;
  void (*line)(void *ctx, const char *text);
  void (*status)(void *ctx, const char *block);
  void *cb_ctx;
  volatile int *interrupted;
} zlb_batch_opts_t;

void zlb_batch_opts_init(zlb_batch_opts_t *o);
void zlb_batch_opts_release(zlb_batch_opts_t *o);

typedef struct zlb_batch_result {
  int total, done, skipped, replayed, ok, failed;
  int interrupted;
  double seconds;
  /* The operators not ok, by status, most first: "11 failed, 1 skipped";
   * "" when every finished operator is ok. */
  char not_ok[256];
} zlb_batch_result_t;

/**
 * Run the batch into o->out_dir: ops/<op>/ per operator, ops_status.csv
 * rewritten atomically as operators finish, summary.csv and
 * run_identity.json. Returns 0 when every operator was attempted (see res
 * for failures), ZLB_EINTR when interrupted (status of what finished is
 * written), or an error before anything ran.
 */
int zlb_batch_run(const zlb_batch_opts_t *o, zlb_batch_result_t *res, zlb_error_t *err);

/* ---- merging host shards ------------------------------------------------------------ */

typedef struct zlb_merge_opts {
  const char *out_dir;
  const zlb_strvec_t *dirs; /* the shards' output folders */
  int copy;                 /* copy files instead of hard-linking them */
  int argc;
  char **argv;
} zlb_merge_opts_t;

typedef struct zlb_merge_result {
  int shard_count, shards_found;
  size_t total, merged;
  int ok, failed;
  zlb_strvec_t missing; /* operators without a finished result */
  int *missing_shard;   /* the shard that should have run each */
  zlb_strvec_t why;     /* one line per missing operator */
  zlb_strvec_t notes;   /* folders without a shard's identity */
} zlb_merge_result_t;

/**
 * Merge the output folders of a batch's host shards into o->out_dir, a
 * folder with a batch folder's layout: ops/<op>/ (hard links, or copies),
 * ops_status.csv, summary.csv and run_identity.json (kind "batch", with
 * `merge`, `shards` and `missing`). The shards must belong together (same
 * selection, shard count, backend, tool, dtypes, run arguments, time limit
 * and retries: ZLB_EINVAL naming the fields); each operator is taken from
 * the shard the host hash gives it, when that shard finished it. Missing
 * operators are listed in `r`, not an error. Idempotent: a merge again,
 * after a missing shard ran, completes the folder.
 */
int zlb_merge_run(const zlb_merge_opts_t *o, zlb_merge_result_t *r, zlb_error_t *err);
void zlb_merge_result_release(zlb_merge_result_t *r);

#ifdef __cplusplus
}
#endif
#endif
