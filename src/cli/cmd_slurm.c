/* `zlbench slurm`: the Slurm jobs of a sharded batch. It writes, under
 * OUT/slurm/, a job array script (one task per host shard, each into
 * OUT/shard-<i>), for --mode nodes a multi-node job script (one task per
 * node), and the merge job's script (OUT/merged); with --submit it submits
 * them through sbatch, the merge with --dependency=afterany. With
 * --rerun-missing it merges what is there and submits only the shards whose
 * operators are missing (docs/batch.md, "Slurm"). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sched_util.h"
#include "zlbench/batch.h"

typedef struct slurm_opts {
  const char *out, *time, *merge_time, *mode, *partition, *account, *name, *zlbench;
  long shards, gpus, max_parallel;
  zlb_strvec_t sbatch_args;
  int submit, rerun;
} slurm_opts_t;

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fputs("usage: zlbench slurm --out DIR --shards N [options] [--submit] -- [batch options]\n"
        "       zlbench slurm --out DIR --rerun-missing [--submit]\n"
        "\n"
        "Write the Slurm jobs of a batch split into N host shards: DIR/slurm/shards.sbatch,\n"
        "a job array with one task per shard (task I runs 'zlbench batch --shard I/N\n"
        "--out DIR/shard-I' with the batch options), or with --mode nodes\n"
        "DIR/slurm/nodes.sbatch, one job of N nodes with one task each; and\n"
        "DIR/slurm/merge.sbatch, which runs 'zlbench merge DIR/merged DIR/shard-*'. Each\n"
        "shard uses the GPUs Slurm gives it (the batch maps its devices to the backend's\n"
        "visibility variable that Slurm sets). With --submit the shards are submitted\n"
        "through sbatch, then the merge with --dependency=afterany on them; without it\n"
        "the sbatch commands are printed.\n"
        "\n"
        "--rerun-missing merges DIR/shard-* into DIR/merged now, then submits again only\n"
        "the shards whose operators are missing (an array of those indices, same\n"
        "layout: each resumes in its folder), and the merge after them.\n"
        "\n"
        "options:\n",
        f);
  zlb_cli_help(f, opts);
  fputs("\n"
        "exit codes: 0 written (and submitted), or nothing missing; 2 bad arguments;\n"
        "3 sbatch is missing or refused a job; 6 the scripts cannot be written.\n",
        f);
}

static int opt_count(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  (void)opt;
  return zlb_cli_long_in(name, v, 0, 100000, "an integer 0..100000", ptr);
}

/* Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. */
static int opt_time(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  int digits = 0, colons = 0, dashes = 0;
  (void)opt;
  for (const char *c = v; *c; c++) {
    if (isdigit((unsigned char)*c))
      digits++;
    else if (*c == ':')
      colons++;
    else if (*c == '-')
      dashes++;
    else
      digits = -1000;
  }
  if (digits < 1 || colons > 2 || dashes > 1 || strlen(v) > 16)
    return zlb_cli_bad_value(name, v, "a Slurm time: MINUTES, H:M:S or D-H:M:S");
  *(const char **)ptr = v;
  return 0;
}

static int opt_mode(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  (void)opt;
  if (strcmp(v, "array") && strcmp(v, "nodes"))
    return zlb_cli_bad_value(name, v, "array or nodes");
  *(const char **)ptr = v;
  return 0;
}

/* A word for an #SBATCH line or a file name: no blanks, quotes or newlines. */
static int plain_word(const char *opt, const char *v) {
  for (const char *c = v; *c; c++)
    if (isspace((unsigned char)*c) || *c == '\'' || *c == '"' || *c == '\\' || *c == '$' ||
        *c == '`') {
      zlb_cli_errorf("invalid value '%s' for %s: no blanks, quotes, '$' or '\\'", v, opt);
      return -1;
    }
  return 0;
}

