# Host dispatch time (docs/timing.md, "Host dispatch time"): the host time
# of one call, measured on the warm-up calls, reaches results.json, the
# run.log table, summary.csv, the HTML report and zlbench compare. On the
# test backend a call runs on the host when it is enqueued, so steady_a's
# calls spin at least 50 us on the host (its candidate 200 us with
# ZL_TEST_SLOWDOWN=steady_a:4): the reported host times must be at least
# that, for every timer. Only lower bounds: nothing here depends on speed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gpu/table.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
printf 'test:\n  shapes: [[256], [4096]]\n' >"$TMP/shapes.yaml"
R() { # OUT TIMER
  ZL_TEST_SLOWDOWN=steady_a:4 "$ZLBENCH" run steady_a --backend test --lib "$TESTOPS" \
    --shape-file "$TMP/shapes.yaml" --dtypes float32 --timer "$2" $QUICK --out "$1" \
    >"$TMP/run.out" 2>&1 || { cat "$TMP/run.out" >&2; fail "run $1 ($2)"; }
}

for t in direct graph queue; do
  R "$TMP/$t" "$t"
  all_rows_are "$TMP/$t/run.log" Timer "$t" || fail "$t: rows not $t-timed"
  # results.json: each side's host_us, at least its spin.
  python3 - "$TMP/$t/results.json" <<'PY' || fail "$t: results.json host_us"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert len(rows) == 2, rows
for r in rows:
    b, c = r["baseline"]["host_us"], r["candidate"]["host_us"]
    assert isinstance(b, float) and b >= 50, ("baseline", b)
    assert isinstance(c, float) and c >= 200, ("candidate", c)
PY
  # The table: read by label, as any reader of run.log does.
  table_col "$TMP/$t/run.log" 'Host (us)' >"$TMP/hc" || fail "$t: no Host (us) column"
  table_col "$TMP/$t/run.log" 'Base Host (us)' >"$TMP/hb" || fail "$t: no Base Host (us) column"
  [ "$(awk '$1 >= 200' "$TMP/hc" | wc -l)" = 2 ] || fail "$t: Host (us) not >= 200: $(cat "$TMP/hc")"
  [ "$(awk '$1 >= 50' "$TMP/hb" | wc -l)" = 2 ] || fail "$t: Base Host (us) not >= 50: $(cat "$TMP/hb")"
  # The other columns are still where their labels say.
  all_rows_are "$TMP/$t/run.log" Marker - || fail "$t: Marker misread"
done

# summary.csv: host columns appended at the end, from the table.
expect_rc 0 "$ZLBENCH" summary "$TMP/direct" --quiet
python3 - "$TMP/direct/summary.csv" <<'PY' || fail "summary.csv host columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, rows
hdr = open(sys.argv[1]).readline().strip().split(",")
assert hdr[-3:] == ["base_host_us", "cand_host_us", "ceiling"], hdr
assert hdr[:14][-1] == "source", hdr
for r in rows:
    assert float(r["base_host_us"]) >= 50, r
    assert float(r["cand_host_us"]) >= 200, r
PY

# The plugin's `# zlbench: row N:` lines carry FlagGems rows' host times:
# torch's (the first part) is the baseline's, gems' (the last) the candidate's.
mkdir -p "$TMP/fg"
cat >"$TMP/fg/run.log" <<'EOF'
Operator: mul  Performance Test (dtype=torch.float16, mode=kernel,level=core)
Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup          Size Detail
-------------------------------------------------------------------------------------------
SUCCESS               0.006000             0.140000                0.043          [torch.Size([64, 64])]
SUCCESS               0.007000             0.150000                0.047          [torch.Size([128, 64])]

# zlbench: row 1: torch timer=graph marker=- verdict=none samples=10 host_us=12.500; gems timer=graph marker=- verdict=none samples=10 host_us=135.250
# zlbench: row 2: torch timer=graph marker=- verdict=none samples=10; gems timer=graph marker=- verdict=none samples=10
EOF
expect_rc 0 "$ZLBENCH" summary "$TMP/fg" --quiet
grep -q '^mul,,float16,"\[torch.Size(\[64, 64\])\]",.*,12.500,135.250,$' "$TMP/fg/summary.csv" ||
  fail "the plugin line's host_us did not reach summary.csv: $(cat "$TMP/fg/summary.csv")"
