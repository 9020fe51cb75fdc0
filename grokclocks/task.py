r"""The modular task's conventions, in one place: pair indexing, training masks, accuracy levels.

Every function of grokclocks that takes a training set, and the `grokclocks compare` command, reads
it through `as_mask`, so the same spellings work everywhere:

| form              | meaning                                                             |
|-------------------|---------------------------------------------------------------------|
| bool (p, p)       | entry [a, b] is `True` when the pair (a, b) is trained              |
| bool (p·p,)       | the same, flattened row-major: entry a·p + b                        |
| integer (n,)      | flat indices a·p + b of the training pairs (needs p)                |
| integer (n, 2)    | rows (a, b) of the training pairs (needs p)                         |

0/1 integer arrays of shape (p, p) or (p·p,) are read as masks (an index array of length p² with
values in {0, 1} would repeat an index, so these two readings cannot be confused).  The one
ambiguous spelling is p = 2 with two pairs given as rows (a, b): a square 0/1 array, read as a mask.
The canonical form is the bool (p, p) array; `flat_mask` and `mask_indices` convert back.

Accuracy levels: the memorisation and generalisation clocks use one pair of default levels
everywhere, `TRAIN_LEVEL` and `TEST_LEVEL`:

* t_train (= t_mem): the first record with train accuracy ≥ 1.0, the zero-one clock t_01 of spec ID
  `clocks:appF4-acc-clock` (every training pair classified correctly);
* t_test (= t_grok): the first record with test accuracy ≥ 0.99 (`kramers:milestones`, the test
  level of the spec's tables).

`grokclocks.compare.compare_run` and `grokclocks.kramers.milestones` use these defaults; the spec
text of `kramers:milestones` gives 0.99 for both, which the library overrides for the train level so
that t_mem and the zero-one clock are one number (pass `q_train=0.99` for the spec's reading).

Contents
--------
* masks: `as_mask`, `as_mask_stack`, `flat_mask`, `mask_indices`, `mask_from_indices`;
* operations and labels: `OPERATIONS`, `label_table`, `code_labels`, `modular_table`;
* encodings: `token_inputs`, `onehot_inputs`, `modadd_inputs`, `token_ids`;
* random splits: `random_split_mask`, `modadd_split`;
* designed splits (Table 1 of spec `uniformity`): `square_design`, `strip_design`, `random_design`,
  `designed_split`, `designed_split_mask`.

Functions that build p × p tables from an integer p (labels, designs) accept p ≤ `MAX_MODULUS` (2¹⁴)
and raise `DomainError` beyond it.

This module is pure numpy: the one home of the modular task's data conventions.  The older paths
(`grokclocks.coverage.label_table`, `grokclocks.kramers.modadd_inputs`,
`grokclocks.sim.data.token_inputs`, …) re-export these functions.
"""

from __future__ import annotations

import math
import random as _pyrandom
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import _validate as V
from ._fielddocs import document_records
from ._validate import DomainError, flag, integer_at_least, max_size
from .citations import cites

__all__ = ["TRAIN_LEVEL", "TEST_LEVEL", "as_mask", "as_mask_stack", "flat_mask", "mask_indices",
           "mask_from_indices", "Split", "TokenLayout", "PairTable", "OneHotTable", "OPERATIONS", "MAX_MODULUS",
           "label_table", "code_labels", "modular_table", "token_inputs", "onehot_inputs", "modadd_inputs",
           "token_ids", "random_split_mask", "modadd_split", "square_design", "strip_design", "random_design",
           "designed_split", "designed_split_mask"]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


TRAIN_LEVEL: float = 1.0
"""Default train-accuracy level 1.0 of t_train (= t_mem): every training pair classified correctly.

It makes t_mem the zero-one clock t_01 of spec ID `clocks:appF4-acc-clock`."""
TEST_LEVEL: float = 0.99
"""Default test-accuracy level 0.99 of t_test (= t_grok), spec ID `kramers:milestones`."""


