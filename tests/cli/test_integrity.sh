# zlbench run --integrity: candidates that game the benchmark are caught
# (tests/ops/cheat_ops.c), honest ones pass, and without the option
# nothing changes. The test backend runs operator work when a call is
# enqueued, so the direct and queue timers (whose samples run calls) are
# used here; its emulated graph replays run no operator work (they only
# wait as long as the capture took), so a graph sample cannot be checked
# on it: tests/gpu/test_cuda_integrity.sh covers the graph timer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gpu/table.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
SH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R() { "$ZLBENCH" run "$@" --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 $QUICK; }

# caught OP TIMER TEXT: with --integrity every row of OP fails, marked
# error=integrity, with TEXT in its note; exit 1 (rows failed).
caught() {
  op=$1 timer=$2 text=$3 out="$TMP/$1-$2"
  expect_rc 1 R "$op" --timer "$timer" --integrity --out "$out" --json "$out.json"
  [ "$(table_rows "$out/run.log")" = 2 ] || fail "$op ($timer): $(table_rows "$out/run.log") rows, expected 2"
  all_rows_are "$out/run.log" Status FAILED || fail "$op ($timer): a row was not refused"
  all_rows_are "$out/run.log" Marker error=integrity || fail "$op ($timer): rows not marked error=integrity"
  expect_in "$out/run.log" "$text"
}

# (a) a result cached by input address, (b) work skipped after the first
# call: both pass the accuracy check of the first call and fail on the
# timed sample with fresh inputs at the same addresses.
for t in direct queue; do
  caught cheat_cache "$t" "integrity: the outputs of timed iteration"
  expect_in "$TMP/cheat_cache-$t/run.log" "do not match the baseline on fresh inputs (a result cached across calls, or work skipped after the first call)"
  caught cheat_skip "$t" "integrity: the outputs of timed iteration"
done
# (c) work on a stream of its own: the tracer sees it.
caught cheat_stream direct "integrity: the candidate ran 1 of its 1 kernel on another stream"
expect_in "$TMP/cheat_stream-direct/run.log" "its time would not be measured"
# (d) a rate above the ceiling (ZL_TEST_PEAKS stands for the measured
# ceilings; the test device reports no L2, so nothing can explain it).
ZL_TEST_PEAKS=1000 caught cheat_rate direct "integrity: the candidate's rate is"
expect_in "$TMP/cheat_rate-direct/run.log" "of the measured memory ceiling ("
expect_in "$TMP/cheat_rate-direct/run.log" "GB/s against the measured memory bandwidth of 1000.0 GB/s): more than the device can do"

# The checked iteration comes from the seed: the same seed, the same one.
expect_rc 1 R cheat_skip --timer queue --integrity --out "$TMP/again"
[ "$(grep -o 'timed iteration [0-9]*' "$TMP/again/run.log")" = \
  "$(grep -o 'timed iteration [0-9]*' "$TMP/cheat_skip-queue/run.log")" ] ||
  fail "the same seed checked another iteration"
grep -q 'timed iteration 1 ' "$TMP/again/run.log" && fail "the first timed iteration was the one checked"

# Honest candidates pass, and each row says what was checked.
for t in direct queue; do
  for op in honest_copy good_copy; do
    expect_rc 0 R "$op" --timer "$t" --integrity --out "$TMP/h-$op-$t" --json "$TMP/h-$op-$t.json"
    all_rows_are "$TMP/h-$op-$t/run.log" Status SUCCESS || fail "honest $op ($t) refused"
  done
done
# Each timer checks one of its own timed samples (not a call after them).
python3 - "$TMP/h-honest_copy-queue/run_identity.json" "$TMP"/h-honest_copy-*.json <<'PY' || fail "rows or identity do not say what --integrity checked"
import json, sys
for path in sys.argv[2:]:
    rows = [r for t in json.load(open(path))["tables"] for r in t["rows"]]
    assert len(rows) == 2, rows
    for r in rows:
        s = r["integrity"]
        assert "side streams: none (1 kernel traced, all on the given stream)" in s, s
        assert "timed sample: iteration" in s and "left out of the statistics" in s, (path, s)
