/* Shared declarations of the command-line layer: exit codes, messages and
 * the subcommand entry points. Only this layer prints or exits; the exit codes
 * are zlb_exit_code_t (zlbench/error.h). */
#ifndef ZLB_CLI_H
#define ZLB_CLI_H

#include <stdio.h>

#include "zlbench/base.h"
#include "zlbench/error.h"

/* "zlbench: error: ..." on stderr. */
void zlb_cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void zlb_cli_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Each of the library's warnings (a folder scan's skipped files), one line each. */
void zlb_cli_warn_all(const zlb_strvec_t *w);
/** zlb_res_load, then what its folder scan skipped, as warnings. */
struct zlb_res_set;
int zlb_cli_res_load(struct zlb_res_set *s, const char *path, zlb_error_t *err);
/* --out DIR of `run` or `ab` (their results.json has `schema`): 0, or an
 * error said and ZLB_EXIT_USAGE where DIR holds a batch's results or a
 * results.json of another schema, which the command would replace. */
int zlb_cli_out_dir_kind(const char *cmd, const char *dir, const char *schema);
/* --out FILE of a command that reads the results under `inputs` (folders
 * or files): 0, or an error said and ZLB_EXIT_USAGE where FILE is one of
 * those inputs or, inside one, a file zlbench reads or a run or batch
 * writes (results.json, *.log, ops_status.csv, run_identity.json, ...;
 * summary.csv unless `own_summary`): writing it would destroy results. */
int zlb_cli_out_spares_inputs(const char *cmd, const char *out, const char *const *inputs,
                              size_t n, int own_summary);
void zlb_cli_notef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Print an error object and return the exit code its code maps to. */
int zlb_cli_fail(const zlb_error_t *err);
/** 1 when `arg` is -h or --help. */
int zlb_cli_is_help(const char *arg);

/* ---- option tables -------------------------------------------------------------
 * Every subcommand declares its options in one table of zlb_cli_option_t
 * (ending with ZLB_CLI_END); zlb_cli_parse() reads argv against it and
 * zlb_cli_help() prints the options part of --help from the same table, so
 * an option cannot be accepted and left undocumented. Long options only:
 * "--name value" or "--name=value"; "--" ends the options. */

typedef enum zlb_cli_kind {
  ZLB_CLI_KIND_END = 0,
  ZLB_CLI_KIND_FLAG,     /* no value: *(int *)ptr = 1 */
  ZLB_CLI_KIND_STRING,   /* *(const char **)ptr = value (last one wins) */
  ZLB_CLI_KIND_LIST,     /* zlb_strvec_push((zlb_strvec_t *)ptr, value) */
  ZLB_CLI_KIND_SPLIT,    /* comma-separated: every item pushed to the strvec */
  ZLB_CLI_KIND_CALLBACK, /* fn(opt, value, ptr); value NULL for a flag (arg NULL) */
  ZLB_CLI_KIND_INCLUDE,  /* ptr: another table, read as if inlined here */
  ZLB_CLI_KIND_SECTION   /* a heading in the help; help is its text */
} zlb_cli_kind_t;

/* Option flags. */
#define ZLB_CLI_PASS 0x1u /* collected verbatim in zlb_cli_parse's `pass` */
/* An empty value ("--name ''" or "--name=") means something for this
 * option. Without the flag it is an error naming the option: an empty
 * value must not read as "not given" (no option sets it today). */
#define ZLB_CLI_EMPTY_OK 0x2u

typedef struct zlb_cli_option zlb_cli_option_t;
/* Check and store `value` (as given after "--name"); return 0, or -1 after
 * printing an error naming the option. `name` is what the user typed. */
typedef int (*zlb_cli_opt_fn)(const zlb_cli_option_t *opt, const char *name, const char *value,
                              void *ptr);

struct zlb_cli_option {
  zlb_cli_kind_t kind;
  const char *name;  /* "--backend" */
  const char *alias; /* another accepted name, or NULL */
  const char *arg;   /* value placeholder for the help ("NAME"); NULL: a flag */
  const char *help;  /* one line per '\n', indented under the first */
  void *ptr;         /* where the value goes (see the kinds) */
  zlb_cli_opt_fn fn; /* ZLB_CLI_KIND_CALLBACK */
  unsigned flags;    /* ZLB_CLI_PASS */
};

#define ZLB_CLI_FLAG(name, ptr, help) {ZLB_CLI_KIND_FLAG, name, NULL, NULL, help, ptr, NULL, 0}
#define ZLB_CLI_STRING(name, arg, ptr, help) \
  {ZLB_CLI_KIND_STRING, name, NULL, arg, help, ptr, NULL, 0}
#define ZLB_CLI_LIST(name, arg, vec, help) {ZLB_CLI_KIND_LIST, name, NULL, arg, help, vec, NULL, 0}
#define ZLB_CLI_SPLIT(name, arg, vec, help) \
  {ZLB_CLI_KIND_SPLIT, name, NULL, arg, help, vec, NULL, 0}
#define ZLB_CLI_CALLBACK(name, arg, fn, ptr, help) \
  {ZLB_CLI_KIND_CALLBACK, name, NULL, arg, help, ptr, fn, 0}
#define ZLB_CLI_INCLUDE(table) {ZLB_CLI_KIND_INCLUDE, NULL, NULL, NULL, NULL, (void *)(table), NULL, 0}
#define ZLB_CLI_SECTION(text) {ZLB_CLI_KIND_SECTION, NULL, NULL, NULL, text, NULL, NULL, 0}
#define ZLB_CLI_END {ZLB_CLI_KIND_END, NULL, NULL, NULL, NULL, NULL, NULL, 0}

