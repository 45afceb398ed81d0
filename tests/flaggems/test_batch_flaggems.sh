# zlbench batch --provider flaggems over the miniature FlagGems-shaped suite
# (tests/flaggems/mini) on the host backend: discovery and --list, statuses
# for a crash, a hang, an unsupported dtype, a collection error, a poisoned
# context and a fatal error, run.log without ANSI escapes, summary.csv over
# FlagGems' tables, and resume after SIGINT. ctest sets ZLB_PYTHON (an
# interpreter with pytest) and ZLB_PY_PRELOAD (sanitiser runtimes for a
# sanitised libzlbench.so).
. "$ZLB_SRC/tests/cli/lib.sh"
[ -n "${ZLB_PYTHON:-}" ] || { echo "SKIP: no Python interpreter with pytest"; exit 77; }
MINI="$ZLB_SRC/tests/flaggems/mini"
# The children's interpreter: the sanitiser runtimes first where the
# library is sanitised, and the library of this build.
cat >"$TMP/python" <<EOF
#!/bin/sh
${ZLB_PY_PRELOAD:+export LD_PRELOAD='$ZLB_PY_PRELOAD' ASAN_OPTIONS='detect_leaks=0:protect_shadow_gap=0'}
export ZL_LIB_DIR='$ZLB_BUILD/lib'
exec '$ZLB_PYTHON' "\$@"
EOF
chmod +x "$TMP/python"
export ZL_PYTHON="$TMP/python"
# The fork servers' learned modules go to the user's cache: this test's own.
export XDG_CACHE_HOME="$TMP/cache"
unset ZL_FG_LEARN ZL_FG_EARLY_DONE ZL_FG_SPARES ZL_FG_LEARN_WAIT ZL_FG_PYCACHE ZL_CACHE_DIR
FG="--provider flaggems --flaggems $MINI --backend host"
FAST="--warmup-ms 1 --rep-ms 5 --level core"

# ---- discovery -----------------------------------------------------------------
mkdir -p "$TMP/cwd"
cd "$TMP/cwd" || fail "cannot enter $TMP/cwd"
expect_rc 0 "$ZLBENCH" batch $FG --list
[ "$(cut -f1 "$TMP/out" | tr '\n' ' ')" = \
  "abs abs_ add broken crash envdump fatal hang intonly isolation poison skipped softmax sum " ] ||
  fail "--list: unexpected operators: $(cut -f1 "$TMP/out" | tr '\n' ' ')"
expect_in "$TMP/out" "$(printf 'abs\tdevice=0\tdtypes=float16,bfloat16,float32\tfile=test_abs.py')"
# add's mark is in test_a_perf_parallel.py too, which sorts first (as
# FlagGems' test_blas_perf_parallel.py repeats mul's): its own file is run,
# the other named. Its test passes no dtypes=: its class's DEFAULT_DTYPES
# (BinaryPointwiseBenchmark's, inherited from base.py's Benchmark).
expect_in "$TMP/out" "$(printf 'add\tdevice=0\tdtypes=float16,bfloat16,float32\tfile=test_add.py\tothers=test_a_perf_parallel.py\n')"
# softmax's benchmark is built by a function, not a class: not resolved.
expect_in "$TMP/out" "$(printf 'softmax\tdevice=0\tdtypes=-\tfile=test_reduction.py\n')"
grep -q "^abs	.*others=" "$TMP/out" && fail "--list names other files for abs: $(cat "$TMP/out")"
expect_rc 0 "$ZLBENCH" batch $FG --list --stage beta
[ "$(cut -f1 "$TMP/out" | tr '\n' ' ')" = "abs add softmax sum " ] || fail "--stage beta: $(cat "$TMP/out")"
# --list runs nothing and writes nothing.
[ -z "$(ls -A "$TMP/cwd")" ] || fail "--list wrote into the current folder: $(ls -A "$TMP/cwd")"
# The C corpus lists too, one name first on each line.
expect_rc 0 "$ZLBENCH" batch --backend host --list
grep -q "^add	" "$TMP/out" || fail "corpus --list lacks add"
# Errors before anything runs.
expect_rc 2 "$ZLBENCH" batch --provider flaggems --backend host --list
expect_in "$TMP/err" "needs --flaggems DIR"
expect_rc 2 "$ZLBENCH" batch --backend host --stage stable --list
expect_in "$TMP/err" "belong to --provider flaggems"
expect_rc 2 "$ZLBENCH" batch $FG --list --stage gold
expect_rc 2 "$ZLBENCH" batch $FG --list --verbose
expect_in "$TMP/err" "run option '--verbose' has no meaning for --provider flaggems"
expect_rc 2 "$ZLBENCH" batch $FG --list --ops abs,nosuchop
expect_in "$TMP/err" "unknown operator 'nosuchop'"
expect_rc 2 "$ZLBENCH" batch --provider flaggems --flaggems "$TMP" --backend host --list
expect_in "$TMP/err" "no benchmark/ folder"
# A scan that says something malformed is refused, naming the line.
printf '#!/bin/sh\nprintf "abs\\ttest_abs.py\\t-\\t-\\nbad name\\t../x.py\\t-\\t-\\n"\n' >"$TMP/badscan"
chmod +x "$TMP/badscan"
expect_rc 2 env ZL_PYTHON="$TMP/badscan" "$ZLBENCH" batch $FG --list
expect_in "$TMP/err" "flaggems_discover output, line 2"
[ -z "$(ls -A "$TMP/cwd")" ] || fail "a refused batch wrote into the current folder"

