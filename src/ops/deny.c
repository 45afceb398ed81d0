/* The capture deny list: operators whose capture attempt is itself the
 * damage (it poisons the context), so the attempt is skipped. */
#include <string.h>

#include "zlbench/ops.h"
#include "zlbench/yaml.h"

int zlb_deny_load(const char *path, zlb_strvec_t *ops, zlb_error_t *err) {
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  const zlb_yaml_node_t *root, *list;
  int rc;
  if ((rc = zlb_yaml_load_file(path, &doc, err)))
    return rc;
  root = doc.root;
  list = root;
  /* Accept {capture_deny: [...]} as well as a bare list or map. */
  if (root && root->kind == ZLB_YAML_MAP && zlb_yaml_map_get(root, "capture_deny"))
    list = zlb_yaml_map_get(root, "capture_deny");
  if (!list || zlb_yaml_is_null(list))
    goto out;
  if (list->kind == ZLB_YAML_SEQ) {
    for (size_t i = 0; i < list->n; i++) {
      const zlb_yaml_node_t *it = list->items[i], *name = it;
      if (it->kind == ZLB_YAML_MAP)
        name = zlb_yaml_map_get(it, "op");
      if (!name || name->kind != ZLB_YAML_SCALAR || !name->scalar[0]) {
        rc = zlb_error_set(err, ZLB_EPARSE,
                           "%s:%d: a deny-list entry must be an operator name or {op: NAME, reason: ...}",
                           path, it->line);
        goto out;
      }
      zlb_strvec_push(ops, name->scalar);
    }
  } else if (list->kind == ZLB_YAML_MAP) {
    for (size_t i = 0; i < list->n; i++)
      zlb_strvec_push(ops, list->keys[i]);
  } else {
    rc = zlb_error_set(err, ZLB_EPARSE,
                       "%s:%d: the deny list must be a list of operator names or a map of name: reason",
                       path, list->line);
  }
out:
  zlb_yaml_doc_release(&doc);
  return rc;
}
