# The queue timer on a CUDA device: rows of a short operator are
# queue-timed, unmarked, and within a sane ratio of the graph timer's; a
# kernel of known duration (spin, 20 us) measures at least its spin and
# not much more (a start event reached before the hold's release, or a
# wrong K, would not); an operator that synchronises with the host falls
# back, marked, instead of waiting for its own release.
. "$(dirname "$0")/lib.sh"
R() { "$ZLBENCH" run "$@" --backend cuda --warmup-ms 5 --rep-ms 20; }

R add --timer queue --shape-file "$GPU_SHAPES" --dtypes float32 --out "$TMP/queue" \
  --json "$TMP/queue.json" >/dev/null 2>&1 || fail "add --timer queue failed"
all_rows_are "$TMP/queue/run.log" Status SUCCESS || fail "queue rows are not all SUCCESS"
all_rows_are "$TMP/queue/run.log" Timer queue || fail "rows are not all queue-timed"
no_timer_marker "$TMP/queue/run.log" || fail "queue-timed rows carry a marker"
expect_in "$TMP/queue/run.log" "mode=queue"
R add --timer graph --shape-file "$GPU_SHAPES" --dtypes float32 --out "$TMP/graph" \
  >/dev/null 2>&1 || fail "add --timer graph failed"
all_rows_are "$TMP/graph/run.log" Timer graph || fail "rows are not all graph-timed"
# Row by row (same shape file, same order), by column name.
table_col "$TMP/queue/run.log" "Candidate (ms)" >"$TMP/q.ms" || fail "no Candidate column (queue)"
table_col "$TMP/graph/run.log" "Candidate (ms)" >"$TMP/g.ms" || fail "no Candidate column (graph)"
[ "$(wc -l <"$TMP/q.ms")" = "$(wc -l <"$TMP/g.ms")" ] && [ -s "$TMP/q.ms" ] ||
  fail "queue and graph tables differ in rows"
paste "$TMP/q.ms" "$TMP/g.ms" | awk '
  { r = $1 / $2; printf "queue %.2f us, graph %.2f us, ratio %.3f\n", $1 * 1e3, $2 * 1e3, r
    if (!(r > 0.5 && r < 2.0)) bad = 1 }
  END { exit bad }' || fail "queue and graph disagree beyond a factor of 2"
python3 - "$TMP/queue.json" <<'PY' || fail "the JSON rows lack the queue timer's K and batches"
import json, sys
for t in json.load(open(sys.argv[1]))["tables"]:
    for r in t["rows"]:
        m = r["candidate"]
        print(r["shape"], "K", m["queue_launches"], "batches", m["batches"], "invalid", m["invalid_batches"])
        assert m["timer"] == "queue" and 1 <= m["queue_launches"] <= 256 and m["batches"] >= 10
        assert m["invalid_batches"] == 0, "the watchdog released a hold of add"
PY

# spin: 20 us of device time per call, whatever the launch latency.
printf 'spin:\n  shapes: [[20]]\n' >"$TMP/spin.yaml"
R spin --lib "$ZLB_GPUTEST_OPS" --timer queue --shape-file "$TMP/spin.yaml" --dtypes float32 \
  --out "$TMP/spin" >/dev/null 2>&1 || fail "spin --timer queue failed"
all_rows_are "$TMP/spin/run.log" Timer queue || fail "spin is not queue-timed"
v=$(table_col "$TMP/spin/run.log" "Candidate (ms)") || fail "no Candidate column (spin)"
echo "spin 20 us: queue $v ms per call"
awk -v v="$v" 'BEGIN { exit !(v >= 0.0199 && v < 0.0199 * 1.15) }' ||
  fail "spin 20 us measured $v ms per call by the queue timer"

# Calibrated: the launch cost measured with CUPTI-traced empty kernels and
# subtracted: below the plain reading, within 1 us of the kernel's 20 us
# (its own time is 20.8 us warm on an H200: the spin loop's exit and the
# launch inside the kernel), and reported.
R spin --lib "$ZLB_GPUTEST_OPS" --timer queue --queue-calibrate --shape-file "$TMP/spin.yaml" \
  --dtypes float32 --out "$TMP/spincal" --json "$TMP/spincal.json" >/dev/null 2>&1 ||
  fail "spin --timer queue --queue-calibrate failed: $(tail -3 "$TMP/spincal/run.log")"
all_rows_are "$TMP/spincal/run.log" Timer queue-cal || fail "calibrated spin rows do not say queue-cal"
c=$(table_col "$TMP/spincal/run.log" "Candidate (ms)") || fail "no Candidate column (spin, calibrated)"
echo "spin 20 us: calibrated queue $c ms per call"
awk -v v="$v" -v c="$c" 'BEGIN { exit !(c < v && c >= 0.0195 && c <= 0.0218) }' ||
  fail "spin 20 us: calibrated $c ms per call (plain $v)"
python3 - "$TMP/spincal.json" <<'PY' || fail "the calibrated rows lack queue_calibration_ms"
import json, sys
for t in json.load(open(sys.argv[1]))["tables"]:
    for r in t["rows"]:
        for side in ("baseline", "candidate"):
            m = r[side]
            print(side, "calibration", m["queue_calibration_ms"] * 1e3, "us")
            assert m["timer"] == "queue-cal" and 0.1e-3 < m["queue_calibration_ms"] < 5e-3, m
PY

# nonzero waits for the device from the host: no hold, marked per shape.
R nonzero --timer queue --shape-file "$GPU_SHAPES" --out "$TMP/nz" >/dev/null 2>&1 ||
  fail "nonzero --timer queue failed"
all_rows_are "$TMP/nz/run.log" Timer direct || fail "nonzero rows are not direct-timed"
all_rows_are "$TMP/nz/run.log" Marker "fallback(phase=hold,reason=HOST_SYNC,repeat=1)" ||
  fail "nonzero rows lack the hold fallback marker"
keep "$TMP/queue" "$TMP/graph" "$TMP/spin" "$TMP/spincal" "$TMP/nz"
echo "ok: queue timer on CUDA"
