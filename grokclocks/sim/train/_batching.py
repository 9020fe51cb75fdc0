"""The training engine: step/metrics types and the batching helpers (vmap over batch axes, record times)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


StepFn = Callable[[Any, Any], Any]
MetricsFn = Callable[[Any, Any], Mapping[str, jax.Array]]


# Results and their persistence (Trajectory, save_trajectory, load_trajectory, RunFileError, ...) live in the
# JAX-free grokclocks.runfile and are re-exported here.

# --------------------------------------------------------------------------------------------
# Batching helpers
# --------------------------------------------------------------------------------------------


def batched(fn: Callable, batch_axes: Sequence[Any], *, state_axis: int | None = 0) -> Callable:
    """``vmap`` ``fn(state, inputs)`` over the batch axes, outermost first.

    ``batch_axes[i]`` is the ``in_axes`` (a pytree prefix of ``inputs``: 0 or None per leaf) of the
    i-th batch axis; ``state`` carries every batch axis in front (``state_axis=None``: no state
    batching, for functions of ``inputs`` only, called as ``fn(None, inputs)``).
    """
    f = fn
    for axes in reversed(tuple(batch_axes)):
        f = jax.vmap(f, in_axes=(state_axis, axes))
    return f


def broadcast_batch(tree: Any, batch_shape: tuple[int, ...], n_existing: int = 0) -> Any:
    """Insert leading batch axes so every leaf has ``batch_shape`` in front.

    ``n_existing`` trailing axes of ``batch_shape`` are already present on every leaf (e.g. the
    seed axis), the others are broadcast (e.g. a hyperparameter grid axis in front of it).
    """
    new = batch_shape[: len(batch_shape) - n_existing]

    def one(x: Any) -> jax.Array:
        x = jnp.asarray(x)
        return jnp.broadcast_to(x, new + x.shape)

    return jax.tree_util.tree_map(one, tree)


def record_times(steps: int, record_every: int) -> np.ndarray:
    """Steps at which :func:`simulate` records: ``0, record_every, ..., steps``."""
    return np.arange(0, steps + 1, record_every, dtype=np.int64)


def first_crossing_step(times: np.ndarray, values: np.ndarray, level: float) -> np.ndarray:
    """First recorded time at which ``values >= level`` along the last axis; NaN where never reached.

    Parameters
    ----------
    times : (n_records,) recorded steps
    values : (..., n_records), e.g. accuracies
    level : float

    Returns
    -------
    ndarray of shape ``values.shape[:-1]`` (float; NaN = not reached within the run; resolution =
    the recording interval).
    """
    values = np.asarray(values)
    hit = values >= level
    t = np.asarray(times, dtype=float)[np.argmax(hit, axis=-1)]
    return np.where(hit.any(axis=-1), t, np.nan)
