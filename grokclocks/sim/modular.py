"""Modular addition with the mean-field quadratic MLP of Levi et al., appendix G (spec ``levi:appG``).

The network (paper eq. 43) ``h = W1 x / sqrt(d_in)``, ``z = h^2``, ``f = W2 z / d_h`` with
``W1, W2 ~ N(0, 1)`` is trained by full-batch GD (optax SGD) on an MSE to the one-hot labels of
``(n + m) mod p``; inputs are the concatenated one-hots of ``(n, m)`` (``d_in = 2p``).  All ``p^2``
pairs are kept with a 0/1 training mask, so splits of different fractions ``alpha`` share shapes
and are vmapped together with the seeds through the one engine
(:func:`grokclocks.sim.train.simulate`).

Because the inputs are one-hot, ``W1 x = W1[:, n] + W1[:, p + m]``: the first layer is evaluated
as a gather (identical to the matrix product, far cheaper).

Loss normalisation (spec erratum 20): ``loss="sum"`` (default) sums the squared error over the
``p`` classes and averages over samples; ``loss="mean"`` also averages over classes (PyTorch's
``MSELoss()``), which divides the gradient by ``p``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._validate import DomainError, choice, in_open_interval, integer_at_least, nonnegative, positive
from ..citations import cites
from ._runtime import enable_x64
from .data import make_modular_addition
from .models import mse
from .train import (
    Trajectory,
    first_crossing_step,
    optax_init,
    optax_step,
    save_trajectory,
    sgd_weight_decay,
    simulate,
)

__all__ = ["ModularConfig", "run_modular_addition", "first_crossing_step", "quadratic_mlp_onehot_apply"]


@dataclasses.dataclass(frozen=True)
class ModularConfig:
    """Configuration of :func:`run_modular_addition`."""

    p: int
    alpha: float | tuple[float, ...]
    d_h: int
    eta: float
    steps: int
    record_every: int
    seeds: tuple[int, ...]
    loss: str
    weight_decay: float
    threshold: float
    dtype: str


def quadratic_mlp_onehot_apply(params: dict[str, jax.Array], hot: jax.Array) -> jax.Array:
    """Mean-field quadratic MLP on one-hot inputs given by the indices of their ones.

    .. math::
        h = \\frac{1}{\\sqrt{d_{\\rm in}}}\\sum_{j \\in {\\rm hot}} W_1[:, j],\\quad z = h^2,\\quad f = \\frac{W_2 z}{d_h}

    Equal to :func:`grokclocks.sim.models.mean_field_quadratic_apply` on the 0/1 inputs with ones
    at ``hot`` (shape (N, k) integer indices), without the dense product.
    """
    W1, W2 = params["W1"], params["W2"]
    h = jnp.sum(W1.T[hot], axis=-2) / jnp.sqrt(jnp.asarray(W1.shape[1], W1.dtype))
    return jnp.square(h) @ W2.T / W2.shape[1]


def _make_loss(reduction: str) -> Any:
    def loss(params: dict[str, jax.Array], inp: dict[str, jax.Array]) -> jax.Array:
        pred = quadratic_mlp_onehot_apply(params, inp["hot"])
        return mse(pred, inp["Y"], reduction=reduction, weights=inp["mask"])

    return loss


_LOSSES = {r: _make_loss(r) for r in ("sum", "mean")}
_STEPS = {r: optax_step(jax.grad(f), sgd_weight_decay) for r, f in _LOSSES.items()}


def _make_metrics(reduction: str) -> Any:
    def metrics(state: Any, inp: dict[str, jax.Array]) -> dict[str, jax.Array]:
        params = state[0]
        pred = quadratic_mlp_onehot_apply(params, inp["hot"])
        correct = (jnp.argmax(pred, axis=-1) == inp["labels"]).astype(pred.dtype)
        train = inp["mask"]
        test = 1.0 - train
        return {
            "loss_train": mse(pred, inp["Y"], reduction=reduction, weights=train),
            "loss_test": mse(pred, inp["Y"], reduction=reduction, weights=test),
            "acc_train": jnp.sum(correct * train) / jnp.sum(train),
            "acc_test": jnp.sum(correct * test) / jnp.sum(test),
        }

    return metrics


_METRICS = {r: _make_metrics(r) for r in ("sum", "mean")}


@cites("levi:appG", "levi:fig8")
def run_modular_addition(p: int, alpha: float | Sequence[float], d_h: int, eta: float, steps: int, *,
                         seeds: Sequence[int] = (0,), loss: str = "sum", record_every: int = 10,
                         weight_decay: float = 0.0, threshold: float = 0.95, dtype: str = "float64",
                         progress: bool = False, save_path: str | os.PathLike | None = None,
                         resume: bool = False) -> Trajectory:
    """Full-batch GD of the mean-field quadratic MLP on (n + m) mod p; records accuracies and the grokking delay.

    .. math::
        f(x) = \\frac{1}{d_h} W_2 \\Big(\\frac{W_1 x}{\\sqrt{2p}}\\Big)^{2},\\quad
        \\mathcal L = \\frac{1}{N_{\\rm tr}}\\sum_{i \\in {\\rm train}} \\|f(x_i) - e_{y_i}\\|^2\\ (\\text{sum}),\\ \\text{or } /p\\ (\\text{mean}),

        \\Delta t = t_{\\rm test}(\\text{acc} \\ge 0.95) - t_{\\rm train}(\\text{acc} \\ge 0.95)

    (accuracy = argmax; the times are the first *recorded* steps, resolution ``record_every``).

    Parameters
    ----------
    p : int >= 2
        Modulus; inputs have ``d_in = 2p``, outputs ``p``.
    alpha : float in (0, 1] or sequence of them
        Training fraction(s); a sequence adds a leading batch axis (vmapped).  For one seed the
        training sets of different ``alpha`` are nested (same permutation).
    d_h : int >= 1
        Hidden width.
    eta : float > 0
        Learning rate (the paper uses 500 with the summed loss).
    steps : int >= 1 (multiple of ``record_every``)
    seeds : sequence of int >= 0
        Key ``PRNGKey(seed)`` split into (split key, init key).
    loss : {"sum", "mean"}
        MSE summed over the p classes (default; spec erratum 20) or averaged over them.
    record_every : int >= 1
    weight_decay : float >= 0
        Coefficient ``c`` of ``c * W`` added to the gradient (PyTorch convention); 0 in the paper.
    threshold : float in (0, 1)
        Accuracy level of the grokking delay (0.95 in the paper).
    dtype : {"float64", "float32"}
    progress, save_path, resume
        As in :func:`grokclocks.sim.train.simulate`.

    Returns
    -------
    Trajectory
        metrics ``loss_train``, ``loss_test``, ``acc_train``, ``acc_test`` of shape
        ``([n_alpha,] n_seeds, n_records)``; extras ``t_train``, ``t_test`` (first recorded step at
        which the accuracy reaches ``threshold``; NaN if never within ``steps``), ``grok_time``
        (= t_test - t_train), ``lam`` (= 2/(alpha p)), ``n_train``; config :class:`ModularConfig`.

    References
    ----------
    Spec ``levi:appG`` (paper appendix G, eq. 43, Fig. 8 = ``levi:fig8``).
    """
    p = integer_at_least(p, "p", 2)
    d_h = integer_at_least(d_h, "d_h", 1)
    eta = float(positive(eta, "eta"))
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1)
    loss = choice(loss, "loss", ("sum", "mean"))
    weight_decay = float(nonnegative(weight_decay, "weight_decay"))
    threshold = float(in_open_interval(threshold, "threshold", 0.0, 1.0))
    dtype = choice(dtype, "dtype", ("float64", "float32"))
    if dtype == "float64":
        enable_x64()
    fdt = jnp.float64 if dtype == "float64" else jnp.float32
    alphas = np.atleast_1d(positive(alpha, "alpha"))
    if alphas.ndim != 1:
        raise DomainError(f"alpha must be a scalar or a 1-D sequence (got shape {alphas.shape})")
    seeds = tuple(integer_at_least(s, "seed", 0) for s in np.atleast_1d(seeds).tolist())
    if not seeds:
        raise DomainError("seeds must not be empty")

    keys = jnp.stack([jax.random.PRNGKey(s) for s in seeds])
    split_keys, init_keys = jax.vmap(jax.random.split, out_axes=1)(keys)
    datas = [make_modular_addition(split_keys, p, float(a), dtype=fdt) for a in alphas]
    scalar_alpha = np.ndim(alpha) == 0
    mask = jnp.stack([d.train_mask for d in datas]).astype(fdt)  # (n_alpha, n_seeds, p^2)
    if scalar_alpha:
        mask = mask[0]
    n_train = np.array([d.n_train for d in datas])
    X0 = datas[0]
    n_idx, m_idx = jnp.divmod(jnp.arange(p * p), p)
    inputs = {
        "hot": jnp.stack([n_idx, p + m_idx], axis=1),
        "Y": X0.Y,
        "labels": X0.labels,
        "mask": mask,
        "eta": jnp.asarray(eta, fdt),
        "decay": jnp.asarray(weight_decay, fdt),
    }
    shared = {k: None for k in inputs}
    axes = [dict(shared, mask=0)] * (1 if scalar_alpha else 2)

    def init(k: jax.Array) -> dict[str, jax.Array]:
        k1, k2 = jax.random.split(k)
        return {"W1": jax.random.normal(k1, (d_h, 2 * p), dtype=fdt),
                "W2": jax.random.normal(k2, (p, d_h), dtype=fdt)}

    params = jax.vmap(init)(init_keys)
    if not scalar_alpha:
        params = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (len(alphas),) + x.shape), params)
    state0 = optax_init(sgd_weight_decay, params, inputs, axes)
    config = ModularConfig(p=p, alpha=float(alphas[0]) if scalar_alpha else tuple(float(a) for a in alphas), d_h=d_h,
                           eta=eta, steps=steps, record_every=record_every, seeds=seeds, loss=loss,
                           weight_decay=weight_decay, threshold=threshold, dtype=dtype)
    res = simulate(_STEPS[loss], _METRICS[loss], state0, inputs, steps=steps, record_every=record_every,
                   batch_axes=axes, config=config, progress=progress, save_path=save_path, resume=resume,
                   divergence_hint=f"eta={eta} too large for loss={loss!r}")
    metrics = dict(res.metrics)
    t_train = first_crossing_step(res.times, metrics["acc_train"], threshold)
    t_test = first_crossing_step(res.times, metrics["acc_test"], threshold)
    lam = 2.0 / (alphas * p)
    extras = {"t_train": t_train, "t_test": t_test, "grok_time": t_test - t_train,
              "lam": lam[0] if scalar_alpha else lam, "n_train": n_train[0] if scalar_alpha else n_train}
    out = Trajectory(times=res.times, metrics=metrics, config=config, extras=extras, final_state=res.final_state)
    if save_path is not None:
        save_trajectory(out, save_path, state=res.final_state)
    return out
