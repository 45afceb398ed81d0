# The Ascend backend end to end on the fake ACL runtime (tests/fake/): the
# library it loads and the errors when it cannot, devices and their
# properties through ASCEND_RT_VISIBLE_DEVICES, run with each timer (the
# queue timer has no hold to use), every verdict path driven by injected
# faults, and batch pinning each child to its device.
. "$(dirname "$0")/lib.sh"
: "${ZLB_FAKE_ACL:?ZLB_FAKE_ACL must point at the fake libascendcl.so}"
: "${ZLB_FAKE_ACL_NOSYM:?}"
: "${ZLB_FAKE_ACL_OPS:?}"
unset ZL_ASCEND_LIB ASCEND_RT_VISIBLE_DEVICES NPU_VISIBLE_DEVICES ASCEND_TOOLKIT_HOME
unset ZL_FAKE_DEVICES ZL_FAKE_NO_DEVICE ZL_FAKE_MEM_BYTES ZL_FAKE_OP_US ZL_FAKE_FAULT \
  ZL_FAKE_FAULT_AT ZL_FAKE_CAPTURE ZL_FAKE_NO_WAIT_VALUE
# The fake's device-fault abort must die by its signal, as a real one does.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_abort=0"
SHAPES="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R="--backend ascend --lib $ZLB_FAKE_ACL_OPS --shape-file $SHAPES $QUICK"

# ---- which library, and the errors when it cannot be used ----------------
ZL_ASCEND_LIB=/nonexistent/libascendcl.so expect_rc 3 "$ZLBENCH" devices --backend ascend
expect_in "$TMP/out" "/nonexistent/libascendcl.so: cannot open shared object file"
expect_in "$TMP/out" "from ZL_ASCEND_LIB"
# Without the variable: libascendcl.so on the loader's path. One lacking
# the capture calls is named with the symbol.
mkdir -p "$TMP/nosym" "$TMP/good"
ln -s "$ZLB_FAKE_ACL_NOSYM" "$TMP/nosym/libascendcl.so"
LD_LIBRARY_PATH="$TMP/nosym" expect_rc 3 "$ZLBENCH" run fake_copy $R --out "$TMP/r0"
expect_in "$TMP/err" "libascendcl.so lacks 'aclmdlRICaptureEnd'"
ln -s "$ZLB_FAKE_ACL" "$TMP/good/libascendcl.so"
LD_LIBRARY_PATH="$TMP/good" expect_rc 0 "$ZLBENCH" devices --backend npu --json
expect_in "$TMP/out" '"name": "Ascend910B-fake-N0"'
# Not on the loader's path: the toolkit ASCEND_TOOLKIT_HOME names.
mkdir -p "$TMP/toolkit/lib64"
ln -s "$ZLB_FAKE_ACL" "$TMP/toolkit/lib64/libascendcl.so"
ASCEND_TOOLKIT_HOME="$TMP/toolkit" expect_rc 0 "$ZLBENCH" devices --backend ascend
expect_in "$TMP/out" "[0] Ascend910B-fake-N0  "
expect_rc 3 "$ZLBENCH" devices --backend ascend
expect_in "$TMP/out" "libascendcl.so: cannot open shared object file"

export ZL_ASCEND_LIB="$ZLB_FAKE_ACL"
# Runtime present, no device: aclInit succeeds, no device is visible.
ZL_FAKE_NO_DEVICE=1 expect_rc 3 "$ZLBENCH" run fake_copy $R --out "$TMP/r1"
expect_in "$TMP/err" "device 0 is not visible on backend 'ascend' (0 devices visible; check ASCEND_RT_VISIBLE_DEVICES)"

