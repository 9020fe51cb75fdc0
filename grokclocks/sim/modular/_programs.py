"""The compiled (step, metrics) pair of a classifier trained on a masked table, cached per configuration.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import optax

from .. import models
from ..train import optimizer_factory


@functools.lru_cache(maxsize=None)
def _classifier_fns(apply: Any, loss_name: str, optimizer: str, warmup_steps: int, batch_size: int | None,
                    hooks: tuple[tuple[str, Any], ...],
                    trackers: tuple[tuple[str, Any], ...] = (), padded: bool = True,
                    compute_dtype: str | None = None) -> tuple[Any, Any]:
    """Cached (step, metrics) pair of a classifier trained on a masked table (one compiled program each).

    Without trackers the state is `(params, opt_state, t)`; with trackers it is
    `(params, opt_state, t, carries)`, `carries` a dict name -> carry updated after every
    optimiser update with `(carry, old_params, new_params, t + 1)`.

    `padded=False` (every run has the same number of training pairs, so `train_w` is all ones):
    the full-batch loss is a plain mean over `train_idx`, without the padding weights.
    `compute_dtype` (e.g. `"bfloat16"`): the training forward and backward pass run on a copy of
    the parameters cast to it (outputs cast back before the loss); parameters, gradients, optimiser
    state and the recorded metrics stay in the parameters' dtype.
    """
    loss_fn = models.LOSSES[loss_name]
    opt = optimizer_factory(optimizer, warmup_steps)

    def forward(params: Any, tokens: jax.Array) -> jax.Array:
        if compute_dtype is None:
            return apply(params, tokens)
        low = jax.tree_util.tree_map(
            lambda x: x.astype(compute_dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x, params)
        return apply(low, tokens).astype(jax.tree_util.tree_leaves(params)[0].dtype)

    def objective(params: Any, inp: dict[str, jax.Array], key: jax.Array) -> jax.Array:
        # only the training rows are evaluated: train_idx (n_max,) with 0/1 padding weights train_w
        idx, w = inp["train_idx"], (inp["train_w"] if padded else None)
        if batch_size is not None:
            w = inp["train_w"]
            idx = idx[jax.random.choice(key, idx.shape[0], (batch_size,), replace=False, p=w / jnp.sum(w))]
            w = None
        return loss_fn(forward(params, inp["tokens"][idx]), inp["labels"][idx], w)

    grad = jax.grad(objective)

    def step(state: Any, inp: dict[str, jax.Array]) -> Any:
        params, opt_state, t = state[:3]
        g = grad(params, inp, jax.random.fold_in(inp["key"], t))
        updates, opt_state = opt(inp).update(g, opt_state, params)
        new = optax.apply_updates(params, updates)
        if not trackers:
            return new, opt_state, t + 1
        carries = {name: tr.update(state[3][name], params, new, t + 1) for name, tr in trackers}
        return new, opt_state, t + 1, carries

    def metrics(state: Any, inp: dict[str, jax.Array]) -> dict[str, jax.Array]:
        params = state[0]
        out = apply(params, inp["tokens"])
        y, train = inp["labels"], inp["mask"]
        test = 1.0 - train
        correct = (jnp.argmax(out, axis=-1) == y).astype(train.dtype)
        per = {
            "loss_train": loss_fn(out, y, train),
            "loss_test": loss_fn(out, y, test),
            "acc_train": jnp.sum(correct * train) / jnp.sum(train),
            "acc_test": jnp.sum(correct * test) / jnp.sum(test),
            "param_norm": models.param_norm(params),
        }
        for name, fn in hooks:
            per[name] = fn(params, inp)
        for name, tr in trackers:
            r = tr.read(state[3][name])
            if isinstance(r, dict):
                per.update({f"{name}.{k}": v for k, v in r.items()})
            else:
                per[name] = r
        return per

    return step, metrics
