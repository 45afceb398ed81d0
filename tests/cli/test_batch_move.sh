# A failed move of an operator's results into place (here: rename() fails
# with ENOSPC through an LD_PRELOAD shim) stops the batch with exit 6 and a
# message naming both folders, and keeps the attempt folder, which is all
# there is of those results; a rerun once the fault is gone completes.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
[ -n "${ZLB_FAIL_RENAME:-}" ] && [ -f "$ZLB_FAIL_RENAME" ] || fail "ZLB_FAIL_RENAME is not set"
OUT="$TMP/res"
run_batch() {
  "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy,good_scale \
    --devices 0 --timeout 10 --retries 1 --out "$OUT" $QUICK \
    --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
}
# An ASan build's runtime must be loaded first; the shim comes before it.
export ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
LD_PRELOAD="$ZLB_FAIL_RENAME" ZL_SHIM_FAIL_RENAME="/ops/good_copy/run.log" expect_rc 6 run_batch
expect_in "$TMP/err" "cannot move the results of 'good_copy'"
expect_in "$TMP/err" "the attempt folder is kept"
att=$(ls -d "$OUT"/ops/good_copy/attempts/*/ 2>/dev/null | head -1)
[ -n "$att" ] && [ -s "$att/run.log" ] || fail "the attempt folder of good_copy is gone"
grep -q '^SUCCESS' "$att/run.log" || fail "the kept attempt lost its rows"
[ ! -f "$OUT/ops/good_copy/.complete" ] || fail "good_copy is marked complete although its move failed"
if [ -f "$OUT/ops_status.csv" ]; then
  [ "$(csv_field "$OUT/ops_status.csv" good_copy status)" != ok ] || fail "good_copy listed as ok"
fi

# The fault is gone: the same command completes both operators.
expect_rc 0 run_batch
[ "$(csv_field "$OUT/ops_status.csv" good_copy status)" = ok ] || fail "good_copy not ok after the rerun"
[ "$(csv_field "$OUT/ops_status.csv" good_scale status)" = ok ] || fail "good_scale not ok after the rerun"
[ -f "$OUT/ops/good_copy/.complete" ] || fail "good_copy not complete after the rerun"
grep -q '^SUCCESS' "$OUT/ops/good_copy/run.log" || fail "good_copy's run.log is not in place"
echo "ok"
