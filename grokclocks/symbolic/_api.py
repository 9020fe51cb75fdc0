"""`formulas`, `formula`, `formula_record` and `latex`: the registry of sympy forms, built on first use.

Nothing here imports sympy at load: the per-paper modules (which do) are imported the first time a
formula is asked for, so `import grokclocks.symbolic` costs a few microseconds and the numeric core
never pays for sympy.
"""

from __future__ import annotations

import difflib
import functools
import importlib
from typing import Any

from .. import _validate as V
from ..citations import PAPERS, SPEC
from ._record import Formula

__all__ = ["formulas", "formula", "formula_record", "formula_records", "latex"]

# one module per paper, in the order of grokclocks.citations.PAPERS; the clocks paper's module also holds
# the spectral identities (grokclocks.spectral implements that paper's section 2 and 4-5)
_MODULES = ("_levi", "_clocks", "_kramers", "_uniformity", "_repulsion")


@functools.cache
def _registry() -> dict[str, Formula]:
    out: dict[str, Formula] = {}
    for name in _MODULES:
        for f in importlib.import_module(f"{__package__}.{name}").FORMULAS:
            if f.key in out:  # pragma: no cover - guarded by tests/test_symbolic.py
                raise AssertionError(f"duplicate formula key {f.key}")
            if f.spec_id not in SPEC or not (f.key == f.spec_id or f.key.startswith(f.spec_id + "/")):
                raise AssertionError(f"formula {f.key}: spec ID {f.spec_id!r}")  # pragma: no cover
            out[f.key] = f
    return out


