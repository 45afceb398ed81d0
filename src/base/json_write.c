/* Streaming JSON writer (after git's json-writer): pretty or compact,
 * non-finite numbers as null. */
#include <math.h>
#include <stdio.h>

#include "zlbench/json.h"

void zlb_jw_init(zlb_jw_t *jw, int pretty) {
  zlb_strbuf_init(&jw->out);
  jw->depth = 0;
  jw->first[0] = 1;
  jw->pretty = pretty;
}

void zlb_jw_release(zlb_jw_t *jw) { zlb_strbuf_release(&jw->out); }

static void indent(zlb_jw_t *jw) {
  if (!jw->pretty)
    return;
  zlb_strbuf_addch(&jw->out, '\n');
  zlb_strbuf_addpad(&jw->out, ' ', (size_t)jw->depth * 2);
}

/* Separator and indentation before a member or element. */
static void next_item(zlb_jw_t *jw) {
  if (jw->depth == 0)
    return;
  if (!jw->first[jw->depth])
    zlb_strbuf_addch(&jw->out, ',');
  jw->first[jw->depth] = 0;
  indent(jw);
}

static void key(zlb_jw_t *jw, const char *k) {
  next_item(jw);
  zlb_strbuf_addch(&jw->out, '"');
  zlb_strbuf_add_json_escaped(&jw->out, k);
  zlb_strbuf_addstr(&jw->out, jw->pretty ? "\": " : "\":");
}

static void open_(zlb_jw_t *jw, int c) {
  zlb_strbuf_addch(&jw->out, c);
  if (jw->depth < 32)
    jw->depth++;
  jw->first[jw->depth] = 1;
}

static void close_(zlb_jw_t *jw, int c) {
  int empty = jw->first[jw->depth];
  if (jw->depth > 0)
    jw->depth--;
  if (!empty)
    indent(jw);
  zlb_strbuf_addch(&jw->out, c);
  if (jw->depth == 0 && jw->pretty)
    zlb_strbuf_addch(&jw->out, '\n');
}

void zlb_jw_object_begin(zlb_jw_t *jw) {
  next_item(jw);
  open_(jw, '{');
}
void zlb_jw_object_end(zlb_jw_t *jw) { close_(jw, '}'); }
void zlb_jw_array_begin(zlb_jw_t *jw) {
  next_item(jw);
  open_(jw, '[');
}
void zlb_jw_array_end(zlb_jw_t *jw) { close_(jw, ']'); }

void zlb_jw_key_object(zlb_jw_t *jw, const char *k) {
  key(jw, k);
  open_(jw, '{');
}

void zlb_jw_key_array(zlb_jw_t *jw, const char *k) {
  key(jw, k);
  open_(jw, '[');
}

static void add_string(zlb_jw_t *jw, const char *v) {
  if (!v) {
    zlb_strbuf_addstr(&jw->out, "null");
    return;
  }
  zlb_strbuf_addch(&jw->out, '"');
  zlb_strbuf_add_json_escaped(&jw->out, v);
  zlb_strbuf_addch(&jw->out, '"');
}

static void add_double(zlb_jw_t *jw, double v) {
  if (!isfinite(v))
    zlb_strbuf_addstr(&jw->out, "null");
  else
    zlb_strbuf_addf(&jw->out, "%.12g", v);
}

void zlb_jw_key_string(zlb_jw_t *jw, const char *k, const char *v) {
  key(jw, k);
  add_string(jw, v);
}

void zlb_jw_key_int(zlb_jw_t *jw, const char *k, long long v) {
  key(jw, k);
  zlb_strbuf_addf(&jw->out, "%lld", v);
}

void zlb_jw_key_double(zlb_jw_t *jw, const char *k, double v) {
  key(jw, k);
  add_double(jw, v);
}

void zlb_jw_key_bool(zlb_jw_t *jw, const char *k, int v) {
  key(jw, k);
  zlb_strbuf_addstr(&jw->out, v ? "true" : "false");
}

void zlb_jw_key_null(zlb_jw_t *jw, const char *k) {
  key(jw, k);
  zlb_strbuf_addstr(&jw->out, "null");
}

void zlb_jw_string(zlb_jw_t *jw, const char *v) {
  next_item(jw);
  add_string(jw, v);
}

void zlb_jw_int(zlb_jw_t *jw, long long v) {
  next_item(jw);
  zlb_strbuf_addf(&jw->out, "%lld", v);
}

void zlb_jw_double(zlb_jw_t *jw, double v) {
  next_item(jw);
  add_double(jw, v);
}
