r"""Matrix spectra of the two-clocks theory: stable rank, Schatten quasi-norms, layerwise decay, drift, bounds.

Spec ``clocks`` (Tan, Gai, Zhang, *Deciphering Two Training Clocks in Grokking via Deep Linear
Network Theory with Conditional ReLU Reduction*, arXiv:2606.05863), sections 1, 4 and 5:

* stable rank :math:`\operatorname{srank}W=\lVert W\rVert_F^2/\lVert W\rVert_2^2` (``clocks:eq2.3``);
* Schatten-:math:`p` quasi-norms and penalties :math:`\lVert W\rVert_{S_p}^p=\sum_i\sigma_i^p` (``clocks:eq2.6``);
* the layerwise-weight-decay identity (Shang et al. 2020, ``clocks:eq2.7``)

  .. math:: \min_{W_L\cdots W_1=W}\sum_l\lVert W_l\rVert_F^2=L\lVert W\rVert_{S_{2/L}}^{2/L},
     \qquad \lambda=\mu L/2,

  its balanced minimiser, and the conservation / decay of the layer imbalance (``clocks:appF2-balance``);
* the gradient of the Schatten penalty on a fixed-rank stratum (``clocks:thmD.1``) and the
  singular-value drift of the end-to-end flow (``clocks:eq4.3``) and of the factorized
  (layer-trained) flow (``clocks:appF2-balanced-drift``), which differ by the per-direction time
  rescaling :math:`L\sigma_i^{2-2/L}`;
* spectral tails, the Eckart–Young rank choice, covering numbers of balls and the Xu–Mannor
  robustness bounds (``clocks:appF4-tail``, ``clocks:thm5.2``, ``clocks:prop5.1``, ``clocks:thm2.2``,
  ``clocks:thm5.5``).

All functions compute in float64; singular values come from ``numpy.linalg.svd``.  Matrix
arguments accept a stack ``(..., m, n)`` where stated.  For :math:`p<1` the round-off singular
values of a low-rank matrix matter (:math:`(10^{-16})^{0.1}=0.025`): singular values
:math:`\le` ``rtol`` :math:`\cdot\sigma_1` count as zero, default ``rtol = max(m, n) * eps``
(the convention of ``numpy.linalg.matrix_rank``); ``rtol=0`` disables the threshold.
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple
from collections.abc import Sequence

import numpy as np

from . import _floats as FL
from . import _validate as V
from ._validate import DomainError
from .citations import cites

__all__ = [
    "SpectralStratumWarning",
    "SingularValueDrift",
    "stable_rank",
    "stable_rank_from_singular_values",
    "schatten_quasi_norm",
    "schatten_penalty",
    "layerwise_decay_penalty",
    "balanced_factorization",
    "weight_decay_to_penalty_coefficient",
    "end_to_end_map",
    "layer_imbalance",
    "imbalance_decay",
    "end_to_end_energy",
    "end_to_end_energy_from_weight_decay",
    "schatten_penalty_grad",
    "singular_value_drift",
    "singular_value_drift_terms",
    "balanced_singular_value_drift",
    "free_direction_collapse_time",
    "spectral_tail",
    "eckart_young_rank",
    "best_rank_k",
    "principal_projection_error",
    "covering_number_ball_bounds",
    "log_covering_number_ball_bounds",
    "robust_generalization_bound",
    "stable_rank_generalization_bound",
]

_EPS = float(np.finfo(np.float64).eps)
# Two singular values closer than this (relative to sigma_1) make the drift of each one ill-defined.
_DEGENERATE_RTOL = 1e-8


class SpectralStratumWarning(UserWarning):
    """Near-degenerate singular values: the drift of an individual singular value is not defined there."""


SingularValueDrift = namedtuple("SingularValueDrift", ["sigma", "data_force", "shrinkage", "drift"])
SingularValueDrift.__doc__ = r"""Terms of the singular-value drift :math:`\dot\sigma_i=F_i-\lambda p\sigma_i^{p-1}`.

