# Shared by the CLI tests: paths, a scratch folder, assertions.
# ctest sets ZLBENCH (the binary), ZLB_SRC, ZLB_BUILD and ZLB_TEST_OPS.
set -u
: "${ZLBENCH:?ZLBENCH must point at the zlbench binary}"
: "${ZLB_SRC:?ZLB_SRC must point at the source tree}"
TESTOPS=${ZLB_TEST_OPS:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/zlbench-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export NO_COLOR=1
# Small budgets: these tests check behaviour, not numbers.
QUICK="--warmup-ms 1 --rep-ms 2"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# all_sides JSON EXPR: JSON (a --json file) has rows, and EXPR, Python over
# `m` (one side's measurement), holds for the baseline and the candidate
# of every row; otherwise the side that breaks it is printed and this
# returns non-zero.
all_sides() {
  python3 - "$1" "$2" <<'PY'
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert rows, "no rows"
for r in rows:
    for side in ("baseline", "candidate"):
        m = r[side]
        assert eval(sys.argv[2], {}, {"m": m}), (side, m)
PY
}

# expect_rc WANT CMD...: run CMD, keep its output in $TMP/out and $TMP/err.
expect_rc() {
  want=$1
  shift
  "$@" >"$TMP/out" 2>"$TMP/err"
  got=$?
  if [ "$got" != "$want" ]; then
    echo "--- stdout" >&2; tail -30 "$TMP/out" >&2
    echo "--- stderr" >&2; tail -30 "$TMP/err" >&2
    fail "'$*' exited $got, expected $want"
  fi
}

# expect_in FILE TEXT: FILE contains TEXT (fixed string).
expect_in() {
  grep -qF -- "$2" "$1" || { echo "--- $1" >&2; tail -40 "$1" >&2; fail "'$1' lacks: $2"; }
}

# The pid of the batch writing into $OUT (a batch started from a shell
# function runs in a forked shell: signal the batch process itself).
batch_pid() { pgrep -n -f -- "zlbench batch .*--out $OUT( |$)"; }

# run_children [OP]: "PID ARGS" of each `zlbench run` child (of OP, else
# any) whose --out lies under this test's $OUT; other test runs on the
# machine, in other folders, never match. The patterns travel in the
# environment so this awk's own arguments cannot match them.
run_children() {
  ps -eo pid=,args= |
    ZLB_T_OUT="--out $OUT/" ZLB_T_RUN="zlbench run ${1:+$1 }" \
      awk 'index($0, ENVIRON["ZLB_T_OUT"]) && index($0, ENVIRON["ZLB_T_RUN"])'
}

expect_not_in() {
  if grep -qF -- "$2" "$1"; then fail "'$1' unexpectedly contains: $2"; fi
}

# csv_field FILE OP COLUMN: a column of ops_status.csv for one operator.
csv_field() {
  awk -F, -v op="$2" -v col="$3" 'NR==1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
    $1 == op { print $c }' "$1"
}

# Make timings and machine details comparable across runs.
normalize_log() {
  sed -E -e 's/[0-9]+\.[0-9]+/F/g' \
    -e 's/^(SUCCESS|FAILED)( +[^ ]+){6} +(direct|graph|mixed|trace|queue) +(memory|cache|-) +[0-9]+ +[^ ]+/\1 F F F F F F \3 C N Z/' \
    -e 's/device=0 \(.*\)  timer=/device=0 (CPU)  timer=/' \
    -e 's/^(started|finished) .*/\1 T/' -e 's/^log: .*/log: L/' \
    -e 's/^zlbench [^ ]+  run/zlbench V  run/' -e 's/^peaks: .*/peaks: P/' \
    -e 's/shapes=[^ ]*\//shapes=/' -e 's/ in F s$/ in F s/' "$1" | tr -s ' '
}

# fnv_slot NAME N: the batch's device slot for NAME over N devices,
# fnv1a64(NAME) mod N (README), computed here independently of zlbench.
# Bash arithmetic is 64-bit and wraps, as FNV wants; the unsigned modulo
# goes through a logical shift.
fnv_slot() {
  local LC_ALL=C s=$1 n=$2 h=$((0xcbf29ce484222325)) i c
  for ((i = 0; i < ${#s}; i++)); do
    printf -v c '%d' "'${s:i:1}"
    h=$(((h ^ c) * 0x100000001b3))
  done
  echo $(((((h >> 1) & 0x7fffffffffffffff) % n * 2 + (h & 1)) % n))
}
