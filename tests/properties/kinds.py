"""Argument kinds for the property registry: for each parameter, what a valid value looks like
(typical and extreme) and which values must raise ``DomainError``.

A :class:`Param` holds three hypothesis strategy factories, each taking ``n`` (the length shared
by the vectorised arguments of one call, 0 for scalars) and, for ``invalid``, the valid value it
replaces:

* ``typical(n)``  -- moderate values, on which the function must return a finite result;
* ``extreme(n)``  -- valid but extreme values (5e-324, 1e300, a boundary's neighbour), on which
  the function may also raise ``DomainError`` (a documented numerical limit), never NaN or
  another exception;
* ``invalid(n, v)`` -- values outside the domain (NaN, +-inf, negative where positive is
  required, out of range, wrong shape, empty, complex, string, bool where a number is meant,
  huge integers), on which the function must raise ``DomainError`` naming the parameter.

An :class:`Entry` names one public function (``"module.function"``, resolved lazily so that the
fuzz script can run this registry against an older checkout) and its parameters.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from hypothesis import strategies as st

SUBNORMAL = 5e-324                     # smallest positive double
TINY = float(np.finfo(np.float64).tiny)  # smallest positive normal double
HUGE = 1e300
NAN, INF = math.nan, math.inf

Strategy = Any


def _const(v: Any) -> Strategy:
    return st.just(v)


@dataclasses.dataclass(frozen=True)
class Param:
    """One parameter's valid and invalid values (see the module docstring)."""

    typical: Callable[[int], Strategy]
    extreme: Callable[[int], Strategy] | None = None
    invalid: Callable[[int, Any], Strategy] | None = None


def _vector(scalar: Strategy, n: int, vec: bool) -> Strategy:
    if not vec or n == 0:
        return scalar
    return st.one_of(scalar, st.lists(scalar, min_size=n, max_size=n).map(lambda xs: np.asarray(xs, np.float64)))


def typical_floats(a: float, b: float) -> Strategy:
    """Floats in [a, b] with no magnitudes below 1e-8 except 0 itself (those are extremes):
    log-uniform on a positive range, uniform otherwise, the end points included."""
    if a >= 0 and b > 0:
        lo = a if a > 0 else max(b * 1e-8, 1e-8)
        if lo > b:
            lo = b
        logs = st.floats(math.log(lo), math.log(b)).map(lambda u: min(max(math.exp(u), lo), b))
        parts = [st.sampled_from([lo, b]), logs] + ([st.just(0.0)] if a == 0 else [])
        return st.one_of(*parts)
    if b <= 0 and a < 0:
        return typical_floats(-b, -a).map(lambda x: -x)
    return st.floats(a, b).map(lambda x: 0.0 if abs(x) < 1e-8 else x)


def _generic_bad_real(vec: bool, optional: bool) -> list[Any]:
    out: list[Any] = [NAN, INF, -INF, "0.5", complex(0.5, 1.0), True]
    if not optional:
        out.append(None)
    return out


