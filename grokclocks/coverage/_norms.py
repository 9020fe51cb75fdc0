"""Lemma 3.4's norm sandwich and Lemma B.1's minimum-norm maps (spec `uniformity` §2, §3)."""

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
    r"""Lemma 3.4: the operator-norm and Frobenius-norm sandwich of a matrix.

    .. math:: \|A\|_2\le\|A\|_F\le\sqrt{\operatorname{rank}A}\,\|A\|_2

    In words: ‖A‖₂ ≤ ‖A‖_F ≤ √(rank A)·‖A‖₂, all three computed from the singular values.

    Parameters
    ----------
    A : array_like
        The matrix, a finite, non-empty 2-D array.
    rtol : float, optional
        Relative singular-value tolerance of the rank, finite and ≥ 0: singular values ≤ rtol·‖A‖₂ do
        not count.  Default `None`: NumPy's max(m, n)·ε.

    Returns
    -------
    OperatorNormBounds
        The named tuple (op_norm, fro_norm, rank, sqrt_rank_op_norm) = (‖A‖₂, ‖A‖_F, rank A,
        √(rank A)·‖A‖₂).

    Raises
    ------
    DomainError
        If `A` is empty, not finite or not 2-D, or `rtol` is negative.

    References
    ----------
    Spec ID `uniformity:lemma3.4` (paper Lemma 3.4).
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
    r"""Lemma B.1: the least operator norm ‖c‖/(2R) of a linear map sending every class sum to c.

    .. math:: \min\|l\|_2=\frac{\|c\|}{2R}\quad\text{s.t. } l(\varphi(i)+\varphi(j))=c\ (i+j\equiv r),\ \|\varphi(i)\|\le R

    In words: among linear maps l with l(φ(i) + φ(j)) = c for every pair of class r and embeddings of
    norm at most R, the smallest operator norm is ‖c‖/(2R).  The arguments broadcast together.

    Parameters
    ----------
    c_norm : float or array_like
        Norm ‖c‖ of the class target, finite and ≥ 0.
    R : float or array_like
        Bound R on the norm of every token embedding φ(i), finite and > 0.

    Returns
    -------
    float or numpy.ndarray
        ‖c‖/(2R) ≥ 0, of the broadcast shape (one rounding).

    Raises
    ------
    DomainError
        If `c_norm` is negative or not finite, `R` is not finite and > 0, or the arrays do not
        broadcast.

    References
    ----------
    Spec ID `uniformity:lemmaB.1` (paper Lemma B.1).
    """
    c = V.nonnegative(c_norm, "c_norm")
    r = V.positive(R, "R")
    with np.errstate(over="ignore", under="ignore"):  # inf / 0 only beyond the double range
        # one rounding: c / (2R) (2R is exact below 9e307; (c / R) / 2 past it)
        return V.scalar_or_array(np.where(r < 8e307, c / (2.0 * r), (c / r) / 2.0))


@cites("uniformity:lemmaB.1")
def rank1_min_norm_map(c: Any, u: Any) -> np.ndarray:
    r"""Lemma B.1: the rank-1 minimiser l* = c·uᵀ/(2‖u‖²) when every embedding equals u.

    It satisfies l*(2u) = c and ‖l*‖₂ = ‖c‖/(2‖u‖); it is formed as c·(u/R)ᵀ/(2R) with R = ‖u‖, so
    neither a huge nor a tiny u loses the map.

    Parameters
    ----------
    c : array_like
        The class target c, a finite, non-zero 1-D vector (the lemma needs c ≠ 0).
    u : array_like
        The common embedding u, a finite, non-zero 1-D vector (R = ‖u‖).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (len(c), len(u)), the map l*.

    Raises
    ------
    DomainError
        If `c` or `u` is not a finite 1-D vector, or either is zero.

    References
    ----------
    Spec ID `uniformity:lemmaB.1` (paper Lemma B.1).
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
