# A unit's --retries span calls: a batch stopped while a unit waits for or
# runs its retry keeps what the unit counted (ops/<op>/.progress
# "current"), and the resume spends only what is left. Without it a unit
# whose every child times out, in calls too short for its retry, starts
# afresh each call and never gets a status.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
SH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
# hangbatch OUT DTYPES TIMEOUT: `hang` (every child hangs) with one retry.
hangbatch() {
  timeout 120 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --devices 0 --ops hang \
    --dtypes "$2" --retries 1 --timeout "$3" --grace 0.2 --shape-file "$SH" --out "$1" $QUICK
}
# interrupt_at OUT LOG ATTEMPT: SIGINT to the batch once its attempt folder
# ATTEMPT (e.g. 2-all) exists, i.e. while that child runs; exit 130.
interrupt_at() {
  local i
  for i in $(seq 1 300); do
    [ -d "$1/ops/hang/attempts/$3" ] && [ -n "$(run_children hang)" ] && break
    sleep 0.05
  done
  [ -d "$1/ops/hang/attempts/$3" ] || { kill -TERM "$(batch_pid)"; cat "$2" >&2; fail "attempt $3 never started"; }
  kill -INT "$(batch_pid)"
  wait "$bpid"
  local rc=$?
  [ "$rc" = 130 ] || { cat "$2" >&2; fail "the interrupted batch exited $rc, expected 130"; }
}
# retried LOG LABEL: how many of that unit's children LOG says were
# retried (a unit's last child has no line of its own: the row, or the
# next dtype, follows).
retried() { grep -cE "hang +attempt [0-9]+ \($2\) .*; retrying$" "$1"; }

# ---- level 1: one dtype, so no split: the all-dtypes child is the unit ----
# Attempt 1 times out (counted), its retry is interrupted. The resume runs
# one child, not two: the second timeout ends the unit.
OUT="$TMP/l1"
hangbatch "$OUT" float32 1 >"$TMP/l1.out" 2>&1 &
bpid=$!
interrupt_at "$OUT" "$TMP/l1.out" 2-all
grep -Eq '^ +device 0 +hang +stopped after [0-9.]+s \(operator [0-9.]+s, level 1\): a resume goes on with 1 counted attempt kept$' \
  "$TMP/l1.out" || { cat "$TMP/l1.out" >&2; fail "the stop does not say what is kept"; }
expect_in "$OUT/ops/hang/.progress" '"level": 1'
expect_in "$OUT/ops/hang/.progress" '"attempts": 1,'
expect_in "$OUT/ops/hang/.progress" '"signature": "timeout"'
expect_not_in "$OUT/ops_status.csv" "hang,"
expect_rc 1 hangbatch "$OUT" float32 1
expect_in "$TMP/out" "hang                 goes on at level 1, 1 counted attempt of the all-dtypes child kept (timeout)"
[ "$(retried "$TMP/out" float32)" = 0 ] ||
  { cat "$TMP/out" >&2; fail "the resume retried the unit whose one retry was spent"; }
[ "$(csv_field "$OUT/ops_status.csv" hang status)" = timeout ] || fail "hang: $(csv_field "$OUT/ops_status.csv" hang status)"
# Two before (one of them interrupted) and one now; a fresh start would
# have run two now.
[ "$(csv_field "$OUT/ops_status.csv" hang attempts)" = 3 ] ||
  fail "hang attempts: $(csv_field "$OUT/ops_status.csv" hang attempts), expected 3"
[ -f "$OUT/ops/hang/.progress" ] && fail "the progress file outlived the resume"

