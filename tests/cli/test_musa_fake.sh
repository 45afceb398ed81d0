# The MUSA backend end to end on the fake MUSA runtime (tests/fake/): the
# library it loads and the errors when it cannot, devices and their
# properties through MUSA_VISIBLE_DEVICES, run with each timer (the queue
# timer falls back: MUSA has no stream hold), every verdict path driven by
# injected faults, and batch pinning each child to its device. The fake
# shares the backend's declarations (src/device/musa_api.h): this proves
# the backend's logic, not the MUSA API itself.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_vendor.sh"
: "${ZLB_FAKE_MUSA:?ZLB_FAKE_MUSA must point at the fake libmusart.so.1}"
: "${ZLB_FAKE_MUSA_NOSYM:?}"
: "${ZLB_FAKE_MUSA_MIN:?}"
: "${ZLB_FAKE_MUSA_OPS:?}"
unset ZL_MUSA_LIB MUSA_VISIBLE_DEVICES MTHREADS_VISIBLE_DEVICES
unset ZL_FAKE_DEVICES ZL_FAKE_NO_DEVICE ZL_FAKE_MEM_BYTES ZL_FAKE_OP_US ZL_FAKE_FAULT \
  ZL_FAKE_FAULT_AT ZL_FAKE_CAPTURE ZL_FAKE_MUSA_VERSION
SHAPES="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R="--backend musa --lib $ZLB_FAKE_MUSA_OPS --shape-file $SHAPES $QUICK"

# ---- which library, and the errors when it cannot be used ----------------
# ZL_MUSA_LIB names the one library; a missing one is named with the variable.
ZL_MUSA_LIB=/nonexistent/libmusart.so expect_rc 3 "$ZLBENCH" devices --backend musa
expect_in "$TMP/out" "/nonexistent/libmusart.so: cannot open shared object file"
expect_in "$TMP/out" "from ZL_MUSA_LIB"
# No runtime at all: every name tried is listed.
LD_LIBRARY_PATH="$TMP/none" expect_rc 3 "$ZLBENCH" devices --backend moore
expect_in "$TMP/out" "backend 'musa' is unavailable: cannot load its runtime"
expect_in "$TMP/out" "libmusart.so.1"
expect_in "$TMP/out" "/usr/local/musa/lib/libmusart.so"
# Library names in order: libmusart.so first. One lacking a symbol is taken
# (and named, with the symbol) although a good .so.1 sits beside it.
mkdir -p "$TMP/libs" "$TMP/lib1"
ln -s "$ZLB_FAKE_MUSA_NOSYM" "$TMP/libs/libmusart.so"
ln -s "$ZLB_FAKE_MUSA" "$TMP/libs/libmusart.so.1"
LD_LIBRARY_PATH="$TMP/libs" expect_rc 3 "$ZLBENCH" run fake_copy $R --out "$TMP/r0"
expect_in "$TMP/err" "libmusart.so lacks 'musaEventElapsedTime'"
# The versioned name is found when it is the only one.
ln -s "$ZLB_FAKE_MUSA" "$TMP/lib1/libmusart.so.1"
LD_LIBRARY_PATH="$TMP/lib1" expect_rc 0 "$ZLBENCH" devices --backend musa --json
expect_in "$TMP/out" '"name": "Fake Moore Threads GPU 0"'

export ZL_MUSA_LIB="$ZLB_FAKE_MUSA"
# Runtime present, no device: musaGetDeviceCount's 100 makes the backend
# unavailable; so does a MUSA_VISIBLE_DEVICES that names no device.
ZL_FAKE_NO_DEVICE=1 expect_rc 3 "$ZLBENCH" run fake_copy $R --out "$TMP/r1"
expect_in "$TMP/err" "musaGetDeviceCount failed: musaErrorNoDevice (100): no Moore Threads GPU is visible"
MUSA_VISIBLE_DEVICES=7 expect_rc 3 "$ZLBENCH" devices --backend musa
expect_in "$TMP/out" "musaErrorNoDevice (100)"

