"""The zlbench package on the host backend (no GPU): Triton's signatures and
return types, errors raised inside fn, timer selection and result fields.
Run by ctest (python.package) with PYTHONPATH=python and ZL_LIB_DIR set."""
import inspect
import math
import threading
import time
import traceback

import pytest

import zlbench

HOST = {"backend": "host"}
QUICK = {"backend": "host", "warmup": 1, "rep": 5}


def spin(us):
    """A pure-Python callable lasting about `us` microseconds."""
    def fn():
        end = time.perf_counter() + us * 1e-6
        while time.perf_counter() < end:
            pass
    return fn


# ---- signatures ----------------------------------------------------------------

def test_signatures_match_triton():
    # Triton 3.x: do_bench(fn, warmup=25, rep=100, grad_to_none=None,
    # quantiles=None, return_mode="mean"); do_bench_cudagraph(fn, rep=20,
    # grad_to_none=None, quantiles=None, return_mode="mean").
    def params(f):
        return [(p.name, p.default) for p in inspect.signature(f).parameters.values()
                if p.kind is not p.VAR_KEYWORD]
    empty = inspect.Parameter.empty
    assert params(zlbench.do_bench) == [
        ("fn", empty), ("warmup", 25), ("rep", 100), ("grad_to_none", None),
        ("quantiles", None), ("return_mode", "mean")]
    assert params(zlbench.do_bench_cudagraph) == [
        ("fn", empty), ("rep", 20), ("grad_to_none", None), ("quantiles", None),
        ("return_mode", "mean")]


def test_return_types():
    fn = spin(50)
    v = zlbench.do_bench(fn, 1, 5, **HOST)
    assert isinstance(v, float) and 0.04 < v < 5.0
    qs = zlbench.do_bench(fn, 1, 5, None, [0.2, 0.5, 0.8], **HOST)
    assert isinstance(qs, list) and len(qs) == 3 and all(isinstance(q, float) for q in qs)
    assert qs[0] <= qs[1] <= qs[2]
    one = zlbench.do_bench(fn, 1, 5, quantiles=[0.5], **HOST)
    assert isinstance(one, float)
    every = zlbench.do_bench(fn, 1, 5, return_mode="all", **HOST)
    assert isinstance(every, list) and len(every) >= 1
    assert all(isinstance(x, float) and x > 0.04 for x in every)
    g = zlbench.do_bench_cudagraph(fn, 5, **HOST)
    assert isinstance(g, float) and 0.04 < g < 5.0
    gq = zlbench.do_bench_cudagraph(fn, 5, None, [0.1, 0.9], **HOST)
    assert isinstance(gq, list) and len(gq) == 2


def test_return_modes_order_and_match_samples():
    fn = spin(30)
    res = zlbench.measure(fn, return_mode="all", **QUICK)
    s = sorted(res.samples)
    # "all" gives every sample; the value is their median.
    n = len(s)
    med = s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
    assert res.value == pytest.approx(med, rel=1e-12)
    for mode, pick in (("min", min), ("max", max), ("mean", lambda v: sum(v) / len(v))):
        r = zlbench.measure(fn, return_mode=mode, **QUICK)
        assert r.value == pytest.approx(pick(r.samples), rel=1e-12), mode
    lo = zlbench.do_bench(fn, 1, 5, return_mode="min", **HOST)
    hi = zlbench.do_bench(fn, 1, 5, return_mode="max", **HOST)
    assert lo > 0.02 and hi >= lo


def test_quantiles_interpolate_like_torch():
    res = zlbench.measure(spin(20), quantiles=[0.0, 0.25, 1.0], **QUICK)
    s = sorted(res.samples)
    n = len(s)
    p = 0.25 * (n - 1)
    lo = int(math.floor(p))
    want = s[lo] + (p - lo) * (s[min(lo + 1, n - 1)] - s[lo])
    assert res.quantiles[0] == s[0] and res.quantiles[2] == s[-1]
    assert res.quantiles[1] == pytest.approx(want, rel=1e-12)


