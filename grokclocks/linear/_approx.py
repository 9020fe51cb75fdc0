"""Levi et al.: the paper's approximate grokking times (Lambert W, eq. 25, eq. 11, lambda -> 1, d_out max)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize, special

from .. import _validate as V
from .. import rmt
from .._constants import ERF_SQRT2
from ..citations import cites
from ._conventions import _broadcast_apply, _eps, _eta0, _lam_below_one, _level
from ._crossing import _grok_time_scalar, _log_lstar


def _lambertw_args(lam, eps, eta0, level, what):
    """``(lam, log_eps_eff, eta0, log_a)``; eps_eff = 4 L*(eps, d_out = 1, level) in log space (it overflows at
    eps = 1e300, level = 1e-6), log_a = log (1 - sqrt(lam))^2 (see _log1m_sqrt)."""
    ll = _lam_below_one(lam, what)
    ee = _eps(eps)
    et = _eta0(eta0)
    lv = _level(level)
    ll, ee, et, lv = np.broadcast_arrays(ll, ee, et, lv)
    log_eps_eff = math.log(2.0) + np.log(ee) - 2.0 * np.log(special.erfinv(lv))  # 2 eps: inf at 1.7e308
    log_eps_eff = np.where(lv == ERF_SQRT2, np.log(ee), log_eps_eff)
    return ll, log_eps_eff, et, 2.0 * _log1m_sqrt(ll)


def _log1m_sqrt(lam):
    r""":math:`\log(1-\sqrt\lambda)` for :math:`0<\lambda<1`: ``log1p(-sqrt(lam))`` below 1/4 (``log`` of
    :math:`(1-\sqrt\lambda)^2` is 0 in float below :math:`\lambda=10^{-32}`), and
    :math:`\log(1-\lambda)-\log(1+\sqrt\lambda)` above (the rounding of :math:`\sqrt\lambda` is most of
    :math:`1-\sqrt\lambda` at :math:`\lambda=1-10^{-16}`: 2 % error there)."""
    lam = np.asarray(lam, dtype=np.float64)
    r = np.sqrt(lam)
    return np.where(lam < 0.25, np.log1p(-r), np.log1p(-lam) - np.log1p(r))


_LOG_Z0 = (5.0 / 3.0) * math.log(2.0) - math.log(3.0) - math.log(math.pi) / 3.0  # log(2^(5/3)/(3 pi^(1/3)))


def _log_z(lam, log_eps, log_a, gen):
    """log z_tr (gen=False: a) or log z_gen (a^(1/3)) of eqs. 23-24 (log_a = log (1 - sqrt(lam))^2)."""
    return _LOG_Z0 + (log_a / 3.0 if gen else log_a) - 0.5 * np.log(lam) - (2.0 / 3.0) * log_eps


def _log_lambertw(log_z):
    r""":math:`\log W_0(e^{L})` for real :math:`L` (arrays), valid where :math:`e^L` over- or underflows.

    :math:`L\le700`: ``scipy.special.lambertw``, then for :math:`W<10^{-300}` (:math:`z` tiny)
    :math:`\log W=L-W\approx L`; :math:`L>700`: Newton on :math:`w+\log w=L` from :math:`L-\log L`
    (quadratic convergence, 6 steps reach 1 ulp).
    """
    L = np.asarray(log_z, dtype=np.float64)
    out = np.empty(L.shape)
    big = L > 700.0
    with np.errstate(under="ignore"):
        z = np.exp(np.where(big, 0.0, L))
        w = special.lambertw(z).real
    tiny = ~big & (w < 1e-300)
    out[~big & ~tiny] = np.log(w[~big & ~tiny])
    out[tiny] = L[tiny]  # W(z) = z e^{-W} = z (1 - z + ...), z < 1e-300
    if np.any(big):
        Lb = L[big]
        wb = Lb - np.log(Lb)
        for _ in range(8):
            wb = wb - (wb + np.log(wb) - Lb) / (1.0 + 1.0 / wb)
        out[big] = np.log(wb)
    return out


def _lambertw_time(log_pre, log_w):
    """exp(log_pre + log_w): the time 3 W/(8 eta0 a), over/underflowing only where the value does."""
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(log_pre + log_w)


def _log_pre(et, log_a):
    return math.log(3.0 / 8.0) - np.log(et) - log_a


@cites("levi:eq23")
@V.broadcasting()
def t_star_train_lambertw(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Train crossing time from eq. 21 solved exactly with the Lambert W function (paper eq. 23).

    .. math::
        t^*_{\rm tr}\simeq\frac{3}{8\eta_0a}\,W_0\!\Big(\frac{2^{5/3}\,a}{3\pi^{1/3}\sqrt\lambda\,\epsilon^{2/3}}\Big),
        \qquad a=(1-\sqrt\lambda)^2

    (:math:`d_{\rm out}=1`; for a general level :math:`\epsilon\to4\mathcal L^*`).  Measured
    accuracy: within 2 % of :func:`t_star` for :math:`\epsilon\le10^{-2}`, :math:`\lambda\le0.95`.

    Parameters
    ----------
    lam : float or array_like
        :math:`0<\lambda<1`.
    eps : float or array_like
        :math:`\epsilon>0`.
    eta0 : float or array_like
        :math:`\eta_0>0`.
    level : float or array_like
        Accuracy level in (0, 1).

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eq. (23) (cube root simplified); spec ``levi:eq23``.
    """
    ll, le, et, log_a = _lambertw_args(lam, eps, eta0, level, "the Lambert-W time (eq. 23)")
    return V.scalar_or_array(_lambertw_time(_log_pre(et, log_a), _log_lambertw(_log_z(ll, le, log_a, False))))


