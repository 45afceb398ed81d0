#!/usr/bin/env bash
# One call on the accelerator machine: build for sm_90, run the tests (GPU
# tests included) and the GPU measurements, keep every log under $OUT and
# print a short table last. Stages (default: all):
#   build    configure and build (Release, CUDA arch 90, tests on)
#   tests    ctest: unit, CLI and GPU tests
#   screen   zlbench batch over every CUDA operator (core level) on all GPUs
#   scaling  one batch on all GPUs, then on GPU 0 only (wall time of both)
#   sanitize compute-sanitizer memcheck over one small shape of every operator
#   fidelity bench/fidelity/run.sh (timers against CUPTI and Triton)
#   fidelity_spin  the same over kernels of known duration, 1 us to 1 ms
#            (bench/fidelity/cases_spin.txt), with the queue timer's targets;
#            not in the default list
#   pyfid    bench/python/run.sh: the Python package against CUPTI and
#            Triton (torch and triton needed); not in the default list
#   fgtime   bench/flaggems/childtime.sh: FlagGems' seconds per operator in
#            the batch (FlagGems in .flaggems, FG_RUNS, FG_OPS, OWN_S); not in the
#            default list
#   l2cold   bench/l2_cold.sh: the cold-L2 graph and queue timers against
#            the trace timer over sizes of 2-500 us, for each operator of
#            L2_OPS (default neg; "neg sum" adds a read-only kernel), each
#            within L2_LIMIT s, L2_REPEAT runs of the reference and the
#            two cold timers (default 1; more adds a table of each run's
#            difference and calibration); L2_SHAPES names another shape
#            file (bench/l2_cold.sh's SHAPES); not in the default list
#   ab       bench/ab_self.sh: `zlbench ab --self` over the core screen
#            (AB_RUNS times, default 3) and one run with add slowed by 5 %;
#            not in the default list
#   torch    python3 -m zlbench.torch_baseline over the screen's folder (run
#            the screen stage first in the same call): every row against
#            torch's own call, the geomean speedup over torch; not in the
#            default list
#   aborder  bench/ab_order.sh: `zlbench ab --self` on AB_ORDER_OPS (default
#            nonzero) under --order abba and random, AB_ORDER_RUNS runs each
#            (default 5); not in the default list
# BUILD_TARGETS (optional) builds only those CMake targets (e.g.
# "zlbench_cli zlb_ops_cuda" for the measurement stages without tests);
# ignored, with a note, when the tests or fidelity_spin stage runs (the
# GPU tests and the spin cases need the GPU test operators, which only the
# full build makes: a targeted build failed gpu.test_cuda_queue with
# "unknown operator 'spin'").
# Usage: bash bench/gpu_all.sh [stage ...]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/zlb-out}
mkdir -p "$OUT"
BUILD=${BUILD:-$ROOT/build-gpu}
# Only logs.tar.gz and summary.txt go to $OUT (the device tool returns a
# few files); everything else is produced under $WORK.
WORK=${WORK:-/tmp/zlb-work}
LOGS=$WORK/logs
mkdir -p "$LOGS"
STAGES=${*:-build tests screen scaling sanitize fidelity}
SUMMARY=$OUT/summary.txt
# What the trap needs as they are now: a stage may run with OUT set to
# another folder and its output redirected when the signal comes.
RESULT_DIR=$OUT
exec 3>&1
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NO_COLOR=1