Fields (1-D arrays ordered like the singular values, decreasing): ``sigma`` (the numerically
positive singular values), ``data_force`` (:math:`F_i=-u_i^\top\nabla\mathcal L\,v_i`), ``shrinkage``
(:math:`\lambda p\sigma_i^{p-1}`), ``drift`` (:math:`F_i-\lambda p\sigma_i^{p-1}`)."""


# ------------------------------------------------------------------------------------------ helpers


def _matrix(W, name: str = "W", *, stack: bool = True) -> np.ndarray:
    a = V.as_float_array(W, name)
    if a.ndim < 2 or (not stack and a.ndim != 2):
        want = "a matrix (..., m, n)" if stack else "a 2-D matrix (m, n)"
        raise DomainError(f"{name} must be {want} (got shape {a.shape})")
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        raise DomainError(f"{name} must have nonzero dimensions (got shape {a.shape})")
    return a


def _svals(a: np.ndarray) -> np.ndarray:
    return np.linalg.svd(a, compute_uv=False)


def _rtol(rtol, default: float) -> float:
    if rtol is None:
        return default
    return V.nonnegative(rtol, "rtol", scalar=True)


def _sigma_input(W, singular_values, rtol) -> tuple[np.ndarray, float]:
    """Singular values (decreasing, last axis) from W or from ``singular_values=``, plus the rtol."""
    if (W is None) == (singular_values is None):
        raise DomainError("give exactly one of W and singular_values (got "
                          f"{'both' if W is not None else 'neither'})")
    if W is not None:
        a = _matrix(W)
        return _svals(a), _rtol(rtol, max(a.shape[-2:]) * _EPS)
    s = V.as_float_array(singular_values, "singular_values")
    s = np.atleast_1d(s)
    if np.any(s < 0):
        raise DomainError(f"singular_values must be >= 0 (got {float(s[s < 0].flat[0])!r})")
    s = -np.sort(-s, axis=-1)
    return s, _rtol(rtol, s.shape[-1] * _EPS)


def _thresholded_ratios(s: np.ndarray, rtol: float) -> tuple[np.ndarray, np.ndarray]:
    """sigma_1 and the mask of kept singular values, sigma_i > rtol * sigma_1 (and > 0).

    The mask compares sigma_i with rtol * sigma_1 directly: a ratio sigma_i / sigma_1 below the smallest
    double (1e-300 / 1e300) underflows to 0 but its p-th power need not (p = 1e-3: 0.25).
    """
    s1 = s[..., 0]
    keep = (s > 0) & (s > rtol * s1[..., None])
    return s1, keep


_MAX_FACTORIZATION_DEPTH = 10**6


def _depth(depth) -> int:
    return V.integer_at_least(depth, "depth", 1)


def _p(p) -> np.ndarray:
    return V.positive(p, "p")


# ------------------------------------------------------------------------------------------ stable rank


@cites("clocks:eq2.3", "clocks:appF4-scale", "clocks:thm4.4")
def stable_rank(W):
    r"""Stable rank of a matrix (or of each matrix of a stack).

    .. math:: \operatorname{srank}(W)=\frac{\lVert W\rVert_F^2}{\lVert W\rVert_2^2}
        =\frac{\sum_i\sigma_i^2}{\sigma_1^2},\qquad 1\le\operatorname{srank}(W)\le\operatorname{rank}(W).

    Scale invariant (``clocks:appF4-scale``): :math:`\operatorname{srank}(cW)=\operatorname{srank}(W)`,
    :math:`c\ne0`; continuous away from 0, so a converging trajectory has converging stable rank
    (``clocks:thm4.4``).  :math:`\lVert W\rVert_F^2` is computed directly, :math:`\sigma_1` by SVD;
    the matrix is first divided by its largest entry (no overflow or underflow).

    Parameters
    ----------
    W : array_like, shape (..., m, n)
        Finite, nonzero matrix (each matrix of a stack nonzero).

    Returns
    -------
    float or ndarray of shape ``W.shape[:-2]``

    Raises
    ------
    DomainError
        Fewer than 2 dimensions, non-finite entries, or a zero matrix.

    References
    ----------
    Spec ``clocks:eq2.3`` (paper eq. 2.3), ``clocks:appF4-scale``, ``clocks:thm4.4``.
    """
    a = _matrix(W)
    scale = np.max(np.abs(a), axis=(-2, -1))
    if np.any(scale == 0):
        raise DomainError("W must be nonzero for stable_rank (got the zero matrix)")
    a = a / scale[..., None, None]
    fro2 = np.sum(a * a, axis=(-2, -1))
    s1 = _svals(a)[..., 0]
    return V.scalar_or_array(fro2 / (s1 * s1))


@cites("clocks:eq2.3")
def stable_rank_from_singular_values(sigma):
    r"""Stable rank :math:`\sum_i\sigma_i^2/\max_i\sigma_i^2` from singular values (last axis).

    Parameters
    ----------
    sigma : array_like, shape (..., k)
        Nonnegative, finite, not all zero.

    Returns
    -------
    float or ndarray of shape ``sigma.shape[:-1]``

    References
    ----------
    Spec ``clocks:eq2.3``.
    """
    s = np.atleast_1d(V.as_float_array(sigma, "sigma"))
    if np.any(s < 0):
        raise DomainError(f"sigma must be >= 0 (got {float(s[s < 0].flat[0])!r})")
    s1 = np.max(s, axis=-1)
    if np.any(s1 == 0):
        raise DomainError("sigma must not be all zero for stable_rank (got the zero matrix)")
    r = s / s1[..., None]
    return V.scalar_or_array(np.sum(r * r, axis=-1))


# ------------------------------------------------------------------------------------------ Schatten


@cites("clocks:eq2.6")
def schatten_penalty(W=None, p=None, *, singular_values=None, rtol=None):
    r"""Schatten-:math:`p` penalty :math:`\lVert W\rVert_{S_p}^p=\sum_i\sigma_i(W)^p`, :math:`p>0`.

    .. math:: \lVert W\rVert_{S_p}^p=\sigma_1^p\sum_i(\sigma_i/\sigma_1)^p

    Singular values :math:`\le` ``rtol`` :math:`\cdot\sigma_1` count as zero (see the module
    docstring; default ``max(m, n) * eps``, or ``len(singular_values) * eps``; ``rtol=0`` disables).

    Parameters
    ----------
    W : array_like, shape (..., m, n), optional
        The matrix (or a stack); give either ``W`` or ``singular_values``.
    p : float or array_like (broadcast against the stack), > 0
    singular_values : array_like, shape (..., k), optional
        Nonnegative singular values instead of ``W`` (any order).
    rtol : float >= 0, optional

    Returns
    -------
    float or ndarray (``inf`` / ``0`` only where the true value is beyond the double range)

    References
    ----------
    Spec ``clocks:eq2.6`` (paper eq. 2.6).
    """
    pa, s, s1, r = _schatten_setup(W, p, singular_values, rtol)
    return V.scalar_or_array(_scaled_penalty(pa, s, s1, r, [1.0]))


def _scaled_penalty(pa: np.ndarray, s: np.ndarray, s1: np.ndarray, r: np.ndarray, coef: list) -> np.ndarray:
    r"""coef * sum_i sigma_i^p over the kept singular values (mask r), coef = prod(coef) >= 0.

    Direct sum of the powers sigma_i^p (each correctly rounded, <= 2 ulp in all; no ratio sigma_i /
    sigma_1 whose rounding p would amplify) where sigma_1^p and the result are normal doubles; elsewhere
    exp(log coef + p log sigma_1 + log sum_i r_i^p) -- the result is then inf or 0 only if the true value
    is beyond the double range; relative error ~ eps (|log coef| + p |log sigma_1|) there.
    """
    pe = np.asarray(pa)[..., None]
    c = np.asarray(coef[0], dtype=np.float64)
    for f in coef[1:]:
        c = c * f
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        direct = c * np.sum(np.where(r, np.power(s, pe), 0.0), axis=-1)
        s1p = np.power(s1, pa)
        ok = (s1p >= FL.TINY) & np.isfinite(s1p) & np.isfinite(direct) & ((direct >= FL.TINY) | (c == 0))
        log_c = sum(np.log(np.asarray(f, dtype=np.float64)) for f in coef)
        far = np.exp(log_c + pa * np.log(s1) + np.log(_ratio_power_sum(s, s1, r, pa)))
    return np.where(s1 > 0, np.where(ok, direct, far), 0.0)


def _ratio_power_sum(s: np.ndarray, s1: np.ndarray, keep: np.ndarray, p: np.ndarray) -> np.ndarray:
    """sum of (sigma_i / sigma_1)^p over the kept sigma_i (last axis); p broadcast against s.shape[:-1].

    The ratio's power directly where the ratio is a normal double, exp(p (log sigma_i - log sigma_1))
    where it underflows.
    """
    pe = np.asarray(p)[..., None]
    with np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
        r = s / np.where(s1 > 0, s1, 1.0)[..., None]
        rp = np.where(r >= FL.TINY, np.power(np.where(keep, r, 1.0), pe),
                      np.exp(pe * (np.log(np.where(keep, s, 1.0)) - np.log(np.where(s1 > 0, s1, 1.0))[..., None])))
    return np.sum(np.where(keep, rp, 0.0), axis=-1)


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
    r"""Schatten-:math:`p` (quasi-)norm :math:`\lVert W\rVert_{S_p}=(\sum_i\sigma_i^p)^{1/p}`, :math:`p>0`.

    .. math:: \lVert W\rVert_{S_p}=\sigma_1\Big(\sum_i(\sigma_i/\sigma_1)^p\Big)^{1/p}

    A norm for :math:`p\ge1`, a nonconvex quasi-norm for :math:`0<p<1` (favours concentrated
    spectra).  Factoring out :math:`\sigma_1` avoids overflow for large :math:`p` and underflow for
    small singular values.  ``rtol`` as in :func:`schatten_penalty`.

    Parameters
    ----------
    W : array_like, shape (..., m, n), optional
    p : float or array_like, > 0
    singular_values : array_like, shape (..., k), optional
    rtol : float >= 0, optional

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``clocks:eq2.6`` (paper eq. 2.6).
    """
    pa, _, s1, r = _schatten_setup(W, p, singular_values, rtol)  # r: mask of the kept singular values
    S = _ratio_power_sum(_, s1, r, pa)  # in [1, rank]
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        g = np.power(S, 1.0 / pa)  # overflows for p < log(rank) / 709.78 while sigma_1 * g may not
        direct = s1 * g
        far = np.exp(np.log(s1) + np.log(S) / pa)
    out = np.where(np.isfinite(g) & np.isfinite(direct), direct, far)
    return V.scalar_or_array(np.where(s1 > 0, out, 0.0))


# ------------------------------------------------------------------------------------------ layerwise decay


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
    return V.scalar_or_array(V.nonnegative(mu, "mu") * L / 2.0)


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
        x = 2.0 * m * tt
        e = np.exp(-x)
        far = np.sign(d) * np.exp(np.log(np.abs(d)) - x)
    return V.scalar_or_array(np.where(e >= FL.TINY, d * e, far))


# ------------------------------------------------------------------------------------------ energy


@cites("clocks:eq4.2")
def end_to_end_energy(loss_value, W, lam, p, *, rtol=None):
    r"""End-to-end energy :math:`\mathcal E(W)=\mathcal L(W)+\lambda\lVert W\rVert_{S_p}^p`.

    Parameters
    ----------
    loss_value : float or array_like
        :math:`\mathcal L(W)` (finite), broadcast against the stack of ``W``.
    W : array_like, shape (..., m, n)
    lam : float >= 0
    p : float > 0 (:math:`p=2/L` for depth :math:`L`)
    rtol : float >= 0, optional (see :func:`schatten_penalty`)

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``clocks:eq4.2`` (paper eq. 4.2).
    """
    lv = V.finite(loss_value, "loss_value")
    la = V.nonnegative(lam, "lam")
    return V.scalar_or_array(_energy(lv, W, [la], p, rtol))


def _energy(lv: np.ndarray, W, coef: list, p, rtol) -> np.ndarray:
    """loss + prod(coef) * ||W||_{S_p}^p without forming an overflowing penalty or coefficient."""
    pa, s, s1, r = _schatten_setup(W, p, None, rtol)
    with np.errstate(over="ignore"):
        return lv + _scaled_penalty(pa, s, s1, r, coef)


@cites("clocks:eq4.2", "clocks:eq2.7")
def end_to_end_energy_from_weight_decay(loss_value, W, mu, depth, *, rtol=None):
    r"""End-to-end energy induced by layerwise decay :math:`\mu`:
    :math:`\mathcal L(W)+\frac{\mu L}{2}\sum_i\sigma_i^{2/L}`.

    Equals :math:`\min_{W_L\cdots W_1=W}\big[\mathcal L+\frac\mu2\sum_l\lVert W_l\rVert_F^2\big]`
    (``clocks:eq2.7``, :math:`\lambda=\mu L/2`, :math:`p=2/L`).

    Parameters
    ----------
    loss_value : float or array_like; W : array_like (..., m, n); mu : float >= 0; depth : int >= 1
    rtol : float >= 0, optional

    References
    ----------
    Spec ``clocks:eq4.2``, ``clocks:eq2.7``.
    """
    L = _depth(depth)
    lv = V.finite(loss_value, "loss_value")
    m = V.nonnegative(mu, "mu", scalar=True)
    return V.scalar_or_array(_energy(lv, W, [m, L / 2.0], 2.0 / L, rtol))  # lambda = mu L / 2, never formed


# ------------------------------------------------------------------------------------------ gradient, drift


@cites("clocks:thmD.1")
def schatten_penalty_grad(W, p, *, rtol=None) -> np.ndarray:
    r"""Gradient of :math:`\lVert W\rVert_{S_p}^p` on a fixed-rank stratum.

    .. math:: \nabla_W\lVert W\rVert_{S_p}^p=p\,U_r\Sigma_r^{\,p-1}V_r^\top
        \qquad(\lVert W\rVert_{S_p}^p=\operatorname{tr}(W^\top W)^{p/2})

    Well defined for repeated positive singular values.  Singular values :math:`\le`
    ``rtol`` :math:`\sigma_1` are treated as exactly zero and their directions dropped (the
    gradient is not defined there for :math:`p<1`; for :math:`p\ge1` this is the minimum-norm
    subgradient).  The zero matrix returns zeros.

    Parameters
    ----------
    W : array_like, shape (..., m, n)
    p : float > 0
    rtol : float >= 0, optional (default ``max(m, n) * eps``)

    Returns
    -------
    ndarray, shape of ``W``

    References
    ----------
    Spec ``clocks:thmD.1`` (paper App. D, Thm D.1).
    """
    a = _matrix(W)
    pa = float(_scalar(p, "p", positive=True))
    tol = _rtol(rtol, max(a.shape[-2:]) * _EPS)
    U, s, Vt = np.linalg.svd(a, full_matrices=False)
    s1 = s[..., :1]
    keep = (s > tol * s1) & (s > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(keep, pa * np.power(np.where(keep, s, 1.0), pa - 1.0), 0.0)
    return (U * w[..., None, :]) @ Vt


def _scalar(x, name: str, *, positive: bool = False, nonnegative: bool = False) -> float:
    a = V.positive(x, name) if positive else (V.nonnegative(x, name) if nonnegative else V.finite(x, name))
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

    For :math:`\dot W=-\nabla\mathcal E(W)`, :math:`\mathcal E=\mathcal L+\lambda\lVert W\rVert_{S_p}^p`,
    on a stratum where :math:`\sigma_i>0` is simple with singular vectors :math:`u_i,v_i`:

    .. math:: \dot\sigma_i=u_i^\top\dot Wv_i=F_i-\lambda p\,\sigma_i^{\,p-1},
        \qquad F_i=-u_i^\top\nabla\mathcal L(W)\,v_i .

    For :math:`p<1` the shrinkage blows up as :math:`\sigma_i\to0` (a stratum exit; see
    :func:`free_direction_collapse_time`).  This is the end-to-end clock; a layer-trained network
    follows :func:`balanced_singular_value_drift` instead.

    Parameters
    ----------
    W : array_like, shape (m, n)
    grad_loss : array_like, shape (m, n)
        :math:`\nabla\mathcal L(W)` (loss only, without the penalty).
    lam : float >= 0
    p : float > 0
    rtol : float >= 0, optional
        Singular values :math:`\le` ``rtol`` :math:`\sigma_1` are not returned (default ``max(m, n) * eps``).

    Returns
    -------
    SingularValueDrift
        ``(sigma, data_force, shrinkage, drift)``, 1-D arrays over the numerically positive singular values.

    Warns
    -----
    SpectralStratumWarning
        Two kept singular values within ``1e-8 * sigma_1`` (the drift of a non-simple singular value
        is not defined; the value returned is :math:`u_i^\top\dot Wv_i` for the SVD's vectors).

    References
    ----------
    Spec ``clocks:eq4.3`` / ``clocks:prop4.3`` (paper eq. 4.3, Prop. 4.3).
    """
    la = _scalar(lam, "lam", nonnegative=True)
    pa = _scalar(p, "p", positive=True)
    s, force = _drift_setup(W, grad_loss, rtol)
    shrink = la * pa * np.power(s, pa - 1.0)
    return SingularValueDrift(s, force, shrink, force - shrink)


