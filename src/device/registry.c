/* The backend registry: built-in entries plus those operator libraries add,
 * name/alias resolution, auto probing and the classification lookup. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_int.h"
#include "zlbench/base.h"

#define MAX_EXTRA_BACKENDS 16

static const zlb_backend_desc_t *const builtin[] = {
    &zlb__backend_cuda, &zlb__backend_musa, &zlb__backend_rocm,
    &zlb__backend_ascend, &zlb__backend_host};
#define NBUILTIN (sizeof(builtin) / sizeof(builtin[0]))

static const zlb_backend_desc_t *extra[MAX_EXTRA_BACKENDS];
static size_t nextra;

const zlb_backend_desc_t *const *zlb_backend_builtin(size_t *n) {
  *n = NBUILTIN;
  return builtin;
}

size_t zlb_backend_count(void) { return NBUILTIN + nextra; }

const zlb_backend_desc_t *zlb_backend_at(size_t i) {
  if (i < NBUILTIN)
    return builtin[i];
  i -= NBUILTIN;
  return i < nextra ? extra[i] : NULL;
}

static int name_matches(const zlb_backend_desc_t *d, const char *name) {
  if (!strcmp(d->name, name))
    return 1;
  for (const char *const *a = d->aliases; a && *a; a++)
    if (!strcmp(*a, name))
      return 1;
  return 0;
}

int zlb_backend_register(const zlb_backend_desc_t *desc, zlb_error_t *err) {
  for (size_t i = 0; i < zlb_backend_count(); i++) {
    const zlb_backend_desc_t *d = zlb_backend_at(i);
    if (d == desc)
      return 0;
    if (name_matches(d, desc->name))
      return zlb_error_set(err, ZLB_EEXIST, "backend '%s' is already registered",
                           desc->name);
  }
  if (nextra == MAX_EXTRA_BACKENDS)
    return zlb_error_set(err, ZLB_ENOMEM, "too many backends (limit %d)",
                         MAX_EXTRA_BACKENDS);
  extra[nextra++] = desc;
  return 0;
}

static void list_names(zlb_strbuf_t *sb) {
  for (size_t i = 0; i < zlb_backend_count(); i++) {
    const zlb_backend_desc_t *d = zlb_backend_at(i);
    zlb_strbuf_addf(sb, "%s%s", i ? ", " : "", d->name);
    if (d->aliases && d->aliases[0]) {
      zlb_strbuf_addstr(sb, " (");
      for (const char *const *a = d->aliases; *a; a++)
        zlb_strbuf_addf(sb, "%s%s", a == d->aliases ? "" : ", ", *a);
      zlb_strbuf_addch(sb, ')');
    }
  }
}

int zlb_backend_lookup(const char *name, const zlb_backend_desc_t **out,
                       zlb_error_t *err) {
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  char lower[64];
  size_t i;
  for (i = 0; name[i] && i < sizeof(lower) - 1; i++)
    lower[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
  lower[i] = '\0';
  for (i = 0; i < zlb_backend_count(); i++)
    if (name_matches(zlb_backend_at(i), lower)) {
      *out = zlb_backend_at(i);
      return 0;
    }
  list_names(&sb);
  zlb_error_set(err, ZLB_ENOTFOUND,
                "unknown backend '%s'; valid backends: auto, %s", name, sb.buf);
  zlb_strbuf_release(&sb);
  return ZLB_ENOTFOUND;
}

void *zlb__dlopen_first(const char *const *sonames, const char *backend,
                        const char **opened, zlb_error_t *err) {
  zlb_strbuf_t why = ZLB_STRBUF_INIT;
  void *h = NULL;
  const char *only[2] = {NULL, NULL};
  char key[64];
  size_t i;
  /* ZL_<BACKEND>_LIB names the one library to load instead of the list
   * (a runtime outside the loader's path, or a test's fake runtime). */
  snprintf(key, sizeof(key), "ZL_%s_LIB", backend);
  for (i = 3; key[i]; i++)
    if (key[i] >= 'a' && key[i] <= 'z')
      key[i] = (char)(key[i] - 32);
    else if (!(key[i] >= 'A' && key[i] <= 'Z') && !(key[i] >= '0' && key[i] <= '9'))
      key[i] = '_';
  if ((only[0] = getenv(key)) && *only[0])
    sonames = only;
  for (const char *const *s = sonames; s && *s; s++) {
    h = dlopen(*s, RTLD_NOW | RTLD_GLOBAL);
    if (h) {
      if (opened)
        *opened = *s;
      break;
    }
    const char *e = dlerror();
    zlb_strbuf_addf(&why, "%s%s", why.len ? "; " : "", e ? e : *s);
  }
  if (!h)
    zlb_error_set(err, ZLB_EUNAVAIL,
                  "backend '%s' is unavailable: cannot load its runtime (%s%s%s)",
                  backend, why.buf, sonames == only ? "; from " : "",
                  sonames == only ? key : "");
  zlb_strbuf_release(&why);
  return h;
}

