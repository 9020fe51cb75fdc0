"""Broadcasting of array arguments: the `broadcasting` decorator, flat broadcast engines' inputs, scalars out.

A scalar call and an array call run the same code: `broadcast_flat` hands an engine 1-d arrays and
`scalar_or_array` turns a 0-d result back into a Python float.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from ._errors import DomainError


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
    if all(type(a) is float or (type(a) is np.ndarray and a.ndim == 0) for a in arrays):
        # a scalar call: one-point arrays directly (np.broadcast_arrays of 0-d inputs costs ~5 us)
        return (), [np.array([a], dtype=np.float64) for a in arrays]
    b = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in arrays])
    return b[0].shape, [np.ascontiguousarray(x).reshape(-1) for x in b]


def _check_broadcast(params: list[str], checked: set[str], args: tuple, kwargs: dict) -> None:
    """`broadcasting`'s check: the shapes of the array arguments `checked` broadcast, else `DomainError` naming
    each parameter and its shape (a ragged list is left to the parameter's own check)."""
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

        positions = [i for i, p in enumerate(params) if p in checked]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            # the common case at the cost of a few attribute reads (the general form below cost ~5 us a call):
            # arrays of one shape and numbers need no np.broadcast_shapes
            first, more = None, False
            for i in positions:
                if i >= len(args):
                    break
                value = args[i]
                if type(value) is np.ndarray:
                    if first is None:
                        first = value.shape
                    elif value.shape != first:
                        more = True
                        break
                elif isinstance(value, (np.ndarray, list, tuple)):
                    more = True
                    break
            if not more and kwargs:
                more = any(name in checked for name in kwargs)
            if more:
                _check_broadcast(params, checked, args, kwargs)
            return func(*args, **kwargs)

        return wrapper

    return deco
