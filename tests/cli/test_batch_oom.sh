# Children sharing a device (--jobs-per-device 2) share its memory: an
# operator that runs out of it beside another child runs once more alone on
# the device before its failure counts, and says so; one that runs out of
# memory alone too fails; with one child per device nothing is rerun.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
SH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
# oombatch OUT OPS JOBS_PER_DEVICE: the batch on one device of the test backend.
oombatch() {
  timeout 120 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --devices 0 --ops "$2" \
    --jobs-per-device "$3" --retries 0 --timeout 60 --dtypes float32 --shape-file "$SH" \
    --out "$1" $QUICK
}
# wait_until TRIES CMD...: CMD polled every 0.1 s until it succeeds, at
# most TRIES times; fails (status 1) when it never did.
wait_until() {
  local n=$1
  shift
  for _ in $(seq "$n"); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}
# held_and_rerun STATE OP LOG: OP's child is held in STATE and LOG says a
# child will run again alone.
held_and_rerun() { [ -f "$1/held_$2" ] && grep -qF "again, alone on it" "$3" 2>/dev/null; }
# interrupt LOG: SIGINT to the batch writing into $OUT (started in the
# background as $bpid); it must exit 130.
interrupt() {
  kill -INT "$(batch_pid)"
  wait "$bpid"
  local rc=$?
  [ "$rc" = 130 ] || { cat "$1" >&2; fail "the interrupted batch exited $rc, expected 130"; }
}
check() { # dir op status attempts
  st=$(csv_field "$1/ops_status.csv" "$2" status)
  at=$(csv_field "$1/ops_status.csv" "$2" attempts)
  [ "$st" = "$3" ] || fail "$2: status '$st', expected '$3'"
  [ "$at" = "$4" ] || fail "$2: $at attempts, expected $4"
}

# oom_beside runs out of memory while good_copy is held beside it (it waits
# until good_copy is, then lets it go on): alone, it passes.
mkdir -p "$TMP/s1" && export ZL_TEST_STATE_DIR="$TMP/s1"
touch "$TMP/s1/hold_good_copy"
expect_rc 0 oombatch "$TMP/o1" good_copy,oom_beside 2
check "$TMP/o1" good_copy ok 1
check "$TMP/o1" oom_beside ok 2
expect_in "$TMP/o1/ops_status.csv" "ran alone on its device after running out of memory beside other children"
expect_in "$TMP/out" "other children shared its device: again, alone on it"
# The rerun ran alone: its identity says one child per device.
grep -rq '"children_per_device": 1' "$TMP/o1/ops/oom_beside" ||
  fail "the rerun alone does not say one child per device"

# The same in a child that finishes its tables with a row that failed.
mkdir -p "$TMP/s4" && export ZL_TEST_STATE_DIR="$TMP/s4"
touch "$TMP/s4/hold_good_copy"
expect_rc 0 oombatch "$TMP/o4" good_copy,oom_rows_beside 2
check "$TMP/o4" oom_rows_beside ok 2
expect_in "$TMP/o4/ops_status.csv" "ran alone on its device after running out of memory"

# oom_always runs out of memory alone as well: failed, after two children.
mkdir -p "$TMP/s2" && export ZL_TEST_STATE_DIR="$TMP/s2"
touch "$TMP/s2/hold_good_copy"
expect_rc 1 oombatch "$TMP/o2" good_copy,oom_always 2
check "$TMP/o2" good_copy ok 1
check "$TMP/o2" oom_always failed 2
expect_in "$TMP/o2/ops_status.csv" "CUDA out of memory"

# A rerun alone waits for the operators not started yet: good_scale (after
# oom_beside in --ops) runs beside good_copy while oom_beside waits, and
# oom_beside reruns alone last. Kept at once, the device would empty for
# the rerun before good_scale (a screen's twelve children would stop for
# every child out of memory, until the slowest beside it ended).
mkdir -p "$TMP/s6" && export ZL_TEST_STATE_DIR="$TMP/s6"
touch "$TMP/s6/hold_good_copy"
expect_rc 0 oombatch "$TMP/o6" good_copy,oom_beside,good_scale 2
check "$TMP/o6" good_scale ok 1
check "$TMP/o6" oom_beside ok 2
expect_in "$TMP/out" "other children shared its device: again, alone on it"
last=$(grep -oE '\] device 0 +[a-z_]+ +ok' "$TMP/out" | tail -1 | awk '{print $4}')
[ "$last" = oom_beside ] ||
  { cat "$TMP/out" >&2; fail "the rerun alone ran before the operators not started yet: last '$last'"; }
grep -rq '"children_per_device": 1' "$TMP/o6/ops/oom_beside" ||
  fail "the rerun alone after the queue does not say one child per device"

# A retry that comes while the device is kept for a rerun alone waits for
# it: flaky (held, then failing once) ends after oom_beside ran out of
# memory beside it, with no operator left to start; its retry starts only
# once that rerun ended alone.
# Started at once, it would keep the rerun waiting until it ended (the
# rerun's row would come last).
mkdir -p "$TMP/s5" && export ZL_TEST_STATE_DIR="$TMP/s5"
touch "$TMP/s5/hold_good_copy" "$TMP/s5/hold_flaky"
timeout 120 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --devices 0 \
  --ops flaky,good_copy,oom_beside --jobs-per-device 3 --retries 1 --timeout 60 \
  --dtypes float32 --shape-file "$SH" --out "$TMP/o5" $QUICK >"$TMP/o5.out" 2>&1 &
