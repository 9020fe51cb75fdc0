"""The training engine: step/metrics types and the batching helpers (vmap over batch axes, record times)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


StepFn = Callable[[Any, Any], Any]
"""Type of a step of `simulate`: `step(state, inputs) -> state`, one optimisation step of one run (pure, jit-able)."""
MetricsFn = Callable[[Any, Any], Mapping[str, jax.Array]]
"""Type of the metrics of `simulate`: `metrics(state, inputs) -> dict[str, scalar]`, what one run records."""


# Results and their persistence (Trajectory, save_trajectory, load_trajectory, RunFileError, ...) live in the
# JAX-free grokclocks.runfile and are re-exported here.

# --------------------------------------------------------------------------------------------
# Batching helpers
# --------------------------------------------------------------------------------------------


def batched(fn: Callable, batch_axes: Sequence[Any], *, state_axis: int | None = 0) -> Callable:
    """`vmap` a function `fn(state, inputs)` of one run over the batch axes, outermost first.

    Parameters
    ----------
    fn : callable
        `fn(state, inputs)` for one run (pure, jit-able).
    batch_axes : sequence of pytrees
        One entry per batch axis, outermost first: `batch_axes[i]` is the `in_axes` of `inputs`
        for the i-th axis, a pytree prefix of `inputs` with `0` (batched along this axis) or `None`
        (shared) per leaf.  An empty sequence returns `fn` unchanged.
    state_axis : int or None
        Where `state` carries each batch axis: `0` (default) means every batch axis is in front of
        every state leaf; `None` means the state is not batched, for functions of `inputs` only,
        called as `fn(None, inputs)`.

    Returns
    -------
    callable
        `fn` vmapped once per batch axis, called as `fn(state, inputs)` with the batched arguments.
    """
    f = fn
    for axes in reversed(tuple(batch_axes)):
        f = jax.vmap(f, in_axes=(state_axis, axes))
    return f


def _axes_key(batch_axes: Sequence[Any]) -> tuple:
    """A hashable form of a `batch_axes` sequence (its leaves and tree structures), for compiled-program caches."""
    out = []
    for a in batch_axes:
        leaves, treedef = jax.tree_util.tree_flatten(a)
        out.append((tuple(leaves), treedef))
    return tuple(out)


_INIT_PROGRAMS: dict[tuple, Callable] = {}


def _seed_keys(seeds: Sequence[int]) -> jax.Array:
    """`jnp.stack([jax.random.PRNGKey(s) for s in seeds])`, computed in one compiled call where every seed is
    below 2^31 (else one key at a time, as written)."""
    if max(seeds) < 2**31:
        if "seed_keys" not in _INIT_PROGRAMS:
            _INIT_PROGRAMS["seed_keys"] = jax.jit(jax.vmap(jax.random.PRNGKey))
        return _INIT_PROGRAMS["seed_keys"](np.asarray(seeds, dtype=np.int32))
    return jnp.stack([jax.random.PRNGKey(int(s)) for s in seeds])


def broadcast_batch(tree: Any, batch_shape: tuple[int, ...], n_existing: int = 0) -> Any:
    """Insert leading batch axes so that every leaf of `tree` has `batch_shape` in front.

    Parameters
    ----------
    tree : pytree
        Arrays (or scalars) of one run, or with the last `n_existing` batch axes already in front.
    batch_shape : tuple of int
        The batch shape every leaf gets in front, outermost first.
    n_existing : int
        How many trailing axes of `batch_shape` every leaf already carries in front (e.g. the seed
        axis), an integer in [0, len(`batch_shape`)]; default 0.  The others are broadcast in front
        of them (e.g. a hyperparameter grid axis).

    Returns
    -------
    pytree
        `tree` with each leaf a JAX array of shape `batch_shape[:len(batch_shape) - n_existing] +
        leaf.shape`, i.e. with all of `batch_shape` in front of the run's own shape.
    """
    new = batch_shape[: len(batch_shape) - n_existing]

    def one(x: Any) -> jax.Array:
        x = jnp.asarray(x)
        return jnp.broadcast_to(x, new + x.shape)

    return jax.tree_util.tree_map(one, tree)


def record_times(steps: int, record_every: int) -> np.ndarray:
    """Steps at which `simulate` records: 0, `record_every`, 2 `record_every`, ..., `steps`.

    Parameters
    ----------
    steps : int
        Total number of steps of the run, ≥ 1 (not checked here; `simulate` checks it).
    record_every : int
        Steps between two records, ≥ 1 and dividing `steps`.

    Returns
    -------
    numpy.ndarray
        int64 array of the `steps / record_every + 1` record steps.
    """
    return np.arange(0, steps + 1, record_every, dtype=np.int64)


def first_crossing_step(times: np.ndarray, values: np.ndarray, level: float) -> np.ndarray:
    """First recorded time at which `values` ≥ `level` along the last axis; NaN where never reached.

    Parameters
    ----------
    times : array_like
        The recorded steps, shape (n_records,), e.g. `Trajectory.times`.
    values : array_like
        The recorded metric, shape (..., n_records) with the records on the last axis, e.g. an
        accuracy in [0, 1].
    level : float
        The threshold, in the unit of `values`; a record counts when its value is ≥ `level`.

    Returns
    -------
    numpy.ndarray
        float array of shape `values.shape[:-1]`: the first record step at or above `level`, NaN
        where the run never reaches it.  Its resolution is the recording interval.
    """
    values = np.asarray(values)
    hit = values >= level
    t = np.asarray(times, dtype=float)[np.argmax(hit, axis=-1)]
    return np.where(hit.any(axis=-1), t, np.nan)
