"""Write the equations of the theory pages (docs/theory/*.md) from grokclocks.symbolic.

A formula on a theory page is not typed: the page holds a marker naming its formula key and this script
fills in the LaTeX generated from the same sympy expression that tests/test_symbolic.py checks against the
library's functions.  Two markers:

* inline, in a table cell or a sentence: ``<!--f:levi:eq19-->$...$<!--/f-->`` (the equation, no number);
* a block, on lines of their own: ``<!-- formulas: levi:eq11 levi:eq24 -->`` ... ``<!-- /formulas -->``, each
  key a displayed equation with the paper's number (``\\tag``), its spec ID and the function that
  implements it.

``python docs/gen_theory.py`` rewrites the pages (``docs/gen_pages.py`` calls it); ``--check`` exits 1 if a
page is out of date.  tests/test_symbolic.py checks that every page is current.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THEORY = ROOT / "docs" / "theory"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

INLINE = re.compile(r"<!--f:(?P<key>[^>]+?)-->.*?<!--/f-->", re.S)
BLOCK = re.compile(r"^<!-- formulas: (?P<keys>[^>]+?) -->\n.*?^<!-- /formulas -->$", re.S | re.M)


def _markdown_safe(tex: str) -> str:
    """LaTeX that survives a Markdown table: no bare '|' (a cell separator)."""
    tex = tex.replace(r"\left|", r"\left\lvert ").replace(r"\right|", r"\right\rvert ")
    return tex.replace("|", r"\vert ")


def inline(key: str) -> str:
    """``$lhs = rhs$`` of a formula, abbreviations after a comma, for a table cell."""
    import sympy as sp

    from grokclocks.symbolic import formula_record
    from grokclocks.symbolic._api import relation, symbol_names

    f = formula_record(key)
    names = symbol_names(f)

    def tex(e):
        return sp.latex(e, symbol_names=names)

    shown = f.expr if f.display is None else f.display
    main = f"{tex(shown.lhs)} = {tex(shown.rhs)}" if isinstance(shown, sp.Eq) else f"{f.lhs}{relation(f.lhs)}{tex(shown)}"
    defs = [f"{tex(ph)} = {tex(value)}" for ph, value in f.defs]
    return "$" + _markdown_safe(", \\quad ".join([main, *defs])) + "$"


def block(key: str) -> str:
    """A displayed, numbered equation with its spec ID, paper number, function and note."""
    from grokclocks.symbolic import formula_record
    from grokclocks.symbolic._api import equation_body

    f = formula_record(key)
    numbered = bool(f.equation) and " " not in f.equation
    where = f"eq. ({f.equation})" if numbered else (f.equation or "not numbered in the paper")
    fn = f"[`{f.function.removeprefix('grokclocks.')}`][{f.function}]" if f.function else f"`{f.checked_by}`"
    head = f"`{f.key}` — {where} — {fn}" + (f". {f.note[0].upper()}{f.note[1:]}." if f.note else "")
    tag = rf" \tag{{{f.equation}}}" if numbered else ""
    return f"{head}\n\n$$\n{equation_body(f)}{tag}\n$$"


def render(text: str) -> str:
    """`text` with every marker's formulas (re)generated."""
    text = BLOCK.sub(lambda m: (f"<!-- formulas: {m['keys']} -->\n\n"
                                + "\n\n".join(block(k) for k in m["keys"].split())
                                + "\n\n<!-- /formulas -->"), text)
    return INLINE.sub(lambda m: f"<!--f:{m['key']}-->{inline(m['key'])}<!--/f-->", text)


def keys_on_pages() -> dict[str, set[str]]:
    """Page name -> the formula keys its markers name."""
    out = {}
    for page in sorted(THEORY.glob("*.md")):
        text = page.read_text()
        found = {m["key"] for m in INLINE.finditer(text)}
        found |= {k for m in BLOCK.finditer(text) for k in m["keys"].split()}
        out[page.name] = found
    return out


def main(check: bool = False) -> int:
    stale = []
    for page in sorted(THEORY.glob("*.md")):
        text = page.read_text()
        new = render(text)
        if new != text:
            stale.append(page.name)
            if not check:
                page.write_text(new)
    if check and stale:
        print("out of date (run python docs/gen_theory.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(check="--check" in sys.argv[1:]))
