import pytest

from . import base


@pytest.mark.add
def test_add():
    bench = base.BinaryPointwiseBenchmark(op_name="add", torch_op=base.work)
    bench.run()
