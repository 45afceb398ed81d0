"""Stand-in timers: a table timed by these shows 777.000000 ms."""
STANDIN_MS = 777.0
calls = []


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    calls.append("do_bench")
    fn()
    return STANDIN_MS


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    calls.append("do_bench_cudagraph")
    fn()
    return STANDIN_MS