bpid=$!
wait_until 600 held_and_rerun "$TMP/s5" flaky "$TMP/o5.out"
expect_in "$TMP/o5.out" "again, alone on it"
[ -f "$TMP/s5/held_flaky" ] || fail "flaky's first child never ran beside oom_beside"
rm -f "$TMP/s5/hold_flaky"
wait "$bpid" || { tail -30 "$TMP/o5.out" >&2; fail "the batch with a deferred retry exited $?"; }
check "$TMP/o5" flaky ok 2
check "$TMP/o5" oom_beside ok 2
expect_in "$TMP/o5.out" "flaky: transient failure on the first attempt"
order=$(grep -oE '\] device 0 +(flaky|oom_beside) +ok' "$TMP/o5.out" | awk '{print $4}' | tr '\n' ' ')
[ "$order" = "oom_beside flaky " ] ||
  { cat "$TMP/o5.out" >&2; fail "the rerun alone did not end before flaky's retry: '$order'"; }

# Stopped while a child waits to rerun alone: the batch says so, and a
# resume runs the operator again. good_scale is held (the device is never
# empty), oom_beside waits behind it when SIGINT comes.
mkdir -p "$TMP/s7" && export ZL_TEST_STATE_DIR="$TMP/s7"
touch "$TMP/s7/hold_good_copy" "$TMP/s7/hold_good_scale"
OUT="$TMP/o7"
oombatch "$OUT" good_copy,oom_beside,good_scale 2 >"$TMP/o7.out" 2>&1 &
bpid=$!
wait_until 600 held_and_rerun "$TMP/s7" good_scale "$TMP/o7.out"
[ -f "$TMP/s7/held_good_scale" ] || { kill -TERM "$(batch_pid)"; fail "good_scale never started"; }
interrupt "$TMP/o7.out"
grep -Eq '^ +device 0 +oom_beside +not finished \(operator [0-9.]+s\): it waited to run again alone on its device \(out of memory beside other children\); a resume starts it again$' \
  "$TMP/o7.out" || { cat "$TMP/o7.out" >&2; fail "the operator waiting to rerun alone is not named"; }
expect_not_in "$OUT/ops_status.csv" "oom_beside,"
rm -f "$TMP/s7/hold_good_scale"
expect_rc 0 oombatch "$OUT" good_copy,oom_beside,good_scale 2
check "$OUT" oom_beside ok 1
check "$OUT" good_scale ok 1

# A level-2 chain deferred behind a rerun alone keeps its progress when
# the batch stops: dtype_exit's all-dtypes child fails at bfloat16 while
# oom_beside waits to rerun alone and good_scale (held) keeps the device
# busy; its first per-dtype child waits, and SIGINT comes.
mkdir -p "$TMP/s8" && export ZL_TEST_STATE_DIR="$TMP/s8"
touch "$TMP/s8/hold_good_copy" "$TMP/s8/hold_good_scale" "$TMP/s8/hold_dtype_exit"
OUT="$TMP/o8"
# dtype_exit and good_scale start before oom_beside (--ops order), so that
# the narrowing its end brings leaves them running.
timeout 120 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --devices 0 \
  --ops good_copy,good_scale,dtype_exit,oom_beside --jobs-per-device 4 --retries 0 --timeout 60 \
  --shape-file "$SH" --out "$OUT" $QUICK >"$TMP/o8.out" 2>&1 &
bpid=$!
wait_until 600 held_and_rerun "$TMP/s8" good_scale "$TMP/o8.out"
wait_until 600 test -f "$TMP/s8/held_dtype_exit"
[ -f "$TMP/s8/held_dtype_exit" ] || { kill -TERM "$(batch_pid)"; fail "dtype_exit never started"; }
rm -f "$TMP/s8/hold_dtype_exit"
# Its all-dtypes child ends (bfloat16 exits); no per-dtype child follows.
no_dtype_exit_child() { [ -z "$(run_children dtype_exit)" ]; }
wait_until 300 no_dtype_exit_child
sleep 0.5
no_dtype_exit_child || { kill -TERM "$(batch_pid)"; fail "a dtype_exit child ran beside the waiting rerun"; }
interrupt "$TMP/o8.out"
grep -Eq '^ +device 0 +dtype_exit +not finished \(operator [0-9.]+s, level 2\): it waited for a rerun alone; a resume goes on from [a-z0-9]+$' \
  "$TMP/o8.out" || { cat "$TMP/o8.out" >&2; fail "the deferred level-2 chain is not named with where it resumes"; }
[ -f "$OUT/ops/dtype_exit/.progress" ] || fail "the deferred level-2 chain kept no progress"