int zlb_backend_open(const zlb_backend_desc_t *desc, zlb_backend_t **out,
                     zlb_error_t *err) {
  zlb_backend_t *b;
  int rc;
  *out = NULL;
  if (!desc->vtbl) {
    /* Registered but not implemented: still say precisely what is missing. */
    const char *lib = NULL;
    void *h = zlb__dlopen_first(desc->sonames, desc->name, &lib, err);
    if (!h)
      return ZLB_EUNAVAIL;
    return zlb_error_set(err, ZLB_EUNAVAIL,
                         "backend '%s': runtime '%s' was found, but this build "
                         "of zlbench has no %s implementation yet",
                         desc->name, lib, desc->name);
  }
  b = zlb_xcalloc(1, sizeof(*b));
  b->desc = desc;
  b->v = desc->vtbl;
  b->device = -1;
  if ((rc = b->v->open(b, err))) {
    free(b);
    return rc;
  }
  *out = b;
  return 0;
}

void zlb_backend_close(zlb_backend_t *b) {
  if (!b)
    return;
  if (b->v && b->v->close)
    b->v->close(b);
  free(b);
}

int zlb_backend_open_auto(zlb_backend_t **out, char *tried, size_t triedlen,
                          zlb_error_t *err) {
  zlb_strbuf_t why = ZLB_STRBUF_INIT;
  const zlb_backend_desc_t *host = NULL;
  int rc = ZLB_EUNAVAIL;
  for (size_t i = 0; i < zlb_backend_count(); i++) {
    const zlb_backend_desc_t *d = zlb_backend_at(i);
    zlb_error_t e = ZLB_ERROR_INIT;
    zlb_backend_t *b = NULL;
    int n = 0;
    if (!strcmp(d->name, "host"))
      host = d;
    if (!d->probe_in_auto)
      continue;
    if (zlb_backend_open(d, &b, &e)) {
      zlb_strbuf_addf(&why, "%s: %s\n", d->name, e.msg);
      continue;
    }
    if (b->v->device_count(b, &n, &e) || n < 1) {
      zlb_strbuf_addf(&why, "%s: %s\n", d->name,
                      e.code ? e.msg : "runtime loaded but no device visible");
      zlb_backend_close(b);
      continue;
    }
    *out = b;
    rc = 0;
    goto done;
  }
  if (!host) {
    zlb_error_set(err, ZLB_EUNAVAIL, "no backend is available");
    goto done;
  }
  rc = zlb_backend_open(host, out, err);
done:
  if (tried)
    zlb_strlcpy(tried, why.buf, triedlen);
  zlb_strbuf_release(&why);
  return rc;
}

