"""Levi et al.: exact train / generalisation losses of the MP limit (eqs. 8, 12, 14, 33; discrete GD, init scale).

The four public losses are thin validated doors to one engine, `_log_loss` (flat arrays): gradient flow
without weight decay by the closed forms of `grokclocks.rmt` (`_flow`), with weight decay by the fixed rule of
eq. 14 (`grokclocks._mpgrid`, `_flow`), discrete gradient descent by the fixed rule over the law (`_gd`).
"""

from __future__ import annotations

import math

import numpy as np

from ... import _validate as V
from ...citations import cites
from .._conventions import _d_out, _eta0, _flag, _flow_time, _gamma_paper, _init_scale, _lam, _t
from ._flow import _check_finite_s, _log_c, _log_loss_inf, _log_loss_no_decay, _log_phi
from ._gd import _check_gd_stable
from ._engine import _log_loss

__all__ = ["loss_train", "loss_gen", "log_loss_train", "log_loss_gen"]


def _loss_public(which, t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, log):
    """Validate once, broadcast, flatten; the engine `_log_loss`; reshape (scalars in, floats out)."""
    tt = _t(t)
    ll = _lam(lam)
    ee = _eta0(eta0)
    d = float(_d_out(d_out))
    gg = _gamma_paper(gamma, d, wd_convention)
    aa = _init_scale(init_scale)
    disc = _flag(discrete, "discrete")
    if not disc and all(np.ndim(v) == 0 for v in (tt, ll, ee, gg, aa)) and float(gg) == 0.0:
        # a scalar call of the closed forms (gradient flow, no weight decay): the array path's operations on
        # floats (rmt's engines take them; numpy's ufuncs give the bits of the same point in an array)
        s = _flow_time(float(ee), float(tt), d)
        if s < math.inf:  # else the array path's DomainError
            out = float(_log_loss_no_decay(which, s, float(ll), d, float(aa)))
            return out if log else float(np.exp(out))
    shape, (tf, lf, ef, gf, af) = V.broadcast_flat(tt, ll, ee, gg, aa)
    out = _log_loss(which, tf, lf, ef, d, gf, af, disc)
    if not log:
        out = np.exp(out)
    return V.scalar_or_array(out.reshape(shape))


_LOSS_IDS = ("levi:eq8", "levi:eq12-loss", "levi:eq14", "levi:eq33", "levi:gd-exact", "levi:conv-time",
             "levi:conv-wd", "levi:init-rescale")


