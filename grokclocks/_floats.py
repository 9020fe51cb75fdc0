"""Float64 building blocks that keep a formula accurate over the whole double range.

* :func:`power_product` -- :math:`\\prod_i x_i^{a_i}` without a spurious overflow or underflow of an
  intermediate factor (``c**2 * gap**1.5`` with ``c = 1e200``, ``gap = 1e-300`` is ``1e-50``, not
  ``inf * 0``);
* :func:`log_expm1` -- :math:`\\log(e^x-1)` for :math:`x>0` (``log(expm1(x))`` overflows past 709.78);
* :func:`exp_or_inf` -- ``math.exp`` that returns ``inf`` where the double overflows instead of raising;
* double-double arithmetic on arrays (`dd_two_sum`, `dd_two_prod`, `dd_mul`, `dd_div`, `dd_sqrt`,
  `dd_exp`): a value carried as an unevaluated sum hi + lo of two doubles, ~106 bits, for an exponent
  whose own rounding would otherwise cost |x| ulps of e^x.

Accuracy (measured against mpmath at 40 digits): direct product <= 2.7e-16 relative (c^2 d^q, 2e4
points); the integer-power path is exact up to the rounding of each mantissa product (<= 3 ulp for 4
factors); the log-space path (non-integer powers, only where the direct product leaves the normal
range) has relative error ``~ eps * sum |a_i log x_i|``, the condition number of the product in its
exponents: measured <= 1.1e-13 for c^2 d^q with c, d in [1e-300, 1e300] and a normal result.
"""

from __future__ import annotations

import math
from fractions import Fraction
from collections.abc import Sequence
from typing import Any

import numpy as np


TINY = float(np.finfo(np.float64).tiny)
LOG_MAX = math.log(float(np.finfo(np.float64).max))  # 709.782712893384: exp(x) overflows beyond

__all__ = ["TINY", "LOG_MAX", "power_product", "product_stays_normal", "log_expm1", "exp_or_inf", "two_product", "one_minus_product",
           "signed_power_sum", "scaled_norm", "log_quotient", "dd_two_sum", "dd_two_prod", "dd_mul", "dd_div",
           "dd_sqrt", "dd_exp", "bracketed_root", "ARRAY", "SCALAR", "ops_of", "extrema", "blockwise", "BLOCK"]


def _normal(x: np.ndarray) -> np.ndarray:
    return np.isfinite(x) & (np.abs(x) >= TINY)


_MAX = float(np.finfo(np.float64).max)


def _power(x: np.ndarray, a: Any) -> np.ndarray:
    """x**a with the common integer and half powers as one arithmetic operation (the same correctly rounded
    value as ``np.power``, 5-20x faster)."""
    if np.ndim(a) == 0:
        a = float(a)
        if a == 1.0:
            return x
        if a == -1.0:
            return 1.0 / x
        if a == 2.0:
            return x * x
        if a == 0.5:
            return np.sqrt(x)
        return np.power(x, a)
    # an array of powers: the same operation on each point as a scalar power would take (numpy's vectorised pow
    # differs from sqrt by up to 2 ulp at 0.5: a scalar call and an array call would disagree)
    a = np.asarray(a, dtype=np.float64)
    out = np.power(x, a)
    twice = a + a  # 2, -2, 4, 1 at the four special powers: integers (one test finds whether any point has one)
    if (twice == np.round(twice)).any():
        for v, form in ((1.0, _same), (-1.0, _reciprocal), (2.0, _square), (0.5, np.sqrt)):
            at = a == v
            if at.any():
                out = np.where(at, form(x), out)
    return out


def _same(x: Any) -> Any:
    return x


def _reciprocal(x: Any) -> Any:
    return 1.0 / x


def _square(x: Any) -> Any:
    return x * x


def _extrema(x: Any) -> tuple[float, float]:
    """(min, max) of an array or a number, as floats: two reductions on an array, the value itself on a number
    (an empty array: (1, 1), a value every range test of a careful form passes)."""
    if not isinstance(x, np.ndarray) or x.ndim == 0:
        v = float(x)
        return v, v
    if x.size == 0:
        return 1.0, 1.0
    return float(x.min()), float(x.max())


_LOG2_TINY = math.log2(TINY)  # -1022
_LOG2_MAX = math.log2(float(np.finfo(np.float64).max))  # 1024 - 1.6e-16


