# The CUDA corpus as built (no GPU needed: the library loads without a
# device): the curated inventory matches what it registers, it has at least
# 80 operators, and each one's baseline is vendor code except the four with
# no vendor function in the toolkit's libraries (docs/operators-cuda.md).
. "$(dirname "$0")/lib.sh"
LIB="$(dirname "$ZLBENCH")/../lib/zlbench/libzlb_ops_cuda.so"
if [ ! -f "$LIB" ]; then
  echo "SKIP: the CUDA corpus is not built here (no nvcc at configure time)"
  exit 77
fi
expect_rc 0 "$ZLBENCH" inventory --check --backend cuda
expect_in "$TMP/out" "cuda: "
expect_rc 0 "$ZLBENCH" list --backend cuda
# Rows: name family backend dtypes baseline candidate flags.
awk '$3 == "cuda" { n++; base[$1] = $5; fam[$1] = $2 }
  END {
    if (n < 80) { printf "only %d CUDA operators\n", n; bad = 1 }
    allowed["layer_norm"] = allowed["rms_norm"] = allowed["softmax"] = allowed["log_softmax"] = 1
    for (op in base) {
      if (base[op] == "ref" && !(op in allowed)) { printf "%s: baseline ref, not vendor code\n", op; bad = 1 }
      if (fam[op] ~ /pointwise$/ && base[op] != "cub") { printf "%s: pointwise baseline %s, not cub\n", op, base[op]; bad = 1 }
    }
    printf "%d CUDA operators\n", n
    exit bad
  }' "$TMP/out" || fail "the CUDA corpus's operators or baselines"
for op in contiguous index_select gather scatter embedding fill cat sum argmin mm mv rand; do
  awk -v op="$op" '$1 == op && $3 == "cuda" && $5 != "ref" { ok = 1 } END { exit !ok }' "$TMP/out" ||
    fail "$op has no vendor baseline"
done
echo "ok: the CUDA corpus's inventory and baselines"
