"""`forecast`: one run's records up to a step -> a `Forecast` of the step at which it groks."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as V
from .. import clocks as _clocks
from .. import logs as _logs
from .. import repulsion as _repulsion
from .. import task as _task
from .._validate import DomainError
from ..citations import cites
from ..runs import RunData
from ..runs._load import as_run_data, read_sidecar
from ._predict import EPS_CLS, ForecastModel, RunState, _no_forecast, default_model, forecast_from_state
from ._result import Forecast, Signal
from ._signals import bin_series

__all__ = ["ForecastModel", "default_model", "forecast", "forecast_runs"]

# ------------------------------------------------------------------------------------------- input


_MAX_PLANNED = 10**12         # a planned length beyond 10^12 steps is not a training run's


def _sidecar_of(run: Any) -> tuple[Path, Path] | None:
    """(sidecar, the file it sits beside) for a log the user named: `run.json` beside an engine `run.npz`,
    `<log>.json` beside any other log file (`metrics.csv.json`); `None` for anything that is not a path."""
    if not isinstance(run, (str, os.PathLike)):
        return None
    p = Path(run)
    if not p.exists() and p.with_name(p.name + ".npz").exists():
        p = p.with_name(p.name + ".npz")
    return (p.with_suffix(".json") if p.suffix == ".npz" else p.with_name(p.name + ".json")), p


def _planned_int(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= _MAX_PLANNED:
        raise DomainError(f"{where} must be an integer number of steps in [1, {_MAX_PLANNED:.0e}] "
                          f"(got {V.show(v, 40)}); fix or remove it, or give the horizon explicitly")
    return float(v)


def _planned_length(run: Any) -> tuple[float | None, str]:
    """The run's planned number of steps and where it was found, when the input states it, else (None, "").

    An engine trajectory's config `steps`; a run file's sidecar `run.json` (the engine writes the config's
    `fields` at its top level: `fields.steps`), or the documented sidecar of any log, `<log>.json` holding
    `{"planned_steps": N}`.  The sidecar is read through the safe reader (a regular file of at most 1 MiB,
    bounded JSON); a sidecar that is there but malformed, or states a length that is not an integer in
    [1, 10^12], is a `DomainError` naming it (it is refused, never guessed around)."""
    cfg = getattr(run, "config", None)
    steps = getattr(cfg, "steps", None)
    if isinstance(steps, (int, np.integer)) and not isinstance(steps, bool) and steps > 0:
        return float(steps), "planned length (the trajectory's config)"
    found = _sidecar_of(run)
    if found is None:
        return None, ""
    js, named = found
    # through the one door for runs: beside the file the user named (so not a link), bounded, UTF-8 JSON; a
    # refusal is a LogError (a DomainError) naming the sidecar
    meta = read_sidecar(js, named=named)  # its default limit, 1 MiB: a sidecar holds a config or one number
    if meta is None:
        return None, ""
    if not isinstance(meta, dict):
        raise DomainError(f"{js}: a sidecar must hold a JSON object (got {type(meta).__name__})")
    if "planned_steps" in meta:
        return _planned_int(meta["planned_steps"], f"{js.name}: planned_steps"), f"planned length ({js.name})"
    fields = meta.get("fields")
    if isinstance(fields, dict) and "steps" in fields:
        return _planned_int(fields["steps"], f"{js.name}: fields.steps"), f"planned length ({js.name})"
    return None, ""


def _engine_divergence(run: Any, index: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(diverged, diverged_step) per seed of an engine trajectory (at the grid point `index`), else None."""
    extras = getattr(run, "extras", None)
    if not isinstance(extras, Mapping) or "diverged" not in extras:
        return None
    div = np.asarray(extras["diverged"], dtype=bool)
    step = np.asarray(extras.get("diverged_step", np.full(div.shape, -1)), dtype=float)
    if div.ndim > 1:
        idx = tuple(int(i) for i in np.atleast_1d(index if index is not None else (0,) * (div.ndim - 1)))
        div, step = div[idx], step[idx]
    return np.atleast_1d(div), np.atleast_1d(step)


