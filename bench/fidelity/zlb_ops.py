"""Drive a zlbench operator library from Python (ctypes mirror of
include/zlbench/op.h, ABI v1), so Triton's timers can time exactly the
kernels zlbench times: same library, same launch path, same stream."""
import ctypes as C

MAX_DIMS, MAX_ARGS, MAX_T = 8, 4, 8
DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16",
          "int32", "int64", "bool"]
FILL_NORMAL, FILL_UNIFORM, FILL_INT, FILL_BOOL, FILL_NONE = range(5)


class Shape(C.Structure):
    _fields_ = [("ndim", C.c_int), ("dims", C.c_int64 * MAX_DIMS),
                ("nargs", C.c_int), ("args", C.c_int64 * MAX_ARGS)]


class Tensor(C.Structure):
    _fields_ = [("name", C.c_char_p), ("dtype", C.c_int), ("ndim", C.c_int),
                ("dims", C.c_int64 * MAX_DIMS), ("numel", C.c_int64), ("fill", C.c_int),
                ("lo", C.c_double), ("hi", C.c_double), ("data", C.c_void_p)]


class Case(C.Structure):
    _fields_ = [("dtype", C.c_int), ("shape", Shape), ("level", C.c_int),
                ("n_in", C.c_int), ("inp", Tensor * MAX_T), ("n_out", C.c_int),
                ("out", (Tensor * MAX_T) * 2), ("bytes", C.c_double), ("flops", C.c_double),
                ("detail", C.c_char * 256), ("check", C.c_int), ("reduce_n", C.c_double),
                ("rtol", C.c_double), ("atol", C.c_double), ("stat_mean", C.c_double),
                ("stat_var", C.c_double), ("config", (C.c_char * 48) * 2),
                ("priv", C.c_void_p)]


class Rng(C.Structure):
    _fields_ = [("seed", C.c_uint64), ("offset", C.c_uint64)]


ALLOC = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_size_t, C.POINTER(C.c_void_p))
FREE = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p)
COPY = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.c_void_p, C.c_size_t)


class Env(C.Structure):
    _fields_ = [("abi_version", C.c_uint32), ("backend", C.c_char_p), ("device", C.c_int),
                ("autotune", C.c_int), ("rng", C.POINTER(Rng)), ("sm_count", C.c_int),
                ("cc_major", C.c_int), ("cc_minor", C.c_int), ("l2_bytes", C.c_size_t),
                ("alloc", ALLOC), ("free", FREE), ("upload", COPY), ("download", COPY),
                ("errbuf", C.c_void_p), ("errlen", C.c_size_t), ("harness", C.c_void_p)]


PREPARE = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(Case), C.c_int)
ENQUEUE = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(Case), C.c_int, C.c_void_p)
RELEASE = C.CFUNCTYPE(None, C.c_void_p, C.POINTER(Case), C.c_int)
CASE_INIT = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(Case))
CASE_RELEASE = C.CFUNCTYPE(None, C.c_void_p, C.POINTER(Case))


class Impl(C.Structure):
    _fields_ = [("name", C.c_char_p), ("flags", C.c_uint), ("prepare", PREPARE),
                ("enqueue", ENQUEUE), ("release", RELEASE)]


class Op(C.Structure):
    _fields_ = [("abi_version", C.c_uint32), ("name", C.c_char_p), ("family", C.c_char_p),
                ("backend", C.c_char_p), ("dtypes", C.c_uint32), ("shape_desc", C.c_char_p),
                ("doc", C.c_char_p), ("case_init", CASE_INIT), ("case_release", CASE_RELEASE),
                ("compare", C.c_void_p), ("baseline", Impl), ("candidate", Impl)]


ADD_OP = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(Op))
ADD_BACKEND = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p)


class Registrar(C.Structure):
    _fields_ = [("abi_version", C.c_uint32), ("ctx", C.c_void_p), ("add_op", ADD_OP),
                ("add_backend", ADD_BACKEND)]


class Library:
    """Loads an operator library and keeps its operators by name."""

    def __init__(self, path):
        self.lib = C.CDLL(path, mode=C.RTLD_GLOBAL)
        self.ops = {}

        def add_op(_reg, op):
            self.ops[op.contents.name.decode()] = op.contents
            return 0

        self._add_op = ADD_OP(add_op)
        self._add_backend = ADD_BACKEND(lambda _r, _d: 0)
        reg = Registrar(1, None, self._add_op, self._add_backend)
        rc = self.lib.zlb_ops_register(C.byref(reg))
        if rc:
            raise RuntimeError(f"zlb_ops_register returned {rc}")


