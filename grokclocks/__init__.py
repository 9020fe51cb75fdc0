"""grokclocks: executable grokking theory.

Closed-form predictions of when a network grokks, from five papers, each implemented exactly
(with the papers' errors corrected, see `grokclocks.errata`) and checked against training runs by
`pytest verify`.  The core (this package minus `grokclocks.sim`) needs only
numpy/scipy/mpmath/sympy; the simulation layer `grokclocks.sim` imports JAX when used.

>>> from grokclocks.linear import grok_time
>>> round(grok_time(0.5, 1e-3, 0.01))   # Levi et al.: Δt at λ = 0.5, ε = 10⁻³, η₀ = 0.01
431
"""

from __future__ import annotations

__version__ = "0.1.0"
"""The package version (PEP 440 string)."""

from . import citations, errata, linear, rmt
from ._validate import DomainError, OutputExistsError
from .citations import cite
from .linear import ERF_SQRT2, grok_time, grok_time_grid, loss_gen, loss_train, t_star

__all__ = [
    "__version__",
    "DomainError",
    "OutputExistsError",
    "cite",
    "citations",
    "errata",
    "linear",
    "rmt",
    "ERF_SQRT2",
    "grok_time",
    "grok_time_grid",
    "loss_gen",
    "loss_train",
    "t_star",
]

del annotations  # left by `from __future__ import annotations`; not part of the API
