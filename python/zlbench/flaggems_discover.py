"""The operators of a FlagGems checkout, without importing it (no GPU, no
torch): an AST scan of ``benchmark/test_*.py`` for operator marks, and the
stage filter of ``conf/operators.yaml``.

    python3 -m zlbench.flaggems_discover DIR [--stage stable|beta|alpha]

One operator per line, tab-separated: ``name  file  dtypes  stage  others``,
where ``file`` is the test file (relative to ``benchmark/``) the operator
is run from, ``dtypes`` the comma-separated dtypes of the first
``Benchmark(..., dtypes=...)`` call of its first marked test there, or,
where the test passes no dtypes, its benchmark class's ``DEFAULT_DTYPES``
(the class's own, else the nearest up its chain in the test file and
``benchmark/base.py``), when the scan can resolve them (``-`` otherwise:
a list it cannot read, a class that handles dtypes in its own
``__init__``, benchmarks of one test that disagree), ``stage`` its most mature stage
(``-`` when ``conf/operators.yaml`` does not list it) and ``others`` the
other files holding the mark, comma-separated (``-`` for none). Operators
are sorted by name.

A mark can be in several files (FlagGems' ``test_blas_perf_parallel.py``
repeats ``mul``, ``vdot`` and others that have their own file, and
``nextafter_`` is in ``test_nextafter.py`` and ``test_nextafter_.py``).
The file is chosen by its name, never by where it sorts (``choose_file``):
``test_<op>.py`` first, then the in-place or out-of-place twin's
(``test_<op without its trailing _>.py``, ``test_<op>_.py``), then a file
whose name extends the operator's (``test_<op>_int8.py``) or that the
operator's name extends (``div_scalar_`` in ``test_div.py``), then the
others; in each class the longest common prefix of the names, then the
shortest name, then the alphabetical first.
``zlbench batch --provider flaggems`` runs this and checks every field.
Standard library only; exit 2 with a message for a bad checkout.
"""
import ast
import os
import re
import sys

# Marks that are pytest's or FlagGems' own, not operators.
NOT_OPS = {"parametrize", "skipif", "skip", "xfail", "usefixtures", "filterwarnings",
           "timeout", "flaky", "slow", "median"}
STAGES = ("alpha", "beta", "stable")  # from least to most mature
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,126}$")

# FlagGems' dtype lists (benchmark/consts.py), by the names tests use.
DTYPE_LISTS = {
    "FLOAT_DTYPES": ["float16", "float32", "bfloat16"],
    "FP16_BF16_DTYPES": ["float16", "bfloat16"],
    "INT_DTYPES": ["int16", "int32"],
    "BOOL_DTYPES": ["bool"],
}
TORCH_DTYPES = {"float16", "float32", "bfloat16", "float64", "int8", "int16", "int32",
                "int64", "uint8", "bool", "half", "float", "double", "int", "long"}
ALIASES = {"half": "float16", "float": "float32", "double": "float64", "int": "int32",
           "long": "int64"}


def _mark_name(dec):
    """`@pytest.mark.NAME` or `@pytest.mark.NAME(...)` -> NAME."""
    node = dec.func if isinstance(dec, ast.Call) else dec
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "mark" and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "pytest"):
        return node.attr
    return None


def _dtypes_of(expr):
    if isinstance(expr, ast.Attribute) and expr.attr in DTYPE_LISTS:
        return list(DTYPE_LISTS[expr.attr])
    if isinstance(expr, ast.Name) and expr.id in DTYPE_LISTS:
        return list(DTYPE_LISTS[expr.id])
    if isinstance(expr, (ast.List, ast.Tuple)):
        out = []
        for e in expr.elts:
            if isinstance(e, ast.Attribute) and e.attr in TORCH_DTYPES:
                out.append(ALIASES.get(e.attr, e.attr))
            else:
                return None
        return out
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        a, b = _dtypes_of(expr.left), _dtypes_of(expr.right)
        return a + b if a is not None and b is not None else None
    return None


def _callee(node):
    """`Name(...)` or `mod.Name(...)` -> Name."""
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def benchmark_classes(tree, into=None):
    """{class name: (base names, DEFAULT_DTYPES expression or None, whether
    its own __init__ or set_dtypes mentions dtypes)} of a module's
    top-level classes."""
    out = {} if into is None else into
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [b.id if isinstance(b, ast.Name) else b.attr
                 for b in node.bases if isinstance(b, (ast.Name, ast.Attribute))]
        default, own = None, False
        for item in node.body:
            if isinstance(item, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "DEFAULT_DTYPES" for t in item.targets):
                default = item.value
            elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    item.name in ("__init__", "set_dtypes") and any(
                        isinstance(n, (ast.Name, ast.Attribute, ast.keyword, ast.arg)) and
                        "dtypes" in (getattr(n, "id", None) or getattr(n, "attr", None) or
                                     getattr(n, "arg", None) or "")
                        for n in ast.walk(item)):
                own = True
        out[node.name] = (bases, default, own)
    return out


def _class_dtypes(name, classes):
    """The dtypes a `name(...)` call without dtypes= gets: the first
    DEFAULT_DTYPES up its (single-base) chain to FlagGems' `Benchmark`,
    or None where the chain leaves the known classes, forks, or a class
    on it handles dtypes in its own __init__ (it may pass others)."""
    seen = set()
    while name in classes and name not in seen:
        seen.add(name)
        bases, default, own = classes[name]
        if own and name != "Benchmark":
            return None
        if default is not None:
            return _dtypes_of(default)
        if name == "Benchmark" or len(bases) != 1:
            return None
        name = bases[0]
    return None


