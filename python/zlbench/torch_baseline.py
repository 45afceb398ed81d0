"""Our operators against torch's own kernels: the cases of a zlbench run or
batch folder (every SUCCESS row of its results.json files) timed again
through torch, with the same timer, shapes and dtypes, beside the
candidate's time from the folder.

    python3 -m zlbench.torch_baseline DIR [--timer auto] [--warmup MS] [--rep MS]
                                          [--device N] [--ops a,b] [--out FILE]

``zlbench run|batch --baseline torch`` runs this on its output folder. It
writes DIR/torch_baseline.json (schema zlbench.torch_baseline/1; --out to
put it elsewhere) and prints one line per row and the geometric-mean
speedup of our candidate over torch (torch ms / ours ms: above 1 means ours
is faster). An operator without a torch counterpart here, or whose row does
not fit one, is listed with the reason, never dropped. Exit status: 0, 2
for a bad folder or option, 3 when torch (or a CUDA device) is missing, 6
when the output cannot be written.
"""
import argparse
import json
import math
import os
import sys

SCHEMA = "zlbench.torch_baseline/1"
MAX_RESULTS_BYTES = 16 << 20  # the limit zlbench itself puts on a JSON input


class Skip(Exception):
    """This row has no torch counterpart; the message says why."""


# ---- inputs ---------------------------------------------------------------------


class Inputs:
    """Tensors made as the corpus makes them (docs/operators-cuda.md), on the
    device, outside the timed call."""

    def __init__(self, torch, dtype, device):
        self.t = torch
        self.dtype = dtype
        self.device = device

    def normal(self, dims, dtype=None):
        return self.t.randn(*dims, dtype=dtype or self.dtype, device=self.device)

    def uniform(self, dims, lo, hi, dtype=None):
        x = self.t.rand(*dims, dtype=self.t.float32, device=self.device)
        return (x * (hi - lo) + lo).to(dtype or self.dtype)

    def ints(self, dims, hi, dtype=None):
        return self.t.randint(0, hi, tuple(dims), device=self.device).to(
            dtype or self.t.int64)

    def bools(self, dims, p):
        return self.t.rand(*dims, device=self.device) < p


def _rows_cols(dims):
    n = 1
    for d in dims:
        n *= d
    return n // dims[-1], dims[-1]


# ---- the torch call of each operator ---------------------------------------------
#
# Each builder gets (torch, F, inputs, dims, args) and returns (fn, text): fn
# makes one call of the work, text says which torch call it is.


def _unary(name, positive=False):
    def build(t, F, x, dims, args):
        a = x.uniform(dims, 0.1, 10.0) if positive else x.normal(dims)
        f = getattr(t, name, None) or getattr(F, name)
        return (lambda: f(a)), "torch.%s(x)" % name
    return build


def _functional(name, text, **kw):
    def build(t, F, x, dims, args):
        a = x.normal(dims)
        f = getattr(F, name)
        return (lambda: f(a, **kw)), text
    return build


def _binary(name, b_range=None, a_range=None, ints=False):
    def build(t, F, x, dims, args):
        if ints:
            a, b = x.ints(dims, 4, x.dtype), x.ints(dims, 4, x.dtype)
        else:
            a = x.uniform(dims, *a_range) if a_range else x.normal(dims)
            b = x.uniform(dims, *b_range) if b_range else x.normal(dims)
        f = getattr(t, name)
        return (lambda: f(a, b)), "torch.%s(a, b)" % name
    return build


def _cast(to_fp32):
    def build(t, F, x, dims, args):
        if to_fp32:
            a = x.normal(dims)
            return (lambda: a.float()), "x.float()"
        a = x.normal(dims, t.float32)
        dt = x.dtype
        return (lambda: a.to(dt)), "x.to(%s)" % str(dt)
    return build