# ---- one batch over every kind of operator -------------------------------------
OUT="$TMP/res"
# Bytecode allowed (ctest forbids it): the FlagGems processes keep theirs
# under the user's cache (PYTHONPYCACHEPREFIX), not beside the sources.
dwb=${PYTHONDONTWRITEBYTECODE-}
unset PYTHONDONTWRITEBYTECODE
# (hang is timed out in the resume part below, where it costs one limit.)
# (Colour forced: run.log must still be free of ANSI escapes. --retries 3:
# crash's deterministic failure stops its retries after the second try.)
expect_rc 1 env PY_COLORS=1 FLAGGEMS_COMMIT=0123abcd "$ZLBENCH" batch $FG $FAST --out "$OUT" \
  --timeout 30 --retries 3 \
  --ops abs,add,softmax,crash,intonly,broken,poison,fatal,skipped --dtypes float16,float32
[ -n "$dwb" ] && export PYTHONDONTWRITEBYTECODE="$dwb"
st() { csv_field "$OUT/ops_status.csv" "$1" "$2"; }
ls "$TMP/cache/zlbench/pycache$MINI/benchmark/"base.*.pyc >/dev/null 2>&1 ||
  fail "no bytecode under the cache: $(find "$TMP/cache/zlbench" -name '*.pyc' | head -5)"
ls "$TMP/cache/zlbench/pycache$ZLB_SRC/python/zlbench/"pytest_plugin.*.pyc \
  >/dev/null 2>&1 || fail "the plugin's bytecode is not under the cache"
# Every child but the first (which comes before the first spare is ready)
# came from a spare (flag_gems, the spares' import, is not installed here:
# each spare says so and the child goes on without it).
sed -n 's/.*served \([0-9]*\) children (\([0-9]*\) by a spare[,)].*/\1 \2/p' \
  "$OUT/forkserver-0.log" | awk '{n = $1; m = $2} END {exit !(NR == 1 && m >= 1 && m >= n - 1)}' ||
  fail "children not from a spare: $(tail -3 "$OUT/forkserver-0.log")"
# Each child the plugin timed held the device's quiet lock and said done
# before its end (the next child started meanwhile, its tests after it).
sed -n 's/.* \([0-9]*\) said done before their end.*/\1/p' "$OUT/forkserver-0.log" |
  awk '{n = $1} END {exit !(NR == 1 && n >= 3)}' ||
  fail "children did not say done before their end: $(tail -3 "$OUT/forkserver-0.log")"