grep -q '^mul,,float16,"\[torch.Size(\[128, 64\])\]",.*,run.log,,,$' "$TMP/fg/summary.csv" ||
  fail "a row without host_us is not empty there: $(cat "$TMP/fg/summary.csv")"

# The HTML report: host µs beside the device times in the rows table.
expect_rc 0 "$ZLBENCH" report "$TMP/direct" --out "$TMP/r.html"
expect_in "$TMP/r.html" "candidate host &micro;s"
python3 - "$TMP/r.html" "$TMP/direct/results.json" <<'PY' || fail "the report lacks the host times"
import json, re, sys
html = open(sys.argv[1]).read()
cells = [float(x) for x in re.findall(r'<td class="n host">([0-9.]+)</td>', html)]
rows = [r for t in json.load(open(sys.argv[2]))["tables"] for r in t["rows"]]
want = sorted(round(r[s]["host_us"], 3) for r in rows for s in ("baseline", "candidate"))
assert len(cells) == 4 and min(cells) >= 50 and sum(c >= 200 for c in cells) == 2, cells
assert sorted(cells) == want, (cells, want)
PY

# The report's verdict table (--compare): each side's host µs of the
# compared implementation (the candidate: at least 200 us in both runs).
# --fail-on never: the verdicts of two quick runs on a loaded machine may
# say "slower"; what is tested here is the host column, not the verdict.
expect_rc 0 "$ZLBENCH" report "$TMP/graph" --compare "$TMP/direct" --allow-caliber-mismatch \
  --fail-on never --out "$TMP/rc.html"
expect_in "$TMP/rc.html" "A host &micro;s"
python3 - "$TMP/rc.html" <<'PY' || fail "the report's verdict table lacks the host times"
import re, sys
html = open(sys.argv[1]).read()
table = html[html.index('id="verdict-table"'):]
table = table[:table.index("</table>")]
rows = re.findall(r'<tr class="verdict".*?</tr>', table)
assert len(rows) == 2, rows
for r in rows:
    cells = [float(x) for x in re.findall(r'<td class="n host">([0-9.]+)</td>', r)]
    assert len(cells) == 2 and all(c >= 200 for c in cells), (cells, r)
PY

# compare: both sides' host times and their change, no verdict on them.
expect_rc 0 "$ZLBENCH" compare "$TMP/direct" "$TMP/graph" --fail-on never --allow-caliber-mismatch
expect_in "$TMP/out" "A host(us)"
expect_in "$TMP/out" "host chg"
expect_rc 0 "$ZLBENCH" compare "$TMP/direct" "$TMP/graph" --fail-on never --allow-caliber-mismatch --format csv --out "$TMP/c.csv"
python3 - "$TMP/c.csv" <<'PY' || fail "compare CSV host columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, rows
for r in rows:
    a, b = float(r["a_host_us"]), float(r["b_host_us"])
    assert a >= 200 and b >= 200, r
    assert abs(float(r["host_ratio"]) - b / a) < 1e-3 * b / a, r
PY
expect_rc 0 "$ZLBENCH" compare "$TMP/direct" "$TMP/graph" --fail-on never --allow-caliber-mismatch --format json --out "$TMP/c.json"
python3 - "$TMP/c.json" <<'PY' || fail "compare JSON host members"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 2 and all(r["a_host_us"] >= 200 and r["b_host_us"] >= 200 for r in rows), rows
PY
# --impl baseline shows the baselines' host times.
expect_rc 0 "$ZLBENCH" compare "$TMP/direct" "$TMP/graph" --fail-on never --allow-caliber-mismatch --impl baseline \
  --format csv --out "$TMP/cb.csv"
python3 - "$TMP/cb.csv" <<'PY' || fail "compare --impl baseline host columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2 and all(50 <= float(r["a_host_us"]) for r in rows), rows
PY

# A results file with a host time that is not one is refused.
sed 's/"host_us": [0-9.e+-]*/"host_us": -5/' "$TMP/direct/results.json" >"$TMP/bad.json"
grep -q '"host_us": -5' "$TMP/bad.json" || fail "could not doctor results.json"
expect_rc 2 "$ZLBENCH" compare "$TMP/bad.json" "$TMP/direct"
expect_in "$TMP/err" "host_us is not a host time"
echo "ok: host dispatch time"
