"""Label equivalence classes of Definition 3.1 (spec ``uniformity`` §0, §1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..citations import cites
from ..task import label_table

__all__ = ["class_sizes", "equivalence_classes"]


@cites("uniformity:def3.1")
def equivalence_classes(p: int, op: str | Callable[[Any, Any], Any] = "add") -> list[np.ndarray]:
    r"""Label classes of :math:`x\sim x'\iff f(x)\equiv f(x')\pmod p` (Definition 3.1).

    .. math:: [r] = \{x\in\mathbb Z_p^2 : f(x)\equiv r\}

    Returns
    -------
    list of ``p`` int64 arrays; element ``r`` has shape ``(|[r]|, 2)`` (rows ``(a, b)``, lexicographic);
    empty ``(0, 2)`` for labels not attained.

    References
    ----------
    Spec ``uniformity:def3.1`` (§1).
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
    r"""Sizes :math:`|[r]|` of the label classes, shape ``(p,)`` int64 (sum :math:`p^2`).

    Closed forms: add/sub :math:`p`; mul :math:`|[0]|=2p-1`, else :math:`p-1`; sq_sum with
    :math:`\epsilon=(\frac{-1}{p})`: :math:`|[0]|=p+(p-1)\epsilon`, else :math:`p-\epsilon`.

    References
    ----------
    Spec ``uniformity:def3.1`` (§1).
    """
    lab = label_table(p, op)
    return np.bincount(lab.ravel(), minlength=lab.shape[0]).astype(np.int64)
