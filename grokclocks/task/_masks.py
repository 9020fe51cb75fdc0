r"""Training masks: one training set in any spelling (bool or 0/1 mask, flat mask, pair indices, pair rows)
as the canonical boolean (p, p) mask, stacks of them, and back to flat masks and indices.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import DomainError, flag, max_size
from ..citations import cites


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
    from .._validate import integer_at_least

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
