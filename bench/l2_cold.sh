#!/usr/bin/env bash
# Cold L2 in the graph and queue timers against the reference, the trace
# timer (CUPTI kernel time, the L2 flushed before each call, outside the
# traced interval), the queue timer both plain and calibrated
# (--queue-calibrate): neg (a copy) over sizes of about 2-500 us per call,
# one process per timer, candidate implementation. Prints a table of the
# per-row values and the cold timers' differences from trace (docs/timing.md,
# "Cold L2": within 2 % from 5 us is the target), and the warm graph timer
# against the warm trace timer (--no-flush): a timer's own offset from
# CUPTI, apart from what the flush and its subtraction add; and each cold
# timer against a trace timer that flushes as it does (--flush-mib): the
# last diff column is graph cold against trace at the cold timers' flush
# size, then graph cold at 256 MiB against trace at 256 MiB. Builds
# nothing.
# OP (default neg) picks the operator, with its shapes in bench/l2/shapes.yaml:
# `sum` (rows of 2048 columns: one kernel a call, as neg) moves as many bytes, all
# read, writing almost nothing, so the kernel leaves no
# dirty output lines in the L2 for the next flush to write back; where the
# cold timers' difference from trace grows with neg's output but not with
# sum's, it is that write-back, which the flush after the kernel pays and
# the flush alone (the subtracted part) does not.
# The calibrated graph timer (--graph-calibrate: each call between its own
# event nodes in the graph) has a table of its own. trace-queued is the
# reference with each call queued right behind its flush (--trace-flush
# queued, at the cold timers' flush size), as the cold timers' calls run:
# a table gives both calibrated timers against it and against trace, for
# the baseline's kernel as well as the candidate's.
# REPEAT=N (default 1) times the trace, cold graph and calibrated queue
# and graph timers N times in all, one process each, and adds a table of every
# repeat's difference and calibration per row: whether a row's offset and
# the calibration's value come back. That table also gives each calibrated
# value as it would be with the calibration of the traced batches or
# replays alone ("traced cal", calibration_traced_ms) and the difference
# ("tracing"): what tracing adds to an empty call.
# The last line gives each calibrated timer's worst difference from 5 us
# over every run, against the trace timer's median and against its mean
# (the calibrated timers' samples are means of K calls).
# SHAPES (default bench/l2/shapes.yaml) names another shape file of the same
# form, e.g. bench/l2/sweep.yaml (neg at sizes around an L2's capacity).
# Usage: BUILD=build-gpu [ZLBENCH=$BUILD/bin/zlbench] [OUT=dir] [OP=neg] [REPEAT=1] [SHAPES=file] bash bench/l2_cold.sh
#        TABLE=dir bash bench/l2_cold.sh   (the tables again from a folder OUT wrote; runs nothing)
# OUT (optional): the full log, the JSON files and the table go there.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=${REPEAT:-1}
case $REPEAT in '' | *[!0-9]* | 0) echo "l2_cold.sh: REPEAT must be a whole number from 1, not '$REPEAT'" >&2; exit 2 ;; esac
if [ -n "${TABLE:-}" ]; then
  [ -f "$TABLE/trace.json" ] || { echo "l2_cold.sh: TABLE=$TABLE holds no trace.json (a folder OUT wrote)" >&2; exit 2; }
  WORK=$TABLE
