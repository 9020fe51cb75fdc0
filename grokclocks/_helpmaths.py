r"""Display maths for `help()`: the `.. math::` blocks of a docstring as plain Unicode lines.

The docstrings state each formula as LaTeX in a `.. math::` block, which the documentation site renders with
MathJax (it reads the source, statically). In a terminal, `help()` would print the LaTeX as it is:
`\mathcal L^*=\frac{d_{\rm out}\epsilon}{2P^{-1}(d_{\rm out}/2,\ell)}`. `render_help` rewrites the `__doc__` of a
module's public functions and classes once, at import, so that `help()` shows `L* = (d_out ε)/(2P⁻¹(d_out/2,ℓ))`,
in the convention of the docstrings' inline maths (Greek letters, sub- and superscripts as `_x` / `^x`, with
Unicode digits and signs where a terminal shows them). Package faces call it through
`grokclocks._facade.set_home`, the other modules through `grokclocks._fielddocs.document_records`, which each
calls at its end. It costs about 30 ms of CPU at import (29 ms for the core, 37 ms with `grokclocks.sim`, the
~190 formulas of the package; measured on a 2-core EPYC at load average 15).

`latex_to_unicode` handles the LaTeX the package's docstrings use (tests/test_docstrings.py checks that no
`help()` text keeps a command); an unknown command keeps its name without the backslash (`strict=True` raises).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["latex_to_unicode", "plain_maths", "render_help"]

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "varrho": "ϱ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "ϕ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
_SYMBOLS = {
    "ell": "ℓ", "infty": "∞", "partial": "∂", "nabla": "∇", "sum": "Σ", "prod": "∏", "int": "∫", "pm": "±",
    "mp": "∓", "times": "×", "cdot": "·", "cdots": "⋯", "dots": "…", "ldots": "…", "odot": "⊙", "otimes": "⊗",
    "circ": "∘", "star": "⋆", "ast": "∗", "top": "⊤", "perp": "⊥", "forall": "∀", "exists": "∃",
    "emptyset": "∅", "wedge": "∧", "vee": "∨", "cap": "∩", "cup": "∪", "setminus": "∖", "prime": "′",
    "lVert": "‖", "rVert": "‖", "Vert": "‖", "lvert": "|", "rvert": "|", "vert": "|", "mid": "|",
    "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋", "langle": "⟨", "rangle": "⟩",
    "hbar": "ℏ", "neg": "¬",
}
_RELATIONS = {
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "simeq": "≃",
    "sim": "∼", "propto": "∝", "equiv": "≡", "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "mapsto": "↦", "Rightarrow": "⇒", "implies": "⇒",
    "iff": "⇔", "ll": "≪", "gg": "≫", "lesssim": "≲", "gtrsim": "≳",
}
_FUNCTIONS = {"log", "ln", "exp", "min", "max", "det", "cos", "sin", "tan", "tanh", "cosh", "sinh", "inf", "sup",
              "arg", "lim", "dim", "ker", "Pr", "deg", "gcd"}
_SPACES = {",": " ", ";": " ", ":": " ", "!": "", " ": " ", "\n": " ", "quad": "  ", "qquad": "    "}
_ESCAPED = {"{": "{", "}": "}", "|": "‖", "_": "_", "%": "%", "#": "#", "&": "&", "$": "$"}
_SIZES = {"big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", "Biggl", "Biggr",
          "left", "right", "displaystyle", "textstyle", "limits", "nolimits"}
_FONTS = {"mathrm", "mathbb", "text", "textrm", "texttt", "textit", "mathit", "mathbf", "mathsf", "mathcal", "mathscr",
          "operatorname", "mathrel", "mathop", "boldsymbol", "bm", "emph"}
_TEXT_FONTS = {"text", "textrm", "texttt", "textit", "emph"}  # their argument is words: '-' stays a hyphen
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ"}
_ACCENTS = {"bar": "\u0304", "overline": "\u0305", "hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303",
            "widetilde": "\u0303", "dot": "\u0307", "ddot": "\u0308", "vec": "\u20d7", "check": "\u030c"}
_ACCENT_NAMES = {"overline": "bar", "widetilde": "tilde", "widehat": "hat"}  # on several characters: bar(ŷ_i)
_SUP = dict(zip("0123456789+-−=()⊤⋆*′", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵀ**′"))
_SUB = dict(zip("0123456789+-−=()", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎"))
# one number, an ASCII name (d_out, erf), or one letter with its accents and scripts (η₀, ε², λ_max); a run of
# Greek letters (πη₀) is a product, not a name
_SCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼ᵀ*′₀₁₂₃₄₅₆₇₈₉₊₋"
_ATOM = re.compile(rf"(?:\d+(?:\.\d+)?|[A-Za-z][A-Za-z0-9]*|[^\W\d_])[\u0300-\u036f\u20d7]*"
                   rf"(?:_[A-Za-z0-9]+)?[{_SCRIPTS}]*(?:_[A-Za-z0-9]+)?")
_TOKEN = re.compile(r"\\([A-Za-z]+)|\\(.)|([{}^_&\[\]])|(\n)|([ \t]+)|(.)", re.DOTALL)
_SIGN = "\x01"  # marks a top-level + or − until its line is known: binary (a + b) or a sign (= −1, (−x)
_BINARY_AFTER = re.compile(r"[\w)\]}|‖′*⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ᵀ₀₁₂₃₄₅₆₇₈₉₊₋∞\u0300-\u036f]$")
_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+math::[ \t]*(?P<rest>.*)$")


class UnknownLatex(ValueError):
    """A LaTeX command `latex_to_unicode(..., strict=True)` does not know."""


def _tokens(tex: str) -> list[tuple[str, str]]:
    out = []
    for m in _TOKEN.finditer(tex):
        word, sym, special, newline, space, char = m.groups()
        if word is not None:
            out.append(("cmd", word))
        elif sym is not None:
            out.append(("sym", sym))
        elif special is not None:
            out.append((special, special))
        elif newline is not None:
            out.append(("nl", "\n"))
        elif space is not None:
            out.append(("space", " "))
        else:
            out.append(("char", char))
    return out


def _matched(text: str) -> bool:
    """Whether `text` is one bracketed group: '(...)' with the parentheses matching each other."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, c in enumerate(text):
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and i < len(text) - 1:
            return False
    return True


