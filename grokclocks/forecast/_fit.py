"""Fitting the forecaster on runs whose outcome is known: rows at issue steps, signal selection, profiles,
spread and recalibration from out-of-configuration forecasts."""

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
from ._predict import ForecastModel
from ._model import (
    FAMILIES,
    AFTModel,
    _loglik_terms,
    aft_loglik,
    family_cdf_array,
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
    weight: float = 1.0
    """The run's weight in the fit, > 0 (default 1): its rows share it equally, so a run logged often counts
    as much as one logged rarely (e.g. 1 / (runs of its training code), so that each code counts the same)."""

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
    cens = not (math.isfinite(t_te) and t_te <= run.horizon)
    end = run.horizon if cens else t_te
    for tau in issue_steps:
        tau = float(tau)
        if not (t_tr <= tau < run.horizon and tau < t_te) or tau <= 0:
            continue
        x = read_signals(run.steps, at_step=tau, t_train=t_tr, test_level=run.test_level, train_acc=run.train_acc,
                         test_acc=run.test_acc, train_loss=run.train_loss, test_loss=run.test_loss,
                         weight_norm=run.weight_norm, decay_rate=run.decay_rate)
        rows.append((x, math.log((end - tau) / tau), cens, tau))
    return rows


def default_issue_steps(run: RunCurves) -> list[float]:
    """The fitting rows' issue steps: 1.25-64 × t_train and 5-90 % of the horizon (both kinds of issue point a
    user meets)."""
    t = run.t_train
    return ([k * t for k in (1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)]
            + [f * run.horizon for f in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 0.9)])


def _features(groups: Sequence[str]) -> tuple[str, ...]:
    return tuple(f for g in groups for f in GROUPS[g].features)


def _fit(cols: Mapping[str, np.ndarray], y: np.ndarray, c: np.ndarray, w: np.ndarray, groups: Sequence[str],
         family: str, scale: bool, ridge: float) -> AFTModel:
    feats = _features(groups)
    sf = tuple(f for f in SCALE_FEATURES if f in feats) if scale else ()
    return fit_aft(cols, y, c, features=feats, scale_features=sf, family=family, ridge=ridge, weights=w)


