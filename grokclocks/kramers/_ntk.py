"""Explicit Jacobian, NTK split into readout and feature parts, and the infinite-width kernels on one-hot pairs."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._conventions import _S0, _S1, _SQ3
from ._model import _alpha, _net_arrays

__all__ = ["TwoLayerJacobian", "NTKParts", "OneHotKernel", "modadd_nngp_spectrum", "nngp_kernel_matrix",
           "ntk_decomposition", "relu_feature_kernel_modadd", "relu_nngp_modadd", "two_layer_jacobian"]


class TwoLayerJacobian(NamedTuple):
    r"""Result of `two_layer_jacobian`: `J_a` = ∂f/∂a, shape (n, N), and `J_W` = ∂f/∂W, shape (n, N, d)."""

    J_a: np.ndarray
    """∂f/∂a, an (n, N) array: row i is the scaled feature vector N^(−α)σ(W xᵢ)."""
    J_W: np.ndarray
    """∂f/∂W, an (n, N, d) array."""


class NTKParts(NamedTuple):
    r"""Result of `ntk_decomposition`: the readout part `K_a` = K⁽ᵃ⁾ and the feature part `K_w` = K⁽ʷ⁾ of the NTK, eq. (4)."""

    K_a: np.ndarray
    """The readout part K⁽ᵃ⁾ = N^(−2α)SSᵀ, an (n, n) array."""
    K_w: np.ndarray
    """The feature part K⁽ʷ⁾, (n, n) for a scalar output or (C, C, n, n) for C outputs."""


class OneHotKernel(NamedTuple):
    r"""A kernel on one-hot pairs of ℤ_p² by the number of shared operands: `k_both`, `k_one`, `k_none` for two, one and no shared operands."""

    k_both: float
    """The kernel value for two pairs with both operands equal (the diagonal)."""
    k_one: float
    """The kernel value for two pairs sharing exactly one operand."""
    k_none: float
    """The kernel value for two pairs sharing no operand."""


@cites("kramers:jacobian")
def two_layer_jacobian(X: Any, W: Any, a: Any, alpha: float) -> TwoLayerJacobian:
    r"""Explicit Jacobian of the scalar-output two-layer net (no autodiff).

    .. math::
        \frac{\partial f(x)}{\partial a_j}=N^{-\alpha}\sigma(w_j\cdot x),\qquad
        \frac{\partial f(x)}{\partial w_j}=N^{-\alpha}a_j\,\sigma'(w_j\cdot x)\,x,\qquad \sigma'(u)=\mathbf 1[u>0].

    In words: the derivative in aⱼ is the scaled feature N^(−α)σ(wⱼ·x); the derivative in wⱼ is
    N^(−α)aⱼ·1[wⱼ·x > 0]·x.

    Parameters
    ----------
    X : array_like
        The inputs, an (n, d) array: n samples of dimension d (for modular addition the one-hot pairs, d =
        2p).
    W : array_like
        The first-layer weights (features), an (N, d) array: one row wⱼ per hidden unit, N the width.
    a : array_like
        The readout weights, an (N,) array (scalar output).
    alpha : float
        α, the width exponent of eq. (1): the output is N^(−α)·Σⱼ aⱼσ(wⱼ·x); 0 ≤ α ≤ 1/2 (not Lyu et al.'s
        initialisation scale, which is `init_scale`).

    Returns
    -------
    TwoLayerJacobian
        (J_a, J_W) of shapes (n, N) and (n, N, d).

    References
    ----------
    Spec `kramers:jacobian`.
    """
    X, W, a = _net_arrays(X, W, a)
    if a.ndim != 1:
        raise DomainError(f"a must be 1-D (scalar output) for the Jacobian (got shape {a.shape})")
    al = _alpha(alpha)
    N = W.shape[0]
    Z = X @ W.T
    J_a = N ** (-al) * np.maximum(Z, 0.0)
    D = (Z > 0).astype(np.float64)
    J_W = N ** (-al) * (D * a)[:, :, None] * X[:, None, :]
    return TwoLayerJacobian(J_a, J_W)


def _abt(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B.T for wide A, B (n x N, N >> n), via the tall contiguous transposes (much faster in OpenBLAS)."""
    return np.ascontiguousarray(A.T).T @ np.ascontiguousarray(B.T)


