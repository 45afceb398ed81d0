"""pytest plugin: FlagGems' benchmark suite timed by zlbench.

    python3 -m pytest -p zlbench.pytest_plugin -s test_abs.py -m abs --mode kernel

FlagGems' ``benchmark/base.py`` times its kernel mode with
``triton.testing.do_bench`` (``triton.backends.ascend.testing.do_bench_npu``
on Ascend) and its cudagraph mode with
``triton.testing.do_bench_cudagraph``, all looked up through the name
``triton`` of that module at call time. This plugin replaces that one name,
in that one module's globals, by a proxy whose ``testing.do_bench`` and
``testing.do_bench_cudagraph`` are zlbench's and whose every other
attribute is the real module's. ``triton.testing`` itself is left alone:
Triton's and FlagGems' autotuners keep Triton's timer.

What it adds, FlagGems' printed tables left byte for byte as they are:

* after each table, one ``# zlbench: ...`` line per row with the timer,
  the fallback marker and the verdict of each measurement of that row
  (``zlbench summary`` reads ``# `` lines as comments);
* ``zlbench_rows.json``: every table with every measurement's samples,
  rewritten after each table;
* ``results.json``: the same rows in zlbench's results schema (torch's
  call the baseline, FlagGems' the candidate), which ``zlbench report``,
  ``compare`` and ``history`` read;
* ``run_identity.json``: backend, device, timer, autotune settings
  (``USE_FLAGTUNE`` included), the FlagGems commit and the test nodes,
  with ``finished`` set when the session ends normally.

They go to ``$ZL_FG_OUT`` (default: the current folder).

Failures: a refused capture falls back to direct timing for that shape
only (the engine's per-measurement fallback, marked); a fatal device error
fails the test that met it; a poisoned context ends the process with
zlbench's poisoned exit status (5) after the outputs are written, so that
``zlbench batch`` re-runs the operator with capture denied
(``ZL_DENY_CAPTURE`` names the operators, or ``*`` for all).

Stopping: ``ZL_FG_STOP=noise`` (default) samples until the noise is
under 0.5 % (at least 10 samples and 2 ms), FlagGems' ``--iter`` budget
the cap; ``budget`` spends the whole budget, as Triton's timers do.

Warm-up: FlagGems asks for 1000 ms of warm-up before every measurement
(its ``--warmup`` default), which is most of its wall time and buys
nothing here: the first call (Triton's compilation and autotuning) is
done before any warm-up budget starts, and zlbench records the clocks and
throttle flags of each measurement. The plugin therefore warms up for
zlbench's own budget, ``ZL_WARMUP_MS`` (default 10 ms, as ``zlbench
run``); a ``--warmup`` given on the command line is honoured.

Environment: ``ZL_TIMER`` (default ``auto``), ``ZL_FG_STOP``, ``ZL_BACKEND``,
``ZL_WARMUP_MS``,
``ZL_DENY_CAPTURE``, ``ZL_FG_OUT``, ``ZL_FG_OP`` (results.json's operator, set by
the batch), ``ZL_FG_FILE`` and ``ZL_FG_OTHER_FILES`` (the test file the
batch runs the operator from and the other files holding its mark,
comma-separated: ``flaggems.file`` and ``flaggems.other_files`` in
``run_identity.json``), ``ZL_FG_BASE`` (the module to hook,
default ``benchmark.base``), ``FLAGGEMS_COMMIT`` (else read from the
checkout's git metadata).
"""
import json
import math
import os
import sys
import time

import pytest

from . import _bench, _lib
from .forkserver import flock_within

POISONED_EXIT = 5
_PLUGIN_KEY = "_zlbench_plugin_state"


