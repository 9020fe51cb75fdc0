"""Calibration study of `grokclocks.forecast`: is "when will this run grok?" right on runs it never saw?

The protocol (splits, metrics, targets) is fixed in `benchmarks/forecast_protocol.md`, committed before any
held-out run was evaluated.  The runs come from two training codes (`benchmarks/forecast_data.py`): the
project's JAX engine (embedding and one-hot MLPs and the transformer; + − × x²+y² ÷ mod p 23-113; AdamW, Adam
with coupled L2, GD with L2; full and mini batches; records every 2-100 steps) and an independent PyTorch code
(`benchmarks/forecast_torch.py`: transformers with and without LayerNorm, embedding and one-hot MLPs; AdamW,
Adam + L2, SGD with momentum; logging every 1-100 steps; test sets of 256, 1,000 or all pairs), each split by
configuration into a fitting and a held-out part.

Phases (run from the repository root):

    python benchmarks/forecast_calibration.py --phase dev          # fitting runs only: nested grouped CV
    python benchmarks/forecast_calibration.py --phase fit --write-model   # the shipped model + one per code
    python benchmarks/forecast_calibration.py --phase evaluate     # the held-out evaluation (once)
    python benchmarks/forecast_calibration.py --phase docs         # rewrite the docs tables from the JSON

`fit` fits the shipped model on the fitting runs of both codes (each code weighing the same) and one model per
code for the held-out-code evaluation, all with `grokclocks.forecast.fit_model` (signals, family and spread by
cross-validation grouped by configuration, recalibration on out-of-configuration PITs), and writes
`results/forecast_models.json`.  `evaluate` reads those models and the held-out runs, and writes
`results/forecast_calibration.json`, the figures and the tables of `docs/forecast.md`: E1 (the shipped model
on the held-out configurations of each code), E2 (each code's model on the other code's held-out runs), per
model family, with bootstrap intervals over independent units; the stop rule replayed through `Monitor` on
every held-out run; the stability of the forecast between neighbouring records.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import forecast_data as D  # noqa: E402

TRAIN_LEVEL, TEST_LEVEL = D.TRAIN_LEVEL, D.TEST_LEVEL
ISSUE_POINTS = (("2x t_train", "t_train", 2.0), ("4x t_train", "t_train", 4.0), ("8x t_train", "t_train", 8.0),
                ("25% budget", "budget", 0.25), ("50% budget", "budget", 0.5))
THRESHOLDS = (0.01, 0.02, 0.05, 0.1, 0.2)
DEFAULT_THRESHOLD = 0.05
TARGETS = {"coverage_90": (0.85, 0.95), "coverage_50": (0.40, 0.60), "cannot_tell": 1 / 3, "false_stop": 0.05}
N_BOOT = 2000
MODELS_JSON = HERE / "results" / "forecast_models.json"
RESULTS_JSON = HERE / "results" / "forecast_calibration.json"


def log(msg: str) -> None:
    print(time.strftime("%H:%M:%S"), msg, flush=True)


def machine() -> dict:
    import scipy

    from grokclocks.verification import _cpu_model

    return {"cpu_model": _cpu_model(), "logical_cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "platform": platform.platform(),
            "loadavg": open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else None}


# ------------------------------------------------------------------------------------------- runs and fits


def load(splits: tuple[str, ...], codes: tuple[str, ...] = ("engine", "torch"), scale: str = "cpu") -> list:
    runs = []
    if "engine" in codes:
        runs += D.load_engine(scale, splits=splits)
    if "torch" in codes:
        runs += D.load_torch(scale, splits=splits)
    return runs


LEGACY_WEIGHT = 1.0  # weight of a legacy engine program relative to a new one (chosen on the fitting runs: dev)


def weighted(runs: list) -> list:
    """The runs' curves with weights: each training code weighs the same in a fit, and within a code each
    cross-validation group (an engine program, a PyTorch configuration) the same, its runs alike (so the
    1,024 legacy runs of 20 programs weigh as 20 programs, not as 1,024 runs)."""
    groups = defaultdict(set)
    size = defaultdict(int)
    for r in runs:
        groups[r.code].add(r.curves.group)
        size[r.curves.group] += 1
    legacy = {r.curves.group for r in runs if r.meta.get("legacy")}
    scale = {code: sum(LEGACY_WEIGHT if g in legacy else 1.0 for g in gs) for code, gs in groups.items()}
    return [dataclasses.replace(r.curves, weight=1000.0 * (LEGACY_WEIGHT if r.curves.group in legacy else 1.0)
                                / (scale[r.code] * size[r.curves.group]))
            for r in runs if LEGACY_WEIGHT > 0 or r.curves.group not in legacy]


def fit(runs: list, label: str) -> tuple:
    from grokclocks.forecast import fit_model

    t0 = time.perf_counter()
    model, report = fit_model(weighted(runs))
    report["fit_wall_s"] = time.perf_counter() - t0
    log(f"fit {label}: {len(runs)} runs, kept {report['kept']}, family {report['family']}, spread x"
        f"{report['spread_inflation']['factor']:.3f} ({report['fit_wall_s']:.0f} s)")
    return model, report


# ------------------------------------------------------------------------------------------- rows


def issue_step(c, kind: str, k: float) -> float:
    return k * c.t_train if kind == "t_train" else k * c.horizon


def eligible(c, tau: float) -> bool:
    """A forecast is issued at τ: the run fits its training set, has not grokked, and τ is before its end."""
    return math.isfinite(c.t_train) and 0 < c.t_train <= tau < c.horizon and c.t_test > tau


def forecast_at(run, tau: float, model):
    """The public `forecast` of a run's records as logged, at τ, with its budget as the horizon and its lr, weight
    decay and optimizer as a user would give them."""
    from grokclocks.forecast import forecast

    c = run.curves
    return forecast(steps=c.steps, train_acc=c.train_acc, test_acc=c.test_acc, train_loss=c.train_loss,
                    test_loss=c.test_loss, weight_norm=c.weight_norm, at_step=tau, horizon=c.horizon, model=model,
                    lr=run.lr, weight_decay=run.weight_decay, optimizer=D.API_OPTIMIZER[run.optimizer])


def issue_rows(runs: list, model) -> list[dict]:
    """One row per (run, issue point) where a forecast is issued: the public `forecast` on the records as logged."""
    rows = []
    for r in runs:
        c = r.curves
        t_tr, t_te = c.t_train, c.t_test
        grok = bool(math.isfinite(t_te) and t_te <= c.horizon)
        for label, kind, k in ISSUE_POINTS:
            tau = issue_step(c, kind, k)
            if not eligible(c, tau):
                continue
            f = forecast_at(r, tau, model)
            row = {"point": label, "code": r.code, "model": r.model, "unit": r.unit, "config": r.config,
                   "legacy": bool(r.meta.get("legacy")),
                   "status": f.status, "grokked": grok, "t_test": t_te if grok else math.inf, "tau": tau,
                   "horizon": c.horizon, "t_train": t_tr, "out_of_range": list(f.out_of_range)}
            if f.status == "forecast":
                row.update(q=[f.interval_90[0], f.interval_50[0], f.t_test, f.interval_50[1], f.interval_90[1]],
                           p=f.p_grok, profile=f.model.split(";")[0])
            rows.append(row)
    return rows


def base_rates(rows: list[dict]) -> dict:
    """The fitting rows' frequency of grokking within the budget, per issue point."""
    out = {}
    for label, _, _ in ISSUE_POINTS:
        g = [r["grokked"] for r in rows if r["point"] == label]
        out[label] = float(np.mean(g)) if g else math.nan
    return out