# ---- level 2: the dtype being run keeps its count ----------------------------
# The all-dtypes child times out (split at once), float16's first child
# times out (counted), its retry is interrupted. The resume runs float16
# once more and float32 with its own two.
OUT="$TMP/l2"
hangbatch "$OUT" float16,float32 1 >"$TMP/l2.out" 2>&1 &
bpid=$!
interrupt_at "$OUT" "$TMP/l2.out" 3-float16
expect_in "$TMP/l2.out" "a resume goes on from float16 (1 counted attempt kept)"
expect_in "$OUT/ops/hang/.progress" '"label": "float16",'
expect_rc 1 hangbatch "$OUT" float16,float32 1
expect_in "$TMP/out" "goes on at level 2 from float16 (0 of 2 dtypes done before), 1 counted attempt of float16 kept (timeout)"
# float16's last child has a line of its own, numbered on from the
# attempt kept, before float32 starts.
grep -Eq '^ +device 0 +hang +attempt 2 \(float16\) after [0-9.]+s: timeout; float32 next$' "$TMP/out" ||
  { cat "$TMP/out" >&2; fail "float16's end before float32 is not said"; }
[ "$(retried "$TMP/out" float16)" = 0 ] ||
  { cat "$TMP/out" >&2; fail "float16 was retried on resume, its one retry spent before"; }
[ "$(retried "$TMP/out" float32)" = 1 ] ||
  { cat "$TMP/out" >&2; fail "float32 was not given its own retry"; }
[ "$(csv_field "$OUT/ops_status.csv" hang status)" = timeout ] || fail "hang: $(csv_field "$OUT/ops_status.csv" hang status)"
[ "$(csv_field "$OUT/ops_status.csv" hang attempts)" = 6 ] ||
  fail "hang attempts: $(csv_field "$OUT/ops_status.csv" hang attempts), expected 3 before + 1 + 2"

# ---- a "current" that does not fit is refused, and the operator starts over ----
# Another unit's label; more attempts than the operator ever ran.
n=0
for edit in 's/"label": "all"/"label": "float32"/' 's/"attempts": 1,/"attempts": 99,/'; do
  n=$((n + 1))
  OUT="$TMP/l3-$n"
  hangbatch "$OUT" float32 1 >"$TMP/l3-$n.out" 2>&1 &
  bpid=$!
  interrupt_at "$OUT" "$TMP/l3-$n.out" 2-all
  sed -i "$edit" "$OUT/ops/hang/.progress"
  expect_rc 1 hangbatch "$OUT" float32 1
  expect_in "$TMP/out" "hang                 starts over: its .progress is a level-1 file without a valid 'current'"
  [ "$(retried "$TMP/out" float32)" = 1 ] || fail "a refused progress file ($edit) still cut the retries"
done
# ---- the words kept are shown, never obeyed ------------------------------------
# A child's error line with escape sequences reaches the terminal, the
# status file and .progress as visible escapes; a hand-made .progress
# with raw ones too.
mkdir -p "$TMP/state" && export ZL_TEST_STATE_DIR="$TMP/state"
printf 'error: \033[31mred\033]0;title\007 \342\200\256gnp.exe' >"$TMP/state/always_fail_line"
expect_rc 1 timeout 60 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --devices 0 --ops always_fail \
  --dtypes float32 --retries 0 --shape-file "$SH" --out "$TMP/h" $QUICK
for f in "$TMP/out" "$TMP/h/ops_status.csv"; do
  grep -q "$(printf '\033')" "$f" && fail "$f holds a raw escape character"
  grep -q "$(printf '\342\200\256')" "$f" && fail "$f holds a raw right-to-left override"
done
expect_in "$TMP/h/ops_status.csv" 'error: \x1b[31mred\x1b]0;title\x07 \xe2\x80\xaegnp.exe'
OUT="$TMP/h2"
hangbatch "$OUT" float32 1 >"$TMP/h2.out" 2>&1 &
bpid=$!
interrupt_at "$OUT" "$TMP/h2.out" 2-all
sed -i 's/"signature": "timeout"/"signature": "timeout \\u001b[2J"/' "$OUT/ops/hang/.progress"
expect_in "$OUT/ops/hang/.progress" 'timeout \u001b[2J'
expect_rc 1 hangbatch "$OUT" float32 1
expect_in "$TMP/out" 'kept (timeout \x1b[2J)'
grep -q "$(printf '\033')" "$TMP/out" && fail "a raw escape from .progress reached the terminal"
echo "ok: a unit's retries span a resume"
