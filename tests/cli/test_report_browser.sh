# zlbench report in a real browser: headless Chromium loads the HTML of two
# host-backend batches compared (with history trends) and of a test-backend
# batch with a failing operator; the DOM must hold the charts and tables with
# the expected counts and no JavaScript error. Saves a screenshot in the
# build folder (tests/report.png). Skips visibly without Chromium.
. "$(dirname "$0")/lib.sh"
CHROME=""
for c in chromium chromium-browser google-chrome; do
  command -v "$c" >/dev/null 2>&1 && { CHROME=$c; break; }
done
if [ -z "$CHROME" ]; then
  echo "SKIP: no chromium here (scripts/deps.sh test installs Debian's chromium)"
  exit 77
fi
# root needs --no-sandbox; a private profile keeps runs apart
chrome() {
  "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$TMP/profile" --enable-logging=stderr --v=0 "$@" 2>>"$TMP/chrome.err"
}
host_batch() {
  "$ZLBENCH" batch --backend host --ops add,softmax --dtypes float32 --devices 0 \
    --out "$1" --warmup-ms 1 --rep-ms 5 >"$TMP/b.out" 2>&1 || { cat "$TMP/b.out" >&2; fail "batch $1"; }
}
host_batch "$TMP/A"
host_batch "$TMP/B"
expect_rc 0 "$ZLBENCH" history --db "$TMP/h.db" add "$TMP/A"
expect_rc 0 "$ZLBENCH" report "$TMP/B" --compare "$TMP/A" --fail-on never --history --db "$TMP/h.db" --out "$TMP/r1.html"
"$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy,always_fail --devices 0 --out "$TMP/T" \
  --timeout 20 $QUICK --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml" >"$TMP/b.out" 2>&1
expect_rc 0 "$ZLBENCH" report "$TMP/T" --out "$TMP/r2.html"

# Self-contained: nothing fetched, no external script, font or stylesheet.
for f in "$TMP/r1.html" "$TMP/r2.html"; do
  grep -Eiq '(src|href)=|url\(|@import|https?:' "$f" && fail "$f refers to something outside itself"
done

# What the DOM must hold: every SUCCESS row with a % of peak is a point.
rows=$(cat "$TMP"/B/ops/*/results.json | grep -c '"status": "SUCCESS"')
points=$(cat "$TMP"/B/ops/*/results.json | grep -Ec '"pct_peak": [0-9]')
[ "$rows" -gt 0 ] && [ "$points" -gt 0 ] || fail "the host batch gave no rows with a % of peak"
chrome --dump-dom "file://$TMP/r1.html" >"$TMP/dom1.html" || fail "chromium could not load r1.html"
count() { grep -o "$1" "$2" | wc -l; }
grep -q 'data-ready="1"' "$TMP/dom1.html" || fail "the page's script did not run to its end"
grep -q '<pre id="js-errors"></pre>' "$TMP/dom1.html" || fail "JavaScript errors: $(grep -o 'id="js-errors">[^<]*' "$TMP/dom1.html")"
[ "$(count '<g class="bar">' "$TMP/dom1.html")" = 2 ] || fail "speedup chart: expected 2 bars"
[ "$(count '<circle class="pt"' "$TMP/dom1.html")" = "$points" ] || fail "roofline: expected $points points"
grep -q "data-points=\"$points\"" "$TMP/dom1.html" || fail "roofline data-points"
[ "$(count '<tr class="verdict"' "$TMP/dom1.html")" = "$rows" ] || fail "verdicts: expected $rows rows"
[ "$(count '<tr class="row">' "$TMP/dom1.html")" = "$rows" ] || fail "rows table: expected $rows rows"
grep -q 'data-trends="2"' "$TMP/dom1.html" || fail "history: expected the trends of 2 operators"
[ "$(count '<polyline' "$TMP/dom1.html")" = 2 ] || fail "history: expected 2 sparklines"
grep -q 'id="kpi-ops-ok">2<' "$TMP/dom1.html" || fail "overview: 2 operators ok"
grep -q '"kind": "batch"' "$TMP/dom1.html" || fail "identity missing"

chrome --dump-dom "file://$TMP/r2.html" >"$TMP/dom2.html" || fail "chromium could not load r2.html"
grep -q '<pre id="js-errors"></pre>' "$TMP/dom2.html" || fail "JavaScript errors in r2"
[ "$(count '<tr class="failed-op">' "$TMP/dom2.html")" = 1 ] || fail "failed operators: expected 1"
grep -q 'always_fail: deterministic failure' "$TMP/dom2.html" || fail "error signature missing"
grep -q '<pre class="stderr">' "$TMP/dom2.html" || fail "stderr tail missing"
grep -q 'id="kpi-ops-failed" class="bad">1<' "$TMP/dom2.html" || fail "overview: 1 operator failed"

# No console message at error level from the page.
grep -E 'CONSOLE|Uncaught' "$TMP/chrome.err" | grep -v 'dbus' && fail "console errors"

# The screenshot, at a laptop's width.
shot="${ZLB_BUILD:-$TMP}/tests/report.png"
mkdir -p "$(dirname "$shot")"
chrome --screenshot="$shot" --window-size=1366,900 "file://$TMP/r1.html" >/dev/null ||
  fail "chromium could not take a screenshot"
[ -s "$shot" ] || fail "no screenshot"
echo "ok: report in chromium (screenshot: $shot)"
