/* Fuzz target: the JSON reader every JSON input goes through
 * (results.json, run_identity.json, peaks, FlagGems records). */
#include "fuzz_util.h"
#include "zlbench/json.h"

/* Touch every value the way the readers do. */
static size_t walk(const zlb_json_t *v, int depth) {
  size_t n = 1;
  if (!v || depth > 200)
    return n;
  if (v->kind == ZLB_JSON_STRING)
    n += strlen(v->string);
  if (v->kind == ZLB_JSON_OBJECT)
    for (size_t i = 0; i < v->n; i++) {
      n += strlen(v->keys[i]);
      if (i < 8) { /* lookups are linear: all of them would be quadratic */
        (void)zlb_json_get(v, v->keys[i]);
        (void)zlb_json_get_string(v, v->keys[i], "");
        (void)zlb_json_get_number(v, v->keys[i], 0);
      }
    }
  if (v->kind == ZLB_JSON_ARRAY || v->kind == ZLB_JSON_OBJECT)
    for (size_t i = 0; i < v->n; i++)
      n += walk(v->items[i], depth + 1);
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  zlb_json_t *root = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  if (zlb_json_parse((const char *)data, size, "fuzz.json", &root, &err) == 0) {
    if (!root)
      abort(); /* success must give a value */
    (void)walk(root, 0);
  } else if (root || !err.msg[0]) {
    abort(); /* an error must leave no tree and say why */
  }
  zlb_json_free(root);
  return 0;
}