class _State:
    def __init__(self):
        self.out = os.environ.get("ZL_FG_OUT") or os.getcwd()
        self.timer = os.environ.get("ZL_TIMER", "auto") or "auto"
        self.backend = os.environ.get("ZL_BACKEND") or None
        deny = os.environ.get("ZL_DENY_CAPTURE", "")
        self.deny = {d.strip() for d in deny.split(",") if d.strip()}
        self.base_name = os.environ.get("ZL_FG_BASE", "benchmark.base")
        self.stop = os.environ.get("ZL_FG_STOP", "noise")
        if self.stop not in ("noise", "budget"):
            raise pytest.UsageError(f"ZL_FG_STOP={self.stop!r}: expected 'noise' or 'budget'")
        self.warmup_ms = None    # None: FlagGems' own value (set in pytest_configure)
        self.warmup_source = "flaggems --warmup"
        self.hooked = set()
        self.calls = []          # measurements since the last table
        self.tables = []
        self.item = None
        self.nodes = []
        self.rootdir = None
        self.device = None
        self.backend_used = None
        self.timers = set()
        self.fatal = None
        self.started = _now()
        # Where the process's seconds go: since its start (the fork, for a
        # fork-server child) to each stage, and the measurements' share.
        # A fork-server child counts from its request (a spare started
        # earlier and imported ahead of it); any other from its start.
        self.request_at = _request_at()     # None without the fork server
        self.proc_start = self.request_at or _process_start()
        self.from_spare = os.environ.get("ZL_FG_SPARE_USED") == "1"
        # The batch's spawn of the client to the server's taking of the
        # request (the client's own start), when both are known.
        spawn = _epoch_env("ZL_SPAWN_AT")
        req = self.request_at
        self.client_start_s = round(req - spawn, 3) if spawn and req and req >= spawn else None
        self.quiet = None        # {"wait_s", "held"} once the quiet lock was asked for
        self.marks = {}
        self.measure_s = 0.0
        self.measures = 0
        self.write_s = 0.0       # in _write_json (the last identity's own write not in it)
        self.gc_frozen = 0       # objects frozen before the first test (_gc_freeze)
        self.gc_freeze_s = 0.0
        self.mark("configure")

    def mark(self, stage):
        if stage not in self.marks:
            self.marks[stage] = time.time()

    def timeline(self):
        base = self.proc_start
        out = {"process_start": None if base is None else
               time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base)),
               "from_spare": self.from_spare}
        for stage, t in self.marks.items():
            out[f"{stage}_s"] = None if base is None else round(t - base, 3)
        out["measure_s"] = round(self.measure_s, 3)
        out["measures"] = self.measures
        out["write_s"] = round(self.write_s, 3)
        out["gc_frozen"] = self.gc_frozen
        out["gc_freeze_s"] = round(self.gc_freeze_s, 3)
        out["client_start_s"] = self.client_start_s
        out["request_at"] = self.request_at   # epoch seconds
        if self.quiet is not None:
            out["quiet_wait_s"] = self.quiet["wait_s"]
            out["quiet_held"] = self.quiet["held"]
        return out

    # ---- which operator runs now ------------------------------------------------

    def op_names(self):
        if self.item is None:
            return set()
        return {m.name for m in self.item.iter_markers()}

    def denied(self):
        return "*" in self.deny or bool(self.deny & self.op_names())


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _epoch_env(name):
    """Epoch seconds from an environment variable, or None (unset, not a
    number, or not in the past)."""
    try:
        t = float(os.environ.get(name, ""))
    except ValueError:
        return None
    return t if 0 < t <= time.time() + 1 else None


def _request_at():
    """When the fork server took this child's request (epoch seconds), or None."""
    return _epoch_env("ZL_FG_REQUEST_AT")


QUIET_WAIT_S = 60.0
_quiet_fd = None


