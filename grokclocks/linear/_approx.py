"""Levi et al.: the paper's approximate grokking times (Lambert W, eq. 25, eq. 11, lambda -> 1, d_out max)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import special

from .. import _floats as FL
from .. import _pointwise as P
from .. import _validate as V
from .. import rmt
from .._constants import ERF_SQRT2
from ..citations import cites
from ._conventions import _eps, _eta0, _lam_below_one, _level, _scalar_call
from ._crossing import _log_lstar
from ._crossing._times import _grok_time_flat


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
    r""":math:`\log(1-\sqrt\lambda)` for :math:`0<\lambda<1` as :math:`\log(1-\lambda)-\log(1+\sqrt\lambda)`
    (``log1p(-lam) - log1p(sqrt(lam))``): two logarithms of the same sign, no cancellation at either end
    (``log`` of :math:`(1-\sqrt\lambda)^2` is 0 in float below :math:`\lambda=10^{-32}`, and the rounding of
    :math:`\sqrt\lambda` is most of :math:`1-\sqrt\lambda` at :math:`\lambda=1-10^{-16}`: 2 % error there).
    Measured: `grok_time_asymptotic` within 4.4e-16 (small λ) and 6.7e-16 (λ ≥ 1/4) of mpmath on 4,000 points
    of [1e-300, 1 - 1e-16], the same as with ``log1p(-sqrt(lam))`` below 1/4 (the form before, which cost
    a third logarithm on arrays that mix the two).  On arrays the engine's own temporaries, in place."""
    if xp is not FL.ARRAY:
        return xp.log1p(-lam) - xp.log1p(xp.sqrt(lam))
    lam = np.asarray(lam, dtype=np.float64)
    out = np.log1p(np.negative(lam))
    r = np.sqrt(lam)
    return np.subtract(out, np.log1p(r, out=P.into(r)), out=P.into(out, r))


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
        # -log(1 - sqrt(lam)) / (2 eta0) as log(1 - sqrt(lam)) / (-2 eta0) (the same bits), in place on arrays
        t = _log1m_sqrt(ll)
        t = np.divide(t, -2.0 * et, out=P.into(t, et))
        return V.scalar_or_array(np.divide(t, rmt._gap(ll), out=P.into(t)))


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
    # L* is proportional to eps at d_out = 1 (log L* = log eps + log L*(1, level)): t = (h/eps)^2 with h =
    # exp(c/2) = 1/(sqrt(4 pi eta0) L*(1, level)), c = -log(4 pi) - log eta0 - 2 log L*(1, level) (numbers for a
    # number eta0 and level: an array of eps sees one division and one square, in place).  (h/eps)^2 over- or
    # underflows only where t does, and its error is that of c plus three roundings (the form exp(c - 2 log eps)
    # added the rounding of 2 log eps and of the sum); where h itself leaves the double range (|c|/2 > 700:
    # eta0 or the level at the ends of the range), t = exp(c - 2 log eps) on those points.
    c = -math.log(4.0 * math.pi) - np.log(et) - 2.0 * _log_lstar(1.0, 1.0, lv)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        q = np.divide(np.exp(0.5 * c), ee)
        t = P.square(q)
        far = np.abs(c) > 1400.0
        if P.any_of(far):
            t = P.patch(t, far, lambda cc, e: np.exp(cc - 2.0 * np.log(e)), c, ee)
    return V.scalar_or_array(t)


