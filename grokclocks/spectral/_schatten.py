"""Spectral: Schatten penalties and quasi-norms."""

from __future__ import annotations

import math

import numpy as np

from .. import _floats as FL
from .. import _pointwise as P
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._helpers import _p, _sigma_input, _thresholded_ratios


_MAX = float(np.finfo(np.float64).max)


@cites("clocks:eq2.6")
def schatten_penalty(W=None, p=None, *, singular_values=None, rtol=None):
    r"""Schatten-p penalty ‖W‖_{S_p}^p = Σ_i σ_i(W)^p, for p > 0.

    .. math:: \lVert W\rVert_{S_p}^p=\sigma_1^p\sum_i(\sigma_i/\sigma_1)^p

    In words: the sum of the p-th powers of the singular values, summed directly where the powers are
    normal doubles and as σ_1^p·Σ_i (σ_i/σ_1)^p in log space elsewhere.  Singular values ≤ rtol·σ_1
    count as zero (for p < 1 the round-off singular values of a low-rank matrix would otherwise count:
    (10⁻¹⁶)^0.1 = 0.025).

    Parameters
    ----------
    W : array_like, optional
        The matrix, finite, of shape (m, n), or a stack of shape (..., m, n).  Give exactly one of `W`
        and `singular_values`.
    p : float or array_like
        Schatten exponent p, finite and > 0 (p = 2/L for a depth-L factorization); an array broadcasts
        against the stack.  Required, although it follows `W` in the signature.
    singular_values : array_like, optional
        Singular values instead of `W`, finite and ≥ 0 along the last axis, shape (k,) or (..., k), in
        any order.
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 count as zero.  Default
        `None`: max(m, n)·ε for `W` (the convention of `numpy.linalg.matrix_rank`), k·ε for
        `singular_values`; 0 disables the threshold.

    Returns
    -------
    float or numpy.ndarray
        The penalty ≥ 0, a float for one matrix or an array of the stack's (broadcast) shape; `inf` or
        0 only where the true value is beyond the double range.

    Raises
    ------
    DomainError
        If `p` is missing or not finite and > 0, both or neither of `W` and `singular_values` are
        given, `W` is not a finite matrix with nonzero dimensions, a singular value is negative, or
        `rtol` is negative.

    References
    ----------
    Spec ID `clocks:eq2.6` (paper eq. 2.6).
    """
    pa, s, s1, r = _schatten_setup(W, p, singular_values, rtol)
    return V.scalar_or_array(_scaled_penalty(pa, s, s1, r, [1.0]))


def _scaled_penalty(pa: np.ndarray, s: np.ndarray, s1: np.ndarray, r: np.ndarray, coef: list) -> np.ndarray:
    r"""coef * sum_i sigma_i^p over the kept singular values (mask r), coef = prod(coef) >= 0.

    Direct sum of the powers sigma_i^p (each correctly rounded, <= 2 ulp in all; no ratio sigma_i /
    sigma_1 whose rounding p would amplify) where sigma_1^p and the result are normal doubles; elsewhere
    exp(log coef + p log sigma_1 + log sum_i r_i^p) -- the result is then inf or 0 only if the true value
    is beyond the double range; relative error ~ eps (|log coef| + p |log sigma_1|) there.  Exactly 0
    where coef = 0 or no singular value is kept (whatever sigma_1^p is).
    """
    pe = np.asarray(pa)[..., None]
    c = np.asarray(coef[0], dtype=np.float64)
    for f in coef[1:]:
        c = c * f
    every = bool(r.all())  # every singular value kept: no mask
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        direct = c * np.sum(np.power(s, pe) if every else np.where(r, np.power(s, pe), 0.0), axis=-1)
        s1p = np.power(s1, pa)
        # reductions: every sigma_1^p and sum normal (then sigma_1 > 0, c > 0 and the ratio sum >= 1): no mask
        (p_lo, p_hi), (d_lo, d_hi) = P.extrema(s1p), P.extrema(direct)
        if every and FL.TINY <= p_lo and p_hi <= _MAX and FL.TINY <= d_lo and d_hi <= _MAX:
            return direct
        ok = (s1p >= FL.TINY) & np.isfinite(s1p) & np.isfinite(direct) & ((direct >= FL.TINY) | (c == 0))
        log_c = sum(np.log(np.asarray(f, dtype=np.float64)) for f in coef)
        ratio_sum = _ratio_power_sum(s, s1, r, pa)
        far = np.exp(log_c + pa * np.log(s1) + np.log(ratio_sum))
    # exactly 0 where coef = 0 (lam = 0: 0 times a finite penalty, though sigma_1^p may overflow) or no
    # singular value is kept (rtol >= 1); the log form would meet inf - inf there
    zero = (s1 <= 0) | (c == 0) | (ratio_sum == 0)
    return np.where(zero, 0.0, np.where(ok, direct, far))


