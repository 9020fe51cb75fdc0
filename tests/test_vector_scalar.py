"""A vector call equals the scalar calls: every swept function of the core, point by point, to one ulp.

The public functions of the pure-math core run one code path for a scalar and for an array (validated once,
broadcast, flattened, one engine; each point of a root or a quadrature iterates on its own numbers), so the
accuracy contract measured on scalar calls (tests/accuracy) holds for array calls. This checks it on the
functions and argument ranges of the throughput benchmark (``benchmarks/bench_core.py``): 12 random points per
function, the array call against 12 scalar calls, equal or within one ulp (``np.spacing``).
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import warnings

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("grokclocks_bench_core", ROOT / "benchmarks" / "bench_core.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


B = _bench()
N = 12


def _components(x):
    return [np.asarray(v, dtype=float) for v in x] if isinstance(x, tuple) else [np.asarray(x, dtype=float)]


@pytest.mark.parametrize("case", B.CASES, ids=lambda c: c.name)
def test_array_call_equals_scalar_calls(case):
    rng = np.random.default_rng(7)
    args = case.args(rng, N)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vec = _components(case.lib(*args))
        for i in range(N):
            one = tuple(a[i] if np.ndim(a) == 1 else (a[i:i + 1] if np.ndim(a) > 1 else a) for a in args)
            sca = _components(case.lib(*one))
            for v, s in zip(vec, sca):
                got, want = v.reshape(N, -1)[i], s.reshape(-1)
                both_inf_or_nan = (np.isnan(got) & np.isnan(want)) | (got == want)
                ulp = np.abs(got - want) <= np.spacing(np.abs(want))
                assert np.all(both_inf_or_nan | ulp), (case.name, i, [float(a[i]) if np.ndim(a) == 1 else a
                                                                      for a in args], got, want)


def test_scalar_in_float_out():
    """Scalars in, Python floats out (DESIGN.md): the vector engines return floats for a scalar call."""
    for case in B.CASES:
        args = case.args(np.random.default_rng(1), 1)
        if any(np.ndim(a) > 1 for a in args):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = case.lib(*(a[0] if np.ndim(a) == 1 else a for a in args))
        for v in out if isinstance(out, tuple) else (out,):
            assert isinstance(v, (float, int)), (case.name, type(v))