# ------------------------------------------------------------------------------------------- metrics


def _row_terms(r: dict, rate: float) -> dict:
    """The per-row terms whose sums over units make every metric (so a bootstrap resamples units cheaply)."""
    t = {"n_rows": 1.0, "n_cannot": float(r["status"] == "cannot tell")}
    if r["status"] != "forecast":
        return t
    q, p, g = r["q"], r["p"], r["grokked"]
    t.update(n_fc=1.0, brier=(p - g) ** 2, base=(rate - g) ** 2, c_sum=p)
    for name, lo, hi, a, b in (("90", q[0], q[4], 0.05, 0.95), ("50", q[1], q[3], 0.25, 0.75)):
        t[f"exp{name}"] = max(0.0, min(b, p) - a)
        if g:
            t[f"cov{name}"] = float(lo <= r["t_test"] <= hi)
        else:
            t[f"ccov{name}"] = max(0.0, b - max(a, p)) / (1.0 - p) if p < 1.0 else 0.0
    t["n_g"] = float(g)
    t["n_c"] = float(not g)
    return t


_KEYS = ("n_rows", "n_cannot", "n_fc", "brier", "base", "c_sum", "exp90", "exp50", "cov90", "cov50", "ccov90",
         "ccov50", "n_g", "n_c")


def _ratios(s: np.ndarray) -> dict:
    """Metrics from the summed terms (last axis = _KEYS)."""
    k = {name: s[..., i] for i, name in enumerate(_KEYS)}
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"coverage_90_grokked": k["cov90"] / k["n_g"], "coverage_50_grokked": k["cov50"] / k["n_g"],
                "calibrated_expectation_90_grokked": k["exp90"] / k["c_sum"],
                "calibrated_expectation_50_grokked": k["exp50"] / k["c_sum"],
                "coverage_90_censored": k["ccov90"] / k["n_c"], "coverage_50_censored": k["ccov50"] / k["n_c"],
                "coverage_90_all": (k["cov90"] + k["ccov90"]) / k["n_fc"],
                "coverage_50_all": (k["cov50"] + k["ccov50"]) / k["n_fc"],
                "brier": k["brier"] / k["n_fc"], "brier_base_rate": k["base"] / k["n_fc"],
                "brier_minus_base": (k["brier"] - k["base"]) / k["n_fc"],
                "cannot_tell_share": k["n_cannot"] / k["n_rows"]}


def summarize(rows: list[dict], rates: dict, boot: int = N_BOOT, seed: int = 0) -> dict:
    """Every metric of these rows, with 95 % bootstrap intervals over independent units."""
    if not rows:
        return {"n_rows": 0}
    units = sorted({r["unit"] for r in rows})
    ui = {u: i for i, u in enumerate(units)}
    sums = np.zeros((len(units), len(_KEYS)))
    for r in rows:
        t = _row_terms(r, rates.get(r["point"], math.nan))
        for j, name in enumerate(_KEYS):
            sums[ui[r["unit"]], j] += t.get(name, 0.0)
    point = _ratios(sums.sum(0))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(units), size=(boot, len(units)))
    counts = np.stack([np.bincount(d, minlength=len(units)) for d in draws])
    bs = _ratios(counts @ sums)
    out = {"n_rows": int(sums[:, 0].sum()), "n_forecast": int(sums[:, 2].sum()), "n_grokked": int(sums[:, 12].sum()),
           "n_censored": int(sums[:, 13].sum()), "n_units": len(units)}
    for name, v in point.items():
        lo, hi = np.nanpercentile(bs[name], [2.5, 97.5]) if np.isfinite(bs[name]).any() else (math.nan, math.nan)
        out[name] = float(v)
        out[name + "_ci"] = [float(lo), float(hi)]
    g = [r for r in rows if r["status"] == "forecast" and r["grokked"]]
    if g:
        out["median_abs_log_error"] = float(np.median([abs(math.log(r["q"][2] / r["t_test"])) for r in g]))
        out["median_signed_log_error"] = float(np.median([math.log(r["q"][2] / r["t_test"]) for r in g]))
        out["median_width_90_rel"] = float(np.median([(r["q"][4] - r["q"][0]) / r["t_test"] for r in g]))
    return out


def table(rows: list[dict], rates: dict, by: tuple[str, ...] = ()) -> dict:
    """summarize() per issue point (and per value of the keys in `by`)."""
    out = {}
    keys = sorted({tuple(r[b] for b in by) for r in rows}) if by else [()]
    for key in keys:
        sub = [r for r in rows if tuple(r[b] for b in by) == key]
        name = "/".join(str(k) for k in key) if key else "all"
        out[name] = {label: summarize([r for r in sub if r["point"] == label], rates) for label, _, _ in ISSUE_POINTS}
    return out


