"""zlbench.ab: paired A/B of two Python callables in one session.

The Python side of `zlbench ab` (docs/ab.md): A and B are timed in
interleaved pairs of blocks (half the pairs A first, which ones drawn from
a seed) on the session's stream, each block
one measurement by :func:`zlbench.measure` (so torch's capture where torch
is loaded), with the SM clock read around each block; the verdict comes
from libzlbench's zlb_ab_verdict, the same code as the command's.
"""
import ctypes
import math
import random
import time

from . import _lib
from ._bench import _number, measure

# The command's ranges (zlbench ab --blocks, --threshold).
MIN_BLOCKS = 5
MAX_BLOCKS = 64
MAX_THRESHOLD = 0.5
VERDICTS = ("same", "faster", "slower", "ambiguous")
ORDERS = ("random", "abba")
DEFAULT_SEED = 0x5EED


def pair_order(blocks, order="random", seed=DEFAULT_SEED):
    """[True when pair j runs A first] for ``blocks`` pairs: "abba"
    alternates from A first; "random" shuffles that balanced pattern with
    ``seed`` (the same seed, the same order), so that nothing periodic on
    the device or host can line up with one side."""
    if order not in ORDERS:
        raise ValueError(f"order={order!r}: expected one of {', '.join(ORDERS)}")
    firsts = [j % 2 == 0 for j in range(blocks)]
    if order == "random":
        random.Random(seed).shuffle(firsts)
    return firsts


class ABBlock:
    """One block: ``side`` ("A" or "B"), ``order`` (0-based, in time),
    ``pair`` (the pair it belongs to), ``ms`` (the measurement's value, per
    call), ``timer``, ``marker``, ``sm_mhz_before``/``sm_mhz_after`` (None
    where the backend reports no clock), ``throttled`` and ``throttle_why``,
    ``start_s``/``end_s`` (``time.perf_counter()`` at its start and end) and
    ``result`` (the :class:`zlbench.Result`)."""

    __slots__ = ("side", "order", "pair", "ms", "timer", "marker", "sm_mhz_before",
                 "sm_mhz_after", "throttled", "throttle_why", "start_s", "end_s", "result")

    def __init__(self, side, order, pair, res, start_s, end_s):
        self.side, self.order, self.pair = side, order, pair
        self.ms = res.value
        self.timer = res.timer
        self.marker = res.marker
        sm = [res.clocks.get(w, {}).get("sm_mhz", -1) for w in ("before", "after")]
        self.sm_mhz_before, self.sm_mhz_after = (v if v is not None and v > 0 else None
                                                 for v in sm)
        self.throttled = res.throttled
        self.throttle_why = res.throttle_why
        self.start_s, self.end_s = start_s, end_s
        self.result = res

    @property
    def sm_mhz(self):
        """The block's clock: the mean of its two readings, 0 unless both
        are known (as `zlbench ab`)."""
        if self.sm_mhz_before is None or self.sm_mhz_after is None:
            return 0.0
        return 0.5 * (self.sm_mhz_before + self.sm_mhz_after)

    def __repr__(self):
        clk = f", sm_mhz={self.sm_mhz:.0f}" if self.sm_mhz else ""
        return (f"ABBlock({self.side}, order={self.order}, pair={self.pair}, "
                f"ms={self.ms:.6g}, timer={self.timer!r}{clk})")


