import pytest

from . import base, consts


@pytest.mark.intonly
def test_intonly():
    base.UnaryPointwiseBenchmark(op_name="intonly", torch_op=base.work,
                                 dtypes=consts.INT_DTYPES).run()
