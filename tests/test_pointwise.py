"""_pointwise.py: the bookkeeping that lets one engine serve a scalar call and an array call."""

from __future__ import annotations

import numpy as np

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
    seen = []

    def form(a):
        seen.append(np.size(a))
        return -a

    out = np.arange(6.0)
    got = P.patch(out.copy(), out > 3.5, form, out)
    assert got.tolist() == [0.0, 1.0, 2.0, 3.0, -4.0, -5.0] and seen == [2]
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


def test_patch_with_one_test_for_a_whole_array_keeps_the_shape():
    out = np.array([1.0, -2.0])
    assert P.patch(out.copy(), np.bool_(True), np.zeros_like, 5.0).tolist() == [0.0, 0.0]
    assert P.patch(out.copy(), False, np.zeros_like, 5.0).tolist() == [1.0, -2.0]
