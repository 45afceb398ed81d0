/* The emulated device behind the fake vendor runtimes (fake_core.h). One
 * lock guards all state; each stream's worker runs its operations outside
 * it. */
#include "fake_core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEVICES 64

enum op_kind { OP_MEMSET, OP_MEMCPY, OP_HOST_FUNC, OP_EVENT, OP_WAIT_EVENT, OP_WAIT_VALUE };

struct op {
  enum op_kind kind;
  void *dst;
  const void *src;
  size_t n;
  int value, dst_device, src_device;
  void (*fn)(void *);
  void *arg;
  fk_event_t *ev;
  uint64_t gen;
  uint32_t *addr;
  uint32_t val, mask;
  struct op *next;
};

struct fk_stream {
  pthread_t thread;
  int device;
  struct op *head, *tail;
  int busy, stop;
  /* capture */
  int capturing, invalidated;
  pthread_t capture_thread;
  struct op *cap_head, *cap_tail;
  fk_stream_t *next_stream;
};

struct fk_event {
  uint64_t recorded, done; /* generations: the last enqueued, the last reached */
  uint64_t ns;
  int timing;
  int refs;      /* operations (queued, captured, in graphs) that name it */
  int destroyed; /* freed when the last of them goes */
};

struct fk_graph {
  struct op *head;
};

struct alloc {
  char *p;
  size_t n;
  int device, host;
};

static const fk_vendor_t *V;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static struct {
  int physical;
  int visible[MAX_DEVICES];
  int nvisible;
  int no_device;
  size_t mem_bytes;
  long op_us;
  enum { F_ILLEGAL, F_LOST, F_ABORT } fault;
  long fault_at;
  enum { C_OK, C_UNSUPPORTED, C_INVALIDATE, C_POISON } capture;
} cfg;

static int sticky;
static long host_funcs_run;
static fk_kernel_hook_t kernel_hook; /* atomic: read by every stream worker */
static struct alloc *allocs;
static size_t nallocs, cap_allocs;
static size_t used[MAX_DEVICES];
static fk_stream_t *streams;
static fk_stream_t *default_stream;
/* The current device of each thread (a key, not __thread: dynamic TLS in a
 * dlopened library trips LeakSanitizer's scan of live threads at exit). */
static pthread_key_t device_key;

/* Stored as ordinal + 1: 0 is "never set on this thread" (device 0 then). */
static int cur_device(void) {
  int d = (int)(intptr_t)pthread_getspecific(device_key);
  return d > 0 ? d - 1 : 0;
}
static void set_cur_device(int d) { pthread_setspecific(device_key, (void *)(intptr_t)(d + 1)); }

static long env_long(const char *name, long dflt) {
  const char *e = getenv(name);
  char *end;
  long v;
  if (!e || !*e)
    return dflt;
  v = strtol(e, &end, 10);
  return *end ? dflt : v;
}

/* One visibility variable over the list left by the previous ones:
 * indices into that list, renumbered from 0; the first invalid or repeated
 * entry ends the list (as the vendors' runtimes do). Unset: no change. */
static void apply_visibility(const char *names) {
  char name[64];
  const char *e = NULL;
  int out[MAX_DEVICES], n = 0;
  long last = -1;
  /* "A|B": the first of the alternatives that is set. */
  while (*names && !e) {
    size_t len = strcspn(names, "|");
    snprintf(name, sizeof(name), "%.*s", (int)len, names);
    e = getenv(name);
    names += len + (names[len] == '|');
  }
  if (!e)
    return;
  while (*e && n < MAX_DEVICES) {
    char *end;
    long i = strtol(e, &end, 10);
    int dup = 0;
    if (end == e || i < 0 || i >= cfg.nvisible)
      break;
    if (V->visibility_ascending && n > 0 && i <= last)
      break;
    last = i;
    for (int k = 0; k < n; k++)
      dup |= out[k] == cfg.visible[i];
    if (dup)
      break;
    out[n++] = cfg.visible[i];
    e = end;
    while (*e == ' ')
      e++;
    if (*e != ',')
      break;
    e++;
  }
  memcpy(cfg.visible, out, sizeof(int) * (size_t)n);
  cfg.nvisible = n;
}

