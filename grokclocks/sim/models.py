"""The papers' models as pure `init`/`apply` pairs, plus the losses they are trained with.

Parameters are plain pytrees (dicts of arrays); `apply(params, X)` maps a batch of inputs `X` of
shape (N, d_in) to outputs (N, d_out).  A `Model` bundles one pair so that the training engine can
treat every model alike.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as V
from .._fielddocs import document_records
from .._validate import DomainError, choice, integer_at_least


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
    "cross_entropy",
    "centred_mse",
    "LOSSES",
    "embedding_mlp_init",
    "embedding_mlp_apply",
    "tian_mlp_init",
    "tian_mlp_apply",
    "tian_mlp",
    "transformer_init",
    "transformer_apply",
    "param_norm",
    "dense",
    "tian_features",
    "EMBEDDING_MLP",
    "TRANSFORMER",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


class Model(NamedTuple):
    """A model as a pair of pure functions, `init(key, **dims) -> params` and `apply(params, X, **kw) -> Y`."""

    init: Callable[..., Any]
    """`init(key, ...) -> params`: draws the parameter pytree from a PRNG key."""
    apply: Callable[..., jax.Array]
    """`apply(params, X, ...) -> outputs`: the model's outputs for a batch of inputs."""


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


def mse(pred: jax.Array, target: jax.Array, *, reduction: str = "mean", weights: jax.Array | None = None) -> jax.Array:
    r"""Mean squared error over samples, with the class (output) axis averaged or summed.

    With `reduction="mean"` the squared error of each sample is divided by d_out; with `"sum"` it
    is not:

    .. math::
        \text{mean: } \frac{1}{N d_{\rm out}} \sum_i \|f_i - y_i\|^2, \qquad
        \text{sum: } \frac{1}{N} \sum_i \|f_i - y_i\|^2

    Parameters
    ----------
    pred : jax.Array
        Model outputs f, shape (N, d_out).
    target : jax.Array
        Targets y, shape (N, d_out).
    reduction : {"mean", "sum"}
        How the class axis is reduced: `"mean"` (default) is PyTorch's `MSELoss()`; `"sum"` sums
        over classes (the convention of paper appendix G, spec erratum 20).
    weights : jax.Array or None
        Per-sample weights ≥ 0 of shape (N,), e.g. a 0/1 training mask, replacing the sample mean
        by a weighted mean; `None` (default) is the plain mean.

    Returns
    -------
    jax.Array
        The loss, a scalar.

    Raises
    ------
    DomainError
        If `reduction` is not `"mean"` or `"sum"`.
    """
    reduction = choice(reduction, "reduction", ("mean", "sum"))
    per_sample = jnp.sum(jnp.square(pred - target), axis=-1)
    if reduction == "mean":
        per_sample = per_sample / pred.shape[-1]
    if weights is None:
        return jnp.mean(per_sample)
    return jnp.sum(weights * per_sample) / jnp.sum(weights)


def _weighted_mean(per_sample: jax.Array, weights: jax.Array | None) -> jax.Array:
    if weights is None:
        return jnp.mean(per_sample)
    return jnp.sum(weights * per_sample) / jnp.sum(weights)


def cross_entropy(logits: jax.Array, labels: jax.Array, weights: jax.Array | None = None) -> jax.Array:
    """Mean softmax cross-entropy −log softmax(logits)[label] over samples (optionally weighted).

    Computed in float32 at least (`log_softmax` of float16 logits loses the small-loss tail).

    Parameters
    ----------
    logits : jax.Array
        Unnormalised class scores, shape (N, C).
    labels : jax.Array
        Integer class labels in [0, C), shape (N,).
    weights : jax.Array or None
        Per-sample weights ≥ 0 of shape (N,), e.g. a 0/1 training mask; `None` (default) is the
        plain mean.

    Returns
    -------
    jax.Array
        The loss in nats, a scalar.
    """
    logits = logits.astype(jnp.promote_types(logits.dtype, jnp.float32))
    logp = jax.nn.log_softmax(logits, axis=-1)
    per = -jnp.take_along_axis(logp, labels[..., None], axis=-1)[..., 0]
    return _weighted_mean(per, weights)


def centred_mse(pred: jax.Array, labels: jax.Array, weights: jax.Array | None = None) -> jax.Array:
    r"""Zero-meaned mean squared error of Tian's code (spec `repulsion:loss`, the form that is trained).

    Each sample's outputs and its target e_y are centred over the M output classes, then the
    squared distance is averaged over samples (no factor 1/2):

    .. math::
        L = \frac1n \sum_i \big\| \hat y_i - \overline{\hat y_i}\,\mathbf 1_M - (e_{y_i} - \tfrac1M \mathbf 1_M)\big\|^2

    Parameters
    ----------
    pred : jax.Array
        Model outputs ŷ, shape (N, M).
    labels : jax.Array
        Integer class labels in [0, M), shape (N,).
    weights : jax.Array or None
        Per-sample weights ≥ 0 of shape (N,), e.g. a 0/1 training mask; `None` (default) is the
        plain mean.

    Returns
    -------
    jax.Array
        The loss, a scalar.

    References
    ----------
    Spec `repulsion:loss`.
    """
    M = pred.shape[-1]
    zm = pred - jnp.mean(pred, axis=-1, keepdims=True)
    target = jax.nn.one_hot(labels, M, dtype=pred.dtype) - 1.0 / M
    return _weighted_mean(jnp.sum(jnp.square(zm - target), axis=-1), weights)


