"""`load_run`: a run from a file of the engine or a logger, and the one dispatcher of every run source.

`as_run_data` is the one door for runs: `compare_run` and `forecast` both turn their `run` argument (a path or a
list of paths, a `Trajectory`, a `RunData`, a DataFrame, a mapping, records, or keyword arrays alone) into
`RunData` through it, so both read every source the same way.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import logs as _logs
from .._validate import DomainError
from ..logs import _safe
from ._arrays import run_data
from ._engine import _engine_file, _engine_run, _finish, _is_engine_npz
from ._records import RunData

__all__ = ["load_run"]


def _log_kwargs(log: _logs.RunLog) -> dict[str, Any]:
    kw = dict(log.arrays)
    for k in ("operation",):
        if k in kw:
            kw[k] = str(kw[k])
    for k in ("p", "b_offset", "lam"):  # run_data checks them: int() would read p = 31.5 as 31, float() True as 1
        if k in kw:
            v = np.asarray(kw[k])
            v = v.reshape(()).item() if v.size == 1 else kw[k]
            if isinstance(v, str):  # a text log's setting
                try:
                    v = int(v) if v.strip().isdigit() else float(v)
                except ValueError:
                    pass
            kw[k] = v
    used = ", ".join(f"{s} <- {c!r}" for s, c in log.columns.items())
    notes = [f"read as {log.format}: {used}"] + list(log.notes)
    if log.ignored:
        notes.append(f"ignored columns: {_logs._short(list(log.ignored), 160)}")
    kw["source"] = log.source
    kw["input_notes"] = notes
    return kw


def _resolve_path(path: str | os.PathLike) -> Path:
    """The run's path as given (an engine run's `.npz` may be left off); an empty path is refused (it would be
    the current folder)."""
    if os.fspath(path) == "":
        raise DomainError("path must name a log file or run directory (got '', an empty path; the current folder "
                          "is '.')")
    p = Path(path)
    if not p.exists() and p.name and p.with_name(p.name + ".npz").exists():
        p = p.with_name(p.name + ".npz")
    if not p.exists():
        raise DomainError(f"path must be an existing log file or run directory (got {str(path)!r})")
    return p


def _no_index(index: Any, p: Path) -> None:
    """A log holds no engine grid: an `index` given for it is refused, not ignored (`--index 3` on a CSV read the
    whole log as if grid point 3 had been chosen)."""
    if index is not None:
        shown = tuple(index) if isinstance(index, (list, tuple)) else (index,)
        raise DomainError(f"index must be None (got {shown!r}) for {_logs._short(p.name, 80)}: index picks a grid point "
                          "of an engine sweep's run file, and a log holds no grid")


def load_run(path: Any, *, index: Any = None, columns: Mapping[str, str] | None = None,
             format: str | None = None, max_bytes: int = _safe.DEFAULT_MAX_BYTES,  # noqa: A002
             delimiter: str | None = None, decimal: str | None = None) -> RunData:
    """Read a run: an engine `.npz` (`Trajectory.save`), any log of `grokclocks.logs`, or several (one per seed).

    An engine file has the keys `times`, `metric:<name>` and `extra:<name>` and its config (in the archive's
    `meta` entry, or the `.json` beside it), read as plain JSON: no JAX is needed except to rebuild a random
    split's training mask; the config values used (`p`, `threshold`, `train_frac`, `seeds`, `split_seed`,
    `grid_axes`) are checked.  Every other file or directory goes to `grokclocks.logs.read_log` (CSV, TSV, JSON
    lines / W&B, TensorBoard, Lightning `metrics.csv`, Hugging Face `trainer_state.json`, `torch.save`,
    `.npz`, `.npy`, MLflow, DVCLive, Sacred, Aim, Keras `CSVLogger`, W&B chart exports, key-value text logs).
    A list or tuple of paths is one run with one seed per file, except files that each hold part of a run
    (DVCLive or MLflow metric files, W&B chart exports), which are joined by run (`grokclocks.logs.read_logs`).

    Parameters
    ----------
    path : str or os.PathLike, or a list or tuple of them
        The run's file or run directory (`.npz` may be left off an engine run's name), or one log file per
        seed of the same configuration (an engine run holds its seeds already and is refused in a list).
    index : tuple of int, optional
        The grid point of an engine sweep, one index per axis of its `config.grid_axes`; required when the
        file holds a grid of more than one point, `None` (default) otherwise (a log holds no grid: an index
        given with one is refused).
    columns : mapping of str to str, optional
        Series -> column name of a log, overriding the name matching of `grokclocks.logs.canonical_name`;
        default `None`.
    format : str, optional
        Force a log reader, one of `grokclocks.logs.FORMATS` (an engine file is then read as a plain `.npz`
        log); default `None`: from the content and the extension.
    max_bytes : int
        The most bytes a file may hold, or a zip archive's members unpack to (checked from its directory and
        `.npy` headers before anything is decompressed); an integer ≥ 1, default
        `grokclocks.logs.DEFAULT_MAX_BYTES` (256 MiB).  The CLI's `--max-bytes`.
    delimiter : str, optional
        The delimiter of a CSV log, `","`, `";"`, `"tab"` (or a tab character) or `"|"`; default `None`: detected from
        its first lines.  The CLI's `--delimiter`.
    decimal : str, optional
        The decimal mark of a CSV log, `"."` or `","`; default `None`: detected (a comma only with another
        delimiter).  The CLI's `--decimal`.

    Returns
    -------
    RunData
        The run's arrays, validated by `run_data`, with notes on how the input was read and aligned.

    Raises
    ------
    DomainError
        A missing file, a log that cannot be read (`grokclocks.logs.LogError`: the file, the column, the row
        and its step), a damaged engine file (`grokclocks.runfile.RunFileError`), an engine config value of
        the wrong kind (naming the file and the key), invalid arrays, or an invalid `max_bytes`.
    """
    max_bytes = _safe.check_max_bytes(max_bytes)
    opts = {"columns": columns, "format": format, "max_bytes": max_bytes, "delimiter": delimiter,
            "decimal": decimal}
    if isinstance(path, (list, tuple)):
        if not path:
            raise DomainError("give at least one path")
        if len(path) == 1:
            return load_run(path[0], index=index, **opts)
        seen: dict[Path, Any] = {}
        resolved = []
        for q in path:
            p = _resolve_path(q)
            if p.resolve() in seen:
                raise DomainError(f"path lists the same file twice ({str(seen[p.resolve()])!r} and {str(q)!r}): "
                                  "each file is one seed")
            seen[p.resolve()] = q
            if _is_engine_npz(p, max_bytes):
                raise DomainError(f"{p.name} is an engine run (it holds its seeds already); pass it alone")
            resolved.append(p)
        _no_index(index, resolved[0])
        log = _logs.read_logs(resolved, **opts)
        kw = _log_kwargs(log)
        if log.run_names:
            kw["run_names"] = list(log.run_names)
            names = ", ".join(log.run_names)
            kw["source"] = f"{len(log.run_names)} seeds: {names if len(names) <= 120 else names[:117] + '...'}"
        return run_data(**kw)
    p = _resolve_path(path)
    if format is None and _is_engine_npz(p, max_bytes):
        return _engine_file(p, index, max_bytes)
    _no_index(index, p)
    log = _logs.read_log(p, **opts)
    kw = _log_kwargs(log)
    if log.run_names:
        kw["run_names"] = list(log.run_names)
    return run_data(**kw)


def read_sidecar(path: str | os.PathLike, *, named: str | os.PathLike, max_bytes: int = 2**20) -> Any:
    """The JSON value of a run's sidecar file `path` (`run.json` beside `run.npz`, `X.csv.json` beside `X.csv`), or
    `None` when there is none; read through the door: found beside the file the user named (`named`), so not a
    link, a regular file of at most `max_bytes` bytes (default 1 MiB: a sidecar holds a config of a few KiB),
    UTF-8 JSON nested at most 64 levels, integers of at most 300 digits, no key twice.

    Raises
    ------
    grokclocks.logs.LogError
        The sidecar exists but is refused (a link, not a regular file, too large, not UTF-8 JSON, too deep, a
        key twice, an integer too long); one line naming it.

    Notes
    -----
    A folder the user named (a run directory) has no sidecar: a `NAME.json` beside it is another file, not
    read (`None`).
    """
    path = Path(path)
    if not os.path.lexists(path) or os.path.isdir(named):
        return None
    return _safe.read_json(path, max_bytes, named=named, name=path.name)


def as_run_data(run: Any, index: Any, columns: Mapping[str, str] | None, overrides: Mapping[str, Any]) -> RunData:
    """Any run `compare_run` and `forecast` accept, as `RunData`: the one dispatcher of run sources.

    `run` is a log path or a list of them (one per seed; read by `load_run`), a `Trajectory` (anything with
    `times` and `metrics`), a `RunData`, a pandas DataFrame, a mapping or a list of records (read by
    `grokclocks.logs.read_log`), or `None` (the keyword arrays alone).  `overrides` (keyword arrays and settings;
    `None` = not given) replace the run's own.  `index` is an engine grid point, `columns` a log's column map.
    """
    given = {k: v for k, v in overrides.items() if v is not None}
    if isinstance(run, (str, os.PathLike)) or (isinstance(run, (list, tuple)) and run
                                                and all(isinstance(x, (str, os.PathLike)) for x in run)):
        run = load_run(run, index=index, columns=columns)
    if run is None:
        if given.get("steps") is None:
            raise DomainError("give a run or at least steps= and an accuracy")
        return _finish({}, {"source": "arrays"}, dict(overrides))
    if isinstance(run, RunData):
        if not given:
            return run
        base = {f.name: getattr(run, f.name) for f in dataclasses.fields(run)}
        base["input_notes"] = tuple(n for n in run.input_notes if not n.startswith(("aligned", "  ")))
        return run_data(**{**base, **given})
    if hasattr(run, "times") and hasattr(run, "metrics"):
        kw, defaults = _engine_run(run.times, run.metrics, getattr(run, "extras", {}) or {},
                                   getattr(run, "config", None), index,
                                   f"Trajectory ({type(getattr(run, 'config', None)).__name__})")
        return _finish(kw, defaults, dict(overrides))
    if isinstance(run, Mapping) or (hasattr(run, "to_dict") and hasattr(run, "columns")) or (
            isinstance(run, (list, tuple)) and run and all(isinstance(x, Mapping) for x in run)):
        return _finish(_log_kwargs(_logs.read_log(run, columns=columns)), {}, dict(overrides))
    raise DomainError(f"run must be a Trajectory, RunData, log path (or a list of them, one per seed), DataFrame, "
                      f"mapping or None (got {type(run).__name__})")
