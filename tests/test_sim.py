"""Tests of the JAX simulation layer (grokclocks.sim): engine, data, levi front-ends, modular addition."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grokclocks import DomainError
from grokclocks.citations import SPEC, citations_of
from grokclocks.sim import (DivergenceWarning, SimulationDiverged, Trajectory, enable_x64, load_trajectory, simulate,
                            x64_enabled)
from grokclocks.sim import data as sd
from grokclocks.sim import linear as sl
from grokclocks.sim import models as sm
from grokclocks.sim import modular as smod
from grokclocks.sim import train as st

enable_x64()


# ---------------------------------------------------------------------------------------------
# run_gd (explicit GD through the engine) == run_gd_spectral (closed form): spec levi:eq5 / 7.3
# ---------------------------------------------------------------------------------------------

# Tolerance 1e-10 (spec section 7.3, levi:eq5 row); the two differ only by float64 rounding
# accumulated over 500 steps (measured: <= 1.7e-14 relative on this configuration).
@pytest.mark.parametrize("d_out", [1, 5])
@pytest.mark.parametrize("gamma", [0.0, 1e-2])
def test_run_gd_matches_spectral(d_out, gamma):
    data = sl.draw_teacher_student(300, 0.5, d_out, seeds=[0, 1])
    gd = sl.run_gd(data, 0.01, 500, gamma=gamma, record_every=50)
    sp = sl.run_gd_spectral(data, 0.01, gd.times, gamma=gamma)
    assert gd["loss_train"].shape == (2, 11)
    np.testing.assert_array_equal(gd.times, np.arange(0, 501, 50))
    for k in ("loss_train", "loss_gen"):
        np.testing.assert_allclose(gd[k], sp[k], rtol=1e-10, atol=0)


def test_run_gd_matches_spectral_noise_overparametrised_torch():
    # lam > 1 (null space of Sigma), fixed label noise, torch weight-decay convention, init scale.
    data = sl.draw_teacher_student(120, 1.5, 3, seeds=[3], sigma2=0.01, init_scale=0.5)
    gd = sl.run_gd(data, 0.02, 400, gamma=1e-2, wd_convention="torch", record_every=40)
    sp = sl.run_gd_spectral(data, 0.02, gd.times, gamma=1e-2, wd_convention="torch")
    for k in ("loss_train", "loss_gen"):
        np.testing.assert_allclose(gd[k], sp[k], rtol=1e-10, atol=0)


def test_weight_decay_conventions_agree_for_scaled_gamma():
    # gamma_paper = d_out * gamma_torch (spec levi:conv-wd)
    data = sl.draw_teacher_student(100, 0.5, 2, seeds=[0])
    a = sl.run_gd_spectral(data, 0.01, [0.0, 10.0, 1000.0], gamma=2e-2, wd_convention="paper")
    b = sl.run_gd_spectral(data, 0.01, [0.0, 10.0, 1000.0], gamma=1e-2, wd_convention="torch")
    np.testing.assert_allclose(a["loss_gen"], b["loss_gen"], rtol=1e-13)


def test_spectral_initial_losses_are_exact():
    data = sl.draw_teacher_student(100, 0.5, 2, seeds=[0], sigma2=0.02)
    sp = sl.run_gd_spectral(data, 0.01, [0.0])
    D = np.asarray(data.S0 - data.T)[0]
    X = np.asarray(data.X)[0]
    delta = np.asarray(data.delta)[0]
    L_tr = np.mean((X @ D - delta) ** 2)
    np.testing.assert_allclose(sp["loss_train"][0, 0], L_tr, rtol=1e-12)
    np.testing.assert_allclose(sp["loss_gen"][0, 0], np.sum(D * D) / 2, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# vmap, determinism, grids
# ---------------------------------------------------------------------------------------------


def test_vmap_over_seeds_equals_loop():
    seeds = [0, 1, 2]
    batched = sl.run_gd(sl.draw_teacher_student(100, 0.5, 2, seeds=seeds), 0.01, 200, record_every=20)
    for i, s in enumerate(seeds):
        single = sl.run_gd(sl.draw_teacher_student(100, 0.5, 2, seeds=s), 0.01, 200, record_every=20)
        assert single["loss_gen"].shape == (11,)
        for k in ("loss_train", "loss_gen"):
            np.testing.assert_allclose(batched[k][i], single[k], rtol=1e-13)


def test_same_seed_same_numbers():
    a = sl.run_gd(sl.draw_teacher_student(100, 0.5, 1, seeds=[7]), 0.01, 100, record_every=10)
    b = sl.run_gd(sl.draw_teacher_student(100, 0.5, 1, seeds=[7]), 0.01, 100, record_every=10)
    c = sl.run_gd(sl.draw_teacher_student(100, 0.5, 1, seeds=[8]), 0.01, 100, record_every=10)
    np.testing.assert_array_equal(a["loss_gen"], b["loss_gen"])
    assert not np.array_equal(a["loss_gen"], c["loss_gen"])


def test_seed_key_convention():
    # spec section 7.1: PRNGKey(1000 * d_in + seed)
    d = sl.draw_teacher_student(50, 0.5, 1, seeds=[3])
    e = sd.make_teacher_student(jax.random.PRNGKey(1000 * 50 + 3), 50, 0.5, 1)
    np.testing.assert_array_equal(np.asarray(d.X[0]), np.asarray(e.X))
    np.testing.assert_array_equal(np.asarray(d.S0[0]), np.asarray(e.S0))


def test_run_gd_vmaps_over_weight_decay_grid():
    data = sl.draw_teacher_student(100, 0.5, 1, seeds=[0, 1])
    gammas = [0.0, 1e-3, 1e-1]
    grid = sl.run_gd(data, 0.01, 300, gamma=gammas, record_every=30)
    assert grid["loss_gen"].shape == (3, 2, 11)
    assert grid.config.gamma == tuple(gammas)
    for i, g in enumerate(gammas):
        single = sl.run_gd(data, 0.01, 300, gamma=g, record_every=30)
        np.testing.assert_allclose(grid["loss_gen"][i], single["loss_gen"], rtol=1e-13)
    # weight decay changes the late-time loss (the grid entries are really different runs)
    assert not np.allclose(grid["loss_gen"][0, :, -1], grid["loss_gen"][2, :, -1])


def test_run_gd_vmaps_over_learning_rate_grid():
    data = sl.draw_teacher_student(100, 0.5, 1, seeds=[0])
    etas = [0.005, 0.01]
    grid = sl.run_gd(data, etas, 200, record_every=20)
    for i, e in enumerate(etas):
        sp = sl.run_gd_spectral(data, e, grid.times)
        np.testing.assert_allclose(grid["loss_gen"][i], sp["loss_gen"], rtol=1e-10)


def _decay_step(state, inp):
    return state * inp["a"]


def _decay_metrics(state, inp):
    return {"x": state, "x_sq": state * state}


def test_engine_vmaps_over_hyperparameter_grid_and_seeds():
    # x_{t+1} = a x_t, so x_t = a^t x_0 exactly; grid over a (outer) x 3 initial values (inner).
    a = jnp.array([0.5, 0.9, 1.0, 1.1])
    x0 = jnp.broadcast_to(jnp.array([1.0, 2.0, -3.0]), (4, 3))
    res = simulate(_decay_step, _decay_metrics, x0, {"a": a}, steps=12, record_every=3,
                   batch_axes=[{"a": 0}, {"a": None}])
    assert res["x"].shape == (4, 3, 5)
    np.testing.assert_array_equal(res.times, [0, 3, 6, 9, 12])
    expect = np.asarray(x0)[..., None] * np.asarray(a)[:, None, None] ** res.times
    np.testing.assert_allclose(res["x"], expect, rtol=1e-14)
    np.testing.assert_allclose(res.final_state, expect[..., -1], rtol=1e-14)


def test_engine_chunks_give_the_same_records():
    x0 = jnp.array([1.0, 2.0])
    args = dict(steps=40, record_every=2, batch_axes=[None])
    one = simulate(_decay_step, _decay_metrics, x0, {"a": jnp.asarray(0.97)}, **args)
    many = simulate(_decay_step, _decay_metrics, x0, {"a": jnp.asarray(0.97)}, n_chunks=7, progress=False, **args)
    np.testing.assert_array_equal(one["x"], many["x"])


# ---------------------------------------------------------------------------------------------
# Divergence, save/load, validation
# ---------------------------------------------------------------------------------------------


def test_simulation_diverged_for_large_learning_rate():
    data = sl.draw_teacher_student(100, 0.5, 1, seeds=[0])
    # stability needs eta < d_out / (nu_max + gamma/2) ~ 1/2.9; eta = 5 overflows float64 in < 300 steps
    with pytest.raises(SimulationDiverged) as info:
        sl.run_gd(data, 5.0, 1000, record_every=10)
    err = info.value
    assert 0 < err.step <= 1000 and err.step % 10 == 0
    assert err.metric in ("loss_train", "loss_gen")
    assert isinstance(err.config, sl.LinearGDConfig) and err.config.eta == 5.0
    assert "step" in str(err)
    with pytest.raises(SimulationDiverged):
        sl.run_gd_spectral(data, 5.0, [0.0, 10.0])


def test_a_diverging_learning_rate_is_flagged_in_a_grid():
    """One unstable eta of a grid: that run is flagged and NaN from its divergence on, the other kept."""
    data = sl.draw_teacher_student(100, 0.5, 1, seeds=[0])
    with pytest.warns(DivergenceWarning, match="1 of 2 runs diverged"):
        res = sl.run_gd(data, [0.01, 5.0], 1000, record_every=10)
    np.testing.assert_array_equal(res["diverged"], [[False], [True]])
    step = int(res["diverged_step"][1, 0])
    assert 0 < step <= 1000 and np.isnan(res["loss_gen"][1, 0, res.times >= step]).all()
    alone = sl.run_gd(data, 0.01, 1000, record_every=10)
    # the same run alone or in a batch of 2: vectorised float64 rounding only (measured max 6.4e-16 relative)
    np.testing.assert_allclose(res["loss_gen"][0], alone["loss_gen"], rtol=1e-13)


def test_save_load_round_trip(tmp_path):
    data = sl.draw_teacher_student(100, 0.5, 2, seeds=[0, 1])
    res = sl.run_gd(data, [0.01, 0.02], 40, gamma=1e-3, record_every=10)
    path = res.save(tmp_path / "run")
    assert path.suffix == ".npz" and path.with_suffix(".json").exists()
    back = load_trajectory(tmp_path / "run")
    assert back.config == res.config
    np.testing.assert_array_equal(back.times, res.times)
    assert set(back.metrics) == set(res.metrics)
    for k in res.metrics:
        np.testing.assert_array_equal(back[k], res[k])


def test_incremental_save_and_resume(tmp_path):
    data = sl.draw_teacher_student(100, 0.5, 1, seeds=[0])
    path = tmp_path / "inc.npz"
    full = sl.run_gd(data, 0.01, 60, record_every=5, save_path=path)
    saved = Trajectory.load(path)
    np.testing.assert_array_equal(saved["loss_gen"], full["loss_gen"])
    again = sl.run_gd(data, 0.01, 60, record_every=5, save_path=path, resume=True)  # nothing left to run
    np.testing.assert_array_equal(again["loss_gen"], full["loss_gen"])
    with pytest.raises(DomainError, match="config differs"):
        sl.run_gd(data, 0.02, 60, record_every=5, save_path=path, resume=True)


def test_resume_continues_a_partial_run(tmp_path):
    path = tmp_path / "partial"
    x0 = jnp.array([1.0, -2.0])
    inp = {"a": jnp.asarray(0.9)}
    cfg = {"name": "decay"}  # any JSON-able config (compared as JSON)
    ref = simulate(_decay_step, _decay_metrics, x0, inp, steps=20, record_every=2, batch_axes=[None])
    # write the first 4 records (steps 0..6) with their state, as an interrupted run would have
    part = simulate(_decay_step, _decay_metrics, x0, inp, steps=6, record_every=2, batch_axes=[None])
    st.save_trajectory(dataclasses.replace(part, config=None), path, state=part.final_state)
    res = simulate(_decay_step, _decay_metrics, x0, inp, steps=20, record_every=2, batch_axes=[None],
                   save_path=path, resume=True)
    np.testing.assert_allclose(res["x"], ref["x"], rtol=1e-15)
    assert cfg  # config=None on both sides here


def test_config_json_round_trip():
    cfg = sl.LinearGDConfig(d_in=3, d_out=1, n_train=6, lam=0.5, init_scale=1.0, sigma2=0.0, seeds=(0, 1),
                            eta=(0.1, 0.2), gamma=0.0, wd_convention="paper", steps=10, record_every=1, eps=None)
    assert st.config_from_json(st.config_to_json(cfg)) == cfg


def test_validation_errors():
    data = sl.draw_teacher_student(40, 0.5, 1, seeds=[0])
    with pytest.raises(DomainError, match="steps must be a multiple of record_every"):
        sl.run_gd(data, 0.01, 25, record_every=10)
    with pytest.raises(DomainError, match="eta must be > 0"):
        sl.run_gd(data, 0.0, 10)
    with pytest.raises(DomainError, match="gamma must be >= 0"):
        sl.run_gd(data, 0.01, 10, gamma=-1.0)
    with pytest.raises(DomainError, match="wd_convention"):
        sl.run_gd(data, 0.01, 10, wd_convention="pytorch")
    with pytest.raises(DomainError, match="n_gen > 0 needs eps"):
        sl.run_gd(data, 0.01, 10, n_gen=10)
    with pytest.raises(DomainError, match="data must be a TeacherStudentData"):
        sl.run_gd({"X": data.X}, 0.01, 10)
    with pytest.raises(DomainError, match="same length"):
        sl.run_gd(data, [0.01, 0.02], 10, gamma=[0.0, 0.1, 0.2])
    with pytest.raises(DomainError, match="ts must be a 1-D"):
        sl.run_gd_spectral(data, 0.01, [[0.0, 1.0]])
    with pytest.raises(DomainError, match="ts must be >= 0"):
        sl.run_gd_spectral(data, 0.01, [-1.0])
    with pytest.raises(DomainError, match="lam must be > 0"):
        sl.draw_teacher_student(40, 0.0, 1)
    with pytest.raises(DomainError, match="d_in must be an integer >= 1"):
        sl.draw_teacher_student(0, 0.5, 1)
    with pytest.raises(DomainError, match="sigma2 must be >= 0"):
        sl.draw_teacher_student(40, 0.5, 1, sigma2=-0.1)
    with pytest.raises(DomainError, match="key must be"):
        sd.make_teacher_student(jnp.zeros(3), 40, 0.5, 1)
    with pytest.raises(DomainError, match="loss_star must be > 0"):
        sl.crossing_times(data, 0.01, 0.0)
    with pytest.raises(DomainError, match="activation"):
        sl.run_two_layer(sl.draw_two_layer(20, 0.5, 4, 1), 0.01, 10, activation="relu")
    with pytest.raises(DomainError, match="loss must be one of"):
        smod.run_modular_addition(5, 0.5, 4, 1.0, 10, loss="l2")
    with pytest.raises(DomainError, match="alpha must be in"):
        smod.run_modular_addition(5, 1.5, 4, 1.0, 10)


def test_oscillating_modes_need_integer_times():
    data = sl.draw_teacher_student(100, 0.5, 1, seeds=[0])
    eta = 0.3  # some 1 - 2 eta nu < 0 (nu_max ~ 2.9) but all > -1: stable, oscillating
    res = sl.run_gd_spectral(data, eta, [0.0, 1.0, 7.0])
    gd = sl.run_gd(data, eta, 7, record_every=1)
    np.testing.assert_allclose(res["loss_gen"][0], gd["loss_gen"][0, [0, 1, 7]], rtol=1e-12)
    with pytest.raises(DomainError, match="continuous"):
        sl.run_gd_spectral(data, eta, [0.5])
    with pytest.raises(DomainError, match="continuous"):
        sl.crossing_times(data, eta, 1e-3)


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def test_teacher_student_shapes_and_variance():
    data = sl.draw_teacher_student(400, 0.5, 5, seeds=[0, 1])
    assert data.X.shape == (2, 800, 400) and data.T.shape == (2, 400, 5) and data.delta.shape == (2, 800, 5)
    assert data.n_train == 800 and data.batch_shape == (2,) and data.X.dtype == jnp.float64
    assert np.all(np.asarray(data.delta) == 0)
    # variance 1/(2 d_in d_out) (not std): 2*400*5 = 4000 entries, sd of the estimate sqrt(2/4000) = 2.2 %
    for w in (data.T, data.S0):
        np.testing.assert_allclose(np.mean(np.asarray(w) ** 2, axis=(1, 2)) * 2 * 400 * 5, 1.0, atol=0.1)
    # E||D0||^2 = 1 (levi:conv-data), same 2.2 % sd per draw
    np.testing.assert_allclose(np.sum(np.asarray(data.delta0) ** 2, axis=(1, 2)), 1.0, atol=0.1)
    assert x64_enabled()


def test_init_scale_and_noise():
    a = sl.draw_teacher_student(50, 0.5, 1, seeds=[0])
    b = sl.draw_teacher_student(50, 0.5, 1, seeds=[0], init_scale=2.0, sigma2=0.04)
    np.testing.assert_allclose(np.asarray(b.S0), 2.0 * np.asarray(a.S0), rtol=1e-15)
    np.testing.assert_array_equal(np.asarray(a.T), np.asarray(b.T))
    assert 0.02 < float(np.var(np.asarray(b.delta))) < 0.06


def test_two_layer_init_variances():
    d = sl.draw_two_layer(300, 0.5, 100, 5, seeds=[0])
    np.testing.assert_allclose(np.mean(np.asarray(d.S0) ** 2) * 2 * 300 * 100, 1.0, atol=0.02)
    np.testing.assert_allclose(np.mean(np.asarray(d.T1) ** 2) * 2 * 5 * 100, 1.0, atol=0.1)


def test_modular_table_and_split():
    X, Y, labels = sd.modular_addition_table(5)
    assert X.shape == (25, 10) and Y.shape == (25, 5)
    # row n*p + m holds (n, m)
    n, m = 3, 4
    assert np.asarray(X[n * 5 + m]).nonzero()[0].tolist() == [3, 5 + 4]
    assert int(labels[n * 5 + m]) == (3 + 4) % 5
    md = sd.make_modular_addition(jnp.stack([jax.random.PRNGKey(0), jax.random.PRNGKey(1)]), 7, 0.6)
    assert md.train_mask.shape == (2, 49) and md.n_train == round(0.6 * 49)
    np.testing.assert_array_equal(np.asarray(md.train_mask).sum(axis=1), [md.n_train] * 2)
    assert not np.array_equal(np.asarray(md.train_mask[0]), np.asarray(md.train_mask[1]))


# ---------------------------------------------------------------------------------------------
# Crossing times, accuracies, fresh noise, two-layer
# ---------------------------------------------------------------------------------------------


def test_crossing_times_solve_the_threshold_equation():
    data = sl.draw_teacher_student(100, 0.5, 1, seeds=[0, 1])
    L_star = 1e-3 / 4
    ct = sl.crossing_times(data, 0.01, L_star)
    assert ct.t_train.shape == (2,) and np.all(ct.t_gen > ct.t_train) and np.all(ct.t_train > 0)
    for i in range(2):
        sp = sl.run_gd_spectral(data, 0.01, [ct.t_train[i], ct.t_gen[i]])
        np.testing.assert_allclose(sp["loss_train"][i, 0], L_star, rtol=1e-10)
        np.testing.assert_allclose(sp["loss_gen"][i, 1], L_star, rtol=1e-10)
    np.testing.assert_allclose(ct.grok_time, ct.t_gen - ct.t_train)


def test_crossing_time_conventions():
    data = sl.draw_teacher_student(100, 1.5, 1, seeds=[0])
    ct = sl.crossing_times(data, 0.01, 1e-3 / 4)  # gen plateau (1 - 1/lam) = 1/3 >> L*
    assert np.isfinite(ct.t_train[0]) and np.isinf(ct.t_gen[0]) and np.isinf(ct.grok_time[0])
    ct0 = sl.crossing_times(data, 0.01, 10.0)  # already below at t = 0
    assert ct0.t_train[0] == 0.0 and ct0.t_gen[0] == 0.0


def test_empirical_accuracies_recorded():
    data = sl.draw_teacher_student(100, 0.5, 1, seeds=[0])
    res = sl.run_gd(data, 0.05, 400, record_every=100, eps=1e-2, n_gen=500)
    assert res["acc_train"].shape == (1, 5) and res["acc_gen"].shape == (1, 5)
    assert np.all((res["acc_gen"] >= 0) & (res["acc_gen"] <= 1))
    # directly: fraction of training samples with squared residual < eps at t = 0
    D = np.asarray(data.delta0)[0]
    acc0 = np.mean((np.asarray(data.X)[0] @ D)[:, 0] ** 2 < 1e-2)
    assert res["acc_train"][0, 0] == pytest.approx(acc0)
    assert res["acc_train"][0, -1] > res["acc_train"][0, 0]


def test_fresh_noise_without_noise_is_gd():
    data = sl.draw_teacher_student(100, 0.5, 2, seeds=[0, 1])
    fr = sl.run_gd_fresh_noise(data, 0.01, 200, sigma2=0.0, gamma=1e-2, record_every=50)
    sp = sl.run_gd_spectral(data, 0.01, fr.times, gamma=1e-2)
    np.testing.assert_allclose(fr["loss_gen"], sp["loss_gen"], rtol=1e-12)
    np.testing.assert_allclose(fr["loss_train"], sp["loss_train"], rtol=1e-12)


def test_fresh_noise_train_loss_includes_the_noise():
    data = sl.draw_teacher_student(100, 0.5, 1, seeds=[0])
    fr = sl.run_gd_fresh_noise(data, 0.01, 2000, sigma2=0.01, record_every=100)
    # E L_tr = L_tr_clean + sigma^2 (spec levi:noise-fresh); one draw: sd sqrt(2/N) sigma^2 = 3 % of sigma^2 at N = 200
    excess = fr["loss_train"][0, 1:] - fr["loss_train_clean"][0, 1:]
    assert abs(np.mean(excess) / 0.01 - 1) < 0.05
    assert np.all(np.isfinite(fr["loss_gen"]))


def test_two_layer_linear_loss_matches_direct_evaluation():
    d = sl.draw_two_layer(40, 0.5, 8, 3, seeds=[0, 1])
    res = sl.run_two_layer(d, 0.05, 50, record_every=25)
    assert res["loss_train"].shape == (2, 3) and set(res.metrics) == {"loss_train", "loss_gen", "norm_D_sq", "h"}
    S0, S1 = res.final_state[0]["S0"], res.final_state[0]["S1"]
    X = np.asarray(d.X)
    y_s = X @ S0 @ S1
    y_t = X @ np.asarray(d.T0) @ np.asarray(d.T1)
    np.testing.assert_allclose(res["loss_train"][:, -1], np.mean((y_s - y_t) ** 2, axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(res["loss_gen"], res["norm_D_sq"] / 3, rtol=1e-15)
    assert res["loss_train"][0, -1] < res["loss_train"][0, 0]


def test_two_layer_tanh_runs():
    d = sl.draw_two_layer(30, 0.5, 6, 2, seeds=[0])
    res = sl.run_two_layer(d, 0.05, 20, activation="tanh", record_every=10, n_gen=256)
    assert res["loss_gen"].shape == (1, 3) and res.config.activation == "tanh"
    assert res["loss_train"][0, -1] < res["loss_train"][0, 0]


# ---------------------------------------------------------------------------------------------
# Modular addition
# ---------------------------------------------------------------------------------------------


def test_onehot_apply_equals_dense_apply():
    params = sm.mean_field_quadratic_init(jax.random.PRNGKey(0), 14, 9, 7)
    X, _, _ = sd.modular_addition_table(7)
    n, m = jnp.divmod(jnp.arange(49), 7)
    hot = jnp.stack([n, 7 + m], axis=1)
    np.testing.assert_allclose(smod.quadratic_mlp_onehot_apply(params, hot),
                               sm.mean_field_quadratic_apply(params, X), rtol=1e-12)


def test_modular_addition_shapes_and_grid():
    res = smod.run_modular_addition(7, [0.5, 0.8], 16, 20.0, 100, seeds=(0, 1), record_every=10)
    assert res["acc_train"].shape == (2, 2, 11) and res["t_train"].shape == (2, 2)
    single = smod.run_modular_addition(7, 0.8, 16, 20.0, 100, seeds=(0, 1), record_every=10)
    assert single["acc_test"].shape == (2, 11)
    np.testing.assert_allclose(single["loss_train"], res["loss_train"][1], rtol=1e-12)
    assert single.extras["lam"] == pytest.approx(2 / (0.8 * 7))
    np.testing.assert_array_equal(np.isnan(single["grok_time"]), np.isnan(single["t_test"]) | np.isnan(single["t_train"]))


def test_modular_loss_normalisations():
    params = sm.mean_field_quadratic_init(jax.random.PRNGKey(1), 10, 4, 5)
    X, Y, _ = sd.modular_addition_table(5)
    pred = sm.mean_field_quadratic_apply(params, X)
    np.testing.assert_allclose(sm.mse(pred, Y, reduction="sum"), 5 * sm.mse(pred, Y, reduction="mean"), rtol=1e-14)


def test_first_crossing_step():
    t = np.array([0, 10, 20, 30])
    v = np.array([[0.1, 0.96, 0.2, 0.99], [0.0, 0.1, 0.2, 0.3]])
    out = smod.first_crossing_step(t, v, 0.95)
    assert out[0] == 10 and np.isnan(out[1])


# ---------------------------------------------------------------------------------------------
# Citations
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [sl.run_gd, sl.run_gd_spectral, sl.crossing_times, sl.run_two_layer,
                                sl.run_gd_fresh_noise, sl.draw_teacher_student, sl.draw_two_layer,
                                sd.make_teacher_student, sd.make_two_layer_teacher_student,
                                sd.make_modular_addition, smod.run_modular_addition])
def test_front_ends_cite_valid_spec_ids(fn):
    ids = citations_of(fn)
    assert ids and all(i in SPEC for i in ids)
    assert "Spec IDs" in fn.__doc__


# ---------------------------------------------------------------------------------------------
# spectral_draws: one eigh serves every d_out, student scale, noise level and weight decay
# ---------------------------------------------------------------------------------------------


def test_spectral_draws_reproduce_the_draws_variants():
    """SpectralDraws (projections of the init_scale=1, unit-noise draw) == the draw of each variant, to rounding."""
    bank = sl.spectral_draws(120, 0.5, (1, 3), seeds=[0, 1])
    ts = np.array([0.0, 7.0, 150.5, 4000.0])
    for alpha, s2, gamma in ((0.5, 0.0, 1e-2), (2.0, 0.01, 1e-3)):
        data = sl.draw_teacher_student(120, 0.5, 3, seeds=[0, 1], init_scale=alpha, sigma2=s2)
        proj = bank[3].variant(init_scale=alpha, sigma2=s2)
        a, b = sl.run_gd_spectral(data, 0.01, ts, gamma=gamma), sl.run_gd_spectral(proj, 0.01, ts, gamma=gamma)
        for k in ("loss_train", "loss_gen"):
            np.testing.assert_allclose(b[k], a[k], rtol=1e-12)
    np.testing.assert_allclose(sl.crossing_times(proj, 0.01, 0.02, gamma=gamma).t_gen,
                               sl.crossing_times(data, 0.01, 0.02, gamma=gamma).t_gen, rtol=1e-12)
    assert b.config.init_scale == 2.0 and b.config.sigma2 == 0.01 and b.config.seeds == (0, 1)
    np.testing.assert_array_equal(bank[1].nu, bank[3].nu)  # one eigh for every d_out


def test_spectral_draws_take_concatenate_and_validation():
    b = sl.spectral_draws(50, 0.5, 2, seeds=[3, 4, 5])[2]
    assert b.batch_shape == (3,) and b.take(2).seeds == (3, 4)
    both = sl.SpectralDraws.concatenate([b.take(1), b])
    assert both.seeds == (3, 3, 4, 5) and both.nu.shape == (4, 50)
    np.testing.assert_array_equal(both.Tb[1:], b.Tb)
    with pytest.raises(DomainError, match="n must be"):
        b.take(4)
    with pytest.raises(DomainError, match="sigma2"):
        b.variant(sigma2=-1.0)
    with pytest.raises(DomainError, match="SpectralDraws"):
        sl.run_gd_spectral(np.zeros(3), 0.01, [0.0])
    with pytest.raises(DomainError):  # explicit GD needs the draws themselves
        sl.run_gd(b, 0.01, 10)
