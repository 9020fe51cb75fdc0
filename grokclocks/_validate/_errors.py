"""The errors of the argument checks and the one-line value shown in their messages.

`DomainError` (a `ValueError`) and its three refinements, and `show`, the one-line `repr` every message
quotes a value with.
"""

from __future__ import annotations

from typing import Any

import numpy as np


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
