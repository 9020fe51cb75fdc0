"""Readout dynamics with weight decay: residual, kernel norms and timescales."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _pointwise as PW
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._conventions import _decay_parts, decay_rate, kernel_rate_factor
from ._model import _alpha
from ._products import _width_powers
from ._ntk import _top

__all__ = ["feature_kernel_norm", "readout_kernel_norm", "readout_residual", "readout_timescale"]


def _sym(K: Any, name: str) -> np.ndarray:
    raw = K
    K = V.as_float_array(K, name)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise DomainError(f"{name} must be a square matrix (got shape {K.shape})")
    scale = max(float(np.max(np.abs(K))), 1e-300)
    tol = V.roundoff_tol(raw, K.shape[0], floor=1e-10)  # float32 input is judged at its own precision
    if np.max(np.abs(K - K.T)) > tol * scale:
        raise DomainError(f"{name} must be symmetric to {tol:.2g} relative (got asymmetry {np.max(np.abs(K - K.T)) / scale:.3g})")
    return 0.5 * (K + K.T)


def _times(t: Any, name: str = "t") -> np.ndarray:
    t = V.nonnegative(t, name)
    if t.ndim > 1:
        raise DomainError(f"{name} must be a scalar or 1-D (got shape {t.shape})")
    return t


@cites("kramers:eq5")
def readout_residual(K_a: Any, y: Any, r0: Any, lam: float, t: Any, penalty: str = "eq2",
                     loss_norm: str = "sum") -> np.ndarray:
    r"""Residual of readout-only gradient flow with weight decay (eq. 5, corrected; erratum kramers-2).

    Features frozen, r = Φa − y, ȧ = −Φᵀr − γa:

    .. math::
        \dot r=-(K+\gamma I)\,r-\gamma y,\qquad r(t)=r_\star+e^{-(K+\gamma I)t}(r_0-r_\star),\qquad
        r_\star=-\gamma(K+\gamma I)^{-1}y,

    In words: the residual relaxes from r₀ to r⋆ = −γ(K + γI)⁻¹y at the rates of K + γI, with γ = `decay_rate`
    (2λ for "eq2") and K → K/n for `loss_norm="mean"`. The paper drops the −γy forcing and claims r → 0; r⋆ is
    the ridge residual. Valid only while the features are effectively frozen (t ≪ 1/(2λ) with weight decay on
    W).

    Parameters
    ----------
    K_a : array_like
        The readout kernel K₀⁽ᵃ⁾ (e.g. `ntk_decomposition`'s `K_a`), an (n, n) symmetric positive
        semi-definite array.
    y : array_like
        The targets y, an (n,) array.
    r0 : array_like
        The initial residual r₀ = f(X) − y, an (n,) array.
    lam : float
        λ, the weight-decay coefficient of the penalty named by `penalty`; λ ≥ 0 (0: no weight decay).
    t : float or array_like
        Gradient-flow time(s) t ≥ 0, a scalar or a 1-d array.
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.
    loss_norm : {"sum", "mean"}
        The loss normalisation (spec convention C2). "sum" (default): L = ½Σᵢrᵢ², kernel rates as they
        are; "mean": L = (1/(2n))Σᵢrᵢ², every kernel rate divided by n.

    Returns
    -------
    ndarray
        r(t): shape (n,) for a scalar `t`, (len(t), n) for a 1-d `t`.

    References
    ----------
    Spec `kramers:eq5` (corrected form).
    """
    K = _sym(K_a, "K_a")
    n = K.shape[0]
    y = V.as_float_array(y, "y")
    r0 = V.as_float_array(r0, "r0")
    if y.shape != (n,) or r0.shape != (n,):
        raise DomainError(f"y and r0 must have shape ({n},) (got {y.shape}, {r0.shape})")
    lam_v, c = _decay_parts(lam, penalty, allow_zero=True)
    g = c * lam_v  # inf for lam > 9e307 ("eq2"): used only where that is the right limit
    K = K * kernel_rate_factor(n, loss_norm)
    tt = _times(t)
    mu_k, U = np.linalg.eigh(K)
    mu_k = np.maximum(mu_k, 0.0)
    yb = U.T @ y
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        # r_star = -gamma / (mu_k + gamma) y_b = -y_b / (1 + mu_k / gamma): no inf / inf for gamma = inf
        rs_b = np.where(g > 0, -yb / (1.0 + mu_k / g), 0.0)
    with np.errstate(over="ignore", under="ignore"):
        T1 = np.atleast_1d(tt)
        x = np.multiply.outer(T1, mu_k) + (c * (lam_v * T1))[:, None]  # gamma t as c (lam t): 0 at t = 0
        # r0 e^{-x} + r_star (1 - e^{-x}) with -expm1: r_star + e^{-x}(r0 - r_star) cancels for x << 1
        # (relative error eps / x at t -> 0)
        out = ((U.T @ r0) * np.exp(-x) + rs_b * -np.expm1(-x)) @ U.T
    return out[0] if tt.ndim == 0 else out


@cites("kramers:lln")
@V.broadcasting()
def readout_kernel_norm(N: Any, p: Any, alpha: Any) -> float | np.ndarray:
    r"""Law-of-large-numbers prediction of ‖K₀⁽ᵃ⁾‖_op on the full p² grid (asymptotic, N → ∞).

    .. math:: \|K_0^{(a)}\|_{\rm op}\simeq N^{1-2\alpha}\lambda_{\rm top}(p).

    In words: N^(1−2α) times the top eigenvalue of `modadd_nngp_spectrum`. Measured finite-N bias (p = 11):
    +1.5 % at N = 64, +0.3 % at N = 1024, −0.2 % at N = 16384.

    Parameters
    ----------
    N : int or array_like
        The width N (number of hidden units), an integer ≥ 1.
    p : int or array_like
        The modulus p of the modular-addition task, an integer ≥ 2.
    alpha : float or array_like
        α, the width exponent of eq. (1): the output is N^(−α)·Σⱼ aⱼσ(wⱼ·x); 0 ≤ α ≤ 1/2 (not Lyu et al.'s
        initialisation scale, which is `init_scale`).

    Returns
    -------
    float or ndarray
        The predicted operator norm: a float for numbers, else an array of the broadcast shape of the
        arguments.

    References
    ----------
    Spec `kramers:lln`.
    """
    N = V.counts(N, "N", 1)
    al = _alpha(alpha, array=True)
    return PW.result(_width_powers(lambda n, t, a: FL.power_product([n, t], [1.0 - 2.0 * a, 1]), N,
                                   _top(V.counts(p, "p", 2)), al))


@cites("kramers:lln")
@V.broadcasting()
def feature_kernel_norm(N: Any, p: Any, alpha: Any, a_std: Any = None) -> float | np.ndarray:
    r"""Law-of-large-numbers prediction of ‖K₀⁽ʷ⁾‖_op on the full p² grid: N^(−2α)(Nσ_a²)(1 + 2p)/3.

    The top eigenvalue of κ₁ (1 on the diagonal, 1/3 for one shared operand) is 1 + 2(p − 1)/3 = (1 + 2p)/3.

    Parameters
    ----------
    N : int or array_like
        The width N (number of hidden units), an integer ≥ 1.
    p : int or array_like
        The modulus p of the modular-addition task, an integer ≥ 2.
    alpha : float or array_like
        α, the width exponent of eq. (1): the output is N^(−α)·Σⱼ aⱼσ(wⱼ·x); 0 ≤ α ≤ 1/2 (not Lyu et al.'s
        initialisation scale, which is `init_scale`).
    a_std : float or array_like or None
        σ_a > 0, the standard deviation of the initial readout weights; default `None`, meaning σ_a =
        N^(−1/2) (the paper's initialisation).

    Returns
    -------
    float or ndarray
        The predicted operator norm: a float for numbers, else an array of the broadcast shape of the
        arguments.

    References
    ----------
    Spec `kramers:lln`.
    """
    N = V.counts(N, "N", 1)
    p = V.counts(p, "p", 2)
    al = _alpha(alpha, array=True)
    lam1 = (1.0 + 2.0 * p) / 3.0
    if a_std is None:  # N^{-2 alpha} N (1/N)
        return PW.result(_width_powers(lambda n, l1, a: FL.power_product([n, l1], [-2.0 * a, 1]), N, lam1, al))
    sa = V.positive(a_std, "a_std", scalar=PW.scalars(a_std))
    return PW.result(_width_powers(lambda n, s, l1, a: FL.power_product([n, s, l1], [1.0 - 2.0 * a, 2, 1]),
                                   N, sa, lam1, al))  # a_std^2 = 1e600 is fine


def _eta_out(tau: float, eta: Any) -> float:
    if eta is None:
        return float(tau)
    return float(tau / V.positive(eta, "eta", scalar=True))


@cites("kramers:eq6")
def readout_timescale(K_a: Any, which: str = "max", eta: float | None = None, lam: float = 0.0,
                      penalty: str = "eq2", loss_norm: str = "sum") -> float:
    r"""Readout timescale of eq. (6): τ = 1/(λ(K₀⁽ᵃ⁾) + γ) for the fastest or the slowest mode.

    `which="max"`: 1/(λ_max + γ) (the paper's eq. 6, Θ(N^(2α−1))). `which="min"`: the smallest positive
    eigenvalue (threshold 10⁻¹²·λ_max): the label of modular addition lies in the bottom eigenspace, so this
    one governs fitting the labels.

    Parameters
    ----------
    K_a : array_like
        The readout kernel K₀⁽ᵃ⁾ (e.g. `ntk_decomposition`'s `K_a`), an (n, n) symmetric positive
        semi-definite array.
    which : {"max", "min"}
        Which mode: "max" (default) the fastest, "min" the slowest positive one.
    eta : float or None
        The learning rate η > 0 of a discrete run: if given, the timescale is returned as a step count τ/η
        (spec convention C3); default `None`, gradient-flow time.
    lam : float
        λ, the weight-decay coefficient of the penalty named by `penalty`; λ ≥ 0 (0: no weight decay).
        Default 0.
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.
    loss_norm : {"sum", "mean"}
        The loss normalisation (spec convention C2). "sum" (default): L = ½Σᵢrᵢ², kernel rates as they
        are; "mean": L = (1/(2n))Σᵢrᵢ², every kernel rate divided by n.

    Returns
    -------
    float
        τ in gradient-flow time, or in steps if `eta` is given.

    References
    ----------
    Spec `kramers:eq6`.
    """
    K = _sym(K_a, "K_a") * kernel_rate_factor(_sym(K_a, "K_a").shape[0], loss_norm)
    which = V.choice(which, "which", ("max", "min"))
    g = V.scalar(decay_rate(lam, penalty, allow_zero=True), "lam")
    ev = np.linalg.eigvalsh(K)
    lmax = float(ev[-1])
    if lmax <= 0 and g == 0:
        raise DomainError("K_a must have a positive eigenvalue (got lambda_max <= 0)")
    if which == "max":
        lam_k = lmax
    else:
        pos = ev[ev > 1e-12 * lmax]
        lam_k = float(pos[0]) if pos.size else 0.0
    return _eta_out(1.0 / (lam_k + g), eta)
