#!/bin/sh
# Run one fuzz target for a fixed time on a copy of its seed corpus (the
# checked-in corpus is never written) and fail on any finding: a crash, a
# leak, a timeout (10 s on one input), memory past 2 GiB, or a sanitizer
# report. A failure prints the input in base64 and how to reproduce it.
#   run_fuzz.sh TARGET_BINARY CORPUS_DIR [SECONDS]
set -u
bin=$1
corpus=$2
secs=${3:-20}
name=$(basename "$bin")
if [ ! -x "$bin" ]; then
  echo "FAIL fuzz: $bin was not built"
  exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zlb-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/corpus" "$tmp/crashes" "$tmp/tmp"
cp "$corpus"/* "$tmp/corpus/" || exit 1
# -error_exitcode: libFuzzer's default (77) is ctest's "skipped".
# -close_fd_mask=3: the targets' own output (history prints tables) is
# dropped; libFuzzer's and the sanitizers' reports still show.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} TMPDIR="$tmp/tmp" \
  "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
  -error_exitcode=1 -timeout_exitcode=1 -close_fd_mask=3 -print_final_stats=1 \
  -artifact_prefix="$tmp/crashes/" "$tmp/corpus" 2>"$tmp/log"
rc=$?
found=$(ls "$tmp/crashes")
if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
  tail -n 15 "$tmp/log"
  echo "fuzz: $name: no finding in ${secs}s"
  exit 0
fi
# The report: from the first error line to the sanitizer's SUMMARY (not
# the progress lines, nor ASan's shadow-byte legend).
awk '/ERROR|runtime error|deadly signal|out-of-memory|timeout/ { on = 1 }
     on && n < 60 { print; n++ } /^SUMMARY/ { on = 0 }' "$tmp/log"
for f in "$tmp"/crashes/*; do
  [ -f "$f" ] || continue
  echo "input $(basename "$f") ($(wc -c <"$f") bytes, base64):"
  base64 -w0 "$f"
  echo
done
echo "FAIL fuzz: $name exited $rc. Reproduce: $bin FILE (the input decoded);" \
  "after the fix add it to $corpus as a regression"
exit 1
