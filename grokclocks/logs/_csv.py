"""CSV and TSV logs (PyTorch Lightning's `CSVLogger` `metrics.csv` among them)."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

from ._safe import csv_field_limit, read_text
from ._table import LogError, _Col, _short, _Table


def _read_delimited(path: Path, delimiter: str | None, max_bytes: int) -> _Table:
    """A header row and one row per record; `delimiter` None = a tab if the header holds more tabs than commas."""
    text = read_text(path, max_bytes)
    if not text.strip():
        raise LogError(f"{path.name}: the file is empty")
    if delimiter is None:
        head = io.StringIO(text, newline=None).readline()
        delimiter = "\t" if head.count("\t") > head.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=None), delimiter=delimiter)  # \r, \r\n -> \n, as open()
    with csv_field_limit(max_bytes):
        try:
            rows = [r for r in reader]
        except csv.Error as exc:
            raise LogError(f"{path.name}: line {reader.line_num} cannot be read as {'TSV' if delimiter == chr(9) else 'CSV'}"
                           f" ({exc})") from None
    header = [h.strip() for h in rows[0]]
    data = [r for r in rows[1:] if any(c.strip() for c in r)]
    if not data:
        raise LogError(f"{path.name}: a header ({_short(', '.join(header), 200)}) but no data rows")
    dup = sorted(h for h, k in Counter(header).items() if k > 1)
    if dup:
        raise LogError(f"{path.name}: the header repeats the column(s) {_short(dup, 200)}")
    line_of = [i + 2 for i, r in enumerate(rows[1:]) if any(c.strip() for c in r)]
    for r, ln in zip(data, line_of):
        if len(r) != len(header):
            raise LogError(f"{path.name}: line {ln} has {len(r)} fields, the header {len(header)} "
                           f"({_short(delimiter.join(r[:50]))})")
    labels = [f"line {ln}" for ln in line_of]
    cols = {h: _Col(h, [r[j] for r in data], None, labels) for j, h in enumerate(header)}
    fmt = "tsv" if delimiter == "\t" else "csv"
    tab = _Table(path.name, fmt, cols)
    if (path.parent / "hparams.yaml").exists() or {"epoch", "step"} <= set(header):
        tab.notes.append("PyTorch Lightning CSVLogger layout (train and validation rows merged by step)")
    return tab
