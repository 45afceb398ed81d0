#!/usr/bin/env bash
# Where a FlagGems operator's wall time goes in zlbench batch, and what the
# fork server's spare and bytecode change, against FlagGems' own kernel
# mode (and its cudagraph mode: owngraph), on a CUDA machine with torch,
# triton and the FlagGems checkout $FG:
#
#   BUILD=build-gpu OUT=/tmp/ct bash bench/flaggems/childtime.sh
#
# In order (Triton's kernel cache is cold at the start of a fresh machine):
#   cold       zlbench batch over OPS, spares on (compiles the kernels)
#   own        FlagGems' own kernel mode, one pytest process per operator
#   owngraph   FlagGems' own cudagraph mode (do_bench_cudagraph), the same
#   spare      zlbench batch again, spares on (the default)
#   nospare    zlbench batch again, ZL_FG_SPARE=0
#   sparesN    zlbench batch again with N spares (ZL_FG_SPARES=N, 1 to 4)
#   learnwait  zlbench batch again, ZL_FG_LEARN_WAIT=1 (a spare finishes its
#              learned imports before it takes its request)
#   imptime    zlbench batch again, PYTHONPROFILEIMPORTTIME=1 (every import's
#              time in the children's stderr.log and the servers' logs)
#   stacks     zlbench batch again, ZL_FG_LEARN=0 (each child imports what
#              its first call needs), with bench/flaggems/endstacks.py: every
#              thread's stack every 0.25 s from the session's end on,
#              in $OUT/stacks.stacks/<pid>.txt
#   nofreeze   zlbench batch again, ZL_FG_GC_FREEZE=0 (the plugin does not
#              freeze the heap before the first test: FlagGems' gc.collect()
#              after every row scans what the child imported)
#   base       zlbench batch again, ZL_FG_EARLY_DONE=0 ZL_FG_LEARN=0 (each
#              child's end before the next one starts; spares import only
#              flag_gems)
# OWN_S="abs=19.81 add=22.06 ..." gives FlagGems' own seconds measured
# earlier instead of the own run (FlagGems' own mode does not change).
# (a run named spare2, nospare2, ... repeats its kind), all at the core
# level with DTYPES (default float16), one child at a time.
# Writes $OUT/childtime.tsv (op, run, status, seconds, and the child's
# timeline: request to configure, to first measurement, to the session's
# end, measurements' seconds, from a spare, the client's start, the quiet
# lock's wait, the plugin's writes; from the fork server's end trace, the
# request to the module's end and to the word "done"; from the plugin's
# sidecar, the seconds its measurements spent sampling, in refused
# captures and in each measurement's first call) and prints a table
# last, then how
# much the rows' values differ between every two batch runs after the
# first (does a spare importing beside a running operator move its
# numbers? RUNS="cold nospare spare nospare2" sets that change beside the
# one between two runs without spares).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FG=${FG:-$ROOT/.flaggems}
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-/tmp/zlb-out/childtime}
PYTHON=${PYTHON:-python3}
OPS=${OPS:-abs add softmax sum sort nonzero dropout}
DTYPES=${DTYPES:-float16}
RUNS=${RUNS:-cold own spare nospare}
TIMEOUT=${TIMEOUT:-300}
BACKEND=${BACKEND:-cuda}
mkdir -p "$OUT"
export ZL_PYTHON=$PYTHON NO_COLOR=1
export PYTHONPATH="$FG/src:$FG:$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export ZL_LIB_DIR="${ZL_LIB_DIR:-$BUILD/lib/zlbench}" GEMS_VENDOR=${GEMS_VENDOR:-nvidia}
[ -x "$BUILD/bin/zlbench" ] || { echo "childtime.sh: no $BUILD/bin/zlbench; build first" >&2; exit 2; }
TSV=$OUT/childtime.tsv
printf 'op\trun\tstatus\tseconds\tconfigure_s\tfirst_measure_s\tfinish_s\tmeasure_s\tfrom_spare\tclient_start_s\tquiet_wait_s\twrite_s\tto_module_end_s\tto_done_s\tsample_s\tattempt_s\tfirst_call_s\n' >"$TSV"

