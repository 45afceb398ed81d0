/* Loading every operator library a listing command should see. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ops_load.h"

int zlb_cli_load_all_ops(zlb_op_set_t *set, const zlb_strvec_t *libs, const char *backend,
                         zlb_strvec_t *warnings, zlb_error_t *err) {
  zlb_strbuf_t dir = ZLB_STRBUF_INIT;
  zlb_strvec_t names = ZLB_STRVEC_INIT;
  DIR *d;
  struct dirent *de;
  int rc = 0;

  for (size_t i = 0; libs && i < libs->n; i++)
    if ((rc = zlb_ops_load_library(set, libs->v[i], err)))
      goto out;
  if ((rc = zlb_ops_load_env(set, err)) || (rc = zlb_ops_libdir(&dir, err)))
    goto out;
  d = opendir(dir.buf);
  if (!d)
    goto out; /* no built-in libraries: not an error for a listing */
  while ((de = readdir(d)))
    if (zlb_starts_with(de->d_name, "libzlb_ops_") && strstr(de->d_name, ".so"))
      zlb_strvec_push(&names, de->d_name);
  closedir(d);
  zlb_strvec_sort(&names);
  for (size_t i = 0; i < names.n; i++) {
    char be[64];
    zlb_error_t e = ZLB_ERROR_INIT;
    const char *dot = strstr(names.v[i], ".so");
    size_t n = (size_t)(dot - names.v[i]) - strlen("libzlb_ops_");
    if (n >= sizeof(be))
      continue;
    memcpy(be, names.v[i] + strlen("libzlb_ops_"), n);
    be[n] = '\0';
    if (backend && strcmp(backend, be))
      continue;
    /* A library whose runtime is missing here (e.g. the CUDA corpus on a
     * machine without CUDA libraries) is reported, not fatal. */
    if (zlb_ops_load_builtin(set, be, &e) && warnings)
      zlb_strvec_push(warnings, e.msg);
  }
out:
  zlb_strvec_release(&names);
  zlb_strbuf_release(&dir);
  return rc;
}
