"""Spectral: spectral tails and Eckart-Young."""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._drift import _scalar
from ._helpers import _matrix, _svals


@cites("clocks:appF4-tail", "clocks:appF4-scale")
def spectral_tail(W, k, *, normalized=True):
    r"""Rank-k spectral tail of W: the share of ‖W‖_F² beyond the top k singular values.

    .. math:: \tau_k(W)=\frac{\sum_{i>k}\sigma_i^2}{\sum_i\sigma_i^2}=\frac{\lVert W-W_k\rVert_F^2}{\lVert W\rVert_F^2}\in[0,1]

    In words: τ_k(W) = Σ_{i>k} σ_i²/Σ_i σ_i², the relative squared distance to the best rank-k
    approximation W_k; with `normalized=False` the raw tail Σ_{i>k} σ_i².  The tail is summed from the
    trailing singular values (no cancellation).  τ_k(a·W) = τ_k(W); the raw tail scales by a².

    Parameters
    ----------
    W : array_like
        The matrix, finite, of shape (m, n), or a stack (..., m, n).
    k : int
        Number of leading singular values excluded, an integer in [0, min(m, n)] (k = 0 gives τ = 1).
    normalized : bool, optional
        `True` (default): the normalized tail τ_k in [0, 1]; `False`: the raw tail Σ_{i>k} σ_i².

    Returns
    -------
    float or numpy.ndarray
        The tail, a float for one matrix or an array of shape W.shape[:-2]; the raw tail is `inf`
        only where it exceeds 1.8·10³⁰⁸.

    Raises
    ------
    DomainError
        If `W` is not a finite matrix with nonzero dimensions, `k` is out of range, `normalized` is not
        a bool, or a matrix is zero with `normalized=True`.

    References
    ----------
    Spec IDs `clocks:appF4-tail` and `clocks:appF4-scale` (paper App. F.4).
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


# r_s / eta^2 snapped to an integer within this relative distance: 1e-12 as the exact ratio of two integers
_SNAP_NUM, _SNAP_DEN = (1e-12).as_integer_ratio()


@cites("clocks:thm5.2")
def eckart_young_rank(srank, eta, *, max_rank=None) -> int:
    r"""Output-effective dimension k = ⌈r_s/η²⌉ of Theorem 5.2.

    With k so chosen, σ_{k+1} ≤ √(‖W‖_F²/(k + 1)) ≤ η·‖W‖₂, hence ‖W·h − W·P_{V_k}·h‖ ≤ η·‖W‖₂·‖h‖ for
    every h (P_{V_k} the projection on the top k right singular vectors).  r_s/η² is snapped to the
    nearest integer when within a relative 10⁻¹² of one before the ceiling (ceil(2.7/0.3²) would give
    31 instead of 30).

    Parameters
    ----------
    srank : float
        Stable rank r_s of W (see `stable_rank`), a finite scalar ≥ 1.
    eta : float
        Relative output error η, in (0, 1].
    max_rank : int, optional
        Cap on k, an integer ≥ 0 (e.g. min(m, n): beyond the rank the error is 0).  Default `None`:
        no cap.

    Returns
    -------
    int
        k, an exact Python int computed in rational arithmetic, also where r_s/η² exceeds the largest
        double (η = 10⁻²⁰⁰ gives 10⁴⁰⁰).

    Raises
    ------
    DomainError
        If `srank` is not a finite scalar ≥ 1, `eta` is outside (0, 1], or `max_rank` is not an
        integer ≥ 0.

    References
    ----------
    Spec ID `clocks:thm5.2` (paper Theorem 5.2).
    """
    rs = _scalar(srank, "srank")
    if rs < 1:
        raise DomainError(f"srank must be >= 1 (got {rs!r})")
    e = _scalar(eta, "eta")
    if not 0 < e <= 1:
        raise DomainError(f"eta must be in (0, 1] (got {e!r})")
    cap = None if max_rank is None else V.integer_at_least(max_rank, "max_rank", 0)
    # x = r_s / eta^2 = num / den exactly, in integers (the doubles' exact ratios): x may exceed 1.8e308
    # (eta = 1e-200 gives 1e400)
    a, b = rs.as_integer_ratio()
    c, d = e.as_integer_ratio()
    num, den = a * d * d, b * c * c
    q, rem = divmod(num, den)
    xr = q + (2 * rem > den or (2 * rem == den and q % 2 == 1))  # the nearest integer, ties to even
    if abs(num - xr * den) * _SNAP_DEN <= _SNAP_NUM * num:  # |x - xr| <= 1e-12 x: x snapped to xr
        k = xr
    else:
        k = q + (rem > 0)  # ceil(x)
    return k if cap is None else min(k, cap)


@cites("clocks:thm5.2")
def best_rank_k(W, k) -> np.ndarray:
    r"""Best rank-k approximation W_k = U_k·Σ_k·V_kᵀ of W (Eckart–Young).

    Parameters
    ----------
    W : array_like
        The matrix, a finite 2-D array of shape (m, n) with nonzero dimensions.
    k : int
        Rank of the approximation, an integer ≥ 0 (k ≥ min(m, n) returns a copy of W).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (m, n), the truncated SVD of W to its top k singular values.

    Raises
    ------
    DomainError
        If `W` is not a finite 2-D matrix or `k` is not an integer ≥ 0.

    References
    ----------
    Spec ID `clocks:thm5.2` (paper Theorem 5.2; Eckart & Young 1936).
    """
    a = _matrix(W, stack=False)
    kk = V.integer_at_least(k, "k", 0)
    if kk >= min(a.shape):
        return a.copy()
    U, s, Vt = np.linalg.svd(a, full_matrices=False)
    return (U[:, :kk] * s[:kk]) @ Vt[:kk]


@cites("clocks:thm5.2")
def principal_projection_error(W, k) -> float:
    r"""Operator-norm error of the rank-k truncation: ‖W − W_k‖₂ = σ_{k+1}.

    It equals sup_{h≠0} ‖W·h − W·P_{V_k}·h‖/‖h‖, and 0 for k ≥ min(m, n).

    Parameters
    ----------
    W : array_like
        The matrix, a finite 2-D array of shape (m, n) with nonzero dimensions.
    k : int
        Rank of the truncation, an integer ≥ 0.

    Returns
    -------
    float
        σ_{k+1} (1-based), ≥ 0; 0 when k ≥ min(m, n).

    Raises
    ------
    DomainError
        If `W` is not a finite 2-D matrix or `k` is not an integer ≥ 0.

    References
    ----------
    Spec ID `clocks:thm5.2` (paper Theorem 5.2).
    """
    a = _matrix(W, stack=False)
    kk = V.integer_at_least(k, "k", 0)
    s = _svals(a)
    return float(s[kk]) if kk < s.size else 0.0
