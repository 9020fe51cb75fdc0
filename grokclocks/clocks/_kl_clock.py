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
from .. import _pointwise as P
from ._args import _is_plus_zero, _theta
from ._fast_clock import _records

# exp(x) is a normal double for x >= log(TINY) = -708.40 (the direct log-sum below needs it)
_X_NORMAL = -708.0


@cites("clocks:thm4.9")
def kl_decay_exponent(theta):
    r"""Decay exponent 1/(2θ − 1) of the energy gap under the sharp KL inequality, Δ(t) ≍ t^(−1/(2θ − 1)).

    Parameters
    ----------
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1) (θ = 1/2 is the exponential PL case).

    Returns
    -------
    float or numpy.ndarray
        1/(2θ − 1) > 1, of the shape of `theta`.

    Raises
    ------
    DomainError
        If `theta` is empty, not finite, or outside (1/2, 1).

    References
    ----------
    Spec ID `clocks:thm4.9` (paper Theorem 4.9).
    """
    th = _theta(theta)
    return V.scalar_or_array(1.0 / (2.0 * th - 1.0))


@cites("clocks:thm4.9")
def representation_clock_exponent(theta):
    r"""Exponent 2θ − 1 of the representation clock, t_rep(δ) ≍ δ^(−(2θ − 1)).

    Parameters
    ----------
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1).

    Returns
    -------
    float or numpy.ndarray
        2θ − 1 in (0, 1), of the shape of `theta`.

    Raises
    ------
    DomainError
        If `theta` is empty, not finite, or outside (1/2, 1).

    References
    ----------
    Spec ID `clocks:thm4.9` (paper Theorem 4.9).
    """
    th = _theta(theta)
    return V.scalar_or_array(2.0 * th - 1.0)


@cites("clocks:thm4.8", "clocks:asm4.5")
@V.broadcasting()
def kl_differential_bounds(gap, c_kl, C_kl, theta):
    r"""Two-sided bound on the dissipation rate −dΔ/dt of the energy gap (Theorem 4.8).

    .. math:: c_{\rm KL}^2\Delta^{2\theta}\le-\dot\Delta\le C_{\rm KL}^2\Delta^{2\theta}

    In words: c_KL²·Δ^(2θ) ≤ −dΔ/dt ≤ C_KL²·Δ^(2θ).  Each side is formed as one scaled product, so
    a huge constant beside a tiny gap gives no inf·0.  The arguments broadcast together.

    Parameters
    ----------
    gap : float or array_like
        Energy gap Δ = E − E_min, finite and ≥ 0.
    c_kl : float or array_like
        Lower KL constant c_KL of the two-sided inequality, finite and > 0.
    C_kl : float or array_like
        Upper KL constant C_KL, finite and ≥ `c_kl` element-wise.
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1).

    Returns
    -------
    Bounds
        The named tuple (lower, upper) of bounds on −dΔ/dt, each a float or an array of the broadcast
        shape.

    Raises
    ------
    DomainError
        If an argument is outside its domain above (including c_kl > C_kl), or the arrays do not
        broadcast.

    References
    ----------
    Spec IDs `clocks:thm4.8` (paper Theorem 4.8) and `clocks:asm4.5` (Assumption 4.5, the sharp KL
    geometry it needs).
    """
    sc = P.scalars(gap, c_kl, C_kl, theta)
    d = V.nonnegative(gap, "gap", scalar=sc)
    c, C = _kl_consts(c_kl, C_kl, sc)
    th = _theta(theta, sc)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # inf * 0 of the direct try: not kept
        return _bounds(*_kl_differential(d, c, C, th))


def _kl_differential(d: Any, c: Any, C: Any, th: Any) -> tuple:
    """The engine of `kl_differential_bounds` (floats or arrays; the caller's errstate)."""
    q = 2.0 * th
    # Delta^(2 theta) once for both sides, (c^2) Delta^(2 theta): FL.power_product's operations, kept where
    # every factor and product is a normal double; elsewhere the scaled product (no inf * 0 when c^2
    # overflows and Delta^(2 theta) underflows)
    f = np.power(d, q)
    lower, upper = (c * c) * f, (C * C) * f
    if not _all_normal(c * c, C * C, f, lower, upper):
        lower, upper = FL.power_product([c, d], [2, q]), FL.power_product([C, d], [2, q])
    return lower, upper


def _all_normal(*xs: Any) -> bool:
    """Whether every value of every argument is a normal double (two reductions each)."""
    for x in xs:
        lo, hi = P.extrema(x)
        if not (FL.TINY <= lo and hi <= _DBL_MAX):
            return False
    return True


_DBL_MAX = float(np.finfo(np.float64).max)


def _bounds(lower: Any, upper: Any) -> Bounds:
    """`Bounds` with both sides at the broadcast shape of every input: `lower` depends on `C_kl`
    only and `upper` on `c_kl` only, so each alone misses the other constant's shape."""
    if not (isinstance(lower, np.ndarray) and lower.ndim) and not (isinstance(upper, np.ndarray) and upper.ndim):
        return Bounds(float(lower), float(upper))
    shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    return Bounds(*(x if P.into(x) is not None and x.shape == shape else  # an engine's own array: no copy
                    V.scalar_or_array(np.broadcast_to(x, shape).copy()) for x in (lower, upper)))


