"""The modular task's conventions, in one place: pair indexing, training masks, accuracy levels.

Every function of grokclocks that takes a training set, and the ``grokclocks compare`` command, reads
it through :func:`as_mask`, so the same three spellings work everywhere:

=========================  =====================================================================
form                       meaning
=========================  =====================================================================
bool ``(p, p)``            entry ``[a, b]`` is True when the pair :math:`(a, b)` is trained
bool ``(p*p,)``            the same, flattened row-major: entry ``a*p + b``
integer ``(n,)``           flat indices ``a*p + b`` of the training pairs (needs ``p``)
integer ``(n, 2)``         rows ``(a, b)`` of the training pairs (needs ``p``)
=========================  =====================================================================

0/1 integer arrays of shape ``(p, p)`` or ``(p*p,)`` are read as masks (an index array of length
:math:`p^2` with values in {0, 1} would repeat an index, so these two readings cannot be confused).  The one
ambiguous spelling is :math:`p=2` with two pairs given as rows ``(a, b)``: a square 0/1 array, read as a mask.
The canonical form is the bool ``(p, p)`` array; :func:`flat_mask` and
:func:`mask_indices` convert back.

Accuracy levels
---------------
The memorisation and generalisation clocks use one pair of default levels everywhere
(:data:`TRAIN_LEVEL`, :data:`TEST_LEVEL`):

* ``t_train`` (= :math:`t_{\\rm mem}`): the first record with train accuracy :math:`\\ge` **1.0**, the zero-one
  clock :math:`t_{01}` of spec ``clocks:appF4-acc-clock`` (every training pair classified correctly);
* ``t_test`` (= :math:`t_{\\rm grok}`): the first record with test accuracy :math:`\\ge` **0.99**
  (``kramers:milestones``, the test level of the spec's tables).

:func:`grokclocks.compare.compare_run` and :func:`grokclocks.kramers.milestones` use these defaults; the
spec text of ``kramers:milestones`` gives 0.99 for both, which the library overrode for the train level so
that ``t_mem`` and the zero-one clock are one number (pass ``q_train=0.99`` for the spec's reading).

Contents
--------
* masks: :func:`as_mask`, :func:`as_mask_stack`, :func:`flat_mask`, :func:`mask_indices`, :func:`mask_from_indices`;
* operations and labels: :data:`OPERATIONS`, :func:`label_table`, :func:`code_labels`, :func:`modular_table`;
* encodings: :func:`token_inputs`, :func:`onehot_inputs`, :func:`modadd_inputs`, :func:`token_ids`;
* random splits: :func:`random_split_mask`, :func:`modadd_split`;
* designed splits (Table 1 of spec ``uniformity``): :func:`square_design`, :func:`strip_design`,
  :func:`random_design`, :func:`designed_split`, :func:`designed_split_mask`.

Functions that build :math:`p\\times p` tables from an integer ``p`` (labels, designs) accept ``p <=``
:data:`MAX_MODULUS` (:math:`2^{14}`) and raise ``DomainError`` beyond it.

This module is pure numpy: the one home of the modular task's data conventions.  The older paths
(``grokclocks.coverage.label_table``, ``grokclocks.kramers.modadd_inputs``,
``grokclocks.sim.data.token_inputs``, ...) re-export these functions.
"""

from __future__ import annotations

import math
import random as _pyrandom
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import _validate as V
from ._validate import DomainError, flag, integer_at_least, max_size
from .citations import cites

__all__ = ["TRAIN_LEVEL", "TEST_LEVEL", "as_mask", "as_mask_stack", "flat_mask", "mask_indices",
           "mask_from_indices", "Split", "TokenLayout", "PairTable", "OneHotTable", "OPERATIONS", "MAX_MODULUS",
           "label_table", "code_labels", "modular_table", "token_inputs", "onehot_inputs", "modadd_inputs",
           "token_ids", "random_split_mask", "modadd_split", "square_design", "strip_design", "random_design",
           "designed_split", "designed_split_mask"]

#: Default train-accuracy level of ``t_train`` / ``t_mem`` (the zero-one clock, ``clocks:appF4-acc-clock``).
TRAIN_LEVEL: float = 1.0
#: Default test-accuracy level of ``t_test`` / ``t_grok`` (``kramers:milestones``).
TEST_LEVEL: float = 0.99


