# The accuracy check on the device (the CUDA backend's kernels) gives the
# same verdicts and messages as the check on the host (ZL_HOST_CHECK=1):
# a candidate wrong at every 1000th element of the last two thirds and NaN
# at the end is caught with the same count and first element; correct
# operators pass both ways, the statistical check of a random operator too.
. "$(dirname "$0")/lib.sh"
SH="$TMP/shapes.yaml"
cat >"$SH" <<'YAML'
unary_pointwise:
  shapes: [[3000], [4096, 4096], [8192, 12289]]
YAML
R() { "$ZLBENCH" run "$@" --backend cuda --shape-file "$SH" --warmup-ms 1 --rep-ms 2 --dtypes float32; }

expect_rc 1 R off_by_one --lib "$ZLB_GPUTEST_OPS" --out "$TMP/dev"
ZL_HOST_CHECK=1 expect_rc 1 R off_by_one --lib "$ZLB_GPUTEST_OPS" --out "$TMP/host"
[ "$(grep -c 'error=mismatch' "$TMP/dev/run.log")" = 3 ] || fail "device check: expected 3 mismatch rows"
grep 'note:' "$TMP/dev/run.log" >"$TMP/dev.notes"
grep 'note:' "$TMP/host/run.log" >"$TMP/host.notes"
cmp -s "$TMP/dev.notes" "$TMP/host.notes" || { diff "$TMP/host.notes" "$TMP/dev.notes" >&2; fail "device and host messages differ"; }
# n = 3000: wrong at 1000 and 2000, NaN at 2999.
expect_in "$TMP/dev/run.log" "3 of 3000 elements differ beyond"
expect_in "$TMP/dev/run.log" "first at element 1000:"
keep "$TMP/dev" "$TMP/host"

for op in add randn; do
  expect_rc 0 "$ZLBENCH" run "$op" --backend cuda --shape-file "$GPU_SHAPES" --warmup-ms 1 --rep-ms 2 --out "$TMP/$op-dev"
  ZL_HOST_CHECK=1 expect_rc 0 "$ZLBENCH" run "$op" --backend cuda --shape-file "$GPU_SHAPES" --warmup-ms 1 --rep-ms 2 --out "$TMP/$op-host"
  all_rows_are "$TMP/$op-dev/run.log" Status SUCCESS || fail "$op: device-checked rows not all SUCCESS"
done
echo "ok"
