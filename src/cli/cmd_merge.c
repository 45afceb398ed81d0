/* `zlbench merge OUT DIR...`: the output folders of a batch's host shards
 * combined into one folder with a batch folder's layout. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "zlbench/batch.h"

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fputs("usage: zlbench merge OUT DIR... [--copy]\n"
        "\n"
        "Combine the output folders of a batch's host shards (zlbench batch --shard I/N,\n"
        "or the shards of 'zlbench slurm' and 'zlbench k8s') into OUT, a folder with a\n"
        "batch folder's layout: ops/<op>/ (hard links to the shards' files, or copies),\n"
        "ops_status.csv, summary.csv and run_identity.json listing every shard with its\n"
        "host, devices and index. The shards must belong together (same operator\n"
        "selection and shard count, backend, tool version, dtypes, run options, time\n"
        "limit and retries). Each operator comes from the shard the host hash gives it;\n"
        "the operators no shard finished are listed with that shard. A DIR without a\n"
        "shard's run_identity.json counts as a shard that never started. OUT must be\n"
        "new, empty, or an earlier merge of the same batch. An operator whose folder is\n"
        "or holds a symbolic link is refused (missing). Merging again (after a missing\n"
        "shard ran) completes OUT.\n"
        "\n"
        "options:\n",
        f);
  zlb_cli_help(f, opts);
  fputs("\n"
        "exit codes: 0 every operator merged, 1 some are missing (listed), 2 bad arguments\n"
        "or shards that do not belong together or hold invalid files, 6 OUT cannot be\n"
        "written.\n",
        f);
}

/* Print the result; the exit code it means. */
int zlb_cli_merge_report(const zlb_merge_result_t *r, const char *out) {
  for (size_t i = 0; i < r->notes.n; i++)
    zlb_cli_warnf("%s", r->notes.v[i]);
  zlb_strbuf_t a = ZLB_STRBUF_INIT, b = ZLB_STRBUF_INIT;
  /* Operator names, hosts and reasons come from the shards' files. */
  for (size_t i = 0; i < r->missing.n; i++)
    printf("missing: %s (%s)\n", zlb_printable(&a, r->missing.v[i]),
           zlb_printable(&b, r->why.v[i]));
  printf("zlbench merge: %d of %d shards, %zu operators: %zu merged (%d ok, %d failed), %zu "
         "missing -> %s\n",
         r->shards_found, r->shard_count, r->total, r->merged, r->ok, r->failed, r->missing.n,
         zlb_printable(&a, out));
  fflush(stdout);
  zlb_strbuf_release(&a);
  zlb_strbuf_release(&b);
  return r->missing.n ? ZLB_EXIT_FAILED : ZLB_EXIT_OK;
}

int zlb_cmd_merge(int argc, char **argv) {
  zlb_merge_opts_t o;
  zlb_merge_result_t r;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strvec_t args = ZLB_STRVEC_INIT, dirs = ZLB_STRVEC_INIT;
  int copy = 0, code;

  memset(&o, 0, sizeof(o));
  memset(&r, 0, sizeof(r));
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_FLAG("--copy", &copy,
                     "copy the shards' files instead of hard-linking them (links fall\n"
                     "back to copies across file systems)"),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("merge", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      code = ZLB_EXIT_OK;
      goto out;
    case ZLB_CLI_BAD:
      code = ZLB_EXIT_USAGE;
      goto out;
    default:
      break;
    }
  }
  if (args.n < 2) {
    zlb_cli_errorf("merge: usage: zlbench merge OUT DIR... (the merged folder, then the "
                   "shards' folders)");
    code = ZLB_EXIT_USAGE;
    goto out;
  }
  for (size_t i = 0; i < args.n; i++)
    if (!args.v[i][0]) {
      zlb_cli_errorf("merge: an empty folder name (argument %zu)", i + 1);
      code = ZLB_EXIT_USAGE;
      goto out;
    }
  for (size_t i = 1; i < args.n; i++)
    zlb_strvec_push(&dirs, args.v[i]);
  o.out_dir = args.v[0];
  o.dirs = &dirs;
  o.copy = copy;
  o.argc = argc;
  o.argv = argv;
  if (zlb_merge_run(&o, &r, &err)) {
    code = zlb_cli_fail(&err);
    goto out;
  }
  code = zlb_cli_merge_report(&r, o.out_dir);
out:
  zlb_merge_result_release(&r);
  zlb_strvec_release(&args);
  zlb_strvec_release(&dirs);
  return code;
}
