"""What every model shares: the `Model` record of an `init`/`apply` pair, the checks of every `*_init`, the
parameter norm.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ... import _validate as V
from ..._validate import DomainError


def _init_args(key: Any, dtype: Any, n_params: float, name: str, value: Any) -> None:
    """Checks shared by the ``*_init`` functions: one PRNG key (also a traced one: only its dtype and
    shape are read), a float dtype, and a parameter count that fits in memory."""
    kd = getattr(key, "dtype", None)
    typed = kd is not None and jax.dtypes.issubdtype(kd, jax.dtypes.prng_key)
    if not typed and (kd != jnp.uint32 or getattr(key, "shape", None) != (2,)):
        raise DomainError(f"key must be one jax.random key (a typed key, or PRNGKey: uint32 of shape (2,)) "
                          f"(got {V.show(key)})")
    try:
        ok = jnp.issubdtype(jnp.dtype(dtype), jnp.floating)
    except TypeError:
        ok = False
    if not ok:
        raise DomainError(f"dtype must be a float dtype (got {V.show(dtype)})")
    V.max_size(n_params, name, value)


class Model(NamedTuple):
    """A model as a pair of pure functions, `init(key, **dims) -> params` and `apply(params, X, **kw) -> Y`."""

    init: Callable[..., Any]
    """`init(key, ...) -> params`: draws the parameter pytree from a PRNG key."""
    apply: Callable[..., jax.Array]
    """`apply(params, X, ...) -> outputs`: the model's outputs for a batch of inputs."""


def param_norm(params: Any) -> jax.Array:
    """Global L2 norm of a parameter pytree, √(sum of the squares of every entry of every leaf).

    Parameters
    ----------
    params : pytree
        Arrays (the parameters of one model; batch axes would be summed over too).

    Returns
    -------
    jax.Array
        The norm, a scalar.
    """
    return jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in jax.tree_util.tree_leaves(params)))