def _ternary(kind):
    def build(t, F, x, dims, args):
        if kind == "where":
            c, a, b = x.bools(dims, 0.5), x.normal(dims), x.normal(dims)
            return (lambda: t.where(c, a, b)), "torch.where(cond, a, b)"
        a, b = x.normal(dims), x.normal(dims)
        if kind == "addcmul":
            c = x.normal(dims)
            return (lambda: t.addcmul(a, b, c, value=0.5)), "torch.addcmul(x, t1, t2, value=0.5)"
        if kind == "addcdiv":
            c = x.uniform(dims, 0.5, 2.0)
            return (lambda: t.addcdiv(a, b, c, value=0.5)), "torch.addcdiv(x, t1, t2, value=0.5)"
        w = x.uniform(dims, 0.0, 1.0)
        return (lambda: t.lerp(a, b, w)), "torch.lerp(start, end, weight)"
    return build


def _reduce(name):
    def build(t, F, x, dims, args):
        if len(args) >= 1 and args[0] not in (-1, len(dims) - 1):
            raise Skip("reduces dim %d; the corpus reduces the last" % args[0])
        keep = len(args) >= 2 and args[1] != 0
        a = x.uniform(dims, 0.999, 1.001) if name == "prod" else x.normal(dims)
        if name == "norm":
            f = t.linalg.vector_norm
            return (lambda: f(a, dim=-1, keepdim=keep)), "torch.linalg.vector_norm(x, dim=-1)"
        if name == "var_mean":
            return (lambda: t.var_mean(a, dim=-1, keepdim=keep)), "torch.var_mean(x, dim=-1)"
        f = getattr(t, name)
        return (lambda: f(a, dim=-1, keepdim=keep)), "torch.%s(x, dim=-1)" % name
    return build


def _norm(kind):
    def build(t, F, x, dims, args):
        n = dims[-1]
        a, w = x.normal(dims), x.normal([n])
        if kind == "layer_norm":
            b = x.normal([n])
            return (lambda: F.layer_norm(a, (n,), w, b, 1e-5)), "F.layer_norm(x, (N,), w, b)"
        if not hasattr(F, "rms_norm"):
            raise Skip("this torch has no F.rms_norm")
        return (lambda: F.rms_norm(a, (n,), w, 1e-5)), "F.rms_norm(x, (N,), w)"
    return build


def _softmax(log):
    def build(t, F, x, dims, args):
        a = x.normal(dims)
        f = t.log_softmax if log else t.softmax
        return (lambda: f(a, -1)), "torch.%s(x, -1)" % ("log_softmax" if log else "softmax")
    return build


def _cumsum(t, F, x, dims, args):
    a = x.normal(dims)
    return (lambda: t.cumsum(a, -1)), "torch.cumsum(x, -1)"


def _nonzero(t, F, x, dims, args):
    if x.dtype == t.bool:
        a = x.bools(dims, 0.3)
    else:
        a = x.ints(dims, 2, x.dtype)
    return (lambda: t.nonzero(a)), "torch.nonzero(x)"


def _sort(t, F, x, dims, args):
    a = x.normal(dims)
    return (lambda: t.sort(a, dim=-1)), "torch.sort(x, dim=-1)"


def _topk(t, F, x, dims, args):
    n = dims[-1]
    k = args[0] if args else min(n, 8)
    a = x.normal(dims)
    return (lambda: t.topk(a, k, dim=-1)), "torch.topk(x, %d, dim=-1)" % k


def _random(kind):
    def build(t, F, x, dims, args):
        dt, dev = x.dtype, x.device
        if kind == "rand":
            return (lambda: t.rand(*dims, dtype=dt, device=dev)), "torch.rand(shape)"
        if kind == "randn":
            return (lambda: t.randn(*dims, dtype=dt, device=dev)), "torch.randn(shape)"
        if kind == "dropout":
            a = x.normal(dims)
            return (lambda: F.dropout(a, 0.5, training=True)), "F.dropout(x, 0.5)"
        n = 1
        for d in dims:
            n *= d
        return (lambda: t.randperm(n, device=dev)), "torch.randperm(n)"
    return build


