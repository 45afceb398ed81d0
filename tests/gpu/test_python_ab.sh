# zlbench.ab (the Python A/B of two callables) on CUDA with torch
# (tests/gpu/python_ab.py): torch.mul against itself is never faster or
# slower; torch.mul against a copy with 5 % more work (a spin sized from a
# first measurement) is slower. Skips (77) without a GPU, or without a
# Python that has torch and pytest.
. "$(dirname "$0")/lib.sh"
use_torch_python pytest
"$PY" -m pytest -q -p no:cacheprovider -rs "$ZLB_SRC/tests/gpu/python_ab.py" >"$TMP/pytest.log" 2>&1
rc=$?
cat "$TMP/pytest.log"
keep "$TMP/pytest.log"
[ $rc = 0 ] || fail "zlbench.ab's CUDA tests failed (rc $rc) with $PY"
echo "ok: zlbench.ab on CUDA with torch ($PY)"
