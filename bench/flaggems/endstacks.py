"""A pytest plugin for bench/flaggems/childtime.sh: where does a child's
time go after its session's end? From pytest_sessionfinish on it dumps every
thread's stack every 0.25 s (faulthandler) to $ZLB_END_STACKS/<pid>.txt,
until the process ends. A diagnostic: in one run on the H200 a child died
of SIGSEGV at its end with the dumping thread running.

  PYTEST_ADDOPTS="-p endstacks" PYTHONPATH=bench/flaggems:... ZLB_END_STACKS=/tmp/st ...
"""
import faulthandler
import os

import pytest

_files = []


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    d = os.environ.get("ZLB_END_STACKS", "")
    if not d or not os.path.isabs(d):
        return
    os.makedirs(d, exist_ok=True)
    f = open(os.path.join(d, f"{os.getpid()}.txt"), "w")
    _files.append(f)            # open until the process ends
    faulthandler.dump_traceback_later(0.25, repeat=True, file=f)
