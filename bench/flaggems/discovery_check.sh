#!/usr/bin/env bash
# Which test file `zlbench batch --provider flaggems` runs each operator from,
# where that is not obvious: for a FlagGems checkout, every operator whose
# mark is in several files of benchmark/ (the file chosen, the others), and
# every operator that has a benchmark/test_<op>.py but is run from another
# file (whether test_<op>.py holds its mark, and test_<op>.py's own marks:
# "no" means only the other file benchmarks it). Needs the checkout's files and python3 only: no GPU, no torch,
# nothing of FlagGems imported (the same AST scan as the batch).
#
#   bench/flaggems/discovery_check.sh [FLAGGEMS_DIR] [ZLBENCH]
#
# FLAGGEMS_DIR defaults to $FLAGGEMS or ../FlagGems. With a zlbench binary
# (ZLBENCH, second argument), its `batch --provider flaggems --list` is
# checked to name the same files (exit 1 when it does not).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
fg=${1:-${FLAGGEMS:-$here/../FlagGems}}
zl=${2:-${ZLBENCH:-}}
[ -d "$fg/benchmark" ] || { echo "discovery_check: '$fg' has no benchmark/ folder" >&2; exit 2; }
py=${ZL_PYTHON:-python3}
tab=$(mktemp)
trap 'rm -f "$tab" "$tab.list"' EXIT
PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1 \
  "$py" - "$fg" >"$tab" <<'EOF'
import os, sys
from zlbench import flaggems_discover as d
root = sys.argv[1]
bench = os.path.join(root, "benchmark")
marks = {}
for name in sorted(os.listdir(bench)):
    if name.startswith("test_") and name.endswith(".py"):
        try:
            marks[name] = sorted({m for m, _ in d.scan_file(os.path.join(bench, name))})
        except SyntaxError:
            marks[name] = None
rows = d.discover(root)
multi = [r for r in rows if r[4] != "-"]
print("## operators whose mark is in several files (%d)" % len(multi))
print("| operator | file run | other files holding the mark |")
print("|---|---|---|")
for op, f, _, _, others in multi:
    print(f"| {op} | {f} | {others.replace(',', ', ')} |")
own = [(op, f) for op, f, _, _, _ in rows
       if f != f"test_{op}.py" and f"test_{op}.py" in marks]
print()
print("## operators with a test_<op>.py that are run from another file (%d)" % len(own))
print("| operator | file run | test_<op>.py holds the mark | test_<op>.py's marks |")
print("|---|---|---|---|")
for op, f in own:
    m = marks[f"test_{op}.py"]
    print(f"| {op} | {f} | {'yes' if m and op in m else 'no'} | "
          f"{', '.join(m) if m else '(cannot parse)'} |")
for op, f, _, _, others in rows:
    print(f"#LIST\t{op}\t{f}\t{others}")
EOF
grep -v '^#LIST' "$tab"
[ -n "$zl" ] || exit 0
# The batch's own listing must name the same file and others.
"$zl" batch --provider flaggems --flaggems "$fg" --backend host --list >"$tab.list"
bad=0
while IFS=$'\t' read -r _ op f others; do
  line=$(grep -P "^\Q$op\E\t" "$tab.list" || true)
  want="file=$f"
  [ "$others" = "-" ] || want="$want	others=$others"
  case "$line" in
  *"	$want") ;;
  *) echo "MISMATCH $op: the scan says '$want', zlbench batch --list says '$line'"; bad=1 ;;
  esac
done < <(grep '^#LIST' "$tab")
[ "$bad" = 0 ] && echo "zlbench batch --list names the same files ($(wc -l <"$tab.list") operators)"
exit "$bad"
