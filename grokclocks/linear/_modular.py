"""Levi et al., App. G: modular addition's aspect ratio and the inverse-square fit of grokking times."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize

from .. import _validate as V
from ..citations import cites


@cites("levi:appG")
def modular_lambda(alpha, p):
    r"""Aspect ratio λ of modular addition mod p with training fraction α.

    .. math:: \lambda=\frac{d_{\rm in}}{N_{\rm tr}}=\frac{2p}{\alpha p^2}=\frac{2}{\alpha p}

    In words: the input dimension 2p (two one-hot tokens) over the number of training pairs αp², i.e. 2/(αp).

    Parameters
    ----------
    alpha : float or array_like
        α, the fraction of the p² pairs used for training, 0 < α ≤ 1.
    p : int
        The modulus p, an integer ≥ 2.

    Returns
    -------
    float or ndarray
        λ, the shape of `alpha`.

    References
    ----------
    Levi et al., App. G; spec `levi:appG`.
    """
    pp = V.integer_at_least(p, "p", 2)
    a = V.positive(alpha, "alpha")
    bad = a > 1.0
    if np.any(bad):
        raise V.DomainError(f"alpha must be in (0, 1] (got {float(a[bad].flat[0]) if a.ndim else float(a)!r})")
    return V.scalar_or_array(2.0 / (a * pp))


class InverseSquareFit(NamedTuple):
    r"""Result of `fit_inverse_square`: the prefactor `C` and the critical aspect ratio `lam_star` of Δt = C(λ* − λ)⁻²."""

    C: float
    """The prefactor C, in the time unit of the fitted grokking times."""
    lam_star: float
    """The critical aspect ratio λ* at which the fitted grokking time diverges."""


@cites("levi:appG", "levi:fig8")
def fit_inverse_square(lams, dts, *, residuals="absolute"):
    r"""Fit Δt = C(λ* − λ)⁻² to measured grokking times (App. G, Fig. 8).

    .. math::
        \text{absolute: }\min_{C,\lambda^*}\sum_i\big[\Delta t_i-C(\lambda^*-\lambda_i)^{-2}\big]^2,\qquad
        \text{log: }\min_{C,\lambda^*}\sum_i\big[\log\Delta t_i-\log C+2\log|\lambda^*-\lambda_i|\big]^2

    In words: least squares on Δt ("absolute") or on log Δt ("log"). Starting point: the straight line 1/√Δt =
    A + Bλ (λ* = −A/B, C = 1/B²); λ* is kept on the side of the data where that line puts it. "absolute"
    reproduces the spec's fit of the App. G data (λ* = 0.121, C ≈ 3.28); "log" weights all points equally in
    relative terms (λ* = 0.1194, C = 3.10 on the same data).

    Parameters
    ----------
    lams : array_like
        The aspect ratios λᵢ > 0 of the runs, a 1-d array with at least 3 distinct values.
    dts : array_like
        The measured grokking times Δtᵢ > 0 (any time unit), the length of `lams`.
    residuals : {"absolute", "log"}
        The least-squares objective: "absolute" (default) or "log", as above.

    Returns
    -------
    (C, lam_star) : tuple of float
        An `InverseSquareFit` named tuple: the prefactor C (in the unit of `dts`) and the critical aspect
        ratio λ*; it unpacks like a plain tuple.

    References
    ----------
    Levi et al., App. G, Fig. 8; spec `levi:appG`, `levi:fig8`.
    """
    mode = V.choice(residuals, "residuals", ("absolute", "log"))
    x = V.positive(lams, "lams").reshape(-1)
    y = V.positive(dts, "dts").reshape(-1)
    if x.shape != y.shape:
        raise V.DomainError(f"dts must have the shape of lams {x.shape} (got {y.shape})")
    if np.unique(x).size < 3:
        raise V.DomainError(f"lams must contain at least 3 distinct values (got {np.unique(x).size})")
    B, A = np.polyfit(x, 1.0 / np.sqrt(y), 1)
    if B == 0.0:
        raise V.DomainError("dts show no dependence on lams: the inverse-square law cannot be fitted")
    span = float(np.ptp(x))
    lam0 = -A / B
    above = B < 0  # Delta t grows with lam: the pole lies above the data
    if above and lam0 <= x.max():
        lam0 = x.max() + 0.1 * span
    if not above and lam0 >= x.min():
        lam0 = x.min() - 0.1 * span
    c0 = 1.0 / B**2

    def resid(p):
        model_log = p[0] - 2.0 * np.log(np.abs(p[1] - x))
        if mode == "log":
            return np.log(y) - model_log
        return (y - np.exp(model_log)) / y.max()

    if above:
        bounds = ([-np.inf, x.max() + 1e-9 * span], [np.inf, np.inf])
    else:
        bounds = ([-np.inf, -np.inf], [np.inf, x.min() - 1e-9 * span])
    res = optimize.least_squares(resid, [math.log(c0), lam0], bounds=bounds, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return InverseSquareFit(float(math.exp(res.x[0])), float(res.x[1]))
