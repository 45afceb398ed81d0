"""Run ``python -m MODULE ARGS`` through zlbench's fork server
(``python -m zlbench.forkrun -m MODULE ARGS``).

With ``ZL_FG_SERVER`` naming a server's socket (``ZL_FG_SERVER_PID`` its
process), the module runs in a process the server forks from its preloaded
interpreter, with this process's arguments, environment, working folder and
standard streams; this process forwards the signals it gets to it and ends
as it ended (the same exit status, or death by the same signal). Without a
server, or when the server is gone or refuses, it runs the module itself
(``exec``): the result is the same, only slower to start.
"""
import os
import signal
import socket
import sys
import time

from .forkserver import FORWARDED_SIGNALS as _FORWARDED, recv_msg, send_msg


def _fallback(module, args, why):
    if why:
        sys.stderr.write(f"zlbench.forkrun: {why}; running {module} directly\n")
        sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", module] + args)


def _alive(pid):
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (the batch has not reaped it yet) is gone too.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def _connect(path, server_pid, wait_s):
    """A connection, or None when the server is gone or never came."""
    deadline = time.monotonic() + wait_s
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
        if not _alive(server_pid) or time.monotonic() > deadline:
            return None
        time.sleep(0.05)


def _end_like(status):
    """Exit as a process with this wait status did."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)     # a signal whose default is not to die
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0] != "-m" or not argv[1]:
        sys.stderr.write("usage: python -m zlbench.forkrun -m MODULE [ARGS...]\n")
        return 2
    module, args = argv[1], argv[2:]
    path = os.environ.get("ZL_FG_SERVER", "")
    if not path:
        _fallback(module, args, "")
    try:
        server_pid = int(os.environ.get("ZL_FG_SERVER_PID", "0"))
        wait_s = float(os.environ.get("ZL_FG_SERVER_WAIT", "300"))
    except ValueError:
        _fallback(module, args, "ZL_FG_SERVER_PID or ZL_FG_SERVER_WAIT is not a number")
    child = [0]
    sig_before = []

    def forward(signum, frame):
        if child[0]:
            try:
                os.killpg(child[0], signum)
            except ProcessLookupError:
                pass
        else:
            # Nothing forked yet (or not known to be): end now; the server
            # kills what it forks for a client that went away.
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    for s in _FORWARDED:
        sig_before.append(signal.signal(s, forward))
    conn = _connect(path, server_pid, wait_s)
    if conn is None:
        for s, h in zip(_FORWARDED, sig_before):
            signal.signal(s, h)
        _fallback(module, args, f"no fork server at {path}")
    try:
        send_msg(conn, {"module": module, "args": args, "env": dict(os.environ),
                        "cwd": os.getcwd()}, [0, 1, 2])
        reply, _ = recv_msg(conn)
    except (OSError, EOFError, ValueError) as e:
        conn.close()
        _fallback(module, args, f"the fork server did not answer ({e})")
    if "refused" in reply:
        conn.close()
        _fallback(module, args, f"the fork server refused: {reply['refused']}")
    child[0] = int(reply["pid"])
    try:
        reply, _ = recv_msg(conn)
        status = int(reply["status"])
    except (OSError, EOFError, ValueError, KeyError, TypeError) as e:
        # The server died: what it forked must not outlive this process.
        try:
            os.killpg(child[0], signal.SIGKILL)
        except ProcessLookupError:
            pass
        sys.stderr.write(f"zlbench.forkrun: the fork server went away ({e})\n")
        return 1
    _end_like(status)
    return 1


if __name__ == "__main__":
    sys.exit(main())