def _atomic(text: str) -> bool:
    """One number, one name (with its scripts) or one bracketed group, optionally raised to a power."""
    text = text.strip()
    if _ATOM.fullmatch(text) or re.fullmatch(r"(\|[^|]*\||‖[^‖]*‖)([_^]\w+|[⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉])*", text):
        return True
    if text.startswith(("√", "∛", "∜")) and len(text) > 1:
        return _atomic(text[1:]) or _matched(text[1:])
    m = re.fullmatch(r"(\(.*\))([⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ᵀ*′]*|\^\w+)", text)  # (x+y)², not f(x): a(2θ−1) is a product
    return bool(m and _matched(m.group(1)))


def _wrap(text: str) -> str:
    return text if _atomic(text) or _matched(text.strip()) else f"({text.strip()})"


def _script(text: str, table: dict[str, str], mark: str) -> str:
    """A sub- or superscript: in Unicode where every character has a form (x², ‖x‖₂, Wᵀ, t*, λ₋), else
    `_out` / `^k` for one word (one letter for a superscript), else `_(i=1)` / `^(p/2)`."""
    text = text.strip()
    if text and all(c in table for c in text):
        return "".join(table[c] for c in text)
    if (re.fullmatch(r"[^\W_]+", text) and mark == "_") or len(text) == 1 or _matched(text):
        return mark + text
    return f"{mark}({text})"


_WORD_SCRIPT = re.compile(r"[_^][^\W\d_][^\W_]*$")


