"""MLflow logs: the file store (`mlruns/<experiment>/<run>/metrics/<key>`) and the sqlite store (`mlflow.db`).

The file store keeps one file per metric, `metrics/<key>` (a key with `/` makes sub-folders), of lines
`timestamp value step` (MLflow's `FileStore._log_run_metric`; older versions wrote `timestamp value`, and
a metric logged with a dataset adds `dataset_name dataset_digest`).  The sqlite store (MLflow 3's default
`sqlite:///mlflow.db`) keeps them in the table `metrics (key, value, timestamp, step, is_nan, run_uuid)`,
runs in `runs (run_uuid, name, experiment_id, lifecycle_stage, start_time)` and experiments in `experiments
(experiment_id, name, lifecycle_stage)`.  The database is read through the door (`grokclocks._safe_io`: from
its bytes, in memory, query-only, no function of its schema trusted, every statement stopped after a time
limit), and only `SELECT`s on those three tables run, after they are checked to be plain tables with the
columns read; MLflow itself is not needed.

Runs are in the order they started (`start_time`), then by name in natural order (`seed2` before `seed10`),
in both stores: never in the order of the run folders' names, which are random hashes.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
from pathlib import Path

from ._safe import _over, decode_text, open_sqlite, read_bytes, read_text, sqlite_tables, subdirs, walk
from ._table import LogError, _Col, _short, _Table, natural_key

_MAX_KEY_FILES = 10_000
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


_LOOK = 1_000  # the sub-folders examined to tell what a folder is (a stat or two each)


def is_experiment_dir(path: Path, named: Path) -> bool:
    """An MLflow file-store experiment folder: `meta.yaml` and sub-folders that are runs (among its first
    1,000)."""
    if not (path / "meta.yaml").is_file() or (path / "metrics").is_dir():
        return False
    return any(is_run_dir(d) for d in _subdirs(path, named)[:_LOOK])


def _subdirs(path: Path, named: Path) -> list[Path]:
    return [d for d in subdirs(path, named=named, name=_display(path)) if not d.name.startswith(".")]


def _meta(run: Path, max_bytes: int, named: Path) -> dict[str, str]:
    """The flat `key: value` lines of a run's `meta.yaml` (only plain scalars are read; no YAML parser)."""
    out: dict[str, str] = {}
    meta = run / "meta.yaml"
    if not meta.is_file():
        return out
    for line in read_text(meta, min(max_bytes, 2**20), name=f"{_display(run)}/meta.yaml", named=named).splitlines():
        key, sep, val = line.partition(":")
        if sep and key and not key.startswith((" ", "\t")):
            out[key.strip()] = val.strip().strip("'\"")
    return out


def _run_name(run: Path, meta: dict[str, str], max_bytes: int, named: Path) -> str:
    tag = run / "tags" / "mlflow.runName"
    if tag.is_file():
        name = read_text(tag, min(max_bytes, 4096), name=f"{_display(run)}/tags/mlflow.runName", named=named).strip()
        if name:
            return name
    return meta.get("run_name") or run.name


def _start_time(meta: dict[str, str]) -> float:
    """A run's `start_time` (milliseconds since 1970) from its meta.yaml; inf when absent or not a number."""
    try:
        t = float(meta.get("start_time", "inf"))
    except ValueError:
        return math.inf
    return t if math.isfinite(t) else math.inf