static void configure(void) {
  const char *f = getenv("ZL_FAKE_FAULT"), *c = getenv("ZL_FAKE_CAPTURE");
  pthread_key_create(&device_key, NULL);
  cfg.physical = (int)env_long("ZL_FAKE_DEVICES", 2);
  if (cfg.physical < 0)
    cfg.physical = 0;
  if (cfg.physical > MAX_DEVICES)
    cfg.physical = MAX_DEVICES;
  for (int i = 0; i < cfg.physical; i++)
    cfg.visible[i] = i;
  cfg.nvisible = cfg.physical;
  for (const char *const *v = V->visibility_env; v && *v; v++)
    apply_visibility(*v);
  cfg.no_device = env_long("ZL_FAKE_NO_DEVICE", 0) != 0 || cfg.nvisible == 0;
  cfg.mem_bytes = (size_t)env_long("ZL_FAKE_MEM_BYTES", 1L << 30);
  cfg.op_us = env_long("ZL_FAKE_OP_US", 0);
  cfg.fault = !f || !strcmp(f, "illegal") ? F_ILLEGAL : !strcmp(f, "lost") ? F_LOST : F_ABORT;
  cfg.fault_at = env_long("ZL_FAKE_FAULT_AT", 0);
  cfg.capture = !c || !*c                    ? C_OK
                : !strcmp(c, "unsupported")  ? C_UNSUPPORTED
                : !strcmp(c, "invalidate")   ? C_INVALIDATE
                : !strcmp(c, "poison")       ? C_POISON
                                             : C_OK;
}

void fk_setup(const fk_vendor_t *v) { V = v; }

void fk_set_kernel_hook(fk_kernel_hook_t hook) {
  __atomic_store_n(&kernel_hook, hook, __ATOMIC_SEQ_CST);
}

static void ready(void) { pthread_once(&once, configure); }

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

/* Operations hold a reference on the event they name: an event may be
 * destroyed while a record or a wait is still queued, as with the vendors'
 * runtimes. */
static void ev_get(fk_event_t *e) {
  if (!e)
    return;
  pthread_mutex_lock(&lock);
  e->refs++;
  pthread_mutex_unlock(&lock);
}

static void free_op(struct op *o) {
  fk_event_t *e = o->ev;
  free(o);
  if (!e)
    return;
  pthread_mutex_lock(&lock);
  if (--e->refs == 0 && e->destroyed)
    free(e);
  pthread_mutex_unlock(&lock);
}

int fk_sticky(void) {
  int s;
  pthread_mutex_lock(&lock);
  s = sticky;
  pthread_mutex_unlock(&lock);
  return s;
}

/* Most calls fail once the context is broken. */
#define CHECK_STICKY()                                                          \
  do {                                                                          \
    int s_ = fk_sticky();                                                       \
    if (s_)                                                                     \
      return s_;                                                                \
  } while (0)

int fk_init(void) {
  ready();
  return cfg.no_device ? V->init_no_device : V->ok;
}

int fk_device_count(int *n) {
  ready();
  if (!n)
    return V->invalid_value;
  *n = cfg.no_device ? 0 : cfg.nvisible;
  return cfg.no_device ? V->no_device : V->ok;
}

int fk_physical(int ordinal) {
  ready();
  return cfg.no_device || ordinal < 0 || ordinal >= cfg.nvisible ? -1 : cfg.visible[ordinal];
}

int fk_set_device(int ordinal) {
  if (fk_physical(ordinal) < 0)
    return V->invalid_device;
  set_cur_device(ordinal);
  return V->ok;
}

int fk_device_is_set(void) {
  ready();
  return pthread_getspecific(device_key) != NULL;
}

int fk_get_device(int *ordinal) {
  if (!ordinal)
    return V->invalid_value;
  ready();
  *ordinal = cur_device();
  return V->ok;
}

