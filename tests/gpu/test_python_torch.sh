# The Python package on CUDA with torch (tests/gpu/python_torch.py): graph
# timing of a torch operator through torch's capture, a host synchronisation
# inside fn falling back to direct timing with a marker, a random operator
# measured without disturbing torch's RNG, exceptions from fn re-raised.
# Skips (77) without a GPU, or without a Python that has torch and pytest.
. "$(dirname "$0")/lib.sh"
use_torch_python pytest
"$PY" -m pytest -q -p no:cacheprovider -rs "$ZLB_SRC/tests/gpu/python_torch.py" >"$TMP/pytest.log" 2>&1
rc=$?
cat "$TMP/pytest.log"
keep "$TMP/pytest.log"
[ $rc = 0 ] || fail "the Python package's CUDA tests failed (rc $rc) with $PY"
echo "ok: the Python package on CUDA with torch ($PY)"