def _short(x: Any, limit: int = 60) -> str:
    text = " ".join(repr(x).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _integral(a: np.ndarray, name: str) -> np.ndarray:
    """Integer array from an integer or integral-float array, or a DomainError naming `name`."""
    if np.issubdtype(a.dtype, np.integer):
        return a.astype(np.int64)
    if np.issubdtype(a.dtype, np.floating) and a.size and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
        return a.astype(np.int64)
    if np.issubdtype(a.dtype, np.floating) and a.size == 0:
        return a.astype(np.int64)
    raise DomainError(f"{name} must be a boolean mask or integer pair indices (got dtype {a.dtype}: {_short(a)})")


def _side(n_entries: int) -> int | None:
    n = int(round(math.sqrt(n_entries)))
    return n if n >= 2 and n * n == n_entries else None


@cites("uniformity:task")
def mask_from_indices(indices: Any, p: int, *, name: str = "train_mask") -> np.ndarray:
    r"""Boolean (p, p) mask from flat pair indices a·p + b or from pair rows (a, b).

    Parameters
    ----------
    indices : array_like of int
        The trained pairs: flat indices a·p + b, shape (n,), in [0, p²), or rows (a, b), shape (n, 2),
        in [0, p); integral floats are accepted; no pair may appear twice.
    p : int
        The modulus p, an integer ≥ 2.
    name : str, optional
        The parameter name used in error messages (default `"train_mask"`).

    Returns
    -------
    numpy.ndarray
        Boolean array of shape (p, p), `True` at the given pairs [a, b].

    Raises
    ------
    DomainError
        If `p` is not an integer ≥ 2, or the indices are not integers, have the wrong shape, are out of
        range or repeat a pair.

    References
    ----------
    Spec ID `uniformity:task` (pairs (a, b) ∈ ℤ_p²).
    """
    p = _p(p)
    max_size(float(p) * p, "p", p)  # a (p, p) mask is allocated
    idx = _integral(np.asarray(indices), name)
    if idx.ndim == 2 and idx.shape[1] == 2:
        bad = (idx < 0) | (idx >= p)
        if bad.any():
            r = int(np.nonzero(bad.any(axis=1))[0][0])
            raise DomainError(f"{name}: pair row {r} = {tuple(int(v) for v in idx[r])} is outside [0, {p})")
        idx = idx[:, 0] * p + idx[:, 1]
    elif idx.ndim != 1:
        raise DomainError(f"{name} as indices must have shape (n,) (flat a*p + b) or (n, 2) (pairs a, b) "
                          f"(got {idx.shape})")
    bad = (idx < 0) | (idx >= p * p)
    if bad.any():
        i = int(np.nonzero(bad)[0][0])
        raise DomainError(f"{name}: index {int(idx[i])} at position {i} is outside [0, p*p) = [0, {p * p})")
    flat = np.zeros(p * p, dtype=bool)
    flat[idx] = True
    if int(flat.sum()) != idx.size:
        uniq, counts = np.unique(idx, return_counts=True)
        raise DomainError(f"{name}: pair index {int(uniq[counts > 1][0])} appears more than once")
    return flat.reshape(p, p)


def _p(p: Any) -> int:
    from ._validate import integer_at_least

    return integer_at_least(p, "p", 2)


@cites("uniformity:task")
def as_mask(x: Any, p: int | None = None, *, name: str = "train_mask") -> np.ndarray:
    r"""One training set in any of the module's spellings, as the canonical boolean (p, p) mask.

    Parameters
    ----------
    x : array_like
        The set: a bool or 0/1 mask of shape (p, p) or (p·p,), or integer indices a·p + b of shape
        (n,), or pair rows (a, b) of shape (n, 2) (see the table of the module docstring).
    p : int, optional
        The modulus p, an integer ≥ 2; required for index arrays, checked against a mask's size
        otherwise.  Default `None`.
    name : str, optional
        The parameter name used in error messages (default `"train_mask"`).

    Returns
    -------
    numpy.ndarray
        Boolean C-contiguous array of shape (p, p), entry [a, b] `True` for a pair in the set.

    Raises
    ------
    DomainError
        If the shape or dtype is wrong, a mask is for another p, an index is out of range or repeated,
        or an index array comes without `p`.

    Examples
    --------
    >>> as_mask([0, 3], p=2).tolist()
    [[True, False], [False, True]]
    >>> as_mask([True, False, False, True]).tolist() == as_mask([[1, 0], [0, 1]]).tolist()
    True

    References
    ----------
    Spec ID `uniformity:task` (the task and its pairs).
    """
    if p is not None:
        p = _p(p)
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind in "USV":
        raise DomainError(f"{name} must be a boolean mask or integer pair indices (got {_short(x)})")
    if a.dtype != np.bool_:
        a_int = _integral(a, name)
        is01 = a_int.size > 0 and bool(np.isin(a_int, (0, 1)).all())
        square = a.ndim == 2 and a.shape[0] == a.shape[1] and a.shape[0] >= 2
        flat_square = a.ndim == 1 and _side(a.size) is not None and (p is None or a.size == p * p)
        if is01 and (square or flat_square):
            a = a_int.astype(bool)
        else:
            if p is None:
                raise DomainError(f"{name} looks like pair indices (integer shape {a.shape}); give p to read them")
            return mask_from_indices(a_int, p, name=name)
    if a.ndim == 1:
        side = _side(a.size)
        if side is None:
            raise DomainError(f"a flat {name} must have p*p entries (got {a.size}, not a square >= 4)")
        a = a.reshape(side, side)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 2:
        raise DomainError(f"{name} must have shape (p, p) or (p*p,) (got {a.shape})")
    if p is not None and a.shape[0] != p:
        raise DomainError(f"{name} is for p={a.shape[0]} (shape {a.shape}) but p={p}")
    return np.ascontiguousarray(a, dtype=bool)


@cites("uniformity:task")
def as_mask_stack(x: Any, p: int | None = None, *, name: str = "train_mask") -> np.ndarray:
    r"""Training sets of several runs as one boolean (n_runs, p, p) array.

    Parameters
    ----------
    x : array_like or sequence of array_like
        A list or tuple of numpy arrays (one set per run, each in any form of `as_mask`), a bool or 0/1
        stack of shape (n_runs, p, p) or (n_runs, p·p), or one set in any form of `as_mask` (one run; a
        square 2-D array is always one (p, p) mask).
    p : int, optional
        The modulus p, an integer ≥ 2; required for index arrays.  Default `None`.
    name : str, optional
        The parameter name used in error messages (default `"train_mask"`; run i is reported as
        name[i]).

    Returns
    -------
    numpy.ndarray
        Boolean array of shape (n_runs, p, p).

    Raises
    ------
    DomainError
        If a set is invalid (see `as_mask`) or the runs' sets are for different p.

    References
    ----------
    Spec ID `uniformity:task` (the task and its pairs).
    """
    if isinstance(x, (list, tuple)) and x and all(isinstance(m, np.ndarray) for m in x):
        return _stack([as_mask(m, p, name=f"{name}[{i}]") for i, m in enumerate(x)], name)
    a = np.asarray(x)
    stacked_flat = (a.ndim == 2 and a.shape[0] != a.shape[1] and _side(a.shape[1]) is not None
                    and (a.dtype == np.bool_ or (a.dtype.kind in "iuf" and np.isin(a, (0, 1)).all())))
    if a.ndim == 3 or stacked_flat:
        return _stack([as_mask(m, p, name=f"{name}[{i}]") for i, m in enumerate(a)], name)
    return as_mask(a, p, name=name)[None]


def _stack(masks: list[np.ndarray], name: str) -> np.ndarray:
    sides = {m.shape[0] for m in masks}
    if len(sides) != 1:
        raise DomainError(f"the runs' {name} are for different p: {sorted(sides)}")
    return np.stack(masks)


@cites("uniformity:task")
def flat_mask(mask: Any, p: int | None = None) -> np.ndarray:
    r"""The training set as a flat boolean (p·p,) mask, entry a·p + b.

    Parameters
    ----------
    mask : array_like
        The set, in any form of `as_mask`.
    p : int, optional
        The modulus p, an integer ≥ 2; required for index arrays.  Default `None`.

    Returns
    -------
    numpy.ndarray
        Boolean array of shape (p·p,), row-major.

    Raises
    ------
    DomainError
        If the set is invalid (see `as_mask`).

    References
    ----------
    Spec ID `uniformity:task` (the task and its pairs).
    """
    return as_mask(mask, p).reshape(-1)


@cites("uniformity:task")
def mask_indices(mask: Any, p: int | None = None, *, pairs: bool = False) -> np.ndarray:
    r"""Indices of the trained pairs: flat a·p + b, sorted, or with `pairs=True` rows (a, b).

    Parameters
    ----------
    mask : array_like
        The set, in any form of `as_mask`.
    p : int, optional
        The modulus p, an integer ≥ 2; required for index arrays.  Default `None`.
    pairs : bool, optional
        `False` (default): flat indices; `True`: pair rows (a, b).

    Returns
    -------
    numpy.ndarray
        int64 array of shape (n,) of sorted flat indices, or (n, 2) of rows (a, b) in the same order.

    Raises
    ------
    DomainError
        If the set is invalid (see `as_mask`) or `pairs` is not a bool.

    References
    ----------
    Spec ID `uniformity:task` (the task and its pairs).
    """
    pairs = flag(pairs, "pairs")
    m = as_mask(mask, p)
    flat = np.flatnonzero(m).astype(np.int64)
    if pairs:
        return np.stack(np.divmod(flat, m.shape[0]), axis=1)
    return flat


# ------------------------------------------------------------------------------------------ named results


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


# ------------------------------------------------------------------------------------------ operations and labels

OPERATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "sq_sum": lambda a, b: a * a + b * b,
    "xy": lambda a, b: a * a + a * b + b * b,
    "sq_of_sum": lambda a, b: a * a + 2 * a * b + b * b,
}
"""Binary operations f(a, b) on ℤ_p by name, reduced mod p by the caller.

Keys `"add"` (a + b), `"sub"` (a − b), `"mul"` (a·b), `"sq_sum"` (a² + b²), `"xy"` (a² + a·b + b², the
authors' base.py) and `"sq_of_sum"` ((a + b)², the authors' rec.py); each value is a function of two int64
arrays.  A user function f(a, b) returning an integer array works wherever an operation is taken."""



