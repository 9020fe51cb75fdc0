"""`read_log`: the format of a source (content first, extension second), its reader, and its series."""

from __future__ import annotations

import dataclasses
import os
import stat
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._safe_io import kind, listing_budget
from .._validate import DomainError
from ._aim import read_aim
from ._columns import SERIES, _check_columns, _one_series, _resolve, _series_steps, _wide_steps
from ._csv import _read_delimited
from ._dialect import check_decimal, check_delimiter
from ._dvclive import is_dvclive_file, read_dvclive_dir, read_dvclive_file
from ._json import _read_json
from ._jsonl import _read_jsonl
from ._merge import merge_seeds
from ._mlflow import is_metric_line, read_mlflow_db, read_mlflow_dir, read_mlflow_metric
from ._npy import _read_npy
from ._npz import _read_npz
from ._safe import DEFAULT_MAX_BYTES, SQLITE_MAGIC, check_max_bytes, excerpt, open_regular, walk, zip_names
from ._table import (_OTHER_KEYS, LogError, LogWarning, RunLog, _Col, _cut, _mapping_table, _records_table, _short,
                     _Table)
from ._runs import dir_kind, display, folder_of_runs, join_parts, run_kind
from ._tensorboard import _read_tensorboard
from ._text import looks_delimited, looks_like_text_log, read_text_log
from ._torch import _read_torch
from ._wandb import is_wandb_export, split_wandb_export

FORMATS: tuple[str, ...] = ("csv", "tsv", "jsonl", "json", "tensorboard", "torch", "npz", "npy", "text", "mlflow",
                             "mlflow-db", "dvclive", "sacred", "aim")
"""The readers `read_log` has, the values of its `format` (see the `grokclocks.logs` module text for each)."""


def _one_in_dir(path: Path, name: str, named: Path) -> Path | None:
    """The one file called `name` under the directory `path`, None if there is none; several are an error."""
    found = walk(path, lambda n: n == name, named=named, name=display(path))
    if len(found) > 1:
        raise LogError(f"{display(path)}: the directory holds several {name} files "
                       f"({', '.join(str(f.relative_to(path)) for f in found[:4])}); pass one of them")
    return found[0] if found else None


def _sniff(path: Path, max_bytes: int, named: Path) -> str:
    """The format of a file or directory, from its content first and its name second."""
    if path.is_dir():
        return dir_kind(path, named)
    name = path.name.lower()
    if name.startswith("events.out.tfevents"):
        return "tensorboard"
    with open_regular(path, max_bytes, named=named) as f:
        head = f.read(8192)
        if not head:
            raise LogError(f"{display(path)}: the file is empty")
        if head.startswith(SQLITE_MAGIC):
            return "mlflow-db"
        if head.startswith(b"PK"):
            f.seek(0)
            members = zip_names(f, path.name) or []
            return "torch" if any(m.endswith("data.pkl") for m in members) else "npz"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if name.endswith((".pkl", ".pickle")):
        raise LogError(f"{path.name}: pickle files are not read (loading one can run code); save the log as CSV, "
                       "JSON lines, numpy.savez or torch.save")
    if name.endswith((".pt", ".pth", ".ckpt")) or head[:1] == b"\x80":
        return "torch"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff").lstrip()
    first = text.splitlines()[0] if text else ""
    if is_dvclive_file(path, first):
        return "dvclive"
    if is_metric_line(first) and "." not in path.name:
        return "mlflow"
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith(".json"):
        return "json"
    if text.startswith("{"):
        first = text.splitlines()[0].strip()
        return "jsonl" if first.endswith("}") and len(text.splitlines()) > 1 else "json"
    if text.startswith("["):
        return "json"
    if looks_like_text_log(text[:4096]):
        return "text"
    if name.endswith((".log", ".txt", ".out")):
        # Keras' CSVLogger writes training.log, a CSV: the content decides before the name
        return "csv" if looks_delimited(text[:4096]) else "text"
    if name.endswith(".tsv"):
        return "tsv"
    return "csv"


