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
import json
import os
import select
import signal
import socket
import struct
import sys
import time
import traceback

MAX_REQUEST = 4 << 20      # bytes of one request (arguments and environment)
MAX_ARGS = 4096
DEFAULT_PRELOAD = "torch,triton,pytest,flag_gems"


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
    """(object, descriptors); EOFError when the peer closed first."""
    fds = []
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
    return json.loads(recv_exact(sock, n).decode()), fds


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
        try:
            __import__(name)
        except ModuleNotFoundError as e:
            if e.name == name:      # not installed: the children will say so
                _log(f"preload {name}: not installed")
                continue
            raise
        if _cuda_initialised():
            _log(f"preload {name}: initialised the GPU runtime at import; "
                 f"starting over without it and what follows")
            return done
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


def _run_child(mod, args, env, cwd, fds, close):
    """In the forked process: become `python -m mod args` and never return."""
    rc = 1
    try:
        os.setsid()
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
            signal.signal(s, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for f in close:
            f.close()
        # Above the standard three first, so that no dup2 below overwrites
        # a descriptor still to be placed.
        import fcntl
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
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(rc & 0xFF)


_START_CWD = os.getcwd()
_stop = False


def _on_term(signum, frame):
    global _stop
    _stop = True


def serve(path, parent):
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
    served = 0
    _log(f"serving on {path}")
    while not _stop:
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
            ready, _, _ = select.select([srv] + list(conns), [], [], 0.2)
        except InterruptedError:
            continue
        for s in ready:
            if s is srv:
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
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _run_child(mod, args, env, cwd, fds, [srv, conn] + list(conns))
                for fd in fds:
                    os.close(fd)
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
                    try:
                        os.killpg(conns[s], signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        for conn, pid in list(conns.items()):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 1 << 8
            if done:
                # The forked process's group dies with it, as a plain
                # child's does when the batch reaps it.
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    send_msg(conn, {"status": status})
                except OSError:
                    pass
                conn.close()
                del conns[conn]
    for conn, pid in conns.items():
        try:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        conn.close()
    try:
        if os.stat(path).st_ino == ino:
            os.unlink(path)
    except FileNotFoundError:
        pass
    _log(f"served {served} children")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m zlbench.forkserver",
                                 description="Fork server for zlbench's Python children.")
    ap.add_argument("--socket", required=True, help="path of the UNIX socket to serve on")
    ap.add_argument("--preload", default=os.environ.get("ZL_FG_PRELOAD", DEFAULT_PRELOAD),
                    help=f"modules to import first, comma-separated (default {DEFAULT_PRELOAD})")
    ap.add_argument("--parent", type=int, default=0,
                    help="stop when this process (the batch) is no longer the parent")
    a = ap.parse_args(argv)
    if len(a.socket.encode()) >= 104:
        ap.error(f"--socket {a.socket!r}: a UNIX socket path must be under 104 bytes")
    names = [n.strip() for n in a.preload.split(",") if n.strip()]
    t0 = time.monotonic()
    kept = preload(names)
    if kept is not None:
        # Start over in a fresh interpreter with what was safe.
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, "-m", "zlbench.forkserver", "--socket", a.socket,
                                  "--preload", ",".join(kept) or ",",
                                  "--parent", str(a.parent)])
    _log(f"preloaded {', '.join(names) or 'nothing'} in {time.monotonic() - t0:.1f} s")
    serve(a.socket, a.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
