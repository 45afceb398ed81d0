# A reader of stdout that goes away (| head, a closed pager) does not kill
# a batch or a run by SIGPIPE (exit 141): printing stops, the work goes on,
# every operator finishes and run_identity.json is finalised.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
# closed CMD...: CMD with a stdout whose read end is already closed, so
# that every write to it fails (EPIPE) whatever the timing; its exit code.
closed() {
  python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
sys.exit(subprocess.call(sys.argv[1:], stdout=w, restore_signals=True))' "$@"
}
check_batch() { # DIR
  [ "$(awk -F, 'NR > 1 && $2 == "ok"' "$1/ops_status.csv" | wc -l)" = 4 ] ||
    fail "not every operator finished: $(cat "$1/ops_status.csv")"
  for op in relu add sum exp; do
    [ -f "$1/ops/$op/.complete" ] || fail "$op is not complete in $1"
  done
  grep -q '"finished": "' "$1/run_identity.json" || fail "run_identity.json of $1 is not finalised"
}
"$ZLBENCH" batch --backend host --ops relu,add,sum,exp --dtypes float32 --out "$TMP/b1" $QUICK \
  --progress never 2>"$TMP/err1" | head -1 >"$TMP/head1"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "batch | head -1 exited $rc: $(cat "$TMP/err1")"
expect_in "$TMP/head1" "zlbench batch: backend host"
check_batch "$TMP/b1"
closed "$ZLBENCH" batch --backend host --ops relu,add,sum,exp --dtypes float32 --out "$TMP/b2" \
  $QUICK --progress never 2>"$TMP/err2"
rc=$?
[ "$rc" = 0 ] || fail "batch into a closed pipe exited $rc: $(cat "$TMP/err2")"
check_batch "$TMP/b2"
closed "$ZLBENCH" run relu --backend host --dtypes float32 $QUICK --out "$TMP/r" 2>"$TMP/err3"
rc=$?
[ "$rc" != 141 ] && [ "$rc" -lt 128 ] || fail "run into a closed pipe died by a signal ($rc)"
[ -f "$TMP/r/results.json" ] || fail "run into a closed pipe wrote no results.json: $(cat "$TMP/err3")"
echo "ok: a closed stdout stops the printing, not the work"
