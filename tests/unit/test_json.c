/* Unit tests of the JSON reader: accepted documents against a canonical
 * re-serialisation, every error with its exact line:column message, the
 * nesting and size limits, member lookups, bounded (non NUL-terminated)
 * input, and what the tree builder must not get wrong. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/json.h"

#ifndef ZLB_TEST_DATA
#define ZLB_TEST_DATA "tests/data"
#endif

/* ---- canonical form ---------------------------------------------------------
 * Compact, members in document order, numbers in the
 * shortest form that reads back exactly, NaN / Infinity as tokens. */

static void canon_number(zlb_strbuf_t *out, double d) {
  char buf[64];
  int prec;
  if (isnan(d)) {
    zlb_strbuf_addstr(out, "NaN");
    return;
  }
  if (isinf(d)) {
    zlb_strbuf_addstr(out, d < 0 ? "-Infinity" : "Infinity");
    return;
  }
  if (d == floor(d) && fabs(d) < 1e15) { /* integers in full */
    snprintf(buf, sizeof(buf), "%.0f", d);
    zlb_strbuf_addstr(out, buf);
    return;
  }
  for (prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof(buf), "%.*g", prec, d);
    if (strtod(buf, NULL) == d)
      break;
  }
  zlb_strbuf_addstr(out, buf);
}

static void canon_string(zlb_strbuf_t *out, const char *s) {
  zlb_strbuf_addch(out, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      zlb_strbuf_addf(out, "\\%c", c);
    else if (c < 0x20)
      zlb_strbuf_addf(out, "\\u%04x", c);
    else
      zlb_strbuf_addch(out, c);
  }
  zlb_strbuf_addch(out, '"');
}

static void canon(zlb_strbuf_t *out, const zlb_json_t *v) {
  size_t i;
  switch (v->kind) {
  case ZLB_JSON_NULL:
    zlb_strbuf_addstr(out, "null");
    break;
  case ZLB_JSON_BOOL:
    zlb_strbuf_addstr(out, v->boolean ? "true" : "false");
    break;
  case ZLB_JSON_NUMBER:
    canon_number(out, v->number);
    break;
  case ZLB_JSON_STRING:
    canon_string(out, v->string);
    break;
  case ZLB_JSON_ARRAY:
    zlb_strbuf_addch(out, '[');
    for (i = 0; i < v->n; i++) {
      if (i)
        zlb_strbuf_addch(out, ',');
      canon(out, v->items[i]);
    }
    zlb_strbuf_addch(out, ']');
    break;
  case ZLB_JSON_OBJECT:
    zlb_strbuf_addch(out, '{');
    for (i = 0; i < v->n; i++) {
      if (i)
        zlb_strbuf_addch(out, ',');
      canon_string(out, v->keys[i]);
      zlb_strbuf_addch(out, ':');
      canon(out, v->items[i]);
    }
    zlb_strbuf_addch(out, '}');
    break;
  }
}

static zlb_json_t *parse_ok(const char *text, size_t len) {
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_json_t *v = NULL;
  if (zlb_json_parse(text, len, "t.json", &v, &err) != 0)
    fail_msg("parse failed: %s\n  input: %s", err.msg, text);
  assert_non_null(v);
  return v;
}

/* ---- accepted input ----------------------------------------------------------- */

