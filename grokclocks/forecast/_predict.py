"""From a run's state at the issue step to a `Forecast`: the one computation `forecast` and `Monitor` share.

A `RunState` holds what a forecast may read at τ: the clocks (t_train, t_test, t_cls from the raw records up
to τ) and each series' log-time bins (`grokclocks.forecast._signals`).  `forecast` builds it from a log in one
pass; `Monitor` keeps it up to date one record at a time.  `forecast_from_state` then reads the signals,
picks the largest model profile whose signals are all readable and inside their fitting range (a signal
outside it is named and left out, never clipped; the clock alone is the wide prior; an elapsed time outside
every profile's range is "cannot tell"), and returns the calibrated distribution of t_test.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import _safe_io
from .. import linear as _linear
from .. import _validate as V
from .._validate import DomainError
from ._model import AFTModel, family_ppf
from ._result import Forecast, Signal
from ._signals import GROUPS, signals_from_bins

__all__ = ["ForecastModel", "RunState", "default_model", "forecast_from_state"]

_ESCAPE_ID = "kramers:eq15"
EPS_CLS = 1e-3  # loss level of the classifier clock shown (clocks:appF4-cls-estimator, the spec's table)
_Q = (0.05, 0.25, 0.5, 0.75, 0.95)  # interval quantiles


@dataclasses.dataclass(frozen=True)
class ForecastModel:
    """A calibrated forecaster: the models of the remaining time, one per set of available signals.

    `grokclocks.forecast.default_model` is the one the calibration study fitted and ships;
    `grokclocks.forecast.fit_model` fits another on runs whose outcome is known.  A forecast uses the
    first profile whose signals can all be read off the run and lie inside the range it was fitted on
    (`choose`); `as_dict` and `from_dict` convert to and from a JSON-ready dict.
    """

    profiles: tuple[AFTModel, ...]
    """Fitted models, one `AFTModel` per set of signals, most signals first (the clock alone last: the wide
    prior); a forecast uses the first whose signals are all readable and in range."""
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

    def choose(self, x: Mapping[str, float]) -> tuple[AFTModel | None, dict[str, tuple[float, float]]]:
        """The profile a forecast with these signals uses, and the signals that lie outside their fitting range.

        Parameters
        ----------
        x : mapping of str to float
            Signal name to value (NaN = not readable).

        Returns
        -------
        profile : AFTModel or None
            The first profile whose signals are all finite and inside its `fit_range` (None if none is).
        outside : dict of str to (float, float)
            Each finite signal outside the fitting range of the first profile that has it, with that range.
        """
        outside: dict[str, tuple[float, float]] = {}
        seen: set[str] = set()
        for p in self.profiles:
            for f, rng in zip(p.features, p.fit_range):
                v = float(x.get(f, math.nan))
                if f not in seen and math.isfinite(v):
                    seen.add(f)
                    if not rng[0] <= v <= rng[1]:
                        outside[f] = rng
        for p in self.profiles:
            if all(p.in_range(x).values()):
                return p, outside
        return None, outside


def default_model() -> ForecastModel:
    """The model shipped with grokclocks, fitted by the calibration study (benchmarks/forecast_calibration.py).

    Returns
    -------
    ForecastModel
        The shipped model.
    """
    return _shipped_model()


@functools.lru_cache(maxsize=1)
def _shipped_model() -> ForecastModel:
    """The shipped model (a frozen record of tuples, so one instance serves every caller), from the package's own
    ``_shipped_model.json``: data written by the calibration study (``--phase fit --write-model``), read once
    through the door every file goes through, and checked field by field by `ForecastModel.from_dict` like any
    other model."""
    path = Path(__file__).with_name("_shipped_model.json")
    reader = _safe_io.Reader(DomainError, limit_hint="", content="the shipped model nests 6 levels")
    return ForecastModel.from_dict(reader.read_json(path, _MODEL_MAX_BYTES, named=path))


_MODEL_MAX_BYTES = 1 << 20  # the shipped model is 134 kB


@dataclasses.dataclass(frozen=True)
class RunState:
    """What a forecast may read of one run at the issue step: its clocks and its series' log-time bins."""

    t_train: float
    """First record with train accuracy ≥ the train level (inf = not yet)."""
    t_test: float
    """First record with test accuracy ≥ the test level (inf = not yet)."""
    t_cls: float | None
    """First record with train loss ≤ 1e-3 (inf = not yet; None = no train loss logged)."""
    has_train_acc: bool
    """Whether a train accuracy was logged up to τ."""
    has_test_acc: bool
    """Whether a test accuracy was logged up to τ."""
    bins: Mapping[str, tuple[np.ndarray, np.ndarray]]
    """Series name to its bins' (mean step, mean value)."""
    curves: Mapping[str, np.ndarray]
    """What `Forecast.plot` draws: "steps" and the series (raw records, or the bins for a `Monitor`)."""
    decay_rate: float | None = None
    """lr × wd of decoupled weight decay, None when unknown."""
    train_level: float = 1.0
    """Train-accuracy level."""
    test_level: float = 0.99
    """Test-accuracy level."""
    source: str = ""
    """Where the run came from."""
    run_name: str = ""
    """Which run of the source."""


