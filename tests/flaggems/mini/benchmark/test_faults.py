import os

import pytest

import zlbench

from . import base


def poison(shape, dtype):
    # What the engine raises when a capture leaves the context unusable;
    # with capture denied for this operator the work runs normally.
    if "poison" not in os.environ.get("ZL_DENY_CAPTURE", "").split(","):
        raise zlbench.PoisonedError("capture left the context unusable (stand-in)")
    return base.work(shape, dtype)


def fatal(shape, dtype):
    raise zlbench.FatalError("illegal address (stand-in)")


@pytest.mark.poison
def test_poison():
    base.UnaryPointwiseBenchmark(op_name="poison", torch_op=poison).run()


@pytest.mark.fatal
def test_fatal():
    base.UnaryPointwiseBenchmark(op_name="fatal", torch_op=fatal).run()
