"""Progress measures (Definition 4.1) and the main embedding diff, MED (Definition 4.2; §6)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._results import CodeMED, ThresholdRule
from ._lemmas import _token_args, _token_block

__all__ = ["main_embedding_diff", "med_code_mlp", "med_trajectory", "progress_measure_fit"]


@cites("uniformity:def4.1")
def progress_measure_fit(values: Any, indicator: Any) -> ThresholdRule:
    r"""Best threshold rule :math:`h(v)=\mathbb 1[v\ge\tau]` or :math:`\mathbb 1[v\le\tau]` for an indicator (Def. 4.1).

    .. math:: \mathrm{agreement}=\frac1T\sum_t\mathbb 1\big[h(g(\theta_t))=\mathbb 1[\Phi_t]\big]

    Exhaustive over :math:`\tau\in\{-\infty,+\infty\}\cup\{\text{midpoints of sorted distinct values}\}` and
    both directions; ties broken by smaller :math:`\tau`, then ``">="``.  ``g`` is a progress measure of
    :math:`\Phi` on that run iff ``agreement == 1.0``.

    Parameters
    ----------
    values : finite 1-D array (length >= 2), the measure :math:`g(\theta_t)`.
    indicator : 0/1 (or bool) array of the same length.

    Returns
    -------
    ThresholdRule
        ``(tau, direction, agreement)``: :math:`\tau`, ``">="`` or ``"<="``, and the agreement in [0, 1].

    References
    ----------
    Spec ``uniformity:def4.1`` (§6.1).
    """
    v = V.as_float_array(values, "values")
    y = np.asarray(indicator)
    if v.ndim != 1 or v.size < 2:
        raise DomainError(f"values must be 1-D with at least 2 points (got shape {v.shape})")
    if y.shape != v.shape:
        raise DomainError(f"indicator must have the shape of values {v.shape} (got {y.shape})")
    yv = y.astype(np.float64) if y.dtype != np.bool_ else y.astype(np.float64)
    if not np.all((yv == 0) | (yv == 1)):
        raise DomainError("indicator must contain only 0/1 values")
    y1 = yv == 1
    T = v.size
    u, inv = np.unique(v, return_inverse=True)
    K = u.size
    c1 = np.concatenate([[0], np.cumsum(np.bincount(inv, weights=y1, minlength=K))])  # y=1 among values <= u_j
    c0 = np.concatenate([[0], np.cumsum(np.bincount(inv, weights=~y1, minlength=K))])
    N1, N0 = c1[-1], c0[-1]
    taus = np.concatenate([[-np.inf], (u[:-1] + u[1:]) / 2.0, [np.inf]])  # tau_j: j values-groups below
    ge = (N1 - c1) + c0  # h = 1 for v >= tau_j
    le = c1 + (N0 - c0)  # h = 1 for v <= tau_j
    best = max(ge.max(), le.max())
    cands = [(taus[j], 0) for j in np.nonzero(ge == best)[0]] + [(taus[j], 1) for j in np.nonzero(le == best)[0]]
    tau, d = min(cands)
    return ThresholdRule(float(tau), (">=" if d == 0 else "<="), float(best) / T)


MED_VARIANTS = ("paper", "cyclic", "code_base", "code_rec", "code_str")


def _med_core(t1: np.ndarray, t2: np.ndarray, p: int, b_offset: int, variant: str) -> np.ndarray:
    """t1, t2: (..., p, d) token blocks; returns (...) MED values."""
    if variant in ("paper", "cyclic"):
        def blk(t):
            d = FL.scaled_norm(np.diff(t, axis=-2), axis=-1)
            if variant == "cyclic":
                d = np.concatenate([d, FL.scaled_norm(t[..., :1, :] - t[..., -1:, :], axis=-1)], axis=-1)
            return d.mean(axis=-1)
        m1 = blk(t1)
        return m1 if b_offset == 0 else 0.5 * (m1 + blk(t2))
    # the code: embed[:, a+1:b] - embed[:, a:b-1] with b = a + p - 1 -> p-2 diffs of tokens a..a+p-2
    def code_mean(t):
        return FL.scaled_norm(t[..., 1:p - 1, :] - t[..., 0:p - 2, :], axis=-1).mean(axis=-1)
    m1, m2 = code_mean(t1), code_mean(t2)
    if variant == "code_base":
        return 0.5 * (m1 + m2)
    if variant == "code_rec":
        return (p - 1) * m1 + (p - 1) * m2
    return m1 + m2


@cites("uniformity:def4.2", "uniformity:thm3.8")
def main_embedding_diff(E: Any, p: int, b_offset: int = 0, variant: str = "paper", token_axis: int = 1) -> float:
    r"""Main embedding diff (MED, Definition 4.2) of a token-embedding matrix.

    .. math:: \mathrm{MED}=\frac1{p-1}\sum_{i=0}^{p-2}\|\varphi(i+1)-\varphi(i)\|_2\quad(\texttt{"paper"})

    With ``b_offset = d > 0`` the two operand blocks (ids ``0..p-1`` and ``d..d+p-1``) are averaged.
    ``"cyclic"`` adds the pair :math:`(p-1,0)` and divides by :math:`p`.  The code variants reproduce
    ``calculate_embedding_diff(W_E, 0, p-1, d, d+p-1)`` bit for bit, including the off-by-one (the
    :math:`p-2` differences of tokens :math:`0..p-2`; :math:`\bar m` = their mean, erratum uniformity-6):
    ``"code_base"`` :math:`\tfrac12(\bar m_1+\bar m_2)`, ``"code_rec"`` :math:`(p-1)(\bar m_1+\bar m_2)`,
    ``"code_str"`` :math:`\bar m_1+\bar m_2`.  (README's frozen one-hot variant: pass the first hidden
    layer's activations of the inputs ``[i, d+i, =]`` as ``E`` with ``token_axis=0``.)

    Parameters
    ----------
    E : 2-D finite array, tokens along ``token_axis`` (1 = columns, the code's ``W_E`` of shape
        ``(d_model, d_vocab)``), at least ``b_offset + p`` tokens.
    p : int >= 3.
    b_offset : int >= 0.
    variant : one of ``"paper"``, ``"cyclic"``, ``"code_base"``, ``"code_rec"``, ``"code_str"``.

    Returns
    -------
    float.

    References
    ----------
    Spec ``uniformity:def4.2`` (§6.2), ``uniformity:thm3.8`` (§4).
    """
    variant = V.choice(variant, "variant", MED_VARIANTS)
    t1, t2 = _token_block(E, p, b_offset, token_axis)
    return float(_med_core(t1, t2, int(p), int(b_offset), variant))


@cites("uniformity:def4.2")
def med_trajectory(E_t: Any, p: int, b_offset: int = 0, variant: str = "paper", token_axis: int = 1) -> np.ndarray:
    r"""MED of a stack of embedding snapshots ``E_t`` of shape ``(T, ...)`` (``token_axis`` refers to one snapshot).

    Returns float64 ``(T,)``.  References: spec ``uniformity:def4.2`` (§6.2).
    """
    variant = V.choice(variant, "variant", MED_VARIANTS)
    e = V.as_float_array(E_t, "E_t")
    if e.ndim != 3:
        raise DomainError(f"E_t must be a 3-D stack (T, ...) of 2-D embeddings (got ndim {e.ndim})")
    p, b_offset, token_axis = _token_args(p, b_offset, token_axis)
    t = np.swapaxes(e, 1, 2) if token_axis == 1 else e  # (T, tokens, d)
    if t.shape[1] < b_offset + p:
        raise DomainError(f"E_t must have at least b_offset + p = {b_offset + p} tokens (got {t.shape[1]})")
    return np.asarray(_med_core(t[:, :p], t[:, b_offset:b_offset + p], p, b_offset, variant), dtype=np.float64)


@cites("uniformity:def4.2")
def med_code_mlp(E: Any, p: int, b_offset: int = 0, token_axis: int = 1) -> CodeMED:
    r"""MED as ``MLP/base.py`` / ``MLP/rec.py`` compute it: the pair
    :math:`\big(\tfrac12(\bar m_1+\bar m_2),\ \|W_E[:,0{:}p-1]-W_E[:,d{:}d+p-1]\|_F\big)`.

    Returns :class:`CodeMED` ``(med, fro)``.

    References: spec ``uniformity:def4.2`` (§6.2).
    """
    t1, t2 = _token_block(E, p, b_offset, token_axis)
    med = float(_med_core(t1, t2, int(p), int(b_offset), "code_base"))
    fro = float(FL.scaled_norm(t1[:p - 1] - t2[:p - 1]))
    return CodeMED(med, fro)