def target_check(per_point: dict) -> dict:
    """The protocol's targets on one table (per issue point): met or not, and by how much."""
    out = {}
    for label, m in per_point.items():
        if m.get("n_forecast", 0) == 0:
            continue
        for key, name in (("coverage_90", "coverage_90_grokked"), ("coverage_50", "coverage_50_grokked")):
            lo, hi = TARGETS[key]
            v = m[name]
            if not math.isfinite(v):  # no row of a run that grokked within its budget: not measurable here
                out[f"{key} at {label}"] = {"value": None, "band": [lo, hi], "met": None,
                                            "note": "not measurable: no row of a run that grokked within its budget"}
                continue
            met = lo <= v <= hi
            out[f"{key} at {label}"] = {"value": v, "ci": m[name + "_ci"], "band": [lo, hi], "met": met,
                                        "miss": 0.0 if met or not math.isfinite(v) else (v - hi if v > hi else v - lo)}
        out[f"brier at {label}"] = {"value": m["brier"], "base_rate_brier": m["brier_base_rate"],
                                    "ci_of_difference": m["brier_minus_base_ci"], "met": m["brier"] < m["brier_base_rate"]}
        out[f"cannot tell at {label}"] = {"value": m["cannot_tell_share"], "limit": TARGETS["cannot_tell"],
                                          "met": m["cannot_tell_share"] <= TARGETS["cannot_tell"]}
    return out


# ------------------------------------------------------------------------------------------- live replay


def replay(run, model, thresholds=THRESHOLDS) -> dict:
    """The run fed record by record to `Monitor` (its budget as horizon): first stop step per threshold, flips of
    should_stop at the default threshold, and the point forecasts at every evaluation (for stability)."""
    from grokclocks.forecast import Monitor

    c = run.curves
    mon = Monitor(horizon=c.horizon, model=model, every=10**9, lr=run.lr, weight_decay=run.weight_decay,
                  optimizer=D.API_OPTIMIZER[run.optimizer])
    names = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")
    series = [getattr(c, n) for n in names]
    first = {th: None for th in thresholds}
    state, flips, prev = False, 0, None
    points = []
    t0 = time.perf_counter()
    for i, step in enumerate(c.steps):
        metrics = {n: float(v[i]) for n, v in zip(names, series) if v is not None and not math.isnan(v[i])}
        f = mon.update(float(step), **metrics)
        if f is prev:
            continue
        prev = f
        if f.status == "forecast":
            points.append((float(step), f.t_test))
        for th in thresholds:
            s = mon.should_stop(th)
            if s and first[th] is None:
                first[th] = float(step)
            if th == DEFAULT_THRESHOLD:
                flips += int(s != state)
                state = s
    t_te = c.t_test
    grok = bool(math.isfinite(t_te) and t_te <= c.horizon)
    pairs = [(a, b) for (_, a), (_, b) in zip(points, points[1:])
             if a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)]
    ratios = [max(b / a, a / b) for a, b in pairs]
    within = [max(b / a, a / b) for a, b in pairs if min(a, b) <= c.horizon]  # a forecast inside the budget
    return {"unit": run.unit, "code": run.code, "model": run.model, "grokked": grok, "t_test": t_te if grok else None,
            "t_train": c.t_train, "horizon": c.horizon, "first_stop": first, "flips": flips,
            "n_forecasts": len(points), "max_neighbour_ratio": max(ratios) if ratios else None,
            "n_neighbour_pairs": len(ratios), "n_pairs_over_2": int(sum(x > 2 for x in ratios)),
            "max_ratio_within_budget": max(within) if within else None, "n_pairs_within_budget": len(within),
            "n_pairs_within_budget_over_2": int(sum(x > 2 for x in within)),
            "replay_s": time.perf_counter() - t0, "n_records": int(c.steps.size)}


def stop_summary(reps: list[dict], thresholds=THRESHOLDS, boot: int = N_BOOT, seed: int = 1) -> dict:
    """False stops among runs that grok within their budget, compute saved on the others, per threshold (with
    95 % bootstrap intervals over runs, and the Wilson upper bound of the false-stop rate)."""
    rng = np.random.default_rng(seed)
    g = [r for r in reps if r["grokked"] and math.isfinite(r["t_train"])]
    n = [r for r in reps if not r["grokked"] and math.isfinite(r["t_train"])]
    out = {"n_grokking_runs": len(g), "n_never_runs": len(n), "per_threshold": {}}
    for th in thresholds:
        fs = np.array([r["first_stop"][th] is not None and r["first_stop"][th] < r["t_test"] for r in g], dtype=float)
        sv = np.array([(r["horizon"] - r["first_stop"][th]) / r["horizon"] if r["first_stop"][th] is not None else 0.0
                       for r in n])
        stopped = np.array([r["first_stop"][th] is not None for r in n], dtype=float)
        d = {"false_stop_rate": float(fs.mean()) if fs.size else math.nan, "false_stops": int(fs.sum()),
             "false_stop_wilson_upper_95": _wilson_upper(int(fs.sum()), fs.size),
             "compute_saved_on_never_runs": float(sv.mean()) if sv.size else math.nan,
             "never_runs_stopped": float(stopped.mean()) if stopped.size else math.nan}
        if fs.size:
            d["false_stop_rate_ci"] = list(np.percentile(fs[rng.integers(0, fs.size, (boot, fs.size))].mean(1),
                                                         [2.5, 97.5]))
        if sv.size:
            d["compute_saved_ci"] = list(np.percentile(sv[rng.integers(0, sv.size, (boot, sv.size))].mean(1),
                                                       [2.5, 97.5]))
        out["per_threshold"][str(th)] = d
    fl = [r["flips"] for r in reps]
    out["flips_at_default"] = {"runs": len(fl), "max": max(fl) if fl else None,
                               "share_over_2": float(np.mean([x > 2 for x in fl])) if fl else None,
                               "share_over_1": float(np.mean([x > 1 for x in fl])) if fl else None}
    mr = [r["max_neighbour_ratio"] for r in reps if r["max_neighbour_ratio"] is not None]
    pairs = sum(r["n_neighbour_pairs"] for r in reps)
    out["stability"] = {"runs": len(mr), "pairs": pairs, "share_pairs_over_2": sum(r["n_pairs_over_2"] for r in reps)
                        / pairs if pairs else None, "max_ratio": max(mr) if mr else None,
                        "median_run_max_ratio": float(np.median(mr)) if mr else None,
                        "runs_with_a_6x_swing": int(sum(x >= 6 for x in mr))}
    mw = [r["max_ratio_within_budget"] for r in reps if r["max_ratio_within_budget"] is not None]
    pw = sum(r["n_pairs_within_budget"] for r in reps)
    out["stability_within_budget"] = {
        "note": "neighbouring pairs of which at least one point forecast lies within the run's budget",
        "runs": len(mw), "pairs": pw, "share_pairs_over_2": sum(r["n_pairs_within_budget_over_2"] for r in reps) / pw
        if pw else None, "max_ratio": max(mw) if mw else None, "runs_with_a_6x_swing": int(sum(x >= 6 for x in mw))}
    return out


