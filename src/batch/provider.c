/* Providers: where a batch's operators come from, how one operator's child
 * is started, and what its end means. The C corpus ("zlbench": `zlbench run`
 * children) is one; FlagGems' pytest benchmark suite ("flaggems": pytest
 * children with the zlbench.pytest_plugin timer) another. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_int.h"
#include "zlbench/json.h"
#include "zlbench/ops.h"

/* ---- shared helpers ------------------------------------------------------------------ */

/* Read at most `max` bytes of a child's file (missing: empty). */
static void read_capped(const char *dir, const char *name, size_t max, zlb_strbuf_t *out) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  FILE *f;
  char buf[4096];
  size_t n;
  zlb_path_join(&p, dir, name);
  f = zlb_fopen_regular(p.buf, NULL);
  while (f && out->len < max && (n = fread(buf, 1, sizeof(buf), f)) > 0)
    zlb_strbuf_add(out, buf, n);
  if (f)
    fclose(f);
  zlb_strbuf_release(&p);
}

/* ---- the C corpus ---------------------------------------------------------------------- */

static int corpus_discover(zlb__batch_t *b, zlb__registered_t *reg, zlb_error_t *err) {
  return zlb__discover_ops(b, reg, err);
}

static int corpus_select(zlb__batch_t *b, const zlb__registered_t *reg, zlb_strvec_t *sel,
                         zlb_error_t *err) {
  return zlb__select_ops(b, reg, sel, err);
}

static int corpus_child(zlb__batch_t *b, zlb__job_t *j, const zlb__unit_t *u,
                        zlb_strvec_t *argv, zlb_strvec_t *env, int *want_stdout,
                        zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  (void)err;
  *want_stdout = 0;
  zlb_strvec_push(argv, o->exe);
  zlb_strvec_push(argv, "run");
  zlb_strvec_push(argv, j->op);
  zlb_strvec_push(argv, "--backend");
  zlb_strvec_push(argv, b->backend);
  zlb_strvec_push(argv, "--device");
  /* With a visibility variable the child sees only its device, as 0. */
  zlb_strvec_push(argv, b->vis_env[0] ? "0" : b->devices.v[j->slot]);
  zlb_strvec_push(argv, "--out");
  zlb_strvec_push(argv, j->attempt_dir);
  zlb_strvec_push(argv, "--color");
  zlb_strvec_push(argv, "never");
  if (u->dtypes[0]) {
    zlb_strvec_push(argv, "--dtypes");
    zlb_strvec_push(argv, u->dtypes);
  }
  if (u->deny) {
    zlb_strvec_push(argv, "--deny-capture");
    zlb_strvec_push(argv, j->op);
  }
  for (size_t i = 0; i < o->run_args.n; i++)
    zlb_strvec_push(argv, o->run_args.v[i]);
  zlb__push_libs(o, argv);
  (void)env;
  return 0;
}

static void corpus_classify(zlb__batch_t *b, zlb__job_t *j, const zlb_exit_t *ex,
                            zlb__verdict_t *v) {
  (void)b;
  v->code = ex->code;
  v->status[0] = '\0';
  v->line[0] = '\0';
  v->final = ex->code == ZLB_EXIT_USAGE || ex->code == ZLB_EXIT_UNAVAIL;
  v->whole = 0;
  if (!ex->signaled && !ex->timed_out && ex->code == ZLB_EXIT_FAILED) {
    /* FAILED rows: the first row's note says why (the run.log line
     * "  note: [shape]: output 'out': ... differ ..."). */
    zlb_strbuf_t log = ZLB_STRBUF_INIT;
    const char *p;
    read_capped(j->attempt_dir, "run.log", 1 << 20, &log);
    if (log.len && (p = strstr(log.buf, "\n  note: ")))
      snprintf(v->line, sizeof(v->line), "%.*s", (int)strcspn(p + 9, "\n"), p + 9);
    zlb_strbuf_release(&log);
  }
}

/* ---- FlagGems' pytest suite -------------------------------------------------------------- */

/* A program on PATH (or a path with a slash) as an absolute path. */
static int find_program(const char *name, zlb_strbuf_t *out) {
  const char *path = getenv("PATH");
  zlb_strvec_t dirs = ZLB_STRVEC_INIT;
  int found = 0;
  if (strchr(name, '/')) {
    zlb_strbuf_addstr(out, name);
    return access(name, X_OK) == 0;
  }
  zlb_strvec_split(&dirs, path && *path ? path : "/usr/bin:/bin", ':');
  for (size_t i = 0; i < dirs.n && !found; i++) {
    zlb_strbuf_reset(out);
    zlb_strbuf_addf(out, "%s/%s", dirs.v[i][0] ? dirs.v[i] : ".", name);
    found = access(out->buf, X_OK) == 0;
  }
  zlb_strvec_release(&dirs);
  return found;
}