def _file_or_dir(source: str | os.PathLike) -> Path:
    """`source` as a path that exists and is a regular file or a directory (an empty path is refused: it would
    read the current folder).  A link is followed: the user named it."""
    if os.fspath(source) == "":
        raise LogError("'': an empty path; name the log file or run directory (the current folder is '.')")
    path = Path(source)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise LogError(f"{excerpt(str(source), 200)}: no such file or directory") from None
    except (OSError, ValueError) as exc:  # a loop of links, a name too long, a NUL byte in the name
        raise LogError(f"{excerpt(str(source), 200)}: cannot be examined "
                       f"({getattr(exc, 'strerror', None) or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        return path
    if not stat.S_ISREG(st.st_mode):
        raise LogError(f"{excerpt(str(source), 200)}: {kind(st.st_mode)}, not a regular file; only files and run "
                       "directories are read (a stream or device never ends: save the log to a file first)")
    return path


def _path_tables(path: Path, fmt: str, max_bytes: int, delimiter: str | None, decimal: str | None,
                 named: Path) -> list[_Table]:
    """The tables of one file or run directory in format `fmt` (`named`: the path the user gave, which `path` is
    or lies under)."""
    if fmt == "aim":
        return read_aim(path, max_bytes, named)
    if fmt == "mlflow":
        return (read_mlflow_dir(path, max_bytes, named) if path.is_dir()
                else read_mlflow_metric(path, max_bytes, named))
    if fmt == "mlflow-db":
        if path.is_dir():
            raise LogError(f"{display(path)}: format 'mlflow-db' reads an MLflow sqlite file (mlflow.db), not a directory")
        return read_mlflow_db(path, max_bytes, named)
    if fmt == "dvclive":
        return (read_dvclive_dir(path, max_bytes, named) if path.is_dir()
                else read_dvclive_file(path, max_bytes, named))
    if path.is_dir() and fmt == "sacred":
        path = path / "metrics.json"
        if not path.is_file():
            raise LogError(f"{display(path.parent)}: a Sacred run folder without metrics.json")
        fmt = "json"
    elif path.is_dir() and fmt != "tensorboard":
        target = "trainer_state.json" if fmt == "json" else "metrics.csv"
        found = _one_in_dir(path, target, named)
        if found is None:
            raise LogError(f"{display(path)}: a directory without a {target} (format={fmt!r} reads one file; pass it)")
        path = found
    if fmt == "sacred":
        fmt = "json"
    if fmt in ("csv", "tsv"):
        tab = _read_delimited(path, "\t" if fmt == "tsv" and delimiter is None else delimiter, max_bytes, decimal,
                              named=named)
        return split_wandb_export(tab) if is_wandb_export(list(tab.cols)) else [tab]
    if fmt == "text":
        return [read_text_log(path, max_bytes, named)]
    readers: dict[str, Callable[[Path, int, Path], _Table]] = {
        "jsonl": _read_jsonl, "json": _read_json, "tensorboard": _read_tensorboard, "torch": _read_torch,
        "npz": _read_npz, "npy": _read_npy}
    return [readers[fmt](path, max_bytes, named)]


def _folder_of_runs(path: Path, runs: list[Path], fmt: str, max_bytes: int, delimiter: str | None,
                    decimal: str | None) -> list[_Table]:
    """One table per sub-folder run, named by the sub-folder (`path`: the folder the user named)."""
    tabs = []
    for d in runs:
        sub = _path_tables(d, fmt, max_bytes, delimiter, decimal, path)
        if len(sub) > 1:
            raise LogError(f"{display(path)}: the sub-folder {_short(d.name)} holds {len(sub)} runs itself; pass the "
                           "sub-folders (or their runs) one by one")
        sub[0].run = d.name
        sub[0].source = f"{display(path)}/{d.name}"
        tabs.append(sub[0])
    tabs[0].notes.append(f"a folder of {len(runs)} runs ({_cut(', '.join(d.name for d in runs))}): one seed "
                         "per sub-folder, as runs/*/ would be")
    return tabs


def _read_tables(source: Any, fmt: str | None, max_bytes: int = DEFAULT_MAX_BYTES, delimiter: str | None = None,
                 decimal: str | None = None) -> list[_Table]:
    """The raw tables of a path (by format; one per run), a pandas DataFrame, a mapping or a list of records."""
    if isinstance(source, (str, os.PathLike)):
        path = _file_or_dir(source)
        if fmt is None:
            fmt = _sniff(path, max_bytes, path)
        if fmt not in FORMATS:
            raise DomainError(f"format must be one of {', '.join(FORMATS)} (got {fmt!r})")
        if path.is_dir():
            runs = folder_of_runs(path, path) if run_kind(path, path) is None else None
            if runs is not None:
                if runs[0] != fmt:
                    raise LogError(f"{display(path)}: a folder of {runs[0]} runs, not {fmt} (format={fmt!r})")
                return _folder_of_runs(path, runs[1], fmt, max_bytes, delimiter, decimal)
        return _path_tables(path, fmt, max_bytes, delimiter, decimal, path)
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
        return [_Table("DataFrame", "dataframe", cols, text=False)]
    if isinstance(source, Mapping):
        return [_mapping_table(source, "mapping", "mapping")]
    if isinstance(source, (list, tuple)) and source and all(isinstance(r, Mapping) for r in source):
        return [_records_table(source, "records", "records", lambda i: f"record {i}")]
    raise DomainError(f"a log must be a path, a pandas DataFrame, a mapping or a list of records "
                      f"(got {type(source).__name__})")


def read_log(source: Any, *, columns: Mapping[str, str] | None = None, format: str | None = None,  # noqa: A002
             max_bytes: int = DEFAULT_MAX_BYTES, delimiter: str | None = None, decimal: str | None = None) -> RunLog:
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
        each `.npy` header before anything is decompressed), or a TensorBoard directory's event files or an
        Aim repository's `.aim` folder hold together; an integer ≥ 1, default `DEFAULT_MAX_BYTES` (256 MiB).  A text log takes up to about 20
        times its size in memory while it is parsed.
    delimiter : str, optional
        The delimiter of a CSV file: `","`, `";"`, `"tab"` (or a tab character) or `"|"`; default `None`, detected
        from the first lines (the one that splits them into equal numbers of fields).
    decimal : str, optional
        The decimal mark of a delimited file, `"."` or `","`; default `None`, detected (a comma when the
        numbers are written `0,031` and none with a point; only with a delimiter other than a comma).

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
    delimiter, decimal = check_delimiter(delimiter), check_decimal(decimal)
    if format is not None and (not isinstance(format, str) or format not in FORMATS):
        raise DomainError(f"format must be None or one of {', '.join(FORMATS)} (got {_short(format)})")
    with listing_budget() as budget:
        tabs = _read_tables(source, format, max_bytes, delimiter, decimal)
    _warn_linked(budget.linked)
    return _log_of_tables(tabs, cols_map)


