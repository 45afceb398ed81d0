# A batch over CUDA operators on every visible GPU: each operator's device
# follows fnv1a64(name) mod ndevices and every operator completes.
. "$(dirname "$0")/lib.sh"
OPS=add,softmax,sum,mm,nonzero,sort,rand,dropout
expect_rc 0 "$ZLBENCH" batch --backend cuda --ops "$OPS" --out "$TMP/b" \
  --shape-file "$GPU_SHAPES" --timeout 600 $QUICK
for op in $(echo $OPS | tr , ' '); do
  want=$(python3 -c "
h=0xcbf29ce484222325
for b in b'$op': h=((h^b)*0x100000001b3)&0xffffffffffffffff
print(h%$NGPU)")
  got=$(csv_field "$TMP/b/ops_status.csv" $op device)
  [ "$got" = "$want" ] || fail "$op ran on device $got, the hash rule says $want"
  [ "$(csv_field "$TMP/b/ops_status.csv" $op status)" = ok ] || fail "$op did not finish ok"
done
keep "$TMP/b"
echo "ok: CUDA batch on $NGPU device(s)"
