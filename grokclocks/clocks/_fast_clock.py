"""Clocks: the fast (classifier) clock."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._args import _flag, _n_classes, _SNAP_ABS
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
    """Result of :func:`fit_gap_growth` (Assumption 3.4)."""

    gamma0: float
    r""":math:`\gamma_0`."""
    c: float
    """the largest admissible rate :math:`c`."""


@cites("clocks:asm3.4")
def fit_gap_growth(times, min_gaps, t0):
    r"""Diagnose Assumption 3.4 on a record: :math:`\gamma_0` and the largest admissible rate.

    .. math::

        \gamma_0=\hat\gamma_{\min}(t_0),\qquad
        c=\inf_{t_j>t_0}\frac{\hat\gamma_{\min}(t_j)-\gamma_0}{t_j-t_0},

    so that :math:`\hat\gamma_{\min}(t)\ge\gamma_0+c(t-t_0)` holds on every record after :math:`t_0`.
    ``c <= 0`` means the assumption fails on this record (returned, not raised).

    Parameters
    ----------
    times : 1-D strictly increasing array
    min_gaps : array like ``times`` (finite)
    t0 : float, one of the record times (not the last)

    Returns
    -------
    (gamma0, c) : tuple of float
        A :class:`GapGrowthFit` named tuple (``gamma0``, ``c``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:asm3.4`` (paper eq. 3.4).
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
    r"""Upper bound on the classifier clock under linear gap growth (Theorem 3.5).

    .. math::

        t_{\rm cls}(\varepsilon)\le t_0+\frac1c\Big[\log\frac{K-1}{\varepsilon}-\gamma_0\Big]_+
        =O(\log 1/\varepsilon)

    (``sharp=True``: :math:`\varepsilon\to e^{\varepsilon}-1`, the exact inversion of the log1p bound).

    Parameters
    ----------
    eps : float > 0
    n_classes : int >= 2
    rate : float > 0
        Gap growth rate :math:`c` of (3.4).
    t0 : float >= 0
    gamma0 : real

    Examples
    --------
    ``fast_clock_bound(1e-4, 3, 0.5, t0=10, gamma0=1)`` = 27.807.

    References
    ----------
    Spec ``clocks:thm3.5`` (paper Theorem 3.5).  Only valid where (3.4) holds: plain GD on separable
    data violates it (erratum ``clocks-1``).
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
    r"""Loss bound for :math:`t\ge t_0` under (3.4).

    .. math::

        \mathcal L(W(t))\le\log\big(1+(K-1)e^{-\gamma_0-c(t-t_0)}\big)\le(K-1)e^{-\gamma_0-c(t-t_0)}

    (``linear=True`` returns the right-hand form).

    Raises
    ------
    DomainError
        For ``t < t0``.

    References
    ----------
    Spec ``clocks:thm3.5``.
    """
    tt = V.finite(t, "t")
    c = V.positive(rate, "rate")
    t0a = V.nonnegative(t0, "t0")
    g0 = V.finite(gamma0, "gamma0")
    V.ordered(t0a, tt, "t0", "t")
    with np.errstate(over="ignore"):
        gam = g0 + c * (tt - t0a)  # +inf only where the true gap exceeds 1.8e308 (the bound is then 0)
    k = _n_classes(n_classes)
    return V.scalar_or_array(_tail_linear(gam, k) if _flag(linear, "linear") else _tail(gam, k))


@cites("clocks:prop3.6")
def contraction_clock_bound(eps, loss0, rho, k0=0, *, exact=False):
    r"""Step bound on the classifier clock from a one-step tail contraction (Proposition 3.6).

    If :math:`\mathcal L_{k+1}\le(1-\rho)\mathcal L_k` for :math:`k\ge k_0`:

    .. math::

        t_{\rm cls}(\varepsilon)\le k_0+\Big\lceil\frac1\rho\log\frac{\mathcal L_{k_0}}{\varepsilon}\Big\rceil,
        \qquad\text{exact: }k_0+\Big\lceil\log\frac{\mathcal L_{k_0}}{\varepsilon}\Big/\log\frac1{1-\rho}\Big\rceil,

    and :math:`k_0` when :math:`\varepsilon\ge\mathcal L_{k_0}`.  The quotient is snapped to an integer
    when within 1e-9 of one before the ceiling.

    Parameters
    ----------
    eps : float > 0
    loss0 : float >= 0
    rho : float in (0, 1)
    k0 : int >= 0
    exact : bool

    Returns
    -------
    int
        A step index; ``math.inf`` where it exceeds the largest double (:math:`\rho\lesssim10^{-306}`).

    Examples: ``contraction_clock_bound(1e-6, 1.0, 0.1, k0=5)`` = 144; exact: 137.

    References
    ----------
    Spec ``clocks:prop3.6`` (paper Proposition 3.6).
    """
    e = V.positive(eps, "eps", scalar=True)
    l0 = V.nonnegative(loss0, "loss0", scalar=True)
    r = V.in_open_interval(rho, "rho", 0.0, 1.0, scalar=True)
    k0 = V.integer_at_least(k0, "k0", 0)
    exact = _flag(exact, "exact")
    if e >= l0:
        return k0
    rate = -math.log1p(-r) if exact else r
    # log(loss0 / eps) > 0: log1p of the exact difference when eps < loss0 <= 2 eps (Sterbenz), else the
    # log of the quotient, or log(l0) - log(e) where the quotient overflows (then the log is >= 709)
    q = l0 / e
    if l0 <= 2.0 * e:
        lq = math.log1p((l0 - e) / e)
    else:
        lq = math.log(q) if math.isfinite(q) else math.log(l0) - math.log(e)
    x = lq / rate
    if not math.isfinite(x):
        return math.inf  # the bound exceeds the largest double (rate <~ 1e-306)
    if abs(x - round(x)) <= _SNAP_ABS:
        x = float(round(x))
    return k0 + int(math.ceil(x))
