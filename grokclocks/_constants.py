"""Constants shared by several theory modules (a leaf module: it imports no other grokclocks module).

It exists so that `grokclocks.linear` and the grid engine `grokclocks._mpgrid` can both use the same
accuracy level without importing each other (tests/test_architecture.py checks that the modules of
grokclocks import one another without a cycle).
"""

from __future__ import annotations

import math

from scipy import special

__all__ = ["ERF_SQRT2"]

ERF_SQRT2: float = float(special.erf(math.sqrt(2.0)))
"""The paper's "95 %" accuracy level erf(√2) = 0.9544997361036416, for which L* = ε/4 exactly at d_out = 1.

The default `level` of every function of `grokclocks.linear` except the figure tables `fig2_table` and
`fig7_tables`, which follow the 0.95 of the paper's Figs. 2 and 7 (spec `levi:conv-acc`).
"""
