# Compile check of the CUDA corpus with hipcc (not run): every corpus/cuda
# source that uses no CUDA library (cuBLAS, CUB, cuRAND, Thrust, WMMA) is
# built for an AMD GPU through corpus/hip/zlb_hip_port.h, with warnings as
# errors; the others are listed with the library that keeps them out
# (corpus/hip/README.md says what replaces each). Skipped without hipcc.
set -u
: "${ZLB_SRC:?ZLB_SRC must point at the source tree}"
HIPCC=${HIPCC:-$(command -v hipcc || true)}
if [ -z "$HIPCC" ]; then
  echo "SKIP: no hipcc (Debian: apt-get install hipcc): the HIP corpus compile check did not run"
  exit 77
fi
ARCH=${ZLB_HIP_ARCH:-gfx90a}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/zlbench-hip.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# HIP marks its runtime calls nodiscard where CUDA does not (the corpus
# ignores the result of clean-up calls on purpose), and an unroll hint
# the AMDGPU back end cannot honour is a note, not a defect.
FLAGS="-std=c++17 --offload-arch=$ARCH -Wall -Werror -Wno-unused-result -Wno-pass-failed"
built=0
failed=0
for src in "$ZLB_SRC"/corpus/cuda/*.cu; do
  name=$(basename "$src" .cu)
  [ "$name" = register ] && continue # registers every family, the unported ones too
  lib=$(grep -oE '#include <(cublas[a-z_0-9]*|cub|curand|thrust|mma)[./]' "$src" | head -1 |
    sed -E 's/#include <([a-z_0-9]+).*/\1/')
  if [ -n "$lib" ]; then
    echo "not ported: $name.cu (uses $lib)"
    continue
  fi
  if "$HIPCC" $FLAGS -I"$ZLB_SRC/corpus/hip/cuda_shim" -I"$ZLB_SRC/include" \
    -I"$ZLB_SRC/corpus/cuda" -c -x hip "$src" -o "$TMP/$name.o" 2>"$TMP/$name.log"; then
    echo "compiled: $name.cu for $ARCH"
    built=$((built + 1))
  else
    echo "FAIL: $name.cu does not compile with hipcc:" >&2
    head -40 "$TMP/$name.log" >&2
    failed=$((failed + 1))
  fi
done
[ "$built" -gt 0 ] || { echo "FAIL: no corpus source was compiled" >&2; exit 1; }
[ "$failed" = 0 ] || exit 1
echo "ok: $built corpus sources compile with hipcc"
