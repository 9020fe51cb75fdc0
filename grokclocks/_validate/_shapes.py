"""Shapes and sizes of array arguments: 0-d, a number of dimensions, another argument's shape, a size limit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._errors import DomainError, show
from ._reals import as_float_array


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
