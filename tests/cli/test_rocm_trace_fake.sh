# The ROCm backend's kernel tracer (roctracer, src/device/roctracer.c) end
# to end on the fake HIP runtime and the fake libroctracer64.so.4 beside it
# (tests/fake/fake_roctracer.c): the capability, the trace timer's numbers
# coming from the tracer's spans, untrusted records, and the tracer that
# cannot be used (missing, another version, a missing symbol) leaving the
# backend working with its other timers. Fakes only: no AMD hardware.
. "$(dirname "$0")/lib.sh"
: "${ZLB_FAKE_HIP:?ZLB_FAKE_HIP must point at the fake libamdhip64.so.6}"
: "${ZLB_FAKE_HIP_OPS:?}"
: "${ZLB_FAKE_ROCTRACER:?ZLB_FAKE_ROCTRACER must point at the fake libroctracer64.so.4}"
: "${ZLB_FAKE_ROCTRACER_NOSYM:?}"
unset ZL_ROCTRACER_LIB HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES
unset ZL_FAKE_DEVICES ZL_FAKE_NO_DEVICE ZL_FAKE_MEM_BYTES ZL_FAKE_OP_US ZL_FAKE_FAULT \
  ZL_FAKE_FAULT_AT ZL_FAKE_CAPTURE ZL_FAKE_NO_WAIT_VALUE ZL_FAKE_ROCTRACER_VERSION \
  ZL_FAKE_ROCTRACER_BAD
# The fake tracer sits beside the fake HIP: found there, not on a path.
[ "$(dirname "$ZLB_FAKE_ROCTRACER")" = "$(dirname "$ZLB_FAKE_HIP")" ] ||
  fail "the fake libroctracer64 is not beside the fake HIP"
export ZL_ROCM_LIB="$ZLB_FAKE_HIP"
SHAPES="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R="--backend rocm --lib $ZLB_FAKE_HIP_OPS --shape-file $SHAPES $QUICK --dtypes float32"
CAPS='graph,events,rng_state,async,l2_flush,hold'
CAPS_TRACE='graph,events,rng_state,async,l2_flush,trace,hold'

# ---- the tracer loads: capability "trace" --------------------------------
expect_rc 0 "$ZLBENCH" devices --backend rocm --json
expect_in "$TMP/out" "\"capabilities\": \"$CAPS_TRACE\""
expect_not_in "$TMP/out" '"trace_error"'

# ---- the trace timer's latency is the traced kernels' ---------------------
# Every device operation 3 ms longer (the fake sleeps before it runs the
# operation): events around the call see the 3 ms, the tracer's span only
# the host function, the operators' kernel of at least 20 µs (ops_fake.h).
ZL_FAKE_OP_US=3000 expect_rc 0 "$ZLBENCH" run fake_copy $R --timer direct --out "$TMP/d"
awk '/^SUCCESS/ { n++; if ($2 < 3.0 || $3 < 3.0) bad = 1 }
  END { exit !(n == 2 && !bad) }' "$TMP/out" || { cat "$TMP/out"; fail "direct: not the slow operations"; }
ZL_FAKE_OP_US=3000 expect_rc 0 "$ZLBENCH" run fake_copy $R --timer trace --out "$TMP/t"
expect_in "$TMP/out" "timer=trace"
awk '/^SUCCESS/ { n++; if ($2 < 0.02 || $3 < 0.02 || $2 > 2.0 || $3 > 2.0 || $8 != "trace") bad = 1 }
  END { exit !(n == 2 && !bad) }' "$TMP/out" || { cat "$TMP/out"; fail "trace: not the kernels' spans"; }
expect_in "$TMP/t/results.json" '"timer": "trace"'
expect_in "$TMP/t/run_identity.json" "\"capabilities\": \"$CAPS_TRACE\""

# ---- untrusted records are dropped, counted, and fail the row ---------------
ZL_FAKE_ROCTRACER_BAD=order expect_rc 1 "$ZLBENCH" run fake_copy $R --timer trace --out "$TMP/b1"
expect_in "$TMP/b1/results.json" "were dropped as untrusted (the first: a kernel that ends before it begins)"
grep -qE '^SUCCESS' "$TMP/out" && fail "a latency from untrusted records"
ZL_FAKE_ROCTRACER_BAD=op expect_rc 1 "$ZLBENCH" run fake_copy $R --timer trace --out "$TMP/b2"
expect_in "$TMP/b2/results.json" "(the first: a HIP ops record that is not a kernel dispatch)"

