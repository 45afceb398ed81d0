# zlbench ab on a CUDA device: side B is the corpus with one operator's
# candidate slowed by 5 % (tests/ab/ab_slow.c, CUDA build: a spin kernel of
# 5 % of the candidate's measured time after each call), which is found
# slower on every row of that operator and on no row of the others; the
# blocks carry the SM clock. (bench/ab_self.sh measures the false-verdict
# rate of --self over the whole core screen.)
. "$(dirname "$0")/lib.sh"
CORPUS="$ZLB_BUILD/lib/zlbench/libzlb_ops_cuda.so"
SLOWLIB="$ZLB_BUILD/lib/zlbench-test/libzlb_ab_slow_cuda.so"
[ -f "$CORPUS" ] || fail "no CUDA corpus at $CORPUS"
[ -f "$SLOWLIB" ] || fail "no $SLOWLIB (target zlb_ab_slow_cuda)"

ZL_AB_WRAP="$CORPUS" ZL_AB_SLOW=add:5 "$ZLBENCH" ab add mul --backend cuda --lib-b "$SLOWLIB" \
  --out "$TMP/slow" >"$TMP/slow.log" 2>&1
rc=$?
keep "$TMP/slow.log"
[ "$rc" = 1 ] || { tail -30 "$TMP/slow.log" >&2; fail "a 5 % slower add: exit $rc, expected 1"; }
python3 - "$TMP/slow/results.json" <<'PY' || fail "the 5 % slowdown of add is not found on every row, or mul is called different"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
add = [r for r in rows if r["operator"] == "add"]
mul = [r for r in rows if r["operator"] == "mul"]
assert add and mul, (len(add), len(mul))
for r in add:
    print("add", r["dtype"], r["shape"], r["verdict"], round(r["ratio"], 4))
    assert r["verdict"] == "slower", r
    assert r["ratio"] >= 1.03, r
for r in mul:
    assert r["verdict"] not in ("faster", "slower"), r
for r in rows:
    for b in r["blocks"]:
        assert isinstance(b["sm_mhz_before"], int) and b["sm_mhz_before"] > 0, b
PY
exit 0
