"""Timescale separation: measured exponents and Lyu et al.'s implicit-bias time."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _pointwise as PW
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._conventions import decay_rate
from ._model import _alpha, _net_arrays
from ._products import _width_powers
from ._ntk import _abt

__all__ = ["feature_timescale_estimate", "implicit_bias_time", "implicit_bias_time_estimate", "initial_timescales",
           "separation_exponent"]


@cites("kramers:feature-speed", "kramers:sep")
def initial_timescales(X: Any, y: Any, W: Any, a: Any, alpha: float) -> dict[str, float]:
    r"""Initial-velocity timescales at t = 0 (exact at t = 0; λ = 0, summed squared loss, scalar output).

    .. math::
        \tau_r=\frac1{\lambda_{\max}(K_0^{(a)})},\quad \tau_W=\frac{\|W_0\|_F}{\|\dot W(0)\|_F},\quad
        \tau_K=\frac{\|K_0^{(a)}\|_F}{\|\dot K^{(a)}(0)\|_F},

    In words: the residual's relaxation time, and the times the weights and the readout kernel would take to
    change by their own size at their initial speed, with Ẇ(0) = −N^(−α)(D ⊙ r aᵀ)ᵀX, K̇⁽ᵃ⁾ = N^(−2α)(ṠSᵀ +
    SṠᵀ), Ṡ = D ⊙ (XẆᵀ). Also returns the median per-neuron feature speed ‖ẇⱼ(0)‖ (`kramers:feature-speed`;
    heuristic scaling N^(−1/2−α)). Their N-scaling (heuristic, measured: `separation_exponent`) is the
    corrected separation claim.

    Parameters
    ----------
    X : array_like
        The inputs, an (n, d) array: n samples of dimension d (for modular addition the one-hot pairs, d =
        2p).
    y : array_like
        The targets y, an (n,) array.
    W : array_like
        The first-layer weights (features), an (N, d) array: one row wⱼ per hidden unit, N the width.
    a : array_like
        The readout weights, an (N,) array (scalar output).
    alpha : float
        α, the width exponent of eq. (1): the output is N^(−α)·Σⱼ aⱼσ(wⱼ·x); 0 ≤ α ≤ 1/2 (not Lyu et al.'s
        initialisation scale, which is `init_scale`).

    Returns
    -------
    dict
        `tau_r`, `tau_W`, `tau_K` (gradient-flow time) and `feature_speed_median`. A timescale is `inf`
        where its speed is 0 (λ_max(K₀⁽ᵃ⁾) = 0 or a zero velocity: e.g. every ReLU unit inactive on `X`,
        when nothing moves).

    References
    ----------
    Spec `kramers:sep`, `kramers:feature-speed`.
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
@V.broadcasting()
def feature_timescale_estimate(N: Any, alpha: Any, a_std: Any = None) -> float | np.ndarray:
    r"""Estimate (heuristic scaling, no constant) of the time for an O(1) relative change of W.

    ‖ẇⱼ‖ = O(N^(−α)σ_a) with r = O(1), so t ~ N^α/σ_a (N^(1/2+α) for σ_a = N^(−1/2)). Only the exponent is a
    prediction (measured −0.501 / −1.002 for the speed at α = 0 / 0.5).

    Parameters
    ----------
    N : int or array_like
        The width N (number of hidden units), an integer ≥ 1.
    alpha : float or array_like
        α, the width exponent of eq. (1): the output is N^(−α)·Σⱼ aⱼσ(wⱼ·x); 0 ≤ α ≤ 1/2 (not Lyu et al.'s
        initialisation scale, which is `init_scale`).
    a_std : float or array_like or None
        σ_a > 0, the standard deviation of the initial readout weights; default `None`, meaning σ_a =
        N^(−1/2) (the paper's initialisation).

    Returns
    -------
    float or ndarray
        N^α/σ_a, in arbitrary units (only its N-scaling is meaningful): a float for numbers, else an array of
        the broadcast shape of the arguments.

    References
    ----------
    Spec `kramers:feature-speed` (heuristic).
    """
    N = V.counts(N, "N", 1)
    al = _alpha(alpha, array=True)
    if a_std is None:
        return PW.result(_width_powers(lambda n, a: FL.power_product([n], [a + 0.5]), N, al))
    sa = V.positive(a_std, "a_std", scalar=PW.scalars(a_std))
    return PW.result(_width_powers(lambda n, s, a: FL.power_product([n, s], [a, -1]), N, sa, al))


_SEP_MEASURES = ("paper_claim", "paper_algebra", "weights", "kernel", "kernel_integrated")


