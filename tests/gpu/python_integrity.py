"""The integrity gate for torch callables on CUDA (run by
tests/gpu/test_python_integrity.sh, which skips without a GPU or torch):
an honest torch.add passes with every timer; a result cached by the
inputs' data_ptr(), work skipped after the first call and work launched on
a side torch.cuda.Stream are each refused with zlbench.IntegrityError. Each
cheat computes the right outputs on its first call."""
import functools

import pytest
import torch

import zlbench

N = 1 << 20
QUICK = {"warmup": 5, "rep": 20}
TIMERS = ["graph", "direct", "queue", "trace"]


@functools.lru_cache(maxsize=None)
def trace_available():
    """Whether the trace timer (CUPTI) works here: the side-stream check
    needs its tracer."""
    t = torch.zeros(16, device="cuda")
    try:
        zlbench.measure(lambda: t.add_(1), timer="trace", warmup=1, rep=1)
        return True
    except zlbench.ZlbenchError:
        return False


class Case:
    def __init__(self):
        self.x = torch.randn(N, device="cuda")
        self.y = torch.randn(N, device="cuda")
        self.z = torch.empty_like(self.x)
        self.checked = 0

    def refresh(self):
        # In place: the same storage (data_ptr), new values; output poisoned.
        self.x.normal_()
        self.y.normal_()
        self.z.fill_(float("nan"))

    def check(self):
        self.checked += 1
        want = self.x + self.y
        bad = int((~torch.isclose(self.z, want)).sum())
        if bad:
            raise AssertionError(f"{bad} of {N} elements differ")

    def integrity(self, **kw):
        return zlbench.Integrity(self.refresh, self.check, **kw)

    def honest(self):
        return lambda: torch.add(self.x, self.y, out=self.z)

    def cache_by_data_ptr(self):
        cache = {}

        def fn():
            key = (self.x.data_ptr(), self.y.data_ptr())
            if key not in cache:
                cache[key] = torch.add(self.x, self.y)
            self.z.copy_(cache[key])
        return fn

    def first_call_only(self):
        calls = [0]

        def fn():
            calls[0] += 1
            if calls[0] == 1:
                torch.add(self.x, self.y, out=self.z)
        return fn

    def side_stream(self):
        side = torch.cuda.Stream()

        def fn():
            # The right result, computed where the timer's events on the
            # given stream do not see the kernel itself.
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                torch.add(self.x, self.y, out=self.z)
            torch.cuda.current_stream().wait_stream(side)
        return fn


def right_first(case, fn):
    fn()
    torch.cuda.synchronize()
    case.check()
    case.checked = 0


@pytest.mark.parametrize("timer", TIMERS)
def test_honest_add_passes(timer):
    if timer == "trace" and not trace_available():
        pytest.skip("no CUPTI tracer here")
    case = Case()
    res = zlbench.measure(case.honest(), timer=timer, integrity=case.integrity(), **QUICK)
    assert case.checked == 1
    assert res.integrity_iteration is not None and res.integrity_iteration != 1
    assert "checked on fresh inputs" in res.integrity, res.integrity
    if trace_available():
        assert "side streams: none" in res.integrity, res.integrity
    # do_bench keeps its float.
    case = Case()
    v = zlbench.do_bench(case.honest(), 5, 20, timer=timer, integrity=case.integrity())
    assert isinstance(v, float) and case.checked == 1


@pytest.mark.parametrize("cheat", ["cache_by_data_ptr", "first_call_only"])
@pytest.mark.parametrize("timer", TIMERS)
def test_cached_or_skipped_work_is_caught(cheat, timer):
    if timer == "trace" and not trace_available():
        pytest.skip("no CUPTI tracer here")
    if timer == "trace" and cheat == "first_call_only":
        pytest.skip("the trace timer refuses calls without kernels before any check")
    case = Case()
    fn = getattr(case, cheat)()
    right_first(case, fn)
    with pytest.raises(zlbench.IntegrityError) as info:
        zlbench.measure(fn, timer=timer, integrity=case.integrity(seed=3), **QUICK)
    e = info.value
    assert case.checked == 1
    assert e.iteration is not None and e.iteration != 1
    assert "do not match the reference on fresh inputs" in str(e), str(e)
    # Without the gate the same callable times without complaint, except
    # under the trace timer: a cache hit launches no kernel, which the
    # tracer refuses on its own (seen on the H200).
    if timer == "trace":
        with pytest.raises(zlbench.ZlbenchError) as info:
            zlbench.measure(fn, timer=timer, **QUICK)
        assert "recorded no kernel" in str(info.value), str(info.value)
    else:
        zlbench.measure(fn, timer=timer, **QUICK)


def test_side_stream_is_caught_by_the_tracer():
    case = Case()
    fn = case.side_stream()
    right_first(case, fn)
    if not trace_available():
        res = zlbench.measure(fn, timer="direct", integrity=case.integrity(), **QUICK)
        assert "side streams: not checked" in res.integrity, res.integrity
        pytest.skip("no CUPTI tracer here: the side stream cannot be seen")
    for timer in ("graph", "direct"):
        with pytest.raises(zlbench.IntegrityError, match="on another stream") as info:
            zlbench.measure(fn, timer=timer, integrity=case.integrity(), **QUICK)
        assert info.value.iteration is None
        assert "its time would not be measured" in str(info.value)
    # side_streams=False leaves it alone (its outputs are right).
    res = zlbench.measure(fn, timer="direct", integrity=case.integrity(side_streams=False),
                          **QUICK)
    assert "side streams: not checked (not asked)" in res.integrity
