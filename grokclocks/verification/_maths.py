"""The maths in a verify row's text, typeset on the site; everything else escaped as text.

A row's check and tolerance source are written by the verify tests in plain ASCII maths: `Delta'=-2
Delta^{3/2}`, `lam sigma^(p-1)`, `t*_gen`, `(a=q^2, theta=1-1/q)`, `2*eta=0.02`, `|x|^3`.  The certificate page
shows them through `markdown_maths`, which recognises a small grammar of such expressions and writes each as
inline maths for the site's arithmatex/MathJax (`\\(...\\)`), and every other character through
`grokclocks._escape.markdown_text`.

The row text is not trusted (a merged certificate's text is whatever its file says), so nothing of it reaches
TeX as it is: an expression is rebuilt from its tokens, and the TeX written holds only ASCII letters and digits
of the text, the punctuation `= + - / ( ) , . '`, braces this module writes (balanced), and commands from a
fixed table (Greek letters, `\\mathrm`, `\\to`, `\\le`, `\\ge`, `\\lt`, `\\gt`, `\\sim`, `\\cdot`, `\\vert`,
`\\ln`, `\\log`, `\\exp`, `\\max`, `\\min`).  No backslash, brace, dollar sign, `<`, `&` or `|` of the text gets
into the maths, so a row cannot close the maths early, call a TeX command of its choosing (`\\href`,
`\\class`, `\\require`) or break the table's cells; what is not recognised stays text.
"""

from __future__ import annotations

import re

from .._escape import markdown_text

__all__ = ["markdown_maths", "row_tex"]

# ASCII names of Greek letters as the verify rows write them -> TeX
GREEK = {
    "alpha": r"\alpha", "beta": r"\beta", "gamma": r"\gamma", "Gamma": r"\Gamma", "delta": r"\delta",
    "Delta": r"\Delta", "eps": r"\varepsilon", "epsilon": r"\varepsilon", "zeta": r"\zeta", "eta": r"\eta",
    "theta": r"\theta", "Theta": r"\Theta", "kappa": r"\kappa", "lam": r"\lambda", "lambda": r"\lambda",
    "Lambda": r"\Lambda", "mu": r"\mu", "nu": r"\nu", "xi": r"\xi", "pi": r"\pi", "rho": r"\rho",
    "sigma": r"\sigma", "Sigma": r"\Sigma", "tau": r"\tau", "phi": r"\phi", "Phi": r"\Phi", "chi": r"\chi",
    "psi": r"\psi", "Psi": r"\Psi", "omega": r"\omega", "Omega": r"\Omega",
}
# words that are maths but say nothing alone (`max over 64 seeds` stays text)
FUNCTIONS = {"ln": r"\ln", "log": r"\log", "exp": r"\exp", "max": r"\max", "min": r"\min"}
OPERATORS = {"->": r"\to ", "<=": r"\le ", ">=": r"\ge ", "<": r"\lt ", ">": r"\gt ", "~": r"\sim ", "*": r"\cdot ", "=": "=",
             "+": "+", "-": "-", "/": "/", ",": ",", "(": "(", ")": ")", "|": r"\vert "}
RELATIONS = {"=", "->", "<=", ">=", "<", ">", "~"}

_SUB = r"_[A-Za-z0-9]{1,8}(?![A-Za-z0-9_])"
_SUP = r"\^(?:\{[^{}\n]{1,40}\}|\((?:[^()\n]|\([^()\n]*\)){1,40}\)|-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?|[A-Za-z0-9]{1,4}(?![A-Za-z0-9]))"
_MODS = rf"(?:\*|'|{_SUB}|{_SUP})*"
_TOKEN = re.compile(
    rf"(?P<word>[A-Za-z][A-Za-z0-9]*){_MODS}"
    rf"|(?P<number>[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)(?![A-Za-z0-9_])"
    rf"|(?P<close>[)|]){_MODS}"
    r"|(?P<op>->|<=|>=|[-=+/,(<>~*])"
    r"|(?P<space> +)")


def _word(name: str) -> tuple[str, bool] | None:
    """TeX of a name and whether it alone makes an expression maths (a Greek letter), or None (a word of text)."""
    if name in GREEK:
        return GREEK[name], True
    m = re.fullmatch(r"([A-Za-z])([0-9]{0,3})|([A-Za-z]+?)([0-9]{1,3})", name)
    if m and m.group(1):  # x, t, S0, N2
        return m.group(1) + (f"_{{{m.group(2)}}}" if m.group(2) else ""), False
    if m and m.group(3) in GREEK:  # eta0, sigma1
        return f"{GREEK[m.group(3)]}_{{{m.group(4)}}}", True
    if name in FUNCTIONS:
        return FUNCTIONS[name], False
    return None


def _group(text: str) -> str | None:
    """The TeX of the inside of a superscript `{...}` or `(...)`, or None when it is not all maths."""
    tex = _expression(text)
    return None if tex is None else tex[0]


def _modifiers(mods: str, subscripted: bool = False) -> str | None:
    """The TeX of a name's modifiers (`'`, `*`, `_sub`, `^sup`), or None where TeX would refuse it or the reading
    is unsure: a second subscript (`subscripted`: the name has one already, `L0_tr`), a second superscript (a
    star counts as one: `t*^2`) or a prime after a superscript.  Such a name stays text."""
    out, sub, sup = [], subscripted, False
    for m in re.finditer(rf"\*|'|(?P<sub>{_SUB})|(?P<sup>{_SUP})", mods):
        t = m.group()
        if t == "'":
            if sup:
                return None
            out.append("'")
        elif m.group("sub"):
            if sub:
                return None
            sub = True
            s = t[1:]
            out.append(f"_{{{s}}}" if len(s) == 1 or s.isdigit() else f"_{{\\mathrm{{{s}}}}}")
        else:
            if sup:
                return None
            sup = True
            if t == "*":
                out.append("^{*}")
                continue
            body = t[1:]
            if body[0] in "{(":
                inner = _group(body[1:-1])
                if inner is None:
                    return None
                out.append(f"^{{{inner}}}")
            else:
                out.append(f"^{{{body}}}")
    return "".join(out)