def product_stays_normal(extrema: Sequence[tuple[float, float]], powers: Sequence[Any]) -> bool:
    r"""Whether every :math:`x_i^{a_i}` and every partial product of them is a normal double, from bounds alone.

    With :math:`0<\ell_i\le x_i\le h_i` and scalar :math:`a_i`, :math:`\log_2` of any product of a subset of
    the factors (in any order) lies between :math:`\sum_i\min(0,a_i\log_2\ell_i,a_i\log_2h_i)` and
    :math:`\sum_i\max(0,a_i\log_2\ell_i,a_i\log_2h_i)`; both are required one binade inside the normal range
    (a margin far above the rounding of the logarithms and of ``pow``).  Then the direct product is accurate
    to a few ulp (each operation correctly rounded, no subnormal or infinite step).  ``False`` (no proof, not
    a disproof) for a non-positive or non-finite bound or an array power.

    Parameters
    ----------
    extrema : sequence of (float, float)
        :math:`(\ell_i, h_i)`, e.g. the minimum and maximum of each base.
    powers : sequence of float
        The exponents :math:`a_i`, scalars.

    Returns
    -------
    bool
        ``True`` if the bounds prove every factor and partial product normal.
    """
    low = high = 0.0
    for (lo, hi), a in zip(extrema, powers):
        if np.ndim(a) != 0 or not (0.0 < lo <= hi < math.inf):
            return False
        a = float(a)
        u, v = a * math.log2(lo), a * math.log2(hi)
        low += min(0.0, u, v)
        high += max(0.0, u, v)
    return low >= _LOG2_TINY + 1.0 and high <= _LOG2_MAX - 1.0


def power_product(bases: Sequence[Any], powers: Sequence[Any],
                  extrema: Sequence[tuple[float, float] | None] | None = None) -> np.ndarray:
    r""":math:`\prod_ix_i^{a_i}` for positive finite :math:`x_i` (arrays broadcast), real :math:`a_i`.

    The direct product is used where every factor and every partial product is a normal double (then
    it is accurate to a few ulp); elsewhere, with all :math:`a_i` integers, the binary exponents are
    added exactly (``frexp``/``ldexp``: the result is ``inf`` or ``0`` only if the true value is beyond
    the double range), otherwise the product is evaluated as :math:`\exp\sum_ia_i\log x_i`.

    Numbers (Python or NumPy floats, ints) with scalar powers take the direct product on floats -- the
    same operations in the same order as on an array, so the same bits -- and a ``numpy.float64`` comes
    back; an array result is a new array (never a base), formed in place: one fresh array of the
    broadcast shape where the direct product serves every point.  `extrema`, where given, holds for each
    base its (min, max) as the caller already reduced them (an entry None: reduced here), so that the
    proof of the direct path costs no second pass over an array.
    """
    if _all_numbers(bases) and _all_numbers(powers):
        out = _number_product(bases, powers)
        if out is not None:
            return np.float64(out)
    xs = [np.asarray(x, dtype=np.float64) for x in bases]
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        shape = _common_shape([x.shape for x in xs] + [np.shape(a) for a in powers])
        bounds = [_extrema(x) if extrema is None or extrema[i] is None else extrema[i] for i, x in enumerate(xs)]
        if product_stays_normal(bounds, powers):
            # the cheapest proof: two reductions per array base, the rest on scalars
            direct = _direct_product(xs, powers, shape)
            if direct.shape == shape and not any(direct is x for x in xs):
                return direct  # a new array already (no copy)
            return np.array(np.broadcast_to(direct, shape), dtype=np.float64)
        # fast path: every factor and partial product a normal double, decided by min/max reductions (the
        # bases are positive); integer powers 1, -1, 2 as one multiplication or division (correctly rounded,
        # as pow is), 0.5 as sqrt
        direct, normal = None, True
        for x, a in zip(xs, powers):
            f = _power(x, a)
            direct = f if direct is None else direct * f
            if normal and f.size:
                normal = (float(f.min()) >= TINY and float(f.max()) <= _MAX
                          and float(np.min(direct)) >= TINY and float(np.max(direct)) <= _MAX)
        direct = np.broadcast_to(direct, shape) if direct is not None else np.ones(shape)
        if normal:
            return np.array(direct, dtype=np.float64)
        direct = np.ones(shape)
        ok = np.ones(shape, dtype=bool)
        for x, a in zip(xs, powers):
            f = _power(x, a)  # each point's factor as on the other paths and in a number call
            direct = direct * f
            ok &= _normal(f) & _normal(direct)
        if np.all(ok):
            return direct
        # each point by its own powers: exact binary exponents where all its powers are integers in [-4, 4],
        # logarithms elsewhere (an array of powers mixes both; a number call decides the same way)
        pw = [np.asarray(a, dtype=np.float64) for a in powers]
        ints = np.ones(shape, dtype=bool)
        for a in pw:
            ints &= (a == np.round(a)) & (np.abs(a) <= 4)
        fallback = None
        if ints.any():
            mant = np.ones(direct.shape)
            expo = np.zeros(direct.shape, dtype=np.int64)
            for x, a in zip(xs, pw):
                m, e = np.frexp(x)
                # m in [1/2, 1): m**a in [1/16, 16], no over/underflow; numpy's power ufunc with a scalar exponent,
                # as a number call takes it (a NumPy float's ** is the C library's pow, and numpy's loop for an
                # array of exponents rounds differently: both differed from it by an ulp)
                if a.ndim == 0:
                    mant = mant * np.power(m, float(a))
                    expo = expo + int(a) * e
                else:
                    ai = np.broadcast_to(np.where(ints, a, 0.0), shape)
                    mb = np.broadcast_to(m, shape)
                    f = np.ones(shape)
                    for v in np.unique(ai).tolist():  # at most 9 integer powers
                        if v != 0.0:
                            at = ai == v
                            f[at] = np.power(mb[at], v)
                    mant = mant * f
                    expo = expo + ai.astype(np.int64) * e
                mant, e2 = np.frexp(mant)
                expo = expo + e2
            far = np.clip(expo, -2200, 2200)  # ldexp saturates to 0 / inf well before +-2200
            fallback = np.ldexp(mant, far.astype(np.int64))
        if not ints.all():
            logs = sum(a * np.log(x) for x, a in zip(xs, pw))
            fallback = np.exp(logs) if fallback is None else np.where(ints, fallback, np.exp(logs))
    return np.where(ok, direct, fallback)


