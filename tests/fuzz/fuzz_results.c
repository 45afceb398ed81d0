/* Fuzz target: results.json as `zlbench compare`, `report` and `history`
 * read it (zlb_res_parse), then what they do with the rows: the comparison
 * of the set with itself in every format, and the HTML report. */
#include "fuzz_util.h"
#include "zlbench/compare.h"
#include "zlbench/html.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  zlb_res_set_t s = ZLB_RES_SET_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_cmp_params_t p = ZLB_CMP_PARAMS_INIT;
  zlb_caliber_t cal;

  memset(&cal, 0, sizeof(cal));
  snprintf(cal.v[ZLB_CAL_TIMER], sizeof(cal.v[0]), "graph");
  if (zlb_res_parse(&s, (const char *)data, size, "results.json", &cal, &err) == 0) {
    zlb_cmp_t c;
    zlb_strbuf_t out = ZLB_STRBUF_INIT;
    zlb_html_input_t in;
    /* Few resamples: the statistics are not under test, the rows are. */
    p.resamples = 16;
    memset(&c, 0, sizeof(c));
    zlb_cmp_run(&c, &s, &s, (zlb_cmp_impl_t)(size % 3), &p);
    for (int f = ZLB_FMT_TEXT; f <= ZLB_FMT_JSON; f++)
      zlb_cmp_format(&c, (zlb_cmp_format_t)f, "a", "b", f == ZLB_FMT_TEXT, &out);
    memset(&in, 0, sizeof(in));
    in.dir = fz_dir();
    in.res = &s;
    in.cmp = &c;
    in.cmp_label = "b";
    zlb_html_report(&in, &out);
    zlb_strbuf_release(&out);
    zlb_cmp_release(&c);
  } else if (!err.msg[0]) {
    abort(); /* an error must say why */
  }
  zlb_res_release(&s);
  return 0;
}