size_t fk_mem_bytes(void) {
  ready();
  return cfg.mem_bytes;
}

int fk_mem_used(int ordinal, size_t *u) {
  if (fk_physical(ordinal) < 0)
    return V->invalid_device;
  pthread_mutex_lock(&lock);
  *u = used[ordinal];
  pthread_mutex_unlock(&lock);
  return V->ok;
}

/* ---- memory ------------------------------------------------------------------ */

static int add_alloc(void **p, size_t bytes, int host) {
  int dev = cur_device();
  char *m;
  if (!p)
    return V->invalid_value;
  *p = NULL;
  if (!bytes)
    return V->ok;
  pthread_mutex_lock(&lock);
  if (!host && used[dev] + bytes > cfg.mem_bytes) {
    pthread_mutex_unlock(&lock);
    return V->out_of_memory;
  }
  if (!(m = malloc(bytes))) {
    pthread_mutex_unlock(&lock);
    return V->out_of_memory;
  }
  if (nallocs == cap_allocs) {
    size_t nc = cap_allocs ? 2 * cap_allocs : 64;
    struct alloc *na = realloc(allocs, nc * sizeof(*na));
    if (!na) {
      free(m);
      pthread_mutex_unlock(&lock);
      return V->out_of_memory;
    }
    allocs = na;
    cap_allocs = nc;
  }
  allocs[nallocs++] = (struct alloc){m, bytes, dev, host};
  if (!host)
    used[dev] += bytes;
  pthread_mutex_unlock(&lock);
  *p = m;
  return V->ok;
}

static int drop_alloc(void *p, int host) {
  if (!p)
    return V->ok;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nallocs; i++)
    if (allocs[i].p == p && allocs[i].host == host) {
      if (!host)
        used[allocs[i].device] -= allocs[i].n;
      free(p);
      allocs[i] = allocs[--nallocs];
      pthread_mutex_unlock(&lock);
      return sticky ? sticky : V->ok;
    }
  pthread_mutex_unlock(&lock);
  return V->invalid_value;
}

int fk_malloc(void **p, size_t bytes) {
  ready();
  CHECK_STICKY();
  return add_alloc(p, bytes, 0);
}

int fk_free(void *p) { return drop_alloc(p, 0); }

int fk_host_alloc(void **p, size_t bytes) {
  ready();
  CHECK_STICKY();
  return add_alloc(p, bytes, 1);
}

int fk_host_free(void *p) { return drop_alloc(p, 1); }

int fk_host_mapped(const void *p) {
  int found = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nallocs && !found; i++)
    found = allocs[i].host && allocs[i].p == p;
  pthread_mutex_unlock(&lock);
  return found;
}

/* Whether [p, p + n) lies inside one allocation (device or mapped host).
 * Called with the lock held. */
static int inside(const void *p, size_t n) {
  const char *c = p;
  for (size_t i = 0; i < nallocs; i++)
    if (c >= allocs[i].p && n <= allocs[i].n && c - allocs[i].p <= (ptrdiff_t)(allocs[i].n - n))
      return 1;
  return 0;
}

/* ---- faults ------------------------------------------------------------------ */

/* A device fault: with the lock not held. */
static void device_fault(const void *addr) {
  if (cfg.fault == F_ABORT) {
    fprintf(stderr, V->fault_message, fk_physical(cur_device()) + 1, addr);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
  }
  pthread_mutex_lock(&lock);
  if (!sticky)
    sticky = cfg.fault == F_LOST ? V->context_lost : V->illegal_address;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
}

/* ---- streams ----------------------------------------------------------------- */

/* A host function is the fakes' kernel: its span goes to the tracer's hook. */
static void run_kernel(fk_stream_t *s, struct op *o) {
  fk_kernel_hook_t hook = __atomic_load_n(&kernel_hook, __ATOMIC_SEQ_CST);
  uint64_t begin = now_ns();
  o->fn(o->arg);
  if (hook)
    hook(s->device, begin, now_ns());
}

