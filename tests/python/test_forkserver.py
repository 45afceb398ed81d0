"""zlbench.forkserver and zlbench.forkrun: a forked child is the client's
process in all that a batch can see (arguments, environment, working folder,
streams, exit status or signal), signals reach it, it dies with its client,
and a client without a usable server runs the module itself. Every fixture
test runs twice: children forked on request, and children taken from a
spare that imported a slow module ahead of the request."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from zlbench import forkserver

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "python")

PROBE = '''
import gc, json, os, signal, sys, time
STARTED = time.time()
FROZEN = gc.get_freeze_count()
a = sys.argv[1:]
slow = sys.modules.get("zlb_slow")
learned = sys.modules.get("zlb_learn_me")
print(json.dumps({"argv": a, "cwd": os.getcwd(), "foo": os.environ.get("ZL_TEST_FOO"),
                  "own_group": os.getpgid(0) == os.getpid(), "pid": os.getpid(),
                  "spare": os.environ.get("ZL_FG_SPARE_USED"),
                  "request_at": float(os.environ.get("ZL_FG_REQUEST_AT", "0")),
                  "slow_at": slow.IMPORTED_AT if slow else None,
                  "learned_at": learned.IMPORTED_AT if learned else None,
                  "started": STARTED, "frozen": FROZEN,
                  "set_by_import": os.environ.get("ZLB_SET_BY_IMPORT")}), flush=True)
sys.stderr.write("probe stderr\\n")
def hold_quiet():
    # What the pytest plugin does before its first test: wait for the
    # device's quiet lock, hold it to the end, and say so.
    import fcntl
    fd = os.open(os.environ["ZL_FG_QUIET_LOCK"], os.O_RDWR | os.O_CREAT)
    t = time.monotonic()
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.environ["ZL_FG_QUIET_HELD"] = "1"
    return time.monotonic() - t
if a[:1] == ["quiet"]:
    print(json.dumps({"quiet_wait_s": hold_quiet()}), flush=True)
    sys.exit(int(a[1]))
if a[:1] == ["forkexit"]:
    # Holds the lock, as "quiet"; a process it forks ends through the
    # module's own end (sys.exit), as a test's fork might: only this
    # process may say done.
    hold_quiet()
    if os.fork() == 0:
        sys.exit(42)
    time.sleep(1.5)
    sys.exit(3)
if a[:1] == ["learn"]:
    import zlb_learn_me, zlb_local
    sys.exit(0)
if a[:1] == ["die"]:
    # (SIGUSR1, not SIGSEGV: a sanitiser runtime turns SIGSEGV into exit 1.)
    os.kill(os.getpid(), signal.SIGUSR1)
if a[:1] == ["sleep"]:
    open(a[1], "w").write(str(os.getpid()))
    time.sleep(60)
sys.exit(int(a[0]) if a and a[0].isdigit() else 0)
'''


SLOW = ("import os, time\ntime.sleep(0.5)\nIMPORTED_AT = time.time()\n"
        "os.environ['ZLB_SET_BY_IMPORT'] = 'spare'\n")
# A preloaded module that changes the environment at import (flag_gems sets
# FLAGGEMS_SOURCE_DIR): the server's environment for the spare's rule is
# still the one it started with.
SETS_ENV = "import os\nos.environ['ZLB_SET_AT_IMPORT'] = '1'\n"


def wait_for(path, text, n=1, timeout=30):
    """Until `text` occurs n times in the file at `path`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count(text) >= n:
            return
        time.sleep(0.05)
    pytest.fail(f"no {n} x {text!r} in {path}: {path.read_text() if path.exists() else ''}")


def start_server(tmp_path, spare, env_extra=None):
    (tmp_path / "mods").mkdir(exist_ok=True)
    (tmp_path / "mods" / "zlb_probe.py").write_text(PROBE)
    (tmp_path / "mods" / "zlb_slow.py").write_text(SLOW)
    (tmp_path / "mods" / "zlb_sets_env.py").write_text(SETS_ENV)
    # Installed but broken (hypothesis with a missing dependency): the
    # server says so and goes on.
    (tmp_path / "mods" / "zlb_broken.py").write_text("import zlb_missing_dependency\n")
    sock = str(tmp_path / "s.sock")
    env = dict(os.environ, PYTHONPATH=f"{PKG}:{tmp_path / 'mods'}",
               XDG_CACHE_HOME=str(tmp_path / "cache"), **(env_extra or {}))
    for k in ("ZL_FG_SPARE", "ZL_FG_SPARES", "ZL_FG_LEARN", "ZL_FG_EARLY_DONE",
              "ZL_FG_LEARN_WAIT", "ZL_CACHE_DIR"):
        if k not in (env_extra or {}):
            env.pop(k, None)
    log = open(tmp_path / "server.log", "w")
    p = subprocess.Popen([sys.executable, "-m", "zlbench.forkserver", "--socket", sock,
                          "--preload", "json,zlb_broken,zlb_sets_env,zlb_no_such_module"]
                         + ["--spare", "zlb_slow" if spare else ""], env=env, stderr=log)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    assert os.path.exists(sock), (tmp_path / "server.log").read_text()
    if spare:
        wait_for(tmp_path / "server.log", "spare: ready")
    env.update(ZL_FG_SERVER=sock, ZL_FG_SERVER_PID=str(p.pid))
    return p, env, log


