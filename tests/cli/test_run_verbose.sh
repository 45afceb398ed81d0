# --verbose (and ZL_VERBOSE) prints a '# phases (ms): ...' line after each
# row; without it there is none; `zlbench summary` still reads the table;
# a batch passes --verbose on to its children.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gpu/table.sh"
SH="$ZLB_SRC/tests/data/cli/shapes_golden.yaml"
R() { "$ZLBENCH" run softmax --backend host --dtypes float32,float16 --shape-file "$SH" $QUICK "$@"; }

expect_rc 0 R --out "$TMP/q"
rows=$(table_rows "$TMP/q/run.log")
[ "$rows" -ge 2 ] || fail "the plain run has $rows rows"
expect_not_in "$TMP/q/run.log" "# phases (ms):"
expect_not_in "$TMP/out" "# phases (ms):"

expect_rc 0 R --verbose --out "$TMP/v"
[ "$(table_rows "$TMP/v/run.log")" = "$rows" ] || fail "--verbose changed the row count"
# One phases line right after each row, in run.log and on the terminal.
for f in "$TMP/v/run.log" "$TMP/out"; do
  n=$(awk '/^(SUCCESS|FAILED) / { row = 1; next } row && /^# phases \(ms\): / { n++ } { row = 0 }
    END { print n + 0 }' "$f")
  [ "$n" = "$rows" ] || fail "$f: $n phases lines after $rows rows"
done

# The phases line names the implementations' first calls, and the JSON
# row has every phase, the first calls within the accuracy phase, and a
# wall time that covers the phases.
expect_in "$TMP/v/run.log" "; first calls "
expect_rc 0 R --out "$TMP/j" --json "$TMP/j.json"
python3 - "$TMP/j.json" <<'PY' || fail "the JSON rows' phases and first calls"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert rows
for r in rows:
    ph = r["phases_ms"]
    assert sorted(ph) == sorted(["describe", "allocate", "fill", "prepare", "accuracy",
                                 "timing", "release"]), ph
    assert 0 < r["first_calls_ms"] <= ph["accuracy"], (r["first_calls_ms"], ph)
    assert r["wall_ms"] >= sum(ph.values()) - 0.5, (r["wall_ms"], ph)
PY

ZL_VERBOSE=1 expect_rc 0 R --out "$TMP/e"
expect_in "$TMP/e/run.log" "# phases (ms): "
ZL_VERBOSE=0 expect_rc 0 R --out "$TMP/e0"
expect_not_in "$TMP/e0/run.log" "# phases (ms):"
ZL_VERBOSE=maybe expect_rc 2 R --out "$TMP/e2"
expect_in "$TMP/err" "invalid value 'maybe' for ZL_VERBOSE"

# The summary reads the verbose table as it reads the plain one.
expect_rc 0 "$ZLBENCH" summary "$TMP/q"
plain=$(($(wc -l <"$TMP/q/summary.csv") - 1))
expect_rc 0 "$ZLBENCH" summary "$TMP/v"
verbose=$(($(wc -l <"$TMP/v/summary.csv") - 1))
[ "$plain" = "$rows" ] || fail "summary of the plain run has $plain rows, the table $rows"
[ "$verbose" = "$rows" ] || fail "summary of the verbose run has $verbose rows, the table $rows"
expect_not_in "$TMP/v/summary.csv" "phases"

# A batch passes --verbose to each child.
if [ -n "$TESTOPS" ]; then
  expect_rc 0 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy --devices 0 \
    --verbose --out "$TMP/b" $QUICK --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
  expect_in "$TMP/b/ops/good_copy/run.log" "# phases (ms): "
else
  fail "ZLB_TEST_OPS is not set"
fi
echo "ok: --verbose phases lines"
