r"""Linear teacher–student theory of grokking (spec ``levi``: Levi, Beck, Bar-Sinai, ICLR 2024).

A linear student :math:`S` learns a linear teacher :math:`T` from :math:`N_{\rm tr}` Gaussian inputs
in :math:`d_{\rm in}` dimensions by full-batch gradient descent on the mean squared error.  With
:math:`\lambda=d_{\rm in}/N_{\rm tr}` the spectrum of the training Gram matrix follows the
Marchenko–Pastur law (:mod:`grokclocks.rmt`), and the train / generalisation losses are Laplace
transforms of it.  A sample counts as correct when its squared error is below :math:`\epsilon`; the
train accuracy reaches a level (default :math:`\mathrm{erf}\sqrt2\approx95.4\%`) before the
generalisation accuracy does, and the difference of the two crossing times is the grokking time.

Conventions (spec §0): ``t`` counts GD steps, ``eta0`` is the learning rate, the spectral variable is
:math:`s=4\eta_0t/d_{\rm out}`; weight decay ``gamma`` is in the paper's convention unless
``wd_convention="torch"`` (:math:`\gamma_{\rm paper}=d_{\rm out}\gamma_{\rm torch}`).

Contents
--------
* losses: :func:`loss_train`, :func:`loss_gen` (+ ``log_`` variants; exact MP forms, weight decay,
  discrete GD, init scale), finite-spectrum forms, late-time expansions;
* accuracy and thresholds: :func:`accuracy_from_loss`, :func:`loss_threshold`;
* times: :func:`t_star`, :func:`grok_time` (exact, by root finding) and the paper's approximations
  (Lambert W, eq. 25, eq. 11, λ→1);
* weight decay, initialisation scale, label noise, two-layer networks, modular addition;
* figure reproductions ``fig*_table`` (pure math).

Functions never import JAX; simulations live in :mod:`grokclocks.sim.linear`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import optimize, special

from . import _mpgrid, rmt
from . import _validate as V
from ._constants import ERF_SQRT2
from .citations import cites

__all__ = [
    "ERF_SQRT2",
    "gamma_paper_convention",
    "loss_train",
    "loss_gen",
    "log_loss_train",
    "log_loss_gen",
    "loss_train_finite",
    "loss_gen_finite",
    "loss_train_equal_proj",
    "loss_gen_equal_proj",
    "accuracy_from_loss",
    "loss_threshold",
    "t_star",
    "grok_time",
    "grok_time_exact",
    "grok_time_grid",
    "loss_train_late",
    "loss_gen_late",
    "loss_gen_late_simple",
    "t_star_train_lambertw",
    "t_star_gen_lambertw",
    "grok_time_lambertw",
    "grok_time_eq25",
    "grok_time_asymptotic",
    "grok_time_near_one",
    "t_star_gen_critical",
    "dout_max",
    "wd_asymptotes",
    "wd_asymptotes_small_gamma",
    "wd_gamma_max",
    "grok_time_wd_paper",
    "init_scale_factor",
    "effective_eps",
    "loss_train_label_noise",
    "loss_gen_label_noise",
    "loss_two_layer",
    "modular_lambda",
    "fit_inverse_square",
    "fig1_table",
    "fig2_table",
    "fig3_table",
    "fig5_table",
    "fig7_tables",
]


_LOG_SQRT_PI = 0.5 * math.log(math.pi)
# Crossing times are searched up to the largest double (and to where 4 eta0 t/d_out is still one);
# beyond it t_star raises DomainError rather than return a wrong number.
_FLOAT_MAX = float(np.finfo(np.float64).max)
_T_MAX = 0.9 * _FLOAT_MAX
# Relative tolerance of the crossing-time root (spec levi:tstar asks 1e-12; Brent reaches 1e-15 in a few
# more steps, and below that the root is set by the accuracy of log L itself).
_ROOT_RTOL = 1e-15
# Relative tolerance of the MP quadratures used by the weight-decay / discrete / noise paths.
_QUAD_RTOL = 1e-12


# ============================================================================ argument checks


def _lam(lam: Any) -> np.ndarray:
    return V.positive(lam, "lam")


def _lam_below_one(lam: Any, what: str) -> np.ndarray:
    return V.in_open_interval(lam, "lam", 0.0, 1.0, context=f"({what} requires 0 < lam < 1)")


def _lam_not_one(lam: Any, what: str) -> np.ndarray:
    return V.not_equal(_lam(lam), "lam", 1.0, context=f"({what} diverges at lam = 1)")


def _eta0(eta0: Any) -> np.ndarray:
    return V.positive(eta0, "eta0")


def _eps(eps: Any) -> np.ndarray:
    return V.positive(eps, "eps")


def _t(t: Any) -> np.ndarray:
    return V.nonnegative(t, "t")


def _t_late(t: Any) -> np.ndarray:
    return V.positive(t, "t", context="for a late-time expansion")


def _d_out(d_out: Any) -> int:
    return V.integer_at_least(d_out, "d_out", 1)


def _level(level: Any) -> np.ndarray:
    return V.in_open_interval(level, "level", 0.0, 1.0)


def _which(which: Any) -> str:
    return V.choice(which, "which", {"train": "train", "tr": "train", "gen": "gen"})


_flag = V.flag


def _init_scale(alpha: Any) -> np.ndarray:
    return V.finite(alpha, "init_scale")


def _gamma_paper(gamma: Any, d_out: float, wd_convention: Any) -> np.ndarray:
    """THE conversion of a weight decay to the paper convention (spec ``levi:conv-wd``)."""
    conv = V.choice(wd_convention, "wd_convention", ("paper", "torch"))
    g = V.nonnegative(gamma, "gamma")
    return g * float(d_out) if conv == "torch" else g


def _broadcast_apply(func: Callable[..., float], *arrays: np.ndarray) -> np.ndarray:
    """Evaluate a scalar function element-wise over broadcast arrays (root finding, quadrature)."""
    bs = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in arrays])
    out = np.empty(bs[0].shape, dtype=np.float64)
    flat = [b.reshape(-1) for b in bs]
    res = out.reshape(-1)
    for i in range(res.size):
        res[i] = func(*(float(f[i]) for f in flat))
    return out


# ============================================================================ conventions


@cites("levi:conv-wd")
def gamma_paper_convention(gamma, *, d_out=1, wd_convention="paper"):
    r"""Weight decay converted to the paper's convention (the one used by every function here).

    .. math:: \gamma_{\rm paper}=\begin{cases}\gamma & \text{wd\_convention="paper"}\\
        d_{\rm out}\,\gamma & \text{wd\_convention="torch"}\end{cases}

    Paper eq. (3) adds :math:`\eta\gamma S/d_{\rm out}` per step (the gradient of
    :math:`\mathcal L_{\rm tr}+\frac{\gamma}{2d_{\rm out}}\|S\|_F^2`); PyTorch ``SGD(weight_decay=γ_t)``
    on a mean-reduced MSE adds :math:`\eta\gamma_tS`.  The two agree for :math:`d_{\rm out}=1`.

    Parameters
    ----------
    gamma : float or array_like
        Weight decay, :math:`\gamma\ge0`, in the convention named by ``wd_convention``.
    d_out : int
        Output dimension, integer :math:`\ge1`.
    wd_convention : {"paper", "torch"}
        Convention of ``gamma``.

    Returns
    -------
    float or ndarray
        :math:`\gamma` in the paper convention.

    References
    ----------
    Levi et al., eq. (3); spec ``levi:conv-wd``.
    """
    d = _d_out(d_out)
    return V.scalar_or_array(_gamma_paper(gamma, d, wd_convention))


# ============================================================================ loss kernels


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


def _log_loss_inf(which: str, lam: float, d: float, gamma: float, alpha: float) -> float:
    """log L(t -> infinity) (``-inf`` when the limit is 0); same for gradient flow and GD."""
    if gamma == 0.0:
        if which == "train" or lam <= 1.0:
            return -math.inf
        return math.log(0.5 * (1.0 + alpha * alpha)) + math.log((lam - 1.0) / lam) - math.log(d)
    return _log_wd_plateau(which, lam, 0.5 * gamma) - math.log(2.0 * d)


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
    c = 0.5 * (1.0 + alpha * alpha)
    if t == 0.0:
        return math.log(c / d)
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
    return math.log(c / d) + cont


def _log_loss_discrete_wd(which: str, t: float, lam: float, eta: float, d: float, gamma: float,
                          alpha: float) -> float:
    r"""log of (1/2d) E[q(α² ρ^{2t} + R²)], ρ = 1 - 2η(ν+g)/d, R = (ρ^t ν + g)/(ν+g) (GD-exact, γ > 0)."""
    g = 0.5 * gamma
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

    def f(nu):
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
        return q * (a2 * pt * pt + ratio * ratio)

    val = rmt.mp_expect(f, lam, include_atom=True, rtol=_QUAD_RTOL)
    return math.log(val / (2.0 * d))


def _log_loss_wd(which: str, s: float, lam: float, d: float, gamma: float, alpha: float) -> float:
    r"""log of eq. 14 (gradient flow, γ > 0) as a sum of three non-negative terms.

    With :math:`g=\gamma/2`, :math:`R=(e^{-s(\nu+g)/2}\nu+g)/(\nu+g)` (the spec's
    :math:`1-(1-e^{-\dots})\nu/(\nu+g)`, written without cancellation):

    .. math::
        2d\,\mathcal L=\alpha^2e^{-sg}\Phi_q(s)
        +e^{-sg/2}\,\mathbb E\Big[e^{-s\nu/2}\,\frac{q\,\nu\,(\nu e^{-s(\nu+g)/2}+2g)}{(\nu+g)^2}\Big]
        +g^2\,\mathbb E\Big[\frac{q}{(\nu+g)^2}\Big].
    """
    g = 0.5 * gamma
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
    with np.errstate(over="ignore"):
        s = 4.0 * eta0 * t / d
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
        c = 0.5 * (1.0 + alpha * alpha)
        return math.log(c / d) + _log_phi(which, s, lam)
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
def loss_train(t, lam, eta0, *, d_out=1, gamma=0.0, init_scale=1.0, discrete=False, wd_convention="paper"):
    r"""Training loss of the linear student in the large-size (Marchenko–Pastur) limit.

    .. math::
        \mathcal L_{\rm tr}(t)=\frac{1+\alpha^2}{2d_{\rm out}}\,\Phi_1\!\Big(\frac{4\eta_0t}{d_{\rm out}};\lambda\Big),
        \qquad\Phi_1(s)=\mathbb E[\nu e^{-s\nu}]=e^{-s(1+\lambda)}\frac{I_1(2s\sqrt\lambda)}{s\sqrt\lambda}

    (:math:`\gamma=0`, gradient flow).  With weight decay :math:`\gamma>0` (paper convention, eq. 14):

    .. math::
        \mathcal L_{\rm tr}=\frac1{2d_{\rm out}}\mathbb E\Big[\nu\Big(\alpha^2e^{-s(\nu+g)}
        +\Big(\frac{e^{-s(\nu+g)/2}\nu+g}{\nu+g}\Big)^2\Big)\Big],\quad g=\frac\gamma2,\ s=\frac{4\eta_0t}{d_{\rm out}},

    by QAWS quadrature (log space); the ratio is the spec's :math:`1-(1-e^{-\dots})\nu/(\nu+g)`
    written without cancellation.  ``discrete=True`` gives the exact GD value (``eta0`` is the GD
    step): :math:`e^{-s(\nu+g)/2}\to(1-2\eta_0(\nu+g)/d_{\rm out})^t`.

    Parameters
    ----------
    t : float or array_like
        Number of GD steps, :math:`t\ge0` (real).
    lam : float or array_like
        :math:`\lambda=d_{\rm in}/N_{\rm tr}>0`.
    eta0 : float or array_like
        Learning rate :math:`\eta_0>0`.
    d_out : int
        Output dimension, integer :math:`\ge1`.
    gamma : float or array_like
        Weight decay :math:`\gamma\ge0` (convention: ``wd_convention``).
    init_scale : float or array_like
        Student init scale :math:`\alpha` (:math:`S_0\to\alpha S_0`; any real, 0 allowed).
    discrete : bool
        Exact discrete GD instead of gradient flow; needs
        :math:`2\eta_0(\lambda_++\gamma/2)/d_{\rm out}<2` (else ``DomainError``).
    wd_convention : {"paper", "torch"}
        Convention of ``gamma`` (spec ``levi:conv-wd``).

    Returns
    -------
    float or ndarray
        :math:`\mathcal L_{\rm tr}(t)` (underflows to 0 at very late times: use :func:`log_loss_train`).

    Raises
    ------
    DomainError
        Where :math:`4\eta_0t/d_{\rm out}` exceeds the float range (1.8e308), besides invalid arguments.

    Notes
    -----
    Accuracy (``docs/accuracy.md``, :math:`t,\eta_0\in[10^{-308},10^{300}]`, :math:`\lambda\in[10^{-308},10^{300}]`):
    :math:`\gamma=0` relative error <= 1e-14 max(1, |log L|) (that of :func:`grokclocks.rmt.mp_log_laplace_nu`);
    :math:`\gamma>0` and ``discrete=True`` (QAWS quadrature, ``rtol`` 1e-12) <= 1e-12.

    References
    ----------
    Levi et al., eqs. (8), (12), (14), (19); spec ``levi:eq8``, ``levi:eq14``, ``levi:gd-exact``.
    """
    return _loss_public("train", t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, False)


@cites("levi:eq2", "levi:gen-closed", "levi:eq20", "levi:conv-data", *_LOSS_IDS)
def loss_gen(t, lam, eta0, *, d_out=1, gamma=0.0, init_scale=1.0, discrete=False, wd_convention="paper"):
    r"""Generalisation loss of the linear student in the large-size (Marchenko–Pastur) limit.

    .. math::
        \mathcal L_{\rm gen}(t)=\frac{1+\alpha^2}{2d_{\rm out}}\,\Phi_0\!\Big(\frac{4\eta_0t}{d_{\rm out}};\lambda\Big),
        \qquad\Phi_0(s)=\mathbb E[e^{-s\nu}]\ \text{(closed form with Marcum Q, atom included)}

    (:math:`\gamma=0`).  :math:`\mathcal L_{\rm gen}(0)=(1+\alpha^2)/(2d_{\rm out})`,
    :math:`\mathcal L_{\rm gen}(\infty)=(1+\alpha^2)(1-1/\lambda)^+/(2d_{\rm out})`, and
    :math:`d\mathcal L_{\rm gen}/dt=-(4\eta_0/d_{\rm out})\mathcal L_{\rm tr}` (eq. 20, γ=0, gradient flow).
    With weight decay, eq. 14 with :math:`q=1` (see :func:`loss_train`); ``discrete=True``: exact GD.

    Parameters
    ----------
    t : float or array_like
        Number of GD steps, :math:`t\ge0`.
    lam : float or array_like
        :math:`\lambda>0`.
    eta0 : float or array_like
        Learning rate :math:`\eta_0>0`.
    d_out : int
        Output dimension, integer :math:`\ge1`.
    gamma : float or array_like
        Weight decay :math:`\gamma\ge0`.
    init_scale : float or array_like
        Student init scale :math:`\alpha` (real).
    discrete : bool
        Exact discrete GD (needs :math:`2\eta_0(\lambda_++\gamma/2)/d_{\rm out}<2`).
    wd_convention : {"paper", "torch"}
        Convention of ``gamma``.

    Returns
    -------
    float or ndarray
        :math:`\mathcal L_{\rm gen}(t)`.

    Raises
    ------
    DomainError
        Where :math:`4\eta_0t/d_{\rm out}` exceeds the float range (1.8e308), besides invalid arguments.

    Notes
    -----
    Accuracy (``docs/accuracy.md``): :math:`\gamma=0` relative error <= 2e-14 max(1, |log L|) (that of
    :func:`grokclocks.rmt.mp_log_laplace`, every :math:`\lambda\in[10^{-308},10^{300}]`, including
    :math:`\lambda\to0`, where the former closed form gave 512 for a loss below 1); :math:`\gamma>0` and
    ``discrete=True`` <= 1e-12.

    References
    ----------
    Levi et al., eqs. (8), (12), (14), (20); closed form: spec ``levi:gen-closed``.
    """
    return _loss_public("gen", t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, False)


@cites("levi:eq1", "levi:eq19", *_LOSS_IDS)
def log_loss_train(t, lam, eta0, *, d_out=1, gamma=0.0, init_scale=1.0, discrete=False, wd_convention="paper"):
    r"""Natural logarithm of :func:`loss_train` (never underflows).

    .. math:: \log\mathcal L_{\rm tr}(t)=\log\frac{1+\alpha^2}{2d_{\rm out}}+\log\Phi_1(4\eta_0t/d_{\rm out};\lambda)\quad(\gamma=0)

    Parameters
    ----------
    t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention
        As in :func:`loss_train` (same domains).

    Returns
    -------
    float or ndarray
        :math:`\log\mathcal L_{\rm tr}(t)`.

    References
    ----------
    Levi et al., eqs. (8), (14), (19).
    """
    return _loss_public("train", t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, True)


@cites("levi:eq2", "levi:gen-closed", *_LOSS_IDS)
def log_loss_gen(t, lam, eta0, *, d_out=1, gamma=0.0, init_scale=1.0, discrete=False, wd_convention="paper"):
    r"""Natural logarithm of :func:`loss_gen`, plateau included (never underflows).

    .. math:: \log\mathcal L_{\rm gen}(t)=\log\frac{1+\alpha^2}{2d_{\rm out}}+\log\Phi_0(4\eta_0t/d_{\rm out};\lambda)\quad(\gamma=0)

    Parameters
    ----------
    t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention
        As in :func:`loss_gen`.

    Returns
    -------
    float or ndarray
        :math:`\log\mathcal L_{\rm gen}(t)`.

    References
    ----------
    Levi et al., eqs. (8), (14); spec ``levi:gen-closed``.
    """
    return _loss_public("gen", t, lam, eta0, d_out, gamma, init_scale, discrete, wd_convention, True)


# ============================================================================ finite spectra


def _spectrum(eigvals: Any) -> np.ndarray:
    """1-d eigenvalues >= 0; round-off negatives (> -1e-10 max|nu|) are clipped to 0."""
    nu = V.as_float_array(eigvals, "eigvals")
    if nu.ndim != 1:
        raise V.DomainError(f"eigvals must be a 1-d array (got shape {nu.shape})")
    scale = float(np.max(np.abs(nu)))
    tol = V.roundoff_tol(eigvals, nu.size, floor=1e-10) * scale  # float32 spectra at their own precision
    bad = nu < -tol
    if np.any(bad):
        raise V.DomainError(f"eigvals must be >= 0 (eigenvalues of a Gram matrix) (got {float(nu[bad][0])!r})")
    return np.maximum(nu, 0.0)


def _finite_loss(which, t, eigvals, proj_sq, eta0, d_out, discrete):
    tt = _t(t)
    nu = _spectrum(eigvals)
    w = V.nonnegative(proj_sq, "proj_sq")
    if w.shape != nu.shape:
        raise V.DomainError(f"proj_sq must have the shape of eigvals {nu.shape} (got {w.shape})")
    eta = float(np.asarray(V.positive(eta0, "eta0")).reshape(-1)[0]) if np.ndim(eta0) == 0 else None
    if eta is None:
        raise V.DomainError("eta0 must be a scalar for the finite-spectrum losses")
    d = float(_d_out(d_out))
    disc = _flag(discrete, "discrete")
    q = nu if which == "train" else np.ones_like(nu)
    b = 2.0 * eta / d
    tf = tt.reshape(-1, 1)
    if disc:
        if np.any(b * nu >= 2.0):
            raise V.DomainError(
                f"eta0 must be < d_out/max(eigvals) = {d / float(nu.max())!r} for discrete=True "
                f"(gradient descent diverges) (got {eta!r})")
        a = np.abs(1.0 - b * nu)
        with np.errstate(divide="ignore"):
            la = np.log(a)
        # 0^(2t): 1 at t = 0, 0 otherwise
        expo = np.where(tf == 0.0, 0.0, 2.0 * tf * la)
    else:
        expo = -2.0 * b * tf * nu  # = -s nu with s = 4 eta0 t/d
    weight = w * q
    with np.errstate(divide="ignore"):
        vals = special.logsumexp(expo, b=np.broadcast_to(weight, expo.shape), axis=1)
    out = np.exp(vals) / d
    return V.scalar_or_array(out.reshape(tt.shape))


@cites("levi:eq5", "levi:eq4", "levi:eq1", "levi:gd-exact", "levi:eq3", "levi:eq13")
def loss_train_finite(t, eigvals, proj_sq, eta0, *, d_out=1, discrete=False):
    r"""Exact training loss of one finite problem from the spectrum of :math:`\Sigma_{\rm tr}` and the projections of :math:`D_0`.

    .. math::
        \mathcal L_{\rm tr}(t)=\frac1{d_{\rm out}}\sum_iw_i\,\nu_i\,e^{-4\eta_0\nu_it/d_{\rm out}},\qquad
        w_i=\|(V^\top D_0)_{i,:}\|^2

    (gradient flow, eq. 5); ``discrete=True`` replaces :math:`e^{-s\nu_i}` by
    :math:`(1-2\eta_0\nu_i/d_{\rm out})^{2t}`, which is exact for GD at integer ``t``.

    Parameters
    ----------
    t : float or array_like
        GD steps, :math:`t\ge0`.
    eigvals : array_like, 1-d
        Eigenvalues :math:`\nu_i\ge0` of :math:`\Sigma_{\rm tr}=X^\top X/N_{\rm tr}` (round-off
        negatives down to :math:`-10^{-10}\max|\nu|` are set to 0).
    proj_sq : array_like, 1-d
        :math:`w_i\ge0`, same shape as ``eigvals``.
    eta0 : float
        Learning rate :math:`>0` (scalar).
    d_out : int
        Output dimension, :math:`\ge1`.
    discrete : bool
        GD instead of gradient flow (needs :math:`2\eta_0\max\nu/d_{\rm out}<2`).

    Returns
    -------
    float or ndarray
        :math:`\mathcal L_{\rm tr}(t)`, shape of ``t``.

    References
    ----------
    Levi et al., eqs. (4), (5); spec ``levi:eq5``, ``levi:gd-exact``.
    """
    return _finite_loss("train", t, eigvals, proj_sq, eta0, d_out, discrete)


@cites("levi:eq5", "levi:eq4", "levi:eq2", "levi:gd-exact", "levi:eq3", "levi:eq13")
def loss_gen_finite(t, eigvals, proj_sq, eta0, *, d_out=1, discrete=False):
    r"""Exact generalisation loss :math:`\|D_t\|_F^2/d_{\rm out}` of one finite problem.

    .. math:: \mathcal L_{\rm gen}(t)=\frac1{d_{\rm out}}\sum_iw_i\,e^{-4\eta_0\nu_it/d_{\rm out}}

    (``discrete=True``: :math:`(1-2\eta_0\nu_i/d_{\rm out})^{2t}`).  Zero modes never move.

    Parameters
    ----------
    t, eigvals, proj_sq, eta0, d_out, discrete
        As in :func:`loss_train_finite`.

    Returns
    -------
    float or ndarray
        :math:`\mathcal L_{\rm gen}(t)`.

    References
    ----------
    Levi et al., eqs. (4), (5); spec ``levi:eq5``.
    """
    return _finite_loss("gen", t, eigvals, proj_sq, eta0, d_out, discrete)


def _equal_proj(which, t, eigvals, eta0, d_out, D0_sq):
    nu = _spectrum(eigvals)
    d0 = V.nonnegative(D0_sq, "D0_sq", scalar=True) if np.ndim(D0_sq) == 0 else None
    if d0 is None:
        raise V.DomainError("D0_sq must be a scalar")
    w = np.full(nu.shape, d0 / nu.size)
    return _finite_loss(which, t, nu, w, eta0, d_out, False)


@cites("levi:eq7")
def loss_train_equal_proj(t, eigvals, eta0, *, d_out=1, D0_sq=1.0):
    r"""Training loss of a finite spectrum with equal projections :math:`w_i=\|D_0\|_F^2/d_{\rm in}`.

    .. math:: \mathcal L_{\rm tr}\approx\frac{\|D_0\|_F^2}{d_{\rm out}d_{\rm in}}\sum_i\nu_ie^{-4\eta_0\nu_it/d_{\rm out}}

    Parameters
    ----------
    t : float or array_like
        :math:`t\ge0`.
    eigvals : array_like, 1-d
        Eigenvalues :math:`\nu_i\ge0` (:math:`d_{\rm in}` = their number).
    eta0 : float
        :math:`\eta_0>0`.
    d_out : int
        :math:`\ge1`.
    D0_sq : float
        :math:`\|D_0\|_F^2\ge0` (1 in expectation at the paper's init).

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eq. (7).
    """
    return _equal_proj("train", t, eigvals, eta0, d_out, D0_sq)


@cites("levi:eq7")
def loss_gen_equal_proj(t, eigvals, eta0, *, d_out=1, D0_sq=1.0):
    r"""Generalisation loss of a finite spectrum with equal projections :math:`w_i=\|D_0\|_F^2/d_{\rm in}`.

    .. math:: \mathcal L_{\rm gen}\approx\frac{\|D_0\|_F^2}{d_{\rm out}d_{\rm in}}\sum_ie^{-4\eta_0\nu_it/d_{\rm out}}

    Parameters
    ----------
    t, eigvals, eta0, d_out, D0_sq
        As in :func:`loss_train_equal_proj`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eq. (7).
    """
    return _equal_proj("gen", t, eigvals, eta0, d_out, D0_sq)


# ============================================================================ accuracy and threshold


@cites("levi:eq9", "levi:eq12-acc", "levi:conv-acc")
def accuracy_from_loss(L, eps, d_out=1):
    r"""Fraction of samples whose mean squared error is below :math:`\epsilon`, for Gaussian errors of loss :math:`\mathcal L`.

    .. math::
        \mathcal A=P\Big(\frac{d_{\rm out}}2,\frac{d_{\rm out}\epsilon}{2\mathcal L}\Big)
        =1-\frac{\Gamma(\frac{d_{\rm out}}2,\frac{d_{\rm out}\epsilon}{2\mathcal L})}{\Gamma(\frac{d_{\rm out}}2)},
        \qquad d_{\rm out}=1:\ \mathcal A=\mathrm{erf}\sqrt{\frac{\epsilon}{2\mathcal L}}

    (:math:`P` = regularised lower incomplete gamma).  :math:`\mathcal L` is the *variance* of each
    error component (the paper says "standard deviation"), and the map assumes isotropic errors.

    Parameters
    ----------
    L : float or array_like
        Loss :math:`\mathcal L\ge0` (:math:`\mathcal L=0` gives accuracy 1).
    eps : float or array_like
        Threshold :math:`\epsilon>0`.
    d_out : int
        Output dimension, integer :math:`\ge1`.

    Returns
    -------
    float or ndarray
        Accuracy in :math:`[0,1]`.

    References
    ----------
    Levi et al., eqs. (9), (12) (with the argument order of :math:`\Gamma(a,z)` corrected).
    """
    LL = V.nonnegative(L, "L")
    ee = _eps(eps)
    d = _d_out(d_out)
    LL, ee = np.broadcast_arrays(LL, ee)
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        x = d * ee / (2.0 * LL)  # +inf where L = 0 or the ratio overflows: P(a, inf) = 1
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
    return math.log(d) + math.log(eps) - math.log(2.0) - math.log(float(special.gammaincinv(0.5 * d, level)))


def _lstar(eps: float, d: float, level: float) -> float:
    if d == 1.0:
        return eps / (2.0 * float(special.erfinv(level)) ** 2)
    return d * eps / (2.0 * float(special.gammaincinv(0.5 * d, level)))


@cites("levi:lstar", "levi:conv-acc")
def loss_threshold(eps, d_out=1, level=ERF_SQRT2):
    r"""Loss below which the accuracy of :func:`accuracy_from_loss` exceeds ``level``.

    .. math::
        \mathcal L^*=\frac{d_{\rm out}\,\epsilon}{2\,P^{-1}(d_{\rm out}/2,\ \ell)};\qquad
        d_{\rm out}=1,\ \ell=\mathrm{erf}\sqrt2:\ \mathcal L^*=\epsilon/4

    (:math:`d_{\rm out}=1` is evaluated as :math:`\epsilon/(2\,\mathrm{erfinv}(\ell)^2)`, exact to 1 ulp).

    Parameters
    ----------
    eps : float or array_like
        :math:`\epsilon>0`.
    d_out : int
        :math:`\ge1`.
    level : float or array_like
        Accuracy level in :math:`(0,1)`; default :data:`ERF_SQRT2`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``levi:lstar`` (App. B of Levi et al.).
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
    if math.log(0.5 * (1.0 + alpha * alpha)) - math.log(d) <= log_lstar:  # L(0) = (1+α²)/(2 d_out)
        return 0.0

    def f(t: float) -> float:
        return float(_log_loss_kernel(which, np.array([t]), lam, eta0, d, gamma, alpha, discrete)[0]) - log_lstar

    # The largest t at which s = 4 eta0 t/d_out is a finite double (0.9 of the float range).
    t_cap = min(_T_MAX, 0.9 * _FLOAT_MAX / (4.0 * eta0) * d)
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
    decreasing ``f`` with ``f(0+) > 0``.  Galloping in the exponent from ``t = 1`` (1, 2, 4, 16, 256, ...),
    then bisection of the exponent: at most ~25 evaluations over the whole float range.  ``(0.0, tiny)``
    if ``f <= 0`` already at the smallest subnormal; ``(lo, None)`` if ``f(t_cap) > 0``."""
    tiny = 5e-324
    e_cap = math.log2(t_cap)
    if f(1.0) > 0.0:
        e_lo, step = 0.0, 1.0
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
        e_hi, step = 0.0, 1.0
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
def t_star(which, lam, eps, eta0, *, d_out=1, gamma=0.0, level=ERF_SQRT2, init_scale=1.0, discrete=False,
           wd_convention="paper"):
    r"""Exact time at which the train or generalisation accuracy reaches ``level`` (root finding).

    .. math:: t^*:\quad \log\mathcal L(t^*)=\log\mathcal L^*(\epsilon,d_{\rm out},\ell)

    Bracketed by galloping in the exponent of :math:`t` from 1 (1, 2, 4, 16, 256, ...; over the whole
    float range, :math:`2^{-1074}` to :math:`1.6\cdot10^{308}`) and bisecting the exponent, then Brent's
    method on the log-space loss in :math:`[2^k,2^{k+1}]` (relative tolerance :math:`10^{-15}`; the spec
    asks :math:`10^{-12}`).  Returns ``math.inf`` if the asymptote
    :math:`\mathcal L(\infty)\ge\mathcal L^*` (checked first; e.g. :math:`\lambda>1` with a plateau
    above the threshold, or weight decay beyond :func:`wd_gamma_max`), and ``0.0`` if
    :math:`\mathcal L(0)\le\mathcal L^*`.

    Parameters
    ----------
    which : {"train", "tr", "gen"}
        Which accuracy.
    lam : float or array_like
        :math:`\lambda>0`.
    eps : float or array_like
        :math:`\epsilon>0`.
    eta0 : float or array_like
        :math:`\eta_0>0`.
    d_out : int
        :math:`\ge1`.
    gamma : float or array_like
        Weight decay :math:`\ge0`.
    level : float or array_like
        Accuracy level in :math:`(0,1)`.
    init_scale : float or array_like
        Student init scale :math:`\alpha`.
    discrete : bool
        Exact GD losses (``levi:gd-exact``).
    wd_convention : {"paper", "torch"}

    Returns
    -------
    float or ndarray
        :math:`t^*` in GD steps (real-valued), ``inf`` or ``0.0`` as above (also 0.0 where
        :math:`t^*<5\cdot10^{-324}`, its correctly rounded value).

    Raises
    ------
    DomainError
        Where :math:`t^*` or :math:`4\eta_0t^*/d_{\rm out}` exceeds :math:`1.6\cdot10^{308}` (e.g.
        :math:`\lambda=1`, :math:`\epsilon=10^{-300}`: :math:`t^*\sim10^{600}`), besides invalid arguments.

    Notes
    -----
    Accuracy (``docs/accuracy.md``, :math:`\gamma=0`): relative error <= 1e-13, or an absolute error
    <= 1e-15 max(1, |log L*|) d_out/(4 eta0) (the rounding of :math:`\log\mathcal L^*` itself, which
    dominates only when :math:`t^*` is tiny), for :math:`\lambda\in[10^{-308},10^{300}]`,
    :math:`\epsilon,\eta_0\in[10^{-308},10^{300}]`.

    References
    ----------
    Spec ``levi:tstar``, ``levi:grok-def``.
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
    s_t = 4.0 * eta0 * t_train / d
    q = rmt._phi0_excess(s_t, lam)

    def ratio(u: float) -> float:
        return math.exp(rmt._log_phi1_increment(s_t, u, lam))

    ds = q
    for _ in range(100):
        integral = rmt._quad(ratio, 0.0, ds, epsabs=0.0, epsrel=2e-14, limit=200)
        step = (q - integral) / ratio(ds)
        ds += step
        if abs(step) <= 1e-15 * ds:
            break
    else:  # pragma: no cover - Newton on a concave function from below converges; loud if not
        raise RuntimeError(f"grok_time: the small-lam delay did not converge (lam={lam!r}, t_train={t_train!r})")
    return ds * d / (4.0 * eta0)


@cites("levi:grok-def", "levi:tstar")
def grok_time(lam, eps, eta0, *, d_out=1, gamma=0.0, level=ERF_SQRT2, init_scale=1.0, discrete=False,
              wd_convention="paper"):
    r"""Exact grokking time: generalisation crossing minus train crossing.

    .. math:: \Delta t_{\rm grok}=t^*_{\rm gen}-t^*_{\rm tr}

    with both crossings from :func:`t_star`.  :math:`+\infty` when only the generalisation accuracy
    never reaches the level, ``nan`` when neither does (both documented, spec ``levi:grok-def``).

    For :math:`\gamma=0`, gradient flow and :math:`\lambda\le1/4` the delay is computed as its own root
    (:math:`\int_0^{\Delta s}\Phi_1(s_t+u)du=\Phi_0(s_t)-\Phi_1(s_t)`, both sides free of cancellation),
    not as :math:`t^*_{\rm gen}-t^*_{\rm tr}`: the two agree to ~:math:`\lambda` relative, and the
    difference gave 0 at :math:`\lambda=10^{-20}` (exact: :math:`207.35\lambda` at :math:`\epsilon=10^{-3}`,
    :math:`\eta_0=0.01`).  Accuracy (``docs/accuracy.md``): :math:`\gamma=0` relative error <= 1e-12
    for every :math:`\lambda\in[10^{-308},1]`; :math:`\gamma>0` it is a difference of two crossing
    times, relative error <= 1e-11 + 1e-13/λ.

    Parameters
    ----------
    lam, eps, eta0, d_out, gamma, level, init_scale, discrete, wd_convention
        As in :func:`t_star`.

    Returns
    -------
    float or ndarray
        :math:`\Delta t_{\rm grok}` in GD steps.

    Raises
    ------
    DomainError
        As :func:`t_star` (a crossing time beyond :math:`1.6\cdot10^{308}`).

    References
    ----------
    Spec ``levi:grok-def``, ``levi:tstar``; Levi et al. Fig. 1.
    """
    ll, ee, et, d, gg, lv, aa, disc = _time_args(lam, eps, eta0, d_out, gamma, level, init_scale, discrete,
                                                 wd_convention)
    out = _broadcast_apply(lambda la, e, h, g, l_, a: _grok_time_scalar(la, e, h, d, g, l_, a, disc),
                           ll, ee, et, gg, lv, aa)
    return V.scalar_or_array(out)


#: Alias of :func:`grok_time` named for what it is (the exact root-finding value).
grok_time_exact = grok_time


# ============================================================================ late-time expansions


def _late_common(t, lam, eta0, d_out, what):
    tt = _t_late(t)
    ll = _lam_not_one(lam, what)
    et = _eta0(eta0)
    d = float(_d_out(d_out))
    tt, ll, et = np.broadcast_arrays(tt, ll, et)
    # s = 4 eta0 t/d_out and x = s lam_- from their logarithms: s itself under/overflows for t, eta0 near
    # 1e+-300 (loss_gen_late returned inf at t = eta0 = 1e-308, lam = 1e300: x = 4e-316 is fine)
    a = rmt._gap(ll)
    with np.errstate(over="ignore", under="ignore"):
        s = 4.0 * et * tt / d
        normal = (s > 2.3e-308) & np.isfinite(s)
        # s itself where it is a normal double (x = s a then has 2 ulps; exp(log s + log a) carried
        # |log s| + |log a| ulps into the exponent x: 3e-12 at x = 677)
        log_s = np.where(normal, np.log(np.where(normal, s, 1.0)),
                         math.log(4.0) + np.log(et) + np.log(tt) - math.log(d))
        x = np.where(normal, s * a, np.exp(log_s + np.log(a)))
    return log_s, x, ll, a, d


def _log_train_late0(log_s, x, lam):
    return -x - math.log(2.0) - _LOG_SQRT_PI - 0.75 * np.log(lam) - 1.5 * log_s


@cites("levi:eq21", "levi:fig5")
def loss_train_late(t, lam, eta0, *, d_out=1, order=0):
    r"""Late-time expansion of the training loss (paper eq. 21, plus its first correction).

    .. math::
        \mathcal L_{\rm tr}\simeq\frac{e^{-4\eta_0(1-\sqrt\lambda)^2t}}{16\sqrt\pi\,\lambda^{3/4}(\eta_0t)^{3/2}}
        \Big[1-\frac{3}{64\,\eta_0t\sqrt\lambda}\Big]_{\text{order}=1}

    (:math:`d_{\rm out}>1`: :math:`\frac1{d_{\rm out}}\mathcal L^{(1)}(\eta_0/d_{\rm out},t)`).  Valid for
    :math:`8\eta_0t\sqrt\lambda/d_{\rm out}\gg1`; relative error of the leading term
    :math:`\approx3d_{\rm out}/(64\eta_0t\sqrt\lambda)`.  For :math:`\lambda>1` it is the whole train loss too.

    Parameters
    ----------
    t : float or array_like
        :math:`t>0`.
    lam : float or array_like
        :math:`\lambda>0`, :math:`\lambda\ne1`.
    eta0 : float or array_like
        :math:`\eta_0>0`.
    d_out : int
        :math:`\ge1`.
    order : {0, 1}
        0: the paper's leading term; 1: with the :math:`1-3/(64\eta_0t\sqrt\lambda)` correction.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eq. (21); spec ``levi:eq21``.
    """
    o = V.integer_at_least(order, "order", 0)
    if o > 1:
        raise V.DomainError(f"order must be 0 or 1 (got {o})")
    log_s, x, ll, a, d = _late_common(t, lam, eta0, d_out, "the late-time expansion (eq. 21)")
    with np.errstate(under="ignore", over="ignore"):  # 0 / inf only where the value itself is beyond float64
        val = np.exp(_log_train_late0(log_s, x, ll)) / d
        if o == 1:
            val = val * (1.0 - 3.0 / 16.0 * np.exp(-log_s - 0.5 * np.log(ll)))
    return V.scalar_or_array(val)


def _erfc_bracket(x: np.ndarray) -> np.ndarray:
    r""":math:`\pi^{-1/2}-\sqrt x\,\mathrm{erfcx}(\sqrt x)` for x > 0; asymptotic series beyond 1e3."""
    x = np.asarray(x, dtype=np.float64)
    big = x > 1e3
    xs = np.where(big, 1.0, x)
    direct = 1.0 / math.sqrt(math.pi) - np.sqrt(xs) * special.erfcx(np.sqrt(xs))
    xb = np.where(big, x, 1e3)
    # pi^{-1/2} sum_{n>=1} (-1)^{n+1} (2n-1)!! / (2x)^n, 7 terms (error < 1e-17 relative at x = 1e3)
    series = np.zeros_like(xb)
    coef = 1.0
    for n in range(1, 8):
        coef = coef * (2 * n - 1)
        series = series + (-1) ** (n + 1) * coef / (2.0 * xb) ** n
    series = series / math.sqrt(math.pi)
    return np.where(big, series, direct)


@cites("levi:eq22", "levi:fig5")
def loss_gen_late(t, lam, eta0, *, d_out=1):
    r"""Late-time generalisation loss: eq. 21 integrated in time (paper eq. 22).

    .. math::
        \mathcal L_{\rm gen}\simeq\frac{e^{-4\eta_0(1-\sqrt\lambda)^2t}}{2\sqrt\pi\,\lambda^{3/4}\sqrt{\eta_0t}}
        -\frac{|1-\sqrt\lambda|\,\Gamma\big(\tfrac12,4\eta_0t(1-\sqrt\lambda)^2\big)}{\sqrt\pi\,\lambda^{3/4}}
        \;\Big[+\Big(1-\frac1\lambda\Big)\ \text{for}\ \lambda>1\Big]

    evaluated as :math:`\frac{e^{-x}}{\lambda^{3/4}\sqrt s}[\pi^{-1/2}-\sqrt x\,\mathrm{erfcx}\sqrt x]`,
    :math:`s=4\eta_0t`, :math:`x=sa` (asymptotic series of the bracket for :math:`x>10^3`);
    :math:`d_{\rm out}` rule as in :func:`loss_train_late`.

    Parameters
    ----------
    t : float or array_like
        :math:`t>0`.
    lam : float or array_like
        :math:`\lambda>0`, :math:`\lambda\ne1`.
    eta0 : float or array_like
        :math:`\eta_0>0`.
    d_out : int
        :math:`\ge1`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eq. (22); spec ``levi:eq22``.
    """
    log_s, x, ll, a, d = _late_common(t, lam, eta0, d_out, "the late-time expansion (eq. 22)")
    with np.errstate(under="ignore", over="ignore", divide="ignore"):  # idem; bracket(x = inf) = 0
        logv = -x - 0.75 * np.log(ll) - 0.5 * log_s + np.log(_erfc_bracket(x))
        plateau = np.where(ll > 1.0, (ll - 1.0) / ll, 0.0)
        return V.scalar_or_array((np.exp(logv) + plateau) / d)


@cites("levi:eq10", "levi:fig5")
def loss_gen_late_simple(t, lam, eta0, *, d_out=1):
    r"""The paper's simplest late-time generalisation loss: eq. 21 divided by :math:`(1-\sqrt\lambda)^2` (eq. 10).

    .. math::
        \mathcal L_{\rm gen}\simeq\frac{\mathcal L_{\rm tr}^{\rm (eq.21)}}{(1-\sqrt\lambda)^2}\;
        \Big[+\Big(1-\frac1\lambda\Big)\ \text{for}\ \lambda>1\Big]

    Narrow validity: needs :math:`x=4\eta_0t(1-\sqrt\lambda)^2/d_{\rm out}\gg1.5` (next order
    :math:`1-3/(2x)`); e.g. 102 % error at :math:`\lambda=0.9`, :math:`\eta_0t=100`.

    Parameters
    ----------
    t : float or array_like
        :math:`t>0`.
    lam : float or array_like
        :math:`\lambda>0`, :math:`\lambda\ne1`.
    eta0 : float or array_like
        :math:`\eta_0>0`.
    d_out : int
        :math:`\ge1`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eq. (10); spec ``levi:eq10``.
    """
    log_s, x, ll, a, d = _late_common(t, lam, eta0, d_out, "the late-time expansion (eq. 10)")
    with np.errstate(under="ignore", over="ignore"):
        val = np.exp(_log_train_late0(log_s, x, ll) - np.log(a))
        plateau = np.where(ll > 1.0, (ll - 1.0) / ll, 0.0)
        return V.scalar_or_array((val + plateau) / d)


# ============================================================================ approximate grokking times


def _lambertw_args(lam, eps, eta0, level, what):
    """``(lam, log_eps_eff, eta0, log_a)``; eps_eff = 4 L*(eps, d_out = 1, level) in log space (it overflows at
    eps = 1e300, level = 1e-6), log_a = log (1 - sqrt(lam))^2 (see _log1m_sqrt)."""
    ll = _lam_below_one(lam, what)
    ee = _eps(eps)
    et = _eta0(eta0)
    lv = _level(level)
    ll, ee, et, lv = np.broadcast_arrays(ll, ee, et, lv)
    log_eps_eff = np.log(2.0 * ee) - 2.0 * np.log(special.erfinv(lv))
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
def grok_time_lambertw(lam, eps, eta0, *, level=ERF_SQRT2):
    r"""Grokking time as the difference of the two Lambert-W crossing times (eqs. 23, 24).

    .. math:: \Delta t\simeq\frac{3}{8\eta_0a}\big[W_0(z_{\rm gen})-W_0(z_{\rm tr})\big]

    The best closed-form approximation (table T2): ≤ 15 % for :math:`\lambda\ge0.3`,
    :math:`\epsilon\le10^{-3}`; +37 % at :math:`\lambda=0.1`, :math:`\epsilon=10^{-3}`.

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
def grok_time_near_one(lam, eta0):
    r"""The paper's :math:`\lambda\to1^-` form of eq. 11 (valid only with :math:`\epsilon\to0` taken first).

    .. math:: \Delta t_{\rm grok}\approx\frac{1}{\eta_0(1-\lambda)^2}\log\frac{4}{(1-\lambda)^2}

    At fixed :math:`\epsilon` the true grokking time stays finite at :math:`\lambda=1` (see
    :func:`t_star_gen_critical`).

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
    Levi et al., eq. (11), λ→1 discussion; spec ``levi:eq11-lim``.
    """
    ll = _lam_below_one(lam, "the lam -> 1 form of eq. 11")
    et = _eta0(eta0)
    with np.errstate(over="ignore", under="ignore"):
        return V.scalar_or_array((math.log(4.0) - 2.0 * np.log1p(-ll)) / et / (1.0 - ll) ** 2)


@cites("levi:eq11-lim")
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
        return 1.0, dt(0.0)
    grid = np.linspace(0.0, hi, 25)
    vals = np.array([dt(u) for u in grid])
    k = int(np.argmax(vals))
    lo_u, hi_u = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = optimize.minimize_scalar(lambda u: -dt(u), bounds=(lo_u, hi_u), method="bounded",
                                   options={"xatol": 1e-7})
    if -res.fun < vals[k]:  # pragma: no cover - the refinement never loses to the grid
        return math.exp(grid[k]), float(vals[k])
    return math.exp(float(res.x)), float(-res.fun)


# ============================================================================ weight decay


@cites("levi:eq15", "levi:mp-stieltjes", "levi:conv-wd")
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
        :math:`\gamma\ge0`.
    d_out : int
        :math:`\ge1`.
    wd_convention : {"paper", "torch"}
        Convention of ``gamma``.

    Returns
    -------
    (L_tr_inf, L_gen_inf) : tuple of float or ndarray

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
    return V.scalar_or_array(tr), V.scalar_or_array(ge)


@cites("levi:eq15")
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

    References
    ----------
    Levi et al., eq. (15); errata levi-1, levi-3.
    """
    conv = V.choice(convention, "convention", ("corrected", "paper"))
    g = V.nonnegative(gamma, "gamma")
    if conv == "paper":
        ll = _lam_below_one(lam, "the paper's eq. 15")
        ll, g = np.broadcast_arrays(ll, g)
        return V.scalar_or_array(g**2 / (4.0 * (1.0 - ll))), V.scalar_or_array(g**2 / (4.0 * (1.0 - ll) ** 3))
    ll = _lam_not_one(lam, "the small-gamma expansion of eq. 15")
    ll, g = np.broadcast_arrays(ll, g)
    below = ll < 1.0
    dl = np.where(below, 1.0 - ll, ll - 1.0)
    with np.errstate(over="ignore", under="ignore"):  # divide before multiplying: g^2 overflows at 1e155
        tr = np.where(below, (g / 8.0) * (g / dl), (g / (8.0 * ll)) * (g / dl))
        ge = np.where(below, 0.0, 0.5 * dl / ll) + ((g / dl) / (8.0 * dl)) * (g / dl)
    return V.scalar_or_array(tr), V.scalar_or_array(ge)


def _wd_gamma_max_scalar(lam: float, eps: float, d: float, level: float) -> float:
    lstar = _lstar(eps, d, level)
    if lstar * d >= 0.5:  # L_gen(inf) < 1/(2 d_out) for every gamma
        return math.inf
    if lam > 1.0 and 0.5 * (1.0 - 1.0 / lam) >= lstar * d:
        return 0.0  # even gamma -> 0+ leaves the plateau above L*
    log_target = math.log(lstar)

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


# ============================================================================ initialisation scale


@cites("levi:init-rescale")
def init_scale_factor(alpha):
    r"""Factor by which both losses grow when the student init is rescaled, :math:`S_0\to\alpha S_0`.

    .. math:: c_\alpha=\frac{\mathbb E\|D_0\|_F^2(\alpha)}{\mathbb E\|D_0\|_F^2(1)}=\frac{1+\alpha^2}{2}

    Parameters
    ----------
    alpha : float or array_like
        Any real :math:`\alpha` (0 allowed).

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``levi:init-rescale`` (Levi et al. §3.1.3; erratum levi-18).
    """
    a = V.finite(alpha, "alpha")
    with np.errstate(over="ignore"):  # inf = the factor itself beyond 1.8e308 (|alpha| > 1.9e154)
        return V.scalar_or_array(0.5 * (1.0 + a * a))


@cites("levi:init-rescale")
def effective_eps(eps, alpha):
    r"""Threshold that gives the :math:`\alpha=1` losses the accuracies of init scale :math:`\alpha` (γ = 0).

    .. math:: \epsilon_{\rm eff}=\frac{\epsilon}{c_\alpha}=\frac{2\epsilon}{1+\alpha^2}

    Rescaling the init does *not* leave the grokking time unchanged (paper's claim): e.g.
    λ=0.5, ε=1e-3: Δt = 412.5, 431.3, 463.2, 497.6 for α = 0.5, 1, 2, 4.

    Parameters
    ----------
    eps : float or array_like
        :math:`\epsilon>0`.
    alpha : float or array_like
        Any real :math:`\alpha`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``levi:init-rescale``.
    """
    e = _eps(eps)
    a = V.finite(alpha, "alpha")
    h = np.hypot(1.0, a)  # sqrt(1 + alpha^2): (1 + alpha^2) overflows at alpha = 1e155
    with np.errstate(under="ignore"):
        return V.scalar_or_array(2.0 * e / h / h)


# ============================================================================ label noise


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
        a = abs(1.0 - 2.0 * b * x)
        p = 0.0 if a == 0.0 else math.exp(2.0 * t * math.log(a))
        return (x if q == "nu" else 1.0) * (1.0 - p) / (1.0 - b * x)

    return b * lam * rmt.mp_expect(f, lam, include_atom=False, rtol=_QUAD_RTOL)


@cites("levi:eq26", "levi:eq28", "levi:noise-fresh", "levi:fig6")
def loss_train_label_noise(t, lam, eta0, sigma2, *, d_out=1, mode="fixed"):
    r"""Training loss with noisy training labels :math:`y=T^\top x+\delta`, :math:`\delta\sim\mathcal N(0,\sigma^2I)`.

    .. math::
        \text{fixed: }\ \mathcal L_{\rm tr}=\mathcal L^{(0)}_{\rm tr}+\sigma^2\Big[(1-\lambda)^++\lambda\,\mathbb E\big[e^{-s\nu};\nu>0\big]\Big]
        \qquad\text{paper: }\ \mathcal L_{\rm tr}=\mathcal L^{(0)}_{\rm tr}+\sigma^2

        \text{fresh: }\ \mathcal L_{\rm tr}=\mathcal L^{(0)}_{\rm tr}+\sigma^2+\frac{\eta_0\sigma^2\lambda}{d_{\rm out}}\,
        \mathbb E\Big[\frac{\nu\,(1-(1-2\eta_0\nu/d_{\rm out})^{2t})}{1-\eta_0\nu/d_{\rm out}};\nu>0\Big]

    (:math:`s=4\eta_0t/d_{\rm out}`; :math:`\mathcal L^{(0)}` = noiseless :func:`loss_train`).
    ``"fixed"``: labels drawn once; GD fits the noise, :math:`\mathcal L_{\rm tr}\to\sigma^2(1-\lambda)^+`
    (corrects paper eq. 26).  ``"fresh"``: noise redrawn every step (loss on the current labels); the
    last term, the part of the injected noise that GD fits, is :math:`\approx\eta_0\sigma^2\lambda/d_{\rm out}`
    at late times.  The spec's form omits it (:math:`\mathcal L^{(0)}_{\rm tr}+\sigma^2`): measured
    (d_in=500, λ=0.5, σ²=0.01, η=0.01, 3 seeds, last 1e4 of 5e4 steps) 0.010049 vs 0.010050 with it
    and 0.010000 without it (``verify/levi/test_levi.py::test_noise_fresh``).
    ``"paper"``: the paper's eq. 26 transcription.

    Parameters
    ----------
    t : float or array_like
        :math:`t\ge0`.
    lam : float
        :math:`\lambda>0`.
    eta0 : float
        :math:`\eta_0>0`.
    sigma2 : float
        Noise variance per output :math:`\sigma^2\ge0`.
    d_out : int
        :math:`\ge1`.
    mode : {"fixed", "fresh", "paper"}

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., App. C, eqs. (26), (28) (corrected; erratum levi-4); spec ``levi:noise-fresh``.
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
def loss_gen_label_noise(t, lam, eta0, sigma2, *, d_out=1, mode="fixed"):
    r"""Generalisation loss with noisy training labels.

    .. math::
        \text{fixed: }\ \mathcal L_{\rm gen}=\mathcal L^{(0)}_{\rm gen}+\sigma^2\lambda\,
        \mathbb E\Big[\frac{(1-e^{-s\nu/2})^2}{\nu};\nu>0\Big]
        \ \xrightarrow[t\to\infty]{}\ \mathcal L^{(0)}_{\rm gen}(\infty)+\sigma^2\Big(\frac{\lambda}{1-\lambda}\ \text{or}\ \frac1{\lambda-1}\Big)

    .. math::
        \text{fresh: }\ \mathcal L_{\rm gen}=\mathcal L^{(0)}_{\rm gen}+\frac{\eta_0\sigma^2\lambda}{d_{\rm out}}
        \mathbb E\Big[\frac{1-(1-2\eta_0\nu/d_{\rm out})^{2t}}{1-\eta_0\nu/d_{\rm out}};\nu>0\Big]
        \qquad\text{paper: }\ \mathcal L^{(0)}_{\rm gen}

    The paper's "generalisation loss still goes to 0" holds only for fresh noise (floor
    :math:`\approx\eta_0\sigma^2\min(\lambda,1)/d_{\rm out}`), not for fixed noisy labels.
    ``"fresh"`` needs :math:`2\eta_0\lambda_+/d_{\rm out}<2`.

    Parameters
    ----------
    t : float or array_like
        :math:`t\ge0`.
    lam : float
        :math:`\lambda>0`.
    eta0 : float
        :math:`\eta_0>0` (also the GD step of the fresh-noise formula).
    sigma2 : float
        :math:`\sigma^2\ge0`.
    d_out : int
        :math:`\ge1`.
    mode : {"fixed", "fresh", "paper"}

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., App. C, eqs. (27), (28) (corrected; erratum levi-4); spec ``levi:noise-fresh``.
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


