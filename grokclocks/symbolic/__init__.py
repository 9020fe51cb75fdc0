"""The closed forms of the five papers as sympy expressions: read them, differentiate them, take their
limits, paste them into a paper.

Each expression is the form the library implements (the papers' errata applied), with its symbols named
and assumed as in the docstrings (`lambda` positive, `d_out` a positive integer; interval domains such as
0 < λ < 1 in the record's `domain`).  The same expressions are checked against the numerical functions
at random points (tests/test_symbolic.py), typeset on the theory pages of the documentation, and printed
by `grokclocks cite FUNCTION --latex`.

>>> from grokclocks.symbolic import formula, latex
>>> formula("levi:eq11")          # the eps -> 0 grokking time, Levi et al. eq. (11)
-log(1 - sqrt(lambda))/(2*eta_0*(1 - sqrt(lambda))**2)

sympy is imported when the first formula is asked for, not by `import grokclocks.symbolic`.
"""

from __future__ import annotations

from .._facade import set_home
from ._api import formula, formula_record, formula_records, formulas, latex
from ._record import Formula

__all__ = ["Formula", "formulas", "formula", "formula_record", "formula_records", "latex"]

set_home(__name__, globals(), __all__)
del annotations, set_home
