"""grokclocks.forecast, honest about what it does not know: inputs up to the issue step only, bad arguments as
errors, the horizon never replaced, signals outside the fitting range named and left out, robust signals, the
recalibration, the stop rule's hysteresis and the Monitor's checked, bounded updates.

Each test of a mutant named in its docstring was run against that mutant (applied by hand) and failed there.
Synthetic curves and hand-made models only: the file runs in a few seconds.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types

import numpy as np
import pytest

from grokclocks import DomainError
from grokclocks import forecast as F
from grokclocks.forecast._fit import pit_km, training_rows
from grokclocks.forecast._model import calibrate, uncalibrate
from grokclocks.forecast._stop import BREAK, ELIGIBLE, NEUTRAL, stop_rule

from _forecast_curves import curves


def dump(f) -> str:
    return json.dumps(f.as_json(), sort_keys=True, allow_nan=False)


def _profile(features, beta, ranges, family="lognormal", gamma=(math.log(0.5),), knots=()):
    k = len(features)
    return F.AFTModel(family, tuple(features), tuple(beta), (), tuple(gamma), (0.0,) * k, (1.0,) * k,
                      tuple(ranges), calibration=tuple(knots))


def hand_model(norm_range=(-0.1, 0.3), elapsed_range=(0.0, 3.0)) -> F.ForecastModel:
    """Three profiles: clock + test_acc + norm, clock + test_acc, clock alone (the prior)."""
    wide = (-100.0, 100.0)
    full = _profile(("elapsed", "test_err", "test_err_slope", "acc_eta", "norm_rate", "norm_drop"),
                    (0.5, -0.2, 0.3, 0.0, 0.2, -1.0, 0.0), (elapsed_range, wide, wide, wide, norm_range, wide))
    acc = _profile(("elapsed", "test_err", "test_err_slope", "acc_eta"), (0.4, -0.2, 0.3, 0.0, 0.2),
                   (elapsed_range, wide, wide, wide))
    prior = _profile(("elapsed",), (0.6, -0.3), (elapsed_range,), gamma=(0.0,))
    return F.ForecastModel((full, acc, prior), ("clock", "test_acc", "norm"), {}, "lognormal", "hand-made")


# ----------------------------------------------------------------------------------------------- inputs up to τ


def test_an_inf_after_the_issue_step_keeps_the_status_forecast():
    run = curves()
    run["train_loss"] = run["train_loss"].copy()
    run["train_loss"][100] = np.inf  # step 2000
    f = F.forecast(None, 1200.0, 8000, **run)
    assert f.status == "forecast"
    g = F.forecast(None, 1200.0, 8000, **{k: v[:61] for k, v in run.items()})
    assert dump(f) == dump(g)
    assert F.forecast(None, 2000.0, 8000, **run).status == "diverged"
    traj = types.SimpleNamespace(times=run["steps"], metrics={"acc_train": run["train_acc"][None],
                                                              "acc_test": run["test_acc"][None],
                                                              "loss_train": run["train_loss"][None]},
                                 extras={}, config=None)
    assert F.forecast(traj, 1200.0, 8000).status == "forecast"
    assert F.forecast(traj, 2000.0, 8000).status == "diverged"


def test_an_inf_after_the_issue_step_of_a_log_file_is_not_called_a_divergence(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("step,train_acc,val_acc,train_loss\n0,0.1,0.05,2.0\n100,1.0,0.06,0.5\n200,1.0,0.07,0.3\n"
                 "300,1.0,0.08,inf\n")
    f = F.forecast(str(p), 200.0)
    assert f.status == "cannot tell" and "after the issue step" in f.reason
    assert F.forecast(str(p), 300.0).status == "diverged"


@pytest.mark.parametrize("kw, match", [({"train_level": float("nan")}, "train_level"),
                                       ({"test_level": 1.5}, "test_level"),
                                       ({"at_step": float("nan")}, "at_step"),
                                       ({"horizon": -3.0}, "horizon"),
                                       ({"horizon": float("inf")}, "horizon")])
def test_bad_arguments_are_domain_errors_never_diverged(kw, match):
    run = curves()
    args = {"at_step": 1200.0, **kw}
    with pytest.raises(DomainError, match=match):
        F.forecast(None, **args, **run)


def test_an_issue_step_past_the_end_of_the_log_is_an_error():
    run = curves(n_steps=2000)
    with pytest.raises(DomainError, match="after the last record"):
        F.forecast(None, 1e6, **run)
    assert F.forecast(None, 2010.0, 5000, **run).at_step == 2010.0  # within one record interval


# ----------------------------------------------------------------------------------------------- the horizon


def _run_file(tmp_path, steps: int, planned: int | None = None, n_steps: int = 2000):
    from grokclocks import runfile as R

    @dataclasses.dataclass(frozen=True)
    class Cfg:
        steps: int
        record_every: int

    run = curves(n_steps=n_steps, t_grok=1e9)
    t = R.Trajectory(times=run["steps"], metrics={"acc_train": run["train_acc"][None],
                                                  "acc_test": run["test_acc"][None]}, extras={}, config=Cfg(steps, 20))
    return R.save_trajectory(t, tmp_path / "run", planned_steps=planned)


def test_the_planned_length_of_a_real_run_file_is_read_from_its_sidecar(tmp_path):
    npz = _run_file(tmp_path, 8000)
    side = json.loads(npz.with_suffix(".json").read_text())
    assert side["fields"]["steps"] == 8000 and "config" not in side  # the engine's sidecar: fields at top level
    f = F.forecast(str(npz), 1000.0)
    assert f.horizon == 8000.0 and f.horizon_source == "planned length (run.json)"


def test_a_log_sidecar_states_the_planned_length_and_a_bad_one_is_refused(tmp_path):
    p = tmp_path / "m.csv"
    run = curves()
    p.write_text("step,train_acc,val_acc\n" + "\n".join(f"{s},{a},{b}" for s, a, b in
                                                     zip(run["steps"], run["train_acc"], run["test_acc"])) + "\n")
    side = tmp_path / "m.csv.json"
    side.write_text('{"planned_steps": 6000}')
    assert F.forecast(str(p), 1000.0).horizon == 6000.0
    for text, match in (('{"planned_steps": 1e66}', "planned_steps"), ('{"planned_steps": true}', "planned_steps"),
                        ("[" * 100000 + "]" * 100000, "nested"), ('{"fields": {"steps": -4}}', "fields.steps"),
                        ('{"planned_steps": 1' + "0" * 400 + "}", r"m\.csv\.json: an integer of 401 digits"), ("{nope", "JSON")):
        side.write_text(text)
        with pytest.raises(DomainError, match=match):
            F.forecast(str(p), 1000.0)
    assert F.forecast(str(p), 1000.0, 7000).horizon == 7000.0  # an explicit horizon: the sidecar is not read


def test_at_the_horizon_it_is_kept_not_replaced_and_p_is_zero(tmp_path):
    """Mutant: `tau >= hor` -> `tau > hor` in horizon_of (the old `planned > tau` -> `>=`): a finished run that never
    grokked, forecast at its last record = its planned length, must not crash (log of 0) nor use 10x the step."""
    npz = _run_file(tmp_path, 2000)
    f = F.forecast(str(npz))
    assert f.status == "forecast" and f.horizon == 2000.0 and f.horizon_source.endswith("(reached)")
    assert f.p_grok == 0.0 and "reached" in f.reason
    run = curves(t_grok=1e9)
    g = F.forecast(None, 1200.0, 1200.0, **run)
    assert g.horizon == 1200.0 and g.p_grok == 0.0
    mon = F.Monitor(horizon=1200, every=1)
    for i, s in enumerate(run["steps"][:62]):
        h = mon.update(s, train_acc=run["train_acc"][i], test_acc=run["test_acc"][i])
    assert h.horizon == 1200.0 and h.p_grok == 0.0 and not h.horizon_source.startswith("10x")
    assert not mon.should_stop(0.5)  # a reached horizon never stops a run: it is at its end already


# ----------------------------------------------------------------------------------------------- out of range


def test_a_signal_outside_the_fitting_range_is_named_and_left_out_never_clipped():
    run = curves()
    model = hand_model(norm_range=(0.5, 0.9))  # the synthetic norm_rate (~0.1) lies below it
    f = F.forecast(None, 1200.0, 8000, model=model, **run)
    assert f.status == "forecast" and "norm_rate" in f.out_of_range
    s = f.signal("norm_rate")
    assert s.in_range is False and not s.used and "outside the range" in s.note
    assert "outside the fitting range" in f.reason and "norm_rate" in f.reason
    assert not f.signal("norm_drop").used  # the whole group leaves with it
    inside = F.forecast(None, 1200.0, 8000, model=hand_model(), **run)
    assert inside.out_of_range == () and inside.signal("norm_rate").used and inside.signal("norm_rate").in_range
    # the fallback is the profile without the norm, exactly (no clipped value enters it)
    no_norm = F.forecast(None, 1200.0, 8000, model=dataclasses.replace(model, profiles=model.profiles[1:]), **run)
    assert (f.t_test, f.interval_90) == (no_norm.t_test, no_norm.interval_90)


def test_an_elapsed_time_outside_every_profile_is_cannot_tell_naming_it():
    run = curves(t_grok=1e9, n_steps=20000)
    f = F.forecast(None, 19000.0, 40000, model=hand_model(elapsed_range=(0.0, 2.0)), **run)
    assert f.status == "cannot tell" and "elapsed" in f.reason and "elapsed" in f.out_of_range
    assert math.isnan(f.p_grok)


def test_the_shipped_model_never_clips_and_knows_its_ranges():
    model = F.default_model()
    assert len(model.profiles) >= 2 and model.profiles[-1].features == ("elapsed",)
    for p in model.profiles:
        assert len(p.fit_range) == len(p.features) and all(lo <= hi for lo, hi in p.fit_range)
        x = {f: hi + 10 * (hi - lo + 1) for f, (lo, hi) in zip(p.features, p.fit_range)}
        assert not any(p.in_range(x).values())


# ----------------------------------------------------------------------------------------------- robust signals


def test_a_single_spike_moves_the_forecast_little():
    run = curves(every=10)
    base = F.forecast(None, 1500.0, 8000, **run)
    spiky = {k: v.copy() for k, v in run.items()}
    i = int(np.searchsorted(run["steps"], 1450.0))
    spiky["test_acc"][i] = 0.0           # an accuracy collapse for one record
    spiky["train_loss"][i] *= 1e4        # a loss spike
    spiky["test_loss"][i] *= 100.0
    spiked = F.forecast(None, 1500.0, 8000, **spiky)
    assert spiked.status == "forecast"
    assert abs(math.log(spiked.t_test / base.t_test)) < math.log(1.25)


def test_bins_are_the_same_live_and_batch_and_bounded():
    from grokclocks.forecast._signals import LogBins, bin_series

    rng = np.random.default_rng(0)
    steps = np.arange(1, 200001, dtype=float)
    values = rng.random(steps.size)
    b = LogBins()
    for s, v in zip(steps, values):
        b.add(float(s), float(v))
    live, batch = b.arrays(), bin_series(steps, values)
    np.testing.assert_allclose(live[0], batch[0], rtol=1e-12)
    np.testing.assert_allclose(live[1], batch[1], rtol=1e-9)
    assert len(b) <= 16 * math.log2(steps[-1]) + 1


# ----------------------------------------------------------------------------------------------- recalibration


def test_pit_km_is_the_identity_on_uniform_pits_and_widens_overconfident_ones():
    rng = np.random.default_rng(1)
    u = rng.random(20000)
    knots = pit_km(u, np.zeros(u.size, bool), np.ones(u.size))
    assert max(abs(g - q) for q, g in knots) < 0.015
    # censoring at random above the PIT leaves the estimate unbiased (Kaplan-Meier)
    c = rng.random(u.size)
    cens = c < u
    knots_c = pit_km(np.where(cens, c, u), cens, np.ones(u.size))
    assert max(abs(g - q) for q, g in knots_c if q <= 0.9) < 0.03
    # over-confident forecasts: outcomes pile at the tails of the model's law; the map widens the interval
    z = np.clip(rng.normal(0.5, 0.4, u.size), 0.0, 1.0)
    tight = pit_km(z, np.zeros(u.size, bool), np.ones(u.size))
    assert uncalibrate(tight, 0.05) < 0.05 and uncalibrate(tight, 0.95) > 0.95
    for q in (0.05, 0.3, 0.5, 0.95):
        assert calibrate(tight, uncalibrate(tight, q)) == pytest.approx(q, abs=1e-9)


def test_a_calibrated_forecast_is_one_distribution():
    knots = ((0.0, 0.0), (0.2, 0.3), (0.5, 0.5), (0.8, 0.7), (1.0, 1.0))  # outcomes in the model's tails
    model = hand_model()
    model = dataclasses.replace(model, profiles=tuple(dataclasses.replace(p, calibration=knots)
                                                      for p in model.profiles))
    f = F.forecast(None, 1200.0, 5000, model=model, **curves())
    assert f.cdf(f.horizon) == pytest.approx(f.p_grok, abs=1e-12)
    for q in (0.05, 0.25, 0.5, 0.75, 0.95):
        assert f.cdf(f.quantile(q)) == pytest.approx(q, abs=1e-9)
    plain = F.forecast(None, 1200.0, 5000, model=hand_model(), **curves())
    assert plain.t_test == f.t_test  # G(0.5) = 0.5: the median is unchanged ...
    assert f.interval_50[0] < plain.interval_50[0] and f.interval_50[1] > plain.interval_50[1]  # ... wider


# ----------------------------------------------------------------------------------------------- the fit


def _synthetic_runs(n: int = 36, seed: int = 3):
    rng = np.random.default_rng(seed)
    runs = []
    for k in range(n):
        effect = rng.normal(0.0, 0.5) if k % 6 == 0 else 0.0
        t_grok = float(np.exp(rng.uniform(np.log(800), np.log(4000)) + effect))
        c = curves(n_steps=3000, t_fit=200.0, t_grok=t_grok, width=0.08 * t_grok)
        runs.append(F.RunCurves(c["steps"], c["train_acc"], c["test_acc"], c["train_loss"], c["test_loss"],
                                c["weight_norm"], horizon=3000.0, group=f"g{k % 9}"))
    return runs


def test_training_rows_target_the_observed_step_not_the_horizon():
    """Mutant: the fitting targets of observed runs replaced by the horizon (`end = run.horizon` always)."""
    c = curves(n_steps=3000, t_grok=1500.0)
    r = F.RunCurves(c["steps"], c["train_acc"], c["test_acc"], c["train_loss"], c["test_loss"], c["weight_norm"],
                    horizon=3000.0)
    rows = training_rows(r, [600.0, 900.0])
    assert len(rows) == 2 and r.t_test < 3000.0
    for x, target, censored, tau in rows:
        assert not censored and target == pytest.approx(math.log((r.t_test - tau) / tau), rel=1e-12)
    never = dataclasses.replace(r, test_acc=np.minimum(c["test_acc"], 0.5))
    (x, target, censored, tau), = training_rows(never, [600.0])
    assert censored and target == pytest.approx(math.log((3000.0 - 600.0) / 600.0))


def test_the_spread_inflation_widens_by_exactly_the_reported_factor():
    """Mutant: the spread inflation's sign flipped (gamma0 - log k): each profile's log-spread must move by +log k."""
    runs = _synthetic_runs()
    plain, _ = F.fit_model(runs, n_folds=3, groups=("test_loss",), family="lognormal", inflate=False,
                           recalibrate=False)
    wide, rep = F.fit_model(runs, n_folds=3, groups=("test_loss",), family="lognormal", inflate=True,
                            recalibrate=False)
    k = rep["spread_inflation"]["factor"]
    assert k > 1.01
    for a, b in zip(plain.profiles, wide.profiles):
        assert b.gamma[0] - a.gamma[0] == pytest.approx(math.log(k), rel=1e-9)
        assert a.beta == b.beta


def test_fit_model_recalibrates_each_profile_on_out_of_configuration_pits():
    model, rep = F.fit_model(_synthetic_runs(), n_folds=3, groups=("test_loss",), family="lognormal")
    assert [p.features[0] for p in model.profiles] == ["elapsed"] * len(model.profiles)
    assert model.profiles[-1].features == ("elapsed",)
    for p, r in zip(model.profiles, rep["profiles"]):
        assert p.calibration[0] == (0.0, 0.0) and p.calibration[-1] == (1.0, 1.0)
        assert "oof_coverage_90_grokked_recal" in r


# ----------------------------------------------------------------------------------------------- lock-in, Levi


def test_the_lock_in_signal_reads_no_record_after_the_issue_step():
    """Mutant: the gap series read one record past the issue step (`gap[: floor(tau) + 2]`)."""
    run = curves(n_steps=1000, every=1)
    gap = np.ones(1001)
    gap[600:] = 1e6  # the slope detector fires at epoch 600, on the record of epoch 600
    before = F.forecast(None, 599.0, 5000, gap=gap, **run).signal("lock_in")
    at = F.forecast(None, 600.0, 5000, gap=gap, **run).signal("lock_in")
    assert before.value == math.inf and at.value == 600.0


def test_the_linear_closed_form_spread_is_the_larger_of_the_finite_size_and_the_runs_deviation():
    """Mutant: `max` -> `min` in the linear closed form's spread."""
    from grokclocks.linear import t_star

    params = dict(lam=0.5, eps=1e-3, eta0=0.01, d_in=500)
    t_tr = float(t_star("train", 0.5, 1e-3, 0.01, level=0.95))
    run = curves(t_fit=3.0 * t_tr / 0.95, n_steps=int(20 * t_tr), every=max(1, int(t_tr / 50)))
    f = F.forecast(None, None, 1e9, levi_params=params, test_level=0.95,
                   **{k: v for k, v in run.items() if k in ("steps", "train_acc")},
                   test_acc=np.full(run["steps"].size, 0.1))
    dev = abs(math.log(f.t_train / t_tr))
    assert dev > 0.5  # the run fits its training set far from t*_tr: its own deviation sets the spread
    lo, hi = f.interval_90
    assert math.log(hi / lo) == pytest.approx(2 * 1.6448536269514722 * dev, rel=1e-9)


