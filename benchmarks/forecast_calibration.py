"""Calibration study of `grokclocks.forecast`: how good is "when will this run grok?" on runs it never saw.

Two sets of modular-addition runs trained by the engine (`grokclocks.sim.modular.train_modular`, AdamW with
decoupled weight decay, full batch, cross-entropy, train level 1.0, test level 0.99):

* the fitting set: embedding MLP (spec `clocks:appB`, embedding 64, hidden 128), moduli p in {31, 37, 41}, train
  fractions {0.6, 0.75, 0.9}, weight decays {0, 0.2, 0.5, 1, 2, 4}, learning rates {3e-3, 8e-3}, seeds 0-4 (540 runs);
* the held-out set: other moduli (23, 29, 43), train fractions (0.55, 0.7, 0.78, 0.85), weight decays (0.1, 0.35,
  1.5, 3), learning rates (5e-3, 1.2e-2) and seeds (5-11) (448 runs), and a model the fit never sees, the
  one-layer transformer of spec `uniformity:setup` (p = 23, d_model 32, 36 runs).

Runs that never grok within their budget (weight decay 0, small weight decays) are part of both sets.

Phase "train" trains each program (one compiled program per model, p and train fraction: the weight decays,
learning rates and seeds are vmapped) and caches its curves in `benchmarks/results/forecast_runs/` as
compressed npz (float32 curves, the grid and the wall time), so an interruption loses at most one program.
Phase "fit" fits the forecaster's model (`grokclocks.forecast.fit_model`) on the fitting set only, chooses
its signals and its interval shape by cross-validation over the fitting set's configurations (grouped
k-fold: no configuration is in its own validation fold), then evaluates once on the held-out set at the
issue points a user knows in real time (2x, 4x, 8x the step at which the train accuracy first reached its
level; 25 % and 50 % of the budget), with two baselines fitted on the fitting set: (a) t_test = c t_train,
(b) t_test - t_train proportional to 1/(lr wd).  It writes `benchmarks/results/forecast_calibration.json`,
the reliability figure `docs/figures/forecast_reliability.png` and (with `--write-model`) the shipped
model `grokclocks/forecast/_calibration.py`.

Run from the repository root:

    python benchmarks/forecast_calibration.py                 # train what is missing, fit, evaluate
    python benchmarks/forecast_calibration.py --phase train   # only train (resumable)
    python benchmarks/forecast_calibration.py --phase fit --write-model
    python benchmarks/forecast_calibration.py --scale gpu     # larger moduli and models, more seeds
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
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

TRAIN_LEVEL, TEST_LEVEL = 1.0, 0.99
RECORD_EVERY = 20


@dataclasses.dataclass(frozen=True)
class Program:
    """One compiled engine program: a model at one modulus and train fraction, a grid of wd x lr x seeds."""

    split: str  # "fit" or "heldout"
    model: str
    p: int
    train_frac: float
    weight_decay: tuple[float, ...]
    lr: tuple[float, ...]
    seeds: tuple[int, ...]
    steps: int
    model_kwargs: tuple[tuple[str, int], ...]
    warmup_steps: int = 0

    @property
    def name(self) -> str:
        return f"{self.split}_{self.model}_p{self.p}_f{self.train_frac:g}"

    @property
    def n_runs(self) -> int:
        return len(self.weight_decay) * len(self.lr) * len(self.seeds)


MLP = (("d_embed", 64), ("d_hidden", 128))
TRANSFORMER = (("d_model", 32), ("n_heads", 2), ("d_head", 16), ("d_mlp", 64))


def programs(scale: str) -> list[Program]:
    """The study's programs, fitting set first (the order they are trained in)."""
    if scale == "cpu":
        # measured on 2 cores: the embedding MLP at p = 23, frac 0.4 reached test accuracy 0.38-0.75 in 3000 steps
        # (0/60 grokked), so every program here has >= 0.55 of the pairs in training; higher fractions grok
        # sooner (p = 31: frac 0.5 at 620-2420 steps, frac 0.7 at 200-800, lr 3e-3 / 6e-3, wd 0.5-2)
        fit = [Program("fit", "embedding_mlp", p, f, (0.0, 0.2, 0.5, 1.0, 2.0, 4.0), (3e-3, 8e-3), tuple(range(5)),
                       s, MLP) for p in (31, 37, 41) for f, s in ((0.6, 1600), (0.75, 1000), (0.9, 600))]
        held = [Program("heldout", "embedding_mlp", p, f, (0.1, 0.35, 1.5, 3.0), (5e-3, 1.2e-2), tuple(range(5, 12)),
                        s, MLP) for p, f, s in ((29, 0.55, 1800), (29, 0.7, 1200), (29, 0.85, 800), (43, 0.7, 1200),
                                                (43, 0.85, 800), (23, 0.7, 1200), (23, 0.78, 1000), (23, 0.85, 800))]
        # measured (p = 23, frac 0.7, d_model 32, 2000 steps): wd 1 groks at 1200 (lr 3e-3) / 620 (lr 1e-2), wd 3 not
        held += [Program("heldout", "transformer", 23, f, (0.5, 1.0, 2.0), (3e-3, 1e-2), (5, 6, 7), s,
                         TRANSFORMER, warmup_steps=10) for f, s in ((0.6, 2000), (0.8, 1600))]
        return fit + held
    if scale == "gpu":  # not run yet: the same design at the papers' sizes
        mlp = (("d_embed", 128), ("d_hidden", 512))
        tr = (("d_model", 128), ("n_heads", 4), ("d_head", 32), ("d_mlp", 512))
        fit = [Program("fit", "embedding_mlp", p, f, (0.0, 0.1, 0.3, 0.6, 1.0, 2.0, 3.0), (5e-4, 1e-3, 2e-3),
                       tuple(range(16)), 12000, mlp) for p in (59, 79, 97) for f in (0.3, 0.4, 0.5)]
        held = [Program("heldout", "embedding_mlp", p, f, (0.05, 0.45, 1.5, 4.0), (7e-4, 3e-3), tuple(range(16, 32)),
                        12000, mlp) for p in (67, 89, 113) for f in (0.35, 0.45, 0.6)]
        held += [Program("heldout", "transformer", p, f, (0.3, 1.0, 3.0), (1e-3, 3e-3), tuple(range(16, 32)), 12000,
                         tr, warmup_steps=10) for p in (59, 97) for f in (0.3, 0.5)]
        held += [Program("heldout", "tian_quadratic", 71, f, (5e-5, 2e-4), (1e-3,), tuple(range(16, 24)), 12000,
                         (("K", 2048),)) for f in (0.4, 0.6)]
        return fit + held
    raise SystemExit(f"--scale must be cpu or gpu (got {scale!r})")


