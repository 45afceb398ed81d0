#!/usr/bin/env bash
# zlbench ab --self on chosen operators under both pair orders (--order abba
# and random), RUNS runs each with seeds 1..RUNS: the false verdicts per
# order, and per row whether A's and B's blocks sit at different levels
# (all pairs one way). Each run's results.json is kept under $OUT/ab-order.
# Usage: BUILD=build-gpu OUT=/tmp/zlb-out bash bench/ab_order.sh [OPS...]
#   (default OPS: nonzero; RUNS default 5; BACKEND default cuda; AB_ARGS
#   more options)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-/tmp/zlb-out}/ab-order
ZLB="$BUILD/bin/zlbench"
RUNS=${RUNS:-5}
AB_ARGS=${AB_ARGS:-}
OPS=${*:-nonzero}
export NO_COLOR=1
mkdir -p "$OUT"
[ -x "$ZLB" ] || { echo "no $ZLB: build first" >&2; exit 2; }

for order in abba random; do
  for i in $(seq 1 "$RUNS"); do
    d="$OUT/$order-$i"
    t0=$SECONDS
    # shellcheck disable=SC2086 # OPS, AB_ARGS: several words
    "$ZLB" ab $OPS --self --backend "${BACKEND:-cuda}" --order "$order" --seed "$i" $AB_ARGS --out "$d" \
      >"$d.log" 2>&1
    echo "$order run $i: exit $? in $((SECONDS - t0)) s: $(grep -o 'false verdicts: [0-9]* of [0-9]* rows' "$d.log" | tail -1)"
  done
done | tee "$OUT/runs.txt"

# Per order: false verdicts, and rows whose pairs all differ one way.
python3 - "$OUT" "$RUNS" <<'PY' | tee "$OUT/summary.txt"
import json, os, sys
out, runs = sys.argv[1], int(sys.argv[2])
for order in ("abba", "random"):
    false = oneway = rows = 0
    for i in range(1, runs + 1):
        p = os.path.join(out, f"{order}-{i}", "results.json")
        if not os.path.exists(p):
            print(f"{order} run {i}: no results.json")
            continue
        for r in json.load(open(p))["rows"]:
            if r["status"] != "SUCCESS":
                continue
            rows += 1
            false += r["verdict"] in ("faster", "slower")
            a = [b["ms"] for b in r["blocks"] if b["side"] == "A"]
            b = [b["ms"] for b in r["blocks"] if b["side"] == "B"]
            if all(y > x for x, y in zip(a, b)) or all(y < x for x, y in zip(a, b)):
                oneway += 1
    print(f"{order}: {rows} rows, {false} false verdicts, {oneway} rows with every pair one way")
PY