@cites("levi:eq24")
@V.broadcasting()
def t_star_gen_lambertw(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Generalisation crossing time from eq. 10 solved with the Lambert W function (paper eq. 24, :math:`\eta\to\eta_0`).

    .. math::
        t^*_{\rm gen}\simeq\frac{3}{8\eta_0a}\,W_0\!\Big(\frac{2^{5/3}\,a^{1/3}}{3\pi^{1/3}\sqrt\lambda\,\epsilon^{2/3}}\Big)

    Overestimates the exact value (error from eq. 10): 7/4/2 % at :math:`\lambda=0.1`, 30/11/5 % at
    :math:`\lambda=0.9` for :math:`\epsilon=10^{-2},10^{-3},10^{-4}`.

    Parameters
    ----------
    lam : float or array_like
        :math:`0<\lambda<1`.
    eps : float or array_like
        :math:`\epsilon>0`.
    eta0 : float or array_like
        :math:`\eta_0>0`.
    level : float or array_like
        Accuracy level in (0, 1).

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eq. (24); spec ``levi:eq24``.
    """
    ll, le, et, log_a = _lambertw_args(lam, eps, eta0, level, "the Lambert-W time (eq. 24)")
    return V.scalar_or_array(_lambertw_time(_log_pre(et, log_a), _log_lambertw(_log_z(ll, le, log_a, True))))


@cites("levi:eq23", "levi:eq24")
@V.broadcasting()
def grok_time_lambertw(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Grokking time as the difference of the two Lambert-W crossing times (eqs. 23, 24).

    .. math:: \Delta t\simeq\frac{3}{8\eta_0a}\big[W_0(z_{\rm gen})-W_0(z_{\rm tr})\big]

    The best closed-form approximation (table T2): ≤ 15 % for :math:`\lambda\ge0.3`,
    :math:`\epsilon\le10^{-3}`; +37 % at :math:`\lambda=0.1`, :math:`\epsilon=10^{-3}`.

    Parameters
    ----------
    lam, eps, eta0, level
        As in :func:`t_star_gen_lambertw`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eqs. (23), (24).
    """
    ll, le, et, log_a = _lambertw_args(lam, eps, eta0, level, "the Lambert-W time (eqs. 23-24)")
    log_wt = _log_lambertw(_log_z(ll, le, log_a, False))
    D = -(2.0 / 3.0) * log_a  # log(z_gen/z_tr) = -(2/3) log a
    # delta = W(z_gen) - W(z_tr) > 0 as the root of delta + log(1 + delta/W_tr) = log(z_gen/z_tr)
    # = -(4/3) log1p(-sqrt(lam)) (from W e^W = z), not as a difference: W(z_gen) and W(z_tr) agree to
    # ~sqrt(lam) relative, so the difference kept no digit below lam ~ 1e-32.
    with np.errstate(under="ignore", over="ignore"):
        wt = np.exp(log_wt)
        # lower bound (log1p(x) <= x): D W/(1+W) = D/(1 + 1/W); the root function is concave, Newton rises
        delta = D / (1.0 + np.exp(-log_wt))
        for _ in range(60):
            ratio = np.exp(np.log(delta) - log_wt)  # delta/W, which over/underflows only at z near 0
            term = np.where(ratio < 1e300, np.log1p(np.minimum(ratio, 1e300)), np.log(delta) - log_wt)
            g = delta + term - D
            step = -g / (1.0 + 1.0 / (wt + delta))
            delta = delta + step
            if np.all(np.abs(step) <= 4e-16 * delta):
                break
    return V.scalar_or_array(_lambertw_time(_log_pre(et, log_a), np.log(delta)))


@cites("levi:eq25")
@V.broadcasting()
def grok_time_eq25(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Small-:math:`\epsilon` expansion of the Lambert-W difference (paper eq. 25); NaN where undefined.

    .. math::
        \Delta t\simeq-\frac{\log(1-\sqrt\lambda)}{2\eta_0a}+\frac{3}{8\eta_0a}
        \log\!\Big(1+\frac{\log a^{2/3}}{\log z_{\rm gen}}\Big),\qquad
        z_{\rm gen}=\frac{2(2-2\sqrt\lambda)^{2/3}}{3\pi^{1/3}\sqrt\lambda\,\epsilon^{2/3}}

    (from :math:`W(z)\approx\log z-\log\log z`).  The expression needs :math:`\log z_{\rm tr}>0`
    (:math:`z_{\rm tr}=a^{2/3}z_{\rm gen}`); where :math:`z_{\rm tr}\le1` its logarithm is undefined
    and ``nan`` is returned (e.g. :math:`\lambda=0.7,\epsilon=10^{-2}`; :math:`\lambda=0.9,\epsilon\ge10^{-4}`).

    Parameters
    ----------
    lam, eps, eta0, level
        As in :func:`t_star_gen_lambertw`.

    Returns
    -------
    float or ndarray
        :math:`\Delta t` or ``nan``.

    References
    ----------
    Levi et al., eq. (25) (:math:`\eta\to\eta_0`); spec ``levi:eq25``.
    """
    ll, le, et, log_a = _lambertw_args(lam, eps, eta0, level, "eq. 25")
    log_zg = _log_z(ll, le, log_a, True)
    log_a23 = (2.0 / 3.0) * log_a
    ok = (log_zg > 0) & (log_zg + log_a23 > 0)
    x = np.where(ok, log_a23 / np.where(ok, log_zg, 1.0), 0.0)
    # (1/(8 eta0 a)) [-4 log1p(-sqrt(lam)) + 3 log1p(x)]: the bracket first (1/(eta0 a) overflows near
    # lam = 1, where the two terms have opposite signs: inf - inf gave NaN), log1p for small lam
    bracket = -2.0 * log_a + 3.0 * np.log1p(x)
    with np.errstate(over="ignore", under="ignore"):
        val = bracket / (8.0 * et) / rmt._gap(ll)
    return V.scalar_or_array(np.where(ok, val, np.nan))


@cites("levi:eq11")
@V.broadcasting()
def grok_time_asymptotic(lam, eta0):
    r"""The :math:`\epsilon\to0` limit of the grokking time (paper eq. 11).

    .. math:: \Delta t_{\rm grok}\xrightarrow[\epsilon\to0]{}-\frac{\log(1-\sqrt\lambda)}{2\eta_0(1-\sqrt\lambda)^2}

    Correct limit, slowly approached (error :math:`\sim1/\log(1/\epsilon)`): vs the exact value it is
    +62…+295 % too large at :math:`\epsilon=10^{-3}` (λ = 0.3…0.95) and still +10–15 % at
    :math:`\epsilon=10^{-12}` (table T2).

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
    Levi et al., eq. (11).
    """
    ll = _lam_below_one(lam, "eq. 11")
    et = _eta0(eta0)
    with np.errstate(over="ignore", under="ignore"):
        return V.scalar_or_array(-_log1m_sqrt(ll) / (2.0 * et) / rmt._gap(ll))


@cites("levi:eq11-lim")
@V.broadcasting()
def grok_time_near_one(lam, eta0):
    r"""The paper's :math:`\lambda\to1^-` form of eq. 11 (valid only with :math:`\epsilon\to0` taken first).

    .. math:: \Delta t_{\rm grok}\approx\frac{1}{\eta_0(1-\lambda)^2}\log\frac{4}{(1-\lambda)^2}

    At fixed :math:`\epsilon` the true grokking time stays finite at :math:`\lambda=1` (see
    :func:`t_star_gen_critical`).

    Parameters
    ----------
    lam, eta0
        As in :func:`grok_time_asymptotic`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eq. (11), λ→1 discussion; spec ``levi:eq11-lim``.
    """
    ll = _lam_below_one(lam, "the lam -> 1 form of eq. 11")
    et = _eta0(eta0)
    with np.errstate(over="ignore", under="ignore"):
        return V.scalar_or_array((math.log(4.0) - 2.0 * np.log1p(-ll)) / et / (1.0 - ll) ** 2)


@cites("levi:eq11-lim")
@V.broadcasting()
def t_star_gen_critical(eps, eta0, *, level=ERF_SQRT2):
    r"""Generalisation crossing time at :math:`\lambda=1` (finite at fixed :math:`\epsilon`; erratum levi-15).

    .. math::
        t^*_{\rm gen}(\lambda=1)\approx\frac{1}{4\pi\eta_0\mathcal L^{*2}}=\frac{4}{\pi\eta_0\epsilon^2}
        \quad(\mathcal L^*=\epsilon/4)

    from :math:`\mathcal L_{\rm gen}(t)\sim1/\sqrt{4\pi\eta_0t}` at :math:`\lambda=1`, :math:`d_{\rm out}=1`.

    Parameters
    ----------
    eps : float or array_like
        :math:`\epsilon>0`.
    eta0 : float or array_like
        :math:`\eta_0>0`.
    level : float or array_like
        Accuracy level in (0, 1).

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``levi:eq11-lim`` (Levi et al. §3.1.3).
    """
    ee = _eps(eps)
    et = _eta0(eta0)
    lv = _level(level)
    log_ls = _broadcast_apply(lambda e, l_: _log_lstar(e, 1.0, l_), ee, lv)
    with np.errstate(over="ignore", under="ignore"):  # in logs: L*^2 underflows at eps ~ 1e-160
        return V.scalar_or_array(np.exp(-math.log(4.0 * math.pi) - np.log(et) - 2.0 * log_ls))


class DoutMax(NamedTuple):
    """Result of :func:`dout_max`."""

    d_out_star: float
    r"""output dimension :math:`d_{\rm out}^*` that maximises :math:`\Delta t`."""
    dt_max: float
    r"""the maximal grokking time :math:`\Delta t(d_{\rm out}^*)`."""


@cites("levi:dout-max", "levi:eq12-loss")
def dout_max(lam, eps, eta0, *, level=0.95):
    r"""Output dimension that maximises the grokking time, and the maximum.

    .. math:: d^{\max}_{\rm out}=\arg\max_{d_{\rm out}\ge1}\Delta t_{\rm grok}(\lambda,\epsilon,\eta_0,d_{\rm out})

    :math:`d_{\rm out}` is treated as continuous.  A coarse scan of 25 points in
    :math:`\log d_{\rm out}\in[0,\log(10/\epsilon)]` locates the maximum (guarding against the flat
    :math:`\Delta t=0` region at large :math:`d_{\rm out}`), then a bounded scalar minimisation of
    :math:`-\Delta t` on the neighbouring cells refines it.  Reference: :math:`\epsilon=10^{-3}`,
    level 0.95, :math:`\eta_0=0.01`: 234 (λ=0.3, Δt=3772), 147 (0.5, 8250), 83 (0.7, 18358), 26 (0.9, 72025).

    Parameters
    ----------
    lam : float
        :math:`0<\lambda\le1` (for :math:`\lambda>1` small :math:`d_{\rm out}` never grok, so the maximum is infinite).
    eps : float
        :math:`\epsilon>0`.
    eta0 : float
        :math:`\eta_0>0`.
    level : float
        Accuracy level in (0, 1); default 0.95 (the paper's Fig. 2).

    Returns
    -------
    (d_out_star, dt_max) : tuple of float
        A :class:`DoutMax` named tuple (``d_out_star``, ``dt_max``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``levi:dout-max`` (Levi et al. §3.2, Fig. 2).
    """
    la = V.scalar(V.positive(lam, "lam"), "lam")
    if la > 1.0:
        raise V.DomainError(f"lam must be in (0, 1] for dout_max (the maximum is infinite for lam > 1) (got {la!r})")
    e = V.scalar(_eps(eps), "eps")
    et = V.scalar(_eta0(eta0), "eta0")
    lv = V.scalar(_level(level), "level")

    def dt(u: float) -> float:
        return _grok_time_scalar(la, e, et, math.exp(u), 0.0, lv, 1.0, False)

    hi = math.log(10.0 / e)
    if hi <= 0.0:
        return DoutMax(1.0, dt(0.0))
    grid = np.linspace(0.0, hi, 25)
    vals = np.array([dt(u) for u in grid])
    k = int(np.argmax(vals))
    lo_u, hi_u = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = optimize.minimize_scalar(lambda u: -dt(u), bounds=(lo_u, hi_u), method="bounded",
                                   options={"xatol": 1e-7})
    if -res.fun < vals[k]:  # pragma: no cover - the refinement never loses to the grid
        return DoutMax(math.exp(grid[k]), float(vals[k]))
    return DoutMax(math.exp(float(res.x)), float(-res.fun))
