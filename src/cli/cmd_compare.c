/* `zlbench compare A B`: is B faster or slower than A, beyond noise and
 * measured the same way? Rules: docs/compare.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cmp_opts.h"
#include "zlbench/base.h"
#include "zlbench/compare.h"

static int opt_when(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  (void)opt;
  if (strcmp(v, "auto") && strcmp(v, "always") && strcmp(v, "never"))
    return zlb_cli_bad_value(name, v, "auto, always or never");
  *(const char **)ptr = v;
  return 0;
}

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fputs("usage: zlbench compare A B [options]\n"
        "\n"
        "Compare the results of B against A: A and B are folders of zlbench run or\n"
        "batch (every results.json under them) or results files. Rows are matched by\n"
        "operator, implementation, dtype and shape; each matched row gets a verdict\n"
        "from its samples: faster, slower, same or noisy (a Mann-Whitney U test and a\n"
        "minimum change), with the ratio of medians and its 95 % interval. Results\n"
        "of different calibers are refused. Rules: docs/compare.md.\n"
        "\n"
        "options:\n",
        f);
  zlb_cli_help(f, opts);
  fputs("\n"
        "exit codes: 0 no row slower, 1 a row slower (with --fail-on slower),\n"
        "2 bad arguments, unreadable results or different calibers, 6 output not written.\n",
        f);
}

int zlb_cmd_compare(int argc, char **argv) {
  zlb_cmp_opts_t o;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  zlb_res_set_t a = ZLB_RES_SET_INIT, b = ZLB_RES_SET_INIT;
  zlb_cmp_t c;
  zlb_strbuf_t text = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_cmp_format_t fmt = ZLB_FMT_TEXT;
  const char *out = NULL;
  int rc = ZLB_EXIT_OK, color;

  memset(&c, 0, sizeof(c));
  zlb_cmp_opts_init(&o);
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_INCLUDE(zlb_cmp_opts_table(&o)),
        ZLB_CLI_CALLBACK("--format", "FMT", zlb_cmp_opt_format, &fmt,
                         "text (default: a table; colours on a terminal), md (markdown\n"
                         "for a pull-request comment), csv or json"),
        ZLB_CLI_STRING("--out", "FILE", &out, "write the comparison to FILE (atomically)"),
        ZLB_CLI_CALLBACK("--color", "WHEN", opt_when, &o.color,
                         "auto (default: on a terminal without NO_COLOR), always, never"),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("compare", opts, argc, argv, &args, NULL)) {
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
  if (args.n != 2) {
    zlb_cli_errorf("compare: give two result folders or files: zlbench compare A B");
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  if ((rc = zlb_cli_out_spares_inputs("compare", out, (const char *const *)args.v, 2, 0)))
    goto out;
  if (zlb_cli_res_load(&a, args.v[0], &err) || zlb_cli_res_load(&b, args.v[1], &err)) {
    zlb_cli_errorf("compare: %s", err.msg);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  zlb_cmp_run(&c, &a, &b, o.impl, &o.params);
  if (zlb_cmp_check_caliber(&c, &o, "compare")) {
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  color = !out && fmt == ZLB_FMT_TEXT &&
          (!strcmp(o.color, "always") ||
           (!strcmp(o.color, "auto") && isatty(STDOUT_FILENO) && !getenv("NO_COLOR")));
  zlb_cmp_format(&c, fmt, args.v[0], args.v[1], color, &text);
  if (out) {
    if (zlb_write_user_file(out, text.buf, text.len, &err)) {
      zlb_cli_errorf("compare: %s", err.msg);
      rc = ZLB_EXIT_OUTPUT;
      goto out;
    }
  } else if (fwrite(text.buf, 1, text.len, stdout) != text.len || fflush(stdout)) {
    zlb_cli_errorf("compare: cannot write the output");
    rc = ZLB_EXIT_OUTPUT;
    goto out;
  }
  if (o.fail_on && c.count[ZLB_V_SLOWER])
    rc = ZLB_EXIT_FAILED;

out:
  zlb_cmp_release(&c);
  zlb_res_release(&a);
  zlb_res_release(&b);
  zlb_strbuf_release(&text);
  zlb_strvec_release(&args);
  return rc;
}