def test_bad_arguments():
    fn = spin(1)
    with pytest.raises(ValueError, match="return_mode"):
        zlbench.do_bench(fn, return_mode="average", **HOST)
    with pytest.raises(ValueError, match="return_mode"):
        zlbench.do_bench_cudagraph(fn, return_mode="p50", **HOST)
    with pytest.raises(ValueError, match="quantiles"):
        zlbench.do_bench(fn, quantiles=[1.5], **HOST)
    with pytest.raises(ValueError, match="at most 8"):
        zlbench.do_bench(fn, quantiles=[0.5] * 9, **HOST)
    with pytest.raises(ValueError, match="timer"):
        zlbench.measure(fn, timer="fast", **HOST)
    with pytest.raises(ValueError, match="rep"):
        zlbench.measure(fn, rep=0, backend="host")
    with pytest.raises(TypeError, match="callable"):
        zlbench.do_bench(42, **HOST)
    with pytest.raises(TypeError, match="repeat"):
        zlbench.measure(fn, repeat=1.5, **HOST)
    # Checked by the library: the C side's message comes through.
    with pytest.raises(zlbench.InvalidArgument, match="repeat"):
        zlbench.measure(fn, repeat=0, **QUICK)
    with pytest.raises(zlbench.ZlbenchError, match="no-such"):
        zlbench.measure(fn, backend="no-such")
    with pytest.raises(zlbench.UnavailableError, match="device 3"):
        zlbench.measure(fn, backend="host", device=3)


# ---- grad_to_none ------------------------------------------------------------------

class FakeTensor:
    """What do_bench touches of a tensor: .grad, detach_(), requires_grad_()."""

    def __init__(self):
        self.grad = "stale"
        self.detached = 0
        self.requires_grad = False

    def detach_(self):
        self.detached += 1
        return self

    def requires_grad_(self, flag=True):
        self.requires_grad = flag
        return self


def test_grad_to_none_positional_and_reset_before_every_call():
    x = FakeTensor()
    seen = []

    def fn():
        seen.append(x.grad)
        x.grad = "accumulated"
    zlbench.do_bench(fn, 1, 5, [x], **HOST)
    assert seen and all(g is None for g in seen)

    y = FakeTensor()
    seen.clear()

    def gn():
        seen.append(y.grad)
        y.grad = "accumulated"
    zlbench.do_bench_cudagraph(gn, 5, [y], **HOST)
    # As Triton's: detached, made a leaf that requires grad, grad reset.
    assert y.detached == 1 and y.requires_grad
    assert seen and all(g is None for g in seen)


# ---- errors inside fn ----------------------------------------------------------------

class Boom(Exception):
    pass


def test_exception_in_fn_keeps_type_and_traceback():
    calls = []

    def explode_on_third_call():
        calls.append(1)
        if len(calls) == 3:
            raise Boom("third call")
    with pytest.raises(Boom, match="third call") as info:
        zlbench.do_bench(explode_on_third_call, **QUICK)
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "explode_on_third_call" in frames
    # The measurement stopped at the failing call.
    assert len(calls) == 3
    # And the next measurement works.
    assert zlbench.do_bench(spin(10), 1, 5, **HOST) > 0


def test_keyboard_interrupt_stops_the_measurement():
    calls = []

    def interrupted():
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        zlbench.measure(interrupted, **QUICK)
    assert len(calls) == 2


def test_exception_in_graph_request_still_raises():
    # timer="graph" on the host falls back to direct; an error there is fn's.
    def bad():
        raise ZeroDivisionError("nope")
    with pytest.raises(ZeroDivisionError):
        zlbench.do_bench_cudagraph(bad, **HOST)


def test_measuring_inside_fn_is_refused():
    def nested():
        zlbench.measure(spin(1), **QUICK)
    with pytest.raises(zlbench.InvalidArgument, match="already measuring"):
        zlbench.measure(nested, **QUICK)


# ---- timers and results --------------------------------------------------------------

def test_timer_selection_on_host():
    fn = spin(20)
    auto = zlbench.measure(fn, **QUICK)
    assert auto.timer == "direct" and auto.marker == "-" and auto.fallback is None
    assert auto.verdict == "none"
    direct = zlbench.measure(fn, timer="direct", **QUICK)
    assert direct.timer == "direct" and direct.marker == "-"
    # An explicit graph request where there are no graphs: timed directly,
    # and the result says so.
    graph = zlbench.measure(fn, timer="graph", repeat=3, **QUICK)
    assert graph.timer == "direct"
    assert graph.marker == "fallback(phase=capture,reason=ZLB_EUNSUPPORTED,repeat=3)"
    assert graph.fallback.phase == "capture" and graph.fallback.repeat == 3
    assert graph.fallback.verdict == "refused" and "no graphs" in graph.fallback.error
    assert len(graph.call_values) == 3
    with pytest.raises(zlbench.ZlbenchError, match="tracer") as info:
        zlbench.measure(fn, timer="cupti", **QUICK)
    assert info.value.name == "ZLB_EUNSUPPORTED"
    with pytest.raises(zlbench.ZlbenchError, match="tracer"):
        zlbench.measure(fn, timer="trace", **QUICK)
    # The queue timer needs a stream the backend can hold; the host runs
    # work as it is enqueued, so the measurement falls back, marked.
    queue = zlbench.measure(fn, timer="queue", **QUICK)
    assert queue.timer == "direct"
    assert queue.marker.startswith("fallback(phase=hold,reason=UNSUPPORTED,")
    with pytest.raises(ValueError):
        zlbench.measure(fn, timer="fastest", **QUICK)


