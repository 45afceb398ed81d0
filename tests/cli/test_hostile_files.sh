#!/usr/bin/env bash
# Hostile paths given to zlbench as input or output: a symbolic link to
# /dev/zero, a FIFO nobody writes, a directory, a file one byte over the
# limit (sparse), a character device, a long path, a tree deeper than
# PATH_MAX. Every read must be refused at once with exit 2 naming the file
# (never a hang, never unbounded memory); no write may replace a device
# node, a FIFO or a symbolic link. Each command runs under `timeout 20`, so
# a regression fails (124) instead of hanging the suite.
. "$(dirname "$0")/lib.sh"
Z=$ZLBENCH
H="--backend host --dtypes float32 $QUICK"
cd "$TMP" || exit 1

# expect_refused RC TEXT CMD...: CMD exits RC within 20 s, stderr has TEXT.
expect_refused() {
  want=$1 text=$2
  shift 2
  expect_rc "$want" timeout 20 "$@"
  expect_in "$TMP/err" "$text"
}

# The hostile inputs: each must be refused by every reader below.
ln -s /dev/zero zero.link
mkfifo fifo.in
mkdir adir
truncate -s $((16 * 1024 * 1024 + 1)) big16     # one byte over the YAML/JSON limit
truncate -s $((64 * 1024 * 1024 + 1)) big64.log # one byte over the log limit

# A small run folder to compare, report and summarise.
expect_rc 0 "$Z" run relu $H --out r1
[ -f r1/results.json ] || fail "run wrote no results.json"

# ---- reads: YAML inputs (shape file, inventory, deny list) --------------
for bad in zero.link fifo.in adir; do
  expect_refused 2 "not a regular file" "$Z" run relu $H --shape-file "$bad" --out o
  expect_in "$TMP/err" "'$bad'"
done
expect_in "$TMP/err" "is a directory"
expect_refused 2 "'zero.link': is a character device, not a regular file" \
  "$Z" run relu $H --shape-file zero.link --out o
expect_refused 2 "'fifo.in': is a FIFO, not a regular file" \
  "$Z" run relu $H --shape-file fifo.in --out o
expect_refused 2 "'big16': larger than 16 MiB (the limit for a YAML file)" \
  "$Z" run relu $H --shape-file big16 --out o
for opt in --inventory --deny-file --ops-file; do
  for bad in zero.link fifo.in big16; do
    # --ops would skip the inventory: give it only with the other two
    ops="--ops relu"
    [ "$opt" = --inventory ] && ops=
    expect_rc 2 timeout 20 "$Z" batch $H $ops "$opt" "$bad" --out b
    expect_in "$TMP/err" "'$bad'"
  done
done
expect_refused 2 "'zero.link': is a character device" "$Z" run relu $H --deny-file zero.link --out o

# ---- reads: JSON results given to compare and history ------------------
expect_refused 2 "'zero.link': is a character device" "$Z" compare zero.link r1
expect_refused 2 "'fifo.in': is a FIFO" "$Z" compare r1 fifo.in
expect_refused 2 "'big16': larger than 16 MiB (the limit for a JSON file)" "$Z" compare big16 r1
mkdir -p hz && ln -s /dev/zero hz/results.json
expect_refused 2 "no results.json under 'hz'" "$Z" compare hz r1 # a link is not taken
rm -rf hz
mkdir -p h1 && cp r1/results.json h1/ && ln -s /dev/zero h1/run_identity.json
expect_refused 2 "'h1/run_identity.json': is a character device" "$Z" compare r1 h1
rm -rf h1
for bad in zero.link fifo.in big16; do
  expect_rc 2 timeout 20 "$Z" history add "$bad" --db h.sqlite
  expect_in "$TMP/err" "'$bad'"
done

# The history database itself: SQLite opened a FIFO (blocking, deaf to
# Ctrl-C) and read a device as an empty database.
for db in fifo.in zero.link adir; do
  for sub in "show relu" "list" "check r1" "add r1"; do
    # shellcheck disable=SC2086
    expect_rc 2 timeout 20 "$Z" history $sub --db "$db"
    expect_in "$TMP/err" "'$db': is a"
  done
