"""Clocks: the temporal mismatch of the two clocks."""

from __future__ import annotations

import math

import numpy as np
from .. import _floats as FL
from .. import _pointwise as P
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
    C = V.positive(C_kl, "C_kl", scalar=P.scalars(C_kl))
    lo, _ = representation_clock_bounds(delta, gap0, C, C, theta, T)
    if type(lo) is float and type(tc) is float:  # a scalar call: the same difference on floats
        out = lo - tc
        if out == out:
            return out
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
    sc = P.scalars(kappa, eps)
    k = V.positive(kappa, "kappa", scalar=sc)
    e = V.positive(eps, "eps", scalar=sc)
    xp = FL.SCALAR if sc else FL.ARRAY
    delta = xp.exp(k * xp.log(e))
    if P.low(delta) <= 0.0:
        raise V.DomainError(f"eps**kappa underflows to 0 (eps={P.low(e)!r}, kappa={P.high(k)!r})")
    return clock_mismatch_lower_bound(e, delta, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T)


_EPS_NODES = 3001  # nodes of the scan in log eps
_LOG_EPS_LO = math.log(1e-300)
_EPS_TOP = -1e-12  # the last node, just below log 1
_SCAN_BLOCKS = (64, 256, 1024, _EPS_NODES)  # nodes scanned per pass, from the top down (the last: the rest)
_POINT_BLOCK = 256  # points per block: at most 256 x 3001 bound evaluations in one call


def _crossover_flat(kappa, rate, t0, gamma0, C_kl, theta, gap0, T, *, n_classes):
    """ε* for flat, broadcast arrays (n_classes one integer): the scan from the top node down, pass by pass,
    each point stopping at its last sign change; then the bracketed root of every point in lockstep."""
    n = kappa.size
    args = (rate, t0, gamma0, C_kl, theta, gap0, T)
    lo_u = np.where(kappa > 1.0, _LOG_EPS_LO / kappa, _LOG_EPS_LO)  # eps^kappa stays above 1e-300
    step = (_EPS_TOP - lo_u) / (_EPS_NODES - 1)

    def bound(u, idx):
        return np.asarray(coupled_mismatch_lower_bound(np.exp(u), kappa[idx], n_classes, *(a[idx] for a in args)),
                          dtype=np.float64)

    def nodes(j, idx):  # np.linspace(lo_u, _EPS_TOP, 3001)[j] of each point: j step + lo_u, the last node exact
        return np.where(j == _EPS_NODES - 1, _EPS_TOP, j * step[idx][:, None] + lo_u[idx][:, None])

    left = np.full(n, -1)  # the node j of the last change (bound > 0 at j, <= 0 at j + 1)
    top_val, low_val = np.empty(n), np.empty(n)
    act = np.arange(n)
    hi_node = _EPS_NODES - 1
    for width in _SCAN_BLOCKS:
        lo_node = max(hi_node - width + 1, 0)
        j = np.arange(lo_node, hi_node + 1, dtype=np.float64)[None, :]
        vals = bound(nodes(j, act).reshape(-1), np.repeat(act, j.size)).reshape(act.size, j.size)
        if hi_node == _EPS_NODES - 1:
            top_val[act] = vals[:, -1]
        pos = vals > 0
        change = pos[:, :-1] & ~pos[:, 1:]
        found = change.any(axis=1)
        last = change.shape[1] - 1 - np.argmax(change[:, ::-1], axis=1)  # the highest change of each row
        left[act[found]] = lo_node + last[found]
        low_val[act] = vals[:, 0]
        act = act[~found]
        if act.size == 0 or lo_node == 0:
            break
        hi_node = lo_node  # the next pass ends at this pass's first node (the pair across the seam)
    if act.size:
        i = int(act[0])
        named = ", ".join(f"{nm}={float(v[i])!r}" for nm, v in
                          zip(("kappa", "rate", "t0", "gamma0", "C_kl", "theta", "gap0", "T"), (kappa, *args)))
        raise V.DomainError(f"the coupled mismatch bound has no sign change for eps in [1e-300, 1) at {named}, "
                            f"n_classes={n_classes!r} (values {low_val[i]:.3g} at the low end, {top_val[i]:.3g} "
                            "near 1)")
    every = np.arange(n)
    lo = nodes(left[:, None].astype(np.float64), every)[:, 0]
    hi = nodes(left[:, None].astype(np.float64) + 1.0, every)[:, 0]
    # rtol eps_mach, no absolute floor: 4 eps_mach (brentq's setting before) left 1.3e-13 of eps* at eps* ~ 1e-56 (the
    # Illinois estimate sits at an end of its last bracket); now the bound's own rounding, ~1.5e-14, is the limit
    u = FL.bracketed_root(bound, lo, hi, xtol=0.0, rtol=float(np.finfo(np.float64).eps))
    return np.exp(u)


@cites("clocks:thm5.6")
@V.broadcasting()
def crossover_eps(kappa, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T):
    r"""Largest loss level ε below which the coupled mismatch bound is positive.

    Scans log ε over [log 10⁻³⁰⁰, 0) on 3001 points of `coupled_mismatch_lower_bound` for the last sign
    change from positive to non-positive and refines it by the Illinois method (bracketed regula falsi,
    relative tolerance ε_mach in log ε).  The arguments broadcast together (`n_classes` one integer); the
    scan runs from ε = 1 down for all points at once, each point stopping at its last sign change, and the
    roots are found in lockstep, each point on its own numbers (an array call gives the scalar calls' values).

    Parameters
    ----------
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
        The crossover level ε* in [10⁻³⁰⁰, 1): the bound is positive just below it; the broadcast shape
        of the arguments (a Python float for a scalar call).

    Raises
    ------
    DomainError
        If an argument is not finite or is outside its domain, the arrays do not broadcast, or the bound
        has no sign change from positive to non-positive for ε in [10⁻³⁰⁰, 1) at some point (named with
        its values).

    Examples
    --------
    >>> round(crossover_eps(1, 4, 0.5, 0, 0, 1.0, 0.75, 1.0, 0), 6)
    0.032905

    References
    ----------
    Spec ID `clocks:thm5.6` (paper Theorem 5.6).
    """
    k = V.positive(kappa, "kappa")
    checked = [V.finite(value, name) for name, value in (("rate", rate), ("t0", t0), ("gamma0", gamma0),
                                                          ("C_kl", C_kl), ("theta", theta), ("gap0", gap0),
                                                          ("T", T))]  # their domains: by the bound itself
    shape, flat = V.broadcast_flat(k, *checked)
    out = FL.blockwise(lambda *a: _crossover_flat(*a, n_classes=n_classes), (math.prod(shape),), *flat,
                       block=_POINT_BLOCK)
    return V.scalar_or_array(out.reshape(shape))
