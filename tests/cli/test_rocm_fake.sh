# The ROCm backend end to end on the fake HIP runtime (tests/fake/): the
# library it loads and the errors when it cannot, devices and their
# properties through the visibility variables, run with each timer, every
# verdict path driven by injected faults, and batch pinning each child to
# its device. The real libamdhip64.so.5, where installed, is the "runtime
# present, no device" case.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_vendor.sh"
: "${ZLB_FAKE_HIP:?ZLB_FAKE_HIP must point at the fake libamdhip64.so.6}"
: "${ZLB_FAKE_HIP_NOSYM:?}"
: "${ZLB_FAKE_HIP_OPS:?}"
unset ZL_ROCM_LIB HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES
unset ZL_FAKE_DEVICES ZL_FAKE_NO_DEVICE ZL_FAKE_MEM_BYTES ZL_FAKE_OP_US ZL_FAKE_FAULT \
  ZL_FAKE_FAULT_AT ZL_FAKE_CAPTURE ZL_FAKE_NO_WAIT_VALUE
# The fake's device-fault abort must die by its signal, as a real one does.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_abort=0"
SHAPES="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R="--backend rocm --lib $ZLB_FAKE_HIP_OPS --shape-file $SHAPES $QUICK"

# ---- which library, and the errors when it cannot be used ----------------
# ZL_ROCM_LIB names the one library; a missing one is named with the variable.
ZL_ROCM_LIB=/nonexistent/libamdhip64.so.6 expect_rc 3 "$ZLBENCH" devices --backend rocm
expect_in "$TMP/out" "/nonexistent/libamdhip64.so.6: cannot open shared object file"
expect_in "$TMP/out" "from ZL_ROCM_LIB"
# Library names in order: ROCm 7's first. A .so.7 lacking a symbol is taken
# (and named, with the symbol) although a good .so.6 sits beside it.
mkdir -p "$TMP/lib7" "$TMP/lib5"
ln -s "$ZLB_FAKE_HIP_NOSYM" "$TMP/lib7/libamdhip64.so.7"
ln -s "$ZLB_FAKE_HIP" "$TMP/lib7/libamdhip64.so.6"
LD_LIBRARY_PATH="$TMP/lib7" expect_rc 3 "$ZLBENCH" run fake_copy $R --out "$TMP/r0"
expect_in "$TMP/err" "libamdhip64.so.7 lacks 'hipEventElapsedTime'"
# ROCm 5's name (the distributions' ROCm) is found when it is the only one.
ln -s "$ZLB_FAKE_HIP" "$TMP/lib5/libamdhip64.so.5"
LD_LIBRARY_PATH="$TMP/lib5" expect_rc 0 "$ZLBENCH" devices --backend rocm --json
expect_in "$TMP/out" '"name": "Fake AMD GPU 0"'

export ZL_ROCM_LIB="$ZLB_FAKE_HIP"
# Runtime present, no device: hipInit's 101 makes the backend unavailable.
ZL_FAKE_NO_DEVICE=1 expect_rc 3 "$ZLBENCH" run fake_copy $R --out "$TMP/r1"
expect_in "$TMP/err" "hipInit failed: hipErrorInvalidDevice (101): no AMD GPU is visible"
if [ -n "${ZLB_REAL_HIP:-}" ]; then
  ZL_ROCM_LIB="$ZLB_REAL_HIP" expect_rc 3 "$ZLBENCH" devices --backend rocm
  expect_in "$TMP/out" "$ZLB_REAL_HIP loaded, but hipInit failed: hipErrorInvalidDevice (101)"
else
  echo "note: no real libamdhip64 here (libamdhip64-dev): the real no-device case is not checked"
fi

# ---- devices: properties through attribute queries, visibility --------
# The fake answers each attribute id with its own value: a wrong id (CUDA's
# numbering) would leave a field 0 or take another's value.
expect_rc 0 "$ZLBENCH" devices --backend hip --json
expect_in "$TMP/out" '"capabilities": "graph,events,rng_state,async,l2_flush,trace,hold"'
expect_in "$TMP/out" '"sm_count": 304'
expect_in "$TMP/out" '"sm_count": 303'
expect_in "$TMP/out" '"l2_bytes": 4194304'
expect_in "$TMP/out" '"memory_bytes": 1073741824'
expect_in "$TMP/out" '"uuid": "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadae01"'
expect_in "$TMP/out" '"pci_bus_id": "0000:11:00.0"'
expect_in "$TMP/out" '"runtime_version": "hip 6.3.42134"'
# HIP_VISIBLE_DEVICES picks and renumbers; ROCR_VISIBLE_DEVICES masks first.
ZL_FAKE_DEVICES=4 HIP_VISIBLE_DEVICES=2 expect_rc 0 "$ZLBENCH" devices --backend amd
expect_in "$TMP/out" "[0] Fake AMD GPU 2  "
expect_not_in "$TMP/out" "[1]"
ZL_FAKE_DEVICES=4 ROCR_VISIBLE_DEVICES=3,1 HIP_VISIBLE_DEVICES=1 expect_rc 0 "$ZLBENCH" devices --backend rocm
expect_in "$TMP/out" "[0] Fake AMD GPU 1  "
expect_not_in "$TMP/out" "[1]"
# CUDA_VISIBLE_DEVICES stands in for HIP's only when HIP's is unset.
ZL_FAKE_DEVICES=4 HIP_VISIBLE_DEVICES=3 CUDA_VISIBLE_DEVICES=0,1 expect_rc 0 "$ZLBENCH" devices --backend rocm
expect_in "$TMP/out" "[0] Fake AMD GPU 3  "
expect_not_in "$TMP/out" "[1]"
ZL_FAKE_DEVICES=4 CUDA_VISIBLE_DEVICES=1 expect_rc 0 "$ZLBENCH" devices --backend rocm
expect_in "$TMP/out" "[0] Fake AMD GPU 1  "
ZL_FAKE_DEVICES=2 expect_rc 3 "$ZLBENCH" run fake_copy $R --device 2 --out "$TMP/r2"
expect_in "$TMP/err" "device 2 is not visible on backend 'rocm' (2 devices visible; check HIP_VISIBLE_DEVICES)"

