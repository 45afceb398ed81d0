# Rerunning finished operators never loses them: `--force` builds the new
# results beside the old ones and swaps them in only once complete, so an
# interrupted (SIGINT) or killed (SIGKILL) rerun leaves each operator with
# either its old results and old status row or its new complete results.
# Replaying from the output folder itself is refused before anything is
# touched; a replay source holding a symbolic link is refused and counted
# as such, never as replayed.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
OUT="$TMP/res"
export ZL_TEST_STATE_DIR="$TMP/state"
mkdir -p "$ZL_TEST_STATE_DIR"
run_batch() {
  "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy,good_scale \
    --devices 0 --timeout 60 --retries 0 --out "$OUT" $QUICK --progress never \
    --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml" "$@"
}
expect_rc 0 run_batch
for op in good_copy good_scale; do
  [ -f "$OUT/ops/$op/.complete" ] && [ -f "$OUT/ops/$op/results.json" ] || fail "$op did not finish"
  cp "$OUT/ops/$op/results.json" "$TMP/$op.old.json"
done
cp "$OUT/ops_status.csv" "$TMP/status.old"

# wait_held: until good_scale's child waits on its hold file (good_copy,
# on the same device before it, has then finished).
wait_held() {
  for i in $(seq 1 400); do
    [ -n "$(run_children good_scale)" ] && grep -q 'good_copy ' "$TMP/force.out" && return 0
    sleep 0.05
  done
  kill -KILL "$(batch_pid)" 2>/dev/null
  cat "$TMP/force.out" >&2
  fail "good_scale never started within 20 s"
}

# SIGINT during the rerun of good_scale.
touch "$ZL_TEST_STATE_DIR/hold_good_scale"
run_batch --force >"$TMP/force.out" 2>&1 &
bgpid=$!
wait_held
kill -INT "$(batch_pid)"
wait $bgpid
rc=$?
rm -f "$ZL_TEST_STATE_DIR/hold_good_scale"
[ "$rc" = 130 ] || { cat "$TMP/force.out" >&2; fail "the interrupted --force batch exited $rc, expected 130"; }
expect_in "$TMP/force.out" "good_scale           stopped after"
expect_in "$TMP/force.out" "its earlier results are kept"
# good_scale: its old results, byte for byte, and its old row.
[ -f "$OUT/ops/good_scale/.complete" ] || fail "good_scale lost its .complete"
cmp -s "$OUT/ops/good_scale/results.json" "$TMP/good_scale.old.json" ||
  fail "good_scale's earlier results are gone or changed"
[ "$(grep '^good_scale,' "$OUT/ops_status.csv")" = "$(grep '^good_scale,' "$TMP/status.old")" ] ||
  fail "good_scale's row changed: $(grep '^good_scale,' "$OUT/ops_status.csv")"
# good_copy: rerun to the end, new complete results.
[ -f "$OUT/ops/good_copy/.complete" ] && [ -f "$OUT/ops/good_copy/results.json" ] ||
  fail "good_copy has no complete results"
cmp -s "$OUT/ops/good_copy/results.json" "$TMP/good_copy.old.json" &&
  fail "good_copy's results were not replaced by the rerun"
[ "$(csv_field "$OUT/ops_status.csv" good_copy status)" = ok ] || fail "good_copy is not ok"
ls -A "$OUT/ops" | grep -q '^\.' && fail "staging leftovers: $(ls -A "$OUT/ops")"

# SIGKILL during the rerun: nothing can be tidied up then; the next batch
# finds the old results complete (resumed, not rerun) and drops the
# leftover of the staged rerun.
cp "$OUT/ops/good_copy/results.json" "$TMP/good_copy.old.json"
touch "$ZL_TEST_STATE_DIR/hold_good_scale"
run_batch --force >"$TMP/force.out" 2>&1 &
bgpid=$!
wait_held
kill -KILL "$(batch_pid)"
wait $bgpid
rm -f "$ZL_TEST_STATE_DIR/hold_good_scale"
cmp -s "$OUT/ops/good_scale/results.json" "$TMP/good_scale.old.json" ||
  fail "good_scale's earlier results are gone after SIGKILL"
[ "$(csv_field "$OUT/ops_status.csv" good_scale status)" = ok ] || fail "good_scale's row is gone"
expect_rc 0 run_batch
expect_in "$TMP/out" "2 resumed"
cmp -s "$OUT/ops/good_scale/results.json" "$TMP/good_scale.old.json" ||
  fail "good_scale's earlier results changed on resume"
ls -A "$OUT/ops" | grep -q '^\.' && fail "staging leftovers after resume: $(ls -A "$OUT/ops")"

# Replaying from the output folder itself (by another path, or through a
# link) is refused, and nothing is touched.
ln -s "$OUT" "$TMP/link"
for src in "$OUT" "$TMP/./res/../res" "$TMP/link"; do
  expect_rc 2 run_batch --force --replay-from "$src"
  expect_in "$TMP/err" "is the output folder"
done
expect_rc 2 run_batch --force --replay "good_copy=$OUT/ops/good_copy"
expect_in "$TMP/err" "is the operator's folder in the output folder itself"
[ "$(find "$OUT/ops" -name results.json | wc -l)" = 2 ] || fail "a refused replay removed results"
cmp -s "$OUT/ops/good_scale/results.json" "$TMP/good_scale.old.json" || fail "a refused replay changed results"

# A replay source with a link (the operator's folder, or its
# results.json) is refused by name and not counted replayed.
cp -r "$OUT" "$TMP/src"
cp -r "$OUT" "$TMP/src2"
mkdir "$TMP/elsewhere" && echo '{}' >"$TMP/elsewhere/results.json" && cp "$OUT/ops/good_copy/.complete" "$TMP/elsewhere/"
rm -r "$TMP/src/ops/good_copy" && ln -s "$TMP/elsewhere" "$TMP/src/ops/good_copy"
rm "$TMP/src/ops/good_scale/results.json" && ln -s "$TMP/elsewhere/results.json" "$TMP/src/ops/good_scale/results.json"
OUT="$TMP/rep"
expect_rc 1 run_batch --replay-from "$TMP/src"
expect_in "$TMP/out" "warning: $TMP/src/ops/good_copy: a symbolic link"
expect_in "$TMP/out" "warning: $TMP/src/ops/good_scale/results.json: a symbolic link"
expect_in "$TMP/out" "0 replayed"
for op in good_copy good_scale; do
  [ "$(csv_field "$OUT/ops_status.csv" $op status)" = replay_refused ] ||
    fail "$op is $(csv_field "$OUT/ops_status.csv" $op status), not replay_refused"
  [ -e "$OUT/ops/$op/results.json" ] && fail "$op has results taken through a link"
done
# FROM/ops itself a link (to complete operator folders): every operator
# is refused, the link named.
mv "$TMP/src2/ops" "$TMP/src2-ops" && ln -s "$TMP/src2-ops" "$TMP/src2/ops"
OUT="$TMP/rep2"
expect_rc 1 run_batch --replay-from "$TMP/src2"
expect_in "$TMP/out" "warning: $TMP/src2/ops: a symbolic link"
expect_in "$TMP/out" "0 replayed"
for op in good_copy good_scale; do
  [ "$(csv_field "$OUT/ops_status.csv" $op status)" = replay_refused ] ||
    fail "$op is $(csv_field "$OUT/ops_status.csv" $op status), not replay_refused"
  [ -e "$OUT/ops/$op/results.json" ] && fail "$op has results taken through a link"
done
echo "ok: --force reruns and replays never lose or forge results"
