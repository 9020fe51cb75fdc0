r"""The signals a forecast reads off a run up to the issue step: robust window statistics on log-time bins.

Every signal is dimensionless (times are divided by the issue step τ or by t_train), so that runs with other
learning rates, moduli, models or training codes share one model.

**Bins.** Each series is first reduced to log-time bins: a record at step s > 0 falls in bin
⌊16 log₂ s⌋ (16 bins per doubling of time), and a bin holds the mean step and the mean value of its records.
A log written every step and one written every 100 steps give the same handful of bins per doubling, so a
signal costs the same at step 10⁶ as at step 10³ (a live `Monitor` keeps the bins and nothing else), and a
single record (a loss spike) moves one bin, not the statistics below.

**Windows.** With lo = max(τ/2, t_train), the *trend window* is the bins whose mean step lies in [lo, τ]
(the last doubling of time since t_train) and the *now window* those in [0.8 τ, τ].  A slope is the
Theil–Sen estimate (the median of the pairwise slopes) against log t over the trend window, a "now" value
is the median of the now window's bins, a peak is the largest 3-bin running median since t_train: a spike
that moves fewer than a third of the bins does not move a slope, and a one-bin spike does not move a
current value or a peak.  A signal that cannot be read (its series is not logged, or fewer than three bins
fall in the trend window) is NaN; the forecast then uses a model without it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np

__all__ = ["BINS_PER_DOUBLING", "FEATURES", "GROUPS", "LogBins", "SignalGroup", "bin_series", "read_signals",
           "signals_from_bins"]

BINS_PER_DOUBLING = 16
"""Log-time bins per doubling of the step (a record at step s > 0 falls in bin ⌊16 log₂ s⌋)."""

_ERR_FLOOR = 1e-4  # floor of the test error 1 - acc (one error in 10^4 test pairs)
_LOSS_FLOOR = 1e-12
_MIN_BINS = 3
_ETA_CAP = 5.0  # acc_eta is log((t_acc - τ)/τ) capped at ±5: "the trend reaches the level in e^±5 τ or beyond"


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
    SignalGroup("norm", "weight-norm trend: -d log |θ| / d log t and log(|θ| / its peak since t_train); "
                "negative rates are a growing norm",
                ("norm_rate", "norm_drop"), ("clocks:appF2-wd-rate",), "weight norm"),
    SignalGroup("decay", "decoupled weight decay's budget: log(lr · wd · τ), the log of the factor e^(lr wd τ) by "
                "which AdamW's decay alone shrinks the weights by step τ",
                ("decay_budget",), ("clocks:appF2-wd-rate",), "lr and weight decay (AdamW or SGD)"),
)}
"""The signal groups by name, each one theory's timescale (its features, spec IDs and the series it needs)."""

FEATURES: tuple[str, ...] = tuple(f for g in GROUPS.values() for f in g.features)
"""Every feature `read_signals` returns, in the order of `GROUPS`."""


# ------------------------------------------------------------------------------------------------ bins


def _bin_of(step: float) -> int:
    return math.floor(BINS_PER_DOUBLING * math.log2(step))