@pytest.fixture(params=[False, True], ids=["fork", "spare"])
def server(tmp_path, request):
    p, env, log = start_server(tmp_path, request.param)
    yield p, env, tmp_path
    p.terminate()
    p.wait(10)
    log.close()
    text = (tmp_path / "server.log").read_text()
    assert "preload zlb_broken: failed (No module named 'zlb_missing_dependency')" in text, text
    assert "preload zlb_sets_env:" in text, text     # the preloads after it went on
    if request.param:   # the first request, at least, came when a spare was ready
        m = re.search(r"served (\d+) children \((\d+) by a spare", text)
        assert m and int(m.group(2)) >= 1, text


def run(env, *args, cwd, **kw):
    return subprocess.run([sys.executable, "-m", "zlbench.forkrun", "-m", "zlb_probe", *args],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=60, **kw)


def test_child_is_the_clients_process(server):
    p, env, tmp = server
    (tmp / "wd").mkdir()
    r = run(dict(env, ZL_TEST_FOO="bar"), "7", "x y", cwd=tmp / "wd")
    assert r.returncode == 7, r.stderr
    out = json.loads(r.stdout)
    assert out["argv"] == ["7", "x y"] and out["cwd"] == str(tmp / "wd")
    assert out["foo"] == "bar" and out["own_group"]
    assert 0 < out["request_at"] <= time.time()
    if "zlb_slow" in p.args:    # imported ahead of the request, by the spare
        assert out["spare"] == "1" and 0 < out["slow_at"] < out["request_at"]
        # What the import set in the environment, the child has, as one
        # that imported it itself would.
        assert out["set_by_import"] == "spare"
    else:
        assert out["spare"] is None and out["slow_at"] is None
        assert out["set_by_import"] is None
    assert out["pid"] != p.pid and "probe stderr" in r.stderr
    # Forked with the server's heap frozen (its preloads, the standard
    # library): the child's collections skip it.
    assert out["frozen"] > 1000, out
    assert "directly" not in r.stderr          # served, not run by the client itself
    r = run(env, "die", cwd=tmp)
    assert r.returncode == -signal.SIGUSR1


def test_signals_forwarded_and_child_dies_with_client(server):
    p, env, tmp = server
    for sig, how in ((signal.SIGTERM, -signal.SIGTERM), (signal.SIGKILL, -signal.SIGKILL)):
        pidf = tmp / f"pid{sig}"
        c = subprocess.Popen([sys.executable, "-m", "zlbench.forkrun", "-m", "zlb_probe", "sleep",
                              str(pidf)], env=env, cwd=tmp, stdout=subprocess.DEVNULL)
        for _ in range(200):
            if pidf.exists() and pidf.read_text():
                break
            time.sleep(0.05)
        child = int(pidf.read_text())
        c.send_signal(sig)
        assert c.wait(10) == how
        for _ in range(100):
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"the forked child {child} outlived its client ({sig})")


def test_malformed_request_refused(server):
    p, env, tmp = server
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(env["ZL_FG_SERVER"])
    forkserver.send_msg(s, {"module": "zlb_probe", "args": [], "env": {}, "cwd": "/"}, [1])
    reply, _ = forkserver.recv_msg(s)
    assert "descriptors" in reply["refused"]
    s.close()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(env["ZL_FG_SERVER"])
    forkserver.send_msg(s, {"module": "zlb_probe", "args": [1], "env": {}, "cwd": "/"}, [0, 1, 2])
    reply, _ = forkserver.recv_msg(s)
    assert "args" in reply["refused"]
    s.close()
    assert p.poll() is None          # still serving
    assert run(env, "3", cwd=tmp).returncode == 3


