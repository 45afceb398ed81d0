#!/usr/bin/env bash
# The Python timers' fidelity benchmark on a CUDA machine with torch and
# triton, in one command (builds libzlbench.so when BUILD has none):
#   bench/python/run.sh [BUILD_DIR] [OUT_DIR]
# Writes OUT_DIR/fidelity.md and OUT_DIR/fidelity.json (bench/python/fidelity.py).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build-gpu}
OUTD=${2:-${OUT:-/tmp/zlb-out}/python-fidelity}
mkdir -p "$OUTD"
if [ ! -f "$BUILD/lib/libzlbench.so" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DZLB_TESTS=OFF >"$OUTD/build.log" 2>&1 &&
    cmake --build "$BUILD" -j "$(nproc)" --target zlbench_shared >>"$OUTD/build.log" 2>&1 ||
    { tail -30 "$OUTD/build.log"; echo "bench/python/run.sh: the build failed" >&2; exit 1; }
fi
PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" ZL_LIB_DIR="$BUILD/lib" \
  exec "${PYTHON:-python3}" "$ROOT/bench/python/fidelity.py" --out "$OUTD" "${@:3}"
