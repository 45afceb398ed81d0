# SIGINT stops every child group, writes the status of what finished,
# exits 130; running the same command again resumes.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
OUT="$TMP/res"
run_batch() {
  "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy,hang,good_scale \
    --devices 0 --timeout 30 --retries 0 --out "$OUT" $QUICK \
    --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml" "$@"
}
run_batch >"$TMP/first.out" 2>&1 &
bgpid=$!
# Wait until the hang child is running, then interrupt; a child that never
# appears is a failure, not a reason to interrupt something else.
started=0
for i in $(seq 1 200); do
  [ -n "$(run_children hang)" ] && { started=1; break; }
  sleep 0.05
done
if [ "$started" != 1 ]; then
  kill -TERM "$(batch_pid)" 2>/dev/null
  wait $bgpid
  cat "$TMP/first.out" >&2
  fail "the hang child never started within 10 s"
fi
kill -INT "$(batch_pid)"
wait $bgpid
rc=$?
[ "$rc" = 130 ] || fail "interrupted batch exited $rc, expected 130"
expect_in "$TMP/first.out" "interrupted: run the same command again to resume"
# The operator that was running is named, with how long it had run.
grep -Eq '^ +device 0 +hang +stopped after [0-9.]+s \(operator [0-9.]+s, level 1\): not finished, a resume starts it again$' \
  "$TMP/first.out" || fail "the interrupted operator is not named"
sleep 0.2
if [ -n "$(run_children hang)" ]; then
  run_children hang >&2
  fail "the hung child survived the interrupt"
fi
[ -f "$OUT/ops_status.csv" ] || fail "no ops_status.csv after the interrupt"
expect_not_in "$OUT/ops_status.csv" "hang,"
[ -f "$OUT/ops/hang/.complete" ] && fail "the interrupted operator was marked complete"
# Resume: the operators that finished are skipped, the rest run (hang is
# given a short limit this time).
expect_rc 1 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy,hang,good_scale \
  --devices 0 --timeout 1 --grace 0.2 --retries 0 --out "$OUT" $QUICK \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
[ "$(csv_field "$OUT/ops_status.csv" hang status)" = timeout ] || fail "hang did not run on resume"
[ "$(csv_field "$OUT/ops_status.csv" good_copy status)" = ok ] || fail "good_copy lost"
echo "ok: interrupt and resume"
