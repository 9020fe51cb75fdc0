"""Lemma 3.4's norm sandwich and Lemma B.1's minimum-norm maps (spec ``uniformity`` §2, §3)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._results import OperatorNormBounds

__all__ = ["min_opnorm_single_class", "operator_norm_bounds", "rank1_min_norm_map"]


@cites("uniformity:lemma3.4")
def operator_norm_bounds(A: Any, rtol: float | None = None) -> OperatorNormBounds:
    r"""Lemma 3.4: the operator-norm / Frobenius-norm sandwich.

    .. math:: \|A\|_2\le\|A\|_F\le\sqrt{\operatorname{rank}A}\,\|A\|_2

    Parameters
    ----------
    A : array_like, 2-D, finite, non-empty.
    rtol : float or None
        Relative singular-value tolerance for the rank (``None``: numpy's default
        ``S.max() * max(M, N) * eps``).

    Returns
    -------
    OperatorNormBounds
        ``(op_norm, fro_norm, rank, sqrt_rank_op_norm)`` = :math:`(\|A\|_2, \|A\|_F, \operatorname{rank}A,
        \sqrt{\operatorname{rank}A}\,\|A\|_2)`.

    References
    ----------
    Spec ``uniformity:lemma3.4`` (§2).
    """
    a = V.as_float_array(A, "A")
    if a.ndim != 2:
        raise DomainError(f"A must be a 2-D matrix (got ndim {a.ndim})")
    s = np.linalg.svd(a, compute_uv=False)
    op = float(s[0]) if s.size else 0.0
    fro = float(FL.scaled_norm(s))  # sqrt(sum s^2) overflowed past 1.3e154 and underflowed below 1.5e-154
    if rtol is None:
        tol = op * max(a.shape) * np.finfo(np.float64).eps
    else:
        tol = V.nonnegative(rtol, "rtol", scalar=True) * op
    rank = int(np.sum(s > tol))
    return OperatorNormBounds(op, fro, rank, math.sqrt(rank) * op)


@cites("uniformity:lemmaB.1")
@V.broadcasting()
def min_opnorm_single_class(c_norm: Any, R: Any) -> float | np.ndarray:
    r"""Lemma B.1: the least operator norm of a linear map sending every class sum to :math:`c`.

    .. math:: \min\|l\|_2=\frac{\|c\|}{2R}\quad\text{s.t. } l(\varphi(i)+\varphi(j))=c\ (i+j\equiv r),\ \|\varphi(i)\|\le R

    Parameters: ``c_norm >= 0``, ``R > 0`` (broadcasting).  References: spec ``uniformity:lemmaB.1`` (§3).
    """
    c = V.nonnegative(c_norm, "c_norm")
    r = V.positive(R, "R")
    with np.errstate(over="ignore", under="ignore"):  # inf / 0 only beyond the double range
        # one rounding: c / (2R) (2R is exact below 9e307; (c / R) / 2 past it)
        return V.scalar_or_array(np.where(r < 8e307, c / (2.0 * r), (c / r) / 2.0))


@cites("uniformity:lemmaB.1")
def rank1_min_norm_map(c: Any, u: Any) -> np.ndarray:
    r"""Lemma B.1: the rank-1 minimiser :math:`l^\star = c\,u^\top/(2\|u\|^2)` (all embeddings :math:`=u`).

    It satisfies :math:`l^\star(2u)=c` and :math:`\|l^\star\|_2=\|c\|/(2\|u\|)`.

    Parameters
    ----------
    c : array_like, 1-D, non-zero (the class target; the lemma needs :math:`c\ne0`).
    u : array_like, 1-D, non-zero (the common embedding, :math:`R=\|u\|`).

    Returns
    -------
    ndarray ``(len(c), len(u))``.

    References
    ----------
    Spec ``uniformity:lemmaB.1`` (§3).
    """
    cv = V.as_float_array(c, "c")
    uv = V.as_float_array(u, "u")
    if cv.ndim != 1 or uv.ndim != 1:
        raise DomainError(f"c and u must be 1-D vectors (got shapes {cv.shape}, {uv.shape})")
    if not np.any(cv):
        raise DomainError("c must be a non-zero vector (Lemma B.1 needs c != 0)")
    R = float(FL.scaled_norm(uv))
    if R == 0.0:
        raise DomainError("u must be a non-zero vector (R = |u| > 0)")
    # c (u/R)^T / (2R): |u|^2 = u @ u overflows past 1.3e154 (the map became 0) and underflows below 1e-154
    with np.errstate(over="ignore", under="ignore"):
        return np.outer(cv, uv / R) / (2.0 * R)