def _no_forecast(status: str, reason: str, tau: float, horizon: float, hsrc: str, **kw: Any) -> Forecast:
    return Forecast(status=status, reason=reason, at_step=tau, horizon=horizon, horizon_source=hsrc, **kw)


def forecast_from_state(state: RunState, tau: float, hor: float, hsrc: str, reached: bool, model: ForecastModel, *,
                        extra_signals: tuple[Signal, ...] = (), levi_params: Any = None,
                        decay_note: str = "") -> Forecast:
    """The forecast at τ from the run's state (the one computation of `forecast` and `Monitor`).

    `hor` is the horizon, `hsrc` where it came from, `reached` whether τ ≥ the horizon (then P(grok by it) = 0:
    the run has not grokked by it)."""
    base = {"train_level": state.train_level, "test_level": state.test_level, "source": state.source,
            "run_name": state.run_name, "curves": dict(state.curves)}
    if not state.has_train_acc:
        return _no_forecast("cannot tell", "no train accuracy logged up to this step: t_train, the clock every "
                            "signal is timed from, cannot be read", tau, hor, hsrc, **base)
    t_train, t_test = state.t_train, state.t_test
    if math.isfinite(t_test):
        return _no_forecast("grokked", f"the test accuracy reached {state.test_level:g} at step {t_test:g}", tau, hor,
                            hsrc, t_train=t_train, t_test=t_test, p_grok=1.0, spec_ids=("kramers:milestones",), **base)
    if not math.isfinite(t_train):
        return _no_forecast("too early", f"the train accuracy has not reached {state.train_level:g} yet: the "
                            "forecast starts at t_train (a run that has not fit its training set has no grokking "
                            "delay)", tau, hor, hsrc, t_train=t_train, **base)
    if not state.has_test_acc:
        return _no_forecast("cannot tell", "no test accuracy logged up to this step: the test clock cannot be read",
                            tau, hor, hsrc, t_train=t_train, **base)
    if t_train <= 0:
        return _no_forecast("cannot tell", "the train accuracy is at its level at step 0: the signals are timed "
                            "in multiples of t_train > 0", tau, hor, hsrc, t_train=t_train, **base)
    x = signals_from_bins(state.bins, at_step=tau, t_train=t_train, test_level=state.test_level,
                          decay_rate=state.decay_rate)
    extra = {"t_train": t_train, "t_cls": state.t_cls, "decay_note": decay_note}
    if levi_params is not None:
        point, i50, i90, p, sd, sig = _levi(levi_params, state.test_level, t_train, tau, hor)
        sigs = [Signal("t_train", "accuracy clock t_train", t_train, "clocks:appF4-acc-clock", True), sig]
        return Forecast("forecast", "the linear estimator's closed form t*_gen (the run is Levi et al.'s linear "
                        "teacher-student model)", tau, hor, hsrc, t_train, point, i50, i90, 0.0 if reached else p,
                        tuple(sigs) + extra_signals, ("levi:tstar", "levi:grok-def", "clocks:appF4-acc-clock"),
                        "linear closed form", "Levi et al.'s t*_gen with a lognormal finite-size spread",
                        distribution=("absolute", "lognormal", math.log(point), sd, 0.0, ()), **base)
    unread = [f for f in GROUPS["test_acc"].features if not math.isfinite(x[f])]
    if unread:
        return _no_forecast("cannot tell", f"too few test-accuracy records since t_train to read {', '.join(unread)} "
                            f"(at least 3 log-time bins in [max(now/2, t_train), now]): the forecast starts then",
                            tau, hor, hsrc, t_train=t_train, **base)
    prof, outside = model.choose(x)
    out_names = tuple(outside)
    out_text = "; ".join(f"{f} = {x[f]:.3g} outside [{lo:.3g}, {hi:.3g}]" for f, (lo, hi) in outside.items())
    if prof is None:
        why = (f"the signals lie outside the range the model was fitted on ({out_text})" if outside else
               "no model profile's signals are readable (fewer than 3 log-time bins of test accuracy in the last "
               "doubling of time?)")
        return _no_forecast("cannot tell", why, tau, hor, hsrc, t_train=t_train, out_of_range=out_names, **base)
    mu, sigma = prof.location_scale(x)
    qs = []
    for q in _Q:
        w = prof.ppf(q, x["elapsed"])
        qs.append(math.inf if w == math.inf else tau if w == -math.inf
                  else tau * (1.0 + math.exp(min(mu + sigma * w, 700.0))))
    if reached:
        p_grok = 0.0
    else:
        c = math.log((hor - tau) / tau) if math.isfinite(hor) else math.inf
        p_grok = prof.cdf((c - mu) / sigma, x["elapsed"]) if math.isfinite(c) else 1.0
    contrib = prof.contributions(x)
    sigs = _signal_rows(x, set(prof.features), contrib, model, extra, outside)
    sigs.append(_escape_signal(prof, sigma))
    sigs.extend(extra_signals)
    used_groups = [g for g in model.groups if any(f in prof.features for f in GROUPS[g].features)]
    ids = ["clocks:appF4-acc-clock"] + [s for g in used_groups for s in GROUPS[g].spec_ids] + [_ESCAPE_ID]
    ids = tuple(dict.fromkeys(ids))
    driver = max(contrib.items(), key=lambda kv: abs(kv[1]))[0] if contrib else ""
    n_sig = len(prof.features)
    reason = (f"calibrated {prof.family} model of the remaining time on {n_sig} signal{'' if n_sig == 1 else 's'}"
              + (f"; the largest share comes from {driver}" if driver else ""))
    if outside:
        left = sorted({g for g in model.groups if g not in used_groups})
        reason += (f"; outside the fitting range, not used: {out_text} (the forecast falls back to the profile "
                   f"without {', '.join(left)}, whose interval is wider)")
    if reached:
        reason += f"; the horizon {hor:g} has been reached without grokking: P(grok by it) = 0"
    return Forecast("forecast", reason, tau, hor, hsrc, t_train, qs[2], (qs[1], qs[3]), (qs[0], qs[4]), float(p_grok),
                    tuple(sigs), ids, "calibrated model", f"{prof.family} remaining-time model on "
                    f"{', '.join(prof.features)}; {model.summary}",
                    distribution=("remaining", prof.family, mu, sigma, tau, prof.knots(x["elapsed"])),
                    out_of_range=out_names, **base)


