# zlbench history on the test backend: add is idempotent and transactional
# (a crash mid-add leaves the database as it was), show prints the trend,
# check finds the operator made 10 % slower against the last comparable
# runs with compare's exit code.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
if "$ZLBENCH" history list --db "$TMP/probe.db" 2>&1 | grep -q "built without SQLite"; then
  echo "SKIP: this zlbench was built without SQLite (install libsqlite3-dev)"
  exit 77
fi
printf 'test:\n  shapes: [[256], [4096]]\n' >"$TMP/shapes.yaml"
batch() {
  local out=$1
  shift
  "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops steady_a,steady_b,steady_c \
    --devices 0 --out "$out" --timer direct --warmup-ms 5 --rep-ms 50 \
    --shape-file "$TMP/shapes.yaml" "$@" >"$TMP/batch.out" 2>&1 ||
    { cat "$TMP/batch.out" >&2; fail "batch $out"; }
}
DB="$TMP/data/h.sqlite"
batch "$TMP/A1"
batch "$TMP/A2"
ZL_TEST_SLOWDOWN=steady_b:1.10 batch "$TMP/B"

expect_rc 0 "$ZLBENCH" history add "$TMP/A1" --db "$DB"
expect_in "$TMP/out" "added 3 runs (6 rows)"
expect_rc 0 "$ZLBENCH" history add "$TMP/A1" --db "$DB"
expect_in "$TMP/out" "added 0 runs (0 rows)"
expect_rc 0 "$ZLBENCH" history add "$TMP/A2" --db "$DB"
expect_rc 0 "$ZLBENCH" history list --db "$DB"
expect_in "$TMP/out" "history: 6 runs"
grep -q 'library_build_id": "fnv1a64:' "$TMP/A1/ops/steady_a/run_identity.json" || fail "no library build id"
cp "$TMP/out" "$TMP/list.before"

# A crash in the middle of add: the database is as it was.
ZL_TEST_HISTORY_ABORT_AFTER=3 "$ZLBENCH" history add "$TMP/B" --db "$DB" >/dev/null 2>&1
rc=$?
[ "$rc" -ge 128 ] || fail "the injected crash did not happen (exit $rc)"
expect_rc 0 "$ZLBENCH" history list --db "$DB"
cmp -s "$TMP/out" "$TMP/list.before" || { diff "$TMP/list.before" "$TMP/out" >&2; fail "a crashed add changed the database"; }

# check: steady_b slower against the last 2 comparable runs, exit 1.
expect_rc 1 "$ZLBENCH" history check "$TMP/B" --db "$DB" --last 2
[ "$(grep -c '^slower  steady_b ' "$TMP/out")" = 2 ] || fail "steady_b not slower twice"
grep -E '^(slower|faster) ' "$TMP/out" | grep -v ' steady_b ' && fail "another operator came out slower or faster"
expect_in "$TMP/out" "6 compared: 2 slower"
# A2 against the history (itself excluded): nothing slower.
expect_rc 0 "$ZLBENCH" history check "$TMP/A2" --db "$DB"
expect_in "$TMP/out" "6 compared: 0 slower"
# A run that started in the same second as one in the database is still
# compared with it; only the run itself is left out (A3: A2's results with
# A1's start times).
DB2="$TMP/data/same-second.sqlite"
expect_rc 0 "$ZLBENCH" history add "$TMP/A1" --db "$DB2"
cp -r "$TMP/A2" "$TMP/A3"
for op in steady_a steady_b steady_c; do
  st=$(sed -n 's/^  "started": "\([^"]*\)".*/\1/p' "$TMP/A1/ops/$op/run_identity.json")
  [ -n "$st" ] || fail "no start time in A1's $op identity"
  sed -i "s/^  \"started\": \"[^\"]*\"/  \"started\": \"$st\"/" "$TMP/A3/ops/$op/run_identity.json"
  expect_in "$TMP/A3/ops/$op/run_identity.json" "\"started\": \"$st\""
done
expect_rc 0 "$ZLBENCH" history check "$TMP/A3" --db "$DB2"
expect_in "$TMP/out" "6 compared: 0 slower"
# ...and the run itself, once added, is not compared with itself.
expect_rc 0 "$ZLBENCH" history check "$TMP/A1" --db "$DB2"
expect_in "$TMP/out" "0 compared"
# Another caliber has nothing to compare with: every row only in B.
batch "$TMP/C" --autotune on
expect_rc 0 "$ZLBENCH" history check "$TMP/C" --db "$DB" --format csv
[ "$(grep -c ',b,only in B,' "$TMP/out")" = 6 ] || fail "another caliber was compared"
expect_rc 0 "$ZLBENCH" history check "$TMP/C" --db "$DB" --format json
python3 - "$TMP/out" <<'PY2' || fail "history check --format json is not compare's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "zlbench.compare/1", d.get("schema")
assert len(d["rows"]) == 6 and all(r["verdict"] is None for r in d["rows"]), d["rows"]
PY2
expect_rc 2 "$ZLBENCH" history check "$TMP/C" --db "$DB" --format yaml
expect_in "$TMP/err" "invalid value 'yaml' for --format: expected text, md, csv or json"

# add after the crash works; show prints the trend.
expect_rc 0 "$ZLBENCH" history add "$TMP/B" --db "$DB"
expect_in "$TMP/out" "added 3 runs (6 rows)"
expect_rc 0 "$ZLBENCH" history show steady_b --db "$DB"
expect_in "$TMP/out" "history: 6 rows of steady_b"
expect_rc 0 "$ZLBENCH" history show steady_b --db "$DB" --dtype float32 --shape '[256]'
expect_in "$TMP/out" "history: 3 rows of steady_b"
# The change column is the last run against the one before it, to the
# printed digits; the injected 10 % step shows as a clear rise (a loaded
# machine stretches a spin of either run by a few per cent, so the band
# is wide, but a change of the wrong sign, of nothing or against the
# wrong row fails).
awk '/^float32 +\[256\] / { n++; prev = ms; ms = $(NF - 2); chg = $NF }
  END {
    if (n != 3) { print "show: " n " rows of [256], not 3"; exit 1 }
    want = 100 * (ms / prev - 1); got = chg; sub(/%$/, "", got)
    # the printed milliseconds are rounded: a tenth of a point either way
    if (chg !~ /^[+-][0-9]+\.[0-9]%$/ || got - want > 0.15 || want - got > 0.15) {
      printf "show: change %s, the rows give %+.2f%%\n", chg, want; exit 1 }
    if (want < 4 || want > 25) {
      print "show: change " chg " is not the 10 % step"; exit 1 }
  }' "$TMP/out" >&2 || fail "show: the 10 % step is not in the trend"
expect_rc 2 "$ZLBENCH" history show nosuchop --db "$DB"
expect_rc 2 "$ZLBENCH" history show steady_b --db "$TMP/none.sqlite"
expect_rc 2 "$ZLBENCH" history frobnicate --db "$DB"
echo "not a database" >"$TMP/junk.sqlite"
expect_rc 6 "$ZLBENCH" history add "$TMP/A1" --db "$TMP/junk.sqlite"
expect_rc 0 "$ZLBENCH" history --help
expect_in "$TMP/out" "history check DIR"
echo "ok: history"
