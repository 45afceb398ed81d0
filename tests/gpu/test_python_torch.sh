# The Python package on CUDA with torch (tests/gpu/python_torch.py): graph
# timing of a torch operator through torch's capture, a host synchronisation
# inside fn falling back to direct timing with a marker, a random operator
# measured without disturbing torch's RNG, exceptions from fn re-raised.
# Skips (77) without a GPU, or without a Python that has torch and pytest.
. "$(dirname "$0")/lib.sh"
LIB="$ZLB_BUILD/lib/libzlbench.so"
[ -f "$LIB" ] || fail "no $LIB: the build has no libzlbench.so"
PY=""
for p in ${ZLB_PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 &&
    "$p" -c "import torch, pytest; assert torch.cuda.is_available()" >/dev/null 2>&1; then
    PY=$p
    break
  fi
done
if [ -z "$PY" ]; then
  echo "SKIP: no Python with torch (CUDA) and pytest (set ZLB_PYTHON to one)"
  exit 77
fi
export PYTHONPATH="$ZLB_SRC/python" ZL_LIB_DIR="$ZLB_BUILD/lib" PYTHONDONTWRITEBYTECODE=1
# A sanitised library needs the sanitiser runtimes loaded first into the
# interpreter (whose own leaks are not ours), and CUDA needs ASan's shadow
# gap unprotected.
pre=""
for san in asan ubsan; do
  if readelf -d "$LIB" | grep -q "lib$san"; then
    pre="$pre${pre:+:}$(cc -print-file-name=lib$san.so)"
  fi
done
if [ -n "$pre" ]; then
  export LD_PRELOAD="$pre"
  export ASAN_OPTIONS="detect_leaks=0:protect_shadow_gap=0:alloc_dealloc_mismatch=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
"$PY" -m pytest -q -p no:cacheprovider -rs "$ZLB_SRC/tests/gpu/python_torch.py" >"$TMP/pytest.log" 2>&1
rc=$?
cat "$TMP/pytest.log"
keep "$TMP/pytest.log"
[ $rc = 0 ] || fail "the Python package's CUDA tests failed (rc $rc) with $PY"
echo "ok: the Python package on CUDA with torch ($PY)"
