# Issue-5 behaviour on a CUDA device: the trace timer gives kernel-only
# times that agree with the graph timer where L2 state cannot differ (a
# working set far beyond L2), NVML clocks reach the identity and the rows,
# and the noise stop finishes a typical case well under 0.2 s.
. "$(dirname "$0")/lib.sh"
printf 'add:\n  shapes: [[67108864]]\nsoftmax:\n  shapes: [[4096, 4096]]\n' >"$TMP/shapes.yaml"
R() { "$ZLBENCH" run "$@" --backend cuda --shape-file "$TMP/shapes.yaml" --dtypes float32; }

R add --timer trace --out "$TMP/trace" --json "$TMP/trace.json" >/dev/null 2>&1 || fail "trace run failed"
all_rows_are "$TMP/trace/run.log" Timer trace || fail "rows are not all trace-timed"
all_rows_are "$TMP/trace/run.log" Status SUCCESS || fail "trace rows are not all SUCCESS"
# The old name selects the same timer, and the rows say its new name.
R add --timer cupti --rep-ms 5 --out "$TMP/cupti" >/dev/null 2>&1 || fail "--timer cupti run failed"
all_rows_are "$TMP/cupti/run.log" Timer trace || fail "--timer cupti rows are not trace-timed"
R add --timer graph --out "$TMP/graph" --json "$TMP/graph.json" >/dev/null 2>&1 || fail "graph run failed"
python3 - "$TMP/trace.json" "$TMP/graph.json" <<'PY' || fail "trace and graph disagree beyond L2"
import json, sys
c = json.load(open(sys.argv[1]))["tables"][0]["rows"][0]["candidate"]["ms"]
g = json.load(open(sys.argv[2]))["tables"][0]["rows"][0]["candidate"]["ms"]
print(f"trace {c*1e3:.2f} us, graph {g*1e3:.2f} us, {100*(g/c-1):+.2f} %")
sys.exit(0 if abs(g / c - 1) < 0.05 else 1)
PY
expect_in "$TMP/trace/run_identity.json" '"clocks_start"'
expect_in "$TMP/trace/run_identity.json" '"sm_mhz"'
expect_in "$TMP/trace.json" '"clocks_before"'

R softmax --stop noise --out "$TMP/noise" --json "$TMP/noise.json" >/dev/null 2>&1 || fail "noise run failed"
python3 - "$TMP/noise.json" <<'PY' || fail "a noise-stopped measurement took 0.2 s or more"
import json, sys
rows = json.load(open(sys.argv[1]))["tables"][0]["rows"]
assert len(rows) == 1, f"{len(rows)} rows, the shape file has one softmax shape"
for r in rows:
    for side in ("baseline", "candidate"):
        m = r[side]
        print(side, m["sample_count"], "samples", f"noise {m['noise']}", f"wall {m['wall_s']:.3f} s")
        assert m["wall_s"] < 0.2
PY
keep "$TMP/trace" "$TMP/cupti" "$TMP/graph" "$TMP/noise"
echo "ok: trace timer (and its old name), clocks, noise stop"
