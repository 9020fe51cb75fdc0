"""Clocks: the fast (classifier) clock."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import _floats as FL
from .. import _validate as V
from ..citations import cites
from .. import _pointwise as P
from ._args import _flag, _is_plus_zero, _n_classes, _SNAP_ABS
from ._gaps import gap_for_loss_level, _tail, _tail_linear


def _records(times: Any, values: Any, vname: str = "values") -> tuple[np.ndarray, np.ndarray]:
    """Strictly increasing finite 1-D times; values of the same length (NaN allowed)."""
    t = V.as_float_array(times, "times")
    if t.ndim != 1:
        raise V.DomainError(f"times must be 1-D (got shape {t.shape})")
    if t.size > 1 and np.any(np.diff(t) <= 0):
        j = int(np.argmax(np.diff(t) <= 0))
        raise V.DomainError(f"times must be strictly increasing (got {t[j]!r} then {t[j + 1]!r})")
    v = V.as_float_array(values, vname, allow_nan=True)
    if v.shape != t.shape:
        raise V.DomainError(f"{vname} must have the shape of times {t.shape} (got {v.shape})")
    return t, v


class GapGrowthFit(NamedTuple):
    r"""Result of `fit_gap_growth`: the two constants of Assumption 3.4 read off a training record.

    A named tuple; it unpacks like the plain tuple (gamma0, c).
    """

    gamma0: float
    r"""γ₀ = γ̂_min(t₀), the minimum logit gap at the chosen start time t₀."""
    c: float
    r"""The largest rate c with γ̂_min(t) ≥ γ₀ + c·(t − t₀) at every record after t₀; c ≤ 0 means the assumption
    fails on this record.
    """


@cites("clocks:asm3.4")
def fit_gap_growth(times, min_gaps, t0):
    r"""Diagnose Assumption 3.4 on a training record: γ₀ and the largest admissible gap growth rate.

    .. math::

        \gamma_0=\hat\gamma_{\min}(t_0),\qquad
        c=\inf_{t_j>t_0}\frac{\hat\gamma_{\min}(t_j)-\gamma_0}{t_j-t_0},

    In words: γ₀ is the minimum logit gap at t₀ and c the smallest slope from (t₀, γ₀) to a later
    record, so that γ̂_min(t) ≥ γ₀ + c·(t − t₀) holds on every record after t₀.  A result c ≤ 0 means
    the assumption fails on this record (returned, not raised).

    Parameters
    ----------
    times : array_like
        Record times, a finite, strictly increasing 1-D array (gradient-flow time, or accumulated
        optimiser time for a discrete optimiser).
    min_gaps : array_like
        Minimum logit gap γ̂_min at each record time (see `min_logit_gap`), a finite 1-D array of the
        length of `times`.
    t0 : float
        Start time t₀ of the linear growth; must equal one of the record times (to a relative 10⁻¹²)
        and precede the last one.

    Returns
    -------
    GapGrowthFit
        The named tuple (gamma0, c) of floats: γ₀ and the largest admissible rate c.

    Raises
    ------
    DomainError
        If `times` is not a finite strictly increasing 1-D array, `min_gaps` is not finite or not of the
        length of `times`, or `t0` is not a record time before the last.

    Examples
    --------
    >>> fit_gap_growth([0, 1, 2, 3], [0.1, 0.5, 1.1, 1.4], 1)
    GapGrowthFit(gamma0=0.5, c=0.44999999999999996)

    References
    ----------
    Spec ID `clocks:asm3.4` (paper Assumption 3.4, eq. 3.4).
    """
    t, g = _records(times, min_gaps, "min_gaps")
    V.finite(g, "min_gaps")
    t0 = V.finite(t0, "t0", scalar=True)
    j = int(np.searchsorted(t, t0))
    if j >= t.size or abs(t[j] - t0) > 1e-12 * max(1.0, abs(t0)):
        raise V.DomainError(f"t0 must be one of the record times (got {t0!r})")
    if j == t.size - 1:
        raise V.DomainError(f"t0 must precede the last record time {t[-1]!r} (got {t0!r})")
    gamma0 = float(g[j])
    c = float(np.min((g[j + 1:] - gamma0) / (t[j + 1:] - t[j])))
    return GapGrowthFit(gamma0, c)


@cites("clocks:thm3.5", "clocks:eq2.1")
@V.broadcasting()
def fast_clock_bound(eps, n_classes, rate, t0=0.0, gamma0=0.0, *, sharp=False):
    r"""Upper bound on the classifier clock t_cls(ε) under linear gap growth (Theorem 3.5).

    .. math::

        t_{\rm cls}(\varepsilon)\le t_0+\frac1c\Big[\log\frac{K-1}{\varepsilon}-\gamma_0\Big]_+
        =O(\log 1/\varepsilon)

    In words: t_cls(ε) ≤ t₀ + max(log((K − 1)/ε) − γ₀, 0)/c, logarithmic in 1/ε.  With `sharp=True`
    ε is replaced by e^ε − 1, the exact inversion of the log1p bound.  The arguments broadcast
    together.

    Parameters
    ----------
    eps : float or array_like
        Loss level ε of the classifier clock, in nats; finite and > 0.
    n_classes : int
        Number of classes K, an integer ≥ 2.
    rate : float or array_like
        Gap growth rate c of eq. (3.4), finite and > 0, in gap units per unit time.
    t0 : float or array_like, optional
        Time t₀ from which the gap grows linearly, finite and ≥ 0 (default 0).
    gamma0 : float or array_like, optional
        Minimum logit gap γ₀ at t₀, any finite real (default 0).
    sharp : bool, optional
        `False` (default): invert the linear tail bound; `True`: invert the log1p bound exactly.

    Returns
    -------
    float or numpy.ndarray
        The bound on t_cls(ε), in the time unit of `t0` and `rate`, of the broadcast shape; `inf` only
        where the bound exceeds 1.8·10³⁰⁸ (rate ≈ 10⁻³⁰⁶).

    Raises
    ------
    DomainError
        If an argument is outside its domain above, or the array arguments do not broadcast.

    Notes
    -----
    Only valid where eq. (3.4) holds: plain gradient descent on separable data violates it (erratum
    clocks-1 in `grokclocks.errata`).

    Examples
    --------
    >>> round(fast_clock_bound(1e-4, 3, 0.5, t0=10, gamma0=1), 3)
    27.807

    References
    ----------
    Spec IDs `clocks:thm3.5` (paper Theorem 3.5) and `clocks:eq2.1` (eq. 2.1, the classifier clock).
    """
    need = gap_for_loss_level(eps, n_classes, sharp=sharp)
    c = V.positive(rate, "rate")
    t0 = V.nonnegative(t0, "t0")
    g0 = V.finite(gamma0, "gamma0")
    with np.errstate(over="ignore"):  # inf only where the bound exceeds 1.8e308 (rate ~ 1e-306)
        return V.scalar_or_array(t0 + np.maximum(np.asarray(need) - g0, 0.0) / c)


@cites("clocks:thm3.5")
@V.broadcasting()
def fast_clock_loss_bound(t, n_classes, rate, t0=0.0, gamma0=0.0, *, linear=True):
    r"""Loss bound L(W(t)) for t ≥ t₀ under linear gap growth, eq. (3.4) (Theorem 3.5).

    .. math::

        \mathcal L(W(t))\le\log\big(1+(K-1)e^{-\gamma_0-c(t-t_0)}\big)\le(K-1)e^{-\gamma_0-c(t-t_0)}

    In words: with the gap γ(t) = γ₀ + c·(t − t₀), the loss is at most log(1 + (K − 1)·e^(−γ(t))),
    itself at most (K − 1)·e^(−γ(t)).  The arguments broadcast together.

    Parameters
    ----------
    t : float or array_like
        Time(s) t at which the loss is bounded, finite and ≥ `t0` element-wise.
    n_classes : int
        Number of classes K, an integer ≥ 2.
    rate : float or array_like
        Gap growth rate c of eq. (3.4), finite and > 0.
    t0 : float or array_like, optional
        Time t₀ from which the gap grows linearly, finite and ≥ 0 (default 0).
    gamma0 : float or array_like, optional
        Minimum logit gap γ₀ at t₀, any finite real (default 0).
    linear : bool, optional
        `True` (default): return the right-hand, linear form (K − 1)·e^(−γ(t)); `False`: the tighter
        log1p form.

    Returns
    -------
    float or numpy.ndarray
        The loss bound in nats, ≥ 0, of the broadcast shape.

    Raises
    ------
    DomainError
        If some t < t₀, an argument is outside its domain above, or the arrays do not broadcast.

    References
    ----------
    Spec ID `clocks:thm3.5` (paper Theorem 3.5).
    """
    sc = P.scalars(t, rate, t0, gamma0)
    tt = V.finite(t, "t", scalar=sc)
    c = V.positive(rate, "rate", scalar=sc)
    t0a = V.nonnegative(t0, "t0", scalar=sc)
    g0 = V.finite(gamma0, "gamma0", scalar=sc)
    P.ordered(t0a, tt, "t0", "t")
    with np.errstate(over="ignore"):
        # g0 + c (t - t0), in place on the engine's own array (the same operations in the same order)
        # (t - 0 = t and x + 0 = x for x = c (t - t0) >= +0: those passes left out, the same bits)
        gam = tt - t0a if not _is_plus_zero(t0a) else tt
        gam = np.multiply(gam, c, out=P.into(gam, c))
        if not _is_plus_zero(g0):
            gam = np.add(gam, g0, out=P.into(gam, g0))  # +inf only where the true gap exceeds 1.8e308 (bound 0)
    k = _n_classes(n_classes)
    return P.result(_tail_linear(gam, k) if _flag(linear, "linear") else _tail(gam, k))


@cites("clocks:prop3.6")
@V.broadcasting("eps", "loss0", "rho")
def contraction_clock_bound(eps, loss0, rho, k0=0, *, exact=False):
    r"""Step bound on the classifier clock from a one-step tail contraction (Proposition 3.6).

    If L_{k+1} ≤ (1 − ρ)·L_k for every step k ≥ k₀:

    .. math::

        t_{\rm cls}(\varepsilon)\le k_0+\Big\lceil\frac1\rho\log\frac{\mathcal L_{k_0}}{\varepsilon}\Big\rceil,
        \qquad\text{exact: }k_0+\Big\lceil\log\frac{\mathcal L_{k_0}}{\varepsilon}\Big/\log\frac1{1-\rho}\Big\rceil,

    In words: k₀ + ⌈log(L_{k₀}/ε)/ρ⌉ steps, or with `exact=True` k₀ + ⌈log(L_{k₀}/ε)/log(1/(1 − ρ))⌉;
    k₀ itself when ε ≥ L_{k₀}.  The quotient is snapped to an integer when within 10⁻⁹ of one before
    the ceiling.

    Parameters
    ----------
    eps : float or array_like
        Loss level ε of the classifier clock, in nats; finite and > 0.
    loss0 : float or array_like
        Loss L_{k₀} at step k₀, in nats; finite and ≥ 0.
    rho : float or array_like
        Contraction factor ρ per step, in the open interval (0, 1).
    k0 : int, optional
        Step index k₀ from which the contraction holds, an integer ≥ 0 (default 0).
    exact : bool, optional
        `False` (default): the paper's form with 1/ρ; `True`: the exact count with log(1/(1 − ρ)),
        never larger.

    Returns
    -------
    int or float or ndarray
        The bound on t_cls(ε) as a step index (an int for scalar arguments; a float64 array of whole numbers,
        the broadcast shape of `eps`, `loss0` and `rho`, for arrays); `math.inf` where it exceeds the largest
        double (ρ ≲ 10⁻³⁰⁶).

    Raises
    ------
    DomainError
        If an argument is outside its domain above.

    Examples
    --------
    >>> contraction_clock_bound(1e-6, 1.0, 0.1, k0=5), contraction_clock_bound(1e-6, 1.0, 0.1, k0=5, exact=True)
    (144, 137)

    References
    ----------
    Spec ID `clocks:prop3.6` (paper Proposition 3.6).
    """
    sc = P.scalars(eps, loss0, rho)
    e, e_ext = V.positive(eps, "eps", scalar=sc, extrema=True)
    l0, l0_ext = V.nonnegative(loss0, "loss0", scalar=sc, extrema=True)
    r = V.in_open_interval(rho, "rho", 0.0, 1.0, scalar=sc)
    k0 = V.integer_at_least(k0, "k0", 0)
    exact = _flag(exact, "exact")
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        out = _contraction_steps(l0, e, r, k0, exact, l0_ext, e_ext)
    if np.ndim(out) == 0:
        v = float(out)
        return v if math.isinf(v) else int(v)
    return out


def _contraction_steps(l0: Any, e: Any, r: Any, k0: int, exact: bool, l0_ext: tuple[float, float],
                       e_ext: tuple[float, float]) -> Any:
    """The engine of `contraction_clock_bound` on validated arguments (a block of points, or numbers; the
    caller's errstate) with the extremes of `l0` and `e` that the validation reduced."""
    # log(loss0 / eps) > 0: log1p of the exact difference when eps < loss0 <= 2 eps (Sterbenz), else the
    # log of the quotient, or log(l0) - log(e) where the quotient overflows (then the log is >= 709)
    # (FL.log_quotient: the same three forms; they differ from it only where eps >= loss0, which gives k0).
    # On arrays the extremes spare its passes: the log of the quotient in place, the careful forms on the
    # points within log 2 of 0 only (`_pointwise.log_quotient` with the extremes)
    rate = -np.log1p(-r) if exact else r
    x = P.log_quotient(l0, e, extrema=(l0_ext, e_ext))
    x = np.divide(x, rate, out=P.into(x, rate))
    # the ceiling of the quotient snapped to a whole number n when within _SNAP_ABS of it: only a quotient in
    # (n, n + _SNAP_ABS] changes (to n = ceil - 1); x - floor(x) is exact (Sterbenz), the same test as
    # |x - round(x)| there (an infinite quotient gives NaN: no snap)
    frac = np.floor(x)
    frac = np.subtract(x, frac, out=P.into(frac))
    out = np.ceil(x, out=P.into(x))
    if not P.low(frac) > _SNAP_ABS:  # a reduction: the mask only where a point may snap (NaN: look)
        out = P.patch(out, (frac > 0.0) & (frac <= _SNAP_ABS), lambda o: o - 1.0, out)
    if k0:  # (out + 0 differs from out only at -0, where eps >= loss0 and k0 replaces it below)
        out = np.add(out, k0, out=P.into(out))
    # the bound exceeds the largest double (rate <~ 1e-306): inf; k0 itself where eps >= loss0 (the mask only where
    # the extremes say a point needs it).  A -inf here (loss0 = 0, or log(loss0/eps) < 0 over a subnormal rate)
    # has eps >= loss0: k0 replaces it below, with no pass to look for it
    if e_ext[1] >= l0_ext[0]:
        out = P.patch(out, e >= l0, lambda o: float(k0), out)
    return out
