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

This module is pure numpy; it is the home of the modular task's data conventions (issue 17 moves the
label tables, splits and encodings here).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._validate import DomainError, flag, max_size
from .citations import cites

__all__ = ["TRAIN_LEVEL", "TEST_LEVEL", "as_mask", "as_mask_stack", "flat_mask", "mask_indices",
           "mask_from_indices"]

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
