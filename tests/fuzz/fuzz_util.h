/* Shared by the fuzz targets: a private temporary folder, the input as a
 * NUL-terminated copy or as a file there (for readers that take a path). */
#ifndef ZLB_FUZZ_UTIL_H
#define ZLB_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A folder of this process under $TMPDIR (the CI runner points it at a
 * folder it removes afterwards), made on first use. */
static const char *fz_dir(void) {
  static char dir[4096];
  if (!dir[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/zlb-fuzz-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) {
      perror("zlb fuzz: mkdtemp");
      abort();
    }
  }
  return dir;
}

/* "<fz_dir>/<name>" in a static buffer per slot (0..3). */
static const char *fz_path(int slot, const char *name) {
  static char p[4][4200];
  snprintf(p[slot], sizeof(p[slot]), "%s/%s", fz_dir(), name);
  return p[slot];
}

/* Replace the file at `path` with `size` bytes of `data`. */
static void fz_write(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
    perror(path);
    abort();
  }
}

/* The input as a C string (readers of text stop at a NUL, as they do on a
 * file read whole). Caller frees. */
static char *fz_cstr(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s)
    abort();
  if (size)
    memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

#endif
