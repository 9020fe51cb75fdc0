"""The door to the terminal and to generated pages (grokclocks/_escape.py), checked against what renders it.

`terminal_text` must leave no control character a terminal acts on; `markdown_text` must make a page that
shows the text and nothing else, as built by the documentation site's own Markdown (Python-Markdown with the
extensions of mkdocs.yml) and, where markdown-it-py is installed, by a CommonMark + GFM-table renderer (what
GitHub shows for a committed certificate).  Each hostile string is planted in a table cell, a list item and
a sentence; the rendered HTML must hold no element or attribute the text did not ask for, the table its
columns, and the text shown must be the text given (its invisible characters as visible escapes).
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from grokclocks._escape import (
    fit_columns,
    json_text,
    markdown_code,
    markdown_text,
    terminal_text,
    wrap_text,
)
from grokclocks.verification._maths import markdown_maths

ROOT = Path(__file__).resolve().parents[1]

HOSTILE = [
    "plain_name with_underscores",
    "\x1b]0;PWNED\x07\x1b[2J\x1b[H",  # retitle the window, clear the screen
    "b\nINJECTED LINE",
    "x\n\n# ALL 477 CHECKS PASSED\n",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "a|b|c",
    "[click](javascript:alert(1))",
    "![i](javascript:alert(1))",
    "<javascript:alert(1)>",
    "*bold* _em_ **strong** ~~strike~~",
    "`code` ``x`` ```",
    "{: onclick=\"alert(1)\" }",
    "$x$ \\(y\\) $$z$$",
    "\\| back\\slash \\\\",
    "- item",
    "12. item",
    "    indented",
    "> quote",
    "--8<-- \"/etc/passwd\"",
    "&amp; &lt;b&gt; &#60;",
    "\u202eevil\u202c \u200b\ufeff",
    "tab\there\rcr\x7fdel\x9bcsi",
    "\udcff\udc80 lone surrogates",
    "<!-- comment",
    "]]> <![CDATA[",
]


# ------------------------------------------------------------------------------------------ terminal


def test_terminal_text_shows_every_control_character():
    assert terminal_text("\x1b]0;PWNED\x07\x1b[2J") == "\\x1b]0;PWNED\\x07\\x1b[2J"
    assert terminal_text("a\nb\r\tc\x00\x7f\x85\x9b") == "a\\nb\\r\\tc\\x00\\x7f\\x85\\x9b"
    assert terminal_text("a\nb\x1b", newlines=True) == "a\nb\\x1b"
    assert terminal_text("\u202eevil\u2028\ufeff") == "\\u202eevil\\u2028\\ufeff"
    assert terminal_text("\udcff") == "\\udcff"  # a lone surrogate cannot be printed as UTF-8: shown
    assert terminal_text("\U000e0041") == "\\U000e0041"  # a tag character (invisible)
    for keep in ("résumé ≥ 0.99 λ* — 学习 🙂", "C:\\runs\\a", "a|b <x> [y](z) `q`", ""):
        assert terminal_text(keep) == keep
    assert terminal_text(3.5) == "3.5" and terminal_text(None) == "None"


@pytest.mark.parametrize("text", HOSTILE)
def test_terminal_text_leaves_nothing_a_terminal_acts_on(text):
    out = terminal_text(text)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]", out), out
    out.encode("utf-8")  # printable on a UTF-8 terminal
    assert "\n" not in out and terminal_text(text, newlines=True).count("\n") == text.count("\n")


# ------------------------------------------------------------------------------------------ Markdown


class _Tree(HTMLParser):
    """The elements, attributes and text of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.cells: list[str] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(k, v) for k, v in attrs if not (tag in ("td", "th") and k == "style")]
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def handle_comment(self, data):  # a comment that survived is markup the text made
        self.tags.append("!--")


def _site_markdown():
    """Python-Markdown with the extensions mkdocs.yml gives the site (read from it)."""
    markdown = pytest.importorskip("markdown")
    yaml = pytest.importorskip("yaml")

    class _Loader(yaml.SafeLoader):  # mkdocs.yml's !!python/name tags are not needed here
        pass

    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    conf = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_Loader)
    names, configs = [], {}
    for ext in conf["markdown_extensions"]:
        name, cfg = (next(iter(ext.items())) if isinstance(ext, dict) else (ext, None))
        if name == "pymdownx.snippets":  # reads files: checked apart below (the text never starts its line)
            cfg = {"base_path": [str(ROOT / "docs")], "check_paths": False}
        names.append(name)
        if cfg:
            configs[name] = cfg
    return lambda text: markdown.markdown(text, extensions=names, extension_configs=configs)


