"""Levi et al.: the loss threshold L* (and its logarithm) of an accuracy level, vectorised (spec ``levi:lstar``)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ... import _mpgrid
from ... import _validate as V


def _log_lstar(eps, d, level) -> np.ndarray:
    """log L* without forming L* (it over/underflows for eps near 1e+-300 at extreme levels); arrays (``d`` a
    number or an array broadcasting with eps and level: at d = 1 the erfinv form, elsewhere log P^-1)."""
    eps, level = np.asarray(eps, dtype=np.float64), np.asarray(level, dtype=np.float64)
    with np.errstate(divide="ignore"):
        if np.ndim(d) == 0 and d == 1.0:
            return np.log(eps) - math.log(2.0) - 2.0 * np.log(special.erfinv(level))
        # log P^-1 also where P^-1 underflows (level = 5e-324: log 0 raised "math domain error")
        out = np.log(d) + np.log(eps) - math.log(2.0) - _mpgrid._p_inverse(d, level)[1]
        one = np.asarray(d) == 1.0
        if np.ndim(d) and one.any():
            out[one] = _log_lstar(np.broadcast_to(eps, out.shape)[one], 1.0, np.broadcast_to(level, out.shape)[one])
        return out


def _lstar_values(eps, d: float, level) -> np.ndarray:
    r"""L* as doubles (``inf`` where it exceeds 1.8e308); arrays.

    No intermediate under/overflows where L* is a normal double: :math:`\mathrm{erfinv}(\ell)^2`
    underflows for :math:`\ell<10^{-154}` (``ZeroDivisionError`` at :math:`\ell=5\cdot10^{-324}`), so
    there :math:`(\epsilon/e)/e/2`; :math:`d\,\epsilon` overflows for :math:`\epsilon>10^{302}`, so
    :math:`\epsilon\,(a/x)`, :math:`a=d/2`, :math:`x=P^{-1}(a,\ell)`.
    """
    eps, level = np.asarray(eps, dtype=np.float64), np.asarray(level, dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        if d == 1.0:
            e = special.erfinv(level)
            # halved before the second division: 0.5 ((eps/e)/e) overflowed to inf for L* = 1.46e308 (eps =
            # 1.8e-182, level = 8.8e-246; an undocumented ResultOverflow found by the accuracy run, also before)
            return np.where(e > 1e-150, eps / (2.0 * e * e), ((eps / e) * 0.5) / e)
        a = 0.5 * d
        x, log_x = _mpgrid._p_inverse(d, level)
        # below x = 1e-300 (0 at level 5e-324) from log x; overflow there means L* > 1.8e308
        log_val = math.log(a) + np.log(eps) - log_x
        return np.where(x > 1e-300, eps * (a / np.where(x > 1e-300, x, 1.0)),
                        np.where(log_val < 709.78, np.exp(np.minimum(log_val, 709.78)), np.inf))


def _lstar(eps, d: float, level) -> np.ndarray:
    """L* (`_lstar_values`); ``ResultOverflow`` where it exceeds 1.8e308."""
    val = _lstar_values(eps, d, level)
    bad = ~np.isfinite(val)
    if np.any(bad):
        e, lv = (np.broadcast_to(np.asarray(x, dtype=np.float64), val.shape)[bad].flat[0] for x in (eps, level))
        raise V.ResultOverflow(f"L* = exp({float(_log_lstar(e, d, lv)):.6g}) exceeds the largest double "
                               f"(eps={float(e)!r}, d_out={d:g}, level={float(lv)!r}; L* ~ eps d_out/(2 P^-1(d_out/2, level)))")
    return val
