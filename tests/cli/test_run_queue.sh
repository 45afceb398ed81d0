# The queue timer through zlbench run and plan: the test backend holds its
# streams (tests/ops/test_backend.c), the host backend cannot (each shape
# falls back, marked), "testq" has holds but no graphs (auto picks the
# queue timer), an emulated launch queue too shallow for a batch is
# escaped by the watchdog, and the options are checked.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gpu/table.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
SH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
R() { "$ZLBENCH" run "$@" --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 $QUICK; }

# Asked for on a backend that holds: every row is queue-timed, unmarked,
# and the JSON says how many calls a batch held and how many batches ran.
expect_rc 0 R good_copy --backend test --timer queue --out "$TMP/q" --json "$TMP/q.json"
expect_in "$TMP/q/run.log" "mode=queue"
expect_in "$TMP/q/run.log" "timer=queue"
[ "$(table_rows "$TMP/q/run.log")" = 2 ] || fail "good_copy: $(table_rows "$TMP/q/run.log") rows, expected 2"
all_rows_are "$TMP/q/run.log" Timer queue || fail "rows are not queue-timed"
all_rows_are "$TMP/q/run.log" Marker - || fail "queue-timed rows carry a marker"
python3 - "$TMP/q.json" <<'PY' || fail "the JSON rows lack the queue timer's K and batches"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert len(rows) == 2, rows
for r in rows:
    for side in ("baseline", "candidate"):
        m = r[side]
        assert m["timer"] == "queue", m["timer"]
        assert 1 <= m["queue_launches"] <= 256, m["queue_launches"]
        assert m["batches"] >= 10 and m["batches"] == m["sample_count"], (m["batches"], m["sample_count"])
        assert m["invalid_batches"] == 0, m["invalid_batches"]
PY
expect_in "$TMP/q/run_identity.json" '"timer": "queue"'
expect_in "$TMP/q/run_identity.json" '"queue_max_launches": 256'
expect_in "$TMP/q/run_identity.json" '"queue_timeout_ms": 200'

# The depth cap is the option's: no batch holds more calls than it allows.
expect_rc 0 R good_copy --backend test --timer queue --queue-max-launches 7 --out "$TMP/q7" \
  --json "$TMP/q7.json"
python3 - "$TMP/q7.json" <<'PY' || fail "--queue-max-launches 7 is not the cap"
import json, sys
ks = [r[s]["queue_launches"] for t in json.load(open(sys.argv[1]))["tables"]
      for r in t["rows"] for s in ("baseline", "candidate")]
assert ks and max(ks) <= 7 and 7 in ks, ks
PY
expect_in "$TMP/q7/run_identity.json" '"queue_max_launches": 7'

# How long a batch (queue) or a replay (graph) is meant to last sets K:
# a tiny target gives one call each; a long one fills the depth cap.
expect_rc 0 R good_copy --backend test --timer queue --queue-batch-ms 0.0001 --out "$TMP/qb1" \
  --json "$TMP/qb1.json"
expect_rc 0 R good_copy --backend test --timer queue --queue-batch-ms 1000 --queue-max-launches 9 \
  --out "$TMP/qb2" --json "$TMP/qb2.json"
expect_rc 0 R good_copy --backend test --timer graph --graph-replay-ms 0.0001 --out "$TMP/gr1" \
  --json "$TMP/gr1.json"
python3 - "$TMP/qb1.json" "$TMP/qb2.json" "$TMP/gr1.json" <<'PY' || fail "K does not follow --queue-batch-ms / --graph-replay-ms"
import json, sys
def ks(path, key):
    return [r[s][key] for t in json.load(open(path))["tables"] for r in t["rows"]
            for s in ("baseline", "candidate")]
