"""FlagGems' benchmark conftest in miniature: the same options and Config."""
import os

import pytest

from . import consts


class BenchConfig:
    def __init__(self):
        self.mode = consts.BenchMode.KERNEL
        self.bench_level = consts.BenchLevel.COMPREHENSIVE
        self.warm_up = consts.DEFAULT_WARMUP_TIME
        self.repetition = consts.DEFAULT_ITER_TIME
        self.user_desired_dtypes = None
        self.user_desired_metrics = None
        self.shape_file = os.path.join(os.path.dirname(__file__), "core_shapes.yaml")
        self.query = False
        self.record_log = False


Config = BenchConfig()
results = {}


def pytest_addoption(parser):
    parser.addoption("--mode", action="store", default="kernel",
                     choices=[m.value for m in consts.BenchMode])
    parser.addoption("--level", action="store", default="comprehensive",
                     choices=[lv.value for lv in consts.BenchLevel])
    parser.addoption("--warmup", default=consts.DEFAULT_WARMUP_TIME)
    parser.addoption("--iter", default=consts.DEFAULT_ITER_TIME)
    parser.addoption("--query", action="store_true", default=False)
    parser.addoption("--metrics", action="append", default=None,
                     choices=consts.ALL_AVAILABLE_METRICS)
    parser.addoption("--dtypes", action="append", default=None,
                     choices=consts.FLOAT_DTYPES + consts.INT_DTYPES + consts.BOOL_DTYPES)
    parser.addoption("--shape_file", action="store",
                     default=os.path.join(os.path.dirname(__file__), "core_shapes.yaml"))
    parser.addoption("--record", action="store", default="none", choices=["none", "log", "json"])


def pytest_configure(config):
    global Config  # noqa: F824
    Config.mode = consts.BenchMode(config.getoption("--mode"))
    Config.bench_level = consts.BenchLevel(config.getoption("--level"))
    Config.warm_up = int(config.getoption("--warmup"))
    Config.repetition = int(config.getoption("--iter"))
    Config.user_desired_dtypes = config.getoption("--dtypes")
    Config.user_desired_metrics = config.getoption("--metrics")
    Config.shape_file = config.getoption("--shape_file")
    Config.query = config.getoption("--query")
    Config.record_log = config.getoption("--record") == "log"


def update_result(op_name, result):
    results.setdefault(op_name, []).append(result)


def emit_record_logger(message):
    pass


@pytest.fixture(scope="function", autouse=True)
def clear_function_cache():
    yield