static void directives(zlb_strbuf_t *s, const slurm_opts_t *o, const char *job, const char *time) {
  zlb_strbuf_addf(s, "#SBATCH --job-name=%s\n#SBATCH --time=%s\n", job, time);
  if (o->partition)
    zlb_strbuf_addf(s, "#SBATCH --partition=%s\n", o->partition);
  if (o->account)
    zlb_strbuf_addf(s, "#SBATCH --account=%s\n", o->account);
}

static void batch_words(zlb_strbuf_t *s, const slurm_opts_t *o, const zlb_strvec_t *args) {
  for (size_t i = 0; i < args->n; i++) {
    zlb_strbuf_addch(s, ' ');
    zlb_sh_quote(s, args->v[i]);
  }
  (void)o;
}

static int write_script(const char *path, const zlb_strbuf_t *s) {
  zlb_error_t err = ZLB_ERROR_INIT;
  if (zlb_write_file_atomic(path, s->buf, s->len, &err))
    return zlb_cli_fail(&err);
  return 0;
}

/* The merge's command line (each shard's folder, and a pointer per
 * argument) must fit the kernel's limit for exec (ARG_MAX: 2 MiB on Linux,
 * less elsewhere): beyond 1 MiB the merge would fail to start at the end
 * of the run. 0, or an error said and ZLB_EXIT_USAGE; before anything is
 * made. */
static int merge_fits(const slurm_opts_t *o, const char *dir) {
  zlb_strbuf_t q = ZLB_STRBUF_INIT;
  size_t line = 0;
  zlb_sh_quote(&q, dir);
  for (long i = 0; i < o->shards; i++)
    line += q.len + sizeof("/shard-") + (size_t)snprintf(NULL, 0, "%ld", i) + sizeof(char *) + 1;
  zlb_strbuf_release(&q);
  if (line <= ((size_t)1 << 20))
    return 0;
  zlb_cli_errorf("slurm: %ld shards under '%s' make a merge command of about %zu bytes, more "
                 "than the 1 MiB a command line can take: use fewer shards (or a shorter "
                 "--out)",
                 o->shards, dir, line);
  return ZLB_EXIT_USAGE;
}