def _short(x: Any, limit: int = 60) -> str:
    text = " ".join(repr(x).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _integral(a: np.ndarray, name: str) -> np.ndarray:
    """Integer array from an integer or integral-float array, or a DomainError naming ``name``."""
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
    """Bool ``(p, p)`` mask from flat pair indices ``a*p + b`` ``(n,)`` or pair rows ``(a, b)`` ``(n, 2)``.

    Parameters
    ----------
    indices : integer array ``(n,)`` in ``[0, p*p)`` or ``(n, 2)`` in ``[0, p)``; no pair twice.
    p : int >= 2
    name : str
        Parameter name used in error messages.

    Returns
    -------
    bool ndarray ``(p, p)``

    Raises
    ------
    DomainError
        Non-integer, out-of-range or repeated indices.

    References
    ----------
    ``uniformity:task`` (pairs :math:`(a, b)\\in\\mathbb Z_p^2`).
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
    """One training set in any of the module's spellings, as the canonical bool ``(p, p)`` mask.

    Parameters
    ----------
    x : array_like
        Bool or 0/1 ``(p, p)`` / ``(p*p,)`` mask, or integer indices ``(n,)`` (``a*p + b``) or ``(n, 2)``.
    p : int >= 2, optional
        The modulus; required for index arrays, checked against a mask's size otherwise.
    name : str
        Parameter name used in error messages.

    Returns
    -------
    bool ndarray ``(p, p)``

    Raises
    ------
    DomainError
        Wrong shape or dtype, a mask for another ``p``, out-of-range or repeated indices, or an index
        array without ``p``.

    Examples
    --------
    >>> as_mask([0, 3], p=2).tolist()
    [[True, False], [False, True]]
    >>> as_mask([True, False, False, True]).tolist() == as_mask([[1, 0], [0, 1]]).tolist()
    True

    References
    ----------
    ``uniformity:task``.
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
    """Training sets of several runs as bool ``(n_runs, p, p)``.

    ``x`` is a list or tuple of numpy arrays (one mask per run, each in any form of :func:`as_mask`),
    a bool/0-1 stack ``(n_runs, p, p)`` or ``(n_runs, p*p)``, or one mask in any form of :func:`as_mask`
    (one run; a square 2-D array is always one ``(p, p)`` mask).

    References
    ----------
    ``uniformity:task``.
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
    """The mask as bool ``(p*p,)`` (entry ``a*p + b``).  Any form of :func:`as_mask` is accepted.

    References
    ----------
    ``uniformity:task``.
    """
    return as_mask(mask, p).reshape(-1)


@cites("uniformity:task")
def mask_indices(mask: Any, p: int | None = None, *, pairs: bool = False) -> np.ndarray:
    """Indices of the trained pairs: flat ``a*p + b`` (``(n,)``, sorted) or, with ``pairs=True``, rows ``(a, b)``.

    References
    ----------
    ``uniformity:task``.
    """
    pairs = flag(pairs, "pairs")
    m = as_mask(mask, p)
    flat = np.flatnonzero(m).astype(np.int64)
    if pairs:
        return np.stack(np.divmod(flat, m.shape[0]), axis=1)
    return flat


# ------------------------------------------------------------------------------------------ named results


class Split(NamedTuple):
    """A train/test split of the :math:`p^2` pairs: :math:`T` (``train``) and :math:`S` (``test``).

    Masks (bool ``(p, p)`` or ``(p*p,)``) or index arrays, as the returning function says; unpacks as
    ``train, test = ...``.
    """

    train: np.ndarray
    test: np.ndarray


class TokenLayout(NamedTuple):
    """Vocabulary layout of the transformer task (:func:`token_ids`): operand token ids, ``=`` id, vocabulary size."""

    a_ids: np.ndarray
    b_ids: np.ndarray
    equals_id: int
    d_vocab: int


class PairTable(NamedTuple):
    """All :math:`p^2` pairs in row-major order (row :math:`a p + b`): operands ``a``, ``b`` and ``labels``."""

    a: np.ndarray
    b: np.ndarray
    labels: np.ndarray


class OneHotTable(NamedTuple):
    """All :math:`p^2` pairs as one-hot inputs :math:`X=[e_a;e_b]` with operands ``a``, ``b`` and label ``y``."""

    X: np.ndarray
    a: np.ndarray
    b: np.ndarray
    y: np.ndarray


# ------------------------------------------------------------------------------------------ operations and labels

#: Binary operations on :math:`\mathbb Z_p` by name (reduced mod p by the caller); a user function
#: ``f(a, b) -> int array`` works wherever an operation is taken.  ``"xy"`` is base.py's
#: :math:`a^2+ab+b^2`, ``"sq_of_sum"`` rec.py's :math:`(a+b)^2`.
OPERATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "sq_sum": lambda a, b: a * a + b * b,
    "xy": lambda a, b: a * a + a * b + b * b,
    "sq_of_sum": lambda a, b: a * a + 2 * a * b + b * b,
}



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


#: Largest modulus of the functions that build p x p tables (label tables, coverer counts, designs):
#: their cost is O(p^2) memory and time (2.1 GB of int64 at the limit); beyond it a DomainError, not a
#: MemoryError or an hours-long trial division (``_is_prime(10**18 + 9)`` is 5e8 divisions).
MAX_MODULUS = 2 ** 14


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
    r"""Label table :math:`L[a,b]=f(a,b)\bmod p` of the task.

    .. math:: L[a, b] = f(a, b) \bmod p \in [0, p),\quad a, b \in \{0,\dots,p-1\}

    Parameters
    ----------
    p : int
        Modulus, a prime (arithmetic over :math:`\mathbb F_p`).
    op : str or callable
        ``"add"`` (:math:`a+b`), ``"sub"`` (:math:`a-b`), ``"mul"`` (:math:`ab`), ``"sq_sum"``
        (:math:`a^2+b^2`), ``"xy"`` (:math:`a^2+ab+b^2`, base.py's 'xy'), ``"sq_of_sum"``
        (:math:`(a+b)^2`, rec.py's 'xy'), or an integer-valued ``f(a, b)`` broadcasting over int64 arrays.

    Returns
    -------
    ndarray of int64, shape ``(p, p)``, entry ``[a, b]`` (first operand = row).

    References
    ----------
    Spec ``uniformity:task`` (§0).
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
    r"""Labels as the authors' code computes them: from the second operand's *token id* ``j + d``.

    .. math:: L^{\rm code}[a,b]=f(a,\,b+d)\bmod p

    With ``d = 0`` this equals :func:`label_table`; with ``d = 60`` (``str.py``) addition labels shift by
    60 (erratum uniformity-8).  ``p`` prime, ``d >= 0``.

    References
    ----------
    Spec ``uniformity:task`` (§0, code fact), ``uniformity:setup``.
    """
    p = _prime(p)
    d = V.integer_at_least(d, "d", 0)
    name = V.choice(op, "op", tuple(OPERATIONS))
    a = np.arange(p, dtype=np.int64)[:, None]
    b = np.arange(p, dtype=np.int64)[None, :] + d
    return np.mod(OPERATIONS[name](a, b), p).astype(np.int64)


@cites("uniformity:task")
def modular_table(p: int, operation: Any = "add") -> PairTable:
    """All p^2 ordered pairs and their labels: ``(a, b, op(a, b) mod p)``, each int64 of shape (p^2,).

    Row ``a * p + b`` holds the pair (a, b) (the order of :func:`grokclocks.sim.data.modular_addition_table`
    and of the papers' code, ``itertools.product(range(p), range(p))``).  Unlike :func:`label_table`,
    ``p`` need not be prime.

    Parameters
    ----------
    p : int >= 2
    operation : a name of :data:`OPERATIONS` or callable
        ``a + b``, ``a - b``, ``a * b``, ``a^2 + b^2``, ..., or ``f(a, b)`` on int64 arrays.

    Returns
    -------
    PairTable
        ``(a, b, labels)``, int64 ``(p^2,)``.

    References
    ----------
    ``uniformity:task``.
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
    """Token-index inputs (N, 2), or (N, 3) ``[a, b, =]`` with ``=`` the token ``p`` (transformer).

    References
    ----------
    ``uniformity:task``.
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
    """Concatenated one-hot inputs :math:`[e_a; e_b]` ``(N, 2p)``.

    References
    ----------
    ``uniformity:task``.
    """
    tok = token_inputs(a, b, p)
    X = np.zeros((tok.shape[0], 2 * p), dtype=dtype)
    rows = np.arange(tok.shape[0])
    X[rows, tok[:, 0]] = 1
    X[rows, p + tok[:, 1]] = 1
    return X


@cites("kramers:task")
def modadd_inputs(p: int) -> OneHotTable:
    r"""All :math:`p^2` modular-addition pairs as concatenated one-hots.

    Pair index :math:`i=a\,p+b`, input :math:`x_i=[e_a;e_b]\in\{0,1\}^{2p}`, label :math:`(a+b)\bmod p`.

    Returns
    -------
    OneHotTable
        ``(X, a, b, y)``: X (p², 2p) float64; a, b, y (p²,) int.

    References
    ----------
    ``kramers:task``.
    """
    p = integer_at_least(p, "p", 2)
    V.max_size(2.0 * p**3, "p", p)
    a, b, y = modular_table(p, "add")
    return OneHotTable(onehot_inputs(a, b, p, dtype=np.float64), a, b, y)


@cites("uniformity:setup", "uniformity:designs")
def token_ids(p: int, b_offset: int = 0, d_vocab: int | None = None) -> TokenLayout:
    r"""Vocabulary layout: token ids of the first operand (:math:`a`), the second (:math:`b+d`), the ``=`` id and ``d_vocab``.

    ``=`` is always ``d_vocab - 1`` (the code's ``config.d_vocab - 1``).  Default ``d_vocab = p + d + 1``:
    ``b_offset = 0`` gives the shared layout of rec/base (``d_vocab = p + 1``, ``=`` is ``p``);
    ``str.py`` uses ``d = 60`` with ``d_vocab = 170`` (ids ``d+p .. 168`` unused).  ``d_vocab`` must be
    at least ``p + d + 1``.

    Returns
    -------
    TokenLayout
        ``(a_ids, b_ids, equals_id, d_vocab)``: int arrays ``(p,)`` of the first- and second-operand token
        ids, the ``=`` token id and the vocabulary size.

    References: spec ``uniformity:setup`` (§9), ``uniformity:designs`` (§7).
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
    """``np.random.default_rng(seed).permutation(p*p)``: the order of every numpy random split here."""
    return np.random.default_rng(integer_at_least(seed, name, 0)).permutation(p * p)


@cites("uniformity:task")
def random_split_mask(p: int, seeds: int | Sequence[int], *, frac: float | None = None,
                      n_train: int | None = None) -> np.ndarray:
    """Random train masks over the p^2 pairs: ``np.random.default_rng(seed).permutation(p*p)``, first n_train.

    Give ``frac`` (``n_train = int(frac * p^2)``, the papers' code) or ``n_train``.  A sequence of
    seeds gives one mask per seed, shape (n_seeds, p^2); an int seed gives shape (p^2,).

    References
    ----------
    ``uniformity:task``.
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
    r"""Train / test pair indices: ``perm = default_rng(seed).permutation(p*p)``; train = ``perm[:n_train]``.

    :math:`n_{\rm train}=\lfloor\rho p^2\rfloor` (:func:`grokclocks.kramers.n_train`).

    Returns
    -------
    Split
        ``(train, test)``: flat pair indices ``a*p + b`` in permutation order.

    References
    ----------
    ``kramers:task``.
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
    """Hold out ``region`` (square :math:`a, b \\le k`; strip :math:`a \\le k`; random: nothing), split the rest."""
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
    r"""SQUARE split of Table 1 exactly as ``transformer/rec.py`` builds it.

    Held out: :math:`\{0\le a\le k,\ 0\le b\le k\}` (:math:`(k+1)^2` points).  The remaining pairs (row-major)
    are shuffled (``random.seed(seed); random.shuffle`` for ``shuffle="python"``, or
    ``numpy.random.default_rng(seed).permutation``) and the first ``int(frac * p**2)`` are the training
    set (30 % of the *full* grid; erratum uniformity-3); everything else is the test set.

    Parameters: ``p >= 2``, ``k`` in ``[0, p-1]``, ``frac`` in ``(0, 1]``, ``seed >= 0``.

    Returns
    -------
    Split
        ``(train, test)``: boolean ``(p, p)`` masks of :math:`T` and :math:`S`, complementary.

    References
    ----------
    Spec ``uniformity:designs`` (§7).
    """
    return _design(p, k, frac, seed, shuffle, "square")


@cites("uniformity:designs")
def strip_design(p: int, k: int, frac: float = 0.3, seed: int = 0, shuffle: str = "python") -> Split:
    r"""STRIP split of Table 1 exactly as ``transformer/str.py`` builds it.

    Held out: :math:`\{0\le a\le k,\ 0\le b<p\}` (:math:`k+1` full rows of the first operand); then as
    :func:`square_design`.  If the remainder is smaller than ``int(frac p^2)`` all of it is used and a
    warning is issued (STRIP k=67 at p=97: 2813 training points).

    References
    ----------
    Spec ``uniformity:designs`` (§7).
    """
    return _design(p, k, frac, seed, shuffle, "strip")


@cites("uniformity:designs")
def random_design(p: int, frac: float, seed: int = 0, shuffle: str = "python") -> Split:
    r"""Random split of ``base.py``: shuffle all :math:`p^2` pairs, the first ``int(frac p^2)`` are training.

    References: spec ``uniformity:designs`` (§7).
    """
    return _design(p, None, frac, seed, shuffle, "random")


@cites("uniformity:designs")
def designed_split(p: int, design: str, k: int | None = None, frac: float = 0.3, seed: int = 0,
                   shuffle: str = "python") -> Split:
    r"""Dispatch: ``design`` in ``"square"``, ``"strip"`` (need ``k``) or ``"random"``; returns ``(train, test)`` masks.

    References: spec ``uniformity:designs`` (§7).
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
    """Designed train mask (p^2,) of spec ``uniformity`` (SQUARE / STRIP held-out region), flattened.

    :func:`designed_split`'s train mask (the exact construction of the authors' code); row ``a * p + b``
    as in :func:`modular_table`.

    References
    ----------
    ``uniformity:designs``.
    """
    train, _ = designed_split(p, design, k)
    return np.asarray(train, dtype=bool).reshape(p * p)
