/* Discovery for the batch: helper children report the backend, its device
 * count and the registered operators (the parent never initialises a GPU
 * runtime); then the selection from --ops or inventory less dismissals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_int.h"
#include "zlbench/json.h"
#include "zlbench/ops.h"

/* ---- helper children ---------------------------------------------------------- */

static void helper_env(const zlb__batch_t *b, zlb_strvec_t *env) {
  (void)b;
  zlb_strvec_push(env, "NO_COLOR=1");
}

void zlb__push_libs(const zlb_batch_opts_t *o, zlb_strvec_t *argv) {
  for (size_t i = 0; i < o->lib_args.n; i++) {
    zlb_strvec_push(argv, "--lib");
    zlb_strvec_push(argv, o->lib_args.v[i]);
  }
}

static int run_helper(zlb__batch_t *b, zlb_strvec_t *argv, zlb_strbuf_t *out, zlb_error_t *err) {
  zlb_strvec_t env = ZLB_STRVEC_INIT;
  zlb_strbuf_t errout = ZLB_STRBUF_INIT;
  zlb_exit_t ex;
  char what[64];
  int rc;
  helper_env(b, &env);
  rc = zlb_spawn_capture(argv->v, &env, 120.0, 1 << 20, out, &errout, &ex, err);
  zlb_strvec_release(&env);
  if (!rc && !(ex.code == ZLB_EXIT_OK && !ex.signaled && !ex.timed_out)) {
    /* The helper's own message says what is wrong (unknown backend, ...). */
    zlb_exit_describe(&ex, what, sizeof(what));
    zlb_strbuf_setlen(&errout, errout.len && errout.buf[errout.len - 1] == '\n' ? errout.len - 1
                                                                              : errout.len);
    rc = zlb_error_set(err, ex.code == ZLB_EXIT_USAGE ? ZLB_EINVAL : ZLB_EUNAVAIL, "%s",
                       errout.len ? (zlb_starts_with(errout.buf, "zlbench: error: ")
                                         ? errout.buf + strlen("zlbench: error: ")
                                         : errout.buf)
                                  : what);
  }
  zlb_strbuf_release(&errout);
  return rc;
}

/* An environment variable name: [A-Za-z_][A-Za-z0-9_]*, shorter than `cap`. */
static int env_name_ok(const char *s, size_t cap) {
  size_t n = strlen(s);
  if (!n || n >= cap || (s[0] >= '0' && s[0] <= '9'))
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      return 0;
  return 1;
}

/* `zlbench devices --backend NAME --json` for b->backend: the parsed
 * document in *doc (the caller frees it) and its one backend's object in
 * *backend; an error when it describes anything else. */
static int describe_backend(zlb__batch_t *b, zlb_json_t **doc, const zlb_json_t **backend,
                            zlb_error_t *err) {
  zlb_strvec_t argv = ZLB_STRVEC_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  const zlb_json_t *d;
  int rc;
  *doc = NULL;
  zlb_strvec_push(&argv, b->o->exe);
  zlb_strvec_push(&argv, "devices");
  zlb_strvec_push(&argv, "--backend");
  zlb_strvec_push(&argv, b->backend);
  zlb_strvec_push(&argv, "--json");
  zlb__push_libs(b->o, &argv);
  if ((rc = run_helper(b, &argv, &out, err)) ||
      (rc = zlb_json_parse(out.buf, out.len, "zlbench devices --json", doc, err)))
    goto out;
  d = (*doc)->kind == ZLB_JSON_ARRAY && (*doc)->n == 1 ? (*doc)->items[0] : NULL;
  if (!d || d->kind != ZLB_JSON_OBJECT) {
    rc = zlb_error_set(err, ZLB_EUNAVAIL,
                       "'zlbench devices --backend %s --json' did not describe one backend",
                       b->backend);
    goto out;
  }
  *backend = d;
out:
  zlb_strvec_release(&argv);
  zlb_strbuf_release(&out);
  return rc;
}

/* The visibility keys of b->backend, from `zlbench devices --backend NAME
 * --json` (visibility_env, also_env). What the child says is checked: the
 * names become environment assignments of every child. */
