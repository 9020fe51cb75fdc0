r"""The fixed Gauss–Jacobi rule over the Marchenko–Pastur law: the one engine for the package's own MP integrals.

An expectation over the continuous part of the law, restricted to the lower part of the support where an
exponential factor lives, is a weighted sum over nodes that depend only on λ and on the truncation:

.. math::
    \mathbb E\big[f(\nu);\ \lambda_-<\nu<\lambda_-+w\,y_T\big]
    =\frac8\pi\int_0^{y_T}\frac{\sqrt{y(1-y)}}{\nu}\,f(\nu)\,dy
    \approx e^{\ell}\sum_k W_k\,f(\nu_k),\qquad \nu=\lambda_-+w\,y,\ w=4\sqrt\lambda,

for a whole array of points at once (:func:`mp_rule` returns the nodes and weights in blocks of points that
share a node count; a caller evaluates its integrand on a block's (points × nodes) array). The rule is
exact for the end-point behaviour by construction rather than by refinement:

* **the square-root edges** are the weight :math:`y^{1/2}(y_T-y)^{\beta}` of a Gauss–Jacobi rule
  (:math:`\beta=\tfrac12` for the whole support, :math:`y_T=1`; β = 0 for a truncated range);
* **the 1/ν near-pole** at :math:`y=-\delta`, :math:`\delta=\lambda_-/w` (close to the edge as λ → 1): where
  δ is below the range :math:`y_T` the map :math:`y=\delta(e^\tau-1)` sends it to :math:`\tau=-\infty`
  (:math:`dy/\nu=d\tau/w`), and the rule runs in τ with the weight :math:`\tau^{1/2}(\tau_T-\tau)^\beta`;
  otherwise the rule runs in y;
* **λ = 1 exactly** (δ = 0): the 1/ν merges with the weight, :math:`y^{-1/2}(y_T-y)^\beta`;
* **an exponential factor** :math:`e^{-\kappa(\nu-\lambda_-)}` of the integrand: the range is truncated at
  :math:`y_T=C/(\kappa w)` (:math:`C=40`, omitted part below :math:`e^{-40}` relative) when that is below
  1/2.

Node counts (``_n_tau``): 32 in y and at λ = 1, :math:`24+2\tau_T` in τ (rounded up to the ladder
:data:`_LADDER`), calibrated against the adaptive QAWS quadrature (`grokclocks.rmt.mp_log_expect_exp`,
spec ``levi:mp-quad``) and mpmath: relative error ≤ 2·10⁻¹⁵ for :math:`f=e^{-\kappa(\nu-\lambda_-)}` over
λ in [10⁻³⁰⁸, 10³⁰⁰], λ = 1 ± 10⁻¹⁶ and κ in [0, 1.8·10³⁰⁸] (``tests/test_rmt.py``). Integrands with more
structure than one exponential (a second pole, an oscillation) are proved against the adaptive rule by
their caller.
"""

from __future__ import annotations

import bisect
import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.special import betaln, roots_jacobi


_TRUNC = 40.0
_LADDER = (24, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384)
_N_Y = 32
_LOG_8_PI = math.log(8.0 / math.pi)
_LOG_2_PI = math.log(2.0 / math.pi)


class Block(NamedTuple):
    """Nodes and weights of the rule for the points ``sel`` (all with the same node count and mode)."""

    sel: np.ndarray
    """Indices of the block's points in the flat arrays given to `mp_rule`."""
    nu: np.ndarray
    """(points, nodes) eigenvalues ν at the nodes."""
    u: np.ndarray
    """(points, nodes) distances u = ν − λ₋ = w·y to the lower edge (exact where ν itself rounds)."""
    weight: np.ndarray
    """(points, nodes) positive weights (in units of ``exp(log_scale)``)."""
    log_scale: np.ndarray
    """(points,) logarithm of the common factor of the block's weights."""


