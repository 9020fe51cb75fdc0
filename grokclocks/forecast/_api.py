"""`forecast`: one run's records up to a step -> a `Forecast` of the step at which it groks."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as V
from .. import clocks as _clocks
from .. import linear as _linear
from .. import repulsion as _repulsion
from .._validate import DomainError
from ..citations import cites
from ..runs import RunData
from ..runs._load import as_run_data, read_sidecar
from ._calibration import MODEL as _SHIPPED
from ._model import AFTModel, family_ppf
from ._result import Forecast, Signal
from ._signals import GROUPS, read_signals

__all__ = ["ForecastModel", "default_model", "forecast", "forecast_runs"]

_ESCAPE_ID = "kramers:eq15"
_EPS_CLS = 1e-3  # loss level of the classifier clock shown (clocks:appF4-cls-estimator, the spec's table)
# interval quantiles
_Q = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclasses.dataclass(frozen=True)
class ForecastModel:
    """A calibrated forecaster: the models of the remaining time, one per set of available signals.

    `grokclocks.forecast.default_model` is the one the calibration study fitted and ships;
    `grokclocks.forecast.fit_model` fits another on runs whose outcome is known.  A forecast uses the
    first profile whose signals can all be read off the run (`profile_for`); `as_dict` and `from_dict`
    convert to and from a JSON-ready dict.
    """

    profiles: tuple[AFTModel, ...]
    """Fitted models, one `AFTModel` per set of signals, most signals first; a forecast uses the first whose
    signals are all readable."""
    groups: tuple[str, ...]
    """The signal groups the calibration study kept (names of `grokclocks.forecast.GROUPS`)."""
    dropped: Mapping[str, str]
    """The groups the study dropped, each name with the reason (its cross-validated effect)."""
    family: str
    """Distribution family of the standardised log remaining time: "lognormal", "loglogistic", "weibull" or
    "exponential" (one of `grokclocks.forecast.FAMILIES`)."""
    summary: str
    """One line: what the model was fitted on and how it did on the held-out runs."""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ForecastModel:
        """A model from its dict form (`as_dict`, or `grokclocks.forecast.fit_model`'s result as a dict).

        Parameters
        ----------
        d : mapping
            With keys "profiles" (a list of `AFTModel.as_dict` dicts), "groups", "dropped", "family" and
            "summary".

        Returns
        -------
        ForecastModel
            The model.

        Raises
        ------
        DomainError
            If a key is missing or a profile is malformed.
        """
        try:
            profiles = tuple(AFTModel.from_dict(p) for p in d["profiles"])
            groups = tuple(str(g) for g in d["groups"])
            dropped = {str(k): str(v) for k, v in dict(d.get("dropped", {})).items()}
            family, summary = str(d["family"]), str(d.get("summary", ""))
        except (KeyError, TypeError) as exc:
            raise DomainError(f"model must be a dict with profiles, groups and family ({exc})") from None
        if not profiles:
            raise DomainError("model needs at least one profile")
        unknown = [g for g in groups if g not in GROUPS]
        if unknown:
            raise DomainError(f"model groups must be among {tuple(GROUPS)} (got {unknown})")
        return cls(profiles, groups, dropped, family, summary)

    def as_dict(self) -> dict[str, Any]:
        """The model as a JSON-ready dict (the form `from_dict` reads).

        Returns
        -------
        dict
            Keys "profiles", "groups", "dropped", "family" and "summary".
        """
        return {"profiles": [p.as_dict() for p in self.profiles], "groups": list(self.groups),
                "dropped": dict(self.dropped), "family": self.family, "summary": self.summary}

    def profile_for(self, x: Mapping[str, float]) -> AFTModel | None:
        """The first profile whose signals are all finite in `x` (None if none is).

        Parameters
        ----------
        x : mapping of str to float
            Signal name to value (NaN = not readable).

        Returns
        -------
        AFTModel or None
            The profile a forecast with these signals uses.
        """
        for p in self.profiles:
            if all(math.isfinite(x.get(f, math.nan)) for f in p.features):
                return p
        return None


def default_model() -> ForecastModel:
    """The model shipped with grokclocks, fitted by the calibration study (benchmarks/forecast_calibration.py).

    Returns
    -------
    ForecastModel
        The shipped model.
    """
    return ForecastModel.from_dict(_SHIPPED)


# ------------------------------------------------------------------------------------------- input


def _planned_length(run: Any) -> float | None:
    """The run's planned number of steps when the input says it (engine trajectory or run file), else None."""
    cfg = getattr(run, "config", None)
    steps = getattr(cfg, "steps", None)
    if isinstance(steps, (int, np.integer)) and steps > 0:
        return float(steps)
    if isinstance(run, (str, os.PathLike)):
        p = Path(run)
        js = p.with_suffix(".json") if p.suffix == ".npz" else p.with_name(p.name + ".json")
        # through the door: beside the file the user named, so not a link; bounded; a refusal names the file
        meta = read_sidecar(js, named=p)
        if isinstance(meta, dict):
            planned = meta.get("planned_steps")
            if planned is None:
                config = meta.get("config")
                fields = config.get("fields") if isinstance(config, dict) else None
                planned = fields.get("steps") if isinstance(fields, dict) else None
            if isinstance(planned, int) and not isinstance(planned, bool) and planned > 0:
                return float(planned)
    return None


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


# how the readers (grokclocks.logs, grokclocks.compare.run_data) word a non-finite logged value
_DIVERGED_MESSAGES = ("must be finite", "did the run diverge", "(got inf", "(got -inf")


def _to_rundata(run: Any, index: Any, columns: Any, overrides: dict[str, Any]) -> RunData | str:
    """The run as RunData, or the reason it diverged (a non-finite logged value)."""
    try:
        return _as_rundata(run, index, columns, overrides)
    except DomainError as exc:
        msg = str(exc)
        if any(k in msg for k in _DIVERGED_MESSAGES):
            return msg
        raise


def _records_up_to(steps: np.ndarray, tau: float) -> np.ndarray:
    """The records a forecast at step τ may read: those with step ≤ τ (nothing later, ever)."""
    return steps <= tau


# ------------------------------------------------------------------------------------------- the forecast


def _no_forecast(status: str, reason: str, tau: float, horizon: float, hsrc: str, **kw: Any) -> Forecast:
    return Forecast(status=status, reason=reason, at_step=tau, horizon=horizon, horizon_source=hsrc, **kw)


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


def _levi(levi_params: Mapping[str, Any], test_level: float, t_train: float, tau: float, horizon: float
          ) -> tuple[float, tuple[float, float], tuple[float, float], float, float, Signal]:
    """The linear estimator's closed form t*_gen as the forecast (Levi et al.; `levi:tstar`, `levi:grok-def`)."""
    if not isinstance(levi_params, Mapping):
        raise DomainError(f"levi_params must be a mapping of t_star's arguments (got {type(levi_params).__name__})")
    kw = dict(levi_params)
    unknown = sorted(set(kw) - {"lam", "eps", "eta0", "d_in", "d_out", "gamma", "level", "init_scale", "discrete",
                                "wd_convention"})
    if unknown:
        raise DomainError(f"levi_params takes lam, eps, eta0, d_in, d_out, gamma, level, init_scale, discrete, "
                          f"wd_convention (got unknown {unknown})")
    try:
        lam, eps, eta0 = kw.pop("lam"), kw.pop("eps"), kw.pop("eta0")
    except KeyError as exc:
        raise DomainError(f"levi_params needs lam, eps and eta0 (missing {exc.args[0]!r})") from None
    d_in = kw.pop("d_in", None)
    kw.setdefault("level", test_level)
    t_gen = float(_linear.t_star("gen", lam, eps, eta0, **kw))
    t_tr = float(_linear.t_star("train", lam, eps, eta0, **kw))
    # finite-size spread: the per-seed relative s.d. of t*_gen measured at d_in = 500 is at most 0.12 for
    # lam <= 0.9 (spec levi, section 7.2), scaling as d_in^(-1/2); without d_in the d_in = 250 worst case 0.25
    sd = 0.25 if d_in is None else min(0.25, 0.12 * math.sqrt(500.0 / float(V.positive(d_in, "d_in", scalar=True))))
    if math.isfinite(t_tr) and t_tr > 0 and math.isfinite(t_train):
        sd = max(sd, abs(math.log(t_train / t_tr)))  # the run's own deviation from the closed form
    qs = [t_gen * math.exp(sd * float(_ndtri(q))) for q in _Q]
    p = float(_ndtr(math.log(horizon / t_gen) / sd)) if math.isfinite(t_gen) and t_gen > 0 else 0.0
    sig = Signal("t_gen_linear", "linear estimator's t*_gen (closed form, Levi et al.)", t_gen, "levi:tstar", True,
                 note=f"t*_tr = {t_tr:.4g} vs measured t_train {t_train:.4g}; lognormal spread s.d. {sd:.3g} (finite "
                      "size, d_in^(-1/2))")
    return qs[2], (qs[1], qs[3]), (qs[0], qs[4]), p, sd, sig


def _ndtr(x: float) -> float:
    from scipy.special import ndtr

    return float(ndtr(x))


def _ndtri(q: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(q))


def _signal_rows(x: Mapping[str, float], used: set[str], contrib: Mapping[str, float], model: ForecastModel,
                 extra: dict[str, Any]) -> list[Signal]:
    """One Signal per feature read (and the clocks shown beside them)."""
    rows = [Signal("t_train", "accuracy clock t_train: first record with train acc >= the train level",
                   extra["t_train"], "clocks:appF4-acc-clock", True, note="the issue points of the study are 2x, 4x "
                   "and 8x t_train")]
    rows.append(Signal("t_cls", f"classifier clock t_cls({_EPS_CLS:g}): first record with train loss <= {_EPS_CLS:g}",
                       extra["t_cls"], "clocks:appF4-cls-estimator", False,
                       note="shown for reference; the train-loss signals below carry it"))
    feature_info = {
        "elapsed": ("log(now / t_train)", "clock"),
        "test_err": ("log((1 - test acc) / (1 - test level)), test error left, mean over [0.8 now, now]", "test_acc"),
        "test_err_slope": ("d log(1 - test acc) / d log t over the last doubling of time", "test_acc"),
        "acc_eta": ("log((t_acc - now) / now): t_acc where the test-error trend reaches the level", "test_acc"),
        "test_loss_slope": ("d log L_test / d log t over the last doubling of time", "test_loss"),
        "test_loss_drop": ("log(L_test / its peak since t_train)", "test_loss"),
        "train_loss": ("log10 of the training loss now", "train_loss"),
        "train_loss_slope": ("d log L_train / d log t over the last doubling of time", "train_loss"),
        "norm_rate": ("-d log |theta| / d log t over the last doubling of time (decay rate x now)", "norm"),
        "norm_drop": ("log(|theta| / its peak since t_train)", "norm"),
        "decay_budget": ("log(lr x wd x now): decoupled weight decay's shrink exponent by now", "decay"),
    }
    for f, (title, group) in feature_info.items():
        v = x.get(f, math.nan)
        g = GROUPS[group]
        spec = g.spec_ids[0]
        if group not in model.groups:
            note = f"not used: {model.dropped.get(group, 'not kept by the calibration study')}"
            rows.append(Signal(f, title, None if not math.isfinite(v) else v, spec, False, note=note))
            continue
        if not math.isfinite(v):
            rows.append(Signal(f, title, None, spec, False, note=f"not readable from this run (needs {g.needs})"))
            continue
        if f in used:
            rows.append(Signal(f, title, v, spec, True, contrib.get(f, math.nan)))
        else:
            rows.append(Signal(f, title, v, spec, False, note="read, but the model profile used lacks it"))
        if f == "decay_budget":
            rows[-1] = dataclasses.replace(rows[-1], note=(rows[-1].note + "; " if rows[-1].note else "")
                                           + extra["decay_note"])
    return rows


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
    the test level.  The forecast reads signals off the records up to `at_step` (no later record is read:
    cutting the log at `at_step` gives the same forecast, bit for bit), and a censored regression fitted by
    the calibration study turns them into a distribution of the remaining time, from which come the point
    forecast (its median), the nominal 50 % and 90 % intervals and P(grok by the horizon).

    Parameters
    ----------
    run : object
        The run, in any form `grokclocks.compare.compare_run` reads: an engine `Trajectory`, a log file or run
        directory (CSV, JSON lines, TensorBoard, Lightning, Hugging Face trainer_state.json, torch.save, npz),
        a list of log files (one seed each), a pandas DataFrame, a mapping of arrays, a `RunData`, or None
        (then the keyword arrays are the run).
    at_step : float, optional
        The issue step τ: only records with step ≤ τ are read.  Default: the last record.  Must be ≥ the first
        record's step.
    horizon : float, optional
        The step by which the probability of grokking is given, > `at_step`.  Default: the run's planned
        length when the input states it (an engine trajectory's config, a run file's planned steps) and it
        lies after `at_step`, else 10 × `at_step`.
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
        logged value is not finite) or "cannot tell" (no train or test accuracy logged), each with its reason.

    Raises
    ------
    DomainError
        Invalid arrays or arguments (shapes, ranges, a horizon not after `at_step`, a run index out of range).

    Notes
    -----
    The signals, each with its spec ID, are listed in the result (`Forecast.signals`), with each one's share
    of the forecast.  The interval's shape is the calibration study's choice, by cross-validated likelihood,
    among a lognormal, a loglogistic and a Weibull remaining time and the escape-time law of an activated
    process (spec `kramers:eq15`), whose exponential waiting time is memoryless: an escape's 90 % interval
    spans a factor of ln 20 / ln(1/0.95) ≈ 58 in the remaining time, wide by nature.  The shipped model is
    loglogistic (`default_model().family`).

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