# ---- a version whose records are not verified: no tracer ------------------
for v in 4.0 4.2 5.0; do
  ZL_FAKE_ROCTRACER_VERSION=$v expect_rc 0 "$ZLBENCH" devices --backend rocm --json
  expect_in "$TMP/out" "\"capabilities\": \"$CAPS\""
  expect_in "$TMP/out" "is roctracer $v, and only roctracer 4.1's activity records"
done
ZL_FAKE_ROCTRACER_VERSION=5.0 expect_rc 3 "$ZLBENCH" run fake_copy $R --timer trace --out "$TMP/v1"
expect_in "$TMP/err" "--timer trace: rocm has no kernel tracer: $ZLB_FAKE_ROCTRACER is roctracer 5.0"
# The backend itself is untouched: the other timers run.
ZL_FAKE_ROCTRACER_VERSION=5.0 expect_rc 0 "$ZLBENCH" run fake_copy $R --timer direct --out "$TMP/v2"
[ "$(grep -c '^SUCCESS .* direct ' "$TMP/out")" = 2 ] || { cat "$TMP/out"; fail "direct rows"; }

# A tracer that cannot be used ($ZL_ROCTRACER_LIB): the device is still
# listed, without "trace" and with the reason ($1, a line of `devices`);
# --timer trace exits 3 naming it ($2).
untraced() {
  expect_rc 0 "$ZLBENCH" devices --backend rocm
  expect_in "$TMP/out" "capabilities=$CAPS "
  expect_in "$TMP/out" "$1"
  expect_in "$TMP/out" "[0] Fake AMD GPU 0  "
  expect_rc 3 "$ZLBENCH" run fake_copy $R --timer trace --out "$TMP/untraced"
  expect_in "$TMP/err" "--timer trace: rocm has no kernel tracer"
  expect_in "$TMP/err" "$2"
  rm -rf "$TMP/untraced"
}

# ---- a library that lacks a symbol ----------------------------------------
export ZL_ROCTRACER_LIB="$ZLB_FAKE_ROCTRACER_NOSYM"
untraced "no trace: rocm has no kernel tracer: $ZLB_FAKE_ROCTRACER_NOSYM lacks 'roctracer_next_record' (missing symbol)" \
  "lacks 'roctracer_next_record' (missing symbol)"
expect_rc 0 "$ZLBENCH" run fake_copy $R --out "$TMP/s2"
[ "$(grep -c '^SUCCESS .* graph ' "$TMP/out")" = 2 ] || { cat "$TMP/out"; fail "graph rows"; }

# ---- no library ---------------------------------------------------------------
export ZL_ROCTRACER_LIB=/nonexistent/libroctracer64.so.4
untraced "/nonexistent/libroctracer64.so.4: cannot open shared object file" \
  "/nonexistent/libroctracer64.so.4: cannot open shared object file"
unset ZL_ROCTRACER_LIB
# HIP from a folder without a tracer: every place searched is named (where
# no real roctracer is installed to be found instead).
mkdir -p "$TMP/bare"
ln -s "$ZLB_FAKE_HIP" "$TMP/bare/libamdhip64.so.6"
if ! ldconfig -p 2>/dev/null | grep -q libroctracer64 && [ ! -e /opt/rocm/lib/libroctracer64.so.4 ]; then
  ZL_ROCM_LIB="$TMP/bare/libamdhip64.so.6" expect_rc 0 "$ZLBENCH" devices --backend rocm
  expect_in "$TMP/out" "capabilities=$CAPS "
  expect_in "$TMP/out" "$TMP/bare/libroctracer64.so.4: cannot open shared object file"
  expect_in "$TMP/out" "libroctracer64.so.4: cannot open shared object file"
  expect_in "$TMP/out" "/opt/rocm/lib/libroctracer64.so.4: cannot open shared object file"
  expect_in "$TMP/out" "[0] Fake AMD GPU 0  "
else
  echo "note: a real libroctracer64 is installed: the no-library search is not checked"
fi
echo "ok: rocm kernel tracing on the fake roctracer"
