"""The safeguarded Newton iteration in log s, in lockstep over points, and its use on the rule of eq. 14
(private to `grokclocks._mpgrid`; the iteration is described in the package docstring)."""

from __future__ import annotations

import math

import numpy as np

from ._rule import _asymptote, _decay, _edges

_NEWTON_TOL = 1e-7  # in log s: the last Newton step, applied (see _newton)
_BRACKET_TOL = 1e-13  # in log s: a bisection bracket
_MAX_ITER = 200
_MAX_STEP = 10.0  # largest step in log s (10 e-folds)
_LOG_S_MAX = 709.0  # log of the largest s searched, 1.6e308


def _model_step(G: np.ndarray, slope: np.ndarray, ce: np.ndarray) -> np.ndarray:
    r"""The step :math:`\Delta\ge0` in :math:`\log s` to the root of the local model
    :math:`G+b\Delta-c\,s\,(e^\Delta-1)`, :math:`b=G'+cs`, ``ce`` = :math:`cs` (:math:`c` the slowest rate of the
    mixture): exact for :math:`\log D=a-b'\log s-cs`, the large-s form of every MP decay (a power law times the
    slowest exponential), where the plain log-Newton step (exact for the power law alone) needs many steps and the
    tangent in s (exact for the exponential alone) as many. Newton on the concave model from its log-Newton
    step (to the right of the model's root), capped at :data:`_MAX_STEP`."""
    b = slope + ce
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        dx = np.minimum(-G / slope, _MAX_STEP)
        act = np.ones(dx.shape, dtype=bool)  # each point stops at its own convergence (an array call then gives
        for _ in range(40):                  # the bits of the scalar calls)
            f = G + b * dx - ce * np.expm1(dx)
            fp = b - ce * np.exp(dx)
            nxt = np.clip(dx - f / fp, 0.0, _MAX_STEP)
            nxt = np.where(np.isfinite(nxt), nxt, dx)
            conv = np.abs(nxt - dx) <= 1e-15 * np.maximum(dx, 1.0)
            dx = np.where(act, nxt, dx)
            act &= ~conv
            if not act.any():
                break
    return dx


