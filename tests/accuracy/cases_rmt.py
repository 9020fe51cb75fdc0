"""Accuracy cases for grokclocks.rmt (the Marchenko–Pastur law)."""

from __future__ import annotations

import mpmath

from grokclocks import rmt
from harness import TINY, AccuracyCase, Arg

CASES = [
    AccuracyCase("grokclocks.rmt.mp_edges [lam_+]", lambda lam: rmt.mp_edges(lam)[1],
                 lambda lam: (1 + mpmath.sqrt(lam)) ** 2, {"lam": Arg(TINY, 1e300)}, rtol=4e-16),
]
