# Option parsing of every command: --name value and --name=value, unknown
# options, missing values, values given to flags and bad values (exit 2
# with the option named), and --help on every command (exit 0, every option
# the command accepts described).
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
SH="$ZLB_SRC/tests/data/cli/shapes_golden.yaml"
TSH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"

# run: both forms of a value are the same option.
expect_rc 0 "$ZLBENCH" run add --backend=host --dtypes=float32 --shape-file="$SH" \
  --out="$TMP/r1" --repeat=2 --warmup-ms=1 --rep-ms 2
expect_in "$TMP/r1/run_identity.json" '"repeat": 2'
expect_rc 0 "$ZLBENCH" run add --backend host --dtypes float32 --shape-file "$SH" \
  --out "$TMP/r2" --repeat 3 $QUICK
expect_in "$TMP/r2/run_identity.json" '"repeat": 3'
# run: unknown option, missing value, value given to a flag, bad value in both forms.
expect_rc 2 "$ZLBENCH" run add --backend host --frobnicate
expect_in "$TMP/err" "unknown option '--frobnicate' for 'zlbench run' (see zlbench run --help)"
expect_rc 2 "$ZLBENCH" run add --backend host --frobnicate=3
expect_in "$TMP/err" "unknown option '--frobnicate' for 'zlbench run'"
expect_rc 2 "$ZLBENCH" run add --backend host --out
expect_in "$TMP/err" "option '--out' needs a value (--out DIR)"
expect_rc 2 "$ZLBENCH" run add --backend host --no-flush=yes
expect_in "$TMP/err" "option '--no-flush' takes no value (given 'yes')"
expect_rc 2 "$ZLBENCH" run add --backend host --repeat=zero
expect_in "$TMP/err" "invalid value 'zero' for --repeat: expected a positive integer"
expect_rc 2 "$ZLBENCH" run add --backend host --device -1
expect_in "$TMP/err" "invalid value '-1' for --device: expected a device ordinal"
# A prefix of an option is not that option.
expect_rc 2 "$ZLBENCH" run add --backend host --timeout 5
expect_in "$TMP/err" "unknown option '--timeout' for 'zlbench run'"
# An environment default gives way to the flag, and is checked where it applies.
ZL_TIMER=bogus expect_rc 0 "$ZLBENCH" plan --backend host --timer direct
ZL_TIMER=bogus expect_rc 2 "$ZLBENCH" plan --backend host
expect_in "$TMP/err" "invalid value 'bogus' for ZL_TIMER"

# batch: both forms, and the run options reach every child verbatim.
B() { "$ZLBENCH" batch --backend test --lib "$TESTOPS" --devices 0 --shape-file "$TSH" "$@"; }
expect_rc 0 B --ops=good_copy --out="$TMP/b1" --repeat=2 --warmup-ms=1 --rep-ms=2 --retries=0
expect_in "$TMP/b1/ops_status.csv" "good_copy"
expect_in "$TMP/b1/ops/good_copy/run_identity.json" '"repeat": 2'
expect_rc 0 B --ops good_copy --out "$TMP/b2" --repeat 3 $QUICK --retries 0
expect_in "$TMP/b2/ops/good_copy/run_identity.json" '"repeat": 3'
expect_rc 2 B --ops good_copy --out "$TMP/b3" --frobnicate
expect_in "$TMP/err" "unknown option '--frobnicate' for 'zlbench batch' (see zlbench batch --help)"
expect_rc 2 B --ops good_copy --out "$TMP/b3" --retries
expect_in "$TMP/err" "option '--retries' needs a value (--retries N)"
expect_rc 2 B --ops good_copy --out "$TMP/b3" --gpus
expect_in "$TMP/err" "option '--gpus' needs a value (--gpus LIST)"
expect_rc 2 B --ops good_copy --out "$TMP/b3" --force=1
expect_in "$TMP/err" "option '--force' takes no value (given '1')"
expect_rc 2 B --ops good_copy --out "$TMP/b3" --retries=many
expect_in "$TMP/err" "invalid value 'many' for --retries: expected 0..100"
expect_rc 2 B --ops good_copy --out "$TMP/b3" --timer=cudagraph
expect_in "$TMP/err" "invalid value 'cudagraph' for --timer"
expect_rc 2 B --out "$TMP/b3" good_copy
expect_in "$TMP/err" "unexpected argument 'good_copy' for 'zlbench batch'"
[ -e "$TMP/b3" ] && fail "a batch with bad options created its output folder"

# The other commands: unknown option and missing value.
for cmd in list devices plan inventory summary; do
  expect_rc 2 "$ZLBENCH" $cmd --frobnicate
  expect_in "$TMP/err" "unknown option '--frobnicate' for 'zlbench $cmd'"
done
for cmd in list devices plan inventory; do
  expect_rc 2 "$ZLBENCH" $cmd --backend
  expect_in "$TMP/err" "option '--backend' needs a value (--backend NAME)"
done
expect_rc 2 "$ZLBENCH" summary "$TMP" --out
expect_in "$TMP/err" "option '--out' needs a value (--out FILE)"
expect_rc 0 "$ZLBENCH" list --backend=host --family=softmax
expect_in "$TMP/out" "1 operator"

# --help (and -h) on every command main.c dispatches: exit 0, and every
# option its source declares is described.
cmds=$(sed -n 's/^ *{"\([a-z]*\)", zlb_cmd_[a-z]*,.*/\1/p' "$ZLB_SRC/src/cli/main.c")
[ -n "$cmds" ] || fail "no commands found in src/cli/main.c"
for cmd in $cmds; do
  for h in --help -h; do
    expect_rc 0 "$ZLBENCH" $cmd $h
    expect_in "$TMP/out" "usage: zlbench $cmd"
  done
  src="$ZLB_SRC/src/cli/cmd_$cmd.c"
  opts=$(grep -oE '"--[a-z][a-z-]*"' "$src" | tr -d '"' | sort -u)
  case $cmd in run | batch | plan) opts="$opts $(grep -oE '"--[a-z][a-z-]*"' \
    "$ZLB_SRC/src/cli/run_opts.c" | tr -d '"' | sort -u)" ;; esac
  for o in $opts --backend --lib; do
    case $cmd in summary | merge | slurm | k8s) case $o in --backend | --lib) continue ;; esac ;; esac
    grep -qE -- "(^|[ ,(])$o([ ,;)]|$)" "$TMP/out" || fail "zlbench $cmd --help does not describe $o"
  done
done
echo "ok: option parsing"