def _wilson_upper(k: int, n: int, z: float = 1.96) -> float:
    if n == 0:
        return math.nan
    ph = k / n
    den = 1 + z * z / n
    centre = ph + z * z / (2 * n)
    return float((centre + z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n))) / den)


# ------------------------------------------------------------------------------------------- phases


def _folds(runs: list, k: int = 4) -> list[int]:
    """Outer folds for the dev phase: by cross-validation group (engine program, torch configuration)."""
    import hashlib

    return [int(hashlib.sha1(r.curves.group.encode()).hexdigest(), 16) % k for r in runs]


def phase_dev(scale: str, out: Path) -> None:
    """Fitting runs only: nested grouped cross-validation of the whole procedure (fit_model on 3/4 of the
    configurations, forecasts and stop replays on the rest), per code.  What the design choices were tuned on."""
    t0 = time.perf_counter()
    runs = load(("fit",), scale=scale)
    log(f"dev: {len(runs)} fitting runs ({sum(r.code == 'engine' for r in runs)} engine, "
        f"{sum(r.code == 'torch' for r in runs)} torch)")
    folds = _folds(runs)
    rows, reps = [], []
    for k in sorted(set(folds)):
        train = [r for r, f in zip(runs, folds) if f != k]
        test = [r for r, f in zip(runs, folds) if f == k]
        model, _ = fit(train, f"dev fold {k}")
        rates = base_rates(issue_rows(train, model))
        got = issue_rows(test, model)
        for r in got:
            r["rate"] = rates[r["point"]]
        rows += got
        reps += [replay(r, model) for r in test]
    rates = {label: float(np.mean([r["rate"] for r in rows if r["point"] == label])) for label, _, _ in ISSUE_POINTS}
    new_rows = [r for r in rows if not r["legacy"]]
    res = {"legacy_weight": LEGACY_WEIGHT, "by_code": table(rows, rates, ("code",)),
           "by_code_new_designs": table(new_rows, rates, ("code",)), "by_model": table(rows, rates, ("code", "model")),
           "stop": {code: stop_summary([r for r in reps if r["code"] == code]) for code in ("engine", "torch")},
           "wall_s": time.perf_counter() - t0}
    out.write_text(json.dumps(_clean(res), indent=1, allow_nan=False) + "\n")
    write_section(ROOT / "docs" / "forecast.md", "dev", dev_markdown(_clean(res)))
    _print_table(res["by_code"], "dev (out-of-configuration, fitting runs)")
    _print_table(res["by_code_new_designs"], "dev, rows of the new designs only (no legacy engine run)")
    for code, s in res["stop"].items():
        d = s["per_threshold"][str(DEFAULT_THRESHOLD)]
        log(f"stop {code}: false stops {d['false_stops']}/{s['n_grokking_runs']}, saved "
            f"{d['compute_saved_on_never_runs']:.2f} of never runs; stability {s['stability']}")


def phase_fit(scale: str, write: bool) -> None:
    runs = load(("fit",), scale=scale)
    models, reports = {}, {}
    for label, sub in (("both", runs), ("engine", [r for r in runs if r.code == "engine"]),
                       ("torch", [r for r in runs if r.code == "torch"])):
        m, rep = fit(sub, label)
        rep["base_rates"] = base_rates(issue_rows(sub, m))
        models[label], reports[label] = m.as_dict(), rep
    MODELS_JSON.write_text(json.dumps(_clean({"models": models, "reports": reports,
                                              "fitting_runs": _census(runs),
                                              "engine_programs_missing": missing_programs(scale)}),
                                      indent=1, allow_nan=False) + "\n")
    log(f"wrote {MODELS_JSON}")
    if write:
        write_model(models["both"], reports["both"], ROOT / "grokclocks" / "forecast" / "_shipped_model.json")


def write_model(model: dict, report: dict, path: Path) -> None:
    d = dict(model)
    d["summary"] = (f"{model['summary']}; fitted on the calibration study's fitting runs of two training codes "
                    "(benchmarks/forecast_calibration.py; held-out numbers on the forecast page)")
    path.write_text(json.dumps(d, indent=1, allow_nan=False) + "\n")
    log(f"wrote {path}")


def _census(runs: list) -> dict:
    out = {}
    for code in ("engine", "torch"):
        sub = [r for r in runs if r.code == code]
        g = [r for r in sub if math.isfinite(r.curves.t_test) and r.curves.t_test <= r.curves.horizon]
        out[code] = {"runs": len(sub), "configurations": len({r.config for r in sub}),
                     "units": len({r.unit for r in sub}), "grokked_within_budget": len(g),
                     "models": dict(sorted(_count(r.model for r in sub).items())),
                     "optimizers": dict(sorted(_count(r.optimizer for r in sub).items())),
                     "p": sorted({int(r.meta["p"]) for r in sub}),
                     "train_frac": [min((r.meta["train_frac"] for r in sub), default=None),
                                    max((r.meta["train_frac"] for r in sub), default=None)],
                     "ops": dict(sorted(_count(r.meta.get("op", "add") for r in sub).items()))}
    return out


def missing_programs(scale: str) -> dict:
    """The engine programs of the design that are not cached (left out by the protocol's amendment 3), by split."""
    out = defaultdict(list)
    for prog in D.engine_programs(scale):
        if not D.cache_path(prog).exists():
            out[prog.split].append(prog.name)
    return dict(out)


def _count(xs) -> dict:
    d = defaultdict(int)
    for x in xs:
        d[str(x)] += 1
    return d


