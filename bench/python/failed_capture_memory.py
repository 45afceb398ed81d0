"""What a failed CUDA-graph capture keeps in torch, one variant per process.

Six captures of a function that allocates 256 MiB and then synchronises
with the host (so each capture is refused); then the reserved memory that
an empty_cache() does not give back, per capture pool:

  raw            torch alone (CUDAGraph, a pool handle per capture)
  raw_end        the same, then _cuda_endAllocateToPool and _cuda_releasePool
  raw_keep_exc   raw, keeping the exceptions
  zlb_norelease  zlbench.measure with ZL_TORCH_RELEASE_FAILED_CAPTURE=0
  zlb_release    zlbench.measure as shipped

Usage (repository root, a CUDA machine with torch):
  PYTHONPATH=python ZL_LIB_DIR=<build>/lib python3 bench/python/failed_capture_memory.py VARIANT
"""
import gc
import os
import sys

VARIANTS = ("raw", "raw_end", "raw_keep_exc", "zlb_norelease", "zlb_release")
if len(sys.argv) != 2 or sys.argv[1] not in VARIANTS:
    sys.exit("usage: failed_capture_memory.py " + "|".join(VARIANTS))

import torch  # noqa: E402

sys.path.insert(0, "python")
MiB = 1 << 20
v = sys.argv[1]
big = torch.randn(64 * MiB, device="cuda")
s = torch.cuda.Stream()
log = []


def reserved():
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return torch.cuda.memory_reserved() / MiB


def pools():
    segs = torch.cuda.memory_snapshot()
    by = {}
    for sg in segs:
        k = str(sg.get("segment_pool_id"))
        by[k] = by.get(k, 0) + sg["total_size"] // MiB
    return by


keep = []
base = reserved()
if v in ("raw", "raw_end", "raw_keep_exc"):
    for i in range(6):
        h = torch.cuda.graph_pool_handle()
        g = torch.cuda.CUDAGraph(keep_graph=True)
        err = None
        with torch.cuda.stream(s):
            g.capture_begin(pool=h, capture_error_mode="thread_local")
            try:
                y = big * 2
                y.sum().item()
            except Exception as e:
                err = e
            del y
            try:
                g.capture_end()
            except Exception as e:
                log.append("end_exc " + type(e).__name__)
        g.reset()
        if v == "raw_end":
            for name in ("_cuda_endAllocateToPool", "_cuda_releasePool"):
                try:
                    getattr(torch._C, name)(0, h)
                    log.append(name + " ok")
                except Exception as e:
                    log.append(name + " raised " + str(e)[:80])
        if v == "raw_keep_exc":
            keep.append(err)
        del g, err
else:
    import zlbench
    os.environ["ZL_TORCH_RELEASE_FAILED_CAPTURE"] = "1" if v == "zlb_release" else "0"

    def syncs():
        y = big * 2
        y.sum().item()
    for i in range(6):
        r = zlbench.measure(syncs, warmup=1, rep=2)
        log.append(r.timer)
    del r
print(v, "kept MiB", round(reserved() - base), "pools", pools(), "log", sorted(set(log)), flush=True)
