"""Levi et al.: late-time expansions of the losses (eqs. 10, 21, 22)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _validate as V
from .. import rmt
from ..citations import cites
from ._conventions import _d_out, _eta0, _lam_not_one, _LOG_SQRT_PI, _t_late


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
@V.broadcasting()
def loss_train_late(t, lam, eta0, *, d_out=1, order=0):
    r"""Late-time expansion of the training loss (paper eq. 21, with its first correction on request).

    .. math::
        \mathcal L_{\rm tr}\simeq\frac{e^{-4\eta_0(1-\sqrt\lambda)^2t}}{16\sqrt\pi\,\lambda^{3/4}(\eta_0t)^{3/2}}
        \Big[1-\frac{3}{64\,\eta_0t\sqrt\lambda}\Big]_{\text{order}=1}

    In words: e^(−4η₀(1 − √λ)²t)/(16√π λ^(3/4)(η₀t)^(3/2)), times 1 − 3/(64η₀t√λ) at `order=1`; for d_out > 1
    it is L⁽¹⁾(η₀/d_out, t)/d_out. Valid for 8η₀t√λ/d_out ≫ 1; the relative error of the leading term is about
    3d_out/(64η₀t√λ). For λ > 1 it is the whole train loss too.

    Parameters
    ----------
    t : float or array_like
        Time t > 0 in gradient-descent steps (real-valued); the expansion needs large t.
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, λ ≠ 1 (the expansions diverge there).
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    order : {0, 1}
        0 (default): the paper's leading term; 1: with the correction factor 1 − 3/(64η₀t√λ).

    Returns
    -------
    float or ndarray
        The approximate L_tr(t), the broadcast shape of `t`, `lam`, `eta0`.

    References
    ----------
    Levi et al., eq. (21); spec `levi:eq21`, `levi:fig5`.
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
@V.broadcasting()
def loss_gen_late(t, lam, eta0, *, d_out=1):
    r"""Late-time generalisation loss: eq. 21 integrated in time (paper eq. 22).

    .. math::
        \mathcal L_{\rm gen}\simeq\frac{e^{-4\eta_0(1-\sqrt\lambda)^2t}}{2\sqrt\pi\,\lambda^{3/4}\sqrt{\eta_0t}}
        -\frac{|1-\sqrt\lambda|\,\Gamma\big(\tfrac12,4\eta_0t(1-\sqrt\lambda)^2\big)}{\sqrt\pi\,\lambda^{3/4}}
        \;\Big[+\Big(1-\frac1\lambda\Big)\ \text{for}\ \lambda>1\Big]

    In words: the time integral of eq. 21, plus the plateau 1 − 1/λ when λ > 1. It is evaluated as
    e^(−x)/(λ^(3/4)√s)·[π^(−1/2) − √x·erfcx(√x)] with s = 4η₀t and x = s(1 − √λ)², using the asymptotic series
    of the bracket for x > 10³; the d_out rule is that of `loss_train_late`.

    Parameters
    ----------
    t : float or array_like
        Time t > 0 in gradient-descent steps (real-valued); the expansion needs large t.
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, λ ≠ 1 (the expansions diverge there).
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.

    Returns
    -------
    float or ndarray
        The approximate L_gen(t), the broadcast shape of `t`, `lam`, `eta0`.

    References
    ----------
    Levi et al., eq. (22); spec `levi:eq22`, `levi:fig5`.
    """
    log_s, x, ll, a, d = _late_common(t, lam, eta0, d_out, "the late-time expansion (eq. 22)")
    with np.errstate(under="ignore", over="ignore", divide="ignore"):  # idem; bracket(x = inf) = 0
        logv = -x - 0.75 * np.log(ll) - 0.5 * log_s + np.log(_erfc_bracket(x))
        plateau = np.where(ll > 1.0, (ll - 1.0) / ll, 0.0)
        return V.scalar_or_array((np.exp(logv) + plateau) / d)


@cites("levi:eq10", "levi:fig5")
@V.broadcasting()
def loss_gen_late_simple(t, lam, eta0, *, d_out=1):
    r"""The paper's simplest late-time generalisation loss: eq. 21 divided by (1 − √λ)² (eq. 10).

    .. math::
        \mathcal L_{\rm gen}\simeq\frac{\mathcal L_{\rm tr}^{\rm (eq.21)}}{(1-\sqrt\lambda)^2}\;
        \Big[+\Big(1-\frac1\lambda\Big)\ \text{for}\ \lambda>1\Big]

    In words: the leading term of `loss_train_late` divided by (1 − √λ)², plus the plateau 1 − 1/λ when λ > 1.
    Narrow validity: it needs x = 4η₀t(1 − √λ)²/d_out ≫ 1.5 (the next order is 1 − 3/(2x)); e.g. 102 % error
    at λ = 0.9, η₀t = 100.

    Parameters
    ----------
    t : float or array_like
        Time t > 0 in gradient-descent steps (real-valued); the expansion needs large t.
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, λ ≠ 1 (the expansions diverge there).
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.

    Returns
    -------
    float or ndarray
        The approximate L_gen(t), the broadcast shape of `t`, `lam`, `eta0`.

    References
    ----------
    Levi et al., eq. (10); spec `levi:eq10`, `levi:fig5`.
    """
    log_s, x, ll, a, d = _late_common(t, lam, eta0, d_out, "the late-time expansion (eq. 10)")
    with np.errstate(under="ignore", over="ignore"):
        val = np.exp(_log_train_late0(log_s, x, ll) - np.log(a))
        plateau = np.where(ll > 1.0, (ll - 1.0) / ll, 0.0)
        return V.scalar_or_array((val + plateau) / d)
