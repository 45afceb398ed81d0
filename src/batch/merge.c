/* zlb_merge_run(): the output folders of a batch's host shards (one
 * `zlbench batch --shard I/N` each, on one host or many) combined into one
 * folder with a batch folder's layout (docs/batch.md, "Merging shards").
 * Every shard folder is untrusted input: its identity and ops_status.csv
 * are checked field by field, sizes are capped, and nothing is taken from
 * it but regular files under ops/<op>/. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_int.h"
#include "zlbench/identity.h"
#include "zlbench/json.h"

#define MAX_JSON (16u << 20)
#define MAX_CSV (64u << 20)
#define MAX_SHARDS 100000
#define MAX_OPS 1000000

typedef struct shard {
  const char *dir;
  zlb_json_t *id;
  int index, count;
  const char *state; /* finished, interrupted, unfinished */
  const char *host;
  const zlb_json_t *selection;
  const char **sorted; /* the selection's names, sorted */
  zlb__status_row_t *rows; /* sorted by operator */
  size_t nrows;
  int merged; /* operators taken from it */
  int ops_fd; /* its ops/, opened without following a link; -1: none */
  char *refused; /* the link or special file that refuses it all; NULL: none */
  const char *refused_kind; /* what that is ("a symbolic link") */
  const char *refused_want; /* what it should be ("folder") */
  char job[96]; /* "12_3" or "12", "" when not under Slurm */
} shard_t;

void zlb_merge_result_release(zlb_merge_result_t *r) {
  zlb_strvec_release(&r->missing);
  zlb_strvec_release(&r->why);
  zlb_strvec_release(&r->notes);
  free(r->missing_shard);
  memset(r, 0, sizeof(*r));
}

/* ---- reading a shard ------------------------------------------------------------ */

static int is_int(const zlb_json_t *v, double lo, double hi) {
  return v && v->kind == ZLB_JSON_NUMBER && v->number == floor(v->number) && v->number >= lo &&
         v->number <= hi;
}

static int str_array(const zlb_json_t *v, size_t max) {
  if (!v || v->kind != ZLB_JSON_ARRAY || v->n > max)
    return 0;
  for (size_t i = 0; i < v->n; i++)
    if (v->items[i]->kind != ZLB_JSON_STRING)
      return 0;
  return 1;
}

static const zlb_json_t *path_get(const zlb_json_t *j, const char *a, const char *b) {
  const zlb_json_t *v = zlb_json_get(j, a);
  return b ? (v && v->kind == ZLB_JSON_OBJECT ? zlb_json_get(v, b) : NULL) : v;
}

static int str_at(const zlb_json_t *j, const char *a, const char *b) {
  const zlb_json_t *v = path_get(j, a, b);
  return v && v->kind == ZLB_JSON_STRING && strlen(v->string) < 4096;
}

/* What `path` is when it is there but neither a regular file nor (with
 * `dir`) a folder; NULL when it is one, or is not there. */
