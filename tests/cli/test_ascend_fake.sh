# The Ascend backend end to end on the fake ACL runtime (tests/fake/): the
# library it loads and the errors when it cannot, devices and their
# properties through ASCEND_RT_VISIBLE_DEVICES, run with each timer (the
# queue timer has no hold to use), every verdict path driven by injected
# faults, and batch pinning each child to its device.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_vendor.sh"
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
fake_verdicts "$R" ACL_ERROR_RT_STREAM_CAPTURED ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED \
  ACL_ERROR_RT_STREAM_CAPTURED ACL_ERROR_RT_DEVICE_MEM_ERROR 507053 ACL_ERROR_RT_LOST_HEARTBEAT

# ---- batch: pinning, and a device fault costs only its operator -----------
fake_batch ascend npu "$ZLB_FAKE_ACL_OPS" "Ascend910B-fake-N" ACL_ERROR_RT_STREAM_CAPTURED \
  ACL_ERROR_RT_DEVICE_MEM_ERROR 507053
# A device fault that ends the process: only that operator.
fake_abort ascend "$ZLB_FAKE_ACL_OPS" "fake ACL runtime: device memory fault on NPU"
echo "ok: ascend on the fake ACL runtime"
