"""The door to the terminal and to generated pages: text that came from a file, made harmless to show.

A run name, a column or folder name, a metric key, a forecast header or a certificate's text is written by
whoever wrote the file.  Printed as it is, an escape sequence in it retitles the terminal, clears the screen
or hides the real table, and a newline injects lines; copied into Markdown, a `<script>` or an
`[x](javascript:...)` link runs in the documentation site, a `|` or a newline breaks the table, a newline
and a `#` inject a heading.  Every such string passes through one of these functions on its way out:

`terminal_text`
    for a terminal: control characters (C0 and C1, ESC and DEL among them), Unicode format and separator
    characters (bidirectional overrides, zero-width characters, U+2028/U+2029) and lone surrogates are
    shown as visible escapes (`\\x1b`, `\\n`, `\\u202e`); everything else is kept as it is.
`markdown_text`
    for Markdown or HTML text (a table cell, a list item, a sentence): the same visible escapes, and every
    character that Markdown, HTML or the site's extensions would read as markup escaped (an HTML character
    reference such as `&lt;` or `&#124;`, or a backslash), so that the page shows the text and nothing else.
`markdown_code`
    the same text as inline code (`<code>...</code>`).
`json_text`
    for JSON a user reads or parses (`--json`, a certificate): every text kept exactly (JSON escapes its control
    characters) but the lone surrogates of undecodable file-name bytes, which no strict JSON parser accepts,
    shown as the same visible escapes as on a terminal; the JSON is ASCII.

Text for a terminal is then fitted to its width (`terminal_width`, `wrap_text`, `fit_columns`): long lines are
wrapped at spaces, never cut, so that a table reads without horizontal scrolling and nothing is lost.

The escapes only add characters: the text a reader sees is the text that was in the file, with its
invisible characters made visible.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections.abc import Collection, Sequence
from typing import Any

__all__ = ["terminal_text", "markdown_text", "markdown_code", "json_text", "terminal_width", "wrap_text",
           "fit_columns"]

# Control characters (C0 but newline, DEL, C1), the Unicode format characters that reorder or hide text
# (Arabic letter mark, zero-width and directional marks, line and paragraph separators, embeddings and
# overrides, word joiner and invisible operators, isolates, BOM, interlinear annotations, tag characters)
# and lone surrogates (undecodable bytes read with surrogateescape; printing one raises UnicodeEncodeError).
_INVISIBLE = ("\x00-\x09\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
              "\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f")
_SHOW_KEEP_NEWLINES = re.compile(f"[{_INVISIBLE}]")
_SHOW_ALL = re.compile(f"[\n{_INVISIBLE}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

# Markdown (Python-Markdown and GitHub), raw HTML, and the site's extensions.  HTML character references for
# what starts HTML or could be read otherwise inside a code span, a table or a formula: `&`, `<`, `|` (table
# cells), a backtick, a backslash (escapes, arithmatex's `\(`), `$` (arithmatex) and `~` (GitHub's
# strikethrough; Python-Markdown has no escape for it).  A backslash escape, readable in the page's source, for
# `*` (emphasis), `[` `]` (links and images: `[x](javascript:...)`), `{` `}` (attr_list: `{: onclick=...}`),
# `#` (headings) and an `_` at the edge of a word (emphasis; one inside a word, as in t_test, is text).  A `>`
# is markup only where it opens a line (a quote), as are `- `, `+ `, `1. `, `1) ` (lists) and a space (four
# make a code block): escaped there.
_MARKUP = {"&": "&amp;", "<": "&lt;", "|": "&#124;", "`": "&#96;", "\\": "&#92;", "$": "&#36;", "~": "&#126;"}
_MARKUP.update({c: "\\" + c for c in "*[]{}#_"})
_MARKUP_RE = re.compile("[" + re.escape("".join(c for c in _MARKUP if c != "_")) + r"]|(?<!\w)_|_(?!\w)")
_LINE_START = re.compile(r"^(?:(>)|([-+])(?=\s|$)|(\d{1,9})([.)])(?=\s|$)|( ))")


def _line_start(m: re.Match) -> str:
    if m[1] or m[2]:
        return "\\" + (m[1] or m[2])
    return f"{m[3]}\\{m[4]}" if m[3] else "&#32;"


def _visible(match: re.Match) -> str:
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    n = ord(c)
    return f"\\x{n:02x}" if n <= 0xFF else f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def terminal_text(value: Any, *, newlines: bool = False) -> str:
    """`value` as text safe to print on a terminal: its invisible and control characters shown as escapes.

    Parameters
    ----------
    value : object
        The text (anything else is first turned into text with `str`).
    newlines : bool
        False (default): a newline is shown as `\\n` too, so the text stays on one line (a name, a cell, a
        one-line message); True: newlines are kept (a whole table whose cells are already escaped).

    Returns
    -------
    str
        The text with each control character (ESC, BEL, carriage return, tab, DEL, the C1 range), each
        Unicode format or separator character that reorders or hides text, and each lone surrogate replaced
        by a visible escape (`\\x1b`, `\\r`, `\\t`, `\\u202e`, `\\udcff`); everything else unchanged.
    """
    text = _text(value)
    pattern = _SHOW_KEEP_NEWLINES if newlines else _SHOW_ALL
    return pattern.sub(_visible, text) if pattern.search(text) else text


def markdown_text(value: Any, *, line_start: bool = True) -> str:
    """`value` as Markdown that shows exactly this text: no markup, no HTML, one line.

    Parameters
    ----------
    value : object
        The text (anything else is first turned into text with `str`).
    line_start : bool
        True (default): the text may start a line, so a start that would begin a quote, a list or a code
        block is escaped too; False: the text follows other text on its line (a piece between two formulas).

    Returns
    -------
    str
        `terminal_text(value)` (newlines and control characters as visible escapes) with `&`, `<`, `|`,
        the backtick, the backslash, `$` and `~` written as HTML character references, `*`, `[`, `]`, `{`,
        `}`, `#` and an `_` at a word's edge escaped with a backslash, and a start that would begin a quote,
        a list or a code block escaped too: safe in a table cell, a list item or a sentence of a page built
        by Python-Markdown (with the site's extensions) or GitHub.
    """
    text = _MARKUP_RE.sub(lambda m: _MARKUP[m.group()], terminal_text(value))
    return _LINE_START.sub(_line_start, text) if line_start else text


def markdown_code(value: Any) -> str:
    """`value` as inline code in Markdown: `<code>` around `markdown_text(value)`.

    Parameters
    ----------
    value : object
        The text (anything else is first turned into text with `str`).

    Returns
    -------
    str
        `<code>...</code>`: shown in a code font, with the escapes of `markdown_text` (a backtick span
        could be closed by a backtick in the text, and a `|` in it would split a table cell).
    """
    return f"<code>{markdown_text(value)}</code>"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_surrogates(obj: Any) -> Any:
    if isinstance(obj, str):
        return _SURROGATE.sub(_visible, obj) if _SURROGATE.search(obj) else obj
    if isinstance(obj, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_no_surrogates(v) for v in obj]
    return obj


def json_text(obj: Any, *, indent: int | None = 1, default: Any = None) -> str:
    """`obj` as JSON text that a strict parser reads: ASCII, with no lone surrogate.

    A file name that is not valid UTF-8 reaches Python with each undecodable byte as a lone surrogate
    (`os.fsdecode`: byte 0xff is U+DCFF).  `json.dumps` writes it as the escape `\\udcff`, which Python reads
    back but RFC 8259 leaves undefined (Rust's serde_json refuses it; `jq` and a UTF-8 writer put U+FFFD in its
    place, losing the byte), and cannot write as UTF-8 at all.  Here each one is written as the visible escape
    the terminal shows for it (the six characters `\\udcff`, as `terminal_text` writes them); every other text
    is kept exactly, its control and non-ASCII characters written as JSON escapes.  Numbers are `json.dumps`'s
    (a NaN is written `NaN`, as the certificates' report rows need).

    Parameters
    ----------
    obj : object
        JSON-ready data: dicts (their keys too), lists, tuples, text, numbers, bools, `None`.
    indent : int or None
        `json.dumps`'s indent; default 1.
    default : callable, optional
        `json.dumps`'s `default` (called for objects it cannot write); default `None`.

    Returns
    -------
    str
        The JSON text: ASCII only, so that it is valid UTF-8 too.
    """
    return json.dumps(_no_surrogates(obj), indent=indent, default=default, ensure_ascii=True)


# ------------------------------------------------------------------------------------------ a terminal's width

MIN_WIDTH = 40
"""The narrowest width text is fitted to: a narrower request (or terminal) is fitted to this."""


def terminal_width(width: Any = None) -> int | None:
    """The width, in characters, that terminal text is fitted to.

    Parameters
    ----------
    width : int or None
        `None` (default): the terminal's width (`shutil.get_terminal_size`: the `COLUMNS` environment variable
        first, then the terminal of standard output; 80 when there is neither, as when the output goes to a
        file or a pipe); an integer ≥ 1: that width (at least `MIN_WIDTH` = 40); `0`: no limit.

    Returns
    -------
    int or None
        The width, or `None` for no limit (one line per row, however long).

    Raises
    ------
    DomainError
        `width` is not `None` or an integer ≥ 0.
    """
    from . import _validate as V

    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns
        if width <= 0:  # COLUMNS=0 or a terminal that reports no width
            width = 80
    elif V.integer_at_least(width, "width", 0) == 0:
        return None
    return max(int(width), MIN_WIDTH)


def wrap_text(text: str, width: int | None, indent: str = "", hanging: str | None = None) -> list[str]:
    """`text` (one line, already escaped) as lines of at most `width` characters, broken at spaces.

    Parameters
    ----------
    text : str
        The text; it holds no newline (`terminal_text` shows them as `\\n`).
    width : int or None
        The most characters a line holds (`terminal_width`); `None`: no limit (one line).
    indent : str
        Put before the first line.
    hanging : str, optional
        Put before every further line; default `None`: `indent` and the text's own leading spaces.

    Returns
    -------
    list of str
        The lines (at least one).  A word longer than a line is broken inside, so that no line is longer
        than `width` (unless an indent alone is).
    """
    lead = text[:len(text) - len(text.lstrip(" "))]
    first = indent + lead
    rest = first if hanging is None else hanging
    if width is None or len(first) + len(text) - len(lead) <= width:
        return [(first + text[len(lead):]).rstrip()]
    return textwrap.wrap(text[len(lead):], width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=True, break_on_hyphens=False, expand_tabs=False,
                         replace_whitespace=False, drop_whitespace=True) or [first.rstrip()]


def fit_columns(head: Sequence[str], rows: Sequence[Sequence[str]], width: int | None, *,
                wrap: Collection[int] = (), minimum: int = 20, gap: int = 2) -> list[str] | None:
    """A table of aligned columns whose lines fit in `width`, the `wrap` columns' cells wrapped at spaces.

    The columns not in `wrap` keep their width (that of their longest cell or heading); the `wrap` columns share
    the rest of the line, each getting its own width where that fits and an equal share of what is left where
    it does not (max-min fair).

    Parameters
    ----------
    head : sequence of str
        The column headings.
    rows : sequence of sequence of str
        The cells, already escaped (one line each), as many per row as `head`.
    width : int or None
        The most characters a line holds; `None`: no limit (one line per row).
    wrap : collection of int
        The indices of the columns whose cells may wrap onto further lines.
    minimum : int
        The narrowest a wrapped column may become (a column whose own width is smaller keeps it).
    gap : int
        Spaces between columns.

    Returns
    -------
    list of str or None
        The heading, a line of dashes and the rows (a row's first line first); `None` when the columns do not
        fit even with every `wrap` column at `minimum` (the caller then lays the rows out another way).
    """
    n = len(head)
    natural = [max([len(head[i])] + [len(r[i]) for r in rows]) for i in range(n)]
    widths = list(natural)
    if width is not None:
        room = width - gap * (n - 1) - sum(natural[i] for i in range(n) if i not in wrap)
        need = sorted((natural[i], i) for i in wrap)
        if sum(w for w, _ in need) > room:
            left = room
            for k, (w, i) in enumerate(need):  # the narrow ones take what they need, the rest share equally
                widths[i] = min(w, left // (len(need) - k))
                left -= widths[i]
            if any(widths[i] < min(natural[i], minimum) for i in wrap):
                return None
    sep = " " * gap

    def lines(cells: Sequence[str]) -> list[str]:
        cols = [wrap_text(c, widths[i]) if i in wrap else [c] for i, c in enumerate(cells)]
        return [sep.join((c[j] if j < len(c) else "").ljust(widths[i]) for i, c in enumerate(cols)).rstrip()
                for j in range(max(len(c) for c in cols))]

    out = lines(head) + [sep.join("-" * w for w in widths)]
    for r in rows:
        out += lines(r)
    return out
