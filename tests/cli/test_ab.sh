# zlbench ab on the test backend with steady operators (each call spins
# 50 us of wall time, so their time hardly depends on the machine's load):
# --self gives no false verdict; a library B that slows one operator's
# candidate by 25 % (tests/ab/ab_slow.c) is found slower on every row of
# that operator and on no other (25 %, not the 5 % the H200 run finds:
# on a loaded 2-core machine a preempted block moves a test-backend block
# by 10 % or more, and the test is of the mechanism, not of its
# resolution); usage errors exit 2 naming the option;
# results.json has every block with its clock fields.
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
WRAP="$ZLB_BUILD/lib/zlbench-test/libzlb_ab_slow_test.so"
[ -f "$WRAP" ] || fail "$WRAP is not built (target zlb_ab_slow_test)"
SH="$ZLB_SRC/tests/data/cli/shapes_test.yaml"
OPS="steady_a steady_b steady_c"
# 16 blocks per side: the interval of 16 pairs ignores up to 4 disturbed
# pairs on either side, so a preempted block cannot change a verdict.
AB() { "$ZLBENCH" ab "$@" --backend test --lib "$TESTOPS" --shape-file "$SH" --dtypes float32 \
  --blocks 16 --warmup-ms 2; }

# rows FILE: "operator shape verdict" of every row of a results.json.
rows() {
  python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print(r["operator"], r["shape"].replace(" ", ""), r["verdict"])' "$1"
}

# --self: the same code against itself, no faster or slower verdict.
expect_rc 0 AB $OPS --self --out "$TMP/self"
expect_in "$TMP/out" "false verdicts: 0 of 6 rows"
expect_in "$TMP/self/ab.log" "false verdicts: 0 of 6 rows"
[ "$(rows "$TMP/self/results.json" | wc -l)" = 6 ] || fail "--self: not 6 rows"
rows "$TMP/self/results.json" | grep -E ' (faster|slower)$' && fail "--self gave a false verdict"
# An operator named twice is compared once (its rows were counted twice).
expect_rc 0 AB steady_a steady_a --self --out "$TMP/twice"
[ "$(rows "$TMP/twice/results.json" | wc -l)" = "$(rows "$TMP/self/results.json" | grep -c '^steady_a ')" ] ||
  fail "an operator named twice was compared twice: $(rows "$TMP/twice/results.json")"
# A test slowdown of both sides (the same library) is no difference either.
ZL_TEST_SLOWDOWN=steady_b:1.10 expect_rc 0 AB $OPS --self --out "$TMP/self2"
rows "$TMP/self2/results.json" | grep -E ' (faster|slower)$' && fail "--self with a slowdown of both sides gave a verdict"

# results.json: each row has 16 pairs of one A and one B block, half of
# them A first, the pairs' orders drawn per row (not all rows A B B A ...),
# each block with its time and the clock fields (null: the test backend
# has no clocks), and the summary counts.
python3 - "$TMP/self/results.json" <<'PY' || fail "results.json lacks the blocks or their clock fields"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "zlbench.ab/1" and d["self"] is True and d["blocks_per_side"] == 16, d
assert d["order"] == "random", d["order"]
assert d["summary"]["rows"] == 6 and d["summary"]["false_verdicts"] == 0, d["summary"]
abba = "".join("AB" if j % 2 == 0 else "BA" for j in range(16))
orders = set()
for r in d["rows"]:
    assert r["status"] == "SUCCESS" and r["pairs"] == 16, r
    b = r["blocks"]
    assert len(b) == 32, len(b)
    sides = "".join(x["side"] for x in b)
    pairs = [sides[i:i + 2] for i in range(0, 32, 2)]
    assert all(p in ("AB", "BA") for p in pairs), sides
    assert pairs.count("AB") == 8, sides
    orders.add(sides)
    assert [x["order"] for x in b] == list(range(32))
    for x in b:
        assert x["ms"] > 0.04, x
        for k in ("sm_mhz_before", "sm_mhz_after", "throttled_before", "throttled_after",
                  "throttle_why_before", "throttle_why_after"):
            assert k in x and x[k] is None, (k, x)
    assert r["lo"] <= r["ratio"] <= r["hi"], r
assert len(orders) > 1 and orders != {abba}, orders
PY
# sides FILE: each row's block sides, one line per row.
sides() {
  python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print("".join(x["side"] for x in r["blocks"]))' "$1"
}
# The same seed draws the same orders; --order abba is A B B A ... on every
# row; another seed draws other orders.
expect_rc 0 AB $OPS --self --out "$TMP/self3"
[ "$(sides "$TMP/self/results.json")" = "$(sides "$TMP/self3/results.json")" ] ||
  fail "the same seed drew other pair orders"
expect_rc 0 AB $OPS --self --seed 7 --out "$TMP/self4"
[ "$(sides "$TMP/self/results.json")" != "$(sides "$TMP/self4/results.json")" ] ||
  fail "another --seed drew the same pair orders"
expect_rc 0 AB steady_a --self --order abba --out "$TMP/abba"
expect_in "$TMP/abba/ab.log" "pair order abba"
[ "$(sides "$TMP/abba/results.json" | sort -u)" = "ABBAABBAABBAABBAABBAABBAABBAABBA" ] ||
  fail "--order abba is not A B B A ... on every row"

