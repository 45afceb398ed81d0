# Every CUDA operator produces SUCCESS rows on small shapes of every family;
# add is graph-timed; nonzero falls back from capture to direct timing with
# its marker; ZL_DIRECT_REPEAT=5 shows in those markers; an operator that
# writes out of bounds ends as a fatal device fault with no latency.
. "$(dirname "$0")/lib.sh"
R() { "$ZLBENCH" run "$@" --backend cuda --shape-file "$GPU_SHAPES" --warmup-ms 5 --rep-ms 20; }

ops=$("$ZLBENCH" inventory --registered --backend cuda | awk '{print $1}')
# The checks below run these: each must be registered, not silently skipped.
for must in add nonzero mm softmax; do
  printf '%s\n' $ops | grep -qxF "$must" || fail "operator $must is not registered for CUDA"
done
failed=""
for op in $ops; do
  if ! R "$op" --out "$TMP/ops/$op" >"$TMP/$op.out" 2>"$TMP/$op.err"; then
    failed="$failed $op"
    echo "--- $op" >&2; tail -15 "$TMP/$op.out" >&2; cat "$TMP/$op.err" >&2
    continue
  fi
  grep -q '^FAILED' "$TMP/ops/$op/run.log" && { failed="$failed $op"; grep '^FAILED\|note:' "$TMP/ops/$op/run.log" >&2; }
  grep -q '^SUCCESS' "$TMP/ops/$op/run.log" || failed="$failed $op(no-rows)"
done
keep "$TMP/ops"
[ -z "$failed" ] || fail "operators without all-SUCCESS rows:$failed"

# The vendor baselines (CUB's DeviceTransform, Thrust, cuBLASLt, cuDNN)
# capture into a graph like the kernels they replaced: their operators'
# rows stay graph-timed, with no fallback marker.
for op in add where eq lerp gather index_select scatter fill contiguous softmax log_softmax argmin; do
  all_rows_are "$TMP/ops/$op/run.log" Timer graph || fail "$op: rows not all graph-timed"
  no_timer_marker "$TMP/ops/$op/run.log" || fail "$op: rows carry a fallback marker"
done

# add: graph-timed rows, no marker.
R add --out "$TMP/add" >/dev/null 2>&1 || fail "add failed"
all_rows_are "$TMP/add/run.log" Timer graph || fail "add rows are not all graph-timed"
no_timer_marker "$TMP/add/run.log" || fail "add rows carry a marker"
expect_in "$TMP/add/run.log" "mode=graph"

# nonzero: capture refused -> direct, marked, per shape.
R nonzero --out "$TMP/nz" >/dev/null 2>&1 || fail "nonzero failed"
all_rows_are "$TMP/nz/run.log" Status SUCCESS || fail "nonzero: rows not all SUCCESS"
all_rows_are "$TMP/nz/run.log" Timer direct || fail "nonzero: rows not all direct-timed"
t=$(table_rows "$TMP/nz/run.log")
n=$(table_col "$TMP/nz/run.log" Marker |
  grep -cxE 'fallback\(phase=capture,reason=CUDA_ERROR_STREAM_CAPTURE_[A-Z_]+,repeat=1\)')
[ "$t" -gt 0 ] && [ "$n" = "$t" ] || fail "nonzero: $n of $t rows carry the capture fallback marker"
ZL_DIRECT_REPEAT=5 R nonzero --out "$TMP/nz5" >/dev/null 2>&1 || fail "nonzero (repeat 5) failed"
[ "$(table_rows "$TMP/nz5/run.log")" = "$t" ] || fail "ZL_DIRECT_REPEAT=5: not the $t rows of the first run"
n=$(table_col "$TMP/nz5/run.log" Marker | grep -cxE 'fallback\(phase=capture,reason=[A-Z_]+,repeat=5\)')
[ "$n" = "$t" ] || fail "ZL_DIRECT_REPEAT=5: $n of $t rows show repeat=5"
expect_in "$TMP/nz5/run_identity.json" '"repeat": 5'
keep "$TMP/add" "$TMP/nz" "$TMP/nz5"

# A kernel writing out of bounds: fatal, no latency, exit 4.
expect_rc 4 "$ZLBENCH" run oob_write --backend cuda --lib "$ZLB_GPUTEST_OPS" \
  --shape-file "$GPU_SHAPES" --out "$TMP/oob" $QUICK
expect_in "$TMP/oob/run.log" "fatal(phase="
expect_in "$TMP/oob/run.log" "CUDA_ERROR_ILLEGAL_ADDRESS"
all_rows_are "$TMP/oob/run.log" Status FAILED || fail "oob_write: rows not all FAILED"
all_rows_are "$TMP/oob/run.log" "Baseline (ms)" N/A || fail "oob_write: a baseline latency was reported"
all_rows_are "$TMP/oob/run.log" "Candidate (ms)" N/A || fail "oob_write: a latency was reported"
grep -q '^SUCCESS' "$TMP/oob/run.log" && fail "oob_write: a SUCCESS row after a device fault"
keep "$TMP/oob"
echo "ok: CUDA operators, graph timing, capture fallback, repeat marker, fatal fault"
