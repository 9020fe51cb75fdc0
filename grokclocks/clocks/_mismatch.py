"""Clocks: the temporal mismatch of the two clocks."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from .. import _validate as V
from ..citations import cites
from ._fast_clock import fast_clock_bound
from ._args import _theta
from ._gaps import gap_for_loss_level
from ._kl_clock import _log_kl_time, representation_clock_bounds


@cites("clocks:thm5.6")
@V.broadcasting()
def clock_mismatch_lower_bound(eps, delta, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T):
    r"""Lower bound on the plateau :math:`t_{\rm rep}(\delta)-t_{\rm cls}(\varepsilon)` (Theorem 5.6).

    .. math::

        t_{\rm rep}-t_{\rm cls}\ge
        T+\frac{\big[\delta^{1-2\theta}-\Delta_T^{1-2\theta}\big]_+}{C_{\rm KL}^2(2\theta-1)}
        -t_0-\frac1c\Big[\log\frac{K-1}{\varepsilon}-\gamma_0\Big]_+ .

    Not clipped: a negative value means the bound is inconclusive at these tolerances.

    Example: ``clock_mismatch_lower_bound(1e-5, 1e-5, 4, 0.5, 0, 0, 1.0, 0.75, 1.0, 0)`` = 605.233.

    References
    ----------
    Spec ``clocks:thm5.6`` (paper Theorem 5.6, App. F.5).
    """
    tc = fast_clock_bound(eps, n_classes, rate, t0, gamma0)
    C = V.positive(C_kl, "C_kl")
    lo, _ = representation_clock_bounds(delta, gap0, C, C, theta, T)
    with np.errstate(invalid="ignore"):
        out = np.asarray(lo) - np.asarray(tc)
    both = np.isnan(out)  # both clocks beyond 1.8e308 (inf - inf): compare them in log space
    if np.any(both):
        out = np.where(both, _difference_of_overflowing_clocks(eps, delta, n_classes, rate, t0, gamma0, C, theta,
                                                                 gap0, T), out)
    return V.scalar_or_array(out)


def _difference_of_overflowing_clocks(eps, delta, n_classes, rate, t0, gamma0, C, theta, gap0, T) -> np.ndarray:
    """T - t0 + t_KL - t_fast where both times exceed the double range, from their logarithms:
    e^M (e^{l_KL - M} - e^{l_fast - M}), M = max (relative error ~ eps M in the difference); inf only
    where the difference itself is beyond the range.  ``ResultOverflow`` where the two agree to rounding
    (their difference is then not resolved in float64)."""
    need = np.asarray(gap_for_loss_level(eps, n_classes), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_fast = np.log(np.maximum(need - V.finite(gamma0, "gamma0"), 0.0)) - np.log(V.positive(rate, "rate"))
        log_kl = _log_kl_time(V.positive(delta, "delta"), V.positive(gap0, "gap0"), [(C, 2)], _theta(theta))
        M = np.maximum(log_kl, log_fast)
        diff = np.exp(log_kl - M) - np.exp(log_fast - M)
        out = (V.finite(T, "T") - V.nonnegative(t0, "t0")) + np.sign(diff) * np.exp(M + np.log(np.abs(diff)))
    if np.any(np.isnan(out) | (diff == 0)):
        raise V.ResultOverflow("both clock bounds exceed 1.8e308 and agree to rounding: their difference is not "
                               "resolved in float64")
    return out


@cites("clocks:thm5.6")
@V.broadcasting()
def coupled_mismatch_lower_bound(eps, kappa, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T):
    r"""The mismatch bound with coupled tolerances :math:`\delta=\varepsilon^\kappa`, :math:`\kappa>0`.

    Grows like :math:`\varepsilon^{-\kappa(2\theta-1)}` while the classifier clock grows like
    :math:`\log(1/\varepsilon)`.

    References
    ----------
    Spec ``clocks:thm5.6``.
    """
    k = V.positive(kappa, "kappa")
    e = V.positive(eps, "eps")
    delta = np.exp(k * np.log(e))
    if np.any(delta <= 0):
        raise V.DomainError(f"eps**kappa underflows to 0 (eps={float(np.min(e))!r}, kappa={float(np.max(k))!r})")
    return clock_mismatch_lower_bound(e, delta, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T)


@cites("clocks:thm5.6")
def crossover_eps(kappa, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T):
    r"""Largest :math:`\varepsilon` below which the coupled mismatch bound is positive.

    Scans :math:`\log\varepsilon\in[\log10^{-300},0)` for the last sign change from positive to
    non-positive and refines it with ``brentq``.

    Raises
    ------
    DomainError
        If the bound has no sign change in :math:`[10^{-300},1)`.

    References
    ----------
    Spec ``clocks:thm5.6``.
    """
    k = V.positive(kappa, "kappa", scalar=True)
    for name, value in (("rate", rate), ("t0", t0), ("gamma0", gamma0), ("C_kl", C_kl), ("theta", theta),
                        ("gap0", gap0), ("T", T)):
        V.finite(value, name, scalar=True)  # scalars only; their domains are checked by the bound itself

    def f(u: float) -> float:
        return float(coupled_mismatch_lower_bound(math.exp(u), k, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T))

    lo_u = max(math.log(1e-300), math.log(1e-300) / k if k > 1 else math.log(1e-300))
    us = np.linspace(lo_u, -1e-12, 3001)
    vals = np.asarray(coupled_mismatch_lower_bound(np.exp(us), k, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T),
                      dtype=np.float64)  # one vectorised call for the scan (was 3001 scalar calls: 30x slower)
    pos = vals > 0
    idx = np.nonzero(pos[:-1] & ~pos[1:])[0]
    if idx.size == 0:
        raise V.DomainError("the coupled mismatch bound has no sign change for eps in [1e-300, 1) "
                            f"(values {vals[0]:.3g} at the low end, {vals[-1]:.3g} near 1)")
    j = int(idx[-1])
    if vals[j + 1] == 0.0:
        return math.exp(float(us[j + 1]))
    return math.exp(optimize.brentq(f, float(us[j]), float(us[j + 1]), xtol=1e-15, rtol=4 * np.finfo(float).eps))
