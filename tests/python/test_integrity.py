"""The integrity gate for Python callables (measure/do_bench integrity=) on
the host backend, with Python lists as tensors: an honest callable passes;
one that caches its result by the identity of its inputs, and one that
computes only on its first call, are caught on a timed iteration that is
not the first and is left out of the samples. Each cheat passes the first
call's check (the accuracy check a harness would make) and is caught only
through the gate's hook. Run by ctest (python.package)."""
import random
import time

import pytest

import zlbench

# At least 20 samples (the checked one is among the first 10), whatever
# the machine's speed: the noise stop with min_samples.
QUICK = {"backend": "host", "warmup": 1, "rep": 5, "stop": "noise", "min_samples": 20,
         "max_noise": 1.0, "timeout_ms": 60000.0, "max_samples": 200}
N = 64
POISON = -12345


class Case:
    """out = a + b, elementwise, on lists the callables mutate in place."""

    def __init__(self, seed=1):
        self.rng = random.Random(seed)
        self.a = [self.rng.randrange(1000) for _ in range(N)]
        self.b = [self.rng.randrange(1000) for _ in range(N)]
        self.out = [0] * N
        self.refreshed = 0
        self.checked = 0
        self.calls = 0
        self.calls_at_refresh = None

    def refresh(self):
        # Same list objects (same id()), new values; outputs poisoned.
        self.a[:] = [self.rng.randrange(1000) for _ in range(N)]
        self.b[:] = [self.rng.randrange(1000) for _ in range(N)]
        self.out[:] = [POISON] * N
        self.refreshed += 1
        self.calls_at_refresh = self.calls

    def check(self):
        self.checked += 1
        want = [x + y for x, y in zip(self.a, self.b)]
        bad = sum(1 for x, y in zip(self.out, want) if x != y)
        if bad:
            raise AssertionError(f"{bad} of {N} elements differ")

    def integrity(self, seed=0):
        return zlbench.Integrity(self.refresh, self.check, seed=seed)

    def honest(self):
        def fn():
            self.calls += 1
            self.out[:] = [x + y for x, y in zip(self.a, self.b)]
        return fn

    def cache_by_identity(self):
        cache = {}

        def fn():
            self.calls += 1
            key = (id(self.a), id(self.b))
            if key not in cache:
                cache[key] = [x + y for x, y in zip(self.a, self.b)]
            self.out[:] = cache[key]
        return fn

    def first_call_only(self):
        def fn():
            self.calls += 1
            if self.calls == 1:
                self.out[:] = [x + y for x, y in zip(self.a, self.b)]
        return fn


def first_call_correct(case, fn):
    """The cheat's first call is right: only the gate can catch it."""
    fn()
    case.check()
    case.checked = 0


def test_honest_callable_passes_and_says_what_was_checked():
    for timer in ("direct", "graph", "queue", "auto"):
        case = Case()
        res = zlbench.measure(case.honest(), timer=timer, integrity=case.integrity(), **QUICK)
        assert case.refreshed == 1 and case.checked == 1, timer
        assert 2 <= res.integrity_iteration <= 10, (timer, res.integrity_iteration)
        assert (f"timed sample: iteration {res.integrity_iteration} checked on fresh inputs"
                in res.integrity), res.integrity
        assert "side streams: not checked (backend 'host' has no kernel tracer)" in res.integrity
        assert res.raw["integrity_iteration"] == res.integrity_iteration


def test_do_bench_passes_it_on_and_keeps_its_return_type():
    case = Case()
    v = zlbench.do_bench(case.honest(), 1, 5, backend="host", stop="noise", min_samples=20,
                         max_noise=1.0, timeout_ms=60000.0, integrity=case.integrity())
    assert isinstance(v, float) and case.checked == 1
    # Without it: nothing is called, the result says nothing was checked.
    case = Case()
    res = zlbench.measure(case.honest(), **QUICK)
    assert case.refreshed == 0 and res.integrity == "" and res.integrity_iteration is None


