"""Crossing times of gradient flow: the one crossing engine (`_crossing_s`) and the grid of crossing times
(private to `grokclocks._mpgrid`)."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import rmt
from .._constants import ERF_SQRT2
from .._validate import DomainError, choice, positive, scalar_or_array
from ._grids import _common, loss_threshold_grid
from ._newton import _LOG_S_MAX, _newton, _solve
from ._rule import _asymptote, _closed_decay

# points a crossing solve handles at once (the rule works on blocks of them, _rule._BLOCK).  With two threads the
# GIL is taken between numpy calls: few, long calls (large chunks and blocks) let the threads overlap.  Measured on
# the idle 2-core EPYC, 1000 x 1000 phase diagram: 4096-point chunks with 16384-node blocks 7.8 s wall on two
# threads against 5.6 s on one; 16384 with 65536 3.2-3.5 s (5.4 s on one thread)
_CHUNK = 16384


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
    else:
        gt1 = lam > 1.0
        with np.errstate(divide="ignore"):
            x0 = np.log(np.maximum((np.where(gt1, -np.log(lam), 0.0) - lt) / np.where(gt1, lam, 1.0), 1e-300))

    def evaluate(x, idx):
        return _closed_decay(np.exp(x), lam[idx], gen)

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
