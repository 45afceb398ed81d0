"""zlbench.ab on CUDA with torch (run by tests/gpu/test_python_ab.sh, which
skips without a GPU or torch): the blocks are graph-timed through torch's
capture with the SM clock read per block; torch.mul against itself is
never faster or slower; with 5 % more work on side B (a GPU spin after the
mul, sized from a first measurement of the mul) B is slower."""
import pytest
import torch

import zlbench

N = 1 << 24  # 64 MiB per float32 tensor: a mul of tens of µs on an H200


@pytest.fixture(scope="module")
def xyz():
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    z = torch.empty_like(x)
    return x, y, z


def mul_of(xyz):
    x, y, z = xyz

    def fn():
        torch.mul(x, y, out=z)
    return fn


def test_mul_against_itself_is_never_faster_or_slower(xyz):
    fn = mul_of(xyz)
    r = zlbench.ab(fn, fn)
    print(r)
    assert r.verdict in ("same", "ambiguous"), r
    assert r.pairs == 8 and len(r.blocks) == 16
    assert {b.timer for b in r.blocks} == {"graph"}, r
    assert [b.side for b in r.blocks[:4]] == ["A", "B", "B", "A"]
    # The CUDA backend reports the SM clock: every block has one.
    assert all(b.sm_mhz > 0 for b in r.blocks), r.blocks
    # Two copies of the same work: the same answer.
    r2 = zlbench.ab(fn, mul_of(xyz))
    print(r2)
    assert r2.verdict in ("same", "ambiguous"), r2


def test_five_percent_more_work_is_slower(xyz):
    fn = mul_of(xyz)
    mul_ms = zlbench.measure(fn).value
    # torch.cuda._sleep(c) spins c GPU clock cycles: its time per cycle
    # from a measurement of a long spin, then 5 % of the mul's time.
    probe = 1_000_000
    sleep_ms = zlbench.measure(lambda: torch.cuda._sleep(probe), rep=20).value
    cycles = max(1, int(probe * 0.05 * mul_ms / sleep_ms))

    def slower():
        torch.mul(*xyz[:2], out=xyz[2])
        torch.cuda._sleep(cycles)
    r = zlbench.ab(fn, slower)
    print(f"mul {mul_ms:.4f} ms, spin {cycles} cycles ({0.05 * mul_ms:.4f} ms)\n{r}")
    assert r.verdict == "slower", r
    assert r.ratio > 1.02, r
    s = zlbench.ab(slower, fn)
    print(s)
    assert s.verdict == "faster", s
