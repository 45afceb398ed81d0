/* Loading operator libraries and the operator set they fill. */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zlbench/device.h"
#include "zlbench/ops.h"

struct load_ctx {
  zlb_op_set_t *set;
  const char *path;
  zlb_error_t *err;
  int failed;
};

static int add_op(zlb_op_registrar_t *r, const zlb_op_t *op) {
  struct load_ctx *lc = r->ctx;
  if (!op || op->abi_version != ZLB_OP_ABI_VERSION || !op->name || !op->family ||
      !op->backend || !op->case_init || !op->baseline.enqueue ||
      !op->candidate.enqueue || !op->dtypes) {
    lc->failed = 1;
    return zlb_error_set(lc->err, ZLB_EINVAL,
                         "operator library '%s': operator '%s' is incomplete "
                         "(needs abi_version %u, name, family, backend, dtypes, "
                         "case_init and both enqueue functions)",
                         lc->path, op && op->name ? op->name : "?",
                         ZLB_OP_ABI_VERSION);
  }
  if (zlb_ops_find(lc->set, op->name, op->backend)) {
    lc->failed = 1;
    return zlb_error_set(lc->err, ZLB_EEXIST,
                         "operator library '%s': operator '%s' for backend '%s' "
                         "is already registered",
                         lc->path, op->name, op->backend);
  }
  if (lc->set->n == lc->set->alloc) {
    lc->set->alloc = lc->set->alloc ? lc->set->alloc * 2 : 64;
    lc->set->v = zlb_xrealloc(lc->set->v, lc->set->alloc * sizeof(*lc->set->v));
  }
  lc->set->v[lc->set->n].op = op;
  lc->set->v[lc->set->n].library = zlb_xstrdup(lc->path);
  lc->set->n++;
  return 0;
}

static int add_backend(zlb_op_registrar_t *r, const zlb_backend_desc_t *desc) {
  struct load_ctx *lc = r->ctx;
  if (zlb_backend_register(desc, lc->err)) {
    lc->failed = 1;
    return zlb_error_prefix(lc->err, "operator library '%s'", lc->path);
  }
  return 0;
}

#if defined(__x86_64__)
#define OWN_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define OWN_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define OWN_MACHINE EM_PPC64
#elif defined(__riscv)
#define OWN_MACHINE EM_RISCV
#endif

/* 1 when `path` is an ELF shared object this process could load (class,
 * byte order, type and machine), else 0 with the reason in `why`. */
static int elf_ok(const char *path, char *why, size_t len) {
  ElfW(Ehdr) h;
  struct stat st;
  ssize_t n = -1;
  int fd;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    snprintf(why, len, "not a regular file");
    return 0;
  }
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    n = read(fd, &h, sizeof(h));
    close(fd);
  }
  if (n < 0) {
    snprintf(why, len, "cannot read it: %s", strerror(errno));
    return 0;
  }
  if ((size_t)n < EI_NIDENT || memcmp(h.e_ident, ELFMAG, SELFMAG)) {
    snprintf(why, len, "not an ELF shared library");
    return 0;
  }
  if ((size_t)n < sizeof(h) || h.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64
                                                                          : ELFCLASS32)) {
    snprintf(why, len, "an ELF file of the wrong class (%d-bit)",
             h.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32);
    return 0;
  }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (h.e_ident[EI_DATA] != ELFDATA2LSB) {
#else
  if (h.e_ident[EI_DATA] != ELFDATA2MSB) {
#endif
    snprintf(why, len, "an ELF file of the wrong byte order");
    return 0;
  }
  if (h.e_type != ET_DYN) {
    snprintf(why, len, "an ELF file but not a shared library (type %u)", (unsigned)h.e_type);
    return 0;
  }
#ifdef OWN_MACHINE
  if (h.e_machine != OWN_MACHINE) {
    snprintf(why, len, "a shared library for another machine (ELF machine %u)",
             (unsigned)h.e_machine);
    return 0;
  }
#endif
  return 1;
}

