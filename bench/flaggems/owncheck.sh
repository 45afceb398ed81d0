#!/usr/bin/env bash
# Is a FlagGems failure in a zlbench screen FlagGems' own? On a CUDA machine
# with torch, triton and the FlagGems checkout $FG:
#
#   BUILD=build-gpu STATUS=screen/out/ops_status.csv OUT=/tmp/oc bash bench/flaggems/owncheck.sh [OP ...]
#
# For each operator (default: every row of $STATUS whose status is not ok,
# ok_capture_denied, replayed or skipped), in two steps, one process at a
# time on the device:
#   alone  zlbench batch --provider flaggems over those operators with one
#          child per device (a screen with --jobs-per-device > 1 can fail an
#          operator for a neighbour's memory: "CUDA out of memory ... Process
#          N has 116 GiB in use")
#   own    FlagGems' own kernel mode on the same test file and mark that
#          zlbench ran (the file --list names), one pytest process each,
#          for every operator that still fails alone
# and writes $OUT/owncheck.tsv: op, screen status, alone status, own exit
# code, the first error line of each, and a verdict:
#   neighbour   failed in the screen, ok alone: not the operator's failure
#   confirmed   fails alone and in FlagGems' own run: FlagGems' own failure
#   harness     fails alone under zlbench, passes in FlagGems' own run: ours
#   ok          the screen's status and the alone run's are both ok
# Budget: LIMIT seconds per process (default 240).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FG=${FG:-$ROOT/.flaggems}
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-/tmp/zlb-out}
STATUS=${STATUS:-}
LIMIT=${LIMIT:-240}
BACKEND=${BACKEND:-cuda}
PYTHON=${PYTHON:-python3}
WORK=${WORK:-/tmp/zlb-owncheck}
mkdir -p "$OUT" "$WORK"
export NO_COLOR=1 GEMS_VENDOR=${GEMS_VENDOR:-nvidia} ZL_PYTHON=$PYTHON
export PYTHONPATH="$FG/src:$FG:$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export ZL_LIB_DIR="$BUILD/lib/zlbench"
Z="$BUILD/bin/zlbench"

ops=("$@")
if [ ${#ops[@]} = 0 ]; then
  [ -f "$STATUS" ] || { echo "owncheck: give operators or STATUS=ops_status.csv" >&2; exit 2; }
  mapfile -t ops < <(tail -n +2 "$STATUS" | cut -d, -f1,2 |
    awk -F, '$2 !~ /^(ok|ok_capture_denied|replayed|skipped)$/ {print $1}')
fi
[ ${#ops[@]} -gt 0 ] || { echo "owncheck: nothing to check"; exit 0; }

"$Z" batch --provider flaggems --flaggems "$FG" --backend "$BACKEND" --list >"$WORK/list.txt" 2>"$WORK/list.err" ||
  { echo "owncheck: --list failed: $(tail -2 "$WORK/list.err")" >&2; exit 1; }

# The first error line of a log: pytest's "E   " line, else the last line.
firsterr() {
  local l
  l=$(grep -m1 -E '^E   |Error|error:' "$1" 2>/dev/null | tr -s ' \t' ' ' | cut -c1-160)
  [ -n "$l" ] || l=$(tail -1 "$1" 2>/dev/null | cut -c1-160)
  printf '%s' "${l//	/ }"
}
field() { grep -m1 "^$1," "$2" 2>/dev/null | cut -d, -f"$3"; }

# Step 1: alone, one child on the device.
rm -rf "$WORK/alone"
list=$(IFS=,; echo "${ops[*]}")
timeout -s INT -k 30 $((LIMIT * ${#ops[@]} + 60)) "$Z" batch --provider flaggems --flaggems "$FG" \
  --backend "$BACKEND" --level core --ops "$list" --out "$WORK/alone" --timeout "$LIMIT" \
  --retries 0 --jobs-per-device 1 --progress never >"$WORK/alone.log" 2>&1
echo "alone: rc=$? ($(tail -3 "$WORK/alone.log" | head -1))"

printf 'op\tscreen\talone\town_rc\tscreen_reason\town_reason\tverdict\n' >"$OUT/owncheck.tsv"
for op in "${ops[@]}"; do
  s=$( [ -f "$STATUS" ] && field "$op" "$STATUS" 2 || echo -)
  sr=$( [ -f "$STATUS" ] && "$PYTHON" -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["operator"] == sys.argv[2]:
        print(r["error_signature"][:160].replace("\t", " "))' "$STATUS" "$op" || echo -)
  a=$(field "$op" "$WORK/alone/ops_status.csv" 2)
  file=$(awk -F'\t' -v o="$op" '$1 == o {for (i = 2; i <= NF; i++) if ($i ~ /^file=/) {sub(/^file=/, "", $i); print $i}}' "$WORK/list.txt")
  orc=- or=- verdict=neighbour
  case "$a" in
    ok | ok_capture_denied | skipped) ;;
    *)
      # Step 2: FlagGems' own run of the same file and mark.
      if [ -n "$file" ]; then
        (cd "$FG/benchmark" && timeout -k 10 "$LIMIT" "$PYTHON" -m pytest -q -s -p no:cacheprovider \
          "$file" -m "$op" --mode kernel --level core) >"$WORK/own.$op.log" 2>&1
        orc=$?
        or=$(firsterr "$WORK/own.$op.log")
        if [ "$orc" = 0 ]; then verdict=harness; else verdict=confirmed; fi
      else
        verdict="no file in --list"
      fi
      ;;
  esac
  # Not failed in the screen (or not in it) and ok alone: nothing to explain.
  case "$s" in ok | ok_capture_denied | skipped | - | '') [ "$verdict" = neighbour ] && verdict=ok ;; esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$op" "${s:--}" "${a:-none}" "$orc" "${sr:--}" "${or:--}" \
    "$verdict" >>"$OUT/owncheck.tsv"
done
(cd "$WORK" && tar -czf "$OUT/owncheck-logs.tar.gz" alone.log own.*.log alone/ops_status.csv 2>/dev/null)
if command -v column >/dev/null; then column -t -s $'\t' "$OUT/owncheck.tsv" | cut -c1-250
else cut -c1-250 "$OUT/owncheck.tsv"; fi
