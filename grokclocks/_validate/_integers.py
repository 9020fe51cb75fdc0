"""Integer arguments: bounded integers, counts used only as floats, integer and index arrays.

`bool` is not an integer; integral floats are accepted; every integer fits in int64 unless a smaller
`maximum` is given (`count`: up to the largest double).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ._errors import DomainError, show
from ._reals import _converted, as_float_array


INT64_MAX = int(np.iinfo(np.int64).max)
# the largest integer a float64 holds: counts that enter a closed form only as floats go up to it
FLOAT_INTEGER_MAX = int(np.finfo(np.float64).max)


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


def counts(x: Any, name: str, minimum: int = 1) -> Any:
    """`count` over an array: integer counts that a closed form uses only as floats, broadcast like any argument.

    A scalar is checked by `count` and returned as a Python float (the formula's own conversion: the
    nearest double, exact below 2⁵³); an array (or list) of integral values
    in [`minimum`, 1.8×10³⁰⁸] (integer or float dtype; bool, NaN, ±inf and fractions refused) is returned as
    float64.

    Parameters
    ----------
    x : int or array_like
        The value(s) to check.
    name : str
        The parameter's name, used in the error message.
    minimum : int
        Smallest allowed value; default 1.

    Returns
    -------
    float or numpy.ndarray
        A Python float for a scalar, the float64 array otherwise.

    Raises
    ------
    DomainError
        If an entry is not an integer or is below `minimum` (the message quotes the first such entry).
    """
    if not isinstance(x, (list, tuple, np.ndarray)) or (isinstance(x, np.ndarray) and x.ndim == 0):
        return float(count(x, name, minimum))
    if isinstance(x, np.ndarray):
        boolean = x.dtype.kind == "b"
    else:  # a nested list: a bool among ints converts to 1 silently (a ragged list is as_float_array's error)
        try:
            boolean = any(isinstance(v, (bool, np.bool_)) for v in np.asarray(x, dtype=object).flat)
        except ValueError:
            boolean = False
    if boolean:
        raise DomainError(f"{name} must be integers >= {minimum} (got booleans: {show(x)})")
    a, lo, _ = _converted(x, name)
    if lo is not None and lo < minimum:
        low = a < minimum
        raise DomainError(f"{name} must be integers >= {minimum} (got {float(a[low].flat[0])!r})")
    integral = isinstance(x, np.ndarray) and x.dtype.kind in "iu"  # its float64 conversion is integral
    if a.size and not integral and not np.array_equal(np.floor(a), a):
        frac = a != np.floor(a)
        raise DomainError(f"{name} must be integers >= {minimum} (got {float(a[frac].flat[0])!r})")
    return a


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
