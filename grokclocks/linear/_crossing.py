"""Levi et al.: accuracy from loss, the loss threshold L*, exact crossing times and the grokking time."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import optimize, special

from .. import _mpgrid, rmt
from .. import _validate as V
from .._constants import ERF_SQRT2
from ..citations import cites
from ._conventions import (
    _broadcast_apply,
    _d_out,
    _eps,
    _eta0,
    _flag,
    _FLOAT_MAX,
    _flow_time,
    _gd_time,
    _gamma_paper,
    _init_scale,
    _lam,
    _level,
    _ROOT_RTOL,
    _T_MAX,
    _which,
)
from ._losses import _log_c, _log_loss_inf, _log_loss_kernel


@cites("levi:eq9", "levi:eq12-acc", "levi:conv-acc")
@V.broadcasting()
def accuracy_from_loss(L, eps, d_out=1):
    r"""Fraction of samples whose squared error is below ε, for Gaussian errors of loss L.

    .. math::
        \mathcal A=P\Big(\frac{d_{\rm out}}2,\frac{d_{\rm out}\epsilon}{2\mathcal L}\Big)
        =1-\frac{\Gamma(\frac{d_{\rm out}}2,\frac{d_{\rm out}\epsilon}{2\mathcal L})}{\Gamma(\frac{d_{\rm out}}2)},
        \qquad d_{\rm out}=1:\ \mathcal A=\mathrm{erf}\sqrt{\frac{\epsilon}{2\mathcal L}}

    In words: the regularised lower incomplete gamma function P(d_out/2, d_out·ε/(2L)); at d_out = 1 it is
    erf(√(ε/(2L))). L is the variance of each error component (the paper says "standard deviation"), and the
    map assumes isotropic Gaussian errors.

    Parameters
    ----------
    L : float or array_like
        Loss L ≥ 0: the mean squared error per output, i.e. the variance of each error component (L = 0
        gives accuracy 1).
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.

    Returns
    -------
    float or ndarray
        Accuracy in [0, 1], the broadcast shape of `L` and `eps`. Accuracies below 10⁻²⁸⁰ come from a
        log-space series, so they do not flush to 0.

    References
    ----------
    Levi et al., eqs. (9), (12) (with the argument order of Γ(a, z) corrected); spec `levi:eq9`,
    `levi:eq12-acc`, `levi:conv-acc`.
    """
    LL = V.nonnegative(L, "L")
    ee = _eps(eps)
    d = _d_out(d_out)
    LL, ee = np.broadcast_arrays(LL, ee)
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        # +inf where L = 0 or the ratio overflows: P(a, inf) = 1.  (d/2)(eps/L), not d eps/(2 L): that was
        # inf/inf = NaN at L = eps = 1.7e308, d_out = 10^6
        x = (0.5 * d) * (ee / LL)
        acc = special.gammainc(0.5 * d, x)
        # Small accuracies from log x and the series P(a, x) = x^a e^{-x}/Gamma(a+1) sum_k x^k/((a+1)..(a+k)):
        # x itself underflows at eps = 1e-308, L = 1e148 (P = 1e-228), and scipy's gammainc flushes results
        # below ~1e-308 to 0 (3.6e-312 at d_out = 37, x = 1e-16).  Used where x < 1e-3 and P < 1e-280
        # (30 terms: the omitted one is below 1e-90 relative) or x < 1e-300.
        a = 0.5 * d
        log_x = math.log(a) + np.log(ee) - np.log(np.where(LL > 0, LL, 1.0))
        log_lead = a * log_x - special.gammaln(a + 1.0)
        use = (LL > 0) & (log_x < math.log(1e-3)) & ((log_lead < math.log(1e-280)) | (log_x < -690.0))
        xs = np.exp(np.where(use, log_x, -np.inf))
        series, term = np.ones_like(xs), np.ones_like(xs)
        for k in range(1, 31):
            term = term * xs / (a + k)
            series = series + term
        acc = np.where(use, np.exp(log_lead - xs + np.log(series)), acc)
    return V.scalar_or_array(acc)


def _log_lstar(eps: float, d: float, level: float) -> float:
    """log L* without forming L* (it over/underflows for eps near 1e+-300 at extreme levels)."""
    if d == 1.0:
        return math.log(eps) - math.log(2.0) - 2.0 * math.log(float(special.erfinv(level)))
    # log P^-1 also where P^-1 underflows (level = 5e-324: log 0 raised "math domain error")
    return math.log(d) + math.log(eps) - math.log(2.0) - float(_mpgrid._p_inverse(d, level)[1])


def _lstar(eps: float, d: float, level: float) -> float:
    r"""L* as a double; ``ResultOverflow`` where it exceeds 1.8e308.

    No intermediate under/overflows where L* is a normal double: :math:`\mathrm{erfinv}(\ell)^2`
    underflows for :math:`\ell<10^{-154}` (``ZeroDivisionError`` at :math:`\ell=5\cdot10^{-324}`), so
    there :math:`(\epsilon/e)/e/2`; :math:`d\,\epsilon` overflows for :math:`\epsilon>10^{302}`, so
    :math:`\epsilon\,(a/x)`, :math:`a=d/2`, :math:`x=P^{-1}(a,\ell)`.
    """
    with np.errstate(over="ignore", divide="ignore"):
        if d == 1.0:
            e = float(special.erfinv(level))
            val = eps / (2.0 * e * e) if e > 1e-150 else 0.5 * ((eps / e) / e)
        else:
            a = 0.5 * d
            x, log_x = (float(v) for v in _mpgrid._p_inverse(d, level))
            # below x = 1e-300 (0 at level 5e-324) from log x; overflow there means L* > 1.8e308
            log_val = math.log(a) + math.log(eps) - log_x
            val = eps * (a / x) if x > 1e-300 else (math.exp(log_val) if log_val < 709.78 else math.inf)
    if not math.isfinite(val):
        raise V.ResultOverflow(f"L* = exp({_log_lstar(eps, d, level):.6g}) exceeds the largest double "
                               f"(eps={eps!r}, d_out={d:g}, level={level!r}; L* ~ eps d_out/(2 P^-1(d_out/2, level)))")
    return val


@cites("levi:lstar", "levi:conv-acc")
@V.broadcasting()
def loss_threshold(eps, d_out=1, level=ERF_SQRT2):
    r"""Loss L* below which the accuracy of `accuracy_from_loss` exceeds `level`.

    .. math::
        \mathcal L^*=\frac{d_{\rm out}\,\epsilon}{2\,P^{-1}(d_{\rm out}/2,\ \ell)};\qquad
        d_{\rm out}=1,\ \ell=\mathrm{erf}\sqrt2:\ \mathcal L^*=\epsilon/4

    In words: d_out·ε over twice the inverse of the regularised incomplete gamma function at the level. At
    d_out = 1 it is evaluated as ε/(2 erfinv(ℓ)²), exact to 1 ulp.

    Parameters
    ----------
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1.

    Returns
    -------
    float or ndarray
        L*, the broadcast shape of `eps` and `level`.

    Raises
    ------
    DomainError
        `ResultOverflow` (a `DomainError` and an `OverflowError`) where L* exceeds the largest double (ε
        near 10³⁰⁸ with a tiny level), besides invalid arguments.

    References
    ----------
    Levi et al., App. B; spec `levi:lstar`, `levi:conv-acc`.
    """
    ee = _eps(eps)
    d = _d_out(d_out)
    lv = _level(level)
    return V.scalar_or_array(_broadcast_apply(lambda e, l_: _lstar(e, float(d), l_), ee, lv))


# ============================================================================ exact crossing times


def _t_star_scalar(which: str, lam: float, eps: float, eta0: float, d: float, gamma: float, level: float,
                   alpha: float, discrete: bool) -> float:
    log_lstar = _log_lstar(eps, d, level)
    if _log_loss_inf(which, lam, d, gamma, alpha) >= log_lstar:  # asymptote first: never reached
        return math.inf
    if _log_c(alpha) - math.log(d) <= log_lstar:  # L(0) = (1+α²)/(2 d_out)
        return 0.0

    def f(t: float) -> float:
        return float(_log_loss_kernel(which, np.array([t]), lam, eta0, d, gamma, alpha, discrete)[0]) - log_lstar

    # The largest t at which s = 4 eta0 t/d_out is a finite double (0.9 of the float range).
    t_cap = min(_T_MAX, (0.225 * _FLOAT_MAX / eta0) * d)  # not / (4 eta0): 4 eta0 = inf gave t_cap = 0
    lo, hi = _bracket_log2(f, t_cap)
    if hi is None:
        raise V.DomainError(
            f"the crossing time t* of the {which} loss exceeds {t_cap:.3g} GD steps, where 4 eta0 t/d_out or t "
            f"itself leaves the float64 range (lam={lam!r}, eps={eps!r}, eta0={eta0!r}, gamma={gamma!r})")
    if lo == 0.0:
        return 0.0  # t* < 5e-324: rounds to 0
    # Brent in t on [2^k, 2^(k+1)]: relative tolerance 1e-15 (spec levi:tstar asks 1e-12; the crossing
    # is then as accurate as log L itself, ~1e-16 |log L*| in s)
    # Brent on t = lo u, u in [1, hi/lo] <= 2 (scaled: a subnormal lo gave xtol = 0 and stalled)
    u = optimize.brentq(lambda u: f(lo * u), 1.0, hi / lo, xtol=1e-16, rtol=_ROOT_RTOL, maxiter=500)
    return float(lo * u)


def _bracket_log2(f: Callable[[float], float], t_cap: float) -> tuple[float, float | None]:
    """``(2^k, 2^(k+1))`` (or ``(2^k, t_cap)``) with ``f > 0`` at the left and ``<= 0`` at the right, for a
    decreasing ``f`` with ``f(0+) > 0``.  Galloping in the exponent from ``t = 1`` (1, 2, 4, 16, 256, ...; from the
    power of 2 below ``t_cap`` if that is below 1),
    then bisection of the exponent: at most ~25 evaluations over the whole float range.  ``(0.0, tiny)``
    if ``f <= 0`` already at the smallest subnormal; ``(lo, None)`` if ``f(t_cap) > 0``."""
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


def _time_args(lam, eps, eta0, d_out, gamma, level, init_scale, discrete, wd_convention):
    ll = _lam(lam)
    ee = _eps(eps)
    et = _eta0(eta0)
    d = _d_out(d_out)
    gg = _gamma_paper(gamma, d, wd_convention)
    lv = _level(level)
    aa = _init_scale(init_scale)
    disc = _flag(discrete, "discrete")
    return ll, ee, et, float(d), gg, lv, aa, disc


@cites("levi:tstar", "levi:grok-def")
@V.broadcasting()
def t_star(which, lam, eps, eta0, *, d_out=1, gamma=0.0, level=ERF_SQRT2, init_scale=1.0, discrete=False,
           wd_convention="paper"):
    r"""Exact time at which the train or generalisation accuracy reaches `level` (root finding).

    .. math:: t^*:\quad \log\mathcal L(t^*)=\log\mathcal L^*(\epsilon,d_{\rm out},\ell)

    In words: the first time the loss (`loss_train` or `loss_gen`) falls to the threshold L* of
    `loss_threshold`. The root is bracketed by galloping in the exponent of t from 1 (1, 2, 4, 16, 256, ...;
    over the whole float range, 2⁻¹⁰⁷⁴ to 1.6·10³⁰⁸) and bisecting the exponent, then found by Brent's method
    on the log-space loss in [2ᵏ, 2ᵏ⁺¹] (relative tolerance 10⁻¹⁵; the spec asks 10⁻¹²). Returns `math.inf` if
    the asymptote L(∞) ≥ L* (checked first; e.g. λ > 1 with a plateau above the threshold, or weight decay
    beyond `wd_gamma_max`), and 0.0 if L(0) ≤ L*.

    Parameters
    ----------
    which : {"train", "tr", "gen"}
        Which accuracy: "train" (or its alias "tr") for the training accuracy, "gen" for the
        generalisation accuracy.
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    gamma : float or array_like
        Weight decay γ ≥ 0, in the convention named by `wd_convention`; default 0 (none). The single value
        5e-324 in the paper convention raises `DomainError` (its half γ/2 rounds to 0).
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1.
    init_scale : float or array_like
        α, the scale of the student's initialisation relative to the paper's (S₀ → αS₀); any finite real,
        0 starts the student at zero; default 1. Without weight decay both losses scale by (1 + α²)/2.
    discrete : bool
        False (default): gradient flow. True: the exact losses of discrete gradient descent with step η₀
        (spec `levi:gd-exact`), e^(−s(ν+γ/2)/2) → (1 − 2η₀(ν + γ/2)/d_out)^t; this needs 2η₀(λ₊ +
        γ/2)/d_out < 2 with λ₊ = (1 + √λ)² (else `DomainError`).
    wd_convention : {"paper", "torch"}
        Convention of `gamma`. "paper" (default): the paper's γ of eq. (3), whose GD step adds η₀γS/d_out.
        "torch": the `weight_decay` of PyTorch's `SGD` on a mean-reduced MSE, whose step adds η₀γS;
        converted as γ_paper = d_out·γ (spec `levi:conv-wd`).

    Returns
    -------
    float or ndarray
        t* in GD steps (real-valued), the broadcast shape of the array arguments; `inf` or 0.0 as above
        (also 0.0 where t* < 5·10⁻³²⁴, its correctly rounded value).

    Raises
    ------
    DomainError
        Where t* or 4η₀t*/d_out exceeds 1.6·10³⁰⁸ (e.g. λ = 1, ε = 10⁻³⁰⁰: t* ~ 10⁶⁰⁰), besides invalid
        arguments.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation, γ = 0): relative error ≤ 10⁻¹³, or an absolute
    error ≤ 10⁻¹⁵·max(1, |log L*|)·d_out/(4η₀) (the rounding of log L* itself, which dominates only when t* is
    tiny), for λ in [10⁻³⁰⁸, 10³⁰⁰] and ε, η₀ in [10⁻³⁰⁸, 10³⁰⁰].

    References
    ----------
    Levi et al., §3.1.3; spec `levi:tstar`, `levi:grok-def`.
    """
    w = _which(which)
    ll, ee, et, d, gg, lv, aa, disc = _time_args(lam, eps, eta0, d_out, gamma, level, init_scale, discrete,
                                                 wd_convention)
    out = _broadcast_apply(lambda la, e, h, g, l_, a: _t_star_scalar(w, la, e, h, d, g, l_, a, disc),
                           ll, ee, et, gg, lv, aa)
    return V.scalar_or_array(out)


def _grok_time_scalar(lam, eps, eta0, d, gamma, level, alpha, discrete) -> float:
    tg = _t_star_scalar("gen", lam, eps, eta0, d, gamma, level, alpha, discrete)
    tt = _t_star_scalar("train", lam, eps, eta0, d, gamma, level, alpha, discrete)
    if math.isinf(tg) and math.isinf(tt):
        return math.nan
    if gamma == 0.0 and not discrete and lam <= _SMALL_LAM and 0.0 < tt <= tg < math.inf:
        return _grok_delay_small_lam(tt, lam, eta0, d)
    return tg - tt


# Below lam = 1/4 the grokking time is computed as its own root (_grok_delay_small_lam), not as the
# difference t_gen - t_train: Delta t / t ~ lam, so the difference of two crossing times, each good to
# ~1e-16 |log L*| in s, kept no digit at lam = 1e-20 (Delta t = 0.0 instead of 2.07e-18) and 1e-4
# relative at lam = 1e-12.  Measured at the switch (lam = 1/4, eps = 1e-2, 1e-3, 1e-6, eta0 = 0.01): the
# two agree to 8e-16 (to 7e-15 at lam = 0.1, where the difference has lost a digit).
_SMALL_LAM = 0.25


def _grok_delay_small_lam(t_train: float, lam: float, eta0: float, d: float) -> float:
    r""":math:`\Delta t` for :math:`\gamma=0`, gradient flow, :math:`\lambda\le1/4`, from the train crossing.

    With :math:`s_t=4\eta_0t^*_{\rm tr}/d_{\rm out}` and :math:`\Phi_0'=-\Phi_1`, the gen loss reaches the
    train loss's level :math:`\Phi_1(s_t)` after a further :math:`\Delta s` that solves

    .. math:: \int_0^{\Delta s}\frac{\Phi_1(s_t+u)}{\Phi_1(s_t)}\,du=\frac{\Phi_0(s_t)-\Phi_1(s_t)}{\Phi_1(s_t)},

    both sides free of cancellation (:func:`grokclocks.rmt._phi0_excess`,
    :func:`grokclocks.rmt._log_phi1_increment`).  The left side is concave in :math:`\Delta s`, so Newton
    from :math:`\Delta s_0` = right side (a lower bound: the ratio is <= 1) increases monotonically
    to the root.  :math:`\Delta t=\Delta s\,d_{\rm out}/(4\eta_0)`.
    """
    s_t = float(_flow_time(eta0, t_train, d))
    q = rmt._phi0_excess(s_t, lam)

    def ratio(u: float) -> float:
        return math.exp(rmt._log_phi1_increment(s_t, u, lam))

    ds = q
    if q < 1e-200:  # the ratio is 1 - O(u) on [0, q]: Delta s = q (1 + O(q)); Newton's 1e-15 q test underflows
        return float(_gd_time(ds, eta0, d))  # for a subnormal q (no convergence at lam = 5e-324)
    for _ in range(100):
        integral = rmt._quad(ratio, 0.0, ds, epsabs=0.0, epsrel=2e-14, limit=200)
        step = (q - integral) / ratio(ds)
        ds += step
        if abs(step) <= 1e-13 * ds:  # 5x the quadrature's epsrel: below it the steps are rounding noise
            break
    else:  # pragma: no cover - Newton on a concave function from below converges; loud if not
        raise RuntimeError(f"grok_time: the small-lam delay did not converge (lam={lam!r}, t_train={t_train!r})")
    return float(_gd_time(ds, eta0, d))


@cites("levi:grok-def", "levi:tstar")
@V.broadcasting()
def grok_time(lam, eps, eta0, *, d_out=1, gamma=0.0, level=ERF_SQRT2, init_scale=1.0, discrete=False,
              wd_convention="paper"):
    r"""Exact grokking time: the generalisation crossing time minus the train crossing time.

    .. math:: \Delta t_{\rm grok}=t^*_{\rm gen}-t^*_{\rm tr}

    In words: Δt = t*_gen − t*_tr, both crossings from `t_star`. It is +∞ when only the generalisation
    accuracy never reaches the level, and NaN when neither does (spec `levi:grok-def`).

    For γ = 0, gradient flow and λ ≤ 1/4 the delay is computed as its own root (∫₀^Δs Φ₁(s_t + u) du = Φ₀(s_t)
    − Φ₁(s_t), both sides free of cancellation), not as t*_gen − t*_tr: the two crossing times agree to about
    λ relative, and their difference gave 0 at λ = 10⁻²⁰ (exact: 207.35λ at ε = 10⁻³, η₀ = 0.01).

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    gamma : float or array_like
        Weight decay γ ≥ 0, in the convention named by `wd_convention`; default 0 (none). The single value
        5e-324 in the paper convention raises `DomainError` (its half γ/2 rounds to 0).
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1.
    init_scale : float or array_like
        α, the scale of the student's initialisation relative to the paper's (S₀ → αS₀); any finite real,
        0 starts the student at zero; default 1. Without weight decay both losses scale by (1 + α²)/2.
    discrete : bool
        False (default): gradient flow. True: the exact losses of discrete gradient descent with step η₀
        (spec `levi:gd-exact`), e^(−s(ν+γ/2)/2) → (1 − 2η₀(ν + γ/2)/d_out)^t; this needs 2η₀(λ₊ +
        γ/2)/d_out < 2 with λ₊ = (1 + √λ)² (else `DomainError`).
    wd_convention : {"paper", "torch"}
        Convention of `gamma`. "paper" (default): the paper's γ of eq. (3), whose GD step adds η₀γS/d_out.
        "torch": the `weight_decay` of PyTorch's `SGD` on a mean-reduced MSE, whose step adds η₀γS;
        converted as γ_paper = d_out·γ (spec `levi:conv-wd`).

    Returns
    -------
    float or ndarray
        Δt_grok in GD steps, the broadcast shape of the array arguments; `inf` or NaN as above.

    Raises
    ------
    DomainError
        Where a crossing time or 4η₀t*/d_out exceeds 1.6·10³⁰⁸, besides invalid arguments.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): γ = 0, relative error ≤ 10⁻¹² for every λ in
    [10⁻³⁰⁸, 1]; γ > 0 it is a difference of two crossing times, relative error ≤ 10⁻¹¹ + 10⁻¹³/λ.

    References
    ----------
    Levi et al., §3.1.3, Fig. 1; spec `levi:grok-def`, `levi:tstar`.

    Examples
    --------
    >>> from grokclocks.linear import grok_time
    >>> round(grok_time(0.5, 1e-3, 0.01))
    431
    """
    ll, ee, et, d, gg, lv, aa, disc = _time_args(lam, eps, eta0, d_out, gamma, level, init_scale, discrete,
                                                 wd_convention)
    out = _broadcast_apply(lambda la, e, h, g, l_, a: _grok_time_scalar(la, e, h, d, g, l_, a, disc),
                           ll, ee, et, gg, lv, aa)
    return V.scalar_or_array(out)
