"""Thin adapters: a PyTorch Lightning `Callback` and a Hugging Face `TrainerCallback` around a `Monitor`.

The hooks are plain classes (`LightningHooks`, `HuggingFaceHooks`) that read the trainer's attributes and
need no framework; `lightning_callback` and `huggingface_callback` give them the framework's base class,
importing the framework only then (a missing framework is a one-line `ImportError` naming it).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

from .. import _validate as V
from ._monitor import Monitor
from ._result import Forecast

__all__ = ["HuggingFaceHooks", "LightningHooks", "huggingface_callback", "lightning_callback"]


class _Hooks:
    """What both adapters share: the monitor, the stopping rule and the metrics of one report."""

    def __init__(self, monitor: Monitor | None = None, *, stop: bool = False, min_probability: float = 0.05,
                 **monitor_kwargs: Any) -> None:
        if monitor is not None and monitor_kwargs:
            raise V.DomainError(f"give a monitor or its arguments, not both (got {sorted(monitor_kwargs)})")
        if monitor is not None and not isinstance(monitor, Monitor):
            raise V.DomainError(f"monitor must be a grokclocks.forecast.Monitor (got {type(monitor).__name__})")
        self.monitor = monitor if monitor is not None else Monitor(**monitor_kwargs)
        self.stop = V.flag(stop, "stop")
        self.min_probability = float(V.in_open_interval(min_probability, "min_probability", 0.0, 1.0))
        self._horizon_set = monitor is not None and monitor.horizon is not None or "horizon" in monitor_kwargs

    def _planned(self, steps: Any) -> None:
        """Take the trainer's planned number of steps as the horizon unless one was given."""
        if self._horizon_set:
            return
        try:
            s = float(steps)
        except (TypeError, ValueError):
            return
        if math.isfinite(s) and s > 0:
            self.monitor.horizon = s
            self._horizon_set = True

    def _report(self, step: Any, metrics: Mapping[str, Any]) -> Forecast | None:
        numbers = {}
        for k, v in metrics.items():
            try:
                numbers[str(k)] = float(v.item() if hasattr(v, "item") else v)
            except (TypeError, ValueError, RuntimeError):
                continue  # strings, lists and tensors of several values are not metrics of this run
        if not numbers:
            return self.monitor.latest
        try:
            return self.monitor.update(float(step), **numbers)
        except V.DomainError as exc:  # a rejected report never stops training: the monitor is unchanged, say why
            warnings.warn(f"grokclocks forecast: a report was not recorded ({exc})", RuntimeWarning, stacklevel=3)
            return self.monitor.latest

    @property
    def forecast(self) -> Forecast | None:
        """The last forecast (None before the first report)."""
        return self.monitor.latest

    def should_stop(self) -> bool:
        """The monitor's stopping rule at this adapter's `min_probability`."""
        return self.monitor.should_stop(self.min_probability)


class LightningHooks(_Hooks):
    """The hooks of the Lightning adapter, without the framework's base class (`lightning_callback` adds it).

    After every validation run it reads `trainer.callback_metrics` at `trainer.global_step` into the monitor,
    and after every training epoch the train metrics among them; the horizon defaults to `trainer.max_steps`
    when that is set; with `stop=True` it sets `trainer.should_stop` when the monitor says so.

    Parameters
    ----------
    monitor : Monitor, optional
        The monitor to feed; default: a new one built from `monitor_kwargs`.
    stop : bool
        Stop training when P(grok by the horizon) < `min_probability` or the run diverged (default False:
        only forecast).
    min_probability : float
        The stopping threshold, in (0, 1); default 0.05.
    **monitor_kwargs : any
        Keyword arguments of `Monitor` (horizon, train_level, test_level, lr, weight_decay, optimizer, model,
        every, columns) for the new monitor when `monitor` is `None`; giving both is a `DomainError`.

    Raises
    ------
    DomainError
        If `monitor` is not a `Monitor` or comes with `monitor_kwargs`, `stop` is not a bool,
        `min_probability` is not in (0, 1), or an argument of the new monitor is outside its domain.
    """

    def _update(self, trainer: Any, evaluation: bool = True) -> None:
        self._planned(getattr(trainer, "max_steps", None))
        metrics = getattr(trainer, "callback_metrics", None) or {}
        if not evaluation:  # callback_metrics still holds the last validation's metrics: not a new evaluation
            metrics = {k: v for k, v in metrics.items()
                       if self.monitor._series(str(k)) not in ("test_acc", "test_loss")}
        self._report(getattr(trainer, "global_step", 0), metrics)
        if self.stop and self.should_stop():
            trainer.should_stop = True

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        """Lightning hook: read the metrics after a validation run.

        Parameters
        ----------
        trainer : lightning.pytorch.Trainer
            The trainer (its global_step, callback_metrics, max_steps and should_stop are used).
        pl_module : lightning.pytorch.LightningModule
            The module being trained (not read).
        """
        self._update(trainer)

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        """Lightning hook: read the train metrics at the end of a training epoch (the validation metrics
        `callback_metrics` still holds are the last validation's, read by `on_validation_end`).

        Parameters
        ----------
        trainer : lightning.pytorch.Trainer
            The trainer (its global_step, callback_metrics, max_steps and should_stop are used).
        pl_module : lightning.pytorch.LightningModule
            The module being trained (not read).
        """
        self._update(trainer, evaluation=False)


