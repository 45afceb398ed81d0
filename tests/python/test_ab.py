"""zlbench.ab on the host backend (no GPU): paired A/B of two callables
in blocks A B B A ..., the verdict from libzlbench's zlb_ab_verdict (the
code of `zlbench ab`), clocks per block, argument checks. The callables
spin a fixed wall time, so a loaded machine cannot fake a difference of
30 %. Run by ctest (python.package) with PYTHONPATH=python and ZL_LIB_DIR."""
import math
import time

import pytest

import zlbench
from zlbench import _ab

HOST = {"backend": "host", "warmup": 2, "rep": 40}


def spin(us, log=None, tag=None):
    """A pure-Python callable lasting `us` microseconds of wall time; with
    `log`, each call appends (tag, time.perf_counter())."""
    def fn():
        now = time.perf_counter()
        if log is not None:
            log.append((tag, now))
        end = now + us * 1e-6
        while time.perf_counter() < end:
            pass
    return fn


def abba(blocks):
    return [s for j in range(blocks) for s in (("A", "B") if j % 2 == 0 else ("B", "A"))]


# ---- verdicts on real measurements -------------------------------------------

def test_self_is_never_faster_or_slower():
    fn = spin(200)
    r = zlbench.ab(fn, fn, **HOST)
    assert r.verdict in ("same", "ambiguous"), r
    assert r.self and r.pairs == 8 and len(r.blocks) == 16
    # Two copies of the same work: not the same object, the same answer.
    r2 = zlbench.ab(spin(200), spin(200), **HOST)
    assert r2.verdict in ("same", "ambiguous"), r2
    assert not r2.self


def test_slower_and_faster():
    a, b = spin(200), spin(260)  # B 30 % slower
    r = zlbench.ab(a, b, **HOST)
    assert r.verdict == "slower", r
    assert 1.15 < r.ratio < 1.6 and r.interval[0] > 1.02, r
    assert r.b_ms > r.a_ms
    # Every B block is slower than the A block of its pair: each side timed
    # its own callable.
    assert all(y > x for x, y in zip(r.a_blocks, r.b_blocks)), r.blocks
    s = zlbench.ab(b, a, **HOST)
    assert s.verdict == "faster", s
    assert 0.6 < s.ratio < 0.87 and s.interval[1] < 1 / 1.02, s
    assert "slower" in repr(r) and "ratio=" in repr(r) and "interval=" in repr(r)
    text = str(r)
    assert "slower" in text and text.count(" ms ") >= 16


def test_pair_order_random_balanced_and_seeded():
    from zlbench._ab import pair_order
    abba_firsts = [j % 2 == 0 for j in range(16)]
    seen = set()
    for seed in range(20):
        f = pair_order(16, "random", seed)
        assert sum(f) == 8 and f == pair_order(16, "random", seed)
        seen.add(tuple(f))
    assert len(seen) > 1 and seen != {tuple(abba_firsts)}
    assert pair_order(7, "abba") == [j % 2 == 0 for j in range(7)]
    assert sum(pair_order(7, "random", 3)) == 4
    with pytest.raises(ValueError, match="order='bbaa'"):
        zlbench.ab(lambda: None, lambda: None, order="bbaa")
    with pytest.raises(TypeError, match="seed"):
        zlbench.ab(lambda: None, lambda: None, seed=-1)


def test_block_order_random_by_default():
    log = []
    r = zlbench.ab(spin(50, log, "A"), spin(50, log, "B"), blocks=6, seed=11, **HOST)
    sides = [b.side for b in r.blocks]
    pairs = [tuple(sides[i:i + 2]) for i in range(0, 12, 2)]
    assert all(p in (("A", "B"), ("B", "A")) for p in pairs) and pairs.count(("A", "B")) == 3
    from zlbench._ab import pair_order
    assert [p == ("A", "B") for p in pairs] == pair_order(6, "random", 11)


