"""zlbench for Python: time GPU (or host) work with zlbench's engine.

``do_bench`` and ``do_bench_cudagraph`` are drop-ins for Triton's
(``triton.testing``): same signatures, defaults and return types, timed by
zlbench (the graph timer with per-shape fallback to direct timing by
default; ``timer=`` selects). ``measure`` returns a :class:`Result` with
every sample, the timer used, the fallback marker, the verdict and the
clocks. See docs/python.md.
"""
from ._lib import (FatalError, InvalidArgument, PoisonedError,
                   UnavailableError, ZlbenchError, api_version, library_path)
from ._integrity import Integrity, IntegrityError
from ._bench import (Fallback, Result, close_sessions, do_bench, do_bench_cudagraph,
                     measure)
from ._ab import ABBlock, ABResult, ab
from ._ab import verdict as ab_verdict

__version__ = "0.1.0"

__all__ = [
    "Fallback", "FatalError", "Integrity", "IntegrityError", "InvalidArgument", "PoisonedError", "Result",
    "UnavailableError", "ZlbenchError", "api_version", "close_sessions", "do_bench", "do_bench_cudagraph",
    "library_path", "measure",
    "ABBlock", "ABResult", "ab", "ab_verdict",
]