def _ends_open(part: str) -> bool:
    """Whether `part` ends in a script written as `_word` / `_(...)` or a bare big operator: a letter right after
    it would read as part of it."""
    if _WORD_SCRIPT.search(part) or part[-1:] in ("Σ", "∏", "∫"):
        return True
    if part.endswith(")"):
        depth = 0
        for k in range(len(part) - 1, -1, -1):
            depth += part[k] == ")"
            depth -= part[k] == "("
            if depth == 0:
                return k > 0 and part[k - 1] in "_^"
    return False


class _Op(str):
    """An operator's name (log, max, tr): set off by a space from a factor before it (V diag(ν), log max(…))."""


class _Frac(str):
    """A fraction a/b as rendered: parenthesised when a factor stands right before or after it."""


def _factor_end(text: str) -> bool:
    return bool(text) and (text[-1].isalnum() or text[-1] in ")]}‖|′*" or "\u0300" <= text[-1] <= "\u036f")


def _factor_start(text: str) -> bool:
    return bool(text) and (text[0].isalnum() or text[0] in "([{‖|√∛∜Σ∏∫∂∇")


def _products(parts: list[str]) -> str:
    """Join rendered parts; a fraction that multiplies a neighbour is parenthesised: (1/c)[…], log((K−1)/ε)."""
    parts = [p for p in parts if p]
    if len(parts) < 2:
        return "".join(parts)
    out = list(parts)
    for i, part in enumerate(parts[:-1]):  # x_i y, not x_iy: a script or a big operator followed by an operand
        if _ends_open(part) and (parts[i + 1][:1].isalnum() or parts[i + 1][:1] in "√Σ∫∂∇"):
            out[i] = part + " "
    for i, part in enumerate(parts):
        if isinstance(part, _Op) and i > 0 and (parts[i - 1][-1:].isalnum() or parts[i - 1][-1:] in ")]"):
            out[i] = " " + out[i]
        if not isinstance(part, _Frac):
            continue
        before = parts[i - 1] if i > 0 else ""
        after = parts[i + 1] if i + 1 < len(parts) else ""
        if after in (" ", "\n") and i + 2 < len(parts) and parts[i + 2][:1].isalpha():
            after = parts[i + 2]
        if _factor_end(before) or _factor_start(after):
            out[i] = f"({part})"
    return "".join(out)


def _top(text: str) -> str:
    """`text` without what its brackets enclose (what is at the top level)."""
    prev = None
    while prev != text:
        prev, text = text, re.sub(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}|\|[^|]*\||‖[^‖]*‖", "", text)
    return text