static const char *python_name(void) {
  const char *p = getenv("ZL_PYTHON");
  return p && *p ? p : "python3";
}

/* PYTHONPATH for FlagGems' children and the scan: FlagGems' src/ and root
 * (no install step), zlbench's package where the batch can find it, then
 * whatever the caller had. */
static void python_path(const zlb__batch_t *b, zlb_strbuf_t *out) {
  const char *old = getenv("PYTHONPATH");
  zlb_strbuf_t assets = ZLB_STRBUF_INIT;
  zlb_strbuf_addf(out, "PYTHONPATH=%s/src:%s", b->o->flaggems_dir, b->o->flaggems_dir);
  /* The package next to the assets: <source>/python for a build tree,
   * <prefix>/share/zlbench/python for an install. */
  if (!zlb_assets_dir(&assets, NULL)) {
    zlb_strbuf_t p = ZLB_STRBUF_INIT;
    zlb_strbuf_addf(&p, "%s/../python", assets.buf);
    if (zlb_is_dir(p.buf))
      zlb_strbuf_addf(out, ":%s", p.buf);
    zlb_strbuf_release(&p);
  }
  if (old && *old)
    zlb_strbuf_addf(out, ":%s", old);
  zlb_strbuf_release(&assets);
}

/* A name the scan may report: [A-Za-z_][A-Za-z0-9_.]*, shorter than `cap`. */
static int op_name_ok(const char *s, size_t cap) {
  size_t n = strlen(s);
  if (!n || n >= cap || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') ||
                          s[0] == '_'))
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.'))
      return 0;
  return 1;
}

/* test_*.py, one path component, no dots but the suffix's. */
static int test_file_ok(const char *s) {
  size_t n = strlen(s);
  if (n < 9 || n > 200 || !zlb_starts_with(s, "test_") || strcmp(s + n - 3, ".py"))
    return 0;
  for (size_t i = 0; i < n - 3; i++)
    if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      return 0;
  return 1;
}

/* The scan's fifth field: the other test files holding the mark,
 * comma-separated, each a test file name, at most 64 of them; "-" for none
 * (stored as ""). */
static int other_files_ok(const char *s) {
  zlb_strvec_t v = ZLB_STRVEC_INIT;
  int ok = 1;
  if (!strcmp(s, "-"))
    return 1;
  zlb_strvec_split(&v, s, ',');
  if (!v.n || v.n > 64)
    ok = 0;
  for (size_t i = 0; i < v.n && ok; i++)
    ok = test_file_ok(v.v[i]);
  zlb_strvec_release(&v);
  return ok;
}

/* Parse the scan's output (untrusted: every field is checked, and a bad
 * line is an error naming its number). A line has four fields, or five
 * with the other files holding the mark. */
int zlb__flaggems_parse_ops(const char *text, zlb__registered_t *reg, zlb_strvec_t *files,
                            zlb_strvec_t *others, zlb_error_t *err) {
  zlb_strvec_t lines = ZLB_STRVEC_INIT;
  int rc = 0;
  size_t nlines;
  zlb_strvec_split(&lines, text, '\n');
  nlines = lines.n;
  reg->dtypes = zlb_xcalloc(nlines + 1, sizeof(uint32_t));
  for (size_t i = 0; i < nlines; i++) {
    zlb_strvec_t f = ZLB_STRVEC_INIT;
    uint32_t mask = 0;
    if (!lines.v[i][0])
      continue;
    zlb_strvec_split(&f, lines.v[i], '\t');
    if ((f.n != 4 && f.n != 5) || !op_name_ok(f.v[0], 128) || !test_file_ok(f.v[1]) ||
        (f.n == 5 && !other_files_ok(f.v[4])) ||
        (strcmp(f.v[2], "-") && zlb_dtype_list_parse(f.v[2], &mask, NULL)) ||
        (strcmp(f.v[3], "-") && strcmp(f.v[3], "stable") && strcmp(f.v[3], "beta") &&
         strcmp(f.v[3], "alpha"))) {
      rc = zlb_error_set(err, ZLB_EPARSE,
                         "flaggems_discover output, line %zu: expected 'name<TAB>test_*.py"
                         "<TAB>dtypes|-<TAB>stage|-[<TAB>test_*.py,...|-]', got '%.80s'",
                         i + 1, lines.v[i]);
      zlb_strvec_release(&f);
      break;
    }
    if (zlb_strvec_find(&reg->names, f.v[0]) >= 0) {
      rc = zlb_error_set(err, ZLB_EPARSE, "flaggems_discover output, line %zu: operator '%s' "
                         "listed twice", i + 1, f.v[0]);
      zlb_strvec_release(&f);
      break;
    }
    reg->dtypes[reg->names.n] = mask;
    zlb_strvec_push(&reg->names, f.v[0]);
    zlb_strvec_push(files, f.v[1]);
    zlb_strvec_push(others, f.n == 5 && strcmp(f.v[4], "-") ? f.v[4] : "");
    zlb_strvec_release(&f);
  }
  zlb_strvec_release(&lines);
  return rc;
}

