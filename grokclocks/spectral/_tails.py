"""Spectral: spectral tails and Eckart-Young."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._drift import _scalar
from ._helpers import _matrix, _svals


@cites("clocks:appF4-tail", "clocks:appF4-scale")
def spectral_tail(W, k, *, normalized=True):
    r"""Rank-:math:`k` spectral tail of :math:`W`.

    .. math:: \tau_k(W)=\frac{\sum_{i>k}\sigma_i^2}{\sum_i\sigma_i^2}=\frac{\lVert W-W_k\rVert_F^2}{\lVert W\rVert_F^2}\in[0,1]

    or the raw tail :math:`\sum_{i>k}\sigma_i^2` (``normalized=False``).  The tail is summed from
    the trailing singular values (no cancellation).  :math:`\tau_k(aW)=\tau_k(W)`; the raw tail
    scales by :math:`a^2`.

    Parameters
    ----------
    W : array_like, shape (..., m, n)
    k : int in ``0 .. min(m, n)`` (``k = 0`` gives 1)
    normalized : bool

    Returns
    -------
    float or ndarray of shape ``W.shape[:-2]``

    Raises
    ------
    DomainError
        ``k`` out of range; a zero matrix with ``normalized=True``.

    References
    ----------
    Spec ``clocks:appF4-tail`` (paper App. F.4).
    """
    a = _matrix(W)
    kmax = min(a.shape[-2:])
    kk = V.integer_at_least(k, "k", 0)
    if kk > kmax:
        raise DomainError(f"k must be in 0..{kmax} = min(m, n) (got {kk})")
    normalized = V.flag(normalized, "normalized")
    s = _svals(a)
    scale = s[..., :1]
    if normalized:
        if np.any(scale == 0):
            raise DomainError("W must be nonzero for the normalized spectral tail (got the zero matrix)")
        r = s / scale
        return V.scalar_or_array(np.sum(r[..., kk:] ** 2, axis=-1) / np.sum(r * r, axis=-1))
    with np.errstate(over="ignore", under="ignore"):  # inf only where the tail exceeds 1.8e308
        return V.scalar_or_array(np.sum(s[..., kk:] ** 2, axis=-1))


@cites("clocks:thm5.2")
def eckart_young_rank(srank, eta, *, max_rank=None) -> int:
    r"""Output-effective dimension :math:`k=\lceil r_s/\eta^2\rceil` of Thm 5.2.

    With :math:`k` so chosen, :math:`\sigma_{k+1}\le\sqrt{\lVert W\rVert_F^2/(k+1)}\le\eta\lVert W\rVert_2`,
    hence :math:`\lVert Wh-WP_{V_k}h\rVert\le\eta\lVert W\rVert_2\lVert h\rVert` for every :math:`h`.
    :math:`r_s/\eta^2` is snapped to the nearest integer when within :math:`10^{-12}` relative before
    the ceiling (``ceil(2.7 / 0.3**2)`` would give 31 instead of 30).

    Parameters
    ----------
    srank : float >= 1
        Stable rank :math:`r_s`.
    eta : float in (0, 1]
        Relative output error.
    max_rank : int >= 0, optional
        Cap (e.g. ``min(m, n)``: beyond the rank the error is 0).

    Returns
    -------
    int
        Exact (a Python ``int``, computed in rational arithmetic), also where :math:`r_s/\eta^2`
        exceeds the largest double (``eta = 1e-200`` gives :math:`10^{400}`).

    References
    ----------
    Spec ``clocks:thm5.2`` (paper Thm 5.2).
    """
    rs = _scalar(srank, "srank")
    if rs < 1:
        raise DomainError(f"srank must be >= 1 (got {rs!r})")
    e = _scalar(eta, "eta")
    if not 0 < e <= 1:
        raise DomainError(f"eta must be in (0, 1] (got {e!r})")
    cap = None if max_rank is None else V.integer_at_least(max_rank, "max_rank", 0)
    x = Fraction(rs) / Fraction(e) ** 2  # exact: r_s / eta^2 may exceed 1.8e308 (eta = 1e-200 gives 1e400)
    xr = round(x)
    if abs(x - xr) <= Fraction(1e-12) * x:
        x = Fraction(xr)
    k = math.ceil(x)
    return k if cap is None else min(k, cap)


@cites("clocks:thm5.2")
def best_rank_k(W, k) -> np.ndarray:
    r"""Best rank-:math:`k` approximation :math:`W_k=U_k\Sigma_kV_k^\top` (Eckart–Young).

    Parameters
    ----------
    W : array_like, shape (m, n)
    k : int >= 0 (``k >= min(m, n)`` returns a copy of ``W``)

    Returns
    -------
    ndarray, shape (m, n)

    References
    ----------
    Spec ``clocks:thm5.2`` (Eckart & Young 1936).
    """
    a = _matrix(W, stack=False)
    kk = V.integer_at_least(k, "k", 0)
    if kk >= min(a.shape):
        return a.copy()
    U, s, Vt = np.linalg.svd(a, full_matrices=False)
    return (U[:, :kk] * s[:kk]) @ Vt[:kk]


@cites("clocks:thm5.2")
def principal_projection_error(W, k) -> float:
    r"""Operator-norm error of the rank-:math:`k` truncation: :math:`\lVert W-W_k\rVert_2=\sigma_{k+1}`.

    Equals :math:`\sup_{h\ne0}\lVert Wh-WP_{V_k}h\rVert/\lVert h\rVert`; 0 for :math:`k\ge\min(m,n)`.

    Parameters
    ----------
    W : array_like, shape (m, n)
    k : int >= 0

    Returns
    -------
    float

    References
    ----------
    Spec ``clocks:thm5.2``.
    """
    a = _matrix(W, stack=False)
    kk = V.integer_at_least(k, "k", 0)
    s = _svals(a)
    return float(s[kk]) if kk < s.size else 0.0
