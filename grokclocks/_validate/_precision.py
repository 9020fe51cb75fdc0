"""Round-off tolerances in the precision of the caller's dtype.

A tolerance such as "probabilities sum to 1" scales with the machine epsilon of the caller's floating
dtype, so float32 or float16 input is judged at its own precision.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def input_eps(x: Any) -> float:
    """Machine epsilon of the caller's floating dtype (float64's for integers, lists and scalars).

    Tolerances such as "probabilities sum to 1" scale with it, so float32 or float16 input is
    judged at its own precision.

    Parameters
    ----------
    x : object
        The caller's value; only its `dtype` (if any) is read.

    Returns
    -------
    float
        `numpy.finfo(dtype).eps` of a floating dtype, else 2⁻⁵² (float64's).
    """
    dt = getattr(x, "dtype", None)
    if dt is not None and np.issubdtype(dt, np.floating):
        return float(np.finfo(dt).eps)
    return float(np.finfo(np.float64).eps)


def roundoff_tol(x: Any, n: int = 1, *, floor: float = 0.0) -> float:
    """Relative round-off allowance for a quantity computed from `n` terms in the caller's dtype.

    The allowance is max(`floor`, 8·n·eps) with eps = `input_eps(x)`.

    Parameters
    ----------
    x : object
        The caller's value, whose dtype sets eps.
    n : int
        Number of terms, ≥ 1 (smaller values count as 1); default 1.
    floor : float
        A lower bound that keeps a float64 tolerance that was already looser; default 0.

    Returns
    -------
    float
        The relative tolerance.
    """
    return max(floor, 8.0 * max(int(n), 1) * input_eps(x))
