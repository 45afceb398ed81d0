/* `zlbench history add|show|check|list`: results kept in SQLite, keyed by
 * their identity; a new run checked against the last N comparable runs with
 * the verdict rules of `zlbench compare`. Every write is one transaction:
 * a crash in the middle of `add` leaves the database as it was. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cmp_opts.h"
#include "history.h"
#include "zlbench/base.h"
#include "zlbench/dtype.h"
#include "zlbench/ops.h"
#include "zlbench/json.h"

#ifdef ZLB_HAVE_SQLITE
#include <sqlite3.h>
#endif

#define MAX_LAST 1000
#define TREND_POINTS 30

int zlb_history_path(const char *db, zlb_strbuf_t *out, zlb_error_t *err) {
  const char *env = getenv("ZL_HISTORY_DB"), *xdg = getenv("XDG_DATA_HOME"),
             *home = getenv("HOME");
  if (db && *db) {
    zlb_strbuf_addstr(out, db);
    return 0;
  }
  if (env && *env) {
    zlb_strbuf_addstr(out, env);
    return 0;
  }
  if (xdg && *xdg == '/')
    zlb_strbuf_addf(out, "%s/zlbench/history.sqlite", xdg);
  else if (home && *home)
    zlb_strbuf_addf(out, "%s/.local/share/zlbench/history.sqlite", home);
  else
    return zlb_error_set(err, ZLB_EINVAL,
                         "no history database: give --db PATH (HOME and XDG_DATA_HOME unset)");
  return 0;
}

#ifndef ZLB_HAVE_SQLITE

int zlb_history_trends(const char *db, const zlb_res_set_t *cur, zlb_trend_t **out, size_t *n,
                       zlb_error_t *err) {
  (void)db;
  (void)cur;
  *out = NULL;
  *n = 0;
  return zlb_error_set(err, ZLB_EUNAVAIL,
                       "this zlbench was built without SQLite: install libsqlite3-dev and "
                       "rebuild for the history");
}

void zlb_history_trends_free(zlb_trend_t *t, size_t n) {
  (void)t;
  (void)n;
}

int zlb_cmd_history(int argc, char **argv) {
  (void)argc;
  (void)argv;
  zlb_cli_errorf("history: this zlbench was built without SQLite: install libsqlite3-dev "
                 "and rebuild");
  return ZLB_EXIT_UNAVAIL;
}

#else

/* The schema this zlbench reads and writes (PRAGMA user_version). */
#define SCHEMA_VERSION 1

static const char schema[] =
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, added TEXT NOT NULL, started TEXT,"
    " source TEXT NOT NULL, operator TEXT NOT NULL, tool_version TEXT, tool_commit TEXT,"
    " op_library TEXT, op_library_build TEXT, device TEXT, caliber TEXT NOT NULL,"
    " digest TEXT NOT NULL UNIQUE);"
    "CREATE TABLE rows("
    " run_id INTEGER NOT NULL REFERENCES runs(id), op TEXT NOT NULL, family TEXT,"
    " dtype TEXT NOT NULL, shape TEXT NOT NULL, baseline TEXT, candidate TEXT,"
    " status TEXT NOT NULL, baseline_ms REAL, candidate_ms REAL, speedup REAL,"
    " baseline_samples BLOB, candidate_samples BLOB);"
    "CREATE INDEX rows_key ON rows(op, dtype, shape);"
    "PRAGMA user_version = 1;";

/* What every query of this file reads: a database whose tables lack one of
 * these columns is not ours. */
static const char *const probes[] = {
    "SELECT id, added, started, source, operator, tool_version, tool_commit, op_library, "
    "op_library_build, device, caliber, digest FROM runs LIMIT 0",
    "SELECT run_id, op, family, dtype, shape, baseline, candidate, status, baseline_ms, "
    "candidate_ms, speedup, baseline_samples, candidate_samples FROM rows LIMIT 0",
};

static int db_error(sqlite3 *db, zlb_error_t *err, const char *what, const char *path) {
  return zlb_error_set(err, ZLB_EIO, "history database '%s': %s: %s", path, what,
                       db ? sqlite3_errmsg(db) : "cannot open");
}

/* One integer a statement returns, or -1 with the error in `err`. */
static int query_int(sqlite3 *db, const char *sql, const char *path, long long *v,
                     zlb_error_t *err) {
  sqlite3_stmt *q = NULL;
  int rc = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK || sqlite3_step(q) != SQLITE_ROW)
    rc = db_error(db, err, "not a zlbench history database", path);
  else
    *v = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  return rc;
}

/*
 * Whose database this is, before anything is written: 1 when it is empty
 * (no schema object, user_version 0: `add` may initialise it), 0 when it
 * holds this schema, else an error: a newer zlbench's schema, or another
 * program's tables, are never touched.
 */
