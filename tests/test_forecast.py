"""grokclocks.forecast: no look-ahead, statuses, intervals, the censored model, Monitor, adapters, CLI, compare.

Synthetic curves only (each forecast takes ~10 ms; the file runs in ~5 s plus one tiny engine run): the engine
hook is tested on a fake trajectory, and the tiny run checks that train_modular(progress=True) shows the
forecast in its bar.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import grokclocks
from grokclocks import DomainError
from grokclocks import forecast as F
from grokclocks.cli import main
from grokclocks.compare import compare_run
from grokclocks.forecast._model import fit_aft

from _forecast_curves import curves

ROOT = Path(__file__).resolve().parents[1]


def cut(run: dict, at: float) -> dict:
    keep = run["steps"] <= at
    return {k: v[keep] for k, v in run.items()}


def dump(f) -> str:
    return json.dumps(f.as_json(), sort_keys=True, allow_nan=False)


# ----------------------------------------------------------------------------------------------- no look-ahead


@pytest.mark.parametrize("at", [600.0, 1210.0, 1990.0])
def test_cutting_the_log_at_the_issue_step_gives_the_identical_forecast(at):
    """Records after at_step are never read: the full run and the run cut at at_step give bit-identical output."""
    run = curves()
    full = F.forecast(None, at, 8000, **run)
    short = F.forecast(None, at, 8000, **cut(run, at))
    assert full.status == "forecast"
    assert dump(full) == dump(short)
    assert (full.t_test, full.interval_90, full.p_grok) == (short.t_test, short.interval_90, short.p_grok)


def test_no_look_ahead_check_can_fail(monkeypatch):
    """A planted look-ahead (every record readable at the issue step) makes the comparison above fail."""
    import grokclocks.forecast._api as api

    run = curves()
    monkeypatch.setattr(api, "_records_up_to", lambda steps, tau: np.ones(steps.size, dtype=bool))
    full = F.forecast(None, 1200.0, 8000, **run)
    short = F.forecast(None, 1200.0, 8000, **cut(run, 1200.0))
    assert dump(full) != dump(short)


def test_log_file_cut_at_the_issue_step_gives_the_identical_forecast(tmp_path):
    run = curves()
    for name, data in (("full.csv", run), ("cut.csv", cut(run, 1500.0))):
        cols = ["steps", "train_acc", "test_acc", "train_loss", "test_loss"]
        rows = np.column_stack([data[c] for c in cols])
        (tmp_path / name).write_text("step,train_acc,val_acc,train_loss,val_loss\n"
                                     + "\n".join(",".join(repr(float(x)) for x in r) for r in rows) + "\n")
    a = F.forecast(str(tmp_path / "full.csv"), 1500.0, 6000)
    b = F.forecast(str(tmp_path / "cut.csv"), 1500.0, 6000)
    assert a.status == "forecast" and a.as_json()["signals"] == b.as_json()["signals"]
    assert (a.t_test, a.interval_50, a.interval_90, a.p_grok) == (b.t_test, b.interval_50, b.interval_90, b.p_grok)


# ----------------------------------------------------------------------------------------------- statuses


def test_statuses_too_early_grokked_cannot_tell_and_never_an_exception():
    run = curves()
    early = F.forecast(None, 200.0, **run)
    assert early.status == "too early" and "train accuracy" in early.reason and math.isnan(early.t_test)
    done = F.forecast(None, None, **run)
    assert done.status == "grokked" and done.p_grok == 1.0
    assert done.t_test == float(run["steps"][np.argmax(run["test_acc"] >= 0.99)])
    no_test = F.forecast(None, 1000.0, steps=run["steps"], train_acc=run["train_acc"])
    assert no_test.status == "cannot tell" and "test accuracy" in no_test.reason
    for f in (early, done, no_test):
        json.dumps(f.as_json(), allow_nan=False)
        assert f.line() and f.table()


def test_diverged_run_is_a_status_not_an_exception(tmp_path):
    run = curves()
    run["train_loss"] = run["train_loss"].copy()
    run["train_loss"][70] = np.inf
    f = F.forecast(None, 1500.0, **run)
    assert f.status == "diverged" and "finite" in f.reason and f.p_grok == 0.0
    path = tmp_path / "div.csv"
    path.write_text("step,train_acc,val_acc,train_loss\n0,0.1,0.05,2.0\n100,1.0,0.06,nan\n200,1.0,0.06,inf\n")
    g = F.forecast(str(path))
    assert g.status == "diverged"


def test_engine_divergence_flag_is_read():
    run = curves()
    traj = types.SimpleNamespace(times=run["steps"], metrics={"acc_train": run["train_acc"][None],
                                                              "acc_test": run["test_acc"][None]},
                                 extras={"diverged": np.array([True]), "diverged_step": np.array([1000.0])},
                                 config=None)
    assert F.forecast(traj, 1500.0).status == "diverged"
    assert F.forecast(traj, 900.0).status == "forecast"


# ----------------------------------------------------------------------------------------------- the numbers


def test_intervals_nest_and_probability_grows_with_the_horizon():
    run = curves()
    for at in (600.0, 1200.0, 2000.0):
        f = F.forecast(None, at, 5000, **run)
        lo90, hi90 = f.interval_90
        lo50, hi50 = f.interval_50
        assert at < lo90 <= lo50 <= f.t_test <= hi50 <= hi90
        ps = [F.forecast(None, at, h, **run).p_grok for h in (at * 1.5, at * 3, at * 10, at * 100)]
        assert all(0.0 <= p <= 1.0 for p in ps) and ps == sorted(ps)
        # P(grok by the point forecast) is 1/2: the point forecast is the median
        assert F.forecast(None, at, f.t_test, **run).p_grok == pytest.approx(0.5, abs=1e-9)


def test_horizon_defaults_and_errors():
    run = curves()
    f = F.forecast(None, 1000.0, **run)
    assert f.horizon == 10000.0 and f.horizon_source.startswith("10x")
    traj = types.SimpleNamespace(times=run["steps"], metrics={"acc_train": run["train_acc"][None],
                                                              "acc_test": run["test_acc"][None]},
                                 extras={}, config=types.SimpleNamespace(steps=7000))
    g = F.forecast(traj, 1000.0)
    assert g.horizon == 7000.0 and g.horizon_source.startswith("planned length")
    with pytest.raises(DomainError, match="horizon must be >= at_step"):
        F.forecast(None, 1000.0, 900.0, **run)
    with pytest.raises(DomainError, match="at_step must be >="):
        F.forecast(None, -5.0, **run)


def test_several_runs_need_run_index_and_forecast_runs_gives_one_each():
    run = curves()
    two = {k: (v if k == "steps" else np.stack([v, v])) for k, v in run.items()}
    with pytest.raises(DomainError, match="run_index"):
        F.forecast(None, 1000.0, **two)
    fs = F.forecast_runs(None, 1000.0, **two)
    assert len(fs) == 2 and dump(fs[0]) == dump(fs[1]).replace("run 1", "run 0")
    assert dump(F.forecast(None, 1000.0, run_index=1, **two)) == dump(fs[1])


def test_signals_report_spec_ids_contributions_and_the_escape_law():
    f = F.forecast(None, 1200.0, 6000, lr=1e-3, weight_decay=1.0, optimizer="adamw", **curves())
    ids = {s.id for s in f.signals}
    assert {"t_train", "t_cls", "elapsed", "test_err", "norm_rate", "decay_budget", "escape_law"} <= ids
    used = [s for s in f.signals if s.used]
    assert all(s.spec_id in grokclocks.citations.SPEC for s in f.signals)
    assert "kramers:eq15" in f.spec_ids and "clocks:appF4-acc-clock" in f.spec_ids
    model = F.default_model()
    contributing = [s for s in used if math.isfinite(s.contribution)]
    prof, _ = model.choose(_row(f))
    mu, sigma = prof.location_scale(_row(f))
    assert sum(s.contribution for s in contributing) == pytest.approx(mu - prof.beta[0])
    assert f.signal("escape_law").value == pytest.approx(sigma)
    assert "memoryless" in f.signal("escape_law").note
    for s in f.signals:
        if not s.used and s.id not in ("t_cls", "lock_in"):
            assert s.note  # every unused signal says why


def _row(f) -> dict:
    return {s.id: (math.nan if s.value is None else s.value) for s in f.signals}


def test_escape_law_signal_measures_the_interval_against_the_memoryless_escape():
    from grokclocks.forecast._predict import _escape_signal

    exp = F.AFTModel("exponential", ("elapsed",), (0.0, 0.0), (), (0.0,), (0.0,), (1.0,), ((-1.0, 1.0),))
    s = _escape_signal(exp, 1.0)
    factor = math.log(20.0) / -math.log(0.95)  # q95 / q05 of an exponential waiting time: 58.4
    assert s.spec_id == "kramers:eq15" and s.note.count(f"{factor:.3g}") == 2
    narrow = _escape_signal(dataclasses.replace(exp, family="lognormal"), 0.25)
    assert f"factor {math.exp(0.25 * 2 * 1.6448536269514722):.3g}" in narrow.note


def test_cite_works_on_a_forecast():
    f = F.forecast(None, 1200.0, **curves())
    with pytest.warns(grokclocks.citations.CitationWarning):  # the kramers paper's citation is incomplete
        bib = grokclocks.cite(f)
    assert "@misc{tan2026twoclocks" in bib
    with pytest.warns(grokclocks.citations.CitationWarning):
        text = f.cite("text")
    assert "clocks:appF4-acc-clock" in text and "kramers:eq15" in text


def test_levi_closed_form_is_the_forecast_for_the_linear_model():
    from grokclocks.linear import t_star

    run = curves(t_fit=300.0)
    params = dict(lam=0.5, eps=1e-3, eta0=0.01, d_in=500)
    f = F.forecast(None, 600.0, 1e6, levi_params=params, test_level=0.95, **run)
    want = float(t_star("gen", 0.5, 1e-3, 0.01, level=0.95))
    assert f.method == "linear closed form" and f.t_test == pytest.approx(want, rel=1e-12)
    assert "levi:tstar" in f.spec_ids and f.interval_90[0] < want < f.interval_90[1]
    with pytest.raises(DomainError, match="levi_params needs"):
        F.forecast(None, 600.0, levi_params={"lam": 0.5}, **run)
    with pytest.raises(DomainError, match="unknown"):
        F.forecast(None, 600.0, levi_params=dict(params, lr=0.1), **run)


def test_lock_in_signal_from_a_gap_series_is_reported_not_used():
    run = curves(n_steps=2000, every=1)
    gap = 1.5 * np.exp(np.clip((np.arange(2001) - 400) * 0.05, 0.0, 30.0))  # slope 0.05 > 0.04 from epoch 400
    f = F.forecast(None, 1000.0, gap=gap, **run)
    s = f.signal("lock_in")
    assert s.spec_id == "repulsion:slope-detector" and not s.used and 400 < s.value < 500
    g = F.forecast(None, 1000.0, gap=gap[:1001], **cut(run, 1000.0))
    assert dump(f) == dump(g)  # the gap series is cut at the issue step too


# ----------------------------------------------------------------------------------------------- the model


def test_censored_lognormal_fit_recovers_its_parameters_and_ignoring_censoring_is_biased():
    rng = np.random.default_rng(0)
    n = 4000
    x = rng.normal(size=n)
    y = 0.3 + 0.8 * x + 0.5 * rng.normal(size=n)
    c = y > 0.8  # censored at 0.8
    yc = np.where(c, 0.8, y)
    m = fit_aft({"x": x}, yc, c, features=["x"], ridge=0.0)
    beta_x = m.beta[1] / m.scale[0]
    assert m.beta[0] - beta_x * m.mean[0] == pytest.approx(0.3, abs=0.03)
    assert beta_x == pytest.approx(0.8, abs=0.03) and math.exp(m.gamma[0]) == pytest.approx(0.5, abs=0.02)
    naive = fit_aft({"x": x}, yc, np.zeros(n, bool), features=["x"], ridge=0.0)
    assert naive.beta[1] / naive.scale[0] < 0.7  # treating censored rows as observed shrinks the slope


def test_weibull_fit_recovers_an_exponential_waiting_time():
    rng = np.random.default_rng(1)
    y = np.log(rng.exponential(2.0, size=5000))
    m = fit_aft([{}] * y.size, y, np.zeros(y.size, bool), features=(), family="weibull", ridge=0.0)
    assert math.exp(m.gamma[0]) == pytest.approx(1.0, abs=0.03)  # shape 1: memoryless
    assert m.beta[0] == pytest.approx(math.log(2.0), abs=0.03)
    ln = fit_aft([{}] * y.size, y, np.zeros(y.size, bool), features=(), family="lognormal", ridge=0.0)
    from grokclocks.forecast._model import aft_loglik

    assert aft_loglik(m, [{}] * y.size, y, np.zeros(y.size, bool)).sum() > \
        aft_loglik(ln, [{}] * y.size, y, np.zeros(y.size, bool)).sum()


@pytest.mark.parametrize("family", F.FAMILIES)
def test_likelihood_gradient_matches_finite_differences(family):
    from scipy import optimize

    from grokclocks.forecast._model import _negloglik

    rng = np.random.default_rng(2)
    n = 200
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    Z = X[:, :2]
    y = X @ [0.5, 1.0, -0.5] + 0.7 * rng.normal(size=n)
    c = rng.random(n) < 0.3
    k = 3 if family == "exponential" else 5
    theta = 0.3 * rng.normal(size=k)

    def f(t):
        return _negloglik(t, family, X, Z, y, c, 0.5, np.ones(n))[0]

    def g(t):
        return _negloglik(t, family, X, Z, y, c, 0.5, np.ones(n))[1]

    assert optimize.check_grad(f, g, theta) < 1e-4 * max(1.0, np.linalg.norm(g(theta)))


def test_forecast_cdf_and_quantile_are_one_distribution():
    f = F.forecast(None, 1200.0, 5000, **curves())
    assert f.cdf(f.horizon) == pytest.approx(f.p_grok, abs=1e-12)
    assert f.quantile(0.05) == pytest.approx(f.interval_90[0], rel=1e-12) and f.quantile(0.5) == f.t_test
    for q in (0.01, 0.3, 0.9):
        assert f.cdf(f.quantile(q)) == pytest.approx(q, abs=1e-9)
    assert f.cdf(1200.0) == 0.0
    with pytest.raises(DomainError, match="q must be in"):
        f.quantile(1.0)
    g = F.forecast(None, None, **curves())
    assert g.status == "grokked" and g.cdf(g.t_test) == 1.0 and g.cdf(g.t_test - 1) == 0.0


def test_model_dict_round_trip_and_malformed_models_are_rejected():
    model = F.default_model()
    again = F.ForecastModel.from_dict(json.loads(json.dumps(model.as_dict())))
    assert again == model
    bad = model.as_dict()
    bad["profiles"][0]["beta"] = bad["profiles"][0]["beta"][:-1]
    with pytest.raises(DomainError, match="do not match"):
        F.ForecastModel.from_dict(bad)
    bad = model.as_dict()
    bad["profiles"][0]["family"] = "cauchy"
    with pytest.raises(DomainError, match="family"):
        F.ForecastModel.from_dict(bad)
    with pytest.raises(DomainError, match="ForecastModel"):
        F.forecast(None, 1000.0, model={"profiles": []}, **curves())


def test_shipped_model_is_the_calibration_study_result():
    """The model grokclocks ships is the one the committed study fitted (and whose numbers the docs quote)."""
    path = ROOT / "benchmarks" / "results" / "forecast_models.json"
    if not path.exists():
        pytest.skip("the calibration study's results are not in this checkout")
    study = json.loads(path.read_text())["models"]["both"]
    shipped = json.loads(json.dumps(F.default_model().as_dict()))
    assert shipped["profiles"] == study["profiles"] and shipped["groups"] == study["groups"]


def test_the_forecast_page_quotes_the_committed_study():
    """The generated sections of docs/forecast.md are what the study's generator writes from the committed results
    (a number there that is not in benchmarks/results/forecast_calibration.json or forecast_dev.json fails)."""
    path = ROOT / "benchmarks" / "results" / "forecast_calibration.json"
    res = json.loads(path.read_text()) if path.exists() else {}
    if "E1" not in res:
        pytest.skip("the calibration study's results are not in this checkout")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import forecast_calibration as study
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    page = (ROOT / "docs" / "forecast.md").read_text()

    def section(name: str) -> str:
        begin = f"<!-- {name}:begin (written by benchmarks/forecast_calibration.py) -->"
        return page[page.index(begin) + len(begin):page.index(f"<!-- {name}:end -->")]

    assert section("calibration") == "\n" + study.calibration_markdown(res) + "\n"
    dev = json.loads((ROOT / "benchmarks" / "results" / "forecast_dev.json").read_text())
    assert section("dev") == "\n" + study.dev_markdown(dev) + "\n"


def test_fit_model_on_synthetic_runs_keeps_the_informative_signal():
    rng = np.random.default_rng(3)
    runs = []
    for k in range(24):
        t_fit = 200.0
        t_grok = float(np.exp(rng.uniform(np.log(800), np.log(4000))))
        c = curves(n_steps=3000, t_fit=t_fit, t_grok=t_grok, width=0.08 * t_grok)
        runs.append(F.RunCurves(c["steps"], c["train_acc"], c["test_acc"], c["train_loss"], c["test_loss"],
                                c["weight_norm"], horizon=3000.0, group=f"g{k % 6}"))
    model, report = F.fit_model(runs, n_folds=2)
    assert report["n_censored"] > 0 and "test_acc" in model.groups
    assert set(report["dropped"]) | set(model.groups) == set(F.GROUPS) - ({"decay"} - set(report["dropped"]))
    f = F.forecast(None, 1000.0, 3000.0, model=model, **{k: getattr(runs[0], k) for k in
                                                         ("steps", "train_acc", "test_acc", "train_loss",
                                                          "test_loss", "weight_norm")})
    assert f.status in ("forecast", "grokked")


# ----------------------------------------------------------------------------------------------- live


def test_monitor_stream_equals_the_batch_forecast_and_should_stop():
    run = curves()
    mon = F.Monitor(horizon=6000, every=1)
    for i, s in enumerate(run["steps"][:61]):
        got = mon.update(s, acc=run["train_acc"][i], **{"val/acc": run["test_acc"][i]},
                         loss=run["train_loss"][i], val_loss=run["test_loss"][i], weight_norm=run["weight_norm"][i])
    batch = F.forecast(None, None, 6000, **cut(run, 1200.0))
    assert got.t_test == pytest.approx(batch.t_test, rel=1e-9) and got.p_grok == pytest.approx(batch.p_grok, rel=1e-9)
    assert [s.id for s in got.signals] == [s.id for s in batch.signals]
    assert not mon.should_stop(1e-9)
    mon.update(1220, loss=float("nan"))
    assert mon.latest.status == "diverged" and mon.should_stop(0.05)


def test_monitor_rejects_steps_back_and_non_numbers_and_lists_ignored_names():
    mon = F.Monitor()
    mon.update(10, train_acc=0.5, lr=0.001)
    assert "lr" in mon.ignored
    with pytest.raises(DomainError, match="step must be >="):
        mon.update(5, train_acc=0.6)
    with pytest.raises(DomainError, match="real number"):
        mon.update(20, train_acc="high")
    assert mon.update(20, train_acc=np.float32(0.7)).status == "too early"


def test_huggingface_hooks_with_a_fake_trainer_stop_a_hopeless_run():
    cb = F.HuggingFaceHooks(stop=True, min_probability=0.5, every=1)
    state = types.SimpleNamespace(global_step=0, max_steps=2000)
    control = types.SimpleNamespace(should_training_stop=False)
    for step in range(0, 1201, 40):
        state.global_step = step
        cb.on_log(None, state, control, logs={"loss": 0.01, "train_accuracy": min(1.0, step / 200),
                                              "eval_accuracy": 0.03, "eval_loss": 5.0, "epoch": step / 100})
    assert cb.monitor.horizon == 2000 and cb.forecast.status == "forecast"
    assert control.should_training_stop is cb.monitor.should_stop(0.5)


def test_lightning_hooks_with_a_fake_trainer():
    cb = F.LightningHooks(stop=True, min_probability=0.999, every=1)
    trainer = types.SimpleNamespace(global_step=0, max_steps=-1, callback_metrics={}, should_stop=False)
    for step in range(0, 1001, 50):
        trainer.global_step = step
        trainer.callback_metrics = {"train_acc": np.float64(min(1.0, step / 200)), "val_acc": np.float64(0.05),
                                    "name": "not a metric"}
        cb.on_validation_end(trainer, None)
    assert cb.forecast.status == "forecast" and cb.monitor.horizon is None
    assert trainer.should_stop is False  # no horizon (max_steps -1): the stop rule never acts on the fallback


@pytest.mark.parametrize("factory, module, name", [("lightning_callback", "lightning", "PyTorch Lightning"),
                                                   ("huggingface_callback", "transformers", "transformers")])
def test_missing_framework_is_a_one_line_import_error(monkeypatch, factory, module, name):
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setitem(sys.modules, "pytorch_lightning", None)
    with pytest.raises(ImportError, match=name) as exc:
        getattr(F, factory)()
    assert "\n" not in str(exc.value)


def test_lightning_callback_with_the_real_framework():
    pl = pytest.importorskip("lightning", reason="PyTorch Lightning is not installed")
    cb = F.lightning_callback(every=1)
    assert isinstance(cb, pl.pytorch.callbacks.Callback) and isinstance(cb, F.LightningHooks)


def test_huggingface_callback_with_the_real_framework():
    tr = pytest.importorskip("transformers", reason="Hugging Face transformers is not installed")
    cb = F.huggingface_callback(every=1)
    assert isinstance(cb, tr.TrainerCallback) and isinstance(cb, F.HuggingFaceHooks)


# ----------------------------------------------------------------------------------------------- engine, CLI, compare


@dataclasses.dataclass
class _FakeTrajectory:
    times: np.ndarray
    metrics: dict
    config: object
    extras: dict = dataclasses.field(default_factory=dict)


def test_progress_line_for_one_run_and_for_a_grid():
    run = curves()
    keep = run["steps"] <= 1200
    m = {"acc_train": run["train_acc"][keep], "acc_test": run["test_acc"][keep], "loss_train": run["train_loss"][keep]}
    cfg = types.SimpleNamespace(steps=4000, lr=(1e-3,), weight_decay=(1.0,), optimizer="adamw", grid_axes=())
    one = F.progress_line(_FakeTrajectory(run["steps"][keep], {k: v[None] for k, v in m.items()}, cfg))
    f = F.forecast(None, 1200.0, 4000.0, lr=1e-3, weight_decay=1.0, optimizer="adamw", steps=run["steps"][keep],
                   train_acc=m["acc_train"], test_acc=m["acc_test"], train_loss=m["loss_train"])
    assert one.startswith("t_test ~ ") and f"P {f.p_grok:.2f}" in one
    grid = {k: np.stack([np.stack([v, v, v])] * 2) for k, v in m.items()}  # (2 wd, 3 seeds, n_rec)
    cfg2 = types.SimpleNamespace(steps=4000, lr=(1e-3,), weight_decay=(0.5, 1.0), optimizer="adamw",
                                 grid_axes=("weight_decay",))
    line = F.progress_line(_FakeTrajectory(run["steps"][keep], grid, cfg2))
    assert line.startswith("grokked 0/6") and "6 forecast" in line


def test_engine_trajectory_grid_point_reads_its_own_lr_and_weight_decay():
    run = curves()
    m = {"acc_train": run["train_acc"], "acc_test": run["test_acc"], "param_norm": run["weight_norm"]}
    grid = {k: np.stack([np.stack([v, v])] * 3) for k, v in m.items()}  # (3 wd, 2 seeds, n_rec)
    cfg = types.SimpleNamespace(steps=9000, lr=(2e-3,), weight_decay=(0.1, 0.5, 2.0), optimizer="adamw",
                                grid_axes=("weight_decay",), p=None)
    traj = _FakeTrajectory(run["steps"], grid, cfg)
    f = F.forecast(traj, 1000.0, index=(2,), run_index=1)
    assert f.horizon == 9000.0 and f.horizon_source.startswith("planned length")
    assert f.signal("decay_budget").value == pytest.approx(math.log(2e-3 * 2.0 * 1000.0), rel=1e-12)
    g = F.forecast(traj, 1000.0, index=(2,), run_index=1, optimizer="adam")  # coupled L2: no rate lr x wd
    assert g.signal("decay_budget").value is None
    with pytest.raises(DomainError, match="grid"):
        F.forecast(traj, 1000.0, run_index=0)


def test_train_modular_progress_bar_shows_the_forecast(capsys):
    """9.5 s alone on the idle 2-core machine (JAX import and the chunk programs of test_sim_modular's SMALL runs,
    which that file then reuses from the session's compile cache)."""
    pytest.importorskip("jax")
    from grokclocks.sim.modular import train_modular

    # the configuration of tests/test_sim_modular.py's SMALL runs (p = 11, 40 steps), so its programs are reused
    train_modular("embedding_mlp", 11, seeds=(0,), train_frac=0.5, model_kwargs=dict(d_embed=8, d_hidden=16),
                  lr=3e-3, steps=40, record_every=10, progress=True, n_chunks=4)
    err = capsys.readouterr().err
    assert "forecast: " in err


def _csv(path: Path, run: dict, at: float | None = None) -> Path:
    data = run if at is None else cut(run, at)
    cols = ["steps", "train_acc", "test_acc", "train_loss", "test_loss"]
    rows = np.column_stack([data[c] for c in cols])
    path.write_text("step,train_acc,val_acc,train_loss,val_loss\n"
                    + "\n".join(",".join(repr(float(x)) for x in r) for r in rows) + "\n")
    return path


def test_cli_forecast_table_json_plot_and_seeds(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    with pytest.raises(SystemExit) as exc:
        main(["forecast", "--help"])
    assert exc.value.code == 0 and "examples:" in capsys.readouterr().out
    p = _csv(tmp_path / "m.csv", curves())
    assert main(["forecast", str(p), "--at", "1200", "--horizon", "6000"]) == 0
    out = capsys.readouterr().out
    assert "status: forecast" in out and "90 % interval" in out and "spec IDs:" in out
    assert main(["forecast", str(p), "--at", "1200", "--json", "--plot", str(tmp_path / "f.png")]) == 0
    js = json.loads(capsys.readouterr().out)
    direct = F.forecast(str(p), 1200.0)
    assert js["forecasts"][0]["t_test"] == direct.t_test and js["forecasts"][0]["t_test_state"] == "predicted"
    assert (tmp_path / "f.png").stat().st_size > 1000
    q = _csv(tmp_path / "n.csv", curves(t_grok=3000.0))
    assert main(["forecast", str(p), str(q), "--at", "1000", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["forecasts"]) == 2
    assert main(["forecast", str(p), "--at", "1000", "--horizon", "500"]) == 2
    assert "horizon must be >= at_step" in capsys.readouterr().err


def test_the_text_table_fits_80_columns_and_cuts_nothing():
    """Every line of the plain table is at most 80 characters, and every signal's full title and note is in it
    (wrapped at word boundaries, never cut with an ellipsis)."""
    run = curves()
    run["weight_norm"] = run["weight_norm"] * (run["steps"] / 100.0) ** 0.5  # a growing norm: out of range
    for at in (400.0, 1200.0, 2500.0):
        f = F.forecast(None, at, 6000.0, **run)
        text = f.table()
        assert max(len(line) for line in text.splitlines()) <= 80, text
        assert "..." not in text and "\u2026" not in text
        flat = " ".join(text.split())
        for s in f.signals:
            assert " ".join(s.title.split()) in flat and " ".join((s.note or "").split()) in flat
        assert " ".join(f.reason.split()) in flat and " ".join(f.model.split()) in flat


def test_compare_prints_the_forecast_line_only_when_the_run_has_not_grokked():
    """The report layer (grokclocks._report, used by `grokclocks compare`) adds the forecast to compare's table;
    compare_run alone does not forecast (compare and forecast do not import each other)."""
    from grokclocks._report import with_forecast

    run = curves()
    early = with_forecast(compare_run(**cut(run, 1500.0)))
    text = early.table(width=0)  # one line per row: the forecast line whole, not wrapped to the terminal
    assert "forecast (runs that have not grokked" in text
    assert F.forecast(None, None, **cut(run, 1500.0)).line() in text
    assert "forecast (runs that have not grokked" in early.table(markdown=True)
    assert "forecast (runs" not in with_forecast(compare_run(**run)).table()
    assert "forecast (runs" not in compare_run(**cut(run, 1500.0)).table()