else
  BUILD=${BUILD:?set BUILD to a build directory with the CUDA corpus (build-*/lib/zlbench/libzlb_ops_cuda.so)}
  ZLB=${ZLBENCH:-$BUILD/bin/zlbench}
  SHAPES=${SHAPES:-$ROOT/bench/l2/shapes.yaml}
  [ -f "$SHAPES" ] || { echo "l2_cold.sh: no shape file at SHAPES=$SHAPES" >&2; exit 2; }
  OP=${OP:-neg}
  grep -q "^$OP:" "$SHAPES" || { echo "l2_cold.sh: no shapes for '$OP' in $SHAPES" >&2; exit 2; }
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/zlb-l2.XXXXXX")
  [ -x "$ZLB" ] || { echo "l2_cold.sh: no zlbench binary at $ZLB (set ZLBENCH)" >&2; exit 2; }
  ls "$BUILD"/lib/zlbench/libzlb_ops_cuda.so >/dev/null 2>&1 ||
    echo "l2_cold.sh: note: $BUILD/lib/zlbench/libzlb_ops_cuda.so not found; using the binary's built-in corpus" >&2
  export NO_COLOR=1
  LOG=$WORK/l2_cold.log
  : >"$LOG"
  run() { # name args...
    local name=$1
    shift
    echo "== $name: $ZLB run $OP --backend cuda --dtypes float32 --shape-file $SHAPES $*" >>"$LOG"
    "$ZLB" run "$OP" --backend cuda --dtypes float32 --shape-file "$SHAPES" \
      --json "$WORK/$name.json" --out "$WORK/run-$name" "$@" >>"$LOG" 2>&1 ||
      echo "l2_cold.sh: $name: exit $? (see the log)" | tee -a "$LOG" >&2
  }
  run trace --timer trace
  run graph-cold --timer graph --l2 cold
  run queue-cold --timer queue --l2 cold
  run queue-cold-cal --timer queue --l2 cold --queue-calibrate
  run graph-cold-cal --timer graph --l2 cold --graph-calibrate
  run graph-warm --timer graph --l2 warm
  run trace-warm --timer trace --no-flush
  # The same flush on both sides: the trace timer with the cold timers'
  # buffer (twice the L2), the graph timer with the trace timer's (256 MiB
  # on CUDA), so that a difference between the two columns of each pair is
  # the flush size's, not the timer's.
  cold_mib=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(max(
    r["candidate"].get("l2_flush_bytes", 0) for t in d["tables"] for r in t["rows"]) >> 20)' \
    "$WORK/graph-cold.json" 2>/dev/null)
  if [ -n "$cold_mib" ] && [ "$cold_mib" -gt 0 ]; then
    run trace-coldsize --timer trace --flush-mib "$cold_mib"
    run graph-cold-256 --timer graph --l2 cold --flush-mib 256
    # The reference as the cold timers' calls run: queued right behind a
    # flush of their size, no host wait between (--trace-flush queued).
    run trace-queued --timer trace --trace-flush queued --flush-mib "$cold_mib"
  fi
  # The repeats (REPEAT > 1): the reference and the two cold timers again.
  for r in $(seq 2 "$REPEAT"); do
    run "trace-r$r" --timer trace
    run "graph-cold-r$r" --timer graph --l2 cold
    run "queue-cold-cal-r$r" --timer queue --l2 cold --queue-calibrate
    run "graph-cold-cal-r$r" --timer graph --l2 cold --graph-calibrate
    [ -z "${cold_mib:-}" ] || [ "$cold_mib" -le 0 ] ||
      run "trace-queued-r$r" --timer trace --trace-flush queued --flush-mib "$cold_mib"
  done
fi
# TABLE: the folder is only read.
MD=$WORK/l2_cold.md
[ -z "${TABLE:-}" ] || MD=/dev/null
python3 - "$WORK" <<'PY' | tee "$MD"
import json, os, statistics, sys
work = sys.argv[1]
def rows(name, side="candidate"):
    p = os.path.join(work, name + ".json")
    if not os.path.exists(p):
        return {}
    d = json.load(open(p))
    return {r["shape"]: r[side] for t in d["tables"] for r in t["rows"]
            if r["status"] == "SUCCESS"}
tr, gc, qc, gw, qk, tw, ts, g256 = (rows(n) for n in (
    "trace", "graph-cold", "queue-cold", "graph-warm", "queue-cold-cal", "trace-warm",
    "trace-coldsize", "graph-cold-256"))
def us(m):
    return m["ms"] * 1e3 if m else float("nan")
