"""A fork server for Python benchmark children (``python -m zlbench.forkserver``).

A FlagGems child spends about 10 s importing torch, triton and flag_gems
before its first measurement, more than the measurements of a whole
operator take. ``zlbench batch --provider flaggems`` therefore starts one
server per device that imports them once; each operator's child is then
``python -m zlbench.forkrun -m pytest ARGS``, a small client that hands its
arguments, environment, working folder and standard streams to the server,
which forks a process that runs ``python -m pytest ARGS`` from there. The
forked process is the operator's own process: its own session, the client's
stdin, stdout and stderr (passed over the socket), the client's environment
and working folder. Its end comes back to the client, which ends the same
way (the exit status, or death by the same signal), so the batch classifies
it exactly as a plain child. See docs/flaggems.md.

Modules that cannot be preloaded (they initialise the GPU runtime at
import: flag_gems) are imported ahead of time by *spares*: processes the
server forks in advance (three, ``ZL_FG_SPARES`` 1 to 4), each of which
imports them and then waits for one request. The next request whose
environment is the server's (every variable but zlbench's own ``ZL_*``,
which nothing reads at import) goes to a spare that has said its imports
are done (the oldest such), instead of a fresh fork, and a new spare
starts. A request that comes while every spare is still importing waits
for the first to be ready, as long as one is younger than SPARE_WAIT_S (a
fresh fork would import everything again from the start); other requests,
and those no spare becomes ready for, get a fresh fork as before. The child of a spare has
in its environment what the imports set there, as a fresh child would.
Spares that fail to start twice turn spares off. ``ZL_FG_SPARE=0`` turns
them off.

A child's end overlaps the next child's start. The forked process says
"done" with its exit status on a pipe right before it calls ``_exit``, and
the server answers the client at once, so the batch starts the next
operator while the process is still ending (a FlagGems process took about
a second to end on the H200: pytest's clean-up, then the exit and its CUDA
context's teardown). The next child's
tests wait until that process is gone: every child the plugin times takes
the device's *quiet lock* (``ZL_FG_QUIET_LOCK``, a file next to the
socket) before its first test and holds it until its process is gone, and
a child says "done" only when it holds that lock
(``ZL_FG_QUIET_HELD=1``, set by the plugin). Only imports, collection and
the fork overlap the end; no test does. ``ZL_FG_EARLY_DONE=0`` turns this
off; a process that has said done and does not end within DRAIN_KILL_S is
killed.

Modules a child imported that its spare had not (the first call of FlagGems'
``abs`` imports some 500 modules, sympy among them: 2.7 s of its 3.5 s on
the H200) are *learned*: at its end the child appends their names to a
file, and the spares forked after that import them too: once ready (their
own modules in), while they wait, until their request comes (it waits at
most for the one import under way; a spare that a learned import kills
then fails that child, which the batch retries). The file is kept in the
user's cache (``$ZL_CACHE_DIR``, else ``zlbench/`` in ``$XDG_CACHE_HOME`` or
``~/.cache``; in it ``forkserver/``,
one per interpreter, module path, spare modules and ``GEMS_VENDOR``), so
that the next batch's first spares import them too; ``ZL_FG_LEARN=/a/file``
names another. Only modules found on ``sys.path`` outside the child's
working folder and the folders of the test files on its command line are
learned (not the suite's own modules, not test modules or ``conftest``, not
zlbench). ``ZL_FG_LEARN=0`` turns this off.

Isolation and safety rules:

- a preload that initialises a GPU runtime (a forked child could not use
  it) is undone: the server starts over without that module and the ones
  after it, and says so on its stderr;
- the client forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT to the forked
  process's group; when the client goes away without its answer (SIGKILL
  from the batch's time limit) the server kills that group;
- the server ends when its parent (the batch) ends, on SIGTERM, or when its
  socket is removed, and kills what it forked then;
- requests are checked (sizes, types, three descriptors); a malformed one is
  refused and the client falls back to running the module itself.

Variables that torch, triton or flag_gems read at import come from the
server's environment (the batch's, with the device's visibility variable);
everything read later comes from the child's own environment.
"""
import argparse
import ctypes
import gc
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import time
import traceback

