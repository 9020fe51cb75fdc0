r"""Levi et al.: the grokking delay at small λ as its own root (γ = 0, gradient flow), vectorised.

Below λ = `_SMALL_LAM` the grokking time Δt = t*_gen − t*_tr is not formed as a difference: Δt/t ~ λ, so the
difference of two crossing times, each good to ~1e-16 relative, keeps ~1e-16/λ (no digit at λ = 1e-20:
Δt = 0.0 instead of 2.07e-18). With :math:`s_t=4\eta_0t^*_{\rm tr}/d_{\rm out}` and :math:`\Phi_0'=-\Phi_1`,
the gen loss reaches the train loss's level :math:`\Phi_1(s_t)` after a further :math:`\Delta s` that solves

.. math:: \int_0^{\Delta s}\frac{\Phi_1(s_t+u)}{\Phi_1(s_t)}\,du=\frac{\Phi_0(s_t)-\Phi_1(s_t)}{\Phi_1(s_t)},

both sides free of cancellation (:func:`grokclocks.rmt._phi0_excess`, the increment
:func:`grokclocks.rmt._log_phi1_increment` under a 32-point Gauss–Legendre rule on [0, Δs]: the ratio there is
:math:`e^{-\mu u}` times a slowly varying factor with :math:`\mu\Delta s\lesssim\lambda\,s_t\le8` for λ ≤ 10⁻²,
integrated to 1e-16). The left side is concave in Δs, so Newton from :math:`\Delta s_0` = the right side (a
lower bound: the ratio is ≤ 1) increases monotonically to the root, for all points in lockstep.
Δt = Δs·d_out/(4η₀). At and above `_SMALL_LAM` the difference of the crossing times loses at most a factor
1/λ ≤ 100 of their accuracy (measured: the two agree to ~1e-14 at λ = 10⁻²).
"""

from __future__ import annotations

import numpy as np
from scipy.special import roots_legendre

from ... import rmt
from .._conventions import _flow_time, _gd_time

_SMALL_LAM = 0.01
_X, _W = roots_legendre(32)
_X01, _W01 = 0.5 * (_X + 1.0), 0.5 * _W


def _grok_delay_small_lam(t_train: np.ndarray, lam: np.ndarray, eta0: np.ndarray, d: float) -> np.ndarray:
    """Δt for flat arrays of points with γ = 0, gradient flow, λ ≤ `_SMALL_LAM`, 0 < t*_tr ≤ t*_gen < ∞."""
    s_t = np.asarray(_flow_time(eta0, t_train, d), dtype=np.float64)
    lam = np.asarray(lam, dtype=np.float64)
    q = rmt._phi0_excess(s_t, lam)
    ds = q.copy()
    # q below 1e-200: the ratio is 1 - O(u) on [0, q], Delta s = q (1 + O(q)); Newton's 1e-13 test underflows
    act = np.flatnonzero(q >= 1e-200)
    for _ in range(100):
        if act.size == 0:
            break
        sa, la, da = s_t[act, None], lam[act, None], ds[act]
        ratio = np.exp(rmt._log_phi1_increment(sa, da[:, None] * _X01, la))
        integral = da * (ratio * _W01).sum(axis=1)
        step = (q[act] - integral) / np.exp(rmt._log_phi1_increment(s_t[act], da, lam[act]))
        ds[act] = da + step
        act = act[~(np.abs(step) <= 1e-13 * ds[act])]  # 1e-13: the steps below it are rounding noise
    else:  # pragma: no cover - Newton on a concave function from below converges; loud if not
        raise RuntimeError(f"grok_time: the small-lam delay did not converge for {act.size} points")
    return np.asarray(_gd_time(ds, eta0, d), dtype=np.float64)
