/* Test helper: print every value of a JSON file, one "PATH TYPE [VALUE]"
 * line each (".host.pid number 42", ".argv[0] string zlbench"; no value for
 * arrays, objects and null; newlines in strings become spaces), so shell
 * tests can check documents with awk instead of python. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/json.h"

static const char *type_name(zlb_json_kind_t k) {
  switch (k) {
  case ZLB_JSON_NULL: return "null";
  case ZLB_JSON_BOOL: return "bool";
  case ZLB_JSON_NUMBER: return "number";
  case ZLB_JSON_STRING: return "string";
  case ZLB_JSON_ARRAY: return "array";
  case ZLB_JSON_OBJECT: return "object";
  }
  return "unknown";
}

static void walk(const zlb_json_t *v, zlb_strbuf_t *path) {
  size_t len = path->len;
  printf("%s %s", len ? path->buf : ".", type_name(v->kind));
  if (v->kind == ZLB_JSON_STRING) {
    putchar(' ');
    for (const char *c = v->string; *c; c++)
      putchar(*c == '\n' || *c == '\r' ? ' ' : *c);
  } else if (v->kind == ZLB_JSON_NUMBER) {
    printf(" %.17g", v->number);
  } else if (v->kind == ZLB_JSON_BOOL) {
    printf(" %s", v->boolean ? "true" : "false");
  }
  putchar('\n');
  for (size_t i = 0; i < v->n; i++) {
    if (v->kind == ZLB_JSON_OBJECT)
      zlb_strbuf_addf(path, ".%s", v->keys[i]);
    else
      zlb_strbuf_addf(path, "[%zu]", i);
    walk(v->items[i], path);
    zlb_strbuf_setlen(path, len);
  }
}

int main(int argc, char **argv) {
  char *text = NULL;
  size_t len = 0;
  zlb_json_t *j = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t path = ZLB_STRBUF_INIT;
  if (argc != 2) {
    fprintf(stderr, "usage: json_types FILE\n");
    return 2;
  }
  if (zlb_read_file(argv[1], &text, &len, &err) ||
      zlb_json_parse(text, len, argv[1], &j, &err)) {
    fprintf(stderr, "json_types: %s\n", err.msg);
    free(text);
    return 1;
  }
  walk(j, &path);
  zlb_strbuf_release(&path);
  zlb_json_free(j);
  free(text);
  return 0;
}