/* The interpreter (ZL_PYTHON, else python3 on the PATH) as an absolute
 * path in b->python, looked up once (the fork servers may start before the
 * operator scan): 0 when there is none. */
static int fg_python(zlb__batch_t *b) {
  zlb_strbuf_t py = ZLB_STRBUF_INIT;
  int found;
  if (b->python[0])
    return 1;
  if ((found = find_program(python_name(), &py)))
    zlb_strlcpy(b->python, py.buf, sizeof(b->python));
  zlb_strbuf_release(&py);
  return found;
}

static int fg_discover(zlb__batch_t *b, zlb__registered_t *reg, zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  zlb_strvec_t argv = ZLB_STRVEC_INIT, env = ZLB_STRVEC_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT, errout = ZLB_STRBUF_INIT, pp = ZLB_STRBUF_INIT;
  zlb_exit_t ex;
  int rc;
  if (!fg_python(b)) {
    rc = zlb_error_set(err, ZLB_EUNAVAIL,
                       "cannot find the Python interpreter '%s' (set ZL_PYTHON)", python_name());
    goto out;
  }
  python_path(b, &pp);
  zlb_strvec_push(&env, pp.buf);
  zlb_strvec_push(&env, "PYTHONDONTWRITEBYTECODE=1");
  zlb_strvec_push(&argv, b->python);
  zlb_strvec_push(&argv, "-m");
  zlb_strvec_push(&argv, "zlbench.flaggems_discover");
  zlb_strvec_push(&argv, o->flaggems_dir);
  if (o->stage) {
    zlb_strvec_push(&argv, "--stage");
    zlb_strvec_push(&argv, o->stage);
  }
  if ((rc = zlb_spawn_capture(argv.v, &env, 300.0, 4 << 20, &out, &errout, &ex, err)))
    goto out;
  if (ex.signaled || ex.timed_out || ex.code != 0) {
    char what[64];
    zlb_exit_describe(&ex, what, sizeof(what));
    rc = zlb_error_set(err, ex.code == 2 ? ZLB_EINVAL : ZLB_EUNAVAIL,
                       "the FlagGems operator scan (%s -m zlbench.flaggems_discover %s) "
                       "failed (%s): %.300s",
                       b->python, o->flaggems_dir, what, errout.len ? errout.buf : "no message");
    goto out;
  }
  rc = zlb__flaggems_parse_ops(out.buf, reg, &b->op_files, &b->op_others, err);
out:
  zlb_strvec_release(&argv);
  zlb_strvec_release(&env);
  zlb_strbuf_release(&out);
  zlb_strbuf_release(&errout);
  zlb_strbuf_release(&pp);
  return rc;
}

static int fg_select(zlb__batch_t *b, const zlb__registered_t *reg, zlb_strvec_t *sel,
                     zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  zlb_strvec_t dismissed = ZLB_STRVEC_INIT, reasons = ZLB_STRVEC_INIT;
  int rc = 0;
  if (o->dismiss_path &&
      (rc = zlb_dismiss_load(o->dismiss_path, "flaggems", &dismissed, &reasons, err)))
    goto out;
  if (o->ops.n) {
    for (size_t i = 0; i < o->ops.n; i++) {
      if (zlb_strvec_find(&reg->names, o->ops.v[i]) < 0) {
        rc = zlb_error_set(err, ZLB_ENOTFOUND,
                           "unknown operator '%s': no benchmark in %s/benchmark is marked "
                           "with it%s ('zlbench batch --provider flaggems --list' lists them)",
                           o->ops.v[i], o->flaggems_dir, o->stage ? " at that --stage" : "");
        goto out;
      }
      if (zlb_strvec_find(sel, o->ops.v[i]) < 0)
        zlb_strvec_push(sel, o->ops.v[i]);
    }
    goto out;
  }
  for (size_t i = 0; i < reg->names.n; i++)
    if (zlb_strvec_find(&dismissed, reg->names.v[i]) < 0)
      zlb_strvec_push(sel, reg->names.v[i]);
out:
  zlb_strvec_release(&dismissed);
  zlb_strvec_release(&reasons);
  return rc;
}