def _mse_sum(pred: jax.Array, labels: jax.Array, weights: jax.Array | None = None) -> jax.Array:
    return mse(pred, jax.nn.one_hot(labels, pred.shape[-1], dtype=pred.dtype), reduction="sum", weights=weights)


def _mse_mean(pred: jax.Array, labels: jax.Array, weights: jax.Array | None = None) -> jax.Array:
    return mse(pred, jax.nn.one_hot(labels, pred.shape[-1], dtype=pred.dtype), reduction="mean", weights=weights)


LOSSES: dict[str, Callable[..., jax.Array]] = {
    "ce": cross_entropy,
    "mse_sum": _mse_sum,
    "mse_mean": _mse_mean,
    "centred_mse": centred_mse,
}
"""Classification losses `loss(outputs, labels, weights) -> scalar` by name.

`"ce"` is the softmax cross-entropy; `"mse_sum"` the MSE to the one-hot label summed over classes
(spec `levi:appG`); `"mse_mean"` the same averaged over classes (PyTorch `MSELoss()`);
`"centred_mse"` Tian's zero-meaned MSE (`centred_mse`).
"""


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


def _weight_tangent_cpu(dw: jax.Array, x: jax.Array) -> jax.Array:
    # x @ dw written against the (m, k) transpose of dw behind a barrier: its transpose (reverse mode) is the
    # product G^T x of shape (m, k), which the barrier keeps from being rewritten into x^T G.
    dwt = jax.lax.optimization_barrier(jnp.swapaxes(dw, -1, -2))
    return jax.lax.dot_general(x, dwt, (((x.ndim - 1,), (dwt.ndim - 1,)), ((), ())))


@jax.custom_jvp
def dense(x: jax.Array, w: jax.Array) -> jax.Array:
    r"""The product `x @ w` whose weight gradient is contracted in the fast orientation on the CPU.

    In reverse mode the weight gradient is formed as the (m, k) product Gᵀx and then transposed,
    where G is the gradient of the loss with respect to the output x·w:

    .. math::
        \frac{\partial \mathcal L}{\partial w} = \big(G^{\top} x\big)^{\top}\ \text{(an (m, k) product, then a
        transpose of the small result)}, \qquad G = \frac{\partial \mathcal L}{\partial (x w)}

    The value, and every derivative (forward and reverse mode, any order), equal those of `x @ w`
    up to float rounding; only the order of the reverse-mode weight-gradient product differs.
    XLA's CPU backend runs the default orientation, xᵀG contracting the long row axis of x into a
    (k, m) result, about 2.5× slower than Gᵀx for Tian's net (N = 2016 rows, k = 2048, m = 71: 9
    against 3.5 ms on a 2-core EPYC), and its algebraic simplifier turns a plain (Gᵀx)ᵀ back into
    the slow form; the `optimization_barrier` on the (m, k) weight tangent keeps it.  Training
    steps of Tian's net are 19-20 % faster at 2 and 4 vmapped seeds (25.3 → 20.4 ms per seed-step
    at 4, 30-step Adam scans on a 2-core EPYC; engine timings in
    `benchmarks/results/modular_engine_cpu.json`); `tests/test_sim_engine_speed.py` checks the
    derivatives and the compiled orientation.  On other platforms the tangent is the plain
    `x @ dw` (`jax.lax.platform_dependent`), so GPU programs are unchanged.

    Parameters
    ----------
    x : jax.Array
        Left factor, shape (..., N, k) (e.g. the hidden features of N samples).
    w : jax.Array
        Weight matrix, shape (k, m).

    Returns
    -------
    jax.Array
        `x @ w`, shape (..., N, m).
    """
    return x @ w


@dense.defjvp
def _dense_jvp(primals: tuple[jax.Array, jax.Array], tangents: tuple[jax.Array, jax.Array]) -> tuple:
    x, w = primals
    dx, dw = tangents
    dw_term = jax.lax.platform_dependent(dw, x, cpu=_weight_tangent_cpu, default=lambda dw, x: x @ dw)
    return x @ w, dx @ w + dw_term


# --------------------------------------------------------------------------------------------
# Modular-arithmetic models (inputs: integer tokens, shape (N, n_ctx))
# --------------------------------------------------------------------------------------------


