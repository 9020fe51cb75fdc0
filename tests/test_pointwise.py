"""_pointwise.py: the bookkeeping that lets one engine serve a scalar call and an array call."""

from __future__ import annotations

import numpy as np
import pytest

from grokclocks import _floats as FL
from grokclocks import _pointwise as P


def test_product_on_numbers_is_power_product_bit_for_bit():
    rng = np.random.default_rng(3)
    x = np.exp(rng.uniform(-705, 705, (3, 4000)))  # products inside and outside the normal range
    for powers in ([2, 1, 1], [1, 1, -1], [1, 1, -2, -1], [2, 0.5, 1.37]):
        bases = list(x[: len(powers)]) if len(powers) <= 3 else list(x) + [x[0] * 0 + 3.0]
        with np.errstate(all="ignore"):
            vec = FL.power_product(bases, powers)
        for i in range(0, 4000, 37):
            with np.errstate(over="ignore", under="ignore"):  # the engines call it under their errstate
                one = P.product([float(b[i]) if i % 2 else np.float64(b[i]) for b in bases], powers)
            assert isinstance(one, float)
            assert one == vec[i] or (np.isnan(one) and np.isnan(vec[i])), (powers, i, one, vec[i])


def test_patch_evaluates_the_form_on_the_masked_points_only():
    """Few points: the form sees the masked values only; many: every point, the others' values dropped."""
    seen = []

    def form(a):
        seen.append(np.size(a))
        return -a

    out = np.arange(20.0)
    got = P.patch(out.copy(), out > 17.5, form, out)  # 2 of 20 points: the form on those only
    assert got.tolist() == list(range(18)) + [-18.0, -19.0] and seen == [2]
    seen.clear()
    got = P.patch(out.copy(), out > 14.5, form, out)  # a quarter of the points: on every point, a masked copy
    assert got.tolist() == list(range(15)) + [-15.0, -16.0, -17.0, -18.0, -19.0] and seen == [20]
    assert P.patch(2.0, False, form, 2.0) == 2.0 and P.patch(2.0, True, form, 2.0) == -2.0
    ro = np.arange(3.0)
    ro.flags.writeable = False  # a validated input is never written
    assert P.patch(ro, ro > 0.5, form, ro).tolist() == [0.0, -1.0, -2.0] and ro.tolist() == [0.0, 1.0, 2.0]
    # a 0-d mask over an array patches every point
    assert P.patch(np.ones(3), np.array(True), lambda a: 0.0 * a, np.ones(3)).tolist() == [0.0, 0.0, 0.0]


def test_into_only_reuses_an_owned_array_of_the_full_shape():
    a = np.ones(4)
    assert P.into(a, 2.0) is a and P.into(a, np.ones(4)) is a
    assert P.into(a, np.ones((2, 4))) is None and P.into(1.0) is None
    ro = np.ones(4)
    ro.flags.writeable = False
    assert P.into(ro) is None


def test_log_quotient_on_numbers_is_fl_log_quotient_bit_for_bit():
    rng = np.random.default_rng(11)
    a = np.exp(rng.uniform(-745, 709, 6000))
    b = np.exp(rng.uniform(-745, 709, 6000))
    b[:2000] = a[:2000] * rng.uniform(0.3, 3.0, 2000)  # b/2 <= a <= 2b: the log1p form, and just outside it
    with np.errstate(all="ignore"):
        vec = FL.log_quotient(a, b)
        for i in range(0, 6000, 7):
            x, y = (float(a[i]), float(b[i])) if i % 2 else (a[i], b[i])  # Python floats and numpy float64
            one = P.log_quotient(x, y)
            assert one == vec[i], (x, y, one, vec[i])
            assert one == FL.log_quotient(x, y)


def test_log_quotient_every_point_its_own_form_whatever_the_near_fraction_and_layout():
    """The near-1 step (log1p of the exact difference) on a gather of the near points or, where half or more are
    near 1, on every point under a mask: each point the value of the same two numbers (`P.log_quotient` on
    floats), including the edge band |log| in [0.6931, 0.6932] (a = 2b, b/2 and their neighbours, where the exact
    test b/2 <= a <= 2b decides), broadcast, non-contiguous and 0-d arguments."""
    rng = np.random.default_rng(13)
    n = 3000
    for frac in (0.0, 0.02, 0.3, 0.49, 0.51, 0.8, 1.0):
        b = np.exp(rng.uniform(-700, 700, n))
        a = np.exp(rng.uniform(-700, 700, n))
        near = rng.random(n) < frac
        a[near] = b[near] * rng.uniform(0.45, 2.2, near.sum())
        edge = near & (rng.random(n) < 0.3)  # a = 2b or b/2, then 0-3 ulps either way
        a[edge] = b[edge] * rng.choice([2.0, 0.5], edge.sum())
        for _ in range(3):
            step = edge & (rng.random(n) < 0.5)
            a[step] = np.nextafter(a[step], np.where(rng.random(step.sum()) < 0.5, 0.0, np.inf))
        with np.errstate(all="ignore"):
            for x, y in ((a, b), (b, a), (a[::2], b[1::2]), (a, 1.7), (0.9, b), (a[:40, None], b[None, :50])):
                got = FL.log_quotient(x, y)
                xb, yb = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
                want = [P.log_quotient(float(u), float(v)) for u, v in zip(xb.reshape(-1), yb.reshape(-1))]
                assert got.shape == xb.shape
                assert np.array_equal(got.reshape(-1), want), (frac, np.shape(x), np.shape(y))


