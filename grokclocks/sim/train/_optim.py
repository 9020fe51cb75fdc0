"""The training engine: optimisers (optax steps, weight decay conventions, the optimiser factory)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax.numpy as jnp
import optax

from ..._validate import choice, integer_at_least
from ._batching import batched, StepFn


def weight_decay_coefficient(gamma: Any, d_out: int, convention: str = "paper") -> Any:
    """Coefficient ``c`` of the decay term ``c * S`` added to the gradient.

    .. math::
        c = \\gamma / d_{\\rm out} \\ \\text{(paper: gradient of } \\mathcal L + \\tfrac{\\gamma}{2 d_{\\rm out}}\\|S\\|^2),
        \\qquad c = \\gamma \\ \\text{(torch: SGD(weight\\_decay=}\\gamma))

    Parameters
    ----------
    gamma : float or array, >= 0
        Weight decay in the chosen convention.
    d_out : int >= 1
        Output dimension.
    convention : {"paper", "torch"}

    Returns
    -------
    The coefficient (same type as ``gamma``).

    References
    ----------
    Spec ``levi:conv-wd`` (paper eq. 3).
    """
    convention = choice(convention, "wd_convention", ("paper", "torch"))
    return gamma / d_out if convention == "paper" else gamma


def sgd_weight_decay(inputs: Mapping[str, Any]) -> optax.GradientTransformation:
    """Full-batch GD with decoupled-from-loss L2 decay: ``p <- p - eta * (grad + decay * p)``.

    An optimiser factory for :func:`optax_step`: reads ``inputs["eta"]`` and ``inputs["decay"]``
    (scalars, possibly traced / vmapped) and returns
    ``optax.chain(optax.add_decayed_weights(decay), optax.sgd(eta))``.
    """
    return optax.chain(optax.add_decayed_weights(inputs["decay"]), optax.sgd(inputs["eta"]))


OPTIMIZERS: tuple[str, ...] = ("sgd", "adam", "adamw")


@functools.lru_cache(maxsize=None)
def optimizer_factory(name: str, warmup_steps: int = 0) -> Callable[[Mapping[str, Any]], optax.GradientTransformation]:
    """An optimiser factory ``inputs -> optax.GradientTransformation`` for :func:`optax_step`.

    Hyperparameters are read from ``inputs`` (so they may be traced and vmapped over a grid):
    ``lr``, ``wd`` and, for the Adam family, ``b1``, ``b2``, ``eps``.

    ``"sgd"``
        GD with coupled L2: ``p <- p - lr (grad + wd p)``.
    ``"adam"``
        Adam with *coupled* L2 (PyTorch ``Adam(weight_decay=wd)``): ``g <- grad + wd p``, then Adam;
        ``optax.chain(optax.add_decayed_weights(wd), optax.adam(lr, b1, b2, eps))``.
    ``"adamw"``
        Decoupled decay (PyTorch ``AdamW``): ``p <- p (1 - lr wd) - lr adam(g)``; ``optax.adamw``.

    ``warmup_steps > 0`` multiplies the learning rate by ``min(step / warmup_steps, 1)`` (PyTorch
    ``LambdaLR(lambda s: min(s / w, 1))``: the first update has learning rate 0), for every
    optimiser.  Cached, so equal arguments give the same factory (and reuse compiled code).
    """
    name = choice(name, "optimizer", OPTIMIZERS)
    warmup_steps = integer_at_least(warmup_steps, "warmup_steps", 0)

    def factory(inputs: Mapping[str, Any]) -> optax.GradientTransformation:
        lr = inputs["lr"]
        if warmup_steps:
            base = lr

            def lr(count: Any) -> Any:
                return base * jnp.minimum(jnp.asarray(count, jnp.result_type(base)) / warmup_steps, 1.0)

        if name == "sgd":
            return optax.chain(optax.add_decayed_weights(inputs["wd"]), optax.sgd(lr))
        if name == "adam":
            return optax.chain(optax.add_decayed_weights(inputs["wd"]),
                               optax.adam(lr, b1=inputs["b1"], b2=inputs["b2"], eps=inputs["eps"]))
        return optax.adamw(lr, b1=inputs["b1"], b2=inputs["b2"], eps=inputs["eps"], weight_decay=inputs["wd"])

    return factory


@functools.lru_cache(maxsize=None)
def optax_step(grad_fn: Callable[[Any, Any], Any],
               optimizer_fn: Callable[[Any], optax.GradientTransformation]) -> StepFn:
    """A step ``((params, opt_state), inputs) -> (params, opt_state)`` from a gradient and an optax optimiser.

    ``grad_fn(params, inputs)`` returns the gradient pytree (typically a module-level
    ``jax.grad(loss)``, or an explicit formula where it is cheaper); ``optimizer_fn(inputs)``
    builds the optax transformation inside the step, so its hyperparameters may be traced and
    vmapped.  Cached: the same pair always gives the same step object (and reuses compiled code).
    """

    def step(state: Any, inputs: Any) -> Any:
        params, opt_state = state
        grads = grad_fn(params, inputs)
        updates, opt_state = optimizer_fn(inputs).update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    return step


def optax_init(optimizer_fn: Callable[[Any], optax.GradientTransformation], params: Any, inputs: Any,
               batch_axes: Sequence[Any] = ()) -> Any:
    """Initial state ``(params, opt_state)`` for :func:`optax_step`, batched like :func:`simulate`."""

    def init(p: Any, inp: Any) -> Any:
        return p, optimizer_fn(inp).init(p)

    return batched(init, batch_axes)(params, inputs)
