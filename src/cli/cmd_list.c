/* `zlbench list`: operators with family, backend, dtypes and impls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ops_load.h"
#include "zlbench/device.h"

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fprintf(f, "usage: zlbench list [--backend NAME] [--family NAME] [--families] [--lib PATH]\n\n"
             "List the operators the loaded libraries register: name, family, backend,\n"
             "dtypes, baseline and candidate implementations and flags.\n\n"
             "options:\n");
  zlb_cli_help(f, opts);
}

static int cmp_entry(const void *a, const void *b) {
  const zlb_op_t *x = ((const zlb_op_entry_t *)a)->op, *y = ((const zlb_op_entry_t *)b)->op;
  int c = strcmp(x->backend, y->backend);
  if (!c)
    c = strcmp(x->family, y->family);
  return c ? c : strcmp(x->name, y->name);
}

static void flags_str(const zlb_op_t *op, char *buf, size_t len) {
  unsigned f = op->baseline.flags | op->candidate.flags;
  snprintf(buf, len, "%s%s%s%s", f & ZLB_IMPL_NO_CAPTURE ? "no-capture " : "",
           f & ZLB_IMPL_USES_RNG ? "rng " : "", f & ZLB_IMPL_AUTOTUNES ? "autotune " : "",
           f ? "" : "-");
}

int zlb_cmd_list(int argc, char **argv) {
  zlb_op_set_t set = ZLB_OP_SET_INIT;
  zlb_strvec_t libs = ZLB_STRVEC_INIT, warn = ZLB_STRVEC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  const char *backend = NULL, *family = NULL;
  const zlb_backend_desc_t *desc;
  zlb_error_t lookup = ZLB_ERROR_INIT;
  int families = 0, code = ZLB_EXIT_OK;
  size_t shown = 0;

  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_BACKEND(&backend, "only this backend's operators (aliases accepted)"),
        ZLB_CLI_STRING("--family", "NAME", &family, "only this family"),
        ZLB_CLI_FLAG("--families", &families,
                     "list families with their operator counts instead"),
        ZLB_CLI_LIB(&libs),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("list", opts, argc, argv, &args, NULL)) {
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
    zlb_cli_errorf("unexpected argument '%s' for 'zlbench list' (see zlbench list --help)",
                   args.v[0]);
    goto usage_error;
  }
  /* A backend an operator library adds (--lib) is known only once the
   * libraries are loaded: looked up before, checked after. */
  if (backend && zlb_backend_lookup(backend, &desc, &lookup) == 0)
    backend = desc->name;
  if (zlb_cli_load_all_ops(&set, &libs, backend, &warn, &err)) {
    code = zlb_cli_fail(&err);
    goto out;
  }
  if (backend && lookup.code && !zlb_ops_serves(&set, backend)) {
    zlb_cli_fail(&lookup);
    goto usage_error;
  }
  /* Only this backend's operators, and this family's. */
  {
    size_t k = 0;
    for (size_t i = 0; i < set.n; i++) {
      if ((!backend || !strcmp(set.v[i].op->backend, backend)) &&
          (!family || !strcmp(set.v[i].op->family, family)))
        set.v[k++] = set.v[i];
      else
        free(set.v[i].library);
    }
    set.n = k;
    if (family && !k) {
      /* A typo would list nothing and pass. */
      zlb_cli_errorf("no operator of family '%s' here (`zlbench list --families` lists them)",
                     family);
      goto usage_error;
    }
  }
  for (size_t i = 0; i < warn.n; i++)
    zlb_cli_warnf("%s", warn.v[i]);
  if (set.n > 1)
    qsort(set.v, set.n, sizeof(*set.v), cmp_entry);
  if (families) {
    printf("%-8s %-20s %s\n", "Backend", "Family", "Operators");
    for (size_t i = 0; i < set.n;) {
      size_t j = i;
      zlb_strbuf_t names = ZLB_STRBUF_INIT;
      while (j < set.n && !strcmp(set.v[j].op->backend, set.v[i].op->backend) &&
             !strcmp(set.v[j].op->family, set.v[i].op->family)) {
        zlb_strbuf_addf(&names, "%s%s", j > i ? ", " : "", set.v[j].op->name);
        j++;
      }
      printf("%-8s %-20s %zu: %s\n", set.v[i].op->backend, set.v[i].op->family, j - i,
             names.buf);
      zlb_strbuf_release(&names);
      i = j;
    }
    goto out;
  }
  printf("%-16s %-18s %-7s %-28s %-10s %-10s %s\n", "Operator", "Family", "Backend",
         "Dtypes", "Baseline", "Candidate", "Flags");
  for (size_t i = 0; i < set.n; i++) {
    const zlb_op_t *op = set.v[i].op;
    zlb_strbuf_t dts = ZLB_STRBUF_INIT;
    char flags[64];
    shown++;
    zlb_dtype_mask_format(op->dtypes, &dts);
    flags_str(op, flags, sizeof(flags));
    printf("%-16s %-18s %-7s %-28s %-10s %-10s %s\n", op->name, op->family, op->backend,
           dts.buf, op->baseline.name, op->candidate.name, flags);
    zlb_strbuf_release(&dts);
  }
  printf("%zu operator%s\n", shown, shown == 1 ? "" : "s");
  goto out;
usage_error:
  code = ZLB_EXIT_USAGE;
out:
  zlb_op_set_release(&set);
  zlb_strvec_release(&libs);
  zlb_strvec_release(&warn);
  zlb_strvec_release(&args);
  return code;
}
