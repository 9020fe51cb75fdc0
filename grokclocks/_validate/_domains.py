"""Domains of real arguments: signs, intervals, excluded values, order between two arguments, probabilities.

Each check converts through `as_float_array` and raises `DomainError` quoting the first offending entry.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._errors import DomainError, _bad, show
from ._precision import input_eps
from ._reals import in_domain


def positive(x: Any, name: str, *, context: str = "", scalar: bool = False, extrema: bool = False) -> Any:
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
    extrema : bool
        Whether to return ``(value, (min, max))``: the extremes the check reduced (see `in_domain`);
        default `False`.

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`; with `extrema`, ``(value, (min, max))``.

    Raises
    ------
    DomainError
        If an entry is not real, not finite or ≤ 0 (the message quotes the first such entry).
    """
    return in_domain(x, name, 0.0, math.inf, lo_open=True, hi_open=True, context=context,
                     scalar=scalar, extrema=extrema)


def nonnegative(x: Any, name: str, *, context: str = "", scalar: bool = False, extrema: bool = False,
                allow_inf: bool = False) -> Any:
    """Check finite, non-negative real number(s) (or +inf too, with `allow_inf`).

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
    extrema : bool
        Whether to return ``(value, (min, max))``: the extremes the check reduced (see `in_domain`);
        default `False`.
    allow_inf : bool
        Whether +inf entries are accepted (e.g. a time never reached: the check is then the minimum alone, one
        reduction); NaN is refused as by `as_float_array(..., allow_inf=True)`; default `False`.

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`; with `extrema`, ``(value, (min, max))``.

    Raises
    ------
    DomainError
        If an entry is not real, NaN, < 0, or +inf without `allow_inf`.
    """
    return in_domain(x, name, 0.0, math.inf, lo_open=False, hi_open=True, context=context,
                     scalar=scalar, extrema=extrema, allow_inf=allow_inf)


def in_open_interval(x: Any, name: str, lo: float, hi: float, *, context: str = "",
                     scalar: bool = False, extrema: bool = False) -> Any:
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
    extrema : bool
        Whether to return ``(value, (min, max))``: the extremes the check reduced (see `in_domain`);
        default `False`.

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`; with `extrema`, ``(value, (min, max))``.

    Raises
    ------
    DomainError
        If an entry is not real, not finite or outside (`lo`, `hi`).
    """
    return in_domain(x, name, lo, hi, lo_open=True, hi_open=True, context=context,
                     scalar=scalar, extrema=extrema)


def in_closed_interval(x: Any, name: str, lo: float, hi: float, *, context: str = "",
                       scalar: bool = False, extrema: bool = False) -> Any:
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
    extrema : bool
        Whether to return ``(value, (min, max))``: the extremes the check reduced (see `in_domain`);
        default `False`.

    Returns
    -------
    numpy.ndarray or float
        The float64 array, or a Python float with `scalar`; with `extrema`, ``(value, (min, max))``.

    Raises
    ------
    DomainError
        If an entry is not real, not finite or outside [`lo`, `hi`].
    """
    return in_domain(x, name, lo, hi, lo_open=False, hi_open=False, context=context,
                     scalar=scalar, extrema=extrema)


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
