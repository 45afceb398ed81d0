# zlbench slurm on a real Slurm cluster (one node: munged, slurmctld and
# slurmd started here, stopped at the end whatever happens):
#  - a 3-shard job array over the host corpus completes, and its merge job
#    (afterany) leaves every operator exactly once;
#  - one shard cancelled with scancel leaves a merge that names its
#    operators, and --rerun-missing runs only that shard and completes it;
#  - a shard killed at the array's time limit (--time=1: one minute, the
#    shortest Slurm has; slurmctld enforces it within 30 s more) keeps what
#    it finished and the merge names what it did not. It is submitted first
#    and runs beside the others, so the test takes about 90 s.
# Skips (exit 77, "SKIP: ...") when Slurm is not installed or cannot start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_cluster.sh"
[ -n "$TESTOPS" ] || fail "ZLB_TEST_OPS is not set"
set -o pipefail
trap 'slurm_stop; rm -rf "$TMP"' EXIT
trap 'exit 143' TERM INT
# The batch options after "--" are checked as `zlbench batch` reads them,
# before anything is written or submitted: an unknown or bad one used to
# fail only on the cluster. Needs no cluster.
# A shard count whose merge command could not start (beyond the exec
# limit): refused before anything is written.
expect_rc 2 "$ZLBENCH" slurm --out "$TMP/huge" --shards 100000
expect_in "$TMP/err" "more than the 1 MiB a command line can take"
[ -e "$TMP/huge" ] && fail "slurm wrote scripts whose merge could not start"
expect_rc 2 "$ZLBENCH" slurm --out "$TMP/bad" --shards 2 -- --frobnicate
expect_in "$TMP/err" "unknown option '--frobnicate' for 'zlbench batch'"
expect_rc 2 "$ZLBENCH" slurm --out "$TMP/bad" --shards 2 -- --backend host --rep-ms nan
expect_in "$TMP/err" "invalid value 'nan' for --rep-ms"
expect_rc 2 "$ZLBENCH" slurm --out "$TMP/bad" --shards 2 -- --ops ''
expect_in "$TMP/err" "--ops: empty value"
[ -e "$TMP/bad" ] && fail "slurm wrote its folder for bad batch options"
slurm_start "$TMP/cluster"
case $? in 0) ;; 77) exit 77 ;; *) fail "could not start the Slurm cluster" ;; esac
printf 'default:\n  shapes: [[16, 16]]\nmm:\n  shapes: [[16, 16, 16]]\n' >"$TMP/tiny.yaml"
HOSTARGS="--backend host --shape-file $TMP/tiny.yaml --dtypes float32 $QUICK"
ALL=$("$ZLBENCH" inventory --backend host | awk 'NR > 1 { print $1 }' | sort)