def _optimizer_rate(run: Any, index: Any, lr: Any, weight_decay: Any, optimizer: str | None) -> tuple[float | None, str]:
    """lr · wd of decoupled (AdamW) or SGD weight decay, from the arguments or the engine config; None if unknown."""
    if lr is not None:
        lr = float(V.positive(lr, "lr", scalar=True))
    if weight_decay is not None:
        weight_decay = float(V.nonnegative(weight_decay, "weight_decay", scalar=True))
    if optimizer is not None and not isinstance(optimizer, str):
        raise DomainError(f"optimizer must be a name such as 'adamw' (got {optimizer!r})")
    cfg = getattr(run, "config", None)
    opt = optimizer if optimizer is not None else getattr(cfg, "optimizer", None)
    if lr is None and cfg is not None and getattr(cfg, "lr", None) is not None:
        lr = _grid_value(cfg, "lr", index)
    if weight_decay is None and cfg is not None and getattr(cfg, "weight_decay", None) is not None:
        weight_decay = _grid_value(cfg, "weight_decay", index)
    if lr is None or weight_decay is None:
        return None, "lr and weight decay not given"
    lr = float(V.positive(lr, "lr", scalar=True))
    wd = float(V.nonnegative(weight_decay, "weight_decay", scalar=True))
    if opt is None:
        return None, "optimizer not given (the decay rate lr x wd holds for AdamW and SGD)"
    opt = str(opt).lower()
    if opt not in ("adamw", "sgd"):
        return None, f"optimizer {opt!r} couples the decay to the gradient statistics (lr x wd holds for AdamW and SGD)"
    return lr * wd, f"{opt}: lr {lr:g} x wd {wd:g}"


def _grid_value(cfg: Any, name: str, index: Any) -> float | None:
    vals = tuple(getattr(cfg, name))
    axes = tuple(getattr(cfg, "grid_axes", ()) or ())
    if name in axes and index is not None:
        k = axes.index(name)
        idx = tuple(int(i) for i in np.atleast_1d(index))
        return float(vals[idx[k]]) if k < len(idx) else None
    return float(vals[0]) if len(vals) == 1 else None


def _as_rundata(run: Any, index: Any, columns: Mapping[str, str] | None, overrides: dict[str, Any]) -> RunData:
    """Any input `grokclocks.compare.compare_run` reads, as RunData: the one dispatcher of `grokclocks.runs`."""
    return as_run_data(run, index, columns, overrides)


# how the readers (grokclocks.logs, grokclocks.compare.run_data) word a non-finite logged value (kept for the CLI)
_DIVERGED_MESSAGES = ("must be finite", "did the run diverge", "(got inf", "(got -inf")
_SERIES = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")
# run_data's check of a series (after the cut at τ: a record at or before τ)
_SERIES_NONFINITE = re.compile(r"^(?:train_acc|test_acc|train_loss|test_loss|weight_norm) must be finite \(got ")
# a log reader's refusal of a logged value: "... (step 1200) is inf (must be finite)" / "is NaN (did the run diverge"
_LOG_NONFINITE = re.compile(r"(?:\(step ([^()]*)\) )?is (?:-?inf \(must be finite\)|NaN \(did the run diverge)")


@dataclasses.dataclass(frozen=True)
class _Diverged:
    step: float | None  # the step of the non-finite value, when the message names it
    message: str


def _to_rundata(run: Any, index: Any, columns: Any, overrides: dict[str, Any]) -> RunData | _Diverged:
    """The run as RunData, or where and why it diverged (a non-finite logged value; nothing else: an invalid
    argument or a malformed file is a DomainError)."""
    try:
        return _as_rundata(run, index, columns, overrides)
    except _logs.LogError as exc:
        m = _LOG_NONFINITE.search(str(exc))
        if m is None:
            raise
        try:
            step = float(m.group(1)) if m.group(1) is not None else None
        except ValueError:
            step = None
        return _Diverged(step, str(exc))
    except DomainError as exc:
        if _SERIES_NONFINITE.match(str(exc)):
            return _Diverged(None, str(exc))
        raise


