# --trials N: each row measured N times, each on freshly allocated tensors;
# the row's value is the median of the trials' values, its samples are all
# of theirs; the option is checked, read from ZL_TRIALS, recorded in the
# identity and passed by a batch to its children.
. "$(dirname "$0")/lib.sh"
SH="$ZLB_SRC/tests/data/cli/shapes_golden.yaml"
: "${ZLB_JSON_TYPES:?ZLB_JSON_TYPES must point at the json_types helper}"

# Every row of a results file: N trials per measurement, ms the median of
# them, sample_count the number of samples (which all trials fill).
check_trials() { # results.json N
  "$ZLB_JSON_TYPES" "$1" >"$TMP/flat" || fail "cannot read $1"
  awk -v want="$2" '
    match($1, /^\.tables\[[0-9]+\]\.rows\[[0-9]+\]\.(baseline|candidate)/) {
      m = substr($1, 1, RLENGTH); rest = substr($1, RLENGTH + 1)
      seen[m] = 1
      if (rest == ".ms") ms[m] = $3
      if (rest == ".sample_count") cnt[m] = $3
      if (rest ~ /^\.samples\[[0-9]+\]$/) got[m]++
      if (rest ~ /^\.trials\[[0-9]+\]$/) t[m, nt[m]++] = $3
    }
    END {
      for (m in seen) {
        n++
        if (nt[m] != want) { print m ": " nt[m] " trials, want " want; bad = 1; continue }
        if (got[m] != cnt[m] || got[m] < want) { print m ": " got[m] " samples, sample_count " cnt[m]; bad = 1 }
        # median of the trials (odd count: the middle one after sorting)
        for (i = 0; i < want; i++) v[i] = t[m, i] + 0
        for (i = 0; i < want; i++) for (j = i + 1; j < want; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
        med = (want % 2) ? v[int(want / 2)] : (v[want / 2 - 1] + v[want / 2]) / 2
        d = med - ms[m]; if (d < 0) d = -d
        if (d > 1e-9 * (med > 1 ? med : 1)) { print m ": ms " ms[m] " is not the trials median " med; bad = 1 }
      }
      if (!n) { print "no measurements"; bad = 1 }
      exit bad
    }' "$TMP/flat" || fail "$1: trials not as expected ($2 per measurement)"
}

expect_rc 0 "$ZLBENCH" run softmax --backend host --dtypes float32 --shape-file "$SH" \
  --out "$TMP/t3" --json "$TMP/t3.json" --trials 3 $QUICK
check_trials "$TMP/t3.json" 3
check_trials "$TMP/t3/results.json" 3
expect_in "$TMP/t3/run.log" "trials=3 (each on fresh tensors; median of the trials)"
tr -d ' \n' <"$TMP/t3/run_identity.json" | grep -qF '"trials":3' ||
  fail "run_identity.json does not record trials 3"

# One trial (the default): one value, the row's own; no banner note.
expect_rc 0 "$ZLBENCH" run softmax --backend host --dtypes float32 --shape-file "$SH" \
  --out "$TMP/t1" --json "$TMP/t1.json" $QUICK
check_trials "$TMP/t1.json" 1
expect_not_in "$TMP/t1/run.log" "trials="

# The environment, and what is refused.
ZL_TRIALS=5 expect_rc 0 "$ZLBENCH" run softmax --backend host --dtypes float32 \
  --shape-file "$SH" --out "$TMP/t5" --json "$TMP/t5.json" $QUICK
check_trials "$TMP/t5.json" 5
for bad in 0 17 x -1; do
  expect_rc 2 "$ZLBENCH" run softmax --backend host --trials "$bad" --out "$TMP/bad"
  expect_in "$TMP/err" "--trials"
done
ZL_TRIALS=99 expect_rc 2 "$ZLBENCH" run softmax --backend host --out "$TMP/bad"
expect_in "$TMP/err" "ZL_TRIALS"

# plan says so.
expect_rc 0 "$ZLBENCH" plan softmax --backend host --trials 3
expect_in "$TMP/out" "steps 1-4 run 3 times per row (--trials)"
expect_rc 0 "$ZLBENCH" plan softmax --backend host
expect_not_in "$TMP/out" "--trials"

# A batch hands --trials to its children.
expect_rc 0 "$ZLBENCH" batch --backend host --ops softmax --dtypes float32 --shape-file "$SH" \
  --trials 3 --out "$TMP/b" --progress never $QUICK
check_trials "$TMP/b/ops/softmax/results.json" 3
echo "ok: --trials"
