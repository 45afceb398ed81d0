"""measure, do_bench and do_bench_cudagraph over libzlbench's zlb_measure.

Sampling, stopping, statistics, verdicts and markers are the C engine's;
this module turns Python callables into its callbacks (every exception is
caught, kept and re-raised here with its traceback), picks the framework
adapter (torch, CuPy, none) and shapes the results as Triton's functions do.
"""
import ctypes
import math
import os
import signal
import sys
import threading
import time
import weakref

from . import _lib
from ._lib import ApiError, MeasureOpts, CALL_FN, CAPTURE_FN
from . import _integrity

_MSG = 767  # room in ApiError.msg, less the terminator


class Fallback:
    """Why a graph measurement was timed directly: ``phase`` (capture,
    instantiate, replay, deny), ``reason`` (the runtime's error name, or the
    exception's type), ``repeat`` (direct measurements, median over them),
    ``error`` (the failure's message) and ``verdict`` (refused, or none for
    deny)."""

    __slots__ = ("phase", "reason", "repeat", "error", "verdict")

    def __init__(self, phase, reason, repeat, error, verdict):
        self.phase, self.reason, self.repeat, self.error, self.verdict = (
            phase, reason, repeat, error, verdict)

    def __repr__(self):
        return (f"Fallback(phase={self.phase!r}, reason={self.reason!r}, "
                f"repeat={self.repeat}, verdict={self.verdict!r})")


class Result:
    """One measurement. Times in milliseconds per call.

    value           the return mode's value (median by default)
    samples         every sample (graph timer: one per replay, replay / K)
    quantiles       the requested quantiles, in order
    timer           "graph", "direct", "trace" or "queue": what produced the value
    marker          "-" or e.g. "fallback(phase=capture,reason=...,repeat=1)",
                    "+throttled(...)" appended when the GPU slowed down
    fallback        a Fallback, or None when the requested timer ran
    verdict         "none", or "refused" for a refused capture
    clocks          {"before": {...}, "after": {...}}: sm_mhz, mem_mhz, temp_c,
                    power_mw, reasons, throttled (-1: unknown, e.g. on the host)
    throttled       True when the GPU reported a power or thermal slowdown
    capture_exception  the exception a capture attempt raised, if any
    wall_s          seconds the measurement took (after a refused capture:
                    the direct timer's), sample_s of them in the timed calls
                    or replays, attempt_s in the refused attempt before
    first_call_s    host seconds of fn's first call (where a JIT compiles,
                    loads its kernels or autotunes), None when fn was not
                    called; after a refused capture it is in attempt_s, not
                    in wall_s
    host_us         host microseconds of one call of fn (its Python dispatch and
                    launches): the median over the first warm-up calls (at most
                    64); None when not measured or the library predates it
    raw             every key libzlbench reported, as a dict
    """

    def __init__(self, raw, capture_exception=None, first_call_s=None):
        self.raw = raw
        self.value = raw["value_ms"]
        self.samples = list(raw["samples"])
        self.quantiles = list(raw["quantiles"])
        self.call_values = list(raw["call_values"])
        self.timer = raw["timer"]
        self.marker = raw["marker"]
        self.verdict = raw["verdict"]
        self.note = raw["note"]
        self.noise = raw["noise"]
        self.noise_met = bool(raw["noise_met"])
        self.estimate_ms = raw["estimate_ms"]
        self.graph_launches = int(raw["graph_launches"])
        self.replays = int(raw["replays"])
        self.wall_s = raw["wall_s"]
        # Where the wall time went: the timed calls alone, and a refused
        # capture's attempt before the direct timer (not in wall_s).
        self.sample_s = raw["sample_s"]
        self.attempt_s = raw["attempt_s"]
        # Host time of one call of fn, µs (API 1.2; None from an older
        # library or when not measured).
        host_ms = raw.get("host_ms")
        self.host_us = host_ms * 1e3 if host_ms is not None and host_ms == host_ms else None
        self.backend = raw["backend"]
        self.device_name = raw["device_name"]
        self.throttled = bool(raw["throttled"])
        self.throttle_why = raw["throttle_why"]
        self.fallback = None
        if raw["fallback_phase"]:
            self.fallback = Fallback(raw["fallback_phase"], raw["fallback_reason"],
                                     int(raw["fallback_repeat"]), raw["fallback_error"],
                                     raw["verdict"])
        self.clocks = {}
        for when in ("before", "after"):
            prefix = f"clocks_{when}."
            self.clocks[when] = {k[len(prefix):]: (int(v) if v == v else v)
                                 for k, v in raw.items() if k.startswith(prefix)}
        self.capture_exception = capture_exception
        self.first_call_s = first_call_s
        # integrity=: what the gate checked ("" without it) and the timed
        # iteration it checked (1-based; 0 a call after the samples; None: none).
        self.integrity = raw.get("integrity", "")
        it = raw.get("integrity_iteration", -1)
        self.integrity_iteration = int(it) if it is not None and it >= 0 else None

    def __repr__(self):
        return (f"Result(value={self.value:.6g} ms, timer={self.timer!r}, "
                f"marker={self.marker!r}, samples={len(self.samples)})")


