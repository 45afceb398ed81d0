# Bad input gets a clear error naming file, line and problem, an exit code
# of 2 (6 for an unwritable folder), and writes nothing misleading.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
B() { "$ZLBENCH" batch --backend test --lib "$TESTOPS" $QUICK "$@"; }

# A dismissal without a reason.
cat >"$TMP/inv.yaml" <<'Y'
test: [good_copy, good_scale]
Y
cat >"$TMP/dismiss.yaml" <<'Y'
dismissed:
  - op: good_scale
    reason: "covered by good_copy"
  - op: good_copy
Y
expect_rc 2 B --inventory "$TMP/inv.yaml" --dismiss "$TMP/dismiss.yaml" --out "$TMP/o1"
expect_in "$TMP/err" "dismiss.yaml:4: dismissal of 'good_copy' has no reason"
[ -e "$TMP/o1/ops_status.csv" ] && fail "ops_status.csv written despite the input error"
[ -e "$TMP/o1/ops" ] && fail "operators ran despite the input error"

# With reasons, the dismissed operator is left out.
cat >"$TMP/dismiss.yaml" <<'Y'
dismissed:
  - op: good_scale
    reason: "covered by good_copy"
Y
expect_rc 0 B --inventory "$TMP/inv.yaml" --dismiss "$TMP/dismiss.yaml" --out "$TMP/o2" \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
[ -f "$TMP/o2/ops/good_copy/.complete" ] || fail "good_copy did not run"
[ -e "$TMP/o2/ops/good_scale" ] && fail "dismissed good_scale ran"

# A malformed YAML inventory.
printf 'test:\n  - good_copy\n  - [unterminated\n' >"$TMP/bad.yaml"
expect_rc 2 B --inventory "$TMP/bad.yaml" --out "$TMP/o3"
expect_in "$TMP/err" "bad.yaml:3:"
[ -e "$TMP/o3/ops_status.csv" ] && fail "ops_status.csv written for a malformed inventory"

# An inventory entry nothing registers.
printf 'test: [good_copy, no_such_op]\n' >"$TMP/inv2.yaml"
expect_rc 2 B --inventory "$TMP/inv2.yaml" --out "$TMP/o4"
expect_in "$TMP/err" "operator 'no_such_op'"

# An unknown operator.
expect_rc 2 B --ops good_copy,no_such_op --out "$TMP/o5"
expect_in "$TMP/err" "unknown operator 'no_such_op' for backend 'test'"
[ -e "$TMP/o5/ops" ] && fail "operators ran despite an unknown operator"

# An unknown backend.
expect_rc 2 "$ZLBENCH" batch --backend opencl --out "$TMP/o6"
expect_in "$TMP/err" "unknown backend 'opencl'"

# An unwritable output folder (a regular file where the folder should be).
echo x >"$TMP/file"
expect_rc 6 B --ops good_copy --out "$TMP/file/sub"
expect_in "$TMP/err" "$TMP/file/sub"

# Results already written are not damaged by a failing rerun.
cp "$TMP/o2/ops_status.csv" "$TMP/status.before"
expect_rc 2 B --ops good_copy,no_such_op --out "$TMP/o2"
cmp "$TMP/o2/ops_status.csv" "$TMP/status.before" || fail "a failed rerun changed ops_status.csv"