# libyaml (the binary links it statically), cJSON (linked shared: Debian has
# no .a, so LD_LIBRARY_PATH finds libcjson1 here) and cmocka (unit tests),
# carried as Debian packages in .deps/ (README: "On a CUDA machine"):
# unpacked into a prefix that CMake searches when the machine lacks their
# headers.
if [ -d "$ROOT/.deps" ] && { [ ! -f /usr/include/cmocka.h ] || [ ! -f /usr/include/yaml.h ] ||
  [ ! -f /usr/include/cjson/cJSON.h ]; }; then
  mkdir -p /tmp/cm
  for f in "$ROOT"/.deps/*.deb; do [ -f "$f" ] && dpkg -x "$f" /tmp/cm; done
  export CMAKE_PREFIX_PATH=/tmp/cm/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi

# timeout(1) puts its command in a process group of its own, which the
# signal of an outer `timeout` does not reach, and bash runs no trap while
# a foreground command runs: tmo runs timeout in the background, waits for
# it (a wait that a trapped signal ends at once) and keeps its pid, so the
# trap below stops every stage's timeout, and through it the stage.
TMO_PIDS=$WORK/.tmo-pids
: >"$TMO_PIDS"
tmo() {
  timeout "$@" 0<&0 &
  local pid=$!
  echo "$pid" >>"$TMO_PIDS"
  wait "$pid"
}

stage_build() {
  local t0=$SECONDS
  case " $STAGES " in
  *" tests "* | *" fidelity_spin "*)
    [ -z "${BUILD_TARGETS:-}" ] ||
      note "build: BUILD_TARGETS ignored (the tests and fidelity_spin stages need the full build)"
    BUILD_TARGETS=""
    ;;
  esac
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DZLB_TESTS=ON -DZLB_WERROR=ON >"$LOGS/build.log" 2>&1 &&
    cmake --build "$BUILD" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k \
      >>"$LOGS/build.log" 2>&1
  local rc=$?
  # Keep going with what built: a broken operator file must not hide the rest.
  [ -x "$BUILD/bin/zlbench" ] && rc=0
  note "build: rc=$rc ($((SECONDS - t0)) s)"
  [ $rc = 0 ] || tail -40 "$LOGS/build.log"
  return $rc
}

stage_tests() {
  local t0=$SECONDS
  # -j 4 is for the CPU tests: every gpu-labelled test holds one RESOURCE_LOCK
  # (tests/CMakeLists.txt), so the GPU tests run one at a time on the device.
  (cd "$BUILD" && ZLB_GPU_LOG_DIR="$LOGS/gpu-tests" tmo "${TESTS_LIMIT:-300}" \
    ctest --output-on-failure -j 4 ${CTEST_ARGS:-} >"$LOGS/ctest.log" 2>&1)
  local rc=$?
  note "ctest: rc=$rc ($((SECONDS - t0)) s): $(grep -E 'tests passed|tests failed' "$LOGS/ctest.log" | tail -1)"
  grep -E '^ *[0-9]+/[0-9]+ Test' "$LOGS/ctest.log" | sed 's/^ */  /' >>"$SUMMARY"
  [ $rc = 0 ] || grep -B2 -A25 -E '\*\*\*Failed|FAIL:' "$LOGS/ctest.log" | tail -80
  return 0
}

# One batch over every CUDA operator: $1 = name, $2 = time limit (s), then
# extra zlbench batch arguments. Prints the wall seconds.
batch_run() {
  local name=$1 limit=$2 t0
  shift 2
  t0=$(date +%s.%N)
  tmo "$limit" "$BUILD/bin/zlbench" batch --backend "$BACKEND" --ops "$OPS" --out "$WORK/$name" \
    --timeout 300 --progress never "$@" >"$LOGS/$name.log" 2>&1
  note "$name: rc=$? $(grep -m1 -E '^zlbench batch: [0-9]+ operators' "$LOGS/$name.log")" >&2
  cp "$WORK/$name/ops_status.csv" "$LOGS/$name.ops_status.csv" 2>/dev/null
  cp "$WORK/$name/summary.csv" "$LOGS/$name.summary.csv" 2>/dev/null
  python3 -c "import time; print(f'{time.time() - $t0:.1f}')"
}

# Operators and child seconds per device (both devices busy?), and every
# operator that did not end ok.
batch_report() {
  awk -F, 'NR > 1 { n[$6]++; s[$6] += $8 } END { for (d in n) printf "  device %s: %d operators, %.1f s busy\n", d, n[d], s[d] }' \
    "$WORK/$1/ops_status.csv" | sort | tee -a "$SUMMARY"
  awk -F, 'NR > 1 && $2 != "ok" { print "  not ok: " $1 " " $2 " " $9 }' "$WORK/$1/ops_status.csv" | tee -a "$SUMMARY"
}