def _blas(kind):
    def build(t, F, x, dims, args):
        if kind == "mv":
            m, k = (dims[0], dims[1]) if len(dims) == 2 else (dims[-3], dims[-1])
            a, v = x.normal([m, k]), x.normal([k])
            return (lambda: t.mv(a, v)), "torch.mv(a, v)"
        if len(dims) == 4:
            b, m, n, k = dims
        elif len(dims) == 3:
            b, (m, n, k) = 1, dims
        else:
            raise Skip("shape %s is not [M, N, K] or [B, M, N, K]" % (dims,))
        if kind == "bmm":
            a, c = x.normal([b, m, k]), x.normal([b, k, n])
            return (lambda: t.bmm(a, c)), "torch.bmm(a, b)"
        a, c = x.normal([m, k]), x.normal([k, n])
        if kind == "addmm":
            bias = x.normal([n])
            return (lambda: t.addmm(bias, a, c)), "torch.addmm(bias, a, b)"
        return (lambda: t.mm(a, c)), "torch.mm(a, b)"
    return build


def _movement(kind):
    def build(t, F, x, dims, args):
        m, n = _rows_cols(dims)
        if kind == "contiguous":
            a = x.normal(dims)
            return (lambda: a.transpose(-2, -1).contiguous()), "x.transpose(-2, -1).contiguous()"
        if kind == "cat":
            a, b = x.normal(dims), x.normal(dims)
            return (lambda: t.cat([a, b], -1)), "torch.cat([a, b], -1)"
        if kind == "index_select":
            k = args[0] if args else m
            a, idx = x.normal([m, n]), x.ints([k], m)
            return (lambda: t.index_select(a, 0, idx)), "torch.index_select(x, 0, index)"
        if kind == "gather":
            a, idx = x.normal(dims), x.ints(dims, n)
            return (lambda: t.gather(a, -1, idx)), "torch.gather(x, -1, index)"
        if kind == "scatter":
            k = max(n // 2, 1)
            a = x.normal(dims)
            # distinct positions per row: the first k of a random permutation
            idx = t.rand(m, n, device=x.device).argsort(dim=-1)[:, :k].contiguous()
            idx = idx.reshape(list(dims[:-1]) + [k])
            src = x.normal(list(dims[:-1]) + [k])
            return (lambda: a.scatter(-1, idx, src)), "x.scatter(-1, index, src)"
        if kind == "embedding":
            if len(dims) == 3:
                bsz, vocab, d = dims
            elif len(dims) == 2:
                (bsz, d), vocab = dims, 32000
            else:
                raise Skip("shape %s is not [B, V, D] or [B, D]" % (dims,))
            w, idx = x.normal([vocab, d]), x.ints([bsz], vocab)
            return (lambda: F.embedding(idx, w)), "F.embedding(indices, weight)"
        out = t.empty(*dims, dtype=x.dtype, device=x.device)
        return (lambda: out.fill_(1.5)), "out.fill_(1.5)"
    return build


CALLS = {
    "abs": _unary("abs"), "neg": _unary("neg"), "exp": _unary("exp"),
    "log": _unary("log", True), "sqrt": _unary("sqrt", True), "rsqrt": _unary("rsqrt", True),
    "relu": _unary("relu"), "sigmoid": _unary("sigmoid"), "tanh": _unary("tanh"),
    "sin": _unary("sin"), "cos": _unary("cos"), "erf": _unary("erf"), "exp2": _unary("exp2"),
    "log2": _unary("log2", True), "log1p": _unary("log1p", True), "expm1": _unary("expm1"),
    "reciprocal": _unary("reciprocal", True), "floor": _unary("floor"), "ceil": _unary("ceil"),
    "gelu": _functional("gelu", "F.gelu(x)"),
    "gelu_tanh": _functional("gelu", "F.gelu(x, approximate='tanh')", approximate="tanh"),
    "silu": _functional("silu", "F.silu(x)"),
    "hardsigmoid": _functional("hardsigmoid", "F.hardsigmoid(x)"),
    "hardswish": _functional("hardswish", "F.hardswish(x)"),
    "mish": _functional("mish", "F.mish(x)"),
    "elu": _functional("elu", "F.elu(x)"),
    "leaky_relu": _functional("leaky_relu", "F.leaky_relu(x, 0.01)", negative_slope=0.01),
    "clamp": None,  # below: two scalars
    "cast_to_fp32": _cast(True), "cast_from_fp32": _cast(False),
    "add": _binary("add"), "sub": _binary("sub"), "mul": _binary("mul"),
    "div": _binary("div", b_range=(0.5, 2.0)),
    "pow": _binary("pow", a_range=(0.5, 2.0), b_range=(-4.0, 4.0)),
    "maximum": _binary("maximum"), "minimum": _binary("minimum"), "atan2": _binary("atan2"),
    "hypot": _binary("hypot"), "logaddexp": _binary("logaddexp"),
    "remainder": _binary("remainder", b_range=(0.5, 2.0)),
    "eq": _binary("eq", ints=True), "ne": _binary("ne", ints=True), "gt": _binary("gt", ints=True),
    "ge": _binary("ge", ints=True), "lt": _binary("lt", ints=True), "le": _binary("le", ints=True),
    "where": _ternary("where"), "addcmul": _ternary("addcmul"),
    "addcdiv": _ternary("addcdiv"), "lerp": _ternary("lerp"),
    "sum": _reduce("sum"), "mean": _reduce("mean"), "amax": _reduce("amax"),
    "amin": _reduce("amin"), "argmax": _reduce("argmax"), "argmin": _reduce("argmin"),
    "prod": _reduce("prod"), "var_mean": _reduce("var_mean"), "norm": _reduce("norm"),
    "layer_norm": _norm("layer_norm"), "rms_norm": _norm("rms_norm"),
    "softmax": _softmax(False), "log_softmax": _softmax(True),
    "cumsum": _cumsum, "nonzero": _nonzero, "sort": _sort, "topk": _topk,
    "rand": _random("rand"), "randn": _random("randn"), "dropout": _random("dropout"),
    "randperm": _random("randperm"),
    "mm": _blas("mm"), "bmm": _blas("bmm"), "addmm": _blas("addmm"), "mv": _blas("mv"),
    "contiguous": _movement("contiguous"), "cat": _movement("cat"),
    "index_select": _movement("index_select"), "gather": _movement("gather"),
    "scatter": _movement("scatter"), "embedding": _movement("embedding"),
    "fill": _movement("fill"),
}


def _clamp(t, F, x, dims, args):
    a = x.normal(dims)
    return (lambda: t.clamp(a, -0.5, 0.5)), "torch.clamp(x, -0.5, 0.5)"


CALLS["clamp"] = _clamp


# ---- the folder's rows -----------------------------------------------------------


def _parse_shape(text):
    """A row's "shape": "[d0, d1]" or "[[d0, d1], a0, a1]" (dims, args)."""
    try:
        v = json.loads(text)
    except (TypeError, ValueError):
        raise Skip("shape %r is not a list" % (text,))
    if isinstance(v, list) and v and isinstance(v[0], list):
        dims, args = v[0], v[1:]
    else:
        dims, args = v, []
    ok = isinstance(dims, list) and 1 <= len(dims) <= 8 and all(
        type(d) is int and 0 < d < (1 << 40) for d in dims) and all(
        type(a) is int and abs(a) < (1 << 40) for a in args)
    if not ok:
        raise Skip("shape %r has no positive integer extents" % (text,))
    return dims, args


def load_rows(folder):
    """Every SUCCESS row of the results.json files under folder (attempts/
    left out), as dicts; raises ValueError for a file that is not one."""
    rows = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "attempts")
        if "results.json" not in files:
            continue
        path = os.path.join(root, "results.json")
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        if os.path.getsize(path) > MAX_RESULTS_BYTES:
            raise ValueError("%s: larger than %d bytes" % (path, MAX_RESULTS_BYTES))
        with open(path, encoding="utf-8") as f:
            try:
                doc = json.load(f)
            except ValueError as e:
                raise ValueError("%s: not JSON (%s)" % (path, e))
        if not isinstance(doc, dict) or not isinstance(doc.get("tables"), list):
            raise ValueError("%s: not a zlbench results file (no tables)" % path)
        for tab in doc["tables"]:
            if not isinstance(tab, dict) or not isinstance(tab.get("rows"), list):
                raise ValueError("%s: a table without rows" % path)
            op = tab.get("operator") or doc.get("operator")
            dtype = tab.get("dtype")
            if not isinstance(op, str) or not isinstance(dtype, str):
                raise ValueError("%s: a table without operator or dtype" % path)
            for r in tab["rows"]:
                if not isinstance(r, dict) or r.get("status") != "SUCCESS":
                    continue
                cand = r.get("candidate") if isinstance(r.get("candidate"), dict) else {}
                ms = cand.get("ms")
                rows.append({
                    "operator": op, "backend": doc.get("backend"), "dtype": dtype,
                    "shape": r.get("shape"), "detail": r.get("detail"),
                    "ours_ms": ms if isinstance(ms, (int, float)) and ms > 0 else None,
                    "ours_impl": cand.get("impl"), "ours_timer": cand.get("timer"),
                    "source": os.path.relpath(path, folder),
                })
    return rows


