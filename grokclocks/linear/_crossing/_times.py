r"""Levi et al.: exact crossing times t* and the grokking time, vectorised: one engine, `_t_star_flat`.

:math:`t^*` solves :math:`\log\mathcal L(t^*)=\log\mathcal L^*` (spec ``levi:tstar``, conventions of
``levi:grok-def``): ``inf`` where the asymptote :math:`\mathcal L(\infty)\ge\mathcal L^*` (checked first), 0 where
:math:`\mathcal L(0)=(1+\alpha^2)/(2d_{\rm out})\le\mathcal L^*`. Every other point is solved by the lockstep
Newton iteration :func:`grokclocks._mpgrid._newton` (in :math:`\log s`, safeguarded by a bracket; each point
iterates on its own numbers, so an array call gives the scalar calls' values bit for bit) on the log of a
positive mixture of decaying exponentials, started from a certified lower bound (Jensen):

* gradient flow, γ = 0: :math:`\log\Phi_1(s)` (train) or the log of the continuous part of :math:`\Phi_0`
  (gen; for λ > 1 the atom's plateau is subtracted from the target, :math:`\log(e^T-(1-1/\lambda))` formed with
  ``expm1``), closed forms of `grokclocks.rmt` with their derivatives :math:`-\mathbb E[\nu^2e^{-s\nu}]/\Phi_1`
  and :math:`-\Phi_1/\Phi_0`;
* gradient flow, γ > 0: eq. 14's decaying part by the fixed rule of `grokclocks._mpgrid` (its ``_solve``);
* discrete gradient descent: the exact GD loss by the fixed rule (`grokclocks.linear._losses._gd`), Newton in
  :math:`\log t`, where no mode oscillates and the branch point of :math:`\rho^t` is away from the support
  (:math:`\rho_+\ge0.15\rho_-`); elsewhere (a slow corner) the spec's adaptive quadrature and Brent's method
  per point.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import optimize

from ... import _mpgrid, rmt
from ... import _validate as V
from ..._mpgrid import _half_gamma
from .._conventions import _FLOAT_MAX, _gd_time, _ROOT_RTOL, _T_MAX
from .._losses import _log_c, _log_loss_inf
from .._losses._flow import _log_alpha2
from .._losses._gd import (_check_gd_stable, _gd_parts, _log_loss_gd_nowd_adaptive, _log_loss_gd_rule,
                           _log_loss_gd_wd_adaptive, _SMOOTH_TOP)
from ._delay import _grok_delay_small_lam, _SMALL_LAM
from ._threshold import _log_lstar

_LOG4 = math.log(4.0)


def _t_cap(eta0: np.ndarray, d: float) -> np.ndarray:
    """The largest t at which s = 4 η₀t/d_out is a finite double (0.9 of the float range), and t itself is."""
    with np.errstate(over="ignore"):
        return np.minimum(_T_MAX, (0.225 * _FLOAT_MAX / eta0) * d)  # not / (4 eta0): 4 eta0 = inf gave t_cap = 0


def _beyond(which: str, mask: np.ndarray, t_cap, lam, eps, eta0, gamma) -> V.DomainError:
    k = int(np.argmax(mask))
    return V.DomainError(
        f"the crossing time t* of the {which} loss exceeds {float(t_cap[k]):.3g} GD steps, where 4 eta0 t/d_out or t "
        f"itself leaves the float64 range (lam={float(lam[k])!r}, eps={float(eps[k])!r}, eta0={float(eta0[k])!r}, "
        f"gamma={float(gamma[k])!r})")


def _flow_times(which, lam, eps, eta0, d, gamma, alpha, log_lstar) -> np.ndarray:
    """t* of gradient flow for flat arrays of points that cross (0 < t* < ∞)."""
    t_cap = _t_cap(eta0, d)
    with np.errstate(divide="ignore"):
        x_max = np.minimum(_mpgrid._LOG_S_MAX, _LOG4 + np.log(eta0) + np.log(t_cap) - math.log(d))
    # the decaying part must fall to d_out L* - d_out L(inf) (log_loss_inf includes 1/d_out): without cancellation
    log_inf = _log_loss_inf(which, lam, d, gamma, alpha)
    log_target = log_lstar + math.log(d) + np.log(-np.expm1(log_inf - log_lstar))
    s, beyond = _mpgrid._crossing_s(lam, np.asarray(_half_gamma(gamma), dtype=np.float64), _log_alpha2(alpha),
                                    log_target, which == "gen", x_max)
    if np.any(beyond):
        raise _beyond(which, beyond, t_cap, lam, eps, eta0, gamma)
    t = np.asarray(_gd_time(s, eta0, d), dtype=np.float64)
    bad = ~(t <= t_cap)
    if np.any(bad):
        raise _beyond(which, bad, t_cap, lam, eps, eta0, gamma)
    return t


def _gd_times(which, lam, eps, eta0, d, gamma, level, alpha, log_lstar) -> np.ndarray:
    """t* of discrete gradient descent for flat arrays of points that cross (0 < t* < ∞)."""
    _check_gd_stable(lam, eta0, d, gamma)
    g = _half_gamma(gamma)
    b = 2.0 * eta0 / d
    _, _, rho_m, rho_p = _gd_parts(lam, b, g)
    rule = (rho_p >= _SMOOTH_TOP * rho_m) & (rho_m > 0.0)
    t = np.empty(lam.shape)
    t_cap = _t_cap(eta0, d)
    if np.any(rule):
        lr, br, gr, ar, ltr = lam[rule], b[rule], g[rule], alpha[rule], log_lstar[rule]

        def evaluate(x, idx):
            tt = np.exp(x)
            out, dlog = _log_loss_gd_rule(which, tt, lr[idx], br[idx], d, gr[idx], ar[idx], slope=True)
            return out, tt * dlog

        # L(t) >= L(0) rho_+^{2t} (every mode decays at most that fast): a certified lower bound
        with np.errstate(divide="ignore"):
            t0 = (_log_c(ar) - math.log(d) - ltr) / (-2.0 * np.log(rho_p[rule]))
        # the slowest exponential rate in t (the model step of _newton): rho^t of the lower edge (rho^2t without
        # weight decay), or the atom's rho(0)^2t
        lm_r = rmt._gap(lr)
        rate = -np.log1p(-br * (lm_r + gr)) * np.where(gr > 0, 1.0, 2.0)
        if which == "gen":
            rate = np.where((lr > 1.0) & (gr > 0), np.minimum(rate, -2.0 * np.log1p(-br * gr)), rate)
        x, beyond = _mpgrid._newton(evaluate, ltr, np.log(np.maximum(t0, 1e-300)), np.log(t_cap[rule]), rate=rate)
        if np.any(beyond):
            idx = np.flatnonzero(rule)
            raise _beyond(which, beyond, t_cap[idx], lam[idx], eps[idx], eta0[idx], gamma[idx])
        t[rule] = np.exp(x)
    for i in np.flatnonzero(~rule):  # the slow corner: top modes near or beyond the oscillation threshold
        t[i] = _t_star_gd_adaptive(which, *(float(v[i]) for v in (lam, eps, eta0)), d,
                                   *(float(v[i]) for v in (gamma, level, alpha)))
    return t


def _t_star_flat(which: str, lam, eps, eta0, d: float, gamma, level, alpha, discrete: bool) -> np.ndarray:
    """t* for flat, validated arrays of the same length (``d`` = d_out a float, γ in the paper convention)."""
    log_lstar = _log_lstar(eps, d, level)
    t = np.empty(lam.shape)
    never = _log_loss_inf(which, lam, d, gamma, alpha) >= log_lstar  # asymptote first: never reached
    zero = ~never & (_log_c(alpha) - math.log(d) <= log_lstar)  # L(0) = (1 + alpha^2)/(2 d_out)
    t[never] = np.inf
    t[zero] = 0.0
    rest = ~never & ~zero
    if np.any(rest):
        args = [v[rest] for v in (lam, eps, eta0)]
        if discrete:
            t[rest] = _gd_times(which, *args, d, gamma[rest], level[rest], alpha[rest], log_lstar[rest])
        else:
            t[rest] = _flow_times(which, *args, d, gamma[rest], alpha[rest], log_lstar[rest])
    return t


def _grok_time_flat(lam, eps, eta0, d: float, gamma, level, alpha, discrete: bool) -> np.ndarray:
    """Δt = t*_gen − t*_tr (NaN where neither crosses), with the small-λ delay as its own root."""
    tg = _t_star_flat("gen", lam, eps, eta0, d, gamma, level, alpha, discrete)
    tt = _t_star_flat("train", lam, eps, eta0, d, gamma, level, alpha, discrete)
    return _delay_from_crossings(tt, tg, lam, eta0, d, gamma, discrete)


def _delay_from_crossings(tt, tg, lam, eta0, d, gamma, discrete: bool) -> np.ndarray:
    """Δt from the two crossing times (flat arrays): their difference, NaN where neither crosses, and below λ =
    `_SMALL_LAM` (γ = 0, gradient flow) the delay as its own root (`_delay`)."""
    with np.errstate(invalid="ignore"):
        dt = np.where(np.isinf(tg) & np.isinf(tt), np.nan, tg - tt)
    small = (gamma == 0.0) & (not discrete) & (lam <= _SMALL_LAM) & (tt > 0.0) & (tt <= tg) & (tg < np.inf)
    if np.any(small):
        dt[small] = _grok_delay_small_lam(tt[small], lam[small], eta0[small], d if np.ndim(d) == 0 else d[small])
    return dt


# ------------------------------------------------------------------------------ the slow corner (adaptive)


def _t_star_gd_adaptive(which: str, lam: float, eps: float, eta0: float, d: float, gamma: float, level: float,
                        alpha: float) -> float:
    """t* of GD at one point by the spec's method: adaptive quadrature of the loss (`_losses._gd`), the root
    bracketed by galloping in the exponent of t and found by Brent's method (relative tolerance 1e-15)."""
    log_lstar = float(_log_lstar(eps, d, level))

    def f(t: float) -> float:
        val = (_log_loss_gd_nowd_adaptive(which, t, lam, eta0, d, alpha) if gamma == 0.0
               else _log_loss_gd_wd_adaptive(which, t, lam, eta0, d, gamma, alpha))
        return val - log_lstar

    t_cap = float(_t_cap(np.float64(eta0), d))
    lo, hi = _bracket_log2(f, t_cap)
    if hi is None:
        raise V.DomainError(
            f"the crossing time t* of the {which} loss exceeds {t_cap:.3g} GD steps, where 4 eta0 t/d_out or t "
            f"itself leaves the float64 range (lam={lam!r}, eps={eps!r}, eta0={eta0!r}, gamma={gamma!r})")
    if lo == 0.0:
        return 0.0  # t* < 5e-324: rounds to 0
    # Brent on t = lo u, u in [1, hi/lo] <= 2 (scaled: a subnormal lo gave xtol = 0 and stalled)
    u = optimize.brentq(lambda u: f(lo * u), 1.0, hi / lo, xtol=1e-16, rtol=_ROOT_RTOL, maxiter=500)
    return float(lo * u)


