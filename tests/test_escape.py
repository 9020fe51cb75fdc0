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

from grokclocks._escape import fit_columns, json_text, markdown_code, markdown_text, terminal_text, wrap_text

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