/* GEMS_VENDOR for a zlbench backend: FlagGems then never probes vendors
 * with its own (time-limit-less) device query commands. */
static const char *gems_vendor(const char *backend) {
  static const struct {
    const char *backend, *vendor;
  } map[] = {{"cuda", "nvidia"}, {"musa", "mthreads"}, {"rocm", "amd"}, {"ascend", "ascend"}};
  for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
    if (!strcmp(backend, map[i].backend))
      return map[i].vendor;
  return NULL;
}

/* `--opt value` of the run options passed through, or NULL. */
static const char *run_arg(const zlb_batch_opts_t *o, const char *name) {
  const char *v = NULL;
  size_t n = strlen(name);
  for (size_t i = 0; i < o->run_args.n; i++) {
    const char *a = o->run_args.v[i];
    if (!strcmp(a, name) && i + 1 < o->run_args.n)
      v = o->run_args.v[++i];
    else if (!strncmp(a, name, n) && a[n] == '=')
      v = a + n + 1;
  }
  return v;
}

/* The run options a FlagGems child understands; the batch refuses others
 * before anything runs (fg_check). */
static const char *const fg_run_opts[] = {"--level", "--shape-file", "--timer", "--warmup-ms",
                                          "--rep-ms", NULL};

static int fg_check(const zlb__batch_t *b, zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  zlb_strbuf_t bench = ZLB_STRBUF_INIT;
  int is_dir;
  /* Before anything starts (the fork servers start before the scan). */
  zlb_path_join(&bench, o->flaggems_dir, "benchmark");
  is_dir = zlb_is_dir(bench.buf);
  zlb_strbuf_release(&bench);
  if (!is_dir)
    return zlb_error_set(err, ZLB_EINVAL,
                         "--flaggems %s: no benchmark/ folder there; give the root of a "
                         "FlagGems checkout",
                         o->flaggems_dir);
  for (size_t i = 0; i < o->run_args.n; i++) {
    const char *a = o->run_args.v[i];
    int known = 0;
    if (!zlb_starts_with(a, "--"))
      continue;
    for (const char *const *k = fg_run_opts; *k && !known; k++) {
      size_t n = strlen(*k);
      known = !strncmp(a, *k, n) && (a[n] == '\0' || a[n] == '=');
    }
    if (!known)
      return zlb_error_set(err, ZLB_EINVAL,
                           "run option '%s' has no meaning for --provider flaggems (it "
                           "takes --level, --shape-file, --timer, --warmup-ms, --rep-ms, "
                           "--dtypes, --mode)",
                           a);
  }
  return 0;
}

static void fg_env(const zlb__batch_t *b, zlb_strvec_t *env);