class _Parser:
    def __init__(self, tex: str, strict: bool) -> None:
        self.toks = _tokens(tex) + [("end", "")]  # the end: peek() never runs past it
        self.i = 0
        self.strict = strict
        self.scripted = 0  # inside a sub- or superscript: signs stay tight (e^(−s(ν+g)))

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def operand_follows(self) -> bool:
        """Whether a letter, digit, Greek letter or font command comes next (spaces skipped)."""
        j = self.i
        while self.toks[j][0] == "space":
            j += 1
        kind, value = self.toks[j]
        return kind == "{" or (kind == "char" and value.isalnum()) or (kind == "cmd" and (
            value in _GREEK or value in _FONTS or value in ("nabla", "partial", "ell", "sum", "prod", "int")))

    def skip_blank(self) -> None:
        """Spaces (not line breaks) before a script: `x _i` is `x_i`."""
        j = self.i
        while self.toks[j][0] == "space":
            j += 1
        if self.toks[j][0] in ("^", "_"):
            self.i = j

    def skip_space(self) -> None:
        while self.toks[self.i][0] in ("space", "nl"):
            self.i += 1

    # ------------------------------------------------------------------ arguments
    def group(self, text: bool = False) -> str:
        """The contents of '{...}' (the '{' taken already)."""
        return self.sequence(until="}", text=text, top=False)

    def argument(self, text: bool = False) -> str:
        """One argument: a braced group or a single token."""
        self.skip_space()
        tok = self.peek()
        if tok[0] == "end":
            return ""
        if tok[0] == "{":
            self.take()
            return self.group(text=text)
        return self.atom(text=text, top=False)

    def optional(self) -> str | None:
        """An optional '[...]' argument."""
        self.skip_space()
        if self.toks[self.i][0] == "[":
            self.take()
            return self.sequence(until="]", top=False)
        return None

    # ------------------------------------------------------------------ the grammar
    def sequence(self, until: str | None = None, text: bool = False, top: bool = True) -> str:
        parts: list[str] = []
        while True:
            tok = self.toks[self.i]
            if tok[0] == "end":
                break
            if until is not None and tok[0] == until:
                self.take()
                break
            if tok[0] in ("space", "nl"):
                self.take()
                parts.append("\n" if (tok[0] == "nl" and top) else " ")
                continue
            if tok[0] in ("^", "_"):  # a script with no base (e.g. after a group): attach to what precedes
                parts.append(self.scripts(""))
                continue
            parts.append(self.scripts(self.atom(text=text, top=top)))
        return _products(parts)

    def scripts(self, base: str) -> str:
        self.skip_blank()
        while self.toks[self.i][0] in ("^", "_"):
            mark = self.take()[0]
            self.scripted += 1
            try:
                arg = self.argument()
            finally:
                self.scripted -= 1
            base += _script(arg, _SUP if mark == "^" else _SUB, mark)
        return base

    def atom(self, text: bool = False, top: bool = False) -> str:
        kind, value = self.take()
        if kind == "{":
            return self.group(text=text)
        if kind in ("}", "]"):  # unbalanced: shown as it is
            return value
        if kind == "[":
            return "["
        if kind == "&":
            return ", "
        if kind == "char":
            if value in "+-" and not self.scripted and not text:  # spaced where binary (_spaced_signs)
                return _SIGN + {"-": "−", "+": "+"}[value]
            if value == "-" and not text:
                return "−"
            if value in "=<>" and top:
                return f" {value} "
            if value == "~":
                return " "
            if value == "'":
                return "′"
            if value == "$":  # maths inside \text{...}: the same characters
                return ""
            return value
        if kind == "sym":
            if value in _SPACES:
                return _SPACES[value]
            if value == "\\":
                return "\n" if top else "; "
            if value in _ESCAPED:
                return _ESCAPED[value]
            return self.unknown("\\" + value)
        out = self.command(value, text=text, top=top)
        self.after_command()
        return out

    def after_command(self) -> None:
        """A space after a control word is not text (LaTeX drops it: `\\lVert h` is ‖h), unless an operator
        follows, where it spaces the operator as the source does (`\\infty + D` stays ∞ + D)."""
        if self.toks[self.i][0] != "space":
            return
        nxt = self.toks[self.i + 1]
        if ((nxt[0] == "char" and nxt[1] in "+-=<>,;:") or nxt[0] in ("nl", "&")
                                or (nxt[0] == "cmd" and nxt[1] in _RELATIONS)):
            return
        self.i += 1

    def command(self, name: str, text: bool, top: bool) -> str:
        if name in _GREEK:
            return _GREEK[name]
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        if name in _RELATIONS:
            return f" {_RELATIONS[name]} " if top else _RELATIONS[name]
        if name in _SPACES:
            return _SPACES[name]
        if name in _FUNCTIONS:  # 'ln s', 'log λ', but 'log(1+x)', 'min{...}', 'max_i'
            return _Op(name + (" " if self.operand_follows() else ""))
        if name in _SIZES:
            return ""
        if name == "rm":  # {\rm out}: the rest of the group is upright text
            return ""
        if name == "bmod":
            return " mod "
        if name == "pmod":
            return f" (mod {self.argument()})"
        if name in _FONTS:
            arg = self.argument(text=name in _TEXT_FONTS)
            if name == "mathbb":
                return _BLACKBOARD.get(arg, arg)
            if name == "operatorname":  # an operator's name: 'rank A', 'tr G'
                return _Op(arg + (" " if self.operand_follows() else ""))
            if name == "mathrel" and self.peek() == ("char", "="):  # S \mathrel{*}= a: an update, S *= a
                self.take()
                return f" {arg}= " if top else f"{arg}="
            return arg
        if name in ("frac", "tfrac", "dfrac"):
            num, den = self.argument(), self.argument()
            num = num.strip()
            if re.search(r"[\s+−=,/Σ∏∫]", _top(num)):
                num = f"({num})"
            return _Frac(f"{num}/{_wrap(den)}")
        if name == "sqrt":
            index = self.optional()
            arg = self.argument()
            root = {"3": "∛", "4": "∜"}.get(index or "", "√" if index is None else f"{index}√")
            return root + _wrap(arg)
        if name == "binom":
            n, k = self.argument(), self.argument()
            return f"C({n.strip()}, {k.strip()})"
        if name in _ACCENTS:
            arg = self.argument().strip()
            base = re.sub(r"[\u0300-\u036f\u20d7]", "", arg)
            if len(base) == 1:
                return arg + _ACCENTS[name]
            return f"{_ACCENT_NAMES.get(name, name)}({arg})"
        if name == "stackrel":
            above, rel = self.argument(), self.argument()
            return f" {rel.strip()}({above.strip()}) " if top else f"{rel.strip()}({above.strip()})"
        if name in ("xrightarrow", "xleftarrow"):
            below = self.optional()
            above = self.argument()
            arrow = "→" if name == "xrightarrow" else "←"
            note = ", ".join(x.strip() for x in (above, below or "") if x.strip())
            return f" {arrow}({note}) " if note else f" {arrow} "
        if name == "begin":
            env = self.argument(text=True).strip()
            body = self.environment()
            return "{ " + body + " }" if env == "cases" else body
        if name == "end":
            self.argument(text=True)
            return ""
        if name == "not":
            return self.atom(top=False) + "\u0338"
        return self.unknown("\\" + name)

    def environment(self) -> str:
        """The body of \\begin{...} up to its \\end{...}: rows joined by '; ', columns by ' '."""
        parts: list[str] = []
        depth = 0
        while self.toks[self.i][0] != "end":
            kind, value = self.toks[self.i]
            if kind == "cmd" and value == "end" and depth == 0:
                self.take()
                self.argument(text=True)
                break
            if kind == "cmd" and value == "begin":
                depth += 1
            if kind in ("space", "nl"):
                self.take()
                parts.append(" ")
                continue
            if kind in ("^", "_"):
                parts.append(self.scripts(""))
                continue
            parts.append(self.scripts(self.atom(top=False)))
        rows = [re.sub(r",\s*,", ",", re.sub(r"\s+", " ", r)).strip(" ,") for r in "".join(parts).split("; ")]
        return "; ".join(r for r in rows if r)

    def unknown(self, command: str) -> str:
        if self.strict:
            raise UnknownLatex(f"unknown LaTeX command {command}")
        return command.lstrip("\\")