def test_patch_with_one_test_for_a_whole_array_keeps_the_shape():
    out = np.array([1.0, -2.0])
    assert P.patch(out.copy(), np.bool_(True), np.zeros_like, 5.0).tolist() == [0.0, 0.0]
    assert P.patch(out.copy(), False, np.zeros_like, 5.0).tolist() == [1.0, -2.0]


def test_patch_same_values_by_gather_and_by_masked_copy():
    rng = np.random.default_rng(4)
    x, y = rng.uniform(-2, 2, 5000), np.exp(rng.uniform(-30, 30, 5000))
    form = lambda x, y: np.log1p(np.expm1(x) + y)  # noqa: E731
    for frac in (0.01, 0.1, 0.5):
        mask = rng.random(5000) < frac
        with np.errstate(all="ignore"):
            got = P.patch(np.zeros(5000), mask, form, x, y)
            want = np.where(mask, form(x, y), 0.0)
        assert np.array_equal(got, want)
        for i in np.flatnonzero(mask)[:50]:  # and the form on one number
            assert got[i] == form(float(x[i]), float(y[i]))


def test_log_quotient_with_bounds_far_from_one_is_fl_log_quotient():
    rng = np.random.default_rng(12)
    a = np.exp(rng.uniform(-300, 300, 5000))
    for q in (np.exp(rng.uniform(0.7, 400, 5000)), np.exp(rng.uniform(-400, -0.7, 5000))):
        b = a / q  # inside the double range
        with np.errstate(all="ignore"):
            qq = a / b
            got = P.log_quotient(a, b, (float(qq.min()), float(qq.max())))
            assert np.array_equal(got, FL.log_quotient(a, b))
    # bounds that reach [1/2, 2] or leave the normal range: FL.log_quotient itself (its near form)
    b = a * rng.uniform(0.6, 1.6, 5000)
    assert np.array_equal(P.log_quotient(a, b, (0.6, 1.7)), FL.log_quotient(a, b))


def test_hypot_within_an_ulp_and_alike_for_numbers_and_arrays():
    """`hypot`: sqrt(x² + y²) where the point's own numbers allow it, np.hypot elsewhere: within an ulp of np.hypot
    on 1e5 random points and on every pair of 14 extreme values (±inf, NaN, 0, subnormal, 2^510, 2^511, 1e±300),
    and a number gives the bits of the same point in an array (the choice is the point's own)."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-3.0, 3.0, 100_000) * 10.0 ** rng.integers(-170, 170, 100_000)
    y = rng.uniform(0.0, 3.0, 100_000) * 10.0 ** rng.integers(-170, 170, 100_000)
    ex = np.array([1e300, 1e-300, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, 1e-200, 2.0**510, 2.0**511, 1e-160,
                   -(2.0**-481), 5e-324])
    X, Y = (v.ravel() for v in np.meshgrid(ex, ex))
    for a, b in ((x, y), (X, Y)):
        with np.errstate(all="raise"):
            got = P.hypot(a, b)
        want = np.hypot(a, b)
        with np.errstate(invalid="ignore"):  # inf - inf where both are inf (equal: accepted by the first test)
            ok = (got == want) | (np.isnan(got) & np.isnan(want)) | (np.abs(got - want) <= np.spacing(want))
        assert ok.all()
        idx = np.arange(0, a.size, max(1, a.size // 300))
        one = np.array([P.hypot(float(a[i]), float(b[i])) for i in idx])
        assert np.array_equal(one, got[idx], equal_nan=True)


@pytest.mark.parametrize("lo, hi", [(0.6, 1.9), (1.0, 1e6), (1e-3, 1e3), (3.0, 1e9), (1e-300, 1e300)])
def test_log_quotient_with_extrema_equals_floats_engine(lo, hi):
    """The extremes choose the form (all near 1, the log of the quotient with the near-1 step, or the careful
    engine); every point keeps `FL.log_quotient`'s value, for an array, a number and a broadcast pair."""
    rng = np.random.default_rng(7)
    a = np.exp(rng.uniform(np.log(lo), np.log(hi), 5000))
    for b in (np.exp(rng.uniform(np.log(lo), np.log(hi), 5000)), 1.0, 1.3, np.exp(rng.uniform(0, 1, (3, 1)))):
        aa = a if np.ndim(b) < 2 else a[None, :50]
        ext = (FL.extrema(aa), FL.extrema(b))
        with np.errstate(all="ignore"):
            assert np.array_equal(P.log_quotient(aa, b, extrema=ext), FL.log_quotient(aa, b))
