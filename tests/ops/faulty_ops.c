/* Test-only operators for the "test" backend: two good ones and one for each
 * way an operator can misbehave (crash, hang, ignore SIGTERM, exit for one
 * dtype, fail once, fail always, wrong result, refuse or poison capture,
 * device fault, output folder full, stderr flood). The batch and timing tests drive them. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_int.h"

enum mode {
  M_COPY, M_SCALE, M_CRASH, M_HANG, M_HANG_NOTERM, M_DTYPE_EXIT, M_FLAKY,
  M_ALWAYS_FAIL, M_WRONG, M_POISON, M_REFUSE, M_FAULT, M_DISK_FULL, M_FLOOD,
  M_OOM_BESIDE, M_OOM_ALWAYS, M_OOM_ROWS, M_OOM_CROWD
};

static int mode_of(const char *name) {
  static const struct {
    const char *name;
    enum mode m;
  } t[] = {{"good_copy", M_COPY},       {"good_scale", M_SCALE},
           {"crash", M_CRASH},          {"hang", M_HANG},
           {"hang_ignore_term", M_HANG_NOTERM}, {"dtype_exit", M_DTYPE_EXIT},
           {"flaky", M_FLAKY},          {"always_fail", M_ALWAYS_FAIL},
           {"wrong_result", M_WRONG},   {"poison_capture", M_POISON},
           {"refuse_capture", M_REFUSE}, {"device_fault", M_FAULT},
           {"disk_full", M_DISK_FULL}, {"flood_stderr", M_FLOOD},
           {"oom_beside", M_OOM_BESIDE}, {"oom_always", M_OOM_ALWAYS},
           {"oom_rows_beside", M_OOM_ROWS},
           {"oom_crowd1", M_OOM_CROWD}, {"oom_crowd2", M_OOM_CROWD},
           {"oom_crowd3", M_OOM_CROWD}, {"oom_crowd4", M_OOM_CROWD},
           {"oom_crowd5", M_OOM_CROWD}, {"oom_crowd6", M_OOM_CROWD},
           {"oom_crowd7", M_OOM_CROWD}, {"oom_crowd8", M_OOM_CROWD}};
  for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
    if (!strcmp(t[i].name, name))
      return (int)t[i].m;
  return -1;
}

/* Each op's case remembers its mode in priv (an int cast to a pointer). */
#define MODE(c) ((int)(intptr_t)(c)->priv)

static int oom_rows_wrong; /* oom_rows_beside ran out of memory in this child */

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int bump_attempts(const char *op) {
  const char *dir = getenv("ZL_TEST_STATE_DIR");
  char path[1024];
  int n = 0;
  FILE *f;
  if (!dir)
    return 0;
  snprintf(path, sizeof(path), "%s/%s.attempts", dir, op);
  if ((f = fopen(path, "r"))) {
    if (fscanf(f, "%d", &n) != 1)
      n = 0;
    fclose(f);
  }
  if ((f = fopen(path, "w"))) {
    fprintf(f, "%d\n", n + 1);
    fclose(f);
  }
  return n;
}

