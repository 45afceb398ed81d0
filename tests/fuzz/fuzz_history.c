/* Fuzz target: the history database as `zlbench history` reads it. The
 * bytes are written as the database file, then `history show`, `list` and
 * `check` (against a fixed results folder of the same operator) and the
 * report's trends run on it. SQLite itself is not instrumented: this is
 * about what zlbench does with the rows a damaged or hostile file gives. */
#include "cli/history.h"
#include "fuzz_util.h"
#include "zlbench/compare.h"

#ifndef ZLB_FUZZ_DATA
#error "ZLB_FUZZ_DATA: the folder of tests/fuzz/data"
#endif

static int run(char **argv) {
  int argc = 0;
  while (argv[argc])
    argc++;
  return zlb_cmd_history(argc, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static zlb_res_set_t cur = ZLB_RES_SET_INIT;
  static int loaded;
  static char check_dir[] = ZLB_FUZZ_DATA "/history_check";
  char *db = (char *)fz_path(0, "history.sqlite");
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_trend_t *tr = NULL;
  size_t ntr = 0;

  if (!loaded) {
    if (zlb_res_load(&cur, check_dir, &err)) {
      fprintf(stderr, "zlb fuzz: %s\n", err.msg);
      abort();
    }
    loaded = 1;
  }
  /* A journal left by an earlier input would be rolled into this one. */
  unlink(fz_path(1, "history.sqlite-journal"));
  unlink(fz_path(1, "history.sqlite-wal"));
  unlink(fz_path(1, "history.sqlite-shm"));
  fz_write(db, data, size);
  {
    char *show[] = {"history", "show", "relu", "--db", db, NULL};
    char *show2[] = {"history", "show", "relu", "--dtype", "float32", "--shape", "[64]",
                     "--db", db, NULL};
    char *list[] = {"history", "list", "--db", db, NULL};
    char *check[] = {"history", "check", check_dir, "--last", "3", "--db", db, NULL};
    char *checkj[] = {"history", "check", check_dir, "--format", "json", "--db", db, NULL};
    (void)run(show);
    (void)run(show2);
    (void)run(list);
    (void)run(check);
    (void)run(checkj);
  }
  if (zlb_history_trends(db, &cur, &tr, &ntr, &err) == 0)
    for (size_t i = 0; i < ntr; i++)
      for (size_t k = 0; k < tr[i].n; k++)
        if (!memchr(tr[i].pts[k].when, '\0', sizeof(tr[i].pts[k].when)))
          abort();
  zlb_history_trends_free(tr, ntr);
  return 0;
}
