"""An operator that says what its child was given: the variables the batch
sets from its backend (GEMS_VENDOR, the visibility variable) and its
command line (--mode, --level, --dtypes, --shape_file)."""
import os
import sys

import pytest


@pytest.mark.envdump
def test_envdump():
    for k in ("GEMS_VENDOR", "ZL_BACKEND", "ZL_FG_OP", "CUDA_VISIBLE_DEVICES",
              "MUSA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"):
        print(f"ENV {k}={os.environ.get(k, '-')}")
    print("ARGV " + " ".join(sys.argv[1:]))