def embedding_mlp_init(key: jax.Array, p: int, d_embed: int = 128, d_hidden: int = 512, *,
                       n_vocab: int | None = None, dtype: Any = jnp.float32) -> dict[str, jax.Array]:
    """Parameters of the embedding MLP of spec `clocks:appB`: token embeddings added, one ReLU layer, a linear head.

    Initialisation (spec `clocks:appB`): E (n_vocab, d_embed) ~ N(0, 1/d_embed); W1 (d_embed,
    d_hidden) ~ N(0, 2/d_embed) (He), b1 = 0; W2 (d_hidden, p) ~ N(0, 1/d_hidden), b2 = 0 (the
    second argument of N is the variance).

    Parameters
    ----------
    key : jax.Array
        One PRNG key: a typed key, or `jax.random.PRNGKey` (uint32 of shape (2,)).
    p : int
        The modulus p ≥ 2: the number of output classes.
    d_embed : int
        Embedding width ≥ 1; default 128.
    d_hidden : int
        Hidden width ≥ 1; default 512.
    n_vocab : int or None
        Number of token embeddings, an integer ≥ p (more for extra tokens such as `=`); `None`
        (default) means p.
    dtype : dtype
        Floating dtype of the parameters; default float32.

    Returns
    -------
    dict of str to jax.Array
        `{"E", "W1", "b1", "W2", "b2"}` with the shapes above.

    Raises
    ------
    DomainError
        If an argument is outside its domain or the parameters would exceed 2³⁰ entries.

    References
    ----------
    Spec `clocks:appB`.
    """
    p = integer_at_least(p, "p", 2)
    d_embed = integer_at_least(d_embed, "d_embed", 1)
    d_hidden = integer_at_least(d_hidden, "d_hidden", 1)
    n_vocab = p if n_vocab is None else integer_at_least(n_vocab, "n_vocab", p)
    _init_args(key, dtype, float(n_vocab) * d_embed + float(d_hidden) * (d_embed + p), "p", p)
    kE, k1, k2 = jax.random.split(key, 3)
    return {
        "E": jax.random.normal(kE, (n_vocab, d_embed), dtype) / jnp.sqrt(jnp.asarray(d_embed, dtype)),
        "W1": jax.random.normal(k1, (d_embed, d_hidden), dtype) * jnp.sqrt(jnp.asarray(2.0 / d_embed, dtype)),
        "b1": jnp.zeros((d_hidden,), dtype),
        "W2": jax.random.normal(k2, (d_hidden, p), dtype) / jnp.sqrt(jnp.asarray(d_hidden, dtype)),
        "b2": jnp.zeros((p,), dtype),
    }


def embedding_mlp_apply(params: dict[str, jax.Array], tokens: jax.Array) -> jax.Array:
    r"""Logits relu((E[a] + E[b])·W1 + b1)·W2 + b2 of the embedding MLP for token pairs (a, b).

    The embeddings of the tokens are summed before the first layer; since
    (Σ_j E[t_j])·W1 = Σ_j (E·W1)[t_j],

    .. math::
        \Big(\sum_j E[t_j]\Big) W_1 = \sum_j (E W_1)[t_j]

    when there are more rows N than vocabulary entries the first layer is evaluated in the
    right-hand form: one (n_vocab, d_embed) × (d_embed, d_hidden) product and a gather instead of
    N rows of the product.  For the canonical config (p = 97, 2822 training pairs, 128/256) the
    three products with W1 in a training step (forward, and two in the backward pass) shrink from
    2822 rows to 97: 975 → 440 MFLOP per step.  The two forms differ by float rounding.

    Parameters
    ----------
    params : dict of str to jax.Array
        The parameters of `embedding_mlp_init`.
    tokens : jax.Array
        Integer tokens in [0, n_vocab), shape (N, 2) (or (N, n_ctx): every token's embedding is
        summed).

    Returns
    -------
    jax.Array
        Logits, shape (N, p).
    """
    E, W1 = params["E"], params["W1"]
    if math.prod(tokens.shape[:-1]) > E.shape[0]:
        h = jnp.sum((E @ W1)[tokens], axis=-2)
    else:
        h = jnp.sum(E[tokens], axis=-2) @ W1
    z = jax.nn.relu(h + params["b1"])
    return dense(z, params["W2"]) + params["b2"]


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


EMBEDDING_MLP = Model(embedding_mlp_init, embedding_mlp_apply)
"""The embedding MLP of spec `clocks:appB`: `Model(embedding_mlp_init, embedding_mlp_apply)`."""
TRANSFORMER = Model(transformer_init, transformer_apply)
"""The one-layer transformer of spec `uniformity:setup`: `Model(transformer_init, transformer_apply)`."""


document_records(globals(), __all__)  # help() of each record class lists its fields
