"""Fitting the forecaster on runs whose outcome is known: rows at issue steps, signal selection, profiles."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import optimize

from .. import _validate as V
from .. import clocks as _clocks
from .._validate import DomainError
from ..citations import cites
from ._api import ForecastModel
from ._model import (
    FAMILIES,
    AFTModel,
    _loglik_terms,
    aft_loglik,
    fit_aft,
    location_scale_columns,
)
from ._signals import GROUPS, read_signals

__all__ = ["CORE_GROUPS", "SCALE_FEATURES", "RunCurves", "fit_model", "training_rows"]

CORE_GROUPS: tuple[str, ...] = ("clock", "test_acc")
"""Signal groups every model keeps: the accuracy clock and the test-accuracy trend."""

SCALE_FEATURES: tuple[str, ...] = ("elapsed", "test_err")
"""Signals the spread log σ may depend on (when the profile has them)."""

_MIN_GAIN = 0.005  # nats per row of cross-validated log-likelihood a group must add to be kept


@dataclasses.dataclass(frozen=True)
class RunCurves:
    """One finished run, for fitting: its records, levels, horizon and configuration.

    `grokclocks.forecast.fit_model` takes a sequence of them; the array fields hold one value per record,
    all of the length of `steps`.
    """

    steps: np.ndarray
    """Record steps, strictly increasing, 1-D float64."""
    train_acc: np.ndarray
    """Train accuracy per record, in [0, 1] (NaN = not logged)."""
    test_acc: np.ndarray
    """Test accuracy per record, in [0, 1] (NaN = not logged)."""
    train_loss: np.ndarray | None
    """Training loss per record (NaN = not logged), or `None` when the run logged none."""
    test_loss: np.ndarray | None
    """Test loss per record (NaN = not logged), or `None` when the run logged none."""
    weight_norm: np.ndarray | None
    """Parameter norm |θ| per record (NaN = not logged), or `None` when the run logged none."""
    horizon: float
    """The run's last step: a run that has not grokked by it is right-censored there."""
    decay_rate: float | None = None
    """lr × wd of decoupled (AdamW) or SGD weight decay, per step; `None` (default) when unknown."""
    group: str = ""
    """Its configuration, a label: runs with the same label share a cross-validation fold.  "" (default) is a
    label like any other; when every run carries the same label, each run is a fold unit of its own."""
    train_level: float = 1.0
    """Train-accuracy level of t_train, in (0, 1] (default 1.0: every training example right)."""
    test_level: float = 0.99
    """Test-accuracy level of t_test, in (0, 1] (default 0.99)."""

    @property
    def t_train(self) -> float:
        """First record with train accuracy ≥ the train level (`math.inf` = never)."""
        return _clocks.accuracy_clock(self.steps, self.train_acc, target=self.train_level)

    @property
    def t_test(self) -> float:
        """First record with test accuracy ≥ the test level (`math.inf` = not by the horizon)."""
        return _clocks.first_hitting_time(self.steps, self.test_acc, self.test_level, direction="above")


def training_rows(run: RunCurves, issue_steps: Sequence[float]) -> list[tuple[dict[str, float], float, bool, float]]:
    """The (signals, target, censored, τ) rows of one run at the issue steps where a forecast would be issued.

    A row exists at τ when the run has fit its training set (t_train ≤ τ), has not reached the test level
    (t_test > τ) and τ lies before its horizon.  The target is log((t_test − τ)/τ), or, for a run that never
    reached the test level, log((horizon − τ)/τ) with censored True.

    Parameters
    ----------
    run : RunCurves
        The run.
    issue_steps : sequence of float
        Candidate issue steps τ > 0.

    Returns
    -------
    list of tuple
        (signals dict, target, censored, τ) per row, in the order of `issue_steps`.
    """
    t_tr, t_te = run.t_train, run.t_test
    rows = []
    if not math.isfinite(t_tr) or t_tr <= 0:
        return rows
    for tau in issue_steps:
        tau = float(tau)
        if not (t_tr <= tau < run.horizon and tau < t_te) or tau <= 0:
            continue
        x = read_signals(run.steps, at_step=tau, t_train=t_tr, test_level=run.test_level, train_acc=run.train_acc,
                         test_acc=run.test_acc, train_loss=run.train_loss, test_loss=run.test_loss,
                         weight_norm=run.weight_norm, decay_rate=run.decay_rate)
        cens = not math.isfinite(t_te)
        end = run.horizon if cens else t_te
        rows.append((x, math.log((end - tau) / tau), cens, tau))
    return rows


