# zlbench slurm without a cluster: the scripts it writes (directives, and
# the exact arguments each one gives zlbench, checked by running them with
# a stand-in zlbench, srun and sbatch), --submit through sbatch with the
# merge depending on the shards, and its usage errors.
. "$(dirname "$0")/lib.sh"
set -o pipefail
mkdir -p "$TMP/bin"
# Stand-ins: print their arguments one per line (and the shard variables).
cat >"$TMP/bin/zlb" <<'SH'
#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done
SH
cat >"$TMP/bin/srun" <<'SH'
#!/bin/sh
# One task of three, as Slurm would start it: shard 2.
while [ $# -gt 0 ]; do case $1 in --*) shift ;; *) break ;; esac; done
SLURM_PROCID=2 SLURM_NTASKS=3 exec "$@"
SH
cat >"$TMP/bin/sbatch" <<'SH'
#!/bin/sh
n=$(($(cat "$SBATCH_LOG.n" 2>/dev/null || echo 0) + 1))
echo $n >"$SBATCH_LOG.n"
echo "$*" >>"$SBATCH_LOG"
echo "$((4710 + n));cluster"
SH
chmod +x "$TMP/bin/"*
export SBATCH_LOG="$TMP/sbatch.log"
D="$TMP/screen"
odd="a b'c\"d"
expect_rc 0 "$ZLBENCH" slurm --out "$D" --shards 3 --gpus-per-node 4 --time 2:00:00 \
  --max-parallel 2 --partition gpu --sbatch-arg=--exclusive --zlbench "$TMP/bin/zlb" -- \
  --backend cuda --ops-file "$odd"
expect_in "$TMP/out" "submit with:"
S="$D/slurm/shards.sbatch"
for line in "#SBATCH --array=0-2%2" "#SBATCH --gpus-per-node=4" "#SBATCH --time=2:00:00" \
  "#SBATCH --partition=gpu" "#SBATCH --exclusive" "#SBATCH --output=$D/slurm/shard-%a.out" \
  "#SBATCH --nodes=1"; do
  expect_in "$S" "$line"
done
expect_in "$D/slurm/nodes.sbatch" "#SBATCH --nodes=3"
expect_in "$D/slurm/merge.sbatch" "#SBATCH --time=30"
bash -n "$S" && bash -n "$D/slurm/nodes.sbatch" && bash -n "$D/slurm/merge.sbatch" || fail "a script is not valid bash"
printf '%s\n' batch --shard 1/3 --out "$D/shard-1" --progress never --backend cuda --ops-file "$odd" >"$TMP/want"
SLURM_ARRAY_TASK_ID=1 bash "$S" >"$TMP/got" || fail "shards.sbatch failed"
cmp -s "$TMP/want" "$TMP/got" || { diff "$TMP/want" "$TMP/got" >&2; fail "array task 1 runs the wrong batch"; }
printf '%s\n' batch --shard 2/3 --out "$D/shard-2" --progress never --backend cuda --ops-file "$odd" >"$TMP/want"
PATH="$TMP/bin:$PATH" bash "$D/slurm/nodes.sbatch" >"$TMP/got" || fail "nodes.sbatch failed"
cmp -s "$TMP/want" "$TMP/got" || { diff "$TMP/want" "$TMP/got" >&2; fail "node task 2 runs the wrong batch"; }
printf '%s\n' merge "$D/merged" "$D/shard-0" "$D/shard-1" "$D/shard-2" >"$TMP/want"
bash "$D/slurm/merge.sbatch" >"$TMP/got" || fail "merge.sbatch failed"
cmp -s "$TMP/want" "$TMP/got" || { diff "$TMP/want" "$TMP/got" >&2; fail "the merge job merges the wrong folders"; }
env -u SLURM_ARRAY_TASK_ID bash "$S" >/dev/null 2>&1 && fail "shards.sbatch ran outside an array"

# --submit: the shards, then the merge after them (afterany).
PATH="$TMP/bin:$PATH" expect_rc 0 "$ZLBENCH" slurm --out "$D" --shards 3 --submit -- --backend host
[ "$(sed -n 1p "$SBATCH_LOG")" = "--parsable $D/slurm/shards.sbatch" ] || fail "shards submitted as: $(cat "$SBATCH_LOG")"
[ "$(sed -n 2p "$SBATCH_LOG")" = "--parsable --dependency=afterany:4711 $D/slurm/merge.sbatch" ] ||
  fail "merge submitted as: $(sed -n 2p "$SBATCH_LOG")"
expect_in "$TMP/out" "submitted merge: job 4712 (after job 4711)"
: >"$SBATCH_LOG"
PATH="$TMP/bin:$PATH" expect_rc 0 "$ZLBENCH" slurm --out "$D" --shards 2 --mode nodes --submit -- --backend host
[ "$(sed -n 1p "$SBATCH_LOG")" = "--parsable $D/slurm/nodes.sbatch" ] || fail "--mode nodes submitted: $(cat "$SBATCH_LOG")"
PATH=/nonexistent expect_rc 3 "$ZLBENCH" slurm --out "$D" --shards 2 --submit
expect_in "$TMP/err" "sbatch is not on PATH"

# Usage errors.
expect_rc 2 "$ZLBENCH" slurm --shards 2
expect_in "$TMP/err" "--out DIR is required"
expect_rc 2 "$ZLBENCH" slurm --out "$D"
expect_in "$TMP/err" "--shards N (1 or more) is required"
expect_rc 2 "$ZLBENCH" slurm --out "$D" --shards 2 -- --shard 0/2
expect_in "$TMP/err" "'--shard' is set by 'zlbench slurm'"
expect_rc 2 "$ZLBENCH" slurm --out "$D" --shards 2 --time 1h
expect_in "$TMP/err" "invalid value '1h' for --time"
expect_rc 2 "$ZLBENCH" slurm --out "$TMP/none" --rerun-missing
expect_in "$TMP/err" "run 'zlbench slurm --out"
expect_rc 2 "$ZLBENCH" slurm --out "$D" --rerun-missing --shards 2
echo "ok: zlbench slurm writes scripts that run the right shard, and submits the merge after them"
