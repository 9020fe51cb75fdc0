"""Levi et al.: weight decay: loss asymptotes, the largest weight decay that still groks, eq. 16."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize

from .. import _validate as V
from .. import rmt
from .._constants import ERF_SQRT2
from ..citations import cites
from ._conventions import (
    _broadcast_apply,
    _d_out,
    _eps,
    _eta0,
    _gamma_paper,
    _lam,
    _lam_below_one,
    _lam_not_one,
    _level,
    _ROOT_RTOL,
)
from ._crossing import _log_lstar
from ._losses import _log_loss_inf


class WDAsymptotes(NamedTuple):
    """Result of :func:`wd_asymptotes` and :func:`wd_asymptotes_small_gamma` (eq. 15)."""

    L_tr_inf: float | np.ndarray
    r"""train loss :math:`\mathcal L_{\rm tr}(t\to\infty)`."""
    L_gen_inf: float | np.ndarray
    r"""generalisation loss :math:`\mathcal L_{\rm gen}(t\to\infty)`."""


@cites("levi:eq15", "levi:mp-stieltjes", "levi:conv-wd")
@V.broadcasting()
def wd_asymptotes(lam, gamma, *, d_out=1, wd_convention="paper"):
    r"""Exact :math:`t\to\infty` train and generalisation losses with weight decay (eq. 15, corrected).

    .. math::
        \mathcal L_{\rm tr}(\infty)=\frac{\gamma^2}{8d_{\rm out}}\,\mathbb E\Big[\frac{\nu}{(\nu+g)^2}\Big]
        =\frac{\gamma^2}{8d_{\rm out}}[m(g)-g\,m_2(g)],\qquad
        \mathcal L_{\rm gen}(\infty)=\frac{\gamma^2}{8d_{\rm out}}\,m_2(g),\qquad g=\frac\gamma2

    (:math:`m,m_2` = MP resolvent moments, atom included).  For :math:`\lambda>1` the generalisation
    value tends to :math:`\tfrac12(1-1/\lambda)/d_{\rm out}` as :math:`\gamma\to0^+`, half of the
    :math:`\gamma=0` plateau; at :math:`\gamma=0` exactly the :math:`\gamma=0` limits
    :math:`(0,(1-1/\lambda)^+/d_{\rm out})` are returned.  Independent of the learning rate and of
    the init scale (for :math:`\gamma>0`).

    Parameters
    ----------
    lam : float or array_like
        :math:`\lambda>0`.
    gamma : float or array_like
        :math:`\gamma\ge0` (``DomainError`` for the one value 5e-324 in the paper convention, whose half rounds to 0).
    d_out : int
        :math:`\ge1`.
    wd_convention : {"paper", "torch"}
        Convention of ``gamma``.

    Returns
    -------
    (L_tr_inf, L_gen_inf) : tuple of float or ndarray
        A :class:`WDAsymptotes` named tuple (``L_tr_inf``, ``L_gen_inf``); it unpacks like a plain tuple.

    References
    ----------
    Levi et al., eq. (15) (the paper's :math:`\gamma^2/4` is corrected to :math:`\gamma^2/8`; erratum levi-1).
    """
    ll = _lam(lam)
    d = _d_out(d_out)
    gg = _gamma_paper(gamma, d, wd_convention)

    def f(which):
        return lambda la, g: math.exp(_log_loss_inf(which, la, float(d), g, 1.0)) if (
            g > 0 or which == "gen") else 0.0

    tr = _broadcast_apply(f("train"), ll, gg)
    ge = _broadcast_apply(f("gen"), ll, gg)
    return WDAsymptotes(V.scalar_or_array(tr), V.scalar_or_array(ge))


@cites("levi:eq15")
@V.broadcasting()
def wd_asymptotes_small_gamma(lam, gamma, *, convention="corrected"):
    r"""Small-:math:`\gamma` forms of the weight-decay asymptotes (:math:`d_{\rm out}=1`).

    .. math::
        \lambda<1:\ \frac{\gamma^2}{8(1-\lambda)},\ \frac{\gamma^2}{8(1-\lambda)^3};\qquad
        \lambda>1:\ \frac{\gamma^2}{8\lambda(\lambda-1)},\ \frac{1-1/\lambda}{2}+\frac{\gamma^2}{8(\lambda-1)^3}

    ``convention="paper"`` returns the paper's printed :math:`\gamma^2/(4(1-\lambda))`,
    :math:`\gamma^2/(4(1-\lambda)^3)` (twice too large; only stated for :math:`\lambda<1`).  Valid for
    :math:`\gamma/2\ll(1-\sqrt\lambda)^2`; use :func:`wd_asymptotes` otherwise.

    Parameters
    ----------
    lam : float or array_like
        :math:`\lambda>0`, :math:`\lambda\ne1` (``"paper"``: :math:`0<\lambda<1`).
    gamma : float or array_like
        :math:`\gamma\ge0` (paper convention).
    convention : {"corrected", "paper"}

    Returns
    -------
    (L_tr_inf, L_gen_inf) : tuple of float or ndarray
        A :class:`WDAsymptotes` named tuple (``L_tr_inf``, ``L_gen_inf``); it unpacks like a plain tuple.

    References
    ----------
    Levi et al., eq. (15); errata levi-1, levi-3.
    """
    conv = V.choice(convention, "convention", ("corrected", "paper"))
    g = V.nonnegative(gamma, "gamma")
    if conv == "paper":
        ll = _lam_below_one(lam, "the paper's eq. 15")
        ll, g = np.broadcast_arrays(ll, g)
        return WDAsymptotes(V.scalar_or_array(g**2 / (4.0 * (1.0 - ll))), V.scalar_or_array(g**2 / (4.0 * (1.0 - ll) ** 3)))
    ll = _lam_not_one(lam, "the small-gamma expansion of eq. 15")
    ll, g = np.broadcast_arrays(ll, g)
    below = ll < 1.0
    dl = np.where(below, 1.0 - ll, ll - 1.0)
    with np.errstate(over="ignore", under="ignore"):  # divide before multiplying: g^2 overflows at 1e155
        tr = np.where(below, (g / 8.0) * (g / dl), (g / (8.0 * ll)) * (g / dl))
        ge = np.where(below, 0.0, 0.5 * dl / ll) + ((g / dl) / (8.0 * dl)) * (g / dl)
    return WDAsymptotes(V.scalar_or_array(tr), V.scalar_or_array(ge))


def _wd_gamma_max_scalar(lam: float, eps: float, d: float, level: float) -> float:
    log_target = _log_lstar(eps, d, level)  # in logs: L* may exceed 1.8e308 (tiny level)
    if log_target + math.log(d) >= math.log(0.5):  # L_gen(inf) < 1/(2 d_out) for every gamma
        return math.inf
    if lam > 1.0 and math.log(0.5 * ((lam - 1.0) / lam)) >= log_target + math.log(d):
        return 0.0  # even gamma -> 0+ leaves the plateau above L*

    def f(u: float) -> float:
        return _log_loss_inf("gen", lam, d, math.exp(u), 1.0) - log_target

    lo = hi = 0.0
    if f(0.0) > 0:
        while f(lo) > 0:
            hi, lo = lo, lo - math.log(2.0) * 8
    else:
        while f(hi) <= 0:
            lo, hi = hi, hi + math.log(2.0) * 8
    return math.exp(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=_ROOT_RTOL))


@cites("levi:eq15", "levi:eq14", "levi:fig3")
@V.broadcasting()
def wd_gamma_max(lam, eps, *, d_out=1, level=ERF_SQRT2, wd_convention="paper"):
    r"""Largest weight decay for which the generalisation accuracy still reaches ``level`` (edge of Fig. 3's gray region).

    .. math:: \gamma_{\max}:\quad \mathcal L_{\rm gen}(\infty;\gamma_{\max})=\frac{\gamma_{\max}^2}{8d_{\rm out}}\,m_2(\gamma_{\max}/2)=\mathcal L^*

    (root of the exact asymptote of :func:`wd_asymptotes`, which increases with :math:`\gamma`).
    ``inf`` if :math:`\mathcal L^*\ge1/(2d_{\rm out})` (every :math:`\gamma` works); ``0.0`` if
    :math:`\lambda>1` and :math:`(1-1/\lambda)/(2d_{\rm out})\ge\mathcal L^*` (no :math:`\gamma>0` works).
    Reference (:math:`\epsilon=10^{-3}`, :math:`d_{\rm out}=1`): 0.02713 (λ=0.3), 0.01659 (0.5),
    0.007882 (0.7), 0.001621 (0.9).

    Parameters
    ----------
    lam : float or array_like
        :math:`\lambda>0`.
    eps : float or array_like
        :math:`\epsilon>0`.
    d_out : int
        :math:`\ge1`.
    level : float or array_like
        Accuracy level in (0, 1).
    wd_convention : {"paper", "torch"}
        Convention of the returned :math:`\gamma`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eqs. (14), (15), Fig. 3.
    """
    ll = _lam(lam)
    ee = _eps(eps)
    d = _d_out(d_out)
    lv = _level(level)
    conv = V.choice(wd_convention, "wd_convention", ("paper", "torch"))
    out = _broadcast_apply(lambda la, e, l_: _wd_gamma_max_scalar(la, e, float(d), l_), ll, ee, lv)
    if conv == "torch":
        out = out / d
    return V.scalar_or_array(out)


@cites("levi:eq15-dt")
@V.broadcasting()
def grok_time_wd_paper(lam, eta0):
    r"""The paper's grokking time with weight decay — a paper claim, contradicted by exact eq. 14.

    .. math:: \Delta t_{\rm grok}\simeq\frac{\log(1+\sqrt\lambda)}{2\eta_0(1-\sqrt\lambda)^2}\quad\text{(paper; not derivable)}

    Transcription only: the exact :func:`grok_time` with ``gamma > 0`` *increases* with
    :math:`\gamma` and diverges at :func:`wd_gamma_max` (λ=0.5, ε=1e-3: 431, 439, 457, 596, ∞ for
    γ = 0, 1e-3, 3e-3, 1e-2, 3e-2, while this gives 312; erratum levi-2).

    Parameters
    ----------
    lam : float or array_like
        :math:`0<\lambda<1`.
    eta0 : float or array_like
        :math:`\eta_0>0`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eq. (15) / §3.3.2; spec ``levi:eq15-dt`` (status: paper claim).
    """
    ll = _lam_below_one(lam, "the paper's weight-decay grokking time")
    et = _eta0(eta0)
    with np.errstate(over="ignore", under="ignore"):
        return V.scalar_or_array(np.log1p(np.sqrt(ll)) / (2.0 * et) / rmt._gap(ll))