@cites("kramers:eq4")
def ntk_decomposition(X: Any, W: Any, a: Any, alpha: float) -> NTKParts:
    r"""The NTK split into readout and feature parts (eq. 4), exact.

    .. math::
        K^{(a)}=N^{-2\alpha}SS^\top,\qquad K^{(w)}=N^{-2\alpha}\,(D\,\mathrm{diag}(a^2)D^\top)\odot(XX^\top),

    In words: with S = σ(XWᵀ) the features and D = σ′(XWᵀ) the activation pattern, the readout part is
    N^(−2α)SSᵀ and the feature part N^(−2α)(D diag(a²) Dᵀ) ⊙ XXᵀ. For a vector readout `a` of shape (N, C),
    K⁽ᵃ⁾ is the same for every output and K⁽ʷ⁾ has shape (C, C, n, n), the output pair (c, c′) using
    a_jc·a_jc′.

    Parameters
    ----------
    X : array_like
        The inputs, an (n, d) array: n samples of dimension d (for modular addition the one-hot pairs, d =
        2p).
    W : array_like
        The first-layer weights (features), an (N, d) array: one row wⱼ per hidden unit, N the width.
    a : array_like
        The readout weights, an (N,) array (scalar output) or (N, C) (C outputs).
    alpha : float
        α, the width exponent of eq. (1): the output is N^(−α)·Σⱼ aⱼσ(wⱼ·x); 0 ≤ α ≤ 1/2 (not Lyu et al.'s
        initialisation scale, which is `init_scale`).

    Returns
    -------
    NTKParts
        (K_a, K_w): (n, n) and (n, n) for a scalar output, (n, n) and (C, C, n, n) for a vector output.

    References
    ----------
    Spec `kramers:eq4`.
    """
    X, W, a = _net_arrays(X, W, a)
    al = _alpha(alpha)
    N = W.shape[0]
    Z = X @ W.T
    S = np.maximum(Z, 0.0)
    D = (Z > 0).astype(np.float64)
    c = N ** (-2.0 * al)
    K_a = c * _abt(S, S)
    G = X @ X.T
    if a.ndim == 1:
        K_w = c * _abt(D * a**2, D) * G
    else:
        K_w = c * np.einsum("ij,jc,jd,kj->cdik", D, a, a, D) * G
    return NTKParts(K_a, K_w)


@cites("kramers:nngp")
def relu_nngp_modadd(p: int) -> OneHotKernel:
    r"""Infinite-width readout kernel κ on one-hot pairs (derived here; the arc-cosine kernel of degree 1).

    With w ~ N(0, I/d), d = 2p and cos ϑ = (x·x′)/2: κ = (sin ϑ + (π − ϑ)cos ϑ)/(2πp), i.e.

    .. math:: k_{\rm both}=\frac1{2p},\quad k_{\rm one}=\frac{\sqrt3/2+\pi/3}{2\pi p},\quad k_{\rm none}=\frac1{2\pi p}.

    In words: 1/(2p) for the same pair, (√3/2 + π/3)/(2πp) for one shared operand, 1/(2πp) for none. The
    finite-width readout kernel tends to K⁽ᵃ⁾ → N^(1−2α)κ.

    Parameters
    ----------
    p : int
        The modulus p of the modular-addition task, an integer ≥ 2.

    Returns
    -------
    OneHotKernel
        (k_both, k_one, k_none).

    References
    ----------
    Spec `kramers:nngp`; Cho & Saul (2009).
    """
    p = V.count(p, "p", 2)
    c = 2.0 * math.pi * p
    return OneHotKernel(1.0 / (2.0 * p), (_SQ3 / 2.0 + math.pi / 3.0) / c, 1.0 / c)


@cites("kramers:nngp")
def relu_feature_kernel_modadd(p: int) -> OneHotKernel:
    r"""Infinite-width feature kernel κ₁(x·x′) = E[σ′σ′] on one-hot pairs: (1, 1/3, 0) for both, one, no shared operands.

    E[σ′(u)σ′(u′)] = (π − ϑ)/(2π); the feature kernel tends to K⁽ʷ⁾ → N^(−2α)(Nσ_a²)κ₁ (a factor N^(−2α) with
    the paper's σ_a² = 1/N). Independent of p.

    Parameters
    ----------
    p : int
        The modulus p of the modular-addition task, an integer ≥ 2. (checked; the kernel does not depend
        on it).

    Returns
    -------
    OneHotKernel
        (k_both, k_one, k_none) = (1, 1/3, 0).

    References
    ----------
    Spec `kramers:nngp`.
    """
    V.count(p, "p", 2)
    return OneHotKernel(1.0, 1.0 / 3.0, 0.0)


