"""The one-layer decoder of spec `uniformity:setup` (Nanda et al. style, no LayerNorm; inputs: integer tokens).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._validate import integer_at_least
from ._model import _init_args, Model


def transformer_init(key: jax.Array, p: int, d_model: int = 128, n_heads: int = 4, d_head: int = 32,
                     d_mlp: int = 512, n_ctx: int = 3, *, dtype: Any = jnp.float32) -> dict[str, jax.Array]:
    """Parameters of the one-layer decoder of spec `uniformity:setup` (Nanda et al. style, no LayerNorm).

    Vocabulary p + 1 (the numbers and `=`), learned positional embedding, `n_heads` heads of
    `d_head`, ReLU MLP of `d_mlp`, unembedding to p classes.  Every matrix ~ N(0, 1)/√d_model (also
    the MLP output matrix), biases zero (the spec's code).

    Parameters
    ----------
    key : jax.Array
        One PRNG key: a typed key, or `jax.random.PRNGKey` (uint32 of shape (2,)).
    p : int
        The modulus p ≥ 2: the number of classes (the vocabulary is p + 1).
    d_model : int
        Residual-stream width ≥ 1; default 128.
    n_heads : int
        Number of attention heads ≥ 1; default 4.
    d_head : int
        Width of each head ≥ 1; default 32.
    d_mlp : int
        Hidden width of the MLP ≥ 1; default 512.
    n_ctx : int
        Context length (positions) ≥ 1; default 3 (a, b, `=`).
    dtype : dtype
        Floating dtype of the parameters; default float32.

    Returns
    -------
    dict of str to jax.Array
        `W_E` (p + 1, d_model), `W_pos` (n_ctx, d_model), `W_Q`, `W_K`, `W_V` (n_heads, d_model,
        d_head), `W_O` (n_heads, d_head, d_model), `W_in` (d_model, d_mlp), `b_in`, `W_out` (d_mlp,
        d_model), `b_out`, `W_U` (d_model, p).

    Raises
    ------
    DomainError
        If an argument is outside its domain or the parameters would exceed 2³⁰ entries.

    References
    ----------
    Spec `uniformity:setup`.
    """
    p = integer_at_least(p, "p", 2)
    dims = {k: integer_at_least(v, k, 1) for k, v in
            dict(d_model=d_model, n_heads=n_heads, d_head=d_head, d_mlp=d_mlp, n_ctx=n_ctx).items()}
    d, h, dh, dm, n = (dims[k] for k in ("d_model", "n_heads", "d_head", "d_mlp", "n_ctx"))
    shapes = {"W_E": (p + 1, d), "W_pos": (n, d), "W_Q": (h, d, dh), "W_K": (h, d, dh), "W_V": (h, d, dh),
              "W_O": (h, dh, d), "W_in": (d, dm), "W_out": (dm, d), "W_U": (d, p)}
    _init_args(key, dtype, float(sum(np.prod(np.asarray(v, dtype=float)) for v in shapes.values())),
               "p, d_model, n_heads, d_head, d_mlp, n_ctx", dims | {"p": p})
    keys = jax.random.split(key, len(shapes))
    scale = 1.0 / np.sqrt(d)
    params = {name: jax.random.normal(k, shape, dtype) * jnp.asarray(scale, dtype)
              for k, (name, shape) in zip(keys, shapes.items())}
    params["b_in"] = jnp.zeros((dm,), dtype)
    params["b_out"] = jnp.zeros((d,), dtype)
    return params


def transformer_apply(params: dict[str, jax.Array], tokens: jax.Array) -> jax.Array:
    r"""Logits at the last position of the one-layer causal transformer for token sequences.

    Token plus positional embeddings x_j; the last position attends (softmax of scaled dot
    products) to every position, adds the heads' outputs and then the ReLU MLP to its residual r,
    and is unembedded:

    .. math::
        x_j = W_E[t_j] + W_{\rm pos}[j],\quad
        r = x_{-1} + \sum_h \mathrm{softmax}_j\Big(\frac{q_h \cdot k_{h,j}}{\sqrt{d_{\rm head}}}\Big) v_{h,j} W_O^h,\quad
        \text{logits} = (r + \mathrm{relu}(r W_{\rm in} + b_{\rm in}) W_{\rm out} + b_{\rm out}) W_U

    With one block only the last position is read out, and the causal mask lets it attend to every
    position, so attention and MLP are evaluated at that position only -- exactly the full
    decoder's output there, at a fraction of its cost.

    Parameters
    ----------
    params : dict of str to jax.Array
        The parameters of `transformer_init`.
    tokens : jax.Array
        Integer tokens in [0, p], shape (N, n) with n ≤ n_ctx (e.g. (a, b, p) with p the `=` token).

    Returns
    -------
    jax.Array
        Logits, shape (N, p).
    """
    x = params["W_E"][tokens] + params["W_pos"][: tokens.shape[-1]]          # (N, n, d)
    q = jnp.einsum("nd,hde->nhe", x[:, -1], params["W_Q"])                  # (N, h, dh)
    k = jnp.einsum("njd,hde->nhje", x, params["W_K"])                       # (N, h, n, dh)
    v = jnp.einsum("njd,hde->nhje", x, params["W_V"])
    scores = jnp.einsum("nhe,nhje->nhj", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], x.dtype))
    attn = jax.nn.softmax(scores, axis=-1)
    z = jnp.einsum("nhj,nhje->nhe", attn, v)
    r = x[:, -1] + jnp.einsum("nhe,hed->nd", z, params["W_O"])
    r = r + jax.nn.relu(r @ params["W_in"] + params["b_in"]) @ params["W_out"] + params["b_out"]
    return r @ params["W_U"]


TRANSFORMER = Model(transformer_init, transformer_apply)
"""The one-layer transformer of spec `uniformity:setup`: `Model(transformer_init, transformer_apply)`."""