# ---- devices: properties through aclrtGetDeviceInfo, visibility -----------
# The fake answers each attribute id with its own value (vector cores 48+,
# AI cores 24+): a wrong id would give another's value or none.
expect_rc 0 "$ZLBENCH" devices --backend ascend --json
expect_in "$TMP/out" '"capabilities": "graph,events,rng_state,async,l2_flush"'
expect_in "$TMP/out" '"sm_count": 24'
expect_in "$TMP/out" '"sm_count": 25'
expect_in "$TMP/out" '"l2_bytes": 201326592'
expect_in "$TMP/out" '"memory_bytes": 1073741824'
# ASCEND_RT_VISIBLE_DEVICES picks and renumbers, in ascending order.
ZL_FAKE_DEVICES=4 ASCEND_RT_VISIBLE_DEVICES=2 expect_rc 0 "$ZLBENCH" devices --backend cann
expect_in "$TMP/out" "[0] Ascend910B-fake-N2  "
expect_not_in "$TMP/out" "[1]"
ZL_FAKE_DEVICES=4 ASCEND_RT_VISIBLE_DEVICES=1,3 expect_rc 0 "$ZLBENCH" devices --backend ascend
expect_in "$TMP/out" "[1] Ascend910B-fake-N3  "
ZL_FAKE_DEVICES=2 expect_rc 3 "$ZLBENCH" run fake_copy $R --device 2 --out "$TMP/r2"
expect_in "$TMP/err" "device 2 is not visible on backend 'ascend' (2 devices visible; check ASCEND_RT_VISIBLE_DEVICES)"

# ---- run: each timer; the time is the device's ----------------------------
expect_rc 0 "$ZLBENCH" run fake_copy $R --dtypes float32 --out "$TMP/g"
expect_in "$TMP/out" "backend=ascend  device=0 (Ascend910B-fake-N0)  timer=graph"
[ "$(grep -c '^SUCCESS .* graph ' "$TMP/out")" = 2 ] || { cat "$TMP/out"; fail "graph rows"; }
expect_rc 0 "$ZLBENCH" run fake_scale $R --dtypes float32 --out "$TMP/g2"
[ "$(grep -c '^SUCCESS .* graph ' "$TMP/out")" = 2 ] || { cat "$TMP/out"; fail "graph rows (scale)"; }
# No hold on ACL: the queue timer falls back to direct timing, marked.
expect_rc 0 "$ZLBENCH" run fake_scale $R --timer queue --out "$TMP/q"
[ "$(grep -c '^SUCCESS .* direct .*fallback(phase=hold,reason=UNSUPPORTED,repeat=1)' "$TMP/out")" = 2 ] ||
  { cat "$TMP/out"; fail "queue timer without a hold: not 2 direct rows marked UNSUPPORTED"; }
# Every device operation 3 ms longer: the direct timer's events see it.
ZL_FAKE_OP_US=3000 expect_rc 0 "$ZLBENCH" run fake_copy $R --timer direct --dtypes float32 --out "$TMP/d"
awk '/^SUCCESS/ { n++; if ($2 < 3.0 || $3 < 3.0 || $2 > 500 || $3 > 500) bad = 1 }
  END { exit !(n == 2 && !bad) }' "$TMP/out" || { cat "$TMP/out"; fail "slow operations not timed"; }
# Out of device memory: the flush buffer does not fit, and the error says so.
ZL_FAKE_MEM_BYTES=65536 expect_rc 3 "$ZLBENCH" run fake_copy $R --out "$TMP/m"
expect_in "$TMP/err" "aclrtMalloc: ACL_ERROR_RT_MEMORY_ALLOCATION (207001)"

