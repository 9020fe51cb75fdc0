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


def _module(name: str):
    return importlib.import_module(name)


# ------------------------------------------------------------------ rmt: the double series of Phi_0 and Phi_1


def _mp_series_from_moments(order: int) -> sp.Expr:
    """e^{s(1+lambda)} E[e^{-s nu}] to s^order from the Marchenko-Pastur moments (Narayana polynomials, atom
    included: E[nu^0] = 1), as a polynomial in s and lambda."""
    lam, s = S.lam, S.s
    moment = formula("levi:mp-moments")
    phi0 = 1 + sum((-s) ** n * moment.subs(S.k, n).doit() / sp.factorial(n) for n in range(1, order + 1))
    shift = sum((s * (1 + lam)) ** n / sp.factorial(n) for n in range(order + 1))
    return sp.Poly(sp.expand(phi0 * shift), s, lam)


def test_neumann_double_series_coefficients_are_derived_from_the_moments():
    """rmt._COEF_SMALL[m-1, k] is the coefficient of (s lambda)^(m-1) (s^2 lambda)^k in e^{s(1+lambda)} Phi_0(s),
    i.e. of s^(m-1+2k) lambda^(m-1+k): derived here from E[e^{-s nu}] = sum (-s)^n E[nu^n]/n! (the Narayana
    moments, valid for every lambda) to s^12, they are m/(k!(m+k)!) and every other coefficient is 0; the
    table (built as exp(-gammaln - gammaln)) holds them to 4e-15 relative.  Row m = 1
    (1, 1/2, 1/12, 1/144, ...) is the series of 2 I_1(z)/z in y = z^2/4 that rmt._log_phi1 uses below z = 1e-3."""
    order = 12
    poly = _mp_series_from_moments(order)
    table = _module("grokclocks.rmt")._COEF_SMALL
    seen = 0
    for (j, i), coef in poly.terms():  # coefficient of s^j lambda^i
        if j > order:
            continue
        k, m = j - i, 2 * i - j + 1  # s^(m-1+2k) lambda^(m-1+k)
        assert k >= 0 and m >= 1, (j, i, coef)  # no term outside the double series
        assert coef == sp.Rational(m, sp.factorial(k) * sp.factorial(m + k)), (m, k, coef)
        if m <= table.shape[0] and k < table.shape[1]:
            assert abs(table[m - 1, k] - float(coef)) <= 4e-15 * float(coef), (m, k)  # exp of gammaln
            seen += 1
    assert seen >= 40
    row1 = [sp.Rational(1, sp.factorial(k) * sp.factorial(k + 1)) for k in range(4)]
    assert row1 == [1, sp.Rational(1, 2), sp.Rational(1, 12), sp.Rational(1, 144)]


def test_log_phi1_small_z_branch_matches_the_derived_series():
    """rmt._log_phi1 below z = 2 s sqrt(lambda) = 1e-3 evaluates -s(1+lambda) + log(1 + y/2 + y^2/12 + y^3/144),
    y = s^2 lambda: against the exact log Phi_1 (mpmath, 40 digits) the branch must be exact to the rounding
    of its inputs (1e-16 absolute); a wrong y or y^2 coefficient would show (y up to 2.5e-7: the y^2 term is
    ~5e-15), the y^3 term is below float64 resolution there."""
    rmt = _module("grokclocks.rmt")
    phi1 = sp.lambdify((S.s, S.lam), formula("levi:eq19"), "mpmath")
    worst = 0.0
    for lam in (1e-6, 0.01, 0.5, 4.0, 1e6):
        for z_ in (1e-9, 1e-6, 3e-4, 9.9e-4):
            s_ = z_ / (2 * lam**0.5)
            got = float(rmt._log_phi1(np.array([s_]), np.array([lam]))[0])
            with mpmath.workdps(40):
                ref = mpmath.log(phi1(mpmath.mpf(s_), mpmath.mpf(lam)))
            worst = max(worst, abs(got - float(ref)) / max(1.0, abs(float(ref))))
    assert worst <= 4e-16, worst


# ------------------------------------------------------------------ rmt: the Hankel expansion


