"""Clocks: the KL (representation) clock and its bounds."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from scipy import integrate

from .. import _floats as FL
from .. import _validate as V
from .._results import Bounds
from ..citations import cites
from ._args import _theta
from ._fast_clock import _records


@cites("clocks:thm4.9")
def kl_decay_exponent(theta):
    r"""Decay exponent of the energy gap, :math:`\Delta(t)\asymp t^{-1/(2\theta-1)}`.

    Parameters
    ----------
    theta : float in (1/2, 1)

    References
    ----------
    Spec ``clocks:thm4.9``.
    """
    th = _theta(theta)
    return V.scalar_or_array(1.0 / (2.0 * th - 1.0))


@cites("clocks:thm4.9")
def representation_clock_exponent(theta):
    r"""Exponent of the representation clock, :math:`t_{\rm rep}(\delta)\asymp\delta^{-(2\theta-1)}`.

    References
    ----------
    Spec ``clocks:thm4.9``.
    """
    th = _theta(theta)
    return V.scalar_or_array(2.0 * th - 1.0)


@cites("clocks:thm4.8", "clocks:asm4.5")
@V.broadcasting()
def kl_differential_bounds(gap, c_kl, C_kl, theta):
    r"""Two-sided bound on the dissipation rate of the energy gap (Theorem 4.8).

    .. math:: c_{\rm KL}^2\Delta^{2\theta}\le-\dot\Delta\le C_{\rm KL}^2\Delta^{2\theta}

    Returns
    -------
    (lower, upper) : bounds on :math:`-\dot\Delta`.
        A :class:`Bounds` named tuple (``lower``, ``upper``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:thm4.8`` (paper Theorem 4.8), under ``clocks:asm4.5``.
    """
    d = V.nonnegative(gap, "gap")
    c, C = _kl_consts(c_kl, C_kl)
    th = _theta(theta)
    # c^2 Delta^(2 theta) as one product: no inf * 0 when c^2 overflows and Delta^(2 theta) underflows
    return _bounds(FL.power_product([c, d], [2, 2.0 * th]), FL.power_product([C, d], [2, 2.0 * th]))


def _bounds(lower: np.ndarray, upper: np.ndarray) -> Bounds:
    """``Bounds`` with both sides at the broadcast shape of every input: ``lower`` depends on ``C_kl``
    only and ``upper`` on ``c_kl`` only, so each alone misses the other constant's shape."""
    shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    return Bounds(*(V.scalar_or_array(np.broadcast_to(x, shape).copy()) for x in (lower, upper)))


def _kl_consts(c_kl: Any, C_kl: Any) -> tuple[np.ndarray, np.ndarray]:
    c = V.positive(c_kl, "c_kl")
    C = V.positive(C_kl, "C_kl")
    V.ordered(c, C, "c_kl", "C_kl")
    return c, C


def _elapsed(t: Any, t0: Any) -> np.ndarray:
    tt = V.finite(t, "t")
    t0a = V.finite(t0, "t0")
    V.ordered(t0a, tt, "t0", "t")
    return tt - t0a


@cites("clocks:thm4.9", "clocks:thm4.8")
@V.broadcasting()
def log_kl_gap_solution(t, gap0, a, theta, t0=0.0):
    r"""Log of the solution of :math:`\dot\Delta=-a\Delta^{2\theta}`, stable as :math:`\theta\downarrow\frac12`.

    .. math::

        \log\Delta(t)=-\frac1{2\theta-1}\,\mathrm{log1p}\Big(\mathrm{expm1}\big((1-2\theta)\log\Delta_0\big)
        +a(2\theta-1)(t-t_0)\Big).

    Parameters
    ----------
    t : float >= t0 ; gap0 : float > 0 ; a : float > 0 ; theta : float in (1/2, 1) ; t0 : real

    References
    ----------
    Spec ``clocks:thm4.9`` (exact solution of the equality case of Theorem 4.8).
    """
    tau = _elapsed(t, t0)
    d0 = V.positive(gap0, "gap0")
    aa = V.positive(a, "a")
    th = _theta(theta)
    return V.scalar_or_array(_log_kl_gap(tau, d0, [(aa, 1)], 2.0 * th - 1.0))


def _log_kl_gap(tau: np.ndarray, d0: np.ndarray, a_factors: list, e: np.ndarray) -> np.ndarray:
    r"""log Delta = -log(Delta0^{-e} + a e tau) / e, with ``a = prod(base**power for base, power in a_factors)``.

    With x = -e log Delta0 and y = a e tau (a scaled product: finite unless the true y exceeds 1.8e308):
    ``log1p(expm1(x) + y)`` where |x| <= 1 and y <= 1 (the bracket is near 1 and its log is small: this
    form keeps the relative accuracy as e -> 0), ``logaddexp(x, log y)`` elsewhere (no overflow, no loss
    of e^x when x < -1; ``log y`` from logs of the factors when y overflows).  Relative error of
    Delta = exp(log Delta) against mpmath (2e4 points, t, Delta0, a log-uniform in [1e-300, 1e300],
    theta - 1/2 in [2^-53, 1/2)): near branch <= 2.3e-13, far branch <= 1.5e-13 (the condition
    number |log Delta| <= 745 of exp); the naive [.]^(-1/e) gave relative error 0.76 at theta = 0.6.
    """
    x = -e * np.log(d0)
    bases = [b for b, _ in a_factors] + [e, tau]
    powers = [p for _, p in a_factors] + [1, 1]
    y = FL.power_product(bases, powers)
    with np.errstate(divide="ignore"):
        ly_far = sum(p * np.log(b) for b, p in a_factors) + np.log(e) + np.log(tau)
        ly = np.where(np.isfinite(y), np.log(y), ly_far)
    near = (np.abs(x) <= 1.0) & (y <= 1.0)
    L = np.where(near, np.log1p(np.expm1(np.clip(x, -1.0, 1.0)) + np.minimum(y, 1.0)), np.logaddexp(x, ly))
    return -L / e


@cites("clocks:thm4.9", "clocks:thm4.8")
@V.broadcasting()
def kl_gap_solution(t, gap0, a, theta, t0=0.0):
    r"""Solution of the KL equality :math:`\dot\Delta=-a\Delta^{2\theta}`.

    .. math:: \Delta(t)=\Big[\Delta_0^{1-2\theta}+a(2\theta-1)(t-t_0)\Big]^{-\frac1{2\theta-1}}

    Example: ``kl_gap_solution(10.0, 1.0, 16.0, 0.75)`` = 81^{-2} = 1.52416e-4.  For
    :math:`\theta=\frac12` (PL, exponential) use :func:`kl_gap_solution_pl`.

    References
    ----------
    Spec ``clocks:thm4.9``.
    """
    with np.errstate(under="ignore"):
        return V.scalar_or_array(np.exp(log_kl_gap_solution(t, gap0, a, theta, t0)))


@cites("clocks:thm4.9")
@V.broadcasting()
def kl_gap_solution_pl(t, gap0, a, t0=0.0):
    r"""The PL (:math:`\theta=\frac12`) limit: :math:`\Delta(t)=\Delta_0e^{-a(t-t_0)}` (exponential clock).

    References
    ----------
    Spec ``clocks:thm4.9`` (excluded endpoint; provided separately rather than as a silent limit).
    """
    tau = _elapsed(t, t0)
    d0 = V.positive(gap0, "gap0")
    aa = V.positive(a, "a")
    # d0 e^{-a tau}: the product where e^{-a tau} is normal, else exp(log d0 - a tau) (no 1e300 * 0)
    with np.errstate(over="ignore", under="ignore"):
        x = aa * tau
        e = np.exp(-x)
        out = np.where(e >= FL.TINY, d0 * e, np.exp(np.log(d0) - x))
    return V.scalar_or_array(out)


@cites("clocks:thm4.9", "clocks:thm4.8")
@V.broadcasting()
def kl_gap_bounds(t, gap0, c_kl, C_kl, theta, t0=0.0):
    r"""Two-sided bounds on the energy gap under the sharp KL inequality.

    .. math::

        \Big[\Delta_0^{1-2\theta}+C_{\rm KL}^2(2\theta-1)\tau\Big]^{-\frac1{2\theta-1}}\le\Delta(t)\le
        \Big[\Delta_0^{1-2\theta}+c_{\rm KL}^2(2\theta-1)\tau\Big]^{-\frac1{2\theta-1}},\quad\tau=t-t_0.

    Returns
    -------
    (lower, upper)
        A :class:`Bounds` named tuple (``lower``, ``upper``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:thm4.9`` (paper Theorem 4.9).
    """
    c, C = _kl_consts(c_kl, C_kl)
    tau = _elapsed(t, t0)
    d0 = V.positive(gap0, "gap0")
    e = 2.0 * _theta(theta) - 1.0
    with np.errstate(under="ignore"):  # C^2 is never formed: C = 1e300 is a valid constant
        lower = np.exp(_log_kl_gap(tau, d0, [(C, 2)], e))
        upper = np.exp(_log_kl_gap(tau, d0, [(c, 2)], e))
    return _bounds(lower, upper)


def _kl_time(delta: np.ndarray, d0: np.ndarray, a_factors: list, th: np.ndarray,
             scale: Any = 1.0) -> np.ndarray:
    r"""(delta_s^{-e} - d0^{-e}) / (a e), clipped at 0, for delta_s = delta / scale, a = prod(b**p).

    Evaluated as delta_s^{-e} (-expm1(-e z)) / (a e) with z = log(d0 / delta_s) > 0: no difference of
    two large powers, no overflow of expm1, and z from ``log1p`` of the exact difference d0 - delta when
    d0 <= 2 delta (scale 1).  The product is a scaled power product (exact binary exponents) unless
    delta_s^{-e} itself leaves the double range (then log space).  Relative error (measured,
    tests/accuracy): <= 3e-14 where e |log delta| <= 709.
    """
    e, log_delta, z, m = _kl_time_parts(delta, d0, th, scale)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        p = np.exp(-e * log_delta)  # delta_s^{-e}
        bases = [p, m] + [b for b, _ in a_factors] + [e]
        powers = [1, 1] + [-q for _, q in a_factors] + [-1]
        direct = FL.power_product(bases, powers)
        far = np.exp(-e * log_delta + np.log(m) - sum(q * np.log(b) for b, q in a_factors) - np.log(e))
        t = np.where(np.isfinite(p) & (p >= FL.TINY), direct, far)
    return np.where(z > 0, t, 0.0)


def _kl_time_parts(delta, d0, th, scale=1.0):
    """e = 2 theta - 1, log delta_s, z = log(d0 / delta_s) and m = 1 - e^{-e z} (see :func:`_kl_time`)."""
    e = 2.0 * th - 1.0
    sc = np.asarray(scale, dtype=np.float64)
    ratio = FL.power_product([d0, sc, delta], [1, 1, -1])  # d0 / delta_s
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        log_delta = np.log(delta) - np.log(sc)
        z = np.where(np.isfinite(ratio), np.log(ratio), np.log(d0) - log_delta)
        if np.all(sc == 1.0):
            z = np.where(d0 <= 2.0 * delta, np.log1p((d0 - delta) / delta), z)
        m = -np.expm1(-e * np.maximum(z, 0.0))  # in [0, 1)
    return e, log_delta, z, m


def _log_kl_time(delta, d0, a_factors: list, th) -> np.ndarray:
    """log of :func:`_kl_time` (scale 1): finite where the time itself overflows; -inf where it is 0."""
    e, log_delta, z, m = _kl_time_parts(delta, d0, th)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -e * log_delta + np.log(m) - sum(q * np.log(b) for b, q in a_factors) - np.log(e)
    return np.where(z > 0, out, -np.inf)


@cites("clocks:thm4.9", "clocks:eq2.2")
@V.broadcasting()
def kl_clock_time(delta, gap0, a, theta, t0=0.0):
    r"""First time the KL solution reaches :math:`\delta`.

    .. math:: t(\delta)=t_0+\frac{\delta^{1-2\theta}-\Delta_0^{1-2\theta}}{a(2\theta-1)}\quad(\delta<\Delta_0),

    and :math:`t_0` when :math:`\delta\ge\Delta_0`.  Example: ``kl_clock_time(1e-4, 1.0, 16.0, 0.75)`` = 12.375.

    References
    ----------
    Spec ``clocks:thm4.9``; the representation clock ``clocks:eq2.2`` with :math:`\mathcal G=\Delta`.
    """
    dl = V.positive(delta, "delta")
    d0 = V.positive(gap0, "gap0")
    aa = V.positive(a, "a")
    th = _theta(theta)
    t0a = V.finite(t0, "t0")
    return V.scalar_or_array(t0a + _kl_time(dl, d0, [(aa, 1)], th))


@cites("clocks:thm4.9", "clocks:eq2.2")
@V.broadcasting()
def representation_clock_bounds(delta, gap0, c_kl, C_kl, theta, T=0.0, m_G=1.0, M_G=1.0):
    r"""Two-sided bounds on the representation clock (Theorem 4.9).

    With :math:`m_G\Delta\le\mathcal G\le M_G\Delta` on the late region and :math:`\Delta_T=` ``gap0``:

    .. math::

        T+\frac{(\delta/m_G)^{1-2\theta}-\Delta_T^{1-2\theta}}{C_{\rm KL}^2(2\theta-1)}\le t_{\rm rep}(\delta)\le
        T+\frac{(\delta/M_G)^{1-2\theta}-\Delta_T^{1-2\theta}}{c_{\rm KL}^2(2\theta-1)},

    each bound clipped below at :math:`T` (the threshold is already met at :math:`T`).

    Returns
    -------
    (lower, upper)
        A :class:`Bounds` named tuple (``lower``, ``upper``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:thm4.9`` (paper Theorem 4.9; the display is reconstructed [R-med]).
    """
    dl = V.positive(delta, "delta")
    d0 = V.positive(gap0, "gap0")
    c, C = _kl_consts(c_kl, C_kl)
    th = _theta(theta)
    Ta = V.finite(T, "T")
    mg = V.positive(m_G, "m_G")
    Mg = V.positive(M_G, "M_G")
    V.ordered(mg, Mg, "m_G", "M_G")
    lo = Ta + _kl_time(dl, d0, [(C, 2)], th, mg)
    hi = Ta + _kl_time(dl, d0, [(c, 2)], th, Mg)
    return _bounds(lo, hi)


@cites("clocks:lem4.6")
def energy_dissipation_residual(times, energy, grad_sq_norm):
    r"""Residual of the integrated energy identity along a recorded gradient-flow path.

    .. math:: r_j=\mathcal E(t_j)+\int_{t_0}^{t_j}\lVert\partial^\circ\mathcal E\rVert_F^2\,dt-\mathcal E(t_0)

    (trapezoid rule; zero for an exact gradient flow, :math:`O(\Delta t^2)` from the quadrature).

    Parameters
    ----------
    times : 1-D strictly increasing ; energy, grad_sq_norm : arrays like ``times`` (finite, grad >= 0)

    Returns
    -------
    ndarray (len(times),), ``r[0] = 0``.

    References
    ----------
    Spec ``clocks:lem4.6`` (paper Lemma 4.6).
    """
    t, E = _records(times, energy, "energy")
    V.finite(E, "energy")
    _, g = _records(times, grad_sq_norm, "grad_sq_norm")
    V.nonnegative(g, "grad_sq_norm")
    return E + integrate.cumulative_trapezoid(g, t, initial=0.0) - E[0]


@cites("clocks:appF2-kl-examples")
def kl_exponent_power(q):
    r"""KL exponent of the power bottom :math:`f(x)=\lVert x\rVert^q`, :math:`q>2`: :math:`\theta=1-1/q`.

    :math:`\lVert\nabla f\rVert=qf^{1-1/q}`, so the flow obeys :math:`\dot f=-q^2f^{2\theta}`
    (:func:`kl_rate_power`) and :math:`f\sim t^{-q/(q-2)}`.

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 1).
    """
    qq = V.as_float_array(q, "q")
    if np.any(qq <= 2):
        raise V.DomainError(f"q must be > 2 for a polynomial (theta > 1/2) bottom (got {float(np.min(qq))!r})")
    return V.scalar_or_array(1.0 - 1.0 / qq)


@cites("clocks:appF2-kl-examples")
def kl_rate_power(q):
    r"""Constant :math:`a=q^2` of :math:`\dot f=-af^{2\theta}` for :math:`f=\lVert x\rVert^q` (:math:`q>2`).

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 1).
    """
    kl_exponent_power(q)
    qq = V.as_float_array(q, "q")
    with np.errstate(over="ignore"):  # inf for q > 1.3e154 (true value beyond the double range)
        return V.scalar_or_array(qq * qq)


@cites("clocks:appF2-kl-examples")
def kl_exponent_depth(depth):
    r"""KL exponent of depth-induced flatness (balanced depth-:math:`L` net, no decay): :math:`\theta=1-\frac1{2L}`.

    A zero-target direction obeys :math:`\dot\sigma=-L\sigma^{3-2/L}`, so :math:`\Delta\sim t^{-L/(L-1)}`.

    Parameters
    ----------
    depth : int >= 2

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 2).
    """
    L = V.count(depth, "depth", 2)
    return 1.0 - 1.0 / (2.0 * L)


@cites("clocks:appF2-kl-examples")
def kl_rate_depth(depth, n_directions=1):
    r"""Constant of :math:`\dot\Delta=-a\Delta^{2\theta}` for :math:`m` zero-target directions at depth :math:`L`.

    .. math:: a=mL\,(2/m)^{2-1/L},\qquad \Delta=\tfrac m2\sigma^2 .

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 2; count the directions).
    """
    L = V.integer_at_least(depth, "depth", 2)
    m = V.integer_at_least(n_directions, "n_directions", 1)
    # = 4 (L/m) (m/2)^(1/L): the exponent 1/L <= 1/2 does not amplify the rounding of m/2 (<= 3 ulp)
    return 4.0 * L / m * (m / 2.0) ** (1.0 / L)


class KLConstants(NamedTuple):
    r"""KL constants of a Kurdyka–Łojasiewicz inequality :math:`|\nabla f|\ge a\,\Delta^{\theta}`."""

    theta: float
    r"""KL exponent :math:`\theta`."""
    a: float
    """KL constant :math:`a`."""


@cites("clocks:appF2-kl-examples")
def kl_constants_critical_weight_decay():
    r"""KL constants of critical weight decay at depth 2 (target :math:`s`, :math:`\mu=s`).

    :math:`\dot\sigma=-2\sigma^2`, :math:`\Delta=\frac12\sigma^2`, hence :math:`\theta=\frac34`,
    :math:`a=4\sqrt2` and :math:`\Delta\sim t^{-2}`.

    Returns
    -------
    (theta, a) = (0.75, 4 sqrt 2)
        A :class:`KLConstants` named tuple (``theta``, ``a``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 3).
    """
    return KLConstants(0.75, 4.0 * math.sqrt(2.0))


@cites("clocks:appF2-wd-rate")
@V.broadcasting()
def weight_decay_tail_rate(mu, depth, f_perp_norm=0.0):
    r"""Exponential rate of the normalized spectral tail under weight decay in a factorized network.

    Linearising :math:`\dot\sigma=L\sigma^{2-2/L}F-\mu L\sigma` around a low-rank limit:

    .. math::

        \tau_k(t)\propto e^{-rt},\qquad r=\begin{cases}4(\mu-\lVert F_\perp\rVert_2),&L=2,\\2\mu L,&L\ge3.\end{cases}

    Weight decay alone therefore gives an *exponential* representation clock (erratum ``clocks-2``);
    ``f_perp_norm`` is ignored for :math:`L\ge3`.  An estimate from the linearisation (status asymptotic).

    Parameters
    ----------
    mu : float > 0
    depth : int >= 2
    f_perp_norm : float in [0, mu] (the L = 2 optimality condition)

    References
    ----------
    Spec ``clocks:appF2-wd-rate``.
    """
    m = V.positive(mu, "mu")
    L = V.integer_at_least(depth, "depth", 2)
    f = V.nonnegative(f_perp_norm, "f_perp_norm")
    if L == 2:
        if np.any(f > m):
            raise V.DomainError(f"f_perp_norm must be <= mu at a depth-2 stationary point (got {float(np.max(f))!r})")
        return V.scalar_or_array(4.0 * (m - f) + 0.0 * f)
    return V.scalar_or_array(2.0 * m * L + 0.0 * f)
