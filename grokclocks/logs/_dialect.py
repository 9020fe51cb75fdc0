"""Delimited text: the delimiter and the decimal mark, detected or given, and what a first line that is not a
header looks like.

Detection reads a bounded sample (the first 64 KiB, at most 50 lines) with `csv.reader` once per candidate
delimiter: linear in the sample.  `csv.Sniffer` is not used: its regular expressions backtrack on crafted
text (a 64 KiB line of `,'` pairs took 37 s); the cell patterns here have no nested quantifiers.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from .._validate import DomainError
from ._table import LogError, _short

DELIMITERS: dict[str, str] = {",": ",", ";": ";", "\t": "\t", "|": "|", "comma": ",", "semicolon": ";",
                              "tab": "\t", "\\t": "\t", "pipe": "|"}
"""The values `delimiter=` (CLI `--delimiter`) takes, and the character each means."""

_NAMES = {",": "',' (comma)", ";": "';' (semicolon)", "\t": "tab", "|": "'|' (pipe)"}
_NUM = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_COMMA_NUM = re.compile(r"[-+]?\d+,\d+(?:[eE][-+]?\d+)?")
_DOT_NUM = re.compile(r"[-+]?\d*\.\d+(?:[eE][-+]?\d+)?")
_DOTTED = re.compile(r"[-+]?[\d.]+(?:,\d*)?(?:[eE][-+]?\d+)?")  # with a '.' in it: `_dotted`
_SAMPLE = 1 << 16


def check_delimiter(delimiter: Any) -> str | None:
    """`delimiter` as the one character it names, or None (detect)."""
    if delimiter is None:
        return None
    if not isinstance(delimiter, str) or delimiter.lower() not in DELIMITERS:
        raise DomainError(f"delimiter must be None (detect) or one of ',', ';', tab, '|' (also the names comma, "
                          f"semicolon, tab, pipe) (got {_short(delimiter)})")
    return DELIMITERS[delimiter.lower()]


def check_decimal(decimal: Any) -> str | None:
    """`decimal` as `"."` or `","`, or None (detect)."""
    if decimal is None:
        return None
    if decimal not in (".", ","):
        raise DomainError(f"decimal must be None (detect), '.' or ',' (got {_short(decimal)})")
    return decimal


def delimiter_name(d: str) -> str:
    return _NAMES.get(d, repr(d))


def _sample_lines(text: str) -> list[str]:
    """The first non-blank lines (up to 50) of the first 64 KiB of `text` (a line the sample cuts left out)."""
    sample = io.StringIO(text[:_SAMPLE], newline=None).read().splitlines()
    if len(text) > _SAMPLE and len(sample) > 1:
        sample = sample[:-1]
    return [ln for ln in sample if ln.strip()][:50]


def _consistent(lines: list[str], d: str) -> int:
    """The number of fields every line splits into with delimiter `d` (0 when they differ or cannot be read)."""
    try:
        counts = {len(r) for r in csv.reader(lines, delimiter=d)}
    except csv.Error:
        return 0
    return counts.pop() if len(counts) == 1 else 0


def sniff_delimiter(text: str) -> str:
    """The delimiter of a delimited file: the one of `, ; tab |` that splits the first lines (up to 50, within
    the first 64 KiB) into the same number of fields (more than one), trying first the delimiter the header
    holds most often (ties in the order `, ; tab |`); a comma when none does.  Linear in the sample."""
    lines = _sample_lines(text)
    if not lines:
        return ","
    head = lines[0]
    for d in sorted(",;\t|", key=lambda d: -head.count(d)):
        if _consistent(lines, d) > 1:
            return d
    return "\t" if head.count("\t") > head.count(",") else ","


def looks_delimited(text: str) -> bool:
    """Whether `text` reads as a delimited table: two or more lines, each split by one delimiter into the same
    number (two or more) of fields, a first line of names (not all numbers) and rows of numbers (Keras'
    `CSVLogger` writes such a file as `training.log`)."""
    lines = _sample_lines(text)
    if len(lines) < 2:
        return False
    d = sniff_delimiter(text)
    if _consistent(lines, d) < 2:
        return False
    rows = list(csv.reader(lines, delimiter=d))
    cells = [c for r in rows[1:] for c in r if c.strip()]
    return (not all(is_number(c) for c in rows[0] if c.strip())
            and bool(cells) and sum(is_number(c) or c.strip() == "NA" for c in cells) * 2 > len(cells))


def sniff_decimal(rows: list[list[str]], delimiter: str) -> str:
    """`","` when the numbers of the data rows are written with a decimal comma (`0,031`) and none with a
    point; `"."` otherwise.  Both marks in one file is an error (which is the decimal and which a thousands
    separator cannot be told)."""
    if delimiter == ",":
        return "."
    comma = dot = None
    for r in rows[1:201]:
        for c in r:
            c = c.strip()
            if comma is None and _COMMA_NUM.fullmatch(c):
                comma = c
            elif dot is None and _DOT_NUM.fullmatch(c):
                dot = c
        if comma is not None and dot is not None:
            raise LogError(f"numbers are written with a decimal comma ({comma!r}) and with a decimal point "
                           f"({dot!r}); give the decimal mark with decimal= (CLI: --decimal , or --decimal .)")
    return "," if comma is not None else "."


def apply_decimal_comma(rows: list[list[str]], source: str, line_of: list[int]) -> None:
    """Rewrite `0,031` as `0.031` in place; a number holding a point (`1.000`, a thousands separator?) is an
    error, not a guess."""
    for r, ln in zip(rows, line_of):
        for j, c in enumerate(r):
            s = c.strip()
            if not s or not (s[0].isdigit() or s[0] in "+-."):
                continue
            if _COMMA_NUM.fullmatch(s) or _NUM.fullmatch(s) and "." not in s:
                r[j] = s.replace(",", ".")
            elif "." in s and _DOTTED.fullmatch(s) and any(ch.isdigit() for ch in s):
                raise LogError(f"{source}: line {ln}: {s!r} holds a '.' in a file whose decimal mark is ',' (a "
                               "thousands separator?); write numbers without one, or give decimal='.' (CLI: "
                               "--decimal .)")


def is_number(cell: str) -> bool:
    s = cell.strip().lower()
    return bool(_NUM.fullmatch(s) or _COMMA_NUM.fullmatch(s)) or s in ("nan", "inf", "-inf")
