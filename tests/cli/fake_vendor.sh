# The parts of tests/cli/test_{rocm,musa,ascend}_fake.sh that are the same
# for every vendor but for its error names, backend name, operator library
# and device name: the verdict paths of `zlbench run`, and the batch's
# pinning, fatal operator and capture-denied re-run. Sourced after lib.sh.

# fake_verdicts R SYNC INVALIDATED UNSUPPORTED FAULT FAULT_CODE LOST
#   R: the run arguments; SYNC: the reason of a capture refused by a
#   synchronising call; INVALIDATED / UNSUPPORTED: the fake's
#   ZL_FAKE_CAPTURE=invalidate / =unsupported reasons; FAULT and
#   FAULT_CODE: a device fault's name and code; LOST: a lost context's.
fake_verdicts() {
  local r=$1 sync=$2 inval=$3 unsup=$4 fault=$5 code=$6 lost=$7
  # Refused: a candidate that synchronises inside capture falls back per shape.
  expect_rc 0 "$ZLBENCH" run fake_sync $r --dtypes float32 --out "$TMP/v1"
  expect_in "$TMP/out" "candidate:fallback(phase=capture,reason=$sync,repeat=1)"
  ZL_FAKE_CAPTURE=invalidate expect_rc 0 "$ZLBENCH" run fake_copy $r --dtypes float32 --out "$TMP/v2"
  expect_in "$TMP/out" "fallback(phase=capture,reason=$inval,repeat=1)"
  ZL_FAKE_CAPTURE=unsupported expect_rc 0 "$ZLBENCH" run fake_copy $r --dtypes float32 \
    --out "$TMP/v2u"
  expect_in "$TMP/out" "fallback(phase=capture,reason=$unsup,repeat=1)"
  # Fatal: a device fault fails the operator, no latency, exit 4.
  expect_rc 4 "$ZLBENCH" run fake_fault $r --dtypes float32 --out "$TMP/v4"
  expect_in "$TMP/out" "fatal(phase=accuracy,reason=$fault)"
  grep -E '^FAILED +N/A +N/A ' "$TMP/out" >/dev/null ||
    { cat "$TMP/out"; fail "a latency for a faulting kernel"; }
  # A fault while timing (the 5th host function), and a lost context.
  ZL_FAKE_FAULT_AT=5 expect_rc 4 "$ZLBENCH" run fake_copy $r --dtypes float32 --out "$TMP/v5"
  expect_in "$TMP/err" "$fault ($code)"
  ZL_FAKE_FAULT=lost expect_rc 4 "$ZLBENCH" run fake_fault $r --dtypes float32 --out "$TMP/v6"
  expect_in "$TMP/out" "reason=$lost"
  # Poisoned: the capture broke the context; exit 5.
  ZL_FAKE_CAPTURE=poison expect_rc 5 "$ZLBENCH" run fake_copy $r --dtypes float32 --out "$TMP/v7"
  expect_in "$TMP/out" "poisoned(phase=capture,reason=$inval)"
  expect_in "$TMP/err" "BENCHMARK_CAPTURE_POISONED"
}

# fake_batch BACKEND ALIAS LIB GPU SYNC FAULT FAULT_CODE
#   A batch over two emulated devices: each good operator ran on the
#   device its name hashes to, seen as ordinal 0 and named "GPU<slot>"
#   (GPU: the device name before its number); the faulting one is fatal;
#   a poisoned capture is re-run with capture denied (through ALIAS, on
#   device 1).
fake_batch() {
  local be=$1 alias=$2 lib=$3 gpu=$4 sync=$5 fault=$6 code=$7 s dev op
  expect_rc 1 "$ZLBENCH" batch --backend "$be" --lib "$lib" --shape-file "$SHAPES" $QUICK \
    --ops fake_copy,fake_scale,fake_sync,fake_fault --timeout 30 --out "$TMP/b1"
  s="$TMP/b1/ops_status.csv"
  for op in fake_copy fake_scale fake_sync; do
    [ "$(csv_field "$s" $op status)" = ok ] || fail "$op: status $(csv_field "$s" $op status)"
    # Each child saw only its device, as ordinal 0: the physical one its
    # visibility variable named.
    dev=$(csv_field "$s" $op device)
    [ "$dev" = "$(fnv_slot $op 2)" ] || fail "$op ran on device $dev"
    expect_in "$TMP/b1/ops/$op/run.log" "backend=$be  device=0 ($gpu$dev)"
  done
  [ "$(csv_field "$s" fake_fault status)" = fatal ] ||
    fail "fake_fault: status $(csv_field "$s" fake_fault status)"
  expect_in "$s" "$fault ($code)"
  expect_in "$TMP/b1/ops/fake_sync/run.log" "reason=$sync"
  # A poisoned capture: the batch re-runs the operator with capture denied.
  ZL_FAKE_CAPTURE=poison expect_rc 0 "$ZLBENCH" batch --backend "$alias" --devices 1 --lib "$lib" \
    --shape-file "$SHAPES" $QUICK --ops fake_copy --timeout 30 --out "$TMP/b2"
  [ "$(csv_field "$TMP/b2/ops_status.csv" fake_copy status)" = ok_capture_denied ] ||
    { cat "$TMP/b2/ops_status.csv"; fail "poisoned capture not re-run with capture denied"; }
  expect_in "$TMP/b2/ops/fake_copy/run.log" "fallback(phase=deny,repeat=1)"
  expect_in "$TMP/b2/ops/fake_copy/run.log" "(${gpu}1)"
}

# fake_abort BACKEND LIB MESSAGE: a device fault that ends the process
# (SIGABRT, as ROCr and the ACL runtime do) costs only that operator.
fake_abort() {
  ZL_FAKE_FAULT=abort expect_rc 1 "$ZLBENCH" batch --backend "$1" --lib "$2" \
    --shape-file "$SHAPES" $QUICK --ops fake_copy,fake_fault --timeout 30 --out "$TMP/b3"
  [ "$(csv_field "$TMP/b3/ops_status.csv" fake_copy status)" = ok ] || fail "fake_copy did not survive"
  [ "$(csv_field "$TMP/b3/ops_status.csv" fake_fault status)" = crashed ] ||
    fail "fake_fault did not crash"
  expect_in "$TMP/b3/ops_status.csv" "signal SIGABRT: $3"
}