def _expression(text: str) -> tuple[str, bool] | None:
    """The TeX of `text` when all of it is one expression of the grammar, and whether it is maths on its own (a
    Greek letter, a sub- or superscript, a prime, a star or a relation); None otherwise."""
    tex, strong, depth, pos = [], False, 0, 0
    tokens = []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            return None
        tokens.append(m)
        pos = m.end()
    for m in tokens:
        t = m.group()
        if m.group("space"):
            tex.append(" ")
        elif m.group("number"):
            tex.append(t)
        elif m.group("op"):
            depth += t == "("
            strong |= t in RELATIONS
            tex.append(OPERATORS[t])
        else:  # a name or a closing `)` / `|`, with its modifiers
            head = m.group("word") or m.group("close")
            if m.group("word"):
                w = _word(head)
                if w is None:
                    return None
                base, greek = w
                strong |= greek
            else:
                base = OPERATORS[head]
                depth -= head == ")"
                if depth < 0:
                    return None
            mods = _modifiers(t[len(head):], subscripted="_" in base)
            if mods is None:
                return None
            strong |= bool(mods)
            tex.append(base + mods)
    if depth != 0:
        return None
    return "".join(tex).strip(), strong


# a run of characters that can be maths: letters, digits, the operators and modifiers, braces and parentheses of
# superscripts (their inside may hold spaces: `e^(-2 eta0 t)`), and spaces next to an operator (`t = t_test -
# t_train`); split further at other spaces
_PIECE = r"(?:\^\([^()\n]{1,40}\)|\^\{[^{}\n]{1,40}\}|[A-Za-z0-9_*'^{}()|=+\-/<>~.,])+"
_CANDIDATE = re.compile(rf"{_PIECE}(?: *(?:->|<=|>=|[=+\-/<>~]) *{_PIECE})*")


def row_tex(fragment: str) -> str | None:
    """The TeX of one candidate fragment of a row's text when it is maths (see `markdown_maths`), else None.

    Parameters
    ----------
    fragment : str
        A run of the text without spaces other than around an operator, e.g. `sigma^(p-1)` or `lam=0.3`.

    Returns
    -------
    str or None
        TeX built from the fragment's tokens (letters, digits, `= + - / ( ) , . '`, braces of this module and
        commands of its fixed table), or None: not all of the grammar, or nothing in it that is maths alone
        (a number, a single letter, `1-D`).
    """
    if len(fragment) > 200 or "^^" in fragment or fragment.endswith(("-", "+", "=", "/", "^", "_")):
        return None
    got = _expression(fragment)
    if got is None or not got[1]:
        return None
    tex = got[0]
    return tex if re.fullmatch(r"[A-Za-z0-9\\{}^_=+\-/(),.' *]+", tex) and "\\)" not in tex else None


def markdown_maths(text: object) -> str:
    """`text` as Markdown in which the ASCII maths of a verify row is typeset and everything else is text.

    Each maximal run of the text made of names, numbers, the operators `= + - / * < > <= >= -> ~ |`, parentheses
    and the modifiers `'`, `*` (a star superscript), `_sub` and `^sup` (`^2`, `^-1/2`, `^(p-1)`, `^{3/2}`),
    with spaces only around an operator, is maths when all of it follows that grammar and something in it is
    maths alone (a Greek name such as `lam`, `sigma`, `Delta`, `eps`; a sub- or superscript; a prime; a
    relation); it is written as `\\(TeX\\)`, the TeX rebuilt from its tokens (`row_tex`).  A leading `(` or a
    trailing `,` or `.` of a run is text.  The rest is `markdown_text`.

    Parameters
    ----------
    text : object
        The row's text (anything else is first turned into text with `str`).

    Returns
    -------
    str
        Markdown for one table cell or line: escaped text and inline maths, no `|`, no newline.
    """
    text = text if isinstance(text, str) else str(text)
    out, pos = [], 0
    for m in _CANDIDATE.finditer(text):
        run = m.group()
        lead = re.match(r"[,.(]*", run).group()
        trail = re.search(r"[,.]*$", run[len(lead):]).group()
        core = run[len(lead):len(run) - len(trail)]
        # unbalanced parentheses at the ends belong to the text: `(lambda* - lambda)^-2)` closes a text's `(`
        while core.endswith(")") and core.count(")") > core.count("("):
            core, trail = core[:-1], ")" + trail
        tex = None
        for k, j in ((0, 0), (1, 0), (1, 1)):  # the expression alone, with the `(` before it, and the `)` after
            if core and (not k or lead.endswith("(")) and (not j or trail.startswith(")")):
                tex = row_tex("(" * k + core + ")" * j)
                if tex is not None:
                    lead, core, trail = lead[:len(lead) - k], "(" * k + core + ")" * j, trail[j:]
                    break
        if tex is None:
            continue
        out.append(markdown_text(text[pos:m.start()] + lead, line_start=not out))
        out.append(f"\\({tex}\\)")
        out.append(markdown_text(trail, line_start=False))
        pos = m.end()
    out.append(markdown_text(text[pos:], line_start=not out))
    return "".join(out)
