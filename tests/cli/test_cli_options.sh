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
# Word options: each word sets its own value (the identity says which);
# any other word is refused, naming the words.
expect_rc 0 "$ZLBENCH" run add --backend host --dtypes float32 --shape-file "$SH" \
  --out "$TMP/w1" --level comprehensive --l2 cold $QUICK
expect_in "$TMP/w1/run_identity.json" '"level": "comprehensive"'
expect_in "$TMP/w1/run_identity.json" '"l2_mode": "cold"'
expect_rc 0 "$ZLBENCH" run add --backend host --dtypes float32 --shape-file "$SH" \
  --out "$TMP/w2" --level core --l2 warm $QUICK
expect_in "$TMP/w2/run_identity.json" '"level": "core"'
expect_in "$TMP/w2/run_identity.json" '"l2_mode": "warm"'
expect_rc 2 "$ZLBENCH" run add --backend host --level deep
expect_in "$TMP/err" "invalid value 'deep' for --level: expected core or comprehensive"
expect_rc 2 "$ZLBENCH" run add --backend host --l2 hot
expect_in "$TMP/err" "invalid value 'hot' for --l2: expected cold or warm"
ZL_L2=hot expect_rc 2 "$ZLBENCH" plan --backend host
expect_in "$TMP/err" "invalid value 'hot' for ZL_L2: expected cold or warm"
expect_rc 2 "$ZLBENCH" plan --backend host --timer trace --trace-flush sideways
expect_in "$TMP/err" "invalid value 'sideways' for --trace-flush: expected waited or queued"
# A prefix of an option is not that option.
expect_rc 2 "$ZLBENCH" run add --backend host --timeout 5
expect_in "$TMP/err" "unknown option '--timeout' for 'zlbench run'"
# An environment default gives way to the flag, and is checked where it applies.
ZL_TIMER=bogus expect_rc 0 "$ZLBENCH" plan --backend host --timer direct
ZL_TIMER=bogus expect_rc 2 "$ZLBENCH" plan --backend host
expect_in "$TMP/err" "invalid value 'bogus' for ZL_TIMER"

# Floating-point values mean a number: nan, inf, blanks and trailing text
# are refused (nan used to run each row with one sample), for every such
# option and environment default; above the maximum, the maximum is named.
for v in nan NaN inf -inf 1e999 1e-400 0x10 -0X1p3 "5 " " 5" 5ms 0x; do
  for o in --rep-ms --warmup-ms --min-time-ms --timeout-ms --queue-timeout-ms \
    --queue-batch-ms --graph-replay-ms --max-noise --quantiles; do
    # list items are trimmed: " 5" is the quantile 5, refused as above 1
    case "$o:$v" in "--quantiles:5 " | "--quantiles: 5") continue ;; esac
    expect_rc 2 "$ZLBENCH" run add --backend host "$o" "$v"
    expect_in "$TMP/err" "invalid value '$v' for $o: expected"
  done
done
ZL_REP_MS=nan expect_rc 2 "$ZLBENCH" plan --backend host
expect_in "$TMP/err" "invalid value 'nan' for ZL_REP_MS: expected a non-negative number"
ZL_WARMUP_MS=inf expect_rc 2 "$ZLBENCH" plan --backend host
expect_in "$TMP/err" "invalid value 'inf' for ZL_WARMUP_MS"
expect_rc 2 "$ZLBENCH" run add --backend host --rep-ms 1e9
expect_in "$TMP/err" "invalid value '1e9' for --rep-ms: above the maximum 10000000 ms"
expect_rc 2 "$ZLBENCH" run add --backend host --max-noise 200
expect_in "$TMP/err" "invalid value '200' for --max-noise: above the maximum 100 %"
expect_rc 2 "$ZLBENCH" run add --backend host --quantiles 0.5,1.5
expect_in "$TMP/err" "invalid value '1.5' for --quantiles: above the maximum 1"
expect_rc 2 "$ZLBENCH" batch --backend host --ops add --timeout inf --out "$TMP/bt"
expect_in "$TMP/err" "invalid value 'inf' for --timeout: expected a positive number of seconds"
expect_rc 2 "$ZLBENCH" batch --backend host --ops add --timeout nan --out "$TMP/bt"
expect_in "$TMP/err" "invalid value 'nan' for --timeout"
expect_rc 2 "$ZLBENCH" compare --threshold nan "$TMP/a" "$TMP/b"
expect_in "$TMP/err" "invalid value 'nan' for --threshold"
[ -e "$TMP/bt" ] && fail "a batch with a bad --timeout created its output folder"
# Integers: the range is named, and one beyond 64 bits is refused, not wrapped.
expect_rc 2 "$ZLBENCH" run add --backend host --seed 99999999999999999999999
expect_in "$TMP/err" "invalid value '99999999999999999999999' for --seed: expected an integer in 0..9223372036854775807"
expect_rc 2 "$ZLBENCH" run add --backend host --seed -1
expect_in "$TMP/err" "invalid value '-1' for --seed"
expect_rc 2 "$ZLBENCH" run add --backend host --seed 9223372036854775808
expect_in "$TMP/err" "invalid value '9223372036854775808' for --seed"
ZL_SEED=' 7' expect_rc 2 "$ZLBENCH" plan --backend host
expect_in "$TMP/err" "invalid value ' 7' for ZL_SEED"
expect_rc 0 "$ZLBENCH" run add --backend host --dtypes float32 --shape-file "$SH" \
  --out "$TMP/sd" --seed 9223372036854775807 $QUICK
