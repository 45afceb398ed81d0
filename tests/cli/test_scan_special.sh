#!/usr/bin/env bash
# The folder scan of summary, compare, report and history add: a FIFO or
# device node named results.json or *.log is never opened (a FIFO would
# block), a symbolic link under such a name is never followed (it may lead
# out of the folder), and neither is dropped silently: each is named in a
# warning on stderr (docs/formats.md). A linked folder is not entered.
. "$(dirname "$0")/lib.sh"
Z=$ZLBENCH
H="--backend host --dtypes float32 $QUICK"
cd "$TMP" || exit 1
expect_rc 0 "$Z" run relu $H --out r1
[ -f r1/results.json ] || fail "run wrote no results.json"
cp -r r1 r2
mkdir -p r2/extra r2/dev && mkfifo r2/extra/results.json r2/extra/run.log
mknod r2/dev/results.json c 1 3
mkdir -p r2/link && ln -s ../../r1/results.json r2/link/results.json
ln -s ../r1 r2/linkdir
expect_rc 0 timeout 20 "$Z" compare r1 r2
expect_in "$TMP/err" "warning: skipping 'r2/extra/results.json': a FIFO, not a regular file"
expect_in "$TMP/err" "warning: skipping 'r2/dev/results.json': a character device, not a regular file"
expect_in "$TMP/err" "warning: skipping 'r2/link/results.json': a symbolic link, not a regular file"
grep -q linkdir "$TMP/err" && fail "a linked folder was entered or named: $(cat "$TMP/err")"
timeout 20 "$Z" summary r2 >"$TMP/out" 2>"$TMP/err"
[ $? -lt 124 ] || fail "summary hung on a FIFO"
expect_in "$TMP/err" "warning: skipping 'r2/extra/run.log': a FIFO, not a regular file"
echo "ok: the folder scan names a FIFO or device under a results name"