def _quiet_acquire():
    """Wait until no other child of this device's fork server is still
    ending: take the quiet lock (ZL_FG_QUIET_LOCK) and hold it until this
    process is gone. The previous child said "done" before its end (its
    tests are over), and holds the lock until its process has ended; this
    one's tests start after that. Only with one child per device (with
    more, children share the device by choice). At most QUIET_WAIT_S:
    then the tests start anyway and the identity says so."""
    global _quiet_fd
    path = os.environ.get("ZL_FG_QUIET_LOCK", "")
    if not path or not os.path.isabs(path) or _children_per_device() != 1 or _quiet_fd:
        return None
    import fcntl
    t0 = time.monotonic()
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as e:
        sys.stderr.write(f"zlbench: cannot open the quiet lock {path}: {e}\n")
        return {"wait_s": 0.0, "held": False}
    try:
        # Far above the descriptors CUDA opens, so that the process's end
        # closes it after them (descriptors close in order).
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 900)
        os.close(fd)
        fd = high
    except OSError:
        pass
    try:
        held = flock_within(fd, QUIET_WAIT_S, poll_s=0.005)
        if not held:
            sys.stderr.write(f"zlbench: the previous child still holds {path} after "
                             f"{QUIET_WAIT_S:.0f} s; testing anyway\n")
    except OSError as e:
        held = False
        sys.stderr.write(f"zlbench: cannot take the quiet lock {path}: {e}\n")
    if held:
        _quiet_fd = fd
        os.environ["ZL_FG_QUIET_HELD"] = "1"
    else:
        os.close(fd)
    return {"wait_s": round(time.monotonic() - t0, 3), "held": held}


def _process_start():
    """This process's start (epoch seconds, to a clock tick) from /proc, or
    None: its start in ticks since boot, against the boot clock now (the
    boot time in /proc/stat has whole seconds only)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            stat = f.read(4096)
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])
        hz = os.sysconf("SC_CLK_TCK")
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return time.time() - (since_boot - ticks / hz) if hz > 0 else None


_state = None


def _write_json(path, obj):
    """Atomic: a reader sees the old file or the new one. Its seconds add
    to the timeline's write_s."""
    t0 = time.monotonic()
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, default=str)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    if _state is not None:
        _state.write_s += time.monotonic() - t0


# ---- the timer ---------------------------------------------------------------------

def _measure(kind, fn, **kw):
    s = _state
    deny = s.denied()
    timer = "graph" if kind == "do_bench_cudagraph" else s.timer
    if kind == "do_bench_cudagraph":
        kw.setdefault("warmup", 0)
    elif s.warmup_ms is not None:
        kw["warmup"] = s.warmup_ms
    if s.stop == "noise":
        # zlbench's stopping rule: samples until the noise is under 0.5 %
        # (at least 10 samples and 2 ms), FlagGems' rep budget the cap.
        kw["timeout_ms"] = float(kw.get("rep") or 100)
    s.mark("first_measure")
    t0 = time.perf_counter()
    try:
        res = _bench.measure(fn, timer=timer, deny_capture=deny, backend=s.backend,
                             stop=s.stop, **kw)
    except _lib.PoisonedError as e:
        _poisoned(e)
        raise
    except _lib.FatalError as e:
        s.fatal = str(e)
        s.calls.append({"kind": kind, "error": f"fatal: {e}"})
        raise
    finally:
        s.measure_s += time.perf_counter() - t0
        s.measures += 1
    s.backend_used = res.backend
    s.device = res.device_name
    s.timers.add(res.timer)
    s.calls.append({
        "kind": kind, "warmup_ms": kw.get("warmup"), "value_ms": res.value, "timer": res.timer,
        "wall_s": round(time.perf_counter() - t0, 4),
        "sample_s": round(res.sample_s, 4), "attempt_s": round(res.attempt_s, 4),
        "first_call_s": None if res.first_call_s is None else round(res.first_call_s, 7),
        # Host µs of one call (Python dispatch + launches), beside value_ms.
        "host_us": _host_us(res),
        "marker": res.marker,
        "verdict": res.verdict, "deny_capture": deny, "samples": res.samples,
        "fallback": None if res.fallback is None else {
            "phase": res.fallback.phase, "reason": res.fallback.reason,
            "repeat": res.fallback.repeat, "error": res.fallback.error},
    })
    return res


