# --l2 cold|warm through zlbench run, plan and batch (docs/timing.md,
# "Cold L2"): the graph and queue timers flush before every call and
# subtract the flush's own time; rows say l2=cold, the JSON has the mode
# and the subtracted flush time, the identity the mode, and bad values or
# combinations are usage errors. On the test backend the flush buffer is
# twice the L2 its device reports (ZL_TEST_L2_BYTES) and a call copies
# 256 KiB, far longer than the 8 KiB flush.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gpu/table.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
export ZL_TEST_L2_BYTES=4096
unset ZL_L2
SH="$TMP/shapes.yaml"
printf 'test:\n  shapes: [[65536]]\n' >"$SH"
R() { "$ZLBENCH" run "$@" --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 $QUICK; }

# check_cold JSON TIMER: every side of every row ran cold under TIMER and
# says what one flush took (subtracted) and the buffer's size.
check_cold() {
  python3 - "$1" "$2" <<'PY' || fail "$1: the rows do not say cold L2 with the flush subtracted"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert rows, "no rows"
for r in rows:
    assert r["status"] == "SUCCESS", r.get("error")
    assert "l2=cold" in r["marker"], r["marker"]
    for side in ("baseline", "candidate"):
        m = r[side]
        assert m["timer"] == sys.argv[2], m["timer"]
        assert m["l2"] == "cold", m.get("l2")
        assert m["l2_flush_ms"] > 0, m.get("l2_flush_ms")
        assert m["l2_flush_bytes"] == 8192, m.get("l2_flush_bytes")
        assert m["ms"] > 0, m["ms"]
PY
}

for t in graph queue; do
  expect_rc 0 R good_copy --backend test --timer $t --l2 cold --out "$TMP/$t" --json "$TMP/$t.json"
  check_cold "$TMP/$t.json" $t
  all_rows_are "$TMP/$t/run.log" Marker l2=cold || fail "$t: the table's rows are not marked l2=cold"
  all_rows_are "$TMP/$t/run.log" Timer $t || fail "$t: the timer column changed"
  expect_in "$TMP/$t/run.log" "graph/queue:cold(flush:0MiB)"
  expect_in "$TMP/$t/run_identity.json" '"l2_mode": "cold"'
  expect_in "$TMP/$t/run_identity.json" '"graph": "cold"'
  expect_in "$TMP/$t/run_identity.json" '"cold_flush_bytes": 8192'
done

# Cold and calibrated: each call and each empty kernel of the calibration
# is flushed, then timed between its own event pair (the JSON says so);
# the rows say queue-cal and l2=cold, and the flush's own time is
# recorded.
expect_rc 0 R good_copy --backend test --timer queue --l2 cold --queue-calibrate --out "$TMP/qcc" \
  --json "$TMP/qcc.json"
check_cold "$TMP/qcc.json" queue-cal
all_rows_are "$TMP/qcc/run.log" Timer queue-cal || fail "cold calibrated rows do not say queue-cal"
all_sides "$TMP/qcc.json" 'm["queue_calibration_ms"] > 0 and m["queue_call_events"] is True and "calibration_traced_ms" in m' ||
  fail "cold calibrated rows carry no calibration"
# Warm and calibrated: one event pair a batch, the key absent.
expect_rc 0 R good_copy --backend test --timer queue --queue-calibrate --out "$TMP/qcw" \
  --json "$TMP/qcw.json"
all_sides "$TMP/qcw.json" 'm["queue_calibration_ms"] > 0 and "queue_call_events" not in m and "calibration_traced_ms" in m' ||
  fail "warm calibrated rows say queue_call_events"

# The calibrated cold graph timer (--graph-calibrate): each call between
# its own event nodes in the graph, less an empty kernel's gap; rows say
# graph-cal and l2=cold, the JSON the calibration and the event nodes, the
# identity the option and the calibration's range.
expect_rc 0 R good_copy --backend test --timer graph --l2 cold --graph-calibrate --out "$TMP/gcc" \
  --json "$TMP/gcc.json"