@cites("kramers:nngp")
def nngp_kernel_matrix(a_idx: Any, b_idx: Any, p: int, *, feature: bool = False) -> np.ndarray:
    r"""The infinite-width kernel κ (or κ₁ with `feature=True`) on given pairs (a, b) of ℤ_p².

    Entry (i, k) is k_both, k_one or k_none according to how many of the coordinates of (aᵢ, bᵢ) and (a_k,
    b_k) coincide.

    Parameters
    ----------
    a_idx : array_like
        The first operands aᵢ, a 1-d integer array with entries in [0, p).
    b_idx : array_like
        The second operands bᵢ, a 1-d integer array with entries in [0, p), the length of `a_idx`.
    p : int
        The modulus p of the modular-addition task, an integer ≥ 2.
    feature : bool
        False (default): the readout kernel κ of `relu_nngp_modadd`; True: the feature kernel κ₁ of
        `relu_feature_kernel_modadd`.

    Returns
    -------
    ndarray
        The (n, n) float64 kernel matrix, n the number of pairs.

    References
    ----------
    Spec `kramers:nngp`.
    """
    p = V.integer_at_least(p, "p", 2)
    a_idx = V.index_array(a_idx, "a_idx", p, what="tokens")
    b_idx = V.index_array(b_idx, "b_idx", p, what="tokens")
    if a_idx.shape != b_idx.shape or a_idx.ndim != 1:
        raise DomainError(f"a_idx, b_idx must be 1-D of equal length (got {a_idx.shape}, {b_idx.shape})")
    V.max_size(float(a_idx.size) ** 2, "a_idx", a_idx)
    vals = relu_feature_kernel_modadd(p) if V.flag(feature, "feature") else relu_nngp_modadd(p)
    shared = (a_idx[:, None] == a_idx[None, :]).astype(int) + (b_idx[:, None] == b_idx[None, :]).astype(int)
    return np.choose(2 - shared, vals).astype(np.float64)


@cites("kramers:nngp-spectrum")
def modadd_nngp_spectrum(p: int) -> dict[str, Any]:
    r"""Closed-form spectrum of κ on the full p² grid of modular addition (derived here).

    With c = 2πp:

    .. math::
        \lambda_{\rm top}=\tfrac1c\big[p^2+2p(\tfrac{\sqrt3}{2}+\tfrac{\pi}{3}-1)+(1+\tfrac{\pi}{3}-\sqrt3)\big]\ (\times1),\\
        \lambda_{\rm mid}=\tfrac1c\big[p(\tfrac{\sqrt3}{2}+\tfrac{\pi}{3}-1)+(1+\tfrac{\pi}{3}-\sqrt3)\big]\ (\times2(p-1)),\qquad
        \lambda_{\rm bottom}=\tfrac1c(1+\tfrac{\pi}{3}-\sqrt3)\ (\times(p-1)^2).

    In words: three eigenvalues, of multiplicities 1, 2(p − 1) and (p − 1)². Every label-relevant Fourier
    function cos(2πk(a + b)/p) lies in the bottom eigenspace; the condition number λ_top/λ_bottom ≈ 3.17p² to
    leading order only.

    Parameters
    ----------
    p : int
        The modulus p of the modular-addition task, an integer ≥ 2.

    Returns
    -------
    dict
        `top`, `mid`, `bottom` (the eigenvalues), `multiplicities` = (1, 2(p − 1), (p − 1)²) and `kappa` =
        top/bottom.

    References
    ----------
    Spec `kramers:nngp-spectrum`.
    """
    p = V.count(p, "p", 2)
    pf = float(p)
    two_pi = 2.0 * math.pi
    # divided through by p: no p^2 (a Python int past 1.3e154 cannot become a float); kappa is inf
    # only where it exceeds 1.8e308
    top = _top(pf)
    mid = (_S1 + _S0 / pf) / two_pi
    bottom = _S0 / two_pi / pf
    kappa = (pf * (pf + 2.0 * _S1) + _S0) / _S0
    return dict(top=top, mid=mid, bottom=bottom, multiplicities=(1, 2 * (p - 1), (p - 1) ** 2), kappa=kappa)


def _top(pf: Any) -> Any:
    """λ_top = (p + 2(√3/2 + π/3 − 1) + (1 + π/3 − √3)/p)/(2π) for p as a float or a float64 array (the same
    operations): divided through by p, so that no p² is formed."""
    return (pf + 2.0 * _S1 + _S0 / pf) / (2.0 * math.pi)
