/* Messages, exit codes and option parsing shared by the subcommands. */
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

int zlb_cli_opt(int argc, char **argv, int *i, const char *name, const char **value) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n))
    return 0;
  if (a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (a[n] != '\0')
    return 0;
  if (*i + 1 >= argc) {
    zlb_cli_errorf("option '%s' needs a value", name);
    return -1;
  }
  *value = argv[++*i];
  return 1;
}

int zlb_cli_flag(char **argv, int i, const char *name) { return !strcmp(argv[i], name); }
