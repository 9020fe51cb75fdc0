"""The forecast in the engine's progress bar: `progress_line(trajectory)` on the records so far."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validate as V
from ._api import _grid_value, forecast
from ._result import _fmt_step

__all__ = ["progress_line"]

_MAX_RUNS = 16  # at most this many runs (evenly spaced) are forecast per bar update


def progress_line(trajectory: Any, max_runs: int = _MAX_RUNS) -> str:
    """One short line for a progress bar: the current forecast of an engine run (or a summary over its runs).

    Parameters
    ----------
    trajectory : object
        The engine's result so far (`grokclocks.sim.train.Trajectory` with metrics acc_train and acc_test of
        shape (*grid, n_seeds, n_records) and its config); its config's `steps` is the horizon.
    max_runs : int
        At most this many runs, evenly spaced over the grid and seeds, are forecast (≥ 1; default 16).

    Returns
    -------
    str
        For one run its forecast ("t_test ~ 2,400 [1,900-3,100] P 0.71", or its status); for several, how
        many have grokked and the median forecast and mean P(grok by the end) of those forecast; "" when the
        trajectory records no accuracy; "n/a (...)" when the records cannot be read (a progress bar never
        stops a training run).

    Raises
    ------
    DomainError
        If `max_runs` is not an integer ≥ 1.
    """
    max_runs = V.integer_at_least(max_runs, "max_runs", 1)
    try:
        return _line(trajectory, max_runs)
    except (ValueError, KeyError, IndexError, TypeError, ArithmeticError) as exc:
        return f"n/a ({type(exc).__name__}: {str(exc)[:60]})"


def _line(trajectory: Any, max_runs: int) -> str:
    """`progress_line` without the guard."""
    metrics = getattr(trajectory, "metrics", {}) or {}
    if "acc_train" not in metrics or "acc_test" not in metrics:
        return ""
    acc = np.asarray(metrics["acc_test"])
    n_grid = acc.ndim - 2
    shape = acc.shape[:-1]
    flat = int(np.prod(shape))
    pick = np.unique(np.linspace(0, flat - 1, min(max_runs, flat)).round().astype(int))
    steps = np.asarray(trajectory.times, dtype=np.float64)
    if steps.size < 2:
        return "too early"
    cfg = getattr(trajectory, "config", None)
    horizon = float(getattr(cfg, "steps", 0) or 0) or None
    hor = horizon if horizon is not None and horizon >= steps[-1] else None  # at the end: reached, P = 0
    grokked, points, probs, early = 0, [], [], 0
    one = None
    for k in pick:
        idx = np.unravel_index(k, shape)
        grid = idx[:n_grid]
        arrays = {name: np.asarray(metrics[key])[idx] for key, name in
                  (("acc_train", "train_acc"), ("acc_test", "test_acc"), ("loss_train", "train_loss"),
                   ("loss_test", "test_loss"), ("param_norm", "weight_norm")) if key in metrics}
        arrays = {n: a for n, a in arrays.items() if not np.isnan(a).all()}
        if "train_acc" not in arrays and "test_acc" not in arrays:
            continue
        lr, wd, opt = _config_rates(cfg, grid if n_grid else None)
        f = forecast(None, None, hor, steps=steps, lr=lr, weight_decay=wd, optimizer=opt, **arrays)
        if one is None and pick.size == 1:
            one = f
        if f.status == "grokked":
            grokked += 1
        elif f.status == "forecast":
            points.append(f.t_test)
            probs.append(f.p_grok)
        elif f.status == "too early":
            early += 1
    if one is not None:
        if one.status == "forecast":
            lo, hi = one.interval_50
            return f"t_test ~ {_fmt_step(one.t_test)} [{_fmt_step(lo)}-{_fmt_step(hi)}] P {one.p_grok:.2f}"
        return one.line() if one.status == "grokked" else one.status
    parts = [f"grokked {grokked}/{pick.size}"]
    if points:
        parts.append(f"t_test ~ {_fmt_step(float(np.median(points)))} P {float(np.mean(probs)):.2f} "
                     f"({len(points)} forecast)")
    if early:
        parts.append(f"{early} before t_train")
    return "; ".join(parts) + ("" if pick.size == flat else f" (of {flat} runs, {pick.size} sampled)")


def _config_rates(cfg: Any, grid: Any) -> tuple[float | None, float | None, str | None]:
    """(lr, weight decay, optimizer) of one grid point of an engine config (None where unknown)."""
    if cfg is None or getattr(cfg, "lr", None) is None or getattr(cfg, "weight_decay", None) is None:
        return None, None, None
    return _grid_value(cfg, "lr", grid), _grid_value(cfg, "weight_decay", grid), getattr(cfg, "optimizer", None)