static int fg_child(zlb__batch_t *b, zlb__job_t *j, const zlb__unit_t *u, zlb_strvec_t *argv,
                    zlb_strvec_t *env, int *want_stdout, zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  const char *level = run_arg(o, "--level"), *shape = run_arg(o, "--shape-file");
  const char *warm = run_arg(o, "--warmup-ms");
  const char *rep = run_arg(o, "--rep-ms"), *mode = getenv("SHAPE_MODE");
  const char *node = getenv("TEST_NODE");
  const zlb__server_t *srv = b->servers && b->servers[j->slot].on ? &b->servers[j->slot] : NULL;
  long r = zlb_strvec_find(b->reg_names, j->op);
  zlb_strbuf_t s = ZLB_STRBUF_INIT;
  (void)err;
  *want_stdout = 1;
  zlb_strvec_push(argv, b->python);
  zlb_strvec_push(argv, "-m");
  if (srv) {
    zlb_strvec_push(argv, "zlbench.forkrun");
    zlb_strvec_push(argv, "-m");
  }
  zlb_strvec_push(argv, "pytest");
  zlb_strvec_push(argv, "-q");
  zlb_strvec_push(argv, "-s");
  zlb_strvec_push(argv, "-p");
  zlb_strvec_push(argv, "no:cacheprovider");
  zlb_strvec_push(argv, "-p");
  zlb_strvec_push(argv, "zlbench.pytest_plugin");
  zlb_strvec_push(argv, "--rootdir");
  zlb_strvec_push(argv, o->flaggems_dir);
  if (node && *node) {
    /* TEST_NODE: a node of its own ("{op}" stands for the operator). */
    const char *p = node, *q;
    zlb_strbuf_addf(&s, "%s/benchmark/", o->flaggems_dir);
    while ((q = strstr(p, "{op}"))) {
      zlb_strbuf_add(&s, p, (size_t)(q - p));
      zlb_strbuf_addstr(&s, j->op);
      p = q + 4;
    }
    zlb_strbuf_addstr(&s, p);
    zlb_strvec_push(argv, s.buf);
  } else {
    zlb_strbuf_addf(&s, "%s/benchmark/%s", o->flaggems_dir,
                    r >= 0 ? b->op_files.v[r] : "missing.py");
    zlb_strvec_push(argv, s.buf);
    zlb_strvec_push(argv, "-m");
    zlb_strvec_push(argv, j->op);
  }
  zlb_strvec_push(argv, "--mode");
  zlb_strvec_push(argv, o->fg_mode ? o->fg_mode : "kernel");
  zlb_strvec_push(argv, "--level");
  zlb_strvec_push(argv, level ? level : "core");
  if (warm) {
    zlb_strvec_push(argv, "--warmup");
    zlb_strvec_push(argv, warm);
  }
  if (rep) {
    zlb_strvec_push(argv, "--iter");
    zlb_strvec_push(argv, rep);
  }
  if (u->dtypes[0]) {
    zlb_strvec_t d = ZLB_STRVEC_INIT;
    zlb_strvec_split(&d, u->dtypes, ',');
    for (size_t i = 0; i < d.n; i++) {
      zlb_strvec_push(argv, "--dtypes");
      zlb_strvec_push(argv, d.v[i]);
    }
    zlb_strvec_release(&d);
  }
  /* SHAPE_MODE=upstream: FlagGems' own core_shapes.yaml; otherwise a
   * zlbench shape file given with --shape-file or ZL_SHAPE_FILE (FlagGems
   * looks its operator and class-name keys up there). One argument: pytest
   * takes a separate one for a path when it looks for its ini file, and a
   * file outside the checkout would lose FlagGems' pytest.ini. */
  if (!shape && (shape = getenv("ZL_SHAPE_FILE")) && !*shape)
    shape = NULL;
  if (shape && !(mode && !strcmp(mode, "upstream"))) {
    zlb_strbuf_reset(&s);
    zlb_strbuf_addf(&s, "--shape_file=%s", shape);
    zlb_strvec_push(argv, s.buf);
  }

  fg_env(b, env);
  zlb_strvec_pushf(env, "ZL_FG_OUT=%s", j->attempt_dir);
  zlb_strvec_pushf(env, "ZL_FG_OP=%s", j->op);
  /* The file the operator runs from and the others holding its mark, for
   * its run_identity.json (TEST_NODE: the node replaces the file). */
  if (r >= 0 && !(node && *node)) {
    zlb_strvec_pushf(env, "ZL_FG_FILE=%s", b->op_files.v[r]);
    if (r < (long)b->op_others.n && b->op_others.v[r][0])
      zlb_strvec_pushf(env, "ZL_FG_OTHER_FILES=%s", b->op_others.v[r]);
  }
  if (u->deny)
    zlb_strvec_pushf(env, "ZL_DENY_CAPTURE=%s", j->op);
  if (srv) {
    zlb_strvec_pushf(env, "ZL_FG_SERVER=%s", srv->sock);
    zlb_strvec_pushf(env, "ZL_FG_SERVER_PID=%ld", (long)srv->child.pid);
  }
  zlb_strbuf_release(&s);
  return 0;
}

/*
 * Where the FlagGems processes keep bytecode: PYTHONPYCACHEPREFIX, so that
 * modules whose folders are not writable (an interpreter's site-packages)
 * are compiled once, not in every process (a child that compiles sympy's
 * 500 modules spends 2.7 s on it, on the H200; there it is the machine's
 * PYTHONDONTWRITEBYTECODE=1 that makes every process compile them, and
 * that setting is kept, for the children as for FlagGems' own runs, with
 * which they are compared). ZL_FG_PYCACHE:
 * 0 leaves it to Python (bytecode next to the sources, where writable), an
 * absolute folder is used as it is, anything else is pycache/ in zlbench's
 * cache folder (zlb_cache_dir), when that is absolute (every process,
 * whatever its working folder, must find the same one). The caller's own
 * PYTHONPYCACHEPREFIX or PYTHONDONTWRITEBYTECODE is left as it is. 0 when
 * there is none to set (out empty).
 */