def _test_dtypes(fn, classes=None):
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "dtypes":
                    d = _dtypes_of(kw.value)
                    if d:
                        return d
    # No dtypes= anywhere: the benchmark class's default, where every
    # benchmark the test builds resolves to the same list.
    if not classes:
        return None
    lists = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _callee(node) in classes:
            if any(kw.arg == "dtypes" or kw.arg is None for kw in node.keywords):
                return None  # dtypes=<unresolved> or **kwargs
            lists.append(_class_dtypes(_callee(node), classes))
    if not lists or any(d is None or d != lists[0] for d in lists):
        return None
    return lists[0]


def base_classes(bench_dir):
    """The benchmark classes of FlagGems' benchmark/base.py ({} without it)."""
    path = os.path.join(bench_dir, "base.py")
    try:
        with open(path, "rb") as f:
            return benchmark_classes(ast.parse(f.read(), filename=path))
    except (OSError, SyntaxError, ValueError):
        return {}


def scan_file(path, base=None):
    """[(mark, dtypes or None)] of the tests in one file, in file order.
    `base`: the classes of benchmark/base.py, for tests that build a
    benchmark without dtypes= (the class's DEFAULT_DTYPES)."""
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), filename=path)
    classes = dict(base or {})
    benchmark_classes(tree, classes)  # the file's own classes first
    found = []

    def visit(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.name.startswith("test"):
                for dec in node.decorator_list:
                    name = _mark_name(dec)
                    if name and name not in NOT_OPS:
                        found.append((name, _test_dtypes(node, classes)))
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                visit(node.body)
    visit(tree.body)
    return found


def load_stages(path):
    """{name: most mature stage} from conf/operators.yaml: each entry's
    `id` and its `for:` names get the entry's most mature stage. A small
    reader for that file's layout (the package has no YAML library)."""
    stages = {}
    entry_names, entry_stage, key = [], None, None

    def flush():
        if entry_stage:
            for n in entry_names:
                old = stages.get(n)
                if old is None or STAGES.index(entry_stage) > STAGES.index(old):
                    stages[n] = entry_stage

    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            m = re.match(r"^  - id:\s*(\S+)", line)
            if m:
                flush()
                entry_names, entry_stage, key = [m.group(1).strip("'\"")], None, None
                continue
            m = re.match(r"^    ([A-Za-z_]+):", line)
            if m:
                key = m.group(1)
                continue
            m = re.match(r"^      - (.+)$", line)
            if m and key == "for":
                entry_names.append(m.group(1).strip().strip("'\""))
            elif m and key == "stages":
                st = m.group(1).split(":", 1)[0].strip()
                if st in STAGES and (entry_stage is None or
                                     STAGES.index(st) > STAGES.index(entry_stage)):
                    entry_stage = st
    flush()
    return stages


def _common_prefix(a, b):
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def file_rank(op, name):
    """How well test file `name` fits operator `op`: a sort key, smaller is
    better (see the module's description)."""
    stem = name[len("test_"):-len(".py")]
    base = op.rstrip("_")
    if stem == op:
        cls = 0
    elif stem.rstrip("_") == base:
        cls = 1
    elif stem.startswith(op + "_") or stem.startswith(base + "_") or \
            op.startswith(stem + "_") or base.startswith(stem + "_"):
        cls = 2
    else:
        cls = 3
    return (cls, -_common_prefix(stem, op), len(name), name)


def choose_file(op, files):
    """The file, among those holding the mark `op`, that the operator is run
    from: the best `file_rank`, whatever the order of `files`."""
    return min(files, key=lambda f: file_rank(op, f))


def discover(root, stage=None):
    bench = os.path.join(root, "benchmark")
    if not os.path.isdir(bench):
        raise ValueError(f"'{root}' has no benchmark/ folder: not a FlagGems checkout")
    ops = {}  # mark -> {file: dtypes of its first marked test there}
    base = base_classes(bench)
    for name in sorted(os.listdir(bench)):
        if not (name.startswith("test_") and name.endswith(".py")):
            continue
        path = os.path.join(bench, name)
        try:
            marks = scan_file(path, base)
        except SyntaxError as e:
            # Collection will fail too; the operator still belongs to the
            # screen, named after its file, and fails there with its reason.
            sys.stderr.write(f"{path}:{e.lineno}: cannot parse: {e.msg}\n")
            marks = [(name[len("test_"):-len(".py")], None)]
        for mark, dts in marks:
            if NAME_RE.match(mark):
                ops.setdefault(mark, {}).setdefault(name, dts)
    stages = {}
    conf = os.path.join(root, "conf", "operators.yaml")
    if os.path.isfile(conf):
        stages = load_stages(conf)
    elif stage:
        raise ValueError(f"--stage {stage}: '{conf}' does not exist")
    out = []
    for op in sorted(ops):
        st = stages.get(op) or stages.get("_" + op)
        if stage and (st is None or STAGES.index(st) < STAGES.index(stage)):
            continue
        files = ops[op]
        f = choose_file(op, files)
        dts = files[f]
        others = [o for o in sorted(files) if o != f]
        out.append((op, f, ",".join(dts) if dts else "-", st or "-",
                    ",".join(others) if others else "-"))
    return out


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    stage = None
    if "--stage" in argv:
        i = argv.index("--stage")
        if i + 1 >= len(argv) or argv[i + 1] not in STAGES:
            sys.stderr.write("flaggems_discover: --stage needs stable, beta or alpha\n")
            return 2
        stage = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) != 1:
        sys.stderr.write("usage: python3 -m zlbench.flaggems_discover DIR "
                         "[--stage stable|beta|alpha]\n")
        return 2
    try:
        rows = discover(argv[0], stage)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"flaggems_discover: {e}\n")
        return 2
    sys.stdout.write("".join("\t".join(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