@cites("clocks:eq4.3", "clocks:prop4.3")
def singular_value_drift(W, grad_loss, lam, p, *, rtol=None) -> np.ndarray:
    r"""Drift :math:`\dot\sigma_i=F_i-\lambda p\sigma_i^{p-1}` of the positive singular values (end-to-end flow).

    See :func:`singular_value_drift_terms` (same parameters); returns only the ``drift`` field.

    References
    ----------
    Spec ``clocks:eq4.3`` / ``clocks:prop4.3`` (paper eq. 4.3).
    """
    return singular_value_drift_terms(W, grad_loss, lam, p, rtol=rtol).drift


@cites("clocks:appF2-balanced-drift")
def balanced_singular_value_drift(W, grad_loss, mu, depth, *, rtol=None) -> np.ndarray:
    r"""Singular-value drift of the end-to-end map of a *layer-trained* balanced network.

    Gradient flow on :math:`\mathcal L(W_L\cdots W_1)+\frac\mu2\sum_l\lVert W_l\rVert_F^2` from a
    balanced start gives

    .. math:: \dot\sigma_i=L\,\sigma_i^{\,2-2/L}F_i-\mu L\,\sigma_i
        =L\sigma_i^{\,2-2/L}\big(F_i-\lambda p\,\sigma_i^{\,p-1}\big)\Big|_{\lambda=\mu L/2,\ p=2/L},

    :math:`F_i=-u_i^\top\nabla\mathcal L(W)v_i`: the end-to-end flow (:func:`singular_value_drift`)
    time-rescaled per direction by :math:`L\sigma_i^{2-2/L}`.  Same stationary points, different
    clocks; the decay shrinkage is linear (exponential tails, no finite-time collapse).

    Parameters
    ----------
    W : array_like, shape (m, n)
        End-to-end map.
    grad_loss : array_like, shape (m, n)
        :math:`\nabla\mathcal L(W)` (loss only).
    mu : float >= 0
    depth : int >= 1
    rtol : float >= 0, optional

    Returns
    -------
    ndarray
        :math:`\dot\sigma_i` for the numerically positive singular values (decreasing order).

    Warns
    -----
    SpectralStratumWarning
        Near-degenerate singular values (see :func:`singular_value_drift_terms`).

    References
    ----------
    Spec ``clocks:appF2-balanced-drift`` (derived; paper App. F.2).
    """
    m = _scalar(mu, "mu", nonnegative=True)
    L = _depth(depth)
    s, force = _drift_setup(W, grad_loss, rtol)
    return L * np.power(s, 2.0 - 2.0 / L) * force - m * L * s


