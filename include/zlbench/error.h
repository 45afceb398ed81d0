/* Error codes and the error object every libzlbench call reports through. */
#ifndef ZLBENCH_ERROR_H
#define ZLBENCH_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every error code: name, then message. Codes are negative ints; 0 is
 * success. Order is ABI: append only.
 */
#define ZLB_ERRNO_MAP(XX)                                                  \
  XX(EINVAL,     "invalid argument")                                       \
  XX(ENOMEM,     "out of memory")                                          \
  XX(EIO,        "input/output error")                                     \
  XX(EPARSE,     "malformed input")                                        \
  XX(ENOTFOUND,  "not found")                                              \
  XX(EUNAVAIL,   "backend runtime unavailable")                            \
  XX(EDEVICE,    "device runtime call failed")                             \
  XX(EUNSUPPORTED, "not supported by this backend")                        \
  XX(EREFUSED,   "graph capture refused")                                  \
  XX(EFATAL,     "fatal device fault")                                     \
  XX(EPOISONED,  "graph capture left the device context unusable")         \
  XX(EMISMATCH,  "candidate output does not match the baseline")          \
  XX(EOP,        "operator failed")                                        \
  XX(EINTR,      "interrupted")                                            \
  XX(ETIMEDOUT,  "timed out")                                              \
  XX(EEXIST,     "already exists")                                         \
  XX(ESPAWN,     "cannot start child process")

enum {
  ZLB_OK = 0,
  ZLB__ERRBASE = -1000,
#define XX(name, msg) ZLB_##name,
  ZLB_ERRNO_MAP(XX)
#undef XX
  ZLB__ERRMAX
};

/*
 * Process exit codes of the zlbench CLI, stable and documented in the
 * README. The batch reads its children's exit codes with the same names.
 */
typedef enum zlb_exit_code {
  ZLB_EXIT_OK = 0,
  ZLB_EXIT_FAILED = 1,      /* ran, but rows or operators failed */
  ZLB_EXIT_USAGE = 2,       /* bad flags, bad input file, unknown name */
  ZLB_EXIT_UNAVAIL = 3,     /* backend runtime or device unavailable */
  ZLB_EXIT_FATAL = 4,       /* a device fault (illegal address, ...) */
  ZLB_EXIT_POISONED = 5,    /* BENCHMARK_CAPTURE_POISONED */
  ZLB_EXIT_OUTPUT = 6,      /* results could not be written */
  ZLB_EXIT_INTERRUPTED = 130
} zlb_exit_code_t;

/** The exit code a ZLB_* error code maps to (ZLB_EXIT_FAILED for others). */
int zlb_exit_code_of(int zlb_code);

/** Message for a code ("invalid argument"); "unknown error" otherwise. */
const char *zlb_strerror(int code);
/** Name for a code ("ZLB_EINVAL"); "ZLB_UNKNOWN" otherwise. */
const char *zlb_err_name(int code);

/*
 * The error object. `code` is a ZLB_* value; `vendor_code` and
 * `vendor_name` carry the vendor runtime's own error (e.g. 901,
 * "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED") when there is one, and `msg`
 * the full human text, lower case, naming the subject and, where there is
 * one, the fix. The object owns no heap memory: copy it freely.
 */
typedef struct zlb_error {
  int code;
  int vendor_code;
  char vendor_name[64];
  char msg[768];
} zlb_error_t;

#define ZLB_ERROR_INIT {0, 0, {0}, {0}}

/** Reset to success. */
void zlb_error_clear(zlb_error_t *e);
/** Set code and printf-formatted message; returns `code`. `e` may be NULL. */
int zlb_error_set(zlb_error_t *e, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/** Set code, vendor code and name, and message; returns `code`. */
int zlb_error_vendor(zlb_error_t *e, int code, int vendor_code,
                     const char *vendor_name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/** Prefix the message with "prefix: " (adds context while unwinding). */
int zlb_error_prefix(zlb_error_t *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
