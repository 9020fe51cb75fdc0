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
    r"""Result of `relu_active_affine_map`: the affine map x ↦ A·x + c of a ReLU network on its active subsystem.

    A named tuple; it unpacks like the plain tuple (A, c, masks).
    """

    A: np.ndarray
    r"""Linear part, float64 of shape (K, d0) for one input or (n, K, d0) for n inputs (K outputs, d0 input
    dimensions).
    """
    c: np.ndarray
    r"""Offset, float64 of shape (K,) or (n, K)."""
    masks: list
    r"""Boolean gate masks 𝟙[h_l > 0], one per hidden layer l, of shape (d_l,) or (n, d_l)."""


@cites("clocks:prop4.1", "clocks:cor5.7")
def relu_active_affine_map(weights, biases, x):
    r"""The affine map of a ReLU network on its active subsystem (gates frozen at the given inputs).

    For f(x) = W_L·φ(W_{L−1}⋯φ(W_1·x + b_1)⋯ + b_{L−1}) + b_L with φ = ReLU, the gate masks are
    D_l(x) = diag(𝟙[h_l(x) > 0]) (strict: a pre-activation exactly 0 is inactive), and

    .. math::

        f(x_i)=A_ix_i+c_i,\quad A_i=W_LD_{L-1,i}W_{L-1}\cdots D_{1,i}W_1,\quad
        c_i=\sum_{l=1}^{L}W_LD_{L-1,i}\cdots W_{l+1}D_{l,i}\,b_l .

    In words: A_i is the product of the weights with the masks of x_i in between, and c_i collects
    each bias pushed through the layers above it.  While no mask changes, training the network is
    training these affine maps (Proposition 4.1).

    Parameters
    ----------
    weights : sequence of array_like
        Weight matrices W_1, …, W_L, a non-empty sequence of finite 2-D arrays; weights[l] has shape
        (d_{l+1}, d_l), so that it maps the output of layer l to layer l + 1.
    biases : sequence of array_like
        Bias vectors b_1, …, b_L, one finite 1-D array of length d_{l+1} per weight matrix (same
        length as `weights`).
    x : array_like
        Input(s): a finite array of shape (d0,) for one input or (n, d0) for n inputs.

    Returns
    -------
    ActiveAffineMap
        The named tuple (A, c, masks): A of shape (K, d0) or (n, K, d0), c of shape (K,) or (n, K),
        and masks, one boolean array per hidden layer, of shape (d_l,) or (n, d_l).

    Raises
    ------
    DomainError
        If `weights` and `biases` differ in length or are empty, a matrix or bias does not fit the
        width of the layer below, or `x` is not finite of shape (d0,) or (n, d0).

    References
    ----------
    Spec IDs `clocks:prop4.1` (paper Proposition 4.1) and `clocks:cor5.7` (Corollary 5.7).
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

    The model: selector s = e_a + e_b, embedding h = E·s, pre-activation u = W1·h + b1, gates
    D = diag(𝟙[u > 0]), hidden φ = D·u, logits z = W2·φ + b2, and output gradient g = π(z) − e_y
    (formed without cancellation).  The Frobenius norms of the cross-entropy gradients are

    .. math::

        \lVert\nabla_{W_2}\ell\rVert_F=\lVert g\rVert\lVert\varphi\rVert,\quad
        \lVert\nabla_{W_1}\ell\rVert_F=\lVert DW_2^\top g\rVert\lVert h\rVert\le\lVert W_2\rVert_2\lVert g\rVert\lVert h\rVert,

    .. math::

        \lVert\nabla_E\ell\rVert_F=\lVert W_1^\top DW_2^\top g\rVert\lVert s\rVert
        \le\lVert W_1\rVert_2\lVert W_2\rVert_2\lVert g\rVert\lVert s\rVert .

    In words: head ‖g‖·‖φ‖; hidden ‖D·W2ᵀ·g‖·‖h‖ ≤ ‖W2‖₂·‖g‖·‖h‖; embedding
    ‖W1ᵀ·D·W2ᵀ·g‖·‖s‖ ≤ ‖W1‖₂·‖W2‖₂·‖g‖·‖s‖ (‖·‖₂ the spectral norm).

    Parameters
    ----------
    E : array_like
        Embedding matrix, finite, of shape (d_e, p): one column per token.
    W1 : array_like
        Hidden-layer weights, finite, of shape (d_h, d_e).
    W2 : array_like
        Head (output) weights, finite, of shape (K, d_h).
    a : int
        First operand token, an integer in [0, p).
    b : int
        Second operand token, an integer in [0, p) (a = b gives s = 2·e_a).
    y : int
        Label of the pair, an integer class in [0, K).
    b1 : array_like, optional
        Hidden-layer bias, finite, of shape (d_h,).  Default `None`: no bias (zeros).
    b2 : array_like, optional
        Head bias, finite, of shape (K,).  Default `None`: no bias (zeros).

    Returns
    -------
    dict of str to float
        Keys `"head"`, `"hidden"`, `"embedding"`: the actual Frobenius norms of the gradients in W2,
        W1 and E; `"hidden_bound"`, `"embedding_bound"`: the spectral-norm bounds above.

    Raises
    ------
    DomainError
        If a matrix is not finite and 2-D, the shapes do not chain, a bias has the wrong shape, a token
        is outside [0, p), or `y` is outside [0, K).

    References
    ----------
    Spec ID `clocks:prop4.2` (paper Proposition 4.2).
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
    r"""Gate margin m = min_{i,l,j} |h_{l,j}(x_i)| over all samples, hidden layers and units.

    Parameters
    ----------
    preacts : array_like or list of array_like
        Pre-activations h_l of the hidden layers: a list with one finite array per layer (any shape,
        e.g. (n, d_l)), or a single array for one layer.

    Returns
    -------
    float
        The smallest absolute pre-activation, ≥ 0.

    Raises
    ------
    DomainError
        If `preacts` is empty or an array is empty or not finite.

    References
    ----------
    Spec ID `clocks:appF3-gate-margin` (paper App. F.3).
    """
    return float(min(np.min(np.abs(h)) for h in _preacts(preacts, "preacts")))


@cites("clocks:appF3-gate-margin")
def gates_certified_stable(preacts_t1, preacts_path):
    r"""Sufficient condition for frozen gates on a recorded path: every pre-activation drifts less than the margin.

    .. math:: \sup_t\max_{i,l,j}|h_{l,j}(x_i;t)-h_{l,j}(x_i;t_1)|<m=\min_{i,l,j}|h_{l,j}(x_i;t_1)|

    In words: if no pre-activation moves by as much as the gate margin m at t₁ (see `gate_margin`),
    no gate can change sign along the path.

    Parameters
    ----------
    preacts_t1 : array_like or list of array_like
        Pre-activations at the reference time t₁: a list with one finite array per hidden layer, or a
        single array for one layer.
    preacts_path : sequence
        Pre-activations at the later recorded times: a non-empty sequence over times, each element a
        list shaped like `preacts_t1`.

    Returns
    -------
    bool
        `True` if the certificate holds (then no gate changed on the path); `False` is inconclusive
        (use `gate_pattern_changes` for the exact count).

    Raises
    ------
    DomainError
        If an array is empty or not finite, or an element of `preacts_path` does not match the shapes
        of `preacts_t1`.

    References
    ----------
    Spec ID `clocks:appF3-gate-margin` (paper App. F.3).
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
    r"""Number of gates, over samples, layers and units, whose state h > 0 differs between two times.

    This is the exact check that the certificate `gates_certified_stable` bounds.

    Parameters
    ----------
    preacts_t1 : array_like or list of array_like
        Pre-activations at the first time: a list with one finite array per hidden layer, or a single
        array for one layer.
    preacts_t : array_like or list of array_like
        Pre-activations at the second time, shaped like `preacts_t1`.

    Returns
    -------
    int
        The number of entries whose sign state (h > 0 or not) differs, ≥ 0.

    Raises
    ------
    DomainError
        If an array is empty or not finite, or the two lists differ in length or shapes.

    References
    ----------
    Spec ID `clocks:appF3-gate-margin` (paper App. F.3).
    """
    h1 = _preacts(preacts_t1, "preacts_t1")
    ht = _preacts(preacts_t, "preacts_t")
    if len(ht) != len(h1) or any(a.shape != b.shape for a, b in zip(ht, h1)):
        raise V.DomainError("preacts_t must match the shapes of preacts_t1")
    return int(sum(int(np.sum((a > 0) != (b > 0))) for a, b in zip(h1, ht)))


