/* `zlbench report DIR [--compare OTHER]`: one self-contained HTML file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cmp_opts.h"
#include "history.h"
#include "zlbench/base.h"
#include "zlbench/compare.h"
#include "zlbench/html.h"

/* Untrusted side files are read only up to this size. */
#define SIDE_MAX (4u << 20)

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fputs("usage: zlbench report DIR [--compare OTHER] [--out FILE] [options]\n"
        "\n"
        "Write one self-contained HTML file (inline CSS and SVG, nothing fetched)\n"
        "about the run or batch folder DIR: operators ok and failed, geometric-mean\n"
        "speedups per dtype, a speedup chart per operator, a roofline chart, the\n"
        "timers and fallback markers, failed operators with their error signature and\n"
        "stderr tail, and the identity. With --compare, the verdicts of 'zlbench\n"
        "compare OTHER DIR', regressions first; with --history, each operator's trend\n"
        "from the history database.\n"
        "\n"
        "options:\n",
        f);
  zlb_cli_help(f, opts);
  fputs("\nexit codes: 0 written, 1 written and, with --compare, a row slower\n"
        "(--fail-on slower, the default), 2 bad arguments, unreadable results or\n"
        "different calibers, 6 the file could not be written.\n",
        f);
}

/* Read DIR/NAME when it exists, capped; NULL when absent, too big or not a
 * regular file (a warning says which). */
static char *side_file(const char *dir, const char *name) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  char *text = NULL;
  zlb_path_join(&p, dir, name);
  if (zlb_read_file_max(p.buf, SIDE_MAX, "a report's side file", &text, NULL, &err) != 0 &&
      err.code != ZLB_ENOTFOUND)
    zlb_cli_warnf("report: %s: left out", err.msg);
  zlb_strbuf_release(&p);
  return text;
}

int zlb_cmd_report(int argc, char **argv) {
  zlb_cmp_opts_t o;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  zlb_res_set_t res = ZLB_RES_SET_INIT, other = ZLB_RES_SET_INIT;
  zlb_cmp_t c;
  zlb_html_input_t in;
  zlb_strbuf_t html = ZLB_STRBUF_INIT, path = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  const char *cmp = NULL, *out = NULL, *db = NULL;
  int rc = ZLB_EXIT_OK, history = 0, have_cmp = 0;
  zlb_trend_t *tr = NULL;
  size_t ntr = 0;

  memset(&c, 0, sizeof(c));
  memset(&in, 0, sizeof(in));
  zlb_cmp_opts_init(&o);
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_STRING("--compare", "OTHER", &cmp,
                       "add the verdicts of DIR against OTHER (a run or batch folder)"),
        ZLB_CLI_INCLUDE(zlb_cmp_opts_table(&o)),
        ZLB_CLI_FLAG("--history", &history,
                     "add each operator's trend from the history database"),
        ZLB_CLI_STRING("--db", "PATH", &db, "the history database (default: see zlbench history)"),
        ZLB_CLI_STRING("--out", "FILE", &out, "where to write (default DIR/report.html)"),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("report", opts, argc, argv, &args, NULL)) {
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
  if (args.n != 1) {
    zlb_cli_errorf("report: give one run or batch folder (%zu given)", args.n);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  if (!zlb_is_dir(args.v[0])) {
    zlb_cli_errorf("report: '%s' is not a folder (give a run or batch folder)", args.v[0]);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  {
    /* The history database is an input too (its default path as well). */
    zlb_strbuf_t dbp = ZLB_STRBUF_INIT;
    const char *inputs[3] = {args.v[0], cmp, NULL};
    if ((history || db) && !zlb_history_path(db, &dbp, &err))
      inputs[2] = dbp.buf;
    zlb_error_clear(&err);
    rc = zlb_cli_out_spares_inputs("report", out, inputs, 3, 0);
    zlb_strbuf_release(&dbp);
    if (rc)
      goto out;
  }
  if (zlb_cli_res_load(&res, args.v[0], &err)) {
    zlb_cli_errorf("report: %s", err.msg);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  if (cmp) {
    if (zlb_cli_res_load(&other, cmp, &err)) {
      zlb_cli_errorf("report: %s", err.msg);
      rc = ZLB_EXIT_USAGE;
      goto out;
    }
    zlb_cmp_run(&c, &other, &res, o.impl, &o.params);
    have_cmp = 1;
    if (zlb_cmp_check_caliber(&c, &o, "report")) {
      rc = ZLB_EXIT_USAGE;
      goto out;
    }
  }
  if (history || db) {
    if (zlb_history_trends(db, &res, &tr, &ntr, &err)) {
      zlb_cli_errorf("report: %s", err.msg);
      rc = ZLB_EXIT_USAGE;
      goto out;
    }
    in.show_trends = 1;
    in.trends = tr;
    in.ntrends = ntr;
  }
  in.dir = args.v[0];
  in.res = &res;
  in.identity = side_file(args.v[0], "run_identity.json");
  in.ops_status = side_file(args.v[0], "ops_status.csv");
  if (in.ops_status) {
    zlb_path_join(&path, args.v[0], "ops_status.csv");
    if (zlb_html_status_check(in.ops_status, path.buf, &err)) {
      zlb_cli_errorf("report: %s", err.msg);
      rc = ZLB_EXIT_USAGE;
      goto out;
    }
    zlb_strbuf_reset(&path);
  }
  in.cmp = have_cmp ? &c : NULL;
  in.cmp_label = cmp;
  zlb_html_report(&in, &html);
  if (out)
    zlb_strbuf_addstr(&path, out);
  else
    zlb_path_join(&path, args.v[0], "report.html");
  if ((out ? zlb_write_user_file : zlb_write_file_atomic)(path.buf, html.buf, html.len, &err)) {
    zlb_cli_errorf("report: %s", err.msg);
    rc = ZLB_EXIT_OUTPUT;
    goto out;
  }
  printf("report: %zu rows from %zu results files%s -> %s\n", res.n, res.nfiles,
         have_cmp ? ", with verdicts" : "", path.buf);
  if (have_cmp && o.fail_on && c.count[ZLB_V_SLOWER])
    rc = ZLB_EXIT_FAILED; /* as zlbench compare: a row slower */

out:
  free((char *)in.identity);
  free((char *)in.ops_status);
  zlb_history_trends_free(tr, ntr);
  zlb_cmp_release(&c);
  zlb_res_release(&res);
  zlb_res_release(&other);
  zlb_strbuf_release(&html);
  zlb_strbuf_release(&path);
  zlb_strvec_release(&args);
  return rc;
}