def Real(lo: float = -INF, hi: float = INF, *, lo_closed: bool = False, hi_closed: bool = False,
         typ: tuple[float, float] | None = None, vec: bool = True, optional: bool = False,
         extra_bad: tuple = (), extra_extreme: tuple = (), grid_ok: bool = False) -> Param:
    """A real number in (lo, hi) (closed ends on request); ``vec``: arrays broadcast too."""
    if typ is None:
        a = lo if lo > -INF else -10.0
        b = hi if hi < INF else 10.0
        if lo == 0.0 and hi == INF:
            a, b = 1e-3, 1e3
        typ = (a, b)
    t_lo, t_hi = typ
    if t_lo == lo and not lo_closed:
        t_lo = float(np.nextafter(lo, INF)) if lo != 0 else max(1e-6, min(1e-3, t_hi / 10))
    if t_hi == hi and not hi_closed:
        t_hi = float(np.nextafter(hi, -INF)) if hi != 0 else -max(1e-6, min(1e-3, -t_lo / 10))
    scalar = typical_floats(t_lo, t_hi)
    ext: list[float] = list(extra_extreme)
    if lo == -INF:
        ext += [-HUGE, -1.7e308]
    else:
        ext += [lo] if lo_closed else [float(np.nextafter(lo, INF))]
        if lo == 0.0:
            ext += [SUBNORMAL, TINY, 1e-300]
    if hi == INF:
        ext += [HUGE, 1.7e308]
    else:
        ext += [hi] if hi_closed else [float(np.nextafter(hi, -INF))]
    if lo < 0 < hi:
        ext += [0.0, -0.0]
    ext = [e for e in ext if (lo < e or (lo_closed and e == lo)) and (e < hi or (hi_closed and e == hi))]

    bad = _generic_bad_real(vec, optional) + list(extra_bad)
    if lo > -INF:
        bad += [lo - 1.0 if abs(lo) < 1e300 else -HUGE, -HUGE]
        if not lo_closed:
            bad.append(lo)
    if hi < INF:
        bad += [hi + 1.0, HUGE]
        if not hi_closed:
            bad.append(hi)
    bad = [b for b in bad if not (isinstance(b, float) and math.isfinite(b)
                                  and (lo < b or (lo_closed and b == lo)) and (b < hi or (hi_closed and b == hi)))]

    def invalid(n: int, v: Any) -> Strategy:
        pool = list(bad)
        if vec:
            good = float(np.ravel(v)[0]) if v is not None and np.size(v) else 1.0
            pool += [np.array([good, NAN]), np.array([INF, good]), np.array([], dtype=np.float64),
                     np.array([good, good], dtype=np.complex128) + 1j, np.array(["1", "2"])]
        elif not grid_ok:  # a scalar parameter (grid_ok: a 1-D grid is valid too, though only scalars are drawn)
            pool += [np.array([float(np.ravel(v)[0]) if v is not None else 1.0] * 2)]
        return st.sampled_from(pool)

    def typical(n: int) -> Strategy:
        s = _vector(scalar, n, vec)
        return st.one_of(st.none(), s) if optional else s

    return Param(typical, (lambda n: st.sampled_from(ext)) if ext else None, invalid)


def Pos(typ: tuple[float, float] = (1e-3, 1e3), **kw) -> Param:
    """x > 0."""
    return Real(0.0, INF, typ=typ, **kw)


def NonNeg(typ: tuple[float, float] = (0.0, 1e3), **kw) -> Param:
    """x >= 0."""
    return Real(0.0, INF, lo_closed=True, typ=typ, **kw)


def Unit(**kw) -> Param:
    """x in (0, 1)."""
    return Real(0.0, 1.0, typ=(1e-3, 0.999), **kw)


def Int(lo: int = 1, hi: int | None = None, *, typ: tuple[int, int] | None = None, optional: bool = False,
        ext: tuple[int, ...] = (), capped: bool = False, float_ok: bool = True, vec: bool = False) -> Param:
    """An integer >= lo (<= hi); ``capped``: a size, so 10**30 must be rejected (not allocated); ``vec``: arrays
    of integers broadcast too (an entry with ``vec=True`` draws them)."""
    if typ is None:
        typ = (lo, lo + 5 if hi is None else min(hi, lo + 5))
    scalar = st.integers(*typ)
    if float_ok:
        scalar = st.one_of(scalar, scalar.map(np.int64))
    ext_vals = [e for e in ((lo,) + tuple(ext) + ((hi,) if hi is not None else ()))]

    bad: list[Any] = [lo - 1, 2.5 if lo <= 2 else lo + 0.5, True, "3", NAN, INF] + ([[lo, lo - 1]] if vec else [[lo, lo]])
    if not optional:
        bad.append(None)
    if hi is not None:
        bad += [hi + 1]
    if hi is not None or capped:
        bad += [10**30, 2**63]
    if capped and hi is None:
        bad += [10**12 + 39]  # fits int64 (a prime), but no table of that size fits in memory

    def typical(n: int) -> Strategy:
        if vec and n:
            scalar_ = st.one_of(scalar, st.lists(st.integers(*typ), min_size=n, max_size=n).map(
                lambda xs: np.asarray(xs, np.int64)))
        else:
            scalar_ = scalar
        return st.one_of(st.none(), scalar_) if optional else scalar_

    return Param(typical, lambda n: st.sampled_from(ext_vals), lambda n, v: st.sampled_from(bad))