/* The scripts and the config --rerun-missing reads back. */
static int write_scripts(const slurm_opts_t *o, const char *dir, const char *exe,
                         const zlb_strvec_t *args) {
  zlb_strbuf_t s = ZLB_STRBUF_INIT, p = ZLB_STRBUF_INIT, q = ZLB_STRBUF_INIT;
  int rc = 0;
  zlb_sh_quote(&q, dir);

  /* The job array: task I is shard I. */
  zlb_strbuf_addf(&s, "#!/bin/bash\n# zlbench slurm: one host shard of %ld per array task; "
                      "results in %s/shard-<task>.\n",
                  o->shards, dir);
  directives(&s, o, o->name, o->time);
  zlb_strbuf_addf(&s, "#SBATCH --array=0-%ld", o->shards - 1);
  if (o->max_parallel > 0)
    zlb_strbuf_addf(&s, "%%%ld", o->max_parallel);
  zlb_strbuf_addf(&s, "\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n");
  if (o->gpus > 0)
    zlb_strbuf_addf(&s, "#SBATCH --gpus-per-node=%ld\n", o->gpus);
  zlb_strbuf_addf(&s, "#SBATCH --output=%s/slurm/shard-%%a.out\n", dir);
  for (size_t i = 0; i < o->sbatch_args.n; i++)
    zlb_strbuf_addf(&s, "#SBATCH %s\n", o->sbatch_args.v[i]);
  zlb_strbuf_addf(&s,
                  "set -u\n"
                  "i=${SLURM_ARRAY_TASK_ID:?run this script with sbatch (a job array)}\n"
                  "# The GPUs Slurm gives the task arrive in the backend's visibility\n"
                  "# variable (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, ...): the batch\n"
                  "# runs on those. exec: Slurm's SIGTERM at the time limit reaches the batch,\n"
                  "# which stops its children and writes what finished.\n"
                  "exec ");
  zlb_sh_quote(&s, exe);
  zlb_strbuf_addf(&s, " batch --shard \"$i/%ld\" --out %s/shard-\"$i\" --progress never", o->shards,
                  q.buf);
  batch_words(&s, o, args);
  zlb_strbuf_addch(&s, '\n');
  zlb_path_join(&p, dir, "slurm/shards.sbatch");
  if ((rc = write_script(p.buf, &s)))
    goto out;

  /* One job of N nodes, one task (shard) per node. */
  zlb_strbuf_reset(&s);
  zlb_strbuf_addf(&s, "#!/bin/bash\n# zlbench slurm: %ld host shards, one task per node; "
                      "results in %s/shard-<task>.\n",
                  o->shards, dir);
  directives(&s, o, o->name, o->time);
  zlb_strbuf_addf(&s, "#SBATCH --nodes=%ld\n#SBATCH --ntasks-per-node=1\n", o->shards);
  if (o->gpus > 0)
    zlb_strbuf_addf(&s, "#SBATCH --gpus-per-node=%ld\n", o->gpus);
  zlb_strbuf_addf(&s, "#SBATCH --output=%s/slurm/nodes-%%j.out\n", dir);
  for (size_t i = 0; i < o->sbatch_args.n; i++)
    zlb_strbuf_addf(&s, "#SBATCH %s\n", o->sbatch_args.v[i]);
  zlb_strbuf_addstr(&s, "set -u\n# Each task is shard $SLURM_PROCID of $SLURM_NTASKS; a task "
                        "that fails does not stop the others.\nsrun --kill-on-bad-exit=0 "
                        "bash -c 'exec \"$0\" batch --shard \"$SLURM_PROCID/$SLURM_NTASKS\" "
                        "--out \"$1/shard-$SLURM_PROCID\" --progress never \"${@:2}\"' ");
  zlb_sh_quote(&s, exe);
  zlb_strbuf_addch(&s, ' ');
  zlb_strbuf_addstr(&s, q.buf);
  batch_words(&s, o, args);
  zlb_strbuf_addch(&s, '\n');
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, dir, "slurm/nodes.sbatch");
  if ((rc = write_script(p.buf, &s)))
    goto out;

  /* The merge, after every shard ended (afterany: also after failures). */
  zlb_strbuf_reset(&s);
  zlb_strbuf_addf(&s, "#!/bin/bash\n# zlbench slurm: merge the %ld shards into %s/merged.\n",
                  o->shards, dir);
  {
    zlb_strbuf_t jn = ZLB_STRBUF_INIT;
    zlb_strbuf_addf(&jn, "%s-merge", o->name);
    directives(&s, o, jn.buf, o->merge_time);
    zlb_strbuf_release(&jn);
  }
  zlb_strbuf_addf(&s, "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --output=%s/slurm/"
                      "merge-%%j.out\nexec ",
                  dir);
  zlb_sh_quote(&s, exe);
  zlb_strbuf_addf(&s, " merge %s/merged", q.buf);
  for (long i = 0; i < o->shards; i++)
    zlb_strbuf_addf(&s, " %s/shard-%ld", q.buf, i);
  zlb_strbuf_addch(&s, '\n');
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, dir, "slurm/merge.sbatch");
  if ((rc = write_script(p.buf, &s)))
    goto out;

  zlb_strbuf_reset(&s);
  zlb_strbuf_addf(&s, "shards %ld\nmode %s\n", o->shards, o->mode);
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, dir, "slurm/config");
  rc = write_script(p.buf, &s);
out:
  zlb_strbuf_release(&s);
  zlb_strbuf_release(&p);
  zlb_strbuf_release(&q);
  return rc;
}

