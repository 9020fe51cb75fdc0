r"""The Marchenko–Pastur law: density, atom, moments, Laplace transforms and expectations.

The eigenvalues ν of the empirical Gram matrix Σ_tr = XᵀX/N of N standard Gaussian samples in d dimensions
follow, as d, N → ∞ at fixed aspect ratio λ = d/N, the Marchenko–Pastur law (spec `levi:eq6`): an atom of
mass max(0, 1 − 1/λ) at 0 and a continuous part on [λ₋, λ₊], λ± = (1 ± √λ)²,

.. math::

    p_{\rm MP}(\nu)\,d\nu=\Big(1-\frac1\lambda\Big)^{+}\delta_0(d\nu)
    +\frac{\sqrt{(\lambda_+-\nu)(\nu-\lambda_-)}}{2\pi\lambda\,\nu}\,\mathbf 1_{[\lambda_-,\lambda_+]}(\nu)\,d\nu,
    \qquad \lambda_\pm=(1\pm\sqrt\lambda)^2 .

This module is paper-independent; `grokclocks.linear` builds the loss curves of the linear teacher–student
model on it. All functions accept numpy-broadcastable arrays (except the generic expectations and `mp_cdf`,
which take a scalar `lam`), compute in float64 and return Python floats for scalar input. Quantities that
underflow or overflow have `log_` variants.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy import integrate, special

from . import _validate as V
from ._fielddocs import document_records
from .citations import cites

__all__ = [
    "mp_edges",
    "MPEdges",
    "mp_atom",
    "mp_density",
    "mp_cdf",
    "mp_moment",
    "mp_inverse_moment",
    "mp_stieltjes",
    "mp_stieltjes2",
    "mp_stieltjes_nu2",
    "mp_laplace_nu",
    "mp_log_laplace_nu",
    "mp_laplace",
    "mp_log_laplace",
    "mp_expect",
    "mp_log_expect_exp",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


# Bessel functions are evaluated as ive(m, z) = e^{-z} I_m(z).  scipy's ive is accurate to ~3e-16
# for z in [1e-3, 1e9] at orders 0-3 (and to 2e-14 up to order 64), measured against mpmath; it
# returns NaN beyond z ~ 1e10 (Hankel expansion there) and loses up to 6e-14 at order 1 for
# z < 1e-10 (power series there, see _log_phi1 / _log_phi0_series).
_HANKEL_Z = 1e8
# E[exp(-s nu)] for lam <= 1 (spec levi:gen-closed) is evaluated without the Bessel + Marcum-Q closed
# form: its subtraction of two terms of size 1/lam gave 1.8e13 instead of 0.135 at lam = 1e-30, s = 2,
# and measured against mpmath (theta-quadrature, 40 digits) it loses accuracy as s (1-sqrt(lam))^2 grows
# well before the spec's switch point 50 (2.3e-13 at lam = 0.3, s = 98; 1.5e-12 at lam = 0.7, s = 1124;
# 3.1e-11 at lam = 0.9, s = 1.9e4), and scipy's Marcum Q (ncx2.sf) is silently wrong at large
# non-centrality (0.6 relative at s = 1e12, lam = 1 - 1e-6).  Branches, all sums of positive terms:
#   z = 2 s sqrt(lam) <= 1, or sqrt(lam) <= 1/2: Neumann series (_log_phi0_series), error <= 2e-15;
#   lam = 1: e^{-2s}[I0(2s) + I1(2s)];
#   otherwise (1/4 < lam < 1, z > 1): the tail integral int_s^inf E[nu e^{-u nu}] du (spec's "stable
#   evaluation for all s", _log_phi0_tail), error <= 1.3e-14 (measured, same grid).
# Switch points (measured): at sqrt(lam) = 1/2 the series has error 6e-16 and the tail integral 3e-17
# to 7e-15 (s = 4 .. 200); at z = 1 both are below 1e-15.
_SERIES_MAX_R = 0.5
_SERIES_TERMS = 64
# Where the exponential factor exp(-s (nu - lam_-)) is below exp(-_TRUNC) we drop the integrand.
_TRUNC = 60.0


def _ive(n, z):
    r"""``scipy.special.ive`` with the Hankel expansion for :math:`z>10^8` (scipy returns NaN beyond ~1e10).

    :math:`e^{-z}I_n(z)\sim(2\pi z)^{-1/2}\sum_{k=0}^{5}(-1)^k a_k(n)z^{-k}`,
    :math:`a_k(n)=\prod_{j=1}^{k}(4n^2-(2j-1)^2)/(k!\,8^k)`; for orders :math:`n\le64` the first
    omitted term is below :math:`(4n^2/8z)^6<10^{-27}` relative there.
    """
    z = np.asarray(z, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    big = z > _HANKEL_Z
    zs = np.where(big, z, 1.0)
    mu = 4.0 * n * n
    term = np.ones(np.broadcast(n, zs).shape)
    total = term.copy()
    with np.errstate(over="ignore", under="ignore"):  # z near 1.8e308: 8 z k = inf, the terms are 0
        for k in range(1, 6):
            term = -term * (mu - (2.0 * k - 1.0) ** 2) / (8.0 * zs * k)
            total = total + term
        hankel = total / np.sqrt(2.0 * np.pi) / np.sqrt(zs)
    with np.errstate(invalid="ignore"):
        return np.where(big, hankel, special.ive(n, np.where(big, 1.0, z)))


def _ive1_hankel(z: float) -> float:
    """Scalar :func:`_ive` of order 1 for z > _HANKEL_Z (same 6-term Hankel expansion, Python floats)."""
    term = total = 1.0
    for k in range(1, 6):
        term = -term * (4.0 - (2.0 * k - 1.0) ** 2) / (8.0 * z * k)
        total += term
    return total / math.sqrt(2.0 * math.pi * z)


def _log_ive_2sr(n, s, r):
    r""":math:`\log\mathrm{ive}(n,2sr)` for arrays :math:`s,r\ge0`, also where :math:`2sr` overflows.

    Beyond :math:`sr=10^{300}` the Hankel expansion's leading term :math:`-\tfrac12(\log4\pi+\log s+\log r)`
    (the next is :math:`(4n^2-1)/(16sr)<10^{-296}` relative for :math:`n\le64`): ``2 s sqrt(lam)`` was
    ``inf`` at :math:`s=1.7\cdot10^{308}` and the log-Laplace transforms returned ``-inf`` for a finite value.
    """
    s, r = np.asarray(s, dtype=np.float64), np.asarray(r, dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore"):
        x = s * r
        big = ~(x <= 1e300)
        return np.where(big, -0.5 * (math.log(4.0 * math.pi) + np.log(np.where(big, s, 1.0))
                                     + np.log(np.where(big, r, 1.0))),
                        np.log(_ive(n, 2.0 * np.where(big, 1.0, x))))


def _gap(a):
    r"""λ₋ = (1 - √λ)² as ((1 - λ)/(1 + √λ))²: no cancellation near λ = 1.

    From λ = 10³⁰⁰ on as λ - 2√λ, correctly rounded there (the 1 is below an ulp): the square of the
    rounded quotient overflowed to `inf` at the largest double."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(over="ignore"):
        q2 = ((1.0 - a) / (1.0 + np.sqrt(a))) ** 2
    big = a >= 1e300
    if not np.any(big):
        return q2
    return np.where(big, a - 2.0 * np.sqrt(np.where(big, a, 1.0)), q2)


def _upper_edge(a):
    r"""λ₊ = (1 + √λ)²; from λ = 10³⁰⁰ on as λ + 2√λ, correctly rounded (the square of the rounded √λ
    came out an ulp below λ₋ at the largest double)."""
    a = np.asarray(a, dtype=np.float64)
    big = a >= 1e300
    sq = (1.0 + np.sqrt(a)) ** 2
    if not np.any(big):
        return sq
    return np.where(big, a + 2.0 * np.sqrt(np.where(big, a, 1.0)), sq)


