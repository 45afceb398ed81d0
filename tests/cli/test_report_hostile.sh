# Hostile inputs to compare, history, summary and report: terminal escapes
# and newlines in results are shown escaped, CSV text cells cannot run as
# spreadsheet formulas, absurd samples are refused and numbers stay short,
# a garbage ops_status.csv is an error, history never rewrites a database
# that is not its own and reads a read-only one.
. "$(dirname "$0")/lib.sh"
ESC=$(printf '\033')
BEL=$(printf '\007')
# no_ctl FILE: no ESC and no BEL byte in FILE.
no_ctl() {
  if LC_ALL=C grep -q "[$ESC$BEL]" "$1"; then
    LC_ALL=C cat -v "$1" >&2
    fail "$1 holds an ESC or BEL byte"
  fi
}
# mkres FILE OP SHAPE FAMILY A_SAMPLES B_SAMPLES: a results.json of one
# SUCCESS row (OP and SHAPE are JSON string bodies: \u001b is an ESC).
mkres() {
  mkdir -p "$(dirname "$1")"
  printf '{"schema": "zlbench.results/1", "operator": "%s", "family": "%s", "tables": [{"dtype": "float32", "rows": [{"status": "SUCCESS", "shape": "%s", "baseline": {"impl": "ref", "samples": [%s]}, "candidate": {"impl": "cand", "samples": [%s]}}]}]}\n' \
    "$2" "$4" "$3" "$5" "$6" >"$1"
}
FAST="1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00"
SLOW="1.50, 1.51, 1.49, 1.50, 1.52, 1.48, 1.50, 1.51, 1.49, 1.50"
EVIL_OP='relu\u001b[2J\u001b]0;pwned\u0007\u001b[1A\u001b[2K'
EVIL_SHAPE='[1]\nslower  softmax'
mkres "$TMP/A/results.json" "$EVIL_OP" "$EVIL_SHAPE" "f" "$FAST" "$FAST"
mkres "$TMP/B/results.json" "$EVIL_OP" "$EVIL_SHAPE" "f" "$FAST" "$SLOW"
mkres "$TMP/A0/results.json" "relu" "[1]" "f" "$FAST" "$FAST"
mkres "$TMP/B0/results.json" "relu" "[1]" "f" "$FAST" "$SLOW"

# 1. Terminal escapes and forged lines: the text and markdown tables have
# as many lines as for a harmless operator, one slower row, and no ESC/BEL.
for fmt in text md csv; do
  expect_rc 1 "$ZLBENCH" compare "$TMP/A0/results.json" "$TMP/B0/results.json" --format $fmt
  clean=$(wc -l <"$TMP/out")
  expect_rc 1 "$ZLBENCH" compare "$TMP/A/results.json" "$TMP/B/results.json" --format $fmt
  no_ctl "$TMP/out"
  [ "$(wc -l <"$TMP/out")" = "$clean" ] || { cat "$TMP/out" >&2; fail "$fmt: a line was forged"; }
done
expect_rc 1 "$ZLBENCH" compare "$TMP/A/results.json" "$TMP/B/results.json"
[ "$(grep -c '^slower' "$TMP/out")" = 1 ] || fail "not exactly one slower row"
expect_in "$TMP/out" 'relu\x1b[2J\x1b]0;pwned\x07\x1b[1A\x1b[2K'
expect_in "$TMP/out" '[1]\nslower  softmax'
# Caliber values (from the identity) in the refusal on stderr.
printf '{"backend": {"name": "host"}, "device": {"name": "cpu\\u001b]0;x\\u0007"}}\n' \
  >"$TMP/B/run_identity.json"
printf '{"backend": {"name": "host"}, "device": {"name": "cpu"}}\n' >"$TMP/A/run_identity.json"
expect_rc 2 "$ZLBENCH" compare "$TMP/A/results.json" "$TMP/B/results.json"
no_ctl "$TMP/err"
expect_in "$TMP/err" 'device: A=cpu B=cpu\x1b]0;x\x07'
rm "$TMP/A/run_identity.json" "$TMP/B/run_identity.json"

