"""grokclocks._floats: the double-double building blocks, against exact rational arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from grokclocks import _floats as FL

RNG = np.random.default_rng(7)
A = np.ldexp(RNG.random(200) + 0.5, RNG.integers(-400, 400, 200))
B = np.ldexp(RNG.random(200) + 0.5, RNG.integers(-400, 400, 200))


def _exact(hi, lo):
    return Fraction(float(hi)) + Fraction(float(lo))


def test_two_sum_and_two_prod_are_exact():
    s, e = FL.dd_two_sum(A, -B)
    p, f = FL.dd_two_prod(A, B)
    for i in range(A.size):
        assert _exact(s[i], e[i]) == Fraction(float(A[i])) - Fraction(float(B[i]))
        assert _exact(p[i], f[i]) == Fraction(float(A[i])) * Fraction(float(B[i]))


def test_mul_div_sqrt_to_1e_30():
    ah, al = FL.dd_two_prod(A, 1.0 / 3.0)  # operands with a non-zero low part
    bh, bl = FL.dd_two_sum(B, B * 2.0 ** -60)
    mh, ml = FL.dd_mul(ah, al, bh, bl)
    qh, ql = FL.dd_div(ah, al, bh, bl)
    rh, rl = FL.dd_sqrt(A)
    for i in range(A.size):
        a, b = _exact(ah[i], al[i]), _exact(bh[i], bl[i])
        assert abs(_exact(mh[i], ml[i]) / (a * b) - 1) < 1e-30
        assert abs(_exact(qh[i], ql[i]) / (a / b) - 1) < 1e-30
        r = _exact(rh[i], rl[i])
        assert abs(r * r / Fraction(float(A[i])) - 1) < 1e-30


def test_dd_exp_uses_the_low_part():
    # e^(hi + lo) with lo = 1e-14: a double exponent would round lo away (e^700 carries 700 ulps)
    hi, lo = 700.0, 1e-14
    got = float(FL.dd_exp(hi, lo))
    assert got == pytest.approx(math.exp(700.0) * (1 + 1e-14), rel=2.3e-16)
    assert float(FL.dd_exp(-math.inf, math.nan)) == 0.0
    assert float(FL.dd_exp(710.0, -1e-14)) == math.inf  # overflow is inf, not inf - inf = nan