assert set(ks(sys.argv[1], "queue_launches")) == {1}, ks(sys.argv[1], "queue_launches")
assert set(ks(sys.argv[2], "queue_launches")) == {9}, ks(sys.argv[2], "queue_launches")
assert set(ks(sys.argv[3], "graph_launches")) == {1}, ks(sys.argv[3], "graph_launches")
PY
expect_in "$TMP/qb1/run_identity.json" '"queue_batch_ms": 0.0001'
expect_in "$TMP/gr1/run_identity.json" '"graph_replay_ms": 0.0001'
expect_rc 2 R good_copy --backend test --queue-batch-ms 0
expect_in "$TMP/err" "invalid value '0' for --queue-batch-ms: expected a positive number of milliseconds"
expect_rc 2 R good_copy --backend test --graph-replay-ms -1
expect_in "$TMP/err" "invalid value '-1' for --graph-replay-ms: expected a positive number of milliseconds"

# The calibrated queue timer: the test backend's empty kernel and tracer
# measure what a launch costs; every row says queue-cal and carries what
# was subtracted, results.json's head says queue-cal, and the identity
# says how. The operator is steady_a (50 us a call in any build): a copy of
# 64 floats costs less than the emulated launch (0.4 us) in a Release
# build, where calibration rightly leaves nothing to report.
expect_rc 0 R steady_a --backend test --timer queue --queue-calibrate --out "$TMP/qc" \
  --json "$TMP/qc.json"
expect_in "$TMP/qc/run.log" "timer=queue-cal"
all_rows_are "$TMP/qc/run.log" Timer queue-cal || fail "calibrated rows do not say queue-cal"
python3 - "$TMP/qc.json" "$TMP/qc/run_identity.json" <<'PY' || fail "the calibration is not reported"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert len(rows) == 2, rows
cals = []
for r in rows:
    for side in ("baseline", "candidate"):
        m = r[side]
        assert m["timer"] == "queue-cal", m["timer"]
        c = m["queue_calibration_ms"]
        assert 0 < c < 0.1, c          # the empty launch: 0.4 us of CPU, not more than 100 us
        assert m["ms"] > 0, m["ms"]
        cals.append(c)
assert json.load(open(sys.argv[1]))["timer"] == "queue-cal"
ident = json.load(open(sys.argv[2]))
cal = ident["caliber"]
assert cal["timer"] == "queue-cal" and cal["queue_calibrate"] is True, cal
q = cal["queue_calibration"]
assert q["measurements"] == 4, q
assert abs(q["min_ms"] - min(cals)) < 1e-12 and abs(q["max_ms"] - max(cals)) < 1e-12, (q, cals)
PY
# Uncalibrated runs say so.
expect_in "$TMP/q/run_identity.json" '"queue_calibrate": false'
# A tracer that loses a kernel fails the row, named; asked of the wrong
# timer or of a backend without an empty kernel: a usage error up front.
ZL_TEST_FAULT=trace:drop expect_rc 1 R steady_a --backend test --timer queue --queue-calibrate \
  --out "$TMP/qcd"
expect_in "$TMP/qcd/run.log" "queue calibration: the tracer saw"
expect_rc 0 "$ZLBENCH" plan queue_copy --lib "$TESTOPS" --backend testq --queue-calibrate
expect_in "$TMP/out" "timer:        queue-cal (requested auto)"
expect_in "$TMP/out" "calibrated: 9 traced batches of K empty kernels (their kernel time) and 9 untraced"
expect_rc 2 "$ZLBENCH" plan --backend host --timer queue --queue-calibrate
expect_in "$TMP/err" "queue calibration: backend 'host' has no empty kernel to measure a launch with"
expect_rc 2 R good_copy --backend test --timer graph --queue-calibrate --out "$TMP/qcg"
expect_in "$TMP/err" "--queue-calibrate calibrates the queue timer, and this run's timer is graph (give --timer queue)"
expect_rc 2 "$ZLBENCH" run add --backend host --timer queue --queue-calibrate --dtypes float32 \
  --out "$TMP/qch"
expect_in "$TMP/err" "queue calibration: backend 'host' has no empty kernel to measure a launch with"

