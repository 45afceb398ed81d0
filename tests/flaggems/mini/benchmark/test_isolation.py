import sys

import pytest

from . import base


@pytest.mark.isolation
def test_isolation():
    real = sys.modules["triton"]
    # The global module keeps the stand-in's timers (autotuners use them)...
    assert real.testing.do_bench.__module__ == "triton.testing"
    # ...while base.py's name resolves to zlbench's, other attributes forwarded.
    assert base.triton.testing.do_bench.__module__ == "zlbench.pytest_plugin"
    assert base.triton.testing.STANDIN_MS == real.testing.STANDIN_MS
    base.UnaryPointwiseBenchmark(op_name="isolation", torch_op=base.work).run()
