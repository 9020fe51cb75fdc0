"""Aim repositories (a `.aim` folder), read through Aim's own API (`pip install "grokclocks[aim]"`).

Aim keeps its runs in RocksDB files that only Aim reads.  Each metric is a sequence named `name` with a
context (`{"subset": "train"}`, `{"subset": "val"}`, ...); a series is named `<context values>/<name>`
(`{"subset": "val"}` and `acc` is `val/acc`), so the role comes from the context as from a folder, or from the
metric's name; a metric whose role neither says is refused (unless its test twin is beside it, as for
the other readers).  Aim's own resource metrics (`__system__cpu`, ...) are skipped.  Each run of the
repository is one seed, in the order the runs were created.

Tested on a repository that Aim 3.29.1's own writer made (one `aim.Run(repo=..., experiment=...)` per seed,
`run.track(value, name=..., step=..., context=...)`, `run.close()`), read with Aim 3.29.1 and 3.17.5, and on
repositories Aim 3.17.5 wrote.  What that showed, and what the reader does about it:

* `Repo.iter_runs()` lists the runs of the repository's index (`.aim/meta/index`).  Aim 3.17.5 indexed a run
  on `run.close()`; Aim 3.29.1 fills the index only while `aim up` runs or on `aim storage reindex`, so a run
  that `aim.Run` wrote is in its own chunks (`.aim/meta/chunks/<hash>`, `.aim/seqs/chunks/<hash>`) but not in
  the index, and `iter_runs()` yields nothing.  The reader copies the `.aim` folder without its index to a
  temporary folder, where Aim reads every run through the union of the runs' chunks (as it does for a
  repository that has no index).
* `Repo(path, read_only=True)` raises `NotImplementedError` (3.17.5 and 3.29.1), and a `Repo` opened for
  writing upgrades an older repository's sqlite schema in place; Aim opens the copy, so the user's
  repository is never written.
* A metric's records are keyed by a hash of the step: `metric.values.sparse_numpy()` gives those hashes,
  not the steps; `metric.data.view("val").numpy()` gives the steps and the values, in step order.

The copy is made through the door (`grokclocks._safe_io`'s `snapshot`) and bounded like every other read:
only folders and regular files (a link, FIFO or device in the `.aim` folder is refused, not followed), at most
`MAX_DIR_ENTRIES` entries and `max_bytes` bytes together.  The RocksDB
files themselves are parsed by Aim's compiled code, which this package does not harden.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ._safe import snapshot
from ._table import LogError, _Col, _cut, _short, _Table

AIM_EXTRA = 'pip install "grokclocks[aim]"'
_SYSTEM = "__system__"  # Aim's resource tracker: __system__cpu, __system__memory_percent, ...
_INDEX = ("meta", "index")  # Aim's index of the runs, a cache that the reader leaves out of its copy


def aim_root(path: Path) -> Path | None:
    """The folder holding `.aim`, for the `.aim` folder itself or a folder that holds one; None otherwise."""
    if path.name == ".aim" and path.is_dir():
        return path.parent
    if (path / ".aim").is_dir():
        return path
    return None


def _key(name: str, context: Any) -> str:
    """`<context values>/<name>`, the values in the order of their keys (`{"subset": "val"}`, `acc` -> `val/acc`)."""
    items = sorted(context.items(), key=lambda kv: str(kv[0])) if isinstance(context, dict) else []
    return "/".join([*(_cut(str(v), 80) for _, v in items), name])


def _run_table(run: Any, label: str) -> _Table | None:
    """The table of one Aim run (each metric a column with its own steps), None when it holds no metric."""
    cols: dict[str, _Col] = {}
    origin: dict[str, str] = {}  # column -> the Aim metric it is, for the messages
    skipped = []
    for metric in run.metrics():
        name = str(metric.name)
        if name.startswith(_SYSTEM):
            skipped.append(name)
            continue
        context = metric.context.to_dict()
        key = _key(name, context)
        if key in cols:
            raise LogError(f"{label}: run {run.hash}: two metrics read as {key!r} ({origin[key]} and Aim metric "
                           f"{_short(name, 80)}, context {_short(context, 80)})")
        origin[key] = f"Aim metric {_short(name, 80)}, context {_short(context, 80)}"
        steps, (values,) = metric.data.view("val").numpy()  # in step order
        cols[key] = _Col(key, np.asarray(values, dtype=np.float64), np.asarray(steps, dtype=np.int64),
                         [f"record {i}" for i in range(len(values))])
    if not cols:
        return None
    name = str(run.name or run.hash)
    tab = _Table(f"{label}: run {name}", "aim", cols, text=True, path_roles=True, run=name, origin=origin)
    tab.notes.append(f"Aim repository, run {name!r} ({run.hash}); series named <context>/<metric>"
                     + (f"; Aim's resource metrics skipped ({len(skipped)})" if skipped else ""))
    return tab


def read_aim(path: Path, max_bytes: int, named: Path) -> list[_Table]:
    """One table per run of the repository (oldest first), each metric a column with its own steps."""
    root = aim_root(path)
    label = path.name or str(path)
    if root is None:
        raise LogError(f"{label}: not an Aim repository (no .aim folder)")
    with tempfile.TemporaryDirectory(prefix="grokclocks-aim-") as tmp:
        # the copy first, before Aim is imported: the checks hold without it
        snapshot(root / ".aim", Path(tmp) / ".aim", named=named, max_bytes=max_bytes, name=f"{label}/.aim",
                 skip=lambda parts: parts == _INDEX)
        try:
            with warnings.catch_warnings():  # SQLAlchemy 2's deprecation notice about Aim's own models
                warnings.simplefilter("ignore", DeprecationWarning)
                from aim import Repo
        except ImportError:
            raise LogError(f"{label}: an Aim repository; reading it needs Aim: {AIM_EXTRA}") from None
        repo = None
        try:
            repo = Repo(tmp)
            runs = sorted(repo.iter_runs(), key=lambda r: (float(r.creation_time or 0.0), str(r.hash)))
            tabs = [t for t in (_run_table(r, label) for r in runs) if t is not None]
        except LogError:
            raise
        except Exception as exc:  # noqa: BLE001 - Aim raises its own types; one line naming the repository
            raise LogError(f"{label}: Aim could not read the repository ({_short(str(exc), 160)})") from None
        finally:
            if repo is not None:
                repo.close()
    if not tabs:
        raise LogError(f"{label}: the Aim repository holds no run with metrics")
    return tabs
