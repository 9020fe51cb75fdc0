"""The losses the models are trained with: MSE, cross-entropy, Tian's centred MSE, by name in `LOSSES`.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from ..._validate import choice


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
