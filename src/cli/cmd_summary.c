/* `zlbench summary DIR`: gather every benchmark table under DIR into
 * summary.csv and print the geometric-mean speedup per operator. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "zlbench/base.h"
#include "zlbench/report.h"

static const char usage[] =
    "usage: zlbench summary DIR [--out FILE] [--quiet]\n"
    "\n"
    "Read every *.log under DIR (our run.log tables, FlagGems' printed tables\n"
    "and its --record log lines), skipping folders named 'attempts', files\n"
    "named 'stderr.log' and symbolic links, and write one CSV row per\n"
    "(operator, dtype, shape) to DIR/summary.csv (format: docs/formats.md).\n"
    "Then print the geometric-mean speedup per operator and dtype.\n"
    "\n"
    "options:\n"
    "  --out FILE   write the CSV to FILE instead of DIR/summary.csv\n"
    "  --quiet      do not print the geometric-mean table\n"
    "  -h, --help   show this help\n"
    "\n"
    "exit codes: 0 written (also when DIR holds no table: the CSV then has\n"
    "only its header), 2 bad arguments or DIR missing or unreadable,\n"
    "6 the CSV could not be written.\n";

int zlb_cmd_summary(int argc, char **argv) {
  zlb_summary_t s = ZLB_SUMMARY_INIT;
  zlb_strbuf_t path = ZLB_STRBUF_INIT, table = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  const char *dir = NULL, *out = NULL;
  size_t ok = 0, failed = 0;
  int quiet = 0, rc = ZLB_EXIT_OK;

  for (int i = 1; i < argc; i++) {
    const char *value;
    int r;
    if (zlb_cli_is_help(argv[i])) {
      fputs(usage, stdout);
      return ZLB_EXIT_OK;
    }
    r = zlb_cli_opt(argc, argv, &i, "--out", &value);
    if (r < 0)
      return ZLB_EXIT_USAGE;
    if (r > 0) {
      out = value;
    } else if (zlb_cli_flag(argv, i, "--quiet")) {
      quiet = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      zlb_cli_errorf("summary: unknown option '%s' (see 'zlbench summary "
                     "--help')",
                     argv[i]);
      return ZLB_EXIT_USAGE;
    } else if (dir) {
      zlb_cli_errorf("summary: unexpected argument '%s': give one folder",
                     argv[i]);
      return ZLB_EXIT_USAGE;
    } else {
      dir = argv[i];
    }
  }
  if (!dir) {
    zlb_cli_errorf("summary: missing folder: usage: zlbench summary DIR "
                   "[--out FILE] [--quiet]");
    return ZLB_EXIT_USAGE;
  }
  if (!zlb_is_dir(dir)) {
    if (zlb_path_exists(dir))
      zlb_cli_errorf("summary: '%s' is not a folder: give the folder of a "
                     "run or batch",
                     dir);
    else
      zlb_cli_errorf("summary: folder '%s' does not exist", dir);
    return ZLB_EXIT_USAGE;
  }

  if (zlb_summary_scan_dir(&s, dir, &err) != 0) {
    zlb_cli_errorf("summary: %s", err.msg);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  zlb_summary_sort(&s);
  if (out)
    zlb_strbuf_addstr(&path, out);
  else
    zlb_path_join(&path, dir, "summary.csv");
  if (zlb_summary_write_csv(&s, path.buf, &err) != 0) {
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
    fputs(table.buf, stdout);
  }
  printf("summary: %zu rows (%zu SUCCESS, %zu FAILED) from %zu logs -> %s\n",
         s.n, ok, failed, s.nlogs, path.buf);

out:
  zlb_summary_release(&s);
  zlb_strbuf_release(&path);
  zlb_strbuf_release(&table);
  return rc;
}
