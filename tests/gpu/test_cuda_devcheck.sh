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

# Operators with their own compare() (sort, topk, dropout, randperm,
# nonzero) check on the device (compare_device): correct outputs pass
# there, and a candidate output corrupted at a known element
# (ZL_TEST_CORRUPT=OUTPUT:ELEMENT[:HEXMASK]) fails with the same notes as
# compare() on host copies (ZL_HOST_CHECK=1). The verbose log says where
# each row was checked, so a silent fall-back to the host fails the test.
CS="$TMP/custom.yaml"
cat >"$CS" <<'YAML'
sort:
  shapes: [[64, 1000], [512, 4096]]
random:
  shapes: [[3000], [1024, 4096]]
scan:
  shapes: [[3000], [256, 4096]]
YAML
C() { "$ZLBENCH" run "$@" --backend cuda --shape-file "$CS" --warmup-ms 1 --rep-ms 2 --verbose; }
for spec in "sort float32 0:5" "sort float32 1:5" "topk float32 1:3" "topk bfloat16 0:2" \
            "dropout float32 0:7:400000" "dropout float16 0:9:200" "randperm int64 0:10" \
            "randperm int64 0:10:4000000000000000" "nonzero float32 0:4" "nonzero bool 1:0"; do
  set -- $spec
  op=$1 dt=$2 bad=$3 tag=$1-$2-$(echo "$3" | tr ':' '_')
  expect_rc 0 C "$op" --dtypes "$dt" --out "$TMP/$tag-ok"
  [ "$(grep -c '; check on device$' "$TMP/$tag-ok/run.log")" = 2 ] ||
    fail "$op $dt: expected both rows checked on the device"
  ZL_TEST_CORRUPT=$bad expect_rc 1 C "$op" --dtypes "$dt" --out "$TMP/$tag-dev"
  ZL_TEST_CORRUPT=$bad ZL_HOST_CHECK=1 expect_rc 1 C "$op" --dtypes "$dt" --out "$TMP/$tag-host"
  [ "$(grep -c '; check on device$' "$TMP/$tag-dev/run.log")" = 2 ] ||
    fail "$op $dt ($bad): expected both rows checked on the device"
  [ "$(grep -c '; check on host$' "$TMP/$tag-host/run.log")" = 2 ] ||
    fail "$op $dt ($bad): expected both rows checked on the host"
  [ "$(grep -c 'error=mismatch' "$TMP/$tag-dev/run.log")" = 2 ] ||
    fail "$op $dt ($bad): expected 2 mismatch rows"
  grep 'note:' "$TMP/$tag-dev/run.log" >"$TMP/dev.notes"
  grep 'note:' "$TMP/$tag-host/run.log" >"$TMP/host.notes"
  cmp -s "$TMP/dev.notes" "$TMP/host.notes" ||
    { diff "$TMP/host.notes" "$TMP/dev.notes" >&2; fail "$op $dt ($bad): device and host notes differ"; }
  echo "$op $dt $bad: $(head -1 "$TMP/dev.notes")"
  keep "$TMP/$tag-dev" "$TMP/$tag-host"
done
echo "ok"
