"""`merge_seeds`: several logs of one configuration as one run with seeds on the leading axis."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import DomainError
from ._columns import SERIES
from ._table import _OTHER_KEYS, LogError, LogWarning, RunLog, _short


def merge_seeds(logs: Sequence[RunLog]) -> RunLog:
    """Several logs of the same configuration as one run with the seeds on the leading axis.

    The step grid is the union of the logs' grids; a seed's series is `NaN` at the steps it did not log.  Every
    log must hold the same series; seeds whose steps come from an `epoch` column in one and a `step` column in
    another are merged with a `LogWarning` and a note (one unit only in full-batch training); settings (`p`,
    `operation`, ...) must agree; training masks are stacked; snapshots (`embeddings`, `weights`) must have
    the same shape.

    Parameters
    ----------
    logs : list or tuple of RunLog
        One `RunLog` per seed, as `read_log` returns them; at least one (a single log is returned as it is).

    Returns
    -------
    RunLog
        Each series of shape `(n_seeds, n_records)` on the union grid (a log already holding several runs
        contributes all of them), `source` naming the seeds' files.

    Raises
    ------
    LogError
        The logs hold different series, settings that disagree, a key some logs lack, or snapshots of
        different shapes.
    DomainError
        `logs` is not a non-empty list or tuple of `RunLog`.

    Warns
    -----
    LogWarning
        The seeds count steps in different columns (an epoch column and a step column).
    """
    if not isinstance(logs, (list, tuple)) or not all(isinstance(lg, RunLog) for lg in logs):
        raise DomainError(f"logs must be a list of RunLog (from read_log) (got {_short(logs)})")
    if not logs:
        raise DomainError("logs must hold at least one RunLog (got an empty list)")
    if len(logs) == 1:
        return logs[0]
    keys = [tuple(sorted(k for k in lg.arrays if k in SERIES)) for lg in logs]
    if len(set(keys)) > 1:
        detail = "; ".join(f"{lg.source}: {', '.join(k)}" for lg, k in zip(logs, keys))
        raise LogError(f"the logs hold different series ({detail}); every seed needs the same ones")
    cols = [lg.step_column for lg in logs]
    unit_note = None
    if len({"epoch" in c.lower() for c in cols if c is not None}) > 1:  # epochs in one seed, steps in another
        detail = "; ".join(f"{lg.source}: {c!r}" for lg, c in zip(logs, cols) if c is not None)
        # the same unit in a full-batch run (an epoch is a step); not with minibatches: said, not refused
        unit_note = (f"seeds count steps in different columns ({detail}); merged as one unit, which holds for "
                     "full-batch training only")
        warnings.warn(unit_note, LogWarning, stacklevel=2)
    grid = np.unique(np.concatenate([np.asarray(lg.arrays["steps"], dtype=float) for lg in logs]))
    arrays: dict[str, Any] = {"steps": grid}
    for s in keys[0]:
        rows = []
        for lg in logs:
            a = np.asarray(lg.arrays[s], dtype=float)
            a = a[None] if a.ndim == 1 else a
            full = np.full((a.shape[0], grid.size), np.nan)
            full[:, np.searchsorted(grid, np.asarray(lg.arrays["steps"], dtype=float))] = a
            rows.append(full)
        arrays[s] = np.concatenate(rows)
    for k in _OTHER_KEYS:
        vals = [lg.arrays.get(k) for lg in logs]
        given = [v for v in vals if v is not None]
        if not given:
            continue
        if len(given) != len(logs):
            raise LogError(f"{k} is given in some logs and not in others")
        if k == "train_mask":
            arrays[k] = [np.asarray(v) for v in vals]
        elif k in ("embeddings", "weights", "gap", "n_train"):
            shapes = [np.shape(v) for v in vals]
            if len(set(shapes)) > 1:
                detail = "; ".join(f"{lg.source}: {sh}" for lg, sh in zip(logs, shapes))
                raise LogError(f"the logs hold {k} of different shapes ({detail}); every seed needs the same")
            arrays[k] = np.stack([np.asarray(v) for v in vals])
        else:
            if any(np.asarray(v).tolist() != np.asarray(given[0]).tolist() for v in given):
                raise LogError(f"the logs disagree on {k}: {[_short(v, 20) for v in given]}")
            arrays[k] = given[0]
    src = ", ".join(lg.source for lg in logs)
    notes = tuple(dict.fromkeys([n for lg in logs for n in lg.notes] + ([unit_note] if unit_note else [])))
    ignored = tuple(dict.fromkeys(n for lg in logs for n in lg.ignored))
    return RunLog(f"{len(logs)} seeds ({_short(src, 120)})", logs[0].format, arrays, dict(logs[0].columns), ignored,
                  notes, cols[0] if len(set(cols)) == 1 else None)
