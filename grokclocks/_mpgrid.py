r"""Vectorised Marchenko–Pastur quadrature and crossing-time solver for phase diagrams.

This private module computes the exact large-size losses with weight decay (spec ``levi:eq14``,
which is ``levi:eq8`` at :math:`\gamma=0`) and their threshold-crossing times (``levi:tstar``,
``levi:grok-def``) for whole grids of :math:`(\lambda,\gamma,\epsilon,\eta_0,d_{\rm out},\ell)` at
once, without a Python loop over grid points.  It depends only on numpy/scipy; the public
front-end :func:`grokclocks.linear.grok_time_grid` is built on ``_train_gen_crossings``.

Decomposition (``levi:eq14``, ``levi:eq15``)
--------------------------------------------
With :math:`g=\gamma/2`, :math:`s=4\eta_0 t/d_{\rm out}`, :math:`r(\nu)=\nu/(\nu+g)` and
:math:`q_{\rm tr}=\nu,\ q_{\rm gen}=1`, expanding the square in eq. 14 gives

.. math::

    d_{\rm out}\,\mathcal L(t) = \mathcal L_1^\infty + D(s),\qquad
    D(s)=\tfrac12\,\mathbb E\Big[q\Big(e^{-s(\nu+g)}\,(1+r^2) + \frac{2g\,r}{\nu+g}\,e^{-s(\nu+g)/2}\Big)\Big],

:math:`\mathcal L_1^\infty=\tfrac{g^2}{2}\mathbb E[q/(\nu+g)^2]` (``levi:eq15``, evaluated in closed form
from the Stieltjes transform, ``levi:mp-stieltjes``; at :math:`g=0` it is :math:`(1-1/\lambda)^+` for the
generalisation loss and 0 for the training loss).  :math:`D` is a positive mixture of decaying
exponentials, so it is strictly decreasing and log-convex in :math:`s`; the crossing
:math:`\mathcal L=\mathcal L^*` is the root of :math:`\log D(s)=\log(d_{\rm out}\mathcal L^*-\mathcal L_1^\infty)`.
The atom of MP at :math:`\nu=0` (:math:`\lambda>1`) is added exactly: it contributes
:math:`\tfrac12(1-1/\lambda)\,e^{-sg}` to :math:`D` of the generalisation loss when :math:`g>0`.

Quadrature rule (``levi:mp-quad``)
----------------------------------
With :math:`\nu=\lambda_-+u`, :math:`w=\lambda_+-\lambda_-=4\sqrt\lambda`, the continuous part is
:math:`\frac1{2\pi\lambda}\int_0^w\sqrt{u(w-u)}\,\frac{F(u)}{\lambda_-+u}\,du` where :math:`F` carries the
factor :math:`e^{-\kappa s u}` (:math:`\kappa=\tfrac12` if :math:`g>0`, else 1).  Three difficulties are
removed by construction rather than by refinement:

* **large s** — the integral is truncated at :math:`T=C/(\kappa s)` (:math:`C=40`, neglected tail
  :math:`<e^{-40}`) whenever :math:`T<w/2`, else :math:`T=w`;
* **the 1/ν near-pole near λ = 1** (at :math:`u=-\lambda_-`, distance :math:`(1-\sqrt\lambda)^2` from the
  edge) — the exponential map :math:`u=\delta\,(e^\tau-1)` with :math:`\delta=\lambda_-` gives
  :math:`du/(\lambda_-+u)=d\tau`, i.e. the pole is mapped to :math:`\tau=-\infty`; the double pole
  :math:`1/(\nu+g)^2` of the weight-decay terms lands at :math:`{\rm Im}\,\tau=\pi`.  At :math:`\lambda=1`
  exactly (:math:`\lambda_-=0`) the density is :math:`u^{-1/2}\sqrt{4-u}` and :math:`\delta=g` (or :math:`T`);
* **endpoint square roots** — a Gauss–Jacobi rule in :math:`\tau\in[0,\tau_T]` with weight
  :math:`\tau^{\alpha}(\tau_T-\tau)^{\beta}`, :math:`\alpha=\tfrac12` (:math:`-\tfrac12` at :math:`\lambda=1`),
  :math:`\beta=\tfrac12` when untruncated (the :math:`\sqrt{\lambda_+-\nu}` edge), else 0.

The number of nodes is taken from a fixed ladder by the length :math:`\tau_T=\log(1+T/\delta)` of the
mapped interval (32 nodes for :math:`\tau_T\le4`, growing linearly, at most 256 for
:math:`|\lambda-1|\sim10^{-16}`), calibrated so that every case reaches a relative error
:math:`\le10^{-12}` against a 320-node rule and mpmath (see ``tests/test_mpgrid.py``).  The
derivative :math:`dD/ds` (for Newton) comes from the same rule.

Root finder (``levi:tstar``)
----------------------------
Safeguarded Newton on :math:`G=\log D(s)-\log(\text{target})` for all grid points at once, in
:math:`x=\log s`.  :math:`D` is a positive mixture of exponentials, hence log-convex: :math:`G` is convex
and decreasing in :math:`s`, so the zero of the tangent in :math:`s` at any iterate is a *certified lower
bound* of the root.  Start: the Jensen bound :math:`D(s)\ge D(0)e^{-\mu s}`, :math:`\mu=-D'(0)/D(0)`
(closed form), another certified lower bound.  Step: left of the root the root of the local model
:math:`G+b\Delta-cs(e^\Delta-1)` (:math:`c` the mixture's slowest rate: exact for the large-s form
:math:`a-b\log s-cs` of every MP decay; 4.7 evaluations a crossing on the Fig. 7 grid against 7-9 for the
plain log-Newton step), capped at 10 e-folds; right of the root the tangent in :math:`s` (exact for pure
exponentials); bisection in :math:`\log s` if a step leaves the bracket.  Converged when the Newton step is
below :math:`10^{-7}` in :math:`\log s`; the final step is applied (quadratic convergence: error below
:math:`y^2/2=5\cdot10^{-15}`), so the residual error is set by the quadrature (:math:`\sim10^{-13}`).

The same iteration (`_newton`) solves every crossing time of the package: gradient flow without weight
decay on rmt's closed forms (`_solve_closed`), with it on the rule above (`_solve`), both reached through
`_crossing_s`, which also chunks the points (4096 at a time, ~20 MB of temporaries) and runs two threads;
`grokclocks.linear.t_star` and `grok_time` use it too, so a grid and a point give the same numbers.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from scipy.special import gammaincinv, gammaln

from . import rmt
from .rmt._rule import _rule01  # Gauss-Jacobi rules on [0, 1], polished to a few ulps
from ._constants import ERF_SQRT2
from ._validate import DomainError, choice, in_open_interval, nonnegative, positive, scalar_or_array

__all__ = [
    "loss_threshold_grid",
    "wd_asymptote_grid",
    "wd_loss_grid",
    "log_wd_loss_grid",
    "mp_decay_grid",
    "DecayGrid",
    "crossing_time_grid",
]


_TRUNC = 40.0  # e^{-40} = 4e-18: neglected tail of the truncated integral
_LADDER = (32, 48, 64, 80, 96, 128, 160, 192, 256)
_NEWTON_TOL = 1e-7  # in log s: the last Newton step, applied (see _newton)
_BRACKET_TOL = 1e-13  # in log s: a bisection bracket
_MAX_ITER = 200
_MAX_STEP = 10.0  # largest step in log s (10 e-folds)
_TINY = float(np.finfo(np.float64).tiny)  # smallest normal double, 2.2e-308
_LOG_S_MAX = 709.0  # log of the largest s searched, 1.6e308


# ----------------------------------------------------------------------------------- reference rules


def _n_nodes(tau_T: np.ndarray) -> np.ndarray:
    """Rule size from the ladder for a mapped interval of length ``tau_T`` (calibrated, see module doc)."""
    need = np.where(tau_T <= 4.0, 32.0, 1.15 * (30.0 + 1.6 * tau_T))
    lad = np.asarray(_LADDER)
    idx = np.minimum(np.searchsorted(lad, need), lad.size - 1)
    return lad[idx]


# ----------------------------------------------------------------------------------- MP pieces


def _edges(lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\lambda_-=(1-\sqrt\lambda)^2` without cancellation near 1, and :math:`w=4\sqrt\lambda`."""
    sl = np.sqrt(lam)
    return ((1.0 - lam) / (1.0 + sl)) ** 2, 4.0 * sl


def _asymptote(lam: np.ndarray, g: np.ndarray, gen: bool) -> np.ndarray:
    r""":math:`\mathcal L_1^\infty=\tfrac{g^2}2\mathbb E[q/(\nu+g)^2]` (with the atom), :math:`d_{\rm out}=1` units.

    The Stieltjes moments come from :mod:`grokclocks.rmt` (``_log_wd_plateau``: :math:`\log(g^2m_2)`,
    free of cancellation and of the over/underflow of :math:`g^2`); at :math:`g=0` the limit is the
    atom's :math:`(1-1/\lambda)^+` (gen) or 0.
    """
    return np.exp(_log_asymptote(lam, g, gen))


def _log_asymptote(lam: np.ndarray, g: np.ndarray, gen: bool) -> np.ndarray:
    r""":math:`\log\mathcal L_1^\infty` (``-inf`` where it is 0): the plateau below 1e-308 (the train
    plateau is ~ :math:`g^2/(2\lambda^2)` for large :math:`\lambda`) must not underflow before the log
    (``log_wd_loss_grid`` returned the decay's -1.8e304 for the plateau's -1419 at :math:`\lambda=10^{300}`)."""
    pos = g > 0
    gp = np.where(pos, g, 1.0)
    with np.errstate(divide="ignore"):
        val = rmt._log_wd_plateau(gp, lam, gen) - math.log(2.0)
        limit = np.log(np.where(lam > 1.0, (lam - 1.0) / lam, 0.0)) if gen else -np.inf
    return np.where(pos, val, limit)


def _decay(s: np.ndarray, lam: np.ndarray, g: np.ndarray, gen: bool,
           log_alpha2: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\log D(s)` and :math:`d\log D/d\log s` on flat arrays (:math:`d_{\rm out}=1` units): the lean
    :func:`_decay_regular` where every number is of moderate size, :func:`_decay_general` elsewhere (the same rule;
    which one a point takes depends on its own numbers only)."""
    if log_alpha2 is None:
        log_alpha2 = np.zeros(s.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        regular = ((lam >= 1e-6) & (lam <= 1e6) & (lam != 1.0) & (g <= 1e6) & (s <= 1e200) & (s >= 1e-200)
                   & (np.abs(log_alpha2) <= 690.0) & (s * (1.0 + lam + g) <= 1e200))
    if np.all(regular):
        return _decay_regular(s, lam, g, gen, log_alpha2)
    if not np.any(regular):
        return _decay_general(s, lam, g, gen, log_alpha2)
    lD, sl = np.empty(s.shape), np.empty(s.shape)
    for m, fn in ((regular, _decay_regular), (~regular, _decay_general)):
        lD[m], sl[m] = fn(s[m], lam[m], g[m], gen, log_alpha2[m])
    return lD, sl


def _decay_regular(s, lam, g, gen, log_alpha2):
    """`_decay` for points whose numbers are all of moderate size (λ in [1e-6, 1e6] but not 1, g <= 1e6, s and
    s(1 + λ + g) in [1e-200, 1e200], |log α²| <= 690): the same rule and nodes as `_decay_general` without its
    guards against overflow and underflow (about 3x fewer operations a node)."""
    lm, w = _edges(lam)
    pos = g > 0
    Tc = _TRUNC / np.where(pos, s / 2.0, s)
    trunc = Tc < w / 2.0
    T = np.where(trunc, Tc, w)
    tau_T = np.log1p(T / lm)
    nn = _n_nodes(tau_T)
    a2 = np.exp(log_alpha2)
    IA, IB, JA, JB = (np.zeros(s.shape) for _ in range(4))
    log_scale = np.empty(s.shape)
    for beta in (0.0, 0.5):
        sb = trunc if beta == 0.0 else ~trunc
        if not sb.any():
            continue
        for n in np.unique(nn[sb]):
            sel = np.flatnonzero(sb & (nn == n))
            x, xm, wt = _rule01(int(n), 0.5, beta)
            tT = tau_T[sel, None]
            d = lm[sel, None]
            tau = tT * x
            em = np.expm1(tau)
            u = d * em
            nu = d + u
            if beta > 0:  # w - u = d e^tau expm1(tau_T - tau), exact near the edge
                txm = tT * xm
                W = wt * np.sqrt(u * (d * (1.0 + em) * np.expm1(txm)) / (tau * txm))
            else:
                W = wt * np.sqrt(u * (w[sel, None] - u) / tau)
            if not gen:
                W = W * nu
            log_scale[sel] = (1.0 + 0.5 + beta) * np.log(tau_T[sel]) - np.log(lam[sel]) - math.log(2.0 * math.pi)
            gs = g[sel, None]
            nug = nu + gs
            r = nu / nug
            eB = np.exp(-0.5 * s[sel, None] * u)
            A = W * (a2[sel, None] + r * r) * (eB * eB)
            IA[sel] = A.sum(axis=1)
            JA[sel] = (A * nug).sum(axis=1)
            if np.any(pos[sel]):
                B = W * ((2.0 * gs) * (r / nug)) * eB
                IB[sel] = B.sum(axis=1)
                JB[sel] = (B * nug).sum(axis=1) / 2.0
    zeros = np.zeros(s.shape)
    return _combine(s, lam, g, lm, gen, log_alpha2, log_scale, zeros, zeros, IA, IB, JA, JB, np.ones(s.shape))


def _decay_general(s: np.ndarray, lam: np.ndarray, g: np.ndarray, gen: bool,
                   log_alpha2: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\log D(s)` and :math:`d\log D/d\log s` on flat arrays (:math:`d_{\rm out}=1` units).

    With an initialisation scale α (``log_alpha2`` = log α², default 0: α = 1; −inf: α = 0; spec
    ``levi:init-rescale``) the first term is :math:`\tfrac12\mathbb E[q(\alpha^2+r^2)e^{-s(\nu+g)}]` and the
    atom's :math:`\tfrac12\alpha^2(1-1/\lambda)e^{-sg}`; α² enters through its logarithm where it exceeds
    1e300 (it overflows beyond |α| = 1.3e154).
    ``DomainError`` where :math:`\lambda_++g` exceeds 1.8e308 (:math:`\nu+g` is then not a double)."""
    if log_alpha2 is None:
        log_alpha2 = np.zeros(s.shape)
    big_a = log_alpha2 > 690.0
    a2 = np.exp(np.where(big_a, 0.0, log_alpha2))  # alpha^2, or 1 where it is carried in log_a
    lm, w = _edges(lam)
    with np.errstate(over="ignore"):
        top_nu = lm + w + g
    if not np.all(np.isfinite(top_nu)):
        k = int(np.argmax(~np.isfinite(top_nu)))
        raise DomainError(f"lam_+ + gamma/2 must be below 1.8e308 for the MP quadrature (got lam = {float(lam[k])!r}, "
                          f"gamma = {float(2.0 * g[k])!r})")
    pos = g > 0
    seff = np.where(pos, s / 2.0, s)
    with np.errstate(divide="ignore"):
        Tc = _TRUNC / seff
    trunc = Tc < w / 2.0
    T = np.where(trunc, Tc, w)
    delta = np.where(lm > 0, lm, np.where(pos, g, T))
    with np.errstate(over="ignore"):
        ratio = T / delta
    # T/delta beyond 1.8e308 (delta = g = 1e-308 at lam = 1): log T - log delta (log1p(x) = log x there)
    tau_T = np.where(np.isfinite(ratio), np.log1p(np.where(np.isfinite(ratio), ratio, 0.0)), np.log(T) - np.log(delta))
    nn = _n_nodes(tau_T)
    IA = np.zeros(s.shape)
    IB = np.zeros(s.shape)
    JA = np.zeros(s.shape)
    JB = np.zeros(s.shape)
    # log of the factor tau_T^(1 + alpha + beta)/lam of the rule, kept apart: at s = 1e300 the truncated
    # range tau_T ~ 4e-299 made tau_T^1.5 (hence IA) underflow to 0 and log D = -inf + inf = NaN
    log_scale = np.zeros(s.shape)
    log_a = np.zeros(s.shape)
    log_b = np.zeros(s.shape)
    ref = np.ones(s.shape)
    inner = lm > 0
    with np.errstate(over="ignore", invalid="ignore"):
        # s (lam_- + g) beyond 1.8e308: both continuous terms are below exp(-1.8e308 + O(log)), i.e. -inf in log;
        # not integrated (tau_T underflowed to 0 and u/tau = 0/0 gave NaN at s = lam = 1e300)
        dead = ~(s * (lm + g) < np.inf)
    for alpha in (0.5, -0.5):
        sa = (inner if alpha > 0 else ~inner) & ~dead
        for beta in (0.0, 0.5):
            sb = sa & (trunc if beta == 0.0 else ~trunc)
            if not sb.any():
                continue
            for n in np.unique(nn[sb]):
                sel = np.flatnonzero(sb & (nn == n))
                x, xm, wt = _rule01(int(n), alpha, beta)
                tT = tau_T[sel, None]
                d = delta[sel, None]
                lms = lm[sel, None]
                tau = tT * x
                # delta e^tau for tau > 700 (tau_T reaches log(4/g) = 710 at lam = 1, g = 1e-308: e^tau = inf)
                big = tau > 700.0
                em = np.expm1(np.where(big, 0.0, tau))
                d_etau = np.where(big, np.exp(np.where(big, tau, 0.0) + np.log(d)), d * (1.0 + em))
                u = np.where(big, d_etau, d * em)
                nu = lms + u
                if beta > 0:  # w - u = delta e^tau (e^{tau_T - tau} - 1), exact near the edge
                    txm = tT * xm
                    bigm = txm > 700.0  # delta e^tau e^(tau_T - tau) - ..., both factors beyond the range
                    wmu = np.where(bigm, np.exp(np.log(d_etau) + np.where(bigm, txm, 0.0)),
                                   d_etau * np.expm1(np.where(bigm, 0.0, txm)))
                    edge = np.sqrt(tT * xm)
                else:
                    wmu = w[sel, None] - u
                    edge = 1.0
                # integrand in tau: sqrt(u (w-u)) (u + delta)/(lm + u) dtau; divide by the Jacobi weight
                if alpha > 0:  # lm > 0, delta = lm: (u + delta)/(lm + u) = 1
                    fac = np.sqrt(u / tau) * np.sqrt(wmu) / edge
                else:
                    # sqrt(u) sqrt(wmu tau) and ((u + delta)/nu) apart: u ~ delta ~ 4e-299 at s = 1e300 (lam = 1)
                    # made u wmu tau and sqrt(..) (u + delta) underflow to 0 (log D = -inf for -345.96)
                    # (u + delta)/c with c = max(delta, max u) to the log scale: (u + delta)/nu = inf at lam = 1,
                    # g = 8.5e307 (delta = g, u ~ 1)
                    # (lam_- = 0 here, so nu = u and sqrt(u) (u + delta)/nu = sqrt(u) + delta/sqrt(u): no 1/u,
                    # which overflowed at s = 1.7e308, g = 5e-9, u ~ 1e-310)
                    c = np.maximum(d, u.max(axis=1, keepdims=True))
                    su = np.sqrt(u)
                    fac = np.sqrt(wmu) * np.sqrt(tau) / edge * (su / c + (d / c) / su)
                W = (wt / (2.0 * np.pi)) * fac
                log_scale[sel] = (1.0 + alpha + beta) * np.log(tau_T[sel]) - np.log(lam[sel])
                if alpha < 0:
                    log_scale[sel] += np.log(c[:, 0])
                gs = g[sel, None]
                ss = s[sel, None]
                if not gen:  # q = nu, divided by the row's largest nu (W nu overflowed at lam = 1e300)
                    nu_ref = nu.max(axis=1, keepdims=True)
                    W = W * (nu / nu_ref)
                    log_scale[sel] += np.log(nu_ref[:, 0])
                eB = np.exp(-0.5 * ss * u)
                nug = nu + gs
                r = nu / nug
                a2s = a2[sel, None]
                bigs = big_a[sel, None]
                a_ = W * np.where(bigs, 1.0 + r * r * np.exp(-np.where(bigs, log_alpha2[sel, None], np.inf)), a2s + r * r) * (eB * eB)
                b_ = W * (2.0 * gs * r / nug) * eB
                # each row divided by its largest term (logs kept in log_a, log_b): W ~ 1e-149 and
                # nu + g ~ 1e-299 at s = 1e300 made the sums J underflow (log-slope 0 for -1/2)
                amax = a_.max(axis=1, keepdims=True)
                bmax = b_.max(axis=1, keepdims=True)
                amax = np.where(amax > 0, amax, 1.0)
                bmax = np.where(bmax > 0, bmax, 1.0)
                a_, b_ = a_ / amax, b_ / bmax
                log_a[sel] = np.log(amax[:, 0]) + np.where(big_a[sel], log_alpha2[sel], 0.0)
                log_b[sel] = np.log(bmax[:, 0])
                # J in units of the row's largest nu + g (the sums overflowed at lam = 1.7e308: slope NaN)
                nug_ref = nug.max(axis=1, keepdims=True)
                ref[sel] = nug_ref[:, 0]
                IA[sel] = a_.sum(axis=1)
                IB[sel] = b_.sum(axis=1)
                JA[sel] = (a_ * (nug / nug_ref)).sum(axis=1)
                JB[sel] = (b_ * (nug / nug_ref)).sum(axis=1) / 2.0
    return _combine(s, lam, g, lm, gen, log_alpha2, log_scale, log_a, log_b, IA, IB, JA, JB, ref)


def _combine(s, lam, g, lm, gen, log_alpha2, log_scale, log_a, log_b, IA, IB, JA, JB, ref):
    r"""``(log D, dlog D/dlog s)`` from the rule's sums: ``IA``, ``IB`` (the two continuous terms, in units of
    ``exp(log_scale + log_a)`` and ``exp(log_scale + log_b)`` times :math:`e^{-s(\lambda_-+g)}` and its square
    root), ``JA``, ``JB`` (the same weighted by ν + g in units of ``ref``), and the atom's term."""
    pos = g > 0
    atom = np.where((lam > 1.0) & pos & gen, 1.0 - 1.0 / lam, 0.0)
    with np.errstate(divide="ignore", over="ignore"):
        la = -s * (lm + g) + log_scale + log_a + np.log(IA)
        lb = np.where(pos & (IB > 0), -s * (lm + g) / 2.0 + log_scale + log_b + np.log(np.where(IB > 0, IB, 1.0)),
                      -np.inf)
        lc = np.where(atom > 0, np.log(np.where(atom > 0, atom, 1.0)) + log_alpha2 - s * g, -np.inf)
    top = np.maximum(np.maximum(la, lb), lc)
    # top = -inf: every term is below exp(-1.8e308) (s (lam_- + g) beyond the float range): log D = -inf
    # and its log-slope -s (lam_- + g) = -inf, exactly (they were NaN)
    vanish = np.isneginf(top)
    topf = np.where(vanish, 0.0, top)
    with np.errstate(invalid="ignore"):
        ea = np.exp(la - topf)
        eb = np.exp(lb - topf)
        ec = np.exp(lc - topf)
    den = np.where(vanish, 1.0, ea + eb + ec)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        num = (np.where(ea > 0, ea * JA / np.where(IA > 0, IA, 1.0), 0.0)
               + np.where(eb > 0, eb * JB / np.where(IB > 0, IB, 1.0), 0.0))  # in units of ref
        # -s (ref num + ec g)/den without forming ref num (s = 0 at lam = 1.7e308: 0 * inf)
        slope = np.where(vanish, -np.inf, -((s * ref) * num + s * (ec * g)) / den)
    return np.where(vanish, -np.inf, top + np.log(den) - np.log(2.0)), slope


# ----------------------------------------------------------------------------------- public API


def _half_gamma(gamma):
    """g = gamma/2 (scalar or array); ``DomainError`` for gamma = 5e-324, whose half is not a double: it
    rounded to 0, and a positive weight decay became none (wd_asymptote_grid(2, 5e-324) gave the gamma = 0
    value 0.5 against 0.25 for every gamma > 0; the plateau log(g^2 m_2(g)) was NaN)."""
    g = 0.5 * gamma
    if np.any((np.asarray(gamma) > 0.0) & (np.asarray(g) == 0.0)):
        raise DomainError("gamma must be 0 or >= 1e-323 (paper convention): gamma/2 of gamma = 5e-324 rounds to 0 "
                          "in float64")
    return g


def _common(lam, gamma, d_out):
    lam = positive(lam, "lam")
    gamma = nonnegative(gamma, "gamma")
    _half_gamma(gamma)
    d_out = positive(d_out, "d_out")
    return lam, gamma, d_out


def loss_threshold_grid(eps, *, d_out=1, level=ERF_SQRT2):
    r"""Loss threshold :math:`\mathcal L^*=d_{\rm out}\epsilon/(2P^{-1}(d_{\rm out}/2,\ell))` (vectorised).

    Parameters
    ----------
    eps : array_like, > 0.  d_out : array_like, > 0.  level : array_like, in (0, 1).

    References
    ----------
    ``levi:lstar`` (= ε/4 exactly at d_out = 1, level = erf √2).
    """
    eps = positive(eps, "eps")
    d_out = positive(d_out, "d_out")
    level = in_open_interval(level, "level", 0.0, 1.0)
    a = 0.5 * d_out
    x, log_x = _p_inverse(d_out, level)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):  # inf = L* beyond 1.8e308
        direct = eps * (a / x)  # no d_out eps (overflows for eps > 1e302)
        via_log = np.exp(np.log(d_out) - math.log(2.0) + np.log(eps) - log_x)
        ok = (x > 1e-300) & np.isfinite(direct) & (direct >= _TINY)
        return scalar_or_array(np.where(ok, direct, via_log))


def _p_inverse(d_out, level):
    r"""``(x, log x)``, :math:`x=P^{-1}(d_{\rm out}/2,\ell)` (regularised lower incomplete gamma).

    Below :math:`x=10^{-300}` (subnormal or 0: :math:`\ell=5\cdot10^{-324}`) ``log x`` comes from
    :math:`P(a,x)=x^a/\Gamma(a+1)\,(1+O(x))`: :math:`\log x=2(\log\ell+\log\Gamma(a+1))/d_{\rm out}`, in
    :math:`d_{\rm out}` (:math:`a=d_{\rm out}/2` rounds to 0 at :math:`d_{\rm out}=5\cdot10^{-324}`).
    Spec ``levi:lstar`` (the accuracy level's inverse in :math:`\mathcal L^*`)."""
    d_out = np.asarray(d_out, dtype=np.float64)
    level = np.asarray(level, dtype=np.float64)
    a = 0.5 * d_out
    x = gammaincinv(a, level)
    small = ~(x > 1e-300)
    with np.errstate(divide="ignore"):
        log_x = np.where(small, 2.0 * (np.log(level) + gammaln(a + 1.0)) / d_out, np.log(np.where(small, 1.0, x)))
    return x, log_x


def wd_asymptote_grid(lam, gamma, *, d_out=1, which="gen"):
    r"""Exact late-time loss :math:`\mathcal L(\infty)` with weight decay (vectorised, with the atom).

    .. math::

        \mathcal L_{\rm gen}(\infty)=\frac{\gamma^2}{8d_{\rm out}}m_2(\tfrac\gamma2),\qquad
        \mathcal L_{\rm tr}(\infty)=\frac{\gamma^2}{8d_{\rm out}}\big[m(\tfrac\gamma2)-\tfrac\gamma2m_2(\tfrac\gamma2)\big],

    and :math:`(1-1/\lambda)^+/d_{\rm out}`, 0 at :math:`\gamma=0`.

    References
    ----------
    ``levi:eq15`` (exact Stieltjes forms, paper's prefactor corrected), ``levi:mp-stieltjes``.
    """
    which = choice(which, "which", {"gen": "gen", "train": "tr", "tr": "tr"})
    lam, gamma, d_out = _common(lam, gamma, d_out)
    lam, gamma, d_out = np.broadcast_arrays(lam, gamma, d_out)
    return scalar_or_array(_asymptote(lam, gamma / 2.0, which == "gen") / d_out)


