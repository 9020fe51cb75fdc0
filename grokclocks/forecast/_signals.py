"""The signals a forecast reads off a run up to the issue step: one pure function per theory's timescale.

Every signal is dimensionless (times are divided by the issue step τ or by t_train), so that runs with
other learning rates, moduli or models share one model.  A slope is the least-squares slope against log t
over the last doubling of time, the records in [max(τ/2, t_train), τ]; a "current" value is the mean over
the records in [0.8 τ, τ].  A signal that cannot be read (its series is not logged, or fewer than three
records fall in the window) is NaN, and the forecast then uses a model without it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = ["FEATURES", "GROUPS", "SignalGroup", "read_signals"]

_ERR_FLOOR = 1e-4  # floor of the test error 1 - acc (one error in 10^4 test pairs)
_LOSS_FLOOR = 1e-12
_MIN_RECORDS = 3


@dataclasses.dataclass(frozen=True)
class SignalGroup:
    """One theory's signals: the features it contributes to the model, its spec IDs and what it measures.

    `GROUPS` holds the groups by name; the calibration study keeps or drops a group as a whole.
    """

    name: str
    """Short name of the group, its key in `GROUPS`: "clock", "test_acc", "test_loss", "train_loss", "norm" or
    "decay"."""
    title: str
    """What it measures, in words."""
    features: tuple[str, ...]
    """The model features it contributes (names among `grokclocks.forecast.FEATURES`)."""
    spec_ids: tuple[str, ...]
    """Spec IDs of the results it leans on."""
    needs: str
    """The logged series it needs, in words (e.g. "train accuracy")."""


GROUPS: dict[str, SignalGroup] = {g.name: g for g in (
    SignalGroup("clock", "accuracy clock: time since the train accuracy reached its level, log(τ / t_train)",
                ("elapsed",), ("clocks:appF4-acc-clock", "kramers:milestones"), "train accuracy"),
    SignalGroup("test_acc", "test-accuracy trend: the test error left, log((1 - acc) / (1 - level)), its slope "
                "d log(1 - acc) / d log t, and the step at which that slope would reach the level",
                ("test_err", "test_err_slope", "acc_eta"), ("kramers:milestones",), "test accuracy"),
    SignalGroup("test_loss", "test-loss trend: d log L_test / d log t and log(L_test / its peak since t_train)",
                ("test_loss_slope", "test_loss_drop"), ("levi:grok-def",), "test loss"),
    SignalGroup("train_loss", "classifier clock and train-loss tail: log10 L_train and d log L_train / d log t",
                ("train_loss", "train_loss_slope"), ("clocks:appF4-cls-estimator", "clocks:thm3.5"),
                "train loss"),
    SignalGroup("norm", "weight-norm decay: -d log |θ| / d log t and log(|θ| / its peak since t_train)",
                ("norm_rate", "norm_drop"), ("clocks:appF2-wd-rate",), "weight norm"),
    SignalGroup("decay", "decoupled weight decay's budget: log(lr · wd · τ), the log of the factor e^(lr wd τ) by "
                "which AdamW's decay alone shrinks the weights by step τ",
                ("decay_budget",), ("clocks:appF2-wd-rate",), "lr and weight decay (AdamW or SGD)"),
)}

"""The signal groups by name, each one theory's timescale (its features, spec IDs and the series it needs)."""