_FEATURE_INFO = {
    "elapsed": ("log(now / t_train)", "clock"),
    "test_err": ("log((1 - test acc) / (1 - test level)), test error left, median over [0.8 now, now]", "test_acc"),
    "test_err_slope": ("d log(1 - test acc) / d log t over the last doubling of time (Theil-Sen)", "test_acc"),
    "acc_eta": ("log((t_acc - now) / now): t_acc where the test-error trend reaches the level", "test_acc"),
    "test_loss_slope": ("d log L_test / d log t over the last doubling of time (Theil-Sen)", "test_loss"),
    "test_loss_drop": ("log(L_test / its peak since t_train)", "test_loss"),
    "train_loss": ("log10 of the training loss now", "train_loss"),
    "train_loss_slope": ("d log L_train / d log t over the last doubling of time (Theil-Sen)", "train_loss"),
    "norm_rate": ("-d log |theta| / d log t over the last doubling of time (< 0: the norm grows)", "norm"),
    "norm_drop": ("log(|theta| / its peak since t_train)", "norm"),
    "decay_budget": ("log(lr x wd x now): decoupled weight decay's shrink exponent by now", "decay"),
}


def _signal_rows(x: Mapping[str, float], used: set[str], contrib: Mapping[str, float], model: ForecastModel,
                 extra: dict[str, Any], outside: Mapping[str, tuple[float, float]]) -> list[Signal]:
    """One Signal per feature read (and the clocks shown beside them)."""
    rows = [Signal("t_train", "accuracy clock t_train: first record with train acc >= the train level",
                   extra["t_train"], "clocks:appF4-acc-clock", True, note="the issue points of the study are 2x, 4x "
                   "and 8x t_train")]
    rows.append(Signal("t_cls", f"classifier clock t_cls({EPS_CLS:g}): first record with train loss <= {EPS_CLS:g}",
                       extra["t_cls"], "clocks:appF4-cls-estimator", False,
                       note="shown for reference; the train-loss signals below carry it"))
    for f, (title, group) in _FEATURE_INFO.items():
        v = x.get(f, math.nan)
        g = GROUPS[group]
        spec = g.spec_ids[0]
        value = None if not math.isfinite(v) else v
        if group not in model.groups:
            note = f"not used: {model.dropped.get(group, 'not kept by the calibration study')}"
            rows.append(Signal(f, title, value, spec, False, note=note))
            continue
        if value is None:
            rows.append(Signal(f, title, None, spec, False, note=f"not readable from this run (needs {g.needs})"))
            continue
        if f in outside:
            lo, hi = outside[f]
            rows.append(Signal(f, title, v, spec, False, note=f"outside the range the model was fitted on "
                               f"[{lo:.3g}, {hi:.3g}]: not used (no silent clip; the forecast falls back to a "
                               "profile without it)", in_range=False))
        elif f in used:
            rows.append(Signal(f, title, v, spec, True, contrib.get(f, math.nan), in_range=True))
        else:
            rows.append(Signal(f, title, v, spec, False, note="read, but the model profile used lacks it "
                               "(another signal of its group is out of range or unreadable)", in_range=True))
        if f == "decay_budget" and extra["decay_note"]:
            rows[-1] = dataclasses.replace(rows[-1], note=(rows[-1].note + "; " if rows[-1].note else "")
                                           + extra["decay_note"])
    return rows


