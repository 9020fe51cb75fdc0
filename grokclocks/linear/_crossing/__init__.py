"""Levi et al.: accuracy from loss, the loss threshold L*, exact crossing times and the grokking time.

Thin validated doors (`accuracy_from_loss`, `loss_threshold`, `t_star`, `grok_time`) to one engine per
computation: `_threshold` (L* and log L*), `_times` (every crossing time, vectorised Newton in lockstep),
`_delay` (the small-λ grokking delay as its own root).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ... import _validate as V
from ..._constants import ERF_SQRT2
from ...citations import cites
from .._conventions import _d_out, _eps, _eta0, _flag, _gamma_paper, _init_scale, _lam, _level, _which
from ._delay import _grok_delay_small_lam, _SMALL_LAM
from ._threshold import _log_lstar, _lstar
from ._times import _grok_time_flat, _t_star_flat

__all__ = ["accuracy_from_loss", "loss_threshold", "t_star", "grok_time"]


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
        # d_out = 1: P(1/2, x) = erf(sqrt(x)), 3.7x faster than gammainc and exact to an ulp where gammainc(1/2, x)
        # lost 2.1e-14 (x ~ 1e-222, measured against mpmath)
        acc = special.erf(np.sqrt(x)) if d == 1 else special.gammainc(0.5 * d, x)
        # Small accuracies from log x and the series P(a, x) = x^a e^{-x}/Gamma(a+1) sum_k x^k/((a+1)..(a+k)):
        # x itself underflows at eps = 1e-308, L = 1e148 (P = 1e-228), and scipy's gammainc flushes results
        # below ~1e-308 to 0 (3.6e-312 at d_out = 37, x = 1e-16).  Used where x < 1e-3 and P < 1e-280
        # (30 terms: the omitted one is below 1e-90 relative) or x < 1e-300.
        a = 0.5 * d
        # the series only where it is needed (x < 1e-3 and P < 1e-280, or x < 1e-300): x itself decides
        small = (LL > 0) & (x < 1e-3)
        if np.any(small):
            acc = np.array(acc, dtype=np.float64)
            Ls, es = LL[small], ee[small]
            log_x = math.log(a) + np.log(es) - np.log(Ls)
            log_lead = a * log_x - special.gammaln(a + 1.0)
            use = (log_lead < math.log(1e-280)) | (log_x < -690.0)
            if np.any(use):  # the 30-term series on those points only (elementwise: the same values)
                log_x, log_lead = log_x[use], log_lead[use]
                xs = np.exp(log_x)
                series, term = np.ones_like(xs), np.ones_like(xs)
                for k in range(1, 31):
                    term = term * xs / (a + k)
                    series = series + term
                at = np.flatnonzero(small)[use]
                acc.reshape(-1)[at] = np.exp(log_lead - xs + np.log(series))
    return V.scalar_or_array(acc)


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
    shape, (ef, lf) = V.broadcast_flat(ee, lv)
    return V.scalar_or_array(_lstar(ef, float(d), lf).reshape(shape))


def _time_args(lam, eps, eta0, d_out, gamma, level, init_scale, discrete, wd_convention):
    """Validate once: ``(shape, [lam, eps, eta0, gamma, level, alpha] flat, d_out, discrete)``."""
    ll = _lam(lam)
    ee = _eps(eps)
    et = _eta0(eta0)
    d = _d_out(d_out)
    gg = _gamma_paper(gamma, d, wd_convention)
    lv = _level(level)
    aa = _init_scale(init_scale)
    disc = _flag(discrete, "discrete")
    shape, flat = V.broadcast_flat(ll, ee, et, gg, lv, aa)
    return shape, flat, float(d), disc


def _t_star_scalar(which: str, lam: float, eps: float, eta0: float, d: float, gamma: float, level: float,
                   alpha: float, discrete: bool) -> float:
    """t* at one point (validated): the engine `_t_star_flat` on one-element arrays."""
    a = [np.array([float(v)]) for v in (lam, eps, eta0, gamma, level, alpha)]
    return float(_t_star_flat(which, *a[:3], float(d), *a[3:], discrete)[0])


def _grok_time_scalar(lam, eps, eta0, d, gamma, level, alpha, discrete) -> float:
    """Δt at one point (validated): the engine `_grok_time_flat` on one-element arrays."""
    a = [np.array([float(v)]) for v in (lam, eps, eta0, gamma, level, alpha)]
    return float(_grok_time_flat(*a[:3], float(d), *a[3:], discrete)[0])


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
    shape, args, d, disc = _time_args(lam, eps, eta0, d_out, gamma, level, init_scale, discrete, wd_convention)
    return V.scalar_or_array(_t_star_flat(w, *args[:3], d, *args[3:], disc).reshape(shape))


@cites("levi:grok-def", "levi:tstar")
@V.broadcasting()
def grok_time(lam, eps, eta0, *, d_out=1, gamma=0.0, level=ERF_SQRT2, init_scale=1.0, discrete=False,
              wd_convention="paper"):
    r"""Exact grokking time: the generalisation crossing time minus the train crossing time.

    .. math:: \Delta t_{\rm grok}=t^*_{\rm gen}-t^*_{\rm tr}

    In words: Δt = t*_gen − t*_tr, both crossings from `t_star`. It is +∞ when only the generalisation
    accuracy never reaches the level, and NaN when neither does (spec `levi:grok-def`).

    For γ = 0, gradient flow and λ ≤ 10⁻² the delay is computed as its own root (∫₀^Δs Φ₁(s_t + u) du = Φ₀(s_t)
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
    shape, args, d, disc = _time_args(lam, eps, eta0, d_out, gamma, level, init_scale, discrete, wd_convention)
    return V.scalar_or_array(_grok_time_flat(*args[:3], d, *args[3:], disc).reshape(shape))