class Runner:
    """One case of one operator, with torch-allocated tensors."""

    def __init__(self, torch, lib, op_name, dtype, shape, sm_count, seed=24301):
        self.torch = torch
        self.op = lib.ops[op_name]
        self.keep = []  # tensors and callbacks that must outlive the case
        self.errbuf = C.create_string_buffer(1024)
        self.rng = Rng(seed, 0)

        def alloc(_env, nbytes, out):
            t = torch.empty(max(int(nbytes), 1), dtype=torch.uint8, device="cuda")
            self.keep.append(t)
            out[0] = t.data_ptr()
            return 0

        def free(_env, _ptr):
            return None

        cudart = None
        for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
            try:
                cudart = C.CDLL(name)
                break
            except OSError:
                pass

        def copy(_env, dst, src, n):
            # cudaMemcpy with cudaMemcpyDefault (4): direction from the pointers.
            return cudart.cudaMemcpy(C.c_void_p(dst), C.c_void_p(src), C.c_size_t(n), 4)

        self._cb = [ALLOC(alloc), FREE(free), COPY(copy), COPY(copy)]
        self.env = Env(1, b"cuda", 0, 0, C.pointer(self.rng), sm_count, 9, 0, 50 << 20,
                       self._cb[0], self._cb[1], self._cb[2], self._cb[3],
                       C.cast(self.errbuf, C.c_void_p), 1024, None)
        self.case = Case()
        self.case.dtype = DTYPES.index(dtype)
        dims, args = shape, []
        if shape and isinstance(shape[0], list):
            dims, args = shape[0], shape[1:]
        self.case.shape.ndim = len(dims)
        for i, d in enumerate(dims):
            self.case.shape.dims[i] = d
        self.case.shape.nargs = len(args)
        for i, a in enumerate(args):
            self.case.shape.args[i] = int(a)
        self._check(self.op.case_init(C.byref(self.env), C.byref(self.case)), "case_init")
        for i in range(self.case.n_in):
            self.case.inp[i].data = self._tensor(self.case.inp[i], fill=True)
        for k in range(self.case.n_out):
            self.case.out[1][k] = self.case.out[0][k]
            for w in (0, 1):
                self.case.out[w][k].data = self._tensor(self.case.out[w][k], fill=False)
        for which, impl in ((0, self.op.baseline), (1, self.op.candidate)):
            if impl.prepare:
                self._check(impl.prepare(C.byref(self.env), C.byref(self.case), which),
                            "prepare")
        torch.cuda.synchronize()

    def _check(self, rc, what):
        if rc:
            raise RuntimeError(f"{what}: {rc}: {self.errbuf.value.decode(errors='replace')}")

    def _tensor(self, t, fill):
        torch = self.torch
        tdt = {0: torch.float16, 1: torch.bfloat16, 2: torch.float32, 3: torch.float64,
               4: torch.int8, 5: torch.uint8, 6: torch.int16, 7: torch.int32, 8: torch.int64,
               9: torch.bool}[t.dtype]
        n = 1
        for i in range(t.ndim):
            n *= t.dims[i]
        t.numel = n
        if not fill or t.fill == FILL_NONE:
            x = torch.empty(max(n, 1), dtype=tdt, device="cuda")
        elif t.fill == FILL_NORMAL:
            x = (torch.randn(n, device="cuda") * (t.hi or 1.0) + t.lo).to(tdt)
        elif t.fill == FILL_UNIFORM:
            x = (torch.rand(n, device="cuda") * (t.hi - t.lo) + t.lo).to(tdt)
        elif t.fill == FILL_INT:
            x = torch.randint(int(t.lo), max(int(t.hi), int(t.lo) + 1), (n,),
                              device="cuda").to(tdt)
        else:
            x = (torch.rand(n, device="cuda") < t.lo).to(tdt)
        self.keep.append(x)
        return x.data_ptr()

    def fn(self, which=1):
        """A callable that enqueues one call on torch's current stream."""
        impl = self.op.candidate if which == 1 else self.op.baseline
        enqueue, env, case, torch = impl.enqueue, C.byref(self.env), C.byref(self.case), self.torch

        def call():
            rc = enqueue(env, case, which, C.c_void_p(torch.cuda.current_stream().cuda_stream))
            if rc:
                raise RuntimeError(f"enqueue: {rc}: {self.errbuf.value.decode()}")
        return call