def _oof(cols: Mapping[str, np.ndarray], y: np.ndarray, c: np.ndarray, w: np.ndarray, folds: np.ndarray,
         groups: Sequence[str], family: str, scale: bool, ridge: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Out-of-fold (μ, log σ, inside the fold model's fitting range) of every row: each fold forecast by the
    model fitted on the other folds (whole configurations)."""
    n = y.size
    mus, lss, inside = np.empty(n), np.empty(n), np.ones(n, dtype=bool)
    for k in np.unique(folds):
        tr, va = folds != k, folds == k
        m = _fit({f: v[tr] for f, v in cols.items()}, y[tr], c[tr], w[tr], groups, family, scale, ridge)
        sub = {f: v[va] for f, v in cols.items()}
        mus[va], lss[va] = location_scale_columns(m, sub, int(va.sum()))
        for f, (lo, hi) in zip(m.features, m.fit_range):
            inside[va] &= (sub[f] >= lo) & (sub[f] <= hi)
    return mus, lss, inside


def _cv(cols: Mapping[str, np.ndarray], y: np.ndarray, c: np.ndarray, w: np.ndarray, folds: np.ndarray,
        groups: Sequence[str], family: str, scale: bool, ridge: float) -> float:
    """Weighted mean held-out log-likelihood per row over grouped folds."""
    total = 0.0
    for k in np.unique(folds):
        tr, va = folds != k, folds == k
        m = _fit({f: v[tr] for f, v in cols.items()}, y[tr], c[tr], w[tr], groups, family, scale, ridge)
        total += float(np.dot(w[va], aft_loglik(m, {f: v[va] for f, v in cols.items()}, y[va], c[va])))
    return total / float(w.sum())


def _spread_inflation(mus: np.ndarray, lss: np.ndarray, y: np.ndarray, c: np.ndarray, w: np.ndarray,
                      family: str) -> tuple[float, float, float]:
    """The factor k on σ that maximises the out-of-fold likelihood: how much wider forecasts must be on
    configurations the fit did not see than its in-sample residuals say.  Returns (k, log-lik per row at k,
    at 1)."""
    fam = "weibull" if family == "exponential" else family

    def nll(log_k: float) -> float:
        ls = lss + log_k
        return -float(np.dot(w, _loglik_terms(fam, (y - mus) / np.exp(ls), ls, c)[0])) / float(w.sum())

    res = optimize.minimize_scalar(nll, bounds=(-1.0, 2.0), method="bounded")
    return math.exp(float(res.x)), -float(res.fun), -nll(0.0)


CALIBRATION_EDGES: tuple[float, ...] = (math.log(3.0), math.log(6.0))
"""Edges of log(τ / t_train) between the recalibration strata: before 3 t_train, 3-6 t_train, after."""
_MIN_STRATUM_ROWS = 100  # a stratum with fewer out-of-fold rows takes the map of all rows

U_GRID: tuple[float, ...] = (0.0, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3,
                             0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.925, 0.95, 0.965,
                             0.975, 0.985, 0.99, 0.995, 0.9975, 0.999, 1.0)
"""The model probabilities u at which the recalibration map G(u) is tabulated (its knots)."""


def pit_km(u: np.ndarray, censored: np.ndarray, weights: np.ndarray, grid: Sequence[float] = U_GRID
           ) -> tuple[tuple[float, float], ...]:
    """The recalibration map as knots (u, G(u)): the weighted Kaplan–Meier distribution function of PITs.

    Each row's PIT is u = F(outcome) under its out-of-fold forecast; a censored row (no grokking by its
    horizon H) is known only to have PIT > F(H) and is right-censored there.  G(u) = 1 − S(u) with S the
    weighted Kaplan–Meier survival function; G(0) = 0 and G(1) = 1 are fixed (mass the data leave above the
    last event sits at u = 1: beyond anything the fitting runs showed).

    Parameters
    ----------
    u : numpy.ndarray
        The PIT of each row (for a censored row: F at its horizon), in [0, 1].
    censored : numpy.ndarray of bool
        True where the row is censored.
    weights : numpy.ndarray
        Weight of each row, > 0.
    grid : sequence of float
        Increasing probabilities from 0 to 1 at which G is tabulated (default `U_GRID`).

    Returns
    -------
    tuple of (float, float)
        The knots (u_k, G(u_k)), G non-decreasing.
    """
    order = np.lexsort((censored, u))  # events before censorings at a tie
    u, censored, weights = u[order], censored[order], weights[order]
    at_risk = np.cumsum(weights[::-1])[::-1]
    surv, ev_u, ev_s = 1.0, [], []
    for i in range(u.size):
        if not censored[i]:
            surv *= max(0.0, 1.0 - weights[i] / at_risk[i])
            ev_u.append(u[i])
            ev_s.append(surv)
    ev_u_a, ev_s_a = np.asarray(ev_u), np.asarray(ev_s)
    knots = []
    for g in grid:
        if g <= 0.0:
            knots.append((0.0, 0.0))
        elif g >= 1.0:
            knots.append((1.0, 1.0))
        else:
            j = int(np.searchsorted(ev_u_a, g, side="right"))
            knots.append((float(g), float(1.0 - (ev_s_a[j - 1] if j > 0 else 1.0))))
    return tuple(knots)


def _pits(mus: np.ndarray, lss: np.ndarray, y: np.ndarray, family: str) -> np.ndarray:
    return family_cdf_array(family, (y - mus) / np.exp(lss))


@cites("clocks:appF4-acc-clock", "kramers:eq15")
def fit_model(runs: Sequence[RunCurves], issue_steps: Any = None, *, groups: Sequence[str] | None = None,
              family: str | None = None, n_folds: int = 5, ridge: float = 1.0, seed: int = 0, inflate: bool = True,
              recalibrate: bool = True) -> tuple[ForecastModel, dict[str, Any]]:
    """Fit a forecaster on finished runs: signals, interval shape, spread and calibration by grouped cross-validation.

    Rows are the runs' signals at issue steps (`training_rows`), a run's rows sharing its weight
    (`RunCurves.weight`); runs of one configuration (`RunCurves.group`) share a fold, so every cross-validated
    number is measured on configurations the fit did not see.  Starting from `CORE_GROUPS`, the group that adds
    the most held-out log-likelihood per row is kept while it adds more than 0.005 nats; then the family and
    whether the spread depends on the signals are chosen the same way.  Every subset of the kept groups that
    contains the clock gets its own fitted profile: a forecast uses the largest profile whose signals are all
    readable and inside its fitting range, down to the clock alone (the wide prior).  Then (`inflate`) every
    profile's spread σ is multiplied by the factor k ≥ 1 that maximises the out-of-fold likelihood of the
    chosen model, and (`recalibrate`) each profile gets the recalibration map G of its own out-of-fold PITs
    (`pit_km`), one for all rows and one per stratum of the time since t_train (`CALIBRATION_EDGES`: before 3,
    3-6 and after 6 t_train; a stratum of fewer than 100 rows takes the map of all rows), so that its
    intervals and probabilities hold on configurations it has not seen.

    Parameters
    ----------
    runs : sequence of RunCurves
        Finished runs (the fitting set).
    issue_steps : callable or None
        Function `run -> sequence of issue steps`; default `default_issue_steps` (1.25-64 × t_train and 5-90 %
        of the horizon).
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
    recalibrate : bool
        Give every profile the recalibration map of its out-of-fold PITs (default True).

    Returns
    -------
    model : ForecastModel
        The fitted forecaster (pass it to `forecast(model=...)`).
    report : dict
        The selection path (each step's cross-validated log-likelihood per row), the family comparison, the
        dropped groups with their gain, the spread inflation, each profile's out-of-fold coverage before and
        after recalibration, and the numbers of runs and rows.

    Raises
    ------
    DomainError
        Too few runs or rows, an unknown group or family, a weight that is not > 0.
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
        issue_steps = default_issue_steps
    rows, y, c, gid, rid, w = [], [], [], [], [], []
    for j, r in enumerate(runs):
        if not (math.isfinite(r.weight) and r.weight > 0):
            raise DomainError(f"every run's weight must be > 0 (run {j}: {r.weight!r})")
        got = training_rows(r, issue_steps(r))
        for x, target, cens, _ in got:
            rows.append(x)
            y.append(target)
            c.append(cens)
            gid.append(r.group)
            rid.append(j)
            w.append(r.weight / len(got))
    if len(rows) < 20:
        raise DomainError(f"fit_model needs at least 20 issue rows (got {len(rows)} from {len(runs)} runs)")
    y_a, c_a, w_a = np.asarray(y), np.asarray(c, dtype=bool), np.asarray(w)
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
        return _cv(sub(on), y_a[on], c_a[on], w_a[on], folds[on], gs, fam, scale, ridge)

    path: list[dict[str, Any]] = []
    chosen = list(CORE_GROUPS) if groups is None else list(dict.fromkeys(list(CORE_GROUPS) + list(groups)))
    fam0 = family or "lognormal"
    dropped: dict[str, str] = {}
    if groups is None:
        candidates = [g for g in GROUPS if g not in CORE_GROUPS]
        # every candidate is compared on the rows where it and all the chosen signals are readable
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
    # profiles: every subset of the kept groups with the clock, largest first (the clock alone last)
    optional = [g for g in chosen if g != "clock"]
    subsets = [["clock"] + list(extra) for k in range(len(optional), -1, -1)
               for extra in itertools.combinations(optional, k)]
    inflation = (1.0, math.nan, math.nan)
    if inflate and fam_best != "exponential":  # the memoryless escape's spread is fixed at 1 by definition
        mus, lss, _ = _oof(sub(on), y_a[on], c_a[on], w_a[on], folds[on], chosen, fam_best, scale_best, ridge)
        inflation = _spread_inflation(mus, lss, y_a[on], c_a[on], w_a[on], fam_best)
    k_infl = max(inflation[0], 1.0)  # forecasts are only ever widened, never narrowed below the in-sample fit
    profiles: list[AFTModel] = []
    calib_report = []
    for gs in subsets:
        u = usable(gs)
        scale_p = scale_best and "test_acc" in gs
        prof = _fit(sub(u), y_a[u], c_a[u], w_a[u], gs, fam_best, scale_p, ridge)
        prof = dataclasses.replace(prof, gamma=(prof.gamma[0] + math.log(k_infl),) + prof.gamma[1:])
        entry = {"groups": gs, "n_rows": int(u.sum())}
        if recalibrate:
            mus, lss, inside = _oof(sub(u), y_a[u], c_a[u], w_a[u], folds[u], gs, fam_best, scale_p, ridge)
            lss = lss + math.log(k_infl)
            pit = _pits(mus, lss, y_a[u], fam_best)
            pit, cens, ww, el = pit[inside], c_a[u][inside], w_a[u][inside], cols["elapsed"][u][inside]
            knots = pit_km(pit, cens, ww)
            stratum = np.searchsorted(CALIBRATION_EDGES, el, side="right")
            strata = tuple(pit_km(pit[stratum == k], cens[stratum == k], ww[stratum == k])
                           if (stratum == k).sum() >= _MIN_STRATUM_ROWS else knots
                           for k in range(len(CALIBRATION_EDGES) + 1))
            prof = dataclasses.replace(prof, calibration=knots, calibration_edges=CALIBRATION_EDGES,
                                       calibration_strata=strata)
            entry.update(_oof_coverage(pit, cens, ww, knots))
            for k in range(len(strata)):
                sel = stratum == k
                cov = _oof_coverage(pit[sel], cens[sel], ww[sel], strata[k])
                entry.update({f"stratum{k}_{key}": v for key, v in cov.items()})
                entry[f"stratum{k}_rows"] = int(sel.sum())
        profiles.append(prof)
        calib_report.append(entry)
    summary = (f"fitted on {len(runs)} runs ({len(rows)} issue rows, {int(c_a.sum())} censored); signals "
               f"{', '.join(chosen)}")
    model = ForecastModel(tuple(profiles), tuple(chosen), dropped, fam_best, summary)
    report = {"n_runs": len(runs), "n_rows": len(rows), "n_censored": int(c_a.sum()), "n_configs": len(configs),
              "selection_path": path, "kept": chosen, "dropped": dropped, "families_cv_loglik_per_row": fams,
              "family": fam_best, "spread_on_signals": scale_best,
              "spread_inflation": {"factor": k_infl, "fitted_factor": inflation[0],
                                   "cv_loglik_per_row_inflated": inflation[1], "cv_loglik_per_row_plain": inflation[2]},
              "profiles": calib_report}
    return model, report


def _oof_coverage(pit: np.ndarray, cens: np.ndarray, w: np.ndarray, knots: Any) -> dict[str, float]:
    """Out-of-fold coverage of the central 50 % and 90 % intervals among the rows whose run grokked (the PIT is
    known), before and after recalibration (in-sample for the map: a check of the fit, not a held-out number)."""
    from ._model import uncalibrate

    obs = ~cens
    out = {}
    if not obs.any():
        return out
    for name, a in (("50", 0.25), ("90", 0.05)):
        lo, hi = a, 1.0 - a
        out[f"oof_coverage_{name}_grokked_raw"] = float(np.average((pit[obs] >= lo) & (pit[obs] <= hi), weights=w[obs]))
        ulo, uhi = uncalibrate(knots, lo), uncalibrate(knots, hi)
        out[f"oof_coverage_{name}_grokked_recal"] = float(np.average((pit[obs] >= ulo) & (pit[obs] <= uhi),
                                                                     weights=w[obs]))
    return out
