/* Messages and exit codes shared by the subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "zlbench/compare.h"

/* Messages name paths, operators and hosts that come from folders and files
 * other people wrote: control bytes (escape sequences, a newline forging a
 * line) and invalid UTF-8 are shown as \xNN, \n, ..., never sent raw. */
static void vmsg(const char *kind, const char *fmt, va_list ap) {
  zlb_strbuf_t raw = ZLB_STRBUF_INIT, shown = ZLB_STRBUF_INIT;
  fflush(stdout);
  zlb_strbuf_vaddf(&raw, fmt, ap);
  zlb_strbuf_add_printable(&shown, raw.buf ? raw.buf : "");
  fprintf(stderr, "zlbench: %s%s\n", kind, shown.buf ? shown.buf : "");
  zlb_strbuf_release(&raw);
  zlb_strbuf_release(&shown);
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

void zlb_cli_warn_all(const zlb_strvec_t *w) {
  for (size_t i = 0; i < w->n; i++)
    zlb_cli_warnf("%s", w->v[i]);
}

int zlb_cli_res_load(struct zlb_res_set *s, const char *path, zlb_error_t *err) {
  int rc = zlb_res_load(s, path, err);
  zlb_cli_warn_all(&s->warnings);
  return rc;
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