static int discover_visibility(zlb__batch_t *b, zlb_error_t *err) {
  zlb_json_t *j = NULL;
  const zlb_json_t *d, *v, *also;
  int rc;
  if ((rc = describe_backend(b, &j, &d, err)))
    goto out;
  v = zlb_json_get(d, "visibility_env");
  if (v && v->kind == ZLB_JSON_STRING) {
    if (!env_name_ok(v->string, sizeof(b->vis_env))) {
      rc = zlb_error_set(err, ZLB_EINVAL,
                         "backend '%s' declares an invalid visibility variable '%.64s'; "
                         "fix visibility_env in the library's backend description",
                         b->backend, v->string);
      goto out;
    }
    zlb_strlcpy(b->vis_env, v->string, sizeof(b->vis_env));
  }
  also = zlb_json_get(d, "also_env");
  for (size_t i = 0; also && also->kind == ZLB_JSON_ARRAY && i < also->n; i++) {
    const zlb_json_t *k = also->items[i];
    if (i >= 8 || k->kind != ZLB_JSON_STRING || !env_name_ok(k->string, sizeof(b->vis_env))) {
      rc = zlb_error_set(err, ZLB_EINVAL,
                         "backend '%s' declares an invalid also_env key (at most 8 "
                         "variable names); fix also_env in the library's backend description",
                         b->backend);
      goto out;
    }
    zlb_strvec_push(&b->vis_also, k->string);
  }
out:
  zlb_json_free(j);
  return rc;
}

/* Backend name and device count, from `zlbench devices --count` (a child:
 * the parent must not initialise a GPU runtime). */
int zlb__discover_devices(zlb__batch_t *b, int *count, zlb_error_t *err) {
  zlb_strvec_t argv = ZLB_STRVEC_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  char name[32];
  int rc;
  zlb_strvec_push(&argv, b->o->exe);
  zlb_strvec_push(&argv, "devices");
  zlb_strvec_push(&argv, "--backend");
  zlb_strvec_push(&argv, b->o->backend && *b->o->backend ? b->o->backend : "auto");
  zlb_strvec_push(&argv, "--count");
  zlb__push_libs(b->o, &argv);
  rc = run_helper(b, &argv, &out, err);
  if (!rc && sscanf(out.buf, "%31s %d", name, count) != 2)
    rc = zlb_error_set(err, ZLB_EUNAVAIL, "cannot read the device count from '%s'", out.buf);
  if (!rc) {
    const zlb_backend_desc_t *d = NULL;
    zlb_error_t ignore = ZLB_ERROR_INIT;
    zlb_strlcpy(b->backend, name, sizeof(b->backend));
    /* A built-in backend is in this process's registry with its keys; one
     * a library adds is not, and its helper child reports them. */
    if (!zlb_backend_lookup(name, &d, &ignore)) {
      if (d->visibility_env)
        zlb_strlcpy(b->vis_env, d->visibility_env, sizeof(b->vis_env));
      for (const char *const *k = d->also_env; k && *k; k++)
        zlb_strvec_push(&b->vis_also, *k);
    } else {
      rc = discover_visibility(b, err);
    }
  }
  zlb_strvec_release(&argv);
  zlb_strbuf_release(&out);
  return rc;
}

int zlb__check_flush(zlb__batch_t *b, zlb_error_t *err) {
  zlb_json_t *j = NULL;
  const zlb_json_t *d, *devs;
  size_t want = b->o->flush_bytes;
  int rc;
  if (!want)
    return 0;
  if ((rc = describe_backend(b, &j, &d, err)))
    goto out;
  devs = zlb_json_get(d, "devices");
  for (size_t i = 0; devs && devs->kind == ZLB_JSON_ARRAY && i < devs->n; i++) {
    const zlb_json_t *dev = devs->items[i];
    double l2 = dev->kind == ZLB_JSON_OBJECT ? zlb_json_get_number(dev, "l2_bytes", 0) : 0;
    /* What the helper says is checked: a size, not a NaN or a petabyte. */
    if (!(l2 > 0 && l2 <= 1e12))
      continue;
    if ((double)want < l2) {
      rc = zlb_error_set(err, ZLB_EINVAL,
                         "--flush-mib %zu is smaller than the L2 of device %zu of backend '%s' "
                         "(%.0f bytes): such a flush does not evict it; give at least %.0f",
                         want >> 20, i, b->backend, l2, ceil(l2 / (1 << 20)));
      goto out;
    }
  }
out:
  zlb_json_free(j);
  return rc;
}

