# zlbench k8s: the Indexed Job manifest rendered for several shard counts
# (completions, the shard count every pod gets, each vendor's GPU resource,
# the shared volume), and each index's command run here with
# JOB_COMPLETION_INDEX set, as the pods would run it: every shard screens
# its part of the host corpus and merges; the last one leaves every
# operator exactly once.
. "$(dirname "$0")/lib.sh"
set -o pipefail
printf 'default:\n  shapes: [[16, 16]]\nmm:\n  shapes: [[16, 16, 16]]\n' >"$TMP/tiny.yaml"
ALL=$("$ZLBENCH" inventory --backend host | awk 'NR > 1 { print $1 }' | sort)
render() { # render N MOUNT [options]: the manifest into $TMP/job.yaml
  local n=$1 m=$2
  shift 2
  expect_rc 0 "$ZLBENCH" k8s --shards "$n" --image registry.example/zlbench:1 --claim zlb-results \
    --mount "$m" --zlbench "$ZLBENCH" "$@" -- --backend host --shape-file "$TMP/tiny.yaml" \
    --dtypes float32 $QUICK
  cp "$TMP/out" "$TMP/job.yaml"
}
# The pod's shell command: the literal block after "args:", unindented.
pod_script() {
  awk '/^        - \|$/ { on = 1; next } on && /^      [a-z]/ { exit } on { sub(/^          /, ""); print }' "$TMP/job.yaml"
}

for n in 1 2 3; do
  M="$TMP/vol$n"
  mkdir -p "$M"
  render $n "$M" --gpus 2
  expect_in "$TMP/job.yaml" "completionMode: Indexed"
  expect_in "$TMP/job.yaml" "completions: $n"
  expect_in "$TMP/job.yaml" "parallelism: $n"
  expect_in "$TMP/job.yaml" "nvidia.com/gpu: 2"
  expect_in "$TMP/job.yaml" "claimName: zlb-results"
  expect_in "$TMP/job.yaml" "image: registry.example/zlbench:1"
  expect_in "$TMP/job.yaml" "mountPath: $M"
  grep -q '@[A-Z_]*@' "$TMP/job.yaml" && fail "a field was left unfilled: $(grep -n '@[A-Z_]*@' "$TMP/job.yaml")"
  if python3 -c 'import yaml' 2>/dev/null; then
    python3 - "$TMP/job.yaml" "$n" <<'PY' || fail "the manifest for $n shards is not the Indexed Job expected"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
n = int(sys.argv[2])
spec = doc["spec"]
assert doc["kind"] == "Job" and spec["completionMode"] == "Indexed", "not an Indexed Job"
assert spec["completions"] == n and spec["parallelism"] == n, "completions"
c = spec["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
assert env["ZL_SHARD_COUNT"] == str(n), env
assert c["resources"]["limits"] == {"nvidia.com/gpu": 2}, c["resources"]
assert c["volumeMounts"][0]["name"] == spec["template"]["spec"]["volumes"][0]["name"]
assert "batch" in c["args"][0] and "merge" in c["args"][0]
PY
  fi
  count=$(sed -n 's/^ *value: "\([0-9]*\)"$/\1/p' "$TMP/job.yaml" | head -1)
  [ "$count" = $n ] || fail "ZL_SHARD_COUNT is '$count' in the manifest for $n shards"
  pod_script >"$TMP/pod.sh"
  [ -s "$TMP/pod.sh" ] || fail "no pod command in the manifest"
  # Every index as its pod runs it, the last index first: until all ran,
  # the merge names what is missing.
  for i in $(seq $((n - 1)) -1 0); do
    JOB_COMPLETION_INDEX=$i ZL_SHARD_COUNT=$count sh "$TMP/pod.sh" >"$TMP/pod$i.out" 2>&1 ||
      fail "index $i of $n failed: $(tail -20 "$TMP/pod$i.out")"
    expect_in "$M/shard-$i/run_identity.json" '"source": "kubernetes"'
    expect_in "$M/shard-$i/run_identity.json" "\"job_completion_index\": \"$i\""
    if [ $i -gt 0 ]; then
      expect_in "$TMP/pod$i.out" "$((n - i)) of $n shards"
      grep -q '^missing: .* (shard 0 of' "$TMP/pod$i.out" || fail "index $i's merge does not name shard 0's operators"
    fi
  done
  expect_in "$TMP/pod0.out" "$n of $n shards"
  expect_in "$TMP/pod0.out" "0 missing"
  [ "$(awk -F, 'NR > 1 { print $1 }' "$M/merged/ops_status.csv")" = "$ALL" ] ||
    fail "$n shards: the merge does not hold every operator once"
done

# Each vendor's device plugin resource; none asks for no GPU.
for v in nvidia:nvidia.com/gpu amd:amd.com/gpu intel:gpu.intel.com/i915 ascend:huawei.com/Ascend910 musa:mthreads.com/vgpu; do
  render 2 /results --vendor "${v%%:*}" --gpus 4
  expect_in "$TMP/job.yaml" "            ${v#*:}: 4"
done
render 2 /results --vendor none
grep -q 'gpu\|Ascend' "$TMP/job.yaml" && fail "--vendor none still asks for a device: $(grep -n 'gpu' "$TMP/job.yaml")"
# A mount that would hide the image's own files, and no pods at once.
for m in / /usr/local /results/ /a/../b /opt; do
  expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c --mount "$m"
  expect_in "$TMP/err" "--mount '$m'"
done
# A folder below a system folder hides nothing; one holding zlbench does.
expect_rc 0 "$ZLBENCH" k8s --shards 2 --image i --claim c --mount /var/lib/zlbench
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c --mount /opt/zlb --zlbench /opt/zlb/bin/zlbench
expect_in "$TMP/err" "not one holding --zlbench"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c --parallelism 0
expect_in "$TMP/err" "--parallelism: expected an integer 1..100000"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c --vendor acme
expect_in "$TMP/err" "unknown --vendor 'acme'"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c -- --out /elsewhere
expect_in "$TMP/err" "'--out' is set by 'zlbench k8s'"
# The batch options are checked as `zlbench batch` reads them: an unknown
# or bad one fails here, not in every pod. Paths are the pod's: not looked at.
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c -- --frobnicate
expect_in "$TMP/err" "unknown option '--frobnicate' for 'zlbench batch'"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c -- --backend host --rep-ms nan
expect_in "$TMP/err" "invalid value 'nan' for --rep-ms"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c -- --retries
expect_in "$TMP/err" "option '--retries' needs a value"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c -- --ops ''
expect_in "$TMP/err" "--ops: empty value"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c -- relu
expect_in "$TMP/err" "unexpected argument 'relu' for 'zlbench batch'"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c -- --help
expect_in "$TMP/err" "'--help' is not an option to pass on to 'zlbench batch'"
expect_rc 0 "$ZLBENCH" k8s --shards 2 --image i --claim c -- --backend host \
  --ops-file /results/ops.txt --replay-from /results/old --shape-file /results/s.yaml --retries 1
expect_in "$TMP/out" "'--ops-file' '/results/ops.txt' '--replay-from' '/results/old'"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image 'i;rm -rf /' --claim c
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim Bad_Name
printf 'kind: Job\nname: @NOPE@\n' >"$TMP/bad.yaml"
expect_rc 2 "$ZLBENCH" k8s --shards 2 --image i --claim c --template "$TMP/bad.yaml"
expect_in "$TMP/err" "bad.yaml:2: unknown field @NOPE@"
echo "ok: the Kubernetes Indexed Job renders for 1-3 shards and each index's command screens and merges"