def test_host_time_per_call():
    """Result.host_us: the host time of one call of fn, at least what fn
    spins on the host (a lower bound only), with every timer; do_bench
    still returns a float."""
    for timer in ("direct", "graph", "queue"):
        res = zlbench.measure(spin(200), timer=timer, **QUICK)
        assert isinstance(res.host_us, float), (timer, res.host_us)
        assert res.host_us >= 200, (timer, res.host_us)
        assert res.raw["host_ms"] == pytest.approx(res.host_us / 1e3)
    assert isinstance(zlbench.do_bench(spin(20), warmup=1, rep=5), float)
    assert zlbench.api_version() >= (1, 2)


def test_result_fields():
    res = zlbench.measure(spin(100), return_mode="mean", quantiles=[0.5], **QUICK)
    assert isinstance(res, zlbench.Result)
    # A 100 us spin in ms: never under 0.09; the upper bound only catches a
    # unit slip (100, as microseconds) and leaves room for a loaded machine
    # descheduling the spin.
    assert 0.09 < res.value < 50.0
    assert res.value == pytest.approx(sum(res.samples) / len(res.samples), rel=1e-12)
    assert len(res.quantiles) == 1
    assert res.backend == "host" and res.device_name
    assert res.estimate_ms > 0 and res.wall_s > 0
    assert 0 < res.sample_s <= res.wall_s and res.attempt_s == 0
    assert res.graph_launches == 0 and res.replays == 0
    assert res.throttled is False and res.marker == "-"
    # The host has no clocks: reported as unknown (-1), before and after.
    assert res.clocks["before"]["sm_mhz"] == -1 and res.clocks["after"]["temp_c"] == -1
    assert set(res.clocks["before"]) == {"sm_mhz", "mem_mhz", "temp_c", "power_mw",
                                         "reasons", "throttled"}
    assert res.raw["nsamples"] == len(res.samples)
    assert "Result(" in repr(res)


def test_first_call_seconds():
    """first_call_s is the first call's host time (a JIT's compile), not a
    later call's or the measurement's."""
    took = []

    def fn():
        t0 = time.perf_counter()
        time.sleep(0.05 if not took else 0.002)
        took.append(time.perf_counter() - t0)

    res = zlbench.measure(fn, **QUICK)
    # The first call's own seconds (the trampoline's around it), not the
    # later calls' too, nor only the last one's.
    assert len(took) > 2 and sum(took[1:]) > 0.004
    assert took[0] <= res.first_call_s < took[0] + 0.002, (res.first_call_s, took)
    assert res.first_call_s < res.wall_s


def test_noise_stop_and_repeat():
    res = zlbench.measure(spin(20), stop="noise", timeout_ms=30, **QUICK)
    assert isinstance(res.noise_met, bool) and len(res.samples) >= 10
    rep = zlbench.measure(spin(20), repeat=3, **QUICK)
    assert len(rep.call_values) == 3
    s = sorted(rep.call_values)
    assert rep.value == pytest.approx(s[1], rel=1e-12)


def test_pass_stream_and_sessions_per_thread():
    got = []
    zlbench.measure(lambda s: got.append(s), pass_stream=True, **QUICK)
    assert got and all(isinstance(s, int) and s != 0 for s in got)
    assert len(set(got)) == 1
    # Another thread gets its own session (and stream).
    other = []

    def worker():
        zlbench.measure(lambda s: other.append(s), pass_stream=True, **QUICK)
        zlbench.close_sessions()
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert other and other[0] != got[0]


def test_do_bench_makes_tritons_calls(monkeypatch):
    # do_bench sizes the graph timer's calls as Triton's do_bench does
    # (counts="triton"); measure keeps budgets of device time unless asked.
    seen = []
    real = zlbench._bench.measure

    def spy(fn, **kw):
        seen.append(kw.get("counts", "budget"))
        return real(fn, **kw)
    monkeypatch.setattr(zlbench._bench, "measure", spy)
    zlbench.do_bench(spin(1), **QUICK)
    zlbench.do_bench(spin(1), counts="budget", **QUICK)
    zlbench.do_bench_cudagraph(spin(1), **QUICK)
    assert seen == ["triton", "budget", "budget"]
    with pytest.raises(ValueError, match="counts"):
        real(spin(1), counts="fast", **QUICK)
    assert real(spin(1), counts="triton", **QUICK).value > 0