# B slows steady_b's candidate by 25 %: slower on both its rows, exit 1 (the
# gate); the other operators get no verdict of a difference.
ZL_AB_WRAP="$TESTOPS" ZL_AB_SLOW=steady_b:25 expect_rc 1 AB $OPS --lib-b "$WRAP" --out "$TMP/slow"
rows "$TMP/slow/results.json" >"$TMP/slow.rows"
[ "$(grep -c '^steady_b .* slower$' "$TMP/slow.rows")" = 2 ] ||
  { cat "$TMP/slow.rows" >&2; fail "the 25 % slowdown of steady_b is not found on both rows"; }
grep -v '^steady_b ' "$TMP/slow.rows" | grep -E ' (faster|slower)$' &&
  fail "an operator B does not slow was called faster or slower"
expect_in "$TMP/out" "slower 2"
python3 - "$TMP/slow/results.json" <<'PY' || fail "the slowed rows' ratio is not about 1.25"
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    if r["operator"] == "steady_b":
        assert 1.15 < r["ratio"] < 1.45, r["ratio"]
PY
# The same B without the slowdown: exit 0, nothing slower.
ZL_AB_WRAP="$TESTOPS" expect_rc 0 AB $OPS --lib-b "$WRAP" --out "$TMP/noslow"
rows "$TMP/noslow/results.json" | grep -E ' (faster|slower)$' && fail "an unchanged B was called faster or slower"
# A library B whose slowdown names an operator it lacks does not load
# (its registration fails: exit 2, as for any library that refuses).
ZL_AB_WRAP="$TESTOPS" ZL_AB_SLOW=no_such_op:5 expect_rc 2 AB steady_a --lib-b "$WRAP" --out "$TMP/u0"
expect_in "$TMP/err" "$WRAP"

# --l2 cold (the graph timer flushes L2 before every call): the rows are
# measured, with the flush buffer ab makes as run does. Graphs of 10 ms
# replays: the flush alone (2 us per emulated flush) is timed over as many
# flushes as calls, so a preempted replay shifts it by little. Verdicts are
# not the point here (exit 1 for a slower one on a loaded machine): only
# that every row was measured.
AB steady_a --self --l2 cold --graph-replay-ms 10 --out "$TMP/cold" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || fail "ab --l2 cold exited $rc: $(cat "$TMP/err")"
python3 - "$TMP/cold/results.json" <<'PY' || fail "--l2 cold rows are not measured"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 2 and all(r["status"] == "SUCCESS" for r in rows), rows
PY

# An input that no operator can run with (a shape file that is not there,
# a dtype it lacks): exit 2 as run gives, and results.json says why.
expect_rc 2 "$ZLBENCH" ab steady_a --self --backend test --lib "$TESTOPS" --dtypes float32 \
  --shape-file "$TMP/nonexistent.yaml" --out "$TMP/skip1"
python3 - "$TMP/skip1/results.json" <<'PY' || fail "ab: a skipped operator's reason is not in results.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rows"] == [] and d["summary"]["failed"] == 1, d
(s,) = d["skipped"]
assert s["operator"] == "steady_a" and "nonexistent.yaml" in s["error"], s
PY

# A library that refuses to register (the wrapper without ZL_AB_WRAP) is a
# bad --lib: exit 2 in every command, not the failed-operator exit 1.
for c in devices list "plan relu" "run relu" "inventory --check"; do
  # shellcheck disable=SC2086
  env -u ZL_AB_WRAP "$ZLBENCH" $c --backend host --lib "$WRAP" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  [ $rc = 2 ] || fail "$c with a library that refuses to register exited $rc: $(cat "$TMP/err")"
  expect_in "$TMP/err" "the library refused to register its operators"
done

# Usage errors: exit 2, naming the option.
expect_rc 2 AB steady_a --out "$TMP/u1"
expect_in "$TMP/err" "--lib-b"
expect_rc 2 AB steady_a --self --lib-b "$WRAP" --out "$TMP/u2"
expect_in "$TMP/err" "--self and --lib-b"
expect_rc 2 "$ZLBENCH" ab steady_a --self --blocks 4
expect_in "$TMP/err" "--blocks"
expect_rc 2 "$ZLBENCH" ab steady_a --self --order bbaa
expect_in "$TMP/err" "--order 'bbaa': expected random or abba"
expect_rc 2 "$ZLBENCH" ab steady_a --self --threshold 0
expect_in "$TMP/err" "--threshold"
expect_rc 2 "$ZLBENCH" ab steady_a --self --integrity
expect_in "$TMP/err" "--integrity does not apply to ab"
# Exported for a whole session, ZL_INTEGRITY=1 is said and not applied.
ZL_INTEGRITY=1 expect_rc 0 AB steady_a --self --out "$TMP/envint"
expect_in "$TMP/err" "ZL_INTEGRITY=1 is ignored by ab"
[ "$(rows "$TMP/envint/results.json" | wc -l)" -gt 0 ] || fail "ab with ZL_INTEGRITY=1 measured nothing"
expect_rc 2 "$ZLBENCH" ab steady_a --self --trials 3
expect_in "$TMP/err" "--trials"
expect_rc 2 "$ZLBENCH" ab steady_a --self --quantiles 0.5
expect_in "$TMP/err" "--quantiles"
expect_rc 2 AB steady_a --self --l2 cold --no-flush --out "$TMP/u4"
expect_in "$TMP/err" "--l2"
expect_rc 2 AB no_such_op --self --out "$TMP/u3"
expect_in "$TMP/err" "no_such_op"
expect_rc 0 "$ZLBENCH" ab --help
expect_in "$TMP/out" "--lib-b"
expect_in "$TMP/out" "exit codes"
expect_rc 0 "$ZLBENCH" --help
expect_in "$TMP/out" "  ab "
exit 0