def _edge_distances(x, a):
    r""":math:`(x-\lambda_-,\ \lambda_+-x)` for float x, each to a few ulps of the width :math:`4\sqrt\lambda`.

    The edges :math:`(1\mp\sqrt\lambda)^2` themselves are only good to an ulp of their size, which is
    wider than the whole support for :math:`\lambda\lesssim10^{-32}` or :math:`\gtrsim10^{32}`.  So:
    :math:`\sqrt\lambda\le0.29` (support in [0.5, 2]): :math:`(x-1)+(2\sqrt\lambda-\lambda)` with
    :math:`x-1` exact; :math:`\sqrt\lambda\ge3.42` (support in [λ/2, 2λ]):
    :math:`(x-\lambda)+(2\sqrt\lambda-1)` with :math:`x-\lambda` exact (Sterbenz); in between
    :math:`x-\lambda_-` with :math:`\lambda_-` from :func:`_gap` (its error, ~1e-16 :math:`\lambda_-`, is
    below 1e-16 of the width there).  Same for the upper edge.
    """
    x = np.asarray(x, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    r = np.sqrt(a)
    small, large = r <= 0.29, r >= 3.42
    with np.errstate(over="ignore", invalid="ignore"):
        lo = np.where(small, (x - 1.0) + (2.0 * r - a), np.where(large, (x - a) + (2.0 * r - 1.0), x - _gap(a)))
        hi = np.where(small, (1.0 - x) + (2.0 * r + a), np.where(large, (a - x) + (2.0 * r + 1.0),
                                                                    (1.0 + r) ** 2 - x))
    return lo, hi


def _lam(lam) -> np.ndarray:
    return V.positive(lam, "lam")


class MPEdges(NamedTuple):
    r"""Result of `mp_edges`: the edges `lam_minus` = λ₋ and `lam_plus` = λ₊ of the continuous part of the Marchenko–Pastur law."""

    lam_minus: float | np.ndarray
    """The lower edge λ₋ = (1 − √λ)²."""
    lam_plus: float | np.ndarray
    """The upper edge λ₊ = (1 + √λ)²."""


@cites("levi:eq6")
def mp_edges(lam):
    r"""Edges of the continuous part of the Marchenko–Pastur law.

    .. math:: \lambda_\pm=(1\pm\sqrt\lambda)^2

    In words: λ₋ = (1 − √λ)² and λ₊ = (1 + √λ)², the smallest and largest eigenvalue of the Gram
    matrix's continuous spectrum (accuracy under Returns).

    Parameters
    ----------
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    (lam_minus, lam_plus) : tuple of float or ndarray
        An `MPEdges` named tuple (λ₋, λ₊), each of the shape of `lam`; it unpacks like a plain tuple.
        λ₋ is evaluated as ((1 − λ)/(1 + √λ))² (no cancellation near λ = 1); both to a few ulps for
        every λ in [10⁻³⁰⁸, 1.8·10³⁰⁸] (above 10³⁰⁰ as λ ∓ 2√λ, correctly rounded).

    References
    ----------
    Levi et al., eq. (6); spec `levi:eq6`.
    """
    a = _lam(lam)
    return MPEdges(V.scalar_or_array(_gap(a)), V.scalar_or_array(_upper_edge(a)))


@cites("levi:eq6")
def mp_atom(lam):
    r"""Mass of the Marchenko–Pastur atom at ν = 0: max(0, 1 − 1/λ), non-zero only for λ > 1.

    Parameters
    ----------
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        The mass in [0, 1), the shape of `lam`.

    References
    ----------
    Levi et al., eq. (6); spec `levi:eq6`.
    """
    a = _lam(lam)
    return V.scalar_or_array(np.where(a > 1.0, (a - 1.0) / a, 0.0))


@cites("levi:eq6")
@V.broadcasting()
def mp_density(nu, lam):
    r"""Density of the continuous part of the Marchenko–Pastur law (0 outside the support).

    .. math:: \frac{\sqrt{(\lambda_+-\nu)(\nu-\lambda_-)}}{2\pi\lambda\,\nu}\,\mathbf 1_{[\lambda_-,\lambda_+]}(\nu)

    In words: √((λ₊ − ν)(ν − λ₋))/(2πλν) on [λ₋, λ₊], 0 elsewhere. Its integral is min(1, 1/λ); the atom
    `mp_atom` carries the rest. The distances to the edges are computed to an ulp of the support's width (the
    rounded edges themselves may be off by more than the width at tiny or huge λ), so the relative error is ≤
    4·10⁻¹⁶·(1 + 4√λ/distance to the nearer edge).

    Parameters
    ----------
    nu : float or array_like
        The eigenvalue(s) ν at which to evaluate, any finite real.
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        The density, the broadcast shape of `nu` and `lam`.

    References
    ----------
    Levi et al., eq. (6); spec `levi:eq6`.
    """
    x = V.finite(nu, "nu")
    a = _lam(lam)
    x, a = np.broadcast_arrays(x, a)
    below, above = _edge_distances(x, a)
    inside = (below > 0) & (above > 0) & (x > 0)
    with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
        p = (np.sqrt(np.maximum(below, 0.0)) / x) * (np.sqrt(np.maximum(above, 0.0)) / (2.0 * np.pi * a))
    return V.scalar_or_array(np.where(inside, p, 0.0))


@cites("levi:eq6")
def mp_cdf(x, lam):
    r"""Cumulative distribution function of the Marchenko–Pastur law, atom included.

    .. math:: F(x)=\Big(1-\frac1\lambda\Big)^+\mathbf 1_{x\ge0}
        +\int_{\lambda_-}^{x}\frac{\sqrt{(\lambda_+-\nu)(\nu-\lambda_-)}}{2\pi\lambda\,\nu}\,d\nu

    In words: P(ν ≤ x), the atom's mass (for x ≥ 0) plus the integral of `mp_density` up to x; used for
    Kolmogorov–Smirnov comparisons of simulated spectra. It is evaluated in the angle ν = λ₋ + 4√λ·sin²(θ/2),
    where the continuous part is (2/π)∫₀^θx sin²θ/ν(θ) dθ: a smooth integrand at every λ (bounded by max(1,
    1/λ); the 1/ν near-pole of λ → 1 is a bump of width √λ₋, given to the adaptive rule as a break point),
    integrated from the nearer edge. (The former QAWS rule in ν divided by zero at λ = 1 − 10⁻¹⁰ and was off
    by 8·10⁻⁸ at λ = 10⁻²⁰, where the rounded edges lose the width of the support.)

    Parameters
    ----------
    x : float or array_like
        The point(s) x at which to evaluate, any finite real.
    lam : float
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0; a scalar.

    Returns
    -------
    float or ndarray
        F(x) in [0, 1], the shape of `x`.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 10⁻¹⁴ + 10⁻¹⁵·w/(x − λ₋), w = 4√λ
    the width of the support; the second term is the rounding of x − λ₋, which matters only within a few ulps
    of the edge.

    References
    ----------
    Levi et al., eq. (6); spec `levi:eq6`.
    """
    a = _scalar_lam(lam)
    xs = V.finite(x, "x")
    r = math.sqrt(a)
    lm = float(_gap(a))
    w = 4.0 * r
    atom = (a - 1.0) / a if a > 1.0 else 0.0
    mass = min(1.0, 1.0 / a)
    delta = lm / w
    scale = 1.0 + a  # keeps QUADPACK's integrand O(1) for huge lam (the mass is 1/lam)

    def part(theta: float, upper: bool) -> float:
        """(2/pi) int_0^theta sin^2 t/nu dt from the lower (or, upper=True, the upper) edge."""

        def g(t: float) -> float:
            h = math.sin(0.5 * t) ** 2
            hh = 1.0 - h if upper else h  # nu = lm + w hh
            if hh == 0.0:
                return 0.0 if lm > 0.0 else scale * (1.0 - h) / r
            return scale * (4.0 * h * (1.0 - h)) / (lm + w * hh)  # scale * 4 overflowed at lam ~ 1.7e308

        pts = None
        if not upper and 0.0 < delta < 0.25:
            # the near-pole's bump and its 1/t^2 flank: break points tb 4^k (two break points only
            # gave 9.5e-8 at lam = 1 - 1e-6, x = 2, with a QUADPACK error estimate of 2e-14)
            tb = 2.0 * math.asin(math.sqrt(delta))
            pts = [tb * 4.0**k for k in range(40) if tb * 4.0**k < theta] or None
        return 2.0 / math.pi / scale * _quad(g, 0.0, theta, epsabs=0.0, epsrel=2e-14, limit=200, points=pts)

    out = np.empty(xs.size, dtype=np.float64)
    below, above = _edge_distances(xs.reshape(-1), a)
    for i, xi in enumerate(xs.reshape(-1)):
        base = atom if xi >= 0.0 else 0.0
        if below[i] <= 0.0:
            out[i] = base
        elif above[i] <= 0.0:
            out[i] = base + mass
        else:
            h = float(below[i]) / w
            if h <= 0.5:
                out[i] = base + part(2.0 * math.asin(math.sqrt(h)), False)
            else:
                out[i] = base + mass - part(2.0 * math.asin(math.sqrt(float(above[i]) / w)), True)
    return V.scalar_or_array(out.reshape(xs.shape))


@cites("levi:mp-moments")
def mp_moment(k, lam):
    r"""Moment E[νᵏ] of the Marchenko–Pastur law (Narayana polynomials).

    .. math:: \mathbb E\nu^k=\sum_{j=0}^{k-1}\frac{\lambda^j}{j+1}\binom{k}{j}\binom{k-1}{j}
        \qquad(1,\ 1+\lambda,\ 1+3\lambda+\lambda^2,\dots)

    In words: the sum over j < k of λʲ times the Narayana number C(k, j)·C(k−1, j)/(j + 1): 1, 1 + λ, 1 + 3λ +
    λ², ... A sum of positive terms with exact integer coefficients: relative error ≤ 2·10⁻¹⁴ for k ≤ 600 and
    λ in [10⁻³⁰⁸, 10³⁰⁰].

    Parameters
    ----------
    k : int
        The order k, an integer ≥ 0 (E[ν⁰] = 1).
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        E[νᵏ], the shape of `lam` (`inf` where the moment exceeds 1.8·10³⁰⁸).

    References
    ----------
    Spec `levi:mp-moments`.
    """
    k = V.integer_at_least(k, "k", 0)
    a = _lam(lam)
    if k == 0:
        return V.scalar_or_array(np.ones_like(a))
    total = np.zeros_like(a)
    with np.errstate(over="ignore"):  # overflow = the moment itself exceeds 1.8e308 (a sum of positive terms)
        for j in range(k):
            narayana = math.comb(k, j) * math.comb(k - 1, j) // (j + 1)  # exact integer
            if narayana < 2**1000:
                total = total + a**j * float(narayana)
            else:  # beyond float range: lam^j N(k, j+1) in log space (inf unless lam is tiny)
                total = total + np.exp(j * np.log(a) + math.log(narayana))
    return V.scalar_or_array(total)


@cites("levi:mp-moments")
def mp_inverse_moment(k, lam):
    r"""Inverse moment E[ν⁻ᵏ; ν > 0] of the Marchenko–Pastur law for k = 1, 2 (continuous part only).

    .. math::
        \lambda<1:\ \frac1{1-\lambda},\ \frac1{(1-\lambda)^3};\qquad
        \lambda>1:\ \frac1{\lambda(\lambda-1)},\ \frac1{(\lambda-1)^3}.

    In words: for λ < 1, 1/(1 − λ) (k = 1) and 1/(1 − λ)³ (k = 2); for λ > 1, 1/(λ(λ − 1)) and 1/(λ − 1)³.
    Relative error ≤ 2·10⁻¹⁵.

    Parameters
    ----------
    k : int
        The order k, 1 or 2.
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0, λ ≠ 1 (both
        moments diverge at λ = 1).

    Returns
    -------
    float or ndarray
        E[ν⁻ᵏ; ν > 0], the shape of `lam` (`inf` where it exceeds 1.8·10³⁰⁸, i.e. within about 10⁻¹⁰³ of λ
        = 1).

    References
    ----------
    Spec `levi:mp-moments`.
    """
    k = V.integer_at_least(k, "k", 1)
    if k > 2:
        raise V.DomainError(f"k must be 1 or 2 (got {k})")
    a = V.not_equal(_lam(lam), "lam", 1.0, context="(the inverse moments diverge at lam = 1)")
    below = a < 1
    with np.errstate(divide="ignore", over="ignore", under="ignore"):  # inf = overflow of the true value
        if k == 1:
            out = np.where(below, 1.0 / (1.0 - a), (1.0 / a) * (1.0 / (a - 1.0)))
        else:
            out = np.where(below, (1.0 / (1.0 - a)) ** 3, (1.0 / (a - 1.0)) ** 3)
    return V.scalar_or_array(out)


def _resolvent(ww: np.ndarray, a: np.ndarray):
    r"""``(m, D/2, M)`` for validated broadcast arrays: :math:`m(w)`, half of :math:`D=\sqrt{(1-\lambda+w)^2+4\lambda w}`
    and :math:`M=w\,m(w)\in(0,1]`, free of cancellation and of spurious over/underflow.

    Every intermediate is halved, so none overflows where the result itself does not:
    :math:`D/2` = ``hypot(b/2, sqrt(lam) sqrt(w))`` (the squares overflow beyond 1e154);
    :math:`m=1/(b/2+D/2)` for :math:`b=1-\lambda+w>0` (the numerator :math:`D-b` cancels there),
    :math:`m=((D/2-b/2)/\lambda)/w` otherwise (:math:`D-b=D+|b|`; formed as ``(D - b) / (2 lam)`` it
    was ``inf / inf`` = NaN at :math:`\lambda=1.7\cdot10^{308}`).  ``D`` itself is ``inf`` only where it
    would exceed 1.8e308 (:math:`\lambda w>8\cdot10^{615}`), so :math:`D/2` is returned.
    """
    b = 1.0 - a + ww
    hb = 0.5 * b
    Dh = np.hypot(hb, np.sqrt(a) * np.sqrt(ww))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pos = b > 0
        den = hb + Dh
        M_neg = (Dh - hb) / a
        m = np.where(pos, 1.0 / den, M_neg / ww)
        M = np.where(pos, ww / den, M_neg)
    return m, Dh, M


def _stieltjes_parts(w, lam):
    ww = V.positive(w, "w")
    a = _lam(lam)
    ww, a = np.broadcast_arrays(ww, a)
    m, Dh, _ = _resolvent(ww, a)
    with np.errstate(over="ignore"):
        return m, 2.0 * Dh, a  # D = inf only where m2 underflows (lam w > 8e615)


def _log_wd_plateau(g: np.ndarray, a: np.ndarray, gen: bool) -> np.ndarray:
    r""":math:`\log\big(g^2\,\mathbb E[q/(\nu+g)^2]\big)`, :math:`q=1` (gen, atom included) or :math:`\nu` (train).

    The weight-decay plateaus (spec ``levi:eq15``) in log space, for validated broadcast arrays
    :math:`g>0`: with :math:`M=g\,m(g)`, :math:`c=\lambda-1+g`,

    .. math:: g^2m_2=\frac{M(\lambda M+g)}{D},\qquad
        g^2\,\mathbb E\Big[\frac{\nu}{(\nu+g)^2}\Big]=\frac{g\,M\,(D-c)}{2D},
        \quad D-c=\frac{4g}{D+c}\ (c>0).

    No product is formed: :math:`g^2` underflows below :math:`g=10^{-154}` (the former
    ``math.log(g*g*m2)`` raised "math domain error" at :math:`\gamma=10^{-200}`) and overflows above
    :math:`10^{154}` (NaN at :math:`\gamma=10^{200}`).
    """
    # g = inf (a weight decay converted to the paper's convention beyond 1.8e308): the limit g -> inf of
    # both, E[(1 + nu/g)^-2] and E[nu (1 + nu/g)^-2], is E[1] = E[nu] = 1, i.e. log = 0 (1 - O(1/g) = 1 in float
    # already for g > 1e17, as long as nu <= (1 + sqrt(lam))^2 << g: lam <= 1e290); the formulas gave inf/inf = NaN
    big = np.isinf(g)
    if np.any(big & (a > 1e290)):
        raise V.DomainError("the weight-decay plateau needs g = gamma/2 below 1.8e308 (after the conversion to the "
                            "paper's convention) where lam > 1e290: nu ~ lam is then not small against g "
                            f"(got g = inf, lam = {float(np.max(np.where(big, a, 0.0)))!r})")
    g = np.where(big, 1.0, g)
    _, Dh, M = _resolvent(g, a)
    # in quarters: lam M + g, D and D + c each overflowed near lam = g = 1e308 (NaN at lam = 1.7e308, g = 0.85e308)
    qD = 0.5 * Dh
    with np.errstate(divide="ignore"):
        if gen:
            return np.where(big, 0.0, np.log(M) + _log_ratio(0.25 * a * M + 0.25 * g, qD))
        qc = (0.25 * a - 0.25) + 0.25 * g
        pos = qc > 0
        qcc = np.where(pos, qc, 0.0)
        return np.where(big, 0.0, np.where(
            pos, math.log(2.0) + np.log(M) + _log_ratio(0.25 * g, qD) + _log_ratio(0.25 * g, qD + qcc),
            np.log(M) + np.log(0.5 * g) + np.log1p(-np.where(pos, 0.0, qc) / qD)))


def _log_ratio(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log(x/y) for x, y > 0: of the ratio where it is a normal double (the difference of two large
    logarithms loses |log x| ulps: 5.7e-14 at gamma = 1.7e150), else log x - log y."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        q = x / y
        ok = (q > 2.3e-308) & (q < 1e308)
        return np.where(ok, np.log(np.where(ok, q, 1.0)), np.log(x) - np.log(y))


@cites("levi:mp-stieltjes")
@V.broadcasting()
def mp_stieltjes(w, lam):
    r"""Resolvent moment m(w) = E[1/(ν + w)] of the Marchenko–Pastur law, atom included.

    .. math:: m(w)=\frac{-(1-\lambda+w)+\sqrt{(1-\lambda+w)^2+4\lambda w}}{2\lambda w}

    In words: the positive root of λw·m² + (1 − λ + w)·m − 1 = 0, evaluated without cancellation (rationalised
    numerator when 1 − λ + w > 0) and without spurious overflow (`hypot` for the square root).

    Parameters
    ----------
    w : float or array_like
        The shift w > 0 of the resolvent, E[1/(ν + w)].
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        m(w), the broadcast shape of `w` and `lam`.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 10⁻¹⁵ for every w, λ in [10⁻³⁰⁸,
    10³⁰⁰].

    References
    ----------
    Spec `levi:mp-stieltjes`.
    """
    m, _, _ = _stieltjes_parts(w, lam)
    return V.scalar_or_array(m)


@cites("levi:mp-stieltjes")
@V.broadcasting()
def mp_stieltjes2(w, lam):
    r"""Second resolvent moment m₂(w) = E[1/(ν + w)²] = −m′(w) of the Marchenko–Pastur law, atom included.

    .. math:: m_2(w)=\frac{m(w)\,(1+\lambda m(w))}{\sqrt{(1-\lambda+w)^2+4\lambda w}} .

    In words: m(1 + λm)/√((1 − λ + w)² + 4λw) with m = `mp_stieltjes`, from differentiating λw·m² + (1 − λ +
    w)·m − 1 = 0. Relative error ≤ 4·10⁻¹⁵ for w, λ in [10⁻³⁰⁸, 1.8·10³⁰⁸] (0 or `inf` only where the value
    itself underflows or overflows).

    Parameters
    ----------
    w : float or array_like
        The shift w > 0 of the resolvent, E[1/(ν + w)].
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        m₂(w), the broadcast shape of `w` and `lam`.

    References
    ----------
    Spec `levi:mp-stieltjes`.
    """
    m, D, a = _stieltjes_parts(w, lam)
    with np.errstate(over="ignore", under="ignore"):  # inf/0 only where m2 itself is beyond the float range
        return V.scalar_or_array(m / D + (m * (a / D)) * m)


@cites("levi:mp-stieltjes", "levi:eq15")
@V.broadcasting()
def mp_stieltjes_nu2(w, lam):
    r"""Moment E[ν/(ν + w)²] = m(w) − w·m₂(w) of the Marchenko–Pastur law, without cancellation.

    .. math::
        \mathbb E\Big[\frac{\nu}{(\nu+w)^2}\Big]=\frac{m(w)\,(D-c)}{2D},\qquad
        D=\sqrt{(1-\lambda+w)^2+4\lambda w},\quad c=\lambda-1+w,

    In words: m(w)(D − c)/(2D) with D − c = 4w/(D + c) when c > 0. For λ > 1 the atom makes m and w·m₂ both
    about (1 − 1/λ)/w, so the difference m − w·m₂ would cancel catastrophically at small w; this form does
    not. It is the train-loss plateau with weight decay (spec `levi:eq15`). Relative error ≤ 4·10⁻¹⁵ for w, λ
    in [10⁻³⁰⁸, 1.8·10³⁰⁸].

    Parameters
    ----------
    w : float or array_like
        The shift w > 0 of the resolvent, E[1/(ν + w)].
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        E[ν/(ν + w)²], the broadcast shape of `w` and `lam`.

    References
    ----------
    Spec `levi:mp-stieltjes`, `levi:eq15`.
    """
    ww = V.positive(w, "w")
    a = _lam(lam)
    ww, a = np.broadcast_arrays(ww, a)
    m, Dh, M = _resolvent(ww, a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        D = 2.0 * Dh  # inf only where the moment (< m/D) underflows
        c = a - 1.0 + ww  # inf only for lam + w > 1.8e308, where the moment (< 1/(lam w)) underflows to 0
        # m (D - c) = 4 M/(D + c) for c > 0 (M = w m: m ~ 1/w and 4w/(D+c) under/overflow separately at
        # w = 2e-308, lam = 1e148), then / (2D) (m k/(2D) with k/(2D) subnormal lost 4e-14 at w = 2.5e-284)
        mk = np.where(c > 0, 4.0 * M / (D + np.where(c > 0, c, 0.0)), m * (D - c))
        return V.scalar_or_array(mk / (2.0 * D))


def _s_lam(s, lam):
    ss = V.nonnegative(s, "s")
    a = _lam(lam)
    return np.broadcast_arrays(ss, a)


def _log_phi1(s: np.ndarray, a: np.ndarray) -> np.ndarray:
    r"""log E[nu exp(-s nu)] for arrays s >= 0, a > 0 (already validated, broadcast).

    :math:`-s\lambda_- + \log\mathrm{ive}(1,z) - \log(s\sqrt\lambda)`, :math:`z=2s\sqrt\lambda`; for
    :math:`z<10^{-3}` the power series :math:`-s(1+\lambda)+\log(2I_1(z)/z)`,
    :math:`2I_1(z)/z=1+y/2+y^2/12+y^3/144+\dots`, :math:`y=z^2/4` (omitted term < 1e-23 relative;
    scipy's ive(1, z) is off by up to 6e-14 below z = 1e-10).
    """
    r = np.sqrt(a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # -s lam_- = -inf: below -1.8e308, exact
        z = 2.0 * s * r
        small = z < 1e-3
        ss = np.where(small, 1.0, s)
        val = -ss * _gap(a) + _log_ive_2sr(1, ss, r) - np.log(ss) - np.log(r)
        y = 0.25 * z * z
        series = -s * (1.0 + a) + np.log1p(y * (0.5 + y * (1.0 / 12.0 + y / 144.0)))
    return np.where(small, series, val)


# 1/(k! (m+k)!) for the double power series of _log_phi0_series at z <= 1 (m = 1..24, k = 0..12)
_M_SMALL = np.arange(1, 25, dtype=np.float64)[:, None]
_K_SMALL = np.arange(0, 13, dtype=np.float64)[None, :]
_COEF_SMALL = _M_SMALL * np.exp(-special.gammaln(_K_SMALL + 1.0) - special.gammaln(_M_SMALL + _K_SMALL + 1.0))


def _log_phi0_series(s: np.ndarray, a: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    r"""log E[exp(-s nu)] from a Neumann series of positive terms (1-d arrays; sqrt(lam) <= 1/2, or lam <= 1 and z <= 1).

    Expanding the Poisson kernel :math:`1/\nu(\theta)` of the :math:`\theta`-representation in
    :math:`\cos n\theta` and integrating term by term (spec ``levi:gen-closed``, derivation) gives,
    after the :math:`(1-\lambda)` factors cancel exactly,

    .. math:: \Phi_0(s)=e^{-s(1+\lambda)}\sum_{m\ge1}m\,r^{m-1}\,\frac{2I_m(z)}{z},
        \qquad r=\sqrt\lambda,\ z=2sr,

    valid for every :math:`\lambda\le1` and free of cancellation (the Bessel + Marcum-Q closed form
    subtracts two terms of size :math:`1/\lambda`: 1.8e13 instead of 0.135 at
    :math:`\lambda=10^{-30}`, s = 2).  For :math:`z\le1` the double power series
    :math:`\sum_{m,k}m\,(s\lambda)^{m-1}(s^2\lambda)^k/(k!(m+k)!)` (:math:`s\lambda\le1/4`,
    :math:`s^2\lambda\le1/4`: 24 x 13 terms, omitted < 1e-25); for :math:`z>1`, 64 terms of
    :math:`e^{-z}I_m(z)` (:math:`r\le1/2`: omitted weight < 7e-18).  ``r`` = :math:`\sqrt\lambda` and
    ``c`` = :math:`\lambda_-` are passed in, computed from the user's :math:`\lambda` (see :func:`_log_phi0`).
    """
    with np.errstate(over="ignore"):
        z = 2.0 * (s * r)  # inf beyond 1.8e308: the big branch's Hankel limit
    out = np.empty(s.shape)
    small = z <= 1.0
    if np.any(small):
        ss, aa = s[small], a[small]
        x = (ss * aa)[:, None, None]
        y = (ss * ss * aa)[:, None, None]
        S = (_COEF_SMALL[None] * x ** (_M_SMALL[None] - 1.0) * y ** _K_SMALL[None]).sum(axis=(1, 2))
        out[small] = -ss * (1.0 + aa) + np.log(S)
    big = ~small
    if np.any(big):
        sb, rb, zb = s[big], r[big], z[big]
        m = np.arange(1, _SERIES_TERMS + 1, dtype=np.float64)[None, :]
        # z beyond 1e300 (or inf): ive(m, z) = ive(1, z) (1 + O(m^2/z)), so S = ive(1, z) sum m r^(m-1)
        huge = ~(zb <= 1e300)
        S = (m * rb[:, None] ** (m - 1.0) * _ive(m, np.where(huge, 1.0, zb)[:, None])).sum(axis=1)
        log_S = np.where(huge, _log_ive_2sr(1, sb, rb) + np.log((m * rb[:, None] ** (m - 1.0)).sum(axis=1)),
                         np.log(S))
        out[big] = -sb * c[big] + log_S - np.log(sb) - np.log(rb)
    return out


def _log_phi1_increment(s: float, u: float, a: float) -> float:
    r""":math:`\log\Phi_1(s+u)-\log\Phi_1(s)` (scalar) without subtracting two large logarithms.

    :math:`\log\Phi_1(s)=-s(1+\lambda)+z+M(z)`, :math:`z=2s\sqrt\lambda`,
    :math:`M(z)=\log(2\,\mathrm{ive}(1,z)/z)` (series :math:`\log(1+y/2+\dots)-z` below
    :math:`z=10^{-3}`, as in :func:`_log_phi1`), so the increment is
    :math:`-\lambda_-u+M(z_2)-M(z_1)` with :math:`M` of moderate size.
    """
    r = math.sqrt(a)

    def M(z: float) -> float:
        if z < 1e-3:
            y = 0.25 * z * z
            return math.log1p(y * (0.5 + y * (1.0 / 12.0 + y / 144.0))) - z
        return math.log(2.0 * float(_ive(1, z)) / z)

    return -float(_gap(a)) * u + M(2.0 * (s + u) * r) - M(2.0 * s * r)


def _phi0_excess(s: float, a: float) -> float:
    r""":math:`(\Phi_0(s)-\Phi_1(s))/\Phi_1(s)=\mathbb E[(1-\nu)e^{-s\nu}]/\mathbb E[\nu e^{-s\nu}]` for
    :math:`\sqrt\lambda\le1/2` (scalar), without the cancellation of the difference.

    In the Neumann series of :func:`_log_phi0_series` :math:`\Phi_1` is exactly the :math:`m=1` term, so
    the ratio is (terms :math:`m\ge2`)/(term :math:`m=1`), a ratio of positive sums (~ :math:`\lambda s`
    for small :math:`\lambda`, where :math:`\Phi_0-\Phi_1` evaluated as a difference keeps no digit at
    :math:`\lambda<10^{-16}`).  Used for grokking times at small :math:`\lambda` (``linear``).
    """
    r = math.sqrt(a)
    z = 2.0 * s * r
    if z <= 1.0:
        x, y = s * a, s * s * a
        terms = _COEF_SMALL * x ** (_M_SMALL - 1.0) * y**_K_SMALL
        row1 = terms[0].sum()
        return float(terms[1:].sum() / row1)
    m = np.arange(2, _SERIES_TERMS + 1, dtype=np.float64)
    return float((m * r ** (m - 1.0) * _ive(m, z)).sum() / _ive(1, z))


def _log_phi0_tail(s: float, r: float, c: float) -> float:
    r"""log E[exp(-s nu)] = log of :math:`\int_s^\infty\Phi_1(u)\,du` for 1/4 < lam < 1 (scalar).

    With :math:`u=s\,e^x` the integral is
    :math:`\frac{e^{-cs}\,\mathrm{ive}(1,z)}{r}\int_0^X e^{-cs\,\mathrm{expm1}(x)}
    \frac{\mathrm{ive}(1,z e^x)}{\mathrm{ive}(1,z)}\,dx`, :math:`c=\lambda_-`, :math:`z=2rs`: a smooth
    integrand that decays at least like :math:`e^{-x/2}` (:math:`z\ge1`); the range ends where
    :math:`cs\,\mathrm{expm1}(x)=45` or at :math:`x=90` (omitted part < :math:`e^{-45}` relative).
    Used only for :math:`z\ge2\cdot10^{2}` (see :func:`_log_phi0`).  Beyond :math:`z=10^{300}` (where
    :math:`z e^x` may overflow: ``2 s r`` was ``inf`` at :math:`s=1.7\cdot10^{308}`, a ``ZeroDivisionError``)
    the ratio is :math:`e^{-x/2}(1+O(1/z))` and :math:`\log\mathrm{ive}(1,z)=-\tfrac12\log(4\pi sr)+O(1/z)`.
    """
    cs = c * s
    z = 2.0 * (s * r)
    huge = not z <= 1e300
    i1 = 1.0 if huge else float(_ive(1, z))
    log_i1 = float(_log_ive_2sr(1, s, r)) if huge else math.log(i1)
    upper = 90.0 if cs <= 0.0 else min(90.0, math.log1p(45.0 / cs))
    ive1 = special.ive

    def f(x: float) -> float:
        if huge:
            return math.exp(-cs * math.expm1(x) - 0.5 * x)
        zx = z * math.exp(x)
        i = ive1(1, zx) if zx <= _HANKEL_Z else _ive1_hankel(zx)  # scalar fast paths
        return math.exp(-cs * math.expm1(x)) * i / i1

    # break points where the factor exp(-cs expm1(x)) falls to e^-1 and e^-10
    pts = [x for x in (math.log1p(1.0 / cs), math.log1p(10.0 / cs)) if 0.0 < x < upper] if cs > 0 else []
    val = _quad(f, 0.0, upper, epsabs=0.0, epsrel=2e-14, limit=200, points=pts or None)
    return -cs + log_i1 - math.log(r) + math.log(val)


def _log_phi0_le1(s: np.ndarray, a: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """log E[exp(-s nu)] for 1-d arrays, 0 < a <= 1 (no atom): the branch of the module constants."""
    out = np.empty(s.shape)
    series = (r <= _SERIES_MAX_R) | (s * r <= 0.5)
    one = ~series & (c == 0.0)
    if np.any(series):
        out[series] = _log_phi0_series(s[series], a[series], r[series], c[series])
    if np.any(one):  # lam = 1: e^{-2s}[I0(2s) + I1(2s)], a sum of positive terms
        so = s[one]
        huge = so > 1e300  # ive(0, 2s) = ive(1, 2s) (1 + O(1/s)): log 2 + log ive(1, 2s)
        z = 2.0 * np.where(huge, 1.0, so)
        out[one] = np.where(huge, math.log(2.0) + _log_ive_2sr(1, so, 1.0), np.log(_ive(0, z) + _ive(1, z)))
    for i in np.flatnonzero(~series & ~one):
        out[i] = _log_phi0_tail(float(s[i]), float(r[i]), float(c[i]))
    return out


def _log_phi0(s: np.ndarray, a: np.ndarray) -> np.ndarray:
    r"""log E[exp(-s nu)] (atom included) for validated, broadcast arrays.

    :math:`\lambda>1` by the duality of the MP law (the non-zero eigenvalues of
    :math:`X^\top X/N` are those of :math:`XX^\top/N`): :math:`\nu/\lambda\sim{\rm MP}(1/\lambda)` on
    :math:`\nu>0`, so :math:`\Phi_0(s;\lambda)=(1-1/\lambda)+\Phi_0(s\lambda;1/\lambda)/\lambda`, a sum of
    two positive terms.  Only :math:`\sqrt{1/\lambda}=1/\sqrt\lambda` and
    :math:`(1-\sqrt{1/\lambda})^2=\lambda_-/\lambda` enter, both computed from :math:`\lambda` itself: the
    rounding of a float :math:`1/\lambda` would shift :math:`\lambda_-` by ~1e-16 absolute, i.e. 1e-11
    relative in :math:`\Phi_0` at :math:`\lambda=1+10^{-8}`, :math:`s=10^{12}` (measured).
    """
    shape = np.shape(s)
    sf, af = np.asarray(s, dtype=np.float64).reshape(-1), np.asarray(a, dtype=np.float64).reshape(-1)
    out = np.empty(sf.shape)
    le1 = af <= 1.0
    if np.any(le1):
        al = af[le1]
        out[le1] = _log_phi0_le1(sf[le1], al, np.sqrt(al), _gap(al))
    gt1 = ~le1
    if np.any(gt1):
        sg, ag = sf[gt1], af[gt1]
        with np.errstate(over="ignore"):
            sd = sg * ag
        fin = np.isfinite(sd)
        cont = np.full(sg.shape, -np.inf)  # s lam beyond 1.8e308: the continuous part is exp(-inf)
        if np.any(fin):
            ai = ag[fin]
            cont[fin] = _log_phi0_le1(sd[fin], 1.0 / ai, 1.0 / np.sqrt(ai), _gap(ai) / ai) - np.log(ai)
        out[gt1] = np.logaddexp(np.log(ag - 1.0) - np.log(ag), cont)
    return out.reshape(shape)


@cites("levi:eq19")
@V.broadcasting()
def mp_laplace_nu(s, lam):
    r"""Closed form of Φ₁(s; λ) = E[ν e^(−sν)] over the Marchenko–Pastur law (the train-loss integral).

    .. math::
        \Phi_1(s;\lambda)=e^{-s(1+\lambda)}\,{}_0F_1(;2;\lambda s^2)
        =e^{-s(1-\sqrt\lambda)^2}\,\frac{\mathrm{ive}(1,2s\sqrt\lambda)}{s\sqrt\lambda},\qquad\Phi_1(0)=1 .

    In words: e^(−s(1 − √λ)²)·ive(1, 2s√λ)/(s√λ), with ive(1, z) = e^(−z)I₁(z) the scaled modified Bessel
    function. Valid for every λ > 0 (the atom contributes 0), not only λ < 1 as the paper states (erratum
    levi-8). It underflows for s(1 − √λ)² ≳ 700; use `mp_log_laplace_nu` there.

    Parameters
    ----------
    s : float or array_like
        The spectral time s ≥ 0 (s = 4η₀t/d_out in the linear model, `grokclocks.linear`).
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        Φ₁(s; λ), the broadcast shape of `s` and `lam`.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 4·10⁻¹⁵·max(1, |log value|) for s
    in [0, 1.8·10³⁰⁸] and λ in [10⁻³⁰⁸, 10³⁰⁰] (power series below z = 2s√λ = 10⁻³, Hankel expansion above
    10⁸).

    References
    ----------
    Levi et al., eq. (19) (and eq. (8), train part); spec `levi:eq19`.
    """
    ss, a = _s_lam(s, lam)
    return V.scalar_or_array(np.exp(_log_phi1(ss, a)))


@cites("levi:eq19")
@V.broadcasting()
def mp_log_laplace_nu(s, lam):
    r"""Logarithm of `mp_laplace_nu`, log E[ν e^(−sν)] (never underflows).

    Absolute error ≤ 4·10⁻¹⁵·max(1, |value|) for s in [0, 1.8·10³⁰⁸] and λ in [10⁻³⁰⁸, 10³⁰⁰]; `-inf` where
    the logarithm is below −1.8·10³⁰⁸.

    Parameters
    ----------
    s : float or array_like
        The spectral time s ≥ 0 (s = 4η₀t/d_out in the linear model, `grokclocks.linear`).
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        log Φ₁(s; λ), the broadcast shape of `s` and `lam`.

    References
    ----------
    Levi et al., eq. (19); spec `levi:eq19`.
    """
    ss, a = _s_lam(s, lam)
    return V.scalar_or_array(_log_phi1(ss, a))


@cites("levi:gen-closed", "levi:eq8")
@V.broadcasting()
def mp_laplace(s, lam):
    r"""Closed form of Φ₀(s; λ) = E[e^(−sν)] over the Marchenko–Pastur law, atom included (the generalisation-loss integral).

    .. math::
        \Phi_0(s;\lambda)=e^{-s(1+\lambda)}\Big[I_0(2s\sqrt\lambda)+\frac{I_1(2s\sqrt\lambda)}{\sqrt\lambda}\Big]
        +\Big(1-\frac1\lambda\Big)\Big[1-Q_1\big(\sqrt{2s},\sqrt{2\lambda s}\big)\Big]

    In words: Bessel terms plus (1 − 1/λ) times the CDF 1 − Q₁ of a non-central χ²₂ (Q₁ the Marcum Q-function
    of order 1). The paper states that no closed form is known (erratum levi-9). Φ₀(0) = 1, Φ₀(∞) = max(0, 1 −
    1/λ), Φ₀′ = −Φ₁.

    Evaluation (every branch a sum of positive terms; the closed form above subtracts two terms of size 1/λ
    and gave 1.8·10¹³ instead of 0.1353 at λ = 10⁻³⁰, s = 2): λ > 1 by the duality Φ₀(s; λ) = (1 − 1/λ) +
    Φ₀(sλ; 1/λ)/λ; for λ ≤ 1 the Neumann series e^(−s(1+λ))·Σ_{m≥1} m·λ^((m−1)/2)·2I_m(z)/z, z = 2s√λ, where
    √λ ≤ 1/2 or z ≤ 1; at λ = 1, e^(−2s)[I₀(2s) + I₁(2s)]; otherwise the tail integral ∫_s^∞ Φ₁(u) du in the
    variable log u (spec `levi:gen-closed`). It underflows to 0 at large s; use `mp_log_laplace` there.

    Parameters
    ----------
    s : float or array_like
        The spectral time s ≥ 0 (s = 4η₀t/d_out in the linear model, `grokclocks.linear`).
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        Φ₀(s; λ), the broadcast shape of `s` and `lam`.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 2·10⁻¹⁴·max(1, |log value|) for s
    in [0, 1.8·10³⁰⁸] and λ in [10⁻³⁰⁸, 10³⁰⁰].

    References
    ----------
    Levi et al., eq. (8) (generalisation part); spec `levi:gen-closed`, `levi:eq8`.
    """
    ss, a = _s_lam(s, lam)
    return V.scalar_or_array(np.exp(_log_phi0(ss, a)))


@cites("levi:gen-closed", "levi:eq8")
@V.broadcasting()
def mp_log_laplace(s, lam):
    r"""Logarithm of `mp_laplace`, log E[e^(−sν)], atom included (never underflows).

    The same branches as `mp_laplace`; absolute error ≤ 2·10⁻¹⁴·max(1, |value|) for s in [0, 1.8·10³⁰⁸] and λ
    in [10⁻³⁰⁸, 10³⁰⁰]; `-inf` where the logarithm is below −1.8·10³⁰⁸.

    Parameters
    ----------
    s : float or array_like
        The spectral time s ≥ 0 (s = 4η₀t/d_out in the linear model, `grokclocks.linear`).
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        log Φ₀(s; λ), the broadcast shape of `s` and `lam`.

    References
    ----------
    Levi et al., eq. (8); spec `levi:gen-closed`, `levi:eq8`.
    """
    ss, a = _s_lam(s, lam)
    return V.scalar_or_array(_log_phi0(ss, a))


def _scalar_lam(lam) -> float:
    a = _lam(lam)
    if a.ndim != 0:
        raise V.DomainError(f"lam must be a scalar here (got an array of shape {a.shape})")
    return float(a)


def _rtol(rtol) -> float:
    """QUADPACK's relative tolerance: in [1.2e-14, 1) (it refuses requests below 50 machine epsilons)."""
    t = float(V.scalar(V.in_open_interval(rtol, "rtol", 0.0, 1.0), "rtol"))  # an array: DomainError, not TypeError
    if t < 1.2e-14:
        raise V.DomainError(f"rtol must be in [1.2e-14, 1) (QUADPACK's smallest relative tolerance) (got {t!r})")
    return t


def _call(f: Callable, x: float) -> float:
    return float(np.asarray(f(np.asarray(x, dtype=np.float64)), dtype=np.float64))


def _integrand_call(f: Callable, x: float, name: str) -> float:
    """``f(x)`` for a quadrature node or the atom: a value that is not finite raises, naming the integrand and
    the point, instead of turning the sum into NaN."""
    v = _call(f, x)
    if not math.isfinite(v):
        raise V.DomainError(f"{name} must be finite on the Marchenko-Pastur support (and at 0 with the atom); "
                            f"{name}({x!r}) = {v!r}")
    return v


def _quad(g: Callable, lo: float, hi: float, **kw) -> float:
    """``scipy.integrate.quad`` that warns only when the error estimate exceeds 100x the request."""
    val, err, *info = integrate.quad(g, lo, hi, full_output=1, **kw)
    if err > 100.0 * max(kw.get("epsrel", 1.49e-8) * abs(val), kw.get("epsabs", 0.0)) and err > 1e-300:
        warnings.warn(f"MP quadrature error estimate {err:.2e} for value {val:.6e} exceeds the tolerance",
                      integrate.IntegrationWarning, stacklevel=3)
    return val


def _continuous_integral(f: Callable, lam: float, shift: float, rtol: float, name: str = "f") -> tuple[float, float]:
    r"""Scaled continuous part :math:`\int p_c(\nu) f(\nu) e^{-shift(\nu-\lambda_-)} d\nu` by QAWS,
    returned as ``(value, log_scale)`` (the integral is ``value * exp(log_scale)``).

    With :math:`\nu=\lambda_-+4\sqrt\lambda\,y`, :math:`y\in[0,1]` (the width :math:`4\sqrt\lambda` exact;
    the difference of the rounded edges lost 11 % at :math:`\lambda=10^{-30}`),
    :math:`p_c\,d\nu=\frac8\pi\sqrt{y(1-y)}\,d y/\nu`.  The :math:`1/\nu` has a near-pole at distance
    :math:`\delta=\lambda_-/(4\sqrt\lambda)` below :math:`y=0`; adaptive QAWS in :math:`y` fails there
    (measured vs mpmath: relative error 2e+3 at :math:`\lambda=1-10^{-12}`, 5e-6 at :math:`1-10^{-8}`).
    For :math:`\delta<1` (:math:`0.03<\lambda<34`) the map :math:`y=\delta(e^\tau-1)` sends the pole to
    :math:`\tau=-\infty` (:math:`dy/\nu=d\tau/(4\sqrt\lambda)`), and QAWS runs in :math:`\tau` with the
    weight :math:`\tau^{1/2}(\tau_T-\tau)^{1/2}` on a smooth remainder (measured: <= 3e-14 for
    :math:`1,\nu^3,e^{-3\nu},1/(\nu+0.01)` at :math:`\lambda=1\pm10^{-12}, 1-10^{-15}, 1-10^{-8}, 0.99`);
    for :math:`\delta\ge1` QAWS in :math:`y` (<= 1e-15 there; same points at :math:`\lambda=0.03`:
    6e-16 in y, 6e-16 in tau).  At :math:`\lambda=1` (:math:`\delta=0`) the :math:`1/\nu` merges with the
    weight: :math:`y^{-1/2}(1-y)^{1/2}`.  The range is cut where :math:`e^{-shift(\nu-\lambda_-)}<e^{-60}`
    if that is below :math:`y=1/2` (omitted part < 1e-26 relative).
    """
    r = math.sqrt(lam)
    lm = float(_gap(lam))
    w = 4.0 * r
    opts = dict(epsabs=0.0, epsrel=rtol, limit=500)
    rate = shift * w  # exponential decay rate in y
    if math.isfinite(rate):
        y_T = 1.0 if rate * 0.5 <= _TRUNC else _TRUNC / rate

        def decay(y: float) -> float:
            return rate * y
    else:  # shift 4 sqrt(lam) beyond 1.8e308 (shift = 1.8e308 gave y_T = 0 and -inf for a finite log)
        y_T = (_TRUNC / w) / shift

        def decay(y: float) -> float:
            return shift * (w * y)
    if y_T == 0.0:  # shift w > 1e325 needs w > 6.7e16: lam_- ~ w^2/16, shift lam_- > 1.8e308, the part is exp(-inf)
        return 0.0, -math.inf
    trunc = y_T < 1.0
    beta = 0.0 if trunc else 0.5
    delta = lm / w

    def scaled(g: Callable, x_T: float, alpha: float) -> tuple[float, float]:
        # int_0^{x_T} x^alpha (x_T - x)^beta g(x) dx = x_T^(1+alpha+beta) int_0^1 u^alpha (1-u)^beta g(x_T u) du:
        # QUADPACK on [0, 1] (on [0, 1e-270] the integral underflowed to 0 at s lam_- ~ 5e276)
        val = _quad(lambda u: g(x_T * u), 0.0, 1.0, weight="alg", wvar=(alpha, beta), **opts)
        return val, (1.0 + alpha + beta) * math.log(x_T)

    # f in units of a power of two near its size at the centre (exact scaling): f(nu) = nu ~ 1.7e308 at
    # lam = 1.7e308, or f = 5e307, overflowed QUADPACK's sums (NaN for E[nu] = 1, NaN for E[5e307])
    f_mid = abs(_call(f, lm + 0.5 * w))
    unit = math.ldexp(1.0, math.frexp(f_mid)[1]) if math.isfinite(f_mid) and f_mid > 1.0 else 1.0
    if delta == 0.0:  # lam = 1: (8/pi) sqrt(y(1-y))/(4y) = (2/pi) y^{-1/2} (1-y)^{1/2}
        def g0(y: float) -> float:
            edge = math.sqrt(1.0 - y) if trunc else 1.0
            return _integrand_call(f, w * y, name) / unit * math.exp(-decay(y)) * edge

        val, lsc = scaled(g0, y_T, -0.5)
        return 2.0 / math.pi * val * unit, lsc
    if delta >= 1.0:
        scale = 1.0 + lam  # (1 + lam)/nu in [~1/2, ~2]: keeps QUADPACK's integrand O(f)

        def gy(y: float) -> float:
            nu = lm + w * y
            edge = math.sqrt(1.0 - y) if trunc else 1.0
            return _integrand_call(f, nu, name) / unit * math.exp(-decay(y)) * edge * (scale / nu)

        val, lsc = scaled(gy, y_T, 0.5)
        return 8.0 / math.pi * val * (unit / scale), lsc
    tau_T = math.log1p(y_T / delta)

    def gt(t: float) -> float:
        em = math.expm1(t)
        y = min(delta * em, y_T)  # delta expm1(tau_T) rounds above y_T = 1 (1.0000000000000002 at delta = 1/8)
        # sqrt(y/t) and sqrt((1-y)/(tau_T-t)) (untruncated: 1 - y = delta e^t (e^{tau_T - t} - 1) exactly)
        lo = math.sqrt(y / t) if t > 0.0 else math.sqrt(delta)
        if trunc:
            hi = math.sqrt(1.0 - y)
        elif t < tau_T:
            hi = math.sqrt(delta * (1.0 + em) * math.expm1(tau_T - t) / (tau_T - t))
        else:
            hi = math.sqrt(delta * (1.0 + em))
        return _integrand_call(f, lm + w * y, name) / unit * math.exp(-decay(y)) * lo * hi

    val, lsc = scaled(gt, tau_T, 0.5)
    return 2.0 / (math.pi * r) * val * unit, lsc


@cites("levi:mp-quad")
def mp_expect(f: Callable, lam, *, include_atom: bool = True, rtol: float = 1e-12) -> float:
    r"""Expectation E[f(ν)] over the Marchenko–Pastur law for any integrand, by adaptive Gauss–Jacobi quadrature.

    .. math::
        \mathbb E[f(\nu)]=\Big(1-\frac1\lambda\Big)^+f(0)+\frac1{2\pi\lambda}\int_{\lambda_-}^{\lambda_+}
        (\nu-\lambda_-)^{1/2}(\lambda_+-\nu)^{1/2}\frac{f(\nu)}{\nu}\,d\nu .

    In words: the atom's mass times f(0) plus the integral of f against `mp_density`. The square-root
    end-point singularities are carried by the weight of QUADPACK's QAWS rule (`scipy.integrate.quad` with
    `weight='alg'`), so smooth integrands converge to about 10⁻¹⁴ (spec `levi:mp-quad`). Near λ = 1 the 1/ν
    near-pole is removed by the change of variables ν − λ₋ = λ₋(e^τ − 1) before QAWS; at λ = 1 exactly it
    merges with the weight (ν^(−1/2)(4 − ν)^(1/2)). (A fixed Gauss–Chebyshev rule in θ is not accurate near λ
    = 1; neither is QAWS in ν without the map: 2·10³ relative error at λ = 1 − 10⁻¹².)

    Parameters
    ----------
    f : callable
        The integrand f(ν), called with a float64 0-d array and returning a real number; it must be finite
        on the support (and at 0 when the atom is included).
    lam : float
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0; a scalar.
    include_atom : bool
        Whether to add the atom term max(0, 1 − 1/λ)·f(0) (non-zero only for λ > 1); default True.
    rtol : float
        The relative tolerance passed to QUADPACK, in [1.2·10⁻¹⁴, 1) (QUADPACK refuses smaller requests);
        default 10⁻¹².

    Returns
    -------
    float
        E[f(ν)].

    Raises
    ------
    DomainError
        `ResultOverflow` (a `DomainError`) where the expectation is beyond the double range, besides
        invalid arguments and an integrand that is not finite.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 10⁻¹³ for integrands analytic on
    a neighbourhood of the support (measured with 1, νᵏ, e^(−cν), 1/(ν + w)) for every λ in [10⁻³⁰⁰, 10³⁰⁰];
    the value is correctly rounded to 0 where it underflows. Integrands whose values are below about 10⁻²⁹⁰ on
    the support lose accuracy in QUADPACK: use `mp_log_expect_exp` for exponentially small expectations.

    References
    ----------
    Spec `levi:mp-quad`.
    """
    V.callable_(f, "f")
    a = _scalar_lam(lam)
    include_atom = V.flag(include_atom, "include_atom")
    rtol = _rtol(rtol)
    val, lsc = _continuous_integral(f, a, 0.0, rtol)
    val *= math.exp(lsc)  # lsc = log of the mapped interval's length: |lsc| < 400 here
    if include_atom and a > 1.0:
        val += (a - 1.0) / a * _integrand_call(f, 0.0, "f")
    if not math.isfinite(val):
        raise V.ResultOverflow(f"E[f] at lam = {a!r} is beyond the double range ({val!r}): scale f down")
    return val


@cites("levi:mp-quad")
def mp_log_expect_exp(g: Callable, s, lam, *, include_atom: bool = True, rtol: float = 1e-12) -> float:
    r"""Logarithm of E[g(ν) e^(−sν)] over the Marchenko–Pastur law, for a non-negative integrand g.

    Computed as −sλ₋ + log E[g(ν) e^(−s(ν − λ₋))] so that nothing underflows; the atom term max(0, 1 −
    1/λ)·g(0) is added with `logaddexp`. The range is truncated where e^(−s(ν − λ₋)) < e^(−60). Same
    quadrature and accuracy as `mp_expect` (absolute error of the logarithm ≤ 10⁻¹³·max(1, |log|)); `-inf`
    where the logarithm is below the float range (sλ₋ > 1.8·10³⁰⁸).

    Parameters
    ----------
    g : callable
        The non-negative integrand g(ν), called with a float64 0-d array; finite on the support (and at 0
        when the atom is included).
    s : float
        The decay rate s ≥ 0 of the exponential factor, a scalar (the spectral time 4η₀t/d_out in the
        linear model).
    lam : float
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0; a scalar.
    include_atom : bool
        Whether to add the atom term at ν = 0 (non-zero only for λ > 1); default True.
    rtol : float
        The relative tolerance passed to QUADPACK, in [1.2·10⁻¹⁴, 1) (QUADPACK refuses smaller requests);
        default 10⁻¹².

    Returns
    -------
    float
        The natural logarithm of the expectation (`-inf` if the expectation is exactly 0).

    Raises
    ------
    DomainError
        Where g is negative (its expectation, or g(0) at the atom), besides invalid arguments.

    References
    ----------
    Spec `levi:mp-quad`.
    """
    V.callable_(g, "g")
    a = _scalar_lam(lam)
    include_atom = V.flag(include_atom, "include_atom")
    ss = V.nonnegative(s, "s")
    if ss.ndim != 0:
        raise V.DomainError(f"s must be a scalar here (got an array of shape {ss.shape})")
    s_ = float(ss)
    rtol = _rtol(rtol)
    lm = float(_gap(a))
    cont, lsc = _continuous_integral(g, a, s_, rtol, "g")
    if cont < 0.0:  # g < 0 by a few ulp near an edge is harmless; a negative expectation has no logarithm
        raise V.DomainError(f"g must be non-negative: the continuous part of E[g(nu) e^(-s nu)] is negative "
                            f"({cont!r} x e^{lsc!r}) at s = {s_!r}, lam = {a!r}")
    with np.errstate(divide="ignore", over="ignore"):
        out = float(-s_ * lm + lsc + math.log(cont)) if cont > 0 else -math.inf
    if include_atom and a > 1.0:
        g0 = _integrand_call(g, 0.0, "g")
        if g0 < 0.0:
            raise V.DomainError(f"g must be non-negative: g(0) = {g0!r} at the atom (lam = {a!r} > 1)")
        if g0 > 0:
            out = float(np.logaddexp(out, math.log(a - 1.0) - math.log(a) + math.log(g0)))
    return out


document_records(globals(), __all__)  # help() of each record class lists its fields