@cites("kramers:sep", "kramers:eq8")
def separation_exponent(alpha: Any, measure: str, a_init: str = "paper") -> float | np.ndarray:
    r"""Exponent e in τ_features/τ_readout ~ N^e (heuristic scaling; erratum kramers-3).

    | measure | `a_init="paper"` | `a_init="unit"` |
    |---|---|---|
    | "paper_claim" | 2α | (not defined) |
    | "paper_algebra" | 1 | 1 |
    | "weights" | 3/2 − α | 1/2 |
    | "kernel" | 2 − α | 1 |
    | "kernel_integrated" | 2 − 2α | 1 |

    "paper_claim" (N^(2α)) is the erratum: it contradicts the paper's own algebra (N/‖∇_wK‖, independent of
    α) and the measured exponents, which decrease with α (measured τ_W/τ_r: 1.511/1.265/1.013, τ_K/τ_r:
    1.983/1.754/1.500 at α = 0/0.25/0.5).

    Parameters
    ----------
    alpha : float or array_like
        α, the width exponent of eq. (1): the output is N^(−α)·Σⱼ aⱼσ(wⱼ·x); 0 ≤ α ≤ 1/2 (not Lyu et al.'s
        initialisation scale, which is `init_scale`); an array gives one exponent per α (a sweep in α).
    measure : {"paper_claim", "paper_algebra", "weights", "kernel", "kernel_integrated"}
        Which timescale ratio: the paper's claim, the paper's own algebra, the weights' relative change
        τ_W/τ_r, the kernel's τ_K/τ_r, or the kernel change integrated over the run.
    a_init : {"paper", "unit"}
        The readout initialisation: "paper" (default) aⱼ ~ N(0, 1/N); "unit" aⱼ ~ N(0, 1).

    Returns
    -------
    float or ndarray
        The exponent e: a float for a number α, else an array of the shape of `alpha` (constant where the
        exponent does not depend on α).

    References
    ----------
    Spec `kramers:sep`, `kramers:eq8`.
    """
    al = _alpha(alpha, array=True)  # a float for a number, else a float64 array
    measure = V.choice(measure, "measure", _SEP_MEASURES)
    a_init = V.choice(a_init, "a_init", ("paper", "unit"))
    if a_init == "unit" and measure == "paper_claim":
        raise DomainError("measure 'paper_claim' is defined only for a_init='paper'")
    return PW.result(_sep_exponent(al, measure, a_init))


def _sep_exponent(al: Any, measure: str, a_init: str) -> Any:
    """The table of `separation_exponent` at validated α (a float, or a float64 array: the same operations)."""
    if a_init == "paper":
        if measure == "paper_claim":
            return 2.0 * al
        if measure == "weights":
            return 1.5 - al
        if measure == "kernel":
            return 2.0 - al
        if measure == "kernel_integrated":
            return 2.0 - 2.0 * al
        c = 1.0  # paper_algebra
    else:
        c = 0.5 if measure == "weights" else 1.0
    return c if type(al) is float else np.full(al.shape, c)


@cites("kramers:lyu")
@V.broadcasting()
def implicit_bias_time_estimate(init_scale: Any, lam: Any, penalty: str = "eq2") -> float | np.ndarray:
    r"""Estimate (heuristic) of Lyu et al.'s kernel-to-rich switching time t⋆ ≈ ln s/γ.

    .. math:: t_\star\simeq\frac{\ln s}{\gamma}=\frac{\ln s}{2\lambda}\ (\texttt{"eq2"}),\quad\frac{\ln s}{\lambda}\ (\texttt{"half"}),

    In words: the log of the initialisation scale s over the decay rate γ, up to an additive O(1/γ) constant;
    only the slope dt⋆/d ln s = 1/γ is a prediction (measured on a diagonal linear net: 25.00 against 1/(2λ) =
    25). Also available as `implicit_bias_time`.

    Parameters
    ----------
    init_scale : float or array_like
        s, Lyu et al.'s initialisation scale (their α ≫ 1; symbol clash C4, not the width exponent
        `alpha`); s > 1.
    lam : float or array_like
        λ, the weight-decay coefficient of the penalty named by `penalty`; λ > 0.
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.

    Returns
    -------
    float or ndarray
        t⋆ in gradient-flow time, the broadcast shape of `init_scale` and `lam`.

    References
    ----------
    Spec `kramers:lyu`; Lyu et al. (2024).
    """
    s = V.as_float_array(init_scale, "init_scale")
    if np.any(s <= 1):
        raise DomainError(f"init_scale must be > 1 (got {float(s[s <= 1].flat[0]) if s.ndim else float(s)!r})")
    g = decay_rate(lam, penalty)
    with np.errstate(over="ignore"):  # inf only where ln s / gamma exceeds 1.8e308
        return V.scalar_or_array(np.log(s) / g)


implicit_bias_time = implicit_bias_time_estimate
"""A second name of `implicit_bias_time_estimate` (the same function): Lyu et al.'s switching time ln s/γ."""
