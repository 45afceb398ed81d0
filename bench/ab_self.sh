#!/usr/bin/env bash
# zlbench ab on the CUDA corpus: the false-verdict rate and a real slowdown.
# Three runs of `zlbench ab --self` over the core screen's operators at the
# default settings (any faster or slower verdict is false), then one run
# where side B is the corpus with one operator's candidate slowed by 5 %
# (tests/ab/ab_slow.c, CUDA build: a spin kernel after each call sized from
# the candidate's own measured time), which should be "slower" on every row
# of that operator. Prints per run: rows, false verdicts (or slowed rows
# found slower / total), wall time. Full logs and results under $OUT.
# Usage: BUILD=build-gpu OUT=/tmp/zlb-out bash bench/ab_self.sh
#   RUNS      self-compare runs (default 3)
#   SLOW_OP   the operator slowed (default add), SLOW_PCT (default 5)
#   SLOW_ALL  1: the slowdown run covers every operator (default: SLOW_OP only)
#   AB_ARGS   more options for every run, e.g. "--blocks 16"
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-/tmp/zlb-out}/ab
ZLB="$BUILD/bin/zlbench"
CORPUS=${CORPUS:-$BUILD/lib/zlbench/libzlb_ops_cuda.so}
SLOWLIB=${SLOWLIB:-$BUILD/lib/zlbench-test/libzlb_ab_slow_cuda.so}
RUNS=${RUNS:-3}
SLOW_OP=${SLOW_OP:-add}
SLOW_PCT=${SLOW_PCT:-5}
SLOW_ALL=${SLOW_ALL:-0}
AB_ARGS=${AB_ARGS:-}
export NO_COLOR=1
mkdir -p "$OUT"
SUM="$OUT/ab-summary.txt"
: >"$SUM"
note() { echo "$*" | tee -a "$SUM"; }
[ -x "$ZLB" ] || { note "no $ZLB: build first"; exit 2; }
[ -f "$CORPUS" ] || { note "no CUDA corpus at $CORPUS"; exit 2; }

# counts DIR: "rows R, same S, faster F, slower L, ambiguous A, failed X"
counts() {
  python3 - "$1/results.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print("rows %d, same %d, faster %d, slower %d, ambiguous %d, failed %d" %
      (s["rows"], s["same"], s["faster"], s["slower"], s["ambiguous"], s["failed"]))
PY
}

total_false=0
for i in $(seq 1 "$RUNS"); do
  t0=$SECONDS
  # shellcheck disable=SC2086 # AB_ARGS: several options
  "$ZLB" ab --self --backend cuda $AB_ARGS --out "$OUT/self$i" >"$OUT/self$i.log" 2>&1
  rc=$?
  fv=$(grep -o 'false verdicts: [0-9]* of [0-9]* rows' "$OUT/self$i.log" | tail -1)
  note "self run $i: exit $rc in $((SECONDS - t0)) s: ${fv:-no summary line}; $(counts "$OUT/self$i" 2>/dev/null)"
  n=$(echo "$fv" | awk '{print $3}')
  total_false=$((total_false + ${n:-9999}))
  python3 - "$OUT/self$i/results.json" <<'PY' | tee -a "$SUM"
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    if r["verdict"] in ("faster", "slower"):
        print("  false: %s %s %s %s ratio %.4f [%.4f, %.4f]" % (r["operator"], r["dtype"], r["shape"],
              r["verdict"], r["ratio"], r["lo"], r["hi"]))
PY
done
note "self runs: $total_false false verdicts in $RUNS runs"

t0=$SECONDS
ops=$SLOW_OP
[ "$SLOW_ALL" = 1 ] && ops=
# shellcheck disable=SC2086
ZL_AB_WRAP="$CORPUS" ZL_AB_SLOW="$SLOW_OP:$SLOW_PCT" "$ZLB" ab $ops --backend cuda --lib-b "$SLOWLIB" \
  $AB_ARGS --out "$OUT/slow" >"$OUT/slow.log" 2>&1
rc=$?
found=$(python3 - "$OUT/slow/results.json" "$SLOW_OP" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["operator"] == sys.argv[2]]
slow = [r for r in rows if r["verdict"] == "slower"]
print("%d / %d" % (len(slow), len(rows)))
for r in rows:
    if r["verdict"] != "slower":
        print("  missed: %s %s %s ratio %s" % (r["dtype"], r["shape"], r["verdict"], r["ratio"]),
              file=sys.stderr)
PY
)
note "slow run ($SLOW_OP +$SLOW_PCT %): exit $rc in $((SECONDS - t0)) s: $SLOW_OP rows found slower: $found; $(counts "$OUT/slow" 2>/dev/null)"
python3 - "$OUT/slow/results.json" "$SLOW_OP" <<'PY' | tee -a "$SUM"
import json, sys
rs = [r["ratio"] for r in json.load(open(sys.argv[1]))["rows"] if r["operator"] == sys.argv[2] and r["ratio"]]
if rs:
    rs.sort()
    print("  %s B/A ratios: min %.4f, median %.4f, max %.4f" % (sys.argv[2], rs[0], rs[len(rs) // 2], rs[-1]))
PY