# ----------------------------------------------------------------------------------------------- the stop rule


def test_the_stop_rule_needs_a_stable_streak_and_has_hysteresis():
    th = 0.05
    e = ELIGIBLE
    assert not stop_rule([(1000, 0.01, e), (1100, 0.01, e)], th)                     # two are not enough
    assert not stop_rule([(1000, 0.01, e), (1050, 0.01, e), (1100, 0.01, e)], th)    # span 1.1 < 1.25
    assert stop_rule([(1000, 0.01, e), (1100, 0.01, e), (1300, 0.01, e)], th)
    # between the threshold and twice it the streak neither ends nor grows: no flip-flop around 0.05
    h = [(1000, 0.04, e), (1100, 0.06, e), (1200, 0.04, e), (1300, 0.06, e), (1400, 0.04, e)]
    states = [stop_rule(h[: i + 1], th) for i in range(len(h))]
    assert states == [False, False, False, False, True]
    assert stop_rule(h + [(1500, 0.07, e)], th)                                     # hysteresis holds it
    assert not stop_rule(h + [(1500, 0.11, e)], th)                                 # 2x the threshold ends it
    assert stop_rule(h + [(1450, math.nan, NEUTRAL)], th)                           # "cannot tell" is neutral
    assert not stop_rule(h + [(1500, 0.0, BREAK)], th)                              # a fallback horizon never