class HuggingFaceHooks(_Hooks):
    """The hooks of the Hugging Face adapter, without the framework's base class (`huggingface_callback` adds it).

    On every log event it reads the `logs` dict ("loss", "eval_loss", "eval_accuracy", ...) at
    `state.global_step` into the monitor; the horizon defaults to `state.max_steps`; with `stop=True` it sets
    `control.should_training_stop` when the monitor says so.

    Parameters
    ----------
    monitor : Monitor, optional
        The monitor to feed; default: a new one built from `monitor_kwargs`.
    stop : bool
        Stop training when P(grok by the horizon) < `min_probability` or the run diverged (default False).
    min_probability : float
        The stopping threshold, in (0, 1); default 0.05.
    **monitor_kwargs : any
        Keyword arguments of `Monitor` (horizon, train_level, test_level, lr, weight_decay, optimizer, model,
        every, columns) for the new monitor when `monitor` is `None`; giving both is a `DomainError`.

    Raises
    ------
    DomainError
        If `monitor` is not a `Monitor` or comes with `monitor_kwargs`, `stop` is not a bool,
        `min_probability` is not in (0, 1), or an argument of the new monitor is outside its domain.
    """

    def on_log(self, args: Any, state: Any, control: Any, logs: Mapping[str, Any] | None = None,
               **kwargs: Any) -> Any:
        """Hugging Face hook: read a log event's metrics.

        Parameters
        ----------
        args : transformers.TrainingArguments
            The training arguments (not read).
        state : transformers.TrainerState
            The trainer state (its global_step and max_steps are used).
        control : transformers.TrainerControl
            The control flags (should_training_stop is set when the stopping rule fires).
        logs : mapping, optional
            The logged metrics ("loss", "eval_loss", "eval_accuracy", ...); "epoch" is not a metric.
        **kwargs : any
            Further arguments of the framework (not read).

        Returns
        -------
        transformers.TrainerControl
            `control`.
        """
        self._planned(getattr(state, "max_steps", None))
        if logs:
            self._report(getattr(state, "global_step", 0), {k: v for k, v in logs.items() if k != "epoch"})
        if self.stop and self.should_stop():
            control.should_training_stop = True
        return control


def lightning_callback(monitor: Monitor | None = None, *, stop: bool = False, min_probability: float = 0.05,
                       **monitor_kwargs: Any) -> Any:
    """A PyTorch Lightning `Callback` that forecasts t_test during training (and optionally stops the run).

    Parameters
    ----------
    monitor : Monitor, optional
        The monitor to feed; default: a new one built from `monitor_kwargs`.
    stop : bool
        Stop training when P(grok by the horizon) < `min_probability` or the run diverged (default False).
    min_probability : float
        The stopping threshold, in (0, 1); default 0.05.
    **monitor_kwargs : any
        Keyword arguments of `Monitor` (horizon, train_level, test_level, lr, weight_decay, optimizer, model,
        every, columns) for the new monitor when `monitor` is `None`; giving both is a `DomainError`.

    Returns
    -------
    lightning.pytorch.callbacks.Callback
        A callback with the hooks of `LightningHooks`; its `forecast` is the last forecast.

    Raises
    ------
    ImportError
        If neither lightning nor pytorch_lightning is installed (one line naming it).
    DomainError
        If `monitor` is not a `Monitor` or comes with `monitor_kwargs`, `stop` is not a bool,
        `min_probability` is not in (0, 1), or an argument of the new monitor is outside its domain.
    """
    try:
        from lightning.pytorch.callbacks import Callback
    except ImportError:
        try:
            from pytorch_lightning.callbacks import Callback
        except ImportError:
            raise ImportError("grokclocks.forecast.lightning_callback needs PyTorch Lightning: "
                              "pip install lightning") from None
    cls = type("GrokForecastCallback", (LightningHooks, Callback), {"__module__": __name__})
    return cls(monitor, stop=stop, min_probability=min_probability, **monitor_kwargs)


def huggingface_callback(monitor: Monitor | None = None, *, stop: bool = False, min_probability: float = 0.05,
                         **monitor_kwargs: Any) -> Any:
    """A Hugging Face `TrainerCallback` that forecasts t_test during training (and optionally stops the run).

    Parameters
    ----------
    monitor : Monitor, optional
        The monitor to feed; default: a new one built from `monitor_kwargs`.
    stop : bool
        Stop training when P(grok by the horizon) < `min_probability` or the run diverged (default False).
    min_probability : float
        The stopping threshold, in (0, 1); default 0.05.
    **monitor_kwargs : any
        Keyword arguments of `Monitor` (horizon, train_level, test_level, lr, weight_decay, optimizer, model,
        every, columns) for the new monitor when `monitor` is `None`; giving both is a `DomainError`.

    Returns
    -------
    transformers.TrainerCallback
        A callback with the hooks of `HuggingFaceHooks`; its `forecast` is the last forecast.

    Raises
    ------
    ImportError
        If transformers is not installed (one line naming it).
    DomainError
        If `monitor` is not a `Monitor` or comes with `monitor_kwargs`, `stop` is not a bool,
        `min_probability` is not in (0, 1), or an argument of the new monitor is outside its domain.
    """
    try:
        from transformers import TrainerCallback
    except ImportError:
        raise ImportError("grokclocks.forecast.huggingface_callback needs Hugging Face transformers: "
                          "pip install transformers") from None
    cls = type("GrokForecastCallback", (HuggingFaceHooks, TrainerCallback), {"__module__": __name__})
    return cls(monitor, stop=stop, min_probability=min_probability, **monitor_kwargs)
