"""Clocks: the conditional ReLU reduction (active affine map)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy import special

from .. import _floats as FL
from .. import _validate as V
from ..citations import cites


def _mat(x: Any, name: str) -> np.ndarray:
    a = V.as_float_array(x, name)
    if a.ndim != 2:
        raise V.DomainError(f"{name} must be a 2-D matrix (got shape {a.shape})")
    return a


class ActiveAffineMap(NamedTuple):
    r"""Result of :func:`relu_active_affine_map`: :math:`x\mapsto Ax+c` on the active subsystem."""

    A: np.ndarray
    """linear part, ``(K, d0)`` or ``(n, K, d0)``."""
    c: np.ndarray
    """offset, ``(K,)`` or ``(n, K)``."""
    masks: list
    """boolean gate masks, one per hidden layer."""


@cites("clocks:prop4.1", "clocks:cor5.7")
def relu_active_affine_map(weights, biases, x):
    r"""The affine map of a ReLU network on its active subsystem (frozen gates).

    For :math:`f(x)=W_L\phi(W_{L-1}\cdots\phi(W_1x+b_1)\cdots+b_{L-1})+b_L`, masks
    :math:`D_l(x)=\operatorname{diag}(\mathbb 1[h_l(x)>0])` (strict: a pre-activation exactly 0 is
    inactive):

    .. math::

        f(x_i)=A_ix_i+c_i,\quad A_i=W_LD_{L-1,i}W_{L-1}\cdots D_{1,i}W_1,\quad
        c_i=\sum_{l=1}^{L}W_LD_{L-1,i}\cdots W_{l+1}D_{l,i}\,b_l .

    While no mask changes, training the network is training these affine maps (Proposition 4.1).

    Parameters
    ----------
    weights : sequence of 2-D arrays, ``weights[l]`` of shape ``(d_{l+1}, d_l)``
    biases : sequence of 1-D arrays of length ``d_{l+1}``, same length as ``weights``
    x : array ``(d0,)`` or ``(n, d0)``

    Returns
    -------
    (A, c, masks)
        A :class:`ActiveAffineMap` named tuple (``A``, ``c``, ``masks``); it unpacks like a plain tuple.
        ``A`` of shape ``(K, d0)`` or ``(n, K, d0)``; ``c`` of shape ``(K,)`` or ``(n, K)``;
        ``masks`` = list of boolean arrays (one per hidden layer), ``(d_l,)`` or ``(n, d_l)``.

    References
    ----------
    Spec ``clocks:prop4.1`` (paper Proposition 4.1); ``clocks:cor5.7``.
    """
    weights = V.sequence(weights, "weights", what="a non-empty sequence of 2-D arrays")
    biases = V.sequence(biases, "biases", what="a sequence of 1-D arrays")
    if len(weights) != len(biases):
        raise V.DomainError(f"weights and biases must have the same length (got {len(weights)} and {len(biases)})")
    if len(weights) == 0:
        raise V.DomainError("weights must not be empty")
    xs = V.as_float_array(x, "x")
    single = xs.ndim == 1
    if xs.ndim not in (1, 2):
        raise V.DomainError(f"x must be (d0,) or (n, d0) (got shape {xs.shape})")
    X = xs[None, :] if single else xs
    n, d0 = X.shape
    A = np.broadcast_to(np.eye(d0), (n, d0, d0)).copy()
    c = np.zeros((n, d0))
    h = X
    masks = []
    for l, (W, b) in enumerate(zip(weights, biases)):
        W = _mat(W, f"weights[{l}]")
        b = V.as_float_array(b, f"biases[{l}]")
        if W.shape[1] != h.shape[1] or b.shape != (W.shape[0],):
            raise V.DomainError(f"weights[{l}] of shape {W.shape} and biases[{l}] of shape {b.shape} do not fit "
                                f"an input of width {h.shape[1]}")
        pre = h @ W.T + b
        A = np.einsum("ij,njk->nik", W, A)
        c = c @ W.T + b
        if l < len(weights) - 1:
            m = pre > 0
            masks.append(m[0] if single else m)
            A = A * m[:, :, None]
            c = c * m
            h = np.where(m, pre, 0.0)
        else:
            h = pre
    if single:
        return ActiveAffineMap(A[0], c[0], masks)
    return ActiveAffineMap(A, c, masks)


@cites("clocks:prop4.2")
def head_embedding_gradient_norms(E, W1, W2, a, b, y, b1=None, b2=None):
    r"""Per-sample gradient norms of the modular-addition model: head, hidden layer, embedding.

    Selector :math:`s=e_a+e_b`, :math:`h=Es`, :math:`u=W_1h(+b_1)`, :math:`D=\operatorname{diag}(\mathbb 1[u>0])`,
    :math:`\varphi=Du`, :math:`z=W_2\varphi(+b_2)`, :math:`g=\pi(z)-e_y` (formed without cancellation).

    .. math::

        \lVert\nabla_{W_2}\ell\rVert_F=\lVert g\rVert\lVert\varphi\rVert,\quad
        \lVert\nabla_{W_1}\ell\rVert_F=\lVert DW_2^\top g\rVert\lVert h\rVert\le\lVert W_2\rVert_2\lVert g\rVert\lVert h\rVert,

    .. math::

        \lVert\nabla_E\ell\rVert_F=\lVert W_1^\top DW_2^\top g\rVert\lVert s\rVert
        \le\lVert W_1\rVert_2\lVert W_2\rVert_2\lVert g\rVert\lVert s\rVert .

    Parameters
    ----------
    E : (d_e, p) ; W1 : (d_h, d_e) ; W2 : (K, d_h) ; b1 : (d_h,) ; b2 : (K,)
    a, b : int tokens in ``[0, p)``; y : int label in ``[0, K)``

    Returns
    -------
    dict
        ``head``, ``hidden``, ``embedding`` (actual Frobenius norms), ``hidden_bound``, ``embedding_bound``.

    References
    ----------
    Spec ``clocks:prop4.2`` (paper Proposition 4.2).
    """
    E = _mat(E, "E")
    W1 = _mat(W1, "W1")
    W2 = _mat(W2, "W2")
    de, p = E.shape
    if W1.shape[1] != de or W2.shape[1] != W1.shape[0]:
        raise V.DomainError(f"shapes do not chain: E {E.shape}, W1 {W1.shape}, W2 {W2.shape}")
    K = W2.shape[0]
    b1v = np.zeros(W1.shape[0]) if b1 is None else V.as_float_array(b1, "b1")
    b2v = np.zeros(K) if b2 is None else V.as_float_array(b2, "b2")
    if b1v.shape != (W1.shape[0],) or b2v.shape != (K,):
        raise V.DomainError(f"b1 must have shape {(W1.shape[0],)} and b2 {(K,)} (got {b1v.shape}, {b2v.shape})")
    a = V.integer_at_least(a, "a", 0)
    b = V.integer_at_least(b, "b", 0)
    y = V.integer_at_least(y, "y", 0)
    if a >= p or b >= p:
        raise V.DomainError(f"tokens a, b must be in [0, {p - 1}] (got {a}, {b})")
    if y >= K:
        raise V.DomainError(f"y must be in [0, {K - 1}] (got {y})")
    s = np.zeros(p)
    s[a] += 1.0
    s[b] += 1.0
    h = E @ s
    u = W1 @ h + b1v
    D = (u > 0).astype(np.float64)
    phi = D * u
    z = W2 @ phi + b2v
    pi = np.exp(z - special.logsumexp(z))
    g = pi.copy()
    g[y] = -(np.sum(pi) - pi[y])
    back_h = D * (W2.T @ g)
    back_e = W1.T @ back_h
    nrm = FL.scaled_norm  # vector norms without overflow / underflow of the squares
    ng = nrm(g)
    n2 = np.linalg.norm(W2, 2)
    with np.errstate(over="ignore", under="ignore"):  # products of norms: inf / 0 only beyond the range
        return {
            "head": float(ng * nrm(phi)),
            "hidden": float(nrm(back_h) * nrm(h)),
            "embedding": float(nrm(back_e) * nrm(s)),
            "hidden_bound": float(n2 * ng * nrm(h)),
            "embedding_bound": float(np.linalg.norm(W1, 2) * n2 * ng * nrm(s)),
        }


def _preacts(preacts: Any, name: str) -> list[np.ndarray]:
    if isinstance(preacts, np.ndarray):
        preacts = [preacts]
    items = V.sequence(preacts, name, what="a non-empty list of pre-activation arrays")
    return [V.as_float_array(h, f"{name}[{i}]") for i, h in enumerate(items)]


@cites("clocks:appF3-gate-margin")
def gate_margin(preacts):
    r"""Gate margin :math:`m=\min_{i,l,j}|h_{l,j}(x_i)|` over a list of pre-activation arrays.

    References
    ----------
    Spec ``clocks:appF3-gate-margin``.
    """
    return float(min(np.min(np.abs(h)) for h in _preacts(preacts, "preacts")))


@cites("clocks:appF3-gate-margin")
def gates_certified_stable(preacts_t1, preacts_path):
    r"""Sufficient condition for frozen gates on a recorded path.

    .. math:: \sup_t\max_{i,l,j}|h_{l,j}(x_i;t)-h_{l,j}(x_i;t_1)|<m=\min_{i,l,j}|h_{l,j}(x_i;t_1)|

    Parameters
    ----------
    preacts_t1 : list of arrays (one per hidden layer)
    preacts_path : sequence over times of lists shaped like ``preacts_t1``

    Returns
    -------
    bool
        ``True`` if the certificate holds (then no gate changed); ``False`` is inconclusive.

    References
    ----------
    Spec ``clocks:appF3-gate-margin`` (paper App. F.3).
    """
    h1 = _preacts(preacts_t1, "preacts_t1")
    m = gate_margin(h1)
    worst = 0.0
    for t, ht in enumerate(V.sequence(preacts_path, "preacts_path", what="a non-empty sequence of pre-activation lists")):
        ht = _preacts(ht, f"preacts_path[{t}]")
        if len(ht) != len(h1) or any(a.shape != b.shape for a, b in zip(ht, h1)):
            raise V.DomainError(f"preacts_path[{t}] must match the shapes of preacts_t1")
        worst = max(worst, max(float(np.max(np.abs(a - b))) for a, b in zip(ht, h1)))
    return bool(worst < m)


@cites("clocks:appF3-gate-margin")
def gate_pattern_changes(preacts_t1, preacts_t):
    r"""Number of gates (over samples, layers, units) whose state ``h > 0`` differs between two times.

    The exact check that the certificate :func:`gates_certified_stable` bounds.

    References
    ----------
    Spec ``clocks:appF3-gate-margin``.
    """
    h1 = _preacts(preacts_t1, "preacts_t1")
    ht = _preacts(preacts_t, "preacts_t")
    if len(ht) != len(h1) or any(a.shape != b.shape for a, b in zip(ht, h1)):
        raise V.DomainError("preacts_t must match the shapes of preacts_t1")
    return int(sum(int(np.sum((a > 0) != (b > 0))) for a, b in zip(h1, ht)))


@cites("clocks:appF3-gate-margin")
def first_layer_preact_change_bound(delta_W1, delta_b1, x_norm):
    r"""Parameter-space bound on a first-layer pre-activation change.

    .. math:: |\Delta h_{1,j}(x)|\le\lVert\Delta W_1\rVert_2\lVert x\rVert+\lVert\Delta b_1\rVert_\infty

    ``delta_W1`` has shape ``(d1, d0)`` and ``delta_b1`` shape ``(d1,)``; ``x_norm`` (>= 0) may be an array.

    References
    ----------
    Spec ``clocks:appF3-gate-margin``.
    """
    dW = _mat(delta_W1, "delta_W1")
    db = V.as_float_array(delta_b1, "delta_b1")
    if db.shape != dW.shape[:1]:  # one bias per hidden unit (a row of W1, shape (d1, d0))
        raise V.DomainError(f"delta_b1 must have shape ({dW.shape[0]},), one entry per row of delta_W1 "
                            f"{dW.shape} (got {db.shape})")
    xn = V.nonnegative(x_norm, "x_norm")
    return V.scalar_or_array(np.linalg.norm(dW, 2) * xn + float(np.max(np.abs(db))))
