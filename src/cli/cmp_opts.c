/* The options `zlbench compare`, `report --compare` and `history check`
 * share (one table, one meaning) and the caliber refusal. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cmp_opts.h"

static int opt_pct(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  double x;
  (void)opt;
  if (zlb_parse_double(v, &x) || !(x >= 0) || x >= 100)
    return zlb_cli_bad_value(name, v, "a percentage from 0 to 100 (2 means 2 %)");
  *(double *)ptr = x / 100;
  return 0;
}

static int opt_us(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  double x;
  (void)opt;
  if (zlb_parse_double(v, &x) || !(x >= 0) || x > 1e6)
    return zlb_cli_bad_value(name, v, "microseconds, 0 or more (0.1)");
  *(double *)ptr = x / 1e3;
  return 0;
}

static int opt_alpha(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  double x;
  (void)opt;
  if (zlb_parse_double(v, &x) || !(x > 0) || x >= 1)
    return zlb_cli_bad_value(name, v, "a probability between 0 and 1 (0.05)");
  *(double *)ptr = x;
  return 0;
}

static int opt_impl(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  static const char *const words[] = {"candidate", "baseline", "speedup", NULL};
  static const zlb_cmp_impl_t impls[] = {ZLB_CMP_CANDIDATE, ZLB_CMP_BASELINE, ZLB_CMP_SPEEDUP};
  int i;
  (void)opt;
  if (zlb_cli_word_in(name, v, words, "baseline, candidate or speedup", &i))
    return -1;
  *(zlb_cmp_impl_t *)ptr = impls[i];
  return 0;
}

int zlb_cmp_opt_format(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  static const char *const words[] = {"text", "md", "csv", "json", NULL};
  static const zlb_cmp_format_t fmts[] = {ZLB_FMT_TEXT, ZLB_FMT_MD, ZLB_FMT_CSV, ZLB_FMT_JSON};
  int i;
  (void)opt;
  if (zlb_cli_word_in(name, v, words, "text, md, csv or json", &i))
    return -1;
  *(zlb_cmp_format_t *)ptr = fmts[i];
  return 0;
}

static int opt_fail_on(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  static const char *const words[] = {"never", "slower", NULL};
  (void)opt;
  return zlb_cli_word_in(name, v, words, "slower or never", ptr);
}

void zlb_cmp_opts_init(zlb_cmp_opts_t *o) {
  zlb_cmp_params_t p = ZLB_CMP_PARAMS_INIT;
  memset(o, 0, sizeof(*o));
  o->params = p;
  o->impl = ZLB_CMP_CANDIDATE;
  o->fail_on = 1;
  o->color = "auto";
}

const zlb_cli_option_t *zlb_cmp_opts_table(zlb_cmp_opts_t *o) {
  static zlb_cli_option_t t[10];
  const zlb_cli_option_t v[] = {
      ZLB_CLI_CALLBACK("--impl", "WHICH", opt_impl, &o->impl,
                       "what to compare: candidate (default: candidate against candidate),\n"
                       "baseline, or speedup (each side's candidate over its baseline)"),
      ZLB_CLI_CALLBACK("--threshold", "PCT", opt_pct, &o->params.threshold,
                       "minimum change that counts, in percent (default 2)"),
      ZLB_CLI_CALLBACK("--throttled-threshold", "PCT", opt_pct, &o->params.throttled_threshold,
                       "minimum change on a row measured with throttled clocks on\n"
                       "either side, in percent (default 50)"),
      ZLB_CLI_CALLBACK("--min-change-us", "US", opt_us, &o->params.min_abs_ms,
                       "minimum change that counts, in microseconds of the medians\n"
                       "(default 0.1: what the graph timer resolves; 0 turns it off)"),
      ZLB_CLI_CALLBACK("--alpha", "P", opt_alpha, &o->params.alpha,
                       "significance level of the Mann-Whitney U test (default 0.05)"),
      ZLB_CLI_FLAG("--allow-caliber-mismatch", &o->allow_mismatch,
                   "compare results measured differently (timer, autotune, backend,\n"
                   "device, L2 flush, return mode, tool major version); every row is labelled"),
      ZLB_CLI_CALLBACK("--fail-on", "WHAT", opt_fail_on, &o->fail_on,
                       "slower (default: exit 1 when a row is slower) or never"),
      ZLB_CLI_END,
  };
  memcpy(t, v, sizeof(v));
  return t;
}

/* The caliber refusal: 0 when the comparison may go on. */
int zlb_cmp_check_caliber(const zlb_cmp_t *c, const zlb_cmp_opts_t *o, const char *cmd) {
  if (!c->caliber_diff)
    return 0;
  if (o->allow_mismatch) {
    zlb_cli_warnf("%s: the two sides were measured differently; every row is labelled", cmd);
    return 0;
  }
  zlb_cli_errorf("%s: refused: the results were measured differently (different caliber):", cmd);
  for (int k = 0; k < ZLB_CAL_COUNT; k++)
    if (c->caliber_diff & (1u << k)) {
      /* The values come from the identities: untrusted, shown escaped. */
      zlb_strbuf_t va = ZLB_STRBUF_INIT, vb = ZLB_STRBUF_INIT;
      fprintf(stderr, "  %s: A=%s B=%s\n", zlb_caliber_field(k),
              *c->caliber_a[k] ? zlb_printable(&va, c->caliber_a[k]) : "(unknown)",
              *c->caliber_b[k] ? zlb_printable(&vb, c->caliber_b[k]) : "(unknown)");
      zlb_strbuf_release(&va);
      zlb_strbuf_release(&vb);
    }
  fprintf(stderr, "  (--allow-caliber-mismatch compares anyway)\n");
  return -1;
}