check_cold "$TMP/gcc.json" graph-cal
all_rows_are "$TMP/gcc/run.log" Timer graph-cal || fail "calibrated graph rows do not say graph-cal"
expect_in "$TMP/gcc/run_identity.json" '"graph_calibrate": true'
python3 - "$TMP/gcc.json" "$TMP/gcc/run_identity.json" <<'PY' || fail "calibrated graph rows carry no calibration"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
cals = []
for r in rows:
    for side in ("baseline", "candidate"):
        m = r[side]
        assert m["graph_calibration_ms"] > 0, m
        assert m["graph_call_events"] is True, m
        assert "queue_calibration_ms" not in m, m
        assert isinstance(m["calibration_traced_ms"], (int, float)), m
        cals.append(m["graph_calibration_ms"])
g = json.load(open(sys.argv[2]))["caliber"]["graph_calibration"]
assert g["measurements"] == len(cals), g
assert abs(g["min_ms"] - min(cals)) < 1e-9 and abs(g["max_ms"] - max(cals)) < 1e-9, (g, cals)
assert "queue_calibration" not in json.load(open(sys.argv[2]))["caliber"]
PY
expect_in "$TMP/qcc/run_identity.json" '"graph_calibrate": false'
# Plain cold graph rows carry neither key.
all_sides "$TMP/graph.json" '"graph_call_events" not in m and "graph_calibration_ms" not in m and "calibration_traced_ms" not in m' ||
  fail "plain cold graph rows say graph_call_events"
# The plan says how it measures.
expect_rc 0 "$ZLBENCH" plan good_copy --backend test --lib "$TESTOPS" --l2 cold --graph-calibrate
expect_in "$TMP/out" "timer:        graph-cal"
expect_in "$TMP/out" "and 9 untraced (their pairs) give the gap"
expect_in "$TMP/gcc/run_identity.json" '"method": "(untraced event-node pairs - traced kernel time)'
expect_in "$TMP/out" "each call between its own event nodes after its flush"
# An event node the device refuses: the shape falls back to the direct
# timer, marked; a tracer that loses a kernel fails the row, no number.
ZL_TEST_FAULT=node:refused expect_rc 0 R good_copy --backend test --l2 cold --graph-calibrate \
  --out "$TMP/gnr"
all_rows_are "$TMP/gnr/run.log" Timer direct || fail "a refused event node did not fall back"
expect_in "$TMP/gnr/run.log" "fallback(phase=capture,reason=TEST_ERROR_CAPTURE_UNSUPPORTED"
ZL_TEST_FAULT=trace:drop expect_rc 1 R good_copy --backend test --l2 cold --graph-calibrate \
  --out "$TMP/gtd"
expect_in "$TMP/gtd/run.log" "graph calibration: the tracer saw"
# A tracer that reports each flush as a kernel too (CUPTI did, for a
# graph's memset nodes, on an H100): both calibrated timers tell the
# empty kernels from the flushes and every row succeeds.
ZL_TEST_FAULT=trace:flush ZL_TEST_MEMSET_US=20 expect_rc 0 R good_copy --backend test --l2 cold \
  --graph-calibrate --out "$TMP/gtf"
all_rows_are "$TMP/gtf/run.log" Timer graph-cal || fail "flushes traced as kernels: graph-cal rows failed"
ZL_TEST_FAULT=trace:flush ZL_TEST_MEMSET_US=20 expect_rc 0 R good_copy --backend test --timer queue \
  --l2 cold --queue-calibrate --out "$TMP/qtf"
