"""Sacred's `FileStorageObserver` `metrics.json`: `{name: {"steps": [...], "timestamps": [...], "values": [...]}}`.

`_run.log_scalar("val.acc", x, step)` appends to the three lists of its name (Sacred's
`FileStorageObserver.log_metrics`); a run folder `<basedir>/<run_id>/` also holds `config.json`, `run.json`
and `cout.txt`, and the base folder one such folder per run (and `_sources/`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._table import LogError, _Col, _short, _Table


def is_sacred(obj: Any) -> bool:
    """A mapping of metric names to `{"steps": [...], "values": [...]}` records (Sacred's `metrics.json`)."""
    return (isinstance(obj, Mapping) and bool(obj) and all(
        isinstance(v, Mapping) and "steps" in v and "values" in v for v in obj.values()))


def sacred_table(obj: Mapping[str, Any], source: str) -> _Table:
    """One column per metric, each with its own steps."""
    cols: dict[str, _Col] = {}
    for name, rec in obj.items():
        steps, values = rec["steps"], rec["values"]
        if not isinstance(steps, list) or not isinstance(values, list):
            raise LogError(f"{source}: metric {_short(name)}: steps and values must be lists (got "
                           f"{type(steps).__name__} and {type(values).__name__})")
        if len(steps) != len(values):
            raise LogError(f"{source}: metric {_short(name)} has {len(values)} values but {len(steps)} steps")
        name = str(name)
        cols[name] = _Col(name, values, steps, [f"{name}[{i}]" for i in range(len(values))])
    tab = _Table(source, "sacred", cols, text=True)
    tab.notes.append("Sacred metrics.json (each metric with its own steps)")
    return tab
