"""Moments and inverse moments of the Marchenko–Pastur law (closed forms)."""

from __future__ import annotations

import math

import numpy as np

from .. import _pointwise as P
from .. import _validate as V
from ..citations import cites
from ._support import _lam


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
    a = _lam(lam, P.scalars(lam))
    total = np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0  # an array keeps its shape (k = 0, 1)
    if k == 0:
        return P.result(total + 1.0)
    with np.errstate(over="ignore"):  # overflow = the moment itself exceeds 1.8e308 (a sum of positive terms)
        for j in range(k):
            narayana = math.comb(k, j) * math.comb(k - 1, j) // (j + 1)  # exact integer
            if narayana < 2**1000:
                total = total + _power(a, j) * float(narayana)
            else:  # beyond float range: lam^j N(k, j+1) in log space (inf unless lam is tiny)
                total = total + np.exp(j * np.log(a) + math.log(narayana))
    return P.result(total)


def _power(a, j: int):
    """``a ** j`` as numpy forms it for an array (1, ``a``, ``a * a``, else ``np.power``), also on a float (a
    float's ``** 2`` is the C library's pow, not the square)."""
    return 1.0 if j == 0 else a if j == 1 else a * a if j == 2 else np.power(a, j)


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
    sc = P.scalars(lam)
    a = _lam(lam, sc)
    if not sc or a == 1.0:
        V.not_equal(np.asarray(a), "lam", 1.0, context="(the inverse moments diverge at lam = 1)")
    below = a < 1
    with np.errstate(divide="ignore", over="ignore", under="ignore"):  # inf = overflow of the true value
        if k == 1:
            out = P.pick(below, 1.0 / (1.0 - a), (1.0 / a) * (1.0 / (a - 1.0)))
        else:
            out = P.pick(below, np.power(1.0 / (1.0 - a), 3), np.power(1.0 / (a - 1.0), 3))
    return P.result(out)