int zlb__discover_ops(zlb__batch_t *b, zlb__registered_t *reg, zlb_error_t *err) {
  zlb_strvec_t argv = ZLB_STRVEC_INIT, lines = ZLB_STRVEC_INIT;
  zlb_strbuf_t out = ZLB_STRBUF_INIT;
  int rc;
  zlb_strvec_push(&argv, b->o->exe);
  zlb_strvec_push(&argv, "inventory");
  zlb_strvec_push(&argv, "--registered");
  zlb_strvec_push(&argv, "--backend");
  zlb_strvec_push(&argv, b->backend);
  zlb__push_libs(b->o, &argv);
  if ((rc = run_helper(b, &argv, &out, err)))
    goto out;
  zlb_strvec_split(&lines, out.buf, '\n');
  reg->dtypes = zlb_xcalloc(lines.n + 1, sizeof(uint32_t));
  for (size_t i = 0; i < lines.n; i++) {
    char name[128], family[64], dts[160];
    uint32_t mask = 0;
    if (sscanf(lines.v[i], "%127s %63s %159s", name, family, dts) != 3)
      continue;
    zlb_dtype_list_parse(dts, &mask, NULL);
    reg->dtypes[reg->names.n] = mask;
    zlb_strvec_push(&reg->names, name);
  }
out:
  zlb_strvec_release(&argv);
  zlb_strvec_release(&lines);
  zlb_strbuf_release(&out);
  return rc;
}

/* ---- selection ------------------------------------------------------------------ */

static int asset_path(const char *given, const char *name, zlb_strbuf_t *out,
                      zlb_error_t *err) {
  if (given) {
    zlb_strbuf_addstr(out, given);
    return 0;
  }
  if (zlb_assets_dir(out, err))
    return err->code;
  zlb_strbuf_addf(out, "/%s", name);
  return 0;
}

int zlb__select_ops(zlb__batch_t *b, const zlb__registered_t *reg, zlb_strvec_t *sel,
                      zlb_error_t *err) {
  const zlb_batch_opts_t *o = b->o;
  zlb_strvec_t dismissed = ZLB_STRVEC_INIT, reasons = ZLB_STRVEC_INIT, listed = ZLB_STRVEC_INIT;
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int rc = 0;

  if (!reg->names.n && !strcmp(b->prov->name, "zlbench")) {
    /* No operator at all: the library is missing, not a name. */
    const char *env = getenv("ZL_LIB_DIR");
    if (env && *env)
      rc = zlb_error_set(err, ZLB_ENOTFOUND,
                         "backend '%s' has no operator registered, since ZL_LIB_DIR=%s holds "
                         "no libzlb_ops_%s.so; point ZL_LIB_DIR at the folder holding it, or "
                         "unset it",
                         b->backend, env, b->backend);
    else
      rc = zlb_error_set(err, ZLB_ENOTFOUND,
                         "backend '%s' has no operator registered (this build has no "
                         "operator library for it; load one with --lib)",
                         b->backend);
    goto out;
  }
  if (o->ops.n) {
    for (size_t i = 0; i < o->ops.n; i++) {
      if (zlb_strvec_find(&reg->names, o->ops.v[i]) < 0) {
        zlb_strbuf_t known = ZLB_STRBUF_INIT;
        zlb_strvec_join(&reg->names, ", ", &known);
        rc = zlb_error_set(err, ZLB_ENOTFOUND,
                           "unknown operator '%s' for backend '%s'; registered: %s",
                           o->ops.v[i], b->backend, known.len ? known.buf : "none");
        zlb_strbuf_release(&known);
        goto out;
      }
      if (zlb_strvec_find(sel, o->ops.v[i]) < 0)
        zlb_strvec_push(sel, o->ops.v[i]);
    }
    goto out;
  }
  if ((rc = asset_path(o->inventory_path, "inventory.yaml", &p, err)) ||
      (rc = zlb_inventory_load(p.buf, b->backend, &listed, err)))
    goto out;
  zlb_strbuf_reset(&p);
  if ((rc = asset_path(o->dismiss_path, "dismiss.yaml", &p, err)))
    goto out;
  if (zlb_path_exists(p.buf) || o->dismiss_path)
    if ((rc = zlb_dismiss_load(p.buf, b->backend, &dismissed, &reasons, err)))
      goto out;
  for (size_t i = 0; i < listed.n; i++) {
    if (zlb_strvec_find(&dismissed, listed.v[i]) >= 0)
      continue;
    if (zlb_strvec_find(&reg->names, listed.v[i]) < 0) {
      rc = zlb_error_set(err, ZLB_ENOTFOUND,
                         "the inventory lists operator '%s' for backend '%s', but no loaded "
                         "library registers it ('zlbench inventory --check' shows the "
                         "differences)",
                         listed.v[i], b->backend);
      goto out;
    }
    zlb_strvec_push(sel, listed.v[i]);
  }
out:
  zlb_strvec_release(&dismissed);
  zlb_strvec_release(&reasons);
  zlb_strvec_release(&listed);
  zlb_strbuf_release(&p);
  return rc;
}

