r"""Levi et al.: the exact losses of discrete gradient descent (spec ``levi:gd-exact``), vectorised.

Gradient descent with step η₀ multiplies each eigenmode by :math:`\rho(\nu)=1-b(\nu+g)` per step,
:math:`b=2\eta_0/d_{\rm out}`, :math:`g=\gamma/2`:

.. math::
    2d_{\rm out}\mathcal L(t)=\mathbb E\big[q\,(\alpha^2\rho^{2t}+R^2)\big],\qquad R=\frac{\rho^t\nu+g}{\nu+g},

i.e. (expanding :math:`R^2`) the plateau :math:`g^2\mathbb E[q/(\nu+g)^2]` (closed form, ``levi:eq15``) plus
:math:`\mathbb E[q(\alpha^2+r^2)\rho^{2t}]+\mathbb E[q\,2rg\rho^t/(\nu+g)]`, :math:`r=\nu/(\nu+g)`; at γ = 0,
:math:`c_\alpha\mathbb E[q\rho^{2t}]`. Where no mode oscillates (:math:`\rho>0` on the support, i.e.
:math:`b(\lambda_++g)\le1`) these are positive mixtures of :math:`\rho^{t}` and :math:`\rho^{2t}`; with
:math:`\rho=\rho_-\,p`, :math:`\rho_-=\rho(\lambda_-)`, :math:`p=1-bu/\rho_-` (u = ν − λ₋, exact) the factor
:math:`p^t\le e^{-tbu/\rho_-}` is an exponential envelope, so the fixed rule over the law
(`grokclocks.rmt._rule`, truncated where the envelope of the slower term is below e⁻⁴⁰) integrates them in log
space for all points at once. It is used where the integrand is smooth at the upper edge: an integer t, a
truncated range, or :math:`\rho_+/\rho_-\ge0.15` (for a real t the factor :math:`p^t` has a branch point at
:math:`y=\rho_-/(\rho_--\rho_+)`, within 0.17 of the upper edge below that ratio). Elsewhere, and where top
modes oscillate (:math:`b(\lambda_++g)>1`), the adaptive QAWS quadrature of `grokclocks.rmt` per point (a
slow corner; measured against it: ``tests/test_linear.py``).
"""

from __future__ import annotations

import math

import numpy as np

from ... import rmt
from ... import _validate as V
from ..._mpgrid import _half_gamma
from ...rmt._adaptive import _expect, _log_expect_exp
from ...rmt._rule import mp_rule, truncation
from .._conventions import _QUAD_RTOL
from ._flow import _log_alpha2, _log_c

_LOG2 = math.log(2.0)
# the rule is used for a real (non-integer) t on the whole support only where the branch point of p^t lies
# beyond 0.17 of the support's width above its upper edge (module docstring)
_SMOOTH_TOP = 0.15


def _check_gd_stable(lam, eta, d: float, gamma) -> None:
    """``DomainError`` where 2η₀(λ₊ + γ/2)/d_out ≥ 2: gradient descent diverges (arrays or scalars)."""
    lam, eta, gamma = (np.asarray(x, dtype=np.float64) for x in (lam, eta, gamma))
    lp = (1.0 + np.sqrt(lam)) ** 2
    with np.errstate(over="ignore"):
        rate = 2.0 * eta * (lp + 0.5 * gamma) / d
    bad = rate >= 2.0
    if np.any(bad):
        k = np.unravel_index(int(np.argmax(bad)), bad.shape)
        lpk, gk, ek, rk = (float(np.broadcast_to(x, bad.shape)[k]) for x in (lp, gamma, eta, rate))
        raise V.DomainError(
            f"eta0 must be < d_out/(lam_plus + gamma/2) = {d / (lpk + 0.5 * gk)!r} for discrete=True "
            f"(2 eta (lam_plus + gamma/2)/d_out = {rk!r} >= 2: gradient descent diverges) (got {ek!r})")


def _check_integer_t(t, oscillating) -> None:
    bad = oscillating & (np.floor(t) != t)
    if np.any(bad):
        raise V.DomainError(
            f"t must be an integer when discrete=True and 2 eta0 (lam_plus + gamma/2)/d_out > 1 "
            f"(modes with 1 - 2 eta0 (nu + gamma/2)/d_out < 0 oscillate) (got {float(t[bad][0])!r})")