FEATURES: tuple[str, ...] = tuple(f for g in GROUPS.values() for f in g.features)
"""Every feature `read_signals` returns, in the order of `GROUPS`."""


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of y on x (NaN with fewer than three points or no spread in x)."""
    if x.size < _MIN_RECORDS:
        return math.nan
    xc = x - x.mean()
    den = float(xc @ xc)
    if den <= 0.0:
        return math.nan
    return float(xc @ (y - y.mean())) / den


def _logged(steps: np.ndarray, values: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    if values is None:
        return None
    ok = ~np.isnan(values)
    if not ok.any():
        return None
    return steps[ok], values[ok]


def read_signals(steps: np.ndarray, *, at_step: float, t_train: float, test_level: float,
                 train_acc: np.ndarray | None = None, test_acc: np.ndarray | None = None,
                 train_loss: np.ndarray | None = None, test_loss: np.ndarray | None = None,
                 weight_norm: np.ndarray | None = None, decay_rate: float | None = None) -> dict[str, float]:
    """The model's signals of one run at the issue step τ = `at_step`, from the records with step ≤ τ only.

    Parameters
    ----------
    steps : numpy.ndarray
        Strictly increasing record steps of the run, 1-D float64; records after `at_step` are ignored.
    at_step : float
        The issue step τ > 0, at or after `t_train`.
    t_train : float
        First record at which the train accuracy reached its level (the accuracy clock), > 0 and ≤ τ.
    test_level : float
        Test-accuracy level of t_test, in (0, 1].
    train_acc : numpy.ndarray or None
        Train accuracy at each record (NaN where not logged); not read (t_train carries it).
    test_acc : numpy.ndarray or None
        Test accuracy at each record, in [0, 1], NaN where not logged.
    train_loss : numpy.ndarray or None
        Training loss at each record, ≥ 0, NaN where not logged.
    test_loss : numpy.ndarray or None
        Test loss at each record, ≥ 0, NaN where not logged.
    weight_norm : numpy.ndarray or None
        Global parameter norm at each record, ≥ 0, NaN where not logged.
    decay_rate : float or None
        lr · wd, the per-step shrink rate of decoupled weight decay (AdamW) or of SGD's weight decay; None
        when unknown, 0 without weight decay.

    Returns
    -------
    dict of str to float
        One value per name of `FEATURES`; NaN where the signal cannot be read.
    """
    tau = float(at_step)
    keep = steps <= tau
    t = steps[keep]
    out = {f: math.nan for f in FEATURES}
    out["elapsed"] = math.log(tau / t_train)
    lo = max(tau / 2.0, t_train)

    def window(values: np.ndarray | None, start: float) -> tuple[np.ndarray, np.ndarray] | None:
        got = _logged(t, None if values is None else values[keep])
        if got is None:
            return None
        s, v = got
        sel = (s >= start) & (s > 0)
        return s[sel], v[sel]

    err_level = max(1.0 - test_level, _ERR_FLOOR)
    w = window(test_acc, lo)
    now = window(test_acc, 0.8 * tau)
    if w is not None and now is not None and now[1].size:
        err_now = max(1.0 - float(np.mean(now[1])), _ERR_FLOOR)
        g = math.log(err_now / err_level)
        out["test_err"] = g
        s = _slope(np.log(w[0]), np.log(np.maximum(1.0 - w[1], _ERR_FLOOR)))
        out["test_err_slope"] = s
        if math.isfinite(s):
            # log((t_acc - τ)/τ) of the step t_acc = τ exp(g / -s) at which the trend reaches the level
            out["acc_eta"] = _log_expm1(g / -s) if s < 0 and g > 0 else (5.0 if g > 0 else -5.0)
            out["acc_eta"] = float(np.clip(out["acc_eta"], -5.0, 5.0))
    w = window(test_loss, lo)
    if w is not None and w[1].size >= _MIN_RECORDS:
        out["test_loss_slope"] = _slope(np.log(w[0]), np.log(np.maximum(w[1], _LOSS_FLOOR)))
        since = window(test_loss, t_train)
        peak = float(np.max(since[1]))
        out["test_loss_drop"] = math.log(max(float(w[1][-1]), _LOSS_FLOOR) / max(peak, _LOSS_FLOOR))
    w = window(train_loss, lo)
    if w is not None and w[1].size >= _MIN_RECORDS:
        out["train_loss"] = math.log10(max(float(w[1][-1]), _LOSS_FLOOR))
        out["train_loss_slope"] = _slope(np.log(w[0]), np.log(np.maximum(w[1], _LOSS_FLOOR)))
    w = window(weight_norm, lo)
    if w is not None and w[1].size >= _MIN_RECORDS and np.all(w[1] > 0):
        out["norm_rate"] = -_slope(np.log(w[0]), np.log(w[1]))
        since = window(weight_norm, t_train)
        out["norm_drop"] = math.log(float(w[1][-1]) / float(np.max(since[1])))
    if decay_rate is not None:
        out["decay_budget"] = math.log(max(decay_rate * tau, 1e-4))
    return out


def _log_expm1(x: float) -> float:
    """log(e^x − 1) without overflow, for x > 0."""
    if x > 30.0:
        return x
    return math.log(math.expm1(x))