def _kl_consts(c_kl: Any, C_kl: Any, sc: bool = False) -> tuple[Any, Any]:
    c = V.positive(c_kl, "c_kl", scalar=sc)
    C = V.positive(C_kl, "C_kl", scalar=sc)
    P.ordered(c, C, "c_kl", "C_kl")
    return c, C


def _times(t: Any, t0: Any, sc: bool = False) -> tuple[Any, Any]:
    """t and t0 checked (finite, t >= t0 element-wise)."""
    return _times_extrema(t, t0, sc)[:2]


def _times_extrema(t: Any, t0: Any, sc: bool = False) -> tuple[Any, Any, tuple[float, float]]:
    """`_times` and (min t, max t), the extremes the conversion of t reduced (no further pass over t for the
    order check against a number t0, or for an engine's range test)."""
    if sc:
        tt = V.finite(t, "t", scalar=True)
        t0a = V.finite(t0, "t0", scalar=True)
        P.ordered(t0a, tt, "t0", "t")
        return tt, t0a, (tt, tt)
    tt, (lo, hi) = V.finite(t, "t", extrema=True)  # the conversion's own two reductions
    t0a = V.finite(t0, "t0")
    if not (t0a.ndim == 0 and tt.size and lo >= float(t0a)):  # t0 a number below every t: nothing to look at
        P.ordered(t0a, tt, "t0", "t")
    return tt, t0a, (lo, hi)


def _since(t: Any, t0: Any) -> Any:
    """t - t0, or t itself (no pass, read-only) where t0 is the number +0 (x - 0 = x bit for bit)."""
    return t if _is_plus_zero(t0) else t - t0


def _elapsed(t: Any, t0: Any, sc: bool = False) -> Any:
    tt, t0a = _times(t, t0, sc)
    return tt - t0a


@cites("clocks:thm4.9", "clocks:thm4.8")
@V.broadcasting()
def log_kl_gap_solution(t, gap0, a, theta, t0=0.0):
    r"""Logarithm of the solution of dΔ/dt = −a·Δ^(2θ), stable as θ ↓ 1/2.

    .. math::

        \log\Delta(t)=-\frac1{2\theta-1}\,\mathrm{log1p}\Big(\mathrm{expm1}\big((1-2\theta)\log\Delta_0\big)
        +a(2\theta-1)(t-t_0)\Big).

    In words: log Δ(t) = −log(Δ₀^(1−2θ) + a·(2θ − 1)·(t − t₀))/(2θ − 1), evaluated with log1p and
    expm1 near the start (relative accuracy kept as 2θ − 1 → 0) and in log space elsewhere (no
    overflow).  Use it where Δ(t) itself underflows.  The arguments broadcast together.

    Parameters
    ----------
    t : float or array_like
        Time(s) t, finite and ≥ `t0` element-wise.
    gap0 : float or array_like
        Energy gap Δ₀ at time t₀, finite and > 0.
    a : float or array_like
        Rate constant a of dΔ/dt = −a·Δ^(2θ), finite and > 0.
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1).
    t0 : float or array_like, optional
        Start time t₀, any finite real (default 0).

    Returns
    -------
    float or numpy.ndarray
        log Δ(t), of the broadcast shape.

    Raises
    ------
    DomainError
        If some t < t₀, an argument is outside its domain above, or the arrays do not broadcast.

    References
    ----------
    Spec IDs `clocks:thm4.9` (paper Theorem 4.9) and `clocks:thm4.8` (the exact solution of the
    equality case of Theorem 4.8).
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        return P.result(_log_kl_gap_solution(t, gap0, a, theta, t0))


def _log_kl_gap_solution(t: Any, gap0: Any, a: Any, theta: Any, t0: Any) -> Any:
    """Validated arguments of `log_kl_gap_solution` into `_log_kl_gap` (floats for a scalar call)."""
    sc = P.scalars(t, gap0, a, theta, t0)
    tt, t0a = _times(t, t0, sc)
    d0 = V.positive(gap0, "gap0", scalar=sc)
    aa = V.positive(a, "a", scalar=sc)
    th = _theta(theta, sc)
    return _log_kl_gap_rate(tt, t0a, d0, aa, th)


def _log_kl_gap_rate(t: Any, t0: Any, d0: Any, a: Any, th: Any) -> Any:
    """`_log_kl_gap` for the rate a on validated arguments (floats or arrays)."""
    return _log_kl_gap(_since(t, t0), d0, [(a, 1)], 2.0 * th - 1.0)


def _kl_start(d0: Any, e: Any) -> tuple:
    """x = -e log Delta0, e^x, the extremes of x and e: the part of `_log_kl_gap` that does not depend on the
    rate (shared by the two sides of `kl_gap_bounds`).  x as e (-log Delta0), the same bits as (-e) log Delta0
    (IEEE products are sign-symmetric) without a negated copy of e (at 1e5 points two fresh temporaries
    freed together let the allocator hand their pages back: page faults on every call)."""
    m = np.log(d0)
    out = P.into(m, e)
    if out is None:  # numbers, or a number against an array (a new array either way)
        x = e * -m
    else:
        x = np.multiply(e, np.negative(m, out=m), out=m)
    return x, np.exp(x), P.extrema(x), e


def _log_kl_gap(tau: Any, d0: Any, a_factors: list, e: Any, start: tuple | None = None) -> Any:
    r"""log Delta = -log(Delta0^{-e} + a e tau) / e, with `a = prod(base**power for base, power in a_factors)`.

    With x = -e log Delta0 and y = a e tau (a scaled product: finite unless the true y exceeds 1.8e308),
    L = log(e^x + y) is evaluated as `log1p(expm1(x) + y)` where |x| <= 1 and y <= 1 (the bracket is near 1
    and its log is small: this form keeps the relative accuracy as e -> 0); elsewhere as log of the sum of
    the two positive terms where e^x is a normal double and the sum finite (absolute error of L ~ 2 eps,
    as the logaddexp form), and as `logaddexp(x, log y)` on the other points (no overflow, no loss of e^x
    when e^x is subnormal; `log y` from logs of the factors when y overflows).  Each form on its own points
    only (`P.patch`); the caller sets the errstate (over, under, divide ignored).  Relative error of
    Delta = exp(log Delta) against mpmath (2e4 points, t, Delta0, a log-uniform in [1e-300, 1e300],
    theta - 1/2 in [2^-53, 1/2)): near branch <= 2.3e-13, far branch <= 1.5e-13 (the condition
    number |log Delta| <= 745 of exp); the naive [.]^(-1/e) gave relative error 0.76 at theta = 0.6.
    """
    x, ex, (x_lo, x_hi), e = _kl_start(d0, e) if start is None else start
    bases = [b for b, _ in a_factors]
    y = P.product(bases + [e, tau], [p for _, p in a_factors] + [1, 1])
    L = np.add(ex, y, out=None if start is not None else P.into(ex, y))  # e^x kept where it is shared
    L = np.log(L, out=P.into(L))
    if x_lo < _X_NORMAL or not P.high(L) < math.inf:
        def far(x, y, e, tau, *bs):
            ly = P.patch(np.log(y), y == math.inf,
                         lambda e, tau, *bs: sum(p * np.log(b) for b, (_, p) in zip(bs, a_factors)) + np.log(e)
                         + np.log(tau), e, tau, *bs)
            return np.logaddexp(x, ly)
        L = P.patch(L, (x < _X_NORMAL) | (L == math.inf), far, x, y, e, tau, *bases)
    if x_lo <= 1.0 and x_hi >= -1.0 and P.low(y) <= 1.0:
        L = P.patch(L, (np.abs(x) <= 1.0) & (y <= 1.0), lambda x, y: np.log1p(np.expm1(x) + y), x, y)
    out = P.into(L, e)  # -(L / e): the bits of L / (-e) (IEEE division is sign-symmetric)
    return -(L / e) if out is None else np.negative(np.divide(L, e, out=out), out=out)


def _exp_into(x: Any) -> Any:
    """exp(x), in place on an engine's own array."""
    return np.exp(x, out=P.into(x))


