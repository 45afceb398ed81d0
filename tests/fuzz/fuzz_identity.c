/* Fuzz target: run_identity.json as `zlbench compare`, `report` and
 * `history` read it: the caliber (zlb_caliber_parse) and the identity
 * section of the HTML report. */
#include "fuzz_util.h"
#include "zlbench/compare.h"
#include "zlbench/html.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  zlb_res_set_t s = ZLB_RES_SET_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_caliber_t cal;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  zlb_html_input_t in;
  char *text;

  if (zlb_caliber_parse((const char *)data, size, "run_identity.json", &cal, &err) == 0) {
    for (int f = 0; f < ZLB_CAL_COUNT; f++)
      if (!memchr(cal.v[f], '\0', sizeof(cal.v[f])))
        abort(); /* every field a terminated string */
  } else if (!err.msg[0]) {
    abort();
  }
  /* `zlbench report` hands the text as read (it stops at a NUL). */
  text = fz_cstr(data, size);
  memset(&in, 0, sizeof(in));
  in.dir = fz_dir();
  in.res = &s;
  in.identity = text;
  zlb_html_report(&in, &out);
  zlb_strbuf_release(&out);
  free(text);
  return 0;
}