all_rows_are "$TMP/qtf/run.log" Timer queue-cal || fail "flushes traced as kernels: queue-cal rows failed"
# Usage errors, before any case: warm, another timer, both calibrations,
# a backend whose timer resolves to the queue.
expect_rc 2 R good_copy --backend test --timer graph --graph-calibrate --out "$TMP/gx1"
expect_in "$TMP/err" "--graph-calibrate times each call after its own L2 flush: give --l2 cold"
expect_rc 2 R good_copy --backend test --timer queue --l2 cold --graph-calibrate --out "$TMP/gx2"
expect_in "$TMP/err" "--graph-calibrate calibrates the graph timer, and this run's timer is queue"
expect_rc 2 R good_copy --backend test --l2 cold --graph-calibrate --queue-calibrate --out "$TMP/gx3"
expect_in "$TMP/err" "give one"
expect_rc 2 "$ZLBENCH" plan queue_copy --backend testq --lib "$TESTOPS" --l2 cold --graph-calibrate
expect_in "$TMP/err" "this run's timer is queue"
for d in gx1 gx2 gx3; do [ ! -e "$TMP/$d" ] || fail "$d: a refused run wrote its folder"; done

# ZL_L2 is the default that --l2 overrides.
ZL_L2=cold expect_rc 0 R good_copy --backend test --timer queue --out "$TMP/env" --json "$TMP/env.json"
check_cold "$TMP/env.json" queue
ZL_L2=cold expect_rc 0 R good_copy --backend test --timer graph --l2 warm --out "$TMP/ow" \
  --json "$TMP/ow.json"
expect_in "$TMP/ow/run_identity.json" '"l2_mode": "warm"'

# Warm is the default: unmarked rows, nothing subtracted, the mode stated.
expect_rc 0 R good_copy --backend test --timer graph --out "$TMP/w" --json "$TMP/w.json"
all_rows_are "$TMP/w/run.log" Marker - || fail "warm rows carry a marker"
expect_in "$TMP/w/run.log" "graph/queue:warm"
expect_in "$TMP/w/run_identity.json" '"l2_mode": "warm"'
expect_in "$TMP/w/run_identity.json" '"graph": "warm"'
# The trace timer's flush is waited for unless --trace-flush queued; the
# identity says which, and no measurement of another timer claims it.
expect_in "$TMP/w/run_identity.json" '"trace_flush": "waited"'
all_sides "$TMP/w.json" '"trace_flush" not in m' || fail "a graph row says trace_flush"
all_sides "$TMP/w.json" 'm["l2"] == "warm" and "l2_flush_ms" not in m' ||
  fail "warm rows do not say l2 warm"

# compare refuses a cold result against a warm one: another caliber.
"$ZLBENCH" compare "$TMP/w" "$TMP/graph" >"$TMP/cmp" 2>&1
grep -q "l2_flush" "$TMP/cmp" || { cat "$TMP/cmp" >&2; fail "compare does not tell the L2 modes apart"; }

# The plan says the mode.
expect_rc 0 "$ZLBENCH" plan good_copy --backend test --lib "$TESTOPS" --timer graph --l2 cold
expect_in "$TMP/out" "l2:           cold"
expect_rc 0 "$ZLBENCH" plan good_copy --backend test --lib "$TESTOPS" --timer queue
expect_in "$TMP/out" "l2:           warm"

# A batch hands --l2 to its children.
expect_rc 0 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy --timer graph \
  --l2 cold --dtypes float32 --shape-file "$SH" --out "$TMP/b" $QUICK
expect_in "$TMP/b/ops/good_copy/run_identity.json" '"l2_mode": "cold"'
expect_in "$TMP/b/summary.csv" "l2=cold"
# ... and --graph-calibrate, whose rows say graph-cal; a batch refuses it
# without --l2 cold before any child or folder.
expect_rc 0 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy --timer graph \
  --l2 cold --graph-calibrate --dtypes float32 --shape-file "$SH" --out "$TMP/bg" $QUICK
expect_in "$TMP/bg/ops/good_copy/run_identity.json" '"graph_calibrate": true'
all_rows_are "$TMP/bg/ops/good_copy/run.log" Timer graph-cal || fail "batch rows do not say graph-cal"
expect_rc 2 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy --timer graph \
  --graph-calibrate --dtypes float32 --shape-file "$SH" --out "$TMP/bgx" $QUICK
expect_in "$TMP/err" "give --l2 cold"
[ ! -e "$TMP/bgx" ] || fail "a batch refused for --graph-calibrate made its output folder"

