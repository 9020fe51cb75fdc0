"""Levi et al.: losses with label noise (fixed and fresh noise)."""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as V
from .. import rmt
from ..citations import cites
from ._conventions import _broadcast_apply, _d_out, _eta0, _lam, _QUAD_RTOL, _t
from ._losses import _check_gd_stable, _loss_public


def _noise_args(t, lam, eta0, sigma2, d_out, mode):
    tt = _t(t)
    ll = _lam(lam)
    et = _eta0(eta0)
    s2 = V.nonnegative(sigma2, "sigma2")
    d = _d_out(d_out)
    m = V.choice(mode, "mode", ("fixed", "fresh", "paper"))
    return tt, ll, et, s2, d, m


def _e_exp_cont(s: float, lam: float) -> float:
    """E[e^{-s nu}; nu > 0] (continuous part only)."""
    if lam <= 1.0:
        return float(rmt.mp_laplace(s, lam))
    return math.exp(rmt.mp_log_expect_exp(lambda nu: 1.0, s, lam, include_atom=False, rtol=_QUAD_RTOL))


def _noise_gen_fixed(s: float, lam: float) -> float:
    """lam E[(1 - e^{-s nu/2})^2 / nu; nu > 0]."""
    if s == 0.0:
        return 0.0

    def f(nu):
        x = float(nu)
        return 0.0 if x == 0.0 else math.expm1(-0.5 * s * x) ** 2 / x

    return lam * rmt.mp_expect(f, lam, include_atom=False, rtol=_QUAD_RTOL)


def _noise_fresh(t: float, lam: float, eta: float, d: float, q: str) -> float:
    """(eta lam/d) E[q(nu) (1 - rho^{2t})/(1 - eta nu/d); nu > 0], rho = 1 - 2 eta nu/d, q = 1 or nu.

    The stationary GD fluctuation driven by fresh label noise: per eigen-mode an injected variance
    4 eta^2 nu sigma^2/(d^2 N) per step, damped by rho^2 (spec levi:noise-fresh); q = 1 gives the
    generalisation excess, q = nu the training excess on top of sigma^2.
    """
    if t == 0.0:
        return 0.0
    _check_gd_stable(lam, eta, d, 0.0)
    b = eta / d

    def f(nu):
        x = float(nu)
        bx2 = 2.0 * b * x
        if bx2 < 1.0:  # 1 - rho^{2t} = -expm1(t (2 log1p(-2 b nu))): 2 t log(1 - 1e-323) was inf * 0 = NaN
            one_m_p = -math.expm1(t * (2.0 * math.log1p(-bx2)))
        else:
            a = abs(1.0 - bx2)
            one_m_p = 1.0 if a == 0.0 else -math.expm1(t * (2.0 * math.log(a)))
        return (x if q == "nu" else 1.0) * one_m_p / (1.0 - b * x)

    return b * lam * rmt.mp_expect(f, lam, include_atom=False, rtol=_QUAD_RTOL)


@cites("levi:eq26", "levi:eq28", "levi:noise-fresh", "levi:fig6")
@V.broadcasting()
def loss_train_label_noise(t, lam, eta0, sigma2, *, d_out=1, mode="fixed"):
    r"""Training loss with noisy training labels y = Tᵀx + δ, δ ~ N(0, σ²I).

    .. math::
        \text{fixed: }\ \mathcal L_{\rm tr}=\mathcal L^{(0)}_{\rm tr}+\sigma^2\Big[(1-\lambda)^++\lambda\,\mathbb E\big[e^{-s\nu};\nu>0\big]\Big]
        \qquad\text{paper: }\ \mathcal L_{\rm tr}=\mathcal L^{(0)}_{\rm tr}+\sigma^2

        \text{fresh: }\ \mathcal L_{\rm tr}=\mathcal L^{(0)}_{\rm tr}+\sigma^2+\frac{\eta_0\sigma^2\lambda}{d_{\rm out}}\,
        \mathbb E\Big[\frac{\nu\,(1-(1-2\eta_0\nu/d_{\rm out})^{2t})}{1-\eta_0\nu/d_{\rm out}};\nu>0\Big]

    In words: the noiseless `loss_train` L⁽⁰⁾ plus a noise term, s = 4η₀t/d_out. "fixed": labels drawn once;
    gradient descent fits the noise and L_tr → σ²·max(0, 1 − λ) (this corrects the paper's eq. 26). "fresh":
    noise redrawn every step; the last term, the part of the injected noise that gradient descent fits, is
    about η₀σ²λ/d_out at late times. The spec's form L⁽⁰⁾ + σ² omits it: measured (d_in = 500, λ = 0.5, σ² =
    0.01, η = 0.01, 3 seeds, last 10⁴ of 5·10⁴ steps) 0.010049 against 0.010050 with it and 0.010000 without
    it (the `pytest verify` check `test_noise_fresh`). "paper": the paper's eq. 26.

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    lam : float
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0; a scalar.
    eta0 : float
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    sigma2 : float
        σ², the variance of the label noise per output, σ² ≥ 0.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    mode : {"fixed", "fresh", "paper"}
        How the label noise is drawn. "fixed" (default): once, with the training set; gradient descent
        fits it. "fresh": redrawn at every step, the loss taken on the current labels; needs 2η₀λ₊/d_out <
        2, λ₊ = (1 + √λ)². "paper": the paper's eq. 26–27 transcription.

    Returns
    -------
    float or ndarray
        L_tr(t), the shape of `t`.

    References
    ----------
    Levi et al., App. C, eqs. (26), (28) (corrected; erratum levi-4); spec `levi:eq26`, `levi:eq28`,
    `levi:noise-fresh`, `levi:fig6`.
    """
    tt, ll, et, s2, d, m = _noise_args(t, lam, eta0, sigma2, d_out, mode)
    base = np.asarray(_loss_public("train", tt, ll, et, d, 0.0, 1.0, False, "paper", False))
    if m == "paper":
        return V.scalar_or_array(base + s2)
    if m == "fresh":
        extra = _broadcast_apply(lambda ti, la, e, s_: s_ * _noise_fresh(ti, la, e, float(d), "nu"), tt, ll, et, s2)
        return V.scalar_or_array(base + s2 + extra)

    def noise(ti, la, e, s_):
        s = 4.0 * e * ti / d
        return s_ * (max(0.0, 1.0 - la) + la * _e_exp_cont(s, la))

    return V.scalar_or_array(base + _broadcast_apply(noise, tt, ll, et, s2))


