"""Activation functions by name (`ACTIVATIONS`, `activation`).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from ..._validate import choice


ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "linear": lambda h: h,
    "tanh": jnp.tanh,
    "quadratic": jnp.square,
    "relu": jax.nn.relu,
}
"""Entry-wise activations by name: `"linear"` (identity), `"tanh"`, `"quadratic"` (h²), `"relu"` (max(h, 0))."""


def activation(name: str) -> Callable[[jax.Array], jax.Array]:
    """The entry-wise activation function called `name`.

    Parameters
    ----------
    name : {"linear", "tanh", "quadratic", "relu"}
        The activation: identity, tanh, h² or max(h, 0) (the keys of `ACTIVATIONS`).

    Returns
    -------
    callable
        The function `sigma(h) -> jax.Array`, applied entry-wise.

    Raises
    ------
    DomainError
        If `name` is not one of the four (the message names it `activation`).
    """
    return ACTIVATIONS[choice(name, "activation", tuple(ACTIVATIONS))]