expect_in "$TMP/sd/run_identity.json" '"seed": 9223372036854775807'
expect_rc 2 "$ZLBENCH" run add --backend host --repeat 99999999999999999999
expect_in "$TMP/err" "invalid value '99999999999999999999' for --repeat: expected a positive integer (1..1000000)"
expect_rc 2 "$ZLBENCH" run add --backend host --device 99999999999999999999
expect_in "$TMP/err" "for --device: expected a device ordinal (0..4096)"
expect_rc 2 "$ZLBENCH" batch --backend host --ops add --retries 18446744073709551617
expect_in "$TMP/err" "invalid value '18446744073709551617' for --retries: expected 0..100"

# An empty value is an error naming the option, in both forms: it used to
# mean "not given" (--ops '' screened the whole inventory).
for o in --backend --shape-file --out --dtypes --timer --deny-file --json --lib; do
  expect_rc 2 "$ZLBENCH" run add "$o" ''
  expect_in "$TMP/err" "$o: empty value"
  expect_rc 2 "$ZLBENCH" run add "$o="
  expect_in "$TMP/err" "$o: empty value"
done
for o in --ops --devices --gpus --out --inventory --shard --replay --shape-file --backend; do
  expect_rc 2 "$ZLBENCH" batch "$o" '' --out "$TMP/be"
  expect_in "$TMP/err" "$o: empty value"
done
# --replay OP=DIR: neither part empty, DIR a folder.
expect_rc 2 "$ZLBENCH" batch --backend host --ops relu --replay 'relu=' --out "$TMP/be"
expect_in "$TMP/err" "invalid value 'relu=' for --replay"
expect_rc 2 "$ZLBENCH" batch --backend host --ops relu --replay "relu=$TMP/nowhere" --out "$TMP/be"
expect_in "$TMP/err" "--replay: '$TMP/nowhere' is not a folder"
expect_rc 2 "$ZLBENCH" batch --backend host --ops ',' --out "$TMP/be"
expect_in "$TMP/err" "--ops: empty item in ','"
expect_rc 2 "$ZLBENCH" batch --backend host --ops 'add,,mul' --out "$TMP/be"
expect_in "$TMP/err" "--ops: empty item in 'add,,mul'"
expect_rc 2 "$ZLBENCH" batch --backend host --ops add --devices '0,' --out "$TMP/be"
expect_in "$TMP/err" "--devices: empty item in '0,'"
expect_rc 2 "$ZLBENCH" run add --backend host --quantiles '0.5,,0.9'
expect_in "$TMP/err" "--quantiles: empty item in '0.5,,0.9'"
expect_rc 2 "$ZLBENCH" plan add --backend host --dtypes 'float32,'
expect_in "$TMP/err" "--dtypes: empty item in dtype list 'float32,'"
DTYPES='float32,,float16' expect_rc 2 "$ZLBENCH" plan add --backend host
expect_in "$TMP/err" "DTYPES: empty item in dtype list 'float32,,float16'"
[ -e "$TMP/be" ] && fail "a batch with an empty option value created its output folder"
for cmd in list plan inventory devices; do
  expect_rc 2 "$ZLBENCH" $cmd --backend=
  expect_in "$TMP/err" "--backend: empty value"
done
expect_rc 2 "$ZLBENCH" summary "$TMP" --out ''
expect_in "$TMP/err" "--out: empty value"
expect_rc 2 "$ZLBENCH" compare "$TMP/a" "$TMP/b" --format=
expect_in "$TMP/err" "--format: empty value"
# An empty environment variable still means unset (the shell convention).
ZL_BACKEND= ZL_SHAPE_FILE= ZL_REP_MS= expect_rc 0 "$ZLBENCH" plan --backend host

