"""grokclocks: executable grokking theory.

Closed-form predictions of *when* a network grokks, from five papers, each implemented exactly
(with the papers' errors corrected, see :mod:`grokclocks.errata`) and checked against training
runs by ``pytest verify``.  The core (this package minus :mod:`grokclocks.sim`) needs only
numpy/scipy/mpmath/sympy; the simulation layer imports JAX when used.
"""

from __future__ import annotations

__version__ = "0.1.0"

from ._validate import DomainError
from .citations import cite, coverage

__all__ = ["__version__", "DomainError", "cite", "coverage"]