def _bracket_log2(f: Callable[[float], float], t_cap: float) -> tuple[float, float | None]:
    """``(2^k, 2^(k+1))`` (or ``(2^k, t_cap)``) with ``f > 0`` at the left and ``<= 0`` at the right, for a
    decreasing ``f`` with ``f(0+) > 0``.  Galloping in the exponent from ``t = 1`` (1, 2, 4, 16, 256, ...; from the
    power of 2 below ``t_cap`` if that is below 1), then bisection of the exponent: at most ~25 evaluations over
    the whole float range.  ``(0.0, tiny)`` if ``f <= 0`` already at the smallest subnormal; ``(lo, None)`` if
    ``f(t_cap) > 0``."""
    tiny = 5e-324
    e_cap = math.log2(t_cap)
    e0 = min(0.0, math.floor(e_cap))  # t = 1, or the power of 2 below t_cap < 1 (eta0 ~ 1e308: t_cap = 0.24)
    if f(2.0**e0) > 0.0:
        e_lo, step = e0, 1.0
        while True:
            e_try = e_lo + step
            if e_try >= e_cap:
                if f(t_cap) > 0.0:
                    return 2.0**e_lo, None
                e_hi = e_cap
                break
            if f(2.0**e_try) <= 0.0:
                e_hi = e_try
                break
            e_lo, step = e_try, 2.0 * step
    else:
        e_hi, step = e0, 1.0
        while True:
            e_try = e_hi - step
            if e_try <= -1074.0:
                if f(tiny) <= 0.0:
                    return 0.0, tiny
                e_lo = -1074.0
                break
            if f(2.0**e_try) > 0.0:
                e_lo = e_try
                break
            e_hi, step = e_try, 2.0 * step
    while e_hi - e_lo > 1.0:  # bisection on the exponent (integers; e_cap may be fractional)
        mid = math.floor(0.5 * (e_lo + e_hi))
        if mid <= e_lo:
            mid = e_lo + 1.0
        if f(2.0**mid) > 0.0:
            e_lo = mid
        else:
            e_hi = mid
    lo = 2.0**e_lo if e_lo > -1074.0 else tiny
    return lo, (t_cap if e_hi == e_cap else 2.0**e_hi)
