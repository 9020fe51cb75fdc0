"""MLflow logs: the file store (`mlruns/<experiment>/<run>/metrics/<key>`) and the sqlite store (`mlflow.db`).

The file store keeps one file per metric, `metrics/<key>` (a key with `/` makes sub-folders), of lines
`timestamp value step` (MLflow's `FileStore._log_run_metric`; older versions wrote `timestamp value`, and
a metric logged with a dataset adds `dataset_name dataset_digest`).  The sqlite store (MLflow 3's default
`sqlite:///mlflow.db`) keeps them in the table `metrics (key, value, timestamp, step, is_nan, run_uuid)`,
runs in `runs (run_uuid, name, experiment_id, lifecycle_stage)` and experiments in `experiments
(experiment_id, name, lifecycle_stage)`.  The database is opened read-only and only `SELECT`s on those three
tables run, after their columns are checked; MLflow itself is not needed.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
import urllib.parse
from pathlib import Path

from ._safe import find_files, not_regular, open_regular, read_text
from ._table import LogError, _Col, _short, _Table

_MAX_KEY_FILES = 10_000
SQLITE_MAGIC = b"SQLite format 3\x00"
_LINE = re.compile(r"^(-?\d+) (\S+)(?: (-?\d+))?(?: \S+ \S+)?$")


def _display(path: Path) -> str:
    return path.name or str(path)


def is_metric_line(line: str) -> bool:
    """Whether a line reads as an MLflow file-store metric line, `timestamp value [step]`."""
    m = _LINE.match(line.strip())
    if m is None:
        return False
    try:
        float(m.group(2))
    except ValueError:
        return False
    return len(m.group(1)) >= 10  # a timestamp in milliseconds since 1970 (13 digits since 2001)


def is_run_dir(path: Path) -> bool:
    """An MLflow file-store run folder: `meta.yaml` beside a `metrics` folder."""
    return (path / "meta.yaml").is_file() and (path / "metrics").is_dir()


def is_experiment_dir(path: Path) -> bool:
    """An MLflow file-store experiment folder: `meta.yaml` and sub-folders that are runs."""
    if not (path / "meta.yaml").is_file() or (path / "metrics").is_dir():
        return False
    try:
        return any(is_run_dir(d) for d in _subdirs(path))
    except OSError:
        return False


def _subdirs(path: Path) -> list[Path]:
    with os.scandir(path) as it:
        return sorted(Path(e.path) for e in it if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))


def _meta(run: Path, max_bytes: int) -> dict[str, str]:
    """The flat `key: value` lines of a run's `meta.yaml` (only plain scalars are read; no YAML parser)."""
    out: dict[str, str] = {}
    meta = run / "meta.yaml"
    if not meta.is_file():
        return out
    for line in read_text(meta, min(max_bytes, 2**20), name=f"{_display(run)}/meta.yaml").splitlines():
        key, sep, val = line.partition(":")
        if sep and key and not key.startswith((" ", "\t")):
            out[key.strip()] = val.strip().strip("'\"")
    return out


def _run_name(run: Path, max_bytes: int) -> str:
    tag = run / "tags" / "mlflow.runName"
    if tag.is_file() and not_regular(tag) is None:
        name = read_text(tag, min(max_bytes, 4096), name=f"{_display(run)}/tags/mlflow.runName").strip()
        if name:
            return name
    return _meta(run, max_bytes).get("run_name") or run.name


