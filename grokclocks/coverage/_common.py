"""Argument checks shared by the coverage functions (metric, labels, radius, masks via grokclocks.task)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validate as V
from .. import task as _task
from .._validate import DomainError
from ..task import OPERATIONS

__all__ = ["OPS", "METRICS"]


OPS = OPERATIONS
"""The operations f(a, b) of `label_table` by name, the same dict as `grokclocks.task.OPERATIONS`.

Keys `"add"` (a + b), `"sub"` (a − b), `"mul"` (a·b), `"sq_sum"` (a² + b²), `"xy"` (a² + a·b + b², the
authors' base.py), `"sq_of_sum"` ((a + b)², the authors' rec.py); each value is a function of two int64
arrays, reduced mod p by `label_table`."""


METRICS = ("torus", "grid")
"""The values of the `metric` argument of the distance and coverage functions.

`"torus"`: the Manhattan distance on the torus (Z/pZ)², each coordinate difference taken as
min(|a − b|, p − |a − b|); `"grid"`: the plain Manhattan distance |a₁ − b₁| + |a₂ − b₂| on
{0, …, p − 1}² (no wrap-around)."""


def _metric(metric: Any) -> str:
    return V.choice(metric, "metric", METRICS)


def _mask(mask: Any, name: str = "train_mask", p: int | None = None) -> np.ndarray:
    """A training set in any form of `grokclocks.task.as_mask`, as bool `(p, p)`."""
    return _task.as_mask(mask, p, name=name)


def _p_of(labels: Any) -> int | None:
    """`p` of a square label table (to read a mask given as pair indices), else None."""
    shape = np.shape(labels)
    return int(shape[0]) if len(shape) == 2 and shape[0] == shape[1] and shape[0] >= 2 else None


def _labels(labels: Any, shape: tuple[int, int]) -> np.ndarray:
    lab = np.asarray(labels)
    if lab.shape != shape:
        raise DomainError(f"labels must have the mask's shape {shape} (got {lab.shape})")
    if not np.issubdtype(lab.dtype, np.integer):
        if np.issubdtype(lab.dtype, np.floating) and np.all(np.isfinite(lab)) and np.all(lab == np.round(lab)):
            lab = lab.astype(np.int64)
        else:
            raise DomainError(f"labels must be integers (got dtype {lab.dtype})")
    return lab.astype(np.int64)


def _radius(n: Any, name: str = "n") -> Any:
    """An integer >= 1 or math.inf (returned as float); an array of them as a float64 array."""
    if np.ndim(n) == 0:
        if isinstance(n, (float, np.floating)) and math.isinf(n) and n > 0:
            return math.inf
        return float(V.integer_at_least(n, name, 1))
    a = V.as_float_array(n, name, allow_inf=True)
    bad = ~((a == math.inf) | ((a >= 1.0) & (a == np.floor(a))))
    if bad.any():
        raise DomainError(f"{name} must be integers >= 1 or inf (got {float(a[bad].flat[0])!r})")
    return a


def _share_below(d: np.ndarray, n: Any, total: int) -> Any:
    """#{d < n} / total: a float for a radius, a float64 array for an array of radii (the counts of one sorted
    copy of d, the same integers divided the same way)."""
    if np.ndim(n) == 0:
        return float(np.count_nonzero(d < n)) / total
    return np.searchsorted(np.sort(d, axis=None), n, side="left").astype(np.float64) / total


def _test_mask(train: np.ndarray, test_mask: Any) -> np.ndarray:
    if test_mask is None:
        s = ~train
    else:
        s = _mask(test_mask, "test_mask", train.shape[0])
        if s.shape != train.shape:
            raise DomainError(f"test_mask must have the train mask's shape {train.shape} (got {s.shape})")
    if not s.any():
        raise DomainError("test set must not be empty (no test points)")
    return s
