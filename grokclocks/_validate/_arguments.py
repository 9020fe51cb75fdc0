"""Arguments that are not numbers: flags, choices among strings, sequences, callables, file paths.

A flag is only `True`/`False` (never a truthy string or number); a choice names its options in the message.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import DomainError, show


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
