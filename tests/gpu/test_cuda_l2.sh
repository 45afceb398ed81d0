# --l2 cold on a CUDA device (docs/timing.md, "Cold L2"): a copy whose
# data fits in the L2 (neg of 1Mi floats: 4 MiB in, 4 MiB out) reads
# slower with the graph timer cold than warm, since its inputs then come
# from memory, and cold it is within 10 % of the trace timer, whose calls
# also start with the L2 flushed (kernel time from the activity tracer);
# so are the calibrated queue and graph timers cold, each call between its
# own event pair (graph: event nodes).
. "$(dirname "$0")/lib.sh"
R() { "$ZLBENCH" run neg --backend cuda --dtypes float32 --warmup-ms 5 --rep-ms 40 \
  --shape-file "$TMP/l2.yaml" "$@"; }
printf 'neg:\n  shapes: [[1048576]]\n' >"$TMP/l2.yaml"
# why DIR: a failed run's reasons (the rows' notes and the log's end), its
# folder kept for bench/RESULTS.md.
why() {
  keep "$1"
  grep -E '^ *note:|error' "$1/run.log" 2>/dev/null | head -5
  tail -2 "$1/run.log" 2>/dev/null
}

R --timer graph --l2 cold --out "$TMP/cold" --json "$TMP/cold.json" >/dev/null 2>&1 ||
  fail "neg --timer graph --l2 cold failed: $(why "$TMP/cold")"
R --timer graph --l2 warm --out "$TMP/warm" >/dev/null 2>&1 || fail "neg --timer graph --l2 warm failed"
all_rows_are "$TMP/cold/run.log" Timer graph || fail "cold rows are not graph-timed"
# l2=cold on every row (a throttled-clocks note may join it).
m=$(table_col "$TMP/cold/run.log" Marker) || fail "no Marker column (cold)"
[ -n "$m" ] && ! printf '%s\n' "$m" | grep -qv 'l2=cold' || fail "cold rows are not all marked l2=cold: $m"
all_rows_are "$TMP/warm/run.log" Timer graph || fail "warm rows are not graph-timed"
if R --timer trace --out "$TMP/trace" >/dev/null 2>&1; then
  have_trace=1
else
  echo "note: the trace timer is not usable here ($(tail -1 "$TMP/trace/run.log" 2>/dev/null)); only cold > warm is checked"
  have_trace=0
fi
keep "$TMP/cold" "$TMP/warm" "$TMP/cold.json"
# within10 WHAT MS TRACE_MS: fail unless MS is within 10 % of TRACE_MS.
within10() {
  awk -v c="$2" -v t="$3" 'BEGIN { d = c / t - 1; if (d < 0) d = -d; exit !(d < 0.10) }' ||
    fail "$1 ($2 ms) is not within 10 % of trace ($3 ms)"
}
# check_cal TIMER LABEL CAL_KEY EVENTS_KEY OPTION: neg cold under TIMER with
# OPTION says LABEL on every row, CAL_KEY (ms) and EVENTS_KEY true in its
# JSON, and reads within 10 % of trace ($t).
check_cal() {
  R --timer "$1" --l2 cold "$5" --out "$TMP/$2" --json "$TMP/$2.json" >/dev/null 2>&1 ||
    fail "neg --timer $1 --l2 cold $5 failed: $(why "$TMP/$2")"
  keep "$TMP/$2" "$TMP/$2.json"
  all_rows_are "$TMP/$2/run.log" Timer "$2" || fail "cold calibrated $1 rows do not say $2"
  q=$(table_col "$TMP/$2/run.log" "Candidate (ms)") || fail "no Candidate column ($2)"
  python3 - "$TMP/$2.json" "$3" "$4" <<'PY' || fail "the cold calibrated $1 rows are not timed by their own events"
import json, sys
m = json.load(open(sys.argv[1]))["tables"][0]["rows"][0]["candidate"]
print("neg 8 MiB:", m["timer"], "calibration", m[sys.argv[2]] * 1e3, "us,",
      "flush", m["l2_flush_ms"] * 1e3, "us")
assert m[sys.argv[3]] is True, m
assert 0 < m[sys.argv[2]] < 5e-3 < m["l2_flush_ms"], m
PY
  echo "neg 8 MiB: $2 cold $q ms"
  within10 "$2 cold" "$q" "$t"
}
c=$(table_col "$TMP/cold/run.log" "Candidate (ms)") || fail "no Candidate column (cold)"
w=$(table_col "$TMP/warm/run.log" "Candidate (ms)") || fail "no Candidate column (warm)"
f=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["tables"][0]["rows"][0]["candidate"]["l2_flush_ms"])' "$TMP/cold.json") ||
  fail "the cold row has no l2_flush_ms"
echo "neg 8 MiB: graph cold $c ms (flush $f ms subtracted), graph warm $w ms"
awk -v c="$c" -v w="$w" 'BEGIN { exit !(c > w * 1.05) }' ||
  fail "cold ($c ms) is not slower than warm ($w ms): the flush did not evict the inputs"
if [ "$have_trace" = 1 ]; then
  t=$(table_col "$TMP/trace/run.log" "Candidate (ms)") || fail "no Candidate column (trace)"
  echo "neg 8 MiB: trace $t ms"
  within10 "graph cold" "$c" "$t"
  # The calibrated queue and graph timers, cold: each call between its own
  # event pair after its flush (graph: event nodes, recorded again by every
  # replay); the calibration is a launch gap and an event (well under the
  # flush's tens of us), and the value within 10 % of trace.
  check_cal queue queue-cal queue_calibration_ms queue_call_events --queue-calibrate
  check_cal graph graph-cal graph_calibration_ms graph_call_events --graph-calibrate
fi
exit 0
