import pytest

import module_that_does_not_exist  # noqa: F401  (collection fails here)

from . import base


@pytest.mark.broken
def test_broken():
    base.UnaryPointwiseBenchmark(op_name="broken", torch_op=base.work).run()
