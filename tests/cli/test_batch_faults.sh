# The batch layer against operators that misbehave on purpose (test
# backend, two emulated devices): each ends with the right status and
# attempt count, good ones complete, hung ones die with their whole group.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
mkdir -p "$TMP/state"
export ZL_TEST_STATE_DIR="$TMP/state"
# Under AddressSanitizer a SIGSEGV is caught and turned into exit 1; let
# the crash operator die by its signal as it would in a normal build.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
OPS=good_copy,good_scale,crash,hang,hang_ignore_term,dtype_exit,flaky,always_fail,wrong_result,poison_capture,refuse_capture
OUT="$TMP/out1"
expect_rc 1 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops "$OPS" \
  --timeout 1.5 --grace 0.5 --retries 2 --out "$OUT" $QUICK \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
S="$OUT/ops_status.csv"
expect_in "$TMP/out" "results: $OUT"
# The last line counts the operators that are not ok by status, most first.
line=$(grep '^zlbench batch: 11 operators: ' "$TMP/out")
case "$line" in
*"5 ok, 6 failed (2 timeout, "*) ;;
*) fail "the batch's last line: '$line'" ;;
esac
for st in failed_rows failed crashed partial; do
  echo "$line" | grep -Eq "(\(|, )1 $st(,|\))" || fail "the batch's last line lacks '1 $st': '$line'"
done

check() { # op status attempts level
  st=$(csv_field "$S" "$1" status)
  at=$(csv_field "$S" "$1" attempts)
  lv=$(csv_field "$S" "$1" dtype_level)
  [ "$st" = "$2" ] || fail "$1: status '$st', expected '$2'"
  [ "$at" = "$3" ] || fail "$1: $at attempts, expected $3"
  [ "$lv" = "$4" ] || fail "$1: dtype level $lv, expected $4"
}
check good_copy ok 1 1
check good_scale ok 1 1
check refuse_capture ok 1 1
# Wrong output: a finished measurement with FAILED rows, not retried.
check wrong_result failed_rows 1 1
# ...whose first row's note is the reason.
csv_field "$S" wrong_result error_signature | grep -qF "exit 1: [64]: output 'out': 64 of 64 elements differ" ||
  fail "wrong_result's signature: $(csv_field "$S" wrong_result error_signature)"
# Fails once, then succeeds on the retry.
check flaky ok 2 1
# Poisoned capture: re-run once with capture denied, and the status says so.
check poison_capture ok_capture_denied 2 1
expect_in "$S" "re-run with capture denied"
# Deterministic: the same signature twice stops retrying (2, not 3, per
# level); then one child per dtype, again two each.
check always_fail failed 8 2
check crash crashed 8 2
# Exits only for bfloat16: the per-dtype fallback keeps the other dtypes.
check dtype_exit partial 6 2
[ "$(csv_field "$S" dtype_exit failed_dtypes)" = bfloat16 ] || fail "dtype_exit: wrong failed dtypes"
[ -f "$OUT/ops/dtype_exit/float16/run.log" ] || fail "dtype_exit: float16 rows lost"
[ -f "$OUT/ops/dtype_exit/float32/run.log" ] || fail "dtype_exit: float32 rows lost"
expect_in "$OUT/summary.csv" "dtype_exit,test,float16"
expect_in "$OUT/summary.csv" "dtype_exit,test,float32"
expect_not_in "$OUT/summary.csv" "dtype_exit,test,bfloat16"
# An all-dtypes child out of time is split by dtype without a retry (1),
# then each dtype times out twice (2 x 3).
check hang timeout 7 2
check hang_ignore_term timeout 7 2
expect_in "$S" "signal SIGSEGV"
# Each attempt that leads to another child has its line, as it happens.
grep -Eq '^ +device [01] +hang +attempt 1 \(all dtypes\) after [0-9.]+s: timeout; one child per dtype next$' \
  "$TMP/out" || fail "no line for hang's timed-out all-dtypes attempt"
grep -Eq '^ +device [01] +flaky +attempt 1 \(all dtypes\) after [0-9.]+s: exit 9: .*; retrying$' \
  "$TMP/out" || fail "no line for flaky's first attempt"
grep -Eq '^ +device [01] +poison_capture +attempt 1 \(all dtypes\) .*; again with capture denied$' \
  "$TMP/out" || fail "no line for poison_capture's poisoned attempt"
expect_in "$S" "error: always_fail: deterministic failure"

# Every good operator completed, with its marker.
for op in good_copy good_scale refuse_capture wrong_result flaky poison_capture; do
  [ -f "$OUT/ops/$op/.complete" ] || fail "$op has no .complete marker"
  [ -f "$OUT/ops/$op/run.log" ] || fail "$op has no run.log"
done
expect_in "$OUT/ops/refuse_capture/run.log" "fallback(phase=capture,reason=TEST_ERROR_CAPTURE_UNSUPPORTED,repeat=1)"
expect_in "$OUT/ops/poison_capture/run.log" "fallback(phase=deny,repeat=1)"

# Sharding follows the documented hash: fnv1a64(name) mod 2 (lib.sh).
for op in good_copy good_scale hang crash; do
  want=$(fnv_slot "$op" 2)
  [ "$(csv_field "$S" $op device)" = "$want" ] || fail "$op ran on device $(csv_field "$S" $op device), hash says $want"
done

# No process of the batch outlives it (hung children were killed with
# their whole group, SIGTERM-ignoring one included). Only this test's
# children count: other test runs on the machine have their own.
sleep 0.2
if [ -n "$(run_children hang)$(run_children hang_ignore_term)" ]; then
  run_children >&2
  fail "a hung child outlived the batch"
fi
# One dtype: a timeout is retried as any transient failure (nothing to
# split into), 2 attempts at level 1.
expect_rc 1 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops hang --dtypes float32 \
  --timeout 1 --grace 0.2 --retries 1 --out "$TMP/one" $QUICK \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
S="$TMP/one/ops_status.csv"
check hang timeout 2 1
echo "ok: batch fault handling"