static int fg_pycache(zlb_strbuf_t *out) {
  const char *v = getenv("ZL_FG_PYCACHE"), *nowrite = getenv("PYTHONDONTWRITEBYTECODE");
  zlb_error_t e = ZLB_ERROR_INIT;
  zlb_strbuf_reset(out);
  if ((v && !strcmp(v, "0")) || getenv("PYTHONPYCACHEPREFIX") || (nowrite && *nowrite))
    return 0;
  if (v && v[0] == '/')
    zlb_strbuf_addstr(out, v);
  else if (zlb_cache_dir(out) && out->buf[0] == '/')
    zlb_strbuf_addstr(out, "/pycache");
  else {
    zlb_strbuf_reset(out);
    return 0;
  }
  if (zlb_mkdirs(out->buf, &e)) {
    zlb_strbuf_reset(out);
    return 0;
  }
  return 1;
}

/* Every FlagGems process's environment, the fork servers' too (what
 * torch, triton and flag_gems read at import must be the children's). */
static void fg_env(const zlb__batch_t *b, zlb_strvec_t *env) {
  const zlb_batch_opts_t *o = b->o;
  const char *timer = run_arg(o, "--timer"), *vendor = gems_vendor(b->backend);
  zlb_strbuf_t s = ZLB_STRBUF_INIT;
  python_path(b, &s);
  zlb_strvec_push(env, s.buf);
  zlb_strvec_pushf(env, "ZL_BACKEND=%s", b->backend);
  if (timer)
    zlb_strvec_pushf(env, "ZL_TIMER=%s", timer);
  if (vendor)
    zlb_strvec_pushf(env, "GEMS_VENDOR=%s", vendor);
  /* Bytecode is written, once (fg_pycache): flag_gems imports in 2.6 s
   * with its bytecode, 4.6 s without, in every child. */
  if (fg_pycache(&s))
    zlb_strvec_pushf(env, "PYTHONPYCACHEPREFIX=%s", s.buf);
  zlb_strvec_push(env, "PYTHONUNBUFFERED=1");
  zlb_strbuf_release(&s);
}

/* One fork server per device slot (python -m zlbench.forkserver): torch,
 * triton, pytest and flag_gems imported once, each child forked from it
 * (python -m zlbench.forkrun). ZL_FG_FORKSERVER=0: plain children. */
static void fg_start(zlb__batch_t *b) {
  const char *off = getenv("ZL_FG_FORKSERVER"), *tmp = getenv("TMPDIR");
  if (off && !strcmp(off, "0"))
    return;
  /* Without an interpreter there is nothing to start; the operator scan
   * then says so. */
  if (!fg_python(b))
    return;
  if (!tmp || !*tmp || strlen(tmp) > 60)
    tmp = "/tmp";
  b->servers = zlb_xcalloc(b->devices.n, sizeof(zlb__server_t));
  for (size_t d = 0; d < b->devices.n; d++) {
    zlb__server_t *sv = &b->servers[d];
    zlb_strvec_t argv = ZLB_STRVEC_INIT, env = ZLB_STRVEC_INIT;
    zlb_strbuf_t log = ZLB_STRBUF_INIT, name = ZLB_STRBUF_INIT;
    zlb_error_t e = ZLB_ERROR_INIT;
    snprintf(sv->sock, sizeof(sv->sock), "%s/zlb-fg-%ld-%zu.sock", tmp, (long)getpid(), d);
    zlb_strbuf_addf(&name, "forkserver-%s.log", b->devices.v[d]);
    zlb_path_join(&log, b->o->out_dir, name.buf);
    zlb_strlcpy(sv->log, log.buf, sizeof(sv->log));
    zlb_strbuf_addstr(&log, ".part"); /* until the batch has children to run */
    zlb_strvec_push(&argv, b->python);
    zlb_strvec_push(&argv, "-m");
    zlb_strvec_push(&argv, "zlbench.forkserver");
    zlb_strvec_push(&argv, "--socket");
    zlb_strvec_push(&argv, sv->sock);
    zlb_strvec_push(&argv, "--parent");
    zlb_strvec_pushf(&argv, "%ld", (long)getpid());
    fg_env(b, &env);
    zlb__push_device_env(b, (int)d, &env);
    zlb_strvec_push(&env, "NO_COLOR=1");
    if (zlb_spawn(argv.v, &env, NULL, log.buf, 0, &sv->child, &e)) {
      char text[1024];
      snprintf(text, sizeof(text),
               "note: no fork server for device %s (%s): its children start on their own\n",
               b->devices.v[d], e.msg);
      if (b->o->line)
        b->o->line(b->o->cb_ctx, text);
    } else {
      sv->on = 1;
    }
    zlb_strvec_release(&argv);
    zlb_strvec_release(&env);
    zlb_strbuf_release(&log);
    zlb_strbuf_release(&name);
  }
}