def _features(groups: Sequence[str]) -> tuple[str, ...]:
    return tuple(f for g in groups for f in GROUPS[g].features)


def _fit(rows: Any, y: np.ndarray, c: np.ndarray, groups: Sequence[str], family: str, scale: bool,
         ridge: float) -> AFTModel:
    feats = _features(groups)
    sf = tuple(f for f in SCALE_FEATURES if f in feats) if scale else ()
    return fit_aft(rows, y, c, features=feats, scale_features=sf, family=family, ridge=ridge)


def _cv(cols: Mapping[str, np.ndarray], y: np.ndarray, c: np.ndarray, folds: np.ndarray, groups: Sequence[str],
        family: str, scale: bool, ridge: float) -> float:
    """Mean held-out log-likelihood per row over grouped folds (rows as columns of signals)."""
    total = 0.0
    for k in np.unique(folds):
        tr, va = folds != k, folds == k
        m = _fit({f: v[tr] for f, v in cols.items()}, y[tr], c[tr], groups, family, scale, ridge)
        total += float(aft_loglik(m, {f: v[va] for f, v in cols.items()}, y[va], c[va]).sum())
    return total / y.size


def _spread_inflation(cols: Mapping[str, np.ndarray], y: np.ndarray, c: np.ndarray, folds: np.ndarray,
                      groups: Sequence[str], family: str, scale: bool, ridge: float) -> tuple[float, float, float]:
    """The factor k on σ that maximises the out-of-fold likelihood: how much wider a fold's forecasts must be
    on configurations its fit did not see than on the ones it did.  Returns (k, log-lik per row at k, at 1)."""
    mus, lss = np.empty(y.size), np.empty(y.size)
    fam = "weibull" if family == "exponential" else family
    for k in np.unique(folds):
        tr, va = folds != k, folds == k
        m = _fit({f: v[tr] for f, v in cols.items()}, y[tr], c[tr], groups, family, scale, ridge)
        mus[va], lss[va] = location_scale_columns(m, {f: v[va] for f, v in cols.items()}, int(va.sum()))

    def nll(log_k: float) -> float:
        ls = lss + log_k
        return -float(_loglik_terms(fam, (y - mus) / np.exp(ls), ls, c)[0].sum())

    res = optimize.minimize_scalar(nll, bounds=(-1.0, 2.0), method="bounded")
    return math.exp(float(res.x)), -float(res.fun) / y.size, -nll(0.0) / y.size