# A backend that cannot hold a stream: each shape falls back to the direct
# timer and says so; the plan says it first.
expect_rc 0 "$ZLBENCH" plan add --backend host --timer queue
expect_in "$TMP/out" "timer:        queue (requested queue)"
expect_in "$TMP/out" "backend 'host' cannot hold a stream -> direct timer, marked fallback(phase=hold,reason=UNSUPPORTED,repeat=1)"
expect_rc 0 "$ZLBENCH" run add --backend host --timer queue --dtypes float32 \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_golden.yaml" --out "$TMP/h" $QUICK
all_rows_are "$TMP/h/run.log" Timer direct || fail "host rows are not timed directly"
all_rows_are "$TMP/h/run.log" Marker "fallback(phase=hold,reason=UNSUPPORTED,repeat=1)" ||
  fail "host rows lack the hold fallback marker"
# A hold the backend refuses: the same, with the backend's reason.
ZL_TEST_FAULT=hold:refused expect_rc 0 R good_copy --backend test --timer queue --out "$TMP/r"
all_rows_are "$TMP/r/run.log" Marker "fallback(phase=hold,reason=TEST_ERROR_NOT_SUPPORTED,repeat=1)" ||
  fail "refused holds lack their marker"
# A device fault while holding: the operator fails, no latency (exit 4).
ZL_TEST_FAULT=hold:fatal expect_rc 4 R good_copy --backend test --timer queue --out "$TMP/f"
expect_in "$TMP/f/run.log" "fatal(phase=hold,reason=TEST_ERROR_ILLEGAL_ADDRESS)"

# A launch queue with no room: the first enqueue behind the hold blocks and
# only the watchdog can release it. The run ends, every shape falls back.
ZL_TEST_QUEUE_DEPTH=0 expect_rc 0 timeout 60 "$ZLBENCH" run good_copy --backend test \
  --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 $QUICK --timer queue \
  --queue-timeout-ms 20 --out "$TMP/stuck"
all_rows_are "$TMP/stuck/run.log" Marker "fallback(phase=hold,reason=HOLD_TIMEOUT,repeat=1)" ||
  fail "holds released by the watchdog do not fall back"
# A queue of 30 entries: a batch sized for these microsecond calls (K well
# above 30) blocks, a quarter or a sixteenth of it fits; the rows are
# queue-timed and their notes say what happened.
ZL_TEST_QUEUE_DEPTH=30 expect_rc 0 R good_copy --backend test --timer queue \
  --queue-timeout-ms 20 --out "$TMP/shallow"
all_rows_are "$TMP/shallow/run.log" Timer queue || fail "a shallow queue is not escaped"
grep -qE "note: .*queue: [12] batch\(es\) released by the watchdog after 20 ms and discarded; K reduced from [0-9]+ to ([1-9]|[12][0-9])$" \
  "$TMP/shallow/run.log" || { cat "$TMP/shallow/run.log" >&2; fail "no note of the discarded batches"; }
# Calibrated, the same: the calibration's own batches of K empty kernels
# block first; K shrinks as for the calls' batches, and the rows are
# calibrated at the K they were timed with (a 100 ms watchdog here: the
# calibration holds the stream 9 more times, each a chance for a loaded
# machine to deschedule the process past a shorter one). A queue that
# never drains: the calibrated timer falls back as the plain one does.
ZL_TEST_QUEUE_DEPTH=30 expect_rc 0 R steady_a --backend test --timer queue --queue-calibrate \
  --queue-timeout-ms 100 --out "$TMP/shallowcal" --json "$TMP/shallowcal.json"
all_rows_are "$TMP/shallowcal/run.log" Timer queue-cal || fail "a shallow queue is not escaped (calibrated)"
grep -qE "note: .*queue: [12] batch\(es\) released by the watchdog after 100 ms and discarded; K reduced from [0-9]+ to ([1-9]|[12][0-9])$" \
  "$TMP/shallowcal/run.log" || { cat "$TMP/shallowcal/run.log" >&2; fail "no note of the discarded calibration batches"; }
