"""Lemma 3.2 / Theorem 3.5 and Theorem 3.8, measured on outputs and embeddings (spec ``uniformity`` §4)."""

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
    r"""Measurable form of Lemma 3.2 / Theorem 3.5: how tightly each class's outputs sit at a class vector.

    .. math:: \varepsilon_r=\max_{x\in[r]}\|\mathrm{out}(x)-c_r\|,\qquad c_r=\text{class mean (default)}

    Lemma 3.2 says correctly classified outputs of class :math:`r` lie in its softmax cone near some
    :math:`c_r`; Remark 3.3 uses :math:`\varepsilon_r` as the measure of how complete the optimisation is.

    Parameters
    ----------
    outputs : array ``(N, d)`` of model outputs (logits or residual stream), finite.
    labels : int array ``(N,)``.
    targets : optional ``(n_classes, d)`` class vectors ordered like ``np.unique(labels)``.

    Returns
    -------
    ClassResiduals
        ``(classes, eps, in_cone)``: the distinct labels, :math:`\varepsilon_r` per class, and the fraction of
    each class whose output's argmax is its label (only meaningful when ``outputs`` are logits).

    References
    ----------
    Spec ``uniformity:lemma3.2``, ``uniformity:thm3.5`` (§4; informational).
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
    """The embedding layout's ``(p >= 3, b_offset >= 0, token_axis in {0, 1})``."""
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
    r"""Theorem 3.8's quantity: norms of consecutive token-embedding differences, optionally through a map ``L``.

    .. math:: \delta_i=\big\|L\big(\varphi(i+1)-\varphi(i)\big)\big\|_2,\quad i=0,\dots,p-2\ (\text{and } (p-1,0) \text{ if cyclic})

    Parameters
    ----------
    E : 2-D embedding matrix, tokens along ``token_axis`` (1 = columns, the code's ``W_E`` layout).
    p : int >= 3; ``b_offset`` : first token id of the second operand block (0 = shared vocabulary).
    L : optional ``(k, d_model)`` readout map.

    Returns
    -------
    ndarray ``(n_blocks, p-1 or p)``: one row for the first-operand block, a second row when ``b_offset > 0``.

    References
    ----------
    Spec ``uniformity:thm3.8`` (§4), ``uniformity:def4.2`` (§6.2).
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