def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    if n > 10**10:  # trial division would take minutes (it hung on p ~ 1e18); sympy's test is exact for 64-bit n
        from sympy import isprime

        return bool(isprime(n))
    r = math.isqrt(n)
    return all(n % d for d in range(3, r + 1, 2))


MAX_MODULUS = 2 ** 14
"""Largest modulus p = 2¹⁴ = 16384 of the functions that build p × p tables (label tables, coverer counts, designs).

Their cost is O(p²) in memory and time (2.1 GB of int64 at the limit); beyond it they raise `DomainError`,
not a `MemoryError` or an hours-long trial division (`_is_prime(10**18 + 9)` is 5·10⁸ divisions)."""


def _grid_size(p: Any, name: str = "p", minimum: int = 2) -> int:
    p = V.integer_at_least(p, name, minimum)
    if p > MAX_MODULUS:
        raise DomainError(f"{name} must be <= {MAX_MODULUS} (MAX_MODULUS: the p x p tables cost O(p^2) memory; "
                          f"got {p})")
    return p


def _prime(p: Any, name: str = "p") -> int:
    p = _grid_size(p, name)
    if not _is_prime(p):
        raise DomainError(f"{name} must be prime for arithmetic over F_p (got {p})")
    return p


@cites("uniformity:task")
def label_table(p: int, op: str | Callable[[Any, Any], Any] = "add") -> np.ndarray:
    r"""Label table L[a, b] = f(a, b) mod p of the task.

    .. math:: L[a, b] = f(a, b) \bmod p \in [0, p),\quad a, b \in \{0,\dots,p-1\}

    In words: entry [a, b] (first operand = row) is the operation's value on (a, b), reduced mod p.

    Parameters
    ----------
    p : int
        The modulus p, a prime ≤ `MAX_MODULUS` (arithmetic over 𝔽_p).
    op : str or callable, optional
        The operation f: `"add"` (default, a + b), `"sub"` (a − b), `"mul"` (a·b), `"sq_sum"`
        (a² + b²), `"xy"` (a² + a·b + b², base.py's 'xy'), `"sq_of_sum"` ((a + b)², rec.py's 'xy'), or an
        integer-valued f(a, b) broadcasting over int64 arrays.

    Returns
    -------
    numpy.ndarray
        int64 array of shape (p, p), entries in [0, p).

    Raises
    ------
    DomainError
        If `p` is not a prime ≤ `MAX_MODULUS`, or `op` is not a known name or does not return integer
        values of shape (p, p).

    References
    ----------
    Spec ID `uniformity:task` (the task).
    """
    p = _prime(p)
    a = np.arange(p, dtype=np.int64)[:, None]
    b = np.arange(p, dtype=np.int64)[None, :]
    if callable(op):
        try:
            out = np.asarray(op(a, b))
        except Exception as exc:  # noqa: BLE001
            raise DomainError(f"op must broadcast over numpy int arrays (calling it raised {exc!r})") from exc
        if out.shape != (p, p):
            try:
                out = np.broadcast_to(out, (p, p))
            except ValueError as exc:
                raise DomainError(f"op must return an array of shape ({p}, {p}) (got {out.shape})") from exc
        if np.issubdtype(out.dtype, np.floating):
            if not (np.all(np.isfinite(out)) and np.all(out == np.round(out))):
                raise DomainError("op must return integer values")
            out = out.astype(np.int64)
        elif not np.issubdtype(out.dtype, np.integer):
            if out.dtype == object:
                try:
                    out = np.array([[int(v) % p for v in row] for row in out], dtype=np.int64)
                except (TypeError, ValueError) as exc:
                    raise DomainError("op must return integer values") from exc
            else:
                raise DomainError(f"op must return integer values (got dtype {out.dtype})")
        return np.mod(out.astype(np.int64), p)
    name = V.choice(op, "op", tuple(OPERATIONS))
    if p < 3_037_000_499:  # a^2 + ab + b^2 < 3 p^2 fits int64
        return np.mod(OPERATIONS[name](a, b), p).astype(np.int64)
    return np.array([[OPERATIONS[name](int(i), int(j)) % p for j in range(p)] for i in range(p)], dtype=np.int64)