def _function_name(obj: Any) -> str | None:
    """`module.qualname` of a callable (a `functools.partial` is unwrapped), or None."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{mod}.{qual}" if mod and qual else None


def _nearest(name: str, pool: list[str]) -> str:
    close = difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
    return f"; nearest: {', '.join(close)}" if close else ""


def formula_record(target: Any) -> Formula:
    """The `Formula` record of a spec result or of a function.

    Parameters
    ----------
    target : str or callable
        A formula key (`"levi:eq11"`, `"levi:eq6/edges"`), a spec ID that has one formula, a function
        of grokclocks (`grokclocks.linear.grok_time_asymptotic`) or its name (dotted,
        `"linear.grok_time_asymptotic"`, or bare, `"grok_time_asymptotic"`).  A function with several
        formulas (`loss_train`: eq. 8, and eq. 14 with weight decay) gives its first; name the key for
        the others.

    Returns
    -------
    Formula
        The record: the sympy expression, its LaTeX left side, the paper's equation number, the
        implementing function and how it is called.

    Raises
    ------
    UnknownKey
        If `target` names no formula: an unknown key or spec ID (the message lists the nearest), a spec ID
        with several formulas (the message lists them), or a function with no closed form here (a
        `DomainError` and a `KeyError`).
    """
    reg = _registry()
    if isinstance(target, str) and ":" in target:
        if target in reg:
            return reg[target]
        parts = [k for k in reg if k.startswith(target + "/")]
        if len(parts) == 1:
            return reg[parts[0]]
        if parts:
            raise V.UnknownKey(f"target {target!r} (a spec ID) has {len(parts)} formulas: {', '.join(parts)}; name one")
        known = "a spec ID without a closed form here" if target in SPEC else "an unknown key"
        raise V.UnknownKey(f"target {target!r} is {known} (formula keys: 'levi:eq11', 'levi:eq6/edges', ...; "
                           f"grokclocks.symbolic.formulas() lists them{_nearest(target, list(reg))})")
    name = target if isinstance(target, str) else _function_name(target)
    if not name:
        raise V.UnknownKey(f"target must be a formula key, a spec ID or a grokclocks function (got {V.show(target)})")
    short = name.removeprefix("grokclocks.")
    for f in reg.values():
        if f.function and (f.function == name or f.function.removeprefix("grokclocks.") == short
                           or f.function.endswith("." + name)):
            return f
    functions = sorted({f.function.removeprefix("grokclocks.") for f in reg.values() if f.function})
    raise V.UnknownKey(f"target {name!r} has no closed form in grokclocks.symbolic (it is computed by root finding, "
                       f"quadrature or simulation, or it is not a grokclocks function{_nearest(short, functions)})")


def formula_records(target: Any = None) -> list[Formula]:
    """Every `Formula` record, or all those of a paper, a spec ID or a function.

    Parameters
    ----------
    target : str or callable, optional
        `None` (default): every record.  A paper key (`"levi"`), a spec ID (`"levi:eq6"`: all its
        parts), a formula key, or a grokclocks function or its name (`loss_train`: eq. 8 and eq. 14).

    Returns
    -------
    list of Formula
        The records in registry order (paper order, then as the spec lists them); never empty.

    Raises
    ------
    UnknownKey
        If `target` names no formula (the message says why, as `formula_record`'s).
    """
    reg = _registry()
    if target is None:
        return list(reg.values())
    if isinstance(target, str) and target in PAPERS:
        return [f for k, f in reg.items() if k.startswith(target + ":")]
    if isinstance(target, str) and ":" in target:
        found = [f for k, f in reg.items() if k == target or k.startswith(target + "/")]
        return found or [formula_record(target)]  # formula_record raises with the reason
    first = formula_record(target)
    return [f for f in reg.values() if f.function == first.function]


def formulas() -> dict[str, Any]:
    """Every closed form of the five papers as a sympy expression, by formula key.

    Returns
    -------
    dict of str to sympy expression
        Key -> expression, in paper order (`levi`, `clocks`, `kramers`, `uniformity`,
        `repulsion`).  A key is the spec ID of the result (`"levi:eq11"`) or `"<spec ID>/<part>"`
        when the result has several formulas.  Values are the right-hand sides, errata applied; a
        `sympy.Tuple` where the function returns several values, a `sympy.Eq` for an implicit result
        (a crossing time defined by L(t*) = L*).  Symbols carry their assumptions (positive, integer);
        interval domains such as 0 < λ < 1 are in `formula_record(key).domain`.

    Examples
    --------
    >>> from grokclocks.symbolic import formulas
    >>> import sympy as sp
    >>> f = formulas()
    >>> lam = f["levi:eq11"].free_symbols
    >>> sorted(str(x) for x in lam)
    ['eta_0', 'lambda']
    """
    return {k: f.expr for k, f in _registry().items()}


def formula(target: Any) -> Any:
    """The sympy expression of a spec result or of a function.

    Parameters
    ----------
    target : str or callable
        A formula key or spec ID (`"levi:eq11"`, `"levi:eq6/edges"`), a grokclocks function or its
        name; see `formula_record`.

    Returns
    -------
    sympy expression
        The right-hand side (a `sympy.Tuple` for several values, a `sympy.Eq` for an implicit result).

    Raises
    ------
    UnknownKey
        If `target` names no formula (see `formula_record`).

    Examples
    --------
    >>> import sympy as sp
    >>> from grokclocks.symbolic import formula
    >>> dt = formula("levi:eq11")                  # -log(1 - sqrt(lambda))/(2 eta_0 (1 - sqrt(lambda))^2)
    >>> lam = sp.Symbol("lambda", positive=True)
    >>> sp.limit(dt * (1 - sp.sqrt(lam)) ** 2 / -sp.log(1 - sp.sqrt(lam)), lam, 0)
    1/(2*eta_0)
    """
    return formula_record(target).expr


def latex(target: Any) -> str:
    r"""The equation of a spec result or a function in LaTeX, numbered as in the paper.

    Parameters
    ----------
    target : str or callable
        A formula key or spec ID, a grokclocks function or its name; see `formula_record`.

    Returns
    -------
    str
        A LaTeX `equation` environment: a comment naming the equation number (or the theorem), the
        paper's BibTeX key (the entry `grokclocks cite` prints) and the formula key, then `lhs = rhs`
        with a `tag` carrying the paper's equation number (no tag for a theorem, a lemma or a result
        the paper does not number).  It needs `amsmath`.

    Raises
    ------
    UnknownKey
        If `target` names no formula (see `formula_record`).

    Examples
    --------
    >>> from grokclocks.symbolic import latex
    >>> print(latex("levi:eq11"))  # doctest: +NORMALIZE_WHITESPACE
    % eq. (11) of \cite{levi2024grokking}; grokclocks levi:eq11
    \begin{equation}
      \Delta t_{\rm grok} = - \frac{\log{\left(1 - \sqrt{\lambda} \right)}}{2 \eta_{0} \left(1 - \sqrt{\lambda}\right)^{2}}
      \tag{11}
    \end{equation}
    """
    f = formula_record(target)
    body = equation_body(f)
    paper = PAPERS[f.spec_id.split(":", 1)[0]]
    numbered = bool(f.equation) and " " not in f.equation  # "11", "2.7": an equation; "Theorem 3.5": not
    where = (f"eq. ({f.equation}) of" if numbered else f"{f.equation} of" if f.equation
             else "a result not numbered in")
    lines = [f"% {where} \\cite{{{paper.bibkey}}}; grokclocks {f.key}", r"\begin{equation}", f"  {body}"]
    if numbered:
        lines.append(rf"  \tag{{{f.equation}}}")
    lines.append(r"\end{equation}")
    return "\n".join(lines)


def relation(lhs: str) -> str:
    """" = " after a left side, or " " when the left side ends with its own relation (`\\le`, `\\simeq`)."""
    return " " if lhs.rstrip().endswith(("\\le", "\\ge", "\\simeq", "\\approx", "=")) else " = "


def symbol_names(f: Formula) -> dict[Any, str]:
    """Typeset names of the symbols of `f`: the shared ones, then its paper module's `LATEX_NAMES` (a
    symbol is its name and assumptions, so a paper's R must not rename another paper's R)."""
    from . import _symbols

    names = dict(_symbols.LATEX_NAMES)
    paper = f"_{f.spec_id.split(':', 1)[0]}"
    if paper not in _MODULES:  # only the fixed paper modules of this package are ever imported
        raise V.UnknownKey(f"formula {f.key!r} names no paper of grokclocks.symbolic (spec ID {f.spec_id!r})")
    module = importlib.import_module(f"{__package__}.{paper}")
    names.update(getattr(module, "LATEX_NAMES", {}))
    return names


def equation_body(f: Formula) -> str:
    """`lhs = rhs` of a formula record in LaTeX, then its abbreviations (`m(w) = ...`) on a second line
    of a `gathered` block; for an implicit result the two sides of its `Eq`."""
    import sympy as sp

    names = symbol_names(f)

    def tex(e: Any) -> str:
        return sp.latex(e, symbol_names=names)

    shown = f.expr if f.display is None else f.display
    main = f"{tex(shown.lhs)} = {tex(shown.rhs)}" if isinstance(shown, sp.Eq) else f"{f.lhs}{relation(f.lhs)}{tex(shown)}"
    if not f.defs:
        return main
    defs = r",\quad ".join(f"{tex(ph)} = {tex(value)}" for ph, value in f.defs)
    return rf"\begin{{gathered}} {main}, \\ {defs} \end{{gathered}}"