static int db_check(sqlite3 *db, const char *path, zlb_error_t *err) {
  long long ver = 0, objects = 0;
  int rc;
  if ((rc = query_int(db, "PRAGMA user_version", path, &ver, err)) ||
      (rc = query_int(db, "SELECT count(*) FROM sqlite_master", path, &objects, err)))
    return rc;
  if (ver > SCHEMA_VERSION)
    return zlb_error_set(err, ZLB_EPARSE,
                         "history database '%s': written by a newer zlbench (schema %lld; this "
                         "one reads %d): left untouched; use that zlbench or another --db",
                         path, ver, SCHEMA_VERSION);
  if (!objects && !ver)
    return 1;
  if (ver == SCHEMA_VERSION) {
    size_t i;
    for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
      sqlite3_stmt *q = NULL;
      int ok = sqlite3_prepare_v2(db, probes[i], -1, &q, NULL) == SQLITE_OK;
      sqlite3_finalize(q);
      if (!ok)
        break;
    }
    if (i == sizeof(probes) / sizeof(probes[0]))
      return 0;
  }
  return zlb_error_set(err, ZLB_EPARSE,
                       "history database '%s': not a zlbench history database (schema version "
                       "%lld, %lld schema objects, not the runs and rows tables of schema %d): "
                       "left untouched; give another --db",
                       path, ver, objects, SCHEMA_VERSION);
}

/* A database file can carry triggers and views that run on our queries:
 * its schema is not trusted to call functions with side effects. */
static void db_harden(sqlite3 *db) {
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
#endif
#ifdef SQLITE_DBCONFIG_DEFENSIVE
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
#endif
}

enum { DB_READ = 0, DB_WRITE = 1 };

/*
 * Open the history database. DB_READ (show, check, list, the report's
 * trends) opens it read-only and never writes: a database on read-only
 * media, or without write permission, can be read. DB_WRITE (add) creates
 * it when missing and returns inside a BEGIN IMMEDIATE transaction, after
 * db_check and, for an empty database, the schema: the caller commits or
 * rolls back, and a refused database is left byte for byte as it was.
 */
static int db_open(const char *path, int mode, sqlite3 **db, zlb_error_t *err) {
  int rc;
  *db = NULL;
  if (mode == DB_READ && !zlb_path_exists(path))
    return zlb_error_set(err, ZLB_ENOTFOUND, "history database '%s' does not exist (zlbench "
                                             "history add DIR creates it)", path);
  /* SQLite would open a FIFO (and block until a writer comes, deaf to
   * Ctrl-C) or a device: only a regular file is a database. */
  if (zlb_path_exists(path)) {
    int fd = zlb_open_regular(path, err);
    if (fd < 0)
      return fd;
    close(fd);
  }
  if (mode == DB_WRITE) {
    zlb_strbuf_t dir = ZLB_STRBUF_INIT;
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
      zlb_strbuf_add(&dir, path, (size_t)(slash - path));
      rc = zlb_mkdirs(dir.buf, err);
      zlb_strbuf_release(&dir);
      if (rc)
        return rc;
    }
  }
  if (sqlite3_open_v2(path, db,
                      mode == DB_WRITE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                       : SQLITE_OPEN_READONLY,
                      NULL) != SQLITE_OK) {
    rc = db_error(*db, err, "open", path);
    goto fail;
  }
  db_harden(*db);
  sqlite3_busy_timeout(*db, 10000);
  if (mode == DB_WRITE && sqlite3_exec(*db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
    rc = db_error(*db, err, "not a zlbench history database", path);
    goto fail;
  }
  rc = db_check(*db, path, err);
  if (rc == 1 && mode == DB_READ) {
    rc = zlb_error_set(err, ZLB_ENOTFOUND,
                       "history database '%s' is empty (zlbench history add DIR fills it)", path);
  } else if (rc == 1) {
    if (sqlite3_exec(*db, schema, NULL, NULL, NULL) != SQLITE_OK)
      rc = db_error(*db, err, "create the tables", path);
    else
      rc = 0;
  }
  if (!rc)
    return 0;
fail:
  if (*db && mode == DB_WRITE)
    sqlite3_exec(*db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_close(*db);
  *db = NULL;
  return rc;
}

/* The identity beside a results file, as the history keys it. */
typedef struct {
  char started[64], tool_version[64], tool_commit[64], library[1024], build[64], device[256];
  char op[256];
} ident_t;

static void ident_read(const char *results_path, ident_t *id) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  const char *slash = strrchr(results_path, '/');
  char *text = NULL;
  size_t len = 0;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_json_t *root = NULL;
  memset(id, 0, sizeof(*id));
  if (slash)
    zlb_strbuf_add(&p, results_path, (size_t)(slash - results_path + 1));
  zlb_strbuf_addstr(&p, "run_identity.json");
  if (zlb_read_file_max(p.buf, ZLB_READ_MAX_JSON, "a JSON file", &text, &len, &err) == 0 &&
      zlb_json_parse(text, len, p.buf, &root, &err) == 0 && root->kind == ZLB_JSON_OBJECT) {
    const zlb_json_t *t = zlb_json_get(root, "tool"), *op = zlb_json_get(root, "operator"),
                     *dev = zlb_json_get(root, "device");
    zlb_strlcpy(id->started, zlb_json_get_string(root, "started", ""), sizeof(id->started));
    if (t) {
      zlb_strlcpy(id->tool_version, zlb_json_get_string(t, "version", ""),
                  sizeof(id->tool_version));
      zlb_strlcpy(id->tool_commit, zlb_json_get_string(t, "git_commit", ""),
                  sizeof(id->tool_commit));
    }
    if (op) {
      zlb_strlcpy(id->library, zlb_json_get_string(op, "library", ""), sizeof(id->library));
      zlb_strlcpy(id->build, zlb_json_get_string(op, "library_build_id", ""), sizeof(id->build));
      zlb_strlcpy(id->op, zlb_json_get_string(op, "name", ""), sizeof(id->op));
    }
    if (dev)
      zlb_strlcpy(id->device, zlb_json_get_string(dev, "name", ""), sizeof(id->device));
  }
  zlb_json_free(root);
  free(text);
  zlb_strbuf_release(&p);
}