# ---- devices: properties, visibility -------------------------------------
# The fake answers each attribute id with its own value: a wrong id would
# leave a field 0 or take another's value.
expect_rc 0 "$ZLBENCH" devices --backend mthreads --json
expect_in "$TMP/out" '"capabilities": "graph,events,rng_state,async,l2_flush"'
expect_in "$TMP/out" '"visibility_env": "MUSA_VISIBLE_DEVICES"'
expect_in "$TMP/out" '"sm_count": 128'
expect_in "$TMP/out" '"sm_count": 127'
expect_in "$TMP/out" '"l2_bytes": 6291456'
expect_in "$TMP/out" '"memory_bytes": 1073741824'
expect_in "$TMP/out" '"uuid": "GPU-b0b1b2b3-b4b5-b6b7-b8b9-babbbcbdbe01"'
expect_in "$TMP/out" '"pci_bus_id": "0002:21:03.0"'
expect_in "$TMP/out" '"runtime_version": "musart 40100"'
# MUSA_VISIBLE_DEVICES picks and renumbers.
ZL_FAKE_DEVICES=4 MUSA_VISIBLE_DEVICES=3,1 expect_rc 0 "$ZLBENCH" devices --backend mt
expect_in "$TMP/out" "[0] Fake Moore Threads GPU 3  "
expect_in "$TMP/out" "[1] Fake Moore Threads GPU 1  "
expect_not_in "$TMP/out" "[2]"
ZL_FAKE_DEVICES=2 expect_rc 3 "$ZLBENCH" run fake_copy $R --device 2 --out "$TMP/r2"
expect_in "$TMP/err" "device 2 is not visible on backend 'musa' (2 devices visible; check MUSA_VISIBLE_DEVICES)"

# ---- run: each timer; the time is the device's ----------------------------
expect_rc 0 "$ZLBENCH" run fake_copy $R --dtypes float32 --out "$TMP/g"
expect_in "$TMP/out" "backend=musa  device=0 (Fake Moore Threads GPU 0)  timer=graph"
[ "$(grep -c '^SUCCESS .* graph ' "$TMP/out")" = 2 ] || { cat "$TMP/out"; fail "graph rows"; }
# A runtime without musaGraphInstantiateWithFlags: the 5-argument
# musaGraphInstantiate replays the graph as well. (The operator library
# links libmusart.so.1: LD_LIBRARY_PATH makes it the same runtime.)
ZL_MUSA_LIB="$ZLB_FAKE_MUSA_MIN" LD_LIBRARY_PATH="$(dirname "$ZLB_FAKE_MUSA_MIN")" expect_rc 0 "$ZLBENCH" run fake_scale $R --out "$TMP/g5"
[ "$(grep -c '^SUCCESS .* graph ' "$TMP/out")" = 2 ] || { cat "$TMP/out"; fail "graph rows (5-argument instantiate)"; }
# No stream hold on MUSA: the queue timer falls back to direct timing,
# saying why, and the plan says so beforehand.
expect_rc 0 "$ZLBENCH" run fake_scale $R --timer queue --out "$TMP/q"
expect_in "$TMP/out" "fallback(phase=hold,reason=UNSUPPORTED,repeat=1)"
expect_not_in "$TMP/out" "hold,reason=musa"
[ "$(grep -c '^SUCCESS .* direct ' "$TMP/out")" = 2 ] || { cat "$TMP/out"; fail "queue fallback rows"; }
expect_rc 0 "$ZLBENCH" plan fake_scale $R --timer queue
expect_in "$TMP/out" "backend 'musa' cannot hold a stream -> direct timer, marked fallback(phase=hold,reason=UNSUPPORTED,repeat=1)"
# Every device operation 3 ms longer: the direct timer's events see it.
ZL_FAKE_OP_US=3000 expect_rc 0 "$ZLBENCH" run fake_copy $R --timer direct --dtypes float32 --out "$TMP/d"
awk '/^SUCCESS/ { n++; if ($2 < 3.0 || $3 < 3.0 || $2 > 500 || $3 > 500) bad = 1 }
  END { exit !(n == 2 && !bad) }' "$TMP/out" || { cat "$TMP/out"; fail "slow operations not timed"; }
# Out of device memory: the flush buffer does not fit, and the error says so.
ZL_FAKE_MEM_BYTES=65536 expect_rc 3 "$ZLBENCH" run fake_copy $R --out "$TMP/m"
expect_in "$TMP/err" "musaMalloc: musaErrorMemoryAllocation (2): out of memory"

# ---- verdicts ---------------------------------------------------------------
fake_verdicts "$R" musaErrorStreamCaptureUnsupported musaErrorStreamCaptureInvalidated \
  musaErrorStreamCaptureUnsupported musaErrorIllegalAddress 700 musaErrorContextIsDestroyed

# ---- batch: pinning, and a device fault costs only its operator -----------
fake_batch musa musa "$ZLB_FAKE_MUSA_OPS" "Fake Moore Threads GPU " \
  musaErrorStreamCaptureUnsupported musaErrorIllegalAddress 700
# The batch grants what the parent's MUSA_VISIBLE_DEVICES shows, and the
# child's value is the physical device, not the parent's ordinal.
ZL_FAKE_DEVICES=4 MUSA_VISIBLE_DEVICES=3 expect_rc 0 "$ZLBENCH" batch --backend musa \
  --lib "$ZLB_FAKE_MUSA_OPS" --shape-file "$SHAPES" $QUICK --ops fake_copy --timeout 30 --out "$TMP/b1v"
expect_in "$TMP/b1v/ops/fake_copy/run.log" "(Fake Moore Threads GPU 3)"
echo "ok: musa on the fake MUSA runtime"
