r"""The named results of the task's functions: a split, a vocabulary layout, a pair table, a one-hot table.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Split(NamedTuple):
    r"""A train/test split of the p² pairs: the training set T (`train`) and the test set S (`test`).

    A named tuple; it unpacks as `train, test = ...`.  The fields are masks (bool (p, p) or (p·p,)) or
    index arrays, as the function that returns the split says.
    """

    train: np.ndarray
    r"""The training set T: a boolean mask or the flat pair indices a·p + b."""
    test: np.ndarray
    r"""The test set S, in the same form as `train`."""


class TokenLayout(NamedTuple):
    r"""Vocabulary layout of the transformer task, as returned by `token_ids`.

    A named tuple; it unpacks like the plain tuple (a_ids, b_ids, equals_id, d_vocab).
    """

    a_ids: np.ndarray
    r"""int64 array of shape (p,): the token id of first-operand value a (a itself)."""
    b_ids: np.ndarray
    r"""int64 array of shape (p,): the token id b + d of second-operand value b."""
    equals_id: int
    r"""The token id of `=`, d_vocab − 1."""
    d_vocab: int
    r"""The vocabulary size."""


class PairTable(NamedTuple):
    r"""All p² pairs in row-major order (row a·p + b) with their labels, as returned by `modular_table`.

    A named tuple; it unpacks like the plain tuple (a, b, labels).  Each field is an int64 array of
    shape (p²,).
    """

    a: np.ndarray
    r"""The first operand of each row."""
    b: np.ndarray
    r"""The second operand of each row."""
    labels: np.ndarray
    r"""The label f(a, b) mod p of each row, in [0, p)."""


class OneHotTable(NamedTuple):
    r"""All p² pairs as one-hot inputs X = [e_a; e_b] with operands and label, as returned by `modadd_inputs`.

    A named tuple; it unpacks like the plain tuple (X, a, b, y).
    """

    X: np.ndarray
    r"""float64 inputs of shape (p², 2p), row a·p + b the concatenated one-hot codes of a and b."""
    a: np.ndarray
    r"""int64 first operands, shape (p²,)."""
    b: np.ndarray
    r"""int64 second operands, shape (p²,)."""
    y: np.ndarray
    r"""int64 labels (a + b) mod p, shape (p²,)."""