/* The options several commands share, defined once: --backend stores the
 * name as given (each command resolves it: some accept a backend an
 * operator library adds), --lib collects library paths in order. */
#define ZLB_CLI_BACKEND(ptr, help) ZLB_CLI_STRING("--backend", "NAME", ptr, help)
#define ZLB_CLI_LIB(vec) \
  ZLB_CLI_LIST("--lib", "PATH", vec, \
               "load another operator library (repeatable; env ZL_OP_LIBS, ':'-separated)")
#define ZLB_CLI_HELP_OPT ZLB_CLI_FLAG("--help", NULL, "this text (also -h)")

/* What zlb_cli_parse() found. */
enum { ZLB_CLI_PARSED = 0, ZLB_CLI_HELP = 1, ZLB_CLI_BAD = -1 };

/*
 * Parse argv[1..argc-1] (argv[0] is the subcommand) against `opts`.
 * Arguments that are not options are pushed to `args`; the tokens of
 * options flagged ZLB_CLI_PASS are pushed verbatim to `pass` (may be NULL).
 * Returns ZLB_CLI_PARSED, ZLB_CLI_HELP when -h/--help was given (nothing
 * printed), or ZLB_CLI_BAD after printing an error naming the option (an
 * unknown option, a missing value, a value given to a flag, or one the
 * option's callback refused): the command exits ZLB_EXIT_USAGE then.
 */
int zlb_cli_parse(const char *cmd, const zlb_cli_option_t *opts, int argc, char **argv,
                  zlb_strvec_t *args, zlb_strvec_t *pass);
/** The options part of a command's --help, from its table. */
void zlb_cli_help(FILE *f, const zlb_cli_option_t *opts);
/** "invalid value 'V' for OPT: expected WANT"; returns -1. */
int zlb_cli_bad_value(const char *opt, const char *value, const char *want);
/* A word option: *out = the index of value in words (NULL-terminated);
 * else -1 after "invalid value 'V' for OPT: expected WANT". */
int zlb_cli_word_in(const char *opt, const char *value, const char *const *words,
                    const char *want, int *out);
/* An integer option in lo..hi into *out; else -1 after the message
 * "invalid value 'V' for OPT: expected WANT" (WANT should name lo..hi).
 * Trailing text, blanks and values beyond a long are refused. */
int zlb_cli_long_in(const char *opt, const char *value, long lo, long hi, const char *want,
                    long *out);
/* A floating-point option in lo..hi (lo excluded when lo_open) into *out;
 * else -1 after "invalid value 'V' for OPT: expected WANT", or, above hi,
 * "invalid value 'V' for OPT: above the maximum HI UNIT". nan, inf,
 * blanks and trailing text are refused. */
int zlb_cli_double_in(const char *opt, const char *value, double lo, int lo_open, double hi,
                      const char *unit, const char *want, double *out);
/* A comma-separated option value pushed item by item to `out` (blanks
 * around items trimmed); an empty item ("a,,b", "a,") is an error naming
 * the option, -1. */
int zlb_cli_split(const char *opt, const char *value, zlb_strvec_t *out);

/* Check mode, for options given to one command and run by another later
 * (elsewhere): between zlb_cli_check_begin() and zlb_cli_check_end(),
 * zlb_cli_parse() reads argv as usual and prints what is wrong, but does
 * not look at values that name a file or folder (arg FILE, DIR or PATH:
 * they belong to the machine that will run the command), refuses
 * arguments that are not options and --help, and always returns
 * ZLB_CLI_BAD so that the command stops right after parsing (a command
 * checked this way must do nothing before its zlb_cli_parse call but set
 * up its table). end() is 0 when every option was good, else -1. */
void zlb_cli_check_begin(void);
int zlb_cli_check_end(void);

/* The options after "--" of `zlbench slurm` / `zlbench k8s`, checked as
 * `zlbench batch` will read them (check mode, see above): 0, or -1 after
 * printing what is wrong (cmd_batch.c). */
int zlb_cli_batch_check(const zlb_strvec_t *args);

/* Subcommands: argv[0] is the subcommand name. */
int zlb_cmd_run(int argc, char **argv);
int zlb_cmd_batch(int argc, char **argv);
int zlb_cmd_list(int argc, char **argv);
int zlb_cmd_devices(int argc, char **argv);
int zlb_cmd_plan(int argc, char **argv);
int zlb_cmd_summary(int argc, char **argv);
int zlb_cmd_inventory(int argc, char **argv);
int zlb_cmd_merge(int argc, char **argv);
int zlb_cmd_slurm(int argc, char **argv);
int zlb_cmd_k8s(int argc, char **argv);
int zlb_cmd_compare(int argc, char **argv);
int zlb_cmd_ab(int argc, char **argv);
int zlb_cmd_report(int argc, char **argv);

/* `--baseline vendor|torch` of run and batch (torch_bridge.c): 0, or -1
 * after printing what is wrong. */
int zlb_cli_check_baseline(const char *name, const char *value);
/** python3 -m zlbench.torch_baseline DIR --device N (ZL_PYTHON for another
 * interpreter): its output is the user's; returns the exit code. */
int zlb_cli_torch_baseline(const char *dir, int device);

struct zlb_merge_result;
/** Print a merge's result (missing operators, counts); its exit code. */
int zlb_cli_merge_report(const struct zlb_merge_result *r, const char *out);

#endif