def Choice(*options: Any, optional: bool = False) -> Param:
    """One of ``options`` (strings)."""
    bad: list[Any] = ["no-such-option", 3, ["x"]]
    if not optional:
        bad.append(None)
    base = st.sampled_from(options)
    return Param(lambda n: st.one_of(st.none(), base) if optional else base, None,
                 lambda n, v: st.sampled_from(bad))


def Flag() -> Param:
    """True or False; a truthy string or number is rejected."""
    return Param(lambda n: st.booleans(), None, lambda n, v: st.sampled_from(["yes", 2, None, 1.0]))


def Fixed(*values: Any, bad: tuple = ()) -> Param:
    """Drawn from ``values`` only (a key, a callable, a config); ``bad`` values must be rejected."""
    return Param(lambda n: st.sampled_from(values), None,
                 (lambda n, v: st.sampled_from(bad)) if bad else None)


def Func(*funcs: Callable, optional: bool = False) -> Param:
    """A callable argument; non-callables must be rejected."""
    bad = [3.0, "f"] + ([] if optional else [None])
    return Param(lambda n: st.sampled_from(funcs), None, lambda n, v: st.sampled_from(bad))


def array_bad(v: Any, *, ndim_fixed: bool = True, empty: bool = True) -> list[Any]:
    """Invalid variants of a valid array ``v``: a NaN or inf entry, complex, strings, empty,
    another number of dimensions (when the function needs a fixed one)."""
    a = np.array(v, dtype=np.float64, copy=True)
    out: list[Any] = []
    if a.size:
        b = a.copy(); b.flat[0] = NAN; out.append(b)
        c = a.copy(); c.flat[-1] = -INF; out.append(c)
        out.append(a.astype(np.complex128) + 1j)
        out.append(a.astype(str))
    if empty:
        out.append(np.zeros((0,) * max(a.ndim, 1)))
    if ndim_fixed:
        out.append(a[..., None] if a.ndim < 3 else a.reshape(-1))
        if a.ndim > 0:
            out.append(float(a.flat[0]) if a.size else 1.0)
    out.append("array")
    return out


def Arr(typical: Callable[[int], Strategy], *, ndim_fixed: bool = True, empty: bool = True,
        extra_bad: Callable[[Any], list] | tuple = (), extreme: Callable[[int], Strategy] | None = None) -> Param:
    """An array argument: ``typical(n)`` draws it; its invalid variants come from :func:`array_bad`."""

    def invalid(n: int, v: Any) -> Strategy:
        pool = array_bad(v, ndim_fixed=ndim_fixed, empty=empty)
        pool += list(extra_bad(v) if callable(extra_bad) else extra_bad)
        return st.sampled_from(pool)

    return Param(typical, extreme, invalid)


def floats_array(shape: tuple[int, ...], lo: float = -3.0, hi: float = 3.0) -> Strategy:
    """A float64 array of ``shape`` with entries in [lo, hi]."""
    size = int(np.prod(shape)) if shape else 1
    return st.lists(st.floats(lo, hi, allow_nan=False, allow_infinity=False), min_size=size, max_size=size).map(
        lambda xs: np.asarray(xs, np.float64).reshape(shape))


