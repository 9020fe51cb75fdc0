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
    r"""Jacobian of the two-layer net (:func:`two_layer_jacobian`).

    ``J_a`` = :math:`\partial f/\partial a` ``(n, N)``, ``J_W`` = :math:`\partial f/\partial W` ``(n, N, d)``.
    """

    J_a: np.ndarray
    J_W: np.ndarray


class NTKParts(NamedTuple):
    r"""The NTK's readout and feature parts :math:`(K^{(a)}, K^{(w)})` of eq. (4) (:func:`ntk_decomposition`)."""

    K_a: np.ndarray
    K_w: np.ndarray


class OneHotKernel(NamedTuple):
    r"""A kernel on one-hot pairs of :math:`\mathbb Z_p^2` by the number of shared operands: both, one, none."""

    k_both: float
    k_one: float
    k_none: float


@cites("kramers:jacobian")
def two_layer_jacobian(X: Any, W: Any, a: Any, alpha: float) -> TwoLayerJacobian:
    r"""Explicit Jacobian of the scalar-output net (no autodiff).

    .. math::
        \frac{\partial f(x)}{\partial a_j}=N^{-\alpha}\sigma(w_j\cdot x),\qquad
        \frac{\partial f(x)}{\partial w_j}=N^{-\alpha}a_j\,\sigma'(w_j\cdot x)\,x,\qquad \sigma'(u)=\mathbf 1[u>0].

    Returns
    -------
    TwoLayerJacobian
        ``(J_a, J_W)``: shapes (n, N) and (n, N, d).

    References
    ----------
    ``kramers:jacobian``.
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
    r"""NTK split into readout and feature parts (eq. 4), exact.

    .. math::
        K^{(a)}=N^{-2\alpha}SS^\top,\qquad K^{(w)}=N^{-2\alpha}\,(D\,\mathrm{diag}(a^2)D^\top)\odot(XX^\top),

    :math:`S=\sigma(XW^\top)`, :math:`D=\sigma'(XW^\top)`.  For a vector readout ``a`` of shape (N, C),
    :math:`K^{(a)}` is the same for every output and :math:`K^{(w)}` has shape (C, C, n, n) with the
    output pair (c, c') using :math:`a_{jc}a_{jc'}`.

    Returns
    -------
    NTKParts
        ``(K_a, K_w)``: (n, n) and (n, n) [scalar output] or (C, C, n, n) [vector output].

    References
    ----------
    ``kramers:eq4``.
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
    r"""Infinite-width readout kernel on one-hot pairs (derived here; arc-cosine kernel of degree 1).

    With :math:`w\sim\mathcal N(0,I/d)`, :math:`d=2p`, and :math:`\cos\vartheta=(x\cdot x')/2`:
    :math:`\kappa=\frac{1}{2\pi p}(\sin\vartheta+(\pi-\vartheta)\cos\vartheta)`, i.e.

    .. math:: k_{\rm both}=\frac1{2p},\quad k_{\rm one}=\frac{\sqrt3/2+\pi/3}{2\pi p},\quad k_{\rm none}=\frac1{2\pi p}.

    The finite-width readout kernel is :math:`K^{(a)}\to N^{1-2\alpha}\kappa`.

    Returns :class:`OneHotKernel` ``(k_both, k_one, k_none)``.

    References
    ----------
    ``kramers:nngp``; Cho & Saul (2009).
    """
    p = V.count(p, "p", 2)
    c = 2.0 * math.pi * p
    return OneHotKernel(1.0 / (2.0 * p), (_SQ3 / 2.0 + math.pi / 3.0) / c, 1.0 / c)


@cites("kramers:nngp")
def relu_feature_kernel_modadd(p: int) -> OneHotKernel:
    r"""Infinite-width :math:`\kappa_1=\mathbb E[\sigma'\sigma']\,(x\cdot x')`: (1, 1/3, 0) for both / one / none shared.

    :math:`\mathbb E[\sigma'(u)\sigma'(u')]=(\pi-\vartheta)/(2\pi)`; the feature kernel tends to
    :math:`K^{(w)}\to N^{-2\alpha}(N\sigma_a^2)\kappa_1` (factor :math:`N^{-2\alpha}` with the paper's
    :math:`\sigma_a^2=1/N`).  Independent of p.  Returns :class:`OneHotKernel` ``(k_both, k_one, k_none)``.

    References
    ----------
    ``kramers:nngp``.
    """
    V.count(p, "p", 2)
    return OneHotKernel(1.0, 1.0 / 3.0, 0.0)


@cites("kramers:nngp")
def nngp_kernel_matrix(a_idx: Any, b_idx: Any, p: int, *, feature: bool = False) -> np.ndarray:
    r"""The infinite-width kernel :math:`\kappa` (or :math:`\kappa_1` with ``feature=True``) on given pairs.

    Entry (i, k) is :math:`k_{\rm both}`, :math:`k_{\rm one}` or :math:`k_{\rm none}` according to how many
    of the coordinates :math:`(a_i,b_i)`, :math:`(a_k,b_k)` coincide.

    References
    ----------
    ``kramers:nngp``.
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
    r"""Closed-form spectrum of :math:`\kappa` on the full :math:`p^2` grid (derived here).

    With :math:`c=2\pi p`:

    .. math::
        \lambda_{\rm top}=\tfrac1c\big[p^2+2p(\tfrac{\sqrt3}{2}+\tfrac{\pi}{3}-1)+(1+\tfrac{\pi}{3}-\sqrt3)\big]\ (\times1),\\
        \lambda_{\rm mid}=\tfrac1c\big[p(\tfrac{\sqrt3}{2}+\tfrac{\pi}{3}-1)+(1+\tfrac{\pi}{3}-\sqrt3)\big]\ (\times2(p-1)),\qquad
        \lambda_{\rm bottom}=\tfrac1c(1+\tfrac{\pi}{3}-\sqrt3)\ (\times(p-1)^2).

    Every label-relevant Fourier function :math:`\cos(2\pi k(a+b)/p)` lies in the bottom eigenspace;
    :math:`\kappa=\lambda_{\rm top}/\lambda_{\rm bottom}\approx3.17p^2` to leading order only.

    Returns
    -------
    dict(top, mid, bottom, multiplicities=(1, 2(p-1), (p-1)^2), kappa)

    References
    ----------
    ``kramers:nngp-spectrum``.
    """
    p = V.count(p, "p", 2)
    pf = float(p)
    two_pi = 2.0 * math.pi
    # divided through by p: no p^2 (a Python int past 1.3e154 cannot become a float); kappa is inf
    # only where it exceeds 1.8e308
    top = (pf + 2.0 * _S1 + _S0 / pf) / two_pi
    mid = (_S1 + _S0 / pf) / two_pi
    bottom = _S0 / two_pi / pf
    kappa = (pf * (pf + 2.0 * _S1) + _S0) / _S0
    return dict(top=top, mid=mid, bottom=bottom, multiplicities=(1, 2 * (p - 1), (p - 1) ** 2), kappa=kappa)
