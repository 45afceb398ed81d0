"""FlagGems' benchmark/base.py in miniature: the Benchmark class, its
dtype check, shape lookup by operator or class name, and get_latency with
the same timer lookups (`triton.testing.do_bench` in kernel mode,
`triton.testing.do_bench_cudagraph` in cudagraph mode, through the module's
`triton` name at call time)."""
import gc
import math
import os
import time
from dataclasses import asdict

import pytest
import triton

from . import consts
from .conftest import Config, emit_record_logger, update_result
from .consts import BenchmarkMetrics, BenchmarkResult


def read_shapes(path):
    """{key: [shape, ...]} from a shape file of FlagGems' layout (a small
    reader: `Key:` lines and `- [a, b]` items under `shapes:`)."""
    out, key = {}, None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            if not line.startswith(" ") and line.endswith(":"):
                key = line[:-1].strip()
                out[key] = []
            elif line.strip().startswith("- [") and key is not None:
                out[key].append(tuple(int(x) for x in line.strip()[3:-1].split(",")))
    return out


class Benchmark:
    DEFAULT_DTYPES = consts.FLOAT_DTYPES
    DEFAULT_SHAPES = consts.DEFAULT_SHAPES

    def __init__(self, op_name, torch_op, dtypes=None, gems_op=None):
        self.op_name = op_name
        self.torch_op = torch_op
        self.gems_op = gems_op or torch_op
        self.dtypes = dtypes if dtypes is not None else self.DEFAULT_DTYPES
        self.shapes = self.DEFAULT_SHAPES

    def set_dtypes(self, user_desired_dtypes):
        if user_desired_dtypes and not all(d in self.dtypes for d in user_desired_dtypes):
            invalid = [d for d in user_desired_dtypes if d not in self.dtypes]
            raise ValueError(
                f"Given dtype(s) '{', '.join(str(d) for d in invalid)}'"
                f"can't be supported by this op '{self.op_name}'"
            )
        self.to_bench_dtypes = user_desired_dtypes if user_desired_dtypes else self.dtypes

    def set_shapes(self, path):
        if not os.path.isfile(path):
            raise FileNotFoundError(f"Shape file '{path}' does not exist.")
        table = read_shapes(path)
        if self.op_name in table:
            self.shapes = table[self.op_name]
            return
        for cls in type(self).__mro__:
            if cls.__name__ in table:
                self.shapes = table[cls.__name__]
                return

    def get_latency(self, op, *args):
        fn = lambda: op(*args)  # noqa: E731
        if Config.mode == consts.BenchMode.KERNEL:
            do_bench = triton.testing.do_bench
            return do_bench(fn, warmup=Config.warm_up, rep=Config.repetition,
                            return_mode="median", grad_to_none=None)
        if Config.mode == consts.BenchMode.CUDAGRAPH:
            do_bench_cudagraph = triton.testing.do_bench_cudagraph
            return do_bench_cudagraph(fn, rep=Config.repetition, return_mode="median",
                                      grad_to_none=None)
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3

    def run(self):
        self.set_dtypes(Config.user_desired_dtypes)
        self.set_shapes(Config.shape_file)
        for dtype in self.to_bench_dtypes:
            metrics = []
            for shape in self.shapes:
                metric = BenchmarkMetrics()
                try:
                    metric.shape_detail = [list(shape)]
                    metric.latency_base = self.get_latency(self.torch_op, shape, dtype)
                    metric.latency = self.get_latency(self.gems_op, shape, dtype)
                    metric.speedup = metric.latency_base / metric.latency
                except Exception as e:
                    metric.error_msg = str(e)
                    pytest.fail(str(e))
                finally:
                    metrics.append(metric)
                    gc.collect()
            result = BenchmarkResult(level=Config.bench_level.value, op_name=self.op_name,
                                     dtype=f"torch.{dtype}", mode=Config.mode.value,
                                     result=metrics)
            print(result)
            update_result(self.op_name, asdict(result))
            emit_record_logger(str(result))


class UnaryPointwiseBenchmark(Benchmark):
    pass


class BinaryPointwiseBenchmark(Benchmark):
    pass


def work(shape, dtype):
    """Host work proportional to the shape (about 1 us per 1024 elements)."""
    n = max(1, math.prod(shape) // 1024)
    s = 0
    for i in range(n * 8):
        s += i
    return s
