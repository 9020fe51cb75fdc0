"""log(a / b) for positive arguments whose extremes the caller holds: the Arrhenius inversion and the ridge time."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _pointwise as PW

_LOG2_UP = 0.6932  # above log 2: |log fl(a/b)| <= log 2 wherever b/2 <= a <= 2b (rounding is monotone)
_MAX = float(np.finfo(np.float64).max)


def log_ratio(a: Any, b: Any, a_ext: tuple[float, float], b_ext: tuple[float, float]) -> Any:
    """`FL.log_quotient(a, b)` (the same value on every point) for a, b > 0 with extremes `a_ext`, `b_ext`.

    Where the extremes place every quotient in the normal range, the log of the quotient is taken on every point
    in place, and `FL.log_quotient` re-evaluates only the points whose log is within log 2 of 0 (where it takes
    ``log1p`` of the exact difference): no pass for its extremes or its near-1 test over all points.  ``a / 1``
    is `a` exactly: a scalar `b` of 1 divides nothing.  Otherwise, `FL.log_quotient` on all points.
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
    near = out <= _LOG2_UP
    near &= out >= -_LOG2_UP
    idx = np.flatnonzero(near)  # integer gathers: a boolean gather of a scattered 5 % costs 0.1 ms per 1e5
    if idx.size:
        # FL.log_quotient's near-1 form on these points (its own test: b/2 <= a <= 2b implies 1/2 <= fl(a/b)
        # <= 2, so every such point is among them; the others keep the log of the quotient, as there)
        av, bv = _gather(a, idx, out.shape), _gather(b, idx, out.shape)
        sel = (av <= 2.0 * bv) & (bv <= 2.0 * av)
        av, bv = (v[sel] if np.ndim(v) else v for v in (av, bv))
        out.reshape(-1)[idx[sel]] = np.log1p((av - bv) / bv)
    return out


def _gather(x: Any, idx: np.ndarray, shape: tuple[int, ...]) -> Any:
    """``x`` broadcast to `shape` at the flat indices `idx` (a number stays a number)."""
    if np.ndim(x) == 0:
        return x
    if np.shape(x) == shape:
        return np.asarray(x).reshape(-1)[idx]
    return np.broadcast_to(x, shape)[np.unravel_index(idx, shape)]