/* A run's key in the database: its results file byte for byte (samples
 * included), its start and its operator. Two runs that started in the same
 * second differ here. */
static int run_digest(const char *source, const ident_t *id, zlb_strbuf_t *dig,
                      zlb_error_t *err) {
  char *text = NULL;
  size_t len = 0;
  if (zlb_read_file_max(source, ZLB_READ_MAX_JSON, "a JSON file", &text, &len, err) != 0)
    return -1;
  zlb_strbuf_addf(dig, "%016llx:%s:%s",
                  (unsigned long long)zlb_fnv1a64_add(ZLB_FNV1A64_BASIS, text, len), id->started,
                  id->op);
  free(text);
  return 0;
}

static void caliber_key(const zlb_caliber_t *c, zlb_strbuf_t *out) {
  for (int f = 0; f < ZLB_CAL_COUNT; f++)
    zlb_strbuf_addf(out, "%s%s=%s", f ? ";" : "", zlb_caliber_field(f), c->v[f]);
}

static void bind_text(sqlite3_stmt *s, int i, const char *v) {
  sqlite3_bind_text(s, i, v ? v : "", -1, SQLITE_TRANSIENT);
}

static void bind_num(sqlite3_stmt *s, int i, double v) {
  if (isfinite(v))
    sqlite3_bind_double(s, i, v);
  else
    sqlite3_bind_null(s, i);
}

/* ---- add ------------------------------------------------------------------------------ */