@cites("levi:eq27", "levi:eq28", "levi:noise-fresh", "levi:fig6")
@V.broadcasting()
def loss_gen_label_noise(t, lam, eta0, sigma2, *, d_out=1, mode="fixed"):
    r"""Generalisation loss with noisy training labels y = Tᵀx + δ, δ ~ N(0, σ²I).

    .. math::
        \text{fixed: }\ \mathcal L_{\rm gen}=\mathcal L^{(0)}_{\rm gen}+\sigma^2\lambda\,
        \mathbb E\Big[\frac{(1-e^{-s\nu/2})^2}{\nu};\nu>0\Big]
        \ \xrightarrow[t\to\infty]{}\ \mathcal L^{(0)}_{\rm gen}(\infty)+\sigma^2\Big(\frac{\lambda}{1-\lambda}\ \text{or}\ \frac1{\lambda-1}\Big)

    .. math::
        \text{fresh: }\ \mathcal L_{\rm gen}=\mathcal L^{(0)}_{\rm gen}+\frac{\eta_0\sigma^2\lambda}{d_{\rm out}}
        \mathbb E\Big[\frac{1-(1-2\eta_0\nu/d_{\rm out})^{2t}}{1-\eta_0\nu/d_{\rm out}};\nu>0\Big]
        \qquad\text{paper: }\ \mathcal L^{(0)}_{\rm gen}

    In words: the noiseless `loss_gen` L⁽⁰⁾ plus the noise gradient descent has fitted, s = 4η₀t/d_out.
    "fixed" tends to L⁽⁰⁾(∞) + σ²λ/(1 − λ) (λ < 1) or σ²/(λ − 1) (λ > 1). The paper's "generalisation loss
    still goes to 0" holds only for fresh noise (floor about η₀σ²·min(λ, 1)/d_out), not for fixed noisy
    labels. "paper" returns L⁽⁰⁾ unchanged.

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    lam : float
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0; a scalar.
    eta0 : float
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out. With `mode="fresh"` it is also the step of the noise recursion.
    sigma2 : float
        σ², the variance of the label noise per output, σ² ≥ 0.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    mode : {"fixed", "fresh", "paper"}
        How the label noise is drawn. "fixed" (default): once, with the training set; gradient descent
        fits it. "fresh": redrawn at every step, the loss taken on the current labels; needs 2η₀λ₊/d_out <
        2, λ₊ = (1 + √λ)². "paper": the paper's eq. 26–27 transcription.

    Returns
    -------
    float or ndarray
        L_gen(t), the shape of `t`.

    References
    ----------
    Levi et al., App. C, eqs. (27), (28) (corrected; erratum levi-4); spec `levi:eq27`, `levi:eq28`,
    `levi:noise-fresh`, `levi:fig6`.
    """
    tt, ll, et, s2, d, m = _noise_args(t, lam, eta0, sigma2, d_out, mode)
    base = np.asarray(_loss_public("gen", tt, ll, et, d, 0.0, 1.0, False, "paper", False))
    if m == "paper":
        return V.scalar_or_array(base + 0.0 * s2)
    if m == "fixed":
        extra = _broadcast_apply(lambda ti, la, e, s_: s_ * _noise_gen_fixed(4.0 * e * ti / d, la), tt, ll, et, s2)
    else:
        extra = _broadcast_apply(lambda ti, la, e, s_: s_ * _noise_fresh(ti, la, e, float(d), "one"), tt, ll, et, s2)
    return V.scalar_or_array(base + extra)
