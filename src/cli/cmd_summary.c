/* `zlbench summary DIR`: gather every benchmark table under DIR into
 * summary.csv and print the geometric-mean speedup per operator. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "zlbench/base.h"
#include "zlbench/report.h"

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fputs("usage: zlbench summary DIR [--out FILE] [--quiet]\n"
        "\n"
        "Read every *.log under DIR (our run.log tables, FlagGems' printed tables\n"
        "and its --record log lines), skipping folders named 'attempts', files\n"
        "named 'stderr.log' and symbolic links, and write one CSV row per\n"
        "(operator, dtype, shape) to DIR/summary.csv (format: docs/formats.md).\n"
        "Then print the geometric-mean speedup per operator and dtype.\n"
        "\n"
        "options:\n",
        f);
  zlb_cli_help(f, opts);
  fputs("\n"
        "exit codes: 0 written (also when DIR holds no table: the CSV then has\n"
        "only its header), 2 bad arguments or DIR missing or unreadable,\n"
        "6 the CSV could not be written.\n",
        f);
}

int zlb_cmd_summary(int argc, char **argv) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t path = ZLB_STRBUF_INIT, table = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  const char *dir = NULL, *out = NULL;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  size_t ok = 0, failed = 0;
  int quiet = 0, rc = ZLB_EXIT_OK;

  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_STRING("--out", "FILE", &out, "write the CSV to FILE instead of DIR/summary.csv"),
        ZLB_CLI_FLAG("--quiet", &quiet, "do not print the geometric-mean table"),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("summary", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      goto out;
    case ZLB_CLI_BAD:
      rc = ZLB_EXIT_USAGE;
      goto out;
    default:
      break;
    }
  }
  if (args.n > 1) {
    zlb_cli_errorf("summary: unexpected argument '%s': give one folder", args.v[1]);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  dir = args.n ? args.v[0] : NULL;
  if (!dir) {
    zlb_cli_errorf("summary: missing folder: usage: zlbench summary DIR "
                   "[--out FILE] [--quiet]");
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  if (!zlb_is_dir(dir)) {
    if (zlb_path_exists(dir))
      zlb_cli_errorf("summary: '%s' is not a folder: give the folder of a "
                     "run or batch",
                     dir);
    else
      zlb_cli_errorf("summary: folder '%s' does not exist", dir);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  if ((rc = zlb_cli_out_spares_inputs("summary", out, (const char *const *)&dir, 1, 1)))
    goto out;

  rc = zlb_summary_scan_dir(&s, dir, &err);
  zlb_cli_warn_all(&s.warnings);
  if (rc != 0) {
    zlb_cli_errorf("summary: %s", err.msg);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  zlb_summary_sort(&s);
  if (out)
    zlb_strbuf_addstr(&path, out);
  else
    zlb_path_join(&path, dir, "summary.csv");
  if (out) {
    zlb_strbuf_t csv = ZLB_STRBUF_INIT;
    zlb_summary_format_csv(&s, &csv);
    rc = zlb_write_user_file(out, csv.buf, csv.len, &err);
    zlb_strbuf_release(&csv);
  } else {
    rc = zlb_summary_write_csv(&s, path.buf, &err);
  }
  if (rc != 0) {
    zlb_cli_errorf("summary: %s", err.msg);
    rc = ZLB_EXIT_OUTPUT;
    goto out;
  }

  for (size_t i = 0; i < s.n; i++) {
    if (!strcmp(s.rows[i].status, "SUCCESS"))
      ok++;
    else if (!strcmp(s.rows[i].status, "FAILED"))
      failed++;
  }
  if (s.n == 0) {
    zlb_cli_notef("no benchmark tables found in %zu log%s under '%s'; "
                  "wrote a CSV with only its header",
                  s.nlogs, s.nlogs == 1 ? "" : "s", dir);
  } else if (!quiet) {
    zlb_summary_geomean(&s, &table);
    zlb_summary_ceilings(&s, &table);
    fputs(table.buf, stdout);
  }
  printf("summary: %zu rows (%zu SUCCESS, %zu FAILED) from %zu logs -> %s\n",
         s.n, ok, failed, s.nlogs, path.buf);

out:
  zlb_summary_release(&s);
  zlb_strbuf_release(&path);
  zlb_strbuf_release(&table);
  zlb_strvec_release(&args);
  return rc;
}
