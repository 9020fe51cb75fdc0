"""Levi et al.: the paper's approximate grokking times (Lambert W, eq. 25, eq. 11, lambda -> 1, d_out max)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize, special

from .. import _floats as FL
from .. import _validate as V
from .. import rmt
from .._constants import ERF_SQRT2
from ..citations import cites
from ._conventions import _eps, _eta0, _lam_below_one, _level, _scalar_call
from ._crossing import _grok_time_scalar, _log_lstar


def _lambertw_args(lam, eps, eta0, level, what, *, floats=False):
    """``(lam, log_eps_eff, eta0, log_a, xp)``; eps_eff = 4 L*(eps, d_out = 1, level) in log space (it overflows
    at eps = 1e300, level = 1e-6), log_a = log (1 - sqrt(lam))^2 (see _log1m_sqrt).  With `floats`, a scalar
    call gets Python floats and ``xp = FL.SCALAR`` (the same engine on floats)."""
    sc = floats and _scalar_call(lam, eps, eta0, level)
    ll = _lam_below_one(lam, what, sc)
    ee = _eps(eps, sc)
    et = _eta0(eta0, sc)
    lv = _level(level, sc)
    xp = FL.SCALAR if sc else FL.ARRAY
    if not sc:
        ll, ee, et, lv = np.broadcast_arrays(ll, ee, et, lv)
    with xp.errstate(divide="ignore"):
        log_eps_eff = xp.where(lv == ERF_SQRT2, xp.log(ee),  # 2 eps: inf at 1.7e308
                               math.log(2.0) + xp.log(ee) - 2.0 * xp.log(xp.apply(special.erfinv, lv)))
    return ll, log_eps_eff, et, 2.0 * _log1m_sqrt(ll, xp), xp


def _log1m_sqrt(lam, xp=FL.ARRAY):
    r""":math:`\log(1-\sqrt\lambda)` for :math:`0<\lambda<1`: ``log1p(-sqrt(lam))`` below 1/4 (``log`` of
    :math:`(1-\sqrt\lambda)^2` is 0 in float below :math:`\lambda=10^{-32}`), and
    :math:`\log(1-\lambda)-\log(1+\sqrt\lambda)` above (the rounding of :math:`\sqrt\lambda` is most of
    :math:`1-\sqrt\lambda` at :math:`\lambda=1-10^{-16}`: 2 % error there)."""
    if xp is FL.ARRAY:
        lam = np.asarray(lam, dtype=np.float64)
    r = xp.sqrt(lam)
    return xp.where(lam < 0.25, xp.log1p(-r), xp.log1p(-lam) - xp.log1p(r))


_LOG_Z0 = (5.0 / 3.0) * math.log(2.0) - math.log(3.0) - math.log(math.pi) / 3.0  # log(2^(5/3)/(3 pi^(1/3)))


def _log_z(lam, log_eps, log_a, gen, xp=FL.ARRAY):
    """log z_tr (gen=False: a) or log z_gen (a^(1/3)) of eqs. 23-24 (log_a = log (1 - sqrt(lam))^2)."""
    return _LOG_Z0 + (log_a / 3.0 if gen else log_a) - 0.5 * xp.log(lam) - (2.0 / 3.0) * log_eps


def _lambertw_real(z):
    return special.lambertw(z).real


def _log_lambertw(log_z, xp=FL.ARRAY):
    r""":math:`\log W_0(e^{L})` for real :math:`L` (arrays, or a float with ``xp = FL.SCALAR``), valid where
    :math:`e^L` over- or underflows.

    :math:`L\le700`: ``scipy.special.lambertw``, then for :math:`W<10^{-300}` (:math:`z` tiny)
    :math:`\log W=L-W\approx L`; :math:`L>700`: Newton on :math:`w+\log w=L` from :math:`L-\log L`
    (quadratic convergence, 6 steps reach 1 ulp).
    """
    if xp is FL.SCALAR:
        return _log_lambertw_big(log_z, xp) if log_z > 700.0 else _log_lambertw_small(log_z, xp)
    L = np.asarray(log_z, dtype=np.float64)
    out = np.empty(L.shape)
    big = L > 700.0
    out[~big] = _log_lambertw_small(L[~big], xp)
    if np.any(big):
        out[big] = _log_lambertw_big(L[big], xp)
    return out


def _log_lambertw_small(L, xp):
    with xp.errstate(under="ignore", divide="ignore"):
        w = xp.apply(_lambertw_real, xp.exp(L))
        return xp.where(w < 1e-300, L, xp.log(w))  # W(z) = z e^{-W} = z (1 - z + ...), z < 1e-300


def _log_lambertw_big(L, xp):
    w = L - xp.log(L)
    for _ in range(8):
        w = w - (w + xp.log(w) - L) / (1.0 + 1.0 / w)
    return xp.log(w)


def _lambertw_time(log_pre, log_w, xp=FL.ARRAY):
    """exp(log_pre + log_w): the time 3 W/(8 eta0 a), over/underflowing only where the value does."""
    with xp.errstate(over="ignore", under="ignore"):
        return xp.exp(log_pre + log_w)


def _log_pre(et, log_a, xp=FL.ARRAY):
    return math.log(3.0 / 8.0) - xp.log(et) - log_a


def _result(val, xp):
    """A Python float for a scalar call, else `V.scalar_or_array`."""
    return float(val) if xp is FL.SCALAR else V.scalar_or_array(val)


@cites("levi:eq23")
@V.broadcasting()
def t_star_train_lambertw(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Train crossing time from eq. 21 solved exactly with the Lambert W function (paper eq. 23).

    .. math::
        t^*_{\rm tr}\simeq\frac{3}{8\eta_0a}\,W_0\!\Big(\frac{2^{5/3}\,a}{3\pi^{1/3}\sqrt\lambda\,\epsilon^{2/3}}\Big),
        \qquad a=(1-\sqrt\lambda)^2

    In words: 3/(8η₀a) times the principal branch W₀ of the Lambert function at 2^(5/3)a/(3π^(1/3)√λ ε^(2/3)),
    with a = (1 − √λ)² (d_out = 1). Measured accuracy: within 2 % of the exact `t_star` for ε ≤ 10⁻² and λ ≤
    0.95.

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, with 0 < λ < 1 (the approximation needs 1 − √λ > 0).
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1. The paper's
        formulas are written for L* = ε/4; for another level ε is replaced by 4L*.

    Returns
    -------
    float or ndarray
        The approximate t*_tr in GD steps, the broadcast shape of the arguments.

    References
    ----------
    Levi et al., eq. (23) (cube root simplified); spec `levi:eq23`.
    """
    ll, le, et, log_a, xp = _lambertw_args(lam, eps, eta0, level, "the Lambert-W time (eq. 23)", floats=True)
    return _result(_lambertw_time(_log_pre(et, log_a, xp), _log_lambertw(_log_z(ll, le, log_a, False, xp), xp), xp), xp)