static int init_common(zlb_env_t *env, zlb_case_t *c, const char *name) {
  int m = mode_of(name);
  int64_t n;
  (void)env;
  c->priv = (void *)(intptr_t)m;
  if (m == M_DTYPE_EXIT && c->dtype == ZLB_DT_BFLOAT16) {
    fprintf(stderr, "error: dtype_exit: bfloat16 is broken in this build\n");
    exit(9);
  }
  /* While $ZL_TEST_STATE_DIR/dtype_exit_full exists, its float32 case
   * exits as a child whose output folder is full (after bfloat16's exit in
   * the all-dtypes child: only float32's own child gets here). */
  if (m == M_DTYPE_EXIT && c->dtype == ZLB_DT_FLOAT32) {
    const char *dir = getenv("ZL_TEST_STATE_DIR");
    char path[1024];
    snprintf(path, sizeof(path), "%s/dtype_exit_full", dir ? dir : ".");
    if (dir && access(path, F_OK) == 0) {
      fprintf(stderr, "zlbench: error: cannot write 'run.log': No space left on device\n");
      exit(ZLB_EXIT_OUTPUT);
    }
  }
  /* While $ZL_TEST_STATE_DIR/hold_<op> exists, the operator's child waits
   * (held_<op> says it is waiting): a deterministic "still running" for
   * tests that interrupt a batch during one operator, or that need a
   * neighbour on the device. */
  {
    const char *dir = getenv("ZL_TEST_STATE_DIR");
    char path[1024], held[1024];
    snprintf(path, sizeof(path), "%s/hold_%s", dir ? dir : ".", name);
    snprintf(held, sizeof(held), "%s/held_%s", dir ? dir : ".", name);
    if (dir && access(path, F_OK) == 0) {
      FILE *f = fopen(held, "w");
      if (f)
        fclose(f);
    }
    while (dir && access(path, F_OK) == 0)
      nap_ms(10);
  }
  /* Out of device memory: oom_always in every child; oom_beside only
   * while good_copy is held beside it on the device (it waits until
   * good_copy is, then lets it go on); oom_rows_beside likewise, as a
   * row that fails (a wrong result after the error line) in a child that
   * finishes its tables. */
  if (m == M_OOM_BESIDE || m == M_OOM_ALWAYS || m == M_OOM_ROWS) {
    const char *dir = getenv("ZL_TEST_STATE_DIR");
    char held[1024], hold[1024];
    snprintf(held, sizeof(held), "%s/held_good_copy", dir ? dir : ".");
    snprintf(hold, sizeof(hold), "%s/hold_good_copy", dir ? dir : ".");
    if (dir && access(hold, F_OK) == 0) {
      for (int i = 0; i < 3000 && access(held, F_OK) != 0; i++)
        nap_ms(10);
      fprintf(stderr, "error: CUDA out of memory. Tried to allocate 2.00 GiB (%s)\n", name);
      unlink(hold);
      if (m != M_OOM_ROWS)
        exit(1);
      oom_rows_wrong = 1;
    }
    if (oom_rows_wrong)
      c->priv = (void *)(intptr_t)M_OOM_ALWAYS; /* every row of this child fails */
    if (m == M_OOM_ALWAYS) {
      fprintf(stderr, "error: CUDA out of memory. Tried to allocate 2.00 GiB (%s)\n", name);
      exit(1);
    }
  }
  /* oom_crowd<N>: as if each child took a third of the device's memory,
   * out of memory where more than two of them (or crowd_limit's number)
   * ran at once: each child
   * marks itself running (crowd_<name> in $ZL_TEST_STATE_DIR) for a
   * second, counting the marks it sees meanwhile, so children that the
   * batch started together overlap and see each other. */
  if (m == M_OOM_CROWD) {
    const char *dir = getenv("ZL_TEST_STATE_DIR");
    char mark[1024];
    int most = 0;
    FILE *f;
    snprintf(mark, sizeof(mark), "%s/crowd_%s", dir ? dir : ".", name);
    if (dir && (f = fopen(mark, "w")))
      fclose(f);
    for (int t = 0; dir && t < 100; t++) {
      int seen = 0;
      for (int k = 1; k <= 8; k++) {
        char other[1024];
        snprintf(other, sizeof(other), "%s/crowd_oom_crowd%d", dir, k);
        seen += access(other, F_OK) == 0;
      }
      most = seen > most ? seen : most;
      nap_ms(10);
    }
    if (dir)
      unlink(mark);
    {
      /* The most that may run at once: 2, or $ZL_TEST_STATE_DIR/crowd_limit. */
      int limit = 2;
      snprintf(mark, sizeof(mark), "%s/crowd_limit", dir ? dir : ".");
      if (dir && (f = fopen(mark, "r"))) {
        if (fscanf(f, "%d", &limit) != 1)
          limit = 2;
        fclose(f);
      }
      most = most > limit ? most : 0;
    }
    if (most) {
      fprintf(stderr, "error: CUDA out of memory. Tried to allocate 30.00 GiB (%s, %d children)\n",
              name, most);
      exit(1);
    }
  }
  n = zlb_test_copy_case(c, "test", ZLB_CHECK_CLOSE);
  c->flops = m == M_SCALE ? (double)n : 0.0;
  return 0;
}

