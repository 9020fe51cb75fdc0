"""`read_log`: the format of a source (content first, extension second), its reader, and its series."""

from __future__ import annotations

import os
import stat
import warnings
import zipfile
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import DomainError
from ._columns import SERIES, _check_columns, _one_series, _resolve, _series_steps, _wide_steps
from ._csv import _read_delimited
from ._json import _read_json
from ._jsonl import _read_jsonl
from ._npy import _read_npy
from ._npz import _read_npz
from ._safe import DEFAULT_MAX_BYTES, check_max_bytes, find_files, not_regular, open_regular
from ._table import _OTHER_KEYS, LogError, LogWarning, RunLog, _Col, _mapping_table, _records_table, _short, _Table
from ._tensorboard import _read_tensorboard
from ._torch import _read_torch

FORMATS: tuple[str, ...] = ("csv", "tsv", "jsonl", "json", "tensorboard", "torch", "npz", "npy")
"""The readers `read_log` has, the values of its `format` (see the `grokclocks.logs` module text for each)."""


def _one_in_dir(path: Path, name: str) -> Path | None:
    """The one file called `name` under the directory `path`, None if there is none; several are an error."""
    found = find_files(path, lambda n: n == name)
    if len(found) > 1:
        raise LogError(f"{path.name}: the directory holds several {name} files "
                       f"({', '.join(str(f.relative_to(path)) for f in found[:4])}); pass one of them")
    return found[0] if found else None


def _sniff(path: Path, max_bytes: int) -> str:
    """The format of a file or directory, from its content first and its name second."""
    if path.is_dir():
        if find_files(path, lambda n: n.startswith("events.out.tfevents.")):
            return "tensorboard"
        for name, fmt in (("trainer_state.json", "json"), ("metrics.csv", "csv")):
            if _one_in_dir(path, name) is not None:
                return fmt
        raise LogError(f"{path.name}: a directory without a TensorBoard event file, trainer_state.json or metrics.csv")
    name = path.name.lower()
    if name.startswith("events.out.tfevents"):
        return "tensorboard"
    with open_regular(path, max_bytes) as f:
        head = f.read(512)
        if head.startswith(b"PK"):
            f.seek(0)
            try:
                with zipfile.ZipFile(f) as z:
                    members = z.namelist()
            except (zipfile.BadZipFile, OSError, ValueError, EOFError):
                members = []
            return "torch" if any(m.endswith("data.pkl") for m in members) else "npz"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if name.endswith((".pkl", ".pickle")):
        raise LogError(f"{path.name}: pickle files are not read (loading one can run code); save the log as CSV, "
                       "JSON lines, numpy.savez or torch.save")
    if name.endswith((".pt", ".pth", ".ckpt")) or head[:1] == b"\x80":
        return "torch"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff").lstrip()
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith(".json"):
        return "json"
    if text.startswith("{"):
        first = text.splitlines()[0].strip()
        return "jsonl" if first.endswith("}") and len(text.splitlines()) > 1 else "json"
    if text.startswith("["):
        return "json"
    if name.endswith(".tsv"):
        return "tsv"
    return "csv"