def _forecasts(run: Any, at_step: Any, horizon: Any, *, run_index: Any, index: Any, columns: Any,
               arrays: dict[str, Any], lr: Any, weight_decay: Any, optimizer: Any, levi_params: Any,
               model: ForecastModel | None, one: bool) -> tuple[Forecast, ...]:
    planned = _planned_length(run)
    divergence = _engine_divergence(run, index)
    decay, decay_note = _optimizer_rate(run, index, lr, weight_decay, optimizer)
    model = default_model() if model is None else model
    if not isinstance(model, ForecastModel):
        raise DomainError(f"model must be a ForecastModel (got {type(model).__name__})")
    rd = _to_rundata(run, index, columns, arrays)
    if isinstance(rd, str):
        tau = math.nan if at_step is None else float(V.finite(at_step, "at_step", scalar=True))
        return (_no_forecast("diverged", f"a logged value is not finite: {rd}", tau, math.nan, "n/a", p_grok=0.0),)
    n = rd.n_runs
    if one:
        if run_index is None:
            if n > 1:
                names = ", ".join(rd.run_names) if rd.run_names else f"0..{n - 1}"
                raise DomainError(f"the run holds {n} runs ({names}); pick one with run_index= (or use forecast_runs)")
            run_index = 0
        run_index = V.integer_at_least(run_index, "run_index", 0)
        if run_index >= n:
            raise DomainError(f"run_index must be in [0, {n - 1}] (got {run_index})")
        which = [run_index]
    else:
        which = list(range(n))
    first = float(rd.steps[0])
    tau = float(rd.steps[-1]) if at_step is None else float(V.finite(at_step, "at_step", scalar=True))
    if tau < first:
        raise DomainError(f"at_step must be >= the first record's step {first:g} (got {tau:g})")
    if horizon is not None:
        hor = float(V.finite(horizon, "horizon", scalar=True))
        if not hor > tau:
            raise DomainError(f"horizon must be after at_step = {tau:g} (got {hor:g})")
        hsrc = "given"
    elif planned is not None and planned > tau:
        hor, hsrc = planned, "planned length"
    else:
        hor, hsrc = 10.0 * tau, "10x the current step" + ("; the planned length has passed" if planned else "")
    if hor <= 0:
        hor, hsrc = math.inf, "n/a (the issue step is <= 0)"
    keep = _records_up_to(rd.steps, tau)
    return tuple(_one(rd, i, keep, tau, hor, hsrc, divergence, decay, decay_note, levi_params, model) for i in which)


