#!/usr/bin/env bash
# Where a FlagGems child's fixed start-up goes before its first test: torch,
# triton and pytest (which the batch's fork server preloads), then CUDA's
# start in torch, then `import flag_gems`, each timed in a fresh
# interpreter; then the import's own profile (cProfile, top functions by
# cumulative time) and the slowest modules (-X importtime).
#
#   FG=.flaggems OUT=/tmp/prof bash bench/flaggems/import_profile.sh
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FG=${FG:-$ROOT/.flaggems}
OUT=${OUT:-/tmp/zlb-import-profile}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
export PYTHONPATH="$FG/src:$FG${PYTHONPATH:+:$PYTHONPATH}"
export GEMS_VENDOR=${GEMS_VENDOR:-nvidia} NO_COLOR=1
for i in 1 2; do
  "$PYTHON" - <<'PY'
import time
t = time.perf_counter()
def lap(what):
    global t
    now = time.perf_counter()
    print(f"{what:<28} {now - t:7.3f} s")
    t = now
import torch; lap("import torch")
import triton; lap("import triton")
import pytest; lap("import pytest")
torch.cuda.init(); torch.empty(1, device="cuda"); lap("CUDA start (torch)")
import flag_gems; lap("import flag_gems")
PY
  echo "--"
done | tee "$OUT/laps.txt"
"$PYTHON" - "$OUT/cprofile.txt" <<'PY'
import cProfile, io, pstats, sys
import torch, triton, pytest
torch.empty(1, device="cuda")
pr = cProfile.Profile()
pr.enable()
import flag_gems  # noqa: F401
pr.disable()
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(45)
open(sys.argv[1], "w").write(s.getvalue())
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
open(sys.argv[1], "a").write(s.getvalue())
PY
"$PYTHON" -X importtime -c 'import torch, triton, pytest; torch.empty(1, device="cuda"); import flag_gems' \
  2>"$OUT/importtime.txt"
echo "slowest modules (self us, cumulative us), after torch/triton/pytest:"
grep 'flag_gems\|sqlalchemy\|yaml' "$OUT/importtime.txt" | sort -t'|' -k2 -n -r | head -15
echo "slowest by self time:"
sort -t'|' -k1.13 -n -r "$OUT/importtime.txt" | head -12
echo "cProfile top (cumulative):"
sed -n 1,60p "$OUT/cprofile.txt" | cut -c1-160