# Bad flag values.
expect_rc 2 B --timeout -3 --out "$TMP/o7"
expect_in "$TMP/err" "invalid value '-3' for --timeout"
expect_rc 2 B --repeat zero --out "$TMP/o7"
expect_in "$TMP/err" "invalid value 'zero' for --repeat"
expect_rc 2 B --shard 3/2 --out "$TMP/o7"
expect_in "$TMP/err" "invalid --shard '3/2'"
# The live display (forced on: no terminal here): per-device lines with
# done/total, failures, elapsed and ETA, redrawn in place.
expect_rc 0 B --ops good_copy,good_scale --progress always --out "$TMP/live" \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
grep -q $'\033\[' "$TMP/out" || fail "--progress always drew nothing"
expect_in "$TMP/out" "failed 0"
expect_in "$TMP/out" " eta "
# Without a terminal, plain lines, one per operator.
expect_rc 0 B --ops good_copy,good_scale --out "$TMP/plain" \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
grep -q $'\033\[' "$TMP/out" && fail "escape codes without a terminal"
[ "$(grep -c '^\[ *[0-9]*/2\] device' "$TMP/out")" = 2 ] || fail "not one line per operator"
# A malformed shape or deny file is one error naming file and line, exit
# 2, before any child runs (not a usage_error in every operator's child).
printf 'test:\n  shapes:\n    - [4096\n' >"$TMP/bad.yaml"
expect_rc 2 B --ops good_copy,good_scale --shape-file "$TMP/bad.yaml" --out "$TMP/o3"
expect_in "$TMP/err" "bad.yaml:3:"
[ -e "$TMP/o3/ops" ] && fail "operators ran despite a malformed shape file"
printf 'test:\n  shapes:\n    - [a, 64]\n' >"$TMP/bad2.yaml"
expect_rc 2 B --ops good_copy --shape-file "$TMP/bad2.yaml" --out "$TMP/o4"
expect_in "$TMP/err" "bad2.yaml:3:"
[ -e "$TMP/o4/ops" ] && fail "operators ran despite a bad shape"
printf 'denied: [good_copy\n' >"$TMP/deny.yaml"
expect_rc 2 B --ops good_copy --deny-file "$TMP/deny.yaml" --out "$TMP/o5" \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
expect_in "$TMP/err" "deny.yaml:"
[ -e "$TMP/o5/ops" ] && fail "operators ran despite a malformed deny file"
# A device given twice is named.
expect_rc 2 B --ops good_copy --devices 0,0 --out "$TMP/o6"
expect_in "$TMP/err" "--devices: device 0 given twice"
# A batch refused before anything ran leaves no output folder it created
# (it held only batch.lock), and a folder that existed stays.
[ -e "$TMP/o6" ] && fail "a refused batch left its new output folder behind: $(ls -A "$TMP/o6")"
expect_rc 2 B --ops good_copy --devices 7 --out "$TMP/o7"
[ -e "$TMP/o7" ] && fail "a batch refused for its devices left its new output folder behind"
mkdir -p "$TMP/o8"
expect_rc 2 B --ops good_copy --devices 7 --out "$TMP/o8"
[ -d "$TMP/o8" ] || fail "a refused batch removed a folder that was there before"
# An output folder whose ops/ is a link, or that holds an ops/ no batch
# made (no run_identity.json), is refused before anything is written: a
# batch replaces operators' folders, and must not through a link or in
# someone else's folder. A replay through such a link is refused too.
mkdir -p "$TMP/elsewhere/good_copy" "$TMP/o9" "$TMP/o10/ops/good_copy"
echo mine >"$TMP/elsewhere/good_copy/mine.txt"
echo mine >"$TMP/o10/ops/good_copy/mine.txt"
ln -s ../elsewhere "$TMP/o9/ops"
expect_rc 2 B --ops good_copy --out "$TMP/o9"
expect_in "$TMP/err" "o9/ops' is a symbolic link"
expect_rc 2 B --ops good_copy --out "$TMP/o10"
expect_in "$TMP/err" "holds an ops/ folder but no run_identity.json"
[ "$(cat "$TMP/elsewhere/good_copy/mine.txt" "$TMP/o10/ops/good_copy/mine.txt")" = "mine
mine" ] || fail "a refused batch removed files of a folder it did not make"
[ -e "$TMP/o9/run_identity.json" ] || [ -e "$TMP/o10/run_identity.json" ] &&
  fail "a refused batch wrote its identity"
expect_rc 0 B --ops good_copy --out "$TMP/o11" --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
cp -p "$TMP/o11/ops/good_copy/.complete" "$TMP/complete.before"
mkdir -p "$TMP/o12" && ln -s ../o11/ops "$TMP/o12/ops"
expect_rc 2 B --ops good_copy --out "$TMP/o12" --replay-from "$TMP/o11" --force
cmp -s "$TMP/complete.before" "$TMP/o11/ops/good_copy/.complete" ||
  fail "a replay through a linked ops/ rewrote the source's .complete"
[ -d "$TMP/o11/ops/good_copy/attempts" ] || fail "a replay through a linked ops/ removed the source's attempts"
# A batch's own folder goes on as before.
expect_rc 0 B --ops good_copy --out "$TMP/o11" --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
expect_in "$TMP/out" "1 resumed"
echo "ok: batch input errors and display"
