#!/usr/bin/env bash
# FlagGems screened by zlbench on a CUDA machine, in calls of at most
# BUDGET seconds (default 500) that resume where the last one stopped:
#
#   bash bench/flaggems/run.sh [build] [compare] [screen] [table]   (default: all)
#
# BACKEND (default cuda) and GEMS_VENDOR (default nvidia) select the device.
#
# The FlagGems checkout is $FG (default $ROOT/.flaggems: its src/ and
# benchmark/ on PYTHONPATH, no install step); torch, triton and pytest must
# be importable by $PYTHON (default python3). State lives in $WORK (default
# $ROOT/zlb-out/flaggems, git-ignored) so that a later call on the same
# machine resumes; $OUT gets summary.txt and logs.tar.gz.
#
# compare  FlagGems' own kernel mode, its cudagraph mode, and its kernel mode
#          timed by zlbench (-p zlbench.pytest_plugin), one process each, for
#          CMP_OPS (default: abs add softmax sum mm sort nonzero dropout) at
#          the core level with CMP_DTYPES (default float16): wall time of
#          each process and the [64, 64] row. Pairs already measured are
#          skipped. CMP_MODES (default "kernel cudagraph plugin") picks
#          the processes; empty: the batch below only.
#          Then the same operators through zlbench batch (fork server, one
#          child at a time): each child's seconds, and every row's host time
#          per call (torch and gems) beside its device time.
# screen   zlbench batch --provider flaggems over the first LIMIT (default
#          150) operators of `--list --stage $STAGE` (default stable) at the
#          core level on every visible GPU, JOBS children at a time on each
#          (default 1; more for a functional screen, whose timings then
#          disturb each other); stopped by SIGINT when the call's budget
#          runs out, resumed by the next call (same --out). SCREEN_ARGS adds
#          batch arguments (e.g. "--warmup-ms 5 --rep-ms 20" for a screen of
#          statuses, whose timings are not the point; keep them the same
#          across the calls of one screen).
#          SCREEN_DEVICE (e.g. "NVIDIA H200") holds a screen to one device
#          model, or to several joined by '|' ("NVIDIA H200|NVIDIA H100
#          80GB HBM3": the same architecture and software, either will do):
#          a call on another model screens nothing, and operators that
#          finished on another model (their run_identity.json names one,
#          or names none) or timed out run again here with --force,
#          in one batch with the operators not finished yet (those first),
#          JOBS at a time; each is rerun once
#          ($WORK/screen/rescreened lists those done), and a call stopped
#          half-way goes on with the rest.
# table    the comparison and the screen's statuses, failures with reasons.
#
# The screen outlives the machine: every call also writes
# $OUT/screen-state.tar.gz (the screen folder without the attempts' large
# files), and a call whose $WORK holds no screen yet starts from $STATE
# (default bench/flaggems/screen-state.tar.gz, committed after each call), so
# a screen longer than one session's device time goes on in the next.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FG=${FG:-$ROOT/.flaggems}
BUILD=${BUILD:-$ROOT/build-gpu}
WORK=${WORK:-$ROOT/zlb-out/flaggems}
OUT=${OUT:-/tmp/zlb-out}
PYTHON=${PYTHON:-python3}
BACKEND=${BACKEND:-cuda}
export ZL_PYTHON=${ZL_PYTHON:-$PYTHON}
BUDGET=${BUDGET:-500}
LIMIT=${LIMIT:-150}
STAGE=${STAGE:-stable}
CMP_OPS=${CMP_OPS:-abs add softmax sum mm sort nonzero dropout}
CMP_DTYPES=${CMP_DTYPES:-float16}
CMP_MODES=${CMP_MODES-kernel cudagraph plugin}
CMP_TIMEOUT=${CMP_TIMEOUT:-300}
OP_TIMEOUT=${OP_TIMEOUT:-300}
JOBS=${JOBS:-1}
STATE=${STATE:-$ROOT/bench/flaggems/screen-state.tar.gz}
# Models joined by '|', with no blanks around it (a model's own blanks stay).
SCREEN_DEVICE=$(printf '%s' "${SCREEN_DEVICE:-}" | sed 's/ *| */|/g; s/^ *//; s/ *$//')
STAGES=${*:-build compare screen table}
T0=$SECONDS
mkdir -p "$WORK/logs" "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - (SECONDS - T0))); }
export NO_COLOR=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PYTHONPATH="$FG/src:$FG:$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
# The package finds libzlbench.so in the parent of ZL_LIB_DIR; zlbench
# finds its operator libraries in ZL_LIB_DIR itself.
export ZL_LIB_DIR="$BUILD/lib/zlbench"
# FlagGems' vendor without its device-query probe, for all three modes.
export GEMS_VENDOR=${GEMS_VENDOR:-nvidia}
if [ -z "${FLAGGEMS_COMMIT:-}" ] && [ ! -d "$FG/.git" ] && [ -f "$FG/UPSTREAM.md" ]; then
  FLAGGEMS_COMMIT=$(grep -o 'commit [0-9a-f]\{7,40\}' "$FG/UPSTREAM.md" | head -1 | cut -d' ' -f2)
  export FLAGGEMS_COMMIT