def _metric_file(path: Path, key: str, max_bytes: int, label: str) -> _Col:
    """One metric file: its values and steps, each line checked."""
    text = read_text(path, max_bytes, name=label)
    vals, steps, rows = [], [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _LINE.match(line.strip())
        if m is None:
            raise LogError(f"{label}: line {n} is not an MLflow metric line 'timestamp value step' "
                           f"({_short(line)})")
        vals.append(m.group(2))
        steps.append(m.group(3) if m.group(3) is not None else "0")
        rows.append(f"line {n} of {label}")
    if not vals:
        raise LogError(f"{label}: the metric file holds no line")
    if all(s == "0" for s in steps) and len(steps) > 1:
        raise LogError(f"{label}: every line has step 0 (mlflow.log_metric was called without step=); the "
                       "records cannot be placed in training time: log with step=")
    return _Col(key, vals, steps, rows)


def _metrics_table(metrics: Path, max_bytes: int, source: str) -> _Table:
    """Every metric file under a run's `metrics` folder, named by its key (its path under `metrics`)."""
    files = [f for f in find_files(metrics, lambda n: not n.startswith("."), max_entries=_MAX_KEY_FILES)]
    if not files:
        raise LogError(f"{source}: the metrics folder holds no metric file")
    cols: dict[str, _Col] = {}
    origin: dict[str, str] = {}
    total = 0
    for f in files:
        kind = not_regular(f)
        if kind is not None:
            raise LogError(f"{source}: metrics/{_short(str(f.relative_to(metrics)))} is {kind}, not a regular file")
        total += f.stat().st_size
        if total > max_bytes:
            raise LogError(f"{source}: the metric files hold more than max_bytes = {max_bytes} bytes; raise it "
                           "with max_bytes= (CLI: --max-bytes N)")
        key = f.relative_to(metrics).as_posix()
        label = f"metrics/{key}"
        cols[key] = _metric_file(f, key, max_bytes, f"{source}: {label}" if source else label)
        origin[key] = label
    tab = _Table(source, "mlflow", cols, text=True, path_roles=True, origin=origin)
    tab.notes.append("MLflow file store (metrics/<key>: 'timestamp value step' lines)")
    return tab


def is_mlruns(path: Path) -> bool:
    """An MLflow file store's root (`mlruns/`): sub-folders that are experiments."""
    try:
        return not (path / "meta.yaml").is_file() and any(is_experiment_dir(d) for d in _subdirs(path))
    except OSError:
        return False


def read_mlflow_dir(path: Path, max_bytes: int) -> list[_Table]:
    """An MLflow store's root with one experiment holding runs, an experiment folder (one table per active
    run), a run folder, or its `metrics` folder."""
    if is_mlruns(path):
        exps = [d for d in _subdirs(path) if is_experiment_dir(d)]
        if len(exps) > 1:
            detail = ", ".join(f"{_meta(d, max_bytes).get('name', '?')!r} ({d.name})" for d in exps[:8])
            raise LogError(f"{_display(path)}: an MLflow store of {len(exps)} experiments with runs ({detail}); "
                           f"pass one experiment's folder, e.g. {_display(path)}/{exps[0].name}")
        path = exps[0]
    if path.name == "metrics" and is_run_dir(path.parent):
        return [_metrics_table(path, max_bytes, f"{_display(path.parent)}")]
    if is_run_dir(path):
        return [_metrics_table(path / "metrics", max_bytes, _display(path))]
    if (path / "meta.yaml").is_file():
        runs = [d for d in _subdirs(path) if is_run_dir(d)]
        active = [d for d in runs if _meta(d, max_bytes).get("lifecycle_stage", "active") == "active"]
        if not active:
            raise LogError(f"{_display(path)}: an MLflow experiment folder without an active run")
        tabs = []
        for d in active:
            tab = _metrics_table(d / "metrics", max_bytes, f"{_display(path)}/{d.name}")
            tab.run = _run_name(d, max_bytes)
            tabs.append(tab)
        if len(runs) > len(active):
            tabs[0].notes.append(f"skipped {len(runs) - len(active)} deleted run(s)")
        return tabs
    raise LogError(f"{_display(path)}: not an MLflow experiment, run or metrics folder (no meta.yaml)")


def read_mlflow_metric(path: Path, max_bytes: int) -> list[_Table]:
    """One metric file given alone: its key is its path under the run's `metrics` folder (the role comes from
    it), and it is part of that run (files of one run given together are joined)."""
    parts = path.parts
    if "metrics" in parts[:-1]:
        i = len(parts) - 1 - parts[::-1].index("metrics", 1)
        metrics = Path(*parts[: i + 1])
        key = path.relative_to(metrics).as_posix()
        run_dir = metrics.parent
    else:
        key, run_dir = path.name, path.parent
    label = f"metrics/{key}"
    col = _metric_file(path, key, max_bytes, label)
    tab = _Table(label, "mlflow", {key: col}, text=True, path_roles=True, origin={key: label},
                 part_of=f"mlflow:{os.path.abspath(run_dir)}")
    tab.run = run_dir.name
    tab.notes.append(f"MLflow metric file (key {key!r} from its path)")
    return [tab]


# ============================================================================================ sqlite store

_TABLES = {"metrics": {"key", "value", "timestamp", "step", "is_nan", "run_uuid"},
           "runs": {"run_uuid", "name", "experiment_id", "lifecycle_stage"},
           "experiments": {"experiment_id", "name", "lifecycle_stage"}}


def read_mlflow_db(path: Path, max_bytes: int) -> list[_Table]:
    """MLflow's sqlite store: one table per active run of the one experiment that has runs."""
    name = _display(path)
    with open_regular(path, max_bytes) as f:  # a regular file within the limit, and an sqlite database
        if f.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
            raise LogError(f"{name}: not an SQLite database")
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise LogError(f"{name}: the SQLite database cannot be opened read-only ({exc})") from None
    try:
        con.execute("PRAGMA query_only = ON")
        con.execute("PRAGMA trusted_schema = OFF")  # no function of the file's schema runs
        return _db_tables(con, name)
    except sqlite3.Error as exc:
        raise LogError(f"{name}: the SQLite database cannot be read ({_short(str(exc), 120)})") from None
    finally:
        con.close()


def _db_tables(con: sqlite3.Connection, name: str) -> list[_Table]:
    have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = [t for t in _TABLES if t not in have]
    if missing:
        raise LogError(f"{name}: an SQLite database without MLflow's table(s) {missing} (tables: "
                       f"{_short(sorted(have), 120)}); not an MLflow tracking store")
    for table, need in _TABLES.items():
        cols = {r[0] for r in con.execute("SELECT name FROM pragma_table_info(?)", (table,))}
        if not need <= cols:
            raise LogError(f"{name}: MLflow's table {table!r} lacks the column(s) {sorted(need - cols)} (an MLflow "
                           "store of an unknown schema version)")
    runs = con.execute("SELECT r.run_uuid, r.name, r.experiment_id, e.name FROM runs r JOIN experiments e "
                       "ON r.experiment_id = e.experiment_id WHERE r.lifecycle_stage = 'active' AND "
                       "e.lifecycle_stage = 'active' AND EXISTS (SELECT 1 FROM metrics m WHERE m.run_uuid = "
                       "r.run_uuid) ORDER BY r.start_time, r.run_uuid").fetchall()
    if not runs:
        raise LogError(f"{name}: the MLflow store holds no active run with metrics")
    exps = sorted({(str(r[2]), str(r[3])) for r in runs})
    if len(exps) > 1:
        detail = ", ".join(f"{e[1]!r} (id {e[0]}: {sum(1 for r in runs if str(r[2]) == e[0])} runs)" for e in exps)
        raise LogError(f"{name}: the MLflow store holds runs of {len(exps)} experiments ({_short(detail, 300)}); "
                       "a comparison reads the seeds of one configuration: delete or move the other experiments' "
                       "runs, or export one experiment's runs")
    tabs = []
    for run_uuid, run_name, _, exp_name in runs:
        rows = con.execute("SELECT key, value, step, is_nan FROM metrics WHERE run_uuid = ? "
                           "ORDER BY key, step, timestamp", (run_uuid,)).fetchall()
        per: dict[str, tuple[list, list, list]] = {}
        for key, value, step, is_nan in rows:
            key = str(key)
            vals, steps, labels = per.setdefault(key, ([], [], []))
            vals.append(math.nan if is_nan else value)
            steps.append(step)
            labels.append(f"record {len(labels)} of {key}")
        cols = {k: _Col(k, v, s, lab) for k, (v, s, lab) in per.items()}
        run = str(run_name) if run_name else str(run_uuid)
        tab = _Table(f"{name}: run {run}", "mlflow-db", cols, text=True, path_roles=True,
                     origin={k: f"metric {k!r}" for k in cols})
        tab.run = run
        tab.notes.append(f"MLflow sqlite store, experiment {str(exp_name)!r}, run {run!r} ({str(run_uuid)[:8]})")
        tabs.append(tab)
    return tabs