def _read_result(lib, r):
    raw = {}
    i = 0
    kind = ctypes.c_char()
    while True:
        key = lib.zlb_result_key(i, ctypes.byref(kind))
        if key is None:
            break
        i += 1
        k = kind.value
        if k == b"n":
            d = ctypes.c_double()
            if lib.zlb_result_number(r, key, ctypes.byref(d)) == 0:
                raw[key.decode()] = d.value
        elif k == b"s":
            s = ctypes.c_char_p()
            if lib.zlb_result_string(r, key, ctypes.byref(s)) == 0:
                raw[key.decode()] = (s.value or b"").decode("utf-8", "replace")
        elif k == b"a":
            p = ctypes.POINTER(ctypes.c_double)()
            n = ctypes.c_size_t()
            if lib.zlb_result_array(r, key, ctypes.byref(p), ctypes.byref(n)) == 0:
                raw[key.decode()] = [p[j] for j in range(n.value)]
    return raw


# ---- sessions: one per thread, backend and device --------------------------

class _Session:
    def __init__(self, backend, device):
        lib = _lib.library()
        handle = ctypes.c_void_p()
        err = ApiError()
        rc = lib.zlb_session_open(backend.encode() if backend else None, device,
                                  ctypes.byref(handle), ctypes.byref(err))
        if rc:
            _lib.raise_error(err, f"cannot open backend '{backend or 'auto'}' device {device}")
        self.handle = handle
        self.backend = lib.zlb_session_backend(handle).decode()
        self.device = lib.zlb_session_device(handle)
        self.device_name = lib.zlb_session_device_name(handle).decode("utf-8", "replace")
        self.has_graphs = bool(lib.zlb_session_has_graphs(handle))
        self.stream = lib.zlb_session_stream(handle) or 0
        # Closed when the session goes away (its thread ended, say), not
        # only by close(): each holds a stream and an L2 flush buffer.
        self._closer = weakref.finalize(self, lib.zlb_session_close, handle)

    def close(self):
        if self.handle:
            self._closer()
            self.handle = None


_sessions = threading.local()


def _session(backend, device):
    cache = getattr(_sessions, "cache", None)
    if cache is None:
        cache = _sessions.cache = {}
    key = (backend, device)
    s = cache.get(key)
    if s is None:
        s = cache[key] = _Session(backend, device)
    return s


def close_sessions():
    """Close this thread's sessions (their streams and flush buffers)."""
    cache = getattr(_sessions, "cache", None) or {}
    for s in cache.values():
        s.close()
    cache.clear()


# ---- framework adapters ---------------------------------------------------

class _Raw:
    """No framework: fn enqueues where it likes (pure Python on the host
    backend), or takes the stream handle (pass_stream=True)."""
    name = "none"
    can_capture = False

    def begin(self, session):
        pass

    def end(self, session):
        pass

    def on_stream(self, ptr):
        return None

    def release(self, graph):
        pass