# 2. CSV formula injection: a text cell starting with = + - @ gets a
# leading ' (and is quoted); a number such as -3.5 stays a number.
mkres "$TMP/F/a/results.json" "=cmd|' /C calc'!A0" "@SUM(A1)" "-3.5" "$FAST" "$FAST"
mkres "$TMP/G/a/results.json" "=cmd|' /C calc'!A0" "@SUM(A1)" "-3.5" "$FAST" "$FAST"
expect_rc 0 "$ZLBENCH" compare "$TMP/F" "$TMP/G" --format csv
expect_in "$TMP/out" "same,\"'=cmd|' /C calc'!A0\",-3.5,float32,\"'@SUM(A1)\",candidate,"
grep -q ',=\|,@\|^=' "$TMP/out" && fail "compare csv: a formula cell is unescaped"
mkdir -p "$TMP/S/ops/evil"
cat >"$TMP/S/ops/evil/run.log" <<'EOF'
Operator: evil  Performance Test (dtype=torch.float16, mode=kernel,level=core)
Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup               TFLOPS          Size Detail
--------------------------------------------------------------------------------------------------------------------
SUCCESS               0.006144            0.005120               1e308               0.002          =HYPERLINK("http://x")
SUCCESS               0.006144            0.005120                -3.5               0.002          +cmd|' /C calc'!A0
SUCCESS               0.006144            0.005120                 1.2               0.002          -2

EOF
expect_rc 0 "$ZLBENCH" summary "$TMP/S"
expect_in "$TMP/S/summary.csv" ",\"'=HYPERLINK(\"\"http://x\"\")\","
expect_in "$TMP/S/summary.csv" ",\"'+cmd|' /C calc'!A0\","
expect_in "$TMP/S/summary.csv" ",-3.5000,"
expect_in "$TMP/S/summary.csv" ",float16,-2,"
# 5 (summary): a 1e308 speedup is a short cell and a short table value.
LC_ALL=C grep -Eq '[0-9]{30}' "$TMP/S/summary.csv" "$TMP/out" && fail "summary: a 300-digit number"

# 3. Duplicate keys are refused, naming the file, line and key.
printf '{"schema": "zlbench.results/1",\n "operator": "relu",\n "operator": "add", "tables": []}\n' \
  >"$TMP/dup.json"
expect_rc 2 "$ZLBENCH" compare "$TMP/dup.json" "$TMP/A0/results.json"
expect_in "$TMP/err" "$TMP/dup.json:3:2: duplicate key 'operator' (first on line 2)"

# 4. A garbage ops_status.csv is an error, not "Failed operators: None".
mkres "$TMP/R/ops/relu/results.json" relu "[1]" f "$FAST" "$FAST"
printf 'garbage\n' >"$TMP/R/ops_status.csv"
expect_rc 2 "$ZLBENCH" report "$TMP/R"
expect_in "$TMP/err" "$TMP/R/ops_status.csv: line 1: not a zlbench status file (expected the header"
[ -e "$TMP/R/report.html" ] && fail "report written over a garbage ops_status.csv"
H='operator,status,attempts,dtype_level,backend,device,timer,seconds,error_signature,failed_dtypes,note'
printf '%s\nrelu,ok,1,1,host,cpu,direct,0.5,,,\nadd,crashed\n' "$H" >"$TMP/R/ops_status.csv"
expect_rc 2 "$ZLBENCH" report "$TMP/R"
expect_in "$TMP/err" "$TMP/R/ops_status.csv: line 3: not a zlbench status row (expected 11 fields)"
printf '%s\nrelu,ok,1,1,host,cpu,direct,0.5,,,\nadd,crashed,1,1,host,cpu,direct,0.5,"exit 139: x, y",,\n' \
  "$H" >"$TMP/R/ops_status.csv"
expect_rc 0 "$ZLBENCH" report "$TMP/R"
grep -q 'class="failed-op"><td>add</td><td class="bad">crashed' "$TMP/R/report.html" ||
  fail "report: the crashed operator is not listed"

