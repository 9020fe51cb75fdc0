"""One engine for arrays and Python floats (`grokclocks._floats` ARRAY / SCALAR): a scalar call runs the same
operations as an array call and gives the same bits.

Checked here: each function of the float namespace against numpy on a one-element array (edge values included,
no warning), the double-double arithmetic on floats against arrays, `blockwise` against one direct call, and
the public functions that run on floats (late-time losses, Lambert-W times) point by point on extreme
arguments, where `tests/test_vector_scalar.py` only samples the benchmark ranges.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from grokclocks import _floats as FL
from grokclocks import linear as L

EDGE = [0.0, -0.0, 5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 0.1, 0.5, 1.0, 2.0, 700.0, 709.78, 709.8,
        745.2, 800.0, 1e300, 1.7976931348623157e308, math.inf, -math.inf, math.nan, -1.0, -0.5, -700.0,
        -745.2, -800.0, -1e300]


def _same(a: float, b: float) -> bool:
    return (a == b and math.copysign(1.0, a) == math.copysign(1.0, b)) or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "sqrt", "abs", "isfinite"])
def test_scalar_functions_equal_numpy_on_arrays(name):
    rng = np.random.default_rng(0)
    xs = EDGE + list(rng.uniform(-750.0, 750.0, 300)) + list(np.exp(rng.uniform(-700.0, 700.0, 300)))
    f_s, f_a = getattr(FL.SCALAR, name), getattr(FL.ARRAY, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the float path warns about nothing
        got = [f_s(float(x)) for x in xs]
    with np.errstate(all="ignore"):
        want = f_a(np.array(xs))
    for x, g, w in zip(xs, got, want):
        assert type(g) in (float, bool), (name, x, type(g))
        assert _same(float(g), float(w)), (name, x, g, w)


def test_scalar_helpers_equal_numpy():
    for m in (0.5, -0.75, 1.0, 3.0, 5e-324):
        for k in (-1100, -1074, -10, 0, 10, 1023, 1100):
            with np.errstate(all="ignore"):
                want = float(np.ldexp(np.array([m]), np.array([k]))[0])
            assert _same(FL.SCALAR.ldexp(m, k), want), (m, k)
        assert FL.SCALAR.frexp(m) == tuple(v.item() for v in np.frexp(np.array([m])))
    for a, b in ((1.0, 2.0), (math.nan, 1.0), (1.0, math.nan), (-math.inf, 0.0)):
        assert _same(FL.SCALAR.minimum(a, b), float(np.minimum(a, b)))
        assert _same(FL.SCALAR.maximum(a, b), float(np.maximum(a, b)))
    assert FL.SCALAR.reciprocal(0.0) == math.inf and FL.SCALAR.reciprocal(-0.0) == -math.inf
    assert FL.SCALAR.where(True, 1.0, 2.0) == 1.0 and FL.SCALAR.where(False, 1.0, 2.0) == 2.0
    assert FL.ops_of(1.0, 2.0) is FL.SCALAR and FL.ops_of(1.0, np.float64(2.0)) is FL.ARRAY


def test_double_double_on_floats_equals_arrays():
    rng = np.random.default_rng(1)
    a = np.exp(rng.uniform(-300.0, 300.0, 200)) * rng.choice([-1.0, 1.0], 200)
    b = np.exp(rng.uniform(-300.0, 300.0, 200))
    c, d = a * 2.0 ** -60, b * 2.0 ** -60  # low parts
    arrays = {
        "two_sum": FL.dd_two_sum(a, b), "two_prod": FL.dd_two_prod(a, b), "mul": FL.dd_mul(a, c, b, d),
        "div": FL.dd_div(a, c, b, d), "sqrt": FL.dd_sqrt(b), "exp": (FL.dd_exp(np.log(b), d),),
    }
    for i in range(a.size):
        x, y, u, v = float(a[i]), float(b[i]), float(c[i]), float(d[i])
        floats = {
            "two_sum": FL.dd_two_sum(x, y), "two_prod": FL.dd_two_prod(x, y), "mul": FL.dd_mul(x, u, y, v),
            "div": FL.dd_div(x, u, y, v), "sqrt": FL.dd_sqrt(y), "exp": (FL.dd_exp(math.log(y), v),),
        }
        for name, got in floats.items():
            for g, w in zip(got, arrays[name]):
                assert type(g) is float, (name, type(g))
                assert _same(g, float(w[i])), (name, i, g, float(w[i]))


def test_blockwise_equals_one_call():
    rng = np.random.default_rng(2)
    n = 3 * FL.BLOCK + 5
    a, b = rng.uniform(0.1, 2.0, n), rng.uniform(0.1, 2.0, n)

    def f(x, y, z):
        return np.sqrt(x) * y + z, x - y

    direct = f(a, b, np.float64(0.25))
    blocks = FL.blockwise(f, (n,), a, b, np.array(0.25))
    for g, w in zip(blocks, direct):
        assert np.array_equal(g, w)
    m = n // 3
    shaped = FL.blockwise(lambda x, y: x * y, (3, m), a[: 3 * m].reshape(3, m), 2.0)
    assert np.array_equal(shaped, a[: 3 * m].reshape(3, m) * 2.0)


def _extreme_late_args(n):
    rng = np.random.default_rng(3)
    t = np.exp(rng.uniform(np.log(1e-3), np.log(1e8), n))
    lam = np.exp(rng.uniform(-8.0, 8.0, n))
    eta0 = np.exp(rng.uniform(-10.0, 3.0, n))
    k = n // 5
    t[:k] = np.exp(rng.uniform(-690.0, 690.0, k))
    lam[k:2 * k] = np.exp(rng.uniform(-700.0, 700.0, k))
    eta0[2 * k:3 * k] = np.exp(rng.uniform(-690.0, 690.0, k))
    lam[3 * k:4 * k] = 1.0 + rng.uniform(-1e-12, 1e-12, k)  # the quotient form of 1 - sqrt(lam)
    lam[lam == 1.0] = 0.5
    return t, lam, eta0


@pytest.mark.parametrize("func, kwargs", [
    (L.loss_train_late, {}), (L.loss_train_late, {"order": 1}), (L.loss_train_late, {"d_out": 3, "order": 1}),
    (L.loss_gen_late, {}), (L.loss_gen_late, {"d_out": 7}), (L.loss_gen_late_simple, {}),
])
def test_late_time_scalar_calls_equal_array_call(func, kwargs):
    """Bit for bit on every point (loss_gen_late_simple: its lam_- comes from rmt, whose 0-d and array paths
    may round a square differently: one ulp allowed there)."""
    t, lam, eta0 = _extreme_late_args(300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vec = func(t, lam, eta0, **kwargs)
        sca = np.array([func(float(a), float(b), float(c), **kwargs) for a, b, c in zip(t, lam, eta0)])
    ulps = 1.0 if func is L.loss_gen_late_simple else 0.0
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf (equal: passes on the first test)
        ok = (vec == sca) | (np.isnan(vec) & np.isnan(sca)) | (np.abs(vec - sca) <= ulps * np.spacing(np.abs(sca)))
    assert ok.all(), list(zip(t[~ok], lam[~ok], eta0[~ok], vec[~ok], sca[~ok]))


@pytest.mark.parametrize("func", [L.t_star_train_lambertw, L.t_star_gen_lambertw, L.grok_time_lambertw])
def test_lambertw_scalar_calls_equal_array_call(func):
    """grok_time_lambertw's Newton once ran batch-wide: at lam ~ 1e-150 the array differed from the scalar
    calls by 256 ulp (one more step moved log delta by an ulp)."""
    rng = np.random.default_rng(4)
    n = 400
    lam = np.exp(rng.uniform(-690.0, -1e-9, n))
    lam[:40] = 1.0 - np.exp(rng.uniform(-36.0, -1.0, 40))
    eps = np.exp(rng.uniform(-690.0, 690.0, n))
    eta0 = np.exp(rng.uniform(-300.0, 300.0, n))
    level = rng.uniform(1e-9, 1.0 - 1e-9, n)
    level[::3] = L.ERF_SQRT2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vec = func(lam, eps, eta0, level=level)
        sca = np.array([func(float(a), float(b), float(c), level=float(d)) for a, b, c, d in zip(lam, eps, eta0, level)])
    ok = (vec == sca) | (np.isnan(vec) & np.isnan(sca))
    assert ok.all(), list(zip(lam[~ok], eps[~ok], vec[~ok], sca[~ok]))