def _gfm():
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
    return md.render


def _page(cell: str, code: str) -> str:
    return ("| left | text | right |\n|---|---|---|\n"
            f"| L | {cell} | R |\n| L | {code} | R |\n\n"
            f"* an item: {cell}\n\nA sentence with {cell} and {code} in it.\n\n{cell} opens this paragraph.\n")


def _check_rendered(render, text):
    cell, code = markdown_text(text), markdown_code(text)
    assert "\n" not in cell and "\n" not in code
    tree = _Tree()
    tree.feed(render(_page(cell, code)))
    shown = terminal_text(text)
    allowed = {"table", "thead", "tbody", "tr", "th", "td", "ul", "li", "p", "code"}
    assert set(tree.tags) <= allowed, (text, tree.tags)  # no script, img, a, h1, em, del, script, comment ...
    assert not [a for a in tree.attrs if a[0] != "align"], (text, tree.attrs)  # no onclick=, no href=
    assert tree.cells == ["left", "text", "right", "L", shown, "R", "L", shown, "R"], (text, tree.cells)
    body = "".join(tree.text)
    assert body.count(shown) >= 6, (text, body)  # two cells, the item, the sentence (twice), a paragraph's start


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_text_renders_as_the_text_on_the_site(text):
    _check_rendered(_site_markdown(), text)


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_text_renders_as_the_text_in_commonmark_with_gfm_tables(text):
    _check_rendered(_gfm(), text)


def test_the_checks_catch_unescaped_text():
    """The render checks can fail: planted as they are, with only `|` escaped (what the certificate writer did
    before), a script, an image, a heading after a newline, links, emphasis and control characters are caught."""
    render = _site_markdown()
    must = {"\x1b]0;PWNED\x07\x1b[2J\x1b[H", "b\nINJECTED LINE", "x\n\n# ALL 477 CHECKS PASSED\n",
            "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[click](javascript:alert(1))",
            "![i](javascript:alert(1))", "<javascript:alert(1)>", "*bold* _em_ **strong** ~~strike~~",
            "`code` ``x`` ```", "$x$ \\(y\\) $$z$$", "&amp; &lt;b&gt; &#60;"}
    caught = set()
    for text in HOSTILE:
        tree = _Tree()
        raw = text.replace("|", "\\|")
        try:
            tree.feed(render(_page(raw, f"`{raw}`")))
        except Exception:  # noqa: BLE001 - a renderer that fails on it is caught too
            caught.add(text)
            continue
        bad = set(tree.tags) - {"table", "thead", "tbody", "tr", "th", "td", "ul", "li", "p", "code"}
        if bad or [a for a in tree.attrs if a[0] != "align"] or tree.cells[4:5] != [terminal_text(text)]:
            caught.add(text)
    assert must <= caught, must - caught


def test_snippet_markers_and_entities_stay_text():
    """pymdownx.snippets includes a file named on a line starting with --8<--: escaped, the marker's `<` is a
    character reference, so a marker in a name is text wherever it lands; an entity in a name is shown as typed."""
    assert markdown_text('--8<-- "/etc/passwd"') == '--8&lt;-- "/etc/passwd"'
    assert markdown_text("- x") == "\\- x" and markdown_text("-1.5") == "-1.5" and markdown_text("3. x") == "3\\. x"
    assert html.unescape(markdown_text("&amp;")) == "&amp;"


# ------------------------------------------------------------------------------------------ JSON

# \ud800-\udfff as json.dumps writes it: a backslash that is not itself escaped, then u and D8..DF
LONE_SURROGATE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _strict(text: str):
    """`text` parsed as a strict parser does: it must be UTF-8 (or ASCII) and hold no lone surrogate."""
    text.encode("utf-8")  # raises on a lone surrogate in the text itself
    assert not LONE_SURROGATE_ESCAPE.search(text), "a surrogate escape (no pair of them is written here)"
    obj = json.loads(text)
    for s in _all_text(obj):
        s.encode("utf-8")  # raises for "\udcff" read back from an escape: what serde_json refuses, jq makes U+FFFD
    return obj


def _all_text(obj):
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for k, v in obj.items() for s in (*_all_text(k), *_all_text(v))]
    return [s for v in obj for s in _all_text(v)] if isinstance(obj, list) else []