done

# A path or name from someone else's folder reaches the terminal escaped:
# no escape sequence, no forged line in an error message.
esc=$(printf 'x\033[2J\033]0;pwn\007\nFORGED')
expect_rc 2 timeout 20 "$Z" compare "$esc" r1
grep -q "$(printf '\033')" "$TMP/err" && fail "an escape byte reached the terminal in an error"
grep -q "$(printf '\007')" "$TMP/err" && fail "a BEL byte reached the terminal in an error"
[ "$(grep -c '' "$TMP/err")" = 1 ] || fail "a newline in a path forged a line: $(cat "$TMP/err")"
expect_in "$TMP/err" 'x\x1b[2J'

# ---- reads: k8s template, slurm config ---------------------------------
expect_refused 2 "'zero.link': is a character device" \
  "$Z" k8s --shards 2 --image i --claim c --template zero.link
expect_refused 2 "'fifo.in': is a FIFO" "$Z" k8s --shards 2 --image i --claim c --template fifo.in
mkdir -p sl/slurm && ln -s /dev/zero sl/slurm/config
expect_rc 2 timeout 20 "$Z" slurm --out sl --rerun-missing
expect_in "$TMP/err" "is a character device"
rm -f sl/slurm/config && mkfifo sl/slurm/config
expect_rc 2 timeout 20 "$Z" slurm --out sl --rerun-missing
expect_in "$TMP/err" "is a FIFO"

# ---- reads: report (its identity is read like compare's; a side file is
# left out with a warning) ---------------------------------------------
cp -a r1 rp && rm -f rp/run_identity.json && mkfifo rp/run_identity.json
expect_refused 2 "'rp/run_identity.json': is a FIFO" "$Z" report rp --out rp.html
rm -f rp/run_identity.json && cp r1/run_identity.json rp/
ln -s /dev/zero rp/ops_status.csv
expect_rc 0 timeout 20 "$Z" report rp --out rp.html
expect_in "$TMP/err" "ops_status.csv': is a character device, not a regular file: left out"
rm -f rp/ops_status.csv && mkfifo rp/ops_status.csv
expect_rc 0 timeout 20 "$Z" report rp --out rp.html
expect_in "$TMP/err" "ops_status.csv': is a FIFO"
rm -rf rp
# A failed operator's stderr.log (its tail goes into the report) as a FIFO.
expect_rc 0 "$Z" batch $H --ops relu --out bf
sed -i 's/^relu,ok,/relu,failed,/' bf/ops_status.csv
rm -f bf/ops/relu/stderr.log && mkfifo bf/ops/relu/stderr.log
expect_rc 0 timeout 20 "$Z" report bf --out bf.html
expect_in bf.html "relu"
rm -rf bf

# ---- reads: summary's logs ----------------------------------------------
mkdir -p sm && cp r1/run.log sm/ && cp big64.log sm/big.log
expect_refused 2 "big.log': larger than 64 MiB (the limit for a log)" "$Z" summary sm
rm -rf sm big64.log big16

# ---- writes: nodes stay nodes, a link stays a link ----------------------
mknod -m 666 mynull c 1 3 2>/dev/null || fail "mknod failed (tests run as root)"
echo precious >victim.txt
ln -s victim.txt mylink
mkfifo myfifo
mkdir outdir
writers() { # writers TARGET: every writer of a user-named file, to TARGET
  echo "compare"; timeout 20 "$Z" compare r1 r1 --out "$1"; echo "rc=$?"
  echo "report"; timeout 20 "$Z" report r1 --out "$1"; echo "rc=$?"
  echo "summary"; timeout 20 "$Z" summary r1 --out "$1" --quiet; echo "rc=$?"
  echo "run"; timeout 20 "$Z" run relu $H --out rj --json "$1"; echo "rc=$?"
}
writers "$TMP/mynull" >w.out 2>w.err
[ "$(stat -c %F mynull)" = "character special file" ] || fail "mynull replaced: $(stat -c %F mynull)"
[ "$(grep -c '^rc=0$' w.out)" = 4 ] || { cat w.out w.err >&2; fail "a writer failed on a device"; }
for w in compare report summary run; do
  rm -f victim.txt && echo precious >victim.txt
  writers "$TMP/mylink" 2>&1 | sed -n "/^$w\$/,/^rc=/p" >w.out
  grep -q '^rc=0$' w.out || { cat w.out >&2; fail "$w: writing through a link failed"; }
  [ "$(stat -c %F mylink)" = "symbolic link" ] || fail "$w replaced the link: $(stat -c %F mylink)"
  [ "$(readlink mylink)" = victim.txt ] || fail "$w changed the link"
  grep -q precious victim.txt && fail "$w: the link's target did not get the content"
  [ -s victim.txt ] || fail "$w: the link's target is empty"
