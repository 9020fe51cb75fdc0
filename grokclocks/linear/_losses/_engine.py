"""Levi et al.: the one engine of the linear model's losses, `_log_loss` (flat, validated arrays)."""

from __future__ import annotations

import numpy as np

from .._conventions import _flow_time
from ._flow import _check_finite_s, _log_loss_flow
from ._gd import _log_loss_gd


def _log_loss(which: str, t: np.ndarray, lam: np.ndarray, eta0: np.ndarray, d: float, gamma: np.ndarray,
              alpha: np.ndarray, discrete: bool) -> np.ndarray:
    """log L(t) for flat arrays of the same length (validated; ``d`` = d_out a float): gradient flow (`_flow`)
    or discrete gradient descent (`_gd`)."""
    s = _flow_time(eta0, t, d)
    _check_finite_s(s, t, eta0, d)
    if discrete:
        return _log_loss_gd(which, t, lam, eta0, d, gamma, alpha)
    return _log_loss_flow(which, s, lam, d, gamma, alpha)