def test_json_text_is_strict_json_and_shows_undecodable_bytes():
    """A name with undecodable bytes (os.fsdecode(b"seed\\xff") == "seed\\udcff") is written as the escape the
    terminal shows, in values and keys; json.dumps wrote a lone surrogate escape that strict parsers refuse."""
    name = "seed\udcff\udc80"
    obj = {"run_names": [name, "s\u00e9ed", "x\x1b[2J\n<y>"], name: {"n": 1.5, "ok": True, "none": None}}
    before = json.dumps(obj, indent=1)  # the old output: lone surrogate escapes, strings no UTF-8 can hold
    assert LONE_SURROGATE_ESCAPE.search(before)
    with pytest.raises(UnicodeEncodeError):
        [t.encode("utf-8") for t in _all_text(json.loads(before))]
    text = json_text(obj)
    assert text.isascii()
    back = _strict(text)
    assert back["run_names"] == ["seed\\udcff\\udc80", "s\u00e9ed", "x\x1b[2J\n<y>"]  # only the surrogates change
    assert back["seed\\udcff\\udc80"] == {"n": 1.5, "ok": True, "none": None}
    assert terminal_text(name) == back["run_names"][0]  # the same escape as on the terminal
    assert json_text(("a", 1)) == json.dumps(["a", 1], indent=1)
    assert json_text({"x": float("nan")}, indent=None) == '{"x": NaN}'  # numbers are json.dumps's (see the note)
    assert json.loads(json_text({"f": np_float()}, default=float)) == {"f": 0.5}


def np_float():
    import numpy as np

    return np.float32(0.5)


# ------------------------------------------------------------------------------------------ fitting the width


def test_wrap_text_breaks_at_spaces_and_keeps_every_word():
    text = "aligned on the union of the series' steps (201 records); each clock is read on its own records"
    lines = wrap_text(text, 40, "  ", "    ")
    assert max(map(len, lines)) <= 40 and lines[0].startswith("  aligned") and lines[1].startswith("    ")
    assert " ".join(" ".join(lines).split()) == text
    assert wrap_text(text, None, "  ") == ["  " + text]
    assert wrap_text("  nested: 41 records", 80, "  ") == ["    nested: 41 records"]  # its own indent kept
    assert max(map(len, wrap_text("x" * 100, 40))) == 40  # a word longer than a line is broken inside


def test_fit_columns_wraps_only_the_wrap_columns_and_says_when_they_do_not_fit():
    head = ["id", "value", "status"]
    rows = [["t_test", "1450", "measured"], ["lambda", "n/a", "n/a: needs lam, or p with n_train or train_mask"]]
    assert fit_columns(head, rows, None, wrap=(2,)) == fit_columns(head, rows, 200, wrap=(2,))
    lines = fit_columns(head, rows, 40, wrap=(2,), minimum=20)
    assert max(map(len, lines)) <= 40 and len(lines) == 2 + 1 + 2
    assert lines[3] == "lambda  n/a    n/a: needs lam, or p with" and lines[4] == " " * 15 + "n_train or train_mask"
    assert fit_columns(head, rows, 30, wrap=(2,), minimum=20) is None  # the status would get 15 < 20


# ------------------------------------------------------------------------------------------ maths of a row's text

TEX_COMMANDS = {"alpha", "beta", "gamma", "Gamma", "delta", "Delta", "varepsilon", "zeta", "eta", "theta", "Theta",
                "kappa", "lambda", "Lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "Sigma", "tau", "phi", "Phi",
                "chi", "psi", "Psi", "omega", "Omega", "mathrm", "le", "ge", "lt", "gt", "sim", "to", "cdot", "vert", "ln",
                "log", "exp", "max", "min"}
MATHS_ROWS = [
    "crit2: a=2 (sigma'=-2 sigma^2 read as Delta'=-2 Delta^{3/2}), t >= 500",
    "|x|^3: Delta(t) vs kl_gap_solution (a=q^2, theta=1-1/q), t in [1000, 10000]",
    "lambda* (fit Delta t = C (lambda* - lambda)^-2)", "seed-mean t*_gen (lam=0.3 d_out=1 d=500 8 seeds)",
    "nuclear norm instead of L|W|_S(2/3)^(2/3), dims (6, 5, 5, 4), mu=0.2", "e^(-2 eta0 t) x^-1/2 S0^T",
    "sigma^{\\href{javascript:alert(1)}{x}} lam^{<script>} Delta^{a|b} eta_{x}</td> mu^(\\(\\))",
    "lam=1 \\) <img src=x onerror=alert(1)> sigma^2 $x$ [a](javascript:x) {: onclick=x} \x1b[2J sigma'=1\nlam=2",
]