def _fminbound_lockstep(f, lo, hi, *, xatol: float, maxfun: int = 500):
    r"""``(x, f(x))``: the minima of `f` on ``[lo, hi]`` for all points at once, by Brent's bounded method
    (golden section and parabolic steps; the algorithm of ``scipy.optimize.minimize_scalar(method="bounded")``,
    step for step) run in lockstep.

    ``f(x, idx)`` evaluates at ``x`` (1-d) for the points ``idx``.  Each point stops at its own convergence
    (``|x - m| <= 2 tol - (b - a)/2``, ``tol = sqrt(2.2e-16)|x| + xatol/3``) or after `maxfun` evaluations and
    iterates on its own numbers only, so an array call gives the scalar calls' minima bit for bit.
    """
    sqrt_eps = math.sqrt(2.2e-16)
    golden_mean = 0.5 * (3.0 - math.sqrt(5.0))
    a = np.array(lo, dtype=np.float64, copy=True).reshape(-1)
    b = np.array(hi, dtype=np.float64, copy=True).reshape(-1)
    fulc = a + golden_mean * (b - a)
    nfc, xf = fulc.copy(), fulc.copy()
    rat = np.zeros(a.size)
    e = np.zeros(a.size)
    fx = np.asarray(f(xf, np.arange(a.size)), dtype=np.float64).copy()
    ffulc, fnfc = fx.copy(), fx.copy()
    act = np.arange(a.size)
    for _ in range(maxfun - 1):
        A, B, X, FX = a[act], b[act], xf[act], fx[act]
        xm = 0.5 * (A + B)
        tol1 = sqrt_eps * np.abs(X) + xatol / 3.0
        tol2 = 2.0 * tol1
        go = np.abs(X - xm) > tol2 - 0.5 * (B - A)
        act, A, B, X, FX, xm, tol1, tol2 = (v[go] for v in (act, A, B, X, FX, xm, tol1, tol2))
        if act.size == 0:
            break
        NF, FNF, FU_, FFU, E, RAT = nfc[act], fnfc[act], fulc[act], ffulc[act], e[act], rat[act]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            # the parabola through the three best points
            para = np.abs(E) > tol1
            r = (X - NF) * (FX - FFU)
            q = (X - FU_) * (FX - FNF)
            p = (X - FU_) * q - (X - NF) * r
            q = 2.0 * (q - r)
            p = np.where(q > 0.0, -p, p)
            q = np.abs(q)
            ok = para & (np.abs(p) < np.abs(0.5 * q * E)) & (p > q * (A - X)) & (p < q * (B - X))
            step = np.where(ok, p / np.where(ok, q, 1.0), 0.0)
            near = ((X + step - A) < tol2) | ((B - (X + step)) < tol2)
            si = np.sign(xm - X) + ((xm - X) == 0)
            step = np.where(ok & near, tol1 * si, step)
            # else a golden-section step into the larger part
            e_golden = np.where(X >= xm, A - X, B - X)
            E = np.where(ok, RAT, e_golden)
            RAT = np.where(ok, step, golden_mean * e_golden)
        si = np.sign(RAT) + (RAT == 0)
        x = X + si * np.maximum(np.abs(RAT), tol1)
        fu = np.asarray(f(x, act), dtype=np.float64)
        better = fu <= FX
        a[act] = np.where(better, np.where(x >= X, X, A), np.where(x < X, x, A))
        b[act] = np.where(better, np.where(x >= X, B, X), np.where(x < X, B, x))
        second = ~better & ((fu <= FNF) | (NF == X))
        third = ~better & ~second & ((fu <= FFU) | (FU_ == X) | (FU_ == NF))
        fulc[act] = np.where(better | second, NF, np.where(third, x, FU_))
        ffulc[act] = np.where(better | second, FNF, np.where(third, fu, FFU))
        nfc[act] = np.where(better, X, np.where(second, x, NF))
        fnfc[act] = np.where(better, FX, np.where(second, fu, FNF))
        xf[act] = np.where(better, x, X)
        fx[act] = np.where(better, fu, FX)
        e[act], rat[act] = E, RAT
    return xf, fx


class DoutMax(NamedTuple):
    r"""Result of `dout_max`: `d_out_star`, the maximising output dimension, and `dt_max`, the maximal grokking time."""

    d_out_star: float | np.ndarray
    """The output dimension d_out* (real-valued) that maximises the grokking time Δt."""
    dt_max: float | np.ndarray
    """The maximal grokking time Δt(d_out*) in GD steps."""


