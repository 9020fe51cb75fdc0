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

__all__ = ["MED_VARIANTS", "main_embedding_diff", "med_code_mlp", "med_trajectory", "progress_measure_fit"]


@cites("uniformity:def4.1")
def progress_measure_fit(values: Any, indicator: Any) -> ThresholdRule:
    r"""Best threshold rule h(v) = 𝟙[v ≥ τ] or 𝟙[v ≤ τ] for an indicator, and its agreement (Definition 4.1).

    .. math:: \mathrm{agreement}=\frac1T\sum_t\mathbb 1\big[h(g(\theta_t))=\mathbb 1[\Phi_t]\big]

    In words: the fraction of the T records where the rule applied to the measure g(θ_t) matches the
    indicator of the property Φ_t.  Exhaustive over τ ∈ {−∞, +∞} ∪ {midpoints of the sorted distinct
    values} and both directions; ties are broken by the smaller τ, then `">="`.  g is a progress measure
    of Φ on that run if and only if the agreement is 1.

    Parameters
    ----------
    values : array_like
        The measure g(θ_t) at each record, a finite 1-D array of length ≥ 2.
    indicator : array_like
        The indicator 𝟙[Φ_t] at each record, 0/1 values or bools, of the shape of `values`.

    Returns
    -------
    ThresholdRule
        The named tuple (tau, direction, agreement): the threshold τ, `">="` or `"<="`, and the
        agreement in [0, 1].

    Raises
    ------
    DomainError
        If `values` is not finite and 1-D with at least 2 points, or `indicator` is not 0/1 of its
        shape.

    References
    ----------
    Spec ID `uniformity:def4.1` (paper Definition 4.1).
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
"""The values of the `variant` argument of `main_embedding_diff` and `med_trajectory`.

`"paper"`: the MED of Definition 4.2 (mean norm of the p − 1 consecutive embedding differences);
`"cyclic"`: the same with the pair (p − 1, 0), over p; `"code_base"`, `"code_rec"`, `"code_str"`: the
authors' scripts' forms, bit for bit (erratum uniformity-6)."""


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
    r"""Main embedding difference (MED, Definition 4.2) of a token-embedding matrix.

    .. math:: \mathrm{MED}=\frac1{p-1}\sum_{i=0}^{p-2}\|\varphi(i+1)-\varphi(i)\|_2\quad(\texttt{"paper"})

    In words: the mean Euclidean norm of the p − 1 differences of consecutive token embeddings φ(i).
    With b_offset = d > 0 the two operand blocks (ids 0, …, p − 1 and d, …, d + p − 1) are averaged.
    `"cyclic"` adds the pair (p − 1, 0) and divides by p.  The code variants reproduce
    `calculate_embedding_diff(W_E, 0, p-1, d, d+p-1)` of the authors' scripts bit for bit, including
    its off-by-one (the p − 2 differences of tokens 0, …, p − 2, whose mean is m̄; erratum
    uniformity-6): `"code_base"` gives (m̄₁ + m̄₂)/2, `"code_rec"` (p − 1)·(m̄₁ + m̄₂), `"code_str"`
    m̄₁ + m̄₂.  (The README's frozen one-hot variant: pass the first hidden layer's activations of the
    inputs [i, d + i, =] as `E` with `token_axis=0`.)

    Parameters
    ----------
    E : array_like
        Token-embedding matrix, a finite 2-D array with the tokens along `token_axis` and at least
        b_offset + p tokens.
    p : int
        The modulus p, an integer ≥ 3.
    b_offset : int, optional
        First token id d of the second operand's block, an integer ≥ 0 (default 0: one shared block).
    variant : {"paper", "cyclic", "code_base", "code_rec", "code_str"}, optional
        Which MED: `"paper"` (default, Definition 4.2), `"cyclic"`, or one of the authors' code
        variants above.
    token_axis : int, optional
        Axis of `E` that runs over the tokens: 1 (default, columns: the code's W_E of shape
        (d_model, d_vocab)) or 0 (rows).

    Returns
    -------
    float
        The MED ≥ 0, in the units of the embedding.

    Raises
    ------
    DomainError
        If `E` is not a finite 2-D array with enough tokens, `p`, `b_offset` or `token_axis` is out of
        range, or `variant` is unknown.

    References
    ----------
    Spec IDs `uniformity:def4.2` (paper Definition 4.2) and `uniformity:thm3.8` (Theorem 3.8).
    """
    variant = V.choice(variant, "variant", MED_VARIANTS)
    t1, t2 = _token_block(E, p, b_offset, token_axis)
    return float(_med_core(t1, t2, int(p), int(b_offset), variant))


@cites("uniformity:def4.2")
def med_trajectory(E_t: Any, p: int, b_offset: int = 0, variant: str = "paper", token_axis: int = 1) -> np.ndarray:
    r"""MED (see `main_embedding_diff`) of each snapshot of a stack of token embeddings.

    Parameters
    ----------
    E_t : array_like
        The snapshots, a finite 3-D array of shape (T, …): T token-embedding matrices, each with the
        tokens along `token_axis` and at least b_offset + p tokens.
    p : int
        The modulus p, an integer ≥ 3.
    b_offset : int, optional
        First token id d of the second operand's block, an integer ≥ 0 (default 0: one shared block).
    variant : {"paper", "cyclic", "code_base", "code_rec", "code_str"}, optional
        Which MED (see `main_embedding_diff`); default `"paper"`.
    token_axis : int, optional
        Token axis of one snapshot: 1 (default, columns) or 0 (rows).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (T,), the MED of each snapshot.

    Raises
    ------
    DomainError
        If `E_t` is not a finite 3-D array with enough tokens, `p`, `b_offset` or `token_axis` is out of
        range, or `variant` is unknown.

    References
    ----------
    Spec ID `uniformity:def4.2` (paper Definition 4.2).
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
    r"""MED as the authors' `MLP/base.py` and `MLP/rec.py` compute it, with the Frobenius norm they log beside it.

    The pair ((m̄₁ + m̄₂)/2, ‖W_E[:, 0:p−1] − W_E[:, d:d+p−1]‖_F), m̄ the mean norm of the p − 2
    consecutive differences of tokens 0, …, p − 2 of each operand block (the code's off-by-one, erratum
    uniformity-6) and d = `b_offset`.

    Parameters
    ----------
    E : array_like
        Token-embedding matrix, a finite 2-D array with the tokens along `token_axis` and at least
        b_offset + p tokens.
    p : int
        The modulus p, an integer ≥ 3.
    b_offset : int, optional
        First token id d of the second operand's block, an integer ≥ 0 (default 0: one shared block).
    token_axis : int, optional
        Axis of `E` that runs over the tokens: 1 (default, columns) or 0 (rows).

    Returns
    -------
    CodeMED
        The named tuple (med, fro) of floats.

    Raises
    ------
    DomainError
        If `E` is not a finite 2-D array with enough tokens, or `p`, `b_offset` or `token_axis` is out
        of range.

    References
    ----------
    Spec ID `uniformity:def4.2` (paper Definition 4.2).
    """
    t1, t2 = _token_block(E, p, b_offset, token_axis)
    med = float(_med_core(t1, t2, int(p), int(b_offset), "code_base"))
    fro = float(FL.scaled_norm(t1[:p - 1] - t2[:p - 1]))
    return CodeMED(med, fro)