class ABResult:
    """The comparison: B against A.

    verdict     "slower" (B slower by more than the threshold with ~90 %
                confidence), "faster", "same" (any change under the
                threshold) or "ambiguous" (the interval straddles it, or
                fewer than 5 usable pairs)
    ratio       B / A: exp(median of ln(B_i / A_i)) over the pairs
    interval    (lo, hi): the distribution-free interval of that ratio
                (None when there are fewer than 5 pairs)
    a_ms, b_ms  the medians of each side's blocks (clock-normalised where noted)
    pairs       pairs used; normalised: pairs scaled to the reference clock
    blocks      every ABBlock, in the order they ran
    notes       e.g. "clock-normalised 2 of 8 pairs", "throttled(...)",
                "timers differ: ..."
    threshold, self (fn_a is fn_b), timer (the timers the blocks used)
    """

    def __init__(self, st, blocks, threshold, is_self, notes):
        self.verdict = st.verdict_name.decode()
        self.ratio = st.ratio
        self.interval = (st.lo, st.hi) if not (math.isnan(st.lo) or math.isnan(st.hi)) else None
        self.a_ms = st.a_ms
        self.b_ms = st.b_ms
        self.pairs = int(st.pairs)
        self.normalised = int(st.normalised)
        self.blocks = blocks
        self.threshold = threshold
        self.self = is_self
        self.notes = notes
        self.timer = "/".join(sorted({b.timer for b in blocks}))

    @property
    def a_blocks(self):
        """A's block times (ms), in pair order."""
        return [b.ms for b in sorted(self.blocks, key=lambda b: b.pair) if b.side == "A"]

    @property
    def b_blocks(self):
        """B's block times (ms), in pair order."""
        return [b.ms for b in sorted(self.blocks, key=lambda b: b.pair) if b.side == "B"]

    def _interval(self):
        if self.interval is None:
            return "none"
        return f"[{self.interval[0]:.4g}, {self.interval[1]:.4g}]"

    def __repr__(self):
        return (f"ABResult(verdict={self.verdict!r}, ratio={self.ratio:.4g}, "
                f"interval={self._interval()}, a_ms={self.a_ms:.6g}, b_ms={self.b_ms:.6g}, "
                f"pairs={self.pairs}, threshold={self.threshold:g}, timer={self.timer!r}"
                + (f", notes={self.notes!r}" if self.notes else "") + ")")

    def __str__(self):
        lines = [f"B/A {self.ratio:.4g} {self._interval()}: {self.verdict} "
                 f"(threshold {self.threshold * 100:g} %, {self.pairs} pairs, "
                 f"A {self.a_ms:.6g} ms, B {self.b_ms:.6g} ms, timer {self.timer})"]
        lines += [f"  note: {n}" for n in self.notes]
        for b in self.blocks:
            clk = f"  {b.sm_mhz:.0f} MHz" if b.sm_mhz else ""
            mark = f"  {b.marker}" if b.marker and b.marker != "-" else ""
            lines.append(f"  {b.order:3d} {b.side} pair {b.pair:2d}  {b.ms:.6g} ms  "
                         f"{b.timer}{clk}{mark}")
        return "\n".join(lines)


class _ABOut(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("verdict", ctypes.c_int),
                ("verdict_name", ctypes.c_char * 16), ("pairs", ctypes.c_size_t),
                ("normalised", ctypes.c_int), ("a_ms", ctypes.c_double),
                ("b_ms", ctypes.c_double), ("ratio", ctypes.c_double),
                ("lo", ctypes.c_double), ("hi", ctypes.c_double)]


def verdict(a_ms, b_ms, threshold=0.02, a_mhz=None, b_mhz=None):
    """libzlbench's verdict (zlb_ab_verdict, the code of `zlbench ab`) for
    paired block times; the raw structure's fields as a dict."""
    lib = _lib.library()
    if not hasattr(lib, "zlb_ab_verdict"):
        raise ImportError(f"{_lib.library_path()} implements zlbench API "
                          f"{'.'.join(map(str, _lib.api_version()))}: zlbench.ab needs 1.3 "
                          f"(zlb_ab_verdict); rebuild the library")
    n = len(a_ms)
    if len(b_ms) != n or (a_mhz is None) != (b_mhz is None) or (
            a_mhz is not None and (len(a_mhz) != n or len(b_mhz) != n)):
        raise ValueError("a_ms, b_ms (and a_mhz, b_mhz) must have one value per pair")
    arr = ctypes.c_double * max(n, 1)
    out = _ABOut()
    out.struct_size = ctypes.sizeof(_ABOut)
    err = _lib.ApiError()
    rc = lib.zlb_ab_verdict(arr(*a_ms), arr(*b_ms), arr(*a_mhz) if a_mhz is not None else None,
                            arr(*b_mhz) if b_mhz is not None else None, n, float(threshold),
                            ctypes.byref(out), ctypes.byref(err))
    if rc:
        _lib.raise_error(err)
    return out


