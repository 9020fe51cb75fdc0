"""Arrhenius inversion, SGD / full-batch temperatures and the spectral delay ratio."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._readout import _sym

__all__ = ["sgd_stationary_temperature_1d", "spectral_delay_ratio", "t_eff_fullbatch_heuristic", "t_eff_sgd",
           "t_eff_sgd_direction"]


@cites("kramers:teff-sgd")
def t_eff_sgd(eta: float, trace_sigma: float, batch_size: int, n_params: int | None = None) -> float:
    r"""SGD temperature in the diffusion approximation (**corrected**, erratum E9).

    .. math:: T_{\rm coord}=\frac{\eta\,\mathrm{tr}\,\Sigma}{2BP}\ (\texttt{n\_params}=P),\qquad
              T_{\rm paper}=\frac{\eta\,\mathrm{tr}\,\Sigma}{2B}=P\,T_{\rm coord}\ (\texttt{n\_params=None}).

    The paper's :math:`T_{\rm paper}` is the *sum* of the mode temperatures (= tr(HC) of the stationary
    covariance), P times the per-coordinate temperature (measured tr(HC)/P = 1.013 T_coord for P = 8);
    put only :math:`T_{\rm coord}` or the directional :func:`t_eff_sgd_direction` into :math:`e^{\Delta F/T}`.
    With-replacement sampling; without replacement multiply by (n − B)/(n − 1).

    References
    ----------
    ``kramers:teff-sgd``; Li, Tai, E (2017).
    """
    eta = V.positive(eta, "eta", scalar=True)
    tr = V.nonnegative(trace_sigma, "trace_sigma", scalar=True)
    B = V.integer_at_least(batch_size, "batch_size", 1)
    P = 1 if n_params is None else V.integer_at_least(n_params, "n_params", 1)
    if tr == 0.0:
        return 0.0
    return float(FL.power_product([eta, tr, 2.0 * float(B), float(P)], [1, 1, -1, -1]))  # no spurious inf / 0


@cites("kramers:teff-sgd")
def t_eff_sgd_direction(eta: float, sigma: Any, direction: Any, batch_size: int) -> float:
    r"""Directional SGD temperature :math:`T_s=\eta\,e_s^\top\Sigma e_s/(2B)` (``direction`` normalised here).

    References
    ----------
    ``kramers:teff-sgd``.
    """
    eta = V.positive(eta, "eta", scalar=True)
    S = _sym(sigma, "sigma")
    lo = float(np.linalg.eigvalsh(S)[0])
    if lo < -V.roundoff_tol(sigma, S.shape[0], floor=1e-12) * max(float(np.max(np.abs(S))), 1e-300):
        raise DomainError(f"sigma must be a covariance (positive semi-definite) (got smallest eigenvalue {lo!r})")
    e = V.as_float_array(direction, "direction")
    if e.shape != (S.shape[0],):
        raise DomainError(f"direction must have shape ({S.shape[0]},) (got {e.shape})")
    nrm = float(np.linalg.norm(e))
    if nrm == 0:
        raise DomainError("direction must be non-zero")
    e = e / nrm
    B = V.integer_at_least(batch_size, "batch_size", 1)
    return float(eta * (e @ S @ e) / (2.0 * B))


@cites("kramers:teff-sgd")
def sgd_stationary_temperature_1d(eta: float, sigma2: float, batch_size: int, curvature: float) -> float:
    r"""Exact stationary :math:`h\,\mathrm{Var}\,\theta` of 1-D SGD :math:`\theta_{k+1}=\theta_k-\eta(h\theta_k+\xi_k)`.

    .. math:: h\,\mathrm{Var}\,\theta=\frac{\eta\sigma^2}{B(2-\eta h)}\ \ (=2T_{\rm coord}\ \text{as}\ \eta\to0),

    :math:`\mathrm{Var}\,\xi=\sigma^2/B`; requires :math:`0<\eta h<2`.

    References
    ----------
    ``kramers:teff-sgd``.
    """
    eta = V.positive(eta, "eta", scalar=True)
    s2 = V.nonnegative(sigma2, "sigma2", scalar=True)
    B = V.integer_at_least(batch_size, "batch_size", 1)
    h = V.finite(curvature, "curvature", scalar=True)
    gap = FL.one_minus_product(2.0, eta, h) if abs(h) < 1e300 else 2.0 - eta * h  # 2 - eta h, exact near 0
    if not (0 < eta * h and gap > 0):
        raise DomainError(f"eta*curvature must be in (0, 2) (got {eta * h!r})")
    if s2 == 0.0:
        return 0.0
    return float(FL.power_product([eta, s2, float(B), gap], [1, 1, -1, -1]))


@cites("kramers:teff-gd")
def t_eff_fullbatch_heuristic(eta: float, trace_hessian: float, coef: float) -> float:
    r"""The paper's full-batch "temperature" :math:`T=\texttt{coef}\cdot\eta^2\,\mathrm{tr}\nabla^2F` — **unsupported heuristic**.

    No derivation exists in the Langevin sense: full-batch GD is deterministic (backward-error analysis
    gives the deterministic modified loss :math:`F+\tfrac\eta4\|\nabla F\|^2`, not noise), and
    :math:`\eta^2\mathrm{tr}\nabla^2F` has units :math:`[\theta]^2/[F]`, not :math:`[F]`; ``coef`` is
    therefore required and carries the missing units.  GD in a strict minimum with :math:`\eta<2/F''`
    never escapes (measured: 10^6 steps, η up to 0.249 on ``double_well_1d(1)``) — its escape temperature is 0
    (erratum E12).

    References
    ----------
    ``kramers:teff-gd`` (heuristic, unsupported).
    """
    eta = V.positive(eta, "eta", scalar=True)
    tr = V.finite(trace_hessian, "trace_hessian", scalar=True)
    coef = V.finite(coef, "coef", scalar=True)
    if tr == 0.0 or coef == 0.0:
        return 0.0
    # eta**2 raises OverflowError past 1.3e154; one scaled product is inf / 0 only beyond the range
    return math.copysign(float(FL.power_product([abs(coef), eta, abs(tr)], [1, 2, 1])), coef * tr)


@cites("kramers:spectral")
def spectral_delay_ratio(eigs: Any, eta: float | None = None) -> float:
    r"""Delay ratio of the slowest to the fastest mode of a quadratic (exact for a quadratic model).

    Gradient flow: :math:`t_{\rm slow}/t_{\rm fast}=\kappa=\mu_{\max}/\mu_{\min}`.  GD with step η:
    :math:`\ln|1-\eta\mu_{\max}|/\ln|1-\eta\mu_{\min}|` (→ κ as η → 0; requires :math:`\eta\mu_{\max}<2`).
    Zero modes must be removed by the caller.

    References
    ----------
    ``kramers:spectral``.
    """
    e = V.positive(eigs, "eigs", context="(remove zero modes first)")
    lo, hi = float(np.min(e)), float(np.max(e))
    if eta is None:
        return hi / lo
    eta = V.positive(eta, "eta", scalar=True)
    if eta * hi >= 2:
        raise DomainError(f"eta*mu_max must be < 2 (got {eta * hi!r})")
    if eta * hi < 1e-290:  # log1p(-x) = -x (1 + x/2 + ...) = -x to double precision: the ratio is hi / lo
        return hi / lo
    fast = _log_abs_one_minus(eta, hi)
    if fast == -math.inf:
        raise DomainError("eta*mu_max = 1 makes the fastest mode vanish in one step (ratio 0)")
    if eta * lo < 1e-290:  # slow = -eta lo (a subnormal product would lose digits): fast / (eta lo) scaled
        return -math.copysign(float(FL.power_product([abs(fast), eta, lo], [1, -1, -1])), fast)
    return fast / _log_abs_one_minus(eta, lo)


def _log_abs_one_minus(eta: float, mu: float) -> float:
    """log|1 - eta mu| with the product's rounding error restored (Dekker): log1p(-x) for a small product
    (log(1 - 1e-20) is -1e-20, not 0), the exact difference near eta mu = 1; -inf where eta mu = 1 exactly."""
    if eta * mu < 0.5:
        p, e = FL.two_product(eta, mu) if eta * mu > 1e-290 else (eta * mu, 0.0)
        return math.log1p(-(p + e))
    if eta * mu >= 1.5:  # |1 - x| = x - 1 = 1 - (2 - x) near 1: log1p of -(2 - x), exact by Dekker
        return math.log1p(-FL.one_minus_product(2.0, eta, mu))
    d = FL.one_minus_product(1.0, eta, mu)
    return math.log(abs(d)) if d != 0.0 else -math.inf