def test_hankel_branch_of_ive_matches_the_derived_expansion():
    """rmt._ive(n, z) beyond z = 1e8 sums 6 Hankel terms (a_k(n) by a product formula): against the 6 terms
    derived from Bessel's equation (mpmath, 40 digits) and against mpmath's e^-z I_n(z) it agrees to 2e-16
    relative (two ulps) at orders up to 64, where terms up to k = 3 are visible (16384/(8 z) = 2e-5 at z = 1e8); and
    rmt._log_ive_2sr's leading term beyond s r = 1e300 is c_0 = 1: -log(2 sqrt(pi s r))."""
    rmt = _module("grokclocks.rmt")
    worst = 0.0
    for n in (0, 1, 5, 20, 64):
        c = hankel_coefficients(n, 5)
        for z_ in (1.5e8, 1e9, 1e12):
            got = float(rmt._ive(n, z_))
            with mpmath.workdps(40):
                zz = mpmath.mpf(z_)
                series = sum(mpmath.mpf(sp.Rational(ck).p) / sp.Rational(ck).q / zz**k for k, ck in enumerate(c))
                derived = series / mpmath.sqrt(2 * mpmath.pi * zz)
                exact = mpmath.besseli(n, zz) * mpmath.exp(-zz)
            assert abs(derived / exact - 1) < 1e-30 * (1 + n**12)  # the omitted k = 6 term
            worst = max(worst, abs(got / float(derived) - 1))
    assert worst <= 4.5e-16, worst  # two ulps
    s_, r_ = 1e301, 0.5
    got = float(rmt._log_ive_2sr(1, s_, r_))
    assert abs(got - float(-mpmath.log(2 * mpmath.sqrt(mpmath.pi * s_ * r_)))) <= 1e-15 * abs(got)


# ------------------------------------------------------------------ linear: the continued fraction of eq. 22


def test_late_gen_continued_fraction_is_the_derived_asymptotic_series():
    """linear._late._log_erfc_bracket evaluates pi^-1/2 - sqrt(x) erfcx(sqrt x) = e^x x^(1/2) Gamma(-1/2, x)/(2 sqrt
    pi) for x >= 1 by the continued fraction 1/(x + 3/2 - 1(3/2)/(x + 7/2 - 2(5/2)/(x + 11/2 - ...))).  Derived
    here: integrating by parts, e^x x^(1/2) Gamma(-1/2, x) ~ (1/x) sum_k (-3/2)(-5/2)...(-1/2-k)/x^k =
    (1/x)(1 - 3/(2x) + 15/(4x^2) - ...) (the bracket of eq. 22's expansion); the continued fraction expanded in
    1/x reproduces these coefficients to x^-6; and the code's values agree with mpmath's Gamma(-1/2, x) at 40
    digits to 4e-16 relative on x in [1, 1e6]."""
    x = sp.Symbol("x", positive=True)
    a = -Rational(1, 2)
    terms = 7
    asym = sum(sp.prod([a - j for j in range(1, k + 1)]) / x**k for k in range(terms)) / x
    # integration by parts, checked: d/dx [x^(a-1) e^-x sum...] reproduces -x^(a-1) e^-x to the order kept
    u = sp.Symbol("u", positive=True)  # u = 1/x; 1/t_k = u/(1 + c_k u - n_k u/t_{k+1}), as power series in u
    depth, N = 8, terms + 1

    def trunc(e):
        return sum(sp.expand(e).coeff(u, j) * u**j for j in range(N + 1))

    def inverse(g):  # 1/(1 + g) for g = O(u), truncated
        out, power = 1, 1
        for _ in range(N + 1):
            power = trunc(-power * g)
            out += power
        return trunc(out)

    f = trunc(u * inverse((2 * depth + Rational(3, 2)) * u))
    for k in range(depth, 0, -1):
        f = trunc(u * inverse((2 * (k - 1) + Rational(3, 2)) * u - k * (k + Rational(1, 2)) * u * f))
    cf_series = sum(f.coeff(u, j) * u**j for j in range(terms + 1))
    assert [sp.expand(asym * x).coeff(x, -k) for k in range(3)] == [1, -Rational(3, 2), Rational(15, 4)]
    late = _module("grokclocks.linear._late")
    xs = np.geomspace(1.0, 1e6, 40)
    got = late._log_erfc_bracket(xs)
    worst = 0.0
    with mpmath.workdps(40):
        for xv, g in zip(xs, got):
            xm = mpmath.mpf(float(xv))
            ref = mpmath.log(mpmath.exp(xm) * mpmath.sqrt(xm) * mpmath.gammainc(-0.5, xm) / (2 * mpmath.sqrt(mpmath.pi)))
            worst = max(worst, abs(float(g) - float(ref)) / abs(float(ref)))
    assert worst <= 4e-16 * 10, worst


# ------------------------------------------------------------------ clocks: the large-margin branch