static const char *odd_kind(const char *path, int dir) {
  struct stat st;
  if (lstat(path, &st) != 0 || (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
    return NULL;
  return zlb_node_kind(st.st_mode);
}

static void refuse(shard_t *s, const char *path, const char *kind, const char *want) {
  if (s->refused)
    return;
  s->refused = zlb_xstrdup(path);
  s->refused_kind = kind ? kind : "a symbolic link";
  s->refused_want = want;
}

/* Check the members merge relies on; "" or what is wrong. */
static const char *check_identity(const zlb_json_t *j) {
  const zlb_json_t *sel, *ops, *fin, *intr;
  if (!j || j->kind != ZLB_JSON_OBJECT)
    return "not a JSON object";
  if (strcmp(zlb_json_get_string(j, "schema", ""), ZLB_IDENTITY_SCHEMA))
    return "schema is not " ZLB_IDENTITY_SCHEMA;
  if (strcmp(zlb_json_get_string(j, "kind", ""), "batch"))
    return "kind is not \"batch\" (give the output folder of a zlbench batch)";
  if (zlb_json_get(j, "merge"))
    return "it is a merged folder, not a shard's";
  if (!str_at(j, "tool", "version") || !str_at(j, "tool", "git_commit"))
    return "tool.version or tool.git_commit is missing or not a string";
  if (!str_at(j, "host", "hostname"))
    return "host.hostname is missing or not a string";
  if (!str_at(j, "backend", "name"))
    return "backend.name is missing or not a string";
  if (!is_int(path_get(j, "shard", "count"), 1, MAX_SHARDS))
    return "shard.count is not an integer in 1..100000";
  if (!is_int(path_get(j, "shard", "index"), 0, path_get(j, "shard", "count")->number - 1))
    return "shard.index is not an integer in 0..count-1";
  if (!str_array(zlb_json_get(j, "devices"), 4096))
    return "devices is not an array of strings";
  if (zlb_json_get(j, "device_ids") && !str_array(zlb_json_get(j, "device_ids"), 4096))
    return "device_ids is not an array of strings";
  if (!str_array(zlb_json_get(j, "dtypes"), 64) || !str_array(zlb_json_get(j, "run_args"), 4096))
    return "dtypes or run_args is not an array of strings";
  if (!is_int(zlb_json_get(j, "retries"), 0, 100) ||
      !(zlb_json_get(j, "timeout_s") && zlb_json_get(j, "timeout_s")->kind == ZLB_JSON_NUMBER))
    return "retries or timeout_s is missing or not a number";
  sel = zlb_json_get(j, "selection");
  if (!str_array(sel, MAX_OPS))
    return "selection is missing or not an array of strings (a batch older than "
           "'zlbench merge' does not record it: run it again)";
  for (size_t i = 0; i < sel->n; i++)
    if (!zlb__op_name_ok(sel->items[i]->string))
      return "selection holds an invalid operator name";
  ops = zlb_json_get(j, "operators");
  if (!ops || ops->kind != ZLB_JSON_ARRAY || ops->n > sel->n)
    return "operators is not an array no longer than selection";
  if (!str_at(j, "started", NULL))
    return "started is not a string";
  fin = zlb_json_get(j, "finished");
  if (!fin || (fin->kind != ZLB_JSON_NULL && fin->kind != ZLB_JSON_STRING))
    return "finished is neither a string nor null";
  intr = zlb_json_get(j, "interrupted");
  if (intr && intr->kind != ZLB_JSON_BOOL)
    return "interrupted is not a boolean";
  return "";
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int read_shard(shard_t *s, zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  char *text = NULL;
  size_t len = 0;
  const char *why;
  const zlb_json_t *fin, *intr, *sch;
  int rc;
  zlb_path_join(&p, s->dir, "run_identity.json");
  if ((rc = zlb__read_capped(p.buf, MAX_JSON, &text, &len, err)) ||
      (rc = zlb_json_parse(text, len, p.buf, &s->id, err)))
    goto out;
  why = check_identity(s->id);
  if (*why) {
    rc = zlb_error_set(err, ZLB_EPARSE, "%s: %s", p.buf, why);
    goto out;
  }
  s->count = (int)path_get(s->id, "shard", "count")->number;
  s->index = (int)path_get(s->id, "shard", "index")->number;
  s->host = path_get(s->id, "host", "hostname")->string;
  s->selection = zlb_json_get(s->id, "selection");
  s->sorted = zlb_xcalloc(s->selection->n + 1, sizeof(*s->sorted));
  for (size_t i = 0; i < s->selection->n; i++)
    s->sorted[i] = s->selection->items[i]->string;
  qsort(s->sorted, s->selection->n, sizeof(*s->sorted), cmp_str);
  for (size_t i = 1; i < s->selection->n; i++)
    if (!strcmp(s->sorted[i - 1], s->sorted[i])) {
      rc = zlb_error_set(err, ZLB_EPARSE, "%s: selection lists operator '%s' twice", p.buf,
                         s->sorted[i]);
      goto out;
    }
  fin = zlb_json_get(s->id, "finished");
  intr = zlb_json_get(s->id, "interrupted");
  s->state = fin->kind == ZLB_JSON_NULL ? "unfinished"
             : intr && intr->boolean    ? "interrupted"
                                        : "finished";
  sch = zlb_json_get(s->id, "scheduler");
  if (sch && sch->kind == ZLB_JSON_OBJECT) {
    const char *aj = zlb_json_get_string(sch, "slurm_array_job_id", NULL);
    const char *at = zlb_json_get_string(sch, "slurm_array_task_id", NULL);
    const char *jid = zlb_json_get_string(sch, "slurm_job_id", NULL);
    const char *kx = zlb_json_get_string(sch, "job_completion_index", NULL);
    if (aj && at)
      snprintf(s->job, sizeof(s->job), "Slurm job %.40s_%.40s", aj, at);
    else if (jid)
      snprintf(s->job, sizeof(s->job), "Slurm job %.60s", jid);
    else if (kx)
      snprintf(s->job, sizeof(s->job), "Kubernetes index %.40s", kx);
  }
  /* Nothing is read through a link or from a special file: ops/ is
   * opened once, without following one, and every operator is taken
   * from that descriptor (a link swapped in later is never followed). */
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, s->dir, "ops");
  s->ops_fd = open(p.buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (s->ops_fd < 0 && errno != ENOENT) {
    if (errno != ELOOP && errno != ENOTDIR) {
      rc = zlb_error_set(err, ZLB_EIO, "cannot open '%s': %s", p.buf, strerror(errno));
      goto out;
    }
    refuse(s, p.buf, odd_kind(p.buf, 1), "folder");
  }
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, s->dir, "ops_status.csv");
  if (odd_kind(p.buf, 0)) {
    refuse(s, p.buf, odd_kind(p.buf, 0), "regular file");
  } else if (zlb_path_exists(p.buf) &&
             (rc = zlb__status_read_checked(p.buf, MAX_CSV, &s->rows, &s->nrows, err))) {
    goto out;
  }
  /* A row of an operator this shard does not own is a mix-up. */
  for (size_t i = 0; i < s->nrows; i++) {
    const char *key = s->rows[i].op;
    int owned = zlb_shard_host(key, s->count) == s->index;
    int listed = bsearch(&key, s->sorted, s->selection->n, sizeof(*s->sorted), cmp_str) != NULL;
    if (!listed || !owned) {
      rc = zlb_error_set(err, ZLB_EPARSE,
                         "%s: operator '%s' %s of shard %d of %d", p.buf, s->rows[i].op,
                         listed ? "does not belong to the host shard" : "is not in the selection",
                         s->index, s->count);
      goto out;
    }
  }
out:
  free(text);
  zlb_strbuf_release(&p);
  return rc;
}

/* ---- shards belong together ---------------------------------------------------------- */

/* The members two shards of one batch share, as comparable text. */
static void field_text(const zlb_json_t *j, const char *a, const char *b, zlb_strbuf_t *out) {
  const zlb_json_t *v = path_get(j, a, b);
  zlb_strbuf_reset(out);
  if (!v)
    return;
  if (v->kind == ZLB_JSON_STRING)
    zlb_strbuf_addstr(out, v->string);
  else if (v->kind == ZLB_JSON_NUMBER)
    zlb_strbuf_addf(out, "%.17g", v->number);
  else if (v->kind == ZLB_JSON_ARRAY)
    for (size_t i = 0; i < v->n; i++)
      zlb_strbuf_addf(out, "%s%s", i ? " " : "",
                      v->items[i]->kind == ZLB_JSON_STRING ? v->items[i]->string : "?");
}

static const struct {
  const char *a, *b, *label;
} same_fields[] = {
    {"shard", "count", "shard.count"},  {"selection", NULL, "selection"},
    {"backend", "name", "backend.name"}, {"tool", "version", "tool.version"},
    {"tool", "git_commit", "tool.git_commit"}, {"dtypes", NULL, "dtypes"},
    {"run_args", NULL, "run_args"},      {"timeout_s", NULL, "timeout_s"},
    {"retries", NULL, "retries"},
};

static int check_together(const shard_t *a, const shard_t *b, zlb_error_t *err) {
  zlb_strbuf_t ta = ZLB_STRBUF_INIT, tb = ZLB_STRBUF_INIT, diff = ZLB_STRBUF_INIT;
  int rc = 0;
  for (size_t i = 0; i < sizeof(same_fields) / sizeof(same_fields[0]); i++) {
    field_text(a->id, same_fields[i].a, same_fields[i].b, &ta);
    field_text(b->id, same_fields[i].a, same_fields[i].b, &tb);
    if (!strcmp(ta.buf, tb.buf))
      continue;
    if (!strcmp(same_fields[i].label, "selection"))
      zlb_strbuf_addf(&diff, "%sselection (%zu operators vs %zu, or in another order)",
                      diff.len ? "; " : "", a->selection->n, b->selection->n);
    else
      zlb_strbuf_addf(&diff, "%s%s ('%.80s' vs '%.80s')", diff.len ? "; " : "",
                      same_fields[i].label, ta.buf, tb.buf);
  }
  if (diff.len)
    rc = zlb_error_set(err, ZLB_EINVAL,
                       "shards '%s' and '%s' do not belong to one batch: they differ in %s",
                       a->dir, b->dir, diff.buf);
  zlb_strbuf_release(&ta);
  zlb_strbuf_release(&tb);
  zlb_strbuf_release(&diff);
  return rc;
}

/* ---- the merged folder ------------------------------------------------------------------ */

static const zlb__status_row_t *row_of(const shard_t *s, const char *op) {
  zlb__status_row_t key;
  if (strlen(op) >= sizeof(key.op))
    return NULL;
  zlb_strlcpy(key.op, op, sizeof(key.op));
  return s->nrows ? bsearch(&key, s->rows, s->nrows, sizeof(*s->rows), zlb__status_row_cmp) : NULL;
}

static int same_inode(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* The same file itself (not what a link points at); `a` in folder `at`. */
static int same_file(int at, const char *a, const char *b) {
  struct stat sa, sb;
  return fstatat(at, a, &sa, AT_SYMLINK_NOFOLLOW) == 0 && lstat(b, &sb) == 0 &&
         S_ISREG(sa.st_mode) && S_ISREG(sb.st_mode) && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* OUT/ops/<op> from the shard's ops/<op>: built beside it, then swapped
 * in, so a crash leaves the old copy, none, or a leftover that the next
 * merge removes. Already linked (the same .complete inode): kept. */
static int take_op(const char *out, const shard_t *s, const char *op, int copy,
                   zlb_error_t *err) {
  zlb_strbuf_t src = ZLB_STRBUF_INIT, dst = ZLB_STRBUF_INIT, tmp = ZLB_STRBUF_INIT,
               a = ZLB_STRBUF_INIT, b = ZLB_STRBUF_INIT;
  int rc = 0;
  zlb_strbuf_addf(&src, "%s/ops/%s", s->dir, op);
  zlb_strbuf_addf(&dst, "%s/ops/%s", out, op);
  zlb_strbuf_addf(&tmp, "%s/ops/.merge-%s", out, op);
  zlb_strbuf_addf(&a, "%s/.complete", op);
  zlb_strbuf_addf(&b, "%s/.complete", dst.buf);
  if (!copy && same_file(s->ops_fd, a.buf, b.buf))
    goto out;
  if (zlb__rmtree(tmp.buf) != 0 || zlb__linktree_at(s->ops_fd, op, tmp.buf, copy) != 0 ||
      zlb__rmtree(dst.buf) != 0 || rename(tmp.buf, dst.buf) != 0)
    rc = zlb_error_set(err, ZLB_EIO, "cannot copy '%s' to '%s': %s", src.buf, dst.buf,
                       strerror(errno));
out:
  zlb_strbuf_release(&src);
  zlb_strbuf_release(&dst);
  zlb_strbuf_release(&tmp);
  zlb_strbuf_release(&a);
  zlb_strbuf_release(&b);
  return rc;
}

/* Entries of OUT/ops that are not merged operators: leftovers of an
 * interrupted merge, or results the shards no longer hold. */
static int prune_ops(const char *out, const zlb_strvec_t *keep, zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_strvec_t names = ZLB_STRVEC_INIT;
  DIR *d;
  struct dirent *de;
  int rc = 0;
  zlb_path_join(&p, out, "ops");
  if ((d = opendir(p.buf))) {
    while ((de = readdir(d)))
      if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
          zlb_strvec_find(keep, de->d_name) < 0)
        zlb_strvec_push(&names, de->d_name);
    closedir(d);
  }
  for (size_t i = 0; i < names.n && !rc; i++) {
    zlb_strbuf_t e = ZLB_STRBUF_INIT;
    zlb_path_join(&e, p.buf, names.v[i]);
    if (zlb__rmtree(e.buf) != 0)
      rc = zlb_error_set(err, ZLB_EIO, "cannot remove '%s': %s", e.buf, strerror(errno));
    zlb_strbuf_release(&e);
  }
  zlb_strvec_release(&names);
  zlb_strbuf_release(&p);
  return rc;
}

static void write_shard_entry(zlb_jw_t *jw, const shard_t *s, int index) {
  zlb_jw_object_begin(jw);
  zlb_jw_key_int(jw, "index", index);
  if (!s) {
    zlb_jw_key_string(jw, "state", "absent");
    zlb_jw_key_null(jw, "folder");
    zlb_jw_object_end(jw);
    return;
  }
  zlb_jw_key_string(jw, "state", s->state);
  zlb_jw_key_string(jw, "folder", s->dir);
  zlb_jw_key_string(jw, "hostname", s->host);
  zlb_jw_key_array(jw, "devices");
  for (size_t i = 0; i < zlb_json_get(s->id, "devices")->n; i++)
    zlb_jw_string(jw, zlb_json_get(s->id, "devices")->items[i]->string);
  zlb_jw_array_end(jw);
  {
    const zlb_json_t *ids = zlb_json_get(s->id, "device_ids");
    zlb_jw_key_array(jw, "device_ids");
    for (size_t i = 0; ids && i < ids->n; i++)
      zlb_jw_string(jw, ids->items[i]->string);
    zlb_jw_array_end(jw);
  }
  zlb_jw_key_string(jw, "visibility_grant",
                    zlb_json_get_string(zlb_json_get(s->id, "backend"), "visibility_grant", NULL));
  zlb_jw_key_string(jw, "job", s->job[0] ? s->job : NULL);
  zlb_jw_key_string(jw, "started", zlb_json_get_string(s->id, "started", NULL));
  zlb_jw_key_string(jw, "finished", zlb_json_get_string(s->id, "finished", NULL));
  zlb_jw_key_int(jw, "operators", (long long)zlb_json_get(s->id, "operators")->n);
  zlb_jw_key_int(jw, "merged", s->merged);
  zlb_jw_object_end(jw);
}

static int lock_out(const char *out, int *fd, zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int rc = 0;
  zlb_path_join(&p, out, "merge.lock");
  /* Blocking: merges of the same folder (every Kubernetes pod merges
   * after its shard) take turns. */
  *fd = open(p.buf, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (*fd < 0 || flock(*fd, LOCK_EX) != 0)
    rc = zlb_error_set(err, ZLB_EIO, "cannot lock '%s': %s", p.buf, strerror(errno));
  zlb_strbuf_release(&p);
  return rc;
}

/* OUT may be written: it does not exist, or is an empty folder (but for
 * the lock file), or holds the merge of this batch; OUT/ops, where the
 * merge removes what it does not hold, is a real folder. Anything else is
 * refused (exit 2) before anything in it is touched: a folder of someone
 * else's files is never emptied, a link is never written through. */
static int check_out(const char *out, const shard_t *ref, const shard_t *sh, size_t nsh,
                     zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_json_t *old = NULL;
  char *text = NULL;
  size_t len = 0;
  struct stat st;
  int rc = 0;
  if (stat(out, &st) != 0) {
    if (errno == ENOENT)
      return 0; /* new */
    return zlb_error_set(err, ZLB_EIO, "cannot examine the output folder '%s': %s", out,
                         strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return zlb_error_set(err, ZLB_EEXIST, "the output folder '%s' is not a directory", out);
  for (size_t i = 0; i < nsh; i++)
    if (same_inode(out, sh[i].dir))
      return zlb_error_set(err, ZLB_EINVAL, "the output folder '%s' is the shard folder '%s'",
                           out, sh[i].dir);
  zlb_path_join(&p, out, "ops");
  if (lstat(p.buf, &st) == 0 && !S_ISDIR(st.st_mode)) {
    rc = zlb_error_set(err, ZLB_EEXIST,
                       "'%s' is %s, not a folder: a merge never writes through it; remove it "
                       "or choose another output folder",
                       p.buf, S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
    goto out;
  }
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, out, "run_identity.json");
  if (lstat(p.buf, &st) != 0) {
    /* No identity: only an empty folder is taken (a merge writes its
     * identity before anything else, so this is not a merge's). */
    DIR *d = opendir(out);
    struct dirent *de;
    const char *other = NULL;
    if (!d) {
      rc = zlb_error_set(err, ZLB_EIO, "cannot read the output folder '%s': %s", out,
                         strerror(errno));
      goto out;
    }
    while (!other && (de = readdir(d)))
      if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
          strcmp(de->d_name, "merge.lock"))
        other = de->d_name;
    if (other)
      rc = zlb_error_set(err, ZLB_EEXIST,
                         "the output folder '%s' is not empty ('%.200s' and maybe more) and "
                         "holds no merge (no run_identity.json): merge into a new or empty "
                         "folder, or an earlier merge of these shards",
                         out, other);
    closedir(d);
    goto out;
  }
  if (!S_ISREG(st.st_mode) || zlb__read_capped(p.buf, MAX_JSON, &text, &len, NULL) ||
      zlb_json_parse(text, len, p.buf, &old, NULL) || !zlb_json_get(old, "merge")) {
    rc = zlb_error_set(err, ZLB_EEXIST,
                       "'%s' holds results that are not a merge: choose another output "
                       "folder",
                       out);
    goto out;
  }
  {
    /* A merge of another batch is not overwritten either. */
    zlb_strbuf_t a = ZLB_STRBUF_INIT, b = ZLB_STRBUF_INIT;
    for (size_t f = 0; f < 2 && !rc; f++) {
      const char *key = f ? "selection" : "run_args";
      field_text(old, key, NULL, &a);
      field_text(ref->id, key, NULL, &b);
      if (strcmp(a.buf, b.buf) ||
          zlb_json_get_number(path_get(old, "shard", NULL), "count", -1) != ref->count)
        rc = zlb_error_set(err, ZLB_EEXIST,
                           "'%s' holds the merge of another batch (its %s or shard count "
                           "differ): choose another output folder",
                           out, key);
    }
    zlb_strbuf_release(&a);
    zlb_strbuf_release(&b);
  }
out:
  zlb_json_free(old);
  free(text);
  zlb_strbuf_release(&p);
  return rc;
}

/* OUT/run_identity.json: a batch's, listing every shard; `final` 0 for
 * the one written before anything else (finished null, not complete). */
static int write_identity(const zlb_merge_opts_t *o, const zlb_merge_result_t *r,
                          const shard_t *ref, shard_t *const *by_index, size_t nsh,
                          const zlb__status_row_t *rows, size_t nrows, const char *started,
                          double t0, int final, zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  zlb_jw_t jw;
  int rc;
  zlb_jw_init(&jw, 1);
  zlb_identity_head(&jw, "batch", o->argc, o->argv);
  zlb_identity_backend_begin(&jw, path_get(ref->id, "backend", "name")->string,
                             zlb_json_get_string(zlb_json_get(ref->id, "backend"),
                                                 "visibility_env", NULL));
  zlb_jw_object_end(&jw);
  zlb_jw_key_object(&jw, "merge");
  zlb_jw_key_int(&jw, "shards", ref->count);
  zlb_jw_key_int(&jw, "found", (long long)nsh);
  zlb_jw_key_bool(&jw, "complete", final && r->missing.n == 0);
  zlb_jw_object_end(&jw);
  zlb_jw_key_object(&jw, "shard");
  zlb_jw_key_int(&jw, "count", ref->count);
  zlb_jw_key_string(&jw, "source", "merge");
  zlb_jw_key_string(&jw, "device_rule", "fnv1a64(name) mod ndevices");
  zlb_jw_key_string(&jw, "host_rule", "(fnv1a64(name) >> 32) mod count");
  zlb_jw_object_end(&jw);
  zlb_jw_key_array(&jw, "shards");
  for (int k = 0; k < ref->count; k++)
    write_shard_entry(&jw, by_index[k], k);
  zlb_jw_array_end(&jw);
  zlb_jw_key_double(&jw, "timeout_s", zlb_json_get_number(ref->id, "timeout_s", 0));
  zlb_jw_key_int(&jw, "retries", (long long)zlb_json_get_number(ref->id, "retries", 0));
  {
    static const char *const arrays[] = {"dtypes", "run_args", "selection"};
    for (size_t a = 0; a < 3; a++) {
      const zlb_json_t *v = zlb_json_get(ref->id, arrays[a]);
      zlb_jw_key_array(&jw, arrays[a]);
      for (size_t i = 0; i < v->n; i++)
        zlb_jw_string(&jw, v->items[i]->string);
      zlb_jw_array_end(&jw);
    }
  }
  zlb_jw_key_array(&jw, "operators");
  for (size_t i = 0; i < nrows; i++) {
    zlb_jw_object_begin(&jw);
    zlb_jw_key_string(&jw, "name", rows[i].op);
    zlb_jw_key_int(&jw, "shard", zlb_shard_host(rows[i].op, ref->count));
    zlb_jw_key_string(&jw, "device", rows[i].device);
    zlb_jw_object_end(&jw);
  }
  zlb_jw_array_end(&jw);
  zlb_jw_key_array(&jw, "missing");
  for (size_t i = 0; i < r->missing.n; i++) {
    zlb_jw_object_begin(&jw);
    zlb_jw_key_string(&jw, "operator", r->missing.v[i]);
    zlb_jw_key_int(&jw, "shard", r->missing_shard[i]);
    zlb_jw_key_string(&jw, "reason", r->why.v[i]);
    zlb_jw_object_end(&jw);
  }
  zlb_jw_array_end(&jw);
  zlb_identity_times(&jw, started, final);
  zlb_jw_key_int(&jw, "ok", r->ok);
  zlb_jw_key_int(&jw, "failed", r->failed);
  zlb_jw_key_int(&jw, "skipped", 0);
  zlb_jw_key_int(&jw, "replayed", 0);
  zlb_jw_key_bool(&jw, "interrupted", 0);
  zlb_jw_key_double(&jw, "seconds", zlb_now_s() - t0);
  zlb_jw_object_end(&jw);
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, o->out_dir, "run_identity.json");
  rc = zlb_write_file_atomic(p.buf, jw.out.buf, jw.out.len, err);
  zlb_jw_release(&jw);
  zlb_strbuf_release(&p);
  return rc;
}

int zlb_merge_run(const zlb_merge_opts_t *o, zlb_merge_result_t *r, zlb_error_t *err) {
  shard_t *sh = zlb_xcalloc(o->dirs->n + 1, sizeof(*sh));
  shard_t **by_index = NULL;
  const shard_t *ref = NULL;
  zlb__status_row_t *rows = NULL;
  zlb_strvec_t merged = ZLB_STRVEC_INIT;
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  char started[32];
  size_t nsh = 0, nrows = 0;
  int rc = 0, lock_fd = -1, unread = 0;
  double t0 = zlb_now_s();

  memset(r, 0, sizeof(*r));
  zlb_iso8601_now(started, sizeof(started));
  /* Read and check every shard before anything is written. */
  for (size_t i = 0; i <= o->dirs->n; i++)
    sh[i].ops_fd = -1;
  for (size_t i = 0; i < o->dirs->n; i++) {
    shard_t *s = &sh[nsh];
    struct stat st;
    const char *kind;
    zlb_strbuf_reset(&p);
    zlb_path_join(&p, o->dirs->v[i], "run_identity.json");
    if (stat(o->dirs->v[i], &st) == 0 && !S_ISDIR(st.st_mode)) {
      rc = zlb_error_set(err, ZLB_EINVAL,
                         "%s: not a directory (give the output folders of the shards)",
                         o->dirs->v[i]);
      goto out;
    }
    if ((kind = odd_kind(p.buf, 0))) {
      /* Not read through a link: the shard is refused (which one it is
       * is unknown), its operators missing. */
      zlb_strvec_pushf(&r->notes,
                       "refusing '%s': '%s' is %s, not a regular file (its operators are "
                       "missing)",
                       o->dirs->v[i], p.buf, kind);
      unread++;
      continue;
    }
    if (!zlb_is_dir(o->dirs->v[i]) || !zlb_path_exists(p.buf)) {
      /* A shard that never started leaves no folder: its operators are
       * reported missing below. */
      zlb_strvec_pushf(&r->notes, "%s: no run_identity.json (a shard that never started?)",
                       o->dirs->v[i]);
      continue;
    }
    s->dir = o->dirs->v[i];
    if ((rc = read_shard(s, err)))
      goto out;
    if (s->refused)
      zlb_strvec_pushf(&r->notes,
                       "refusing shard %d of %d: '%s' is %s, not a %s (its operators are "
                       "missing)",
                       s->index, s->count, s->refused, s->refused_kind, s->refused_want);
    nsh++;
  }
  if (!nsh) {
    rc = zlb_error_set(err, ZLB_ENOTFOUND,
                       "none of the %zu folders holds a batch's run_identity.json", o->dirs->n);
    goto out;
  }
  ref = &sh[0];
  by_index = zlb_xcalloc((size_t)ref->count, sizeof(*by_index));
  for (size_t i = 0; i < nsh; i++) {
    if (i && (rc = check_together(ref, &sh[i], err)))
      goto out;
    if (by_index[sh[i].index]) {
      rc = zlb_error_set(err, ZLB_EINVAL, "shard %d of %d appears twice: '%s' and '%s'",
                         sh[i].index, sh[i].count, by_index[sh[i].index]->dir, sh[i].dir);
      goto out;
    }
    by_index[sh[i].index] = &sh[i];
  }
  /* The output folder: new, empty, or a merge of these shards (never a
   * batch's folder, never one of the inputs, never a folder of other
   * files): checked before anything in it is touched, and again once it
   * is locked. */
  if ((rc = check_out(o->out_dir, ref, sh, nsh, err)))
    goto out;
  if ((rc = zlb_mkdirs(o->out_dir, err)) || (rc = lock_out(o->out_dir, &lock_fd, err)) ||
      (rc = check_out(o->out_dir, ref, sh, nsh, err)))
    goto out;
  /* From here on the folder says it is a merge's: a merge that dies
   * leaves a folder the next merge recognises (and completes). */
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, o->out_dir, "run_identity.json");
  if (!zlb_path_exists(p.buf) &&
      (rc = write_identity(o, r, ref, by_index, nsh, NULL, 0, started, t0, 0, err)))
    goto out;

  /* Every operator of the selection exactly once, from the shard the
   * hash gives it. */
  rows = zlb_xcalloc(ref->selection->n + 1, sizeof(*rows));
  r->shard_count = ref->count;
  r->shards_found = (int)nsh;
  r->total = ref->selection->n;
  r->missing_shard = zlb_xcalloc(ref->selection->n + 1, sizeof(int));
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, o->out_dir, "ops");
  if ((rc = zlb_mkdirs(p.buf, err)))
    goto out;
  for (size_t i = 0; i < ref->selection->n; i++) {
    const char *op = ref->selection->items[i]->string;
    int k = zlb_shard_host(op, ref->count);
    shard_t *s = by_index[k];
    const zlb__status_row_t *row = s ? row_of(s, op) : NULL;
    zlb_strbuf_t c = ZLB_STRBUF_INIT;
    struct stat st;
    int complete = 0;
    if (s && s->refused) {
      r->missing_shard[r->missing.n] = k;
      zlb_strvec_push(&r->missing, op);
      zlb_strvec_pushf(&r->why,
                       "shard %d of %d (%s%s%s): '%s' is %s, refused", k, ref->count, s->host,
                       s->job[0] ? ", " : "", s->job, s->refused, s->refused_kind);
      continue;
    }
    if (row && s->ops_fd >= 0) {
      zlb_strbuf_addf(&c, "%s/.complete", op);
      complete = fstatat(s->ops_fd, c.buf, &st, 0) == 0;
      zlb_strbuf_release(&c);
    }
    if (row && complete) {
      /* Only a real folder of regular files is taken: a link (the
       * operator's folder, its results.json) could pull in files from
       * anywhere, and dropping it alone would count the operator ok
       * without its results. Such an operator is missing, and said so. */
      zlb_strbuf_t src = ZLB_STRBUF_INIT, bad = ZLB_STRBUF_INIT;
      int t;
      zlb_strbuf_addf(&src, "%s/ops/%s", s->dir, op);
      t = zlb__tree_check_at(s->ops_fd, op, src.buf, &bad, 0);
      if (t) {
        if (t < 0)
          zlb_strbuf_addf(&bad, "%s (%s)", src.buf, strerror(errno));
        zlb_strvec_pushf(&r->notes,
                         "%s: a symbolic link or special file in an operator's results: "
                         "'%s' is not merged",
                         bad.buf, op);
        r->missing_shard[r->missing.n] = k;
        zlb_strvec_push(&r->missing, op);
        zlb_strvec_pushf(&r->why,
                         "shard %d of %d (%s%s%s): '%s' is a symbolic link or special file, "
                         "refused",
                         k, ref->count, s->host, s->job[0] ? ", " : "", s->job, bad.buf);
        zlb_strbuf_release(&src);
        zlb_strbuf_release(&bad);
        continue;
      }
      zlb_strbuf_release(&src);
      zlb_strbuf_release(&bad);
      if ((rc = take_op(o->out_dir, s, op, o->copy, err)))
        goto out;
      rows[nrows++] = *row;
      s->merged++;
      zlb_strvec_push(&merged, op);
      if (zlb__status_is_ok(row->status))
        r->ok++;
      else
        r->failed++;
      continue;
    }
    r->missing_shard[r->missing.n] = k;
    zlb_strvec_push(&r->missing, op);
    if (!s && unread)
      zlb_strvec_pushf(&r->why, "shard %d of %d: no folder among the inputs (never started, "
                                "cancelled before it started, or refused: see the warnings)",
                       k, ref->count);
    else if (!s)
      zlb_strvec_pushf(&r->why, "shard %d of %d: no folder among the inputs (never started, "
                                "or cancelled before it started)",
                       k, ref->count);
    else if (!strcmp(s->state, "unfinished"))
      zlb_strvec_pushf(&r->why, "shard %d of %d (%s%s%s): stopped without finishing (killed: "
                                "a time limit, scancel or a lost node)",
                       k, ref->count, s->host, s->job[0] ? ", " : "", s->job);
    else if (!strcmp(s->state, "interrupted"))
      zlb_strvec_pushf(&r->why, "shard %d of %d (%s%s%s): interrupted (SIGTERM or SIGINT: a "
                                "time limit or scancel) before the operator finished",
                       k, ref->count, s->host, s->job[0] ? ", " : "", s->job);
    else
      zlb_strvec_pushf(&r->why, "shard %d of %d (%s%s%s): finished without a result for it "
                                "(rerun the shard)",
                       k, ref->count, s->host, s->job[0] ? ", " : "", s->job);
  }
  if ((rc = prune_ops(o->out_dir, &merged, err)))
    goto out;
  qsort(rows, nrows, sizeof(*rows), zlb__status_row_cmp);
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, o->out_dir, "ops_status.csv");
  if ((rc = zlb__status_write(p.buf, rows, nrows, err)) ||
      (rc = zlb__write_summary(o->out_dir, rows, nrows, err)))
    goto out;

  rc = write_identity(o, r, ref, by_index, nsh, rows, nrows, started, t0, 1, err);
  r->merged = nrows;
out:
  if (lock_fd >= 0)
    close(lock_fd);
  for (size_t i = 0; i <= nsh && i < o->dirs->n; i++) {
    zlb_json_free(sh[i].id);
    if (sh[i].ops_fd >= 0)
      close(sh[i].ops_fd);
    free(sh[i].refused);
    free(sh[i].sorted);
    free(sh[i].rows);
  }
  free(sh);
  free(by_index);
  free(rows);
  zlb_strvec_release(&merged);
  zlb_strbuf_release(&p);
  return rc;
}
