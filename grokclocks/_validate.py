"""Argument checks shared by every module: one place, one message style.

Every public function of the core validates its arguments through these helpers, so that an
invalid input raises `DomainError` naming the parameter, the offending value and the valid domain,
e.g. `lam must be in (0, 1) for the late-time expansion (got 1.3)`.

Conventions (docs/reliability.md):

* reals: `bool`, complex, string, datetime and object values that are not real numbers are
  rejected, as are NaN and ±inf; integers, float16/32/64 and lists of them are converted to
  float64 (`input_eps` keeps the eps of the caller's dtype for tolerances);
* integers: Python or NumPy integers, or integral floats; `bool` is not an integer; every integer
  fits in int64 unless a smaller `maximum` is given;
* flags: only `True`/`False` (`np.bool_` too), never a truthy string or number;
* a value shown in a message is one line, truncated (`show`).
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
    "broadcast_flat",
    "broadcasting",
    "ordered",
    "file_path",
]

INT64_MAX = int(np.iinfo(np.int64).max)
# the largest integer a float64 holds: counts that enter a closed form only as floats go up to it
FLOAT_INTEGER_MAX = int(np.finfo(np.float64).max)
_SHOW_WIDTH = 60


class DomainError(ValueError):
    """An argument lies outside the domain in which a result is defined.

    A `ValueError`; the message names the parameter, the value and the valid domain, e.g.
    `lam must be in (0, 1) for the late-time expansion (got 1.3)`.
    """


class OutputExistsError(DomainError, FileExistsError):
    """A file exists where a new output would be written and overwriting was not asked for.

    Both a `DomainError` (a `ValueError`) and a `FileExistsError`.
    """


class ResultOverflow(DomainError, OverflowError):
    """The arguments are valid but the result exceeds the float64 range; a log-space variant exists.

    Both a `DomainError` (the policy: one error type for arguments a function cannot answer for)
    and an `OverflowError` (what it is; kept for callers that catch that).
    """


class UnknownKey(DomainError, KeyError):
    """A name (spec ID, registry key) that is not registered.

    A `DomainError`, and a `KeyError` for callers that catch that; the message is printed as is
    (not quoted, as a plain `KeyError`'s would be).
    """

    __str__ = Exception.__str__


def show(x: Any, width: int = _SHOW_WIDTH) -> str:
    """One-line `repr` of a value for an error message, cut to `width` characters.

    Parameters
    ----------
    x : object
        Any value; arrays with at least one dimension show their shape, dtype and first six
        entries, and a broken `__repr__` shows the type's name.
    width : int
        Maximal length of the text (a few characters at least); default 60.  Longer text is cut
        and ends in "...".

    Returns
    -------
    str
        The text, whitespace collapsed to single spaces.
    """
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
    """Convert a real number or array to a float64 array, rejecting non-numeric, non-finite and empty input.

    Integers and floats of any width (and nested lists of them) are accepted; `bool`, complex,
    strings, bytes, datetimes, `None` and ragged nestings raise `DomainError`.

    Parameters
    ----------
    x : float or array_like
        The value to check.
    name : str
        The parameter's name, used in the error message.
    allow_empty : bool
        Whether an empty array is accepted; default `False`.
    scalar : bool
        Whether the value must be one number, returned as a Python float; default `False` (an
        array is returned).
    allow_nan : bool
        Whether NaN entries are kept (a record's missing values); default `False`.
    allow_inf : bool
        Whether ±inf entries are kept (e.g. a clock that never ran); default `False`.

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`.

    Raises
    ------
    DomainError
        If `x` is not real, is empty, holds a value not allowed, or is not a scalar with `scalar`.
    """
    t = type(x)
    if t is float or t is np.float64 or (t is int and -_INT_FLOAT_MAX <= x <= _INT_FLOAT_MAX):
        # the scalar fast path (a Python or NumPy float, a Python int in the float range; bool is not int here):
        # one comparison instead of the array checks, ~1 us instead of ~15 (the whole check of a scalar call)
        v = float(x)
        if v - v != 0.0 and not ((v != v and allow_nan) or (v in _INFS and allow_inf)):
            raise _bad(name, np.float64(v), True, "finite" + (" or NaN" if allow_nan else "")
                       + (" or +-inf" if allow_inf else ""))
        return v if scalar else np.array(v)
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
    elif kind == "f" and raw.dtype == np.float64:
        # no copy of a float64 array: a read-only view (an engine that wrote into its validated input would fail
        # loudly instead of changing the caller's array); the copy cost as much as the formula of a one-line
        # function (measured: kl_rate_power 7 ms for 1e5 points against 0.02 ms for q * q)
        a = raw.view()
        a.flags.writeable = False
    elif kind in "fiu":
        a = raw.astype(np.float64)
    else:  # b (bool), c (complex), U/S (text), M/m (datetime), V (void)
        raise _not_real(name, x)
    if a.size == 0 and not allow_empty:
        raise DomainError(f"{name} must not be empty")
    r = _forward(a)  # the reductions below ignore order: over memory order they run 10x faster on reversed views
    if not allow_nan and a.size:  # two SIMD reductions (NaN propagates through min and max)
        lo_, hi_ = float(r.min()), float(r.max())
        if math.isfinite(lo_ + hi_) or (allow_inf and not (math.isnan(lo_) or math.isnan(hi_))):
            return _scalar_if(a, name, scalar)
    elif allow_nan and a.size:  # NaN allowed: fmin/fmax skip NaN, so an infinity shows in them (all NaN: NaN)
        # each extreme tested alone: -inf + inf is NaN, which would hide both infinities
        if allow_inf or not (math.isinf(float(np.fmin.reduce(r, axis=None)))
                             or math.isinf(float(np.fmax.reduce(r, axis=None)))):
            return _scalar_if(a, name, scalar)
    bad = (np.isnan(a) & (not allow_nan)) | (np.isinf(a) & (not allow_inf))
    if np.any(bad):
        raise _bad(name, a, bad, "finite" + (" or NaN" if allow_nan else "") + (" or +-inf" if allow_inf else ""))
    return _scalar_if(a, name, scalar)


def _forward(a: np.ndarray) -> np.ndarray:
    """The same elements with every stride non-negative (a view; for order-free reductions)."""
    neg = tuple(i for i, st in enumerate(a.strides) if st < 0)
    return np.flip(a, neg) if neg else a


_INT_FLOAT_MAX = 2**1023  # Python ints below this convert to a finite float
_INFS = (math.inf, -math.inf)


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


def finite(x: Any, name: str, *, scalar: bool = False) -> Any:
    """Check finite real number(s).

    Parameters
    ----------
    x : float or array_like
        The value to check.
    name : str
        The parameter's name, used in the error message.
    scalar : bool
        Whether the value must be one number, returned as a Python float; default `False` (an
        array is returned).

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`.

    Raises
    ------
    DomainError
        If `x` is not real, not finite or empty.
    """
    return as_float_array(x, name, scalar=scalar)


def positive(x: Any, name: str, *, context: str = "", scalar: bool = False) -> Any:
    """Check finite, strictly positive real number(s).

    Parameters
    ----------
    x : float or array_like
        The value to check.
    name : str
        The parameter's name, used in the error message.
    context : str
        Text appended to the domain in the message (e.g. "for the late-time expansion"); default
        empty.
    scalar : bool
        Whether the value must be one number, returned as a Python float; default `False` (an
        array is returned).

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`.

    Raises
    ------
    DomainError
        If an entry is not real, not finite or ≤ 0 (the message quotes the first such entry).
    """
    a = as_float_array(x, name)
    if a.ndim == 0:
        if not float(a) > 0:
            raise _bad(name, a, True, "> 0" + (f" {context}" if context else ""))
        return _scalar_if(a, name, scalar)
    if a.size == 0 or float(a.min()) > 0:
        return _scalar_if(a, name, scalar)
    bad = a <= 0
    raise _bad(name, a, bad, "> 0" + (f" {context}" if context else ""))


def nonnegative(x: Any, name: str, *, context: str = "", scalar: bool = False) -> Any:
    """Check finite, non-negative real number(s).

    Parameters
    ----------
    x : float or array_like
        The value to check.
    name : str
        The parameter's name, used in the error message.
    context : str
        Text appended to the domain in the message (e.g. "for the late-time expansion"); default
        empty.
    scalar : bool
        Whether the value must be one number, returned as a Python float; default `False` (an
        array is returned).

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`.

    Raises
    ------
    DomainError
        If an entry is not real, not finite or < 0.
    """
    a = as_float_array(x, name)
    if a.ndim == 0:
        if not float(a) >= 0:
            raise _bad(name, a, True, ">= 0" + (f" {context}" if context else ""))
        return _scalar_if(a, name, scalar)
    if a.size == 0 or float(a.min()) >= 0:
        return _scalar_if(a, name, scalar)
    bad = a < 0
    raise _bad(name, a, bad, ">= 0" + (f" {context}" if context else ""))


def in_open_interval(x: Any, name: str, lo: float, hi: float, *, context: str = "",
                     scalar: bool = False) -> Any:
    """Check finite real number(s) in the open interval (`lo`, `hi`).

    Parameters
    ----------
    x : float or array_like
        The value to check.
    name : str
        The parameter's name, used in the error message.
    lo : float
        Lower bound (excluded).
    hi : float
        Upper bound (excluded).
    context : str
        Text appended to the domain in the message (e.g. "for the late-time expansion"); default
        empty.
    scalar : bool
        Whether the value must be one number, returned as a Python float; default `False` (an
        array is returned).

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`.

    Raises
    ------
    DomainError
        If an entry is not real, not finite or outside (`lo`, `hi`).
    """
    a = as_float_array(x, name)
    if a.ndim == 0:
        if not lo < float(a) < hi:
            raise _bad(name, a, True, f"in ({lo:g}, {hi:g})" + (f" {context}" if context else ""))
        return _scalar_if(a, name, scalar)
    if a.size == 0 or (float(a.min()) > lo and float(a.max()) < hi):
        return _scalar_if(a, name, scalar)
    bad = (a <= lo) | (a >= hi)
    raise _bad(name, a, bad, f"in ({lo:g}, {hi:g})" + (f" {context}" if context else ""))


def in_closed_interval(x: Any, name: str, lo: float, hi: float, *, context: str = "",
                       scalar: bool = False) -> Any:
    """Check finite real number(s) in the closed interval [`lo`, `hi`].

    Parameters
    ----------
    x : float or array_like
        The value to check.
    name : str
        The parameter's name, used in the error message.
    lo : float
        Lower bound (included).
    hi : float
        Upper bound (included).
    context : str
        Text appended to the domain in the message (e.g. "for the late-time expansion"); default
        empty.
    scalar : bool
        Whether the value must be one number, returned as a Python float; default `False` (an
        array is returned).

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`.

    Raises
    ------
    DomainError
        If an entry is not real, not finite or outside [`lo`, `hi`].
    """
    a = as_float_array(x, name)
    bad = (a < lo) | (a > hi)
    if np.any(bad):
        raise _bad(name, a, bad, f"in [{lo:g}, {hi:g}]" + (f" {context}" if context else ""))
    return _scalar_if(a, name, scalar)


def not_equal(a: np.ndarray, name: str, value: float, *, context: str = "") -> np.ndarray:
    """Reject entries equal to a value (e.g. `lam == 1`, where an expansion diverges).

    Parameters
    ----------
    a : numpy.ndarray
        An already validated float array.
    name : str
        The parameter's name, used in the error message.
    value : float
        The excluded value.
    context : str
        Text appended to the domain in the message (e.g. "for the late-time expansion"); default
        empty.

    Returns
    -------
    numpy.ndarray
        `a`, unchanged.

    Raises
    ------
    DomainError
        If an entry equals `value`.
    """
    bad = a == value
    if np.any(bad):
        raise _bad(name, a, bad, f"!= {value:g}" + (f" {context}" if context else ""))
    return a


def integer_at_least(x: Any, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """Check an integer in [`minimum`, `maximum`] and return it as a Python int.

    Bools and non-integral floats are rejected; integral floats and 0-d integer arrays are
    accepted.  Without `maximum` the bound is int64's largest value, so that no integer overflows
    NumPy downstream; sizes that allocate memory pass a smaller, documented `maximum`.

    Parameters
    ----------
    x : int
        The value to check.
    name : str
        The parameter's name, used in the error message.
    minimum : int
        Smallest allowed value; default 1.
    maximum : int or None
        Largest allowed value; `None` (default) means 2⁶³ − 1.

    Returns
    -------
    int
        The value as a Python int.

    Raises
    ------
    DomainError
        If `x` is not an integer or is outside [`minimum`, `maximum`].
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
    """Check an integer count that a closed form uses only as a float (a width N, a modulus p in a kernel formula).

    Any integer from `minimum` up to the largest double (about 1.8×10³⁰⁸) is accepted, not capped
    at int64 like `integer_at_least` (nothing is allocated or indexed with it).

    Parameters
    ----------
    x : int
        The value to check.
    name : str
        The parameter's name, used in the error message.
    minimum : int
        Smallest allowed value; default 1.

    Returns
    -------
    int
        The value as a Python int.

    Raises
    ------
    DomainError
        If `x` is not an integer or is out of range.
    """
    return integer_at_least(x, name, minimum, maximum=FLOAT_INTEGER_MAX)


def integer_array(x: Any, name: str, *, what: str = "integers", allow_empty: bool = True) -> np.ndarray:
    """Check an array of integers and return it as int64 (integral floats accepted; bools, NaN and fractions rejected).

    Parameters
    ----------
    x : array_like
        The value to check.
    name : str
        The parameter's name, used in the error message.
    what : str
        How the domain is named in the message; default "integers".
    allow_empty : bool
        Whether an empty array is accepted; default `True`.

    Returns
    -------
    numpy.ndarray
        int64 array of the shape of `x`.

    Raises
    ------
    DomainError
        If an entry is not an integer (or beyond ±2⁶² for float input), or the array is empty
        without `allow_empty`.
    """
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
    """Check integer indices in [0, `n`) and return them as int64 (integral floats accepted), e.g. labels.

    Parameters
    ----------
    x : array_like
        The value to check.
    name : str
        The parameter's name, used in the error message.
    n : int
        The exclusive upper bound (e.g. the number of classes).
    what : str
        How the domain is named in the message; default "integers".
    allow_empty : bool
        Whether an empty array is accepted; default `True`.

    Returns
    -------
    numpy.ndarray
        int64 array of the shape of `x`.

    Raises
    ------
    DomainError
        If an entry is not an integer or is outside [0, `n`).
    """
    a = integer_array(x, name, what=f"{what} in [0, {n})", allow_empty=allow_empty)
    bad = (a < 0) | (a >= n)
    if np.any(bad):
        raise DomainError(f"{name} must be in [0, {n}) (got {int(a[bad].flat[0])!r})")
    return a


def flag(x: Any, name: str) -> bool:
    """Check a flag: `True` or `False` (`np.bool_` too); a truthy string or number is an error, not a flag.

    Parameters
    ----------
    x : bool
        The value to check.
    name : str
        The parameter's name, used in the error message.

    Returns
    -------
    bool
        The flag as a Python bool.

    Raises
    ------
    DomainError
        If `x` is not a bool.
    """
    if not isinstance(x, (bool, np.bool_)):
        raise DomainError(f"{name} must be True or False (got {show(x)})")
    return bool(x)


def choice(x: Any, name: str, options: dict[str, str] | tuple[str, ...]) -> str:
    """Check one of a set of strings; a dict maps aliases to canonical names.

    Parameters
    ----------
    x : str
        The value to check.
    name : str
        The parameter's name, used in the error message.
    options : dict or tuple of str
        The allowed strings, or a dict from each allowed string to the canonical name returned.

    Returns
    -------
    str
        `x` (or its canonical name).

    Raises
    ------
    DomainError
        If `x` is not one of the options (the message lists them).
    """
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
    """Return a validated array that must be 0-d as a Python float.

    Parameters
    ----------
    a : numpy.ndarray
        An already validated array.
    name : str
        The parameter's name, used in the error message.
    context : str
        Text appended to the domain in the message (e.g. "for the late-time expansion"); default
        empty.

    Returns
    -------
    float
        The value.

    Raises
    ------
    DomainError
        If `a` has a dimension.
    """
    if np.ndim(a) != 0:
        raise DomainError(f"{name} must be a scalar{(' ' + context) if context else ''} "
                          f"(got an array of shape {np.shape(a)})")
    return float(a)


def array_ndim(x: Any, name: str, ndim: int | tuple[int, ...], *, allow_empty: bool = False) -> np.ndarray:
    """Check a finite float64 array with `ndim` dimensions (one of them, if a tuple).

    Parameters
    ----------
    x : array_like
        The value to check.
    name : str
        The parameter's name, used in the error message.
    ndim : int or tuple of int
        The allowed number(s) of dimensions.
    allow_empty : bool
        Whether an empty array is accepted; default `False`.

    Returns
    -------
    numpy.ndarray
        The float64 array.

    Raises
    ------
    DomainError
        If `x` is not a finite real array or has another number of dimensions.
    """
    a = as_float_array(x, name, allow_empty=allow_empty)
    dims = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if a.ndim not in dims:
        want = " or ".join(f"{d}-D" for d in dims)
        raise DomainError(f"{name} must be a {want} array (got shape {a.shape})")
    return a


def same_shape(a: np.ndarray, name: str, shape: tuple[int, ...], other: str) -> np.ndarray:
    """Check that an array has the shape of another argument.

    Parameters
    ----------
    a : array_like
        The array to check.
    name : str
        The parameter's name, used in the error message.
    shape : tuple of int
        The required shape.
    other : str
        The name of the argument whose shape it is, for the message.

    Returns
    -------
    array_like
        `a`, unchanged.

    Raises
    ------
    DomainError
        If the shapes differ.
    """
    if tuple(np.shape(a)) != tuple(shape):
        raise DomainError(f"{name} must have the shape of {other}, {tuple(shape)} (got {np.shape(a)})")
    return a


def probabilities(x: Any, name: str, *, axis: int = -1) -> np.ndarray:
    """Check probabilities: non-negative entries summing to 1 along `axis`.

    The sum is accepted within 8·n·eps of 1 where n is the length of the axis and eps that of the
    caller's dtype (`input_eps`): the rounding error of a float sum of n correctly-rounded terms is
    below n·eps, with a factor 8 for softmax outputs computed in the same precision.

    Parameters
    ----------
    x : array_like
        The value to check, at least 1-D.
    name : str
        The parameter's name, used in the error message.
    axis : int
        The axis that sums to 1; default −1 (the last).

    Returns
    -------
    numpy.ndarray
        The float64 array.

    Raises
    ------
    DomainError
        If an entry is negative or not finite, `x` is a scalar, or a sum is not 1 within the
        tolerance.
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
    """Check a list, tuple or array (not a string, mapping or `None`) with at least `min_len` items.

    Parameters
    ----------
    x : sequence
        The value to check.
    name : str
        The parameter's name, used in the error message.
    min_len : int
        Smallest allowed number of items; default 1.
    what : str
        How the domain is named in the message; default "a sequence".

    Returns
    -------
    list
        The items as a list.

    Raises
    ------
    DomainError
        If `x` is not such a sequence or has too few items.
    """
    if x is None or isinstance(x, (str, bytes, dict)) or not np.iterable(x):
        raise DomainError(f"{name} must be {what} (got {show(x)})")
    items = list(x)
    if len(items) < min_len:
        raise DomainError(f"{name} must have at least {min_len} item{'s' if min_len > 1 else ''} (got {len(items)})")
    return items


def callable_(f: Any, name: str) -> Any:
    """Check a callable.

    Parameters
    ----------
    f : object
        The value to check.
    name : str
        The parameter's name, used in the error message.

    Returns
    -------
    callable
        `f`, unchanged.

    Raises
    ------
    DomainError
        If `f` is not callable.
    """
    if not callable(f):
        raise DomainError(f"{name} must be callable (got {show(f)})")
    return f


MAX_ELEMENTS = 2**30  # 8 GiB of float64: beyond it a table is a mistake on any machine this runs on


def max_size(n_elements: float, name: str, value: Any, *, limit: float = MAX_ELEMENTS) -> None:
    """Reject an argument whose result would have more than `limit` entries.

    A size such as `p = 10**9` (a p × p table) must fail with a message, not with `MemoryError`
    after minutes of swapping.

    Parameters
    ----------
    n_elements : float
        The number of entries the result would have (NaN is rejected too).
    name : str
        The parameter's name, used in the error message.
    value : object
        The argument's value, shown in the message.
    limit : float
        Largest allowed number of entries; default 2³⁰ (8 GiB of float64).

    Raises
    ------
    DomainError
        If `n_elements` exceeds `limit` or is NaN.
    """
    if not n_elements <= limit:  # also catches NaN
        raise DomainError(f"{name} is too large or too fine: the result would have {n_elements:.3g} entries, more "
                          f"than {limit:.3g} (got {show(value)})")


def scalar_or_array(a: np.ndarray) -> float | np.ndarray:
    """Return a Python float for a 0-d result, the array otherwise (scalars in → floats out).

    Parameters
    ----------
    a : array_like
        A result.

    Returns
    -------
    float or numpy.ndarray
        `float(a)` for a 0-d array, else `a` as an array.
    """
    a = np.asarray(a)
    return float(a) if a.ndim == 0 else a


def broadcast_flat(*arrays: Any) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """Broadcast validated arrays and flatten them: ``(shape, [1-d float64 arrays])``.

    The vectorised engines of the core work on 1-d arrays (boolean masks and fancy indexing behave the
    same for one point and for a million); a public function reshapes the result with
    ``scalar_or_array(out.reshape(shape))``, so a scalar call and an array call run the same code.

    Parameters
    ----------
    *arrays : array_like
        Arrays that broadcast together (already validated).

    Returns
    -------
    (shape, flat) : tuple
        The broadcast shape and the list of flattened float64 arrays (contiguous copies where needed).
    """
    b = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in arrays])
    return b[0].shape, [np.ascontiguousarray(x).reshape(-1) for x in b]


def broadcasting(*names: str) -> Callable:
    """Decorator: the array arguments `names` must broadcast together.

    Shapes that do not broadcast raise `DomainError` naming each parameter and its shape, in place
    of NumPy's "operands could not be broadcast" from deep inside the formula.  Scalars and `None`
    take no part; a ragged list is left to the parameter's own check.

    Parameters
    ----------
    *names : str
        The parameters checked; none means every parameter of the decorated function.

    Returns
    -------
    callable
        The decorator, which wraps a function with the check.

    Raises
    ------
    TypeError
        At decoration, if a name is not a parameter of the function.
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
    """Check `big` ≥ `small` element-wise; the message quotes the first offending pair itself.

    A message built from min(`big`) and max(`small`) may quote two elements that are each in order.

    Parameters
    ----------
    small : numpy.ndarray
        The values that must not exceed `big` (broadcast against it).
    big : numpy.ndarray
        The values that must be ≥ `small`.
    small_name : str
        The name of `small`, for the message.
    big_name : str
        The name of `big`, for the message.

    Raises
    ------
    DomainError
        If some broadcast element has `big` < `small`.
    """
    s, b = np.broadcast_arrays(small, big)
    bad = b < s
    if np.any(bad):
        i = np.flatnonzero(bad)[0]
        raise DomainError(f"{big_name} must be >= {small_name} (got {big_name}={float(b.flat[i])!r} < "
                          f"{small_name}={float(s.flat[i])!r})")


def file_path(path: Any, name: str) -> Path:
    """Check a file path (str or os.PathLike) naming a file, not `""`, `.` or `..`.

    Parameters
    ----------
    path : str or os.PathLike
        The path to check.
    name : str
        The parameter's name, used in the error message.

    Returns
    -------
    pathlib.Path
        The path.

    Raises
    ------
    DomainError
        If `path` is not a path or names no file.
    """
    try:
        p = Path(os.fspath(path))
    except TypeError:
        raise DomainError(f"{name} must be a file path, a str or os.PathLike (got {path!r})") from None
    if not p.name or p.name in (".", ".."):
        raise DomainError(f"{name} must name a file (got {str(path)!r})")
    return p
