"""The zlbench package's PEP 517 build backend: standard library only, so
that ``pip install ./python`` needs no network (pip's isolated build
environment installs nothing: pyproject.toml requires nothing).

It builds a wheel with zipfile: the ``zlbench`` package, its metadata and,
when one is found, ``libzlbench.so`` (``$ZL_LIB_DIR`` -- the folder holding
it, or ``<prefix>/lib/zlbench`` below it -- else the repository's
``build/lib``, ``build-test/lib`` or ``build-gpu/lib``), which makes the
wheel platform-specific. ``ZLBENCH_WHEEL_NO_LIB=1`` leaves the library out.
Editable installs get a .pth file pointing at this folder.
"""
import base64
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import zipfile

NAME = "zlbench"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = "libzlbench.so"


def _version():
    with open(os.path.join(HERE, NAME, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M)
    if not m:
        raise RuntimeError("zlbench/__init__.py has no __version__")
    return m.group(1)


def _find_lib():
    if os.environ.get("ZLBENCH_WHEEL_NO_LIB") == "1":
        return None
    env = os.environ.get("ZL_LIB_DIR", "")
    cands = []
    if env:
        cands += [os.path.join(env, LIB), os.path.join(os.path.dirname(os.path.abspath(env)), LIB)]
    repo = os.path.dirname(HERE)
    cands += [os.path.join(repo, b, "lib", LIB) for b in ("build", "build-test", "build-gpu")]
    for c in cands:
        if os.path.isfile(c):
            return c
    return None


def _metadata(version):
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
            "Summary: GPU operator timing with zlbench's engine: do_bench and "
            "do_bench_cudagraph drop-ins\nRequires-Python: >=3.8\n")


def _tag(with_lib):
    if not with_lib:
        return "py3-none-any"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"py3-none-{plat}"


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, files, version, tag):
    dist = f"{NAME}-{version}.dist-info"
    name = f"{NAME}-{version}-{tag}.whl"
    path = os.path.join(wheel_directory, name)
    wheel_meta = (f"Wheel-Version: 1.0\nGenerator: zlbench_build\nRoot-Is-Purelib: "
                  f"{'true' if tag.endswith('-any') else 'false'}\nTag: {tag}\n")
    files = list(files) + [(f"{dist}/METADATA", _metadata(version).encode()),
                           (f"{dist}/WHEEL", wheel_meta.encode()),
                           (f"{dist}/top_level.txt", f"{NAME}\n".encode())]
    record = [_record_line(arc, data) for arc, data in files] + [f"{dist}/RECORD,,"]
    files.append((f"{dist}/RECORD", ("\n".join(record) + "\n").encode()))
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            info = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if arc.endswith(".so") else 0o644) << 16
            z.writestr(info, data)
    os.replace(tmp, path)
    return name


def _package_files():
    out = []
    pkg = os.path.join(HERE, NAME)
    for fn in sorted(os.listdir(pkg)):
        if fn.endswith(".py"):
            with open(os.path.join(pkg, fn), "rb") as f:
                out.append((f"{NAME}/{fn}", f.read()))
    return out


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    files = _package_files()
    lib = _find_lib()
    if lib:
        with open(lib, "rb") as f:
            files.append((f"{NAME}/{LIB}", f.read()))
    return _write_wheel(wheel_directory, files, version, _tag(lib is not None))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    pth = (HERE + "\n").encode()
    return _write_wheel(wheel_directory, [(f"__editable__.{NAME}.pth", pth)], version,
                        "py3-none-any")


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = f"{NAME}-{version}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "_build/zlbench_build.py"] + [
                a for a, _ in _package_files()]:
            t.add(os.path.join(HERE, rel), arcname=f"{base}/{rel}")
        data = _metadata(version).encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []
