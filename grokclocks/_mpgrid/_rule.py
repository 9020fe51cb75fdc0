"""The fixed Gauss-Jacobi rule of eq. 14 over the Marchenko-Pastur law: log D(s) and its slope on flat arrays
(private to `grokclocks._mpgrid`; the rule and its calibration are described in the package docstring)."""

from __future__ import annotations

import math

import numpy as np

from .. import rmt
from .._validate import DomainError
from ..rmt._rule import _rule01  # Gauss-Jacobi rules on [0, 1], polished to a few ulps

_TRUNC = 40.0  # e^{-40} = 4e-18: neglected tail of the truncated integral
_LADDER = (32, 48, 64, 80, 96, 128, 160, 192, 256)


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
    with np.errstate(over="ignore"):
        faint = (~regular) & (lam == 1.0) & (g > 0.0) & (g * np.maximum(s, 1.0) <= _FAINT)
    if not np.any(regular) and not np.any(faint):
        return _decay_general(s, lam, g, gen, log_alpha2)
    lD, sl = np.empty(s.shape), np.empty(s.shape)
    for m, fn in ((regular, _decay_regular), (faint, _decay_faint_at_one), (~regular & ~faint, _decay_general)):
        if np.any(m):
            lD[m], sl[m] = fn(s[m], lam[m], g[m], gen, log_alpha2[m])
    return lD, sl


# At lam = 1 the map's scale delta = lam_- is 0 and the rule takes delta = g: its range log(T/g) reaches 690 for
# g = 1e-300, beyond what 256 nodes resolve (log L off by 3e-9 at t = 1500, gamma = 1e-300; a larger rule
# loses the nodes near tau = 0 to underflow).  There the weight decay is faint: with the density ~ nu^(-1/2)/pi
# near 0, replacing (nu/(nu + g))^2 by 1 and dropping the cross term 2g nu/(nu + g)^2 e^(-s(nu+g)/2) change D by
# O(sqrt(g max(s, 1))) relative, so for g max(s, 1) <= 1e-34 the decay is that of gradient flow without weight
# decay, times e^(-s g) (measured against the mpmath reference: 3e-14 in log L at g = 1e-34 ... 1e-300, t = 1e-3
# ... 1e12).  Above the bound the range log(T/g) stays below ~83 (T <= 4, and T = 80/s where truncated), inside
# the calibrated ladder.
_FAINT = 1e-34


def _closed_decay(s, lam, gen: bool):
    r"""``(log C_q(s), d log C_q/d log s)`` of gradient flow without weight decay, flat arrays: :math:`C_1=\Phi_1`
    (train), :math:`C_0` the continuous part of :math:`\Phi_0` (gen), rmt's closed forms, with the slopes
    :math:`-s\,\mathbb E[\nu^2e^{-s\nu}]/\Phi_1` and :math:`-s\,\Phi_1/C_0`."""
    with np.errstate(over="ignore", invalid="ignore"):
        l1 = rmt._log_phi1(s, lam)
        if not gen:
            return l1, s * rmt._phi1_slope(s, lam)
        l0 = rmt._log_phi0_cont(s, lam)
        return l0, -s * np.exp(l1 - l0)


def _decay_faint_at_one(s, lam, g, gen, log_alpha2):
    """`_decay` at lam = 1 for a faint weight decay (g max(s, 1) <= 1e-34, see `_FAINT`): `_closed_decay` times
    ((1 + alpha^2)/2) e^(-s g)."""
    lq, slope = _closed_decay(s, lam, gen)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.logaddexp(0.0, log_alpha2) - math.log(2.0) - s * g + lq, slope - s * g


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
            log_scale[sel] = (1.0 + 0.5 + beta) * np.log(tau_T[sel]) - np.log(lam[sel]) - math.log(2.0 * math.pi)
            rule = _rule01(int(n), 0.5, beta)
            rows = max(1, _BLOCK // int(n))
            for k in range(0, sel.size, rows):
                _regular_block(sel[k:k + rows], rule, beta, tau_T, lm, w, s, g, a2, pos, gen, IA, IB, JA, JB)
    zeros = np.zeros(s.shape)
    return _combine(s, lam, g, lm, gen, log_alpha2, log_scale, zeros, zeros, IA, IB, JA, JB, np.ones(s.shape))


_BLOCK = 65536  # (points x nodes) of one block of the rule's sums: 8 temporaries of 512 kB (see _crossings._CHUNK)


def _regular_block(sel, rule, beta, tau_T, lm, w, s, g, a2, pos, gen, IA, IB, JA, JB):
    """The rule's four sums (IA, JA; IB, JB where g > 0) of `_decay_regular` on the points `sel`, written into the
    caller's arrays: the printed formulas of `_decay_regular`'s docstring, operation for operation, in six
    buffers of the block's size (fresh temporaries of a 4096 x 64 block cost more than the arithmetic).  The
    block is laid out nodes x points, so each sum over the nodes adds whole rows (one vectorised pass a node,
    accumulated in node order) instead of reducing 32-256 numbers per point."""
    if sel.size == 1:
        # a lone point laid out twice: numpy reduces a one-column block as one contiguous run (pairwise), a wider
        # one a node row at a time, so a scalar call would round its sums differently from an array call
        sel = np.repeat(sel, 2)
    x, xm, wt = (v[:, None] for v in rule)
    tT = tau_T[sel]
    d = lm[sel]
    shape = (x.size, sel.size)
    tau = np.multiply(x, tT)
    em = np.expm1(tau)
    u = np.multiply(d, em)
    nu = np.add(d, u)
    W = np.empty(shape)
    if beta > 0:  # w - u = d e^tau expm1(tau_T - tau), exact near the edge
        txm = np.multiply(xm, tT)
        np.add(1.0, em, out=W)
        np.multiply(d, W, out=W)
        np.multiply(W, np.expm1(txm, out=em), out=W)  # em is not needed past here
        np.multiply(u, W, out=W)
        np.divide(W, np.multiply(tau, txm, out=txm), out=W)
    else:
        np.subtract(w[sel], u, out=W)
        np.multiply(u, W, out=W)
        np.divide(W, tau, out=W)
    np.sqrt(W, out=W)
    np.multiply(wt, W, out=W)
    if not gen:
        np.multiply(W, nu, out=W)
    gs = g[sel]
    nug = np.add(nu, gs, out=tau)  # tau is not needed past here
    r = np.divide(nu, nug, out=nu)
    eB = np.multiply(-0.5 * s[sel], u, out=u)
    np.exp(eB, out=eB)
    A = np.multiply(r, r, out=em)
    np.add(a2[sel], A, out=A)
    np.multiply(W, A, out=A)
    tmp = np.empty(shape)
    np.multiply(A, np.multiply(eB, eB, out=tmp), out=A)
    IA[sel] = A.sum(axis=0)
    JA[sel] = np.multiply(A, nug, out=tmp).sum(axis=0)
    if np.any(pos[sel]):
        B = np.divide(r, nug, out=A)
        np.multiply(2.0 * gs, B, out=B)
        np.multiply(W, B, out=B)
        np.multiply(B, eB, out=B)
        IB[sel] = B.sum(axis=0)
        JB[sel] = np.multiply(B, nug, out=tmp).sum(axis=0) / 2.0


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
