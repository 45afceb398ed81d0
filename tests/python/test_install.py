"""The package builds and installs without network: the in-tree build
backend's wheel (contents, RECORD hashes, the library inside), and
`pip install --no-index` of python/ into a target folder that then imports
and measures."""
import base64
import hashlib
import importlib.util
import os
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = os.path.join(ROOT, "python")


def backend():
    spec = importlib.util.spec_from_file_location(
        "zlbench_build", os.path.join(PKG, "_build", "zlbench_build.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_wheel_contents_and_record(tmp_path):
    name = backend().build_wheel(str(tmp_path))
    path = tmp_path / name
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        for mod in ("__init__.py", "_lib.py", "_bench.py", "_torch.py"):
            assert f"zlbench/{mod}" in names
        # ZL_LIB_DIR points at the build: the library goes in, and the tag
        # says the wheel is for this platform.
        assert "zlbench/libzlbench.so" in names
        assert "-py3-none-linux" in name
        dist = [n for n in names if n.endswith(".dist-info/RECORD")]
        assert len(dist) == 1
        record = z.read(dist[0]).decode().splitlines()
        listed = {line.split(",")[0] for line in record}
        assert listed == names
        for line in record:
            arc, digest, size = line.split(",")
            if not digest:
                continue
            data = z.read(arc)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={want}", arc
            assert int(size) == len(data)


def test_wheel_without_library(tmp_path, monkeypatch):
    monkeypatch.setenv("ZLBENCH_WHEEL_NO_LIB", "1")
    name = backend().build_wheel(str(tmp_path))
    assert name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(tmp_path / name) as z:
        assert "zlbench/libzlbench.so" not in z.namelist()


def test_pip_install_offline(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONPATH")}
    if subprocess.run([sys.executable, "-m", "pip", "--version"], env=env,
                      capture_output=True).returncode != 0:
        pytest.skip(f"{sys.executable} has no pip: the offline install is not tried")
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                        "--disable-pip-version-check", "--target", str(target), PKG],
                       env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (target / "zlbench" / "libzlbench.so").is_file()
    # The installed package, with the library it carries (no ZL_LIB_DIR).
    env = dict(os.environ)
    env.pop("ZL_LIB_DIR", None)
    env["PYTHONPATH"] = str(target)
    code = ("import zlbench; p = zlbench.library_path(); assert p.startswith(%r), p; "
            "v = zlbench.do_bench(lambda: None, 1, 2, backend='host'); "
            "assert isinstance(v, float); print('ok', p)") % str(target)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
