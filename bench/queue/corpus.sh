#!/usr/bin/env bash
# The queue timer on the corpus's short kernels: each operator's rows timed
# by the queue timer (as it is, and calibrated: --queue-calibrate), the
# graph and trace timers (L2 warm: --no-flush for trace), one
# process each, candidate implementation; a table of per-row medians with
# the queue and graph timers' differences from trace, in us.
# Usage: BUILD=build-gpu OUT=... bash bench/queue/corpus.sh [OP ...]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-/tmp/zlb-out}
WORK=${WORK:-/tmp/zlb-work}/queue-corpus
ZLB="$BUILD/bin/zlbench"
OPS=${*:-add mul exp softmax sum layer_norm cumsum}
mkdir -p "$WORK" "$OUT"
export NO_COLOR=1
for op in $OPS; do
  for t in queue queuecal graph trace; do
    extra="" timer=$t
    [ "$t" = trace ] && extra="--no-flush"
    [ "$t" = queuecal ] && extra="--queue-calibrate" timer=queue
    "$ZLB" run "$op" --backend cuda --dtypes float32 --timer "$timer" $extra \
      --json "$WORK/$op-$t.json" --out "$WORK/run-$op-$t" >"$WORK/$op-$t.log" 2>&1 ||
      echo "$op $t: rc=$? (see $WORK/$op-$t.log)" >&2
  done
done
python3 - "$WORK" $OPS <<'PY' | tee "$OUT/queue-corpus.md"
import json, os, sys
work, ops = sys.argv[1], sys.argv[2:]
def rows(op, t):
    p = os.path.join(work, f"{op}-{t}.json")
    if not os.path.exists(p):
        return {}
    d = json.load(open(p))
    return {(tb["dtype"], r["shape"]): r for tb in d["tables"] for r in tb["rows"]}
print("| op | shape | trace warm (us) | queue (us) | queue - trace | queue cal (us) | cal - trace | "
      "graph (us) | graph - trace | queue K | marker |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
worst = worst_cal = 0.0
for op in ops:
    q, g, tr, qc = rows(op, "queue"), rows(op, "graph"), rows(op, "trace"), rows(op, "queuecal")
    for key in tr:
        if key not in q or key not in g:
            continue
        ms = lambda r: r["candidate"]["ms"] if r["candidate"]["ms"] is not None else float("nan")
        t_us, q_us, g_us = ms(tr[key]) * 1e3, ms(q[key]) * 1e3, ms(g[key]) * 1e3
        c_us = ms(qc[key]) * 1e3 if key in qc else float("nan")
        k = q[key]["candidate"].get("queue_launches", "-")
        worst = max(worst, abs(q_us - t_us)) if q_us == q_us and t_us == t_us else worst
        worst_cal = max(worst_cal, abs(c_us - t_us)) if c_us == c_us and t_us == t_us else worst_cal
        print(f"| {op} | {key[1]} | {t_us:.2f} | {q_us:.2f} | {q_us - t_us:+.2f} | {c_us:.2f} | "
              f"{c_us - t_us:+.2f} | {g_us:.2f} | {g_us - t_us:+.2f} | {k} | {q[key]['marker'] or '-'} |")
print(f"\nworst |queue - trace|: {worst:.2f} us; calibrated: {worst_cal:.2f} us")
PY
