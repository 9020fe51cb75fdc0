"""Spectral: the stable rank."""

from __future__ import annotations

import numpy as np

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._helpers import _matrix, _svals


@cites("clocks:eq2.3", "clocks:appF4-scale", "clocks:thm4.4")
def stable_rank(W):
    r"""Stable rank srank(W) = ‖W‖_F²/‖W‖₂² of a matrix, or of each matrix of a stack.

    .. math:: \operatorname{srank}(W)=\frac{\lVert W\rVert_F^2}{\lVert W\rVert_2^2}
        =\frac{\sum_i\sigma_i^2}{\sigma_1^2},\qquad 1\le\operatorname{srank}(W)\le\operatorname{rank}(W).

    In words: the squared Frobenius norm over the squared spectral norm, Σ_i σ_i²/σ_1², between 1 and
    rank(W).  Scale invariant (spec ID `clocks:appF4-scale`): srank(c·W) = srank(W) for c ≠ 0;
    continuous away from 0, so a converging trajectory has a converging stable rank (`clocks:thm4.4`).
    ‖W‖_F² is computed directly and σ_1 by SVD, after dividing the matrix by its largest entry (no
    overflow or underflow).

    Parameters
    ----------
    W : array_like
        A finite, nonzero matrix of shape (m, n), or a stack of shape (..., m, n) whose every matrix is
        nonzero.

    Returns
    -------
    float or numpy.ndarray
        The stable rank, ≥ 1: a float for one matrix, a float64 array of shape W.shape[:-2] for a
        stack.

    Raises
    ------
    DomainError
        If `W` has fewer than 2 dimensions, a zero-length dimension, non-finite entries, or a zero
        matrix.

    References
    ----------
    Spec IDs `clocks:eq2.3` (paper eq. 2.3), `clocks:appF4-scale` (App. F.4) and `clocks:thm4.4`
    (Theorem 4.4).
    """
    a = _matrix(W)
    scale = np.max(np.abs(a), axis=(-2, -1))
    if np.any(scale == 0):
        raise DomainError("W must be nonzero for stable_rank (got the zero matrix)")
    a = a / scale[..., None, None]
    fro2 = np.sum(a * a, axis=(-2, -1))
    s1 = _svals(a)[..., 0]
    return V.scalar_or_array(fro2 / (s1 * s1))


@cites("clocks:eq2.3")
def stable_rank_from_singular_values(sigma):
    r"""Stable rank Σ_i σ_i²/max_i σ_i² computed from given singular values (along the last axis).

    Parameters
    ----------
    sigma : array_like
        Singular values σ_i along the last axis, shape (k,) or (..., k): finite, ≥ 0, in any order,
        not all zero in any vector.

    Returns
    -------
    float or numpy.ndarray
        The stable rank, ≥ 1: a float for one vector, a float64 array of shape sigma.shape[:-1] for a
        stack.

    Raises
    ------
    DomainError
        If `sigma` is empty, not finite, has a negative entry, or a vector of zeros.

    References
    ----------
    Spec ID `clocks:eq2.3` (paper eq. 2.3).
    """
    s = np.atleast_1d(V.as_float_array(sigma, "sigma"))
    if np.any(s < 0):
        raise DomainError(f"sigma must be >= 0 (got {float(s[s < 0].flat[0])!r})")
    s1 = np.max(s, axis=-1)
    if np.any(s1 == 0):
        raise DomainError("sigma must not be all zero for stable_rank (got the zero matrix)")
    r = s / s1[..., None]
    return V.scalar_or_array(np.sum(r * r, axis=-1))
