#!/usr/bin/env bash
# zlbench compare on the CUDA corpus (issue 13's accelerator check): two core
# screens of every CUDA operator minutes apart (expect no row "slower" at the
# 2 % threshold: "same" or "noisy" only), a third with one candidate slowed
# by ZL_TEST_SLOW_CANDIDATE (the harness enqueues it twice per timed call;
# expect exactly that operator's rows "slower"), both comparisons in every
# format, the HTML report of the third screen against the first, and a
# headless-Chromium screenshot of it when Chromium is installed.
# About 4 minutes on one H200 (a core screen takes about 77 s; with TRIALS=3
# and RUN_ARGS="--rep-ms 20 --warmup-ms 5", about 110 s).
# Usage: BUILD=build-gpu OUT=/tmp/zlb-out bash bench/compare/run.sh
#   SLOW_OP   the operator whose candidate is slowed (default softmax)
#   DEVICES   --devices of the screens (default 0)
#   BACKEND, OPS  for a dry run elsewhere (default cuda, every operator),
#             e.g. BACKEND=host OPS=add,softmax SLOW_OP=add
#   TRIALS    --trials of every screen (default 1): each row measured
#             TRIALS times on fresh tensors, so that a row whose time
#             depends on where its data lies shows it inside one screen
#   RUN_ARGS  more run options for every screen, e.g. "--rep-ms 20"
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-/tmp/zlb-out}
WORK=${WORK:-/tmp/zlb-work}/compare
ZLB="$BUILD/bin/zlbench"
SLOW_OP=${SLOW_OP:-softmax}
DEVICES=${DEVICES:-0}
BACKEND=${BACKEND:-cuda}
OPS=${OPS:-}
TRIALS=${TRIALS:-1}
RUN_ARGS=${RUN_ARGS:-}
export NO_COLOR=1
rm -rf "$WORK"
mkdir -p "$WORK" "$OUT"
SUM="$OUT/compare-summary.txt"
: >"$SUM"
note() { echo "$*" | tee -a "$SUM"; }
[ -x "$ZLB" ] || { note "no $ZLB: build first (bash bench/gpu_all.sh build)"; exit 2; }

screen() { # NAME [env...]
  local name=$1 t0=$SECONDS
  shift
  # shellcheck disable=SC2086 # RUN_ARGS: several options
  env "$@" "$ZLB" batch --backend "$BACKEND" --devices "$DEVICES" ${OPS:+--ops "$OPS"} --out "$WORK/$name" \
    --trials "$TRIALS" $RUN_ARGS >"$WORK/$name.log" 2>&1
  note "screen $name: exit $? in $((SECONDS - t0)) s: $(tail -2 "$WORK/$name.log" | head -1)"
}
screen A
screen A2
screen S ZL_TEST_SLOW_CANDIDATE="$SLOW_OP"

cmp_all() { # A B NAME
  local t0=$SECONDS rc
  "$ZLB" compare "$1" "$2" >"$OUT/compare-$3.txt" 2>"$WORK/compare-$3.err"
  rc=$?
  "$ZLB" compare "$1" "$2" --format md --out "$OUT/compare-$3.md" 2>/dev/null
  "$ZLB" compare "$1" "$2" --format csv --out "$OUT/compare-$3.csv" 2>/dev/null
  "$ZLB" compare "$1" "$2" --format json --out "$WORK/compare-$3.json" 2>/dev/null
  note "compare $3: exit $rc in $((SECONDS - t0)) s (4 formats): $(tail -1 "$OUT/compare-$3.txt")"
  [ -s "$WORK/compare-$3.err" ] && note "  stderr: $(head -3 "$WORK/compare-$3.err")"
  return $rc
}
cmp_all "$WORK/A" "$WORK/A2" same
rc_same=$?
cmp_all "$WORK/A" "$WORK/S" slow
rc_slow=$?

# The expectations, checked from the CSV.
csv="$OUT/compare-same.csv"
n_slow_same=$(awk -F, '$1 == "slower"' "$csv" | wc -l)
note "same pair: $n_slow_same rows slower (expected 0), exit $rc_same (expected 0); verdicts:" \
  "$(awk -F, 'NR > 1 { n[$1]++ } END { for (v in n) printf "%s=%d ", v, n[v] }' "$csv")"
csv="$OUT/compare-slow.csv"
n_op=$(awk -F, -v op="$SLOW_OP" '$2 == op && $1 != "unmatched"' "$csv" | wc -l)
n_op_slow=$(awk -F, -v op="$SLOW_OP" '$1 == "slower" && $2 == op' "$csv" | wc -l)
n_other_slow=$(awk -F, -v op="$SLOW_OP" '$1 == "slower" && $2 != op' "$csv" | wc -l)
note "slowed pair: $SLOW_OP rows slower: $n_op_slow of $n_op (expected all); other rows slower:" \
  "$n_other_slow (expected 0); exit $rc_slow (expected 1)"
grep -E "^[a-z/]+ +$SLOW_OP " "$OUT/compare-slow.txt" | head -20 >>"$SUM"

t0=$SECONDS
"$ZLB" report "$WORK/S" --compare "$WORK/A" --fail-on never --out "$OUT/compare-report.html" \
  >>"$SUM" 2>&1
note "report: exit $? in $((SECONDS - t0)) s, $(wc -c <"$OUT/compare-report.html") bytes"
CHROME=""
for c in chromium chromium-browser google-chrome; do
  command -v "$c" >/dev/null 2>&1 && { CHROME=$c; break; }
done
if [ -n "$CHROME" ]; then
  "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1366,2200 \
    --user-data-dir="$WORK/profile" --screenshot="$OUT/compare-report.png" \
    "file://$OUT/compare-report.html" >/dev/null 2>&1
  note "screenshot: $OUT/compare-report.png ($(wc -c <"$OUT/compare-report.png" 2>/dev/null || echo 0) bytes)"
else
  note "screenshot: skipped, no chromium on this machine (take it elsewhere from compare-report.html)"
fi
tar -czf "$OUT/compare-logs.tar.gz" -C "$WORK" --exclude=profile . 2>/dev/null
note "results: $OUT (compare-*.txt/md/csv, compare-report.html, compare-logs.tar.gz)"