@cites("uniformity:task", "uniformity:setup")
def code_labels(p: int, op: str = "add", d: int = 0) -> np.ndarray:
    r"""Labels as the authors' code computes them: from the second operand's token id b + d.

    .. math:: L^{\rm code}[a,b]=f(a,\,b+d)\bmod p

    In words: the operation is applied to a and the token id b + d, not to b.  With d = 0 this equals
    `label_table`; with d = 60 (the authors' str.py) addition labels shift by 60 (erratum
    uniformity-8).

    Parameters
    ----------
    p : int
        The modulus p, a prime ≤ `MAX_MODULUS`.
    op : str, optional
        The operation, a name of `OPERATIONS` (default `"add"`).
    d : int, optional
        Offset of the second operand's token ids, an integer ≥ 0 (default 0).

    Returns
    -------
    numpy.ndarray
        int64 array of shape (p, p), entry [a, b] = f(a, b + d) mod p.

    Raises
    ------
    DomainError
        If `p` is not a prime ≤ `MAX_MODULUS`, `op` is unknown, or `d` is not an integer ≥ 0.

    References
    ----------
    Spec IDs `uniformity:task` (the task, a fact of the code) and `uniformity:setup` (the authors'
    setup).
    """
    p = _prime(p)
    d = V.integer_at_least(d, "d", 0)
    name = V.choice(op, "op", tuple(OPERATIONS))
    a = np.arange(p, dtype=np.int64)[:, None]
    b = np.arange(p, dtype=np.int64)[None, :] + d
    return np.mod(OPERATIONS[name](a, b), p).astype(np.int64)