static const struct {
  const char *in;
  const char *canon;
} good[] = {
    {"0", "0"},
    {"-0", "-0"},
    {"42", "42"},
    {"-12.25E-2", "-0.1225"},
    {"1.5e3", "1500"},
    {"1E+2", "100"},
    {"0.1", "0.1"},
    {"123456789012345678", "1.2345678901234568e+17"},
    {"1e400", "Infinity"}, /* out of range reads as infinity, as strtod does */
    {"true", "true"},
    {"false", "false"},
    {"null", "null"},
    {"NaN", "NaN"},
    {"Infinity", "Infinity"},
    {"-Infinity", "-Infinity"},
    {"[NaN, -Infinity, Infinity, 1]", "[NaN,-Infinity,Infinity,1]"},
    {"\"\"", "\"\""},
    {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\\"\\\\/\\u0008\\u000c\\u000a\\u000d\\u0009\""},
    {"\"\\u00e9\\u20AC\\ud83d\\ude00\"", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""},
    {"\"caf\xc3\xa9\"", "\"caf\xc3\xa9\""}, /* UTF-8 passes through */
    {" [ ] ", "[]"},
    {"{}", "{}"},
    {"[1,[2,[3,[]]]]", "[1,[2,[3,[]]]]"},
    {"\r\n\t {\"k\" : [ true , null ] } \n", "{\"k\":[true,null]}"},
    {"{\"a\":1,\"b\":{\"c\":\"d\"}}", "{\"a\":1,\"b\":{\"c\":\"d\"}}"},
    {"\xef\xbb\xbf[1]", "[1]"}, /* a byte order mark is skipped */
    {"{\"speedup\": NaN, \"latency_ms\": [0.012345, Infinity]}",
     "{\"speedup\":NaN,\"latency_ms\":[0.012345,Infinity]}"},
};

static void test_good(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    zlb_strbuf_t out = ZLB_STRBUF_INIT;
    zlb_json_t *v = parse_ok(good[i].in, strlen(good[i].in));
    canon(&out, v);
    if (strcmp(out.buf, good[i].canon))
      fail_msg("input %s\n  got:      %s\n  expected: %s", good[i].in, out.buf,
               good[i].canon);
    zlb_json_free(v);
    zlb_strbuf_release(&out);
  }
}

/* ---- errors ------------------------------------------------------------------- */

