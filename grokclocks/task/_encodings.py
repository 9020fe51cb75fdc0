r"""Encodings of the pairs (a, b): token-index inputs, one-hot inputs [e_a; e_b], and the vocabulary layout.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validate as V
from .._validate import DomainError, integer_at_least
from ..citations import cites
from ._labels import modular_table
from ._records import OneHotTable, TokenLayout


@cites("uniformity:task")
def token_inputs(a: np.ndarray, b: np.ndarray, p: int, *, equals: bool = False) -> np.ndarray:
    r"""Token-index inputs of the pairs: columns [a, b], or [a, b, =] with `=` the token p (transformer).

    Parameters
    ----------
    a : array_like of int
        First operands, a 1-D integer array with entries in [0, p).
    b : array_like of int
        Second operands, a 1-D integer array of the length of `a` with entries in [0, p).
    p : int
        The modulus p, an integer ≥ 2.
    equals : bool, optional
        `False` (default): two columns; `True`: a third column holding the `=` token p.

    Returns
    -------
    numpy.ndarray
        int64 array of shape (N, 2), or (N, 3) with `equals=True`.

    Raises
    ------
    DomainError
        If `p` is not an integer ≥ 2, `a` and `b` are not 1-D integer arrays of one length with entries
        in [0, p), or `equals` is not a bool.

    References
    ----------
    Spec ID `uniformity:task` (the task).
    """
    p = integer_at_least(p, "p", 2)
    a, b = V.integer_array(a, "a", what="integer tokens"), V.integer_array(b, "b", what="integer tokens")
    equals = V.flag(equals, "equals")
    if a.shape != b.shape or a.ndim != 1:
        raise DomainError(f"a and b must be 1-D of equal length (got {a.shape}, {b.shape})")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= p):
        raise DomainError(f"tokens a, b must lie in [0, {p}) (got a in [{a.min()}, {a.max()}], b in [{b.min()}, {b.max()}])")
    cols = [a, b] + ([np.full_like(a, p)] if equals else [])
    return np.stack(cols, axis=1)


@cites("uniformity:task")
def onehot_inputs(a: np.ndarray, b: np.ndarray, p: int, dtype: Any = np.float32) -> np.ndarray:
    r"""Concatenated one-hot inputs [e_a; e_b] of the pairs, shape (N, 2p).

    Parameters
    ----------
    a : array_like of int
        First operands, a 1-D integer array with entries in [0, p).
    b : array_like of int
        Second operands, a 1-D integer array of the length of `a` with entries in [0, p).
    p : int
        The modulus p, an integer ≥ 2.
    dtype : numpy dtype, optional
        The dtype of the result (default `numpy.float32`).

    Returns
    -------
    numpy.ndarray
        Array of shape (N, 2p) and dtype `dtype`: a one in column a and in column p + b of each row.

    Raises
    ------
    DomainError
        If `p` is not an integer ≥ 2, or `a` and `b` are not 1-D integer arrays of one length with
        entries in [0, p).

    References
    ----------
    Spec ID `uniformity:task` (the task).
    """
    tok = token_inputs(a, b, p)
    X = np.zeros((tok.shape[0], 2 * p), dtype=dtype)
    rows = np.arange(tok.shape[0])
    X[rows, tok[:, 0]] = 1
    X[rows, p + tok[:, 1]] = 1
    return X


@cites("kramers:task")
def modadd_inputs(p: int) -> OneHotTable:
    r"""All p² modular-addition pairs as concatenated one-hot inputs.

    Pair index i = a·p + b, input x_i = [e_a; e_b] ∈ {0, 1}^(2p), label (a + b) mod p.

    Parameters
    ----------
    p : int
        The modulus p, an integer ≥ 2 (the table holds 2p³ entries, at most 2³⁰).

    Returns
    -------
    OneHotTable
        The named tuple (X, a, b, y): X of shape (p², 2p), float64; a, b, y int64 of shape (p²,).

    Raises
    ------
    DomainError
        If `p` is not an integer ≥ 2 or the table would exceed 2³⁰ entries.

    References
    ----------
    Spec ID `kramers:task` (the modular-addition task).
    """
    p = integer_at_least(p, "p", 2)
    V.max_size(2.0 * p**3, "p", p)
    a, b, y = modular_table(p, "add")
    return OneHotTable(onehot_inputs(a, b, p, dtype=np.float64), a, b, y)


@cites("uniformity:setup", "uniformity:designs")
def token_ids(p: int, b_offset: int = 0, d_vocab: int | None = None) -> TokenLayout:
    r"""Vocabulary layout: token ids of the first operand (a), of the second (b + d), of `=`, and the vocabulary size.

    `=` is always d_vocab − 1 (the code's `config.d_vocab - 1`).  The default d_vocab = p + d + 1 with
    `b_offset = 0` gives the shared layout of the authors' rec.py and base.py (d_vocab = p + 1, `=` is
    p); str.py uses d = 60 with d_vocab = 170 (ids d + p, …, 168 unused).

    Parameters
    ----------
    p : int
        The modulus p, an integer ≥ 2.
    b_offset : int, optional
        Offset d of the second operand's token ids, an integer ≥ 0 (default 0: shared vocabulary).
    d_vocab : int, optional
        The vocabulary size, an integer ≥ p + d + 1.  Default `None`: p + d + 1.

    Returns
    -------
    TokenLayout
        The named tuple (a_ids, b_ids, equals_id, d_vocab).

    Raises
    ------
    DomainError
        If `p` < 2, `b_offset` < 0, or `d_vocab` < p + d + 1.

    Examples
    --------
    >>> token_ids(97, 60, 170).equals_id
    169

    References
    ----------
    Spec IDs `uniformity:setup` (the authors' setup) and `uniformity:designs` (the designed splits).
    """
    p = V.integer_at_least(p, "p", 2)
    d = V.integer_at_least(b_offset, "b_offset", 0)
    d_vocab = p + d + 1 if d_vocab is None else V.integer_at_least(d_vocab, "d_vocab", p + d + 1)
    V.max_size(2.0 * p, "p", p)
    return TokenLayout(np.arange(p), np.arange(p) + d, d_vocab - 1, d_vocab)