def _one(rd: RunData, i: int, keep: np.ndarray, tau: float, hor: float, hsrc: str, divergence: Any,
         decay: float | None, decay_note: str, levi_params: Any, model: ForecastModel) -> Forecast:
    steps = rd.steps[keep]
    series = {k: (None if getattr(rd, k) is None else getattr(rd, k)[i][keep])
              for k in ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")}
    name = rd.run_names[i] if rd.run_names else (f"run {i}" if rd.n_runs > 1 else "")
    base = {"train_level": rd.train_level, "test_level": rd.test_level, "source": rd.source, "run_name": name,
                "curves": {"steps": steps, **{k: v for k, v in series.items() if v is not None}}}
    if divergence is not None and i < divergence[0].size and divergence[0][i] and divergence[1][i] <= tau:
        return _no_forecast("diverged", f"the engine flagged the run as diverged at step {divergence[1][i]:g}", tau,
                            hor, hsrc, p_grok=0.0, **base)
    if series["train_acc"] is None or np.isnan(series["train_acc"]).all():
        return _no_forecast("cannot tell", "no train accuracy logged up to this step: t_train, the clock every "
                            "signal is timed from, cannot be read", tau, hor, hsrc, **base)
    if series["test_acc"] is None or np.isnan(series["test_acc"]).all():
        return _no_forecast("cannot tell", "no test accuracy logged up to this step: the test clock cannot be read",
                            tau, hor, hsrc, **base)
    t_train = _clocks.accuracy_clock(steps, series["train_acc"], target=rd.train_level)
    t_test = _clocks.first_hitting_time(steps, series["test_acc"], rd.test_level, direction="above")
    if math.isfinite(t_test):
        return _no_forecast("grokked", f"the test accuracy reached {rd.test_level:g} at step {t_test:g}", tau, hor,
                            hsrc, t_train=t_train, t_test=t_test, p_grok=1.0, spec_ids=("kramers:milestones",), **base)
    if not math.isfinite(t_train):
        return _no_forecast("too early", f"the train accuracy has not reached {rd.train_level:g} yet: the forecast "
                            "starts at t_train (a run that has not fit its training set has no grokking delay)",
                            tau, hor, hsrc, t_train=t_train, **base)
    if t_train <= 0:
        return _no_forecast("cannot tell", "the train accuracy is at its level at step 0: the signals are timed "
                            "in multiples of t_train > 0", tau, hor, hsrc, t_train=t_train, **base)
    x = read_signals(steps, at_step=tau, t_train=t_train, test_level=rd.test_level, **series, decay_rate=decay)
    t_cls = (_clocks.classifier_clock(steps, series["train_loss"], _EPS_CLS)
             if series["train_loss"] is not None and not np.isnan(series["train_loss"]).all() else None)
    extra = {"t_train": t_train, "t_cls": t_cls, "decay_note": decay_note}
    lock = _lock_in(rd, i, tau)
    if levi_params is not None:
        point, i50, i90, p, sd, sig = _levi(levi_params, rd.test_level, t_train, tau, hor)
        sigs = [Signal("t_train", "accuracy clock t_train", t_train, "clocks:appF4-acc-clock", True), sig]
        return Forecast("forecast", "the linear estimator's closed form t*_gen (the run is Levi et al.'s linear "
                        "teacher-student model)", tau, hor, hsrc, t_train, point, i50, i90, p, tuple(sigs),
                        ("levi:tstar", "levi:grok-def", "clocks:appF4-acc-clock"), "linear closed form",
                        "Levi et al.'s t*_gen with a lognormal finite-size spread",
                        distribution=("absolute", "lognormal", math.log(point), sd, 0.0), **base)
    prof = model.profile_for(x)
    if prof is None:
        return _no_forecast("cannot tell", "no model profile's signals are readable (fewer than 3 test-accuracy "
                            "records in the last doubling of time?)", tau, hor, hsrc, t_train=t_train, **base)
    mu, sigma = prof.location_scale(x)
    qs = [tau * (1.0 + math.exp(min(mu + sigma * prof.ppf(q), 700.0))) for q in _Q]
    c = math.log((hor - tau) / tau) if math.isfinite(hor) else math.inf
    p_grok = prof.cdf((c - mu) / sigma) if math.isfinite(c) else 1.0
    contrib = prof.contributions(x)
    sigs = _signal_rows(x, set(prof.features), contrib, model, extra)
    shape = _escape_signal(prof, sigma)
    sigs.append(shape)
    if lock is not None:
        sigs.append(lock)
    used_groups = [g for g in model.groups if any(f in prof.features for f in GROUPS[g].features)]
    ids = ["clocks:appF4-acc-clock"] + [s for g in used_groups for s in GROUPS[g].spec_ids] + [_ESCAPE_ID]
    ids = tuple(dict.fromkeys(ids))
    driver = max(contrib.items(), key=lambda kv: abs(kv[1]))[0] if contrib else ""
    reason = (f"calibrated {prof.family} model of the remaining time on {len(prof.features)} signals"
              + (f"; the largest share comes from {driver}" if driver else ""))
    return Forecast("forecast", reason, tau, hor, hsrc, t_train, qs[2], (qs[1], qs[3]), (qs[0], qs[4]), float(p_grok),
                    tuple(sigs), ids, "calibrated model", f"{prof.family} remaining-time model on "
                    f"{', '.join(prof.features)}; {model.summary}",
                    distribution=("remaining", prof.family, mu, sigma, tau), **base)


def _escape_signal(prof: AFTModel, sigma: float) -> Signal:
    """The interval's law: its family and spread, against the memoryless escape of an activated process."""
    spread = math.exp(sigma * (family_ppf(prof.family, 0.95) - family_ppf(prof.family, 0.05)))
    escape = math.exp(family_ppf("exponential", 0.95) - family_ppf("exponential", 0.05))  # = ln 20 / ln(1/0.95)
    shape = {"lognormal": "lognormal remaining time", "loglogistic": "loglogistic remaining time",
             "weibull": f"Weibull remaining time of shape {1.0 / sigma:.3g} (1 = the memoryless escape)",
             "exponential": "exponential remaining time (the memoryless escape itself)"}[prof.family]
    note = (f"{shape}, chosen by the calibration study's cross-validated likelihood; its 90 % interval spans a "
            f"factor {spread:.3g} in the remaining time, against {escape:.3g} for the memoryless escape of an "
            "activated process (kramers:eq15), whose interval is wide by nature")
    return Signal("escape_law", "interval shape: spread σ of the log remaining time (1 = memoryless escape, "
                  "Weibull family)", sigma, _ESCAPE_ID, True, note=note)