static void compute(zlb_case_t *c, int which, double scale, double add) {
  const zlb_tensor_t *x = &c->in[0], *y = &c->out[which][0];
  for (int64_t i = 0; i < x->numel; i++)
    zlb_store(y->dtype, y->data, i, zlb_load(x->dtype, x->data, i) * scale + add);
}

static int enqueue(zlb_env_t *env, zlb_case_t *c, int which, void *stream) {
  struct test_stream *ts = stream;
  int m = MODE(c);
  double scale = m == M_SCALE ? 2.0 : 1.0;
  zlb_test_stream_enqueue(ts); /* one launch */
  if (which == ZLB_CANDIDATE) {
    switch (m) {
    case M_CRASH:
      raise(SIGSEGV);
      break;
    case M_HANG:
      for (;;)
        pause();
    case M_HANG_NOTERM:
      signal(SIGTERM, SIG_IGN);
      for (;;)
        pause();
    case M_WRONG:
      compute(c, which, scale, 1.0);
      return 0;
    case M_OOM_ALWAYS: /* oom_rows_beside's rows, beside a neighbour */
      snprintf(env->errbuf, env->errlen, "CUDA out of memory (a row of oom_rows_beside)");
      return 2;
    case M_FAULT:
      snprintf(env->errbuf, env->errlen, "injected illegal address");
      return TEST_ERR_ILLEGAL_ADDRESS;
    case M_POISON:
      if (ts->capturing) {
        zlb_test_backend_poison();
        ts->invalidated = 1;
        snprintf(env->errbuf, env->errlen, "capture broke the context");
        return TEST_ERR_CAPTURE_INVALIDATED;
      }
      break;
    default:
      break;
    }
  }
  if (m == M_REFUSE && ts->capturing) {
    ts->invalidated = 1;
    snprintf(env->errbuf, env->errlen, "synchronising with the host during capture");
    return TEST_ERR_CAPTURE_UNSUPPORTED;
  }
  compute(c, which, scale, 0.0);
  return 0;
}

/* Process-level misbehaviour happens once per child, at the first case. */
static int prepare(zlb_env_t *env, zlb_case_t *c, int which) {
  int m = MODE(c);
  (void)env;
  if (which != ZLB_CANDIDATE)
    return 0;
  if (m == M_FLAKY && bump_attempts("flaky") == 0) {
    fprintf(stderr, "error: flaky: transient failure on the first attempt\n");
    exit(9);
  }
  /* While $ZL_TEST_STATE_DIR/disk_full exists, exit as `zlbench run` does
   * when it cannot write its results (ZLB_EXIT_OUTPUT); each child counts
   * itself in disk_full.attempts. */
  if (m == M_DISK_FULL) {
    const char *dir = getenv("ZL_TEST_STATE_DIR");
    char path[1024];
    bump_attempts("disk_full");
    snprintf(path, sizeof(path), "%s/disk_full", dir ? dir : ".");
    if (dir && access(path, F_OK) == 0) {
      fprintf(stderr, "zlbench: error: cannot write 'run.log': No space left on device\n");
      exit(ZLB_EXIT_OUTPUT);
    }
  }
  /* 20 MB of stderr after its error line, then a failing exit. */
  if (m == M_FLOOD) {
    static char junk[4096];
    memset(junk, 'x', sizeof(junk) - 1);
    junk[sizeof(junk) - 1] = '\n';
    fprintf(stderr, "error: flood_stderr: about to write 20 MB of noise\n");
    fflush(stderr);
    for (int i = 0; i < 20 * 256; i++)
      if (write(2, junk, sizeof(junk)) < 0)
        break;
    fprintf(stderr, "flood_stderr: last line\n");
    exit(9);
  }
  /* $ZL_TEST_STATE_DIR/always_fail_line, when it exists, is the error
   * line written instead (hostile words: escape sequences). */
  if (m == M_ALWAYS_FAIL) {
    const char *dir = getenv("ZL_TEST_STATE_DIR");
    char path[1024], text[256];
    FILE *f;
    size_t n = 0;
    snprintf(path, sizeof(path), "%s/always_fail_line", dir ? dir : ".");
    if (dir && (f = fopen(path, "rb"))) {
      n = fread(text, 1, sizeof(text) - 1, f);
      fclose(f);
    }
    if (n) {
      text[n] = '\0';
      fprintf(stderr, "%s\n", text);
    } else {
      fprintf(stderr, "error: always_fail: deterministic failure\n");
    }
    exit(9);
  }
  return 0;
}

