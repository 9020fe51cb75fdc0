r"""Levi et al.: the losses of gradient flow, vectorised: closed forms without weight decay, eq. 14 with it.

Without weight decay (spec ``levi:eq8``, ``levi:init-rescale``) the losses are
:math:`\mathcal L=\frac{1+\alpha^2}{2d_{\rm out}}\Phi_q(s)`, :math:`\Phi_1(s)=\mathbb E[\nu e^{-s\nu}]`,
:math:`\Phi_0(s)=\mathbb E[e^{-s\nu}]` (closed forms of `grokclocks.rmt`). With weight decay
(``levi:eq14``), :math:`d_{\rm out}\mathcal L=\mathcal L_1^\infty+D(s)` with the plateau
:math:`\mathcal L_1^\infty=\tfrac12g^2\mathbb E[q/(\nu+g)^2]` (closed form, ``levi:eq15``) and the decaying part
:math:`D(s)=\tfrac12\mathbb E[q(\alpha^2+r^2)e^{-s(\nu+g)}]+\mathbb E[q\,r\,g\,e^{-s(\nu+g)/2}/(\nu+g)]`,
:math:`r=\nu/(\nu+g)`, :math:`g=\gamma/2` (the fixed rule of `grokclocks._mpgrid`, the grid engine). Every
function takes flat, validated arrays.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _mpgrid, rmt
from ... import _validate as V
from ..._mpgrid import _half_gamma

_LOG2 = math.log(2.0)


def _log_c(alpha):
    r""":math:`\log c_\alpha=\log((1+\alpha^2)/2)`, the prefactor of the loss (spec ``levi:init-rescale``), also
    where α² overflows (|α| > 1.3e154: ``log(inf) + log Phi = inf - inf`` was NaN at init_scale = −1e300)."""
    if type(alpha) is float:  # one number: the same two forms
        a = abs(alpha)
        return np.log(0.5 * (1.0 + a * a)) if a < 1e150 else 2.0 * np.log(a) - _LOG2
    a = np.abs(np.asarray(alpha, dtype=np.float64))
    if not a.size or float(a.max()) < 1e150:  # one reduction: every point takes the first form
        return np.log(0.5 * (1.0 + a * a))  # a * a: the square np.where(...) ** 2 takes below
    small = a < 1e150
    with np.errstate(divide="ignore"):
        return np.where(small, np.log(0.5 * (1.0 + np.where(small, a, 0.0) ** 2)), 2.0 * np.log(a) - _LOG2)


def _log_alpha2(alpha) -> np.ndarray:
    """log α² (−inf at α = 0), without forming α² (it overflows beyond 1.3e154)."""
    with np.errstate(divide="ignore"):
        return 2.0 * np.log(np.abs(np.asarray(alpha, dtype=np.float64)))


def _log_phi(which: str, s, lam) -> np.ndarray:
    """log E[q e^{-s nu}], q = nu (train) or 1 (gen, atom included): the closed forms of `grokclocks.rmt`
    (arrays that broadcast; validated)."""
    if type(s) is float and type(lam) is float:  # rmt's engines take two numbers
        out = float(rmt._log_phi1(s, lam) if which == "train" else rmt._log_phi0(s, lam))
        if out != out:
            raise _phi_nan(s, lam, which)
        return out
    shape, (sf, lf) = V.broadcast_flat(s, lam)
    out = rmt._log_phi1(sf, lf) if which == "train" else rmt._log_phi0(sf, lf)
    if out.size and math.isnan(float(out.max())):  # max propagates NaN: one reduction
        k = int(np.argmax(np.isnan(out)))
        raise _phi_nan(float(sf[k]), float(lf[k]), which)
    return out.reshape(shape)


def _phi_nan(s: float, lam: float, which: str) -> FloatingPointError:
    return FloatingPointError(f"the Marchenko-Pastur Laplace transform (grokclocks.rmt) returned NaN at s = {s!r}, "
                              f"lam = {lam!r} (which = {which!r}); this s is beyond the range rmt evaluates reliably")


def _log_loss_no_decay(which: str, s, lam, d: float, alpha):
    """log L of gradient flow without weight decay, log c_alpha - log d_out + log Phi_q(s) (arrays, or two
    numbers)."""
    return _log_c(alpha) - math.log(d) + _log_phi(which, s, lam)


def _check_finite_s(s: np.ndarray, t: np.ndarray, eta0: np.ndarray, d: float) -> None:
    """``DomainError`` where s = 4 η₀t/d_out is beyond the double range (the decay is not resolved there)."""
    if not s.size or float(s.max()) < math.inf:  # s >= 0, never NaN: one reduction
        return
    bad = ~np.isfinite(s)
    if np.any(bad):
        k = int(np.argmax(bad))
        raise V.DomainError(
            f"4 eta0 t/d_out must be a finite float (<= 1.8e308) (got inf for t = {float(t[k])!r}, "
            f"eta0 = {float(eta0[k])!r}, d_out = {d:g})")


def _log_loss_inf(which: str, lam, d: float, gamma, alpha) -> np.ndarray:
    """log L(t -> infinity) (``-inf`` when the limit is 0), flat arrays; the same for gradient flow and GD."""
    lam, gamma, alpha = (np.asarray(x, dtype=np.float64) for x in (lam, gamma, alpha))
    if gamma.size and float(gamma.min()) > 0.0:  # every gamma > 0 (one reduction): the plateau on every point
        return rmt._log_wd_plateau(_half_gamma(gamma), lam, which == "gen") - math.log(2.0 * d)
    out = np.full(lam.shape, -np.inf)
    zero = gamma == 0.0
    if which == "gen":
        plateau = zero & (lam > 1.0)
        if np.any(plateau):
            out[plateau] = _log_c(alpha[plateau]) + np.log((lam[plateau] - 1.0) / lam[plateau]) - math.log(d)
    pos = ~zero
    if np.any(pos):
        g = _half_gamma(gamma[pos])
        out[pos] = rmt._log_wd_plateau(g, lam[pos], which == "gen") - math.log(2.0 * d)
    return out


def _log_loss_flow(which: str, s: np.ndarray, lam: np.ndarray, d: float, gamma: np.ndarray,
                   alpha: np.ndarray) -> np.ndarray:
    """log L(s) of gradient flow for flat arrays (s = 4 η₀t/d_out finite, validated)."""
    if gamma.size and float(gamma.max()) == 0.0:  # no weight decay anywhere (gamma >= 0): no masks
        return _log_loss_no_decay(which, s, lam, d, alpha)
    out = np.empty(s.shape)
    zero = gamma == 0.0
    if np.any(zero):
        out[zero] = _log_loss_no_decay(which, s[zero], lam[zero], d, alpha[zero])
    pos = ~zero
    if np.any(pos):
        sp, lp, ap = s[pos], lam[pos], alpha[pos]
        g = _half_gamma(gamma[pos])
        gen = which == "gen"
        plateau = rmt._log_wd_plateau(g, lp, gen)  # log(g^2 E[q/(nu+g)^2]) = log(2 L1inf)
        val = np.empty(sp.shape)
        # gamma beyond 1.8e308 (torch convention x d_out): g = inf, R = 1 at s = 0, else 0 and L = the plateau
        inf = np.isinf(g)
        if np.any(inf):
            val[inf] = np.where(sp[inf] == 0.0, _log_c(ap[inf]) + _LOG2, plateau[inf]) - math.log(2.0 * d)
        fin = ~inf
        if np.any(fin):
            lD, _ = _mpgrid._decay(sp[fin], lp[fin], g[fin], gen, _log_alpha2(ap[fin]))
            val[fin] = np.logaddexp(plateau[fin] - _LOG2, lD) - math.log(d)
        out[pos] = val
    return out
