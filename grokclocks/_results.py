"""Result records shared by several theory modules (a leaf module: it imports no other grokclocks module).

`grokclocks.clocks` and `grokclocks.spectral` both return two-sided bounds; they export this one `Bounds`
type.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Bounds"]


class Bounds(NamedTuple):
    """A two-sided bound `lower` ≤ x ≤ `upper` on a quantity x (a named tuple; it unpacks like a plain tuple)."""

    lower: float | np.ndarray
    """The lower bound on the quantity (float, or an array of the quantity's shape)."""
    upper: float | np.ndarray
    """The upper bound on the quantity (float, or an array of the quantity's shape)."""
