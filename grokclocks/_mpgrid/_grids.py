"""The vectorised grids of the weight-decay losses, their plateaus and the loss threshold (private to
`grokclocks._mpgrid`)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import gammaincinv, gammaln

from .._constants import ERF_SQRT2
from .._validate import DomainError, choice, in_open_interval, nonnegative, positive, scalar_or_array
from ._rule import _asymptote, _decay, _log_asymptote

_TINY = float(np.finfo(np.float64).tiny)  # smallest normal double, 2.2e-308


def _half_gamma(gamma):
    """g = gamma/2 (scalar or array); ``DomainError`` for gamma = 5e-324, whose half is not a double: it
    rounded to 0, and a positive weight decay became none (wd_asymptote_grid(2, 5e-324) gave the gamma = 0
    value 0.5 against 0.25 for every gamma > 0; the plateau log(g^2 m_2(g)) was NaN)."""
    g = 0.5 * gamma
    if type(gamma) is float:
        bad = gamma > 0.0 and g == 0.0
    else:
        bad = np.any((np.asarray(gamma) > 0.0) & (np.asarray(g) == 0.0))
    if bad:
        raise DomainError("gamma must be 0 or >= 1e-323 (paper convention): gamma/2 of gamma = 5e-324 rounds to 0 "
                          "in float64")
    return g


def _common(lam, gamma, d_out):
    lam = positive(lam, "lam")
    gamma = nonnegative(gamma, "gamma")
    _half_gamma(gamma)
    d_out = positive(d_out, "d_out")
    return lam, gamma, d_out


def loss_threshold_grid(eps, *, d_out=1, level=ERF_SQRT2):
    r"""Loss threshold :math:`\mathcal L^*=d_{\rm out}\epsilon/(2P^{-1}(d_{\rm out}/2,\ell))` (vectorised).

    Parameters
    ----------
    eps : array_like, > 0.  d_out : array_like, > 0.  level : array_like, in (0, 1).

    References
    ----------
    ``levi:lstar`` (= ε/4 exactly at d_out = 1, level = erf √2).
    """
    eps = positive(eps, "eps")
    d_out = positive(d_out, "d_out")
    level = in_open_interval(level, "level", 0.0, 1.0)
    a = 0.5 * d_out
    x, log_x = _p_inverse(d_out, level)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):  # inf = L* beyond 1.8e308
        direct = eps * (a / x)  # no d_out eps (overflows for eps > 1e302)
        via_log = np.exp(np.log(d_out) - math.log(2.0) + np.log(eps) - log_x)
        ok = (x > 1e-300) & np.isfinite(direct) & (direct >= _TINY)
        return scalar_or_array(np.where(ok, direct, via_log))


def _p_inverse(d_out, level):
    r"""``(x, log x)``, :math:`x=P^{-1}(d_{\rm out}/2,\ell)` (regularised lower incomplete gamma).

    Below :math:`x=10^{-300}` (subnormal or 0: :math:`\ell=5\cdot10^{-324}`) ``log x`` comes from
    :math:`P(a,x)=x^a/\Gamma(a+1)\,(1+O(x))`: :math:`\log x=2(\log\ell+\log\Gamma(a+1))/d_{\rm out}`, in
    :math:`d_{\rm out}` (:math:`a=d_{\rm out}/2` rounds to 0 at :math:`d_{\rm out}=5\cdot10^{-324}`).
    Spec ``levi:lstar`` (the accuracy level's inverse in :math:`\mathcal L^*`)."""
    d_out = np.asarray(d_out, dtype=np.float64)
    level = np.asarray(level, dtype=np.float64)
    a = 0.5 * d_out
    x = gammaincinv(a, level)
    small = ~(x > 1e-300)
    with np.errstate(divide="ignore"):
        log_x = np.where(small, 2.0 * (np.log(level) + gammaln(a + 1.0)) / d_out, np.log(np.where(small, 1.0, x)))
    return x, log_x


def wd_asymptote_grid(lam, gamma, *, d_out=1, which="gen"):
    r"""Exact late-time loss :math:`\mathcal L(\infty)` with weight decay (vectorised, with the atom).

    .. math::

        \mathcal L_{\rm gen}(\infty)=\frac{\gamma^2}{8d_{\rm out}}m_2(\tfrac\gamma2),\qquad
        \mathcal L_{\rm tr}(\infty)=\frac{\gamma^2}{8d_{\rm out}}\big[m(\tfrac\gamma2)-\tfrac\gamma2m_2(\tfrac\gamma2)\big],

    and :math:`(1-1/\lambda)^+/d_{\rm out}`, 0 at :math:`\gamma=0`.

    References
    ----------
    ``levi:eq15`` (exact Stieltjes forms, paper's prefactor corrected), ``levi:mp-stieltjes``.
    """
    which = choice(which, "which", {"gen": "gen", "train": "tr", "tr": "tr"})
    lam, gamma, d_out = _common(lam, gamma, d_out)
    lam, gamma, d_out = np.broadcast_arrays(lam, gamma, d_out)
    return scalar_or_array(_asymptote(lam, gamma / 2.0, which == "gen") / d_out)


class DecayGrid(NamedTuple):
    """Result of :func:`mp_decay_grid`."""

    log_D: float | np.ndarray
    r""":math:`\log D(s)`."""
    dlogD_dlogs: float | np.ndarray
    r""":math:`d\log D/d\log s`."""


def mp_decay_grid(s, lam, gamma, *, which="gen"):
    r"""Decaying part :math:`D(s)` of eq. 14 (:math:`d_{\rm out}=1` units) and its log-slope.

    Returns ``(log_D, dlogD_dlogs)`` with
    :math:`D(s)=\tfrac12\mathbb E[q(e^{-s(\nu+g)}(1+r^2)+2gr\,e^{-s(\nu+g)/2}/(\nu+g))]`, the fixed
    quadrature rule of the module docstring; :math:`\log D` never underflows.  ``(-inf, -inf)`` where
    :math:`\log D` itself is below -1.8e308 (:math:`s(\lambda_-+g)` beyond the double range).

    Returns
    -------
    DecayGrid
        A :class:`DecayGrid` named tuple (``log_D``, ``dlogD_dlogs``); it unpacks like a plain tuple.

    References
    ----------
    ``levi:eq14``, ``levi:mp-quad``.
    """
    which = choice(which, "which", {"gen": "gen", "train": "tr", "tr": "tr"})
    s = nonnegative(s, "s")
    lam, gamma, _ = _common(lam, gamma, 1.0)
    s, lam, gamma = np.broadcast_arrays(s, lam, gamma)
    shape = s.shape
    lD, sl = _decay(s.ravel(), lam.ravel(), gamma.ravel() / 2.0, which == "gen")
    return DecayGrid(scalar_or_array(lD.reshape(shape)), scalar_or_array(sl.reshape(shape)))


def log_wd_loss_grid(t, lam, gamma, eta0, *, d_out=1, which="gen"):
    r"""Log of the exact MP loss with weight decay, eq. 14 (eq. 8 at γ = 0), vectorised.

    .. math::

        \mathcal L(t)=\frac{1}{2d_{\rm out}}\mathbb E_{\rm MP(\lambda)}\Big[q\Big(e^{-4\eta_0'(\nu+\frac\gamma2)t}
        +\Big(\frac{e^{-2\eta_0'(\nu+\frac\gamma2)t}\nu+\frac\gamma2}{\nu+\frac\gamma2}\Big)^2\Big)\Big],
        \quad \eta_0'=\eta_0/d_{\rm out},

    :math:`q=\nu` (``which="train"``) or 1 (``"gen"``); computed as
    :math:`\log[\mathcal L_1^\infty+D(s)]-\log d_{\rm out}` with :math:`s=4\eta_0t/d_{\rm out}`; ``-inf``
    where the log is below -1.8e308 (no plateau and :math:`s\lambda_-` beyond the double range);
    ``DomainError`` where :math:`s` or :math:`\lambda_++\gamma/2` exceeds 1.8e308.

    References
    ----------
    ``levi:eq14``, ``levi:eq8``, ``levi:eq12-loss``, ``levi:mp-quad``.
    """
    which = choice(which, "which", {"gen": "gen", "train": "tr", "tr": "tr"})
    t = nonnegative(t, "t")
    eta0 = positive(eta0, "eta0")
    lam, gamma, d_out = _common(lam, gamma, d_out)
    t, lam, gamma, eta0, d_out = np.broadcast_arrays(t, lam, gamma, eta0, d_out)
    shape = t.shape
    lam_, g_, d_ = lam.ravel(), gamma.ravel() / 2.0, d_out.ravel()
    with np.errstate(over="ignore"):
        s = 4.0 * eta0.ravel() * t.ravel() / d_
        s = np.where(np.isfinite(s), s, 4.0 * ((eta0.ravel() / d_) * t.ravel()))  # no spurious 4 eta0 = inf
    if not np.all(np.isfinite(s)):
        k = int(np.argmax(~np.isfinite(s)))
        raise DomainError(  # as linear.log_loss_*: the decay at such s is not resolved in float64
            f"4 eta0 t/d_out must be a finite float (<= 1.8e308) (got inf for t = {float(t.ravel()[k])!r}, "
            f"eta0 = {float(eta0.ravel()[k])!r}, d_out = {float(d_[k])!r})")
    gen = which == "gen"
    lD, _ = _decay(s, lam_, g_, gen)
    out = np.logaddexp(_log_asymptote(lam_, g_, gen), lD) - np.log(d_)
    return scalar_or_array(out.reshape(shape))


def wd_loss_grid(t, lam, gamma, eta0, *, d_out=1, which="gen"):
    r"""Exact MP loss with weight decay (``exp`` of :func:`log_wd_loss_grid`; ``inf`` only where the loss
    exceeds 1.8e308, e.g. :math:`\sim1/d_{\rm out}` for a subnormal :math:`d_{\rm out}`).

    References
    ----------
    ``levi:eq14``, ``levi:eq8``, ``levi:eq12-loss``.
    """
    return scalar_or_array(np.exp(log_wd_loss_grid(t, lam, gamma, eta0, d_out=d_out, which=which)))
