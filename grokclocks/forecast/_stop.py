"""The stopping rule: stop a run only when the evidence that it will not grok in time is stable.

`Monitor.should_stop` applies `stop_rule` to the history of its forecasts (step, P(grok by the horizon), kind).
A forecast counts only when it is a forecast against a horizon the caller stated (given, or the planned
length) that has not been reached: a horizon fallback (10 × the current step) never stops a run.  The rule
fires when, over the latest *streak* of such forecasts, at least `STOP_PATIENCE` are below the threshold and
they span at least a factor `STOP_SPAN` in steps; the streak lasts while every forecast stays below
`STOP_RELEASE` × the threshold (hysteresis: a forecast between the threshold and that level neither starts
nor ends it), and ends at a forecast above it, a grokked or too-early status, or a fallback or reached
horizon.  A "cannot tell" is neutral (it neither counts nor ends the streak).  A diverged run stops at once.

The constants were chosen on the calibration study's fitting runs only (benchmarks/forecast_calibration.py,
"stop rule"); the held-out false-stop rate and compute saved are on the forecast page.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["ELIGIBLE", "NEUTRAL", "STOP_PATIENCE", "STOP_RELEASE", "STOP_SPAN", "BREAK", "DIVERGED", "kind_of",
           "stop_rule"]

STOP_PATIENCE = 3
"""Forecasts below the threshold the rule needs within one streak."""
STOP_SPAN = 1.25
"""The factor in steps those forecasts must span (first below the threshold to the latest of the streak)."""
STOP_RELEASE = 2.0
"""A forecast with P(grok) ≥ STOP_RELEASE × the threshold ends a streak (hysteresis)."""

ELIGIBLE, NEUTRAL, BREAK, DIVERGED = "eligible", "neutral", "break", "diverged"


def kind_of(status: str, horizon_source: str) -> str:
    """How the stop rule counts a forecast: "eligible", "neutral" ("cannot tell"), "break" or "diverged".

    Parameters
    ----------
    status : str
        The forecast's status.
    horizon_source : str
        Its `Forecast.horizon_source`.

    Returns
    -------
    str
        One of ELIGIBLE, NEUTRAL, BREAK, DIVERGED.
    """
    if status == "diverged":
        return DIVERGED
    if status == "cannot tell":
        return NEUTRAL
    if status != "forecast" or horizon_source.endswith("(reached)") or not (
            horizon_source == "given" or horizon_source.startswith("planned length")):
        return BREAK
    return ELIGIBLE


def stop_rule(history: Iterable[tuple[float, float, str]], min_probability: float) -> bool:
    """Whether to stop, from the forecasts so far, oldest first: (step, P(grok by the horizon), `kind_of`).

    Parameters
    ----------
    history : iterable of (float, float, str)
        The forecasts' steps, probabilities and kinds, oldest first.
    min_probability : float
        The threshold, in (0, 1).

    Returns
    -------
    bool
        True when the latest forecast is "diverged", or when the latest streak holds at least `STOP_PATIENCE`
        eligible forecasts below `min_probability` spanning a factor `STOP_SPAN` in steps.
    """
    hist = list(history)
    if hist and hist[-1][2] == DIVERGED:
        return True
    release = STOP_RELEASE * min_probability
    below, first_below, last_step = 0, None, None
    for step, p, kind in reversed(hist):
        if kind == NEUTRAL:
            continue
        if kind != ELIGIBLE or p >= release:
            break
        if last_step is None:
            last_step = step
        if p < min_probability:
            below += 1
            first_below = step
    if below < STOP_PATIENCE or first_below is None or last_step is None:
        return False
    return last_step >= STOP_SPAN * first_below