_DOUT_SCAN = 25  # points of the coarse scan in log d_out
_DOUT_BLOCK = 1024  # points per block of dout_max (25 x 1024 grokking times per engine call)
_EPS_MIN_DOUT = 10.0 / float(np.finfo(np.float64).max)  # 10/eps, the top of the scan in d_out, stays a double


def _grok_time_in_log_dout(lam, eps, eta0, level, u):
    r"""The exact grokking time (γ = 0, gradient flow, α = 1) at the real output dimension d = e^u, flat arrays.

    Time enters the losses only through s = 4η₀t/d and d·L depends only on s, so the crossing at (ε, η₀, d,
    ℓ) is the crossing at d = 1 of the rescaled η₀/d and the threshold d·L*(ε, d, ℓ), i.e. ε_eff = 4d·L* at
    the level erf(√2) (where L* = ε/4 at d = 1): one call of the grokking-time engine for every point and
    every d at once (`_log_lstar` with an array of d).
    """
    d = np.exp(u)
    log_ls = _log_lstar(eps, d, level)
    with np.errstate(over="ignore", under="ignore"):
        eps_eff = np.exp(math.log(4.0) + np.log(d) + log_ls)
        eta_eff = eta0 / d
    ones = np.ones(d.shape)
    return _grok_time_flat(lam, eps_eff, eta_eff, 1.0, np.zeros(d.shape), np.full(d.shape, ERF_SQRT2), ones, False)


def _dout_max_flat(lam, eps, eta0, level):
    """`_dout_max_search`; a `DomainError` of the grokking-time engine (a crossing time beyond the double range)
    is raised again naming the point's own arguments (the engine's message names the rescaled ε and η₀)."""
    try:
        return _dout_max_search(lam, eps, eta0, level)
    except V.DomainError as err:
        bad = 0
        for i in range(lam.size):  # the error path only: the first point whose search fails alone
            try:
                _dout_max_search(*(v[i:i + 1] for v in (lam, eps, eta0, level)))
            except V.DomainError:
                bad = i
                break
        raise V.DomainError(
            f"dout_max: a grokking time of the search over d_out in [1, 10/eps] leaves the float64 range at "
            f"lam={float(lam[bad])!r}, eps={float(eps[bad])!r}, eta0={float(eta0[bad])!r}, "
            f"level={float(level[bad])!r} (at real d_out the engine works with eps_eff = 4 d_out L* and "
            f"eta0/d_out: {err})") from err


def _dout_max_search(lam, eps, eta0, level):
    """(d_out*, Δt_max) for flat validated arrays: the 25-point scan for all points at once, then the
    bounded Brent refinement of every point in lockstep (`_fminbound_lockstep`)."""
    n = lam.size
    hi = math.log(10.0) - np.log(eps)  # log(10/eps): 10/eps overflowed below eps = 5.6e-308
    scan = hi > 0.0  # eps >= 10: every d_out >= 1 has L(0) <= L*; the answer is d_out = 1
    k_idx = np.arange(_DOUT_SCAN, dtype=np.float64)
    # np.linspace(0, hi, 25) of each point: k (hi / 24), the last node hi itself
    grid = k_idx[None, :] * (np.where(scan, hi, 0.0) / (_DOUT_SCAN - 1))[:, None]
    grid[:, -1] = np.where(scan, hi, 0.0)
    rep = lambda v: np.repeat(v, _DOUT_SCAN)
    vals = _grok_time_in_log_dout(rep(lam), rep(eps), rep(eta0), rep(level), grid.reshape(-1)).reshape(n, _DOUT_SCAN)
    k = np.argmax(vals, axis=1)
    rows = np.arange(n)
    lo_u = grid[rows, np.maximum(k - 1, 0)]
    hi_u = grid[rows, np.minimum(k + 1, _DOUT_SCAN - 1)]
    d_star, dt = np.ones(n), vals[:, 0].copy()
    s = np.flatnonzero(scan)
    if s.size:
        u, neg = _fminbound_lockstep(
            lambda x, idx: -_grok_time_in_log_dout(lam[s[idx]], eps[s[idx]], eta0[s[idx]], level[s[idx]], x),
            lo_u[s], hi_u[s], xatol=1e-7)
        grid_best = vals[s, k[s]]
        lost = -neg < grid_best  # never seen: the refinement never loses to the grid
        d_star[s] = np.exp(np.where(lost, grid[s, k[s]], u))
        dt[s] = np.where(lost, grid_best, -neg)
    return d_star, dt


