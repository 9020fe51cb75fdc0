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
    r"""Minimal layerwise decay cost of a depth-:math:`L` factorization of :math:`W`.

    .. math:: \min_{W_L\cdots W_1=W}\sum_{l=1}^{L}\lVert W_l\rVert_F^2=L\,\lVert W\rVert_{S_{2/L}}^{2/L}
        =L\sum_i\sigma_i(W)^{2/L}

    (Shang, Cheng, Liu 2020; all hidden widths :math:`\ge\operatorname{rank}W`).  Depth 1 gives
    :math:`\lVert W\rVert_F^2`, depth 2 twice the nuclear norm.  The minimum is attained by
    :func:`balanced_factorization`.

    Parameters
    ----------
    W : array_like, shape (..., m, n)
    depth : int >= 1
    rtol : float >= 0, optional
        Rank threshold of :func:`schatten_penalty` (relevant for :math:`2/L<1`).

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``clocks:eq2.7`` (paper eq. 2.7).
    """
    L = _depth(depth)
    pa, s, s1, r = _schatten_setup(W, 2.0 / L, None, rtol)
    return V.scalar_or_array(_scaled_penalty(pa, s, s1, r, [float(L)]))


@cites("clocks:eq2.7")
def balanced_factorization(W, depth, *, width=None, rtol=None) -> list[np.ndarray]:
    r"""The balanced factorization :math:`W=W_L\cdots W_1` that minimises :math:`\sum_l\lVert W_l\rVert_F^2`.

    Along the compact SVD :math:`W=U_r\Sigma_rV_r^\top` (rank :math:`r` after the ``rtol`` threshold):

    .. math:: W_1=\Sigma_r^{1/L}V_r^\top,\qquad W_l=\Sigma_r^{1/L}\ (1<l<L),\qquad W_L=U_r\Sigma_r^{1/L}.

    Every hidden width is :math:`r`, or ``width`` (zero padding).  The factors are balanced:
    :math:`W_{l+1}^\top W_{l+1}=W_lW_l^\top` (``clocks:appF2-balance``), and
    :math:`\sum_l\lVert W_l\rVert_F^2=L\sum_i\sigma_i^{2/L}`.

    Parameters
    ----------
    W : array_like, shape (m, n)
    depth : int in [1, 10**6]
        Depth 1 returns ``[W]`` (one matrix per layer is returned).
    width : int >= rank(W), optional
        Hidden width (zero-padded).  Default: the rank :math:`r` (at least 1).
    rtol : float >= 0, optional
        Singular values :math:`\le` ``rtol`` :math:`\sigma_1` are dropped (default ``max(m, n) * eps``).

    Returns
    -------
    list of ndarray
        ``factors[0]`` is :math:`W_1` (``(width, n)``), ``factors[-1]`` is :math:`W_L` (``(m, width)``).

    Raises
    ------
    DomainError
        ``depth`` not an integer >= 1; ``width < rank(W)`` (no exact factorization).

    References
    ----------
    Spec ``clocks:eq2.7`` (paper eq. 2.7; Shang et al. 2020).
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
    r"""End-to-end penalty coefficient induced by layerwise weight decay: :math:`\lambda=\mu L/2`.

    Minimising :math:`\mathcal L(W_L\cdots W_1)+\frac{\mu}{2}\sum_l\lVert W_l\rVert_F^2` over
    factorizations gives :math:`\mathcal L(W)+\lambda\lVert W\rVert_{S_{2/L}}^{2/L}` with
    :math:`\lambda=\mu L/2`.  **Assumes the per-layer penalty** :math:`\frac{\mu}{2}\sum_l\lVert W_l\rVert_F^2`
    (gradient :math:`\mu W_l`, i.e. GD with ``weight_decay = mu``); then :math:`\lambda p=\mu`.

    Parameters
    ----------
    mu : float or array_like, >= 0
    depth : int >= 1

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``clocks:eq2.7``.
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
    r"""End-to-end map :math:`W=W_L\cdots W_1` of a deep linear network.

    Parameters
    ----------
    factors : sequence of array_like
        ``[W_1, ..., W_L]``, ``W_l`` of shape ``(..., d_l, d_{l-1})`` (stacks broadcast).

    Returns
    -------
    ndarray, shape ``(..., d_L, d_0)``

    References
    ----------
    Spec ``clocks:eq4.1`` (paper eq. 4.1).
    """
    fs = _factors(factors)
    W = fs[0]
    for f in fs[1:]:
        W = f @ W
    return W


@cites("clocks:appF2-balance")
def layer_imbalance(factors):
    r"""Frobenius norms of the layer imbalances :math:`D_l=W_{l+1}^\top W_{l+1}-W_lW_l^\top`.

    Under gradient flow on :math:`\mathcal L(W_L\cdots W_1)+\frac\mu2\sum_l\lVert W_l\rVert_F^2`
    (any differentiable :math:`\mathcal L`), :math:`\dot D_l=-2\mu D_l`: conserved for :math:`\mu=0`,
    :math:`D_l(t)=e^{-2\mu t}D_l(0)` otherwise (:func:`imbalance_decay`).  Every stationary point
    with :math:`\mu>0` is balanced.

    Parameters
    ----------
    factors : sequence of array_like
        ``[W_1, ..., W_L]`` with ``W_l`` of shape ``(..., d_l, d_{l-1})``.

    Returns
    -------
    ndarray, shape ``(..., L - 1)``
        :math:`\lVert D_l\rVert_F`, :math:`l=1,\dots,L-1` (empty last axis for depth 1).

    References
    ----------
    Spec ``clocks:appF2-balance``.
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
    r"""Layer imbalance at time :math:`t` of gradient flow with layerwise decay: :math:`D(t)=D_0e^{-2\mu t}`.

    Parameters
    ----------
    D0 : float or array_like
        Initial imbalance (a matrix :math:`D_l(0)` or its norm); finite.
    mu : float or array_like, >= 0
        Layerwise weight-decay coefficient (penalty :math:`\frac\mu2\sum_l\lVert W_l\rVert_F^2`).
    t : float or array_like, >= 0
        Gradient-flow time (for GD: step count times the learning rate).

    Returns
    -------
    float or ndarray (broadcast of the inputs)

    References
    ----------
    Spec ``clocks:appF2-balance``.  For GD with step :math:`\eta` the exact recursion is
    :math:`D^+=(1-\eta\mu)^2D+\eta^2(G_{l+1}^\top G_{l+1}-G_lG_l^\top)`.
    """
    d = V.finite(D0, "D0")
    m = V.nonnegative(mu, "mu")
    tt = V.nonnegative(t, "t")
    # D0 e^{-2 mu t} where e^{-2 mu t} is a normal double; sign(D0) exp(log|D0| - 2 mu t) elsewhere
    # (1e300 e^{-1000} = 5e-135, not 0); 0 only where the true value is below the double range
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        x = 2.0 * (m * tt)  # not (2 mu) t: 2 mu overflows for mu > 9e307 and inf * 0 is NaN at t = 0
        e = np.exp(-x)
        far = np.sign(d) * np.exp(np.log(np.abs(d)) - x)
    return V.scalar_or_array(np.where(e >= FL.TINY, d * e, far))