def _gd_parts(lam, b, g):
    """(λ₋, w, ρ₋, ρ₊) for flat arrays, ρ± = 1 − b(λ± + g)."""
    lm = rmt._gap(lam)
    w = 4.0 * np.sqrt(lam)
    rho_m = 1.0 - b * (lm + g)
    rho_p = rho_m - b * w
    return lm, w, rho_m, rho_p


def _use_rule(t, lm, w, rho_m, rho_p, b, g) -> np.ndarray:
    """Points the fixed rule integrates (module docstring): no oscillation, and a smooth upper edge."""
    smooth = (rho_p >= 0.0) & (rho_m > 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        trunc = truncation(w, t * b / rho_m) < 1.0
    return smooth & ((np.floor(t) == t) | trunc | (rho_p >= _SMOOTH_TOP * rho_m))


def _gd_rule(which: str, t, lam, b, g, log_alpha2, *, slope: bool = False):
    r"""log of :math:`\mathbb E_c[q(\alpha^2+r^2)\rho^{2t}]` and :math:`\mathbb E_c[q\,2rg\rho^t/(\nu+g)]` (γ > 0), or
    of :math:`\mathbb E_c[q\rho^{2t}]` (g = 0: the second is −inf), and with ``slope`` their derivatives in t
    relative to the values; continuous part of the law only; flat arrays of non-oscillating points."""
    lm, w, rho_m, rho_p = _gd_parts(lam, b, g)
    # log rho_- = log1p(-b (lam_- + g)): log of the rounded 1 - x lost 1e-16 absolute, times 2t (8e-9 in log L at
    # t = 7e7, lam = 1 + 2e-9, gamma = 4e-9 against mpmath)
    log_rm = np.log1p(-b * (lm + g))
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(g > 0, t, 2.0 * t) * b / rho_m  # envelope rate of the slower term
    la, lb = np.full(t.shape, -np.inf), np.full(t.shape, -np.inf)
    da, db = np.zeros(t.shape), np.zeros(t.shape)
    train = which == "train"
    for blk in mp_rule(lm, w, truncation(w, kappa), pole=g):  # at lam = 1 the 1/(nu + g) of R is mapped
        sel = blk.sel
        ts, gs, bs = t[sel, None], g[sel, None], b[sel, None]
        with np.errstate(divide="ignore"):
            logp = np.log1p(-(bs / rho_m[sel, None]) * blk.u)  # log(rho/rho_-) <= 0; -inf where rho = 0
            pt = np.exp(ts * logp)
        q = blk.nu / blk.nu.max(axis=1, keepdims=True) if train else 1.0
        log_q = np.log(blk.nu.max(axis=1)) if train else 0.0
        nug = blk.nu + gs
        r = blk.nu / nug
        big = log_alpha2[sel, None] > 690.0
        a2 = np.exp(np.where(big, 0.0, log_alpha2[sel, None]))
        fa = blk.weight * q * np.where(big, 1.0 + r * r * np.exp(-np.where(big, log_alpha2[sel, None], np.inf)), a2 + r * r) * (pt * pt)
        SA = fa.sum(axis=1)
        with np.errstate(divide="ignore"):
            la[sel] = (blk.log_scale + log_q + np.where(big[:, 0], log_alpha2[sel], 0.0) + 2.0 * t[sel] * log_rm[sel]
                       + np.log(SA))
        if slope:
            with np.errstate(invalid="ignore"):
                da[sel] = 2.0 * log_rm[sel] + np.where(SA > 0, (fa * np.where(pt > 0, 2.0 * logp, 0.0)).sum(axis=1)
                                                       / np.where(SA > 0, SA, 1.0), 0.0)
        pos = g[sel] > 0
        if np.any(pos):
            fb = blk.weight * q * (2.0 * r * gs / nug) * pt
            SB = fb.sum(axis=1)
            with np.errstate(divide="ignore"):
                lb[sel] = np.where(pos, blk.log_scale + log_q + t[sel] * log_rm[sel] + np.log(SB), -np.inf)
            if slope:
                with np.errstate(invalid="ignore"):
                    db[sel] = log_rm[sel] + np.where(SB > 0, (fb * np.where(pt > 0, logp, 0.0)).sum(axis=1)
                                                     / np.where(SB > 0, SB, 1.0), 0.0)
    return (la, lb, da, db) if slope else (la, lb)


def _atom_and_plateau(which: str, lam, g, alpha):
    """log of the atom's decaying term (gen, λ > 1; its factor ρ(0)^{2t} added by the caller): α²(1 − 1/λ) for
    γ > 0, where the plateau g²E[q/(ν+g)²] (atom included) holds the rest, (1 + α²)(1 − 1/λ) for γ = 0 (no
    plateau: −inf)."""
    gen = which == "gen"
    pos = g > 0
    with np.errstate(divide="ignore"):
        atom = np.where(gen & (lam > 1.0), np.log(np.where(lam > 1.0, (lam - 1.0) / lam, 1.0)), -np.inf)
    atom = atom + np.where(pos, _log_alpha2(alpha), _log_c(alpha) + _LOG2)
    plateau = np.full(lam.shape, -np.inf)
    if np.any(pos):
        plateau[pos] = rmt._log_wd_plateau(g[pos], lam[pos], gen)
    return atom, plateau


def _log_loss_gd_rule(which: str, t, lam, b, d: float, g, alpha, *, slope: bool = False):
    """log L of GD (and d log L/dt with ``slope``) for flat arrays of points `_use_rule` accepts."""
    res = _gd_rule(which, t, lam, b, g, _log_alpha2(alpha), slope=slope)  # gamma = 0: r = 1, (1 + alpha^2)
    la, lb = res[0], res[1]
    atom, plateau = _atom_and_plateau(which, lam, g, alpha)
    log_rho0 = np.log1p(-b * g)
    la0 = atom + 2.0 * t * log_rho0
    terms = np.stack([la, lb, la0, plateau])
    top = np.max(terms, axis=0)
    fin = np.isfinite(top)
    topf = np.where(fin, top, 0.0)
    e = np.exp(terms - topf)
    tot = e.sum(axis=0)
    # 2 d_out L = P + A + B + atom term (gamma = 0: P = B = 0, A = (1 + alpha^2) E_c[q rho^2t])
    out = np.where(fin, topf + np.log(tot), -np.inf) - math.log(2.0 * d)
    if not slope:
        return out
    da, db = res[2], res[3]
    dlog = (e[0] * da + e[1] * db + e[2] * 2.0 * log_rho0) / np.where(tot > 0, tot, 1.0)
    return out, dlog


# ------------------------------------------------------------------------------ the slow corner (adaptive)


def _log_loss_gd_nowd_adaptive(which: str, t: float, lam: float, eta: float, d: float, alpha: float) -> float:
    r"""log of (c_α/d) E[q |1 - 2ην/d|^{2t}] (GD-exact, γ = 0) by adaptive QAWS quadrature (one point)."""
    log_c = float(_log_c(alpha)) - math.log(d)
    if t == 0.0:
        return log_c
    b = 2.0 * eta / d
    r = math.sqrt(lam)
    lm, lp = float(rmt._gap(lam)), (1.0 + r) ** 2
    rho_m, rho_p = 1.0 - b * lm, 1.0 - b * lp
    train = which == "train"
    if rho_p >= 0.0 and rho_m > 0.0:
        # |rho| = rho is decreasing and log(rho) concave: factor out the tangent at lam_-, so the
        # remaining integrand g <= q and the exponential shift lets rmt truncate the range.
        log_rho_m = math.log(rho_m)
        shift = 2.0 * t * b / rho_m

        def gfun(nu):
            x = float(nu)
            rho = 1.0 - b * x
            q = x if train else 1.0
            if rho <= 0.0:
                return 0.0
            return q * math.exp(2.0 * t * (math.log(rho) - log_rho_m) + shift * (x - lm))

        cont = 2.0 * t * log_rho_m + shift * lm + _log_expect_exp(gfun, shift, lam, False, _QUAD_RTOL, False)
    else:
        # Oscillating top modes (1 < 2 eta nu/d < 2): normalise by the largest |rho| on the support.
        log_m = math.log(max(abs(rho_m), abs(rho_p)))

        def f(nu):
            x = float(nu)
            a = abs(1.0 - b * x)
            q = x if train else 1.0
            return 0.0 if a == 0.0 else q * math.exp(2.0 * t * (math.log(a) - log_m))

        val = _expect(f, lam, False, _QUAD_RTOL, False)
        cont = 2.0 * t * log_m + math.log(val) if val > 0 else -math.inf
    if not train and lam > 1.0:
        cont = float(np.logaddexp(cont, math.log(1.0 - 1.0 / lam)))
    return log_c + cont


def _check_discrete_wd_resolved(val: float, t: float, lam: float, gamma: float) -> None:
    """The adaptive GD + weight-decay expectation is one quadrature of values that underflow below ~1e-300: a
    ``DomainError`` there rather than a wrong logarithm (the fixed rule and gradient flow work in logs)."""
    if not val > 1e-290:
        raise V.DomainError(
            f"the discrete (GD) loss with weight decay is below 1e-290 here (t={t!r}, lam={lam!r}, gamma={gamma!r}), "
            "where its quadrature underflows; valid where the loss is above 1e-290 (discrete=False works in logs)")


def _log_loss_gd_wd_adaptive(which: str, t: float, lam: float, eta: float, d: float, gamma: float,
                             alpha: float) -> float:
    r"""log of (1/2d) E[q(α² ρ^{2t} + R²)] (GD-exact, γ > 0) by adaptive QAWS quadrature (one point)."""
    g = float(_half_gamma(gamma))
    b = 2.0 * eta / d
    lp = (1.0 + math.sqrt(lam)) ** 2
    oscillating = 1.0 - b * (lp + g) < 0.0
    train = which == "train"
    a2 = alpha * alpha
    ti = int(t) if oscillating else 0

    def parts(nu):
        x = float(nu)
        rho = 1.0 - b * (x + g)
        if t == 0.0:
            pt = 1.0
        elif rho == 0.0:
            pt = 0.0
        elif rho > 0.0:
            pt = math.exp(t * math.log(rho))
        else:
            pt = (-1.0 if ti % 2 else 1.0) * math.exp(t * math.log(-rho))
        ratio = (pt * x + g) / (x + g)
        q = x if train else 1.0
        return q * pt * pt, q * ratio * ratio

    if a2 <= 1e300:
        def f(nu):
            init, rest = parts(nu)
            return a2 * init + rest

        val = _expect(f, lam, True, _QUAD_RTOL, False)
        _check_discrete_wd_resolved(val, t, lam, gamma)
        return math.log(val) - math.log(2.0 * d)
    # |alpha| > 1e150: alpha^2 E[q rho^2t] apart, in logs (alpha^2 = inf times a zero mode gave NaN at
    # init_scale = -1e300); the loss itself then overflows, its log does not
    init = _expect(lambda nu: parts(nu)[0], lam, True, _QUAD_RTOL, False)
    rest = _expect(lambda nu: parts(nu)[1], lam, True, _QUAD_RTOL, False)
    _check_discrete_wd_resolved(rest, t, lam, gamma)
    with np.errstate(divide="ignore"):
        log_init = 2.0 * math.log(abs(alpha)) + (math.log(init) if init > 0.0 else -math.inf)
        log_rest = math.log(rest)
    return float(np.logaddexp(log_init, log_rest)) - math.log(2.0 * d)


def _log_loss_gd(which: str, t, lam, eta, d: float, gamma, alpha) -> np.ndarray:
    """log L(t) of discrete gradient descent for flat, validated arrays: the fixed rule where `_use_rule`, the
    adaptive quadrature per point elsewhere."""
    _check_gd_stable(lam, eta, d, gamma)
    g = _half_gamma(gamma)
    b = 2.0 * eta / d
    lm, w, rho_m, rho_p = _gd_parts(lam, b, g)
    _check_integer_t(t, (g > 0) & (rho_p < 0.0))
    out = np.empty(t.shape)
    start = t == 0.0  # L(0) = (1 + alpha^2)/(2 d_out) (p^0 = 1, and 0 * log 0 would be NaN at a zero mode)
    out[start] = _log_c(alpha[start]) - math.log(d)
    rule = ~start & _use_rule(t, lm, w, rho_m, rho_p, b, g)
    if np.any(rule):
        out[rule] = _log_loss_gd_rule(which, t[rule], lam[rule], b[rule], d, g[rule], alpha[rule])
    for i in np.flatnonzero(~rule & ~start):  # the slow corner: oscillating modes, or a real t near a branch point
        ti, li, ei, gi, ai = (float(x[i]) for x in (t, lam, eta, gamma, alpha))
        out[i] = (_log_loss_gd_nowd_adaptive(which, ti, li, ei, d, ai) if gi == 0.0
                  else _log_loss_gd_wd_adaptive(which, ti, li, ei, d, gi, ai))
    return out