def ab(fn_a, fn_b, *, blocks=8, threshold=0.02, timer="auto", warmup=10, rep=40,
       order="random", seed=DEFAULT_SEED, **kw):
    """Paired A/B of two callables (docs/ab.md, "Python"): ``blocks`` blocks
    per side (5..64) in pairs of one block each, half the pairs A first
    (``order`` "random": which ones drawn from ``seed``; "abba": A B B A
    ...), all in one session on the same stream, each block one
    :func:`zlbench.measure` of its
    callable with ``rep / blocks`` ms of budget (the first block of each
    side also gets the whole ``warmup``, later ones ``warmup / blocks``).
    Pair j is A's block j with B's block j (adjacent in time); the verdict
    is libzlbench's, as `zlbench ab`'s, with ``threshold`` T (a fraction
    in (0, 0.5], default 0.02): "slower" when the ~90 % interval of B/A
    lies above 1 + T, "faster" below 1 / (1 + T), "same" inside, else
    "ambiguous". Other keywords (backend, device, framework, flush,
    grad_to_none, pass_stream, ...) go to :func:`zlbench.measure`;
    quantiles and return_mode are not meaningful here. Returns an
    :class:`ABResult`. ``ab(fn, fn)`` measures the false-verdict rate of
    the machine: anything but "same" or "ambiguous" is wrong."""
    if not callable(fn_a):
        raise TypeError(f"fn_a must be callable, not {type(fn_a).__name__}")
    if not callable(fn_b):
        raise TypeError(f"fn_b must be callable, not {type(fn_b).__name__}")
    if isinstance(blocks, bool) or not isinstance(blocks, int):
        raise TypeError(f"blocks={blocks!r}: expected an int")
    if not MIN_BLOCKS <= blocks <= MAX_BLOCKS:
        raise ValueError(f"blocks={blocks}: expected {MIN_BLOCKS}..{MAX_BLOCKS} blocks per side "
                         f"(as `zlbench ab --blocks`)")
    threshold = _number("threshold", threshold, 0, strict=True)
    if threshold > MAX_THRESHOLD:
        raise ValueError(f"threshold={threshold!r}: expected a fraction in (0, {MAX_THRESHOLD}] "
                         f"(as `zlbench ab --threshold` in (0, 50] %)")
    for name in ("quantiles", "return_mode"):
        if name in kw:
            raise TypeError(f"ab() does not take {name}: each block is one median")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise TypeError(f"seed={seed!r}: expected an int >= 0")
    firsts = pair_order(blocks, order, seed)
    warmup = _number("warmup", warmup, 0)
    rep = _number("rep", rep, 0, strict=True)
    if not hasattr(_lib.library(), "zlb_ab_verdict"):
        verdict([], [])  # raises, naming the library and the version it needs

    sides = {"A": fn_a, "B": fn_b}
    times = {"A": [0.0] * blocks, "B": [0.0] * blocks}
    mhz = {"A": [0.0] * blocks, "B": [0.0] * blocks}
    done = []
    for j in range(blocks):
        # Half the pairs A first: a drift linear over a pair's two blocks
        # cancels in the median.
        for side in (("A", "B") if firsts[j] else ("B", "A")):
            first = j == 0
            start = time.perf_counter()
            res = measure(sides[side], timer=timer, rep=rep / blocks,
                          warmup=warmup if first else warmup / blocks, **kw)
            end = time.perf_counter()
            blk = ABBlock(side, len(done), j, res, start, end)
            done.append(blk)
            times[side][j] = blk.ms
            mhz[side][j] = blk.sm_mhz
    st = verdict(times["A"], times["B"], threshold, mhz["A"], mhz["B"])

    notes = []
    if st.normalised:
        notes.append(f"clock-normalised {st.normalised} of {st.pairs} pairs")
    if st.pairs < blocks:
        notes.append(f"{blocks - st.pairs} of {blocks} pairs unusable (a time not positive)")
    why = next((b.throttle_why or "?" for b in done if b.throttled), None)
    if why is not None:
        notes.append(f"throttled({why})")
    ta = sorted({b.timer for b in done if b.side == "A"})
    tb = sorted({b.timer for b in done if b.side == "B"})
    if ta != tb:
        notes.append(f"timers differ: A {'/'.join(ta)}, B {'/'.join(tb)}")
    marks = sorted({b.marker for b in done if b.marker and b.marker != "-"})
    if marks:
        notes.append("markers: " + ", ".join(marks))
    return ABResult(st, done, threshold, fn_a is fn_b, notes)
