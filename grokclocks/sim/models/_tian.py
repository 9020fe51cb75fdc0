"""Tian's net σ(X·W)·V of spec `repulsion` (inputs: token pairs): init, features, apply, and the engine's
faster first layer.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._validate import choice, integer_at_least
from ._activations import activation
from ._dense import dense
from ._model import _init_args, Model


def tian_mlp_init(key: jax.Array, M: int, K: int, *, dtype: Any = jnp.float32) -> dict[str, jax.Array]:
    """Parameters of Tian's two-layer net σ(X·W)·V of spec `repulsion:model`: W (2M, K), V (K, M), no biases.

    PyTorch `nn.Linear` default initialisation (spec `repulsion:setup`): W ~ U(−1/√(2M), 1/√(2M)),
    V ~ U(−1/√K, 1/√K).

    Parameters
    ----------
    key : jax.Array
        One PRNG key: a typed key, or `jax.random.PRNGKey` (uint32 of shape (2,)).
    M : int
        The modulus M ≥ 2: the number of classes (the inputs are two one-hots of length M).
    K : int
        Hidden width K ≥ 1.
    dtype : dtype
        Floating dtype of the parameters; default float32.

    Returns
    -------
    dict of str to jax.Array
        `{"W": W, "V": V}`.

    Raises
    ------
    DomainError
        If an argument is outside its domain or the parameters would exceed 2³⁰ entries.

    References
    ----------
    Spec `repulsion:model`, `repulsion:setup`.
    """
    M = integer_at_least(M, "M", 2)
    K = integer_at_least(K, "K", 1)
    _init_args(key, dtype, 3.0 * M * K, "K", K)
    kW, kV = jax.random.split(key)
    bw, bv = 1.0 / np.sqrt(2 * M), 1.0 / np.sqrt(K)
    return {"W": jax.random.uniform(kW, (2 * M, K), dtype, -bw, bw),
            "V": jax.random.uniform(kV, (K, M), dtype, -bv, bv)}


def _pair_preactivation(W: jax.Array, tokens: jax.Array, M: int) -> jax.Array:
    return W[tokens[..., 0]] + W[M + tokens[..., 1]]


def _tian_features(params: dict[str, jax.Array], tokens: jax.Array, act: str) -> jax.Array:
    return activation(act)(_pair_preactivation(params["W"], tokens, params["V"].shape[1]))


def tian_features(params: dict[str, jax.Array], tokens: jax.Array, act: str = "quadratic") -> jax.Array:
    """Hidden features F = σ(X·W) of Tian's net for token pairs, X the concatenated one-hots.

    Parameters
    ----------
    params : dict of str to jax.Array
        `{"W": W, "V": V}` from `tian_mlp_init` (V only gives M).
    tokens : jax.Array
        Integer token pairs (a, b) with entries in [0, M), shape (N, 2); X·W is evaluated as
        W[a] + W[M + b].
    act : {"quadratic", "relu"}
        The activation σ; default `"quadratic"` (h²).

    Returns
    -------
    jax.Array
        Features F, shape (N, K).

    Raises
    ------
    DomainError
        If `act` is not `"quadratic"` or `"relu"` (the message names it `activation`).
    """
    return _tian_features(params, tokens, choice(act, "activation", ("quadratic", "relu")))


def tian_mlp_apply(params: dict[str, jax.Array], tokens: jax.Array, act: str = "quadratic") -> jax.Array:
    """Outputs σ(X·W)·V of Tian's net for token pairs (a, b); X·W is evaluated as W[a] + W[M + b].

    Parameters
    ----------
    params : dict of str to jax.Array
        `{"W": W, "V": V}` from `tian_mlp_init`.
    tokens : jax.Array
        Integer token pairs with entries in [0, M), shape (N, 2).
    act : {"quadratic", "relu"}
        The activation σ; default `"quadratic"`.

    Returns
    -------
    jax.Array
        Outputs, shape (N, M).

    Raises
    ------
    DomainError
        If `act` is not `"quadratic"` or `"relu"`.
    """
    return dense(tian_features(params, tokens, act), params["V"])


def _tian_apply_quadratic(params: dict[str, jax.Array], tokens: jax.Array) -> jax.Array:
    return dense(_tian_features(params, tokens, "quadratic"), params["V"])


def _tian_apply_relu(params: dict[str, jax.Array], tokens: jax.Array) -> jax.Array:
    return dense(_tian_features(params, tokens, "relu"), params["V"])


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def _tian_hidden(W: jax.Array, tokens: jax.Array, M: int, act: str) -> jax.Array:
    r"""Hidden features σ(W[a] + W[M + b]) (..., K) of Tian's net with a faster reverse-mode rule.

    .. math::
        \frac{\partial \mathcal L}{\partial W_r} = \sum_{i:\ a_i = r} g_i + \sum_{i:\ M + b_i = r} g_i,
        \qquad g_i = \sigma'(h_i) \odot \frac{\partial \mathcal L}{\partial F_i},\quad h_i = W_{a_i} + W_{M + b_i}

    The value is that of `tian_features`; the gradient is the same sum in another order (float
    rounding).  The backward pass recomputes h from the small table W (2M, K) inside the fusion
    that forms g, instead of reading the two gathered (N, K) arrays saved by plain autodiff, and
    adds both token columns in one scatter of 2N rows instead of two.  A 50-step Adam scan of
    Tian's net (p = 71, N = 2016, K = 2048; `benchmarks/bench_tian_first_layer.py`) takes
    16.4-17.7 instead of 18.5-20.6 ms per step at 1 seed (two runs) and 17.5 instead of 19.2 ms per
    seed-step at 4 vmapped seeds (2-core EPYC; `benchmarks/results/modular_engine_cpu.json` has the
    engine's timings).  `jax.custom_vjp` has no forward mode: `jax.jvp` / `jax.hessian` through it
    raise; `tian_features` and `tian_mlp_apply` (plain autodiff) serve every mode.
    """
    return activation(act)(_pair_preactivation(W, tokens, M))


def _tian_hidden_fwd(W: jax.Array, tokens: jax.Array, M: int, act: str) -> tuple:
    return _tian_hidden(W, tokens, M, act), (W, tokens)


def _tian_hidden_bwd(M: int, act: str, res: tuple, dF: jax.Array) -> tuple:
    W, tokens = res
    _, act_vjp = jax.vjp(activation(act), _pair_preactivation(W, tokens, M))
    g = act_vjp(dF)[0].reshape(-1, W.shape[-1])
    rows = jnp.concatenate([tokens[..., 0].reshape(-1), M + tokens[..., 1].reshape(-1)])
    return jnp.zeros_like(W).at[rows].add(jnp.concatenate([g, g]).astype(W.dtype)), None


_tian_hidden.defvjp(_tian_hidden_fwd, _tian_hidden_bwd)


def _tian_train_apply(params: dict[str, jax.Array], tokens: jax.Array, act: str) -> jax.Array:
    """Tian's net for the engine (reverse mode only): `tian_mlp_apply` with `_tian_hidden`."""
    return dense(_tian_hidden(params["W"], tokens, params["V"].shape[1], act), params["V"])


_TIAN_APPLY = {"quadratic": _tian_apply_quadratic, "sqr": _tian_apply_quadratic, "relu": _tian_apply_relu}


def tian_mlp(M: int, K: int, activation: str = "quadratic") -> Model:
    """`Model(init, apply)` of Tian's net σ(X·W)·V for modulus `M` and width `K`.

    `apply` is a module-level function (one per activation), so compiled training code is reused.

    Parameters
    ----------
    M : int
        The modulus M ≥ 2 (number of classes).
    K : int
        Hidden width K ≥ 1.
    activation : {"quadratic", "sqr", "relu"}
        The activation σ: `"quadratic"` (default; `"sqr"` is the same, Tian's name) or `"relu"`.

    Returns
    -------
    Model
        `init(key, dtype=...)` is `tian_mlp_init` with `M`, `K` bound; `apply(params, tokens)` gives
        the outputs (N, M).

    Raises
    ------
    DomainError
        If an argument is outside its domain.
    """
    act = choice(activation, "activation", tuple(_TIAN_APPLY))
    M = integer_at_least(M, "M", 2)
    K = integer_at_least(K, "K", 1)
    return Model(functools.partial(tian_mlp_init, M=M, K=K), _TIAN_APPLY[act])