def _common_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The broadcast shape: the one non-empty shape where the others are () (no call into numpy), else
    ``np.broadcast_shapes``."""
    full = [s for s in shapes if s != ()]
    if all(s == full[0] for s in full[1:]):
        return full[0] if full else ()
    return np.broadcast_shapes(*shapes)


_NUMBER_TYPES = (float, int, np.float64)  # bool is not among them (type(True) is bool)


def _all_numbers(values: Sequence[Any]) -> bool:
    for v in values:
        if type(v) not in _NUMBER_TYPES:
            return False
    return True


def _number_product(bases: Sequence[Any], powers: Sequence[Any]) -> float | None:
    """The direct product of numbers as `power_product` forms it on an array (`_power`'s operations, left to
    right), or None where a base, a factor or a partial product is not a normal double (the array path then
    decides, on 0-d arrays).  A non-integer power is taken by numpy's ``power`` ufunc on the float (the loop
    an array runs), only where ``|a log2 x|`` keeps the factor far inside the normal range (no warning)."""
    out = None
    for x, a in zip(bases, powers):
        x = float(x)
        if not TINY <= x <= _MAX:
            return None
        a = float(a)
        if a == 1.0:
            f = x
        elif a == -1.0:
            f = 1.0 / x
        elif a == 2.0:
            f = x * x
        elif a == 0.5:
            f = math.sqrt(x)  # correctly rounded, as np.sqrt
        elif abs(a * math.log2(x)) < 1000.0:
            f = float(np.power(x, a))
        else:
            return None
        if not TINY <= f <= _MAX:
            return None
        out = f if out is None else out * f
        if not TINY <= out <= _MAX:
            return None
    return out


def _direct_product(xs: list[np.ndarray], powers: Sequence[Any], shape: tuple[int, ...]) -> Any:
    """The product of the factors ``_power(x, a)``, left to right, each multiplication written into an array this
    call made wherever one of the broadcast shape is at hand (at 1e5 points a second fresh array costs more in
    page faults than the arithmetic: the heap is trimmed when both are freed).  A factor of exactly 1 (a 0-d
    base 1, e.g. n_params = 1) is skipped: the product unchanged, one pass saved."""
    direct: Any = None
    own = False  # whether `direct` is an array this call made (then written in place)
    for x, a in zip(xs, powers):
        if own and x.shape == shape and x.size > BLOCK and np.ndim(a) == 0 and float(a) != 1.0 \
                and x.flags.c_contiguous and direct.flags.c_contiguous:
            # a factor that would be a second fresh array (1/x, x*x, ...): formed block by block into a small
            # temporary and multiplied into the product (the same operations on every point)
            d, xf = direct.reshape(-1), x.reshape(-1)
            for i in range(0, d.size, BLOCK):
                blk = d[i:i + BLOCK]
                np.multiply(blk, _power(xf[i:i + BLOCK], a), out=blk)
            continue
        f = _power(x, a)
        if direct is None:
            direct, own = f, f is not x and isinstance(f, np.ndarray) and f.shape == shape and f.ndim > 0
            continue
        if f.ndim == 0 and float(f) == 1.0:
            continue
        if own:
            np.multiply(direct, f, out=direct)
        elif f is not x and isinstance(f, np.ndarray) and f.ndim and f.shape == shape:
            direct = np.multiply(direct, f, out=f)  # x*y == y*x exactly: the same bits
            own = True
        else:
            direct = direct * f
            own = isinstance(direct, np.ndarray) and direct.ndim > 0 and direct.shape == shape
    return direct


def log_expm1(x: Any) -> np.ndarray:
    r""":math:`\log(e^x-1)`, :math:`x>0`: ``log(expm1(x))`` for :math:`x<1`, :math:`x+\mathrm{log1p}(-e^{-x})` above.

    Switch at x = 1 (measured against mpmath, 2e4 log-uniform points each side): x in [1e-3, 1):
    absolute error <= 1.2e-16 (relative 6e-13 only next to the zero of the value at x = ln 2, where any
    evaluation is ill-conditioned); x in [1, 700]: relative error <= 2.0e-16.  The second branch never
    overflows (``expm1`` does past 709.78).
    """
    a = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        small = np.log(np.expm1(np.minimum(a, 1.0)))
        large = a + np.log1p(-np.exp(-np.maximum(a, 1.0)))
    return np.where(a < 1.0, small, large)


def bracketed_root(f, lo: Any, hi: Any, *, xtol: float = 0.0, rtol: float = 4e-16,
                   maxiter: int = 200) -> np.ndarray:
    r"""Roots of a monotone function, for all points at once: the Illinois variant of regula falsi in lockstep.

    ``f(x, idx)`` evaluates the function at ``x`` (1-d) for the points ``idx``; ``[lo, hi]`` must bracket a
    sign change of every point (``f(lo) * f(hi) <= 0``; either end may be the root). Each step is the secant
    of the bracket, with the retained end's value halved when the same end is kept twice (superlinear,
    order ≈ 1.44, and never slower than bisection by more than a factor ~2); a bisection step is taken where the
    secant falls outside the bracket or on an end. A point stops when its bracket is below
    ``xtol + rtol·|x|`` or ``f`` vanishes; each point iterates on its own numbers only (an array call gives the
    scalar calls' roots bit for bit). Returns the final estimates (the secant point of the last bracket).
    """
    a = np.array(lo, dtype=np.float64, copy=True).reshape(-1)
    b = np.array(hi, dtype=np.float64, copy=True).reshape(-1)
    idx_all = np.arange(a.size)
    fa = np.asarray(f(a, idx_all), dtype=np.float64)
    fb = np.asarray(f(b, idx_all), dtype=np.float64)
    x = np.where(fa == 0.0, a, b)
    side = np.zeros(a.size, dtype=np.int8)  # which end was kept last: -1 a, +1 b
    act = np.flatnonzero((fa != 0.0) & (fb != 0.0))
    for _ in range(maxiter):
        if act.size == 0:
            break
        aa, bb, ga, gb = a[act], b[act], fa[act], fb[act]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            xs = bb - gb * (bb - aa) / (gb - ga)
        mid = 0.5 * (aa + bb)
        lo_, hi_ = np.minimum(aa, bb), np.maximum(aa, bb)
        xs = np.where(np.isfinite(xs) & (xs > lo_) & (xs < hi_), xs, mid)
        fx = np.asarray(f(xs, act), dtype=np.float64)
        x[act] = xs
        same_a = np.sign(fx) == np.sign(ga)  # the root is between xs and b: replace a
        sd = side[act]
        # Illinois: b kept twice in a row (a replaced twice) -> halve f(b); and symmetrically
        gb = np.where(same_a & (sd == 1), 0.5 * gb, gb)
        ga = np.where(~same_a & (sd == -1), 0.5 * ga, ga)
        a[act] = np.where(same_a, xs, aa)
        fa[act] = np.where(same_a, fx, ga)
        b[act] = np.where(same_a, bb, xs)
        fb[act] = np.where(same_a, gb, fx)
        side[act] = np.where(same_a, 1, -1)
        width = np.abs(b[act] - a[act])
        done = (fx == 0.0) | (width <= xtol + rtol * np.abs(xs))
        act = act[~done]
    return x


def exp_or_inf(x: float) -> float:
    """``math.exp(x)``, ``inf`` where the double overflows (x > 709.78...)."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def two_product(a: float, b: float) -> tuple[float, float]:
    """``(p, e)`` with ``p = fl(a * b)`` and ``p + e = a * b`` exactly (Dekker 1971; |a b| < 1e300,
    no underflow of the partial products).  Used where ``1 - a b`` or ``2 - a b`` cancels."""
    p = a * b
    split = 134217729.0  # 2^27 + 1
    ca = split * a
    ah = ca - (ca - a)
    al = a - ah
    cb = split * b
    bh = cb - (cb - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def one_minus_product(c: float, a: float, b: float) -> float:
    """``c - a b`` for c in {1, 2} with the product's rounding error restored (exact when ``a b`` is
    within a factor 2 of c, where the difference cancels; <= 1 ulp elsewhere)."""
    p, e = two_product(a, b)
    return (c - p) - e


def signed_power_sum(terms: Sequence[tuple[float, Sequence[float], Sequence[int]]]) -> float:
    r""":math:`\sum_j c_j\prod_ix_{ji}^{a_{ji}}` for scalars :math:`x_{ji}>0`, small integer powers, real
    :math:`c_j`, with every term's binary exponent kept exactly (``frexp``): no term overflows to an
    infinity that meets another of opposite sign (``inf - inf``), none underflows before it is
    added; the sum is scaled by the largest term's power of two.  ``inf`` only where the sum itself
    is beyond the double range.  The terms are added exactly (integers), so the only errors are the
    few ulp of each term's mantissa product and the final rounding.
    """
    parts = []
    for c, xs, ps in terms:
        if c == 0.0 or any(x == 0.0 for x in xs):
            continue
        m, e = math.frexp(abs(c))
        for x, a in zip(xs, ps):
            mx, ex = math.frexp(x)
            m *= mx ** int(a)
            e += int(a) * ex
            m, e2 = math.frexp(m)
            e += e2
        parts.append((math.copysign(m, c), e))
    if not parts:
        return 0.0
    # exact sum: each m is a double in [1/2, 1), so m 2^53 is an integer; add them as Python ints shifted
    # to the smallest exponent, then one correctly rounded int -> float conversion (Fraction)
    lo = min(e for _, e in parts) - 53
    total = sum(int(m * 2.0 ** 53) << (e - 53 - lo) for m, e in parts)
    if total == 0:
        return 0.0
    try:
        return float(Fraction(total) * Fraction(2) ** lo)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def scaled_norm(x: Any, axis: Any = None) -> np.ndarray:
    r"""Euclidean norm along ``axis`` (all entries for ``None``) with the largest magnitude factored out:
    :math:`m\sqrt{\sum(x/m)^2}`, ``m = max|x|``.  ``numpy.linalg.norm`` squares first: entries past
    1.3e154 give ``inf`` and entries below 1.5e-154 give 0 (the norm of ``[1e-200]`` is 1e-200, not 0).
    Error <= 2 ulp + the sum's rounding (sqrt(n) ulp)."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    m = np.max(a, axis=axis, keepdims=True) if a.size else np.zeros(())
    safe = np.where(m > 0, m, 1.0)
    with np.errstate(under="ignore"):
        r = np.sqrt(np.sum((a / safe) ** 2, axis=axis, keepdims=True))
    out = np.where(m > 0, m * r, 0.0)
    return out.reshape(np.sum(a, axis=axis).shape) if axis is not None else out.reshape(())


def log_quotient(a: Any, b: Any) -> np.ndarray:
    """log(a / b) for a, b > 0 (arrays broadcast), without overflow of a / b and without cancellation for
    a ~ b: ``log1p`` of the exact difference (Sterbenz) for b/2 <= a <= 2b, the log of the quotient where it
    is a normal double, log a - log b elsewhere (|log(a / b)| > 708 there: relative error <= 2 eps)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)  # a number stays 0-d (it broadcasts)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        q = a / b
        if q.ndim == 0:
            out = np.log(q)
            if not TINY <= q <= _MAX:
                out = np.log(a) - np.log(b)
            if a <= 2.0 * b and b <= 2.0 * a:
                out = np.log1p((a - b) / b)
            return out
        if q.size and not (float(q.min()) >= TINY and float(q.max()) <= _MAX):  # two reductions; masks if needed
            far = ~((q >= TINY) & (q <= _MAX))
            out = np.where(far, np.log(a) - np.log(b), np.log(q))
        else:
            out = np.log(q, out=q)  # the common case, in place (one new array less: fewer fresh pages)
        return _near_one(out, a, b)


_LOG2_UP = 0.6932  # above log 2: |log fl(a/b)| <= log 2 wherever b/2 <= a <= 2b (rounding is monotone)
_LOG2_IN = 0.6931  # below log 2: |np.log(q)| < 0.6931 (faithful log) puts q in (1/2, 2), so b/2 < a < 2b
_DENSE = 0.5  # near-1 fraction from which log1p runs on every point (no gathers) rather than on a gather


def _near_one(out: np.ndarray, a: Any, b: Any, sign: int = 0) -> np.ndarray:
    """``out`` (the logs of fl(a/b), an owned contiguous array of the broadcast shape; a, b > 0) with
    ``log1p((a - b) / b)`` (the difference exact by Sterbenz) written on every point where b/2 <= a <= 2b.

    Those points are among |out| <= 0.6932 (b/2 <= a <= 2b implies 1/2 <= fl(a/b) <= 2: rounding is monotone);
    the exact test is needed only where 0.6931 <= |out| (a faithful log below 0.6931 puts fl(a/b), hence a/b,
    strictly inside (1/2, 2)).  `sign` (+1: a >= b on every point, so every fl(a/b) >= 1 and every log >= 0;
    -1: a <= b; 0: unknown) spares one of the two comparisons.  Where at least half of the points are near 1, the log1p form runs on every
    point in place and a mask keeps it (numpy's log1p is SIMD where its log is: ~1.3 ns a point on AVX-512; the
    gathers cost ~20 ns a point); on fewer, on a flat gather of those points only.  Both give the same value on
    every point (the same operations on it)."""
    flat = out.reshape(-1)
    if sign > 0:  # the caller's extremes give a >= b on every point: every log is >= 0, one comparison
        near = np.less_equal(out, _LOG2_UP)
    elif sign < 0:  # a <= b on every point: every log is <= 0
        near = np.greater_equal(out, -_LOG2_UP)
    else:
        near = np.less_equal(out, _LOG2_UP)
        near &= np.greater_equal(out, -_LOG2_UP)
    count = int(np.count_nonzero(near))
    if not count:
        return out
    if count >= _DENSE * out.size:
        edge = np.greater_equal(out, _LOG2_IN)
        edge |= np.less_equal(out, -_LOG2_IN)
        edge &= near
        idx = np.flatnonzero(edge)
        if idx.size:  # the exact test on the few points of the edge band
            av, bv = _gather(a, idx, out.shape), _gather(b, idx, out.shape)
            near.reshape(-1)[idx[(av > 2.0 * bv) | (bv > 2.0 * av)]] = False
        d = np.subtract(a, b)  # a new array of the broadcast shape (numbers: a 0-d one)
        np.divide(d, b, out=d)
        np.log1p(d, out=d)
        np.copyto(out, d, where=near)
        return out
    idx = np.flatnonzero(near)
    av, bv = _gather(a, idx, out.shape), _gather(b, idx, out.shape)
    o = flat[idx]
    if not (float(o.max()) < _LOG2_IN and float(o.min()) > -_LOG2_IN):  # some on the edge band: the exact test
        keep = (av <= 2.0 * bv) & (bv <= 2.0 * av)
        idx, av, bv = idx[keep], (av[keep] if np.ndim(av) else av), (bv[keep] if np.ndim(bv) else bv)
    d = np.subtract(av, bv)
    np.divide(d, bv, out=d)
    flat[idx] = np.log1p(d, out=d)
    return out


def _gather(x: Any, idx: np.ndarray, shape: tuple[int, ...]) -> Any:
    """``x`` broadcast to `shape` at the flat indices `idx`; a 0-d ``x`` stays itself (it broadcasts)."""
    if np.ndim(x) == 0:
        return x
    if np.shape(x) == shape and x.flags.c_contiguous:
        return x.reshape(-1)[idx]
    return np.broadcast_to(x, shape)[np.unravel_index(idx, shape)]  # gathers from broadcast views without copies


# ============================================================================ one engine for arrays and floats
# An engine written once with ``xp.exp``, ``xp.where``, ... runs on arrays with ``xp = ARRAY`` (numpy) and on
# Python floats with ``xp = SCALAR``: the same operations in the same order, the arithmetic operators IEEE on
# both.  The transcendental functions of SCALAR call the numpy ufunc itself on the float (numpy's own exp
# differs from libm's by an ulp on ~5 % of the points; the ufunc keeps a scalar call bit-identical to an
# array call, ~0.5 us each), sqrt is ``math.sqrt`` (correctly rounded, as numpy's).  Where a numpy ufunc
# returns inf/NaN with a warning, SCALAR returns the same value and raises nothing; ``errstate`` is a no-op
# there.  Branches of ``where`` are both evaluated on floats too (arguments), so an engine guards its
# divisions with ``where`` as it does for arrays (a float division by zero raises ZeroDivisionError).
# The bookkeeping such engines share (extremes, a careful form on its own points, in-place temporaries,
# selects on numbers) is in `grokclocks._pointwise`.

class _ArrayOps:
    """numpy as the engine namespace (arrays)."""

    where = staticmethod(np.where)
    frexp = staticmethod(np.frexp)
    ldexp = staticmethod(np.ldexp)
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    log1p = staticmethod(np.log1p)
    sqrt = staticmethod(np.sqrt)
    abs = staticmethod(np.abs)
    isfinite = staticmethod(np.isfinite)
    minimum = staticmethod(np.minimum)
    maximum = staticmethod(np.maximum)
    errstate = staticmethod(np.errstate)

    @staticmethod
    def to_int(k: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Integer array ``k`` clipped to [lo, hi], as int64 (``ldexp`` exponents)."""
        return np.clip(k.astype(np.int64), lo, hi)

    @staticmethod
    def apply(f: Any, x: Any) -> Any:
        """``f(x)`` for a ufunc-like ``f`` (e.g. a scipy.special function)."""
        return f(x)

    all = staticmethod(np.all)
    any = staticmethod(np.any)
    reciprocal = staticmethod(np.reciprocal)


def _ufunc_on_float(f: np.ufunc, lo: float, hi: float):
    """``f`` on a Python float: the ufunc itself (bit-identical to an array call), a float back; inf / NaN
    as numpy gives them, without a warning (an array call inside the engines' errstate says none either).
    Arguments in (lo, hi) raise no flag numpy warns about and skip the errstate (1.5 us)."""
    def g(x: float) -> float:
        if lo < x < hi:
            return float(f(x))
        with np.errstate(all="ignore"):
            return float(f(x))
    return g


def _sqrt_float(x: float) -> float:
    return math.sqrt(x) if x >= 0.0 else math.nan


def _ldexp_float(m: float, k: int) -> float:
    try:
        return math.ldexp(m, k)
    except OverflowError:
        return math.copysign(math.inf, m)


def _nan_min(a: float, b: float) -> float:
    return a if (a <= b or math.isnan(a)) else b  # np.minimum: NaN propagates


def _nan_max(a: float, b: float) -> float:
    return a if (a >= b or math.isnan(a)) else b


class _NoErrstate:
    def __init__(self, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


class _ScalarOps:
    """Python floats as the engine namespace (a scalar call; see the block comment above)."""

    @staticmethod
    def where(c: Any, a: Any, b: Any) -> Any:
        return a if c else b

    frexp = staticmethod(math.frexp)
    ldexp = staticmethod(_ldexp_float)
    exp = staticmethod(_ufunc_on_float(np.exp, -math.inf, 700.0))
    log1p = staticmethod(_ufunc_on_float(np.log1p, -1.0, math.inf))
    log = staticmethod(_ufunc_on_float(np.log, 0.0, math.inf))
    sqrt = staticmethod(_sqrt_float)
    abs = staticmethod(abs)
    isfinite = staticmethod(math.isfinite)
    minimum = staticmethod(_nan_min)
    maximum = staticmethod(_nan_max)
    errstate = _NoErrstate

    @staticmethod
    def to_int(k: int, lo: int, hi: int) -> int:
        return min(max(int(k), lo), hi)

    @staticmethod
    def apply(f: Any, x: float) -> float:
        """``f(x)`` for a ufunc-like ``f`` on a float (the same ufunc loop as on an array), a float back."""
        with np.errstate(all="ignore"):
            return float(f(x))

    all = staticmethod(bool)
    any = staticmethod(bool)

    @staticmethod
    def reciprocal(x: float) -> float:
        """1/x, +-inf at +-0 (as numpy; a float division by zero raises)."""
        return 1.0 / x if x != 0.0 else math.copysign(math.inf, x)


ARRAY = _ArrayOps
SCALAR = _ScalarOps


extrema = _extrema


def ops_of(*values: Any) -> type:
    """``SCALAR`` if every value is a Python float (a validated scalar argument), ``ARRAY`` otherwise."""
    for v in values:
        if type(v) is not float:
            return ARRAY
    return SCALAR


def _f(x: Any) -> Any:
    """A Python float as it is, anything else as a float64 array."""
    return x if type(x) is float else np.asarray(x, dtype=np.float64)


# An elementwise engine on 1e5 points makes ~100 temporaries of 800 KiB; glibc serves each from mmap or the top
# of the heap and hands it back to the OS when it is freed, so the next one page-faults in again (measured on the
# shared 2-core EPYC: the late-time exponent at 1e5 points, 4657 minor faults and 17.5 ms CPU).  In blocks of
# 8192 points (64 KiB temporaries, which the allocator keeps and reuses) the same engine took 567 faults and
# 8.8 ms.  Elementwise: every point sees the same operations, the result is the same bits.
BLOCK = 8192


def blockwise(f: Any, shape: tuple[int, ...], *arrays: Any, block: int = BLOCK) -> Any:
    """``f(*arrays)`` for an elementwise engine ``f`` returning an array or a tuple of arrays, evaluated on
    blocks of `block` points of the arrays broadcast to `shape` and written into arrays made once.  A 0-d
    argument is passed to every block as it is (broadcast by the engine's own operations)."""
    flat = [a if np.ndim(a) == 0 else np.ravel(np.broadcast_to(a, shape)) for a in arrays]
    n = math.prod(shape)
    if n <= block:
        r = f(*flat)
        return tuple(np.reshape(v, shape) for v in r) if isinstance(r, tuple) else np.reshape(r, shape)
    outs: list[np.ndarray] = []
    single = False
    for i in range(0, n, block):
        r = f(*(a[i:i + block] if np.ndim(a) else a for a in flat))
        single = not isinstance(r, tuple)
        r = (r,) if single else r
        if not outs:
            outs = [np.empty(n, dtype=np.result_type(v)) for v in r]
        for o, v in zip(outs, r):
            o[i:i + block] = v
    res = tuple(o.reshape(shape) for o in outs)
    return res[0] if single else res


# ============================================================================ double-double arithmetic
# Arrays broadcast; hi + lo is the value, |lo| <= ulp(hi)/2.  Error bounds (Dekker 1971, Joldes, Muller &
# Popescu 2017): two_sum and two_prod exact; mul ~ 4 eps^2, div ~ 10 eps^2, sqrt ~ 4 eps^2 relative.
# Operands must keep their products below ~1e300 and above ~1e-290 (no overflow of the split, no
# underflow of the error terms): callers scale by powers of two (frexp / ldexp) first.  Each function runs
# on arrays or, all operands Python floats, on floats (the same operations: see `ops_of`).

_SPLIT = 134217729.0  # 2^27 + 1


def dd_two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly (Knuth)."""
    a = _f(a)
    b = _f(b)
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fast_two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    return s, b - (s - a)  # exact for |a| >= |b|


# The array forms below run the same operations in the same order as the printed formulas, writing into
# arrays they created themselves (out=): every fresh 1e5-double temporary costs page faults on a heap that
# the allocator has just trimmed (measured 0.1-0.5 ms each on the shared 2-core EPYC), several times the
# arithmetic.  Floats and 0-d operands take the printed formulas (ufuncs return scalars there).

def _split(a: Any) -> tuple[Any, Any]:
    if type(a) is float or a.ndim == 0:
        c = _SPLIT * a
        hi = c - (c - a)
        return hi, a - hi
    c = np.multiply(a, _SPLIT)
    hi = np.subtract(c, a)
    np.subtract(c, hi, out=hi)  # hi = c - (c - a)
    return hi, np.subtract(a, hi, out=c)


def dd_two_prod(a: Any, b: Any) -> tuple[Any, Any]:
    """``(p, e)`` with ``p = fl(a b)`` and ``p + e = a b`` exactly (Dekker; |a|, |b| < 1e300)."""
    return _two_prod(_f(a), _f(b))


def _two_prod(a: Any, b: Any) -> tuple[Any, Any]:
    p = a * b
    ah, al = _split(a)
    bh, bl = (ah, al) if b is a else _split(b)  # a square: one split
    if type(p) is float or p.ndim == 0:
        return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl
    e = np.multiply(ah, bh)
    e -= p
    t = np.multiply(ah, bl)
    e += t
    np.multiply(al, bh, out=t)
    e += t
    np.multiply(al, bl, out=t)
    e += t
    return p, e  # ((ah bh - p) + ah bl + al bh) + al bl


def dd_mul(ah: Any, al: Any, bh: Any, bl: Any) -> tuple[Any, Any]:
    """(ah + al)(bh + bl) as a double-double."""
    return _mul(_f(ah), _f(al), _f(bh), _f(bl))


def _mul(ah: Any, al: Any, bh: Any, bl: Any) -> tuple[Any, Any]:
    p, e = _two_prod(ah, bh)
    return _fast_two_sum(p, e + (ah * bl + al * bh))


def dd_div(ah: Any, al: Any, bh: Any, bl: Any) -> tuple[Any, Any]:
    """(ah + al) / (bh + bl) as a double-double (one correction step of the quotient; bh != 0)."""
    ah, al, bh, bl = _f(ah), _f(al), _f(bh), _f(bl)
    q1 = ah / bh
    p, e = _mul(q1, 0.0, bh, bl)
    s, f = dd_two_sum(ah, -p)
    r = s + ((f - e) + al)  # (a - q1 b), its leading double
    return _fast_two_sum(q1, r / bh)


def dd_sqrt(a: Any) -> tuple[Any, Any]:
    """sqrt(a) of a double a >= 0 as a double-double (one Newton step; a in [1e-290, 1e300])."""
    a = _f(a)
    xp = ops_of(a)
    r = xp.sqrt(a)
    p, e = _two_prod(r, r)
    if _extrema(r)[0] > 0.0:  # no zero to guard (one reduction instead of two selections)
        return _fast_two_sum(r, ((a - p) - e) / (2.0 * r))
    with xp.errstate(invalid="ignore", divide="ignore"):
        corr = xp.where(r > 0, ((a - p) - e) / (2.0 * xp.where(r > 0, r, 1.0)), 0.0)
    return _fast_two_sum(r, corr)


def dd_exp(hi: Any, lo: Any) -> Any:
    """e^(hi + lo) for a double-double exponent (|lo| <= ulp(hi)): e^hi (1 + lo), hi exact: the relative
    error is that of `exp` (< 1 ulp) instead of |hi| ulps.  0 for hi = -inf and inf where e^hi overflows
    (lo is not read there)."""
    hi = _f(hi)
    lo = _f(lo)
    xp = ops_of(hi, lo)
    with xp.errstate(over="ignore", under="ignore", invalid="ignore"):
        e = xp.exp(hi)
        if _extrema(e)[1] < math.inf and _finite_extrema(lo):  # hi finite or -inf, lo finite: no selection
            return e + e * lo
        return xp.where(xp.isfinite(e), e + e * xp.where(xp.isfinite(lo), lo, 0.0), e)


def _finite_extrema(x: Any) -> bool:
    lo, hi = _extrema(x)
    return -math.inf < lo and hi < math.inf