def _spaced_signs(line: str) -> str:
    """A top-level + or − between two terms gets a space on each side (t*_gen − t*_tr); a sign stays tight."""
    parts = line.split(_SIGN)
    out = parts[0]
    for part in parts[1:]:
        sign, rest = part[0], part[1:]
        if _BINARY_AFTER.search(out.rstrip()) and out.strip():
            out = out.rstrip() + f" {sign} " + rest.lstrip()
        else:
            out += sign + rest
    return out


def latex_to_unicode(tex: str, *, strict: bool = False) -> str:
    r"""The LaTeX of a display formula as plain Unicode text, one line per source line.

    `\frac{a}{b}` becomes a/b (parenthesised where needed), Greek letters and operators their symbols,
    `x^{2}` x², `d_{\rm out}` d_out, `\sqrt\lambda` √λ, `\binom{n}{k}` C(n, k), a `cases` environment
    { a, if; b, else }; sizes (`\Big`), spacing commands and fonts (`\mathcal`, `\text`) leave their content.
    With `strict`, a command not known raises `UnknownLatex` (else its name is kept without the backslash).
    """
    out = _Parser(tex, strict).sequence()
    lines = []
    for line in out.split("\n"):
        line = _spaced_signs(line)
        line = re.sub(r"(?<=\S)  +(?=[^ ])", lambda m: m.group(0) if len(m.group(0)) >= 4 else " ", line.strip())
        line = re.sub(r" +([,.;:)\]])", r"\1", line)
        line = re.sub(r"([(\[]) +", r"\1", line)
        if line:
            lines.append(line)
    return "\n".join(lines)


