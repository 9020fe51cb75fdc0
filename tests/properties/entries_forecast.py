"""Registry entries: grokclocks.forecast (forecast, forecast_runs, default_model, fit_model, progress_line)."""

from __future__ import annotations

import types

import numpy as np
from hypothesis import strategies as st

from .kinds import INF, NAN, Entry, Fixed

# a forecast's numbers carry NaN / inf as documented markers: t_test NaN without a forecast, t_train inf before
# the train level is reached, a signal's contribution NaN when it is not used, NaN where a series was not logged
_NAN = "documented markers: t_test NaN without a forecast, contribution NaN of an unused signal, NaN = not logged"
_INF = "documented marker: t_train = inf before the train level is reached, t_cls = inf before it fires"


def _curves(n_rec: int, t_fit: float, t_grok: float, every: float) -> dict:
    steps = np.arange(n_rec, dtype=np.float64) * every
    return {"steps": steps, "train_acc": np.minimum(1.0, 0.05 + steps / t_fit),
            "test_acc": 0.03 + 0.97 / (1.0 + np.exp(-(steps - t_grok) / (0.1 * t_grok))),
            "train_loss": 2.0 * np.exp(-steps / t_fit) + 1e-4, "test_loss": 4.0 - 3.9 * (steps / steps[-1]) ** 2,
            "weight_norm": 30.0 + steps / every / 10.0}


def _run():
    @st.composite
    def s(draw):
        n_rec = draw(st.integers(5, 120))
        every = float(draw(st.sampled_from([1, 10, 25])))
        t_fit = every * draw(st.floats(1.0, 30.0))
        t_grok = t_fit * draw(st.floats(1.5, 40.0))
        run = _curves(n_rec, t_fit, t_grok, every)
        last = float(run["steps"][-1])
        at = draw(st.one_of(st.none(), st.floats(0.0, last)))
        hor = draw(st.one_of(st.none(), st.floats(1.05, 20.0).map(lambda k: k * max(at if at else last, 1.0))))
        return {**run, "at_step": at, "horizon": hor}
    return s()


def _check(result, kw):
    fs = result if isinstance(result, tuple) else (result,)
    for f in fs:
        if f.status not in ("forecast", "too early", "grokked", "diverged", "cannot tell"):
            return f"unknown status {f.status!r}"
        if f.status == "forecast":
            lo90, hi90 = f.interval_90
            lo50, hi50 = f.interval_50
            if not (f.at_step < lo90 <= lo50 <= f.t_test <= hi50 <= hi90):
                return f"intervals not nested after the issue step: {f.interval_90}, {f.interval_50}, {f.t_test}"
            if not 0.0 <= f.p_grok <= 1.0:
                return f"P(grok) = {f.p_grok} outside [0, 1]"
    return None


def _bad_at(n, kw):
    return st.sampled_from([NAN, INF, -INF, -1.0, "100", [1.0, 2.0]])


def _bad_horizon(n, kw):
    at = kw["at_step"] if kw["at_step"] is not None else float(kw["steps"][-1])
    return st.sampled_from([NAN, INF, at, at - 1.0, "x", [at + 1.0]])


def _bad_train_acc(n, kw):
    a = kw["train_acc"]
    # (an infinite value is not invalid: it is a diverged run, a forecast status)
    return st.sampled_from([a * 100.0, -a - 0.1, np.full(a.size + 1, 0.5), "0.5", np.full((2, 2, a.size), 0.5)])


def _bad_run_index(n, kw):
    return st.sampled_from([-1, 1, 2.5, "0", True])


_NAMES = {"at_step": ("at_step",), "horizon": ("horizon",), "train_acc": ("train_acc",),
          "run_index": ("run_index",), "test_level": ("test_level",), "lr": ("lr",)}


def _fake_trajectory():
    @st.composite
    def s(draw):
        n_rec = draw(st.integers(1, 40))
        run = _curves(max(n_rec, 2), 50.0, draw(st.floats(100.0, 3000.0)), 10.0)
        runs = draw(st.integers(1, 3))
        metrics = {"acc_train": np.stack([run["train_acc"][:n_rec]] * runs),
                   "acc_test": np.stack([run["test_acc"][:n_rec]] * runs)}
        cfg = types.SimpleNamespace(steps=draw(st.sampled_from([None, 500, 5000])), lr=(1e-3,), weight_decay=(1.0,),
                                    optimizer="adamw", grid_axes=())
        return {"trajectory": types.SimpleNamespace(times=run["steps"][:n_rec], metrics=metrics, config=cfg,
                                                    extras={})}
    return s()


def _fit_runs():
    def build(_):
        from grokclocks.forecast import RunCurves

        rng = np.random.default_rng(0)
        runs = []
        for k in range(16):
            c = _curves(101, 200.0, float(np.exp(rng.uniform(np.log(600), np.log(3000)))), 20.0)
            runs.append(RunCurves(c["steps"], c["train_acc"], c["test_acc"], c["train_loss"], c["test_loss"],
                                  c["weight_norm"], horizon=2000.0, group=f"g{k % 4}"))
        return {"runs": runs}
    return st.just(None).map(build)


ENTRIES = [
    Entry("forecast.forecast", {"test_level": Fixed(None, 0.99, 0.9, bad=(0.0, 1.5, NAN, "high")),
                                "lr": Fixed(None, bad=(-1.0, 0.0, NAN, INF))},
          build=lambda n: _run(), bad={"at_step": _bad_at, "horizon": _bad_horizon, "train_acc": _bad_train_acc,
                                       "run_index": _bad_run_index},
          nan=_NAN, inf=_INF, check=_check, names=_NAMES, cost=3),
    Entry("forecast.forecast_runs", {"test_level": Fixed(None, 0.99, bad=(0.0, 1.5, NAN))},
          build=lambda n: _run(), bad={"at_step": _bad_at, "horizon": _bad_horizon, "train_acc": _bad_train_acc},
          nan=_NAN, inf=_INF, check=_check, names=_NAMES, cost=3),
    Entry("forecast.default_model"),
    Entry("forecast.progress_line", {"max_runs": Fixed(1, 4, 16, bad=(0, -1, 2.5, "4", None))},
          build=lambda n: _fake_trajectory(), names={"max_runs": ("max_runs",)}, cost=3),
    Entry("forecast.fit_model", {"n_folds": Fixed(2, 3, bad=(1, 0, 2.5, "2")),
                                 "ridge": Fixed(1.0, 0.5, bad=(-1.0, NAN, INF, "1")),
                                 "family": Fixed(None, "loglogistic", bad=("cauchy", 3)),
                                 "groups": Fixed(None, bad=(["nonsense"], [3]))},
          build=lambda n: _fit_runs(), nan="the report's spread inflation is NaN when it is not fitted",
          inf="the report's gain of a group readable in too few rows is -inf (never kept)",
          names={"n_folds": ("n_folds",), "ridge": ("ridge",), "family": ("family",), "groups": ("groups",)},
          cost=60, cheap_invalid=True),
]