def _file_or_dir(source: str | os.PathLike) -> Path:
    """`source` as a path that exists and is a regular file (not empty) or a directory."""
    path = Path(source)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise LogError(f"{str(source)!r}: no such file or directory") from None
    except (OSError, ValueError) as exc:  # a loop of links, a name too long, a NUL byte in the name
        raise LogError(f"{str(source)!r}: cannot be examined ({getattr(exc, 'strerror', None) or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        return path
    if not stat.S_ISREG(st.st_mode):
        raise LogError(f"{str(source)!r}: {not_regular(path)}, not a regular file; only files and run directories "
                       "are read (a stream or device never ends: save the log to a file first)")
    if st.st_size == 0:
        raise LogError(f"{path.name}: the file is empty")
    return path


def _read_table(source: Any, fmt: str | None, max_bytes: int = DEFAULT_MAX_BYTES) -> _Table:
    """The raw table of a path (by format), a pandas DataFrame, a mapping or a list of records."""
    if isinstance(source, (str, os.PathLike)):
        path = _file_or_dir(source)
        if fmt is None:
            fmt = _sniff(path, max_bytes)
        if fmt not in FORMATS:
            raise DomainError(f"format must be one of {', '.join(FORMATS)} (got {fmt!r})")
        if path.is_dir() and fmt != "tensorboard":
            target = "trainer_state.json" if fmt == "json" else "metrics.csv"
            found = _one_in_dir(path, target)
            if found is None:
                raise LogError(f"{path.name}: a directory without a {target} (format={fmt!r} reads one file; pass it)")
            path = found
        readers: dict[str, Callable[[Path, int], _Table]] = {
            "csv": lambda p, m: _read_delimited(p, None, m), "tsv": lambda p, m: _read_delimited(p, "\t", m),
            "jsonl": _read_jsonl, "json": _read_json, "tensorboard": _read_tensorboard, "torch": _read_torch,
            "npz": _read_npz, "npy": _read_npy}
        return readers[fmt](path, max_bytes)
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # a pandas DataFrame
        df = source
        index_name = getattr(df.index, "name", None)
        if index_name is not None and index_name not in df.columns:
            df = df.reset_index()
        names = [str(c) for c in df.columns]
        dup = sorted(c for c, k in Counter(names).items() if k > 1)
        if dup:  # df[c] would be a 2-D block, read as several runs
            raise LogError(f"DataFrame: the columns repeat the name(s) {_short(dup, 200)}")
        labels = [f"row {i} (index {_short(ix, 20)})" for i, ix in enumerate(source.index)]
        cols = {str(c): _Col(str(c), df[c].to_numpy(), None, labels) for c in df.columns}
        return _Table("DataFrame", "dataframe", cols, text=False)
    if isinstance(source, Mapping):
        return _mapping_table(source, "mapping", "mapping")
    if isinstance(source, (list, tuple)) and source and all(isinstance(r, Mapping) for r in source):
        return _records_table(source, "records", "records", lambda i: f"record {i}")
    raise DomainError(f"a log must be a path, a pandas DataFrame, a mapping or a list of records "
                      f"(got {type(source).__name__})")


def read_log(source: Any, *, columns: Mapping[str, str] | None = None, format: str | None = None,  # noqa: A002
             max_bytes: int = DEFAULT_MAX_BYTES) -> RunLog:
    """Read a run from a log file, a run directory or an in-memory table.

    The format is found from the content, then the name (the `grokclocks.logs` module text lists them); each
    column is matched to a series by `canonical_name` unless `columns` names it; every series keeps the records
    where it was logged, on the union of their steps, with `NaN` elsewhere (nothing is interpolated).

    Parameters
    ----------
    source : str or os.PathLike, pandas DataFrame, mapping or list of dicts
        The log: a path to a file (CSV, TSV, JSON lines, JSON or `trainer_state.json`, TensorBoard event file,
        `torch.save`, `.npz`, `.npy`) or to a run directory (TensorBoard events, or one `trainer_state.json` or
        `metrics.csv` under it); or in memory a DataFrame, a mapping of column name -> list or array, or a list
        of records (dicts).
    columns : mapping of str to str, optional
        Series -> column name, e.g. `{"test_acc": "val/accuracy", "steps": "_step"}`, overriding the name
        matching for those series; keys are `"steps"` or names of `SERIES`.  Default `None`: every column is
        matched by its name.
    format : str, optional
        The reader, one of `FORMATS`; default `None`: chosen from the content and the extension.
    max_bytes : int
        The most bytes a file may hold, or a zip archive's members unpack to (read from its directory and
        each `.npy` header before anything is decompressed), or a TensorBoard directory's event files hold
        together; an integer ≥ 1, default `DEFAULT_MAX_BYTES` (256 MiB).  A text log takes up to about 20
        times its size in memory while it is parsed.

    Returns
    -------
    RunLog
        The series on one step grid, the columns they came from, the ignored columns and the reader's notes.

    Raises
    ------
    LogError
        The log cannot be read: not a regular file, over `max_bytes`, not UTF-8, nested deeper than
        `MAX_JSON_DEPTH`, a value that is not a number, a step that does not increase, an accuracy outside
        [0, 1], a negative loss, two columns for one series, ...; one line naming the file and, where there
        is one, the column, the row and its step.
    DomainError
        `columns`, `format` or `max_bytes` is invalid.

    Warns
    -----
    LogWarning
        Columns that match no series (listed once) and skipped records.

    Examples
    --------
    >>> log = read_log({"step": [0, 10, 20], "train_acc": [0.2, 0.9, 1.0], "val/acc": [0.1, None, 0.8]})
    >>> log.columns
    {'train_acc': 'train_acc', 'test_acc': 'val/acc'}
    >>> log.arrays["test_acc"].tolist()
    [0.1, nan, 0.8]
    """
    cols_map = _check_columns(columns)
    max_bytes = check_max_bytes(max_bytes)
    if format is not None and (not isinstance(format, str) or format not in FORMATS):
        raise DomainError(f"format must be None or one of {', '.join(FORMATS)} (got {_short(format)})")
    tab = _read_table(source, format, max_bytes)
    chosen, step_col, role_steps, ignored = _resolve(tab, cols_map)
    if not chosen:
        raise LogError(f"{tab.source}: no column reads as a series ({', '.join(SERIES)}); columns: "
                       f"{_short(list(tab.cols), 200)}. Map them with columns= (CLI: --columns "
                       "test_acc=COLUMN,...)")
    per: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    wide: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    step_from: dict[str, str] = {}
    for series, name in chosen.items():
        col = tab.cols[name]
        raw, where = _series_steps(tab, col, series, step_col, role_steps)
        step_from[series] = where
        if isinstance(col.values, np.ndarray) and col.values.ndim == 2:
            try:
                vals = np.asarray(col.values, dtype=np.float64)
            except (TypeError, ValueError):
                raise LogError(f"{tab.source}: column {name!r} ({series}) is not an array of numbers "
                               f"(dtype {col.values.dtype})") from None
            wide[series] = (_wide_steps(tab, col, raw, where), vals)
            continue
        t, v = _one_series(tab, col, series, raw, where)
        if t.size == 0:
            raise LogError(f"{tab.source}: column {name!r} ({series}) holds no value")
        per[series] = (t, v)
    notes = list(tab.notes)
    if step_col in step_from.values():  # not when every series has its own steps (TensorBoard's 'epoch' tag)
        others = [n for n in tab.cols if n != step_col and tab.canon[n] == "steps"]
        notes.append(f"steps from {step_col!r}" + (f" (also present: {', '.join(map(repr, others))})" if others else ""))
    notes += [f"{series} steps from {where!r}" for series, where in step_from.items()
              if where not in (step_col, "its own steps")]
    arrays: dict[str, Any] = {}
    if wide:
        if per:
            raise LogError(f"{tab.source}: mixes 2-D series (several runs: {sorted(wide)}) with 1-D ones ({sorted(per)})")
        # each 2-D series on its own steps (a <column>_steps or val_step array), placed on their union, NaN between
        grid = np.unique(np.concatenate([t for t, _ in wide.values()]))
        arrays["steps"] = grid
        for series, (t, v) in wide.items():
            full = np.full(v.shape[:1] + grid.shape, np.nan)
            full[:, np.searchsorted(grid, t)] = v
            arrays[series] = full
    else:
        grid = np.unique(np.concatenate([t for t, _ in per.values()]))
        arrays["steps"] = grid
        for series, (t, v) in per.items():
            full = np.full(grid.size, np.nan)
            full[np.searchsorted(grid, t)] = v
            arrays[series] = full
    for k, v in tab.other.items():
        if k in _OTHER_KEYS:
            arrays[k] = v
        else:
            ignored.append(k)
    for k, k_steps in (("embeddings", "embedding_steps"), ("weights", "weights_steps")):
        # snapshots without their own steps are at the log's step array (USER_KEYS); when the series' union
        # grid differs from it (records where no series was logged are dropped), say so, or run_data would
        # put the snapshots on the grid's first records
        if k in arrays and k_steps not in arrays and step_col is not None:
            t_file = tab.cols[step_col].values
            if np.shape(t_file) != arrays["steps"].shape or np.any(np.asarray(t_file) != arrays["steps"]):
                n_snap = np.shape(arrays[k])[-3] if k == "embeddings" and np.ndim(arrays[k]) >= 3 else None
                if n_snap is not None and n_snap != np.size(t_file):
                    raise LogError(f"{tab.source}: {k} holds {n_snap} snapshots but {step_col!r} {np.size(t_file)} "
                                   f"steps, and the series were logged at {arrays['steps'].size} of them; give the "
                                   f"snapshots' steps as {k_steps}")
                arrays[k_steps] = t_file
                notes.append(f"{k} on the steps of {step_col!r} ({np.size(t_file)} records; the series' "
                             f"union grid has {arrays['steps'].size})")
    if ignored:
        warnings.warn(f"{tab.source}: ignored columns that match no series: {_short(ignored, 300)} (map one with "
                      "columns={'test_acc': ...}, CLI --columns)", LogWarning, stacklevel=2)
    return RunLog(tab.source, tab.fmt, arrays, {s: chosen[s] for s in chosen}, tuple(ignored), tuple(notes),
                  step_col if step_col in step_from.values() else None)


