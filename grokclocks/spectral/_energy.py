"""Spectral: the end-to-end energy."""

from __future__ import annotations

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._helpers import _depth
from ._schatten import _scaled_penalty, _schatten_setup


@cites("clocks:eq4.2")
def end_to_end_energy(loss_value, W, lam, p, *, rtol=None):
    r"""End-to-end energy :math:`\mathcal E(W)=\mathcal L(W)+\lambda\lVert W\rVert_{S_p}^p`.

    Parameters
    ----------
    loss_value : float or array_like
        :math:`\mathcal L(W)` (finite), broadcast against the stack of ``W``.
    W : array_like, shape (..., m, n)
    lam : float >= 0
    p : float > 0 (:math:`p=2/L` for depth :math:`L`)
    rtol : float >= 0, optional (see :func:`schatten_penalty`)

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``clocks:eq4.2`` (paper eq. 4.2).
    """
    lv = V.finite(loss_value, "loss_value")
    la = V.nonnegative(lam, "lam")
    return V.scalar_or_array(_energy(lv, W, [la], p, rtol))


def _energy(lv: np.ndarray, W, coef: list, p, rtol) -> np.ndarray:
    """loss + prod(coef) * ||W||_{S_p}^p without forming an overflowing penalty or coefficient."""
    pa, s, s1, r = _schatten_setup(W, p, None, rtol)
    with np.errstate(over="ignore"):
        return lv + _scaled_penalty(pa, s, s1, r, coef)


@cites("clocks:eq4.2", "clocks:eq2.7")
def end_to_end_energy_from_weight_decay(loss_value, W, mu, depth, *, rtol=None):
    r"""End-to-end energy induced by layerwise decay :math:`\mu`:
    :math:`\mathcal L(W)+\frac{\mu L}{2}\sum_i\sigma_i^{2/L}`.

    Equals :math:`\min_{W_L\cdots W_1=W}\big[\mathcal L+\frac\mu2\sum_l\lVert W_l\rVert_F^2\big]`
    (``clocks:eq2.7``, :math:`\lambda=\mu L/2`, :math:`p=2/L`).

    Parameters
    ----------
    loss_value : float or array_like; W : array_like (..., m, n); mu : float >= 0; depth : int >= 1
    rtol : float >= 0, optional

    References
    ----------
    Spec ``clocks:eq4.2``, ``clocks:eq2.7``.
    """
    L = _depth(depth)
    lv = V.finite(loss_value, "loss_value")
    m = V.nonnegative(mu, "mu", scalar=True)
    return V.scalar_or_array(_energy(lv, W, [m, L / 2.0], 2.0 / L, rtol))  # lambda = mu L / 2, never formed
