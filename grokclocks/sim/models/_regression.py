"""The regression models: linear, two-layer, and the mean-field quadratic net, each an `init`/`apply` pair and a
`Model`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from ... import _validate as V
from ..._validate import integer_at_least
from ._activations import activation
from ._model import _init_args, Model


def linear_init(key: jax.Array, d_in: int, d_out: int = 1, *, variance: float | None = None,
                dtype: Any = jnp.float64) -> dict[str, jax.Array]:
    """Parameters of the one-layer linear model f(x) = Sᵀx: S of shape (d_in, d_out) with N(0, variance) entries.

    Parameters
    ----------
    key : jax.Array
        One PRNG key: a typed key, or `jax.random.PRNGKey` (uint32 of shape (2,)).
    d_in : int
        Input dimension d_in ≥ 1.
    d_out : int
        Output dimension d_out ≥ 1; default 1.
    variance : float or None
        Variance > 0 of the entries of S; `None` (default) means 1/(2 d_in d_out), the student law
        of spec `levi:conv-data`.
    dtype : dtype
        Floating dtype of the parameters; default float64.

    Returns
    -------
    dict of str to jax.Array
        `{"S": S}`.

    Raises
    ------
    DomainError
        If an argument is outside its domain or S would exceed 2³⁰ entries.

    References
    ----------
    Spec `levi:conv-data`.
    """
    d_in = integer_at_least(d_in, "d_in", 1)
    d_out = integer_at_least(d_out, "d_out", 1)
    _init_args(key, dtype, float(d_in) * d_out, "d_in", d_in)
    var = 1.0 / (2.0 * d_in * d_out) if variance is None else V.positive(variance, "variance", scalar=True)
    return {"S": jnp.sqrt(var) * jax.random.normal(key, (d_in, d_out), dtype=dtype)}


def linear_apply(params: dict[str, jax.Array], X: jax.Array) -> jax.Array:
    """Outputs f(x) = Sᵀx of the linear model for each row x of `X`: `X @ S`.

    Parameters
    ----------
    params : dict of str to jax.Array
        `{"S": S}` from `linear_init`, S of shape (d_in, d_out).
    X : jax.Array
        Inputs, shape (N, d_in).

    Returns
    -------
    jax.Array
        Outputs, shape (N, d_out).
    """
    return X @ params["S"]


def two_layer_init(key: jax.Array, d_in: int, d_h: int, d_out: int = 1, *,
                   dtype: Any = jnp.float64) -> dict[str, jax.Array]:
    """Parameters of the two-layer net f(x) = S1ᵀ σ(S0ᵀx) of spec `levi:eq16`.

    S0 has shape (d_in, d_h) and entries of variance 1/(2 d_in d_h); S1 has shape (d_h, d_out) and
    entries of variance 1/(2 d_out d_h).

    Parameters
    ----------
    key : jax.Array
        One PRNG key: a typed key, or `jax.random.PRNGKey` (uint32 of shape (2,)).
    d_in : int
        Input dimension d_in ≥ 1.
    d_h : int
        Hidden width d_h ≥ 1.
    d_out : int
        Output dimension d_out ≥ 1; default 1.
    dtype : dtype
        Floating dtype of the parameters; default float64.

    Returns
    -------
    dict of str to jax.Array
        `{"S0": S0, "S1": S1}`.

    Raises
    ------
    DomainError
        If an argument is outside its domain or the parameters would exceed 2³⁰ entries.

    References
    ----------
    Spec `levi:eq16` (paper eq. 16).
    """
    d_in = integer_at_least(d_in, "d_in", 1)
    d_h = integer_at_least(d_h, "d_h", 1)
    d_out = integer_at_least(d_out, "d_out", 1)
    _init_args(key, dtype, float(d_h) * (d_in + d_out), "d_h", d_h)
    k0, k1 = jax.random.split(key)
    return {
        "S0": (2.0 * d_in * d_h) ** -0.5 * jax.random.normal(k0, (d_in, d_h), dtype=dtype),
        "S1": (2.0 * d_out * d_h) ** -0.5 * jax.random.normal(k1, (d_h, d_out), dtype=dtype),
    }


def two_layer_apply(params: dict[str, jax.Array], X: jax.Array, act: str = "linear") -> jax.Array:
    """Outputs f(x) = S1ᵀ σ(S0ᵀx) of the two-layer net for each row x of `X`: σ(X·S0)·S1.

    Parameters
    ----------
    params : dict of str to jax.Array
        `{"S0": S0, "S1": S1}` from `two_layer_init`, shapes (d_in, d_h) and (d_h, d_out).
    X : jax.Array
        Inputs, shape (N, d_in).
    act : {"linear", "tanh", "quadratic", "relu"}
        The hidden activation σ; default `"linear"`.

    Returns
    -------
    jax.Array
        Outputs, shape (N, d_out).

    Raises
    ------
    DomainError
        If `act` is not a known activation.
    """
    return activation(act)(X @ params["S0"]) @ params["S1"]


def mean_field_quadratic_init(key: jax.Array, d_in: int, d_h: int, d_out: int, *,
                              dtype: Any = jnp.float64) -> dict[str, jax.Array]:
    """Parameters of the mean-field quadratic MLP of spec `levi:appG`: W1 (d_h, d_in), W2 (d_out, d_h), entries N(0, 1).

    Parameters
    ----------
    key : jax.Array
        One PRNG key: a typed key, or `jax.random.PRNGKey` (uint32 of shape (2,)).
    d_in : int
        Input dimension d_in ≥ 1 (2p for modular addition).
    d_h : int
        Hidden width d_h ≥ 1.
    d_out : int
        Output dimension d_out ≥ 1 (p for modular addition).
    dtype : dtype
        Floating dtype of the parameters; default float64.

    Returns
    -------
    dict of str to jax.Array
        `{"W1": W1, "W2": W2}`.

    Raises
    ------
    DomainError
        If an argument is outside its domain or the parameters would exceed 2³⁰ entries.

    References
    ----------
    Spec `levi:appG` (paper appendix G).
    """
    d_in = integer_at_least(d_in, "d_in", 1)
    d_h = integer_at_least(d_h, "d_h", 1)
    d_out = integer_at_least(d_out, "d_out", 1)
    _init_args(key, dtype, float(d_h) * (d_in + d_out), "d_h", d_h)
    k1, k2 = jax.random.split(key)
    return {"W1": jax.random.normal(k1, (d_h, d_in), dtype=dtype),
            "W2": jax.random.normal(k2, (d_out, d_h), dtype=dtype)}


def mean_field_quadratic_apply(params: dict[str, jax.Array], X: jax.Array) -> jax.Array:
    """Outputs of the mean-field quadratic MLP for each row x of `X`: h = W1·x/√d_in, z = h², f = W2·z/d_h.

    Parameters
    ----------
    params : dict of str to jax.Array
        `{"W1": W1, "W2": W2}` from `mean_field_quadratic_init`, shapes (d_h, d_in) and (d_out, d_h).
    X : jax.Array
        Inputs, shape (N, d_in).

    Returns
    -------
    jax.Array
        Outputs f, shape (N, d_out).

    References
    ----------
    Spec `levi:appG` (paper eq. 43).
    """
    W1, W2 = params["W1"], params["W2"]
    h = X @ W1.T / jnp.sqrt(jnp.asarray(W1.shape[1], X.dtype))
    return jnp.square(h) @ W2.T / W2.shape[1]


LINEAR = Model(linear_init, linear_apply)
"""The linear model f(x) = Sᵀx: `Model(linear_init, linear_apply)`."""
TWO_LAYER = Model(two_layer_init, two_layer_apply)
"""The two-layer net f(x) = S1ᵀ σ(S0ᵀx): `Model(two_layer_init, two_layer_apply)`."""
MEAN_FIELD_QUADRATIC = Model(mean_field_quadratic_init, mean_field_quadratic_apply)
"""The mean-field quadratic MLP: `Model(mean_field_quadratic_init, mean_field_quadratic_apply)`."""