fi

# Build dependencies carried as Debian packages in .deps/ (README).
if [ -d "$ROOT/.deps" ] && { [ ! -f /usr/include/yaml.h ] || [ ! -f /usr/include/cjson/cJSON.h ]; }; then
  mkdir -p /tmp/cm
  for f in "$ROOT"/.deps/*.deb; do [ -f "$f" ] && dpkg -x "$f" /tmp/cm; done
  export CMAKE_PREFIX_PATH=/tmp/cm/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi

stage_build() {
  local t0=$SECONDS
  # Configure once, then an incremental build every call: a build folder
  # left by another checkout's run is brought up to this one.
  { [ -f "$BUILD/CMakeCache.txt" ] ||
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DZLB_TESTS=OFF >"$WORK/logs/build.log" 2>&1; } &&
    cmake --build "$BUILD" -j "$(nproc)" --target zlbench_cli zlbench_shared \
      >>"$WORK/logs/build.log" 2>&1
  local rc=$?
  note "build: rc=$rc ($((SECONDS - t0)) s)"
  [ $rc = 0 ] || tail -30 "$WORK/logs/build.log"
  return $rc
}

# The [64, 64] row of the float16 table: "torch_ms gems_ms".
row64() {
  awk '/Performance Test \(dtype=torch.float16/ {t = 1; next}
       /Performance Test \(/ {t = 0}
       t && /^(SUCCESS|FAILED)/ && /\[64, 64\]/ {print $2, $3; exit}' "$1"
}

stage_compare() {
  local d=$WORK/compare res=$WORK/compare/results.tsv
  mkdir -p "$d"
  [ -f "$res" ] || printf 'op\tmode\trc\twall_s\ttorch64_ms\tgems64_ms\n' >"$res"
  local dts=""
  for t in ${CMP_DTYPES//,/ }; do dts="$dts --dtypes $t"; done
  for op in $CMP_OPS; do
    for mode in $CMP_MODES; do
      grep -q "^$op	$mode	" "$res" && continue
      if [ "$(left)" -lt $((CMP_TIMEOUT + 30)) ]; then
        note "compare: budget spent; run again to go on"
        return 0
      fi
      local log=$d/$op.$mode.log fgmode=$mode plug=""
      if [ "$mode" = plugin ]; then
        fgmode=kernel
        plug="-p zlbench.pytest_plugin"
        mkdir -p "$d/$op.plugin"
      fi
      local t0 t1 rc
      t0=$(date +%s.%N)
      (cd "$FG/benchmark" &&
        ZL_FG_OUT="$d/$op.plugin" timeout -k 10 "$CMP_TIMEOUT" "$PYTHON" -m pytest -q -s \
          -p no:cacheprovider $plug "test_$op.py" -m "$op" --mode "$fgmode" --level core \
          $dts) >"$log" 2>&1
      rc=$?
      t1=$(date +%s.%N)
      local r
      r=$(row64 "$log")
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$op" "$mode" "$rc" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')" \
        "${r% *}" "${r#* }" >>"$res"
      note "compare: $op $mode rc=$rc $(tail -1 "$res" | cut -f4) s  [64,64] f16: ${r:-none}"
    done
  done
  # The same operators as a screen runs them: zlbench batch, one child per
  # operator forked from the batch's fork server; its per-operator seconds.
  grep -q "	batch	" "$res" && return 0
  if [ "$(left)" -lt $((CMP_TIMEOUT + 30)) ]; then
    note "compare: budget spent before the batch; run again to go on"
    return 0
  fi
  local ops t0 t1
  ops=$(echo $CMP_OPS | tr ' ' ',')
  rm -rf "$d/batch"
  t0=$(date +%s.%N)
  "$BUILD/bin/zlbench" batch --provider flaggems --flaggems "$FG" --backend "$BACKEND" \
    --level core --ops "$ops" --dtypes "${CMP_DTYPES// /,}" --out "$d/batch" \
    --timeout "$CMP_TIMEOUT" --retries 0 --progress never >"$d/batch.log" 2>&1
  local brc=$?
  t1=$(date +%s.%N)
  note "compare: zlbench batch over $ops rc=$brc in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s (fork server start included)"
  # Host dispatch time beside device time: each operator's rows from the
  # batch's summary.csv (the plugin's host_us per call, torch and gems).
  if [ -f "$d/batch/summary.csv" ]; then
    note "compare: host time per call (us) beside device time (ms), from $d/batch/summary.csv:"
    python3 - "$d/batch/summary.csv" <<'PY' | tee -a "$SUMMARY"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print("%-10s %-8s %-28s %12s %12s %12s %12s" % ("op", "dtype", "shape", "torch_ms", "gems_ms",
                                                 "torch_host", "gems_host"))
for r in rows:
    if r.get("status") not in ("SUCCESS", "ok"):
        continue
    print("%-10s %-8s %-28s %12s %12s %12s %12s" % (r["operator"], r["dtype"], r["shape"][:28],
          r["baseline_ms"], r["candidate_ms"], r.get("base_host_us", ""), r.get("cand_host_us", "")))
PY
  fi
  for op in $CMP_OPS; do
    local line st sec r
    line=$(grep "^$op," "$d/batch/ops_status.csv" 2>/dev/null)
    st=$(echo "$line" | cut -d, -f2)
    sec=$(echo "$line" | cut -d, -f8)
    r=$(row64 "$d/batch/ops/$op/run.log" 2>/dev/null)
    printf '%s\tbatch\t%s\t%s\t%s\t%s\n' "$op" "${st:-none}" "${sec:-}" "${r% *}" "${r#* }" >>"$res"
  done
}

stage_screen() {
  local d=$WORK/screen
  if [ ! -f "$d/out/ops_status.csv" ] && [ -s "$STATE" ]; then
    mkdir -p "$WORK"
    tar -xzf "$STATE" -C "$WORK" ||
      { note "screen: cannot unpack the saved state $STATE"; return 1; }
    note "screen: resumed from $STATE ($(($(wc -l <"$d/out/ops_status.csv") - 1)) operators finished before)"
  fi
  mkdir -p "$d"
  # The selection is kept between calls; another STAGE or LIMIT makes a new
  # one, and the batch still resumes every operator already finished.
  if [ ! -s "$d/ops.txt" ] || [ "$(cat "$d/selection" 2>/dev/null)" != "$STAGE $LIMIT" ]; then
    "$BUILD/bin/zlbench" batch --provider flaggems --flaggems "$FG" --backend "$BACKEND" \
      --stage "$STAGE" --list >"$d/list.txt" 2>"$WORK/logs/list.err" ||
      { note "screen: --list failed: $(tail -3 "$WORK/logs/list.err")"; return 1; }
    cut -f1 "$d/list.txt" | head -n "$LIMIT" >"$d/ops.txt"
    echo "$STAGE $LIMIT" >"$d/selection"
    note "screen: $(wc -l <"$d/list.txt") operators at stage $STAGE or more mature; screening $(wc -l <"$d/ops.txt")"
  fi
  local here=""
  if [ -n "$SCREEN_DEVICE" ]; then
    here=$(device_name)
    case "|$SCREEN_DEVICE|" in
    *"|$here|"*) [ -n "$here" ] ;;
    *) false ;;
    esac || { note "screen: SCREEN_DEVICE is '$SCREEN_DEVICE' and this device is '${here:-unknown}': nothing screened"; return 1; }
  fi
  # Held to one model, one batch does it all (rescreen): the operators not
  # finished yet and those to run again share the device's width, rather
  # than a few slow ones holding it while the rest wait for their batch.
  [ -n "$SCREEN_DEVICE" ] && { rescreen "$d" "$SCREEN_DEVICE"; return 0; }
  local budget
  budget=$(($(left) - 20))
  [ "$budget" -gt 60 ] || { note "screen: budget spent; run again to go on"; return 0; }
  local t0=$SECONDS rc lines0
  lines0=$(cat "$WORK/logs/screen.log" 2>/dev/null | wc -l)
  # SIGINT when the budget runs out: the batch stops its children, writes
  # what finished and exits 130; the next call resumes into the same --out.
  timeout -s INT -k 60 "$budget" "$BUILD/bin/zlbench" batch --provider flaggems \
    --flaggems "$FG" --backend "$BACKEND" --level core --ops-file "$d/ops.txt" --out "$d/out" \
    --timeout "$OP_TIMEOUT" --retries 1 --jobs-per-device "$JOBS" --progress never \
    ${SCREEN_ARGS:-} >>"$WORK/logs/screen.log" 2>&1
  rc=$?
  note "screen: rc=$rc after $((SECONDS - t0)) s ($([ $rc = 130 ] || [ $rc = 124 ] && echo 'interrupted: run again to resume' || echo 'done'))"
  # Operators out of memory beside others rerun alone once every operator
  # has started: a call stopped before that leaves them for the next.
  local waited
  waited=$(tail -n +$((lines0 + 1)) "$WORK/logs/screen.log" | grep -c 'it waited to run again alone')
  [ "$waited" -gt 0 ] && note "screen: $waited operator(s) were waiting to rerun alone when the batch stopped (out of memory beside others); a later call runs them"
  tail -3 "$WORK/logs/screen.log" | tee -a "$SUMMARY"
  return 0
}

# The name of GPU 0 as the run identities write it (the backend's name).
device_name() {
  case $BACKEND in
  cuda) nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1 ;;
  *) echo "" ;;
  esac
}

# Where each finished operator of batch folder $1 ran: one line each,
# "op<TAB>status<TAB>seconds<TAB>devices" (the devices of its
# run_identity.json, or of every dtype's at level 2, joined by " + "; "none
# named" or "unreadable identity" for such a file, empty without one).
where_ran() {
  python3 - "$1" <<'PY'
import csv, glob, json, os, sys
out = sys.argv[1]
for r in csv.DictReader(open(os.path.join(out, "ops_status.csv"), newline="")):
    base = os.path.join(out, "ops", r["operator"])
    devs = set()
    for p in [os.path.join(base, "run_identity.json")] + glob.glob(os.path.join(base, "*", "run_identity.json")):
        if os.path.isfile(p):
            try:
                devs.add(json.load(open(p)).get("device") or "none named")
            except (OSError, ValueError):
                devs.add("unreadable identity")
    print("\t".join((r["operator"], r["status"], r["seconds"], " + ".join(sorted(devs)))))
PY
}

# Finished operators of screen folder $1 whose results ran on a device not
# among $2 (models joined by '|'; every device of a level-2 operator must
# be), or timed out (a limit of the screen's, not a result), not rerun
# yet: one name a line, the quickest (by their seconds in ops_status.csv)
# first, so that a call's budget reruns the most.
stale_ops() {
  local rows
  [ -f "$1/out/ops_status.csv" ] || return 0
  rows=$(where_ran "$1/out") || return 1
  printf '%s\n' "$rows" | awk -F'\t' -v models="$2" -v done_file="$1/rescreened" '
    BEGIN {
      while ((getline op < done_file) > 0) done[op] = 1
      n = split(models, m, "|")
      for (i = 1; i <= n; i++) ok[m[i]] = 1
    }
    function elsewhere(devs,   d, k, j) {
      if (devs == "") return 1
      k = split(devs, d, " \\+ ")
      for (j = 1; j <= k; j++) if (!(d[j] in ok)) return 1
      return 0
    }
    NF && !($1 in done) && (elsewhere($4) || $2 == "timeout") {
      printf "%s\t%s\n", ($3 ~ /^[0-9.]+$/ ? $3 : 1e308), $1 }' |
    sort -t"$(printf '\t')" -k1,1g -k2,2 | cut -f2
}

# Operators of screen folder $1's selection that its batch has not finished.
unfinished_ops() {
  if [ -f "$1/out/ops_status.csv" ]; then
    awk -F, 'NR == FNR { if (FNR > 1) done[$1] = 1; next } !($1 in done)' \
      "$1/out/ops_status.csv" "$1/ops.txt"
  else
    cat "$1/ops.txt"
  fi
}

# Operators of the selection not finished yet (first: slow ones left by an
# earlier call start while the width is free), then those that finished on
# a device model not among $2 or timed out, run here in one batch; each of
# the latter once (--force replaces its results only when its rerun
# finishes).
rescreen() {
  local d=$1 models=$2 n nu budget rc t0=$SECONDS
  unfinished_ops "$d" >"$d/stale.txt"
  nu=$(wc -l <"$d/stale.txt")
  stale_ops "$d" "$models" >>"$d/stale.txt" || { note "screen: cannot read $d/out"; return 1; }
  n=$(wc -l <"$d/stale.txt")
  [ "$n" -gt 0 ] || { note "screen: every operator finished on $models"; identity_pass "$d"; return 0; }
  budget=$(($(left) - 20))
  [ "$budget" -gt 60 ] || { note "screen: $nu operators not finished and $((n - nu)) to run again wait for the next call"; return 0; }
  note "screen: $nu operators not finished, $((n - nu)) finished on a device other than $models or timed out: here (--force)"
  touch "$d/.rescreen-start"
  timeout -s INT -k 60 "$budget" "$BUILD/bin/zlbench" batch --provider flaggems \
    --flaggems "$FG" --backend "$BACKEND" --level core --ops-file "$d/stale.txt" --out "$d/out" \
    --force --timeout "$OP_TIMEOUT" --retries 1 --jobs-per-device "$JOBS" --progress never \
    ${SCREEN_ARGS:-} >>"$WORK/logs/screen.log" 2>&1
  rc=$?
  # A rerun that finished replaced ops/<op> (and its .complete marker); an
  # interrupted one left the earlier results, to be rerun by the next call.
  local op
  while read -r op; do
    [ "$d/out/ops/$op/.complete" -nt "$d/.rescreen-start" ] && echo "$op" >>"$d/rescreened"
  done <"$d/stale.txt"
  note "screen: here: rc=$rc after $((SECONDS - t0)) s, $(cat "$d/rescreened" 2>/dev/null | wc -l) rerun in all, $(($(stale_ops "$d" "$models" | wc -l))) to run again left"
  identity_pass "$d"
}

# The full selection of screen folder $1 again, so that run_identity.json
# lists it (a rescreen's batch names only its operators): everything
# resumes, nothing runs; a call with no time left leaves it to the next,
# which finds nothing to run and comes here. Only once every operator
# finished: a pass that starts one only to stop it 30 s later wastes it.
identity_pass() {
  local d=$1
  [ "$(left)" -gt 40 ] && [ -z "$(unfinished_ops "$d")" ] &&
    timeout -s INT -k 10 30 "$BUILD/bin/zlbench" batch --provider flaggems --flaggems "$FG" \
      --backend "$BACKEND" --level core --ops-file "$d/ops.txt" --out "$d/out" \
      --timeout "$OP_TIMEOUT" --retries 1 --jobs-per-device "$JOBS" --progress never \
      ${SCREEN_ARGS:-} >>"$WORK/logs/screen.log" 2>&1
  return 0
}

stage_table() {
  local res=$WORK/compare/results.tsv st=$WORK/screen/out/ops_status.csv
  if [ -f "$res" ]; then
    note ""
    note "FlagGems side by side (core level, $CMP_DTYPES; wall s of one process, or of one batch child; [64, 64] float16 gems ms)"
    awk -F'\t' 'NR > 1 {w[$1, $2] = $4; g[$1, $2] = $6; rc[$1, $2] = $3; ops[$1] = 1; order[n++] = $1}
      END {
        printf "%-9s %9s %9s %9s %11s %7s %7s  %9s %9s %9s %9s\n", "op", "kernel", "cudagraph",
               "plugin", "batch", "k/plug", "k/batch", "kernel64", "graph64", "plugin64", "batch64"
        for (i = 0; i < n; i++) { op = order[i]; if (seen[op]++) continue
          r = (w[op, "plugin"] > 0) ? sprintf("%.1fx", w[op, "kernel"] / w[op, "plugin"]) : "-"
          q = (w[op, "batch"] > 0) ? sprintf("%.1fx", w[op, "kernel"] / w[op, "batch"]) : "-"
          printf "%-9s %9s %9s %9s %11s %7s %7s  %9s %9s %9s %9s\n", op,
                 w[op, "kernel"] "/" rc[op, "kernel"], w[op, "cudagraph"] "/" rc[op, "cudagraph"],
                 w[op, "plugin"] "/" rc[op, "plugin"], w[op, "batch"] "/" rc[op, "batch"], r, q,
                 g[op, "kernel"], g[op, "cudagraph"], g[op, "plugin"], g[op, "batch"] }
      }' "$res" | tee -a "$SUMMARY"
  fi
  if [ -f "$st" ]; then
    note ""
    note "screen: $(($(wc -l <"$st") - 1)) of $(wc -l <"$WORK/screen/ops.txt") operators finished"
    cut -d, -f2 "$st" | tail -n +2 | sort | uniq -c | sort -rn | tee -a "$SUMMARY"
    note "where they ran (each operator's run_identity.json; level 2: every dtype's):"
    where_ran "$WORK/screen/out" | awk -F'\t' '
      { n[$2 SUBSEP ($4 == "" ? "no identity" : $4)]++ }
      END { for (k in n) { split(k, f, SUBSEP); printf "%7d %-20s %s\n", n[k], f[1], f[2] } }' |
      sort -k2,2 -k3 | tee -a "$SUMMARY"
    note "failures (ops_status.csv rows):"
    tail -n +2 "$st" | grep -v '^[^,]*,\(ok\|ok_capture_denied\|replayed\),' |
      cut -c1-300 | tee -a "$SUMMARY"
  fi
}

for s in $STAGES; do
  "stage_$s" || note "stage $s: failed"
done
# Attempts' logs stay (why an operator failed, timed out or was stopped),
# their large files do not.
(cd "$WORK" && find . -path '*/attempts/*' -type f -size +256k) >"$WORK/.tar-exclude" 2>/dev/null
tar -czf "$OUT/logs.tar.gz" -C "$WORK" -X "$WORK/.tar-exclude" --exclude=./.tar-exclude . 2>/dev/null
if [ -d "$WORK/screen" ]; then
  (cd "$WORK" && find ./screen -path '*/attempts/*' -type f -size +64k) >"$WORK/.state-exclude"
  tar -czf "$OUT/screen-state.tar.gz" -C "$WORK" -X "$WORK/.state-exclude" ./screen ||
    note "screen: could not write $OUT/screen-state.tar.gz"
fi
note "total: $((SECONDS - T0)) s"