# run_identity.json [end trace] -> configure first_measure finish measure
# from_spare client quiet write, and from the fork server's end trace
# (ZL_FG_END_TRACE) the child's request to its module's end and to its
# word "done"; from the plugin's zlbench_rows.json the seconds its
# measurements spent sampling, in refused captures and in their first
# calls of fn (first_call_s).
timeline() {
  "$PYTHON" - "$1" "${2:-}" "${3:-}" <<'EOF'
import json, sys
try:
    t = json.load(open(sys.argv[1])).get("timeline", {})
except (OSError, ValueError):
    t = {}
end = {}
try:
    lines = open(sys.argv[2]).readlines()
except OSError:
    lines = []
for line in lines:
    try:
        e = json.loads(line)
        if t.get("request_at") is not None and \
                abs(float(e.get("request_at")) - t["request_at"]) < 1e-3:
            end = e
    except (ValueError, TypeError, AttributeError):
        continue        # a cut or foreign line
samp = att = first = 0.0
try:
    for tb in json.load(open(sys.argv[3])).get("tables", []):
        for r in tb.get("rows", []):
            for c in r.get("calls", []):
                samp += float(c.get("sample_s") or 0)
                att += float(c.get("attempt_s") or 0)
                first += float(c.get("first_call_s") or 0)
except (OSError, ValueError, TypeError, AttributeError):
    samp = att = first = float("nan")
def since(k):
    v = end.get(k)
    return "%.3f" % (v - end["request_at"]) if isinstance(v, (int, float)) else "-"
print("\t".join([str(t.get(k, "-")) for k in
                 ("configure_s", "first_measure_s", "finish_s", "measure_s", "from_spare",
                  "client_start_s", "quiet_wait_s", "write_s")]
                + [since("module_end"), since("said_done"), "%.3f" % samp, "%.3f" % att,
                    "%.3f" % first]))
EOF
}

batch() {       # run-name [env...]
  local run=$1 d=$OUT/$1 t0 t1 rc
  shift
  rm -rf "$d" "$OUT/$run.end.jsonl"
  t0=$(date +%s.%N)
  env ZL_FG_END_TRACE="$OUT/$run.end.jsonl" "$@" "$BUILD/bin/zlbench" batch --provider flaggems --flaggems "$FG" --backend "$BACKEND" \
    --level core --ops "$(echo $OPS | tr ' ' ',')" --dtypes "${DTYPES// /,}" --out "$d" \
    --timeout "$TIMEOUT" --retries 0 --progress never >"$OUT/$run.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", b - a}' >"$OUT/$run.wall"
  echo "$run: batch rc=$rc in $(cat "$OUT/$run.wall") s"
  for op in $OPS; do
    local line
    line=$(grep "^$op," "$d/ops_status.csv" 2>/dev/null)
    printf '%s\t%s\t%s\t%s\t%s\n' "$op" "$run" "$(echo "$line" | cut -d, -f2)" \
      "$(echo "$line" | cut -d, -f8)" \
      "$(timeline "$d/ops/$op/run_identity.json" "$OUT/$run.end.jsonl" "$d/ops/$op/zlbench_rows.json")" >>"$TSV"
  done
  grep -h "served\|spare" "$d"/forkserver-*.log 2>/dev/null | tail -3
}

own() {         # run-name FlagGems-mode
  local run=$1 mode=$2 dts="" op t0 t1 rc
  for t in ${DTYPES//,/ }; do dts="$dts --dtypes $t"; done
  mkdir -p "$OUT/$run"
  for op in $OPS; do
    t0=$(date +%s.%N)
    (cd "$FG/benchmark" && timeout -k 10 "$TIMEOUT" "$PYTHON" -m pytest -q -s -p no:cacheprovider \
      "test_$op.py" -m "$op" --mode "$mode" --level core $dts) >"$OUT/$run/$op.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    printf '%s\t%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n' "$op" "$run" "rc=$rc" \
      "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')" >>"$TSV"
  done
  echo "$run: done"
}

if [ -n "${OWN_S:-}" ]; then
  for kv in $OWN_S; do
    printf '%s\town\tgiven\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n' "${kv%%=*}" "${kv#*=}" >>"$TSV"
  done
fi
for r in $RUNS; do
  case $r in
    spares[1-4]*) batch "$r" "ZL_FG_SPARES=${r:6:1}" ;;
    spares*) echo "childtime.sh: run '$r': sparesN takes N from 1 to 4" >&2; exit 2 ;;
    cold* | spare*) batch "$r" ;;
    nospare*) batch "$r" ZL_FG_SPARE=0 ;;
    learnwait*) batch "$r" ZL_FG_LEARN_WAIT=1 ;;
    imptime*) batch "$r" PYTHONPROFILEIMPORTTIME=1 ;;
    base*) batch "$r" ZL_FG_EARLY_DONE=0 ZL_FG_LEARN=0 ;;
    nofreeze*) batch "$r" ZL_FG_GC_FREEZE=0 ;;
    stacks*) rm -rf "$OUT/$r.stacks"
      batch "$r" ZL_FG_LEARN=0 PYTEST_ADDOPTS="-p endstacks" ZLB_END_STACKS="$OUT/$r.stacks" \
      PYTHONPATH="$ROOT/bench/flaggems:$PYTHONPATH" ;;
    own) own own kernel ;;
    owngraph) own owngraph cudagraph ;;
    *) echo "childtime.sh: unknown run '$r'" >&2; exit 2 ;;
  esac
done

