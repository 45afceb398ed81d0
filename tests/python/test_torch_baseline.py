"""zlbench.torch_baseline without torch or a GPU: a stand-in torch whose
calls do nothing, timed by the real engine on the host backend. Checks the
folder's rows are read (SUCCESS only, attempts left out), every CUDA
operator has a torch call, each call gets the row's extents and arguments,
rows that do not fit are skipped with a reason (never dropped), the
speedup is torch's time over ours, and the command's errors have their
exit codes."""
import io
import json
import math
import os
import sys

import pytest

import zlbench
from zlbench import torch_baseline as tb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class FakeTensor:
    """Any method, index or arithmetic gives another FakeTensor."""

    def __init__(self, origin):
        self.origin = origin

    def __getattr__(self, name):
        return lambda *a, **k: FakeTensor(name)

    def __getitem__(self, key):
        return FakeTensor("index")

    def _op(self, *a):
        return FakeTensor("arith")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __lt__ = _op


class FakeModule:
    """A module of functions recording (name, args, kwargs)."""

    def __init__(self, calls, prefix):
        self._calls, self._prefix = calls, prefix

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        def f(*a, **k):
            self._calls.append((self._prefix + name, a, k))
            return FakeTensor(name)
        return f


def fake_torch():
    calls = []
    t = FakeModule(calls, "torch.")
    for dt in ("float16", "bfloat16", "float32", "int64", "bool"):
        object.__setattr__(t, dt, "torch." + dt)
    object.__setattr__(t, "linalg", FakeModule(calls, "torch.linalg."))
    return t, FakeModule(calls, "F."), calls


def results_dir(tmp_path, rows_by_op, backend="host"):
    for op, (dtype, rows) in rows_by_op.items():
        d = tmp_path / "ops" / op
        d.mkdir(parents=True)
        (d / "results.json").write_text(json.dumps({
            "schema": "zlbench.results/1", "operator": op, "backend": backend,
            "tables": [{"dtype": dtype, "rows": rows}]}))
    return str(tmp_path)


def row(shape, ms=0.5, status="SUCCESS"):
    return {"status": status, "shape": shape, "detail": shape,
            "candidate": {"impl": "zlb", "timer": "graph", "ms": ms}}


def test_every_cuda_operator_has_a_torch_call():
    inv = open(os.path.join(ROOT, "assets", "inventory.yaml")).read().split("cuda:")[1]
    ops = [ln.strip()[2:] for ln in inv.splitlines() if ln.strip().startswith("- ")]
    assert len(ops) >= 80, ops
    missing = [op for op in ops if op not in tb.CALLS]
    assert not missing, "no torch call for %s" % missing


def test_rows_are_timed_with_their_extents_and_arguments(tmp_path):
    folder = results_dir(tmp_path, {
        "add": ("float16", [row("[64, 64]", ms=0.25), row("[8]", status="FAILED")]),
        "topk": ("float32", [row("[[64, 128], 4]")]),
        "mm": ("bfloat16", [row("[32, 16, 8]")]),
        "embedding": ("float32", [row("[4, 100, 8]")]),
        "sum": ("float32", [row("[[64, 64], 0]")]),
        "mystery": ("float32", [row("[4]")]),
        "abs": ("float32", [row("[0]")]),
    })
    # a superseded attempt is not a row
    att = tmp_path / "ops" / "add" / "attempts" / "1-all"
    att.mkdir(parents=True)
    (att / "results.json").write_text("not json")
    rows = tb.load_rows(folder)
    assert sorted(r["operator"] for r in rows) == [
        "abs", "add", "embedding", "mm", "mystery", "sum", "topk"]
    torch, F, calls = fake_torch()
    out = tb.compare(rows, torch, zlbench.measure, F, timer="direct", warmup=1, rep=2,
                     backend="host")
    by = {r["operator"]: r for r in out}
    for op in ("add", "topk", "mm", "embedding"):
        r = by[op]
        assert r["skipped"] is None, (op, r["skipped"])
        assert r["torch_ms"] > 0 and r["torch_timer"] == "direct", r
        assert math.isclose(r["speedup"], r["torch_ms"] / r["ours_ms"]), r
    assert by["add"]["call"] == "torch.add(a, b)"
    assert by["topk"]["call"] == "torch.topk(x, 4, dim=-1)"
    assert by["mm"]["call"] == "torch.mm(a, b)"
    # the inputs were made with the row's extents and dtype
    made = [(name, a, k) for name, a, k in calls if name == "torch.randn"]
    assert ("torch.randn", (64, 64), {"dtype": "torch.float16", "device": "cpu"}) in made
    assert ("torch.randn", (32, 8), {"dtype": "torch.bfloat16", "device": "cpu"}) in made
    assert ("torch.randn", (100, 8), {"dtype": "torch.float32", "device": "cpu"}) in made
    assert any(name == "torch.topk" and a[1] == 4 and k == {"dim": -1} for name, a, k in calls)
    # rows that do not fit are skipped with their reason
    assert by["mystery"]["skipped"] == "no torch counterpart here"
    assert "no positive integer extents" in by["abs"]["skipped"]
    assert "reduces dim 0" in by["sum"]["skipped"]
    buf = io.StringIO()
    g = tb.report(out, buf)
    text = buf.getvalue()
    assert "skipped: no torch counterpart here" in text
    assert "4 rows timed, 3 skipped (abs, mystery, sum)" in text
    assert g and math.isclose(g, math.exp(sum(math.log(by[o]["speedup"]) for o in
                                              ("add", "topk", "mm", "embedding")) / 4))


def test_rows_of_another_backend_are_skipped(tmp_path):
    folder = results_dir(tmp_path, {"add": ("float32", [row("[64]")])}, backend="host")
    torch, F, _ = fake_torch()
    out = tb.compare(tb.load_rows(folder), torch, zlbench.measure, F, warmup=1, rep=2,
                     backend="cuda")
    assert out[0]["skipped"] == "a host row; torch runs on cuda here"


def test_terminal_text_is_cleaned():
    out = [{"operator": "a\x1b[2Jb", "dtype": "float32", "shape": "[1]\n", "skipped": "x\x07",
            "speedup": None}]
    buf = io.StringIO()
    tb.report(out, buf)
    assert "\x1b" not in buf.getvalue() and "\x07" not in buf.getvalue()
    assert "a?[2Jb" in buf.getvalue()


def test_bad_folders_and_missing_torch(tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit) as e:
        tb.main([str(tmp_path / "nope")])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        tb.main([str(tmp_path), "--rep", "nan"])
    assert e.value.code == 2
    assert tb.main([str(tmp_path)]) == 2  # no rows
    assert "no SUCCESS rows" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "results.json").write_text("[1, 2]")
    assert tb.main([str(bad)]) == 2
    assert "not a zlbench results file" in capsys.readouterr().err
    good = results_dir(tmp_path / "good", {"add": ("float32", [row("[64]")])})
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    assert tb.main([good]) == 3
    assert "torch is not importable" in capsys.readouterr().err
    assert not os.path.exists(os.path.join(good, "torch_baseline.json"))