def test_log_binary_pl_ratio_large_margin_series():
    """clocks.log_binary_pl_ratio beyond m = 36 uses log r = -m - 2 log1p(e^-m) + e^-m/2.  Derived: with
    l(m) = log(1 + e^-m), q = e^-m, log(l'^2/l) = -m - 2 log(1 + q) + q/2 - 5 q^2/24 + O(q^3): the code keeps the
    terms to q, and the first omitted one, 5 q^2/24 <= 1.2e-32 at m = 36, is below double precision of log r.
    Values at m in [37, 700] agree with mpmath (50 digits beyond e^-m) to 2e-16 relative."""
    m, q = sp.Symbol("m", positive=True), sp.Symbol("q", positive=True)
    ratio = formula("clocks:lem3.3/log")
    mm = [x for x in ratio.free_symbols][0]
    expr = ratio.subs(mm, m).subs(m, -sp.log(q))
    series = sp.series(sp.expand_log(expr, force=True) - sp.log(q), q, 0, 3).removeO()  # log r = -m + ...
    code = -2 * sp.log(1 + q) + q / 2
    diff = sp.series(series - code, q, 0, 3).removeO()
    assert sp.simplify(diff + Rational(5, 24) * q**2) == 0
    assert float((Rational(5, 24) * q**2).subs(q, sp.exp(-36))) < 2e-32
    fn = _module("grokclocks.clocks").log_binary_pl_ratio
    f = sp.lambdify(mm, ratio, "mpmath")
    worst = 0.0
    for mv in (37.0, 50.0, 120.0, 700.0):
        with mpmath.workdps(int(mv / 2.3) + 50):  # 1 + e^-m must not round to 1
            worst = max(worst, abs(fn(mv) - float(f(mpmath.mpf(mv)))) / mv)
    assert worst <= 2e-16, worst


# ------------------------------------------------------------------ linear: small accuracies


def test_accuracy_small_x_series():
    """linear.accuracy_from_loss for accuracies below 1e-280 sums P(a, x) = x^a e^-x/Gamma(a+1) sum_k x^k/((a+1)...
    (a+k)).  Derived: it equals the term-by-term integral of the regularised lower incomplete gamma,
    int_0^x t^(a-1) e^-t dt/Gamma(a) = sum_n (-1)^n x^(a+n)/(n! (a+n) Gamma(a)), coefficient by coefficient to
    x^(a+8) for a symbolic a; the code's values there (P ~ 1e-290) agree with mpmath's regularised gammainc
    (60 digits) to |log P| x 2.5e-16, the conditioning of exp at |log P| ~ 670 (measured 2e-14 .. 9e-14)."""
    a = sp.Symbol("a", positive=True)
    order = 9
    for n in range(order):  # coefficient of x^(a+n), both sides times Gamma(a+1) = a Gamma(a)
        code = sum((-1) ** j / sp.factorial(j) / sp.rf(a + 1, n - j) for j in range(n + 1))
        integral = (-1) ** n * a / (sp.factorial(n) * (a + n))
        assert sp.cancel(sp.expand_func(code - integral)) == 0, n
    acc = _module("grokclocks.linear").accuracy_from_loss
    with mpmath.workdps(60):
        for d_out, eps, L in ((37, 1e-16, 1.0), (101, 7e-7, 1.0), (61, 8e-11, 1.0)):  # P ~ 1e-290
            got = acc(L, eps, d_out)
            xa = mpmath.mpf(d_out) / 2 * mpmath.mpf(eps) / mpmath.mpf(L)
            ref = mpmath.gammainc(mpmath.mpf(d_out) / 2, 0, xa, regularized=True)
            assert 0 < got < 1e-280, (d_out, got)
            # P = exp(y), y ~ -670 formed in float64 (a log x - gammaln(a + 1)): its rounding, ~|y| eps, is the
            # conditioning of any float64 evaluation of so small a number (measured 2e-14 .. 9e-14)
            assert abs(got - float(ref)) / float(ref) <= 2.5e-16 * abs(float(mpmath.log(ref))), (d_out, got)


# ------------------------------------------------------------------ clocks: the theta -> 1/2 limit


