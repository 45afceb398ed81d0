"""The zlbench package on CUDA with torch (run by tests/gpu/test_python_torch.sh,
which skips without a GPU or torch): graph timing through torch's capture, the
fallback to direct timing of a function that synchronises with the host, a
random operator measured without disturbing torch's RNG, exceptions from fn."""
import os
import subprocess
import sys
import textwrap
import traceback

import pytest
import torch

import zlbench

N = 1 << 20
QUICK = {"warmup": 5, "rep": 20}


@pytest.fixture(scope="module")
def xyz():
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    z = torch.empty_like(x)
    return x, y, z


def test_add_is_graph_timed_and_replays_run(xyz):
    x, y, z = xyz
    count = torch.zeros(1, dtype=torch.int64, device="cuda")

    def fn():
        torch.add(x, y, out=z)
        count.add_(1)
    res = zlbench.measure(fn, **QUICK)
    assert res.backend == "cuda"
    assert res.timer == "graph"
    assert res.marker == "-" or res.marker.startswith("throttled("), res.marker
    assert res.fallback is None and res.verdict == "none"
    assert res.graph_launches >= 1 and res.replays >= 10
    # A 4 MiB add: microseconds, not milliseconds.
    assert 0.0005 < res.value < 0.5
    torch.cuda.synchronize()
    # The engine replayed torch's graph: every replay (and the untimed first
    # one) ran the K captured calls on the device.
    assert count.item() >= res.graph_launches * (res.replays + 1)
    assert torch.equal(z, x + y)
    v = zlbench.do_bench(lambda: torch.add(x, y, out=z), **QUICK)
    assert isinstance(v, float) and 0.0005 < v < 0.5


def test_direct_and_cupti_timers(xyz):
    x, y, z = xyz
    d = zlbench.measure(lambda: torch.add(x, y, out=z), timer="direct", **QUICK)
    assert d.timer == "direct" and d.fallback is None and d.value > 0
    try:
        c = zlbench.measure(lambda: torch.add(x, y, out=z), timer="cupti", **QUICK)
    except zlbench.ZlbenchError as e:
        pytest.skip(f"no CUPTI here: {e}")
    assert c.timer == "trace" and c.value > 0


def test_host_sync_falls_back_to_direct(xyz):
    x, y, z = xyz

    def syncs():
        torch.add(x, y, out=z)
        torch.cuda.synchronize()
    res = zlbench.measure(syncs, **QUICK)
    assert res.timer == "direct"
    assert res.fallback is not None and res.fallback.phase == "capture"
    assert res.fallback.verdict == "refused"
    assert res.marker.startswith("fallback(phase=capture,reason=")
    assert res.capture_exception is not None
    assert res.value > 0
    # The context is healthy: the next measurement captures again.
    again = zlbench.measure(lambda: torch.add(x, y, out=z), **QUICK)
    assert again.timer == "graph"
    # And do_bench_cudagraph answers instead of failing.
    assert zlbench.do_bench_cudagraph(syncs, rep=5) > 0


def test_failed_captures_do_not_keep_memory(monkeypatch, capsys):
    """An fn that synchronises with the host fails every capture; what its
    calls allocated inside each failed capture must be given back (the
    adapter ends and releases the failed capture's pool). The figure with
    the release turned off is printed for the record."""
    mib = 1 << 20
    big = torch.randn(64 * mib, device="cuda")  # 256 MiB

    def syncs():
        y = big * 2  # 256 MiB, from the capture's pool while capturing
        y.sum().item()  # a host synchronisation: the capture is refused

    def kept(release, n=6):
        monkeypatch.setenv("ZL_TORCH_RELEASE_FAILED_CAPTURE", release)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        base = torch.cuda.memory_reserved()
        for _ in range(n):
            r = zlbench.measure(syncs, warmup=1, rep=2)
            assert r.timer == "direct" and r.fallback is not None, (r.timer, r.marker)
            # Refused by the host synchronisation, after the allocation;
            # not by the allocator before the calls ran.
            assert r.capture_exception is not None
            assert "already recording" not in str(r.capture_exception), r.capture_exception
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        return (torch.cuda.memory_reserved() - base) / mib

    released = kept("1")
    # The next measurement captures again.
    again = zlbench.measure(lambda: big.mul_(1.0), warmup=1, rep=5)
    assert again.timer == "graph", again.marker
    left = kept("0")
    with capsys.disabled():
        print(f"\nreserved memory kept after 6 refused captures of a 256 MiB fn: "
              f"{released:.0f} MiB with the release, {left:.0f} MiB without "
              f"(torch {torch.__version__})")
    assert released <= 64, f"{released:.0f} MiB kept over 6 failed captures"
    monkeypatch.setenv("ZL_TORCH_RELEASE_FAILED_CAPTURE", "yes")
    with pytest.raises(zlbench.InvalidArgument, match="ZL_TORCH_RELEASE_FAILED_CAPTURE"):
        zlbench.measure(syncs, warmup=1, rep=2)