ident = json.load(open(sys.argv[1]))
assert ident["caliber"]["integrity"] is True, ident["caliber"]
PY
expect_in "$TMP/h-honest_copy-queue/run.log" "integrity=on"
# A row whose working set fits in the cache its timer does not flush is
# judged by the cache's ceiling (the third ZL_TEST_PEAKS field), and says
# so in its Ceiling column: far below a fast cache, it passes.
expect_rc 0 env ZL_TEST_PEAKS=1000:0:1e12 ZL_TEST_L2_BYTES=4000000000000000 \
  "$ZLBENCH" run cheat_rate --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 \
  $QUICK --timer direct --integrity --out "$TMP/warm" --json "$TMP/warm.json"
all_rows_are "$TMP/warm/run.log" Status SUCCESS || fail "a row within the cache's ceiling was refused"
all_rows_are "$TMP/warm/run.log" Ceiling cache || fail "a row in a warm cache not judged by the cache"
python3 - "$TMP/warm.json" "$TMP/warm/run_identity.json" <<'PY' || fail "results.json or the identity lack the cache ceiling"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert rows and all(r["ceiling"] == "cache" and 0 < r["pct_peak"] <= 100 for r in rows), rows
peaks = json.load(open(sys.argv[2]))["peaks"]
assert peaks["cache_bandwidth_gbps"] == 1e12 and peaks["bandwidth_gbps"] == 1000, peaks
PY
# The report's roofline names both ceilings and marks each point's.
expect_rc 0 "$ZLBENCH" report "$TMP/warm" --out "$TMP/warm.html"
expect_in "$TMP/warm.html" 'memory bandwidth 1000 GB/s (0 rows)'
expect_in "$TMP/warm.html" 'cache bandwidth 1000000000000 GB/s (2 rows)'
expect_in "$TMP/warm.html" 'data-ceiling="cache"'
expect_in "$TMP/warm.html" 'of peak (cache ceiling)'
# Each row names its baseline's implementation.
[ "$(grep -o '<td class="impl">ref</td>' "$TMP/warm.html" | wc -l)" = 2 ] ||
  fail "the report's rows do not name their baseline"
# Above the cache's ceiling: that ceiling is the rate of copies within the
# cache, which a read-heavy kernel or a nearer cache can beat honestly, so
# the row stands (with --integrity too) and its %Peak is N/A with a note.
expect_rc 0 env ZL_TEST_PEAKS=1000:0:2000 ZL_TEST_L2_BYTES=4000000000000000 \
  "$ZLBENCH" run cheat_rate --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 \
  $QUICK --timer direct --integrity --out "$TMP/warm-over"
all_rows_are "$TMP/warm-over/run.log" Status SUCCESS || fail "a row over the cache ceiling was refused"
all_rows_are "$TMP/warm-over/run.log" %Peak N/A || fail "a %Peak above the cache ceiling was shown"
expect_in "$TMP/warm-over/run.log" "of the cache ceiling ("
expect_in "$TMP/warm-over/run.log" "against the measured cache bandwidth of 2000.0 GB/s"
expect_in "$TMP/warm-over/run.log" "not refused"
expect_rc 0 env ZL_TEST_PEAKS=1000:0:2000 ZL_TEST_L2_BYTES=4000000000000000 \
  "$ZLBENCH" run cheat_rate --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 \
  $QUICK --timer direct --out "$TMP/warm-noint"
all_rows_are "$TMP/warm-noint/run.log" Status SUCCESS || fail "a row over its ceiling failed without --integrity"
all_rows_are "$TMP/warm-noint/run.log" %Peak N/A || fail "a %Peak above its ceiling was shown"
expect_in "$TMP/warm-noint/run.log" "%Peak N/A: the candidate's rate is"
# Above memory's ceiling without --integrity: the row stands, %Peak N/A.
expect_rc 0 env ZL_TEST_PEAKS=1000 "$ZLBENCH" run cheat_rate --backend test --lib "$TESTOPS" \
  --shape-file "$SH" --dtypes float32 $QUICK --timer direct --out "$TMP/mem-noint"
all_rows_are "$TMP/mem-noint/run.log" %Peak N/A || fail "a %Peak above memory's ceiling was shown"
expect_in "$TMP/mem-noint/run.log" "of the memory ceiling ("
# Larger than the cache: memory's ceiling, whatever the timer.
expect_rc 1 env ZL_TEST_PEAKS=1000:0:1e12 ZL_TEST_L2_BYTES=16 \
  "$ZLBENCH" run cheat_rate --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 \
  $QUICK --timer direct --integrity --out "$TMP/big"
