"""zlbench.pytest_plugin and zlbench.flaggems_discover against the
miniature FlagGems-shaped suite (tests/flaggems/mini) on the host backend.
Each case runs the suite in a child interpreter, as a batch would."""
import json
import os
import re
import subprocess
import sys

import pytest

from zlbench import flaggems_discover

HERE = os.path.dirname(os.path.abspath(__file__))
MINI = os.path.join(os.path.dirname(HERE), "flaggems", "mini")
PKG = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
ROW = re.compile(r"^(SUCCESS|FAILED)\s+")
NUM = re.compile(r"\d+\.\d+")


def suite(tmp_path, *args, plugin=True, env=None, warmup="1"):
    """Run the mini suite; (exit code, stdout, stderr, out folder).
    warmup: FlagGems' --warmup (None: not given)."""
    out = tmp_path / "out"
    e = dict(os.environ)
    e.update({"PYTHONPATH": PKG, "ZL_BACKEND": "host", "ZL_FG_OUT": str(out),
              "PYTHONDONTWRITEBYTECODE": "1"})
    e.pop("ZL_DENY_CAPTURE", None)
    e.update(env or {})
    cmd = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"]
    if plugin:
        cmd += ["-p", "zlbench.pytest_plugin"]
    # Paths first, as FlagGems runs it: pytest finds benchmark/conftest.py
    # (and so the suite's options) from the first arguments.
    cmd += [*args, "--rootdir", MINI, "--level", "core", "--iter", "5"]
    if warmup is not None:
        cmd += ["--warmup", warmup]
    p = subprocess.run(cmd, cwd=MINI, env=e, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr, out


def table_lines(text):
    """The lines of FlagGems' tables (title, header, rule, rows)."""
    keep, inside = [], False
    for line in text.splitlines():
        if "Performance Test (" in line:
            inside = True
        elif not line.strip():
            inside = False
        if inside:
            keep.append(line)
    return keep


def test_tables_byte_compatible_and_timed_by_zlbench(tmp_path):
    rc0, plain, _, _ = suite(tmp_path / "a", "benchmark/test_abs.py", "-m", "abs", plugin=False)
    rc1, timed, err, out = suite(tmp_path / "b", "benchmark/test_abs.py", "-m", "abs")
    assert rc0 == 0 and rc1 == 0, err
    a, b = table_lines(plain), table_lines(timed)
    assert len(a) == len(b) == 3 * (3 + 2)  # 3 dtypes, 2 shapes each
    # The stand-in timer answers 777 ms; zlbench's times the work.
    assert "777.000000" in plain and "777.000000" not in timed
    for x, y in zip(a, b):
        if ROW.match(x):
            # FlagGems' row layout in both: status in 10 columns, three
            # numbers right-aligned in 20 each, 10 blanks, the size detail.
            for line in (x, y):
                assert line[:10].rstrip() == "SUCCESS"
                for k in range(3):
                    cell = line[10 + 20 * k:30 + 20 * k]
                    assert NUM.fullmatch(cell.strip()) and cell[-1] != " ", line
                assert line[70:80] == " " * 10 and line[80] == "["
            assert x[80:] == y[80:]
        else:
            assert x == y  # titles, headers and rules byte for byte


def test_row_lines_sidecar_identity(tmp_path):
    rc, text, err, out = suite(tmp_path, "benchmark/test_abs.py", "-m", "abs",
                               "--dtypes", "float16", env={"USE_FLAGTUNE": "1"})
    assert rc == 0, err
    lines = text.splitlines()
    rows = [i for i, line in enumerate(lines) if ROW.match(line)]
    notes = [line for line in lines if line.startswith("# zlbench: row ")]
    assert len(rows) == 2 and len(notes) == 2
    # After the table, one per row, each with both measurements.
    assert lines.index(notes[0]) > rows[-1]
    for n in notes:
        # Each measurement's host time per call (docs/timing.md).
        assert re.search(r"torch timer=direct marker=- verdict=none samples=\d+ "
                         r"host_us=\d+\.\d{3}; "
                         r"gems timer=direct marker=- verdict=none samples=\d+ "
                         r"host_us=\d+\.\d{3}$", n), n
    side = json.loads((out / "zlbench_rows.json").read_text())
    (t,) = side["tables"]
    assert t["op"] == "abs" and t["dtype"] == "torch.float16" and len(t["rows"]) == 2
    for r in t["rows"]:
        assert [c["role"] for c in r["calls"]] == ["torch", "gems"]
        for c in r["calls"]:
            assert len(c["samples"]) >= 1 and all(s > 0 for s in c["samples"])
            assert c["value_ms"] > 0 and c["timer"] == "direct"
            assert 0 < c["wall_s"] < 60
            assert isinstance(c["host_us"], float) and c["host_us"] > 0, c
    res = json.loads((out / "results.json").read_text())
    for r in res["tables"][0]["rows"]:
        for side_ in ("baseline", "candidate"):
            assert isinstance(r[side_]["host_us"], float) and r[side_]["host_us"] > 0, r
            assert 0 < c["sample_s"] <= c["wall_s"] and c["attempt_s"] == 0
            assert 0 < c["first_call_s"] < c["wall_s"]
    ident = json.loads((out / "run_identity.json").read_text())
    assert ident["backend"] == "host" and ident["caliber"]["timer"] == "direct"
    assert ident["autotune"]["USE_FLAGTUNE"] == "1"
    assert ident["caliber"]["stop"] == "noise"
    assert ident["nodes"] == ["benchmark/test_abs.py::test_abs"]
    assert "finished" in ident and ident["flaggems"]["commit"]
    # Where the process's time went: stages in order from its start, the
    # four measurements (2 rows x torch, gems) and their seconds.
    tl = ident["timeline"]
    assert tl["process_start"] and tl["measures"] == 4
    stages = [tl[k] for k in ("configure_s", "collected_s", "first_measure_s", "finish_s")]
    assert all(isinstance(v, float) for v in stages), tl
    assert 0 <= stages[0] <= stages[1] <= stages[2] <= stages[3], tl
    assert 0 < tl["measure_s"] <= stages[3] - stages[2] + 0.05, tl
    # Its own writes (the sidecar after each test, the identity) were timed;
    # no fork server here, so no request time.
    assert 0 < tl["write_s"] < stages[3], tl
    assert tl["request_at"] is None, tl
    # Before the first test (after the collection, before the first
    # measurement) the heap (pytest, the suite, its modules) was frozen
    # out of the collector: tens of thousands of objects here.
    assert tl["gc_frozen"] > 10000 and 0 < tl["gc_freeze_s"] < stages[3], tl
    assert tl["collected_s"] <= tl["frozen_s"] <= tl["first_measure_s"], tl


def test_gc_freeze_off(tmp_path):
    rc, text, err, out = suite(tmp_path, "benchmark/test_abs.py", "-m", "abs",
                               "--dtypes", "float16", env={"ZL_FG_GC_FREEZE": "0"})
    assert rc == 0, err
    tl = json.loads((out / "run_identity.json").read_text())["timeline"]
    assert tl["gc_frozen"] == 0 and tl["gc_freeze_s"] == 0, tl
    assert "frozen_s" not in tl, tl
    # Nor does a run that only collects.
    rc, text, err, out = suite(tmp_path / "c", "benchmark/test_abs.py", "--collect-only")
    assert rc == 0, err
    tl = json.loads((out / "run_identity.json").read_text())["timeline"]
    assert tl["gc_frozen"] == 0 and "frozen_s" not in tl, tl


def test_proxy_only_in_base_module(tmp_path):
    rc, text, err, _ = suite(tmp_path / "a", "benchmark/test_isolation.py")
    assert rc == 0, text + err
    # Without the plugin the same test sees the stand-in and fails: the
    # check is real.
    rc, text, err, _ = suite(tmp_path / "b", "benchmark/test_isolation.py", plugin=False)
    assert rc == 1


def test_cudagraph_mode_falls_back_per_shape_with_marker(tmp_path):
    rc, text, err, out = suite(tmp_path, "benchmark/test_reduction.py", "-m", "softmax",
                               "--mode", "cudagraph", "--dtypes", "float16")
    assert rc == 0, err
    notes = [line for line in text.splitlines() if line.startswith("# zlbench: row ")]
    assert len(notes) == 2
    for n in notes:  # the host backend has no graphs: refused, timed directly
        assert n.count("marker=fallback(phase=capture,") == 2 and "verdict=refused" in n


def test_poisoned_ends_process_with_status_5(tmp_path):
    rc, text, err, out = suite(tmp_path / "a", "benchmark/test_faults.py", "-m", "poison")
    assert rc == 5
    assert "BENCHMARK_CAPTURE_POISONED" in err
    ident = json.loads((out / "run_identity.json").read_text())
    assert "poisoned" in ident and "finished" not in ident
    # Re-run as the batch does, capture denied for it: every measurement
    # of that operator, and only of that one, asks the engine not to capture.
    rc, text, err, out = suite(tmp_path / "b", "benchmark/test_faults.py",
                               "benchmark/test_abs.py", "-m", "poison or abs", "--mode",
                               "cudagraph", "--dtypes", "float16",
                               env={"ZL_DENY_CAPTURE": "poison"})
    assert rc == 0, err
    tables = json.loads((out / "zlbench_rows.json").read_text())["tables"]
    deny = {t["op"]: {c["deny_capture"] for r in t["rows"] for c in r["calls"]}
            for t in tables}
    assert deny == {"poison": {True}, "abs": {False}}
    ident = json.loads((out / "run_identity.json").read_text())
    assert ident["caliber"]["deny_capture"] == ["poison"]


def test_fatal_fails_that_test_only(tmp_path):
    rc, text, err, out = suite(tmp_path, "benchmark/test_faults.py", "benchmark/test_abs.py",
                               "-m", "fatal or abs", "--dtypes", "float16")
    assert rc == 1
    assert "1 failed, 1 passed" in text
    ident = json.loads((out / "run_identity.json").read_text())
    assert "illegal address" in ident["fatal"]
    # The failed test printed no table: its measurements are kept apart.
    tables = json.loads((out / "zlbench_rows.json").read_text())["tables"]
    (lost,) = [t for t in tables if t.get("untabled")]
    assert lost["node"].endswith("::test_fatal")
    assert "fatal: illegal address" in lost["rows"][0]["calls"][0]["error"]
    assert [t["op"] for t in tables if not t.get("untabled")] == ["abs"]


def test_stop_rule_choice(tmp_path):
    rc, text, err, out = suite(tmp_path / "a", "benchmark/test_abs.py", "-m", "abs",
                               "--dtypes", "float16", env={"ZL_FG_STOP": "budget"})
    assert rc == 0, err
    ident = json.loads((out / "run_identity.json").read_text())
    assert ident["caliber"]["stop"] == "budget"
    rc, text, err, out = suite(tmp_path / "b", "benchmark/test_abs.py", "-m", "abs",
                               env={"ZL_FG_STOP": "sometimes"})
    assert rc == 4 and "ZL_FG_STOP='sometimes'" in err


def test_warmup_policy(tmp_path):
    def ident(sub, want, **kw):
        rc, _, err, out = suite(tmp_path / sub, "benchmark/test_abs.py", "-m", "abs",
                                "--dtypes", "float16", **kw)
        assert rc == 0, err
        # What each measurement was given (two shapes, torch and gems).
        side = json.loads((out / "zlbench_rows.json").read_text())
        got = [c["warmup_ms"] for t in side["tables"] for r in t["rows"] for c in r["calls"]]
        assert got == [want] * 4
        return json.loads((out / "run_identity.json").read_text())["caliber"]
    # FlagGems' own default (1000 ms, its --warmup not given): zlbench's 10 ms.
    c = ident("default", 10.0, warmup=None)
    assert (c["warmup_ms"], c["warmup_from"]) == (10.0, "zlbench default")
    # A --warmup on the command line is FlagGems' to honour.
    c = ident("given", 7, warmup="7")
    assert (c["warmup_ms"], c["warmup_from"]) == (None, "flaggems --warmup")
    # ZL_WARMUP_MS over both.
    c = ident("env", 3.0, warmup="7", env={"ZL_WARMUP_MS": "3"})
    assert (c["warmup_ms"], c["warmup_from"]) == (3.0, "ZL_WARMUP_MS")
    rc, _, err, _ = suite(tmp_path / "bad", "benchmark/test_abs.py", "-m", "abs",
                          env={"ZL_WARMUP_MS": "-3"})
    assert rc == 4 and "ZL_WARMUP_MS='-3'" in err


# ---- the operator scan -----------------------------------------------------------

def test_discover_marks_dtypes_stages():
    rows = {r[0]: r for r in flaggems_discover.discover(MINI)}
    assert set(rows) == {"abs", "abs_", "add", "sum", "softmax", "intonly", "crash", "hang",
                         "broken", "poison", "fatal", "isolation", "skipped", "envdump"}
    assert rows["abs"] == ("abs", "test_abs.py", "float16,float32,bfloat16", "stable", "-")
    # add's mark is also in test_a_perf_parallel.py, which sorts first: the
    # operator's own file is chosen, the other named.
    assert rows["add"][1] == "test_add.py" and rows["add"][4] == "test_a_perf_parallel.py"
    assert rows["intonly"][2:] == ("int16,int32", "alpha", "-")
    assert rows["softmax"][3] == "stable"  # listed under `for: _softmax`
    # No dtypes= in add's test: its class's default (BinaryPointwiseBenchmark
    # inherits base.py's Benchmark.DEFAULT_DTYPES); softmax's dtypes= is an
    # expression the scan does not read, so not the class default either.
    assert rows["add"][2] == "float16,float32,bfloat16"
    assert rows["softmax"][2] == "-"
    assert rows["hang"][3] == "-"
    stable = [r[0] for r in flaggems_discover.discover(MINI, "stable")]
    assert stable == ["abs", "add", "softmax"]
    beta = [r[0] for r in flaggems_discover.discover(MINI, "beta")]
    assert beta == ["abs", "add", "softmax", "sum"]
    alpha = [r[0] for r in flaggems_discover.discover(MINI, "alpha")]
    assert alpha == ["abs", "add", "crash", "intonly", "softmax", "sum"]


def test_discover_chooses_the_file_by_name(tmp_path):
    """A mark in several files: the operator's own file, by its name, never
    the one that sorts first (FlagGems' test_blas_perf_parallel.py repeats
    mul, vdot, router_gemm, addr and w8a8_block_fp8_matmul)."""
    choose = flaggems_discover.choose_file
    assert choose("mul", ["test_blas_perf_parallel.py", "test_mul.py"]) == "test_mul.py"
    assert choose("vdot", ["test_blas_perf_parallel.py", "test_vdot.py"]) == "test_vdot.py"
    assert choose("nextafter_", ["test_nextafter.py", "test_nextafter_.py"]) == \
        "test_nextafter_.py"
    assert choose("uniform_", ["test_uniform.py", "test_uniform_.py"]) == "test_uniform_.py"
    # No test_<op>.py: the in-place twin's file, then a file the operator's
    # name extends or that extends it, then the closest name.
    assert choose("abs_", ["test_zz.py", "test_abs.py"]) == "test_abs.py"
    assert choose("div_scalar_", ["test_true_divide.py", "test_div.py"]) == "test_div.py"
    assert choose("fused_marlin_moe", ["test_fused_marlin_moe_w8a16_int8.py", "test_x.py",
                                       "test_fused_marlin_moe_w4a16_int4.py"]) == \
        "test_fused_marlin_moe_w4a16_int4.py"
    assert choose("fused_experts_impl", ["test_fused_moe_int8.py", "test_fused_moe.py",
                                         "test_blas.py"]) == "test_fused_moe.py"
    # Deterministic whatever the order it is given the files in.
    files = ["test_b_perf.py", "test_a_perf.py", "test_c.py"]
    assert choose("op", files) == choose("op", list(reversed(files))) == "test_c.py"
    # Through the scan: the chosen file's dtypes, the others named, sorted.
    (tmp_path / "benchmark").mkdir()
    mark = "import pytest\n@pytest.mark.mul\ndef test_{}():\n    Benchmark(dtypes={})\n"
    (tmp_path / "benchmark" / "test_aa_parallel.py").write_text(
        mark.format("p", "[torch.int32]"))
    (tmp_path / "benchmark" / "test_mul.py").write_text(mark.format("m", "[torch.float16]"))
    (tmp_path / "benchmark" / "test_blas_perf_parallel.py").write_text(
        mark.format("b", "[torch.int16]"))
    assert flaggems_discover.discover(str(tmp_path)) == [
        ("mul", "test_mul.py", "float16", "-", "test_aa_parallel.py,test_blas_perf_parallel.py")]


def test_discover_class_default_dtypes(tmp_path):
    """A test that passes no dtypes= gets its benchmark class's
    DEFAULT_DTYPES, up the chain through the test file and base.py; where
    that is not certain, none (a wrong list fails every level-2 child with
    FlagGems' "can't be supported by this op")."""
    bench = tmp_path / "benchmark"
    bench.mkdir()
    (bench / "base.py").write_text(
        "import consts\n"
        "class Benchmark:\n"
        "    DEFAULT_DTYPES = consts.FLOAT_DTYPES\n"
        "    def __init__(self, op_name, torch_op, dtypes=None):\n"
        "        self.dtypes = dtypes if dtypes is not None else self.DEFAULT_DTYPES\n"
        "class Generic(Benchmark):\n"
        "    pass\n"
        "class Generic1D(Generic):\n"
        "    pass\n"
        "class Ints(Benchmark):\n"
        "    DEFAULT_DTYPES = consts.INT_DTYPES\n"
        "class OwnInit(Benchmark):\n"
        "    def __init__(self, *a, **k):\n"
        "        super().__init__(*a, dtypes=[torch.float32], **k)\n")
    (bench / "test_ops.py").write_text(
        "import pytest\nimport torch\nfrom . import base\n"
        "class Local(base.Generic1D):\n"
        "    DEFAULT_DTYPES = [torch.float32]\n"
        "class LocalKid(Local):\n"
        "    pass\n"
        "@pytest.mark.inherited\n"
        "def test_a():\n    base.Generic1D(op_name='a', torch_op=None).run()\n"
        "@pytest.mark.ints\n"
        "def test_b():\n    base.Ints(op_name='b', torch_op=None).run()\n"
        "@pytest.mark.local\n"
        "def test_c():\n    LocalKid(op_name='c', torch_op=None).run()\n"
        "@pytest.mark.ownInit\n"
        "def test_d():\n    base.OwnInit(op_name='d', torch_op=None).run()\n"
        "@pytest.mark.disagree\n"
        "def test_e():\n"
        "    base.Generic(op_name='e', torch_op=None).run()\n"
        "    base.Ints(op_name='e', torch_op=None).run()\n"
        "@pytest.mark.kwargs\n"
        "def test_f():\n    base.Generic(**ARGS).run()\n"
        "@pytest.mark.unknown\n"
        "def test_g():\n    Elsewhere(op_name='g', torch_op=None).run()\n"
        "@pytest.mark.explicit\n"
        "def test_h():\n    base.Ints(op_name='h', torch_op=None, dtypes=[torch.bool]).run()\n")
    rows = {r[0]: r[2] for r in flaggems_discover.discover(str(tmp_path))}
    assert rows == {"inherited": "float16,float32,bfloat16", "ints": "int16,int32",
                    "local": "float32", "ownInit": "-", "disagree": "-", "kwargs": "-",
                    "unknown": "-", "explicit": "bool"}
    # Without base.py the chain ends nowhere: nothing is assumed.
    (bench / "base.py").unlink()
    rows = {r[0]: r[2] for r in flaggems_discover.discover(str(tmp_path))}
    assert rows["inherited"] == "-" and rows["local"] == "float32"


def test_discover_unparsable_file_and_bad_checkout(tmp_path, capsys):
    (tmp_path / "benchmark").mkdir()
    (tmp_path / "benchmark" / "test_bad.py").write_text("def oops(:\n")
    (tmp_path / "benchmark" / "test_x.py").write_text(
        "import pytest\n@pytest.mark.parametrize('a', [1])\n@pytest.mark.xop\n"
        "def test_x(a):\n    pass\n")
    rows = flaggems_discover.discover(str(tmp_path))
    assert [r[0] for r in rows] == ["bad", "xop"]
    assert "test_bad.py:1" in capsys.readouterr().err
    with pytest.raises(ValueError, match="does not exist"):
        flaggems_discover.discover(str(tmp_path), "stable")
    assert flaggems_discover.main([str(tmp_path / "nope")]) == 2
    assert flaggems_discover.main([str(tmp_path), "--stage", "gold"]) == 2


def test_proxy_routes_ascend_do_bench_npu(monkeypatch):
    """On Ascend FlagGems' kernel mode calls
    triton.backends.ascend.testing.do_bench_npu(fn) through the same name:
    the proxy gives zlbench's, in ms from _measure, and leaves the real
    module and every other backend attribute alone."""
    import types
    from zlbench import pytest_plugin as pp

    real = types.SimpleNamespace(
        __version__="3.2.0",
        testing=types.SimpleNamespace(do_bench=None, do_bench_cudagraph=None, other=1),
        backends=types.SimpleNamespace(
            driver="drv",
            ascend=types.SimpleNamespace(
                testing=types.SimpleNamespace(do_bench_npu="theirs", keep=2))))
    proxy = pp.make_triton_proxy(real)
    assert proxy.backends.ascend.testing.do_bench_npu is pp.do_bench_npu
    assert proxy.backends.ascend.testing.keep == 2 and proxy.backends.driver == "drv"
    assert proxy.testing.other == 1 and proxy.__version__ == "3.2.0"
    assert real.backends.ascend.testing.do_bench_npu == "theirs"
    seen = {}

    class Res:
        value = 0.25
        samples = [0.25, 0.25]

    def measure(kind, fn, **kw):
        seen.update(kind=kind, fn=fn, **kw)
        return Res()
    monkeypatch.setattr(pp, "_measure", measure)
    monkeypatch.setattr(pp._bench, "_summarize", lambda res, q, mode: (res.value, mode))
    f = lambda: None  # noqa: E731
    assert proxy.backends.ascend.testing.do_bench_npu(f) == (0.25, "mean")
    assert seen["kind"] == "do_bench_npu" and seen["fn"] is f and seen["rep"] == 100
    # A Triton without an ascend backend: AttributeError, as before.
    bare = types.SimpleNamespace(testing=real.testing, backends=types.SimpleNamespace())
    with pytest.raises(AttributeError):
        pp.make_triton_proxy(bare).backends.ascend
