/* Child processes for the batch layer (after git's run-command): fork+exec
 * into a new process group, exec failures reported through a close-on-exec
 * pipe, time limits escalated TERM -> KILL on the whole group, signal deaths
 * reported as 128 + signal. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zlbench/batch.h"

extern char **environ;

/* Build the child's environment: ours with env_set's keys replaced. */
static char **make_env(const zlb_strvec_t *set) {
  size_t n = 0, k = 0;
  char **env;
  while (environ[n])
    n++;
  env = zlb_xcalloc(n + (set ? set->n : 0) + 1, sizeof(*env));
  for (size_t i = 0; i < n; i++) {
    int replaced = 0;
    for (size_t j = 0; set && j < set->n && !replaced; j++) {
      const char *eq = strchr(set->v[j], '=');
      size_t kl = eq ? (size_t)(eq - set->v[j]) : strlen(set->v[j]);
      replaced = !strncmp(environ[i], set->v[j], kl) && environ[i][kl] == '=';
    }
    if (!replaced)
      env[k++] = environ[i];
  }
  for (size_t j = 0; set && j < set->n; j++)
    env[k++] = set->v[j];
  env[k] = NULL;
  return env;
}

/* A captured stream: the child writes into a pipe; the parent copies the
 * first ZLB_CAPTURE_KEEP bytes to the file and keeps the last
 * ZLB_CAPTURE_KEEP in a ring, written after a line saying what was cut. */
struct zlb__capture {
  int pipe_fd, file_fd;
  unsigned long long total;
  size_t head;        /* bytes written to the file so far, at most KEEP */
  size_t ring_len, ring_pos;
  int write_failed;   /* the file could not take a write: the rest is dropped */
  char ring[ZLB_CAPTURE_KEEP];
};

static void cap_write(struct zlb__capture *c, const char *p, size_t n) {
  while (n && !c->write_failed) {
    ssize_t w = write(c->file_fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      c->write_failed = 1;
      break;
    }
    p += w;
    n -= (size_t)w;
  }
}

static void cap_add(struct zlb__capture *c, const char *p, size_t n) {
  c->total += n;
  if (c->head < ZLB_CAPTURE_KEEP) {
    size_t take = n < ZLB_CAPTURE_KEEP - c->head ? n : ZLB_CAPTURE_KEEP - c->head;
    cap_write(c, p, take);
    c->head += take;
    p += take;
    n -= take;
  }
  for (size_t i = 0; i < n; i++) {
    c->ring[c->ring_pos] = p[i];
    c->ring_pos = (c->ring_pos + 1) % ZLB_CAPTURE_KEEP;
    if (c->ring_len < ZLB_CAPTURE_KEEP)
      c->ring_len++;
  }
}