expect_in "$TMP/big/run.log" "of the measured memory ceiling ("
# The environment turns it on as the option does.
expect_rc 1 env ZL_INTEGRITY=1 "$ZLBENCH" run cheat_skip --backend test --lib "$TESTOPS" \
  --shape-file "$SH" --dtypes float32 $QUICK --timer queue --out "$TMP/env"
expect_in "$TMP/env/run.log" "integrity: the outputs of timed iteration"

# A timer that takes fewer samples than the one chosen (one, here) has a
# call after them checked: the cheat is still caught, and says so.
RL() { "$ZLBENCH" run "$@" --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 \
  --warmup-ms 1 --rep-ms 0.000001 --timer direct --integrity; }
expect_rc 1 RL cheat_skip --out "$TMP/late"
expect_in "$TMP/late/run.log" "integrity: the outputs of a call after the timed samples do not match"
expect_rc 0 RL honest_copy --out "$TMP/late2" --json "$TMP/late2.json"
expect_in "$TMP/late2.json" "timed sample: a call after the 1 timed samples checked on fresh inputs"

# Where the side-stream check cannot be made, rows and identity say so: a
# tracer that lost the empty kernel naming the stream, a backend without
# a tracer (host).
ZL_TEST_FAULT=trace:drop expect_rc 0 R cheat_stream --timer queue --integrity --out "$TMP/drop" \
  --json "$TMP/drop.json"
expect_in "$TMP/drop.json" "side streams: not checked (the tracer lost the empty kernel that names the given stream)"
# ZL_TEST_PEAKS is the test backends' alone: a real backend's ceilings are
# measured even when it is set.
expect_rc 0 env ZL_TEST_PEAKS=1000 "$ZLBENCH" run add --backend host --dtypes float32 $QUICK \
  --integrity --out "$TMP/host" --json "$TMP/host.json"
expect_not_in "$TMP/host/run_identity.json" "ZL_TEST_PEAKS"
# The host's L3, where it has one larger than its L2, is its last cache.
l3=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 0)
l2=$(getconf LEVEL2_CACHE_SIZE 2>/dev/null || echo 0)
if [ "${l3:-0}" -gt "${l2:-0}" ] 2>/dev/null; then
  expect_in "$TMP/host/run_identity.json" "\"llc_bytes\": $l3"
fi
expect_in "$TMP/host.json" "side streams: not checked (backend 'host' has no kernel tracer)"
expect_in "$TMP/host/run_identity.json" '"integrity_side_streams": "not possible'

# Without --integrity nothing changes: the cheats pass, nothing is noted,
# the identity says the gate was off and rows carry no integrity field.
for op in cheat_cache cheat_skip cheat_stream; do
  expect_rc 0 R "$op" --timer queue --out "$TMP/off-$op" --json "$TMP/off-$op.json"
  all_rows_are "$TMP/off-$op/run.log" Status SUCCESS || fail "$op failed without --integrity"
  expect_not_in "$TMP/off-$op/run.log" "integrity"
done
expect_rc 0 env ZL_TEST_PEAKS=1000 "$ZLBENCH" run cheat_rate --backend test --lib "$TESTOPS" \
  --shape-file "$SH" --dtypes float32 $QUICK --timer direct --out "$TMP/off-rate"
all_rows_are "$TMP/off-rate/run.log" Status SUCCESS || fail "cheat_rate refused without --integrity"
python3 - "$TMP/off-cheat_skip.json" "$TMP/off-cheat_skip/run_identity.json" <<'PY' || fail "the output without --integrity carries integrity fields"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert rows and all("integrity" not in r for r in rows), rows
assert json.load(open(sys.argv[2]))["caliber"]["integrity"] is False
PY

# A batch passes the option to its children.
expect_rc 1 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops cheat_skip --shape-file "$SH" \
  --dtypes float32 $QUICK --timer queue --integrity --out "$TMP/b"
grep -rqF '"integrity": true' "$TMP/b/ops/cheat_skip" || fail "the batch's child ran without --integrity"
exit 0
