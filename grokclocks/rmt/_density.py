"""Density and distribution function of the Marchenko–Pastur law."""

from __future__ import annotations

import math

import numpy as np

from .. import _floats as FL
from .. import _pointwise as P
from .. import _validate as V
from ..citations import cites
from ._support import _edge_distances, _lam, _pick_nonnegative


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
    sc = P.scalars(nu, lam)
    x = V.finite(nu, "nu", scalar=sc)
    a = _lam(lam, sc)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return P.result(_density(x, a))


def _density(x, a):
    """The engine of `mp_density` (floats or arrays that broadcast; the caller's errstate)."""
    below, above = _edge_distances(x, a)
    inside = (below > 0) & (above > 0) & (x > 0)
    if isinstance(inside, (bool, np.bool_)) and not inside:  # a number outside the support
        return 0.0
    p = (np.sqrt(np.maximum(below, 0.0)) / x) * (np.sqrt(np.maximum(above, 0.0)) / (2.0 * np.pi * a))
    if isinstance(p, np.ndarray) and p.ndim and p.shape == np.shape(inside) and float(p.max()) < math.inf:
        # p finite (NaN fails the test): p·1 = p, p·0 = ±0, + 0 makes a -0 (x < 0) +0; no branch per point
        return np.add(np.multiply(p, inside, out=p), 0.0, out=p)
    return P.pick(inside, p, 0.0)


# Below rho = 1/4 the difference (A - rho sin theta)/rho^2 of `_cdf_continuous` is summed as its series (28 terms:
# (1/4)^28 = 1.4e-17); above, it is formed directly (its rounding, ~2 eps/rho absolute, is below 2e-15 there).
_CDF_SERIES_RHO = 0.25
_CDF_SERIES_TERMS = 28


def _cdf_continuous(theta, h, rho, one_m_rho):
    r""":math:`B(\theta;\rho)=\theta+A-(A-\rho\sin\theta)/\rho^2`, :math:`A=\operatorname{atan2}(\rho\sin\theta,\,1-\rho\cos\theta)`.

    The continuous part of the CDF from the lower edge in the angle θ (ν = 1 + λ − 2√λ cos θ) is
    (min(1, 1/λ)/π)·B(θ; ρ), ρ = min(√λ, 1/√λ) (the duality ν/λ ~ MP(1/λ) maps λ > 1 to ρ = 1/√λ with the
    same θ), and from the upper edge the same with −ρ. It is the antiderivative of
    :math:`2\sin^2\theta/(1+\rho^2-2\rho\cos\theta)` written without the terms of size 1/λ whose difference the
    textbook form takes (it kept no digit at λ = 10⁻²⁰): :math:`A=\sum_{n\ge1}\rho^n\sin(n\theta)/n`, so
    :math:`(A-\rho\sin\theta)/\rho^2=\operatorname{Im}\,e^{2i\theta}\sum_{n\ge2}(\rho e^{i\theta})^{n-2}/n`, summed
    by Horner's rule below |ρ| = 1/4. Near an edge B ≈ θ − sin θ cancels to ~θ³/6, so sin θ is taken of the
    rounded θ itself (consistent with it); the other functions of the angle, whose rounding enters B at a
    higher order in θ, are algebraic in h = sin²(θ/2) (the distance to the edge over the width, θ = 2 arcsin √h):
    cos θ = 1 − 2h, and
    ``1 - rho cos theta`` is formed as ``(1 - rho) + 2 rho h`` (no cancellation as ρ → 1), ``one_m_rho`` = 1 − ρ
    passed in exactly.  Floats, or arrays of one shape (then `theta` is this engine's own temporary).
    """
    scalar = type(theta) is float  # one point: the ufuncs' values as floats (float arithmetic after them)
    sin_t = np.sin(theta)  # of the rounded angle: B = theta - sin(theta) + O(theta^5) cancels to ~theta^3 at an edge
    sin_t = float(sin_t) if scalar else sin_t
    A = np.arctan2(rho * sin_t, one_m_rho + 2.0 * rho * h)
    A = float(A) if scalar else A
    diff = (A - rho * sin_t) / (rho * rho)
    if scalar:
        if abs(rho) < _CDF_SERIES_RHO:
            diff = _cdf_series(rho, h, sin_t)
    else:
        # the series (28 steps of Horner's rule) on its own points only, gathered: a masked full-array pass
        # (`P.patch` above an eighth of the points) cost 19 of the 36 ms of mp_cdf at 1e5 points
        idx = np.flatnonzero(np.abs(rho) < _CDF_SERIES_RHO)
        if idx.size:
            diff[idx] = _cdf_series(rho[idx], h[idx], sin_t[idx])
    theta += A
    theta -= diff
    return theta


def _cdf_series(rho, h, sin_t):
    r""":math:`\operatorname{Im}\,e^{2i\theta}\sum_{n=2}^{29}(\rho e^{i\theta})^{n-2}/n` by Horner's rule, in real
    arithmetic (the real and imaginary parts of :math:`g\leftarrow gz+1/n`): the same operations on a float
    as on an array (numpy's complex product of arrays rounds differently from a scalar's); cos θ = 1 − 2h,
    sin 2θ = 2 sin θ cos θ, cos 2θ = 1 − 2 sin²θ."""
    cos_t = 1.0 - 2.0 * h
    zr, zi = rho * cos_t, rho * sin_t
    gr, gi = 1.0 / (_CDF_SERIES_TERMS + 1), 0.0
    for n in range(_CDF_SERIES_TERMS, 1, -1):
        gr, gi = (gr * zr - gi * zi) + 1.0 / n, gr * zi + gi * zr
    return (2.0 * sin_t * cos_t) * gr + (1.0 - 2.0 * (sin_t * sin_t)) * gi