def cache_path(cache: Path, prog: Program) -> Path:
    return cache / f"{prog.name}.npz"


def train_program(prog: Program, cache: Path) -> dict:
    """Train one program (or read it from the cache) and return its arrays."""
    path = cache_path(cache, prog)
    if path.exists():
        with np.load(path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    from grokclocks.sim.modular import train_modular

    t0 = time.perf_counter()
    kw = {}
    if prog.model == "tian_quadratic":
        kw = {"optimizer": "adam", "loss": "centred_mse"}  # Tian's coupled L2 (spec repulsion:setup)
    traj = train_modular(prog.model, prog.p, train_frac=prog.train_frac, seeds=prog.seeds,
                         model_kwargs=dict(prog.model_kwargs), optimizer=kw.get("optimizer", "adamw"),
                         lr=list(prog.lr), weight_decay=list(prog.weight_decay), betas=(0.9, 0.98),
                         warmup_steps=prog.warmup_steps, loss=kw.get("loss", "ce"), steps=prog.steps,
                         record_every=RECORD_EVERY, train_level=TRAIN_LEVEL, test_level=TEST_LEVEL,
                         on_divergence="flag")
    wall = time.perf_counter() - t0
    # grid axes of train_modular: (weight_decay, lr) when both are sequences of length > 1 -> (n_wd, n_lr, n_seeds)
    shape = (len(prog.weight_decay), len(prog.lr), len(prog.seeds))
    out = {k: np.asarray(traj.metrics[k], dtype=np.float32).reshape(shape + (-1,))
           for k in ("acc_train", "acc_test", "loss_train", "loss_test", "param_norm")}
    out.update(times=np.asarray(traj.times, dtype=np.int64), weight_decay=np.asarray(prog.weight_decay),
               lr=np.asarray(prog.lr), seeds=np.asarray(prog.seeds), wall_s=np.asarray(wall),
               diverged=np.asarray(traj.extras["diverged"]).reshape(shape))
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.npz")
    np.savez_compressed(tmp, **out)
    os.replace(tmp, path)
    return out


def machine() -> dict:
    import jax
    import scipy

    from grokclocks.verification import _cpu_model

    return {"cpu_model": _cpu_model(), "logical_cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "jax": jax.__version__,
            "platform": platform.platform()}


def phase_train(scale: str, cache: Path, log) -> None:
    progs = programs(scale)
    total = sum(p.n_runs for p in progs)
    log(f"{len(progs)} programs, {total} runs ({sum(p.n_runs for p in progs if p.split == 'fit')} fitting, "
        f"{sum(p.n_runs for p in progs if p.split == 'heldout')} held out)")
    for k, prog in enumerate(progs):
        done = cache_path(cache, prog).exists()
        t0 = time.perf_counter()
        d = train_program(prog, cache)
        tt = d["acc_test"]
        grok = (tt >= TEST_LEVEL).any(-1)
        log(f"[{k + 1}/{len(progs)}] {prog.name}: {prog.n_runs} runs x {prog.steps} steps, "
            f"{'cached' if done else f'{time.perf_counter() - t0:.0f} s'} (train wall {float(d['wall_s']):.0f} s); "
            f"grokked {int(grok.sum())}/{grok.size}")


# ------------------------------------------------------------------------------------------- phase fit

ISSUE_POINTS = (("2x t_train", "t_train", 2.0), ("4x t_train", "t_train", 4.0), ("8x t_train", "t_train", 8.0),
                ("25% budget", "budget", 0.25), ("50% budget", "budget", 0.5))
TARGETS = {"coverage_90": (0.85, 0.95), "coverage_50": (0.40, 0.60), "medlog_ratio_at_4x": 0.6}


def load_runs(scale: str, cache: Path, split: str) -> tuple[list, list[dict]]:
    """(RunCurves, metadata) of every cached, non-diverged run of one split."""
    from grokclocks.forecast import RunCurves

    runs, meta = [], []
    for prog in programs(scale):
        if prog.split != split or not cache_path(cache, prog).exists():
            continue
        d = train_program(prog, cache)
        t = d["times"].astype(np.float64)
        for i, wd in enumerate(d["weight_decay"]):
            for j, lr in enumerate(d["lr"]):
                for k, seed in enumerate(d["seeds"]):
                    if bool(d["diverged"][i, j, k]):
                        meta.append({"diverged": True, "program": prog.name})
                        continue
                    get = lambda name: d[name][i, j, k].astype(np.float64)  # noqa: E731
                    r = RunCurves(t, get("acc_train"), get("acc_test"), get("loss_train"), get("loss_test"),
                                  get("param_norm"), horizon=float(t[-1]), decay_rate=float(lr * wd),
                                  group=f"{prog.model}-p{prog.p}",  # one fold per modulus: selection and spread see new moduli
                                  train_level=TRAIN_LEVEL, test_level=TEST_LEVEL)
                    runs.append(r)
                    meta.append({"diverged": False, "program": prog.name, "model": prog.model, "p": prog.p,
                                 "train_frac": prog.train_frac, "weight_decay": float(wd), "lr": float(lr),
                                 "seed": int(seed), "t_train": r.t_train, "t_test": r.t_test, "horizon": r.horizon})
    return runs, [m for m in meta if not m["diverged"]]


def issue_step(r, kind: str, k: float) -> float:
    return k * r.t_train if kind == "t_train" else k * r.horizon


def eligible(r, tau: float) -> bool:
    """A forecast is issued at τ: the run fits its training set, has not grokked, and τ is before its end."""
    return math.isfinite(r.t_train) and 0 < r.t_train <= tau < r.horizon and r.t_test > tau


# --- baselines: censored lognormal laws fitted on the fitting set, conditioned on t_test > τ at issue ---------


def fit_baselines(runs: list) -> dict:
    from grokclocks.forecast._model import fit_aft

    ok = [r for r in runs if math.isfinite(r.t_train) and r.t_train > 0]
    # (a) t_test = c t_train: log(t_test / t_train) ~ N(log c, s^2), censored at log(horizon / t_train)
    y = [math.log((r.t_test if math.isfinite(r.t_test) else r.horizon) / r.t_train) for r in ok]
    cens = [not math.isfinite(r.t_test) for r in ok]
    a = fit_aft([{}] * len(ok), y, cens, features=(), ridge=0.0)
    # (b) t_test - t_train = k / (lr wd): log((t_test - t_train) lr wd) ~ N(log k, s^2); wd = 0 never groks
    okb = [r for r in ok if r.decay_rate > 0]
    # a run that reached the test level at its t_train record has a delay below the record spacing: half of it
    yb = [math.log(max((r.t_test if math.isfinite(r.t_test) else r.horizon) - r.t_train, 0.5 * RECORD_EVERY)
                   * r.decay_rate) for r in okb]
    cb = [not math.isfinite(r.t_test) for r in okb]
    b = fit_aft([{}] * len(okb), yb, cb, features=(), ridge=0.0)
    return {"a": (a.beta[0], math.exp(a.gamma[0])), "b": (b.beta[0], math.exp(b.gamma[0])),
            "a_rows": len(ok), "b_rows": len(okb)}


def baseline_forecast(which: str, pars: tuple[float, float], r, tau: float) -> dict:
    """Quantiles and P(by horizon) of a baseline law, conditioned on t_test > τ (a truncated lognormal)."""
    from scipy.special import ndtr, ndtri

    m, s = pars
    if which == "a":
        offset, to_t = math.log(r.t_train), (lambda u: math.exp(u))
    else:
        if r.decay_rate <= 0:
            return {"q": [math.inf] * 5, "p": 0.0, "cdf": lambda t: 0.0}
        offset = -math.log(r.decay_rate)
        to_t = (lambda u: r.t_train + math.exp(u))  # noqa: E731
    base = tau if which == "a" else tau - r.t_train
    surv_tau = float(ndtr(-((math.log(base) - offset - m) / s))) if base > 0 else 1.0
    q = []
    for prob in (0.05, 0.25, 0.5, 0.75, 0.95):
        tail = surv_tau * (1.0 - prob)
        z = -float(ndtri(tail)) if tail > 0 else math.inf
        q.append(to_t(offset + m + s * z) if math.isfinite(z) else math.inf)
    def cdf(t: float) -> float:
        b = t if which == "a" else t - r.t_train
        if b <= 0 or surv_tau <= 0:
            return 0.0
        return min(max(1.0 - float(ndtr(-((math.log(b) - offset - m) / s))) / surv_tau, 0.0), 1.0)

    return {"q": q, "p": cdf(r.horizon), "cdf": cdf}


# --- scores --------------------------------------------------------------------------------------------------


def covered(r: dict, a: float, b: float) -> float:
    """Whether the central interval between the a- and b-quantiles holds the outcome (a fraction when censored).

    A run that grokked by the horizon is covered iff its PIT F(t_test) lies in [a, b].  A run that had not
    grokked by the horizon H is known only to have F(t_test) > c = F(H); under a calibrated forecast that PIT
    is uniform on (c, 1), so it counts the fraction |[a, b] n (c, 1)| / (1 - c) (the censored-data rule of
    D-calibration, Haider et al. 2020, JMLR 21:85).
    """
    if r["grokked"]:
        return float(a <= r["pit"] <= b)
    c = r["c"]
    if c >= 1.0:
        return 0.0
    return max(0.0, min(b, 1.0) - max(a, c)) / (1.0 - c)


def score(rows: list[dict]) -> dict:
    """Coverage, |log error|, width, interval score and Brier score of one method at one issue point."""
    if not rows:
        return {"n": 0}
    out = {"n": len(rows), "n_grokked_by_horizon": int(sum(r["grokked"] for r in rows))}
    for name, lo_i, hi_i, alpha in (("50", 1, 3, 0.5), ("90", 0, 4, 0.1)):
        cov, iscore = [], []
        for r in rows:
            lo, hi, hor = r["q"][lo_i], r["q"][hi_i], r["horizon"]
            cov.append(covered(r, alpha / 2, 1 - alpha / 2))
            y = math.log(min(r["t_test"], hor))
            lo_c, hi_c = math.log(min(lo, hor)), math.log(min(hi, hor))
            iscore.append((hi_c - lo_c) + 2 / alpha * max(lo_c - y, 0.0) + 2 / alpha * max(y - hi_c, 0.0))
        out[f"coverage_{name}"] = float(np.mean(cov))
        out[f"interval_score_{name}_log"] = float(np.mean(iscore))
    g = [r for r in rows if r["grokked"]]
    if g:
        out["median_abs_log_error"] = float(np.median([abs(math.log(r["q"][2] / r["t_test"])) for r in g]))
        out["median_width_90_rel"] = float(np.median([(r["q"][4] - r["q"][0]) / r["t_test"] for r in g]))
        out["coverage_90_grokked_only"] = float(np.mean([r["q"][0] <= r["t_test"] <= r["q"][4] for r in g]))
    out["brier"] = float(np.mean([(r["p"] - float(r["grokked"])) ** 2 for r in rows]))
    return out


def evaluate(runs: list, meta: list[dict], model, base: dict, base_rate: dict | None) -> tuple[dict, list]:
    """Every method at every issue point on these runs; the per-row records (for the figure)."""
    from grokclocks.forecast import forecast

    results, records = {}, []
    for label, kind, k in ISSUE_POINTS:
        per = {"forecast": [], "baseline_a": [], "baseline_b": []}
        for r, m in zip(runs, meta):
            tau = issue_step(r, kind, k)
            if not eligible(r, tau):
                continue
            grok = bool(math.isfinite(r.t_test) and r.t_test <= r.horizon)
            common = {"grokked": grok, "t_test": r.t_test if grok else math.inf, "horizon": r.horizon}
            f = forecast(steps=r.steps, train_acc=r.train_acc, test_acc=r.test_acc, train_loss=r.train_loss,
                         test_loss=r.test_loss, weight_norm=r.weight_norm, at_step=tau, horizon=r.horizon,
                         lr=m["lr"], weight_decay=m["weight_decay"], optimizer="adamw", model=model)
            assert f.status == "forecast", (f.status, f.reason)
            q = [f.interval_90[0], f.interval_50[0], f.t_test, f.interval_50[1], f.interval_90[1]]
            per["forecast"].append({**common, "q": q, "p": f.p_grok, "c": f.p_grok,
                                    "pit": f.cdf(r.t_test) if grok else math.nan})
            records.append({"point": label, "model": m["model"], "p": f.p_grok, "grokked": grok,
                            "q": q, "t_test": r.t_test, "tau": tau, "horizon": r.horizon})
            for which in ("a", "b"):
                bf = baseline_forecast(which, base[which], r, tau)
                per[f"baseline_{which}"].append({**common, "q": bf["q"], "p": bf["p"], "c": bf["p"],
                                                 "pit": bf["cdf"](r.t_test) if grok else math.nan})
        res = {name: score(rows) for name, rows in per.items()}
        if base_rate is not None and per["forecast"]:
            rate = base_rate[label]
            res["base_rate"] = {"rate_from_fitting_set": rate,
                                "brier": float(np.mean([(rate - float(x["grokked"])) ** 2 for x in per["forecast"]])),
                                "held_out_rate": float(np.mean([x["grokked"] for x in per["forecast"]]))}
        results[label] = res
    return results, records


def grok_rates(runs: list) -> dict:
    out = {}
    for label, kind, k in ISSUE_POINTS:
        ev = [math.isfinite(r.t_test) and r.t_test <= r.horizon for r in runs if eligible(r, issue_step(r, kind, k))]
        out[label] = float(np.mean(ev)) if ev else math.nan
    return out


def targets(res: dict) -> dict:
    """Each target of the study: met or not, and by how much."""
    out = {}
    for label, _, _ in ISSUE_POINTS:
        f = res[label]["forecast"]
        if f.get("n", 0) == 0:
            continue
        for key in ("coverage_90", "coverage_50"):
            lo, hi = TARGETS[key]
            v = f[key]
            out[f"{key} at {label}"] = {"value": v, "band": [lo, hi], "met": lo <= v <= hi,
                                        "miss": 0.0 if lo <= v <= hi else (v - hi if v > hi else v - lo)}
        b = res[label].get("base_rate")
        if b:
            out[f"brier at {label}"] = {"value": f["brier"], "base_rate_brier": b["brier"],
                                        "met": f["brier"] < b["brier"]}
    f4 = res["4x t_train"]
    best = min(f4["baseline_a"].get("median_abs_log_error", math.inf),
               f4["baseline_b"].get("median_abs_log_error", math.inf))
    v = f4["forecast"].get("median_abs_log_error", math.nan)
    out["median |log error| at 4x t_train / better baseline's"] = {
        "value": v / best if best > 0 else math.nan, "forecast": v, "better_baseline": best,
        "target": TARGETS["medlog_ratio_at_4x"], "met": v / best <= TARGETS["medlog_ratio_at_4x"]}
    return out


def figure(records: list, res: dict, path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.5, 4.2), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    p = np.array([r["p"] for r in records])
    o = np.array([r["grokked"] for r in records], dtype=float)
    edges = np.linspace(0, 1, 11)
    which = np.clip(np.digitize(p, edges) - 1, 0, 9)
    xs, ys, ns = [], [], []
    for b in range(10):
        sel = which == b
        if sel.sum():
            xs.append(p[sel].mean())
            ys.append(o[sel].mean())
            ns.append(int(sel.sum()))
    ax1.plot([0, 1], [0, 1], color="0.6", ls=":")
    ax1.plot(xs, ys, "o-", color="tab:green")
    for x, y, n in zip(xs, ys, ns):
        ax1.annotate(str(n), (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7)
    ax1.set_xlabel("forecast P(grok by the horizon)")
    ax1.set_ylabel("observed frequency (held-out runs)")
    ax1.set_title("reliability of P(grok by horizon), all issue points", fontsize=9)
    labels = [lab for lab, _, _ in ISSUE_POINTS]
    x = np.arange(len(labels))
    for off, (key, colour, name) in zip((-0.25, 0.0, 0.25), (("forecast", "tab:green", "forecast"),
                                                              ("baseline_a", "tab:gray", "(a) c t_train"),
                                                              ("baseline_b", "tab:brown", "(b) 1/(lr wd)"))):
        c90 = [res[lab][key].get("coverage_90", np.nan) for lab in labels]
        c50 = [res[lab][key].get("coverage_50", np.nan) for lab in labels]
        ax2.bar(x + off, c90, width=0.25, color=colour, alpha=0.45, label=f"{name}: 90 %")
        ax2.bar(x + off, c50, width=0.25, color=colour, alpha=0.95, label=f"{name}: 50 %")
    ax2.axhspan(0.85, 0.95, color="tab:green", alpha=0.08)
    ax2.axhspan(0.40, 0.60, color="tab:green", alpha=0.08)
    ax2.axhline(0.9, color="0.3", ls=":", lw=1)
    ax2.axhline(0.5, color="0.3", ls=":", lw=1)
    ax2.set_xticks(x, labels, fontsize=8)
    ax2.set_ylim(0, 1.05)
    ax2.set_ylabel("coverage on held-out runs")
    ax2.set_title("interval coverage (shaded: target bands)", fontsize=9)
    ax2.legend(fontsize=6, ncol=3, loc="lower center")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def write_model(model, report: dict, held: dict, path: Path) -> None:
    f4 = held["4x t_train"]["forecast"]
    summary = (f"{model.summary}; held-out runs at 4x t_train: 90 % coverage {f4.get('coverage_90', math.nan):.2f}, "
               f"50 % coverage {f4.get('coverage_50', math.nan):.2f} (benchmarks/results/forecast_calibration.json)")
    d = model.as_dict()
    d["summary"] = summary
    text = ('"""The shipped forecast model, written by `benchmarks/forecast_calibration.py --write-model` (do not edit by '
            'hand).\n\nFitted on the calibration study\'s fitting set only; its numbers on the held-out set are in\n'
            'benchmarks/results/forecast_calibration.json and docs/forecast.md.\n"""\n\n'
            f"MODEL = {json.dumps(d, indent=1)}\n")
    path.write_text(text.replace(": true", ": True").replace(": false", ": False").replace(": null", ": None"))


def phase_fit(scale: str, cache: Path, out: Path, fig_path: Path, write: bool, log) -> None:
    from grokclocks.forecast import fit_model

    t0 = time.perf_counter()
    fit_runs, fit_meta = load_runs(scale, cache, "fit")
    held_runs, held_meta = load_runs(scale, cache, "heldout")
    log(f"loaded {len(fit_runs)} fitting and {len(held_runs)} held-out runs")
    model, report = fit_model(fit_runs)
    log(f"fitted: kept {report['kept']}, family {report['family']} ({time.perf_counter() - t0:.0f} s)")
    base = fit_baselines(fit_runs)
    rates = grok_rates(fit_runs)
    held, records = evaluate(held_runs, held_meta, model, base, rates)
    insample, _ = evaluate(fit_runs, fit_meta, model, base, rates)
    def breakdown(key: str) -> dict:
        out = {}
        for value in sorted({m[key] for m in held_meta}):
            sel = [i for i, m in enumerate(held_meta) if m[key] == value]
            res, _ = evaluate([held_runs[i] for i in sel], [held_meta[i] for i in sel], model, base, rates)
            out[str(value)] = res
        return out

    by_model = breakdown("model")
    by_p = {k: {lab: v[lab]["forecast"] for lab in v} for k, v in breakdown("p").items()}
    by_lr = {k: {lab: v[lab]["forecast"] for lab in v} for k, v in breakdown("lr").items()}
    progs = [p for p in programs(scale) if cache_path(cache, p).exists()]
    walls = {p.name: float(np.load(cache_path(cache, p))["wall_s"]) for p in progs}

    def norm_at_grokking(runs: list) -> dict:
        """log(|θ(t_test)| / its peak since t_train) of the runs that grokked: is there a norm at which they do?"""
        vals = []
        for r in runs:
            if math.isfinite(r.t_test) and r.t_test >= r.t_train and r.weight_norm is not None:
                sel = (r.steps >= r.t_train) & (r.steps <= r.t_test)
                vals.append(math.log(float(r.weight_norm[r.steps == r.t_test][0]) / float(r.weight_norm[sel].max())))
        return {"n": len(vals), **_quantiles(vals), "q25": float(np.quantile(vals, 0.25)) if vals else None,
                "q75": float(np.quantile(vals, 0.75)) if vals else None}

    def census(meta: list[dict]) -> dict:
        g = [m for m in meta if math.isfinite(m["t_test"])]
        return {"runs": len(meta), "grokked_within_budget": len(g), "never_grokked_within_budget": len(meta) - len(g),
                "models": sorted({m["model"] for m in meta}), "p": sorted({m["p"] for m in meta}),
                "train_frac": sorted({m["train_frac"] for m in meta}),
                "weight_decay": sorted({m["weight_decay"] for m in meta}), "lr": sorted({m["lr"] for m in meta}),
                "seeds": sorted({m["seed"] for m in meta}),
                "delay_ratio_t_test_over_t_train": _quantiles([m["t_test"] / m["t_train"] for m in g])}

    result = {
        "study": "grokclocks.forecast calibration (benchmarks/forecast_calibration.py)",
        "scale": scale,
        "machine": {**machine(), "note": "2-core AMD EPYC, shared with other jobs (load average 3-20 while training)"},
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        "train_wall_s": {"total": sum(walls.values()), "per_program": walls},
        "fit_and_evaluate_wall_s": None,
        "levels": {"train": TRAIN_LEVEL, "test": TEST_LEVEL},
        "record_every": RECORD_EVERY,
        "fitting_set": census(fit_meta),
        "held_out_set": census(held_meta),
        "issue_points": [lab for lab, _, _ in ISSUE_POINTS],
        "norm_at_grokking_log_ratio_to_peak": {"fitting": norm_at_grokking(fit_runs),
                                               "held_out": norm_at_grokking(held_runs)},
        "selection": report,
        "baselines": {"a": {"law": "t_test = c t_train, log c ~ N(m, s^2)", "m": base["a"][0], "s": base["a"][1],
                            "c_median": math.exp(base["a"][0])},
                      "b": {"law": "t_test - t_train = k / (lr wd), log k ~ N(m, s^2)", "m": base["b"][0],
                            "s": base["b"][1], "k_median": math.exp(base["b"][0])},
                      "note": "censored lognormal fits on the fitting set; at an issue step both are conditioned "
                              "on t_test > the issue step (truncated)"},
        "held_out": held,
        "held_out_by_model": by_model,
        "held_out_forecast_by_modulus": by_p,
        "held_out_forecast_by_lr": by_lr,
        "fitting_set_in_sample": insample,
        "targets": targets(held),
        "model": model.as_dict(),
    }
    result["levi_closed_form"] = levi_check(scale, cache, log)
    result["fit_and_evaluate_wall_s"] = time.perf_counter() - t0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(_clean(result), indent=1, allow_nan=False) + "\n")
    figure(records, held, fig_path)
    write_docs_section(_clean(result), ROOT / "docs" / "forecast.md")
    if write:
        write_model(model, report, held, ROOT / "grokclocks" / "forecast" / "_calibration.py")
    log(f"wrote {out} and {fig_path} ({result['fit_and_evaluate_wall_s']:.0f} s)")
    for label, _, _ in ISSUE_POINTS:
        r = held[label]
        f = r["forecast"]
        log(f"{label}: n={f.get('n')} cov50 {f.get('coverage_50', math.nan):.2f} cov90 "
            f"{f.get('coverage_90', math.nan):.2f} medlog {f.get('median_abs_log_error', math.nan):.3f} (a "
            f"{r['baseline_a'].get('median_abs_log_error', math.nan):.3f}, b "
            f"{r['baseline_b'].get('median_abs_log_error', math.nan):.3f}) brier {f.get('brier', math.nan):.3f} "
            f"(base {r.get('base_rate', {}).get('brier', math.nan):.3f})")


# ------------------------------------------------------------------------------------------- the linear model

# t*_gen / t*_tr = 1.60 at lambda = 0.5 and 2.43 at 0.7 (eps 1e-3): the forecast is issued at 1.2 t_train
LEVI = {"cpu": {"lams": (0.5, 0.7), "d_ins": (250, 500), "seeds": tuple(range(12)), "eps": 1e-3, "eta0": 0.01,
                "n_gen": 2000, "record_every": 5},
        "gpu": {"lams": (0.5, 0.7, 0.8), "d_ins": (500, 1000, 2000), "seeds": tuple(range(32)), "eps": 1e-3,
                "eta0": 0.01, "n_gen": 4000, "record_every": 5}}


def levi_check(scale: str, cache: Path, log) -> dict:
    """The linear closed form as a forecast: explicit GD of Levi et al.'s teacher-student model, forecast at
    1.2 x t_train with levi_params, scored like the main study (this model's runs always grok)."""
    from grokclocks.forecast import forecast
    from grokclocks.linear import ERF_SQRT2, t_star

    c = LEVI[scale]
    path = cache / "levi_runs.npz"
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
        cache.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **data)
    rows, per = [], {}
    for lam in c["lams"]:
        for d_in in c["d_ins"]:
            key = f"lam{lam:g}_d{d_in}"
            t = data[f"{key}_times"].astype(np.float64)
            errs = []
            for tr, ge in zip(data[f"{key}_acc_train"].astype(np.float64), data[f"{key}_acc_gen"].astype(np.float64)):
                from grokclocks.clocks import first_hitting_time

                t_tr = first_hitting_time(t, tr, ERF_SQRT2, direction="above")
                t_te = first_hitting_time(t, ge, ERF_SQRT2, direction="above")
                tau = 1.2 * t_tr
                if not (math.isfinite(t_tr) and math.isfinite(t_te) and tau < t_te and tau < t[-1]):
                    continue
                f = forecast(steps=t, train_acc=tr, test_acc=ge, at_step=tau, horizon=float(t[-1]),
                             train_level=ERF_SQRT2, test_level=ERF_SQRT2,
                             levi_params={"lam": lam, "eps": c["eps"], "eta0": c["eta0"], "d_in": d_in})
                q = [f.interval_90[0], f.interval_50[0], f.t_test, f.interval_50[1], f.interval_90[1]]
                rows.append({"grokked": True, "t_test": t_te, "horizon": float(t[-1]), "q": q, "p": f.p_grok,
                             "c": f.p_grok, "pit": f.cdf(t_te)})
                errs.append(math.log(f.t_test / t_te))
            per[key] = {"n": len(errs), "median_log_error": float(np.median(errs)) if errs else None}
    out = {"config": {k: list(v) if isinstance(v, tuple) else v for k, v in c.items()},
           "issue_point": "1.2x t_train", "wall_s": float(data["wall_s"]), "scores": score(rows), "per_setting": per}
    s = out["scores"]
    log(f"levi closed form: n={s.get('n')} cov50 {s.get('coverage_50', math.nan):.2f} cov90 "
        f"{s.get('coverage_90', math.nan):.2f} medlog {s.get('median_abs_log_error', math.nan):.3f}")
    return out