/* Run sbatch --parsable ARGS...; the job id, or -1 after an error. */
static long sbatch(const zlb_strvec_t *extra) {
  zlb_strvec_t argv = ZLB_STRVEC_INIT;
  zlb_strbuf_t prog = ZLB_STRBUF_INIT, out = ZLB_STRBUF_INIT, errout = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_exit_t ex;
  long id = -1;
  if (!zlb_find_program("sbatch", &prog)) {
    zlb_cli_errorf("slurm: sbatch is not on PATH: run this on a Slurm login node, or "
                   "leave out --submit and submit the scripts yourself");
    goto out;
  }
  zlb_strvec_push(&argv, prog.buf);
  zlb_strvec_push(&argv, "--parsable");
  for (size_t i = 0; i < extra->n; i++)
    zlb_strvec_push(&argv, extra->v[i]);
  if (zlb_spawn_capture(argv.v, NULL, 120.0, 1 << 16, &out, &errout, &ex, &err)) {
    zlb_cli_fail(&err);
    goto out;
  }
  /* "<id>" or "<id>;<cluster>" */
  if (ex.code != 0 || ex.signaled || zlb_parse_long(strtok(out.buf, ";\n") ? out.buf : "", &id) ||
      id <= 0) {
    zlb_cli_errorf("slurm: sbatch failed (%s): %s", out.buf, zlb_trim(errout.buf));
    id = -1;
  }
out:
  zlb_strvec_release(&argv);
  zlb_strbuf_release(&prog);
  zlb_strbuf_release(&out);
  zlb_strbuf_release(&errout);
  return id;
}

/* Submit the shard job (array indices `array`, or all) and the merge. */
static int submit(const char *dir, const char *mode, const char *array, int print_only) {
  zlb_strvec_t a = ZLB_STRVEC_INIT;
  zlb_strbuf_t p = ZLB_STRBUF_INIT, dep = ZLB_STRBUF_INIT;
  long shards_id, merge_id;
  int rc = ZLB_EXIT_OK;
  if (array) {
    zlb_strvec_pushf(&a, "--array=%s", array);
    zlb_path_join(&p, dir, "slurm/shards.sbatch");
  } else {
    zlb_path_join(&p, dir, !strcmp(mode, "nodes") ? "slurm/nodes.sbatch" : "slurm/shards.sbatch");
  }
  zlb_strvec_push(&a, p.buf);
  if (print_only) {
    zlb_strbuf_t q = ZLB_STRBUF_INIT, m = ZLB_STRBUF_INIT;
    zlb_sh_quote(&q, p.buf);
    zlb_path_join(&m, dir, "slurm/merge.sbatch");
    printf("submit with:\n  jid=$(sbatch --parsable%s%s %s)\n", array ? " --array=" : "",
           array ? array : "", q.buf);
    zlb_strbuf_reset(&q);
    zlb_sh_quote(&q, m.buf);
    printf("  sbatch --dependency=afterany:${jid%%%%;*} %s\n", q.buf);
    zlb_strbuf_release(&q);
    zlb_strbuf_release(&m);
    goto out;
  }
  if ((shards_id = sbatch(&a)) < 0) {
    rc = ZLB_EXIT_UNAVAIL;
    goto out;
  }
  printf("submitted shards: job %ld%s%s\n", shards_id, array ? " array " : "", array ? array : "");
  zlb_strvec_release(&a);
  zlb_strbuf_reset(&p);
  zlb_strbuf_addf(&dep, "--dependency=afterany:%ld", shards_id);
  zlb_strvec_push(&a, dep.buf);
  zlb_path_join(&p, dir, "slurm/merge.sbatch");
  zlb_strvec_push(&a, p.buf);
  if ((merge_id = sbatch(&a)) < 0) {
    rc = ZLB_EXIT_UNAVAIL;
    goto out;
  }
  printf("submitted merge: job %ld (after job %ld) -> %s/merged\n", merge_id, shards_id, dir);
out:
  fflush(stdout);
  zlb_strvec_release(&a);
  zlb_strbuf_release(&p);
  zlb_strbuf_release(&dep);
  return rc;
}