@cites("uniformity:task")
def modular_table(p: int, operation: Any = "add") -> PairTable:
    r"""All p² ordered pairs and their labels (a, b, f(a, b) mod p), each an int64 array of shape (p²,).

    Row a·p + b holds the pair (a, b): the order of `grokclocks.sim.data.modular_addition_table` and of
    the papers' code, `itertools.product(range(p), range(p))`.  Unlike `label_table`, p need not be
    prime.

    Parameters
    ----------
    p : int
        The modulus p, an integer ≥ 2.
    operation : str or callable, optional
        The operation: a name of `OPERATIONS` (default `"add"`), or a function f(a, b) of two int64
        arrays returning an integer array of their shape.

    Returns
    -------
    PairTable
        The named tuple (a, b, labels) of int64 arrays of shape (p²,).

    Raises
    ------
    DomainError
        If `p` is not an integer ≥ 2, the table would exceed 2³⁰ entries, or `operation` is unknown or
        does not return an integer array of the right shape.

    References
    ----------
    Spec ID `uniformity:task` (the task).
    """
    p = integer_at_least(p, "p", 2)
    V.max_size(3.0 * p * p, "p", p)
    if callable(operation):
        fn = operation
    else:
        fn = OPERATIONS[V.choice(operation, "operation", tuple(OPERATIONS))]
    a, b = np.divmod(np.arange(p * p, dtype=np.int64), p)
    labels = np.asarray(fn(a, b))
    if labels.shape != a.shape or not np.issubdtype(labels.dtype, np.integer):
        raise DomainError(f"operation must map two int arrays of shape {a.shape} to one int array "
                          f"(got dtype {labels.dtype}, shape {labels.shape})")
    return PairTable(a, b, np.mod(labels, p).astype(np.int64))