@cites("levi:eq1", "levi:eq19", *_LOSS_IDS)
@V.broadcasting()
def loss_train(t, lam, eta0, *, d_out=1, gamma=0.0, init_scale=1.0, discrete=False, wd_convention="paper"):
    r"""Training loss of the linear student in the large-size (Marchenko–Pastur) limit.

    .. math::
        \mathcal L_{\rm tr}(t)=\frac{1+\alpha^2}{2d_{\rm out}}\,\Phi_1\!\Big(\frac{4\eta_0t}{d_{\rm out}};\lambda\Big),
        \qquad\Phi_1(s)=\mathbb E[\nu e^{-s\nu}]=e^{-s(1+\lambda)}\frac{I_1(2s\sqrt\lambda)}{s\sqrt\lambda}

    In words (γ = 0, gradient flow): (1 + α²)/(2d_out) times Φ₁(s) = E[ν e^(−sν)] over the Marchenko–Pastur
    law of ratio λ, at s = 4η₀t/d_out. With weight decay γ > 0 (paper convention, eq. 14), g = γ/2:

    .. math::
        \mathcal L_{\rm tr}=\frac1{2d_{\rm out}}\mathbb E\Big[\nu\Big(\alpha^2e^{-s(\nu+g)}
        +\Big(\frac{e^{-s(\nu+g)/2}\nu+g}{\nu+g}\Big)^2\Big)\Big],\quad g=\frac\gamma2,\ s=\frac{4\eta_0t}{d_{\rm out}},

    evaluated in log space as the closed-form plateau (eq. 15) plus its decaying part by a fixed Gauss–Jacobi
    rule over the law (`grokclocks.linear.grok_time_grid`'s engine, proved against the spec's QAWS quadrature,
    all points at once); the ratio is the spec's 1 − (1 − e^(−…))ν/(ν + g) written
    without cancellation. `discrete=True` gives the exact GD value: e^(−s(ν+g)/2) → (1 − 2η₀(ν + g)/d_out)^t.

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    gamma : float or array_like
        Weight decay γ ≥ 0, in the convention named by `wd_convention`; default 0 (none). The single value
        5e-324 in the paper convention raises `DomainError` (its half γ/2 rounds to 0).
    init_scale : float or array_like
        α, the scale of the student's initialisation relative to the paper's (S₀ → αS₀); any finite real,
        0 starts the student at zero; default 1. Without weight decay both losses scale by (1 + α²)/2.
    discrete : bool
        False (default): gradient flow. True: the exact loss of discrete gradient descent with step η₀
        (spec `levi:gd-exact`); needs 2η₀(λ₊ + γ/2)/d_out < 2 with λ₊ = (1 + √λ)² (else `DomainError`).
        With γ > 0 and oscillating top modes (2η₀(λ₊ + γ/2)/d_out > 1, the adaptive corner) it also raises
        `DomainError` where the loss is below 10⁻²⁹⁰, where that quadrature underflows (the fixed rule elsewhere
        works in logs).
    wd_convention : {"paper", "torch"}
        Convention of `gamma`. "paper" (default): the paper's γ of eq. (3), whose GD step adds η₀γS/d_out.
        "torch": the `weight_decay` of PyTorch's `SGD` on a mean-reduced MSE, whose step adds η₀γS;
        converted as γ_paper = d_out·γ (spec `levi:conv-wd`).

    Returns
    -------
    float or ndarray
        L_tr(t), the broadcast shape of the array arguments (it underflows to 0 at very late times: use
        `log_loss_train`).

    Raises
    ------
    DomainError
        Where 4η₀t/d_out exceeds the float range (1.8·10³⁰⁸), besides invalid arguments.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation; t, η₀, λ in [10⁻³⁰⁸, 10³⁰⁰]): γ = 0, relative error
    ≤ 10⁻¹⁴·max(1, |log L|) (that of `grokclocks.rmt.mp_log_laplace_nu`); γ > 0 and `discrete=True` (fixed
    rules; the spec's adaptive QAWS quadrature only where top modes of GD oscillate), ≤ 10⁻¹².

    References
    ----------
    Levi et al., eqs. (8), (12), (14), (19), (33); spec `levi:eq8`, `levi:eq12-loss`, `levi:eq14`,
    `levi:gd-exact`, `levi:init-rescale`.
    """
    return _loss_public("train", t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, False)