def _warn_linked(linked: list[str]) -> None:
    """A `LogWarning` naming the links to folders the read passed without entering (a link found inside a
    folder is not followed): a linked seed of a folder of runs or a linked `validation/` of a TensorBoard run
    is not read, and the reader says so rather than leaving it out without a word."""
    if linked:
        shown = ", ".join(_short(x, 80) for x in linked[:6]) + (f" and {len(linked) - 6} more" if len(linked) > 6
                                                                 else "")
        warnings.warn(f"{len(linked)} linked folder(s) inside the folder read were not read: {shown} (a link found "
                      "inside a folder is not followed; name the folder itself, or copy it in, to read it)",
                      LogWarning, stacklevel=3)


def _log_of_tables(tabs: list[_Table], cols_map: Mapping[str, str]) -> RunLog:
    """One table: its run; several (the runs of an experiment, a folder or a chart export): their seeds."""
    if len(tabs) == 1:
        return _log_of(tabs[0], cols_map)
    return _seeds([_log_of(t, cols_map) for t in tabs], [t.run or t.source for t in tabs])


def _seeds(logs: list[RunLog], names: list[str]) -> RunLog:
    """The logs as the seeds of one run, named."""
    merged = merge_seeds(logs)
    return dataclasses.replace(merged, run_names=tuple(names),
                               source=f"{len(names)} seeds: {_cut(', '.join(names), 120)}")


