"""Plain-text training logs: lines of `name value`, `name: value` or `name=value` pairs with a step or epoch.

`step 500 | train_loss 0.0012 | train_acc 1.000 | val_loss 3.21 | val_acc 0.031`, `epoch=3, loss=0.52,
accuracy=0.81` and `Epoch 3/100 - loss: 0.52 - val_accuracy: 0.41` are all records; the pairs may be
separated by `|`, `,`, `;`, ` - ` or spaces, and a line may start with a timestamp or a logger's prefix.  A
line is a record when it holds a step key (`step`, `global_step`, `iter`, `iteration`, `epoch`, ...) and
at least one other pair; every other line (banners, warnings, progress bars) is skipped and counted.
Printed values carry only the precision the log printed them with; the table says how many decimals.

A line is split into pairs by a linear scan (`line_pairs`): each name is found by one regular expression
without nested quantifiers, and the separator and the number after it are matched at that one position, so
a line of `n` characters costs O(n) (a regular expression with two space quantifiers side by side, as this
reader once had, backtracks quadratically on a run of spaces: 16,000 spaces took 30 s).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from ._columns import STEP_NAMES
from ._dialect import looks_delimited
from ._safe import read_text
from ._table import LogError, _records_table, _short, _Table

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)"
# a name: a run of name characters starting with a letter or _, not inside another run (no nested quantifier)
_NAME = re.compile(r"(?<![\w/.\-])[A-Za-z_][\w/.\-]*")
_SPACE = re.compile(r"\s*")
# the value, matched at one position: a number, an optional /total (Epoch 3/100), not followed by a word
_VALUE = re.compile(r"(" + _NUMBER + r")(/\d+)?(?![\w.])", re.IGNORECASE)
_STEP_KEYS = {s for s in STEP_NAMES if "/" not in s} | {"it", "iters", "update", "updates"}
_MAX_LINE = 100_000


def line_pairs(line: str) -> list[tuple[str, str]]:
    """The `(name, value)` pairs of a log line, in order: `name value`, `name: value` or `name=value` (spaces
    around `:` and `=` allowed).  Linear in the line's length (at most its first 100,000 characters are read)."""
    if len(line) > _MAX_LINE:
        line = line[:_MAX_LINE]
    pairs = []
    pos = 0
    while (m := _NAME.search(line, pos)) is not None:
        end = m.end()
        at = _SPACE.match(line, end).end()
        if at < len(line) and line[at] in ":=":
            at = _SPACE.match(line, at + 1).end()
        elif at == end:  # neither a space nor ':' / '=' after the name
            pos = end
            continue
        v = _VALUE.match(line, at)
        if v is None:
            pos = max(end, at)  # the spaces are scanned once: the next name starts after them
            continue
        pairs.append((m.group(), v.group(1)))
        pos = v.end()
    return pairs


def is_record(pairs: list[tuple[str, str]]) -> bool:
    """A record: a step key and at least one other pair."""
    return len(pairs) >= 2 and any(k.lower() in _STEP_KEYS for k, _ in pairs)


def looks_like_text_log(text: str) -> bool:
    """Whether the first non-empty lines (up to 20) read as a key-value training log: at least half of them,
    and the first line with pairs, are records."""
    lines = [ln for ln in io.StringIO(text, newline=None).read().splitlines()[:200] if ln.strip()][:20]
    if not lines:
        return False
    recs = [is_record(line_pairs(ln)) for ln in lines]
    return sum(recs) * 2 >= len(recs) and recs[0] or sum(recs) * 2 > len(recs)


def _decimals(v: str) -> int | None:
    """The decimal places a printed number is known to (`0.0312` 4, `4.448e-07` 10, `500` 0); None for nan."""
    m = re.fullmatch(r"[-+]?\d*(?:\.(\d*))?(?:[eE]([-+]?\d+))?", v)
    if m is None or not any(ch.isdigit() for ch in v):
        return None
    return max(len(m.group(1) or "") - int(m.group(2) or 0), 0)


def read_text_log(path: Path, max_bytes: int, named: Path) -> _Table:
    """Each record line as a record of its pairs; a name twice on one line is an error."""
    text = read_text(path, max_bytes, named=named)
    records, labels, skipped = [], [], 0
    for n, line in enumerate(io.StringIO(text, newline=None), 1):
        pairs = line_pairs(line)
        if not is_record(pairs):
            skipped += bool(line.strip())
            continue
        rec: dict[str, str] = {}
        for k, v in pairs:
            if k in rec:
                raise LogError(f"{path.name}: line {n} gives {_short(k, 40)} twice ({_short(rec[k], 30)} and "
                               f"{_short(v, 30)}): {_short(line.strip(), 40)}")
            rec[k] = v
        records.append(rec)
        labels.append(f"line {n}")
    if not records:
        hint = ""
        if looks_delimited(text[:4096]):
            hint = ("; it reads as a delimited table (a header line naming columns, then rows of numbers: Keras' "
                    "CSVLogger writes training.log so): read it with format='csv' (CLI: --format csv)")
        raise LogError(f"{path.name}: no line holds a step (or epoch) and a value as 'name value', 'name: value' or "
                       f"'name=value' pairs; not a key-value training log{hint}")
    tab = _records_table(records, path.name, "text", lambda i: labels[i])
    decimals = {}
    for name, col in tab.cols.items():
        ds = [(d, v) for d, v in ((_decimals(v), v) for v in col.values if v is not None) if d is not None]
        if ds:
            decimals[name] = min(ds, key=lambda dv: dv[0])
    tab.notes.append(f"key-value text log: {len(records)} record lines" + (f", {skipped} other lines skipped"
                                                                          if skipped else ""))
    tab.decimals = decimals  # read_log states the printed precision of the series it reads
    return tab