def test_no_server_runs_module_itself(tmp_path):
    (tmp_path / "zlb_probe.py").write_text(PROBE)
    env = dict(os.environ, PYTHONPATH=f"{PKG}:{tmp_path}", ZL_FG_SERVER=str(tmp_path / "none"),
               ZL_FG_SERVER_PID="2147483646")
    r = run(env, "4", cwd=tmp_path)
    assert r.returncode == 4 and "running zlb_probe directly" in r.stderr
    assert json.loads(r.stdout)["argv"] == ["4"]


def test_spare_only_for_the_servers_environment(tmp_path):
    """A request whose environment differs from the server's in a variable
    read at import gets a fresh fork; zlbench's own ZL_* do not count; the
    spare taken is replaced; ZL_FG_SPARE=0 turns spares off."""
    p, env, log = start_server(tmp_path, True)
    try:
        r = run(dict(env, ZLB_OTHER="1"), "0", cwd=tmp_path)
        out = json.loads(r.stdout)
        assert r.returncode == 0 and out["spare"] is None and out["slow_at"] is None
        assert "differs in ZLB_OTHER" in (tmp_path / "server.log").read_text()
        for i in range(2):
            wait_for(tmp_path / "server.log", "spare: ready", i + 1)
            r = run(dict(env, ZL_ANYTHING=str(i)), "0", cwd=tmp_path)
            out = json.loads(r.stdout)
            assert r.returncode == 0 and out["spare"] == "1" and out["slow_at"], r.stderr
        wait_for(tmp_path / "server.log", "spare: ready", 3)    # the third spare
    finally:
        p.terminate()
        p.wait(10)
        log.close()
    assert "served 3 children (2 by a spare," in (tmp_path / "server.log").read_text()

    off = tmp_path / "off"
    off.mkdir()
    p, env, log = start_server(off, False, {"ZL_FG_SPARE": "0"})
    try:
        out = json.loads(run(env, "0", cwd=off).stdout)
        assert out["spare"] is None
    finally:
        p.terminate()
        p.wait(10)
        log.close()


def test_spare_that_dies_is_replaced_then_turned_off(tmp_path):
    """A spare that ends before its request is replaced; after two, spares
    are off and requests still get fresh forks (one spare at a time here:
    with two, both first spares die together)."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "zlb_exits.py").write_text("import os\nos._exit(9)\n")
    (tmp_path / "mods" / "zlb_probe.py").write_text(PROBE)
    sock = str(tmp_path / "s.sock")
    env = dict(os.environ, PYTHONPATH=f"{PKG}:{tmp_path / 'mods'}", ZL_FG_SPARES="1",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("ZL_FG_SPARE", None)
    env.pop("ZL_CACHE_DIR", None)
    with open(tmp_path / "server.log", "w") as log:
        p = subprocess.Popen([sys.executable, "-m", "zlbench.forkserver", "--socket", sock,
                              "--preload", "json", "--spare", "zlb_exits"], env=env, stderr=log)
        try:
            wait_for(tmp_path / "server.log", "spares off")
            env.update(ZL_FG_SERVER=sock, ZL_FG_SERVER_PID=str(p.pid))
            r = run(env, "6", cwd=tmp_path)
            assert r.returncode == 6 and json.loads(r.stdout)["spare"] is None
        finally:
            p.terminate()
            p.wait(10)
    text = (tmp_path / "server.log").read_text()
    assert text.count("ended before its request (status 2304)") == 2, text


def test_spare_still_importing_gets_no_request(tmp_path):
    """A request that comes while the spare imports waits for it, and is
    never handed to it before its imports are done: a spare that dies at
    the end of its import costs the operator nothing (a fresh fork), and
    the spare after it serves the next request."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "zlb_probe.py").write_text(PROBE)
    (tmp_path / "mods" / "zlb_dies_late.py").write_text(
        "import os, time\nif not os.path.exists(os.environ['ZLB_ONCE']):\n"
        "    open(os.environ['ZLB_ONCE'], 'w').close()\n    time.sleep(1.5)\n    os._exit(9)\n")
    # One spare: the first dies late, the one after it serves.
    p, env = _spare_server(tmp_path, "zlb_dies_late",
                           {"ZLB_ONCE": str(tmp_path / "once"), "ZL_FG_SPARES": "1"})
    try:
        r = run(env, "6", cwd=tmp_path)     # the first spare is still importing
        assert r.returncode == 6 and json.loads(r.stdout)["spare"] is None, r.stderr
        wait_for(tmp_path / "server.log", "spare: ready")   # the second spare
        r = run(env, "7", cwd=tmp_path)
        assert r.returncode == 7 and json.loads(r.stdout)["spare"] == "1", r.stderr
    finally:
        p.terminate()
        p.wait(10)
    text = (tmp_path / "server.log").read_text()
    assert "ended before its request (status 2304)" in text, text