# ------------------------------------------------------------------------------------------ encodings


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


# ------------------------------------------------------------------------------------------ random splits


def _n_train(p: int, frac: float | None, n_train: int | None) -> int:
    if (frac is None) == (n_train is None):
        raise DomainError("give exactly one of frac and n_train")
    if frac is not None:
        frac = V.positive(frac, "frac", scalar=True)
        if frac >= 1:
            raise DomainError(f"frac must be in (0, 1) (got {frac})")
        n_train = int(frac * p * p)
    n_train = integer_at_least(n_train, "n_train", 1)
    if n_train >= p * p:
        raise DomainError(f"n_train must be in [1, p^2 - 1] = [1, {p * p - 1}] (got {n_train})")
    return n_train


def _permutation(p: int, seed: Any, name: str = "seed") -> np.ndarray:
    """`np.random.default_rng(seed).permutation(p*p)`: the order of every numpy random split here."""
    return np.random.default_rng(integer_at_least(seed, name, 0)).permutation(p * p)


@cites("uniformity:task")
def random_split_mask(p: int, seeds: int | Sequence[int], *, frac: float | None = None,
                      n_train: int | None = None) -> np.ndarray:
    r"""Random training masks over the p² pairs: the first n_train of `numpy.random.default_rng(seed).permutation`.

    Give `frac` (then n_train = int(frac·p²), as the papers' code) or `n_train`, not both.

    Parameters
    ----------
    p : int
        The modulus p, an integer ≥ 2.
    seeds : int or sequence of int
        Seed(s) of the permutation, integers ≥ 0: an int gives one mask, a non-empty sequence one mask
        per seed.
    frac : float, optional
        Training fraction of the p² pairs, in (0, 1).  Default `None`: use `n_train`.
    n_train : int, optional
        Number of training pairs, an integer in [1, p² − 1].  Default `None`: use `frac`.

    Returns
    -------
    numpy.ndarray
        Boolean array of shape (p²,) for an int seed, (n_seeds, p²) for a sequence.

    Raises
    ------
    DomainError
        If `p` < 2, both or neither of `frac` and `n_train` are given, either is out of range, `seeds`
        is empty or holds a negative or non-integer seed, or p² exceeds 2³⁰.

    References
    ----------
    Spec ID `uniformity:task` (the task).
    """
    p = integer_at_least(p, "p", 2)
    V.max_size(float(p) ** 2, "p", p)
    n_train = _n_train(p, frac, n_train)
    scalar = np.ndim(seeds) == 0
    if not scalar and np.size(seeds) == 0:
        raise DomainError("seeds must not be empty")
    out = []
    for s in np.atleast_1d(seeds).tolist():
        m = np.zeros(p * p, dtype=bool)
        m[_permutation(p, s, "seeds")[:n_train]] = True
        out.append(m)
    return out[0] if scalar else np.stack(out)


@cites("kramers:task")
def modadd_split(p: int, rho: float, seed: int) -> Split:
    r"""Train and test pair indices of a random split: the first n_train of default_rng(seed).permutation(p·p) train.

    n_train = ⌊ρ·p²⌋ (see `grokclocks.kramers.n_train`).

    Parameters
    ----------
    p : int
        The modulus p, an integer ≥ 2.
    rho : float
        Training fraction ρ, in the open interval (0, 1), such that 1 ≤ ⌊ρ·p²⌋ ≤ p² − 1.
    seed : int
        Seed of the permutation, an integer ≥ 0.

    Returns
    -------
    Split
        The named tuple (train, test) of int64 flat pair indices a·p + b, in permutation order.

    Raises
    ------
    DomainError
        If `p` < 2, `rho` is outside (0, 1) or gives an empty side, `seed` is not an integer ≥ 0, or p²
        exceeds 2³⁰.

    References
    ----------
    Spec ID `kramers:task` (the modular-addition task and its split).
    """
    p = integer_at_least(p, "p", 2)
    rho = V.in_open_interval(rho, "rho", 0.0, 1.0, scalar=True)
    n = int(math.floor(rho * p * p))
    if not 1 <= n <= p * p - 1:
        raise DomainError(f"floor(rho p^2) must be in [1, p^2 - 1] (got {n} for rho={rho!r}, p={p})")
    V.max_size(float(p) ** 2, "p", p)
    perm = _permutation(p, seed)
    return Split(perm[:n], perm[n:])