@cites("levi:eq24")
@V.broadcasting()
def t_star_gen_lambertw(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Generalisation crossing time from eq. 10 solved with the Lambert W function (paper eq. 24, η → η₀).

    .. math::
        t^*_{\rm gen}\simeq\frac{3}{8\eta_0a}\,W_0\!\Big(\frac{2^{5/3}\,a^{1/3}}{3\pi^{1/3}\sqrt\lambda\,\epsilon^{2/3}}\Big)

    In words: 3/(8η₀a) times W₀ at 2^(5/3)a^(1/3)/(3π^(1/3)√λ ε^(2/3)), a = (1 − √λ)² (d_out = 1). It
    overestimates the exact value (the error comes from eq. 10): 7/4/2 % at λ = 0.1 and 30/11/5 % at λ = 0.9
    for ε = 10⁻², 10⁻³, 10⁻⁴.

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, with 0 < λ < 1 (the approximation needs 1 − √λ > 0).
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1. The paper's
        formulas are written for L* = ε/4; for another level ε is replaced by 4L*.

    Returns
    -------
    float or ndarray
        The approximate t*_gen in GD steps, the broadcast shape of the arguments.

    References
    ----------
    Levi et al., eq. (24); spec `levi:eq24`.
    """
    ll, le, et, log_a, xp = _lambertw_args(lam, eps, eta0, level, "the Lambert-W time (eq. 24)", floats=True)
    return _result(_lambertw_time(_log_pre(et, log_a, xp), _log_lambertw(_log_z(ll, le, log_a, True, xp), xp), xp), xp)


@cites("levi:eq23", "levi:eq24")
@V.broadcasting()
def grok_time_lambertw(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Grokking time as the difference of the two Lambert-W crossing times (eqs. 23, 24).

    .. math:: \Delta t\simeq\frac{3}{8\eta_0a}\big[W_0(z_{\rm gen})-W_0(z_{\rm tr})\big]

    In words: `t_star_gen_lambertw` minus `t_star_train_lambertw`, computed as one root (W₀(z_gen) and
    W₀(z_tr) agree to about √λ relative, so their plain difference kept no digit below λ ≈ 10⁻³²). The best
    closed-form approximation of the paper (spec table T2): within 15 % of the exact `grok_time` for λ ≥ 0.3,
    ε ≤ 10⁻³; +37 % at λ = 0.1, ε = 10⁻³.

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, with 0 < λ < 1 (the approximation needs 1 − √λ > 0).
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1. The paper's
        formulas are written for L* = ε/4; for another level ε is replaced by 4L*.

    Returns
    -------
    float or ndarray
        The approximate Δt in GD steps, the broadcast shape of the arguments.

    References
    ----------
    Levi et al., eqs. (23), (24); spec `levi:eq23`, `levi:eq24`.
    """
    ll, le, et, log_a, xp = _lambertw_args(lam, eps, eta0, level, "the Lambert-W time (eqs. 23-24)", floats=True)
    log_wt = _log_lambertw(_log_z(ll, le, log_a, False, xp), xp)
    D = -(2.0 / 3.0) * log_a  # log(z_gen/z_tr) = -(2/3) log a
    # delta = W(z_gen) - W(z_tr) > 0 as the root of delta + log(1 + delta/W_tr) = log(z_gen/z_tr)
    # = -(4/3) log1p(-sqrt(lam)) (from W e^W = z), not as a difference: W(z_gen) and W(z_tr) agree to
    # ~sqrt(lam) relative, so the difference kept no digit below lam ~ 1e-32.
    with xp.errstate(under="ignore", over="ignore", divide="ignore"):
        wt = xp.exp(log_wt)
        # lower bound (log1p(x) <= x): D W/(1+W) = D/(1 + 1/W); the root function is concave, Newton rises
        delta = D / (1.0 + xp.exp(-log_wt))
        # each point stops at its own convergence (a point of an array call takes the steps of its scalar call:
        # one more step moved log delta by an ulp, 5.7e-14 of the time at lam ~ 1e-150)
        active = np.ones(np.shape(delta), dtype=bool) if xp is FL.ARRAY else True
        for _ in range(60):
            ratio = xp.exp(xp.log(delta) - log_wt)  # delta/W, which over/underflows only at z near 0
            term = xp.where(ratio < 1e300, xp.log1p(xp.minimum(ratio, 1e300)), xp.log(delta) - log_wt)
            g = delta + term - D
            step = -g / (1.0 + xp.reciprocal(wt + delta))
            delta = xp.where(active, delta + step, delta)
            active = xp.where(xp.abs(step) <= 4e-16 * delta, False, active)
            if not xp.any(active):
                break
    return _result(_lambertw_time(_log_pre(et, log_a, xp), xp.log(delta), xp), xp)


@cites("levi:eq25")
@V.broadcasting()
def grok_time_eq25(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Small-ε expansion of the Lambert-W difference (paper eq. 25); NaN where it is undefined.

    .. math::
        \Delta t\simeq-\frac{\log(1-\sqrt\lambda)}{2\eta_0a}+\frac{3}{8\eta_0a}
        \log\!\Big(1+\frac{\log a^{2/3}}{\log z_{\rm gen}}\Big),\qquad
        z_{\rm gen}=\frac{2(2-2\sqrt\lambda)^{2/3}}{3\pi^{1/3}\sqrt\lambda\,\epsilon^{2/3}}

    In words: eq. 11's −log(1 − √λ)/(2η₀a) plus a correction 3/(8η₀a)·log(1 + log a^(2/3)/log z_gen), from
    W(z) ≈ log z − log log z. The expression needs log z_tr > 0 (z_tr = a^(2/3)z_gen); where z_tr ≤ 1 its
    logarithm is undefined and NaN is returned (e.g. λ = 0.7, ε = 10⁻²; λ = 0.9, ε ≥ 10⁻⁴).

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, with 0 < λ < 1 (the approximation needs 1 − √λ > 0).
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1. The paper's
        formulas are written for L* = ε/4; for another level ε is replaced by 4L*.

    Returns
    -------
    float or ndarray
        The approximate Δt in GD steps, or NaN where eq. 25 is undefined; the broadcast shape of the
        arguments.

    References
    ----------
    Levi et al., eq. (25) (η → η₀); spec `levi:eq25`.
    """
    ll, le, et, log_a, _ = _lambertw_args(lam, eps, eta0, level, "eq. 25")
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
    r"""The ε → 0 limit of the grokking time (paper eq. 11).

    .. math:: \Delta t_{\rm grok}\xrightarrow[\epsilon\to0]{}-\frac{\log(1-\sqrt\lambda)}{2\eta_0(1-\sqrt\lambda)^2}

    In words: −log(1 − √λ)/(2η₀(1 − √λ)²), independent of ε and of the level. The limit is correct but slowly
    approached (error ~ 1/log(1/ε)): against the exact `grok_time` it is +62 % to +295 % too large at ε = 10⁻³
    (λ = 0.3 to 0.95) and still +10–15 % at ε = 10⁻¹² (spec table T2).

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, with 0 < λ < 1 (the approximation needs 1 − √λ > 0).
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.

    Returns
    -------
    float or ndarray
        The limiting Δt in GD steps, the broadcast shape of `lam` and `eta0`.

    References
    ----------
    Levi et al., eq. (11); spec `levi:eq11`.
    """
    ll = _lam_below_one(lam, "eq. 11")
    et = _eta0(eta0)
    with np.errstate(over="ignore", under="ignore"):
        return V.scalar_or_array(-_log1m_sqrt(ll) / (2.0 * et) / rmt._gap(ll))


@cites("levi:eq11-lim")
@V.broadcasting()
def grok_time_near_one(lam, eta0):
    r"""The paper's λ → 1⁻ form of eq. 11 (valid only with the limit ε → 0 taken first).

    .. math:: \Delta t_{\rm grok}\approx\frac{1}{\eta_0(1-\lambda)^2}\log\frac{4}{(1-\lambda)^2}

    In words: log(4/(1 − λ)²)/(η₀(1 − λ)²). At fixed ε the true grokking time stays finite at λ = 1 (see
    `t_star_gen_critical`).

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, with 0 < λ < 1 (the approximation needs 1 − √λ > 0).
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.

    Returns
    -------
    float or ndarray
        The approximate Δt in GD steps, the broadcast shape of `lam` and `eta0`.

    References
    ----------
    Levi et al., eq. (11) and its λ → 1 discussion; spec `levi:eq11-lim`.
    """
    ll = _lam_below_one(lam, "the lam -> 1 form of eq. 11")
    et = _eta0(eta0)
    with np.errstate(over="ignore", under="ignore"):
        return V.scalar_or_array((math.log(4.0) - 2.0 * np.log1p(-ll)) / et / (1.0 - ll) ** 2)


@cites("levi:eq11-lim")
@V.broadcasting()
def t_star_gen_critical(eps, eta0, *, level=ERF_SQRT2):
    r"""Generalisation crossing time at λ = 1, finite at fixed ε (erratum levi-15).

    .. math::
        t^*_{\rm gen}(\lambda=1)\approx\frac{1}{4\pi\eta_0\mathcal L^{*2}}=\frac{4}{\pi\eta_0\epsilon^2}
        \quad(\mathcal L^*=\epsilon/4)

    In words: 1/(4πη₀L*²), which is 4/(πη₀ε²) at the default level; it follows from L_gen(t) ~ 1/√(4πη₀t) at λ
    = 1, d_out = 1.

    Parameters
    ----------
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1.

    Returns
    -------
    float or ndarray
        The approximate t*_gen at λ = 1 in GD steps, the broadcast shape of the arguments.

    References
    ----------
    Levi et al., §3.1.3; spec `levi:eq11-lim`.
    """
    ee = _eps(eps)
    et = _eta0(eta0)
    lv = _level(level)
    log_ls = _log_lstar(ee, 1.0, lv)  # vectorised (broadcasts eps and level)
    with np.errstate(over="ignore", under="ignore"):  # in logs: L*^2 underflows at eps ~ 1e-160
        return V.scalar_or_array(np.exp(-math.log(4.0 * math.pi) - np.log(et) - 2.0 * log_ls))


class DoutMax(NamedTuple):
    r"""Result of `dout_max`: `d_out_star`, the maximising output dimension, and `dt_max`, the maximal grokking time."""

    d_out_star: float
    """The output dimension d_out* (real-valued) that maximises the grokking time Δt."""
    dt_max: float
    """The maximal grokking time Δt(d_out*) in GD steps."""


@cites("levi:dout-max", "levi:eq12-loss")
def dout_max(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Output dimension that maximises the grokking time, and the maximum.

    .. math:: d^{\max}_{\rm out}=\arg\max_{d_{\rm out}\ge1}\Delta t_{\rm grok}(\lambda,\epsilon,\eta_0,d_{\rm out})

    In words: the d_out (treated as continuous) at which the exact `grok_time` (γ = 0, gradient flow) is
    largest. A coarse scan of 25 points in log d_out over [0, log(10/ε)] locates the maximum (guarding against
    the flat Δt = 0 region at large d_out), then a bounded scalar minimisation of −Δt on the neighbouring
    cells refines it. At the same `level`, the returned `dt_max` is `grok_time` at `d_out_star`.

    Reference values (ε = 10⁻³, η₀ = 0.01, level 0.95 as in the paper's Fig. 2): d_out* = 234 (λ = 0.3, Δt =
    3772), 147 (0.5, 8250), 83 (0.7, 18358), 26 (0.9, 72025).

    Parameters
    ----------
    lam : float
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, with 0 < λ ≤ 1 (for λ > 1 small d_out never grok, so the maximum is
        infinite); a scalar.
    eps : float
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0; a scalar.
    eta0 : float
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    level : float
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1. Pass 0.95 for the
        paper's Fig. 2 (the reference values above).

    Returns
    -------
    (d_out_star, dt_max) : tuple of float
        A `DoutMax` named tuple: the maximising output dimension d_out* (real) and the maximal grokking
        time Δt(d_out*) in GD steps; it unpacks like a plain tuple.

    References
    ----------
    Levi et al., §3.2, Fig. 2; spec `levi:dout-max`, `levi:eq12-loss`.
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