OPS=""
BACKEND=${BACKEND:-cuda}
load_ops() {
  [ -n "$OPS" ] || OPS=$("$BUILD/bin/zlbench" inventory --registered --backend "$BACKEND" | awk '{print $1}' | paste -sd, -)
  NGPU=$("$BUILD/bin/zlbench" devices --backend "$BACKEND" --count | awk '{print $2}')
}

# The screen: every CUDA operator at the core level (assets/shapes.yaml)
# on every GPU; SCREEN_ARGS adds batch arguments.
stage_screen() {
  local wall
  load_ops
  wall=$(batch_run screen-all "${SCREEN_LIMIT:-300}" ${SCREEN_ARGS:-})
  note "screen on $NGPU GPU(s): $wall s wall"
  batch_report screen-all
  # The geometric-mean speedup over every row (baselines by name in the
  # run.logs: vendor code but for four) and the %Peak by ceiling.
  "$BUILD/bin/zlbench" summary "$WORK/screen-all" >"$LOGS/screen-all.summary.txt" 2>&1
  grep -E '^(geomean|%Peak:|summary:)' "$LOGS/screen-all.summary.txt" | tee -a "$SUMMARY"
  "$BUILD/bin/zlbench" report "$WORK/screen-all" --out "$LOGS/screen-all.html" >/dev/null 2>&1 ||
    note "screen: report failed"
  "$BUILD/bin/zlbench" list --backend "$BACKEND" >"$LOGS/list.txt" 2>&1
  note "baselines: $(awk '$3 == "cuda" {print $5}' "$LOGS/list.txt" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}')"

  (cd "$WORK" && tar -czf "$LOGS/screen-all.tar.gz" --exclude=attempts screen-all)
}

# Scaling: the same batch on every GPU and on GPU 0 alone (SCALING_ARGS;
# default: every operator on small shapes, so both fit one call).
stage_scaling() {
  local a b
  load_ops
  [ "${NGPU:-1}" -gt 1 ] || { note "scaling: one GPU only, skipped"; return 0; }
  set -- ${SCALING_ARGS:---shape-file $ROOT/tests/gpu/shapes_small.yaml}
  a=$(batch_run scaling-all "${SCALING_LIMIT:-200}" "$@")
  batch_report scaling-all
  b=$(batch_run scaling-gpu0 "${SCALING_LIMIT:-200}" --devices 0 "$@")
  note "scaling ($*): all $NGPU GPUs $a s, GPU 0 only $b s, ratio $(python3 -c "print(f'{$b/$a:.2f}')")x"
}

# One operator under memcheck; $1 = operator, $2 = GPU index.
sanitize_one() {
  local op=$1 gpu=$2
  if CUDA_VISIBLE_DEVICES=$gpu timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 \
    --log-file "$LOGS/sanitize/$op.txt" "$BUILD/bin/zlbench" run "$op" --backend "$BACKEND" \
    --shape-file "$ROOT/bench/shapes_sanitize.yaml" --timer direct --warmup-ms 0 --rep-ms 0 \
    --out "$WORK/sanitize/$op" >"$LOGS/sanitize/$op.out" 2>&1; then
    echo "clean $op"
  else
    echo "BAD $op rc=$?: $(grep -m1 -E 'ERROR SUMMARY|Invalid|Error' "$LOGS/sanitize/$op.txt" "$LOGS/sanitize/$op.out" | head -1)"
  fi
}

# memcheck over every operator, several at once (the tool's cost is mostly
# host-side instrumentation), spread over the visible GPUs.
stage_sanitize() {
  local jobs t0=$SECONDS
  mkdir -p "$LOGS/sanitize"
  load_ops
  jobs=${SANITIZE_JOBS:-$(($(nproc) / 2))}
  export -f sanitize_one
  export BUILD ROOT LOGS WORK BACKEND
  tr , '\n' <<<"$OPS" | awk -v n="${NGPU:-1}" '{print $1, (NR - 1) % n}' |
    tmo "${SANITIZE_LIMIT:-200}" xargs -P "$jobs" -L 1 bash -c 'sanitize_one "$0" "$1"' \
    >"$LOGS/sanitize.txt" 2>&1
  note "memcheck ($jobs at a time, $((SECONDS - t0)) s): $(grep -c '^clean' "$LOGS/sanitize.txt") clean, $(grep -c '^BAD' "$LOGS/sanitize.txt") with errors or failures"
  grep '^BAD' "$LOGS/sanitize.txt" | sed 's/^/  /' | tee -a "$SUMMARY"
  return 0
}

