"""The table of every paper's modular-arithmetic model (`MODULAR_MODELS`, `modular_model`), with the one-hot
apply of the mean-field quadratic MLP of Levi et al.'s eq. (43).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp

from .. import models
from ..._validate import choice
from ..models import mean_field_quadratic_init


def quadratic_mlp_onehot_apply(params: dict[str, jax.Array], hot: jax.Array) -> jax.Array:
    r"""Mean-field quadratic MLP on one-hot inputs given by the indices of their ones.

    The hidden pre-activation is the sum of the columns of W1 at the hot indices, scaled by
    1/√d_in; it is squared and read out by W2/d_h:

    .. math::
        h = \frac{1}{\sqrt{d_{\rm in}}}\sum_{j \in {\rm hot}} W_1[:, j],\quad z = h^2,\quad f = \frac{W_2 z}{d_h}

    Equal to `grokclocks.sim.models.mean_field_quadratic_apply` on the 0/1 inputs with ones at
    `hot`, without the dense product.

    Parameters
    ----------
    params : dict of str to jax.Array
        `{"W1": W1, "W2": W2}` from `grokclocks.sim.models.mean_field_quadratic_init`, shapes
        (d_h, d_in) and (d_out, d_h).
    hot : jax.Array
        Integer indices in [0, d_in) of the ones of each input, shape (N, k) (k = 2 for a pair
        (n, m): indices n and p + m).

    Returns
    -------
    jax.Array
        Outputs f, shape (N, d_out).
    """
    W1, W2 = params["W1"], params["W2"]
    h = jnp.sum(W1.T[hot], axis=-2) / jnp.sqrt(jnp.asarray(W1.shape[1], W1.dtype))
    return jnp.square(h) @ W2.T / W2.shape[1]


def _mean_field_quadratic_tokens(params: dict[str, jax.Array], tokens: jax.Array) -> jax.Array:
    p = params["W2"].shape[0]
    return quadratic_mlp_onehot_apply(params, jnp.stack([tokens[:, 0], p + tokens[:, 1]], axis=1))


def _mean_field_quadratic_init(key: jax.Array, p: int, d_h: int = 512, *, dtype: Any = jnp.float32) -> dict:
    return mean_field_quadratic_init(key, 2 * p, d_h, p, dtype=dtype)


def _alpha_two_layer() -> tuple[Any, Any]:
    from .. import kramers  # the alpha-parameterised net of spec kramers lives with its theory

    return kramers.alpha_two_layer_init, kramers.alpha_two_layer_apply


@dataclasses.dataclass(frozen=True)
class ModularModel:
    """A modular-task model for `train_modular`: `init(key, p, **kwargs)` and `apply(params, tokens)`.

    `apply` is what the engine differentiates (reverse mode).  The Tian entries use
    `models._tian_hidden`, a `jax.custom_vjp` (faster backward pass), which has no forward mode: for
    `jax.jvp` / `jax.hessian` of Tian's net use `grokclocks.sim.models.tian_mlp_apply`.
    """

    init: Any
    """`init(key, p, *, dtype, **model_kwargs) -> params`, the parameters for modulus p."""
    apply: Any
    """`apply(params, tokens) -> logits`, tokens of shape (N, 2) or (N, 3), logits (N, p)."""
    equals: bool = False
    """Whether the inputs are `[a, b, =]` (3 tokens, `=` being token p) instead of `[a, b]`; default
    `False`."""
    paper: str = ""
    """The spec ID of the model's definition, e.g. `"clocks:appB"`; default empty."""


def _registry() -> dict[str, ModularModel]:
    reg = {
        "embedding_mlp": ModularModel(models.embedding_mlp_init, models.embedding_mlp_apply, paper="clocks:appB"),
        "transformer": ModularModel(models.transformer_init, models.transformer_apply, True, "uniformity:setup"),
        "tian_quadratic": ModularModel(lambda k, p, K=2048, dtype=jnp.float32: models.tian_mlp_init(k, p, K, dtype=dtype),
                                       functools.partial(models._tian_train_apply, act="quadratic"), paper="repulsion:model"),
        "tian_relu": ModularModel(lambda k, p, K=2048, dtype=jnp.float32: models.tian_mlp_init(k, p, K, dtype=dtype),
                                  functools.partial(models._tian_train_apply, act="relu"), paper="repulsion:model"),
        "mean_field_quadratic": ModularModel(_mean_field_quadratic_init, _mean_field_quadratic_tokens,
                                             paper="levi:appG"),
    }
    return reg


MODULAR_MODELS: dict[str, ModularModel] = _registry()
"""The models of `train_modular` by name: `"embedding_mlp"`, `"transformer"`, `"tian_quadratic"`, `"tian_relu"`,
`"mean_field_quadratic"` (and `"alpha_two_layer"`, added on first use by `modular_model`)."""


def modular_model(name: str) -> ModularModel:
    """The modular-task model called `name`.

    Parameters
    ----------
    name : str
        A key of `MODULAR_MODELS` (`"embedding_mlp"`, `"transformer"`, `"tian_quadratic"`,
        `"tian_relu"`, `"mean_field_quadratic"`) or `"alpha_two_layer"`, the α-parameterised net of
        spec `kramers` (imported and registered on first use).

    Returns
    -------
    ModularModel
        Its `init`/`apply` pair and input layout.

    Raises
    ------
    DomainError
        If `name` is not a known model (the message names it `model`).
    """
    if name == "alpha_two_layer" and name not in MODULAR_MODELS:
        init, apply = _alpha_two_layer()
        MODULAR_MODELS[name] = ModularModel(init, apply, paper="kramers:eq1")
    return MODULAR_MODELS[choice(name, "model", tuple(MODULAR_MODELS) + ("alpha_two_layer",))]