@cites("clocks:eq4.3", "clocks:prop4.3")
def free_direction_collapse_time(sigma0, lam, p):
    r"""Time at which a singular value with zero data force reaches 0 under the end-to-end flow.

    With :math:`F_i=0`, :math:`\dot\sigma=-\lambda p\sigma^{p-1}` integrates to
    :math:`\sigma^{2-p}(t)=\sigma_0^{2-p}-\lambda p(2-p)t`, so for :math:`0<p<2`

    .. math:: t_0=\frac{\sigma_0^{2-p}}{\lambda p(2-p)} ;

    ``inf`` for :math:`p\ge2` (shrinkage at most linear) or :math:`\lambda=0`.

    Parameters
    ----------
    sigma0 : float or array_like, >= 0
    lam : float or array_like, >= 0
    p : float or array_like, > 0

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``clocks:eq4.3`` (finite-time collapse for :math:`p<1`, paper §4.4).
    """
    s = V.nonnegative(sigma0, "sigma0")
    la = V.nonnegative(lam, "lam")
    pa = _p(p)
    s, la, pa = np.broadcast_arrays(s, la, pa)
    finite = (pa < 2) & (la > 0)
    q = 2.0 - np.where(finite, pa, 1.0)
    one = np.ones_like(s)
    # one power product sigma0^q lam^-1 p^-1 q^-1 (lam p can underflow while sigma0^q does too:
    # 1e-600 / 2e-616 is 5e15, not 0/0); sigma0 = 0 gives 0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = FL.power_product([np.where(s > 0, s, 1.0), np.where(finite, la, 1.0), np.where(finite, pa, 1.0), q],
                             [q, -1, -1, -1])
    t = np.where(s > 0, t, 0.0 * one)
    return V.scalar_or_array(np.where(finite, t, np.inf))


