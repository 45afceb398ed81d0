/* Private declarations shared by the batch layer's files. */
#ifndef ZLB_BATCH_INT_H
#define ZLB_BATCH_INT_H

#include "zlbench/batch.h"

int zlb__rmtree(const char *path);
/* Copy a folder tree, skipping entries named `skip` (NULL: none). */
int zlb__copytree(const char *from, const char *to, const char *skip);
/* Move every entry of `from` into `to` (replacing same-named entries). */
int zlb__move_contents(const char *from, const char *to);

/* One row of ops_status.csv. */
typedef struct zlb__status_row {
  char op[128];
  char status[32];
  int attempts;
  int level;
  char backend[32];
  char device[16];
  char timer[16];
  double seconds;
  char signature[320];
  char failed_dtypes[96];
  char note[320];
} zlb__status_row_t;

/* status.c */
int zlb__status_write(const char *path, const zlb__status_row_t *rows, size_t n,
                      zlb_error_t *err);
/* Read an existing ops_status.csv (missing file: 0 rows). */
int zlb__status_read(const char *path, zlb__status_row_t **rows, size_t *n,
                     zlb_error_t *err);

#endif
