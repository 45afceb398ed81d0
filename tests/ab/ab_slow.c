/* Test-only operator library for `zlbench ab`: it loads another operator
 * library (ZL_AB_WRAP=PATH) and registers each of its operators unchanged,
 * except the one named by ZL_AB_SLOW=OP:PCT, whose candidate is made PCT %
 * slower:
 *  - test and host backends (work runs inside enqueue): after the wrapped
 *    candidate's call, spin on the host for PCT % of the CPU time that call
 *    took;
 *  - CUDA (built with ZLB_AB_CUDA): prepare() measures the wrapped
 *    candidate's time on the case with events, and each call enqueues,
 *    after the candidate, a one-thread kernel that spins for PCT % of that
 *    time. The extra launch adds its own cost on top (about 1 us in a
 *    graph), so a short candidate is slowed by more than PCT %: `zlbench ab`
 *    shows the ratio it measured.
 * Give it as side B: zlbench ab --lib-b libzlb_ab_slow_*.so; side A is the
 * wrapped library itself. Never use it for real measurements. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zlbench/op.h"

#define MAX_OPS 512

static zlb_op_t ops[MAX_OPS];
static int nops;
static const zlb_op_t *slow_inner; /* the operator slowed, as the wrapped library has it */
static char slow_name[128];
static double slow_pct;
static zlb_op_registrar_t *outer;

#ifdef ZLB_AB_CUDA
#include <cuda_runtime_api.h>
int zlb_ab_spin(void *stream, unsigned long long ns);
static unsigned long long spin_ns; /* for the case prepared last */

/* Per-call time of fn's enqueue on `stream` over `n` calls, in ms. */
static int time_calls(zlb_env_t *env, zlb_case_t *c, void *stream, int empty, double *ms) {
  cudaEvent_t e0, e1;
  float t = 0;
  int rc = 0;
  if (cudaEventCreate(&e0) || cudaEventCreate(&e1))
    return 1;
  for (int pass = 0; pass < 2 && !rc; pass++) {
    int n = pass ? 20 : 3;
    if (pass)
      cudaEventRecord(e0, (cudaStream_t)stream);
    for (int i = 0; i < n && !rc; i++)
      rc = empty ? zlb_ab_spin(stream, 0)
                 : slow_inner->candidate.enqueue(env, c, ZLB_CANDIDATE, stream);
    if (pass)
      cudaEventRecord(e1, (cudaStream_t)stream);
  }
  if (!rc && !cudaEventSynchronize(e1) && !cudaEventElapsedTime(&t, e0, e1))
    *ms = t / 20.0;
  else if (!rc)
    rc = 1;
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return rc;
}

static int slow_prepare(zlb_env_t *env, zlb_case_t *c, int which) {
  double t = 0, want;
  cudaStream_t s;
  int rc;
  if (slow_inner->candidate.prepare && (rc = slow_inner->candidate.prepare(env, c, which)))
    return rc;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))
    return snprintf(env->errbuf, env->errlen, "ab_slow: cannot create a stream"), -1;
  rc = time_calls(env, c, s, 0, &t);
  cudaStreamDestroy(s);
  if (rc)
    return snprintf(env->errbuf, env->errlen, "ab_slow: cannot time the candidate"), -1;
  /* The spin alone is PCT % of the candidate; the extra launch adds to it.
   * (Subtracting an empty kernel's time measured from stream launches,
   * about 2.5 us each, took more than a graph replay's launch costs: add
   * at 4096^2 float32 was slowed by 1.8 % instead of 5 % on an H200.) */
  want = t * slow_pct / 100.0;
  spin_ns = want > 0 ? (unsigned long long)(want * 1e6) : 0;
  return 0;
}

static int slow_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  int rc = slow_inner->candidate.enqueue(env, c, which, stream);
  if (rc)
    return rc;
  if (zlb_ab_spin(stream, spin_ns))
    return snprintf(env->errbuf, env->errlen, "ab_slow: spin kernel launch failed"), -1;
  return 0;
}
#else
/* The thread's CPU time: the test backend's graphs take their time from it
 * (a capture's CPU time), and the wall clock passes at least as fast. A
 * spin in wall time for PCT % of a call's wall time spun for a share of
 * any preemption of the call too, which a captured graph then counted. */
static unsigned long long cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int slow_enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  unsigned long long t0 = cpu_ns(), t1, until;
  int rc = slow_inner->candidate.enqueue(env, c, which, stream);
  t1 = cpu_ns();
  until = t1 + (unsigned long long)((double)(t1 - t0) * slow_pct / 100.0);
  while (cpu_ns() < until)
    ;
  return rc;
}
#endif

static int wrap_add_op(zlb_op_registrar_t *r, const zlb_op_t *op) {
  zlb_op_t *w;
  (void)r;
  if (nops == MAX_OPS)
    return -1;
  w = &ops[nops++];
  *w = *op;
  if (slow_name[0] && !strcmp(op->name, slow_name)) {
    slow_inner = op;
    w->candidate.enqueue = slow_enqueue;
#ifdef ZLB_AB_CUDA
    w->candidate.prepare = slow_prepare;
#endif
  }
  return outer->add_op(outer, w);
}

static int wrap_add_backend(zlb_op_registrar_t *r, const struct zlb_backend_desc *desc) {
  (void)r;
  return outer->add_backend(outer, desc);
}

ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r);

ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r) {
  const char *path = getenv("ZL_AB_WRAP"), *slow = getenv("ZL_AB_SLOW"), *colon;
  zlb_op_registrar_t mine;
  zlb_ops_register_fn fn;
  void *h, *sym;
  if (!path || !*path) {
    fprintf(stderr, "ab_slow: set ZL_AB_WRAP to the operator library to wrap\n");
    return -1;
  }
  if (slow && *slow) {
    char *end;
    colon = strchr(slow, ':');
    if (!colon || (size_t)(colon - slow) >= sizeof(slow_name)) {
      fprintf(stderr, "ab_slow: ZL_AB_SLOW must be OP:PCT, not '%s'\n", slow);
      return -1;
    }
    memcpy(slow_name, slow, (size_t)(colon - slow));
    slow_name[colon - slow] = '\0';
    slow_pct = strtod(colon + 1, &end);
    if (*end || !(slow_pct > 0 && slow_pct <= 1000)) {
      fprintf(stderr, "ab_slow: ZL_AB_SLOW's percentage must be in (0, 1000], not '%s'\n",
              colon + 1);
      return -1;
    }
  }
  if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
    fprintf(stderr, "ab_slow: cannot load '%s': %s\n", path, dlerror());
    return -1;
  }
  if (!(sym = dlsym(h, ZLB_OP_ENTRY_SYMBOL))) {
    fprintf(stderr, "ab_slow: '%s' is not an operator library\n", path);
    return -1;
  }
  memcpy(&fn, &sym, sizeof(fn));
  outer = r;
  mine = *r;
  mine.add_op = wrap_add_op;
  mine.add_backend = wrap_add_backend;
  if (fn(&mine))
    return -1;
  if (slow_name[0] && !slow_inner) {
    fprintf(stderr, "ab_slow: ZL_AB_SLOW names '%s', which '%s' does not have\n", slow_name,
            path);
    return -1;
  }
  return 0;
}
