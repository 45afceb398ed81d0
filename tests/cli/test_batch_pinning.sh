# A backend added by an operator library ("test2", three emulated devices,
# its own visibility variable and an also_env key): every child is pinned
# through the keys the library declares, to the device the hash assigns.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
mkdir -p "$TMP/state"
export ZL_TEST_STATE_DIR="$TMP/state"
unset ZL_TEST2_VISIBLE_DEVICES ZL_TEST2_ALSO_VISIBLE ZL_TEST2_DEVICES
OPS="pin_a pin_b pin_c pin_d pin_e pin_f"
OUT="$TMP/out1"

# The helper the batch asks reports the library's keys.
expect_rc 0 "$ZLBENCH" devices --backend test2 --json --lib "$TESTOPS"
expect_in "$TMP/out" '"visibility_env": "ZL_TEST2_VISIBLE_DEVICES"'
expect_in "$TMP/out" '"ZL_TEST2_ALSO_VISIBLE"'

expect_rc 0 "$ZLBENCH" batch --backend test2 --lib "$TESTOPS" --ops "${OPS// /,}" \
  --out "$OUT" $QUICK --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
expect_in "$OUT/run_identity.json" '"visibility_env": "ZL_TEST2_VISIBLE_DEVICES"'
seen_devices=""
for op in $OPS; do
  want=$(fnv_slot "$op" 3)
  [ -f "$ZL_TEST_STATE_DIR/$op.seen" ] || fail "$op never ran"
  read -r vis also _ <"$ZL_TEST_STATE_DIR/$op.seen"
  [ "$vis" = "$want" ] || fail "$op saw ZL_TEST2_VISIBLE_DEVICES='$vis', the hash says device $want"
  [ "$also" = "$want" ] || fail "$op saw ZL_TEST2_ALSO_VISIBLE='$also', expected $want"
  [ "$(csv_field "$OUT/ops_status.csv" "$op" device)" = "$want" ] ||
    fail "$op: ops_status.csv says device $(csv_field "$OUT/ops_status.csv" "$op" device), expected $want"
  seen_devices="$seen_devices $vis"
done
# The operators cover every device, so a constant pin cannot pass.
for d in 0 1 2; do
  case " $seen_devices " in *" $d "*) ;; *) fail "no operator ran on device $d" ;; esac
done

# --devices picks slots from the chosen ordinals: two devices, 2 and 0.
rm -f "$ZL_TEST_STATE_DIR"/*.seen
expect_rc 0 "$ZLBENCH" batch --backend test2 --lib "$TESTOPS" --ops "${OPS// /,}" \
  --devices 2,0 --out "$TMP/out2" $QUICK --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
for op in $OPS; do
  slot=$(fnv_slot "$op" 2)
  want=$([ "$slot" = 0 ] && echo 2 || echo 0)
  read -r vis also _ <"$ZL_TEST_STATE_DIR/$op.seen"
  [ "$vis" = "$want" ] || fail "$op with --devices 2,0 saw device '$vis', expected $want"
done

# Under a grant (a scheduler set ZL_TEST2_VISIBLE_DEVICES=7,5 for the
# job, as Slurm sets CUDA_VISIBLE_DEVICES) the batch sees two devices, and
# ordinal d is the grant's entry d: children get 7 or 5, never 0 or 1.
rm -f "$ZL_TEST_STATE_DIR"/*.seen
ZL_TEST2_VISIBLE_DEVICES=7,5 expect_rc 0 "$ZLBENCH" batch --backend test2 --lib "$TESTOPS" \
  --ops "${OPS// /,}" --out "$TMP/out5" $QUICK --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
seen_devices=""
for op in $OPS; do
  want=$([ "$(fnv_slot "$op" 2)" = 0 ] && echo 7 || echo 5)
  read -r vis also _ <"$ZL_TEST_STATE_DIR/$op.seen"
  [ "$vis" = "$want" ] || fail "$op under the grant 7,5 saw ZL_TEST2_VISIBLE_DEVICES='$vis', expected $want"
  [ "$also" = "$want" ] || fail "$op under the grant 7,5 saw ZL_TEST2_ALSO_VISIBLE='$also', expected $want"
  seen_devices="$seen_devices $vis"
done
case "$seen_devices " in *" 7 "*) ;; *) fail "no operator ran on granted device 7" ;; esac
case "$seen_devices " in *" 5 "*) ;; *) fail "no operator ran on granted device 5" ;; esac
expect_in "$TMP/out5/run_identity.json" '"visibility_grant": "7,5"'
tr -d ' \n' <"$TMP/out5/run_identity.json" | grep -qF '"device_ids":["7","5"]' ||
  fail "run_identity.json does not map ordinals 0,1 to devices 7,5"

# "test3" declares no visibility variable: several devices are refused
# before anything runs; one device is addressed by its ordinal.
rm -f "$ZL_TEST_STATE_DIR"/*.seen
expect_rc 2 "$ZLBENCH" batch --backend test3 --lib "$TESTOPS" --ops pin_none \
  --out "$TMP/out3" $QUICK --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
expect_in "$TMP/err" "backend 'test3' declares no visibility variable"
[ ! -f "$ZL_TEST_STATE_DIR/pin_none.seen" ] || fail "pin_none ran although the batch was refused"
expect_rc 0 "$ZLBENCH" batch --backend test3 --lib "$TESTOPS" --ops pin_none --devices 1 \
  --out "$TMP/out4" $QUICK --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
read -r vis also sel <"$ZL_TEST_STATE_DIR/pin_none.seen"
[ "$sel" = 1 ] || fail "pin_none with --devices 1 selected device $sel"
echo "ok: library backend children pinned by the library's visibility keys"
