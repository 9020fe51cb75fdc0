r"""Naive reference for the Fig. 7 phase diagram: one grid point at a time, scipy quad + brentq.

This is the straightforward implementation of spec ``levi:tstar`` with the exact weight-decay
losses of ``levi:eq14``: every loss value is one ``scipy.integrate.quad`` of the MP integral with
the algebraic end-point weight (QAWS, ``weight='alg'``, the method recommended by ``levi:mp-quad``),
and every crossing time is bracketed by doubling t from 1 and refined by ``scipy.optimize.brentq``
on the log-loss (``rtol=1e-12``).  Nothing is vectorised and nothing is shared between points.
It is the yardstick for ``grokclocks.linear.grok_time_grid`` (speed and agreement).
"""

from __future__ import annotations

import math

from scipy import integrate, optimize, special

LIMIT = 200


def _edges(lam: float) -> tuple[float, float]:
    sl = math.sqrt(lam)
    return ((1.0 - lam) / (1.0 + sl)) ** 2, (1.0 + sl) ** 2


def _qaws(f, lam: float, s_scale: float = 0.0) -> float:
    r"""Continuous part of :math:`\mathbb E_{\rm MP}[f(\nu)]` by QAWS.

    ``f`` must already contain the factor :math:`e^{+s\lambda_-}` when ``s_scale`` = s > 0 (scaled
    integrand, ``levi:mp-quad``); the result is the scaled expectation.  For |λ−1| < 1e-12 the
    1/ν merges with the square root: ``wvar=(-0.5, 0.5)`` on [0, 4].
    """
    lm, lp = _edges(lam)
    if abs(lam - 1.0) < 1e-12:
        val, _ = integrate.quad(lambda nu: f(nu) / (2 * math.pi * lam), 0.0, 4.0, weight="alg",
                                wvar=(-0.5, 0.5), epsabs=0.0, epsrel=1e-12, limit=LIMIT)
        return val
    val, _ = integrate.quad(lambda nu: f(nu) / (2 * math.pi * lam * nu), lm, lp, weight="alg",
                            wvar=(0.5, 0.5), epsabs=0.0, epsrel=1e-12, limit=LIMIT)
    return val


def loss(t: float, lam: float, gamma: float, eta0: float, which: str, d_out: float = 1.0) -> float:
    r"""Exact eq. 14 loss :math:`\mathcal L(t)` (eq. 8 at γ = 0) by one QAWS quadrature (+ the atom)."""
    g = gamma / 2.0
    s = 4.0 * eta0 * t / d_out
    lm, _ = _edges(lam)
    atom = max(1.0 - 1.0 / lam, 0.0)

    def integrand(nu: float, scale: float) -> float:
        q = nu if which == "train" else 1.0
        # eq. 14 ratio (e^{-s(nu+g)/2} nu + g)/(nu + g) (sum of positive terms), 1 where nu + g = 0
        ratio = 1.0 if nu + g == 0 else (math.exp(-s * (nu + g) / 2) * nu + g) / (nu + g)
        return q * (math.exp(-s * (nu + g) + scale) + ratio * ratio * math.exp(scale)) / 2.0

    if gamma == 0.0:  # purely decaying: scaled integrand, exp(-s lam_-) afterwards
        val = _qaws(lambda nu: integrand(nu, s * lm), lam) * math.exp(-s * lm)
    else:
        val = _qaws(lambda nu: integrand(nu, 0.0), lam)
    if which == "gen" and atom > 0:
        val += atom * integrand(0.0, 0.0)
    return val / d_out


def loss_infinity(lam: float, gamma: float, which: str, d_out: float = 1.0) -> float:
    """t -> infinity limit of eq. 14 by the same QAWS quadrature (constant term + atom)."""
    g = gamma / 2.0
    atom = max(1.0 - 1.0 / lam, 0.0)
    if gamma == 0.0:
        return (atom if which == "gen" else 0.0) / d_out

    def f(nu: float) -> float:
        q = nu if which == "train" else 1.0
        return q * (g / (nu + g)) ** 2 / 2.0

    val = _qaws(f, lam)
    if which == "gen":
        val += atom / 2.0
    return val / d_out


def t_star(lam: float, gamma: float, eps: float, eta0: float, which: str, d_out: float = 1.0,
           level: float = 0.9544997361036416) -> float:
    """Crossing time: conventions of levi:grok-def, bracket by doubling t from 1, then brentq."""
    Lstar = d_out * eps / (2.0 * special.gammaincinv(d_out / 2.0, level))
    if 1.0 / d_out <= Lstar:
        return 0.0
    if loss_infinity(lam, gamma, which, d_out) >= Lstar:
        return math.inf
    logL = math.log(Lstar)

    def F(t: float) -> float:
        return math.log(loss(t, lam, gamma, eta0, which, d_out)) - logL

    lo, hi = 0.0, 1.0
    while F(hi) > 0:
        lo, hi = hi, 2.0 * hi
    return optimize.brentq(F, lo, hi, xtol=1e-300, rtol=1e-12, maxiter=200)


def grok_time(lam: float, gamma: float, eps: float, eta0: float, d_out: float = 1.0,
              level: float = 0.9544997361036416) -> tuple[float, float, float]:
    """(t_tr, t_gen, dt) at one point, naive."""
    ttr = t_star(lam, gamma, eps, eta0, "train", d_out, level)
    tgen = t_star(lam, gamma, eps, eta0, "gen", d_out, level)
    dt = math.nan if (math.isinf(ttr) and math.isinf(tgen)) else tgen - ttr
    return ttr, tgen, dt


__all__ = ["loss", "loss_infinity", "t_star", "grok_time"]
