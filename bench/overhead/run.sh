#!/usr/bin/env bash
# Per-row overhead on a device: what a row costs beyond its timing budget.
# Each operator runs once with --json; every row's phases (describe,
# allocate, fill, prepare, accuracy, timing, release) and wall time go into
# analyze.py's table. Also: `zlbench run sort` with 1 ms budgets, and
# (SCREEN=1) the core-level batch over every operator on one GPU.
# Usage: BUILD=build-gpu OUT=... bash bench/overhead/run.sh
#   OPS=a,b   only these operators (default: every registered one)
#   BACKEND   cuda (default) or host
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-/tmp/zlb-out}
BACKEND=${BACKEND:-cuda}
WORK=${WORK:-/tmp/zlb-work}/overhead
ZLB="$BUILD/bin/zlbench"
mkdir -p "$WORK" "$OUT"
export NO_COLOR=1
OPS=${OPS:-$("$ZLB" inventory --registered --backend "$BACKEND" | awk '{print $1}' | paste -sd, -)}
# The default budgets (ms per implementation); the analysis needs them.
WARM=${WARM:-10}
REP=${REP:-40}

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

: >"$WORK/process.tsv"
for op in ${OPS//,/ }; do
  t0=$(now)
  "$ZLB" run "$op" --backend "$BACKEND" --warmup-ms "$WARM" --rep-ms "$REP" \
    --json "$WORK/$op.json" --out "$WORK/run-$op" >"$WORK/$op.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$op" "$rc" "$(secs "$t0" "$(now)")" >>"$WORK/process.tsv"
done

# sort with 1 ms budgets, three times: the row cost is almost all set-up.
: >"$WORK/sort1.tsv"
for i in 1 2 3; do
  t0=$(now)
  "$ZLB" run sort --backend "$BACKEND" --warmup-ms 1 --rep-ms 1 --json "$WORK/sort-1ms-$i.json" \
    --out "$WORK/run-sort-1ms-$i" >"$WORK/sort-1ms-$i.log" 2>&1
  printf 'sort-1ms-%s\t%s\t%s\n' "$i" "$?" "$(secs "$t0" "$(now)")" >>"$WORK/sort1.tsv"
done

if [ "${SCREEN:-0}" = 1 ]; then
  t0=$(now)
  timeout "${SCREEN_LIMIT:-400}" "$ZLB" batch --backend "$BACKEND" --devices 0 --ops "$OPS" \
    --out "$WORK/screen-1gpu" --progress never >"$WORK/screen-1gpu.log" 2>&1
  printf 'screen-1gpu\t%s\t%s\n' "$?" "$(secs "$t0" "$(now)")" >"$WORK/screen.tsv"
  cp "$WORK/screen-1gpu/ops_status.csv" "$WORK/screen-1gpu.ops_status.csv" 2>/dev/null
fi

python3 "$ROOT/bench/overhead/analyze.py" "$WORK" "$WARM" "$REP" | tee "$OUT/overhead.txt"
(cd "$WORK/.." && tar -czf "$OUT/overhead.tar.gz" --exclude='run-*' overhead)
