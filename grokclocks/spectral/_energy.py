"""Spectral: the end-to-end energy."""

from __future__ import annotations

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._helpers import _depth
from ._schatten import _scaled_penalty, _schatten_setup


@cites("clocks:eq4.2")
def end_to_end_energy(loss_value, W, lam, p, *, rtol=None):
    r"""End-to-end energy E(W) = L(W) + λ·‖W‖_{S_p}^p of a deep linear network's map W.

    The penalty is formed as in `schatten_penalty` (no overflowing intermediate); the arguments
    broadcast against the stack of `W`.

    Parameters
    ----------
    loss_value : float or array_like
        The loss L(W), finite; broadcast against the stack of `W`.
    W : array_like
        End-to-end map, a finite matrix of shape (m, n) or a stack (..., m, n).
    lam : float or array_like
        Penalty coefficient λ, finite and ≥ 0 (λ = μ·L/2 for layerwise weight decay μ at depth L).
    p : float or array_like
        Schatten exponent p, finite and > 0 (p = 2/L for depth L).
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 count as zero.  Default
        `None`: max(m, n)·ε; 0 disables the threshold.

    Returns
    -------
    float or numpy.ndarray
        E(W), a float for one matrix or an array of the broadcast shape.

    Raises
    ------
    DomainError
        If an argument is outside its domain above.

    References
    ----------
    Spec ID `clocks:eq4.2` (paper eq. 4.2).
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
    r"""End-to-end energy L(W) + (μ·L/2)·Σ_i σ_i^(2/L) induced by layerwise weight decay μ at depth L.

    It equals min over factorizations W_L⋯W_1 = W of L + (μ/2)·Σ_l ‖W_l‖_F² (eq. 2.7, with λ = μ·L/2
    and p = 2/L); λ is never formed, so a huge μ does not overflow.

    Parameters
    ----------
    loss_value : float or array_like
        The loss L(W), finite; broadcast against the stack of `W`.
    W : array_like
        End-to-end map, a finite matrix of shape (m, n) or a stack (..., m, n).
    mu : float
        Layerwise weight-decay coefficient μ (per-layer penalty (μ/2)·‖W_l‖_F²), a finite scalar ≥ 0.
    depth : int
        Depth L of the factorization, an integer ≥ 1.
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 count as zero.  Default
        `None`: max(m, n)·ε; 0 disables the threshold.

    Returns
    -------
    float or numpy.ndarray
        The energy, a float for one matrix or an array of the broadcast shape.

    Raises
    ------
    DomainError
        If an argument is outside its domain above.

    References
    ----------
    Spec IDs `clocks:eq4.2` (paper eq. 4.2) and `clocks:eq2.7` (eq. 2.7).
    """
    L = _depth(depth)
    lv = V.finite(loss_value, "loss_value")
    m = V.nonnegative(mu, "mu", scalar=True)
    return V.scalar_or_array(_energy(lv, W, [m, L / 2.0], 2.0 / L, rtol))  # lambda = mu L / 2, never formed