@pytest.mark.parametrize("cheat", ["cache_by_identity", "first_call_only"])
@pytest.mark.parametrize("timer", ["direct", "graph"])
def test_cheats_are_caught_on_a_timed_iteration(cheat, timer):
    case = Case()
    fn = getattr(case, cheat)()
    first_call_correct(case, fn)
    with pytest.raises(zlbench.IntegrityError) as info:
        zlbench.measure(fn, timer=timer, integrity=case.integrity(seed=7), **QUICK)
    e = info.value
    assert case.refreshed == 1 and case.checked == 1
    assert isinstance(e, zlbench.ZlbenchError) and e.name == "ZLB_EMISMATCH"
    assert 2 <= e.iteration <= 10
    assert f"integrity: the outputs of timed iteration {e.iteration} do not match" in str(e)
    assert f"{N} of {N} elements differ" in str(e)
    assert isinstance(e.__cause__, AssertionError)
    # The refresh came after `iteration - 1` timed calls (and the warm-up's).
    assert case.calls_at_refresh >= e.iteration


def test_do_bench_raises_for_a_cheat():
    case = Case()
    fn = case.cache_by_identity()
    first_call_correct(case, fn)
    with pytest.raises(zlbench.IntegrityError, match="timed iteration"):
        zlbench.do_bench(fn, 1, 5, backend="host", stop="noise", min_samples=20,
                         max_noise=1.0, timeout_ms=60000.0, integrity=case.integrity())


def test_check_returning_false_is_a_mismatch():
    case = Case()
    integ = zlbench.Integrity(case.refresh, lambda: False)
    with pytest.raises(zlbench.IntegrityError, match=r"check\(\) returned False"):
        zlbench.measure(case.honest(), integrity=integ, **QUICK)


def test_checked_iteration_is_seeded_not_first_and_left_out_of_the_samples():
    seen = set()
    for seed in range(12):
        case = Case()
        slow = []

        def fn(case=case, slow=slow):
            case.calls += 1
            case.out[:] = [x + y for x, y in zip(case.a, case.b)]
            if slow:  # the checked call (right after refresh) lasts 0.3 s
                slow.clear()
                time.sleep(0.3)

        def refresh(case=case, slow=slow):
            case.refresh()
            slow.append(1)

        integ = zlbench.Integrity(refresh, case.check, seed=seed)
        res = zlbench.measure(fn, timer="direct", return_mode="all", integrity=integ,
                              **QUICK)
        assert 2 <= res.integrity_iteration <= 10
        assert not slow  # the checked call ran
        # Its 300 ms are in no sample: the iteration was left out.
        assert max(res.samples) < 300, (seed, res.integrity_iteration, max(res.samples))
        again = Case()
        res2 = zlbench.measure(again.honest(), timer="direct",
                               integrity=again.integrity(seed=seed), **QUICK)
        assert res2.integrity_iteration == res.integrity_iteration  # reproducible
        seen.add(res.integrity_iteration)
    assert len(seen) >= 3, seen  # the seed chooses it


@pytest.mark.parametrize("cheat", ["cache_by_identity", "first_call_only"])
def test_fewer_samples_than_the_chosen_one_checks_a_call_after_them(cheat):
    opts = dict(QUICK, stop="budget", max_samples=1)
    case = Case()
    res = zlbench.measure(case.honest(), timer="direct", integrity=case.integrity(), **opts)
    assert len(res.samples) == 1 and res.integrity_iteration == 0
    assert "a call after the 1 timed samples checked on fresh inputs" in res.integrity
    case = Case()
    fn = getattr(case, cheat)()
    first_call_correct(case, fn)
    with pytest.raises(zlbench.IntegrityError,
                       match="a call after the timed samples do not match") as info:
        zlbench.measure(fn, timer="direct", integrity=case.integrity(), **opts)
    assert info.value.iteration == 0 and case.checked == 1


def test_refresh_error_is_raised_as_itself():
    case = Case()

    def refresh():
        raise KeyError("no inputs")

    with pytest.raises(KeyError, match="no inputs"):
        zlbench.measure(case.honest(), integrity=zlbench.Integrity(refresh, case.check),
                        **QUICK)


def test_bad_integrity_arguments():
    case = Case()
    with pytest.raises(TypeError):
        zlbench.measure(case.honest(), integrity=(case.refresh, case.check), **QUICK)
    with pytest.raises(TypeError):
        zlbench.Integrity(case.refresh, None)
    with pytest.raises(ValueError):
        zlbench.Integrity(case.refresh, case.check, seed=-1)
