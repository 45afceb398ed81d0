/* The host backend: operators run on the CPU at enqueue time, "events" are
 * monotonic-clock stamps taken when recorded, and there are no graphs. It
 * lets the whole tool run on a machine without an accelerator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "device_int.h"
#include "zlbench/base.h"

struct host_event {
  uint64_t ns;
  int recorded;
};

static int host_open(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  (void)err;
  return 0;
}

static void host_close(zlb_backend_t *b) { (void)b; }

static int host_device_count(zlb_backend_t *b, int *n, zlb_error_t *err) {
  (void)b;
  (void)err;
  *n = 1;
  return 0;
}

static void cpu_model(char *buf, size_t len) {
  char line[512];
  FILE *f = fopen("/proc/cpuinfo", "r");
  struct utsname u;
  buf[0] = '\0';
  if (f) {
    while (fgets(line, sizeof(line), f)) {
      if (zlb_starts_with(line, "model name")) {
        char *c = strchr(line, ':');
        if (c) {
          zlb_strlcpy(buf, zlb_trim(c + 1), len);
          break;
        }
      }
    }
    fclose(f);
  }
  if (!buf[0] && uname(&u) == 0)
    snprintf(buf, len, "%s host", u.machine);
}

static int host_device_info(zlb_backend_t *b, int index, zlb_device_info_t *info,
                            zlb_error_t *err) {
  struct utsname u;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  (void)b;
  if (index != 0)
    return zlb_error_set(err, ZLB_EUNAVAIL, "the host backend has one device (0)");
  memset(info, 0, sizeof(*info));
  info->index = 0;
  cpu_model(info->name, sizeof(info->name));
  if (uname(&u) == 0)
    zlb_strlcpy(info->driver_version, u.release, sizeof(info->driver_version));
  zlb_strlcpy(info->runtime_version, "libc", sizeof(info->runtime_version));
  info->sm_count = cpus > 0 ? (int)cpus : 1;
#ifdef _SC_LEVEL2_CACHE_SIZE
  {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    info->l2_bytes = l2 > 0 ? (size_t)l2 : 0;
  }
#endif
#ifdef _SC_LEVEL3_CACHE_SIZE
  {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    info->llc_bytes = l3 > 0 && (size_t)l3 > info->l2_bytes ? (size_t)l3 : 0;
  }
#endif
  {
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0)
      info->mem_bytes = (size_t)pages * (size_t)psz;
  }
  return 0;
}

static int host_device_select(zlb_backend_t *b, int index, zlb_error_t *err) {
  (void)b;
  (void)index;
  (void)err;
  return 0;
}

static int host_stream_create(zlb_backend_t *b, zlb_stream_t *s, zlb_error_t *err) {
  (void)b;
  (void)err;
  *s = zlb_xcalloc(1, 16); /* a distinct, otherwise unused handle */
  return 0;
}

static void host_stream_destroy(zlb_backend_t *b, zlb_stream_t s) {
  (void)b;
  free(s);
}

static int host_noop_stream(zlb_backend_t *b, zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  (void)s;
  (void)err;
  return 0;
}

static int host_stream_wait(zlb_backend_t *b, zlb_stream_t w, zlb_stream_t e,
                            zlb_error_t *err) {
  (void)b;
  (void)w;
  (void)e;
  (void)err;
  return 0;
}

static int host_is_capturing(zlb_backend_t *b, zlb_stream_t s, int *capturing,
                             zlb_error_t *err) {
  (void)b;
  (void)s;
  (void)err;
  *capturing = 0;
  return 0;
}

static int host_event_create(zlb_backend_t *b, zlb_event_t *e, zlb_error_t *err) {
  (void)b;
  (void)err;
  *e = zlb_xcalloc(1, sizeof(struct host_event));
  return 0;
}

static void host_event_destroy(zlb_backend_t *b, zlb_event_t e) {
  (void)b;
  free(e);
}

