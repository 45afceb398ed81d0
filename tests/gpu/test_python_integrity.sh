# The integrity gate for torch callables (tests/gpu/python_integrity.py):
# an honest torch.add passes with every timer; a result cached by
# data_ptr(), work skipped after the first call and work on a side
# torch.cuda.Stream (seen by the CUPTI tracer) are refused with
# zlbench.IntegrityError. Skips (77) without a GPU, or without a Python
# that has torch and pytest.
. "$(dirname "$0")/lib.sh"
use_torch_python pytest
"$PY" -m pytest -q -p no:cacheprovider -rs "$ZLB_SRC/tests/gpu/python_integrity.py" >"$TMP/pytest.log" 2>&1
rc=$?
cat "$TMP/pytest.log"
keep "$TMP/pytest.log"
[ $rc = 0 ] || fail "the integrity gate's torch tests failed (rc $rc) with $PY"
echo "ok: the integrity gate on CUDA with torch ($PY)"