MAX_REQUEST = 4 << 20      # bytes of one request (arguments and environment)
# The environment the server was started with (the batch's), before any
# preloaded module changed it: flag_gems sets FLAGGEMS_SOURCE_DIR at import.
_ENV0 = dict(os.environ)
MAX_ARGS = 4096
# hypothesis: its pytest plugin (loaded by every pytest where it is
# installed) imports it in the terminal summary, under pytest's assertion
# rewriting: 0.75-1 s at the end of every child that had not imported it
# (on the H200), 0.2 s here once.
DEFAULT_PRELOAD = "torch,triton,pytest,hypothesis"
# flag_gems starts CUDA at import (it queries the device's properties): a
# spare imports it, without a probe of the server's that would cost a
# restart (torch imported twice) in every batch.
DEFAULT_SPARE = "flag_gems"
# A process that said done and has not ended this long after is killed.
DRAIN_KILL_S = 30.0
# Learned module names kept (the file), and a spare's seconds for them.
LEARN_MAX_NAMES = 8000
LEARN_MAX_BYTES = 1 << 20
LEARN_IMPORT_S = 20.0
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def send_msg(sock, obj, fds=None):
    """One length-prefixed JSON message, with descriptors on its first byte."""
    data = json.dumps(obj).encode()
    frame = struct.pack("!I", len(data)) + data
    sent = socket.send_fds(sock, [frame], fds) if fds else 0
    if sent < len(frame):
        sock.sendall(frame[sent:])


def recv_exact(sock, n, first=b""):
    buf = bytearray(first)
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 16))
        if not chunk:
            raise EOFError("connection closed mid-message")
        buf += chunk
    return bytes(buf)


def recv_msg(sock, want_fds=0):
    """(object, descriptors); EOFError when the peer closed first. On any
    failure the descriptors received are closed: a process forked later
    must not inherit a client's streams."""
    fds = []
    try:
        if want_fds:
            head, fds, _, _ = socket.recv_fds(sock, 4, want_fds)
        else:
            head = sock.recv(4)
        if not head:
            raise EOFError("connection closed")
        head = recv_exact(sock, 4, head)
        (n,) = struct.unpack("!I", head[:4])
        if n > MAX_REQUEST:
            raise ValueError(f"message of {n} bytes (at most {MAX_REQUEST})")
        try:
            return json.loads(recv_exact(sock, n).decode()), fds
        except RecursionError:
            raise ValueError("the message nests too deeply") from None
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


# Signals a client (forkrun) forwards to its child's group; the child blocks
# them while it ends (its word and its learned imports), and then ends with
# its own exit status.
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def _log(msg):
    sys.stderr.write(f"zlbench forkserver[{os.getpid()}]: {msg}\n")
    sys.stderr.flush()


# ---- the preload ------------------------------------------------------------------

def _cuda_initialised():
    """Whether this process has initialised CUDA (torch's or the driver's own
    state): a forked child could not use the device then."""
    t = sys.modules.get("torch")
    try:
        if t is not None and t.cuda.is_initialized():
            return True
    except Exception:  # noqa: BLE001 - a torch without CUDA
        pass
    # The driver answers CUDA_ERROR_NOT_INITIALIZED (3) before cuInit.
    try:
        cuda = ctypes.CDLL("libcuda.so.1", mode=getattr(os, "RTLD_NOLOAD", 4))
    except OSError:
        return False    # not even loaded
    n = ctypes.c_int(0)
    return cuda.cuDeviceGetCount(ctypes.byref(n)) != 3


def preload(names):
    """Import `names` in order; the names imported before one that
    initialised a GPU runtime, or None when all went well."""
    done = []
    for name in names:
        t0 = time.monotonic()
        failed = None
        try:
            __import__(name)
        except ModuleNotFoundError as e:
            if e.name == name:      # not installed: the children will say so
                _log(f"preload {name}: not installed")
                continue
            failed = str(e)
        except Exception as e:  # noqa: BLE001 - a broken optional module must not stop the server
            failed = f"{type(e).__name__}: {e}"
        if _cuda_initialised():
            _log(f"preload {name}: initialised the GPU runtime at import; "
                 f"starting over without it and what follows")
            return done
        if failed:
            _log(f"preload {name}: failed ({failed}); the children import it themselves")
            continue
        _log(f"preload {name}: {time.monotonic() - t0:.2f} s")
        done.append(name)
    return None


# ---- serving ---------------------------------------------------------------------

def _check_request(req, fds):
    if len(fds) != 3:
        raise ValueError(f"{len(fds)} descriptors (expected stdin, stdout, stderr)")
    if not isinstance(req, dict):
        raise ValueError("the request is not an object")
    mod, args, env, cwd = req.get("module"), req.get("args"), req.get("env"), req.get("cwd")
    if not isinstance(mod, str) or not mod or len(mod) > 200:
        raise ValueError("module: expected a module name")
    if not isinstance(args, list) or len(args) > MAX_ARGS or \
            not all(isinstance(a, str) and "\0" not in a for a in args):
        raise ValueError("args: expected a list of strings")
    if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and k and "=" not in k
            and "\0" not in k + v for k, v in env.items()):
        raise ValueError("env: expected an object of strings")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise ValueError("cwd: expected an absolute path")
    return mod, args, env, cwd


