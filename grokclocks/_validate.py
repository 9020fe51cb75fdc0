"""Argument checks shared by every module: one place, one message style.

Every public function of the core validates its arguments through these helpers, so that an
invalid input raises :class:`DomainError` naming the parameter, the offending value and the
valid domain, e.g. ``lam must be in (0, 1) for the late-time expansion (got 1.3)``.

Conventions (docs/reliability.md):

* reals: ``bool``, complex, string, datetime and object values that are not real numbers are
  rejected, as are NaN and +-inf; integers, float16/32/64 and lists of them are converted to
  float64 (:func:`input_eps` keeps the eps of the caller's dtype for tolerances);
* integers: Python or NumPy integers, or integral floats; ``bool`` is not an integer; every
  integer fits in int64 unless a smaller ``maximum`` is given;
* flags: only ``True``/``False`` (``np.bool_`` too), never a truthy string or number;
* a value shown in a message is one line, truncated (:func:`show`).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = [
    "DomainError",
    "OutputExistsError",
    "ResultOverflow",
    "UnknownKey",
    "show",
    "as_float_array",
    "input_eps",
    "roundoff_tol",
    "positive",
    "nonnegative",
    "in_open_interval",
    "in_closed_interval",
    "finite",
    "integer_at_least",
    "count",
    "integer_array",
    "index_array",
    "flag",
    "choice",
    "not_equal",
    "scalar",
    "array_ndim",
    "same_shape",
    "probabilities",
    "callable_",
    "sequence",
    "max_size",
    "scalar_or_array",
    "broadcasting",
    "ordered",
    "file_path",
    "writable_file",
]

INT64_MAX = int(np.iinfo(np.int64).max)
# the largest integer a float64 holds: counts that enter a closed form only as floats go up to it
FLOAT_INTEGER_MAX = int(np.finfo(np.float64).max)
_SHOW_WIDTH = 60


class DomainError(ValueError):
    """An argument lies outside the domain in which a result is defined.

    Subclass of :class:`ValueError`; the message names the parameter, the value and the
    valid domain.
    """


class OutputExistsError(DomainError, FileExistsError):
    """A file exists where a new output would be written and overwriting was not asked for.

    Both a :class:`DomainError` (``ValueError``) and a :class:`FileExistsError`.
    """


class ResultOverflow(DomainError, OverflowError):
    """The arguments are valid but the result exceeds the float64 range; a log-space variant exists.

    Both a :class:`DomainError` (the policy: one error type for arguments a function cannot answer
    for) and an :class:`OverflowError` (what it is; kept for callers that catch that).
    """


class UnknownKey(DomainError, KeyError):
    """A name (spec ID, registry key) that is not registered: a :class:`DomainError`, and a
    :class:`KeyError` for callers that catch that; the message is printed as is."""

    __str__ = Exception.__str__


def show(x: Any, width: int = _SHOW_WIDTH) -> str:
    """One-line ``repr`` of ``x``, cut to ``width`` characters (arrays: shape and first entries)."""
    if isinstance(x, np.ndarray) and x.ndim > 0:
        flat = np.array2string(x.ravel()[:6], separator=", ", threshold=6, max_line_width=10**6)
        text = f"array of shape {x.shape}, dtype {x.dtype}: {flat}" + (" ..." if x.size > 6 else "")
    else:
        try:
            text = repr(x)
        except Exception:  # noqa: BLE001 -- a broken __repr__ must not hide the real error
            text = f"<{type(x).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _bad(name: str, values: np.ndarray, mask: np.ndarray, domain: str) -> DomainError:
    first = values[mask].flat[0] if np.ndim(values) else values
    return DomainError(f"{name} must be {domain} (got {float(first)!r})")


def _not_real(name: str, x: Any) -> DomainError:
    return DomainError(f"{name} must be a real number or array of real numbers (got {show(x)})")


def _real_element(v: Any) -> bool:
    return isinstance(v, (numbers.Real, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def as_float_array(x: Any, name: str, *, allow_empty: bool = False, scalar: bool = False,
                   allow_nan: bool = False, allow_inf: bool = False) -> Any:
    """Convert ``x`` to a float64 array, rejecting non-numeric, non-finite and empty input.

    Integers and floats of any width (and nested lists of them) are accepted; ``bool``, complex,
    strings, bytes, datetimes, ``None`` and ragged nestings raise :class:`DomainError`.
    ``allow_nan``: NaN entries are kept (a record's missing values); ``allow_inf``: +-inf kept
    (e.g. a clock that never ran); otherwise both are rejected.
    ``scalar``: the value must be 0-d and is returned as a Python float.
    """
    if x is None or isinstance(x, (str, bytes, bool, np.bool_, complex, np.complexfloating)):
        raise _not_real(name, x)
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise _not_real(name, x) from exc
    kind = raw.dtype.kind
    if kind == "O":
        if not all(_real_element(v) for v in raw.flat):
            raise _not_real(name, x)
        try:
            a = np.array([float(v) for v in raw.flat], dtype=np.float64).reshape(raw.shape)
        except OverflowError as exc:
            raise DomainError(f"{name} must be finite (got {show(x)})") from exc
    elif kind in "fiu":
        a = raw.astype(np.float64)
    else:  # b (bool), c (complex), U/S (text), M/m (datetime), V (void)
        raise _not_real(name, x)
    if a.size == 0 and not allow_empty:
        raise DomainError(f"{name} must not be empty")
    bad = (np.isnan(a) & (not allow_nan)) | (np.isinf(a) & (not allow_inf))
    if np.any(bad):
        raise _bad(name, a, bad, "finite" + (" or NaN" if allow_nan else "") + (" or +-inf" if allow_inf else ""))
    return _scalar_if(a, name, scalar)


def _scalar_if(a: np.ndarray, name: str, scalar: bool) -> Any:
    if not scalar:
        return a
    if a.ndim != 0:
        raise DomainError(f"{name} must be a scalar (got an array of shape {a.shape})")
    return float(a)


def input_eps(x: Any) -> float:
    """Machine epsilon of the caller's floating dtype (float64's for integers, lists and scalars).

    Tolerances such as "probabilities sum to 1" scale with it, so float32 or float16 input is
    judged at its own precision.
    """
    dt = getattr(x, "dtype", None)
    if dt is not None and np.issubdtype(dt, np.floating):
        return float(np.finfo(dt).eps)
    return float(np.finfo(np.float64).eps)


def roundoff_tol(x: Any, n: int = 1, *, floor: float = 0.0) -> float:
    """Relative round-off allowance for a quantity computed from ``n`` terms in the caller's dtype:
    ``max(floor, 8 n eps)`` (``floor`` keeps a float64 tolerance that was already looser)."""
    return max(floor, 8.0 * max(int(n), 1) * input_eps(x))


def finite(x: Any, name: str, *, scalar: bool = False) -> Any:
    """Finite real number(s) (``scalar=True``: one number, returned as a float)."""
    return as_float_array(x, name, scalar=scalar)


def positive(x: Any, name: str, *, context: str = "", scalar: bool = False) -> Any:
    """Finite and strictly positive (``scalar=True``: one number, returned as a float)."""
    a = as_float_array(x, name)
    bad = a <= 0
    if np.any(bad):
        raise _bad(name, a, bad, "> 0" + (f" {context}" if context else ""))
    return _scalar_if(a, name, scalar)


def nonnegative(x: Any, name: str, *, context: str = "", scalar: bool = False) -> Any:
    """Finite and >= 0 (``scalar=True``: one number, returned as a float)."""
    a = as_float_array(x, name)
    bad = a < 0
    if np.any(bad):
        raise _bad(name, a, bad, ">= 0" + (f" {context}" if context else ""))
    return _scalar_if(a, name, scalar)


def in_open_interval(x: Any, name: str, lo: float, hi: float, *, context: str = "",
                     scalar: bool = False) -> Any:
    """Finite and in the open interval ``(lo, hi)``."""
    a = as_float_array(x, name)
    bad = (a <= lo) | (a >= hi)
    if np.any(bad):
        raise _bad(name, a, bad, f"in ({lo:g}, {hi:g})" + (f" {context}" if context else ""))
    return _scalar_if(a, name, scalar)


def in_closed_interval(x: Any, name: str, lo: float, hi: float, *, context: str = "",
                       scalar: bool = False) -> Any:
    """Finite and in the closed interval ``[lo, hi]``."""
    a = as_float_array(x, name)
    bad = (a < lo) | (a > hi)
    if np.any(bad):
        raise _bad(name, a, bad, f"in [{lo:g}, {hi:g}]" + (f" {context}" if context else ""))
    return _scalar_if(a, name, scalar)


def not_equal(a: np.ndarray, name: str, value: float, *, context: str = "") -> np.ndarray:
    """Reject elements equal to ``value`` (e.g. ``lam == 1`` where an expansion diverges)."""
    bad = a == value
    if np.any(bad):
        raise _bad(name, a, bad, f"!= {value:g}" + (f" {context}" if context else ""))
    return a


def integer_at_least(x: Any, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """A Python integer in ``[minimum, maximum]`` (bools and non-integral floats are rejected).

    Without ``maximum`` the bound is int64's largest value, so that no integer overflows
    NumPy downstream; sizes that allocate memory pass a smaller, documented ``maximum``.
    """
    hi = INT64_MAX if maximum is None else int(maximum)
    hi_text = f"{float(hi):.3g}" if hi > 10**18 and hi != INT64_MAX else str(hi)
    domain = f"an integer >= {minimum}" if maximum is None else f"an integer in [{minimum}, {hi_text}]"
    if isinstance(x, np.ndarray) and x.ndim == 0:  # np.asarray(3) is the scalar 3, as np.int64(3) is
        x = x[()]
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)):
        if isinstance(x, (float, np.floating)) and math.isfinite(x) and float(x).is_integer():
            x = int(x)
        else:
            raise DomainError(f"{name} must be {domain} (got {show(x)})")
    if int(x) < minimum or int(x) > hi:
        if maximum is None and int(x) > hi:
            domain = f"an integer in [{minimum}, {hi}]"
        raise DomainError(f"{name} must be {domain} (got {show(int(x))})")
    return int(x)


def count(x: Any, name: str, minimum: int = 1) -> int:
    """An integer count that a closed form uses only as a float (a width N, a modulus p in a kernel
    formula, a number of classes): any integer from ``minimum`` up to the largest double (1.8e308),
    not capped at int64 like :func:`integer_at_least` (nothing is allocated or indexed with it)."""
    return integer_at_least(x, name, minimum, maximum=FLOAT_INTEGER_MAX)


def integer_array(x: Any, name: str, *, what: str = "integers", allow_empty: bool = True) -> np.ndarray:
    """An array of integers as int64 (integral floats accepted; bools, NaN and fractions rejected)."""
    if x is None or isinstance(x, (str, bytes)):
        raise DomainError(f"{name} must be {what} (got {show(x)})")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise DomainError(f"{name} must be {what} (got {show(x)})") from exc
    if a.dtype.kind == "b":
        raise DomainError(f"{name} must be {what} (got booleans: {show(x)})")
    if not np.issubdtype(a.dtype, np.integer):
        f = as_float_array(x, name, allow_empty=allow_empty)
        if np.any(f != np.round(f)):
            raise DomainError(f"{name} must be {what} (got a non-integer: {show(x)})")
        if np.any(np.abs(f) > 2.0**62):
            raise DomainError(f"{name} must be {what} (got {show(x)})")
        a = f
    elif a.size == 0 and not allow_empty:
        raise DomainError(f"{name} must not be empty")
    return a.astype(np.int64)


def index_array(x: Any, name: str, n: int, *, what: str = "integers", allow_empty: bool = True) -> np.ndarray:
    """Integer indices in ``[0, n)`` as int64 (integral floats accepted), e.g. labels or column indices."""
    a = integer_array(x, name, what=f"{what} in [0, {n})", allow_empty=allow_empty)
    bad = (a < 0) | (a >= n)
    if np.any(bad):
        raise DomainError(f"{name} must be in [0, {n}) (got {int(a[bad].flat[0])!r})")
    return a


def flag(x: Any, name: str) -> bool:
    """``True`` or ``False`` (``np.bool_`` too); a truthy string or number is an error, not a flag."""
    if not isinstance(x, (bool, np.bool_)):
        raise DomainError(f"{name} must be True or False (got {show(x)})")
    return bool(x)


def choice(x: Any, name: str, options: dict[str, str] | tuple[str, ...]) -> str:
    """One of a set of strings; a dict maps aliases to canonical names."""
    table = options if isinstance(options, dict) else {o: o for o in options}
    try:
        known = x in table
    except TypeError:  # unhashable
        known = False
    if not isinstance(x, str) or not known:
        allowed = ", ".join(repr(k) for k in table)
        raise DomainError(f"{name} must be one of {allowed} (got {show(x)})")
    return table[x]


def scalar(a: np.ndarray, name: str, *, context: str = "") -> float:
    """A validated array that must be 0-d (a scalar), returned as a Python float."""
    if np.ndim(a) != 0:
        raise DomainError(f"{name} must be a scalar{(' ' + context) if context else ''} "
                          f"(got an array of shape {np.shape(a)})")
    return float(a)


def array_ndim(x: Any, name: str, ndim: int | tuple[int, ...], *, allow_empty: bool = False) -> np.ndarray:
    """A finite float64 array with ``ndim`` dimensions (one of them, if a tuple)."""
    a = as_float_array(x, name, allow_empty=allow_empty)
    dims = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if a.ndim not in dims:
        want = " or ".join(f"{d}-D" for d in dims)
        raise DomainError(f"{name} must be a {want} array (got shape {a.shape})")
    return a


def same_shape(a: np.ndarray, name: str, shape: tuple[int, ...], other: str) -> np.ndarray:
    """``a`` must have ``shape`` (the shape of argument ``other``)."""
    if tuple(np.shape(a)) != tuple(shape):
        raise DomainError(f"{name} must have the shape of {other}, {tuple(shape)} (got {np.shape(a)})")
    return a


def probabilities(x: Any, name: str, *, axis: int = -1) -> np.ndarray:
    """Non-negative entries summing to 1 along ``axis``.

    The sum is accepted within ``8 n eps`` of 1 where ``n`` is the length of the axis and ``eps``
    that of the caller's dtype (:func:`input_eps`): the rounding error of a float sum of ``n``
    correctly-rounded terms is below ``n eps``, with a factor 8 for softmax outputs computed in
    the same precision.
    """
    p = nonnegative(x, name)
    if p.ndim == 0:
        raise DomainError(f"{name} must be an array of probabilities (got the scalar {show(x)})")
    n = p.shape[axis]
    tol = 8.0 * n * input_eps(x)
    s = p.sum(axis=axis)
    bad = np.abs(s - 1.0) > tol
    if np.any(bad):
        raise DomainError(f"{name} must sum to 1 along axis {axis} within {tol:.1e} (got a sum of "
                          f"{float(np.asarray(s)[bad].flat[0])!r})")
    return p


def sequence(x: Any, name: str, *, min_len: int = 1, what: str = "a sequence") -> list:
    """A list, tuple or array (not a string, mapping or ``None``) with at least ``min_len`` items."""
    if x is None or isinstance(x, (str, bytes, dict)) or not np.iterable(x):
        raise DomainError(f"{name} must be {what} (got {show(x)})")
    items = list(x)
    if len(items) < min_len:
        raise DomainError(f"{name} must have at least {min_len} item{'s' if min_len > 1 else ''} (got {len(items)})")
    return items


def callable_(f: Any, name: str) -> Any:
    """A callable."""
    if not callable(f):
        raise DomainError(f"{name} must be callable (got {show(f)})")
    return f


MAX_ELEMENTS = 2**30  # 8 GiB of float64: beyond it a table is a mistake on any machine this runs on


def max_size(n_elements: float, name: str, value: Any, *, limit: float = MAX_ELEMENTS) -> None:
    """Reject an argument whose result would have more than ``limit`` entries (default 2**30).

    A size such as ``p = 10**9`` (a ``p x p`` table) must fail with a message, not with
    ``MemoryError`` after minutes of swapping.
    """
    if not n_elements <= limit:  # also catches NaN
        raise DomainError(f"{name} is too large or too fine: the result would have {n_elements:.3g} entries, more "
                          f"than {limit:.3g} (got {show(value)})")


def scalar_or_array(a: np.ndarray) -> float | np.ndarray:
    """Return a Python float for 0-d results, the array otherwise (scalars in -> floats out)."""
    a = np.asarray(a)
    return float(a) if a.ndim == 0 else a


def broadcasting(*names: str) -> Callable:
    """Decorator: the array arguments ``names`` (default: every parameter) must broadcast together.

    Shapes that do not broadcast raise :class:`DomainError` naming each parameter and its shape, in
    place of NumPy's "operands could not be broadcast" from deep inside the formula.  Scalars and
    ``None`` take no part; a ragged list is left to the parameter's own check.
    """
    def deco(func: Callable) -> Callable:
        params = list(inspect.signature(func).parameters)
        checked = set(names or params)
        unknown = checked.difference(params)
        if unknown:
            raise TypeError(f"broadcasting: {func.__qualname__} has no parameter {sorted(unknown)}")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            shapes = []
            for name, value in [*zip(params, args), *kwargs.items()]:
                if name in checked and isinstance(value, (np.ndarray, list, tuple)):
                    try:
                        shapes.append((name, np.shape(value)))
                    except ValueError:  # ragged
                        continue
            if len(shapes) > 1:
                try:
                    np.broadcast_shapes(*(shape for _, shape in shapes))
                except ValueError:
                    got = ", ".join(f"{n} {shape}" for n, shape in shapes)
                    raise DomainError(f"{', '.join(n for n, _ in shapes)} must broadcast against each "
                                      f"other (got shapes {got})") from None
            return func(*args, **kwargs)

        return wrapper

    return deco


def ordered(small: np.ndarray, big: np.ndarray, small_name: str, big_name: str) -> None:
    """Raise naming the first broadcast element where ``big < small``: that pair itself (a message built from
    ``min(big)`` and ``max(small)`` may quote two elements that are each in order)."""
    s, b = np.broadcast_arrays(small, big)
    bad = b < s
    if np.any(bad):
        i = np.flatnonzero(bad)[0]
        raise DomainError(f"{big_name} must be >= {small_name} (got {big_name}={float(b.flat[i])!r} < "
                          f"{small_name}={float(s.flat[i])!r})")


def file_path(path: Any, name: str) -> Path:
    """``path`` (str or os.PathLike) as a :class:`~pathlib.Path` naming a file (not ``""``, ``.`` or ``..``)."""
    try:
        p = Path(os.fspath(path))
    except TypeError:
        raise DomainError(f"{name} must be a file path, a str or os.PathLike (got {path!r})") from None
    if not p.name or p.name in (".", ".."):
        raise DomainError(f"{name} must name a file (got {str(path)!r})")
    return p


def writable_file(path: Any, name: str, *, overwrite: bool = False) -> Path:
    """An output file path, checked before any work: not a directory, its directory creatable, no clobbering.

    Raises :class:`DomainError` when ``path`` is not a path, is a directory, or its nearest existing
    ancestor is not a writable directory, and :class:`OutputExistsError` when the file exists and
    ``overwrite`` is false.  Creates nothing.
    """
    p = file_path(path, name)
    if p.is_dir():
        raise DomainError(f"{name} must be a file, not the directory {str(p)!r}")
    parent = p.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise DomainError(f"{name}: cannot create {str(p)!r}: {str(parent)!r} is not a writable directory")
    if p.exists() and not overwrite:
        raise OutputExistsError(f"{name}: {str(p)!r} already exists; pass overwrite to replace it")
    return p
