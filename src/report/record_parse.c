/* FlagGems `--record log` lines: `[INFO] {json}` with asdict(BenchmarkResult)
 * (docs/formats.md, summary.csv) -> one summary row per result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"
#include "zlbench/base.h"
#include "zlbench/json.h"

/* Deeper values are written as null: shape details are a few levels deep,
 * and this bounds the recursion on hostile input. */
#define MAX_DEPTH 64

/* Python's spelling for non-finite numbers; integers without a fraction;
 * otherwise the shortest text that reads back to the same double. */
static void add_number(zlb_strbuf_t *out, double v) {
  char buf[64];
  if (isnan(v)) {
    zlb_strbuf_addstr(out, "NaN");
  } else if (isinf(v)) {
    zlb_strbuf_addstr(out, v > 0 ? "Infinity" : "-Infinity");
  } else if (v == floor(v) && fabs(v) < 1e15) {
    zlb_strbuf_addf(out, "%.0f", v == 0 ? 0.0 : v);
  } else {
    for (int prec = 15; prec <= 17; prec++) {
      snprintf(buf, sizeof(buf), "%.*g", prec, v);
      if (strtod(buf, NULL) == v)
        break;
    }
    zlb_strbuf_addstr(out, buf);
  }
}

static void add_string(zlb_strbuf_t *out, const char *s) {
  zlb_strbuf_addch(out, '"');
  zlb_strbuf_add_json_escaped(out, s ? s : "");
  zlb_strbuf_addch(out, '"');
}

/* Compact JSON: no blanks, members in their original order. */
static void add_compact(zlb_strbuf_t *out, const zlb_json_t *v, int depth) {
  if (!v || depth > MAX_DEPTH) {
    zlb_strbuf_addstr(out, "null");
    return;
  }
  switch (v->kind) {
  case ZLB_JSON_BOOL:
    zlb_strbuf_addstr(out, v->boolean ? "true" : "false");
    break;
  case ZLB_JSON_NUMBER:
    add_number(out, v->number);
    break;
  case ZLB_JSON_STRING:
    add_string(out, v->string);
    break;
  case ZLB_JSON_ARRAY:
    zlb_strbuf_addch(out, '[');
    for (size_t i = 0; i < v->n; i++) {
      if (i)
        zlb_strbuf_addch(out, ',');
      add_compact(out, v->items[i], depth + 1);
    }
    zlb_strbuf_addch(out, ']');
    break;
  case ZLB_JSON_OBJECT:
    zlb_strbuf_addch(out, '{');
    for (size_t i = 0; i < v->n; i++) {
      if (i)
        zlb_strbuf_addch(out, ',');
      add_string(out, v->keys[i]);
      zlb_strbuf_addch(out, ':');
      add_compact(out, v->items[i], depth + 1);
    }
    zlb_strbuf_addch(out, '}');
    break;
  case ZLB_JSON_NULL:
  default:
    zlb_strbuf_addstr(out, "null");
    break;
  }
}

/* A number member; NAN when absent, null or not a number. */
static double number(const zlb_json_t *obj, const char *key) {
  const zlb_json_t *v = zlb_json_get(obj, key);
  return v && v->kind == ZLB_JSON_NUMBER ? v->number : NAN;
}

static int present(const zlb_json_t *v) {
  return v && v->kind != ZLB_JSON_NULL;
}

size_t zlb__record_parse(zlb_summary_t *out, const char *json, size_t len,
                         const char *source) {
  zlb_json_t *root = NULL;
  const zlb_json_t *op, *dtype, *result;
  zlb_error_t err = ZLB_ERROR_INIT;
  size_t added = 0;

  if (zlb_json_parse(json, len, "record", &root, &err) != 0)
    return 0; /* a Python dict repr (query mode) or a broken line */
  if (!root || root->kind != ZLB_JSON_OBJECT)
    goto out;
  op = zlb_json_get(root, "op_name");
  dtype = zlb_json_get(root, "dtype");
  result = zlb_json_get(root, "result");
  if (!op || op->kind != ZLB_JSON_STRING || !op->string[0] || !result ||
      result->kind != ZLB_JSON_ARRAY)
    goto out;
  for (size_t i = 0; i < result->n; i++) {
    const zlb_json_t *m = result->items[i], *shape;
    zlb_strbuf_t sb = ZLB_STRBUF_INIT;
    zlb_summary_row_t row;
    if (!m || m->kind != ZLB_JSON_OBJECT)
      continue;
    shape = zlb_json_get(m, "shape_detail");
    if (!present(shape))
      shape = zlb_json_get(m, "legacy_shape");
    if (present(shape))
      add_compact(&sb, shape, 0);
    row.op = zlb_xstrdup(op->string);
    row.family = zlb_xstrdup("");
    row.dtype = dtype && dtype->kind == ZLB_JSON_STRING
                    ? zlb__summary_dtype(dtype->string, strlen(dtype->string))
                    : zlb_xstrdup("");
    row.shape = zlb_strbuf_detach(&sb);
    row.timer = zlb_xstrdup("");
    row.marker = zlb_xstrdup("");
    row.status = zlb_xstrdup(present(zlb_json_get(m, "error_msg")) ? "FAILED"
                                                                   : "SUCCESS");
    row.source = zlb_xstrdup(source ? source : "");
    row.base_ms = number(m, "latency_base");
    row.cand_ms = number(m, "latency");
    row.speedup = number(m, "speedup");
    row.gbps = number(m, "gbps");
    row.tflops = number(m, "tflops");
    row.pct_peak = NAN;
    row.base_host_us = row.cand_host_us = NAN;
    row.ceiling = NULL;
    zlb__summary_push(out, &row);
    added++;
  }
out:
  if (root)
    zlb_json_free(root);
  return added;
}