#define TEST_OP(NAME)                                                            \
  static int init_##NAME(zlb_env_t *env, zlb_case_t *c) {                        \
    return init_common(env, c, #NAME);                                           \
  }                                                                              \
  ZLB_TEST_OP_DESC(NAME, "test", ZLB_DT_FLOATS, "test operator " #NAME, init_##NAME, enqueue, \
                   prepare, enqueue)

TEST_OP(good_copy)
TEST_OP(good_scale)
TEST_OP(crash)
TEST_OP(hang)
TEST_OP(hang_ignore_term)
TEST_OP(dtype_exit)
TEST_OP(flaky)
TEST_OP(always_fail)
TEST_OP(wrong_result)
TEST_OP(poison_capture)
TEST_OP(refuse_capture)
TEST_OP(device_fault)
TEST_OP(disk_full)
TEST_OP(flood_stderr)
TEST_OP(oom_beside)
TEST_OP(oom_always)
TEST_OP(oom_rows_beside)
TEST_OP(oom_crowd1)
TEST_OP(oom_crowd2)
TEST_OP(oom_crowd3)
TEST_OP(oom_crowd4)
TEST_OP(oom_crowd5)
TEST_OP(oom_crowd6)
TEST_OP(oom_crowd7)
TEST_OP(oom_crowd8)

/* good_copy on "testq", the backend with holds and no graphs. */
static int init_queue_copy(zlb_env_t *env, zlb_case_t *c) {
  return init_common(env, c, "good_copy");
}
ZLB_TEST_OP_DESC(queue_copy, "testq", ZLB_DT_FLOATS, "test operator good_copy on testq",
                 init_queue_copy, enqueue, prepare, enqueue)

ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r);

ZLB_OP_EXPORT int zlb_ops_register(zlb_op_registrar_t *r) {
  const zlb_op_t *all[] = {&op_good_copy,   &op_good_scale,     &op_crash,
                           &op_hang,        &op_hang_ignore_term, &op_dtype_exit,
                           &op_flaky,       &op_always_fail,    &op_wrong_result,
                           &op_poison_capture, &op_refuse_capture, &op_device_fault,
                           &op_disk_full, &op_flood_stderr, &op_oom_beside,
                           &op_oom_always, &op_oom_rows_beside, &op_oom_crowd1,
                           &op_oom_crowd2, &op_oom_crowd3, &op_oom_crowd4,
                           &op_oom_crowd5, &op_oom_crowd6, &op_oom_crowd7,
                           &op_oom_crowd8};
  int rc = r->add_backend(r, &zlb_test_backend_desc);
  for (size_t i = 0; !rc && i < sizeof(all) / sizeof(all[0]); i++)
    rc = r->add_op(r, all[i]);
  if (!rc)
    rc = zlb_test_register_bad_cases(r);
  if (!rc)
    rc = r->add_backend(r, &zlb_test2_backend_desc);
  if (!rc)
    rc = r->add_backend(r, &zlb_test3_backend_desc);
  if (!rc)
    rc = zlb_test_register_pinned(r);
  if (!rc)
    rc = zlb_test_register_custom(r);
  if (!rc)
    rc = zlb_test_register_steady(r);
  if (!rc)
    rc = zlb_test_register_cheats(r);
  if (!rc)
    rc = r->add_backend(r, &zlb_testq_backend_desc);
  if (!rc)
    rc = r->add_op(r, &op_queue_copy);
  return rc;
}
