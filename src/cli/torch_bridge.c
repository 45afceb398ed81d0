/* `--baseline torch` of run and batch: the Python bridge
 * (python3 -m zlbench.torch_baseline) over the finished output folder, in
 * a child process whose output is the user's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "zlbench/ops.h"

int zlb_cli_check_baseline(const char *name, const char *value) {
  if (!value || !strcmp(value, "vendor") || !strcmp(value, "torch"))
    return 0;
  zlb_cli_errorf("%s: '%s' is not a baseline (vendor or torch)", name, value);
  return -1;
}

/* PYTHONPATH with the package (next to the assets: <source>/python in a
 * build tree, <prefix>/share/zlbench/python installed) first. */
static void python_path(zlb_strbuf_t *out) {
  zlb_strbuf_t assets = ZLB_STRBUF_INIT;
  const char *old = getenv("PYTHONPATH");
  if (!zlb_assets_dir(&assets, NULL)) {
    zlb_strbuf_addf(out, "%s/../python", assets.buf);
    if (!zlb_is_dir(out->buf))
      zlb_strbuf_reset(out);
  }
  if (old && *old)
    zlb_strbuf_addf(out, "%s%s", out->len ? ":" : "", old);
  zlb_strbuf_release(&assets);
}

int zlb_cli_torch_baseline(const char *dir, int device) {
  const char *py = getenv("ZL_PYTHON");
  zlb_strbuf_t path = ZLB_STRBUF_INIT, libdir = ZLB_STRBUF_INIT;
  char dev[24];
  pid_t pid;
  int status = 0, code;
  if (!py || !*py)
    py = "python3";
  snprintf(dev, sizeof(dev), "%d", device);
  python_path(&path);
  if (zlb_ops_libdir(&libdir, NULL))
    zlb_strbuf_reset(&libdir);
  printf("\ntorch baseline: %s -m zlbench.torch_baseline %s --device %s\n", py, dir, dev);
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) {
    zlb_cli_errorf("--baseline torch: cannot start %s: %s", py, strerror(errno));
    code = ZLB_EXIT_UNAVAIL;
    goto out;
  }
  if (pid == 0) {
    char m[] = "-m", mod[] = "zlbench.torch_baseline", devopt[] = "--device";
    char *argv[] = {(char *)py, m, mod, (char *)dir, devopt, dev, NULL};
    if (path.len)
      setenv("PYTHONPATH", path.buf, 1);
    if (libdir.len && !getenv("ZL_LIB_DIR"))
      setenv("ZL_LIB_DIR", libdir.buf, 1);
    execvp(py, argv);
    fprintf(stderr, "zlbench: error: --baseline torch: cannot run %s: %s (set ZL_PYTHON)\n", py,
            strerror(errno));
    _exit(127);
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      zlb_cli_errorf("--baseline torch: waiting for %s: %s", py, strerror(errno));
      code = ZLB_EXIT_FAILED;
      goto out;
    }
  if (WIFEXITED(status)) {
    switch (WEXITSTATUS(status)) {
    case 0:
      code = ZLB_EXIT_OK;
      break;
    case 2:
      code = ZLB_EXIT_USAGE;
      break;
    case 3:
    case 127:
      code = ZLB_EXIT_UNAVAIL;
      break;
    case 6:
      code = ZLB_EXIT_OUTPUT;
      break;
    default:
      zlb_cli_errorf("--baseline torch: %s exited with %d", py, WEXITSTATUS(status));
      code = ZLB_EXIT_FAILED;
    }
  } else {
    zlb_cli_errorf("--baseline torch: %s ended by signal %d", py,
                   WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    code = ZLB_EXIT_FAILED;
  }
out:
  zlb_strbuf_release(&path);
  zlb_strbuf_release(&libdir);
  return code;
}