/* Read what the pipe holds now (it is non-blocking). */
static void cap_drain(struct zlb__capture *c) {
  char buf[65536];
  ssize_t n;
  if (!c || c->pipe_fd < 0)
    return;
  while ((n = read(c->pipe_fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      cap_add(c, buf, (size_t)n);
  if (n == 0) {
    close(c->pipe_fd);
    c->pipe_fd = -1;
  }
}

/* The child is gone: the tail, after a line saying how much was cut. */
static void cap_finish(struct zlb__capture **cp) {
  struct zlb__capture *c = *cp;
  unsigned long long cut;
  if (!c)
    return;
  cap_drain(c);
  cut = c->total - c->head - c->ring_len;
  if (cut) {
    char line[128];
    int n = snprintf(line, sizeof(line), "\n[zlbench: %llu bytes of output cut here]\n", cut);
    cap_write(c, line, (size_t)n);
  }
  if (c->ring_len) {
    size_t start = (c->ring_pos + ZLB_CAPTURE_KEEP - c->ring_len) % ZLB_CAPTURE_KEEP;
    size_t first = c->ring_len < ZLB_CAPTURE_KEEP - start ? c->ring_len : ZLB_CAPTURE_KEEP - start;
    cap_write(c, c->ring + start, first);
    cap_write(c, c->ring, c->ring_len - first);
  }
  if (c->pipe_fd >= 0)
    close(c->pipe_fd);
  close(c->file_fd);
  free(c);
  *cp = NULL;
}

/* The child's end of a stream: a pipe into a capture, or /dev/null. */
static int cap_open(const char *path, struct zlb__capture **cp, int *child_fd) {
  int p[2];
  struct zlb__capture *c;
  *cp = NULL;
  if (!path) {
    *child_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    return *child_fd < 0 ? -1 : 0;
  }
  c = zlb_xcalloc(1, sizeof(*c));
  c->file_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (c->file_fd < 0) {
    free(c);
    return -1;
  }
  if (pipe2(p, O_CLOEXEC) != 0) {
    close(c->file_fd);
    free(c);
    return -1;
  }
  fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
  c->pipe_fd = p[0];
  *child_fd = p[1];
  *cp = c;
  return 0;
}

static void cap_abandon(struct zlb__capture **cp) {
  if (*cp) {
    close((*cp)->pipe_fd);
    close((*cp)->file_fd);
    free(*cp);
    *cp = NULL;
  }
}

/* Only async-signal-safe calls between fork and exec. */
static void child_fail(int fd, int stage) {
  int e[2] = {stage, errno};
  ssize_t w = write(fd, e, sizeof(e));
  (void)w;
  _exit(127);
}

int zlb_spawn(char *const argv[], const zlb_strvec_t *env_set, const char *stdout_path,
              const char *stderr_path, double timeout_s, zlb_child_t *c, zlb_error_t *err) {
  int pipefd[2], report[2] = {0, 0}, in_fd, out_fd = -1, err_fd = -1;
  struct zlb__capture *cap[2] = {NULL, NULL};
  char **env = make_env(env_set);
  pid_t ppid = getpid(), pid;
  ssize_t n;

  memset(c, 0, sizeof(*c));
  in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in_fd < 0 || cap_open(stdout_path, &cap[0], &out_fd) ||
      cap_open(stderr_path, &cap[1], &err_fd) || pipe2(pipefd, O_CLOEXEC) != 0) {
    int e = errno;
    cap_abandon(&cap[0]);
    cap_abandon(&cap[1]);
    if (in_fd >= 0)
      close(in_fd);
    if (out_fd >= 0)
      close(out_fd);
    if (err_fd >= 0)
      close(err_fd);
    free(env);
    return zlb_error_set(err, ZLB_ESPAWN, "cannot set up the child for '%s': %s", argv[0],
                         strerror(e));
  }
  pid = fork();
  if (pid < 0) {
    int e = errno;
    close(pipefd[0]);
    close(pipefd[1]);
    close(in_fd);
    close(out_fd);
    close(err_fd);
    cap_abandon(&cap[0]);
    cap_abandon(&cap[1]);
    free(env);
    return zlb_error_set(err, ZLB_ESPAWN, "cannot fork for '%s': %s", argv[0], strerror(e));
  }
  if (pid == 0) {
    sigset_t none;
    /* Own process group: a time limit kills the child and everything it
     * started. Die with the parent, so a killed batch leaves no orphan. */
    if (setpgid(0, 0) != 0)
      child_fail(pipefd[1], 1);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
      child_fail(pipefd[1], 2);
    if (getppid() != ppid)
      _exit(128 + SIGKILL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
      child_fail(pipefd[1], 3);
    execve(argv[0], argv, env);
    child_fail(pipefd[1], 4);
  }
  /* Both sides set the group, so there is no window where a signal to the
   * group misses the child. */
  setpgid(pid, pid);
  close(pipefd[1]);
  close(in_fd);
  close(out_fd);
  close(err_fd);
  free(env);
  do
    n = read(pipefd[0], report, sizeof(report));
  while (n < 0 && errno == EINTR);
  close(pipefd[0]);
  if (n == (ssize_t)sizeof(report)) {
    int status;
    waitpid(pid, &status, 0);
    cap_finish(&cap[0]);
    cap_finish(&cap[1]);
    return zlb_error_set(err, ZLB_ESPAWN, "cannot start '%s': %s (stage %d)", argv[0],
                         strerror(report[1]), report[0]);
  }
  c->pid = pid;
  c->cap[0] = cap[0];
  c->cap[1] = cap[1];
  c->started = zlb_now_s();
  c->deadline = timeout_s > 0 ? c->started + timeout_s : 0;
  return 0;
}

static void fill_exit(zlb_child_t *c, int status) {
  c->done = 1;
  if (WIFSIGNALED(status)) {
    c->exit.signaled = 1;
    c->exit.sig = WTERMSIG(status);
    c->exit.code = 128 + c->exit.sig;
  } else {
    c->exit.code = WEXITSTATUS(status);
  }
  /* Leave nothing of the group behind (grandchildren included); then
   * nothing writes into the pipes any more. */
  kill(-c->pid, SIGKILL);
  cap_finish(&c->cap[0]);
  cap_finish(&c->cap[1]);
}

int zlb_child_poll(zlb_child_t *c, double grace_s) {
  int status;
  pid_t r;
  double now;
  if (c->done)
    return 1;
  cap_drain(c->cap[0]);
  cap_drain(c->cap[1]);
  r = waitpid(c->pid, &status, WNOHANG);
  if (r == c->pid) {
    fill_exit(c, status);
    return 1;
  }
  now = zlb_now_s();
  if (c->deadline > 0 && now >= c->deadline && !c->term_sent) {
    c->exit.timed_out = 1;
    c->term_sent = now;
    kill(-c->pid, SIGTERM);
  } else if (c->term_sent && now >= c->term_sent + grace_s) {
    kill(-c->pid, SIGKILL);
  }
  return 0;
}

void zlb_child_stop(zlb_child_t *c, double grace_s) {
  double until;
  if (c->done || !c->pid)
    return;
  if (!c->term_sent) {
    c->term_sent = zlb_now_s();
    kill(-c->pid, SIGTERM);
  }
  until = c->term_sent + grace_s;
  while (!zlb_child_poll(c, grace_s)) {
    if (zlb_now_s() >= until)
      kill(-c->pid, SIGKILL);
    zlb_sleep_ms(20);
  }
}

static void read_bounded(const char *path, size_t max, zlb_strbuf_t *out) {
  char buf[4096];
  ssize_t n;
  size_t total = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  /* Bounded: never hold more than `max` bytes of a child's output. */
  while ((n = read(fd, buf, sizeof(buf))) > 0 && total < max) {
    size_t take = (size_t)n < max - total ? (size_t)n : max - total;
    zlb_strbuf_add(out, buf, take);
    total += take;
  }
  close(fd);
}

int zlb_spawn_capture(char *const argv[], const zlb_strvec_t *env_set, double timeout_s,
                      size_t max, zlb_strbuf_t *out, zlb_strbuf_t *errout, zlb_exit_t *ex,
                      zlb_error_t *err) {
  char t1[] = "/tmp/zlbench-out-XXXXXX", t2[] = "/tmp/zlbench-err-XXXXXX";
  int f1 = mkstemp(t1), f2 = f1 >= 0 ? mkstemp(t2) : -1, rc;
  zlb_child_t c;
  if (f1 < 0 || f2 < 0) {
    int e = errno;
    if (f1 >= 0) {
      close(f1);
      unlink(t1);
    }
    return zlb_error_set(err, ZLB_EIO, "cannot create a temporary file: %s", strerror(e));
  }
  close(f1);
  close(f2);
  rc = zlb_spawn(argv, env_set, t1, t2, timeout_s, &c, err);
  if (!rc) {
    while (!zlb_child_poll(&c, 2.0))
      zlb_sleep_ms(10);
    *ex = c.exit;
    read_bounded(t1, max, out);
    if (errout)
      read_bounded(t2, max, errout);
  }
  unlink(t1);
  unlink(t2);
  return rc;
}

void zlb_exit_describe(const zlb_exit_t *ex, char *buf, size_t len) {
  if (ex->timed_out)
    snprintf(buf, len, "timeout");
  else if (ex->signaled)
    snprintf(buf, len, "signal SIG%s", sigabbrev_np(ex->sig) ? sigabbrev_np(ex->sig) : "?");
  else
    snprintf(buf, len, "exit %d", ex->code);
}
