"""Aim repositories (a `.aim` folder), read through Aim's own API (`pip install "grokclocks[aim]"`).

Aim keeps its runs in RocksDB files that only Aim reads.  Each metric is a sequence named `name` with a
context (`{"subset": "train"}`, `{"subset": "val"}`, ...); a series is named `<context values>/<name>`, so
the role comes from the context as from a folder.  Each run of the repository is one seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._table import LogError, _Col, _short, _Table

AIM_EXTRA = 'pip install "grokclocks[aim]"'


def aim_root(path: Path) -> Path | None:
    """The folder holding `.aim`, for the `.aim` folder itself or a folder that holds one; None otherwise."""
    if path.name == ".aim" and path.is_dir():
        return path.parent
    if (path / ".aim").is_dir():
        return path
    return None


def _key(name: str, context: Any) -> str:
    parts = [str(v) for _, v in sorted(dict(context or {}).items())] if context else []
    return "/".join([*parts, name])


def read_aim(path: Path, max_bytes: int) -> list[_Table]:
    """One table per run of the repository, each metric a column with its own steps."""
    root = aim_root(path)
    label = path.name or str(path)
    if root is None:
        raise LogError(f"{label}: not an Aim repository (no .aim folder)")
    try:
        from aim import Repo
    except ImportError:
        raise LogError(f"{label}: an Aim repository; reading it needs Aim: {AIM_EXTRA}") from None
    try:
        repo = Repo(str(root), read_only=True)
    except TypeError:  # versions without read_only
        repo = Repo(str(root))
    tabs = []
    try:
        for run in repo.iter_runs():
            cols: dict[str, _Col] = {}
            for metric in run.metrics():
                key = _key(metric.name, getattr(metric.context, "to_dict", lambda: metric.context)())
                steps, values = metric.values.sparse_numpy() if hasattr(metric.values, "sparse_numpy") else (
                    metric.indices.values_numpy(), metric.values.values_numpy())
                if key in cols:
                    raise LogError(f"{label}: run {run.hash}: two metrics read as {key!r}")
                cols[key] = _Col(key, list(map(float, values)), list(map(int, steps)),
                                 [f"{key}[{i}]" for i in range(len(values))])
            if not cols:
                continue
            name = str(getattr(run, "name", None) or run.hash)
            tab = _Table(f"{label}: run {name}", "aim", cols, text=True, path_roles=True, run=name,
                         origin={k: f"metric {k!r}" for k in cols})
            tab.notes.append(f"Aim repository, run {name!r} ({run.hash}); series named <context>/<metric>")
            tabs.append(tab)
    except LogError:
        raise
    except Exception as exc:  # noqa: BLE001 - Aim raises its own types; one line naming the repository
        raise LogError(f"{label}: Aim could not read the repository ({_short(str(exc), 160)})") from None
    if not tabs:
        raise LogError(f"{label}: the Aim repository holds no run with metrics")
    return tabs
