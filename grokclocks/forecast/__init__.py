"""When will this run grok? A forecast of t_test, honest about its uncertainty, and how good it is.

A run that fits its training set and sits below the test level raises one question: will it grok, and when,
or should it be stopped?  `forecast` answers it from the records logged up to a step (any form
`grokclocks.compare.compare_run` reads; nothing after that step is read or checked): a point forecast of t_test
(the step at which the test accuracy reaches its level), nominal 50 % and 90 % intervals, P(grok by the
horizon), the signals it read, each with its spec ID, its share of the forecast and whether it lies inside the
range the model was fitted on, and a status with its reason when there is nothing to forecast ("too early",
"grokked", "diverged", "cannot tell").

The signals are the theories' timescales read off the run with robust window statistics on log-time bins: the
accuracy clock (spec `clocks`), the test-accuracy and test-loss trends, the train-loss tail, the weight-norm
trend under weight decay and decoupled weight decay's rate lr × wd (`clocks:appF2-wd-rate`), the eigengap
lock-in detector (`repulsion`, reported when a gap or per-step weights are logged), the escape-time law for the
shape of the interval (`kramers:eq15`), and the linear estimator's closed form t*_gen for a run of Levi et
al.'s model (`levi:tstar`).  A censored regression of the remaining time, fitted by the calibration study
(benchmarks/forecast_calibration.py) on runs of two training codes, turns them into the forecast: one profile
per set of signal groups, down to the clock alone (the wide prior a forecast falls back on when a signal lies
outside its fitting range: never a clipped value), each recalibrated on forecasts for configurations its fit
had not seen.

Live: `Monitor` (`update(step, **metrics)` in any training loop, checked before anything is stored, O(1) per
update; `should_stop(min_probability)`, a rule with hysteresis that never acts on a fallback horizon) and thin
adapters for PyTorch Lightning (`lightning_callback`) and Hugging Face (`huggingface_callback`); the engine's
`train_modular(..., progress=True)` shows the current forecast in its progress bar.

Pure numpy/scipy: no JAX at import.  One concept per file, all re-exported here: `_signals` (log-time bins and
the signals), `_model` (the censored regression and its recalibration map), `_fit` (fitting it on runs),
`_predict` (from a run's state to a forecast: the one computation `forecast` and `Monitor` share), `_result`
(Forecast, Signal), `_api` (forecast: reading the run, the horizon), `_monitor` (Monitor), `_stop` (the stop
rule), `_adapters` (Lightning, Hugging Face), `_progress` (the engine's bar).
"""

from __future__ import annotations

from .._facade import set_home
from ._adapters import (
    HuggingFaceHooks,
    LightningHooks,
    huggingface_callback,
    lightning_callback,
)
from ._api import ForecastModel, default_model, forecast, forecast_runs
from ._fit import CORE_GROUPS, RunCurves, fit_model
from ._model import FAMILIES, AFTModel
from ._monitor import Monitor
from ._progress import progress_line
from ._result import STATUSES, Forecast, Signal
from ._signals import FEATURES, GROUPS, SignalGroup

__all__ = [
    "CORE_GROUPS",
    "FAMILIES",
    "FEATURES",
    "GROUPS",
    "STATUSES",
    "AFTModel",
    "Forecast",
    "ForecastModel",
    "HuggingFaceHooks",
    "LightningHooks",
    "Monitor",
    "RunCurves",
    "Signal",
    "SignalGroup",
    "default_model",
    "fit_model",
    "forecast",
    "forecast_runs",
    "huggingface_callback",
    "lightning_callback",
    "progress_line",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