def _host_us(res):
    """The measurement's host µs per call, rounded, or None."""
    v = getattr(res, "host_us", None)
    return round(v, 3) if isinstance(v, float) and math.isfinite(v) else None


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """triton.testing.do_bench as FlagGems calls it, timed by zlbench."""
    _bench._triton_mode(return_mode)
    res = _measure("do_bench", fn, warmup=warmup, rep=rep, grad_to_none=grad_to_none,
                   quantiles=quantiles, return_mode=return_mode, counts="triton")
    return _bench._summarize(res, quantiles, return_mode)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    """triton.testing.do_bench_cudagraph as FlagGems calls it, timed by
    zlbench's graph timer (direct, marked, where the capture is refused)."""
    _bench._triton_mode(return_mode)
    if grad_to_none is not None:
        for x in grad_to_none:
            x.detach_()
            x.requires_grad_(True)
            x.grad = None
    res = _measure("do_bench_cudagraph", fn, rep=rep, grad_to_none=grad_to_none,
                   quantiles=quantiles, return_mode=return_mode)
    return _bench._summarize(res, quantiles, return_mode)


def do_bench_npu(fn, warmup=None, active=None, **_):
    """triton.backends.ascend.testing.do_bench_npu as FlagGems' kernel mode
    calls it on Ascend (fn alone; the latency in ms), timed by zlbench:
    Triton-Ascend counts iterations (warmup, active) where zlbench spends a
    time budget, so those counts are not used; the plugin's warm-up and
    FlagGems' default 100 ms budget are, as for do_bench."""
    res = _measure("do_bench_npu", fn, rep=100, return_mode="mean")
    return _bench._summarize(res, None, "mean")


class _Forward:
    """Every attribute of `real`, except those set on the instance."""

    def __init__(self, real, **own):
        object.__setattr__(self, "_real", real)
        for k, v in own.items():
            object.__setattr__(self, k, v)

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_real"), name)

    def __repr__(self):
        return f"<zlbench proxy of {object.__getattribute__(self, '_real')!r}>"


class _Backends(_Forward):
    """triton.backends with its `ascend` (Triton-Ascend) backend's
    testing.do_bench_npu replaced, looked up when asked for (a Triton
    without it raises AttributeError as before)."""

    def __getattr__(self, name):
        real = getattr(object.__getattribute__(self, "_real"), name)
        if name != "ascend" or not hasattr(real, "testing"):
            return real
        return _Forward(real, testing=_Forward(real.testing, do_bench_npu=do_bench_npu))


def make_triton_proxy(real_triton):
    """A stand-in for the `triton` name of one module: testing.do_bench,
    testing.do_bench_cudagraph and backends.ascend.testing.do_bench_npu are
    zlbench's, the rest is `real_triton`."""
    testing = _Forward(real_triton.testing, do_bench=do_bench,
                       do_bench_cudagraph=do_bench_cudagraph)
    own = {"testing": testing}
    if hasattr(real_triton, "backends"):
        own["backends"] = _Backends(real_triton.backends)
    return _Forward(real_triton, **own)


# ---- hooking FlagGems' base module -------------------------------------------------

def _hook(mod):
    s = _state
    if mod is None or id(mod) in s.hooked:
        return
    g = vars(mod)
    real = g.get("triton")
    if real is None or isinstance(real, _Forward) or not hasattr(real, "testing"):
        return
    g["triton"] = make_triton_proxy(real)
    upd = g.get("update_result")
    if callable(upd):
        def update_result(*args, **kwargs):
            r = upd(*args, **kwargs)
            _end_table(args[1] if len(args) > 1 else kwargs.get("result"))
            return r
        g["update_result"] = update_result
    s.hooked.add(id(mod))


def _hook_loaded():
    _hook(sys.modules.get(_state.base_name))


# ---- tables ------------------------------------------------------------------------