class _MathsTree(_Tree):
    """`_Tree` that also keeps the text of each arithmatex span (the TeX MathJax is given)."""

    def __init__(self) -> None:
        super().__init__()
        self.maths: list[str] = []
        self._in = 0

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        if tag == "span":
            self._in += 1
            self.maths.append("")

    def handle_endtag(self, tag):
        super().handle_endtag(tag)
        if tag == "span":
            self._in -= 1

    def handle_data(self, data):
        super().handle_data(data)
        if self._in:
            self.maths[-1] += data


def _scripts_ok(tex: str) -> bool:
    """Whether TeX would take `tex`'s sub- and superscripts: none doubled on one atom (`x_{a}_{b}`, `t^{*}^{2}`),
    no prime after a superscript (`x^{2}'`); spaces do not end an atom, a letter, digit, command or group does."""
    sub = sup = False
    i = 0
    while i < len(tex):
        c = tex[i]
        if c in "_^":
            if (sub if c == "_" else sup) or tex[i + 1:i + 2] != "{":
                return False
            depth, j = 0, i + 1
            while True:
                depth += {"{": 1, "}": -1}.get(tex[j], 0)
                if depth == 0:
                    break
                j += 1
            if not _scripts_ok(tex[i + 2:j]):
                return False
            sub, sup = (True, sup) if c == "_" else (sub, True)
            i = j + 1
            continue
        if c == "'" and sup:
            return False
        if c not in " '":
            sub = sup = False
        i += 1
    return True


def _check_maths_rendered(text):
    cell = markdown_maths(text)
    assert "\n" not in cell and "|" not in cell
    tree = _MathsTree()
    tree.feed(_site_markdown()(_page(cell, markdown_code(text))))
    allowed = {"table", "thead", "tbody", "tr", "th", "td", "ul", "li", "p", "code", "span"}
    assert set(tree.tags) <= allowed, (text, tree.tags)
    assert not [a for a in tree.attrs if a not in (("class", "arithmatex"),) and a[0] != "align"], (text, tree.attrs)
    assert len(tree.cells) == 9 and tree.cells[7] == terminal_text(text), (text, tree.cells)  # the code cell
    for tex in tree.maths:  # what MathJax reads: only letters, digits, safe punctuation and the fixed commands
        assert tex.startswith("\\(") and tex.endswith("\\)") and "\\)" not in tex[2:-2], (text, tex)
        body = tex[2:-2]
        assert re.fullmatch(r"[A-Za-z0-9\\{}^_=+\-/(),.' *]+", body), (text, tex)
        assert set(re.findall(r"\\([A-Za-z]+)", body)) <= TEX_COMMANDS, (text, tex)
        assert body.count("{") == body.count("}"), (text, tex)
        assert _scripts_ok(body), (text, tex)  # MathJax would show an error: "Double subscripts: use braces"
    if not tree.maths:
        # a table cell drops the text's trailing spaces (markdown_text escapes only the leading ones)
        assert tree.cells[4].rstrip(" ") == terminal_text(text).rstrip(" "), (text, tree.cells)
    return tree


@pytest.mark.parametrize("text", HOSTILE + MATHS_ROWS)
def test_row_maths_renders_safely_on_the_site(text):
    """A verify row's text on its certificate page: maths typeset from a rebuilt TeX of fixed commands, the rest
    text as `markdown_text` shows it; nothing planted in a row becomes a tag, an attribute or a TeX command."""
    _check_maths_rendered(text)


