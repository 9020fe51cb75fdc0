"""Products of powers for the kramers closed forms: the direct product where the extremes prove it, α on blocks."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _floats as FL


def _proven_product(bases: list, powers: list, extrema: list) -> Any:
    """`FL.power_product(bases, powers, extrema)`, the same values, for powers 1 and -1 and the bases' extremes.

    Where `FL.product_stays_normal` proves every factor and partial product normal, the direct product in
    power_product's own operations (left to right; x for power 1, 1.0 / x for -1; a factor of exactly 1 skipped),
    written into the first product's new array, without power_product's set-up (~15 us a call); elsewhere
    `FL.power_product` itself.
    """
    if not FL.product_stays_normal(extrema, powers):
        return FL.power_product(bases, powers, extrema)
    out, own = None, False
    for b, a in zip(bases, powers):
        f = b if a == 1 else 1.0 / b
        if out is None:
            out = f
            own = f is not b and isinstance(f, np.ndarray) and f.ndim > 0
        elif np.ndim(f) == 0 and float(f) == 1.0:
            continue
        elif own and np.ndim(f) <= out.ndim and np.broadcast_shapes(out.shape, np.shape(f)) == out.shape:
            np.multiply(out, f, out=out)
        elif f is not b and isinstance(f, np.ndarray) and f.ndim \
                and np.broadcast_shapes(np.shape(out), f.shape) == f.shape:
            out, own = np.multiply(out, f, out=f), True  # into the new factor 1/b (x y = y x: the same bits)
        else:
            out = out * f
            own = isinstance(out, np.ndarray) and out.ndim > 0
    return out if own or not isinstance(out, np.ndarray) else np.array(out)


def _width_powers(f: Any, *args: Any) -> Any:
    """``f(*args)`` for an elementwise engine `f` whose last argument is the width exponent α (a power of
    `FL.power_product`): where α is an array of more than `FL.BLOCK` points, on blocks of them (`FL.blockwise`;
    power_product's path for an array of powers makes ~10 temporaries of the full size, and at 1e5 points their
    page faults cost more than the powers: 2.5 -> 1.6 ms for N^(α + 1/2)), else at once.  Every point gets the
    same operations either way (power_product decides each point's form from its own numbers)."""
    if np.ndim(args[-1]) == 0 or np.size(args[-1]) <= FL.BLOCK:
        return f(*args)
    return FL.blockwise(f, np.broadcast_shapes(*(np.shape(a) for a in args)), *args)
