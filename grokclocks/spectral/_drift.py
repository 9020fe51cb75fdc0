"""Spectral: penalty gradients and the singular-value drift."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _floats as FL
from .. import _pointwise as P
from .. import _validate as V
from .._validate import DomainError, ResultOverflow
from ..citations import cites
from ._helpers import _DEGENERATE_RTOL, _depth, _EPS, _matrix, _p, _rtol, SingularValueDrift, SpectralStratumWarning


@cites("clocks:thmD.1")
def schatten_penalty_grad(W, p, *, rtol=None) -> np.ndarray:
    r"""Gradient of the Schatten-p penalty ‖W‖_{S_p}^p on a fixed-rank stratum: p·U_r·Σ_r^(p−1)·V_rᵀ.

    .. math:: \nabla_W\lVert W\rVert_{S_p}^p=p\,U_r\Sigma_r^{\,p-1}V_r^\top
        \qquad(\lVert W\rVert_{S_p}^p=\operatorname{tr}(W^\top W)^{p/2})

    In words: along the compact SVD of W, each kept singular value σ_i is replaced by p·σ_i^(p−1).
    Well defined for repeated positive singular values.  Singular values ≤ rtol·σ_1 are treated as
    exactly zero and their directions dropped (the gradient is not defined there for p < 1; for p ≥ 1
    this is the minimum-norm subgradient).  The zero matrix returns zeros.

    Parameters
    ----------
    W : array_like
        The matrix, finite, of shape (m, n), or a stack (..., m, n).
    p : float
        Schatten exponent p, a finite scalar > 0.
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 count as zero.  Default
        `None`: max(m, n)·ε.

    Returns
    -------
    numpy.ndarray
        float64 array of the shape of `W`, the gradient.

    Raises
    ------
    DomainError
        If `W` is not a finite matrix with nonzero dimensions, `p` is not a finite scalar > 0, or
        `rtol` is negative.
    ResultOverflow
        If a weight p·σ_i^(p−1) of a kept singular value is beyond the double range (a huge p with
        σ_1 > 1, or p < 1 with a tiny kept σ_i).

    References
    ----------
    Spec ID `clocks:thmD.1` (paper App. D, Theorem D.1).
    """
    a = _matrix(W)
    pa = float(_scalar(p, "p", positive=True))
    tol = _rtol(rtol, max(a.shape[-2:]) * _EPS)
    U, s, Vt = np.linalg.svd(a, full_matrices=False)
    s1 = s[..., :1]
    keep = (s > tol * s1) & (s > 0)
    w = np.where(keep, _shrinkage(1.0, pa, np.where(keep, s, 1.0)), 0.0)
    if np.any(np.isinf(w)):
        i = np.unravel_index(np.argmax(np.where(np.isinf(w), s, -1.0)), s.shape)
        raise ResultOverflow(f"the gradient p sigma^(p-1) with p = {pa!r} and sigma = {float(s[i])!r} is beyond the "
                             "double range (1.8e308): the gradient's entries are not representable")
    return (U * w[..., None, :]) @ Vt


def _shrinkage(lam: float, p: float, s: np.ndarray) -> np.ndarray:
    """lam p s^(p-1) for s > 0 as one power product: no inf * 0 where lam p overflows while s^(p-1)
    underflows (lam = 1e300, p = 1e308, s = 0.5 gives 0, not NaN); 0 for lam = 0; inf only where the
    true value is beyond the double range."""
    s = np.asarray(s, dtype=np.float64)
    if lam == 0:
        return np.zeros(s.shape)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        return FL.power_product([lam, p, s], [1.0, 1.0, p - 1.0])


def _scalar(x, name: str, *, positive: bool = False, nonnegative: bool = False) -> float:
    check = V.positive if positive else (V.nonnegative if nonnegative else V.finite)
    if P.scalars(x):  # a number: the checks' float fast path
        return check(x, name, scalar=True)
    a = check(x, name)
    if a.ndim != 0:
        raise DomainError(f"{name} must be a scalar (got shape {a.shape})")
    return float(a)


def _drift_setup(W, grad_loss, rtol):
    a = _matrix(W, stack=False)
    g = _matrix(grad_loss, "grad_loss", stack=False)
    if g.shape != a.shape:
        raise DomainError(f"grad_loss must have the shape of W {a.shape} (got {g.shape})")
    tol = _rtol(rtol, max(a.shape) * _EPS)
    U, s, Vt = np.linalg.svd(a, full_matrices=False)
    keep = s > tol * s[0] if s[0] > 0 else np.zeros(s.shape, bool)
    r = int(np.sum(keep))
    s, U, Vt = s[:r], U[:, :r], Vt[:r]
    if r > 1 and np.any(np.diff(s) > -_DEGENERATE_RTOL * s[0]):
        warnings.warn("two singular values are within 1e-8 * sigma_1: the drift of a repeated singular value is "
                      "not defined; returning the drift of the symmetric function (u_i^T dW v_i with the SVD's vectors)",
                      SpectralStratumWarning, stacklevel=3)
    force = -np.einsum("ki,kl,il->i", U, g, Vt)
    return s, force


@cites("clocks:eq4.3", "clocks:prop4.3")
def singular_value_drift_terms(W, grad_loss, lam, p, *, rtol=None) -> SingularValueDrift:
    r"""Data force, shrinkage and drift of the positive singular values under the end-to-end flow.

    For dW/dt = −∇E(W) with E = L + λ·‖W‖_{S_p}^p, on a stratum where σ_i > 0 is simple with singular
    vectors u_i, v_i:

    .. math:: \dot\sigma_i=u_i^\top\dot Wv_i=F_i-\lambda p\,\sigma_i^{\,p-1},
        \qquad F_i=-u_i^\top\nabla\mathcal L(W)\,v_i .

    In words: dσ_i/dt = F_i − λ·p·σ_i^(p−1), the data force F_i = −u_iᵀ·∇L(W)·v_i minus the penalty's
    shrinkage.  For p < 1 the shrinkage blows up as σ_i → 0 (a stratum exit; see
    `free_direction_collapse_time`).  This is the end-to-end clock; a layer-trained network follows
    `balanced_singular_value_drift` instead.

    Parameters
    ----------
    W : array_like
        The end-to-end map, a finite 2-D matrix of shape (m, n).
    grad_loss : array_like
        Gradient ∇L(W) of the loss alone (without the penalty), a finite matrix of the shape of `W`.
    lam : float
        Penalty coefficient λ, a finite scalar ≥ 0.
    p : float
        Schatten exponent p, a finite scalar > 0.
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 are not returned.
        Default `None`: max(m, n)·ε.

    Returns
    -------
    SingularValueDrift
        The named tuple (sigma, data_force, shrinkage, drift) of float64 1-D arrays over the
        numerically positive singular values, in decreasing order of σ_i.

    Raises
    ------
    DomainError
        If `W` or `grad_loss` is not a finite 2-D matrix of one shape, `lam` or `p` is outside its
        domain, or `rtol` is negative.

    Warns
    -----
    SpectralStratumWarning
        If two kept singular values are within 10⁻⁸·σ_1 (the drift of a non-simple singular value is
        not defined; the value returned is u_iᵀ·(dW/dt)·v_i for the SVD's vectors).

    References
    ----------
    Spec IDs `clocks:eq4.3` and `clocks:prop4.3` (paper eq. 4.3, Proposition 4.3).
    """
    la = _scalar(lam, "lam", nonnegative=True)
    pa = _scalar(p, "p", positive=True)
    s, force = _drift_setup(W, grad_loss, rtol)
    shrink = _shrinkage(la, pa, s)
    return SingularValueDrift(s, force, shrink, force - shrink)


@cites("clocks:eq4.3", "clocks:prop4.3")
def singular_value_drift(W, grad_loss, lam, p, *, rtol=None) -> np.ndarray:
    r"""Drift dσ_i/dt = F_i − λ·p·σ_i^(p−1) of the positive singular values under the end-to-end flow.

    The `drift` field of `singular_value_drift_terms`, which also returns the data force and the
    shrinkage separately.

    Parameters
    ----------
    W : array_like
        The end-to-end map, a finite 2-D matrix of shape (m, n).
    grad_loss : array_like
        Gradient ∇L(W) of the loss alone (without the penalty), a finite matrix of the shape of `W`.
    lam : float
        Penalty coefficient λ, a finite scalar ≥ 0.
    p : float
        Schatten exponent p, a finite scalar > 0.
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 are not returned.
        Default `None`: max(m, n)·ε.

    Returns
    -------
    numpy.ndarray
        float64 1-D array, dσ_i/dt for the numerically positive singular values in decreasing order.

    Raises
    ------
    DomainError
        If `W` or `grad_loss` is not a finite 2-D matrix of one shape, `lam` or `p` is outside its
        domain, or `rtol` is negative.

    Warns
    -----
    SpectralStratumWarning
        If two kept singular values are within 10⁻⁸·σ_1.

    References
    ----------
    Spec IDs `clocks:eq4.3` and `clocks:prop4.3` (paper eq. 4.3, Proposition 4.3).
    """
    return singular_value_drift_terms(W, grad_loss, lam, p, rtol=rtol).drift


@cites("clocks:appF2-balanced-drift")
def balanced_singular_value_drift(W, grad_loss, mu, depth, *, rtol=None) -> np.ndarray:
    r"""Singular-value drift of the end-to-end map of a layer-trained, balanced deep linear network.

    Gradient flow on L(W_L⋯W_1) + (μ/2)·Σ_l ‖W_l‖_F² from a balanced start gives

    .. math:: \dot\sigma_i=L\,\sigma_i^{\,2-2/L}F_i-\mu L\,\sigma_i
        =L\sigma_i^{\,2-2/L}\big(F_i-\lambda p\,\sigma_i^{\,p-1}\big)\Big|_{\lambda=\mu L/2,\ p=2/L},

    In words: dσ_i/dt = L·σ_i^(2−2/L)·F_i − μ·L·σ_i with F_i = −u_iᵀ·∇L(W)·v_i, which is the end-to-end
    drift (`singular_value_drift` with λ = μ·L/2, p = 2/L) time-rescaled per direction by
    L·σ_i^(2−2/L).  Same stationary points, different clocks; the decay shrinkage is linear
    (exponential tails, no finite-time collapse).

    Parameters
    ----------
    W : array_like
        The end-to-end map W_L⋯W_1, a finite 2-D matrix of shape (m, n).
    grad_loss : array_like
        Gradient ∇L(W) of the loss alone, a finite matrix of the shape of `W`.
    mu : float
        Layerwise weight-decay coefficient μ (per-layer penalty (μ/2)·‖W_l‖_F²), a finite scalar ≥ 0.
    depth : int
        Depth L of the network, an integer ≥ 1.
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 are not returned.
        Default `None`: max(m, n)·ε.

    Returns
    -------
    numpy.ndarray
        float64 1-D array, dσ_i/dt for the numerically positive singular values in decreasing order.

    Raises
    ------
    DomainError
        If `W` or `grad_loss` is not a finite 2-D matrix of one shape, `mu` or `depth` is outside its
        domain, or `rtol` is negative.

    Warns
    -----
    SpectralStratumWarning
        If two kept singular values are within 10⁻⁸·σ_1 (see `singular_value_drift_terms`).

    References
    ----------
    Spec ID `clocks:appF2-balanced-drift` (derived; paper App. F.2).
    """
    m = _scalar(mu, "mu", nonnegative=True)
    L = _depth(depth)
    s, force = _drift_setup(W, grad_loss, rtol)
    return L * np.power(s, 2.0 - 2.0 / L) * force - m * L * s


@cites("clocks:eq4.3", "clocks:prop4.3")
@V.broadcasting()
def free_direction_collapse_time(sigma0, lam, p):
    r"""Time at which a singular value with zero data force reaches 0 under the end-to-end flow.

    With F_i = 0, dσ/dt = −λ·p·σ^(p−1) integrates to σ^(2−p)(t) = σ₀^(2−p) − λ·p·(2 − p)·t, so for
    0 < p < 2

    .. math:: t_0=\frac{\sigma_0^{2-p}}{\lambda p(2-p)} ;

    in words, the collapse time is σ₀^(2−p)/(λ·p·(2 − p)); it is `inf` for p ≥ 2 (shrinkage at most
    linear) or λ = 0, and 0 for σ₀ = 0.  The arguments broadcast together.

    Parameters
    ----------
    sigma0 : float or array_like
        Initial singular value σ₀, finite and ≥ 0.
    lam : float or array_like
        Penalty coefficient λ, finite and ≥ 0.
    p : float or array_like
        Schatten exponent p, finite and > 0.

    Returns
    -------
    float or numpy.ndarray
        The collapse time, ≥ 0 or `inf`, of the broadcast shape.

    Raises
    ------
    DomainError
        If an argument is outside its domain above or the arrays do not broadcast.

    References
    ----------
    Spec ID `clocks:eq4.3` (paper eq. 4.3; finite-time collapse for p < 1, §4.4).
    """
    sc = P.scalars(sigma0, lam, p)
    s = V.nonnegative(sigma0, "sigma0", scalar=sc)
    la = V.nonnegative(lam, "lam", scalar=sc)
    pa = V.positive(p, "p", scalar=sc)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        (s_lo, s_hi), (l_lo, l_hi), (p_lo, p_hi) = P.extrema(s), P.extrema(la), P.extrema(pa)
        if p_hi < 2 and l_lo > 0 and s_lo > 0:  # no mask needed
            q = 2.0 - pa
            if isinstance(q, np.ndarray) and q.ndim and _power_stays_normal((s_lo, s_hi), (2.0 - p_hi, 2.0 - p_lo),
                                                                            [(l_lo, l_hi), (p_lo, p_hi)]):
                # the operations of `P.product`'s direct product (sigma0^q (1/lam)) (1/p)) (1/q), in place: its array
                # power took the general `FL.power_product` (16 reductions and a copy: 3x the plain formula at 1e5)
                t = np.power(s, q)
                for f in (la, pa, q):
                    t = np.multiply(t, 1.0 / f, out=P.into(t, f))
                return P.result(t)
            return P.result(P.product([s, la, pa, q], [q, -1, -1, -1]))
        if sc:  # p >= 2 or lam = 0: inf; else sigma0 = 0: 0
            return math.inf if not (pa < 2 and la > 0) else 0.0
        s, la, pa = np.broadcast_arrays(s, la, pa)
        finite = (pa < 2) & (la > 0)
        q = 2.0 - np.where(finite, pa, 1.0)
        one = np.ones_like(s)
        # one power product sigma0^q lam^-1 p^-1 q^-1 (lam p can underflow while sigma0^q does too:
        # 1e-600 / 2e-616 is 5e15, not 0/0); sigma0 = 0 gives 0
        t = FL.power_product([np.where(s > 0, s, 1.0), np.where(finite, la, 1.0), np.where(finite, pa, 1.0), q],
                             [q, -1, -1, -1])
    t = np.where(s > 0, t, 0.0 * one)
    return V.scalar_or_array(np.where(finite, t, np.inf))


def _power_stays_normal(base, power, others):
    """Whether σ₀^q (σ₀ in `base`, q in `power`, both (min, max) with σ₀ > 0, q > 0) times the reciprocals of bases
    with the extremes `others` keeps every factor and partial product a normal double (`FL.product_stays_normal`
    with σ₀^q as one base: log2 of σ₀^q lies between the least and the largest q log2 σ₀ at the corners)."""
    logs = [q * math.log2(b) for q in power for b in base]
    lo, hi = min(logs), max(logs)
    if not -1000.0 < lo <= hi < 1000.0:
        return False
    q_ext = power
    return FL.product_stays_normal([(2.0**lo, 2.0**hi), *others, q_ext], [1.0, -1.0, -1.0, -1.0])