# ============================================================================ two-layer network


@cites("levi:eq18", "levi:eq42", "levi:eq16", "levi:eq40", "levi:eq17", "levi:eq41")
def loss_two_layer(t, lam, eta0, d_out, D0_sq, which="train", *, h=0.5, kappa=None, proj_sq=None):
    r"""Losses of the two-layer linear network :math:`f(x)=S_1^\top S_0^\top x` (corrected eq. 18).

    .. math::
        \mathcal L_{\rm tr/gen}(t)=\frac{\|D_0\|_F^2}{d_{\rm out}}\,\mathbb E\Big[q\,\exp\Big(-\frac{4\eta_0h}{d_{\rm out}^2}\nu t\Big)\Big]

    (frozen :math:`h\approx\|S_1\|_F^2\approx\tfrac12`; the paper's prefactor lacks the
    :math:`1/d_{\rm out}`, erratum levi-7).  Refined form (``kappa``, ``proj_sq`` = eigenvalues
    :math:`\kappa_j` of :math:`S_1(0)^\top S_1(0)` and :math:`\|D_0u_j\|^2`):
    :math:`\mathcal L=\frac1{d_{\rm out}}\sum_j\|D_0u_j\|^2\,\mathbb E[q\,e^{-4\eta_0\kappa_j\nu t/d_{\rm out}}]`
    (``D0_sq`` is then not used).  Valid for :math:`d_h\gg d_{\rm out}`.

    Parameters
    ----------
    t : float or array_like
        :math:`t\ge0`.
    lam : float
        :math:`\lambda>0`.
    eta0 : float
        :math:`\eta_0>0`.
    d_out : int
        :math:`\ge1`.
    D0_sq : float
        :math:`\|D_0\|_F^2\ge0` (measured, or :math:`1/(2d_h)` at the paper's init).
    which : {"train", "tr", "gen"}
    h : float
        Frozen :math:`h>0` (default 1/2).
    kappa, proj_sq : array_like, optional
        Refined form; both or neither, 1-d, same length, entries :math:`\ge0`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eqs. (16)–(18), (40)–(42) (corrected); spec ``levi:eq18``.
    """
    w = _which(which)
    tt = _t(t)
    la = V.positive(lam, "lam", scalar=True) if np.ndim(lam) == 0 else None
    if la is None:
        raise V.DomainError("lam must be a scalar for loss_two_layer")
    et = V.positive(eta0, "eta0", scalar=True) if np.ndim(eta0) == 0 else None
    if et is None:
        raise V.DomainError("eta0 must be a scalar for loss_two_layer")
    d = float(_d_out(d_out))
    d0 = V.nonnegative(D0_sq, "D0_sq", scalar=True)
    hh = V.positive(h, "h", scalar=True)
    if (kappa is None) != (proj_sq is None):
        raise V.DomainError("kappa and proj_sq must be given together (refined form) or not at all")
    tf = tt.reshape(-1)
    if kappa is None:
        s = 4.0 * et * hh * tf / d**2
        vals = np.log(d0 / d) + _log_phi(w, s, la) if d0 > 0 else np.full(tf.shape, -np.inf)
    else:
        k = V.nonnegative(kappa, "kappa").reshape(-1)
        p = V.nonnegative(proj_sq, "proj_sq").reshape(-1)
        if k.shape != p.shape:
            raise V.DomainError(f"proj_sq must have the shape of kappa {k.shape} (got {p.shape})")
        s = 4.0 * et * np.outer(tf, k) / d
        lp = _log_phi(w, s, la).reshape(s.shape)
        vals = special.logsumexp(lp, b=np.broadcast_to(p, lp.shape), axis=1) - math.log(d)
    return V.scalar_or_array(np.exp(vals).reshape(tt.shape))