def test_library_and_version():
    assert zlbench.api_version()[0] == 1
    assert zlbench.library_path().endswith("libzlbench.so")


def test_a_library_older_than_the_package_is_refused():
    # API 1.0 has no `counts`: its options struct has the same size (the
    # field sits in 1.0's trailing padding), so the version must say it.
    class Old:
        def __init__(self, version):
            self.version = version

        def zlb_api_version(self):
            return self.version

        def zlb_measure_opts_init(self, buf):
            raise AssertionError("not reached: the version refuses it first")
    for v in (10000, 20001):
        with pytest.raises(ImportError, match="needs 1.1"):
            zlbench._lib._check_abi(Old(v), "/old/libzlbench.so")


def test_ctrl_c_while_the_engine_runs_is_a_keyboard_interrupt():
    # SIGINT during a measurement (simulated with _thread.interrupt_main):
    # always KeyboardInterrupt, never an engine error with an undefined
    # status from a callback that Ctrl-C interrupted before its try.
    import _thread
    # From inside fn, at each of the first 6 calls (the estimate's, which
    # every measurement makes): the signal lands in the callback.
    for k in range(1, 7):
        calls = []

        def fn():
            calls.append(1)
            if len(calls) == k:
                _thread.interrupt_main()
        with pytest.raises(KeyboardInterrupt):
            zlbench.measure(fn, backend="host", warmup=1, rep=50)
        assert len(calls) == k  # nothing called after the interrupt
    # From another thread, at moments between and inside the callbacks of
    # a measurement that lasts far longer than the delays.
    for i in range(10):
        t = threading.Timer(0.002 + 0.003 * i, _thread.interrupt_main)
        try:
            with pytest.raises(KeyboardInterrupt):
                # On a loaded machine the timer may fire before start()
                # returns: that is a KeyboardInterrupt here too.
                t.start()
                zlbench.measure(lambda: time.sleep(0.0002), backend="host", warmup=1,
                                rep=10000, max_samples=100000)
        finally:
            t.join()
    assert zlbench.measure(lambda: None, **QUICK).value >= 0


def test_session_closed_when_its_thread_ends():
    # Sessions live per thread; one whose thread ended is closed (its
    # stream and flush buffer freed), not kept until the process exits.
    import gc
    import weakref
    from zlbench import _bench
    seen = []

    def work():
        zlbench.measure(lambda: None, **QUICK)
        seen.append(weakref.ref(_bench._sessions.cache[("host", 0)]))
    th = threading.Thread(target=work)
    th.start()
    th.join()
    gc.collect()
    assert len(seen) == 1 and seen[0]() is None


def test_int_options_out_of_range():
    with pytest.raises(ValueError, match="repeat"):
        zlbench.measure(lambda: None, repeat=2**32 + 1, **QUICK)
    with pytest.raises(ValueError, match="max_samples"):
        zlbench.measure(lambda: None, max_samples=2**32 + 5, **QUICK)


def test_flush_bytes_and_device_bounded():
    """A flush buffer beyond 16 GiB is refused (it was allocated, and the
    process aborted), and a device ordinal that a C int would wrap is
    refused (2**32 measured device 0)."""
    with pytest.raises(ValueError, match="flush_bytes"):
        zlbench.measure(lambda: None, flush_bytes=2**40, **QUICK)
    with pytest.raises(ValueError, match="flush_bytes"):
        zlbench.measure(lambda: None, flush_bytes=(16 << 30) + 1, **QUICK)
    with pytest.raises(ValueError, match="device=4294967296"):
        zlbench.measure(lambda: None, device=2**32, **QUICK)
    # The library refuses such a flush for any caller, not only this package.
    import ctypes
    from zlbench import _bench, _lib
    lib = _lib.library()
    zlbench.measure(lambda: None, **QUICK)  # opens the session
    session = _bench._sessions.cache[("host", 0)]
    o = _lib.MeasureOpts()
    lib.zlb_measure_opts_init(ctypes.byref(o))
    o.flush_bytes = 2**40
    out = ctypes.c_void_p()
    err = _lib.ApiError()
    rc = lib.zlb_measure(session.handle, ctypes.byref(o), _lib.CALL_FN(lambda ctx, s, e: 0),
                         _lib.CAPTURE_FN(), None, ctypes.byref(out), ctypes.byref(err))
    assert rc != 0 and b"flush_bytes must be at most" in err.msg