# ------------------------------------------------------------------------------------------ designed splits (uniformity §7)


def _split_from_order(p: int, held: np.ndarray, frac: float, seed: int, shuffle: str) -> Split:
    remaining = [i for i in range(p * p) if not held.flat[i]]  # row-major, as the code's list comprehension
    if shuffle == "python":
        rng = _pyrandom.Random(seed)  # == random.seed(seed); random.shuffle(...)
        rng.shuffle(remaining)
        order = np.asarray(remaining, dtype=np.int64)
    else:
        order = np.random.default_rng(seed).permutation(np.asarray(remaining, dtype=np.int64))
    train_size = int(frac * (p * p))  # the code: int(config.frac_train * len(pairs)), len(pairs) = p^2
    if train_size > order.size:
        warnings.warn(f"remainder ({order.size} points) is smaller than int(frac * p^2) = {train_size}; "
                      "using all of it for training, as the authors' code does", stacklevel=4)
    train = np.zeros(p * p, dtype=bool)
    train[order[:train_size]] = True
    train = train.reshape(p, p)
    return Split(train, ~train)


def _design_args(p, frac, seed, shuffle):
    p = _grid_size(p)
    f = V.as_float_array(frac, "frac", scalar=True)
    if not 0.0 < f <= 1.0:
        raise DomainError(f"frac must be in (0, 1] (got {f!r})")
    seed = V.integer_at_least(seed, "seed", 0)
    shuffle = V.choice(shuffle, "shuffle", ("python", "numpy"))
    return p, f, seed, shuffle


def _design(p: Any, k: Any, frac: Any, seed: Any, shuffle: Any, region: str) -> Split:
    """Hold out `region` (square a, b ≤ k; strip a ≤ k; random: nothing), split the rest."""
    p, f, seed, shuffle = _design_args(p, frac, seed, shuffle)
    held = np.zeros((p, p), dtype=bool)
    if region != "random":
        k = _k(k, p)
        held[:k + 1, :k + 1 if region == "square" else p] = True
    return _split_from_order(p, held, f, seed, shuffle)


def _k(k, p):
    k = V.integer_at_least(k, "k", 0)
    if k > p - 1:
        raise DomainError(f"k must be in [0, p-1] = [0, {p - 1}] (got {k})")
    return k


@cites("uniformity:designs")
def square_design(p: int, k: int, frac: float = 0.3, seed: int = 0, shuffle: str = "python") -> Split:
    r"""SQUARE split of Table 1, exactly as the authors' `transformer/rec.py` builds it.

    Held out: {0 ≤ a ≤ k, 0 ≤ b ≤ k} ((k + 1)² points).  The remaining pairs (row-major) are shuffled
    (`random.seed(seed); random.shuffle` for `shuffle="python"`, or
    `numpy.random.default_rng(seed).permutation`) and the first int(frac·p²) are the training set (a
    fraction of the full grid, erratum uniformity-3); everything else is the test set.  If the
    remainder is smaller than int(frac·p²) all of it is used and a `UserWarning` is issued.

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    k : int
        Size parameter of the held-out square, an integer in [0, p − 1].
    frac : float, optional
        Training fraction of the full grid, in (0, 1] (default 0.3).
    seed : int, optional
        Seed of the shuffle, an integer ≥ 0 (default 0).
    shuffle : {"python", "numpy"}, optional
        The shuffle: `"python"` (default, Python's `random`, as the authors' code) or `"numpy"`.

    Returns
    -------
    Split
        The named tuple (train, test): complementary boolean (p, p) masks of T and S.

    Raises
    ------
    DomainError
        If an argument is outside its domain above.

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits of Table 1).
    """
    return _design(p, k, frac, seed, shuffle, "square")


