# zlbench run --integrity on a CUDA device: candidates that game the
# benchmark with real kernels (tests/gpu/ops/cheat.cu) are refused under
# every timer, each with its message; honest operators (the corpus's add
# and the control honest_copy_cu) pass under every timer, the side-stream
# check traces their kernels on the given stream, and the chosen timed
# sample is checked inside the timer (graph replays, queue batches and
# direct and trace calls alike); without --integrity the cheats pass.
. "$(dirname "$0")/lib.sh"
SH="$TMP/shapes.yaml"
cat >"$SH" <<'YAML'
test:
  shapes: [[1048576], [16777216]]
add:
  shapes: [[1048576]]
YAML
# The corpus's add comes with zlbench; the cheats with the GPU test library.
R() {
  case $1 in add) set -- "$@" ;; *) set -- "$@" --lib "$ZLB_GPUTEST_OPS" ;; esac
  "$ZLBENCH" run "$@" --backend cuda --shape-file "${SHAPES:-$SH}" --dtypes float32 --warmup-ms 2 \
    --rep-ms 10
}

# caught OP TIMER TEXT: every row refused with TEXT in the log.
caught() {
  out="$TMP/$1-$2"
  expect_rc 1 R "$1" --timer "$2" --integrity --out "$out"
  all_rows_are "$out/run.log" Status FAILED || fail "$1 ($2): a row was not refused"
  all_rows_are "$out/run.log" Marker error=integrity || fail "$1 ($2): rows not marked error=integrity"
  expect_in "$out/run.log" "$3"
}

for t in graph queue direct trace; do
  caught cheat_cache_cu "$t" "integrity: the outputs of timed iteration"
  caught cheat_skip_cu "$t" "integrity: the outputs of timed iteration"
  caught cheat_stream_cu "$t" "on another stream"
done
# The rate gate where the measured ceiling applies (L2 flushed).
caught cheat_rate_cu direct "integrity: the candidate's rate is"
caught cheat_rate_cu trace "integrity: the candidate's rate is"
# Declared bytes (20 MB) that fit in half the L2: a warm graph row is
# judged by the L2's measured bandwidth, a cold one (--l2 cold) by
# memory's, and 20 MB per call of a [1024] copy (a few us) is beyond
# memory's; above the L2's ceiling a row is never refused (a read-heavy
# kernel can beat a copy's rate), so the warm row only has to name its
# ceiling and show no %Peak above 100.
printf 'test:\n  shapes: [[1024]]\n' >"$TMP/small.yaml"
SHAPES="$TMP/small.yaml" expect_rc 1 R cheat_rate_l2_cu --timer graph --l2 cold --integrity \
  --out "$TMP/l2cold"
expect_in "$TMP/l2cold/run.log" "of the measured memory ceiling ("
SHAPES="$TMP/small.yaml" expect_rc 0 R cheat_rate_l2_cu --timer graph --out "$TMP/l2warm"
all_rows_are "$TMP/l2warm/run.log" Ceiling cache || fail "a warm row in half the L2 not judged by the L2"
table_col "$TMP/l2warm/run.log" %Peak | awk '$1 != "N/A" && $1 + 0 > 100 { bad = 1 } END { exit bad }' ||
  fail "a %Peak above the cache ceiling was shown"
# The direct timer's flush (larger than the L2) empties it: memory's ceiling.
SHAPES="$TMP/small.yaml" expect_rc 0 R cheat_rate_l2_cu --timer direct --out "$TMP/l2direct"
all_rows_are "$TMP/l2direct/run.log" Ceiling memory || fail "a flushed direct row judged by the L2"

for t in graph queue direct trace; do
  for op in honest_copy_cu add; do
    expect_rc 0 R "$op" --timer "$t" --integrity --out "$TMP/h-$op-$t" --json "$TMP/h-$op-$t.json"
    all_rows_are "$TMP/h-$op-$t/run.log" Status SUCCESS || fail "honest $op ($t) refused"
  done
done
python3 - "$TMP"/h-*.json <<'PY' || fail "honest rows do not say what --integrity checked"
import json, sys
for path in sys.argv[1:]:
    for t in json.load(open(path))["tables"]:
        for r in t["rows"]:
            s = r["integrity"]
            assert "side streams: none (" in s and "all on the given stream" in s, (path, s)
            assert "timed sample: iteration" in s and "(device)" in s, (path, s)
PY

# Without --integrity the cheats are timed as before.
for op in cheat_cache_cu cheat_skip_cu cheat_stream_cu; do
  expect_rc 0 R "$op" --timer graph --out "$TMP/off-$op"
  all_rows_are "$TMP/off-$op/run.log" Status SUCCESS || fail "$op failed without --integrity"
done
keep "$TMP"/cheat_* "$TMP"/h-*
echo "ok: --integrity refuses the CUDA cheats and passes honest operators under every timer"
