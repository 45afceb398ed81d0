# Host dispatch time on a CUDA device (docs/timing.md, "Host dispatch
# time"): every timer reports each side's host time of one call (a C
# operator's launch: positive, far under its budget) in results.json and
# the table; and through the Python package a callable that spins 200 us on
# the host before a tiny torch kernel reports host_us >= 200 while the
# graph timer's device time stays far under it (the graph hides the host).
# Only lower bounds on a deliberate spin; upper bounds are loose sanity.
. "$(dirname "$0")/lib.sh"
printf 'add:\n  shapes: [[4096]]\n' >"$TMP/shapes.yaml"
for t in graph queue direct; do
  "$ZLBENCH" run add --backend cuda --shape-file "$TMP/shapes.yaml" --dtypes float16 \
    --timer "$t" --out "$TMP/$t" >"$TMP/$t.out" 2>&1 || { cat "$TMP/$t.out" >&2; fail "$t run failed"; }
  all_rows_are "$TMP/$t/run.log" Status SUCCESS || fail "$t: rows are not all SUCCESS"
  table_col "$TMP/$t/run.log" 'Host (us)' >"$TMP/hc" || fail "$t: no Host (us) column"
  [ "$(awk '$1 > 0 && $1 < 10000' "$TMP/hc" | wc -l)" -ge 1 ] || fail "$t: Host (us): $(cat "$TMP/hc")"
  python3 - "$TMP/$t/results.json" "$t" <<'PY' || fail "$t: results.json host_us"
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] for r in t["rows"]]
assert rows
for r in rows:
    for s in ("baseline", "candidate"):
        h = r[s]["host_us"]
        print(sys.argv[2], s, f"device {r[s]['ms'] * 1e3:.2f} us, host {h:.2f} us")
        assert isinstance(h, float) and 0 < h < 10000, (s, h)
PY
done
keep "$TMP/graph" "$TMP/queue" "$TMP/direct"

use_torch_python
"$PY" - <<'PY' || fail "the Python package's host time on CUDA"
import time
import torch
import zlbench
x = torch.randn(64, 64, device="cuda", dtype=torch.float16)
def fn():
    end = time.perf_counter() + 200e-6
    while time.perf_counter() < end:
        pass
    torch.mul(x, x)
res = zlbench.measure(fn, timer="graph", warmup=5, rep=20)
print(f"graph: device {res.value * 1e3:.2f} us, host {res.host_us:.2f} us per call")
assert res.timer == "graph", res.timer
assert res.host_us >= 200, res.host_us
assert res.value * 1e3 < 100, res.value  # the replay runs the kernel alone
plain = zlbench.measure(lambda: torch.mul(x, x), timer="graph", warmup=5, rep=20)
print(f"torch.mul [64, 64] float16: device {plain.value * 1e3:.2f} us, "
      f"host {plain.host_us:.2f} us per call")
assert plain.host_us > 0
PY
echo "ok: host dispatch time on CUDA"