# ---- run: each timer; the time is the device's ----------------------------
expect_rc 0 "$ZLBENCH" run fake_copy $R --dtypes float32 --out "$TMP/g"
expect_in "$TMP/out" "backend=rocm  device=0 (Fake AMD GPU 0)  timer=graph"
[ "$(grep -c '^SUCCESS .* graph ' "$TMP/out")" = 2 ] || { cat "$TMP/out"; fail "graph rows"; }
expect_rc 0 "$ZLBENCH" run fake_scale $R --timer queue --out "$TMP/q"
[ "$(grep -c '^SUCCESS .* queue ' "$TMP/out")" = 2 ] || { cat "$TMP/out"; fail "queue rows"; }
# Every device operation 3 ms longer: the direct timer's events see it.
ZL_FAKE_OP_US=3000 expect_rc 0 "$ZLBENCH" run fake_copy $R --timer direct --dtypes float32 --out "$TMP/d"
awk '/^SUCCESS/ { n++; if ($2 < 3.0 || $3 < 3.0 || $2 > 500 || $3 > 500) bad = 1 }
  END { exit !(n == 2 && !bad) }' "$TMP/out" || { cat "$TMP/out"; fail "slow operations not timed"; }
# Out of device memory: the flush buffer does not fit, and the error says so.
ZL_FAKE_MEM_BYTES=65536 expect_rc 3 "$ZLBENCH" run fake_copy $R --out "$TMP/m"
expect_in "$TMP/err" "hipMalloc: hipErrorOutOfMemory (2)"

# ---- verdicts ---------------------------------------------------------------
fake_verdicts "$R" hipErrorStreamCaptureUnsupported hipErrorStreamCaptureInvalidated \
  hipErrorStreamCaptureUnsupported hipErrorIllegalAddress 700 hipErrorContextIsDestroyed
# A hold the device refuses: the queue timer falls back the same way.
ZL_FAKE_NO_WAIT_VALUE=1 expect_rc 0 "$ZLBENCH" run fake_copy $R --timer queue --dtypes float32 --out "$TMP/v3"
expect_in "$TMP/out" "fallback(phase=hold,reason=hipErrorNotSupported,repeat=1)"

# ---- batch: pinning, and a device fault costs only its operator -----------
fake_batch rocm hip "$ZLB_FAKE_HIP_OPS" "Fake AMD GPU " hipErrorStreamCaptureUnsupported \
  hipErrorIllegalAddress 700
# A GPU memory fault aborts the process, as ROCr does: only that operator.
fake_abort rocm "$ZLB_FAKE_HIP_OPS" "Memory access fault by GPU node-"
# ---- --trials on a device with little memory, and with a fault ------------
# Two sets of a 36 MB case do not fit in 64 MiB: the second trial takes the
# first one's place (said in the row's note) instead of failing.
printf 'test:\n  shapes: [[3000000]]\n' >"$TMP/big.yaml"
RB="--backend rocm --lib $ZLB_FAKE_HIP_OPS --shape-file $TMP/big.yaml $QUICK --dtypes float32 --no-flush"
ZL_FAKE_MEM_BYTES=67108864 expect_rc 0 "$ZLBENCH" run fake_copy $RB --out "$TMP/t1"
ZL_FAKE_MEM_BYTES=67108864 expect_rc 0 "$ZLBENCH" run fake_copy $RB --trials 2 --out "$TMP/t2"
expect_in "$TMP/out" "trial on the memory of the trial before (no room for two sets)"
# A fault while timing the candidate: the row fails, its results.json (the
# baseline timed, the candidate not) is still read by compare.
ZL_FAKE_FAULT_AT=21 expect_rc 4 "$ZLBENCH" run fake_copy $R --timer direct --dtypes float32 \
  --trials 2 --out "$TMP/tf"
expect_in "$TMP/tf/results.json" '"status": "FAILED"'
expect_rc 0 "$ZLBENCH" compare "$TMP/tf" "$TMP/tf"
echo "ok: rocm on the fake HIP runtime"