@cites("levi:eq2", "levi:gen-closed", "levi:eq20", "levi:conv-data", *_LOSS_IDS)
@V.broadcasting()
def loss_gen(t, lam, eta0, *, d_out=1, gamma=0.0, init_scale=1.0, discrete=False, wd_convention="paper"):
    r"""Generalisation loss of the linear student in the large-size (Marchenko–Pastur) limit.

    .. math::
        \mathcal L_{\rm gen}(t)=\frac{1+\alpha^2}{2d_{\rm out}}\,\Phi_0\!\Big(\frac{4\eta_0t}{d_{\rm out}};\lambda\Big),
        \qquad\Phi_0(s)=\mathbb E[e^{-s\nu}]\ \text{(atom at 0 included)}

    In words (γ = 0, gradient flow): (1 + α²)/(2d_out) times Φ₀(s) = E[e^(−sν)] over the Marchenko–Pastur law
    of ratio λ (its atom at 0 included when λ > 1), at s = 4η₀t/d_out. L_gen(0) = (1 + α²)/(2d_out), L_gen(∞)
    = (1 + α²)·max(0, 1 − 1/λ)/(2d_out), and dL_gen/dt = −(4η₀/d_out)·L_tr (eq. 20, γ = 0, gradient flow).
    With weight decay: eq. 14 with q = 1 (the formula of `loss_train` without the factor ν); `discrete=True`:
    exact GD.

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    gamma : float or array_like
        Weight decay γ ≥ 0, in the convention named by `wd_convention`; default 0 (none). The single value
        5e-324 in the paper convention raises `DomainError` (its half γ/2 rounds to 0).
    init_scale : float or array_like
        α, the scale of the student's initialisation relative to the paper's (S₀ → αS₀); any finite real,
        0 starts the student at zero; default 1. Without weight decay both losses scale by (1 + α²)/2.
    discrete : bool
        False (default): gradient flow. True: the exact loss of discrete gradient descent with step η₀
        (spec `levi:gd-exact`); needs 2η₀(λ₊ + γ/2)/d_out < 2 with λ₊ = (1 + √λ)² (else `DomainError`).
        With γ > 0 and oscillating top modes (2η₀(λ₊ + γ/2)/d_out > 1, the adaptive corner) it also raises
        `DomainError` where the loss is below 10⁻²⁹⁰, where that quadrature underflows (the fixed rule elsewhere
        works in logs).
    wd_convention : {"paper", "torch"}
        Convention of `gamma`. "paper" (default): the paper's γ of eq. (3), whose GD step adds η₀γS/d_out.
        "torch": the `weight_decay` of PyTorch's `SGD` on a mean-reduced MSE, whose step adds η₀γS;
        converted as γ_paper = d_out·γ (spec `levi:conv-wd`).

    Returns
    -------
    float or ndarray
        L_gen(t), the broadcast shape of the array arguments.

    Raises
    ------
    DomainError
        Where 4η₀t/d_out exceeds the float range (1.8·10³⁰⁸), besides invalid arguments.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): γ = 0, relative error ≤ 2·10⁻¹⁴·max(1, |log L|)
    (that of `grokclocks.rmt.mp_log_laplace`) for every λ in [10⁻³⁰⁸, 10³⁰⁰], including λ → 0, where the
    former closed form gave 512 for a loss below 1; γ > 0 and `discrete=True`, ≤ 10⁻¹².

    References
    ----------
    Levi et al., eqs. (8), (12), (14), (20), (33); spec `levi:eq8`, `levi:gen-closed`, `levi:eq14`,
    `levi:gd-exact`.
    """
    return _loss_public("gen", t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, False)


@cites("levi:eq1", "levi:eq19", *_LOSS_IDS)
@V.broadcasting()
def log_loss_train(t, lam, eta0, *, d_out=1, gamma=0.0, init_scale=1.0, discrete=False, wd_convention="paper"):
    r"""Natural logarithm of the training loss `loss_train`, computed without forming the loss (never underflows).

    .. math:: \log\mathcal L_{\rm tr}(t)=\log\frac{1+\alpha^2}{2d_{\rm out}}+\log\Phi_1(4\eta_0t/d_{\rm out};\lambda)\quad(\gamma=0)

    In words: log((1 + α²)/(2d_out)) + log Φ₁(s) at γ = 0; with weight decay the log of eq. 14 as a log-sum of
    its non-negative terms. Use it where the loss itself underflows (s(1 − √λ)² beyond about 700).

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    gamma : float or array_like
        Weight decay γ ≥ 0, in the convention named by `wd_convention`; default 0 (none). The single value
        5e-324 in the paper convention raises `DomainError` (its half γ/2 rounds to 0).
    init_scale : float or array_like
        α, the scale of the student's initialisation relative to the paper's (S₀ → αS₀); any finite real,
        0 starts the student at zero; default 1. Without weight decay both losses scale by (1 + α²)/2.
    discrete : bool
        False (default): gradient flow. True: the exact loss of discrete gradient descent with step η₀
        (spec `levi:gd-exact`); needs 2η₀(λ₊ + γ/2)/d_out < 2 with λ₊ = (1 + √λ)² (else `DomainError`).
        With γ > 0 and oscillating top modes (2η₀(λ₊ + γ/2)/d_out > 1, the adaptive corner) it also raises
        `DomainError` where the loss is below 10⁻²⁹⁰, where that quadrature underflows (the fixed rule elsewhere
        works in logs).
    wd_convention : {"paper", "torch"}
        Convention of `gamma`. "paper" (default): the paper's γ of eq. (3), whose GD step adds η₀γS/d_out.
        "torch": the `weight_decay` of PyTorch's `SGD` on a mean-reduced MSE, whose step adds η₀γS;
        converted as γ_paper = d_out·γ (spec `levi:conv-wd`).

    Returns
    -------
    float or ndarray
        log L_tr(t), the broadcast shape of the array arguments.

    Raises
    ------
    DomainError
        Where 4η₀t/d_out exceeds the float range (1.8·10³⁰⁸), besides invalid arguments.

    References
    ----------
    Levi et al., eqs. (8), (14), (19); spec `levi:eq8`, `levi:eq14`, `levi:gd-exact`.
    """
    return _loss_public("train", t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, True)