# The table: seconds per operator in each run, and own / batch.
"$PYTHON" - "$TSV" "$RUNS" "$OUT" <<'EOF'
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
runs = sys.argv[2].split()
ops = list(dict.fromkeys(r["op"] for r in rows))
sec = {(r["op"], r["run"]): r for r in rows}
def f(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None
if "own" not in runs and any(r["run"] == "own" for r in rows):
    runs = ["own"] + runs
print("seconds per operator (batch: the child's; own: FlagGems' pytest process)")
batches = [r for r in runs if not r.startswith("own")]
cmp = [r for r in batches if not r.startswith("cold")]
last = (cmp or batches or ["-"])[-1]   # its timeline is shown
print("%-9s" % "op" + "".join("%10s" % r for r in runs)
      + "".join("%14s" % ("own/" + r) for r in cmp)
      + "   %s: client configure first finish measure write module_end done tail sampling"
        " attempts first_calls" % last)
tot = {r: 0.0 for r in runs}
for op in ops:
    line = "%-9s" % op
    for r in runs:
        v = f(sec.get((op, r), {}).get("seconds"))
        line += "%10s" % ("-" if v is None else "%.2f" % v)
        tot[r] += v or 0.0
    o = f(sec.get((op, "own"), {}).get("seconds"))
    for r in cmp:
        b = f(sec.get((op, r), {}).get("seconds"))
        line += "%14s" % ("%.1fx" % (o / b) if o and b else "-")
    s = sec.get((op, last), {})
    sv, cl, fi = f(s.get("seconds")), f(s.get("client_start_s")), f(s.get("finish_s"))
    tail = "%.2f" % (sv - cl - fi) if None not in (sv, cl, fi) else "-"
    line += "   %s %s %s %s %s %s %s %s %s %s %s %s" % (
        s.get("client_start_s"), s.get("configure_s"), s.get("first_measure_s"),
        s.get("finish_s"), s.get("measure_s"), s.get("write_s"), s.get("to_module_end_s"),
        s.get("to_done_s"), tail, s.get("sample_s"), s.get("attempt_s"), s.get("first_call_s"))
    print(line)
def ratios(own, per):
    return "".join("%14s" % ("%.1fx" % (own / per[r]) if own and per.get(r) else "-")
                   for r in cmp)
print("%-9s" % "total" + "".join("%10.2f" % tot[r] for r in runs) + ratios(tot.get("own"), tot))
# The batch's first child carries the batch's start (the fork server's
# imports, its first spare's): the operators after it, and each batch's
# wall time from its start to its end (discovery and the servers' end
# included), against the sum of FlagGems' own processes.
import re
first = ops[0]
try:
    for line in open(os.path.join(sys.argv[3], (cmp or batches)[0] + ".log")):
        m = re.match(r"\[\s*1/\d+\]\s+device\s+\S+\s+(\S+)", line)
        if m:
            first = m.group(1)
            break
except (OSError, IndexError):
    pass
rest = {r: sum(f(sec.get((op, r), {}).get("seconds")) or 0.0 for op in ops if op != first)
        for r in runs}
print("%-9s" % "w/o 1st" + "".join("%10.2f" % rest[r] for r in runs) + ratios(rest.get("own"), rest))
wall = {}
for r in batches:
    try:
        wall[r] = float(open(os.path.join(sys.argv[3], r + ".wall")).read())
    except (OSError, ValueError):
        pass
if wall:
    print("%-9s" % "wall" + "".join("%10s" % ("%.2f" % wall[r] if r in wall else "-") for r in runs)
          + ratios(tot.get("own"), wall))
EOF

# The rows' values, run against run: median, 90th percentile and largest
# |change| over every measurement (op, test, dtype, row, torch or gems) both runs
# have.
"$PYTHON" - "$OUT" "$RUNS" <<'EOF'
import itertools, json, os, statistics, sys
out = sys.argv[1]
runs = [r for r in sys.argv[2].split() if not r.startswith(("own", "cold"))]
def values(run):
    v = {}
    d = os.path.join(out, run, "ops")
    for op in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        try:
            side = json.load(open(os.path.join(d, op, "zlbench_rows.json")))
        except (OSError, ValueError):
            continue
        for t in side.get("tables", []):
            for r in t.get("rows", []):
                for c in r.get("calls", []):
                    x = c.get("value_ms")
                    if isinstance(x, (int, float)) and x > 0:
                        v[(op, t.get("node"), t.get("dtype"), r.get("index"),
                           c.get("role"))] = x
    return v
vals = {r: values(r) for r in runs}
if len(runs) >= 2:
    print("row values, |change| between runs (median / p90 / max over the measurements both have)")
for a, b in itertools.combinations(runs, 2):
    keys = sorted(set(vals[a]) & set(vals[b]))
    ch = sorted(abs(vals[b][k] / vals[a][k] - 1) * 100 for k in keys)
    if ch:
        print("  %-10s vs %-10s %4d: %5.2f %% / %5.2f %% / %6.2f %%" % (
            a, b, len(ch), statistics.median(ch), ch[int(0.9 * (len(ch) - 1))], ch[-1]))
EOF
