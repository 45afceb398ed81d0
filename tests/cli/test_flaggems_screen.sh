#!/usr/bin/env bash
# bench/flaggems/run.sh's screen held to one device model (SCREEN_DEVICE),
# with a fake zlbench and nvidia-smi: which operators each call runs, in
# what order, and that a call on another model runs none.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 not found (run.sh reads identities with it)"; exit 77; }

FAKE=$TMP/fake
mkdir -p "$FAKE/bin" "$FAKE/build/bin" "$TMP/fg"
CALLS=$TMP/calls.log
: >"$CALLS"
# nvidia-smi: the model in $FAKE_DEV.
cat >"$FAKE/bin/nvidia-smi" <<'EOF'
#!/bin/sh
echo "$FAKE_DEV"
EOF
# zlbench batch: --list prints $FAKE_OPS; otherwise runs the operators of
# --ops-file in order (those ops_status.csv has are skipped unless
# --force), at most $FAKE_MAX, each ending with status FAKE_ST_<op>
# (default ok) after FAKE_S_<op> seconds (default 1), its identity naming
# $FAKE_DEV; stopped short it exits 130, as a batch stopped by SIGINT.
cat >"$FAKE/build/bin/zlbench" <<'EOF'
#!/usr/bin/env bash
ops= out= force=0 list=0
while [ $# -gt 0 ]; do
  case $1 in
  --ops-file) ops=$2; shift ;;
  --out) out=$2; shift ;;
  --force) force=1 ;;
  --list) list=1 ;;
  esac
  shift
done
if [ $list = 1 ]; then
  for op in $FAKE_OPS; do printf '%s\tstable\n' "$op"; done
  exit 0
fi
echo "batch force=$force: $(tr '\n' ' ' <"$ops")" >>"$FAKE_CALLS"
csv=$out/ops_status.csv
mkdir -p "$out/ops"
[ -f "$csv" ] || echo "operator,status,attempts,dtype_level,backend,device,timer,seconds,error_signature,failed_dtypes,note" >"$csv"
n=0 bad=0
while read -r op; do
  if [ $force = 0 ] && grep -q "^$op," "$csv"; then continue; fi
  [ "$n" -lt "${FAKE_MAX:-1000}" ] || exit 130
  n=$((n + 1))
  st=FAKE_ST_$op s=FAKE_S_$op
  st=${!st:-ok}
  [ "$st" = ok ] || bad=1
  echo "ran $op" >>"$FAKE_CALLS"
  mkdir -p "$out/ops/$op"
  printf '{"device": "%s"}\n' "$FAKE_DEV" >"$out/ops/$op/run_identity.json"
  grep -v "^$op," "$csv" >"$csv.new"
  echo "$op,$st,1,1,cuda,0,graph,${!s:-1},,," >>"$csv.new"
  mv "$csv.new" "$csv"
  touch "$out/ops/$op/.complete"
done <"$ops"
exit $bad
EOF
chmod +x "$FAKE/bin/nvidia-smi" "$FAKE/build/bin/zlbench"

export FAKE_CALLS=$CALLS FAKE_OPS="a b c d e"
# screen DIR DEVICE [SCREEN_DEVICE]: one call of run.sh's screen stage.
screen() {
  : >"$CALLS"
  FAKE_DEV=$2 PATH="$FAKE/bin:$PATH" BUILD=$FAKE/build FG=$TMP/fg WORK=$1 OUT=$1.out \
    STATE=$TMP/none BUDGET=300 LIMIT=5 JOBS=2 SCREEN_DEVICE=${3:-} \
    bash "$ZLB_SRC/bench/flaggems/run.sh" screen >"$TMP/log" 2>&1
}
# ran_order: the operators the fake ran this call, in order, one line.
ran_order() { sed -n 's/^ran //p' "$CALLS" | tr '\n' ' '; }

H1="NVIDIA H100 80GB HBM3" H2="NVIDIA H200"