def _ratio_power_sum(s: np.ndarray, s1: np.ndarray, keep: np.ndarray, p: np.ndarray) -> np.ndarray:
    """sum of (sigma_i / sigma_1)^p over the kept sigma_i (last axis); p broadcast against s.shape[:-1].

    The ratio's power directly where the ratio is a normal double, exp(p (log sigma_i - log sigma_1))
    where it underflows.
    """
    pe = np.asarray(p)[..., None]
    every = bool(keep.all())  # every singular value kept (then every sigma_1 > 0): no mask below
    # the caller's errstate (divide, invalid, under and over ignored)
    s1d = (s1 if every else np.where(s1 > 0, s1, 1.0))[..., None]
    r = s / s1d
    rp = np.power(r if every else np.where(keep, r, 1.0), pe)
    # the ratio below the normal range (its power need not be: p = 1e-3): on those points only (none: one reduction)
    if not (every and float(r.min()) >= FL.TINY):
        small = r < FL.TINY if every else keep & (r < FL.TINY)
        rp = P.patch(rp, small, lambda pe_, s_, s1_: np.exp(pe_ * (np.log(s_) - np.log(s1_))), pe, s, s1d)
    return (rp if every else np.where(keep, rp, 0.0)).sum(axis=-1)


def _schatten_setup(W, p, singular_values, rtol):
    """Validated exponent, largest singular value and thresholded ratios sigma_i / sigma_1."""
    if p is None:
        raise DomainError("p must be given (> 0)")
    pa = _p(p)
    s, tol = _sigma_input(W, singular_values, rtol)
    s1, r = _thresholded_ratios(s, tol)
    return pa, s, s1, r

@cites("clocks:eq2.6")
def schatten_quasi_norm(W=None, p=None, *, singular_values=None, rtol=None):
    r"""Schatten-p (quasi-)norm ‖W‖_{S_p} = (Σ_i σ_i^p)^(1/p), for p > 0.

    .. math:: \lVert W\rVert_{S_p}=\sigma_1\Big(\sum_i(\sigma_i/\sigma_1)^p\Big)^{1/p}

    In words: σ_1 times the p-th root of Σ_i (σ_i/σ_1)^p.  A norm for p ≥ 1, a nonconvex quasi-norm for
    0 < p < 1 (it favours concentrated spectra).  Factoring out σ_1 avoids overflow for large p and
    underflow for small singular values.  Singular values ≤ rtol·σ_1 count as zero.

    Parameters
    ----------
    W : array_like, optional
        The matrix, finite, of shape (m, n), or a stack of shape (..., m, n).  Give exactly one of `W`
        and `singular_values`.
    p : float or array_like
        Schatten exponent p, finite and > 0; an array broadcasts against the stack.  Required.
    singular_values : array_like, optional
        Singular values instead of `W`, finite and ≥ 0 along the last axis, shape (k,) or (..., k), in
        any order.
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 count as zero.  Default
        `None`: max(m, n)·ε for `W`, k·ε for `singular_values`; 0 disables the threshold.

    Returns
    -------
    float or numpy.ndarray
        ‖W‖_{S_p} ≥ 0, a float for one matrix or an array of the stack's (broadcast) shape.

    Raises
    ------
    DomainError
        If `p` is missing or not finite and > 0, both or neither of `W` and `singular_values` are
        given, `W` is not a finite matrix with nonzero dimensions, a singular value is negative, or
        `rtol` is negative.

    References
    ----------
    Spec ID `clocks:eq2.6` (paper eq. 2.6).
    """
    pa, _, s1, r = _schatten_setup(W, p, singular_values, rtol)  # r: mask of the kept singular values
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        S = _ratio_power_sum(_, s1, r, pa)  # in [1, rank]; 0 where no singular value is kept
        g = np.power(S, 1.0 / pa)  # overflows for p < log(rank) / 709.78 while sigma_1 * g may not
        out = s1 * g
        # reductions: the log form only on the points that need it, 0 (not -0) where sigma_1 = 0
        if not (P.extrema(out)[1] < math.inf and P.extrema(s1)[0] > 0):
            far = np.logical_not(np.isfinite(g) & np.isfinite(out))
            out = P.patch(out, far, lambda s1_, S_, p_: np.exp(np.log(s1_) + np.log(S_) / p_), s1, S, pa)
            out = P.patch(out, s1 <= 0, np.zeros_like, s1)
    return P.result(out)