def _cut_arrays(arrays: dict[str, Any], tau: float) -> tuple[dict[str, Any], float | None]:
    """The keyword arrays' records up to τ only (a value after τ is never checked, let alone read), and the
    last step of the whole input; unchanged when the steps are not a finite 1-D array (run_data refuses them)."""
    steps = arrays.get("steps")
    if steps is None:
        return arrays, None
    try:
        t = np.asarray(steps, dtype=np.float64)
    except (TypeError, ValueError):
        return arrays, None
    if t.ndim != 1 or t.size == 0 or not np.isfinite(t).all():
        return arrays, None
    keep = _records_up_to(t, tau)
    if keep.all() or keep.sum() < 2:
        return arrays, float(t[-1])
    out = dict(arrays, steps=t[keep])
    for k in _SERIES:
        v = arrays.get(k)
        if v is None:
            continue
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            continue  # left to run_data's message
        if a.ndim in (1, 2) and a.shape[-1] == t.size:
            out[k] = a[..., keep]
    return out, float(t[-1])


class _TrajectoryUpTo:
    """An engine trajectory seen only up to τ: its records after τ are dropped before anything checks them."""

    def __init__(self, run: Any, tau: float) -> None:
        times = np.asarray(run.times, dtype=np.float64)
        keep = _records_up_to(times, tau)
        if keep.sum() < 2:
            keep[:2] = True
        self.times = times[keep]
        self.metrics = {k: np.asarray(v)[..., keep] if np.ndim(v) >= 1 and np.shape(v)[-1] == times.size else v
                        for k, v in run.metrics.items()}
        self.extras = getattr(run, "extras", {}) or {}
        self.config = getattr(run, "config", None)
        self.last_step = float(times[-1]) if times.size else None


def _records_up_to(steps: np.ndarray, tau: float) -> np.ndarray:
    """The records a forecast at step τ may read: those with step ≤ τ (nothing later, ever)."""
    return steps <= tau


def _state(rd: RunData, i: int, keep: np.ndarray, decay: float | None) -> RunState:
    """Run i's clocks and bins from its records up to τ (`keep`)."""
    steps = rd.steps[keep]
    series = {k: (None if getattr(rd, k) is None else getattr(rd, k)[i][keep]) for k in _SERIES}
    logged = {k: v is not None and not np.isnan(v).all() for k, v in series.items()}
    t_train = (_clocks.accuracy_clock(steps, series["train_acc"], target=rd.train_level) if logged["train_acc"]
               else math.inf)
    t_test = (_clocks.first_hitting_time(steps, series["test_acc"], rd.test_level, direction="above")
              if logged["test_acc"] else math.inf)
    t_cls = _clocks.classifier_clock(steps, series["train_loss"], EPS_CLS) if logged["train_loss"] else None
    bins = {k: bin_series(steps, series[k]) for k in ("test_acc", "test_loss", "train_loss", "weight_norm")}
    name = rd.run_names[i] if rd.run_names else (f"run {i}" if rd.n_runs > 1 else "")
    return RunState(t_train, t_test, t_cls, logged["train_acc"], logged["test_acc"], bins,
                    {"steps": steps, **{k: v for k, v in series.items() if v is not None}}, decay, rd.train_level,
                    rd.test_level, rd.source, name)


def horizon_of(tau: float, horizon: float | None, planned: float | None, planned_source: str = "planned length"
               ) -> tuple[float, str, bool]:
    """(horizon, where it comes from, reached) at the issue step τ.

    The horizon given, else the planned length, else 10 × τ (labelled as the fallback it is: `Monitor`'s stop
    rule never acts on it).  A horizon at or before τ is kept, never replaced, and marked reached: the run
    has not grokked by it, so P(grok by the horizon) = 0."""
    if horizon is not None:
        hor, src = horizon, "given"
    elif planned is not None:
        hor, src = planned, planned_source
    else:
        hor, src = 10.0 * tau, FALLBACK
    if hor <= 0:
        return math.inf, "n/a (the issue step is <= 0)", False
    reached = tau >= hor
    return hor, src + (" (reached)" if reached else ""), reached


FALLBACK = "10x the issue step (no horizon given or stated by the file: indicative only)"


