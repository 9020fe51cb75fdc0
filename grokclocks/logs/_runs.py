"""What a directory holds (one run of a known layout, or a folder of runs), and several files as one run.

A directory is one run when it is an MLflow run, experiment or `metrics` folder, a DVCLive folder, a Sacred
run folder, an Aim repository, or holds a TensorBoard event file, a `trainer_state.json` or a `metrics.csv`
(the last three also deeper down, one run's sub-folders such as `train/` and `validation/`).  A directory
whose sub-folders are each a run of one format is a folder of runs: each sub-folder is a seed, named by it,
as `runs/*/` would be.  Several files given together are several seeds, except files that each hold part of
a run (one DVCLive or MLflow metric file, one W&B chart export): those are joined by their run.
"""

from __future__ import annotations

from pathlib import Path

from ._aim import aim_root
from ._columns import METRIC_WORDS, ROLE_WORDS, _words
from ._dvclive import metrics_dir
from ._mlflow import is_experiment_dir, is_mlruns, is_run_dir
from ._safe import subdirs, walk
from ._table import LogError, _Col, _cut, _short, _Table, natural_key

_SKIP = {"_sources", "__pycache__", ".trash", "checkpoints", "artifacts", "media"}
MAX_RUN_FOLDERS = 1_000
"""The most sub-folders of a folder read as a folder of runs (one seed each); a folder of more is not one."""
_MARKERS = ("trainer_state.json", "metrics.csv")


def display(path: Path) -> str:
    """A path's name for messages: its last part, or the path as given (`.`, `/`), never empty."""
    return path.name or str(path) or "."


def _run_folders(path: Path, named: Path) -> list[Path]:
    return [d for d in subdirs(path, named=named, name=display(path))
            if not d.name.startswith(".") and d.name not in _SKIP]


def _has_events(path: Path, named: Path) -> bool:
    return bool(walk(path, lambda n: n.startswith("events.out.tfevents."), named=named, name=display(path),
                     skip=lambda parts: True))


def run_kind(path: Path, named: Path) -> str | None:
    """The format of a directory that is itself one run's log (markers at its top), None otherwise."""
    if aim_root(path) is not None:
        return "aim"
    if is_run_dir(path) or (path.name == "metrics" and is_run_dir(path.parent)) or is_experiment_dir(path, named) \
            or is_mlruns(path, named):
        return "mlflow"
    if metrics_dir(path) is not None:
        return "dvclive"
    if (path / "metrics.json").is_file() and ((path / "run.json").is_file() or (path / "config.json").is_file()):
        return "sacred"
    if _has_events(path, named):
        return "tensorboard"
    for name, fmt in (("trainer_state.json", "json"), ("metrics.csv", "csv")):
        if (path / name).is_file():
            return fmt
    return None


def _kind_of_files(names: set[str]) -> str | None:
    """TensorBoard when an event file is among `names`, else json / csv for a trainer_state.json / metrics.csv."""
    if any(n.startswith("events.out.tfevents.") for n in names):
        return "tensorboard"
    for name, fmt in (("trainer_state.json", "json"), ("metrics.csv", "csv")):
        if name in names:
            return fmt
    return None


def _deep_kinds(path: Path, named: Path) -> tuple[str | None, dict[str, str]]:
    """One walk of `path`: the format of its log lying deeper (TensorBoard's `train/`, Lightning's
    `version_0/`), and the same per top-level sub-folder (by name)."""
    found = walk(path, lambda n: n.startswith("events.out.tfevents.") or n in _MARKERS, named=named,
                 name=display(path), skip=lambda parts: parts[-1] in _SKIP or parts[-1].startswith("."))
    per: dict[str, set[str]] = {}
    for f in found:
        rel = f.relative_to(path).parts
        if len(rel) > 1:
            per.setdefault(rel[0], set()).add(rel[-1])
    whole = _kind_of_files({f.name for f in found})
    return whole, {d: k for d, names in per.items() if (k := _kind_of_files(names)) is not None}


def _deep_kind(path: Path, named: Path) -> str | None:
    return _deep_kinds(path, named)[0]


