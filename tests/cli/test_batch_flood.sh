# A child that floods its stderr fills no disk: the batch keeps its first
# and last 64 KiB with a line saying how much was cut, and the failure's
# signature still comes from the first error line.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
OUT="$TMP/res"
expect_rc 1 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops flood_stderr,good_copy \
  --dtypes float32 --devices 0 --timeout 60 --retries 0 --out "$OUT" $QUICK \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
LOG="$OUT/ops/flood_stderr/attempts/1-all/stderr.log"
[ -f "$LOG" ] || fail "no stderr.log for flood_stderr"
size=$(stat -c %s "$LOG")
[ "$size" -le $((2 * 65536 + 200)) ] || fail "stderr.log holds $size bytes, expected at most 128 KiB and a line"
[ "$size" -ge $((2 * 65536)) ] || fail "stderr.log holds only $size bytes: head or tail lost"
expect_in "$LOG" "error: flood_stderr: about to write 20 MB of noise"
expect_in "$LOG" "bytes of output cut here]"
tail -1 "$LOG" | grep -qF "flood_stderr: last line" || fail "the tail of the output was not kept"
# 20 MB + the two lines, less what was kept.
cut=$(sed -n 's/^\[zlbench: \([0-9]*\) bytes of output cut here\]$/\1/p' "$LOG")
first="error: flood_stderr: about to write 20 MB of noise"
last="flood_stderr: last line"
[ "$cut" = $((20 * 256 * 4096 + ${#first} + 1 + ${#last} + 1 - 2 * 65536)) ] || fail "the cut line says $cut bytes"
expect_in "$OUT/ops_status.csv" "exit 9: error: flood_stderr: about to write 20 MB of noise"
[ "$(csv_field "$OUT/ops_status.csv" good_copy status)" = ok ] || fail "good_copy did not run after the flood"
echo "ok: child output is capped"