int zlb_ops_load_library(zlb_op_set_t *set, const char *path, zlb_error_t *err) {
  struct load_ctx lc = {set, path, err, 0};
  zlb_op_registrar_t reg = {ZLB_OP_ABI_VERSION, &lc, add_op, add_backend};
  zlb_ops_register_fn fn;
  void *h, *sym;
  int rc;

  if (zlb_strvec_find(&set->libraries, path) >= 0)
    return 0;
  if (!zlb_path_exists(path))
    return zlb_error_set(err, ZLB_ENOTFOUND, "operator library '%s' does not exist",
                         path);
  {
    /* dlopen reads a name without '/' as a library to search for, not as
     * the file in the current folder that was checked above. */
    zlb_strbuf_t p = ZLB_STRBUF_INIT;
    zlb_strbuf_addf(&p, "%s%s", strchr(path, '/') ? "" : "./", path);
    h = dlopen(p.buf, RTLD_NOW | RTLD_LOCAL);
    zlb_strbuf_release(&p);
  }
  if (!h) {
    const char *e = dlerror();
    char why[128];
    /* A file that is no shared library for this machine is the user's bad
     * input (exit 2); a good one whose runtime is missing here (libcuda,
     * ...) is an unavailable backend (exit 3). glibc's words for an
     * executable (ET_DYN too when position-independent) tell it apart. */
    int pie = e && strstr(e, "position-independent executable");
    if (pie)
      snprintf(why, sizeof(why), "an executable, not a shared library");
    if (pie || !elf_ok(path, why, sizeof(why)))
      return zlb_error_set(err, ZLB_EINVAL,
                           "cannot load operator library '%s': %s (%s); give the path of "
                           "a libzlb_ops_*.so built for this machine",
                           path, why, e ? e : "unknown dlopen error");
    return zlb_error_set(err, ZLB_EUNAVAIL, "cannot load operator library '%s': %s",
                         path, e ? e : "unknown dlopen error");
  }
  sym = dlsym(h, ZLB_OP_ENTRY_SYMBOL);
  if (!sym)
    return zlb_error_set(err, ZLB_EINVAL,
                         "'%s' is not an operator library: it does not export %s()",
                         path, ZLB_OP_ENTRY_SYMBOL);
  memcpy(&fn, &sym, sizeof(fn));
  zlb_strvec_push(&set->libraries, path);
  rc = fn(&reg);
  if (lc.failed)
    return err && err->code ? err->code : ZLB_EINVAL;
  /* A library that refuses to register is a bad --lib (exit 2), not a
   * failed operator (exit 1). */
  if (rc)
    return zlb_error_set(err, ZLB_EINVAL,
                         "operator library '%s': %s() returned %d: the library refused to "
                         "register its operators (its own message, if any, is above)",
                         path, ZLB_OP_ENTRY_SYMBOL, rc);
  /* The handle stays open: the operators live in it. */
  return 0;
}

int zlb_ops_load_env(zlb_op_set_t *set, zlb_error_t *err) {
  const char *libs = getenv("ZL_OP_LIBS");
  zlb_strvec_t v = ZLB_STRVEC_INIT;
  int rc = 0;
  if (!libs || !*libs)
    return 0;
  zlb_strvec_split(&v, libs, ':');
  for (size_t i = 0; i < v.n && !rc; i++)
    if ((rc = zlb_ops_load_library(set, v.v[i], err)))
      zlb_error_prefix(err, "ZL_OP_LIBS");
  zlb_strvec_release(&v);
  return rc;
}

int zlb_ops_libdir(zlb_strbuf_t *out, zlb_error_t *err) {
  const char *env = getenv("ZL_LIB_DIR");
  int rc;
  if (env && *env) {
    zlb_strbuf_addstr(out, env);
    return 0;
  }
  if ((rc = zlb_exe_dir(out, err)))
    return rc;
  zlb_strbuf_addstr(out, "/../lib/zlbench");
  return 0;
}

int zlb_assets_dir(zlb_strbuf_t *out, zlb_error_t *err) {
  const char *env = getenv("ZL_ASSETS_DIR");
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int rc;
  if (env && *env) {
    zlb_strbuf_addstr(out, env);
    return 0;
  }
  if ((rc = zlb_exe_dir(&p, err)))
    goto out;
  zlb_strbuf_addstr(&p, "/../share/zlbench/assets");
  if (zlb_is_dir(p.buf)) {
    zlb_strbuf_addstr(out, p.buf);
    goto out;
  }
#ifdef ZLB_SOURCE_ASSETS_DIR
  if (zlb_is_dir(ZLB_SOURCE_ASSETS_DIR)) {
    zlb_strbuf_addstr(out, ZLB_SOURCE_ASSETS_DIR);
    goto out;
  }
#endif
  rc = zlb_error_set(err, ZLB_ENOTFOUND,
                     "cannot find the assets folder (set ZL_ASSETS_DIR)");
out:
  zlb_strbuf_release(&p);
  return rc;
}

int zlb_ops_load_builtin(zlb_op_set_t *set, const char *backend, zlb_error_t *err) {
  zlb_strbuf_t p = ZLB_STRBUF_INIT;
  int rc;
  if ((rc = zlb_ops_libdir(&p, err)))
    goto out;
  zlb_strbuf_addf(&p, "/libzlb_ops_%s.so", backend);
  if (!zlb_path_exists(p.buf)) {
    rc = zlb_error_set(err, ZLB_ENOTFOUND,
                       "this build has no operator library for backend '%s' "
                       "(looked for '%s')",
                       backend, p.buf);
    goto out;
  }
  rc = zlb_ops_load_library(set, p.buf, err);
out:
  zlb_strbuf_release(&p);
  return rc;
}

