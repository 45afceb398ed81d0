"""FlagGems' benchmark constants and result table, in miniature (the same
printed layout: title line, header, dash rule, one row per shape)."""
from dataclasses import dataclass
from enum import Enum
from typing import List, Optional

FLOAT_DTYPES = ["float16", "float32", "bfloat16"]
INT_DTYPES = ["int16", "int32"]
BOOL_DTYPES = ["bool"]
DEFAULT_WARMUP_TIME = 25
DEFAULT_ITER_TIME = 100
DEFAULT_SHAPES = [(64, 64), (1024, 1024)]
DEFAULT_METRICS = ["latency_base", "latency", "speedup"]
ALL_AVAILABLE_METRICS = DEFAULT_METRICS + ["gbps", "tflops"]


class BenchMode(Enum):
    KERNEL = "kernel"
    OPERATOR = "operator"
    WRAPPER = "wrapper"
    CUDAGRAPH = "cudagraph"


class BenchLevel(Enum):
    COMPREHENSIVE = "comprehensive"
    CORE = "core"


@dataclass
class BenchmarkMetrics:
    legacy_shape: Optional[int] = None
    shape_detail: Optional[list] = None
    latency_base: Optional[float] = None
    latency: Optional[float] = None
    speedup: Optional[float] = None
    gbps_base: Optional[float] = None
    gbps: Optional[float] = None
    tflops: Optional[float] = None
    error_msg: Optional[str] = None


@dataclass
class BenchmarkResult:
    op_name: str
    dtype: str
    mode: str
    level: str
    result: List[BenchmarkMetrics]

    def __str__(self) -> str:
        header_title = (
            f"\nOperator: {self.op_name}  Performance Test (dtype={self.dtype}, mode={self.mode},"
            f"level={self.level})\n"
        )
        col_names = [
            f"{'Status':<10}",
            f"{'Torch Latency (ms)':>20}",
            f"{'Gems Latency (ms)':>20}",
            f"{'Gems Speedup':>20}",
        ]
        col_names.append(f"{'Size Detail':>20}\n")
        header_col_names = " ".join(col_names)
        header_break = "-" * len(header_col_names) + "\n"
        return header_title + header_col_names + header_break + "".join(
            self._format_metrics(m) for m in self.result)

    def _format_metrics(self, m: BenchmarkMetrics) -> str:
        base = f"{m.latency_base:.6f}" if m.latency_base is not None else "N/A"
        lat = f"{m.latency:.6f}" if m.latency is not None else "N/A"
        sp = f"{m.speedup:.3f}" if m.speedup is not None else "N/A"
        status = "SUCCESS" if m.error_msg is None else "FAILED"
        detail = m.shape_detail if m.shape_detail is not None else "N/A"
        return f"{status:<10}{base:>20}{lat:>20}{sp:>20}" + " " * 10 + f"{detail}\n"