def _lock_in(rd: RunData, i: int, tau: float) -> Signal | None:
    """The eigengap lock-in detector (repulsion) on the records up to τ, when a gap or per-step weights are logged."""
    title = "lock-in detector: first epoch the slope of log(σ₂/σ₃) over 25 epochs exceeds 0.04 (t ≥ 100)"
    note = ("reported, not used: the calibration runs log no eigengap (the update Gram needs every step's weights), "
            "and the detector's constants are calibrated at M = 71, K = 2048")
    if rd.gap is not None:
        g = rd.gap[i][: math.floor(tau) + 1]
        epoch0 = 0.0
    elif rd.weights is not None and rd.weights_steps is not None:
        keep = rd.weights_steps <= tau
        ws = rd.weights_steps[keep]
        if ws.size < 23 or not np.all(np.diff(ws) == 1):
            return Signal("lock_in", title, None, "repulsion:slope-detector", note="needs per-step weight snapshots "
                          "(consecutive steps) beyond the 20-update window")
        g = _repulsion.eigengap(_repulsion.rolling_gram_eigenvalues(np.diff(rd.weights[i][keep], axis=0), 20, 3))
        epoch0 = float(ws[0])
    else:
        return None
    if g.size <= 25:
        return Signal("lock_in", title, None, "repulsion:slope-detector", note="gap series shorter than the lag (25)")
    fire = _repulsion.slope_detector(g, lag=25, threshold=0.04, t_min=100).t_fire
    return Signal("lock_in", title, math.inf if fire is None else epoch0 + fire, "repulsion:slope-detector", note=note)


@cites("clocks:appF4-acc-clock", "clocks:appF4-cls-estimator", "clocks:appF2-wd-rate", "kramers:milestones",
       "kramers:eq15", "repulsion:slope-detector", "levi:tstar", "levi:grok-def")
