"""`Monitor`: a forecast kept up to date inside any training loop, and a stopping rule with hysteresis.

The monitor keeps no raw records: each series' log-time bins (`grokclocks.forecast._signals.LogBins`, about 16
per doubling of the step) and the clocks (t_train, t_test, t_cls) updated record by record, so an update
costs O(1) and memory grows as the log of the step; the forecast is recomputed when an evaluation metric
arrives (and every `every` updates otherwise), at a cost of O(log n).  It is the same computation as
`forecast` on the same records (`grokclocks.forecast._predict.forecast_from_state`), up to the rounding of the
bins' sums.
"""

from __future__ import annotations

import collections
import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _validate as V
from .. import task as _task
from .._validate import DomainError
from ..logs import canonical_name
from ._api import _optimizer_rate, horizon_of
from ._predict import EPS_CLS, ForecastModel, RunState, _no_forecast, default_model, forecast_from_state
from ._result import Forecast
from ._signals import LogBins
from ._stop import kind_of, stop_rule

__all__ = ["Monitor"]

_SERIES = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")


_HISTORY = 4096  # forecasts the stop rule looks back on (a longer streak is judged on its latest part)


def _number(value: Any, name: str) -> float:
    """A logged value as a float (a 0-d array or tensor too); a bool, string, array of several values or a number
    beyond the float range is an error."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise DomainError(f"metric {name!r} must be a real number (got {V.show(value, 40)})")
    if hasattr(value, "item") and not isinstance(value, numbers.Number):
        try:
            value = value.item()  # numpy scalar / 0-d array / torch tensor
        except (ValueError, RuntimeError, TypeError):
            raise DomainError(f"metric {name!r} must be one number (got {type(value).__name__})") from None
    if not isinstance(value, numbers.Real):
        raise DomainError(f"metric {name!r} must be a real number (got {type(value).__name__})")
    try:
        return float(value)
    except OverflowError:
        raise DomainError(f"metric {name!r} must be a real number within the float range (got an integer of "
                          f"{int(value).bit_length()} bits)") from None


def _check_value(series: str, x: float, name: str) -> None:
    """A value outside its series' domain is an error: an accuracy outside [0, 1] (NaN and ±inf included: a
    share of correct answers is a number in [0, 1] even when the network diverged), a negative loss or norm
    (-inf included).  A NaN or +inf loss or norm is not an error: it marks a diverged run."""
    if series.endswith("acc"):
        if not math.isfinite(x):
            raise DomainError(f"metric {name!r} ({series}) must be in [0, 1] (got {x:g}): an accuracy is a share "
                              "of correct answers, never NaN or infinite even when the run diverges (a broken "
                              "evaluation? a non-finite loss is what marks a diverged run)")
        if not 0.0 <= x <= 1.0:
            hint = " (a percentage? divide by 100)" if 1.0 < x <= 100.0 else ""
            raise DomainError(f"metric {name!r} ({series}) must be in [0, 1] (got {x:g}){hint}")
    elif x < 0:
        raise DomainError(f"metric {name!r} ({series}) must be >= 0 (got {x:g})")


class Monitor:
    """A forecast of t_test kept up to date from the metrics a training loop reports, with a stopping rule.

    Call `update(step, **metrics)` whenever the loop has numbers (train metrics every step, evaluation
    metrics every few hundred: each is recorded at its own steps).  Metric names are read as
    `grokclocks.logs.canonical_name` reads log columns ("acc", "train_accuracy", "val/acc", "eval_loss",
    "weight_norm", ...); names it cannot place are ignored and listed in `ignored`.  An update is checked
    whole before anything is stored: a rejected one raises `DomainError` saying why and leaves the monitor as
    it was.

    Parameters
    ----------
    horizon : float, optional
        The step by which P(grok) is given (the planned number of steps), > 0.  Without it the forecast uses
        10 × the current step, labelled as a fallback, and `should_stop` never fires (except on divergence).
        Once the step reaches the horizon the horizon is kept (never replaced) and P(grok by it) is 0.
    train_level : float
        Train-accuracy level of t_train, in (0, 1]; default 1.0.
    test_level : float
        Test-accuracy level of t_test, in (0, 1]; default 0.99.
    lr : float, optional
        Learning rate (> 0), for decoupled weight decay's rate lr × wd.
    weight_decay : float, optional
        Weight decay (≥ 0), in the optimizer's convention.
    optimizer : str, optional
        "adamw" or "sgd" (their weights shrink at lr × wd per step); other names leave the rate unknown.
    model : ForecastModel, optional
        A calibrated model; default: the shipped one.
    every : int
        Recompute the forecast on an update that carries an evaluation metric (test accuracy or test loss),
        and otherwise every `every` updates (≥ 1; default 50); in between, `update` returns the last forecast.
    columns : mapping of str to str, optional
        Metric name to series ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm"),
        overriding the name matching.

    Examples
    --------
    >>> mon = Monitor(horizon=5000)
    >>> for step in range(0, 1001, 50):
    ...     f = mon.update(step, train_acc=min(1.0, step / 200), test_acc=0.05 + step / 1e5)
    >>> f.status, mon.should_stop(0.05)
    ('forecast', False)
    """

    def __init__(self, horizon: float | None = None, *, train_level: float = _task.TRAIN_LEVEL,
                 test_level: float = _task.TEST_LEVEL, lr: float | None = None, weight_decay: float | None = None,
                 optimizer: str | None = None, model: ForecastModel | None = None, every: int = 50,
                 columns: Mapping[str, str] | None = None) -> None:
        self.horizon = None if horizon is None else float(V.positive(horizon, "horizon", scalar=True))
        """The step by which P(grok) is given; None: 10 × the current step (a fallback the stop rule ignores)."""
        self.train_level = _level(train_level, "train_level")
        """Train-accuracy level of t_train."""
        self.test_level = _level(test_level, "test_level")
        """Test-accuracy level of t_test."""
        self._decay, self._decay_note = _optimizer_rate(None, None, lr, weight_decay, optimizer)
        if model is not None and not isinstance(model, ForecastModel):
            raise DomainError(f"model must be a ForecastModel (got {type(model).__name__})")
        self.model = model
        """The calibrated model (None: the shipped one)."""
        self.every = V.integer_at_least(every, "every", 1)
        """Updates between two forecasts when no evaluation metric changes."""
        self.columns = dict(columns or {})
        """Metric name to series, overriding the name matching."""
        bad = {k: v for k, v in self.columns.items() if v not in _SERIES}
        if bad:
            raise DomainError(f"columns must map metric names to one of {_SERIES} (got {bad})")
        self.latest: Forecast | None = None
        """The last forecast (None before the first update)."""
        self.ignored: set[str] = set()
        """Metric names that were not read as any series."""
        self._last_step: float | None = None
        self._bins = {k: LogBins() for k in ("test_acc", "test_loss", "train_loss", "weight_norm")}
        self._logged = {k: False for k in _SERIES}
        self._t_train = math.inf
        self._t_test = math.inf
        self._t_cls = math.inf
        self._diverged: tuple[float, str] | None = None
        self._since = 0
        self._history: collections.deque = collections.deque(maxlen=_HISTORY)
        self._names: dict[str, str | None] = {}

    def _series(self, name: str) -> str | None:
        try:
            return self._names[name]
        except KeyError:
            pass
        if name in self.columns:
            series = self.columns[name]
        elif name in _SERIES:
            series = name
        else:
            c = canonical_name(name)
            series = c if c in _SERIES else None
        if len(self._names) < 1024:  # a loop reports the same few names: read each once
            self._names[name] = series
        return series

    def update(self, step: float, **metrics: Any) -> Forecast:
        """Record the metrics of one step and return the current forecast.

        The whole update is checked first; a rejected update raises and changes nothing.

        Parameters
        ----------
        step : float
            The training step (or epoch) of these metrics, finite, ≥ the last step given (an equal step adds
            metrics to that record).
        **metrics : float
            The metrics, by name (e.g. train_acc=1.0, test_acc=0.31, train_loss=0.002, weight_norm=41.2);
            0-d arrays and tensors are read with `.item()`.  A non-finite loss or norm marks the run as diverged
            (an accuracy must lie in [0, 1]: NaN or inf is an error).  When
            two names map to one series, the first is read and the others are listed in `ignored`.

        Returns
        -------
        Forecast
            The current forecast (recomputed as `every` says).

        Raises
        ------
        DomainError
            A step before the last one or not finite; a metric that is not one real number, beyond the float
            range, an accuracy outside [0, 1] (NaN and ±inf included) or a negative loss or norm.
        """
        s = float(V.finite(step, "step", scalar=True))
        if self._last_step is not None and s < self._last_step:
            raise DomainError(f"step must be >= the last step {self._last_step:g} (got {s:g})")
        values: dict[str, tuple[float, str]] = {}
        ignored = []
        for name, value in metrics.items():
            series = self._series(name)
            if series is None or series in values:
                ignored.append(name)
                continue
            x = _number(value, name)
            _check_value(series, x, name)
            values[series] = (x, name)
        # --- everything is valid: store
        self.ignored.update(ignored)
        self._last_step = s
        evaluation = False
        for series, (x, name) in values.items():
            if not math.isfinite(x):
                if self._diverged is None:
                    self._diverged = (s, f"{name} = {x} at step {s:g}")
                continue
            if series in ("test_acc", "test_loss"):
                evaluation = True
            self._logged[series] = True
            if series == "train_acc":
                if not math.isfinite(self._t_train) and x >= self.train_level:
                    self._t_train = s
                continue
            if series == "test_acc" and not math.isfinite(self._t_test) and x >= self.test_level:
                self._t_test = s
            if series == "train_loss" and not math.isfinite(self._t_cls) and x <= EPS_CLS:
                self._t_cls = s
            self._bins[series].add(s, x)
        self._since += 1
        if self.latest is None or evaluation or self._since >= self.every or self._diverged is not None:
            self.latest = self.forecast()
            self._since = 0
            self._history.append((s, self.latest.p_grok, kind_of(self.latest.status, self.latest.horizon_source)))
        return self.latest

    def bins(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """What the monitor keeps of each series logged so far: its log-time bins (mean step, mean value).

        Returns
        -------
        dict of str to (numpy.ndarray, numpy.ndarray)
            Series name ("test_acc", "test_loss", "train_loss", "weight_norm") to its bins, float64 arrays.
        """
        return {k: b.arrays() for k, b in self._bins.items() if len(b)}

    def forecast(self, at_step: float | None = None) -> Forecast:
        """The forecast from the metrics so far, at the last step.

        Parameters
        ----------
        at_step : float, optional
            The issue step: the last step given (the default); the monitor keeps no raw records, so an earlier
            step cannot be forecast from it (use `grokclocks.forecast.forecast` on the log).

        Returns
        -------
        Forecast
            The forecast, or a status ("too early" before two records or t_train, "diverged" after a
            non-finite value).

        Raises
        ------
        DomainError
            If `at_step` is not the last step given.
        """
        if at_step is not None and (self._last_step is None or float(at_step) != self._last_step):
            raise DomainError(f"at_step must be the monitor's last step {self._last_step} (got {at_step!r}): it "
                              "keeps no raw records; forecast an earlier step from the log with forecast()")
        tau = 0.0 if self._last_step is None else self._last_step
        hor, hsrc, reached = horizon_of(tau, self.horizon, None)
        base = {"train_level": self.train_level, "test_level": self.test_level, "source": "Monitor"}
        if self._diverged is not None:
            return _no_forecast("diverged", f"a metric is not finite: {self._diverged[1]}", tau, hor, hsrc,
                                p_grok=0.0, **base)
        if tau <= 0 or not (self._logged["train_acc"] or self._logged["test_acc"]):
            return _no_forecast("too early", "no record with an accuracy after step 0 yet", tau, hor, hsrc, **base)
        bins = self.bins()
        state = RunState(self._t_train, self._t_test, self._t_cls if self._logged["train_loss"] else None,
                         self._logged["train_acc"], self._logged["test_acc"], bins, _curves(bins), self._decay,
                         self.train_level, self.test_level, "Monitor")
        return forecast_from_state(state, tau, hor, hsrc, reached, self.model or _default(),
                                   decay_note=self._decay_note)

    def should_stop(self, min_probability: float = 0.05) -> bool:
        """True when the evidence that the run will not grok by the horizon is stable, or the run diverged.

        The rule (`grokclocks.forecast._stop.stop_rule`) fires when the latest streak of forecasts against the
        stated horizon holds at least 3 with P(grok by the horizon) below `min_probability`, spanning at least a
        factor 1.25 in steps; the streak ends at a forecast of P ≥ 2 × `min_probability` (hysteresis: no
        flip-flopping between neighbouring evaluations), at "grokked" or "too early", or when the horizon is a
        fallback or has been reached.  Without a `horizon` it never fires (except for a diverged run).

        Parameters
        ----------
        min_probability : float
            The probability below which to stop, in (0, 1); default 0.05.

        Returns
        -------
        bool
            Whether to stop.
        """
        pmin = float(V.in_open_interval(min_probability, "min_probability", 0.0, 1.0))
        return stop_rule(self._history, pmin)


_DEFAULT: list[ForecastModel] = []


def _default() -> ForecastModel:
    if not _DEFAULT:
        _DEFAULT.append(default_model())
    return _DEFAULT[0]


def _curves(bins: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, np.ndarray]:
    """The bins as curves for `Forecast.plot`: every bin's step, each series NaN at the others' bins."""
    if not bins:
        return {"steps": np.zeros(0)}
    steps = np.unique(np.concatenate([s for s, _ in bins.values()]))
    out = {"steps": steps}
    for k, (s, v) in bins.items():
        col = np.full(steps.size, np.nan)
        col[np.searchsorted(steps, s)] = v
        out[k] = col
    return out


def _level(x: Any, name: str) -> float:
    v = float(V.finite(x, name, scalar=True))
    if not 0.0 < v <= 1.0:
        raise DomainError(f"{name} must be in (0, 1] (got {v!r})")
    return v
