# One batch per output folder: a second batch on the same --out is refused
# (exit 2, naming the holder) while the first runs on undisturbed; the lock
# of a SIGKILLed batch dies with it.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
OUT="$TMP/res"
run_batch() {
  "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops hang --dtypes float32 --devices 0 \
    --timeout 2 --grace 0.2 --retries 0 --out "$OUT" $QUICK \
    --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
}
run_batch >"$TMP/first.out" 2>&1 &
bgpid=$!
# Wait until its child runs.
for i in $(seq 1 100); do
  [ -d "$OUT/ops/hang/attempts" ] && break
  sleep 0.05
done
[ -d "$OUT/ops/hang/attempts" ] || fail "the first batch started no child"
holder=$(batch_pid)
expect_rc 2 run_batch
expect_in "$TMP/err" "output folder '$OUT' is in use by another batch (host $(hostname) pid $holder)"
wait $bgpid
rc=$?
[ "$rc" = 1 ] || { cat "$TMP/first.out" >&2; fail "the first batch exited $rc, expected 1 (hang times out)"; }
[ "$(csv_field "$OUT/ops_status.csv" hang status)" = timeout ] || fail "the first batch's hang is not 'timeout'"
[ "$(csv_field "$OUT/ops_status.csv" hang attempts)" = 1 ] || fail "hang ran more than once"

# A batch killed with SIGKILL leaves its lock file, but not its lock.
OUT="$TMP/res2"
run_batch >"$TMP/killed.out" 2>&1 &
bgpid=$!
for i in $(seq 1 100); do
  [ -d "$OUT/ops/hang/attempts" ] && break
  sleep 0.05
done
kill -9 "$(batch_pid)"
wait $bgpid 2>/dev/null
[ -f "$OUT/batch.lock" ] || fail "no stale lock file to test with"
expect_rc 1 run_batch
[ "$(csv_field "$OUT/ops_status.csv" hang status)" = timeout ] || fail "the batch after a killed one did not run"
echo "ok: one batch per output folder"
