/* Fuzz target: shape YAML. The YAML reader on the bytes, then what
 * `zlbench run --shape-file`, `--deny-file` and `--inventory` do with them
 * as a file: the shape lookup for a few operators, the deny list, the
 * inventory and the dismiss list. */
#include "fuzz_util.h"
#include "zlbench/batch.h"
#include "zlbench/ops.h"
#include "zlbench/yaml.h"

static size_t walk(const zlb_yaml_node_t *n, int depth) {
  size_t c = 1;
  long long l;
  double d;
  if (!n || depth > 100)
    return c;
  (void)zlb_yaml_is_null(n);
  if (n->kind == ZLB_YAML_SCALAR) {
    (void)zlb_yaml_scalar_long(n, &l);
    (void)zlb_yaml_scalar_double(n, &d);
    c += strlen(n->scalar);
  }
  if (n->kind == ZLB_YAML_SEQ)
    for (size_t i = 0; i < n->n; i++)
      c += walk(n->items[i], depth + 1);
  if (n->kind == ZLB_YAML_MAP)
    for (size_t i = 0; i < n->n; i++) {
      if (i < 8) { /* lookups are linear: all of them would be quadratic */
        (void)zlb_yaml_map_get(n, n->keys[i]);
        (void)zlb_yaml_map_key_line(n, n->keys[i]);
      }
      c += walk(n->values[i], depth + 1);
    }
  return c;
}

static void resolve(const char *path, const char *op, const char *family, int level, int host) {
  zlb_shape_list_t l = ZLB_SHAPE_LIST_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  char buf[512];
  if (zlb_shapes_resolve(path, op, family, level, host, &l, &err) == 0)
    for (size_t i = 0; i < l.n; i++)
      zlb_shape_format(&l.v[i], buf, sizeof(buf));
  zlb_shape_list_release(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strvec_t ops = ZLB_STRVEC_INIT;
  const char *path = fz_path(0, "shapes.yaml");
  char op[128] = "relu", fam[128] = "unary_pointwise";

  if (zlb_yaml_parse((const char *)data, size, "fuzz.yaml", &doc, &err) == 0) {
    const zlb_yaml_node_t *r = doc.root;
    (void)walk(r, 0);
    /* Look up the operators the file names, so the entries are read. */
    if (r && r->kind == ZLB_YAML_MAP && r->n) {
      snprintf(op, sizeof(op), "%s", r->keys[0]);
      snprintf(fam, sizeof(fam), "%s", r->keys[r->n - 1]);
    }
  }
  zlb_yaml_doc_release(&doc);

  fz_write(path, data, size);
  resolve(path, op, fam, 1, 1);
  resolve(path, "no_such_op", fam, 0, 0);
  resolve(path, "no_such_op", "binary_pointwise", 1, 0);
  err = (zlb_error_t)ZLB_ERROR_INIT;
  (void)zlb_deny_load(path, &ops, &err);
  zlb_strvec_release(&ops);
  err = (zlb_error_t)ZLB_ERROR_INIT;
  (void)zlb_inventory_load(path, op, &ops, &err);
  zlb_strvec_release(&ops);
  err = (zlb_error_t)ZLB_ERROR_INIT;
  {
    zlb_strvec_t reasons = ZLB_STRVEC_INIT;
    (void)zlb_dismiss_load(path, op, &ops, &reasons, &err);
    zlb_strvec_release(&reasons);
  }
  zlb_strvec_release(&ops);
  return 0;
}