def _jacobi_p(n: int, a: float, b: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Jacobi polynomials P_n^(a,b)(x) and P_(n-1)^(a,b)(x) by the three-term recurrence (n >= 1)."""
    p0, p1 = np.ones_like(x), 0.5 * ((a + b + 2.0) * x + (a - b))
    for k in range(2, n + 1):
        c = 2.0 * k + a + b
        p0, p1 = p1, (((c - 1.0) * (a * a - b * b) + (c - 1.0) * c * (c - 2.0) * x) * p1
                      - 2.0 * (k + a - 1.0) * (k + b - 1.0) * c * p0) / (2.0 * k * (k + a + b) * (c - 2.0))
    return p1, p0


def _gauss_jacobi(n: int, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Gauss–Jacobi nodes and weights for the weight :math:`(1-x)^a(1+x)^b` on [−1, 1], to a few ulps.

    ``scipy.special.roots_jacobi`` (eigenvalues of the Jacobi matrix) is good to ~1e-14 only at these sizes
    (its (1/2, 0) rule integrated x⁵ with a relative error of 5·10⁻¹⁴ at n = 256): its nodes are polished by
    three Newton steps on the recurrence, the weights taken from :math:`1/((1-x^2)P_n'(x)^2)` and normalised
    to the exact mass :math:`2^{a+b+1}B(a+1,b+1)` (then x⁵ and x²⁰ integrate to 2·10⁻¹⁵ at every n).
    """
    x, _ = roots_jacobi(n, a, b)
    c = 2.0 * n + a + b
    for _ in range(4):
        pn, pm = _jacobi_p(n, a, b, x)
        dp = (n * ((a - b) - c * x) * pn + 2.0 * (n + a) * (n + b) * pm) / (c * (1.0 - x) * (1.0 + x))
        if _ < 3:
            x = x - pn / dp
    w = 1.0 / ((1.0 - x) * (1.0 + x) * dp * dp)
    return x, w * (math.exp((a + b + 1.0) * math.log(2.0) + betaln(a + 1.0, b + 1.0)) / w.sum())


@lru_cache(maxsize=None)
def _rule01(n: int, alpha: float, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""n-point Gauss rule for :math:`\int_0^1 x^\alpha(1-x)^\beta f(x)\,dx`: nodes, 1 − nodes, weights.

    Closed forms where they exist: :math:`(\tfrac12,\tfrac12)` is Gauss–Chebyshev of the second kind,
    :math:`(-\tfrac12,\tfrac12)` the even half of a symmetric (2n+1)-point Chebyshev-U rule in
    :math:`\sqrt x`; the others from :func:`_gauss_jacobi`.
    """
    if alpha == 0.5 and beta == 0.5:
        th = np.arange(1, n + 1) * np.pi / (n + 1)
        return np.cos(th / 2) ** 2, np.sin(th / 2) ** 2, np.pi / (n + 1) * np.sin(th) ** 2 / 4
    if alpha == -0.5 and beta == 0.5:
        th = np.arange(1, n + 1) * np.pi / (2 * n + 1)
        return np.cos(th) ** 2, np.sin(th) ** 2, 2 * np.pi / (2 * n + 1) * np.sin(th) ** 2
    y, wy = _gauss_jacobi(n, beta, alpha)  # weight (1-y)^beta (1+y)^alpha on [-1, 1]
    return (1 + y) / 2, (1 - y) / 2, wy / 2 ** (alpha + beta + 1)


def _n_tau(tau_T: np.ndarray, per_tau: float = 2.0) -> np.ndarray:
    """Node count of the τ rule for a mapped range of length ``tau_T``: 24 + ``per_tau``·τ_T rounded up to the
    ladder (calibrated, module docstring)."""
    lad = np.asarray(_LADDER)
    return lad[np.minimum(np.searchsorted(lad, 24.0 + per_tau * tau_T), lad.size - 1)]


def truncation(w: np.ndarray, rate: np.ndarray) -> np.ndarray:
    r""":math:`y_T`: 1 (the whole support), or :math:`C/(\kappa w)` where that is below 1/2, for a factor
    :math:`e^{-\kappa(\nu-\lambda_-)}` of the integrand (``w`` the width of the support, ``rate`` = κ ≥ 0;
    computed as :math:`(C/w)/\kappa`: κw may overflow)."""
    with np.errstate(divide="ignore", over="ignore"):
        yt = (_TRUNC / w) / rate
    return np.where(yt < 0.5, yt, 1.0)


def mp_rule(lm: np.ndarray, w: np.ndarray, y_T: np.ndarray, *, per_tau: float = 2.0, pole=None) -> list[Block]:
    r"""The rule's blocks for flat arrays: lower edge ``lm`` = λ₋, width ``w`` = 4√λ, ``y_T`` in (0, 1/2] or 1.

    ``sum(block.weight * f(block.nu), axis=1) * exp(block.log_scale)`` is the continuous part of
    :math:`\mathbb E[f(\nu)]` over :math:`\lambda_-<\nu<\lambda_-+w\,y_T` for the points ``block.sel``. The
    edges are the caller's (for λ > 1 by duality, λ₋/λ and 4/√λ from λ itself, not from a rounded 1/λ).
    ``per_tau``: nodes per unit of the mapped range (2 for an integrand with an exponential factor; an integrand
    whose weight in τ rises faster, such as ``(1 - e^{-s nu/2})^2/nu`` near λ = 1, asks for more: its caller says
    how many, measured).  ``pole``: where the integrand itself has a near-pole at ν = −``pole`` (the
    1/(ν + γ/2) of weight decay), the distance used for the map at λ = 1, where the density's own near-pole is
    absent (for λ ≠ 1 the map of λ₋ sends ν = −``pole`` to Im τ = π, away from the real axis).
    """
    lm = np.asarray(lm, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    y_T = np.asarray(y_T, dtype=np.float64)
    if pole is None and lm.shape == w.shape == y_T.shape == (1,):
        return [_one_point(lm, w, y_T, per_tau)]
    with np.errstate(divide="ignore", over="ignore"):
        delta = lm / w  # the near-pole's distance below y = 0; inf where w underflows
    full = y_T >= 1.0
    one = lm == 0.0
    if pole is not None:  # lam = 1 with an integrand pole at -pole: map it like lam_- (weight y^(-1/2))
        with np.errstate(divide="ignore", invalid="ignore"):
            delta = np.where(one, np.asarray(pole, dtype=np.float64) / w, delta)
        one_tau = one & (delta > 0.0) & (delta < y_T)
        one = one & ~one_tau
    else:
        one_tau = np.zeros(lm.shape, dtype=bool)
    tau = ~one & ~one_tau & (lm > 0.0) & (delta < y_T)
    mapped = tau | one_tau
    with np.errstate(divide="ignore"):
        tau_T = np.where(mapped, np.log1p(np.where(mapped, y_T, 0.0) / np.where(mapped, delta, 1.0)), 0.0)
    n = np.where(mapped, _n_tau(tau_T, per_tau), _N_Y)
    blocks = []
    for mode, mask in (("y", ~one & ~mapped), ("tau", tau), ("one", one), ("one_tau", one_tau)):
        for beta, bmask in ((0.5, full), (0.0, ~full)):
            m = mask & bmask
            if not m.any():
                continue
            for nn in np.unique(n[m]):
                sel = np.flatnonzero(m & (n == nn))
                blocks.append(_block(mode, int(nn), beta, sel, lm[sel], w[sel], delta[sel], y_T[sel], tau_T[sel]))
    return blocks


def _one_point(lm, w, y_T, per_tau: float) -> Block:
    """`mp_rule` of one point (one-point arrays, no pole): its mode, node count and map read from its numbers
    (the same operations as the masks of an array, on NumPy scalars), then its one `_block`."""
    l0, w0, y0 = lm[0], w[0], y_T[0]
    with np.errstate(divide="ignore", over="ignore"):
        d0 = l0 / w0
        mode = "one" if l0 == 0.0 else "tau" if l0 > 0.0 and d0 < y0 else "y"
        t0 = np.log1p(y0 / d0) if mode == "tau" else 0.0
    n = _LADDER[min(bisect.bisect_left(_LADDER, 24.0 + per_tau * t0), len(_LADDER) - 1)] if mode == "tau" else _N_Y
    return _block(mode, int(n), 0.5 if y0 >= 1.0 else 0.0, np.zeros(1, dtype=np.intp), lm, w, np.array([d0]), y_T,
                  np.array([t0]))


def _block(mode, n, beta, sel, lm, w, delta, y_T, tau_T) -> Block:
    """Nodes and weights of one block (see `mp_rule`)."""
    yt = y_T[:, None]
    if mode == "y":  # weight y^(1/2) (y_T - y)^beta; integrand sqrt(1 - y)/(y_T - y)^beta / nu
        x, xm, wt = _rule01(n, 0.5, beta)
        y = yt * x
        nu = lm[:, None] + w[:, None] * y
        edge = 1.0 if beta > 0 else np.sqrt((1.0 - y))  # y_T = 1 with beta = 1/2: sqrt(1-y)/sqrt(1-y) = 1
        nu_ref = nu.max(axis=1, keepdims=True)
        weight = wt * edge * (nu_ref / nu)
        log_scale = (1.5 + beta) * np.log(y_T) + _LOG_8_PI - np.log(nu_ref[:, 0])
        return Block(sel, nu, w[:, None] * y, weight, log_scale)
    if mode == "one":  # lam = 1: (8/pi) sqrt(y(1-y))/(4y) = (2/pi) y^(-1/2) sqrt(1-y)
        x, xm, wt = _rule01(n, -0.5, beta)
        y = yt * x
        nu = w[:, None] * y
        edge = 1.0 if beta > 0 else np.sqrt(1.0 - y)
        weight = np.broadcast_to(wt * edge, y.shape)
        log_scale = (0.5 + beta) * np.log(y_T) + _LOG_2_PI
        return Block(sel, nu, w[:, None] * y, weight, log_scale)
    # tau: y = delta expm1(tau), dy/nu = dtau/w; weight tau^(1/2) (tau_T - tau)^beta
    # one_tau (lam = 1, an integrand pole at nu = -w delta): (2/pi) y^(-1/2) sqrt(1-y) dy with dy = (delta + y) dtau;
    # weight tau^(-1/2) (tau_T - tau)^beta
    x, xm, wt = _rule01(n, -0.5 if mode == "one_tau" else 0.5, beta)
    tT = tau_T[:, None]
    d = delta[:, None]
    t = tT * x
    em = np.expm1(t)
    if beta > 0:
        # y_T = 1: the map y = d' expm1(tau) with d' = 1/expm1(tau_T), so that 1 - y = d' e^tau expm1(tau_T - tau)
        # holds to an ulp (with d itself, the rounding of tau_T ~ 70 at lam = 1 - 1e-14 moved the upper edge by
        # 8e-15 and the mass by 4e-15); dy/(d + y) = dtau/(1 + (d - d')/(d' e^tau)), the factor kept exactly
        de = 1.0 / np.expm1(tT)
        y = de * em
        edge = np.sqrt(de * (1.0 + em) * np.expm1(tT * xm) / (tT * xm))
        if mode == "tau":  # the density's 1/nu is 1/(w (d + y)), the map's Jacobian d' e^tau = d' + y
            edge = edge / (1.0 + ((d - de) / de) / (1.0 + em))
    else:
        de = d
        y = np.minimum(d * em, yt)  # delta expm1(tau_T) may round an ulp above y_T
        edge = np.sqrt(1.0 - y)
    nu = lm[:, None] + w[:, None] * y
    if mode == "one_tau":  # sqrt(tau/y) dy/dtau, dy/dtau = d' + y, in units of its largest value
        dy = de + y
        ref = dy.max(axis=1, keepdims=True)
        weight = wt * (dy / ref) / np.sqrt(de * (em / t)) * edge
        log_scale = (0.5 + beta) * np.log(tau_T) + _LOG_2_PI + np.log(ref[:, 0])
        return Block(sel, nu, w[:, None] * y, weight, log_scale)
    weight = wt * np.sqrt(de * (em / t)) * edge
    log_scale = (1.5 + beta) * np.log(tau_T) + _LOG_8_PI - np.log(w)
    return Block(sel, nu, w[:, None] * y, weight, log_scale)
