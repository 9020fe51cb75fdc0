"""Per-step trackers in the modular engine (issue 7): rolling update Gram, snapshots, alignment, resume."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grokclocks import DomainError
from grokclocks import repulsion as R
from grokclocks.sim import models
from grokclocks.sim import train as train_mod
from grokclocks.sim.modular import train_modular
from grokclocks.sim.repulsion import train_tian
from grokclocks.sim.trackers import (Tracker, rolling_eigenvalues, snapshot_tracker, snapshots, tracker_carry,
                                     update_gram_tracker)

TIAN = dict(train_frac=0.5, model_kwargs=dict(K=8), optimizer="adam", lr=1e-2, betas=(0.9, 0.999),
            loss="centred_mse")


def _run(dtype="float32", seeds=(0, 1), steps=30, record_every=1, trackers=None, **kw):
    args = dict(TIAN, seeds=seeds, weight_decay=[2e-4, 0.0], steps=steps, record_every=record_every,
                trackers=trackers, dtype=dtype)
    args.update(kw)
    return train_modular("tian_quadratic", 7, **args)


def _step_read(carry):
    return carry


def _step_update(carry, old, new, step):
    return step


def _step_init(params):
    return jnp.zeros((), jnp.int32)


def _path_init(params):
    return jnp.zeros((), params["W"].dtype)


def _path_update(carry, old, new, step):
    return carry + jnp.sum(jnp.square(new["W"] - old["W"]))


STEPS, WIN = 30, 6
ALL = {"dW": update_gram_tracker("W", WIN), "all": snapshot_tracker(None, range(STEPS + 1)),
       "last": Tracker(_step_init, _step_update, _step_read), "path": Tracker(_path_init, _path_update, _step_read)}


@functools.lru_cache(maxsize=None)
def _every_step(dtype):
    """2 seeds x wd {2e-4, 0}, 30 steps, every step recorded, with every tracker kind (one compile per dtype)."""
    return _run(dtype, steps=STEPS, trackers=ALL)


@functools.lru_cache(maxsize=None)
def _every_fifth():
    """Seed 1, wd 0 alone (the run [1, 1] of _every_step), recorded every 5 steps."""
    trk = {"dW": update_gram_tracker("W", WIN), "snap": snapshot_tracker(None, (10, 0, 4, 99)),
           "last": ALL["last"], "path": ALL["path"]}
    return _run("float64", seeds=(1,), steps=20, record_every=5, trackers=trk, weight_decay=[0.0])


def _deltas(traj, e, s):
    """Stored updates of W (float64) of run (eta e, seed s) from the snapshot at every step."""
    shots = snapshots(traj, "all")
    W = np.stack([np.asarray(shots[t]["W"][e, s], np.float64) for t in sorted(shots)])
    return np.diff(W, axis=0).reshape(W.shape[0] - 1, -1)


# ------------------------------------------------------------------------- update Gram tracker


@pytest.mark.parametrize("dtype, tol_s1, floor, tol_rel", [("float64", 1e-14, 1e-3, 1e-12),
                                                            ("float32", 1e-6, 0.1, 1e-6)])
def test_gram_tracker_equals_rolling_gram_eigenvalues(dtype, tol_s1, floor, tol_rel):
    """sigma_k per epoch from the tracker = grokclocks.repulsion.rolling_gram_eigenvalues on the stored updates.

    The Gram's rounding is absolute (~eps * sigma_1), so every order is compared against sigma_1
    (measured max 6.8e-16 in float64, 7.9e-8 in float32; 1.3e-6 in float32 at M=41, K=512) and
    relatively only where sigma_k >= floor * sigma_1 (measured 1.1e-13 for sigma_k >= 1e-3 sigma_1 in
    float64; 2.8e-8 for sigma_k >= 0.1 sigma_1 in float32, but 3.2e-5 at 1e-3 sigma_1).  The updates of
    these runs are strongly collinear (sigma_5 / sigma_1 down to 5e-8), as in training."""
    r = _every_step(dtype)
    for e in range(2):
        for s in range(2):
            ref = R.rolling_gram_eigenvalues(_deltas(r, e, s), window=WIN, k=5)
            got = rolling_eigenvalues(r["dW.gram"][e, s], r["dW.count"][e, s], k=5)
            assert got.shape == ref.shape == (STEPS + 1, 5)
            assert np.array_equal(np.isnan(got), np.isnan(ref))  # rows 0, 1 and orders > min(t, w)
            assert np.all(np.isnan(got[:2])) and np.isnan(got[2, 2]) and np.isfinite(got[5, 4])
            s1 = ref[:, :1]
            assert np.nanmax(np.abs(got - ref) / s1) < tol_s1
            big = ref >= floor * s1
            assert np.max(np.abs(got - ref)[big] / ref[big]) < tol_rel
            # a smaller window from the same tracker = the reference at that window
            ref4 = R.rolling_gram_eigenvalues(_deltas(r, e, s), window=4, k=3)
            got4 = rolling_eigenvalues(r["dW.gram"][e, s], r["dW.count"][e, s], k=3, window=4)
            assert np.array_equal(np.isnan(got4), np.isnan(ref4))
            assert np.nanmax(np.abs(got4 - ref4) / ref4[:, :1]) < tol_s1


def test_alignment_with_record_every_and_vmapped_independence():
    """Record t (after t updates; record_every = 5) has count t and the chronological Gram of the updates
    max(1, t-w+1)..t; a run alone equals the same run inside the vmapped batch (float64)."""
    r, big = _every_fifth(), _every_step("float64")
    assert list(r.times) == [0, 5, 10, 15, 20]
    assert np.array_equal(r["dW.count"][0, 0], r.times)
    D = _deltas(big, 1, 1)[:20]
    ref = R.rolling_gram_eigenvalues(D, window=WIN, k=4)[r.times]
    got = rolling_eigenvalues(r["dW.gram"][0, 0], r["dW.count"][0, 0], k=4)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-14 * np.nanmax(ref))
    np.testing.assert_allclose(r["dW.gram"][0, 0, :, :, -1], D[20 - WIN:20] @ D[20 - WIN:20].T, rtol=1e-12)
    np.testing.assert_allclose(r["dW.gram"][0, 0], np.take(big["dW.gram"][1, 1], r.times, axis=-1), rtol=1e-12, atol=1e-30)
    assert not np.allclose(big["dW.gram"][1, 0], big["dW.gram"][1, 1])


def test_generic_tracker_sees_every_update_in_order():
    """A user Tracker: its step argument at record t is t (1 for the first update); a path length of W
    accumulated per step equals the sum of the squared stored updates."""
    for r in (_every_step("float64"), _every_fifth()):
        assert np.all(r["last"] == r.times)
    r = _every_step("float64")
    cum = np.concatenate([[0.0], np.cumsum(np.sum(_deltas(r, 0, 1) ** 2, axis=1))])
    np.testing.assert_allclose(r["path"][0, 1], cum, rtol=1e-12)
    assert "tests" not in dict(r.config.trackers)["path"] or "_path_update" in dict(r.config.trackers)["path"]
    assert dict(r.config.trackers)["dW"] == "UpdateGramTracker(select='W', window=6)"


def test_empty_trackers_change_nothing():
    """trackers=None, {} and a run with trackers give bit-identical metrics and parameters."""
    base = _run("float32", steps=STEPS)
    empty = _run("float32", steps=STEPS, trackers={})
    withs = _every_step("float32")
    assert len(base.final_state) == len(empty.final_state) == 3 and len(withs.final_state) == 4
    for k in base.metrics:
        assert np.array_equal(base[k], empty[k]) and np.array_equal(base[k], withs[k]), k
    for a, b in zip(jax.tree_util.tree_leaves(base.final_state[:3]), jax.tree_util.tree_leaves(withs.final_state[:3])):
        assert np.array_equal(a, b)
    assert base.config.trackers == () and withs.config.trackers[0][0] == "all"
    with pytest.raises(DomainError, match="no tracker"):
        tracker_carry(base, "dW")


def test_snapshot_tracker():
    """Copies at the requested steps: step 0 = the initial parameters, 20 = the final ones, 4 = the
    same run's parameters after 4 updates; a step never reached (99) is not returned."""
    r, big = _every_fifth(), _every_step("float64")
    assert np.array_equal(r["snap"][0, 0], [1, 2, 3, 3, 3])  # taken so far at t = 0, 5, 10, 15, 20
    shots = snapshots(r, "snap")
    assert sorted(shots) == [0, 4, 10]
    init = models.tian_mlp_init(jax.random.PRNGKey(1), 7, 8, dtype=jnp.float64)
    np.testing.assert_array_equal(shots[0]["W"][0, 0], init["W"])
    np.testing.assert_array_equal(snapshots(big, "all")[STEPS]["V"], big.final_state[0]["V"].reshape(2, 2, 8, 7))
    np.testing.assert_allclose(shots[4]["W"][0, 0], snapshots(big, "all")[4]["W"][1, 1], rtol=1e-13)


