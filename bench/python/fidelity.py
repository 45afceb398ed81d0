"""Fidelity of zlbench's Python timers on torch and Triton kernels.

For add, softmax, sum and mm, each as a torch operator and as a Triton
kernel, at five sizes from about 1 us to about 1 ms, it measures:

  cupti_warm   kernel time per call from CUPTI (torch.profiler's CUDA
               activity), calls back to back, L2 warm, after 75 ms of calls
               (the middle of a measurement's warm-up and replays, so the
               power state its samples see): the reference of the graph
               timers
  cupti_cold   the same with the L2 flushed before every call: the
               reference of the direct timers
  cupti_replay kernel time per call from CUPTI while a torch graph of the
               same K calls as zlbench's replays back to back for about
               50 ms: the graph timer's own load (clocks, power cap) with
               CUPTI's kernel time, so graph - cupti_replay is what the
               timer adds (gaps between kernels, replay overhead)
  cupti_replay_span  the same replays' first kernel start to last kernel
               end, per call: kernels and the gaps between them, by the
               device's clock, so graph - cupti_replay_span is what the
               timer adds beyond what the device spent on the calls (the
               replay's launch and events)
  zlb_graph    zlbench.do_bench(fn, return_mode="median") (the graph timer,
               Triton's call counts: measure(..., counts="triton"))
  zlb_budget   the same with counts="budget" (budgets of device time)
  cupti_during / cupti_during_span  a second do_bench-like measurement run
               under the profiler: CUPTI's kernel time and first-start to
               last-end span of the very replays it timed, per call, beside
               its own value (zlb_during). No other run's clocks or power
               state: the replays are the same ones.
  zlb_noise    zlbench.measure(fn, return_mode="median", stop="noise"): the
               graph timer stopped when its samples' noise is under 0.5 %
               (at least 10 replays and 2 ms), rep=100 ms the cap
  zlb_direct   zlbench.do_bench(fn, return_mode="median", timer="direct")
  tt_do_bench  triton.testing.do_bench(fn, return_mode="median")
  tt_cudagraph triton.testing.do_bench_cudagraph(fn, return_mode="median")

each with its error against its reference, and the wall time of one
zlbench.do_bench (and of the budget rule) and one triton.testing.do_bench
call. Pass: zlb_graph within 2 % of cupti_warm from 5 us, within 0.5 us
below; pass during: zlb_during so close to cupti_during_span. One failing
case is recorded and the table goes on.

Usage (on a CUDA machine with torch and triton; ZL_LIB_DIR: the folder of
libzlbench.so):
  PYTHONPATH=python ZL_LIB_DIR=BUILD/lib python3 bench/python/fidelity.py --out DIR
Writes DIR/fidelity.md (the table) and DIR/fidelity.json (every number).
"""
import argparse
import json
import math
import os
import statistics as st
import sys
import time
import traceback

import torch
import triton
import triton.language as tl
import triton.testing as tt

import zlbench

FLUSH_BYTES = 256 << 20
HEAT_S = 0.075


# ---- Triton kernels --------------------------------------------------------------

