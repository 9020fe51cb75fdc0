"""The papers' models as pure ``init``/``apply`` pairs, plus the losses they are trained with.

Parameters are plain pytrees (dicts of arrays); ``apply(params, X)`` maps a batch of inputs
``X`` of shape (N, d_in) to outputs (N, d_out).  A :class:`Model` bundles one pair so that the
training engine can treat every model alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from .._validate import choice, integer_at_least

__all__ = [
    "Model",
    "ACTIVATIONS",
    "activation",
    "linear_init",
    "linear_apply",
    "two_layer_init",
    "two_layer_apply",
    "mean_field_quadratic_init",
    "mean_field_quadratic_apply",
    "LINEAR",
    "TWO_LAYER",
    "MEAN_FIELD_QUADRATIC",
    "mse",
]


class Model(NamedTuple):
    """A model as a pair of pure functions ``init(key, **dims) -> params``, ``apply(params, X, **kw) -> Y``."""

    init: Callable[..., Any]
    apply: Callable[..., jax.Array]


ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "linear": lambda h: h,
    "tanh": jnp.tanh,
    "quadratic": jnp.square,
}


def activation(name: str) -> Callable[[jax.Array], jax.Array]:
    """The entry-wise activation called ``name`` (one of ``linear``, ``tanh``, ``quadratic``)."""
    return ACTIVATIONS[choice(name, "activation", tuple(ACTIVATIONS))]


def linear_init(key: jax.Array, d_in: int, d_out: int = 1, *, variance: float | None = None,
                dtype: Any = jnp.float64) -> dict[str, jax.Array]:
    """One-layer linear model S (d_in, d_out), entries N(0, variance); default variance 1/(2 d_in d_out) (levi:conv-data)."""
    d_in = integer_at_least(d_in, "d_in", 1)
    d_out = integer_at_least(d_out, "d_out", 1)
    var = 1.0 / (2.0 * d_in * d_out) if variance is None else float(variance)
    return {"S": jnp.sqrt(var) * jax.random.normal(key, (d_in, d_out), dtype=dtype)}


def linear_apply(params: dict[str, jax.Array], X: jax.Array) -> jax.Array:
    """f(x) = S^T x for each row x of X: returns X @ S, shape (N, d_out)."""
    return X @ params["S"]


def two_layer_init(key: jax.Array, d_in: int, d_h: int, d_out: int = 1, *,
                   dtype: Any = jnp.float64) -> dict[str, jax.Array]:
    """Two-layer net of levi:eq16: S0 (d_in, d_h) ~ N(0, 1/(2 d_in d_h)), S1 (d_h, d_out) ~ N(0, 1/(2 d_out d_h))."""
    d_in = integer_at_least(d_in, "d_in", 1)
    d_h = integer_at_least(d_h, "d_h", 1)
    d_out = integer_at_least(d_out, "d_out", 1)
    k0, k1 = jax.random.split(key)
    return {
        "S0": (2.0 * d_in * d_h) ** -0.5 * jax.random.normal(k0, (d_in, d_h), dtype=dtype),
        "S1": (2.0 * d_out * d_h) ** -0.5 * jax.random.normal(k1, (d_h, d_out), dtype=dtype),
    }


def two_layer_apply(params: dict[str, jax.Array], X: jax.Array, act: str = "linear") -> jax.Array:
    """f(x) = S1^T sigma(S0^T x) for each row x of X (sigma = ``act``): returns sigma(X S0) S1."""
    return activation(act)(X @ params["S0"]) @ params["S1"]


def mean_field_quadratic_init(key: jax.Array, d_in: int, d_h: int, d_out: int, *,
                              dtype: Any = jnp.float64) -> dict[str, jax.Array]:
    """Mean-field quadratic MLP of levi:appG: W1 (d_h, d_in), W2 (d_out, d_h), all entries N(0, 1)."""
    d_in = integer_at_least(d_in, "d_in", 1)
    d_h = integer_at_least(d_h, "d_h", 1)
    d_out = integer_at_least(d_out, "d_out", 1)
    k1, k2 = jax.random.split(key)
    return {"W1": jax.random.normal(k1, (d_h, d_in), dtype=dtype),
            "W2": jax.random.normal(k2, (d_out, d_h), dtype=dtype)}


def mean_field_quadratic_apply(params: dict[str, jax.Array], X: jax.Array) -> jax.Array:
    """h = W1 x / sqrt(d_in), z = h^2, f = W2 z / d_h (paper eq. 43) for each row x of X; shape (N, d_out)."""
    W1, W2 = params["W1"], params["W2"]
    h = X @ W1.T / jnp.sqrt(jnp.asarray(W1.shape[1], X.dtype))
    return jnp.square(h) @ W2.T / W2.shape[1]


LINEAR = Model(linear_init, linear_apply)
TWO_LAYER = Model(two_layer_init, two_layer_apply)
MEAN_FIELD_QUADRATIC = Model(mean_field_quadratic_init, mean_field_quadratic_apply)


def mse(pred: jax.Array, target: jax.Array, *, reduction: str = "mean", weights: jax.Array | None = None) -> jax.Array:
    """Mean squared error over samples, with the class axis summed or averaged.

    .. math::
        \\text{mean: } \\frac{1}{N d_{\\rm out}} \\sum_i \\|f_i - y_i\\|^2, \\qquad
        \\text{sum: } \\frac{1}{N} \\sum_i \\|f_i - y_i\\|^2

    ``weights`` (shape (N,), e.g. a 0/1 train mask) replaces the sample mean by a weighted mean.
    ``reduction="mean"`` is PyTorch's ``MSELoss()``; ``"sum"`` sums over classes (spec erratum 20).
    """
    reduction = choice(reduction, "reduction", ("mean", "sum"))
    per_sample = jnp.sum(jnp.square(pred - target), axis=-1)
    if reduction == "mean":
        per_sample = per_sample / pred.shape[-1]
    if weights is None:
        return jnp.mean(per_sample)
    return jnp.sum(weights * per_sample) / jnp.sum(weights)