def _log_of(tab: _Table, cols_map: Mapping[str, str]) -> RunLog:
    """The run of one table: its series, matched by name (or `cols_map`), validated, on their union grid."""
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
    printed = {s: tab.decimals[c] for s, c in chosen.items() if c in tab.decimals}
    if printed:
        notes.append("values as printed in the log, so known only to its precision: " + ", ".join(
            f"{s} down to {d} decimal{'s' if d != 1 else ''} ({v!r})" for s, (d, v) in printed.items()))
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




def read_logs(sources: Sequence[Any], *, columns: Mapping[str, str] | None = None, format: str | None = None,  # noqa: A002
              max_bytes: int = DEFAULT_MAX_BYTES, delimiter: str | None = None, decimal: str | None = None) -> RunLog:
    """Read several logs of one configuration as one run: one seed per file, or the parts of a run joined.

    Each file or directory is one seed (a folder of runs or an MLflow experiment gives several), named by
    its file or folder.  Files that each hold part of a run (a DVCLive metric file `plots/metrics/val/acc.tsv`,
    an MLflow metric file `metrics/val_acc`, a W&B chart export) are joined by their run instead: the train
    and test files of one run are one run, and the chart exports of several runs are those runs' seeds.

    Parameters
    ----------
    sources : list or tuple of str or os.PathLike
        The files or run directories, at least one.
    columns : mapping, optional
        Series -> column name, applied to every seed (after joining parts); default `None`, matched by name.
    format : str, optional
        One of `FORMATS` for every source; default `None`, each found from its content and name.
    max_bytes : int
        The most bytes a file may hold (default `DEFAULT_MAX_BYTES`, 256 MiB).
    delimiter : str, optional
        The delimiter of delimited files (`","`, `";"`, `"tab"` (or a tab character), `"|"`); default `None`, detected.
    decimal : str, optional
        The decimal mark of delimited files, `"."` or `","`; default `None`, detected.

    Returns
    -------
    RunLog
        The seeds on the leading axis (`run_names` one per seed), or the one run the parts make.

    Raises
    ------
    LogError
        A file that cannot be read, files that mix parts of runs with whole runs, a series given by two
        files of one run, or seeds holding different series.
    DomainError
        `sources` empty or not a list, or an invalid option.
    """
    if not isinstance(sources, (list, tuple)) or not sources:
        raise DomainError(f"sources must be a non-empty list of paths (got {_short(sources)})")
    cols_map = _check_columns(columns)
    max_bytes = check_max_bytes(max_bytes)
    delimiter, decimal = check_delimiter(delimiter), check_decimal(decimal)
    if format is not None and (not isinstance(format, str) or format not in FORMATS):
        raise DomainError(f"format must be None or one of {', '.join(FORMATS)} (got {_short(format)})")
    with listing_budget() as budget:
        per = [_read_tables(src, format, max_bytes, delimiter, decimal) for src in sources]
    _warn_linked(budget.linked)
    flat = [t for ts in per for t in ts]
    parts = [t for t in flat if t.part_of is not None]
    if parts and len(parts) < len(flat):
        whole = next(t for t in flat if t.part_of is None)
        raise LogError(f"{parts[0].source} holds part of a run (one metric file or chart) and {whole.source} a "
                       "whole run; pass the parts of runs or whole runs, not both")
    if parts:
        tabs = join_parts(flat)
        names = [t.run or t.source for t in tabs]
    else:
        tabs, names = flat, []
        base = _seed_names(sources)
        for name, ts in zip(base, per):
            names += [name] if len(ts) == 1 else [f"{name}/{t.run or i}" for i, t in enumerate(ts)]
    if len(tabs) == 1:
        return _log_of(tabs[0], cols_map)
    return _seeds([_log_of(t, cols_map) for t in tabs], names)


def _seed_names(sources: Sequence[Any]) -> list[str]:
    """The shortest distinguishing name of each seed's path (`seed1/metrics.csv` -> `seed1`)."""
    paths = [Path(q) for q in sources]
    names = [display(p) for p in paths]
    if len(set(names)) == len(names):
        return names
    parents = [display(p.parent) for p in paths]
    return parents if len(set(parents)) == len(parents) else [str(p) for p in paths]