# ------------------------------------------------------------------------------------------ tails, Eckart-Young


@cites("clocks:appF4-tail", "clocks:appF4-scale")
def spectral_tail(W, k, *, normalized=True):
    r"""Rank-:math:`k` spectral tail of :math:`W`.

    .. math:: \tau_k(W)=\frac{\sum_{i>k}\sigma_i^2}{\sum_i\sigma_i^2}=\frac{\lVert W-W_k\rVert_F^2}{\lVert W\rVert_F^2}\in[0,1]

    or the raw tail :math:`\sum_{i>k}\sigma_i^2` (``normalized=False``).  The tail is summed from
    the trailing singular values (no cancellation).  :math:`\tau_k(aW)=\tau_k(W)`; the raw tail
    scales by :math:`a^2`.

    Parameters
    ----------
    W : array_like, shape (..., m, n)
    k : int in ``0 .. min(m, n)`` (``k = 0`` gives 1)
    normalized : bool

    Returns
    -------
    float or ndarray of shape ``W.shape[:-2]``

    Raises
    ------
    DomainError
        ``k`` out of range; a zero matrix with ``normalized=True``.

    References
    ----------
    Spec ``clocks:appF4-tail`` (paper App. F.4).
    """
    a = _matrix(W)
    kmax = min(a.shape[-2:])
    kk = V.integer_at_least(k, "k", 0)
    if kk > kmax:
        raise DomainError(f"k must be in 0..{kmax} = min(m, n) (got {kk})")
    normalized = V.flag(normalized, "normalized")
    s = _svals(a)
    scale = s[..., :1]
    if normalized:
        if np.any(scale == 0):
            raise DomainError("W must be nonzero for the normalized spectral tail (got the zero matrix)")
        r = s / scale
        return V.scalar_or_array(np.sum(r[..., kk:] ** 2, axis=-1) / np.sum(r * r, axis=-1))
    with np.errstate(over="ignore", under="ignore"):  # inf only where the tail exceeds 1.8e308
        return V.scalar_or_array(np.sum(s[..., kk:] ** 2, axis=-1))