# The ceiling %Peak is of (docs/roofline.md): the cache's for a row whose
# bytes fit in half the 4096-byte cache and whose timer keeps it warm,
# memory's for a flushing timer or a larger row.
printf 'test:\n  shapes: [[64]]\n' >"$TMP/tiny.yaml"
C() {
  "$ZLBENCH" run good_copy --backend test --lib "$TESTOPS" --shape-file "$TMP/tiny.yaml" \
    --dtypes float32 $QUICK "$@"
}
expect_rc 0 C --timer graph --out "$TMP/c-graph"
all_rows_are "$TMP/c-graph/run.log" Ceiling cache || fail "a warm graph row in the cache not judged by it"
expect_rc 0 C --timer queue --out "$TMP/c-queue"
all_rows_are "$TMP/c-queue/run.log" Ceiling cache || fail "a warm queue row in the cache not judged by it"
# Cold, a row that fits in the cache is memory's. Its call is shorter than
# the flush (twice the cache) whatever the sizes, so the sizes are large
# enough (a 1 MiB cache, 512 KiB moved) that the subtracted flush's noise
# on a loaded machine is small beside the call: with the [64] row above
# the call (256 bytes) was lost in the 8 KiB flush's noise. The warm run
# at the same sizes shows the row would be the cache's.
ZL_TEST_L2_BYTES=1048576 expect_rc 0 R good_copy --backend test --timer graph --out "$TMP/c-warm1m"
all_rows_are "$TMP/c-warm1m/run.log" Ceiling cache || fail "a warm graph row in a 1 MiB cache not judged by it"
ZL_TEST_L2_BYTES=1048576 expect_rc 0 R good_copy --backend test --timer graph --l2 cold --out "$TMP/c-cold"
all_rows_are "$TMP/c-cold/run.log" Ceiling memory || fail "a cold graph row judged by the cache"
# The test backend's direct timer flushes nothing (l2=none): its rows stay
# in the cache (a GPU's 256 MiB flush makes them memory's:
# tests/gpu/test_cuda_integrity.sh).
expect_rc 0 C --timer direct --out "$TMP/c-direct"
expect_in "$TMP/c-direct/run.log" "l2=none"
all_rows_are "$TMP/c-direct/run.log" Ceiling cache || fail "an unflushed direct row not judged by the cache"
expect_rc 0 R good_copy --backend test --timer graph --out "$TMP/c-big"
all_rows_are "$TMP/c-big/run.log" Ceiling memory || fail "a row larger than half the cache judged by it"

# Bad values and combinations are usage errors naming the option.
expect_rc 2 R good_copy --backend test --timer graph --l2 hot --out "$TMP/x1"
expect_in "$TMP/err" "--l2"
ZL_L2= expect_rc 2 R good_copy --backend test --timer graph --out "$TMP/x2"
expect_in "$TMP/err" "ZL_L2"
ZL_L2=hot expect_rc 2 R good_copy --backend test --timer graph --out "$TMP/x3"
expect_in "$TMP/err" "ZL_L2"
expect_rc 2 R good_copy --backend test --timer graph --l2 cold --no-flush --out "$TMP/x4"
expect_in "$TMP/err" "--no-flush"
expect_rc 2 "$ZLBENCH" plan good_copy --backend test --lib "$TESTOPS" --l2 cold --no-flush
expect_in "$TMP/err" "--l2 cold"

# --flush-mib sizes every flush: the cold timers' buffer (rows say its
# size), and the direct timer's (the identity says it; the host backend
# has one). Without it the cold buffer is twice the L2 (8 KiB here).
# (A 16 MiB copy against the 1 MiB flush: the call is not lost in the
# flush's noise on a loaded machine.)
printf 'test:\n  shapes: [[4194304]]\n' >"$TMP/big.yaml"
expect_rc 0 "$ZLBENCH" run good_copy --backend test --timer graph --l2 cold --flush-mib 1 \
  --lib "$TESTOPS" --shape-file "$TMP/big.yaml" --dtypes float32 $QUICK --out "$TMP/fm1" \
  --json "$TMP/fm1.json"