# 1. Three of five finish on the H200 without SCREEN_DEVICE (b times out);
# then, held to the H200: the two not finished first, then b (a timeout is
# the screen's limit, not a result), and not a or c.
W=$TMP/w1
FAKE_MAX=3 FAKE_ST_b=timeout screen "$W" "$H2"
[ "$(ran_order)" = "a b c " ] || fail "first call ran '$(ran_order)', expected 'a b c '"
screen "$W" "$H2" "$H2"
[ "$(ran_order)" = "d e b " ] || { cat "$TMP/log" >&2; fail "held call ran '$(ran_order)', expected 'd e b ' (unfinished first, then the timeout)"; }
expect_in "$CALLS" "batch force=1: d e b "
expect_in "$TMP/log" "2 operators not finished, 1 finished on a device other than $H2 or timed out"
# The identity pass over the whole selection once all finished (resumes
# everything, runs nothing).
expect_in "$CALLS" "batch force=0: a b c d e "
# Nothing left: the next call runs nothing, but the identity pass (which
# a call that finished the last operator with no time left leaves to it).
screen "$W" "$H2" "$H2"
[ -z "$(ran_order)" ] || fail "a finished screen ran '$(ran_order)' again"
expect_in "$TMP/log" "every operator finished on $H2"
expect_in "$CALLS" "batch force=0: a b c d e "
if grep -q "batch force=1" "$CALLS"; then fail "a finished screen ran a --force batch"; fi

# 2. Three finish on the H100 (seconds a=30, b=20, c=10); held to the
# H200, calls stopped short go on from each other: d and e first, then the
# rest quickest first; the identity pass waits until all five finished,
# and an H100 call runs none.
W=$TMP/w2
FAKE_MAX=3 FAKE_S_a=30 FAKE_S_b=20 FAKE_S_c=10 screen "$W" "$H1"
[ "$(ran_order)" = "a b c " ] || fail "H100 call ran '$(ran_order)'"
FAKE_MAX=1 screen "$W" "$H2" "$H2"
[ "$(ran_order)" = "d " ] || { cat "$TMP/log" >&2; fail "held call ran '$(ran_order)', expected 'd '"; }
if grep -q "batch force=0" "$CALLS"; then fail "the identity pass ran with e not finished"; fi
screen "$W" "$H1" "$H2"
[ -z "$(ran_order)" ] || fail "a call on the H100 ran '$(ran_order)' in a screen held to the H200"
expect_in "$TMP/log" "SCREEN_DEVICE is '$H2' and this device is '$H1': nothing screened"
FAKE_MAX=2 screen "$W" "$H2" "$H2"
[ "$(ran_order)" = "e c " ] || { cat "$TMP/log" >&2; fail "the next held call ran '$(ran_order)', expected 'e c '"; }
screen "$W" "$H2" "$H2"
[ "$(ran_order)" = "b a " ] || { cat "$TMP/log" >&2; fail "the last held call ran '$(ran_order)', expected 'b a '"; }
expect_in "$CALLS" "batch force=0: a b c d e "
[ "$(sort "$W/screen/rescreened" | tr '\n' ' ')" = "a b c d e " ] ||
  fail "rescreened lists '$(tr '\n' ' ' <"$W/screen/rescreened")'"
# 3. Held to either of two models ("H200|H100"): an operator that ran on
# either, or at level 2 on both, is done; one that ran on a third model,
# or timed out, runs again, after those not finished; a call on the third
# model runs none. Blanks around '|' do not count.
W=$TMP/w3 A1="NVIDIA A100-SXM4-80GB"
FAKE_MAX=3 FAKE_S_a=30 FAKE_S_b=20 FAKE_ST_b=timeout screen "$W" "$H1"
[ "$(ran_order)" = "a b c " ] || fail "call 3.1 ran '$(ran_order)'"
printf '{"device": "%s"}\n' "$A1" >"$W/screen/out/ops/a/run_identity.json"
rm "$W/screen/out/ops/c/run_identity.json"
mkdir -p "$W/screen/out/ops/c/float16" "$W/screen/out/ops/c/float32"
printf '{"device": "%s"}\n' "$H1" >"$W/screen/out/ops/c/float16/run_identity.json"
printf '{"device": "%s"}\n' "$H2" >"$W/screen/out/ops/c/float32/run_identity.json"
screen "$W" "$A1" "$H2|$H1"
[ -z "$(ran_order)" ] || fail "a call on the A100 ran '$(ran_order)' in a screen held to H200|H100"
expect_in "$TMP/log" "this device is '$A1': nothing screened"
screen "$W" "$H1" "$H2 | $H1"
[ "$(ran_order)" = "d e b a " ] ||
  { cat "$TMP/log" >&2; fail "the call held to H200|H100 ran '$(ran_order)', expected 'd e b a '"; }
expect_in "$TMP/log" "2 operators not finished, 2 finished on a device other than $H2|$H1 or timed out"
expect_in "$CALLS" "batch force=0: a b c d e "
echo "ok"
