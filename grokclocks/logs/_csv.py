"""CSV and TSV logs (PyTorch Lightning's `CSVLogger` `metrics.csv` among them)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ._table import LogError, _Col, _short, _Table


def _read_delimited(path: Path, delimiter: str | None) -> _Table:
    text = path.read_text(encoding="utf-8-sig")
    if not text.strip():
        raise LogError(f"{path.name}: the file is empty")
    if delimiter is None:
        head = text.splitlines()[0]
        delimiter = "\t" if head.count("\t") > head.count(",") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    rows = [r for r in reader]
    header = [h.strip() for h in rows[0]]
    data = [r for r in rows[1:] if any(c.strip() for c in r)]
    if not data:
        raise LogError(f"{path.name}: a header ({', '.join(header)}) but no data rows")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise LogError(f"{path.name}: the header repeats the column(s) {dup}")
    line_of = [i + 2 for i, r in enumerate(rows[1:]) if any(c.strip() for c in r)]
    for r, ln in zip(data, line_of):
        if len(r) != len(header):
            raise LogError(f"{path.name}: line {ln} has {len(r)} fields, the header {len(header)} "
                           f"({_short(delimiter.join(r))})")
    labels = [f"line {ln}" for ln in line_of]
    cols = {h: _Col(h, [r[j] for r in data], None, labels) for j, h in enumerate(header)}
    fmt = "tsv" if delimiter == "\t" else "csv"
    tab = _Table(path.name, fmt, cols)
    if (path.parent / "hparams.yaml").exists() or {"epoch", "step"} <= set(header):
        tab.notes.append("PyTorch Lightning CSVLogger layout (train and validation rows merged by step)")
    return tab