def _names_a_part(name: str) -> bool:
    """A sub-folder named by a role or a metric (`train`, `validation`, `loss_val`): part of one run."""
    return any(w in ROLE_WORDS or w in METRIC_WORDS for w in _words(name))


def folder_of_runs(path: Path, named: Path) -> tuple[str, list[Path]] | None:
    """(format, run folders) when `path`'s sub-folders are runs of one format (two or more, none named by a
    role or a metric), None otherwise.  A sub-folder that holds no log is left out.  A folder of more than
    `MAX_RUN_FOLDERS` sub-folders is not a folder of runs.  The runs are in the natural order of their names
    (`seed2` before `seed10`)."""
    if run_kind(path, named) is not None:
        return None
    subs = _run_folders(path, named)
    # sub-folders named by a role or a metric are parts of one run; Hugging Face's checkpoint-* folders are
    # snapshots of one run (each trainer_state.json holds the history up to it)
    if len(subs) < 2 or len(subs) > MAX_RUN_FOLDERS or any(
            _names_a_part(d.name) or d.name.startswith("checkpoint") for d in subs):
        return None
    kinds = {d: k for d in subs if (k := run_kind(d, named)) is not None}
    if len(kinds) < len(subs):
        deep = _deep_kinds(path, named)[1]
        kinds = {d: k for d in subs if (k := kinds.get(d) or deep.get(d.name)) is not None}
    if len(kinds) < 2:
        return None
    fmts = set(kinds.values())
    if len(fmts) > 1:
        detail = ", ".join(f"{_short(d.name, 40)}: {k}" for d, k in list(kinds.items())[:6])
        raise LogError(f"{display(path)}: a folder of runs in different formats ({detail}); pass the runs of one "
                       "format (e.g. runs/*/)")
    return fmts.pop(), sorted(kinds, key=lambda d: natural_key(d.name))


def dir_kind(path: Path, named: Path) -> str:
    """The format of a directory given as a log (one run, an MLflow experiment, or a folder of runs)."""
    kind = run_kind(path, named)
    if kind is not None:
        return kind
    runs = folder_of_runs(path, named)
    if runs is not None:
        return runs[0]
    kind = _deep_kind(path, named)
    if kind is not None:
        return kind
    raise LogError(f"{display(path)}: a directory without a TensorBoard event file, trainer_state.json, "
                   "metrics.csv, MLflow run or experiment, DVCLive plots/metrics, Sacred metrics.json or Aim .aim "
                   "folder, nor sub-folders that are runs; pass the log file itself, or runs/*/ for one run per "
                   "sub-folder")


def join_parts(tabs: list[_Table]) -> list[_Table]:
    """Tables that each hold part of a run, joined into one table per run (in the order the runs first
    appear); a series given by two files of one run is an error naming both."""
    groups: dict[tuple[str | None, str | None], list[_Table]] = {}
    for t in tabs:
        groups.setdefault((t.part_of, t.run), []).append(t)
    out = []
    for (_, run), parts in groups.items():
        if len(parts) == 1:
            out.append(parts[0])
            continue
        cols: dict[str, _Col] = {}
        origin: dict[str, str] = {}
        owner: dict[str, str] = {}
        for t in parts:
            for name, col in t.cols.items():
                if name in cols:
                    raise LogError(f"{owner[name]} and {t.source} both hold {name!r} of run {run!r}; pass one")
                if col.steps is None and t.fmt != "wandb-chart":
                    raise LogError(f"{t.source}: column {name!r} has no steps of its own to join it by")
                cols[name], owner[name] = col, t.source
                origin[name] = f"{t.source}: {t.origin.get(name, name)}" if t.origin else t.source
        first = parts[0]
        srcs = ", ".join(t.source.split(": run ")[0] for t in parts)
        joined = _Table(f"run {run} ({_cut(srcs, 160)})", first.fmt,
                        cols, text=all(t.text for t in parts), path_roles=any(t.path_roles for t in parts),
                        origin=origin, run=run)
        joined.notes = list(dict.fromkeys(n for t in parts for n in t.notes))
        joined.notes.append(f"{len(parts)} files of run {run!r} joined ({_cut(srcs, 160)})")
        out.append(joined)
    return out
