# Row markers through zlbench run on the test backend (emulated graphs):
# a refused capture falls back per shape with its marker, ZL_DIRECT_REPEAT
# shows in it, the deny list skips the attempt, a device fault gives exit 4
# and no latency, a poisoned capture gives exit 5 and
# BENCHMARK_CAPTURE_POISONED.
. "$(dirname "$0")/lib.sh"
# Columns by their header label, never by position or anywhere on the line.
. "$(dirname "$0")/../gpu/table.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
SH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R() { "$ZLBENCH" run "$@" --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 $QUICK; }

expect_rc 0 R good_copy --out "$TMP/g"
expect_in "$TMP/g/run.log" "mode=graph"
[ "$(table_rows "$TMP/g/run.log")" = 2 ] || fail "good_copy: $(table_rows "$TMP/g/run.log") rows, expected 2"
all_rows_are "$TMP/g/run.log" Timer graph || fail "good_copy rows are not graph-timed"
all_rows_are "$TMP/g/run.log" Marker - || fail "good_copy rows carry a marker"

expect_rc 0 R refuse_capture --out "$TMP/r"
[ "$(table_rows "$TMP/r/run.log")" = 2 ] || fail "refuse_capture: $(table_rows "$TMP/r/run.log") rows, expected 2"
all_rows_are "$TMP/r/run.log" Timer direct || fail "refused rows are not timed directly"
all_rows_are "$TMP/r/run.log" Marker "fallback(phase=capture,reason=TEST_ERROR_CAPTURE_UNSUPPORTED,repeat=1)" ||
  fail "refused rows lack the fallback marker"
ZL_DIRECT_REPEAT=5 expect_rc 0 R refuse_capture --out "$TMP/r5"
[ "$(table_rows "$TMP/r5/run.log")" = 2 ] || fail "refuse_capture (repeat 5): wrong row count"
all_rows_are "$TMP/r5/run.log" Marker "fallback(phase=capture,reason=TEST_ERROR_CAPTURE_UNSUPPORTED,repeat=5)" ||
  fail "ZL_DIRECT_REPEAT=5 is not in the markers"
expect_rc 0 R refuse_capture --repeat 3 --quantiles 0.2,0.8 --out "$TMP/rq"
expect_in "$TMP/rq/run.log" "repeat=3 skipped: quantiles requested"

expect_rc 0 R good_copy --deny-capture good_copy,other --out "$TMP/d"
[ "$(table_rows "$TMP/d/run.log")" = 2 ] || fail "deny: $(table_rows "$TMP/d/run.log") rows, expected 2"
all_rows_are "$TMP/d/run.log" Timer direct || fail "denied rows are not timed directly"
all_rows_are "$TMP/d/run.log" Marker "fallback(phase=deny,repeat=1)" || fail "deny marker missing"
expect_in "$TMP/d/run.log" "capture=denied by --deny-capture"
printf 'capture_deny:\n  good_copy: "poisons the context on this backend"\n' >"$TMP/deny.yaml"
expect_rc 0 R good_copy --deny-file "$TMP/deny.yaml" --out "$TMP/d2"
expect_in "$TMP/d2/run.log" "fallback(phase=deny,repeat=1)"

expect_rc 4 R device_fault --out "$TMP/f"
expect_in "$TMP/f/run.log" "fatal(phase=accuracy,reason=TEST_ERROR_ILLEGAL_ADDRESS)"
all_rows_are "$TMP/f/run.log" Status FAILED || fail "a fatal fault gave a row that is not FAILED"
all_rows_are "$TMP/f/run.log" "Baseline (ms)" N/A || fail "a baseline latency was reported for a fatal fault"
all_rows_are "$TMP/f/run.log" "Candidate (ms)" N/A || fail "a latency was reported for a fatal fault"
expect_in "$TMP/err" "device fault in operator 'device_fault'"

expect_rc 5 R poison_capture --out "$TMP/p"
expect_in "$TMP/err" "BENCHMARK_CAPTURE_POISONED: operator 'poison_capture' is capture-incompatible"
expect_in "$TMP/p/run.log" "poisoned(phase=capture,reason=TEST_ERROR_CAPTURE_INVALIDATED)"
expect_rc 0 R poison_capture --deny-capture poison_capture --out "$TMP/p2"

expect_rc 1 R wrong_result --out "$TMP/w"
expect_in "$TMP/w/run.log" "error=mismatch"
expect_in "$TMP/w/run.log" "note: [64]: output 'out'"
grep -q '^SUCCESS' "$TMP/w/run.log" && fail "a wrong result was reported as SUCCESS"
echo "ok: markers and verdicts"

# Noise-based stopping: every row reports its noise and sample count; the
# identity and the JSON say how sampling stopped.
expect_rc 0 R good_copy --stop noise --max-noise 50 --min-samples 6 --timeout-ms 200 \
  --out "$TMP/n" --json "$TMP/n.json"
expect_in "$TMP/n/run.log" "stop=noise"
expect_in "$TMP/n/run_identity.json" '"stop": "noise"'
expect_in "$TMP/n/run_identity.json" '"max_noise": 0.5'
expect_in "$TMP/n.json" '"noise": '
table_col "$TMP/n/run.log" Samples >"$TMP/n.samples" || fail "no Samples column in $TMP/n/run.log"
awk '{ if ($1 + 0 < 6) bad = 1; n++ } END { exit bad || n != 2 }' "$TMP/n.samples" ||
  fail "noise-stopped rows have fewer samples than --min-samples: $(tr '\n' ' ' <"$TMP/n.samples")"
expect_rc 2 R good_copy --stop sometimes --out "$TMP/n2"
expect_in "$TMP/err" "invalid value 'sometimes' for --stop"
expect_rc 2 R good_copy --max-noise 0 --out "$TMP/n2"
expect_in "$TMP/err" "invalid value '0' for --max-noise"

# The trace timer needs a tracer: a clear error where there is none.
expect_rc 2 "$ZLBENCH" run softmax --backend host --timer trace --out "$TMP/c"
expect_in "$TMP/err" "--timer trace needs a kernel activity tracer, and backend 'host' has none"
echo "ok: noise stop and trace availability"
