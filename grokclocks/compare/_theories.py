"""The quantities each theory predicts or measures for a run (the entries of the table)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from .. import clocks as _clocks
from .. import coverage as _coverage
from .. import kramers as _kramers
from .. import linear as _linear
from .. import repulsion as _repulsion
from .. import spectral as _spectral
from .._validate import DomainError
from ._records import Entry, RunData, _KS_ALPHA, _MIN_SEEDS_CV, _MIN_SEEDS_KS, _STAT_IDS, _fmt_num

def _summary(per_run: Sequence[float]) -> float:
    """Median over the runs where the quantity is finite; `inf` if it is inf for all; `nan` if undefined."""
    a = np.asarray(per_run, dtype=float)
    fin = a[np.isfinite(a)]
    if fin.size:
        return float(np.median(fin))
    if np.any(np.isinf(a)):
        return math.inf
    return math.nan


def _entry(theory: str, qid: str, quantity: str, per_run: Sequence[Any], status: str, spec_id: str,
           note: str = "") -> Entry:
    vals = tuple(per_run)
    if vals and all(isinstance(v, (bool, np.bool_)) for v in vals):
        vals = tuple(bool(v) for v in vals)
        value: Any = vals[0] if len(vals) == 1 else sum(vals) / len(vals)
    else:
        vals = tuple(float(v) for v in vals)
        value = _summary(vals)
    return Entry(theory, quantity, value, status, spec_id, note, vals, qid)


def _na(theory: str, qid: str, quantity: str, reason: str, spec_id: str, note: str = "") -> Entry:
    return Entry(theory, quantity, None, f"n/a: {reason}", spec_id, note, (), qid)


def _normalised_change(x: np.ndarray) -> np.ndarray | None:
    """`|S_j - S_end| / |S_0 - S_end|`: the normalisation of `clocks:appF4-srank-stat`, for any statistic.

    (`grokclocks.clocks.stable_rank_gap` applies it to stable ranks; this is the same ratio for a
    statistic that is not a stable rank.)  `None` if the statistic ends where it started.
    """
    den = abs(float(x[0]) - float(x[-1]))
    if not den > 0:
        return None
    return np.abs(x - x[-1]) / den


def _per_run(r: RunData, name: str, fn: Any) -> np.ndarray:
    """`fn(steps, values)` of one series, run by run, on the records where it was logged."""
    return np.array([fn(*r.logged(name, i)) for i in range(r.n_runs)], dtype=float)


def _clock_entries(r: RunData, eps_cls: float, delta: float, window: int, n_freqs: int,
                   out: list[Entry], clocks: dict[str, float]) -> dict[str, np.ndarray]:
    """Classifier, accuracy and representation clocks (spec `clocks`); returns per-run clocks for later use."""
    n = r.n_runs
    res: dict[str, np.ndarray] = {}
    lv_tr, lv_te = _fmt_num(r.train_level), _fmt_num(r.test_level)
    if r.train_acc is not None:
        tt = _per_run(r, "train_acc", lambda t, a: _clocks.accuracy_clock(t, a, target=r.train_level))
        res["t_train"] = tt
        out.append(_entry("clocks", "t_train", f"t_train (train acc >= {lv_tr})", tt, "measured",
                          "clocks:appF4-acc-clock", "zero-one clock t_01 (first record; 'never' = not within the run)"))
        clocks["t_train"] = _summary(tt)
    else:
        out.append(_na("clocks", "t_train", f"t_train (train acc >= {lv_tr})", "no train accuracy logged",
                       "clocks:appF4-acc-clock"))
    if r.test_acc is not None:
        te = _per_run(r, "test_acc", lambda t, a: _clocks.first_hitting_time(t, a, r.test_level, direction="above"))
        res["t_test"] = te
        out.append(_entry("clocks", "t_test", f"t_test (test acc >= {lv_te})", te, "measured", "kramers:milestones",
                          "generalisation clock (first record at the level)"))
        clocks["t_test"] = _summary(te)
    else:
        out.append(_na("clocks", "t_test", f"t_test (test acc >= {lv_te})", "no test accuracy logged",
                       "kramers:milestones"))
    q = f"t_cls(eps={_fmt_num(eps_cls)})"
    if r.train_loss is not None:
        tc = _per_run(r, "train_loss", lambda t, L: _clocks.classifier_clock(t, L, eps_cls))
        tcw = _per_run(r, "train_loss", lambda t, L: _clocks.classifier_clock(t, L, eps_cls, window=window))
        res["t_cls"] = tc
        out.append(_entry("clocks", "t_cls", q, tc, "measured", "clocks:appF4-cls-estimator",
                          "first record with training loss <= eps (classifier clock)"))
        out.append(_entry("clocks", "t_cls_sustained", f"t_cls(eps={_fmt_num(eps_cls)}, window {window})", tcw,
                          "measured", "clocks:appF4-cls-estimator", f"sustained for {window} logged records"))
        clocks["t_cls"] = _summary(tc)
    else:
        out.append(_na("clocks", "t_cls", q, "no training loss logged", "clocks:appF4-cls-estimator"))
    # structural statistics -> representation clocks, each on its own records
    stats_: dict[str, tuple[np.ndarray, np.ndarray, str, str]] = {}
    if r.embeddings is not None and r.p is not None and r.embeddings.shape[2] >= r.p:
        E = r.embeddings[:, :, : r.p, :]  # operand tokens 0..p-1 (shared layout)
        try:
            fe = np.empty(E.shape[:2])
            for i in range(n):
                e_final = _clocks.fourier_energies(E[i, -1], r.p)
                key = 1 + np.argsort(-e_final[1:], kind="stable")[: max(1, min(n_freqs, e_final.size - 1))]
                fe[i] = [_clocks.fourier_energy_outside(E[i, j], r.p, freqs=key) for j in range(E.shape[1])]
            stats_["Fourier energy outside"] = (fe, r.embedding_steps, "clocks:appF4-fourier",
                                                f"embedding energy outside its final top-{n_freqs} frequencies")
        except DomainError as exc:
            out.append(_na("clocks", "t_rep_fourier", "t_rep(Fourier energy outside)", str(exc), "clocks:appF4-fourier"))
        try:
            sr = _spectral.stable_rank(E)
            stats_["stable rank of embedding"] = (sr, r.embedding_steps, "clocks:appF4-srank-stat",
                                                  "srank(E) = |E|_F^2 / |E|_2^2")
        except DomainError as exc:
            out.append(_na("clocks", "t_rep_srank", "t_rep(stable rank of embedding)", str(exc),
                           "clocks:appF4-srank-stat"))
    if r.weight_norm is not None:
        stats_["weight norm"] = (r.weight_norm, r.steps, "clocks:appF4-persist", "global parameter norm")
    if r.test_acc is not None:
        ref = _per_run(r, "test_acc", lambda t, a: _rep_clock(t, a, delta, window))
        res["t_rep_test_acc"] = ref
    else:
        ref = np.full(n, math.nan)
    primary = None
    for name, (series, s_steps, sid, what) in stats_.items():
        key = _STAT_IDS[name]
        tr = np.array([_rep_clock(s_steps[~np.isnan(s)], s[~np.isnan(s)], delta, window,
                                  srank=name.startswith("stable rank")) for s in series])
        if np.isnan(tr).all():
            out.append(_na("clocks", f"t_rep_{key}", f"t_rep({name})", "the statistic ends where it started in every run",
                           sid, what))
            continue
        out.append(_entry("clocks", f"t_rep_{key}", f"t_rep({name})", tr, "measured", sid,
                          f"{what}; first record where |S - S_end| <= {_fmt_num(delta)} |S_0 - S_end| "
                          f"for {window} records"))
        grokked = np.isfinite(res.get("t_test", np.full(n, math.inf)))
        if grokked.any():
            lag = np.where(grokked, tr - ref, math.nan)
            out.append(_entry("clocks", f"lag_{key}", f"lag t_rep({name}) - t_rep(test acc)", lag, "measured",
                              "clocks:cor5.7", "same estimator on the test-accuracy curve; < 0 = the statistic "
                              "settled first"))
        else:
            out.append(_na("clocks", f"lag_{key}", f"lag t_rep({name}) - t_rep(test acc)",
                           "test accuracy never reached its level", "clocks:cor5.7"))
        if primary is None:
            primary = (name, tr)
    if primary is None:
        out.append(_na("clocks", "t_rep", "t_rep (representation clock)",
                       "needs a structural statistic: weight_norm or embeddings (+ p)", "clocks:eq2.2"))
    else:
        name, tr = primary
        res["t_rep"] = tr
        clocks[f"t_rep({name})"] = _summary(tr)
        if "t_cls" in res:
            tc = res["t_cls"]
            ok = np.isfinite(tc) & np.isfinite(tr)
            if ok.any():
                out.append(_entry("clocks", "cls_before_rep", f"t_cls < t_rep({name})",
                                  [bool(a < b) for a, b in zip(tc[ok], tr[ok])], "measured", "clocks:thm5.6",
                                  "the theory's ordering: classifier clock first"))
                ratio = [float(_clocks.separation_ratio(b, a)) if a > 0 else math.nan for a, b in zip(tc, tr)]
                out.append(_entry("clocks", "separation_ratio", f"separation ratio t_rep({name}) / t_cls", ratio,
                                  "measured", "clocks:appF4-sep-ratio", "descriptive; depends on units and thresholds"))
            else:
                out.append(_na("clocks", "cls_before_rep", f"t_cls < t_rep({name})", "a clock never fired",
                               "clocks:thm5.6"))
        else:
            out.append(_na("clocks", "cls_before_rep", f"t_cls < t_rep({name})", "no training loss logged",
                           "clocks:thm5.6"))
    q_ord = "t_train <= t_cls < t_test"
    if {"t_train", "t_cls", "t_test"} <= set(res):
        fired = np.isfinite(res["t_train"]) & np.isfinite(res["t_cls"]) & np.isfinite(res["t_test"])
        if fired.any():
            order = [bool(a <= b < c)
                     for a, b, c in zip(res["t_train"][fired], res["t_cls"][fired], res["t_test"][fired])]
            out.append(_entry("clocks", "clock_order", q_ord, order, "measured", "clocks:appB",
                              f"ordering of the modular-addition report, over the {int(fired.sum())} of {n} runs "
                              "where all three clocks fired"))
        else:
            out.append(_na("clocks", "clock_order", q_ord, "no run where all three clocks fired", "clocks:appB"))
    else:
        out.append(_na("clocks", "clock_order", q_ord, "needs train and test accuracy and the training loss",
                       "clocks:appB"))
    return res


def _rep_clock(t: np.ndarray, x: np.ndarray, delta: float, window: int, *, srank: bool = False) -> float:
    if x.size < 2:
        return math.nan
    if srank:
        try:
            g = _clocks.stable_rank_gap(x)
        except DomainError:
            return math.nan
    else:
        g = _normalised_change(np.asarray(x, dtype=float))
        if g is None:
            return math.nan
    return float(_clocks.representation_clock(t, g, delta, window=window))


def _levi_entries(r: RunData, res: dict[str, np.ndarray], levi_params: Mapping[str, Any] | None,
                  out: list[Entry]) -> None:
    lam = None
    q_lam = "lambda = d_in / N_train"
    if r.lam is not None:
        lam = r.lam
        out.append(Entry("levi", q_lam, lam, "measured", "levi:conv-data", "given by the user", (lam,), "lambda"))
    elif r.n_train is not None and r.p is not None:
        lams = [float(_linear.modular_lambda(n / r.p ** 2, r.p)) for n in r.n_train]
        lam = float(np.median(lams))
        out.append(_entry("levi", "lambda", q_lam, lams, "measured", "levi:appG",
                          "2p / N_train: one-hot pair inputs (App. G)"))
    else:
        out.append(_na("levi", "lambda", q_lam, "needs lam, or p with n_train or train_mask", "levi:appG"))
    q_dt = "Delta t = t_test - t_train"
    if "t_train" in res and "t_test" in res:
        dt = res["t_test"] - res["t_train"]
        res["delta_t"] = dt
        out.append(_entry("levi", "delta_t", q_dt, dt, "measured", "levi:grok-def",
                          "grokking delay in steps ('never': the test clock never fired)"))
    else:
        out.append(_na("levi", "delta_t", q_dt, "needs train and test accuracy", "levi:grok-def"))
    q = "Delta t, linear estimator"
    if levi_params:
        if lam is None:
            out.append(_na("levi", "delta_t_linear", q, "lambda unknown", "levi:grok-def"))
        else:
            kw = dict(levi_params)
            try:
                eps, eta0 = kw.pop("eps"), kw.pop("eta0")
            except KeyError as exc:
                raise DomainError("levi_params must contain 'eps' and 'eta0' (the arguments of "
                                  "grokclocks.linear.grok_time)") from exc
            pred = float(_linear.grok_time(lam, eps, eta0, **kw))
            note = f"grok_time(lam={_fmt_num(lam)}, eps={_fmt_num(eps)}, eta0={_fmt_num(eta0)}" + "".join(
                f", {k}={_fmt_num(v) if not isinstance(v, str) else v}" for k, v in kw.items()) + ")"
            if math.isnan(pred):
                out.append(_na("levi", "delta_t_linear", q, "neither accuracy reaches the level in the linear model",
                               "levi:grok-def", note))
            else:
                out.append(Entry("levi", q, pred, "predicted", "levi:grok-def", note, (pred,), "delta_t_linear"))
    else:
        out.append(_na("levi", "delta_t_linear", q, "needs the linear model's eps and eta0 (levi_params); the closed "
                       "form is for GD on a linear MSE teacher-student, which this run is not known to be",
                       "levi:grok-def"))
    q_star = "lambda* (fit Delta t = C (lambda* - lambda)^-2)"
    if r.lam_sweep is not None and r.lam_sweep[0].size >= 3 and np.unique(r.lam_sweep[0]).size >= 3:
        lams, dts = r.lam_sweep
        try:
            C, lam_star = _linear.fit_inverse_square(lams, dts)
        except (DomainError, RuntimeError, ValueError) as exc:
            out.append(_na("levi", "lambda_star", q_star, f"fit failed: {exc}", "levi:appG"))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                fitted = C * (lam_star - lams) ** -2.0
                resid = float(np.max(np.abs(dts / fitted - 1.0)))
            res["appg_residual"] = np.array([resid])
            out.append(Entry("levi", q_star, float(lam_star), "measured", "levi:appG",
                             f"C = {_fmt_num(C)}; fitted to {lams.size} (lambda, Delta t) points; largest relative "
                             f"residual {resid:.3g}", (float(lam_star),), "lambda_star"))
            if lam is not None and lam != lam_star:
                pred = float(C * (lam_star - lam) ** -2)
                out.append(Entry("levi", "Delta t from the lambda* fit", pred, "predicted", "levi:appG",
                                 "in-sample: the fit used this run's delay", (pred,), "delta_t_fit"))
    else:
        out.append(_na("levi", "lambda_star", q_star,
                       "needs grokking delays at >= 3 training fractions (a train_frac sweep, or lam_sweep=)",
                       "levi:appG"))


def _kramers_entries(r: RunData, res: dict[str, np.ndarray], out: list[Entry]) -> None:
    if "t_train" not in res or "t_test" not in res:
        out.append(_na("kramers", "delay_ratio", "delay ratio t_grok / t_mem", "needs train and test accuracy",
                       "kramers:milestones"))
        return
    tm, tg = res["t_train"], res["t_test"]
    ok = np.isfinite(tm) & (tm > 0)
    ratio = np.where(ok, tg / np.where(ok, tm, 1.0), math.nan)  # inf: never generalised
    out.append(_entry("kramers", "delay_ratio", "delay ratio t_grok / t_mem", ratio, "measured", "kramers:milestones",
                      "t_mem = t_train, t_grok = t_test"))
    fin = np.isfinite(ratio) & (ratio > 0)
    q_bar = "barrier Delta F / T_eff = ln(t_grok / t_mem)"
    if fin.any():
        bars = []
        neg = False
        for x in ratio:
            if np.isfinite(x) and x > 0:
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    bars.append(_kramers.arrhenius_barrier(float(x)))
                neg |= bool(w)
            else:
                bars.append(math.inf if np.isinf(x) else math.nan)
        out.append(_entry("kramers", "barrier", q_bar, bars, "measured", "kramers:arrhenius",
                          "Arrhenius inversion with tau_0 = t_mem (an assumption; heuristic use)"
                          + ("; a ratio < 1 gives a negative barrier" if neg else "")))
    else:
        out.append(_na("kramers", "barrier", q_bar, "no run both memorised (t_mem > 0) and generalised",
                       "kramers:arrhenius"))
    wait = (tg - tm)[np.isfinite(tg) & np.isfinite(tm) & (tg > tm)]
    res["waits"] = wait
    q_cv, q_ks = "CV of Delta t over seeds (escape: 1)", "KS p-value, Delta t ~ exponential"
    cv = None
    if wait.size >= _MIN_SEEDS_CV:
        cv = float(np.std(wait, ddof=1) / np.mean(wait))
        out.append(Entry("kramers", q_cv, cv, "measured", "kramers:eq15",
                         f"{wait.size} grokked runs; an escape over a barrier has exponential waiting times, CV = 1",
                         (cv,), "cv_delta_t"))
    else:
        out.append(_na("kramers", "cv_delta_t", q_cv, f"needs >= {_MIN_SEEDS_CV} seeds that grok (have {wait.size})",
                       "kramers:eq15"))
    if wait.size >= _MIN_SEEDS_KS:
        gof = stats.goodness_of_fit(stats.expon, wait, known_params={"loc": 0.0}, statistic="ks",
                                    n_mc_samples=999, random_state=0)
        pv = float(gof.pvalue)
        res["ks_pvalue"] = np.array([pv])
        out.append(Entry("kramers", q_ks, pv, "measured", "kramers:eq15",
                         f"KS D = {gof.statistic:.3g}, mean fitted (Monte-Carlo p, 999 samples)", (pv,), "ks_pvalue"))
        looks = pv >= _KS_ALPHA
        out.append(Entry("kramers", "spread looks like an escape (KS p >= 0.05)", looks, "measured", "kramers:eq15",
                         f"CV {cv:.2f}, p {pv:.2g}; an activated escape has exponential first-passage times (CV = 1); "
                         + ("consistent with that" if looks else "this spread is too narrow/regular for one")
                         + " (spec kramers:arrhenius caveat iii)", (looks,), "escape_like"))
    else:
        out.append(_na("kramers", "ks_pvalue", q_ks, f"needs >= {_MIN_SEEDS_KS} seeds that grok (have {wait.size})",
                       "kramers:eq15"))


def _aligned(r: RunData, name: str, run: int, steps: np.ndarray) -> np.ndarray | None:
    """Series `name` of one run at exactly `steps` (None if it is not logged at every one of them)."""
    a = getattr(r, name)
    if a is None:
        return None
    idx = np.searchsorted(r.steps, steps)
    vals = a[run, idx]
    return None if np.isnan(vals).any() else vals


def _coverage_entries(r: RunData, res: dict[str, np.ndarray], out: list[Entry]) -> None:
    q = "test-accuracy ceiling Ceil(inf)"
    if r.p is None or r.train_mask is None:
        out.append(_na("coverage", "ceiling", q, "needs p and the training mask (train_mask=)", "uniformity:thm3.10"))
        return
    if r.test_acc is None:
        out.append(_na("coverage", "ceiling", q, "needs the test accuracy", "uniformity:thm3.10"))
        return
    try:
        labels = _coverage.label_table(r.p, r.operation)
    except DomainError as exc:
        out.append(_na("coverage", "ceiling", q, f"labels of operation {r.operation!r}: {exc}", "uniformity:thm3.10"))
        return
    med = None
    if r.embeddings is not None and r.embeddings.shape[2] >= r.p + r.b_offset and r.p >= 3:
        med = [_coverage.med_trajectory(E, r.p, r.b_offset, token_axis=0) for E in r.embeddings]
    runs, spear_na = [], ""
    for i in range(r.n_runs):
        t, acc = r.logged("test_acc", i)
        tl = _aligned(r, "test_loss", i, t)
        m = None
        if med is not None and tl is not None:
            if np.array_equal(r.embedding_steps, t):
                m = med[i]
            else:
                spear_na = "the embeddings and the test loss are not logged at the same records"
        runs.append(_coverage.analyse_run(
            acc, r.train_mask[i], labels, train_acc=_aligned(r, "train_acc", i, t), epochs=t,
            test_loss=None if m is None else tl, med=m, b_offset=r.b_offset))
    ceil = [d["ceiling"] for d in runs]
    note = (f"fraction of test pairs whose label occurs in training and whose tokens were trained "
            f"(torus, b_offset={r.b_offset})")
    if min(ceil) < r.test_level:
        note += f"; below the test level {_fmt_num(r.test_level)}, so t_test cannot fire"
    out.append(_entry("coverage", "ceiling", q, ceil, "predicted", "uniformity:thm3.10", note))
    mx = [d["max_test_acc"] for d in runs]
    out.append(_entry("coverage", "max_test_acc", "max test accuracy", mx, "measured", "uniformity:table1"))
    allow = []
    for i, c in enumerate(ceil):
        n_test = int((~r.train_mask[i]).sum())
        n_unc = round((1.0 - c) * n_test)
        q_ch = 1.0 / r.p
        allow.append((n_unc * q_ch + 3.0 * math.sqrt(n_unc * q_ch * (1.0 - q_ch))) / n_test)
    res["ceiling"], res["allowance"], res["max_test_acc"] = np.asarray(ceil), np.asarray(allow), np.asarray(mx)
    within = [bool(m <= c + a) for m, c, a in zip(mx, ceil, allow)]
    out.append(_entry("coverage", "below_ceiling", "test accuracy <= ceiling (+ chance allowance)", within,
                      "measured", "uniformity:thm3.10",
                      "allowance = chance hits 1/p on the uncovered test pairs + 3 binomial s.d. "
                      f"(median {_fmt_num(float(np.median(allow)))})"))
    radius = [math.nan if d["implied_radius"] is None else float(d["implied_radius"]) for d in runs]
    out.append(_entry("coverage", "implied_radius", "implied radius n of U-Acc", radius, "measured",
                      "uniformity:thm3.10",
                      "smallest torus radius whose ceiling reaches the best post-memorisation test accuracy"))
    if med is not None:
        out.append(_entry("coverage", "med_start", "MED at start", [m[0] for m in med], "measured", "uniformity:def4.2"))
        out.append(_entry("coverage", "med_end", "MED at end", [m[-1] for m in med], "measured", "uniformity:def4.2"))
        q_rho = "Spearman(MED, test loss), test acc > 0.2 window"
        if r.test_loss is None:
            pass
        elif spear_na:
            out.append(_na("coverage", "spearman_med", q_rho, spear_na, "uniformity:def4.2"))
        else:
            rho = [math.nan if d.get("spearman_grokking") is None else d["spearman_grokking"] for d in runs]
            if np.isfinite(rho).any():
                out.append(_entry("coverage", "spearman_med", q_rho, rho, "measured", "uniformity:def4.2",
                                  "from the first record after memorisation with test acc > 0.2 to the end; > 0 = MED "
                                  "falls with the test loss (spec V3, transformer p=97: > 0.5)"))
            else:
                out.append(_na("coverage", "spearman_med", q_rho, "test acc never above 0.2 after memorisation",
                               "uniformity:def4.2"))
    else:
        out.append(_na("coverage", "med", "MED (main embedding diff)", "needs token-embedding snapshots (embeddings=)",
                       "uniformity:def4.2"))


def _repulsion_entries(r: RunData, res: dict[str, np.ndarray], out: list[Entry], clocks: dict[str, float],
                       gram_window: int, lag: int, threshold: float, t_min: int) -> None:
    q = "lock-in (slope detector fires)"
    gaps = None
    src = ""
    if r.gap is not None:
        gaps, src = r.gap, "logged eigengap"
        epoch0 = 0.0
    elif r.weights is not None:
        ws = r.weights_steps
        if not np.all(np.diff(ws) == 1):
            out.append(_na("repulsion", "lock_in", q, "weight snapshots are not at consecutive steps; the update Gram "
                           "(eq. 5) needs every step's update", "repulsion:slope-detector"))
            return
        if r.weights.shape[1] - 1 < gram_window:
            out.append(_na("repulsion", "lock_in", q, f"needs more than {gram_window} snapshots (window)",
                           "repulsion:rolling-gram"))
            return
        gaps = np.stack([_repulsion.eigengap(_repulsion.rolling_gram_eigenvalues(np.diff(w, axis=0), gram_window, 3))
                         for w in r.weights])
        src = f"sigma_2/sigma_3 of the rolling {gram_window}-update Gram"
        epoch0 = float(ws[0])
    else:
        out.append(_na("repulsion", "lock_in", q, "needs an eigengap series (gap=) or per-step weight snapshots "
                       "(weights=)", "repulsion:slope-detector"))
        return
    if gaps.shape[1] <= lag:
        out.append(_na("repulsion", "lock_in", q, f"gap series shorter than the lag ({lag})", "repulsion:slope-detector"))
        return
    fire = []
    for g in gaps:
        f, _ = _repulsion.slope_detector(g, lag=lag, threshold=threshold, t_min=t_min)
        fire.append(math.inf if f is None else epoch0 + f)
    res["lock_in"] = np.asarray(fire)
    res["gap_end"] = np.array([epoch0 + gaps.shape[1] - 1])
    out.append(_entry("repulsion", "lock_in", q, fire, "measured", "repulsion:slope-detector",
                      f"{src}; slope of log gap over {lag} epochs > {_fmt_num(threshold)}, t >= {t_min}"))
    clocks["lock-in"] = _summary(fire)
    if r.test_acc is not None:
        t50 = _per_run(r, "test_acc", lambda t, a: _clocks.first_hitting_time(t, a, 0.5, direction="above"))
        res["t_test_half"] = t50
        out.append(_entry("repulsion", "t_test_half", "test acc >= 0.5 (grokking epoch of the paper)", t50, "measured",
                          "repulsion:headline"))
        clocks["test 0.5"] = _summary(t50)
