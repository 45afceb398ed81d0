# Killing a batch with SIGKILL mid-run and running the same command again
# leaves every operator exactly once in ops_status.csv and summary.csv;
# finished operators are not measured again; --replay-from re-measures
# nothing it can reuse.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
OPS=good_copy,good_scale,refuse_capture,wrong_result,poison_capture,hang
OUT="$TMP/res"
run_batch() {
  "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops "$OPS" --devices 0 \
    --timeout 1 --grace 0.2 --retries 0 --out "$OUT" $QUICK \
    --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml" "$@"
}
# One device: operators run one after another. Kill the batch once the
# first has finished, while others are still to come.
run_batch >"$TMP/first.out" 2>&1 &
bgpid=$!
for i in $(seq 1 200); do
  [ -f "$OUT/ops_status.csv" ] && [ "$(wc -l <"$OUT/ops_status.csv")" -ge 2 ] && break
  sleep 0.05
done
kill -9 "$(batch_pid)"
wait $bgpid 2>/dev/null
done1=$(($(wc -l <"$OUT/ops_status.csv") - 1))
[ "$done1" -ge 1 ] || fail "nothing finished before the kill"
[ "$done1" -lt 6 ] || fail "the batch finished before it could be killed"
# A child of the killed batch dies with it (PR_SET_PDEATHSIG).
sleep 0.3
if [ -n "$(run_children)" ]; then
  run_children >&2
  fail "a child outlived its SIGKILLed batch"
fi
first_done=$(awk -F, 'NR > 1 { print $1 }' "$OUT/ops_status.csv" | head -1)
stamp=$(stat -c %Y.%N "$OUT/ops/$first_done/run.log")

expect_rc 1 run_batch
[ "$(($(wc -l <"$OUT/ops_status.csv") - 1))" = 6 ] || fail "ops_status.csv does not hold 6 operators"
for op in good_copy good_scale refuse_capture wrong_result poison_capture hang; do
  n=$(awk -F, -v op=$op 'NR > 1 && $1 == op' "$OUT/ops_status.csv" | wc -l)
  [ "$n" = 1 ] || fail "$op appears $n times in ops_status.csv"
done
# summary.csv: good_copy has 2 shapes x 3 dtypes = 6 rows, once each.
n=$(grep -c '^good_copy,' "$OUT/summary.csv")
[ "$n" = 6 ] || fail "good_copy has $n rows in summary.csv, expected 6"
n=$(grep -c '^hang,' "$OUT/summary.csv")
[ "$n" = 1 ] || fail "hang has $n lines in summary.csv, expected 1"
expect_in "$TMP/out" "resumed"
# The operator finished before the kill was not measured again.
[ "$(stat -c %Y.%N "$OUT/ops/$first_done/run.log")" = "$stamp" ] || fail "$first_done was re-measured"

# A third run with nothing left to do changes nothing.
expect_rc 1 run_batch
expect_in "$TMP/out" "6 resumed"

# Replay: a fresh folder takes finished results from the first one.
OUT2="$TMP/replayed"
expect_rc 1 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops "$OPS" --devices 0 \
  --timeout 1 --grace 0.2 --retries 0 --out "$OUT2" $QUICK --replay-from "$OUT" \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
for op in good_copy good_scale refuse_capture poison_capture; do
  [ "$(csv_field "$OUT2/ops_status.csv" $op status)" = replayed ] || fail "$op was not replayed"
done
# Reused failures stay failures.
[ "$(csv_field "$OUT2/ops_status.csv" hang status)" = replayed_timeout ] || fail "hang: not replayed_timeout"
[ "$(csv_field "$OUT2/ops_status.csv" wrong_result status)" = replayed_failed_rows ] || fail "wrong_result: not replayed_failed_rows"
for op in good_copy good_scale refuse_capture wrong_result poison_capture hang; do
  [ -d "$OUT2/ops/$op/attempts" ] && fail "$op was measured again despite --replay-from"
done
expect_in "$TMP/out" "6 replayed"
cmp "$OUT/ops/good_copy/run.log" "$OUT2/ops/good_copy/run.log" || fail "replayed run.log differs"
n=$(grep -c '^good_copy,' "$OUT2/summary.csv")
[ "$n" = 6 ] || fail "replayed summary has $n good_copy rows"

# --replay OP=DIR for one operator; the rest is measured.
OUT3="$TMP/one"
expect_rc 0 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy,good_scale \
  --out "$OUT3" $QUICK --replay "good_copy=$OUT/ops/good_copy" \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
[ "$(csv_field "$OUT3/ops_status.csv" good_copy status)" = replayed ] || fail "good_copy not replayed"
[ "$(csv_field "$OUT3/ops_status.csv" good_scale status)" = ok ] || fail "good_scale not measured"
echo "ok: resume and replay"