def bin_series(steps: np.ndarray, values: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A series' log-time bins: (mean step, mean value) of the logged records (not NaN) at steps > 0.

    Parameters
    ----------
    steps : numpy.ndarray
        Record steps, 1-D, non-decreasing.
    values : numpy.ndarray or None
        One value per record, NaN where not logged; None for a series not logged at all.

    Returns
    -------
    tuple of numpy.ndarray
        Mean step and mean value of each non-empty bin, in step order (empty arrays when nothing is logged);
        the same as `LogBins` filled with these records, up to rounding (the sums are ordered differently).
    """
    if values is None:
        return np.zeros(0), np.zeros(0)
    ok = ~np.isnan(values) & (steps > 0)
    s, v = steps[ok], values[ok]
    if s.size == 0:
        return np.zeros(0), np.zeros(0)
    b = np.floor(BINS_PER_DOUBLING * np.log2(s)).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    counts = np.diff(np.r_[starts, s.size]).astype(np.float64)
    return np.add.reduceat(s, starts) / counts, np.add.reduceat(v, starts) / counts


class LogBins:
    """The log-time bins of one series, filled one record at a time (what a live `Monitor` keeps).

    O(1) per record and O(16 log₂ n) memory for n records; `arrays()` gives the same (mean step, mean value)
    as `bin_series` on the records added so far.
    """

    __slots__ = ("_bin", "_count", "_step_sum", "_value_sum")

    def __init__(self) -> None:
        self._bin: list[int] = []
        self._count: list[int] = []
        self._step_sum: list[float] = []
        self._value_sum: list[float] = []

    def add(self, step: float, value: float) -> None:
        """Add one record (step > 0, a finite value, steps non-decreasing); steps ≤ 0 are not binned."""
        if step <= 0:
            return
        b = _bin_of(step)
        if self._bin and self._bin[-1] == b:
            self._count[-1] += 1
            self._step_sum[-1] += step
            self._value_sum[-1] += value
        else:
            self._bin.append(b)
            self._count.append(1)
            self._step_sum.append(step)
            self._value_sum.append(value)

    def __len__(self) -> int:
        return len(self._bin)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(mean step, mean value) of every bin, float64 arrays."""
        n = np.asarray(self._count, dtype=np.float64)
        return np.asarray(self._step_sum) / n if n.size else np.zeros(0), \
            np.asarray(self._value_sum) / n if n.size else np.zeros(0)


# ------------------------------------------------------------------------------------------------ statistics


def _theil_sen(x: np.ndarray, y: np.ndarray) -> float:
    """Median of the pairwise slopes (y_j - y_i)/(x_j - x_i), i < j (NaN with fewer than three points)."""
    if x.size < _MIN_BINS:
        return math.nan
    i, j = np.triu_indices(x.size, k=1)
    dx = x[j] - x[i]
    ok = dx > 0
    if not ok.any():
        return math.nan
    return float(np.median((y[j] - y[i])[ok] / dx[ok]))


def _robust_peak(v: np.ndarray) -> float:
    """The largest 3-bin running median (a single-bin spike is not a peak); the median itself below 3 bins."""
    if v.size < 3:
        return float(np.median(v))
    w = np.stack([v[:-2], v[1:-1], v[2:]])
    return float(np.max(np.median(w, axis=0)))


def _log_expm1(x: float) -> float:
    """log(e^x − 1) without overflow, for x > 0."""
    if x > 30.0:
        return x
    return math.log(math.expm1(x))


def signals_from_bins(bins: Mapping[str, tuple[np.ndarray, np.ndarray]], *, at_step: float, t_train: float,
                      test_level: float, decay_rate: float | None = None) -> dict[str, float]:
    """The model's signals at τ = `at_step` from each series' bins (of the records with step ≤ τ only).

    Parameters
    ----------
    bins : mapping of str to (numpy.ndarray, numpy.ndarray)
        Series name ("test_acc", "test_loss", "train_loss", "weight_norm") to its bins' (mean step, mean
        value), as `bin_series` or `LogBins.arrays` give them; a series absent or empty is not logged.
    at_step : float
        The issue step τ > 0, at or after `t_train`.
    t_train : float
        First record at which the train accuracy reached its level (the accuracy clock), > 0 and ≤ τ.
    test_level : float
        Test-accuracy level of t_test, in (0, 1].
    decay_rate : float or None
        lr · wd, the per-step shrink rate of decoupled weight decay (AdamW) or of SGD's weight decay; None
        when unknown, 0 without weight decay.

    Returns
    -------
    dict of str to float
        One value per name of `FEATURES`; NaN where the signal cannot be read.
    """
    tau = float(at_step)
    out = {f: math.nan for f in FEATURES}
    out["elapsed"] = math.log(tau / t_train)
    lo = max(tau / 2.0, t_train)

    def window(name: str, start: float) -> tuple[np.ndarray, np.ndarray] | None:
        got = bins.get(name)
        if got is None or got[0].size == 0:
            return None
        s, v = got
        sel = (s >= start) & (s <= tau)
        return s[sel], v[sel]

    err_level = max(1.0 - test_level, _ERR_FLOOR)
    w, now = window("test_acc", lo), window("test_acc", 0.8 * tau)
    if w is not None and now is not None and now[1].size:
        err_now = max(1.0 - float(np.median(now[1])), _ERR_FLOOR)
        g = math.log(err_now / err_level)
        out["test_err"] = g
        s = _theil_sen(np.log(w[0]), np.log(np.maximum(1.0 - w[1], _ERR_FLOOR)))
        out["test_err_slope"] = s
        if math.isfinite(s):
            # log((t_acc - τ)/τ) of the step t_acc = τ exp(g / -s) at which the trend reaches the level
            eta = _log_expm1(g / -s) if s < 0 and g > 0 else (_ETA_CAP if g > 0 else -_ETA_CAP)
            out["acc_eta"] = min(max(eta, -_ETA_CAP), _ETA_CAP)
    for name, slope_f, level_f in (("test_loss", "test_loss_slope", "test_loss_drop"),
                                   ("weight_norm", "norm_rate", "norm_drop"),
                                   ("train_loss", "train_loss_slope", "train_loss")):
        w, now = window(name, lo), window(name, 0.8 * tau)
        if w is None or w[1].size < _MIN_BINS or not now[1].size:
            continue
        logv = np.log(np.maximum(w[1], _LOSS_FLOOR))
        slope = _theil_sen(np.log(w[0]), logv)
        current = max(float(np.median(now[1])), _LOSS_FLOOR)
        if name == "weight_norm":
            if not np.all(w[1] > 0):
                continue
            out[slope_f] = -slope
        else:
            out[slope_f] = slope
        if name == "train_loss":
            out[level_f] = math.log10(current)
        else:
            since = window(name, t_train)
            out[level_f] = math.log(current / max(_robust_peak(since[1]), _LOSS_FLOOR))
    if decay_rate is not None:
        out["decay_budget"] = math.log(max(decay_rate * tau, 1e-4))
    return out


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
        lr · wd of decoupled (AdamW) or SGD weight decay; None when unknown.

    Returns
    -------
    dict of str to float
        One value per name of `FEATURES`; NaN where the signal cannot be read.
    """
    keep = steps <= float(at_step)
    t = steps[keep]
    bins = {name: bin_series(t, None if v is None else v[keep])
            for name, v in (("test_acc", test_acc), ("test_loss", test_loss), ("train_loss", train_loss),
                            ("weight_norm", weight_norm))}
    return signals_from_bins(bins, at_step=at_step, t_train=t_train, test_level=test_level, decay_rate=decay_rate)