def pct(a, b):
    return (a / b - 1) * 100 if a == a and b == b and b > 0 else float("nan")
def tcost(m):
    # What tracing added to an empty call: the calibration from the traced
    # batches or replays alone less the one subtracted (untraced pairs).
    if not m or "calibration_traced_ms" not in m:
        return float("nan")
    cal = m.get("queue_calibration_ms", m.get("graph_calibration_ms", float("nan")))
    return (m["calibration_traced_ms"] - cal) * 1e3
def us_traced(m):
    # The calibrated value had the traced calibration been subtracted.
    return us(m) - tcost(m)
print("| size | trace (us) | graph cold (us) | diff | queue cold (us) | diff | queue cold calibrated (us) | diff | its calibration (us) | graph warm (us) | trace warm (us) | diff | flush subtracted graph/queue (us) | trace, cold timers' flush (us) | graph cold, 256 MiB flush (us) | diff |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
worst_g = worst_q = worst_cal = 0.0
for shape in tr or gc:
    t, g, q, w = us(tr.get(shape)), us(gc.get(shape)), us(qc.get(shape)), us(gw.get(shape))
    c, x = us(qk.get(shape)), us(tw.get(shape))
    y, z = us(ts.get(shape)), us(g256.get(shape))
    dc = pct(c, t)
    fg = (gc.get(shape) or {}).get("l2_flush_ms", float("nan")) * 1e3
    fq = (qc.get(shape) or {}).get("l2_flush_ms", float("nan")) * 1e3
    # what the calibrated queue timer subtracted per call; "pairs": each
    # call was timed between its own event pair (docs/timing.md "Cold L2")
    kc = qk.get(shape) or {}
    kcal = f"{kc.get('queue_calibration_ms', float('nan')) * 1e3:.2f}" + (
        " pairs" if kc.get("queue_call_events") else "")
    dg, dq = pct(g, t), pct(q, t)
    if t >= 5:
        worst_g = max(worst_g, abs(dg) if dg == dg else 0)
        worst_q = max(worst_q, abs(dq) if dq == dq else 0)
        worst_cal = max(worst_cal, abs(dc) if dc == dc else 0)
    print(f"| {shape} | {t:.2f} | {g:.2f} | {dg:+.1f}% | {q:.2f} | {dq:+.1f}% | {c:.2f} | {dc:+.1f}% | {kcal} | {w:.2f} | {x:.2f} | {pct(w, x):+.1f}% | {fg:.1f} / {fq:.1f} | {y:.2f} | {z:.2f} | {pct(g, y):+.1f}% / {pct(z, t):+.1f}% |")
# The calibrated graph timer (--graph-calibrate: each call between its own
# event nodes in the graph); a folder from before it has no such run.
gk = rows("graph-cold-cal")
worst_gk = float("nan")
if gk:
    worst_gk = 0.0
    print("\n| size | trace (us) | graph cold calibrated (us) | diff | its calibration (us) | graph cold (us) | diff |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for shape in tr or gc:
        t, k, g = us(tr.get(shape)), us(gk.get(shape)), us(gc.get(shape))
        dk = pct(k, t)
        kcal = (gk.get(shape) or {}).get("graph_calibration_ms", float("nan")) * 1e3
        if t >= 5 and dk == dk:
            worst_gk = max(worst_gk, abs(dk))
        print(f"| {shape} | {t:.2f} | {k:.2f} | {dk:+.1f}% | {kcal:.2f} | {g:.2f} | {pct(g, t):+.1f}% |")
print(f"\nworst |cold - trace| from 5 us (target: 2 %): graph {worst_g:.1f}%, "
      f"calibrated queue {worst_cal:.1f}%, plain queue {worst_q:.1f}%"
      + (f", calibrated graph {worst_gk:.1f}%" if worst_gk == worst_gk else ""))
# The repeats: run 1 is the main table's; each run's own trace is its
# reference.
runs = [("", "1")] + [(f"-r{r}", str(r)) for r in range(2, 1000)
                      if os.path.exists(os.path.join(work, f"trace-r{r}.json"))]
if len(runs) > 1:
    def fmt(v, f):
        return f.format(v) if v == v else "-"
    reps = [(n, rows("trace" + sfx), rows("graph-cold" + sfx), rows("queue-cold-cal" + sfx),
             rows("graph-cold-cal" + sfx)) for sfx, n in runs]
    print(f"\n{len(runs)} runs of trace, graph cold and calibrated queue and graph (each run against its own trace):\n")
    # "traced cal": the value had the calibration from the traced batches
    # or replays alone been subtracted (the timers take the batches' times
    # from untraced ones); "tracing": what tracing added to an empty call.
    print("| size | run | trace (us) | graph cold diff | calibrated queue diff | its calibration (us) | calibrated graph diff | queue, traced cal diff | queue tracing (us) | graph, traced cal diff | graph tracing (us) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    spread = {}
    for shape in tr or gc:
        for n, rt, rg, rq, rk in reps:
            t = us(rt.get(shape))
            mq, mk = rq.get(shape), rk.get(shape)
            dg, dc, dk = pct(us(rg.get(shape)), t), pct(us(mq), t), pct(us(mk), t)
            dct, dkt = pct(us_traced(mq), t), pct(us_traced(mk), t)
            cal = (mq or {}).get("queue_calibration_ms", float("nan")) * 1e3
            spread.setdefault(shape, []).append((dg, dc, cal, dk, dct, dkt, tcost(mq), tcost(mk)))
            print(f"| {shape} | {n} | {fmt(t, '{:.2f}')} | {fmt(dg, '{:+.1f}%')} | "
                  f"{fmt(dc, '{:+.1f}%')} | {fmt(cal, '{:.2f}')} | {fmt(dk, '{:+.1f}%')} | "
                  f"{fmt(dct, '{:+.1f}%')} | {fmt(tcost(mq), '{:+.2f}')} | "
                  f"{fmt(dkt, '{:+.1f}%')} | {fmt(tcost(mk), '{:+.2f}')} |")
    print("\n| size | graph cold diff, min..max | calibrated queue diff, min..max | calibration, min..max (us) | calibrated graph diff, min..max | queue, traced cal diff | graph, traced cal diff | queue tracing (us) | graph tracing (us) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    def rng(v, f):
        v = [x for x in v if x == x]
        return f"{f.format(min(v))}..{f.format(max(v))}" if v else "-"
    pf, uf = '{:+.1f}%', '{:+.2f}'
    for shape, v in spread.items():
        print(f"| {shape} | " + " | ".join(rng([a[i] for a in v], f) for i, f in (
            (0, pf), (1, pf), (2, '{:.2f}'), (3, pf), (4, pf), (5, pf), (6, uf), (7, uf))) + " |")
# The calibrated timers' samples are means of K calls; the trace timer's
# value is the median of single calls. Where the calls' times are skewed
# the two differ by themselves: the same differences against the mean of
# the trace timer's samples (its run folder's results.json keeps them).
def samples(name):
    p = os.path.join(work, "run-" + name, "results.json")
    if not os.path.exists(p):
        return {}
    d = json.load(open(p))
    return {r["shape"]: r["candidate"].get("samples") or [] for t in d["tables"]
            for r in t["rows"] if r.get("candidate")}
mean_rows = []
for sfx, n in runs:
    ts, rq, rk = samples("trace" + sfx), rows("queue-cold-cal" + sfx), rows("graph-cold-cal" + sfx)
    for shape, s in ts.items():
        if s:
            med, mean = statistics.median(s) * 1e3, statistics.fmean(s) * 1e3
            mean_rows.append((shape, n, med, mean, pct(us(rq.get(shape)), mean),
                              pct(us(rk.get(shape)), mean)))
if mean_rows:
    print("\nAgainst the mean of the trace timer's samples (the calibrated timers' samples are means of K calls):\n")
    print("| size | run | trace median (us) | trace mean (us) | calibrated queue diff | calibrated graph diff |")
    print("|---|---:|---:|---:|---:|---:|")
    for shape, n, med, mean, dq, dk in mean_rows:
        print(f"| {shape} | {n} | {med:.2f} | {mean:.2f} | {dq:+.1f}% | {dk:+.1f}% |")
# The target over every run, against either statistic of the reference.
def worst(v):
    v = [abs(x) for x in v if x == x]
    return f"{max(v):.1f}%" if v else "-"
by_med = {"q": [], "k": []}
for sfx, n in runs:
    rt, rq, rk = rows("trace" + sfx), rows("queue-cold-cal" + sfx), rows("graph-cold-cal" + sfx)
    for shape in rt:
        t = us(rt.get(shape))
        if t >= 5:
            by_med["q"].append(pct(us(rq.get(shape)), t))
            by_med["k"].append(pct(us(rk.get(shape)), t))
by_mean = [r for r in mean_rows if r[2] >= 5]
# printed last, where gpu_all.sh's summary (the log's tail) shows it
final = (f"\nworst from 5 us over {len(runs)} run(s) (target: 2 %), against the trace timer's "
         f"median / mean: calibrated queue {worst(by_med['q'])} / {worst([r[4] for r in by_mean])}, "
         f"calibrated graph {worst(by_med['k'])} / {worst([r[5] for r in by_mean])}")
# The trace timer waits for each flush before it queues the call; the cold
# timers' calls go into the stream right behind theirs. The reference both
# ways (trace-queued: --trace-flush queued, at the cold timers' flush size),
# on both sides of each row (baseline and candidate are two kernels).
qruns = [(sfx, n) for sfx, n in runs if os.path.exists(os.path.join(work, "trace-queued" + sfx + ".json"))]
if qruns:
    print("\nThe reference with its flush waited for (trace) and queued right behind it (trace queued); each calibrated timer against both (b: baseline, c: candidate):\n")
    print("| size | run | side | trace (us) | trace queued (us) | queued - waited (us) | calibrated queue vs trace | vs trace queued | calibrated graph vs trace | vs trace queued |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    qspread = {}
    for sfx, n in qruns:
        for side in ("baseline", "candidate"):
            rt, rtq = rows("trace" + sfx, side), rows("trace-queued" + sfx, side)
            rq, rk = rows("queue-cold-cal" + sfx, side), rows("graph-cold-cal" + sfx, side)
            for shape in rt:
                t, tq = us(rt.get(shape)), us(rtq.get(shape))
                q, k = us(rq.get(shape)), us(rk.get(shape))
                v = (tq - t, pct(q, t), pct(q, tq), pct(k, t), pct(k, tq))
                qspread.setdefault((shape, side[0]), []).append(v)
                print(f"| {shape} | {n} | {side[0]} | {t:.2f} | {tq:.2f} | {v[0]:+.2f} | {v[1]:+.1f}% | {v[2]:+.1f}% | {v[3]:+.1f}% | {v[4]:+.1f}% |")
    if len(qruns) > 1:
        print("\n| size | side | queued - waited (us), min..max | calibrated queue vs trace | vs trace queued | calibrated graph vs trace | vs trace queued |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for (shape, side), v in qspread.items():
            cells = []
            for i, f in ((0, '{:+.2f}'), (1, '{:+.1f}%'), (2, '{:+.1f}%'), (3, '{:+.1f}%'), (4, '{:+.1f}%')):
                x = [a[i] for a in v if a[i] == a[i]]
                cells.append(f"{f.format(min(x))}..{f.format(max(x))}" if x else "-")
            print(f"| {shape} | {side} | " + " | ".join(cells) + " |")
print(final)
PY
if [ -n "${OUT:-}" ] && [ -z "${TABLE:-}" ]; then
  mkdir -p "$OUT" && cp -r "$WORK"/. "$OUT"/ && echo "l2_cold.sh: logs and JSON in $OUT"
fi
