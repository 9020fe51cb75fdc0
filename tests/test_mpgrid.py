"""Accuracy proof of the vectorised MP quadrature and crossing-time engine (grokclocks._mpgrid).

References used here (independent of the engine):
* mpmath (30 digits) tanh-sinh quadrature of the literal eq. 14 integrand in v = sqrt(nu - lam_-),
  split at the scales lam_-, gamma/2 and 1/s (spec levi:mp-quad, levi:eq14);
* scipy QAWS (`quad(weight='alg')`), the method the spec recommends (levi:mp-quad);
* the gamma = 0 closed forms: Bessel form of E[nu e^{-s nu}] (levi:eq19) and the Bessel + Marcum-Q
  form of E[e^{-s nu}] (levi:gen-closed);
* the spec's tables T1, T3, T4, T5(b) (§8) and the exact t*_gen(lam = 1) = 4/(pi eta0 eps^2) (levi:eq11-lim).

Measured on this machine (numbers behind every tolerance; see also benchmarks/accuracy_mpgrid.py):
* decaying part log D vs mpmath: max |error| 2.3e-13 over 1056 points (lam 0.05..3 incl. 0.99, 0.999, 1,
  1.001, 1.01; gamma/2 in {0, 1e-4, 1e-3, 0.015}; s in 1e-3..1e7);
* asymptote (Stieltjes closed form) vs mpmath: max rel 4.4e-16;
* crossing times vs mpmath: implied rel error <= 3.1e-15 (see test below);
* vs QAWS + brentq: <= 3e-13 away from lam = 1, 1.8e-10 at lam = 1 + 2e-6 where mpmath confirms the
  engine and QAWS warns about round-off.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from grokclocks import DomainError
from grokclocks._mpgrid import (
    _LADDER,
    _asymptote,
    _decay,
    _rule01,
    crossing_time_grid,
    log_wd_loss_grid,
    loss_threshold_grid,
    mp_decay_grid,
    wd_asymptote_grid,
    wd_loss_grid,
)
from grokclocks.linear import ERF_SQRT2, grok_time_grid

ETA0 = 0.01


# ----------------------------------------------------------------------------- mpmath references


def _mp_edges(lam):
    sl = mp.sqrt(lam)
    return ((1 - lam) / (1 + sl)) ** 2, 4 * sl


def _mp_breaks(lm, w, scales, dps):
    v_max = mp.sqrt(w)
    pts = [mp.mpf(0)]
    for sc in sorted(scales):
        for k in (1, 10):
            x = mp.sqrt(sc * k)
            if 0 < x < v_max and all(abs(x - p) > mp.mpf(10) ** (-dps // 2) for p in pts):
                pts.append(x)
    return sorted(pts) + [v_max]


def mp_log_decay(s, lam, g, gen, dps=30):
    """log D(s), D = L1(s) - L1(inf), eq. 14 with the square expanded only as R = g/(nu+g) + e.

    Integrand scaled by exp(s kappa), kappa = lowest decay rate, because mpmath's quad stops on an
    absolute error estimate.  Variable v = sqrt(nu - lam_-) removes the edge square root.
    """
    old = mp.mp.dps
    mp.mp.dps = dps
    try:
        s, lam, g = mp.mpf(s), mp.mpf(lam), mp.mpf(g)
        lm, w = _mp_edges(lam)
        kappa = (lm + g) / 2 if g > 0 else lm

        def f(nu):
            q = mp.mpf(1) if gen else nu
            if g == 0:
                return q * mp.exp(-s * (nu - lm))
            x = mp.exp(-s * (nu + g) / 2 + s * kappa)
            r = nu / (nu + g)
            return q * ((x * x + (x * r) ** 2) * mp.exp(-s * kappa) + 2 * x * r * g / (nu + g)) / 2

        def integrand(v):
            nu = lm + v * v
            return 2 * v * v * mp.sqrt(max(w - v * v, 0)) / (2 * mp.pi * lam * nu) * f(nu)

        scales = [x for x in (lm, g, 1 / s, 10 / s, 40 / s, 100 / s) if x > 0]
        val = mp.log(mp.quad(integrand, _mp_breaks(lm, w, scales, dps))) - s * kappa
        if lam > 1 and gen and g > 0:
            val = mp.log(mp.exp(val) + (1 - 1 / lam) * mp.exp(-s * g) / 2)
        return val
    finally:
        mp.mp.dps = old


def mp_asymptote(lam, g, gen, dps=30):
    """(g^2/2) E[q/(nu+g)^2] with the atom, mpmath quadrature."""
    old = mp.mp.dps
    mp.mp.dps = dps
    try:
        lam, g = mp.mpf(lam), mp.mpf(g)
        lm, w = _mp_edges(lam)

        def integrand(v):
            nu = lm + v * v
            q = mp.mpf(1) if gen else nu
            return 2 * v * v * mp.sqrt(max(w - v * v, 0)) / (2 * mp.pi * lam * nu) * q * g * g / (nu + g) ** 2 / 2

        val = mp.quad(integrand, _mp_breaks(lm, w, [x for x in (lm, g) if x > 0], dps))
        if lam > 1 and gen:
            val += (1 - 1 / lam) / 2
        return val
    finally:
        mp.mp.dps = old


# ----------------------------------------------------------------------------- QAWS reference


def qaws_loss(s, lam, g, gen):
    """Full eq. 14 loss L1(s) (d_out = 1) by scipy QAWS (levi:mp-quad), plus the atom."""
    lm = ((1 - lam) / (1 + math.sqrt(lam))) ** 2
    lp = (1 + math.sqrt(lam)) ** 2
    scale = s * lm if g == 0 else 0.0

    def f(nu):
        q = 1.0 if gen else nu
        ratio = 1.0 if nu + g == 0 else (math.exp(-s * (nu + g) / 2) * nu + g) / (nu + g)
        return q * (math.exp(-s * (nu + g) + scale) + ratio * ratio * math.exp(scale)) / 2

    if lam == 1.0:
        val = integrate.quad(lambda nu: f(nu) / (2 * math.pi), 0.0, 4.0, weight="alg", wvar=(-0.5, 0.5),
                             epsabs=0, epsrel=1e-13, limit=200)[0]
    else:
        val = integrate.quad(lambda nu: f(nu) / (2 * math.pi * lam * nu), lm, lp, weight="alg",
                             wvar=(0.5, 0.5), epsabs=0, epsrel=1e-13, limit=200)[0]
    val *= math.exp(-scale)
    if gen and lam > 1:
        val += (1 - 1 / lam) * (math.exp(-s * g) + 1) / 2 if g > 0 else (1 - 1 / lam)
    return val


# ----------------------------------------------------------------------------- the rules


@pytest.mark.parametrize("alpha,beta", [(0.5, 0.0), (0.5, 0.5), (-0.5, 0.0), (-0.5, 0.5)])
@pytest.mark.parametrize("n", [_LADDER[0], _LADDER[3], _LADDER[-1]])
def test_reference_rules_integrate_monomials(alpha, beta, n):
    x, xm, w = _rule01(n, alpha, beta)
    assert np.all((x > 0) & (x < 1)) and np.allclose(x + xm, 1, rtol=0, atol=4.5e-16)  # two roundings
    for k in range(6):
        exact = float(mp.beta(alpha + 1 + k, beta + 1))
        # measured: worst 5.6e-13 over the whole ladder (k <= 5)
        assert abs((w * x**k).sum() / exact - 1) < 1e-12


# ----------------------------------------------------------------------------- closed-form asymptote


@pytest.mark.parametrize("lam", [0.05, 0.3, 0.99, 1.0, 1.001, 1.5, 3.0])
@pytest.mark.parametrize("g", [1e-8, 5e-4, 1e-2, 0.5])
@pytest.mark.parametrize("gen", [False, True])
def test_asymptote_matches_mpmath(lam, g, gen):
    got = float(_asymptote(np.array(lam), np.array(g), gen))
    ref = float(mp_asymptote(lam, g, gen))
    assert got == pytest.approx(ref, rel=1e-14)  # measured max 4.4e-16


def test_asymptote_small_gamma_limits_levi_eq15():
    # corrected small-gamma forms: gamma^2/(8(1-lam)), gamma^2/(8(1-lam)^3) (spec erratum 1)
    gamma = 1e-5
    tr, gen = wd_asymptote_grid(0.3, gamma, which="train"), wd_asymptote_grid(0.3, gamma)
    assert tr == pytest.approx(gamma**2 / (8 * 0.7), rel=1e-4)
    assert gen == pytest.approx(gamma**2 / (8 * 0.7**3), rel=1e-4)
    assert wd_asymptote_grid(1.5, 1e-5) == pytest.approx((1 - 1 / 1.5) / 2, rel=1e-4)
    assert wd_asymptote_grid(1.5, 0.0) == pytest.approx(1 - 1 / 1.5, rel=1e-15)
    assert wd_asymptote_grid(0.5, 0.0, d_out=5) == 0.0


# ----------------------------------------------------------------------------- the quadrature


LAMS_NEAR_ONE = [0.5, 0.99, 0.999, 1.0, 1.001, 1.01, 1.5]
S_VALUES = [0.01, 30.0, 1e4, 1e7]


@pytest.mark.parametrize("lam", LAMS_NEAR_ONE)
@pytest.mark.parametrize("gamma", [0.0, 1e-3, 2e-2])
def test_decay_matches_mpmath(lam, gamma):
    g = gamma / 2
    for gen in (False, True):
        lD, _ = _decay(np.array(S_VALUES), np.full(len(S_VALUES), lam), np.full(len(S_VALUES), g), gen)
        for s, got in zip(S_VALUES, lD):
            ref = float(mp_log_decay(s, lam, g, gen))
            # |log error| = relative error of D; where log D < -700 (D not representable) the error of
            # the log relative to |log D| (float rounding of s*lam_-).  Measured max 2.3e-13.
            err = abs(got - ref) / (abs(ref) if abs(ref) > 700 else 1.0)
            assert err < 1e-11, (lam, gamma, s, gen, got, ref)


@pytest.mark.parametrize("lam", [0.3, 0.9, 0.99, 1.0, 1.2])
@pytest.mark.parametrize("gamma", [0.0, 1e-3, 2e-2])
def test_full_loss_matches_qaws(lam, gamma):
    ts = np.array([0.0, 10.0, 300.0, 3000.0, 30000.0])
    for which, gen in (("train", False), ("gen", True)):
        got = wd_loss_grid(ts, lam, gamma, ETA0, which=which)
        ref = np.array([qaws_loss(4 * ETA0 * t, lam, gamma / 2, gen) for t in ts])
        # QAWS reaches ~1e-13 here; measured max rel difference 1.1e-13
        np.testing.assert_allclose(got, ref, rtol=1e-11)


def test_gamma0_matches_closed_forms_levi_eq19_gen_closed():
    s = np.array([1e-3, 0.5, 10.0, 100.0, 1000.0])
    for lam in (0.05, 0.3, 0.9, 0.99, 1.0, 1.5, 4.0):
        # train: Phi1 = exp(-s lam_-) ive(1, 2 s sqrt(lam)) / (s sqrt(lam))
        lm = (1 - math.sqrt(lam)) ** 2
        z = 2 * s * math.sqrt(lam)
        log_phi1 = -s * lm + np.log(special.ive(1, z) / (s * math.sqrt(lam)))
        got = log_wd_loss_grid(s / (4 * ETA0), lam, 0.0, ETA0, which="train")
        np.testing.assert_allclose(got, log_phi1, rtol=0, atol=1e-12)  # measured 1.1e-13
        # gen: Bessel + Marcum-Q form, accurate where s (1 - sqrt(lam))^2 <= 50 (spec)
        ok = s * lm <= 50
        phi0 = np.exp(-s * lm) * (special.ive(0, z) + special.ive(1, z) / math.sqrt(lam)) + (1 - 1 / lam) * (
            stats.ncx2.cdf(2 * lam * s, 2, 2 * s)
        )
        got = wd_loss_grid(s[ok] / (4 * ETA0), lam, 0.0, ETA0, which="gen")
        np.testing.assert_allclose(got, phi0[ok], rtol=1e-11)  # measured 5.0e-13 (closed form's own error)


def test_slope_matches_finite_difference():
    s = np.array([0.1, 30.0, 3e3, 3e5])
    for lam, g in ((0.5, 0.0), (0.999, 5e-4), (1.0, 1e-2), (1.3, 1e-3)):
        for gen in (False, True):
            lam_a, g_a = np.full(s.size, lam), np.full(s.size, g)
            _, slope = _decay(s, lam_a, g_a, gen)
            h = 1e-5
            up, _ = _decay(s * math.exp(h), lam_a, g_a, gen)
            dn, _ = _decay(s * math.exp(-h), lam_a, g_a, gen)
            fd = (up - dn) / (2 * h)
            np.testing.assert_allclose(slope, fd, rtol=1e-7, atol=1e-7)  # central difference O(h^2) + noise


def test_mp_decay_grid_public_wrapper():
    lD, sl = mp_decay_grid(30.0, 0.5, 0.0, which="gen")
    assert isinstance(lD, float) and isinstance(sl, float)
    assert lD == pytest.approx(float(mp_log_decay(30.0, 0.5, 0.0, True)), abs=1e-12)


# ----------------------------------------------------------------------------- crossing times


CROSS_CASES = [  # (lam, gamma, level)
    (0.05, 0.0, 0.95), (0.5, 0.0, ERF_SQRT2), (0.5, 2e-2, 0.95), (0.99, 0.0, ERF_SQRT2),
    (0.999, 1e-3, ERF_SQRT2), (1.0, 0.0, ERF_SQRT2), (1.0, 1e-3, 0.95), (1.01, 0.0, 0.95), (1.2, 2e-2, 0.95),
]


@pytest.mark.parametrize("lam,gamma,level", CROSS_CASES)
def test_crossing_times_match_mpmath(lam, gamma, level):
    eps = 1e-3
    t_tr, t_gen, _ = grok_time_grid(lam, gamma, eps, ETA0, level=level)
    lstar = loss_threshold_grid(eps, level=level)
    for t, gen in ((t_tr, False), (t_gen, True)):
        linf = mp_asymptote(lam, gamma / 2, gen) if gamma > 0 else mp.mpf((1 - 1 / lam) if (gen and lam > 1) else 0)
        if not math.isfinite(t):
            assert linf >= lstar
            continue
        s = 4 * ETA0 * t
        G = mp_log_decay(s, lam, gamma / 2, gen) - mp.log(mp.mpf(lstar) - linf)
        _, slope = mp_decay_grid(s, lam, gamma, which="gen" if gen else "train")
        implied = abs(float(G) / slope)  # one Newton step of the exact equation: rel. error of t
        assert implied < 1e-10, (lam, gamma, gen, implied)  # measured max 3.1e-15


def test_crossing_times_match_qaws_brentq():
    # the spec's method end to end (levi:tstar): QAWS losses, doubling bracket, brentq on the log
    from scipy.optimize import brentq

    for lam, gamma in ((0.3, 0.0), (0.7, 1e-3), (0.9, 0.0), (1.1, 0.0), (0.5, 1e-2)):
        lstar = 1e-3 / 4
        for which, gen in (("train", False), ("gen", True)):
            got = crossing_time_grid(which, lam, gamma, 1e-3, ETA0)
            if not math.isfinite(got):
                continue

            def F(t, gen=gen):
                return math.log(qaws_loss(4 * ETA0 * t, lam, gamma / 2, gen)) - math.log(lstar)

            lo, hi = 0.0, 1.0
            while F(hi) > 0:
                lo, hi = hi, 2 * hi
            ref = brentq(F, lo, hi, rtol=1e-13, xtol=1e-300)
            assert got == pytest.approx(ref, rel=1e-10)  # measured max 2.1e-14


def test_table_T4_levi_fig3():
    lam = np.array([0.3, 0.5, 0.7, 0.9, 1.5])
    gam = np.array([0.0, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1])
    t_tr, t_gen, dt = grok_time_grid(lam[None, :], gam[:, None], 1e-3, ETA0)
    inf = math.inf
    T4_tr = [[441, 725, 1290, 2408, 776], [441, 725, 1290, 2408, 776], [442, 727, 1293, 2404, 777],
             [445, 733, 1304, 2408, 781], [459, 763, 1377, 2589, 802], [575, 1156, inf, inf, 988],
             [inf] * 5]
    T4_gen = [[561, 1156, 3139, 22890, inf], [561, 1157, 3144, 23067, inf], [564, 1166, 3199, 27608, inf],
              [570, 1190, 3398, inf, inf], [602, 1359, inf, inf, inf], [inf] * 5, [inf] * 5]
    T4_dt = [[120, 431, 1849, 20481, inf], [120, 432, 1854, 20660, inf], [121, 439, 1906, 25204, inf],
             [125, 457, 2094, inf, inf], [142, 596, inf, inf, inf], [inf, inf, math.nan, math.nan, inf],
             [math.nan] * 5]
    for got, table in ((t_tr, T4_tr), (t_gen, T4_gen), (dt, T4_dt)):
        table = np.array(table, dtype=float)
        fin = np.isfinite(table)
        assert np.array_equal(np.isfinite(got), fin)
        assert np.array_equal(np.isnan(got), np.isnan(table))
        # the table is rounded to integers; Delta t = difference of rounded-in-spec values may be off by 1
        assert np.all(np.abs(got[fin] - table[fin]) <= 1.0)
    # spec levi:eq15-dt: lam = 0.5, Delta t = 431, 439, 457, 596, inf for gamma = 0, 1e-3, 3e-3, 1e-2, 3e-2
    assert np.round(grok_time_grid(0.5, [0, 1e-3, 3e-3, 1e-2], 1e-3, ETA0)[2]).tolist() == [431, 439, 457, 596]


def test_table_T5b_levi_fig7():
    lam = np.array([0.1, 0.3, 0.5, 0.7, 0.9, 1.2])
    gam = np.array([0.0, 1e-3, 1e-2, 3e-2])
    _, _, dt = grok_time_grid(lam[None, :], gam[:, None], 1e-3, ETA0, level=0.95)
    n = math.nan
    inf = math.inf
    T5b = np.array([[23, 120, 430, 1840, 20281, inf], [23, 121, 437, 1895, 24724, inf],
                    [26, 141, 587, inf, inf, inf], [45, inf, inf, n, n, n]])
    # "none" in the spec = gen never reaches the level: inf when train still crosses, NaN when neither does
    assert np.array_equal(np.isnan(dt), np.isnan(T5b)) and np.array_equal(np.isinf(dt), np.isinf(T5b))
    fin = np.isfinite(T5b)
    assert np.all(np.abs(dt[fin] - T5b[fin]) <= 0.5 + 1e-9)


def test_table_T1_and_T3_and_critical_lambda_one():
    # T1 (gamma = 0, level erf sqrt 2): eps = 1e-3 columns
    t_tr, t_gen, dt = grok_time_grid([0.1, 0.5, 0.9, 0.99], 0.0, 1e-3, ETA0)
    np.testing.assert_allclose(np.round(t_tr), [273, 725, 2408, 2715])
    np.testing.assert_allclose(np.round(t_gen), [296, 1156, 22890, 1002291])
    # levi:eq11-lim: t*_gen(lam = 1) = 1/(4 pi eta0 L*^2) = 4/(pi eta0 eps^2) asymptotically; spec's root 1.2732395e8
    assert grok_time_grid(1.0, 0.0, 1e-3, ETA0)[1] == pytest.approx(4 / (math.pi * ETA0 * 1e-6), rel=1e-7)
    # T3 (level 0.95, d_out): lam = 0.5
    t_tr, t_gen, dt = grok_time_grid(0.5, 0.0, 1e-3, ETA0, d_out=np.array([1, 5, 100, 1000, 1500]), level=0.95)
    np.testing.assert_allclose(np.round(t_tr[:4]), [718, 1862, 6487, 1210])
    np.testing.assert_allclose(np.round(t_gen[:4]), [1147, 3488, 14471, 1834])
    assert t_tr[4] == t_gen[4] == dt[4] == 0.0  # 1/d_out <= L*: both accurate at t = 0


def test_conventions_zero_inf_nan():
    t_tr, t_gen, dt = grok_time_grid(1.5, 0.0, 1e-3, ETA0)
    assert math.isfinite(t_tr) and t_gen == math.inf and dt == math.inf
    t_tr, t_gen, dt = grok_time_grid(0.5, 0.1, 1e-3, ETA0)
    assert t_tr == t_gen == math.inf and math.isnan(dt)
    assert grok_time_grid(0.5, 0.0, 10.0, ETA0) == (0.0, 0.0, 0.0)  # L(0) = 1 <= L* = 2.5


def test_broadcasting_shapes_and_scalars():
    lam = np.linspace(0.1, 1.2, 7)[None, :]
    gam = np.linspace(0, 0.03, 5)[:, None]
    out = grok_time_grid(lam, gam, 1e-3, ETA0, level=0.95)
    assert all(o.shape == (5, 7) for o in out)
    single = grok_time_grid(float(lam[0, 3]), float(gam[2, 0]), 1e-3, ETA0, level=0.95)
    assert all(isinstance(v, float) for v in single)
    np.testing.assert_array_equal([o[2, 3] for o in out], single)
    # d_out rule (levi:eq12-loss): L^(d)(eta0) = L^(1)(eta0/d)/d
    assert wd_loss_grid(500.0, 0.4, 1e-3, ETA0, d_out=5) == pytest.approx(
        wd_loss_grid(500.0, 0.4, 1e-3, ETA0 / 5) / 5, rel=1e-14)
    assert loss_threshold_grid(1e-3) == pytest.approx(1e-3 / 4, rel=1e-14)  # levi:lstar
    assert loss_threshold_grid(1e-3, d_out=5) == pytest.approx(0.441936e-3, rel=1e-5)


@settings(max_examples=40, deadline=None)
@given(
    lam=st.floats(0.01, 5.0),
    gamma=st.one_of(st.just(0.0), st.floats(1e-6, 0.05)),
    eps=st.floats(1e-6, 0.1),
    d_out=st.sampled_from([1, 2, 5, 30]),
    level=st.floats(0.5, 0.99),
)
def test_round_trip_loss_at_crossing_equals_threshold(lam, gamma, eps, d_out, level):
    t_tr, t_gen, dt = grok_time_grid(lam, gamma, eps, ETA0, d_out=d_out, level=level)
    lstar = loss_threshold_grid(eps, d_out=d_out, level=level)
    for t, which in ((t_tr, "train"), (t_gen, "gen")):
        if t == 0.0:
            assert 1.0 / d_out <= lstar
        elif math.isinf(t):
            assert wd_asymptote_grid(lam, gamma, d_out=d_out, which=which) >= lstar
        else:
            assert log_wd_loss_grid(t, lam, gamma, ETA0, d_out=d_out, which=which) == pytest.approx(
                math.log(lstar), abs=1e-12)
    if math.isfinite(t_tr) and math.isfinite(t_gen):
        assert dt == pytest.approx(t_gen - t_tr)


# ----------------------------------------------------------------------------- domain errors


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(lam=0.0), "lam must be > 0"),
        (dict(lam=-1.0), "lam must be > 0"),
        (dict(lam=math.nan), "lam must be finite"),
        (dict(gamma=-1e-3), "gamma must be >= 0"),
        (dict(eps=0.0), "eps must be > 0"),
        (dict(eta0=-0.01), "eta0 must be > 0"),
        (dict(d_out=0), "d_out must be > 0"),
        (dict(level=1.0), "level must be in"),
        (dict(level=0.0), "level must be in"),
        (dict(lam=[]), "lam must not be empty"),
    ],
)
def test_domain_errors(kwargs, match):
    args = dict(lam=0.5, gamma=0.0, eps=1e-3, eta0=ETA0)
    args.update(kwargs)
    lam, gamma, eps, eta0 = (args.pop(k) for k in ("lam", "gamma", "eps", "eta0"))
    with pytest.raises(DomainError, match=match):
        grok_time_grid(lam, gamma, eps, eta0, **args)


def test_domain_errors_losses():
    with pytest.raises(DomainError, match="t must be >= 0"):
        wd_loss_grid(-1.0, 0.5, 0.0, ETA0)
    with pytest.raises(DomainError, match="which must be one of"):
        wd_loss_grid(1.0, 0.5, 0.0, ETA0, which="test")
    with pytest.raises(DomainError, match="which must be one of"):
        crossing_time_grid("both", 0.5, 0.0, 1e-3, ETA0)
    with pytest.raises(DomainError, match="s must be >= 0"):
        mp_decay_grid(-1.0, 0.5, 0.0)


def test_smallest_weight_decay_is_refused_and_a_crossing_beyond_range_is_said():
    """gamma = 5e-324: gamma/2 rounded to 0 inside the grid engine, a positive weight decay read as none
    (wd_asymptote_grid(2, 5e-324) returned the gamma = 0 value 0.5; 0.25 for every gamma > 0), as linear
    already refused; gamma = 1e-323: Newton never reached the crossing beyond s = e^709 and raised
    RuntimeError, where gamma = 1e-310 gives the DomainError below (review findings)."""
    from grokclocks import DomainError, _mpgrid

    with pytest.raises(DomainError, match="gamma must be 0 or >= 1e-323"):
        _mpgrid.wd_asymptote_grid(2.0, 5e-324)
    with pytest.raises(DomainError, match="gamma must be 0 or >= 1e-323"):
        _mpgrid.wd_asymptote_grid(2.0, [1e-3, 5e-324])
    assert _mpgrid.wd_asymptote_grid(2.0, 1e-323) == pytest.approx(0.25, rel=1e-15)
    with pytest.raises(DomainError, match="beyond the double range"), np.errstate(over="ignore"):
        _mpgrid.crossing_time_grid("gen", 2.0, 1e-323, 1.5, 0.1)


@pytest.mark.parametrize("gen", [False, True])
def test_rule_sums_do_not_depend_on_the_other_points(gen):
    """The regular rule's sums (blocks laid out nodes x points, each sum over the nodes accumulated a node row at a
    time) give every point the same bits whether it is evaluated alone, in a small batch or among 5000 points
    of mixed rule sizes: a lone point is laid out twice because numpy reduces a one-column block pairwise."""
    from grokclocks._mpgrid._rule import _decay_regular

    rng = np.random.default_rng(7)
    n = 5000
    s = 10.0 ** rng.uniform(-3, 5, n)
    lam = 10.0 ** rng.uniform(-2, 1, n)
    g = np.where(rng.random(n) < 0.3, 0.0, 10.0 ** rng.uniform(-6, 0, n))
    la = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(-5, 5, n))
    all_d, all_s = _decay_regular(s, lam, g, gen, la)
    for idx in [*([int(i)] for i in rng.integers(0, n, 25)), list(rng.integers(0, n, 3)), list(range(0, n, 97))]:
        one_d, one_s = _decay_regular(s[idx], lam[idx], g[idx], gen, la[idx])
        assert np.array_equal(one_d, all_d[idx]) and np.array_equal(one_s, all_s[idx])
