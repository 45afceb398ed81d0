/* `zlbench inventory`: the curated operator inventory against what the
 * libraries really register. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ops_load.h"
#include "zlbench/batch.h"
#include "zlbench/device.h"

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fprintf(f, "usage: zlbench inventory [--backend NAME] [--check | --registered] "
             "[--inventory FILE] [--lib PATH]\n\n"
             "Without flags: print the inventory (assets/inventory.yaml) per backend.\n\n"
             "options:\n");
  zlb_cli_help(f, opts);
}

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const zlb_op_entry_t *)a)->op->name, ((const zlb_op_entry_t *)b)->op->name);
}

int zlb_cmd_inventory(int argc, char **argv) {
  zlb_op_set_t set = ZLB_OP_SET_INIT;
  zlb_strvec_t libs = ZLB_STRVEC_INIT, warn = ZLB_STRVEC_INIT, backends = ZLB_STRVEC_INIT;
  zlb_strbuf_t inv = ZLB_STRBUF_INIT, shown = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  const char *backend = NULL, *inv_path = NULL;
  int check = 0, registered = 0, code = ZLB_EXIT_OK, problems = 0, known = 0;

  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_FLAG("--check", &check,
                     "load the libraries and fail (exit 1) for every operator\n"
                     "that is listed but not registered, or registered but not listed"),
        ZLB_CLI_FLAG("--registered", &registered,
                     "print the registered operators, one per line:\n"
                     "NAME FAMILY DTYPES (what `zlbench batch` reads)"),
        ZLB_CLI_BACKEND(&backend, "one backend (default: every backend with a library here)"),
        ZLB_CLI_STRING("--inventory", "FILE", &inv_path, "another inventory file"),
        ZLB_CLI_LIB(&libs),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("inventory", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      goto out;
    case ZLB_CLI_BAD:
      goto usage_error;
    default:
      break;
    }
  }
  if (args.n) {
    zlb_cli_errorf("unexpected argument '%s' for 'zlbench inventory' (see zlbench inventory "
                   "--help)",
                   args.v[0]);
    goto usage_error;
  }
  if (check && registered) {
    zlb_cli_errorf("--check and --registered are alternatives: give one");
    goto usage_error;
  }
  if (backend) {
    const zlb_backend_desc_t *d;
    /* Unknown here may still be a backend an operator library adds. */
    if (zlb_backend_lookup(backend, &d, &err) == 0) {
      backend = d->name;
      known = 1;
    }
  }
  if (inv_path)
    zlb_strbuf_addstr(&inv, inv_path);
  zlb_error_clear(&err);
  if (zlb_cli_load_all_ops(&set, &libs, backend, &warn, &err)) {
    code = zlb_cli_fail(&err);
    goto out;
  }
  if (backend && !known && !zlb_ops_serves(&set, backend)) {
    /* A typo would make --check pass with nothing listed or registered. */
    zlb_cli_errorf("unknown backend '%s': neither built in nor added by an operator library "
                   "here (`zlbench devices` lists the backends)",
                   backend);
    code = ZLB_EXIT_USAGE;
    goto out;
  }
  if (set.n > 1) /* no libraries found: nothing (and no array) to sort */
    qsort(set.v, set.n, sizeof(*set.v), cmp_entry);
  if (registered) {
    for (size_t i = 0; i < set.n; i++) {
      zlb_strbuf_t dts = ZLB_STRBUF_INIT;
      if (backend && strcmp(set.v[i].op->backend, backend))
        continue;
      zlb_dtype_mask_format(set.v[i].op->dtypes, &dts);
      printf("%s %s %s\n", set.v[i].op->name, set.v[i].op->family, dts.buf);
      zlb_strbuf_release(&dts);
    }
    goto out;
  }
  for (size_t i = 0; i < warn.n; i++)
    zlb_cli_warnf("%s", warn.v[i]);
  if (!inv.len && zlb_assets_dir(&inv, &err) == 0)
    zlb_strbuf_addstr(&inv, "/inventory.yaml");
  if (!inv.len) {
    code = zlb_cli_fail(&err);
    goto out;
  }
  if (backend)
    zlb_strvec_push(&backends, backend);
  else
    for (size_t i = 0; i < set.n; i++)
      if (zlb_strvec_find(&backends, set.v[i].op->backend) < 0)
        zlb_strvec_push(&backends, set.v[i].op->backend);
  for (size_t b = 0; b < backends.n; b++) {
    zlb_strvec_t listed = ZLB_STRVEC_INIT;
    const char *be = backends.v[b];
    int before = problems;
    if (zlb_inventory_load(inv.buf, be, &listed, &err)) {
      code = zlb_cli_fail(&err);
      zlb_strvec_release(&listed);
      goto out;
    }
    if (!check) {
      printf("%s: %zu operators\n", be, listed.n);
      for (size_t i = 0; i < listed.n; i++) {
        const zlb_op_entry_t *e = zlb_ops_find(&set, listed.v[i], be);
        /* names from the inventory file: shown with control bytes escaped */
        printf("  %-20s %s\n", zlb_printable(&shown, listed.v[i]),
               e ? e->op->family : "(not registered)");
      }
    } else {
      for (size_t i = 0; i < listed.n; i++)
        if (!zlb_ops_find(&set, listed.v[i], be)) {
          printf("%s: '%s' is listed in %s but no library registers it\n", be,
                 zlb_printable(&shown, listed.v[i]), inv.buf);
          problems++;
        }
      for (size_t i = 0; i < set.n; i++)
        if (!strcmp(set.v[i].op->backend, be) && zlb_strvec_find(&listed, set.v[i].op->name) < 0) {
          printf("%s: '%s' is registered by %s but not listed in %s\n", be, set.v[i].op->name,
                 set.v[i].library, inv.buf);
          problems++;
        }
      printf("%s: %zu listed, %s\n", be, listed.n, problems > before ? "MISMATCH" : "ok");
    }
    zlb_strvec_release(&listed);
  }
  if (problems)
    code = ZLB_EXIT_FAILED;
  goto out;
usage_error:
  code = ZLB_EXIT_USAGE;
out:
  zlb_op_set_release(&set);
  zlb_strvec_release(&libs);
  zlb_strvec_release(&warn);
  zlb_strvec_release(&backends);
  zlb_strbuf_release(&inv);
  zlb_strbuf_release(&shown);
  zlb_strvec_release(&args);
  return code;
}
