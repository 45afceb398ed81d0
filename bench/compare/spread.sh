#!/usr/bin/env bash
# How much one row's latency moves between processes, against the spread of
# its samples inside one process: N separate `zlbench run` processes of the
# rows that compare called changed between two unchanged screens (bmm
# float16 [4, 1024^3], mv bfloat16 [4096, 4096], nonzero float32 [1024,
# 1024]), each process's median and noise, then the spread of the medians;
# then one process with --trials N (each trial on fresh tensors): does the
# spread between trials show what the spread between processes does?
#
#   BUILD=build-gpu OUT=/tmp/spread N=8 bash bench/compare/spread.sh
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-/tmp/zlb-spread}
N=${N:-8}
Z=${Z:-$BUILD/bin/zlbench}
mkdir -p "$OUT"
cat >"$OUT/shapes.yaml" <<'YAML'
bmm:
  shape_desc: "B, M, N, K"
  shapes:
    - [4, 1024, 1024, 1024]
mv:
  shape_desc: "M, K"
  shapes:
    - [4096, 4096]
nonzero:
  shape_desc: "extents"
  shapes:
    - [1024, 1024]
YAML
for spec in ${SPECS:-bmm:float16 mv:bfloat16 nonzero:float32}; do
  op=${spec%%:*} dt=${spec#*:}
  for i in $(seq 1 "$N"); do
    "$Z" run "$op" --dtypes "$dt" --shape-file "$OUT/shapes.yaml" --color never \
      --out "$OUT/$op-$i" --json "$OUT/$op-$i.json" >"$OUT/$op-$i.log" 2>&1 ||
      echo "$op run $i: exit $?"
  done
  "$Z" run "$op" --dtypes "$dt" --shape-file "$OUT/shapes.yaml" --color never --trials "$N" \
    --out "$OUT/$op-trials" --json "$OUT/$op-trials.json" >"$OUT/$op-trials.log" 2>&1 ||
    echo "$op --trials $N: exit $?"
done
python3 - "$OUT" "$N" "${OPS:-bmm mv nonzero}" <<'PY'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
print("| row | impl | process medians (us) | spread of medians % | median in-process noise % |")
print("|---|---|---|---:|---:|")
for op in sys.argv[3].split():
    per = {}
    for i in range(1, n + 1):
        try:
            d = json.load(open(f"{out}/{op}-{i}.json"))
        except Exception as e:
            print(f"{op} {i}: {e}"); continue
        rows = [r for t in d.get("tables") or [] for r in t.get("rows") or []]
        for r in rows:
            for impl in ("baseline", "candidate"):
                m = r.get(impl) or {}
                s = m.get("samples") or []
                if not s: continue
                sm = statistics.median(s)
                noise = (statistics.pstdev(s) / statistics.mean(s) * 100) if len(s) > 1 else 0
                per.setdefault(impl, []).append((sm * 1e3, noise))
    for impl, xs in per.items():
        meds = [x[0] for x in xs]
        spread = (max(meds) - min(meds)) / statistics.median(meds) * 100
        print(f"| {op} | {impl} | {' '.join(f'{m:.2f}' for m in meds)} | {spread:.1f} | "
              f"{statistics.median(x[1] for x in xs):.2f} |")
    try:
        d = json.load(open(f"{out}/{op}-trials.json"))
    except Exception as e:
        print(f"{op} trials: {e}"); continue
    for r in [r for t in d.get("tables") or [] for r in t.get("rows") or []]:
        for impl in ("baseline", "candidate"):
            t = [x * 1e3 for x in (r.get(impl) or {}).get("trials") or []]
            if len(t) > 1:
                sp = (max(t) - min(t)) / statistics.median(t) * 100
                print(f"| {op} | {impl}, {len(t)} trials in one process | "
                      f"{' '.join(f'{v:.2f}' for v in t)} | {sp:.1f} | - |")
PY