def _newton(evaluate, ltarget: np.ndarray, x0: np.ndarray, x_max=_LOG_S_MAX,
            rate: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""The lockstep root finder of every crossing time: :math:`x=\log s` with :math:`G(x)=\ell(e^x)-\ell^*=0`.

    ``evaluate(x, idx)`` returns :math:`(\ell, d\ell/dx)` at ``x`` (a 1-d array) for the points ``idx``, where
    :math:`\ell(s)=\log D(s)` is the log of a positive mixture of decaying exponentials (a Laplace transform
    of a positive measure): convex and decreasing in :math:`s`, so the tangent's zero in :math:`s` is a certified
    lower bound of the root at any iterate.  ``x0`` must be a lower bound (the Jensen bound of the caller).
    Step: left of the root the Newton step in :math:`\log s` (exact for power laws), capped at
    :data:`_MAX_STEP` e-folds; right of it the tangent in :math:`s` (exact for exponentials); bisection in
    :math:`\log s` when a step leaves the bracket.  Converged when the step is below :data:`_NEWTON_TOL`
    (the step is applied: the error is then set by the evaluation of :math:`\ell`).  Each point iterates on its
    own numbers only, so a point's root does not depend on the other points of the call (an array call gives
    the scalar calls' values bit for bit).

    Returns ``(x, beyond)``: ``beyond`` marks points whose root lies above :math:`s=e^{x_{\max}}` (the caller
    raises); ``x_max`` a number or an array of the points' bounds. ``rate``: the slowest exponential rate of
    each point's mixture (:math:`\lambda_-` without weight decay); left of the root the step is then that of
    :func:`_model_step` (2-3 evaluations from the Jensen start on the Fig. 7 grid, against 7-9 for log-Newton).
    """
    x = np.array(x0, dtype=np.float64)
    xmax = np.broadcast_to(np.asarray(x_max, dtype=np.float64), x.shape)
    lo = np.full(x.shape, -np.inf)
    hi = np.full(x.shape, np.inf)
    act = np.arange(x.size)
    beyond = np.zeros(x.size, dtype=bool)
    for _ in range(_MAX_ITER):
        if act.size == 0:
            break
        xa = np.minimum(x[act], xmax[act])
        lD, slope = evaluate(xa, act)
        G = lD - ltarget[act]
        # D still above the target at s = e^x_max: the crossing is beyond the double range (lam = 1, a
        # subnormal L*: D ~ s^-1/2 reaches e^-717 at s = e^1434; Newton never converged)
        out_of_range = (xa >= xmax[act]) & (G > 0)
        if np.any(out_of_range):
            beyond[act[out_of_range]] = True
            keep = ~out_of_range
            act, xa, lD, slope, G = act[keep], xa[keep], lD[keep], slope[keep], G[keep]
            if act.size == 0:
                break
        lo_a = np.where(G >= 0, np.maximum(lo[act], xa), lo[act])
        hi_a = np.where(G <= 0, np.minimum(hi[act], xa), hi[act])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = -G / slope  # log-Newton step
        # an infinite slope (s (1 + lam) beyond the double range) gives y = 0: not a step, bisect
        ok = np.isfinite(y) & np.isfinite(slope) & (slope < 0)
        y = np.where(ok, y, 0.0)
        # s-Newton (tangent in s): a certified lower bound on the root because G is convex in s
        tangent_ok = ok & (y > -1.0)
        xt = xa + np.log1p(np.where(tangent_ok, y, 0.0))
        lo_a = np.where(tangent_ok, np.maximum(lo_a, xt), lo_a)
        # proposal: log-Newton on the left (exact for power laws), the s-tangent on the right (exact for
        # exponentials); capped at 10 e-folds; bisection in log s if it leaves the bracket
        if rate is None:
            left = xa + np.minimum(y, _MAX_STEP)
        else:
            with np.errstate(over="ignore"):
                ce = np.minimum(rate[act] * np.exp(xa), 1e300)
            left = xa + np.where(ok & (G > 0), _model_step(np.where(ok, G, 0.0), np.where(ok, slope, -1.0), ce),
                                 np.minimum(y, _MAX_STEP))
        prop = np.where(G >= 0, left, np.where(tangent_ok, xt, xa - _MAX_STEP))
        both = np.isfinite(lo_a) & np.isfinite(hi_a)
        inside = (prop >= lo_a) & (prop < hi_a)
        xn = np.where(inside, prop, np.where(both, 0.5 * (lo_a + hi_a), prop))
        # converged: a Newton step below _NEWTON_TOL, applied (quadratic convergence: the error after it is
        # below |G''/(2G')| y^2 <= y^2/2 = 5e-15 in log s for the power-law-times-exponential decays), or a
        # bracket narrower than _BRACKET_TOL
        newton = ok & (np.abs(y) < _NEWTON_TOL)
        done = newton | (G == 0) | (both & (hi_a - lo_a < _BRACKET_TOL))
        x[act] = np.where(G == 0, xa, np.where(newton, xa + y, xn))
        lo[act] = lo_a
        hi[act] = hi_a
        act = act[~done]
    if act.size:  # not converged: a crossing beyond s = e^709 that Newton never reached (gamma = 1e-323, lam = 2)
        lD, _ = evaluate(xmax[act], act)
        far = lD > ltarget[act]
        beyond[act[far]] = True
        act = act[~far]
    if act.size:
        raise RuntimeError(  # pragma: no cover - never observed; loud rather than silent
            f"crossing-time Newton iteration did not converge for {act.size} points (e.g. point {int(act[0])})")
    return x, beyond


def _solve(lam: np.ndarray, g: np.ndarray, target: np.ndarray, gen: bool,
           log_alpha2: np.ndarray | None = None, x_max=_LOG_S_MAX) -> tuple[np.ndarray, np.ndarray]:
    r"""Root :math:`s` of :math:`\log D(s)=\log(\text{target})` for flat arrays (target in (0, D(0))), eq. 14.

    Start: the Jensen bound :math:`D(s)\ge D(0)e^{-\mu s}`, :math:`\mu=-D'(0)/D(0)` (closed form: with
    :math:`a=\alpha^2`, :math:`\mu=(a(1+g)+1)/(2D_0)` for the gen loss and
    :math:`((1+a)(1+\lambda)+a g)/(2D_0)` for the train loss, :math:`D_0=(1+a)/2-\mathcal L_1^\infty`)."""
    if log_alpha2 is None:
        log_alpha2 = np.zeros(lam.shape)
    Linf = _asymptote(lam, g, gen)
    with np.errstate(over="ignore"):
        a2 = np.exp(log_alpha2)
        D0 = 0.5 * (1.0 + a2) - Linf
        mu = ((a2 * (1.0 + g) + 1.0) if gen else ((1.0 + a2) * (1.0 + lam) + a2 * g)) / (2.0 * D0)
    big = log_alpha2 > 690.0  # alpha^2 beyond 1e300: D0 = alpha^2/2 (1 + O(1e-300)), mu its limit
    log_D0 = np.where(big, log_alpha2 - math.log(2.0), np.log(np.where(big, 1.0, D0)))
    mu = np.where(big, (1.0 + g) / 1.0 if gen else (1.0 + lam + g), mu)
    s0 = (log_D0 - np.log(target)) / mu  # not log(D0/target): the ratio overflowed for a subnormal target
    x0 = np.log(np.maximum(s0, 1e-300))
    lm, _ = _edges(lam)
    rate = np.where(g > 0, 0.5 * (lm + g), lm)  # the slowest exponential of D: e^{-s(lam_- + g)/2} (B term)
    if gen:  # the atom's alpha^2 (1 - 1/lam) e^{-s g}/2
        rate = np.where((lam > 1.0) & (g > 0) & (log_alpha2 > -np.inf), np.minimum(rate, g), rate)
    x, beyond = _newton(lambda xa, act: _decay(np.exp(xa), lam[act], g[act], gen, log_alpha2[act]),
                        np.log(target), x0, x_max, rate=rate)
    return np.exp(x), beyond