done
# A FIFO with no reader: an error at once, and the FIFO stays.
writers "$TMP/myfifo" >w.out 2>w.err
[ "$(stat -c %F myfifo)" = fifo ] || fail "myfifo replaced: $(stat -c %F myfifo)"
[ "$(grep -c '^rc=6$' w.out)" = 4 ] || { cat w.out w.err >&2; fail "a writer did not fail on a FIFO"; }
[ "$(grep -c 'a FIFO with no reader' w.err)" = 4 ] || { cat w.err >&2; fail "FIFO message"; }
# A FIFO with a reader gets the content. The reader must be there before
# the writer opens (a background `cat myfifo` may not have opened it yet on
# a loaded machine, and the writer then rightly finds no reader): the shell
# opens it read-write, which on Linux returns at once and counts as a
# reader; the content (a few KiB, less than the pipe's buffer) waits in the
# pipe. A second read end then drains it to end-of-file once the read-write
# end is closed.
exec 7<>myfifo
expect_rc 0 timeout 20 "$Z" compare r1 r1 --out "$TMP/myfifo"
[ "$(stat -c %F myfifo)" = fifo ] || fail "the FIFO with a reader was replaced: $(stat -c %F myfifo)"
exec 8<myfifo
exec 7>&-
timeout 20 cat <&8 >fifo.got || fail "reading the FIFO back failed"
exec 8<&-
expect_in fifo.got "relu"
# A directory is refused; nothing is created inside it.
writers "$TMP/outdir" >w.out 2>w.err
[ "$(grep -c '^rc=6$' w.out)" = 4 ] || { cat w.out w.err >&2; fail "a writer accepted a directory"; }
[ "$(grep -c 'is a directory' w.err)" = 4 ] || { cat w.err >&2; fail "directory message"; }
[ -z "$(ls -A outdir)" ] || fail "something was written into outdir: $(ls -A outdir)"
# The batch's own files are never written through a link it finds there.
echo keep >elsewhere.txt
expect_rc 0 "$Z" run relu $H --out rl
ln -sf "$TMP/elsewhere.txt" rl/results.json
expect_rc 0 "$Z" run relu $H --out rl
[ "$(cat elsewhere.txt)" = keep ] || fail "run wrote through a link in its own folder"
[ "$(stat -c %F rl/results.json)" = "regular file" ] || fail "rl/results.json is not a file"

# ---- a long path keeps the cause of its error ----------------------------
long=$TMP/$(python3 -c 'print("/c" * 2100)')
expect_rc 6 timeout 20 "$Z" run relu $H --out "$long"
expect_in "$TMP/err" "File name too long"
expect_in "$TMP/err" "..."

# ---- a log deeper than PATH_MAX is reported, not skipped -----------------
mkdir -p deep/top && cp r1/run.log deep/top/
(
  cd deep || exit 1
  for i in $(seq 1 300); do mkdir d0123456789012345 && cd d0123456789012345 || exit 1; done
  cp "$TMP/r1/run.log" .
)
expect_rc 2 timeout 60 "$Z" summary deep
expect_in "$TMP/err" "File name too long"
expect_not_in "$TMP/out" "from 1 logs"
echo ok