def test_block_order_alternates_and_each_block_times_its_side():
    log = []
    blocks = 6
    r = zlbench.ab(spin(100, log, "A"), spin(100, log, "B"), blocks=blocks, order="abba",
                   **HOST)
    assert [b.side for b in r.blocks] == abba(blocks)
    assert [b.order for b in r.blocks] == list(range(2 * blocks))
    assert [b.pair for b in r.blocks] == [j // 2 for j in range(2 * blocks)]
    for prev, b in zip(r.blocks, r.blocks[1:]):
        assert prev.end_s <= b.start_s
    # The calls made inside a block's window are its own side's, and every
    # block called its side.
    for b in r.blocks:
        inside = [tag for tag, t in log if b.start_s <= t <= b.end_s]
        assert inside and set(inside) == {b.side}, (b, inside[:5])
    assert r.a_blocks == [b.ms for b in r.blocks if b.side == "A"]
    assert r.b_blocks == [b.ms for b in r.blocks if b.side == "B"]


# ---- the budget, the clocks and the notes (measure replaced) ----------------

class FakeResult:
    def __init__(self, value, mhz, throttled=False, timer="graph"):
        self.value = value
        self.timer = timer
        self.marker = "-"
        sm = mhz if mhz else -1
        self.clocks = {"before": {"sm_mhz": sm}, "after": {"sm_mhz": sm}}
        self.throttled = throttled
        self.throttle_why = "power" if throttled else ""


def fake_measure(calls, table):
    def measure(fn, **kw):
        calls.append((fn, kw))
        return table[fn](len(calls))
    return measure


def test_budget_split_across_blocks(monkeypatch):
    calls = []
    a, b = (lambda: None), (lambda: None)
    monkeypatch.setattr(_ab, "measure", fake_measure(
        calls, {a: lambda n: FakeResult(1.0, 0), b: lambda n: FakeResult(1.0, 0)}))
    r = zlbench.ab(a, b, blocks=5, warmup=10, rep=40, backend="host", flush=False,
                   order="abba")
    assert [fn for fn, _ in calls] == [a if s == "A" else b for s in abba(5)]
    for i, (fn, kw) in enumerate(calls):
        assert kw["rep"] == pytest.approx(8.0)
        first = i < 2  # pair 0: A's and B's first blocks
        assert kw["warmup"] == pytest.approx(10.0 if first else 2.0), (i, kw)
        assert kw["backend"] == "host" and kw["flush"] is False and kw["timer"] == "auto"
    assert r.verdict == "same" and r.ratio == pytest.approx(1.0)


def test_clocks_per_block_normalise_the_pairs(monkeypatch):
    # B runs the same cycles at a 10 % higher clock: 10 % less time. Scaled
    # to the reference clock the pairs are equal; unscaled B would be faster.
    calls = []
    a, b = (lambda: None), (lambda: None)
    monkeypatch.setattr(_ab, "measure", fake_measure(
        calls, {a: lambda n: FakeResult(1.0, 1000),
                b: lambda n: FakeResult(1.0 / 1.1, 1100, throttled=(n == 6))}))
    r = zlbench.ab(a, b, backend="host", order="abba")
    assert r.verdict == "same", r
    assert r.ratio == pytest.approx(1.0, rel=1e-9) and r.normalised == 8
    assert "clock-normalised 8 of 8 pairs" in r.notes
    assert "throttled(power)" in r.notes
    assert [blk.sm_mhz for blk in r.blocks[:2]] == [1000, 1100]


def test_timer_difference_is_noted(monkeypatch):
    calls = []
    a, b = (lambda: None), (lambda: None)
    monkeypatch.setattr(_ab, "measure", fake_measure(
        calls, {a: lambda n: FakeResult(1.0, 0), b: lambda n: FakeResult(1.0, 0, timer="direct")}))
    r = zlbench.ab(a, b, backend="host")
    assert "timers differ: A graph, B direct" in r.notes


# ---- the verdict is libzlbench's ---------------------------------------------

def test_verdict_from_the_library():
    v = zlbench.ab_verdict([1.0] * 8, [1.1] * 8)
    assert v.verdict_name == b"slower" and v.pairs == 8
    assert v.ratio == pytest.approx(1.1) and v.lo == pytest.approx(1.1)
    # 8 pairs: the interval is the 2nd smallest to 2nd largest ratio, so one
    # disturbed pair moves nothing.
    b = [1.0, 1.01, 0.99, 1.0, 1.005, 0.995, 1.0, 3.0]
    v = zlbench.ab_verdict([1.0] * 8, b)
    assert v.verdict_name == b"same" and v.hi == pytest.approx(1.01)
    v = zlbench.ab_verdict([1.0] * 4, [2.0] * 4)
    assert v.verdict_name == b"ambiguous" and math.isnan(v.lo)
    with pytest.raises(zlbench.InvalidArgument, match="65 pairs"):
        zlbench.ab_verdict([1.0] * 65, [1.0] * 65)
    with pytest.raises(zlbench.InvalidArgument, match="threshold"):
        zlbench.ab_verdict([1.0] * 8, [1.0] * 8, threshold=0.6)
    with pytest.raises(zlbench.InvalidArgument, match="clock"):
        zlbench.ab_verdict([1.0] * 8, [1.0] * 8, a_mhz=[-1.0] * 8, b_mhz=[1.0] * 8)


# ---- arguments ------------------------------------------------------------------

@pytest.mark.parametrize("args, exc, match", [
    ((None, lambda: None), TypeError, "fn_a must be callable"),
    ((lambda: None, 3), TypeError, "fn_b must be callable"),
])
def test_non_callables_refused(args, exc, match):
    with pytest.raises(exc, match=match):
        zlbench.ab(*args, backend="host")


@pytest.mark.parametrize("kw, exc, match", [
    ({"blocks": 4}, ValueError, "5..64"),
    ({"blocks": 65}, ValueError, "5..64"),
    ({"blocks": 8.0}, TypeError, "blocks"),
    ({"blocks": True}, TypeError, "blocks"),
    ({"threshold": 0}, ValueError, "threshold"),
    ({"threshold": -0.1}, ValueError, "threshold"),
    ({"threshold": 0.51}, ValueError, "threshold"),
    ({"threshold": float("nan")}, ValueError, "threshold"),
    ({"threshold": "2%"}, TypeError, "threshold"),
    ({"rep": 0}, ValueError, "rep"),
    ({"quantiles": [0.5]}, TypeError, "quantiles"),
    ({"return_mode": "all"}, TypeError, "return_mode"),
])
def test_bad_arguments_raise_before_measuring(kw, exc, match):
    called = []
    fn = lambda: called.append(1)  # noqa: E731
    with pytest.raises(exc, match=match):
        zlbench.ab(fn, fn, backend="host", **kw)
    assert not called


def test_range_ends_accepted():
    fn = spin(20)
    r = zlbench.ab(fn, fn, blocks=5, threshold=0.5, backend="host", warmup=1, rep=5)
    assert len(r.blocks) == 10 and r.threshold == 0.5