def _escape_signal(prof: AFTModel, sigma: float) -> Signal:
    """The interval's law: its family and spread, against the memoryless escape of an activated process."""
    spread = math.exp(sigma * (family_ppf(prof.family, 0.95) - family_ppf(prof.family, 0.05)))
    escape = math.exp(family_ppf("exponential", 0.95) - family_ppf("exponential", 0.05))  # = ln 20 / ln(1/0.95)
    shape = {"lognormal": "lognormal remaining time", "loglogistic": "loglogistic remaining time",
             "weibull": f"Weibull remaining time of shape {1.0 / sigma:.3g} (1 = the memoryless escape)",
             "exponential": "exponential remaining time (the memoryless escape itself)"}[prof.family]
    note = (f"{shape}, chosen by the calibration study's cross-validated likelihood; before recalibration its 90 % "
            f"interval spans a factor {spread:.3g} in the remaining time, against {escape:.3g} for the memoryless "
            "escape of an activated process (kramers:eq15), whose interval is wide by nature")
    return Signal("escape_law", "interval shape: spread σ of the log remaining time (1 = memoryless escape, "
                  "Weibull family)", sigma, _ESCAPE_ID, True, note=note)


def _levi(levi_params: Mapping[str, Any], test_level: float, t_train: float, tau: float, horizon: float
          ) -> tuple[float, tuple[float, float], tuple[float, float], float, float, Signal]:
    """The linear estimator's closed form t*_gen as the forecast (Levi et al.; `levi:tstar`, `levi:grok-def`)."""
    from scipy.special import ndtr, ndtri

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
    qs = [t_gen * math.exp(sd * float(ndtri(q))) for q in _Q]
    p = float(ndtr(math.log(horizon / t_gen) / sd)) if math.isfinite(t_gen) and t_gen > 0 else 0.0
    sig = Signal("t_gen_linear", "linear estimator's t*_gen (closed form, Levi et al.)", t_gen, "levi:tstar", True,
                 note=f"t*_tr = {t_tr:.4g} vs measured t_train {t_train:.4g}; lognormal spread s.d. {sd:.3g} (finite "
                      "size, d_in^(-1/2))")
    return qs[2], (qs[1], qs[3]), (qs[0], qs[4]), p, sd, sig