# ============================================================================ modular addition (App. G)


@cites("levi:appG")
def modular_lambda(alpha, p):
    r"""Aspect ratio of modular addition mod :math:`p` with a training fraction :math:`\alpha`.

    .. math:: \lambda=\frac{d_{\rm in}}{N_{\rm tr}}=\frac{2p}{\alpha p^2}=\frac{2}{\alpha p}

    Parameters
    ----------
    alpha : float or array_like
        Training fraction, :math:`0<\alpha\le1`.
    p : int
        Modulus, integer :math:`\ge2`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., App. G.
    """
    pp = V.integer_at_least(p, "p", 2)
    a = V.positive(alpha, "alpha")
    bad = a > 1.0
    if np.any(bad):
        raise V.DomainError(f"alpha must be in (0, 1] (got {float(a[bad].flat[0]) if a.ndim else float(a)!r})")
    return V.scalar_or_array(2.0 / (a * pp))


@cites("levi:appG", "levi:fig8")
def fit_inverse_square(lams, dts, *, residuals="absolute"):
    r"""Fit :math:`\Delta t=C\,(\lambda^*-\lambda)^{-2}` to measured grokking times (App. G, Fig. 8).

    .. math::
        \text{absolute: }\min_{C,\lambda^*}\sum_i\big[\Delta t_i-C(\lambda^*-\lambda_i)^{-2}\big]^2,\qquad
        \text{log: }\min_{C,\lambda^*}\sum_i\big[\log\Delta t_i-\log C+2\log|\lambda^*-\lambda_i|\big]^2

    Starting point: the straight line :math:`1/\sqrt{\Delta t}=A+B\lambda` (:math:`\lambda^*=-A/B`,
    :math:`C=1/B^2`); :math:`\lambda^*` is kept on the side of the data where that line puts it.
    ``"absolute"`` (ordinary least squares on :math:`\Delta t`) reproduces the spec's fit of the
    App. G data (:math:`\lambda^*=0.121`, :math:`C\approx3.28`); ``"log"`` weights all points equally in
    relative terms (:math:`\lambda^*=0.1194`, :math:`C=3.10` on the same data).

    Parameters
    ----------
    lams : array_like, 1-d
        :math:`\lambda_i>0`, at least 3 distinct values.
    dts : array_like, 1-d
        :math:`\Delta t_i>0`, same length.
    residuals : {"absolute", "log"}
        Least-squares objective.

    Returns
    -------
    (C, lam_star) : tuple of float

    References
    ----------
    Levi et al., App. G, Fig. 8.
    """
    mode = V.choice(residuals, "residuals", ("absolute", "log"))
    x = V.positive(lams, "lams").reshape(-1)
    y = V.positive(dts, "dts").reshape(-1)
    if x.shape != y.shape:
        raise V.DomainError(f"dts must have the shape of lams {x.shape} (got {y.shape})")
    if np.unique(x).size < 3:
        raise V.DomainError(f"lams must contain at least 3 distinct values (got {np.unique(x).size})")
    B, A = np.polyfit(x, 1.0 / np.sqrt(y), 1)
    if B == 0.0:
        raise V.DomainError("dts show no dependence on lams: the inverse-square law cannot be fitted")
    span = float(np.ptp(x))
    lam0 = -A / B
    above = B < 0  # Delta t grows with lam: the pole lies above the data
    if above and lam0 <= x.max():
        lam0 = x.max() + 0.1 * span
    if not above and lam0 >= x.min():
        lam0 = x.min() - 0.1 * span
    c0 = 1.0 / B**2

    def resid(p):
        model_log = p[0] - 2.0 * np.log(np.abs(p[1] - x))
        if mode == "log":
            return np.log(y) - model_log
        return (y - np.exp(model_log)) / y.max()

    if above:
        bounds = ([-np.inf, x.max() + 1e-9 * span], [np.inf, np.inf])
    else:
        bounds = ([-np.inf, -np.inf], [np.inf, x.min() - 1e-9 * span])
    res = optimize.least_squares(resid, [math.log(c0), lam0], bounds=bounds, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return float(math.exp(res.x[0])), float(res.x[1])


# ============================================================================ figure reproductions

_T1_LAMS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
_T3_DOUTS = (1, 5, 20, 50, 100, 200, 500, 700, 1000, 1500)
_T4_GAMMAS = (0.0, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)


def _times_grid(lams, epss, eta0, d_outs, gammas, level):
    """t_tr, t_gen, dt over the outer product of the given 1-d parameter lists (in that order)."""
    shape = (len(lams), len(epss), len(d_outs), len(gammas))
    ttr, tgen = np.empty(shape), np.empty(shape)
    for idx in np.ndindex(shape):
        la, e, d, g = lams[idx[0]], epss[idx[1]], d_outs[idx[2]], gammas[idx[3]]
        ttr[idx] = _t_star_scalar("train", la, e, eta0, float(d), g, level, 1.0, False)
        tgen[idx] = _t_star_scalar("gen", la, e, eta0, float(d), g, level, 1.0, False)
    with np.errstate(invalid="ignore"):
        dt = np.where(np.isinf(ttr) & np.isinf(tgen), np.nan, tgen - ttr)
    return ttr, tgen, dt


def _list(x, name, check):
    return [float(v) for v in check(x, name).reshape(-1)]


def _int_list(x, name):
    if isinstance(x, (str, bytes)) or not np.iterable(x) or len(x) == 0:
        raise V.DomainError(f"{name} must be a non-empty sequence of integers >= 1 (got {V.show(x)})")
    return [V.integer_at_least(d, name, 1) for d in x]


@cites("levi:fig1")
def fig1_table(lams=_T1_LAMS, epss=(1e-2, 1e-3, 1e-4), eta0=0.01, *, level=ERF_SQRT2):
    r"""Table T1 / Fig. 1 (right): exact crossing and grokking times versus :math:`\lambda`, and eq. 11.

    .. math:: t^*_{\rm tr},\ t^*_{\rm gen},\ \Delta t=t^*_{\rm gen}-t^*_{\rm tr}\quad(d_{\rm out}=1,\ \gamma=0)

    Parameters
    ----------
    lams : sequence of float
        :math:`\lambda>0` values (rows).
    epss : sequence of float
        :math:`\epsilon>0` values (columns).
    eta0 : float
        :math:`\eta_0>0`.
    level : float
        Accuracy level (default erf√2, i.e. :math:`\mathcal L^*=\epsilon/4`).

    Returns
    -------
    dict of ndarray
        ``lam``, ``eps``, ``t_train``, ``t_gen``, ``grok_time`` (shape ``(len(lams), len(epss))``) and
        ``eq11`` (:func:`grok_time_asymptotic`, NaN for :math:`\lambda\ge1` where eq. 11 is undefined).

    References
    ----------
    Levi et al., Fig. 1; spec table T1.
    """
    ls = _list(lams, "lams", V.positive)
    es = _list(epss, "epss", V.positive)
    et = V.scalar(_eta0(eta0), "eta0")
    lv = V.scalar(_level(level), "level")
    ttr, tgen, dt = _times_grid(ls, es, et, [1], [0.0], lv)
    eq11 = np.array([grok_time_asymptotic(la, et) if la < 1 else np.nan for la in ls])
    return {"lam": np.array(ls), "eps": np.array(es), "t_train": ttr[:, :, 0, 0], "t_gen": tgen[:, :, 0, 0],
            "grok_time": dt[:, :, 0, 0], "eq11": eq11}


@cites("levi:fig2", "levi:eq12-loss")
def fig2_table(d_outs=_T3_DOUTS, lams=(0.5, 0.7, 0.9), eps=1e-3, eta0=0.01, *, level=0.95):
    r"""Table T3 / Fig. 2 (right): exact crossing and grokking times versus :math:`d_{\rm out}`.

    .. math:: \mathcal L^{(d_{\rm out})}(t)=\frac{1}{d_{\rm out}}\mathcal L^{(1)}(\eta_0/d_{\rm out},t),\qquad
        \mathcal L^*=\frac{d_{\rm out}\epsilon}{2P^{-1}(d_{\rm out}/2,\ell)}

    Parameters
    ----------
    d_outs : sequence of int
        Output dimensions :math:`\ge1` (rows).
    lams : sequence of float
        :math:`\lambda>0` (columns).
    eps : float
        :math:`\epsilon>0`.
    eta0 : float
        :math:`\eta_0>0`.
    level : float
        Accuracy level (default 0.95, as in the paper's figure).

    Returns
    -------
    dict of ndarray
        ``d_out``, ``lam``, ``t_train``, ``t_gen``, ``grok_time`` (shape ``(len(d_outs), len(lams))``).

    References
    ----------
    Levi et al., Fig. 2; spec table T3.
    """
    ds = _int_list(d_outs, "d_outs")
    ls = _list(lams, "lams", V.positive)
    e = V.scalar(_eps(eps), "eps")
    et = V.scalar(_eta0(eta0), "eta0")
    lv = V.scalar(_level(level), "level")
    ttr, tgen, dt = _times_grid(ls, [e], et, ds, [0.0], lv)
    tr = lambda a: a[:, 0, :, 0].T  # noqa: E731
    return {"d_out": np.array(ds), "lam": np.array(ls), "t_train": tr(ttr), "t_gen": tr(tgen), "grok_time": tr(dt)}


@cites("levi:fig3", "levi:eq14")
def fig3_table(gammas=_T4_GAMMAS, lams=(0.3, 0.5, 0.7, 0.9, 1.5), eps=1e-3, eta0=0.01, *, level=ERF_SQRT2,
               d_out=1):
    r"""Table T4 / Fig. 3 (right): exact crossing and grokking times versus weight decay :math:`\gamma`.

    .. math:: t^*\ \text{from eq. 14},\qquad \infty\ \text{where}\ \mathcal L(\infty;\gamma)\ge\mathcal L^*

    Parameters
    ----------
    gammas : sequence of float
        :math:`\gamma\ge0`, paper convention (rows).
    lams : sequence of float
        :math:`\lambda>0` (columns).
    eps : float
        :math:`\epsilon>0`.
    eta0 : float
        :math:`\eta_0>0`.
    level : float
        Accuracy level (default erf√2).
    d_out : int
        :math:`\ge1`.

    Returns
    -------
    dict of ndarray
        ``gamma``, ``lam``, ``t_train``, ``t_gen``, ``grok_time`` (shape ``(len(gammas), len(lams))``;
        ``inf`` = never, ``grok_time`` NaN when both never).

    References
    ----------
    Levi et al., Fig. 3; spec table T4.
    """
    gs = _list(gammas, "gammas", V.nonnegative)
    ls = _list(lams, "lams", V.positive)
    e = V.scalar(_eps(eps), "eps")
    et = V.scalar(_eta0(eta0), "eta0")
    lv = V.scalar(_level(level), "level")
    d = _d_out(d_out)
    ttr, tgen, dt = _times_grid(ls, [e], et, [d], gs, lv)
    tr = lambda a: a[:, 0, 0, :].T  # noqa: E731
    return {"gamma": np.array(gs), "lam": np.array(ls), "t_train": tr(ttr), "t_gen": tr(tgen), "grok_time": tr(dt)}


@cites("levi:fig5", "levi:eq21", "levi:eq22", "levi:eq10")
def fig5_table(eta0_t=(1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0), lam=0.9, eta0=0.01):
    r"""Fig. 5: exact losses and the late-time approximations eq. 21, eq. 22 and eq. 10, with their relative errors.

    .. math:: \mathrm{err}=\frac{\mathcal L^{\rm approx}}{\mathcal L^{\rm exact}}-1

    Parameters
    ----------
    eta0_t : sequence of float
        Values of :math:`\eta_0t>0`.
    lam : float
        :math:`\lambda>0`, :math:`\lambda\ne1` (default 0.9, as in the paper).
    eta0 : float
        :math:`\eta_0>0`.

    Returns
    -------
    dict of ndarray
        ``t``, ``train_exact``, ``gen_exact``, ``train_eq21``, ``gen_eq22``, ``gen_eq10`` and the
        relative errors ``err_eq21``, ``err_eq22``, ``err_eq10``.

    References
    ----------
    Levi et al., Fig. 5, eqs. (10), (21), (22).
    """
    x = V.positive(eta0_t, "eta0_t").reshape(-1)
    la = V.scalar(_lam_not_one(lam, "the late-time expansions"), "lam")
    et = V.scalar(_eta0(eta0), "eta0")
    t = x / et
    tr = np.asarray(loss_train(t, la, et))
    ge = np.asarray(loss_gen(t, la, et))
    a21 = np.asarray(loss_train_late(t, la, et))
    a22 = np.asarray(loss_gen_late(t, la, et))
    a10 = np.asarray(loss_gen_late_simple(t, la, et))
    return {"t": t, "train_exact": tr, "gen_exact": ge, "train_eq21": a21, "gen_eq22": a22, "gen_eq10": a10,
            "err_eq21": a21 / tr - 1.0, "err_eq22": a22 / ge - 1.0, "err_eq10": a10 / ge - 1.0}


@cites("levi:fig7", "levi:eq14", "levi:eq12-loss")
def fig7_tables(eps=1e-3, eta0=0.01, *, level=0.95, lam_a=0.5, gammas=(0.0, 1e-3, 1e-2, 3e-2),
                d_outs=(1, 5, 20, 100, 300, 700), lams=(0.1, 0.3, 0.5, 0.7, 0.9, 1.2), parts=("a", "b", "c")):
    r"""Table T5 / Fig. 7: phase diagrams of the exact grokking time.

    .. math::
        \text{(a)}\ \Delta t(\gamma,d_{\rm out})\ \text{at}\ \lambda=\lambda_a;\quad
        \text{(b)}\ \Delta t(\gamma,\lambda)\ \text{at}\ d_{\rm out}=1;\quad
        \text{(c)}\ \Delta t(d_{\rm out},\lambda)\ \text{at}\ \gamma=0

    ``inf`` / ``nan`` = the generalisation accuracy never reaches the level ("none" in the spec).
    :math:`\gamma` is in the paper convention.  (a) and (b) need quadrature (eq. 14): seconds.

    Parameters
    ----------
    eps : float
        :math:`\epsilon>0`.
    eta0 : float
        :math:`\eta_0>0`.
    level : float
        Accuracy level (default 0.95, as in the paper's figure).
    lam_a : float
        :math:`\lambda` of panel (a) (the paper does not state it; 0.5 assumed).
    gammas, d_outs, lams : sequences
        Grids (rows/columns as above).
    parts : sequence of {"a", "b", "c"}
        Panels to compute.

    Returns
    -------
    dict of ndarray
        Keys among ``"a"`` (shape ``(len(gammas), len(d_outs))``), ``"b"`` (``(len(gammas), len(lams))``),
        ``"c"`` (``(len(d_outs), len(lams))``), plus the grids ``gamma``, ``d_out``, ``lam``.

    References
    ----------
    Levi et al., Fig. 7; spec table T5.
    """
    e = V.scalar(_eps(eps), "eps")
    et = V.scalar(_eta0(eta0), "eta0")
    lv = V.scalar(_level(level), "level")
    la_a = V.positive(lam_a, "lam_a", scalar=True)
    gs = _list(gammas, "gammas", V.nonnegative)
    ds = _int_list(d_outs, "d_outs")
    ls = _list(lams, "lams", V.positive)
    out: dict[str, np.ndarray] = {"gamma": np.array(gs), "d_out": np.array(ds), "lam": np.array(ls)}
    parts = V.sequence(parts, "parts", min_len=0, what='a sequence of "a", "b", "c"') if not isinstance(
        parts, str) else list(parts)
    for p in parts:
        V.choice(p, "parts", ("a", "b", "c"))
    if "a" in parts:
        out["a"] = _times_grid([la_a], [e], et, ds, gs, lv)[2][0, 0, :, :].T
    if "b" in parts:
        out["b"] = _times_grid(ls, [e], et, [1], gs, lv)[2][:, 0, 0, :].T
    if "c" in parts:
        out["c"] = _times_grid(ls, [e], et, ds, [0.0], lv)[2][:, 0, :, 0].T
    return out


@cites("levi:tstar", "levi:grok-def", "levi:eq14", "levi:eq8", "levi:fig7")
def grok_time_grid(lam, gamma, eps, eta0, *, d_out=1, level=ERF_SQRT2):
    r"""Exact crossing and grokking times over a whole grid at once: ``(t_tr, t_gen, dt)``.

    The same quantity as :func:`t_star` / :func:`grok_time` (exact MP losses, eq. 14 with weight
    decay, eq. 8 at :math:`\gamma=0`; conventions of ``levi:grok-def``), vectorised with numpy
    broadcasting over ``lam``, ``gamma``, ``eps``, ``eta0``, ``d_out`` and ``level``, for phase
    diagrams such as Fig. 7.

    .. math::
        \Delta t_{\rm grok}=t^*_{\rm gen}-t^*_{\rm tr},\qquad
        \mathcal L_{\rm tr/gen}(t^*)=\mathcal L^*=\frac{d_{\rm out}\epsilon}{2P^{-1}(d_{\rm out}/2,\ell)}

    Method: a fixed Gauss–Jacobi rule in a log-mapped spectral variable (which removes the
    :math:`1/\nu` near-pole at :math:`\lambda\to1` and follows the Laplace peak at large
    :math:`s`) and a safeguarded Newton iteration on :math:`\log\mathcal L` for all grid points at
    once.  Accuracy, measured against mpmath and against the spec's QAWS quadrature
    (``tests/test_mpgrid.py``, ``benchmarks/accuracy_mpgrid.py``): losses to 2.3e-13 relative,
    crossing times to 4.2e-15, including :math:`\lambda=1\pm10^{-16}`.  Weight decay in the paper
    convention only.

    Parameters
    ----------
    lam : array_like
        Aspect ratio, :math:`\lambda>0`.
    gamma : array_like
        Weight decay (paper convention), :math:`\gamma\ge0`.
    eps : array_like
        Accuracy threshold, :math:`\epsilon>0`.
    eta0 : array_like
        Learning rate, :math:`\eta_0>0`.
    d_out : array_like
        Output dimension, :math:`>0` (non-integer values allowed for scans).
    level : array_like
        Accuracy level in (0, 1); default :data:`ERF_SQRT2`; Fig. 7 uses 0.95.

    Returns
    -------
    t_tr, t_gen, dt : float or ndarray
        ``inf`` where a loss never reaches :math:`\mathcal L^*`; ``dt`` is NaN where neither does.

    References
    ----------
    Levi et al., Fig. 7; spec ``levi:tstar``, ``levi:grok-def``, ``levi:eq14``.
    """
    t_tr, t_gen = _mpgrid._train_gen_crossings(lam, gamma, eps, eta0, d_out, level)
    with np.errstate(invalid="ignore"):
        dt = np.where(np.isinf(t_tr) & np.isinf(t_gen), np.nan, t_gen - t_tr)
    # lam <= 1/4, gamma = 0: the delay as its own root (_grok_delay_small_lam), not the difference of two
    # crossing times that agree to ~lam relative (measured: 2e-8 relative error at lam = 1e-8 before)
    lam_b, gamma_b, eta0_b, d_b = (np.broadcast_to(np.asarray(x, dtype=np.float64), dt.shape)
                                   for x in (lam, gamma, eta0, d_out))
    small = (lam_b <= _SMALL_LAM) & (gamma_b == 0.0) & (t_tr > 0.0) & np.isfinite(t_gen)
    if np.any(small):
        dt = np.array(dt, dtype=np.float64).reshape(-1)
        tt, lf, ef, df = (np.asarray(x).reshape(-1) for x in (t_tr, lam_b, eta0_b, d_b))
        for i in np.flatnonzero(small):
            dt[i] = _grok_delay_small_lam(float(tt[i]), float(lf[i]), float(ef[i]), float(df[i]))
        dt = dt.reshape(np.shape(t_tr))
    return V.scalar_or_array(t_tr), V.scalar_or_array(t_gen), V.scalar_or_array(dt)