def phase_evaluate(scale: str, fig_dir: Path) -> None:
    """The held-out evaluation of the protocol (run once, after `fit`)."""
    from grokclocks.forecast import ForecastModel

    t0 = time.perf_counter()
    saved = json.loads(MODELS_JSON.read_text())
    models = {k: ForecastModel.from_dict(v) for k, v in saved["models"].items()}
    rates = {k: saved["reports"][k]["base_rates"] for k in models}
    held = load(("heldout",), scale=scale)
    log(f"evaluate: {len(held)} held-out runs ({sum(r.code == 'engine' for r in held)} engine, "
        f"{sum(r.code == 'torch' for r in held)} torch)")
    res: dict = {"protocol": "benchmarks/forecast_protocol.md", "machine": machine(), "scale": scale,
                 "fitting_runs": saved["fitting_runs"], "held_out_runs": _census(held),
                 "engine_programs_missing_at_fit": saved.get("engine_programs_missing"),
                 "engine_programs_missing_at_evaluation": missing_programs(scale),
                 "selection": {k: {kk: v for kk, v in rep.items() if kk != "base_rates"}
                               for k, rep in saved["reports"].items()}, "base_rates": rates}
    e1 = issue_rows(held, models["both"])
    res["E1"] = {"by_code": table(e1, rates["both"], ("code",)), "by_model": table(e1, rates["both"], ("code", "model")),
                 "pooled": table(e1, rates["both"])}
    res["E1"]["targets"] = {code: target_check(res["E1"]["by_code"][code]) for code in res["E1"]["by_code"]}
    res["E1"]["out_of_range_signals"] = dict(sorted(_count(s for r in e1 for s in r["out_of_range"]).items()))
    res["E1"]["rows_with_a_signal_out_of_range"] = float(np.mean([bool(r["out_of_range"]) for r in e1])) if e1 else None
    e2 = {}
    for fitted, other in (("engine", "torch"), ("torch", "engine")):
        rows = issue_rows([r for r in held if r.code == other], models[fitted])
        t = table(rows, rates[fitted])["all"]
        e2[f"fit {fitted} -> held-out {other}"] = {"table": t, "targets": target_check(t),
                                                  "by_model": table(rows, rates[fitted], ("model",))}
        log(f"E2 fit {fitted} -> {other}: {len(rows)} rows")
    res["E2"] = e2
    _print_table(res["E1"]["by_code"], "E1 held-out configurations")
    reps = [replay(r, models["both"]) for r in held]
    res["stop"] = {"all": stop_summary(reps), **{code: stop_summary([r for r in reps if r["code"] == code])
                                                 for code in ("engine", "torch")}}
    res["replay_seconds_per_update"] = (sum(r["replay_s"] for r in reps) / max(1, sum(r["n_records"] for r in reps)))
    res["example_out_of_range"] = _out_of_range_example(held, models["both"])
    res["levi_closed_form"] = levi_check(scale)
    res["evaluate_wall_s"] = time.perf_counter() - t0
    RESULTS_JSON.write_text(json.dumps(_clean(res), indent=1, allow_nan=False) + "\n")
    figure(res, fig_dir / "forecast_reliability.png", e1)
    write_docs_section(_clean(res), ROOT / "docs" / "forecast.md")
    log(f"wrote {RESULTS_JSON} ({res['evaluate_wall_s']:.0f} s)")


def _out_of_range_example(runs: list, model) -> dict | None:
    """The first held-out row (in run order) whose forecast left a signal out: its forecast line and reason."""
    for r in runs:
        c = r.curves
        for label, kind, k in ISSUE_POINTS:
            tau = issue_step(c, kind, k)
            if not eligible(c, tau):
                continue
            f = forecast_at(r, tau, model)
            if f.out_of_range:
                return {"run": r.unit, "model": r.model, "point": label, "line": f.line(), "reason": f.reason,
                        "t_test": c.t_test if math.isfinite(c.t_test) else None}
    return None


def _print_table(t: dict, title: str) -> None:
    log(title)
    for key, per in t.items():
        for label, m in per.items():
            if not m.get("n_forecast"):
                continue
            log(f"  {key:22s} {label:11s} n {m['n_forecast']:4d} (g {m['n_grokked']:4d}) cov90 "
                f"{m['coverage_90_grokked']:.2f} [exp {m['calibrated_expectation_90_grokked']:.2f}] cov50 "
                f"{m['coverage_50_grokked']:.2f} cens90 {m['coverage_90_censored']:.2f} brier {m['brier']:.3f} "
                f"(base {m['brier_base_rate']:.3f}) cannot {m['cannot_tell_share']:.2f}")