# A device that ran out of memory takes fewer children at a time: each
# oom_crowd<N> runs out of memory where more than two of them ran at once
# (they count each other). The first four (--jobs-per-device 4) do; the
# device narrows once, to two (the other three ran out at the wider width
# and narrow nothing more); the last four then run at most two at a time
# and pass at once; the first four rerun alone. At the old width the last
# four would have run out of memory too.
mkdir -p "$TMP/s9" && export ZL_TEST_STATE_DIR="$TMP/s9"
crowd=oom_crowd1,oom_crowd2,oom_crowd3,oom_crowd4,oom_crowd5,oom_crowd6,oom_crowd7,oom_crowd8
expect_rc 0 oombatch "$TMP/o9" "$crowd" 4
for op in oom_crowd1 oom_crowd2 oom_crowd3 oom_crowd4; do check "$TMP/o9" $op ok 2; done
for op in oom_crowd5 oom_crowd6 oom_crowd7 oom_crowd8; do check "$TMP/o9" $op ok 1; done
n=$(grep -cE '^ +device 0 +out of memory with 4 children on it: at most 2 at a time from now \(--jobs-per-device 4\)$' "$TMP/out")
[ "$n" = 1 ] || { cat "$TMP/out" >&2; fail "the device narrowed to two $n times, expected once"; }
expect_not_in "$TMP/out" "at most 1 at a time"
# Two clean ends at width two: three. The reruns alone say nothing of the
# width: it never reaches four.
expect_in "$TMP/out" "2 children ended without running out of memory: at most 3 at a time from now"
expect_not_in "$TMP/out" "at most 4 at a time"
grep -q '"jobs_per_device_least": 2' "$TMP/o9/run_identity.json" ||
  fail "run_identity.json does not say the device took two children at a time at least"
grep -rq '"children_per_device": 2' "$TMP/o9/ops/oom_crowd5" ||
  fail "oom_crowd5 does not say it ran two children at a time"

# A retry waits for room on a narrowed device: oom_crowd1 (out of memory
# in every child: crowd_limit 0) runs out of memory beside
# good_copy and flaky (both held; three at a time), and the device
# narrows to one; good_scale has not started, so the device is not
# kept for the rerun alone, but flaky's retry (its first child fails once
# released) finds good_copy still running and waits. Stopped then, the
# batch names it, and keeps the attempt that flaky's unit counted: the
# resume runs its retry, not two children.
mkdir -p "$TMP/s10" && export ZL_TEST_STATE_DIR="$TMP/s10"
touch "$TMP/s10/hold_good_copy" "$TMP/s10/hold_flaky"
echo 0 >"$TMP/s10/crowd_limit"
OUT="$TMP/o10"
timeout 120 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --devices 0 \
  --ops good_copy,flaky,oom_crowd1,good_scale --jobs-per-device 3 --retries 1 --timeout 60 \
  --dtypes float32 --shape-file "$SH" --out "$OUT" $QUICK >"$TMP/o10.out" 2>&1 &
bpid=$!
narrowed() { grep -q "at most 1 at a time from now" "$TMP/o10.out"; }
wait_until 600 narrowed || { kill -TERM "$(batch_pid)"; cat "$TMP/o10.out" >&2; fail "the device never narrowed to one"; }
[ -f "$TMP/s10/held_flaky" ] || { kill -TERM "$(batch_pid)"; fail "flaky never started"; }
rm -f "$TMP/s10/hold_flaky"
flaky_failed() { grep -q "flaky: transient failure" "$TMP/o10.out"; }
wait_until 600 flaky_failed || { kill -TERM "$(batch_pid)"; cat "$TMP/o10.out" >&2; fail "flaky's first child never ended"; }
sleep 0.5
[ -z "$(run_children flaky)" ] || { kill -TERM "$(batch_pid)"; fail "flaky's retry ran beside good_copy on a device narrowed to one"; }
interrupt "$TMP/o10.out"
grep -Eq '^ +device 0 +flaky +not finished \(operator [0-9.]+s, level 1\): it waited for room on its device; a resume goes on with 1 counted attempt kept$' \
  "$TMP/o10.out" || { cat "$TMP/o10.out" >&2; fail "the retry waiting for room is not named"; }
expect_in "$OUT/ops/flaky/.progress" '"signature": "exit 9: error: flaky: transient failure on the first attempt"'
rm -f "$TMP/s10/hold_good_copy"
expect_rc 0 timeout 120 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --devices 0 \
  --ops good_copy,flaky,good_scale --jobs-per-device 1 --retries 1 --timeout 60 \
  --dtypes float32 --shape-file "$SH" --out "$OUT" $QUICK
expect_in "$TMP/out" "flaky                goes on at level 1, 1 counted attempt of the all-dtypes child kept (exit 9: error: flaky: transient failure on the first attempt)"
check "$OUT" flaky ok 2

# One child per device: nothing shared it, nothing is rerun.
mkdir -p "$TMP/s3" && export ZL_TEST_STATE_DIR="$TMP/s3"
expect_rc 1 oombatch "$TMP/o3" good_copy,oom_always 1
check "$TMP/o3" oom_always failed 1
expect_not_in "$TMP/out" "alone on it"
echo "PASS"
