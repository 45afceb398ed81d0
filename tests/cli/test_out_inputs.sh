#!/usr/bin/env bash
# Output files and folders that would destroy the results a command reads
# or another command wrote: report, compare and summary refuse an --out
# that is one of their inputs or a results file inside one (results.json,
# *.log, ops_status.csv, run_identity.json, ...); run and ab refuse an
# --out folder that holds a batch's results or results of the other kind.
# Nothing is written in each case, and the results read the same after.
. "$(dirname "$0")/lib.sh"
Z=$ZLBENCH
H="--backend host --dtypes float32 $QUICK"
cd "$TMP" || exit 1
expect_rc 0 "$Z" run relu $H --out r1
expect_rc 0 "$Z" run relu $H --out r2
expect_rc 0 "$Z" batch --ops relu $H --out bt --progress never
# ab_ok ARGS...: an ab run that measured (exit 0, or 1 for a verdict that
# noise on a shared CPU can give a self-compare): the folder is what counts.
ab_ok() {
  "$Z" ab "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  [ $rc -le 1 ] && [ -s "$TMP/ab1/results.json" ] || fail "ab $*: exit $rc: $(cat "$TMP/err")"
}
ab_ok relu --self $H --out ab1
sums() { find r1 r2 bt ab1 -type f ! -name report.html ! -name batch.lock -exec md5sum {} + | sort; }
sums >"$TMP/before"

# refused OUT TEXT CMD...: exit 2, TEXT in the message.
refused() {
  local text=$1
  shift
  expect_rc 2 "$@"
  expect_in "$TMP/err" "$text"
}
refused "is a file of the results in 'r1' (a results.json" "$Z" report r1 --out r1/results.json
refused "is a file of the results in 'r1' (a run_identity.json" "$Z" report r1 --out ./r1/../r1/run_identity.json
refused "is a file of the results in 'r2' (a results.json" "$Z" report r1 --compare r2 --out r2/results.json
refused "is a file of the results in 'bt' (a ops_status.csv" "$Z" report bt --out bt/ops_status.csv
refused "is a file of the results in 'bt' (a summary.csv" "$Z" report bt --out bt/summary.csv
refused "is a file of the results in 'r2' (a results.json" "$Z" compare r1 r2 --out r2/results.json
refused "is the input 'r1/results.json' itself" "$Z" compare r1/results.json r2/results.json --out r1/results.json
# An input file's folder: what is read beside it (its identity).
refused "(a run_identity.json" "$Z" compare r1/results.json r2 --out r1/run_identity.json
refused "is a file of the results in 'r2' (a run.log" "$Z" summary r2 --out r2/run.log
refused "is a file of the results in 'bt' (a results.json" "$Z" summary bt --out bt/ops/relu/results.json
# Through a link to a results file of an input.
ln -s r1/results.json lnk
refused "is a file of the results in 'r1'" "$Z" compare r1 r2 --out lnk
refused "holds a batch's results ('ops_status.csv')" "$Z" run relu $H --out bt
refused "holds results of another kind (schema 'zlbench.ab/1', not 'zlbench.results/1')" \
  "$Z" run relu $H --out ab1
refused "holds results of another kind (schema 'zlbench.results/1', not 'zlbench.ab/1')" \
  "$Z" ab relu --self $H --out r1
refused "holds a batch's results" "$Z" ab relu --self $H --out bt
# The kind is read from the file's start: a results file of any size.
mkdir -p big && { printf '{\n  "schema": "zlbench.ab/1",\n  "pad": "'
  head -c $((17 << 20)) /dev/zero | tr '\0' a; printf '"\n}\n'; } >big/results.json
sum0=$(md5sum <big/results.json)
refused "holds results of another kind (schema 'zlbench.ab/1'" "$Z" run relu $H --out big
[ "$(md5sum <big/results.json)" = "$sum0" ] || fail "a refused run touched the large results file"
rm -rf big
sums >"$TMP/after"
diff "$TMP/before" "$TMP/after" >&2 || fail "a refused command changed results"

# Outputs of their own beside the results, and reruns of the same kind,
# stay allowed.
expect_rc 0 "$Z" report r1 --out r1/mine.html
expect_rc 0 "$Z" summary r2 --out r2/summary.csv
"$Z" compare r1 r2 --out r2/cmp.txt >"$TMP/out" 2>"$TMP/err"
[ $? -le 1 ] && [ -s r2/cmp.txt ] || fail "compare --out beside the results: $(cat "$TMP/err")"
expect_rc 0 "$Z" run relu $H --out r1
ab_ok relu --self $H --out ab1
echo "ok: outputs never overwrite the results they read or another kind's"