def _end_table(result):
    """FlagGems printed a table (update_result follows its print): one
    comment line per row, and the sidecar."""
    s = _state
    result = result if isinstance(result, dict) else {}
    rows = result.get("result") or []
    calls, s.calls = s.calls, []
    nrows = len(rows) or 1
    per = len(calls) // nrows if calls and len(calls) % nrows == 0 else len(calls)
    roles = ["torch", "gems"] if per == 2 else [f"call{i + 1}" for i in range(per)]
    table = {"op": result.get("op_name"), "dtype": result.get("dtype"),
             "mode": result.get("mode"), "level": result.get("level"),
             "node": s.item.nodeid if s.item is not None else None, "rows": []}
    lines = []
    for r in range(nrows if per else 0):
        mine = calls[r * per:(r + 1) * per]
        detail = rows[r].get("shape_detail") if r < len(rows) and isinstance(rows[r], dict) else None
        parts = []
        for role, c in zip(roles, mine):
            c = dict(c, role=role)
            if "error" in c:
                parts.append(f"{role} error={c['error']}")
            else:
                host = c.get("host_us")
                parts.append(f"{role} timer={c['timer']} marker={c['marker']} "
                             f"verdict={c['verdict']} samples={len(c['samples'])}"
                             + (f" host_us={host:.3f}" if host is not None else ""))
        lines.append(f"# zlbench: row {r + 1}: " + "; ".join(parts))
        row = {"index": r + 1, "shape_detail": detail,
               "calls": [dict(c, role=ro) for ro, c in zip(roles, mine)]}
        if r < len(rows) and isinstance(rows[r], dict):
            row["metrics"] = {k: rows[r].get(k) for k in _METRICS
                              if _finite(rows[r].get(k)) is not None}
        table["rows"].append(row)
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()
    s.tables.append(table)
    _write_sidecar()


def _write_sidecar():
    _write_json(os.path.join(_state.out, "zlbench_rows.json"),
                {"tables": _state.tables, "pending": _state.calls})
    _write_json(os.path.join(_state.out, "results.json"), _results())


# FlagGems' row metrics kept (BenchmarkMetrics' numbers).
_METRICS = ("latency_base", "latency", "speedup", "gbps_base", "gbps", "tflops")


def _finite(v):
    """v as a float when it is a finite number (not a bool), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _measurement(call, impl):
    """One side of a results.json row from a call of the sidecar."""
    if call is None:
        return {"impl": impl, "ms": None, "samples": []}
    return {"impl": impl, "timer": call.get("timer"), "ms": _finite(call.get("value_ms")),
            "marker": call.get("marker"), "verdict": call.get("verdict"),
            "sample_count": len(call.get("samples") or []),
            "samples": [_finite(x) for x in call.get("samples") or []],
            "wall_s": call.get("wall_s"), "first_call_s": call.get("first_call_s"),
            "host_us": _finite(call.get("host_us"))}


def _results():
    """The tables in zlbench's results.json schema (zlbench.results/1), as
    `zlbench run` writes it, so that `zlbench report`, `compare` and
    `history` read a FlagGems child as a C operator's: torch's call is the
    baseline, FlagGems' the candidate, each with every sample. The file's
    operator is the batch's (ZL_FG_OP), else the first table's; a table of
    another operator names its own."""
    s = _state
    op = os.environ.get("ZL_FG_OP") or next(
        (str(t["op"]) for t in s.tables if t.get("op")), "") or "unknown"
    tables = []
    for t in s.tables:
        if t.get("untabled"):
            continue            # no dtype or shapes: the sidecar keeps them
        rows, seen = [], set()
        for r in t["rows"]:
            calls = r["calls"]
            if len(calls) not in (1, 2):
                continue        # not a torch/gems pair: the sidecar has it
            base = calls[0] if len(calls) == 2 else None
            cand = calls[-1]
            detail = r.get("shape_detail")
            if isinstance(detail, list) and len(detail) == 1:
                detail = detail[0]      # one input: its shape, [64, 64]
            shape = json.dumps(detail, default=str)[:500]
            if shape in seen:
                shape = f"{shape} #{r['index']}"
            seen.add(shape)
            errors = [c["error"] for c in calls if "error" in c]
            bm, cm = _measurement(base, "torch"), _measurement(cand, "gems")
            timers = sorted({c.get("timer") for c in calls if c.get("timer")})
            markers = [c.get("marker") for c in calls if c.get("marker") not in (None, "-")]
            metrics = r.get("metrics") or {}
            speedup = (bm["ms"] / cm["ms"] if bm["ms"] and cm["ms"] else None)
            rows.append({
                "status": "FAILED" if errors or cm["ms"] is None else "SUCCESS",
                "shape": shape, "detail": shape, "speedup": speedup,
                "gbps": metrics.get("gbps"), "tflops": metrics.get("tflops"),
                "timer": ",".join(timers) or None, "marker": ";".join(markers) or "-",
                "error": errors[0] if errors else None,
                "baseline": bm, "candidate": cm})
        dtype = str(t.get("dtype") or "")
        tab = {"dtype": dtype[6:] if dtype.startswith("torch.") else dtype, "mode": t.get("mode"),
               "level": t.get("level"), "node": t.get("node"), "rows": rows}
        if t.get("op") and str(t["op"]) != op:
            tab["operator"] = str(t["op"])
        tables.append(tab)
    return {"schema": "zlbench.results/1", "operator": op, "family": "flaggems",
            "backend": s.backend_used or s.backend or os.environ.get("ZL_BACKEND", "auto"),
            "timer": ",".join(sorted(s.timers)) or s.timer, "tables": tables}


# ---- identity ----------------------------------------------------------------------

def _git_commit(root):
    """The checkout's commit from its own git metadata (root/.git, not a
    parent's), without running git; "unknown" without one."""
    git = os.path.join(root, ".git")
    try:
        head = open(os.path.join(git, "HEAD"), encoding="utf-8").read(200).strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        p = os.path.join(git, ref)
        if os.path.isfile(p):
            return open(p, encoding="utf-8").read(80).strip()
        with open(os.path.join(git, "packed-refs"), encoding="utf-8") as f:
            for line in f:
                if line.rstrip().endswith(" " + ref):
                    return line.split()[0]
    except OSError:
        pass
    return "unknown"


