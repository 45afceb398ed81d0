# zlbench summary over a folder holding one of our run.log files and a
# FlagGems log: summary.csv has both, the geomean table prints, and the
# errors have their exit codes.
. "$(dirname "$0")/lib.sh"
D="$TMP/logs"
mkdir -p "$D/ops/softmax" "$D/flaggems"
cp "$ZLB_SRC/tests/data/summary/ours_run.log" "$D/ops/softmax/run.log"
cp "$ZLB_SRC/tests/data/summary/flaggems_current.log" "$D/flaggems/result_test_pointwise.log"
mkdir -p "$D/ops/softmax/attempts/1-all"
cp "$D/ops/softmax/run.log" "$D/ops/softmax/attempts/1-all/run.log" # superseded: skipped
expect_rc 0 "$ZLBENCH" summary "$D"
expect_in "$TMP/out" "summary:"
expect_in "$TMP/out" "from 2 logs"
head -1 "$D/summary.csv" | grep -qx "operator,family,dtype,shape,baseline_ms,candidate_ms,speedup,gbps,tflops,pct_peak,timer,marker,status,source,base_host_us,cand_host_us,ceiling" ||
  fail "summary.csv header"
grep -q ",ops/softmax/run.log,[0-9.]*,[0-9.]*,$" "$D/summary.csv" || fail "our log's rows missing"
grep -q ",flaggems/result_test_pointwise.log,,,$" "$D/summary.csv" || fail "FlagGems rows missing"
grep -q "attempts" "$D/summary.csv" && fail "rows from an attempts folder were counted"
expect_rc 0 "$ZLBENCH" summary "$D" --out "$TMP/other.csv" --quiet
[ -s "$TMP/other.csv" ] || fail "--out wrote nothing"
expect_rc 2 "$ZLBENCH" summary "$TMP/missing"
expect_in "$TMP/err" "$TMP/missing"
echo x >"$TMP/file"
expect_rc 6 "$ZLBENCH" summary "$D" --out "$TMP/file/sub.csv"
# A batch folder summarises the same way (the batch writes it too).
expect_rc 0 "$ZLBENCH" summary --help
expect_in "$TMP/out" "usage: zlbench summary"
echo "ok: summary command"