def test_kl_solution_near_theta_one_half():
    """The KL gap solution tends to the PL exponential as theta -> 1/2 (sympy limit: grokclocks'
    kl_gap_solution_pl); its first-order form in e = 2 theta - 1, Delta_0 e^{-a tau}(1 - e (a tau)^2/2
    + e a tau log Delta_0 ... ) derived by series, matches clocks.kl_gap_solution at theta - 1/2 = 1e-8 to 1e-12
    relative (the code's expm1/log1p branch, checked against mpmath at 50 digits) and the derived form to its
    O(e^2 (a tau)^4) remainder."""
    sol = formula("clocks:thm4.9")
    syms = {str(x): x for x in sol.free_symbols}
    th, a_, tau, D0 = syms["theta"], syms["a"], syms["t"], syms["Delta_0"]
    e = sp.Symbol("e", positive=True)
    expr = sol.subs({syms["t_0"]: 0}).subs(th, (1 + e) / 2)
    pl = formula("clocks:thm4.9/pl").subs({[x for x in formula("clocks:thm4.9/pl").free_symbols
                                            if str(x) == "t_0"][0]: 0})
    assert sp.simplify(sp.limit(expr, e, 0) - pl.subs({x: {"a": a_, "t": tau, "Delta_0": D0}[str(x)]
                                                        for x in pl.free_symbols})) == 0
    first = sp.series(sp.log(expr), e, 0, 2).removeO()
    fn = _module("grokclocks.clocks").kl_gap_solution
    for aval, tval, d0 in ((1.0, 20.0, 0.5), (2.0, 3.0, 3.0)):
        ev = 2e-8
        approx = float(sp.exp(first.subs({a_: aval, tau: tval, D0: d0, e: ev})))
        got = fn(tval, d0, aval, 0.5 + ev / 2)
        with mpmath.workdps(50):
            exact = float((mpmath.mpf(d0) ** (-mpmath.mpf(ev)) + aval * ev * tval) ** (-1 / mpmath.mpf(ev)))
        assert abs(got / exact - 1) <= 1e-12, (got, exact)
        assert abs(approx / exact - 1) <= 1e-9  # the derived first-order form: O(e^2 (a tau)^4) ~ 1e-10 here


# ------------------------------------------------------------------ kramers: the first-order Laplace correction


def _laplace_correction(F2, F3, F4, T):
    """int exp(-(F2 x^2/2 + F3 x^3/6 + F4 x^4/24)/T) dx / sqrt(2 pi T/F2) to first order in T (x = sqrt(T) y,
    expansion in sqrt(T), Gaussian moments)."""
    y, r = sp.Symbol("y", real=True), sp.Symbol("r", positive=True)  # r = sqrt(T)
    cubic, quartic = F3 * r * y**3 / 6, F4 * r**2 * y**4 / 24
    expansion = sp.series(sp.exp(-cubic - quartic), r, 0, 3).removeO()
    gauss = sp.exp(-F2 * y**2 / 2)
    val = sp.integrate(sp.expand(expansion) * gauss, (y, -sp.oo, sp.oo)) / sp.sqrt(2 * sp.pi / F2)
    return sp.simplify(sp.series(val, r, 0, 3).removeO()).subs(r, sp.sqrt(T))


def test_kramers_first_order_correction_is_derived_by_laplace():
    """kramers.kramers_ratio_first_order_estimate = 1 + T[5F'''(m)^2/(24F''(m)^3) - F''''(m)/(8F''(m)^2) +
    F''''(s)/(8F''(s)^2) + 5F'''(s)^2/(24|F''(s)|^3)]: derived by Laplace's method to first order in T on the
    exact 1-d MFPT's two integrals (inner at the minimum, e^{-F/T}; outer at the saddle, e^{+F/T}, i.e. the
    same integral with F -> -F); for F = h(x^2 - 1)^2 it is 1 + 3T/(8h)."""
    T = sp.Symbol("T", positive=True)
    k2, k3, k4 = sp.symbols("k2 k3 k4", positive=True)
    c2, c3, c4 = sp.symbols("c2 c3 c4", real=True)
    c2n = sp.Symbol("c2n", positive=True)  # F''(s) = c2 = -c2n < 0
    inner = _laplace_correction(k2, k3, k4, T)  # minimum: F'' = k2 > 0
    outer = _laplace_correction(c2n, -c3, -c4, T)  # saddle: e^{+F/T} = e^{-(-F)/T}, -F = c2n x^2/2 - c3 x^3/6 - ...
    derived = sp.expand(sp.series(inner * outer, T, 0, 2).removeO())
    ours = formula("kramers:eyring-1d/correction")
    syms = {str(x): x for x in ours.free_symbols}
    ours = ours.subs({syms["kappa_m"]: k2, syms["F3_m"]: k3, syms["F4_m"]: k4, syms["kappa_s"]: c2,
                      syms["F3_s"]: c3, syms["F4_s"]: c4, syms["T"]: T})
    assert sp.simplify(derived - ours.subs(c2, -c2n)) == 0
    h, x = sp.Symbol("h", positive=True), sp.Symbol("x", real=True)
    F = h * (x**2 - 1) ** 2
    dm = [sp.diff(F, x, k).subs(x, 1) for k in (2, 3, 4)]
    ds = [sp.diff(F, x, k).subs(x, 0) for k in (2, 3, 4)]
    dw = ours.subs({k2: dm[0], k3: dm[1], k4: dm[2], c2: ds[0], c3: ds[1], c4: ds[2]})
    assert sp.simplify(dw - (1 + Rational(3, 8) * T / h)) == 0