def test_monitor_never_stops_on_a_fallback_horizon():
    run = curves(t_grok=1e9)
    mon = F.Monitor(every=1)  # no horizon: 10x the step, a fallback
    for i, s in enumerate(run["steps"]):
        f = mon.update(s, train_acc=run["train_acc"][i], test_acc=run["test_acc"][i])
    assert f.horizon_source.startswith("10x") and not mon.should_stop(0.99)


# ----------------------------------------------------------------------------------------------- the Monitor


def test_a_rejected_update_leaves_the_monitor_unchanged_and_says_why():
    run = curves()
    mon = F.Monitor(horizon=8000, every=1)
    for i, s in enumerate(run["steps"][:50]):
        mon.update(s, train_acc=run["train_acc"][i], test_acc=run["test_acc"][i])
    before = (mon.latest, mon.bins(), mon._t_train, mon._last_step)
    for bad, match in (({"test_acc": 1.5}, r"\[0, 1\]"), ({"train_acc": 0.9, "test_acc": "x"}, "real number"),
                       ({"train_acc": 10**400}, "float range"), ({"train_loss": -1.0}, ">= 0"),
                       ({"test_acc": float("nan")}, "never NaN"), ({"train_acc": float("inf")}, "never NaN"),
                       ({"test_acc": 0.3, "test_loss": -float("inf")}, ">= 0")):
        with pytest.raises(DomainError, match=match):
            mon.update(2000, **bad)
        after = (mon.latest, mon.bins(), mon._t_train, mon._last_step)
        assert after[0] is before[0] and after[2:] == before[2:]
        assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                   for a, b in zip(after[1].values(), before[1].values()))
    f = mon.update(1000, train_acc=1.0, test_acc=0.2)  # the monitor lives on
    assert f.status == "forecast"
    f = mon.update(1010, train_loss=float("nan"))  # a non-finite loss is a diverged run, not an error
    assert f.status == "diverged" and mon.should_stop(0.05)


def test_monitor_equals_the_batch_forecast_and_forecasts_only_when_an_evaluation_arrives():
    run = curves()
    mon = F.Monitor(horizon=6000, every=10**6)
    seen = []
    for i, s in enumerate(run["steps"][:61]):
        seen.append(mon.update(s, acc=run["train_acc"][i], loss=run["train_loss"][i], weight_norm=run["weight_norm"][i]))
        if i % 5 == 0:
            seen.append(mon.update(s, **{"val/acc": run["test_acc"][i]}, val_loss=run["test_loss"][i]))
    got = seen[-1]
    assert len({id(f) for f in seen}) == 14  # the first update, and the 13 evaluations
    ev = {k: v.copy() for k, v in run.items()}
    for k in ("test_acc", "test_loss"):
        ev[k][np.arange(ev[k].size) % 5 != 0] = np.nan
    batch = F.forecast(None, 1200.0, 6000, **{k: v[:61] for k, v in ev.items()})
    assert got.t_test == pytest.approx(batch.t_test, rel=1e-9) and got.p_grok == pytest.approx(batch.p_grok, rel=1e-9)
    with pytest.raises(DomainError, match="last step"):
        mon.forecast(at_step=600.0)
