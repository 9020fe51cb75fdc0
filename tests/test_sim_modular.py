"""The modular-arithmetic engine: data, models, losses, optimisers, grids, sharding (issue 3)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from grokclocks import DomainError
from grokclocks.sim import SimulationDiverged, models
from grokclocks.sim.data import (modular_table, onehot_inputs, random_split_mask, token_inputs)
from grokclocks.sim.modular import train_modular
from grokclocks.sim.train import optimizer_factory

KEY = jax.random.PRNGKey(0)


# ------------------------------------------------------------------------------------------- data


@pytest.mark.parametrize("op, fn", [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b),
                                    ("mul", lambda a, b: a * b), ("sq_sum", lambda a, b: a * a + b * b)])
def test_modular_table(op, fn):
    p = 7
    a, b, y = modular_table(p, op)
    assert a.shape == b.shape == y.shape == (p * p,)
    for i in range(p * p):
        assert (a[i], b[i]) == divmod(i, p)
        assert y[i] == fn(int(a[i]), int(b[i])) % p


def test_modular_table_user_function_and_errors():
    a, b, y = modular_table(5, lambda a, b: a ** 3 + b)
    assert np.array_equal(y, (a ** 3 + b) % 5)
    with pytest.raises(DomainError, match="operation"):
        modular_table(5, "div")
    with pytest.raises(DomainError, match="p"):
        modular_table(1)
    with pytest.raises(DomainError, match="int array"):
        modular_table(5, lambda a, b: a / (b + 1))


def test_inputs():
    a, b, _ = modular_table(5)
    tok = token_inputs(a, b, 5, equals=True)
    assert tok.shape == (25, 3) and np.all(tok[:, 2] == 5)
    X = onehot_inputs(a, b, 5)
    assert X.shape == (25, 10) and np.all(X.sum(1) == 2)
    assert np.all(X[np.arange(25), a] == 1) and np.all(X[np.arange(25), 5 + b] == 1)
    with pytest.raises(DomainError, match="tokens"):
        token_inputs(np.array([5]), np.array([0]), 5)


def test_random_split_mask():
    m = random_split_mask(11, [0, 1, 2], frac=0.3)
    assert m.shape == (3, 121) and np.all(m.sum(1) == int(0.3 * 121))
    perm = np.random.default_rng(1).permutation(121)[: int(0.3 * 121)]
    assert np.array_equal(np.flatnonzero(m[1]), np.sort(perm))
    assert random_split_mask(11, 4, n_train=50).shape == (121,)
    for kw in (dict(frac=1.0), dict(n_train=121), dict(n_train=0), dict()):
        with pytest.raises(DomainError):
            random_split_mask(11, 0, **kw)


# ----------------------------------------------------------------------------------------- models


def test_embedding_mlp_init_scales_and_forward():
    p = models.embedding_mlp_init(KEY, 97, 128, 512)
    assert abs(float(jnp.var(p["E"])) * 128 - 1) < 0.05
    assert abs(float(jnp.var(p["W1"])) * 128 / 2 - 1) < 0.05
    assert abs(float(jnp.var(p["W2"])) * 512 - 1) < 0.05
    assert not p["b1"].any() and not p["b2"].any()
    tok = jnp.array([[3, 5], [96, 0]])
    ref = jax.nn.relu((p["E"][tok[:, 0]] + p["E"][tok[:, 1]]) @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
    np.testing.assert_allclose(models.embedding_mlp_apply(p, tok), ref, rtol=1e-6)


def test_tian_mlp_equals_dense_onehot_product():
    M, K = 7, 16
    prm = models.tian_mlp_init(KEY, M, K)
    bw = 1 / np.sqrt(2 * M)
    assert float(jnp.abs(prm["W"]).max()) <= bw and float(jnp.abs(prm["V"]).max()) <= 1 / np.sqrt(K)
    a, b, _ = modular_table(M)
    X = jnp.asarray(onehot_inputs(a, b, M))
    tok = jnp.asarray(token_inputs(a, b, M))
    for act, f in (("quadratic", jnp.square), ("relu", jax.nn.relu)):
        np.testing.assert_allclose(models.tian_mlp_apply(prm, tok, act), f(X @ prm["W"]) @ prm["V"], rtol=2e-5,
                                   atol=1e-6)
    init, apply = models.tian_mlp(M, K, "relu")
    np.testing.assert_allclose(apply(init(KEY), tok), models.tian_mlp_apply(prm, tok, "relu"), rtol=1e-6)


def _full_causal_transformer(params, tokens):
    """Reference: the whole decoder at every position with an explicit causal mask."""
    x = params["W_E"][tokens] + params["W_pos"][: tokens.shape[1]]
    q = jnp.einsum("npd,hde->nhpe", x, params["W_Q"])
    k = jnp.einsum("npd,hde->nhpe", x, params["W_K"])
    v = jnp.einsum("npd,hde->nhpe", x, params["W_V"])
    s = jnp.einsum("nhpe,nhqe->nhpq", q, k) / np.sqrt(q.shape[-1])
    n = tokens.shape[1]
    s = jnp.where(jnp.tril(jnp.ones((n, n), bool)), s, -jnp.inf)
    z = jnp.einsum("nhpq,nhqe->nhpe", jax.nn.softmax(s, -1), v)
    r = x + jnp.einsum("nhpe,hed->npd", z, params["W_O"])
    r = r + jax.nn.relu(r @ params["W_in"] + params["b_in"]) @ params["W_out"] + params["b_out"]
    return (r @ params["W_U"])[:, -1]


def test_transformer_last_position_equals_full_causal_decoder():
    prm = models.transformer_init(KEY, 11, d_model=32, n_heads=4, d_head=8, d_mlp=64)
    assert prm["W_E"].shape == (12, 32) and prm["W_U"].shape == (32, 11)
    assert abs(float(jnp.std(prm["W_out"])) * np.sqrt(32) - 1) < 0.1  # 1/sqrt(d_model), also W_out
    a, b, _ = modular_table(11)
    tok = jnp.asarray(token_inputs(a, b, 11, equals=True))
    np.testing.assert_allclose(models.transformer_apply(prm, tok), _full_causal_transformer(prm, tok),
                               rtol=1e-4, atol=1e-5)


def test_losses():
    rng = np.random.default_rng(0)
    out = jnp.asarray(rng.normal(size=(6, 5)), jnp.float32)
    y = jnp.array([0, 1, 2, 3, 4, 0])
    w = jnp.array([1.0, 0, 1, 1, 0, 1])
    logp = out - jax.scipy.special.logsumexp(out, axis=1, keepdims=True)
    ce = -logp[jnp.arange(6), y]
    np.testing.assert_allclose(models.cross_entropy(out, y, w), np.sum(ce * w) / 4, rtol=1e-6)
    # centred MSE: the expanded form of spec repulsion:loss
    zm = out - out.mean(1, keepdims=True)
    per = np.sum(np.square(zm), 1) - 2 * zm[np.arange(6), y] + 1 - 1 / 5
    np.testing.assert_allclose(models.centred_mse(out, y), per.mean(), rtol=1e-5)
    oh = jax.nn.one_hot(y, 5)
    np.testing.assert_allclose(models.LOSSES["mse_sum"](out, y), np.mean(np.sum((out - oh) ** 2, 1)), rtol=1e-6)
    np.testing.assert_allclose(models.LOSSES["mse_mean"](out, y), np.mean((out - oh) ** 2), rtol=1e-6)


# ------------------------------------------------------------------------------------- optimisers


def _torch_adam_reference(theta, grads, lr, wd, b1, b2, eps, decoupled, warmup=0):
    """Hand-written PyTorch Adam / AdamW update rules (float64)."""
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    out = []
    for t, g in enumerate(grads, start=1):
        lr_t = lr * min((t - 1) / warmup, 1.0) if warmup else lr
        if decoupled:
            theta = theta * (1 - lr_t * wd)
        else:
            g = g + wd * theta
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mhat, vhat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        theta = theta - lr_t * mhat / (np.sqrt(vhat) + eps)
        out.append(theta)
    return out


@pytest.mark.parametrize("name, decoupled, warmup", [("adam", False, 0), ("adamw", True, 0), ("adamw", True, 3)])
def test_optimizer_factory_matches_pytorch_rules(name, decoupled, warmup):
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(1)
    theta0 = rng.normal(size=4)
    grads = [rng.normal(size=4) for _ in range(6)]
    inp = dict(lr=jnp.float64(0.01), wd=jnp.float64(0.5), b1=jnp.float64(0.9), b2=jnp.float64(0.98),
               eps=jnp.float64(1e-8))
    opt = optimizer_factory(name, warmup)(inp)
    theta = jnp.asarray(theta0)
    state = opt.init(theta)
    ref = _torch_adam_reference(theta0, grads, 0.01, 0.5, 0.9, 0.98, 1e-8, decoupled, warmup)
    for g, r in zip(grads, ref):
        upd, state = opt.update(jnp.asarray(g), state, theta)
        theta = optax.apply_updates(theta, upd)
        np.testing.assert_allclose(theta, r, rtol=1e-12, atol=1e-14)
    if warmup:
        assert np.allclose(ref[0], theta0 * (1 - 0)), "first update must have learning rate 0"


def test_sgd_coupled_l2():
    inp = dict(lr=jnp.float32(0.1), wd=jnp.float32(0.5))
    opt = optimizer_factory("sgd")(inp)
    th = jnp.array([1.0, -2.0])
    upd, _ = opt.update(jnp.array([0.3, 0.1]), opt.init(th), th)
    np.testing.assert_allclose(th + upd, th - 0.1 * (jnp.array([0.3, 0.1]) + 0.5 * th), rtol=1e-6)


# ----------------------------------------------------------------------------------------- engine

SMALL = dict(p=11, train_frac=0.5, model_kwargs=dict(d_embed=8, d_hidden=16), lr=3e-3, steps=40, record_every=10)


def test_grid_runs_equal_individual_runs():
    grid = train_modular("embedding_mlp", seeds=(0, 1), weight_decay=[0.0, 1.0], **SMALL)
    assert grid.batch_shape == (2, 2) and grid.config.grid_axes == ("weight_decay",)
    one = train_modular("embedding_mlp", seeds=(1,), weight_decay=1.0, **SMALL)
    assert one.batch_shape == (1,)
    np.testing.assert_allclose(grid["loss_train"][1, 1], one["loss_train"][0], rtol=2e-5)
    np.testing.assert_allclose(grid["acc_test"][1, 1], one["acc_test"][0], rtol=1e-6)
    # weight decay acts: smaller parameter norm at wd = 1
    assert np.all(grid["param_norm"][1, :, -1] < grid["param_norm"][0, :, -1])


def test_train_frac_grid_and_extras():
    r = train_modular("embedding_mlp", seeds=(0,), **dict(SMALL, train_frac=[0.3, 0.6]), weight_decay=1.0)
    assert r.batch_shape == (2, 1)
    assert list(r["n_train"][:, 0]) == [int(0.3 * 121), int(0.6 * 121)]
    assert r["t_train"].shape == (2, 1)


@pytest.mark.parametrize("model, kw, loss, opt", [
    ("transformer", dict(d_model=16, n_heads=2, d_head=8, d_mlp=32), "ce", "adamw"),
    ("tian_quadratic", dict(K=32), "centred_mse", "adam"),
    ("tian_relu", dict(K=32), "centred_mse", "adam"),
    ("mean_field_quadratic", dict(d_h=32), "mse_sum", "sgd"),
])
def test_every_model_trains(model, kw, loss, opt):
    r = train_modular(model, 11, train_frac=0.5, seeds=(0,), model_kwargs=kw, loss=loss, optimizer=opt,
                      lr=1e-3 if opt != "sgd" else 1.0, weight_decay=1e-4, steps=60, record_every=30)
    assert r["loss_train"][0, -1] < r["loss_train"][0, 0]


def test_minibatch_uses_only_training_pairs():
    # a model that memorises: with all batches from the training set, test loss never moves if the
    # embedding of test-only pairs is untouched -- simpler: compare to full batch at batch = n_train.
    full = train_modular("embedding_mlp", seeds=(0,), weight_decay=0.0, **SMALL)
    n_tr = int(full["n_train"][0])
    mb = train_modular("embedding_mlp", seeds=(0,), weight_decay=0.0, batch_size=n_tr, **SMALL)
    np.testing.assert_allclose(mb["loss_train"], full["loss_train"], rtol=1e-4)
    small = train_modular("embedding_mlp", seeds=(0,), weight_decay=0.0, batch_size=8, **SMALL)
    assert small["loss_train"][0, -1] < small["loss_train"][0, 0]
    with pytest.raises(DomainError, match="batch_size"):
        train_modular("embedding_mlp", seeds=(0,), batch_size=n_tr + 1, **SMALL)


def _sv_hook(params, inputs):
    return jnp.linalg.svd(params["W1"], compute_uv=False)[:3]


def test_hooks_are_recorded():
    r = train_modular("embedding_mlp", seeds=(0, 1), hooks={"sv": _sv_hook}, **SMALL)
    assert r["sv"].shape == (2, 3, len(r.times))
    assert np.all(np.diff(r["sv"][:, :, 0], axis=1) <= 0)


def test_explicit_mask_and_errors():
    m = random_split_mask(11, 3, frac=0.4)
    r = train_modular("embedding_mlp", seeds=(0, 1), train_mask=m, **{k: v for k, v in SMALL.items() if k != "train_frac"})
    assert list(r["n_train"]) == [m.sum()] * 2
    with pytest.raises(DomainError, match="train_mask"):
        train_modular("embedding_mlp", train_mask=m.astype(int), **{k: v for k, v in SMALL.items() if k != "train_frac"})
    with pytest.raises(DomainError, match="model"):
        train_modular("resnet", **SMALL)
    with pytest.raises(DomainError, match="optimizer"):
        train_modular("embedding_mlp", optimizer="lion", **SMALL)
    with pytest.raises(DomainError, match="loss"):
        train_modular("embedding_mlp", loss="hinge", **SMALL)
    with pytest.raises(DomainError, match="lr"):
        train_modular("embedding_mlp", **dict(SMALL, lr=-1.0))
    for betas in ((-0.1, 0.98), (0.9, 1.0)):
        with pytest.raises(DomainError, match="betas"):
            train_modular("embedding_mlp", betas=betas, **SMALL)


def test_divergence_raises():
    with pytest.raises(SimulationDiverged):
        train_modular("mean_field_quadratic", 11, train_frac=0.5, model_kwargs=dict(d_h=16), loss="mse_sum",
                      optimizer="sgd", lr=1e6, weight_decay=0.0, steps=20, record_every=10)


def test_save_and_resume(tmp_path):
    path = tmp_path / "run.npz"
    full = train_modular("embedding_mlp", seeds=(0,), save_path=path, n_chunks=4, **SMALL)
    assert path.exists()
    again = train_modular("embedding_mlp", seeds=(0,), save_path=path, resume=True, n_chunks=4, **SMALL)
    np.testing.assert_array_equal(again["loss_train"], full["loss_train"])


def test_sharding_over_forced_host_devices():
    """The sweep shards over 2 forced CPU devices and gives the single-device numbers."""
    code = textwrap.dedent("""
        import numpy as np, jax
        from grokclocks.sim.modular import train_modular
        assert jax.local_device_count() == 2, jax.devices()
        kw = dict(p=11, train_frac=0.5, model_kwargs=dict(d_embed=8, d_hidden=16), lr=3e-3, steps=40,
                  record_every=10, seeds=(0, 1), weight_decay=[0.0, 1.0])
        a = train_modular("embedding_mlp", devices=None, **kw)
        b = train_modular("embedding_mlp", devices=1, **kw)
        assert int(a["n_devices"]) == 2 and int(b["n_devices"]) == 1
        np.testing.assert_allclose(a["loss_train"], b["loss_train"], rtol=1e-5)
        leaf = jax.tree_util.tree_leaves(a.final_state)[0]
        print("OK", int(a["n_devices"]))
    """)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "OK 2" in out.stdout


def test_designed_split_mask_is_the_coverage_design():
    from grokclocks.coverage import designed_split
    from grokclocks.sim.data import designed_split_mask

    m = designed_split_mask(23, "square", 5)
    train, test = designed_split(23, "square", 5)
    assert m.shape == (529,) and m.dtype == bool
    assert np.array_equal(m, np.asarray(train).reshape(-1))


def test_run_modular_addition_is_a_configuration_of_train_modular():
    """Levi App. G through the one front-end: the same Trajectory as the train_modular call its docstring names."""
    from grokclocks.sim.modular import run_modular_addition, train_modular

    p, alphas = 7, [0.5, 0.8]
    res = run_modular_addition(p, alphas, 8, 20.0, 40, seeds=(0, 1), record_every=10, threshold=0.9)
    ref = train_modular("mean_field_quadratic", p, train_frac=alphas, n_train_rule="round", seeds=(0, 1),
                        model_kwargs={"d_h": 8}, optimizer="sgd", lr=20.0, weight_decay=0.0, loss="mse_sum", steps=40,
                        record_every=10, train_level=0.9, test_level=0.9, dtype="float64")
    for k in ref.metrics:
        np.testing.assert_array_equal(res[k], ref[k])
    assert res["n_train"].tolist() == [round(0.5 * 49), round(0.8 * 49)]  # round(alpha p^2), not int()
    np.testing.assert_array_equal(res["grok_time"], ref["t_test"] - ref["t_train"])
    np.testing.assert_allclose(res["lam"], [2 / (0.5 * p), 2 / (0.8 * p)])
    assert res.config.n_train_rule == "round" and res.config.model == "mean_field_quadratic"
