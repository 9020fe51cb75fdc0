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

The escapes only add characters: the text a reader sees is the text that was in the file, with its
invisible characters made visible.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["terminal_text", "markdown_text", "markdown_code"]

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


def markdown_text(value: Any) -> str:
    """`value` as Markdown that shows exactly this text: no markup, no HTML, one line.

    Parameters
    ----------
    value : object
        The text (anything else is first turned into text with `str`).

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
    return _LINE_START.sub(_line_start, text)


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
