import os
import time

import pytest

from . import base


def forever(shape, dtype):
    # ZLB_MINI_HANG_DTYPES=float32: hang at that dtype only (a batch's
    # all-dtypes child times out, its level-2 children of the other dtypes
    # pass).
    only = os.environ.get("ZLB_MINI_HANG_DTYPES", "")
    if only and str(dtype) not in only.split(","):
        return 0.0
    while True:
        time.sleep(1)


@pytest.mark.hang
def test_hang():
    base.UnaryPointwiseBenchmark(op_name="hang", torch_op=forever).run()
