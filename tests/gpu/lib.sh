# Shared by the GPU tests: skip (exit 77, with a visible message) where no
# CUDA device or no CUDA build is present; otherwise the CLI test helpers.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/table.sh"
if [ -z "${ZLB_GPUTEST_OPS:-}" ]; then
  echo "SKIP: this build has no CUDA corpus (nvcc was not found at configure time)"
  exit 77
fi
if ! "$ZLBENCH" devices --backend cuda --count >"$TMP/count" 2>"$TMP/count.err"; then
  echo "SKIP: no usable CUDA device here: $(cat "$TMP/count.err")"
  exit 77
fi
NGPU=$(awk '{print $2}' "$TMP/count")
if [ "${NGPU:-0}" -lt 1 ]; then
  echo "SKIP: the CUDA driver reports no device"
  exit 77
fi
GPU_SHAPES="$ZLB_SRC/tests/gpu/shapes_small.yaml"
# Where to keep logs for bench/RESULTS.md (the device script sets it).
KEEP=${ZLB_GPU_LOG_DIR:-}
keep() { [ -n "$KEEP" ] && mkdir -p "$KEEP" && cp -r "$@" "$KEEP"/ 2>/dev/null; return 0; }

# The Python package's GPU tests: use_torch_python MODULES... sets PY to
# the first Python (ZLB_PYTHON, python3, /usr/bin/python3) that imports
# torch with a CUDA device and MODULES, or skips (77) saying what is
# missing; points the package at this build's libzlbench.so; and, for a
# sanitised library, preloads the sanitiser runtimes into the interpreter
# (whose own leaks are not ours) with ASan's shadow gap unprotected, as
# CUDA needs.
use_torch_python() {
  local p mods="" m san pre=""
  for m in "$@"; do mods="$mods, $m"; done
  LIB="$ZLB_BUILD/lib/libzlbench.so"
  [ -f "$LIB" ] || fail "no $LIB: the build has no libzlbench.so"
  PY=""
  for p in ${ZLB_PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 &&
      "$p" -c "import torch$mods; assert torch.cuda.is_available()" >/dev/null 2>&1; then
      PY=$p
      break
    fi
  done
  if [ -z "$PY" ]; then
    echo "SKIP: no Python with torch (CUDA)${mods:+ and${mods#,}} (set ZLB_PYTHON to one)"
    exit 77
  fi
  export PYTHONPATH="$ZLB_SRC/python" ZL_LIB_DIR="$ZLB_BUILD/lib" PYTHONDONTWRITEBYTECODE=1
  for san in asan ubsan; do
    if readelf -d "$LIB" | grep -q "lib$san"; then
      pre="$pre${pre:+:}$(cc -print-file-name=lib$san.so)"
    fi
  done
  if [ -n "$pre" ]; then
    export LD_PRELOAD="$pre"
    export ASAN_OPTIONS="detect_leaks=0:protect_shadow_gap=0:alloc_dealloc_mismatch=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  fi
}
