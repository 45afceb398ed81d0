"""Like FlagGems' test_blas_perf_parallel.py: a file that repeats the mark of
an operator that has its own file (here `add`, whose file is test_add.py),
and sorts before it. The batch must run test_add.py; this test says so
loudly when it is run instead."""
import pytest

from . import base


@pytest.mark.add
def test_perf_add_parallel():
    print("ZLB-MINI: test_a_perf_parallel.py::test_perf_add_parallel ran")
    bench = base.BinaryPointwiseBenchmark(op_name="add_parallel", torch_op=base.work)
    bench.run()