class DecayGrid(NamedTuple):
    """Result of :func:`mp_decay_grid`."""

    log_D: float | np.ndarray
    r""":math:`\log D(s)`."""
    dlogD_dlogs: float | np.ndarray
    r""":math:`d\log D/d\log s`."""


def mp_decay_grid(s, lam, gamma, *, which="gen"):
    r"""Decaying part :math:`D(s)` of eq. 14 (:math:`d_{\rm out}=1` units) and its log-slope.

    Returns ``(log_D, dlogD_dlogs)`` with
    :math:`D(s)=\tfrac12\mathbb E[q(e^{-s(\nu+g)}(1+r^2)+2gr\,e^{-s(\nu+g)/2}/(\nu+g))]`, the fixed
    quadrature rule of the module docstring; :math:`\log D` never underflows.  ``(-inf, -inf)`` where
    :math:`\log D` itself is below -1.8e308 (:math:`s(\lambda_-+g)` beyond the double range).

    Returns
    -------
    DecayGrid
        A :class:`DecayGrid` named tuple (``log_D``, ``dlogD_dlogs``); it unpacks like a plain tuple.

    References
    ----------
    ``levi:eq14``, ``levi:mp-quad``.
    """
    which = choice(which, "which", {"gen": "gen", "train": "tr", "tr": "tr"})
    s = nonnegative(s, "s")
    lam, gamma, _ = _common(lam, gamma, 1.0)
    s, lam, gamma = np.broadcast_arrays(s, lam, gamma)
    shape = s.shape
    lD, sl = _decay(s.ravel(), lam.ravel(), gamma.ravel() / 2.0, which == "gen")
    return DecayGrid(scalar_or_array(lD.reshape(shape)), scalar_or_array(sl.reshape(shape)))