# Operator libraries: a file that is no shared library is bad input (exit
# 2, the path and the loader's words), like a missing one; a folder
# without any operator library is named as such, not as an unknown operator.
echo x >"$TMP/fake.so"
( cd "$TMP" && expect_rc 2 "$ZLBENCH" run add --backend host --lib fake.so ) || exit 1
expect_in "$TMP/err" "cannot load operator library 'fake.so': not an ELF shared library ("
expect_in "$TMP/err" "file too short)"
ZL_OP_LIBS="$TMP/fake.so" expect_rc 2 "$ZLBENCH" run add --backend host
expect_in "$TMP/err" "ZL_OP_LIBS: cannot load operator library '$TMP/fake.so': not an ELF shared library"
expect_rc 2 "$ZLBENCH" run add --backend host --lib "$TMP"
expect_in "$TMP/err" "cannot load operator library '$TMP': not a regular file"
expect_rc 2 "$ZLBENCH" run add --backend host --lib "$(command -v sh)"
expect_in "$TMP/err" "cannot load operator library '$(command -v sh)': "
expect_rc 2 "$ZLBENCH" run add --backend host --lib "$TMP/missing.so"
expect_in "$TMP/err" "operator library '$TMP/missing.so' does not exist"
mkdir "$TMP/nolibs"
ZL_LIB_DIR="$TMP/nolibs" expect_rc 2 "$ZLBENCH" run relu --backend host
expect_in "$TMP/err" "unknown operator 'relu': no operator library found in ZL_LIB_DIR=$TMP/nolibs (expected libzlb_ops_host.so"
ZL_LIB_DIR="$TMP/nolibs" expect_rc 2 "$ZLBENCH" plan relu --backend host
expect_in "$TMP/err" "no operator library found in ZL_LIB_DIR=$TMP/nolibs"
# batch says the same, not "registered: none", and makes no folder.
ZL_LIB_DIR="$TMP/nolibs" expect_rc 2 "$ZLBENCH" batch --ops relu --backend host --out "$TMP/nolibs-out"
expect_in "$TMP/err" "backend 'host' has no operator registered, since ZL_LIB_DIR=$TMP/nolibs holds no libzlb_ops_host.so"
[ -e "$TMP/nolibs-out" ] && fail "a batch refused for its library left an output folder"
# The same without --ops (the selection from the inventory).
ZL_LIB_DIR="$TMP/nolibs" expect_rc 2 "$ZLBENCH" batch --backend host --out "$TMP/nolibs-out"
expect_in "$TMP/err" "since ZL_LIB_DIR=$TMP/nolibs holds no libzlb_ops_host.so"

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

# devices --count prints "NAME N" (batch reads it): not with --json.
expect_rc 2 "$ZLBENCH" devices --backend host --count --json
expect_in "$TMP/err" "--count and --json are alternatives"
# `zlbench help CMD` is CMD's own help; an unknown CMD is an error.
expect_rc 0 "$ZLBENCH" help run
expect_in "$TMP/out" "usage: zlbench run OP"
expect_rc 2 "$ZLBENCH" help frobnicate
expect_in "$TMP/err" "unknown command 'frobnicate'"

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
  case $cmd in compare | report | history) opts="$opts $(grep -oE '"--[a-z][a-z-]*"' \
    "$ZLB_SRC/src/cli/cmp_opts.c" | tr -d '"' | sort -u)" ;; esac
  for o in $opts --backend --lib; do
    case $cmd in summary | merge | slurm | k8s | compare | report | history)
      case $o in --backend | --lib) continue ;; esac ;;
    esac
    grep -qE -- "(^|[ ,(])$o([ ,;)]|$)" "$TMP/out" || fail "zlbench $cmd --help does not describe $o"
  done
done
# Positional folders: an empty one is refused (merge took '' for the
# current folder's child and failed writing, exit 6); report names what
# is wrong with its arguments.
mkdir -p "$TMP/rp1" "$TMP/rp2"
expect_rc 2 "$ZLBENCH" merge '' "$TMP/rp1" "$TMP/rp2"
expect_in "$TMP/err" "merge: an empty folder name (argument 1)"
expect_rc 2 "$ZLBENCH" merge "$TMP/mo" "$TMP/rp1" ''
expect_in "$TMP/err" "merge: an empty folder name (argument 3)"
[ -e "$TMP/mo" ] && fail "a refused merge created its output folder"
expect_rc 2 "$ZLBENCH" report "$TMP/rp1" "$TMP/rp2"
expect_in "$TMP/err" "report: give one run or batch folder (2 given)"
expect_rc 2 "$ZLBENCH" report "$TMP/nowhere"
expect_in "$TMP/err" "report: '$TMP/nowhere' is not a folder"
echo "ok: option parsing"