# 5. Samples: 1e308 ms (or a negative one) is refused naming file, row and
# field; values within the bound print as short cells.
mkres "$TMP/W/results.json" relu "[1]" f "$FAST" "1e308, 1e308"
expect_rc 2 "$ZLBENCH" compare "$TMP/A0/results.json" "$TMP/W/results.json"
expect_in "$TMP/err" "$TMP/W/results.json: tables[0].rows[0]: candidate.samples[0] is not a time in ms (a number from 0 to 10000000)"
mkres "$TMP/W/results.json" relu "[1]" f "-1" "1"
expect_rc 2 "$ZLBENCH" compare "$TMP/A0/results.json" "$TMP/W/results.json"
expect_in "$TMP/err" "baseline.samples[0] is not a time in ms"
mkres "$TMP/W/results.json" relu "[1]" f "1e7, 1e7, 1e7" "1e-300, 1e-300, 1e-300"
for fmt in text md csv; do
  expect_rc 0 "$ZLBENCH" compare "$TMP/A0/results.json" "$TMP/W/results.json" --impl speedup \
    --format $fmt --fail-on never
  LC_ALL=C grep -Eq '[0-9]{30}' "$TMP/out" && { cat "$TMP/out" >&2; fail "$fmt: a 300-digit number"; }
done
# The HTML report too: a 1e308 speedup, and a 1e300 change against it.
mkdir -p "$TMP/HR/ops/relu"
printf '{"schema": "zlbench.results/1", "operator": "relu", "tables": [{"dtype": "float32", "rows": [{"status": "SUCCESS", "shape": "[1]", "speedup": 1e308, "gbps": 1e300, "baseline": {"impl": "ref", "ms": 1e7, "samples": [1e7, 1e7, 1e7]}, "candidate": {"impl": "cand", "ms": 1e-300, "samples": [1e-300, 1e-300, 1e-300]}}]}]}\n' \
  >"$TMP/HR/ops/relu/results.json"
expect_rc 0 "$ZLBENCH" report "$TMP/HR"
expect_rc 0 "$ZLBENCH" report "$TMP/A0" --compare "$TMP/HR" --fail-on never --out "$TMP/HR/c.html"
expect_in "$TMP/HR/c.html" "+1e+302%"
LC_ALL=C grep -Eq '[0-9]{30}' "$TMP/HR/report.html" "$TMP/HR/c.html" && fail "report: a 300-digit number"
# inventory prints the names of an inventory file escaped.
printf 'host:\n  - "relu\\e[2J\\a"\n' >"$TMP/inv.yaml"
expect_rc 0 "$ZLBENCH" inventory --backend host --inventory "$TMP/inv.yaml"
no_ctl "$TMP/out"
expect_in "$TMP/out" 'relu\x1b[2J\x07'

# 6 and 7: the history database.
if "$ZLBENCH" history list --db "$TMP/probe.db" 2>&1 | grep -q "built without SQLite"; then
  echo "SKIP (history part): this zlbench was built without SQLite"
  echo "ok: hostile inputs (without the history)"
  exit 0
