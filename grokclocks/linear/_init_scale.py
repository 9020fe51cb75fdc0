"""Levi et al.: the initialisation scale (eq. 33): loss factor and effective threshold."""

from __future__ import annotations

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._conventions import _eps


@cites("levi:init-rescale")
def init_scale_factor(alpha):
    r"""Factor by which both losses grow when the student init is rescaled, :math:`S_0\to\alpha S_0`.

    .. math:: c_\alpha=\frac{\mathbb E\|D_0\|_F^2(\alpha)}{\mathbb E\|D_0\|_F^2(1)}=\frac{1+\alpha^2}{2}

    Parameters
    ----------
    alpha : float or array_like
        Any real :math:`\alpha` (0 allowed).

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``levi:init-rescale`` (Levi et al. §3.1.3; erratum levi-18).
    """
    a = V.finite(alpha, "alpha")
    with np.errstate(over="ignore"):  # inf = the factor itself beyond 1.8e308 (|alpha| > 1.9e154)
        return V.scalar_or_array(0.5 * (1.0 + a * a))


@cites("levi:init-rescale")
@V.broadcasting()
def effective_eps(eps, alpha):
    r"""Threshold that gives the :math:`\alpha=1` losses the accuracies of init scale :math:`\alpha` (γ = 0).

    .. math:: \epsilon_{\rm eff}=\frac{\epsilon}{c_\alpha}=\frac{2\epsilon}{1+\alpha^2}

    Rescaling the init does *not* leave the grokking time unchanged (paper's claim): e.g.
    λ=0.5, ε=1e-3: Δt = 412.5, 431.3, 463.2, 497.6 for α = 0.5, 1, 2, 4.

    Parameters
    ----------
    eps : float or array_like
        :math:`\epsilon>0`.
    alpha : float or array_like
        Any real :math:`\alpha`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``levi:init-rescale``.
    """
    e = _eps(eps)
    a = V.finite(alpha, "alpha")
    h = np.hypot(1.0, a)  # sqrt(1 + alpha^2): (1 + alpha^2) overflows at alpha = 1e155
    with np.errstate(under="ignore"):
        return V.scalar_or_array(2.0 * e / h / h)
