"""`Monitor`: a forecast kept up to date inside any training loop, and a stopping rule."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _validate as V
from .. import task as _task
from .._validate import DomainError
from ..logs import canonical_name
from ._api import ForecastModel, forecast
from ._result import Forecast

__all__ = ["Monitor"]

_SERIES = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")


def _number(value: Any, name: str) -> float:
    """A logged value as a float (a 0-d array or tensor too); a bool, string or array of several values is an error."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise DomainError(f"metric {name!r} must be a real number (got {value!r})")
    if hasattr(value, "item") and not isinstance(value, numbers.Number):
        try:
            value = value.item()  # numpy scalar / 0-d array / torch tensor
        except (ValueError, RuntimeError, TypeError):
            raise DomainError(f"metric {name!r} must be one number (got {type(value).__name__})") from None
    if not isinstance(value, numbers.Real):
        raise DomainError(f"metric {name!r} must be a real number (got {type(value).__name__})")
    return float(value)


class Monitor:
    """A forecast of t_test kept up to date from the metrics a training loop reports, with a stopping rule.

    Call `update(step, **metrics)` whenever the loop has numbers (train metrics every step, evaluation
    metrics every few hundred: each is recorded at its own steps).  Metric names are read as
    `grokclocks.logs.canonical_name` reads log columns ("acc", "train_accuracy", "val/acc", "eval_loss",
    "weight_norm", ...); names it cannot place are ignored and listed in `ignored`.

    Parameters
    ----------
    horizon : float, optional
        The step by which P(grok) is given (e.g. the planned number of steps), > 0; default: 10 × the
        current step.
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
        and otherwise every `every` updates (≥ 1; default 50); in between, `update` returns the last
        forecast.
    columns : mapping of str to str, optional
        Metric name to series ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm"),
        overriding the name matching.

    Attributes
    ----------
    latest : Forecast or None
        The last forecast (None before the first update).
    ignored : set of str
        Metric names that were not read as any series.

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
        """The step by which P(grok) is given; None: 10 × the current step."""
        self.train_level = _level(train_level, "train_level")
        """Train-accuracy level of t_train."""
        self.test_level = _level(test_level, "test_level")
        """Test-accuracy level of t_test."""
        self._rates = (lr, weight_decay, optimizer)
        if model is not None and not isinstance(model, ForecastModel):
            raise DomainError(f"model must be a ForecastModel (got {type(model).__name__})")
        self.model = model
        """The calibrated model (None: the shipped one)."""
        self.every = V.integer_at_least(every, "every", 1)
        """Updates between two forecasts when no evaluation metric arrives."""
        self.columns = dict(columns or {})
        """Metric name to series, overriding the name matching."""
        bad = {k: v for k, v in self.columns.items() if v not in _SERIES}
        if bad:
            raise DomainError(f"columns must map metric names to one of {_SERIES} (got {bad})")
        self._steps: list[float] = []
        self._values: dict[str, list[float]] = {k: [] for k in _SERIES}
        self.latest: Forecast | None = None
        """The last forecast (None before the first update)."""
        self.ignored: set[str] = set()
        """Metric names that were not read as any series."""
        self._diverged: tuple[float, str] | None = None
        self._since = 0

    def _series(self, name: str) -> str | None:
        if name in self.columns:
            return self.columns[name]
        if name in _SERIES:
            return name
        return canonical_name(name) if canonical_name(name) in _SERIES else None

    def update(self, step: float, **metrics: Any) -> Forecast:
        """Record the metrics of one step and return the current forecast.

        Parameters
        ----------
        step : float
            The training step (or epoch) of these metrics, finite, ≥ the last step given (an equal step adds
            metrics to that record).
        **metrics : float
            The metrics, by name (e.g. train_acc=1.0, test_acc=0.31, train_loss=0.002, weight_norm=41.2);
            0-d arrays and tensors are read with `.item()`.  A non-finite value marks the run as diverged.

        Returns
        -------
        Forecast
            The current forecast (recomputed as `every` says).

        Raises
        ------
        DomainError
            A step before the last one, a step that is not finite, or a metric that is not one real number.
        """
        s = float(V.finite(step, "step", scalar=True))
        if self._steps and s < self._steps[-1]:
            raise DomainError(f"step must be >= the last step {self._steps[-1]:g} (got {s:g})")
        if not self._steps or s > self._steps[-1]:
            self._steps.append(s)
            for v in self._values.values():
                v.append(math.nan)
        evaluation = False
        for name, value in metrics.items():
            series = self._series(name)
            if series is None:
                self.ignored.add(name)
                continue
            x = _number(value, name)
            if not math.isfinite(x) and self._diverged is None:
                self._diverged = (s, f"{name} = {x} at step {s:g}")
            self._values[series][-1] = x if math.isfinite(x) else math.nan
            evaluation |= series in ("test_acc", "test_loss")
        self._since += 1
        if self.latest is None or evaluation or self._since >= self.every or self._diverged is not None:
            self.latest = self.forecast()
            self._since = 0
        return self.latest

    def records(self) -> dict[str, np.ndarray]:
        """The records so far: "steps" and each series logged at least once, float64 arrays (NaN = not logged)."""
        out = {"steps": np.asarray(self._steps, dtype=np.float64)}
        for k, v in self._values.items():
            a = np.asarray(v, dtype=np.float64)
            if a.size and not np.isnan(a).all():
                out[k] = a
        return out

    def forecast(self, at_step: float | None = None) -> Forecast:
        """The forecast from the records so far (up to `at_step`, default the last step).

        Parameters
        ----------
        at_step : float, optional
            The issue step; default the last recorded step.

        Returns
        -------
        Forecast
            The forecast, or a status ("too early" before two records, "diverged" after a non-finite value).
        """
        tau = self._steps[-1] if at_step is None and self._steps else (at_step if at_step is not None else 0.0)
        hor = self.horizon if self.horizon is not None and self.horizon > tau else None
        if self._diverged is not None and (at_step is None or self._diverged[0] <= at_step):
            return Forecast("diverged", f"a metric is not finite: {self._diverged[1]}", float(tau),
                            math.nan if hor is None else hor, "given" if hor else "n/a", p_grok=0.0,
                            train_level=self.train_level, test_level=self.test_level, source="Monitor")
        rec = self.records()
        if rec["steps"].size < 2 or not ({"train_acc", "test_acc"} & set(rec)):
            return Forecast("too early", "fewer than two records with an accuracy", float(tau),
                            math.nan if hor is None else hor, "given" if hor else "n/a",
                            train_level=self.train_level, test_level=self.test_level, source="Monitor")
        return forecast(None, at_step, hor, train_level=self.train_level, test_level=self.test_level,
                        lr=self._rates[0], weight_decay=self._rates[1], optimizer=self._rates[2], model=self.model,
                        **rec)

    def should_stop(self, min_probability: float = 0.05) -> bool:
        """True when the last forecast gives P(grok by the horizon) below `min_probability`, or the run diverged.

        "too early", "grokked" and "cannot tell" never ask to stop: the rule is for giving up on a run that
        fits its training set and is unlikely to grok in time.

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
        f = self.latest
        if f is None:
            return False
        if f.status == "diverged":
            return True
        return f.status == "forecast" and f.p_grok < pmin


def _level(x: Any, name: str) -> float:
    v = float(V.as_float_array(x, name, scalar=True))
    if not 0.0 < v <= 1.0:
        raise DomainError(f"{name} must be in (0, 1] (got {v!r})")
    return v