static const struct {
  const char *in;
  const char *msg;
} bad[] = {
    {"", "t.json:1:1: unexpected end of input, expected a value"},
    {"   \n  ", "t.json:2:3: unexpected end of input, expected a value"},
    {"[1, 2", "t.json:1:1: unterminated array: missing closing ']'"},
    {"[1 2]", "t.json:1:4: unexpected '2', expected ',' or ']'"},
    {"[1,]", "t.json:1:4: unexpected ']', expected a value"},
    {"[\n\n   }", "t.json:3:4: unexpected '}', expected a value"},
    {"{\"a\" 1}", "t.json:1:6: unexpected '1', expected ':' after the key"},
    {"{a: 1}", "t.json:1:2: unexpected 'a', expected a string key"},
    {"{\"a\": 1,}", "t.json:1:9: unexpected '}', expected a string key"},
    {"{\"a\": 1 \"b\": 2}", "t.json:1:9: unexpected '\"', expected ',' or '}'"},
    {"{\"a\": 1", "t.json:1:1: unterminated object: missing closing '}'"},
    {"{\"a\"", "t.json:1:1: unterminated object: missing closing '}'"},
    {"{\"a\":  ", "t.json:1:1: unterminated object: missing closing '}'"},
    {"[1,\n", "t.json:1:1: unterminated array: missing closing ']'"},
    {"\n  {\"a\": \"x", "t.json:2:9: unterminated string: missing closing '\"'"},
    {"{\"a\": [1, {\"b\": [true, \"x",
     "t.json:1:24: unterminated string: missing closing '\"'"},
    {"\"a\nb\"", "t.json:1:1: unterminated string: missing closing '\"'"},
    {"\"a\\", "t.json:1:1: unterminated string: missing closing '\"'"},
    {"\"a\tb\"", "t.json:1:3: control character 0x09 in a string (escape it)"},
    {"\"\\x\"", "t.json:1:2: invalid escape '\\x' in a string"},
    {"\"\\u12\"", "t.json:1:2: invalid escape: '\\u' needs 4 hex digits"},
    {"\"\\ud83d\"",
     "t.json:1:2: invalid escape: high surrogate \\ud83d without a low "
     "surrogate after it"},
    {"\"\\ud83d\\u0041\"",
     "t.json:1:2: invalid escape: high surrogate \\ud83d without a low "
     "surrogate after it"},
    {"\"\\ude00\"", "t.json:1:2: invalid escape: unpaired low surrogate \\ude00"},
    {"\"\\u0000\"",
     "t.json:1:2: '\\u0000' is not supported: strings are NUL-terminated"},
    {"01", "t.json:1:1: invalid number: leading zeros are not allowed"},
    {"-01", "t.json:1:2: invalid number: leading zeros are not allowed"},
    {"1.", "t.json:1:3: invalid number: expected a digit after '.'"},
    {"1.e5", "t.json:1:3: invalid number: expected a digit after '.'"},
    {"1e", "t.json:1:3: invalid number: expected a digit in the exponent"},
    {"1e+", "t.json:1:4: invalid number: expected a digit in the exponent"},
    {"-", "t.json:1:2: unexpected end of input, expected a digit"},
    {"-a", "t.json:1:2: unexpected 'a', expected a digit"},
    {"+1", "t.json:1:1: unexpected '+', expected a value"},
    {".5", "t.json:1:1: unexpected '.', expected a value"},
    {"tru",
     "t.json:1:1: invalid literal (expected true, false, null, NaN or Infinity)"},
    {"[nan]",
     "t.json:1:2: invalid literal (expected true, false, null, NaN or Infinity)"},
    {"-Inf",
     "t.json:1:2: invalid literal (expected true, false, null, NaN or Infinity)"},
    {"[1] [2]",
     "t.json:1:5: unexpected '[', expected the end of the input after the value"},
    {"{\"a\":1}\nx",
     "t.json:2:1: unexpected 'x', expected the end of the input after the value"},
    {"truex",
     "t.json:1:5: unexpected 'x', expected the end of the input after the value"},
    {"\x01", "t.json:1:1: unexpected byte 0x01, expected a value"},
    /* Duplicate keys: which value a reader took would be a guess. The
     * key is compared decoded, shown escaped, the earliest repeat named. */
    {"{\"operator\": \"relu\",\n \"operator\": \"add\"}",
     "t.json:2:2: duplicate key 'operator' (first on line 1)"},
    {"{\"a\": 1, \"\\u0061\": 2}", "t.json:1:10: duplicate key 'a' (first on line 1)"},
    {"[{\"a\": {\"x\": 1}}, {\"b\": {\"y\": 1, \"y\": 2}, \"b\": 3}]",
     "t.json:1:34: duplicate key 'y' (first on line 1)"},
    {"{\"k\\u001b]0;t\\u0007\": 1, \"k\\u001b]0;t\\u0007\": 2}",
     "t.json:1:26: duplicate key 'k\\x1b]0;t\\x07' (first on line 1)"},
    {"{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,"
     "\"j\":10,\"k\":11,\"l\":12,\"m\":13,\"n\":14,\"o\":15,\"p\":16,\"q\":17,"
     "\"r\":18,\n\"c\":0}",
     "t.json:2:1: duplicate key 'c' (first on line 1)"},
    {"'a'", "t.json:1:1: unexpected ''', expected a value"},
};

static void test_bad(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    zlb_error_t err = ZLB_ERROR_INIT;
    zlb_json_t *v = (zlb_json_t *)&err; /* must be reset to NULL */
    int rc = zlb_json_parse(bad[i].in, strlen(bad[i].in), "t.json", &v, &err);
    if (rc != ZLB_EPARSE || strcmp(err.msg, bad[i].msg))
      fail_msg("input %s\n  rc %d\n  got:      %s\n  expected: %s", bad[i].in,
               rc, err.msg, bad[i].msg);
    assert_null(v);
  }
}