# A side whose first K (queue_batch_ms / its estimate) fitted in the
# queue had nothing to release: on a loaded machine the estimate can come
# out many times the call's 50 us, and K below 30. Such a side must then
# have no released batch; every other side at least one.
python3 - "$TMP/shallowcal.json" "$TMP/shallowcal/run_identity.json" <<'PY' || fail "calibrated rows of a shallow queue are not calibrated at a K that fits"
import json, math, sys
cal = json.load(open(sys.argv[2]))["caliber"]
batch_ms, cap = cal["queue_batch_ms"], cal["queue_max_launches"]
assert batch_ms > 0 and cap > 30, cal
released = 0
for t in json.load(open(sys.argv[1]))["tables"]:
    for r in t["rows"]:
        for side in ("baseline", "candidate"):
            m = r[side]
            assert m["timer"] == "queue-cal" and m["queue_calibration_ms"] > 0, m
            assert m["queue_launches"] <= 30, m
            k0 = min(math.ceil(batch_ms / m["estimate_ms"]), cap)
            if k0 > 30:
                assert m["invalid_batches"] >= 1, (k0, m)
            else:
                assert m["invalid_batches"] == 0, (k0, m)
            released += m["invalid_batches"]
assert released >= 1, "no side had a batch released"
PY
ZL_TEST_QUEUE_DEPTH=0 expect_rc 0 timeout 60 "$ZLBENCH" run steady_a --backend test \
  --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 $QUICK --timer queue --queue-calibrate \
  --queue-timeout-ms 20 --out "$TMP/stuckcal"
all_rows_are "$TMP/stuckcal/run.log" Marker "fallback(phase=hold,reason=HOLD_TIMEOUT,repeat=1)" ||
  fail "calibration holds released by the watchdog do not fall back"

# auto: graph where the backend has graphs (CUDA, the test backend), the
# queue timer where it can only hold a stream ("testq").
expect_rc 0 "$ZLBENCH" plan --backend cuda
expect_in "$TMP/out" "timer:        graph (requested auto)"
expect_rc 0 "$ZLBENCH" plan --backend cuda --timer queue
expect_in "$TMP/out" "4. time each with the queue timer"
expect_rc 0 "$ZLBENCH" plan queue_copy --backend testq --lib "$TESTOPS"
expect_in "$TMP/out" "timer:        queue (requested auto)"
expect_in "$TMP/out" "4. time each with the queue timer"
expect_rc 0 R queue_copy --backend testq --out "$TMP/auto"
all_rows_are "$TMP/auto/run.log" Timer queue || fail "auto on testq is not the queue timer"
expect_rc 0 "$ZLBENCH" devices --backend testq --lib "$TESTOPS"
expect_in "$TMP/out" "hold"

# Options: the cap is 1..1024, the watchdog timeout positive.
expect_rc 2 R good_copy --backend test --timer queue --queue-max-launches 0
expect_in "$TMP/err" "invalid value '0' for --queue-max-launches: expected an integer in 1..1024"
expect_rc 2 R good_copy --backend test --timer queue --queue-max-launches 1025
expect_in "$TMP/err" "invalid value '1025' for --queue-max-launches: expected an integer in 1..1024"
expect_rc 2 R good_copy --backend test --queue-timeout-ms 0
expect_in "$TMP/err" "invalid value '0' for --queue-timeout-ms: expected a positive number of milliseconds"
ZL_TIMER=queue expect_rc 0 "$ZLBENCH" plan --backend test --lib "$TESTOPS"
expect_in "$TMP/out" "timer:        queue (requested queue)"
expect_rc 0 "$ZLBENCH" run --help
expect_in "$TMP/out" "--queue-max-launches"
expect_in "$TMP/out" "--queue-timeout-ms"
expect_in "$TMP/out" "--queue-batch-ms"
expect_in "$TMP/out" "--graph-replay-ms"
echo "ok: queue timer"