const zlb_op_entry_t *zlb_ops_find(const zlb_op_set_t *set, const char *name,
                                   const char *backend) {
  for (size_t i = 0; i < set->n; i++)
    if (!strcmp(set->v[i].op->name, name) &&
        (!backend || !strcmp(set->v[i].op->backend, backend)))
      return &set->v[i];
  return NULL;
}

/* Edit distance, for "did you mean". */
static size_t distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), *row, r;
  if (la > 64 || lb > 64)
    return 99;
  row = zlb_xcalloc(lb + 1, sizeof(*row));
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t cur = row[j], best = prev + (a[i - 1] != b[j - 1]);
      if (row[j] + 1 < best)
        best = row[j] + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      prev = cur;
    }
  }
  r = row[lb];
  free(row);
  return r;
}

/* Where no operator of `backend` is loaded and its built-in library is
 * missing, why `name` is unknown: ZL_LIB_DIR names a folder without it (a typo, or one with no
 * operator library at all) or this build lacks it. 0 when it is there. */
static int missing_builtin(const char *name, const char *backend, zlb_error_t *err) {
  const char *env = getenv("ZL_LIB_DIR");
  zlb_strbuf_t dir = ZLB_STRBUF_INIT, lib = ZLB_STRBUF_INIT;
  zlb_error_t e = ZLB_ERROR_INIT;
  int rc = 0, any = 0;
  if (zlb_ops_libdir(&dir, &e))
    goto out;
  zlb_strbuf_addf(&lib, "%s/libzlb_ops_%s.so", dir.buf, backend);
  if (zlb_path_exists(lib.buf))
    goto out;
  if (env && *env) {
    DIR *d = opendir(env);
    struct dirent *de;
    while (d && !any && (de = readdir(d)))
      any = zlb_starts_with(de->d_name, "libzlb_ops_") && strstr(de->d_name, ".so");
    if (d)
      closedir(d);
    if (any)
      rc = zlb_error_set(err, ZLB_ENOTFOUND,
                         "unknown operator '%s': no operator library for backend '%s' in "
                         "ZL_LIB_DIR=%s (expected libzlb_ops_%s.so there); point ZL_LIB_DIR "
                         "at the folder holding it, or unset it",
                         name, backend, env, backend);
    else
      rc = zlb_error_set(err, ZLB_ENOTFOUND,
                         "unknown operator '%s': no operator library found in ZL_LIB_DIR=%s "
                         "(expected libzlb_ops_%s.so, one libzlb_ops_*.so per backend); point "
                         "ZL_LIB_DIR at the folder holding them, or unset it",
                         name, env, backend);
    goto out;
  }
  rc = zlb_error_set(err, ZLB_ENOTFOUND,
                     "unknown operator '%s': this build has no operator library for backend "
                     "'%s' (looked for '%s'; set ZL_LIB_DIR, or load one with --lib)",
                     name, backend, lib.buf);
out:
  zlb_strbuf_release(&dir);
  zlb_strbuf_release(&lib);
  return rc;
}

int zlb_ops_serves(const zlb_op_set_t *set, const char *backend) {
  for (size_t i = 0; i < set->n; i++)
    if (!strcmp(set->v[i].op->backend, backend))
      return 1;
  return 0;
}

int zlb_ops_unknown(const zlb_op_set_t *set, const char *name, const char *backend,
                    zlb_error_t *err) {
  zlb_strbuf_t near = ZLB_STRBUF_INIT, other = ZLB_STRBUF_INIT;
  int rc;
  /* No library serves the backend at all: say which one is missing. */
  if (!zlb_ops_serves(set, backend) && (rc = missing_builtin(name, backend, err)))
    return rc;
  for (size_t i = 0; i < set->n; i++) {
    const zlb_op_t *op = set->v[i].op;
    if (strcmp(op->backend, backend)) {
      if (!strcmp(op->name, name))
        zlb_strbuf_addf(&other, "%s%s", other.len ? ", " : "", op->backend);
      continue;
    }
    if (distance(op->name, name) <= 2 || strstr(op->name, name))
      zlb_strbuf_addf(&near, "%s%s", near.len ? ", " : "", op->name);
  }
  zlb_error_set(err, ZLB_ENOTFOUND,
                "unknown operator '%s' for backend '%s'%s%s%s%s%s; "
                "'zlbench list --backend %s' shows them all",
                name, backend, near.len ? "; did you mean: " : "", near.buf,
                other.len ? "; it exists for backend(s): " : "", other.buf, "",
                backend);
  zlb_strbuf_release(&near);
  zlb_strbuf_release(&other);
  return ZLB_ENOTFOUND;
}

void zlb_op_set_release(zlb_op_set_t *set) {
  for (size_t i = 0; i < set->n; i++)
    free(set->v[i].library);
  free(set->v);
  set->v = NULL;
  set->n = set->alloc = 0;
  zlb_strvec_release(&set->libraries);
}
