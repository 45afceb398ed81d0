"""Time the zlbench candidate kernels of the fidelity cases with Triton's
do_bench and do_bench_cudagraph (FlagGems' settings: return_mode median;
do_bench with its default 25/100 ms budgets, do_bench_cudagraph rep=100),
five repeated measurements each, and the wall time of every measurement.
Usage: triton_timers.py LIBRARY CASES OUT.json"""
import json
import sys
import time

import torch
import triton
import triton.testing as tt

from zlb_ops import Library, Runner


def parse_cases(path):
    cases = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        op, dtype, shape = line.split(None, 2)
        cases.append((op, dtype, json.loads(shape)))
    return cases


def main():
    lib = Library(sys.argv[1])
    sm = torch.cuda.get_device_properties(0).multi_processor_count
    out = {"triton": triton.__version__, "torch": torch.__version__,
           "device": torch.cuda.get_device_name(0), "cases": []}
    for op, dtype, shape in parse_cases(sys.argv[2]):
        r = Runner(torch, lib, op, dtype, shape, sm)
        fn = r.fn(1)
        rec = {"op": op, "dtype": dtype, "shape": shape, "do_bench": [], "do_bench_cudagraph": [],
               "wall_do_bench": [], "wall_do_bench_cudagraph": []}
        fn()
        torch.cuda.synchronize()
        for _ in range(5):
            t0 = time.perf_counter()
            rec["do_bench"].append(tt.do_bench(fn, return_mode="median"))
            rec["wall_do_bench"].append(time.perf_counter() - t0)
        for _ in range(5):
            t0 = time.perf_counter()
            with torch.cuda.stream(torch.cuda.Stream()):
                rec["do_bench_cudagraph"].append(
                    tt.do_bench_cudagraph(fn, rep=100, return_mode="median"))
            rec["wall_do_bench_cudagraph"].append(time.perf_counter() - t0)
        out["cases"].append(rec)
        print(f"{op} {dtype} {shape}: do_bench {rec['do_bench'][0]:.6f} ms, "
              f"cudagraph {rec['do_bench_cudagraph'][0]:.6f} ms", flush=True)
        del r
        torch.cuda.empty_cache()
    json.dump(out, open(sys.argv[3], "w"), indent=1)


if __name__ == "__main__":
    main()
