"""Does a FlagGems module's Triton cache key change from one process to the next?

Triton keys its on-disk kernel cache on each JIT function's ``cache_key``,
which includes ``str()`` of the ``tl.constexpr`` globals the function uses.
A global constexpr whose value is a Python function prints with its address
(``constexpr[<function get_int_t at 0x7f...>]``), so such a key differs in
every process and the kernel is compiled again each time, cache or not.

Usage (CUDA machine, FlagGems source on PYTHONPATH), twice, then compare:
  python3 bench/flaggems/cachekey.py flag_gems.ops.sort > a.json
  python3 bench/flaggems/cachekey.py flag_gems.ops.sort > b.json
  python3 bench/flaggems/cachekey.py --diff a.json b.json
Prints, per JIT function of each module, its cache key and the constexpr
globals in it; --diff names the functions whose key changed and why.
"""
import importlib
import json
import sys


def keys(modules):
    import flag_gems  # noqa: F401  (the package's import sets up its runtime)
    from triton.language.core import constexpr
    from triton.runtime.jit import JITFunction

    out = {}
    for name in modules:
        mod = importlib.import_module(name)
        for attr, obj in sorted(vars(mod).items()):
            fn, depth = obj, 0
            while not isinstance(fn, JITFunction) and hasattr(fn, "fn") and depth < 8:
                fn, depth = fn.fn, depth + 1   # libentry and autotuner wrappers
            if not isinstance(fn, JITFunction):
                continue
            key = fn.cache_key
            glob = [[n, str(v)] for (n, _), (v, _) in fn.used_global_vals.items()
                    if isinstance(v, constexpr)]
            out[f"{name}.{attr}"] = {"key": key, "constexpr_globals": glob}
    return out


def diff(a_path, b_path):
    with open(a_path) as f:
        a = json.load(f)
    with open(b_path) as f:
        b = json.load(f)
    changed = 0
    for name in sorted(set(a) & set(b)):
        if a[name]["key"] == b[name]["key"]:
            continue
        changed += 1
        ga = dict(map(tuple, a[name]["constexpr_globals"]))
        gb = dict(map(tuple, b[name]["constexpr_globals"]))
        why = [f"{n}: {ga.get(n)} / {gb.get(n)}" for n in sorted(set(ga) | set(gb))
               if ga.get(n) != gb.get(n)]
        print(f"{name}: key changed; " + ("; ".join(why) if why else "no constexpr global differs"))
    print(f"{changed} of {len(set(a) & set(b))} JIT functions changed key between the processes")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--diff":
        sys.exit(diff(sys.argv[2], sys.argv[3]))
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    json.dump(keys(sys.argv[1:]), sys.stdout, indent=1)
    print()
