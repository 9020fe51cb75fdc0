"""The report layer: what the `grokclocks compare` command shows beside a comparison, composed above
`grokclocks.compare` and `grokclocks.forecast` (which sit side by side and do not import each other).

`with_forecast` adds to a `Comparison` one forecast line per run that has not grokked
(`grokclocks.forecast.forecast_runs` at the run's last record); its table prints them under the verdicts.
"""

from __future__ import annotations

import dataclasses

from .compare import Comparison
from .forecast import forecast_runs

__all__ = ["with_forecast"]


def with_forecast(cmp: Comparison) -> Comparison:
    """`cmp` with its `forecast` lines: one per run that has not grokked, from `forecast_runs` at the last
    record; a forecast that cannot be made is one line `n/a: <reason>` (a forecast never hides the comparison).

    Parameters
    ----------
    cmp : Comparison
        A comparison from `grokclocks.compare.compare_run`.

    Returns
    -------
    Comparison
        A copy with `forecast` set (empty when every run has grokked).
    """
    run = cmp.run
    try:
        fcs = forecast_runs(run)
    except ValueError as exc:
        return dataclasses.replace(cmp, forecast=(f"n/a: {exc}",))
    names = run.run_names or tuple(f"run {i}" for i in range(run.n_runs))
    lines = tuple((f"{n}: " if run.n_runs > 1 else "") + f.line() for n, f in zip(names, fcs)
                  if f.status != "grokked")
    return dataclasses.replace(cmp, forecast=lines)