@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, ncols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < ncols
    x = tl.load(x_ptr + row * ncols + offs, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * ncols + offs, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


# ---- cases -------------------------------------------------------------------------

def make_case(op, impl, size):
    """(fn, description) for one kernel; the tensors live in fn's closure."""
    dev = "cuda"
    if op == "add":
        x = torch.randn(size, device=dev)
        y = torch.randn(size, device=dev)
        z = torch.empty_like(x)
        if impl == "torch":
            return (lambda: torch.add(x, y, out=z)), f"[{size}] f32"
        grid = (triton.cdiv(size, 1024),)
        return (lambda: add_kernel[grid](x, y, z, size, BLOCK=1024)), f"[{size}] f32"
    if op == "softmax":
        rows, cols = size, 1024
        x = torch.randn(rows, cols, device=dev)
        y = torch.empty_like(x)
        if impl == "torch":
            return (lambda: torch.softmax(x, dim=-1)), f"[{rows}, {cols}] f32"
        return (lambda: softmax_kernel[(rows,)](x, y, cols, BLOCK=1024, num_warps=4)), \
            f"[{rows}, {cols}] f32"
    if op == "sum":
        x = torch.randn(size, device=dev)
        out = torch.zeros((), device=dev)
        if impl == "torch":
            return (lambda: torch.sum(x, 0, out=out)), f"[{size}] f32"
        grid = (triton.cdiv(size, 4096),)

        def tsum():
            out.zero_()
            sum_kernel[grid](x, out, size, BLOCK=4096)
        return tsum, f"[{size}] f32"
    if op == "mm":
        a = torch.randn(size, size, device=dev, dtype=torch.float16)
        b = torch.randn(size, size, device=dev, dtype=torch.float16)
        c = torch.empty(size, size, device=dev, dtype=torch.float16)
        if impl == "torch":
            return (lambda: torch.mm(a, b, out=c)), f"[{size}]^3 f16"
        grid = (triton.cdiv(size, 128), triton.cdiv(size, 128))
        return (lambda: mm_kernel[grid](a, b, c, size, size, size, BM=128, BN=128, BK=32,
                                         num_warps=8, num_stages=3)), f"[{size}]^3 f16"
    raise ValueError(op)


SIZES = {
    "add": [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28],
    "softmax": [1, 64, 4096, 65536, 262144],
    "sum": [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28],
    "mm": [64, 256, 1024, 4096, 6144],
}


# ---- the CUPTI reference ------------------------------------------------------------

def _device_spans(prof):
    """(start_ns, end_ns, name) of every device activity, in start order."""
    spans = []
    try:
        for e in prof.profiler.kineto_results.events():
            if e.device_type() == torch.autograd.DeviceType.CUDA:
                spans.append((e.start_ns(), e.start_ns() + e.duration_ns(), e.name()))
    except AttributeError:
        for e in prof.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                spans.append((e.time_range.start * 1000.0, e.time_range.end * 1000.0, e.name))
    spans.sort()
    return spans


def _profile(work):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        work()
        torch.cuda.synchronize()
    return _device_spans(prof)


def preheat(fn, seconds):
    """Calls back to back for `seconds` of wall time: the GPU in the power
    state a measurement of that length reaches (an H200 GEMM slows by up to
    a fifth under its power cap after tens of ms)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()


def _one_call(fn):
    """The device activities of one call of fn; at least one, or an error."""
    spans = _profile(fn)
    if not spans:
        raise RuntimeError("the profiler saw no device activity for one call")
    return spans


def cupti_ms(fn, calls, flush, heat_s=0.0):
    """Median over calls of the summed device time of one call (ms), after
    heat_s seconds of calls back to back."""
    per_call = len(_one_call(fn))
    if heat_s > 0:
        preheat(fn, heat_s)

    def warm():
        for _ in range(calls):
            fn()

    def cold():
        for _ in range(calls):
            flush.zero_()
            fn()
    if flush is None:
        spans = _profile(warm)
        groups = [spans[i:i + per_call] for i in range(0, len(spans), per_call)]
    else:
        fl = _profile(flush.zero_)
        fnames = {s[2] for s in fl}
        spans = _profile(cold)
        # The flush's activities split the calls: flush, call, flush, call, ...
        groups, cur = [], None
        for s in spans:
            if s[2] in fnames and (cur is None or len(cur) == per_call):
                if cur:
                    groups.append(cur)
                cur = []
            elif cur is not None:
                cur.append(s)
        if cur:
            groups.append(cur)
    groups = [g for g in groups if len(g) == per_call]
    if len(groups) < calls // 2:
        raise RuntimeError(f"attributed {len(groups)} of {calls} calls ({len(spans)} spans, "
                           f"{per_call} per call)")
    return st.median(sum(e - s for s, e, _ in g) * 1e-6 for g in groups)


def cupti_replay_ms(fn, k):
    """(kernel time, span) per call (ms) while a torch graph of k calls
    replays back to back for about 50 ms: medians over replays of the
    replay's summed kernel time / k, and of its first kernel's start to its
    last kernel's end / k (the kernels and the gaps between them: what the
    device spent on the k calls, by its own clock)."""
    per_call = len(_one_call(fn))
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        with torch.cuda.graph(g, stream=s):
            for _ in range(k):
                fn()
    torch.cuda.current_stream().wait_stream(s)
    g.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    g.replay()
    torch.cuda.synchronize()
    one = max(time.perf_counter() - t0, 1e-6)
    reps = max(5, min(500, int(0.05 / one)))

    def replays():
        for _ in range(reps):
            g.replay()
    spans = _profile(replays)
    n = per_call * k
    groups = [spans[i:i + n] for i in range(0, len(spans) - n + 1, n)]
    g.reset()
    if len(groups) < reps // 2:
        raise RuntimeError(f"attributed {len(groups)} of {reps} replays ({len(spans)} spans)")
    return (st.median(sum(e - s for s, e, _ in gr) * 1e-6 for gr in groups) / k,
            st.median((max(e for _, e, _ in gr) - gr[0][0]) * 1e-6 for gr in groups) / k)


def cupti_during(fn, **kw):
    """A measurement under the profiler: (its value, CUPTI kernel time per
    call, CUPTI span per call), medians over its timed replays, which are
    its last device work: replays x K x (activities per call). The first
    activity of every replay must be the call's first, or the attribution
    is refused."""
    first = _one_call(fn)
    per_call = len(first)
    got = {}

    def work():
        got["res"] = zlbench.measure(fn, **kw)
    spans = _profile(work)
    res = got["res"]
    k, r = res.graph_launches or 0, res.replays or 0
    if res.timer != "graph" or k < 1 or r < 1:
        raise RuntimeError(f"timed by {res.timer} ({res.marker}), not by graph replays")
    n = per_call * k
    if len(spans) < r * n:
        raise RuntimeError(f"{len(spans)} activities, fewer than {r} replays x {n}")
    timed = spans[len(spans) - r * n:]
    groups = [timed[i:i + n] for i in range(0, r * n, n)]
    if any(g[0][2] != first[0][2] for g in groups):
        raise RuntimeError("the replays' activities do not start with the call's first")
    return (res.value, st.median(sum(e - b for b, e, _ in g) * 1e-6 for g in groups) / k,
            st.median((max(e for _, e, _ in g) - g[0][0]) * 1e-6 for g in groups) / k)


# ---- one case --------------------------------------------------------------------------

def err_pct(v, ref):
    return (v - ref) / ref * 100.0 if ref and v == v and ref == ref else float("nan")


def run_case(op, impl, size, flush, args):
    fn, desc = make_case(op, impl, size)
    fn()
    torch.cuda.synchronize()
    rec = {"op": op, "impl": impl, "size": size, "desc": desc}
    # The warm reference after 75 ms of calls, the middle of zlbench's
    # 25 ms warm-up and 100 ms of replays: the power state its samples see.
    rec["cupti_warm"] = cupti_ms(fn, args.calls, None, heat_s=HEAT_S)
    rec["cupti_cold"] = cupti_ms(fn, args.calls, flush)
    t0 = time.perf_counter()
    res = zlbench.measure(fn, return_mode="median", warmup=25, rep=100, counts="triton")
    rec["wall_zlb"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    resb = zlbench.measure(fn, return_mode="median", warmup=25, rep=100, counts="budget")
    rec["wall_zlb_budget"] = time.perf_counter() - t0
    rec["zlb_budget"] = resb.value
    rec["zlb_graph_replays"] = res.replays
    rec["zlb_budget_replays"] = resb.replays
    rec["zlb_graph"] = res.value
    rec["zlb_graph_timer"] = res.timer
    rec["zlb_graph_marker"] = res.marker
    rec["zlb_graph_K"] = res.graph_launches
    try:
        rec["cupti_replay"], rec["cupti_replay_span"] = cupti_replay_ms(
            fn, max(1, res.graph_launches or 1))
    except Exception as e:  # the other columns still count
        rec["cupti_replay"] = rec["cupti_replay_span"] = float("nan")
        rec["cupti_replay_error"] = f"{type(e).__name__}: {e}"
    t0 = time.perf_counter()
    resn = zlbench.measure(fn, return_mode="median", warmup=25, rep=100, stop="noise",
                           timeout_ms=100)
    rec["wall_zlb_noise"] = time.perf_counter() - t0
    rec["zlb_noise"] = resn.value
    rec["zlb_noise_replays"] = resn.replays
    rec["zlb_noise_met"] = resn.noise_met
    rec["zlb_direct"] = zlbench.do_bench(fn, return_mode="median", timer="direct")
    t0 = time.perf_counter()
    rec["tt_do_bench"] = tt.do_bench(fn, return_mode="median")
    rec["wall_triton"] = time.perf_counter() - t0
    with torch.cuda.stream(torch.cuda.Stream()):
        rec["tt_cudagraph"] = tt.do_bench_cudagraph(fn, return_mode="median")
    try:
        rec["zlb_during"], rec["cupti_during"], rec["cupti_during_span"] = cupti_during(
            fn, return_mode="median", warmup=25, rep=100, counts="triton")
    except Exception as e:  # the other columns still count
        rec["zlb_during"] = rec["cupti_during"] = rec["cupti_during_span"] = float("nan")
        rec["cupti_during_error"] = f"{type(e).__name__}: {e}"
    rec["pass"] = within_target(rec["zlb_graph"], rec["cupti_warm"])
    rec["pass_during"] = within_target(rec["zlb_during"], rec["cupti_during_span"])
    rec["pass_replay"] = within_target(rec["zlb_graph"], rec["cupti_replay"])
    rec["pass_span"] = within_target(rec["zlb_graph"], rec["cupti_replay_span"])
    rec["pass_noise"] = within_target(rec["zlb_noise"], rec["cupti_warm"])
    return rec


def within_target(v, ref):
    """Within 0.5 us of ref below 5 us, within 2 % from 5 us."""
    if not (v == v and ref == ref and ref > 0):
        return False
    return abs(v - ref) * 1e3 <= 0.5 if ref * 1e3 < 5.0 else abs(err_pct(v, ref)) <= 2.0


def sync_fallback_check():
    """A function that synchronises with the host: direct timing, a marker."""
    x = torch.randn(1 << 20, device="cuda")

    def syncs():
        x.mul_(1.0)
        torch.cuda.synchronize()
    res = zlbench.measure(syncs, warmup=5, rep=20)
    return {"timer": res.timer, "marker": res.marker,
            "ok": res.timer == "direct" and res.marker.startswith("fallback(phase=capture")}


def fmt(v, digits=2):
    return "-" if v is None or v != v else f"{v:.{digits}f}"


def table(records, meta):
    lines = [f"# zlbench Python timers against CUPTI ({meta['device']}, torch {meta['torch']}, "
             f"triton {meta['triton']}, {meta['date']})", "",
             "Latencies in us (median). zlb graph: zlbench.do_bench (graph timer, Triton's "
             "call counts) against CUPTI with L2 warm (calls back to back, after 75 ms of "
             "them). During: a second such measurement under the profiler, its value "
             "(zlb during) against CUPTI's kernel time and span (first kernel start to "
             "last kernel end, the gaps between dependent kernels included) of the very replays it timed. Direct timers "
             "(zlb direct, tt do_bench) against CUPTI after an L2 flush. Pass: within 2 % "
             "from 5 us, within 0.5 us below. Wall: seconds per measurement, zlbench.do_bench, "
             "zlbench with the budget rule (counts=\"budget\"), triton.testing.do_bench. "
             "CUPTI replay columns (a separate torch graph replayed for 50 ms) are in "
             "fidelity.json.", "",
             "| op | impl | shape | CUPTI warm | zlb graph | err % | CUPTI during | span during | "
             "zlb during | err % kernel | err % span | tt cudagraph | err % | CUPTI cold | "
             "zlb direct | err % | tt do_bench | err % | wall zlb | wall budget | wall tt | "
             "pass | pass during | marker |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
             "---|---|---|---|"]
    for r in records:
        if "error" in r:
            lines.append(f"| {r['op']} | {r['impl']} | {r.get('desc', r['size'])} | "
                         + " | ".join(["-"] * 18) + f" | ERROR | - | {r['error'][:80]} |")
            continue
        w, c = r["cupti_warm"], r["cupti_cold"]
        dk, ds, zd = r["cupti_during"], r["cupti_during_span"], r["zlb_during"]
        lines.append(
            f"| {r['op']} | {r['impl']} | {r['desc']} | {fmt(w * 1e3)} | "
            f"{fmt(r['zlb_graph'] * 1e3)} | {fmt(err_pct(r['zlb_graph'], w), 1)} | "
            f"{fmt(dk * 1e3)} | {fmt(ds * 1e3)} | {fmt(zd * 1e3)} | "
            f"{fmt(err_pct(zd, dk), 1)} | {fmt(err_pct(zd, ds), 1)} | "
            f"{fmt(r['tt_cudagraph'] * 1e3)} | {fmt(err_pct(r['tt_cudagraph'], w), 1)} | "
            f"{fmt(c * 1e3)} | {fmt(r['zlb_direct'] * 1e3)} | {fmt(err_pct(r['zlb_direct'], c), 1)} | "
            f"{fmt(r['tt_do_bench'] * 1e3)} | {fmt(err_pct(r['tt_do_bench'], c), 1)} | "
            f"{fmt(r['wall_zlb'], 3)} | {fmt(r['wall_zlb_budget'], 3)} | "
            f"{fmt(r['wall_triton'], 3)} | "
            f"{'PASS' if r['pass'] else 'FAIL'} | {'PASS' if r.get('pass_during') else 'FAIL'} | "
            f"{r['zlb_graph_marker']} |")
    ok = [r for r in records if "error" not in r]
    npass = sum(r["pass"] for r in ok)
    nrep = sum(bool(r.get("pass_replay")) for r in ok)
    nspan = sum(bool(r.get("pass_span")) for r in ok)
    ndur = sum(bool(r.get("pass_during")) for r in ok)
    nkern = sum(within_target(r["zlb_during"], r["cupti_during"]) for r in ok)
    slower = sum(r["wall_zlb"] > r["wall_triton"] for r in ok)
    slower_b = sum(r["wall_zlb_budget"] > r["wall_triton"] for r in ok)
    npn = sum(bool(r.get("pass_noise")) for r in ok)
    slower_n = sum(r["wall_zlb_noise"] > r["wall_triton"] for r in ok)
    lines += ["", f"Fidelity: {npass}/{len(ok)} cases pass against CUPTI warm, {nrep}/{len(ok)} "
              f"against CUPTI replay, {nspan}/{len(ok)} against CUPTI replay span; during the "
              f"measurement: {ndur}/{len(ok)} against the span, {nkern}/{len(ok)} against the "
              f"kernel time ({len(records) - len(ok)} errors).",
              f"Wall time: zlbench.do_bench slower than triton.testing.do_bench in "
              f"{slower}/{len(ok)} cases (the budget rule: {slower_b}/{len(ok)}).",
              f"Noise stop: {npn}/{len(ok)} cases pass against CUPTI warm; slower than "
              f"triton.testing.do_bench in {slower_n}/{len(ok)} cases.",
              f"Host-synchronising fn: {meta['sync_check']}."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--ops", default="add,softmax,sum,mm")
    ap.add_argument("--impls", default="torch,triton")
    ap.add_argument("--calls", type=int, default=50, help="profiled calls per CUPTI reference")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    meta = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "triton": triton.__version__, "date": time.strftime("%Y-%m-%d"),
            "zlbench_lib": zlbench.library_path()}
    flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    records = []
    for op in args.ops.split(","):
        for impl in args.impls.split(","):
            for size in SIZES[op]:
                try:
                    rec = run_case(op, impl, size, flush, args)
                    print(f"{op:8s} {impl:6s} {rec['desc']:20s} cupti {rec['cupti_warm'] * 1e3:9.2f} us"
                          f"  zlb {rec['zlb_graph'] * 1e3:9.2f} us ({rec['zlb_graph_timer']})"
                          f"  tt {rec['tt_do_bench'] * 1e3:9.2f}  ttg {rec['tt_cudagraph'] * 1e3:9.2f}"
                          f"  {'PASS' if rec['pass'] else 'FAIL'}", flush=True)
                except Exception as e:  # one failing kernel must not stop the table
                    rec = {"op": op, "impl": impl, "size": size,
                           "error": f"{type(e).__name__}: {e}"}
                    traceback.print_exc()
                    print(f"{op} {impl} {size}: ERROR {rec['error']}", flush=True)
                records.append(rec)
                torch.cuda.empty_cache()
    try:
        meta["sync_check"] = sync_fallback_check()
    except Exception as e:
        meta["sync_check"] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    md = table(records, meta)
    with open(os.path.join(args.out, "fidelity.md"), "w") as f:
        f.write(md)
    with open(os.path.join(args.out, "fidelity.json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1, default=str)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
