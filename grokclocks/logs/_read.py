"""`read_log`: the format of a source (content first, extension second), its reader, and its series."""

from __future__ import annotations

import os
import warnings
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import DomainError
from ._columns import SERIES, _check_columns, _one_series, _resolve, _series_steps, _wide_steps, canonical_name
from ._csv import _read_delimited
from ._json import _read_json
from ._jsonl import _read_jsonl
from ._npy import _read_npy
from ._npz import _read_npz
from ._table import _OTHER_KEYS, LogError, LogWarning, RunLog, _Col, _mapping_table, _records_table, _short, _Table
from ._tensorboard import _read_tensorboard
from ._torch import _read_torch

FORMATS: tuple[str, ...] = ("csv", "tsv", "jsonl", "json", "tensorboard", "torch", "npz", "npy")


def _one_in_dir(path: Path, name: str) -> Path | None:
    """The one file called ``name`` under the directory ``path``, None if there is none; several are an error."""
    found = sorted(path.rglob(name))
    if len(found) > 1:
        raise LogError(f"{path.name}: the directory holds several {name} files "
                       f"({', '.join(str(f.relative_to(path)) for f in found[:4])}); pass one of them")
    return found[0] if found else None


def _sniff(path: Path) -> str:
    """The format of a file or directory, from its content first and its name second."""
    if path.is_dir():
        if any(path.rglob("events.out.tfevents.*")):
            return "tensorboard"
        for name, fmt in (("trainer_state.json", "json"), ("metrics.csv", "csv")):
            if _one_in_dir(path, name) is not None:
                return fmt
        raise LogError(f"{path.name}: a directory without a TensorBoard event file, trainer_state.json or metrics.csv")
    name = path.name.lower()
    if name.startswith("events.out.tfevents"):
        return "tensorboard"
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith(b"PK"):
        try:
            with zipfile.ZipFile(path) as z:
                members = z.namelist()
        except zipfile.BadZipFile:
            members = []
        if any(m.endswith("data.pkl") for m in members):
            return "torch"
        return "npz"
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


def _read_table(source: Any, fmt: str | None) -> _Table:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise LogError(f"{str(source)!r}: no such file or directory")
        if path.is_file() and path.stat().st_size == 0:
            raise LogError(f"{path.name}: the file is empty")
        if fmt is None:
            fmt = _sniff(path)
        if fmt not in FORMATS:
            raise DomainError(f"format must be one of {', '.join(FORMATS)} (got {fmt!r})")
        if path.is_dir() and fmt != "tensorboard":
            target = "trainer_state.json" if fmt == "json" else "metrics.csv"
            found = _one_in_dir(path, target)
            if found is None:
                raise LogError(f"{path.name}: a directory without a {target} (format={fmt!r} reads one file; pass it)")
            path = found
        readers: dict[str, Callable[[Path], _Table]] = {
            "csv": lambda p: _read_delimited(p, None), "tsv": lambda p: _read_delimited(p, "\t"),
            "jsonl": _read_jsonl, "json": _read_json, "tensorboard": _read_tensorboard, "torch": _read_torch,
            "npz": _read_npz, "npy": _read_npy}
        return readers[fmt](path)
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # a pandas DataFrame
        df = source
        index_name = getattr(df.index, "name", None)
        if index_name is not None and index_name not in df.columns:
            df = df.reset_index()
        names = [str(c) for c in df.columns]
        dup = sorted({c for c in names if names.count(c) > 1})
        if dup:  # df[c] would be a 2-D block, read as several runs
            raise LogError(f"DataFrame: the columns repeat the name(s) {dup}")
        labels = [f"row {i} (index {_short(ix, 20)})" for i, ix in enumerate(source.index)]
        cols = {str(c): _Col(str(c), df[c].to_numpy(), None, labels) for c in df.columns}
        return _Table("DataFrame", "dataframe", cols, text=False)
    if isinstance(source, Mapping):
        return _mapping_table(source, "mapping", "mapping")
    if isinstance(source, (list, tuple)) and source and all(isinstance(r, Mapping) for r in source):
        return _records_table(source, "records", "records", lambda i: f"record {i}")
    raise DomainError(f"a log must be a path, a pandas DataFrame, a mapping or a list of records "
                      f"(got {type(source).__name__})")



def read_log(source: Any, *, columns: Mapping[str, str] | None = None, format: str | None = None) -> RunLog:
    """Read a run from a log file, a run directory or an in-memory table.

    Parameters
    ----------
    source : path, pandas DataFrame, mapping or list of records
        See the module docstring for the formats.
    columns : mapping, optional
        ``{"test_acc": "val/accuracy", "steps": "_step", ...}``: which column holds a series (overrides the
        name matching).
    format : str, optional
        One of :data:`FORMATS` (default: from the content and the extension).

    Returns
    -------
    RunLog

    Raises
    ------
    LogError
        A file that cannot be read, a value that is not a number, a step that does not increase, an
        accuracy outside [0, 1], ...: the message names the file, the column, the row and its step.
    DomainError
        Invalid ``columns`` or ``format``.

    Warns
    -----
    LogWarning
        Columns that match no series (listed once) and skipped records.
    """
    cols_map = _check_columns(columns)
    if format is not None and (not isinstance(format, str) or format not in FORMATS):
        raise DomainError(f"format must be None or one of {', '.join(FORMATS)} (got {_short(format)})")
    tab = _read_table(source, format)
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
        others = [n for n in tab.cols if n != step_col and canonical_name(n) == "steps"]
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


