# --baseline torch: after the run (or batch) the Python bridge times its
# cases through torch. Here torch is a stand-in that cannot be imported, so
# the bridge's own errors are what is checked: the run's results stay, the
# exit code says what is missing, bad values and combinations are refused.
# (tests/python/test_torch_baseline.py covers the bridge's rows.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gpu/table.sh"
mkdir -p "$TMP/faketorch/torch"
echo 'raise ImportError("no torch in this test")' >"$TMP/faketorch/torch/__init__.py"
export PYTHONPATH="$TMP/faketorch${PYTHONPATH:+:$PYTHONPATH}"
Q="--backend host --dtypes float32 --warmup-ms 1 --rep-ms 2"

expect_rc 3 "$ZLBENCH" run add $Q --out "$TMP/r" --baseline torch
expect_in "$TMP/out" "torch baseline: "
expect_in "$TMP/err" "torch is not importable"
all_rows_are "$TMP/r/run.log" Status SUCCESS || fail "the run's rows were not kept"
[ -f "$TMP/r/torch_baseline.json" ] && fail "an output was written without torch"

# The interpreter itself missing: unavailable, named.
ZL_PYTHON="$TMP/no-python" expect_rc 3 "$ZLBENCH" run add $Q --out "$TMP/r2" --baseline torch
expect_in "$TMP/err" "cannot run $TMP/no-python"

# vendor is the default and runs nothing more.
expect_rc 0 "$ZLBENCH" run add $Q --out "$TMP/r3" --baseline vendor
expect_not_in "$TMP/out" "torch baseline"

# Bad values and combinations.
expect_rc 2 "$ZLBENCH" run add $Q --out "$TMP/r4" --baseline cublas
expect_in "$TMP/err" "'cublas' is not a baseline (vendor or torch)"
expect_rc 2 "$ZLBENCH" batch --backend host --ops add --baseline nope --out "$TMP/b0"
expect_in "$TMP/err" "--baseline"
mkdir -p "$TMP/fg"
expect_rc 2 "$ZLBENCH" batch --provider flaggems --baseline torch --out "$TMP/b1"
expect_in "$TMP/err" "FlagGems' benchmarks already time torch"

# A batch runs the bridge once, over its whole folder.
expect_rc 3 "$ZLBENCH" batch --backend host --ops add,sum --dtypes float32 --out "$TMP/b2" \
  --warmup-ms 1 --rep-ms 2 --progress never --baseline torch
expect_in "$TMP/out" "zlbench batch: 2 operators: 2 ok"
[ "$(grep -c '^torch baseline: ' "$TMP/out")" = 1 ] || fail "the bridge ran more than once"
expect_in "$TMP/err" "torch is not importable"
echo "ok: --baseline torch"