@cites("clocks:thm5.2")
def eckart_young_rank(srank, eta, *, max_rank=None) -> int:
    r"""Output-effective dimension :math:`k=\lceil r_s/\eta^2\rceil` of Thm 5.2.

    With :math:`k` so chosen, :math:`\sigma_{k+1}\le\sqrt{\lVert W\rVert_F^2/(k+1)}\le\eta\lVert W\rVert_2`,
    hence :math:`\lVert Wh-WP_{V_k}h\rVert\le\eta\lVert W\rVert_2\lVert h\rVert` for every :math:`h`.
    :math:`r_s/\eta^2` is snapped to the nearest integer when within :math:`10^{-12}` relative before
    the ceiling (``ceil(2.7 / 0.3**2)`` would give 31 instead of 30).

    Parameters
    ----------
    srank : float >= 1
        Stable rank :math:`r_s`.
    eta : float in (0, 1]
        Relative output error.
    max_rank : int >= 0, optional
        Cap (e.g. ``min(m, n)``: beyond the rank the error is 0).

    Returns
    -------
    int
        ``math.inf`` (without ``max_rank``) where :math:`r_s/\eta^2` exceeds the largest double.

    References
    ----------
    Spec ``clocks:thm5.2`` (paper Thm 5.2).
    """
    rs = _scalar(srank, "srank")
    if rs < 1:
        raise DomainError(f"srank must be >= 1 (got {rs!r})")
    e = _scalar(eta, "eta")
    if not 0 < e <= 1:
        raise DomainError(f"eta must be in (0, 1] (got {e!r})")
    cap = None if max_rank is None else V.integer_at_least(max_rank, "max_rank", 0)
    x = (rs / e) / e  # not rs / (e * e): e * e underflows to 0 for eta < 1.5e-154
    if not math.isfinite(x):  # r_s / eta^2 > 1.8e308
        return math.inf if cap is None else cap
    xr = round(x)
    if abs(x - xr) <= 1e-12 * x:
        x = float(xr)
    k = int(math.ceil(x))
    return k if cap is None else min(k, cap)


@cites("clocks:thm5.2")
def best_rank_k(W, k) -> np.ndarray:
    r"""Best rank-:math:`k` approximation :math:`W_k=U_k\Sigma_kV_k^\top` (Eckart–Young).

    Parameters
    ----------
    W : array_like, shape (m, n)
    k : int >= 0 (``k >= min(m, n)`` returns a copy of ``W``)

    Returns
    -------
    ndarray, shape (m, n)

    References
    ----------
    Spec ``clocks:thm5.2`` (Eckart & Young 1936).
    """
    a = _matrix(W, stack=False)
    kk = V.integer_at_least(k, "k", 0)
    if kk >= min(a.shape):
        return a.copy()
    U, s, Vt = np.linalg.svd(a, full_matrices=False)
    return (U[:, :kk] * s[:kk]) @ Vt[:kk]


@cites("clocks:thm5.2")
def principal_projection_error(W, k) -> float:
    r"""Operator-norm error of the rank-:math:`k` truncation: :math:`\lVert W-W_k\rVert_2=\sigma_{k+1}`.

    Equals :math:`\sup_{h\ne0}\lVert Wh-WP_{V_k}h\rVert/\lVert h\rVert`; 0 for :math:`k\ge\min(m,n)`.

    Parameters
    ----------
    W : array_like, shape (m, n)
    k : int >= 0

    Returns
    -------
    float

    References
    ----------
    Spec ``clocks:thm5.2``.
    """
    a = _matrix(W, stack=False)
    kk = V.integer_at_least(k, "k", 0)
    s = _svals(a)
    return float(s[kk]) if kk < s.size else 0.0