@cites("levi:dout-max", "levi:eq12-loss")
@V.broadcasting()
def dout_max(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Output dimension that maximises the grokking time, and the maximum.

    .. math:: d^{\max}_{\rm out}=\arg\max_{d_{\rm out}\ge1}\Delta t_{\rm grok}(\lambda,\epsilon,\eta_0,d_{\rm out})

    In words: the d_out (treated as continuous) at which the exact `grok_time` (γ = 0, gradient flow) is
    largest. A coarse scan of 25 points in log d_out over [0, log(10/ε)] locates the maximum (guarding against
    the flat Δt = 0 region at large d_out), then Brent's bounded minimisation of −Δt on the neighbouring cells
    refines it (absolute tolerance 10⁻⁷ in log d_out).  The arguments broadcast together; the scan of every
    point is one call of the grokking-time engine, and the refinement runs for all points in lockstep, each
    on its own numbers (an array call gives the scalar calls' values).  At the same `level`, the returned
    `dt_max` is `grok_time` at `d_out_star`.

    Reference values (ε = 10⁻³, η₀ = 0.01, level 0.95 as in the paper's Fig. 2): d_out* = 234 (λ = 0.3, Δt =
    3772), 147 (0.5, 8250), 83 (0.7, 18358), 26 (0.9, 72025).

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, with 0 < λ ≤ 1 (for λ > 1 small d_out never grok, so the maximum is
        infinite).
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε ≥ 10/1.8·10³⁰⁸ ≈ 5.6·10⁻³⁰⁸ (the scan reaches d_out = 10/ε).
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1. Pass 0.95 for the
        paper's Fig. 2 (the reference values above).

    Returns
    -------
    (d_out_star, dt_max) : tuple of float or ndarray
        A `DoutMax` named tuple: the maximising output dimension d_out* (real) and the maximal grokking
        time Δt(d_out*) in GD steps, each of the broadcast shape of the arguments (Python floats for a
        scalar call); it unpacks like a plain tuple.

    Raises
    ------
    DomainError
        For invalid arguments (λ > 1 included), ε below 5.6·10⁻³⁰⁸, or where a crossing time of the search
        leaves the double range (named with the point's arguments; e.g. ε = 10⁻³⁰⁷, η₀ = 10⁻³).

    References
    ----------
    Levi et al., §3.2, Fig. 2; spec `levi:dout-max`, `levi:eq12-loss`.
    """
    la = V.positive(lam, "lam")
    if np.any(la > 1.0):
        bad = float(np.max(la))
        raise V.DomainError(f"lam must be in (0, 1] for dout_max (the maximum is infinite for lam > 1) (got {bad!r})")
    ee = _eps(eps)
    if P.low(ee) < _EPS_MIN_DOUT:
        raise V.DomainError(f"eps must be >= {_EPS_MIN_DOUT:.3g} for dout_max (the search over d_out reaches 10/eps, "
                            f"beyond the double range) (got {P.low(ee)!r})")
    shape, flat = V.broadcast_flat(la, ee, _eta0(eta0), _level(level))
    d_star, dt = FL.blockwise(_dout_max_flat, (math.prod(shape),), *flat, block=_DOUT_BLOCK)
    return DoutMax(V.scalar_or_array(d_star.reshape(shape)), V.scalar_or_array(dt.reshape(shape)))
