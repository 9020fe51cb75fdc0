"""grokclocks.compare: synthetic runs whose answers are known, n/a handling, input validation, I/O."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grokclocks import DomainError
from grokclocks import clocks as C
from grokclocks import coverage as COV
from grokclocks import kramers as K
from grokclocks import linear as L
from grokclocks import repulsion as R
from grokclocks.compare import QUANTITY_IDS, USER_KEYS, Comparison, RunData, compare_run, load_run, run_data

STEPS = np.arange(0, 5001, 10, dtype=float)


def sigmoid(t, centre, width):
    return 1.0 / (1.0 + np.exp(-(t - centre) / width))


def grokking_curves(centre_test=2500.0, n_runs=1):
    train = sigmoid(STEPS, 300.0, 30.0)
    test = sigmoid(STEPS, centre_test, 150.0)
    loss = np.exp(-STEPS / 100.0) + 1e-6
    test_loss = 2.0 * (1.0 - test) + 1e-3
    if n_runs > 1:
        return (np.tile(train, (n_runs, 1)), np.tile(test, (n_runs, 1)), np.tile(loss, (n_runs, 1)),
                np.tile(test_loss, (n_runs, 1)))
    return train, test, loss, test_loss


def first_record_at(centre, width, level):
    """First multiple of 10 at which the sigmoid reaches ``level`` (analytic crossing, rounded up)."""
    t = centre + width * math.log(level / (1.0 - level))
    return float(math.ceil(t / 10.0) * 10)


# ------------------------------------------------------------------------------------------ known answers


def test_delayed_sigmoid_clocks_delay_and_barrier():
    train, test, loss, test_loss = grokking_curves()
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss, test_loss=test_loss,
                    train_level=0.99, test_level=0.99)
    t_tr, t_te = first_record_at(300, 30, 0.99), first_record_at(2500, 150, 0.99)
    assert (t_tr, t_te) == (440.0, 3190.0)
    assert c.value("t_train (train acc >= 0.99)") == t_tr
    assert c.value("t_test (test acc >= 0.99)") == t_te
    assert c.value("Delta t = t_test - t_train") == t_te - t_tr
    # classifier clock: exp(-t/100) + 1e-6 <= 1e-3 first at t = 100 ln(1/(1e-3 - 1e-6)) = 690.9 -> 700
    assert c.value("t_cls(eps=0.001)") == 700.0
    assert c.value("delay ratio t_grok / t_mem") == pytest.approx(t_te / t_tr, rel=1e-15)
    assert c.value("barrier Delta F / T_eff = ln(t_grok / t_mem)") == pytest.approx(
        K.arrhenius_barrier(t_te / t_tr), rel=1e-15)
    assert c["t_train <= t_cls < t_test"].value is True
    # statuses: nothing made up where the run has no data
    assert c["Delta t = t_test - t_train"].status == "measured"
    assert c["test-accuracy ceiling Ceil(inf)"].status.startswith("n/a")
    assert c["lock-in (slope detector fires)"].status.startswith("n/a")
    assert not c["t_rep (representation clock)"].available
    assert c["Delta t, linear estimator"].value is None


@pytest.mark.parametrize("t_cls, t_test, want", [
    (300.0, 500.0, True),  # t_train = t_cls on the same record: the documented rule t_train <= t_cls < t_test holds
    (300.0, 300.0, False),  # t_cls = t_test: not before
    (200.0, 500.0, False),  # t_cls before t_train
])
def test_clock_order_tie_rule(t_cls, t_test, want):
    """clock_order is t_train <= t_cls < t_test (clocks:appB), read on the records: ties decided as written."""
    steps = np.arange(0.0, 1001.0, 100.0)
    train_acc = np.where(steps >= 300, 1.0, 0.5)  # t_train = 300
    train_loss = np.where(steps >= t_cls, 1e-4, 1.0)  # t_cls(1e-3) = t_cls
    test_acc = np.where(steps >= t_test, 1.0, 0.1)
    c = compare_run(steps=steps, train_acc=train_acc, test_acc=test_acc, train_loss=train_loss)
    assert (c["t_train"].per_run, c["t_cls"].per_run, c["t_test"].per_run) == ((300.0,), (t_cls,), (t_test,))
    assert c["clock_order"].per_run == (want,)


def test_clocks_match_the_core_estimators_per_run():
    rng = np.random.default_rng(0)
    centres = rng.uniform(1500, 3500, size=4)
    test = np.stack([sigmoid(STEPS, m, 100.0) for m in centres])
    train = np.tile(sigmoid(STEPS, 200.0, 20.0), (4, 1))
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test)
    want = [C.first_hitting_time(STEPS, a, 0.99, direction="above") for a in test]
    assert c["t_test (test acc >= 0.99)"].per_run == tuple(want)
    assert c.value("t_test (test acc >= 0.99)") == np.median(want)
    assert c["t_train (train acc >= 1)"].per_run == tuple(C.accuracy_clock(STEPS, a) for a in train)


def test_representation_clock_and_lag_from_weight_norm():
    train, test, loss, _ = grokking_curves()
    norm = 10.0 + 5.0 * np.exp(-STEPS / 400.0)  # settles long before test accuracy
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss, weight_norm=norm,
                    train_level=0.99)
    g = np.abs(norm - norm[-1]) / abs(norm[0] - norm[-1])
    want = C.representation_clock(STEPS, g, 0.1, window=5)
    assert c.value("t_rep(weight norm)") == want
    ref = C.representation_clock(STEPS, np.abs(test - test[-1]) / abs(test[0] - test[-1]), 0.1, window=5)
    assert c.value("lag t_rep(weight norm) - t_rep(test acc)") == want - ref < 0
    assert c.value("separation ratio t_rep(weight norm) / t_cls") == pytest.approx(
        C.separation_ratio(want, c.value("t_cls(eps=0.001)")))
    assert c.clocks["t_rep(weight norm)"] == want


def test_embedding_statistics_use_the_core():
    p, d, n_rec = 7, 4, 6
    rng = np.random.default_rng(1)
    steps = np.arange(n_rec) * 100.0
    E = rng.normal(size=(n_rec, p, d))
    a = np.arange(p)
    for j in range(n_rec):  # drift towards a pure frequency-1 embedding
        w = j / (n_rec - 1)
        E[j] = (1 - w) * E[j] + w * np.stack([np.cos(2 * np.pi * a / p), np.sin(2 * np.pi * a / p), 0 * a, 0 * a], 1)
    acc = np.linspace(0, 1, n_rec)
    mask = np.ones((p, p), bool)
    mask[0, :3] = False
    c = compare_run(steps=steps, train_acc=acc, test_acc=acc, embeddings=E, train_mask=mask, n_freqs=1, window=1)
    sr = [float(x) for x in __import__("grokclocks.spectral", fromlist=["x"]).stable_rank(E)]
    want = C.representation_clock(steps, C.stable_rank_gap(sr), 0.1)
    assert c.value("t_rep(stable rank of embedding)") == want
    key = 1 + np.argsort(-C.fourier_energies(E[-1], p)[1:])[:1]
    fe = np.array([C.fourier_energy_outside(E[j], p, freqs=key) for j in range(n_rec)])
    assert c.value("t_rep(Fourier energy outside)") == C.representation_clock(
        steps, np.abs(fe - fe[-1]) / abs(fe[0] - fe[-1]), 0.1)
    med = COV.med_trajectory(E, p, 0, token_axis=0)
    assert c.value("MED at start") == pytest.approx(med[0]) and c.value("MED at end") == pytest.approx(med[-1])


def test_never_generalising_run_gives_never_and_na_not_errors():
    train = sigmoid(STEPS, 300.0, 30.0)
    test = np.full(STEPS.size, 0.3)
    norm = 10.0 + STEPS / 1000.0
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=np.exp(-STEPS / 100.0),
                    test_loss=np.full(STEPS.size, 3.0), weight_norm=norm, train_level=0.99)
    e = c["t_test (test acc >= 0.99)"]
    assert e.value == math.inf and e.formatted() == "never" and e.status == "measured"
    assert c.value("Delta t = t_test - t_train") == math.inf
    assert c["lag t_rep(weight norm) - t_rep(test acc)"].status.startswith("n/a")
    assert c["barrier Delta F / T_eff = ln(t_grok / t_mem)"].status.startswith("n/a")
    assert c["t_train <= t_cls < t_test"].status.startswith("n/a")
    assert "t_test" in c.clocks and math.isinf(c.clocks["t_test"])
    text = c.table()
    assert "never" in text and "n/a:" in text


def test_flat_statistic_gives_nan_not_an_error():
    train, test, _, _ = grokking_curves()
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, weight_norm=np.full(STEPS.size, 3.0))
    e = c["t_rep(weight norm)"]
    assert e.status == "n/a: the statistic ends where it started in every run" and e.formatted() == "n/a"
    assert c["t_rep (representation clock)"].status.startswith("n/a")


def test_designed_split_ceiling_below_one_and_violation_is_flagged():
    p = 11
    labels = COV.label_table(p, "add")
    train_mask = np.random.default_rng(0).random((p, p)) < 0.5
    train_mask &= labels != 0  # label 0 never trained: those test pairs are uncoverable
    ceil = COV.accuracy_ceiling(train_mask, labels, math.inf, b_offset=0)
    assert ceil < 1
    steps = np.arange(0, 1001, 100.0)
    ok = np.minimum(steps / 500, 1) * (ceil - 0.05)
    c = compare_run(steps=steps, train_acc=np.minimum(steps / 100, 1), test_acc=ok, train_mask=train_mask, p=p)
    assert c.value("test-accuracy ceiling Ceil(inf)") == ceil
    assert c["test-accuracy ceiling Ceil(inf)"].status == "predicted"
    assert c.value("test accuracy <= ceiling (+ chance allowance)") is True
    assert "t_test cannot fire" in c["test-accuracy ceiling Ceil(inf)"].note
    # a run above the ceiling + allowance is reported as violating it (this would be a bug in a real run)
    bad = compare_run(steps=steps, train_acc=np.minimum(steps / 100, 1), test_acc=np.minimum(steps / 500, 1),
                      train_mask=train_mask.reshape(-1))
    assert bad.value("test accuracy <= ceiling (+ chance allowance)") is False
    assert bad.value("lambda = d_in / N_train") == pytest.approx(L.modular_lambda(train_mask.sum() / p ** 2, p))


def test_kramers_spread_exponential_vs_regular():
    rng = np.random.default_rng(3)
    steps = np.arange(0, 20001, 10, dtype=float)
    train = np.tile(sigmoid(steps, 100.0, 5.0), (12, 1))

    def runs(delays):
        return np.stack([sigmoid(steps, 200 + d, 20.0) for d in delays])

    expo = compare_run(steps=steps, train_acc=train, test_acc=runs(rng.exponential(3000.0, 12)))
    assert expo["KS p-value, Delta t ~ exponential"].value >= 0.05
    assert expo.value("escape_like") is True
    assert expo.verdict("kramers").verdict == "consistent" and expo.verdict("kramers").value >= 0.05
    regular = compare_run(steps=steps, train_acc=train, test_acc=runs(3000 + rng.normal(0, 100, 12)))
    assert regular.value("CV of Delta t over seeds (escape: 1)") < 0.1
    assert regular.value("escape_like") is False
    # a run that must come out inconsistent: deterministic delays are no activated escape (erratum kramers-13)
    v = regular.verdict("kramers")
    assert (v.verdict, v.spec_id, v.quantity) == ("inconsistent", "kramers:eq15", "ks_pvalue") and v.value < 0.05
    few = compare_run(steps=steps, train_acc=train[:3], test_acc=runs([1000, 1500, 2000]))
    assert few["KS p-value, Delta t ~ exponential"].status == "n/a: needs >= 5 seeds that grok (have 3)"
    assert few["CV of Delta t over seeds (escape: 1)"].available
    assert few.verdict("kramers").verdict == "cannot tell" and "have 3" in few.verdict("kramers").reason


def test_levi_prediction_and_lambda_star_fit_use_the_library():
    train, test, _, _ = grokking_curves()
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, lam=0.5, levi_params=dict(eps=1e-3, eta0=0.01))
    e = c["Delta t, linear estimator"]
    assert e.status == "predicted" and e.value == L.grok_time(0.5, 1e-3, 0.01)
    lams = np.array([0.05, 0.07, 0.09, 0.1])
    dts = 3.0 * (0.12 - lams) ** -2
    c2 = compare_run(steps=STEPS, train_acc=train, test_acc=test, lam=0.08, lam_sweep=(lams, dts))
    C_fit, lam_star = L.fit_inverse_square(lams, dts)
    assert c2.value("lambda* (fit Delta t = C (lambda* - lambda)^-2)") == pytest.approx(lam_star)
    assert c2.value("Delta t from the lambda* fit") == pytest.approx(C_fit * (lam_star - 0.08) ** -2)
    with pytest.raises(DomainError, match="eps"):
        compare_run(steps=STEPS, train_acc=train, test_acc=test, lam=0.5, levi_params=dict(eta0=0.01))


def test_repulsion_from_gap_series_and_from_weight_snapshots():
    steps = np.arange(0, 400, dtype=float)
    gap = np.where(steps < 150, 1.0, np.exp(0.1 * (steps - 150)))
    acc = np.clip(steps / 300, 0, 1)
    c = compare_run(steps=steps, train_acc=acc, test_acc=acc, gap=gap)
    fire, _ = R.slope_detector(gap)
    assert c.value("lock-in (slope detector fires)") == fire
    assert c.clocks["lock-in"] == fire
    assert c.value("test acc >= 0.5 (grokking epoch of the paper)") == 150.0
    W = np.cumsum(np.random.default_rng(0).normal(size=(60, 30)), axis=0)
    s = np.arange(60.0)
    cw = compare_run(steps=s, train_acc=np.linspace(0, 1, 60), weights=W, slope_t_min=0, slope_lag=5)
    g = R.eigengap(R.rolling_gram_eigenvalues(np.diff(W, axis=0), 20, 3))
    f, _ = R.slope_detector(g, lag=5, t_min=0)
    assert cw.value("lock-in (slope detector fires)") == (math.inf if f is None else f)
    sparse = compare_run(steps=s * 10, train_acc=np.linspace(0, 1, 60), weights=W)
    assert "consecutive steps" in sparse["lock-in (slope detector fires)"].status


# ------------------------------------------------------------------------------------------ output


def test_table_markdown_dicts_and_plot(tmp_path):
    train, test, loss, test_loss = grokking_curves(n_runs=3)
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss, test_loss=test_loss)
    assert isinstance(c, Comparison) and len(c.theory("kramers")) >= 3
    text = c.table()
    assert text.splitlines()[0].startswith("run: arrays; 3 run(s)")
    for t in ("levi", "clocks", "kramers", "coverage", "repulsion"):
        assert t in text
    md = c.table(markdown=True)
    assert "| theory | id | quantity | value | spec ID | status | note |" in md
    assert "| theory | verdict |" in md
    json.dumps(c.as_dicts())
    pytest.importorskip("matplotlib")
    fig = c.plot(tmp_path / "run.png")
    assert (tmp_path / "run.png").stat().st_size > 1000
    assert len(fig.axes) == 2 and fig.axes[0].get_xscale() == "log"


def _flat(text):
    return " ".join(text.split())


@pytest.mark.parametrize("width", [40, 80, 100, 120, 160, 200])
def test_table_fits_the_width_and_loses_nothing(width):
    """Every line of the terminal table holds at most `width` characters (the status column of a run that has not
    grokked reached 262 at every width before), and every quantity, value, spec ID, status, note and verdict is
    there in full, only wrapped at spaces: under 113 columns as a block per entry, above as wrapped columns."""
    train, test, loss, _ = grokking_curves(n_runs=3)
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss)
    text = c.table(width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    flat = _flat(text)
    for e in c.entries:
        for part in (e.quantity, e.formatted(), e.spec_id, e.status, e.note):
            assert _flat(part) in flat, (width, part)
    for v in c.verdicts:
        assert _flat(v.line()) in flat
    wide = c.table(width=0)
    assert max(len(line) for line in wide.splitlines()) > 200  # one line per row, however long
    assert sum(line.startswith("levi ") for line in wide.splitlines()) == len(c.theory("levi"))
    blocks = text.splitlines().count("levi") == 1  # the theory as a heading of its entries
    assert blocks == (width < 160)
    assert c.table(markdown=True, width=width) == c.table(markdown=True)


def test_table_width_default_is_the_terminal_and_is_checked(monkeypatch):
    c = compare_run(steps=STEPS, train_acc=grokking_curves()[0], test_acc=grokking_curves()[1])
    monkeypatch.setenv("COLUMNS", "90")
    assert c.table() == c.table(width=90) == str(c)
    assert c.table(width=10) == c.table(width=40)  # narrower requests give 40
    for bad in (-1, 1.5, "80", True):
        with pytest.raises(DomainError, match="width"):
            c.table(width=bad)


def test_entry_formatting():
    train, test, _, _ = grokking_curves(n_runs=2)
    test[1] = 0.2
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test)
    assert c["t_test (test acc >= 0.99)"].formatted() == "3190 (1/2)"
    assert str(c) == c.table()


# ------------------------------------------------------------------------------------------ validation


@pytest.mark.parametrize("kwargs, match", [
    (dict(steps=[0, 2, 1], train_acc=[0, 0.5, 1]), "increasing"),
    (dict(steps=[0, 1, 2], train_acc=[0, 0.5, 1.5]), r"\[0, 1\]"),
    (dict(steps=[0, 1, 2], train_acc=[0, 0.5]), "shape"),
    (dict(steps=[0, 1, 2]), "at least one"),
    (dict(steps=[0, 1, 2], train_acc=[0, np.inf, 1]), "finite"),
    (dict(steps=[0, 1, 2], train_acc=[np.nan, np.nan, np.nan]), "holds no value"),
    (dict(steps=[0, 1, 2], train_acc=[[0, 1, 1], [np.nan] * 3]), "no value in run 1"),
    (dict(steps=[0, 1, 2], train_acc=[0, 0.5, 1], train_loss=[1, -1, 0]), ">= 0"),
    (dict(steps=[0, 1, 2], train_acc=[[0, 0.5, 1]], test_acc=[[0, 0, 0], [0, 0, 0]]), "number of runs"),
    (dict(steps=[0, 1, 2], train_acc=[0, 0.5, 1], train_mask=np.ones((3, 3), bool)), "training and one test"),
    (dict(steps=[0, 1, 2], train_acc=[0, 0.5, 1], train_mask=np.ones(10, bool)), r"p\*p entries"),
    (dict(steps=[0, 1, 2], train_acc=[0, 0.5, 1], train_mask=np.eye(3, dtype=bool), p=5), "p=3"),
    (dict(steps=[0, 1, 2], train_acc=[0, 0.5, 1], lam=-1), "lam"),
    (dict(steps=[0, 1, 2], train_acc=[0, 0.5, 1], delta=1.5), "delta"),
    (dict(steps=[0, 1, 2], train_acc=[0, 0.5, 1], embeddings=np.zeros((2, 3, 4))), "embeddings"),
])
def test_invalid_input_raises_domain_error(kwargs, match):
    with pytest.raises(DomainError, match=match):
        compare_run(**kwargs)


def test_invalid_run_objects():
    with pytest.raises(DomainError, match="no column reads as a series"):
        compare_run({"steps": [0, 1], "train_top5": [0, 1]})
    with pytest.raises(DomainError, match="run must be"):
        compare_run(42)
    with pytest.raises(DomainError, match="give a run"):
        compare_run()
    with pytest.raises(DomainError, match="existing log file"):
        load_run("/nonexistent/run.npz")


def test_rundata_override_and_mapping_input():
    rd = run_data(steps=STEPS, train_acc=sigmoid(STEPS, 300, 30), test_acc=sigmoid(STEPS, 2500, 150))
    assert isinstance(rd, RunData) and rd.n_runs == 1
    a = compare_run(rd, test_level=0.5)
    assert a.value("t_test (test acc >= 0.5)") == 2500.0
    b = compare_run({"steps": STEPS, "train_acc": rd.train_acc[0], "test_acc": rd.test_acc[0]}, test_level=0.5)
    assert b.value("t_test (test acc >= 0.5)") == 2500.0


# ------------------------------------------------------------------------------------------ files


def test_user_npz_round_trip(tmp_path):
    train, test, loss, test_loss = grokking_curves()
    p = 7
    mask = np.random.default_rng(0).random((p, p)) < 0.5
    path = tmp_path / "mine.npz"
    np.savez(path, steps=STEPS, train_acc=train, test_acc=test, train_loss=loss, test_loss=test_loss,
             train_mask=mask, p=p, operation="add")
    rd = load_run(path)
    assert rd.p == 7 and rd.operation == "add" and rd.train_mask.shape == (1, 7, 7)
    direct = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss, test_loss=test_loss,
                         train_mask=mask, p=p)
    via = compare_run(str(path))
    assert [e.formatted() for e in via.entries] == [e.formatted() for e in direct.entries]
    np.savez(tmp_path / "extra.npz", steps=STEPS, acc=train, learning_rate=np.ones(STEPS.size))
    with pytest.warns(UserWarning, match="ignored columns.*learning_rate"):
        assert load_run(tmp_path / "extra.npz").train_acc[0].tolist() == train.tolist()  # 'acc' = train accuracy
    assert set(USER_KEYS) >= {"steps", "train_acc", "test_acc", "train_mask", "gap", "weights"}


def test_engine_npz_random_split_and_grid(tmp_path):
    """An engine-shaped trajectory (no training): grid selection, split rebuild, save/load equality."""
    pytest.importorskip("jax")
    from grokclocks.sim.data import random_split_mask
    from grokclocks.sim.modular import TrainConfig
    from grokclocks.sim.train import Trajectory

    p, seeds, times = 5, (0, 1), np.arange(0, 101, 10)
    cfg = TrainConfig(model="embedding_mlp", model_kwargs=(), p=p, operation="add", train_frac=(0.5,), split="random",
                      split_seed=None, seeds=seeds, optimizer="adamw", lr=(1e-3,), weight_decay=(1.0, 0.0),
                      betas=(0.9, 0.98), eps=1e-8, warmup_steps=0, loss="ce", batch_size=None, steps=100,
                      record_every=10, grid_axes=("weight_decay",), dtype="float32")
    acc_tr = np.tile(np.minimum(times / 30, 1), (2, 2, 1))
    acc_te = np.stack([np.tile(np.minimum(times / 80, 1), (2, 1)), np.full((2, times.size), 0.4)])
    metrics = {"acc_train": acc_tr, "acc_test": acc_te, "loss_train": np.exp(-acc_tr * 10), "loss_test": 2 - acc_te,
               "param_norm": 5 + np.exp(-times / 50) * np.ones((2, 2, 1))}
    n_train = np.full((2, 2), int(0.5 * p * p))
    traj = Trajectory(times=times, metrics=metrics, config=cfg, extras={"n_train": n_train})
    with pytest.raises(DomainError, match="grid"):
        compare_run(traj)
    c = compare_run(traj, index=(0,))
    assert c.run.n_runs == 2 and c.run.p == p
    assert np.array_equal(c.run.train_mask.reshape(2, -1), random_split_mask(p, seeds, frac=0.5))
    assert c.value("t_test (test acc >= 0.99)") == 80.0
    assert compare_run(traj, index=(1,)).value("t_test (test acc >= 0.99)") == math.inf
    traj.save(tmp_path / "engine")
    via = compare_run(str(tmp_path / "engine.npz"), index=(0,))
    assert [e.formatted() for e in via.entries] == [e.formatted() for e in c.entries]
    with pytest.raises(DomainError, match="index"):
        load_run(tmp_path / "engine.npz", index=(5,))
    # a damaged engine file is a RunFileError naming the file (was zipfile.BadZipFile, or read as a foreign log)
    from grokclocks.runfile import RunFileError

    data = (tmp_path / "engine.npz").read_bytes()
    for cut, what in ((len(data) // 2, "truncated|damaged"), (len(data) - 1, "truncated|damaged"), (0, "empty")):
        (tmp_path / "cut.npz").write_bytes(data[:cut])
        (tmp_path / "cut.json").write_bytes((tmp_path / "engine.json").read_bytes())
        with pytest.raises(RunFileError, match=what) as exc:
            compare_run(str(tmp_path / "cut.npz"), index=(0,))
        assert "cut.npz" in str(exc.value)
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    (tmp_path / "cut.npz").write_bytes(bytes(flipped))
    with pytest.raises(RunFileError):
        load_run(tmp_path / "cut.npz", index=(0,))


def test_core_import_does_not_load_jax():
    code = "import sys, grokclocks.compare; print('jax' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_engine_train_frac_sweep_gives_lambda_star_fit():
    """A train_frac grid of an engine run feeds the levi:appG fit Delta t = C (lambda* - lambda)^-2."""
    pytest.importorskip("jax")
    from grokclocks.sim.modular import TrainConfig
    from grokclocks.sim.train import Trajectory

    p, fracs, seeds, times = 5, (0.3, 0.5, 0.7), (0, 1), np.arange(0, 2001, 10)
    n_train = np.array([[int(f * p * p)] * 2 for f in fracs])  # 7, 12, 17
    lams = 2 * p / n_train[:, 0]
    t_test = 30 + np.ceil(300.0 / (2.0 - lams) ** 2 / 10) * 10
    acc_tr = np.tile(np.minimum(times / 30, 1), (3, 2, 1))
    acc_te = np.stack([np.tile((times >= t).astype(float), (2, 1)) for t in t_test])
    cfg = TrainConfig(model="embedding_mlp", model_kwargs=(), p=p, operation="add", train_frac=fracs, split="random",
                      split_seed=0, seeds=seeds, optimizer="adamw", lr=(1e-3,), weight_decay=(1.0,), betas=(0.9, 0.98),
                      eps=1e-8, warmup_steps=0, loss="ce", batch_size=None, steps=2000, record_every=10,
                      grid_axes=("train_frac",), dtype="float32")
    traj = Trajectory(times=times, metrics={"acc_train": acc_tr, "acc_test": acc_te}, config=cfg,
                      extras={"n_train": n_train})
    c = compare_run(traj, index=(1,))
    C_fit, lam_star = L.fit_inverse_square(lams, t_test - 30)
    # same data; lambda = 2p/n here and 2/(alpha p) in modular_lambda round differently
    assert c.value("lambda* (fit Delta t = C (lambda* - lambda)^-2)") == pytest.approx(lam_star, rel=1e-8)
    assert c.value("lambda = d_in / N_train") == pytest.approx(lams[1])
    assert c.value("Delta t from the lambda* fit") == pytest.approx(C_fit * (lam_star - lams[1]) ** -2, rel=1e-6)
    assert c.run.train_mask.shape == (2, p, p) and c.run.train_mask.sum(axis=(1, 2)).tolist() == [12, 12]


# ------------------------------------------------------------------------------------------ IDs, JSON, cadences


def test_quantity_ids_are_stable_and_documented():
    train, test, loss, test_loss = grokking_curves()
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss, test_loss=test_loss,
                    weight_norm=10 + np.exp(-STEPS / 400), train_mask=np.eye(7, dtype=bool) | np.tri(7, k=-3, dtype=bool))
    ids = [e.id for e in c.entries]
    assert all(ids) and len(ids) == len(set(ids))
    assert set(ids) <= set(QUANTITY_IDS), set(ids) - set(QUANTITY_IDS)
    assert c.value("t_test") == c.value("t_test (test acc >= 0.99)") == first_record_at(2500, 150, 0.99)
    assert c.value("delay_ratio") == c.value("t_test") / c.value("t_train")
    with pytest.raises(KeyError, match="IDs: lambda, delta_t"):
        c.value("no_such_quantity")


def test_json_numbers_are_numbers_and_inf_is_null_with_state_never():
    train, test, loss, _ = grokking_curves(n_runs=2)
    test[1] = 0.3  # the second seed never generalises
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss)
    js = c.as_json()
    text = json.dumps(js, allow_nan=False)  # no NaN/Infinity tokens and no "inf" strings
    assert '"inf"' not in text
    by_id = {e["id"]: e for e in js["entries"]}
    e = by_id["t_test"]
    assert e["value"] == 3190.0 and e["state"] == "measured"
    assert e["per_run"] == [3190.0, None] and e["per_run_state"] == ["ok", "never"]
    never = compare_run(steps=STEPS, train_acc=train[1], test_acc=test[1]).as_json()
    t = {x["id"]: x for x in never["entries"]}["t_test"]
    assert t["value"] is None and t["state"] == "never"
    assert [v["theory"] for v in js["verdicts"]] == ["levi", "clocks", "kramers", "coverage", "repulsion"]
    assert {v["verdict"] for v in js["verdicts"]} <= {"consistent", "inconsistent", "cannot tell"}


def test_to_dataframe():
    pytest.importorskip("pandas")
    train, test, _, _ = grokking_curves()
    df = compare_run(steps=STEPS, train_acc=train, test_acc=test).to_dataframe()
    assert df.loc["t_test", "value"] == first_record_at(2500, 150, 0.99)
    assert df.loc["t_test", "spec_id"] == "kramers:milestones" and df.loc["ceiling", "state"] == "n/a"


def test_separate_cadences_are_read_on_their_own_records():
    """Train metrics every 10 steps, test every 100: NaN gaps on the union grid, nothing interpolated."""
    train, test, loss, _ = grokking_curves()
    sparse = np.where(STEPS % 100 == 0, test, np.nan)
    c = compare_run(steps=STEPS, train_acc=train, test_acc=sparse, train_loss=loss)
    t100 = STEPS[STEPS % 100 == 0]
    assert c.value("t_test") == C.first_hitting_time(t100, test[STEPS % 100 == 0], 0.99, direction="above") == 3200
    # the sustained classifier clock counts logged records: a gap never breaks (or fakes) a window
    gappy_loss = np.where(STEPS % 20 == 0, loss, np.nan)
    g = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=gappy_loss)
    t20 = STEPS[STEPS % 20 == 0]
    assert g.value("t_cls_sustained") == C.classifier_clock(t20, loss[STEPS % 20 == 0], 1e-3, window=5)
    notes = "\n".join(c.run.input_notes)
    assert "nothing is interpolated" in notes and "test_acc: 51 records, every 100" in notes
    assert "test_acc: 51 records" in c.table()


def test_embedding_snapshots_at_their_own_steps():
    p, d = 7, 4
    steps = np.arange(0, 1001, 10.0)
    snap = np.arange(0, 1001, 250.0)
    rng = np.random.default_rng(2)
    E = rng.normal(size=(snap.size, p, d))
    acc = np.minimum(steps / 500, 1)
    c = compare_run(steps=steps, train_acc=acc, test_acc=acc, embeddings=E, embedding_steps=snap, p=p, window=1)
    sr = __import__("grokclocks.spectral", fromlist=["x"]).stable_rank(E)
    assert c.value("t_rep_srank") == C.representation_clock(snap, C.stable_rank_gap(sr), 0.1)
    with pytest.raises(DomainError, match="embedding_steps"):
        compare_run(steps=steps, train_acc=acc, embeddings=E, p=p)


def test_train_mask_forms_agree():
    p = 11
    labels = COV.label_table(p, "add")
    mask = (np.random.default_rng(0).random((p, p)) < 0.5) & (labels != 0)
    steps = np.arange(0, 1001, 100.0)
    acc = np.minimum(steps / 500, 1) * 0.5
    base = compare_run(steps=steps, train_acc=acc, test_acc=acc, train_mask=mask)
    for form in (mask.reshape(-1), mask.astype(int), np.flatnonzero(mask), np.argwhere(mask)):
        c = compare_run(steps=steps, train_acc=acc, test_acc=acc, train_mask=form, p=p)
        assert c.value("ceiling") == base.value("ceiling") < 1


# ------------------------------------------------------------------------------------------ verdicts


def test_verdict_clocks_consistent_and_inconsistent():
    train, test, loss, _ = grokking_curves()
    good = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss, train_level=0.99)
    v = good.verdict("clocks")
    assert (v.verdict, v.spec_id) == ("consistent", "clocks:appB")
    assert v.value == pytest.approx(good.value("t_test") / good.value("t_cls"))
    # the training loss reaches eps only after the test accuracy generalised: the ordering is violated
    late_loss = np.exp(-STEPS / 600.0)
    bad = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=late_loss)
    vb = bad.verdict("clocks")
    assert vb.verdict == "inconsistent" and vb.value == pytest.approx(bad.value("t_test") / bad.value("t_cls"))
    assert vb.value <= 1
    none = compare_run(steps=STEPS, train_acc=train, test_acc=test)
    assert none.verdict("clocks").verdict == "cannot tell" and "training loss" in none.verdict("clocks").reason


def test_verdict_coverage_consistent_inconsistent_and_vacuous():
    p = 11
    labels = COV.label_table(p, "add")
    mask = (np.random.default_rng(0).random((p, p)) < 0.5) & (labels != 0)
    ceil = COV.accuracy_ceiling(mask, labels, math.inf, b_offset=0)
    steps = np.arange(0, 1001, 100.0)
    tr = np.minimum(steps / 100, 1)
    ok = compare_run(steps=steps, train_acc=tr, test_acc=np.minimum(steps / 500, 1) * (ceil - 0.05), train_mask=mask)
    assert ok.verdict("coverage").verdict == "consistent" and ok.verdict("coverage").spec_id == "uniformity:thm3.10"
    bad = compare_run(steps=steps, train_acc=tr, test_acc=np.minimum(steps / 500, 1), train_mask=mask)
    vb = bad.verdict("coverage")
    assert vb.verdict == "inconsistent" and vb.value == 1.0 and vb.quantity == "max_test_acc"
    full = np.random.default_rng(0).random((p, p)) < 0.5  # covers every label: ceiling 1
    vac = compare_run(steps=steps, train_acc=tr, test_acc=np.minimum(steps / 500, 1), train_mask=full)
    assert vac.value("ceiling") == 1.0 and vac.verdict("coverage").verdict == "cannot tell"


def test_verdict_repulsion():
    steps = np.arange(0, 400, dtype=float)
    gap = np.where(steps < 150, 1.0, np.exp(0.1 * (steps - 150)))
    acc = np.clip(steps / 300, 0, 1)
    c = compare_run(steps=steps, train_acc=acc, test_acc=acc, gap=gap)
    assert c.verdict("repulsion").verdict == "consistent"  # fires and reaches test acc 0.5
    nogrok = compare_run(steps=steps, train_acc=acc, test_acc=np.full(steps.size, 0.1), gap=gap)
    v = nogrok.verdict("repulsion")
    assert v.verdict == "inconsistent" and v.value == 1.0 and v.spec_id == "repulsion:headline"
    quiet = compare_run(steps=steps, train_acc=acc, test_acc=np.full(steps.size, 0.1), gap=np.ones(steps.size))
    assert quiet.verdict("repulsion").verdict == "consistent"  # neither fires nor groks


def test_verdict_levi():
    train, test, _, _ = grokking_curves()
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_level=0.99, lam=0.5,
                    levi_params=dict(eps=1e-3, eta0=0.01))
    v = c.verdict("levi")
    pred = L.grok_time(0.5, 1e-3, 0.01)
    assert v.value == pytest.approx(c.value("delta_t") / pred) and v.verdict == "inconsistent"  # 2750 vs 431
    # a run whose delay is the linear estimator's, within 15 %
    t_te = 440.0 + 1.1 * pred
    test2 = sigmoid(STEPS, t_te - 150 * math.log(99), 150.0)
    c2 = compare_run(steps=STEPS, train_acc=train, test_acc=test2, train_level=0.99, lam=0.5,
                     levi_params=dict(eps=1e-3, eta0=0.01))
    assert c2.verdict("levi").verdict == "consistent" and abs(c2.verdict("levi").value - 1) <= 0.15
    assert compare_run(steps=STEPS, train_acc=train, test_acc=test).verdict("levi").verdict == "cannot tell"
    lams = np.array([0.05, 0.07, 0.09, 0.1])
    fit = compare_run(steps=STEPS, train_acc=train, test_acc=test, lam=0.08, lam_sweep=(lams, 3.0 * (0.12 - lams) ** -2))
    assert fit.verdict("levi").verdict == "consistent" and fit.verdict("levi").spec_id == "levi:appG"
    noisy = compare_run(steps=STEPS, train_acc=train, test_acc=test, lam=0.08,
                        lam_sweep=(lams, np.array([100.0, 2000.0, 150.0, 3000.0])))
    vn = noisy.verdict("levi")
    assert noisy["lambda_star"].available and vn.verdict == "inconsistent" and vn.value > 0.15


def test_verdicts_in_the_table_and_cite():
    train, test, loss, _ = grokking_curves(n_runs=3)
    c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss)
    text = c.table()
    assert "verdicts:" in text and "clocks     consistent: t_test / t_cls" in text
    ids = c.spec_ids()
    assert "kramers:milestones" in ids and "clocks:appB" in ids and "uniformity:thm3.10" not in ids
    with pytest.warns(UserWarning, match="incomplete"):
        bib = c.cite()
    assert "@misc{tan2026twoclocks" in bib and "kramers2026grokkingdelay" in bib
    assert "gu2025beyond" not in bib  # the coverage entries were n/a: nothing of that paper was used


def test_plot_gives_each_seed_its_own_colour(tmp_path):
    pytest.importorskip("matplotlib")
    train, test, loss, _ = grokking_curves(n_runs=3)
    fig = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss).plot()
    colours = {ln.get_color() for ln in fig.axes[0].get_lines() if ln.get_linestyle() in ("-", "--")}
    assert len(colours) == 3


def _close_clocks(n_runs=5):
    """Seeds whose train clock, classifier clock and test clock fall within 6 % of one another (420, 435, 445)
    and a representation clock at 505: their lines lie a few pixels apart on the log axis."""
    steps = np.arange(0, 3001, 5.0)
    sig = lambda t, c, w: 1.0 / (1.0 + np.exp(-(t - c) / w))  # noqa: E731
    runs = range(n_runs)
    return compare_run(steps=steps, train_acc=np.stack([sig(steps, 360 + 2 * i, 12) for i in runs]),
                       test_acc=np.stack([sig(steps, 380 + 2 * i, 20) for i in runs]),
                       train_loss=np.stack([np.exp(-steps / (62 + 0.3 * i)) + 1e-7 for i in runs]),
                       weight_norm=np.stack([10 - 5 * sig(steps, 470 + i, 15) for i in runs]),
                       test_level=0.95, train_level=0.99)


def _label_boxes(fig):
    """(text, bbox, x of its clock's line) of each clock label, and the x and top of each stub, in pixels."""
    fig.draw_without_rendering()
    ax = fig.axes[0]
    labels, stubs = [], []
    for a in ax.texts:
        if a.get_transform() is ax.transAxes:  # a note in axes coordinates, not a clock
            continue
        x = ax.transData.transform((getattr(a, "xy", a.get_position())[0], 1.0))[0]
        if a.get_text():
            labels.append((a.get_text(), a.get_window_extent(), x))
        else:
            stubs.append((x, a.get_window_extent().y0))
    return labels, stubs, ax.get_window_extent()


@pytest.mark.parametrize("case", ["close", "grokking"])
def test_plot_clock_labels_clear_the_curves_one_another_and_the_stubs(case):
    """Every clock label sits above the top axes (no curve under it), spans its own line, keeps clear of the
    other labels, and no stub that joins a higher label to its line runs through a lower label.  The old layout
    (labels inside the axes at 1.0 - 0.08 k, 't_train = 50' on the train-accuracy curve) fails the first."""
    pytest.importorskip("matplotlib")
    if case == "close":
        c = _close_clocks()
        assert [c.clocks[k] for k in ("t_train", "t_cls", "t_test")] == [420.0, 435.0, 445.0]
    else:
        train, test, loss, _ = grokking_curves(n_runs=3)
        c = compare_run(steps=STEPS, train_acc=train, test_acc=test, train_loss=loss)
    labels, stubs, axes = _label_boxes(c.plot())
    drawable = [t for t in c.clocks.values() if math.isfinite(t) and t > 0]
    assert len(labels) == len(set(drawable)) >= 3
    for text, box, x in labels:
        assert box.y0 >= axes.y1 - 0.5, f"{text!r} is inside the axes"
        assert box.x0 - 1 <= x <= box.x1 + 1, f"{text!r} is not at its line"
        assert axes.x0 - 1 <= box.x0 and box.x1 <= axes.x1 + 1
    for i, (ti, bi, _) in enumerate(labels):
        for tj, bj, _ in labels[i + 1:]:
            assert not bi.overlaps(bj), f"{ti!r} and {tj!r} overlap"
    for x, top in stubs:
        for text, box, _ in labels:
            if box.y1 <= top + 0.5:  # a label below the stub's top: the stub must pass beside it
                assert not box.x0 < x < box.x1, f"a stub runs through {text!r}"
    if case == "close":
        assert stubs, "three clocks within 6 % need stacked labels"


def test_plot_returned_without_a_path_shows_names_as_text():
    """`plot()` with no path returns a figure whose texts are not mathtext: a title or run named `$\\oops$`
    (an unknown command) is drawn as written, not parsed (drawing it raised in matplotlib before)."""
    pytest.importorskip("matplotlib")
    from matplotlib.text import Text

    fig = _close_clocks(2).plot(title="run $\\oops$ \x1b[2J")
    fig.draw_without_rendering()  # raised ValueError (unknown symbol \\oops) before
    ticks = {id(t) for ax in fig.axes for t in ax.get_xticklabels(which="both") + ax.get_yticklabels(which="both")}
    texts = [t for t in fig.findobj(Text) if id(t) not in ticks and t.get_text()]
    assert fig._suptitle.get_text() == "run $\\oops$ \\x1b[2J"
    assert texts and not any(t.get_parse_math() for t in texts if t is not fig.axes[0].xaxis.get_offset_text())


def test_load_run_settings_of_a_log_are_checked_not_truncated(tmp_path):
    # a log's p / b_offset go through run_data's integer check; before, int() read p = 31.5 as 31
    base = {"step": [0.0, 10, 20], "train_acc": [0.1, 0.5, 1.0], "val_acc": [0.0, 0.2, 0.9]}
    for p, want in ((31, 31), (31.0, 31), (np.array([31]), 31)):
        np.savez(tmp_path / "run.npz", p=p, **base)
        assert load_run(tmp_path / "run.npz").p == want
    (tmp_path / "run.json").write_text(json.dumps(dict(base, p="31")))
    assert load_run(tmp_path / "run.json").p == 31
    for bad in (31.5, [31, 37]):
        np.savez(tmp_path / "run.npz", p=bad, **base)
        with pytest.raises(DomainError, match=r"p must be an integer >= 2"):
            load_run(tmp_path / "run.npz")
    np.savez(tmp_path / "run.npz", b_offset=1.5, **base)
    with pytest.raises(DomainError, match=r"b_offset must be an integer >= 0 \(got 1\.5\)"):
        load_run(tmp_path / "run.npz")
    for lam, want in ((0.5, 0.5), ("0.5", 0.5), (np.array([0.5]), 0.5)):
        (tmp_path / "run.json").write_text(json.dumps(dict(base, lam=lam if not isinstance(lam, np.ndarray) else [0.5])))
        assert load_run(tmp_path / "run.json").lam == want
    np.savez(tmp_path / "run.npz", lam=True, **base)  # was float(True) = 1.0
    with pytest.raises(DomainError, match=r"lam must be a real number"):
        load_run(tmp_path / "run.npz")
    np.savez(tmp_path / "run.npz", lam=[0.1, 0.2], **base)  # was a bare TypeError from float()
    with pytest.raises(DomainError, match=r"lam must be a scalar"):
        load_run(tmp_path / "run.npz")


# ============================================================================================ reading, the door in


def test_an_empty_path_is_refused_not_read_as_the_current_folder(tmp_path, monkeypatch):
    """`grokclocks compare ''` read the current folder (Path('') is '.')."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DomainError, match=r"an empty path"):
        load_run("")
    with pytest.raises(DomainError, match=r"an empty path"):
        compare_run("")
    with pytest.raises(DomainError, match=r"an empty path"):
        load_run(["", "x.csv"])
    from grokclocks.logs import read_log

    with pytest.raises(DomainError, match=r"^'': an empty path"):
        read_log("")


def test_json_per_run_lists_carry_their_run_names(tmp_path):
    """Every per-run list of the JSON output has the run (seed) of each value beside it, in the run order."""
    steps = np.arange(0, 3001, 50.0)
    for name, t_grok in (("seed10", 2000.0), ("seed2", 2500.0)):
        d = tmp_path / "runs" / name
        d.mkdir(parents=True)
        acc = 1 / (1 + np.exp(-(steps - t_grok) / 100))
        (d / "metrics.csv").write_text("step,train_acc,val_acc\n" + "".join(
            f"{s:g},{min(1.0, s / 300):.6f},{a:.6f}\n" for s, a in zip(steps, acc)))
    c = compare_run(str(tmp_path / "runs"))
    js = c.as_json()
    assert js["run_names"] == ["seed2", "seed10"]  # natural order, not seed10 before seed2
    t_test = next(e for e in js["entries"] if e["id"] == "t_test")
    assert t_test["per_run_names"] == ["seed2", "seed10"] and len(t_test["per_run"]) == 2
    assert t_test["per_run"][0] > t_test["per_run"][1]  # seed2 groks later (2500) than seed10 (2000)
    assert all(len(e["per_run_names"]) in (0, len(e["per_run"])) for e in js["entries"])
    one = compare_run(steps=steps, train_acc=np.minimum(1, steps / 300), test_acc=np.minimum(1, steps / 2000))
    assert one.as_json()["run_names"] == ["run 0"]


def test_messages_quote_little_and_list_at_most_a_line(tmp_path):
    """A message lists at most MAX_MESSAGE characters (a one-line error of 2.3 MB listed 100,000 columns), names a
    column that carries its own steps by its name (not 'its own steps'), and a /proc file (size 0 in fstat) is
    read, not called empty."""
    from grokclocks.logs import LogError, read_log
    from grokclocks.logs._table import MAX_MESSAGE

    wide = tmp_path / "wide.csv"
    def sep(i: int) -> str:  # the i-th string of separators: train<sep>acc reads as train_acc for each
        out = ""
        while True:
            out += "_-./: "[i % 6]
            i //= 6
            if not i:
                return out

    names = [f"train{sep(i)}acc" for i in range(5_000)]
    wide.write_text("step," + ",".join(names) + "\n0," + ",".join("0.5" for _ in names) + "\n")
    with pytest.raises(LogError) as e:
        read_log(wide)
    assert len(str(e.value)) <= MAX_MESSAGE and "5000 columns read as train_acc" in str(e.value)
    with pytest.raises(LogError, match=r"column 'val_acc' row 1: step 5 goes back from step 10"):
        read_log({"train_acc": [0.1, 0.2], "steps": [0, 10], "val_acc": [0.1, 0.2], "val_acc_steps": [10, 5]})
    sacred = tmp_path / "metrics.json"
    sacred.write_text(json.dumps({"val.acc": {"steps": [0, "x"], "values": [0.1, 0.2]}}))
    with pytest.raises(LogError) as e:
        read_log(sacred)
    assert "its own steps" not in str(e.value) and "val.acc" in str(e.value)
    status = Path("/proc/self/status")
    if status.exists():
        with pytest.raises(LogError) as e:
            read_log(status)
        assert "empty" not in str(e.value)