def _f(x, fmt: str = ".2f") -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, fmt)


def calibration_markdown(res: dict) -> str:
    """The docs page's calibration section (tables from the results JSON; written between markers)."""
    fs, hs = res["fitting_set"], res["held_out_set"]
    walls = res["train_wall_s"]["total"]
    out = [f"Fitting set: {fs['runs']} runs ({fs['grokked_within_budget']} grok within their budget), "
           f"models {', '.join(fs['models'])}, p ∈ {fs['p']}, train fractions {fs['train_frac']}, weight decays "
           f"{fs['weight_decay']}, learning rates {fs['lr']}, seeds {fs['seeds'][0]}–{fs['seeds'][-1]}.  ",
           f"Held-out set: {hs['runs']} runs ({hs['grokked_within_budget']} grok within their budget), models "
           f"{', '.join(hs['models'])}, p ∈ {hs['p']}, train fractions {hs['train_frac']}, weight decays "
           f"{hs['weight_decay']}, learning rates {hs['lr']}, seeds {hs['seeds'][0]}–{hs['seeds'][-1]}.  ",
           f"Training: {walls / 3600:.2f} h wall time on {res['machine']['note']}; fitting and evaluation "
           f"{res['fit_and_evaluate_wall_s'] / 60:.1f} min.",
           "",
           "Held-out runs, per issue point (n = runs that fit their training set and had not grokked there). "
           "Coverage of the nominal 50 % and 90 % intervals (a run that never grokked within its budget counts "
           "by the D-calibration rule), median |log(forecast / actual t_test)| and median 90 %-interval width "
           "over actual t_test on the runs that grokked within their budget, mean interval score of the 90 % "
           "interval in log steps (outcome censored at the budget; lower is better), Brier score of P(grok by "
           "the budget) (base rate: the fitting set's frequency at that issue point).",
           "",
           "| issue point | method | n | cov. 50 % | cov. 90 % | median \|log err\| | width 90 % / actual | "
           "interval score 90 % | Brier |",
           "|---|---|---|---|---|---|---|---|---|"]
    names = {"forecast": "**forecast**", "baseline_a": "(a) c · t_train", "baseline_b": "(b) k / (lr · wd)"}
    for label in res["issue_points"]:
        r = res["held_out"][label]
        for key, name in names.items():
            m = r[key]
            out.append(f"| {label} | {name} | {m.get('n', 0)} | {_f(m.get('coverage_50'))} | "
                       f"{_f(m.get('coverage_90'))} | {_f(m.get('median_abs_log_error'), '.3f')} | "
                       f"{_f(m.get('median_width_90_rel'))} | {_f(m.get('interval_score_90_log'))} | "
                       f"{_f(m.get('brier'), '.3f')} |")
        b = r.get("base_rate")
        if b:
            out.append(f"| {label} | base rate {b['rate_from_fitting_set']:.2f} | | | | | | | "
                       f"{b['brier']:.3f} |")
    out += ["", "Targets (set before the study; held-out set, evaluated once):", "",
            "| target | value | met |", "|---|---|---|"]
    for name, t in res["targets"].items():
        name = name.replace("|", "\\|")
        if "band" in t:
            verdict = "yes" if t["met"] else "no (off by {:+.3f})".format(t["miss"])
            out.append(f"| {name} in [{t['band'][0]:.2f}, {t['band'][1]:.2f}] | {t['value']:.3f} | {verdict} |")
        elif "base_rate_brier" in t:
            out.append(f"| {name} < base rate's {t['base_rate_brier']:.3f} | {t['value']:.3f} | "
                       f"{'yes' if t['met'] else 'no'} |")
        else:
            out.append(f"| {name} <= {t['target']} | {_f(t['value'], '.3f')} ({_f(t['forecast'], '.3f')} vs "
                       f"{_f(t['better_baseline'], '.3f')}) | {'yes' if t['met'] else 'no'} |")
    sel = res["selection"]
    infl = sel.get("spread_inflation", {})
    out += ["", "Signal selection (leave-one-modulus-out cross-validation over the fitting set; gain in held-out "
            "log-likelihood per row when the group is added):", "",
            "| step | kept so far | gain per candidate group |", "|---|---|---|"]
    for k, step in enumerate(sel["selection_path"]):
        gains = ", ".join(f"{g} {v:+.4f}" for g, v in step["gains"].items())
        out.append(f"| {k + 1} | {', '.join(step['kept'])} | {gains} |")
    out += ["", f"Kept: {', '.join(sel['kept'])}.  Dropped: "
            + ("; ".join(f"{g} ({why})" for g, why in sel["dropped"].items()) or "none") + ".", "",
            f"Spread: every σ widened by k = {_f(infl.get('factor'), '.3f')}, the factor that maximises the "
            f"out-of-fold likelihood (log-likelihood per row {_f(infl.get('cv_loglik_per_row_plain'), '.4f')} -> "
            f"{_f(infl.get('cv_loglik_per_row_inflated'), '.4f')}).", "",
            "Interval shape (cross-validated log-likelihood per row; higher is better):", "",
            "| family | log-likelihood per row |", "|---|---|"]
    for fam, v in sorted(sel["families_cv_loglik_per_row"].items(), key=lambda kv: -kv[1]):
        out.append(f"| {fam} | {v:.4f} |")
    lv = res.get("levi_closed_form")
    if lv:
        s = lv["scores"]
        out += ["", f"The linear closed form (not part of the model above): explicit GD of Levi et al.'s "
                f"teacher-student model, λ ∈ {lv['config']['lams']}, d_in ∈ {lv['config']['d_ins']}, "
                f"{len(lv['config']['seeds'])} seeds each, ε = {lv['config']['eps']}, η₀ = {lv['config']['eta0']}, "
                f"accuracy level erf(√2) on {lv['config']['n_gen']} fresh inputs; forecast t*_gen at 1.2 × t_train: "
                f"n = {s.get('n')}, coverage 50 % {_f(s.get('coverage_50'))}, 90 % {_f(s.get('coverage_90'))}, "
                f"median |log err| {_f(s.get('median_abs_log_error'), '.3f')}."]
    bym = res.get("held_out_by_model", {})
    if len(bym) > 1:
        out += ["", "Held-out runs by model (the transformer is a model the fit never saw):", "",
                "| model | issue point | n | cov. 50 % | cov. 90 % | median \|log err\| | Brier |",
                "|---|---|---|---|---|---|---|"]
        for name, per in bym.items():
            for label in res["issue_points"]:
                m = per[label]["forecast"]
                out.append(f"| {name} | {label} | {m.get('n', 0)} | {_f(m.get('coverage_50'))} | "
                           f"{_f(m.get('coverage_90'))} | {_f(m.get('median_abs_log_error'), '.3f')} | "
                           f"{_f(m.get('brier'), '.3f')} |")
    for key, title in (("held_out_forecast_by_modulus", "modulus p"), ("held_out_forecast_by_lr", "learning rate")):
        per = res.get(key)
        if not per:
            continue
        out += ["", f"Forecast on the held-out runs by {title} (fitting set: p ∈ {fs['p']}, lr ∈ {fs['lr']}): "
                "coverage of the 90 % interval / median |log err| per issue point:", "",
                f"| {title} | " + " | ".join(res["issue_points"]) + " |", "|---|" + "---|" * len(res["issue_points"])]
        for value, pts in per.items():
            cells = [f"{_f(pts[lab].get('coverage_90'))} / {_f(pts[lab].get('median_abs_log_error'), '.2f')} "
                     f"(n {pts[lab].get('n', 0)})" for lab in res["issue_points"]]
            out.append(f"| {value} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def write_docs_section(res: dict, page: Path) -> None:
    text = page.read_text()
    begin, end = "<!-- calibration:begin (written by benchmarks/forecast_calibration.py) -->", "<!-- calibration:end -->"
    if begin not in text or end not in text:
        return
    i, j = text.index(begin) + len(begin), text.index(end)
    page.write_text(text[:i] + "\n" + calibration_markdown(res) + "\n" + text[j:])


def _quantiles(x: list[float]) -> dict:
    if not x:
        return {}
    q = np.quantile(x, [0.0, 0.1, 0.5, 0.9, 1.0])
    return dict(zip(("min", "q10", "median", "q90", "max"), (float(v) for v in q)))


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--phase", default="all", choices=("train", "fit", "all", "docs"),
                    help="docs: only rewrite the docs page's calibration section from the results JSON")
    ap.add_argument("--cache", type=Path, default=None, help="run cache (default benchmarks/results/forecast_runs "
                                                             "for cpu, forecast_runs_gpu for gpu)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--figure", type=Path, default=ROOT / "docs" / "figures" / "forecast_reliability.png")
    ap.add_argument("--write-model", action="store_true", help="write grokclocks/forecast/_calibration.py")
    args = ap.parse_args(argv)
    cache = args.cache or HERE / "results" / ("forecast_runs" if args.scale == "cpu" else "forecast_runs_gpu")

    def log(msg: str) -> None:
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    if args.phase in ("train", "all"):
        phase_train(args.scale, cache, log)
    if args.phase == "docs":
        out = args.out or HERE / "results" / "forecast_calibration.json"
        write_docs_section(json.loads(out.read_text()), ROOT / "docs" / "forecast.md")
    if args.phase in ("fit", "all"):
        out = args.out or HERE / "results" / ("forecast_calibration.json" if args.scale == "cpu"
                                              else "forecast_calibration_gpu.json")
        phase_fit(args.scale, cache, out, args.figure, args.write_model, log)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
