/* Test shim (LD_PRELOAD): rename() fails with ENOSPC when its destination
 * contains $ZL_SHIM_FAIL_RENAME, as on a file system that fills up while
 * a batch moves an operator's results into place. Every other rename goes
 * to the C library. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rename(const char *from, const char *to) {
  static int (*real)(const char *, const char *);
  const char *pat = getenv("ZL_SHIM_FAIL_RENAME");
  if (pat && *pat && to && strstr(to, pat)) {
    errno = ENOSPC;
    return -1;
  }
  if (!real) {
    void *sym = dlsym(RTLD_NEXT, "rename");
    if (!sym) {
      errno = ENOSYS;
      return -1;
    }
    memcpy(&real, &sym, sizeof(real));
  }
  return real(from, to);
}
