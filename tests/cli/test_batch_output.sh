# Writes that fail are the environment failing, not the operators: the
# batch stops with exit 6 naming what could not be written, keeps every
# finished result, and a rerun once the fault is gone resumes and completes.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
mkdir -p "$TMP/state"
export ZL_TEST_STATE_DIR="$TMP/state"
OUT="$TMP/res"
run_batch() {
  "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy,disk_full,good_scale \
    --devices 0 --timeout 5 --grace 0.2 --retries 2 --out "$OUT" $QUICK \
    --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
}

# A child that exits 6 (its output folder is full): no retry, no per-dtype
# fallback, the batch stops with exit 6 and names the folder.
touch "$TMP/state/disk_full"
expect_rc 6 run_batch
expect_in "$TMP/err" "operator 'disk_full' could not write its results into '$OUT/ops/disk_full/attempts/1-all'"
[ "$(cat "$TMP/state/disk_full.attempts")" = 1 ] || fail "disk_full ran $(cat "$TMP/state/disk_full.attempts") times, expected once"
# good_copy ran before it (one device, selection order) and stays finished.
[ "$(csv_field "$OUT/ops_status.csv" good_copy status)" = ok ] || fail "good_copy's result was lost"
[ -f "$OUT/ops/good_copy/.complete" ] || fail "good_copy lost its .complete marker"
expect_not_in "$OUT/ops_status.csv" "disk_full"
expect_not_in "$OUT/ops_status.csv" "good_scale"
stamp=$(stat -c %Y.%N "$OUT/ops/good_copy/run.log")

# Space is back: the same command resumes (good_copy is not measured again).
rm "$TMP/state/disk_full"
expect_rc 0 run_batch
expect_in "$TMP/out" "3 operators: 3 ok, 0 failed, 1 resumed"
for op in good_copy disk_full good_scale; do
  [ "$(csv_field "$OUT/ops_status.csv" $op status)" = ok ] || fail "$op is not ok after the rerun"
done
[ "$(stat -c %Y.%N "$OUT/ops/good_copy/run.log")" = "$stamp" ] || fail "good_copy was re-measured"

# The output folder fills while an operator runs one child per dtype
# (dtype_exit: bfloat16 fails, so the all-dtypes child does; float16's
# child passes, bfloat16's fails, float32's cannot write): the batch stops
# with exit 6 and keeps the operator's progress; the rerun goes on from
# float32 and keeps the two dtypes done.
OUT="$TMP/res3"
L2="--backend test --lib $TESTOPS --ops dtype_exit --devices 0 --timeout 5 --grace 0.2 --retries 0"
L2="$L2 --shape-file $ZLB_SRC/tests/data/cli/shapes_test.yaml"
touch "$TMP/state/dtype_exit_full"
expect_rc 6 "$ZLBENCH" batch $L2 --out "$OUT" $QUICK
expect_in "$TMP/err" "operator 'dtype_exit' could not write its results"
expect_in "$OUT/ops/dtype_exit/.progress" '"label": "bfloat16"'
[ -d "$OUT/ops/dtype_exit/float16" ] || fail "float16's results were lost"
rm "$TMP/state/dtype_exit_full"
expect_rc 1 "$ZLBENCH" batch $L2 --out "$OUT" $QUICK
expect_in "$TMP/out" "goes on at level 2 from float32 (2 of 3 dtypes done before)"
[ "$(csv_field "$OUT/ops_status.csv" dtype_exit status)" = partial ] ||
  fail "dtype_exit after the rerun: $(csv_field "$OUT/ops_status.csv" dtype_exit status)"
[ "$(csv_field "$OUT/ops_status.csv" dtype_exit failed_dtypes)" = bfloat16 ] ||
  fail "dtype_exit's failed dtypes: $(csv_field "$OUT/ops_status.csv" dtype_exit failed_dtypes)"

# A write of the batch's own that fails (summary.csv cannot replace a
# folder of that name; root can write anywhere, so no chmod): exit 6
# naming the file, ops_status.csv still complete.
OUT="$TMP/res2"
mkdir -p "$OUT/summary.csv/blocked"
expect_rc 6 run_batch
expect_in "$TMP/err" "$OUT/summary.csv"
for op in good_copy disk_full good_scale; do
  [ "$(csv_field "$OUT/ops_status.csv" $op status)" = ok ] || fail "$op missing from ops_status.csv"
done
rm -rf "$OUT/summary.csv"
expect_rc 0 run_batch
expect_in "$TMP/out" "3 resumed"
[ "$(grep -c '^good_scale,' "$OUT/summary.csv")" = 6 ] || fail "summary.csv lacks good_scale's rows"
echo "ok: failed writes stop the batch with exit 6 and lose nothing"