def _geomean(values):
    v = [x for x in values if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def compare(rows, torch, measure, F=None, *, timer="auto", warmup=25, rep=100, device=None,
            backend="cuda", ops=None):
    """Time each row's torch call with ``measure`` (zlbench.measure's
    signature); returns the output rows. Rows of another backend than
    ``backend`` are skipped: torch on one device against ours on another
    says nothing."""
    if F is None:
        F = torch.nn.functional  # noqa: N806 (torch's own spelling)
    dev = "cpu" if backend == "host" else "cuda" if device is None else "cuda:%d" % device
    out = []
    for r in rows:
        res = dict(r)
        res.update(call=None, torch_ms=None, torch_timer=None, torch_marker=None,
                   speedup=None, skipped=None)
        out.append(res)
        if ops and r["operator"] not in ops:
            res["skipped"] = "not in --ops"
            continue
        build = CALLS.get(r["operator"])
        try:
            if r["backend"] != backend:
                raise Skip("a %s row; torch runs on %s here" % (r["backend"], backend))
            if build is None:
                raise Skip("no torch counterpart here")
            dt = getattr(torch, r["dtype"], None)
            if dt is None:
                raise Skip("torch has no dtype %s" % r["dtype"])
            dims, args = _parse_shape(r["shape"])
            fn, res["call"] = build(torch, F, Inputs(torch, dt, dev), dims, args)
            m = measure(fn, timer=timer, warmup=warmup, rep=rep, backend=backend,
                        device=device)
        except Skip as e:
            res["skipped"] = str(e)
            continue
        except Exception as e:  # torch's own error for this case: said, not fatal
            res["skipped"] = "torch failed: %s: %s" % (type(e).__name__, str(e)[:300])
            continue
        if not (isinstance(m.value, (int, float)) and math.isfinite(m.value) and m.value > 0):
            res["skipped"] = "torch's time is not a positive number (%r)" % (m.value,)
            continue
        res["torch_ms"], res["torch_timer"], res["torch_marker"] = m.value, m.timer, m.marker
        if r["ours_ms"]:
            res["speedup"] = m.value / r["ours_ms"]
    return out


def _clean(s):
    """Text from a results file, safe for a terminal: no control characters."""
    return "".join(c if c.isprintable() else "?" for c in str(s))


def report(out_rows, stream):
    w = stream.write
    w("%-14s %-9s %-26s %12s %12s %8s  %-7s %s\n" % (
        "operator", "dtype", "shape", "torch (ms)", "zlb (ms)", "speedup", "timer", "torch call"))
    for r in out_rows:
        shape = _clean(r["shape"])[:26]
        if r["skipped"]:
            w("%-14s %-9s %-26s %12s %12s %8s  %-7s skipped: %s\n" % (
                _clean(r["operator"])[:14], _clean(r["dtype"]), shape, "-", "-", "-", "-",
                _clean(r["skipped"])))
            continue
        w("%-14s %-9s %-26s %12.6f %12s %8s  %-7s %s\n" % (
            _clean(r["operator"])[:14], _clean(r["dtype"]), shape, r["torch_ms"],
            "%.6f" % r["ours_ms"] if r["ours_ms"] else "-",
            "%.3f" % r["speedup"] if r["speedup"] else "-", _clean(r["torch_timer"]),
            _clean(r["call"])))
    g = _geomean(r["speedup"] for r in out_rows)
    n = sum(1 for r in out_rows if r["speedup"])
    skipped = sorted({r["operator"] for r in out_rows if r["skipped"]})
    w("torch baseline: %d rows timed, %d skipped%s; geomean speedup over torch: %s\n" % (
        n, len(out_rows) - n, (" (" + ", ".join(_clean(s) for s in skipped) + ")") if skipped else "",
        "%.3f" % g if g else "n/a"))
    return g


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlbench.torch_baseline",
                                description="Time a zlbench folder's cases through torch.")
    p.add_argument("dir", help="a zlbench run or batch output folder")
    p.add_argument("--timer", default="auto",
                   choices=["auto", "graph", "direct", "trace", "queue"])
    p.add_argument("--warmup", type=float, default=25.0, help="warm-up budget, ms")
    p.add_argument("--rep", type=float, default=100.0, help="measurement budget, ms")
    p.add_argument("--device", type=int, default=None, help="CUDA device ordinal")
    p.add_argument("--ops", default="", help="comma-separated operators (default: all)")
    p.add_argument("--out", default=None, help="output file (default DIR/torch_baseline.json)")
    a = p.parse_args(argv)
    for name in ("warmup", "rep"):
        v = getattr(a, name)
        if not (math.isfinite(v) and 0 < v <= 60000):
            p.error("--%s must be in (0, 60000] ms, not %r" % (name, v))
    if a.device is not None and a.device < 0:
        p.error("--device must be 0 or more")
    if not os.path.isdir(a.dir):
        p.error("%s is not a folder" % a.dir)
    try:
        rows = load_rows(a.dir)
    except (OSError, ValueError) as e:
        sys.stderr.write("zlbench.torch_baseline: %s\n" % e)
        return 2
    if not rows:
        sys.stderr.write("zlbench.torch_baseline: no SUCCESS rows in a results.json under %s\n"
                         % a.dir)
        return 2
    try:
        import torch
    except ImportError as e:
        sys.stderr.write("zlbench.torch_baseline: torch is not importable by %s (%s)\n"
                         % (sys.executable, e))
        return 3
    if not torch.cuda.is_available():
        sys.stderr.write("zlbench.torch_baseline: torch sees no CUDA device\n")
        return 3
    import zlbench
    ops = {o for o in a.ops.split(",") if o} or None
    if a.device is not None:
        torch.cuda.set_device(a.device)
    out = compare(rows, torch, zlbench.measure, timer=a.timer, warmup=a.warmup, rep=a.rep,
                  device=a.device, ops=ops)
    g = report(out, sys.stdout)
    path = a.out or os.path.join(a.dir, "torch_baseline.json")
    doc = {"schema": SCHEMA, "source": os.path.abspath(a.dir), "torch": torch.__version__,
           "device": torch.cuda.get_device_name(a.device or 0), "timer": a.timer,
           "geomean_speedup": g, "rows": out}
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
    except (OSError, ValueError) as e:
        sys.stderr.write("zlbench.torch_baseline: cannot write %s: %s\n" % (path, e))
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return 6
    print("torch baseline: %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