int zlb_backend_open_name(const char *name, zlb_backend_t **out, zlb_error_t *err) {
  const zlb_backend_desc_t *d;
  int rc;
  if (!name || !*name || !strcmp(name, "auto"))
    return zlb_backend_open_auto(out, NULL, 0, err);
  if ((rc = zlb_backend_lookup(name, &d, err)))
    return rc;
  return zlb_backend_open(d, out, err);
}

int zlb_backend_select_device(zlb_backend_t *b, int index, zlb_error_t *err) {
  int n = 0, rc;
  if ((rc = b->v->device_count(b, &n, err)))
    return rc;
  if (index < 0 || index >= n)
    return zlb_error_set(err, ZLB_EUNAVAIL,
                         "device %d is not visible on backend '%s' (%d device%s visible%s%s)",
                         index, b->desc->name, n, n == 1 ? "" : "s",
                         b->desc->visibility_env ? "; check " : "",
                         b->desc->visibility_env ? b->desc->visibility_env : "");
  if ((rc = b->v->device_info(b, index, &b->info, err)) ||
      (rc = b->v->device_select(b, index, err)))
    return rc;
  b->device = index;
  return 0;
}

zlb_verdict_t zlb_backend_classify(const zlb_backend_desc_t *desc, int vendor_code) {
  for (size_t i = 0; i < desc->nclassify; i++)
    if (desc->classify[i].code == vendor_code)
      return desc->classify[i].verdict;
  return ZLB_VERDICT_NONE;
}

const char *zlb_backend_error_name(zlb_backend_t *b, int vendor_code) {
  static __thread char buf[32];
  const char *n = NULL;
  if (b->v && b->v->error_name)
    n = b->v->error_name(b, vendor_code);
  if (n && *n)
    return n;
  for (size_t i = 0; i < b->desc->nclassify; i++)
    if (b->desc->classify[i].code == vendor_code)
      return b->desc->classify[i].name;
  snprintf(buf, sizeof(buf), "ERROR_%d", vendor_code);
  return buf;
}

const char *zlb_verdict_name(zlb_verdict_t v) {
  switch (v) {
  case ZLB_VERDICT_NONE: return "none";
  case ZLB_VERDICT_REFUSED: return "refused";
  case ZLB_VERDICT_FATAL: return "fatal";
  case ZLB_VERDICT_POISONED: return "poisoned";
  }
  return "unknown";
}

unsigned zlb_backend_caps(zlb_backend_t *b, zlb_error_t *trace_why) {
  unsigned caps = b->desc->caps;
  if (!(caps & ZLB_CAP_TRACE))
    return caps;
  if (!b->v->trace_begin) {
    zlb_error_set(trace_why, ZLB_EUNSUPPORTED, "backend '%s' has no kernel activity tracer",
                  b->desc->name);
    return caps & ~ZLB_CAP_TRACE;
  }
  if (b->v->trace_available && b->v->trace_available(b, trace_why))
    return caps & ~ZLB_CAP_TRACE;
  return caps;
}

void zlb_caps_format(unsigned caps, char *buf, size_t len) {
  static const struct {
    unsigned bit;
    const char *name;
  } names[] = {{ZLB_CAP_GRAPH, "graph"},       {ZLB_CAP_EVENTS, "events"},
               {ZLB_CAP_RNG_STATE, "rng_state"}, {ZLB_CAP_ASYNC, "async"},
               {ZLB_CAP_L2_FLUSH, "l2_flush"}, {ZLB_CAP_TRACE, "trace"},
               {ZLB_CAP_HOST_MEMORY, "host_memory"}, {ZLB_CAP_HOLD, "hold"}};
  zlb_strbuf_t sb = ZLB_STRBUF_INIT;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (caps & names[i].bit)
      zlb_strbuf_addf(&sb, "%s%s", sb.len ? "," : "", names[i].name);
  zlb_strlcpy(buf, sb.len ? sb.buf : "-", len);
  zlb_strbuf_release(&sb);
}
