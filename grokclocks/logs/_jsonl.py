"""JSON-lines logs: one JSON object per line (a W&B history export)."""

from __future__ import annotations

import json
from pathlib import Path

from ._table import LogError, _records_table, _short, _Table


def _read_jsonl(path: Path) -> _Table:
    records, lines = [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise LogError(f"{path.name}: line {n} is not JSON ({exc.msg}): {_short(line)}") from None
            lines.append(n)
    if not records:
        raise LogError(f"{path.name}: the file is empty")
    tab = _records_table(records, path.name, "jsonl", lambda i: f"line {lines[i]}")
    if "_step" in tab.cols:
        tab.notes.append("W&B history layout")
    return tab