def forecast(run: Any = None, at_step: float | None = None, horizon: float | None = None, *,
             run_index: int | None = None, index: Any = None, columns: Mapping[str, str] | None = None,
             steps: Any = None, train_acc: Any = None, test_acc: Any = None, train_loss: Any = None,
             test_loss: Any = None, weight_norm: Any = None, gap: Any = None, weights: Any = None,
             weights_steps: Any = None, train_level: float | None = None, test_level: float | None = None,
             lr: float | None = None, weight_decay: float | None = None, optimizer: str | None = None,
             levi_params: Mapping[str, Any] | None = None, model: ForecastModel | None = None) -> Forecast:
    """Forecast the step at which a run's test accuracy reaches its level, from its records up to a step.

    The run fits its training set (train accuracy at its level since t_train) and its test accuracy is below
    the test level.  The forecast reads signals off the records up to `at_step` (no later record is read, or
    checked: cutting the log at `at_step` gives the same forecast, bit for bit, and a non-finite value after
    `at_step` does not make the run "diverged"), and a censored regression fitted by the calibration study
    turns them into a calibrated distribution of the remaining time, from which come the point forecast (its
    median), the nominal 50 % and 90 % intervals and P(grok by the horizon).  A signal outside the range the
    model was fitted on is named (`Forecast.out_of_range`) and left out: the forecast falls back to a model
    without it, down to the clock alone, whose interval is wide; never a clipped value.

    Parameters
    ----------
    run : object
        The run, in any form `grokclocks.compare.compare_run` reads: an engine `Trajectory`, a log file or run
        directory (CSV, JSON lines, TensorBoard, Lightning, Hugging Face trainer_state.json, torch.save, npz),
        a list of log files (one seed each), a pandas DataFrame, a mapping of arrays, a `RunData`, or None
        (then the keyword arrays are the run).
    at_step : float, optional
        The issue step τ: only records with step ≤ τ are read.  Default: the last record.  Must lie between
        the first record's step and one record interval after the last.
    horizon : float, optional
        The step by which the probability of grokking is given, ≥ `at_step`, finite.  Default: the run's
        planned length when the input states it (an engine trajectory's config; a run file's sidecar
        `run.json`, whose `fields.steps` the engine writes; for any other log the sidecar `<log>.json`, e.g.
        `metrics.csv.json` holding `{"planned_steps": 20000}`), else 10 × `at_step`, labelled as a fallback.
        A horizon at or before `at_step` is kept and marked reached: P(grok by it) = 0.
    run_index : int, optional
        Which run (seed) of an input that holds several, 0-based; required then.
    index : tuple of int, optional
        The grid point of an engine sweep, one index per axis of the trajectory's `config.grid_axes`; required
        when the run holds a grid of more than one point, `None` (default) otherwise.
    columns : mapping of str to str, optional
        Series name to log column, overriding the name matching (e.g. {"test_acc": "val/accuracy"}); default
        `None`.
    steps : array_like, optional
        Record steps, strictly increasing (with the keyword arrays, or overriding the run's).
    train_acc : array_like, optional
        Train accuracy per record, in [0, 1], NaN where not logged.
    test_acc : array_like, optional
        Test accuracy per record, in [0, 1], NaN where not logged.
    train_loss : array_like, optional
        Training loss per record, ≥ 0, NaN where not logged.
    test_loss : array_like, optional
        Test loss per record, ≥ 0, NaN where not logged.
    weight_norm : array_like, optional
        Global parameter norm per record, ≥ 0, NaN where not logged.
    gap : array_like, optional
        Eigengap series σ₂/σ₃ indexed by epoch (row 0 = initialisation, NaN = undefined), for the lock-in
        detector; default `None`.
    weights : array_like, optional
        Parameter snapshots of shape ([n_runs,] n_snapshots, ...), each snapshot flattened to one vector, for
        the lock-in detector's update Gram; default `None`.
    weights_steps : array_like, optional
        Steps of the `weights` snapshots (default: `steps`).
    train_level : float, optional
        Train-accuracy level of t_train, in (0, 1]; default 1.0 (`grokclocks.task.TRAIN_LEVEL`).
    test_level : float, optional
        Test-accuracy level of t_test, in (0, 1]; default 0.99 (`grokclocks.task.TEST_LEVEL`).
    lr : float, optional
        Learning rate (> 0); with `weight_decay` and `optimizer` gives decoupled weight decay's rate lr × wd.
        Default: the engine config's, else unknown.
    weight_decay : float, optional
        Weight decay (≥ 0), in the optimizer's own convention.  Default: the engine config's, else unknown.
    optimizer : str, optional
        "adamw" or "sgd" (whose weights shrink at lr × wd per step); any other name makes the decay rate
        unknown.  Default: the engine config's.
    levi_params : mapping, optional
        For a run of the linear teacher-student model (Levi et al.): lam (d_in/N_tr), eps, eta0 and optional
        d_in, d_out, gamma, init_scale, discrete, wd_convention of `grokclocks.linear.t_star`; the forecast is
        then the closed form t*_gen instead of the calibrated model.
    model : ForecastModel, optional
        A calibrated model (`grokclocks.forecast.fit_model`); default: the shipped one (`default_model`).

    Returns
    -------
    Forecast
        With status "forecast", or "too early" (no t_train yet), "grokked" (t_test measured), "diverged" (a
        value logged up to `at_step` is not finite) or "cannot tell" (no train or test accuracy logged, too
        few records, the time since t_train outside the model's range, or a log the readers refuse for a
        non-finite value after `at_step`), each with its reason.

    Raises
    ------
    DomainError
        Invalid arrays or arguments (shapes, ranges, a level or step that is not finite, a horizon before
        `at_step`, an `at_step` past the end of the log, a run index out of range), or a malformed sidecar.

    Notes
    -----
    The signals, each with its spec ID, are listed in the result (`Forecast.signals`), with each one's share
    of the forecast.  The interval's shape is the calibration study's choice, by cross-validated likelihood,
    among a lognormal, a loglogistic and a Weibull remaining time and the escape-time law of an activated
    process (spec `kramers:eq15`), whose exponential waiting time is memoryless: an escape's 90 % interval
    spans a factor of ln 20 / ln(1/0.95) ≈ 58 in the remaining time, wide by nature
    (`default_model().family` names the shipped model's).  Its probabilities then pass through a
    recalibration map learnt from forecasts on configurations the fit had not seen.

    References
    ----------
    Spec IDs `clocks:appF4-acc-clock`, `clocks:appF4-cls-estimator` (the clocks), `clocks:appF2-wd-rate` (weight
    decay's rate), `kramers:milestones`, `kramers:eq15` (escape-time law), `repulsion:slope-detector` (lock-in),
    `levi:tstar`, `levi:grok-def` (the linear closed form).
    """
    out = _forecasts(run, at_step, horizon, run_index=run_index, index=index, columns=columns,
                     arrays={"steps": steps, "train_acc": train_acc, "test_acc": test_acc, "train_loss": train_loss,
                                 "test_loss": test_loss, "weight_norm": weight_norm, "gap": gap, "weights": weights,
                                 "weights_steps": weights_steps, "train_level": train_level, "test_level": test_level},
                     lr=lr, weight_decay=weight_decay, optimizer=optimizer, levi_params=levi_params, model=model,
                     one=True)
    return out[0]


