/* Helpers of the scheduler commands (cmd_slurm.c, cmd_k8s.c). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sched_util.h"

void zlb_sh_quote(zlb_strbuf_t *out, const char *s) {
  zlb_strbuf_addch(out, '\'');
  for (; *s; s++) {
    if (*s == '\'')
      zlb_strbuf_addstr(out, "'\\''");
    else
      zlb_strbuf_addch(out, *s);
  }
  zlb_strbuf_addch(out, '\'');
}

int zlb_sched_check_batch_args(const char *cmd, const zlb_strvec_t *args) {
  static const char *const own[] = {"--out", "--shard", NULL};
  for (size_t i = 0; i < args->n; i++)
    for (const char *const *o = own; *o; o++) {
      size_t n = strlen(*o);
      if (!strncmp(args->v[i], *o, n) && (args->v[i][n] == '\0' || args->v[i][n] == '=')) {
        zlb_cli_errorf("%s: '%s' is set by 'zlbench %s' (one folder per shard under --out); "
                       "leave it out of the batch options",
                       cmd, *o, cmd);
        return -1;
      }
    }
  /* The batch reads them on the cluster: an unknown or bad one fails now. */
  return zlb_cli_batch_check(args);
}

int zlb_find_program(const char *name, zlb_strbuf_t *out) {
  const char *path = getenv("PATH");
  zlb_strvec_t dirs = ZLB_STRVEC_INIT;
  int found = 0;
  if (strchr(name, '/')) {
    if (access(name, X_OK) == 0) {
      zlb_strbuf_addstr(out, name);
      return 1;
    }
    return 0;
  }
  zlb_strvec_split(&dirs, path ? path : "/usr/bin:/bin", ':');
  for (size_t i = 0; i < dirs.n && !found; i++) {
    zlb_strbuf_t p = ZLB_STRBUF_INIT;
    zlb_path_join(&p, dirs.v[i], name);
    if (access(p.buf, X_OK) == 0) {
      zlb_strbuf_addstr(out, p.buf);
      found = 1;
    }
    zlb_strbuf_release(&p);
  }
  zlb_strvec_release(&dirs);
  return found;
}

void zlb_abs_path(const char *path, zlb_strbuf_t *out) {
  char cwd[4096];
  if (path[0] == '/' || !getcwd(cwd, sizeof(cwd))) {
    zlb_strbuf_addstr(out, path);
    return;
  }
  zlb_path_join(out, cwd, path);
}