# job_ids: the job ids "submitted ...: job N" lines name, from $TMP/out.
job_ids() { sed -n 's/^submitted [a-z]*: job \([0-9]*\).*/\1/p' "$TMP/out" | tr '\n' ' '; }
# wait_jobs ID...: until Slurm runs none of them (at most 150 s).
wait_jobs() {
  local i ids
  ids=$(echo "$*" | tr ' ' ',' | sed 's/,*$//')
  for i in $(seq 1 300); do
    [ -z "$(squeue -h -j "$ids" 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  squeue >&2
  fail "jobs $ids did not end within 150 s"
}
job_state() { scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }

# --- the time limit: started first, it runs beside the rest ----------------
# Shard 0 of 2 holds good_copy, good_scale and then hang (one device, in
# selection order); shard 1 wrong_result.
TL="$TMP/tl"
expect_rc 0 "$ZLBENCH" slurm --out "$TL" --shards 2 --time 1 --job-name zlb-tl --submit -- \
  --backend test --lib "$TESTOPS" --ops good_copy,good_scale,wrong_result,hang --devices 0 \
  --timeout 600 --grace 1 --shape-file "$ZLB_SRC/tests/data/cli/shapes_test.yaml" $QUICK
TL_JOBS=$(job_ids)
set -- $TL_JOBS
TL_ARRAY=$1
[ -n "$TL_ARRAY" ] && [ -n "${2:-}" ] || fail "zlbench slurm --submit named no jobs: $(cat "$TMP/out")"
expect_in "$TL/slurm/shards.sbatch" "#SBATCH --time=1"
expect_in "$TL/slurm/shards.sbatch" "#SBATCH --array=0-1"
expect_in "$TL/slurm/merge.sbatch" "merge '$TL'/merged '$TL'/shard-0 '$TL'/shard-1"

# --- a 3-shard array over the host corpus, and its merge ------------------
SC="$TMP/sc"
expect_rc 0 "$ZLBENCH" slurm --out "$SC" --shards 3 --time 5 --job-name zlb-sc --submit -- $HOSTARGS
SC_JOBS=$(job_ids)
set -- $SC_JOBS
SC_ARRAY=$1 SC_MERGE=$2
scontrol show job "$SC_MERGE" | grep -q "Dependency=afterany:${SC_ARRAY}" ||
  fail "the merge job does not depend on the array: $(scontrol show job "$SC_MERGE" | grep Depend)"

# --- one shard cancelled ---------------------------------------------------
# Submitted held, so shard 1 is cancelled before it starts; the rest is
# released. The merge (afterany) runs after the cancelled task too.
CN="$TMP/cn"
expect_rc 0 "$ZLBENCH" slurm --out "$CN" --shards 3 --time 5 --job-name zlb-cn -- $HOSTARGS
expect_in "$TMP/out" "submit with:"
cn_array=$(sbatch --parsable --hold "$CN/slurm/shards.sbatch") || fail "sbatch refused the array"
cn_merge=$(sbatch --parsable --dependency=afterany:"$cn_array" "$CN/slurm/merge.sbatch") ||
  fail "sbatch refused the merge"
scancel "${cn_array}_1" || fail "scancel ${cn_array}_1 failed"
scontrol release "$cn_array" || fail "scontrol release $cn_array failed"

wait_jobs $SC_JOBS $cn_array $cn_merge
# The array: every operator exactly once, from the shard the hash names.
[ -f "$SC/merged/ops_status.csv" ] || fail "the merge job left no result: $(cat "$SC"/slurm/merge-*.out)"
[ "$(job_state "$SC_MERGE")" = COMPLETED ] ||
  fail "the merge job ended $(job_state "$SC_MERGE"): $(cat "$SC"/slurm/merge-*.out)"
[ "$(awk -F, 'NR > 1 { print $1 }' "$SC/merged/ops_status.csv")" = "$ALL" ] ||
  fail "the merged ops_status.csv does not hold every operator once"
for op in $ALL; do
  [ "$(grep -c "^$op," "$SC/merged/ops_status.csv")" = 1 ] || fail "$op is not listed once"
  [ -f "$SC/merged/ops/$op/run.log" ] || fail "$op has no run.log in the merge"
done
expect_in "$SC/merged/run_identity.json" '"complete": true'
for k in 0 1 2; do
  expect_in "$SC/merged/run_identity.json" "\"job\": \"Slurm job ${SC_ARRAY}_$k\""
  expect_in "$SC/shard-$k/run_identity.json" '"source": "--shard"'
done
expect_in "$SC/slurm/merge-$SC_MERGE.out" "3 of 3 shards"

# The cancelled shard: its operators are named, with the shard.
[ ! -e "$CN/shard-1" ] || fail "the cancelled shard ran"
out="$CN/slurm/merge-$cn_merge.out"
expect_in "$out" "2 of 3 shards"
n=$(grep -c "^missing: .* (shard 1 of 3: no folder" "$out")
[ "$n" -ge 1 ] && [ "$n" = "$(grep -c '^missing:' "$out")" ] || fail "the merge does not name shard 1's operators: $(cat "$out")"
expect_in "$CN/merged/run_identity.json" '"complete": false'
# --rerun-missing: only shard 1 again, then the merge; complete.
expect_rc 0 "$ZLBENCH" slurm --out "$CN" --rerun-missing --submit
expect_in "$TMP/out" "shards to run again: 1"
expect_in "$TMP/out" "array 1"
wait_jobs $(job_ids)
set -- $(job_ids)
[ "$(job_state "$2")" = COMPLETED ] || fail "the merge after the rerun ended $(job_state "$2")"
expect_in "$CN/slurm/merge-$2.out" "3 of 3 shards"
expect_in "$CN/slurm/merge-$2.out" "0 missing"
[ "$(awk -F, 'NR > 1 { print $1 }' "$CN/merged/ops_status.csv")" = "$ALL" ] ||
  fail "the merge after --rerun-missing does not hold every operator once"
# Nothing is missing now: nothing is submitted.
expect_rc 0 "$ZLBENCH" slurm --out "$CN" --rerun-missing --submit
expect_in "$TMP/out" "nothing missing"
expect_not_in "$TMP/out" "submitted"

# --- the time limit ----------------------------------------------------------
wait_jobs $TL_JOBS
[ "$(job_state "${TL_ARRAY}_0")" = TIMEOUT ] || fail "shard 0 ended $(job_state "${TL_ARRAY}_0"), not TIMEOUT"
# Shard 1 finished; its operator's failed rows make the batch exit 1.
[ "$(job_state "${TL_ARRAY}_1")" = FAILED ] && scontrol show job "${TL_ARRAY}_1" | grep -q "ExitCode=1:0" ||
  fail "shard 1 ended $(job_state "${TL_ARRAY}_1"), not with the batch's exit 1"
set -- $TL_JOBS
out="$TL/slurm/merge-$2.out"
# What finished before the limit is kept; the operator it cut is named.
for op in good_copy good_scale wrong_result; do
  [ "$(grep -c "^$op," "$TL/merged/ops_status.csv")" = 1 ] || fail "$op was lost at the time limit: $(cat "$out")"
done
grep -q "^missing: hang (shard 0 of 2 ($(hostname -s)[^)]*Slurm job ${TL_ARRAY}_0): \(interrupted\|stopped without finishing\)" "$out" ||
  fail "the merge does not report hang as cut by the time limit: $(cat "$out")"
[ "$(grep -c '^missing:' "$out")" = 1 ] || fail "more than hang is missing: $(cat "$out")"
echo "ok: Slurm array, merge, cancelled shard rerun and time limit on a real slurmctld/slurmd"
