/* `zlbench list`: operators with family, backend, dtypes and impls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ops_load.h"
#include "zlbench/device.h"

static void usage(FILE *f) {
  fprintf(f, "usage: zlbench list [--backend NAME] [--family NAME] [--families] [--lib PATH]\n\n"
             "List the operators the loaded libraries register: name, family, backend,\n"
             "dtypes, baseline and candidate implementations and flags.\n\n"
             "options:\n"
             "  --backend NAME   only this backend's operators (aliases accepted)\n"
             "  --family NAME    only this family\n"
             "  --families       list families with their operator counts instead\n"
             "  --lib PATH       load another operator library (repeatable; env ZL_OP_LIBS)\n"
             "  -h, --help       this text\n");
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
  const char *backend = NULL, *family = NULL, *v;
  const zlb_backend_desc_t *desc;
  int families = 0, code = ZLB_EXIT_OK, r;
  size_t shown = 0;

  for (int i = 1; i < argc; i++) {
    if (zlb_cli_is_help(argv[i])) {
      usage(stdout);
      goto out;
    }
    if ((r = zlb_cli_opt(argc, argv, &i, "--backend", &v)) != 0) {
      if (r < 0 || (zlb_backend_lookup(v, &desc, &err) && zlb_cli_fail(&err)))
        goto usage_error;
      backend = desc->name;
    } else if ((r = zlb_cli_opt(argc, argv, &i, "--family", &v)) != 0) {
      if (r < 0)
        goto usage_error;
      family = v;
    } else if ((r = zlb_cli_opt(argc, argv, &i, "--lib", &v)) != 0) {
      if (r < 0)
        goto usage_error;
      zlb_strvec_push(&libs, v);
    } else if (zlb_cli_flag(argv, i, "--families")) {
      families = 1;
    } else {
      zlb_cli_errorf("unknown argument '%s' for 'zlbench list'", argv[i]);
      goto usage_error;
    }
  }
  if (zlb_cli_load_all_ops(&set, &libs, backend, &warn, &err)) {
    code = zlb_cli_fail(&err);
    goto out;
  }
  for (size_t i = 0; i < warn.n; i++)
    zlb_cli_warnf("%s", warn.v[i]);
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
    if (family && strcmp(op->family, family))
      continue;
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
  return code;
}
