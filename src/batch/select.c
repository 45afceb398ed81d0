/* The curated selection: the inventory of operators a batch screens and the
 * dismiss list (every dismissal carries its reason). */
#include <string.h>

#include "zlbench/batch.h"
#include "zlbench/yaml.h"

/* Entries one inventory list or dismiss list may hold: far more than any
 * corpus, and it bounds the duplicate checks (quadratic: a 16 MiB list would
 * take hours). */
#define MAX_ENTRIES 10000

int zlb_inventory_load(const char *path, const char *backend, zlb_strvec_t *ops,
                       zlb_error_t *err) {
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  const zlb_yaml_node_t *list;
  int rc;
  if ((rc = zlb_yaml_load_file(path, &doc, err)))
    return rc;
  if (!doc.root || doc.root->kind != ZLB_YAML_MAP) {
    rc = zlb_error_set(err, ZLB_EPARSE,
                       "%s:%d: an inventory is a map of backend name to operator list", path,
                       doc.root ? doc.root->line : 1);
    goto out;
  }
  list = zlb_yaml_map_get(doc.root, backend);
  if (!list || zlb_yaml_is_null(list))
    goto out; /* no operators for this backend */
  if (list->kind != ZLB_YAML_SEQ) {
    rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: '%s' must list operator names", path,
                       list->line, backend);
    goto out;
  }
  if (list->n > MAX_ENTRIES) {
    rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: '%s' lists more than %d operators", path,
                       list->line, backend, MAX_ENTRIES);
    goto out;
  }
  for (size_t i = 0; i < list->n; i++) {
    const zlb_yaml_node_t *it = list->items[i];
    if (it->kind != ZLB_YAML_SCALAR || !it->scalar[0]) {
      rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: inventory entries are operator names", path,
                         it->line);
      goto out;
    }
    if (zlb_strvec_find(ops, it->scalar) >= 0) {
      rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: operator '%s' is listed twice for '%s'",
                         path, it->line, it->scalar, backend);
      goto out;
    }
    zlb_strvec_push(ops, it->scalar);
  }
out:
  zlb_yaml_doc_release(&doc);
  return rc;
}

int zlb_dismiss_load(const char *path, const char *backend, zlb_strvec_t *ops,
                     zlb_strvec_t *reasons, zlb_error_t *err) {
  zlb_yaml_doc_t doc = ZLB_YAML_DOC_INIT;
  const zlb_yaml_node_t *list;
  int rc;
  if ((rc = zlb_yaml_load_file(path, &doc, err)))
    return rc;
  list = doc.root;
  if (list && list->kind == ZLB_YAML_MAP)
    list = zlb_yaml_map_get(list, "dismissed");
  if (!list || zlb_yaml_is_null(list))
    goto out;
  if (list->kind != ZLB_YAML_SEQ) {
    rc = zlb_error_set(err, ZLB_EPARSE,
                       "%s:%d: 'dismissed' must be a list of {op: NAME, reason: TEXT}", path,
                       list->line);
    goto out;
  }
  if (list->n > MAX_ENTRIES) {
    rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: more than %d dismissals", path, list->line,
                       MAX_ENTRIES);
    goto out;
  }
  for (size_t i = 0; i < list->n; i++) {
    const zlb_yaml_node_t *it = list->items[i], *op, *why, *be;
    if (it->kind != ZLB_YAML_MAP) {
      rc = zlb_error_set(err, ZLB_EPARSE,
                         "%s:%d: a dismissal must be a map {op: NAME, reason: TEXT}", path,
                         it->line);
      goto out;
    }
    op = zlb_yaml_map_get(it, "op");
    why = zlb_yaml_map_get(it, "reason");
    be = zlb_yaml_map_get(it, "backend");
    if (!op || op->kind != ZLB_YAML_SCALAR || !op->scalar[0]) {
      rc = zlb_error_set(err, ZLB_EPARSE, "%s:%d: dismissal without an operator name ('op')",
                         path, it->line);
      goto out;
    }
    /* Without a reason a dismissal cannot be reviewed: refuse it. */
    if (!why || why->kind != ZLB_YAML_SCALAR || !why->scalar[0] ||
        strspn(why->scalar, " \t") == strlen(why->scalar)) {
      rc = zlb_error_set(err, ZLB_EPARSE,
                         "%s:%d: dismissal of '%s' has no reason: every dismissed "
                         "operator needs 'reason: <why>'",
                         path, it->line, op->scalar);
      goto out;
    }
    if (be && be->kind == ZLB_YAML_SCALAR && strcmp(be->scalar, backend))
      continue;
    zlb_strvec_push(ops, op->scalar);
    if (reasons)
      zlb_strvec_push(reasons, why->scalar);
  }
out:
  zlb_yaml_doc_release(&doc);
  return rc;
}