@cites("uniformity:designs")
def strip_design(p: int, k: int, frac: float = 0.3, seed: int = 0, shuffle: str = "python") -> Split:
    r"""STRIP split of Table 1, exactly as the authors' `transformer/str.py` builds it.

    Held out: {0 ≤ a ≤ k, 0 ≤ b < p} (k + 1 full rows of the first operand); then as `square_design`.
    If the remainder is smaller than int(frac·p²) all of it is used and a `UserWarning` is issued
    (STRIP k = 67 at p = 97: 2813 training points).

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    k : int
        Size parameter of the held-out strip, an integer in [0, p − 1].
    frac : float, optional
        Training fraction of the full grid, in (0, 1] (default 0.3).
    seed : int, optional
        Seed of the shuffle, an integer ≥ 0 (default 0).
    shuffle : {"python", "numpy"}, optional
        The shuffle: `"python"` (default, Python's `random`, as the authors' code) or `"numpy"`.

    Returns
    -------
    Split
        The named tuple (train, test): complementary boolean (p, p) masks of T and S.

    Raises
    ------
    DomainError
        If an argument is outside its domain above.

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits of Table 1).
    """
    return _design(p, k, frac, seed, shuffle, "strip")


@cites("uniformity:designs")
def random_design(p: int, frac: float, seed: int = 0, shuffle: str = "python") -> Split:
    r"""Random split of the authors' base.py: shuffle all p² pairs; the first int(frac·p²) are the training set.

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    frac : float
        Training fraction of the full grid, in (0, 1].
    seed : int, optional
        Seed of the shuffle, an integer ≥ 0 (default 0).
    shuffle : {"python", "numpy"}, optional
        The shuffle: `"python"` (default, Python's `random`, as the authors' code) or `"numpy"`.

    Returns
    -------
    Split
        The named tuple (train, test): complementary boolean (p, p) masks of T and S.

    Raises
    ------
    DomainError
        If an argument is outside its domain above.

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits).
    """
    return _design(p, None, frac, seed, shuffle, "random")


@cites("uniformity:designs")
def designed_split(p: int, design: str, k: int | None = None, frac: float = 0.3, seed: int = 0,
                   shuffle: str = "python") -> Split:
    r"""Designed split by name: `square_design`, `strip_design` (both need `k`) or `random_design`.

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    design : {"square", "strip", "random"}
        The design (`"SQUARE"` and `"STRIP"` are accepted too).
    k : int, optional
        Size parameter of the held-out region, an integer in [0, p − 1]; required for `"square"` and
        `"strip"`, ignored for `"random"`.  Default `None`.
    frac : float, optional
        Training fraction of the full grid, in (0, 1] (default 0.3).
    seed : int, optional
        Seed of the shuffle, an integer ≥ 0 (default 0).
    shuffle : {"python", "numpy"}, optional
        The shuffle: `"python"` (default, Python's `random`, as the authors' code) or `"numpy"`.

    Returns
    -------
    Split
        The named tuple (train, test): complementary boolean (p, p) masks of T and S.

    Raises
    ------
    DomainError
        If `design` is unknown, `k` is missing for square or strip, or an argument is outside its
        domain.

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits of Table 1).
    """
    design = V.choice(design, "design", {"square": "square", "SQUARE": "square", "strip": "strip",
                                          "STRIP": "strip", "random": "random"})
    if design == "random":
        return random_design(p, frac, seed, shuffle)
    if k is None:
        raise DomainError(f"k must be given for design {design!r} (got None)")
    fn = square_design if design == "square" else strip_design
    return fn(p, k, frac, seed, shuffle)


@cites("uniformity:designs")
def designed_split_mask(p: int, design: str, k: int) -> np.ndarray:
    r"""Designed training mask (SQUARE or STRIP held-out region), flattened to shape (p²,).

    The training mask of `designed_split` with its defaults (the exact construction of the authors'
    code); row a·p + b as in `modular_table`.

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    design : {"square", "strip", "random"}
        The design (see `designed_split`).
    k : int
        Size parameter of the held-out region, an integer in [0, p − 1] (used by square and strip).

    Returns
    -------
    numpy.ndarray
        Boolean array of shape (p²,), the training set.

    Raises
    ------
    DomainError
        If an argument is outside its domain (see `designed_split`).

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits of Table 1).
    """
    train, _ = designed_split(p, design, k)
    return np.asarray(train, dtype=bool).reshape(p * p)


document_records(globals(), __all__)  # help() of each record class lists its fields
