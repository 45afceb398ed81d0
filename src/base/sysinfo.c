/* What the host offers a process: available memory (for sizing a case
 * before allocating it) and a deterministic parallel loop over chunks. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zlbench/base.h"

/* "Key:   1234 kB" from /proc/meminfo, in bytes; 0 when absent. */
static uint64_t meminfo_kb(const char *text, const char *key) {
  const char *p = strstr(text, key);
  unsigned long long kb = 0;
  if (!p || sscanf(p + strlen(key), " %llu", &kb) != 1)
    return 0;
  return (uint64_t)kb * 1024u;
}

/* One unsigned number from a file ("max" and unreadable files: 0). */
static uint64_t file_u64(const char *path) {
  char buf[64] = {0};
  FILE *f = fopen(path, "r");
  unsigned long long v = 0;
  if (!f)
    return 0;
  if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%llu", &v) != 1)
    v = 0;
  fclose(f);
  return (uint64_t)v;
}

/* What the process's cgroup still allows (0: no limit found). */
static uint64_t cgroup_room(void) {
  uint64_t limit = file_u64("/sys/fs/cgroup/memory.max"), used;
  if (limit) {
    used = file_u64("/sys/fs/cgroup/memory.current");
    return limit > used ? limit - used : 1;
  }
  limit = file_u64("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  /* v1 reports "no limit" as a number near 2^63. */
  if (limit && limit < (UINT64_C(1) << 60)) {
    used = file_u64("/sys/fs/cgroup/memory/memory.usage_in_bytes");
    return limit > used ? limit - used : 1;
  }
  return 0;
}

int zlb_host_mem_available(size_t *avail, size_t *total, zlb_error_t *err) {
  char *text = NULL;
  size_t len = 0;
  uint64_t a, t, room;
  zlb_error_t e = ZLB_ERROR_INIT;

  *avail = 0;
  if (total)
    *total = 0;
  if (zlb_read_file("/proc/meminfo", &text, &len, &e))
    return zlb_error_set(err, ZLB_EIO, "cannot read the host's free memory: %s", e.msg);
  a = meminfo_kb(text, "MemAvailable:");
  t = meminfo_kb(text, "MemTotal:");
  free(text);
  if (!a || !t)
    return zlb_error_set(err, ZLB_EIO,
                         "cannot read the host's free memory: /proc/meminfo has no "
                         "MemAvailable or MemTotal");
  room = cgroup_room();
  if (room && room < a)
    a = room;
  *avail = (size_t)a;
  if (total)
    *total = (size_t)t;
  return 0;
}

/* ---- parallel chunks -------------------------------------------------------- */

#define MAX_THREADS 16

struct chunk_pool {
  int64_t n, chunk, nchunks;
  void (*fn)(void *ctx, int64_t k, int64_t begin, int64_t end);
  void *ctx;
  pthread_mutex_t lock;
  int64_t next;
};

/* Threads take chunks in turn until none is left. */
static void *chunk_worker(void *arg) {
  struct chunk_pool *p = arg;
  for (;;) {
    int64_t k, b, e;
    pthread_mutex_lock(&p->lock);
    k = p->next++;
    pthread_mutex_unlock(&p->lock);
    if (k >= p->nchunks)
      return NULL;
    b = k * p->chunk;
    e = b + p->chunk < p->n ? b + p->chunk : p->n;
    p->fn(p->ctx, k, b, e);
  }
}

void zlb_parallel_chunks(int64_t n, int64_t chunk, int max_threads,
                         void (*fn)(void *ctx, int64_t k, int64_t begin, int64_t end),
                         void *ctx) {
  struct chunk_pool p;
  pthread_t tid[MAX_THREADS];
  int nt, started = 0;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

  if (n <= 0)
    return;
  if (chunk < 1)
    chunk = 1;
  memset(&p, 0, sizeof(p));
  p.n = n;
  p.chunk = chunk;
  p.nchunks = (n + chunk - 1) / chunk;
  p.fn = fn;
  p.ctx = ctx;
  nt = max_threads > 0 ? max_threads : (int)(ncpu > 0 ? ncpu : 1);
  if (nt > MAX_THREADS)
    nt = MAX_THREADS;
  if ((int64_t)nt > p.nchunks)
    nt = (int)p.nchunks;
  pthread_mutex_init(&p.lock, NULL);
  /* A thread that cannot start leaves its share to the others. */
  for (int i = 1; i < nt; i++)
    if (pthread_create(&tid[started], NULL, chunk_worker, &p) == 0)
      started++;
  chunk_worker(&p);
  for (int i = 0; i < started; i++)
    pthread_join(tid[i], NULL);
  pthread_mutex_destroy(&p.lock);
}
