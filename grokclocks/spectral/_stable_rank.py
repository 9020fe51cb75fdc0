"""Spectral: the stable rank."""

from __future__ import annotations

import numpy as np

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._helpers import _matrix, _svals


@cites("clocks:eq2.3", "clocks:appF4-scale", "clocks:thm4.4")
def stable_rank(W):
    r"""Stable rank of a matrix (or of each matrix of a stack).

    .. math:: \operatorname{srank}(W)=\frac{\lVert W\rVert_F^2}{\lVert W\rVert_2^2}
        =\frac{\sum_i\sigma_i^2}{\sigma_1^2},\qquad 1\le\operatorname{srank}(W)\le\operatorname{rank}(W).

    Scale invariant (``clocks:appF4-scale``): :math:`\operatorname{srank}(cW)=\operatorname{srank}(W)`,
    :math:`c\ne0`; continuous away from 0, so a converging trajectory has converging stable rank
    (``clocks:thm4.4``).  :math:`\lVert W\rVert_F^2` is computed directly, :math:`\sigma_1` by SVD;
    the matrix is first divided by its largest entry (no overflow or underflow).

    Parameters
    ----------
    W : array_like, shape (..., m, n)
        Finite, nonzero matrix (each matrix of a stack nonzero).

    Returns
    -------
    float or ndarray of shape ``W.shape[:-2]``

    Raises
    ------
    DomainError
        Fewer than 2 dimensions, non-finite entries, or a zero matrix.

    References
    ----------
    Spec ``clocks:eq2.3`` (paper eq. 2.3), ``clocks:appF4-scale``, ``clocks:thm4.4``.
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
    r"""Stable rank :math:`\sum_i\sigma_i^2/\max_i\sigma_i^2` from singular values (last axis).

    Parameters
    ----------
    sigma : array_like, shape (..., k)
        Nonnegative, finite, not all zero.

    Returns
    -------
    float or ndarray of shape ``sigma.shape[:-1]``

    References
    ----------
    Spec ``clocks:eq2.3``.
    """
    s = np.atleast_1d(V.as_float_array(sigma, "sigma"))
    if np.any(s < 0):
        raise DomainError(f"sigma must be >= 0 (got {float(s[s < 0].flat[0])!r})")
    s1 = np.max(s, axis=-1)
    if np.any(s1 == 0):
        raise DomainError("sigma must not be all zero for stable_rank (got the zero matrix)")
    r = s / s1[..., None]
    return V.scalar_or_array(np.sum(r * r, axis=-1))
