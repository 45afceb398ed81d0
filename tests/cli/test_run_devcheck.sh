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
echo "ok"
