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
  all_rows_are "$TMP/on-$op/run.log" Status SUCCESS || fail "$op: autotuned rows not all SUCCESS"
  no_row_is "$TMP/on-$op/run.log" Config - || fail "$op: autotuned rows without a Config"
  [ "$(table_rows "$TMP/on-$op/run.log")" = "$(table_rows "$TMP/off-$op/run.log")" ] ||
    fail "$op: --autotune on and off ran different numbers of rows"
  keep "$TMP/on-$op" "$TMP/off-$op"
done
echo "ok: autotune on/off"