@cites("clocks:appF4-acc-clock", "clocks:appF2-wd-rate", "kramers:milestones", "kramers:eq15")
def forecast_runs(run: Any = None, at_step: float | None = None, horizon: float | None = None, *,
                  index: Any = None, columns: Mapping[str, str] | None = None, lr: float | None = None,
                  weight_decay: float | None = None, optimizer: str | None = None,
                  model: ForecastModel | None = None, **arrays: Any) -> tuple[Forecast, ...]:
    """One forecast per run (seed) of an input that holds several (the arguments of `forecast`).

    Parameters
    ----------
    run : object
        The runs, in any form `forecast` reads.
    at_step : float, optional
        The issue step τ (default: the last record).
    horizon : float, optional
        The step by which the probability of grokking is given (default as in `forecast`).
    index : tuple of int, optional
        Grid point of an engine sweep.
    columns : mapping of str to str, optional
        Series name to log column.
    lr : float, optional
        Learning rate, > 0 (default: the engine config's).
    weight_decay : float, optional
        Weight decay, ≥ 0 (default: the engine config's).
    optimizer : str, optional
        "adamw" or "sgd" for the decay rate lr × wd (default: the engine config's).
    model : ForecastModel, optional
        A calibrated model (default: the shipped one).
    **arrays : array_like
        The keyword arrays and levels of `forecast` (steps, train_acc, test_acc, train_loss, test_loss,
        weight_norm, gap, weights, weights_steps, train_level, test_level).

    Returns
    -------
    tuple of Forecast
        One per run, in the input's order.

    Raises
    ------
    DomainError
        As `forecast`, or an unknown keyword.
    """
    allowed = {"steps", "train_acc", "test_acc", "train_loss", "test_loss", "weight_norm", "gap", "weights",
               "weights_steps", "train_level", "test_level"}
    bad = sorted(set(arrays) - allowed)
    if bad:
        raise DomainError(f"forecast_runs got unknown keyword(s) {bad}; allowed: {sorted(allowed)}")
    return _forecasts(run, at_step, horizon, run_index=None, index=index, columns=columns,
                      arrays={k: arrays.get(k) for k in allowed}, lr=lr, weight_decay=weight_decay,
                      optimizer=optimizer, levi_params=None, model=model, one=False)


def _level_arg(x: Any, name: str) -> float | None:
    if x is None:
        return None
    v = float(V.finite(x, name, scalar=True))
    if not 0.0 < v <= 1.0:
        raise DomainError(f"{name} must be in (0, 1] (got {v!r})")
    return v


