"""Readout dynamics with weight decay: residual, kernel norms and timescales."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._conventions import _decay_parts, decay_rate, kernel_rate_factor
from ._model import _alpha
from ._ntk import modadd_nngp_spectrum

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
    r"""Residual of readout-only gradient flow with weight decay (eq. 5, **corrected**; erratum E2).

    Features frozen, :math:`r=\Phi a-y`, :math:`\dot a=-\Phi^\top r-\gamma a`:

    .. math::
        \dot r=-(K+\gamma I)\,r-\gamma y,\qquad r(t)=r_\star+e^{-(K+\gamma I)t}(r_0-r_\star),\qquad
        r_\star=-\gamma(K+\gamma I)^{-1}y,

    with :math:`\gamma` = :func:`decay_rate` (:math:`2\lambda` for ``"eq2"``) and :math:`K\to K/n` for
    ``loss_norm="mean"``.  The paper drops the :math:`-\gamma y` forcing and claims :math:`r\to0`.  Valid only
    while the features are effectively frozen (:math:`t\ll1/(2\lambda)` with weight decay on W).

    Parameters
    ----------
    K_a : (n, n) symmetric PSD readout kernel; y, r0 : (n,)
    lam : float >= 0 (0 allowed: plain readout flow)
    t : float or 1-D array >= 0

    Returns
    -------
    ndarray (n,) for scalar t, (len(t), n) for 1-D t.

    References
    ----------
    ``kramers:eq5`` (corrected form).
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
def readout_kernel_norm(N: int, p: int, alpha: float) -> float:
    r"""LLN prediction of :math:`\|K_0^{(a)}\|_{\rm op}` on the full :math:`p^2` grid (asymptotic, N → ∞).

    .. math:: \|K_0^{(a)}\|_{\rm op}\simeq N^{1-2\alpha}\lambda_{\rm top}(p).

    Measured finite-N bias (p = 11): +1.5 % at N = 64, +0.3 % at N = 1024, −0.2 % at 16384.

    References
    ----------
    ``kramers:lln``.
    """
    N = V.count(N, "N", 1)
    al = _alpha(alpha)
    return float(FL.power_product([float(N), modadd_nngp_spectrum(p)["top"]], [1.0 - 2.0 * al, 1]))


@cites("kramers:lln")
def feature_kernel_norm(N: int, p: int, alpha: float, a_std: float | None = None) -> float:
    r"""LLN prediction of :math:`\|K_0^{(w)}\|_{\rm op}` on the full grid: :math:`N^{-2\alpha}(N\sigma_a^2)\,(1+2p)/3`.

    ``a_std=None`` means :math:`\sigma_a=N^{-1/2}` (the paper's init).  The top eigenvalue of
    :math:`\kappa_1` (1 on the diagonal, 1/3 for one shared coordinate) is :math:`1+2(p-1)/3=(1+2p)/3`.

    References
    ----------
    ``kramers:lln``.
    """
    N = V.count(N, "N", 1)
    p = V.count(p, "p", 2)
    al = _alpha(alpha)
    lam1 = (1.0 + 2.0 * p) / 3.0
    if a_std is None:  # N^{-2 alpha} N (1/N)
        return float(FL.power_product([float(N), lam1], [-2.0 * al, 1]))
    sa = V.positive(a_std, "a_std", scalar=True)
    return float(FL.power_product([float(N), sa, lam1], [1.0 - 2.0 * al, 2, 1]))  # a_std^2 = 1e600 is fine


def _eta_out(tau: float, eta: Any) -> float:
    if eta is None:
        return float(tau)
    return float(tau / V.positive(eta, "eta", scalar=True))


@cites("kramers:eq6")
def readout_timescale(K_a: Any, which: str = "max", eta: float | None = None, lam: float = 0.0,
                      penalty: str = "eq2", loss_norm: str = "sum") -> float:
    r"""Readout timescale (eq. 6): :math:`\tau=1/(\lambda(K_0^{(a)})+\gamma)` for the fastest or slowest mode.

    ``which="max"``: :math:`1/(\lambda_{\max}+\gamma)` (the paper's eq. 6, :math:`\Theta(N^{2\alpha-1})`);
    ``which="min"``: smallest *positive* eigenvalue (threshold :math:`10^{-12}\lambda_{\max}`) — the label of
    modular addition lies in the bottom eigenspace, so this one governs fitting the labels.  ``eta`` given →
    step count :math:`\tau/\eta` (C3).  ``lam = 0`` allowed.

    References
    ----------
    ``kramers:eq6``.
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
