/* Shared declarations of the command-line layer: exit codes, messages and
 * the subcommand entry points. Only this layer prints or exits; the exit codes
 * are zlb_exit_code_t (zlbench/error.h). */
#ifndef ZLB_CLI_H
#define ZLB_CLI_H

#include <stdio.h>

#include "zlbench/error.h"

/* "zlbench: error: ..." on stderr. */
void zlb_cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void zlb_cli_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void zlb_cli_notef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Print an error object and return the exit code its code maps to. */
int zlb_cli_fail(const zlb_error_t *err);
/** 1 when `arg` is -h or --help. */
int zlb_cli_is_help(const char *arg);

/*
 * Option parsing helper: long options only, "--name value" or
 * "--name=value". Returns 1 and sets *value when argv[*i] is `name`
 * (advancing *i past a separate value), 0 when it is another option, and
 * -1 (after printing an error) when the value is missing.
 */
int zlb_cli_opt(int argc, char **argv, int *i, const char *name,
                const char **value);
/** 1 (advancing nothing) when argv[*i] is the flag `name` (no value). */
int zlb_cli_flag(char **argv, int i, const char *name);

/* Subcommands: argv[0] is the subcommand name. */
int zlb_cmd_run(int argc, char **argv);
int zlb_cmd_batch(int argc, char **argv);
int zlb_cmd_list(int argc, char **argv);
int zlb_cmd_devices(int argc, char **argv);
int zlb_cmd_plan(int argc, char **argv);
int zlb_cmd_summary(int argc, char **argv);
int zlb_cmd_inventory(int argc, char **argv);

#endif
