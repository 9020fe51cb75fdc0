"""Repulsion: the extra quantities logged during training."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._args import DomainError, _labels, _matrix


@cites("repulsion:aux")
def ftf_offdiag_ratio(F_tilde: Any) -> float:
    r"""Off-diagonal ratio of H = F̃ᵀ·F̃: the mean |H_jℓ| off the diagonal over the mean |H_jj|.

    .. math::

        r=\frac{\frac1{K(K-1)}\sum_{j\ne\ell}|H_{j\ell}|}{\max\big(\frac1K\sum_j|H_{jj}|,10^{-30}\big)}

    In words: r is the mean absolute off-diagonal entry of H divided by its mean absolute diagonal
    entry (floored at 10⁻³⁰ as in the code; F̃ is rescaled first, so the floor never bites).  It stays
    below 0.04 in both conditions of the full setup (Tian's bound: 8 %).

    Parameters
    ----------
    F_tilde : array_like
        Centred features F̃, a finite 2-D array of shape (n, K) with K ≥ 2.

    Returns
    -------
    float
        The ratio r ≥ 0 (0 for F̃ = 0, the code's value).

    Raises
    ------
    DomainError
        If `F_tilde` is not a finite 2-D array with at least 2 columns.

    References
    ----------
    Spec ID `repulsion:aux` (quantity (a); the authors' code `tian_metrics.ftf_ratio`).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    scale = float(np.max(np.abs(Ft)))
    if scale == 0.0:
        return 0.0  # the code's value for F~ = 0 (0 / 1e-30)
    # the ratio is scale invariant: scale F~ to max |entry| 1 first, so the code's floor 1e-30 on the
    # diagonal mean (now >= 1/K) never bites and F~ of size 1e-20 (H ~ 1e-40) no longer gives off/1e-30
    Fs = Ft / scale
    H = np.abs(Fs.T @ Fs)
    K = H.shape[0]
    dg = float(np.trace(H)) / K
    off = (float(H.sum()) - float(np.trace(H))) / (K * (K - 1))
    return off / max(dg, 1e-30)


def _G_F(F: Any, Vout: Any, y: Any, M: int) -> np.ndarray:
    M = V.integer_at_least(M, "M", 2)
    F = _matrix(F, "F")
    Vo = _matrix(Vout, "Vout")
    yy = _labels(y, M)
    if Vo.shape != (F.shape[1], M) or yy.size != F.shape[0]:
        raise DomainError(f"inconsistent shapes: F {F.shape}, V {Vo.shape} (need (K, M) = ({F.shape[1]}, {M})), y ({yy.size},)")
    Y = np.full((yy.size, M), -1.0 / M)
    Y[np.arange(yy.size), yy] += 1.0
    R = Y - F @ Vo
    R = R - R.mean(axis=0, keepdims=True)
    return R @ Vo.T


@cites("repulsion:aux")
def backprop_gradient_norm(F: Any, Vout: Any, y: Any, M: int) -> float:
    r"""Backpropagated-gradient norm ‖G_F‖_F with G_F = P₁^⊥·(Y − F·V)·Vᵀ and Y = onehot(y) − 1/M.

    Both Y and F·V are centred over the samples (the theory's form, not the trained loss).  It peaks
    near epoch 50 in the full setup (seed 0: 71.2 at epoch 57 with grokking, 63.6 at epoch 49 in the
    control).

    Parameters
    ----------
    F : array_like
        Hidden features, a finite 2-D array of shape (n, K).
    Vout : array_like
        Second-layer weights V, a finite array of shape (K, M).
    y : array_like of int
        Labels, a 1-D integer array of length n with entries in [0, M).
    M : int
        The modulus M, an integer ≥ 2.

    Returns
    -------
    float
        ‖G_F‖_F ≥ 0.

    Raises
    ------
    DomainError
        If an array is not finite or the shapes are inconsistent, or `M` or `y` is invalid.

    References
    ----------
    Spec ID `repulsion:aux` (quantity (b); the authors' code `tian_metrics.gF_norm`).
    """
    return float(np.linalg.norm(_G_F(F, Vout, y, M)))


@cites("repulsion:aux")
def independence_proxy(F: Any, Vout: Any, y: Any, M: int, n_pairs: int = 500, seed: Any = 0) -> float:
    r"""Independence proxy: median |cos(g_j, g_j′)| over random pairs of columns of G_F.

    G_F = P₁^⊥·(Y − F·V)·Vᵀ as in `backprop_gradient_norm`.  `n_pairs` index pairs are drawn with
    `numpy.random.default_rng(seed).integers(0, K)` (twice), pairs with j = j′ are dropped, and the
    norms are floored at 10⁻³⁰ (as the code).  About 0.08 in the full setup.

    Parameters
    ----------
    F : array_like
        Hidden features, a finite 2-D array of shape (n, K).
    Vout : array_like
        Second-layer weights V, a finite array of shape (K, M).
    y : array_like of int
        Labels, a 1-D integer array of length n with entries in [0, M).
    M : int
        The modulus M, an integer ≥ 2.
    n_pairs : int, optional
        Number of random pairs drawn, an integer ≥ 1 (default 500).
    seed : int or numpy.random.Generator, optional
        Seed of the pair draw, an integer ≥ 0 (default 0), or a Generator to draw from.

    Returns
    -------
    float
        The median |cosine| in [0, 1]; `nan` if every drawn pair has j = j′.

    Raises
    ------
    DomainError
        If an array is not finite or the shapes are inconsistent, `M` or `y` is invalid, or `n_pairs`,
        `seed` is out of range.

    References
    ----------
    Spec ID `repulsion:aux` (quantity (c); the authors' code `tian_metrics.indep_cos_med`).
    """
    G = _G_F(F, Vout, y, M)
    n_pairs = V.integer_at_least(n_pairs, "n_pairs", 1)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(V.integer_at_least(seed, "seed", 0))
    K = G.shape[1]
    a = rng.integers(0, K, size=n_pairs)
    b = rng.integers(0, K, size=n_pairs)
    keep = a != b
    if not np.any(keep):
        return float("nan")
    A, Bc = G[:, a[keep]], G[:, b[keep]]
    cos = np.abs(np.sum(A * Bc, axis=0)) / (np.maximum(np.linalg.norm(A, axis=0), 1e-30)
                                            * np.maximum(np.linalg.norm(Bc, axis=0), 1e-30))
    return float(np.median(cos))
