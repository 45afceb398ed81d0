/* Error table lookups and the error object's setters. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "zlbench/base.h"
#include "zlbench/error.h"

const char *zlb_strerror(int code) {
  switch (code) {
  case ZLB_OK: return "success";
#define XX(name, msg) case ZLB_##name: return msg;
    ZLB_ERRNO_MAP(XX)
#undef XX
  default: return "unknown error";
  }
}

const char *zlb_err_name(int code) {
  switch (code) {
  case ZLB_OK: return "ZLB_OK";
#define XX(name, msg) case ZLB_##name: return "ZLB_" #name;
    ZLB_ERRNO_MAP(XX)
#undef XX
  default: return "ZLB_UNKNOWN";
  }
}

int zlb_exit_code_of(int code) {
  switch (code) {
  case ZLB_OK: return ZLB_EXIT_OK;
  case ZLB_EINVAL:
  case ZLB_EPARSE:
  case ZLB_ENOTFOUND:
  case ZLB_EEXIST: return ZLB_EXIT_USAGE;
  case ZLB_EUNAVAIL:
  case ZLB_EDEVICE: return ZLB_EXIT_UNAVAIL;
  case ZLB_EFATAL: return ZLB_EXIT_FATAL;
  case ZLB_EPOISONED: return ZLB_EXIT_POISONED;
  case ZLB_EIO: return ZLB_EXIT_OUTPUT;
  case ZLB_EINTR: return ZLB_EXIT_INTERRUPTED;
  default: return ZLB_EXIT_FAILED;
  }
}

void zlb_error_clear(zlb_error_t *e) {
  if (!e)
    return;
  e->code = 0;
  e->vendor_code = 0;
  e->vendor_name[0] = '\0';
  e->msg[0] = '\0';
}

/* Bytes kept from the end of a message too long for `msg`: the cause
 * (an strerror text, the fix) comes last, after the paths. */
#define KEEP_TAIL 256

/* Store `s` into e->msg; a message that does not fit loses its middle,
 * marked "...", so both its subject and its cause survive a long path.
 * Cuts fall on UTF-8 character boundaries. */
static void store(zlb_error_t *e, const char *s) {
  size_t n = strlen(s), cap = sizeof(e->msg) - 1, head, tail;
  if (n <= cap) {
    memcpy(e->msg, s, n + 1);
    return;
  }
  tail = n - KEEP_TAIL;
  while (tail < n && ((unsigned char)s[tail] & 0xC0) == 0x80)
    tail++;
  head = cap - 3 - (n - tail);
  while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80)
    head--;
  memcpy(e->msg, s, head);
  memcpy(e->msg + head, "...", 3);
  memcpy(e->msg + head + 3, s + tail, n - tail + 1);
}

static void vset(zlb_error_t *e, int code, const char *fmt, va_list ap) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  e->code = code;
  if (!fmt) {
    zlb_strlcpy(e->msg, zlb_strerror(code), sizeof(e->msg));
    return;
  }
  zlb_strbuf_vaddf(&sb, fmt, ap);
  store(e, sb.buf);
  zlb_strbuf_release(&sb);
}

int zlb_error_set(zlb_error_t *e, int code, const char *fmt, ...) {
  va_list ap;
  if (!e)
    return code;
  e->vendor_code = 0;
  e->vendor_name[0] = '\0';
  va_start(ap, fmt);
  vset(e, code, fmt, ap);
  va_end(ap);
  return code;
}

int zlb_error_vendor(zlb_error_t *e, int code, int vendor_code,
                     const char *vendor_name, const char *fmt, ...) {
  va_list ap;
  if (!e)
    return code;
  e->vendor_code = vendor_code;
  zlb_strlcpy(e->vendor_name, vendor_name ? vendor_name : "",
              sizeof(e->vendor_name));
  va_start(ap, fmt);
  vset(e, code, fmt, ap);
  va_end(ap);
  return code;
}

int zlb_error_prefix(zlb_error_t *e, const char *fmt, ...) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  va_list ap;
  if (!e)
    return 0;
  va_start(ap, fmt);
  zlb_strbuf_vaddf(&sb, fmt, ap);
  va_end(ap);
  zlb_strbuf_addstr(&sb, ": ");
  zlb_strbuf_addstr(&sb, e->msg);
  store(e, sb.buf);
  zlb_strbuf_release(&sb);
  return e->code;
}