def plain_maths(doc: str | None, *, strict: bool = False) -> str | None:
    """`doc` with each `.. math::` block replaced by its formula in Unicode, indented as the block's body was."""
    if not doc or ".. math::" not in doc:
        return doc
    lines = doc.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        base = len(m.group("indent").expandtabs())
        body = [m.group("rest")] if m.group("rest").strip() else []
        i += 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > base):
            body.append(lines[i].strip())
            i += 1
        pad = " " * (base + 4)
        formula = latex_to_unicode("\n".join(b for b in body if b), strict=strict)
        out += [pad + f for f in formula.split("\n")] + [""]
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text)


def _set_doc(obj: Any) -> None:
    doc = getattr(obj, "__doc__", None)
    if isinstance(doc, str) and ".. math::" in doc:
        try:
            obj.__doc__ = plain_maths(doc)
        except (AttributeError, TypeError):  # a builtin or slot without a writable __doc__
            pass


def _set_class_doc(cls: type) -> None:
    """The class's own docstring, read without building it: a record class's `__doc__` is made on first read
    (grokclocks._fielddocs: its docstring `base` plus the Attributes section of its fields), so its `base` is
    rewritten instead, before anything has read it."""
    raw = vars(cls).get("__doc__")
    if isinstance(raw, str):
        if ".. math::" in raw:
            cls.__doc__ = plain_maths(raw)
    elif isinstance(getattr(raw, "base", None), str) and ".. math::" in raw.base:
        raw.base = plain_maths(raw.base)


def render_help(namespace: Mapping[str, Any] | dict, names: Iterable[str] | None = None) -> None:
    """Rewrite the `.. math::` blocks of a module's `help()` texts (its docstring, and those of its public functions
    and classes with their methods and properties) as Unicode, once, at import.

    `names` defaults to the module's `__all__`, else its public names defined in it. Objects from outside grokclocks
    (neither defined in the module nor in grokclocks) are left alone; the site, which reads the source, keeps the
    LaTeX.
    """
    if isinstance(namespace.get("__doc__"), str) and ".. math::" in namespace["__doc__"]:
        namespace["__doc__"] = plain_maths(namespace["__doc__"])  # type: ignore[index]
    module = namespace.get("__name__", "")
    if names is None:
        names = namespace.get("__all__") or [n for n, v in namespace.items() if not n.startswith("_")
                                              and getattr(v, "__module__", None) == module]
    for name in names:
        obj = namespace.get(name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        home = str(getattr(obj, "__module__", ""))
        if not (home.startswith("grokclocks") or home == module):  # numpy's, scipy's: not ours to change
            continue
        if not inspect.isclass(obj):
            _set_doc(obj)
        else:
            _set_class_doc(obj)
            for member in vars(obj).values():
                func = getattr(member, "__func__", member)  # staticmethod / classmethod
                if inspect.isfunction(func):
                    _set_doc(func)
                elif isinstance(member, property):
                    _set_doc(member)
                    _set_doc(member.fget)