static void test_depth_limit(void **state) {
  zlb_strbuf_t text = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_json_t *v = NULL;
  const zlb_json_t *inner;
  int depth = 0;
  (void)state;
  /* 128 levels are accepted */
  zlb_strbuf_addpad(&text, '[', 128);
  zlb_strbuf_addpad(&text, ']', 128);
  v = parse_ok(text.buf, text.len);
  for (inner = v; inner->kind == ZLB_JSON_ARRAY && inner->n; inner = inner->items[0])
    depth++;
  assert_int_equal(depth, 127); /* the innermost array is empty */
  zlb_json_free(v);
  /* 129 are not, mixed objects included, and a huge run stops early */
  zlb_strbuf_reset(&text);
  zlb_strbuf_addpad(&text, '[', 128);
  zlb_strbuf_addstr(&text, "{}");
  zlb_strbuf_addpad(&text, ']', 128);
  assert_int_equal(zlb_json_parse(text.buf, text.len, "t.json", &v, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg, "t.json:1:129: nesting deeper than 128 levels");
  zlb_strbuf_reset(&text);
  for (depth = 0; depth < 100000; depth++)
    zlb_strbuf_addstr(&text, "{\"k\":");
  assert_int_equal(zlb_json_parse(text.buf, text.len, "t.json", &v, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg, "t.json:1:641: nesting deeper than 128 levels");
  assert_null(v);
  zlb_strbuf_release(&text);
}

/* ---- lookups -------------------------------------------------------------------- */

static void test_get(void **state) {
  static const char text[] =
      "{\"op\": \"softmax\", \"ms\": 2.5, \"dtype\": null,\n"
      " \"rows\": [1, 2], \"nested\": {\"k\": \"v\"}, \"\": \"empty key\"}";
  zlb_json_t *v;
  (void)state;
  v = parse_ok(text, strlen(text));
  assert_int_equal(v->kind, ZLB_JSON_OBJECT);
  assert_int_equal(v->n, 6);
  assert_string_equal(v->keys[1], "ms");
  assert_true(zlb_json_get(v, "ms")->number == 2.5);
  assert_true(zlb_json_get_number(v, "ms", -1) == 2.5);
  assert_string_equal(zlb_json_get_string(v, "op", "x"), "softmax");
  assert_string_equal(zlb_json_get_string(v, "", "x"), "empty key");
  assert_string_equal(zlb_json_get_string(v, "ms", "dflt"), "dflt"); /* kind */
  assert_string_equal(zlb_json_get_string(v, "dtype", "dflt"), "dflt");
  assert_string_equal(zlb_json_get_string(v, "missing", "dflt"), "dflt");
  assert_null(zlb_json_get_string(v, "missing", NULL));
  assert_true(zlb_json_get_number(v, "op", 7.0) == 7.0);
  assert_true(zlb_json_get_number(v, "missing", -1.0) == -1.0);
  assert_int_equal(zlb_json_get(v, "dtype")->kind, ZLB_JSON_NULL);
  assert_string_equal(zlb_json_get_string(zlb_json_get(v, "nested"), "k", NULL),
                      "v");
  assert_null(zlb_json_get(zlb_json_get(v, "rows"), "0")); /* not an object */
  assert_null(zlb_json_get(NULL, "op"));
  assert_null(zlb_json_get(v, NULL));
  assert_true(zlb_json_get_number(NULL, "ms", 3.0) == 3.0);
  zlb_json_free(v);
  zlb_json_free(NULL);
}

static void test_bounded_input(void **state) {
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_json_t *v;
  (void)state;
  /* only `len` bytes count: no terminator is needed after a number */
  v = parse_ok("[1]xyz", 3);
  zlb_json_free(v);
  v = parse_ok("123", 2);
  assert_true(v->number == 12.0);
  zlb_json_free(v);
  v = parse_ok("-Infinity!", 9);
  assert_true(isinf(v->number) && v->number < 0);
  zlb_json_free(v);
  assert_int_equal(zlb_json_parse("true", 2, "t.json", &v, &err), ZLB_EPARSE);
  assert_string_equal(err.msg, "t.json:1:1: invalid literal (expected true, "
                               "false, null, NaN or Infinity)");
  assert_int_equal(zlb_json_parse("\"abc\"", 4, "t.json", &v, &err), ZLB_EPARSE);
  assert_string_equal(err.msg,
                      "t.json:1:1: unterminated string: missing closing '\"'");
  assert_int_equal(zlb_json_parse("\"\\u00e9\"", 6, "t.json", &v, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg,
                      "t.json:1:2: invalid escape: '\\u' needs 4 hex digits");
  /* a NULL name reads "<json>" */
  assert_int_equal(zlb_json_parse("[", 1, NULL, &v, &err), ZLB_EPARSE);
  assert_string_equal(err.msg,
                      "<json>:1:1: unterminated array: missing closing ']'");
}

static void test_flaggems_record(void **state) {
  /* the shape of one FlagGems benchmark record, as Python's json.dumps
   * writes it (NaN and Infinity included) */
  static const char text[] =
      "{\"op_name\": \"softmax\", \"dtype\": \"torch.float16\", "
      "\"mode\": \"cuda\", \"level\": \"core\", \"result\": [\n"
      "  {\"legacy_shape\": null, \"shape_detail\": [[1024, 1024]], "
      "\"latency_base\": 0.0123, \"latency\": 0.0101, \"speedup\": 1.2178, "
      "\"accuracy\": null, \"tflops\": NaN, \"gbps\": Infinity}\n]}\n";
  zlb_json_t *v;
  const zlb_json_t *row;
  (void)state;
  v = parse_ok(text, strlen(text));
  assert_string_equal(zlb_json_get_string(v, "op_name", NULL), "softmax");
  row = zlb_json_get(v, "result")->items[0];
  assert_true(isnan(zlb_json_get_number(row, "tflops", 0)));
  assert_true(isinf(zlb_json_get_number(row, "gbps", 0)));
  assert_true(zlb_json_get_number(row, "speedup", 0) == 1.2178);
  assert_int_equal(zlb_json_get(row, "shape_detail")->items[0]->n, 2);
  zlb_json_free(v);
}

/* cJSON builds the tree: numbers of any length (it reads them through a
 * 64-byte buffer), number-like text inside strings left alone, and input
 * over the size limit refused before it is read. */
static void test_tree_builder_edges(void **state) {
  static const char longnum[] =
      "-1234567890123456789012345678901234567890123456789012345678901234567"
      "89e-60";
  static const char strings[] =
      "{\"NaN\": \"01 1. -Infinity\", \"k\\u00e9\": [\"\\\"1e5\", 7]}";
  zlb_strbuf_t text = ZLB_STRBUF_INIT, out = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_json_t *v;
  char *big;
  (void)state;
  zlb_strbuf_addf(&text, "[%s, 0.1%070d1, %s]", longnum, 0, longnum);
  v = parse_ok(text.buf, text.len);
  assert_int_equal(v->n, 3);
  assert_true(v->items[0]->number == strtod(longnum, NULL));
  assert_true(v->items[1]->number == 0.1);
  assert_true(v->items[2]->number == v->items[0]->number);
  zlb_json_free(v);
  v = parse_ok(longnum, strlen(longnum));
  assert_true(v->number == strtod(longnum, NULL));
  zlb_json_free(v);
  v = parse_ok(strings, strlen(strings));
  canon(&out, v);
  assert_string_equal(out.buf, "{\"NaN\":\"01 1. -Infinity\","
                               "\"k\xc3\xa9\":[\"\\\"1e5\",7]}");
  zlb_json_free(v);
  big = calloc((16u << 20) + 1, 1);
  assert_non_null(big);
  v = (zlb_json_t *)&err; /* must be reset to NULL */
  assert_int_equal(zlb_json_parse(big, (16u << 20) + 1, "t.json", &v, &err),
                   ZLB_EPARSE);
  assert_string_equal(err.msg, "t.json: 16777217 bytes is more than the 16 "
                               "MiB a json document may have");
  assert_null(v);
  free(big);
  zlb_strbuf_release(&out);
  zlb_strbuf_release(&text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good),
      cmocka_unit_test(test_bad),
      cmocka_unit_test(test_depth_limit),
      cmocka_unit_test(test_get),
      cmocka_unit_test(test_bounded_input),
      cmocka_unit_test(test_flaggems_record),
      cmocka_unit_test(test_tree_builder_edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
