"""JSON-lines logs: one JSON object per line (a W&B history export)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from ._safe import json_loads, read_text
from ._table import LogError, _records_table, _short, _Table


def _read_jsonl(path: Path, max_bytes: int, named: Path) -> _Table:
    """One record per non-blank line; a missing key or `null` is a value not logged in that record."""
    records, lines, name = [], [], path.name
    for n, line in enumerate(io.StringIO(read_text(path, max_bytes, named=named), newline=None), 1):
        if not line.strip():
            continue
        try:
            records.append(json_loads(line, name, f"line {n}: "))
        except json.JSONDecodeError as exc:
            raise LogError(f"{path.name}: line {n} is not JSON ({exc.msg}): {_short(line)}") from None
        lines.append(n)
    if not records:
        raise LogError(f"{path.name}: the file is empty")
    tab = _records_table(records, path.name, "jsonl", lambda i: f"line {lines[i]}")
    if "_step" in tab.cols:
        tab.notes.append("W&B history layout")
    return tab