fi
DB="$TMP/h/h.sqlite"
expect_rc 0 "$ZLBENCH" history add "$TMP/A" --db "$DB"
EVIL_REAL=$(printf 'relu\033[2J\033]0;pwned\007\033[1A\033[2K')
expect_rc 0 "$ZLBENCH" history show "$EVIL_REAL" --db "$DB"
no_ctl "$TMP/out"
expect_in "$TMP/out" 'relu\x1b[2J'
[ "$(wc -l <"$TMP/out")" = 3 ] || { cat "$TMP/out" >&2; fail "history show: a line was forged"; }
expect_rc 0 "$ZLBENCH" history list --db "$DB"
no_ctl "$TMP/out"
expect_rc 1 "$ZLBENCH" history check "$TMP/B" --db "$DB"
no_ctl "$TMP/out"
[ "$(grep -c '^slower' "$TMP/out")" = 1 ] || fail "history check: not exactly one slower row"
expect_rc 1 "$ZLBENCH" history check "$TMP/B" --db "$DB" --format md
no_ctl "$TMP/out"
# history show finds rows by any spelling of the dtype; an option of
# another subcommand, and an argument too many, are named, not ignored.
expect_rc 0 "$ZLBENCH" history show "$EVIL_REAL" --dtype float32 --db "$DB"
cp "$TMP/out" "$TMP/show.float32"
expect_rc 0 "$ZLBENCH" history show "$EVIL_REAL" --dtype FP32 --db "$DB"
cmp -s "$TMP/out" "$TMP/show.float32" || fail "history show --dtype FP32 differs from float32"
expect_rc 2 "$ZLBENCH" history show relu --last 3 --db "$DB"
expect_in "$TMP/err" "belong to 'history check'"
expect_rc 2 "$ZLBENCH" history show relu --threshold 5 --db "$DB"
expect_in "$TMP/err" "belong to 'history check'"
expect_rc 2 "$ZLBENCH" history add "$TMP/A" --fail-on never --db "$TMP/never.sqlite"
expect_in "$TMP/err" "belong to 'history check'"
[ -e "$TMP/never.sqlite" ] && fail "a refused history add made a database"
expect_rc 2 "$ZLBENCH" history check "$TMP/B" --dtype float32 --db "$DB"
expect_in "$TMP/err" "--dtype and --shape belong to 'history show'"
expect_rc 2 "$ZLBENCH" history list extra --db "$DB"
expect_in "$TMP/err" "history list takes no argument (got 'extra')"
expect_rc 2 "$ZLBENCH" history show "$EVIL_REAL" --dtype float99 --db "$DB"
expect_in "$TMP/err" "dtype float99"
# A dtype zlbench does not know is matched as stored (FlagGems' complex64).
mkdir -p "$TMP/cx" && sed 's/"float32"/"complex64"/' "$TMP/A0/results.json" >"$TMP/cx/results.json"
expect_rc 0 "$ZLBENCH" history add "$TMP/cx" --db "$TMP/cx.sqlite"
expect_rc 0 "$ZLBENCH" history show relu --dtype torch.complex64 --db "$TMP/cx.sqlite"
expect_in "$TMP/out" "complex64"
# The report's history database is one of its inputs: never its --out.
cp "$TMP/cx.sqlite" "$TMP/cx.before"
expect_rc 2 "$ZLBENCH" report "$TMP/cx" --db "$TMP/cx.sqlite" --out "$TMP/cx.sqlite"
expect_in "$TMP/err" "is the input"
cmp -s "$TMP/cx.before" "$TMP/cx.sqlite" || fail "report --out overwrote its history database"
# A --db that is not there is an error for the report too (it drew every
# operator without history, exit 0).
expect_rc 2 "$ZLBENCH" report "$TMP/B" --history --db "$TMP/no-such.sqlite" --out "$TMP/nohist.html"
expect_in "$TMP/err" "history database '$TMP/no-such.sqlite' does not exist"
[ -e "$TMP/nohist.html" ] && fail "report wrote a page for a history database that is not there"
# The database keeps no host time: the history side has none, not 0.
expect_rc 1 "$ZLBENCH" history check "$TMP/B" --db "$DB" --format json
expect_in "$TMP/out" '"a_host_us": null'
grep -q '"a_host_us": 0' "$TMP/out" && fail "history check: the history side's host time read 0"

# Reading never writes: show, list and check leave the file as it was.
sum0=$(sha256sum <"$DB")
"$ZLBENCH" history show relu --db "$DB" >/dev/null 2>&1
"$ZLBENCH" history list --db "$DB" >/dev/null 2>&1
"$ZLBENCH" history check "$TMP/B" --db "$DB" >/dev/null 2>&1
[ "$(sha256sum <"$DB")" = "$sum0" ] || fail "history show/list/check changed the database"