def _spare_server(tmp_path, spare, env_extra=None, wait_s=None, patch=None):
    """A server (preload json) whose spares import `spare`, a module in
    tmp_path/mods (None: no spares); the module's constants in `patch`
    set first, SPARE_WAIT_S to wait_s when given. (process, the client's
    environment)."""
    sock = str(tmp_path / "s.sock")
    env = dict(os.environ, PYTHONPATH=f"{PKG}:{tmp_path / 'mods'}",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("ZL_FG_SPARE", None)
    env.pop("ZL_CACHE_DIR", None)
    env.update(env_extra or {})
    patch = dict(patch or {}, **({"SPARE_WAIT_S": wait_s} if wait_s is not None else {}))
    code = ("import sys, zlbench.forkserver as f\n"
            + "".join(f"f.{k} = {v!r}\n" for k, v in patch.items())
            + "sys.exit(f.main())\n")
    with open(tmp_path / "server.log", "w") as log:
        p = subprocess.Popen([sys.executable, "-c", code, "--socket", sock, "--preload", "json"]
                             + (["--spare", spare] if spare else []), env=env, stderr=log)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    env.update(ZL_FG_SERVER=sock, ZL_FG_SERVER_PID=str(p.pid))
    return p, env


def _slow_spare_server(tmp_path, import_s, wait_s=None):
    """A server whose spares import for import_s seconds; SPARE_WAIT_S
    patched to wait_s when given."""
    (tmp_path / "mods").mkdir(parents=True)
    (tmp_path / "mods" / "zlb_probe.py").write_text(PROBE)
    (tmp_path / "mods" / "zlb_slow_spare.py").write_text(f"import time\ntime.sleep({import_s})\n")
    return _spare_server(tmp_path, "zlb_slow_spare", wait_s=wait_s)


def test_request_waits_for_an_importing_spare(tmp_path):
    """A request that comes while the spare is still importing is served
    by that spare once it is ready, not by a fresh fork that would import
    everything again; a spare older than SPARE_WAIT_S is not waited for."""
    p, env = _slow_spare_server(tmp_path / "a", 1.0)
    try:
        t0 = time.monotonic()
        r = run(env, "6", cwd=tmp_path)       # right away: the spare is importing
        assert r.returncode == 6 and json.loads(r.stdout)["spare"] == "1", r.stderr
        assert time.monotonic() - t0 < 5.0
    finally:
        p.terminate()
        p.wait(10)
    # No wait at all (SPARE_WAIT_S = 0): the same request gets a fresh fork.
    p, env = _slow_spare_server(tmp_path / "b", 1.0, wait_s=0)
    try:
        r = run(env, "6", cwd=tmp_path)
        assert r.returncode == 6 and json.loads(r.stdout)["spare"] is None, r.stderr
    finally:
        p.terminate()
        p.wait(10)


def test_request_goes_to_the_first_ready_spare(tmp_path):
    """Spares started together finish their imports in any order: a request
    that comes while they import goes to the first one ready, not to the
    oldest when that one is still importing."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "zlb_probe.py").write_text(PROBE)
    # Of the first two spares, the oldest (the lower pid: forked first) is
    # slow; each says its pid in ZLB_SLOW/ and waits for the other's.
    (tmp_path / "mods" / "zlb_first_slow.py").write_text(
        "import os, time\n"
        "d = os.environ['ZLB_SLOW']\n"
        "open(os.path.join(d, str(os.getpid())), 'w').close()\n"
        "t = time.time() + 5\n"
        "while len(os.listdir(d)) < 2 and time.time() < t:\n"
        "    time.sleep(0.02)\n"
        "if os.getpid() == min(int(x) for x in os.listdir(d)):\n"
        "    time.sleep(4)\n")
    (tmp_path / "slow").mkdir()
    p, env = _spare_server(tmp_path, "zlb_first_slow",
                           {"ZL_FG_SPARES": "2", "ZLB_SLOW": str(tmp_path / "slow")})
    try:
        wait_for(tmp_path / "server.log", "spare: ready")       # the fast one
        t0 = time.monotonic()
        r = run(env, "6", cwd=tmp_path)
        took = time.monotonic() - t0
        assert r.returncode == 6 and json.loads(r.stdout)["spare"] == "1", r.stderr
    finally:
        p.terminate()
        p.wait(10)
    first_two = sorted(int(x) for x in os.listdir(tmp_path / "slow"))[:2]
    text = (tmp_path / "server.log").read_text()
    ready = [int(x) for x in re.findall(r"forkserver\[(\d+)\]: spare: ready", text)]
    # The one ready was the younger: the request did not wait for the older.
    assert ready and ready[0] == first_two[1], (first_two, text)
    assert took < 2.5, f"the request waited {took:.2f} s: for the oldest spare"


def test_bad_request_leaves_no_descriptor_behind(server):
    """A request refused while it is read (too large, nested too deeply)
    closes the descriptors that came with it: no later child or spare holds
    a client's streams open (the client's reader would never see EOF)."""
    import select
    import struct
    p, env, tmp = server
    for frame in (struct.pack("!I", forkserver.MAX_REQUEST + 1),
                  (lambda d: struct.pack("!I", len(d)) + d)(b"[" * 100000 + b"]" * 100000)):
        r, w = os.pipe()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(env["ZL_FG_SERVER"])
        socket.send_fds(s, [frame[:4]], [w, w, w])
        try:
            s.sendall(frame[4:])
        except (BrokenPipeError, ConnectionResetError):
            pass        # refused before the server read it all: as good
        os.close(w)
        ready, _, _ = select.select([r], [], [], 10)
        assert ready and os.read(r, 1) == b"", "the server kept the request's descriptors"
        os.close(r)
        s.close()
    assert p.poll() is None          # still serving
    assert run(env, "3", cwd=tmp).returncode == 3


def run_to_files(env, *args, cwd):
    """As run(), with the streams in files: the client's end is then its
    exit, not the end of every process holding its pipes (a batch reads
    its children's pipes without waiting for their end either)."""
    n = len(list(cwd.glob("out-*")))
    out, err = cwd / f"out-{n}", cwd / f"err-{n}"
    with open(out, "w") as o, open(err, "w") as e:
        c = subprocess.Popen([sys.executable, "-m", "zlbench.forkrun", "-m", "zlb_probe", *args],
                             env=env, cwd=cwd, stdout=o, stderr=e)
        rc = c.wait(60)
    return subprocess.CompletedProcess(c.args, rc, out.read_text(), err.read_text())


def test_early_done_only_with_the_quiet_lock(server):
    """A child holding its device's quiet lock says done before its end:
    the client ends with its exit status while the process is still ending
    (ZL_TEST_END_DELAY_S stands for a CUDA context's teardown), and the next
    child waits for the lock until that process is gone. Without the lock,
    the client ends with the process."""
    p, env, tmp = server
    trace = tmp / "end.jsonl"
    delayed = dict(env, ZL_TEST_END_DELAY_S="2", ZL_FG_END_TRACE=str(trace))
    t0 = time.monotonic()
    r = run_to_files(delayed, "quiet", "7", cwd=tmp)
    first = time.monotonic() - t0
    assert r.returncode == 7, r.stderr
    assert first < 1.8, f"the client waited {first:.2f} s: for the process's end"
    # The end trace (ZL_FG_END_TRACE): the request, the module's end and the
    # word, in that order, for the one child that said done.
    for _ in range(100):
        if trace.exists() and trace.read_text().endswith("\n"):
            break
        time.sleep(0.05)
    (end,) = [json.loads(x) for x in trace.read_text().splitlines()]
    assert end["request_at"] <= end["module_end"] <= end["learned"] <= end["said_done"], end
    assert end["said_done"] - end["request_at"] < first + 1.0, end
    r = run(env, "quiet", "0", cwd=tmp)
    waited = [json.loads(x) for x in r.stdout.splitlines()][-1]["quiet_wait_s"]
    assert r.returncode == 0 and waited > 0.5, (waited, r.stderr)
    assert first + waited > 1.5        # the tests started after the end, not before
    # No lock held: no early word, the client ends with the process.
    t0 = time.monotonic()
    r = run_to_files(delayed, "5", cwd=tmp)
    assert r.returncode == 5 and time.monotonic() - t0 >= 1.9
    p.terminate()
    p.wait(10)
    text = (tmp / "server.log").read_text()
    assert re.search(r"said done before their end", text) and \
        re.search(r"\b[12] said done before their end", text), text


def test_early_done_off(tmp_path):
    """ZL_FG_EARLY_DONE=0: the client ends with the process, lock or not."""
    p, env, log = start_server(tmp_path, False, {"ZL_FG_EARLY_DONE": "0"})
    try:
        t0 = time.monotonic()
        r = run_to_files(dict(env, ZL_TEST_END_DELAY_S="1.5"), "quiet", "4", cwd=tmp_path)
        assert r.returncode == 4 and time.monotonic() - t0 >= 1.4, r.stderr
    finally:
        p.terminate()
        p.wait(10)
        log.close()
    assert "0 said done before their end" in (tmp_path / "server.log").read_text()


def test_spares_import_what_children_imported(tmp_path):
    """A child's imports found on sys.path outside its working folder are
    learned (appended to the server's list); spares forked after that
    import them before their request. The child's own folder's modules,
    test modules and zlbench are not learned. ZL_FG_LEARN=0: nothing is;
    $ZL_CACHE_DIR moves the file."""
    for base in (tmp_path, tmp_path / "zc", tmp_path / "off"):
        (base / "mods").mkdir(parents=True)
        (base / "mods" / "zlb_learn_me.py").write_text(
            "import time\nIMPORTED_AT = time.time()\n")
    (tmp_path / "wd").mkdir()
    (tmp_path / "wd" / "zlb_local.py").write_text("X = 1\n")
    p, env, log = start_server(tmp_path, True)
    try:
        r = run(env, "learn", cwd=tmp_path / "wd")
        # Kept in the user's cache (XDG_CACHE_HOME), one file per
        # interpreter, module path and spare modules.
        files = list((tmp_path / "cache" / "zlbench" / "forkserver").glob("*.modules"))
        assert len(files) == 1, files
        learned = files[0]
        assert r.returncode == 0, r.stderr
        names = learned.read_text().split()
        assert "zlb_learn_me" in names and "zlb_local" not in names, names
        assert not any(n.startswith(("zlbench", "test_")) for n in names), names
        # The spares forked before the list had the name do not import it
        # (two are ready ahead); one forked after it does, before its request.
        # A spare imports learned modules only until its request comes, so
        # each request waits until a spare has imported it (under load a
        # request that comes as a spare gets ready stops it before the import).
        for _ in range(6):
            deadline = time.monotonic() + 30
            while not re.search(r"spare: [1-9][0-9]* learned modules",
                                (tmp_path / "server.log").read_text()):
                assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
                time.sleep(0.05)
            out = json.loads(run(env, "0", cwd=tmp_path / "wd").stdout)
            if out["learned_at"] is not None:
                break
        assert out["spare"] == "1" and out["learned_at"] is not None, out
        assert out["learned_at"] < out["started"]       # by the spare, before the module ran
        assert learned.read_text().split().count("zlb_learn_me") == 1
    finally:
        p.terminate()
        p.wait(10)
        log.close()
    assert "learned modules" in (tmp_path / "server.log").read_text()
    # The next server (the next batch) starts with what this one learned:
    # its first spares import the module before any request.
    p, env, log = start_server(tmp_path, True)
    try:
        out = json.loads(run(env, "0", cwd=tmp_path / "wd").stdout)
        assert out["spare"] == "1" and out["learned_at"] is not None
        assert out["learned_at"] < out["started"]
    finally:
        p.terminate()
        p.wait(10)
        log.close()
    assert learned.exists()
    # $ZL_CACHE_DIR, where set, is zlbench's cache folder instead.
    p, env, log = start_server(tmp_path / "zc", True, {"ZL_CACHE_DIR": str(tmp_path / "zc" / "c")})
    try:
        assert run(env, "learn", cwd=tmp_path / "wd").returncode == 0
        assert len(list((tmp_path / "zc" / "c" / "forkserver").glob("*.modules"))) == 1
        assert not (tmp_path / "zc" / "cache").exists()
    finally:
        p.terminate()
        p.wait(10)
        log.close()
    p, env, log = start_server(tmp_path / "off", True, {"ZL_FG_LEARN": "0"})
    try:
        assert run(env, "learn", cwd=tmp_path / "wd").returncode == 0
        assert not (tmp_path / "off" / "cache").exists()
        assert not (tmp_path / "off" / "s.sock.modules").exists()
    finally:
        p.terminate()
        p.wait(10)
        log.close()


def test_learnable_filters(tmp_path, monkeypatch):
    """Only modules importable by name from sys.path outside the working
    folder, with a file, not tests, conftest or zlbench."""
    import types
    site = tmp_path / "site"
    wd = tmp_path / "wd"
    site.mkdir()
    wd.mkdir()

    def mod(name, origin):
        m = types.ModuleType(name)
        m.__spec__ = types.SimpleNamespace(origin=origin)
        return m
    fake = {
        "zlbt_ok": mod("zlbt_ok", str(site / "zlbt_ok.py")),
        "zlbt_pkg.sub": mod("zlbt_pkg.sub", str(site / "zlbt_pkg" / "sub.py")),
        "zlbt_suite": mod("zlbt_suite", str(wd / "zlbt_suite.py")),
        "zlbt_elsewhere": mod("zlbt_elsewhere", "/nowhere/zlbt_elsewhere.py"),
        "zlbt_builtin": mod("zlbt_builtin", "built-in"),
        "test_zlbt": mod("test_zlbt", str(site / "test_zlbt.py")),
        "zlbt.conftest": mod("zlbt.conftest", str(site / "zlbt" / "conftest.py")),
        "zlbench.zlbt": mod("zlbench.zlbt", str(site / "zlbench" / "zlbt.py")),
        "zlbt bad": mod("zlbt bad", str(site / "x.py")),
    }
    monkeypatch.setattr(sys, "path", [str(wd), str(site)] + sys.path)
    for k, v in fake.items():
        monkeypatch.setitem(sys.modules, k, v)
    got = forkserver.learnable(set(sys.modules) - set(fake), str(wd))
    assert sorted(got) == ["zlbt_ok", "zlbt_pkg.sub"], got
    # The folders of the test files on the command line are the suite's:
    # FlagGems' benchmark/ is on sys.path (through its root) but not learned.
    (site / "zlbt_pkg").mkdir()
    (site / "zlbt_pkg" / "test_x.py").write_text("")
    dirs = forkserver.suite_dirs(["-q", "zlbt_pkg/test_x.py::t", "--rootdir", str(site),
                                  "-m", "x", "nofile.py"], str(site))
    assert dirs == [str(site / "zlbt_pkg")], dirs
    got = forkserver.learnable(set(sys.modules) - set(fake), str(wd), dirs)
    assert got == ["zlbt_ok"], got
    # Capped and deduplicated in the file; names that are not names dropped.
    f = tmp_path / "learned"
    f.write_text("zlbt_ok\nnot a name\n")
    assert forkserver.learn(str(f), ["zlbt_ok", "zlbt_pkg.sub"]) == 1
    assert forkserver._read_learned(str(f)) == ["zlbt_ok", "zlbt_pkg.sub"]


def test_learned_imports_stop_at_the_request(tmp_path):
    """A spare is ready once its own modules are in; it imports learned
    modules while it waits and stops at its request: the request waits for
    the import under way only, and what was not imported yet is not."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "zlb_slow_learned.py").write_text("import time\ntime.sleep(1.5)\n")
    (tmp_path / "mods" / "zlb_learn_me.py").write_text("import time\nIMPORTED_AT = time.time()\n")
    learned = tmp_path / "learned"
    learned.write_text("zlb_slow_learned\nzlb_learn_me\n")
    p, env, log = start_server(tmp_path, True, {"ZL_FG_LEARN": str(learned), "ZL_FG_SPARES": "1"})
    try:
        t0 = time.monotonic()
        out = json.loads(run(env, "0", cwd=tmp_path).stdout)
        took = time.monotonic() - t0
        assert out["spare"] == "1" and out["learned_at"] is None, out
        assert took < 3.0, f"the request waited {took:.2f} s"
    finally:
        p.terminate()
        p.wait(10)
        log.close()
    text = (tmp_path / "server.log").read_text()
    assert "stopped by its request" in text, text
    assert learned.exists()     # a file named by ZL_FG_LEARN stays


def test_learned_imports_finish_first_when_asked(tmp_path):
    """ZL_FG_LEARN_WAIT=1: the spare imports every learned module before it
    takes its request, which waits for them."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "zlb_slow_learned.py").write_text("import time\ntime.sleep(1.5)\n")
    (tmp_path / "mods" / "zlb_learn_me.py").write_text("import time\nIMPORTED_AT = time.time()\n")
    learned = tmp_path / "learned"
    learned.write_text("zlb_slow_learned\nzlb_learn_me\n")
    p, env, log = start_server(tmp_path, True, {"ZL_FG_LEARN": str(learned), "ZL_FG_SPARES": "1",
                                                 "ZL_FG_LEARN_WAIT": "1"})
    try:
        out = json.loads(run(env, "0", cwd=tmp_path).stdout)
        assert out["spare"] == "1" and out["learned_at"] is not None, out
    finally:
        p.terminate()
        p.wait(10)
        log.close()
    text = (tmp_path / "server.log").read_text()
    assert "2 learned modules" in text and "stopped by its request" not in text, text


def test_a_waiting_spare_stops_when_the_server_is_gone(tmp_path):
    """ZL_FG_LEARN_WAIT=1: a request does not stop the learned imports, but
    the server's end does (a server killed outright cannot kill its
    spares): the spare does not import on for seconds with no one to
    serve."""
    (tmp_path / "mods").mkdir()
    for i in range(4):
        (tmp_path / "mods" / f"zlb_slow_learned{i}.py").write_text("import time\ntime.sleep(1.0)\n")
    learned = tmp_path / "learned"
    learned.write_text("".join(f"zlb_slow_learned{i}\n" for i in range(4)))
    p, env, log = start_server(tmp_path, True, {"ZL_FG_LEARN": str(learned), "ZL_FG_SPARES": "1",
                                                 "ZL_FG_LEARN_WAIT": "1"})
    try:
        text = (tmp_path / "server.log").read_text()
        pid = int(re.search(r"\[(\d+)\]: spare: ready", text).group(1))
        os.kill(p.pid, signal.SIGKILL)
        p.wait(10)
        t0 = time.monotonic()
        while _alive_pid(pid) and time.monotonic() - t0 < 10:
            time.sleep(0.05)
        took = time.monotonic() - t0
        # The import under way ends (1 s at most), then the spare sees the
        # closed socket; all four would take 4 s.
        assert not _alive_pid(pid) and took < 2.5, f"the spare lived {took:.2f} s on"
    finally:
        if p.poll() is None:
            p.kill()
        log.close()


def test_only_the_forked_process_says_done(server):
    """A process the child's module forks and that ends through the
    module's end says nothing: the client ends with the child, with its
    status."""
    p, env, tmp = server
    t0 = time.monotonic()
    r = run_to_files(env, "forkexit", cwd=tmp)
    assert r.returncode == 3, r.stderr
    assert time.monotonic() - t0 >= 1.4


def test_a_spare_killed_by_a_learned_import(tmp_path):
    """A spare that dies in its learned imports (after it said ready) turns
    learned imports off and clears the list; spares are not turned off."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "zlb_kills_spare.py").write_text("import os\nos._exit(9)\n")
    learned = tmp_path / "learned"
    learned.write_text("zlb_kills_spare\n")
    p, env, log = start_server(tmp_path, True, {"ZL_FG_LEARN": str(learned), "ZL_FG_SPARES": "1"})
    try:
        wait_for(tmp_path / "server.log", "learned imports off")
        wait_for(tmp_path / "server.log", "spare: ready", 2)
        r = run(env, "5", cwd=tmp_path)
        assert r.returncode == 5 and json.loads(r.stdout)["spare"] == "1", r.stderr
    finally:
        p.terminate()
        p.wait(10)
        log.close()
    assert learned.read_text() == ""
    assert "spares off" not in (tmp_path / "server.log").read_text()


def test_read_learned_skips_a_partial_name(tmp_path):
    f = tmp_path / "learned"
    f.write_text("zlbt_a\nzlbt_b\nzlbt_partia")
    assert forkserver._read_learned(str(f)) == ["zlbt_a", "zlbt_b"]


def _alive_pid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_child_that_said_done_is_killed_when_it_does_not_end(tmp_path):
    """A process that said done and has not ended DRAIN_KILL_S later is
    killed; one still ending when the server stops is killed then."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "zlb_probe.py").write_text(PROBE)
    p, env = _spare_server(tmp_path, None, {"ZL_FG_SPARE": "0"}, patch={"DRAIN_KILL_S": 0.5})
    try:
        env["ZL_TEST_END_DELAY_S"] = "30"
        t0 = time.monotonic()
        r = run_to_files(env, "quiet", "0", cwd=tmp_path)
        assert r.returncode == 0 and time.monotonic() - t0 < 5, r.stderr
        pid = json.loads(r.stdout.splitlines()[0])["pid"]
        wait_for(tmp_path / "server.log", "has not ended: killing it")
        deadline = time.monotonic() + 5
        while _alive_pid(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive_pid(pid)
    finally:
        p.terminate()
        p.wait(10)
    # A server that stops kills what is still ending.
    (tmp_path / "b").mkdir()
    p, env, log = start_server(tmp_path / "b", False)
    try:
        r = run_to_files(dict(env, ZL_TEST_END_DELAY_S="30"), "quiet", "0", cwd=tmp_path)
        pid = json.loads(r.stdout.splitlines()[0])["pid"]
        assert r.returncode == 0 and _alive_pid(pid)
    finally:
        p.terminate()
        p.wait(10)
        log.close()
    deadline = time.monotonic() + 5
    while _alive_pid(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive_pid(pid)
