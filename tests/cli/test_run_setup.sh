# An operator's setup() runs once per process, before its first case, with
# the run's dtypes; its time is in the banner and the JSON, and a failing
# set-up is reported while the cases still run.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
SH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R() { "$ZLBENCH" run setup_probe --backend test --lib "$TESTOPS" --shape-file "$SH" $QUICK "$@"; }

ZL_TEST_SETUP_LOG="$TMP/log" expect_rc 0 R --dtypes float32,float16 --out "$TMP/a" --json "$TMP/a.json"
[ "$(grep -c '^setup ' "$TMP/log")" = 1 ] || fail "setup() ran $(grep -c '^setup ' "$TMP/log") times, expected once"
[ "$(head -1 "$TMP/log" | cut -d' ' -f1)" = setup ] || fail "setup() did not run before the first case"
# describe + run for each of 2 shapes x 2 dtypes
[ "$(grep -c '^case$' "$TMP/log")" -ge 4 ] || fail "expected the cases after setup()"
# float32 and float16 bits of the dtype mask, nothing else
mask=$(awk '/^setup /{print $2}' "$TMP/log")
[ "$mask" != 0 ] || fail "setup() got no dtypes"
expect_in "$TMP/a/run.log" "operator set-up: "
expect_in "$TMP/a.json" '"setup_ms": '
expect_not_in "$TMP/a.json" '"setup_ms": null'
expect_in "$TMP/a.json" '"setup_error": null'

# Only float16: a different mask than with two dtypes.
: >"$TMP/log1"
ZL_TEST_SETUP_LOG="$TMP/log1" expect_rc 0 R --dtypes float16 --out "$TMP/b"
mask1=$(awk '/^setup /{print $2}' "$TMP/log1")
[ -n "$mask1" ] && [ "$mask1" != "$mask" ] || fail "setup() dtypes do not follow --dtypes ($mask1 vs $mask)"

# A failing set-up is reported; the cases still run and pass.
ZL_TEST_SETUP_FAIL=1 expect_rc 0 R --dtypes float32 --out "$TMP/c" --json "$TMP/c.json"
expect_in "$TMP/c/run.log" "operator set-up failed after"
expect_in "$TMP/c/run.log" "injected set-up failure"
expect_in "$TMP/c.json" '"setup_error": "injected set-up failure'
[ "$(grep -c '^SUCCESS' "$TMP/c/run.log")" = 2 ] || fail "cases did not run after a failed set-up"

# Operators without setup() say nothing about it.
expect_rc 0 "$ZLBENCH" run good_copy --backend test --lib "$TESTOPS" --shape-file "$SH" $QUICK \
  --dtypes float32 --out "$TMP/d" --json "$TMP/d.json"
expect_not_in "$TMP/d/run.log" "set-up"
expect_in "$TMP/d.json" '"setup_ms": null'
echo "ok"
