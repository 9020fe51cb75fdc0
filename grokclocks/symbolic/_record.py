"""The `Formula` record: one closed form of a paper, as sympy, with what is needed to print it, cite it
and check it against the numerical function that implements it."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class Formula:
    """One result of a paper as a sympy expression, the form the library implements (errata applied)."""

    key: str
    """The formula's key: its spec ID (`"levi:eq11"`), or `"<spec ID>/<part>"` when a result has
    several formulas (`"levi:eq6/density"`, `"levi:eq6/edges"`)."""
    spec_id: str
    """The spec ID of the result (`"levi:eq6"`); `grokclocks.cite` gives its paper."""
    expr: Any
    """The right-hand side as a sympy expression, a `sympy.Tuple` when the function returns several
    values, or a `sympy.Eq` for an implicit result (a crossing time defined by L(t) = L*)."""
    lhs: str
    """LaTeX of the left-hand side (for levi:eq11 the LaTeX of Δt_grok); empty for an implicit result (an `Eq`)."""
    equation: str | None
    """Where the paper states it: an equation number as printed (`"11"`, `"2.7"`), a numbered statement
    (`"Theorem 3.5"`, `"Lemma B.1"`), or `None` for a result the paper does not number (the spec's own
    derivations, such as the Marcum-Q form of E[exp(-s nu)])."""
    function: str | None
    """The dotted name of the numerical function that implements the formula
    (`"grokclocks.linear.grok_time_asymptotic"`), or `None` for an identity with no function of its
    own (then `checked_by` names the test that derives it)."""
    arguments: tuple[tuple[str, str], ...] = ()
    """Pairs (symbol name, parameter name of `function`): how the numerical function is called."""
    fixed: tuple[tuple[str, Any], ...] = ()
    """Keyword arguments of `function` held fixed for this formula (`(("d_out", 1),)`)."""
    domain: tuple[tuple[str, Any], ...] = ()
    """Pairs (symbol name, sympy set) beyond the symbols' assumptions, e.g. `("lambda",
    Interval.open(0, 1))`: where the formula holds as stated."""
    unknown: str | None = None
    """For an implicit result (an `Eq`): the name of the symbol the function solves for (its value)."""
    numeric: str = "closed form"
    """How `function` evaluates the formula: `"closed form"` (it must agree to 1e-12 relative), or what
    other exact method it uses (`"quadrature"`, `"root finding"`, `"series"`) with its tolerance."""
    checked_by: str = ""
    """For a formula with no `function`: the test that derives or checks it (pytest node ID)."""
    note: str = ""
    """One sentence on the formula's status or scope (an erratum applied, an asymptotic regime)."""
    display: Any = None
    """The expression as typeset: `expr` written with the abbreviations of `defs` (`a`, `m(w)`,
    Φ₁(s)) left unexpanded; `None` when `expr` is typeset as it is."""
    defs: tuple[tuple[Any, Any], ...] = ()
    """The abbreviations of `display`: pairs (placeholder, definition), a placeholder being a sympy symbol
    (`a`) or an undefined function applied to its argument (`m(w)`).  `expr` is `display` with every
    placeholder replaced by its definition (`expand`), so the two cannot disagree."""

    def __post_init__(self) -> None:
        if self.display is not None and self.expr is None:
            object.__setattr__(self, "expr", expand(self.display, self.defs))

    @property
    def symbols(self) -> dict[str, Any]:
        """The free symbols of `expr` by name (sympy symbols carry their assumptions)."""
        free = self.expr.free_symbols
        return {str(x): x for x in sorted(free, key=str)}


def _substitute(expr: Any, placeholder: Any, value: Any) -> Any:
    import sympy as sp

    if isinstance(placeholder, sp.Symbol):
        return expr.subs(placeholder, value)
    return expr.replace(placeholder.func, sp.Lambda(placeholder.args, value))


def expand(display: Any, defs: tuple[tuple[Any, Any], ...]) -> Any:
    """`display` with every placeholder of `defs` replaced by its definition.  The definitions are first
    resolved among themselves (a definition may use another, `m_2(w) = -m'(w)`; derivatives are then
    taken), so a placeholder applied to any argument (`m_2(gamma/2)`) expands correctly."""
    import sympy as sp

    def doit_derivatives(e: Any) -> Any:
        return e.replace(lambda x: isinstance(x, sp.Derivative), lambda x: x.doit())

    values = [value for _, value in defs]
    for _ in range(len(defs) + 1):
        before = list(values)
        for j, (placeholder, _) in enumerate(defs):
            values = [v if k == j else doit_derivatives(_substitute(v, placeholder, values[j]))
                      for k, v in enumerate(values)]
        if values == before:
            break
    else:  # pragma: no cover
        raise AssertionError("circular definitions")
    out = display
    for (placeholder, _), value in zip(defs, values):
        out = _substitute(out, placeholder, value)
    return doit_derivatives(out)