class _Cupy(_Raw):
    """CuPy: its current stream follows the engine's; the engine captures."""
    name = "cupy"

    def __init__(self, cupy):
        self.cupy = cupy
        self.streams = {}

    def begin(self, session):
        self.cupy.cuda.get_current_stream().synchronize()
        self.ctx = self.on_stream(session.stream)
        self.ctx.__enter__()

    def end(self, session):
        self.ctx.__exit__(None, None, None)

    def on_stream(self, ptr):
        s = self.streams.get(ptr)
        if s is None:
            s = self.streams[ptr] = self.cupy.cuda.ExternalStream(ptr)
        return s


def _adapter(session, framework):
    if session.backend != "cuda" or framework == "none":
        return _Raw()
    if framework in ("auto", "torch") and "torch" in sys.modules:
        from . import _torch
        a = _torch.adapter(sys.modules["torch"], session.device)
        if a is not None:
            return a
    if framework == "torch":
        raise _lib.InvalidArgument("framework='torch' but torch (with CUDA) is not loaded",
                                   _lib.EINVAL, "ZLB_EINVAL")
    if framework in ("auto", "cupy") and "cupy" in sys.modules:
        return _Cupy(sys.modules["cupy"])
    if framework == "cupy":
        raise _lib.InvalidArgument("framework='cupy' but cupy is not loaded", _lib.EINVAL,
                                   "ZLB_EINVAL")
    return _Raw()


# ---- the callbacks -----------------------------------------------------------

def _fill(err, exc):
    """An exception as the callback's error: its type names the failure (the
    marker's reason when a capture fails); a runtime error code it carries
    (torch's AcceleratorError.error_code) lets the engine classify it.
    Never raises: it runs inside a callback, where nothing may unwind into C
    (an exception whose str() raises gets a plain message)."""
    e = err.contents
    e.code = _lib.EINTR if isinstance(exc, KeyboardInterrupt) else _lib.EOP
    try:
        code = getattr(exc, "error_code", None)
        if isinstance(code, int) and not isinstance(code, bool) and 0 < code < 100000:
            e.vendor_code = code
        else:
            e.vendor_name = type(exc).__name__.encode("ascii", "replace")[:63]
        e.msg = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")[:_MSG]
    except BaseException:  # noqa: B036 - see the docstring
        e.msg = b"the callback raised an exception that cannot be described"


class _SigintDeferred:
    """While the engine runs (main thread, default handler only), Ctrl-C
    sets a flag instead of raising: an exception raised asynchronously at a
    callback's first line, before its try, would escape into C (ctypes then
    returns an undefined status). The callbacks see the flag and stop the
    measurement; measure() raises KeyboardInterrupt once the engine is back."""

    def __init__(self, run):
        self.run = run
        self.old = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            try:
                if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                    self.old = signal.signal(signal.SIGINT, self._on_sigint)
            except (ValueError, OSError):
                self.old = None
        return self

    def _on_sigint(self, signum, frame):
        self.run.abort = True
        self.run.interrupted = True

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
        return False


