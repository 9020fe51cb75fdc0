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
@V.broadcasting()
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
@V.broadcasting()
def loss_gen_late_simple(t, lam, eta0, *, d_out=1):
    r"""The paper's simplest late-time generalisation loss: eq. 21 divided by :math:`(1-\sqrt\lambda)^2` (eq. 10).

    .. math::
        \mathcal L_{\rm gen}\simeq\frac{\mathcal L_{\rm tr}^{\rm (eq.21)}}{(1-\sqrt\lambda)^2}\;
        \Big[+\Big(1-\frac1\lambda\Big)\ \text{for}\ \lambda>1\Big]

    Narrow validity: needs :math:`x=4\eta_0t(1-\sqrt\lambda)^2/d_{\rm out}\gg1.5` (next order
    :math:`1-3/(2x)`); e.g. 102 % error at :math:`\lambda=0.9`, :math:`\eta_0t=100`.

    Parameters
    ----------
    t, lam, eta0, d_out
        As in :func:`loss_gen_late`.

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