all_sides "$TMP/fm1.json" 'm["l2_flush_bytes"] == 1048576' || fail "--flush-mib 1 did not size the cold flush"
python3 - "$TMP/graph.json" 8192 <<'PY' || fail "the default cold flush is not twice the L2"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert rows and all(r["candidate"]["l2_flush_bytes"] == int(sys.argv[2]) for r in rows)
PY
printf 'add:\n  shapes: [[1024]]\n' >"$TMP/host.yaml"
expect_rc 0 "$ZLBENCH" run add --backend host --timer direct --flush-mib 16 --dtypes float32 \
  --shape-file "$TMP/host.yaml" --out "$TMP/fm2" $QUICK
grep -q '"flush_bytes": 16777216' "$TMP/fm2/run_identity.json" ||
  fail "--flush-mib 16 did not size the direct timer's flush: $(grep flush "$TMP/fm2/run_identity.json")"
# zlbench plan says the size: --flush-mib's, or the backend's direct one.
expect_rc 0 "$ZLBENCH" plan good_copy --backend test --lib "$TESTOPS" --l2 cold --flush-mib 2
expect_in "$TMP/out" "flush:        2097152 bytes (--flush-mib)"
expect_rc 0 "$ZLBENCH" plan add --backend host
expect_in "$TMP/out" "flush:        8388608 bytes (the backend's)"
# Refused: 0, a size below the L2, with --no-flush, nothing to size (the
# test backend has no direct flush and no --l2 cold is given).
expect_rc 2 R good_copy --backend test --timer graph --l2 cold --flush-mib 0 --out "$TMP/x5"
expect_in "$TMP/err" "invalid value '0' for --flush-mib"
ZL_TEST_L2_BYTES=2097153 expect_rc 2 R good_copy --backend test --timer graph --l2 cold \
  --flush-mib 2 --out "$TMP/x6"
expect_in "$TMP/err" "--flush-mib 2 is smaller than the device's L2 (2097153 bytes)"
expect_in "$TMP/err" "give at least 3"
expect_rc 2 R good_copy --backend test --timer graph --l2 warm --flush-mib 4 --no-flush --out "$TMP/x7"
expect_in "$TMP/err" "--no-flush asks for no flush"
expect_rc 2 R good_copy --backend test --timer graph --flush-mib 4 --out "$TMP/x8"
expect_in "$TMP/err" "--flush-mib has no flush to size"
[ ! -e "$TMP/x6/run.log" ] || fail "a refused --flush-mib left a run log"
# zlbench batch refuses a conflict once, before any child or folder.
expect_rc 2 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy --flush-mib 4 \
  --no-flush --out "$TMP/x10"
expect_in "$TMP/err" "--no-flush asks for no flush"
[ ! -e "$TMP/x10" ] || fail "a refused batch made its output folder"
# ... and a size below a device's L2 (which every child would refuse,
# leaving every operator usage_error).
ZL_TEST_L2_BYTES=2097153 expect_rc 2 "$ZLBENCH" batch --backend test --lib "$TESTOPS" \
  --ops good_copy --l2 cold --flush-mib 2 --out "$TMP/x12"
expect_in "$TMP/err" "--flush-mib 2 is smaller than the L2 of device 0 of backend 'test' (2097153 bytes)"
[ ! -e "$TMP/x12" ] || fail "a batch refused for its flush size made its output folder"
expect_rc 2 R good_copy --backend test --timer graph --l2 cold --flush-mib 16385 --out "$TMP/x11"
expect_in "$TMP/err" "1..16384"
# zlbench ab refuses it before it writes anything.
expect_rc 2 "$ZLBENCH" ab good_copy --self --backend test --lib "$TESTOPS" --flush-mib 4 \
  --out "$TMP/x9"
expect_in "$TMP/err" "--flush-mib has no flush to size"
[ ! -e "$TMP/x9/ab.log" ] || fail "a refused --flush-mib left ab.log"
exit 0
