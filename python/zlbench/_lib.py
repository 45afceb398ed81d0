"""libzlbench.so through ctypes: finding it, its declarations, its errors.

The library is looked for in this order: ``$ZL_LIB_DIR`` (the folder holding
libzlbench.so, or the operator-library folder ``<prefix>/lib/zlbench`` whose
parent holds it), then next to this package (a wheel built with the library),
then the repository's build folders (``build/lib``, ``build-test/lib``,
``build-gpu/lib``) when the package is used from the source tree.
"""
import ctypes
import os
import threading

API_MAJOR = 1
API_MINOR = 1     # the options' `counts` (do_bench's Triton counts)
LIB_NAME = "libzlbench.so"
MAX_QUANTILES = 8

# The API's codes (include/zlbench/api.h).
EINVAL = -999
ENOTFOUND = -995
EUNAVAIL = -994
EUNSUPPORTED = -992
EFATAL = -990
EPOISONED = -989
EOP = -987
EMISMATCH = -988  # an integrity check failed (API 1.3)
EINTR = -986

# "cupti" is the trace timer's former name, still accepted.
TIMERS = {"auto": 0, "graph": 1, "direct": 2, "trace": 3, "cupti": 3, "queue": 4}
RETURN_MODES = {"median": 0, "mean": 1, "min": 2, "max": 3, "all": 4}
STOPS = {"budget": 0, "noise": 1}
COUNTS = {"budget": 0, "triton": 1}


class ZlbenchError(RuntimeError):
    """An error from libzlbench: ``code`` (negative), ``name`` ("ZLB_EINVAL"),
    ``vendor_code`` and ``vendor_name`` (the runtime's, when there is one)."""

    def __init__(self, message, code=0, name="", vendor_code=0, vendor_name=""):
        super().__init__(message)
        self.code = code
        self.name = name
        self.vendor_code = vendor_code
        self.vendor_name = vendor_name


class InvalidArgument(ZlbenchError, ValueError):
    """An option or argument libzlbench refused."""


class UnavailableError(ZlbenchError):
    """The backend's runtime, or the device, is not available here."""


class FatalError(ZlbenchError):
    """A device fault (illegal address, ...): no latency; the process's
    device context is unusable from here on."""


class PoisonedError(ZlbenchError):
    """A capture attempt left the device context unusable
    (BENCHMARK_CAPTURE_POISONED): measure in a fresh process with
    ``deny_capture=True``."""


class ApiError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("vendor_code", ctypes.c_int),
                ("vendor_name", ctypes.c_char * 64), ("msg", ctypes.c_char * 768)]


class MeasureOpts(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("timer", ctypes.c_int),
        ("warmup_ms", ctypes.c_double),
        ("rep_ms", ctypes.c_double),
        ("return_mode", ctypes.c_int),
        ("nquantiles", ctypes.c_int),
        ("quantiles", ctypes.c_double * MAX_QUANTILES),
        ("repeat", ctypes.c_int),
        ("flush", ctypes.c_int),
        ("flush_bytes", ctypes.c_size_t),
        ("deny_capture", ctypes.c_int),
        ("stop", ctypes.c_int),
        ("max_noise", ctypes.c_double),
        ("min_samples", ctypes.c_int),
        ("min_time_ms", ctypes.c_double),
        ("timeout_ms", ctypes.c_double),
        ("graph_max_launches", ctypes.c_int),
        ("graph_replay_ms", ctypes.c_double),
        ("graph_min_replays", ctypes.c_int),
        ("max_samples", ctypes.c_int),
        ("trace_max_samples", ctypes.c_int),
        ("counts", ctypes.c_int),  # API 1.1
    ]


CALL_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.POINTER(ApiError))
CAPTURE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                              ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ApiError))


def _candidates():
    env = os.environ.get("ZL_LIB_DIR", "")
    if env:
        yield os.path.join(env, LIB_NAME)
        yield os.path.join(os.path.dirname(os.path.abspath(env)), LIB_NAME)
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, LIB_NAME)
    repo = os.path.dirname(os.path.dirname(here))
    for build in ("build", "build-test", "build-gpu"):
        yield os.path.join(repo, build, "lib", LIB_NAME)


_lock = threading.Lock()
_lib = None
_path = None