static int host_event_record(zlb_backend_t *b, zlb_event_t e, zlb_stream_t s,
                             zlb_error_t *err) {
  struct host_event *ev = (struct host_event *)e;
  (void)b;
  (void)s;
  (void)err;
  ev->ns = zlb_now_ns();
  ev->recorded = 1;
  return 0;
}

static int host_event_elapsed(zlb_backend_t *b, zlb_event_t start, zlb_event_t end,
                              double *ms, zlb_error_t *err) {
  struct host_event *s = (struct host_event *)start, *e = (struct host_event *)end;
  (void)b;
  if (!s->recorded || !e->recorded)
    return zlb_error_set(err, ZLB_EINVAL, "elapsed time of an unrecorded event");
  *ms = (double)(int64_t)(e->ns - s->ns) * 1e-6;
  return 0;
}

static int host_mem_alloc(zlb_backend_t *b, size_t bytes, void **ptr,
                          zlb_error_t *err) {
  (void)b;
  /* 64-byte alignment: a cache line, and enough for any vector load. */
  if (posix_memalign(ptr, 64, bytes ? bytes : 64) != 0)
    return zlb_error_set(err, ZLB_ENOMEM, "cannot allocate %zu bytes of host memory",
                         bytes);
  return 0;
}

static void host_mem_free(zlb_backend_t *b, void *ptr) {
  (void)b;
  free(ptr);
}

static int host_memset(zlb_backend_t *b, void *ptr, int value, size_t bytes,
                       zlb_stream_t s, zlb_error_t *err) {
  (void)b;
  (void)s;
  (void)err;
  memset(ptr, value, bytes);
  return 0;
}

static int host_memcpy(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                       zlb_error_t *err) {
  (void)b;
  (void)err;
  if (bytes)
    memcpy(dst, src, bytes);
  return 0;
}

static int host_dtod(zlb_backend_t *b, void *dst, const void *src, size_t bytes,
                     zlb_stream_t s, zlb_error_t *err) {
  (void)s;
  return host_memcpy(b, dst, src, bytes, err);
}

static int host_sync(zlb_backend_t *b, zlb_error_t *err) {
  (void)b;
  (void)err;
  return 0;
}

/* The host backend's device memory is the host's. */
static int host_mem_info(zlb_backend_t *b, size_t *free_bytes, size_t *total_bytes,
                         zlb_error_t *err) {
  (void)b;
  return zlb_host_mem_available(free_bytes, total_bytes, err);
}

static const zlb_backend_vtbl_t host_vtbl = {
    .open = host_open,
    .close = host_close,
    .device_count = host_device_count,
    .device_info = host_device_info,
    .device_select = host_device_select,
    .stream_create = host_stream_create,
    .stream_destroy = host_stream_destroy,
    .stream_sync = host_noop_stream,
    .stream_wait = host_stream_wait,
    .stream_is_capturing = host_is_capturing,
    .event_create = host_event_create,
    .event_destroy = host_event_destroy,
    .event_record = host_event_record,
    .event_elapsed = host_event_elapsed,
    .mem_alloc = host_mem_alloc,
    .mem_free = host_mem_free,
    .memset_async = host_memset,
    .memcpy_htod = host_memcpy,
    .memcpy_dtoh = host_memcpy,
    .sync = host_sync,
    .health_probe = host_sync,
    .memcpy_dtod = host_dtod,
    .mem_info = host_mem_info,
};

static const char *const host_aliases[] = {"cpu", NULL};

const zlb_backend_desc_t zlb__backend_host = {
    .name = "host",
    .vendor = "CPU",
    .aliases = host_aliases,
    .sonames = NULL,
    .visibility_env = NULL,
    .also_env = NULL,
    /* The CPU caches are real, so the direct timer flushes them too. */
    .caps = ZLB_CAP_L2_FLUSH | ZLB_CAP_HOST_MEMORY,
    .classify = NULL,
    .nclassify = 0,
    .flush_bytes = 8u << 20,
    .vtbl = &host_vtbl,
    .probe_in_auto = 0,
};
