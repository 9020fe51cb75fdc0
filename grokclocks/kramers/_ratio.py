"""log(a / b) for positive arguments whose extremes the caller holds: the Arrhenius inversion and the ridge time."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _pointwise as PW

_MAX = float(np.finfo(np.float64).max)


def log_ratio(a: Any, b: Any, a_ext: tuple[float, float], b_ext: tuple[float, float]) -> Any:
    """`FL.log_quotient(a, b)` (the same value on every point) for a, b > 0 with extremes `a_ext`, `b_ext`.

    Where the extremes place every quotient in the normal range, the log of the quotient is taken on every point
    in place, and `FL.log_quotient`'s near-1 step re-evaluates the points whose log is within log 2 of 0 (where it
    takes ``log1p`` of the exact difference): no pass for its extremes.  ``a / 1`` is `a` exactly: a scalar `b`
    of 1 divides nothing.  Otherwise, `FL.log_quotient` on all points.
    """
    lo, hi = a_ext[0] / b_ext[1], a_ext[1] / b_ext[0]  # bounds on every fl(a / b): rounding is monotone
    if a_ext[0] >= 0.5 * b_ext[1] and a_ext[1] <= 2.0 * b_ext[0] and np.ndim(a) + np.ndim(b):
        # every point has b/2 <= a <= 2b (exact tests; 2 b_ext[0] is finite there): FL.log_quotient's near-1
        # form on all of them, in place (its log1p of the exact difference)
        d = np.subtract(a, b)
        d = np.divide(d, b, out=d)
        return np.log1p(d, out=d)
    if not (FL.TINY <= lo and hi <= _MAX) or (lo >= 0.5 and hi <= 2.0):  # some far, or every point near 1
        return FL.log_quotient(a, b)
    if lo > 2.0 or hi < 0.5:
        return PW.log_quotient(a, b, (lo, hi))
    unit = np.ndim(b) == 0 and float(b) == 1.0
    q = a if unit else np.divide(a, b)
    out = np.log(q) if unit else np.log(q, out=PW.into(q))
    if np.ndim(out) == 0:
        return FL.log_quotient(a, b)
    # FL.log_quotient's near-1 form on the points within log 2 of 0 (the others keep the log of the quotient, as there)
    return FL._near_one(out, a, b)
