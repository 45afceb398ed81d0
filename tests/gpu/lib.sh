# Shared by the GPU tests: skip (exit 77, with a visible message) where no
# CUDA device or no CUDA build is present; otherwise the CLI test helpers.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/table.sh"
if [ -z "${ZLB_GPUTEST_OPS:-}" ]; then
  echo "SKIP: this build has no CUDA corpus (nvcc was not found at configure time)"
  exit 77
fi
if ! "$ZLBENCH" devices --backend cuda --count >"$TMP/count" 2>"$TMP/count.err"; then
  echo "SKIP: no usable CUDA device here: $(cat "$TMP/count.err")"
  exit 77
fi
NGPU=$(awk '{print $2}' "$TMP/count")
if [ "${NGPU:-0}" -lt 1 ]; then
  echo "SKIP: the CUDA driver reports no device"
  exit 77
fi
GPU_SHAPES="$ZLB_SRC/tests/gpu/shapes_small.yaml"
# Where to keep logs for bench/RESULTS.md (the device script sets it).
KEEP=${ZLB_GPU_LOG_DIR:-}
keep() { [ -n "$KEEP" ] && mkdir -p "$KEEP" && cp -r "$@" "$KEEP"/ 2>/dev/null; return 0; }