def _forecasts(run: Any, at_step: Any, horizon: Any, *, run_index: Any, index: Any, columns: Any,
               arrays: dict[str, Any], lr: Any, weight_decay: Any, optimizer: Any, levi_params: Any,
               model: ForecastModel | None, one: bool) -> tuple[Forecast, ...]:
    # every argument is checked before the run is read: a bad argument is a DomainError, never a status
    model = default_model() if model is None else model
    if not isinstance(model, ForecastModel):
        raise DomainError(f"model must be a ForecastModel (got {type(model).__name__})")
    tau_arg = None if at_step is None else float(V.finite(at_step, "at_step", scalar=True))
    hor_arg = None if horizon is None else float(V.positive(horizon, "horizon", scalar=True))
    arrays = dict(arrays)
    for k in ("train_level", "test_level"):
        arrays[k] = _level_arg(arrays.get(k), k)
    if run_index is not None:
        run_index = V.integer_at_least(run_index, "run_index", 0)
    if levi_params is not None and not isinstance(levi_params, Mapping):
        raise DomainError(f"levi_params must be a mapping of t_star's arguments (got {type(levi_params).__name__})")
    decay, decay_note = _optimizer_rate(run, index, lr, weight_decay, optimizer)
    planned, psrc = (None, "") if hor_arg is not None else _planned_length(run)
    divergence = _engine_divergence(run, index)
    # only the records up to τ are checked and read, where the input can be cut before it is validated
    last = None
    if tau_arg is not None and run is None:
        arrays, last = _cut_arrays(arrays, tau_arg)
    elif tau_arg is not None and hasattr(run, "times") and hasattr(run, "metrics") and not isinstance(run, RunData):
        run = _TrajectoryUpTo(run, tau_arg)
        last = run.last_step
    rd = _to_rundata(run, index, columns, arrays)
    if isinstance(rd, _Diverged):
        tau = math.nan if tau_arg is None else tau_arg
        if tau_arg is not None and rd.step is not None and rd.step > tau_arg:
            return (_no_forecast("cannot tell", f"the log holds a non-finite value at step {rd.step:g}, after the "
                                 f"issue step {tau_arg:g}, and the log readers refuse a log with a non-finite value: "
                                 f"cut the log at the issue step to forecast from it ({rd.message})", tau, math.nan,
                                 "n/a"),)
        return (_no_forecast("diverged", f"a logged value is not finite: {rd.message}", tau, math.nan, "n/a",
                             p_grok=0.0),)
    n = rd.n_runs
    if one:
        if run_index is None:
            if n > 1:
                names = ", ".join(rd.run_names) if rd.run_names else f"0..{n - 1}"
                raise DomainError(f"the run holds {n} runs ({names}); pick one with run_index= (or use forecast_runs)")
            run_index = 0
        if run_index >= n:
            raise DomainError(f"run_index must be in [0, {n - 1}] (got {run_index})")
        which = [run_index]
    else:
        which = list(range(n))
    first = float(rd.steps[0])
    last = float(rd.steps[-1]) if last is None else last
    tau = float(rd.steps[-1]) if tau_arg is None else tau_arg
    if tau < first:
        raise DomainError(f"at_step must be >= the first record's step {first:g} (got {tau:g})")
    spacing = float(rd.steps[-1] - rd.steps[-2]) if rd.steps.size >= 2 else 0.0
    if tau > last + spacing:
        raise DomainError(f"at_step must be at most one record interval ({spacing:g}) after the last record's step "
                          f"{last:g} (got {tau:g}): the log ends there, and nothing is known of the steps after it")
    if hor_arg is not None and hor_arg < tau:
        raise DomainError(f"horizon must be >= at_step = {tau:g} (got {hor_arg:g})")
    hor, hsrc, reached = horizon_of(tau, hor_arg, planned, psrc or "planned length")
    keep = _records_up_to(rd.steps, tau)
    out = []
    for i in which:
        state = _state(rd, i, keep, decay)
        if divergence is not None and i < divergence[0].size and divergence[0][i] and divergence[1][i] <= tau:
            out.append(_no_forecast("diverged", f"the engine flagged the run as diverged at step {divergence[1][i]:g}",
                                    tau, hor, hsrc, p_grok=0.0, train_level=state.train_level,
                                    test_level=state.test_level, source=state.source, run_name=state.run_name,
                                    curves=dict(state.curves)))
            continue
        lock = _lock_in(rd, i, tau)
        out.append(forecast_from_state(state, tau, hor, hsrc, reached, model,
                                       extra_signals=() if lock is None else (lock,), levi_params=levi_params,
                                       decay_note=decay_note))
    return tuple(out)
