"""Lemma 3.2 / Theorem 3.5 and Theorem 3.8, measured on outputs and embeddings (spec `uniformity` §4)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._results import ClassResiduals

__all__ = ["class_target_residuals", "consecutive_embedding_diffs"]


@cites("uniformity:lemma3.2", "uniformity:thm3.5")
def class_target_residuals(outputs: Any, labels: Any, targets: Any = None) -> ClassResiduals:
    r"""Measurable form of Lemma 3.2 and Theorem 3.5: how tightly the outputs of each class sit at a class vector.

    .. math:: \varepsilon_r=\max_{x\in[r]}\|\mathrm{out}(x)-c_r\|,\qquad c_r=\text{class mean (default)}

    In words: ε_r is the largest Euclidean distance of an output of class r to its class vector c_r (by
    default the class mean).  Lemma 3.2 says correctly classified outputs of class r lie in its
    softmax cone near some c_r; Remark 3.3 uses ε_r as the measure of how complete the optimisation is.
    Informational: no threshold is applied.

    Parameters
    ----------
    outputs : array_like
        Model outputs out(x) (logits or residual stream), a finite 2-D array of shape (N, d).
    labels : array_like of int
        The label of each output, an integer array of shape (N,).
    targets : array_like, optional
        Class vectors c_r, a finite array of shape (n_classes, d) ordered like `numpy.unique(labels)`.
        Default `None`: the class means.

    Returns
    -------
    ClassResiduals
        The named tuple (classes, eps, in_cone): the distinct labels, ε_r per class, and the fraction of
        each class whose output's argmax is its label (meaningful only when `outputs` are logits).

    Raises
    ------
    DomainError
        If `outputs` is not a finite 2-D array, `labels` is not an integer array of shape (N,), or
        `targets` is not finite of shape (n_classes, d).

    References
    ----------
    Spec IDs `uniformity:lemma3.2` (paper Lemma 3.2) and `uniformity:thm3.5` (Theorem 3.5).
    """
    out = V.as_float_array(outputs, "outputs")
    if out.ndim != 2:
        raise DomainError(f"outputs must be 2-D (N, d) (got shape {out.shape})")
    lab = np.asarray(labels)
    if lab.shape != (out.shape[0],) or not np.issubdtype(lab.dtype, np.integer):
        raise DomainError(f"labels must be an integer array of shape ({out.shape[0]},) (got {lab.shape}, {lab.dtype})")
    classes, inv = np.unique(lab, return_inverse=True)
    k = classes.size
    if targets is None:
        sums = np.zeros((k, out.shape[1]))
        np.add.at(sums, inv, out)
        c = sums / np.bincount(inv, minlength=k)[:, None]
    else:
        c = V.as_float_array(targets, "targets")
        if c.shape != (k, out.shape[1]):
            raise DomainError(f"targets must have shape ({k}, {out.shape[1]}) (got {c.shape})")
    dist = FL.scaled_norm(out - c[inv], axis=1)
    eps = np.zeros(k)
    np.maximum.at(eps, inv, dist)
    if out.shape[1] > int(classes.max(initial=-1)) >= 0 and classes.min() >= 0:
        hit = (np.argmax(out, axis=1) == lab).astype(np.float64)
        in_cone = np.bincount(inv, weights=hit, minlength=k) / np.bincount(inv, minlength=k)
    else:
        in_cone = np.zeros(k)
    return ClassResiduals(classes, eps, in_cone)


def _token_args(p: Any, b_offset: Any, token_axis: Any) -> tuple[int, int, int]:
    """The embedding layout's `(p >= 3, b_offset >= 0, token_axis in {0, 1})`."""
    return (V.integer_at_least(p, "p", 3), V.integer_at_least(b_offset, "b_offset", 0),
            V.integer_at_least(token_axis, "token_axis", 0, maximum=1))


def _token_block(E: Any, p: int, b_offset: int, token_axis: int) -> tuple[np.ndarray, np.ndarray]:
    e = V.as_float_array(E, "E")
    if e.ndim != 2:
        raise DomainError(f"E must be a 2-D embedding matrix (got ndim {e.ndim})")
    p, b_offset, token_axis = _token_args(p, b_offset, token_axis)
    n_tok = e.shape[token_axis]
    if n_tok < b_offset + p:
        raise DomainError(f"E must have at least b_offset + p = {b_offset + p} tokens along axis {token_axis} "
                          f"(got {n_tok})")
    t = e.T if token_axis == 1 else e  # rows = tokens
    return t[:p], t[b_offset:b_offset + p]


@cites("uniformity:thm3.8", "uniformity:def4.2")
def consecutive_embedding_diffs(E: Any, p: int, b_offset: int = 0, token_axis: int = 1, *, cyclic: bool = False,
                                L: Any = None) -> np.ndarray:
    r"""Theorem 3.8's quantity: norms of consecutive token-embedding differences, optionally through a map L.

    .. math:: \delta_i=\big\|L\big(\varphi(i+1)-\varphi(i)\big)\big\|_2,\quad i=0,\dots,p-2\ (\text{and } (p-1,0) \text{ if cyclic})

    In words: δ_i = ‖L·(φ(i + 1) − φ(i))‖₂ for i = 0, …, p − 2, plus the wrap-around pair (p − 1, 0)
    when `cyclic`; without L, the plain norms of the differences.

    Parameters
    ----------
    E : array_like
        Token-embedding matrix, a finite 2-D array with the tokens along `token_axis` and at least
        b_offset + p tokens.
    p : int
        The modulus p, an integer ≥ 3 (the operand tokens are ids 0, …, p − 1 of each block).
    b_offset : int, optional
        First token id of the second operand's block, an integer ≥ 0.  Default 0: one shared
        vocabulary (one block).
    token_axis : int, optional
        Axis of `E` that runs over the tokens: 1 (default, columns: the code's W_E of shape
        (d_model, d_vocab)) or 0 (rows).
    cyclic : bool, optional
        `False` (default): the p − 1 consecutive differences; `True`: also the pair (p − 1, 0).
    L : array_like, optional
        Readout map applied to each difference, a finite 2-D array of shape (k, d_model).  Default
        `None`: no map (the identity).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (n_blocks, p − 1), or (n_blocks, p) when `cyclic`: one row for the first
        operand's block, a second row for the second operand's block when b_offset > 0.

    Raises
    ------
    DomainError
        If `E` is not a finite 2-D array with enough tokens, `p`, `b_offset` or `token_axis` is out of
        range, `cyclic` is not a bool, or `L` is not of shape (k, d_model).

    References
    ----------
    Spec IDs `uniformity:thm3.8` (paper Theorem 3.8) and `uniformity:def4.2` (Definition 4.2).
    """
    blocks = _token_block(E, p, b_offset, token_axis)
    cyclic = V.flag(cyclic, "cyclic")
    if b_offset == 0:
        blocks = blocks[:1]
    lm = None if L is None else V.as_float_array(L, "L")
    out = []
    for t in blocks:
        d = np.diff(t, axis=0)
        if cyclic:
            d = np.concatenate([d, (t[0] - t[-1])[None]], axis=0)
        if lm is not None:
            if lm.ndim != 2 or lm.shape[1] != d.shape[1]:
                raise DomainError(f"L must have shape (k, {d.shape[1]}) (got {lm.shape})")
            d = d @ lm.T
        out.append(FL.scaled_norm(d, axis=1))  # no overflow of the squares past 1.3e154
    return np.array(out)
