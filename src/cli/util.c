/* Messages and exit codes shared by the subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void vmsg(const char *kind, const char *fmt, va_list ap) {
  fflush(stdout);
  fprintf(stderr, "zlbench: %s", kind);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void zlb_cli_errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg("error: ", fmt, ap);
  va_end(ap);
}

void zlb_cli_warnf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg("warning: ", fmt, ap);
  va_end(ap);
}

void zlb_cli_notef(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg("", fmt, ap);
  va_end(ap);
}

int zlb_cli_fail(const zlb_error_t *err) {
  zlb_cli_errorf("%s", err->msg[0] ? err->msg : zlb_strerror(err->code));
  return zlb_exit_code_of(err->code);
}

int zlb_cli_is_help(const char *arg) {
  return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}