/* DIR/slurm/config: "shards N" and "mode M", as write_scripts wrote it. */
static int read_config(const char *dir, long *shards, char *mode, size_t len) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  char *text = NULL, m[16] = "";
  int rc = 0;
  zlb_path_join(&p, dir, "slurm/config");
  if (zlb_read_file_max(p.buf, 4096, "slurm/config", &text, NULL, &err)) {
    zlb_cli_errorf("slurm: %s: run 'zlbench slurm --out %s --shards N ...' first", err.msg, dir);
    rc = -1;
  } else if (sscanf(text, "shards %ld\nmode %15s", shards, m) != 2 || *shards < 1 ||
             *shards > 100000 || (strcmp(m, "array") && strcmp(m, "nodes"))) {
    zlb_cli_errorf("slurm: %s:1: expected 'shards N' and 'mode array|nodes'", p.buf);
    rc = -1;
  }
  zlb_strlcpy(mode, m, len);
  free(text);
  zlb_strbuf_release(&p);
  return rc;
}

static int rerun_missing(const char *dir, int submit_now, int argc, char **argv) {
  zlb_merge_opts_t mo;
  zlb_merge_result_t r;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strvec_t dirs = ZLB_STRVEC_INIT;
  zlb_strbuf_t merged = ZLB_STRBUF_INIT, list = ZLB_STRBUF_INIT;
  char mode[16];
  long shards;
  int code;
  memset(&r, 0, sizeof(r));
  if (read_config(dir, &shards, mode, sizeof(mode))) {
    code = ZLB_EXIT_USAGE;
    goto out;
  }
  for (long i = 0; i < shards; i++)
    zlb_strvec_pushf(&dirs, "%s/shard-%ld", dir, i);
  zlb_path_join(&merged, dir, "merged");
  memset(&mo, 0, sizeof(mo));
  mo.out_dir = merged.buf;
  mo.dirs = &dirs;
  mo.argc = argc;
  mo.argv = argv;
  if (zlb_merge_run(&mo, &r, &err)) {
    code = zlb_cli_fail(&err);
    goto out;
  }
  zlb_cli_merge_report(&r, merged.buf);
  if (!r.missing.n) {
    printf("nothing missing: every operator of the %ld shards is merged\n", shards);
    code = ZLB_EXIT_OK;
    goto out;
  }
  {
    char *seen = zlb_xcalloc((size_t)shards, 1);
    for (size_t i = 0; i < r.missing.n; i++)
      if (r.missing_shard[i] >= 0 && r.missing_shard[i] < shards)
        seen[r.missing_shard[i]] = 1;
    for (long i = 0; i < shards; i++)
      if (seen[i])
        zlb_strbuf_addf(&list, "%s%ld", list.len ? "," : "", i);
    free(seen);
  }
  printf("shards to run again: %s\n", list.buf);
  code = submit(dir, mode, list.buf, !submit_now);
out:
  zlb_merge_result_release(&r);
  zlb_strvec_release(&dirs);
  zlb_strbuf_release(&merged);
  zlb_strbuf_release(&list);
  return code;
}

