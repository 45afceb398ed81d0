"""zlbench.forkserver and zlbench.forkrun: a forked child is the client's
process in all that a batch can see (arguments, environment, working folder,
streams, exit status or signal), signals reach it, it dies with its client,
and a client without a usable server runs the module itself."""
import json
import os
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
import json, os, signal, sys, time
a = sys.argv[1:]
print(json.dumps({"argv": a, "cwd": os.getcwd(), "foo": os.environ.get("ZLB_FOO"),
                  "own_group": os.getpgid(0) == os.getpid(), "pid": os.getpid()}), flush=True)
sys.stderr.write("probe stderr\\n")
if a[:1] == ["die"]:
    # (SIGUSR1, not SIGSEGV: a sanitiser runtime turns SIGSEGV into exit 1.)
    os.kill(os.getpid(), signal.SIGUSR1)
if a[:1] == ["sleep"]:
    open(a[1], "w").write(str(os.getpid()))
    time.sleep(60)
sys.exit(int(a[0]) if a and a[0].isdigit() else 0)
'''


@pytest.fixture
def server(tmp_path):
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "zlb_probe.py").write_text(PROBE)
    sock = str(tmp_path / "s.sock")
    env = dict(os.environ, PYTHONPATH=f"{PKG}:{tmp_path / 'mods'}")
    log = open(tmp_path / "server.log", "w")
    p = subprocess.Popen([sys.executable, "-m", "zlbench.forkserver", "--socket", sock,
                          "--preload", "json,zlb_no_such_module"], env=env, stderr=log)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    assert os.path.exists(sock), (tmp_path / "server.log").read_text()
    env.update(ZL_FG_SERVER=sock, ZL_FG_SERVER_PID=str(p.pid))
    yield p, env, tmp_path
    p.terminate()
    p.wait(10)
    log.close()


def run(env, *args, cwd, **kw):
    return subprocess.run([sys.executable, "-m", "zlbench.forkrun", "-m", "zlb_probe", *args],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=60, **kw)


def test_child_is_the_clients_process(server):
    p, env, tmp = server
    (tmp / "wd").mkdir()
    r = run(dict(env, ZLB_FOO="bar"), "7", "x y", cwd=tmp / "wd")
    assert r.returncode == 7, r.stderr
    out = json.loads(r.stdout)
    assert out["argv"] == ["7", "x y"] and out["cwd"] == str(tmp / "wd")
    assert out["foo"] == "bar" and out["own_group"]
    assert out["pid"] != p.pid and "probe stderr" in r.stderr
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
