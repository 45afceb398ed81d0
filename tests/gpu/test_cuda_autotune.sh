# Autotuning candidates pick a configuration with --autotune on (reported
# in the Config column), use their default with it off, and the run
# identity records the mode.
. "$(dirname "$0")/lib.sh"
for op in mm softmax sum; do
  "$ZLBENCH" run $op --backend cuda --shape-file "$GPU_SHAPES" --dtypes float16 --autotune on \
    --out "$TMP/on-$op" $QUICK >/dev/null 2>&1 || fail "$op --autotune on failed"
  "$ZLBENCH" run $op --backend cuda --shape-file "$GPU_SHAPES" --dtypes float16 --autotune off \
    --out "$TMP/off-$op" $QUICK >/dev/null 2>&1 || fail "$op --autotune off failed"
  expect_in "$TMP/on-$op/run_identity.json" '"autotune": "on"'
  expect_in "$TMP/off-$op/run_identity.json" '"autotune": "off"'
  awk '/^SUCCESS/ { if ($10 == "-") bad = 1; n++ } END { exit bad || !n }' "$TMP/on-$op/run.log" ||
    fail "$op: autotuned rows without a Config"
  keep "$TMP/on-$op" "$TMP/off-$op"
done
echo "ok: autotune on/off"