@cites("levi:eq6")
@V.broadcasting()
def mp_cdf(x, lam):
    r"""Cumulative distribution function of the Marchenko–Pastur law, atom included.

    .. math:: F(x)=\Big(1-\frac1\lambda\Big)^+\mathbf 1_{x\ge0}
        +\int_{\lambda_-}^{x}\frac{\sqrt{(\lambda_+-\nu)(\nu-\lambda_-)}}{2\pi\lambda\,\nu}\,d\nu

    In words: P(ν ≤ x), the atom's mass (for x ≥ 0) plus the integral of `mp_density` up to x; used for
    Kolmogorov–Smirnov comparisons of simulated spectra. In the angle θ, x = 1 + λ − 2√λ cos θ, the integral
    is elementary, (λθ + √λ sin θ − (1 − λ) atan2(√λ sin θ, 1 − √λ cos θ))/(πλ); this textbook form
    subtracts terms of size 1/λ and kept no digit at λ = 10⁻²⁰. It is evaluated instead from the nearer edge
    as (min(1, 1/λ)/π)·(θ + A − (A − ρ sin θ)/ρ²), A = atan2(ρ sin θ, 1 − ρ cos θ), ρ = min(√λ, 1/√λ), with
    the difference summed as the series Σ_{n≥2} ρⁿ⁻² sin(nθ)/n below ρ = 1/4 (for λ > 1 by the duality ν/λ ~
    MP(1/λ), mass 1/λ). No quadrature: a vectorised closed form over `x` and `lam`.

    Parameters
    ----------
    x : float or array_like
        The point(s) x at which to evaluate, any finite real.
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        F(x) in [0, 1], the broadcast shape of `x` and `lam`.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 10⁻¹⁴ + 2·10⁻¹⁵·w/d, w = 4√λ
    the width of the support and d the distance of x to the nearer edge; the second term is the rounding of
    x − λ₋ (or λ₊ − x), which matters only within a few ulps of the edge.

    References
    ----------
    Levi et al., eq. (6); spec `levi:eq6`.
    """
    sc = P.scalars(x, lam)
    xs = V.finite(x, "x", scalar=sc)
    a = _lam(lam, sc)
    if sc:
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return float(_cdf(xs, a))
    shape, (xs, a) = V.broadcast_flat(xs, a)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return V.scalar_or_array(_cdf(xs, a).reshape(shape))


def _cdf(xs, a):
    """The engine of `mp_cdf` (floats or 1-d arrays of one shape; the caller's errstate)."""
    xp = FL.ops_of(a)  # Python floats stay floats (math.sqrt and min/max: the same values as the ufuncs)
    below, above = _edge_distances(xs, a)
    r = xp.sqrt(a)
    rho = xp.minimum(r, 1.0 / r)  # 1/sqrt(lam) for lam > 1 (the dual law), else sqrt(lam)
    mass = xp.minimum(1.0 / a, 1.0)  # 1/lam for lam > 1, else 1
    if xp is FL.SCALAR:
        atom = (a - 1.0) / a if a > 1.0 and xs >= 0.0 else 0.0
        if not (below > 0.0 and above > 0.0):  # a number outside the support
            return atom + (mass if above <= 0.0 else 0.0)
        return atom + _cdf_inside(below, above, a, r, rho, mass)
    # min/max and products with a mask in place of selects (the same values: each is finite and >= 0; a select on a
    # random mask costs more than the arithmetic); the atom (lam - 1)/lam <= 0 where lam <= 1 (-inf at a subnormal)
    atom = np.maximum((a - 1.0) / a, 0.0)
    atom *= xs >= 0.0
    out = np.add(atom, mass * (above <= 0.0), out=atom)
    inside = (below > 0.0) & (above > 0.0)
    k = np.count_nonzero(inside)
    if k == out.size:
        out += _cdf_inside(below, above, a, r, rho, mass)
    elif k:  # the continuous part on the points inside the support only (gathered)
        idx = np.flatnonzero(inside)
        out[idx] += _cdf_inside(below[idx], above[idx], a[idx], r[idx], rho[idx], mass[idx])
    return out


def _cdf_inside(below, above, a, r, rho, mass):
    """The continuous part of `mp_cdf` at points strictly inside the support (floats or 1-d arrays of one shape):
    (mass/π)·B from the nearer edge, B of `_cdf_continuous`."""
    xp = FL.ops_of(a)
    one_m_rho = xp.abs(1.0 - a) / (xp.maximum(a, 1.0) * (1.0 + rho))  # 1 - rho, exact to an ulp
    h = xp.minimum(xp.minimum(below, above) / (4.0 * r), 0.5)  # sin^2(theta/2): the distance over the width
    theta = 2.0 * np.arcsin(xp.sqrt(h))
    if xp is FL.SCALAR:  # +1 from the lower edge, -1 from the upper one; the angle's functions on a float
        lower = below <= above
        B = _cdf_continuous(float(theta), h, rho if lower else -rho, one_m_rho if lower else 1.0 + rho)
        part = (mass / math.pi) * B
        return part if lower else mass - part
    sign = np.copysign(1.0, above - below)  # +1 where below <= above (+0 too), -1 from the upper edge
    lower = below <= above
    part = (mass / np.pi) * _cdf_continuous(theta, h, sign * rho, _pick_nonnegative(lower, one_m_rho, 1.0 + rho))
    # from the upper edge mass - part: (0 or mass) + (-part), each exact
    return mass * np.logical_not(lower) + sign * part