def _metric_file(path: Path, key: str, max_bytes: int, label: str, named: Path) -> tuple[_Col, int]:
    """One metric file: its values and steps, each line checked; and the bytes it holds."""
    data = read_bytes(path, max_bytes, name=label, named=named)
    text = decode_text(data, label)
    vals, steps, rows = [], [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _LINE.match(line.strip())
        if m is None:
            raise LogError(f"{label}: line {n} is not an MLflow metric line 'timestamp value step' "
                           f"({_short(line, 40)})")
        vals.append(m.group(2))
        steps.append(m.group(3) if m.group(3) is not None else "0")
        rows.append(f"line {n} of {label}")
    if not vals:
        raise LogError(f"{label}: the metric file holds no line")
    if all(s == "0" for s in steps) and len(steps) > 1:
        raise LogError(f"{label}: every line has step 0 (mlflow.log_metric was called without step=); the "
                       "records cannot be placed in training time: log with step=")
    return _Col(key, vals, steps, rows), len(data)


def _metrics_table(metrics: Path, max_bytes: int, source: str, named: Path) -> _Table:
    """Every metric file under a run's `metrics` folder, named by its key (its path under `metrics`)."""
    files = walk(metrics, lambda n: not n.startswith("."), named=named, name=source or _display(metrics),
                 max_entries=_MAX_KEY_FILES)
    if not files:
        raise LogError(f"{source}: the metrics folder holds no metric file")
    cols: dict[str, _Col] = {}
    origin: dict[str, str] = {}
    total = 0
    for f in files:
        key = f.relative_to(metrics).as_posix()
        label = f"metrics/{key}"
        where = f"{source}: {label}" if source else label
        if total >= max_bytes:
            raise _over(source or _display(metrics), "the metric files hold more than", max_bytes, max_bytes)
        cols[key], n = _metric_file(f, key, max_bytes - total, where, named)
        total += n
        origin[key] = label
    tab = _Table(source, "mlflow", cols, text=True, path_roles=True, origin=origin)
    tab.notes.append("MLflow file store (metrics/<key>: 'timestamp value step' lines)")
    return tab


def is_mlruns(path: Path, named: Path) -> bool:
    """An MLflow file store's root (`mlruns/`): sub-folders that are experiments."""
    return not (path / "meta.yaml").is_file() and any(is_experiment_dir(d, named)
                                                      for d in _subdirs(path, named)[:_LOOK])


def read_mlflow_dir(path: Path, max_bytes: int, named: Path) -> list[_Table]:
    """An MLflow store's root with one experiment holding runs, an experiment folder (one table per active
    run, in the order the runs started), a run folder, or its `metrics` folder."""
    if is_mlruns(path, named):
        exps = [d for d in _subdirs(path, named) if is_experiment_dir(d, named)]
        if len(exps) > 1:
            detail = ", ".join(f"{_short(_meta(d, max_bytes, named).get('name', '?'), 40)} ({_short(d.name, 40)})"
                               for d in exps[:8])
            raise LogError(f"{_display(path)}: an MLflow store of {len(exps)} experiments with runs ({detail}); "
                           f"pass one experiment's folder, e.g. {_display(path)}/{exps[0].name}")
        path = exps[0]
    if path.name == "metrics" and is_run_dir(path.parent):
        return [_metrics_table(path, max_bytes, f"{_display(path.parent)}", named)]
    if is_run_dir(path):
        return [_metrics_table(path / "metrics", max_bytes, _display(path), named)]
    if (path / "meta.yaml").is_file():
        runs = [(d, _meta(d, max_bytes, named)) for d in _subdirs(path, named) if is_run_dir(d)]
        active = [(d, m) for d, m in runs if m.get("lifecycle_stage", "active") == "active"]
        if not active:
            raise LogError(f"{_display(path)}: an MLflow experiment folder without an active run")
        named_runs = [(d, m, _run_name(d, m, max_bytes, named)) for d, m in active]
        # the order the runs started (meta.yaml's start_time), then the run name in natural order: never the
        # order of the run folders' names, which are random hashes
        named_runs.sort(key=lambda x: (_start_time(x[1]), natural_key(x[2]), x[0].name))
        tabs = []
        for d, _, run_name in named_runs:
            tab = _metrics_table(d / "metrics", max_bytes, f"{_display(path)}/{d.name}", named)
            tab.run = run_name
            tabs.append(tab)
        tabs[0].notes.append("runs in the order they started (meta.yaml start_time, then run name)")
        if len(runs) > len(active):
            tabs[0].notes.append(f"skipped {len(runs) - len(active)} deleted run(s)")
        return tabs
    raise LogError(f"{_display(path)}: not an MLflow experiment, run or metrics folder (no meta.yaml)")


def read_mlflow_metric(path: Path, max_bytes: int, named: Path) -> list[_Table]:
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
    col, _ = _metric_file(path, key, max_bytes, label, named)
    tab = _Table(label, "mlflow", {key: col}, text=True, path_roles=True, origin={key: label},
                 part_of=f"mlflow:{os.path.abspath(run_dir)}")
    tab.run = run_dir.name
    tab.notes.append(f"MLflow metric file (key {key!r} from its path)")
    return [tab]


# ============================================================================================ sqlite store

_TABLES = {"metrics": {"key", "value", "timestamp", "step", "is_nan", "run_uuid"},
           "runs": {"run_uuid", "name", "experiment_id", "lifecycle_stage", "start_time"},
           "experiments": {"experiment_id", "name", "lifecycle_stage"}}


def read_mlflow_db(path: Path, max_bytes: int, named: Path) -> list[_Table]:
    """MLflow's sqlite store: one table per active run of the one experiment that has runs, in the order the
    runs started.

    The database is read through the door (`open_sqlite`: from its bytes, in memory, `query_only`,
    `trusted_schema = OFF`, every statement stopped after `MAX_SQL_SECONDS`); the three tables read must be
    plain tables (no view, virtual table, generated column or trigger); each is read in one pass (the
    metrics in one scan, grouped by run here), so the time is linear in the rows (after one sort)."""
    name = _display(path)
    con = open_sqlite(path, max_bytes, named=named, name=name)
    try:
        return _db_tables(con, name)
    except sqlite3.Error as exc:
        raise LogError(f"{name}: the SQLite database cannot be read ({_short(str(exc), 120)})") from None
    finally:
        con.close()


def _db_tables(con: sqlite3.Connection, name: str) -> list[_Table]:
    cols = sqlite_tables(con, list(_TABLES), name)
    missing = [t for t, c in cols.items() if not c]
    if missing:
        have = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' LIMIT 20")]
        raise LogError(f"{name}: an SQLite database without MLflow's table(s) {missing} (tables: "
                       f"{_short(sorted(have), 120)}); not an MLflow tracking store")
    for table, need in _TABLES.items():
        if not need <= cols[table]:
            raise LogError(f"{name}: MLflow's table {table!r} lacks the column(s) {sorted(need - cols[table])} (an "
                           "MLflow store of an unknown schema version)")
    exps = {str(e): (str(n), str(s)) for e, n, s in
            con.execute("SELECT experiment_id, name, lifecycle_stage FROM experiments")}
    runs = {}
    n_inactive = 0
    for uuid, run_name, exp, stage, start in con.execute(
            "SELECT run_uuid, name, experiment_id, lifecycle_stage, start_time FROM runs"):
        if stage == "active" and exps.get(str(exp), ("", ""))[1] == "active":
            runs[uuid] = (run_name, str(exp), start)
        else:
            n_inactive += 1
    per_run: dict[object, dict[str, tuple[list, list, list]]] = {}
    for uuid, key, value, step, is_nan in con.execute(
            "SELECT run_uuid, key, value, step, is_nan FROM metrics ORDER BY run_uuid, key, step, timestamp"):
        if uuid not in runs:
            continue
        vals, steps, labels = per_run.setdefault(uuid, {}).setdefault(str(key), ([], [], []))
        if is_nan not in (0, 1) or isinstance(is_nan, str):  # MLflow writes the integer 0 or 1 (a CHECK constraint)
            raise LogError(f"{name}: metric {_short(str(key), 60)} of run {_short(str(runs[uuid][0] or uuid), 60)} "
                           f"(step {_short(step, 30)}): is_nan is {_short(is_nan, 30)}, not 0 or 1; not an MLflow "
                           "store this reader knows")
        vals.append(math.nan if is_nan == 1 else value)  # MLflow stores a NaN as value 0 with is_nan = 1
        steps.append(step)
        labels.append(f"record {len(labels)} of {key}")
    if not per_run:
        raise LogError(f"{name}: the MLflow store holds no active run with metrics")
    skipped = [f"{n_inactive} deleted run(s)"] if n_inactive else []
    no_metrics = [u for u in runs if u not in per_run]
    if no_metrics:
        skipped.append(f"{len(no_metrics)} active run(s) without metrics ("
                       f"{_short([str(runs[u][0] or u) for u in no_metrics[:6]], 120)})")
    ids = sorted({runs[u][1] for u in per_run})
    if len(ids) > 1:
        detail = ", ".join(f"{_short(exps[e][0], 40)} (id {_short(e, 20)}: {sum(runs[u][1] == e for u in per_run)} runs)"
                           for e in ids[:8])
        raise LogError(f"{name}: the MLflow store holds runs of {len(ids)} experiments ({_short(detail, 300)}); "
                       "a comparison reads the seeds of one configuration: delete or move the other experiments' "
                       "runs, or export one experiment's runs")
    def start(u: object) -> float:
        t = runs[u][2]
        return float(t) if isinstance(t, (int, float)) and math.isfinite(t) else math.inf

    order = sorted(per_run, key=lambda u: (start(u), natural_key(str(runs[u][0] or "")), str(u)))
    exp_name = exps[ids[0]][0]
    tabs = []
    for uuid in order:
        run_name = runs[uuid][0]
        cols = {k: _Col(k, v, s, lab) for k, (v, s, lab) in per_run[uuid].items()}
        run = str(run_name) if run_name else str(uuid)
        tab = _Table(f"{name}: run {run}", "mlflow-db", cols, text=True, path_roles=True,
                     origin={k: f"metric {k!r}" for k in cols})
        tab.run = run
        tab.notes.append(f"MLflow sqlite store, experiment {_short(exp_name, 60)}, run {_short(run, 60)} "
                         f"({str(uuid)[:8]})")
        tabs.append(tab)
    tabs[0].notes.append("runs in the order they started (start_time, then run name)")
    if skipped:
        tabs[0].notes.append("skipped " + " and ".join(skipped))
    return tabs