def seeded_array(shape: tuple[int, ...], kind: str = "normal", scale: float = 1.0) -> Strategy:
    """A seeded random array (normal / uniform / positive), cheaper to draw than element-wise."""
    def make(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        if kind == "normal":
            return scale * rng.standard_normal(shape)
        if kind == "uniform":
            return scale * rng.random(shape)
        if kind == "positive":
            return scale * (0.1 + rng.random(shape))
        raise ValueError(kind)
    return st.integers(0, 2**32 - 1).map(make)


@dataclasses.dataclass(frozen=True)
class Lazy:
    """An example value built when the example runs (e.g. simulation data: nothing JAX at import)."""

    build: Callable[[], Any]


@dataclasses.dataclass(frozen=True)
class Known:
    """A defect found by this suite and not yet fixed (it belongs to another part of the code).

    ``when(**kwargs)`` says whether a call hits it (such calls are not held against the entry);
    ``example`` reproduces it: ``tests/test_properties.py::test_known_defects_are_still_there``
    expects it to fail (strict xfail), so fixing the defect makes that test fail until this record
    is removed.
    """

    what: str
    when: Callable[..., bool]
    example: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class Entry:
    """One public function and its argument model.

    name    : ``"module.function"`` under ``grokclocks`` (e.g. ``"rmt.mp_density"``)
    params  : parameter name -> :class:`Param` (every call passes these by keyword)
    build   : optional ``n -> strategy of dict`` for arguments that must agree with each other
              (shapes, labels); its keys may also appear in ``params`` only for ``invalid``
    bad     : parameter -> ``(n, valid_kwargs) -> strategy`` of invalid values for built arguments
    vec     : whether vectorised arguments may be drawn as arrays of a shared length
    inf     : why the function may return +-inf on valid input (None: it must not)
    nan     : why a NaN may appear in the output (a documented marker); None: never
    raises  : predicate on the kwargs of a typical call: True where DomainError is the documented
              answer on the typical domain (e.g. a not-reached threshold)
    check   : oracle ``(result, kwargs) -> str | None`` (a message when the value is suspect)
    cost    : relative cost of a call; calls costing >= 10 run fewer examples (profile / cost)
    names   : extra parameter names an error about a built argument may name
    known   : defects found and not yet fixed (:class:`Known`)
    filter_invalid : start invalid calls from typical calls outside ``raises`` (default True)
    cheap_invalid : invalid calls are rejected before the expensive part (a JIT compile), so they run a
              third of the profile's count (the share of a mixed run) while valid calls run ``examples / cost``
    """

    name: str
    params: Mapping[str, Param] = dataclasses.field(default_factory=dict)
    build: Callable[[int], Strategy] | None = None
    bad: Mapping[str, Callable[[int, dict], Strategy]] = dataclasses.field(default_factory=dict)
    vec: bool = False
    inf: str | None = None
    nan: str | None = None
    raises: Callable[..., bool] | None = None
    check: Callable[[Any, dict], str | None] | None = None
    cost: float = 1.0
    names: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    known: tuple[Known, ...] = ()
    filter_invalid: bool = True
    cheap_invalid: bool = False

    def known_defect(self, kw: Mapping[str, Any]) -> str | None:
        for k in self.known:
            try:
                if k.when(**kw):
                    return k.what
            except Exception:  # noqa: BLE001 -- a predicate that cannot judge these kwargs does not match
                continue
        return None

    @property
    def module(self) -> str:
        return "grokclocks." + self.name.rsplit(".", 1)[0]

    @property
    def func_name(self) -> str:
        return self.name.rsplit(".", 1)[1]

    def resolve(self) -> Callable | None:
        import importlib
        try:
            mod = importlib.import_module(self.module)
        except ImportError:
            return None
        return getattr(mod, self.func_name, None)


@dataclasses.dataclass(frozen=True)
class Exempt:
    """A public callable with no property entry, and why (e.g. the engine, covered elsewhere)."""

    name: str
    reason: str


# ---------------------------------------------------------------- oracles for Entry.check


def _numeric_leaves(out: Any) -> np.ndarray:
    from .runner import _leaves

    parts = [np.ravel(np.asarray(x, dtype=float)) for x in _leaves(out) if np.asarray(x).dtype.kind in "fiu"]
    return np.concatenate(parts) if parts else np.zeros(0)


def nonneg(out: Any, kw: Mapping[str, Any]) -> str | None:
    """Every number in the result is >= 0 (a loss, a time, a mass, a norm, a bound)."""
    a = _numeric_leaves(out)
    a = a[~np.isnan(a)]
    return None if np.all(a >= 0) else f"negative value {a.min()!r} (a loss, time, mass or norm)"


def in_unit(out: Any, kw: Mapping[str, Any]) -> str | None:
    """Every number in the result is in [0, 1] (a probability, an accuracy, a fraction)."""
    a = _numeric_leaves(out)
    a = a[~np.isnan(a)]
    return None if np.all((a >= 0) & (a <= 1 + 1e-12)) else f"value outside [0, 1]: {a[(a < 0) | (a > 1)][:3]}"


def ordered(out: Any, kw: Mapping[str, Any]) -> str | None:
    """A (lower, upper) pair with lower <= upper."""
    lo, hi = (np.asarray(x, float) for x in out[:2])
    ok = np.all((lo <= hi) | (np.abs(lo - hi) <= 1e-12 * np.abs(hi)))
    return None if ok else f"lower bound above upper bound: {lo} > {hi}"