@cites("levi:eq2", "levi:gen-closed", *_LOSS_IDS)
@V.broadcasting()
def log_loss_gen(t, lam, eta0, *, d_out=1, gamma=0.0, init_scale=1.0, discrete=False, wd_convention="paper"):
    r"""Natural logarithm of the generalisation loss `loss_gen`, plateau included (never underflows).

    .. math:: \log\mathcal L_{\rm gen}(t)=\log\frac{1+\alpha^2}{2d_{\rm out}}+\log\Phi_0(4\eta_0t/d_{\rm out};\lambda)\quad(\gamma=0)

    In words: log((1 + α²)/(2d_out)) + log Φ₀(s) at γ = 0 (for λ > 1 the plateau 1 − 1/λ is included); with
    weight decay the log of eq. 14 with q = 1.

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    gamma : float or array_like
        Weight decay γ ≥ 0, in the convention named by `wd_convention`; default 0 (none). The single value
        5e-324 in the paper convention raises `DomainError` (its half γ/2 rounds to 0).
    init_scale : float or array_like
        α, the scale of the student's initialisation relative to the paper's (S₀ → αS₀); any finite real,
        0 starts the student at zero; default 1. Without weight decay both losses scale by (1 + α²)/2.
    discrete : bool
        False (default): gradient flow. True: the exact loss of discrete gradient descent with step η₀
        (spec `levi:gd-exact`); needs 2η₀(λ₊ + γ/2)/d_out < 2 with λ₊ = (1 + √λ)² (else `DomainError`).
        With γ > 0 and oscillating top modes (2η₀(λ₊ + γ/2)/d_out > 1, the adaptive corner) it also raises
        `DomainError` where the loss is below 10⁻²⁹⁰, where that quadrature underflows (the fixed rule elsewhere
        works in logs).
    wd_convention : {"paper", "torch"}
        Convention of `gamma`. "paper" (default): the paper's γ of eq. (3), whose GD step adds η₀γS/d_out.
        "torch": the `weight_decay` of PyTorch's `SGD` on a mean-reduced MSE, whose step adds η₀γS;
        converted as γ_paper = d_out·γ (spec `levi:conv-wd`).

    Returns
    -------
    float or ndarray
        log L_gen(t), the broadcast shape of the array arguments.

    Raises
    ------
    DomainError
        Where 4η₀t/d_out exceeds the float range (1.8·10³⁰⁸), besides invalid arguments.

    References
    ----------
    Levi et al., eqs. (8), (14); spec `levi:gen-closed`, `levi:eq14`, `levi:gd-exact`.
    """
    return _loss_public("gen", t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, True)
