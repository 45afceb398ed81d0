import pytest

from . import base


@pytest.mark.skipif(True, reason="needs a device this machine lacks")
@pytest.mark.skipped
def test_skipped():
    base.UnaryPointwiseBenchmark(op_name="skipped", torch_op=base.work).run()