int zlb_cmd_slurm(int argc, char **argv) {
  slurm_opts_t o;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  zlb_strbuf_t dir = ZLB_STRBUF_INIT, exe = ZLB_STRBUF_INIT, p = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  int code = ZLB_EXIT_USAGE;

  memset(&o, 0, sizeof(o));
  o.time = "4:00:00";
  o.merge_time = "30";
  o.mode = "array";
  o.name = "zlbench";
  o.shards = 0;
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_STRING("--out", "DIR", &o.out,
                       "the screen's folder: DIR/slurm (scripts, logs), DIR/shard-<i>,\n"
                       "DIR/merged"),
        ZLB_CLI_CALLBACK("--shards", "N", opt_count, &o.shards, "host shards (array tasks or nodes)"),
        ZLB_CLI_CALLBACK("--gpus-per-node", "G", opt_count, &o.gpus,
                         "GPUs each shard asks for (--gpus-per-node; default 0: none)"),
        ZLB_CLI_CALLBACK("--time", "T", opt_time, &o.time,
                         "time limit of each shard (Slurm format; default 4:00:00)"),
        ZLB_CLI_CALLBACK("--merge-time", "T", opt_time, &o.merge_time,
                         "time limit of the merge job (default 30 minutes)"),
        ZLB_CLI_CALLBACK("--mode", "M", opt_mode, &o.mode,
                         "array (default: one array task per shard) or nodes (one job,\n"
                         "one task per node)"),
        ZLB_CLI_CALLBACK("--max-parallel", "K", opt_count, &o.max_parallel,
                         "run at most K array tasks at once (--array=...%K)"),
        ZLB_CLI_STRING("--partition", "P", &o.partition, "partition of every job"),
        ZLB_CLI_STRING("--account", "A", &o.account, "account of every job"),
        ZLB_CLI_STRING("--job-name", "NAME", &o.name, "job name (default zlbench)"),
        ZLB_CLI_LIST("--sbatch-arg", "ARG", &o.sbatch_args,
                     "another #SBATCH line for the shards, e.g. --sbatch-arg=--exclusive\n"
                     "(repeatable)"),
        ZLB_CLI_STRING("--zlbench", "PATH", &o.zlbench,
                       "the zlbench the nodes run (default this one)"),
        ZLB_CLI_FLAG("--submit", &o.submit,
                     "submit through sbatch (sbatch --parsable; else print the commands)"),
        ZLB_CLI_FLAG("--rerun-missing", &o.rerun,
                     "merge now, then (re)submit only the shards with missing operators"),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("slurm", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      code = ZLB_EXIT_OK;
      goto out;
    case ZLB_CLI_BAD:
      goto out;
    default:
      break;
    }
  }
  if (!o.out) {
    zlb_cli_errorf("slurm: --out DIR is required (see zlbench slurm --help)");
    goto out;
  }
  zlb_abs_path(o.out, &dir);
  if (plain_word("--out", dir.buf) || plain_word("--job-name", o.name) ||
      (o.partition && plain_word("--partition", o.partition)) ||
      (o.account && plain_word("--account", o.account)))
    goto out;
  for (size_t i = 0; i < o.sbatch_args.n; i++)
    if (strchr(o.sbatch_args.v[i], '\n') || o.sbatch_args.v[i][0] != '-') {
      zlb_cli_errorf("slurm: --sbatch-arg '%s' is not one sbatch option", o.sbatch_args.v[i]);
      goto out;
    }
  if (o.rerun) {
    if (args.n || o.shards) {
      zlb_cli_errorf("slurm: --rerun-missing takes only --out (and --submit): the shards' "
                     "options are in DIR/slurm");
      goto out;
    }
    code = rerun_missing(dir.buf, o.submit, argc, argv);
    goto out;
  }
  if (o.shards < 1) {
    zlb_cli_errorf("slurm: --shards N (1 or more) is required");
    goto out;
  }
  if (zlb_sched_check_batch_args("slurm", &args))
    goto out;
  if (o.zlbench) {
    zlb_abs_path(o.zlbench, &exe);
  } else {
    if (zlb_exe_dir(&exe, &err)) {
      code = zlb_cli_fail(&err);
      goto out;
    }
    zlb_strbuf_addstr(&exe, "/zlbench");
  }
  if ((code = merge_fits(&o, dir.buf)))
    goto out;
  zlb_path_join(&p, dir.buf, "slurm");
  if (zlb_mkdirs(p.buf, &err)) {
    code = zlb_cli_fail(&err);
    goto out;
  }
  if ((code = write_scripts(&o, dir.buf, exe.buf, &args)))
    goto out;
  printf("wrote %s/slurm/{shards,nodes,merge}.sbatch: %ld shards into %s/shard-<i>, merged "
         "into %s/merged\n",
         dir.buf, o.shards, dir.buf, dir.buf);
  code = submit(dir.buf, o.mode, NULL, !o.submit);
out:
  zlb_strvec_release(&args);
  zlb_strvec_release(&o.sbatch_args);
  zlb_strbuf_release(&dir);
  zlb_strbuf_release(&exe);
  zlb_strbuf_release(&p);
  return code;
}
