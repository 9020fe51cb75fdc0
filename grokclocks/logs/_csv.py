"""CSV and TSV logs (PyTorch Lightning's `CSVLogger` `metrics.csv` among them)."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

from ._dialect import apply_decimal_comma, delimiter_name, is_number, sniff_decimal, sniff_delimiter
from ._mlflow import is_metric_line
from ._safe import csv_field_limit, read_text
from ._table import LogError, _Col, _short, _Table
from ._text import is_record, line_pairs


def _read_delimited(path: Path, delimiter: str | None, max_bytes: int, decimal: str | None = None, *,
                    named: Path) -> _Table:
    """A header row and one row per record.

    `delimiter` None: the one of `, ; tab |` that splits the first lines into equal numbers of fields
    (`sniff_delimiter`); `decimal` None: a comma when the numbers are written `0,031` (only with a delimiter
    other than a comma).  A cell `NA` (Keras' `CSVLogger`, R) is a value not logged, as an empty one."""
    text = read_text(path, max_bytes, named=named)
    if not text.strip():
        raise LogError(f"{path.name}: the file is empty")
    forced = delimiter is not None
    if delimiter is None:
        delimiter = sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=None), delimiter=delimiter)  # \r, \r\n -> \n, as open()
    with csv_field_limit(max_bytes):
        try:
            rows = [r for r in reader]
        except csv.Error as exc:
            raise LogError(f"{path.name}: line {reader.line_num} cannot be read as {'TSV' if delimiter == chr(9) else 'CSV'}"
                           f" ({exc})") from None
    first = next((i for i, r in enumerate(rows) if any(c.strip() for c in r)), 0)
    _check_header(path, rows[first], delimiter)
    header = [h.strip() for h in rows[first]]
    body = rows[first + 1:]
    data = [r for r in body if any(c.strip() for c in r)]
    if not data:
        raise LogError(f"{path.name}: a header ({_short(', '.join(header[:20]), 80)}) but no data rows")
    dup = sorted(h for h, k in Counter(header).items() if k > 1)
    if dup:
        raise LogError(f"{path.name}: the header repeats the column(s) {_short(dup, 200)}")
    line_of = [first + i + 2 for i, r in enumerate(body) if any(c.strip() for c in r)]
    for r, ln in zip(data, line_of):
        if len(r) != len(header):
            hint = ""
            if len(header) == 1 and not forced:
                hint = "; give the delimiter with delimiter= (CLI: --delimiter ';', tab, '|')"
            raise LogError(f"{path.name}: line {ln} has {len(r)} fields, the header {len(header)} "
                           f"({_short(delimiter.join(r[:50]))}){hint}")
    notes = []
    try:
        dec = decimal if decimal is not None else sniff_decimal([header] + data, delimiter)
    except LogError as exc:
        raise LogError(f"{path.name}: {exc}") from None
    if dec == "," and delimiter == ",":
        raise LogError(f"{path.name}: a decimal comma in a comma-separated file cannot be read; give the delimiter "
                       "(CLI: --delimiter ';')")
    if dec == ",":
        apply_decimal_comma(data, path.name, line_of)
    if delimiter not in (",", "\t") or dec == "," or forced or decimal is not None:
        how = lambda given: "given" if given else "detected"  # noqa: E731
        notes.append(f"delimiter {delimiter_name(delimiter)} ({how(forced)}), decimal mark {dec!r} "
                     f"({how(decimal is not None)})")
    n_na = 0
    for r in data:
        for j, c in enumerate(r):
            if c == "NA":
                r[j] = ""
                n_na += 1
    labels = [f"line {ln}" for ln in line_of]
    cols = {h: _Col(h, [r[j] for r in data], None, labels) for j, h in enumerate(header)}
    fmt = "tsv" if delimiter == "\t" else "csv"
    tab = _Table(path.name, fmt, cols)
    tab.notes.extend(notes)
    if header[0] == "epoch" and "step" not in header and n_na:
        tab.notes.append(f"Keras CSVLogger layout: steps are epochs (0-based); {n_na} 'NA' cells = not logged")
    elif n_na:
        tab.notes.append(f"{n_na} 'NA' cells read as not logged")
    if (path.parent / "hparams.yaml").exists() or {"epoch", "step"} <= set(header):
        tab.notes.append("PyTorch Lightning CSVLogger layout (train and validation rows merged by step)")
    return tab


def _check_header(path: Path, header: list[str], delimiter: str) -> None:
    """A first line that is not column names: numbers only (a file without a header), or a log line."""
    cells = [c.strip() for c in header if c.strip()]
    if len(cells) == 1 and " " in cells[0]:
        cells = cells[0].split()  # a space-separated line read with another delimiter
    if cells and all(is_number(c) for c in cells):
        line = _short(delimiter.join(header), 80)
        text = delimiter.join(header).strip()
        if is_metric_line(text):
            raise LogError(f"{path.name}: the first line {line} is data, not column names: it looks like an MLflow "
                           "metric file ('timestamp value step' lines); pass the run's folder (mlruns/<experiment>/"
                           "<run>) or the file with format='mlflow' (CLI: --format mlflow)")
        raise LogError(f"{path.name}: the first line {line} holds only numbers, so the file has no header naming its "
                       "columns; add one (e.g. step,train_acc,val_acc), or read it with pandas and pass the DataFrame")
    if len(header) == 1 and is_record(line_pairs(header[0])):
        raise LogError(f"{path.name}: the first line {_short(header[0], 80)} is a training-log line of 'name value' "
                       "pairs, not a header; read it as a key-value text log with format='text' (CLI: --format text)")
    other = [d for d in ",;\t|" if d != delimiter and len(header) == 1 and d in header[0]]
    if other:
        raise LogError(f"{path.name}: the header {_short(header[0], 80)} is one column with the delimiter "
                       f"{delimiter_name(delimiter)}; its names are separated by {delimiter_name(other[0])}: give "
                       "that delimiter (CLI: --delimiter), or leave it out to have it detected")
