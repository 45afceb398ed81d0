# The GPU tests' table readers (table.sh) on CPU logs, so that a reader
# that cannot fail is caught here, where no GPU is needed: a golden host
# log, a fresh host run, and doctored copies each check must reject.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/table.sh"
G="$ZLB_SRC/tests/data/cli/softmax_host.run.log.expected"

# The golden log: 4 rows, Config and Timer read by name.
[ "$(table_rows "$G")" = 4 ] || fail "golden: $(table_rows "$G") rows, expected 4"
[ "$(table_col "$G" Config | grep -cxF 'online,blk=64')" = 4 ] || fail "golden: Config not read by name"
[ "$(table_col "$G" 'Candidate (ms)' | head -1)" = 0.065734 ] || fail "golden: Candidate (ms) misread"
all_rows_are "$G" Timer direct || fail "golden: Timer not read by name"
all_rows_are "$G" Timer graph 2>/dev/null && fail "all_rows_are accepted a wrong value"
no_row_is "$G" Config - || fail "golden: a Config reads as '-'"
table_col "$G" NoSuchColumn >/dev/null 2>&1; [ $? = 2 ] || fail "an unknown label did not fail"
table_col "$G" 'Size Detail' >/dev/null 2>&1; [ $? = 2 ] || fail "Size Detail (values with spaces) was read"

# A fresh host run, as the GPU tests read theirs.
"$ZLBENCH" run softmax --backend host --dtypes float32 \
  --shape-file "$ZLB_SRC/tests/data/cli/shapes_golden.yaml" --out "$TMP/run" $QUICK \
  >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "host softmax run failed"; }
L="$TMP/run/run.log"
[ "$(table_rows "$L")" = 2 ] || fail "host run: $(table_rows "$L") rows, expected 2 (two shapes)"
all_rows_are "$L" Status SUCCESS || fail "host run: rows not all SUCCESS"
all_rows_are "$L" Timer direct || fail "host run: Timer misread"
all_rows_are "$L" Marker - || fail "host run: Marker misread"
no_row_is "$L" Config - || fail "host run: Config misread"

# Doctored copies: each must fail the check the GPU tests rely on.
sed '0,/^SUCCESS/s/online,blk=64/-            /' "$L" >"$TMP/noconfig.log"
no_row_is "$TMP/noconfig.log" Config - 2>/dev/null && fail "a row without a Config passed"
# A column added before Config (as Noise% once was) moves nothing.
sed -E -e 's/^(Status .*)  Config /\1  Extra  Config /' \
  -e 's/^(SUCCESS .*) (online,blk=64) /\1 x \2 /' "$L" >"$TMP/extra.log"
[ "$(table_col "$TMP/extra.log" Config | grep -cxF 'online,blk=64')" = 2 ] ||
  fail "a new column before Config moved the Config read"
grep -v '^SUCCESS' "$L" >"$TMP/norows.log"
all_rows_are "$TMP/norows.log" Timer direct 2>/dev/null && fail "a table without rows passed"
no_row_is "$TMP/norows.log" Config - 2>/dev/null && fail "a table without rows passed"
echo "ok: table readers"