@cites("clocks:appF4-acc-clock", "kramers:eq15")
def fit_model(runs: Sequence[RunCurves], issue_steps: Any = None, *, groups: Sequence[str] | None = None,
              family: str | None = None, n_folds: int = 5, ridge: float = 1.0, seed: int = 0, inflate: bool = True
              ) -> tuple[ForecastModel, dict[str, Any]]:
    """Fit a forecaster on finished runs: choose its signals and interval shape by grouped cross-validation.

    Rows are the runs' signals at issue steps (`training_rows`); runs of one configuration (`RunCurves.group`)
    share a fold, so a group's cross-validated gain is measured on configurations the fit did not see.
    Starting from `CORE_GROUPS`, the group that adds the most held-out log-likelihood per row is kept while it
    adds more than 0.005 nats; then the family and whether the spread depends on the signals are chosen the
    same way.  The kept groups' every subset that contains the core gets its own fitted profile (a run that
    lacks a series is forecast with the largest profile it has), plus a last profile on the clock alone.
    Finally (`inflate`) every profile's spread σ is multiplied by the factor k ≥ 1 that maximises the
    out-of-fold likelihood of the chosen model: forecasts for configurations a fit has not seen are less sure
    than its in-sample residuals say.  Put runs that should never share a fold (e.g. one modulus) in one
    `RunCurves.group`.

    Parameters
    ----------
    runs : sequence of RunCurves
        Finished runs (the fitting set).
    issue_steps : callable or None
        Function `run -> sequence of issue steps`; default: 1.5, 2, 3, 4, 6, 8, 12, 16 × t_train and 10, 20,
        25, 30, 40, 50, 60, 75 % of the horizon.
    groups : sequence of str, optional
        Use these signal groups instead of selecting them (names of `GROUPS`; the core is added).
    family : str, optional
        Use this family instead of selecting it ("lognormal", "loglogistic", "weibull" or "exponential").
    n_folds : int
        Number of cross-validation folds, ≥ 2 (default 5).
    ridge : float
        Penalty on the squared standardised coefficients, ≥ 0 (default 1).
    seed : int
        Seed of the assignment of configurations to folds, ≥ 0.
    inflate : bool
        Widen every profile's spread by the out-of-fold likelihood's factor k ≥ 1 (default True).

    Returns
    -------
    model : ForecastModel
        The fitted forecaster (pass it to `forecast(model=...)`).
    report : dict
        The selection path (each step's cross-validated log-likelihood per row), the family comparison, the
        dropped groups with their gain, the spread inflation, and the numbers of runs and rows.

    Raises
    ------
    DomainError
        Too few runs or rows, an unknown group or family.
    """
    n_folds = V.integer_at_least(n_folds, "n_folds", 2)
    ridge = float(V.nonnegative(ridge, "ridge", scalar=True))
    if family is not None and family not in FAMILIES:
        raise DomainError(f"family must be one of {FAMILIES} (got {family!r})")
    if groups is not None:
        bad = [g for g in groups if g not in GROUPS]
        if bad:
            raise DomainError(f"groups must be among {tuple(GROUPS)} (got {bad})")
    if issue_steps is None:
        def issue_steps(r: RunCurves) -> list[float]:
            t = r.t_train
            return [k * t for k in (1.5, 2, 3, 4, 6, 8, 12, 16)] + [f * r.horizon for f in
                                                                    (0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75)]
    rows, y, c, gid, rid = [], [], [], [], []
    for j, r in enumerate(runs):
        for x, target, cens, _ in training_rows(r, issue_steps(r)):
            rows.append(x)
            y.append(target)
            c.append(cens)
            gid.append(r.group)
            rid.append(j)
    if len(rows) < 20:
        raise DomainError(f"fit_model needs at least 20 issue rows (got {len(rows)} from {len(runs)} runs)")
    y_a, c_a = np.asarray(y), np.asarray(c, dtype=bool)
    if len(set(gid)) < 2:  # one group: the runs themselves are the folds' units (a run's rows share a fold)
        gid = [f"{g}#{j}" for g, j in zip(gid, rid)]
    configs = sorted(set(gid))
    rng = np.random.default_rng(seed)
    fold_of = {g: int(k) % n_folds for g, k in zip(configs, rng.permutation(len(configs)))}
    folds = np.array([fold_of[g] for g in gid])

    cols = {f: np.array([x[f] for x in rows], dtype=np.float64) for f in _features(tuple(GROUPS))}

    def usable(gs: Sequence[str]) -> np.ndarray:
        ok = np.ones(len(rows), dtype=bool)
        for f in _features(gs):
            ok &= np.isfinite(cols[f])
        return ok

    def sub(on: np.ndarray) -> dict[str, np.ndarray]:
        return {f: v[on] for f, v in cols.items()}

    def score(gs: Sequence[str], fam: str, scale: bool, on: np.ndarray) -> float:
        return _cv(sub(on), y_a[on], c_a[on], folds[on], gs, fam, scale, ridge)

    path: list[dict[str, Any]] = []
    chosen = list(CORE_GROUPS) if groups is None else list(dict.fromkeys(list(CORE_GROUPS) + list(groups)))
    fam0 = family or "lognormal"
    dropped: dict[str, str] = {}
    if groups is None:
        candidates = [g for g in GROUPS if g not in CORE_GROUPS]
        # every candidate is compared on the rows where it and all the core signals are readable
        while candidates:
            gains = {}
            for g in candidates:
                on = usable(chosen + [g])
                if on.sum() < 20:
                    gains[g] = -math.inf
                    continue
                gains[g] = score(chosen + [g], fam0, True, on) - score(chosen, fam0, True, on)
            best = max(gains, key=gains.get)
            path.append({"kept": list(chosen), "gains": {g: round(v, 5) for g, v in gains.items()}})
            if gains[best] <= _MIN_GAIN:
                for g in candidates:
                    dropped[g] = (f"cross-validated gain {gains[g]:+.4f} nats per row over {', '.join(chosen)} "
                                  f"(kept only above {_MIN_GAIN})" if math.isfinite(gains[g]) else
                                  "not readable in enough fitting rows")
                break
            chosen.append(best)
            candidates.remove(best)
    on = usable(chosen)
    fams = {}
    for fam in (FAMILIES if family is None else (family,)):
        for scale in (False, True):
            if fam == "exponential" and scale:
                continue
            fams[f"{fam}, {'spread on signals' if scale else 'constant spread'}"] = score(chosen, fam, scale, on)
    best_key = max(fams, key=fams.get)
    fam_best, scale_best = best_key.split(", ")[0], best_key.endswith("spread on signals")
    optional = [g for g in chosen if g not in CORE_GROUPS]
    profiles: list[AFTModel] = []
    for k in range(len(optional), -1, -1):
        for extra in itertools.combinations(optional, k):
            gs = list(CORE_GROUPS) + list(extra)
            u = usable(gs)
            profiles.append(_fit(sub(u), y_a[u], c_a[u], gs, fam_best, scale_best, ridge))
    u = usable(["clock"])
    profiles.append(_fit(sub(u), y_a[u], c_a[u], ["clock"], fam_best, False, ridge))
    inflation = (1.0, math.nan, math.nan)
    if inflate and fam_best != "exponential":  # the memoryless escape's spread is fixed at 1 by definition
        inflation = _spread_inflation(sub(on), y_a[on], c_a[on], folds[on], chosen, fam_best, scale_best, ridge)
        if inflation[0] > 1.0:  # forecasts are only ever widened, never narrowed below the in-sample fit
            profiles = [dataclasses.replace(p, gamma=(p.gamma[0] + math.log(inflation[0]),) + p.gamma[1:])
                        for p in profiles]
    summary = (f"fitted on {len(runs)} runs ({len(rows)} issue rows, {int(c_a.sum())} censored); signals "
               f"{', '.join(chosen)}")
    model = ForecastModel(tuple(profiles), tuple(chosen), dropped, fam_best, summary)
    report = {"n_runs": len(runs), "n_rows": len(rows), "n_censored": int(c_a.sum()), "n_configs": len(configs),
              "selection_path": path, "kept": chosen, "dropped": dropped, "families_cv_loglik_per_row": fams,
              "family": fam_best, "spread_on_signals": scale_best,
              "spread_inflation": {"factor": max(inflation[0], 1.0), "fitted_factor": inflation[0],
                                   "cv_loglik_per_row_inflated": inflation[1], "cv_loglik_per_row_plain": inflation[2]}}
    return model, report