def test_trackers_survive_save_and_resume(tmp_path, monkeypatch):
    """A run interrupted after 2 of 4 chunks resumes from the saved carries and ends identical."""
    trk = {"dW": update_gram_tracker("W", 4), "snap": snapshot_tracker("W", (3, 17))}
    kw = dict(steps=20, record_every=1, trackers=trk, n_chunks=4)
    full = _run("float32", **kw)
    path = tmp_path / "run.npz"
    real = train_mod._compiled_chunk
    calls = {"n": 0}

    def flaky(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("simulated crash")
        return real(*a, **k)

    monkeypatch.setattr(train_mod._engine, "_compiled_chunk", flaky)
    with pytest.raises(KeyboardInterrupt):
        _run("float32", save_path=path, **kw)
    monkeypatch.setattr(train_mod._engine, "_compiled_chunk", real)
    assert np.load(path)["metric:dW.gram"].shape[-1] == 11  # records 0..10 saved with the state
    again = _run("float32", save_path=path, resume=True, **kw)
    for k in ("dW.gram", "dW.count", "snap", "loss_train"):
        np.testing.assert_array_equal(again[k], full[k])
    for t in (3, 17):
        np.testing.assert_array_equal(snapshots(again, "snap")[t], snapshots(full, "snap")[t])


def test_train_tian_small():
    """train_tian: rho hook (in the scan, float32) = numpy rho_tian on the snapshots at the same epochs;
    sigma / gap = the tracker's eigenvalues; smaller windows from the same run; argument errors."""
    run = train_tian(7, 8, 20, seeds=(0, 1), etas=(1e-3, 0.0), steps=30, window=6, k=4, snapshot_epochs=(0, 7, 30))
    assert run.sigma.shape == (2, 2, 31, 4) and run.gap.shape == run.rho.shape == run.acc_test.shape == (2, 2, 31)
    for e in (0, 7, 30):
        for i in range(2):
            for s in range(2):
                F = run.features(e, i, s, centred=False)
                assert F.shape == (20, 8)
                np.testing.assert_allclose(run.rho[i, s, e], R.rho_tian(F), rtol=2e-6)
    tr = run.trajectory
    np.testing.assert_array_equal(run.sigma, rolling_eigenvalues(tr["dW.gram"], tr["dW.count"], k=4))
    np.testing.assert_allclose(run.gap[1, 0, 3:], run.sigma[1, 0, 3:, 1] / run.sigma[1, 0, 3:, 2])
    assert np.all(np.isnan(run.gap[..., :3]))
    assert run.sigmas(window=4, k=3).shape == (2, 2, 31, 3) and run.gaps(3).shape == (2, 2, 31)
    with pytest.raises(DomainError, match="leaf"):
        run.sigmas(leaf="V")
    with pytest.raises(DomainError, match="snapshot epochs"):
        run.features(8, 0, 0)
    for kw in (dict(k=7), dict(snapshot_epochs=(31,)), dict(etas=(-1e-4,)), dict(max_window=5), dict(k=2),
               dict(activation="tanh"), dict(seeds=())):
        with pytest.raises(DomainError):
            train_tian(7, 8, 20, steps=30, window=6, **kw)


def test_domain_errors():
    with pytest.raises(DomainError, match="window"):
        update_gram_tracker("W", 1)
    with pytest.raises(DomainError, match="select"):
        update_gram_tracker(3, 5)
    with pytest.raises(DomainError, match="at_steps"):
        snapshot_tracker("W", ())
    with pytest.raises(DomainError, match="at_steps"):
        snapshot_tracker("W", (-1, 2))
    with pytest.raises(DomainError, match="distinct"):
        snapshot_tracker("W", (2, 2))
    with pytest.raises(DomainError, match="select"):
        _run(trackers={"g": update_gram_tracker("X", 3)}, steps=2)
    with pytest.raises(DomainError, match="trackers"):
        _run(trackers=[update_gram_tracker("W", 3)], steps=2)
    with pytest.raises(DomainError, match="collides"):
        _run(trackers={"loss_train": update_gram_tracker("W", 3)}, steps=2)
    with pytest.raises(DomainError, match="collides"):
        _run(trackers={"h": update_gram_tracker("W", 3)}, hooks={"h": _hook}, steps=2)
    with pytest.raises(DomainError, match="'.'"):
        _run(trackers={"a.b": update_gram_tracker("W", 3)}, steps=2)
    with pytest.raises(DomainError, match="init, update and read"):
        _run(trackers={"bad": object()}, steps=2)
    G = np.zeros((4, 4, 3))
    c = np.array([0, 1, 2])
    with pytest.raises(DomainError, match="window"):
        rolling_eigenvalues(G, c, k=2, window=5)
    with pytest.raises(DomainError, match="k must"):
        rolling_eigenvalues(G, c, k=5)
    with pytest.raises(DomainError, match="shape"):
        rolling_eigenvalues(G, c[:2])
    with pytest.raises(DomainError, match="count"):
        rolling_eigenvalues(G, c.astype(float))


def _hook(params, inputs):
    return jnp.sum(params["W"])