# What the children imported from outside the suite is kept for the next
# batch (the stand-in triton is outside benchmark/; benchmark.base is not).
learned=$(cat "$TMP"/cache/zlbench/forkserver/*.modules 2>/dev/null)
echo "$learned" | grep -qx 'triton.testing' || fail "no learned modules: $learned"
echo "$learned" | grep -q '^benchmark' && fail "the suite's own modules were learned: $learned"
"$ZLB_PYTHON" - "$OUT/ops/add/run_identity.json" <<'EOF' || fail "add's timeline: no quiet lock held"
import json, sys
t = json.load(open(sys.argv[1]))["timeline"]
sys.exit(not (t.get("quiet_held") is True and 0 <= t.get("quiet_wait_s", -1) < 60
              and t.get("client_start_s") is not None and t["client_start_s"] >= 0
              and isinstance(t.get("request_at"), float) and t["request_at"] > 1e9))
EOF
# add ran from test_add.py, not the file before it holding its mark, and
# its identity names both.
grep -q "test_a_perf_parallel" "$OUT/ops/add/run.log" &&
  fail "add ran test_a_perf_parallel.py: $(grep test_a_perf_parallel "$OUT/ops/add/run.log")"
grep -q "add_parallel" "$OUT/ops/add/results.json" && fail "add's results are the parallel file's"
"$ZLB_PYTHON" - "$OUT/ops/add/run_identity.json" "$OUT/ops/abs/run_identity.json" <<'EOF' ||
import json, sys
add, abs_ = (json.load(open(p))["flaggems"] for p in sys.argv[1:3])
sys.exit(not (add.get("file") == "test_add.py"
              and add.get("other_files") == ["test_a_perf_parallel.py"]
              and abs_.get("file") == "test_abs.py" and abs_.get("other_files") == []))
EOF
  fail "the identities do not name the files: $(cat "$OUT/ops/add/run_identity.json")"
[ "$(st abs status)" = ok ] || fail "abs: $(st abs status)"
[ "$(st add status)" = ok ] || fail "add: $(st add status)"
[ "$(st softmax status)" = ok ] || fail "softmax: $(st softmax status)"
[ "$(st abs timer)" = direct ] || fail "abs timer: $(st abs timer)"
[ "$(st crash status)" = crashed ] || fail "crash: $(st crash status)"
[ "$(st broken status)" = collection_error ] || fail "broken: $(st broken status)"
case "$(st broken error_signature)" in
*"No module named 'module_that_does_not_exist'"*) ;;
*) fail "broken's signature: $(st broken error_signature)" ;;
esac
# intonly has neither float dtype: FlagGems' own refusal, per dtype.
[ "$(st intonly status)" = dtype_unsupported ] || fail "intonly: $(st intonly status)"
[ "$(st intonly failed_dtypes)" = "float16;float32" ] || fail "intonly dtypes: $(st intonly failed_dtypes)"
[ "$(st poison status)" = ok_capture_denied ] || fail "poison: $(st poison status)"
[ "$(st poison attempts)" = 2 ] || fail "poison attempts: $(st poison attempts)"
[ "$(st fatal status)" = fatal ] || fail "fatal: $(st fatal status)"
# A skipped test measured nothing: not "ok".
[ "$(st skipped status)" = skipped ] || fail "skipped: $(st skipped status)"
# A collection error is final and concerns the operator, not a dtype: one
# child. A crash fails the same way twice, which ends its retries
# (--retries 3 would allow four tries), then one child per dtype, each
# tried twice: 6, not 12.
[ "$(st broken attempts)" = 1 ] || fail "broken attempts: $(st broken attempts)"
[ "$(st skipped attempts)" = 1 ] || fail "skipped attempts: $(st skipped attempts)"
[ "$(st crash attempts)" = 6 ] || fail "crash attempts: $(st crash attempts)"
# run.log is the child's stdout without ANSI escapes; the tables and the
# plugin's lines are in it.
[ -f "$OUT/ops/abs/run.log" ] || fail "no run.log for abs"
if grep -q "$(printf '\033')" "$OUT"/ops/*/run.log "$OUT"/ops/*/*/run.log 2>/dev/null; then
  fail "ANSI escapes in a run.log"
fi
expect_in "$OUT/ops/abs/run.log" "Operator: abs  Performance Test (dtype=torch.float16, mode=kernel,level=core)"
expect_in "$OUT/ops/abs/run.log" "# zlbench: row 1: torch timer=direct"
[ -f "$OUT/ops/abs/zlbench_rows.json" ] || fail "no sidecar for abs"
expect_in "$OUT/ops/poison/run_identity.json" '"poison"'
grep -q '"provider": *{ *"name": *"flaggems"' "$OUT/run_identity.json" ||
  grep -A1 '"provider"' "$OUT/run_identity.json" | grep -q '"flaggems"' ||
  fail "the batch's run_identity.json does not name the provider"
# summary.csv covers FlagGems' rows: 2 dtypes x 2 shapes for abs.
[ "$(grep -c '^abs,,float' "$OUT/summary.csv")" = 4 ] || fail "summary.csv: $(grep '^abs' "$OUT/summary.csv")"
# ...with the timer the plugin's per-row lines name.
[ "$(grep -c '^abs,,float.*,direct,,SUCCESS,' "$OUT/summary.csv")" = 4 ] ||
  fail "summary.csv lacks the plugin's timer: $(grep '^abs' "$OUT/summary.csv")"
expect_in "$OUT/summary.csv" "softmax,,float16"
# The identity names the FlagGems commit and the device the rows ran on.
"$ZLB_PYTHON" - "$OUT/ops/abs/run_identity.json" <<'EOF' || fail "abs's identity: $(head -c 600 "$OUT/ops/abs/run_identity.json")"
import json, sys
i = json.load(open(sys.argv[1]))
sys.exit(not (i["flaggems"]["commit"] == "0123abcd" and isinstance(i.get("device"), str)
              and i["device"] and i["backend"] == "host"))
EOF
# results.json in zlbench's schema: report and compare read FlagGems'
# rows as a C operator's (abs: 2 dtypes x 2 shapes, torch against gems).
"$ZLB_PYTHON" - "$OUT/ops/abs/results.json" <<'EOF' || fail "abs's results.json: $(head -c 800 "$OUT/ops/abs/results.json")"
import json, sys
r = json.load(open(sys.argv[1]))
rows = [row for t in r["tables"] for row in t["rows"]]
sys.exit(not (r["schema"] == "zlbench.results/1" and r["operator"] == "abs"
              and sorted(t["dtype"] for t in r["tables"]) == ["float16", "float32"]
              and len(rows) == 4 and all(row["status"] == "SUCCESS" for row in rows)
              and all(row["baseline"]["impl"] == "torch" and row["candidate"]["impl"] == "gems"
                      and len(row["candidate"]["samples"]) >= 2 and row["speedup"] > 0
                      for row in rows)))
EOF
expect_rc 0 "$ZLBENCH" report "$OUT" --out "$TMP/report.html"
grep -q '>abs<' "$TMP/report.html" || fail "the report has no abs row"
grep -q 'crash' "$TMP/report.html" || fail "the report does not list the crashed operator"
expect_rc 0 "$ZLBENCH" compare "$OUT" "$OUT" --format csv
[ "$(grep -c '^same,abs,flaggems,float.*,both,' "$TMP/out")" = 4 ] || fail "compare: $(grep ',abs,' "$TMP/out")"
# The children were forked from the batch's fork server (python -m
# zlbench.forkserver), which ended with the batch; none ran on its own.
expect_in "$OUT/forkserver-0.log" "serving on "
served=$(sed -n 's/.*served \([0-9]*\) children.*/\1/p' "$OUT/forkserver-0.log")
[ "${served:-0}" -ge 9 ] || fail "the fork server served ${served:-no} children: $(cat "$OUT/forkserver-0.log")"
if grep -l "running pytest directly" "$OUT"/ops/*/stderr.log "$OUT"/ops/*/*/stderr.log 2>/dev/null; then
  fail "a child ran without the fork server"
fi

# Shapes: a zlbench shape file outside the checkout with FlagGems' class
# keys (--shape-file or ZL_SHAPE_FILE; FlagGems' pytest.ini still found),
# SHAPE_MODE=upstream keeps FlagGems' own; TEST_NODE names the node.
printf 'UnaryPointwiseBenchmark:\n  shapes:\n    - [32, 48]\n' >"$TMP/shapes.yaml"
shapes_of() {   # results folder -> abs's float16 shapes, space-separated
  "$ZLB_PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1] + "/ops/abs/results.json"))
print(" ".join(row["shape"] for t in r["tables"] for row in t["rows"]))' "$1"
}
expect_rc 0 "$ZLBENCH" batch $FG $FAST --ops abs --dtypes float16 --shape-file "$TMP/shapes.yaml" \
  --out "$TMP/shp1"
[ "$(shapes_of "$TMP/shp1")" = "[32, 48]" ] || fail "--shape-file: $(shapes_of "$TMP/shp1")"
expect_rc 0 env ZL_SHAPE_FILE="$TMP/shapes.yaml" "$ZLBENCH" batch $FG $FAST --ops abs \
  --dtypes float16 --out "$TMP/shp2"
[ "$(shapes_of "$TMP/shp2")" = "[32, 48]" ] || fail "ZL_SHAPE_FILE: $(shapes_of "$TMP/shp2")"
expect_rc 0 env SHAPE_MODE=upstream TEST_NODE='test_{op}.py::test_abs' "$ZLBENCH" batch $FG $FAST \
  --ops abs --dtypes float16 --shape-file "$TMP/shapes.yaml" --out "$TMP/shp3"
[ "$(shapes_of "$TMP/shp3")" = "[64, 64] [256, 256]" ] || fail "SHAPE_MODE=upstream: $(shapes_of "$TMP/shp3")"
expect_in "$TMP/shp3/ops/abs/run_identity.json" "test_abs.py::test_abs"

# What a child is given from the backend: on the fake MUSA runtime,
# GEMS_VENDOR=mthreads (FlagGems then skips its vendor probe) and
# MUSA_VISIBLE_DEVICES naming the operator's device; and the batch's
# --mode, --level and --dtypes on its command line.
# (It prints no table: no_rows, its output kept with its attempt.)
expect_rc 1 env ZL_MUSA_LIB="$ZLB_FAKE_MUSA" ZL_FG_FORKSERVER=0 "$ZLBENCH" batch \
  --provider flaggems --flaggems "$MINI" --backend musa --devices 1 --ops envdump \
  --mode cudagraph --level comprehensive --dtypes float32 --out "$TMP/env"
[ "$(csv_field "$TMP/env/ops_status.csv" envdump status)" = no_rows ] ||
  fail "envdump: $(csv_field "$TMP/env/ops_status.csv" envdump status)"
log="$TMP/env/ops/envdump/attempts/1-all/run.log"
expect_in "$log" "ENV GEMS_VENDOR=mthreads"
expect_in "$log" "ENV MUSA_VISIBLE_DEVICES=1"
expect_in "$log" "ENV ZL_BACKEND=musa"
expect_in "$log" "ENV ZL_FG_OP=envdump"
expect_in "$log" "ENV CUDA_VISIBLE_DEVICES=-"
grep -q "^ARGV .*test_envdump.py -m envdump --mode cudagraph --level comprehensive --dtypes float32" \
  "$log" || fail "envdump's command line: $(grep ARGV "$log")"

# A dtype the suite does not know at all (its --dtypes choices): refused
# per dtype, the known one measured.
# (Plain children, without a fork server: the same statuses.)
expect_rc 1 env ZL_FG_FORKSERVER=0 "$ZLBENCH" batch $FG $FAST --ops add --dtypes float16,int64 \
  --out "$TMP/dt"
[ -e "$TMP/dt/forkserver-0.log" ] && fail "ZL_FG_FORKSERVER=0 started a fork server"
# (The signature holds commas: the row is matched whole.)
grep -q '^add,partial,3,2,.*"exit 4: __main__.py: error: argument --dtypes: invalid choice: .int64. .*",int64,"' \
  "$TMP/dt/ops_status.csv" || fail "add float16,int64: $(grep '^add' "$TMP/dt/ops_status.csv")"

# Host shards of a FlagGems screen merge like the corpus's, its statuses
# included.
expect_rc 1 "$ZLBENCH" batch $FG $FAST --ops abs,broken,skipped --shard 0/1 --out "$TMP/sh/shard-0"
expect_rc 0 "$ZLBENCH" merge "$TMP/sh/merged" "$TMP/sh/shard-0"
[ "$(csv_field "$TMP/sh/merged/ops_status.csv" broken status)" = collection_error ] ||
  fail "merged broken: $(csv_field "$TMP/sh/merged/ops_status.csv" broken status)"
[ "$(csv_field "$TMP/sh/merged/ops_status.csv" skipped status)" = skipped ] || fail "merged skipped"

# Replay reuses finished FlagGems results as it does the corpus's.
expect_rc 1 "$ZLBENCH" batch $FG $FAST --ops abs,broken --replay-from "$OUT" --out "$TMP/replayed"
[ "$(csv_field "$TMP/replayed/ops_status.csv" abs status)" = replayed ] || fail "abs not replayed"
[ "$(csv_field "$TMP/replayed/ops_status.csv" broken status)" = replayed_collection_error ] ||
  fail "broken: $(csv_field "$TMP/replayed/ops_status.csv" broken status)"
expect_in "$TMP/replayed/ops/abs/run.log" "# zlbench: row 2: torch timer=direct"

# ---- resume after SIGINT ---------------------------------------------------------
OUT="$TMP/res2"
# One dtype: hang's timeout is final at level 1 (several would go on to
# one child per dtype, tested below).
"$ZLBENCH" batch $FG $FAST --ops abs,hang,sum --dtypes float16 --devices 0 --timeout 60 \
  --retries 0 --out "$OUT" >"$TMP/first.out" 2>&1 &
bgpid=$!
started=0
for i in $(seq 1 300); do
  [ -d "$OUT/ops/hang/attempts" ] && { started=1; break; }
  sleep 0.05
done
[ "$started" = 1 ] || { kill -TERM $bgpid; wait $bgpid; cat "$TMP/first.out" >&2; fail "hang never started"; }
sleep 0.5
kill -INT $bgpid
wait $bgpid
rc=$?
[ "$rc" = 130 ] || { cat "$TMP/first.out" >&2; fail "interrupted batch exited $rc, expected 130"; }
[ -f "$OUT/ops/abs/.complete" ] || fail "abs (before hang) was not completed"
[ -f "$OUT/ops/hang/.complete" ] && fail "the interrupted operator was marked complete"
sleep 0.2
pgrep -f -- "$MINI/benchmark/test_hang.py -m hang" >/dev/null && fail "a pytest child survived the interrupt"
# The fork server and what it forked (its command line) are gone too.
pgrep -f -- "zlb-fg-$bgpid-" >/dev/null && fail "the fork server or a forked child survived the interrupt"
expect_rc 1 "$ZLBENCH" batch $FG $FAST --ops abs,hang,sum --dtypes float16 --devices 0 \
  --timeout 2 --grace 0.2 --retries 0 --out "$OUT"
expect_in "$TMP/out" "1 resumed"
[ "$(csv_field "$OUT/ops_status.csv" hang status)" = timeout ] || fail "hang did not run on resume"
[ "$(csv_field "$OUT/ops_status.csv" hang attempts)" = 1 ] || fail "hang attempts on resume"
[ "$(csv_field "$OUT/ops_status.csv" sum status)" = ok ] || fail "sum did not run on resume"
[ "$(csv_field "$OUT/ops_status.csv" abs status)" = ok ] || fail "abs lost on resume"

# ---- an operator stopped at level 2 goes on from the dtype it was at ---------------
# hang hangs at float32 only: the all-dtypes child times out, float16 and
# bfloat16 pass one child each, float32's child is interrupted. The resume
# runs float32 alone (no all-dtypes child again), keeping the two passed.
OUT="$TMP/res3"
L2="--ops hang --dtypes float16,bfloat16,float32 --devices 0 --grace 0.2 --retries 0"
ZLB_MINI_HANG_DTYPES=float32 "$ZLBENCH" batch $FG $FAST $L2 --timeout 3 --out "$OUT" \
  >"$TMP/l2.out" 2>&1 &
bgpid=$!
started=0
for i in $(seq 1 600); do
  ls "$OUT/ops/hang/attempts" 2>/dev/null | grep -q float32 && { started=1; break; }
  sleep 0.05
done
[ "$started" = 1 ] || { kill -TERM $bgpid; wait $bgpid; cat "$TMP/l2.out" >&2; fail "hang's float32 child never started"; }
kill -INT $bgpid
wait $bgpid
rc=$?
[ "$rc" = 130 ] || { cat "$TMP/l2.out" >&2; fail "interrupted level-2 batch exited $rc"; }
expect_in "$TMP/l2.out" "a resume goes on from float32"
expect_in "$OUT/ops/hang/.progress" '"label": "bfloat16"'
[ -d "$OUT/ops/hang/float16" ] && [ -d "$OUT/ops/hang/bfloat16" ] || fail "level-2 results lost"
expect_rc 1 env ZLB_MINI_HANG_DTYPES=float32 "$ZLBENCH" batch $FG $FAST $L2 --timeout 2 --out "$OUT"
expect_in "$TMP/out" "goes on at level 2 from float32 (2 of 3 dtypes done before)"
grep -q "attempt 1 (all dtypes)" "$TMP/out" && fail "the resume ran the all-dtypes child again"
[ "$(csv_field "$OUT/ops_status.csv" hang status)" = partial ] ||
  fail "resumed hang: $(csv_field "$OUT/ops_status.csv" hang status)"
[ "$(csv_field "$OUT/ops_status.csv" hang failed_dtypes)" = float32 ] || fail "resumed hang: failed dtypes"
[ "$(csv_field "$OUT/ops_status.csv" hang attempts)" = 5 ] ||
  fail "resumed hang: $(csv_field "$OUT/ops_status.csv" hang attempts) attempts, want 4 + 1"
[ -f "$OUT/ops/hang/.progress" ] && fail "the progress file outlived the resume"
# A progress file is untrusted input: one that cannot be read is said and
# the operator starts over.
mkdir -p "$TMP/res4/ops/abs"
echo '{}' >"$TMP/res4/run_identity.json" # a batch's folder: a batch wrote its identity
echo '{"schema": "zlbench-progress-1", "operator": "abs", "done": [' >"$TMP/res4/ops/abs/.progress"
expect_rc 0 "$ZLBENCH" batch $FG $FAST --ops abs --dtypes float16 --out "$TMP/res4"
expect_in "$TMP/out" "abs                  starts over: its .progress is unreadable"
[ "$(csv_field "$TMP/res4/ops_status.csv" abs status)" = ok ] || fail "abs after a bad .progress"

# ---- two children at a time on one device ----------------------------------------
# hang is selected first and holds its slot until its time limit; with a
# second slot abs runs beside it and finishes first. Each child's identity
# records that it shared the device.
expect_rc 1 "$ZLBENCH" batch $FG $FAST --ops hang,abs --devices 0 --jobs-per-device 2 \
  --timeout 8 --grace 0.2 --retries 0 --dtypes float16 --out "$TMP/par" --progress never
grep -E '^\[ *[0-9]+/2\] device 0 ' "$TMP/out" | head -1 | grep -q ' abs ' ||
  fail "abs did not finish while hang ran: $(cat "$TMP/out")"
[ "$(csv_field "$TMP/par/ops_status.csv" hang status)" = timeout ] || fail "par: hang"
[ "$(csv_field "$TMP/par/ops_status.csv" abs status)" = ok ] || fail "par: abs"
expect_in "$TMP/par/ops/abs/run_identity.json" '"children_per_device": 2'
# Children that share a device by choice take no quiet lock.
expect_not_in "$TMP/par/ops/abs/run_identity.json" '"quiet_held"'
expect_in "$TMP/par/run_identity.json" '"jobs_per_device": 2'
expect_rc 2 "$ZLBENCH" batch $FG --ops abs --jobs-per-device 0 --out "$TMP/par0"
expect_in "$TMP/err" "--jobs-per-device"

# ---- a fork server that cannot start -----------------------------------------------
# Its preload ends the process (an import that raises is only logged: the
# children import it themselves): the batch says so and the children start
# on their own, with the same results.
mkdir -p "$TMP/badmod"
printf 'import sys\nsys.stderr.write("this preload ends the server\\n")\nraise SystemExit(1)\n' \
  >"$TMP/badmod/zlb_bad_preload.py"
expect_rc 0 env ZL_FG_PRELOAD=zlb_bad_preload PYTHONPATH="$TMP/badmod${PYTHONPATH:+:$PYTHONPATH}" \
  "$ZLBENCH" batch $FG $FAST --ops abs --dtypes float16 --out "$TMP/bad"
expect_in "$TMP/out" "note: the fork server of device 0 ended (exit 1)"
expect_in "$TMP/bad/forkserver-0.log" "this preload ends the server"
[ "$(csv_field "$TMP/bad/ops_status.csv" abs status)" = ok ] || fail "abs without its fork server"
# The child ran on its own: started plainly when the batch had seen the
# server end (it starts beside the operator scan and can end before the
# first child), else through zlbench.forkrun, which finds no server and
# says so. Either way the server served nothing.
grep -q "served [1-9]" "$TMP/bad/forkserver-0.log" && fail "the dead server served: $(cat "$TMP/bad/forkserver-0.log")"
grep -q "zlbench.forkrun" "$TMP/bad/ops/abs/stderr.log" &&
  expect_in "$TMP/bad/ops/abs/stderr.log" "running pytest directly"
# ---- the fork server starts beside the operator scan ----------------------------
# An interpreter whose operator scan takes 1.5 s: the server starts before
# the scan ends (it used to start after the scan, the selection and the
# resume checks).
cat >"$TMP/slowscan" <<EOF
#!/bin/sh
case "\$*" in
  *zlbench.flaggems_discover*) date +%s.%N >"$TMP/scan_at"; sleep 1.5 ;;
  *zlbench.forkserver*) date +%s.%N >"$TMP/server_at" ;;
