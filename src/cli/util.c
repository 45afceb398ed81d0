/* Messages and exit codes shared by the subcommands. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "zlbench/compare.h"

/* The names a results folder's readers and writers own (docs/formats.md). */
static int results_owned(const char *base, int own_summary) {
  static const char *const names[] = {"results.json", "ops_status.csv", "run_identity.json",
                                      "zlbench_rows.json", ".complete", ".progress",
                                      "batch.lock", "merge.lock"};
  size_t n = strlen(base);
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!strcmp(base, names[i]))
      return 1;
  if (!own_summary && !strcmp(base, "summary.csv"))
    return 1;
  return n > 4 && !strcmp(base + n - 4, ".log");
}

/* realpath of `path`'s folder joined with its last name (the file itself
 * need not exist; a link is followed, as the writer follows it). */
static int resolve_out(const char *path, char *buf, size_t cap) {
  char dir[PATH_MAX], *slash;
  const char *base;
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
    return realpath(path, buf) ? 0 : -1;
  if (strlen(path) >= sizeof(dir))
    return -1;
  strcpy(dir, path);
  slash = strrchr(dir, '/');
  if (!slash) {
    strcpy(dir, ".");
    base = path;
  } else {
    base = path + (slash - dir) + 1;
    if (slash == dir)
      slash[1] = '\0';
    else
      *slash = '\0';
  }
  if (!*base || !realpath(dir, buf) || strlen(buf) + 1 + strlen(base) >= cap)
    return -1;
  if (strcmp(buf, "/"))
    strcat(buf, "/");
  strcat(buf, base);
  return 0;
}

int zlb_cli_out_dir_kind(const char *cmd, const char *dir, const char *schema) {
  static const char *const batch_files[] = {"ops_status.csv", "batch.lock", "ops"};
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  struct stat rst;
  int rc = 0;
  if (!zlb_is_dir(dir))
    return 0;
  for (size_t i = 0; i < sizeof(batch_files) / sizeof(batch_files[0]) && !rc; i++) {
    struct stat st;
    zlb_strbuf_reset(&p);
    zlb_path_join(&p, dir, batch_files[i]);
    if (lstat(p.buf, &st) == 0) {
      zlb_cli_errorf("%s: '%s' holds a batch's results ('%s'): zlbench %s there would replace "
                     "its run_identity.json and mix its results into the batch's; give "
                     "another folder",
                     cmd, dir, batch_files[i], cmd);
      rc = ZLB_EXIT_USAGE;
    }
  }
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, dir, "results.json");
  /* Its schema, the first key zlbench writes: read from the file's start
   * only, so that a results file of any size is checked. */
  if (!rc && stat(p.buf, &rst) == 0 && S_ISREG(rst.st_mode)) {
    char head[4096], was[64] = "";
    FILE *f = fopen(p.buf, "rb");
    size_t got = f ? fread(head, 1, sizeof(head) - 1, f) : 0;
    const char *k, *q;
    if (f)
      fclose(f);
    head[got] = '\0';
    if ((k = strstr(head, "\"schema\"")) && (k = strchr(k + 8, ':')) &&
        (k = strchr(k, '"')) && (q = strchr(k + 1, '"')) && (size_t)(q - k - 1) < sizeof(was))
      snprintf(was, sizeof(was), "%.*s", (int)(q - k - 1), k + 1);
    if (was[0] && strcmp(was, schema)) {
      zlb_cli_errorf("%s: '%s' holds results of another kind (schema '%s', not '%s'): "
                     "zlbench %s there would replace them; give another folder",
                     cmd, p.buf, was, schema, cmd);
      rc = ZLB_EXIT_USAGE;
    }
  }
  zlb_strbuf_release(&p);
  return rc;
}

int zlb_cli_out_spares_inputs(const char *cmd, const char *out, const char *const *inputs,
                              size_t n, int own_summary) {
  char o[PATH_MAX], in[PATH_MAX];
  const char *base;
  if (!out || resolve_out(out, o, sizeof(o)))
    return 0; /* nothing there yet to destroy: the writer says what fails */
  base = strrchr(o, '/') + 1;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    size_t len;
    if (!inputs[i] || !realpath(inputs[i], in) || stat(in, &st) != 0)
      continue;
    if (!strcmp(o, in)) {
      zlb_cli_errorf("%s: --out '%s' is the input '%s' itself: choose another file", cmd, out,
                     inputs[i]);
      return ZLB_EXIT_USAGE;
    }
    /* An input file's folder holds what is read beside it (its identity). */
    if (!S_ISDIR(st.st_mode)) {
      char *slash = strrchr(in, '/');
      if (!slash)
        continue;
      if (slash == in)
        slash[1] = '\0';
      else
        *slash = '\0';
    }
    len = strlen(in);
    if ((!strncmp(o, in, len) && (o[len] == '/' || !strcmp(in, "/"))) &&
        results_owned(base, own_summary)) {
      zlb_cli_errorf("%s: --out '%s' is a file of the results in '%s' (a %s is read or "
                     "written by zlbench there): writing it would destroy them; choose "
                     "another name",
                     cmd, out, inputs[i], base);
      return ZLB_EXIT_USAGE;
    }
  }
  return 0;
}

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
