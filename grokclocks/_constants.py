"""Constants shared by several theory modules (a leaf module: it imports no other grokclocks module).

It exists so that :mod:`grokclocks.linear` and the grid engine :mod:`grokclocks._mpgrid` can both
use the same accuracy level without importing each other (``tests/test_architecture.py`` checks
that the modules of grokclocks import one another without a cycle).
"""

from __future__ import annotations

import math

from scipy import special

__all__ = ["ERF_SQRT2"]

#: The paper's "95 %" accuracy level, :math:`\mathrm{erf}(\sqrt2)=0.9544997\ldots`, for which
#: :math:`\mathcal L^*=\epsilon/4` exactly at :math:`d_{\rm out}=1` (spec ``levi:conv-acc``).
ERF_SQRT2: float = float(special.erf(math.sqrt(2.0)))