class _Run:
    """One measurement's Python side: the call and capture trampolines."""

    def __init__(self, fn, grads, adapter, session, pass_stream):
        self.fn = fn
        self.grads = grads
        self.adapter = adapter
        self.session_stream = session.stream
        self.pass_stream = pass_stream
        self.exc = None            # the last exception of fn or of the capture
        self.capture_exc = None    # the one a capture attempt raised
        self.abort = False         # KeyboardInterrupt, SystemExit: call nothing more
        self.interrupted = False   # Ctrl-C arrived while the engine ran
        self.graphs = []           # graphs handed to the engine: alive until it returns
        self.first_s = None        # host seconds of fn's first (eager) call
        self.c_call = CALL_FN(self._call)
        self.c_capture = CAPTURE_FN(self._capture) if adapter.can_capture else CAPTURE_FN()

    def one(self, stream):
        if self.grads:
            for x in self.grads:
                x.grad = None
        if self.pass_stream:
            self.fn(stream)
        else:
            self.fn()

    def _stopped(self, err):
        e = err.contents
        e.code = _lib.EINTR
        e.msg = b"interrupted: the measurement stops"
        return -1

    def _call(self, user, stream, err):
        if self.abort:
            return self._stopped(err)
        try:
            stream = stream or 0
            if stream == self.session_stream:
                if self.first_s is None:
                    t0 = time.perf_counter()
                    self.one(stream)
                    self.first_s = time.perf_counter() - t0
                else:
                    self.one(stream)
            else:
                # The engine's own capture, on its side stream.
                ctx = self.adapter.on_stream(stream)
                if ctx is None:
                    self.one(stream)
                else:
                    with ctx:
                        self.one(stream)
            return 0
        except BaseException as exc:  # every one: nothing may unwind into C
            self.exc = exc
            if stream != self.session_stream:
                self.capture_exc = exc
            if not isinstance(exc, Exception):
                self.abort = True
            _fill(err, exc)
            return -1

    def _capture(self, user, k, stream, graph, err):
        if self.abort:
            return self._stopped(err)
        try:
            g, raw = self.adapter.capture(self.one, k, stream or 0)
            self.graphs.append(g)
            graph[0] = raw
            return 0
        except BaseException as exc:
            self.exc = self.capture_exc = exc
            if not isinstance(exc, Exception):
                self.abort = True
            _fill(err, exc)
            return -1

    def release(self):
        for g in self.graphs:
            self.adapter.release(g)
        self.graphs = []


# ---- measure --------------------------------------------------------------------

def _choice(name, value, table):
    if value not in table:
        raise ValueError(f"{name}={value!r}: expected one of {', '.join(map(repr, table))}")
    return table[value]


def _number(name, value, lo, strict=False):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name}={value!r}: expected a number") from None
    if not math.isfinite(v) or v < lo or (strict and v == lo):
        raise ValueError(f"{name}={value!r}: expected a finite number "
                         f"{'>' if strict else '>='} {lo}")
    return v


def _default_backend_device(backend, device):
    if backend is None:
        backend = os.environ.get("ZL_BACKEND") or "auto"
    if device is None:
        torch = sys.modules.get("torch")
        device = 0
        if torch is not None and backend not in ("host", "cpu"):
            try:
                if torch.cuda.is_initialized():
                    device = torch.cuda.current_device()
            except Exception:
                device = 0
    if isinstance(device, bool) or not isinstance(device, int):
        index = getattr(device, "index", None)  # a torch.device
        if not isinstance(index, int):
            raise TypeError(f"device={device!r}: expected an int")
        device = index
    # The C side takes an int: a larger ordinal would wrap to another device.
    if not 0 <= device < 2**31:
        raise ValueError(f"device={device}: expected an ordinal in 0..{2**31 - 1}")
    return backend, device


