# zlbench run on the host backend: the run.log layout against a golden file,
# identity and JSON contents, colours, --help everywhere, and bad input.
. "$(dirname "$0")/lib.sh"
GOLD="$ZLB_SRC/tests/data/cli"
SH="$GOLD/shapes_golden.yaml"

# run.log against the golden file (numbers and machine details normalised).
expect_rc 0 "$ZLBENCH" run softmax --backend host --dtypes float32,float16 --shape-file "$SH" \
  --out "$TMP/sm" --json "$TMP/sm.json" $QUICK
normalize_log "$TMP/sm/run.log" >"$TMP/sm.norm"
normalize_log "$GOLD/softmax_host.run.log.expected" >"$TMP/gold.norm"
diff -u "$TMP/gold.norm" "$TMP/sm.norm" || fail "run.log differs from the golden file"
# The terminal text is the same text.
normalize_log "$TMP/out" >"$TMP/stdout.norm"
diff -q "$TMP/stdout.norm" "$TMP/sm.norm" >/dev/null || fail "stdout and run.log differ"

# Identity: everything that makes a caliber.
for key in '"backend"' '"name": "host"' '"device"' '"uuid"' '"driver_version"' '"runtime_version"' \
  '"timer": "direct"' '"repeat": 1' '"l2"' '"autotune": "off"' \
  '"shapes"' '"key": "softmax"' '"operator"' '"git_commit"' '"argv"' '"hostname"' \
  '"started"' '"finished": "20' '"version"'; do
  expect_in "$TMP/sm/run_identity.json" "$key"
done
tr -d ' \n' <"$TMP/sm/run_identity.json" | grep -qF '"dtypes":["float16","float32"]' ||
  fail "run_identity.json lacks the dtypes float16 and float32"
# JSON results carry every sample.
expect_in "$TMP/sm.json" '"samples": ['
expect_in "$TMP/sm.json" '"sample_count"'
# Every row SUCCESS, with as many samples as its sample_count says (no
# python: the json_types helper flattens the file for awk).
: "${ZLB_JSON_TYPES:?ZLB_JSON_TYPES must point at the json_types helper}"
"$ZLB_JSON_TYPES" "$TMP/sm.json" >"$TMP/sm.flat" || fail "cannot read $TMP/sm.json"
awk '
  match($1, /^\.tables\[[0-9]+\]\.rows\[[0-9]+\]/) {
    row = substr($1, 1, RLENGTH); rest = substr($1, RLENGTH + 1)
    if (rest == ".status") { rows++; if ($3 != "SUCCESS") bad = bad " " row ":status=" $3 }
    if (rest == ".candidate.sample_count") want[row] = $3
    if (rest ~ /^\.candidate\.samples\[[0-9]+\]$/) got[row]++
  }
  END {
    if (rows != 4) bad = bad " rows=" rows
    for (r in want) if (want[r] <= 0 || got[r] != want[r]) bad = bad " " r ":samples=" got[r] "/" want[r]
    if (bad != "") { print bad; exit 1 }
  }' "$TMP/sm.flat" >"$TMP/sm.bad" || fail "JSON results incomplete:$(cat "$TMP/sm.bad")"

# Colours: only when asked (or on a terminal), never in run.log, never with NO_COLOR.
env -u NO_COLOR "$ZLBENCH" run add --backend host --shape-file "$SH" --dtypes float32 --out "$TMP/c1" \
  --color always $QUICK >"$TMP/c1.out" 2>&1 || fail "colour run failed"
grep -q $'\033\[' "$TMP/c1.out" || fail "--color always printed no colour"
grep -q $'\033\[' "$TMP/c1/run.log" && fail "ANSI codes in run.log"
NO_COLOR=1 "$ZLBENCH" run add --backend host --shape-file "$SH" --dtypes float32 --out "$TMP/c2" \
  --color always $QUICK >"$TMP/c2.out" 2>&1 || fail "NO_COLOR run failed"
grep -q $'\033\[' "$TMP/c2.out" && fail "colour despite NO_COLOR"

# --help on every command.
for cmd in run batch summary list devices plan inventory; do
  expect_rc 0 "$ZLBENCH" $cmd --help
  expect_in "$TMP/out" "usage: zlbench $cmd"
done
expect_rc 0 "$ZLBENCH" --help
expect_in "$TMP/out" "commands:"
expect_rc 2 "$ZLBENCH" frobnicate
expect_in "$TMP/err" "unknown command 'frobnicate'"

