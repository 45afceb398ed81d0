# zlbench merge: three host shards of the host corpus combine into one
# folder with a batch folder's layout, each operator exactly once; a
# missing shard is named with its operators and a merge after it ran
# completes the folder; shards that do not belong together, invalid shard
# files and a batch folder as OUT are refused.
. "$(dirname "$0")/lib.sh"
set -o pipefail
printf 'default:\n  shapes: [[16, 16]]\nmm:\n  shapes: [[16, 16, 16]]\n' >"$TMP/tiny.yaml"
shard() { # shard I N DIR [batch options]
  local i=$1 n=$2 d=$3
  shift 3
  "$ZLBENCH" batch --backend host --shard "$i/$n" --out "$d" --shape-file "$TMP/tiny.yaml" \
    --dtypes float32 $QUICK --progress never "$@" >"$TMP/shard.out" 2>&1
}
# (fnv1a64(NAME) >> 32) mod N, computed here independently of zlbench.
fnv_host() {
  local LC_ALL=C s=$1 n=$2 h=$((0xcbf29ce484222325)) i c
  for ((i = 0; i < ${#s}; i++)); do
    printf -v c '%d' "'${s:i:1}"
    h=$(((h ^ c) * 0x100000001b3))
  done
  echo $((((h >> 32) & 0xffffffff) % n))
}
ALL=$("$ZLBENCH" inventory --backend host | awk 'NR > 1 { print $1 }' | sort)
[ "$(echo "$ALL" | wc -l)" -ge 9 ] || fail "the host inventory is too small: $ALL"
for i in 0 1 2; do shard $i 3 "$TMP/s$i"; [ $? -le 1 ] || fail "shard $i: $(cat "$TMP/shard.out")"; done

# A shard that never started (no folder): its operators are named with it.
expect_rc 1 "$ZLBENCH" merge "$TMP/m" "$TMP/s0" "$TMP/nothing" "$TMP/s2"
# (not $want: expect_rc sets that)
ops1=$(for op in $ALL; do [ "$(fnv_host "$op" 3)" = 1 ] && echo "$op"; done)
[ -n "$ops1" ] || fail "no operator hashes to shard 1: choose another corpus"
got=$(sed -n 's/^missing: \([^ ]*\) (shard 1 of 3: no folder.*/\1/p' "$TMP/out" | sort)
[ "$got" = "$ops1" ] || fail "missing operators: got '$got', the hash says '$ops1'"
expect_in "$TMP/err" "nothing: no run_identity.json"
expect_in "$TMP/m/run_identity.json" '"complete": false'
expect_in "$TMP/m/run_identity.json" '"state": "absent"'
for op in $ops1; do
  [ ! -e "$TMP/m/ops/$op" ] || fail "$op is in the merge although its shard is missing"
done

# The same merge after the shard ran: complete, every operator once.
expect_rc 0 "$ZLBENCH" merge "$TMP/m" "$TMP/s0" "$TMP/s1" "$TMP/s2"
expect_in "$TMP/out" "3 of 3 shards, $(echo "$ALL" | wc -l) operators: $(echo "$ALL" | wc -l) merged"
[ "$(awk -F, 'NR > 1 { print $1 }' "$TMP/m/ops_status.csv")" = "$ALL" ] ||
  fail "ops_status.csv does not list every operator once: $(cut -d, -f1 "$TMP/m/ops_status.csv")"
for op in $ALL; do
  k=$(fnv_host "$op" 3)
  [ -f "$TMP/m/ops/$op/.complete" ] && [ -f "$TMP/m/ops/$op/run.log" ] || fail "$op has no results in the merge"
  cmp -s "$TMP/m/ops/$op/run.log" "$TMP/s$k/ops/$op/run.log" || fail "$op's run.log is not shard $k's"
  n=$(grep -c "^$op," "$TMP/m/summary.csv")
  [ "$n" -ge 1 ] || fail "$op has no row in summary.csv"
  grep "^$op," "$TMP/m/summary.csv" | grep -qv ",ops/$op/" && fail "$op's summary rows do not point into ops/$op/"
done
# The identity lists each shard with its host, devices and index.
for k in 0 1 2; do
  awk -v k=$k '/"shards": \[/ { on = 1 } on && /"index": / { gsub(/[^0-9]/, ""); if ($0 == k) found = 1 } END { exit !found }' \
    "$TMP/m/run_identity.json" || fail "the merged identity does not list shard $k"
done
expect_in "$TMP/m/run_identity.json" "\"hostname\": \"$(hostname)\""
expect_in "$TMP/m/run_identity.json" '"folder": "'"$TMP/s1"'"'
expect_in "$TMP/m/run_identity.json" '"kind": "batch"'
expect_in "$TMP/m/run_identity.json" '"complete": true'
[ "$(grep -c '"state": "finished"' "$TMP/m/run_identity.json")" = 3 ] || fail "not every shard is finished"
# What reads a batch folder reads the merge: zlbench summary gives the same rows.
cp "$TMP/m/summary.csv" "$TMP/merged.csv"
expect_rc 0 "$ZLBENCH" summary "$TMP/m" --quiet
cmp -s "$TMP/m/summary.csv" "$TMP/merged.csv" || fail "zlbench summary on the merge differs from merge's summary.csv"

# compare and report read the merge like a batch folder: the merge against
# itself is "same" on every row (exit 0), and the report has every operator.
expect_rc 0 "$ZLBENCH" compare "$TMP/m" "$TMP/m" --format csv
# (A row that failed in its shard, as a loaded machine may make one, has
# nothing to compare; every measured row must be "same".)
same=$(grep -c '^same,' "$TMP/out" || true)
[ "$same" -gt 0 ] || fail "compare of the merge with itself: no row same: $(head -5 "$TMP/out")"
if grep -E '^(slower|faster|noisy),' "$TMP/out"; then
  fail "compare of the merge with itself gave verdicts other than same"
fi
expect_rc 0 "$ZLBENCH" report "$TMP/m" --out "$TMP/m-report.html"
for op in $(awk -F, 'NR > 1 { print $1 }' "$TMP/m/ops_status.csv"); do
  grep -qF ">$op<" "$TMP/m-report.html" || fail "the report of the merge lacks $op"
done

# Idempotent: a second merge leaves the same files; a leftover of a merge
# that died is removed.
mkdir -p "$TMP/m/ops/.merge-add/x"
cp "$TMP/m/ops_status.csv" "$TMP/status1"
expect_rc 0 "$ZLBENCH" merge "$TMP/m" "$TMP/s0" "$TMP/s1" "$TMP/s2"
cmp -s "$TMP/status1" "$TMP/m/ops_status.csv" || fail "a second merge changed ops_status.csv"
[ ! -e "$TMP/m/ops/.merge-add" ] || fail "a leftover of an interrupted merge stayed"
expect_rc 0 "$ZLBENCH" merge --copy "$TMP/mc" "$TMP/s0" "$TMP/s1" "$TMP/s2"
[ "$(stat -c %h "$TMP/mc/ops/add/run.log")" = 1 ] || fail "--copy made hard links"

# Shards that do not belong together: the differing fields are named.
shard 1 3 "$TMP/d1" --dtypes float16
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/d1"
expect_in "$TMP/err" "do not belong to one batch"
expect_in "$TMP/err" "dtypes ('float32' vs 'float16')"
shard 1 2 "$TMP/c1"
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/c1"
expect_in "$TMP/err" "shard.count ('3' vs '2')"
shard 1 3 "$TMP/o1" --ops add,mul,exp
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/o1"
expect_in "$TMP/err" "selection ("
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/s0"
expect_in "$TMP/err" "shard 0 of 3 appears twice"

# A shard's files are untrusted: each bad field is named with file and line.
cp -r "$TMP/s1" "$TMP/bad"
sed -i '2s/,ok,/,great,/' "$TMP/bad/ops_status.csv"
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/bad"
expect_in "$TMP/err" "bad/ops_status.csv:2: unknown status"
cp "$TMP/s1/ops_status.csv" "$TMP/bad/ops_status.csv"
echo 'evil,ok,1,1,host,0,direct,0.1,,,' >>"$TMP/bad/ops_status.csv"
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/bad"
expect_in "$TMP/err" "operator 'evil' is not in the selection"
cp "$TMP/s1/ops_status.csv" "$TMP/bad/ops_status.csv"
sed -n 2p "$TMP/s1/ops_status.csv" >>"$TMP/bad/ops_status.csv"
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/bad"
expect_in "$TMP/err" "bad/ops_status.csv: operator '$(awk -F, 'NR == 2 { print $1 }' "$TMP/s1/ops_status.csv")' is listed twice"
cp "$TMP/s1/ops_status.csv" "$TMP/bad/ops_status.csv"
sed -i '2s/,1,1,/,1,x,/' "$TMP/bad/ops_status.csv"
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/bad"
expect_in "$TMP/err" "bad/ops_status.csv:2: dtype_level is not 1 or 2"
cp "$TMP/s1/ops_status.csv" "$TMP/bad/ops_status.csv"
sed -i 's/"index": 1,/"index": 7,/' "$TMP/bad/run_identity.json"
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/bad"
expect_in "$TMP/err" "shard.index is not an integer in 0..count-1"
cp "$TMP/s1/run_identity.json" "$TMP/bad/run_identity.json"
head -c 100 "$TMP/s1/run_identity.json" >"$TMP/bad/run_identity.json"
expect_rc 2 "$ZLBENCH" merge "$TMP/x" "$TMP/s0" "$TMP/bad"
expect_in "$TMP/err" "bad/run_identity.json:"
# A symbolic link in a shard's operator folder is not followed into the
# merge: the operator is refused by name and missing, not counted ok.
cp "$TMP/s1/run_identity.json" "$TMP/bad/run_identity.json"
op1=$(echo "$ops1" | head -1)
[ -d "$TMP/bad/ops/$op1" ] || fail "no folder of $op1 in shard 1"
ln -s /etc/passwd "$TMP/bad/ops/$op1/stolen.log"
expect_rc 1 "$ZLBENCH" merge "$TMP/mb" "$TMP/s0" "$TMP/bad" "$TMP/s2"
[ ! -e "$TMP/mb/ops/$op1" ] || fail "an operator with a symbolic link was merged"
expect_in "$TMP/out" "missing: $op1 (shard 1 of 3 ($(hostname)): '$TMP/bad/ops/$op1/stolen.log' is a symbolic link"
expect_in "$TMP/err" "$TMP/bad/ops/$op1/stolen.log: a symbolic link or special file"
rm "$TMP/bad/ops/$op1/stolen.log"
# A linked operator folder (ops/OP -> any folder) or a linked results.json
# likewise: never hard-linked in, never dropped silently.
mkdir "$TMP/other" && echo secret >"$TMP/other/results.json" && cp "$TMP/bad/ops/$op1/.complete" "$TMP/other/"
mv "$TMP/bad/ops/$op1" "$TMP/saved-op1" && ln -s "$TMP/other" "$TMP/bad/ops/$op1"
expect_rc 1 "$ZLBENCH" merge "$TMP/mb2" "$TMP/s0" "$TMP/bad" "$TMP/s2"
expect_in "$TMP/out" "missing: $op1 (shard 1 of 3 ($(hostname)): '$TMP/bad/ops/$op1' is a symbolic link"
[ ! -e "$TMP/mb2/ops/$op1" ] || fail "a linked operator folder was merged"
grep -rq secret "$TMP/mb2" && fail "files of a linked folder were taken into the merge"
rm "$TMP/bad/ops/$op1" && mv "$TMP/saved-op1" "$TMP/bad/ops/$op1"
mv "$TMP/bad/ops/$op1/results.json" "$TMP/saved.json" && ln -s "$TMP/other/results.json" "$TMP/bad/ops/$op1/results.json"
expect_rc 1 "$ZLBENCH" merge "$TMP/mb3" "$TMP/s0" "$TMP/bad" "$TMP/s2"
expect_in "$TMP/out" "missing: $op1 (shard 1 of 3 ($(hostname)): '$TMP/bad/ops/$op1/results.json' is a symbolic link"
expect_in "$TMP/out" "0 failed), 1 missing"
mv "$TMP/saved.json" "$TMP/bad/ops/$op1/results.json"
# The shard's ops/ itself a link (to a folder of operator folders with
# their .complete, and anything else): the whole shard is refused by name,
# its operators missing, nothing under the link taken in.
n1=$(echo "$ops1" | grep -c .)
mkdir "$TMP/other3" && cp -r "$TMP/bad/ops/." "$TMP/other3/" && echo secret >"$TMP/other3/$op1/private.txt"
mv "$TMP/bad/ops" "$TMP/saved-ops" && ln -s "$TMP/other3" "$TMP/bad/ops"
expect_rc 1 "$ZLBENCH" merge "$TMP/mb4" "$TMP/s0" "$TMP/bad" "$TMP/s2"
expect_in "$TMP/err" "refusing shard 1 of 3: '$TMP/bad/ops' is a symbolic link, not a folder"
expect_in "$TMP/out" "missing: $op1 (shard 1 of 3 ($(hostname)): '$TMP/bad/ops' is a symbolic link, refused)"
expect_in "$TMP/out" "0 failed), $n1 missing"
[ ! -e "$TMP/mb4/ops/$op1" ] || fail "an operator under a linked ops/ was merged"
grep -rq secret "$TMP/mb4" && fail "files under a linked ops/ were taken into the merge"
rm "$TMP/bad/ops" && mv "$TMP/saved-ops" "$TMP/bad/ops"
# ops_status.csv or run_identity.json a link or a FIFO: refused, never read
# (a FIFO would block the merge).
mv "$TMP/bad/ops_status.csv" "$TMP/saved.csv" && mkfifo "$TMP/bad/ops_status.csv"
expect_rc 1 timeout 20 "$ZLBENCH" merge "$TMP/mb5" "$TMP/s0" "$TMP/bad" "$TMP/s2"
expect_in "$TMP/err" "refusing shard 1 of 3: '$TMP/bad/ops_status.csv' is a FIFO, not a regular file"
expect_in "$TMP/out" "0 failed), $n1 missing"
rm "$TMP/bad/ops_status.csv" && ln -s "$TMP/saved.csv" "$TMP/bad/ops_status.csv"
expect_rc 1 "$ZLBENCH" merge "$TMP/mb6" "$TMP/s0" "$TMP/bad" "$TMP/s2"
expect_in "$TMP/err" "'$TMP/bad/ops_status.csv' is a symbolic link, not a regular file"
rm "$TMP/bad/ops_status.csv" && mv "$TMP/saved.csv" "$TMP/bad/ops_status.csv"
mv "$TMP/bad/run_identity.json" "$TMP/saved-id.json" && ln -s "$TMP/saved-id.json" "$TMP/bad/run_identity.json"
expect_rc 1 "$ZLBENCH" merge "$TMP/mb7" "$TMP/s0" "$TMP/bad" "$TMP/s2"
expect_in "$TMP/err" "refusing '$TMP/bad': '$TMP/bad/run_identity.json' is a symbolic link, not a regular file"
expect_in "$TMP/out" "missing: $op1 (shard 1 of 3: no folder among the inputs (never started, cancelled before it started, or refused: see the warnings))"
rm "$TMP/bad/run_identity.json" && mv "$TMP/saved-id.json" "$TMP/bad/run_identity.json"

# OUT is new, empty or an earlier merge: a folder of other files is
# refused untouched (exit 2), and so is OUT/ops as a link, whose target
# a merge would otherwise empty.
mkdir -p "$TMP/mydata/ops" && echo notes >"$TMP/mydata/ops/notes.txt"
expect_rc 2 "$ZLBENCH" merge "$TMP/mydata" "$TMP/s0" "$TMP/s1" "$TMP/s2"
expect_in "$TMP/err" "is not empty"
[ "$(ls -A "$TMP/mydata" "$TMP/mydata/ops" | tr '\n' ' ')" = "$TMP/mydata: ops  $TMP/mydata/ops: notes.txt " ] ||
  fail "a refused merge touched the folder: $(ls -AR "$TMP/mydata")"
mkdir -p "$TMP/precious/sub" "$TMP/out2" && echo a >"$TMP/precious/a.txt" && echo b >"$TMP/precious/sub/b.txt"
ln -s "$TMP/precious" "$TMP/out2/ops"
expect_rc 2 "$ZLBENCH" merge "$TMP/out2" "$TMP/s0" "$TMP/s1" "$TMP/s2"
expect_in "$TMP/err" "out2/ops' is a symbolic link"
[ "$(find "$TMP/precious" -type f | wc -l)" = 2 ] || fail "the target of OUT/ops lost files"
# In an earlier merge, a link planted in OUT/ops is removed itself, never
# what it points at.
ln -s "$TMP/precious" "$TMP/m/ops/planted"
expect_rc 0 "$ZLBENCH" merge "$TMP/m" "$TMP/s0" "$TMP/s1" "$TMP/s2"
[ ! -e "$TMP/m/ops/planted" ] && [ ! -L "$TMP/m/ops/planted" ] || fail "the planted link stayed"
[ "$(find "$TMP/precious" -type f | wc -l)" = 2 ] || fail "a merge removed files through a link"
# A file given as a shard folder is named as such (exit 2).
echo x >"$TMP/afile"
expect_rc 2 "$ZLBENCH" merge "$TMP/mf" "$TMP/afile" "$TMP/s1"
expect_in "$TMP/err" "$TMP/afile: not a directory"
[ ! -e "$TMP/mf" ] || fail "a refused merge created its output folder"
# Nor is the merge of another batch.
expect_rc 2 "$ZLBENCH" merge "$TMP/m" "$TMP/o1"
expect_in "$TMP/err" "holds the merge of another batch"
# A batch's own folder is never overwritten by a merge.
expect_rc 2 "$ZLBENCH" merge "$TMP/s2" "$TMP/s0" "$TMP/s1"
expect_in "$TMP/err" "holds results that are not a merge"

# A shard stopped by a signal keeps what it finished; the rest is named.
cp -r "$TMP/s2" "$TMP/i2"
op2=$(awk -F, 'NR == 2 { print $1 }' "$TMP/i2/ops_status.csv")
rm "$TMP/i2/ops/$op2/.complete"
sed -i 's/"finished": "[^"]*"/"finished": null/' "$TMP/i2/run_identity.json"
expect_rc 1 "$ZLBENCH" merge "$TMP/mi" "$TMP/s0" "$TMP/s1" "$TMP/i2"
expect_in "$TMP/out" "missing: $op2 (shard 2 of 3 ($(hostname)): stopped without finishing"
[ "$(grep -c '^missing:' "$TMP/out")" = 1 ] || fail "more than $op2 is missing: $(cat "$TMP/out")"
expect_rc 2 "$ZLBENCH" merge "$TMP/m"
expect_in "$TMP/err" "usage: zlbench merge OUT DIR"
echo "ok: shards merge into one batch folder; missing, foreign and invalid shards are named"