# ------------------------------------------------------------------------------------------ covering, robustness


@cites("clocks:prop5.1", "clocks:prop5.3")
def log_covering_number_ball_bounds(R, r, k, *, upper="vershynin"):
    r"""Logarithm of the bounds on the covering number of a Euclidean ball :math:`B_R^k` by radius-:math:`r` balls.

    .. math:: k\log\frac Rr\ \le\ \log N(B_R^k,r)\ \le\ k\log\Big(1+\frac{2R}{r}\Big)\ \le\ k\log\frac{3R}{r}

    (external covers; Vershynin 2018, Cor. 4.2.13).  ``upper="vershynin"`` gives :math:`1+2R/r`
    (any :math:`r>0`), ``upper="3R"`` the paper's form :math:`3R/r` (needs :math:`r\le R`).  The lower
    bound is returned as :math:`\max(0,k\log(R/r))` (:math:`N\ge1`).  For covers with centres inside
    the set use radius :math:`r/2`: :math:`N^{\rm int}(S,r)\le N^{\rm ext}(S,r/2)` (``clocks:prop5.3``,
    cover of a projected representation :math:`P_{V_k}\mathcal H` with :math:`\lVert P_{V_k}h\rVert\le R`).

    Parameters
    ----------
    R : float or array_like, > 0
    r : float or array_like, > 0 (``<= R`` for ``upper="3R"``)
    k : int >= 1
    upper : {"vershynin", "3R"}

    Returns
    -------
    (lo, hi) : floats or ndarrays

    References
    ----------
    Spec ``clocks:prop5.1``, ``clocks:prop5.3`` (paper Prop. 5.1, 5.3).
    """
    Ra = V.positive(R, "R")
    ra = V.positive(r, "r")
    kk = V.integer_at_least(k, "k", 1)
    up = V.choice(upper, "upper", ("vershynin", "3R"))
    Ra, ra = np.broadcast_arrays(Ra, ra)
    if up == "3R" and np.any(ra > Ra):
        bad = ra[ra > Ra].flat[0]
        raise DomainError(f"r must be <= R for upper='3R' (got r={float(bad)!r})")
    log_ratio = FL.log_quotient(Ra, ra)
    lo = kk * np.maximum(0.0, log_ratio)
    if up == "3R":
        hi = kk * (math.log(3.0) + log_ratio)
    else:
        # log1p(2 R / r) with 2 R / r a scaled product (exact binary exponent: no subnormal loss for
        # R/r < 1e-308); log(2) + log(R/r) + log1p(r / 2R) where it overflows
        x = FL.power_product([Ra, ra], [1, -1]) * 2.0
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            hi = kk * np.where(np.isfinite(x), np.log1p(x), math.log(2.0) + log_ratio + np.log1p(0.5 / x))
        # below 2^-54 log1p(x) = x: k 2 R / r as one scaled product (no rounding of a subnormal x first)
        hi = np.where(x < 2.0 ** -54, FL.power_product([Ra, ra, np.float64(2.0 * kk)], [1, -1, 1]), hi)
    return V.scalar_or_array(lo), V.scalar_or_array(hi)



@cites("clocks:prop5.1", "clocks:prop5.3")
def covering_number_ball_bounds(R, r, k, *, upper="vershynin"):
    r"""Bounds :math:`((R/r)^k,\ (1+2R/r)^k\text{ or }(3R/r)^k)` on :math:`N(B_R^k,r)`.

    ``exp`` of :func:`log_covering_number_ball_bounds` (same parameters); ``inf`` on overflow —
    prefer the log version.

    References
    ----------
    Spec ``clocks:prop5.1``, ``clocks:prop5.3``.
    """
    lo, hi = log_covering_number_ball_bounds(R, r, k, upper=upper)
    with np.errstate(over="ignore"):  # inf only where the bound exceeds 1.8e308
        return V.scalar_or_array(np.exp(lo)), V.scalar_or_array(np.exp(hi))


