"""Spectral: layerwise weight decay as a Schatten penalty, balanced factorisations, imbalance."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import _floats as FL
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._helpers import _depth, _EPS, _matrix, _MAX_FACTORIZATION_DEPTH, _rtol
from ._schatten import _scaled_penalty, _schatten_setup


@cites("clocks:eq2.7")
def layerwise_decay_penalty(W, depth, *, rtol=None):
    r"""Minimal layerwise weight-decay cost of a depth-L factorization of W: L·Σ_i σ_i(W)^(2/L).

    .. math:: \min_{W_L\cdots W_1=W}\sum_{l=1}^{L}\lVert W_l\rVert_F^2=L\,\lVert W\rVert_{S_{2/L}}^{2/L}
        =L\sum_i\sigma_i(W)^{2/L}

    In words: the least Σ_l ‖W_l‖_F² over all factorizations W = W_L⋯W_1 is L times the Schatten-2/L
    penalty of W (Shang, Cheng, Liu 2020; every hidden width ≥ rank W).  Depth 1 gives ‖W‖_F², depth 2
    twice the nuclear norm.  The minimum is attained by `balanced_factorization`.

    Parameters
    ----------
    W : array_like
        The end-to-end map, a finite matrix of shape (m, n) or a stack (..., m, n).
    depth : int
        Depth L of the factorization, an integer ≥ 1.
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 count as zero (this
        matters for 2/L < 1).  Default `None`: max(m, n)·ε; 0 disables the threshold.

    Returns
    -------
    float or numpy.ndarray
        The minimal cost ≥ 0, a float for one matrix or an array of shape W.shape[:-2].

    Raises
    ------
    DomainError
        If `W` is not a finite matrix with nonzero dimensions, `depth` is not an integer ≥ 1, or `rtol`
        is negative.

    References
    ----------
    Spec ID `clocks:eq2.7` (paper eq. 2.7; Shang et al. 2020).
    """
    L = _depth(depth)
    pa, s, s1, r = _schatten_setup(W, 2.0 / L, None, rtol)
    return V.scalar_or_array(_scaled_penalty(pa, s, s1, r, [float(L)]))


@cites("clocks:eq2.7")
def balanced_factorization(W, depth, *, width=None, rtol=None) -> list[np.ndarray]:
    r"""The balanced factorization W = W_L⋯W_1 that minimises Σ_l ‖W_l‖_F².

    Along the compact SVD W = U_r·Σ_r·V_rᵀ (rank r after the `rtol` threshold):

    .. math:: W_1=\Sigma_r^{1/L}V_r^\top,\qquad W_l=\Sigma_r^{1/L}\ (1<l<L),\qquad W_L=U_r\Sigma_r^{1/L}.

    In words: every layer carries the L-th root of the singular values; the first layer also carries
    V_rᵀ and the last U_r.  Every hidden width is r, or `width` (zero padding).  The factors are
    balanced, W_{l+1}ᵀ·W_{l+1} = W_l·W_lᵀ (spec ID `clocks:appF2-balance`), and
    Σ_l ‖W_l‖_F² = L·Σ_i σ_i^(2/L).

    Parameters
    ----------
    W : array_like
        The end-to-end map, a finite 2-D matrix of shape (m, n) with nonzero dimensions.
    depth : int
        Depth L, an integer in [1, 10⁶]; depth 1 returns [W] (one matrix is returned per layer).
    width : int, optional
        Hidden width, an integer ≥ rank(W) (extra rows and columns are zero).  Default `None`: the
        rank r (at least 1).
    rtol : float, optional
        Relative rank threshold, finite and ≥ 0: singular values ≤ rtol·σ_1 are dropped.  Default
        `None`: max(m, n)·ε.

    Returns
    -------
    list of numpy.ndarray
        The L factors in the order W_1, …, W_L: factors[0] = W_1 of shape (width, n), the middle ones
        diagonal (width, width), factors[-1] = W_L of shape (m, width).

    Raises
    ------
    DomainError
        If `W` is not a finite 2-D matrix, `depth` is not an integer in [1, 10⁶], `width` < rank(W)
        (no exact factorization), `rtol` is negative, or the factors would exceed 2³⁰ entries.

    References
    ----------
    Spec ID `clocks:eq2.7` (paper eq. 2.7; Shang et al. 2020).
    """
    a = _matrix(W, stack=False)
    # one matrix per layer is returned: a depth beyond 10**6 is a mistake, not a network (it used to hang)
    L = V.integer_at_least(depth, "depth", 1, maximum=_MAX_FACTORIZATION_DEPTH)
    w_req = None if width is None else V.integer_at_least(width, "width", 1)
    V.max_size(float(w_req or min(a.shape)) * (sum(a.shape) + (w_req or min(a.shape)) * (L - 2)), "depth", depth)
    tol = _rtol(rtol, max(a.shape) * _EPS)
    if L == 1:
        return [a.copy()]
    U, s, Vt = np.linalg.svd(a, full_matrices=False)
    r = int(np.sum(s > tol * s[0])) if s[0] > 0 else 0
    if w_req is None:
        w = max(r, 1)
    else:
        w = w_req
        if w < r:
            raise DomainError(f"width must be >= rank(W) = {r} for an exact factorization (got {w})")
    root = np.zeros(w)
    root[:r] = s[:r] ** (1.0 / L)
    m, n = a.shape
    W1 = np.zeros((w, n))
    W1[:r] = root[:r, None] * Vt[:r]
    WL = np.zeros((m, w))
    WL[:, :r] = U[:, :r] * root[:r]
    return [W1] + [np.diag(root) for _ in range(L - 2)] + [WL]


@cites("clocks:eq2.7")
def weight_decay_to_penalty_coefficient(mu, depth):
    r"""End-to-end penalty coefficient λ = μ·L/2 induced by layerwise weight decay μ at depth L.

    Minimising L(W_L⋯W_1) + (μ/2)·Σ_l ‖W_l‖_F² over factorizations gives
    L(W) + λ·‖W‖_{S_{2/L}}^{2/L} with λ = μ·L/2.  This assumes the per-layer penalty
    (μ/2)·Σ_l ‖W_l‖_F², whose gradient is μ·W_l (gradient descent with `weight_decay = mu`); then
    λ·p = μ with p = 2/L.

    Parameters
    ----------
    mu : float or array_like
        Layerwise weight-decay coefficient μ, finite and ≥ 0.
    depth : int
        Depth L of the factorized network, an integer ≥ 1.

    Returns
    -------
    float or numpy.ndarray
        λ = μ·L/2, of the shape of `mu`.

    Raises
    ------
    DomainError
        If `mu` is negative or not finite, or `depth` is not an integer ≥ 1.

    References
    ----------
    Spec ID `clocks:eq2.7` (paper eq. 2.7).
    """
    L = _depth(depth)
    # mu (L/2), L/2 exact (int / int is correctly rounded): mu L overflowed first (inf at mu = 1e308, L = 3)
    m = V.nonnegative(mu, "mu")
    with np.errstate(over="ignore"):  # inf only where mu L/2 itself is beyond the double range
        return V.scalar_or_array(m * (L / 2))


def _factors(factors, name: str = "factors") -> list[np.ndarray]:
    if isinstance(factors, np.ndarray) or not isinstance(factors, Sequence) or len(factors) == 0:
        raise DomainError(f"{name} must be a non-empty sequence of matrices [W_1, ..., W_L] (got {type(factors).__name__})")
    out = [_matrix(f, f"{name}[{i}]") for i, f in enumerate(factors)]
    for i in range(len(out) - 1):
        if out[i + 1].shape[-1] != out[i].shape[-2]:
            raise DomainError(f"{name}[{i + 1}] must have {out[i].shape[-2]} columns to follow {name}[{i}] "
                              f"(got shapes {out[i].shape} and {out[i + 1].shape})")
    return out


@cites("clocks:eq4.1")
def end_to_end_map(factors) -> np.ndarray:
    r"""End-to-end map W = W_L⋯W_1 of a deep linear network.

    Parameters
    ----------
    factors : sequence of array_like
        The layer matrices [W_1, …, W_L] in forward order, a non-empty list or tuple of finite
        matrices; W_l has shape (..., d_l, d_{l−1}) (stacks broadcast) and must have as many columns as
        the previous factor has rows.

    Returns
    -------
    numpy.ndarray
        float64 array of shape (..., d_L, d_0), the product W_L⋯W_1.

    Raises
    ------
    DomainError
        If `factors` is not a non-empty sequence of finite matrices (a single array is refused), or two
        consecutive shapes do not chain.

    References
    ----------
    Spec ID `clocks:eq4.1` (paper eq. 4.1).
    """
    fs = _factors(factors)
    W = fs[0]
    for f in fs[1:]:
        W = f @ W
    return W


@cites("clocks:appF2-balance")
def layer_imbalance(factors):
    r"""Frobenius norms of the layer imbalances D_l = W_{l+1}ᵀ·W_{l+1} − W_l·W_lᵀ.

    Under gradient flow on L(W_L⋯W_1) + (μ/2)·Σ_l ‖W_l‖_F² (any differentiable L),
    dD_l/dt = −2μ·D_l: conserved for μ = 0, D_l(t) = e^(−2μt)·D_l(0) otherwise (see
    `imbalance_decay`).  Every stationary point with μ > 0 is balanced.

    Parameters
    ----------
    factors : sequence of array_like
        The layer matrices [W_1, …, W_L] in forward order, a non-empty list or tuple of finite
        matrices; W_l has shape (..., d_l, d_{l−1}).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (..., L − 1): ‖D_l‖_F for l = 1, …, L − 1 (an empty last axis for
        depth 1).

    Raises
    ------
    DomainError
        If `factors` is not a non-empty sequence of finite matrices, or two consecutive shapes do not
        chain.

    References
    ----------
    Spec ID `clocks:appF2-balance` (paper App. F.2).
    """
    fs = _factors(factors)
    norms = []
    for lo, hi in zip(fs[:-1], fs[1:]):
        D = np.swapaxes(hi, -1, -2) @ hi - lo @ np.swapaxes(lo, -1, -2)
        norms.append(np.sqrt(np.sum(D * D, axis=(-2, -1))))
    if not norms:
        return np.zeros(fs[0].shape[:-2] + (0,))
    return np.stack(norms, axis=-1)


@cites("clocks:appF2-balance")
@V.broadcasting()
def imbalance_decay(D0, mu, t):
    r"""Layer imbalance D(t) = D₀·e^(−2μt) at time t of gradient flow with layerwise weight decay μ.

    Formed in log space where e^(−2μt) is subnormal, so D₀ = 10³⁰⁰ with e^(−1000) gives 5·10⁻¹³⁵, not
    0.  The arguments broadcast together.

    Parameters
    ----------
    D0 : float or array_like
        Initial imbalance D_l(0): the entries of the matrix or its norm; finite, any sign.
    mu : float or array_like
        Layerwise weight-decay coefficient μ (per-layer penalty (μ/2)·‖W_l‖_F²), finite and ≥ 0.
    t : float or array_like
        Gradient-flow time, finite and ≥ 0 (for gradient descent: step count times the learning rate).

    Returns
    -------
    float or numpy.ndarray
        D(t), of the broadcast shape; 0 only where the true value is below the double range.

    Raises
    ------
    DomainError
        If an argument is outside its domain above or the arrays do not broadcast.

    Notes
    -----
    For gradient descent with step η the exact recursion is
    D⁺ = (1 − ημ)²·D + η²·(G_{l+1}ᵀ·G_{l+1} − G_l·G_lᵀ), G_l the loss gradient of layer l.

    References
    ----------
    Spec ID `clocks:appF2-balance` (paper App. F.2).
    """
    d = V.finite(D0, "D0")
    m = V.nonnegative(mu, "mu")
    tt = V.nonnegative(t, "t")
    # D0 e^{-2 mu t} where e^{-2 mu t} is a normal double; sign(D0) exp(log|D0| - 2 mu t) elsewhere
    # (1e300 e^{-1000} = 5e-135, not 0); 0 only where the true value is below the double range
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        x = 2.0 * (m * tt)  # not (2 mu) t: 2 mu overflows for mu > 9e307 and inf * 0 is NaN at t = 0
        e = np.exp(-x)
        if float(np.min(e)) >= FL.TINY:  # one reduction: the log-space form only if some point needs it
            return V.scalar_or_array(d * e)
        far = np.sign(d) * np.exp(np.log(np.abs(d)) - x)
    return V.scalar_or_array(np.where(e >= FL.TINY, d * e, far))
