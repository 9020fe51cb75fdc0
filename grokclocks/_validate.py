"""Argument checks shared by every module: one place, one message style.

Every public function of the core validates its arguments through these helpers, so that an
invalid input raises :class:`DomainError` naming the parameter, the offending value and the
valid domain, e.g. ``lam must be in (0, 1) for the late-time expansion (got 1.3)``.
"""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DomainError",
    "OutputExistsError",
    "as_float_array",
    "positive",
    "nonnegative",
    "in_open_interval",
    "finite",
    "integer_at_least",
    "choice",
    "not_equal",
    "scalar_or_array",
    "file_path",
    "writable_file",
]


class DomainError(ValueError):
    """An argument lies outside the domain in which a result is defined.

    Subclass of :class:`ValueError`; the message names the parameter, the value and the
    valid domain.
    """


class OutputExistsError(DomainError, FileExistsError):
    """A file exists where a new output would be written and overwriting was not asked for.

    Both a :class:`DomainError` (``ValueError``) and a :class:`FileExistsError`.
    """


def _bad(name: str, values: np.ndarray, mask: np.ndarray, domain: str) -> DomainError:
    first = values[mask].flat[0] if np.ndim(values) else values
    return DomainError(f"{name} must be {domain} (got {float(first)!r})")


def as_float_array(x: Any, name: str, *, allow_empty: bool = False) -> np.ndarray:
    """Convert ``x`` to a float64 array, rejecting non-numeric, non-finite and empty input."""
    if x is None or isinstance(x, (str, bytes)):
        raise DomainError(f"{name} must be a real number or array of real numbers (got {x!r})")
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DomainError(f"{name} must be a real number or array of real numbers (got {x!r})") from exc
    if a.size == 0 and not allow_empty:
        raise DomainError(f"{name} must not be empty")
    bad = ~np.isfinite(a)
    if np.any(bad):
        raise _bad(name, a, bad, "finite")
    return a


def finite(x: Any, name: str) -> np.ndarray:
    """Finite real number(s)."""
    return as_float_array(x, name)


def positive(x: Any, name: str, *, context: str = "") -> np.ndarray:
    """Finite and strictly positive."""
    a = as_float_array(x, name)
    bad = a <= 0
    if np.any(bad):
        raise _bad(name, a, bad, "> 0" + (f" {context}" if context else ""))
    return a


def nonnegative(x: Any, name: str, *, context: str = "") -> np.ndarray:
    """Finite and >= 0."""
    a = as_float_array(x, name)
    bad = a < 0
    if np.any(bad):
        raise _bad(name, a, bad, ">= 0" + (f" {context}" if context else ""))
    return a


def in_open_interval(x: Any, name: str, lo: float, hi: float, *, context: str = "") -> np.ndarray:
    """Finite and in the open interval ``(lo, hi)``."""
    a = as_float_array(x, name)
    bad = (a <= lo) | (a >= hi)
    if np.any(bad):
        raise _bad(name, a, bad, f"in ({lo:g}, {hi:g})" + (f" {context}" if context else ""))
    return a


def not_equal(a: np.ndarray, name: str, value: float, *, context: str = "") -> np.ndarray:
    """Reject elements equal to ``value`` (e.g. ``lam == 1`` where an expansion diverges)."""
    bad = a == value
    if np.any(bad):
        raise _bad(name, a, bad, f"!= {value:g}" + (f" {context}" if context else ""))
    return a


def integer_at_least(x: Any, name: str, minimum: int = 1) -> int:
    """A Python integer >= ``minimum`` (bools and non-integral floats are rejected)."""
    if isinstance(x, bool) or not isinstance(x, (numbers.Integral, np.integer)):
        if isinstance(x, (float, np.floating)) and math.isfinite(x) and float(x).is_integer():
            x = int(x)
        else:
            raise DomainError(f"{name} must be an integer >= {minimum} (got {x!r})")
    if int(x) < minimum:
        raise DomainError(f"{name} must be an integer >= {minimum} (got {int(x)!r})")
    return int(x)


def index_array(x: Any, name: str, n: int, *, what: str = "integers") -> np.ndarray:
    """Integer indices in ``[0, n)`` as int64 (integral floats accepted), e.g. labels or column indices."""
    a = np.asarray(x)
    if not np.issubdtype(a.dtype, np.integer):
        f = as_float_array(a, name, allow_empty=True)
        if np.any(f != np.round(f)):
            raise DomainError(f"{name} must be {what} in [0, {n}) (got a non-integer)")
        a = f
    a = a.astype(np.int64)
    bad = (a < 0) | (a >= n)
    if np.any(bad):
        raise DomainError(f"{name} must be in [0, {n}) (got {int(a[bad].flat[0])!r})")
    return a


def choice(x: Any, name: str, options: dict[str, str] | tuple[str, ...]) -> str:
    """One of a set of strings; a dict maps aliases to canonical names."""
    table = options if isinstance(options, dict) else {o: o for o in options}
    if x not in table:
        allowed = ", ".join(repr(k) for k in table)
        raise DomainError(f"{name} must be one of {allowed} (got {x!r})")
    return table[x]


def scalar_or_array(a: np.ndarray) -> float | np.ndarray:
    """Return a Python float for 0-d results, the array otherwise (scalars in -> floats out)."""
    a = np.asarray(a)
    return float(a) if a.ndim == 0 else a


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
