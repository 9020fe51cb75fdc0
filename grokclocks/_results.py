"""Result records shared by several theory modules (a leaf module: it imports no other grokclocks module).

:mod:`grokclocks.clocks` and :mod:`grokclocks.spectral` both return two-sided bounds; they export
this one :class:`Bounds` type.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Bounds"]


class Bounds(NamedTuple):
    """A two-sided bound ``lower <= x <= upper``."""

    lower: float | np.ndarray
    """lower bound."""
    upper: float | np.ndarray
    """upper bound."""
