"""Per-row overhead table from bench/overhead/run.sh's JSON files.

A row's budget is warmup + rep for each of its two implementations. Its
overhead is wall time minus that budget; 'setup' is wall time minus the
timing work. The timing work is the timing phase plus each
implementation's first call ('first_calls_ms' of the accuracy phase): the
run's accuracy check makes the first call that absorbs JIT, autotuning and
kernel loading, and the timers, primed, do not make their own. Rows whose
timing work exceeds the budget (long calls: the timer's minimum sample
count, or a first call that autotunes) are counted apart: their overhead
is wall time minus the timing work. Also printed: the count when the first
calls are charged as set-up, and rows whose wall time exceeds the budget
+ 50 ms at all.
Usage: python3 analyze.py WORK WARMUP_MS REP_MS
"""
import json
import os
import sys

PHASES = ["describe", "allocate", "fill", "prepare", "accuracy", "timing", "release"]


def rows_of(path):
    with open(path) as f:
        d = json.load(f)
    for t in d.get("tables", []):
        for r in t.get("rows", []):
            yield t["dtype"], r


def main():
    work, warm, rep = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    budget = 2 * (warm + rep)
    proc = {}
    for name in ("process.tsv", "sort1.tsv", "screen.tsv"):
        p = os.path.join(work, name)
        if os.path.exists(p):
            for line in open(p):
                op, rc, s = line.rstrip("\n").split("\t")
                proc[op] = (int(rc), float(s))
    print(f"budget per row: {budget:.0f} ms (warmup {warm:g} + rep {rep:g} ms, x2 implementations)")
    print(f"{'operator':<22}{'rc':>3}{'rows':>5}{'proc s':>8}{'rows s':>8}{'start s':>8}"
          f"{'max over':>10}{'max setup':>10}  worst phase (ms, row)")
    worst_all, over50, nrows, long_rows = 0.0, [], 0, 0
    over50_plain, over_wall = 0, 0
    phase_tot = {p: 0.0 for p in PHASES}
    for op in sorted(proc):
        if op.startswith("sort-1ms") or op == "screen-1gpu":
            continue
        path = os.path.join(work, op + ".json")
        if not os.path.exists(path):
            print(f"{op:<22}{proc[op][0]:>3}   no JSON")
            continue
        rows = list(rows_of(path))
        walls = sum(r["wall_ms"] for _, r in rows) / 1e3
        max_over, max_setup, worst = -1e9, 0.0, ("", 0.0, "")
        for dt, r in rows:
            ph = r["phases_ms"]
            for p in PHASES:
                phase_tot[p] += ph[p]
            first = r.get("first_calls_ms") or 0.0
            busy = ph["timing"] + first
            setup = r["wall_ms"] - busy
            over = r["wall_ms"] - max(budget, busy)
            if busy > budget:
                long_rows += 1
            # charging the first calls as set-up instead
            over_plain = r["wall_ms"] - (ph["timing"] if ph["timing"] > budget else budget)
            if over_plain > 50:
                over50_plain += 1
            if r["wall_ms"] > budget + 50:
                over_wall += 1
            max_over = max(max_over, over)
            max_setup = max(max_setup, setup)
            for p in PHASES:
                if p != "timing" and ph[p] > worst[1]:
                    worst = (p, ph[p], f"{dt} {r['shape']}")
            if over > 50:
                top = sorted(((ph[q], q) for q in PHASES if q != "timing"), reverse=True)[:2]
                over50.append((op, dt, r["shape"], over,
                               ", ".join(f"{q} {v:.0f}" for v, q in top) +
                               f"; first calls {first:.0f}"))
            nrows += 1
        worst_all = max(worst_all, max_over)
        rc, s = proc[op]
        print(f"{op:<22}{rc:>3}{len(rows):>5}{s:>8.2f}{walls:>8.2f}{s - walls:>8.2f}"
              f"{max_over:>10.1f}{max_setup:>10.1f}  {worst[0]} {worst[1]:.1f} ({worst[2]})")
    print()
    print("total ms per phase over all rows: " +
          ", ".join(f"{p} {phase_tot[p]:.0f}" for p in PHASES))
    print(f"rows: {nrows}; rows whose timing work outlasts the budget: {long_rows}")
    print(f"rows over budget + 50 ms: {len(over50)} (first calls charged as set-up: "
          f"{over50_plain}; wall time over budget + 50 ms at all: {over_wall})")
    for op, dt, shape, over, top in sorted(over50, key=lambda x: -x[3])[:60]:
        print(f"  {op} {dt} {shape}: +{over:.0f} ms ({top} ms)")
    runs = sorted(k for k in proc if k.startswith("sort-1ms"))
    if runs:
        print("zlbench run sort --warmup-ms 1 --rep-ms 1: " +
              ", ".join(f"{proc[k][1]:.2f} s (rc {proc[k][0]})" for k in runs) +
              f"; target < 3 s: {'met' if all(proc[k][1] < 3 for k in runs) else 'NOT met'}")
    if "screen-1gpu" in proc:
        print(f"core screen on one GPU: {proc['screen-1gpu'][1]:.1f} s "
              f"(rc {proc['screen-1gpu'][0]}; target < 100 s)")


if __name__ == "__main__":
    main()
