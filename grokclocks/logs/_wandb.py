"""W&B chart exports: the CSV the web UI's "Export panel" writes for one chart.

The first column is the chart's x axis (`Step`, or the key it was set to); every other column is
`<run name> - <metric>`, with `<run name> - <metric>__MIN` and `__MAX` beside it (the range of the points
each plotted point stands for when the chart is sampled; the plotted value is the column without a
suffix).  Each run is one seed; charts of one set of runs exported as several files are joined by run name.
A grouped chart's columns (`Group: <name> - <metric>`) are an aggregate of the group's runs, not a run, and
are refused.
"""

from __future__ import annotations

from ._columns import canonical_name
from ._table import LogError, _Col, _short, _Table

_SEP = " - "
_SUFFIXES = ("__MIN", "__MAX")


def is_wandb_export(names: list[str]) -> bool:
    """The header of a chart export: an x-axis column, then only `<run> - <metric>` columns."""
    return len(names) >= 2 and _SEP not in names[0] and all(_SEP in n for n in names[1:])


def split_wandb_export(tab: _Table) -> list[_Table]:
    """One table per run of a chart export, each holding that run's metrics, named by run."""
    names = list(tab.cols)
    x = names[0]
    if canonical_name(x) != "steps":
        raise LogError(f"{tab.source}: a W&B chart export whose x axis is {_short(x)}, not a step; export the chart "
                       "with the x axis Step (or the training step key)")
    runs: dict[str, dict[str, _Col]] = {}
    bounds = 0
    for n in names[1:]:
        if n.endswith(_SUFFIXES):
            bounds += 1
            continue
        run, _, metric = n.rpartition(_SEP)
        run, metric = run.strip(), metric.strip()
        if run.lower().startswith("group:"):
            raise LogError(f"{tab.source}: column {_short(n)} is a W&B group's aggregate of its runs (the mean by "
                           "default), not one run; export the chart with grouping off, one column per run")
        if not run or not metric:
            raise LogError(f"{tab.source}: column {_short(n)} is not '<run> - <metric>'")
        cols = runs.setdefault(run, {})
        if metric in cols:
            raise LogError(f"{tab.source}: run {run!r} has two columns {metric!r}")
        col = tab.cols[n]
        cols[metric] = _Col(metric, col.values, tab.cols[x].values, col.rows)
    if not runs:
        raise LogError(f"{tab.source}: a W&B chart export with only __MIN / __MAX columns")
    out = []
    for run, cols in runs.items():
        t = _Table(f"{tab.source}: run {run}", "wandb-chart", cols, text=True, part_of="wandb-chart", run=run)
        t.notes.append(f"W&B chart export: x axis {x!r}, one run per '<run> - <metric>' prefix, each a seed")
        if bounds:
            t.notes.append(f"{bounds} __MIN / __MAX column(s) ignored (the range of the points each plotted point "
                           "stands for; the plotted value is read)")
        out.append(t)
    return out