def _clean(o):
    """JSON-ready: numpy scalars as Python numbers, inf / nan as null (strict JSON)."""
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, np.ndarray):
        return _clean(o.tolist())
    if isinstance(o, (bool, np.bool_)):
        return bool(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        return float(o) if math.isfinite(o) else None
    return o


# ------------------------------------------------------------------------------------------- the linear model

# t*_gen / t*_tr = 1.60 at lambda = 0.5 and 2.43 at 0.7 (eps 1e-3): the forecast is issued at 1.2 t_train
LEVI = {"cpu": {"lams": (0.5, 0.7), "d_ins": (250, 500), "seeds": tuple(range(12)), "eps": 1e-3, "eta0": 0.01,
                "n_gen": 2000, "record_every": 5},
        "gpu": {"lams": (0.5, 0.7, 0.8), "d_ins": (500, 1000, 2000), "seeds": tuple(range(32)), "eps": 1e-3,
                "eta0": 0.01, "n_gen": 4000, "record_every": 5}}


def levi_check(scale: str) -> dict:
    """The linear closed form as a forecast: explicit GD of Levi et al.'s teacher-student model (cached in
    results/forecast_runs/levi_runs.npz), forecast at 1.2 x t_train with levi_params; every run groks."""
    from grokclocks.clocks import first_hitting_time
    from grokclocks.forecast import forecast
    from grokclocks.linear import ERF_SQRT2, t_star

    c = LEVI[scale]
    path = D.ENGINE_CACHE / ("levi_runs.npz" if scale == "cpu" else "levi_runs_gpu.npz")
    if path.exists():
        with np.load(path) as f:
            data = {k: f[k] for k in f.files}
    else:
        from grokclocks.sim.linear import draw_teacher_student, run_gd

        data, t0 = {}, time.perf_counter()
        for lam in c["lams"]:
            for d_in in c["d_ins"]:
                steps = int(round(2.0 * float(t_star("gen", lam, c["eps"], c["eta0"])) / c["record_every"])) \
                    * c["record_every"]
                traj = run_gd(draw_teacher_student(d_in, lam, seeds=c["seeds"]), c["eta0"], steps,
                              record_every=c["record_every"], eps=c["eps"], n_gen=c["n_gen"])
                key = f"lam{lam:g}_d{d_in}"
                data[f"{key}_times"] = np.asarray(traj.times)
                data[f"{key}_acc_train"] = np.asarray(traj.metrics["acc_train"], dtype=np.float32)
                data[f"{key}_acc_gen"] = np.asarray(traj.metrics["acc_gen"], dtype=np.float32)
        data["wall_s"] = np.asarray(time.perf_counter() - t0)
        np.savez_compressed(path, **data)
    cov50, cov90, errs = [], [], []
    for lam in c["lams"]:
        for d_in in c["d_ins"]:
            key = f"lam{lam:g}_d{d_in}"
            t = data[f"{key}_times"].astype(np.float64)
            for tr, ge in zip(data[f"{key}_acc_train"].astype(np.float64), data[f"{key}_acc_gen"].astype(np.float64)):
                t_tr = first_hitting_time(t, tr, ERF_SQRT2, direction="above")
                t_te = first_hitting_time(t, ge, ERF_SQRT2, direction="above")
                tau = 1.2 * t_tr
                if not (math.isfinite(t_tr) and math.isfinite(t_te) and tau < t_te and tau < t[-1]):
                    continue
                f = forecast(steps=t, train_acc=tr, test_acc=ge, at_step=tau, horizon=float(t[-1]),
                             train_level=ERF_SQRT2, test_level=ERF_SQRT2,
                             levi_params={"lam": lam, "eps": c["eps"], "eta0": c["eta0"], "d_in": d_in})
                cov50.append(f.interval_50[0] <= t_te <= f.interval_50[1])
                cov90.append(f.interval_90[0] <= t_te <= f.interval_90[1])
                errs.append(abs(math.log(f.t_test / t_te)))
    return {"config": {k: list(v) if isinstance(v, tuple) else v for k, v in c.items()}, "issue_point": "1.2x t_train",
            "n": len(errs), "coverage_50": float(np.mean(cov50)), "coverage_90": float(np.mean(cov90)),
            "median_abs_log_error": float(np.median(errs)), "wall_s": float(data["wall_s"])}


# ------------------------------------------------------------------------------------------- figure and docs


def figure(res: dict, path: Path, rows: list[dict]) -> None:
    """Reliability of P(grok by the budget) and the stop rule's trade-off curve, held-out runs of both codes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11.0, 4.2), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    ax1.plot([0, 1], [0, 1], color="0.6", ls=":")
    for code, colour in (("engine", "tab:blue"), ("torch", "tab:orange")):
        sub = [r for r in rows if r["code"] == code and r["status"] == "forecast"]
        if not sub:
            continue
        p = np.array([r["p"] for r in sub])
        o = np.array([r["grokked"] for r in sub], dtype=float)
        which = np.clip((p * 10).astype(int), 0, 9)
        xs, ys = [], []
        for b in range(10):
            sel = which == b
            if sel.sum() >= 5:
                xs.append(p[sel].mean())
                ys.append(o[sel].mean())
        ax1.plot(xs, ys, "o-", color=colour, label=f"{code} ({len(sub)} rows)")
    ax1.set_xlabel("forecast P(grok by the budget)")
    ax1.set_ylabel("observed frequency (held-out runs)")
    ax1.set_title("reliability, all issue points (bins of >= 5 rows)", fontsize=9)
    ax1.legend(fontsize=8)
    for code, colour in (("engine", "tab:blue"), ("torch", "tab:orange")):
        st = res["stop"].get(code)
        if not st:
            continue
        th = [float(t) for t in st["per_threshold"]]
        fs = [st["per_threshold"][str(t)]["false_stop_rate"] for t in th]
        sv = [st["per_threshold"][str(t)]["compute_saved_on_never_runs"] for t in th]
        ax2.plot(fs, sv, "o-", color=colour, label=code)
        for t, x, y in zip(th, fs, sv):
            ax2.annotate(f"{t:g}", (x, y), textcoords="offset points", xytext=(4, 2), fontsize=7)
    ax2.axvline(TARGETS["false_stop"], color="0.4", ls=":", lw=1)
    ax2.set_xlabel("false stops (share of runs that grok within the budget)")
    ax2.set_ylabel("compute saved on runs that never grok")
    ax2.set_title("stop rule: thresholds of P(grok by the budget)", fontsize=9)
    ax2.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def _f(x, fmt: str = ".2f") -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, fmt)


def _ci(m: dict, key: str, fmt: str = ".2f") -> str:
    lo, hi = m.get(key + "_ci", [None, None])
    return f"{_f(m.get(key), fmt)} [{_f(lo, fmt)}, {_f(hi, fmt)}]"


def _per_point_rows(name: str, per: dict) -> list[str]:
    out = []
    for label, m in per.items():
        if not m.get("n_rows"):
            continue
        out.append(f"| {name} | {label} | {m['n_forecast']} ({m['n_grokked']} / {m['n_censored']}) | "
                   f"{_ci(m, 'coverage_90_grokked')} ({_f(m.get('calibrated_expectation_90_grokked'))}) | "
                   f"{_ci(m, 'coverage_50_grokked')} | {_f(m.get('coverage_90_censored'))} | "
                   f"{_f(m.get('brier'), '.3f')} ({_f(m.get('brier_base_rate'), '.3f')}) | "
                   f"{_f(m.get('cannot_tell_share'))} | {_f(m.get('median_abs_log_error'))} |")
    return out


_HEAD = ["| set | issue point | n forecast (grokked / censored) | 90 % covers, grokked [95 % CI] (calibrated "
         "expectation) | 50 % covers, grokked [CI] | 90 %, censored | Brier (base rate) | cannot tell | median "
         "\\|log err\\| |", "|---|---|---|---|---|---|---|---|---|"]


def _range(vals: list) -> str:
    v = [x for x in vals if x is not None and math.isfinite(x)]
    return "–" if not v else f"{min(v):.2f}–{max(v):.2f}"


def glance_markdown(res: dict) -> list[str]:
    """The page's summary lines, every number from the results (one line per evaluation, then the stop rule)."""
    out = ["At a glance (held-out runs; each line one evaluation of the protocol, ranges over the five issue points; "
           "the tables below give each number with its bootstrap interval):", ""]
    evals = [(f"E1 {code}", per, res["E1"]["targets"][code]) for code, per in res["E1"]["by_code"].items()]
    evals += [(f"E2 {name}", e["table"], e["targets"]) for name, e in res["E2"].items()]
    for name, per, tg in evals:
        pts = [m for m in per.values() if m.get("n_forecast")]
        n_b = sum(1 for k, v in tg.items() if k.startswith("brier") and v["met"])
        n_bt = sum(1 for k in tg if k.startswith("brier"))
        n_na = sum(v["met"] is None for v in tg.values())
        out.append(f"* **{name}**: {sum(v['met'] is True for v in tg.values())} of {len(tg) - n_na} targets met"
                   + (f" ({n_na} not measurable)" if n_na else "") + "; 90 % interval "
                   f"covers {_range([m.get('coverage_90_grokked') for m in pts])} of the grokking runs (target "
                   f"0.85–0.95), 50 % covers {_range([m.get('coverage_50_grokked') for m in pts])} (0.40–0.60); "
                   f"censored runs, 90 %: {_range([m.get('coverage_90_censored') for m in pts])}; Brier below the "
                   f"base rate's at {n_b} of {n_bt} points; \"cannot tell\" on "
                   f"{_range([m.get('cannot_tell_share') for m in pts])} of the rows.")
    for code in ("engine", "torch", "all"):
        st = res["stop"].get(code)
        if not st:
            continue
        d = st["per_threshold"][str(DEFAULT_THRESHOLD)]
        out.append(f"* **stop rule, {code}** (`should_stop({DEFAULT_THRESHOLD})`): {d['false_stops']} false stops of "
                   f"{st['n_grokking_runs']} runs that grok within their budget (rate {_f(d['false_stop_rate'], '.3f')}, "
                   f"95 % Wilson upper bound {_f(d['false_stop_wilson_upper_95'], '.3f')}; target ≤ 0.05); compute "
                   f"saved on the {st['n_never_runs']} runs that do not grok: {_f(d['compute_saved_on_never_runs'])}.")
    return out + [""]


def stop_table(stop: dict) -> list[str]:
    """The stop rule's trade-off per code and threshold, as Markdown table lines."""
    out = ["| code | threshold | false stops | rate [95 % CI] | Wilson upper | compute saved [CI] | never-grok runs "
           "stopped |", "|---|---|---|---|---|---|---|"]
    for code in ("engine", "torch", "all"):
        st = stop.get(code)
        if not st:
            continue
        for th, d in st["per_threshold"].items():
            out.append(f"| {code} | {th} | {d['false_stops']} / {st['n_grokking_runs']} | {_ci(d, 'false_stop_rate')} | "
                       f"{_f(d['false_stop_wilson_upper_95'])} | {_f(d['compute_saved_on_never_runs'])} "
                       f"[{_f((d.get('compute_saved_ci') or [None])[0])}, "
                       f"{_f((d.get('compute_saved_ci') or [None, None])[1])}] | "
                       f"{_f(d['never_runs_stopped'])} of {st['n_never_runs']} |")
    return out


def dev_markdown(dev: dict) -> str:
    """The page's section on the fitting runs' nested cross-validation (`--phase dev`): not held out (the design
    was chosen on these runs), but out of configuration and 16x more grokking runs than the held-out split."""
    out = ["Nested cross-validation on the fitting runs (`--phase dev`: the whole fitting procedure on 3/4 of the "
           "cross-validation groups, scored on the rest). These runs are not held out: the design was chosen on "
           "them. They are out of configuration, and they hold many more runs that grok, which is what a "
           "false-stop rate needs.", ""]
    for code, per in dev["by_code"].items():
        pts = [m for m in per.values() if m.get("n_forecast")]
        out.append(f"* **{code}**: 90 % interval covers {_range([m.get('coverage_90_grokked') for m in pts])} of the "
                   f"grokking rows, 50 % {_range([m.get('coverage_50_grokked') for m in pts])}; censored rows, 90 %: "
                   f"{_range([m.get('coverage_90_censored') for m in pts])}; Brier "
                   f"{_range([m.get('brier') for m in pts])} against the base rate's "
                   f"{_range([m.get('brier_base_rate') for m in pts])}; \"cannot tell\" "
                   f"{_range([m.get('cannot_tell_share') for m in pts])}.")
    out += ["", "Stop rule on the fitting runs (out of fold):", ""] + stop_table(dev["stop"])
    return "\n".join(out)


def write_section(page: Path, name: str, text: str) -> None:
    """Replace the generated section `name` of a docs page (between its begin and end markers)."""
    page_text = page.read_text()
    begin, end = f"<!-- {name}:begin (written by benchmarks/forecast_calibration.py) -->", f"<!-- {name}:end -->"
    if begin not in page_text or end not in page_text:
        return
    i, j = page_text.index(begin) + len(begin), page_text.index(end)
    page.write_text(page_text[:i] + "\n" + text + "\n" + page_text[j:])


def calibration_markdown(res: dict) -> str:
    fr, hr = res["fitting_runs"], res["held_out_runs"]
    out = glance_markdown(res) + ["Fitting runs: " + "; ".join(f"{code} {d['runs']} runs ({d['grokked_within_budget']} grok within their "
                                        f"budget, {d['configurations']} configurations)" for code, d in fr.items())
           + ".  Held-out runs: " + "; ".join(f"{code} {d['runs']} runs ({d['grokked_within_budget']} grok, "
                                              f"{d['configurations']} configurations)" for code, d in hr.items())
           + ".", "",
           "**E1, held-out configurations** (the shipped model, fitted on the fitting runs of both codes). Rows: "
           "runs that fit their training set and had not grokked at the issue point; coverage among the rows whose "
           "run grokked within its budget, with a 95 % bootstrap interval over independent units (configuration × "
           "seed) and, in brackets, what a calibrated forecaster would give on the same rows; on the censored rows "
           "(no grokking by the budget) the D-calibration share; Brier score of P(grok by the budget) against the "
           "base rate's.", ""] + _HEAD
    for code, per in res["E1"]["by_code"].items():
        out += _per_point_rows(f"**{code}**", per)
    out += ["", "By model family (E1):", ""] + _HEAD
    for key, per in res["E1"]["by_model"].items():
        out += _per_point_rows(key, per)
    out += ["", "**E2, held-out training code** (a model fitted on one code's fitting runs only, evaluated on the "
            "other code's held-out runs):", ""] + _HEAD
    for name, e in res["E2"].items():
        out += _per_point_rows(name, e["table"])
    out += ["", "Targets (protocol; each issue point):", "", "| evaluation | met | missed (value, band) |",
            "|---|---|---|"]
    for name, tg in [(f"E1 {k}", v) for k, v in res["E1"]["targets"].items()] + \
            [(f"E2 {k}", v["targets"]) for k, v in res["E2"].items()]:
        met = [k for k, v in tg.items() if v["met"]]
        na = [k for k, v in tg.items() if v["met"] is None]
        miss = [f"{k}: {_f(v['value'], '.3f')}" + (f" (band {v['band'][0]}–{v['band'][1]}, off by {v['miss']:+.3f})"
                                                   if "band" in v else f" (base {_f(v.get('base_rate_brier'), '.3f')})"
                                                   if "base_rate_brier" in v else "")
                for k, v in tg.items() if v["met"] is False]
        out.append(f"| {name} | {len(met)} of {len(tg) - len(na)}"
                   + (f" ({len(na)} not measurable: no grokking run at {', '.join(na)})" if na else "")
                   + f" | {'; '.join(miss) or 'none'} |")
    out += ["", "**Stop rule** (`Monitor.should_stop`, every held-out run replayed record by record with its budget as "
            "horizon): false stops among the runs that grok within their budget (stopped before their t_test), with a "
            "bootstrap interval and the Wilson 95 % upper bound; compute saved on the runs that do not grok, the mean "
            "of (budget − stop step) / budget.", "",
            ] + stop_table(res["stop"])
    s = res["stop"]["all"]
    out += ["", f"Flips of `should_stop(0.05)` along a run: at most {s['flips_at_default']['max']}; runs with more "
            f"than one: {_f(s['flips_at_default']['share_over_1'])}.  Stability of the point forecast between "
            f"neighbouring evaluations: {s['stability']['pairs']} pairs, {_f(s['stability']['share_pairs_over_2'], '.4f')} "
            f"of them change by more than 2×, the largest change {_f(s['stability']['max_ratio'])}× "
            f"({s['stability']['runs_with_a_6x_swing']} of {s['stability']['runs']} runs with a 6× swing; among the "
            f"pairs with a forecast inside the budget, {_f(s['stability_within_budget']['share_pairs_over_2'], '.4f')} "
            f"change by more than 2×, the largest {_f(s['stability_within_budget']['max_ratio'])}×, "
            f"{s['stability_within_budget']['runs_with_a_6x_swing']} runs with a 6× swing).  `Monitor` replay cost: "
            f"{1e6 * res['replay_seconds_per_update']:.0f} µs per update on average.", ""]
    oor = res["E1"].get("out_of_range_signals", {})
    out += [f"Signals outside the fitting range (held-out rows, E1): {_f(res['E1'].get('rows_with_a_signal_out_of_range'))}"
            f" of the rows had at least one ({', '.join(f'{k} {v}' for k, v in oor.items()) or 'none'}); each was left "
            "out and the forecast fell back to a profile without it."]
    ex = res.get("example_out_of_range")
    if ex:
        out += ["", f"An example (the first held-out row, in run order, with a signal out of range): {ex['model']} run "
                f"`{ex['run']}` at {ex['point']} (actual t_test: "
                f"{'never within the budget' if ex['t_test'] is None else format(ex['t_test'], ',.0f')}):", "",
                "```text", ex["line"], ex["reason"], "```"]
    miss = res.get("engine_programs_missing_at_evaluation") or {}
    if any(miss.values()):
        out += ["", "Engine programs of the design left out (protocol amendment 3: they cannot run as drawn, their "
                "mini-batch of 512 being larger than their training set): "
                + "; ".join(f"{split}: {len(v)} ({', '.join(f'`{n}`' for n in v)})" for split, v in miss.items())
                + "."]
    lv = res.get("levi_closed_form")
    if lv:
        out += ["", f"The linear closed form (not part of the model above): explicit GD of Levi et al.'s teacher-student "
                f"model, λ ∈ {lv['config']['lams']}, d_in ∈ {lv['config']['d_ins']}, {len(lv['config']['seeds'])} seeds "
                f"each, forecast t*_gen at 1.2 × t_train: n = {lv['n']}, coverage 50 % {_f(lv['coverage_50'])}, 90 % "
                f"{_f(lv['coverage_90'])}, median |log err| {_f(lv['median_abs_log_error'], '.3f')}."]
    sel = res["selection"]["both"]
    out += ["", f"Shipped model: signal groups {', '.join(sel['kept'])} (dropped: "
            + ("; ".join(f"{g}: {why}" for g, why in sel["dropped"].items()) or "none")
            + f"); family {sel['family']}; spread ×{_f(sel['spread_inflation']['factor'], '.3f')}; "
            f"{sel['n_runs']} runs, {sel['n_rows']} rows, {sel['n_configs']} cross-validation groups."]
    return "\n".join(out)


def write_docs_section(res: dict, page: Path) -> None:
    write_section(page, "calibration", calibration_markdown(res))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--phase", required=True, choices=("dev", "fit", "evaluate", "docs"))
    ap.add_argument("--write-model", action="store_true", help="with --phase fit: write grokclocks/forecast/_shipped_model.json")
    ap.add_argument("--figures", type=Path, default=ROOT / "docs" / "figures")
    args = ap.parse_args(argv)
    if args.phase == "dev":
        phase_dev(args.scale, HERE / "results" / "forecast_dev.json")
    elif args.phase == "fit":
        phase_fit(args.scale, args.write_model)
    elif args.phase == "evaluate":
        phase_evaluate(args.scale, args.figures)
    else:
        write_docs_section(json.loads(RESULTS_JSON.read_text()), ROOT / "docs" / "forecast.md")
        dev = HERE / "results" / "forecast_dev.json"
        if dev.exists():
            write_section(ROOT / "docs" / "forecast.md", "dev", dev_markdown(json.loads(dev.read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
