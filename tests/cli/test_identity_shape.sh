# run_identity.json of a run and of a batch: every member both carry has
# the same JSON type in each (one writer, src/base/identity.c).
. "$(dirname "$0")/lib.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
set -o pipefail
: "${ZLB_JSON_TYPES:?ZLB_JSON_TYPES must point at the json_types helper}"
OUT="$TMP/b"
expect_rc 0 "$ZLBENCH" batch --backend test --lib "$TESTOPS" --ops good_copy --devices 0 \
  --out "$OUT" $QUICK --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml"
# The batch's child is a `zlbench run`: its identity is a run's.
RUN_ID="$OUT/ops/good_copy/run_identity.json"
BATCH_ID="$OUT/run_identity.json"
# PATH TYPE only (values differ), array indices folded to [].
types() { "$ZLB_JSON_TYPES" "$1" | awk '{ gsub(/\[[0-9]+\]/, "[]", $1); print $1, $2 }'; }
types "$RUN_ID" >"$TMP/run.types" || fail "cannot read $RUN_ID"
types "$BATCH_ID" >"$TMP/batch.types" || fail "cannot read $BATCH_ID"
[ -s "$TMP/run.types" ] && [ -s "$TMP/batch.types" ] || fail "json_types printed nothing"
expect_in "$TMP/run.types" ".kind string"
expect_in "$RUN_ID" '"kind": "run"'
expect_in "$BATCH_ID" '"kind": "batch"'

# The common members (docs/formats.md): present in both, same type.
for key in .schema .kind .tool .tool.name .tool.version .tool.git_commit .argv '.argv[]' \
  .host .host.hostname .host.kernel .host.machine .host.pid \
  .backend .backend.name .backend.visibility_env .dtypes .started .finished; do
  r=$(awk -v k="$key" '$1 == k { print $2; exit }' "$TMP/run.types")
  b=$(awk -v k="$key" '$1 == k { print $2; exit }' "$TMP/batch.types")
  [ -n "$r" ] || fail "a run's run_identity.json lacks $key"
  [ -n "$b" ] || fail "a batch's run_identity.json lacks $key"
  [ "$r" = "$b" ] || fail "$key is $r in a run's run_identity.json but $b in a batch's"
done
# Both were written the second time, at the end.
grep -qx ".finished string" "$TMP/run.types" || fail "the run's identity is not final"
grep -qx ".finished string" "$TMP/batch.types" || fail "the batch's identity is not final"

# Any member both carry has one type, not only the listed ones.
sort -u "$TMP/run.types" >"$TMP/r.s"
sort -u "$TMP/batch.types" >"$TMP/b.s"
awk 'NR == FNR { t[$1] = t[$1] " " $2; next }
     ($1 in t) && index(t[$1] " ", " " $2 " ") == 0 { print $1 ": run" t[$1] ", batch " $2; bad = 1 }
     END { exit bad }' "$TMP/r.s" "$TMP/b.s" >"$TMP/diff" ||
  fail "members with different types: $(cat "$TMP/diff")"
echo "ok: run and batch identities share one shape"