def log_wd_loss_grid(t, lam, gamma, eta0, *, d_out=1, which="gen"):
    r"""Log of the exact MP loss with weight decay, eq. 14 (eq. 8 at γ = 0), vectorised.

    .. math::

        \mathcal L(t)=\frac{1}{2d_{\rm out}}\mathbb E_{\rm MP(\lambda)}\Big[q\Big(e^{-4\eta_0'(\nu+\frac\gamma2)t}
        +\Big(\frac{e^{-2\eta_0'(\nu+\frac\gamma2)t}\nu+\frac\gamma2}{\nu+\frac\gamma2}\Big)^2\Big)\Big],
        \quad \eta_0'=\eta_0/d_{\rm out},

    :math:`q=\nu` (``which="train"``) or 1 (``"gen"``); computed as
    :math:`\log[\mathcal L_1^\infty+D(s)]-\log d_{\rm out}` with :math:`s=4\eta_0t/d_{\rm out}`; ``-inf``
    where the log is below -1.8e308 (no plateau and :math:`s\lambda_-` beyond the double range);
    ``DomainError`` where :math:`s` or :math:`\lambda_++\gamma/2` exceeds 1.8e308.

    References
    ----------
    ``levi:eq14``, ``levi:eq8``, ``levi:eq12-loss``, ``levi:mp-quad``.
    """
    which = choice(which, "which", {"gen": "gen", "train": "tr", "tr": "tr"})
    t = nonnegative(t, "t")
    eta0 = positive(eta0, "eta0")
    lam, gamma, d_out = _common(lam, gamma, d_out)
    t, lam, gamma, eta0, d_out = np.broadcast_arrays(t, lam, gamma, eta0, d_out)
    shape = t.shape
    lam_, g_, d_ = lam.ravel(), gamma.ravel() / 2.0, d_out.ravel()
    with np.errstate(over="ignore"):
        s = 4.0 * eta0.ravel() * t.ravel() / d_
        s = np.where(np.isfinite(s), s, 4.0 * ((eta0.ravel() / d_) * t.ravel()))  # no spurious 4 eta0 = inf
    if not np.all(np.isfinite(s)):
        k = int(np.argmax(~np.isfinite(s)))
        raise DomainError(  # as linear.log_loss_*: the decay at such s is not resolved in float64
            f"4 eta0 t/d_out must be a finite float (<= 1.8e308) (got inf for t = {float(t.ravel()[k])!r}, "
            f"eta0 = {float(eta0.ravel()[k])!r}, d_out = {float(d_[k])!r})")
    gen = which == "gen"
    lD, _ = _decay(s, lam_, g_, gen)
    out = np.logaddexp(_log_asymptote(lam_, g_, gen), lD) - np.log(d_)
    return scalar_or_array(out.reshape(shape))


def wd_loss_grid(t, lam, gamma, eta0, *, d_out=1, which="gen"):
    r"""Exact MP loss with weight decay (``exp`` of :func:`log_wd_loss_grid`; ``inf`` only where the loss
    exceeds 1.8e308, e.g. :math:`\sim1/d_{\rm out}` for a subnormal :math:`d_{\rm out}`).

    References
    ----------
    ``levi:eq14``, ``levi:eq8``, ``levi:eq12-loss``.
    """
    return scalar_or_array(np.exp(log_wd_loss_grid(t, lam, gamma, eta0, d_out=d_out, which=which)))


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
        for _ in range(40):
            f = G + b * dx - ce * np.expm1(dx)
            fp = b - ce * np.exp(dx)
            nxt = np.clip(dx - f / fp, 0.0, _MAX_STEP)
            nxt = np.where(np.isfinite(nxt), nxt, dx)
            if np.all(np.abs(nxt - dx) <= 1e-15 * np.maximum(dx, 1.0)):
                dx = nxt
                break
            dx = nxt
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


_CHUNK = 4096  # points a crossing solve handles at once: its (points x nodes) temporaries stay ~ 20 MB


def _solve_closed(lam: np.ndarray, log_alpha2: np.ndarray, log_target: np.ndarray, gen: bool, x_max):
    r"""(s, beyond) where the decaying part :math:`c_\alpha C_q(s)` of gradient flow without weight decay falls to
    ``exp(log_target)`` (:math:`d_{\rm out}=1` units, :math:`c_\alpha=(1+\alpha^2)/2`): :math:`C_1=\Phi_1`,
    :math:`C_0` the continuous part of :math:`\Phi_0`, closed forms of `grokclocks.rmt` with their derivatives
    :math:`-\mathbb E[\nu^2e^{-s\nu}]/\Phi_1` and :math:`-\Phi_1/C_0`; Jensen start :math:`C_q(0)e^{-\mu s}`
    (:math:`C_1(0)=1`, :math:`\mu=1+\lambda`; :math:`C_0(0)=\min(1,1/\lambda)`, :math:`\mu=\max(1,\lambda)`)."""
    lt = log_target - (np.logaddexp(0.0, log_alpha2) - math.log(2.0))
    lm = rmt._gap(lam)
    if not gen:
        x0 = np.log(np.maximum(-lt / (1.0 + lam), 1e-300))

        def evaluate(x, idx):
            s = np.exp(x)
            with np.errstate(over="ignore", invalid="ignore"):
                return rmt._log_phi1(s, lam[idx]), s * rmt._phi1_slope(s, lam[idx])
    else:
        gt1 = lam > 1.0
        with np.errstate(divide="ignore"):
            x0 = np.log(np.maximum((np.where(gt1, -np.log(lam), 0.0) - lt) / np.where(gt1, lam, 1.0), 1e-300))

        def evaluate(x, idx):
            s = np.exp(x)
            a = lam[idx]
            lc = rmt._log_phi0_cont(s, a)
            with np.errstate(over="ignore", invalid="ignore"):
                return lc, -s * np.exp(rmt._log_phi1(s, a) - lc)
    x, beyond = _newton(evaluate, lt, x0, x_max, rate=lm)
    return np.exp(x), beyond