@cites("clocks:thm4.9", "clocks:thm4.8")
@V.broadcasting()
def kl_gap_solution(t, gap0, a, theta, t0=0.0):
    r"""Solution Δ(t) of the KL equality dΔ/dt = −a·Δ^(2θ).

    .. math:: \Delta(t)=\Big[\Delta_0^{1-2\theta}+a(2\theta-1)(t-t_0)\Big]^{-\frac1{2\theta-1}}

    In words: Δ(t) = (Δ₀^(1−2θ) + a·(2θ − 1)·(t − t₀))^(−1/(2θ − 1)), a power-law decay; computed as
    the exponential of `log_kl_gap_solution`.  For θ = 1/2 (PL, exponential decay) use
    `kl_gap_solution_pl`.  The arguments broadcast together.

    Parameters
    ----------
    t : float or array_like
        Time(s) t, finite and ≥ `t0` element-wise.
    gap0 : float or array_like
        Energy gap Δ₀ at time t₀, finite and > 0.
    a : float or array_like
        Rate constant a of dΔ/dt = −a·Δ^(2θ), finite and > 0.
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1).
    t0 : float or array_like, optional
        Start time t₀, any finite real (default 0).

    Returns
    -------
    float or numpy.ndarray
        Δ(t) ≥ 0 (0 only after underflow), of the broadcast shape.

    Raises
    ------
    DomainError
        If some t < t₀, an argument is outside its domain above, or the arrays do not broadcast.

    Examples
    --------
    >>> kl_gap_solution(10.0, 1.0, 16.0, 0.75)  # 81**-2
    0.00015241579027587275

    References
    ----------
    Spec IDs `clocks:thm4.9` (paper Theorem 4.9) and `clocks:thm4.8` (Theorem 4.8, equality case).
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        return P.result(_exp_into(_log_kl_gap_solution(t, gap0, a, theta, t0)))


@cites("clocks:thm4.9")
@V.broadcasting()
def kl_gap_solution_pl(t, gap0, a, t0=0.0):
    r"""The PL limit θ = 1/2 of the KL gap solution: Δ(t) = Δ₀·e^(−a·(t − t₀)), an exponential clock.

    The excluded endpoint of Theorem 4.9, provided separately rather than as a silent limit of
    `kl_gap_solution`.  The arguments broadcast together.

    Parameters
    ----------
    t : float or array_like
        Time(s) t, finite and ≥ `t0` element-wise.
    gap0 : float or array_like
        Energy gap Δ₀ at time t₀, finite and > 0.
    a : float or array_like
        Rate constant a of dΔ/dt = −a·Δ, finite and > 0.
    t0 : float or array_like, optional
        Start time t₀, any finite real (default 0).

    Returns
    -------
    float or numpy.ndarray
        Δ(t) ≥ 0, of the broadcast shape (formed in log space where e^(−a·(t − t₀)) is subnormal).

    Raises
    ------
    DomainError
        If some t < t₀, an argument is outside its domain above, or the arrays do not broadcast.

    References
    ----------
    Spec ID `clocks:thm4.9` (paper Theorem 4.9, the excluded endpoint θ = 1/2).
    """
    sc = P.scalars(t, gap0, a, t0)
    tt, t0a, (t_lo, t_hi) = _times_extrema(t, t0, sc)
    d0 = V.positive(gap0, "gap0", scalar=sc)
    aa = V.positive(a, "a", scalar=sc)
    with np.errstate(over="ignore", under="ignore"):
        return P.result(_kl_gap_pl(tt, t0a, d0, -aa, t_hi))


def _kl_gap_pl(t: Any, t0: Any, d0: Any, neg_a: Any, t_hi: float = math.inf) -> Any:
    """d0 e^{-a tau}: the product where e^{-a tau} is normal, else exp(log d0 - a tau) (no 1e300 * 0); -a tau as
    (-a) tau and log d0 - a tau as log d0 + (-a tau) (the same bits).  `t_hi` >= every t: with numbers a and t0,
    -a (t_hi - t0) > -700 (rounding is monotone) puts every e^{-a tau} far above the subnormals, no pass to look."""
    x = neg_a * _since(t, t0)
    if isinstance(x, np.ndarray) and np.ndim(neg_a) == 0 and np.ndim(t0) == 0 \
            and float(neg_a) * (t_hi - float(t0)) > -700.0:
        e = np.exp(x, out=P.into(x))  # no point needs x again: in place
        return np.multiply(d0, e, out=P.into(e, d0))
    e = np.exp(x)
    far = e < FL.TINY if P.low(e) < FL.TINY else False  # one reduction: the mask only if a point needs it
    return P.patch(np.multiply(d0, e, out=P.into(e, d0)), far, lambda d0, x: np.exp(np.log(d0) + x), d0, x)


@cites("clocks:thm4.9", "clocks:thm4.8")
@V.broadcasting()
def kl_gap_bounds(t, gap0, c_kl, C_kl, theta, t0=0.0):
    r"""Two-sided bounds on the energy gap Δ(t) under the sharp KL inequality (Theorem 4.9).

    .. math::

        \Big[\Delta_0^{1-2\theta}+C_{\rm KL}^2(2\theta-1)\tau\Big]^{-\frac1{2\theta-1}}\le\Delta(t)\le
        \Big[\Delta_0^{1-2\theta}+c_{\rm KL}^2(2\theta-1)\tau\Big]^{-\frac1{2\theta-1}},\quad\tau=t-t_0.

    In words: the KL gap solution with rate C_KL² is the lower bound, with rate c_KL² the upper bound
    (τ = t − t₀).  C_KL² is never formed, so C_KL = 10³⁰⁰ is a valid constant.  The arguments
    broadcast together.

    Parameters
    ----------
    t : float or array_like
        Time(s) t, finite and ≥ `t0` element-wise.
    gap0 : float or array_like
        Energy gap Δ₀ at time t₀, finite and > 0.
    c_kl : float or array_like
        Lower KL constant c_KL, finite and > 0.
    C_kl : float or array_like
        Upper KL constant C_KL, finite and ≥ `c_kl` element-wise.
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1).
    t0 : float or array_like, optional
        Start time t₀, any finite real (default 0).

    Returns
    -------
    Bounds
        The named tuple (lower, upper) of bounds on Δ(t), each a float or an array of the broadcast
        shape.

    Raises
    ------
    DomainError
        If some t < t₀, an argument is outside its domain above (including c_kl > C_kl), or the arrays
        do not broadcast.

    References
    ----------
    Spec IDs `clocks:thm4.9` (paper Theorem 4.9) and `clocks:thm4.8` (Theorem 4.8).
    """
    sc = P.scalars(t, gap0, c_kl, C_kl, theta, t0)
    c, C = _kl_consts(c_kl, C_kl, sc)
    tt, t0a = _times(t, t0, sc)
    d0 = V.positive(gap0, "gap0", scalar=sc)
    th = _theta(theta, sc)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):  # C^2 is never formed: C = 1e300 is valid
        return _bounds(*_kl_gap_bounds(tt, t0a, d0, c, C, th))


def _kl_gap_bounds(t: Any, t0: Any, d0: Any, c: Any, C: Any, th: Any) -> tuple:
    """The engine of `kl_gap_bounds` on validated arguments (the caller's errstate)."""
    tau, e = _since(t, t0), 2.0 * th - 1.0
    start = _kl_start(d0, e)
    return _exp_into(_log_kl_gap(tau, d0, [(C, 2)], e, start)), _exp_into(_log_kl_gap(tau, d0, [(c, 2)], e, start))


def _kl_time(delta: Any, d0: Any, a_factors: list, th: Any, scale: Any = 1.0, parts: tuple | None = None) -> Any:
    r"""(delta_s^{-e} - d0^{-e}) / (a e), clipped at 0, for delta_s = delta / scale, a = prod(b**p).

    Evaluated as delta_s^{-e} (-expm1(-e z)) / (a e) with z = log(d0 / delta_s) > 0: no difference of
    two large powers, no overflow of expm1, and z from `log1p` of the exact difference d0 - delta when
    d0 <= 2 delta (scale 1).  The product is a scaled power product (exact binary exponents) unless
    delta_s^{-e} itself leaves the double range (then log space, on those points only).  The caller sets
    the errstate (over, under, divide, invalid ignored).  Relative error (measured, tests/accuracy):
    <= 3e-14 where e |log delta| <= 709.
    """
    e, log_delta, z, m, p = _kl_level(delta, d0, th, scale) if parts is None else parts
    bases = [b for b, _ in a_factors]
    t = P.product([p, m] + bases + [e], [1, 1] + [-q for _, q in a_factors] + [-1])
    p_lo, p_hi = P.extrema(p)
    if not (p_lo >= FL.TINY and p_hi < math.inf):  # reductions: log space only on the points that need it
        t = P.patch(t, (p < FL.TINY) | (p == math.inf),
                    lambda e, log_delta, m, *bs: np.exp(-e * log_delta + np.log(m)
                                                        - sum(q * np.log(b) for b, (_, q) in zip(bs, a_factors))
                                                        - np.log(e)), e, log_delta, m, *bases)
    if P.low(z) > 0.0 and (not isinstance(z, np.ndarray) or z.ndim == 0
                           or np.shape(t) == np.broadcast_shapes(np.shape(t), z.shape)):
        return t
    return P.patch(t, z <= 0.0, lambda z: np.zeros(np.shape(z)), z)  # the level met at the start (z may be -inf)


def _kl_level(delta: Any, d0: Any, th: Any, scale: Any) -> tuple:
    """`_kl_time_parts` and p = delta_s^{-e}: the part of `_kl_time` that does not depend on the rate."""
    e, log_delta, z, m = _kl_time_parts(delta, d0, th, scale)
    return e, log_delta, z, m, np.exp(-e * log_delta)


def _kl_time_parts(delta: Any, d0: Any, th: Any, scale: Any = 1.0) -> tuple:
    """e = 2 theta - 1, log delta_s, z = log(d0 / delta_s) and m = 1 - e^{-e z} (see `_kl_time`)."""
    e = 2.0 * th - 1.0
    # scale the number 1 (G = Delta): its factor and its log (0) left out, the same bits (x * 1 = x, x - 0 = x)
    unit = (type(scale) is float or np.ndim(scale) == 0) and float(scale) == 1.0
    ratio = P.product([d0, delta], [1, -1]) if unit else P.product([d0, scale, delta], [1, 1, -1])  # d0 / delta_s
    log_delta = np.log(delta) if unit else np.log(delta) - np.log(scale)
    z = np.log(ratio, out=P.into(ratio))  # (ratio is read again only where it overflowed, then from z's inf)
    if not P.high(z) < math.inf:  # one reduction: every ratio finite (log is inf exactly where the ratio is)
        z = P.patch(z, z == math.inf, lambda d0, log_delta: np.log(d0) - log_delta, d0, log_delta)
    s_lo, s_hi = (1.0, 1.0) if unit else P.extrema(scale)
    if s_lo == s_hi == 1.0:  # log1p of the exact difference on the points with d0 <= 2 delta only
        z = P.patch(z, d0 <= 2.0 * delta, lambda d0, delta: np.log1p((d0 - delta) / delta), d0, delta)
    m = -np.expm1(-e * np.maximum(z, 0.0))  # in [0, 1)
    return e, log_delta, z, m


def _log_kl_time(delta, d0, a_factors: list, th) -> np.ndarray:
    """log of `_kl_time` (scale 1): finite where the time itself overflows; -inf where it is 0."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        e, log_delta, z, m = _kl_time_parts(delta, d0, th)
        out = -e * log_delta + np.log(m) - sum(q * np.log(b) for b, q in a_factors) - np.log(e)
    return np.where(z > 0, out, -np.inf)


@cites("clocks:thm4.9", "clocks:eq2.2")
@V.broadcasting()
def kl_clock_time(delta, gap0, a, theta, t0=0.0):
    r"""First time at which the KL gap solution reaches the level δ.

    .. math:: t(\delta)=t_0+\frac{\delta^{1-2\theta}-\Delta_0^{1-2\theta}}{a(2\theta-1)}\quad(\delta<\Delta_0),

    In words: t(δ) = t₀ + (δ^(1−2θ) − Δ₀^(1−2θ))/(a·(2θ − 1)) for δ < Δ₀, and t₀ when δ ≥ Δ₀ (the
    level is met at the start).  The arguments broadcast together.

    Parameters
    ----------
    delta : float or array_like
        Gap level δ, finite and > 0.
    gap0 : float or array_like
        Energy gap Δ₀ at time t₀, finite and > 0.
    a : float or array_like
        Rate constant a of dΔ/dt = −a·Δ^(2θ), finite and > 0.
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1).
    t0 : float or array_like, optional
        Start time t₀, any finite real (default 0).

    Returns
    -------
    float or numpy.ndarray
        The time t(δ) ≥ t₀, in the unit of 1/a, of the broadcast shape.

    Raises
    ------
    DomainError
        If an argument is outside its domain above or the arrays do not broadcast.

    Examples
    --------
    >>> round(kl_clock_time(1e-4, 1.0, 16.0, 0.75), 6)
    12.375

    References
    ----------
    Spec IDs `clocks:thm4.9` (paper Theorem 4.9) and `clocks:eq2.2` (eq. 2.2, the representation clock
    with the progress measure G = Δ).
    """
    sc = P.scalars(delta, gap0, a, theta, t0)
    dl = V.positive(delta, "delta", scalar=sc)
    d0 = V.positive(gap0, "gap0", scalar=sc)
    aa = V.positive(a, "a", scalar=sc)
    th = _theta(theta, sc)
    t0a = V.finite(t0, "t0", scalar=sc)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        return P.result(_kl_clock_time(dl, d0, aa, th, t0a))


def _kl_clock_time(delta: Any, d0: Any, a: Any, th: Any, t0: Any) -> Any:
    """t0 + `_kl_time` for the rate a (floats or arrays)."""
    return t0 + _kl_time(delta, d0, [(a, 1)], th)


@cites("clocks:thm4.9", "clocks:eq2.2")
@V.broadcasting()
def representation_clock_bounds(delta, gap0, c_kl, C_kl, theta, T=0.0, m_G=1.0, M_G=1.0):
    r"""Two-sided bounds on the representation clock t_rep(δ) (Theorem 4.9).

    With a progress measure G comparable to the energy gap, m_G·Δ ≤ G ≤ M_G·Δ on the late region, and
    Δ_T = `gap0` at time T:

    .. math::

        T+\frac{(\delta/m_G)^{1-2\theta}-\Delta_T^{1-2\theta}}{C_{\rm KL}^2(2\theta-1)}\le t_{\rm rep}(\delta)\le
        T+\frac{(\delta/M_G)^{1-2\theta}-\Delta_T^{1-2\theta}}{c_{\rm KL}^2(2\theta-1)},

    In words: the lower bound is the KL clock time to reach δ/m_G at rate C_KL², the upper bound the
    time to reach δ/M_G at rate c_KL²; each is clipped below at T (the threshold is then already met at
    T).  The arguments broadcast together.

    Parameters
    ----------
    delta : float or array_like
        Level δ of the progress measure G, finite and > 0.
    gap0 : float or array_like
        Energy gap Δ_T at the start T of the late region, finite and > 0.
    c_kl : float or array_like
        Lower KL constant c_KL, finite and > 0.
    C_kl : float or array_like
        Upper KL constant C_KL, finite and ≥ `c_kl` element-wise.
    theta : float or array_like
        KL exponent θ, in the open interval (1/2, 1).
    T : float or array_like, optional
        Start time T of the late (KL) region, any finite real (default 0).
    m_G : float or array_like, optional
        Lower comparison constant m_G of G ≥ m_G·Δ, finite and > 0 (default 1: G = Δ).
    M_G : float or array_like, optional
        Upper comparison constant M_G of G ≤ M_G·Δ, finite and ≥ `m_G` element-wise (default 1).

    Returns
    -------
    Bounds
        The named tuple (lower, upper) of bounds on t_rep(δ), each ≥ T, a float or an array of the
        broadcast shape.

    Raises
    ------
    DomainError
        If an argument is outside its domain above (including c_kl > C_kl or m_G > M_G), or the arrays
        do not broadcast.

    References
    ----------
    Spec IDs `clocks:thm4.9` (paper Theorem 4.9; the display is reconstructed) and `clocks:eq2.2`
    (eq. 2.2, the representation clock).
    """
    sc = P.scalars(delta, gap0, c_kl, C_kl, theta, T, m_G, M_G)
    dl = V.positive(delta, "delta", scalar=sc)
    d0 = V.positive(gap0, "gap0", scalar=sc)
    c, C = _kl_consts(c_kl, C_kl, sc)
    th = _theta(theta, sc)
    Ta = V.finite(T, "T", scalar=sc)
    mg = V.positive(m_G, "m_G", scalar=sc)
    Mg = V.positive(M_G, "M_G", scalar=sc)
    P.ordered(mg, Mg, "m_G", "M_G")
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        return _bounds(*_representation_clock_bounds(dl, d0, c, C, th, Ta, mg, Mg))


def _representation_clock_bounds(delta: Any, d0: Any, c: Any, C: Any, th: Any, T: Any, mg: Any, Mg: Any) -> tuple:
    """The engine of `representation_clock_bounds` (floats or arrays); the level's parts once
    where m_G and M_G are the same numbers (G = Delta)."""
    parts = _kl_level(delta, d0, th, mg)
    same = (type(mg) is float or np.ndim(mg) == 0) and (type(Mg) is float or np.ndim(Mg) == 0) and mg == Mg
    return (T + _kl_time(delta, d0, [(C, 2)], th, mg, parts),
            T + _kl_time(delta, d0, [(c, 2)], th, Mg, parts if same else None))


@cites("clocks:lem4.6")
def energy_dissipation_residual(times, energy, grad_sq_norm):
    r"""Residual of the integrated energy identity along a recorded gradient-flow path (Lemma 4.6).

    .. math:: r_j=\mathcal E(t_j)+\int_{t_0}^{t_j}\lVert\partial^\circ\mathcal E\rVert_F^2\,dt-\mathcal E(t_0)

    In words: r_j = E(t_j) + ∫_{t₀}^{t_j} ‖∂°E‖_F² dt − E(t₀), with the integral by the trapezoid
    rule; zero for an exact gradient flow, O(Δt²) from the quadrature.

    Parameters
    ----------
    times : array_like
        Record times t_j, a finite, strictly increasing 1-D array (gradient-flow time).
    energy : array_like
        Energy E(t_j) at each record, a finite 1-D array of the length of `times`.
    grad_sq_norm : array_like
        Squared Frobenius norm ‖∂°E‖_F² of the minimal-norm (sub)gradient at each record, a finite
        1-D array ≥ 0 of the length of `times`.

    Returns
    -------
    numpy.ndarray
        float64 array of shape (len(times),): the residuals r_j, with r[0] = 0.

    Raises
    ------
    DomainError
        If `times` is not finite and strictly increasing, or `energy` or `grad_sq_norm` is not finite,
        not of the length of `times`, or (for `grad_sq_norm`) negative.

    References
    ----------
    Spec ID `clocks:lem4.6` (paper Lemma 4.6).
    """
    t, E = _records(times, energy, "energy")
    V.finite(E, "energy")
    _, g = _records(times, grad_sq_norm, "grad_sq_norm")
    V.nonnegative(g, "grad_sq_norm")
    return E + integrate.cumulative_trapezoid(g, t, initial=0.0) - E[0]


@cites("clocks:appF2-kl-examples")
def kl_exponent_power(q):
    r"""KL exponent θ = 1 − 1/q of the power bottom f(x) = ‖x‖^q with q > 2.

    Since ‖∇f‖ = q·f^(1 − 1/q), the gradient flow obeys df/dt = −q²·f^(2θ) (see `kl_rate_power`) and
    f ∼ t^(−q/(q − 2)).

    Parameters
    ----------
    q : float or array_like
        Power q of the bottom, finite and > 2 (q ≤ 2 is not a polynomial, θ > 1/2, bottom).

    Returns
    -------
    float or numpy.ndarray
        θ = 1 − 1/q in (1/2, 1), of the shape of `q`.

    Raises
    ------
    DomainError
        If `q` is empty, not finite, or ≤ 2.

    References
    ----------
    Spec ID `clocks:appF2-kl-examples` (paper App. F.2, example 1).
    """
    return P.result(1.0 - 1.0 / _q(q))


def _q(q: Any, extrema: bool = False) -> Any:
    """q checked > 2 (one check on the conversion's extremes; floats for a scalar call); with `extrema`,
    ``(q, (min, max))``."""
    return V.in_domain(q, "q", 2.0, math.inf, lo_open=True, hi_open=True,
                       context="for a polynomial (theta > 1/2) bottom", scalar=P.scalars(q), extrema=extrema)


@cites("clocks:appF2-kl-examples")
def kl_rate_power(q):
    r"""Rate constant a = q² of df/dt = −a·f^(2θ) for the power bottom f(x) = ‖x‖^q with q > 2.

    Parameters
    ----------
    q : float or array_like
        Power q of the bottom, finite and > 2.

    Returns
    -------
    float or numpy.ndarray
        a = q², of the shape of `q`; `inf` for q > 1.3·10¹⁵⁴ (true value beyond the double range).

    Raises
    ------
    DomainError
        If `q` is empty, not finite, or ≤ 2.

    References
    ----------
    Spec ID `clocks:appF2-kl-examples` (paper App. F.2, example 1).
    """
    qq, (_, hi) = _q(q, extrema=True)  # the domain of kl_exponent_power, checked without forming its value
    if hi <= 1e154:  # no square overflows: no errstate (1.5 us)
        return P.result(qq * qq)
    with np.errstate(over="ignore"):  # inf for q > 1.3e154 (true value beyond the double range)
        return P.result(qq * qq)


@cites("clocks:appF2-kl-examples")
def kl_exponent_depth(depth):
    r"""KL exponent θ = 1 − 1/(2L) of depth-induced flatness (balanced depth-L network, no weight decay).

    A zero-target direction obeys dσ/dt = −L·σ^(3 − 2/L), so the energy gap decays as
    Δ ∼ t^(−L/(L − 1)).

    Parameters
    ----------
    depth : int or array_like of int
        Depth L of the balanced linear network, an integer ≥ 2 (an array of them for a sweep).

    Returns
    -------
    float or ndarray
        θ = 1 − 1/(2L) in [3/4, 1); the shape of `depth`.

    Raises
    ------
    DomainError
        If an entry of `depth` is not an integer ≥ 2.

    References
    ----------
    Spec ID `clocks:appF2-kl-examples` (paper App. F.2, example 2).
    """
    L = V.counts(depth, "depth", 2)
    return P.result(np.subtract(1.0, np.divide(1.0, np.multiply(2.0, L))))


@cites("clocks:appF2-kl-examples")
@V.broadcasting()
def kl_rate_depth(depth, n_directions=1):
    r"""Rate constant a of dΔ/dt = −a·Δ^(2θ) for m zero-target directions of a balanced depth-L network.

    .. math:: a=mL\,(2/m)^{2-1/L},\qquad \Delta=\tfrac m2\sigma^2 .

    In words: a = m·L·(2/m)^(2 − 1/L), with the energy gap Δ = (m/2)·σ² of m directions of equal
    singular value σ (computed as 4·(L/m)·(m/2)^(1/L)).

    Parameters
    ----------
    depth : int or array_like of int
        Depth L of the balanced linear network, an integer ≥ 2.
    n_directions : int or array_like of int, optional
        Number m of zero-target directions that decay together, an integer ≥ 1 (default 1). `depth` and
        `n_directions` broadcast against each other.

    Returns
    -------
    float or ndarray
        The rate constant a > 0; the broadcast shape of the arguments.

    Raises
    ------
    DomainError
        If an entry of `depth` is not an integer ≥ 2 or one of `n_directions` not an integer ≥ 1.

    References
    ----------
    Spec ID `clocks:appF2-kl-examples` (paper App. F.2, example 2, counting the directions).
    """
    L = V.counts(depth, "depth", 2)
    m = V.counts(n_directions, "n_directions", 1)
    # = 4 (L/m) (m/2)^(1/L): the exponent 1/L <= 1/2 does not amplify the rounding of m/2 (<= 3 ulp); numpy's
    # power rounds within 1 ulp, its SIMD loop (8 points at a time) and its one-point loop not always alike
    # (19^(1/2): 4.358898943540673 against 4.358898943540674)
    with np.errstate(over="ignore"):  # 4 L/m overflows only beyond L = 4.5e307, where a itself does
        return P.result(np.multiply(np.divide(np.multiply(4.0, L), m), np.power(np.divide(m, 2.0), np.divide(1.0, L))))


class KLConstants(NamedTuple):
    r"""Constants of a Kurdyka–Łojasiewicz inequality ‖∇f‖ ≥ a·Δ^θ, as returned by `kl_constants_critical_weight_decay`.

    A named tuple; it unpacks like the plain tuple (theta, a).
    """

    theta: float
    r"""KL exponent θ, in [1/2, 1)."""
    a: float
    r"""KL constant a > 0 of the inequality, also the rate of dΔ/dt = −a·Δ^(2θ)."""


@cites("clocks:appF2-kl-examples")
def kl_constants_critical_weight_decay():
    r"""KL constants of critical weight decay at depth 2 (target s, weight decay μ = s).

    There dσ/dt = −2σ² and Δ = σ²/2, hence θ = 3/4, a = 4√2 and Δ ∼ t^(−2).

    Returns
    -------
    KLConstants
        The named tuple (theta, a) = (0.75, 4√2 ≈ 5.65685).

    References
    ----------
    Spec ID `clocks:appF2-kl-examples` (paper App. F.2, example 3).
    """
    return KLConstants(0.75, 4.0 * math.sqrt(2.0))


@cites("clocks:appF2-wd-rate")
@V.broadcasting()
def weight_decay_tail_rate(mu, depth, f_perp_norm=0.0):
    r"""Exponential rate r of the normalized spectral tail under weight decay in a factorized network.

    Linearising dσ/dt = L·σ^(2 − 2/L)·F − μ·L·σ around a low-rank limit:

    .. math::

        \tau_k(t)\propto e^{-rt},\qquad r=\begin{cases}4(\mu-\lVert F_\perp\rVert_2),&L=2,\\2\mu L,&L\ge3.\end{cases}

    In words: τ_k(t) ∝ e^(−r·t) with r = 4·(μ − ‖F_⊥‖₂) at depth 2 and r = 2·μ·L at depth L ≥ 3.
    Weight decay alone therefore gives an exponential representation clock (erratum clocks-2 in
    `grokclocks.errata`).  An estimate from the linearisation (status asymptotic).  The arguments
    broadcast together.

    Parameters
    ----------
    mu : float or array_like
        Layerwise weight-decay coefficient μ, finite and > 0.
    depth : int
        Depth L of the factorized network, an integer ≥ 2.
    f_perp_norm : float or array_like, optional
        Spectral norm ‖F_⊥‖₂ of the loss gradient on the null block at the limit, finite, in [0, μ]
        (the depth-2 optimality condition); ignored for L ≥ 3.  Default 0.

    Returns
    -------
    float or numpy.ndarray
        The rate r ≥ 0, in inverse time units, of the broadcast shape.

    Raises
    ------
    DomainError
        If `mu` is not finite and > 0, `depth` is not an integer ≥ 2, `f_perp_norm` is negative or not
        finite, f_perp_norm > μ at depth 2, or the arrays do not broadcast.

    References
    ----------
    Spec ID `clocks:appF2-wd-rate` (paper App. F.2).
    """
    sc = P.scalars(mu, f_perp_norm)
    m = V.positive(mu, "mu", scalar=sc)
    L = V.integer_at_least(depth, "depth", 2)
    f = V.nonnegative(f_perp_norm, "f_perp_norm", scalar=sc)
    if L == 2:
        if P.high(f) > P.low(m) and P.any_of(f > m):  # the extremes first: the mask only if a point may fail
            raise V.DomainError(f"f_perp_norm must be <= mu at a depth-2 stationary point (got {P.high(f)!r})")
        r = m - f  # a new array or a number: the product below in place on it
        r *= 4.0
    else:
        r = 2.0 * m
        r *= L
    # + 0 f: the broadcast shape where f_perp_norm widens it (the value unchanged: r >= 0, f finite)
    if isinstance(f, np.ndarray) and f.ndim and np.shape(r) != np.broadcast_shapes(np.shape(r), f.shape):
        r = r + 0.0 * f
    return P.result(r)