# 6. Databases that are not ours are refused, byte for byte untouched.
# put_version FILE N: the header's user_version (4 bytes big-endian at 60).
put_version() {
  printf "\\$(printf %03o $(($2 >> 24 & 255)))\\$(printf %03o $(($2 >> 16 & 255)))\\$(printf %03o $(($2 >> 8 & 255)))\\$(printf %03o $(($2 & 255)))" |
    dd of="$1" bs=1 seek=60 conv=notrunc status=none
}
refused() { # DB MESSAGE
  local before
  before=$(sha256sum <"$1")
  expect_rc 6 "$ZLBENCH" history add "$TMP/B" --db "$1"
  expect_in "$TMP/err" "$2"
  [ "$(sha256sum <"$1")" = "$before" ] || fail "a refused add changed $1"
  expect_rc 2 "$ZLBENCH" history show relu --db "$1"
  expect_in "$TMP/err" "$2"
  expect_rc 2 "$ZLBENCH" history check "$TMP/B" --db "$1"
  [ "$(sha256sum <"$1")" = "$before" ] || fail "show or check changed $1"
}
cp "$DB" "$TMP/newer.sqlite"
put_version "$TMP/newer.sqlite" 99
refused "$TMP/newer.sqlite" "written by a newer zlbench (schema 99; this one reads 1)"
cp "$DB" "$TMP/v0.sqlite"
put_version "$TMP/v0.sqlite" 0
refused "$TMP/v0.sqlite" "not a zlbench history database"
# Another program's tables under our version number: a runs table
# without the digest column (the schema text renamed in place).
cp "$DB" "$TMP/foreign.sqlite"
LC_ALL=C sed -i 's/digest TEXT NOT NULL UNIQUE/digesx TEXT NOT NULL UNIQUE/' "$TMP/foreign.sqlite"
LC_ALL=C grep -q 'digesx TEXT' "$TMP/foreign.sqlite" || fail "could not rename the column"
refused "$TMP/foreign.sqlite" "not a zlbench history database"
# An empty file is a new database: add initialises it.
: >"$TMP/empty.sqlite"
expect_rc 0 "$ZLBENCH" history add "$TMP/A" --db "$TMP/empty.sqlite"
expect_in "$TMP/out" "added 1 run (1 rows)"

# A folder whose second results file is bad: refused, the database as it
# was, and what loaded before the bad file released (a sanitised build's
# leak check turns a leak into exit 1).
mkres "$TMP/half/ops/a/results.json" "relu" "[1]" "f" "$FAST" "$FAST"
mkdir -p "$TMP/half/ops/b" && echo '{bad' >"$TMP/half/ops/b/results.json"
cp "$TMP/empty.sqlite" "$TMP/half.sqlite"
expect_rc 2 "$ZLBENCH" history add "$TMP/half" --db "$TMP/half.sqlite"
expect_in "$TMP/err" "half/ops/b/results.json"
cmp -s "$TMP/empty.sqlite" "$TMP/half.sqlite" || fail "history add: a refused folder changed the database"
expect_rc 2 "$ZLBENCH" history check "$TMP/half" --db "$TMP/half.sqlite"
expect_in "$TMP/err" "half/ops/b/results.json"

# 7. A read-only database is read without writing. Root writes whatever
# the mode bits say: read it as another user (setpriv), or from a file
# the kernel keeps immutable (chattr +i); else say so and skip this part.
RO="$TMP/ro"
mkdir -p "$RO"
cp "$DB" "$RO/h.sqlite"
chmod 444 "$RO/h.sqlite"
chmod 555 "$RO"
chmod 755 "$TMP"
ro_ok=
if command -v setpriv >/dev/null &&
  setpriv --reuid=65534 --regid=65534 --clear-groups "$ZLBENCH" --help >/dev/null 2>&1; then
  AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
  ro_ok=setpriv
elif command -v chattr >/dev/null && chmod 755 "$RO" && chattr +i "$RO/h.sqlite" 2>/dev/null; then
  # an immutable file outlives rm -rf: undo it whatever happens
  trap 'chattr -i "$RO/h.sqlite" 2>/dev/null; rm -rf "$TMP"' EXIT
  AS=
  ro_ok=chattr
fi
if [ -n "$ro_ok" ]; then
  expect_rc 0 $AS "$ZLBENCH" history show "$EVIL_REAL" --db "$RO/h.sqlite"
  expect_in "$TMP/out" 'history: 1 rows of relu\x1b[2J'
  no_ctl "$TMP/out"
  expect_rc 0 $AS "$ZLBENCH" history list --db "$RO/h.sqlite"
  expect_rc 1 $AS "$ZLBENCH" history check "$TMP/B" --db "$RO/h.sqlite"
  expect_in "$TMP/out" "1 compared: 1 slower"
  [ "$ro_ok" = chattr ] && chattr -i "$RO/h.sqlite"
else
  echo "SKIP (read-only part): neither setpriv nor chattr +i works here"
fi
chmod 755 "$RO"
echo "ok: hostile inputs"