static void run_op(fk_stream_t *s, struct op *o) {
  int broken;
  set_cur_device(s->device);
  pthread_mutex_lock(&lock);
  broken = sticky != 0;
  pthread_mutex_unlock(&lock);
  if (!broken && cfg.op_us > 0 && o->kind != OP_EVENT && o->kind != OP_WAIT_EVENT &&
      o->kind != OP_WAIT_VALUE)
    sleep_us(cfg.op_us);
  switch (o->kind) {
  case OP_MEMSET: {
    int ok;
    if (broken)
      break;
    pthread_mutex_lock(&lock);
    ok = inside(o->dst, o->n);
    pthread_mutex_unlock(&lock);
    if (!ok)
      device_fault(o->dst);
    else
      memset(o->dst, o->value, o->n);
    break;
  }
  case OP_MEMCPY: {
    const void *bad = NULL;
    if (broken)
      break;
    pthread_mutex_lock(&lock);
    if (o->dst_device && !inside(o->dst, o->n))
      bad = o->dst;
    else if (o->src_device && !inside(o->src, o->n))
      bad = o->src;
    pthread_mutex_unlock(&lock);
    if (bad)
      device_fault(bad);
    else
      memmove(o->dst, o->src, o->n);
    break;
  }
  case OP_HOST_FUNC: {
    long k;
    if (broken)
      break;
    pthread_mutex_lock(&lock);
    k = ++host_funcs_run;
    pthread_mutex_unlock(&lock);
    if (cfg.fault_at > 0 && k == cfg.fault_at)
      device_fault(NULL);
    else
      run_kernel(s, o);
    break;
  }
  case OP_EVENT:
    pthread_mutex_lock(&lock);
    o->ev->ns = now_ns();
    if (o->gen > o->ev->done)
      o->ev->done = o->gen;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    break;
  case OP_WAIT_EVENT:
    pthread_mutex_lock(&lock);
    while (o->ev->done < o->gen && !sticky)
      pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    break;
  case OP_WAIT_VALUE:
    /* The host releases the wait with a plain store: poll. */
    while ((__atomic_load_n(o->addr, __ATOMIC_SEQ_CST) & o->mask) < o->val) {
      pthread_mutex_lock(&lock);
      broken = sticky != 0;
      pthread_mutex_unlock(&lock);
      if (broken)
        break;
      sleep_us(20);
    }
    break;
  }
}

