"""The integrity gate for Python callables (docs/integrity.md, "Python").

``measure(fn, integrity=Integrity(refresh, check))`` (and ``do_bench``,
which passes it on) checks one randomly chosen timed iteration of ``fn``,
not only its first call: before it the engine waits for the device and
calls ``refresh()``, which refills the inputs ``fn`` reads IN PLACE with new
values (the same objects, the same addresses) and poisons the outputs it
writes; the iteration is timed as every other one (a call, a graph replay,
a queue batch) and left out of the samples; then ``check()`` compares the
outputs of ``fn`` with a reference computed on the refreshed inputs. A
mismatch raises :class:`IntegrityError` naming the timed iteration. Where
the backend has a kernel tracer that names streams (CUPTI), one call is
traced first and a kernel on another stream than the one ``fn`` was given
is refused with the same error.
"""
import ctypes

from . import _lib
from ._lib import ApiError

INTEGRITY_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                                ctypes.c_void_p, ctypes.POINTER(ApiError))
_MSG = 767  # room in ApiError.msg, less the terminator


class _CIntegrity(ctypes.Structure):
    """zlb_integrity_t (include/zlbench/api.h, API 1.3)."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("refresh", INTEGRITY_FN),
                ("check", INTEGRITY_FN), ("user", ctypes.c_void_p),
                ("seed", ctypes.c_ulonglong), ("side_streams", ctypes.c_int)]


class IntegrityError(_lib.ZlbenchError):
    """The integrity gate refused ``fn``: the outputs of timed iteration
    ``iteration`` (1-based; 0: a call after the timed samples) did not match
    the reference on fresh inputs (a result cached across calls, work
    skipped after the first call), or ``fn`` ran a kernel on another stream
    (``iteration`` None). The exception ``check()`` raised, if any, is the
    ``__cause__``."""

    def __init__(self, message, iteration=None, **kw):
        super().__init__(message, _lib.EMISMATCH, "ZLB_EMISMATCH", **kw)
        self.iteration = iteration


class Integrity:
    """What ``fn`` reads and writes, for the integrity gate.

    refresh()      refill every input fn reads in place with new values (the
                   same objects: a cache keyed by address or identity must
                   miss) and poison the outputs fn writes; called once,
                   after the device is idle
    check()        compare fn's latest outputs with a reference computed on
                   the refreshed inputs: return False or raise on mismatch
                   (the exception's text is in the error), anything else is
                   a match; called once, after the device is idle
    seed           chooses the checked iteration (2 to 10, never the first)
    side_streams   trace one call and refuse kernels on another stream, where
                   the backend's tracer can tell (CUDA with CUPTI)
    """

    def __init__(self, refresh, check, seed=0, side_streams=True):
        if not callable(refresh) or not callable(check):
            raise TypeError("Integrity(refresh, check): both must be callable")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"seed={seed!r}: expected an int in [0, 2**64)")
        self.refresh = refresh
        self.check = check
        self.seed = seed
        self.side_streams = bool(side_streams)

    def __repr__(self):
        return f"Integrity(seed={self.seed}, side_streams={self.side_streams})"


def _fill(err, code, msg):
    e = err.contents
    e.code = code
    e.msg = msg.encode("utf-8", "replace")[:_MSG]


def _describe(exc):
    try:
        return f"{type(exc).__name__}: {exc}"
    except BaseException:  # noqa: B036 - inside a callback nothing may unwind into C
        return f"{type(exc).__name__} (cannot be described)"


class Hooks:
    """One measurement's integrity trampolines. ``run`` is the measurement's
    _Run: an exception of refresh() is kept there and re-raised as fn's are."""

    def __init__(self, integ, run):
        self.integ = integ
        self.run = run
        self.iteration = None      # the iteration checked (1-based; 0 after the samples)
        self.check_exc = None      # what check() raised, if it did
        self.c_refresh = INTEGRITY_FN(self._refresh)
        self.c_check = INTEGRITY_FN(self._check)
        self.struct = _CIntegrity(ctypes.sizeof(_CIntegrity), self.c_refresh, self.c_check,
                                  None, integ.seed, 1 if integ.side_streams else 0)

    def _refresh(self, user, iteration, stream, err):
        if self.run.abort:
            return self.run._stopped(err)
        try:
            self.integ.refresh()
            return 0
        except BaseException as exc:  # every one: nothing may unwind into C
            self.run.exc = exc
            if not isinstance(exc, Exception):
                self.run.abort = True
            _fill(err, _lib.EINTR if isinstance(exc, KeyboardInterrupt) else _lib.EOP,
                  f"integrity refresh: {_describe(exc)}")
            return -1

    def _check(self, user, iteration, stream, err):
        self.iteration = int(iteration)
        if self.run.abort:
            return self.run._stopped(err)
        try:
            ok = self.integ.check()
        except Exception as exc:  # a mismatch, as documented
            self.check_exc = exc
            _fill(err, _lib.EMISMATCH, f"check() raised {_describe(exc)}")
            return _lib.EMISMATCH
        except BaseException as exc:  # noqa: B036 - Ctrl-C, SystemExit: stop
            self.run.exc = exc
            self.run.abort = True
            _fill(err, _lib.EINTR, f"integrity check: {_describe(exc)}")
            return -1
        if ok is False:
            _fill(err, _lib.EMISMATCH, "check() returned False")
            return _lib.EMISMATCH
        return 0

    def error(self, err):
        """The IntegrityError for a refused measurement's filled ApiError."""
        msg = err.msg.decode("utf-8", "replace")
        side = "on another stream" in msg
        e = IntegrityError(msg, None if side else self.iteration,
                           vendor_code=err.vendor_code,
                           vendor_name=err.vendor_name.decode("utf-8", "replace"))
        return e


def measure_integrity(lib, handle, opts, run, hooks, out, err):
    """zlb_measure_integrity, declared on first use (a library before API
    1.3 does not have it)."""
    f = getattr(lib, "zlb_measure_integrity", None)
    if f is None or lib.zlb_api_version() % 10000 < 3:
        raise _lib.ZlbenchError(f"{_lib.library_path()} predates the integrity gate (API 1.3): "
                                "rebuild the library", _lib.EUNSUPPORTED, "ZLB_EUNSUPPORTED")
    if f.argtypes is None:
        from ._lib import CALL_FN, CAPTURE_FN, MeasureOpts
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p, ctypes.POINTER(MeasureOpts), CALL_FN, CAPTURE_FN,
                      ctypes.c_void_p, ctypes.POINTER(_CIntegrity),
                      ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ApiError)]
    return f(handle, opts, run.c_call, run.c_capture, None, ctypes.byref(hooks.struct), out,
             err)