static int history_add(const char *dbpath, const char *dir) {
  zlb_res_set_t s = ZLB_RES_SET_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  sqlite3 *db = NULL;
  sqlite3_stmt *run = NULL, *row = NULL;
  size_t added = 0, skipped = 0, nrows = 0;
  long abort_after = -1;
  int rc = ZLB_EXIT_OK;
  char when[64];
  const char *inj = getenv("ZL_TEST_HISTORY_ABORT_AFTER");

  if (inj && zlb_parse_long(inj, &abort_after))
    abort_after = -1;
  if (zlb_cli_res_load(&s, dir, &err)) {
    /* What loaded before the bad file is released too. */
    zlb_cli_errorf("history add: %s", err.msg);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  if (db_open(dbpath, DB_WRITE, &db, &err)) { /* in a transaction from here */
    zlb_cli_errorf("history add: %s", err.msg);
    /* A --db that is no regular file is bad input; a database that
     * cannot be written or is not ours, the output failing. */
    rc = err.code == ZLB_EINVAL ? ZLB_EXIT_USAGE : ZLB_EXIT_OUTPUT;
    goto out;
  }
  zlb_iso8601_now(when, sizeof(when));
  if (sqlite3_prepare_v2(db,
                         "INSERT OR IGNORE INTO runs(added, started, source, operator, "
                         "tool_version, tool_commit, op_library, op_library_build, device, "
                         "caliber, digest) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &run, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db,
                         "INSERT INTO rows(run_id, op, family, dtype, shape, baseline, "
                         "candidate, status, baseline_ms, candidate_ms, speedup, "
                         "baseline_samples, candidate_samples) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &row, NULL) != SQLITE_OK) {
    db_error(db, &err, "prepare", dbpath);
    goto fail;
  }
  for (size_t k = 0; k < s.ncal; k++) {
    const zlb_res_row_t *first = NULL;
    ident_t id;
    zlb_strbuf_t key = ZLB_STRBUF_INIT, dig = ZLB_STRBUF_INIT;
    sqlite3_int64 run_id;
    for (size_t i = 0; i < s.n && !first; i++)
      if (s.rows[i].cal == k)
        first = &s.rows[i];
    if (!first)
      continue; /* a results file without rows */
    ident_read(first->source, &id);
    caliber_key(&s.cals[k], &key);
    if (run_digest(first->source, &id, &dig, &err) != 0) {
      zlb_strbuf_release(&key);
      zlb_cli_errorf("history add: %s", err.msg);
      rc = ZLB_EXIT_USAGE;
      goto rollback;
    }
    sqlite3_reset(run);
    bind_text(run, 1, when);
    bind_text(run, 2, id.started);
    bind_text(run, 3, first->source);
    bind_text(run, 4, first->op);
    bind_text(run, 5, id.tool_version);
    bind_text(run, 6, id.tool_commit);
    bind_text(run, 7, id.library);
    bind_text(run, 8, id.build);
    bind_text(run, 9, id.device);
    bind_text(run, 10, key.buf);
    bind_text(run, 11, dig.buf);
    zlb_strbuf_release(&key);
    zlb_strbuf_release(&dig);
    if (sqlite3_step(run) != SQLITE_DONE) {
      db_error(db, &err, "insert run", dbpath);
      goto fail;
    }
    if (!sqlite3_changes(db)) {
      skipped++;
      continue;
    }
    added++;
    run_id = sqlite3_last_insert_rowid(db);
    for (size_t i = 0; i < s.n; i++) {
      const zlb_res_row_t *r = &s.rows[i];
      if (r->cal != k)
        continue;
      sqlite3_reset(row);
      sqlite3_clear_bindings(row);
      sqlite3_bind_int64(row, 1, run_id);
      bind_text(row, 2, r->op);
      bind_text(row, 3, r->family);
      bind_text(row, 4, r->dtype);
      bind_text(row, 5, r->shape);
      bind_text(row, 6, r->impl[0]);
      bind_text(row, 7, r->impl[1]);
      bind_text(row, 8, r->status);
      bind_num(row, 9, r->ms[0]);
      bind_num(row, 10, r->ms[1]);
      bind_num(row, 11, r->speedup);
      sqlite3_bind_blob(row, 12, r->samples[0], (int)(r->nsamples[0] * sizeof(double)),
                        SQLITE_TRANSIENT);
      sqlite3_bind_blob(row, 13, r->samples[1], (int)(r->nsamples[1] * sizeof(double)),
                        SQLITE_TRANSIENT);
      if (sqlite3_step(row) != SQLITE_DONE) {
        db_error(db, &err, "insert row", dbpath);
        goto fail;
      }
      nrows++;
      /* Test-only fault injection: die mid-transaction. */
      if (abort_after >= 0 && (long)nrows >= abort_after)
        abort();
    }
  }
  sqlite3_finalize(run);
  sqlite3_finalize(row);
  run = row = NULL;
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    db_error(db, &err, "commit", dbpath);
    goto fail;
  }
  printf("history: added %zu run%s (%zu rows) from '%s'%s -> %s\n", added, added == 1 ? "" : "s",
         nrows, dir, skipped ? " (some were stored already)" : "", dbpath);
  goto out;
fail:
  zlb_cli_errorf("history add: %s", err.msg);
  rc = ZLB_EXIT_OUTPUT;
rollback:
  sqlite3_finalize(run);
  sqlite3_finalize(row);
  run = row = NULL;
  sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
out:
  sqlite3_finalize(run);
  sqlite3_finalize(row);
  sqlite3_close(db);
  zlb_res_release(&s);
  return rc;
}

/* ---- show ------------------------------------------------------------------------------ */

static const char *col_text(sqlite3_stmt *s, int i) {
  const unsigned char *t = sqlite3_column_text(s, i);
  return t ? (const char *)t : "";
}

static double col_num(sqlite3_stmt *s, int i) {
  return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static int history_show(const char *dbpath, const char *op, const char *dtype, const char *shape) {
  sqlite3 *db = NULL;
  sqlite3_stmt *q = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  char prev_key[512] = "";
  double prev = NAN;
  size_t n = 0;
  int rc = ZLB_EXIT_OK;
  zlb_strbuf_t e[6] = {ZLB_STRBUF_INIT, ZLB_STRBUF_INIT, ZLB_STRBUF_INIT,
                       ZLB_STRBUF_INIT, ZLB_STRBUF_INIT, ZLB_STRBUF_INIT};
  if (db_open(dbpath, DB_READ, &db, &err)) {
    zlb_cli_errorf("history show: %s", err.msg);
    return ZLB_EXIT_USAGE;
  }
  if (sqlite3_prepare_v2(db,
                         "SELECT w.dtype, w.shape, r.started, r.tool_commit, r.device, "
                         "w.status, w.candidate_ms, w.speedup, r.caliber FROM rows w JOIN runs r "
                         "ON w.run_id = r.id WHERE w.op = ?1 AND (?2 IS NULL OR w.dtype = ?2) "
                         "AND (?3 IS NULL OR w.shape = ?3) ORDER BY w.dtype, w.shape, r.id",
                         -1, &q, NULL) != SQLITE_OK) {
    db_error(db, &err, "query", dbpath);
    zlb_cli_errorf("history show: %s", err.msg);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  bind_text(q, 1, op);
  if (dtype)
    bind_text(q, 2, dtype);
  if (shape)
    bind_text(q, 3, shape);
  printf("%-9s %-24s %-20s %-12s %-10s %-8s %12s %8s %8s\n", "dtype", "shape", "started", "commit",
         "device", "status", "cand (ms)", "speedup", "change");
  while (sqlite3_step(q) == SQLITE_ROW) {
    char key[512];
    double ms = col_num(q, 6), sp = col_num(q, 7);
    char chg[32] = "-", msb[32] = "-", spb[32] = "-";
    snprintf(key, sizeof(key), "%s|%s|%s", col_text(q, 0), col_text(q, 1), col_text(q, 8));
    if (strcmp(key, prev_key))
      prev = NAN;
    /* %g beyond a million: a cell never holds hundreds of digits */
    if (isfinite(ms) && isfinite(prev) && prev > 0)
      snprintf(chg, sizeof(chg), fabs(ms / prev - 1) < 1e4 ? "%+.1f%%" : "%+.3g%%",
               100 * (ms / prev - 1));
    if (isfinite(ms))
      snprintf(msb, sizeof(msb), fabs(ms) < 1e6 ? "%.6f" : "%.6g", ms);
    if (isfinite(sp))
      snprintf(spb, sizeof(spb), fabs(sp) < 1e6 ? "%.3f" : "%.3g", sp);
    /* Every text of the database is shown escaped: a results file
     * stored by add could carry terminal escapes or newlines. */
    for (int i = 0; i < 6; i++)
      zlb_printable(&e[i], col_text(q, i));
    printf("%-9s %-24s %-20.20s %-12.12s %-10.10s %-8s %12s %8s %8s\n", e[0].buf, e[1].buf,
           e[2].buf, e[3].buf, e[4].buf, e[5].buf, msb, spb, chg);
    zlb_strlcpy(prev_key, key, sizeof(prev_key));
    if (isfinite(ms))
      prev = ms;
    n++;
  }
  if (!n) {
    zlb_cli_errorf("history show: no stored row of operator '%s'%s%s%s%s", op,
                   dtype ? " dtype " : "", dtype ? dtype : "", shape ? " shape " : "",
                   shape ? shape : "");
    rc = ZLB_EXIT_USAGE;
  } else {
    printf("history: %zu rows of %s (change: against the previous run of the same dtype, shape "
           "and caliber)\n",
           n, zlb_printable(&e[0], op));
  }
out:
  sqlite3_finalize(q);
  sqlite3_close(db);
  for (int i = 0; i < 6; i++)
    zlb_strbuf_release(&e[i]);
  return rc;
}

/* ---- list -------------------------------------------------------------------------------- */

static int history_list(const char *dbpath) {
  sqlite3 *db = NULL;
  sqlite3_stmt *q = NULL;
  zlb_error_t err = ZLB_ERROR_INIT;
  zlb_strbuf_t e[6] = {ZLB_STRBUF_INIT, ZLB_STRBUF_INIT, ZLB_STRBUF_INIT,
                       ZLB_STRBUF_INIT, ZLB_STRBUF_INIT, ZLB_STRBUF_INIT};
  size_t n = 0;
  if (db_open(dbpath, DB_READ, &db, &err)) {
    zlb_cli_errorf("history list: %s", err.msg);
    return ZLB_EXIT_USAGE;
  }
  if (sqlite3_prepare_v2(db,
                         "SELECT r.id, r.started, r.operator, r.tool_version, r.tool_commit, "
                         "r.device, r.caliber, (SELECT count(*) FROM rows w WHERE w.run_id = "
                         "r.id) FROM runs r ORDER BY r.id",
                         -1, &q, NULL) == SQLITE_OK) {
    while (sqlite3_step(q) == SQLITE_ROW) {
      for (int i = 1; i < 7; i++)
        zlb_printable(&e[i - 1], col_text(q, i));
      printf("%lld %s %s %s %s %s rows=%lld %s\n", (long long)sqlite3_column_int64(q, 0),
             e[0].buf, e[1].buf, e[2].buf, e[3].buf, e[4].buf,
             (long long)sqlite3_column_int64(q, 7), e[5].buf);
      n++;
    }
  }
  for (int i = 0; i < 6; i++)
    zlb_strbuf_release(&e[i]);
  sqlite3_finalize(q);
  sqlite3_close(db);
  printf("history: %zu runs in %s\n", n, dbpath);
  return ZLB_EXIT_OK;
}

/* ---- check ------------------------------------------------------------------------------- */

static double *blob_samples(sqlite3_stmt *q, int col, size_t *n) {
  const void *b = sqlite3_column_blob(q, col);
  int bytes = sqlite3_column_bytes(q, col);
  double *v;
  *n = 0;
  if (!b || bytes <= 0 || bytes % (int)sizeof(double) ||
      (size_t)bytes / sizeof(double) > ZLB_RES_MAX_SAMPLES)
    return NULL;
  *n = (size_t)bytes / sizeof(double);
  v = zlb_xmalloc((size_t)bytes);
  memcpy(v, b, (size_t)bytes);
  for (size_t i = 0; i < *n; i++)
    if (!isfinite(v[i]) || v[i] < 0) { /* a damaged blob: not samples */
      free(v);
      *n = 0;
      return NULL;
    }
  return v;
}

static void append(double **dst, size_t *n, const double *src, size_t m) {
  if (!m || *n + m > ZLB_RES_MAX_SAMPLES)
    return;
  *dst = zlb_xrealloc(*dst, (*n + m) * sizeof(double));
  memcpy(*dst + *n, src, m * sizeof(double));
  *n += m;
}

/* The reference set: per row of `cur`, the samples of the same operator,
 * implementations, dtype and shape in the last `last` runs of the same
 * caliber (pooled). */
static int reference(sqlite3 *db, const char *dbpath, const zlb_res_set_t *cur, long last,
                     zlb_res_set_t *ref, size_t *nruns, zlb_error_t *err) {
  sqlite3_stmt *q = NULL;
  zlb_strbuf_t dig = ZLB_STRBUF_INIT;
  const char *dig_source = NULL; /* the results file `dig` is the digest of */
  int rc = 0;
  *nruns = 0;
  if (sqlite3_prepare_v2(db,
                         "SELECT w.baseline_samples, w.candidate_samples, w.baseline_ms, "
                         "w.candidate_ms, w.run_id FROM rows w JOIN runs r ON w.run_id = r.id "
                         "WHERE w.op = ?1 AND w.dtype = ?2 AND w.shape = ?3 AND w.baseline = ?4 "
                         "AND w.candidate = ?5 AND r.caliber = ?6 AND w.status = 'SUCCESS' "
                         "AND r.digest <> ?7 ORDER BY r.id DESC LIMIT ?8",
                         -1, &q, NULL) != SQLITE_OK)
    return db_error(db, err, "query", dbpath);
  ref->cals = zlb_xcalloc(cur->ncal ? cur->ncal : 1, sizeof(zlb_caliber_t));
  memcpy(ref->cals, cur->cals, cur->ncal * sizeof(zlb_caliber_t));
  ref->ncal = cur->ncal;
  ref->rows = zlb_xcalloc(cur->n ? cur->n : 1, sizeof(zlb_res_row_t));
  ref->alloc = cur->n;
  for (size_t i = 0; i < cur->n; i++) {
    const zlb_res_row_t *r = &cur->rows[i];
    zlb_res_row_t out;
    zlb_strbuf_t key = ZLB_STRBUF_INIT;
    size_t found = 0;
    memset(&out, 0, sizeof(out));
    caliber_key(&cur->cals[r->cal], &key);
    sqlite3_reset(q);
    bind_text(q, 1, r->op);
    bind_text(q, 2, r->dtype);
    bind_text(q, 3, r->shape);
    bind_text(q, 4, r->impl[0]);
    bind_text(q, 5, r->impl[1]);
    bind_text(q, 6, key.buf);
    /* Not the run itself, when it was added already: by its digest (a
     * start time alone matched another run of the second before). One
     * digest per results file, not per row: the file is read whole. */
    if (!dig_source || strcmp(dig_source, r->source)) {
      ident_t id;
      ident_read(r->source, &id);
      zlb_strbuf_reset(&dig);
      if (run_digest(r->source, &id, &dig, err) != 0) {
        zlb_strbuf_release(&key);
        rc = err->code ? err->code : ZLB_EIO;
        break;
      }
      dig_source = r->source;
    }
    bind_text(q, 7, dig.buf);
    sqlite3_bind_int64(q, 8, last);
    zlb_strbuf_release(&key);
    out.ms[0] = out.ms[1] = NAN;
    while (sqlite3_step(q) == SQLITE_ROW) {
      for (int w = 0; w < 2; w++) {
        size_t m;
        double *v = blob_samples(q, w, &m);
        append(&out.samples[w], &out.nsamples[w], v, m);
        free(v);
      }
      found++;
    }
    if (!found)
      continue;
    if (found > *nruns)
      *nruns = found;
    out.op = zlb_xstrdup(r->op);
    out.family = zlb_xstrdup(r->family);
    out.dtype = zlb_xstrdup(r->dtype);
    out.shape = zlb_xstrdup(r->shape);
    out.status = zlb_xstrdup("SUCCESS");
    out.timer = zlb_xstrdup("");
    out.marker = zlb_xstrdup("");
    out.error = zlb_xstrdup("");
    out.ceiling = zlb_xstrdup("");
    out.source = zlb_xstrdup(dbpath);
    out.impl[0] = zlb_xstrdup(r->impl[0]);
    out.impl[1] = zlb_xstrdup(r->impl[1]);
    out.speedup = out.pct_peak = out.bytes = out.flops = out.gbps = out.tflops = out.noise = NAN;
    /* The database keeps no host time: none, not 0. */
    out.host_us[0] = out.host_us[1] = NAN;
    out.cal = r->cal;
    ref->rows[ref->n++] = out;
  }
  sqlite3_finalize(q);
  zlb_strbuf_release(&dig);
  return rc;
}

static int history_check(const char *dbpath, const char *dir, long last, zlb_cmp_opts_t *o,
                         zlb_cmp_format_t fmt) {
  zlb_res_set_t cur = ZLB_RES_SET_INIT, ref = ZLB_RES_SET_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  sqlite3 *db = NULL;
  zlb_cmp_t c;
  zlb_strbuf_t text = ZLB_STRBUF_INIT, label = ZLB_STRBUF_INIT;
  size_t nruns = 0;
  int rc = ZLB_EXIT_OK;
  memset(&c, 0, sizeof(c));
  if (zlb_cli_res_load(&cur, dir, &err)) {
    zlb_cli_errorf("history check: %s", err.msg);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  if (db_open(dbpath, DB_READ, &db, &err) || reference(db, dbpath, &cur, last, &ref, &nruns, &err)) {
    zlb_cli_errorf("history check: %s", err.msg);
    rc = ZLB_EXIT_USAGE;
    goto out;
  }
  zlb_cmp_run(&c, &ref, &cur, o->impl, &o->params);
  if (!c.nmatched)
    zlb_cli_notef("history check: no comparable run of any row in '%s' (same operator, "
                  "implementations, dtype, shape and caliber)",
                  dbpath);
  zlb_strbuf_addf(&label, "history %s (last %ld comparable runs, samples pooled)", dbpath, last);
  zlb_cmp_format(&c, fmt, label.buf, dir, 0, &text);
  fwrite(text.buf, 1, text.len, stdout);
  if (fflush(stdout))
    rc = ZLB_EXIT_OUTPUT;
  else if (o->fail_on && c.count[ZLB_V_SLOWER])
    rc = ZLB_EXIT_FAILED;
out:
  zlb_cmp_release(&c);
  zlb_res_release(&cur);
  zlb_res_release(&ref);
  sqlite3_close(db);
  zlb_strbuf_release(&text);
  zlb_strbuf_release(&label);
  return rc;
}

/* ---- trends for the report ------------------------------------------------------------------ */

void zlb_history_trends_free(zlb_trend_t *t, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(t[i].pts);
  free(t);
}

int zlb_history_trends(const char *dbarg, const zlb_res_set_t *cur, zlb_trend_t **out, size_t *n,
                       zlb_error_t *err) {
  zlb_strbuf_t path = ZLB_STRBUF_INIT;
  sqlite3 *db = NULL;
  sqlite3_stmt *q = NULL;
  int rc;
  *out = NULL;
  *n = 0;
  if ((rc = zlb_history_path(dbarg, &path, err)))
    goto done;
  if (!zlb_path_exists(path.buf)) {
    /* The default database not made yet: no history, no trend. One named
     * with --db that is not there is a mistake (a typo would show every
     * operator without history). */
    if (dbarg)
      rc = zlb_error_set(err, ZLB_ENOTFOUND,
                         "history database '%s' does not exist (zlbench history add writes "
                         "it)",
                         path.buf);
    goto done;
  }
  if ((rc = db_open(path.buf, DB_READ, &db, err))) {
    if (rc == ZLB_ENOTFOUND) { /* an empty database: no trend yet */
      zlb_error_clear(err);
      rc = 0;
    }
    goto done;
  }
  /* The runs of this operator and caliber, newest TREND_POINTS; each
   * point is the geometric mean of its candidate latencies (in C: SQLite's
   * math functions are optional). */
  if (sqlite3_prepare_v2(db,
                         "SELECT r.id, r.started, r.tool_commit, w.candidate_ms FROM rows w "
                         "JOIN runs r ON w.run_id = r.id WHERE w.op = ?1 AND r.caliber = ?2 "
                         "AND w.status = 'SUCCESS' AND w.candidate_ms > 0 AND r.id IN (SELECT "
                         "DISTINCT w2.run_id FROM rows w2 JOIN runs r2 ON w2.run_id = r2.id "
                         "WHERE w2.op = ?1 AND r2.caliber = ?2 ORDER BY w2.run_id DESC LIMIT "
                         "?3) ORDER BY r.id",
                         -1, &q, NULL) != SQLITE_OK) {
    rc = db_error(db, err, "query", path.buf);
    goto done;
  }
  for (size_t i = 0; i < cur->n; i++) {
    const zlb_res_row_t *r = &cur->rows[i];
    zlb_trend_t t;
    zlb_strbuf_t key = ZLB_STRBUF_INIT;
    size_t k;
    for (k = 0; k < *n && strcmp((*out)[k].op, r->op); k++)
      ;
    if (k < *n)
      continue;
    memset(&t, 0, sizeof(t));
    zlb_strlcpy(t.op, r->op, sizeof(t.op));
    caliber_key(&cur->cals[r->cal], &key);
    sqlite3_reset(q);
    bind_text(q, 1, r->op);
    bind_text(q, 2, key.buf);
    sqlite3_bind_int(q, 3, TREND_POINTS);
    zlb_strbuf_release(&key);
    {
      sqlite3_int64 last_id = -1;
      double lsum = 0;
      size_t cnt = 0;
      while (sqlite3_step(q) == SQLITE_ROW) {
        sqlite3_int64 id = sqlite3_column_int64(q, 0);
        double v = col_num(q, 3);
        if (id != last_id) {
          if (cnt)
            t.pts[t.n - 1].ms = exp(lsum / (double)cnt);
          t.pts = zlb_xrealloc(t.pts, (t.n + 1) * sizeof(*t.pts));
          memset(&t.pts[t.n], 0, sizeof(t.pts[0]));
          zlb_strlcpy(t.pts[t.n].when, col_text(q, 1), sizeof(t.pts[0].when));
          zlb_strlcpy(t.pts[t.n].label, col_text(q, 2), sizeof(t.pts[0].label));
          t.n++;
          lsum = 0;
          cnt = 0;
          last_id = id;
        }
        if (v > 0) {
          lsum += log(v);
          cnt++;
        }
      }
      if (cnt)
        t.pts[t.n - 1].ms = exp(lsum / (double)cnt);
    }
    *out = zlb_xrealloc(*out, (*n + 1) * sizeof(**out));
    (*out)[(*n)++] = t;
  }
done:
  sqlite3_finalize(q);
  sqlite3_close(db);
  zlb_strbuf_release(&path);
  return rc;
}

/* ---- the command -------------------------------------------------------------------------- */

static int opt_last(const zlb_cli_option_t *opt, const char *name, const char *v, void *ptr) {
  long x;
  (void)opt;
  if (zlb_parse_long(v, &x) || x < 1 || x > MAX_LAST)
    return zlb_cli_bad_value(name, v, "a count from 1 to 1000");
  *(long *)ptr = x;
  return 0;
}

static void usage(FILE *f, const zlb_cli_option_t *opts) {
  fputs("usage: zlbench history add DIR [--db PATH]\n"
        "       zlbench history show OP [--dtype D] [--shape S] [--db PATH]\n"
        "       zlbench history check DIR [--last N] [compare options] [--db PATH]\n"
        "       zlbench history list [--db PATH]\n"
        "\n"
        "Keep results in an SQLite database, keyed by their identity (tool version and\n"
        "commit, operator library and its build id, device, caliber). add stores a\n"
        "run or batch folder in one transaction (a run stored already is skipped);\n"
        "show prints an operator's trend; check compares a new run or batch against\n"
        "the last N comparable runs (same caliber; their samples pooled) with the\n"
        "verdict rules and exit code of zlbench compare; list prints the stored runs.\n"
        "Default database: $ZL_HISTORY_DB, else $XDG_DATA_HOME/zlbench/history.sqlite,\n"
        "else ~/.local/share/zlbench/history.sqlite.\n"
        "\n"
        "options:\n",
        f);
  zlb_cli_help(f, opts);
  fputs("\nexit codes: 0 done (check: no row slower), 1 check: a row slower,\n"
        "2 bad arguments, unreadable results or no such rows, 6 the database could not\n"
        "be written.\n",
        f);
}

int zlb_cmd_history(int argc, char **argv) {
  zlb_cmp_opts_t o;
  zlb_strvec_t args = ZLB_STRVEC_INIT;
  zlb_strbuf_t path = ZLB_STRBUF_INIT;
  zlb_error_t err = ZLB_ERROR_INIT;
  const char *db = NULL, *dtype = NULL, *shape = NULL;
  zlb_cmp_format_t fmt = ZLB_FMT_TEXT;
  long last = -1; /* -1: not given (5) */
  int rc = ZLB_EXIT_USAGE, check_opts = 0; /* an option only check takes was given */
  zlb_dtype_t dt;

  zlb_cmp_opts_init(&o);
  {
    const zlb_cli_option_t opts[] = {
        ZLB_CLI_STRING("--db", "PATH", &db, "the history database"),
        ZLB_CLI_STRING("--dtype", "D", &dtype, "show: only this dtype"),
        ZLB_CLI_STRING("--shape", "S", &shape, "show: only this shape (as the table prints it)"),
        ZLB_CLI_CALLBACK("--last", "N", opt_last, &last,
                         "check: against the last N comparable runs (default 5)"),
        ZLB_CLI_CALLBACK("--format", "FMT", zlb_cmp_opt_format, &fmt, "check: text, md, csv or json"),
        ZLB_CLI_INCLUDE(zlb_cmp_opts_table(&o)),
        ZLB_CLI_HELP_OPT,
        ZLB_CLI_END,
    };
    switch (zlb_cli_parse("history", opts, argc, argv, &args, NULL)) {
    case ZLB_CLI_HELP:
      usage(stdout, opts);
      rc = ZLB_EXIT_OK;
      goto out;
    case ZLB_CLI_BAD:
      goto out;
    default:
      break;
    }
  }
  if (!args.n) {
    zlb_cli_errorf("history: give a subcommand: add DIR, show OP, check DIR or list");
    goto out;
  }
  check_opts = last >= 0 || fmt != ZLB_FMT_TEXT;
  /* An option of another subcommand would be ignored without a word. */
  if ((dtype || shape) && strcmp(args.v[0], "show")) {
    zlb_cli_errorf("history %s: --dtype and --shape belong to 'history show'", args.v[0]);
    goto out;
  }
  {
    /* The compare options (--threshold, --impl, --fail-on, ...) changed
     * from their defaults: they too belong to check. */
    zlb_cmp_opts_t def;
    const zlb_cmp_params_t *a = &o.params, *d = &def.params;
    zlb_cmp_opts_init(&def);
    if (a->threshold != d->threshold || a->alpha != d->alpha || a->resamples != d->resamples ||
        a->seed != d->seed || a->min_abs_ms != d->min_abs_ms ||
        a->throttled_threshold != d->throttled_threshold || o.impl != def.impl ||
        o.allow_mismatch != def.allow_mismatch || o.fail_on != def.fail_on ||
        strcmp(o.color ? o.color : "", def.color))
      check_opts = 1;
  }
  if (check_opts && strcmp(args.v[0], "check")) {
    zlb_cli_errorf("history %s: --last, --format and the compare options (--threshold, "
                   "--impl, --fail-on, ...) belong to 'history check'",
                   args.v[0]);
    goto out;
  }
  if (last < 0)
    last = 5;
  /* The names the rows are stored under: fp32 and FLOAT32 are float32; a
   * name zlbench does not know (FlagGems' complex64) is matched as stored,
   * less torch's "torch." prefix. */
  if (dtype) {
    if (!zlb_dtype_parse(dtype, &dt))
      dtype = zlb_dtype_name(dt);
    else if (!strncmp(dtype, "torch.", 6))
      dtype += 6;
  }
  if (zlb_history_path(db, &path, &err)) {
    zlb_cli_errorf("history: %s", err.msg);
    goto out;
  }
  if (!strcmp(args.v[0], "add") && args.n == 2)
    rc = history_add(path.buf, args.v[1]);
  else if (!strcmp(args.v[0], "show") && args.n == 2)
    rc = history_show(path.buf, args.v[1], dtype, shape);
  else if (!strcmp(args.v[0], "check") && args.n == 2)
    rc = history_check(path.buf, args.v[1], last, &o, fmt);
  else if (!strcmp(args.v[0], "list") && args.n == 1)
    rc = history_list(path.buf);
  else if (!strcmp(args.v[0], "list"))
    zlb_cli_errorf("history list takes no argument (got '%s')", args.v[1]);
  else if (!strcmp(args.v[0], "add") || !strcmp(args.v[0], "show") ||
           !strcmp(args.v[0], "check"))
    zlb_cli_errorf("history %s takes one %s (got %zu)", args.v[0],
                   strcmp(args.v[0], "show") ? "folder" : "operator", args.n - 1);
  else
    zlb_cli_errorf("history: unknown subcommand '%s': expected 'add DIR', 'show OP', "
                   "'check DIR' or 'list'",
                   args.v[0]);
out:
  zlb_strvec_release(&args);
  zlb_strbuf_release(&path);
  return rc;
}

#endif
