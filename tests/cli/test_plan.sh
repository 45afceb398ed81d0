# zlbench plan resolves timer, capture denial and dtypes with the run's own
# code: it says what the run does, or fails where the run would.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
T="--backend test --lib $TESTOPS"
TSH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"

# --timer trace: refused, as by the run, where the backend has no tracer...
expect_rc 2 "$ZLBENCH" plan softmax --backend host --timer trace
expect_in "$TMP/err" "--timer trace needs a kernel activity tracer, and backend 'host' has none"
expect_not_in "$TMP/out" "direct timer"
expect_rc 2 "$ZLBENCH" run softmax --backend host --timer trace --out "$TMP/trace"
expect_in "$TMP/err" "--timer trace needs a kernel activity tracer, and backend 'host' has none"
# ...and the trace timer, not the direct one, where it has one (CUDA, even
# where its runtime is missing).
expect_rc 0 "$ZLBENCH" plan --backend cuda --timer trace
expect_in "$TMP/out" "timer:        trace (requested trace)"
expect_in "$TMP/out" "4. time each with the trace timer"
expect_not_in "$TMP/out" "direct timer"
expect_not_in "$TMP/out" "queued right behind its flush"
# --trace-flush queued: the plan says each call goes in behind its flush;
# it is the trace timer's and needs a flush, and its values are two.
expect_rc 0 "$ZLBENCH" plan --backend cuda --timer trace --trace-flush queued
expect_in "$TMP/out" "each call queued right behind its flush, not after the host waited for it"
expect_rc 0 "$ZLBENCH" plan --backend cuda --timer trace --trace-flush waited
expect_not_in "$TMP/out" "queued right behind its flush"
expect_rc 2 "$ZLBENCH" plan --backend cuda --timer graph --trace-flush queued
expect_in "$TMP/err" "--trace-flush queued is the trace timer's, and this run's timer is graph (give --timer trace)"
expect_rc 2 "$ZLBENCH" plan --backend cuda --trace-flush queued
expect_in "$TMP/err" "--trace-flush queued is the trace timer's, and this run's timer is graph"
expect_rc 2 "$ZLBENCH" plan --backend cuda --timer trace --trace-flush queued --no-flush
expect_in "$TMP/err" "--no-flush asks for no flush: give one of them"
expect_rc 2 "$ZLBENCH" plan --backend cuda --timer trace --trace-flush sideways
expect_in "$TMP/err" "waited or queued"
# "cupti", the trace timer's old name, still selects it: as a flag, as
# ZL_TIMER and through a batch's children; nothing prints the old name.
expect_rc 0 "$ZLBENCH" plan --backend cuda --timer cupti
expect_in "$TMP/out" "timer:        trace (requested trace)"
expect_in "$TMP/out" "4. time each with the trace timer"
expect_not_in "$TMP/out" "cupti"
ZL_TIMER=cupti expect_rc 0 "$ZLBENCH" plan --backend cuda
expect_in "$TMP/out" "timer:        trace (requested trace)"
expect_rc 2 "$ZLBENCH" run softmax --backend host --timer cupti --out "$TMP/cupti"
expect_in "$TMP/err" "--timer trace needs a kernel activity tracer, and backend 'host' has none"

# Capture denial from a deny file, as the run reads it.
printf 'capture_deny:\n  good_copy: "poisons the context on driver X"\n' >"$TMP/deny.yaml"
expect_rc 0 "$ZLBENCH" plan good_copy $T
expect_in "$TMP/out" "4. time each with the graph timer"
expect_rc 0 "$ZLBENCH" plan good_copy $T --deny-file "$TMP/deny.yaml"
expect_in "$TMP/out" "capture:      denied (deny.yaml)"
expect_in "$TMP/out" "4. time each: capture denied (deny.yaml) -> direct timer"
expect_rc 0 "$ZLBENCH" run good_copy $T --deny-file "$TMP/deny.yaml" --shape-file "$TSH" \
  --dtypes float32 --out "$TMP/deny" $QUICK
expect_in "$TMP/deny/run.log" "fallback(phase=deny,repeat=1)"
# The default list, assets/capture_deny.yaml (in ZL_ASSETS_DIR here).
mkdir -p "$TMP/assets"
cp "$TMP/deny.yaml" "$TMP/assets/capture_deny.yaml"
ZL_ASSETS_DIR="$TMP/assets" expect_rc 0 "$ZLBENCH" plan good_copy $T
expect_in "$TMP/out" "4. time each: capture denied (capture_deny.yaml) -> direct timer"
expect_rc 0 "$ZLBENCH" plan good_copy $T --deny-capture good_copy
expect_in "$TMP/out" "4. time each: capture denied (--deny-capture) -> direct timer"
# A malformed deny file fails the plan as it fails the run.
printf 'capture_deny: [good_copy\n' >"$TMP/bad.yaml"
expect_rc 2 "$ZLBENCH" plan good_copy $T --deny-file "$TMP/bad.yaml"
expect_in "$TMP/err" "bad.yaml:"

# Dtypes: the ones the run would use, or the run's error.
expect_rc 0 "$ZLBENCH" plan softmax --backend host --dtypes float32
expect_in "$TMP/out" "dtypes:       float32"
expect_rc 2 "$ZLBENCH" plan softmax --backend host --dtypes int64
expect_in "$TMP/err" "supports none of the requested dtypes"

# An unavailable backend: the reason and its closing bracket on one line.
expect_rc 0 "$ZLBENCH" plan --backend rocm
grep -qE '^backend: +rocm \(AMD\)  \[unavailable here: .*libamdhip64.*\]$' "$TMP/out" ||
  { cat "$TMP/out" >&2; fail "the unavailable backend's line is not closed on the same line"; }
grep -qx ']' "$TMP/out" && fail "a bracket on a line of its own"
[ "$(sed -n 2p "$TMP/out" | cut -c1-13)" = "capabilities:" ] || fail "the backend takes more than one line"
echo "ok: plan"