stage_fidelity() {
  if [ -x "$ROOT/bench/fidelity/run.sh" ]; then
    tmo "${FIDELITY_LIMIT:-240}" bash "$ROOT/bench/fidelity/run.sh" "$BUILD" "$WORK/fidelity" \
      >"$LOGS/fidelity.log" 2>&1
    note "fidelity: rc=$?"
    cp "$WORK/fidelity/table.md" "$WORK/fidelity/fidelity.png" "$OUT/" 2>/dev/null
    cp "$WORK/fidelity/fidelity.json" "$LOGS/" 2>/dev/null
    # Every run's rows (NVML clocks and throttle reasons included).
    (cd "$WORK/fidelity/work" && tar -czf "$LOGS/fidelity-runs.tar.gz" ./*.json ./*.log) 2>/dev/null
    tail -40 "$WORK/fidelity/table.md" 2>/dev/null | tee -a "$SUMMARY"
  fi
}

# Spin kernels of 1 to 1000 us (the GPU test library's `spin`), every
# zlbench timer against CUPTI; table-spin.md ends with the queue timer's
# PASS/FAIL per size (within 1 us, and within 1 % from 100 us).
stage_fidelity_spin() {
  FID_CASES="$ROOT/bench/fidelity/cases_spin.txt" FID_TRITON=0 tmo "${FIDELITY_LIMIT:-240}" \
    bash "$ROOT/bench/fidelity/run.sh" "$BUILD" "$WORK/fidelity-spin" >"$LOGS/fidelity-spin.log" 2>&1
  note "fidelity (spin): rc=$?"
  cp "$WORK/fidelity-spin/table.md" "$OUT/table-spin.md" 2>/dev/null
  (cd "$WORK/fidelity-spin/work" && tar -czf "$LOGS/fidelity-spin-runs.tar.gz" ./*.json ./*.log) 2>/dev/null
  tail -30 "$WORK/fidelity-spin/table.md" 2>/dev/null | tee -a "$SUMMARY"
}

# The Python package's fidelity table (issue 10's numbers).
stage_pyfid() {
  tmo "${PYFID_LIMIT:-240}" bash "$ROOT/bench/python/run.sh" "$BUILD" "$WORK/pyfid" \
    >"$LOGS/pyfid.log" 2>&1
  note "pyfid: rc=$?"
  cp "$WORK/pyfid/fidelity.md" "$OUT/pyfid.md" 2>/dev/null
  cp "$WORK/pyfid/fidelity.json" "$LOGS/pyfid.json" 2>/dev/null
  tail -4 "$WORK/pyfid/fidelity.md" 2>/dev/null | tee -a "$SUMMARY"
}

# Cold L2 against CUPTI (docs/timing.md, "Cold L2").
stage_l2cold() {
  local op dir
  for op in ${L2_OPS:-neg}; do
    dir=l2cold$([ "$op" = neg ] || echo "-$op")
    BUILD="$BUILD" OUT="$WORK/$dir" OP="$op" SHAPES="${L2_SHAPES:-}" REPEAT="${L2_REPEAT:-1}" tmo "${L2_LIMIT:-240}" bash "$ROOT/bench/l2_cold.sh" \
      >"$LOGS/$dir.log" 2>&1
    note "l2cold ($op): rc=$?"
    cp -r "$WORK/$dir" "$LOGS/" 2>/dev/null
    tail -12 "$LOGS/$dir.log" | tee -a "$SUMMARY"
  done
}

# Our candidates against torch's kernels, over the screen's rows
# (docs/python.md, "Against torch's kernels").
stage_torch() {
  [ -d "$WORK/screen-all" ] || { note "torch: no screen folder (run the screen stage first)"; return 1; }
  PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" ZL_LIB_DIR="$BUILD/lib/zlbench" \
    tmo "${TORCH_LIMIT:-300}" python3 -m zlbench.torch_baseline "$WORK/screen-all" \
    --out "$LOGS/torch_baseline.json" >"$LOGS/torch_baseline.txt" 2>&1
  note "torch: rc=$?"
  tail -2 "$LOGS/torch_baseline.txt" | tee -a "$SUMMARY"
}

# The A/B self-compare's false verdicts and a real 5 % slowdown (docs/ab.md).
stage_ab() {
  BUILD="$BUILD" OUT="$WORK" RUNS="${AB_RUNS:-3}" tmo "${AB_LIMIT:-420}" \
    bash "$ROOT/bench/ab_self.sh" >"$LOGS/ab.log" 2>&1
  note "ab: rc=$?"
  cp -r "$WORK/ab" "$LOGS/" 2>/dev/null
  cat "$WORK/ab/ab-summary.txt" 2>/dev/null | tee -a "$SUMMARY"
}

# The pair order of ab: --self on AB_ORDER_OPS (default nonzero) under both
# orders, AB_ORDER_RUNS runs each (bench/ab_order.sh).
stage_aborder() {
  BUILD="$BUILD" OUT="$WORK" RUNS="${AB_ORDER_RUNS:-5}" tmo "${AB_ORDER_LIMIT:-240}" \
    bash "$ROOT/bench/ab_order.sh" ${AB_ORDER_OPS:-nonzero} >"$LOGS/ab-order.log" 2>&1
  note "aborder: rc=$?"
  cp -r "$WORK/ab-order" "$LOGS/" 2>/dev/null
  cat "$WORK/ab-order/summary.txt" 2>/dev/null | tee -a "$SUMMARY"
}

# FlagGems' seconds per operator in the batch against its own kernel mode.
stage_fgtime() {
  # FG_OPS: the operators (childtime.sh's default when empty; OPS is the
  # screen's here).
  OPS="${FG_OPS:-}" RUNS="${FG_RUNS:-cold spares3 spares3b}" BUILD="$BUILD" OUT="$WORK/fgtime" \
    tmo "${FGTIME_LIMIT:-300}" bash "$ROOT/bench/flaggems/childtime.sh" >"$LOGS/fgtime.log" 2>&1
  note "fgtime: rc=$?"
  cp "$WORK/fgtime/childtime.tsv" "$OUT/" 2>/dev/null
  (cd "$WORK" && tar -czf "$LOGS/fgtime.tar.gz" fgtime) 2>/dev/null
  sed -n '/^seconds per operator/,$p' "$LOGS/fgtime.log" | head -60 | tee -a "$SUMMARY"
}

# The logs and the summary go to $OUT also when the call is cut short
# (`timeout 560 bash bench/gpu_all.sh ...` inside the device's own limit:
# timeout signals the whole process group, the stage dies, this runs).
finish() {
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >"$LOGS/nvidia-smi.csv" 2>&1
  # A stage cut short has not yet copied its folder into logs: take it too.
  local extra=() d
  for d in ab ab-order l2cold; do
    [ -d "$WORK/$d" ] && [ ! -d "$LOGS/$d" ] && extra+=("$d")
  done
  tar -C "$WORK" -czf "$RESULT_DIR/logs.tar.gz" logs "${extra[@]}" 2>/dev/null
  [ -f "$WORK/ab/ab-summary.txt" ] && ! grep -q '^ab: rc=' "$SUMMARY" &&
    { echo "ab (cut short):"; cat "$WORK/ab/ab-summary.txt"; } >>"$SUMMARY"
  echo "==== summary ===="
  cat "$SUMMARY"
}
stop_stages() {
  local p
  while read -r p; do kill -TERM "$p" 2>/dev/null; done <"$TMO_PIDS"
  sleep 2
}
trap '{ note "stopped by a signal during stage ${CUR_STAGE:-?}"; stop_stages; finish; } >&3 2>&1; exit 143' TERM INT

for s in $STAGES; do
  t=$SECONDS
  CUR_STAGE=$s
  "stage_$s" || { [ "$s" = build ] && break; }
  note "stage $s: $((SECONDS - t)) s"
done
finish
