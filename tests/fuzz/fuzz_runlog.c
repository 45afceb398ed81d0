/* Fuzz target: run.log and FlagGems logs as `zlbench summary` and `batch`
 * read them (zlb_summary_parse_log: our tables, FlagGems tables and
 * `[INFO] {json}` records), then the sort and summary.csv. */
#include "fuzz_util.h"
#include "zlbench/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  zlb_summary_t s;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t csv = ZLB_STRBUF_INIT;
  char *text = fz_cstr(data, size);

  memset(&s, 0, sizeof(s));
  if (zlb_summary_parse_log(&s, text, "run.log", &err) != 0)
    abort(); /* documented not to fail */
  zlb_summary_sort(&s);
  zlb_summary_format_csv(&s, &csv);
  zlb_strbuf_release(&csv);
  zlb_summary_release(&s);
  free(text);
  return 0;
}