def measure(fn, *, timer="auto", warmup=25, rep=100, return_mode="median", quantiles=None,
            repeat=1, flush=True, flush_bytes=0, deny_capture=False, grad_to_none=None,
            stop="budget", max_noise=0.005, min_samples=10, min_time_ms=2.0,
            timeout_ms=100.0, graph_max_launches=1000, graph_replay_ms=1.0,
            graph_min_replays=10, max_samples=10000, backend=None, device=None,
            framework="auto", pass_stream=False, preserve_rng=True, counts="budget",
            integrity=None):
    """Time ``fn`` (one call of the work, no arguments unless
    ``pass_stream``) with zlbench's engine and return a :class:`Result`.

    timer           "auto" (graph where the backend has graphs, else queue
                    where it can hold a stream, else direct), "graph" (falls
                    back to direct per measurement, with a marker, when the
                    capture is refused), "direct", "trace" (kernel time from
                    CUPTI; "cupti" is accepted too), "queue" (fn must not
                    wait for the device from the host)
    warmup, rep     warm-up and measurement budgets in ms
    counts          "budget": warmup and rep are ms of the calls' own device
                    time; "triton" (do_bench's default): the graph timer
                    makes the calls Triton's do_bench would make, counted
                    from an estimate of one call with its L2 flush
    return_mode     "median", "mean", "min", "max", "all" (value: the median)
    quantiles       up to 8 values in [0, 1], reported in ``Result.quantiles``
    repeat          direct measurements, the value their median
    flush           flush the L2 before each direct sample (flush_bytes: its
                    size, 0 the backend's)
    deny_capture    never capture: direct timing with the deny marker
    grad_to_none    tensors whose ``.grad`` is reset before each call
    stop            "budget" (rep ms) or "noise" (max_noise, min_samples,
                    min_time_ms, timeout_ms)
    backend, device "cuda", "host", ... ($ZL_BACKEND, else "auto"); the
                    device ordinal (torch's current device when torch is loaded)
    framework       "auto", "torch", "cupy", "none": whose streams and graph
                    capture to use (torch: torch captures; others: the engine)
    pass_stream     call ``fn(stream)`` with the raw stream handle
    preserve_rng    with torch: restore the device's RNG state afterwards
    integrity       a :class:`Integrity` (refresh, check): one timed iteration,
                    chosen from its seed and never the first, runs on inputs
                    refreshed in place and is checked (left out of the
                    samples); side streams are refused where the tracer can
                    tell; a failure raises :class:`IntegrityError`
                    (docs/integrity.md, "Python")
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, not {type(fn).__name__}")
    o = MeasureOpts()
    lib = _lib.library()
    lib.zlb_measure_opts_init(ctypes.byref(o))
    o.timer = _choice("timer", timer, _lib.TIMERS)
    o.return_mode = _choice("return_mode", return_mode, _lib.RETURN_MODES)
    o.stop = _choice("stop", stop, _lib.STOPS)
    o.counts = _choice("counts", counts, _lib.COUNTS)
    o.warmup_ms = _number("warmup", warmup, 0)
    o.rep_ms = _number("rep", rep, 0, strict=True)
    if quantiles is not None:
        qs = [_number("quantiles", q, 0) for q in quantiles]
        if len(qs) > _lib.MAX_QUANTILES:
            raise ValueError(f"at most {_lib.MAX_QUANTILES} quantiles, not {len(qs)}")
        if any(q > 1 for q in qs):
            raise ValueError(f"quantiles={list(quantiles)!r}: each must be in [0, 1]")
        o.nquantiles = len(qs)
        for i, q in enumerate(qs):
            o.quantiles[i] = q
    for name, value in (("repeat", repeat), ("min_samples", min_samples),
                        ("graph_max_launches", graph_max_launches),
                        ("graph_min_replays", graph_min_replays),
                        ("max_samples", max_samples), ("flush_bytes", flush_bytes)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name}={value!r}: expected an int")
        # C ints (size_t for flush_bytes): ctypes would wrap larger values.
        if not -2**31 <= value < (2**63 if name == "flush_bytes" else 2**31):
            raise ValueError(f"{name}={value!r}: out of range")
    if not 0 <= flush_bytes <= 16 << 30:
        raise ValueError(f"flush_bytes={flush_bytes}: expected 0 (the backend's) to "
                         f"{16 << 30} (16 GiB)")
    o.repeat = repeat
    o.flush = 1 if flush else 0
    o.flush_bytes = flush_bytes
    o.deny_capture = 1 if deny_capture else 0
    o.max_noise = _number("max_noise", max_noise, 0, strict=True)
    o.min_samples = min_samples
    o.min_time_ms = _number("min_time_ms", min_time_ms, 0)
    o.timeout_ms = _number("timeout_ms", timeout_ms, 0, strict=True)
    o.graph_max_launches = graph_max_launches
    o.graph_replay_ms = _number("graph_replay_ms", graph_replay_ms, 0, strict=True)
    o.graph_min_replays = graph_min_replays
    o.max_samples = max_samples
    if framework not in ("auto", "torch", "cupy", "none"):
        raise ValueError(f"framework={framework!r}: expected 'auto', 'torch', 'cupy' or 'none'")
    grads = list(grad_to_none) if grad_to_none is not None else None
    if integrity is not None and not isinstance(integrity, _integrity.Integrity):
        raise TypeError(f"integrity={integrity!r}: expected a zlbench.Integrity")

    backend, device = _default_backend_device(backend, device)
    session = _session(backend, device)
    adapter = _adapter(session, framework)
    run = _Run(fn, grads, adapter, session, pass_stream)
    hooks = _integrity.Hooks(integrity, run) if integrity is not None else None
    out = ctypes.c_void_p()
    err = ApiError()
    rng = adapter.save_rng() if preserve_rng and hasattr(adapter, "save_rng") else None
    began = False
    rc = -1
    cleanup = []
    try:
        adapter.begin(session)
        began = True
        with _SigintDeferred(run):
            if hooks is not None:
                rc = _integrity.measure_integrity(lib, session.handle, ctypes.byref(o), run,
                                                  hooks, ctypes.byref(out), ctypes.byref(err))
            else:
                rc = lib.zlb_measure(session.handle, ctypes.byref(o), run.c_call,
                                     run.c_capture, None, ctypes.byref(out),
                                     ctypes.byref(err))
    finally:
        # Every step runs; after a device fault they may fail too, and must
        # not hide the engine's error (raised below).
        steps = [run.release]
        if began:
            steps.insert(0, lambda: adapter.end(session))
        if rng is not None:
            steps.append(lambda: adapter.restore_rng(rng))
        for step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - reported below unless rc says more
                cleanup.append(exc)
    if run.interrupted and run.exc is None:
        raise KeyboardInterrupt
    if not rc and cleanup:
        raise cleanup[0]
    if rc:
        if run.exc is not None and rc in (_lib.EOP, _lib.EINTR):
            exc, run.exc = run.exc, None
            raise exc
        if hooks is not None and rc == _lib.EMISMATCH:
            raise hooks.error(err) from hooks.check_exc
        try:
            _lib.raise_error(err)
        except _lib.ZlbenchError as e:
            if run.exc is not None:
                raise e from run.exc
            raise
    try:
        raw = _read_result(lib, out)
    finally:
        lib.zlb_result_free(out)
    return Result(raw, run.capture_exc, run.first_s)


# ---- Triton's functions --------------------------------------------------------

_TRITON_MODES = ("min", "max", "mean", "median", "all")


def _summarize(res, quantiles, return_mode):
    """Triton's _summarize_statistics: quantiles (a float when one), all the
    samples for "all", else the return mode's value."""
    if quantiles is not None:
        ret = list(res.quantiles)
        return ret[0] if len(ret) == 1 else ret
    if return_mode == "all":
        return list(res.samples)
    return res.value