@cites("clocks:thm2.2", "clocks:def2.1")
def robust_generalization_bound(eps_rob, n_cells, n, loss_bound, fail_prob, *, log_n_cells=None):
    r"""Xu–Mannor robustness bound on the generalization gap (holds with probability :math:`\ge1-\delta_f`).

    For an :math:`(N,\epsilon(\cdot))`-robust algorithm (``clocks:def2.1``) and a loss in :math:`[0,M]`:

    .. math:: \big|\mathcal L_{\rm pop}-\mathcal L_{\rm emp}\big|\le\epsilon
        +M\sqrt{\frac{2N\ln2+2\ln(1/\delta_f)}{n}}

    (Bretagnolle–Huber–Carol).  ``log_n_cells`` (:math:`\ln N`) replaces ``n_cells`` when :math:`N`
    overflows; :math:`2N\ln2` is then :math:`2\ln2\,e^{\ln N}`.  Evaluated in log space where a term
    leaves the double range: ``inf`` only where the bound itself exceeds :math:`1.8\times10^{308}`.

    Parameters
    ----------
    eps_rob : float or array_like, >= 0
    n_cells : float or array_like, >= 1 (``None`` when ``log_n_cells`` is given)
    n : float or array_like, >= 1 (sample size)
    loss_bound : float or array_like, > 0 (:math:`M`)
    fail_prob : float or array_like in (0, 1) (:math:`\delta_f`)
    log_n_cells : float or array_like, >= 0, optional

    Returns
    -------
    float or ndarray

    References
    ----------
    Spec ``clocks:thm2.2`` (paper Thm 2.2; Xu & Mannor 2012, Thm 3), ``clocks:def2.1``.
    """
    e = V.nonnegative(eps_rob, "eps_rob")
    if log_n_cells is None:
        if n_cells is None:
            raise DomainError("n_cells must be given (>= 1) unless log_n_cells is")
        N = V.as_float_array(n_cells, "n_cells")
        if np.any(N < 1):
            raise DomainError(f"n_cells must be >= 1 (got {float(N[N < 1].flat[0]) if N.ndim else float(N)!r})")
        logN = np.log(N)
    else:
        logN = V.nonnegative(log_n_cells, "log_n_cells")
        with np.errstate(over="ignore"):
            N = np.exp(logN)
    na = V.as_float_array(n, "n")
    if np.any(na < 1):
        raise DomainError(f"n must be >= 1 (got {float(na[na < 1].flat[0]) if na.ndim else float(na)!r})")
    M = V.positive(loss_bound, "loss_bound")
    d = V.in_open_interval(fail_prob, "fail_prob", 0.0, 1.0)
    # direct where the terms are normal doubles (N itself, not exp(log N): 1e300 keeps its last digit);
    # in log space where 2 N ln 2 or its quotient by n leaves the range (the bound is inf only beyond it)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        cover = 2.0 * math.log(2.0) * N
        conf = -2.0 * np.log(d)  # > 0
        arg = (cover + conf) / na
        root = M * np.sqrt(arg)
        direct = e + root
        log_arg = np.logaddexp(math.log(2.0 * math.log(2.0)) + logN, np.log(conf)) - np.log(na)
        far = e + np.exp(np.log(M) + 0.5 * log_arg)
        ok = np.isfinite(cover) & np.isfinite(root) & (arg >= FL.TINY) & (root >= FL.TINY)
    return V.scalar_or_array(np.where(ok, direct, far))


@cites("clocks:thm5.5", "clocks:def5.4")
def stable_rank_generalization_bound(eps_rob, lip, eta, W_op, R, srank, cover_radius, n, loss_bound, fail_prob, *,
                                     upper="3R"):
    r"""Generalization bound through the representation clock (Thm 5.5).

    .. math:: \big|\mathcal L_{\rm pop}-\mathcal L_{\rm emp}\big|\le\epsilon_{\rm rob}+2L_\ell\,\eta\,\Omega R
        +M\sqrt{\frac{2\,(3R/r)^{\lceil r_s/\eta^2\rceil}\ln2+2\ln(1/\delta_f)}{n}}

    Builds :math:`k=\lceil r_s/\eta^2\rceil` (:func:`eckart_young_rank`), :math:`\ln N` from
    :func:`log_covering_number_ball_bounds` (upper bound) and calls
    :func:`robust_generalization_bound` with ``log_n_cells``.  Returns ``inf`` only where the bound
    exceeds the largest double (the cover term :math:`(3R/r)^k` alone may overflow: log space).  The projection term :math:`2L_\ell\eta\Omega R`
    dominates unless :math:`\eta\Omega R` is small.

    Parameters
    ----------
    eps_rob : float >= 0 (projected robustness slack, ``clocks:def5.4``)
    lip : float >= 0 (Lipschitz constant :math:`L_\ell` of the loss in the logits)
    eta : float in (0, 1]
    W_op : float > 0 (:math:`\Omega\ge\lVert W\rVert_2`)
    R : float > 0 (embedding norm bound)
    srank : float >= 1
    cover_radius : float > 0 (:math:`r`; ``<= R`` for ``upper="3R"``)
    n : float >= 1; loss_bound : float > 0; fail_prob : float in (0, 1)
    upper : {"3R", "vershynin"}

    Returns
    -------
    float

    References
    ----------
    Spec ``clocks:thm5.5`` (paper Thm 5.5), ``clocks:def5.4``.
    """
    e = _scalar(eps_rob, "eps_rob", nonnegative=True)
    li = _scalar(lip, "lip", nonnegative=True)
    Om = _scalar(W_op, "W_op", positive=True)
    Rr = _scalar(R, "R", positive=True)
    r_cover = _scalar(cover_radius, "cover_radius", positive=True)
    if upper == "3R" and r_cover > Rr:
        raise DomainError(f"cover_radius must be <= R = {Rr!r} for upper='3R' (got {r_cover!r})")
    k = eckart_young_rank(srank, eta)
    _, logN = log_covering_number_ball_bounds(Rr, r_cover, k, upper=upper)
    slack = e + 2.0 * li * float(eta) * Om * Rr
    return float(robust_generalization_bound(slack, None, n, loss_bound, fail_prob, log_n_cells=logN))
