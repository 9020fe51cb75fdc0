"""Linear teacher-student simulations: helpers shared by the runs (batch axes, Gram matrices, metrics)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._validate import DomainError, nonnegative, positive
from ..data import TwoLayerData


def _check_data(data: Any, cls: type | tuple[type, ...]) -> None:
    if not isinstance(data, cls):
        if cls is TwoLayerData:
            want = "a TwoLayerData (from make_two_layer_teacher_student)"
        elif isinstance(cls, tuple):
            want = "a TeacherStudentData (from make_teacher_student) or SpectralDraws (from spectral_draws)"
        else:
            want = f"a {cls.__name__} (from make_teacher_student)"
        raise DomainError(f"data must be {want} (got {type(data).__name__})")


def _hyper(value: Any, name: str, kind: str) -> tuple[np.ndarray, float | tuple[float, ...]]:
    """Validate a scalar or 1-D hyperparameter grid; returns (array, config value)."""
    a = positive(value, name) if kind == "positive" else nonnegative(value, name)
    if a.ndim > 1:
        raise DomainError(f"{name} must be a scalar or a 1-D grid (got shape {a.shape})")
    return a, (float(a) if a.ndim == 0 else tuple(float(x) for x in a))


def _grid(eta: np.ndarray, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Broadcast eta and gamma to one grid axis (or none if both are scalars)."""
    if eta.ndim == 0 and gamma.ndim == 0:
        return eta, gamma, ()
    try:
        e, g = np.broadcast_arrays(np.atleast_1d(eta), np.atleast_1d(gamma))
    except ValueError:
        raise DomainError(f"eta and gamma grids must have the same length (got {eta.shape} and {gamma.shape})") from None
    return e.copy(), g.copy(), (e.shape[0],)


def _batch_axes(inputs: dict, per_grid: Sequence[str], n_grid: int, n_data: int,
                shared: Sequence[str] = ()) -> list[dict]:
    """in_axes for a grid axis (outermost; keys ``per_grid`` batched) then ``n_data`` data (seed) axes
    (every other key batched, except the ``shared`` ones)."""
    axes = []
    if n_grid:
        axes.append({k: (0 if k in per_grid else None) for k in inputs})
    axes.extend({k: (None if k in per_grid or k in shared else 0) for k in inputs} for _ in range(n_data))
    return axes


def _vmap_n(fn: Any, n: int) -> Any:
    for _ in range(n):
        fn = jax.vmap(fn)
    return fn


def _stability_hint(d_out: int) -> str:
    return (f"full-batch GD on this model is stable iff eta < d_out / (nu_max + gamma/2) with nu_max ~ (1 + sqrt(lam))^2 "
            f"the largest eigenvalue of X^T X / N and d_out = {d_out} (spec levi:eq3)")


@functools.partial(jax.jit, static_argnames=("n_batch",))
def _gram(X: jax.Array, delta: jax.Array, n_batch: int) -> dict[str, jax.Array]:
    def one(x: jax.Array, d: jax.Array) -> dict[str, jax.Array]:
        n = x.shape[0]
        sigma = x.T @ x / n
        sigma = 0.5 * (sigma + sigma.T)
        return {"Sigma": sigma, "F": x.T @ d / n, "noise": jnp.sum(d * d) / n}

    return _vmap_n(one, n_batch)(X, delta)
