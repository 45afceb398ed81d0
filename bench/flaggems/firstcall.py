"""Where a FlagGems operator's first call in a fresh process goes, and how
long a CUDA process takes to end after its last line (device work: a CUDA
machine with torch, triton and the FlagGems checkout on PYTHONPATH):

    python3 bench/flaggems/firstcall.py OP...        # one process per OP
    python3 bench/flaggems/firstcall.py --exit GIB   # a process's end

For each OP: seconds to import torch and flag_gems, Triton's per-process
key (a hash of its own compiler files and libtriton; computed once per
process, on the first kernel), the operator's first call on a float16
[64, 64] input and its second call, then the first call's 15 most costly
functions (cProfile, own time). --exit: a child allocates GIB GiB on the
device through torch, runs a kernel, prints the time and calls os._exit;
the parent reports the seconds from that line to its waitpid.
"""
import cProfile
import io
import os
import pstats
import subprocess
import sys
import time

CALLS = {
    "abs": "flag_gems.abs(x)",
    "add": "flag_gems.add(x, x)",
    "softmax": "flag_gems.softmax(x, -1)",
    "sum": "flag_gems.sum(x)",
    "sort": "flag_gems.sort(x, -1)",
    "nonzero": "flag_gems.nonzero(x)",
    "dropout": "flag_gems.dropout(x, 0.5, True)",
}


def child(op):
    t0 = time.perf_counter()
    import torch
    t1 = time.perf_counter()
    import flag_gems
    t2 = time.perf_counter()
    try:
        from triton.compiler.compiler import triton_key
    except ImportError:
        from triton.runtime.cache import triton_key
    triton_key()
    t3 = time.perf_counter()
    x = torch.randn(64, 64, dtype=torch.float16, device="cuda")
    torch.cuda.synchronize()
    call = compile(CALLS[op], op, "eval")
    env = {"flag_gems": flag_gems, "x": x}
    prof = cProfile.Profile()
    t4 = time.perf_counter()
    prof.enable()
    eval(call, env)
    torch.cuda.synchronize()
    prof.disable()
    t5 = time.perf_counter()
    eval(call, env)
    torch.cuda.synchronize()
    t6 = time.perf_counter()
    print(f"{op}\timport_torch={t1 - t0:.2f}\timport_flag_gems={t2 - t1:.2f}"
          f"\ttriton_key={t3 - t2:.2f}\tfirst_call={t5 - t4:.2f}\tsecond_call={t6 - t5:.4f}")
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(15)
    print("\n".join("    " + ln for ln in s.getvalue().splitlines()[:40] if ln.strip()))
    sys.stdout.flush()


def exit_child(gib):
    import torch
    x = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device="cuda")
    x.fill_(1)
    torch.cuda.synchronize()
    print(f"{time.time():.6f}", flush=True)
    os._exit(0)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--child"]:
        return child(args[1])
    if args[:1] == ["--exit-child"]:
        return exit_child(float(args[1]))
    if args[:1] == ["--exit"]:
        for gib in args[1:]:
            for rep in range(3):
                p = subprocess.Popen([sys.executable, __file__, "--exit-child", gib],
                                     stdout=subprocess.PIPE, text=True)
                line = p.stdout.readline()
                p.wait()
                t = time.time()
                try:
                    print(f"exit\tgib={gib}\trep={rep}\tline_to_reaped_s={t - float(line):.3f}")
                except ValueError:
                    print(f"exit\tgib={gib}\trep={rep}\tno line (rc {p.returncode})")
        return 0
    for op in args:
        if op not in CALLS:
            print(f"firstcall.py: unknown operator {op!r} (known: {' '.join(CALLS)})",
                  file=sys.stderr)
            return 2
        subprocess.run([sys.executable, __file__, "--child", op], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
