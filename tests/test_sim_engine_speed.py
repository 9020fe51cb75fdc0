"""The engine's compute path (issue 13): factorised first layer, unbatched shared inputs, run chunks,
memory estimate, mixed precision.  Every fast path is checked against the plain computation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grokclocks import DomainError
from grokclocks.sim import models, train
from grokclocks.sim.data import random_split_mask
from grokclocks.sim.modular import train_modular

SMALL = dict(p=11, model_kwargs=dict(d_embed=8, d_hidden=16), lr=3e-3, steps=40, record_every=10)


def _assert_same_run(a, b, rtol=2e-5, atol=1e-6):
    for k in a.metrics:
        np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=atol, err_msg=k)
    for x, y in zip(jax.tree_util.tree_leaves(a.final_state), jax.tree_util.tree_leaves(b.final_state)):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def test_embedding_mlp_both_first_layer_forms_equal_the_textbook_form():
    p = models.embedding_mlp_init(jax.random.PRNGKey(1), 13, 8, 16)
    rng = np.random.default_rng(0)
    for n in (3, 13, 14, 200):  # n <= vocab: direct form; n > vocab: (E W1)[a] + (E W1)[b]
        tok = jnp.asarray(rng.integers(0, 13, size=(n, 2)))
        E, W1 = np.asarray(p["E"], np.float64), np.asarray(p["W1"], np.float64)
        h = np.maximum((E[tok[:, 0]] + E[tok[:, 1]]) @ W1 + np.asarray(p["b1"]), 0.0)
        ref = h @ np.asarray(p["W2"], np.float64) + np.asarray(p["b2"])
        np.testing.assert_allclose(models.embedding_mlp_apply(p, tok), ref, rtol=1e-5, atol=1e-6)


def test_dense_has_the_value_and_every_derivative_of_the_product():
    """``dense`` = ``x @ w``: value, reverse and forward mode, a Hessian, and a vmapped gradient (float64)."""
    from grokclocks.sim import enable_x64

    enable_x64()
    rng = np.random.default_rng(3)
    x = jnp.asarray(rng.normal(size=(2, 9, 5)), jnp.float64)
    w = jnp.asarray(rng.normal(size=(2, 5, 4)), jnp.float64)

    def loss(f, w, x):
        return jnp.sum(jnp.tanh(f(x, w)) ** 2)

    np.testing.assert_allclose(models.dense(x[0], w[0]), x[0] @ w[0], rtol=1e-14)
    for argnums in (0, 1):
        g = jax.vmap(jax.grad(lambda w, x: loss(models.dense, w, x), argnums))(w, x)
        ref = jax.vmap(jax.grad(lambda w, x: loss(jnp.matmul, w, x), argnums))(w, x)
        np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-14)
    t = jax.jvp(lambda w: models.dense(x[0], w), (w[0],), (w[1],))[1]
    np.testing.assert_allclose(t, x[0] @ w[1], rtol=1e-13)
    H = jax.hessian(lambda w: loss(models.dense, w, x[0]))(w[0])
    H_ref = jax.hessian(lambda w: loss(jnp.matmul, w, x[0]))(w[0])
    np.testing.assert_allclose(H, H_ref, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("act", ["quadratic", "relu"])
def test_tian_hidden_has_the_value_and_gradient_of_plain_autodiff(act):
    """The engine's Tian first layer (recomputed pre-activation, one scatter) = :func:`tian_features`: value,
    vmapped gradient (float64, repeated tokens included), and the trained apply of the registry."""
    from grokclocks.sim import enable_x64
    from grokclocks.sim.modular import modular_model

    enable_x64()
    M, K, N = 7, 6, 40
    rng = np.random.default_rng(5)
    W = jnp.asarray(rng.normal(size=(3, 2 * M, K)), jnp.float64)
    V = jnp.asarray(rng.normal(size=(3, K, M)), jnp.float64)
    tok = jnp.asarray(rng.integers(0, M, size=(3, N, 2)))  # 40 pairs of 7 tokens: every row hit repeatedly
    Fw = jnp.asarray(rng.normal(size=(N, K)), jnp.float64)

    def loss(f, W, tok):
        return jnp.sum(jnp.sin(f(W, tok)) * Fw)

    fast = lambda W, tok: models._tian_hidden(W, tok, M, act)  # noqa: E731
    plain = lambda W, tok: models.tian_features({"W": W, "V": V[0]}, tok, act)  # noqa: E731
    np.testing.assert_array_equal(fast(W[0], tok[0]), plain(W[0], tok[0]))
    g = jax.vmap(jax.grad(lambda W, t: loss(fast, W, t)))(W, tok)
    ref = jax.vmap(jax.grad(lambda W, t: loss(plain, W, t)))(W, tok)
    assert float(jnp.max(jnp.abs(g))) > 1.0
    np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-13)
    apply = modular_model(f"tian_{act}").apply
    P = {"W": W[0], "V": V[0]}
    np.testing.assert_array_equal(apply(P, tok[0]), models.tian_mlp_apply(P, tok[0], act))
    gP = jax.grad(lambda P: jnp.sum(jnp.cos(apply(P, tok[0]))))(P)
    rP = jax.grad(lambda P: jnp.sum(jnp.cos(models.tian_mlp_apply(P, tok[0], act))))(P)
    for k in P:
        np.testing.assert_allclose(gP[k], rP[k], rtol=1e-12, atol=1e-13, err_msg=k)
    # the custom rule is reverse mode only (documented); the public functions keep forward mode
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(lambda W: fast(W, tok[0]), (W[0],), (W[1],))
    t = jax.jvp(lambda W: plain(W, tok[0]), (W[0],), (W[1],))[1]
    assert t.shape == (N, K)


def _weight_gradient_products(f):
    import re

    x, w = jnp.ones((2, 300, 64), jnp.float32), jnp.ones((2, 64, 7), jnp.float32)
    g = jax.jit(jax.vmap(jax.grad(lambda w, x: jnp.sum(f(x, w) ** 2))))
    txt = g.lower(w, x).compile().as_text()
    products = [ln for ln in txt.splitlines() if " dot(" in ln or "kind=kCustom" in ln]  # dots, fused or not
    return {m for ln in products for m in re.findall(r"= f32\[2,(7,64|64,7)\]\{", ln)}


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the orientation is chosen for XLA's CPU backend")
def test_dense_weight_gradient_is_contracted_in_the_fast_orientation_on_the_cpu():
    """The vmapped weight gradient is the (m, k) product G^T x for ``dense`` and XLA's (k, m) product for
    ``x @ w`` (the slow one on the CPU: 9 against 3.5 ms for Tian's net); fails if the barrier is lost."""
    assert _weight_gradient_products(models.dense) == {"7,64"}
    assert _weight_gradient_products(jnp.matmul) == {"64,7"}


def test_batched_split_equals_runs_with_one_shared_split():
    """Two runs with different splits (batched split inputs) = each run alone (its split unbatched)."""
    masks = random_split_mask(11, [3, 4], frac=0.5)
    both = train_modular("embedding_mlp", seeds=(0, 1), train_mask=masks, **SMALL)
    for i in range(2):
        one = train_modular("embedding_mlp", seeds=(i,), train_mask=masks[i], **SMALL)
        for k in one.metrics:
            np.testing.assert_allclose(both[k][i], one[k][0], rtol=2e-5, atol=1e-6, err_msg=k)


def test_repeated_grid_values_equal_the_shared_value():
    """lr/wd given as a grid (batched) of one repeated value give the runs with that value shared."""
    grid = train_modular("embedding_mlp", seeds=(0,), train_frac=0.5, weight_decay=[0.5, 0.5], lr=[3e-3, 3e-3],
                         **{k: v for k, v in SMALL.items() if k != "lr"})
    one = train_modular("embedding_mlp", seeds=(0,), train_frac=0.5, weight_decay=0.5, **SMALL)
    for k in one.metrics:
        for i in range(2):
            for j in range(2):
                np.testing.assert_allclose(grid[k][i, j], one[k], rtol=2e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("seeds, chunk", [((0, 1, 2), 4), ((0, 1, 2, 3, 4), 2)])
def test_run_chunks_give_the_unchunked_runs(seeds, chunk):
    """6 runs in chunks of 3 (no padding); 10 runs in 5 chunks of 2 (strided)."""
    kw = dict(seeds=seeds, train_frac=0.5, weight_decay=[0.0, 1.0], **SMALL)
    full = train_modular("embedding_mlp", run_chunk=None, **kw)
    part = train_modular("embedding_mlp", run_chunk=chunk, **kw)
    assert int(full["run_chunk"]) == 2 * len(seeds) and int(part["run_chunk"]) == chunk
    _assert_same_run(full, part)


def test_run_chunk_with_padding_and_trackers():
    """5 runs in chunks of at most 2: 3 chunks of 2, the first run computed twice and dropped once."""
    from grokclocks.sim.trackers import update_gram_tracker

    kw = dict(seeds=(0, 1, 2, 3, 4), train_frac=0.5, trackers={"g": update_gram_tracker("W1", 3)}, **SMALL)
    _assert_same_run(train_modular("embedding_mlp", run_chunk=None, **kw),
                     train_modular("embedding_mlp", run_chunk=2, **kw))


def test_auto_run_chunk_when_memory_is_short(monkeypatch):
    kw = dict(seeds=(0, 1, 2), train_frac=0.5, **SMALL)
    full = train_modular("embedding_mlp", **kw)
    assert int(full["run_chunk"]) == 3  # plenty of memory: one program over every run
    monkeypatch.setattr(train._engine, "free_device_memory", lambda device=None: 1)
    short = train_modular("embedding_mlp", **kw)
    assert int(short["run_chunk"]) == 1
    _assert_same_run(full, short)


def test_choose_run_chunk():
    est = {"resident": 100, "working": 1000, "n_runs": 10}
    frac = train.MEMORY_FRACTION
    assert train.choose_run_chunk(est, None) is None
    assert train.choose_run_chunk(est, int(1100 / frac) + 1) is None
    assert train.choose_run_chunk(est, int(600 / frac) + 1) == 5   # (600 - 100) / 100 per run
    # 2 devices with 300 each: (600 - 100) / 100 = 5 runs, rounded down to a multiple of 2
    assert train.choose_run_chunk(est, int(300 / frac) + 1, n_devices=2) == 4
    assert train.choose_run_chunk(est, 10) == 1


def test_working_memory_estimate_bounds_xla():
    """The jaxpr bound is >= XLA's own temporary buffer size for the same program, and linear in runs."""
    from grokclocks.sim.modular import _train as modular  # the file of train_modular, whose `simulate` it calls

    cap = {}

    def capture(step, metrics, state0, inputs, **kw):
        cap.update(step=step, metrics=metrics, state=state0, inputs=inputs, axes=kw["batch_axes"])
        raise KeyboardInterrupt

    est = {}
    for n in (2, 4):
        orig = modular.simulate
        modular.simulate = capture
        try:
            with pytest.raises(KeyboardInterrupt):
                train_modular("embedding_mlp", seeds=tuple(range(n)), train_frac=0.5, **SMALL)
        finally:
            modular.simulate = orig
        est[n] = train.working_memory_estimate(cap["step"], cap["metrics"], cap["state"], cap["inputs"],
                                               record_every=10, n_records=4, batch_axes=cap["axes"])
        fn = train._compiled_chunk(cap["step"], cap["metrics"], 10, 4, cap["axes"])
        xla = fn.lower(cap["state"], cap["inputs"]).compile().memory_analysis()
        assert est[n]["working"] >= xla.temp_size_in_bytes
        assert est[n]["n_runs"] == n
    assert 1.9 < est[4]["working"] / est[2]["working"] < 2.1


def test_bfloat16_compute_dtype():
    kw = dict(seeds=(0,), train_frac=0.5, **SMALL)
    f32 = train_modular("embedding_mlp", **kw)
    bf = train_modular("embedding_mlp", compute_dtype="bfloat16", **kw)
    assert bf.config.compute_dtype == "bfloat16" and f32.config.compute_dtype is None
    # master parameters and optimiser state stay float32
    leaves = jax.tree_util.tree_leaves(bf.final_state[:2])
    assert all(x.dtype == np.float32 for x in leaves if np.issubdtype(x.dtype, np.floating))
    assert bf["loss_train"][0, -1] < 0.9 * bf["loss_train"][0, 0]
    # the same training to bfloat16 rounding: measured max relative difference 1.1e-4 over the 5 records
    # of every metric (an 8-bit mantissa rounds each weight by <= 2^-9 = 0.2 %; the losses average it out)
    for k in f32.metrics:
        np.testing.assert_allclose(bf[k], f32[k], rtol=1e-3, err_msg=k)
    assert not np.allclose(bf["loss_train"][0, 1:], f32["loss_train"][0, 1:], rtol=1e-6)  # bf16 was used
    with pytest.raises(DomainError, match="compute_dtype"):
        train_modular("embedding_mlp", compute_dtype="int8", **kw)


def test_run_chunk_argument_errors():
    for bad in (0, -1, "many"):
        with pytest.raises(DomainError, match="run_chunk"):
            train_modular("embedding_mlp", seeds=(0, 1), train_frac=0.5, run_chunk=bad, **SMALL)


def test_run_chunks_over_forced_host_devices():
    """Chunks of a run axis sharded over 2 devices give the single-device unchunked numbers."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import numpy as np, jax
        from grokclocks.sim.modular import train_modular
        assert jax.local_device_count() == 2, jax.devices()
        kw = dict(p=11, train_frac=0.5, model_kwargs=dict(d_embed=8, d_hidden=16), lr=3e-3, steps=20,
                  record_every=10, seeds=(0, 1, 2), weight_decay=[0.0, 1.0])
        a = train_modular("embedding_mlp", devices=None, run_chunk=2, **kw)
        b = train_modular("embedding_mlp", devices=1, run_chunk=None, **kw)
        assert int(a["n_devices"]) == 2 and int(a["run_chunk"]) == 2 and int(b["run_chunk"]) == 6
        for k in b.metrics:
            np.testing.assert_allclose(a[k], b[k], rtol=2e-5, atol=1e-6, err_msg=k)
        print("OK")
    """)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "OK" in out.stdout


def test_initial_state_in_compiled_calls_equals_the_op_by_op_one():
    """train_modular's keys and optimiser state come from one compiled call each (cached): the same bits as the
    per-seed PRNGKey list and the op-by-op vmap of optax's init they replace (float32 and float64 seeds)."""
    from grokclocks.sim.train import _optim
    from grokclocks.sim.train._batching import _seed_keys

    for seeds in ([0], [3, 1, 2], [0, 5, 2**31 - 1, 123456789], [2**31, 7]):  # the last: one key at a time
        want = jnp.stack([jax.random.PRNGKey(s) for s in seeds])
        assert np.array_equal(np.asarray(_seed_keys(seeds)), np.asarray(want)), seeds
    params = jax.vmap(lambda k: models.embedding_mlp_init(k, 11, 8, 16))(_seed_keys([0, 1]))
    inputs = {"lr": jnp.asarray([1e-3, 2e-3]), "wd": jnp.asarray(1.0), "b1": jnp.asarray(0.9), "b2": jnp.asarray(0.98),
              "eps": jnp.asarray(1e-8)}
    axes = [{"lr": 0, "wd": None, "b1": None, "b2": None, "eps": None}]
    for name in ("sgd", "adam", "adamw"):
        opt = train.optimizer_factory(name)
        ref = jax.vmap(lambda p, i: opt(i).init(p), in_axes=(0, axes[0]))(params, inputs)
        got_params, got = train.optax_init(opt, params, inputs, axes)
        for a, b in zip(jax.tree_util.tree_leaves((params, ref)), jax.tree_util.tree_leaves((got_params, got))):
            assert np.array_equal(np.asarray(a), np.asarray(b)), name
        assert (opt, _optim._axes_key(axes)) in _optim._OPTAX_INIT  # compiled once, then reused
