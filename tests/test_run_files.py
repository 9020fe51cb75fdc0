"""Run files that never lose data, per-run divergence, options checked up front (issue 15).

* resume is idempotent (a finished run comes back bit-identical, the file untouched) and a resumed
  partial run equals the uninterrupted one;
* an existing file is never replaced without ``overwrite=True``; a config change is named on resume;
* writes are atomic (a failing write leaves the old file), files carry a format version and a
  sha256; every truncation, byte flip or foreign file gives one error class (RunFileError) or, where
  the flipped byte carries no data, the identical run;
* files written by grokclocks before run-file versions (tests/data/modular_format1.*, written by
  commit 00044c7) still load;
* a diverging point of a grid is flagged, the rest of the sweep is kept;
* bad options raise DomainError before any model is built or anything compiled;
* the same call twice gives bit-identical arrays on the CPU.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import shutil
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grokclocks import DomainError, runfile
from grokclocks.sim import DivergenceWarning, SimulationDiverged
from grokclocks.sim import modular as smod
from grokclocks.sim import train as st
from grokclocks.sim.modular import train_modular
from grokclocks.sim.train import (RunExistsError, RunFileError, RunFileNotFoundError, RunFileWarning, Trajectory,
                                  load_trajectory, simulate)

DATA = Path(__file__).parent / "data"

# one tiny configuration (p = 5, 4 records) so the compiled programs are shared by the tests
KW = dict(p=5, train_frac=0.6, model_kwargs=dict(d_embed=4, d_hidden=8), lr=3e-3, steps=8, record_every=2,
          n_chunks=4)
GRID = dict(KW, seeds=(0, 1), weight_decay=[0.0, 1.0])
# plain GD of the mean-field quadratic net: lr = 1 is stable, lr >= 1e3 diverges by step 2 (measured)
DIVERGE = dict(p=5, train_frac=0.6, model_kwargs=dict(d_h=8), loss="mse_sum", optimizer="sgd", weight_decay=0.0,
               steps=8, record_every=2, seeds=(0,), n_chunks=4)


def _same(a: Trajectory, b: Trajectory) -> None:
    """Bit-identical times, metrics, extras (NaN == NaN) and shapes."""
    np.testing.assert_array_equal(a.times, b.times)
    assert set(a.metrics) == set(b.metrics) and set(a.extras) == set(b.extras)
    for k in a.metrics:
        assert a[k].shape == b[k].shape and a[k].dtype == b[k].dtype, k
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    for k in a.extras:
        np.testing.assert_array_equal(np.asarray(a.extras[k]), np.asarray(b.extras[k]), err_msg=k)


@pytest.fixture(scope="module")
def grid_run(tmp_path_factory):
    """A finished 2 x 2 (weight decay x seed) run saved incrementally, and its file."""
    path = tmp_path_factory.mktemp("grid") / "run"
    return train_modular("embedding_mlp", save_path=path, **GRID), path.with_name("run.npz")


# ------------------------------------------------------------------------------------ resume


def test_resuming_a_finished_run_is_idempotent(grid_run):
    full, path = grid_run
    before = path.read_bytes(), path.stat().st_mtime_ns
    for _ in range(3):
        again = train_modular("embedding_mlp", save_path=path, resume=True, **GRID)
        assert again.batch_shape == full.batch_shape == (2, 2)
        _same(again, full)
        for x, y in zip(jax.tree_util.tree_leaves(again.final_state), jax.tree_util.tree_leaves(full.final_state)):
            np.testing.assert_array_equal(x, y)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before  # the file was not rewritten
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a finished format-2 file loads without any warning
        _same(load_trajectory(path), full)


def test_resume_after_a_crash_equals_the_uninterrupted_run(grid_run, tmp_path, monkeypatch):
    full, _ = grid_run
    path = tmp_path / "crash.npz"
    real = st._compiled_chunk
    calls = {"n": 0}

    def crash_on_third_chunk(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("simulated crash")
        return real(*a, **k)

    monkeypatch.setattr(st._engine, "_compiled_chunk", crash_on_third_chunk)
    with pytest.raises(KeyboardInterrupt):
        train_modular("embedding_mlp", save_path=path, **GRID)
    monkeypatch.setattr(st._engine, "_compiled_chunk", real)
    with pytest.warns(RunFileWarning, match="partial run: steps 0..4 of 8"):
        part = load_trajectory(path)
    assert part["acc_test"].shape == (2, 2, 3)  # records 0, 2, 4 in the result's layout
    resumed = train_modular("embedding_mlp", save_path=path, resume=True, **GRID)
    _same(resumed, full)


def test_resume_with_another_config_names_the_fields(grid_run):
    _, path = grid_run
    with pytest.raises(RunFileError, match=r"lr: saved \[0.003\], now \[0.002\]; .*steps: saved 8, now 12") as info:
        train_modular("embedding_mlp", save_path=path, resume=True, **dict(GRID, lr=2e-3, steps=12))
    assert str(path) in str(info.value) and "overwrite=True" in str(info.value)


def test_resume_checks_the_metrics_and_the_state(grid_run, tmp_path):
    _, path = grid_run
    with pytest.raises(RunFileError, match="config differs.*hooks"):
        train_modular("embedding_mlp", save_path=path, resume=True, hooks={"norm": _norm_hook}, **GRID)
    plain = tmp_path / "plain"
    load_trajectory(path).save(plain)  # a saved result without the state
    with pytest.raises(RunFileError, match="no state to continue from"):
        train_modular("embedding_mlp", save_path=plain, resume=True, **GRID)


def _norm_hook(params, inputs):
    return jnp.sqrt(jnp.sum(params["W_out"] ** 2)) if "W_out" in params else jnp.zeros(())


# --------------------------------------------------------------------------------- overwriting


def test_an_existing_run_is_never_replaced_without_overwrite(grid_run, tmp_path, monkeypatch):
    full, path = grid_run
    copy = tmp_path / "run.npz"
    shutil.copy(path, copy)
    shutil.copy(path.with_suffix(".json"), copy.with_suffix(".json"))
    before = copy.read_bytes()

    def never(*a, **k):
        raise AssertionError("compiled before the save_path check")

    monkeypatch.setattr(st._engine, "_compiled_metrics", never)
    with pytest.raises(RunExistsError) as info:
        train_modular("embedding_mlp", save_path=copy, **dict(GRID, lr=1e-2))
    err = info.value
    assert isinstance(err, FileExistsError) and isinstance(err, DomainError)
    assert str(copy) in str(err) and "resume=True" in str(err) and "overwrite=True" in str(err)
    with pytest.raises(RunExistsError):
        full.save(copy)
    with pytest.raises(DomainError, match="exclusive"):
        train_modular("embedding_mlp", save_path=copy, resume=True, overwrite=True, **GRID)
    assert copy.read_bytes() == before
    full.save(copy, overwrite=True)  # explicit: allowed
    assert load_trajectory(copy).config == full.config


def test_overwrite_keeps_the_old_file_when_the_new_run_diverges_at_once(grid_run, tmp_path):
    full, path = grid_run
    copy = tmp_path / "run.npz"
    shutil.copy(path, copy)
    before = copy.read_bytes()
    with pytest.raises(SimulationDiverged) as info:
        train_modular("mean_field_quadratic", lr=1e8, save_path=copy, overwrite=True, **DIVERGE)
    assert info.value.trajectory is not None and bool(info.value.trajectory["diverged"].all())
    assert copy.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.npz"]  # the run's lock released on the way out


# ------------------------------------------------------------------------ one writer per run path


def test_a_run_holds_its_path_from_start_to_end(tmp_path):
    """Two runs on one save_path used to both finish, the second silently replacing the first (the exists-check
    was made only at the start).  Now the run's lock file is held from the start of simulate to its end: a second
    run started while the first is between chunks is refused at its start, with overwrite=True and resume=True
    too, and told who writes; the lock is gone when the run returns."""
    x0, inp, path = jnp.array([1.0]), {"a": jnp.asarray(0.5)}, tmp_path / "run"
    tried = []

    def second_run(result):  # extras_fn: called at the start and after every chunk of the first run
        for kw in ({}, {"overwrite": True}, {"resume": True}):
            with pytest.raises(RunExistsError, match=rf"run\.npz is being written by pid {os.getpid()} \(this "):
                simulate(_decay_step, _decay_metrics, x0, inp, steps=4, record_every=2, save_path=path, **kw)
        tried.append(result.times.size)
        return {}

    simulate(_decay_step, _decay_metrics, x0, inp, steps=8, record_every=2, n_chunks=4, save_path=path,
             extras_fn=second_run)
    assert tried == [1, 2, 3, 4, 5] and sorted(p.name for p in tmp_path.iterdir()) == ["run.json", "run.npz"]


def test_a_resume_removes_the_temporary_files_of_a_killed_writer(tmp_path):
    x0, inp, path = jnp.array([1.0]), {"a": jnp.asarray(0.5)}, tmp_path / "run"
    kw = dict(steps=4, record_every=2, n_chunks=2, save_path=path)
    simulate(_decay_step, _decay_metrics, x0, inp, **kw)
    dead = 2**22 + 12345  # above the default pid_max: no such process
    stale = tmp_path / f".run.npz.{runfile._files._HOST_TAG}-{dead}.0123abcd.tmp"
    stale.write_bytes(b"the half-written save of a writer killed with SIGKILL")
    (tmp_path / "run.lock").write_text(json.dumps({"pid": dead, "host": runfile._files._HOST}))
    with pytest.warns(RunFileWarning, match=f"left by pid {dead}"):
        simulate(_decay_step, _decay_metrics, x0, inp, resume=True, **kw)  # finished: returned, nothing saved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json", "run.npz"]


def test_a_run_whose_directory_is_deleted_stops_instead_of_recreating_it(tmp_path):
    """The run's folder deleted while it runs: the next save used to create the folder again, without a lock,
    where a second writer could then finish on the same path.  Now the save is refused (RunFileError naming the
    lock file) and the folder is not created again."""
    x0, inp = jnp.array([1.0]), {"a": jnp.asarray(0.5)}
    folder = tmp_path / "runs"
    calls = []

    def delete_after_first_save(result):
        calls.append(result.times.size)
        if len(calls) == 3:  # the first chunk is saved; the folder goes before the second is
            shutil.rmtree(folder)
        return {}

    with pytest.raises(RunFileError, match=r"run\.lock is no longer the one this process holds \(its directory is gone"):
        simulate(_decay_step, _decay_metrics, x0, inp, steps=8, record_every=2, n_chunks=4, save_path=folder / "run",
                 extras_fn=delete_after_first_save)
    assert not folder.exists() and calls == [1, 2, 3]


# ------------------------------------------------------------------------------ atomic writes


def test_a_failing_write_leaves_the_previous_file(grid_run, tmp_path, monkeypatch):
    full, _ = grid_run
    path = full.save(tmp_path / "atomic")
    before = path.read_bytes(), path.with_suffix(".json").read_bytes()
    real = np.savez

    def half_then_fail(file, *args, **kw):
        real(file, *args, **kw)
        file.truncate(file.tell() // 2)  # half of the new archive is on disk ...
        raise OSError("disk full (simulated)")  # ... when the write fails

    monkeypatch.setattr(np, "savez", half_then_fail)
    changed = dataclasses.replace(full, metrics={k: v + 1 for k, v in full.metrics.items()})
    with pytest.raises(RunFileError, match="simulated") as info:  # an OSError before the write path named its file
        changed.save(path, overwrite=True)
    assert str(path) in str(info.value) and "intact" in str(info.value)
    monkeypatch.setattr(np, "savez", real)
    assert (path.read_bytes(), path.with_suffix(".json").read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["atomic.json", "atomic.npz"]  # no temporary left
    _same(load_trajectory(path), full)


# ------------------------------------------------------------------- damaged and foreign files


def _expect_run_file_error(path: Path) -> RunFileError:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunFileWarning)
        with pytest.raises(RunFileError) as info:
            load_trajectory(path)
    err = info.value
    msg = str(err)
    assert path.name in msg, msg
    assert "allow_pickle" not in msg and "Traceback" not in msg
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__), msg
    return err


@pytest.mark.parametrize("cut", [0, 1, 10, 0.25, 0.5, 0.75, 0.99, -1])
def test_truncated_files_raise_run_file_error(grid_run, tmp_path, cut):
    _, path = grid_run
    data = path.read_bytes()
    n = cut if isinstance(cut, int) and cut >= 0 else int(len(data) * cut) if cut != -1 else len(data) - 1
    bad = tmp_path / "cut.npz"
    bad.write_bytes(data[:n])
    _expect_run_file_error(bad)


def test_flipped_bytes_raise_or_change_nothing(grid_run, tmp_path):
    """Every flipped byte gives RunFileError, or (header fields no reader uses) the identical run."""
    full, path = grid_run
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(0)
    positions = sorted(set(np.linspace(0, len(data) - 1, 120).astype(int)) | set(rng.integers(0, len(data), 80)))
    bad = tmp_path / "flip.npz"
    shutil.copy(path.with_suffix(".json"), bad.with_suffix(".json"))
    outcomes = {"error": 0, "identical": 0}
    for i in positions:
        flipped = bytearray(data)
        flipped[i] ^= 0xFF
        bad.write_bytes(bytes(flipped))
        try:
            back = load_trajectory(bad)
        except RunFileError as exc:
            assert bad.name in str(exc) and "allow_pickle" not in str(exc)
            outcomes["error"] += 1
        else:
            _same(back, full)
            outcomes["identical"] += 1
    # measured: 176 of the 198 flips raise; the other 22 hit zip header fields no reader uses
    # (timestamps, attributes) and load the identical run
    assert outcomes["error"] > 0.8 * len(positions), outcomes


def test_checksum_catches_a_consistent_edit(grid_run, tmp_path):
    """A rewritten archive with valid zip CRCs but changed numbers fails the sha256 check."""
    _, path = grid_run
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["metric:acc_test"] = arrays["metric:acc_test"] * 0 + 1  # a perfect (forged) accuracy
    bad = tmp_path / "forged.npz"
    np.savez(bad, **arrays)
    err = _expect_run_file_error(bad)
    assert "checksum" in str(err)


def test_foreign_and_empty_files(tmp_path, grid_run):
    _, path = grid_run
    cases = {
        "empty.npz": b"",
        "table.npz": b"step,acc_train,acc_test\n0,0.1,0.05\n10,1.0,0.4\n",
        "gzip.npz": b"\x1f\x8b\x08\x00" + bytes(40),
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        _expect_run_file_error(tmp_path / name)
    np.save(tmp_path / "array.npy", np.arange(3))
    os.replace(tmp_path / "array.npy", tmp_path / "array.npz")
    assert ".npy" in str(_expect_run_file_error(tmp_path / "array.npz"))
    np.savez(tmp_path / "pickled.npz", x=np.array([{"a": 1}], dtype=object))
    assert "pickled" in str(_expect_run_file_error(tmp_path / "pickled.npz"))
    np.savez(tmp_path / "other.npz", weights=np.ones(3))
    assert "not a grokclocks run file" in str(_expect_run_file_error(tmp_path / "other.npz"))
    with pytest.raises(RunFileNotFoundError) as info:
        load_trajectory(tmp_path / "missing")
    assert isinstance(info.value, FileNotFoundError) and "missing.npz" in str(info.value)
    # a newer format version, correctly checksummed, is refused by name
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files if k != "sha256"}
    meta = json.loads(str(arrays["meta"][()]))
    future = runfile.RUN_FORMAT_VERSION + 1
    arrays["meta"] = np.array(json.dumps(dict(meta, version=future), sort_keys=True))
    arrays["sha256"] = np.array(runfile._checksum(arrays))
    np.savez(tmp_path / "future.npz", **arrays)
    assert f"format version {future}" in str(_expect_run_file_error(tmp_path / "future.npz"))


# ------------------------------------------------------------- files of grokclocks before versions


def test_format1_files_from_the_base_code_still_load(tmp_path):
    src = DATA / "modular_format1.npz"  # written by commit 00044c7: train_modular(..., save_path=...)
    with pytest.warns(RunFileWarning, match="format 1"):
        old = load_trajectory(src)
    with np.load(src) as f:
        for k in old.metrics:
            np.testing.assert_array_equal(old[k], f[f"metric:{k}"])
    assert old.config.weight_decay == (0.0, 1.0) and old.config.hooks == () and old["acc_test"].shape == (2, 2, 4)
    # resuming the finished format-1 run returns it unchanged (the base code added an axis here)
    for f in ("modular_format1.npz", "modular_format1.json"):
        shutil.copy(DATA / f, tmp_path / f)
    with pytest.warns(RunFileWarning, match="format 1"):
        again = train_modular("embedding_mlp", 5, train_frac=0.6, seeds=(0, 1), lr=3e-3, weight_decay=[0.0, 1.0],
                              model_kwargs=dict(d_embed=4, d_hidden=8), steps=6, record_every=2, n_chunks=3,
                              save_path=tmp_path / "modular_format1", resume=True)
    for k in old.metrics:
        np.testing.assert_array_equal(again[k], old[k])
    # re-saving upgrades it to the current format
    old.save(tmp_path / "upgraded")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(load_trajectory(tmp_path / "upgraded"), old)


# --------------------------------------------------------------------------- per-run divergence

def test_a_diverging_grid_point_keeps_the_rest_of_the_sweep():
    with pytest.warns(DivergenceWarning, match="1 of 2 runs diverged"):
        r = train_modular("mean_field_quadratic", lr=[1.0, 1e8], **DIVERGE)
    assert r.batch_shape == (2, 1)
    np.testing.assert_array_equal(r["diverged"], [[False], [True]])
    step = int(r["diverged_step"][1, 0])
    assert int(r["diverged_step"][0, 0]) == -1 and 0 < step <= 8
    j = int(np.searchsorted(r.times, step))
    for k in ("loss_train", "acc_test", "param_norm"):
        assert np.all(np.isnan(r[k][1, 0, j:])) and np.all(np.isfinite(r[k][1, 0, :j])), k
        assert np.all(np.isfinite(r[k][0])), k
    alone = train_modular("mean_field_quadratic", lr=1.0, **DIVERGE)
    # the same run in a batch of 2 or alone: equal up to float32 rounding of the vmapped program
    np.testing.assert_allclose(r["loss_train"][0], alone["loss_train"], rtol=1e-5)
    assert not bool(alone["diverged"].any())


def test_on_divergence_options():
    with pytest.raises(SimulationDiverged) as info:
        train_modular("mean_field_quadratic", lr=[1.0, 1e8], on_divergence="raise", **DIVERGE)
    assert "1 of 2 runs diverged" in str(info.value)
    np.testing.assert_array_equal(info.value.trajectory["diverged"], [[False], [True]])
    with pytest.raises(SimulationDiverged, match="2 of 2 runs diverged"):  # default: raise when all diverged
        train_modular("mean_field_quadratic", lr=[1e7, 1e8], **DIVERGE)
    with pytest.warns(DivergenceWarning, match="2 of 2"):
        r = train_modular("mean_field_quadratic", lr=[1e7, 1e8], on_divergence="flag", **DIVERGE)
    assert bool(r["diverged"].all()) and np.isnan(r["loss_train"][..., -1]).all()


def test_a_chunk_that_raises_is_not_saved(tmp_path):
    """With on_divergence='raise' the file keeps the records before the diverging chunk, with its state."""
    path = tmp_path / "div"
    kw = dict(DIVERGE, lr=[1.0, 50.0], steps=16, n_chunks=8)  # lr = 50 diverges at step 8 (measured)
    with pytest.raises(SimulationDiverged) as info:
        train_modular("mean_field_quadratic", save_path=path, on_divergence="raise", **kw)
    step = info.value.step
    with pytest.warns(RunFileWarning, match="partial run"):
        saved = load_trajectory(path)
    assert saved.times[-1] < step and not bool(saved["diverged"].any())
    assert np.isfinite(saved["loss_train"]).all()


# ---------------------------------------------------------------------- options checked up front


def _hook(params, inputs):
    return jnp.zeros(())


BAD_OPTIONS = [
    (dict(train_level=0.0), "train_level must be in \\(0, 1\\] \\(got 0.0\\)"),
    (dict(train_level=1.5), "train_level must be in \\(0, 1\\]"),
    (dict(test_level=float("nan")), "test_level must be finite"),
    (dict(hooks={"acc_train": _hook}), "hook name 'acc_train' collides with a built-in metric"),
    (dict(hooks={"loss_test": _hook}), "collides with a built-in metric"),
    (dict(hooks={"x": 3}), "hook 'x' must be callable"),
    (dict(hooks={"": _hook}), "hook names must be non-empty strings"),
    (dict(trackers={"acc_test": object()}), "tracker name 'acc_test' collides"),
    (dict(hooks={"x": _hook}, trackers={"x": object()}), "tracker name 'x' collides"),
    (dict(devices=5), "devices must be at most the 1 local device"),
    (dict(devices="all"), "devices must be None, an integer >= 1 or a list"),
    (dict(devices=0), "devices must be an integer >= 1"),
    (dict(devices=[]), "devices must be a non-empty list"),
    (dict(seeds=(0, 0)), "seeds must be distinct.*repeated: \\[0\\]"),
    (dict(seeds=()), "seeds must not be empty"),
    (dict(betas=(0.9,)), "betas must be a pair"),
    (dict(betas=(0.9, 0.98, 0.5)), "betas must be a pair"),
    (dict(betas=0.9), "betas must be a pair"),
    (dict(betas=(0.9, 1.0)), "betas must be a pair \\(b1, b2\\), each in \\[0, 1\\) \\(got \\(0.9, 1.0\\)\\)"),
    (dict(betas=(-0.1, 0.9)), "betas must be a pair"),
    (dict(betas="ab"), "betas must be a pair"),
    (dict(steps=4, record_every=8), "record_every must be <= steps=4 \\(got 8\\)"),
    (dict(steps=10, record_every=4), "steps must be a multiple of record_every=4"),
    (dict(n_chunks=0), "n_chunks must be an integer >= 1"),
    (dict(on_divergence="ignore"), "on_divergence must be one of"),
    (dict(resume="yes"), "resume must be True or False"),
    (dict(overwrite=1), "overwrite must be True or False"),
    (dict(resume=True), "need a save_path"),
    (dict(model_kwargs=dict(d_hiden=8)), "model_kwargs: 'embedding_mlp' takes \\['d_embed', 'd_hidden'"),
    (dict(model_kwargs=dict(dtype="float64")), "model_kwargs must not set dtype"),
    (dict(train_frac=None, train_mask=np.ones(25, bool), split_seed=0), "split_seed has no effect with train_mask"),
    (dict(save_path=123), "save_path must be a file path"),
]


@pytest.mark.parametrize("bad, message", BAD_OPTIONS, ids=[str(sorted(b)) for b, _ in BAD_OPTIONS])
def test_options_are_checked_before_anything_is_built(bad, message, monkeypatch):
    real = smod.MODULAR_MODELS["embedding_mlp"]

    @functools.wraps(real.init)  # same signature, so model_kwargs are checked against it
    def never(*a, **k):
        raise AssertionError("the model was built before the options were checked")

    monkeypatch.setitem(smod.MODULAR_MODELS, "embedding_mlp", smod.ModularModel(never, real.apply))
    monkeypatch.setattr(st._engine, "_compiled_metrics", never)
    kw = dict(KW, seeds=(0,))
    kw.update(bad)
    with pytest.raises(DomainError, match=message):
        train_modular("embedding_mlp", **kw)


def test_save_path_must_be_a_file(tmp_path):
    (tmp_path / "d.npz").mkdir()
    with pytest.raises(DomainError, match=r"save_path: .*d\.npz is a directory; give a file name"):
        train_modular("embedding_mlp", save_path=tmp_path / "d.npz", **dict(KW, seeds=(0,)))
    (tmp_path / "f").write_text("x")
    with pytest.raises(DomainError, match=r"save_path: cannot write .*f/run\.npz: Not a directory \(ENOTDIR\)"):
        train_modular("embedding_mlp", save_path=tmp_path / "f" / "run", **dict(KW, seeds=(0,)))
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "l.json").symlink_to(tmp_path / "notes.txt")  # the run's .json a link: never written through
    with pytest.raises(DomainError, match=r"save_path: .*l\.json is a symbolic link"):
        train_modular("embedding_mlp", save_path=tmp_path / "l", **dict(KW, seeds=(0,)))
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_simulate_checks_its_options():
    x0 = jnp.array([1.0])
    inp = {"a": jnp.asarray(0.5)}
    for kw, msg in ((dict(on_divergence="warn"), "on_divergence"), (dict(devices=3), "devices must be at most"),
                    (dict(steps=4, record_every=8), "record_every must be <= steps"),
                    (dict(batch_shape=(3,)), "batch_shape must reshape")):
        args = dict(steps=4, record_every=2, batch_axes=[None]) | kw
        with pytest.raises(DomainError, match=msg):
            simulate(_decay_step, _decay_metrics, x0, inp, **args)


def _decay_step(x, inp):
    return x * inp["a"]


def _decay_metrics(x, inp):
    return {"x": x}


# ----------------------------------------------------------------------------- reproducibility


def test_the_same_call_twice_gives_bit_identical_arrays():
    a = train_modular("embedding_mlp", **GRID)
    b = train_modular("embedding_mlp", **GRID)
    _same(a, b)
    for x, y in zip(jax.tree_util.tree_leaves(a.final_state), jax.tree_util.tree_leaves(b.final_state)):
        np.testing.assert_array_equal(x, y)


# ------------------------------------------------------------------------------------------ CLI


def test_cli_verify_needs_overwrite_for_an_existing_certificate(tmp_path, monkeypatch, capsys):
    from grokclocks import cli

    calls = []
    from grokclocks.cli import _verify

    monkeypatch.setattr(_verify.subprocess, "call", lambda cmd, cwd, env=None: calls.append(cmd) or 0)
    (tmp_path / "verify-cpu.json").write_text("{}")
    assert cli.main(["verify", "--only", "levi", "--report-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "verify-cpu.json already exists" in err and "--overwrite" in err and len(err.strip().splitlines()) == 1
    assert calls == []  # refused before pytest started
    assert cli.main(["verify", "--only", "levi", "--report-dir", str(tmp_path), "--overwrite"]) == 0 and len(calls) == 1
    (tmp_path / "file").write_text("x")
    assert cli.main(["verify", "--only", "levi", "--report-dir", str(tmp_path / "file" / "sub")]) == 2
    assert "cannot be created" in capsys.readouterr().err and len(calls) == 1
