"""Stand-in for Triton in the miniature suite: only what base.py uses."""
from . import testing  # noqa: F401