/* First line of the child's output naming the failure: pytest's "E   "
 * lines, "ERROR collecting", "FAILED", or an "Error" line. */
static void fg_reason(const char *text, char *buf, size_t len) {
  zlb_strvec_t lines = ZLB_STRVEC_INIT;
  static const char *const keys[] = {"Fatal Python error", "E   ", "ERROR collecting",
                                     "ImportError", "error:", "Error", "FAILED", NULL};
  buf[0] = '\0';
  zlb_strvec_split(&lines, text, '\n');
  for (const char *const *k = keys; *k && !buf[0]; k++)
    for (size_t i = 0; i < lines.n && !buf[0]; i++)
      if (strstr(lines.v[i], *k)) {
        /* pytest's "____ ERROR collecting x.py ____" without its rules. */
        char *t = zlb_trim(lines.v[i]);
        size_t n = strspn(t, "_");
        if (n >= 3 && t[n] == ' ') /* a rule, not a name like __main__ */
          t = zlb_trim(t + n);
        n = strlen(t);
        if (n >= 4 && t[n - 1] == '_') {
          size_t e = n;
          while (e && t[e - 1] == '_')
            e--;
          if (n - e >= 3 && e && t[e - 1] == ' ')
            t[e - 1] = '\0';
          n = strlen(t);
        }
        /* Runs of blanks as one ("E           ValueError: ..."). */
        for (size_t r = 0, w = 0; r <= n; r++)
          if (!(t[r] == ' ' && w && t[w - 1] == ' '))
            t[w++] = t[r];
        zlb_strlcpy(buf, t, len);
      }
  zlb_strvec_release(&lines);
}

