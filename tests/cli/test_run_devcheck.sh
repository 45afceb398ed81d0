# The accuracy check on the device (here the test backend's emulation,
# ZL_TEST_DEVCHECK=1) gives the same verdicts and the same messages as the
# check on the host, and is really used when the backend offers it.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
SH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R() { "$ZLBENCH" run "$@" --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32,float16 $QUICK; }

for op in wrong_result good_copy; do
  want=1; [ "$op" = good_copy ] && want=0
  ZL_TEST_DEVCHECK=0 ZL_TEST_DEVCHECK_LOG="$TMP/$op.host.calls" expect_rc $want R $op --out "$TMP/$op-host"
  ZL_TEST_DEVCHECK=1 ZL_TEST_DEVCHECK_LOG="$TMP/$op.dev.calls" expect_rc $want R $op --out "$TMP/$op-dev"
  [ ! -s "$TMP/$op.host.calls" ] || fail "$op: device checks ran although they were off"
  [ -s "$TMP/$op.dev.calls" ] || fail "$op: the device check was not used"
  grep -E '^(SUCCESS|FAILED)|note:' "$TMP/$op-host/run.log" | awk '{print $1}' >"$TMP/host.status"
  grep -E '^(SUCCESS|FAILED)|note:' "$TMP/$op-dev/run.log" | awk '{print $1}' >"$TMP/dev.status"
  cmp -s "$TMP/host.status" "$TMP/dev.status" || fail "$op: row statuses differ between host and device checks"
  grep 'note:' "$TMP/$op-host/run.log" >"$TMP/host.notes" || true
  grep 'note:' "$TMP/$op-dev/run.log" >"$TMP/dev.notes" || true
  cmp -s "$TMP/host.notes" "$TMP/dev.notes" || { diff "$TMP/host.notes" "$TMP/dev.notes" >&2; fail "$op: messages differ"; }
done
[ "$(grep -c 'elements differ beyond' "$TMP/wrong_result-dev/run.log")" = 4 ] ||
  fail "wrong_result: expected 4 mismatch notes from the device check"

# An operator's own compare(): its device version (compare_device) is used
# where the backend checks on the device, and gives the same verdicts and
# messages as compare() on host copies, also for a candidate output
# corrupted at a known element (ZL_TEST_CORRUPT=OUTPUT:ELEMENT).
for corrupt in "" 0:40; do
  want=0; [ -n "$corrupt" ] && want=1
  rm -f "$TMP/cc.host.calls" "$TMP/cc.dev.calls"
  ZL_TEST_CORRUPT=$corrupt ZL_TEST_DEVCHECK=0 ZL_TEST_DEVCHECK_LOG="$TMP/cc.host.calls" \
    expect_rc $want R custom_check --verbose --out "$TMP/cc-host"
  ZL_TEST_CORRUPT=$corrupt ZL_TEST_DEVCHECK=1 ZL_TEST_DEVCHECK_LOG="$TMP/cc.dev.calls" \
    expect_rc $want R custom_check --verbose --out "$TMP/cc-dev"
  [ ! -s "$TMP/cc.host.calls" ] || fail "custom_check: compare_device ran although device checks were off"
  [ "$(grep -c '^compare_device ' "$TMP/cc.dev.calls")" = 4 ] ||
    fail "custom_check: compare_device was not used for each of the 4 rows"
  # The verbose log says where each row was checked.
  [ "$(grep -c '; check on device$' "$TMP/cc-dev/run.log")" = 4 ] ||
    fail "custom_check: expected 4 rows checked on the device"
  [ "$(grep -c '; check on host$' "$TMP/cc-host/run.log")" = 4 ] ||
    fail "custom_check: expected 4 rows checked on the host"
  grep 'note:' "$TMP/cc-host/run.log" >"$TMP/host.notes" || true
  grep 'note:' "$TMP/cc-dev/run.log" >"$TMP/dev.notes" || true
  cmp -s "$TMP/host.notes" "$TMP/dev.notes" || { diff "$TMP/host.notes" "$TMP/dev.notes" >&2; fail "custom_check: messages differ"; }
  if [ -n "$corrupt" ]; then
    [ "$(grep -c 'custom: element 40: candidate' "$TMP/cc-dev/run.log")" = 4 ] ||
      fail "custom_check: expected the corrupted element 40 in 4 notes"
  else
    [ ! -s "$TMP/dev.notes" ] || fail "custom_check: correct output rejected"
  fi
done
# A malformed or out-of-range injection fails the row, naming the variable.
for bad in 0 0:x 5:1 0:100000 0:1:0 0:1:zz; do
  ZL_TEST_CORRUPT=$bad expect_rc 1 R custom_check --out "$TMP/cc-bad"
  expect_in "$TMP/cc-bad/run.log" "ZL_TEST_CORRUPT='$bad'"
done
echo "ok"
