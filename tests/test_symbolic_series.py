"""Series and asymptotics of the numerical code, derived with sympy instead of typed.

Where grokclocks switches to a series or an asymptotic branch, its coefficients are derived here from the
definition (a differential equation, the MP moments, a Laplace integral) and compared with the code: a named
coefficient table is compared entry by entry, a series written inline is compared through its values at
points inside its branch, where the derived series, evaluated in mpmath, must match to the rounding of
float64.

Internal names read here (stable names the vectorising refactor of rmt / linear keeps, or values at points):
``grokclocks.rmt._COEF_SMALL``, ``grokclocks.rmt._log_phi1``, ``grokclocks.rmt._ive``,
``grokclocks.linear._late._log_erfc_bracket``; the rest through public functions
(``clocks.log_binary_pl_ratio``, ``kramers.kramers_ratio_first_order_estimate``,
``linear.accuracy_from_loss``, ``linear.wd_asymptotes_small_gamma``).

Note: sympy 1.14's ``besseli(n, z).series(z, oo)`` has the wrong sign of every odd term (it gives
I_1(z) ~ e^z (1 + 3/(8z) ...)/sqrt(2 pi z); the true series is 1 - 3/(8z) ...; mpmath at z = 100:
0.996238 against 1 - 0.00375), so the Hankel coefficients are derived from Bessel's equation here.
"""

from __future__ import annotations

import functools
import importlib

import mpmath
import numpy as np
import pytest
import sympy as sp
from sympy import Rational, exp, sqrt

from grokclocks.symbolic import formula
from grokclocks.symbolic import _symbols as S

z = sp.Symbol("z", positive=True)


@functools.cache
def hankel_coefficients(n: int, K: int) -> tuple:
    """c_0..c_K of e^{-z} sqrt(2 pi z) I_n(z) ~ sum_k c_k z^-k, from the modified Bessel equation
    z^2 y'' + z y' - (z^2 + n^2) y = 0 with y = e^z z^{-1/2} sum_k c_k z^{-k}, c_0 = 1."""
    c = sp.symbols(f"c0:{K + 1}")
    y = exp(z) / sqrt(z) * sum(c[k] * z ** (-k) for k in range(K + 1))
    residual = sp.expand(sp.simplify((z**2 * y.diff(z, 2) + z * y.diff(z) - (z**2 + n**2) * y) * sqrt(z) / exp(z)))
    sol = {c[0]: 1}
    for k in range(1, K + 1):  # the z^(1-k) coefficient fixes c_k
        eq = residual.coeff(z, 1 - k).subs(sol)
        sol[c[k]] = sp.solve(eq, c[k])[0]
    return tuple(sp.nsimplify(sol[c[k]]) for k in range(K + 1))


def test_hankel_coefficients_match_the_closed_product():
    """The derived c_k are (-1)^k prod_{j<=k} (4n^2 - (2j-1)^2)/(k! 8^k) (Abramowitz-Stegun 9.7.1)."""
    for n in (0, 1, 2, 5):
        c = hankel_coefficients(n, 5)
        for k in range(6):
            prod = sp.prod([4 * n**2 - (2 * j - 1) ** 2 for j in range(1, k + 1)])
            assert c[k] == (-1) ** k * prod / (sp.factorial(k) * 8**k), (n, k)
