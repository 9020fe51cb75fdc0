"""Label equivalence classes of Definition 3.1 (spec `uniformity` §0, §1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..citations import cites
from ..task import label_table

__all__ = ["class_sizes", "equivalence_classes"]


@cites("uniformity:def3.1")
def equivalence_classes(p: int, op: str | Callable[[Any, Any], Any] = "add") -> list[np.ndarray]:
    r"""Label equivalence classes [r] of Definition 3.1: x ∼ x′ if and only if f(x) ≡ f(x′) (mod p).

    .. math:: [r] = \{x\in\mathbb Z_p^2 : f(x)\equiv r\}

    In words: class r is the set of pairs x = (a, b) of ℤ_p² whose label f(a, b) mod p is r.

    Parameters
    ----------
    p : int
        The modulus p, a prime ≤ `MAX_MODULUS` (2¹⁴).
    op : str or callable, optional
        The operation f: a name of `OPS` (`"add"` by default, `"sub"`, `"mul"`, `"sq_sum"`, `"xy"`,
        `"sq_of_sum"`), or an integer-valued function f(a, b) that broadcasts over int64 arrays.

    Returns
    -------
    list of numpy.ndarray
        p int64 arrays; element r has shape (|[r]|, 2) and holds the pairs (a, b) of class r as rows,
        in lexicographic order (shape (0, 2) for a label that is not attained).

    Raises
    ------
    DomainError
        If `p` is not a prime ≤ `MAX_MODULUS`, or `op` is not a known name or does not return integer
        values of shape (p, p).

    References
    ----------
    Spec ID `uniformity:def3.1` (paper Definition 3.1).
    """
    lab = label_table(p, op)
    p = lab.shape[0]
    order = np.argsort(lab, axis=None, kind="stable")  # stable: lexicographic within a class
    flat = lab.ravel()[order]
    bounds = np.searchsorted(flat, np.arange(p + 1))
    ab = np.stack(np.unravel_index(order, lab.shape), axis=1).astype(np.int64)
    return [ab[bounds[r]:bounds[r + 1]] for r in range(p)]


@cites("uniformity:def3.1")
def class_sizes(p: int, op: str | Callable[[Any, Any], Any] = "add") -> np.ndarray:
    r"""Sizes |[r]| of the label classes of Definition 3.1, one per label r = 0, …, p − 1 (they sum to p²).

    Closed forms: for add and sub every class has p pairs; for mul |[0]| = 2p − 1 and p − 1 otherwise;
    for sq_sum, with ϵ = (−1/p) the Legendre symbol, |[0]| = p + (p − 1)·ϵ and p − ϵ otherwise.

    Parameters
    ----------
    p : int
        The modulus p, a prime ≤ `MAX_MODULUS` (2¹⁴).
    op : str or callable, optional
        The operation f: a name of `OPS` (`"add"` by default, `"sub"`, `"mul"`, `"sq_sum"`, `"xy"`,
        `"sq_of_sum"`), or an integer-valued function f(a, b) that broadcasts over int64 arrays.

    Returns
    -------
    numpy.ndarray
        int64 array of shape (p,): entry r is the number of pairs with label r.

    Raises
    ------
    DomainError
        If `p` is not a prime ≤ `MAX_MODULUS`, or `op` is not a known name or does not return integer
        values of shape (p, p).

    References
    ----------
    Spec ID `uniformity:def3.1` (paper Definition 3.1).
    """
    lab = label_table(p, op)
    return np.bincount(lab.ravel(), minlength=lab.shape[0]).astype(np.int64)
