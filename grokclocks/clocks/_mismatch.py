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
    r"""Lower bound on the grokking plateau t_rep(δ) − t_cls(ε), the mismatch of the two clocks (Theorem 5.6).

    .. math::

        t_{\rm rep}-t_{\rm cls}\ge
        T+\frac{\big[\delta^{1-2\theta}-\Delta_T^{1-2\theta}\big]_+}{C_{\rm KL}^2(2\theta-1)}
        -t_0-\frac1c\Big[\log\frac{K-1}{\varepsilon}-\gamma_0\Big]_+ .

    In words: the lower bound on the representation clock (`representation_clock_bounds` with
    G = Δ) minus the upper bound on the classifier clock (`fast_clock_bound`).  Not clipped: a
    negative value means the bound is inconclusive at these tolerances.  Where both clocks exceed
    the double range their difference is taken from their logarithms.  The arguments broadcast
    together.

    Parameters
    ----------
    eps : float or array_like
        Loss level ε of the classifier clock, in nats; finite and > 0.
    delta : float or array_like
        Level δ of the representation clock (energy gap), finite and > 0.
    n_classes : int
        Number of classes K, an integer ≥ 2.
    rate : float or array_like
        Gap growth rate c of eq. (3.4), finite and > 0.
    t0 : float or array_like
        Time t₀ from which the logit gap grows linearly, finite and ≥ 0.
    gamma0 : float or array_like
        Minimum logit gap γ₀ at t₀, any finite real.
    C_kl : float or array_like
        Upper KL constant C_KL of the late region, finite and > 0.
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1).
    gap0 : float or array_like
        Energy gap Δ_T at the start T of the KL region, finite and > 0.
    T : float or array_like
        Start time T of the KL region, any finite real.

    Returns
    -------
    float or numpy.ndarray
        The lower bound on t_rep(δ) − t_cls(ε), in the common time unit, of the broadcast shape
        (negative: inconclusive).

    Raises
    ------
    DomainError
        If an argument is outside its domain above or the arrays do not broadcast.
    ResultOverflow
        If both clock bounds exceed 1.8·10³⁰⁸ and agree to rounding (their difference is not resolved
        in float64).

    Examples
    --------
    >>> round(clock_mismatch_lower_bound(1e-5, 1e-5, 4, 0.5, 0, 0, 1.0, 0.75, 1.0, 0), 3)
    605.232

    References
    ----------
    Spec ID `clocks:thm5.6` (paper Theorem 5.6, App. F.5).
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
    where the difference itself is beyond the range.  `ResultOverflow` where the two agree to rounding
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
    r"""The clock mismatch bound with coupled tolerances δ = ε^κ, κ > 0.

    It grows like ε^(−κ·(2θ − 1)) while the classifier clock grows only like log(1/ε); otherwise
    identical to `clock_mismatch_lower_bound` evaluated at δ = ε^κ.  The arguments broadcast together.

    Parameters
    ----------
    eps : float or array_like
        Loss level ε of the classifier clock, in nats; finite and > 0.
    kappa : float or array_like
        Coupling exponent κ of δ = ε^κ, finite and > 0.
    n_classes : int
        Number of classes K, an integer ≥ 2.
    rate : float or array_like
        Gap growth rate c of eq. (3.4), finite and > 0.
    t0 : float or array_like
        Time t₀ from which the logit gap grows linearly, finite and ≥ 0.
    gamma0 : float or array_like
        Minimum logit gap γ₀ at t₀, any finite real.
    C_kl : float or array_like
        Upper KL constant C_KL of the late region, finite and > 0.
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1).
    gap0 : float or array_like
        Energy gap Δ_T at the start T of the KL region, finite and > 0.
    T : float or array_like
        Start time T of the KL region, any finite real.

    Returns
    -------
    float or numpy.ndarray
        The lower bound on t_rep(ε^κ) − t_cls(ε), of the broadcast shape (negative: inconclusive).

    Raises
    ------
    DomainError
        If an argument is outside its domain above, ε^κ underflows to 0, or the arrays do not
        broadcast.
    ResultOverflow
        If both clock bounds exceed the double range and agree to rounding.

    Examples
    --------
    >>> round(coupled_mismatch_lower_bound(1e-5, 1, 4, 0.5, 0, 0, 1.0, 0.75, 1.0, 0), 3)
    605.232

    References
    ----------
    Spec ID `clocks:thm5.6` (paper Theorem 5.6).
    """
    k = V.positive(kappa, "kappa")
    e = V.positive(eps, "eps")
    delta = np.exp(k * np.log(e))
    if np.any(delta <= 0):
        raise V.DomainError(f"eps**kappa underflows to 0 (eps={float(np.min(e))!r}, kappa={float(np.max(k))!r})")
    return clock_mismatch_lower_bound(e, delta, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T)


@cites("clocks:thm5.6")
def crossover_eps(kappa, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T):
    r"""Largest loss level ε below which the coupled mismatch bound is positive.

    Scans log ε over [log 10⁻³⁰⁰, 0) on 3001 points of `coupled_mismatch_lower_bound` for the last sign
    change from positive to non-positive and refines it with `scipy.optimize.brentq` (relative
    tolerance 4ε_mach).

    Parameters
    ----------
    kappa : float
        Coupling exponent κ of δ = ε^κ, finite and > 0.
    n_classes : int
        Number of classes K, an integer ≥ 2.
    rate : float
        Gap growth rate c of eq. (3.4), finite and > 0.
    t0 : float
        Time t₀ from which the logit gap grows linearly, finite and ≥ 0.
    gamma0 : float
        Minimum logit gap γ₀ at t₀, any finite real.
    C_kl : float
        Upper KL constant C_KL of the late region, finite and > 0.
    theta : float
        KL exponent θ, in the open interval (1/2, 1).
    gap0 : float
        Energy gap Δ_T at the start T of the KL region, finite and > 0.
    T : float
        Start time T of the KL region, any finite real.

    Returns
    -------
    float
        The crossover level ε* in [10⁻³⁰⁰, 1): the bound is positive just below it.

    Raises
    ------
    DomainError
        If an argument is not a finite scalar or is outside its domain, or the bound has no sign change
        from positive to non-positive for ε in [10⁻³⁰⁰, 1).

    Examples
    --------
    >>> round(crossover_eps(1, 4, 0.5, 0, 0, 1.0, 0.75, 1.0, 0), 6)
    0.032905

    References
    ----------
    Spec ID `clocks:thm5.6` (paper Theorem 5.6).
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