/* pytest's exit codes and FlagGems' output -> zlbench's. */
static void fg_classify(zlb__batch_t *b, zlb__job_t *j, const zlb_exit_t *ex,
                        zlb__verdict_t *v) {
  zlb_strbuf_t raw = ZLB_STRBUF_INIT, log = ZLB_STRBUF_INIT, ident = ZLB_STRBUF_INIT,
               p = ZLB_STRBUF_INIT, errtext = ZLB_STRBUF_INIT;
  zlb_json_t *id = NULL;
  zlb_error_t e = ZLB_ERROR_INIT;
  (void)b;
  v->code = ZLB__EXIT_OTHER; /* "failed": transient unless said otherwise */
  v->status[0] = '\0';
  v->line[0] = '\0';
  v->final = 0;
  v->whole = 0;
  /* run.log: the child's stdout without ANSI escapes. */
  read_capped(j->attempt_dir, "stdout.log", 2 * ZLB_CAPTURE_KEEP + 4096, &raw);
  zlb_strip_ansi(raw.buf, &log);
  zlb_path_join(&p, j->attempt_dir, "run.log");
  if (zlb_write_file_atomic(p.buf, log.buf, log.len, &e)) {
    v->code = ZLB_EXIT_OUTPUT;
    zlb_strlcpy(v->line, e.msg, sizeof(v->line));
    goto out;
  }
  /* run.log replaces the raw capture (a summary reads every log once). */
  zlb_strbuf_reset(&p);
  zlb_path_join(&p, j->attempt_dir, "stdout.log");
  unlink(p.buf);
  read_capped(j->attempt_dir, "run_identity.json", 1 << 20, &ident);
  if (ident.len)
    zlb_json_parse(ident.buf, ident.len, "run_identity.json", &id, NULL);
  fg_reason(log.buf, v->line, sizeof(v->line));
  if (ex->timed_out || ex->signaled) {
    v->code = ex->code;
    goto out;
  }
  /* The interpreter died (a fault handler, a sanitizer's report) but exited
   * rather than dying by the signal: a crash all the same. */
  read_capped(j->attempt_dir, "stderr.log", ZLB_CAPTURE_KEEP, &errtext);
  if (strstr(errtext.buf, "Fatal Python error") ||
      strstr(log.buf, "Fatal Python error")) {
    v->code = ZLB__EXIT_OTHER;
    zlb_strlcpy(v->status, "crashed", sizeof(v->status));
    if (!strstr(v->line, "Fatal Python error"))
      fg_reason(errtext.buf, v->line, sizeof(v->line));
    goto out;
  }
  switch (ex->code) {
  case 0:
    v->code = ZLB_EXIT_OK;
    if (!strstr(log.buf, "Performance Test (")) {
      /* Passed without a table: skipped (a skipif for this machine), or a
       * test that measures nothing. Not a measurement either way. */
      v->code = ZLB_EXIT_USAGE;
      v->final = v->whole = 1;
      zlb_strlcpy(v->status, strstr(log.buf, " skipped") ? "skipped" : "no_rows",
                  sizeof(v->status));
      fg_reason(log.buf, v->line, sizeof(v->line));
      if (!v->line[0]) {
        /* pytest -q's last line: "1 skipped in 0.01s". */
        const char *last = strstr(log.buf, " skipped");
        const char *b0 = last;
        while (b0 && b0 > log.buf && b0[-1] != '\n')
          b0--;
        if (b0)
          snprintf(v->line, sizeof(v->line), "%.*s", (int)strcspn(b0, "\n"), b0);
      }
    }
    break;
  case 1: /* tests failed */
    if (id && zlb_json_get_string(id, "fatal", NULL)) {
      v->code = ZLB_EXIT_FATAL;
      snprintf(v->line, sizeof(v->line), "fatal: %.200s", zlb_json_get_string(id, "fatal", ""));
    } else if (strstr(log.buf, "CUDA error: an illegal memory access") ||
               strstr(log.buf, "device-side assert triggered") ||
               strstr(log.buf, "CUDA error: unspecified launch failure")) {
      /* A device fault outside zlbench's timer (in FlagGems' or torch's
       * own calls): fatal, as the timer's own would be. */
      v->code = ZLB_EXIT_FATAL;
    } else if (strstr(log.buf, "can't be supported by this op")) {
      v->code = ZLB_EXIT_USAGE;
      v->final = 1;
      zlb_strlcpy(v->status, "dtype_unsupported", sizeof(v->status));
    } else if (strstr(log.buf, "Performance Test (")) {
      v->code = ZLB_EXIT_FAILED; /* some tables printed: FAILED rows */
    }
    break;
  case 2: /* interrupted: collection errors among others */
  case 4: /* usage error; also a conftest that cannot be imported */
    if (strstr(log.buf, "ERROR collecting") || strstr(log.buf, "ImportError") ||
        strstr(log.buf, "ModuleNotFoundError")) {
      v->code = ZLB_EXIT_USAGE;
      v->final = v->whole = 1;
      zlb_strlcpy(v->status, "collection_error", sizeof(v->status));
    } else if (ex->code == 4 && strstr(errtext.buf, "--dtypes: invalid choice")) {
      /* A dtype FlagGems' suite does not know at all. */
      v->code = ZLB_EXIT_USAGE;
      v->final = 1;
      zlb_strlcpy(v->status, "dtype_unsupported", sizeof(v->status));
      fg_reason(errtext.buf, v->line, sizeof(v->line));
    } else if (ex->code == 4) {
      v->code = ZLB_EXIT_USAGE;
      v->final = 1;
      if (!v->line[0])
        fg_reason(errtext.buf, v->line, sizeof(v->line));
    }
    break;
  case 5: /* no tests collected, or the plugin's poisoned exit */
    if (id && zlb_json_get_string(id, "poisoned", NULL)) {
      v->code = ZLB_EXIT_POISONED;
      snprintf(v->line, sizeof(v->line), "BENCHMARK_CAPTURE_POISONED: %.200s",
               zlb_json_get_string(id, "poisoned", ""));
    } else {
      v->code = ZLB_EXIT_USAGE;
      v->final = v->whole = 1;
      zlb_strlcpy(v->status, "no_tests", sizeof(v->status));
      zlb_strlcpy(v->line, "no test collected for this operator", sizeof(v->line));
    }
    break;
  default: /* 3: internal error, or anything else */
    break;
  }
out:
  zlb_json_free(id);
  zlb_strbuf_release(&raw);
  zlb_strbuf_release(&log);
  zlb_strbuf_release(&ident);
  zlb_strbuf_release(&p);
  zlb_strbuf_release(&errtext);
}

/* ---- the table ------------------------------------------------------------------------- */

static const zlb__provider_t providers[] = {
    {"zlbench", 1, NULL, corpus_discover, corpus_select, corpus_child, NULL, corpus_classify},
    {"flaggems", 0, fg_check, fg_discover, fg_select, fg_child, fg_start, fg_classify},
};

const zlb__provider_t *zlb__provider_find(const char *name) {
  for (size_t i = 0; i < sizeof(providers) / sizeof(providers[0]); i++)
    if (!strcmp(providers[i].name, name ? name : "zlbench"))
      return &providers[i];
  return NULL;
}