static void *worker(void *arg) {
  fk_stream_t *s = arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    struct op *o;
    while (!s->head && !s->stop)
      pthread_cond_wait(&changed, &lock);
    if (!s->head)
      break;
    o = s->head;
    s->head = o->next;
    if (!s->head)
      s->tail = NULL;
    s->busy = 1;
    pthread_mutex_unlock(&lock);
    run_op(s, o);
    free_op(o);
    pthread_mutex_lock(&lock);
    s->busy = 0;
    pthread_cond_broadcast(&changed);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

static int new_stream(fk_stream_t **out) {
  fk_stream_t *s = calloc(1, sizeof(*s));
  if (!s)
    return V->out_of_memory;
  s->device = cur_device();
  if (pthread_create(&s->thread, NULL, worker, s)) {
    free(s);
    return V->out_of_memory;
  }
  pthread_mutex_lock(&lock);
  s->next_stream = streams;
  streams = s;
  pthread_mutex_unlock(&lock);
  *out = s;
  return V->ok;
}

int fk_stream_create(fk_stream_t **s) {
  ready();
  if (!s)
    return V->invalid_value;
  CHECK_STICKY();
  return new_stream(s);
}

/* The NULL stream: one per process, created on first use. */
static fk_stream_t *resolve(fk_stream_t *s) {
  static pthread_mutex_t dl = PTHREAD_MUTEX_INITIALIZER;
  if (s)
    return s;
  pthread_mutex_lock(&dl);
  if (!default_stream && new_stream(&default_stream) != V->ok)
    default_stream = NULL;
  pthread_mutex_unlock(&dl);
  return default_stream;
}

int fk_stream_destroy(fk_stream_t *s) {
  if (!s)
    return V->invalid_handle;
  pthread_mutex_lock(&lock);
  for (fk_stream_t **p = &streams; *p; p = &(*p)->next_stream)
    if (*p == s) {
      *p = s->next_stream;
      break;
    }
  s->stop = 1;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  /* The worker finishes what was enqueued, as the device would. */
  pthread_join(s->thread, NULL);
  for (struct op *o = s->cap_head, *n; o; o = n) {
    n = o->next;
    free_op(o);
  }
  free(s);
  return V->ok;
}

/* A call that would synchronise while this thread captures: refused, and
 * the capture is invalidated (the thread-local capture mode's rule). Called
 * with the lock held; returns the refusal or 0. */
static int refuse_if_capturing(void) {
  int refused = 0;
  for (fk_stream_t *s = streams; s; s = s->next_stream)
    if (s->capturing && pthread_equal(s->capture_thread, pthread_self())) {
      s->invalidated = 1;
      refused = 1;
    }
  return refused ? V->capture_unsupported : 0;
}

static int idle(fk_stream_t *s) { return !s->head && !s->busy; }

int fk_stream_sync(fk_stream_t *s) {
  int r;
  ready();
  if (!(s = resolve(s)))
    return V->out_of_memory;
  pthread_mutex_lock(&lock);
  if (s->capturing) {
    s->invalidated = 1;
    pthread_mutex_unlock(&lock);
    return V->capture_unsupported;
  }
  while (!idle(s) && !sticky)
    pthread_cond_wait(&changed, &lock);
  r = sticky ? sticky : V->ok;
  pthread_mutex_unlock(&lock);
  return r;
}

int fk_device_sync(void) {
  int r;
  ready();
  pthread_mutex_lock(&lock);
  if ((r = refuse_if_capturing())) {
    pthread_mutex_unlock(&lock);
    return r;
  }
  for (;;) {
    int all = 1;
    for (fk_stream_t *s = streams; s; s = s->next_stream)
      all &= idle(s);
    if (all || sticky)
      break;
    pthread_cond_wait(&changed, &lock);
  }
  r = sticky ? sticky : V->ok;
  pthread_mutex_unlock(&lock);
  return r;
}

/* Put `o` on `s`'s queue, or into its capture. Takes ownership. */
static int enqueue(fk_stream_t *s, struct op *o) {
  int r = V->ok;
  if (!(s = resolve(s))) {
    free(o);
    return V->out_of_memory;
  }
  o->next = NULL;
  pthread_mutex_lock(&lock);
  if (sticky) {
    r = sticky;
  } else if (s->capturing) {
    if (o->kind == OP_WAIT_VALUE || cfg.capture == C_UNSUPPORTED) {
      s->invalidated = 1;
      r = V->capture_unsupported;
    } else if (s->invalidated) {
      r = V->capture_invalidated;
    } else {
      if (s->cap_tail)
        s->cap_tail->next = o;
      else
        s->cap_head = o;
      s->cap_tail = o;
      pthread_mutex_unlock(&lock);
      return V->ok;
    }
  } else {
    if (o->kind == OP_EVENT)
      o->gen = ++o->ev->recorded;
    if (s->tail)
      s->tail->next = o;
    else
      s->head = o;
    s->tail = o;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    return V->ok;
  }
  pthread_mutex_unlock(&lock);
  free_op(o);
  return r;
}

static struct op *new_op(enum op_kind k) {
  struct op *o = calloc(1, sizeof(*o));
  if (o)
    o->kind = k;
  return o;
}

int fk_memset(void *dst, int value, size_t n, fk_stream_t *s) {
  struct op *o;
  ready();
  if (!n)
    return fk_sticky() ? fk_sticky() : V->ok;
  if (!dst)
    return V->invalid_value;
  if (!(o = new_op(OP_MEMSET)))
    return V->out_of_memory;
  o->dst = dst;
  o->value = value;
  o->n = n;
  o->dst_device = 1;
  return enqueue(s, o);
}

int fk_memcpy(void *dst, const void *src, size_t n, int dst_device, int src_device,
              fk_stream_t *s) {
  struct op *o;
  ready();
  if (!n)
    return fk_sticky() ? fk_sticky() : V->ok;
  if (!dst || !src)
    return V->invalid_value;
  if (!(o = new_op(OP_MEMCPY)))
    return V->out_of_memory;
  o->dst = dst;
  o->src = src;
  o->n = n;
  o->dst_device = dst_device;
  o->src_device = src_device;
  return enqueue(s, o);
}

int fk_memcpy_sync(void *dst, const void *src, size_t n, int dst_device, int src_device) {
  int r;
  ready();
  pthread_mutex_lock(&lock);
  r = refuse_if_capturing();
  pthread_mutex_unlock(&lock);
  if (r)
    return r;
  /* Ordered after the NULL stream's work, as a synchronous copy is. */
  if ((r = fk_memcpy(dst, src, n, dst_device, src_device, NULL)) != V->ok)
    return r;
  return fk_stream_sync(NULL);
}

int fk_host_func(fk_stream_t *s, void (*fn)(void *), void *arg) {
  struct op *o;
  ready();
  if (!fn)
    return V->invalid_value;
  if (!(o = new_op(OP_HOST_FUNC)))
    return V->out_of_memory;
  o->fn = fn;
  o->arg = arg;
  return enqueue(s, o);
}

int fk_wait_value32(fk_stream_t *s, uint32_t *addr, uint32_t value, uint32_t mask) {
  struct op *o;
  int ok;
  ready();
  if (!addr)
    return V->invalid_value;
  pthread_mutex_lock(&lock);
  ok = inside(addr, sizeof(*addr));
  pthread_mutex_unlock(&lock);
  if (!ok)
    return V->invalid_value;
  if (!(o = new_op(OP_WAIT_VALUE)))
    return V->out_of_memory;
  o->addr = addr;
  o->val = value;
  o->mask = mask;
  return enqueue(s, o);
}

/* ---- events ------------------------------------------------------------------ */

int fk_event_create(fk_event_t **e, int timing) {
  ready();
  if (!e)
    return V->invalid_value;
  CHECK_STICKY();
  if (!(*e = calloc(1, sizeof(**e))))
    return V->out_of_memory;
  (*e)->timing = timing;
  return V->ok;
}

int fk_event_destroy(fk_event_t *e) {
  if (!e)
    return V->invalid_handle;
  pthread_mutex_lock(&lock);
  e->destroyed = 1;
  if (!e->refs)
    free(e);
  pthread_mutex_unlock(&lock);
  return V->ok;
}

int fk_event_record(fk_event_t *e, fk_stream_t *s) {
  struct op *o;
  if (!e)
    return V->invalid_handle;
  if (!(o = new_op(OP_EVENT)))
    return V->out_of_memory;
  o->ev = e;
  ev_get(e);
  return enqueue(s, o);
}

int fk_event_sync(fk_event_t *e) {
  int r;
  if (!e)
    return V->invalid_handle;
  pthread_mutex_lock(&lock);
  while (e->done < e->recorded && !sticky)
    pthread_cond_wait(&changed, &lock);
  r = sticky ? sticky : V->ok;
  pthread_mutex_unlock(&lock);
  return r;
}

int fk_event_elapsed(float *ms, fk_event_t *a, fk_event_t *b) {
  int r = V->ok;
  if (!ms)
    return V->invalid_value;
  if (!a || !b)
    return V->invalid_handle;
  pthread_mutex_lock(&lock);
  if (sticky)
    r = sticky;
  else if (!a->timing || !b->timing || !a->recorded || !b->recorded)
    r = V->invalid_handle;
  else if (a->done < a->recorded || b->done < b->recorded)
    r = V->not_ready;
  else
    *ms = (float)((double)((int64_t)(b->ns - a->ns)) * 1e-6);
  pthread_mutex_unlock(&lock);
  return r;
}

int fk_stream_wait_event(fk_stream_t *s, fk_event_t *e) {
  struct op *o;
  if (!e)
    return V->invalid_handle;
  if (!(o = new_op(OP_WAIT_EVENT)))
    return V->out_of_memory;
  o->ev = e;
  ev_get(e);
  pthread_mutex_lock(&lock);
  o->gen = e->recorded; /* the record enqueued last, at the time of the call */
  pthread_mutex_unlock(&lock);
  return enqueue(s, o);
}

/* ---- capture and graphs ---------------------------------------------------------- */

int fk_capture_begin(fk_stream_t *s) {
  ready();
  CHECK_STICKY();
  if (!s)
    return V->capture_unsupported; /* the NULL stream cannot be captured */
  pthread_mutex_lock(&lock);
  if (s->capturing) {
    pthread_mutex_unlock(&lock);
    return V->capture_invalidated;
  }
  s->capturing = 1;
  s->invalidated = 0;
  s->capture_thread = pthread_self();
  s->cap_head = s->cap_tail = NULL;
  pthread_mutex_unlock(&lock);
  return V->ok;
}

static void free_ops(struct op *o) {
  while (o) {
    struct op *n = o->next;
    free_op(o);
    o = n;
  }
}

int fk_capture_end(fk_stream_t *s, fk_graph_t **g) {
  struct op *ops;
  int bad;
  if (!g)
    return V->invalid_value;
  *g = NULL;
  if (!s)
    return V->capture_unmatched;
  pthread_mutex_lock(&lock);
  if (!s->capturing) {
    pthread_mutex_unlock(&lock);
    return V->capture_unmatched;
  }
  s->capturing = 0;
  ops = s->cap_head;
  s->cap_head = s->cap_tail = NULL;
  bad = s->invalidated || cfg.capture == C_INVALIDATE || cfg.capture == C_POISON;
  if (cfg.capture == C_POISON && !sticky)
    sticky = V->context_lost;
  pthread_mutex_unlock(&lock);
  if (bad) {
    free_ops(ops);
    return V->capture_invalidated;
  }
  if (!(*g = calloc(1, sizeof(**g)))) {
    free_ops(ops);
    return V->out_of_memory;
  }
  (*g)->head = ops;
  return V->ok;
}

int fk_capture_status(fk_stream_t *s, int *status) {
  if (!status)
    return V->invalid_value;
  if (!s) {
    *status = 0;
    return V->ok;
  }
  pthread_mutex_lock(&lock);
  *status = !s->capturing ? 0 : s->invalidated ? 2 : 1;
  pthread_mutex_unlock(&lock);
  return V->ok;
}

int fk_graph_instantiate(fk_graph_t **exec, fk_graph_t *g) {
  struct op **tail;
  CHECK_STICKY();
  if (!exec || !g)
    return V->invalid_value;
  if (!(*exec = calloc(1, sizeof(**exec))))
    return V->out_of_memory;
  tail = &(*exec)->head;
  for (struct op *o = g->head; o; o = o->next) {
    struct op *c = malloc(sizeof(*c));
    if (!c) {
      fk_graph_destroy(*exec);
      *exec = NULL;
      return V->out_of_memory;
    }
    *c = *o;
    c->next = NULL;
    ev_get(c->ev);
    *tail = c;
    tail = &c->next;
  }
  return V->ok;
}

int fk_graph_launch(fk_graph_t *exec, fk_stream_t *s) {
  int r;
  if (!exec)
    return V->invalid_value;
  for (struct op *o = exec->head; o; o = o->next) {
    struct op *c = malloc(sizeof(*c));
    if (!c)
      return V->out_of_memory;
    *c = *o;
    ev_get(c->ev);
    if ((r = enqueue(s, c)) != V->ok)
      return r;
  }
  return fk_sticky() ? fk_sticky() : V->ok;
}

int fk_graph_destroy(fk_graph_t *g) {
  if (!g)
    return V->invalid_value;
  free_ops(g->head);
  free(g);
  return V->ok;
}
