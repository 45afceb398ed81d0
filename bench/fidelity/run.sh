#!/usr/bin/env bash
# The fidelity benchmark, in one command on a CUDA machine:
#   bench/fidelity/run.sh BUILD_DIR OUT_DIR
# For every case in cases.txt: zlbench's direct, graph, trace and queue
# timers (trace twice: after an L2 flush, and with L2 left warm, as
# "tracewarm"; queue twice too: as it is, and calibrated, as "queuecal",
# when FID_TIMERS names it), five measurements each, each in its own process; then
# Triton's do_bench and do_bench_cudagraph on the same kernels (the same
# library, driven from Python), then the table (table.md) and the plot
# (fidelity.png). FID_RUN_ARGS: more `zlbench run` options for every run
# (e.g. "--graph-replay-ms 10 --queue-batch-ms 10": longer replays and
# batches, whose fixed costs weigh less per call on long kernels).
# FID_CASES (case list), FID_TIMERS (zlbench timers; the
# old labels cupti and cuptiwarm still work), FID_REPS (measurements each)
# and FID_TRITON=0 (no Triton: the table has zlbench's timers only) narrow
# it down. The test operator library (spin: kernels of known duration,
# cases_spin.txt) is loaded when the build has it.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:?build folder}
OUTD=${2:?output folder}
Z=$BUILD/bin/zlbench
LIB=$BUILD/lib/zlbench/libzlb_ops_cuda.so
GPUTEST=$BUILD/lib/zlbench-test/libzlb_ops_gputest.so
EXTRA_LIB=""
[ -f "$GPUTEST" ] && EXTRA_LIB="--lib $GPUTEST"
WORK=$OUTD/work
mkdir -p "$WORK"
# One shape file per operator, from cases.txt.
CASES=${FID_CASES:-$HERE/cases.txt}
python3 - "$CASES" "$WORK" <<'PY'
import json, sys, collections
cases = collections.OrderedDict()
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if line:
        op, dt, shape = line.split(None, 2)
        cases.setdefault(op, {"dtypes": [], "shapes": []})
        if dt not in cases[op]["dtypes"]:
            cases[op]["dtypes"].append(dt)
        if json.loads(shape) not in cases[op]["shapes"]:
            cases[op]["shapes"].append(json.loads(shape))
for op, c in cases.items():
    open(f"{sys.argv[2]}/{op}.yaml", "w").write(f"{op}:\n  shapes: {json.dumps(c['shapes'])}\n")
    open(f"{sys.argv[2]}/{op}.dtypes", "w").write(",".join(c["dtypes"]))
PY
for f in "$WORK"/*.yaml; do
  op=$(basename "$f" .yaml)
  # trace: kernel time after an L2 flush (the direct timer's conditions);
  # tracewarm: kernel time with the L2 left warm (the graph and queue
  # timers'), the reference of the timers that do not flush.
  for timer in ${FID_TIMERS:-direct graph trace tracewarm queue}; do
    case $timer in cupti) timer=trace ;; cuptiwarm) timer=tracewarm ;; esac
    t=$timer
    extra=""
    [ "$timer" = tracewarm ] && t=trace && extra=--no-flush
    # queuecal: the queue timer with its launch cost calibrated away.
    [ "$timer" = queuecal ] && t=queue && extra=--queue-calibrate
    for rep in $(seq 0 $((${FID_REPS:-5} - 1))); do
      "$Z" run "$op" --backend cuda $EXTRA_LIB --timer "$t" $extra ${FID_RUN_ARGS:-} \
        --dtypes "$(cat "$WORK/$op.dtypes")" \
        --shape-file "$f" --out "$WORK/run-$timer-$op-$rep" --json "$WORK/$timer-$op-$rep.json" \
        --color never >"$WORK/$timer-$op-$rep.log" 2>&1 || echo "zlbench $op $timer rep $rep failed: $(tail -2 "$WORK/$timer-$op-$rep.log")"
    done
  done
done
# FID_TRITON=0: zlbench's timers only (Triton's columns stay empty).
rm -f "$WORK/triton.json"
[ "${FID_TRITON:-1}" = 0 ] ||
  PYTHONUNBUFFERED=1 PYTHONPATH="$HERE" python3 "$HERE/triton_timers.py" "$LIB" "$CASES" \
    "$WORK/triton.json" || echo "triton timers failed"
python3 "$HERE/analyze.py" "$WORK" "$CASES" "$WORK/triton.json" "$OUTD"