def _declare(lib):
    c = ctypes
    sig = {
        "zlb_api_version": (c.c_int, []),
        "zlb_api_error_name": (c.c_char_p, [c.c_int]),
        "zlb_session_open": (c.c_int, [c.c_char_p, c.c_int, c.POINTER(c.c_void_p),
                                       c.POINTER(ApiError)]),
        "zlb_session_close": (None, [c.c_void_p]),
        "zlb_session_backend": (c.c_char_p, [c.c_void_p]),
        "zlb_session_device": (c.c_int, [c.c_void_p]),
        "zlb_session_device_name": (c.c_char_p, [c.c_void_p]),
        "zlb_session_has_graphs": (c.c_int, [c.c_void_p]),
        "zlb_session_stream": (c.c_void_p, [c.c_void_p]),
        "zlb_session_sync": (c.c_int, [c.c_void_p, c.POINTER(ApiError)]),
        "zlb_measure_opts_init": (None, [c.c_void_p]),
        "zlb_measure": (c.c_int, [c.c_void_p, c.POINTER(MeasureOpts), CALL_FN, CAPTURE_FN,
                                  c.c_void_p, c.POINTER(c.c_void_p), c.POINTER(ApiError)]),
        "zlb_result_free": (None, [c.c_void_p]),
        "zlb_result_number": (c.c_int, [c.c_void_p, c.c_char_p, c.POINTER(c.c_double)]),
        "zlb_result_string": (c.c_int, [c.c_void_p, c.c_char_p, c.POINTER(c.c_char_p)]),
        "zlb_result_array": (c.c_int, [c.c_void_p, c.c_char_p,
                                       c.POINTER(c.POINTER(c.c_double)),
                                       c.POINTER(c.c_size_t)]),
        "zlb_result_key": (c.c_char_p, [c.c_size_t, c.POINTER(c.c_char)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    # API 1.3 (zlbench.ab): declared where the library has it; ab() says
    # which version it needs where not.
    if hasattr(lib, "zlb_ab_verdict"):
        p = c.POINTER(c.c_double)
        lib.zlb_ab_verdict.restype = c.c_int
        lib.zlb_ab_verdict.argtypes = [p, p, p, p, c.c_size_t, c.c_double, c.c_void_p,
                                       c.POINTER(ApiError)]


def _check_abi(lib, path):
    version = lib.zlb_api_version()
    if version // 10000 != API_MAJOR or version % 10000 < API_MINOR:
        raise ImportError(f"{path} implements zlbench API {version // 10000}.{version % 10000}; "
                          f"this package needs {API_MAJOR}.{API_MINOR} or a later {API_MAJOR}.x "
                          f"(its options' `counts`): rebuild the library or the package")
    # The library must know every option field this module sets: its
    # struct may be larger (a newer minor version reads ours by its size),
    # not smaller.
    buf = ctypes.create_string_buffer(4096)
    lib.zlb_measure_opts_init(buf)
    size = ctypes.c_size_t.from_buffer(buf).value
    if size < ctypes.sizeof(MeasureOpts):
        raise ImportError(f"{path}: the options struct is {size} bytes there and "
                          f"{ctypes.sizeof(MeasureOpts)} here: the library is older than "
                          f"the package; rebuild it")
    return version


def library():
    """The loaded libzlbench.so (loaded on first use)."""
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if not os.path.isfile(path):
                tried.append(f"{path} (absent)")
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({e})")
                continue
            _declare(lib)
            _check_abi(lib, path)
            _lib, _path = lib, path
            return lib
        raise ImportError("libzlbench.so not found; build it (cmake --build BUILD: "
                          "BUILD/lib/libzlbench.so) and set ZL_LIB_DIR to its folder. Tried: "
                          + "; ".join(tried))


def library_path():
    """Where libzlbench.so was loaded from (loading it if needed)."""
    library()
    return _path


def api_version():
    """The (major, minor) API version of the loaded libzlbench.so."""
    v = library().zlb_api_version()
    return (v // 10000, v % 10000)


def error_name(code):
    return library().zlb_api_error_name(code).decode()


def raise_error(err, context=""):
    """Raise the ZlbenchError subclass for a filled ApiError."""
    code = err.code
    msg = err.msg.decode("utf-8", "replace")
    if context:
        msg = f"{context}: {msg}"
    cls = {EINVAL: InvalidArgument, EUNAVAIL: UnavailableError, EFATAL: FatalError,
           EPOISONED: PoisonedError}.get(code, ZlbenchError)
    raise cls(msg, code, error_name(code), err.vendor_code,
              err.vendor_name.decode("utf-8", "replace"))
