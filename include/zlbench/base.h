/* Base layer: growable strings, string lists, monotonic clock, stable hash,
 * and file helpers (atomic writes, directory creation). Depends on libc only. */
#ifndef ZLBENCH_BASE_H
#define ZLBENCH_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "zlbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- growable string (git's strbuf) --------------------------------- */

/*
 * A NUL-terminated growable string. `buf` is never NULL after init (it
 * points at a shared empty string until the first append). Allocation
 * failure aborts: every caller would otherwise have to handle it, and the
 * tool cannot do anything useful when malloc fails.
 */
typedef struct zlb_strbuf {
  char *buf;
  size_t len;
  size_t alloc;
} zlb_strbuf_t;

extern char zlb__strbuf_empty[];
#define ZLB_STRBUF_INIT {zlb__strbuf_empty, 0, 0}

void zlb_strbuf_init(zlb_strbuf_t *sb);
/** Free the contents; the struct is reusable (git's release semantics). */
void zlb_strbuf_release(zlb_strbuf_t *sb);
void zlb_strbuf_reset(zlb_strbuf_t *sb);
void zlb_strbuf_grow(zlb_strbuf_t *sb, size_t extra);
void zlb_strbuf_add(zlb_strbuf_t *sb, const void *data, size_t len);
void zlb_strbuf_addstr(zlb_strbuf_t *sb, const char *s);
void zlb_strbuf_addch(zlb_strbuf_t *sb, int c);
void zlb_strbuf_addf(zlb_strbuf_t *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void zlb_strbuf_vaddf(zlb_strbuf_t *sb, const char *fmt, va_list ap);
/** Append `n` copies of character `c`. */
void zlb_strbuf_addpad(zlb_strbuf_t *sb, int c, size_t n);
/** Shorten to `len` bytes. */
void zlb_strbuf_setlen(zlb_strbuf_t *sb, size_t len);
/** Hand the buffer to the caller (free() it); `sb` is re-initialised. */
char *zlb_strbuf_detach(zlb_strbuf_t *sb);
/** Append code point `cp` encoded as UTF-8 (for the readers' u-escapes). */
void zlb_strbuf_add_utf8(zlb_strbuf_t *sb, uint32_t cp);
/** Append `s` escaped as a JSON string body (no quotes). */
void zlb_strbuf_add_json_escaped(zlb_strbuf_t *sb, const char *s);
/** Append `s` as one CSV field (quoted when it holds , " or newline). */
void zlb_strbuf_add_csv(zlb_strbuf_t *sb, const char *s);
/*
 * Append `s` for a terminal or a text report: bytes below 0x20 and 0x7f,
 * the C1 controls, the bidirectional overrides and bytes that are not
 * valid UTF-8 become \xNN (newline, carriage return and tab \n, \r,
 * \t), so a string from an untrusted file cannot move the cursor, set a
 * window title or forge a line.
 */
void zlb_strbuf_add_printable(zlb_strbuf_t *sb, const char *s);
/** `s` (NULL: "") made printable in `tmp` (reset first); returns tmp->buf. */
const char *zlb_printable(zlb_strbuf_t *tmp, const char *s);
/*
 * Append `s` as one CSV text field, as zlb_strbuf_add_csv, except that a
 * field a spreadsheet would take for a formula (starting with =, +, -, @,
 * tab or carriage return, and not a number: -3.5 stays as it is) is
 * prefixed with ' and quoted.
 */
void zlb_strbuf_add_csv_text(zlb_strbuf_t *sb, const char *s);

/* ---- string list ---------------------------------------------------- */

/** An owned list of owned strings. */
typedef struct zlb_strvec {
  char **v;
  size_t n;
  size_t alloc;
} zlb_strvec_t;

#define ZLB_STRVEC_INIT {NULL, 0, 0}

void zlb_strvec_push(zlb_strvec_t *sv, const char *s);
void zlb_strvec_pushf(zlb_strvec_t *sv, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void zlb_strvec_release(zlb_strvec_t *sv);
/** Index of `s` or -1. */
long zlb_strvec_find(const zlb_strvec_t *sv, const char *s);
/** Split `s` on `sep`, trimming blanks and skipping empty items. */
void zlb_strvec_split(zlb_strvec_t *sv, const char *s, int sep);
/** Join with `sep` into `out` (appends). */
void zlb_strvec_join(const zlb_strvec_t *sv, const char *sep, zlb_strbuf_t *out);
void zlb_strvec_sort(zlb_strvec_t *sv);

/* ---- small string helpers ------------------------------------------- */

/** strdup that aborts on allocation failure. */
char *zlb_xstrdup(const char *s);
void *zlb_xmalloc(size_t n);
void *zlb_xcalloc(size_t n, size_t size);
void *zlb_xrealloc(void *p, size_t n);
/** Bounded copy that always terminates; returns strlen(src). */
size_t zlb_strlcpy(char *dst, const char *src, size_t size);
/** 1 when `s` starts with `prefix`. */
int zlb_starts_with(const char *s, const char *prefix);
/** Strip leading/trailing whitespace in place; returns `s`. */
char *zlb_trim(char *s);
/** Parse a whole string as a long / double; 0 on success, ZLB_EINVAL else
 * (also for leading blanks, a value out of range, and nan or inf). */
int zlb_parse_long(const char *s, long *out);
int zlb_parse_double(const char *s, double *out);

/* ---- time ------------------------------------------------------------ */

/*
 * Memory the host can still give this process: MemAvailable, lowered to
 * what a cgroup (v2 memory.max, v1 limit_in_bytes) leaves. 0 and ZLB_EIO
 * when neither can be read.
 */
int zlb_host_mem_available(size_t *avail, size_t *total, zlb_error_t *err);

/*
 * Run fn(ctx, chunk, begin, end) over [0, n) in chunks of `chunk`
 * elements, on up to `max_threads` threads (0: one per online CPU, at
 * most 16). Chunk k always covers [k * chunk, min(n, (k + 1) * chunk)),
 * whatever the thread count, so a caller that keeps one result per chunk
 * and combines them in chunk order gets the same answer on every machine.
 */
void zlb_parallel_chunks(int64_t n, int64_t chunk, int max_threads,
                         void (*fn)(void *ctx, int64_t k, int64_t begin, int64_t end),
                         void *ctx);

/** Nanoseconds on CLOCK_MONOTONIC. */
uint64_t zlb_now_ns(void);
/** Seconds on CLOCK_MONOTONIC as a double. */
double zlb_now_s(void);
/** Wall-clock seconds since the epoch (for stamps another process compares). */
double zlb_epoch_s(void);
/** Wall-clock time formatted as ISO 8601 UTC ("2026-11-30T09:16:00Z"). */
void zlb_iso8601_now(char *buf, size_t len);
/** Local timestamp for folder names ("20261130-091600"). */
void zlb_timestamp_compact(char *buf, size_t len);
/** Sleep for `ms` milliseconds; a signal does not cut it short (EINTR restarts it). */
void zlb_sleep_ms(double ms);

/* ---- hashing ---------------------------------------------------------- */

/**
 * FNV-1a 64 over the bytes of `s` (offset basis 0xcbf29ce484222325, prime
 * 0x100000001b3). The batch layer shards operators with it, so its value
 * for a given name must never change.
 */
uint64_t zlb_fnv1a64(const char *s);
/** FNV-1a 64 continued over `len` more bytes (NULs included): start from
 * ZLB_FNV1A64_BASIS, feed a file in pieces. */
#define ZLB_FNV1A64_BASIS 0xcbf29ce484222325ull
uint64_t zlb_fnv1a64_add(uint64_t h, const void *data, size_t len);

/* ---- files ------------------------------------------------------------ */

/** mkdir -p; 0 or a ZLB error naming the path. */
int zlb_mkdirs(const char *path, zlb_error_t *err);
/* Size limits of what zlbench reads (docs/formats.md, "Input files"). */
#define ZLB_READ_MAX ((size_t)64 << 20)      /* logs, CSV, anything else */
#define ZLB_READ_MAX_JSON ((size_t)16 << 20) /* results, identities, caches */
#define ZLB_READ_MAX_YAML ((size_t)16 << 20) /* shapes, inventories, deny lists */
/**
 * Open `path` for reading and check, on the open descriptor, that it is a
 * regular file (a symbolic link counts as what it points at). Opened with
 * O_NONBLOCK, so a FIFO is refused at once instead of waiting for a
 * writer. Returns the descriptor (close-on-exec), or a negative ZLB error:
 * ZLB_ENOTFOUND when missing, ZLB_EINVAL ("'P': is a FIFO, not a regular
 * file") for a directory, device, FIFO or socket and for a path that
 * cannot be opened as given (permission, too long), ZLB_EIO otherwise.
 */
int zlb_open_regular(const char *path, zlb_error_t *err);
/** What a file-system node of mode `m` (st_mode) is, for messages: "a FIFO",
 * "a directory", "a character device", "a symbolic link", ... (static). */
const char *zlb_node_kind(mode_t m);
/** zlb_open_regular as a stdio stream ("rb"); NULL and `err` set on error. */
FILE *zlb_fopen_regular(const char *path, zlb_error_t *err);
/**
 * Read a whole regular file (see zlb_open_regular) of at most `max` bytes;
 * `*out` is malloc'ed and NUL-terminated. At most max + 1 bytes are ever
 * read, so memory stays bounded whatever the file is: a larger one is
 * ZLB_EINVAL "'P': larger than 16 MiB (the limit for WHAT)" (`what` may be
 * NULL: "an input file").
 */
int zlb_read_file_max(const char *path, size_t max, const char *what, char **out, size_t *len,
                      zlb_error_t *err);
/** zlb_read_file_max with ZLB_READ_MAX (64 MiB). */
int zlb_read_file(const char *path, char **out, size_t *len, zlb_error_t *err);
/**
 * Write `len` bytes to `path` atomically: write a temporary file in the
 * same folder, fsync it, rename over `path`. Readers see the old or the
 * new content, never a torn file, even if the process dies mid-write.
 * For files in zlbench's own folders: a symbolic link at `path` is
 * replaced, never written through; a directory, FIFO, device or socket
 * there is refused (ZLB_EIO), never renamed over.
 */
int zlb_write_file_atomic(const char *path, const void *data, size_t len,
                          zlb_error_t *err);
/**
 * Write `len` bytes to a file the user named (--out FILE, --json FILE) the
 * way a shell redirection would, without destroying what is there: a
 * regular file is replaced atomically as above; a symbolic link to a
 * regular file has its final target replaced (the temporary file in the
 * target's folder), so the link stays a link; a FIFO or a character device
 * (/dev/stdout, a terminal, /dev/null) is opened and written, never
 * replaced (a FIFO with no reader is an error, not a wait); a directory,
 * socket or block device is refused. Errors are ZLB_EIO; every write and
 * the close are checked.
 */
int zlb_write_user_file(const char *path, const void *data, size_t len, zlb_error_t *err);
/** 1 when `path` exists (any type). */
int zlb_path_exists(const char *path);
/** 1 when `path` is a directory. */
int zlb_is_dir(const char *path);
/** Join two path parts into `out` (appends, inserting one '/'). */
void zlb_path_join(zlb_strbuf_t *out, const char *a, const char *b);
/**
 * zlbench's folder in the user's cache, appended to `out`: $ZL_CACHE_DIR,
 * else $XDG_CACHE_HOME/zlbench, else $HOME/.cache/zlbench (the first that
 * is set and not empty); 0, `out` unchanged, when none is. Not created.
 */
int zlb_cache_dir(zlb_strbuf_t *out);
/** Directory of the running executable (from /proc/self/exe). */
int zlb_exe_dir(zlb_strbuf_t *out, zlb_error_t *err);
/** Check that `dir` can be created and written; error names the path. */
int zlb_check_writable_dir(const char *dir, zlb_error_t *err);
/** Remove ANSI escape sequences from `s` into `out` (appends). */
void zlb_strip_ansi(const char *s, zlb_strbuf_t *out);

#ifdef __cplusplus
}
#endif
#endif