def _identity(finished):
    s = _state
    root = s.rootdir or os.getcwd()
    ident = {
        "schema": "zlbench-flaggems-1",
        "tool": "zlbench.pytest_plugin",
        "started": s.started,
        "backend": s.backend_used or s.backend or os.environ.get("ZL_BACKEND", "auto"),
        "device": s.device,
        "caliber": {"timer": (sorted(s.timers)[0] if len(s.timers) == 1 else
                              ",".join(sorted(s.timers)) if s.timers else s.timer),
                    "timer_requested": s.timer,
                    "stop": s.stop,
                    "children_per_device": _children_per_device(),
                    "warmup_ms": s.warmup_ms,
                    "warmup_from": s.warmup_source,
                    "deny_capture": sorted(s.deny)},
        "autotune": {"USE_FLAGTUNE": os.environ.get("USE_FLAGTUNE"),
                     "ZL_AUTOTUNE": os.environ.get("ZL_AUTOTUNE")},
        "flaggems": {"commit": os.environ.get("FLAGGEMS_COMMIT") or _git_commit(root),
                     "root": root, "vendor": os.environ.get("GEMS_VENDOR"),
                     # The batch's choice among the files holding the
                     # operator's mark, and the others it did not run.
                     "file": os.environ.get("ZL_FG_FILE") or None,
                     "other_files": [f for f in
                                     os.environ.get("ZL_FG_OTHER_FILES", "").split(",")
                                     if f]},
        "nodes": s.nodes,
        "argv": sys.argv,
        "timeline": s.timeline(),
    }
    if s.fatal:
        ident["fatal"] = s.fatal
    if finished:
        ident["finished"] = _now()
    return ident


def _write_identity(finished):
    _write_json(os.path.join(_state.out, "run_identity.json"), _identity(finished))


def _poisoned(e):
    """The context cannot be used again: write what we have, say so, and
    end the process with the poisoned status (pytest would go on)."""
    s = _state
    s.calls.append({"kind": "poisoned", "error": f"poisoned: {e}"})
    try:
        _write_sidecar()
        ident = _identity(False)
        ident["poisoned"] = str(e)
        _write_json(os.path.join(s.out, "run_identity.json"), ident)
    finally:
        sys.stdout.flush()
        sys.stderr.write(f"BENCHMARK_CAPTURE_POISONED: {e}\n")
        sys.stderr.flush()
        os._exit(POISONED_EXIT)


DEFAULT_WARMUP_MS = 10.0


