import time

import pytest

from . import base


def forever(shape, dtype):
    while True:
        time.sleep(1)


@pytest.mark.hang
def test_hang():
    base.UnaryPointwiseBenchmark(op_name="hang", torch_op=forever).run()
