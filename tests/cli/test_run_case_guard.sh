# What an operator's case_init describes is validated before anything is
# sized, allocated or freed by it: a bad rank, extent, tensor count, dtype
# or an impossible size is an error=setup row naming the tensor, the field
# and the value, and the run goes on. A case larger than memory fails its
# row with the needed and available sizes instead of being OOM-killed.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
SH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R() { "$ZLBENCH" run "$@" --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 $QUICK; }

# name | text the error=setup note must contain
while IFS='|' read -r op text; do
  expect_rc 1 R "$op" --out "$TMP/$op" --json "$TMP/$op.json"
  log="$TMP/$op/run.log"
  [ "$(grep -c '^FAILED .*error=setup' "$log")" = 2 ] || { cat "$log" >&2; fail "$op: expected 2 error=setup rows"; }
  expect_in "$TMP/$op.json" "$text"
  expect_not_in "$TMP/$op.json" "enqueue reached"
done <<'CASES'
bad_ndim|case_init described input 'x' (in[0]) with ndim 9 (allowed: 0 to 8)
bad_extent|case_init described input 'x' (in[0]) with dims [0] = -20 (negative extent)
bad_inputs|case_init described the case with n_in 10 (allowed: 0 to 8)
bad_outputs|case_init described the case with n_out 0 (allowed: 1 to 8)
bad_overflow|case_init described output 'out' (out[0]) with dims [1] = 1073741824 (the tensor would exceed 2^48 bytes)
bad_dtype|case_init described output 'out' (out[0]) with dtype 1000 (not a known dtype)
bad_too_big|of host memory for the accuracy check's copies but
CASES

# The host backend: a case far larger than the machine fails its row with
# the sizes; the next case still runs and succeeds.
cat >"$TMP/big.yaml" <<'YAML'
binary_pointwise:
  shapes: [[1099511627776], [64, 64]]
YAML
expect_rc 1 "$ZLBENCH" run add --backend host --shape-file "$TMP/big.yaml" --dtypes float32 $QUICK --out "$TMP/big"
expect_in "$TMP/big/run.log" "error=setup"
grep -q '^FAILED .*error=setup .*\[1099511627776\]' "$TMP/big/run.log" || fail "the huge case is not an error=setup row"
grep -q '^SUCCESS .*\[64, 64\]' "$TMP/big/run.log" || fail "the case after the huge one did not run"
expect_in "$TMP/big/run.log" "of host memory"
expect_in "$TMP/big/run.log" "is free; skipped before allocating"
echo "ok"
