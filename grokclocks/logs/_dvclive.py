"""DVCLive logs: one file per metric, `<dir>/plots/metrics/<key>.tsv`.

`Live.log_metric("val/acc", x)` appends a row to `dvclive/plots/metrics/val/acc.tsv` whose header is
`timestamp  step  acc` (tab-separated; `timestamp` only with `timestamp=True` in older versions): the
column holds only the key's last part, and the role (`train/`, `val/`, `eval/`) is in the folder.  So the
series is named by its key, the file's path under `plots/metrics` without `.tsv`.  `dvclive/metrics.json`
holds only the last value of each metric, not a curve, and is not read.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from ._columns import ROLE_WORDS
from ._safe import _over, csv_field_limit, decode_text, read_bytes, walk
from ._table import LogError, _Col, _short, _Table

_MAX_FILES = 10_000


def _display(path: Path) -> str:
    return path.name or str(path)


def metrics_dir(path: Path) -> Path | None:
    """The `plots/metrics` folder of a DVCLive directory, of the run folder holding `dvclive/`, or the folder
    itself; None if there is none."""
    for cand in (path / "plots" / "metrics", path / "dvclive" / "plots" / "metrics"):
        if cand.is_dir():
            return cand
    if path.name == "metrics" and path.parent.name == "plots":
        return path
    return None


def _metrics_root(path: Path) -> Path | None:
    """The `plots/metrics` folder above a file, None if it is not under one."""
    for parent in path.parents:
        if parent.name == "metrics" and parent.parent.name == "plots":
            return parent
    return None


def is_dvclive_file(path: Path, header: str) -> bool:
    """A `.tsv` whose header is DVCLive's: `[timestamp] step <name>` with `<name>` the file's stem."""
    cells = header.rstrip("\r\n").split("\t")
    return path.suffix == ".tsv" and len(cells) in (2, 3) and cells[-1] == path.stem and cells[-2] == "step" and (
        len(cells) == 2 or cells[0] == "timestamp")


def _read_one(path: Path, key: str, max_bytes: int, label: str, named: Path) -> tuple[_Col, int]:
    """One metric file: its steps and values; and the bytes it holds."""
    data = read_bytes(path, max_bytes, name=label, named=named)
    text = decode_text(data, label)
    with csv_field_limit(max_bytes):
        try:
            rows = list(csv.reader(io.StringIO(text, newline=None), delimiter="\t"))
        except csv.Error as exc:
            raise LogError(f"{label}: cannot be read as TSV ({exc})") from None
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows or not is_dvclive_file(path, "\t".join(rows[0])):
        head = "\t".join(rows[0]) if rows else ""
        raise LogError(f"{label}: not a DVCLive metric file (its header must be 'timestamp, step, "
                       f"{_short(path.stem, 40)[1:-1]}', tab-separated; got {_short(head, 40)})")
    header = rows[0]
    vals, steps, labels = [], [], []
    for n, r in enumerate(rows[1:], 2):
        if len(r) != len(header):
            raise LogError(f"{label}: line {n} has {len(r)} fields, the header {len(header)} "
                           f"({_short(chr(9).join(r[:50]), 40)})")
        steps.append(r[-2])
        vals.append(r[-1])
        labels.append(f"line {n} of {label}")
    if not vals:
        raise LogError(f"{label}: a header but no data rows")
    return _Col(key, vals, steps, labels), len(data)


def read_dvclive_dir(path: Path, max_bytes: int, named: Path) -> list[_Table]:
    """Every `.tsv` under the DVCLive `plots/metrics` folder of `path`, one series per file (a link among them is
    refused, not followed; at most `max_bytes` bytes in all)."""
    root = metrics_dir(path)
    if root is None:
        raise LogError(f"{_display(path)}: not a DVCLive folder (no plots/metrics)")
    files = walk(root, lambda n: n.endswith(".tsv"), named=named, name=_display(path), max_entries=_MAX_FILES)
    if not files:
        raise LogError(f"{_display(path)}: the DVCLive folder's plots/metrics holds no .tsv file")
    cols: dict[str, _Col] = {}
    origin: dict[str, str] = {}
    total = 0
    for f in files:
        rel = f.relative_to(root).as_posix()
        if total >= max_bytes:
            raise _over(_display(path), "the metric files hold more than", max_bytes, max_bytes)
        key = rel[: -len(".tsv")]
        cols[key], n = _read_one(f, key, max_bytes - total, f"plots/metrics/{rel}", named)
        total += n
        origin[key] = f"plots/metrics/{rel}"
    tab = _Table(_display(path), "dvclive", cols, text=True, path_roles=True, origin=origin)
    tab.notes.append("DVCLive (plots/metrics/<key>.tsv: one series per file, named by its path)")
    return [tab]


def read_dvclive_file(path: Path, max_bytes: int, named: Path) -> list[_Table]:
    """One DVCLive metric file: its key is its path under `plots/metrics` (the role is in the folder), and it
    is part of its run (files of one run given together are joined)."""
    root = _metrics_root(path)
    if root is not None:
        key = path.relative_to(root).as_posix()[: -len(".tsv")]
        run_dir = root.parent.parent
        label = f"plots/metrics/{key}.tsv"
    else:  # copied out of its folder: the parent folder may still name the role (val/acc.tsv)
        key = f"{path.parent.name}/{path.stem}" if path.parent.name.lower() in ROLE_WORDS else path.stem
        run_dir = path.parent
        label = f"{key}.tsv"
    col, _ = _read_one(path, key, max_bytes, label, named)
    tab = _Table(label, "dvclive", {key: col}, text=True, path_roles=True, origin={key: label},
                 part_of=f"dvclive:{os.path.abspath(run_dir)}")
    tab.run = run_dir.name if run_dir.name not in ("dvclive", "") else (run_dir.parent.name or "run")
    tab.notes.append(f"DVCLive metric file (series key {key!r} from its path)")
    return [tab]
