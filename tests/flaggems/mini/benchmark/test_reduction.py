import pytest

from . import base, consts


@pytest.mark.sum
def test_sum():
    base.UnaryPointwiseBenchmark(op_name="sum", torch_op=base.work,
                                 dtypes=consts.FLOAT_DTYPES).run()


@pytest.mark.softmax
def test_softmax():
    base.UnaryPointwiseBenchmark(op_name="softmax", torch_op=base.work,
                                 dtypes=[consts.FLOAT_DTYPES[0], consts.FLOAT_DTYPES[1]]).run()
