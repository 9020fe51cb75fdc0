"""Timescale separation: measured exponents and Lyu et al.'s implicit-bias time."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._conventions import decay_rate
from ._model import _alpha, _net_arrays
from ._ntk import _abt

__all__ = ["feature_timescale_estimate", "implicit_bias_time", "implicit_bias_time_estimate", "initial_timescales",
           "separation_exponent"]


@cites("kramers:feature-speed", "kramers:sep")
def initial_timescales(X: Any, y: Any, W: Any, a: Any, alpha: float) -> dict[str, float]:
    r"""Initial-velocity timescales at t = 0 (exact at t = 0; λ = 0, summed squared loss, scalar output).

    .. math::
        \tau_r=\frac1{\lambda_{\max}(K_0^{(a)})},\quad \tau_W=\frac{\|W_0\|_F}{\|\dot W(0)\|_F},\quad
        \tau_K=\frac{\|K_0^{(a)}\|_F}{\|\dot K^{(a)}(0)\|_F},

    :math:`\dot W(0)=-N^{-\alpha}(D\odot r a^\top)^\top X`, :math:`\dot K^{(a)}=N^{-2\alpha}(\dot SS^\top+S\dot S^\top)`,
    :math:`\dot S=D\odot(X\dot W^\top)`.  Also returns the median per-neuron feature speed
    :math:`\|\dot w_j(0)\|` (``kramers:feature-speed``; heuristic scaling :math:`N^{-1/2-\alpha}`).
    Their N-scaling (heuristic, measured: ``separation_exponent``) is the corrected separation claim.

    Returns
    -------
    dict(tau_r, tau_W, tau_K, feature_speed_median)
        A timescale is ``inf`` where its speed is 0 (:math:`\lambda_{\max}(K_0^{(a)})=0` or a zero
        velocity: e.g. every ReLU unit inactive on ``X``, when nothing moves).

    References
    ----------
    ``kramers:sep``, ``kramers:feature-speed``.
    """
    X, W, a = _net_arrays(X, W, a)
    if a.ndim != 1:
        raise DomainError(f"a must be 1-D (scalar output) (got shape {a.shape})")
    y = V.as_float_array(y, "y")
    if y.shape != (X.shape[0],):
        raise DomainError(f"y must have shape ({X.shape[0]},) (got {y.shape})")
    al = _alpha(alpha)
    N = W.shape[0]
    c = N ** (-al)
    Z = X @ W.T
    S = np.maximum(Z, 0.0)
    D = (Z > 0).astype(np.float64)
    r = c * (S @ a) - y
    Wdot = -c * ((D * r[:, None]) * a[None, :]).T @ X
    Sdot = D * (X @ Wdot.T)
    Ka = c * c * _abt(S, S)
    M = c * c * _abt(Sdot, S)
    Kdot = M + M.T
    return dict(tau_r=_timescale(1.0, float(np.linalg.eigvalsh(Ka)[-1])),
                tau_W=_timescale(float(np.linalg.norm(W)), float(np.linalg.norm(Wdot))),
                tau_K=_timescale(float(np.linalg.norm(Ka)), float(np.linalg.norm(Kdot))),
                feature_speed_median=float(np.median(np.linalg.norm(Wdot, axis=1))))


def _timescale(size: float, speed: float) -> float:
    """size / speed, inf where the speed is 0 (no motion at t = 0: every ReLU unit inactive on X makes
    K_a = 0, W' = 0 and K' = 0, so the residual never relaxes and nothing moves, whatever the size)."""
    return math.inf if speed == 0.0 else size / speed


@cites("kramers:feature-speed")
def feature_timescale_estimate(N: int, alpha: float, a_std: float | None = None) -> float:
    r"""Estimate (heuristic scaling, no constant): time for an O(1) relative change of W.

    :math:`\|\dot w_j\|=O(N^{-\alpha}\sigma_a)` with :math:`r=O(1)`, so :math:`t\sim N^{\alpha}/\sigma_a`
    (:math:`N^{1/2+\alpha}` for :math:`\sigma_a=N^{-1/2}`).  Only the exponent is a prediction
    (measured −0.501 / −1.002 for the speed at α = 0 / 0.5).

    References
    ----------
    ``kramers:feature-speed`` (heuristic).
    """
    N = V.count(N, "N", 1)
    al = _alpha(alpha)
    if a_std is None:
        return float(FL.power_product([float(N)], [al + 0.5]))
    return float(FL.power_product([float(N), V.positive(a_std, "a_std", scalar=True)], [al, -1]))


_SEP_MEASURES = ("paper_claim", "paper_algebra", "weights", "kernel", "kernel_integrated")


@cites("kramers:sep", "kramers:eq8")
def separation_exponent(alpha: float, measure: str, a_init: str = "paper") -> float:
    r"""Exponent e in :math:`\tau_{\rm features}/\tau_{\rm readout}\sim N^{e}` (heuristic scaling; erratum E3).

    ==================  ===================  ================
    measure             ``a_init="paper"``   ``a_init="unit"``
    ==================  ===================  ================
    paper_claim         :math:`2\alpha`      (not defined)
    paper_algebra       1                    1
    weights             :math:`3/2-\alpha`   1/2
    kernel              :math:`2-\alpha`     1
    kernel_integrated   :math:`2-2\alpha`    1
    ==================  ===================  ================

    ``"paper_claim"`` (:math:`N^{2\alpha}`) is **the erratum**: it contradicts the paper's own algebra
    (:math:`N/\|\nabla_wK\|`, α-independent) and the measured exponents, which *decrease* with α (measured
    :math:`\tau_W/\tau_r`: 1.511/1.265/1.013, :math:`\tau_K/\tau_r`: 1.983/1.754/1.500 at α = 0/0.25/0.5).
    ``a_init="paper"``: :math:`a_j\sim\mathcal N(0,1/N)`; ``"unit"``: :math:`a_j\sim\mathcal N(0,1)`.

    References
    ----------
    ``kramers:sep``, ``kramers:eq8``.
    """
    al = _alpha(alpha)
    measure = V.choice(measure, "measure", _SEP_MEASURES)
    a_init = V.choice(a_init, "a_init", ("paper", "unit"))
    if a_init == "paper":
        return {"paper_claim": 2 * al, "paper_algebra": 1.0, "weights": 1.5 - al, "kernel": 2.0 - al,
                "kernel_integrated": 2.0 - 2.0 * al}[measure]
    if measure == "paper_claim":
        raise DomainError("measure 'paper_claim' is defined only for a_init='paper'")
    return {"paper_algebra": 1.0, "weights": 0.5, "kernel": 1.0, "kernel_integrated": 1.0}[measure]


@cites("kramers:lyu")
@V.broadcasting()
def implicit_bias_time_estimate(init_scale: Any, lam: Any, penalty: str = "eq2") -> float | np.ndarray:
    r"""Estimate (heuristic) of Lyu et al.'s kernel-to-rich switching time :math:`t_\star\simeq\ln s/\gamma`.

    .. math:: t_\star\simeq\frac{\ln s}{\gamma}=\frac{\ln s}{2\lambda}\ (\texttt{"eq2"}),\quad\frac{\ln s}{\lambda}\ (\texttt{"half"}),

    up to an additive :math:`O(1/\gamma)` constant; only the slope :math:`dt_\star/d\ln s=1/\gamma` is a
    prediction (measured on a diagonal linear net: 25.00 vs 1/(2λ) = 25).  ``init_scale`` is Lyu et al.'s
    :math:`\alpha\gg1` (symbol clash C4), domain > 1.

    References
    ----------
    ``kramers:lyu``; Lyu et al. (2024).
    """
    s = V.as_float_array(init_scale, "init_scale")
    if np.any(s <= 1):
        raise DomainError(f"init_scale must be > 1 (got {float(s[s <= 1].flat[0]) if s.ndim else float(s)!r})")
    g = decay_rate(lam, penalty)
    with np.errstate(over="ignore"):  # inf only where ln s / gamma exceeds 1.8e308
        return V.scalar_or_array(np.log(s) / g)


implicit_bias_time = implicit_bias_time_estimate
