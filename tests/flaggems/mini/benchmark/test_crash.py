import os
import signal

import pytest

from . import base


def die(shape, dtype):
    os.kill(os.getpid(), signal.SIGSEGV)


@pytest.mark.crash
def test_crash():
    base.UnaryPointwiseBenchmark(op_name="crash", torch_op=die).run()