# Bad input: clear errors, the right exit codes.
expect_rc 2 "$ZLBENCH" run sotfmax --backend host --out "$TMP/x"
expect_in "$TMP/err" "unknown operator 'sotfmax' for backend 'host'; did you mean: softmax"
printf 'softmax:\n  shapes:\n    - [64, -1]\n' >"$TMP/neg.yaml"
expect_rc 2 "$ZLBENCH" run softmax --backend host --shape-file "$TMP/neg.yaml" --out "$TMP/x"
expect_in "$TMP/err" "neg.yaml:3: shape [64, -1] extent #2: -1 is out of range (0..281474976710656)"
printf 'softmax:\n  shapes: [[64, 64]\n' >"$TMP/bad.yaml"
expect_rc 2 "$ZLBENCH" run softmax --backend host --shape-file "$TMP/bad.yaml" --out "$TMP/x"
expect_in "$TMP/err" "bad.yaml:2:"
expect_rc 2 "$ZLBENCH" run softmax --backend host --dtypes float8 --out "$TMP/x"
expect_in "$TMP/err" "unknown dtype 'float8'"
expect_rc 2 "$ZLBENCH" run softmax --backend host --dtypes int64 --out "$TMP/x"
expect_in "$TMP/err" "supports none of the requested dtypes"
expect_rc 2 "$ZLBENCH" run softmax --timer cudagraph
expect_in "$TMP/err" "invalid value 'cudagraph' for --timer"
expect_rc 2 "$ZLBENCH" run softmax --backend opencl
expect_in "$TMP/err" "unknown backend 'opencl'; valid backends: auto, cuda (nvidia, gpu)"
expect_rc 3 "$ZLBENCH" run softmax --backend rocm
expect_in "$TMP/err" "libamdhip64.so"
echo x >"$TMP/file"
expect_rc 6 "$ZLBENCH" run softmax --backend host --out "$TMP/file/sub" $QUICK
expect_in "$TMP/err" "$TMP/file/sub"
expect_rc 2 "$ZLBENCH" run
expect_in "$TMP/err" "no operator given"
# The host row operators work along the last dim: another dim fails its
# row (exit 1), naming operator and dim, and the other rows still run.
printf 'sort:\n  shapes: [[[4, 8], 0], [[4, 8], -1]]\n' >"$TMP/dim.yaml"
expect_rc 1 "$ZLBENCH" run sort --backend host --shape-file "$TMP/dim.yaml" --dtypes float32 \
  --out "$TMP/dim" $QUICK
expect_in "$TMP/out" "sort: dim=0 is not supported; the host operator works along the last dim (dim=-1)"
expect_in "$TMP/dim/run.log" "[4, 8], dim=-1"
expect_in "$TMP/out" "2 rows, 1 SUCCESS, 1 FAILED"

grep -q 'dtypes not run' "$TMP/sm/run.log" && fail "a dtype softmax has was said not run"
# A requested dtype the operator lacks is said, not dropped without a word.
expect_rc 0 "$ZLBENCH" run softmax --backend host --dtypes float32,int32 --shape-file "$SH" \
  --out "$TMP/sm-int" $QUICK
expect_in "$TMP/out" "dtypes not run: int32 (softmax does not have it)"
expect_in "$TMP/sm-int/run.log" "dtypes not run: int32"

# The curated inventory matches what the host library registers.
expect_rc 0 "$ZLBENCH" inventory --check --backend host
expect_in "$TMP/out" "host: 15 listed, ok"
# A misspelt backend fails the check instead of passing with nothing in it,
# and --check with --registered is refused instead of ignoring --check.
expect_rc 2 "$ZLBENCH" inventory --check --backend hots
expect_in "$TMP/err" "unknown backend 'hots'"
expect_rc 2 "$ZLBENCH" inventory --check --registered --backend host
expect_in "$TMP/err" "--check and --registered are alternatives"
# The listing commands work without a GPU.
expect_rc 0 "$ZLBENCH" list --backend host
expect_in "$TMP/out" "softmax          softmax"
# A backend a --lib adds is listed (it was "unknown backend"), --family
# filters --families too, and a family nothing has is an error, not "0".
expect_rc 0 "$ZLBENCH" list --backend test --lib "$ZLB_TEST_OPS"
expect_in "$TMP/out" "good_copy"
expect_rc 0 "$ZLBENCH" list --families --family reduction --backend host
expect_in "$TMP/out" "reduction"
[ "$(wc -l <"$TMP/out")" = 2 ] || fail "list --families --family: $(cat "$TMP/out")"
expect_rc 2 "$ZLBENCH" list --family no_such_family --backend host
expect_in "$TMP/err" "no operator of family 'no_such_family'"
# A family only another loaded backend has is none of this backend's.
expect_rc 2 "$ZLBENCH" list --family test --backend host --lib "$ZLB_TEST_OPS"
expect_in "$TMP/err" "no operator of family 'test'"
expect_rc 0 "$ZLBENCH" devices --backend host
expect_in "$TMP/out" "host (CPU)"
expect_rc 0 "$ZLBENCH" plan softmax --backend host
expect_in "$TMP/out" "timer:        direct"
expect_rc 0 "$ZLBENCH" plan --backend cuda
expect_in "$TMP/out" "timer:        graph"
echo "ok: run on the host backend"