# ---- verdicts ---------------------------------------------------------------
# Refused: a candidate that synchronises inside capture falls back per shape.
expect_rc 0 "$ZLBENCH" run fake_sync $R --dtypes float32 --out "$TMP/v1"
expect_in "$TMP/out" "candidate:fallback(phase=capture,reason=ACL_ERROR_RT_STREAM_CAPTURED,repeat=1)"
ZL_FAKE_CAPTURE=invalidate expect_rc 0 "$ZLBENCH" run fake_copy $R --dtypes float32 --out "$TMP/v2"
expect_in "$TMP/out" "fallback(phase=capture,reason=ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,repeat=1)"
ZL_FAKE_CAPTURE=unsupported expect_rc 0 "$ZLBENCH" run fake_copy $R --dtypes float32 --out "$TMP/v2b"
expect_in "$TMP/out" "fallback(phase=capture,reason=ACL_ERROR_RT_STREAM_CAPTURED,repeat=1)"
# Fatal: a device fault fails the operator, no latency, exit 4.
expect_rc 4 "$ZLBENCH" run fake_fault $R --dtypes float32 --out "$TMP/v4"
expect_in "$TMP/out" "fatal(phase=accuracy,reason=ACL_ERROR_RT_DEVICE_MEM_ERROR)"
grep -E '^FAILED +N/A +N/A ' "$TMP/out" >/dev/null || { cat "$TMP/out"; fail "a latency for a faulting kernel"; }
# A fault while timing (the 5th host function), and a lost device.
ZL_FAKE_FAULT_AT=5 expect_rc 4 "$ZLBENCH" run fake_copy $R --dtypes float32 --out "$TMP/v5"
expect_in "$TMP/err" "ACL_ERROR_RT_DEVICE_MEM_ERROR (507053)"
ZL_FAKE_FAULT=lost expect_rc 4 "$ZLBENCH" run fake_fault $R --dtypes float32 --out "$TMP/v6"
expect_in "$TMP/out" "reason=ACL_ERROR_RT_LOST_HEARTBEAT"
# Poisoned: the capture broke the context; exit 5.
ZL_FAKE_CAPTURE=poison expect_rc 5 "$ZLBENCH" run fake_copy $R --dtypes float32 --out "$TMP/v7"
expect_in "$TMP/out" "poisoned(phase=capture,reason=ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)"
expect_in "$TMP/err" "BENCHMARK_CAPTURE_POISONED"

# ---- batch: pinning, and a device fault costs only its operator -----------
OUT="$TMP/b1"
expect_rc 1 "$ZLBENCH" batch --backend ascend --lib "$ZLB_FAKE_ACL_OPS" --shape-file "$SHAPES" $QUICK \
  --ops fake_copy,fake_scale,fake_sync,fake_fault --timeout 30 --out "$OUT"
S="$OUT/ops_status.csv"
for op in fake_copy fake_scale fake_sync; do
  [ "$(csv_field "$S" $op status)" = ok ] || fail "$op: status $(csv_field "$S" $op status)"
  # Each child saw only its device, as ordinal 0: the physical one its
  # ASCEND_RT_VISIBLE_DEVICES named.
  dev=$(csv_field "$S" $op device)
  [ "$dev" = "$(fnv_slot $op 2)" ] || fail "$op ran on device $dev"
  expect_in "$OUT/ops/$op/run.log" "backend=ascend  device=0 (Ascend910B-fake-N$dev)"
done
[ "$(csv_field "$S" fake_fault status)" = fatal ] || fail "fake_fault: status $(csv_field "$S" fake_fault status)"
expect_in "$S" "ACL_ERROR_RT_DEVICE_MEM_ERROR (507053)"
expect_in "$OUT/ops/fake_sync/run.log" "reason=ACL_ERROR_RT_STREAM_CAPTURED"
# A poisoned capture: the batch re-runs the operator with capture denied.
OUT="$TMP/b2"
ZL_FAKE_CAPTURE=poison expect_rc 0 "$ZLBENCH" batch --backend npu --devices 1 --lib "$ZLB_FAKE_ACL_OPS" \
  --shape-file "$SHAPES" $QUICK --ops fake_copy --timeout 30 --out "$OUT"
[ "$(csv_field "$OUT/ops_status.csv" fake_copy status)" = ok_capture_denied ] ||
  { cat "$OUT/ops_status.csv"; fail "poisoned capture not re-run with capture denied"; }
expect_in "$OUT/ops/fake_copy/run.log" "fallback(phase=deny,repeat=1)"
expect_in "$OUT/ops/fake_copy/run.log" "(Ascend910B-fake-N1)"
# A device fault that ends the process: only that operator.
OUT="$TMP/b3"
ZL_FAKE_FAULT=abort expect_rc 1 "$ZLBENCH" batch --backend ascend --lib "$ZLB_FAKE_ACL_OPS" \
  --shape-file "$SHAPES" $QUICK --ops fake_copy,fake_fault --timeout 30 --out "$OUT"
[ "$(csv_field "$OUT/ops_status.csv" fake_copy status)" = ok ] || fail "fake_copy did not survive"
[ "$(csv_field "$OUT/ops_status.csv" fake_fault status)" = crashed ] || fail "fake_fault did not crash"
expect_in "$OUT/ops_status.csv" "signal SIGABRT: fake ACL runtime: device memory fault on NPU"
echo "ok: ascend on the fake ACL runtime"
