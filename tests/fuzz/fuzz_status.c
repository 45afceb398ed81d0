/* Fuzz target: ops_status.csv as `zlbench batch` (resuming), `merge` and
 * `report` read it: zlb__status_read and zlb__status_read_checked on the
 * bytes as a file, report's check and the failed-operators section of the
 * HTML report. */
#include "batch/batch_int.h"
#include "fuzz_util.h"
#include "zlbench/compare.h"
#include "zlbench/html.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  zlb__status_row_t *rows = NULL;
  size_t n = 0;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_res_set_t s = ZLB_RES_SET_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  zlb_html_input_t in;
  const char *path = fz_path(0, "ops_status.csv");
  char *text;

  fz_write(path, data, size);
  if (zlb__status_read(path, &rows, &n, &err) == 0)
    for (size_t i = 0; i < n; i++)
      if (!memchr(rows[i].op, '\0', sizeof(rows[i].op)))
        abort();
  free(rows);
  rows = NULL;
  err = (zlb_error_t)ZLB_ERROR_INIT;
  if (zlb__status_read_checked(path, 1 << 20, &rows, &n, &err) == 0)
    for (size_t i = 0; i < n; i++)
      if (!zlb__op_name_ok(rows[i].op))
        abort(); /* the checked reader lets no bad name through */
  free(rows);

  text = fz_cstr(data, size);
  /* `zlbench report` checks the text first and refuses a bad one; the
   * section is rendered here either way (it must hold on any text). */
  err = (zlb_error_t)ZLB_ERROR_INIT;
  if (zlb_html_status_check(text, "ops_status.csv", &err) != 0 && !err.msg[0])
    abort();
  memset(&in, 0, sizeof(in));
  in.dir = fz_dir();
  in.res = &s;
  in.ops_status = text;
  zlb_html_report(&in, &out);
  zlb_strbuf_release(&out);
  free(text);
  return 0;
}