def test_failed_capture_leaves_rng_usable():
    # A random draw, then a host synchronisation: the capture is invalidated
    # with the generator registered to it. Afterwards the generator must
    # still draw eagerly (torch raised "Offset increment outside graph
    # capture encountered unexpectedly" here when the capture ran on the
    # real generator state) and give the numbers it would have given.
    def draws_and_syncs():
        torch.rand(1024, device="cuda")
        torch.cuda.synchronize()
    torch.manual_seed(7)
    want = torch.rand(16, device="cuda")
    torch.manual_seed(7)
    res = zlbench.measure(draws_and_syncs, **QUICK)
    assert res.timer == "direct", res.marker
    assert res.marker.startswith("fallback(phase=capture,reason=")
    got = torch.rand(16, device="cuda")
    assert torch.equal(want, got)


def test_random_operator_leaves_rng_as_found():
    def rand():
        torch.rand(1 << 16, device="cuda")
    torch.manual_seed(1234)
    want = torch.rand(16, device="cuda")
    torch.manual_seed(1234)
    res = zlbench.measure(rand, **QUICK)
    got = torch.rand(16, device="cuda")
    assert res.timer == "graph", res.marker
    assert torch.equal(want, got)
    # Without the restore the eager calls would have moved the generator:
    # the check above is not vacuous.
    torch.manual_seed(1234)
    zlbench.measure(rand, preserve_rng=False, **QUICK)
    assert not torch.equal(want, torch.rand(16, device="cuda"))
    # torch's own graphs still draw fresh numbers per replay afterwards.
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        with torch.cuda.graph(g, stream=s):
            out = torch.rand(1024, device="cuda")
    torch.cuda.current_stream().wait_stream(s)
    g.replay()
    a = out.clone()
    g.replay()
    assert not torch.equal(a, out)


class Boom(Exception):
    pass


def test_exception_in_fn_is_reraised(xyz):
    x, y, z = xyz
    calls = []

    def explode_on_fourth_call():
        calls.append(1)
        torch.add(x, y, out=z)
        if len(calls) == 4:
            raise Boom("fourth")
    with pytest.raises(Boom, match="fourth") as info:
        zlbench.do_bench(explode_on_fourth_call, **QUICK)
    names = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "explode_on_fourth_call" in names
    assert len(calls) == 4
    assert zlbench.measure(lambda: torch.add(x, y, out=z), **QUICK).timer == "graph"


def test_exception_only_while_capturing_falls_back(xyz):
    x, y, z = xyz

    def refuses_capture():
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError("not under capture")
        torch.add(x, y, out=z)
    res = zlbench.measure(refuses_capture, **QUICK)
    assert res.timer == "direct"
    assert res.marker.startswith("fallback(phase=capture,reason=RuntimeError,")
    assert isinstance(res.capture_exception, RuntimeError)


def test_triton_kernel(xyz):
    triton = pytest.importorskip("triton")
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
                 mask=m)

    x, y, z = xyz
    z.zero_()

    def fn():
        add_kernel[(triton.cdiv(N, 1024),)](x, y, z, N, BLOCK=1024)
    res = zlbench.measure(fn, **QUICK)
    assert res.timer == "graph", res.marker
    torch.cuda.synchronize()
    assert torch.equal(z, x + y)
    q = zlbench.do_bench(fn, quantiles=[0.2, 0.5, 0.8], **QUICK)
    assert isinstance(q, list) and len(q) == 3 and q[0] <= q[1] <= q[2]


FAULT = textwrap.dedent("""
    import sys
    import torch
    import triton
    import triton.language as tl
    import zlbench

    @triton.jit
    def oob(p):
        tl.store(p + (1 << 40), 1.0)  # 4 TiB past the tensor

    x = torch.zeros(16, device="cuda")
    try:
        zlbench.measure(lambda: oob[(1,)](x), timer=sys.argv[1], warmup=1, rep=5)
    except zlbench.FatalError as e:
        print("FATAL", e)
        sys.exit(0)
    except Exception as e:
        print("OTHER", type(e).__name__, e)
        sys.exit(1)
    print("NO ERROR")
    sys.exit(1)
""")


@pytest.mark.parametrize("timer", ["direct", "graph"])
def test_device_fault_is_fatal_with_any_timer(timer, tmp_path):
    # A kernel writing far out of bounds: the measurement ends with
    # FatalError (the engine classifies CUDA's illegal address, whichever
    # timer saw it), not a generic error. In a child process: the fault
    # leaves that process's context unusable. (A file, not -c: Triton reads
    # a kernel's source.)
    script = tmp_path / "fault.py"
    script.write_text(FAULT)
    r = subprocess.run([sys.executable, str(script), timer], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ))
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    assert "FATAL" in r.stdout