# ---- learned imports --------------------------------------------------------------

def _under(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def suite_dirs(args, cwd):
    """The folders of the test files named in a pytest command line
    (``path/test_x.py`` or ``path/test_x.py::node``), relative to `cwd`."""
    out = []
    for a in args:
        if not isinstance(a, str) or a.startswith("-"):
            continue
        f = os.path.join(cwd, a.split("::", 1)[0])
        if f.endswith(".py") and os.path.isfile(f):
            out.append(os.path.dirname(os.path.abspath(f)))
    return out


def learnable(before, cwd, exclude=()):
    """Names of the modules imported since `before` (the names present at
    the fork) that another process could import by name: found under an
    entry of sys.path other than `cwd`, outside `cwd` and the `exclude`
    folders (the suite's own files), not a test module, conftest or
    zlbench."""
    cwd = os.path.abspath(cwd)
    skip = [cwd] + [os.path.abspath(d) for d in exclude]
    roots = []
    for p in sys.path:
        if p and os.path.isabs(p) and not _under(os.path.abspath(p), cwd):
            roots.append(os.path.abspath(p))
    out = []
    for name, mod in list(sys.modules.items()):
        if name in before or not isinstance(name, str) or not _NAME_RE.match(name):
            continue
        parts = name.split(".")
        if parts[0] in ("zlbench", "__main__", "conftest") or \
                any(q.startswith("test_") or q == "conftest" for q in parts):
            continue
        origin = getattr(getattr(mod, "__spec__", None), "origin", None)
        if not isinstance(origin, str) or not os.path.isabs(origin):
            continue        # built in, frozen, a namespace package, made at run time
        origin = os.path.abspath(origin)
        if any(_under(origin, d) for d in skip) or not any(_under(origin, r) for r in roots):
            continue
        out.append(name)
    return out


def _read_learned(path):
    """The names in the learned file, in order (valid ones, capped)."""
    try:
        with open(path, "rb") as f:
            data = f.read(LEARN_MAX_BYTES)
    except OSError:
        return []
    names = []
    if not data.endswith(b"\n"):
        # A name being written, or cut at the size limit: not a name yet.
        data = data[:data.rfind(b"\n") + 1]
    for line in data.decode("ascii", "replace").splitlines():
        line = line.strip()
        if _NAME_RE.match(line) and len(line) <= 200:
            names.append(line)
        if len(names) >= LEARN_MAX_NAMES:
            break
    return names


def flock_within(fd, seconds, poll_s=0.01):
    """Take an exclusive flock on `fd`, waiting at most `seconds`: True
    when held, False when another process still held it then. Other
    errors raise OSError."""
    import fcntl
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
        time.sleep(poll_s)


def learn(path, names):
    """Append the names the file does not have yet (under a lock: children
    on other devices may share it). Errors are said on stderr, not raised:
    learning only makes the next children faster."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    except OSError as e:
        _log(f"cannot open {path}: {e}")
        return 0
    try:
        # Never long: learning only makes later children faster.
        if not flock_within(fd, 2.0):
            _log(f"{path}: locked by another process for 2 s; not learning")
            return 0
        have = set(_read_learned(path))
        new = [n for n in names if n not in have][:max(0, LEARN_MAX_NAMES - len(have))]
        if new:
            data = ("\n".join(new) + "\n").encode("ascii")
            if os.write(fd, data) != len(data):
                _log(f"{path}: short write")
        return len(new)
    except OSError as e:
        _log(f"cannot write {path}: {e}")
        return 0
    finally:
        os.close(fd)


def import_learned(path, budget_s=LEARN_IMPORT_S, stop=None):
    """Import the learned names not imported yet, for at most budget_s and
    until stop() says so (checked before each); (imported, failed,
    stopped). A name that fails is skipped: the child imports what it
    needs itself."""
    t0 = time.monotonic()
    done = failed = 0
    for name in _read_learned(path):
        if name in sys.modules:
            continue
        if stop is not None and stop():
            return done, failed, True
        if time.monotonic() - t0 > budget_s:
            break
        try:
            __import__(name)
            done += 1
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - SystemExit too: skipped, never fatal
            failed += 1
    return done, failed, False


def _readable(sock):
    """Whether a request (or the server's end) is waiting on `sock`."""
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _server_gone(sock):
    """Whether the server closed its end of `sock` (it is going away): a
    request waiting there is not an end."""
    if not _readable(sock):
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


def _close_all(close):
    """Close what a forked process must not hold: sockets, and other
    children's done pipes (descriptors)."""
    for f in close:
        if isinstance(f, int):
            os.close(f)
        else:
            f.close()


def _child_signals():
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
        signal.signal(s, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _run_child(mod, args, env, cwd, fds, close, session=True, done_fd=None):
    """In the forked process: become `python -m mod args` and never return.
    done_fd: where to say "done" and the exit status before the process
    ends (only when it holds its device's quiet lock)."""
    rc = 1
    before = set(sys.modules)
    me = os.getpid()
    try:
        if session:
            os.setsid()
        _child_signals()
        _close_all(close)
        import fcntl
        if done_fd is not None:
            # Out of the way of the standard three (placed below) and of
            # what the module starts.
            if done_fd < 3:
                done_fd = fcntl.fcntl(done_fd, fcntl.F_DUPFD_CLOEXEC, 3)
            os.set_inheritable(done_fd, False)
        # Above the standard three first, so that no dup2 below overwrites
        # a descriptor still to be placed.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 3) for fd in fds]
        for fd in fds:
            os.close(fd)
        fds = high
        for i, fd in enumerate(fds):
            os.dup2(fd, i)
            os.close(fd)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        # As `python -m`: the working folder first on the path.
        if sys.path and sys.path[0] == _START_CWD:
            sys.path[0] = cwd
        import runpy
        sys.argv = [mod] + args
        try:
            runpy.run_module(mod, run_name="__main__", alter_sys=True)
            rc = 0
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, (int, type(None))):
                sys.stderr.write(f"{e.code}\n")
        except KeyboardInterrupt:
            rc = 130
        except BaseException:  # noqa: BLE001 - reported, then the exit status
            traceback.print_exc()
            rc = 1
    finally:
        module_end = None
        try:
            module_end = time.time()    # inside: nothing may stop the _exit below
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except Exception:  # noqa: BLE001
                pass
            # Only the forked process itself: a process its module forked
            # that returns here (sys.exit) ends, and says nothing.
            if os.getpid() == me:
                signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED_SIGNALS)
                _child_end(rc & 0xFF, before, cwd, args, done_fd, module_end)
        except BaseException:  # noqa: BLE001 - nothing may stop the _exit below
            pass
        finally:
            os._exit(rc & 0xFF)


def _child_end(rc, before, cwd, args, done_fd, module_end=None):
    """What the forked process does between its module's end and _exit:
    learn its imports, then say done (if its device's quiet lock is held,
    so that the next child's tests wait for this process to be gone).
    ZL_FG_END_TRACE=/a/file: one JSON line a child there (pid, the
    request's time, the module's end, learning's end, the word's time,
    epoch seconds), to see where a child's last second goes."""
    learned = said = None
    try:
        path = os.environ.get("ZL_FG_LEARN", "")
        if path and os.path.isabs(path):
            learn(path, learnable(before, cwd, suite_dirs(args, cwd)))
        learned = time.time()
    except Exception:  # noqa: BLE001 - never in the way of the exit status
        pass
    if done_fd is not None and os.environ.get("ZL_FG_QUIET_HELD") == "1":
        try:
            os.write(done_fd, b"D" + bytes([rc]))
            said = time.time()
        except OSError:
            pass
    trace = os.environ.get("ZL_FG_END_TRACE", "")
    if trace and os.path.isabs(trace):
        try:
            req = float(os.environ["ZL_FG_REQUEST_AT"])
        except (KeyError, ValueError):
            req = None
        line = json.dumps({"pid": os.getpid(), "request_at": req, "module_end": module_end,
                           "learned": learned, "said_done": said}) + "\n"
        try:
            fd = os.open(trace, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
        except OSError:
            pass
    # Tests only: an end that takes this long after the word (a CUDA
    # context's teardown).
    try:
        delay = float(os.environ.get("ZL_TEST_END_DELAY_S", "0"))
    except ValueError:
        delay = 0.0
    if 0 < delay <= 60:
        time.sleep(delay)


# ---- the spare ---------------------------------------------------------------------

SPARE_FAILURES_MAX = 2
SPARE_READY = b"R"
HAND_TIMEOUT_S = 5.0
# A request waits for a spare still importing until the spare is this old:
# flag_gems imports in 3-5 s on the H200, and a fresh fork would start that
# import from nothing. A spare stuck in its imports costs a request at most
# this, and none once it is older.
SPARE_WAIT_S = 10.0


def _import_env(env):
    """The variables that can matter at import: all but zlbench's own."""
    return {k: v for k, v in env.items() if not k.startswith("ZL_")}


def _fork():
    """os.fork(), the server's heap frozen first (gc.freeze(), as Python's
    documentation advises before a fork without exec): the preloads are
    the server's for good, a child's garbage collections skip them and so
    never write to their pages (no copy-on-write of the whole heap), and
    only what the child itself imports or makes is scanned."""
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()
    return os.fork()


class _Spare:
    """A forked process that has imported `names` and waits for a request."""

    def __init__(self, names, close, learn_path=""):
        a, b = socket.socketpair()
        pid = _fork()
        if pid == 0:
            a.close()
            _spare_main(names, b, close, learn_path)
        b.close()
        self.pid, self.sock, self.is_ready, self.gone = pid, a, False, False
        self.born = time.monotonic()

    def ready(self):
        """Whether its imports are done (it says so with one byte), without
        waiting: a spare still importing gets no request, since its death
        or an interrupt would then be the operator's, with the message in
        the server's log (_first_ready() waits)."""
        if not self.is_ready and not self.gone:
            try:
                if select.select([self.sock], [], [], 0)[0]:
                    # The byte, or the end of a spare that died importing.
                    self.is_ready = self.sock.recv(1) == SPARE_READY
                    self.gone = not self.is_ready
            except OSError:
                self.gone = True        # not waited for again
                return False
        return self.is_ready

    def young(self):
        """Still worth waiting for: importing, and younger than SPARE_WAIT_S."""
        return not self.is_ready and not self.gone and \
            time.monotonic() < self.born + SPARE_WAIT_S

    def hand(self, req, fds):
        """Give the (ready) spare its request; False when it is gone or does
        not take it within HAND_TIMEOUT_S."""
        try:
            self.sock.settimeout(HAND_TIMEOUT_S)
            send_msg(self.sock, req, fds)
            return True
        except OSError:
            return False
        finally:
            self.sock.close()

    def status(self):
        """Its wait status once it ended on its own, else None."""
        return _waited(self.pid)

    def kill(self):
        self.sock.close()
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            try:            # not yet in a session of its own
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _first_ready(spares):
    """The spare a request goes to: the oldest of those that have said they
    are ready, else the first to say so while any is young enough to wait
    for (spares started together finish their imports in any order: on
    the H200 the oldest of three was ready 0.9 s after another one); None
    when none becomes ready."""
    while not _stop:
        for sp in spares:
            if sp.ready():
                return sp
        waiting = [sp for sp in spares if sp.young()]
        if not waiting:
            return None
        try:
            select.select([sp.sock for sp in waiting], [], [], 0.05)
        except (OSError, ValueError):
            return None
    return None


def _spare_main(names, sock, close, learn_path=""):
    """In the spare: import (`names`, then what earlier children learned in
    learn_path), wait for one request, run it; never return."""
    try:
        os.setsid()
        _child_signals()
        _close_all(close)
        # What a fresh fork's import would see: the batch's environment.
        os.environ.clear()
        os.environ.update(_ENV0)
        t0 = time.monotonic()
        for name in names:
            try:
                __import__(name)
            except ModuleNotFoundError as e:
                if e.name != name:
                    _log(f"spare: importing {name} failed ({e}); the child will say so")
                    break
                _log(f"spare: {name} is not installed")
            except Exception as e:  # noqa: BLE001 - the child imports it again and says why
                _log(f"spare: importing {name} failed ({type(e).__name__}: {e}); "
                     f"the child will say so")
                break
        # What the imports set in the environment (flag_gems:
        # FLAGGEMS_SOURCE_DIR) a fresh child would have after its own.
        added = {k: v for k, v in os.environ.items() if _ENV0.get(k) != v}
        sock.sendall(SPARE_READY)
        _log(f"spare: ready after {time.monotonic() - t0:.2f} s")
        if learn_path:
            # While it waits, and only until its request comes (a request
            # waits at most for the one import under way): a spare is ready
            # as soon as its own modules are in.
            t1 = time.monotonic()
            # ZL_FG_LEARN_WAIT=1: a request waits for all of them; the
            # server's end does not.
            n, bad, cut = import_learned(
                learn_path,
                stop=(lambda: _server_gone(sock)) if _learn_wait() else (lambda: _readable(sock)))
            if n or bad or cut:
                _log(f"spare: {n} learned modules in {time.monotonic() - t1:.2f} s"
                     + (f", {bad} failed" if bad else "")
                     + ((", stopped by the server's end" if _learn_wait() else
                         ", stopped by its request") if cut else ""))
            # What they set is not the children's: a fresh child imports
            # them later, after its environment is its own.
            for k in [k for k in os.environ if k not in added and _ENV0.get(k) != os.environ[k]]:
                if k in _ENV0:
                    os.environ[k] = _ENV0[k]
                else:
                    del os.environ[k]
        try:
            req, fds = recv_msg(sock, 4)
        except EOFError:
            os._exit(0)         # the server went away or let the spare go
        sock.close()
        done_fd = fds.pop() if len(fds) == 4 else None
        mod, args, env, cwd = _check_request(req, fds)
        env = dict(added, **env)
    except KeyboardInterrupt:
        os._exit(130)           # as a plain child interrupted in its imports
    except BaseException:  # noqa: BLE001 - before its request: the server forks instead
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(3)
    _run_child(mod, args, env, cwd, fds, [], session=False, done_fd=done_fd)


_START_CWD = os.getcwd()
_stop = False


def _on_term(signum, frame):
    global _stop
    _stop = True


def _killpg(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _waited(pid):
    """The wait status of `pid` once it has ended, else None (an exit
    status of 1 when it is not ours to wait for)."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 1 << 8
    return status if done else None


def _reaped(pid):
    """_waited(); a forked process's group dies with it, as a plain
    child's does when the batch reaps it."""
    status = _waited(pid)
    if status is not None:
        _killpg(pid)
    return status


def _spare_count():
    """Spares kept ready (ZL_FG_SPARES, 1 to 4, default 3): on the H200 a
    spare takes 3-4.6 s to be ready and 2-3.5 s more for its learned
    imports, a short operator's child 2-2.8 s; with two, requests waited
    up to 2.2 s for a spare and most spares had not finished their learned
    imports. Each spare holds a CUDA context (about 0.5 GiB of device
    memory) while it waits."""
    try:
        n = int(_ENV0.get("ZL_FG_SPARES", "3"))
    except ValueError:
        n = 3
    return min(max(n, 1), 4)


def _learn_wait():
    """ZL_FG_LEARN_WAIT=1: a spare finishes its learned imports before it
    takes its request (default 0: the request stops them after the one
    under way, and the child imports the rest itself when it needs them)."""
    v = _ENV0.get("ZL_FG_LEARN_WAIT", "0")
    if v not in ("0", "1"):
        _log(f"ZL_FG_LEARN_WAIT={v!r} is neither 0 nor 1: taken as 0")
    return v == "1"


def _cache_dir():
    """zlbench's folder in the user's cache, as the C side's zlb_cache_dir:
    $ZL_CACHE_DIR, else $XDG_CACHE_HOME/zlbench, else ~/.cache/zlbench."""
    return _ENV0.get("ZL_CACHE_DIR") or os.path.join(
        _ENV0.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "zlbench")


def _learn_file(path, spare_names):
    """(file of learned module names or "", whether it is kept after the
    server). ZL_FG_LEARN=0: none; ZL_FG_LEARN=/a/file: that file;
    otherwise one per interpreter, module path and spare modules in the
    user's cache (forkserver/ in _cache_dir()), so
    that a later batch over the same suite starts with what earlier ones
    learned; a file next to the socket, removed at the end, when the cache
    is not writable."""
    v = _ENV0.get("ZL_FG_LEARN", "")
    if v == "0":
        return "", False
    if v and os.path.isabs(v):
        return v, True
    import hashlib
    # Not the server's working folder (first on sys.path under -m), which
    # differs between batches that see the same modules; the vendor, which
    # selects flag_gems' backend modules.
    paths = [p for p in sys.path if p and os.path.abspath(p) != _START_CWD]
    key = hashlib.sha256(json.dumps([sys.executable, paths, list(spare_names),
                                     _ENV0.get("GEMS_VENDOR", "")]).encode()).hexdigest()[:16]
    d = os.path.join(_cache_dir(), "forkserver")
    try:
        os.makedirs(d, exist_ok=True)
        f = os.path.join(d, f"{key}.modules")
        os.close(os.open(f, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600))
        return f, True
    except OSError:
        tmp = f"{path}.modules"
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        return tmp, False


def serve(path, parent, spare_names=()):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    srv.bind(tmp)
    srv.listen(16)
    os.replace(tmp, path)       # the socket appears only once it accepts
    ino = os.stat(path).st_ino
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGINT, _on_term)
    conns = {}          # socket -> pid (0 until forked)
    done_of = {}        # client's socket -> read end of its child's done pipe
    draining = {}       # pid of a child that said done -> when
    served = from_spare = early = 0
    spares, spare_failures = [], 0      # the oldest first
    mismatch_said = set()
    import_env = _import_env(_ENV0)
    quiet_path = f"{path}.quiet"
    early_done = _ENV0.get("ZL_FG_EARLY_DONE", "1") != "0"
    learn_path, learn_kept = _learn_file(path, spare_names)
    learn_file = learn_path     # learn_path is "" once learning is off
    n_spares = _spare_count()
    if spare_names:
        _log(f"{n_spares} spare(s) import {', '.join(spare_names)} ahead of each child"
             + (f", then what earlier children imported ({learn_path})" if learn_path else ""))

    def refill(extra=()):
        # Each spare closes the server's sockets and the other spares':
        # a spare must see its own socket's end when the server goes.
        while spare_names and spare_failures < SPARE_FAILURES_MAX and len(spares) < n_spares:
            spares.append(_Spare(spare_names, [srv] + list(conns) + list(extra)
                                 + [sp.sock for sp in spares] + list(done_of.values()),
                                 learn_path))

    def end_conn(conn, status):
        try:
            send_msg(conn, {"status": status})
        except OSError:
            pass
        conn.close()
        del conns[conn]
        r = done_of.pop(conn, None)
        if r is not None:
            os.close(r)
    refill()
    _log(f"serving on {path}")
    while not _stop:
        for sp in list(spares):
            st = sp.status()
            if st is not None:
                after_ready = sp.ready()
                sp.sock.close()
                spares.remove(sp)
                if after_ready and learn_path:
                    # It died in its learned imports: those are suspect, not
                    # the spares. Off for this server, and the list cleared
                    # for the next batches (it is learned again).
                    _log(f"spare {sp.pid} ended in its learned imports (status {st}): "
                         f"learned imports off, {learn_path} cleared")
                    try:
                        with open(learn_path, "w", encoding="ascii"):
                            pass
                    except OSError:
                        pass
                    learn_path = ""
                else:
                    spare_failures += 1
                    _log(f"spare {sp.pid} ended before its request (status {st}); "
                         + ("starting another" if spare_failures < SPARE_FAILURES_MAX
                            else "spares off"))
                refill()
        if parent and os.getppid() != parent:
            _log("the batch is gone: stopping")
            break
        try:
            if os.stat(path).st_ino != ino:
                raise FileNotFoundError
        except FileNotFoundError:
            _log("the socket was removed: stopping")
            break
        try:
            # A child's end is seen by polling: every 50 ms (at 0.2 s, a
            # short operator's 3 s lost 0.1 s on average to the wait).
            ready, _, _ = select.select([srv] + list(conns) + list(done_of.values()), [], [],
                                        0.05)
        except InterruptedError:
            continue
        for s in ready:
            if isinstance(s, int):
                # A child says done (its exit status) right before its
                # _exit: its client ends now, the process is reaped later.
                conn = next((c for c, r in done_of.items() if r == s), None)
                if conn is None:
                    continue    # no longer a child's (defensive)
                try:
                    data = os.read(s, 2)
                except OSError:
                    data = b""
                if len(data) == 2 and data[:1] == b"D" and conns[conn]:
                    draining[conns[conn]] = time.monotonic()
                    early += 1
                    end_conn(conn, data[1] << 8)
                else:   # ended without a word: its exit says the rest
                    os.close(done_of.pop(conn))
            elif s is srv:
                conn, _ = srv.accept()
                conn.settimeout(10)
                try:
                    req, fds = recv_msg(conn, 3)
                    try:
                        mod, args, env, cwd = _check_request(req, fds)
                    except ValueError as e:
                        for fd in fds:
                            os.close(fd)
                        send_msg(conn, {"refused": str(e)})
                        conn.close()
                        continue
                except (OSError, EOFError, ValueError) as e:
                    _log(f"a malformed request: {e}")
                    conn.close()
                    continue
                pid = 0
                env["ZL_FG_REQUEST_AT"] = f"{time.time():.3f}"
                env["ZL_FG_QUIET_LOCK"] = quiet_path
                env.pop("ZL_FG_QUIET_HELD", None)   # this child's plugin says so, or none
                if learn_path:
                    env["ZL_FG_LEARN"] = learn_path
                done_r = done_w = None
                if early_done:
                    done_r, done_w = os.pipe()
                if spares:
                    theirs = _import_env(env)
                    diff = sorted(k for k in set(import_env) | set(theirs)
                                  if import_env.get(k) != theirs.get(k))
                    spare = None
                    if diff:
                        said = ",".join(diff[:8])
                        if said not in mismatch_said and len(mismatch_said) < 16:
                            mismatch_said.add(said)
                            _log(f"a fresh fork, not the spare: the request's environment "
                                 f"differs in {said}")
                    else:
                        spare = _first_ready(spares)
                    if spare is not None:
                        env["ZL_FG_SPARE_USED"] = "1"
                        if spare.hand(req, fds + ([done_w] if done_w is not None else [])):
                            pid = spare.pid
                            from_spare += 1
                        else:
                            del env["ZL_FG_SPARE_USED"]
                            spare.kill()
                        spares.remove(spare)
                if not pid:
                    pid = _fork()
                    if pid == 0:
                        if done_r is not None:
                            os.close(done_r)
                        _run_child(mod, args, env, cwd, fds, [srv, conn] + list(conns)
                                   + [sp.sock for sp in spares] + list(done_of.values()),
                                   done_fd=done_w)
                for fd in fds:
                    os.close(fd)
                if done_w is not None:
                    os.close(done_w)
                    done_of[conn] = done_r
                # After the request's descriptors are closed here: a spare
                # must not hold the client's streams open.
                refill([conn])
                served += 1
                try:
                    send_msg(conn, {"pid": pid})
                except OSError:
                    pass
                conn.settimeout(None)
                conns[conn] = pid
            else:
                # A client says nothing after its request: readable means
                # it went away (killed). Its process goes with it.
                try:
                    gone = not s.recv(1)
                except OSError:
                    gone = True
                if gone and conns[s]:
                    _killpg(conns[s])
        for conn, pid in list(conns.items()):
            status = _reaped(pid) if pid else None
            if status is not None:
                end_conn(conn, status)
        for pid, since in list(draining.items()):
            if _reaped(pid) is not None:
                del draining[pid]
            elif time.monotonic() - since > DRAIN_KILL_S:
                _log(f"child {pid} said done {DRAIN_KILL_S:.0f} s ago and has not ended: "
                     f"killing it")
                _killpg(pid)
                draining[pid] = float("inf")   # said once; reaped next time round
    for sp in spares:
        sp.kill()
    for conn, pid in list(conns.items()) + [(None, p) for p in draining]:
        _killpg(pid)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        if conn is not None:
            conn.close()
    for r in done_of.values():
        os.close(r)
    try:
        if os.stat(path).st_ino == ino:
            os.unlink(path)
    except FileNotFoundError:
        pass
    for side in (quiet_path, "" if learn_kept else learn_file):
        try:
            if side:
                os.unlink(side)
        except FileNotFoundError:
            pass
    _log(f"served {served} children ({from_spare} by a spare, {early} said done before "
         f"their end)")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m zlbench.forkserver",
                                 description="Fork server for zlbench's Python children.")
    ap.add_argument("--socket", required=True, help="path of the UNIX socket to serve on")
    ap.add_argument("--preload", default=os.environ.get("ZL_FG_PRELOAD", DEFAULT_PRELOAD),
                    help=f"modules to import first, comma-separated (default {DEFAULT_PRELOAD})")
    ap.add_argument("--parent", type=int, default=0,
                    help="stop when this process (the batch) is no longer the parent")
    ap.add_argument("--spare", default=DEFAULT_SPARE,
                    help="modules a spare imports ahead of each child, comma-separated "
                         f"(default {DEFAULT_SPARE}, and those the preload could not keep; "
                         "ZL_FG_SPARE=0: no spares)")
    a = ap.parse_args(argv)
    if len(a.socket.encode()) >= 104:
        ap.error(f"--socket {a.socket!r}: a UNIX socket path must be under 104 bytes")
    names = [n.strip() for n in a.preload.split(",") if n.strip()]
    t0 = time.monotonic()
    kept = preload(names)
    spare = [n.strip() for n in a.spare.split(",") if n.strip()]
    if kept is not None:
        # Start over in a fresh interpreter with what was safe; a spare
        # imports the rest ahead of each child.
        sys.stdout.flush()
        sys.stderr.flush()
        # Its environment is the one this process started with: what the
        # dropped modules set at import is not the children's.
        os.execve(sys.executable, [sys.executable, "-m", "zlbench.forkserver", "--socket", a.socket,
                                   "--preload", ",".join(kept) or ",",
                                   "--parent", str(a.parent),
                                   "--spare", ",".join(dict.fromkeys(spare + names[len(kept):]))
                                   or ","], _ENV0)
    _log(f"preloaded {', '.join(names) or 'nothing'} in {time.monotonic() - t0:.1f} s")
    if os.environ.get("ZL_FG_SPARE", "1") == "0":
        spare = []
    serve(a.socket, a.parent, tuple(spare))
    return 0


if __name__ == "__main__":
    sys.exit(main())