def _triton_mode(return_mode):
    if return_mode not in _TRITON_MODES:
        raise ValueError(f"return_mode={return_mode!r}: expected one of "
                         f"{', '.join(map(repr, _TRITON_MODES))}")


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean",
             **kw):
    """triton.testing.do_bench, timed by zlbench: a float in ms (the return
    mode's value), a list for several quantiles (a float for one), every
    sample for return_mode="all". ``timer`` defaults to "auto" (graph with
    per-measurement fallback on CUDA, direct on the host) and ``counts`` to
    "triton" (the calls Triton's do_bench would make, replayed without its
    per-call flush, so less device time than Triton's); other keywords go
    to :func:`measure`."""
    _triton_mode(return_mode)
    kw.setdefault("timer", "auto")
    kw.setdefault("counts", "triton")
    res = measure(fn, warmup=warmup, rep=rep, grad_to_none=grad_to_none,
                  quantiles=quantiles, return_mode=return_mode, **kw)
    return _summarize(res, quantiles, return_mode)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean",
                       **kw):
    """triton.testing.do_bench_cudagraph, timed by zlbench's graph timer,
    which falls back to direct timing (with a marker, see :func:`measure`)
    where the capture is refused instead of failing. Like Triton's, the
    tensors of grad_to_none are detached and made leaves first."""
    _triton_mode(return_mode)
    if grad_to_none is not None:
        for x in grad_to_none:
            x.detach_()
            x.requires_grad_(True)
            x.grad = None
    kw.setdefault("timer", "graph")
    kw.setdefault("warmup", 0)
    res = measure(fn, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles,
                  return_mode=return_mode, **kw)
    return _summarize(res, quantiles, return_mode)