def _crossing_s(lam: np.ndarray, g: np.ndarray, log_alpha2: np.ndarray, log_target: np.ndarray, gen: bool,
                x_max=_LOG_S_MAX) -> tuple[np.ndarray, np.ndarray]:
    r"""THE crossing engine of gradient flow: ``(s, beyond)`` where the decaying part :math:`D(s)` of the loss
    (:math:`d_{\rm out}\mathcal L=\mathcal L^\infty+D`, :math:`d_{\rm out}=1` units) falls to
    ``exp(log_target)``, flat arrays: closed forms without weight decay (`_solve_closed`), eq. 14's fixed rule
    with it (`_solve`). Chunks of :data:`_CHUNK` points, two threads when there are several chunks (numpy
    releases the GIL in its loops); each point iterates on its own numbers, so the result does not depend on
    the chunking. ``beyond`` marks roots above :math:`e^{x_{\max}}`."""
    n = lam.size
    s = np.empty(n)
    beyond = np.zeros(n, dtype=bool)
    x_max = np.broadcast_to(np.asarray(x_max, dtype=np.float64), (n,))

    def run(lo: int) -> None:
        sl = slice(lo, min(lo + _CHUNK, n))
        la, gg, al, lt, xm = lam[sl], g[sl], log_alpha2[sl], log_target[sl], x_max[sl]
        zero = gg == 0.0
        out, bey = np.empty(la.shape), np.zeros(la.shape, dtype=bool)
        if np.any(zero):
            out[zero], bey[zero] = _solve_closed(la[zero], al[zero], lt[zero], gen, xm[zero])
        pos = ~zero
        if np.any(pos):
            out[pos], bey[pos] = _solve(la[pos], gg[pos], np.exp(lt[pos]), gen, al[pos], xm[pos])
        s[sl], beyond[sl] = out, bey

    starts = range(0, n, _CHUNK)
    if n > _CHUNK and (os.cpu_count() or 1) > 1:
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(run, starts))
    else:
        for lo in starts:
            run(lo)
    return s, beyond


def _crossing(which, lam, gamma, eps, eta0, d_out, level):
    lam, gamma, d_out = _common(lam, gamma, d_out)
    eps = positive(eps, "eps")
    eta0 = positive(eta0, "eta0")
    Lstar = np.asarray(loss_threshold_grid(eps, d_out=d_out, level=level))
    lam, gamma, eta0, d_out, Lstar = np.broadcast_arrays(lam, gamma, eta0, d_out, Lstar)
    shape = lam.shape
    lam, g, eta0, d, Lam = lam.ravel(), gamma.ravel() / 2.0, eta0.ravel(), d_out.ravel(), (d_out * Lstar).ravel()
    out = {}
    for w in which:
        gen = w == "gen"
        Linf = _asymptote(lam, g, gen)
        s = np.empty(lam.shape)
        zero = Lam >= 1.0  # L(0) = 1/d_out <= L*
        never = ~zero & (Linf >= Lam)
        s[zero] = 0.0
        s[never] = np.inf
        solve = ~zero & ~never
        if solve.any():
            ls, gs = lam[solve], g[solve]
            s[solve], beyond = _crossing_s(ls, gs, np.zeros(ls.shape), np.log(Lam[solve] - Linf[solve]), gen)
            if np.any(beyond):
                k = int(np.argmax(beyond))
                raise DomainError(f"the crossing s = 4 eta0 t*/d_out exceeds 1.6e308 (lam={float(ls[k])!r}, "
                                  f"gamma={float(2 * gs[k])!r}, target L* d_out - L(inf) = "
                                  f"{float((Lam[solve] - Linf[solve])[k])!r}): t* is beyond the double range")
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            # t = s d_out/(4 eta0); (s/4)(d_out/eta0) where that overflows spuriously (4 eta0 = inf at
            # eta0 = 1.7e308 gave inf/inf = NaN for a never-reached level); inf stays inf
            t = s * d / (4.0 * eta0)
            alt = (0.25 * s) * (d / eta0)
            t = np.where(np.isinf(s), np.inf, np.where(np.isfinite(t) & ((t > 0) | (s == 0)), t, alt))
        out[w] = t.reshape(shape)
    return out


def crossing_time_grid(which, lam, gamma, eps, eta0, *, d_out=1, level=ERF_SQRT2):
    r"""Exact crossing time :math:`t^*` of the train or gen loss through :math:`\mathcal L^*` (vectorised).

    :math:`t^*` solves :math:`\mathcal L(t^*)=\mathcal L^*` for the exact eq. 14 losses; :math:`t^*=0` if
    :math:`\mathcal L(0)=1/d_{\rm out}\le\mathcal L^*` and :math:`+\infty` if
    :math:`\mathcal L(\infty)\ge\mathcal L^*` (``levi:eq15`` asymptote, with the atom for λ > 1).

    Parameters
    ----------
    which : ``"train"`` or ``"gen"``.
    lam : array_like, > 0.  gamma : array_like, >= 0 (paper convention).  eps, eta0 : > 0.
    d_out : > 0 (non-integer allowed for scans).  level : in (0, 1), default erf(√2).

    References
    ----------
    ``levi:tstar``, ``levi:grok-def``, ``levi:eq14``, ``levi:lstar``.
    """
    w = choice(which, "which", {"gen": "gen", "train": "tr", "tr": "tr"})
    return scalar_or_array(_crossing((w,), lam, gamma, eps, eta0, d_out, level)[w])


def _train_gen_crossings(lam, gamma, eps, eta0, d_out, level):
    r"""Both exact crossing times, :math:`(t^*_{\rm tr}, t^*_{\rm gen})`, as arrays of the broadcast shape.

    The engine of :func:`grokclocks.linear.grok_time_grid` (the one public grokking-time grid, which
    adds :math:`\Delta t` and its small-:math:`\lambda` branch); validation as in :func:`crossing_time_grid`.
    """
    res = _crossing(("tr", "gen"), lam, gamma, eps, eta0, d_out, level)
    return res["tr"], res["gen"]
