"""Products of powers for the kramers closed forms with an array of width exponents α: on blocks."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _floats as FL


def _width_powers(f: Any, *args: Any) -> Any:
    """``f(*args)`` for an elementwise engine `f` whose last argument is the width exponent α (a power of
    `FL.power_product`): where α is an array of more than `FL.BLOCK` points, on blocks of them (`FL.blockwise`;
    power_product's path for an array of powers makes ~10 temporaries of the full size, and at 1e5 points their
    page faults cost more than the powers: 2.5 -> 1.6 ms for N^(α + 1/2)), else at once.  Every point gets the
    same operations either way (power_product decides each point's form from its own numbers)."""
    if np.ndim(args[-1]) == 0 or np.size(args[-1]) <= FL.BLOCK:
        return f(*args)
    return FL.blockwise(f, np.broadcast_shapes(*(np.shape(a) for a in args)), *args)
