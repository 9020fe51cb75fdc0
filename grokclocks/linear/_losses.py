"""Levi et al.: exact train / generalisation losses of the MP limit (eqs. 8, 12, 14, 33; discrete GD, init scale)."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from .. import _validate as V
from .. import rmt
from .._mpgrid import _half_gamma
from ..citations import cites
from ._conventions import _d_out, _eta0, _flag, _flow_time, _gamma_paper, _init_scale, _lam, _QUAD_RTOL, _t


def _log_phi(which: str, s: np.ndarray, lam: float) -> np.ndarray:
    """log E[q e^{-s nu}], q = nu (train) or 1 (gen, atom included): closed forms of rmt."""
    if which == "train":
        out = np.asarray(rmt.mp_log_laplace_nu(s, lam), dtype=np.float64)
    else:
        out = np.asarray(rmt.mp_log_laplace(s, lam), dtype=np.float64)
    if np.any(np.isnan(out)):
        bad = float(np.asarray(s, dtype=np.float64)[np.isnan(out)].flat[0])
        raise FloatingPointError(
            f"the Marchenko-Pastur Laplace transform (grokclocks.rmt) returned NaN at s = {bad!r}, lam = {lam!r} "
            f"(which = {which!r}); this s is beyond the range rmt evaluates reliably")
    return out


@functools.lru_cache(maxsize=4096)
def _log_wd_plateau(which: str, lam: float, g: float) -> float:
    r""":math:`\log\big(g^2\,\mathbb E[q/(\nu+g)^2]\big)` (atom included for q=1), g = gamma/2 > 0.

    gen: :math:`g^2m_2(g)`; train: :math:`g^2\,\mathbb E[\nu/(\nu+g)^2]`; both in log space from the
    Stieltjes transform (:func:`grokclocks.rmt._log_wd_plateau`): no underflow of :math:`g^2` at
    :math:`\gamma=10^{-200}` (was "math domain error") nor overflow at :math:`10^{200}` (was NaN).
    """
    return float(rmt._log_wd_plateau(np.float64(g), np.float64(lam), which == "gen"))


def _log_c(alpha: float) -> float:
    """log c_alpha = log((1 + alpha^2)/2), the prefactor of the loss (spec ``levi:init-rescale``), also where alpha^2
    overflows (|alpha| > 1.3e154: log(inf) + log Phi = inf - inf was NaN at init_scale = -1e300 with a vanishing
    Phi)."""
    if abs(alpha) < 1e150:
        return math.log(0.5 * (1.0 + alpha * alpha))
    return 2.0 * math.log(abs(alpha)) - math.log(2.0)  # 1/alpha^2 < 1e-300 below an ulp


def _log_loss_inf(which: str, lam: float, d: float, gamma: float, alpha: float) -> float:
    """log L(t -> infinity) (``-inf`` when the limit is 0); same for gradient flow and GD."""
    if gamma == 0.0:
        if which == "train" or lam <= 1.0:
            return -math.inf
        return _log_c(alpha) + math.log((lam - 1.0) / lam) - math.log(d)
    return _log_wd_plateau(which, lam, _half_gamma(gamma)) - math.log(2.0 * d)


def _check_gd_stable(lam: float, eta: float, d: float, gamma: float) -> None:
    lp = (1.0 + math.sqrt(lam)) ** 2
    rate = 2.0 * eta * (lp + 0.5 * gamma) / d
    if rate >= 2.0:
        bound = d / (lp + 0.5 * gamma)
        raise V.DomainError(
            f"eta0 must be < d_out/(lam_plus + gamma/2) = {bound!r} for discrete=True "
            f"(2 eta (lam_plus + gamma/2)/d_out = {rate!r} >= 2: gradient descent diverges) (got {eta!r})")


def _log_loss_discrete_nowd(which: str, t: float, lam: float, eta: float, d: float, alpha: float) -> float:
    r"""log of (c_α/d) E[q |1 - 2ην/d|^{2t}] (GD-exact, γ = 0), never underflowing."""
    log_c = _log_c(alpha) - math.log(d)
    if t == 0.0:
        return log_c
    b = 2.0 * eta / d
    r = math.sqrt(lam)
    lm, lp = float(rmt._gap(lam)), (1.0 + r) ** 2
    rho_m, rho_p = 1.0 - b * lm, 1.0 - b * lp
    train = which == "train"
    if rho_p >= 0.0 and rho_m > 0.0:
        # |rho| = rho is decreasing and log(rho) concave: factor out the tangent at lam_-, so the
        # remaining integrand g <= q and the exponential shift lets rmt truncate the range.
        log_rho_m = math.log(rho_m)
        shift = 2.0 * t * b / rho_m

        def g(nu):
            x = float(nu)
            rho = 1.0 - b * x
            q = x if train else 1.0
            if rho <= 0.0:
                return 0.0
            return q * math.exp(2.0 * t * (math.log(rho) - log_rho_m) + shift * (x - lm))

        cont = 2.0 * t * log_rho_m + shift * lm + rmt.mp_log_expect_exp(g, shift, lam, include_atom=False,
                                                                           rtol=_QUAD_RTOL)
    else:
        # Oscillating top modes (1 < 2 eta nu/d < 2): normalise by the largest |rho| on the support.
        log_m = math.log(max(abs(rho_m), abs(rho_p)))

        def f(nu):
            x = float(nu)
            a = abs(1.0 - b * x)
            q = x if train else 1.0
            return 0.0 if a == 0.0 else q * math.exp(2.0 * t * (math.log(a) - log_m))

        val = rmt.mp_expect(f, lam, include_atom=False, rtol=_QUAD_RTOL)
        cont = 2.0 * t * log_m + math.log(val) if val > 0 else -math.inf
    if not train and lam > 1.0:
        cont = float(np.logaddexp(cont, math.log(1.0 - 1.0 / lam)))
    return log_c + cont


def _check_discrete_wd_resolved(val: float, t: float, lam: float, gamma: float) -> None:
    """The GD + weight-decay expectation is one quadrature of values that underflow below ~1e-300 (e.g. the
    plateau g^2 E[q/(nu+g)^2] ~ 1e-616 at gamma = 2.2e-308 and t = 1e300: ``log(0)`` raised "math domain
    error"): a ``DomainError`` there rather than a wrong logarithm (gradient flow resolves it in logs)."""
    if not val > 1e-290:
        raise V.DomainError(
            f"the discrete (GD) loss with weight decay is below 1e-290 here (t={t!r}, lam={lam!r}, gamma={gamma!r}), "
            "where its quadrature underflows; valid where the loss is above 1e-290 (discrete=False works in logs)")


def _log_loss_discrete_wd(which: str, t: float, lam: float, eta: float, d: float, gamma: float,
                          alpha: float) -> float:
    r"""log of (1/2d) E[q(α² ρ^{2t} + R²)], ρ = 1 - 2η(ν+g)/d, R = (ρ^t ν + g)/(ν+g) (GD-exact, γ > 0)."""
    g = _half_gamma(gamma)
    b = 2.0 * eta / d
    lp = (1.0 + math.sqrt(lam)) ** 2
    oscillating = 1.0 - b * (lp + g) < 0.0
    if oscillating and not float(t).is_integer():
        raise V.DomainError(
            f"t must be an integer when discrete=True and 2 eta0 (lam_plus + gamma/2)/d_out > 1 "
            f"(modes with 1 - 2 eta0 (nu + gamma/2)/d_out < 0 oscillate) (got {t!r})")
    train = which == "train"
    a2 = alpha * alpha
    ti = int(t) if oscillating else 0

    def parts(nu):
        x = float(nu)
        rho = 1.0 - b * (x + g)
        if t == 0.0:
            pt = 1.0
        elif rho == 0.0:
            pt = 0.0
        elif rho > 0.0:
            pt = math.exp(t * math.log(rho))
        else:
            pt = (-1.0 if ti % 2 else 1.0) * math.exp(t * math.log(-rho))
        ratio = (pt * x + g) / (x + g)
        q = x if train else 1.0
        return q * pt * pt, q * ratio * ratio

    if a2 <= 1e300:
        def f(nu):
            init, rest = parts(nu)
            return a2 * init + rest

        val = rmt.mp_expect(f, lam, include_atom=True, rtol=_QUAD_RTOL)
        _check_discrete_wd_resolved(val, t, lam, gamma)
        return math.log(val) - math.log(2.0 * d)
    # |alpha| > 1e150: alpha^2 E[q rho^2t] apart, in logs (alpha^2 = inf times a zero mode gave NaN at
    # init_scale = -1e300); the loss itself then overflows, its log does not
    init = rmt.mp_expect(lambda nu: parts(nu)[0], lam, include_atom=True, rtol=_QUAD_RTOL)
    rest = rmt.mp_expect(lambda nu: parts(nu)[1], lam, include_atom=True, rtol=_QUAD_RTOL)
    _check_discrete_wd_resolved(rest, t, lam, gamma)
    with np.errstate(divide="ignore"):
        log_init = 2.0 * math.log(abs(alpha)) + (math.log(init) if init > 0.0 else -math.inf)
        log_rest = math.log(rest)
    return float(np.logaddexp(log_init, log_rest)) - math.log(2.0 * d)


def _log_loss_wd(which: str, s: float, lam: float, d: float, gamma: float, alpha: float) -> float:
    r"""log of eq. 14 (gradient flow, γ > 0) as a sum of three non-negative terms.

    With :math:`g=\gamma/2`, :math:`R=(e^{-s(\nu+g)/2}\nu+g)/(\nu+g)` (the spec's
    :math:`1-(1-e^{-\dots})\nu/(\nu+g)`, written without cancellation):

    .. math::
        2d\,\mathcal L=\alpha^2e^{-sg}\Phi_q(s)
        +e^{-sg/2}\,\mathbb E\Big[e^{-s\nu/2}\,\frac{q\,\nu\,(\nu e^{-s(\nu+g)/2}+2g)}{(\nu+g)^2}\Big]
        +g^2\,\mathbb E\Big[\frac{q}{(\nu+g)^2}\Big].
    """
    g = _half_gamma(gamma)
    if math.isinf(g):  # gamma beyond 1.8e308 (torch convention x d_out): R = 1 at s = 0, else 0 and L = plateau
        log_c = _log_c(alpha) + math.log(2.0)  # log(1 + alpha^2)
        return (log_c if s == 0.0 else _log_wd_plateau(which, lam, g)) - math.log(2.0 * d)
    terms = [_log_wd_plateau(which, lam, g)]
    if alpha != 0.0:
        terms.append(2.0 * math.log(abs(alpha)) - s * g + float(_log_phi(which, np.asarray(s), lam)))
    train = which == "train"
    half = 0.5 * s

    def h(nu):
        x = float(nu)
        q = x if train else 1.0
        # q (x/(x+g)) ((x e^{-s(x+g)/2} + 2g)/(x+g)): no (x+g)^2, which overflows at gamma = 1e300
        return q * (x / (x + g)) * ((x * math.exp(-half * (x + g)) + 2.0 * g) / (x + g))

    lt = rmt.mp_log_expect_exp(h, half, lam, include_atom=False, rtol=_QUAD_RTOL)
    terms.append(-half * g + lt)
    return float(special.logsumexp(terms)) - math.log(2.0 * d)


def _log_loss_kernel(which: str, t: np.ndarray, lam: float, eta0: float, d: float, gamma: float,
                     alpha: float, discrete: bool) -> np.ndarray:
    """log L(t) for a 1-d array t and scalar parameters (validated)."""
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    s = _flow_time(eta0, t, d)
    if not np.all(np.isfinite(s)):
        bad = float(t[~np.isfinite(s)][0])
        raise V.DomainError(
            f"4 eta0 t/d_out must be a finite float (<= 1.8e308) (got inf for t = {bad!r}, eta0 = {eta0!r}, "
            f"d_out = {d:g})")
    if discrete:
        _check_gd_stable(lam, eta0, d, gamma)
        if gamma == 0.0:
            return np.array([_log_loss_discrete_nowd(which, float(ti), lam, eta0, d, alpha) for ti in t])
        return np.array([_log_loss_discrete_wd(which, float(ti), lam, eta0, d, gamma, alpha) for ti in t])
    if gamma == 0.0:
        return _log_c(alpha) - math.log(d) + _log_phi(which, s, lam)
    return np.array([_log_loss_wd(which, float(si), lam, d, gamma, alpha) for si in s])


def _log_loss_array(which: str, t: np.ndarray, lam: np.ndarray, eta0: np.ndarray, d: float,
                    gamma: np.ndarray, alpha: np.ndarray, discrete: bool) -> np.ndarray:
    """Broadcast, group equal parameter tuples and vectorise the kernel over t."""
    shape = np.broadcast_shapes(t.shape, lam.shape, eta0.shape, gamma.shape, alpha.shape)
    tb = np.broadcast_to(t, shape).reshape(-1)
    params = [lam, eta0, gamma, alpha]
    if all(p.size == 1 for p in params):
        vals = _log_loss_kernel(which, tb, float(lam.flat[0]), float(eta0.flat[0]), d, float(gamma.flat[0]),
                                float(alpha.flat[0]), discrete)
        return vals.reshape(shape)
    rows = np.stack([np.broadcast_to(p, shape).reshape(-1) for p in params], axis=1)
    uniq, inv = np.unique(rows, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    out = np.empty(tb.shape, dtype=np.float64)
    for k, (la, et, ga, al) in enumerate(uniq):
        sel = inv == k
        out[sel] = _log_loss_kernel(which, tb[sel], float(la), float(et), d, float(ga), float(al), discrete)
    return out.reshape(shape)


def _loss_public(which, t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, log):
    tt = _t(t)
    ll = _lam(lam)
    ee = _eta0(eta0)
    d = _d_out(d_out)
    gg = _gamma_paper(gamma, d, wd_convention)
    aa = _init_scale(init_scale)
    disc = _flag(discrete, "discrete")
    out = _log_loss_array(which, tt, ll, ee, float(d), gg, aa, disc)
    return V.scalar_or_array(out if log else np.exp(out))


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

    evaluated by QAWS quadrature in log space; the ratio is the spec's 1 − (1 − e^(−…))ν/(ν + g) written
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
        With γ > 0 it also raises `DomainError` where the loss is below 10⁻²⁹⁰, where its one quadrature
        underflows.
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
    ≤ 10⁻¹⁴·max(1, |log L|) (that of `grokclocks.rmt.mp_log_laplace_nu`); γ > 0 and `discrete=True` (QAWS
    quadrature, relative tolerance 10⁻¹²), ≤ 10⁻¹².

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
        With γ > 0 it also raises `DomainError` where the loss is below 10⁻²⁹⁰, where its one quadrature
        underflows.
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
        With γ > 0 it also raises `DomainError` where the loss is below 10⁻²⁹⁰, where its one quadrature
        underflows.
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
        With γ > 0 it also raises `DomainError` where the loss is below 10⁻²⁹⁰, where its one quadrature
        underflows.
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
