"""Clocks: constants and argument checks shared by the clocks modules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validate as V


_LN2 = math.log(2.0)
# Snap a real to the nearest integer before ceil() when this close (floating noise must not add a step).
_SNAP_ABS = 1e-9


# ============================================================================ argument checks


def _n_classes(k: Any) -> int:
    return V.count(k, "n_classes", 2)


def _theta(theta: Any, scalar: bool = False) -> Any:
    """theta checked in (1/2, 1): a float64 array, or a Python float with `scalar`."""
    try:  # the common case: one check on the extremes the conversion takes (no masks)
        return V.in_open_interval(theta, "theta", 0.5, 1.0, scalar=scalar)
    except V.DomainError:
        pass  # the message below (the domain written (1/2, 1), the first bad entry)
    a = V.as_float_array(theta, "theta", scalar=scalar)
    if scalar:
        if not 0.5 < a < 1.0:
            raise V.DomainError(f"theta must be in (1/2, 1) for the polynomial clock (got {a!r})")
        return a
    bad = (a <= 0.5) | (a >= 1.0)
    if np.any(bad):
        raise V.DomainError(
            f"theta must be in (1/2, 1) for the polynomial clock (got {float(a[bad].flat[0]) if a.ndim else float(a)!r})")
    return a


_flag = V.flag


def _is_plus_zero(x: Any) -> bool:
    """Whether x is the number +0 (a float or a 0-d array): t - x = t and y + x = y (y >= +0) bit for bit, so an
    engine may leave that pass out."""
    return (type(x) is float or np.ndim(x) == 0) and x == 0.0 and math.copysign(1.0, x) > 0.0


def _labels(labels: Any, n: int, k: int) -> np.ndarray:
    lab = V.index_array(labels, "labels", k)
    if lab.ndim != 1 or lab.shape[0] != n:
        raise V.DomainError(f"labels must be a 1-D array of length {n} (got shape {lab.shape})")
    return lab


def _logits(logits: Any) -> np.ndarray:
    z = V.as_float_array(logits, "logits")
    if z.ndim != 2:
        raise V.DomainError(f"logits must be a 2-D array (n, n_classes) (got shape {z.shape})")
    if z.shape[1] < 2:
        raise V.DomainError(f"logits must have n_classes >= 2 columns (got {z.shape[1]})")
    return z


def _int_p(p: Any) -> int:
    return V.integer_at_least(p, "p", 2)