def _children_per_device():
    """Processes the batch runs at a time on this device (a caliber)."""
    try:
        n = int(os.environ.get("ZL_CHILDREN_PER_DEVICE", "1"))
    except ValueError:
        return 1
    return n if 1 <= n <= 64 else 1


def _warmup_policy(config):
    """(warm-up in ms or None for FlagGems' own, where it comes from)."""
    env = os.environ.get("ZL_WARMUP_MS", "")
    if env:
        try:
            v = float(env)
        except ValueError:
            v = -1.0
        if not v >= 0 or v == float("inf"):
            raise pytest.UsageError(f"ZL_WARMUP_MS={env!r}: expected milliseconds >= 0")
        return v, "ZL_WARMUP_MS"
    args = [str(a) for a in getattr(config.invocation_params, "args", ())]
    if any(a == "--warmup" or a.startswith("--warmup=") for a in args):
        return None, "flaggems --warmup"
    return DEFAULT_WARMUP_MS, "zlbench default"


# ---- pytest hooks ------------------------------------------------------------------

def pytest_configure(config):
    global _state
    _state = _State()
    _state.rootdir = str(getattr(config, "rootpath", "") or os.getcwd())
    _state.warmup_ms, _state.warmup_source = _warmup_policy(config)
    os.makedirs(_state.out, exist_ok=True)
    _write_identity(False)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    _state.nodes = [it.nodeid for it in items]
    _state.mark("collected")
    _hook_loaded()
    for it in items:
        mod = getattr(it, "module", None)
        base = getattr(mod, "base", None) if mod is not None else None
        if base is not None and getattr(base, "__name__", "") == _state.base_name:
            _hook(base)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    # Before the first test, after collection: the previous child's end
    # overlaps this one's imports and collection, never its tests.
    if _state is not None and not session.config.option.collectonly:
        _gc_freeze()    # its collection overlaps the previous child's end too
        _state.quiet = _quiet_acquire()
        _state.mark("quiet")


def _gc_freeze():
    """Before the first test: what is alive now (torch, triton, the suite's
    modules, the collected tests) lives until the process ends. Frozen, it
    is left out of every garbage collection from here on: those the suite
    runs itself (FlagGems' Benchmark.run calls gc.collect() after every
    row, a full pass over that heap each time) and Python's own, which
    could otherwise pause a direct measurement. What the tests make is
    collected as before. ZL_FG_GC_FREEZE=0 leaves the collector alone."""
    if os.environ.get("ZL_FG_GC_FREEZE", "1") == "0":
        return
    import gc
    t0 = time.monotonic()
    before = gc.get_freeze_count()      # a fork server froze its own heap
    gc.collect()        # what is garbage already is not kept for good
    gc.freeze()
    _state.gc_frozen = gc.get_freeze_count() - before
    _state.gc_freeze_s = time.monotonic() - t0
    _state.mark("frozen")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _state.item = item
    _state.calls = []
    _hook_loaded()


def pytest_runtest_teardown(item):
    # Measurements that no printed table took: the test failed on the way,
    # or its benchmark prints no table through update_result.
    if _state.calls:
        _state.tables.append({"op": None, "node": item.nodeid, "untabled": True,
                              "rows": [{"index": 0, "calls": _state.calls}]})
        _state.calls = []
        _write_sidecar()
    _state.item = None


def pytest_sessionfinish(session, exitstatus):
    if _state is None:
        return
    _state.mark("finish")
    _write_sidecar()
    _write_identity(True)


def pytest_unconfigure(config):
    # A batch's child ends right after this: pytest's clean-up then runs
    # gc.collect() five times (pytest 8.4+, to report unraisable
    # exceptions), about 0.3 s over a heap of torch, triton and flag_gems
    # on the H200. Objects alive now are the process's
    # until its _exit: freezing them leaves the collections only what the
    # clean-up itself makes. A batch's child only (ZL_FG_OUT): a run of
    # the plugin by hand has only what was alive before its first test
    # frozen (_gc_freeze), and pytest's clean-up still sees everything
    # the tests left.
    if os.environ.get("ZL_FG_OUT"):
        import gc
        gc.freeze()