@cites("clocks:appF3-gate-margin")
def first_layer_preact_change_bound(delta_W1, delta_b1, x_norm):
    r"""Parameter-space bound on the change of a first-layer pre-activation.

    .. math:: |\Delta h_{1,j}(x)|\le\lVert\Delta W_1\rVert_2\lVert x\rVert+\lVert\Delta b_1\rVert_\infty

    In words: a first-layer pre-activation changes by at most ‖ΔW1‖₂·‖x‖ + max_j |Δb1_j|
    (‖·‖₂ the spectral norm).

    Parameters
    ----------
    delta_W1 : array_like
        Change ΔW1 of the first-layer weights, a finite 2-D array of shape (d1, d0).
    delta_b1 : array_like
        Change Δb1 of the first-layer bias, a finite 1-D array of shape (d1,), one entry per row of
        `delta_W1`.
    x_norm : float or array_like
        Euclidean norm ‖x‖ of the input(s), finite and ≥ 0; an array gives one bound per norm.

    Returns
    -------
    float or numpy.ndarray
        The bound on |Δh_{1,j}(x)|, of the shape of `x_norm`.

    Raises
    ------
    DomainError
        If `delta_W1` is not a finite 2-D array, `delta_b1` is not of shape (d1,), or `x_norm` is
        negative or not finite.

    References
    ----------
    Spec ID `clocks:appF3-gate-margin` (paper App. F.3).
    """
    dW = _mat(delta_W1, "delta_W1")
    db = V.as_float_array(delta_b1, "delta_b1")
    if db.shape != dW.shape[:1]:  # one bias per hidden unit (a row of W1, shape (d1, d0))
        raise V.DomainError(f"delta_b1 must have shape ({dW.shape[0]},), one entry per row of delta_W1 "
                            f"{dW.shape} (got {db.shape})")
    xn = V.nonnegative(x_norm, "x_norm")
    return V.scalar_or_array(np.linalg.norm(dW, 2) * xn + float(np.max(np.abs(db))))