esac
exec '$TMP/python' "\$@"
EOF
chmod +x "$TMP/slowscan"
expect_rc 0 env ZL_PYTHON="$TMP/slowscan" "$ZLBENCH" batch $FG $FAST --ops add --dtypes float16 \
  --out "$TMP/early" --progress never
[ -s "$TMP/scan_at" ] && [ -s "$TMP/server_at" ] || fail "no scan or server start recorded"
awk -v s="$(cat "$TMP/scan_at")" -v v="$(cat "$TMP/server_at")" 'BEGIN { exit !(v < s + 1.0) }' ||
  fail "the fork server started $(awk -v s="$(cat "$TMP/scan_at")" -v v="$(cat "$TMP/server_at")" \
    'BEGIN { printf "%.2f", v - s }') s after the scan began: after the scan"
[ "$(csv_field "$TMP/early/ops_status.csv" add status)" = ok ] || fail "early: add"
# A batch that runs no child (all resumed, or an unknown operator) leaves
# an earlier run's server log as it was, and no .part behind.
printf 'earlier run\n' >"$TMP/early/forkserver-0.log"
expect_rc 0 "$ZLBENCH" batch $FG $FAST --ops add --dtypes float16 --out "$TMP/early" --progress never
expect_in "$TMP/out" "1 resumed"
expect_rc 2 "$ZLBENCH" batch $FG $FAST --ops add,nosuchop --out "$TMP/early" --progress never
expect_in "$TMP/err" "unknown operator 'nosuchop'"
[ "$(cat "$TMP/early/forkserver-0.log")" = "earlier run" ] ||
  fail "a batch that ran no child rewrote the server log: $(head -3 "$TMP/early/forkserver-0.log")"
ls "$TMP/early"/*.part >/dev/null 2>&1 && fail "server logs left behind: $(ls "$TMP/early")"
# A --flaggems that is not a checkout is refused before any server starts.
rm -f "$TMP/server_at"
expect_rc 2 env ZL_PYTHON="$TMP/slowscan" "$ZLBENCH" batch --provider flaggems --flaggems "$TMP/cwd" \
  --backend host --out "$TMP/notfg" --progress never
expect_in "$TMP/err" "no benchmark/ folder"
[ ! -e "$TMP/server_at" ] || fail "a fork server started for a --flaggems without benchmark/"
# --list starts none.
rm -f "$TMP/server_at"
expect_rc 0 env ZL_PYTHON="$TMP/slowscan" "$ZLBENCH" batch $FG --list
[ ! -e "$TMP/server_at" ] || fail "--list started a fork server"

echo "ok: batch --provider flaggems"