def test_row_maths_typesets_the_rows_ascii_maths():
    assert markdown_maths("Delta'=-2 Delta^{3/2}") == "\\(\\Delta'=-2\\) \\(\\Delta^{3/2}\\)"
    assert markdown_maths("shrinkage lam sigma^(p-1), p=0.5") == (
        "shrinkage \\(\\lambda\\) \\(\\sigma^{p-1}\\), \\(p=0.5\\)")
    assert markdown_maths("d=2000 achieved 0.0018 -> d=4000 <= 0.003") == (
        "\\(d=2000\\) achieved \\(0.0018 \\to  d=4000 \\le  0.003\\)")  # an arrow, not minus and greater
    assert markdown_maths("(4 eta0 -> 8 eta0)") == "(4 \\(\\eta_{0} \\to  8\\) \\(\\eta_{0}\\))"
    assert markdown_maths("t*_gen at 2*eta=0.02") == "\\(t^{*}_{\\mathrm{gen}}\\) at \\(2\\cdot \\eta=0.02\\)"
    tree = _check_maths_rendered(MATHS_ROWS[1])
    # _page shows the cell four times (a table cell, a list item, in a sentence, opening a paragraph)
    assert tree.maths == 4 * ["\\(\\vert x\\vert ^{3}\\)", "\\(\\Delta(t)\\)", "\\(a=q^{2}\\)", "\\(\\theta=1-1/q\\)"]
    for text in ("same tolerance", "8 seeds, 1-D 14 %/6 %", "mp_atom vs run_gd, grok_time", "a held-out label"):
        assert markdown_maths(text) == markdown_text(text)  # no maths: text as before
    for text in ("L0_tr", "t*^2", "x_a_b", "x^2'", "x^2^3"):  # TeX would refuse the doubled script: text
        assert markdown_maths(text) == markdown_text(text), text
    assert not _scripts_ok("L_{0}_{\\mathrm{tr}}") and not _scripts_ok("t^{*} ^{2}") and _scripts_ok("x'^{2}_{a}")
    hostile = _check_maths_rendered(MATHS_ROWS[6])
    assert not any("href" in t or "script" in t for t in hostile.maths)  # those groups are not maths: text


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    given = None

if given is not None:
    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.sampled_from(["lam", "sigma", "Delta", "eta0", "t", "x", "p", "^", "_", "{", "}", "(", ")",
                                     "|", "=", "-", "*", "/", "'", "<", ">", "~", ",", ".", " ", "2", "3/2", "\\",
                                     "$", "&", "`", "[", "]", "#", "\n", "href", "<script>", "\\)", "\\(", "_gen",
                                     "^(p-1)", "^{3/2}", "gen", "seeds", "L0", "'", "*", "^2", "->"]), max_size=14).map("".join))
    def test_row_maths_is_safe_for_any_text(text):
        _check_maths_rendered(text)


def test_the_committed_certificates_rows_typeset_as_tex_takes_them():
    """Every maths span the certificate pages give the rows of the committed certificates (CPU tier and GPU
    suites, rendered afresh from their JSON): safe characters and commands only, balanced braces, no doubled
    sub- or superscript (MathJax would print an error in the page instead of the formula)."""
    from grokclocks.verification import read_certificate
    from grokclocks.verification._certificate import _row_from_dict, rows_markdown

    files = [ROOT / "docs" / "verification" / "verify-cpu.json",
             *sorted((ROOT / "docs" / "verification" / "gpu").glob("*.json"))]
    spans = []
    for f in files:
        table = rows_markdown([_row_from_dict(r) for r in read_certificate(f)["rows"]])
        spans += re.findall(r"\\\((.*?)\\\)", table)
    assert len(spans) > 1000  # 2969 when written
    for body in spans:
        assert re.fullmatch(r"[A-Za-z0-9\\{}^_=+\-/(),.' *]+", body), body
        assert set(re.findall(r"\\([A-Za-z]+)", body)) <= TEX_COMMANDS, body
        assert body.count("{") == body.count("}") and _scripts_ok(body), body


@pytest.mark.parametrize("text", [*HOSTILE, "verify/clocks/test_deep_linear.py::test_drift[0.6666666666666666]"])
def test_a_test_id_on_a_certificate_page_wraps_and_shows_as_typed(text):
    """The per-test table's node IDs may wrap after `/` and `::` and before `[` (`<wbr>`), and still show
    exactly the ID: only code and wbr elements, no attribute, the cell's text the ID as `markdown_code` shows it."""
    from grokclocks.verification._certificate import _test_code

    cell = _test_code(text)
    assert "\n" not in cell and cell.startswith("<code>") and cell.endswith("</code>")
    tree = _Tree()
    tree.feed(_site_markdown()(_page(cell, markdown_code(text))))
    assert set(tree.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "ul", "li", "p", "code", "wbr"}, tree.tags
    assert not [a for a in tree.attrs if a[0] != "align"], (text, tree.attrs)
    assert tree.cells[4] == tree.cells[7] == terminal_text(text), (text, tree.cells)
    if "/" in text:
        assert "wbr" in tree.tags
