"""One engine for a scalar call and an array call, for every theory package (clocks, spectral, repulsion, ...).

An engine of a theory package is written once on NumPy ufuncs, which take Python floats as well as arrays and
give the same bits for both (``np.exp(x)`` on a float is the value ``np.exp`` gives that point inside an
array).  What differs between the two is only the bookkeeping: the extremes of a value (a reduction on an
array, the value itself on a float) and the careful form evaluated on the points that need it
(`patch`: fancy indexing on an array, an ``if`` on a float).  A scalar call then costs a few ufunc calls on
floats instead of the 0-d array machinery (1-5 µs per operation), and the array call and the scalar calls run
the same operations on every point.

The same idea as a namespace: an engine written with ``xp.where``, ``xp.frexp``, ``xp.errstate``, ... takes
``xp = grokclocks._floats.ops_of(*args)`` (``_floats.SCALAR`` on floats, ``_floats.ARRAY`` on arrays; the
double-double arithmetic and the late-time losses are written so).  This module holds the bookkeeping both
kinds of engine share.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import _floats as FL
from . import _validate as V


_FLOATS = (float, np.float64, int)
_MAX = float(np.finfo(np.float64).max)
_NUMBERS = (float, np.float64)


def scalars(*xs: Any) -> bool:
    """Whether every argument is one real number of a plain type (float, numpy float64 or int, not bool)."""
    return all(type(x) in _FLOATS for x in xs)


extrema = FL.extrema  # (min, max): two reductions on an array, the value itself on a number


def low(x: Any) -> float:
    """The minimum of `x` (one reduction on an array, the value itself on a number)."""
    return float(x.min()) if isinstance(x, np.ndarray) and x.ndim else float(x)


def high(x: Any) -> float:
    """The maximum of `x` (one reduction on an array, the value itself on a number)."""
    return float(x.max()) if isinstance(x, np.ndarray) and x.ndim else float(x)


def pick(cond: Any, yes: Any, no: Any) -> Any:
    """``np.where(cond, yes, no)`` on arrays; on one number (a Python or NumPy bool) the chosen value itself.

    The values are the same bits either way (a select computes nothing); on numbers it spares the 0-d array
    of ``np.where`` (~2.6 µs)."""
    if isinstance(cond, (bool, np.bool_)):
        return yes if cond else no
    return np.where(cond, yes, no)


def any_of(mask: Any) -> bool:
    """Whether any point of `mask` holds (the bool itself on a number, one reduction on an array)."""
    return bool(mask) if isinstance(mask, (bool, np.bool_)) else bool(mask.any())


def all_positive(x: Any) -> bool:
    """Whether every value of `x` is > 0: the comparison on a number, one reduction on an array (empty: True)."""
    if isinstance(x, np.ndarray):
        return x.size == 0 or float(x.min()) > 0
    return x > 0


def square(q: Any) -> Any:
    """``q * q``, in place on an array (the caller's own temporary: no fresh pages at 1e5 points); numpy's
    square of an array (``q ** 2``) is this product, a float's ``** 2`` is the C library's pow (it differed
    from numpy's square on 145 of 200,000 points)."""
    return np.multiply(q, q, out=q) if isinstance(q, np.ndarray) and q.ndim else q * q


# sqrt(x^2 + y^2) is within an ulp of the true hypot where neither square overflows and the larger is normal with
# room to spare (the smaller square's underflow then costs below 2^-114 of the sum); np.hypot, a scalar libm
# loop, costs 10x the three array operations (1.8 ms against 0.18 ms per 1e5 points)
_HYPOT_HI = 2.0**510
_HYPOT_LO = 2.0**-480


def hypot(x: Any, y: Any) -> Any:
    """sqrt(x² + y²) without spurious overflow or underflow: the three operations wherever the point's own numbers
    allow them (|x|, |y| ≤ 2^510 and max(|x|, |y|) ≥ 2^-480), ``np.hypot`` on the other points only.

    Which form a point takes depends on its own two numbers, so a scalar call and an array call give the same
    bits; the extremes of the arrays decide whether any point needs the check at all.
    """
    if not isinstance(x, np.ndarray) and not isinstance(y, np.ndarray):
        ax, ay = abs(x), abs(y)
        if ax <= _HYPOT_HI and ay <= _HYPOT_HI and max(ax, ay) >= _HYPOT_LO:
            return np.sqrt(x * x + y * y)
        return np.hypot(x, y)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # squares of the points hypot takes; NaN
        xlo, xhi = extrema(x)
        ylo, yhi = extrema(y)
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        x2 = np.multiply(x, x)
        y2 = np.multiply(y, y)
        out = np.add(x2, y2, out=into(y2, x2) if np.shape(y2) == shape else into(x2, y2) if np.shape(x2) == shape
                     else None)
        np.sqrt(out, out=out)
    # every point safe: each |x|, |y| <= 2^510 (NaN fails this, inf too) and no point with both below 2^-480
    below_x = xlo < _HYPOT_LO and xhi > -_HYPOT_LO  # some |x| may be below the floor
    below_y = ylo < _HYPOT_LO and yhi > -_HYPOT_LO
    if max(-xlo, xhi, -ylo, yhi) <= _HYPOT_HI and not (below_x and below_y):
        return out
    ax, ay = np.abs(x), np.abs(y)
    risky = (ax > _HYPOT_HI) | (ay > _HYPOT_HI) | (np.maximum(ax, ay) < _HYPOT_LO) | np.isnan(ax) | np.isnan(ay)
    return patch(out, risky, np.hypot, x, y)


def patch(out: Any, mask: Any, fn: Callable, *args: Any) -> Any:
    """`out` with ``fn(*args)`` on the points of `mask` only (`fn` sees those points' values).

    On numbers, ``fn(*args)`` where `mask` holds, else `out`.  On arrays (a number's `mask` then holds for
    every point), where few points need the form (under an eighth), `args` are broadcast to the shape of `out`
    and `fn` gets the masked 1-d values: no work on the points that do not need it.  Where an eighth or more
    of the points need it, `fn` runs on the whole (contiguous) arrays and its values are copied on the mask by
    a branch-free `putmask` (a boolean gather of a random eighth or more of the points costs more than the
    arithmetic: kl_gap_bounds at 1e5, 30 % near points, 4.1 -> 2.7 ms); the other points' values, and their
    floating-point flags, are dropped.  Either way each point gets the same operations as the number call.  A
    writeable float64 `out` of the full shape (the engine's own temporary) is written in place; anything else
    (a validated, read-only input) is copied first.  `fn` must be elementwise.
    """
    if not isinstance(mask, np.ndarray):
        if not (isinstance(out, np.ndarray) and out.ndim):  # a number's test
            return fn(*args) if mask else out
        mask = np.asarray(mask)  # one test for a whole array (a 0-d mask stands for every point)
    owned = isinstance(out, np.ndarray) and out.dtype == np.float64
    shape = out.shape if owned and out.shape == mask.shape else np.broadcast_shapes(np.shape(out), mask.shape)
    if not (owned and out.shape == shape and out.flags.writeable):
        out = np.array(np.broadcast_to(out, shape), dtype=np.float64)
    m = mask if mask.shape == shape else np.broadcast_to(mask, shape)
    k = np.count_nonzero(m)
    if 8 * k >= m.size and all(np.ndim(a) == 0 or a.flags.c_contiguous for a in args):
        # many points: the form on every point and a masked copy (`putmask` is branch-free where
        # `copyto(where=)` is not: 8 against 21 us for 37 % of 8192 points); values off the mask dropped
        with np.errstate(all="ignore"):
            v = fn(*args)
        if np.shape(v) == shape and isinstance(v, np.ndarray) and v.flags.c_contiguous and out.flags.c_contiguous:
            np.putmask(out, m, v)
        else:
            np.copyto(out, v, where=m)
    elif k and m.flags.c_contiguous and out.flags.c_contiguous:
        # few points: integer gathers of those points (a boolean gather walks the whole mask once per argument;
        # a number is repeated, not broadcast to the full shape first)
        idx = np.flatnonzero(m)
        out.reshape(-1)[idx] = fn(*(_take(a, idx, shape) for a in args))
    elif k:
        out[m] = fn(*(a[m] if np.shape(a) == shape else np.broadcast_to(a, shape)[m] for a in args))
    return out


def _take(a: Any, idx: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The values of `a` broadcast to `shape` at the flat indices `idx`, as a 1-d array (a number repeated)."""
    if np.ndim(a) == 0:
        return np.broadcast_to(np.asarray(a), idx.shape)
    if np.shape(a) == shape and a.flags.c_contiguous:
        return a.reshape(-1)[idx]
    return np.broadcast_to(a, shape)[np.unravel_index(idx, shape)]


def into(a: Any, *others: Any) -> Any:
    """`a` as the ``out=`` of an operation on `a` and `others` when it is an array of the full shape that the
    engine owns (writeable), else None (a number: a new value).  At 1e5 points a fresh temporary's page faults
    cost more than the operation itself."""
    if isinstance(a, np.ndarray) and a.ndim and a.flags.writeable and a.dtype == np.float64 \
            and all(np.ndim(o) == 0 or o.shape == a.shape or np.broadcast_shapes(a.shape, o.shape) == a.shape
                    for o in others):
        return a
    return None


def ordered(small: Any, big: Any, small_name: str, big_name: str) -> None:
    """`V.ordered` (big >= small element-wise, the same message): a comparison on numbers, one reduction where
    one side is a number and the other an array (its extreme), `V.ordered` otherwise or to report."""
    if type(small) is float and type(big) is float:
        if not big < small:
            return
    elif np.ndim(small) == 0 and isinstance(big, np.ndarray) and big.size:
        if float(big.min()) >= float(small):
            return
    elif np.ndim(big) == 0 and isinstance(small, np.ndarray) and small.size:
        if float(small.max()) <= float(big):
            return
    V.ordered(small, big, small_name, big_name)


def product(bases: list, powers: list, extrema: list | None = None) -> Any:
    r"""`FL.power_product`: :math:`\prod_ix_i^{a_i}` without a spurious overflow or underflow.

    For numbers the direct product in `FL.power_product`'s own number path (the same operations, the same
    bits).  For arrays with scalar powers, the direct product where `FL.product_stays_normal` proves it from the
    extremes of the bases (`extrema`, one (min, max) per base, where the caller holds them from its validation;
    else reduced here): the first path of `FL.power_product` without its per-call set-up (52 against ~15 µs on
    8192 points), each multiplication written into an array this call made (a factor of exactly 1 skipped:
    the product unchanged), never into a base.  Otherwise `FL.power_product`.  The caller sets the errstate
    (over and under ignored: a numpy float's overflow in the trial warns).
    """
    if not all(type(a) in _FLOATS for a in powers):
        return FL.power_product(bases, powers, extrema)
    if all(type(b) in _NUMBERS for b in bases):
        out = FL._number_product(bases, powers)
        return out if out is not None else float(FL.power_product(bases, powers))
    ext = extrema if extrema is not None else [FL.extrema(b) for b in bases]
    if not (all(np.size(b) for b in bases) and FL.product_stays_normal(ext, powers)):
        return FL.power_product(bases, powers, extrema)
    out, own = None, False
    for b, a in zip(bases, powers):
        f = _factor(b, float(a))
        if out is None:
            out = f
            own = f is not b and isinstance(f, np.ndarray) and f.ndim > 0
        elif np.ndim(f) == 0 and float(f) == 1.0:
            continue
        elif own and np.ndim(f) <= out.ndim and np.broadcast_shapes(out.shape, np.shape(f)) == out.shape:
            np.multiply(out, f, out=out)
        elif f is not b and isinstance(f, np.ndarray) and f.ndim \
                and np.broadcast_shapes(np.shape(out), f.shape) == f.shape:
            out, own = np.multiply(out, f, out=f), True  # into the new factor (x y = y x: the same bits)
        else:
            out = out * f
            own = isinstance(out, np.ndarray) and out.ndim > 0
    return out if own or not isinstance(out, np.ndarray) else np.array(out)


def _factor(b: Any, a: float) -> Any:
    """b**a as `FL.power_product` forms it: 1 and 2 as multiplications, -1 a division, 1/2 a square root, else pow."""
    return b * b if a == 2.0 else b if a == 1.0 else 1.0 / b if a == -1.0 else np.sqrt(b) if a == 0.5 \
        else np.power(b, a)


def log_quotient(a: Any, b: Any, bounds: tuple[float, float] | None = None, *,
                 extrema: tuple[tuple[float, float], tuple[float, float]] | None = None) -> Any:
    """`FL.log_quotient`: log(a / b) for a, b > 0 without overflow of a / b or cancellation for a ~ b.

    For two numbers the operations of its 0-d branch on floats (the same bits: ``log1p`` of the exact
    difference for b/2 <= a <= 2b, the log of the quotient where it is a normal double, log a - log b
    elsewhere), without the broadcast and 0-d arrays (~10 µs).  For arrays, where the caller knows `bounds`
    (lo, hi) on every quotient a / b placing them all away from [1/2, 2] and inside the normal range, the log
    of the quotient (the value `FL.log_quotient` gives there, without its passes for the other forms).  Where
    the caller holds the `extrema` ``((a_min, a_max), (b_min, b_max))`` (e.g. from its validation), they decide
    the form: every point near 1 (b/2 <= a <= 2b by exact tests) ``log1p`` of the exact difference in place;
    every quotient normal, the log of the quotient in place and `FL.log_quotient`'s near-1 step on the points
    within log 2 of 0 (``a / 1`` is `a`: a number `b` of 1 divides nothing); else `FL.log_quotient`.  The same
    value on every point as `FL.log_quotient`.  The caller sets the errstate.
    """
    if type(a) in _NUMBERS and type(b) in _NUMBERS:
        if a <= 2.0 * b and b <= 2.0 * a:
            return np.log1p((a - b) / b)
        q = a / b
        return np.log(q) if FL.TINY <= q <= _MAX else np.log(a) - np.log(b)
    if extrema is not None:
        (a_lo, a_hi), (b_lo, b_hi) = extrema
        if a_lo >= 0.5 * b_hi and a_hi <= 2.0 * b_lo and np.ndim(a) + np.ndim(b):
            d = np.subtract(a, b)  # exact (Sterbenz) on every point
            d = np.divide(d, b, out=d)
            return np.log1p(d, out=d)
        bounds = (a_lo / b_hi, a_hi / b_lo)  # bounds on every fl(a / b): rounding is monotone
        if FL.TINY <= bounds[0] and bounds[1] <= _MAX and not (bounds[0] > 2.0 or bounds[1] < 0.5):
            unit = np.ndim(b) == 0 and float(b) == 1.0
            q = a if unit else np.divide(a, b)
            out = np.log(q) if unit else np.log(q, out=into(q))
            if np.ndim(out):
                sign = 1 if a_lo >= b_hi else -1 if a_hi <= b_lo else 0  # a >= b everywhere: logs >= 0
                return FL._near_one(out, a, b, sign)  # the careful form on the points within log 2 of 0
    if bounds is not None and (bounds[0] > 2.0 or bounds[1] < 0.5) and FL.TINY <= bounds[0] and bounds[1] <= _MAX:
        q = np.divide(a, b)
        return np.log(q, out=into(q))
    return FL.log_quotient(a, b)


def result(x: Any) -> Any:
    """A Python float for a number or a 0-d array, the array otherwise (scalars in, floats out)."""
    if isinstance(x, np.ndarray) and x.ndim:
        return x
    return float(x)


LOG_MAX = FL.LOG_MAX
INF = math.inf
